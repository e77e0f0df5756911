//! Steady state: a step's headline throughput is the median of its interval samples
//! after warm-up (optionally only the last part of the run, as SPEC study 3 does),
//! with the samples' spread beside it. Pure arithmetic, no I/O.

use serde::{Deserialize, Serialize};

/// The samples of one run that count, and what they say.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation (sample standard deviation / mean); 0 for one sample.
    pub cv: f64,
    pub samples: usize,
    /// The samples' effective count: successive intervals of one run are correlated,
    /// so they carry less evidence than their number (`stats::significance`); absent
    /// in steps stored before it was kept (then `samples` stands in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_eff: Option<f64>,
}

impl Steady {
    /// `samples` samples all at `x`: no spread (fixtures start here).
    pub fn flat(x: f64, samples: usize) -> Steady {
        Steady { median: x, mean: x, min: x, max: x, cv: 0.0, samples, n_eff: None }
    }
}

/// One interval's throughput, its length in seconds, whether it was warm-up, and
/// whether the client counted it off schedule (`Interval::client_late_s`).
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub value: f64,
    pub duration: f64,
    pub warmup: bool,
    pub late: bool,
}

/// The steady-state figure of one run: warm-up intervals, a short last interval (under
/// half the sampling interval: a partial sample would skew the median) and intervals
/// the client counted off schedule (a second of 0 transactions while sizeup was not
/// running says nothing of the server; see [`late`]) are left out; of the rest, the
/// last `last_fraction` (0 < f <= 1, at least one sample) count.
pub fn steady(samples: &[Sample], interval: f64, last_fraction: f64) -> Option<Steady> {
    let kept: Vec<f64> =
        samples.iter().filter(|s| !s.warmup && !s.late && s.duration >= 0.5 * interval).map(|s| s.value).collect();
    if kept.is_empty() {
        return None;
    }
    let take = ((kept.len() as f64 * last_fraction.clamp(0.0, 1.0)).ceil() as usize).clamp(1, kept.len());
    let values = &kept[kept.len() - take..];
    let s = spread(values);
    Some(Steady {
        median: median(values),
        mean: s.mean,
        min: s.min,
        max: s.max,
        cv: s.cv,
        samples: values.len(),
        n_eff: Some(crate::stats::significance::effective_sample_size(values)),
    })
}

/// How many samples after the warm-up [`steady`] leaves out as counted off schedule.
pub fn late(samples: &[Sample]) -> usize {
    samples.iter().filter(|s| !s.warmup && s.late).count()
}

pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Mean, range and spread of a few numbers (repeats of a step, or samples).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n - 1); 0 for one value.
    pub stddev: f64,
    pub cv: f64,
    pub n: usize,
}

pub fn spread(values: &[f64]) -> Spread {
    let n = values.len();
    if n == 0 {
        return Spread::default();
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = if n > 1 { values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
    let stddev = var.sqrt();
    Spread {
        mean,
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        stddev,
        cv: if mean != 0.0 { stddev / mean } else { 0.0 },
        n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[f64], warm: usize) -> Vec<Sample> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| Sample { value: v, duration: 10.0, warmup: i < warm, late: false })
            .collect()
    }

    #[test]
    fn median_of_the_samples_after_warm_up() {
        // A fixture series: ramp-up during warm-up, then steady with one dip.
        let s = series(&[100.0, 800.0, 1000.0, 1010.0, 400.0, 990.0, 1005.0], 2);
        let st = steady(&s, 10.0, 1.0).unwrap();
        assert_eq!(st.samples, 5);
        assert_eq!(st.median, 1000.0);
        assert_eq!((st.min, st.max), (400.0, 1010.0));
        assert!((st.mean - 881.0).abs() < 1e-9);
        // The dip shows in the spread, not in the headline.
        assert!(st.cv > 0.25 && st.cv < 0.35, "{}", st.cv);
    }

    #[test]
    fn only_the_last_part_when_asked() {
        let s = series(&[10.0, 20.0, 30.0, 40.0, 50.0, 60.0], 0);
        let st = steady(&s, 10.0, 0.5).unwrap();
        assert_eq!((st.samples, st.median), (3, 50.0));
        // Even a tiny fraction keeps one sample.
        assert_eq!(steady(&s, 10.0, 0.01).unwrap().median, 60.0);
    }

    #[test]
    fn a_short_last_interval_is_left_out() {
        let mut s = series(&[100.0, 102.0, 98.0], 0);
        s.push(Sample { value: 5.0, duration: 0.2, warmup: false, late: false });
        let st = steady(&s, 10.0, 1.0).unwrap();
        assert_eq!((st.samples, st.median), (3, 100.0));
        assert_eq!(steady(&series(&[1.0], 1), 10.0, 1.0), None);
    }

    /// a_second_with_0_transactions_because_the_client_was_descheduled_enters_a_steps_median:
    /// sizeup stopped from 1.5 s to 5 s of a 6-s step handed intervals 2 to 5 over at 5 s:
    /// 500, 0, 0 and 0 transactions, which said nothing of the server, and the median
    /// fell to a quarter of what it did. Intervals the client counted off schedule
    /// (`Interval::client_late_s`) are left out, and counted so the step can say so.
    #[test]
    fn a_second_with_0_transactions_because_the_client_was_descheduled_enters_a_steps_median() {
        let values = [1000.0, 500.0, 0.0, 0.0, 0.0, 1010.0];
        let s: Vec<Sample> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| Sample { value: v, duration: 1.0, warmup: false, late: (1..=4).contains(&i) })
            .collect();
        let st = steady(&s, 1.0, 1.0).unwrap();
        assert_eq!((st.samples, st.median), (2, 1005.0));
        assert_eq!(late(&s), 4);
        // Nothing but late intervals: no figure at all.
        let all_late: Vec<Sample> = s.iter().map(|x| Sample { late: true, ..*x }).collect();
        assert_eq!(steady(&all_late, 1.0, 1.0), None);
        // A late warm-up interval is out anyway, and not counted as left out.
        let warm: Vec<Sample> = s.iter().map(|x| Sample { warmup: x.late, ..*x }).collect();
        assert_eq!(late(&warm), 0);
    }

    #[test]
    fn spread_of_repeats() {
        let s = spread(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!((s.mean, s.min, s.max, s.n), (5.0, 2.0, 9.0, 8));
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(spread(&[3.0]).stddev, 0.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
