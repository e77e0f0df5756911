//! What the user reads in the terminal: interval lines in sysbench's shape, the
//! summary table, stored-run listings, server status, progress bars. Formatting only:
//! every function returns a String (tests read them) and callers print.

use crate::server::{State, Status};
use crate::stats::{per_second, Interval, Summary};
use crate::store::RunRow;
use std::fmt::Write;

/// One interval line, as sysbench prints them, plus backlog in open-loop runs.
pub fn interval_line(iv: &Interval, open_loop: bool) -> String {
    let mut s = format!(
        "[ {:>4}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{}%): {:.2} err/s: {:.2} reconn/s: {:.2}",
        fmt_t(iv.t),
        iv.threads,
        iv.tps,
        iv.qps,
        iv.reads_per_s,
        iv.writes_per_s,
        iv.other_per_s,
        iv.percentile,
        iv.percentile_ms,
        per_second(iv.errors, iv.duration),
        per_second(iv.reconnects, iv.duration),
    );
    if open_loop {
        let _ = write!(s, " backlog: {}", iv.backlog);
    }
    if iv.warmup {
        s.push_str("  (warm-up)");
    }
    s
}

/// A TPC-C interval line: NOPM, TPM and each type's p90.
pub fn tpcc_interval_line(iv: &Interval) -> String {
    use crate::workload::tpcc;
    let mut s = format!(
        "[ {:>4}s ] users: {} NOPM: {:.0} TPM: {:.0} p90 ms:",
        fmt_t(iv.t),
        iv.threads,
        tpcc::interval_nopm(iv),
        tpcc::interval_tpm(iv)
    );
    for (t, short) in iv.types.iter().zip(["no", "pay", "os", "dlv", "sl"]) {
        let _ = write!(s, " {short} {:.1}", t.p90_ms);
    }
    let _ = write!(
        s,
        " err/s: {:.2} reconn/s: {:.2}",
        per_second(iv.errors, iv.duration),
        per_second(iv.reconnects, iv.duration)
    );
    if iv.warmup {
        s.push_str("  (warm-up)");
    }
    s
}

fn fmt_t(t: f64) -> String {
    // The last interval ends when in-flight transactions finish, a hair after the clock.
    if (t - t.round()).abs() < 0.05 {
        format!("{}", t.round() as u64)
    } else {
        format!("{t:.1}")
    }
}

/// The end-of-run summary: a compact, aligned table.
pub fn summary_table(s: &Summary, title: &str) -> String {
    let mut out = format!("\n{title}\n");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(out, "  {k:<28} {v}");
    };
    row("measured (warm-up excluded)", format!("{:.1} s", s.seconds));
    if let (Some(nopm), Some(tpm)) = (s.nopm, s.tpm) {
        row("NOPM (new orders per min)", format!("{nopm:.0}"));
        row("TPM (committed per min)", format!("{tpm:.0}"));
    }
    row("transactions", format!("{} ({:.2} per s)", s.transactions, s.tps));
    row("queries", format!("{} ({:.2} per s)", s.queries, s.qps));
    row("  reads / writes / other", format!("{} / {} / {}", s.reads, s.writes, s.other));
    row("errors (retried)", s.errors.to_string());
    row("reconnects", s.reconnects.to_string());
    if s.rollbacks > 0 {
        row("rollbacks (expected)", s.rollbacks.to_string());
    }
    let l = &s.latency_ms;
    row("latency ms avg / p50", format!("{:.2} / {:.2}", l.avg, l.p50));
    row("latency ms p90 / p95 / p99", format!("{:.2} / {:.2} / {:.2}", l.p90, l.p95, l.p99));
    row("latency ms min / max", format!("{:.2} / {:.2}", l.min, l.max));
    if let Some(c) = s.client_cpu_us_per_txn {
        row("client CPU per transaction", format!("{c:.1} us"));
    }
    if let Some(c) = s.server_cpu_us_per_txn {
        row("server CPU per transaction", format!("{c:.1} us"));
    }
    if s.max_backlog > 0 {
        row("largest backlog", format!("{} transactions", s.max_backlog));
    }
    if s.types.len() > 1 {
        let _ = writeln!(
            out,
            "\n  {:<14} {:>9} {:>8} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}  p90 limit",
            "type", "count", "rollback", "errors", "avg ms", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "max ms"
        );
        for t in &s.types {
            let l = &t.latency_ms;
            let limit = match (t.p90_limit_ms, t.p90_within_limit) {
                (Some(ms), Some(ok)) => format!("{} {:.0} s", if ok { "within" } else { "OVER" }, ms / 1000.0),
                _ => "-".into(),
            };
            let _ = writeln!(
                out,
                "  {:<14} {:>9} {:>8} {:>6} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>9.2}  {limit}",
                t.name, t.transactions, t.rollbacks, t.errors, l.avg, l.p50, l.p90, l.p95, l.p99, l.max
            );
        }
    }
    out
}

/// A latency histogram in the shape sysbench prints with --histogram: one line per
/// non-empty bucket (buckets 10 % wide), value in milliseconds, a bar, the count.
pub fn latency_histogram(h: &hdrhistogram::Histogram<u64>) -> String {
    let mut out = String::from("Latency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n");
    if h.is_empty() {
        return out;
    }
    let buckets: Vec<(f64, u64)> = h
        .iter_log(1, 1.1)
        .filter(|v| v.count_since_last_iteration() > 0)
        .map(|v| (v.value_iterated_to() as f64 / 1000.0, v.count_since_last_iteration()))
        .collect();
    let most = buckets.iter().map(|b| b.1).max().unwrap_or(1);
    for (value, count) in buckets {
        let stars = ((count as f64 / most as f64) * 40.0).ceil() as usize;
        let _ = writeln!(out, "{value:>12.3} |{:<40} {count}", "*".repeat(stars));
    }
    out
}

pub fn runs_table(rows: &[RunRow]) -> String {
    if rows.is_empty() {
        return "no runs stored yet\n".into();
    }
    let mut out = format!(
        "{:>5}  {:<20}  {:<22} {:>7} {:>10} {:>9}  {:<11}  target\n",
        "id", "started", "workload", "threads", "tps", "p95 ms", "status"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:>5}  {:<20}  {:<22} {:>7} {:>10} {:>9}  {:<11}  {}",
            r.id,
            r.started_at,
            r.workload,
            r.threads.map_or("-".into(), |t| t.to_string()),
            r.tps.map_or("-".into(), |t| format!("{t:.2}")),
            r.p95_ms.map_or("-".into(), |t| format!("{t:.2}")),
            r.status,
            r.target
        );
    }
    out
}

pub fn server_table(status: &[Status]) -> String {
    if status.is_empty() {
        return "no managed instances (start one with `sizeup server start`)\n".into();
    }
    let mut out = format!("{:>8}  {:<8} {:>8} {:>6}  {:<5} socket\n", "instance", "state", "pid", "port", "user");
    for s in status {
        let state = match s.state {
            State::Running => "running",
            State::Stopped => "stopped",
            State::Crashed => "CRASHED",
        };
        let _ = writeln!(
            out,
            "{:>8}  {:<8} {:>8} {:>6}  {:<5} {}",
            s.index,
            state,
            s.pid.map_or("-".into(), |p| p.to_string()),
            s.port,
            s.user,
            s.socket.display()
        );
    }
    out
}

/// A progress bar on stderr; indicatif hides it when stderr is not a terminal.
pub fn rows_bar(total: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {human_pos}/{human_len} rows  {per_sec}  ETA {eta}")
            .expect("static template"),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Recorder;

    #[test]
    fn histogram_lines_hold_every_count() {
        let mut h = crate::stats::new_histogram();
        for v in [100, 100, 105, 2000, 2000, 2000, 50_000] {
            h.record(v).unwrap();
        }
        let text = latency_histogram(&h);
        let counts: u64 = text.lines().skip(2).map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap()).sum();
        assert_eq!(counts, 7);
        // The fullest bucket (2 ms, 3 values) has the full bar.
        assert!(text.lines().any(|l| l.contains(&"*".repeat(40)) && l.trim_end().ends_with(" 3")), "{text}");
    }

    #[test]
    fn interval_line_has_sysbench_shape() {
        // 10 ms recorded reads back as 10.01: HDR reports the top of the value's
        // 3-significant-figure bucket (10,000-10,007 us).
        let mut r = Recorder::new(1);
        for _ in 0..100 {
            r.transaction(0, 10_000, false);
        }
        r.queries.reads = 1400;
        r.queries.writes = 400;
        r.queries.other = 200;
        let iv = Interval::from_recorder(&r, &["x".into()], 10.0, 1.0, false, 8, 95.0);
        assert_eq!(
            interval_line(&iv, false),
            "[   10s ] thds: 8 tps: 100.00 qps: 2000.00 (r/w/o: 1400.00/400.00/200.00) lat (ms,95%): 10.01 err/s: 0.00 reconn/s: 0.00"
        );
    }
}
