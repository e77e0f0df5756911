//! Bad command lines: each is refused with a one- or two-line message before anything
//! is started or written (no managed instance, no results store).

use crate::common;
use common::*;

/// Runs `args` in a fresh state directory; returns the error and what the directory holds after.
fn refused(args: &[&str]) -> (String, Vec<String>) {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_string_lossy().into_owned();
    let mut v = vec!["--home", h.as_str()];
    v.extend_from_slice(args);
    let e = match sizeup(&v) {
        Err(e) => e.to_string(),
        Ok(code) => panic!("{args:?} was accepted (exit {code})"),
    };
    let left: Vec<String> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    (e, left)
}

#[test]
fn refused_check_and_prewarm_start_no_server() {
    for (args, says) in [
        (&["check", "oltp_read_write"][..], "no consistency conditions"),
        (&["prewarm", "tpcc"][..], "knows the OLTP workloads"),
        (&["run", "oltp_read_wrte"][..], "unknown workload"),
        (&["run", "tpcc", "--users", "0"][..], "--users must be at least 1"),
        (&["run", "tpcc", "--think-time", "spec", "--rate", "5"][..], "--think-time spec"),
        (&["prepare", "tpcc", "--warehouses", "0"][..], "--warehouses 0"),
    ] {
        let (e, left) = refused(args);
        assert!(e.contains(says), "{args:?}: {e}");
        assert!(e.lines().count() <= 2, "{args:?}: {e}");
        assert!(left.is_empty(), "{args:?} left {left:?} in the state directory");
    }
}

/// What a state directory holds, recursively (names and sizes), minus the managed
/// instances' own directories whose files the server itself changes.
fn snapshot(dir: &std::path::Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(|e| e.unwrap()) {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                out.push((rel.clone(), 0));
                if !rel.starts_with("instances") && !rel.contains("data") {
                    stack.push(p);
                }
            } else if !rel.ends_with(".pid") && !rel.ends_with(".err") && !rel.ends_with(".log") {
                out.push((rel, meta.len()));
            }
        }
    }
    out.sort();
    out
}

/// Runs the binary; returns its exit code and stderr.
fn binary(state: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .arg("--home")
        .arg(state)
        .args(args)
        .env_remove("MYSQL_PWD")
        .env("HOME", state)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn judge(case: &str, code: Option<i32>, err: &str, says: &str) {
    assert!(matches!(code, Some(c) if c != 0), "{case}: exit {code:?}, stderr: {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{case}: {err}");
    let lines: Vec<&str> =
        err.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("For more information")).collect();
    assert!((1..=2).contains(&lines.len()), "{case}: a one- or two-line message, got {err:?}");
    assert!(err.contains(says), "{case}: expected {says:?} in {err:?}");
    assert!(!err.contains("use '--"), "{case}: clap's '-- -1' tip instead of the range: {err}");
}

/// A password that starts with '-' was echoed by clap as an unexpected argument.
#[test]
fn password_starting_with_a_dash_is_never_echoed() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_string_lossy().into_owned();
    let port = common::free_port().to_string();
    for pw in ["-Secr3t", "--Secr3t"] {
        let (code, err) =
            binary(&h, &["run", "oltp_read_write", "--host", "127.0.0.1", "--port", &port, "--password", pw]);
        judge(pw, code, &err, "cannot connect");
        assert!(!err.contains("Secr3t"), "the password was echoed: {err}");
    }
}

/// Invalid study files, written to a temporary directory.
fn study_file(dir: &std::path::Path, name: &str, body: &str) -> String {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, body).unwrap();
    p.to_string_lossy().into_owned()
}

const STUDY: &str = "name = \"bad\"\nkind = \"sweep\"\nworkloads = [\"oltp_point_select\"]\nlevels = [1, 2]\n\
                     step_time = 5\nwarmup = 1\n";

#[test]
fn bad_input_table_every_command_refuses_with_a_short_message_and_changes_nothing() {
    let files = tempfile::tempdir().unwrap();
    let f = files.path();
    let dir_as_file = f.to_string_lossy().into_owned();
    let studies: Vec<(String, &str)> = vec![
        (
            study_file(f, "huge_step", &STUDY.replace("step_time = 5", "step_time = 1e300")),
            "step_time (--step-time) must be",
        ),
        (study_file(f, "huge_warmup", &STUDY.replace("warmup = 1", "warmup = 1e300")), "warmup (--warmup) must be"),
        (study_file(f, "neg_warmup", &STUDY.replace("warmup = 1", "warmup = -1")), "warmup (--warmup) must be"),
        (
            study_file(f, "zero_step", &STUDY.replace("step_time = 5", "step_time = 0")),
            "step_time (--step-time) must be",
        ),
        (study_file(f, "no_workloads", &STUDY.replace("[\"oltp_point_select\"]", "[]")), "workload"),
        (study_file(f, "unknown_option", &format!("{STUDY}[options]\nbogus = 1\n")), "unknown option"),
        (study_file(f, "password", &format!("{STUDY}[options]\npassword = \"x\"\n")), "MYSQL_PWD"),
        (study_file(f, "owned", &format!("{STUDY}[options]\ntime = 5\n")), "set by the study"),
        // study_rate_reads_as_capacity: an open-loop rate capped every level at itself.
        (study_file(f, "rate", &format!("{STUDY}[options]\nrate = 2000\n")), "closed loop"),
        (study_file(f, "garbage", "this is [not toml"), ""),
        (study_file(f, "repeat0", &format!("{STUDY}repeat = 0\n")), "repeat"),
        (study_file(f, "sample", &format!("{STUDY}sample_interval = 0.01\n")), "sample_interval"),
        (study_file(f, "huge_rate", &format!("{STUDY}[options]\nrate = 1e308\n")), ""),
    ];
    let mut cases: Vec<(Vec<String>, &str)> = vec![];
    let mut add = |args: &[&str], says: &'static str| cases.push((args.iter().map(|s| s.to_string()).collect(), says));
    let run = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["run".to_string(), "oltp_read_write".to_string()];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    for (extra, says) in [
        (&["--time", "99999999999999999999"][..], "--time must be between 0 and"),
        (&["--warmup", "1e30"], "--warmup must be between 0 and"),
        (&["--delay", "1e300"], "--delay must be between 0 and"),
        (&["--report-interval", "1e300"], "--report-interval must be between 0 and"),
        (&["--rate", "1e9"], "--rate must be"),
        (&["--rate", "1e308"], "--rate must be"),
        (&["--rate", "-5"], "--rate must be"),
        (&["--threads", "4294967295"], "10000 connections at most"),
        (&["--threads", "-1"], "-1 is below 0"),
        (&["--users", "-3"], "-3 is below 0"),
        // negative_values_name_their_option: "unexpected argument '-3' found".
        (&["--table-size", "-3"], "'--table-size <TABLE_SIZE>'"),
        (&["--point-selects", "-1"], "'--point-selects <POINT_SELECTS>'"),
        (&["--client-threads", "-1"], "-1 is below 0"),
        (&["--time", "-1"], "--time must be between 0 and"),
        (&["--events", "-1"], "give a whole number, 0 or more"),
        (&["--warmup", "-2"], "--warmup must be between 0 and"),
        (&["--delay", "-5"], "--delay must be between 0 and"),
        (&["--report-interval", "-1"], "--report-interval must be between"),
        (&["--percentile", "0"], "--percentile"),
        (&["--percentile", "101"], "--percentile"),
        (&["--report-interval", "0.01"], "at least 0.1"),
        (&["--time", "0"], "--events"),
        (&["--time", "10", "--warmup", "10"], "shorter"),
        (&["--db-driver", "pgsql"], "MySQL protocol"),
        (&["--json", "/nonexistent-sizeup-dir/x.json"], "directory does not exist"),
        (&["--json", dir_as_file.as_str()], "is a directory"),
        (&["--server-lost-timeout", "-1"], "--server-lost-timeout must be between"),
        (&["--server-lost-timeout", "1e9"], "--server-lost-timeout must be between"),
        (&["--statement-timeout", "0"], "--statement-timeout must be at least 1"),
        (&["--mysql-ignore-errors", "12x"], "not an error code"),
        (&["--watts", "0"], "--watts"),
        (&["--power-model", "idle="], "power"),
        (&["--rand-type", "normal"], "uniform"),
    ] {
        let v = run(extra);
        let v: Vec<&str> = v.iter().map(String::as_str).collect();
        add(&v, says);
    }
    add(&["run", "oltp_read_wrte"], "unknown workload");
    add(&["run", "tpcc", "--users", "0"], "--users must be at least 1");
    add(&["run", "tpcc", "--users", "20000"], "--users 20000");
    add(&["sweep", "oltp_point_select", "--threads", "abc"], "");
    add(&["sweep", "oltp_point_select", "--threads", "1,2", "--step-time", "1e300"], "step_time (--step-time) must be");
    add(&["sweep", "oltp_point_select", "--threads", "1,2", "--warmup", "1e300"], "warmup (--warmup) must be");
    add(&["sweep", "oltp_point_select", "--threads", "1,2", "--step-time", "0"], "step_time (--step-time) must be");
    add(
        &["sweep", "oltp_point_select", "--threads", "1,2", "--repeat", "0"],
        "repeat (--repeat) must be between 1 and 100 (got 0)",
    );
    add(&["sweep", "oltp_point_select", "--threads", "1,2", "--steady-last", "2"], "steady_last");
    add(&["scale", "oltp_point_select", "--instances", "abc"], "");
    add(
        &["scale", "oltp_point_select", "--instances", "1,2", "--step-time", "1e300"],
        "step_time (--step-time) must be",
    );
    add(&["report", "run:1", "--html", "/nonexistent-sizeup-dir/r.html"], "");
    add(&["compare", "1", "s2"], "");
    add(&["size", "--target-tps", "-5", "--from", "s1"], "");
    add(&["runs", "show", "7"], "no run 7");
    add(&["model", "usl", "--points", "1:abc"], "");
    add(&["model", "usl", "--from", "s9"], "");
    add(&["sweep", "oltp_point_select", "--threads", "1,2", "--warmup", "-1"], "warmup (--warmup) must be");
    add(&["server", "start", "--buffer-pool", "lots"], "not a size");
    add(&["server", "start", "--flush-log-at-trx-commit", "3"], "0, 1 or 2");
    add(&["server", "start", "--set", "oops"], "name=value");
    add(&["size", "--target-tps", "inf", "--from", "s1"], "--target-tps inf");
    // sweep_has_no_server_lost_timeout: the README's bound, which only `run` took.
    add(
        &["sweep", "oltp_point_select", "--threads", "1,2", "--server-lost-timeout", "-5"],
        "--server-lost-timeout must be",
    );
    // scale_out_host_is_left_unused: the study ran on the managed cluster instead.
    add(&["scale-out", "oltp_read_only", "--nodes", "1..2", "--host", "127.0.0.1", "--port", "3306"], "--host");
    // write_threads_without_split_is_ignored.
    add(&["scale-out", "oltp_read_only", "--nodes", "1..2", "--write-threads", "2"], "go with route split");
    // split_adds_nopm_to_tps: one column of two units.
    add(
        &["scale-out", "oltp_read_only", "--nodes", "1..2", "--route", "split", "--write-workload", "tpcc"],
        "give workloads of one kind",
    );
    for (path, says) in &studies {
        add(&["study", "run", path.as_str()], says);
    }
    add(&["study", "run", "/nonexistent-sizeup-dir/s.toml"], "");
    assert!(cases.len() >= 45, "{} cases", cases.len());

    for (args, says) in &cases {
        let state = tempfile::tempdir().unwrap();
        let h = state.path().to_string_lossy().into_owned();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, err) = binary(&h, &args);
        judge(&format!("{args:?}"), code, &err, says);
        let left = snapshot(state.path());
        assert!(left.is_empty(), "{args:?} left {left:?} in the state directory");
    }

    // With a server running: refused before anything runs, and the server untouched.
    let s = TestServer::start();
    assert_eq!(s.sizeup(&["prepare", "oltp_point_select", "--tables", "1", "--table-size", "100"]).unwrap(), 0);
    let before = snapshot(s.home.path());
    let h = s.home();
    for (args, says) in [
        (&["run", "oltp_point_select", "--threads", "600"][..], "max_connections"),
        (&["run", "oltp_point_select", "--rate", "1e9"], "--rate must be"),
        (&["run", "oltp_point_select", "--json", "/nonexistent-sizeup-dir/x.json"], "directory does not exist"),
        (&["run", "oltp_point_select", "--time", "1e300"], "--time must be between"),
        (&["server", "start", "--buffer-pool", "lots"], "not a size"),
        (&["study", "run", studies[0].0.as_str()], "step_time (--step-time) must be"),
        // scale_with_a_buffer_pool_the_host_cannot_hold_leaves_the_instance_running:
        // the instance was stopped for a 100T buffer pool, failed to start, and showed
        // CRASHED. scale_input_is_checked_before_the_study_is_stored: a failed study
        // with no steps was stored first, and the messages named --threads and
        // --buffer-pool for --threads-per-instance and --buffer-pool-per-instance.
        (
            &["scale", "oltp_point_select", "--instances", "1", "--buffer-pool-per-instance", "100T"],
            "more than this host's memory",
        ),
        (
            &["scale", "oltp_point_select", "--instances", "1..4", "--buffer-pool-per-instance", "1000G"],
            "the server cannot start with it",
        ),
        (
            &["scale", "oltp_point_select", "--instances", "1", "--threads-per-instance", "0"],
            "threads_per_instance (--threads-per-instance) must be at least 1",
        ),
        (
            &["scale", "oltp_point_select", "--instances", "1", "--buffer-pool-per-instance", "1X"],
            "(--buffer-pool-per-instance) '1X' is not a size",
        ),
        (&["scale", "oltp_point_select", "--instances", "1..200"], "at most 64"),
        // prepare_checks_its_loaders_against_max_connections: 3000 loaders failed
        // mid-load with EAGAIN, and --threads 0 loaded with one.
        (
            &["prepare", "oltp_point_select", "--tables", "2", "--table-size", "100", "--threads", "600"],
            "max_connections",
        ),
        (
            &["prepare", "oltp_point_select", "--tables", "2", "--table-size", "100", "--threads", "0"],
            "--threads must be at least 1",
        ),
    ] {
        let (code, err) = binary(&h, args);
        judge(&format!("{args:?} (server running)"), code, &err, says);
        assert_eq!(status(s.home.path())[0].pid, Some(s.pid), "{args:?}: the server was restarted");
        assert_eq!(snapshot(s.home.path()), before, "{args:?} changed the state directory");
    }
    let store = sizeup::store::Store::open(&s.home.path().join("results.db")).unwrap();
    assert!(store.list_studies().unwrap().is_empty(), "a refused study was stored");
    let tables = s.sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest'");
    assert_eq!(tables.trim(), "1", "a refused prepare loaded tables");
}

/// `sizeup runs` alone printed its help as "error: Stored runs"; with SIZEUP_HOME set it
/// said "error: 'sizeup runs' requires a subcommand".
#[test]
fn command_group_without_its_command_prints_its_help_not_an_error() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_string_lossy().into_owned();
    for sizeup_home in [None, Some(h.as_str())] {
        for (group, one) in [("runs", "list"), ("server", "start"), ("study", "run"), ("cluster", "start")] {
            let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sizeup"));
            match sizeup_home {
                Some(d) => cmd.env("SIZEUP_HOME", d).arg(group),
                None => cmd.env_remove("SIZEUP_HOME").args(["--home", &h, group]),
            };
            let out = cmd.env("HOME", &h).output().unwrap();
            let (code, err) = (out.status.code(), String::from_utf8_lossy(&out.stderr));
            assert_eq!(code, Some(2), "{group} (SIZEUP_HOME {sizeup_home:?}): {err}");
            assert!(!err.starts_with("error:"), "{group} (SIZEUP_HOME {sizeup_home:?}): {err}");
            assert!(err.contains("Commands:") && err.contains(one), "{group}: {err}");
            assert!(err.contains(&format!("Usage: sizeup {group}")), "{group}: {err}");
        }
    }
}

/// not_a_mysql_server_says_so: a port where an HTTP server answered gave "cannot
/// connect ...: Packet is larger than max_allowed_packet".
#[test]
fn a_port_that_is_not_a_mysql_server_says_so() {
    use std::io::Write;
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let peer = std::thread::spawn(move || {
        if let Ok((mut c, _)) = listener.accept() {
            let _ = c.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    });
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_string_lossy().into_owned();
    let (code, err) = binary(&h, &["run", "oltp_point_select", "--host", "127.0.0.1", "--port", &port, "--time", "1"]);
    judge("http peer", code, &err, "did not answer with a MySQL handshake");
    peer.join().unwrap();
}
