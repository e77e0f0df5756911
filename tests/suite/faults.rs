//! Issue 15's run-time faults, each against a real private server the test starts: a
//! killed server (kill -9), a stopped one (SIGSTOP), a listener that never greets, an
//! overloaded open loop, signals, a full file system under the results store, and argv
//! read back from /proc. Every test stops what it started, after a failure too (the
//! server on `TestServer`'s drop, a child sizeup, a stopped server and a mount on their
//! guards' drop).

use crate::common;
use common::*;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The documented bounds (README "When things go wrong").
const END_GRACE: Duration = Duration::from_secs(5);
/// Slack for a box shared with compilers: about bounds, not speed.
const SLACK: Duration = Duration::from_secs(15);

/// A sizeup child process, killed (and reaped) when the test ends however it ends.
struct Proc {
    child: Child,
    lines: mpsc::Receiver<String>,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Proc {
    fn spawn(args: &[&str]) -> Proc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sizeup"))
            .args(args)
            .env_remove("MYSQL_PWD")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let (out, o) = (child.stdout.take().unwrap(), stdout.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                o.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = tx.send(line);
            }
        });
        let (mut err, e) = (child.stderr.take().unwrap(), stderr.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                e.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Proc { child, lines, stdout, stderr }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Waits for the first stdout line with `what` in it.
    fn wait_for_line(&self, what: &str, within: Duration) -> String {
        let until = Instant::now() + within;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(what) => return l,
                Ok(_) => {}
                Err(_) => panic!("no line with {what:?} within {within:?}; stderr: {}", self.stderr()),
            }
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    /// The exit code, which must come within `bound`.
    fn exit_within(&mut self, bound: Duration) -> i32 {
        let until = Instant::now() + bound;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                // Let the reader threads drain the pipes.
                std::thread::sleep(Duration::from_millis(200));
                return st.code().unwrap_or(-1);
            }
            if Instant::now() > until {
                panic!("still running after {bound:?}; stderr: {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Proc {
    /// Reaps the child (bounded by `bound`): its exit code and the CPU seconds it used.
    fn exit_with_cpu(&mut self, bound: Duration) -> (i32, f64) {
        let until = Instant::now() + bound;
        loop {
            let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
            // SAFETY: wait4 on our own child with valid out-pointers.
            let pid = unsafe { libc::wait4(self.pid(), &mut status, libc::WNOHANG, &mut usage) };
            if pid == self.pid() {
                std::thread::sleep(Duration::from_millis(200));
                let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
                return (libc::WEXITSTATUS(status), secs(usage.ru_utime) + secs(usage.ru_stime));
            }
            if Instant::now() > until {
                panic!("still running after {bound:?}; stderr: {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // Not when reaped already (exit_with_cpu): its pid may belong to another process.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: a plain kill(2).
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill({pid}, {sig})");
}

/// Sends SIGCONT to a stopped server when the test ends, so it can be stopped.
struct Resume(i32);

impl Drop for Resume {
    fn drop(&mut self) {
        // SAFETY: a plain kill(2).
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

fn prepared_server() -> TestServer {
    let s = TestServer::start();
    assert_eq!(s.sizeup(&["prepare", "oltp_point_select", "--tables", "1", "--table-size", "1000"]).unwrap(), 0);
    s
}

/// `sizeup --home H run oltp_point_select ...` on the server's managed instance.
fn run_args<'a>(home: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--home", home, "run", "oltp_point_select", "--tables", "1", "--table-size", "1000"];
    v.extend_from_slice(extra);
    v
}

fn store_run(s: &TestServer, id: i64) -> sizeup::result::RunDocument {
    sizeup::store::Store::open(&s.results()).unwrap().load_run(id).unwrap()
}

fn last_run_id(s: &TestServer) -> i64 {
    sizeup::store::Store::open(&s.results()).unwrap().list_runs().unwrap().iter().map(|r| r.id).max().unwrap()
}

#[test]
fn dead_server_kill_9_fails_the_run_after_the_lost_timeout_and_marks_the_outage() {
    let s = prepared_server();
    let home = s.home();
    let json = s.home.path().join("dead.json");
    let j = json.to_string_lossy().into_owned();
    let mut p =
        Proc::spawn(&run_args(&home, &["--threads", "2", "--time", "60", "--server-lost-timeout", "3", "--json", &j]));
    p.wait_for_line("tps:", Duration::from_secs(60));
    signal(s.pid, libc::SIGKILL);
    let killed = Instant::now();
    let code = p.exit_within(Duration::from_secs(3) + END_GRACE + SLACK);
    assert!(killed.elapsed() < Duration::from_secs(3) + END_GRACE + SLACK);
    assert_eq!(code, 1, "a run that lost its server fails; stderr: {}", p.stderr());
    let err = p.stderr();
    assert_eq!(err.matches("server lost").count(), 1, "one line when the server is lost: {err}");
    assert!(!err.contains("panicked"), "{err}");
    // The measurement so far is kept: the summary printed, --json and the store written.
    assert!(p.stdout().contains("failed"), "{}", p.stdout());
    let doc = read_json(&json);
    assert_eq!(doc["status"], "failed");
    assert!(doc["error"].as_str().unwrap().contains("--server-lost-timeout"), "{}", doc["error"]);
    let intervals = doc["intervals"].as_array().unwrap();
    assert!(intervals.iter().any(|iv| iv["outage"] == true), "outage intervals are marked");
    assert!(intervals.iter().any(|iv| iv["outage"].is_null() && iv["transactions"].as_u64() > Some(0)));
    assert!(doc["summary"]["reconnect_failures"].as_u64().unwrap() > 0, "failed reconnects are counted");
    assert!(doc["summary"]["outage_intervals"].as_u64().unwrap() > 0);
    let stored = store_run(&s, last_run_id(&s));
    assert_eq!(stored.status, sizeup::store::Status::Failed);
    assert!(stored.error.unwrap().contains("lost"));
    assert!(stored.intervals.iter().any(|iv| iv.outage));
}

#[test]
fn dead_server_back_within_the_bound_is_reconnected_and_flagged_not_capacity() {
    let s = prepared_server();
    let home = s.home();
    let json = s.home.path().join("back.json");
    let j = json.to_string_lossy().into_owned();
    let mut p = Proc::spawn(&run_args(
        &home,
        &["--threads", "2", "--time", "25", "--server-lost-timeout", "120", "--json", &j],
    ));
    p.wait_for_line("tps:", Duration::from_secs(60));
    signal(s.pid, libc::SIGKILL);
    // Wait until the run has seen the loss, then bring the server back.
    let until = Instant::now() + Duration::from_secs(30);
    while !p.stderr().contains("server lost") {
        assert!(Instant::now() < until, "no 'server lost' line: {}", p.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
    let port = s.port.to_string();
    let restart = sizeup(&[
        "--home",
        &home,
        "server",
        "start",
        "--instances",
        "1",
        "--buffer-pool",
        "128M",
        "--log-file-size",
        "48M",
        "--base-port",
        &port,
        "--max-connections",
        "500",
    ]);
    assert!(matches!(restart, Ok(0)), "{restart:?}");
    let code = p.exit_within(Duration::from_secs(25) + END_GRACE + SLACK);
    let err = p.stderr();
    assert_eq!(code, 0, "the server came back: the run completes; {err}");
    assert_eq!(err.matches("server lost").count(), 1, "{err}");
    assert_eq!(err.matches("server back").count(), 1, "one line when it is back: {err}");
    let doc = read_json(&json);
    assert!(doc["intervals"].as_array().unwrap().iter().any(|iv| iv["outage"] == true));
    assert!(doc["summary"]["reconnects"].as_u64().unwrap() > 0);
    let notes = doc["summary"]["notes"].to_string();
    assert!(notes.contains("not the server's capacity"), "a run with an outage is flagged: {notes}");

    // outage_runs_are_flagged_wherever_their_tps_is_read: the list, both exports, a
    // comparison and a report's answer said nothing of the outage.
    let out = |args: &[&str]| {
        let mut v = vec!["--home", home.as_str()];
        v.extend_from_slice(args);
        let o = Command::new(env!("CARGO_BIN_EXE_sizeup")).args(&v).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let list = out(&["runs", "list"]);
    assert!(list.contains("completed, outage"), "{list}");
    // runs_show_drops_the_fault_tag: the stored interval lines lost `[server lost]`.
    let shown = out(&["runs", "show", "1"]);
    assert!(shown.lines().any(|l| l.starts_with("[ ") && l.ends_with(" [server lost]")), "{shown}");
    let csv = out(&["runs", "export", "1", "--format", "csv"]);
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = head.iter().position(|h| *h == "outage").expect("an outage column");
    assert!(csv.lines().skip(1).any(|l| l.split(',').nth(col) == Some("true")), "{csv}");
    let md = out(&["runs", "export", "1", "--format", "markdown"]);
    assert!(md.contains("Not a capacity figure"), "{md}");
    let cmp = out(&["compare", "1", "1"]);
    assert!(cmp.contains("warning: A (run 1): the server was lost"), "{cmp}");
    let html = s.home.path().join("r.html");
    out(&["report", "1", "--html", &html.to_string_lossy()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Not a capacity figure"), "the answer says so");
}

#[test]
fn stalled_server_sigstop_run_ends_at_time_plus_grace_and_reports_the_stall() {
    let s = prepared_server();
    let home = s.home();
    let json = s.home.path().join("stall.json");
    let j = json.to_string_lossy().into_owned();
    let mut p = Proc::spawn(&run_args(&home, &["--threads", "2", "--time", "6", "--json", &j]));
    p.wait_for_line("tps:", Duration::from_secs(60));
    let _resume = Resume(s.pid);
    signal(s.pid, libc::SIGSTOP);
    let stopped = Instant::now();
    // sigstopped_server_is_not_shown_running: `server status` said "running".
    let until = Instant::now() + Duration::from_secs(5);
    while !status(s.home.path())[0].paused {
        assert!(Instant::now() < until, "a SIGSTOPped server is not shown paused");
        std::thread::sleep(Duration::from_millis(50));
    }
    let code = p.exit_within(Duration::from_secs(6) + END_GRACE + SLACK);
    assert!(stopped.elapsed() < Duration::from_secs(6) + END_GRACE + SLACK);
    assert_eq!(code, 1, "transactions the server never answered fail the run: {}", p.stderr());
    let doc = read_json(&json);
    assert!(doc["error"].as_str().unwrap().contains("stalled"), "{}", doc["error"]);
    assert!(doc["intervals"].as_array().unwrap().iter().any(|iv| iv["stall"] == true), "stall intervals");
    assert!(p.stdout().contains("[stall]"), "interval lines say stall: {}", p.stdout());
    // a_frozen_server_gets_a_starved_of_cpu_note: stopped is frozen, never starved.
    let notes = doc["summary"]["notes"].to_string();
    assert!(notes.contains("it was frozen") && !notes.contains("server was starved"), "{notes}");
    // stalled_run_has_no_made_up_fairness: the connections it abandoned never reported,
    // and "events (avg/stddev): 0.0000/0.00" was printed after thousands of events.
    assert!(doc["summary"]["fairness"].is_null(), "{}", doc["summary"]);
    assert!(!p.stdout().contains("0.0000/0.00"), "{}", p.stdout());
}

/// A freeze shorter than a long `--report-interval` went unflagged: a stall had to cover
/// a whole interval, so with sysbench's habitual 10-s intervals a server stopped for up
/// to 19 s left a `completed` run that counted as capacity. Stalls are now watched every
/// second, whatever the interval.
#[test]
fn stall_shorter_than_a_report_interval_is_flagged() {
    let s = prepared_server();
    let (p, doc) = run_through_a_freeze(&s, &["--threads", "2", "--report-interval", "5"], 3500);
    assert!(doc["intervals"].as_array().unwrap().iter().any(|iv| iv["stall"] == true), "{}", doc["intervals"]);
    assert!(doc["summary"]["stall_intervals"].as_u64().unwrap() >= 1, "{}", doc["summary"]);
    assert!(p.stdout().contains("not the server's capacity"), "{}", p.stdout());
}

/// A 12-s run (`--json` and `--time` added to `args`) whose server is stopped for
/// `freeze_ms` after its first interval line, then resumed: it must end on its own.
fn run_through_a_freeze(s: &TestServer, args: &[&str], freeze_ms: u64) -> (Proc, serde_json::Value) {
    let home = s.home();
    let json = s.home.path().join("freeze.json");
    let j = json.to_string_lossy().into_owned();
    let mut all = args.to_vec();
    all.extend(["--time", "12", "--json", &j]);
    let mut p = Proc::spawn(&run_args(&home, &all));
    p.wait_for_line("tps:", Duration::from_secs(60));
    let resume = Resume(s.pid);
    signal(s.pid, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(freeze_ms));
    drop(resume);
    assert_eq!(p.exit_within(Duration::from_secs(12) + END_GRACE + SLACK), 0, "{}", p.stderr());
    let doc = read_json(&json);
    (p, doc)
}

/// stall_missed_in_open_loop: a slow open loop over many connections sends each arrival
/// on an idle connection, so during a freeze every connection had waited only since its
/// own send, and the shortest wait was taken: a 4-s freeze passed as capacity. A wait
/// now counts from the later of its start and the last answer the run saw anywhere.
#[test]
fn stall_in_a_slow_open_loop_is_flagged() {
    let s = prepared_server();
    let (_, doc) = run_through_a_freeze(&s, &["--threads", "32", "--rate", "5"], 4500);
    assert!(doc["summary"]["stall_intervals"].as_u64().unwrap_or(0) >= 1, "{}", doc["intervals"]);
}

/// Any transaction in flight 2 s past an interval's start marked the interval a stall,
/// so one slow transaction (a lock wait, a TPC-C Delivery at saturation) made a healthy
/// run "not capacity" and failed a study step before a `p90>5s` bound could stop it. A
/// stall now needs a transaction waiting while the server answers nobody.
#[test]
fn slow_transaction_beside_others_that_finish_is_not_a_stall() {
    let s = prepared_server();
    let script = s.home.path().join("one_slow.lua");
    std::fs::write(
        &script,
        "function thread_init()\n  con = sysbench.sql.driver():connect()\nend\n\
         function event()\n  if sysbench.tid == 0 and not slept then\n    slept = true\n    \
         con:query('SELECT SLEEP(3.5)')\n  else\n    con:query('SELECT 1')\n  end\nend\n",
    )
    .unwrap();
    let json = s.home.path().join("slow.json");
    let (sc, j) = (script.to_string_lossy().into_owned(), json.to_string_lossy().into_owned());
    let code = s.sizeup(&["run", &sc, "--threads", "4", "--time", "6", "--json", &j]).unwrap();
    assert_eq!(code, 0);
    let doc = read_json(&json);
    assert_eq!(doc["summary"]["stall_intervals"].as_u64().unwrap_or(0), 0, "{}", doc["intervals"]);
    assert!(doc["intervals"].as_array().unwrap().iter().all(|iv| iv["stall"] != true), "{}", doc["intervals"]);
    // The slow one did take 3.5 s: it is in the latency, not hidden.
    let slowest =
        doc["intervals"].as_array().unwrap().iter().map(|iv| iv["max_ms"].as_f64().unwrap()).fold(0.0, f64::max);
    assert!(slowest >= 3400.0, "{}", doc["intervals"]);
}

#[test]
fn stalled_server_statement_timeout_fails_the_run_and_a_second_ctrl_c_ends_it_at_once() {
    let s = prepared_server();
    let home = s.home();
    let _resume = Resume(s.pid);

    // A transaction that waits past --statement-timeout ends the run as failed.
    let json = s.home.path().join("timeout.json");
    let j = json.to_string_lossy().into_owned();
    let mut p =
        Proc::spawn(&run_args(&home, &["--threads", "2", "--time", "120", "--statement-timeout", "2", "--json", &j]));
    p.wait_for_line("tps:", Duration::from_secs(60));
    signal(s.pid, libc::SIGSTOP);
    let code = p.exit_within(Duration::from_secs(2 + 1 + 1) + END_GRACE + SLACK);
    assert_eq!(code, 1, "{}", p.stderr());
    assert!(p.stderr().contains("--statement-timeout"), "{}", p.stderr());
    signal(s.pid, libc::SIGCONT);
    // statement_timeout_failure_ends_without_a_long_last_interval: the run waited the
    // 5-s end grace for the stalled transactions, and its last interval line covered
    // those seconds of nothing (and diluted the run's rates). The failure ends it: the
    // last interval is at most one interval plus the ticker's 1-s stall check.
    let doc = read_json(&json);
    let last = doc["intervals"].as_array().unwrap().last().unwrap().clone();
    assert!(last["duration"].as_f64().unwrap() < 2.5, "last interval: {last}");

    // Ctrl-C waits for transactions in flight; a second one ends the process at once,
    // after saving what was recorded.
    let mut p = Proc::spawn(&run_args(&home, &["--threads", "2", "--time", "120"]));
    p.wait_for_line("tps:", Duration::from_secs(60));
    signal(s.pid, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(300));
    signal(p.pid(), libc::SIGINT);
    std::thread::sleep(Duration::from_millis(500));
    signal(p.pid(), libc::SIGINT);
    let code = p.exit_within(Duration::from_secs(4) + SLACK);
    assert_eq!(code, 130, "{}", p.stderr());
    assert!(p.stderr().contains("interrupted again"), "{}", p.stderr());
    signal(s.pid, libc::SIGCONT);
    let stored = store_run(&s, last_run_id(&s));
    assert_eq!(stored.status, sizeup::store::Status::Interrupted);
    assert!(!stored.intervals.is_empty(), "what was recorded is kept");
}

/// A prepare on a server that stops answering mid-load (SIGSTOP) waited for ever: it had
/// no statement timeout. Now a load that gets no answer within `--statement-timeout`
/// fails the prepare, which says the tables stay marked incomplete when it cannot reach
/// the server to drop them, and the cleanup it names works once the server is back.
#[test]
fn stalled_server_sigstop_prepare_fails_after_the_statement_timeout() {
    let s = TestServer::start();
    let home = s.home();
    let _resume = Resume(s.pid);
    let mut p = Proc::spawn(&[
        "--home",
        &home,
        "prepare",
        "oltp_read_write",
        "--tables",
        "2",
        "--table-size",
        "2000000",
        "--threads",
        "2",
        "--statement-timeout",
        "5",
    ]);
    // Loading: the tables exist and rows are going in.
    let t0 = Instant::now();
    let count =
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = 'sbtest' AND INFO LIKE 'INSERT INTO sbtest%'";
    while s.sql(count).trim() == "0" {
        assert!(t0.elapsed() < Duration::from_secs(60), "no load was seen; stderr: {}", p.stderr());
        assert!(p.child.try_wait().unwrap().is_none(), "the prepare ended before a load was seen: {}", p.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(s.pid, libc::SIGSTOP);
    // The timeout, then at most the 10-s connect of the undo that cannot reach the server.
    let code = p.exit_within(Duration::from_secs(5 + 10) + SLACK);
    let err = p.stderr();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("got no answer within 5 s (--statement-timeout)"), "{err}");
    // The cleanup named with the data set's database (it said only the workload, wrong
    // for a prepare into another --database).
    assert!(
        err.contains("marked incomplete") && err.contains("`sizeup cleanup oltp_read_write --database sbtest`"),
        "{err}"
    );
    let said = &err[err.find("error:").expect("an error line")..];
    assert!(said.trim_end().lines().count() <= 2, "{err}");
    signal(s.pid, libc::SIGCONT);
    // What it said holds: the tables are there, marked incomplete, and a run refuses them.
    let comments = s.sql("SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sbtest'");
    assert_eq!(comments.lines().filter(|c| c.contains("incomplete")).count(), 2, "{comments}");
    let run = s.sizeup(&["run", "oltp_read_write", "--tables", "2", "--table-size", "2000000", "--time", "1"]);
    assert!(run.unwrap_err().to_string().contains("incomplete"));
    assert_eq!(s.sizeup(&["cleanup", "oltp_read_write"]).unwrap(), 0);
    assert_eq!(s.sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sbtest'").trim(), "0");
}

/// An index build has no time bound of its own (a big table takes minutes), so it is
/// watched instead: one on a server that stops answering (SIGSTOP) fails the prepare
/// rather than waiting for ever. (That the watch leaves a working statement alone is
/// `faults_server.rs`'s `the_watch_lets_a_statement_the_server_works_on_run_past_the_timeout`.)
#[test]
fn stalled_server_sigstop_during_an_index_build_fails_the_prepare() {
    let s = TestServer::start();
    let home = s.home();
    let _resume = Resume(s.pid);
    let prepare = |database: &str, timeout: &str| {
        let args = ["--database", database, "--tables", "1", "--table-size", "2000000", "--statement-timeout", timeout];
        Proc::spawn(&[&["--home", &home, "prepare", "oltp_read_write"][..], &args[..]].concat())
    };
    // 5 s: a 25,000-row load on a box busy with other tests must not stall first.
    let mut p = prepare("sbtest", "5");
    let t0 = Instant::now();
    let building = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'CREATE INDEX%'";
    while s.sql(building).trim() == "0" {
        assert!(t0.elapsed() < Duration::from_secs(120), "no index build was seen; stderr: {}", p.stderr());
        assert!(p.child.try_wait().unwrap().is_none(), "the prepare ended first: {}", p.stderr());
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(s.pid, libc::SIGSTOP);
    // The timeout, the watch's 8-s question, then the undo's reach (at most 15 s).
    let code = p.exit_within(Duration::from_secs(5 + 8 + 15) + SLACK);
    let err = p.stderr();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("creating index k_1: the server stopped answering"), "{err}");
    assert!(err.contains("marked incomplete"), "{err}");
    signal(s.pid, libc::SIGCONT);
    assert_eq!(s.sizeup(&["cleanup", "oltp_read_write"]).unwrap(), 0);
}

#[test]
fn stalled_server_a_listener_that_never_greets_times_out() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let state = tempfile::tempdir().unwrap();
    let h = state.path().to_string_lossy().into_owned();
    let started = Instant::now();
    let mut p = Proc::spawn(&[
        "--home",
        &h,
        "run",
        "oltp_point_select",
        "--host",
        "127.0.0.1",
        "--port",
        &port,
        "--user",
        "nobody",
        "--time",
        "2",
    ]);
    let code = p.exit_within(Duration::from_secs(10) + SLACK);
    assert!(started.elapsed() < Duration::from_secs(10) + SLACK);
    assert_eq!(code, 1);
    let err = p.stderr();
    assert!(err.contains("no answer within 10 s"), "{err}");
    assert!(err.lines().count() <= 2, "{err}");
    drop(listener);
}

#[test]
fn open_loop_overload_ends_at_time_and_counts_missed_arrivals() {
    let s = prepared_server();
    let home = s.home();
    let json = s.home.path().join("overload.json");
    let j = json.to_string_lossy().into_owned();
    let started = Instant::now();
    let mut p = Proc::spawn(&run_args(
        &home,
        &["--threads", "2", "--client-threads", "1", "--rate", "500000", "--time", "3", "--json", &j],
    ));
    let code = p.exit_within(Duration::from_secs(60));
    assert_eq!(code, 0, "{}", p.stderr());
    let doc = read_json(&json);
    // The run ends at --time (plus the grace), not when the backlog is worked off.
    let t_end = doc["intervals"].as_array().unwrap().last().unwrap()["t"].as_f64().unwrap();
    assert!(t_end <= 3.0 + END_GRACE.as_secs_f64(), "ran {t_end} s for --time 3");
    let missed = doc["summary"]["missed_arrivals"].as_u64().unwrap_or(0);
    assert!(missed > 0, "arrivals not started are counted as missed: {}", doc["summary"]);
    assert!(doc["summary"]["notes"].to_string().contains("missed"));
    assert!(started.elapsed() < Duration::from_secs(60));

    // Rates no client can start are refused up front, with the range.
    let e = s.sizeup(&["run", "oltp_point_select", "--rate", "1e9"]).unwrap_err().to_string();
    assert!(e.contains("between 0") && e.contains("1000000"), "{e}");
    let e = s.sizeup(&["run", "oltp_point_select", "--rate", "1e308"]).unwrap_err().to_string();
    assert!(e.contains("--rate"), "{e}");
}

#[test]
fn sigterm_does_what_ctrl_c_does_and_exits_143() {
    let s = prepared_server();
    let home = s.home();
    let mut p = Proc::spawn(&run_args(&home, &["--threads", "1", "--time", "120"]));
    p.wait_for_line("tps:", Duration::from_secs(60));
    signal(p.pid(), libc::SIGTERM);
    let code = p.exit_within(END_GRACE + SLACK);
    assert_eq!(code, 143, "{}", p.stderr());
    assert!(p.stdout().contains("summary"), "the summary is printed: {}", p.stdout());
    let stored = store_run(&s, last_run_id(&s));
    assert_eq!(stored.status, sizeup::store::Status::Interrupted);
    assert!(stored.summary.is_some());
}

#[test]
fn threads_above_max_prepared_stmt_count_are_refused_before_anything_runs() {
    let s = TestServer::start();
    assert_eq!(s.sizeup(&["prepare", "oltp_read_write", "--tables", "1", "--table-size", "100"]).unwrap(), 0);
    s.sql("SET GLOBAL max_prepared_stmt_count = 40");
    let e = s.sizeup(&["run", "oltp_read_write", "--tables", "1", "--threads", "20", "--time", "1"]).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("max_prepared_stmt_count") && e.contains("SET GLOBAL"), "{e}");
    assert!(e.lines().count() <= 2, "{e}");
    assert!(!s.results().exists() || sizeup::store::Store::open(&s.results()).unwrap().list_runs().unwrap().is_empty());
    // max_connections is still checked.
    let e = s.sizeup(&["run", "oltp_point_select", "--tables", "1", "--threads", "600"]).unwrap_err().to_string();
    assert!(e.contains("max_connections"), "{e}");
    s.sql("SET GLOBAL max_prepared_stmt_count = 16382");
}

/// A tmpfs mounted on a directory, unmounted when the test ends.
struct Mount(std::path::PathBuf);

impl Mount {
    /// A tmpfs of `size` mounted on `dir`, unmounted when the guard drops.
    fn tmpfs(dir: &Path, size: &str) -> Mount {
        let ok = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(dir).status();
        assert!(ok.unwrap().success(), "mounting a tmpfs needs root");
        Mount(dir.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn store_failure_disk_full_still_prints_the_summary_and_writes_json() {
    let s = prepared_server();
    let home = s.home();
    let dir = s.home.path().join("small");
    std::fs::create_dir(&dir).unwrap();
    let _mount = Mount::tmpfs(&dir, "2m");
    let results = dir.join("results.db");
    let r = results.to_string_lossy().into_owned();
    let json = s.home.path().join("full.json");
    let j = json.to_string_lossy().into_owned();
    let mut args = vec!["--results", r.as_str()];
    args.extend(run_args(&home, &["--threads", "1", "--time", "6", "--report-interval", "0.2", "--json", &j]));
    let mut p = Proc::spawn(&args);
    p.wait_for_line("tps:", Duration::from_secs(60));
    // Fill the file system under the store.
    let mut fill = std::fs::File::create(dir.join("fill")).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    while std::io::Write::write_all(&mut fill, &chunk).is_ok() {}
    let _ = std::io::Write::flush(&mut fill);
    let code = p.exit_within(Duration::from_secs(6) + END_GRACE + SLACK);
    let err = p.stderr();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("results store failed"), "{err}");
    assert!(err.contains("interval(s), up to") || err.contains("holds all its intervals"), "{err}");
    assert!(p.stdout().contains("summary"), "the summary is printed: {}", p.stdout());
    let doc = read_json(&json);
    assert!(doc["summary"]["transactions"].as_u64().unwrap() > 0, "--json has the whole run");
    drop(fill);
}

/// A results store that keeps the run waiting to write (another writer holds its lock;
/// a slow fsync did the same, measured at 0.3-3.2 s on this box) must not move the
/// measurement: the run's CPU baseline is taken as the warm-up ends, not when the store
/// lets the interval in. Before the fix the measuring loop wrote each interval itself
/// and took the baseline after the blocked write: the CPU per transaction then covered
/// only the last moments of the run (a fifth of its real value or less).
#[test]
fn slow_results_store_does_not_shift_the_cpu_baseline() {
    let s = prepared_server();
    let home = s.home();
    let mut p =
        Proc::spawn(&run_args(&home, &["--threads", "2", "--time", "5", "--warmup", "1", "--report-interval", "1"]));
    // The run is stored ("running ... (run N)" comes after its row is written): now hold
    // the store's write lock through most of the run.
    let until = Instant::now() + Duration::from_secs(60);
    while !p.stderr().contains("(run ") {
        assert!(Instant::now() < until, "the run never started: {}", p.stderr());
        std::thread::sleep(Duration::from_millis(10));
    }
    let db = rusqlite::Connection::open(s.results()).unwrap();
    db.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::thread::sleep(Duration::from_secs(4));
    db.execute_batch("COMMIT").unwrap();
    let (code, cpu) = p.exit_with_cpu(Duration::from_secs(5) + END_GRACE + SLACK);
    assert_eq!(code, 0, "{}", p.stderr());
    let run = store_run(&s, last_run_id(&s));
    let sm = run.summary.unwrap();
    assert_eq!(run.intervals.len(), 5, "every interval is stored once the lock is gone");
    // The steady state is 4 of the run's 5 s: its CPU is most of the process's.
    let steady = sm.client_cpu_us_per_txn.unwrap() * sm.transactions as f64 / 1e6;
    assert!(steady > 0.5 * cpu, "steady-state client CPU {steady:.3} s of the process's {cpu:.3} s");
    assert!(steady <= cpu, "steady-state client CPU {steady:.3} s, more than the process's {cpu:.3} s");
}

#[test]
fn password_is_hidden_from_proc_cmdline() {
    let state = tempfile::tempdir().unwrap();
    let h = state.path().to_string_lossy().into_owned();
    for (given, secret, shown) in [
        (&["--password=hunter2-secret"][..], "hunter2", "--password=xxxxxxxxxxxxxx"),
        (&["--mysql-password", "other-secret"], "other-secret", "--mysql-password xxxxxxxxxxxx"),
    ] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let mut args =
            vec!["--home", &h, "run", "oltp_point_select", "--host", "127.0.0.1", "--port", &port, "--user", "u"];
        args.extend_from_slice(given);
        args.extend_from_slice(&["--time", "2"]);
        let mut p = Proc::spawn(&args);
        // Its connection arriving proves main has started (and so rewritten argv).
        let until = Instant::now() + Duration::from_secs(30);
        let _conn = loop {
            match listener.accept() {
                Ok((c, _)) => break c,
                Err(_) => {
                    assert!(p.child.try_wait().unwrap().is_none(), "sizeup exited: {}", p.stderr());
                    assert!(Instant::now() < until, "no connection");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        };
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", p.pid())).unwrap();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        assert!(!cmdline.contains(secret), "{cmdline}");
        assert!(cmdline.contains(shown), "{cmdline}");
        assert!(cmdline.contains("--host 127.0.0.1"), "the rest of argv is untouched: {cmdline}");
    }
    // --help recommends MYSQL_PWD or an option file.
    let help = Command::new(env!("CARGO_BIN_EXE_sizeup")).args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("MYSQL_PWD") && help.contains("option"), "{help}");
}

#[test]
fn sweep_and_scale_drop_password_defect_11_sweep_passes_it() {
    let s = TestServer::start();
    s.sql(
        "CREATE USER 'pw'@'localhost' IDENTIFIED BY 'pw-secret-11'; GRANT ALL ON *.* TO 'pw'@'localhost'; \
         CREATE USER 'pw'@'127.0.0.1' IDENTIFIED BY 'pw-secret-11'; GRANT ALL ON *.* TO 'pw'@'127.0.0.1'",
    );
    std::env::remove_var("MYSQL_PWD");
    let socket = s.socket.to_string_lossy().into_owned();
    let code = s
        .sizeup(&[
            "sweep",
            "oltp_point_select",
            "--threads",
            "1",
            "--step-time",
            "1",
            "--warmup",
            "0",
            "--tables",
            "1",
            "--table-size",
            "100",
            "--socket",
            &socket,
            "--user",
            "pw",
            "--password",
            "pw-secret-11",
        ])
        .unwrap();
    // The password reached the sweep's runs: it answered, or a busy box starved it.
    assert!(crate::common::answered_or_starved(code, &s.results()), "exit {code}");
}

#[test]
fn run_tpcc_users_0_defect_15_names_the_users_option() {
    let state = tempfile::tempdir().unwrap();
    let h = state.path().to_string_lossy().into_owned();
    let e = sizeup(&["--home", &h, "run", "tpcc", "--users", "0"]).unwrap_err().to_string();
    assert!(e.contains("--users must be at least 1"), "{e}");
    assert!(std::fs::read_dir(state.path()).unwrap().next().is_none());
}

#[test]
fn failed_study_is_recorded_as_failed_with_the_reason_not_abandoned() {
    // A sweep whose server refuses every connection fails; its process then exits, and
    // the study must not read as abandoned (killed).
    let closed = free_port().to_string();
    let state = tempfile::tempdir().unwrap();
    let h = state.path().to_string_lossy().into_owned();
    let mut p = Proc::spawn(&[
        "--home",
        &h,
        "sweep",
        "oltp_point_select",
        "--threads",
        "1,2",
        "--step-time",
        "1",
        "--host",
        "127.0.0.1",
        "--port",
        &closed,
        "--user",
        "u",
    ]);
    assert_ne!(p.exit_within(Duration::from_secs(30)), 0);
    let store = sizeup::store::Store::open(&state.path().join("results.db")).unwrap();
    let study = store.load_study(1).unwrap();
    assert_eq!(study.status, sizeup::store::Status::Failed, "{}", p.stderr());
    let result = serde_json::to_string(&study.result).unwrap();
    assert!(result.contains("cannot connect"), "the reason is stored: {result}");
}

/// Starts a two-level sweep of point selects on `s` (`step_time` s a step, `options`
/// added to its [options]) and returns once its first step's run is stored.
fn sweep_under_way(s: &TestServer, step_time: u32, options: &str) -> Proc {
    let study = s.home.path().join("faulty.toml");
    std::fs::write(
        &study,
        format!(
            "name = \"faulty\"\nkind = \"sweep\"\nworkloads = [\"oltp_point_select\"]\nlevels = [1, 2]\n\
             step_time = {step_time}\nwarmup = 0\n\n[options]\ntables = 1\ntable-size = 1000\n{options}"
        ),
    )
    .unwrap();
    let st = study.to_string_lossy().into_owned();
    let p = Proc::spawn(&["--home", &s.home(), "study", "run", &st]);
    let until = Instant::now() + Duration::from_secs(60);
    while !Path::new(&s.results()).exists()
        || sizeup::store::Store::open(&s.results()).unwrap().list_runs().unwrap().is_empty()
    {
        assert!(Instant::now() < until, "no step started: {}", p.stderr());
        std::thread::sleep(Duration::from_millis(200));
    }
    p
}

/// The study failed at its first step, kept no figure from it and says `why`.
fn study_stopped_at_its_first_step(s: &TestServer, why: &str) {
    let store = sizeup::store::Store::open(&s.results()).unwrap();
    let row = store.load_study(1).unwrap();
    assert_eq!(row.status, sizeup::store::Status::Failed);
    assert_eq!(row.steps.len(), 1, "the study stopped at the faulty step");
    assert_eq!(row.steps[0].status, sizeup::store::Status::Failed);
    assert!(row.steps[0].figures.is_none(), "no figure from a faulty step");
    assert!(serde_json::to_string(&row.result).unwrap().contains(why), "the study says why");
}

#[test]
fn study_step_that_lost_its_server_never_feeds_a_peak_and_stops_the_study() {
    let s = prepared_server();
    let mut p = sweep_under_way(&s, 30, "server-lost-timeout = 3\n");
    // The first step's first seconds, then the server dies for good.
    std::thread::sleep(Duration::from_secs(2));
    signal(s.pid, libc::SIGKILL);
    let code = p.exit_within(Duration::from_secs(30) + END_GRACE + SLACK + Duration::from_secs(30));
    assert_eq!(code, 1, "{}", p.stderr());
    study_stopped_at_its_first_step(&s, "lost");
}

/// A sweep step measured while the server was stopped (SIGSTOP) for a while was kept as a
/// level (6 tps, in the peak and stop-condition logic) and the study completed.
#[test]
fn study_step_that_stalled_never_feeds_a_peak_and_stops_the_study() {
    let s = prepared_server();
    let mut p = sweep_under_way(&s, 8, "");
    std::thread::sleep(Duration::from_secs(1));
    let resume = Resume(s.pid);
    signal(s.pid, libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(5));
    drop(resume);
    let code = p.exit_within(Duration::from_secs(60) + END_GRACE + SLACK);
    assert_eq!(code, 1, "{}", p.stderr());
    study_stopped_at_its_first_step(&s, "stalled");
}

/// The sizeup binary run to its end: exit code, stdout, stderr.
fn sizeup_bin(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sizeup")).args(args).env_remove("MYSQL_PWD").output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// Issue 47, defect 9: on a read-only file system every command failed ("unable to
/// open database file"), and a mode-444 store failed `runs list` ("attempt to write a
/// readonly database"). Reading commands now open the store read-only; writing ones are
/// refused before they do anything, with a line that names the store and the cause.
/// The tests run as root, whom file modes do not stop, so the read-only store is a
/// tmpfs remounted read-only (and mode 444 is tried as nobody, where setpriv exists).
#[test]
fn read_only_store_defect_9_is_read_and_writes_are_refused_naming_it() {
    let s = prepared_server();
    let home = s.home();
    let dir = s.home.path().join("ro");
    std::fs::create_dir(&dir).unwrap();
    let _mount = Mount::tmpfs(&dir, "16m");
    let store = dir.join("results.db");
    let r = store.to_string_lossy().into_owned();
    let data = ["--tables", "1", "--table-size", "1000"];
    let mut sweep = vec!["--home", &home, "--results", &r, "sweep", "oltp_point_select", "--threads", "1,2"];
    sweep.extend_from_slice(&["--step-time", "1", "--warmup", "0.5", "--sample-interval", "0.5"]);
    sweep.extend_from_slice(&data);
    let (code, _, err) = sizeup_bin(&sweep);
    assert!(crate::common::answered_or_starved(code, &store), "{code}: {err}");
    let before = std::fs::read(&store).unwrap();
    let ok = Command::new("mount").args(["-o", "remount,ro"]).arg(&dir).status().unwrap();
    assert!(ok.success());
    let files = || {
        let mut v: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    };
    let stored = files();

    // Every reading command, with the read-only directory as --home (the store is its
    // results.db): each works.
    let d = dir.to_string_lossy().into_owned();
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("r.html").to_string_lossy().into_owned();
    let reads: &[(&[&str], &str)] = &[
        (&["runs", "list"], "oltp_point_select"),
        (&["runs", "show", "1"], "summary"),
        (&["runs", "export", "2", "--format", "csv"], ","),
        (&["study", "list"], "sweep"),
        (&["study", "show"], "runs 1, 2"),
        (&["study", "export", "1"], "\"levels\""),
        (&["compare", "1", "2"], "significant"),
        (&["report", "s1", "--html", &html], "wrote"),
        (&["size", "--target-tps", "100", "--from", "s1", "--at-connections", "2"], "100"),
    ];
    for (args, want) in reads {
        let mut v = vec!["--home", d.as_str()];
        v.extend_from_slice(args);
        let (code, stdout, err) = sizeup_bin(&v);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(stdout.contains(want), "{args:?}: {stdout}");
    }
    // Two levels are too few to fit the USL: the answer says so (it read the study).
    let (_, stdout, err) = sizeup_bin(&["--home", &d, "model", "usl", "--from", "s1"]);
    assert!(stdout.contains("cannot fit") && stdout.contains("too few"), "{stdout}{err}");

    // Writing commands: one line naming the store and why, non-zero, nothing written.
    let mut run = vec!["--home", &home, "--results", &r, "run", "oltp_point_select", "--time", "1"];
    run.extend_from_slice(&data);
    for args in [run, sweep.clone()] {
        let (code, _, err) = sizeup_bin(&args);
        assert_eq!(code, 1, "{err}");
        assert_eq!(
            err.trim(),
            format!(
                "error: the results store {r} is read-only (read-only file system): make it writable, or give \
                 --home (or --results) another directory"
            )
        );
    }
    assert_eq!(std::fs::read(&store).unwrap(), before);
    assert_eq!(files(), stored);

    // Mode 444 for a user file modes do stop: reads work, a run is refused before it starts.
    if Command::new("setpriv").arg("--version").output().is_ok() {
        let shared = tempfile::tempdir().unwrap();
        std::fs::set_permissions(shared.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let h = shared.path().join("home");
        std::fs::create_dir(&h).unwrap();
        std::fs::set_permissions(&h, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        let copy = h.join("results.db");
        std::fs::write(&copy, &before).unwrap();
        std::fs::set_permissions(&copy, std::os::unix::fs::PermissionsExt::from_mode(0o444)).unwrap();
        let hs = h.to_string_lossy().into_owned();
        let as_nobody = |args: &[&str]| {
            let out = Command::new("setpriv")
                .args(["--reuid", "65534", "--regid", "65534", "--clear-groups", env!("CARGO_BIN_EXE_sizeup")])
                .args(["--home", &hs])
                .args(args)
                .output()
                .unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        let (code, stdout, err) = as_nobody(&["runs", "list"]);
        assert_eq!(code, Some(0), "{err}");
        assert!(stdout.contains("oltp_point_select"), "{stdout}");
        let (code, _, err) = as_nobody(&["run", "oltp_point_select", "--socket", "/nonexistent.sock"]);
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains(&format!("the results store {} is read-only (mode 444)", copy.display())), "{err}");
        assert_eq!(std::fs::read(&copy).unwrap(), before);
    }
}

/// Issue 47, defect 12: `--ssl-ca /dev/zero` read the endless file line by line until
/// memory ran out. Certificate and key files are read with a bound, and the error names
/// the option and the file, before any connection. The child's address space is
/// capped so the unbounded read of old fails fast instead of taking the box's memory.
#[test]
fn ssl_ca_dev_zero_defect_12_is_refused_at_once_naming_the_option() {
    let state = tempfile::tempdir().unwrap();
    let h = state.path().to_string_lossy().into_owned();
    let port = free_port().to_string();
    let cases: &[(&[&str], &str)] = &[
        (&["--ssl-ca", "/dev/zero"], "--ssl-ca /dev/zero"),
        (&["--ssl-mode", "REQUIRED", "--ssl-cert", "/dev/zero", "--ssl-key", "/dev/zero"], "--ssl-cert /dev/zero"),
        (&["--ssl-mode", "DISABLED", "--server-public-key-path", "/dev/zero"], "--server-public-key-path /dev/zero"),
        (&["--defaults-file", "/dev/zero"], "option file /dev/zero"),
    ];
    for (extra, names) in cases {
        let start = Instant::now();
        let mut cmd = format!(
            "ulimit -v 4000000; exec '{}' --home '{h}' run oltp_point_select --host 127.0.0.1 --port {port}",
            env!("CARGO_BIN_EXE_sizeup")
        );
        for a in *extra {
            cmd += &format!(" {a}");
        }
        let mut child =
            Command::new("sh").args(["-c", &cmd]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let code = child.wait().unwrap().code();
        assert!(start.elapsed() < Duration::from_secs(10), "{extra:?} took {:?}", start.elapsed());
        assert_eq!(code, Some(1), "{extra:?}: {err}");
        assert!(err.contains(names) && err.contains("more than") && err.contains("not a regular file"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
