//! Is a difference between two runs real? A Welch t-test on the runs' interval
//! samples, with each sample count replaced by an effective sample size that accounts
//! for autocorrelation (as latte does): successive throughput samples of one run are
//! not independent, and treating them as such overstates the confidence.
//!
//! The effective size uses the AR(1) approximation n_eff = n (1 - r1) / (1 + r1), with
//! r1 the lag-1 autocorrelation (clamped to [0, 0.99]: negative correlation is not
//! credited), bounded to [2, n]. Pure arithmetic, no I/O.

use serde::{Deserialize, Serialize};

/// Lag-1 autocorrelation of a series (0 for fewer than 3 values or no variance).
pub fn lag1_autocorrelation(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 3 {
        return 0.0;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let var: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    if var == 0.0 {
        return 0.0;
    }
    let cov: f64 = x.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    cov / var
}

pub fn effective_sample_size(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    if n < 2.0 {
        return n;
    }
    let r = lag1_autocorrelation(x).clamp(0.0, 0.99);
    (n * (1.0 - r) / (1.0 + r)).clamp(2.0_f64.min(n), n)
}

/// The outcome of comparing sample series A and B.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    pub mean_a: f64,
    pub mean_b: f64,
    /// (B - A) / A, in percent.
    pub change_pct: f64,
    pub n_eff_a: f64,
    pub n_eff_b: f64,
    pub t: f64,
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// p below 0.05.
    pub significant: bool,
}

/// Welch's t-test with autocorrelation-corrected sample sizes. None when either side
/// has fewer than 2 samples.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    welch_with(a, b, effective_sample_size)
}

/// Welch's t-test on independent figures (repeated runs, one figure each): no
/// autocorrelation to correct for.
pub fn welch_independent(a: &[f64], b: &[f64]) -> Option<Welch> {
    welch_with(a, b, |x| x.len() as f64)
}

fn welch_with(a: &[f64], b: &[f64], size: fn(&[f64]) -> f64) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let stats = |x: &[f64]| {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var, size(x))
    };
    let (ma, va, na) = stats(a);
    let (mb, vb, nb) = stats(b);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    let change_pct = if ma != 0.0 { (mb - ma) / ma * 100.0 } else { 0.0 };
    if se2 == 0.0 {
        // No spread at all: any difference is certain, none is none.
        let differ = ma != mb;
        return Some(Welch {
            mean_a: ma,
            mean_b: mb,
            change_pct,
            n_eff_a: na,
            n_eff_b: nb,
            t: if differ { f64::INFINITY } else { 0.0 },
            df: na + nb - 2.0,
            p: if differ { 0.0 } else { 1.0 },
            significant: differ,
        });
    }
    let t = (mb - ma) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (na - 1.0).max(1.0) + sb * sb / (nb - 1.0).max(1.0));
    let p = student_t_two_sided_p(t, df);
    Some(Welch { mean_a: ma, mean_b: mb, change_pct, n_eff_a: na, n_eff_b: nb, t, df, p, significant: p < 0.05 })
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    incomplete_beta(x, df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The regularised incomplete beta function I_x(a, b), by Lentz's continued fraction.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    // The fraction converges fast for x < (a + 1) / (a + b + 2); use symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: ~15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection.
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_distribution_p_values_match_tables() {
        // Two-sided critical values from standard tables: p = 0.05.
        for (t, df) in [(12.706, 1.0), (2.228, 10.0), (2.042, 30.0), (1.984, 100.0)] {
            let p = student_t_two_sided_p(t, df);
            assert!((p - 0.05).abs() < 5e-4, "t {t} df {df}: p {p}");
        }
        assert!((student_t_two_sided_p(0.0, 5.0) - 1.0).abs() < 1e-12);
        // p = 0.01 at df 20: t = 2.845.
        assert!((student_t_two_sided_p(2.845, 20.0) - 0.01).abs() < 2e-4);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn autocorrelation_shrinks_the_effective_size() {
        // Independent-looking alternation: negative r1, not credited: n_eff = n.
        let alt: Vec<f64> = (0..20).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        assert_eq!(effective_sample_size(&alt), 20.0);
        // A slow drift: strongly autocorrelated, worth far fewer samples.
        let drift: Vec<f64> = (0..20).map(|i| (i as f64 / 10.0).sin()).collect();
        let r = lag1_autocorrelation(&drift);
        assert!(r > 0.8, "{r}");
        assert_eq!(effective_sample_size(&drift), 2.0, "1.6 by the formula, bounded below by 2");
    }

    #[test]
    fn welch_separates_real_differences_from_noise() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5, 99.5, 101.5, 98.5, 100.0];
        let b: Vec<f64> = a.iter().map(|v| v * 1.10).collect();
        let w = welch(&a, &b).unwrap();
        assert!(w.significant && w.p < 1e-6, "{w:?}");
        assert!((w.change_pct - 10.0).abs() < 1e-9);
        // The same spread, means 0.5 % apart: not significant.
        let c: Vec<f64> = a.iter().map(|v| v + 0.5).collect();
        let w = welch(&a, &c).unwrap();
        assert!(!w.significant && w.p > 0.2, "{w:?}");
        // Hand check: means 100 and 101, unit-ish spread, both n = 10 (no autocorrelation
        // claimed for an alternating series).
        let x = [99.0, 101.0, 99.0, 101.0, 99.0, 101.0, 99.0, 101.0, 99.0, 101.0];
        let y: Vec<f64> = x.iter().map(|v| v + 1.0).collect();
        let w = welch(&x, &y).unwrap();
        // s² = 10/9 each, se = sqrt(2 * 10/9 / 10) = 0.4714, t = 2.1213, df = 18.
        assert!((w.t - 2.1213).abs() < 1e-3 && (w.df - 18.0).abs() < 1e-9, "{w:?}");
        assert!((w.p - 0.0481).abs() < 1e-3, "{w:?}");
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
        assert!(welch(&[5.0, 5.0], &[6.0, 6.0]).unwrap().significant);
    }
}
