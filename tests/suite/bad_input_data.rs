//! Bad command lines for the server and data commands (server start/stop/status,
//! prepare, cleanup, check, prewarm), run as the binary against a state directory with
//! a running managed server: each is refused with a non-zero exit and a one- or
//! two-line message, no panic or backtrace, and neither the state directory nor the
//! server changes.

use crate::common;
use common::*;
use std::process::{Command, Stdio};

const CASES: &[(&[&str], &str)] = &[
    // server start: ports, instances, sizes, --set
    (&["server", "start", "--base-port", "0"], "--base-port"),
    (&["server", "start", "--base-port", "65535", "--instances", "2"], "--base-port"),
    (&["server", "start", "--base-port", "80"], "1024"),
    (&["server", "start", "--base-port", "70000"], "70000"),
    (&["server", "start", "--base-port", "-1"], "-1"),
    (&["server", "start", "--instances", "0"], "--instances"),
    (&["server", "start", "--instances", "100000"], "--instances"),
    (&["server", "start", "--instances", "two"], "two"),
    (&["server", "start", "--buffer-pool", "lots"], "not a size"),
    (&["server", "start", "--buffer-pool", "1.5G"], "not a size"),
    (&["server", "start", "--log-file-size", "M"], "not a size"),
    (&["server", "start", "--flush-log-at-trx-commit", "3"], "0, 1 or 2"),
    (&["server", "start", "--set", "innodb_io_capacity"], "name=value"),
    (&["server", "start", "--set", "bad name=1"], "not a server option name"),
    (&["server", "start", "--set", "=1"], "not a server option name"),
    (&["server", "start", "--max-connections", "-5"], "-5"),
    // server stop / status
    (&["server", "stop", "--instance", "abc"], "abc"),
    (&["server", "stop", "--instance", "-1"], "-1"),
    (&["server", "status", "--bogus"], "--bogus"),
    (&["server", "restart"], "restart"),
    // prepare: workloads, sizes, system schemas
    (&["prepare", "oltp_read_wrte"], "unknown workload"),
    (&["prepare", "tpcc", "--warehouses", "0"], "--warehouses 0"),
    (&["prepare", "tpcc", "--warehouses", "-3"], "-3"),
    (&["prepare", "tpcc", "--warehouses", "99999999"], "--warehouses"),
    (&["prepare", "oltp_read_write", "--tables", "0"], "--tables"),
    (&["prepare", "oltp_read_write", "--table-size", "ten"], "ten"),
    (&["prepare", "oltp_read_write", "--database", "mysql"], "system schema"),
    (&["prepare", "tpcc", "--database", "information_schema"], "system schema"),
    (&["prepare", "oltp_read_write", "--database", "PERFORMANCE_SCHEMA"], "system schema"),
    (&["prepare", "tpcc", "--database", ""], "not a database name"),
    (&["prepare", "oltp_read_write", "--statement-timeout", "0"], "--statement-timeout must be at least 1"),
    (&["prepare", "tpcc", "--statement-timeout", "-1"], "--statement-timeout"),
    (&["prewarm", "oltp_read_write", "--statement-timeout", "0.5"], "--statement-timeout must be at least 1"),
    (&["check", "tpcc", "--statement-timeout", "0"], "--statement-timeout must be at least 1"),
    // cleanup, check, prewarm
    (&["cleanup", "nosuchworkload"], "unknown workload"),
    (&["cleanup", "oltp_read_write", "--database", "sys"], "system schema"),
    (&["check", "oltp_read_write"], "no consistency conditions"),
    (&["check", "tpcc", "--database", "mysql"], "system schema"),
    (&["prewarm", "tpcc"], "knows the OLTP workloads"),
    (&["prewarm", "oltp_read_write", "--database", "sys"], "system schema"),
    (&["prewarm", "oltp_read_write", "--threads", "-2"], "-2"),
];

/// What must not change: the state directory's entries and state file, the server's pid
/// and its list of databases.
fn snapshot(srv: &TestServer) -> (Vec<String>, String, Option<i32>, String) {
    let mut names: Vec<String> = std::fs::read_dir(srv.home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let state = std::fs::read_to_string(srv.home.path().join("instances.json")).unwrap();
    let pid = status(srv.home.path())[0].pid;
    (names, state, pid, srv.sql("SHOW DATABASES"))
}

#[test]
fn bad_server_and_data_command_lines_are_refused_and_change_nothing() {
    assert!(CASES.len() >= 15);
    let srv = TestServer::start();
    let before = snapshot(&srv);
    let mut wrong = Vec::new();
    for (args, says) in CASES {
        let out = Command::new(env!("CARGO_BIN_EXE_sizeup"))
            .arg("--home")
            .arg(srv.home.path())
            .args(*args)
            .env("RUST_BACKTRACE", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        // clap's usage errors end with a usage block and a --help hint; the message is
        // the error line itself (and its tip, if any).
        let message: Vec<&str> =
            err.lines().take_while(|l| !l.starts_with("Usage:")).filter(|l| !l.trim().is_empty()).collect();
        let problem = if out.status.success() {
            Some("accepted".to_string())
        } else if out.status.code() == Some(101) || err.contains("panicked") || err.contains("backtrace") {
            Some(format!("panicked: {err}"))
        } else if message.is_empty() || message.len() > 2 {
            Some(format!("message of {} lines: {err}", message.len()))
        } else if !err.contains(says) {
            Some(format!("does not say '{says}': {err}"))
        } else if snapshot(&srv) != before {
            Some("changed the state directory or the server".to_string())
        } else {
            None
        };
        if let Some(p) = problem {
            wrong.push(format!("{args:?}: {p}"));
        }
    }
    assert!(wrong.is_empty(), "{} of {} bad command lines:\n{}", wrong.len(), CASES.len(), wrong.join("\n"));
}
