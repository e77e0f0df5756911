//! Counting and latency: what a worker records, how records merge, and the figures a
//! summary reports.
//!
//! A [`Recorder`] belongs to one client thread; its workers write into it without any
//! lock, and it is handed over whole at each interval boundary and merged there
//! (latte's design). Latency is kept in HDR histograms in microseconds with 3
//! significant figures: lossless to merge, and small enough to store per interval.
//! Nothing here does I/O.

pub mod significance;

use crate::monitor::os::OsSample;
use crate::monitor::status::StatusSample;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency a histogram holds: one hour, in microseconds. Larger values are
/// clamped (and a transaction that slow is a finding in itself).
pub const MAX_LATENCY_US: u64 = 3_600_000_000;

/// The share of an interval's length by which the client's count may miss it before the
/// interval is marked `client_late_s`: a count a quarter too long or short is a quarter
/// off, whatever the server did.
pub const CLIENT_LATE: f64 = 0.25;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("static bounds are valid")
}

/// Counts for one transaction type.
#[derive(Clone, Debug)]
pub struct TypeStats {
    pub latency: Histogram<u64>,
    /// Transactions that finished (committed, or rolled back on purpose).
    pub transactions: u64,
    /// Of those, rolled back on purpose (TPC-C New-Order's 1 %).
    pub rollbacks: u64,
    /// Attempts that failed with a retryable error (deadlock, lock wait) and were retried.
    pub errors: u64,
}

impl TypeStats {
    fn new() -> Self {
        TypeStats { latency: new_histogram(), transactions: 0, rollbacks: 0, errors: 0 }
    }
}

/// Queries by class, as sysbench counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryCounts {
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    /// Errors and reconnects a script counted itself (sysbench's `sb_counter_inc`):
    /// the recorder moves them to the transaction type's errors and its reconnects.
    #[serde(default, skip_serializing)]
    pub errors: u64,
    #[serde(default, skip_serializing)]
    pub reconnects: u64,
}

impl QueryCounts {
    pub fn total(&self) -> u64 {
        self.reads + self.writes + self.other
    }
    /// Counts one statement by sysbench's rule (its MySQL driver): a result set is a
    /// read; without one, a write when it changed rows (`affected`), else other. A DELETE
    /// of a missing row, or a server that reports no affected rows, is "other" there too.
    pub fn statement(&mut self, result_columns: u64, affected: u64) {
        match (result_columns, affected) {
            (1.., _) => self.reads += 1,
            (0, 1..) => self.writes += 1,
            (0, 0) => self.other += 1,
        }
    }
    pub fn add(&mut self, o: &QueryCounts) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.other += o.other;
        self.errors += o.errors;
        self.reconnects += o.reconnects;
    }
}

/// Everything one client thread counted since the last interval boundary.
#[derive(Clone, Debug)]
pub struct Recorder {
    pub types: Vec<TypeStats>,
    pub queries: QueryCounts,
    pub reconnects: u64,
    /// Arrivals due but not yet started at the boundary (open-loop runs only).
    pub backlog: u64,
    /// Transactions in flight at the boundary (open-loop runs only): sysbench's
    /// "concurrency".
    pub concurrency: u64,
    /// Reconnect attempts that failed (the server refused, dropped or did not answer).
    pub reconnect_failures: u64,
    /// The server was lost (connections failed and could not be re-established) at
    /// some point of the interval.
    pub outage: bool,
    /// The longest a transaction of this client thread waited in the interval while the
    /// server answered no thread at all, as the stall checks (about once a second) saw
    /// it; `None` when it had none in flight at any check. Merged: the longest.
    pub stuck: Option<std::time::Duration>,
    /// How far the span this client thread counted the interval over (from its previous
    /// hand-over to this one) missed the interval's length: the thread was not running
    /// on time (the process stopped or starved of CPU, a script holding the thread).
    /// Merged: the most.
    pub late: Option<std::time::Duration>,
}

impl Recorder {
    pub fn new(type_count: usize) -> Self {
        Recorder {
            types: (0..type_count.max(1)).map(|_| TypeStats::new()).collect(),
            queries: QueryCounts::default(),
            reconnects: 0,
            backlog: 0,
            concurrency: 0,
            reconnect_failures: 0,
            outage: false,
            stuck: None,
            late: None,
        }
    }

    /// Records one finished transaction of type `ty` that took `latency_us`.
    #[inline]
    pub fn transaction(&mut self, ty: usize, latency_us: u64, rolled_back: bool) {
        let t = &mut self.types[ty];
        t.latency.saturating_record(latency_us.max(1));
        t.transactions += 1;
        t.rollbacks += rolled_back as u64;
    }

    #[inline]
    pub fn error(&mut self, ty: usize) {
        self.types[ty].errors += 1;
    }

    /// Adds a transaction's statements; errors and reconnects the workload counted
    /// itself go to type `ty`'s errors and to the reconnects.
    #[inline]
    pub fn queries(&mut self, ty: usize, q: &QueryCounts) {
        self.queries.reads += q.reads;
        self.queries.writes += q.writes;
        self.queries.other += q.other;
        self.types[ty].errors += q.errors;
        self.reconnects += q.reconnects;
    }

    pub fn merge(&mut self, other: &Recorder) {
        for (mine, theirs) in self.types.iter_mut().zip(&other.types) {
            mine.latency.add(&theirs.latency).expect("same bounds");
            mine.transactions += theirs.transactions;
            mine.rollbacks += theirs.rollbacks;
            mine.errors += theirs.errors;
        }
        self.queries.add(&other.queries);
        self.reconnects += other.reconnects;
        self.backlog += other.backlog;
        self.concurrency += other.concurrency;
        self.reconnect_failures += other.reconnect_failures;
        self.outage |= other.outage;
        self.stuck = self.stuck.max(other.stuck);
        self.late = self.late.max(other.late);
    }

    pub fn transactions(&self) -> u64 {
        self.types.iter().map(|t| t.transactions).sum()
    }
    pub fn rollbacks(&self) -> u64 {
        self.types.iter().map(|t| t.rollbacks).sum()
    }
    pub fn errors(&self) -> u64 {
        self.types.iter().map(|t| t.errors).sum()
    }

    /// All types' latencies in one histogram.
    pub fn total_latency(&self) -> Histogram<u64> {
        let mut all = new_histogram();
        for t in &self.types {
            all.add(&t.latency).expect("same bounds");
        }
        all
    }
}

/// A count as a rate; zero (not NaN) over an empty span.
pub fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

/// Latency figures in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    pub avg: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl LatencyMs {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return LatencyMs::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        LatencyMs {
            avg: h.mean() / 1000.0,
            min: ms(h.min()),
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p95: ms(h.value_at_quantile(0.95)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
        }
    }
}

/// One report interval, as printed and stored.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds since the run started, at the end of this interval.
    pub t: f64,
    /// Length of the interval in seconds (the last one may be short).
    pub duration: f64,
    /// True while inside the warm-up: excluded from the summary.
    pub warmup: bool,
    pub threads: u32,
    pub transactions: u64,
    pub tps: f64,
    pub qps: f64,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub other_per_s: f64,
    pub p95_ms: f64,
    /// Mean and further percentiles of the interval, so comparisons can test each
    /// against its spread (absent, 0, in runs stored before they were kept).
    #[serde(default)]
    pub avg_ms: f64,
    #[serde(default)]
    pub p50_ms: f64,
    #[serde(default)]
    pub p90_ms: f64,
    #[serde(default)]
    pub p99_ms: f64,
    #[serde(default)]
    pub max_ms: f64,
    /// The percentile chosen with `--percentile` (sysbench's option) and its value.
    #[serde(default = "default_percentile")]
    pub percentile: f64,
    #[serde(default)]
    pub percentile_ms: f64,
    pub errors: u64,
    pub reconnects: u64,
    pub rollbacks: u64,
    pub backlog: u64,
    /// Transactions in flight at the interval's end (open-loop runs only).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub concurrency: u64,
    /// Reconnect attempts that failed in this interval.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnect_failures: u64,
    /// The server was lost during this interval: its throughput is an outage's, not
    /// the server's capacity.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outage: bool,
    /// The server stalled: a transaction waited 2 s or more (and longer than the run's
    /// usual slow transaction) while the server answered no connection.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stall: bool,
    /// A replica's replication lag at the interval's end, in seconds, when sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_s: Option<f64>,
    /// Set when the client counted this interval over a span that missed its length by
    /// this many seconds, [`CLIENT_LATE`] of it or more: the client was not running on
    /// time, so the count is partly another span's (or none), not the server's
    /// throughput. A study's median leaves such an interval out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_late_s: Option<f64>,
    /// Per transaction type: name, committed per minute-free count, p90 in ms.
    pub types: Vec<TypeInterval>,
    /// Host CPU, processes' CPU, disk, memory and power over the same span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<OsSample>,
    /// The server's status counters over (about) the same span: None where no fresh
    /// reading came in time (a gap, never zeros).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StatusSample>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TypeInterval {
    pub name: String,
    pub transactions: u64,
    #[serde(default)]
    pub rollbacks: u64,
    pub p90_ms: f64,
}

impl Interval {
    pub fn from_recorder(
        rec: &Recorder,
        names: &[String],
        t: f64,
        duration: f64,
        warmup: bool,
        threads: u32,
        percentile: f64,
    ) -> Self {
        let per_s = |n: u64| per_second(n, duration);
        let transactions = rec.transactions();
        let all = rec.total_latency();
        let at = |q: f64| if all.is_empty() { 0.0 } else { all.value_at_quantile(q) as f64 / 1000.0 };
        Interval {
            t,
            duration,
            warmup,
            threads,
            transactions,
            tps: per_s(transactions),
            qps: per_s(rec.queries.total()),
            reads_per_s: per_s(rec.queries.reads),
            writes_per_s: per_s(rec.queries.writes),
            other_per_s: per_s(rec.queries.other),
            p95_ms: at(0.95),
            avg_ms: if all.is_empty() { 0.0 } else { all.mean() / 1000.0 },
            p50_ms: at(0.50),
            p90_ms: at(0.90),
            p99_ms: at(0.99),
            max_ms: if all.is_empty() { 0.0 } else { all.max() as f64 / 1000.0 },
            percentile,
            percentile_ms: at(percentile / 100.0),
            errors: rec.errors(),
            reconnects: rec.reconnects,
            rollbacks: rec.rollbacks(),
            backlog: rec.backlog,
            concurrency: rec.concurrency,
            reconnect_failures: rec.reconnect_failures,
            outage: rec.outage,
            // Judged by exec::clock::StallRule, which knows the run so far.
            stall: false,
            lag_s: None,
            client_late_s: rec.late.map(|d| d.as_secs_f64()).filter(|&l| l >= CLIENT_LATE * duration),
            types: names
                .iter()
                .zip(&rec.types)
                .map(|(name, t)| TypeInterval {
                    name: name.clone(),
                    transactions: t.transactions,
                    rollbacks: t.rollbacks,
                    p90_ms: LatencyMs::of(&t.latency).p90,
                })
                .collect(),
            os: None,
            status: None,
        }
    }
}

fn default_percentile() -> f64 {
    95.0
}

/// Per transaction type in the summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TypeSummary {
    pub name: String,
    pub transactions: u64,
    pub rollbacks: u64,
    pub errors: u64,
    pub latency_ms: LatencyMs,
    /// The spec's 90th-percentile bound for this type (TPC-C), and whether it was met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_limit_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_within_limit: Option<bool>,
}

/// What a client CPU figure counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuScope {
    /// The whole sizeup process (all threads).
    #[default]
    Process,
    /// One client group's threads (its client threads and the thread measuring it).
    Group,
}

impl CpuScope {
    fn is_process(&self) -> bool {
        *self == CpuScope::Process
    }
}

/// What a measurement saw beside the client's own counts, at every level a measurement
/// is kept (a run's summary, a study's step, a level's repeats together): the host's OS
/// figures, the servers' status counters, replication lag, Galera conflicts, and the
/// notes for a reader. Embedded flattened, so each level's stored JSON keeps its fields
/// at the top. `C` counts conflicts: a whole number in a run or a step, a mean over the
/// repeats (`f64`) in a level.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Observed<C = u64> {
    /// The steady-state intervals' OS figures, averaged (servers' cores summed over the
    /// instances of a step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<OsSample>,
    /// The steady-state intervals' server status figures, averaged over those that have
    /// them (per transaction: divide by `tps`); summed over a step's servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StatusSample>,
    /// Replicas' largest replication lag (a run's: warm-up included), seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lag_s: Option<f64>,
    /// Galera: certification conflicts (local certification failures and brute-force
    /// aborts), apart from the deadlocks the client saw (its errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflicts: Option<C>,
    /// Findings worth a reader's attention (e.g. the load generator was the bottleneck).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The steady-state result of a run (warm-up excluded).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Seconds of measurement the figures cover.
    pub seconds: f64,
    pub transactions: u64,
    pub queries: u64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub errors: u64,
    pub reconnects: u64,
    pub rollbacks: u64,
    pub tps: f64,
    pub qps: f64,
    pub latency_ms: LatencyMs,
    pub types: Vec<TypeSummary>,
    /// Client (sizeup) CPU per transaction in microseconds, when measured.
    pub client_cpu_us_per_txn: Option<f64>,
    /// What the client CPU counts: the whole process, or (several client groups in one
    /// process, as in scale studies) this group's own threads. Earlier releases stored
    /// the process's for every group: they read as `process`.
    #[serde(default, skip_serializing_if = "CpuScope::is_process")]
    pub client_cpu_scope: CpuScope,
    /// A group's: the whole process's CPU per this group's transaction, to compare.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_cpu_us_per_txn: Option<f64>,
    /// Server CPU per transaction in microseconds, when the server is a managed instance.
    pub server_cpu_us_per_txn: Option<f64>,
    /// Largest open-loop backlog seen at an interval boundary.
    pub max_backlog: u64,
    /// Open loop: arrivals due before the run ended that never started (the server
    /// could not hold the rate), as pgbench's skipped transactions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub missed_arrivals: u64,
    /// A workload that paces itself (a replay): what was due a second over the measured
    /// time, the rate it offered (an arrival-paced run's is its `--rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_rate: Option<f64>,
    /// A warm-up run that waited for the buffer pool's hit ratio: the second it
    /// settled at (absent when it ran to its bound, or waited for nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_after_s: Option<f64>,
    /// Reconnect attempts that failed over the whole run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnect_failures: u64,
    /// Intervals during which the server was lost, and intervals that stalled (the
    /// whole run's, warm-up included): a run with either is no capacity figure.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub outage_intervals: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stall_intervals: u64,
    /// TPC-C: committed New-Orders per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm: Option<f64>,
    /// TPC-C: all committed transactions per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm: Option<f64>,
    /// The host's and the server's figures over the steady state, and the run's notes.
    #[serde(flatten)]
    pub observed: Observed,
    /// How evenly the connections shared the work (sysbench's "Threads fairness").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness: Option<Fairness>,
    /// Round robin per connection over several servers: what each one served, in the
    /// order the connections were dealt (empty for a run on one server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeShare>,
    /// Load from agents on several client hosts: what each one drove (steady state), in
    /// the order they were named (empty for a run from this process alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentShare>,
}

/// One agent's share of a run: its throughput and latency (from its own histogram), and
/// whether its host held the load down.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentShare {
    /// As the coordinator named it (HOST:PORT, or USER@HOST over SSH).
    pub agent: String,
    /// Its host's name, as it reports it.
    #[serde(default)]
    pub host: String,
    pub connections: u32,
    pub transactions: u64,
    pub tps: f64,
    pub latency_ms: LatencyMs,
    /// Its process's CPU over the steady state, in cores, and its host's CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cores: Option<f64>,
    pub cpus: u32,
    /// Its busiest client thread's share of a core over the steady state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_thread: Option<f64>,
    /// Open loop: its share of the rate, its largest backlog at an interval boundary,
    /// that backlog in seconds of its schedule, and its arrivals that never started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_backlog: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_s: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub missed_arrivals: u64,
    /// It stopped answering, or its link broke, before the run's end.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
    /// Its steady-state latency over all transaction types, in microseconds:
    /// hdrhistogram V2 (deflate), base64. The run's own is these added together.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub histogram: String,
}

/// The note that starts with this names an agent whose host held the throughput down
/// (it begins as the one load generator's note does, so answers read it the same way).
pub fn agent_note(a: &AgentShare) -> Option<String> {
    let lg = crate::monitor::os::LOAD_GENERATOR;
    let name = &a.agent;
    if let Some(b) = a.busiest_thread.filter(|&b| b >= 0.9) {
        return Some(format!(
            "{lg} agent {name} was the bottleneck: its busiest client thread was {:.0} % busy, so the connections \
             it serves waited for it rather than for the server; add agents or --client-threads",
            b * 100.0
        ));
    }
    if let Some(c) = a.client_cores.filter(|&c| a.cpus > 0 && c >= 0.9 * a.cpus as f64) {
        return Some(format!(
            "{lg} agent {name} was the bottleneck: it used {c:.2} of its host's {} CPU(s); add agents",
            a.cpus
        ));
    }
    None
}

/// The note naming an agent that fell behind its schedule while the others kept theirs:
/// then its host, not the server, missed the arrivals. `None` when they all fell behind
/// alike (that is the server) or none did.
pub fn agent_lag_note(agents: &[AgentShare]) -> Option<String> {
    let lg = crate::monitor::os::LOAD_GENERATOR;
    let behind = |a: &AgentShare| a.lag_s.is_some_and(|l| l >= 1.0) && a.missed_arrivals > 0;
    let slow: Vec<&AgentShare> = agents.iter().filter(|a| behind(a)).collect();
    if slow.is_empty() || slow.len() == agents.len() {
        return None;
    }
    let a = slow.iter().max_by(|x, y| x.lag_s.partial_cmp(&y.lag_s).expect("finite"))?;
    Some(format!(
        "{lg} agent {} fell behind its schedule while the other agents kept theirs: {} of its arrivals never \
         started, {:.1} s behind at worst",
        a.agent,
        a.missed_arrivals,
        a.lag_s.unwrap_or_default()
    ))
}

/// One server's share of a round-robin run (steady state, as the rest of the summary).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeShare {
    /// Where it is, as results describe a target.
    pub node: String,
    pub connections: u32,
    pub transactions: u64,
    pub tps: f64,
    /// Its server's cores busy, when sizeup could watch the server's process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cores: Option<f64>,
    /// A replica's largest replication lag over the run, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lag_s: Option<f64>,
    /// Galera: certification conflicts on this node during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflicts: Option<u64>,
}

/// Events and execution time per connection over the steady state: mean and
/// (population) standard deviation, as sysbench's "Threads fairness" computes them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    /// Seconds.
    pub time_avg: f64,
    pub time_stddev: f64,
    /// Sum of every transaction's latency, seconds (sysbench's latency "sum").
    pub latency_sum: f64,
}

impl Fairness {
    /// From each connection's (transactions, seconds spent in them).
    pub fn of(per_connection: &[(u64, f64)]) -> Option<Fairness> {
        if per_connection.is_empty() {
            return None;
        }
        let n = per_connection.len() as f64;
        let events_avg = per_connection.iter().map(|p| p.0 as f64).sum::<f64>() / n;
        let latency_sum: f64 = per_connection.iter().map(|p| p.1).sum();
        let time_avg = latency_sum / n;
        let sd = |f: &dyn Fn(&(u64, f64)) -> f64, avg: f64| {
            (per_connection.iter().map(|p| (f(p) - avg).powi(2)).sum::<f64>() / n).sqrt()
        };
        Some(Fairness {
            events_avg,
            events_stddev: sd(&|p| p.0 as f64, events_avg),
            time_avg,
            time_stddev: sd(&|p| p.1, time_avg),
            latency_sum,
        })
    }
}

impl Summary {
    /// "outage" or "stall" when the server was lost or stalled during the run: its
    /// figures are no capacity figure.
    pub fn fault(&self) -> Option<&'static str> {
        if self.outage_intervals > 0 {
            Some("outage")
        } else if self.stall_intervals > 0 {
            Some("stall")
        } else {
            None
        }
    }

    /// The sentence that says so, for notes, exports, comparisons and reports.
    pub fn not_capacity(&self) -> Option<String> {
        self.fault().map(|f| match f {
            "outage" => format!(
                "the server was lost during {} interval(s) ({} failed reconnect attempts): \
                 these figures include an outage and are not the server's capacity",
                self.outage_intervals, self.reconnect_failures
            ),
            _ => format!(
                "the server stalled (a transaction waited 2 s or more while the server answered nothing) in {} interval(s): \
                 these figures include a stall and are not the server's capacity",
                self.stall_intervals
            ),
        })
    }

    pub fn from_recorder(rec: &Recorder, names: &[String], seconds: f64, max_backlog: u64) -> Self {
        let per_s = |n: u64| per_second(n, seconds);
        let transactions = rec.transactions();
        Summary {
            seconds,
            transactions,
            queries: rec.queries.total(),
            reads: rec.queries.reads,
            writes: rec.queries.writes,
            other: rec.queries.other,
            errors: rec.errors(),
            reconnects: rec.reconnects,
            rollbacks: rec.rollbacks(),
            tps: per_s(transactions),
            qps: per_s(rec.queries.total()),
            latency_ms: LatencyMs::of(&rec.total_latency()),
            types: names
                .iter()
                .zip(&rec.types)
                .map(|(name, t)| TypeSummary {
                    name: name.clone(),
                    transactions: t.transactions,
                    rollbacks: t.rollbacks,
                    errors: t.errors,
                    latency_ms: LatencyMs::of(&t.latency),
                    p90_limit_ms: None,
                    p90_within_limit: None,
                })
                .collect(),
            client_cpu_us_per_txn: None,
            client_cpu_scope: CpuScope::Process,
            process_cpu_us_per_txn: None,
            server_cpu_us_per_txn: None,
            max_backlog,
            missed_arrivals: 0,
            offered_rate: None,
            settled_after_s: None,
            reconnect_failures: rec.reconnect_failures,
            outage_intervals: 0,
            stall_intervals: 0,
            nopm: None,
            tpm: None,
            observed: Observed::default(),
            fairness: None,
            nodes: Vec::new(),
            agents: Vec::new(),
        }
    }
}

/// Serialises a histogram losslessly (HdrHistogram V2 + DEFLATE, base64), the form
/// other HdrHistogram tools read.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    use base64::Engine;
    use hdrhistogram::serialization::Serializer;
    let mut buf = Vec::new();
    hdrhistogram::serialization::V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("serialising to memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

pub fn decode_histogram(s: &str) -> Result<Histogram<u64>, crate::error::Unmeasured> {
    use crate::error::Unmeasured::Histogram as Bad;
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map_err(|e| Bad(format!("histogram is not base64: {e}")))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| Bad(format!("histogram does not decode: {e:?}")))
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One transaction type's p90 over a step or level: what `p90[type]` stop conditions
/// and TPC-C's bounds read. Stored as `[name, ms, bound]`, as every release stored it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "(String, f64, Option<f64>)", into = "(String, f64, Option<f64>)")]
pub struct TypeP90 {
    pub name: String,
    pub ms: f64,
    /// The type's specified bound in ms (TPC-C's 5 s and 20 s), if it has one.
    pub bound_ms: Option<f64>,
}

impl TypeP90 {
    pub fn new(name: impl Into<String>, ms: f64, bound_ms: Option<f64>) -> TypeP90 {
        TypeP90 { name: name.into(), ms, bound_ms }
    }
}

impl From<(String, f64, Option<f64>)> for TypeP90 {
    fn from((name, ms, bound_ms): (String, f64, Option<f64>)) -> TypeP90 {
        TypeP90 { name, ms, bound_ms }
    }
}

impl From<TypeP90> for (String, f64, Option<f64>) {
    fn from(t: TypeP90) -> Self {
        (t.name, t.ms, t.bound_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(name: &str, lag_s: Option<f64>, missed: u64) -> AgentShare {
        AgentShare { agent: name.into(), rate: Some(100.0), lag_s, missed_arrivals: missed, ..Default::default() }
    }

    /// One agent behind while the others kept their schedules: its host, named. All
    /// behind alike: the server, so no agent is blamed.
    #[test]
    fn only_an_agent_behind_alone_is_named() {
        let one = [agent("a:1", Some(0.0), 0), agent("b:1", Some(3.5), 240), agent("c:1", Some(0.01), 0)];
        let note = agent_lag_note(&one).expect("named");
        assert!(note.starts_with(crate::monitor::os::LOAD_GENERATOR) && note.contains("agent b:1"), "{note}");
        assert!(note.contains("240"), "{note}");
        let all = [agent("a:1", Some(2.0), 90), agent("b:1", Some(3.5), 240)];
        assert_eq!(agent_lag_note(&all), None);
        assert_eq!(agent_lag_note(&[agent("a:1", Some(0.0), 0)]), None);
    }

    /// A type's p90 is a named struct in code and the same `[name, ms, bound]` array in
    /// the store: steps stored by earlier releases read back.
    #[test]
    fn type_p90_is_stored_as_before() {
        let t = TypeP90::new("new_order", 4000.0, Some(5000.0));
        assert_eq!(serde_json::to_string(&t).unwrap(), r#"["new_order",4000.0,5000.0]"#);
        let back: Vec<TypeP90> = serde_json::from_str(r#"[["t",1.5,null]]"#).unwrap();
        assert_eq!(back, [TypeP90::new("t", 1.5, None)]);
    }

    #[test]
    fn merge_adds_counts_and_latencies() {
        let mut a = Recorder::new(2);
        let mut b = Recorder::new(2);
        for v in 1..=100 {
            a.transaction(0, v * 1000, false);
        }
        for v in 101..=200 {
            b.transaction(0, v * 1000, v == 200);
        }
        b.error(1);
        b.queries.reads = 5;
        a.merge(&b);
        assert_eq!(a.transactions(), 200);
        assert_eq!(a.rollbacks(), 1);
        assert_eq!(a.errors(), 1);
        assert_eq!(a.queries.reads, 5);
        let l = LatencyMs::of(&a.total_latency());
        // 1..200 ms uniformly: p50 = 100 ms, p95 = 190 ms, max 200 ms (3 significant figures).
        assert!((l.p50 - 100.0).abs() < 0.1, "{l:?}");
        assert!((l.p95 - 190.0).abs() < 0.2, "{l:?}");
        assert!((l.max - 200.0).abs() < 0.2, "{l:?}");
        assert!((l.avg - 100.5).abs() < 0.1, "{l:?}");
    }

    #[test]
    fn interval_rates_use_its_duration() {
        let mut r = Recorder::new(1);
        for _ in 0..50 {
            r.transaction(0, 2000, false);
        }
        r.queries = QueryCounts { reads: 500, writes: 200, other: 100, ..Default::default() };
        let names = vec!["t".to_string()];
        let i = Interval::from_recorder(&r, &names, 10.0, 0.5, false, 4, 99.0);
        assert_eq!(i.tps, 100.0);
        assert_eq!(i.qps, 1600.0);
        assert_eq!(i.reads_per_s, 1000.0);
        assert!((i.p95_ms - 2.0).abs() < 0.01);
        assert_eq!(i.percentile, 99.0);
        assert!((i.percentile_ms - 2.0).abs() < 0.01);
    }

    #[test]
    fn histogram_round_trips() {
        let mut h = new_histogram();
        for v in [5, 50, 500, 5000, 50_000] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
    }

    #[test]
    fn empty_summary_is_zero_not_nan() {
        let s = Summary::from_recorder(&Recorder::new(1), &["t".into()], 0.0, 0);
        assert_eq!(s.tps, 0.0);
        assert_eq!(s.latency_ms, LatencyMs::default());
    }

    #[test]
    fn writes_are_counted_by_sysbench_rule() {
        let mut q = QueryCounts::default();
        q.statement(3, 0); // a SELECT
        q.statement(0, 1); // an UPDATE that changed a row
        q.statement(0, 0); // a DELETE of a missing row, or a server that reports none
        q.statement(1, 0); // a result set is a read even when it has no rows
        assert_eq!((q.reads, q.writes, q.other), (2, 1, 1));
    }
}
