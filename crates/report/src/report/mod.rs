//! What the user reads in the terminal: interval lines in sysbench's shape, the
//! summary table, stored-run listings, server status, progress bars. Formatting only:
//! every function returns a String (tests read them) and callers print.

use crate::server::{State, Status};
use crate::stats::{per_second, Interval, Summary};
use crate::store::RunRow;
use std::fmt::Write;

pub mod answer;
pub mod capacity;
pub mod compare;
/// ANSI colour for terminal output: only when stdout is a terminal and NO_COLOR is
/// unset, so files, pipes and tests get plain text.
pub fn paint(text: &str, code: &str) -> String {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let on = *ON.get_or_init(|| {
        use std::io::IsTerminal;
        std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
    });
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

pub mod export;
pub mod html;
pub mod memory;
pub mod plan;
pub mod svg;

/// One interval line, as sysbench prints them, plus backlog in open-loop runs.
/// What an interval line adds when the server was lost or stalled in it, or the client
/// counted it off schedule.
pub fn fault_tag(iv: &Interval) -> &'static str {
    if iv.outage {
        " [server lost]"
    } else if iv.stall {
        " [stall]"
    } else if iv.client_late_s.is_some() {
        " [client late]"
    } else {
        ""
    }
}

pub fn interval_line(iv: &Interval, open_loop: bool) -> String {
    // sysbench 1.0.20's db_report_intermediate, byte for byte, so its parsers read it.
    let mut s = format!(
        "[ {:.0}s ] thds: {} tps: {:4.2} qps: {:4.2} (r/w/o: {:4.2}/{:4.2}/{:4.2}) lat (ms,{}%): {:4.2} err/s: {:4.2} reconn/s: {:4.2}",
        iv.t,
        iv.threads,
        iv.tps,
        iv.qps,
        iv.reads_per_s,
        iv.writes_per_s,
        iv.other_per_s,
        iv.percentile.round() as u32,
        iv.percentile_ms,
        per_second(iv.errors, iv.duration),
        per_second(iv.reconnects, iv.duration),
    );
    if open_loop {
        // sysbench prints its queue on a line of its own (db_report_intermediate's words).
        let _ = write!(s, "\n[ {:.0}s ] queue length: {}, concurrency: {}", iv.t, iv.backlog, iv.concurrency);
    }
    if iv.warmup {
        s.insert_str(0, "warm-up ");
    }
    s
}

/// What sysbench prints before a run's first interval (its header and
/// `print_run_mode`), line for line.
pub fn sysbench_header(spec: &crate::exec::RunSpec, interval_lines: bool, rand_seed: u64) -> String {
    let mut o = format!("{}\n\n", crate::workload::script::version_line());
    let _ = writeln!(o, "Running the test with following options:");
    let _ = writeln!(o, "Number of threads: {}", spec.threads);
    if let Some(rate) = spec.rate {
        let _ = writeln!(o, "Target transaction rate: {}/sec", rate as u64);
    }
    if interval_lines {
        let _ = writeln!(o, "Report intermediate results every {} second(s)", spec.interval.as_secs());
    }
    match rand_seed {
        0 => o.push_str("Initializing random number generator from current time\n\n"),
        seed => {
            let _ = write!(o, "Initializing random number generator from seed ({}).\n\n", seed as i32);
        }
    }
    o.push_str("\nInitializing worker threads...\n\nThreads started!\n\n");
    o
}

/// sysbench's latency histogram (`--histogram`), as it prints it before its closing
/// block: 1024 buckets spaced evenly in log(ms) from 0.001 ms to 100 s, each row the
/// bucket's value, up to 40 stars against the fullest bucket, and its count.
pub fn sysbench_histogram(h: &hdrhistogram::Histogram<u64>) -> String {
    const SIZE: usize = 1024;
    let (min, max) = (1e-3f64, 1e5f64);
    let deduct = min.ln();
    let mult = (SIZE - 1) as f64 / (max.ln() - deduct);
    let mut buckets = vec![0u64; SIZE];
    for v in h.iter_recorded() {
        let ms = v.value_iterated_to() as f64 / 1000.0;
        let i = ((ms.ln() - deduct) * mult + 0.5).floor().clamp(0.0, (SIZE - 1) as f64) as usize;
        buckets[i] += v.count_at_value();
    }
    let mut o = String::from("Latency histogram (values are in milliseconds)\n");
    let most = buckets.iter().copied().max().unwrap_or(0);
    if most > 0 {
        o.push_str("       value  ------------- distribution ------------- count\n");
        for (i, &n) in buckets.iter().enumerate().filter(|(_, n)| **n > 0) {
            let stars = (n as f64 * 40.0 / most as f64 + 0.5).floor() as usize;
            let _ = writeln!(o, "{:12.3} |{:<40} {n}", (i as f64 / mult + deduct).exp(), "*".repeat(stars));
        }
    }
    o.push_str(" \n");
    o
}

/// sysbench 1.0.20's closing block (db_report_cumulative and sb_report_cumulative):
/// the same labels, numbers and layout, so scripts that parse sysbench's output read
/// sizeup's. Figures are the steady state's (warm-up excluded, as sysbench's
/// --warmup-time does); `percentile_ms` is the run's `--percentile` latency.
pub fn sysbench_summary(s: &Summary, percentile: f64, percentile_ms: f64) -> String {
    let secs = s.seconds.max(1e-9);
    let per = |n: u64| n as f64 / secs;
    let mut o = String::new();
    // A script that sent no SQL has no SQL block, as sysbench's non-database tests.
    let sql = s.reads + s.writes + s.other + s.errors + s.reconnects > 0;
    if !sql {
        return o + &general_statistics(s, percentile, percentile_ms);
    }
    let _ = writeln!(o, "SQL statistics:");
    let _ = writeln!(o, "    queries performed:");
    let _ = writeln!(o, "        read:                            {}", s.reads);
    let _ = writeln!(o, "        write:                           {}", s.writes);
    let _ = writeln!(o, "        other:                           {}", s.other);
    let _ = writeln!(o, "        total:                           {}", s.reads + s.writes + s.other);
    let _ = writeln!(
        o,
        "    transactions:                        {:<6} ({:.2} per sec.)",
        s.transactions,
        per(s.transactions)
    );
    let q = s.reads + s.writes + s.other;
    let _ = writeln!(o, "    queries:                             {:<6} ({:.2} per sec.)", q, per(q));
    let _ = writeln!(o, "    ignored errors:                      {:<6} ({:.2} per sec.)", s.errors, per(s.errors));
    let _ =
        writeln!(o, "    reconnects:                          {:<6} ({:.2} per sec.)", s.reconnects, per(s.reconnects));
    let _ = writeln!(o);
    o + &general_statistics(s, percentile, percentile_ms)
}

/// sysbench's closing block from "General statistics" on.
fn general_statistics(s: &Summary, percentile: f64, percentile_ms: f64) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "General statistics:");
    let _ = writeln!(o, "    total time:                          {:.4}s", s.seconds);
    let _ = writeln!(o, "    total number of events:              {}", s.transactions);
    let _ = writeln!(o);
    let l = &s.latency_ms;
    let _ = writeln!(o, "Latency (ms):");
    let _ = writeln!(o, "         min: {:>39.2}", l.min);
    let _ = writeln!(o, "         avg: {:>39.2}", l.avg);
    let _ = writeln!(o, "         max: {:>39.2}", l.max);
    let _ = writeln!(o, "        {:>3}th percentile: {:>27.2}", percentile.round() as u32, percentile_ms);
    let Some(f) = &s.fairness else {
        let _ = writeln!(o);
        let _ = writeln!(o, "Threads fairness: not known (the run ended before every connection reported)");
        let _ = writeln!(o);
        return o;
    };
    let _ = writeln!(o, "         sum: {:>39.2}", f.latency_sum * 1000.0);
    let _ = writeln!(o);
    let _ = writeln!(o, "Threads fairness:");
    let _ = writeln!(o, "    events (avg/stddev):           {:.4}/{:3.2}", f.events_avg, f.events_stddev);
    let _ = writeln!(o, "    execution time (avg/stddev):   {:.4}/{:3.2}", f.time_avg, f.time_stddev);
    let _ = writeln!(o);
    o
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
        match (s.client_cpu_scope, s.process_cpu_us_per_txn) {
            (crate::stats::CpuScope::Group, Some(p)) => {
                row("client CPU per transaction", format!("{c:.1} us (this group's threads; whole process {p:.1} us)"))
            }
            _ => row("client CPU per transaction", format!("{c:.1} us (whole process)")),
        }
    }
    if let Some(c) = s.server_cpu_us_per_txn {
        row("server CPU per transaction", format!("{c:.1} us"));
    }
    if s.max_backlog > 0 {
        row("largest backlog", format!("{} transactions", s.max_backlog));
    }
    if let Some(os) = &s.observed.os {
        row(
            "host CPU % usr/sys/iowait/idle",
            format!(
                "{:.1} / {:.1} / {:.1} / {:.1}  (irq+soft {:.1}, steal {:.1})",
                os.usr,
                os.sys,
                os.iowait,
                os.idle,
                os.irq + os.soft,
                os.steal
            ),
        );
        let server = os.server_cores.map_or("-".into(), |c| format!("{c:.2}"));
        row("cores used: server / sizeup", format!("{server} / {:.2}", os.client_cores));
        if let (Some(r), Some(w), Some(rb), Some(wb)) =
            (os.disk_reads_per_s, os.disk_writes_per_s, os.disk_read_bytes_per_s, os.disk_write_bytes_per_s)
        {
            row("disk reads / writes per s", format!("{r:.0} / {w:.0}  ({:.1} / {:.1} MB/s)", rb / 1e6, wb / 1e6));
        }
        if let Some(w) = os.watts {
            let per = s.nopm.map_or(format!("{:.2} tps/W", s.tps / w), |n| format!("{:.1} NOPM/W", n / w));
            row("power", format!("{w:.0} W ({}), {per}", os.power_source));
        }
        if let Some(h) = &os.server_host {
            row("server host (node_exporter)", h.words());
        }
    }
    for (k, v) in status_rows(s) {
        row(k, v);
    }
    // Round robin per connection: what each server served.
    for (i, n) in s.nodes.iter().enumerate() {
        let mut v = format!("{} connection(s), {:.2} tps", n.connections, n.tps);
        if let Some(c) = n.server_cores {
            let _ = write!(v, ", server {c:.2} cores");
        }
        if let Some(l) = n.max_lag_s {
            let _ = write!(v, ", lag up to {l:.0} s");
        }
        if let Some(c) = n.conflicts {
            let _ = write!(v, ", {c} conflicts");
        }
        let _ = writeln!(out, "  {:<28} {v}", format!("node {i} ({})", n.node));
    }
    // Agents: what each drove, from its own histogram, and its host's CPU.
    for a in &s.agents {
        let mut v = format!("{} connection(s), {:.2} tps, p99 {:.2} ms", a.connections, a.tps, a.latency_ms.p99);
        if let Some(c) = a.client_cores {
            let _ = write!(v, ", {c:.2} of {} CPUs", a.cpus);
        }
        if let Some(b) = a.busiest_thread {
            let _ = write!(v, ", busiest thread {:.0} %", b * 100.0);
        }
        if let Some(l) = a.lag_s.filter(|&l| l > 0.0) {
            let _ = write!(v, ", {l:.2} s behind at worst");
        }
        if a.missed_arrivals > 0 {
            let _ = write!(v, ", {} arrivals missed", a.missed_arrivals);
        }
        if a.lost {
            v.push_str(", LOST");
        }
        let _ = writeln!(out, "  {:<28} {v}", format!("agent {}", a.agent));
    }
    for n in &s.observed.notes {
        let _ = writeln!(out, "  {}", paint(&format!("note: {n}"), "33"));
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
                (Some(ms), Some(ok)) => {
                    format!("{} {:.0} s", if ok { "within".to_string() } else { paint("OVER", "1;31") }, ms / 1000.0)
                }
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

/// A rate as the summary prints it: "-" when it was not measured (never 0).
pub fn figure(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// The server's status figures of a summary (steady-state means), as label and value
/// rows, with per-transaction figures where they say something (misses, lock waits);
/// first a row saying how little of the `measured` seconds they cover, when readings
/// were missing for a tenth of it or more.
pub fn status_rows(s: &Summary) -> Vec<(&'static str, String)> {
    let Some(st) = &s.observed.status else { return Vec::new() };
    let tps = s.tps;
    let per_txn = |v: Option<f64>| v.filter(|_| tps > 0.0).map(|v| v / tps);
    let small = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
    let mut rows = Vec::new();
    if st.seconds < 0.9 * s.seconds {
        rows.push((
            "server status read over",
            format!("{:.1} of {:.1} s (intervals without a reading left out)", st.seconds, s.seconds),
        ));
    }
    if st.buffer_pool_read_requests_per_s.is_some() || st.buffer_pool_reads_per_s.is_some() {
        let hit = st.buffer_pool_hit_ratio.map_or("-".into(), |h| format!("{:.2} %", h * 100.0));
        rows.push((
            "buffer pool requests/misses",
            format!(
                "{} / {} per s  (hit ratio {hit}; {} misses per transaction)",
                figure(st.buffer_pool_read_requests_per_s),
                figure(st.buffer_pool_reads_per_s),
                small(per_txn(st.buffer_pool_reads_per_s))
            ),
        ));
    }
    if st.row_lock_waits_per_s.is_some() || st.row_lock_time_ms_per_s.is_some() {
        rows.push((
            "row lock waits per s",
            format!(
                "{}  ({} ms waited per s; {} waits per transaction)",
                figure(st.row_lock_waits_per_s),
                figure(st.row_lock_time_ms_per_s),
                small(per_txn(st.row_lock_waits_per_s))
            ),
        ));
    }
    if st.data_reads_per_s.is_some() || st.data_writes_per_s.is_some() || st.data_fsyncs_per_s.is_some() {
        rows.push((
            "InnoDB reads/writes/fsyncs",
            format!(
                "{} / {} / {} per s",
                figure(st.data_reads_per_s),
                figure(st.data_writes_per_s),
                figure(st.data_fsyncs_per_s)
            ),
        ));
    }
    if st.buffer_pool_wait_free_per_s.is_some() || st.log_waits_per_s.is_some() {
        rows.push((
            "free-page / log-buffer waits",
            format!("{} / {} per s", figure(st.buffer_pool_wait_free_per_s), figure(st.log_waits_per_s)),
        ));
    }
    if st.threads_running.is_some() {
        rows.push(("server threads running", figure(st.threads_running)));
    }
    if st.commits_per_s.is_some() || st.handler_read_per_s.is_some() {
        rows.push((
            "commits / handler reads",
            format!("{} / {} per s", figure(st.commits_per_s), figure(st.handler_read_per_s)),
        ));
    }
    rows
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

/// "run 7" or "runs 43, 44" (in order, whatever order the step's instances ended in).
pub fn run_ids(runs: &[i64]) -> String {
    let mut ids = runs.to_vec();
    ids.sort_unstable();
    let list: Vec<String> = ids.iter().map(|r| r.to_string()).collect();
    format!("run{} {}", if ids.len() > 1 { "s" } else { "" }, list.join(", "))
}

pub fn runs_table(rows: &[RunRow]) -> String {
    if rows.is_empty() {
        return "no runs stored yet\n".into();
    }
    // A run whose server was lost or stalled says so where its tps is read.
    let status = |r: &RunRow| match r.fault {
        Some(f) => format!("{}, {f}", r.status),
        None => r.status.to_string(),
    };
    let w = rows.iter().map(|r| r.workload.chars().count()).max().unwrap_or(0).max(22);
    let sw = rows.iter().map(|r| status(r).len()).max().unwrap_or(0).max(11);
    let mut out = format!(
        "{:>5}  {:<20}  {:<w$} {:>7} {:>10} {:>9}  {:<sw$}  target\n",
        "id", "started", "workload", "threads", "tps", "p95 ms", "status"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:>5}  {:<20}  {:<w$} {:>7} {:>10} {:>9}  {:<sw$}  {}",
            r.id,
            r.started_at,
            r.workload,
            r.threads.map_or("-".into(), |t| t.to_string()),
            r.tps.map_or("-".into(), |t| format!("{t:.2}")),
            r.p95_ms.map_or("-".into(), |t| format!("{t:.2}")),
            status(r),
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
            State::Running if s.paused => "PAUSED",
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

/// `cluster status`: one line per node (role, state, address, readiness), then the lab's
/// label when there is one.
pub fn cluster_table(c: &crate::server::cluster::Cluster, status: &[crate::server::cluster::NodeStatus]) -> String {
    let mut out = format!(
        "{} cluster {}: {} node(s) running, {} ready\n",
        c.kind.name(),
        c.name,
        status.iter().filter(|s| s.node.state == State::Running).count(),
        status.iter().filter(|s| s.readiness.ready()).count()
    );
    let _ = writeln!(
        out,
        "{:>4}  {:<7}  {:<8} {:>8}  {:<21}  {:<5} detail",
        "node", "role", "state", "pid", "address", "ready"
    );
    for s in status {
        let n = &s.node;
        let state = match n.state {
            State::Running => "running",
            State::Stopped => "stopped",
            State::Crashed => "CRASHED",
        };
        let detail = s.readiness.describe();
        let _ = writeln!(
            out,
            "{:>4}  {:<7}  {:<8} {:>8}  {:<21}  {:<5} {detail}",
            n.index,
            n.role.name(),
            state,
            n.pid.map_or("-".into(), |p| p.to_string()),
            format!("{}:{}", n.host, n.port),
            if s.readiness.ready() { "yes" } else { "no" },
        );
    }
    if let Some(label) = c.label() {
        let _ = writeln!(out, "lab: {label}");
        let running = status.iter().filter(|s| s.node.state == State::Running);
        for (i, l) in running.filter_map(|s| s.node.lab.as_ref().map(|l| (s.node.index, l))) {
            let _ = writeln!(
                out,
                "  node {i}: netns {}, address {}, CPU quota {}, link delay {}",
                l.netns.as_deref().unwrap_or("-"),
                l.address,
                l.cpu_quota.map_or("none".into(), |q| format!("{q} cores")),
                l.link_delay_ms.map_or("none".into(), |d| format!(
                    "{d} ms{}",
                    l.link_jitter_ms.map_or(String::new(), |j| format!(" ± {j} ms"))
                )),
            );
        }
    }
    out
}

/// Every progress bar of the process: parallel loads (one per instance in `scale`) and a
/// study's bar each get a line of their own instead of drawing over each other.
/// indicatif hides them all when stderr is not a terminal.
static BARS: std::sync::LazyLock<indicatif::MultiProgress> = std::sync::LazyLock::new(indicatif::MultiProgress::new);

/// Runs `print` with the progress bars lifted, so its lines do not tear a bar being drawn.
pub fn above_bars<R>(print: impl FnOnce() -> R) -> R {
    BARS.suspend(print)
}

/// A line on stderr above the progress bars.
pub fn note(line: &str) {
    above_bars(|| eprintln!("{line}"));
}

/// A load's progress: rows, rate and ETA, after `label` (what is being loaded where).
pub fn rows_bar(total: u64, label: &str) -> indicatif::ProgressBar {
    let bar = BARS.add(indicatif::ProgressBar::new(total));
    // An unknown total (a script's prepare): rows and rate only.
    let template = if total == 0 {
        "{prefix} {human_pos} rows  {per_sec}"
    } else {
        "{prefix} {bar:40} {human_pos}/{human_len} rows  {per_sec}  ETA {eta}"
    };
    bar.set_style(indicatif::ProgressStyle::with_template(template).expect("static template"));
    bar.set_prefix(label.to_string());
    bar
}

/// The study's progress: step k of n, elapsed, and the current step's live figure.
pub fn study_bar(steps: u64) -> indicatif::ProgressBar {
    let bar = BARS.add(indicatif::ProgressBar::new(steps));
    bar.set_style(
        indicatif::ProgressStyle::with_template("[{elapsed_precise}] step {pos}/{len} {msg}").expect("static template"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(500));
    bar
}

/// One finished step, as a line that stays on screen.
#[allow(clippy::too_many_arguments)]
pub fn step_line(
    k: u64,
    n: u64,
    elapsed: std::time::Duration,
    label: &str,
    repeat: u32,
    repeats: u32,
    f: &crate::study::figures::StepFigures,
    runs: &[i64],
) -> String {
    let t = &f.throughput;
    let mut s = format!("step {k:>2} of {n} [{}] {label}", fmt_elapsed(elapsed.as_secs()));
    if repeats > 1 {
        let _ = write!(s, " (repeat {repeat}/{repeats})");
    }
    let _ = write!(
        s,
        ": {:.1} {} (median of {}, cv {:.1} %, {:.1}..{:.1}) avg {:.2} ms p95 {:.2} ms",
        t.median,
        f.unit,
        t.samples,
        t.cv * 100.0,
        t.min,
        t.max,
        f.latency_ms.avg,
        f.latency_ms.p95
    );
    if let Some(busy) = f.observed.os.as_ref().and_then(|o| o.busy()) {
        let _ = write!(s, " cpu {busy:.0} %");
    }
    let _ = write!(s, " {}", run_ids(runs));
    for note in &f.observed.notes {
        let _ = write!(s, "\n    {}", paint(&format!("note: {note}"), "33"));
    }
    s
}

pub fn fmt_elapsed(secs: u64) -> String {
    format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// A study's tables: one per series, levels as rows, the peak and saturation marked,
/// the stop reason under it.
/// A stored study's tables, of whatever kind.
pub fn study_text(
    spec: &crate::study::spec::StudySpec,
    row: &crate::store::StudyRow,
    series: &[crate::study::figures::SeriesResult],
) -> String {
    match spec.kind() {
        crate::study::spec::Kind::Rate => capacity::tables(spec, row),
        crate::study::spec::Kind::Memory => memory::tables(spec, series),
        _ => study_tables(spec, series),
    }
}

pub fn study_tables(spec: &crate::study::spec::StudySpec, series: &[crate::study::figures::SeriesResult]) -> String {
    let mut out = String::new();
    let level_name = spec.level_name();
    for s in series {
        let _ = writeln!(out, "\n{}", spec.series_label(&s.name));
        if let Some(c) = spec.configs.iter().find(|c| s.name.ends_with(&format!(" @ {}", c.name))) {
            let _ = writeln!(out, "  settings: {}", crate::study::spec::config_settings_text(&spec.server, c));
        }
        let cols = Columns::of(spec, s);
        cols.header(&mut out, s, level_name);
        for l in &s.levels {
            cols.row(&mut out, s, l);
        }
        series_footer(&mut out, spec, s, level_name);
    }
    for c in answer::configurations(spec, series) {
        let _ = writeln!(out, "\n{}", paint(&format!("answer: {c}"), "1"));
    }
    out
}

/// The columns a series' table has beyond the common ones: a scale study's per instance,
/// a scale-out's per node and efficiency (lag and conflicts where measured), watts
/// where known.
struct Columns {
    scale: bool,
    scale_out: bool,
    lag: bool,
    conflicts: bool,
    watts: bool,
}

impl Columns {
    fn of(spec: &crate::study::spec::StudySpec, s: &crate::study::figures::SeriesResult) -> Columns {
        use crate::study::spec::Kind;
        Columns {
            scale: spec.kind() == Kind::Scale,
            scale_out: spec.kind() == Kind::ScaleOut,
            lag: s.levels.iter().any(|l| l.observed.max_lag_s.is_some()),
            conflicts: s.levels.iter().any(|l| l.observed.conflicts.is_some()),
            watts: s.levels.iter().any(|l| l.per_watt.is_some()),
        }
    }

    /// The table's head line.
    fn header(&self, out: &mut String, s: &crate::study::figures::SeriesResult, level_name: &str) {
        let _ = write!(
            out,
            "  {level_name:>9} {:>11} {:>8} {:>9} {:>9} {:>5} {:>5} {:>5} {:>5} {:>6} {:>6} {:>6} {:>9}",
            s.unit, "spread", "avg ms", "p95 ms", "usr", "sys", "iow", "idle", "srv c", "cli c", "oth c", "ran out"
        );
        if self.scale {
            // The ratio is to the first level measured, which need not be 1 instance.
            let first = s.levels.first().map_or(1, |l| l.level);
            let _ = write!(out, " {:>10} {:>6}", "per inst", format!("x{first}"));
        }
        if self.scale_out {
            let _ = write!(out, " {:>10} {:>15}", "per node", "e(N) [range]");
            if self.lag {
                let _ = write!(out, " {:>6}", "lag s");
            }
            if self.conflicts {
                let _ = write!(out, " {:>9}", "conflicts");
            }
        }
        if self.watts {
            let _ = write!(out, " {:>6} {:>9}", "W", format!("{}/W", s.unit));
        }
        out.push('\n');
    }

    /// One level's row, its marks (peak, saturation, stop, ...) and its notes.
    fn row(&self, out: &mut String, s: &crate::study::figures::SeriesResult, l: &crate::study::figures::LevelResult) {
        let spread = if l.throughput.n > 1 {
            format!("±{:.1}%", l.throughput.cv * 100.0)
        } else {
            format!("cv{:.1}%", l.sample_cv * 100.0)
        };
        let os = l.observed.os.clone().unwrap_or(crate::monitor::os::OsSample { no_cpu: true, ..Default::default() });
        // An interval without a CPU reading is a gap: "-", never 0 or 100 %.
        let share = |v: f64| if os.no_cpu { "-".to_string() } else { format!("{v:.1}") };
        let ran_out: Vec<&str> = crate::study::bottleneck::findings(l).iter().map(|f| f.tag).collect();
        let _ = write!(
            out,
            "  {:>9} {:>11.1} {:>8} {:>9.2} {:>9.2} {:>5} {:>5} {:>5} {:>5} {:>6} {:>6.2} {:>6} {:>9}",
            l.level,
            l.throughput.mean,
            spread,
            l.latency_avg_ms,
            l.p95_ms,
            share(os.usr + os.nice),
            share(os.sys + os.irq + os.soft),
            share(os.iowait),
            share(os.idle),
            os.server_cores.map_or("-".into(), |c| format!("{c:.2}")),
            os.client_cores,
            os.other_cores.map_or("-".into(), |c| format!("{c:.2}")),
            if ran_out.is_empty() { "-".to_string() } else { ran_out.join(",") }
        );
        if self.scale {
            let per = l.throughput.mean / l.per_instance.len().max(1) as f64;
            let _ = write!(out, " {per:>10.1} {:>6.2}", l.ratio_to_first);
        }
        if self.scale_out {
            let per = l.throughput.mean / l.level.max(1) as f64;
            let e = s.efficiency.iter().find(|e| e.nodes == l.level);
            let e = e.map_or("-".into(), |e| format!("{:.2} [{:.2}-{:.2}]", e.e, e.low, e.high));
            let _ = write!(out, " {per:>10.1} {e:>15}");
            if self.lag {
                let _ = write!(out, " {:>6}", l.observed.max_lag_s.map_or("-".into(), |v| format!("{v:.0}")));
            }
            if self.conflicts {
                let _ = write!(out, " {:>9}", l.observed.conflicts.map_or("-".into(), |v| format!("{v:.0}")));
            }
        }
        if self.watts {
            let w = os.watts.unwrap_or(0.0);
            let _ = write!(out, " {w:>6.0} {:>9}", l.per_watt.map_or("-".into(), |p| format!("{p:.2}")));
        }
        let mut marks = Vec::new();
        if s.peak.is_some_and(|(lv, _)| lv == l.level) {
            marks.push("peak");
        }
        if s.saturation == Some(l.level) {
            marks.push("saturation");
        }
        if l.stop.is_some() {
            marks.push("stop");
        }
        if l.over_bound {
            marks.push("over bound");
        }
        if l.starved.is_some() {
            marks.push("starved: not counted");
        }
        if !marks.is_empty() {
            let _ = write!(out, "  {}", paint(&format!("<- {}", marks.join(", ")), "1"));
        }
        out.push('\n');
        for n in l.observed.notes.iter() {
            let _ = writeln!(out, "  {:>9}   note: {n}", "");
        }
    }
}

/// Below a series' table: per-type p90 at the last level, the power source, the cost at
/// the peak, why it stopped (or what left it unfinished), and the answer.
fn series_footer(
    out: &mut String,
    spec: &crate::study::spec::StudySpec,
    s: &crate::study::figures::SeriesResult,
    level_name: &str,
) {
    let out_kind = spec.kind() == crate::study::spec::Kind::ScaleOut;
    if let Some(l) = s.levels.last().filter(|l| l.p90.len() > 1) {
        let _ = write!(out, "  p90 at {} {level_name}:", l.level);
        for crate::stats::TypeP90 { name, ms, .. } in &l.p90 {
            // A sub-millisecond p90 printed as "0 ms" read as none.
            let _ = write!(out, " {name} {} ms", if *ms < 10.0 { format!("{ms:.2}") } else { format!("{ms:.0}") });
        }
        out.push('\n');
    }
    let power = s
        .levels
        .iter()
        .find_map(|l| l.observed.os.as_ref().filter(|o| o.watts.is_some()))
        .map(|o| o.power_source.clone());
    if let Some(src) = power {
        let _ = writeln!(out, "  power: {src}");
    }
    let peak = s.peak.and_then(|(lv, _)| s.levels.iter().find(|l| l.level == lv));
    // A scale-out peak is several servers' throughput: `size` prices whole plans.
    if let (Some(c), Some(l), false) = (spec.cost_of(&s.name), peak, out_kind) {
        if let Some(w) = l.observed.os.as_ref().and_then(|o| o.watts) {
            let t = c.tco(w, l.throughput.mean);
            let (lo, hi) = crate::study::saturation::range(l);
            let _ = writeln!(
                out,
                "  cost at the peak: TCO {cur}{:.0} over {} years ({cur}{:.0} capex + {cur}{:.0} energy), {cur}{:.3} per {} ({cur}{:.3}-{cur}{:.3} over the peak's range)",
                t.total,
                c.years,
                t.capex,
                t.energy_cost,
                t.per_throughput,
                s.unit,
                t.total / hi.max(1e-9),
                if lo > 0.0 { t.total / lo } else { f64::INFINITY },
                cur = c.currency
            );
        }
    }
    match (&s.stop, s.stopped_at, s.saturation) {
        (Some(why), Some(at), Some(sat)) => {
            let _ = writeln!(out, "  stopped at {at} {level_name}: {why}; saturation at {sat} {level_name}");
        }
        (Some(why), Some(at), None) => {
            let _ = writeln!(out, "  stopped at {at} {level_name}: {why}; saturated from the first level");
        }
        _ if s.complete => {}
        _ => {
            let why = answer::unfinished(s, level_name).expect("unfinished");
            let _ = writeln!(out, "  unfinished: {why}");
        }
    }
    let answer = answer::series(s, spec.kind(), level_name, &spec.series_label(&s.name));
    let _ = writeln!(out, "  {}", paint(&format!("answer: {answer}"), "1"));
}

/// One line per stored study.
pub fn studies_table(rows: &[crate::store::StudyRow]) -> String {
    let mut out = format!("{:>4}  {:<20}  {:<6}  {:<11}  {:>5}  name\n", "id", "started", "kind", "status", "steps");
    for r in rows {
        let done = r.steps.iter().filter(|s| s.status == crate::store::Status::Completed).count();
        let _ = writeln!(
            out,
            "{:>4}  {:<20}  {:<6}  {:<11}  {:>5}  {}",
            r.id, r.started_at, r.kind, r.status, done, r.name
        );
    }
    out
}

/// A USL fit as text.
pub fn usl_text(name: &str, unit: &str, f: &crate::model::usl::UslFit) -> String {
    let mut out = format!("USL fit of {name} ({} points)\n", f.residuals.len());
    let ci = |v: Option<f64>| v.map_or(String::new(), |c| format!(" ± {c:.2e}"));
    let _ = writeln!(
        out,
        "  λ {:.2} {unit} per unit of concurrency   σ {:.4}{}   κ {:.3e}{}   R² {:.4}",
        f.lambda,
        f.sigma,
        ci(f.sigma_ci),
        f.kappa,
        ci(f.kappa_ci),
        f.r2
    );
    let measured = f.residuals.iter().map(|r| r.0).fold(0.0, f64::max);
    match (f.peak_n, f.peak_x) {
        (Some(_), Some(x)) if f.sigma >= 1.0 => {
            let _ =
                writeln!(out, "  σ >= 1: throughput falls from the first level; the peak is at N = 1 ({x:.1} {unit})");
        }
        (Some(n), Some(x)) => {
            let _ = writeln!(out, "  peak at N* = sqrt((1 − σ) / κ) = {n:.1}, predicted {x:.1} {unit}");
            if n > 2.0 * measured {
                let _ =
                    writeln!(out, "  (N* lies beyond twice the largest level measured, {measured}: an extrapolation)");
            }
        }
        _ => {
            let _ = writeln!(
                out,
                "  κ = 0: Amdahl's law, no retrograde part; throughput approaches λ/σ = {:.1} {unit}",
                if f.sigma > 0.0 { f.lambda / f.sigma } else { f64::INFINITY }
            );
        }
    }
    let res: Vec<String> = f.residuals.iter().map(|(n, r)| format!("{n}: {r:+.1}")).collect();
    let _ = writeln!(out, "  residuals (measured − fitted): {}", res.join(", "));
    if f.r2 < crate::model::usl::WEAK_R2 {
        let _ = writeln!(
            out,
            "  weak fit: R² {:.2} is below {}: the model does not describe these points; lean on the measured levels, not on N*",
            f.r2,
            crate::model::usl::WEAK_R2
        );
    }
    out
}

/// Servers needed, scale-up first against one instance per server.
pub fn sizing_text(
    name: &str,
    unit: &str,
    target: f64,
    e: &crate::model::sizing::ScaleOut,
    objectives: &[crate::study::capacity::Objective],
    plans: &[crate::model::sizing::Plan],
    cost: Option<&crate::cost::CostInputs>,
) -> String {
    let mut out = format!(
        "\n{name}: {target:.0} {unit} with {}{}\n",
        scale_out_words(e),
        match objectives.is_empty() {
            true => String::new(),
            false => format!(", {}", crate::model::sizing::objectives_text(objectives)),
        }
    );
    let _ = writeln!(
        out,
        "  {:<26} {:>10} {:>22} {:>11} {:>6} {:>12} {:>12}  TCO",
        "plan",
        "instances",
        format!("{unit}/server [range]"),
        "servers",
        "e(N)",
        "e from",
        format!("{unit}/W")
    );
    // Each plan's TCO at its server count, and at the ends of its servers' range.
    let mut costs: Vec<(f64, Option<f64>, Option<f64>)> = Vec::new();
    for p in plans {
        let tco = match (cost, p.watts) {
            (Some(c), Some(w)) => {
                let one = c.tco(w, p.per_server).total;
                let t = one * p.servers as f64;
                let (few, many) = p.servers_range;
                costs.push((t, few.map(|n| one * n as f64), many.map(|n| one * n as f64)));
                match (few, many) {
                    (Some(a), Some(b)) if a != b => {
                        format!("{cur}{t:.0} ({cur}{:.0}-{cur}{:.0})", one * a as f64, one * b as f64, cur = c.currency)
                    }
                    _ => format!("{}{t:.0}", c.currency),
                }
            }
            _ => "-".into(),
        };
        let per_watt = p.watts.filter(|w| *w > 0.0).map_or("-".into(), |w| format!("{:.2}", p.per_server / w));
        let per = format!("{:.1} [{:.0}-{:.0}]", p.per_server, p.per_server_range.0, p.per_server_range.1);
        let _ = writeln!(
            out,
            "  {:<26} {:>10} {per:>22} {:>11} {:>6.2} {:>12} {per_watt:>12}  {tco}",
            p.name,
            p.instances_per_server,
            p.servers_text(),
            p.efficiency,
            p.efficiency_source
        );
        for w in &p.weak {
            let _ = writeln!(out, "    {}", paint(&format!("weak: {w}"), "33"));
        }
    }
    if let (Some(c), [a, b]) = (cost, costs.as_slice()) {
        // Ranges that overlap do not establish which plan costs less.
        let overlap = match (a.1, a.2, b.1, b.2) {
            (Some(a_lo), Some(a_hi), Some(b_lo), Some(b_hi)) => a_lo <= b_hi && b_lo <= a_hi,
            _ => true,
        } && (a.1 != a.2 || b.1 != b.2);
        // "costs $0 less" when the plans need the same servers, and "-500 less" the other way.
        let line = match b.0 - a.0 {
            d if d.abs() < 0.5 => format!("both plans cost the same over {} years", c.years),
            d if overlap => format!(
                "scale-up first costs {}{:.0} {} over {} years at the figures measured, but the plans' server ranges \
                 overlap: within the noise the difference is not established",
                c.currency,
                d.abs(),
                if d > 0.0 { "less" } else { "more" },
                c.years
            ),
            d if d > 0.0 => format!("scale-up first costs {}{d:.0} less over {} years", c.currency, c.years),
            d => format!("scale-up first costs {}{:.0} more over {} years", c.currency, -d, c.years),
        };
        let _ = writeln!(out, "  {line}");
    }
    let source = if plans.iter().any(|p| p.watts.is_some()) {
        "watts as the study recorded them (see its power source)"
    } else if cost.is_some() {
        // The cost was asked for: say why it is not there, and how to get it.
        "the cost needs watts, and the study recorded none: run it with --power-model or --watts for a TCO"
    } else {
        "no watts measured, modelled or given: no energy or TCO"
    };
    let formula = match e {
        crate::model::sizing::ScaleOut::Given(_) | crate::model::sizing::ScaleOut::Assumed(_) => {
            "servers = ceil(T / (P x E))"
        }
        _ => "servers = the fewest N with N x P x e(N) >= T",
    };
    let _ = writeln!(out, "  {formula}; {source}");
    let _ = writeln!(out, "  servers in brackets: at the ends of P's range (P ± 2 standard errors of the level)");
    out
}

/// The scale-out efficiency a sizing uses, in words.
pub fn scale_out_words(e: &crate::model::sizing::ScaleOut) -> String {
    use crate::model::sizing::ScaleOut;
    match e {
        ScaleOut::Given(e) => format!("scale-out efficiency E = {e} (given: scale-out is not measured)"),
        ScaleOut::Assumed(e) => format!("scale-out efficiency E = {e} (assumed: neither measured nor given)"),
        ScaleOut::Measured { study, points, fit } => {
            let measured: Vec<String> = points.iter().map(|p| format!("e({}) = {:.2}", p.nodes, p.e)).collect();
            format!(
                "scale-out efficiency measured by study {study} ({}; beyond {} nodes {})",
                measured.join(", "),
                points.iter().map(|p| p.nodes).max().unwrap_or(1),
                if fit.is_some() { "its USL fit" } else { "the last two counts' trend" }
            )
        }
    }
}

/// "X at N connections": which configurations qualify, with their margin.
pub fn requirement_text(required: f64, at: u32, verdicts: &[crate::model::sizing::Verdict]) -> String {
    let mut out = format!("\nrequirement: {required:.0} at {at} connections\n");
    for v in verdicts {
        let _ = writeln!(
            out,
            "  {:<40} {:>10.1} [{:.0}-{:.0}]  {:<30}  margin {:+.1} %",
            v.series,
            v.measured,
            v.range.0,
            v.range.1,
            v.words(required),
            v.margin_pct
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Recorder;

    #[test]
    fn step_run_ids_in_order() {
        // A scale step's runs came out as "runs 44,43", and a failed step's as "[47]".
        assert_eq!(run_ids(&[44, 43]), "runs 43, 44");
        assert_eq!(run_ids(&[47]), "run 47");
    }

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
    fn client_cpu_of_earlier_releases_reads_as_process_wide() {
        // tests/fixtures/run.json was stored before client CPU had a scope.
        let doc: crate::result::RunDocument =
            serde_json::from_str(include_str!("../../../../tests/fixtures/run.json")).unwrap();
        let mut s = doc.summary.unwrap();
        assert_eq!(s.client_cpu_scope, crate::stats::CpuScope::Process);
        s.client_cpu_us_per_txn = Some(40.0);
        assert!(summary_table(&s, "t").contains(" us (whole process)"));
        let group = Summary {
            client_cpu_scope: crate::stats::CpuScope::Group,
            process_cpu_us_per_txn: Some(80.0),
            client_cpu_us_per_txn: Some(40.0),
            ..s
        };
        assert!(summary_table(&group, "t").contains("40.0 us (this group's threads; whole process 80.0 us)"));
    }

    #[test]
    fn the_summary_shows_the_server_status_and_dashes_for_what_was_not_read() {
        let doc: crate::result::RunDocument =
            serde_json::from_str(include_str!("../../../../tests/fixtures/run.json")).unwrap();
        let mut s = doc.summary.unwrap();
        // No counters read (a run stored before they were): no rows, as before.
        s.observed.status = None;
        assert!(!summary_table(&s, "t").contains("buffer pool"));
        s.tps = 200.0;
        s.observed.status = Some(crate::monitor::status::StatusSample {
            seconds: 10.0,
            buffer_pool_read_requests_per_s: Some(12_000.0),
            buffer_pool_reads_per_s: Some(300.0),
            buffer_pool_hit_ratio: Some(0.975),
            row_lock_waits_per_s: Some(2.0),
            row_lock_time_ms_per_s: Some(30.0),
            threads_running: Some(4.5),
            commits_per_s: Some(200.0),
            ..Default::default()
        });
        let text = summary_table(&s, "t");
        assert!(
            text.contains(
                "buffer pool requests/misses  12000 / 300 per s  (hit ratio 97.50 %; 1.500 misses per transaction)"
            ),
            "{text}"
        );
        assert!(
            text.contains("row lock waits per s         2.0  (30.0 ms waited per s; 0.010 waits per transaction)"),
            "{text}"
        );
        assert!(text.contains("server threads running       4.5"), "{text}");
        assert!(!text.contains("read over"), "{text}");
        // The server lacked it: a dash, not 0.
        assert!(text.contains("commits / handler reads      200 / - per s"), "{text}");
        assert!(!text.contains("InnoDB reads"), "{text}");
        // Readings for half the time measured: said.
        s.seconds = 20.0;
        let text = summary_table(&s, "t");
        assert!(
            text.contains("server status read over      10.0 of 20.0 s (intervals without a reading left out)"),
            "{text}"
        );
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
            "[ 10s ] thds: 8 tps: 100.00 qps: 2000.00 (r/w/o: 1400.00/400.00/200.00) lat (ms,95%): 10.01 err/s: 0.00 reconn/s: 0.00"
        );
        // Open loop: sysbench's queue line follows (db_report_intermediate's words).
        r.backlog = 3;
        r.concurrency = 2;
        let iv = Interval::from_recorder(&r, &["x".into()], 10.0, 1.0, false, 8, 95.0);
        assert!(interval_line(&iv, true).ends_with("\n[ 10s ] queue length: 3, concurrency: 2"));
    }

    #[test]
    fn study_tables_mark_peak_saturation_and_stop() {
        use crate::study::{figures, spec::StudySpec, stop};
        let spec = StudySpec::from_toml(
            "name='t'\nkind='sweep'\nworkloads=['oltp_read_write']\nlevels=[1,2,4]\nstep_time=5\n\
             [power]\nwatts=100",
            "t",
        )
        .unwrap();
        let step = |x: f64, r: f64| figures::StepFigures {
            unit: "tps".into(),
            throughput: crate::study::steady::Steady::flat(x, 5),
            tps: x,
            latency_ms: crate::stats::LatencyMs { avg: r, p95: r, ..Default::default() },
            p90: vec![crate::stats::TypeP90::new("oltp_read_write", r, None)],
            observed: crate::stats::Observed {
                os: Some(crate::monitor::os::OsSample {
                    idle: 50.0,
                    watts: Some(100.0),
                    power_source: "given".into(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let steps = vec![(1, step(100.0, 1.0)), (2, step(180.0, 1.1)), (4, step(181.0, 2.2))];
        let r = figures::series_result("rw", &[1, 2, 4], 1, &steps, &stop::parse("plateau<5%").unwrap());
        let text = study_tables(&spec, &[r]);
        let line = |level: &str| text.lines().find(|l| l.trim_start().starts_with(level)).unwrap().to_string();
        assert!(line("2 ").ends_with("<- saturation"), "{text}");
        assert!(line("4 ").ends_with("<- peak, stop"), "{text}");
        assert!(line("1 ").contains("1.00"), "100 tps at 100 W: {text}");
        assert!(text.contains("power: given"), "{text}");
        assert!(
            text.contains("stopped at 4 threads: plateau: +0.6 % over level 2 (under 5 %); saturation at 2 threads"),
            "{text}"
        );
    }
}

#[cfg(test)]
mod sizing_tests {
    use crate::model::sizing::{Plan, ScaleOut};

    fn plan(name: &str, per_server: f64, servers: u64) -> Plan {
        Plan {
            name: name.into(),
            instances_per_server: 1,
            per_server,
            servers,
            watts: Some(200.0),
            efficiency: 1.0,
            efficiency_source: "given".into(),
            servers_range: (Some(servers), Some(servers)),
            per_server_range: (per_server, per_server),
            weak: Vec::new(),
        }
    }

    /// equal_plans_cost_the_same: "scale-up first costs $0 less over 4 years".
    #[test]
    fn the_tco_line_says_which_plan_costs_less_or_that_they_cost_the_same() {
        let cost = crate::cost::CostInputs {
            server_capex: 10_000.0,
            devices: 0,
            device_capex: 0.0,
            power_price_kwh: 0.1,
            cooling_factor: 1.0,
            years: 4.0,
            currency: "$".into(),
        };
        let text =
            |a: Plan, b: Plan| super::sizing_text("s", "tps", 1000.0, &ScaleOut::Given(1.0), &[], &[a, b], Some(&cost));
        let same = text(plan("scale-up first", 1000.0, 1), plan("one per server", 1000.0, 1));
        assert!(same.contains("both plans cost the same over 4 years"), "{same}");
        let less = text(plan("scale-up first", 1000.0, 1), plan("one per server", 500.0, 2));
        assert!(less.contains("scale-up first costs $") && less.contains(" less over 4 years"), "{less}");
        let more = text(plan("scale-up first", 500.0, 2), plan("one per server", 1000.0, 1));
        assert!(more.contains(" more over 4 years"), "{more}");
        // noisy_peak_priced_as_certain: a peak with cv 44 % gave "scale-up first costs
        // $24,039 less": when the server ranges overlap the difference is not established.
        let mut noisy = plan("scale-up first", 1000.0, 2);
        noisy.servers_range = (Some(1), Some(4));
        noisy.weak.push("the samples at 7 instances vary by cv 44 % (above 10 %)".into());
        let mut one = plan("one per server", 500.0, 3);
        one.servers_range = (Some(3), Some(3));
        let t = text(noisy, one);
        assert!(
            t.contains("the plans' server ranges overlap: within the noise the difference is not established"),
            "{t}"
        );
        assert!(t.contains("2 (1-4)") && t.contains("weak: the samples at 7 instances vary by cv 44 %"), "{t}");
    }
}
