//! A script run by the one worker loop: a Lua state per worker (as sysbench has one
//! per thread), `thread_init()` on its first connection, one `event()` per
//! transaction, `thread_done()` at the end.
//!
//! Why async: `event()` calls `con:query()` as if it blocked, but a client thread
//! serves many workers. Each call into the script runs in a Lua coroutine (mlua's
//! `call_async`); a statement is an async Rust function, so while it waits for the
//! server the coroutine yields and the worker's future is pending, and the thread
//! serves other workers meanwhile, as with the built-in workloads. The worker's
//! connection is lent to the script for the length of each call (the first
//! `drv:connect()` of the state gets it), so reconnects, statement counting and the
//! outbox work as for any other session.

use super::options::OptValue;
use super::sql::{Guard, Slot};
use super::state::{Env, Outcome, State, Watch};
use super::Script;
use crate::client::{Conn, Error};
use crate::exec::errors::{classify, ErrorClass, RetryOn};
use crate::exec::{RunContext, RunError, RunResult, RunSpec};
use crate::random::SharedUniqueIds;
use crate::stats::{Interval, QueryCounts};
use crate::target::Targets;
use crate::workload::{Done, Failed, Runnable, Session, Sessions};
use mlua::{Function, Table, Value};
use std::rc::Rc;
use std::sync::Arc;

/// What every worker's state is made with.
pub struct ScriptSessions {
    script: Arc<Script>,
    opt: Vec<(String, OptValue)>,
    /// A worker's own connections (the script's `connect()`) go where its run
    /// connection goes.
    targets: Targets,
    retry_on: RetryOn,
    unique: Arc<SharedUniqueIds>,
    /// `--rand-seed` (or the run's clock seed), as sysbench's `srandom()` takes it.
    seed: u32,
    guard: Option<Arc<Guard>>,
}

impl Sessions for ScriptSessions {
    type Session = ScriptSession;

    fn transaction_names(&self) -> Vec<String> {
        vec!["event".into()]
    }

    fn session(&self, worker: u32, _seed: u64) -> ScriptSession {
        let slot = Slot::for_worker();
        let env = Env {
            opt: self.opt.clone(),
            command: "run".into(),
            connect: Some(self.targets.for_connection(worker).client_options()),
            retry_on: self.retry_on.clone(),
            unique: self.unique.clone(),
            seed: self.seed,
            rows: None,
            watch: None,
            guard: self.guard.clone(),
        };
        ScriptSession {
            state: State::new(&self.script, &env, worker, Some(slot.clone())),
            slot,
            tid: worker,
            started: false,
            done: false,
            restart: None,
            class: None,
        }
    }
}

pub struct ScriptSession {
    /// The state, or why it could not be made (said at the first connect).
    state: Result<State, String>,
    slot: Rc<Slot>,
    tid: u32,
    /// `thread_init()` has run.
    started: bool,
    /// `event()` returned a true value: this worker stops, as sysbench's thread does.
    done: bool,
    /// The error table of the event being restarted, for `before_restart_event`.
    restart: Option<Table>,
    /// How the last failure is to be handled (the script's hook may make a server
    /// error retryable).
    class: Option<ErrorClass>,
}

impl ScriptSession {
    /// Runs `call` with the worker's connection lent to the script.
    async fn lent<T>(slot: &Slot, conn: &mut Conn, call: impl std::future::Future<Output = T>) -> T {
        slot.lend(std::mem::replace(conn, Conn::detached()));
        let out = call.await;
        *conn = slot.take_back();
        out
    }

    fn script_failure(&mut self, msg: String) -> Failed {
        self.class = Some(ErrorClass::Fatal);
        Failed { ty: 0, statement: "", error: Error::Protocol(msg) }
    }
}

impl Session for ScriptSession {
    async fn connected(&mut self, conn: &mut Conn) -> Result<(), Failed> {
        let state = match &self.state {
            Ok(s) => s,
            Err(e) => {
                let e = e.clone();
                return Err(self.script_failure(e));
            }
        };
        self.slot.replaced();
        if self.started {
            return Ok(());
        }
        self.started = true;
        let Some(init) = state.function("thread_init") else { return Ok(()) };
        let outcome = Self::lent(&self.slot, conn, state.call("thread_init()", &init, self.tid)).await;
        state.ctx.take_counts(); // sysbench counts only the events' statements
        match outcome {
            Outcome::Returned(_) => Ok(()),
            Outcome::Restart(_) => {
                let m = format!("thread_init: {}", state.restart_message());
                Err(self.script_failure(m))
            }
            Outcome::Failed(m) => Err(self.script_failure(m)),
        }
    }

    async fn transaction(&mut self, conn: &mut Conn, q: &mut QueryCounts) -> Result<Done, Failed> {
        let state = self.state.as_ref().expect("a session runs only after it connected");
        state.ctx.last_error.borrow_mut().take();
        self.class = None;
        let restart = self.restart.take().map(|t| (t, state.hook("before_restart_event")));
        let event = state.function("event");
        let tid = self.tid;
        let outcome = Self::lent(&self.slot, conn, async {
            if let Some((desc, Some(hook))) = restart {
                if let o @ (Outcome::Restart(_) | Outcome::Failed(_)) =
                    state.call("before_restart_event hook", &hook, desc).await
                {
                    return o;
                }
            }
            match &event {
                Some(f) => state.call("event()", f, tid).await,
                None => Outcome::Failed(format!("cannot find the event() function in {}", state.path)),
            }
        })
        .await;
        q.add(&state.ctx.take_counts());
        match outcome {
            Outcome::Returned(v) => {
                // sysbench's thread stops when event() returns anything but nil or false.
                self.done = !matches!(v, Value::Nil | Value::Boolean(false));
                if !self.done {
                    // sysbench's latency histogram takes one number from the thread's
                    // generator after each event (sb_histogram_update picks a slot): so
                    // does this, so the script's next numbers are the ones sysbench draws.
                    rand::RngCore::next_u64(&mut *state.ctx.rng.borrow_mut());
                }
                Ok(Done { ty: 0, rolled_back: false })
            }
            Outcome::Restart(desc) => {
                let failure = state.ctx.last_error.borrow_mut().take();
                self.restart = Some(desc);
                let (error, class) = match failure {
                    Some(f) => (f.error(), f.class),
                    // The script raised the restart itself.
                    None => (
                        Error::Server {
                            code: 0,
                            state: "HY000".into(),
                            message: "the script restarted the event".into(),
                        },
                        ErrorClass::Retry,
                    ),
                };
                self.class = Some(class);
                Err(Failed { ty: 0, statement: "event", error })
            }
            Outcome::Failed(m) => Err(self.script_failure(m)),
        }
    }

    fn error_class(&self, failed: &Failed, retry: &RetryOn) -> ErrorClass {
        self.class.unwrap_or_else(|| classify(&failed.error, retry))
    }

    fn finished(&self) -> bool {
        self.done
    }

    async fn finish(&mut self, conn: &mut Conn, q: &mut QueryCounts) -> Result<(), String> {
        let Ok(state) = &self.state else { return Ok(()) };
        let Some(done) = state.function("thread_done").filter(|_| self.started) else { return Ok(()) };
        let outcome = Self::lent(&self.slot, conn, state.call("thread_done()", &done, self.tid)).await;
        q.add(&state.ctx.take_counts());
        match outcome {
            Outcome::Returned(_) => Ok(()),
            Outcome::Restart(_) => Err(format!("thread_done: {}", state.restart_message())),
            Outcome::Failed(m) => Err(format!("thread_done: {m}")),
        }
    }
}

/// A script checked and ready to run: the script's `init()` before the workers start
/// and `done()` after they end run in one more state, as sysbench's main one.
pub struct ScriptRun {
    pub script: Arc<Script>,
    pub options: serde_json::Value,
    /// Its report_intermediate hook prints the interval lines (sysbench's output).
    pub report_hook: bool,
}

impl Runnable for ScriptRun {
    fn options(&self) -> serde_json::Value {
        self.options.clone()
    }

    fn prints_intervals(&mut self) -> bool {
        self.report_hook = self.script.report_hook;
        self.report_hook
    }

    fn run(
        self: Box<Self>,
        targets: &Targets,
        spec: &RunSpec,
        ctx: &RunContext,
        on_interval: &mut dyn FnMut(&Interval),
    ) -> Result<RunResult, RunError> {
        // The script's main state (init, done) talks to the first server.
        let target = targets.first();
        let opt = super::opt_table(&self.script, spec.threads, Some(spec), Some(target));
        let unique = Arc::new(SharedUniqueIds::new(spec.seed as u32));
        let guard = Guard::new(&target.database, ctx.watched.clone(), Guard::RUN);
        let env = Env {
            opt: opt.clone(),
            command: "run".into(),
            connect: Some(target.client_options()),
            retry_on: spec.retry_on.clone(),
            unique: unique.clone(),
            seed: spec.seed as u32,
            rows: None,
            // init() and done() run outside the worker loop and its statement bound.
            watch: Some(Watch {
                target: target.clone(),
                every: spec.statement_timeout,
                what: self.script.path.clone(),
            }),
            guard: guard.clone(),
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RunError::Client(format!("cannot start the script's runtime: {e}")))?;
        let main = State::new(&self.script, &env, 0, None).map_err(RunError::Script)?;
        let hook = main.hook("report_intermediate").filter(|_| self.report_hook);
        for name in ["report_intermediate", "report_cumulative"] {
            if main.hook(name).is_some() && !(name == "report_intermediate" && hook.is_some()) {
                eprintln!(
                    "note: {} sets sysbench.hooks.{name}; sizeup prints and stores its own reports and does not call it",
                    self.script.path
                );
            }
        }
        if main.function("thread_run").is_some() {
            return Err(RunError::Script(format!(
                "{} defines thread_run(): sizeup's worker loop calls event() itself and cannot run a script's own loop",
                self.script.path
            )));
        }
        call_main(&rt, &main, "init").map_err(RunError::Script)?;
        let sessions = ScriptSessions {
            script: self.script.clone(),
            opt,
            targets: targets.clone(),
            retry_on: spec.retry_on.clone(),
            unique,
            seed: spec.seed as u32,
            guard,
        };
        // sysbench calls the hook with each whole interval's counts (its stat table).
        let step = spec.interval.as_secs_f64();
        let mut report = |iv: &Interval| {
            if let Some(h) = hook.as_ref().filter(|_| iv.duration > step * 0.999) {
                let outcome = main.lua.create_table().and_then(|t| {
                    let n = |per_s: f64| (per_s * iv.duration).round();
                    t.set("threads_running", iv.threads)?;
                    t.set("time_interval", iv.duration)?;
                    t.set("time_total", iv.t)?;
                    t.set("latency_pct", iv.percentile_ms / 1000.0)?;
                    t.set("events", iv.transactions)?;
                    t.set("reads", n(iv.reads_per_s))?;
                    t.set("writes", n(iv.writes_per_s))?;
                    t.set("other", n(iv.other_per_s))?;
                    t.set("errors", iv.errors)?;
                    t.set("reconnects", iv.reconnects)?;
                    t.set("queue_length", iv.backlog)?;
                    t.set("concurrency", iv.concurrency)?;
                    Ok(t)
                });
                match outcome
                    .map(|t| futures_util::FutureExt::now_or_never(main.call("report_intermediate hook", h, t)))
                {
                    Ok(Some(Outcome::Failed(m))) => eprintln!("report_intermediate: {m}"),
                    Ok(None) => eprintln!("report_intermediate waited for the server; its line is left out"),
                    Err(e) => eprintln!("report_intermediate: {e}"),
                    Ok(Some(_)) => {}
                }
                super::state::flush_c_stdout();
            }
            on_interval(iv)
        };
        let result = crate::exec::run(Arc::new(sessions), targets, spec, ctx, &mut report);
        let done = call_main(&rt, &main, "done");
        super::state::flush_c_stdout();
        done.map_err(RunError::Script)?;
        result
    }
}

/// Calls the script's global `name()` in the main state, if it defines one.
fn call_main(rt: &tokio::runtime::Runtime, main: &State, name: &str) -> Result<(), String> {
    let Some(f): Option<Function> = main.function(name) else { return Ok(()) };
    let outcome = rt.block_on(main.call(&format!("{name}()"), &f, mlua::Value::Nil));
    // A statement that stalled ends it, whatever the script made of its error.
    if let Some(why) = main.ctx.stalled.borrow_mut().take() {
        return Err(format!("{name}(): {why}"));
    }
    match outcome {
        Outcome::Returned(_) => Ok(()),
        Outcome::Restart(_) => Err(format!("{name}(): {}", main.restart_message())),
        Outcome::Failed(m) => Err(if m.is_empty() { format!("{name}() failed") } else { m }),
    }
}
