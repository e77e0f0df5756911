//! Load from several client hosts. `sizeup agent` runs on each client host and drives
//! its share of a run with the engine every run uses; the coordinator (`run`, studies,
//! plans with `--agents` or `--agents-ssh`) measures as it does for its own client
//! threads, each agent standing for one of them: agents hand over each interval's
//! recorder (latency as HDR histograms), which the coordinator adds to the others', so
//! every percentile is the union's. What each agent drove, its CPU, its busiest thread
//! and its schedule's lag are stored beside the total.
//!
//! - [`wire`]: the messages and the token proof.
//! - [`serve`]: the agent's side (`sizeup agent --listen`, or over SSH's stdin/stdout).
//! - [`fleet`]: the coordinator's side: connecting, sharing out a run, relaying it.

pub mod fleet;
pub mod serve;
mod ssh;
pub mod wire;

pub use fleet::Fleet;

pub use crate::exec::remote::{Order, Share};

/// Agent `i` of `n`'s share of `total`: its first connection and how many it drives
/// (the first ones take one more when they do not divide evenly).
pub fn split(total: u64, n: u32, i: u32) -> (u64, u64) {
    let (n, i) = (n as u64, i as u64);
    let (each, more) = (total / n, total % n);
    (i * each + i.min(more), each + (i < more) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_run_once() {
        for (total, n) in [(10u64, 3u32), (3, 3), (64, 2), (7, 1)] {
            let parts: Vec<(u64, u64)> = (0..n).map(|i| split(total, n, i)).collect();
            assert_eq!(parts.iter().map(|p| p.1).sum::<u64>(), total);
            let mut next = 0;
            for (first, count) in &parts {
                assert_eq!(*first, next, "contiguous");
                next += count;
            }
            let (lo, hi) = (parts.iter().map(|p| p.1).min().unwrap(), parts.iter().map(|p| p.1).max().unwrap());
            assert!(hi - lo <= 1, "even: {parts:?}");
        }
        assert_eq!(split(10, 3, 0), (0, 4));
        assert_eq!(split(10, 3, 2), (7, 3));
    }
}
