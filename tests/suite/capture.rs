//! `sizeup capture` of a real server's traffic: MariaDB's slow log at
//! long_query_time = 0 while `sizeup run oltp_read_write` ran, captured, summarised by
//! `capture show`, and held against pt-query-digest (Debian's percona-toolkit) on the
//! same log.

use super::common::*;
use serde_json::Value;
use sizeup::study::capacity::Verdict;
use std::collections::BTreeMap;
use std::path::Path;

/// pt-query-digest's classes of `log`: fingerprint -> count.
fn pt_query_digest(log: &Path) -> BTreeMap<String, u64> {
    let out = std::process::Command::new("pt-query-digest")
        .args(["--no-version-check", "--output", "json", "--limit", "100000"])
        .arg(log)
        .output()
        .expect("pt-query-digest is installed (scripts/test.sh installs percona-toolkit)");
    assert!(out.status.success(), "pt-query-digest: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    // Its JSON follows a comment line or two.
    let json = &text[text.find('{').expect("pt-query-digest's JSON")..];
    let v: Value = serde_json::from_str(json).expect("pt-query-digest's JSON reads");
    v["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .map(|c| (c["fingerprint"].as_str().unwrap().to_string(), c["query_count"].as_u64().unwrap()))
        .collect()
}

/// The server's slow log at long_query_time = 0 around `sizeup run WORKLOAD` at 2
/// threads for 2 s on `data`: its path.
fn slow_logged_run(s: &TestServer, workload: &str, data: &[&str]) -> std::path::PathBuf {
    let datadir = s.sql("SELECT @@datadir").trim().to_string();
    let log = Path::new(&datadir).join("captured-slow.log");
    s.sql(&format!(
        "SET GLOBAL slow_query_log_file = '{}'; SET GLOBAL long_query_time = 0; SET GLOBAL slow_query_log = 1",
        log.display()
    ));
    let run = [&["run", workload, "--threads", "2", "--time", "2"][..], data].concat();
    assert_eq!(s.sizeup(&run).unwrap(), 0);
    s.sql("SET GLOBAL slow_query_log = 0");
    log
}

/// a_slow_log_is_captured_as_pt_query_digest_reads_it: every digest of the capture has
/// pt-query-digest's count on the same log, sizeup's own status reads (which
/// pt-query-digest counts) are left out, and oltp_read_write's shape is there: ten point
/// selects to a commit.
#[test]
fn a_slow_log_is_captured_as_pt_query_digest_reads_it() {
    let s = TestServer::start();
    let data = ["--tables", "2", "--table-size", "2000"];
    assert_eq!(s.sizeup(&[&["prepare", "oltp_read_write"][..], &data].concat()).unwrap(), 0);
    let log = slow_logged_run(&s, "oltp_read_write", &data);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traffic.capture");
    let (code, said, err) =
        run_in(&s, &["capture", "--slow-log", &log.to_string_lossy(), "-o", &out.to_string_lossy()]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.starts_with("captured ") && said.contains("to the second"), "{said}");
    assert!(said.contains("of sizeup's own"), "the run's status reads were left out: {said}");

    let (code, json, err) = run_in(&s, &["capture", "show", &out.to_string_lossy(), "--json", "--limit", "0"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&json).unwrap();
    let ours: BTreeMap<String, u64> = v["digests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["digest"].as_str().unwrap().to_string(), d["count"].as_u64().unwrap()))
        .collect();
    let count = |d: &str| ours.get(d).copied().unwrap_or(0);
    let (point, commits) = (count("select c from sbtest? where id=?"), count("commit"));
    assert!(commits > 10, "{ours:?}");
    // Ten point selects a transaction; the last one of each connection may be cut.
    assert!(point.abs_diff(10 * commits) <= 20, "{point} point selects, {commits} commits");
    assert!(ours.keys().all(|d| !d.contains("show global status")), "sizeup's own reads are out: {ours:?}");

    let theirs = pt_query_digest(&log);
    assert!(
        theirs.keys().any(|d| d.starts_with("show global status")),
        "the log held sizeup's status reads, which only pt-query-digest counts: {theirs:?}"
    );
    for (digest, n) in &ours {
        assert_eq!(theirs.get(digest), Some(n), "{digest}: sizeup {n}, pt-query-digest {:?}", theirs.get(digest));
    }
    // And nothing of the application's is missing: what pt-query-digest has beyond the
    // capture is sizeup's own and the administrator commands.
    for (digest, n) in &theirs {
        if !ours.contains_key(digest) {
            assert!(
                digest.starts_with("show ")
                    || digest.starts_with("administrator command")
                    || digest.contains("information_schema.")
                    || digest == "select connection_id()"
                    || digest == "select max(id) from sbtest?",
                "pt-query-digest's {digest} ({n}) is not in the capture"
            );
        }
    }
}

/// A capture refuses what it cannot read or would damage, in one line each.
#[test]
fn capture_refuses_bad_input_without_damage() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    std::fs::write(p("notes.txt"), "keep me").unwrap();
    std::fs::write(p("empty.log"), "").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["capture", "--slow-log", &p("missing.log"), "-o", &p("c")], "--slow-log"),
        (&["capture", "--slow-log", &p("empty.log"), "-o", &p("c")], "holds no statement to capture"),
        (&["capture", "--slow-log", &p("empty.log"), "-o", &p("notes.txt")], "is not a sizeup capture"),
        (&["capture", "show", &p("notes.txt")], "is not a sizeup capture"),
    ];
    for (args, says) in cases {
        let e = sizeup(args).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains(says), "{args:?}: {e}");
        assert!(!e.to_string().contains('\n'), "one line: {e}");
    }
    assert_eq!(std::fs::read_to_string(p("notes.txt")).unwrap(), "keep me", "no damage");
    assert!(!Path::new(&p("c")).exists(), "no half capture");
}

/// a_capture_replays_its_statements_digest_for_digest: the capture of oltp_read_write,
/// replayed at 1x on a copy of the data (restored from a dump taken before it was
/// captured): each captured statement is sent once, in its session, so every digest's
/// count comes back (done or failed on the copy); a replay that writes is refused until
/// the user says the target is a copy (--write-foreign-tables).
#[test]
fn a_capture_replays_its_statements_digest_for_digest() {
    replays_digest_for_digest("oltp_read_write", "sbtest", &["--tables", "2", "--table-size", "2000"]);
}

/// The same of TPC-C's five transactions (SELECT ... FOR UPDATE, multi-row INSERTs,
/// rollbacks of New-Order): every digest's count comes back.
#[test]
fn a_tpcc_capture_replays_its_statements_digest_for_digest() {
    replays_digest_for_digest("tpcc", "tpcc", &["--warehouses", "1"]);
}

fn replays_digest_for_digest(workload: &str, database: &str, data: &[&str]) {
    let s = TestServer::start();
    assert_eq!(s.sizeup(&[&["prepare", workload][..], data].concat()).unwrap(), 0);
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("copy.sql");
    let out = std::process::Command::new("mariadb-dump")
        .args(["--no-defaults", "-uroot", "--databases", database])
        .arg(format!("--socket={}", s.socket.display()))
        .output()
        .expect("mariadb-dump is installed");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(&dump, &out.stdout).unwrap();
    let log = slow_logged_run(&s, workload, data);
    let capture = dir.path().join("traffic.capture").to_string_lossy().into_owned();
    assert_eq!(sizeup(&["capture", "--slow-log", &log.to_string_lossy(), "-o", &capture]).unwrap(), 0);
    // The copy: the data as it was before the captured run.
    let restore = std::process::Command::new("mariadb")
        .args(["--no-defaults", "-uroot"])
        .arg(format!("--socket={}", s.socket.display()))
        .stdin(std::fs::File::open(&dump).unwrap())
        .output()
        .unwrap();
    assert!(restore.status.success(), "{}", String::from_utf8_lossy(&restore.stderr));

    let e = s.sizeup(&["replay", &capture]).unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("--write-foreign-tables"), "{e}");
    let json = dir.path().join("replay.json");
    let code = s
        .sizeup(&["replay", &capture, "--speed", "1", "--write-foreign-tables", "--json", &json.to_string_lossy()])
        .unwrap();
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (code, shown, _) = run_in(&s, &["capture", "show", &capture, "--json", "--limit", "0"]);
    assert_eq!(code, 0);
    let shown: Value = serde_json::from_str(&shown).unwrap();
    let captured: BTreeMap<String, u64> = shown["digests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["digest"].as_str().unwrap().to_string(), d["count"].as_u64().unwrap()))
        .collect();
    let summary = &doc["summary"];
    let types = summary["types"].as_array().unwrap();
    assert!(!types.is_empty());
    for t in types {
        let name = t["name"].as_str().unwrap();
        let sent = t["transactions"].as_u64().unwrap() + t["errors"].as_u64().unwrap();
        if let Some(n) = captured.get(name) {
            assert_eq!(sent, *n, "{name}: captured {n}, replayed {sent}");
        }
    }
    let all: u64 = captured.values().sum();
    let sent = summary["transactions"].as_u64().unwrap() + summary["errors"].as_u64().unwrap();
    assert_eq!(sent, all, "every captured statement once: {summary}");
    assert_eq!(doc["config"]["options"]["speed"], 1.0);
}

/// A MySQL 8 slow log (µs times) of `sessions` sessions in the `shop` database, each
/// sending `SELECT SLEEP(0.003)` and `SELECT 1` in turn every 20 ms, `each` statements,
/// and with `lone` one more session of a single statement at the start.
fn paced_slow_log(sessions: u64, each: u64, lone: bool) -> String {
    let mut entries: Vec<(u64, u64, u64, &str)> = Vec::new(); // (end µs, session, query µs, text)
    for i in 0..sessions {
        for k in 0..each {
            let start = k * 20_000 + i * 20_000 / sessions;
            let (qt, text) = if k % 2 == 0 { (3_000, "SELECT SLEEP(0.003)") } else { (100, "SELECT 1") };
            entries.push((start + qt, 10 + i, qt, text));
        }
    }
    if lone {
        entries.push((100, 99, 100, "SELECT 1"));
    }
    entries.sort();
    let mut log = String::from("/usr/sbin/mysqld, Version: 8.0.35 (MySQL Community Server - GPL). started with:\n");
    for (n, (end, session, qt, text)) in entries.iter().enumerate() {
        let (s, us) = (end / 1_000_000, end % 1_000_000);
        log += &format!(
            "# Time: 2026-11-29T00:{:02}:{:02}.{us:06}Z\n# User@Host: app[app] @ localhost []  Id: {session}\n\
             # Query_time: {}.{:06}  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0\n{}{text};\n",
            s / 60,
            s % 60,
            qt / 1_000_000,
            qt % 1_000_000,
            if n == 0 { "use shop;\n" } else { "" }
        );
    }
    log
}

/// `paced_slow_log` captured into `dir`, the `shop` database made on `s`: the capture.
fn paced_capture(s: &TestServer, dir: &Path, lone: bool) -> String {
    let log = dir.join("paced-slow.log");
    std::fs::write(&log, paced_slow_log(8, 200, lone)).unwrap();
    let capture = dir.join("paced.capture").to_string_lossy().into_owned();
    assert_eq!(sizeup(&["capture", "--slow-log", &log.to_string_lossy(), "-o", &capture]).unwrap(), 0);
    s.sql("CREATE DATABASE IF NOT EXISTS shop");
    capture
}

/// every_interval_completes_after_a_session_is_done: a captured session of one
/// statement ended its client thread at once, no interval of the run completed until
/// its end, and the whole replay was one interval in the warm-up: no figure at all.
#[test]
fn every_interval_completes_after_a_session_is_done() {
    let s = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let capture = paced_capture(&s, dir.path(), true);
    let json = dir.path().join("r.json");
    let args = ["replay", &capture, "--report-interval", "0.5", "--warmup", "1", "--json", &json.to_string_lossy()];
    assert_eq!(s.sizeup(&args).unwrap(), 0);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let intervals = doc["intervals"].as_array().unwrap();
    // 4 s of capture in half-second intervals, the first two the warm-up.
    assert!(intervals.len() >= 7, "{} intervals: {intervals:?}", intervals.len());
    assert_eq!(intervals.iter().filter(|iv| iv["warmup"] == true).count(), 2, "{intervals:?}");
    let summary = &doc["summary"];
    assert!(summary["transactions"].as_u64().unwrap() > 1000, "the 3 s after the warm-up counted: {summary}");
    assert_eq!(doc["config"]["options"]["sessions"], 9);
}

/// `sizeup capacity --replay`: the capture's own rate is the first level, the search
/// doubles the speed until the sessions cannot keep up (each sends its statements in
/// order: at 16x a pair of them is due every 2.5 ms and takes 3.1), and the answer is
/// in speeds of the captured traffic, naming the digests that broke first.
#[test]
fn capacity_of_a_replay_brackets_a_speed_of_the_captured_traffic() {
    let s = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let capture = paced_capture(&s, dir.path(), false);
    let args = [
        "capacity",
        "--replay",
        &capture,
        "--latency",
        "p99<20ms",
        "--warmup",
        "0",
        "--resolution",
        "20",
        "--max-levels",
        "7",
    ];
    let (code, stdout, stderr) = run_in(&s, &args);
    if !answered(code, &s.results(), &format!("{stdout}\n{stderr}")) {
        return;
    }
    let row = sizeup::store::Store::open(&s.results()).unwrap().load_study(1).unwrap();
    assert_eq!(row.kind, "rate");
    let levels: Vec<_> =
        sizeup::study::rate_levels(&row, &capture).into_iter().filter(|(_, _, v)| !v.spoiled()).collect();
    let scale = levels[0].1.replay.expect("a replay's levels carry its scale");
    // 1,600 statements from the first start to the last: 3.98 s.
    assert!((scale.captured_rate - 1600.0 / 3.98).abs() < 2.0, "{scale:?}");
    assert_eq!(scale.transactions_per_statement, Some(1.0), "every statement its own transaction");
    assert_eq!(levels[0].0, scale.captured_rate.round() as u32, "the search starts at the captured rate");
    let tried: Vec<(u32, Verdict)> = levels.iter().map(|(r, _, v)| (*r, v.clone())).collect();
    let (lo, hi) = sizeup::study::capacity::bracket(&tried);
    assert!(lo.is_some_and(|lo| lo >= levels[0].0), "1x holds: {tried:?}");
    let hi = hi.expect("a speed the sessions cannot keep up with");
    assert!(hi as f64 <= 16.0 * scale.captured_rate * 1.01, "16x cannot be kept up with: {tried:?}");
    assert!(levels.iter().all(|(_, f, _)| f.connections == 8), "one connection per captured session");
    let answer = stdout.lines().find(|l| l.contains(": Sustains")).unwrap_or_default();
    assert!(answer.contains("x the captured rate (") && answer.contains(" transactions/s)"), "{stdout}");
    assert!(answer.contains("The digests over p99 <= 20.0 ms at"), "{answer}");
    assert!(answer.contains("`select sleep(?)`"), "the slow digest broke first: {answer}");
}

/// `sizeup plan --replay CAPTURE --growth 20`: the target is twenty times the captured
/// rate, the capacity search of the replay is the plan's one study (there is no
/// connection count to sweep), and the plan is said in the capture's units.
#[test]
fn a_plan_for_a_capture_sizes_servers_for_its_growth() {
    let s = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let capture = paced_capture(&s, dir.path(), false);
    let args = ["plan", "--replay", &capture, "--growth", "20", "--latency", "p99<20ms", "--budget", "5m"];
    let (code, stdout, stderr) = run_in(&s, &args);
    let said = format!("{stdout}\n{stderr}");
    if code == 1 && said.contains("other programs") {
        return; // a busy box starved every level: rightly no plan
    }
    assert_eq!(code, 0, "{said}");
    assert!(stdout.contains("sweep: skipped — a capture's sessions are its connections"), "{stdout}");
    assert!(
        stdout.contains("capacity at the objective: the highest speed of the captured traffic that meets p99<20ms"),
        "{stdout}"
    );
    let plan = stdout.lines().find(|l| l.starts_with("Plan: ")).unwrap_or_default();
    assert!(plan.contains("statements/s (20x the captured traffic) of"), "{plan}");
    let servers: u64 = plan["Plan: ".len()..].split(' ').next().unwrap().parse().unwrap();
    // Twenty times 400 statements a second on servers that carry 1x to 16x of it each.
    assert!((2..=20).contains(&servers), "{plan}");
    assert!(stdout.contains("x the captured rate ("), "the basis in speeds: {stdout}");
    // Bad requests: refused in one line before anything runs.
    let (code, _, err) = run_in(&s, &["plan", "--replay", &capture, "--growth", "3"]);
    assert!(code != 0 && err.contains("--latency"), "{err}");
    let (code, _, err) = run_in(&s, &["plan", "--replay", &capture]);
    assert!(code != 0 && err.contains("--growth"), "{err}");
    for cmd in [
        &["plan", "--replay", "t.log", "--growth", "3", "--latency", "p99<20ms"][..],
        &["capacity", "--replay", "t.log", "--latency", "p99<20ms"],
    ] {
        let (code, _, err) = run_in(&s, cmd);
        assert!(code != 0 && err.contains("--replay t.log: a capture file ends in .capture"), "{err}");
    }
}

/// `sizeup capture --for` on `s`'s managed instance, as its own process.
fn live_capture(s: &TestServer, seconds: &str, out: &Path) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args(["--home", &s.home(), "capture", "--for", seconds, "-o", &out.to_string_lossy()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// `sizeup capture --for`: the slow log turned to mysql.slow_log for a while and every
/// setting put back exactly, whether the time ran out or Ctrl-C ended it; the captured
/// tables' definitions and row counts kept; a user who may not change the settings
/// refused in a line, with nothing changed.
#[test]
fn a_live_capture_puts_every_setting_back() {
    let s = TestServer::start();
    let data = ["--tables", "1", "--table-size", "2000"];
    assert_eq!(s.sizeup(&[&["prepare", "oltp_read_only"][..], &data].concat()).unwrap(), 0);
    s.sql("SET GLOBAL long_query_time = 7.5; SET GLOBAL log_output = 'FILE'; SET GLOBAL slow_query_log = 0");
    let settings = || s.sql("SELECT @@GLOBAL.slow_query_log, @@GLOBAL.log_output, @@GLOBAL.long_query_time");
    let before = settings();
    assert!(before.contains("7.5"), "{before}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("live.capture");
    let child = live_capture(&s, "5s", &out);
    // Sessions that connect after the capture began are in it.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(
        s.sizeup(&[&["run", "oltp_read_only", "--threads", "2", "--time", "2"][..], &data].concat()).unwrap(),
        0
    );
    let done = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&done.stdout);
    assert!(done.status.success(), "{said}{}", String::from_utf8_lossy(&done.stderr));
    assert!(said.contains("captured ") && said.contains("to the microsecond"), "{said}");
    assert_eq!(settings(), before, "every setting as it was");
    let (code, json, _) = run_in(&s, &["capture", "show", &out.to_string_lossy(), "--json", "--limit", "0"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&json).unwrap();
    let digests: Vec<&str> = v["digests"].as_array().unwrap().iter().map(|d| d["digest"].as_str().unwrap()).collect();
    assert!(digests.contains(&"select c from sbtest? where id=?"), "{digests:?}");
    assert!(digests.iter().all(|d| !d.contains("@@global.slow_query_log")), "its own reads left out: {digests:?}");
    let table = v["tables"].as_array().unwrap().iter().find(|t| t["name"] == "sbtest1").expect("sbtest1 recorded");
    assert!(table["create"].as_str().unwrap().starts_with("CREATE TABLE `sbtest1`"), "{table}");
    assert!(table["rows"].as_u64().unwrap() > 0, "{table}");

    // No copy of the data: the tables made from the recorded schema, then replayed; the
    // figures say what data they stand on, and a second make refuses (the tables exist).
    let capture = out.to_string_lossy().into_owned();
    s.sql("DROP DATABASE sbtest");
    let json = dir.path().join("made.json").to_string_lossy().into_owned();
    let (code, said, err) = run_in(&s, &["replay", &capture, "--prepare-from-schema", "--json", &json]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("made 1 table(s) from the capture's schema"), "{said}");
    let comment = s.sql("SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_NAME = 'sbtest1'");
    assert!(comment.contains("created by sizeup (made from the captured schema)"), "{comment}");
    let made: u64 = s.sql("SELECT COUNT(*) FROM sbtest.sbtest1").trim().lines().last().unwrap().parse().unwrap();
    assert_eq!(made, table["rows"].as_u64().unwrap(), "the captured row count");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let notes = doc["summary"]["notes"].to_string();
    assert!(notes.contains("made from the capture's schema (--prepare-from-schema), not copied"), "{notes}");
    assert_eq!(doc["config"]["options"]["made_from_schema"], true);
    let (code, _, err) = run_in(&s, &["replay", &capture, "--prepare-from-schema"]);
    assert!(code != 0 && err.contains("sbtest.sbtest1 exists"), "{err}");
    assert_eq!(s.sql("SELECT COUNT(*) FROM sbtest.sbtest1").trim().lines().last().unwrap(), made.to_string());

    // Ctrl-C: the capture ends early, keeps what it holds, and puts the settings back.
    let out = dir.path().join("interrupted.capture");
    let child = live_capture(&s, "10m", &out);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(
        s.sizeup(&[&["run", "oltp_read_only", "--threads", "1", "--time", "1"][..], &data].concat()).unwrap(),
        0
    );
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(String::from_utf8_lossy(&done.stdout).contains("interrupted: the capture ends here"));
    assert!(out.exists());
    assert_eq!(settings(), before, "put back after Ctrl-C too");

    // A user who may not change the settings: one line, nothing changed.
    s.sql("CREATE USER 'weak'@'localhost'; GRANT SELECT ON *.* TO 'weak'@'localhost'");
    let socket = s.socket.to_string_lossy().into_owned();
    let out = dir.path().join("weak.capture").to_string_lossy().into_owned();
    let (code, _, err) = run_in(&s, &["capture", "--for", "1s", "-o", &out, "--socket", &socket, "--user", "weak"]);
    assert_ne!(code, 0);
    assert!(err.contains("SUPER") && err.trim().lines().count() <= 2, "{err}");
    assert_eq!(settings(), before);
    assert!(!Path::new(&out).exists());
}
