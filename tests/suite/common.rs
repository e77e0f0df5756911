//! Test harness: a private MariaDB per test, started by sizeup itself in a temporary
//! state directory on a free loopback port, and stopped (and removed) when the test ends,
//! whatever way it ends.
#![allow(dead_code)]

use sizeup::cli::Cli;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct TestServer {
    pub home: tempfile::TempDir,
    pub socket: PathBuf,
    pub port: u16,
    pub pid: i32,
}

/// A free port below the kernel's ephemeral range (32768 and up), so no outgoing
/// connection of a parallel test can take it while a server restarts on it.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let spread = (std::process::id() % 400) as u16 * 25;
    loop {
        let n = NEXT.fetch_add(3, Ordering::Relaxed);
        let port = 20_000 + (spread + n) % 12_000;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

impl TestServer {
    pub fn start() -> TestServer {
        Self::start_many(1)
    }

    pub fn start_many(instances: u32) -> TestServer {
        Self::start_with(instances, &[])
    }

    /// Starts with further server options (`--set NAME=VALUE` each), e.g. TLS files.
    pub fn start_with(instances: u32, set: &[&str]) -> TestServer {
        let args: Vec<&str> = set.iter().flat_map(|s| ["--set", s]).collect();
        Self::start_args(instances, &args)
    }

    /// Starts with further `server start` arguments.
    pub fn start_args(instances: u32, extra: &[&str]) -> TestServer {
        let home = tempfile::Builder::new().prefix("sizeup-test-").tempdir().unwrap();
        let mut port = free_port();
        // Instance i listens on port + i: find a base whose neighbours are free too.
        while (1..instances).any(|i| std::net::TcpListener::bind(("127.0.0.1", port + i as u16)).is_err()) {
            port = free_port();
        }
        let h = home.path().to_string_lossy().into_owned();
        let n = instances.to_string();
        let p = port.to_string();
        let mut args = vec![
            "--home",
            &h,
            "server",
            "start",
            "--instances",
            &n,
            "--buffer-pool",
            "128M",
            "--log-file-size",
            "48M",
            "--base-port",
            &p,
            "--max-connections",
            "500",
        ];
        args.extend_from_slice(extra);
        let code = sizeup(&args);
        if !matches!(code, Ok(0)) {
            // Instances that did start must not outlive the test (their directory is about
            // to be deleted with `home`).
            let _ = sizeup(&["--home", &h, "server", "stop", "--purge"]);
            panic!("managed server did not start: {code:?}");
        }
        let st = status(home.path());
        TestServer { socket: st[0].socket.clone(), port, pid: st[0].pid.unwrap(), home }
    }

    pub fn home(&self) -> String {
        self.home.path().to_string_lossy().into_owned()
    }

    pub fn results(&self) -> PathBuf {
        self.home.path().join("results.db")
    }

    /// Runs sizeup with `--home` set to this server's state directory.
    pub fn sizeup(&self, args: &[&str]) -> Result<i32, sizeup::Error> {
        let h = self.home();
        let mut v = vec!["--home", h.as_str()];
        v.extend_from_slice(args);
        sizeup(&v)
    }

    /// Runs SQL with the mariadb client over the instance's socket; returns stdout.
    /// A holder's statements (`LOCK TABLES ...; SELECT SLEEP(n); UNLOCK TABLES`), which
    /// the test may end early with KILL QUERY: the rest still run, and the interrupted
    /// sleep's error is no failure.
    pub fn hold(&self, sql: &str) {
        let _ = Command::new("mariadb")
            .args(["--no-defaults", "-uroot", "-N", "-B", "--force"])
            .arg(format!("--socket={}", self.socket.display()))
            .args(["-e", sql])
            .output();
    }

    pub fn sql(&self, sql: &str) -> String {
        mariadb_sql(&self.socket, sql)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let h = self.home();
        let _ = sizeup(&["--home", &h, "server", "stop", "--purge"]);
    }
}

pub fn status(home: &Path) -> Vec<sizeup::server::Status> {
    sizeup::server::Manager::new(home).status().unwrap()
}

/// Runs SQL with the mariadb client as root over `socket` (any MySQL-protocol server's);
/// returns stdout.
pub fn mariadb_sql(socket: &Path, sql: &str) -> String {
    let out = Command::new("mariadb")
        .args(["--no-defaults", "-uroot", "-N", "-B"])
        .arg(format!("--socket={}", socket.display()))
        .args(["-e", sql])
        .output()
        .expect("the mariadb client is installed");
    assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Runs openssl in `dir`, which must succeed (test certificates).
pub fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl").current_dir(dir).args(args).output().expect("openssl is installed");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A self-signed certificate `cert` with its key `key` in `dir`, for subject `subj`
/// (e.g. "/CN=test CA"), valid two days; `extra`: further `openssl req` arguments.
pub fn self_signed(dir: &Path, key: &str, cert: &str, subj: &str, extra: &[&str]) {
    let base =
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", subj];
    openssl(dir, &[&base[..], extra].concat());
}

/// The whole tool in-process, as the binary runs it.
pub fn sizeup(args: &[&str]) -> Result<i32, sizeup::Error> {
    let mut v = vec!["sizeup"];
    v.extend_from_slice(args);
    let args = v.iter().map(std::ffi::OsString::from).collect();
    sizeup::run(Cli::parse_args(args).unwrap_or_else(|e| panic!("{e}")))
}

/// A study command's exit code is an answer: 0, or 1 when programs outside the test (a
/// parallel test's server, a busy box) starved the server at every level of the last
/// study in `results`, where "no answer" is the right answer (issue 61). Anything else
/// is a failure.
pub fn answered_or_starved(code: i32, results: &std::path::Path) -> bool {
    code == 0 || (code == 1 && last_study_starved(results))
}

/// Whether a study command answered: true on exit 0; false when other programs (a
/// busy box, `stress --cpu 1` beside the suite) starved every level of the last study
/// and it rightly answered nothing (exit 1): the caller then leaves out its checks of
/// the answer. Any other outcome fails the test, with `said` (its output, if kept).
#[track_caller]
pub fn answered(code: i32, results: &std::path::Path, said: &str) -> bool {
    if code == 0 {
        return true;
    }
    assert!(code == 1 && last_study_starved(results), "exit {code}, and not starved: {said}");
    false
}

/// The last stored study's every level was starved by other programs.
pub fn last_study_starved(results: &std::path::Path) -> bool {
    let Ok(store) = sizeup::store::Store::open(results) else { return false };
    let Some(row) = store.list_studies().ok().and_then(|mut v| v.pop()) else { return false };
    let row = store.load_study(row.id).unwrap_or(row);
    sizeup::study::spec::StudySpec::stored(&row).is_ok_and(|spec| sizeup::study::starved_only(&spec, &row))
}

/// Reads a `--json` result file.
/// The sizeup binary run on `s`'s state directory: its exit code, stdout and stderr.
pub fn run_in(s: &TestServer, args: &[&str]) -> (i32, String, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args(["--home", &s.home()])
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
