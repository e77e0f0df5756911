//! Stop conditions of a sweep, evaluated after each level on its steady-state figures.
//!
//! - `cpu>80`: the host's busy share (100 - idle - iowait, mpstat's view) above 80 %.
//! - `p90>5s`: any transaction type's 90th percentile above 5 s; `p90>spec` uses each
//!   type's own bound from its specification (TPC-C: 5 s, Stock-Level 20 s);
//!   `p90[stock_level]>20s` bounds one type.
//! - `plateau<5%`: throughput gained under 5 % over the previous level (or lost).
//! - `kink>3` (`kink` alone: 3): response time bent sharply against throughput. With
//!   X the throughput and R the mean response time of two consecutive levels, the step
//!   is a kink when R rose at least 10 % and ln(R2/R1) > K * max(ln(X2/X1), 0): response
//!   time grew more than K times as fast as throughput, in relative terms. Below
//!   saturation a closed loop adds load as throughput (R flat, ratio near 0); past it,
//!   as waiting (X flat, ratio unbounded). Little's law makes the two the only places
//!   added users can go, so the ratio is a scale-free test of where they went.
//!
//! - `lag>5s`: a replica fell more than 5 s behind its primary during the level.
//!
//! The saturation level is the last level that met none of the conditions.

use super::figures::LevelResult;
use crate::error::Invalid;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Condition {
    Cpu {
        above_pct: f64,
    },
    /// `above_ms` None: each type's own specified bound.
    P90 {
        above_ms: Option<f64>,
        only: Option<String>,
    },
    Plateau {
        gain_below_pct: f64,
    },
    Kink {
        factor: f64,
    },
    /// A replica's replication lag above this many seconds during the level.
    Lag {
        above_s: f64,
    },
}

/// Response time must rise at least this much (10 %) to count as a kink: smaller moves
/// are noise between two short runs.
const KINK_MIN_RISE: f64 = 0.10;

/// `cpu>80,p90>5s,plateau<5%,kink>3`.
pub fn parse(s: &str) -> Result<Vec<Condition>, Invalid> {
    s.split(',').map(str::trim).filter(|p| !p.is_empty()).map(parse_one).collect()
}

fn parse_one(p: &str) -> Result<Condition, Invalid> {
    let bad = |why: &str| Invalid::Entry {
        option: "--stop-when",
        entry: p.to_string(),
        why: why.to_string(),
        grammar: "conditions are cpu>80, p90>5s (or p90>spec, p90[type]>20s), plateau<5%, kink>3, lag>5s",
    };
    let number = |v: &str| v.trim().trim_end_matches('%').trim().parse::<f64>().map_err(|_| bad("not a number"));
    if let Some(v) = p.strip_prefix("cpu>") {
        let v = number(v)?;
        return if v > 0.0 && v <= 100.0 { Ok(Condition::Cpu { above_pct: v }) } else { Err(bad("give a percentage")) };
    }
    if p.starts_with('p') && !p.starts_with("plateau") {
        let (head, v) = p.split_once('>').ok_or_else(|| bad("write p90>5s"))?;
        // The grammar of latency objectives (`study::capacity::percentile_of`); a step
        // keeps each type's p90, so that is the percentile a condition bounds.
        let (percentile, only) = super::capacity::percentile_of(head).map_err(bad)?;
        if percentile != 90.0 {
            return Err(bad("a step keeps each type's p90: bound p90 (p90>5s, p90[type]>20s)"));
        }
        let v = v.trim();
        if v == "spec" || v == "limit" {
            return Ok(Condition::P90 { above_ms: None, only });
        }
        let ms = super::parse_ms(v).map_err(|_| bad("give the bound with its unit, e.g. 5s, 500ms or 800us"))?;
        return if ms > 0.0 {
            Ok(Condition::P90 { above_ms: Some(ms), only })
        } else {
            Err(bad("bound must be above 0"))
        };
    }
    if let Some(v) = p.strip_prefix("plateau<") {
        let v = number(v)?;
        return if (0.0..100.0).contains(&v) {
            Ok(Condition::Plateau { gain_below_pct: v })
        } else {
            Err(bad("give a gain in percent"))
        };
    }
    if let Some(v) = p.strip_prefix("lag>") {
        let v = v.trim();
        let s = super::parse_ms(v).map_err(|_| bad("give the lag with its unit, e.g. 5s"))? / 1000.0;
        return if s >= 0.0 { Ok(Condition::Lag { above_s: s }) } else { Err(bad("the lag must be 0 or more")) };
    }
    if p == "kink" {
        return Ok(Condition::Kink { factor: 3.0 });
    }
    if let Some(v) = p.strip_prefix("kink>") {
        let v = number(v)?;
        return if v > 0.0 { Ok(Condition::Kink { factor: v }) } else { Err(bad("the factor must be above 0")) };
    }
    Err(bad("unknown condition"))
}

/// Refuses a `p90[type]` whose type no workload of the study reports: it would never
/// be checked (unknown_transaction_type_in_stop_condition).
pub fn check_types(conditions: &[Condition], types: &[String]) -> Result<(), Invalid> {
    for c in conditions {
        if let Condition::P90 { only: Some(t), .. } = c {
            if !types.contains(t) {
                return Err(Invalid::UnknownType {
                    option: "--stop-when",
                    name: format!("p90[{t}]"),
                    ty: t.clone(),
                    types: types.join(", "),
                });
            }
        }
    }
    Ok(())
}

/// Which condition stopped a series: what ran out (or bent), for the answer's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tripped {
    Cpu,
    Latency,
    Plateau,
    Kink,
    Lag,
    /// A reason stored by a release that knew other conditions.
    Other,
}

/// Why a series stopped: the condition, and the sentence with its figures. Stored as the
/// sentence alone, as always; a stored one is read back into its condition once, here.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(from = "String", into = "String")]
pub struct StopReason {
    pub tripped: Tripped,
    pub words: String,
}

impl StopReason {
    fn new(tripped: Tripped, words: String) -> StopReason {
        StopReason { tripped, words }
    }
}

impl From<String> for StopReason {
    /// The sentences `check` writes: "CPU ..", "TYPE p90 ..", "plateau: ..", "kink: ..",
    /// "replication lag ..".
    fn from(words: String) -> StopReason {
        let tripped = if words.starts_with("CPU ") {
            Tripped::Cpu
        } else if words.contains(" p90 ") {
            Tripped::Latency
        } else if words.starts_with("plateau") {
            Tripped::Plateau
        } else if words.starts_with("kink") {
            Tripped::Kink
        } else if words.starts_with("replication lag") {
            Tripped::Lag
        } else {
            Tripped::Other
        };
        StopReason { tripped, words }
    }
}

impl From<StopReason> for String {
    fn from(r: StopReason) -> String {
        r.words
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.words)
    }
}

/// The first condition this level meets; None to go on.
pub fn tripped(conditions: &[Condition], previous: Option<&LevelResult>, cur: &LevelResult) -> Option<StopReason> {
    conditions.iter().find_map(|c| check(c, previous, cur))
}

fn check(c: &Condition, previous: Option<&LevelResult>, cur: &LevelResult) -> Option<StopReason> {
    let seconds = |ms: f64| if ms >= 1000.0 { format!("{:.2} s", ms / 1000.0) } else { format!("{ms:.1} ms") };
    match c {
        Condition::Cpu { above_pct } => {
            // The test's own share: other programs' load is not the server's saturation.
            let busy = cur.observed.os.as_ref()?.test_busy()?;
            (busy > *above_pct).then(|| StopReason::new(Tripped::Cpu, format!("CPU {busy:.1} % > {above_pct} %")))
        }
        Condition::P90 { above_ms, only } => {
            cur.p90.iter().find_map(|crate::stats::TypeP90 { name, ms: p90, bound_ms: spec }| {
                if only.as_ref().is_some_and(|o| o != name) {
                    return None;
                }
                let bound = above_ms.or(*spec)?;
                let words = || format!("{name} p90 {} > {}", seconds(*p90), seconds(bound));
                (*p90 > bound).then(|| StopReason::new(Tripped::Latency, words()))
            })
        }
        Condition::Plateau { gain_below_pct } => {
            let prev = previous?;
            if prev.throughput.mean <= 0.0 {
                return None;
            }
            let gain = (cur.throughput.mean / prev.throughput.mean - 1.0) * 100.0;
            let words = || format!("plateau: {gain:+.1} % over level {} (under {gain_below_pct} %)", prev.level);
            (gain < *gain_below_pct).then(|| StopReason::new(Tripped::Plateau, words()))
        }
        Condition::Lag { above_s } => {
            let lag = cur.observed.max_lag_s?;
            (lag > *above_s).then(|| StopReason::new(Tripped::Lag, format!("replication lag {lag:.0} s > {above_s} s")))
        }
        Condition::Kink { factor } => {
            let prev = previous?;
            let (x0, x1) = (prev.throughput.mean, cur.throughput.mean);
            if x0 <= 0.0 || x1 <= 0.0 || prev.latency_avg_ms <= 0.0 {
                return None;
            }
            let gr = (cur.latency_avg_ms / prev.latency_avg_ms).ln();
            let gx = (x1 / x0).ln();
            (gr >= (1.0 + KINK_MIN_RISE).ln() && gr > factor * gx.max(0.0)).then(|| {
                StopReason::new(
                    Tripped::Kink,
                    format!(
                    "kink: response time {:+.0} % for throughput {:+.1} % over level {} (more than {factor}x as fast)",
                    (gr.exp() - 1.0) * 100.0,
                    (gx.exp() - 1.0) * 100.0,
                        prev.level
                    ),
                )
            })
        }
    }
}

/// Whether a level broke a bound the study set on what counts as serving (a latency
/// or a replication-lag bound): such a level is shown, but is no capacity figure. The
/// other conditions (CPU, plateau, kink) mark where saturation begins and leave the
/// level's figures valid.
pub fn over_bound(conditions: &[Condition], cur: &LevelResult) -> bool {
    conditions
        .iter()
        .filter(|c| matches!(c, Condition::P90 { .. } | Condition::Lag { .. }))
        .any(|c| check(c, None, cur).is_some())
}

/// The last level before the first stop, or None when the first level already met one
/// (with the index of the stopping level, if any).
pub fn saturation(levels: &[u32], stopped_at: Option<usize>) -> Option<u32> {
    match stopped_at {
        Some(0) => None,
        Some(i) => levels.get(i - 1).copied(),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stop reason is typed in memory and stored as its sentence, as before: a study
    /// stored by an earlier release reads back with its condition (typed_stop_reasons).
    #[test]
    fn a_stop_reason_is_stored_as_its_sentence_and_read_back_typed() {
        let c = parse("plateau<5%").unwrap();
        let why = tripped(&c, Some(&fig(2, 100.0, 1.0)), &fig(4, 101.0, 1.0)).unwrap();
        assert_eq!(why.tripped, Tripped::Plateau);
        let json = serde_json::to_value(&why).unwrap();
        assert_eq!(json, serde_json::json!(why.words), "stored as the sentence alone");
        assert_eq!(serde_json::from_value::<StopReason>(json).unwrap(), why);
        let old: StopReason = serde_json::from_value(serde_json::json!("CPU 91.0 % > 90 %")).unwrap();
        assert_eq!(old.tripped, Tripped::Cpu);
    }
    use crate::stats::TypeP90;

    fn fig(level: u32, x: f64, r: f64) -> LevelResult {
        LevelResult { latency_avg_ms: r, ..crate::study::figures::fixtures::bare_level(level, x) }
    }

    /// unknown_transaction_type_in_stop_condition: `p90[nosuchtype]>1ms` was accepted
    /// and never checked ("no stop condition met" at a p90 of 4.9 ms).
    #[test]
    fn unknown_transaction_type_in_stop_condition() {
        let types = ["new_order".to_string(), "delivery".to_string()];
        let e = check_types(&parse("p90[nosuchtype]>1ms").unwrap(), &types).unwrap_err();
        assert!(matches!(&e, Invalid::UnknownType { option: "--stop-when", ty, .. } if ty == "nosuchtype"), "{e}");
        assert!(e.to_string().contains("its types are new_order, delivery"), "{e}");
        assert!(check_types(&parse("cpu>80,p90[delivery]>5s,p90>1s").unwrap(), &types).is_ok());
    }

    #[test]
    fn replication_lag_stops_a_level() {
        assert_eq!(parse("lag>5s").unwrap(), vec![Condition::Lag { above_s: 5.0 }]);
        assert_eq!(parse("lag>500ms").unwrap(), vec![Condition::Lag { above_s: 0.5 }]);
        assert!(matches!(parse("lag>5"), Err(Invalid::Entry { why, .. }) if why.contains("unit")));
        let c = parse("lag>5s").unwrap();
        let with = |lag| {
            let mut f = fig(2, 100.0, 1.0);
            f.observed.max_lag_s = lag;
            f
        };
        assert_eq!(tripped(&c, None, &with(Some(7.0))).map(|s| s.words), Some("replication lag 7 s > 5 s".into()));
        assert_eq!(tripped(&c, None, &with(Some(3.0))), None);
        // No replica (no lag sampled): nothing to stop on.
        assert_eq!(tripped(&c, None, &with(None)), None);
    }

    #[test]
    fn parses_each_kind() {
        assert_eq!(
            parse("cpu>80, p90>5s,plateau<5%,kink>2.5,kink,p90>spec,p90[stock_level]>20s,p90>250ms").unwrap(),
            vec![
                Condition::Cpu { above_pct: 80.0 },
                Condition::P90 { above_ms: Some(5000.0), only: None },
                Condition::Plateau { gain_below_pct: 5.0 },
                Condition::Kink { factor: 2.5 },
                Condition::Kink { factor: 3.0 },
                Condition::P90 { above_ms: None, only: None },
                Condition::P90 { above_ms: Some(20000.0), only: Some("stock_level".into()) },
                Condition::P90 { above_ms: Some(250.0), only: None },
            ]
        );
        assert!(matches!(parse("p90>5"), Err(Invalid::Entry { why, .. }) if why.contains("unit")));
        // time_units_include_microseconds: `p90>1us` had no unit to be written in.
        assert_eq!(parse("p90>800us").unwrap(), vec![Condition::P90 { above_ms: Some(0.8), only: None }]);
        assert_eq!(parse("p90>2µs").unwrap(), vec![Condition::P90 { above_ms: Some(0.002), only: None }]);
        assert!(parse("cpu>180").is_err());
        assert!(matches!(parse("memory>1"), Err(Invalid::Entry { why, .. }) if why == "unknown condition"));
        assert_eq!(parse("").unwrap(), vec![]);
    }

    #[test]
    fn plateau_on_a_fixture_series() {
        // tps by threads from a closed-loop sweep: grows, then flattens at 8.
        let xs = [(1, 400.0), (2, 780.0), (4, 1400.0), (8, 1800.0), (16, 1830.0), (32, 1700.0)];
        let c = parse("plateau<5%").unwrap();
        let mut stop = None;
        for i in 1..xs.len() {
            let (prev, cur) = (fig(xs[i - 1].0, xs[i - 1].1, 1.0), fig(xs[i].0, xs[i].1, 1.0));
            if let Some(why) = tripped(&c, Some(&prev), &cur) {
                stop = Some((i, why));
                break;
            }
        }
        let (i, why) = stop.unwrap();
        assert_eq!(xs[i].0, 16);
        assert!(why.words.contains("+1.7 % over level 8") && why.tripped == Tripped::Plateau, "{why}");
        assert_eq!(saturation(&[1, 2, 4, 8, 16, 32], Some(i)), Some(8));
        // A loss is a plateau too.
        assert!(tripped(&c, Some(&fig(1, 100.0, 1.0)), &fig(2, 90.0, 1.0)).is_some());
    }

    #[test]
    fn kink_on_a_fixture_series() {
        // Closed loop, N doubling: X grows and R stays until 8, then X flat and R doubles.
        let steps = [(1, 500.0, 2.0), (2, 990.0, 2.02), (4, 1900.0, 2.1), (8, 3000.0, 2.67), (16, 3100.0, 5.2)];
        let c = parse("kink>3").unwrap();
        let found: Vec<u32> = steps
            .windows(2)
            .filter_map(|w| {
                tripped(&c, Some(&fig(w[0].0, w[0].1, w[0].2)), &fig(w[1].0, w[1].1, w[1].2)).map(|_| w[1].0)
            })
            .collect();
        // 4 -> 8: R +27 % with X +58 %: growth, no kink. 8 -> 16: R +95 %, X +3 %: kink.
        assert_eq!(found, [16]);
        // A rise under 10 % is noise even with flat throughput.
        assert_eq!(tripped(&c, Some(&fig(1, 100.0, 10.0)), &fig(2, 100.0, 10.9)), None);
        // Throughput falling while latency rises is a kink at any factor.
        assert!(tripped(&parse("kink>100").unwrap(), Some(&fig(1, 100.0, 1.0)), &fig(2, 95.0, 1.2)).is_some());
    }

    #[test]
    fn cpu_and_p90_bounds() {
        let mut f = fig(4, 100.0, 1.0);
        f.observed.os = Some(crate::monitor::os::OsSample { idle: 15.0, ..Default::default() });
        f.p90 =
            vec![TypeP90::new("new_order", 4000.0, Some(5000.0)), TypeP90::new("stock_level", 12000.0, Some(20000.0))];
        assert_eq!(tripped(&parse("cpu>80").unwrap(), None, &f).unwrap().words, "CPU 85.0 % > 80 %");
        assert_eq!(tripped(&parse("cpu>90").unwrap(), None, &f), None);
        // Spec bounds: Stock-Level's 12 s is within its own 20 s.
        assert_eq!(tripped(&parse("p90>spec").unwrap(), None, &f), None);
        // One bound for all types: Stock-Level is over 5 s.
        let over = tripped(&parse("p90>5s").unwrap(), None, &f).unwrap();
        assert_eq!((over.tripped, over.words.as_str()), (Tripped::Latency, "stock_level p90 12.00 s > 5.00 s"));
        assert_eq!(tripped(&parse("p90[new_order]>5s").unwrap(), None, &f), None);
        assert!(tripped(&parse("p90[new_order]>3s").unwrap(), None, &f).is_some());
        // A workload without specified bounds never trips p90>spec.
        f.p90 = vec![TypeP90::new("oltp_read_write", 9e9, None)];
        assert_eq!(tripped(&parse("p90>spec").unwrap(), None, &f), None);
        // No previous level: plateau and kink wait.
        assert_eq!(tripped(&parse("plateau<5%,kink").unwrap(), None, &f), None);
    }
}
