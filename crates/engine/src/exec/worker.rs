//! THE worker loop. Every mode is a parameter of it: closed or open loop (`--rate`),
//! a fixed delay between transactions, a deadline, an event budget, Ctrl-C.
//!
//! Workers of one client thread share a [`Shard`]: its recorder (no lock: the thread's
//! runtime runs one task at a time), its arrival schedule, and the run's controls.

use super::errors::ErrorClass;
use super::pacing::Arrivals;
use super::session::{Pace, Session};
use crate::client::Conn;
use crate::stats::{QueryCounts, Recorder};
use crate::target::Target;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// Controls shared by every thread of a run.
pub struct Control {
    stopped: AtomicBool,
    /// Transactions still to start under `--events`; `None` for no limit.
    events_left: Option<AtomicI64>,
    /// Why the run stopped early, when a worker hit a fatal error.
    fatal: Mutex<Option<String>>,
    wake: watch::Sender<bool>,
    /// Since when the server is lost (a reconnect failed and none succeeded since).
    lost_at: Mutex<Option<Instant>>,
    /// Outages begun so far (an interval that saw one is marked).
    losses: std::sync::atomic::AtomicU64,
    /// Transactions still waiting for the server when the run's grace ran out.
    abandoned: std::sync::atomic::AtomicU64,
    /// The run failed because a transaction waited past `--statement-timeout`: the
    /// transactions still in flight are the stalled ones, so there is no grace to give.
    stalled: AtomicBool,
    /// Workers whose session ended the run for itself (a script's event() returned true).
    ended_by_workload: std::sync::atomic::AtomicU64,
    /// When some client thread last saw the server answer (µs from the run's start),
    /// as the tickers' stall checks see it: written once a check, never per statement.
    answered_us: std::sync::atomic::AtomicU64,
}

impl Control {
    pub fn new(events: Option<u64>) -> Self {
        Control {
            stopped: AtomicBool::new(false),
            events_left: events.map(|e| AtomicI64::new(e as i64)),
            fatal: Mutex::new(None),
            wake: watch::channel(false).0,
            lost_at: Mutex::new(None),
            losses: Default::default(),
            abandoned: Default::default(),
            stalled: AtomicBool::new(false),
            ended_by_workload: Default::default(),
            answered_us: Default::default(),
        }
    }
    /// A stall check saw this thread's transactions finish by `at` (µs from the start).
    pub fn answered(&self, at_us: u64) {
        self.answered_us.fetch_max(at_us, Ordering::Relaxed);
    }
    /// When any thread's check last saw the server answer (µs from the start).
    pub fn last_answer_us(&self) -> u64 {
        self.answered_us.load(Ordering::Relaxed)
    }
    /// A reconnect failed: the server is lost since `since` (printed once per outage).
    /// Returns how long it has been lost.
    pub fn server_lost(&self, since: Instant, why: &str, timeout: Duration) -> Duration {
        let mut g = self.lost_at.lock().expect("not poisoned");
        let at = *g.get_or_insert_with(|| {
            self.losses.fetch_add(1, Ordering::Relaxed);
            eprintln!(
                "server lost: {why}; reconnecting (the run fails if it is not back within {} s, --server-lost-timeout)",
                timeout.as_secs_f64()
            );
            since
        });
        Instant::now().saturating_duration_since(at)
    }
    /// A reconnect succeeded: the outage, if any, is over.
    pub fn server_back(&self) {
        if let Some(at) = self.lost_at.lock().expect("not poisoned").take() {
            eprintln!("server back after {:.1} s", at.elapsed().as_secs_f64());
        }
    }
    /// When the current outage began, if the server is lost now.
    pub fn lost_since(&self) -> Option<Instant> {
        *self.lost_at.lock().expect("not poisoned")
    }
    pub fn losses(&self) -> u64 {
        self.losses.load(Ordering::Relaxed)
    }
    pub fn abandon(&self, n: u64) {
        self.abandoned.fetch_add(n, Ordering::Relaxed);
    }
    pub fn abandoned(&self) -> u64 {
        self.abandoned.load(Ordering::Relaxed)
    }
    pub fn stop(&self) {
        // Release/Acquire: a ticker that sees the stop sees `stalled` set before it.
        self.stopped.store(true, Ordering::Release);
        super::run_end::stopped_now();
        self.wake.send_replace(true);
    }
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }
    /// Every transaction `--events` allows has started: the run ends by its budget.
    pub fn events_spent(&self) -> bool {
        self.events_left.as_ref().is_some_and(|l| l.load(Ordering::Relaxed) <= 0)
    }
    pub fn fail(&self, why: String) {
        self.fatal.lock().expect("not poisoned").get_or_insert(why);
        self.stop();
    }
    /// Fails the run on a stalled server: it ends now, without [`super::END_GRACE`].
    /// Only when the stall is the run's first fatal cause: another one keeps its grace.
    pub fn fail_stalled(&self, why: String) {
        {
            let mut fatal = self.fatal.lock().expect("not poisoned");
            if fatal.is_none() {
                *fatal = Some(why);
                self.stalled.store(true, Ordering::Release);
            }
        }
        self.stop();
    }
    pub fn stalled(&self) -> bool {
        self.stalled.load(Ordering::Acquire)
    }
    /// How many workers' sessions ended by themselves, before the run's end.
    pub fn ended_by_workload(&self) -> u64 {
        self.ended_by_workload.load(Ordering::Relaxed)
    }
    /// Sessions an agent's workload ended, counted here as if they were this run's own.
    pub fn add_ended_by_workload(&self, n: u64) {
        self.ended_by_workload.fetch_add(n, Ordering::Relaxed);
    }
    pub fn fatal(&self) -> Option<String> {
        self.fatal.lock().expect("not poisoned").clone()
    }
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.wake.subscribe()
    }
}

/// What the workers of one client thread share.
pub struct Shard {
    pub control: Arc<Control>,
    pub recorder: RefCell<Recorder>,
    /// The run's one arrival schedule (open loop), shared by every client thread.
    pub arrivals: Option<Arc<Mutex<Arrivals>>>,
    pub start: Instant,
    /// Transactions that end from here on count in the steady state (after warm-up).
    pub steady_from: Instant,
    pub deadline: Option<Instant>,
    /// Fixed pause after each transaction (keying/think time stand-in).
    pub delay: Option<Duration>,
    pub retry_on: super::errors::RetryOn,
    /// Per worker: when its transaction in flight started (`None` between transactions).
    /// The ticker reads these to find stalls; the worker only stores.
    pub busy: Vec<std::cell::Cell<Option<Instant>>>,
    /// The ticker's watch for a stalled server over the interval under way.
    pub stall_watch: RefCell<super::clock::StallWatch>,
    /// Server losses already marked in a handed-over interval.
    pub losses_seen: std::cell::Cell<u64>,
    /// How far the interval under way, as the ticker handed it over, missed its length.
    pub late: std::cell::Cell<Option<Duration>>,
    pub server_lost_timeout: Duration,
    pub statement_timeout: Duration,
    /// This thread's workers whose session ended itself (a replay's ran out of
    /// statements, a script's event() returned true).
    pub ended_here: std::cell::Cell<u32>,
}

impl Shard {
    /// A worker's session ended itself: counted for the run and for this thread.
    fn ended_by_workload(&self) {
        self.control.ended_by_workload.fetch_add(1, Ordering::Relaxed);
        self.ended_here.set(self.ended_here.get() + 1);
    }
}

impl Shard {
    /// The interval's recorder, marked with what the ticker saw (an outage, how long
    /// transactions were stuck); the next interval starts a new one.
    pub fn hand_over(&self, types: usize) -> Recorder {
        let mut rec = self.recorder.replace(Recorder::new(types));
        let seen = self.control.losses();
        rec.outage = self.control.lost_since().is_some() || seen != self.losses_seen.replace(seen);
        rec.stuck = self.stall_watch.borrow_mut().hand_over();
        rec.late = self.late.take();
        rec
    }

    /// When the next transaction's latency starts counting and when it really starts
    /// (later, in an open loop that fell behind), or `None` when the run is over.
    /// `due`: the session's own schedule, before the run's arrivals.
    async fn next_start(&self, wake: &mut watch::Receiver<bool>, due: Option<Duration>) -> Option<(Instant, Instant)> {
        if self.control.stopped() {
            return None;
        }
        if let Some(left) = &self.control.events_left {
            if left.fetch_sub(1, Ordering::Relaxed) <= 0 {
                self.control.stop();
                return None;
            }
        }
        let now = Instant::now();
        let intended = match (due, &self.arrivals) {
            (Some(d), _) => self.start + d,
            (None, None) => now,
            (None, Some(a)) => self.start + Duration::from_secs_f64(a.lock().expect("not poisoned").claim()),
        };
        // Nothing starts after the deadline, however far behind an open loop is: arrivals
        // left over are counted as missed, not worked off past `--time`.
        if self.deadline.is_some_and(|d| intended >= d || now >= d) {
            return None;
        }
        if intended > now {
            // Early: wait for the arrival. The timer wakes up to ~1 ms late; that slop
            // is the client's, not the server's, so latency counts from the real start.
            if !pause_until(intended, wake).await {
                return None;
            }
            let now = Instant::now();
            return Some((now, now));
        }
        // Late (every worker was busy): the arrival has waited, and that wait is part of
        // the latency a user would have seen. This is the coordinated-omission correction.
        Some((intended, now))
    }
}

impl Shard {
    /// A pause between transactions; false when the run ends during it.
    async fn pause(&self, d: Duration, wake: &mut watch::Receiver<bool>) -> bool {
        let until = Instant::now() + d;
        match self.deadline {
            Some(deadline) if until >= deadline => {
                pause_until(deadline, wake).await;
                false
            }
            // A short pause is most of a delayed loop's cycle: the 1 ms timer wheel
            // made `--delay 1` 2.1 ms.
            _ if d < Duration::from_secs(1) => wait_or_stop(crate::timer::sleep_precise(d), wake).await,
            _ => pause_until(until, wake).await,
        }
    }
}

/// Sleeps until `when`, or until the run is stopped (then returns false).
async fn pause_until(when: Instant, wake: &mut watch::Receiver<bool>) -> bool {
    wait_or_stop(crate::timer::sleep_until(when), wake).await
}

/// Waits for `timer`, or until the run is stopped (then returns false).
async fn wait_or_stop(timer: impl std::future::Future<Output = ()>, wake: &mut watch::Receiver<bool>) -> bool {
    if *wake.borrow() {
        return false;
    }
    tokio::select! {
        _ = timer => true,
        _ = wake.changed() => false,
    }
}

/// Connects and prepares a session; a worker's first step and its reconnect.
pub async fn connect<S: Session>(target: &Target, session: &mut S) -> Result<Conn, String> {
    // A unix socket whose listen queue is full refuses at once (EAGAIN) rather than
    // queueing the connect: hundreds of connections opened together (a rate study's
    // pool) meet it while the server accepts the first ones. Tried again for 2 s.
    let options = target.client_options();
    let mut tries = 0;
    let mut conn = loop {
        match Conn::connect(&options).await {
            Ok(c) => break c,
            Err(crate::client::Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock && tries < 100 => {
                tries += 1;
                crate::timer::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => return Err(format!("cannot connect to {}: {e}", target.describe())),
        }
    };
    // A server that accepted the connection but does not answer must not hang the run.
    match crate::timer::timeout(Duration::from_secs(10), session.connected(&mut conn)).await {
        Ok(r) => r.map_err(|f| match f.statement {
            "" => f.error.to_string(),
            _ => format!("preparing {}", f.describe("statements failed")),
        })?,
        Err(_) => return Err(format!("{} accepted a connection but did not answer within 10 s", target.describe())),
    }
    Ok(conn)
}

/// Runs transactions until the run is over. Latency is taken from the intended start,
/// so retries and reconnects are part of the latency the user sees.
/// What one connection did over the steady state: transactions and the seconds they
/// took (sysbench's per-thread events and execution time).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Which connection, counted over the whole run (round robin's i).
    pub connection: u32,
    pub transactions: u64,
    pub busy_us: u64,
}

/// `connection` is its number over the whole run; `target` its server, which a
/// reconnect returns to.
pub async fn run_worker<S: Session>(
    shard: &Shard,
    slot: usize,
    connection: u32,
    target: &Target,
    mut session: S,
    mut conn: Conn,
) -> Tally {
    let busy = &shard.busy[slot];
    let mut wake = shard.control.subscribe();
    let mut tally = Tally { connection, ..Tally::default() };
    'run: loop {
        // A user's keying and think time (TPC-C) comes before the next transaction.
        if let Some(p) = session.pause() {
            if !shard.pause(p, &mut wake).await {
                break;
            }
        }
        let due = match session.pace() {
            Pace::Run => None,
            Pace::At(d) => Some(d),
            Pace::Done => {
                shard.ended_by_workload();
                break;
            }
        };
        let Some((intended, mut started)) = shard.next_start(&mut wake, due).await else { break };
        session.began(started.saturating_duration_since(intended));
        let mut queries = QueryCounts::default();
        loop {
            // What the ticker's stall check reads: no timer per statement.
            busy.set(Some(started));
            let outcome = session.transaction(&mut conn, &mut queries).await;
            busy.set(None);
            match outcome {
                Ok(_) if session.finished() => {
                    // The session's last word (a script's event() returned true): its
                    // statements count, the transaction does not, and this worker ends.
                    shard.recorder.borrow_mut().queries(0, &queries);
                    shard.ended_by_workload();
                    break 'run;
                }
                Ok(done) => {
                    let now = Instant::now();
                    let latency = (now - intended).as_micros() as u64;
                    if now >= shard.steady_from {
                        tally.transactions += 1;
                        tally.busy_us += latency;
                    }
                    let mut rec = shard.recorder.borrow_mut();
                    rec.transaction(done.ty, latency, done.rolled_back);
                    rec.queries(done.ty, &queries);
                    break;
                }
                Err(failed) => {
                    let class = session.error_class(&failed, &shard.retry_on);
                    {
                        let mut rec = shard.recorder.borrow_mut();
                        // Errors count as ignored and retried; the one that ends the run
                        // is its error, not one of those.
                        if !matches!(class, ErrorClass::Fatal) {
                            rec.error(failed.ty);
                        }
                        rec.queries(failed.ty, &queries);
                    }
                    queries = QueryCounts::default();
                    match class {
                        ErrorClass::Retry => {
                            // A deadlock already rolled back; a lock wait timeout did not.
                            if conn.query_drop("ROLLBACK").await.is_err() {
                                match reconnect(shard, target, &mut session, &mut wake).await {
                                    Some(c) => conn = c,
                                    None => break 'run,
                                }
                            }
                        }
                        ErrorClass::Reconnect => match reconnect(shard, target, &mut session, &mut wake).await {
                            Some(c) => conn = c,
                            None => break 'run,
                        },
                        ErrorClass::Fatal => {
                            shard.control.fail(failed.describe("statement failed"));
                            break 'run;
                        }
                        ErrorClass::Skip => break,
                    }
                    started = Instant::now();
                    if shard.control.stopped() || shard.deadline.is_some_and(|d| started >= d) {
                        break 'run;
                    }
                }
            }
        }
        if let Some(d) = shard.delay {
            if !shard.pause(d, &mut wake).await {
                break;
            }
        }
    }
    let mut queries = QueryCounts::default();
    if let Err(e) = session.finish(&mut conn, &mut queries).await {
        shard.control.fail(e);
    }
    shard.recorder.borrow_mut().queries(0, &queries);
    conn.close().await;
    tally
}

/// Re-establishes a lost connection, backing off up to 1 s between tries, until it
/// succeeds or the run ends.
/// Each failed attempt is counted; the first marks the server lost (one line), a success
/// marks it back (one line), and a server lost for longer than `--server-lost-timeout`
/// fails the run, keeping what was recorded.
async fn reconnect<S: Session>(
    shard: &Shard,
    target: &Target,
    session: &mut S,
    wake: &mut watch::Receiver<bool>,
) -> Option<Conn> {
    let mut backoff = Duration::from_millis(20);
    let since = Instant::now();
    loop {
        if shard.control.stopped() || shard.deadline.is_some_and(|d| Instant::now() >= d) {
            return None;
        }
        match connect(target, session).await {
            Ok(c) => {
                shard.recorder.borrow_mut().reconnects += 1;
                shard.control.server_back();
                return Some(c);
            }
            Err(e) => {
                shard.recorder.borrow_mut().reconnect_failures += 1;
                let lost_for = shard.control.server_lost(since, &e, shard.server_lost_timeout);
                if lost_for >= shard.server_lost_timeout {
                    shard.control.fail(format!(
                        "the server was lost and not back within {} s (--server-lost-timeout): {e}",
                        shard.server_lost_timeout.as_secs_f64()
                    ));
                    return None;
                }
                let until = Instant::now() + backoff;
                let until = shard.deadline.map_or(until, |d| until.min(d));
                if !pause_until(until, wake).await {
                    return None;
                }
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The scheduling half of the loop, on tokio's paused clock: deterministic, no server.
    use super::*;

    fn shard(rate: Option<f64>, time: Option<Duration>, events: Option<u64>) -> Shard {
        let start = Instant::now();
        Shard {
            control: Arc::new(Control::new(events)),
            recorder: RefCell::new(Recorder::new(1)),
            arrivals: rate.map(|r| Arc::new(Mutex::new(Arrivals::new(r, crate::random::rng_from_seed(5))))),
            start,
            steady_from: start,
            deadline: time.map(|t| start + t),
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

    #[tokio::test(start_paused = true)]
    async fn closed_loop_runs_until_the_deadline() {
        let s = shard(None, Some(Duration::from_secs(2)), None);
        let mut wake = s.control.subscribe();
        let mut started = 0;
        while let Some((t, _)) = s.next_start(&mut wake, None).await {
            assert_eq!(t, Instant::now(), "closed loop starts at once");
            started += 1;
            tokio::time::advance(Duration::from_millis(10)).await; // a 10 ms transaction
        }
        assert_eq!(started, 200);
    }

    /// A session's own schedule (a replay's) sets when each of its transactions starts,
    /// before the run's arrivals; one started late counts its latency from when it was due.
    #[tokio::test(start_paused = true)]
    async fn a_sessions_own_schedule_sets_its_starts() {
        let s = shard(Some(100.0), Some(Duration::from_secs(2)), None);
        let mut wake = s.control.subscribe();
        let at = |ms| s.start + Duration::from_millis(ms);
        let (t, started) = s.next_start(&mut wake, Some(Duration::from_millis(500))).await.unwrap();
        assert!(t == started && t >= at(500) && t - at(500) <= Duration::from_millis(2), "waited for its time");
        tokio::time::advance(Duration::from_millis(300)).await; // a 300 ms statement
        let (t, started) = s.next_start(&mut wake, Some(Duration::from_millis(600))).await.unwrap();
        assert_eq!(t, at(600), "late: latency from when it was due");
        assert!(started - at(800) <= Duration::from_millis(2));
        assert!(s.arrivals.as_ref().unwrap().lock().unwrap().backlog(2.0) > 150, "no arrival was claimed");
        assert!(s.next_start(&mut wake, Some(Duration::from_secs(3))).await.is_none(), "due after the deadline");
    }

    #[tokio::test(start_paused = true)]
    async fn event_budget_is_exact_and_stops_the_run() {
        let s = shard(None, None, Some(5));
        let mut wake = s.control.subscribe();
        let mut n = 0;
        while s.next_start(&mut wake, None).await.is_some() {
            n += 1;
        }
        assert_eq!(n, 5);
        assert!(s.control.stopped());
    }

    #[tokio::test(start_paused = true)]
    async fn open_loop_holds_the_rate_and_counts_waiting_as_latency() {
        let s = shard(Some(100.0), Some(Duration::from_secs(20)), None);
        let mut wake = s.control.subscribe();
        let mut n = 0u32;
        while let Some((t, _)) = s.next_start(&mut wake, None).await {
            // An idle worker waits for the arrival and latency starts when it really
            // starts; an arrival already due (the timer woke up to 1 ms late for the
            // previous one) starts counting at its due time.
            assert!(t <= Instant::now() && Instant::now() - t <= Duration::from_millis(2));
            n += 1;
        }
        assert!((1800..2200).contains(&n), "{n} arrivals in 20 s at 100/s");
        assert!(Instant::now() <= s.start + Duration::from_secs(20));

        // A worker busy for 1 s finds arrivals overdue: their latency starts at the
        // arrival, not when the worker got to it (no coordinated omission).
        let s = shard(Some(100.0), None, None);
        let mut wake = s.control.subscribe();
        tokio::time::advance(Duration::from_secs(1)).await;
        let (t, started) = s.next_start(&mut wake, None).await.unwrap();
        assert!(Instant::now() - t > Duration::from_millis(900), "the first arrival was due long ago");
        assert_eq!(started, Instant::now());
        assert!(s.arrivals.as_ref().unwrap().lock().unwrap().backlog(1.0) > 50);
    }

    #[tokio::test(start_paused = true)]
    async fn open_loop_under_overload_ends_at_the_deadline() {
        // 1,000/s that nobody keeps up with: at the deadline thousands are overdue, and
        // none of them starts after it.
        let s = shard(Some(1000.0), Some(Duration::from_secs(5)), None);
        let mut wake = s.control.subscribe();
        let mut n = 0;
        while s.next_start(&mut wake, None).await.is_some() {
            n += 1;
            tokio::time::advance(Duration::from_millis(100)).await; // a slow server
        }
        assert!(Instant::now() <= s.start + Duration::from_millis(5100), "ended at the deadline");
        assert!((49..=51).contains(&n), "{n} started");
        let missed = s.arrivals.as_ref().unwrap().lock().unwrap().backlog(5.0);
        assert!((4500..5500).contains(&missed), "{missed} missed");
    }

    #[tokio::test(start_paused = true)]
    async fn stop_wakes_a_waiting_worker() {
        let s = shard(Some(0.001), None, None); // next arrival ~1000 s away
        let mut wake = s.control.subscribe();
        let control = s.control.clone();
        let stopper = async {
            crate::timer::sleep(Duration::from_secs(1)).await;
            control.stop();
        };
        let (next, ()) = tokio::join!(s.next_start(&mut wake, None), stopper);
        assert_eq!(next, None);
        assert!(Instant::now() - s.start < Duration::from_secs(2));
    }
}
