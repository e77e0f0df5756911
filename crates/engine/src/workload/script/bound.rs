//! Bounds on a script's Lua that does not return. Lua runs on the thread that calls it
//! (a client thread, the main one, a command's), where neither the worker loop's timers
//! nor a signal can reach it: so every call into a script is watched here. A call still
//! running [`END_GRACE`] after the run's end (a worker's calls) or after a SIGINT or
//! SIGTERM (any call) is stopped:
//!
//! - by an instruction-count hook, which raises an error in the script: the call fails
//!   with a message naming the function, and the command ends as for any script error;
//! - else by a watchdog thread, which ends the process with that message a moment later.
//!   LuaJIT never calls hooks inside compiled traces (a `while true do end` is compiled
//!   after a few dozen turns), and nothing reaches a script blocked in C (`ffi`).

use crate::exec::END_GRACE;
use mlua::{HookTriggers, Lua, VmState};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// VM instructions between two looks at the clock: a few hundred µs of interpreted Lua,
/// so the look costs nothing measurable.
const EVERY: u32 = 100_000;

/// How long after the bound the watchdog gives a call the hook stopped to unwind.
const UNWIND: Duration = Duration::from_millis(500);
/// How often the watchdog looks.
const TICK: Duration = Duration::from_millis(50);

/// One state's calls, as the hook and the watchdog see them.
pub struct Watched {
    path: String,
    /// A run's worker (its calls are bounded by the run's end too).
    worker: bool,
    /// The entry point of the call in progress (`event()`), for messages.
    what: Mutex<String>,
    /// A call is in progress (it may be waiting for the server).
    busy: AtomicBool,
    /// Lua is executing (not waiting for the server).
    in_lua: AtomicBool,
}

/// The watched states, for the watchdog.
static STATES: Mutex<Vec<Weak<Watched>>> = Mutex::new(Vec::new());

/// µs after `base()` of the first SIGINT or SIGTERM the watchdog saw; `u64::MAX`: none.
static SIGNALLED_US: AtomicU64 = AtomicU64::new(u64::MAX);

fn base() -> Instant {
    static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

impl Watched {
    /// Watches a new state (and starts the watchdog and sizeup's signal handler with
    /// the first).
    pub fn new(path: &str, worker: bool) -> Arc<Watched> {
        start_watchdog();
        let w = Arc::new(Watched {
            path: path.to_string(),
            worker,
            what: Mutex::new(String::new()),
            busy: AtomicBool::new(false),
            in_lua: AtomicBool::new(false),
        });
        let mut all = STATES.lock().expect("not poisoned");
        all.retain(|s| s.strong_count() > 0);
        all.push(Arc::downgrade(&w));
        w
    }

    /// A call of `what` begins; it ends when the guard is dropped.
    pub fn call(&self, what: &str) -> CallGuard<'_> {
        let mut w = self.what.lock().expect("not poisoned");
        w.clear();
        w.push_str(what);
        self.busy.store(true, Ordering::SeqCst);
        CallGuard(self)
    }

    /// Lua runs (a resume) until the guard is dropped.
    pub fn running(&self) -> LuaGuard<'_> {
        self.in_lua.store(true, Ordering::SeqCst);
        LuaGuard(self)
    }

    /// Whether the watchdog counts this state's call as one that has not returned: a
    /// worker's only while Lua runs (the worker loop bounds its waits for the server).
    fn holding(&self) -> bool {
        match self.worker {
            true => self.in_lua.load(Ordering::SeqCst),
            false => self.busy.load(Ordering::SeqCst),
        }
    }

    /// When the call in progress must have returned by, and what it is counted from.
    fn bound(&self) -> Option<(Instant, &'static str)> {
        let signalled = match SIGNALLED_US.load(Ordering::SeqCst) {
            u64::MAX => None,
            us => Some((base() + Duration::from_micros(us), "the interrupt")),
        };
        // A worker's calls, and the main state's done() (which follows the run's end; its
        // init() precedes the run, when the end known may be an earlier run's).
        let after_run = self.worker || self.what.lock().is_ok_and(|w| *w == "done()");
        let run_end = crate::exec::run_end::get().filter(|_| after_run).map(|at| (at, "the end of the run"));
        let first = match (signalled, run_end) {
            // A signal stops the run too (its end follows it by up to a poll or two).
            (Some((s, why)), Some((e, _))) if s <= e + Duration::from_secs(1) => Some((s.min(e), why)),
            (s, e) => [s, e].into_iter().flatten().min_by_key(|(at, _)| *at),
        };
        // Early enough that a call the hook cannot reach (a compiled loop) is ended,
        // UNWIND and a watchdog tick later, within END_GRACE (a retest measured 5.6 s).
        first.map(|(at, why)| (at + END_GRACE - UNWIND - TICK, why))
    }

    /// The message for a call past its bound (`at`: the script's line, where known).
    fn message(&self, at: Option<String>, why: &str) -> String {
        let what = self.what.lock().map(|w| w.clone()).unwrap_or_default();
        format!(
            "{}: the script's {what} did not return within {} s of {why}; sizeup stopped it",
            at.unwrap_or_else(|| self.path.clone()),
            END_GRACE.as_secs()
        )
    }
}

pub struct CallGuard<'a>(&'a Watched);

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::SeqCst);
    }
}

pub struct LuaGuard<'a>(&'a Watched);

impl Drop for LuaGuard<'_> {
    fn drop(&mut self) {
        self.0.in_lua.store(false, Ordering::SeqCst);
    }
}

/// The hook: past the bound, an error in the script (again at every look, should the
/// script catch it), and `stopped` says why, whatever the script made of the error.
pub fn install_hook(
    lua: &Lua,
    watched: Arc<Watched>,
    stopped: std::rc::Rc<std::cell::RefCell<Option<String>>>,
) -> mlua::Result<()> {
    lua.set_global_hook(HookTriggers::new().every_nth_instruction(EVERY), move |_, debug| {
        let Some((due, why)) = watched.bound() else { return Ok(VmState::Continue) };
        if Instant::now() < due || !watched.busy.load(Ordering::Relaxed) {
            return Ok(VmState::Continue);
        }
        // The script's line when the hook fired in one of its files (not sizeup's API).
        let source = debug.source();
        let file = source.source.as_deref().and_then(|s| s.strip_prefix('@'));
        let at = file.zip(debug.current_line()).map(|(f, line)| format!("{f}:{line}"));
        let m = watched.message(at, why);
        stopped.borrow_mut().get_or_insert_with(|| m.clone());
        Err(mlua::Error::runtime(m))
    })
}

/// Every 50 ms: notes the first signal, and ends the process when a call is still
/// running [`UNWIND`] past its bound.
fn start_watchdog() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        base();
        crate::exec::install_signal_handler();
        let seen = crate::exec::signals_received();
        let spawned = std::thread::Builder::new().name("sizeup-lua-watch".into()).spawn(move || loop {
            std::thread::sleep(TICK);
            let now = Instant::now();
            if crate::exec::signals_received() != seen {
                let us = now.saturating_duration_since(base()).as_micros() as u64;
                SIGNALLED_US.fetch_min(us, Ordering::SeqCst);
            }
            let states: Vec<Arc<Watched>> =
                STATES.lock().expect("not poisoned").iter().filter_map(Weak::upgrade).collect();
            for s in states.iter().filter(|s| s.holding()) {
                if let Some((_, why)) = s.bound().filter(|(due, _)| now >= *due + UNWIND) {
                    let message = s.message(None, why);
                    eprintln!("{message}");
                    super::state::flush_c_stdout();
                    // ended_by_a_lua_bound_reads_as_abandoned: the run records why first.
                    crate::exec::last_words::say(&message, why == "the interrupt");
                    let code = match (why, crate::exec::TERMINATED.load(Ordering::Relaxed)) {
                        ("the interrupt", true) => 143,
                        ("the interrupt", false) => crate::EXIT_INTERRUPTED,
                        _ => 1,
                    };
                    // SAFETY: ends the process at once; the thread holding the Lua state
                    // cannot be stopped or waited for.
                    unsafe { libc::_exit(code) };
                }
            }
        });
        if let Err(e) = spawned {
            eprintln!("note: cannot start the watchdog of the script's calls: {e}");
        }
    });
}
