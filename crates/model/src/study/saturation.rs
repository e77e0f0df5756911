//! Where a series saturates, read from its figures rather than from the stop
//! conditions: still rising, a plateau, a peak then a decline, or flat from the first
//! level; the peak region (every level that cannot be told from the best) and how far
//! throughput fell beyond it. Stop conditions still end a study early; this is the
//! verdict on whatever levels were measured. Pure: levels in, verdict out. What ran
//! out at a level is `limits`' job, the sentence `report::answer`'s.
//!
//! The method (stated in the README): a level's standard error is the largest of
//! - its interval samples': sd / sqrt(n_eff) with n_eff corrected for the samples'
//!   autocorrelation (as `compare` does), times 1.25 because the figure is a median;
//! - its repeats': sd of the repeats' medians / sqrt(repeats), from 3 repeats on widened
//!   by Student's t for repeats - 1 degrees of freedom over `Z` (a few repeats estimate
//!   a spread poorly);
//! - with fewer than 6 repeats, `RUN_TO_RUN` of its value: one run says nothing of how
//!   far the next run of the same level would land, and runs a minute apart differ by
//!   a few per cent on a quiet host (docs/PERFORMANCE.md).
//!
//! Two levels differ "beyond the noise" when their difference exceeds `Z` standard
//! errors of the difference (about 95 % two-sided).

use serde::{Deserialize, Serialize};

/// A level's samples vary too much to quote one figure without its spread (CV above
/// this): the answer, sizing and reports call such a level weak where they use it.
pub const HIGH_CV: f64 = 0.10;
/// Standard errors a difference must exceed to be called real (two-sided ~95 %).
pub const Z: f64 = 2.0;
/// The run-to-run standard error assumed, as a share of the figure, for a level with
/// fewer than 6 repeats (its own spread between runs is unknown or poorly known).
pub const RUN_TO_RUN: f64 = 0.025;
/// The median of n samples has about sqrt(pi/2) times the standard error of their mean.
const MEDIAN_FACTOR: f64 = 1.2533;

/// The shape of a series' throughput against its levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// The last level is above every earlier one beyond the noise: the limit lies
    /// beyond the levels tried.
    Rising,
    /// It gained, then stopped: the last level cannot be told from the best.
    Plateau,
    /// It peaked, then fell beyond the noise by the last level.
    Decline,
    /// No level can be told from the first: added load gained nothing at all.
    Flat,
    /// One level only: no shape to read.
    OneLevel,
}

/// The verdict on one series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    pub shape: Shape,
    /// The best level and its throughput, with its range (± Z standard errors).
    pub best: u32,
    pub best_value: f64,
    pub best_range: (f64, f64),
    /// Every capacity level that cannot be told from the best, in order.
    pub region: Vec<u32>,
    /// Where it saturates: the lowest level of the peak region (None while rising).
    pub saturation: Option<u32>,
    /// How far the last level fell below the best (per cent, negative) with its range,
    /// when the shape is a decline.
    pub decline: Option<Change>,
}

/// A relative change with its range, in per cent.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub at: u32,
    pub value: f64,
    pub pct: f64,
    pub low: f64,
    pub high: f64,
}

/// What the verdict needs of a level: which level, its throughput over the repeats
/// (mean, spread, count), and the standard error its runs' own samples give.
/// `study::figures` implements it for its level results.
pub trait Measured {
    fn level(&self) -> u32;
    fn mean(&self) -> f64;
    fn repeats_stddev(&self) -> f64;
    fn repeats(&self) -> usize;
    fn sample_se(&self) -> Option<f64>;
}

impl<T: Measured> Measured for &T {
    fn level(&self) -> u32 {
        (**self).level()
    }
    fn mean(&self) -> f64 {
        (**self).mean()
    }
    fn repeats_stddev(&self) -> f64 {
        (**self).repeats_stddev()
    }
    fn repeats(&self) -> usize {
        (**self).repeats()
    }
    fn sample_se(&self) -> Option<f64> {
        (**self).sample_se()
    }
}

/// A level's standard error, by the method in the module comment.
pub fn standard_error(l: &impl Measured) -> f64 {
    let x = l.mean().abs();
    let samples = l.sample_se().unwrap_or(0.0);
    let n = l.repeats().max(1);
    // Two repeats' spread is one difference: not widened (t for 1 degree of freedom
    // would make any pair of runs say nothing), but the floor stays until 6 repeats.
    let widen = if n >= 3 { t_975(n - 1) / Z } else { 1.0 };
    let repeats = if n > 1 { l.repeats_stddev() / (n as f64).sqrt() * widen } else { 0.0 };
    let floor = if n < 6 { RUN_TO_RUN * x } else { 0.0 };
    samples.max(repeats).max(floor)
}

/// A level's range: its throughput ± Z standard errors (never below 0).
pub fn range(l: &impl Measured) -> (f64, f64) {
    let (x, se) = (l.mean(), standard_error(l));
    ((x - Z * se).max(0.0), x + Z * se)
}

/// Student's t two-sided 95 % quantile for `df` degrees of freedom (Z-like beyond 30).
fn t_975(df: usize) -> f64 {
    const T: [f64; 10] = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];
    match df {
        0 => f64::INFINITY,
        1..=10 => T[df - 1],
        11..=20 => 2.086 + (2.228 - 2.086) * (20 - df) as f64 / 10.0,
        21..=30 => 2.042 + (2.086 - 2.042) * (30 - df) as f64 / 10.0,
        _ => 1.96,
    }
}

/// The standard error of the median of one run's samples: `cv` and `mean` of the
/// samples, `n_eff` their effective count.
pub fn median_standard_error(mean: f64, cv: f64, n_eff: f64) -> f64 {
    if n_eff <= 0.0 {
        return 0.0;
    }
    MEDIAN_FACTOR * (cv * mean).abs() / n_eff.sqrt()
}

/// True when `a` and `b` cannot be told apart.
pub fn same<L: Measured>(a: &L, b: &L) -> bool {
    let (sa, sb) = (standard_error(a), standard_error(b));
    (a.mean() - b.mean()).abs() <= Z * (sa * sa + sb * sb).sqrt()
}

/// (b - a) / a in per cent with its range from both levels' standard errors (first
/// order: the ratio's relative error is the two relative errors in quadrature).
pub fn change<L: Measured>(a: &L, b: &L) -> Change {
    let (xa, xb) = (a.mean(), b.mean());
    let r = if xa != 0.0 { xb / xa } else { 0.0 };
    let rel = |se: f64, x: f64| if x != 0.0 { se / x } else { 0.0 };
    let spread = r * (rel(standard_error(a), xa).powi(2) + rel(standard_error(b), xb).powi(2)).sqrt() * Z;
    Change {
        at: b.level(),
        value: xb,
        pct: (r - 1.0) * 100.0,
        low: (r - spread - 1.0) * 100.0,
        high: (r + spread - 1.0) * 100.0,
    }
}

/// The verdict on `levels` (the capacity levels, in the order run); None without any.
pub fn judge<'a, L: Measured + 'a>(levels: impl IntoIterator<Item = &'a L>) -> Option<Saturation> {
    let levels: Vec<&L> = levels.into_iter().collect();
    let best = *levels.iter().max_by(|a, b| a.mean().total_cmp(&b.mean()))?;
    let se = standard_error(best);
    let region: Vec<u32> = levels.iter().filter(|l| same(**l, best)).map(|l| l.level()).collect();
    let last = *levels.last()?;
    let first = levels[0];
    let shape = if levels.len() == 1 {
        Shape::OneLevel
    } else if !region.contains(&last.level()) {
        Shape::Decline
    } else if region.contains(&first.level()) {
        Shape::Flat
    } else if last.level() == best.level() && region.len() == 1 {
        // Rising means above every earlier level beyond the noise: a best last level
        // that an earlier one matches is a plateau with a dip, not a rise.
        Shape::Rising
    } else {
        Shape::Plateau
    };
    Some(Saturation {
        shape,
        best: best.level(),
        best_value: best.mean(),
        best_range: (best.mean() - Z * se, best.mean() + Z * se),
        saturation: match shape {
            Shape::Rising | Shape::OneLevel => None,
            _ => region.first().copied(),
        },
        decline: (shape == Shape::Decline).then(|| change(best, last)),
        region,
    })
}

/// "2-4", "2, 8", "4": levels as a reader says them (a run of consecutive levels of
/// the series as a range).
pub fn levels_text(region: &[u32], all: &[u32]) -> String {
    let mut parts: Vec<(u32, u32)> = Vec::new();
    for &l in region {
        let pos = all.iter().position(|a| *a == l);
        match parts.last_mut() {
            Some((_, end)) if pos.is_some() && pos == all.iter().position(|a| a == end).map(|p| p + 1) => *end = l,
            _ => parts.push((l, l)),
        }
    }
    parts.iter().map(|(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") }).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::study::figures::LevelResult;
    use crate::study::steady::Spread;

    /// A level measured once: `tps`, its samples' cv, 10 effective samples.
    pub fn level(level: u32, tps: f64, cv: f64) -> LevelResult {
        let mut l = crate::study::figures::fixtures::bare_level(level, tps);
        l.sample_cv = cv;
        l.sample_se = Some(median_standard_error(tps, cv, 10.0));
        l
    }

    fn shape(points: &[(u32, f64, f64)]) -> Saturation {
        let ls: Vec<LevelResult> = points.iter().map(|&(n, x, cv)| level(n, x, cv)).collect();
        judge(&ls).unwrap()
    }

    #[test]
    fn rising_only_when_the_last_level_gains_beyond_the_noise() {
        let s = shape(&[(1, 300.0, 0.02), (2, 560.0, 0.02), (4, 900.0, 0.03)]);
        assert_eq!((s.shape, s.saturation, s.region.clone()), (Shape::Rising, None, vec![4]));
        // +3 % over the level before is inside the noise of single runs: a plateau.
        let s = shape(&[(1, 300.0, 0.02), (2, 560.0, 0.02), (4, 900.0, 0.03), (8, 927.0, 0.03)]);
        assert_eq!((s.shape, s.saturation, s.region.clone()), (Shape::Plateau, Some(4), vec![4, 8]));
    }

    /// The demo's answer: 995 tps at 2 threads, 964 at 4, 863 at 8 (cv 7-8 %) was
    /// "its limit lies beyond the levels tried".
    #[test]
    fn demo_peak_then_decline_is_not_beyond_the_levels_tried() {
        let s = shape(&[(1, 520.0, 0.05), (2, 995.0, 0.07), (4, 964.0, 0.08), (8, 863.0, 0.07)]);
        assert_eq!(s.shape, Shape::Decline);
        assert_eq!(s.region, [2, 4]);
        assert_eq!(s.saturation, Some(2));
        let d = s.decline.unwrap();
        assert_eq!(d.at, 8);
        assert!((d.pct + 13.3).abs() < 0.1, "{d:?}");
        assert!(d.low < d.pct && d.pct < d.high && d.high < 0.0, "{d:?}");
    }

    /// The 16-core scale-up: flat over 1-3 instances (1.06x, 1.03x inside cv 4-6 %),
    /// 0.76x at 8: one instance carries as much as any.
    #[test]
    fn scale_up_flat_from_one_then_falling() {
        let s = shape(&[(1, 5000.0, 0.05), (2, 5150.0, 0.04), (3, 5300.0, 0.06), (4, 4700.0, 0.05), (8, 3800.0, 0.05)]);
        assert_eq!(s.shape, Shape::Decline);
        assert_eq!(s.region, [1, 2, 3]);
        assert_eq!(s.saturation, Some(1));
        assert!((s.decline.unwrap().pct + 28.3).abs() < 0.1);
    }

    #[test]
    fn flat_within_the_noise_from_the_first_level() {
        let s = shape(&[(1, 1000.0, 0.03), (2, 1030.0, 0.03), (4, 990.0, 0.04), (8, 1010.0, 0.03)]);
        assert_eq!((s.shape, s.saturation), (Shape::Flat, Some(1)));
        assert_eq!(s.region, [1, 2, 4, 8]);
    }

    #[test]
    fn noisy_levels_widen_the_peak_region() {
        // The same means, quiet: a clear peak at 4 and a decline.
        let quiet = shape(&[(1, 400.0, 0.02), (2, 700.0, 0.02), (4, 1000.0, 0.02), (8, 850.0, 0.02)]);
        assert_eq!((quiet.shape, quiet.region.clone()), (Shape::Decline, vec![4]));
        // Noisy (cv 44 %): 2, 4 and 8 cannot be told apart.
        let noisy = shape(&[(1, 400.0, 0.44), (2, 700.0, 0.44), (4, 1000.0, 0.44), (8, 850.0, 0.44)]);
        assert_eq!(noisy.shape, Shape::Plateau);
        assert_eq!(noisy.region, [2, 4, 8]);
        assert!(noisy.best_range.1 - noisy.best_range.0 > quiet.best_range.1 - quiet.best_range.0);
    }

    #[test]
    fn repeats_carry_their_own_spread() {
        // Three repeats each, 10 % apart between runs though each run is smooth.
        let mut a = level(2, 1000.0, 0.01);
        a.throughput = Spread { mean: 1000.0, min: 900.0, max: 1100.0, stddev: 100.0, cv: 0.1, n: 3 };
        let mut b = level(4, 1150.0, 0.01);
        b.throughput = Spread { mean: 1150.0, min: 1050.0, max: 1250.0, stddev: 100.0, cv: 0.087, n: 3 };
        assert!(same(&a, &b), "runs that differ by 10 % make 15 % inside the noise");
        b.throughput.stddev = 10.0;
        a.throughput.stddev = 10.0;
        assert!(!same(&a, &b), "tight repeats make 15 % real");
    }

    #[test]
    fn one_level_and_none() {
        let s = shape(&[(8, 900.0, 0.02)]);
        assert_eq!((s.shape, s.saturation), (Shape::OneLevel, None));
        assert_eq!(judge(std::iter::empty::<&LevelResult>()), None);
    }

    #[test]
    fn regions_read_as_ranges() {
        let all = [1, 2, 4, 8, 16];
        assert_eq!(levels_text(&[2, 4], &all), "2-4");
        assert_eq!(levels_text(&[2, 4, 8], &all), "2-8");
        assert_eq!(levels_text(&[2, 8], &all), "2, 8");
        assert_eq!(levels_text(&[4], &all), "4");
    }
}
