//! The interval clock: each client thread hands over its recorder at every interval
//! boundary; an interval is complete when every thread has handed over that boundary,
//! and intervals are emitted in order. Also the steady-state tally (the intervals
//! after warm-up) and the summary built from it. Plain functions and state: no
//! threads, no I/O, so they are tested alone.

use super::pacing;
use crate::monitor::{
    self,
    os::OsSample,
    status::{Sent, Unmoved},
};
use crate::stats::{Interval, Recorder, Summary};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::time::Instant;

/// A stall is at least this long: a transaction waiting while the server answers nothing.
pub const STALL_AFTER: Duration = Duration::from_secs(2);

/// One client thread's watch for a stalled server, updated at the ticker's checks
/// (about once a second, whatever the report interval): how long a transaction of this
/// thread has waited while the server answered nothing at all, on any thread. A slow
/// transaction while others finish (a lock wait, a TPC-C Delivery at saturation) is
/// latency, not a stall; an idle moment (think time, a slow open loop) is neither.
#[derive(Debug, Default)]
pub struct StallWatch {
    /// Transactions and errors counted in this interval's recorder at the last check.
    done_seen: u64,
    /// The longest stuck stretch seen at this interval's checks.
    stuck: Option<Duration>,
}

impl StallWatch {
    /// Whether this thread's transactions finished since the last check: `done` is what
    /// this interval's recorder has counted finished (transactions and errors).
    pub fn progressed(&mut self, done: u64) -> bool {
        let moved = done != self.done_seen;
        self.done_seen = done;
        moved
    }

    /// A check at `now`: `oldest` is when this thread's oldest transaction in flight
    /// started, `last_answer` when any thread last saw the server answer. Stuck is the
    /// time since the later of the two.
    pub fn check(&mut self, now: Instant, oldest: Option<Instant>, last_answer: Instant) {
        if let Some(o) = oldest {
            let stuck = now.saturating_duration_since(o.max(last_answer));
            self.stuck = Some(self.stuck.map_or(stuck, |s| s.max(stuck)));
        }
    }

    /// The interval's longest stuck stretch; the next interval's recorder starts at 0.
    pub fn hand_over(&mut self) -> Option<Duration> {
        self.done_seen = 0;
        self.stuck.take()
    }
}

/// Judges each merged interval, in order: a stall when a transaction waited
/// [`STALL_AFTER`] or more while the server answered nothing, and longer than the run's
/// p99 so far (a workload whose transactions take seconds is not stalled by taking
/// them). The p99 is taken from intervals that were not a stall, an outage, or the one
/// just after either (whose transactions waited through it), so a stall does not hide
/// the next one.
pub struct StallRule {
    so_far: hdrhistogram::Histogram<u64>,
    after_fault: bool,
}

impl Default for StallRule {
    fn default() -> Self {
        StallRule { so_far: crate::stats::new_histogram(), after_fault: false }
    }
}

impl StallRule {
    pub fn judge(&mut self, rec: &Recorder) -> bool {
        let usual = match self.so_far.is_empty() {
            true => Duration::ZERO,
            false => Duration::from_micros(self.so_far.value_at_quantile(0.99)),
        };
        let stall = rec.stuck.is_some_and(|d| d >= STALL_AFTER.max(usual));
        let fault = stall || rec.outage;
        if !fault && !self.after_fault {
            for t in &rec.types {
                self.so_far.add(&t.latency).expect("same bounds");
            }
        }
        self.after_fault = fault;
        stall
    }
}

/// Merges the client threads' interval recorders and releases each interval once
/// every thread has reported it.
pub struct IntervalClock {
    threads: u32,
    types: usize,
    /// Boundary k -> (threads that reported it, their merged recorder).
    pending: BTreeMap<u64, (u32, Recorder)>,
    next: u64,
}

impl IntervalClock {
    pub fn new(threads: u32, types: usize) -> Self {
        IntervalClock { threads, types, pending: BTreeMap::new(), next: 1 }
    }

    /// Thread's recorder for boundary `k`; returns the intervals now complete, in
    /// order, each with its boundary number.
    pub fn tick(&mut self, k: u64, rec: &Recorder) -> Vec<(u64, Recorder)> {
        let entry = self.pending.entry(k).or_insert_with(|| (0, Recorder::new(self.types)));
        entry.0 += 1;
        entry.1.merge(rec);
        let mut done = Vec::new();
        while self.pending.get(&self.next).is_some_and(|(n, _)| *n == self.threads) {
            let (_, rec) = self.pending.remove(&self.next).expect("checked");
            done.push((self.next, rec));
            self.next += 1;
        }
        done
    }

    /// The last complete boundary (0 before the first).
    pub fn last_complete(&self) -> u64 {
        self.next - 1
    }

    /// Boundaries some threads passed and others did not (an early stop): merged, for
    /// the run's last partial interval.
    pub fn leftovers(&mut self, tail: &mut Recorder) {
        for (_, (_, rec)) in std::mem::take(&mut self.pending) {
            tail.merge(&rec);
        }
    }
}

/// What the intervals after warm-up add up to.
pub struct SteadyState {
    pub recorder: Recorder,
    pub seconds: f64,
    pub max_backlog: u64,
    warmup: f64,
}

impl SteadyState {
    pub fn new(types: usize, warmup: f64) -> Self {
        SteadyState { recorder: Recorder::new(types), seconds: 0.0, max_backlog: 0, warmup }
    }

    /// Whether an interval ending at `t` after `duration` seconds starts in the warm-up.
    pub fn in_warmup(&self, t: f64, duration: f64) -> bool {
        pacing::in_warmup(t - duration, self.warmup)
    }

    /// Whether the warm-up ends at `t` (steady-state CPU is counted from there).
    pub fn warmup_ends_at(&self, t: f64, duration: f64) -> bool {
        self.in_warmup(t, duration) && !pacing::in_warmup(t, self.warmup)
    }

    /// Counts an interval: its backlog always, its transactions when after warm-up.
    pub fn add(&mut self, iv: &Interval, rec: &Recorder) {
        self.max_backlog = self.max_backlog.max(iv.backlog);
        if !iv.warmup {
            self.recorder.merge(rec);
            self.seconds += iv.duration;
        }
    }
}

pub use sizeup_model::run::Settle;

/// CPU seconds the client (and the server, when sizeup watches its process) used over
/// the steady state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuSpan {
    /// sizeup's CPU seconds: the whole process's, or with `group`, this client group's
    /// own threads'.
    pub client: f64,
    /// The whole process's over the same span, when `client` is a group's.
    pub group: Option<f64>,
    pub server: Option<f64>,
}

/// The shortest steady state whose host and server CPU figures are kept: /proc counts
/// them in 10 ms ticks, so a run that failed or spent its --events within moments
/// showed 5.7 cores used on a 2-CPU host.
pub const MIN_CPU_SPAN: f64 = 1.0;

/// Leaves out of `intervals` and `summary` the server's counters that did not move over
/// the whole run (warm-up included) while the work they count was sent
/// (`monitor::status::Unmoved`); returns which.
pub fn forget_unmoved(intervals: &mut [Interval], summary: &mut Summary) -> Unmoved {
    // The work sent over the intervals that have the server's figures (a gap is neither).
    let read = || intervals.iter().filter(|iv| iv.status.is_some());
    let sent = Sent {
        reads: read().map(|iv| iv.reads_per_s * iv.duration).sum(),
        other: read().map(|iv| iv.other_per_s * iv.duration).sum(),
    };
    let u = Unmoved::of(&intervals.iter().filter_map(|iv| iv.status.as_ref()).collect::<Vec<_>>(), sent);
    if u.any() {
        for s in intervals.iter_mut().filter_map(|iv| iv.status.as_mut()).chain(summary.observed.status.as_mut()) {
            s.forget(u);
        }
        summary.observed.notes.push(format!(
            "the server reports {} but they stayed 0 while {:.0} reads and {:.0} transaction statements ran: it \
             does not keep them, so they are left out (not 0){}",
            u.names(),
            sent.reads,
            sent.other,
            if u.innodb { "; its InnoDB settings do not apply either" } else { "" }
        ));
    }
    u
}

/// The run's summary: the steady-state tally, the host figures averaged over the
/// same intervals, and CPU per transaction.
pub fn summary(
    steady: &SteadyState,
    names: &[String],
    intervals: &[Interval],
    client_threads: u32,
    cpu: CpuSpan,
) -> Summary {
    let mut summary = Summary::from_recorder(&steady.recorder, names, steady.seconds, steady.max_backlog);
    let steady_os: Vec<&OsSample> = intervals.iter().filter(|iv| !iv.warmup).filter_map(|iv| iv.os.as_ref()).collect();
    summary.observed.os = monitor::os::mean(&steady_os);
    let steady_status: Vec<_> = intervals.iter().filter(|iv| !iv.warmup).filter_map(|iv| iv.status.as_ref()).collect();
    summary.observed.status = monitor::status::mean(&steady_status);
    let short = steady.seconds < MIN_CPU_SPAN;
    if short && (summary.observed.os.is_some() || cpu.server.is_some()) {
        summary.observed.os = None;
        summary.observed.notes.push(format!(
            "measured over {:.2} s: too short for host and server CPU figures (under {MIN_CPU_SPAN} s), left out",
            steady.seconds
        ));
    }
    // A server that made no progress for a while (stopped, stalled or lost) was not held
    // back by CPU: figures averaged over that time say nothing of starvation.
    let frozen = monitor::os::frozen_note(summary.observed.os.as_ref());
    let faulted = intervals.iter().any(|iv| !iv.warmup && (iv.stall || iv.outage));
    if frozen.is_none() && !faulted {
        summary.observed.notes.extend(monitor::os::load_generator_note(summary.observed.os.as_ref(), client_threads));
        summary.observed.notes.extend(monitor::os::other_processes_note(summary.observed.os.as_ref()));
    }
    summary.observed.notes.extend(frozen);
    summary.reconnect_failures = intervals.iter().map(|iv| iv.reconnect_failures).sum();
    summary.outage_intervals = intervals.iter().filter(|iv| iv.outage).count() as u64;
    summary.stall_intervals = intervals.iter().filter(|iv| iv.stall && !iv.outage).count() as u64;
    summary.observed.max_lag_s = intervals.iter().filter_map(|iv| iv.lag_s).reduce(f64::max);
    if let Some(why) = summary.not_capacity() {
        summary.observed.notes.push(why);
    }
    if summary.transactions > 0 {
        let txns = summary.transactions as f64;
        summary.client_cpu_us_per_txn = Some(cpu.client * 1e6 / txns);
        if let Some(process) = cpu.group {
            summary.client_cpu_scope = crate::stats::CpuScope::Group;
            summary.process_cpu_us_per_txn = Some(process * 1e6 / txns);
        }
        summary.server_cpu_us_per_txn = cpu.server.filter(|_| !short).map(|s| s * 1e6 / txns);
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_hit(hit: Option<f64>, tps: f64) -> Interval {
        Interval {
            tps,
            transactions: tps as u64,
            status: hit
                .map(|h| crate::monitor::status::StatusSample { buffer_pool_hit_ratio: Some(h), ..Default::default() }),
            ..Default::default()
        }
    }

    #[test]
    fn the_warm_up_lasts_until_the_hit_ratio_settles() {
        let rule = Settle::new(3.0, 1.0);
        assert_eq!(rule.window, 3);
        // A cold pool filling: misses halve each second, then hold at 2 %.
        let mut ivs: Vec<Interval> = Vec::new();
        let mut settled_at = None;
        for (i, miss) in [0.6, 0.3, 0.15, 0.08, 0.04, 0.02, 0.02, 0.021, 0.02, 0.019, 0.02].iter().enumerate() {
            ivs.push(with_hit(Some(1.0 - miss), 1000.0));
            if settled_at.is_none() && rule.settled(&ivs) {
                settled_at = Some(i + 1);
            }
        }
        // Two windows at the 2 % floor (intervals 6-11) first agree; at 10 the window
        // before still held the 4 % second.
        assert_eq!(settled_at, Some(11));
        // A pool whose misses still fall by a third every window never settles.
        let falling: Vec<Interval> = (0..12).map(|i| with_hit(Some(1.0 - 0.5 * 0.87f64.powi(i)), 900.0)).collect();
        assert!(!(6..=12).any(|n| rule.settled(&falling[..n])));
        // A server without the counters: throughput settles instead.
        let flat: Vec<Interval> = (0..6).map(|i| with_hit(None, 1000.0 + i as f64)).collect();
        assert!(rule.settled(&flat));
        let outage: Vec<Interval> = (0..6).map(|i| with_hit(None, if i == 4 { 0.0 } else { 1000.0 })).collect();
        assert!(!rule.settled(&outage));
    }

    #[test]
    fn a_slow_transaction_beside_others_that_finish_is_not_a_stall() {
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        // One transaction in flight since 0.5 s; another thread saw answers at every
        // check: the server answered all along.
        let mut slow = StallWatch::default();
        for s in [1.0, 2.0, 3.0, 4.0] {
            slow.check(at(s), Some(at(0.5)), at(s));
        }
        assert_eq!(slow.hand_over(), Some(Duration::ZERO));
        // Nothing answered anywhere since 1 s, a transaction waiting since 0.5 s.
        let mut frozen = StallWatch::default();
        for s in [2.0, 3.0, 4.0] {
            frozen.check(at(s), Some(at(0.5)), at(1.0));
        }
        assert_eq!(frozen.hand_over(), Some(Duration::from_secs(3)));
        // Idle (think time, a slow open loop): nothing to wait for.
        let mut idle = StallWatch::default();
        idle.check(at(4.0), None, at(0.0));
        assert_eq!(idle.hand_over(), None);
        // stall_missed_in_open_loop: a transaction sent into a freeze that began before
        // it waits from its own start, however long ago the last answer was.
        let mut late = StallWatch::default();
        late.check(at(9.0), Some(at(8.5)), at(1.0));
        assert_eq!(late.hand_over(), Some(Duration::from_millis(500)));
        assert!(late.progressed(3) && !late.progressed(3) && late.progressed(4));

        let with = |stuck: Option<Duration>| Recorder { stuck, ..Recorder::new(1) };
        let mut merged = with(Some(Duration::from_secs(3)));
        merged.merge(&with(None));
        merged.merge(&with(Some(Duration::ZERO)));
        assert_eq!(merged.stuck, Some(Duration::from_secs(3)), "the longest wait through silence");

        let mut rule = StallRule::default();
        assert!(rule.judge(&with(Some(Duration::from_secs(2)))), "2 s with nothing answered");
        assert!(!rule.judge(&with(Some(Duration::from_millis(1900)))));
        assert!(!rule.judge(&with(None)));
    }

    #[test]
    fn a_stall_outlasts_the_runs_own_slow_transactions() {
        let mut rule = StallRule::default();
        let mut slow = Recorder::new(1);
        for _ in 0..100 {
            slow.transaction(0, 10_000_000, false); // a script's 10-s queries
        }
        assert!(!rule.judge(&slow));
        let stuck = |s| Recorder { stuck: Some(Duration::from_secs(s)), ..Recorder::new(1) };
        assert!(!rule.judge(&stuck(5)), "shorter than the run's p99: its own pace");
        assert!(rule.judge(&stuck(12)));
    }

    /// A stall's own late transactions (and the interval after it) do not raise the bar
    /// for the next stall.
    #[test]
    fn a_stall_does_not_hide_the_next_one() {
        let mut rule = StallRule::default();
        let fast = || {
            let mut r = Recorder::new(1);
            for _ in 0..50 {
                r.transaction(0, 2_000, false);
            }
            r
        };
        assert!(!rule.judge(&fast()));
        let mut froze = Recorder { stuck: Some(Duration::from_secs(5)), ..Recorder::new(1) };
        froze.transaction(0, 5_000_000, false);
        assert!(rule.judge(&froze));
        let mut after = fast();
        for _ in 0..50 {
            after.transaction(0, 5_000_000, false); // what waited through it
        }
        assert!(!rule.judge(&after));
        assert!(rule.judge(&Recorder { stuck: Some(Duration::from_secs(3)), ..Recorder::new(1) }));
    }

    #[test]
    fn a_stall_inside_a_long_report_interval_is_seen() {
        // --report-interval 10: the watch is checked every second, and a 4-s freeze in
        // the middle of the interval is the interval's stuck stretch.
        let t0 = Instant::now();
        let mut w = StallWatch::default();
        let mut last = t0;
        for s in 1..=10u64 {
            let now = t0 + Duration::from_secs(s);
            let frozen = (4..=7).contains(&s);
            if !frozen {
                last = now;
            }
            // In the freeze, the oldest transaction in flight is one sent at 3 s.
            let oldest = if frozen { t0 + Duration::from_secs(3) } else { now - Duration::from_millis(1) };
            w.check(now, Some(oldest), last);
        }
        assert_eq!(w.hand_over(), Some(Duration::from_secs(4)));
    }

    fn rec(txns: u64) -> Recorder {
        let mut r = Recorder::new(1);
        for _ in 0..txns {
            r.transaction(0, 1000, false);
        }
        r
    }

    #[test]
    fn an_interval_waits_for_every_thread_and_comes_out_in_order() {
        let mut clock = IntervalClock::new(2, 1);
        assert!(clock.tick(1, &rec(3)).is_empty(), "one of two threads");
        // Thread 2 runs ahead: boundary 2 must not come out before boundary 1.
        assert!(clock.tick(2, &rec(5)).is_empty());
        let done = clock.tick(1, &rec(4));
        assert_eq!(done.iter().map(|(k, r)| (*k, r.transactions())).collect::<Vec<_>>(), [(1, 7)]);
        let done = clock.tick(2, &rec(1));
        assert_eq!(done.iter().map(|(k, r)| (*k, r.transactions())).collect::<Vec<_>>(), [(2, 6)]);
        assert_eq!(clock.last_complete(), 2);
    }

    #[test]
    fn boundaries_only_some_threads_reached_go_to_the_tail() {
        let mut clock = IntervalClock::new(3, 1);
        clock.tick(1, &rec(2));
        clock.tick(1, &rec(2));
        clock.tick(2, &rec(1));
        let mut tail = rec(10);
        clock.leftovers(&mut tail);
        assert_eq!(tail.transactions(), 15);
        assert_eq!(clock.last_complete(), 0);
        assert!(clock.tick(3, &rec(1)).is_empty(), "nothing left pending after leftovers");
    }

    #[test]
    fn warm_up_intervals_are_left_out_of_the_steady_state() {
        let mut steady = SteadyState::new(1, 2.0);
        let names = vec!["t".to_string()];
        let mut intervals = Vec::new();
        for t in 1..=5 {
            let t = t as f64;
            let r = rec(t as u64 * 10);
            let warm = steady.in_warmup(t, 1.0);
            assert_eq!(steady.warmup_ends_at(t, 1.0), t == 2.0, "t {t}");
            let mut iv = Interval::from_recorder(&r, &names, t, 1.0, warm, 1, 95.0);
            iv.backlog = t as u64;
            steady.add(&iv, &r);
            intervals.push(iv);
        }
        // Intervals ending at 3, 4, 5 s count: 30 + 40 + 50 transactions over 3 s.
        assert_eq!(steady.recorder.transactions(), 120);
        assert_eq!(steady.seconds, 3.0);
        assert_eq!(steady.max_backlog, 5, "backlog is watched through the warm-up too");
        let s = summary(&steady, &names, &intervals, 1, CpuSpan { client: 0.012, group: None, server: Some(0.06) });
        assert_eq!(s.transactions, 120);
        assert!((s.tps - 40.0).abs() < 1e-9, "{}", s.tps);
        assert!((s.client_cpu_us_per_txn.unwrap() - 100.0).abs() < 1e-6);
        assert!((s.server_cpu_us_per_txn.unwrap() - 500.0).abs() < 1e-6);
        let empty = summary(&SteadyState::new(1, 0.0), &names, &[], 1, CpuSpan::default());
        assert_eq!((empty.transactions, empty.client_cpu_us_per_txn), (0, None));
    }

    /// a_frozen_server_gets_a_starved_of_cpu_note: a SIGSTOPped server uses no CPU while
    /// other programs keep a shared host busy, and the run said "the server was starved
    /// by programs outside the test". Stopped (state T) is frozen, and a server that
    /// stalled made no progress to starve: neither gets a starvation note.
    #[test]
    fn a_frozen_server_gets_a_starved_of_cpu_note() {
        let names = vec!["t".to_string()];
        let run = |stopped: bool, stall: bool| {
            let mut steady = SteadyState::new(1, 0.0);
            let mut intervals = Vec::new();
            for t in 1..=4 {
                let r = rec(if stall && t > 1 { 0 } else { 100 });
                let mut iv = Interval::from_recorder(&r, &names, t as f64, 1.0, false, 1, 95.0);
                iv.stall = stall && t > 1;
                // A 2-CPU host 98 % busy, the other programs' 1.5 cores of it; the server
                // used none.
                iv.os = Some(OsSample {
                    idle: 2.0,
                    host_cpus: Some(2),
                    server_cores: Some(0.0),
                    server_stopped: stopped && t > 1,
                    client_cores: 0.3,
                    other_cores: Some(1.5),
                    ..Default::default()
                });
                steady.add(&iv, &r);
                intervals.push(iv);
            }
            summary(&steady, &names, &intervals, 1, CpuSpan { client: 1.2, group: None, server: Some(0.0) })
                .observed
                .notes
        };
        let starved = |notes: &[String]| notes.iter().any(|n| n.contains("server was starved"));
        let stopped = run(true, true);
        assert!(!starved(&stopped), "{stopped:?}");
        assert!(stopped.iter().any(|n| n.starts_with(monitor::os::FROZEN) && n.contains("frozen")), "{stopped:?}");
        // Stopped between two stall checks, or stalled on a hung disk: no starvation either.
        assert!(!starved(&run(true, false)));
        let stalled = run(false, true);
        assert!(!starved(&stalled) && stalled.iter().any(|n| n.contains("stalled")), "{stalled:?}");
        // A server that ran, on a host others kept busy, was starved.
        assert!(starved(&run(false, false)));
    }
}
