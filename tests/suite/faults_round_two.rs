//! Issue 47's defects, each against a real private server the test starts (and stops on
//! drop, after a failure too): what a second fault and bad-input sweep found.

use crate::common;
use common::TestServer;

const DATA: &[&str] = &["--tables", "1", "--table-size", "2000"];

fn args<'a>(head: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    head.iter().chain(tail).copied().collect()
}

/// empty_tables_panic_studies: tables prepared with --table-size 0 (or emptied by
/// DELETE) made `sweep` panic converting MAX(id) NULL (exit 101), and gave `run` a
/// figure of empty lookups (5,484 tps, completed, no warning).
#[test]
fn empty_tables_panic_studies() {
    let s = TestServer::start();
    let prepare = ["prepare", "oltp_point_select", "--database", "empty0", "--tables", "1", "--table-size", "0"];
    assert_eq!(s.sizeup(&prepare).unwrap(), 0);
    let sweep = ["sweep", "oltp_point_select", "--database", "empty0", "--threads", "1", "--step-time", "2"];
    let e = s.sizeup(&args(&sweep, &["--warmup", "0", "--tables", "1"])).unwrap_err().to_string();
    assert!(e.contains("empty0 holds 0 rows per table, not the 10000 asked for"), "{e}");

    // Emptied by DELETE: `run` refuses rather than measure lookups of nothing.
    assert_eq!(s.sizeup(&args(&["prepare", "oltp_point_select"], DATA)).unwrap(), 0);
    s.sql("DELETE FROM sbtest.sbtest1");
    let e = s.sizeup(&args(&["run", "oltp_point_select", "--time", "1"], DATA)).unwrap_err().to_string();
    assert!(e.contains("sbtest.sbtest1 holds no rows"), "{e}");
    // oltp_insert on empty tables measures what it says.
    assert_eq!(s.sizeup(&args(&["run", "oltp_insert", "--time", "1"], DATA)).unwrap(), 0);
}

/// bad_server_set_kills_instance_0_and_sticks: `set = ["innodb_nonexistent_var=1"]` in
/// a study's [server] stopped a working instance 0, failed to restart it, and saved the
/// setting, so every later command failed with mariadbd's log lines.
#[test]
fn bad_server_set_kills_instance_0_and_sticks() {
    let s = TestServer::start();
    let manager = sizeup::server::Manager::new(s.home.path());
    let before = manager.settings_of(0).unwrap().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        "name = 'bad set'\nkind = 'sweep'\nworkloads = ['oltp_point_select']\nlevels = [1]\nstep_time = 1\n\
         warmup = 0\n[options]\ntables = 1\ntable-size = 2000\n[server]\nset = ['innodb_nonexistent_var=1']\n",
    )
    .unwrap();
    let e = s.sizeup(&["study", "run", file.to_str().unwrap()]).unwrap_err().to_string();
    assert!(e.contains("innodb_nonexistent_var") || e.contains("unknown variable"), "{e}");
    assert!(e.contains("instance(s) 0 run again with their previous settings"), "{e}");
    assert_eq!(common::status(s.home.path())[0].state, sizeup::server::State::Running);
    assert_eq!(manager.settings_of(0).unwrap().unwrap(), before);
    let cnf = std::fs::read_to_string(s.home.path().join("instances/0/my.cnf")).unwrap();
    assert!(!cnf.contains("innodb_nonexistent_var"), "{cnf}");
    // failed_study_says_why: `study show` and the HTML report gave no reason (only --json).
    let show = std::process::Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args(["--home", &s.home(), "study", "show"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains("failed") && shown.contains("it failed: ") && shown.contains("innodb_nonexistent_var"),
        "{shown}"
    );
    let html = dir.path().join("r.html");
    assert_eq!(s.sizeup(&["report", "--html", html.to_str().unwrap(), "s1"]).unwrap(), 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<dt>why it failed</dt>") && page.contains("innodb_nonexistent_var"));
    // model_usl_answers_from_failed_studies: it fitted without a word of the failure.
    let usl = std::process::Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args(["--home", &s.home(), "model", "usl", "--from", "s1"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&usl.stderr);
    assert!(said.contains("warning: study 1 is failed") && said.contains("did not finish a level"), "{said}");
    // And the next command works.
    assert_eq!(s.sizeup(&args(&["prepare", "oltp_point_select"], DATA)).unwrap(), 0);
    assert_eq!(s.sizeup(&args(&["run", "oltp_point_select", "--time", "1"], DATA)).unwrap(), 0);
}

/// writing_runs_refuse_foreign_tables: `run oltp_delete` deleted every row of
/// `mine.sbtest1 (id, note)`, a table sizeup did not create, with a one-line note.
#[test]
fn writing_runs_refuse_foreign_tables() {
    let s = TestServer::start();
    s.sql(
        "CREATE DATABASE mine; CREATE TABLE mine.sbtest1 (id INT PRIMARY KEY, note TEXT); \
         INSERT INTO mine.sbtest1 VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    );
    let run = ["run", "oltp_delete", "--database", "mine", "--tables", "1", "--table-size", "3", "--time", "1"];
    let e = s.sizeup(&run).unwrap_err().to_string();
    assert!(e.contains("were not created by sizeup, and oltp_delete changes rows"), "{e}");
    assert!(e.contains("--write-foreign-tables"), "{e}");
    assert_eq!(s.sql("SELECT COUNT(*) FROM mine.sbtest1").trim(), "3");
    // A study's writing step is refused the same way.
    let sweep = ["sweep", "oltp_update_index", "--database", "mine", "--tables", "1", "--table-size", "3"];
    let e = s.sizeup(&args(&sweep, &["--threads", "1", "--step-time", "1", "--warmup", "0"])).unwrap_err().to_string();
    assert!(e.contains("--write-foreign-tables"), "{e}");
    assert_eq!(s.sql("SELECT GROUP_CONCAT(note ORDER BY id) FROM mine.sbtest1").trim(), "a,b,c");
    // Said explicitly, it writes.
    assert_eq!(s.sizeup(&args(&run, &["--write-foreign-tables"])).unwrap(), 0);
    assert_ne!(s.sql("SELECT COUNT(*) FROM mine.sbtest1").trim(), "3");
}

/// writing_scripts_refuse_foreign_tables: a script's run, prepare or cleanup changed
/// tables sizeup did not create (its tables were "its own business"): each statement
/// that would change one is now refused before the server sees it, even when the
/// script catches the error; the tables a script's prepare makes become sizeup's.
#[test]
fn writing_scripts_refuse_foreign_tables() {
    let s = TestServer::start();
    s.sql(
        "CREATE DATABASE mine; CREATE TABLE mine.sbtest1 (id INT PRIMARY KEY, note TEXT); \
         INSERT INTO mine.sbtest1 VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    );
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let deleting = write(
        "deleting.lua",
        "function event()\n  local con = sysbench.sql.driver():connect()\n  \
         pcall(function() con:query('DELETE FROM sbtest1 WHERE id > 0') end)\nend\n",
    );
    let run = |extra: &[&str]| {
        let head = ["run", deleting.as_str(), "--database", "mine", "--time", "1"];
        s.sizeup(&args(&head, extra))
    };
    // Refused in the run's first event: the run fails with why.
    let out = child(&s, &["run", deleting.as_str(), "--database", "mine", "--time", "1"]).wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{e}");
    assert!(e.contains("refusing `DELETE FROM sbtest1 WHERE id > 0`"), "{e}");
    assert!(e.contains("mine.sbtest1, which sizeup did not create") && e.contains("--write-foreign-tables"), "{e}");
    assert_eq!(s.sql("SELECT COUNT(*) FROM mine.sbtest1").trim(), "3");
    // A script that only reads them runs.
    let reading = write(
        "reading.lua",
        "function event()\n  local con = sysbench.sql.driver():connect()\n  \
         con:query('SELECT note FROM sbtest1 WHERE id = 1 FOR UPDATE')\nend\n",
    );
    assert_eq!(s.sizeup(&["run", reading.as_str(), "--database", "mine", "--time", "1"]).unwrap(), 0);
    // Said explicitly, it writes.
    assert_eq!(run(&["--write-foreign-tables"]).unwrap(), 0);
    assert_eq!(s.sql("SELECT COUNT(*) FROM mine.sbtest1").trim(), "0");

    // A script's prepare marks what it makes (keeping the script's own comment): its
    // runs write there, its cleanup drops them; a foreign table stays.
    let own = write(
        "own.lua",
        "function prepare()\n  local con = sysbench.sql.driver():connect()\n  \
         con:query(\"CREATE TABLE sbtest1 (id INT PRIMARY KEY) COMMENT='my own'\")\n  \
         con:query('INSERT INTO sbtest1 VALUES (1), (2)')\nend\n\
         function cleanup()\n  local con = sysbench.sql.driver():connect()\n  \
         con:query('DROP TABLE IF EXISTS sbtest1')\n  con:query('DROP TABLE IF EXISTS kept')\nend\n\
         function event()\n  local con = sysbench.sql.driver():connect()\n  \
         con:query('DELETE FROM sbtest1 WHERE id = 1')\nend\n",
    );
    assert_eq!(s.sizeup(&["prepare", own.as_str(), "--database", "ours"]).unwrap(), 0);
    let comment = s.sql(
        "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'ours' AND TABLE_NAME = 'sbtest1'",
    );
    assert_eq!(comment.trim(), format!("created by sizeup ({own}); my own"));
    assert_eq!(s.sizeup(&["run", own.as_str(), "--database", "ours", "--time", "1"]).unwrap(), 0);
    assert_eq!(s.sql("SELECT COUNT(*) FROM ours.sbtest1").trim(), "1");
    s.sql("CREATE TABLE ours.kept (id INT)");
    let e = s.sizeup(&["cleanup", own.as_str(), "--database", "ours"]).unwrap_err().to_string();
    assert!(e.contains("refusing `DROP TABLE IF EXISTS kept`") && e.contains("sizeup did not create"), "{e}");
    assert_eq!(
        s.sql("SELECT GROUP_CONCAT(TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'ours'").trim(),
        "kept"
    );
}

/// sweep_levels_beyond_limits: `--threads 1,20000` measured level 1 first; `1000,3000`
/// failed at 3000 on max_connections after the levels below it ran.
#[test]
fn sweep_levels_beyond_limits() {
    let s = TestServer::start();
    assert_eq!(s.sizeup(&args(&["prepare", "oltp_point_select"], DATA)).unwrap(), 0);
    let sweep = |levels: &'static str| {
        let head = ["sweep", "oltp_point_select", "--threads", levels, "--step-time", "1", "--warmup", "0"];
        s.sizeup(&args(&head, DATA)).unwrap_err().to_string()
    };
    let e = sweep("1,20000");
    assert!(e.contains("level 20000") && e.contains("10000 connections at most"), "{e}");
    // The test server allows 500 connections.
    let e = sweep("1,600");
    assert!(e.contains("level 600") && e.contains("max_connections"), "{e}");
    let runs = sizeup::store::Store::open(&s.results()).unwrap().list_runs().unwrap();
    assert!(runs.is_empty(), "no level ran: {} run(s) stored", runs.len());
}

fn child(s: &TestServer, a: &[&str]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args(["--home", &s.home()])
        .args(a)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Kills a child sizeup when the test ends however it ends.
struct Killed(std::process::Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// two_commands_race_on_a_stopped_instance: after `server stop`, two `run`s started
/// together: in 5 of 10 trials one failed at once, "cannot connect to socket", instead
/// of waiting for the other's automatic start.
#[test]
fn two_commands_race_on_a_stopped_instance() {
    let s = TestServer::start();
    assert_eq!(s.sizeup(&args(&["prepare", "oltp_point_select"], DATA)).unwrap(), 0);
    let run = args(&["run", "oltp_point_select", "--time", "1"], DATA);
    for trial in 0..3 {
        assert_eq!(s.sizeup(&["server", "stop"]).unwrap(), 0);
        let both = [child(&s, &run), child(&s, &run)];
        for c in both {
            let out = c.wait_with_output().unwrap();
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "trial {trial}: {said}");
        }
    }
}

/// concurrent_studies_are_not_coordinated: two sweeps at once on one state directory
/// each reported a "peak" (303.5 and 267.5 tps against 453.3 alone) with no note.
#[test]
fn concurrent_studies_are_not_coordinated() {
    use std::io::BufRead;
    let s = TestServer::start();
    assert_eq!(s.sizeup(&args(&["prepare", "oltp_point_select"], DATA)).unwrap(), 0);
    let sweep = args(&["sweep", "oltp_point_select", "--threads", "1,2", "--step-time", "4", "--warmup", "0"], DATA);
    let mut first = Killed(child(&s, &sweep));
    let mut lines = std::io::BufReader::new(first.0.stdout.take().unwrap()).lines();
    // It holds the lock once it says it is stored.
    while !lines.next().expect("the study prints its first line").unwrap().starts_with("study ") {}
    let e = s.sizeup(&sweep).unwrap_err().to_string();
    assert!(e.contains("another measurement is loading the managed instances"), "{e}");
    assert!(e.contains("sweep study 'sweep oltp_point_select 1,2'") && e.contains("sizeup pid"), "{e}");
    // server_stop_during_a_study: a retest stopped the server under a study, which then
    // failed "server lost" and was never told why. Refused, naming the study.
    let e = s.sizeup(&["server", "stop"]).unwrap_err().to_string();
    assert!(e.contains("a study is measuring the managed instances (sizeup pid"), "{e}");
    assert!(e.contains("sweep study 'sweep oltp_point_select 1,2'"), "{e}");
    // Once it ends, the next study runs.
    lines.for_each(drop);
    let code = first.0.wait().unwrap().code().unwrap_or(-1);
    assert!(crate::common::answered_or_starved(code, &s.results()), "exit {code}");
    let one = args(&["sweep", "oltp_point_select", "--threads", "1", "--step-time", "1", "--warmup", "0"], DATA);
    assert!(crate::common::answered_or_starved(s.sizeup(&one).unwrap(), &s.results()));
}

/// server_stop_on_a_frozen_server_waits_then_kills_silently: `server stop` on a
/// SIGSTOPped server waited 120 s (SIGTERM is held while it is stopped), then killed it
/// without a word. Now it wakes it to take the SIGTERM and shuts down cleanly.
#[test]
fn server_stop_on_a_frozen_server_waits_then_kills_silently() {
    let s = TestServer::start();
    // SAFETY: a signal to the test's own server.
    unsafe { libc::kill(s.pid, libc::SIGSTOP) };
    let started = std::time::Instant::now();
    assert_eq!(s.sizeup(&["server", "stop"]).unwrap(), 0);
    // Far under the 120 s the kill waits for: the shutdown was the server's own.
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "{:?}", started.elapsed());
    let log = std::fs::read_to_string(s.home.path().join("instances/0/error.log")).unwrap_or_default();
    assert!(log.contains("Shutdown complete"), "a clean shutdown: {log}");
}

/// prepare_interrupted_without_a_word: SIGTERM during `prepare` ended the process at
/// once and left the tables marked loading, without a word. Now the first signal stops
/// the loads and the undo says what it dropped.
#[test]
fn prepare_interrupted_without_a_word() {
    use std::io::BufRead;
    let s = TestServer::start();
    let prepare = [
        "prepare",
        "oltp_read_write",
        "--tables",
        "1",
        "--table-size",
        "1500000",
        "--threads",
        "1",
        "--load-method",
        "insert",
    ];
    let mut p = Killed(child(&s, &prepare));
    let mut lines = std::io::BufReader::new(p.0.stderr.take().unwrap()).lines();
    while !lines.next().expect("prepare says what it loads").unwrap().starts_with("preparing") {}
    std::thread::sleep(std::time::Duration::from_millis(500));
    // The server held still while the signal arrives, so the load is surely mid-way.
    // SAFETY: signals to the test's own server and child.
    unsafe {
        libc::kill(s.pid, libc::SIGSTOP);
        libc::kill(p.0.id() as i32, libc::SIGTERM);
        libc::kill(s.pid, libc::SIGCONT);
    }
    let said: String = lines.map(|l| l.unwrap() + "\n").collect();
    assert!(!p.0.wait().unwrap().success(), "{said}");
    assert!(said.contains("interrupted (SIGINT or SIGTERM)"), "{said}");
    assert!(said.contains("Dropped the table(s) this prepare made: sbtest1"), "{said}");
    assert_eq!(s.sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sbtest'").trim(), "0");
}
