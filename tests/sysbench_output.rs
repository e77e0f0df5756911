//! sizeup's output read by what reads sysbench's: the same interval lines and the same
//! closing block, checked against sysbench 1.0.20 itself on the same private server
//! (numbers aside, line for line) and through the greps scripts use.

mod common;
use common::*;
use std::process::Command;

/// Lines from the first interval line to the end of the closing block, digits and
/// runs of spaces folded so two tools' outputs compare by shape.
fn shape(out: &str) -> Vec<String> {
    let start = out.lines().position(|l| l.starts_with("[ 1s ]")).expect("an interval line");
    let end = out.lines().position(|l| l.starts_with("    execution time (avg/stddev)")).expect("the fairness block");
    out.lines().skip(start).take(end + 1 - start).map(fold).collect()
}

fn fold(line: &str) -> String {
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
}
