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

/// Sleeps for `d` to within the kernel's timer slack (about 50 us), on a timerfd the
/// runtime's I/O driver waits on. tokio's timer wheel counts whole milliseconds and
/// fires up to a millisecond late: `--delay 1` paused 2.1 ms. Falls back to [`sleep`]
/// where no timerfd can be made.
pub async fn sleep_precise(d: Duration) {
    if d.is_zero() {
        return;
    }
    match timerfd(d) {
        Ok(fd) => {
            if let Ok(mut ready) = fd.readable().await {
                ready.clear_ready();
            }
        }
        Err(_) => sleep(d).await,
    }
}

/// A one-shot timerfd that turns readable after `d`, closed when dropped.
fn timerfd(d: Duration) -> std::io::Result<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>> {
    use std::os::fd::FromRawFd;
    // SAFETY: timerfd_create returns a new descriptor (or -1); OwnedFd then owns it.
    let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
    let spec = libc::itimerspec {
        it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
        it_value: libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long },
    };
    // SAFETY: a valid descriptor and a fully initialised itimerspec.
    if unsafe { libc::timerfd_settime(raw, 0, &spec, std::ptr::null_mut()) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the AsyncFd owns the OwnedFd, which stays open until both are dropped.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.map_err(|e| e.into())
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
    fn precise_sleep_needs_no_time_driver_and_is_never_early() {
        // --delay's pause: on a timerfd the I/O driver waits on, not the 1 ms wheel.
        let slept = io_only().block_on(async {
            let t0 = std::time::Instant::now();
            for _ in 0..20 {
                sleep_precise(Duration::from_micros(1500)).await;
            }
            t0.elapsed()
        });
        assert!(slept >= Duration::from_millis(30), "20 x 1.5 ms took only {slept:?}");
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
