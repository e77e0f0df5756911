//! sizeup against MySQL-protocol servers nobody here wrote (issue 46): dolthub's
//! go-mysql-server (a Go module; version 8.0.31, comment "Dolt") and mysql-mimic (PyPI;
//! 8.0.29), built by `scripts/third_party.sh` (test.sh runs it) into target/third-party/.
//! Each test starts its own server on a unix socket in a temporary directory and a free
//! loopback port, and kills it when it ends, whatever way it ends.
//!
//! What these servers lack is pinned as sizeup's message for it: go-mysql-server has
//! local_infile=OFF, drops table comments (sizeup's ownership mark), has no storage
//! engine variables and no `START TRANSACTION WITH CONSISTENT SNAPSHOT`; mysql-mimic
//! offers no LOAD DATA LOCAL, keeps no comments and refuses unknown session settings.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// A third-party server, killed on drop.
struct Server {
    child: Child,
    dir: tempfile::TempDir,
    socket: PathBuf,
    port: u16,
}

fn built(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/third-party").join(name);
    assert!(p.exists(), "{} is missing: run `bash scripts/third_party.sh` (scripts/test.sh does)", p.display());
    p
}

impl Server {
    fn start(mut cmd: Command, dir: tempfile::TempDir, socket: PathBuf) -> Server {
        // Its own words, for a failure to start.
        let log = dir.path().join("server.log");
        let stderr = std::fs::File::create(&log).unwrap();
        let mut child = cmd.stdout(Stdio::piped()).stderr(stderr).spawn().expect("the server starts");
        let said = || std::fs::read_to_string(&log).unwrap_or_default();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.split_whitespace().find_map(|w| w.strip_prefix("tcp=")).and_then(|p| p.parse().ok());
        let Some(port) = port else {
            let _ = child.kill();
            panic!("the server did not say it was ready ({line:?}): {}", said())
        };
        // The socket appears with the TCP listener (mysql-mimic's a moment after).
        for _ in 0..250 {
            if socket.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if !socket.exists() {
            let _ = child.kill();
            panic!("the server made no socket at {}: {}", socket.display(), said());
        }
        Server { child, dir, socket, port }
    }

    /// go-mysql-server with further flags (-user, -sql, -tls-cert, ...).
    fn gms(flags: &[&str]) -> Server {
        let dir = tempfile::Builder::new().prefix("sizeup-gms-").tempdir().unwrap();
        let socket = dir.path().join("gms.sock");
        let mut cmd = Command::new(built("gms-server"));
        cmd.arg("-socket").arg(&socket).args(flags);
        Server::start(cmd, dir, socket)
    }

    /// mysql-mimic with further flags (--user NAME:PASSWORD).
    fn mimic(flags: &[&str]) -> Server {
        let dir = tempfile::Builder::new().prefix("sizeup-mimic-").tempdir().unwrap();
        let socket = dir.path().join("mimic.sock");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/mimic/server.py");
        let mut cmd = Command::new(built("mimic/bin/python"));
        cmd.arg(script).arg("--socket").arg(&socket).args(flags);
        Server::start(cmd, dir, socket)
    }

    fn home(&self) -> String {
        self.dir.path().join("home").display().to_string()
    }

    /// sizeup (the binary) with this server's state directory; `target` are the
    /// connection options.
    fn sizeup(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_sizeup"))
            .args(["--home", &self.home()])
            .args(args)
            .env_remove("SIZEUP_HOME")
            .env_remove("MYSQL_PWD")
            .output()
            .unwrap()
    }

    fn socket_args(&self) -> Vec<String> {
        vec!["--socket".into(), self.socket.display().to_string(), "--user".into(), "root".into()]
    }

    fn json(&self, name: &str) -> String {
        self.dir.path().join(format!("{name}.json")).display().to_string()
    }

    /// SQL through the mariadb client as root over the socket; stdout.
    fn sql(&self, sql: &str) -> String {
        crate::common::mariadb_sql(&self.socket, sql)
    }

    /// A run as `user` with a wrong password over TCP (`extra`: TLS options): the
    /// server's refusal, named.
    fn wrong_password(&self, user: &str, extra: &[&str]) {
        let port = self.port.to_string();
        let target = ["--host", "127.0.0.1", "--port", &port, "--user", user, "--password", "wrong"];
        let out = fails(&self.sizeup(&[&["run", "oltp_point_select", "--time", "1"], &target[..], extra].concat()));
        assert!(out.to_lowercase().contains("access denied"), "{out}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[track_caller]
fn ok(o: &Output) -> String {
    let t = text(o);
    assert!(o.status.success(), "{t}");
    t
}

#[track_caller]
fn fails(o: &Output) -> String {
    let t = text(o);
    assert!(!o.status.success(), "expected a failure: {t}");
    t
}

fn with(base: &[String], more: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = more.iter().map(|s| s.to_string()).collect();
    v.extend_from_slice(base);
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn read_json(path: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The built-in OLTP workloads, as `sizeup run` names them.
const OLTP: [&str; 9] = [
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "oltp_complex",
];

/// Prepare with the default load method, every built-in OLTP workload in both protocols,
/// a sysbench Lua script, cleanup, and the facts recorded, on go-mysql-server.
#[test]
fn gms_prepare_run_every_oltp_workload_and_cleanup() {
    let s = Server::gms(&[]);
    let t = s.socket_args();
    let size = ["--tables", "2", "--table-size", "300"];
    // local_infile=OFF: INSERTs, said once, from the server's variable (not an error).
    let out = ok(&s.sizeup(&strs(&with(&t, &[&["prepare", "oltp_read_write"], &size[..]].concat()))));
    assert!(out.contains("note: loading by multi-row INSERTs: the server has local_infile=OFF"), "{out}");
    assert!(out.contains("prepared 2 table(s), 600 rows"), "{out}");
    for (i, w) in OLTP.iter().enumerate() {
        let ps = if i % 2 == 0 { "auto" } else { "disable" };
        let json = s.json(w);
        let args = with(
            &t,
            &[&["run", w, "--time", "1", "--threads", "2", "--db-ps-mode", ps, "--json", &json], &size[..]].concat(),
        );
        ok(&s.sizeup(&strs(&args)));
        let doc = read_json(&json);
        assert!(doc["summary"]["transactions"].as_u64().unwrap() > 0, "{w}: {doc}");
    }
    // The facts: the family from version_comment, what the server lacks named.
    let server = &read_json(&s.json("oltp_read_write"))["config"]["server"];
    assert_eq!(server["server_family"], "Dolt", "{server}");
    assert_eq!(server["tls"], "off", "{server}");
    // sysbench's own script on the same tables.
    let script = "/usr/share/sysbench/oltp_point_select.lua";
    let out = ok(&s.sizeup(&strs(&with(&t, &["run", script, "--time", "1", "--tables=2", "--table-size=300"]))));
    assert!(out.contains("transactions"), "{out}");
    let out = ok(&s.sizeup(&strs(&with(&t, &["cleanup", "oltp_read_write"]))));
    assert!(out.contains("dropped 2 table(s)"), "{out}");
    assert_eq!(s.sql("SHOW TABLES FROM sbtest").trim(), "", "cleanup leaves nothing, the marks table included");
}

/// A live capture of a server without mysql.slow_log (go-mysql-server) is refused in a
/// line before any setting changes, and writes no file.
#[test]
fn a_live_capture_of_a_server_without_a_slow_log_table_is_refused() {
    let s = Server::gms(&[]);
    let out = s.dir.path().join("gms.capture").to_string_lossy().into_owned();
    let said = fails(&s.sizeup(&strs(&with(&s.socket_args(), &["capture", "--for", "1s", "-o", &out]))));
    assert!(said.contains("keeps no mysql.slow_log table") && said.trim().lines().count() <= 2, "{said}");
    assert!(!said.contains("capturing the statements"), "nothing was turned on: {said}");
    assert!(!Path::new(&out).exists());
}

/// Issue 46: go-mysql-server drops a table's COMMENT (sizeup's mark) and ignores ALTER
/// TABLE ... COMMENT: sizeup disowned its own tables. The mark is checked after CREATE
/// and kept in sbtest.sizeup_marks instead; sizeup knows its tables again.
#[test]
fn ownership_mark_vanishing_is_kept_in_a_marks_table() {
    let s = Server::gms(&[]);
    let t = s.socket_args();
    let size = ["--tables", "2", "--table-size", "100"];
    let out = ok(&s.sizeup(&strs(&with(&t, &[&["prepare", "oltp_read_only"], &size[..]].concat()))));
    assert!(
        out.contains("does not keep table comments: sizeup records the tables it made in sbtest.sizeup_marks"),
        "{out}"
    );
    assert_eq!(s.sql("SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_NAME = 'sbtest1'").trim(), "");
    let marks = s.sql("SELECT name, mark FROM sbtest.sizeup_marks ORDER BY name");
    assert_eq!(marks, "sbtest1\tcreated by sizeup (oltp)\nsbtest2\tcreated by sizeup (oltp)\n");
    // Ours again: a second prepare points to cleanup, a run does not warn.
    let again = fails(&s.sizeup(&strs(&with(&t, &[&["prepare", "oltp_read_only"], &size[..]].concat()))));
    assert!(again.contains("already holds a prepared data set"), "{again}");
    let run = ok(&s.sizeup(&strs(&with(&t, &[&["run", "oltp_write_only", "--time", "1"], &size[..]].concat()))));
    assert!(!run.contains("not created by sizeup"), "{run}");
    // A table of the user's with sbtest's name is still not sizeup's.
    s.sql("CREATE TABLE sbtest.sbtest3 (id INT PRIMARY KEY)");
    let out = ok(&s.sizeup(&strs(&with(&t, &["cleanup", "oltp_read_only"]))));
    assert!(out.contains("dropped 2 table(s)"), "{out}");
    assert_eq!(s.sql("SHOW TABLES FROM sbtest").trim(), "sbtest3");
}

/// Issue 46: LOAD DATA LOCAL was chosen by error code alone. Now from the server's
/// local_infile and greeting: an explicit load-data says why it cannot; run and sweep
/// take --load-method for the tables they load themselves.
#[test]
fn load_method_is_chosen_from_what_the_server_says() {
    let s = Server::gms(&[]);
    let t = s.socket_args();
    let out = fails(&s.sizeup(&strs(&with(
        &t,
        &["prepare", "oltp_point_select", "--table-size", "100", "--load-method", "load-data"],
    ))));
    assert!(
        out.contains("--load-method load-data: the server has local_infile=OFF; use --load-method auto or insert"),
        "{out}"
    );
    assert_eq!(s.sql("SHOW TABLES FROM sbtest").trim(), "", "a refused load method leaves nothing");
    // run uses the tables as they are: the option is said to have no effect there.
    let run = ["run", "oltp_point_select", "--table-size", "100", "--time", "1", "--load-method", "insert"];
    let out = fails(&s.sizeup(&strs(&with(&t, &run))));
    assert!(out.contains("--load-method is for the tables sizeup loads itself"), "{out}");
    let sweep = [
        "sweep",
        "oltp_read_only",
        "--threads",
        "1,2",
        "--step-time",
        "1",
        "--warmup",
        "0",
        "--table-size",
        "100",
        "--load-method",
        "insert",
    ];
    // sweep loads missing tables itself, by the method asked for (no note: asked). Its
    // server is watched (found by its socket), so a busy box may starve it: no answer.
    let o = s.sizeup(&strs(&with(&t, &sweep)));
    let out = text(&o);
    let results = Path::new(&s.home()).join("results.db");
    assert!(o.status.success() || crate::common::last_study_starved(&results), "{out}");
    assert!(out.contains("multi-row INSERT") && !out.contains("local_infile"), "{out}");
    // With local_infile=1 go-mysql-server takes LOAD DATA LOCAL.
    let s = Server::gms(&["-local-infile"]);
    let t = s.socket_args();
    let out = ok(&s.sizeup(&strs(&with(&t, &["prepare", "oltp_point_select", "--table-size", "100"]))));
    assert!(out.contains("LOAD DATA LOCAL") && !out.contains("note: loading by"), "{out}");
}

/// Issue 46: the undo said "dropped; nothing is left half-done" while tables stayed, and
/// said nothing when none could be dropped. It now names what it dropped and what stayed,
/// read back from the server. An account that may create but not insert into sbtest's
/// tables fails the load; with the marks table writable the undo drops everything, without
/// it the tables cannot be marked and stay, named.
#[test]
fn undo_reports_what_it_dropped_and_what_stayed() {
    let s = Server::gms(&[
        "-sql",
        "CREATE USER 'loader'@'%' IDENTIFIED BY 'pw'",
        "-sql",
        "GRANT SELECT, CREATE, DROP, ALTER, DELETE ON sbtest.* TO 'loader'@'%'",
        "-sql",
        "CREATE USER 'marker'@'%' IDENTIFIED BY 'pw'",
        "-sql",
        "GRANT SELECT, CREATE, DROP, ALTER, DELETE ON sbtest.* TO 'marker'@'%'",
        "-sql",
        "GRANT INSERT ON sbtest.sizeup_marks TO 'marker'@'%'",
    ]);
    let as_user = |user: &str| {
        vec![
            "--socket".to_string(),
            s.socket.display().to_string(),
            "--user".into(),
            user.into(),
            "--password".into(),
            "pw".into(),
        ]
    };
    let prepare = ["prepare", "oltp_read_write", "--tables", "2", "--table-size", "100"];
    let out = fails(&s.sizeup(&strs(&with(&as_user("marker"), &prepare))));
    assert!(out.contains("Dropped the table(s) this prepare made: sbtest1, sbtest2. Nothing of it is left"), "{out}");
    assert_eq!(s.sql("SHOW TABLES FROM sbtest").trim(), "");
    let out = fails(&s.sizeup(&strs(&with(&as_user("loader"), &prepare))));
    assert!(out.contains("Still there: sbtest1, sbtest2: without sizeup's mark"), "{out}");
    assert!(!out.contains("Dropped"), "{out}");
    assert_eq!(s.sql("SHOW TABLES FROM sbtest").trim(), "sbtest1\nsbtest2");
}

/// Makes a CA and a server certificate for localhost and 127.0.0.1 signed by it.
fn certificates(d: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let run = |args: &[&str]| crate::common::openssl(d, args);
    crate::common::self_signed(d, "ca-key.pem", "ca.pem", "/CN=sizeup gms CA", &[]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "key.pem",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    std::fs::write(d.join("ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n").unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca-key.pem",
        "-CAcreateserial",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-extfile",
        "ext",
    ]);
    (d.join("ca.pem"), d.join("cert.pem"), d.join("key.pem"))
}

/// TLS REQUIRED and VERIFY_CA on a go-mysql-server that refuses plain connections, as a
/// mysql_native_password user and a caching_sha2_password user (its full authentication
/// needs TLS). Issue 46: the run recorded `tls: off` because these servers leave
/// Ssl_cipher empty; the TLS state is now what sizeup's own connection negotiated.
#[test]
fn tls_runs_record_their_own_negotiated_tls_on_gms() {
    let certs = tempfile::Builder::new().prefix("sizeup-gms-tls-").tempdir().unwrap();
    let (ca, cert, key) = certificates(certs.path());
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let s = Server::gms(&[
        "-tls-cert",
        &cert,
        "-tls-key",
        &key,
        "-require-tls",
        "-user",
        "native:Native-1:mysql_native_password",
        "-user",
        "sha2:Sha2-1:caching_sha2_password",
    ]);
    let port = s.port.to_string();
    let ca = ca.display().to_string();
    // The default (PREFERRED) and the modes that ask for TLS; each user.
    for (user, password) in [("native", "Native-1"), ("sha2", "Sha2-1")] {
        for mode in [&["--ssl-mode", "REQUIRED"][..], &["--ssl-mode", "VERIFY_CA", "--ssl-ca", &ca], &[]] {
            let db = format!("{user}{}", mode.len());
            let json = s.json(&db);
            let target =
                ["--host", "127.0.0.1", "--port", &port, "--user", user, "--password", password, "--database", &db];
            ok(&s.sizeup(&[&["prepare", "oltp_point_select", "--table-size", "100"], &target[..], mode].concat()));
            let args = [
                &["run", "oltp_point_select", "--table-size", "100", "--time", "1", "--json", &json],
                &target[..],
                mode,
            ]
            .concat();
            ok(&s.sizeup(&args));
            let server = &read_json(&json)["config"]["server"];
            assert_eq!(server["tls"], "on", "{user} {mode:?}: {server}");
            assert!(server["tls_version"].as_str().is_some_and(|v| v.starts_with("TLSv1.")), "{server}");
            assert!(!server["tls_cipher"].as_str().unwrap_or("").is_empty(), "{server}");
            ok(&s.sizeup(&[&["cleanup", "oltp_point_select"], &target[..], mode].concat()));
        }
    }
    // A wrong password is the server's refusal, named.
    s.wrong_password("sha2", &["--ssl-mode", "REQUIRED"]);
}

/// Issue 46: `check tpcc` failed with a bare SQL error. Each step is named; here tables
/// of TPC-C's names that are not TPC-C's. (TPC-C itself: see the README's server table;
/// go-mysql-server fails its own load.)
#[test]
fn check_tpcc_names_the_step_that_failed() {
    let tables = ["warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"];
    let mut flags = vec!["-sql".to_string(), "CREATE DATABASE tpcc".to_string()];
    for t in tables {
        flags.extend(["-sql".to_string(), format!("CREATE TABLE tpcc.{t} (id INT PRIMARY KEY)")]);
    }
    let s = Server::gms(&strs(&flags));
    let out = fails(&s.sizeup(&strs(&with(&s.socket_args(), &["check", "tpcc"]))));
    assert!(out.contains("reading customers' last names (the load's C_LAST constant): "), "{out}");
}

/// Issue 62, 8: `check tpcc` failed on Dolt at `START TRANSACTION WITH CONSISTENT
/// SNAPSHOT, READ ONLY` (error 1105 at "SNAPSHOT"). It falls back to the snapshot the
/// server takes and says which; on go-mysql-server's TPC-C tables (sizeup's own DDL,
/// empty: it cannot load them) the check reaches its conditions.
#[test]
fn check_tpcc_falls_back_to_the_snapshot_the_server_takes() {
    use sizeup::workload::tpcc::schema;
    let mut flags = vec!["-sql".to_string(), "CREATE DATABASE tpcc".to_string()];
    for t in schema::TABLES {
        flags
            .extend(["-sql".to_string(), schema::create_sql(t, "").replacen("CREATE TABLE ", "CREATE TABLE tpcc.", 1)]);
    }
    // One warehouse, so the check's own start (the run's data check) finds data.
    flags.extend(["-sql".to_string(), "INSERT INTO tpcc.warehouse (w_id, w_ytd) VALUES (1, 300000)".to_string()]);
    let s = Server::gms(&strs(&flags));
    let out = text(&s.sizeup(&strs(&with(&s.socket_args(), &["check", "tpcc"]))));
    assert!(!out.contains("starting the check's read-only snapshot"), "{out}");
    assert!(out.contains("note: the check reads "), "{out}");
    assert!(out.contains("(the server refused START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY: "), "{out}");
}

/// mysql-mimic: the handshake and a mysql_native_password login over TCP, the facts
/// (family, absent variables), a prepare without LOAD DATA LOCAL (not offered in its
/// greeting) and without the optional session settings it refuses, a text-protocol
/// run, and cleanup through the marks table (it keeps no comments).
#[test]
fn mimic_login_prepare_text_protocol_run_and_cleanup() {
    let s = Server::mimic(&["--user", "bench:Bench-1"]);
    let port = s.port.to_string();
    let target = ["--host", "127.0.0.1", "--port", &port, "--user", "bench", "--password", "Bench-1"];
    let size = ["--tables", "1", "--table-size", "50"];
    let out = ok(&s.sizeup(&[&["prepare", "oltp_point_select"], &size[..], &target[..]].concat()));
    assert!(out.contains("note: loading by multi-row INSERTs: the server does not offer LOAD DATA LOCAL"), "{out}");
    assert!(out.contains("sizeup records the tables it made in sbtest.sizeup_marks"), "{out}");
    assert!(out.contains("prepared 1 table(s), 50 rows"), "{out}");
    let json = s.json("mimic");
    let run = [
        &["run", "oltp_point_select", "--db-ps-mode", "disable", "--time", "1", "--json", &json],
        &size[..],
        &target[..],
    ]
    .concat();
    ok(&s.sizeup(&run));
    let doc = read_json(&json);
    assert!(doc["summary"]["transactions"].as_u64().unwrap() > 0, "{doc}");
    let server = &doc["config"]["server"];
    assert_eq!(server["server_family"], "mysql-mimic", "{server}");
    assert!(server["absent"].as_str().unwrap_or("").contains("innodb_buffer_pool_size"), "{server}");
    let out = ok(&s.sizeup(&[&["cleanup", "oltp_point_select"], &target[..]].concat()));
    assert!(out.contains("dropped 1 table(s)"), "{out}");
    // A wrong password: the server's refusal.
    s.wrong_password("bench", &[]);
}

/// Issue 46: `SET SESSION unique_checks=0, foreign_key_checks=0` failed the prepare and
/// `SET SESSION lock_wait_timeout = LEAST(...)` the cleanup on a server without them
/// (sysbench sends neither). They are optional: tried, and skipped with one note each.
#[test]
fn optional_session_settings_are_skipped_with_a_note() {
    let s = Server::mimic(&[]);
    let t = s.socket_args();
    let out =
        ok(&s.sizeup(&strs(&with(&t, &["prepare", "oltp_point_select", "--table-size", "20", "--threads", "3"]))));
    for setting in ["unique_checks=0", "foreign_key_checks=0"] {
        let note = format!("note: the server refused SET SESSION {setting} (Unknown variable");
        assert_eq!(out.matches(&note).count(), 1, "one note for {setting}, not one per loader: {out}");
    }
    let out = ok(&s.sizeup(&strs(&with(&t, &["cleanup", "oltp_point_select"]))));
    assert!(out.contains("note: the server refused a bounded lock_wait_timeout"), "{out}");
    assert!(out.contains("dropped 1 table(s)"), "{out}");
}

/// Issue 46: the built-in workloads counted every DML statement as a write; sysbench
/// counts one that changed no rows (a server that reports 0 affected rows, as this
/// mysql-mimic does) as "other", and so does sizeup now.
#[test]
fn writes_are_counted_by_sysbench_rule_on_a_server_reporting_no_affected_rows() {
    let s = Server::mimic(&[]);
    let t = s.socket_args();
    ok(&s.sizeup(&strs(&with(&t, &["prepare", "oltp_update_index", "--table-size", "20"]))));
    let json = s.json("updates");
    let run =
        ["run", "oltp_update_index", "--table-size", "20", "--time", "1", "--db-ps-mode", "disable", "--json", &json];
    ok(&s.sizeup(&strs(&with(&t, &run))));
    let summary = &read_json(&json)["summary"];
    assert!(summary["transactions"].as_u64().unwrap() > 0, "{summary}");
    assert_eq!(summary["writes"], 0, "{summary}");
    assert_eq!(summary["other"], summary["transactions"], "{summary}");
}

/// Where sysbench works, sizeup works: sysbench 1.0.20 prepares and runs on
/// go-mysql-server; sizeup runs its built-in oltp_read_write on sysbench's tables with the
/// same statement counts per transaction, and its cleanup leaves them alone (they are
/// not sizeup's).
#[test]
fn sysbench_and_sizeup_run_on_the_same_gms_tables() {
    let s = Server::gms(&[]);
    let socket = format!("--mysql-socket={}", s.socket.display());
    let sysbench = |cmd: &str| {
        let out = Command::new("sysbench")
            .args(["oltp_read_write", &socket, "--mysql-user=root", "--tables=1", "--table-size=300", "--time=1", cmd])
            .output()
            .expect("sysbench is installed (scripts/setup.sh)");
        ok(&out)
    };
    sysbench("prepare");
    let theirs = sysbench("run");
    let count = |name: &str| -> f64 {
        let line = theirs.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_else(|| panic!("{theirs}"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let per_tx = |n: f64| n / count("transactions:");
    let json = s.json("ours");
    let run = ["run", "oltp_read_write", "--tables", "1", "--table-size", "300", "--time", "1", "--json", &json];
    let refused = s.sizeup(&strs(&with(&s.socket_args(), &run)));
    let said = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(!refused.status.success() && said.contains("were not created by sizeup"), "{said}");
    let run = [&run[..], &["--write-foreign-tables"]].concat();
    ok(&s.sizeup(&strs(&with(&s.socket_args(), &run))));
    let sm = &read_json(&json)["summary"];
    let ours = |k: &str| sm[k].as_f64().unwrap() / sm["transactions"].as_f64().unwrap();
    assert_eq!(
        (ours("reads"), ours("writes"), ours("other")),
        (per_tx(count("read:")), per_tx(count("write:")), per_tx(count("other:")))
    );
    let out = ok(&s.sizeup(&strs(&with(&s.socket_args(), &["cleanup", "oltp_read_write"]))));
    assert!(!out.contains("dropped 1"), "{out}");
    assert_eq!(s.sql("SHOW TABLES FROM sbtest").trim(), "sbtest1", "sysbench's table stays");
    sysbench("cleanup");
}

/// One read/write run on go-mysql-server over loopback TCP (`flags`: the server's own),
/// its JSON and its printed words.
fn gms_run(flags: &[&str]) -> (Server, serde_json::Value, String) {
    let s = Server::gms(flags);
    let port = s.port.to_string();
    let t = ["--host", "127.0.0.1", "--port", &port, "--user", "root"];
    let size = ["--tables", "1", "--table-size", "300"];
    ok(&s.sizeup(&[&["prepare", "oltp_read_write"], &t[..], &size[..]].concat()));
    let json = s.json("field");
    let out = ok(&s.sizeup(
        &[&["run", "oltp_read_write", "--time", "2", "--threads", "2", "--json", &json], &t[..], &size[..]].concat(),
    ));
    let doc = read_json(&json);
    (s, doc, out)
}

/// Issue 62, 3: go-mysql-server reports `Innodb_*`, `Com_commit` and `Handler_read_*`
/// and keeps them at 0 while it reads rows and commits: they were printed and stored
/// as measured zeros ("buffer pool requests/misses 0.00 / 0.00 per s").
#[test]
fn counters_that_never_move_are_absent_not_zero() {
    let (s, doc, out) = gms_run(&[]);
    let status = &doc["summary"]["status"];
    for absent in [
        "buffer_pool_read_requests_per_s",
        "buffer_pool_reads_per_s",
        "row_lock_waits_per_s",
        "commits_per_s",
        "handler_read_per_s",
    ] {
        assert!(status.get(absent).is_none(), "{absent} stored: {status}");
    }
    // What it does keep is kept.
    assert!(status["threads_running"].as_f64().is_some(), "{status}");
    for iv in doc["intervals"].as_array().unwrap() {
        assert!(iv["status"].get("commits_per_s").is_none(), "{iv}");
    }
    let zeros = |text: &str, what: &str| text.lines().any(|l| l.contains(what) && l.contains("0.00 / 0.00"));
    assert!(!zeros(&out, "buffer pool requests/misses") && !zeros(&out, "commits / handler reads"), "{out}");
    let notes = doc["summary"]["notes"].to_string();
    assert!(notes.contains("Innodb_*, Com_commit, Handler_read_* but they stayed 0"), "{notes}");
    // And in the store: `runs show` reads no 0 back.
    let shown = ok(&s.sizeup(&["runs", "show", "1"]));
    assert!(!zeros(&shown, "buffer pool requests/misses") && !zeros(&shown, "commits / handler reads"), "{shown}");
}

/// Issue 62, 4: the same server reports a 128 MiB `innodb_buffer_pool_size` with no
/// InnoDB underneath: "the data is 1 % of the pool" was printed.
#[test]
fn non_innodb_pool_is_not_applicable() {
    let (_s, doc, out) = gms_run(&[]);
    let server = &doc["config"]["server"];
    assert!(server["innodb_unused"].as_str().is_some_and(|w| w.contains("no InnoDB underneath")), "{server}");
    assert!(out.contains("buffer pool: not applicable ("), "{out}");
    assert!(!out.contains("% of the pool"), "{out}");
}

/// Issue 62, 5: Dolt answers SHOW REPLICA STATUS with an idle row and no source, and
/// sizeup recorded `replica = yes`, lag 0.0 s. go-mysql-server answers the same with a
/// replica controller that has no source (`-idle-replica`, as Dolt's).
#[test]
fn a_replica_where_there_is_none() {
    let (s, doc, _) = gms_run(&["-idle-replica"]);
    // The server does answer with a row: the premise.
    assert!(s.sql("SHOW REPLICA STATUS").contains("No"), "{}", s.sql("SHOW REPLICA STATUS"));
    let server = &doc["config"]["server"];
    assert!(server.get("replica").is_none() && server.get("replication_lag_s").is_none(), "{server}");
    assert!(doc["summary"].get("max_lag_s").is_none_or(|v| v.is_null()), "{}", doc["summary"]);
}

/// Issue 62, 6: a server on this host that sizeup did not start was counted among
/// "other processes" (`cores used: server -`), which also switched off the check that
/// warns when other programs starve the server. Found by its loopback port, it is
/// watched as the server.
#[test]
fn a_server_on_this_host_is_watched_not_other_processes() {
    let (s, doc, out) = gms_run(&[]);
    let pid = s.child.id();
    let server = &doc["config"]["server"];
    let process = server["server_process"].as_str().unwrap_or_else(|| panic!("no server process: {server}"));
    assert!(process.starts_with(&format!("pid {pid} (gms-server)")), "{process}");
    assert!(process.contains(&format!("its loopback port {}", s.port)), "{process}");
    assert!(doc["summary"]["os"]["server_cores"].as_f64().is_some(), "{}", doc["summary"]["os"]);
    assert!(out.contains(&format!("note: the server is pid {pid} (gms-server)")), "{out}");
    // By its socket too.
    let json = s.json("by-socket");
    ok(&s.sizeup(&strs(&with(
        &s.socket_args(),
        &["run", "oltp_point_select", "--time", "1", "--tables", "1", "--table-size", "300", "--json", &json],
    ))));
    let by_socket = read_json(&json)["config"]["server"]["server_process"].as_str().unwrap_or_default().to_string();
    assert!(by_socket.contains(&format!("its socket {}", s.socket.display())), "{by_socket}");
}
