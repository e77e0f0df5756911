//! The measuring side of a run, from the start until every client thread has ended:
//! each interval closed as the threads hand it over, with the OS figures, the servers'
//! status counters and a replica's lag over it; the warm-up followed; how the run ended
//! (its time, its events, the workload, a settled pool, a signal).

use super::{clock, cpu_span, lag, signals, status_probe, worker, Concluded, GroupCpu, Msg, RunContext, RunResult};
use super::{Arrivals, RunSpec, END_GRACE};
use crate::monitor;
use crate::stats::{Interval, Recorder};
use crate::target::Targets;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use worker::Control;

pub(super) struct Measuring<'a, F> {
    names: &'a [String],
    spec: &'a RunSpec,
    ctx: &'a RunContext,
    threads: u32,
    shards: u32,
    pub(super) start: Instant,
    watch: monitor::os::Watch,
    snapshot: monitor::os::Snapshot,
    /// The server host's node_exporter, scraped on a thread of its own.
    node: Option<monitor::node::Scraper>,
    /// CPU when the steady state began: this process's, and each target's server's.
    cpu_start: (f64, Vec<Option<f64>>),
    /// Several client groups share this process (a scale step's start line): each
    /// counts its own threads' CPU, this one's and its client threads'.
    group: Option<GroupCpu>,
    intervals: Vec<Interval>,
    clock: clock::IntervalClock,
    steady: clock::SteadyState,
    stall_rule: clock::StallRule,
    /// What the threads handed over after the last whole interval.
    tail: Recorder,
    tallies: Vec<worker::Tally>,
    /// Client threads that have ended.
    finals: u32,
    end: Instant,
    interrupted: bool,
    /// A second signal: what is recorded is saved, whatever is still in flight.
    pub(super) forced: bool,
    settled_at: Option<f64>,
    /// The latest lag sample (the largest over the targets), and each target's largest.
    lag: Option<f64>,
    node_lag: Vec<Option<f64>>,
    /// The servers' status counters, read shortly before each interval boundary (see
    /// monitor::status::Track).
    status: monitor::status::Track,
    on_interval: F,
}

impl<'a, F: FnMut(&Interval)> Measuring<'a, F> {
    /// Ready to start: the OS and the server host watched from now.
    pub(super) fn new(
        names: &'a [String],
        spec: &'a RunSpec,
        ctx: &'a RunContext,
        (threads, shards, targets): (u32, u32, usize),
        on_interval: F,
    ) -> Self {
        let watch = monitor::os::Watch::new(
            ctx.server_pids.iter().flatten().copied().collect(),
            ctx.data_dir.as_deref(),
            spec.power.clone(),
        );
        let snapshot = monitor::os::Snapshot::take(&watch);
        let node = spec.server_metrics.clone().map(|url| monitor::node::Scraper::start(url, spec.interval));
        let start = Instant::now();
        Measuring {
            names,
            spec,
            ctx,
            threads,
            shards,
            start,
            watch,
            snapshot,
            node,
            cpu_start: (0.0, Vec::new()),
            group: None,
            intervals: Vec::new(),
            clock: clock::IntervalClock::new(shards, names.len()),
            steady: clock::SteadyState::new(names.len(), spec.warmup.as_secs_f64()),
            stall_rule: clock::StallRule::default(),
            tail: Recorder::new(names.len()),
            tallies: Vec::new(),
            finals: 0,
            end: start,
            interrupted: false,
            forced: false,
            settled_at: None,
            lag: None,
            node_lag: vec![None; targets],
            status: monitor::status::Track::default(),
            on_interval,
        }
    }

    /// CPU is counted from now (the client threads have been told to go).
    pub(super) fn begin(&mut self, handles: &[std::thread::JoinHandle<()>]) {
        self.cpu_start = self.cpu_now();
        self.group = self.ctx.start_line.as_ref().map(|_| GroupCpu::start(handles));
    }

    /// This process's CPU, and each target's server's (None where not watched).
    fn cpu_now(&self) -> (f64, Vec<Option<f64>>) {
        let servers = self.ctx.server_pids.iter().map(|p| p.and_then(monitor::process_cpu_seconds)).collect();
        (monitor::self_cpu_seconds(), servers)
    }

    /// Closes the interval that ends `t` seconds in and lasts `duration`, from `rec`.
    fn emit(&mut self, rec: &Recorder, t: f64, duration: f64) {
        let warm = self.steady.in_warmup(t, duration);
        let mut iv = Interval::from_recorder(rec, self.names, t, duration, warm, self.threads, self.spec.percentile);
        iv.stall = self.stall_rule.judge(rec);
        iv.lag_s = self.lag;
        let start = self.start;
        let at = |secs: f64| (start + Duration::from_secs_f64(secs.max(0.0))).into_std();
        iv.status = self.status.close(at(t - duration), at(t));
        // OS figures over the same span, sampled as the interval is closed.
        let now = monitor::os::Snapshot::take(&self.watch);
        let mut os = monitor::os::OsSample::between(&self.snapshot, &now, &self.watch.power);
        os.server_host = self.node.as_mut().and_then(|n| n.close());
        iv.os = Some(os);
        self.snapshot = now;
        (self.on_interval)(&iv);
        if self.steady.warmup_ends_at(t, duration) {
            self.cpu_start = self.cpu_now();
            if let Some(g) = self.group.as_mut() {
                g.restart();
            }
        }
        self.steady.add(&iv, rec);
        self.intervals.push(iv);
    }

    /// A client thread's message. `control` stops the workers once the pool has settled.
    fn on_message(&mut self, msg: Msg, control: &Control) {
        match msg {
            Msg::Tick(k, rec) => {
                let step = self.spec.interval.as_secs_f64();
                for (k, rec) in self.clock.tick(k, &rec) {
                    self.emit(&rec, k as f64 * step, step);
                }
                // A warm-up run ends once the pool has settled: the workers stop
                // starting transactions, as at the deadline.
                if self.settled_at.is_none() && self.spec.settle.is_some_and(|r| r.settled(&self.intervals)) {
                    self.settled_at = self.intervals.last().map(|iv| iv.t);
                    control.stop();
                }
            }
            Msg::Final(rec, at, tallies, (index, cpu)) => {
                self.tallies.extend(tallies);
                if let Some(g) = self.group.as_mut() {
                    g.ended(index, cpu);
                }
                self.tail.merge(&rec);
                self.end = self.end.max(at);
                self.finals += 1;
            }
            Msg::Ready | Msg::ConnectFailed(_) => {}
        }
    }

    /// Each target's lag sample (None where unknown or no replica).
    fn on_lag(&mut self, sample: &[Option<f64>]) {
        self.lag = sample.iter().flatten().copied().reduce(f64::max);
        for (most, now) in self.node_lag.iter_mut().zip(sample) {
            if let Some(now) = *now {
                *most = Some(most.map_or(now, |m| m.max(now)));
            }
        }
    }

    /// A signal: the first lets the transactions in flight finish; a second stops at
    /// once (true).
    fn on_signal(&mut self, control: &Control) -> bool {
        if self.interrupted {
            eprintln!("interrupted again: saving what was recorded and stopping now");
            self.forced = true;
            return true;
        }
        self.interrupted = true;
        eprintln!(
            "\ninterrupted: finishing transactions in flight (at most {} s; again to stop at once), then saving the results",
            END_GRACE.as_secs()
        );
        control.stop();
        false
    }

    /// Measures until every client thread has ended (or a second signal), the probes
    /// sampling the servers beside, then closes the last, partial interval. Returns where
    /// the run ended (seconds from the start) and whether it ended at its --time.
    pub(super) async fn measure(
        &mut self,
        rx: &mut mpsc::UnboundedReceiver<Msg>,
        control: &Control,
        targets: &Targets,
        seen: &mut u64,
        status_conns: Vec<Option<mysql_async::Conn>>,
    ) -> (f64, bool) {
        let (spec, start) = (self.spec, self.start);
        let mut lag_probe =
            spec.replica.then(|| Box::pin(lag::sample(targets.all().to_vec(), Vec::new(), spec.interval)));
        // The first status reading is taken at the start, without holding it up.
        let mut status_probe =
            Some(Box::pin(status_probe::sample(targets.all().to_vec(), status_conns, start, spec.interval)));
        let mut status_first = true;
        while self.finals < self.shards {
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(msg) => self.on_message(msg, control),
                    None => break,
                },
                (conns, v) = async { lag_probe.as_mut().expect("guarded").await }, if lag_probe.is_some() => {
                    self.on_lag(&v);
                    lag_probe = Some(Box::pin(lag::sample(targets.all().to_vec(), conns, spec.interval)));
                }
                (conns, reading) = async { status_probe.as_mut().expect("guarded").await }, if status_probe.is_some() => {
                    match reading {
                        Some((r, at)) if status_first => self.status.first(r, at.into_std()),
                        Some((r, at)) => self.status.reading(r, at.into_std()),
                        None => {}
                    }
                    status_first = false;
                    let next = status_probe::next_reading(start, spec.interval, Instant::now());
                    status_probe = Some(Box::pin(status_probe::sample(targets.all().to_vec(), conns, next, spec.interval)));
                }
                _ = signals::recv(seen) => {
                    if self.on_signal(control) {
                        break;
                    }
                }
            }
        }
        if self.forced {
            self.end = Instant::now();
        }
        let step = spec.interval.as_secs_f64();
        self.clock.leftovers(&mut self.tail);
        let last_t = self.clock.last_complete() as f64 * step;
        let mut end_t = (self.end - start).as_secs_f64().max(last_t);
        // A run that reached its --time covers it to the end: in open loop the workers
        // leave as soon as no arrival is due before the deadline, a moment early, and
        // the last interval is still a whole one (sysbench prints it). A run that spent
        // its --events first lasted only as long as it ran.
        // A run whose every session ended itself (a script's event() returned true) also
        // lasted only as long as it ran, as sysbench counts it.
        let by_workload = control.ended_by_workload() >= self.threads as u64;
        let by_time =
            !(self.interrupted || self.forced || control.events_spent() || by_workload || self.settled_at.is_some());
        if let (Some(t), true, None) = (spec.time, by_time, control.fatal()) {
            end_t = end_t.max(t.as_secs_f64());
        }
        if end_t - last_t > 1e-3 || self.tail.transactions() > 0 {
            // The last interval's reading, taken now that the workers have ended, within
            // a second; not when the server may not answer (the run failed, stalled, left
            // transactions waiting or was forced out). Nothing ran since the end, so it
            // counts as taken then.
            let answers = !(self.forced || control.fatal().is_some() || control.stalled())
                && control.abandoned() == 0
                && control.lost_since().is_none();
            if let (Some(probe), true) = (status_probe.take(), answers) {
                drop(probe);
                if let Some(r) = status_probe::last(targets, spec.interval).await {
                    let until = (start + Duration::from_secs_f64(end_t)).into_std();
                    self.status.reading(r, until);
                }
            }
            let tail = std::mem::replace(&mut self.tail, Recorder::new(self.names.len()));
            self.emit(&tail, end_t, end_t - last_t);
        }
        (end_t, by_time)
    }

    /// The run's result, once the client threads have ended at `end_t` seconds.
    pub(super) fn conclude(
        self,
        (end_t, by_time): (f64, bool),
        targets: &Targets,
        arrivals: Option<&Mutex<Arrivals>>,
        control: &Control,
    ) -> RunResult {
        let now = self.cpu_now();
        let (cpu, per_server) = cpu_span(self.cpu_start, now, &self.ctx.server_pids, self.group.as_ref());
        let run = Concluded {
            names: self.names,
            intervals: self.intervals,
            tallies: self.tallies,
            spec: self.spec,
            threads: self.threads,
            targets,
            cpu,
            per_server,
            node_lag: self.node_lag,
            settled_at: self.settled_at,
            by_time,
            end_t,
            arrivals,
            control,
            start: self.start,
            interrupted: self.interrupted,
        };
        run.result(self.steady)
    }
}
