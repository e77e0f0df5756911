//! Timers (sleep, sleep until, timeout) for code that may run on a client thread.
//!
//! A closed-loop client thread's runtime has no time driver. With one, every park (about
//! one per statement) reads the clock twice, locks the timer wheel and walks it: 11,500
//! of a read/write transaction's 90,700 client instructions at 2 connections (callgrind,
//! docs/PERFORMANCE.md "Session 28"), for a thread whose only steady timer is the 1-s
//! ticker. Such a thread calls [`use_shared_timers`]; its few timers (the ticker,
//! reconnect pauses, connect bounds) are then armed on one shared timer thread, whose
//! driver wakes the client thread's runtime when they fire. Everywhere else (threads
//! that never call it, tests with a paused clock) these are tokio's own, on the current
//! runtime.
//!
//! Code that may run on a client thread uses these, not `tokio::time`'s: there, tokio's
//! panic for want of a time driver (clippy.toml flags them).

use std::cell::Cell;
use std::future::IntoFuture;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::runtime::{EnterGuard, Handle};
use tokio::time::{Instant, Sleep, Timeout};

thread_local! {
    static SHARED: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as one whose runtime has no time driver: timers made on it from
/// now on go to the shared timer thread.
pub fn use_shared_timers() {
    SHARED.with(|s| s.set(true));
}

/// The shared timer thread's runtime, started on first use. It does nothing but keep
/// time; a timer firing there wakes the task that waits on it, on its own thread.
fn shared() -> &'static Handle {
    static TIMERS: OnceLock<Handle> = OnceLock::new();
    TIMERS.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("the timer thread's runtime (a timer wheel, no I/O) cannot fail to build");
        let handle = rt.handle().clone();
        std::thread::Builder::new()
            .name("sizeup-timers".into())
            .spawn(move || rt.block_on(std::future::pending::<()>()))
            .expect("cannot start the timer thread");
        handle
    })
}

/// The context timers are made in: the shared timer thread's on a marked thread.
#[allow(clippy::disallowed_methods)]
fn enter() -> Option<EnterGuard<'static>> {
    SHARED.with(|s| s.get()).then(|| shared().enter())
}

#[allow(clippy::disallowed_methods)]
pub fn sleep(duration: Duration) -> Sleep {
    let _in = enter();
    tokio::time::sleep(duration)
}

#[allow(clippy::disallowed_methods)]
pub fn sleep_until(deadline: Instant) -> Sleep {
    let _in = enter();
    tokio::time::sleep_until(deadline)
}

#[allow(clippy::disallowed_methods)]
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    let _in = enter();
    tokio::time::timeout(duration, future)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runtime without a time driver, as a closed-loop client thread has.
    fn io_only() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap()
    }

    #[test]
    fn timers_on_a_marked_thread_fire_from_the_timer_thread() {
        let outcome = std::thread::spawn(|| {
            use_shared_timers();
            io_only().block_on(async {
                let started = std::time::Instant::now();
                sleep(Duration::from_millis(30)).await;
                sleep_until(Instant::now() + Duration::from_millis(20)).await;
                let slept = started.elapsed();
                let bounded = timeout(Duration::from_millis(20), std::future::pending::<()>()).await;
                let in_time = timeout(Duration::from_secs(60), async { 7 }).await;
                (slept, bounded.is_err(), in_time.ok())
            })
        })
        .join()
        .expect("no panic for want of a time driver");
        assert!(outcome.0 >= Duration::from_millis(50), "slept only {:?}", outcome.0);
        assert!(outcome.1, "a timeout that should have fired did not");
        assert_eq!(outcome.2, Some(7));
    }

    #[test]
    fn an_unmarked_thread_keeps_its_own_runtime_timers() {
        // A paused clock belongs to this test's runtime: sleeps made here must use it,
        // so an hour passes at once instead of never.
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        rt.block_on(async {
            let t0 = Instant::now();
            sleep(Duration::from_secs(3600)).await;
            assert!(Instant::now() - t0 >= Duration::from_secs(3600));
        });
    }
}
