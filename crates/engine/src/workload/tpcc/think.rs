//! Keying and think times (clause 5.2.5): what makes an emulated user a user. Keying
//! time is fixed per type; think time is negative exponential with the type's mean,
//! truncated at ten times the mean (clause 5.2.5.4).

use crate::random::{uniform_f64, WorkerRng};
use std::time::Duration;

/// Minimum keying times in seconds (clause 5.2.5.7), by transaction type.
pub const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
/// Minimum mean think times in seconds (clause 5.2.5.7).
pub const THINK_MEAN_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

pub fn keying_time(ty: usize) -> Duration {
    Duration::from_secs_f64(KEYING_S[ty])
}

/// Tt = -ln(r) x mean, r uniform in (0, 1], at most 10 x mean.
pub fn think_time(ty: usize, rng: &mut WorkerRng) -> Duration {
    let mean = THINK_MEAN_S[ty];
    let r = 1.0 - uniform_f64(rng); // (0, 1]: ln never sees 0
    Duration::from_secs_f64((-r.ln() * mean).min(10.0 * mean))
}

/// A user's first wait: uniform over one keying-plus-mean-think cycle of type `ty`.
pub fn first_wait(ty: usize, rng: &mut WorkerRng) -> Duration {
    Duration::from_secs_f64(uniform_f64(rng) * (KEYING_S[ty] + THINK_MEAN_S[ty]))
}

/// The cycle a user with keying and think times needs per transaction of the mix, in
/// seconds: what bounds its throughput however fast the server is.
pub fn mean_cycle_s(mix: &[u32; 5]) -> f64 {
    let total: u32 = mix.iter().sum();
    (0..5).map(|t| mix[t] as f64 / total as f64 * (KEYING_S[t] + THINK_MEAN_S[t])).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::rng_from_seed;

    #[test]
    fn think_time_is_negative_exponential_with_the_spec_mean() {
        let mut rng = rng_from_seed(3);
        for (ty, &mean) in THINK_MEAN_S.iter().enumerate() {
            let n = 200_000;
            let samples: Vec<f64> = (0..n).map(|_| think_time(ty, &mut rng).as_secs_f64()).collect();
            let avg = samples.iter().sum::<f64>() / n as f64;
            // Truncation at 10x removes e^-10 of the mass: the mean stays within 1 %.
            assert!((avg / mean - 1.0).abs() < 0.01, "type {ty}: mean {avg} vs {mean}");
            assert!(samples.iter().all(|&s| (0.0..=10.0 * mean).contains(&s)));
            // Exponential: the median is ln 2 x mean, and P(X > mean) = 1/e.
            let above = samples.iter().filter(|&&s| s > mean).count() as f64 / n as f64;
            assert!((above - (-1.0f64).exp()).abs() < 0.01, "P(X > mean) = {above}");
        }
    }

    #[test]
    fn the_default_cycle_is_twenty_one_seconds() {
        // 0.45 x 30 + 0.43 x 15 + 0.04 x 12 + 0.04 x 7 x 2 = 20.99 s
        let c = mean_cycle_s(&super::super::DEFAULT_MIX);
        assert!((c - 20.99).abs() < 1e-9, "{c}");
    }
}
