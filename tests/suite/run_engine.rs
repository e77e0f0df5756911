//! The run engine against a real server: open-loop rate, event budget, warm-up, a server
//! killed mid-run, Ctrl-C, bad input, and passwords kept out of every output.

use crate::common;
use common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

fn run_json(s: &TestServer, name: &str, args: &[&str]) -> (i32, serde_json::Value) {
    let json = s.home.path().join(format!("{name}.json"));
    let j = json.to_string_lossy().into_owned();
    let mut v = vec!["run", "oltp_point_select", "--tables=1", "--table-size=2000", "--json", &j];
    v.extend_from_slice(args);
    let code = s.sizeup(&v).unwrap();
    (code, read_json(&json))
}

#[test]
fn rate_events_and_warmup() {
    let s = TestServer::start();
    assert_eq!(s.sizeup(&["prepare", "oltp_point_select", "--tables=1", "--table-size=2000"]).unwrap(), 0);

    // Open loop: the server can do far more, so the rate holds and there is no backlog.
    let (code, doc) = run_json(&s, "rate", &["--threads=4", "--time=4", "--rate=200", "--report-interval=1"]);
    assert_eq!(code, 0);
    let tps = doc["summary"]["tps"].as_f64().unwrap();
    assert!((tps - 200.0).abs() < 30.0, "open-loop tps {tps}");
    assert!(doc["summary"]["max_backlog"].as_u64().unwrap() < 20);
    assert_eq!(doc["config"]["run"]["rate"], 200.0);
    // open_loop_last_interval_is_whole: the workers leave a moment before the deadline
    // when no arrival is due before it; the last interval still ends at --time.
    let ivs = doc["intervals"].as_array().unwrap();
    assert_eq!(ivs.len(), 4, "{ivs:?}");
    let last = &ivs[3];
    let (t, d) = (last["t"].as_f64().unwrap(), last["duration"].as_f64().unwrap());
    assert!((4.0..4.5).contains(&t) && d >= 0.999, "{last}");

    // An event budget is met exactly.
    let (code, doc) = run_json(&s, "events", &["--threads=3", "--time=0", "--events=777"]);
    assert_eq!(code, 0);
    assert_eq!(doc["summary"]["transactions"], 777);

    // events_with_time_are_divided_by_the_time_they_took: a budget spent long before
    // --time ends the run then, and its rate is over the seconds it ran, not --time.
    let (code, doc) = run_json(&s, "events_time", &["--threads=2", "--time=60", "--events=500"]);
    assert_eq!(code, 0);
    assert_eq!(doc["summary"]["transactions"], 500);
    let secs = doc["summary"]["seconds"].as_f64().unwrap();
    let tps = doc["summary"]["tps"].as_f64().unwrap();
    assert!(secs < 30.0, "500 point selects took {secs} s by the summary");
    assert!((tps * secs - 500.0).abs() < 1.0, "tps {tps} over {secs} s");
    let last = doc["intervals"].as_array().unwrap().last().unwrap().clone();
    assert!(last["t"].as_f64().unwrap() < 30.0, "last interval {last}");
    // short_runs_leave_out_tick_counted_cpu: /proc's 10 ms ticks over a fraction of a
    // second gave 5.7 server cores on a 2-CPU host.
    if secs < 1.0 {
        assert!(doc["summary"]["os"].is_null(), "{}", doc["summary"]);
        assert!(doc["summary"]["server_cpu_us_per_txn"].is_null(), "{}", doc["summary"]);
        assert!(doc["summary"]["notes"].to_string().contains("too short"), "{}", doc["summary"]);
    }

    // table_size_zero_is_refused_for_a_run_that_draws_ids: it ran, drawing from 1..0.
    let runs = || sizeup::store::Store::open(&s.results()).unwrap().list_runs().unwrap().len();
    let before = runs();
    let r = s.sizeup(&["run", "oltp_point_select", "--tables=1", "--table-size=0", "--time=1"]);
    assert!(matches!(&r, Err(e) if e.to_string().contains("--table-size 0")), "{r:?}");
    assert_eq!(runs(), before, "a refused run stores nothing");

    // Warm-up intervals are flagged and left out of the summary.
    let (_, doc) = run_json(&s, "warmup", &["--threads=2", "--time=3", "--warmup=1", "--report-interval=0.5"]);
    let iv = doc["intervals"].as_array().unwrap();
    let warm: Vec<_> = iv.iter().filter(|i| i["warmup"] == true).collect();
    assert_eq!(warm.len(), 2, "two 0.5 s intervals of warm-up");
    let steady_tx: u64 = iv.iter().filter(|i| i["warmup"] == false).map(|i| i["transactions"].as_u64().unwrap()).sum();
    assert_eq!(doc["summary"]["transactions"].as_u64().unwrap(), steady_tx);
    let secs = doc["summary"]["seconds"].as_f64().unwrap();
    assert!((secs - 2.0).abs() < 0.2, "measured {secs} s");

    // zero_transaction_run_says_it_has_no_figure: a TPC-C run too short for its think
    // times was stored as NOPM 0 with nothing said. Here the one transaction falls in
    // the warm-up, and the 3-s delay after it outlasts the run.
    let (code, doc) = run_json(&s, "nothing", &["--time=2", "--warmup=1", "--delay=3000"]);
    assert_eq!((code, doc["summary"]["transactions"].as_u64()), (0, Some(0)), "{}", doc["summary"]);
    assert!(doc["summary"]["notes"].to_string().contains("no transaction finished"), "{}", doc["summary"]);
}

#[test]
fn server_killed_mid_run_is_survived_and_counted() {
    let s = TestServer::start();
    assert_eq!(s.sizeup(&["prepare", "oltp_read_write", "--tables=1", "--table-size=2000"]).unwrap(), 0);
    let home = s.home();
    let pid = s.pid;
    let socket = s.socket.clone();
    // Kills the server once the run's connections are busy, waits for it to be gone,
    // checks status calls it crashed, and restarts it. It never panics: the test joins
    // it before asserting anything, so the server it restarts is always stopped again.
    let killer = std::thread::spawn(move || -> Result<(), String> {
        let busy = || {
            Command::new("mariadb")
                .args(["--no-defaults", "-uroot", "-N", "-B"])
                .arg(format!("--socket={}", socket.display()))
                .args(["-e", "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = 'sbtest'"])
                .output()
                .ok()
                .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse::<u32>().ok())
                .unwrap_or(0)
        };
        let waited = std::time::Instant::now();
        while busy() < 4 {
            if waited.elapsed() > Duration::from_secs(20) {
                return Err("the run never connected".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(800));
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let waited = std::time::Instant::now();
        let state = loop {
            let st = status(std::path::Path::new(&home));
            if st[0].state != sizeup::server::State::Running || waited.elapsed() > Duration::from_secs(20) {
                break st[0].state;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        sizeup(&["--home", &home, "server", "start", "--buffer-pool", "128M", "--log-file-size", "48M"])
            .map_err(|e| format!("restart failed: {e}"))?;
        if state != sizeup::server::State::Crashed {
            return Err(format!("status said {state:?} after the kill"));
        }
        Ok(())
    });
    let json = s.home.path().join("kill.json");
    let j = json.to_string_lossy().into_owned();
    let code = s.sizeup(&[
        "run",
        "oltp_read_write",
        "--socket",
        &s.socket.to_string_lossy(),
        "--tables=1",
        "--table-size=2000",
        "--threads=4",
        "--time=7",
        "--json",
        &j,
    ]);
    let killed = killer.join().expect("the killer thread does not panic");
    killed.unwrap();
    assert_eq!(code.unwrap(), 0);
    let doc = read_json(&json);
    let sm = &doc["summary"];
    assert!(sm["errors"].as_u64().unwrap() >= 1, "{sm}");
    assert!(sm["reconnects"].as_u64().unwrap() >= 1, "{sm}");
    // Transactions before and after the crash were measured, interval by interval.
    let iv = doc["intervals"].as_array().unwrap();
    assert!(iv.first().unwrap()["transactions"].as_u64().unwrap() > 0);
    assert!(iv.last().unwrap()["transactions"].as_u64().unwrap() > 0);
    assert!(iv.iter().any(|i| i["reconnects"].as_u64().unwrap() > 0));
    let stored = sizeup::store::Store::open(&s.results()).unwrap().load_run(doc["id"].as_i64().unwrap()).unwrap();
    assert_eq!(stored.intervals.len(), iv.len());
}

#[test]
fn ctrl_c_stops_cleanly_and_saves() {
    let s = TestServer::start();
    assert_eq!(s.sizeup(&["prepare", "oltp_point_select", "--tables=1", "--table-size=1000"]).unwrap(), 0);
    let json = s.home.path().join("int.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args([
            "--home",
            &s.home(),
            "run",
            "oltp_point_select",
            "--table-size=1000",
            "--threads=2",
            "--time=60",
            "--report-interval=0.5",
        ])
        .arg(format!("--json={}", json.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the run is measuring: after its second interval line.
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let mut seen = Vec::new();
    while seen.iter().filter(|l: &&String| l.contains("thds:")).count() < 2 {
        seen.push(lines.next().expect("the run prints interval lines").unwrap());
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    seen.extend(lines.map(Result::unwrap));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(sizeup::EXIT_INTERRUPTED), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = seen.join("\n");
    assert!(stdout.contains("interrupted"), "{stdout}");
    let doc = read_json(&json);
    assert_eq!(doc["status"], "interrupted");
    assert!(doc["summary"]["transactions"].as_u64().unwrap() > 0);
    assert!(doc["summary"]["seconds"].as_f64().unwrap() < 10.0);
}

/// Commands are normally written through io_uring (client::outbox); where it is
/// unavailable, or turned off, they are written one by one, and the run is the same.
#[test]
fn runs_the_same_with_io_uring_off() {
    let s = TestServer::start();
    assert_eq!(s.sizeup(&["prepare", "oltp_read_only", "--tables=2", "--table-size=2000"]).unwrap(), 0);
    for setting in ["off", "on"] {
        let json = s.home.path().join(format!("uring-{setting}.json"));
        let out = Command::new(env!("CARGO_BIN_EXE_sizeup"))
            .env("SIZEUP_IO_URING", setting)
            .args(["--home", &s.home(), "run", "oltp_read_only", "--tables=2", "--table-size=2000", "--threads=4"])
            .args(["--time=0", "--events=400", "--report-interval=0", "--json"])
            .arg(&json)
            .output()
            .unwrap();
        assert!(out.status.success(), "{setting}: {}", String::from_utf8_lossy(&out.stderr));
        let doc = read_json(&json);
        let how = doc["config"]["host"]["client_io"].as_str().unwrap();
        match setting {
            "off" => assert_eq!(how, "one write per command (SIZEUP_IO_URING=off)"),
            _ => assert!(how.starts_with("io_uring") || how.ends_with("(io_uring unavailable)"), "{how}"),
        }
        let sm = &doc["summary"];
        assert_eq!(sm["transactions"], 400, "{setting}");
        // 10 point selects, 4 ranges, BEGIN and COMMIT: nothing lost or doubled.
        assert_eq!(sm["queries"], 400 * 16, "{setting}");
        assert_eq!(sm["errors"], 0, "{setting}");
    }
}

fn binary(home: &str, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sizeup")).arg("--home").arg(home).args(args).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn bad_input_gets_a_short_error_and_nonzero_exit() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_string_lossy().into_owned();
    let port = free_port().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "oltp_read_wrte", "--port", &port], "unknown workload"),
        (vec!["run", "oltp_read_write", "--threads=0", "--port", &port], "--threads must be at least 1"),
        (vec!["run", "oltp_read_write", "--rand-type=normal", "--port", &port], "unknown --rand-type"),
        (vec!["run", "oltp_read_write", "--host=127.0.0.1", "--port", &port], "cannot connect to 127.0.0.1:"),
        (
            vec!["prepare", "oltp_read_write", "--socket=/nonexistent/mysqld.sock"],
            "cannot connect to socket /nonexistent",
        ),
        (vec!["runs", "show", "42"], "no run 42"),
        (vec!["server", "start", "--buffer-pool=lots"], "not a size"),
        (vec!["run", "oltp_read_write", "--skip-trx=maybe"], "maybe"),
    ];
    for (args, expect) in cases {
        let (code, err) = binary(&h, &args);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(expect), "{args:?}: {err}");
        let lines = err.trim().lines().count();
        assert!(lines <= 3 || err.contains("Usage"), "{args:?} printed {lines} lines: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn missing_tables_are_a_clear_error_not_damage() {
    let s = TestServer::start();
    s.sql("CREATE DATABASE sbtest; CREATE TABLE sbtest.keepme (id INT)");
    let e = s.sizeup(&["run", "oltp_read_write", "--time=1"]).unwrap_err().to_string();
    assert!(e.contains("sbtest.sbtest1 does not exist") && e.contains("sizeup prepare"), "{e}");
    assert_eq!(s.sizeup(&["cleanup", "oltp_read_write"]).unwrap(), 0);
    assert_eq!(s.sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest'").trim(), "1");
}

#[test]
fn passwords_are_never_printed_or_stored() {
    let s = TestServer::start();
    let secret = "Sup3r-s3cret-pw";
    s.sql(&format!(
        "CREATE USER 'bench'@'localhost' IDENTIFIED BY '{secret}'; CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '{secret}'; \
         GRANT ALL ON *.* TO 'bench'@'localhost'; GRANT ALL ON *.* TO 'bench'@'127.0.0.1'"
    ));
    let port = s.port.to_string();
    let json = s.home.path().join("pw.json");
    let home = s.home();
    // The binary as user "bench" over TCP, with the password from MYSQL_PWD (or none).
    let as_bench = |args: &[&str], pwd: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sizeup"));
        cmd.args(["--home", &home]).args(args).args(["--host=127.0.0.1", "--port", &port, "--user=bench"]);
        cmd.env_remove("MYSQL_PWD");
        if let Some(p) = pwd {
            cmd.env("MYSQL_PWD", p);
        }
        cmd.output().unwrap()
    };
    let out = as_bench(&["prepare", "oltp_point_select", "--table-size=500"], Some(secret));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pw_arg = format!("--password={secret}");
    let json_arg = format!("--json={}", json.display());
    let run = as_bench(&["run", "oltp_point_select", "--table-size=500", "--time=1", &pw_arg, &json_arg], None);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    // A wrong password fails with a one-line error that does not echo it.
    let bad = as_bench(&["run", "oltp_point_select", "--time=1"], Some("wrong-password-xyz"));
    assert!(!bad.status.success());
    let bad_err = String::from_utf8_lossy(&bad.stderr);
    assert!(bad_err.contains("Access denied") && !bad_err.contains("wrong-password-xyz"), "{bad_err}");
    for text in [
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        String::from_utf8_lossy(&run.stdout).into_owned(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
        std::fs::read_to_string(&json).unwrap(),
    ] {
        assert!(!text.contains(secret), "password leaked: {text}");
    }
    for f in std::fs::read_dir(s.home.path()).unwrap() {
        let p = f.unwrap().path();
        if p.is_file() {
            let bytes = std::fs::read(&p).unwrap();
            assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "password in {}", p.display());
        }
    }
}

/// Drops sbtest.sbtest1 1.5 s from now, from a thread of its own.
fn drop_sbtest1_soon(s: &TestServer) -> std::thread::JoinHandle<()> {
    let socket = s.socket.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        let out = Command::new("mariadb")
            .args(["--no-defaults", "-uroot"])
            .arg(format!("--socket={}", socket.display()))
            .args(["-e", "DROP TABLE sbtest.sbtest1"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    })
}

#[test]
fn a_fatal_error_stops_the_run_with_the_statement_and_keeps_the_results() {
    let s = TestServer::start();
    assert_eq!(s.sizeup(&["prepare", "oltp_read_write", "--tables=1", "--table-size=1000"]).unwrap(), 0);
    let dropper = drop_sbtest1_soon(&s);
    let json = s.home.path().join("fatal.json");
    let j = json.to_string_lossy().into_owned();
    let code =
        s.sizeup(&["run", "oltp_read_write", "--table-size=1000", "--threads=2", "--time=30", "--json", &j]).unwrap();
    dropper.join().unwrap();
    assert_eq!(code, 1, "a failed run exits non-zero");
    let doc = read_json(&json);
    assert_eq!(doc["status"], "failed");
    let error = doc["error"].as_str().unwrap();
    assert!(error.contains("statement failed") && error.contains("1146"), "{error}");
    // What was measured before the failure is kept, in the file and in the store.
    assert!(doc["summary"]["transactions"].as_u64().unwrap() > 0);
    assert!(doc["summary"]["seconds"].as_f64().unwrap() < 10.0);
    let stored = sizeup::store::Store::open(&s.results()).unwrap().load_run(doc["id"].as_i64().unwrap()).unwrap();
    assert_eq!(stored.status, sizeup::store::Status::Failed);
    assert!(!stored.intervals.is_empty());

    // fatal_errors_are_not_counted_as_ignored: the error that ended the run was shown
    // as "ignored errors" / "errors (retried)". Point selects meet no other error.
    assert_eq!(s.sizeup(&["prepare", "oltp_point_select", "--tables=1", "--table-size=1000"]).unwrap(), 0);
    let dropper = drop_sbtest1_soon(&s);
    let code =
        s.sizeup(&["run", "oltp_point_select", "--table-size=1000", "--threads=2", "--time=30", "--json", &j]).unwrap();
    dropper.join().unwrap();
    assert_eq!(code, 1);
    let doc = read_json(&json);
    assert!(doc["error"].as_str().unwrap().contains("1146"), "{}", doc["error"]);
    assert_eq!(doc["summary"]["errors"], 0, "{}", doc["summary"]);
}
