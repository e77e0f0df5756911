//! Running a workload: client threads, the interval clock, warm-up, and the summary.
//!
//! Workers are async tasks spread over a few OS threads (`client_threads`), each thread
//! a single-threaded runtime: one thread wakes for many connections, which is what
//! keeps the client's CPU per query low on a box it shares with the server, and the
//! commands its connections have ready go out in one system call (`client::outbox`).
//! How many threads by default: `cli::request::default_client_threads`. Each thread
//! hands its recorder over at every interval boundary; this module merges them, emits
//! the interval with the OS figures and the server's status counters over it, and builds
//! the steady-state summary from the intervals after warm-up.

pub mod clock;
pub mod errors;
mod measuring;
pub mod pacing;
mod relay;
pub mod remote;
pub mod session;
pub mod worker;

use crate::monitor;
use crate::stats::{Interval, Recorder, Summary};
use crate::target::Targets;
use hdrhistogram::Histogram;
use pacing::Arrivals;
use session::Sessions;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use worker::{Control, Shard};

pub use sizeup_model::run::{RunSpec, DEFAULT_SERVER_LOST_TIMEOUT, DEFAULT_STATEMENT_TIMEOUT};

/// What one run learns about its place before it starts, beside the validated
/// [`RunSpec`] (which results store): nothing here is stored.
#[derive(Clone, Debug, Default)]
pub struct RunContext {
    /// Each target's server process (in the targets' order), when sizeup manages it:
    /// the servers' CPU per transaction is reported.
    pub server_pids: Vec<Option<i32>>,
    /// The server's data directory, when known: its device's I/O is sampled.
    pub data_dir: Option<std::path::PathBuf>,
    /// Runs that must start measuring together (the client groups of a scale step).
    pub start_line: Option<Arc<StartLine>>,
    /// Tables of the run's database that its statements must not change (sizeup did not
    /// make them), and what the script guard must know of the server besides. Only a
    /// script's run has any (a built-in knows its tables and checks them before it starts).
    pub watched: crate::watched::Watched,
    /// This process is an agent driving its share of a coordinator's run: what its
    /// client threads count is relayed, not measured here.
    pub share: Option<remote::Share>,
    /// Agents drive the run instead of this process's client threads.
    pub fleet: Option<Arc<dyn remote::Remote>>,
}

/// Lines several runs up so their clocks start at the same moment: each arrives when
/// its connections are up, and all go when the last arrives. A run that fails (or is
/// interrupted) before arriving calls `fail` (or `interrupt`), which releases the
/// others to give up too: waiting for a party that never comes would hang the step.
#[derive(Debug)]
pub struct StartLine {
    parties: usize,
    state: Mutex<(usize, Option<Ended>)>,
    cv: std::sync::Condvar,
}

impl StartLine {
    pub fn new(parties: usize) -> Arc<StartLine> {
        Arc::new(StartLine { parties, state: Mutex::new((0, None)), cv: std::sync::Condvar::new() })
    }

    /// Waits for every party; how the step ended instead when one of them failed or was
    /// interrupted before the start.
    pub fn arrive(&self) -> Result<(), Ended> {
        let mut g = self.state.lock().expect("not poisoned");
        g.0 += 1;
        self.cv.notify_all();
        while g.0 < self.parties && g.1.is_none() {
            g = self.cv.wait(g).expect("not poisoned");
        }
        g.1.map_or(Ok(()), Err)
    }

    pub fn fail(&self) {
        self.abort(Ended::Failed);
    }

    pub fn interrupt(&self) {
        self.abort(Ended::Interrupted);
    }

    fn abort(&self, how: Ended) {
        self.state.lock().expect("not poisoned").1.get_or_insert(how);
        self.cv.notify_all();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ended {
    Completed,
    Interrupted,
    Failed,
}

impl Ended {
    /// The status the store and reports show.
    pub fn status(self) -> sizeup_model::status::Status {
        match self {
            Ended::Completed => sizeup_model::status::Status::Completed,
            Ended::Interrupted => sizeup_model::status::Status::Interrupted,
            Ended::Failed => sizeup_model::status::Status::Failed,
        }
    }

    /// The process's exit code for a run or study that ended so.
    pub fn exit_code(self) -> i32 {
        match self {
            Ended::Completed => 0,
            Ended::Interrupted if TERMINATED.load(std::sync::atomic::Ordering::Relaxed) => crate::EXIT_TERMINATED,
            Ended::Interrupted => crate::EXIT_INTERRUPTED,
            Ended::Failed => 1,
        }
    }
}

/// Set when a run was stopped by SIGTERM (exit code 143 instead of Ctrl-C's 130).
pub static TERMINATED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How long transactions in flight at `--time` (or at Ctrl-C, SIGTERM or a fatal error)
/// may take to finish; a transaction still waiting then is abandoned and the run fails.
pub const END_GRACE: Duration = Duration::from_secs(5);

/// SIGINT and SIGTERM as the process receives them, counted by sizeup's own handler
/// (installed by the first run and kept for the process's life), so a signal that
/// arrives between runs (between a study's steps) is not lost, as it would be with a
/// listener that exists only while a run does. A second signal while one is still
/// pending ends the process at once.
mod signals {
    use std::sync::atomic::{AtomicU64, Ordering};

    static RECEIVED: AtomicU64 = AtomicU64::new(0);
    static HANDLED: AtomicU64 = AtomicU64::new(0);
    /// Signals some run took: the other runs of the process (a step's client groups)
    /// see it change and stop too.
    static EPOCH: AtomicU64 = AtomicU64::new(0);

    extern "C" fn on_signal(sig: libc::c_int) {
        if sig == libc::SIGTERM {
            super::TERMINATED.store(true, Ordering::Relaxed);
        }
        let before = RECEIVED.fetch_add(1, Ordering::SeqCst);
        if before > HANDLED.load(Ordering::SeqCst) {
            // Nobody took the first one: the user asked twice; go now.
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(if sig == libc::SIGTERM { crate::EXIT_TERMINATED } else { crate::EXIT_INTERRUPTED }) };
        }
    }

    pub fn install() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            for sig in [libc::SIGINT, libc::SIGTERM] {
                // SAFETY: a handler that only touches atomics (and may _exit).
                unsafe {
                    let mut action: libc::sigaction = std::mem::zeroed();
                    action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                    action.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut action.sa_mask);
                    libc::sigaction(sig, &action, std::ptr::null_mut());
                }
            }
        });
    }

    pub fn received() -> u64 {
        RECEIVED.load(Ordering::SeqCst)
    }

    /// Takes one pending signal, if there is one.
    pub fn take() -> bool {
        let handled = HANDLED.load(Ordering::SeqCst);
        let taken = RECEIVED.load(Ordering::SeqCst) > handled
            && HANDLED.compare_exchange(handled, handled + 1, Ordering::SeqCst, Ordering::SeqCst).is_ok();
        if taken {
            EPOCH.fetch_add(1, Ordering::SeqCst);
        }
        taken
    }

    /// The signals taken so far: what a run starts from.
    pub fn epoch() -> u64 {
        EPOCH.load(Ordering::SeqCst)
    }

    /// Waits for the next signal, this run's own or one another run of the process took
    /// after `seen` (checked every 50 ms on the coordinating thread only).
    pub async fn recv(seen: &mut u64) {
        loop {
            let taken = take();
            let now = epoch();
            if taken || now != *seen {
                *seen = now;
                return;
            }
            crate::timer::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

/// Whether a SIGINT or SIGTERM arrived since the last one a run handled (a study checks
/// between steps); takes it.
pub fn interrupt_pending() -> bool {
    signals::take()
}

/// Installs sizeup's SIGINT and SIGTERM handler before a run does, for work that must
/// see a signal outside one (a script's Lua: see `workload::script::bound`).
pub fn install_signal_handler() {
    signals::install();
}

/// SIGINT and SIGTERM received so far, taken or not (a watchdog sees a new one arrive).
pub fn signals_received() -> u64 {
    signals::received()
}

/// What every run in progress stores if the process must end at once (a script's call
/// that outlived its bound: `libc::_exit`, nothing unwinds). Each run holds its own
/// words while it is stored; the runs of a scale step run side by side in one process,
/// and an end of the process ends every one of them, so each says why.
pub mod last_words {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;

    type Words = Box<dyn Fn(&str, bool) + Send>;
    static HOOKS: Mutex<BTreeMap<u64, Words>> = Mutex::new(BTreeMap::new());
    static NEXT: AtomicU64 = AtomicU64::new(0);

    /// A run's words, held until it is dropped (the run stored its own ending).
    #[must_use = "the words are withdrawn when this is dropped"]
    pub struct Held(u64);

    impl Drop for Held {
        fn drop(&mut self) {
            HOOKS.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.0);
        }
    }

    /// Holds `f(why, interrupted)` for the run in progress.
    pub fn hold(f: impl Fn(&str, bool) + Send + 'static) -> Held {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        HOOKS.lock().unwrap_or_else(|p| p.into_inner()).insert(id, Box::new(f));
        Held(id)
    }

    /// Every run in progress says them, once.
    pub fn say(why: &str, interrupted: bool) {
        let hooks = std::mem::take(&mut *HOOKS.lock().unwrap_or_else(|p| p.into_inner()));
        for f in hooks.values() {
            f(why, interrupted);
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::sync::{Arc, Mutex};

        /// last_words_of_a_scale_step: each of a step's runs set one global slot, the
        /// last set won and the first to finish cleared it for the others, so a bound
        /// firing left the other instances' runs to read as abandoned.
        #[test]
        fn last_words_of_a_scale_step() {
            let said = Arc::new(Mutex::new(Vec::new()));
            let hold_as = |name: &'static str| {
                let said = said.clone();
                hold(move |why, _| said.lock().unwrap().push(format!("{name}: {why}")))
            };
            let (a, b, c) = (hold_as("a"), hold_as("b"), hold_as("c"));
            // `b` finished first: its words go, the others' stay.
            drop(b);
            say("the bound", false);
            say("again", false);
            let mut got = said.lock().unwrap().clone();
            got.sort();
            assert_eq!(got, ["a: the bound", "c: the bound"]);
            drop((a, c));
        }
    }
}

/// When the run in progress ended or is due to end (its `--time`, or the moment it was
/// stopped), for work that can hold a client thread where the loop cannot reach it (a
/// script's Lua, bounded to this plus [`END_GRACE`]). Runs of one scale step start
/// together and share it.
pub mod run_end {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    /// µs after [`base`]; `u64::MAX` while no end is known.
    static AT_US: AtomicU64 = AtomicU64::new(u64::MAX);

    fn base() -> Instant {
        static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        *BASE.get_or_init(Instant::now)
    }

    fn us(at: Instant) -> u64 {
        at.saturating_duration_since(base()).as_micros() as u64
    }

    /// A run is about to connect (no end yet) or has started (`Some(deadline)`).
    pub(super) fn reset(deadline: Option<Instant>) {
        AT_US.store(deadline.map_or(u64::MAX, us), Ordering::SeqCst);
    }

    /// The run was stopped now (a signal, a fatal error, its events spent).
    pub(super) fn stopped_now() {
        AT_US.fetch_min(us(Instant::now()), Ordering::SeqCst);
    }

    pub fn get() -> Option<Instant> {
        match AT_US.load(Ordering::SeqCst) {
            u64::MAX => None,
            at => Some(base() + Duration::from_micros(at)),
        }
    }
}

/// A run interrupted while it connected (or while its step's other groups did).
fn interrupted_before_the_start(names: &[String]) -> RunResult {
    RunResult {
        intervals: Vec::new(),
        summary: Summary::from_recorder(&Recorder::new(names.len()), names, 0.0, 0),
        histograms: Vec::new(),
        ended: Ended::Interrupted,
        fatal: None,
    }
}

pub struct RunResult {
    pub intervals: Vec<Interval>,
    pub summary: Summary,
    /// Steady-state latency per transaction type.
    pub histograms: Vec<(String, Histogram<u64>)>,
    pub ended: Ended,
    /// The fatal error that stopped the run, if one did.
    pub fatal: Option<String>,
}

/// Why a run did not get to measure, or a script's own code around it failed: what
/// happened after the run began is in its result (`ended`, `fatal`), not here.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// A connection could not be opened or prepared before the start.
    #[error("{0}")]
    Connect(String),
    /// A client thread or its runtime could not be started, or a thread stopped before
    /// the start.
    #[error("{0}")]
    Client(String),
    /// Another client group of this step failed before the start.
    #[error("another client group of this step failed before the start")]
    GroupFailed,
    /// A script's own code outside the worker loop (init, done, a loop of its own).
    #[error("{0}")]
    Script(String),
}

impl crate::error::LayerError for RunError {}

/// A client thread's word to the run's measuring.
pub enum Msg {
    Ready,
    ConnectFailed(RunError),
    Tick(u64, Recorder),
    /// A client thread's last tally, when it ended, its connections' tallies, and
    /// its index and own CPU seconds (read by itself: its clock goes with it).
    Final(Recorder, Instant, Vec<worker::Tally>, (usize, f64)),
}

/// The run's measuring's word to its client threads.
#[derive(Clone, Copy)]
pub enum Go {
    Wait,
    Start(Instant),
    Abort,
}

fn seed_for(base: u64, n: u64) -> u64 {
    // splitmix64 step: distinct, well-mixed streams per worker.
    let mut z = base.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The connections client thread `s` of `shards` drives, numbered over the whole run:
/// round robin deals connection i to server i mod N, so N servers share the connections
/// evenly whatever the number of client threads.
fn connections_of(threads: u32, shards: u32, s: u32) -> Vec<u32> {
    (0..threads).filter(|w| w % shards == s).collect()
}

/// The note a warm-up run ends with when the buffer pool's hit ratio settled.
pub const SETTLED: &str = "warm-up: the buffer pool's hit ratio settled";
/// The note a warm-up run ends with when its bound came first.
pub const NOT_SETTLED: &str = "warm-up: the buffer pool's hit ratio had not settled";

/// Runs `workload` against `targets` as `spec` says, calling `on_interval` with each
/// interval as soon as all client threads have handed it over.
pub fn run<W>(
    workload: Arc<W>,
    targets: &Targets,
    spec: &RunSpec,
    ctx: &RunContext,
    on_interval: impl FnMut(&Interval),
) -> Result<RunResult, RunError>
where
    W: Sessions + Send + Sync + 'static,
{
    let names = workload.transaction_names();
    let threads = spec.threads.max(1);
    let shards = spec.client_threads.clamp(1, threads);
    let control = Arc::new(Control::new(spec.events));
    // One arrival schedule for the whole run, as sysbench's single event queue: any idle
    // worker on any thread takes the next arrival.
    // An agent's share has its own schedule, independent of the other agents'; agents
    // that drive the run keep theirs.
    let seed = seed_for(spec.seed, remote::arrival_seed(ctx.share.as_ref().map_or(0, |s| s.index)));
    let arrivals = spec
        .rate
        .filter(|_| ctx.fleet.is_none())
        .map(|r| Arc::new(Mutex::new(Arrivals::new(r, crate::random::rng_from_seed(seed)))));
    // Signals taken from here on stop this run, whichever run of the process took them.
    let mut seen = signals::epoch();
    run_end::reset(None);
    let (Clients { handles, mut rx, go: go_tx }, shards) = match &ctx.fleet {
        Some(fleet) => (fleet.clone().start(spec, &control, names.len())?, fleet.parties() as u32),
        None => {
            let first = ctx.share.as_ref().map_or(0, |s| s.first);
            (start_clients(&workload, targets, spec, &control, &arrivals, (names.len(), first), shards)?, shards)
        }
    };
    if let Some(share) = &ctx.share {
        return relay::relay(share, handles, rx, go_tx, (shards, names.len()), spec, &control, arrivals.as_deref());
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RunError::Client(format!("cannot start the measuring runtime: {e}")))?;
    let result = rt.block_on(async {
        if !clients_ready(&mut rx, &go_tx, shards, ctx, &mut seen).await? {
            return Ok((interrupted_before_the_start(&names), false));
        }
        // The status probe's connections, opened before the start so that its first
        // reading is taken as soon as the run starts.
        let status_conns = status_probe::connect(targets.all()).await;
        if !arrive(ctx, &go_tx)? {
            return Ok((interrupted_before_the_start(&names), false));
        }
        let mut m = measuring::Measuring::new(&names, spec, ctx, (threads, shards, targets.len()), on_interval);
        run_end::reset(spec.time.map(|t| (m.start + t).into_std()));
        go_tx.send_replace(Go::Start(m.start));
        m.begin(&handles);
        let ended = m.measure(&mut rx, &control, targets, &mut seen, status_conns).await;
        let forced = m.forced;
        let mut result = m.conclude(ended, targets, arrivals.as_deref(), &control);
        if let Some(fleet) = &ctx.fleet {
            fleet.conclude(&mut result.summary);
        }
        Ok((result, forced))
    });
    match result {
        // Forced out: client threads still waiting on the server are left to the exit.
        Ok((r, true)) => Ok(r),
        result => {
            for h in handles {
                let _ = h.join();
            }
            result.map(|(r, _)| r)
        }
    }
}

/// The client threads, each with its share of the connections, waiting for the go.
pub struct Clients {
    pub handles: Vec<std::thread::JoinHandle<()>>,
    pub rx: mpsc::UnboundedReceiver<Msg>,
    pub go: watch::Sender<Go>,
}

fn start_clients<W>(
    workload: &Arc<W>,
    targets: &Targets,
    spec: &RunSpec,
    control: &Arc<Control>,
    arrivals: &Option<Arc<Mutex<Arrivals>>>,
    (types, first): (usize, u32),
    shards: u32,
) -> Result<Clients, RunError>
where
    W: Sessions + Send + Sync + 'static,
{
    let threads = spec.threads.max(1);
    let (tx, rx) = mpsc::unbounded_channel();
    let (go, go_rx) = watch::channel(Go::Wait);
    let mut handles = Vec::new();
    for s in 0..shards {
        // An agent's connections are numbered over the whole run, from its first.
        let workers: Vec<u32> = connections_of(threads, shards, s).into_iter().map(|w| w + first).collect();
        let (workload, targets, spec, control, tx, go_rx, arrivals) = (
            workload.clone(),
            targets.clone(),
            spec.clone(),
            control.clone(),
            tx.clone(),
            go_rx.clone(),
            arrivals.clone(),
        );
        handles.push(
            std::thread::Builder::new()
                .name(format!("{}-{s}", crate::monitor::os::CLIENT_THREAD))
                .spawn(move || {
                    client_thread(workload, workers, targets, spec, control, tx, go_rx, arrivals, types, s as usize)
                })
                .map_err(|e| RunError::Client(format!("cannot start a client thread: {e}")))?,
        );
    }
    Ok(Clients { handles, rx, go })
}

/// Waits until every client thread has its connections up. False when a signal came
/// first (interrupted, not failed: the caller stops as for any Ctrl-C); an error when a
/// thread could not connect. Either way the threads are told to give up.
async fn clients_ready(
    rx: &mut mpsc::UnboundedReceiver<Msg>,
    go: &watch::Sender<Go>,
    shards: u32,
    ctx: &RunContext,
    seen: &mut u64,
) -> Result<bool, RunError> {
    let mut ready = 0;
    signals::install();
    while ready < shards {
        let msg = tokio::select! {
            m = rx.recv() => m,
            _ = signals::recv(seen) => {
                go.send_replace(Go::Abort);
                if let Some(line) = &ctx.start_line {
                    line.interrupt();
                }
                eprintln!("interrupted while connecting; nothing was measured");
                return Ok(false);
            }
        };
        ready_or_abort(msg, go)?;
        ready += 1;
    }
    Ok(true)
}

/// A client thread's word while the run waits for its connections: Ok when it is ready;
/// else its threads are told to give up, and why is returned.
fn ready_or_abort(msg: Option<Msg>, go: &watch::Sender<Go>) -> Result<(), RunError> {
    let why = match msg {
        Some(Msg::Ready) => return Ok(()),
        Some(Msg::ConnectFailed(e)) => e,
        _ => RunError::Client("a client thread stopped before the run started".into()),
    };
    go.send_replace(Go::Abort);
    Err(why)
}

/// A scale step's client groups start measuring together: false when the step was
/// interrupted before all arrived, an error when another group failed. Blocking here is
/// fine: the client threads run on their own runtimes.
fn arrive(ctx: &RunContext, go: &watch::Sender<Go>) -> Result<bool, RunError> {
    let Some(line) = &ctx.start_line else { return Ok(true) };
    let arrived = line.arrive();
    if arrived.is_err() {
        go.send_replace(Go::Abort);
    }
    match arrived {
        Ok(()) => Ok(true),
        Err(Ended::Interrupted) => Ok(false),
        Err(_) => Err(RunError::GroupFailed),
    }
}

/// The run's CPU: sizeup's (this group's threads' when several groups share the
/// process), and the servers' when every watched one could be read; each server's.
fn cpu_span(
    start: (f64, Vec<Option<f64>>),
    end: (f64, Vec<Option<f64>>),
    server_pids: &[Option<i32>],
    group: Option<&GroupCpu>,
) -> (clock::CpuSpan, Vec<Option<f64>>) {
    let process = end.0 - start.0;
    let per_server: Vec<Option<f64>> = start.1.iter().zip(&end.1).map(|(a, b)| a.zip(*b).map(|(a, b)| b - a)).collect();
    let server = match server_pids.iter().any(Option::is_some) {
        true => server_pids.iter().zip(&per_server).filter(|(p, _)| p.is_some()).map(|(_, c)| *c).sum(),
        false => None,
    };
    let cpu = match group {
        Some(g) => clock::CpuSpan { client: g.seconds(), group: Some(process), server },
        None => clock::CpuSpan { client: process, group: None, server },
    };
    (cpu, per_server)
}

/// What the measuring loop leaves once every client thread has ended: the figures the
/// summary, its notes and the run's verdict are made from.
struct Concluded<'a> {
    names: &'a [String],
    intervals: Vec<Interval>,
    tallies: Vec<worker::Tally>,
    spec: &'a RunSpec,
    threads: u32,
    targets: &'a Targets,
    cpu: clock::CpuSpan,
    per_server: Vec<Option<f64>>,
    node_lag: Vec<Option<f64>>,
    settled_at: Option<f64>,
    /// The run ended at its --time (not by events, the workload, a signal or settling).
    by_time: bool,
    end_t: f64,
    arrivals: Option<&'a Mutex<Arrivals>>,
    control: &'a Control,
    start: Instant,
    interrupted: bool,
}

impl Concluded<'_> {
    /// The run's result: its summary with what a reader must know, and how it ended.
    fn result(self, steady: clock::SteadyState) -> RunResult {
        let Concluded { names, intervals, tallies, spec, threads, targets, cpu, control, .. } = &self;
        let (threads, control) = (*threads, *control);
        let mut summary = clock::summary(&steady, names, intervals, spec.client_threads, *cpu);
        let per_connection: Vec<(u64, f64)> =
            tallies.iter().map(|t| (t.transactions, t.busy_us as f64 / 1e6)).collect();
        // Connections a stalled run abandoned never report: no fairness from a part.
        if tallies.len() == threads as usize {
            summary.fairness = crate::stats::Fairness::of(&per_connection);
        }
        if targets.len() > 1 {
            summary.nodes = node_shares(targets, threads, tallies, &self.per_server, &self.node_lag, summary.seconds);
        }
        self.notes(&mut summary);
        let fatal = control.fatal().or_else(|| self.lost_or_stalled());
        if summary.transactions == 0 && fatal.is_none() {
            // A 0 tps that reads as a measurement: a 2-s TPC-C run with the spec's
            // keying and think times (10-20 s a transaction) was stored as NOPM 0.
            let advice = match self.by_time {
                true => "; run longer (pauses such as --delay or --think-time spec take seconds a transaction)",
                false => "",
            };
            summary.observed.notes.push(format!(
                "no transaction finished in the {:.1} s measured: there is no throughput figure here{advice}",
                summary.seconds
            ));
        }
        let ended = match (&fatal, self.interrupted) {
            (Some(_), _) => Ended::Failed,
            (None, true) => Ended::Interrupted,
            (None, false) => Ended::Completed,
        };
        let steady = steady.recorder;
        let histograms = names.iter().cloned().zip(steady.types.iter().map(|t| t.latency.clone())).collect();
        RunResult { intervals: self.intervals, summary, histograms, ended, fatal }
    }

    /// A warm-up's settling, and open-loop arrivals that never started.
    fn notes(&self, summary: &mut Summary) {
        let spec = self.spec;
        if let Some(t) = self.settled_at {
            summary.settled_after_s = Some(t);
            summary.observed.notes.push(format!("{SETTLED} after {t:.0} s"));
        } else if spec.settle.is_some() && self.by_time {
            summary.observed.notes.push(format!("{NOT_SETTLED} in the {:.0} s allowed", self.end_t));
        }
        let Some(a) = self.arrivals else { return };
        // Arrivals due before the run's end (its deadline, or the stop) never started.
        let until = spec.time.map_or(self.end_t, |t| t.as_secs_f64().min(self.end_t));
        summary.missed_arrivals = a.lock().expect("not poisoned").backlog(until);
        if summary.missed_arrivals > 0 {
            let ended = self.control.ended_by_workload();
            summary.observed.notes.push(match ended {
                0 => format!(
                    "{} arrivals due before the end never started (missed): the server did not hold --rate {}",
                    summary.missed_arrivals,
                    spec.rate.unwrap_or_default()
                ),
                _ => format!(
                    "{} arrivals due before the end never started (missed): {ended} of {} connection(s) \
                     had ended by the workload's own choice (event() returned true), so fewer were left to take them",
                    summary.missed_arrivals, self.threads
                ),
            });
        }
    }

    /// A server lost until the end, or transactions a stalled server never answered.
    fn lost_or_stalled(&self) -> Option<String> {
        if let Some(at) = self.control.lost_since() {
            return Some(format!(
                "the server was lost {:.1} s into the run and was not back when it ended",
                at.saturating_duration_since(self.start).as_secs_f64()
            ));
        }
        (self.control.abandoned() > 0).then(|| {
            format!(
                "{} transaction(s) still had no answer {} s after the run's end (a stalled server); they were abandoned",
                self.control.abandoned(),
                END_GRACE.as_secs()
            )
        })
    }
}

mod lag {
    use crate::target::Target;
    use std::time::Duration;

    /// Waits `every`, then reads each target's replication lag on its connection in
    /// `conns` (opened when missing or broken), bounded so a stalled replica cannot
    /// hold the run. Returns the connections for the next sample and each target's
    /// lag (None when unknown, or not a replica).
    pub async fn sample(
        targets: Vec<Target>,
        mut conns: Vec<Option<mysql_async::Conn>>,
        every: Duration,
    ) -> (Vec<Option<mysql_async::Conn>>, Vec<Option<f64>>) {
        crate::timer::sleep(every).await;
        conns.resize_with(targets.len(), || None);
        let reads = targets.into_iter().zip(conns).map(|(target, conn)| async move {
            let read = async {
                let mut c = match conn {
                    Some(c) => c,
                    None => target.connect_server().await.ok()?,
                };
                let lag = crate::target::replication_lag(&mut c).await.flatten();
                Some((c, lag))
            };
            match crate::timer::timeout(every.max(Duration::from_secs(1)), read).await {
                Ok(Some((c, lag))) => (Some(c), lag),
                _ => (None, None),
            }
        });
        futures_util::future::join_all(reads).await.into_iter().unzip()
    }
}

mod status_probe {
    use crate::monitor::status::Reading;
    use crate::target::Target;
    use std::time::Duration;
    use tokio::time::Instant;

    /// How long before an interval's boundary its reading is taken: enough for the
    /// answer to be in when the interval closes, little enough to leave the span whole.
    pub fn lead(every: Duration) -> Duration {
        (every / 10).min(Duration::from_millis(250))
    }

    /// When the next reading is due: `lead` before the first interval boundary that is
    /// still far enough ahead of `now`.
    pub fn next_reading(start: Instant, every: Duration, now: Instant) -> Instant {
        let ahead = (now + lead(every)).saturating_duration_since(start).as_secs_f64();
        let k = (ahead / every.as_secs_f64()).floor() + 1.0;
        start + every.mul_f64(k) - lead(every)
    }

    /// A reading now, on connections of its own, within a second (the last interval's,
    /// once the workers have ended).
    pub async fn last(targets: &crate::target::Targets, every: Duration) -> Option<Reading> {
        let last = async {
            let conns = connect(targets.all()).await;
            sample(targets.all().to_vec(), conns, Instant::now(), every).await
        };
        crate::timer::timeout(Duration::from_secs(1), last).await.ok()?.1.map(|(r, _)| r)
    }

    /// A control connection to each target (None where it cannot be opened in time).
    pub async fn connect(targets: &[Target]) -> Vec<Option<mysql_async::Conn>> {
        let opens = targets.iter().map(|t| async move {
            crate::timer::timeout(Duration::from_secs(2), t.connect_server()).await.ok().and_then(Result::ok)
        });
        futures_util::future::join_all(opens).await
    }

    /// Waits until `at`, then reads each target's status counters on its connection in
    /// `conns` (opened when missing or broken), bounded so a stalled server cannot hold
    /// the run. Returns the connections for the next reading and the counters summed
    /// over the targets with when they were read (the last target's query), None when
    /// any target could not be read.
    pub async fn sample(
        targets: Vec<Target>,
        mut conns: Vec<Option<mysql_async::Conn>>,
        at: Instant,
        every: Duration,
    ) -> (Vec<Option<mysql_async::Conn>>, Option<(Reading, Instant)>) {
        crate::timer::sleep_until(at).await;
        conns.resize_with(targets.len(), || None);
        let reads = targets.into_iter().zip(conns).map(|(target, conn)| async move {
            let read = async {
                let mut c = match conn {
                    Some(c) => c,
                    None => target.connect_server().await.ok()?,
                };
                let sent = Instant::now();
                let r = crate::monitor::status::read(&mut c).await.ok()?;
                Some((c, (r, sent)))
            };
            match crate::timer::timeout(every.max(Duration::from_secs(1)), read).await {
                Ok(Some((c, r))) => (Some(c), Some(r)),
                _ => (None, None),
            }
        });
        let (conns, readings): (Vec<_>, Vec<_>) = futures_util::future::join_all(reads).await.into_iter().unzip();
        let taken = readings.iter().flatten().map(|(_, sent)| *sent).max();
        let readings: Vec<Option<Reading>> = readings.into_iter().map(|r| r.map(|(r, _)| r)).collect();
        (conns, Reading::sum(&readings).zip(taken))
    }
}

/// What each server of a round-robin run served: its connections (i mod N), their
/// transactions after warm-up, its server's CPU and its largest lag.
fn node_shares(
    targets: &Targets,
    threads: u32,
    tallies: &[worker::Tally],
    cpu_seconds: &[Option<f64>],
    lag: &[Option<f64>],
    seconds: f64,
) -> Vec<crate::stats::NodeShare> {
    let n = targets.len();
    targets
        .all()
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let transactions =
                tallies.iter().filter(|c| c.connection as usize % n == k).map(|c| c.transactions).sum::<u64>();
            let per_s = |v: f64| if seconds > 0.0 { v / seconds } else { 0.0 };
            crate::stats::NodeShare {
                node: t.place(),
                connections: (0..threads).filter(|i| *i as usize % n == k).count() as u32,
                transactions,
                tps: per_s(transactions as f64),
                server_cores: cpu_seconds.get(k).copied().flatten().map(per_s),
                max_lag_s: lag.get(k).copied().flatten(),
                conflicts: None,
            }
        })
        .collect()
}

/// One client group's CPU: the measuring thread's own clock and its client threads'
/// clocks, read from here while they run and reported by each as it ends.
struct GroupCpu {
    clocks: Vec<Option<libc::clockid_t>>,
    start: Vec<f64>,
    end: Vec<Option<f64>>,
    own_start: f64,
}

impl GroupCpu {
    fn start(handles: &[std::thread::JoinHandle<()>]) -> Self {
        let clocks: Vec<_> = handles.iter().map(monitor::thread_clock).collect();
        let mut g = GroupCpu { end: vec![None; clocks.len()], start: vec![0.0; clocks.len()], clocks, own_start: 0.0 };
        g.restart();
        g
    }

    /// Counting starts now (the run's start, then the warm-up's end).
    fn restart(&mut self) {
        self.own_start = monitor::thread_cpu_seconds();
        for (s, c) in self.start.iter_mut().zip(&self.clocks) {
            // A thread that has already ended keeps its earlier start.
            if let Some(now) = c.and_then(monitor::clock_seconds) {
                *s = now;
            }
        }
    }

    fn ended(&mut self, index: usize, cpu: f64) {
        if let Some(e) = self.end.get_mut(index) {
            *e = Some(cpu);
        }
    }

    fn seconds(&self) -> f64 {
        let clients: f64 = self
            .start
            .iter()
            .zip(&self.end)
            .zip(&self.clocks)
            .map(|((s, e), c)| e.or_else(|| c.and_then(monitor::clock_seconds)).map_or(0.0, |e| (e - s).max(0.0)))
            .sum();
        clients + monitor::thread_cpu_seconds() - self.own_start
    }
}

/// Connections a client thread opens at the same time.
const CONNECTS_AT_ONCE: usize = 32;

#[allow(clippy::too_many_arguments)]
fn client_thread<W: Sessions>(
    workload: Arc<W>,
    workers: Vec<u32>,
    targets: Targets,
    spec: RunSpec,
    control: Arc<Control>,
    tx: mpsc::UnboundedSender<Msg>,
    mut go: watch::Receiver<Go>,
    arrivals: Option<Arc<Mutex<Arrivals>>>,
    types: usize,
    index: usize,
) {
    // One thread reports the shared arrival schedule's backlog.
    let reports_backlog = index == 0;
    // A closed loop's only steady timer is the ticker's: its runtime goes without a time
    // driver, which costs at every park (see crate::timer). A paced or delayed loop arms
    // a timer per transaction, best kept on its own thread's driver.
    let mut builder = tokio::runtime::Builder::new_current_thread();
    if spec.rate.is_none() && spec.delay.is_none() {
        crate::timer::use_shared_timers();
        builder.enable_io();
    } else {
        builder.enable_all();
    }
    let rt = match builder.build() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = tx.send(Msg::ConnectFailed(RunError::Client(format!("cannot start a client runtime: {e}"))));
            return;
        }
    };
    rt.block_on(async move {
        let connecting = workers.iter().map(|&w| {
            let mut session = workload.session(w, seed_for(spec.seed, w as u64));
            let target = targets.for_connection(w);
            async move { worker::connect(target, &mut session).await.map(|c| (w, session, c)) }
        });
        // A bounded number of connects at a time: thousands at once overflow the
        // server's listen backlog (a unix socket then refuses with EAGAIN).
        use futures_util::StreamExt;
        let all = futures_util::stream::iter(connecting).buffer_unordered(CONNECTS_AT_ONCE).collect::<Vec<_>>();
        let connected = tokio::select! {
            c = all => c,
            _ = go.wait_for(|g| matches!(g, Go::Abort)) => return,
        };
        let mut ready = Vec::new();
        for r in connected {
            match r {
                Ok(pair) => ready.push(pair),
                Err(e) => {
                    let _ = tx.send(Msg::ConnectFailed(RunError::Connect(e)));
                    return;
                }
            }
        }
        let _ = tx.send(Msg::Ready);
        let start = loop {
            match *go.borrow_and_update() {
                Go::Start(s) => break s,
                Go::Abort => return,
                Go::Wait => {}
            }
            if go.changed().await.is_err() {
                return;
            }
        };
        let shard = Shard {
            control,
            recorder: RefCell::new(Recorder::new(types)),
            arrivals,
            start,
            steady_from: start + steady_from(&spec),
            deadline: spec.time.map(|t| start + t),
            delay: spec.delay,
            retry_on: spec.retry_on.clone(),
            busy: (0..ready.len()).map(|_| Default::default()).collect(),
            stall_watch: Default::default(),
            losses_seen: Default::default(),
            late: Default::default(),
            server_lost_timeout: spec.server_lost_timeout,
            statement_timeout: spec.statement_timeout,
            ended_here: Default::default(),
        };
        let connections = ready.len();
        // Each worker and the ticker is polled only when its own waker fired: a join or
        // select would poll all of them (and the ticker's timer) at every answer.
        use futures_util::future::{Either, FutureExt};
        let all: futures_util::stream::FuturesUnordered<_> = ready
            .into_iter()
            .enumerate()
            .map(|(slot, (w, s, c))| {
                Either::Left(worker::run_worker(&shard, slot, w, targets.for_connection(w), s, c).map(Some))
            })
            .collect();
        all.push(Either::Right(ticker(&shard, spec.interval, &tx, types, reports_backlog).map(|()| None)));
        // Commands of all this thread's workers go out together (see client::outbox).
        let tallies = crate::client::outbox::batched(connections, async {
            // Moved in, so that the workers (and their connections) end with this block.
            let mut all = all;
            let mut tallies = Vec::with_capacity(connections);
            while tallies.len() < connections {
                match all.next().await {
                    Some(Some(ended)) => tallies.push(ended),
                    // The ticker ended first: the run is over, the workers are dropped.
                    _ => return Vec::new(),
                }
            }
            // This thread's sessions ended themselves while others go on (a replay's
            // short session): its ticker goes on handing over empty intervals, or no
            // interval of the run would be complete until its end, all of it one
            // interval in the warm-up (every_interval_completes_after_a_thread_is_done).
            let total = spec.threads as u64;
            let all_here = shard.ended_here.get() as usize == connections;
            while all_here && shard.control.ended_by_workload() < total {
                tokio::select! {
                    t = all.next() => if !matches!(t, Some(Some(_))) { break },
                    _ = crate::timer::sleep(WORKLOAD_END_CHECK) => {}
                }
            }
            tallies
        })
        .await;
        let rec = shard.hand_over(types);
        let _ = tx.send(Msg::Final(rec, Instant::now(), tallies, (index, monitor::thread_cpu_seconds())));
    });
}

/// Where a run's measured time begins: the first interval boundary at or after the
/// warm-up, as exec::clock counts it.
pub fn steady_from(spec: &RunSpec) -> Duration {
    spec.interval.mul_f64((spec.warmup.as_secs_f64() / spec.interval.as_secs_f64() - 1e-9).ceil().max(0.0))
}

/// How often a client thread whose sessions all ended looks whether the others have.
const WORKLOAD_END_CHECK: Duration = Duration::from_millis(100);

/// How often the ticker looks for a stall and for a transaction past `--statement-timeout`.
const STALL_CHECK: Duration = Duration::from_secs(1);

/// Hands the recorder over at every interval boundary before the deadline, marking
/// intervals the server was lost in (outage), how long transactions were stuck (checked
/// every [`STALL_CHECK`] up to the deadline and through the drain after it, so a long
/// `--report-interval`, the last partial interval and a stall after `--time` miss none)
/// and how far each hand-over was off schedule (a client not running on time), and fails
/// the run when a transaction waits past `--statement-timeout`. After the deadline or a
/// stop (other than that failure) it gives transactions in flight [`END_GRACE`] to
/// finish, then returns, which ends the thread's workers. The workers only store their
/// start time: the per-statement path has no timer of its own.
async fn ticker(shard: &Shard, interval: Duration, tx: &mpsc::UnboundedSender<Msg>, types: usize, backlog: bool) {
    let mut wake = shard.control.subscribe();
    let mut k = 1u64;
    // How late the previous boundary was handed over: an interval counts from that
    // hand-over to its own, so its span misses its length by the change in lateness.
    let mut was_late = Duration::ZERO;
    loop {
        let at = shard.start + interval.mul_f64(k as f64);
        // The last interval is watched up to the deadline and handed over with the
        // workers' final recorder.
        let last = shard.deadline.filter(|d| at >= *d);
        let until = last.unwrap_or(at);
        if shard.control.stopped() {
            break;
        }
        if last.is_some() && Instant::now() >= until {
            shard.late.set(Some(Instant::now().saturating_duration_since(until).abs_diff(was_late)));
            break;
        }
        let next = until.min(Instant::now() + STALL_CHECK);
        tokio::select! {
            _ = crate::timer::sleep_until(next) => {}
            _ = wake.changed() => break,
        }
        let now = Instant::now();
        // Woken far later than asked, sizeup itself was not running (stopped, starved):
        // answers wait unread in their sockets, so the server is not judged this round.
        if !overslept(next, now) && stall_check(shard, now) {
            break;
        }
        if now < until || last.is_some() {
            continue;
        }
        let late = now.saturating_duration_since(at);
        shard.late.set(Some(late.abs_diff(was_late)));
        was_late = late;
        let mut rec = shard.hand_over(types);
        if let Some(a) = shard.arrivals.as_ref().filter(|_| backlog) {
            rec.backlog = a.lock().expect("not poisoned").backlog((now - shard.start).as_secs_f64());
            rec.concurrency = shard.busy.iter().filter(|b| b.get().is_some()).count() as u64;
        }
        let _ = tx.send(Msg::Tick(k, rec));
        k += 1;
    }
    // A stalled run ends at once: waiting longer only adds a long last interval of
    // nothing to its figures (the stall was already waited out past --statement-timeout).
    if !shard.control.stalled() {
        // The grace counts only time sizeup ran: from now, not the deadline, and longer
        // by any sleep sizeup overslept (a_paused_client_is_not_a_stalled_server: after
        // `kill -STOP`, the server's answers waited unread and were blamed on it). The
        // drain is watched as the run was: a server that stalls after --time stalls the
        // last interval, whose transactions wait through it.
        let mut grace = Instant::now() + END_GRACE;
        loop {
            let next = grace.min(Instant::now() + STALL_CHECK);
            if Instant::now() >= grace {
                break;
            }
            crate::timer::sleep_until(next).await;
            let now = Instant::now();
            if overslept(next, now) {
                grace += now - next;
            } else if stall_check(shard, now) {
                break;
            }
        }
    }
    let waiting = shard.busy.iter().filter(|b| b.get().is_some()).count() as u64;
    if waiting > 0 {
        shard.control.abandon(waiting);
    }
}

/// Whether a sleep until `planned` ended so much later (`now`) that sizeup was not
/// running meanwhile: stopped by a signal, or starved of CPU far beyond a timer's slack.
fn overslept(planned: Instant, now: Instant) -> bool {
    now.saturating_duration_since(planned) > Duration::from_millis(500)
}

/// One check at `now`: fails the run on a transaction past `--statement-timeout` (and
/// says so: true), else updates the interval's watch for a stalled server.
fn stall_check(shard: &Shard, now: Instant) -> bool {
    let oldest = shard.busy.iter().filter_map(|b| b.get()).min();
    if let Some(since) = oldest.filter(|s| now.saturating_duration_since(*s) >= shard.statement_timeout) {
        shard.control.fail_stalled(format!(
            "a transaction had no answer from the server for {:.0} s (--statement-timeout): the server stalled",
            now.saturating_duration_since(since).as_secs_f64()
        ));
        return true;
    }
    let done = {
        let rec = shard.recorder.borrow();
        rec.transactions() + rec.errors()
    };
    let mut watch = shard.stall_watch.borrow_mut();
    if watch.progressed(done) {
        shard.control.answered(now.saturating_duration_since(shard.start).as_micros() as u64);
    }
    let last_answer = shard.start + Duration::from_micros(shard.control.last_answer_us());
    watch.check(now, oldest, last_answer);
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Target;

    fn server(port: u16) -> Target {
        Target {
            host: "127.0.0.1".into(),
            port,
            socket: None,
            user: "u".into(),
            password: None,
            database: "d".into(),
            tls: Default::default(),
        }
    }

    /// scale_out_hung_after_sigterm_at_step_start: the group that took the signal while
    /// connecting gave up without a word to the start line, and the step's other groups
    /// waited there for ever (a second SIGTERM did nothing: the first was "handled").
    #[test]
    fn a_group_interrupted_before_the_start_releases_the_others() {
        let line = StartLine::new(3);
        let waiting: Vec<_> = (0..2)
            .map(|_| {
                let line = line.clone();
                std::thread::spawn(move || line.arrive())
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        line.interrupt();
        line.fail(); // a later failure does not change what the step was
        for w in waiting {
            assert!(matches!(w.join().unwrap(), Err(Ended::Interrupted)));
        }
        let all = StartLine::new(1);
        assert!(all.arrive().is_ok());
    }

    #[test]
    fn round_robin_deals_connections_counted_over_the_whole_run() {
        let two = Targets::new(vec![server(1), server(2)]);
        for shards in 1..=8 {
            // Every connection once, whatever the client threads.
            let mut all: Vec<u32> = (0..shards).flat_map(|s| connections_of(8, shards, s)).collect();
            all.sort();
            assert_eq!(all, (0..8).collect::<Vec<_>>(), "{shards} client threads");
            // 8 connections over 2 servers are 4 + 4: connection i to server i mod 2.
            let ports: Vec<u16> = all.iter().map(|&i| two.for_connection(i).port).collect();
            assert_eq!(ports.iter().filter(|&&p| p == 1).count(), 4, "{shards} client threads");
            assert_eq!(ports.iter().filter(|&&p| p == 2).count(), 4, "{shards} client threads");
        }
        assert_eq!([0, 1, 2, 3, 4].map(|i| two.for_connection(i).port), [1, 2, 1, 2, 1]);
        // Three servers, 7 connections: 3 + 2 + 2, node 0 first.
        let three = Targets::new(vec![server(1), server(2), server(3)]);
        let shares = node_shares(&three, 7, &[], &[], &[], 1.0);
        assert_eq!(shares.iter().map(|s| s.connections).collect::<Vec<_>>(), [3, 2, 2]);
        // One server is the run as it always was: every connection to it.
        let one: Targets = server(9).into();
        assert!((0..5).all(|i| one.for_connection(i).port == 9));
    }

    /// A client thread's shard on tokio's paused clock: one connection, 1-s intervals.
    fn shard(time: Duration) -> Shard {
        let start = Instant::now();
        Shard {
            control: Arc::new(Control::new(None)),
            recorder: RefCell::new(Recorder::new(1)),
            arrivals: None,
            start,
            steady_from: start,
            deadline: Some(start + time),
            delay: None,
            retry_on: Default::default(),
            busy: vec![Default::default()],
            stall_watch: Default::default(),
            losses_seen: Default::default(),
            late: Default::default(),
            server_lost_timeout: Duration::from_secs(30),
            statement_timeout: Duration::from_secs(60),
            ended_here: Default::default(),
        }
    }

    /// The ticker's hand-overs, then the final one (the last interval), each as
    /// (boundary, recorder); boundary 0 is the final.
    fn hand_overs(shard: &Shard, mut rx: mpsc::UnboundedReceiver<Msg>) -> Vec<(u64, Recorder)> {
        let mut out = Vec::new();
        while let Ok(Msg::Tick(k, rec)) = rx.try_recv() {
            out.push((k, rec));
        }
        out.push((0, shard.hand_over(1)));
        out
    }

    /// a_stall_after_time_is_untagged: the server froze half a second before --time and
    /// stayed frozen 3.5 s into the drain. The stall checks stopped at the deadline, so
    /// the last interval's transaction had waited 0.5 s as far as they knew, and the
    /// interval (its 4-s transaction counted in it) came out untagged.
    #[tokio::test(start_paused = true)]
    async fn a_stall_after_time_is_untagged() {
        let s = shard(Duration::from_secs(2));
        let (tx, rx) = mpsc::unbounded_channel();
        s.busy[0].set(Some(s.start + Duration::from_millis(1500)));
        let server_back = async {
            crate::timer::sleep_until(s.start + Duration::from_secs(5)).await;
            s.recorder.borrow_mut().transaction(0, 3_500_000, false);
            s.busy[0].set(None);
        };
        tokio::join!(ticker(&s, Duration::from_secs(1), &tx, 1, false), server_back);
        assert_eq!(s.control.abandoned(), 0, "answered within the grace");
        let all = hand_overs(&s, rx);
        let (k, last) = all.last().unwrap();
        assert_eq!(*k, 0);
        assert!(last.stuck >= Some(clock::STALL_AFTER), "{:?}", last.stuck);
        let mut rule = clock::StallRule::default();
        assert!(all.iter().map(|(_, r)| rule.judge(r)).collect::<Vec<_>>().ends_with(&[true]));
    }

    /// How the ticker marks a client that was not running: frozen from 1.5 s to 5 s (the
    /// paused clock jumps as a stopped process's would), it handed boundaries 2 to 5 over
    /// at 5 s; each of those intervals counted a span that missed its second by at least
    /// one, the next one is on time again.
    #[tokio::test(start_paused = true)]
    async fn a_client_that_ran_late_marks_the_intervals_it_counted_off_schedule() {
        let s = shard(Duration::from_secs(7));
        let (tx, rx) = mpsc::unbounded_channel();
        let freeze = async {
            crate::timer::sleep_until(s.start + Duration::from_millis(1500)).await;
            tokio::time::advance(Duration::from_millis(3500)).await;
        };
        tokio::join!(ticker(&s, Duration::from_secs(1), &tx, 1, false), freeze);
        let late: Vec<(u64, f64)> = hand_overs(&s, rx)
            .iter()
            .map(|(k, r)| (*k, (r.late.unwrap_or_default().as_secs_f64() * 100.0).round() / 100.0))
            .collect();
        assert_eq!(late, [(1, 0.0), (2, 3.0), (3, 1.0), (4, 1.0), (5, 1.0), (6, 0.0), (0, 0.0)]);
        let marked = |secs: f64| {
            let rec = Recorder { late: Some(Duration::from_secs_f64(secs)), ..Recorder::new(1) };
            Interval::from_recorder(&rec, &["t".into()], 3.0, 1.0, false, 1, 95.0).client_late_s
        };
        assert_eq!((marked(1.0), marked(0.3), marked(0.2)), (Some(1.0), Some(0.3), None));
    }

    #[test]
    fn status_readings_are_due_shortly_before_each_boundary() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        let at = |s: f64| start + Duration::from_secs_f64(s);
        // 100 ms before each 1-s boundary; one that is missed waits for the next.
        assert_eq!(status_probe::next_reading(start, second, start), at(0.9));
        assert_eq!(status_probe::next_reading(start, second, at(0.85)), at(0.9));
        assert_eq!(status_probe::next_reading(start, second, at(0.95)), at(1.9));
        assert_eq!(status_probe::next_reading(start, second, at(3.2)), at(3.9));
        // At most 250 ms ahead, whatever the interval.
        assert_eq!(status_probe::next_reading(start, 10 * second, start), at(9.75));
    }

    #[test]
    fn node_shares_add_up_each_servers_connections() {
        let two = Targets::new(vec![server(1), server(2)]);
        let tally = |connection, transactions| worker::Tally { connection, transactions, busy_us: 0 };
        let tallies = [tally(3, 30), tally(0, 10), tally(1, 20), tally(2, 5)];
        let s = node_shares(&two, 4, &tallies, &[Some(2.0), None], &[None, Some(1.5)], 10.0);
        assert_eq!((s[0].node.as_str(), s[0].transactions, s[0].tps), ("127.0.0.1:1", 15, 1.5));
        assert_eq!((s[1].transactions, s[1].tps), (50, 5.0));
        assert_eq!((s[0].server_cores, s[1].server_cores), (Some(0.2), None));
        assert_eq!((s[0].max_lag_s, s[1].max_lag_s), (None, Some(1.5)));
    }
}
