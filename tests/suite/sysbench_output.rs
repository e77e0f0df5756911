//! sysbench drop-in: sizeup's output read by what reads sysbench's (the same interval
//! lines and closing block, checked against sysbench 1.0.20 itself on the same private
//! server, numbers aside, line for line, and through the greps scripts use), and
//! sysbench's command lines (its verb order, 0.4's spellings, --db-ps-mode).

use crate::common;
use common::*;
use std::process::Command;

/// Lines from the first interval line to the end of the closing block, digits and
/// runs of spaces folded so two tools' outputs compare by shape. Each interval-line
/// shape counts once: sysbench itself sometimes prints one second's lines fewer than
/// the run has seconds (its reporter loses the race with the end of the run; CI saw
/// 2 of 3), and how many lines sizeup prints is asserted on its own below.
fn shape(out: &str) -> Vec<String> {
    let start = out.lines().position(|l| l.starts_with("[ 1s ]")).expect("an interval line");
    let end = out.lines().position(|l| l.starts_with("    execution time (avg/stddev)")).expect("the fairness block");
    let mut lines: Vec<String> = Vec::new();
    for line in out.lines().skip(start).take(end + 1 - start) {
        let folded = fold(line);
        if !(line.starts_with("[ ") && lines.contains(&folded)) {
            lines.push(folded);
        }
    }
    lines
}

/// A line with each number as N and runs of spaces as one.
pub fn fold(line: &str) -> String {
    let mut s = String::new();
    let mut in_num = false;
    for c in line.chars() {
        if c.is_ascii_digit() || (in_num && c == '.') {
            if !in_num {
                s.push('N');
            }
            in_num = true;
        } else {
            in_num = false;
            s.push(c);
        }
    }
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn sysbench_summary_and_interval_lines_parse_as_sysbench() {
    let s = TestServer::start();
    let sock = s.socket.display().to_string();
    assert_eq!(s.sizeup(&["prepare", "oltp_read_write", "--tables=1", "--table-size=2000"]).unwrap(), 0);
    let common = ["--tables=1", "--table-size=2000", "--threads=2", "--time=3", "--report-interval=1"];
    let sysbench = Command::new("sysbench")
        .args(["oltp_read_write", &format!("--mysql-socket={sock}"), "--mysql-user=root", "--mysql-db=sbtest"])
        .args(common)
        .arg("run")
        .output()
        .expect("sysbench is installed (scripts/setup.sh)");
    assert!(sysbench.status.success(), "{}", String::from_utf8_lossy(&sysbench.stderr));
    let ours = Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args(["--home", &s.home(), "run", "oltp_read_write"])
        .args(common)
        .output()
        .unwrap();
    assert!(ours.status.success(), "{}", String::from_utf8_lossy(&ours.stderr));
    let (theirs, out) = (String::from_utf8_lossy(&sysbench.stdout), String::from_utf8_lossy(&ours.stdout).into_owned());
    assert_eq!(shape(&out), shape(&theirs), "sizeup:\n{out}\nsysbench:\n{theirs}");

    // The greps users run on sysbench's output.
    let grab = |label: &str, field: usize| -> f64 {
        let line = out.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("no {label}"));
        let f: Vec<&str> = line.split_whitespace().collect();
        f[field].trim_start_matches('(').trim_end_matches('s').parse().unwrap_or_else(|_| panic!("{label}: {line}"))
    };
    let transactions = grab("transactions:", 1);
    let tps = grab("transactions:", 2);
    let queries = grab("queries:", 1);
    let p95 = grab("95th percentile:", 2);
    let total_time = grab("total time:", 2);
    assert!(transactions > 0.0 && queries >= 18.0 * transactions, "{out}");
    assert!((tps - transactions / total_time).abs() < 0.01 * tps, "{out}");
    assert!(p95 > 0.0);
    // Interval lines: [ Ns ] with whole seconds, no padding, no partial last line.
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("[ ")).collect();
    assert_eq!(lines.len(), 3, "{out}");
    for (i, l) in lines.iter().enumerate() {
        assert!(l.starts_with(&format!("[ {}s ] thds: 2 tps: ", i + 1)), "{l}");
    }

    // --rate: the open-loop queue line, with sysbench's words.
    let rate = ["--tables=1", "--table-size=2000", "--threads=2", "--time=2", "--report-interval=1", "--rate=50"];
    let sysbench = Command::new("sysbench")
        .args(["oltp_read_write", &format!("--mysql-socket={sock}"), "--mysql-user=root", "--mysql-db=sbtest"])
        .args(rate)
        .arg("run")
        .output()
        .unwrap();
    assert!(sysbench.status.success(), "{}", String::from_utf8_lossy(&sysbench.stderr));
    let ours = Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args(["--home", &s.home(), "run", "oltp_read_write"])
        .args(rate)
        .output()
        .unwrap();
    assert!(ours.status.success(), "{}", String::from_utf8_lossy(&ours.stderr));
    let (theirs, out_rate) = (String::from_utf8_lossy(&sysbench.stdout), String::from_utf8_lossy(&ours.stdout));
    assert_eq!(shape(&out_rate), shape(&theirs), "sizeup:\n{out_rate}\nsysbench:\n{theirs}");
    assert!(out_rate.lines().any(|l| l.starts_with("[ 1s ] queue length: ") && l.contains(", concurrency: ")));

    // `--json -`: standard output is the JSON document and nothing else.
    let json = Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args([
            "--home",
            &s.home(),
            "run",
            "oltp_read_write",
            "--tables=1",
            "--table-size=2000",
            "--time=1",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", String::from_utf8_lossy(&json.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("stdout is one JSON document");
    assert_eq!(doc["config"]["workload"], "oltp_read_write");
    assert!(!std::path::Path::new("-").exists(), "no file named -");
}

#[test]
fn sysbench_command_lines_run_as_sysbench_means_them() {
    let s = TestServer::start();
    let sock = format!("--mysql-socket={}", s.socket.display());
    // 0.4: --test=oltp (complex mode) with 0.4's option names, sysbench's verb order.
    let zero_four = ["--test=oltp", "--oltp-tables-count=1", "--oltp-table-size=500", "--mysql-db=old", &sock];
    let mut prepare = zero_four.to_vec();
    prepare.push("prepare");
    assert_eq!(s.sizeup(&prepare).unwrap(), 0);
    let json = s.home.path().join("old.json");
    let json_arg = format!("--json={}", json.display());
    let mut run = zero_four.to_vec();
    run.extend(["--max-time=1", "--num-threads=2", "--oltp-dist-type=uniform", &json_arg, "run"]);
    assert_eq!(s.sizeup(&run).unwrap(), 0);
    let doc = read_json(&json);
    assert_eq!(doc["config"]["workload"], "oltp_complex");
    assert_eq!(doc["config"]["run"]["threads"], 2);
    assert_eq!(doc["config"]["options"]["rand"]["rand_type"], "uniform");
    // --oltp-read-only outside the complex mode says what to use instead.
    let e = s.sizeup(&["oltp_read_write", "--oltp-read-only=on", &sock, "run"]).unwrap_err().to_string();
    assert!(e.contains("oltp_read_only"), "{e}");

    // --db-ps-mode=disable: the same transactions, sent as text (no statement prepared).
    let prepared = || -> u64 {
        let out = s.sql("SHOW GLOBAL STATUS LIKE 'Com_stmt_prepare'");
        out.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    assert_eq!(s.sizeup(&["prepare", "oltp_read_write", "--table-size=500"]).unwrap(), 0);
    // The control connection prepares a statement or two either way; the session's
    // nine oltp_read_write statements only in auto mode.
    let mut added = Vec::new();
    for mode in ["--db-ps-mode=auto", "--db-ps-mode=disable"] {
        let before = prepared();
        let args = ["oltp_read_write", "--table-size=500", "--time=1", mode, &json_arg, "run"];
        assert_eq!(s.sizeup(&args).unwrap(), 0);
        added.push(prepared() - before);
    }
    assert!(added[0] >= added[1] + 9, "prepares in auto and disable mode: {added:?}");
    let doc = read_json(&json);
    let summary = &doc["summary"];
    assert!(summary["transactions"].as_u64().unwrap() > 0);
    assert_eq!(summary["errors"], 0);
    assert_eq!(doc["config"]["options"]["text_protocol"], true);
}
