//! When transactions are meant to start.
//!
//! Open loop (`--rate`): arrivals form a Poisson process, as sysbench's event generator
//! makes them; a worker claims the next arrival and its latency is measured from that
//! intended start, so a stalled server shows up as latency instead of being hidden by
//! fewer requests (coordinated omission). Arrivals due but not yet claimed are the
//! backlog. Times are seconds since the run started, so this part is pure.

use crate::random::{uniform_f64, WorkerRng};
use std::collections::VecDeque;

/// Arrivals kept ahead of the workers at most (an overloaded server leaves many due).
pub const MAX_QUEUED: usize = 100_000;

pub struct Arrivals {
    mean_gap: f64,
    rng: WorkerRng,
    last: f64,
    queue: VecDeque<f64>,
}

impl Arrivals {
    /// Arrivals at `rate` per second on average, from time 0.
    pub fn new(rate: f64, rng: WorkerRng) -> Self {
        Arrivals { mean_gap: 1.0 / rate, rng, last: 0.0, queue: VecDeque::new() }
    }

    fn generate(&mut self) {
        // Exponential gaps: -ln(1 - u) * mean, u in [0, 1).
        self.last += -(1.0 - uniform_f64(&mut self.rng)).ln() * self.mean_gap;
        self.queue.push_back(self.last);
    }

    /// Takes the next arrival: its intended start, seconds since the run began.
    pub fn claim(&mut self) -> f64 {
        if self.queue.is_empty() {
            self.generate();
        }
        self.queue.pop_front().expect("just generated")
    }

    /// Arrivals that were due by `now` and are not claimed yet. At most
    /// [`MAX_QUEUED`] of them are kept (memory stays bounded under any overload); the
    /// rest are counted from the rate.
    pub fn backlog(&mut self, now: f64) -> u64 {
        while self.last <= now && self.queue.len() < MAX_QUEUED {
            self.generate();
        }
        let queued = self.queue.iter().take_while(|&&t| t <= now).count() as u64;
        let beyond = if self.last < now { ((now - self.last) / self.mean_gap) as u64 } else { 0 };
        queued + beyond
    }
}

/// Whether an interval starting at `interval_start` seconds belongs to the warm-up:
/// the warm-up ends at the first interval boundary at or after `warmup` seconds.
pub fn in_warmup(interval_start: f64, warmup: f64) -> bool {
    interval_start + 1e-9 < warmup
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::rng_from_seed;

    #[test]
    fn poisson_arrivals_hold_the_rate() {
        let mut a = Arrivals::new(500.0, rng_from_seed(11));
        let mut last = 0.0;
        let n = 50_000;
        let mut gaps = Vec::with_capacity(n);
        for _ in 0..n {
            let t = a.claim();
            assert!(t >= last, "arrivals are in order");
            gaps.push(t - last);
            last = t;
        }
        let rate = n as f64 / last;
        assert!((rate - 500.0).abs() < 10.0, "rate {rate}");
        // Exponential gaps: the standard deviation equals the mean.
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!((sd / mean - 1.0).abs() < 0.05, "cv {}", sd / mean);
    }

    #[test]
    fn backlog_counts_due_unclaimed_arrivals() {
        let mut a = Arrivals::new(100.0, rng_from_seed(2));
        // Nobody claims for 10 s: about 1,000 arrivals are due.
        let b = a.backlog(10.0);
        assert!((900..1100).contains(&b), "backlog {b}");
        // Claiming them all empties the backlog; claims keep their original times.
        let mut claimed = 0;
        while a.claim() <= 10.0 {
            claimed += 1;
        }
        assert_eq!(claimed, b);
        assert_eq!(a.backlog(10.0), 0);
    }

    #[test]
    fn open_loop_overload_keeps_the_schedule_bounded() {
        // Nobody claims for an hour at 100,000/s: 360 million due, a bounded queue.
        let mut a = Arrivals::new(100_000.0, rng_from_seed(3));
        let b = a.backlog(3600.0);
        assert!((350_000_000..370_000_000).contains(&b), "backlog {b}");
        assert!(a.queue.len() <= MAX_QUEUED);
        assert!(a.claim() < 1.0, "claims still start from the oldest arrival");
    }

    #[test]
    fn warmup_covers_intervals_that_start_inside_it() {
        assert!(in_warmup(0.0, 5.0));
        assert!(in_warmup(4.0, 5.0));
        assert!(!in_warmup(5.0, 5.0));
        assert!(!in_warmup(0.0, 0.0));
    }
}
