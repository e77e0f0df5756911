//! Capacity at a latency objective: an open-loop rate study. Levels are arrival rates
//! (transactions per second, Poisson arrivals), latency is measured from each
//! transaction's intended start (coordinated omission corrected), and the question is
//! the highest rate whose latency meets the objective ("p99<10ms"). Closed loops give
//! throughput at some concurrency; a requirement reads as a rate and a latency, so this
//! is the figure a planner needs.
//!
//! Pure: objectives, a level's figures and verdict, the search for the next rate, and
//! the answer. `runner::capacity` runs the levels.

use crate::error::{Invalid, Unmeasured};
use crate::result::RunDocument;
use crate::stats;
use serde::{Deserialize, Serialize};

/// One latency objective: `p99<20ms`, `p99.9[delivery]<5s`, `p50<1ms`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Objective {
    /// 0 < percentile < 100.
    pub percentile: f64,
    /// One transaction type, or every type the workload reports.
    pub only: Option<String>,
    pub below_ms: f64,
}

impl Objective {
    /// `p99 <= 10 ms`, `p90[delivery] <= 5 s`.
    pub fn label(&self) -> String {
        format!("{} <= {}", self.name(), ms_text(self.below_ms))
    }

    /// `p99`, `p99.9[delivery]`.
    pub fn name(&self) -> String {
        let p = trim_number(self.percentile);
        match &self.only {
            Some(t) => format!("p{p}[{t}]"),
            None => format!("p{p}"),
        }
    }
}

/// `p99<20ms,p90[delivery]<5s`: one or more objectives, all to be met.
pub fn parse_objectives(s: &str) -> Result<Vec<Objective>, Invalid> {
    let parts: Vec<&str> = s.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return Err(Invalid::Missing(
            "--latency: give an objective, e.g. 'p99<20ms' (several: 'p99<20ms,p50<5ms')".into(),
        ));
    }
    let objectives: Vec<Objective> = parts.into_iter().map(parse_one).collect::<Result<_, _>>()?;
    // One bound per objective: `p99<1ms` and `p99<2ms` together cannot both be meant
    // (an_objective_given_twice).
    if let Some((i, o)) =
        objectives.iter().enumerate().find(|(i, o)| objectives[..*i].iter().any(|p| p.name() == o.name()))
    {
        let first = objectives[..i].iter().find(|p| p.name() == o.name()).expect("found");
        return Err(Invalid::Twice(format!(
            "--latency names {} twice (<{}ms and <{}ms): give each objective once",
            o.name(),
            trim_number(first.below_ms),
            trim_number(o.below_ms)
        )));
    }
    Ok(objectives)
}

fn parse_one(p: &str) -> Result<Objective, Invalid> {
    let bad = |why: &str| Invalid::Entry {
        option: "--latency",
        entry: p.to_string(),
        why: why.to_string(),
        grammar: "write an objective as p99<20ms, p99.9<100ms or p90[delivery]<5s",
    };
    let (head, bound) = p.split_once('<').ok_or_else(|| bad("the bound follows <"))?;
    let (percentile, only) = percentile_of(head).map_err(bad)?;
    let bound = bound.trim().trim_start_matches('=').trim();
    let below_ms = super::parse_ms(bound).map_err(|_| bad("give the bound with its unit, e.g. 20ms or 5s"))?;
    if !(below_ms > 0.0 && below_ms <= 86_400_000.0) {
        return Err(bad("the bound must be above 0 and at most a day"));
    }
    Ok(Objective { percentile, only, below_ms })
}

/// A latency figure's name as objectives and stop conditions write it: `p99`,
/// `p99.9`, `p90[delivery]` (the percentile, and the one transaction type it bounds).
pub fn percentile_of(head: &str) -> Result<(f64, Option<String>), &'static str> {
    let rest = head.trim().strip_prefix('p').ok_or("it starts with p and a percentile")?;
    let (pct, only) = match rest.split_once('[') {
        Some((pct, t)) => {
            let t = t.trim().strip_suffix(']').ok_or("close the type with ]")?.trim();
            if t.is_empty() {
                return Err("name the transaction type");
            }
            (pct, Some(t.to_string()))
        }
        None => (rest, None),
    };
    let percentile: f64 = pct.trim().parse().map_err(|_| "the percentile is not a number")?;
    if !(percentile > 0.0 && percentile < 100.0) {
        return Err("the percentile lies between 0 and 100 (p50, p99, p99.9)");
    }
    Ok((percentile, only))
}

/// Refuses an objective on a type no workload of the study reports: it could never be
/// checked (as `stop::check_types` for stop conditions).
pub fn check_types(objectives: &[Objective], types: &[String]) -> Result<(), Invalid> {
    for o in objectives {
        if let Some(t) = o.only.as_ref().filter(|t| !types.contains(t)) {
            return Err(Invalid::UnknownType {
                option: "--latency",
                name: o.name(),
                ty: t.clone(),
                types: types.join(", "),
            });
        }
    }
    Ok(())
}

/// One objective as a level measured it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// The objective's name (`p99`, `p90[delivery]`).
    pub objective: String,
    pub ms: f64,
    pub below_ms: f64,
    /// The type it was worst on (several types checked against one bound).
    pub on: String,
    /// Transactions of that type the percentile was read from (None: stored before
    /// they were counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions: Option<u64>,
}

/// A queue still growing across a level: its mean latency and the transactions in the
/// system rose together from the level's first half to its second, beyond the
/// intervals' noise. The objective held over the level, but would not over a longer run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rising {
    /// Mean latency (from each arrival's intended start) over the first and second half.
    pub from_ms: f64,
    pub to_ms: f64,
    /// Transactions in the system (running or waiting for a connection) at interval
    /// ends, on average over each half.
    pub from_in_system: f64,
    pub to_in_system: f64,
}

/// The least intervals a level needs before a trend is read (three per half).
pub const TREND_INTERVALS: usize = 6;

/// Whether a level's intervals, (mean latency ms, transactions in the system at the
/// end) in order, show a growing queue: both halves' means apart by more than half
/// again and by three standard errors (Welch) in latency and in the system together
/// (a queue that grows shows both, by Little's law; one alone is noise or warming).
/// None with fewer than [`TREND_INTERVALS`].
pub fn rising(intervals: &[(f64, f64)]) -> Option<Rising> {
    let n = intervals.len();
    if n < TREND_INTERVALS {
        return None;
    }
    let (a, b) = (&intervals[..n / 2], &intervals[n - n / 2..]);
    let grew = |f: fn(&(f64, f64)) -> f64| {
        let stats = |xs: &[(f64, f64)]| {
            let m = xs.iter().map(f).sum::<f64>() / xs.len() as f64;
            let var = xs.iter().map(|x| (f(x) - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
            (m, var / xs.len() as f64)
        };
        let ((ma, va), (mb, vb)) = (stats(a), stats(b));
        (mb > 1.5 * ma && mb - ma > 3.0 * (va + vb).sqrt()).then_some((ma, mb))
    };
    let (from_ms, to_ms) = grew(|x| x.0)?;
    let (from_in_system, to_in_system) = grew(|x| x.1)?;
    Some(Rising { from_ms, to_ms, from_in_system, to_in_system })
}

/// Transactions a level needs before its `percentile` is judged: at least 10 beyond
/// it (1,000 for p99, 100 for p90), so one slow transaction is not the whole tail.
pub fn transactions_to_judge(percentile: f64) -> u64 {
    let tail = (1.0 - percentile / 100.0).max(1e-6);
    (10.0 / tail - 1e-6).ceil() as u64
}

impl Measured {
    pub fn met(&self) -> bool {
        self.ms <= self.below_ms
    }
}

/// Corrected latency of one transaction type at one rate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TypeLatency {
    pub name: String,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
}

/// What one rate level measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RateFigures {
    /// The arrival rate asked for, transactions per second.
    pub offered: f64,
    /// Transactions finished per second over the measured time.
    pub achieved: f64,
    /// The connections open (the pool).
    pub connections: u32,
    /// Transactions in the system on average, by Little's law: the achieved rate x the
    /// mean latency from the intended start (in flight on a connection, or waiting for
    /// one). Sampling in-flight counts at interval ends reads near 0 at sub-millisecond
    /// latencies; this does not.
    pub in_flight_mean: f64,
    /// The most in flight seen at an interval's end.
    pub in_flight_max: u64,
    /// Arrivals waiting for a connection at interval ends, at most; arrivals due that
    /// never started before the end.
    pub max_backlog: u64,
    pub missed: u64,
    pub measured: Vec<Measured>,
    pub types: Vec<TypeLatency>,
    /// TPC-C: New-Orders per minute per transaction per second (to speak in NOPM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm_per_tps: Option<f64>,
    /// The queue was still growing across the level (see [`rising`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rising: Option<Rising>,
    /// A replayed capture: the rate is statements a second, this scales it to the
    /// captured traffic's speed and transactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayScale>,
}

/// A replay's rates against the captured traffic's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayScale {
    /// Statements a second at speed 1.
    pub captured_rate: f64,
    /// The application's transactions per statement (COMMITs and autocommit statements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions_per_statement: Option<f64>,
    /// The data was made from the capture's schema, not copied.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub made_from_schema: bool,
}

/// What a rate study's rates are said in.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum RateUnit {
    #[default]
    Tps,
    /// TPC-C: New-Orders per minute per transaction per second.
    Nopm(f64),
    /// A replay: statements a second, said as a speed of the captured traffic.
    Replay(ReplayScale),
}

impl RateUnit {
    /// The unit the levels were measured in (tps where none says otherwise).
    pub fn of(levels: &[(u32, RateFigures, Verdict)]) -> RateUnit {
        let f = || levels.iter().map(|(_, f, _)| f);
        match (f().find_map(|f| f.replay), f().find_map(|f| f.nopm_per_tps)) {
            (Some(r), _) => RateUnit::Replay(r),
            (None, Some(k)) => RateUnit::Nopm(k),
            (None, None) => RateUnit::Tps,
        }
    }
}

impl RateFigures {
    /// How far it fell behind the offered rate, in percent (0 when it kept up).
    pub fn behind_pct(&self) -> f64 {
        if self.offered <= 0.0 {
            return 0.0;
        }
        ((1.0 - self.achieved / self.offered) * 100.0).max(0.0)
    }
}

/// How a level's transactions fall short of its rate by chance alone: Poisson arrivals
/// over `seconds` vary by sqrt(n); three of those (or 2 %, whichever is more) is behind.
pub fn behind_allowance_pct(offered: f64, seconds: f64) -> f64 {
    let n = (offered * seconds).max(1.0);
    (300.0 / n.sqrt()).max(2.0)
}

/// The verdict on one rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// Kept up, and every objective held.
    Met,
    /// Kept up, and an objective did not hold.
    Missed { objective: String, ms: f64, below_ms: f64 },
    /// Finished fewer transactions than arrived, beyond chance.
    Behind { pct: f64 },
    /// Every connection was busy and there were fewer than the objective needs: the
    /// pool, not the server, could not carry the rate.
    PoolLimited { connections: u32, needed: u32 },
    /// Too few transactions lay beyond the objective's percentile to read it
    /// (`transactions_to_judge`): not judged either way.
    TooShort { objective: String, transactions: u64, needed: u64 },
    /// Programs outside the test starved the server: not judged either way.
    Starved { other_cores: f64, busy_cores: f64 },
    /// The objective broke while the hypervisor took this share of the host's CPU time
    /// (steal, in %): not judged either way, and the rate runs again (steal comes in
    /// bursts). See `verdict_with_steal`.
    Stolen { steal_pct: f64 },
    /// The objective held over the level, but its queue was still growing (latency and
    /// transactions in the system rising, [`Rising`]): a longer run would break it, so
    /// it counts as a failure (a_met_level_must_be_sustained).
    Unsteady { from_ms: f64, to_ms: f64 },
    /// No interval after the warm-up counted (sizeup itself not running on time, or
    /// steps shorter than an interval): not judged either way, and the search stops
    /// there as at a starved level (a_rate_level_without_a_counted_interval).
    NotCounted { why: String },
}

impl Verdict {
    /// A few words for a level's line and table row.
    pub fn short(&self) -> String {
        match self {
            Verdict::Met => "met".into(),
            Verdict::Missed { objective, .. } => format!("missed {objective}"),
            Verdict::Behind { pct } => format!("fell {pct:.0} % behind"),
            Verdict::PoolLimited { connections, .. } => format!("pool of {connections} full"),
            Verdict::TooShort { transactions, needed, .. } => {
                format!("too short to judge ({transactions} of {needed} transactions)")
            }
            Verdict::Starved { .. } => "starved by other programs: not judged".into(),
            Verdict::NotCounted { .. } => "no interval counted: not judged".into(),
            Verdict::Stolen { steal_pct } => format!("hypervisor took {steal_pct:.0} % (steal): not judged"),
            Verdict::Unsteady { from_ms, to_ms } => {
                format!("met, not steady (latency {} -> {}, queue growing)", ms_text(*from_ms), ms_text(*to_ms))
            }
        }
    }

    pub fn met(&self) -> bool {
        *self == Verdict::Met
    }

    /// Spoiled by something outside the test (other programs, the hypervisor).
    pub fn spoiled(&self) -> bool {
        matches!(self, Verdict::Starved { .. } | Verdict::Stolen { .. } | Verdict::NotCounted { .. })
    }

    /// A failure that says something about the server (not the pool).
    pub fn server_failed(&self) -> bool {
        matches!(self, Verdict::Missed { .. } | Verdict::Behind { .. } | Verdict::Unsteady { .. })
    }
}

/// The connections an objective needs in flight at `rate` (Little's law: rate x the
/// latency allowed), the least a pool must have for the pool not to be the limit.
pub fn connections_needed(rate: f64, objectives: &[Objective]) -> u32 {
    let most_ms = objectives.iter().map(|o| o.below_ms).fold(0.0, f64::max);
    (rate * most_ms / 1000.0).ceil().clamp(1.0, u32::MAX as f64 / 4.0) as u32
}

/// The pool a level opens when none is given: twice what the objective needs in
/// flight, plus one per CPU for bursts, within `cap` (the server's and the tool's
/// limits). Idle connections cost the server little; a pool that caps the rate would
/// fake a limit.
pub fn default_connections(rate: f64, objectives: &[Objective], cpus: u32, cap: u32) -> u32 {
    (2 * connections_needed(rate, objectives) + cpus).clamp(4.min(cap), cap.max(1))
}

/// The verdict on a level: the pool first, then falling behind, then each objective.
///
/// A failed level is the pool's limit, not the server's, when every connection was
/// busy, there were fewer than the objective needs in flight, and the server was not
/// slowing down: each connection's transaction took (connections / achieved rate) no
/// more than twice the mean latency of the closed-loop probe (`probe_ms`). A saturated
/// server fills any pool too, but its transactions then take far longer than the
/// probe's; without a probe, a full pool smaller than the need counts as the pool's.
pub fn verdict(f: &RateFigures, seconds: f64, objectives: &[Objective], probe: Option<(f64, f64)>) -> Verdict {
    // Arrivals never served are no latency in the histograms: more of them than the
    // tightest objective's tail (1 % for p99) could hide its failure, so they are behind.
    let unserved_pct = f.missed as f64 / (f.offered * seconds).max(1.0) * 100.0;
    let tail_pct = objectives.iter().map(|o| 100.0 - o.percentile).fold(f64::INFINITY, f64::min);
    let behind = f.behind_pct().max(unserved_pct);
    let fell_behind = behind > behind_allowance_pct(f.offered, seconds) || unserved_pct > tail_pct;
    let probe_ms = probe.map(|p| p.1);
    // A server at its probe's throughput was the limit, whatever the pool.
    let below_probe = probe.is_none_or(|p| f.achieved < 0.8 * p.0);
    let missed = f.measured.iter().find(|m| !m.met());
    let short = f.measured.iter().find_map(|m| {
        let o = objectives.iter().find(|o| o.name() == m.objective)?;
        let needed = transactions_to_judge(o.percentile);
        let n = m.transactions?;
        (n < needed).then(|| Verdict::TooShort { objective: m.objective.clone(), transactions: n, needed })
    });
    let needed = connections_needed(f.offered, objectives);
    // A replay's connections are its captured sessions: never a pool to widen.
    let pool_full = f.replay.is_none() && f.in_flight_mean >= 0.9 * f.connections as f64;
    let per_connection_ms = if f.achieved > 0.0 { f.connections as f64 / f.achieved * 1000.0 } else { f64::INFINITY };
    let server_kept_pace = probe_ms.is_none_or(|p| per_connection_ms <= 2.0 * p);
    if (fell_behind || missed.is_some()) && pool_full && f.connections < needed && server_kept_pace && below_probe {
        return Verdict::PoolLimited { connections: f.connections, needed };
    }
    if fell_behind {
        return Verdict::Behind { pct: behind };
    }
    // A percentile read from a handful of transactions is one slow transaction.
    if let Some(v) = short {
        return v;
    }
    match (missed, &f.rising) {
        (Some(m), _) => Verdict::Missed { objective: m.objective.clone(), ms: m.ms, below_ms: m.below_ms },
        (None, Some(r)) => Verdict::Unsteady { from_ms: r.from_ms, to_ms: r.to_ms },
        (None, None) => Verdict::Met,
    }
}

/// A level's verdict once the hypervisor's steal (in %, when it reached
/// `os::STOLEN_PCT`) is weighed: the paused CPU may have broken the objective, so a
/// miss is not judged ([`Verdict::Stolen`]); but a level that met it despite the
/// steal met it, and one that fell further behind than twice the CPU stolen would have
/// fallen behind without it (an overload is no steal's doing).
pub fn verdict_with_steal(v: Verdict, steal_pct: Option<f64>) -> Verdict {
    let Some(steal_pct) = steal_pct else { return v };
    match v {
        Verdict::Missed { .. } => Verdict::Stolen { steal_pct },
        Verdict::Behind { pct } if pct <= 2.0 * steal_pct => Verdict::Stolen { steal_pct },
        v => v,
    }
}

/// A level's rate figures from its run: the objectives measured on the run's
/// steady-state histograms (latency from the intended start), per type.
pub fn rate_figures(doc: &RunDocument, offered: f64, objectives: &[Objective]) -> Result<RateFigures, Unmeasured> {
    let summary = doc.summary.as_ref().ok_or(Unmeasured::NoSummary)?;
    let mut types = Vec::new();
    let mut histograms = Vec::new();
    for t in &summary.types {
        let Some(enc) = doc.histograms.get(&t.name) else { continue };
        let h = stats::decode_histogram(enc)?;
        let at = |q: f64| if h.is_empty() { 0.0 } else { h.value_at_quantile(q) as f64 / 1000.0 };
        types.push(TypeLatency { name: t.name.clone(), p50: at(0.5), p95: at(0.95), p99: at(0.99), p999: at(0.999) });
        histograms.push((t.name.clone(), h));
    }
    // A replay's objective is on all its statements (its digests are many, some rare):
    // the digests' own percentiles are beside it, to say which broke first.
    let replay = (doc.config.unit() == crate::unit::Unit::Statements).then(|| {
        let o: crate::capture::schedule::ReplayOptions =
            serde_json::from_value(doc.config.options.clone()).unwrap_or_default();
        ReplayScale {
            captured_rate: o.captured_rate,
            transactions_per_statement: o.transactions_per_statement,
            made_from_schema: o.made_from_schema,
        }
    });
    let all = match replay {
        Some(_) => {
            let mut all = stats::new_histogram();
            for (_, h) in &histograms {
                all.add(h).map_err(|e| Unmeasured::Histogram(e.to_string()))?;
            }
            Some(all)
        }
        None => None,
    };
    let measured = objectives
        .iter()
        .map(|o| {
            if let (Some(all), None) = (&all, &o.only) {
                let ms =
                    if all.is_empty() { f64::MAX } else { all.value_at_quantile(o.percentile / 100.0) as f64 / 1000.0 };
                return Measured {
                    objective: o.name(),
                    ms,
                    below_ms: o.below_ms,
                    on: ALL_STATEMENTS.into(),
                    transactions: Some(all.len()),
                };
            }
            let worst = histograms
                .iter()
                .filter(|(n, h)| o.only.as_ref().is_none_or(|t| t == n) && !h.is_empty())
                .map(|(n, h)| (n.clone(), h.value_at_quantile(o.percentile / 100.0) as f64 / 1000.0, h.len()))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            // No sample of the type: no figure (the largest finite number: JSON has no
            // infinity), which fails the objective.
            let (on, ms, n) = worst.unwrap_or_else(|| (o.only.clone().unwrap_or_default(), f64::MAX, 0));
            Measured { objective: o.name(), ms, below_ms: o.below_ms, on, transactions: Some(n) }
        })
        .collect();
    let steady: Vec<&stats::Interval> = doc.intervals.iter().filter(|iv| !iv.warmup).collect();
    let achieved = if summary.seconds > 0.0 { summary.transactions as f64 / summary.seconds } else { 0.0 };
    Ok(RateFigures {
        // A workload that paces itself says what it offered over the measured time.
        offered: summary.offered_rate.unwrap_or(offered),
        achieved,
        connections: doc.config.run.threads,
        in_flight_mean: achieved * summary.latency_ms.avg / 1000.0,
        in_flight_max: steady.iter().map(|iv| iv.concurrency).max().unwrap_or(0),
        max_backlog: summary.max_backlog,
        missed: summary.missed_arrivals,
        measured,
        types,
        nopm_per_tps: summary.nopm.filter(|_| summary.tps > 0.0).map(|n| n / summary.tps),
        rising: rising(
            &steady
                .iter()
                .filter(|iv| iv.transactions > 0)
                .map(|iv| (iv.avg_ms, (iv.concurrency + iv.backlog) as f64))
                .collect::<Vec<_>>(),
        ),
        replay,
    })
}

/// A replay's digests at the rate that broke an objective, worst first: those over the
/// bound at the objective's percentile (the nearest the level kept: p50, p95, p99 or
/// p99.9), at most `n`. Said as the digests whose latency broke first.
pub fn digests_over(f: &RateFigures, o: &Objective, n: usize) -> Vec<(String, f64)> {
    let at = |t: &TypeLatency| match o.percentile {
        p if p >= 99.9 => t.p999,
        p if p >= 99.0 => t.p99,
        p if p >= 95.0 => t.p95,
        _ => t.p50,
    };
    let mut over: Vec<(String, f64)> = f
        .types
        .iter()
        .filter(|t| o.only.as_ref().is_none_or(|only| *only == t.name))
        .map(|t| (t.name.clone(), at(t)))
        .filter(|(_, ms)| *ms > o.below_ms)
        .collect();
    over.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    over.truncate(n);
    over
}

/// The percentile [`digests_over`] reads for an objective, by name.
pub fn kept_percentile(o: &Objective) -> &'static str {
    match o.percentile {
        p if p >= 99.9 => "p99.9",
        p if p >= 99.0 => "p99",
        p if p >= 95.0 => "p95",
        _ => "p50",
    }
}

/// What a replay's objectives are measured on: every statement it replayed.
pub const ALL_STATEMENTS: &str = "all statements";

/// A rate study's level as stored with its step: the figures and the verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateLevel {
    pub figures: RateFigures,
    pub verdict: Verdict,
}

/// How the rates are found: from `first` up by `factor` until one fails, then halving
/// the gap between the highest that met the objective and the lowest that did not,
/// until it is within `resolution` (a fraction) of the lower.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    pub first: u32,
    pub factor: f64,
    pub resolution: f64,
    /// The most levels it runs (the search ends where it stands, said so).
    pub max_levels: usize,
    /// Rates given by the user, run in order instead of searched (the first that falls
    /// behind ends them: a higher rate only falls further).
    pub given: Vec<u32>,
    /// Once the bracket is as fine as asked, run its two rates once more, so the range
    /// it gives holds the run-to-run spread and not one sample of each.
    pub repeat_bracket: bool,
}

/// The highest rate that met the objective below the lowest that failed on the server,
/// and that lowest failure (either may be missing). A rate run twice counts as failed
/// when either run failed: the lower end stays one that always met.
pub fn bracket(tried: &[(u32, Verdict)]) -> (Option<u32>, Option<u32>) {
    let fail = tried.iter().filter(|(_, v)| v.server_failed()).map(|(r, _)| *r).min();
    let met = tried.iter().filter(|(r, v)| v.met() && fail.is_none_or(|f| *r < f)).map(|(r, _)| *r).max();
    (met, fail)
}

/// The top of the capacity's range: the lowest failure, or higher where a rate at or
/// above it met the objective in another run (the edge varies from run to run, and
/// the range must hold both runs).
pub fn upper(tried: &[(u32, Verdict)]) -> Option<u32> {
    let (_, fail) = bracket(tried);
    let met_above = tried.iter().filter(|(r, v)| v.met() && fail.is_some_and(|f| *r >= f)).map(|(r, _)| *r).max();
    fail.map(|f| met_above.map_or(f, |m| m.max(f)))
}

/// Rates whose runs disagreed (one met the objective, another failed on the server).
pub fn disagreed(tried: &[(u32, Verdict)]) -> Vec<u32> {
    let mut out: Vec<u32> = tried
        .iter()
        .filter(|(r, v)| v.met() && tried.iter().any(|(x, w)| x == r && w.server_failed()))
        .map(|(r, _)| *r)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// How often a rate runs stolen before the search stops there: the hypervisor's
/// neighbours are busy for longer than a rerun waits.
pub const MOST_STOLEN: usize = 2;

/// Whether some rate ran stolen [`MOST_STOLEN`] times: the search stopped there.
pub fn stopped_by_steal(tried: &[(u32, Verdict)]) -> bool {
    tried.iter().any(|(r, _)| runs_at(tried, *r, |v| matches!(v, Verdict::Stolen { .. })) >= MOST_STOLEN)
}

/// The runs at rate `r` whose verdict `which` picks.
fn runs_at(tried: &[(u32, Verdict)], r: u32, which: impl Fn(&Verdict) -> bool) -> usize {
    tried.iter().filter(|(x, v)| *x == r && which(v)).count()
}

/// The next rate to run, or `None` when the search is done. A starved level ends the
/// search (the host is not the server's); a stolen one runs again, and ends it when
/// stolen twice; a level too short to judge ends it going down (a lower rate finishes
/// fewer transactions still), and is passed going up.
pub fn next_rate(s: &Search, tried: &[(u32, Verdict)]) -> Option<u32> {
    let ends =
        |v: &Verdict| matches!(v, Verdict::PoolLimited { .. } | Verdict::Starved { .. } | Verdict::NotCounted { .. });
    // A stolen run is run again, and is not one of the levels asked for.
    let judged = tried.iter().filter(|(_, v)| !matches!(v, Verdict::Stolen { .. })).count();
    if tried.iter().any(|(_, v)| ends(v)) || judged >= s.max_levels {
        return None;
    }
    // Order-free (a resumed study's levels come back by rate): a rate stolen twice ends
    // the search; one whose only runs were stolen runs again.
    if stopped_by_steal(tried) {
        return None;
    }
    let judged_at = |r: u32| runs_at(tried, r, |v| !matches!(v, Verdict::Stolen { .. }));
    if let Some((r, _)) = tried.iter().find(|(r, v)| matches!(v, Verdict::Stolen { .. }) && judged_at(*r) == 0) {
        return Some(*r);
    }
    if !s.given.is_empty() {
        if tried.iter().any(|(_, v)| matches!(v, Verdict::Behind { .. })) {
            return None;
        }
        return s.given.iter().copied().find(|r| !tried.iter().any(|(t, _)| t == r));
    }
    let next = match bracket(tried) {
        (_, None) if tried.is_empty() => s.first,
        (Some(lo), None) => (lo as f64 * s.factor).round() as u32,
        (None, Some(hi)) => {
            let down = (hi as f64 / s.factor).floor() as u32;
            if down == 0 || down == hi {
                return None;
            }
            down
        }
        (Some(lo), Some(hi)) => {
            if (hi - lo) as f64 <= (s.resolution * lo as f64).max(1.0) {
                let runs = |r: u32| runs_at(tried, r, |v| !v.spoiled());
                return [lo, hi].into_iter().find(|r| s.repeat_bracket && runs(*r) < 2);
            }
            lo + (hi - lo) / 2
        }
        // Only levels too short to judge: a higher rate finishes more transactions.
        (None, None) if tried.iter().all(|(_, v)| matches!(v, Verdict::TooShort { .. })) => {
            let top = tried.iter().map(|(r, _)| *r).max()?;
            (top as f64 * s.factor).round() as u32
        }
        (None, None) => return None,
    };
    if tried.iter().any(|(r, v)| matches!(v, Verdict::TooShort { .. }) && *r >= next) {
        return None;
    }
    (!tried.iter().any(|(r, _)| *r == next)).then_some(next)
}

/// A rate in the study's unit: tps, NOPM for TPC-C, a speed of the captured traffic
/// for a replay.
pub fn rate_text(rate: f64, unit: RateUnit) -> String {
    match unit {
        RateUnit::Tps => format!("{} tps", thousands(rate)),
        RateUnit::Nopm(k) => format!("{} NOPM", thousands(rate * k)),
        RateUnit::Replay(r) => {
            let speed = rate / r.captured_rate.max(1e-9);
            let txn = r
                .transactions_per_statement
                .map_or(String::new(), |k| format!(", {} transactions/s", thousands(rate * k)));
            format!("{speed:.2}x the captured rate ({} statements/s{txn})", thousands(rate))
        }
    }
}

/// The answer of a rate study, in two or three sentences, from its levels (rate,
/// figures, verdict) in the order run. Says what the objective allows, what broke it
/// at the next rate, and how fine the bracket is; says so when the data cannot carry
/// an answer.
pub fn answer(levels: &[(u32, RateFigures, Verdict)], objectives: &[Objective], resolution: f64) -> String {
    let goal = objectives.iter().map(Objective::label).collect::<Vec<_>>().join(" and ");
    let tried: Vec<(u32, Verdict)> = levels.iter().map(|(r, _, v)| (*r, v.clone())).collect();
    let (lo, hi) = bracket(&tried);
    let at = |r: u32| levels.iter().find(|(x, _, _)| *x == r).expect("a tried rate");
    let unit = RateUnit::of(levels);
    let rate = |r: u32| rate_text(r as f64, unit);
    // The run that met, where the rate ran more than once (a stolen run's figures are not its).
    let met_at = |r: u32| levels.iter().find(|(x, _, v)| *x == r && v.met()).unwrap_or_else(|| at(r));
    let measured = |f: &RateFigures| {
        f.measured.iter().map(|m| format!("{} was {}", m.objective, ms_text(m.ms))).collect::<Vec<_>>().join(", ")
    };
    let failure = |r: u32| {
        // The failing run, where the rate ran twice.
        let (_, f, v) = levels.iter().find(|(x, _, v)| *x == r && v.server_failed()).unwrap_or_else(|| at(r));
        match v {
            Verdict::Behind { pct } => {
                format!("at {} it fell {pct:.0} % behind the arrivals ({})", rate(r), measured(f))
            }
            Verdict::Unsteady { from_ms, to_ms } => format!(
                "at {} the objective held ({}) but the queue was still growing (mean latency {} in the level's \
                 first half, {} in its second): it would not hold over a longer run",
                rate(r),
                measured(f),
                ms_text(*from_ms),
                ms_text(*to_ms)
            ),
            _ => format!("at {} {}", rate(r), measured(f)),
        }
    };
    let pool = levels.iter().find_map(|(r, _, v)| match v {
        Verdict::PoolLimited { connections, needed } => Some(format!(
            "at {} the {connections} connection(s) could not carry the rate (all were busy; the objective needs \
             {needed} or more in flight): that is the pool's limit, not the server's; allow more connections \
             (the server's max_connections) to measure past it",
            rate(*r)
        )),
        _ => None,
    });
    let mut out = match (lo, hi) {
        (Some(lo), Some(hi)) => {
            let (_, f, _) = met_at(lo);
            let width = (hi - lo) as f64 / lo as f64 * 100.0;
            let within = if width <= resolution * 100.0 + 0.5 {
                format!("the capacity at this objective lies between the two (a bracket of {width:.0} %)")
            } else {
                format!("the capacity lies between the two, a bracket of {width:.0} %, wider than asked")
            };
            format!("Sustains {} with {goal} ({}); {}: {within}.", rate(lo), measured(f), failure(hi))
        }
        (Some(lo), None) => {
            let (_, f, _) = met_at(lo);
            // A spoiled rate above it was tried, never judged.
            let which = if tried.iter().any(|(r, v)| *r > lo && v.spoiled()) { "judged" } else { "tried" };
            format!(
                "Sustains {} with {goal} ({}), the highest rate {which}: its limit at this objective lies above it.",
                rate(lo),
                measured(f)
            )
        }
        (None, Some(hi)) => {
            // hi is the lowest rate that broke it (a lower one tried was not judged).
            format!("No rate tried up to {} met {goal}: {}.", rate(hi), failure(hi))
        }
        (None, None) => match &pool {
            Some(_) => format!("No rate tried met {goal}:"),
            None => format!("No rate was measured against {goal}: there is no capacity figure."),
        },
    };
    if let Some(p) = pool {
        out.push_str(&format!(" {}{p}.", if lo.is_some() { "Then " } else { "" }));
    }
    let repeated: Vec<String> = {
        let mut r: Vec<u32> =
            tried.iter().map(|(r, _)| *r).filter(|r| runs_at(&tried, *r, |v| !v.spoiled()) > 1).collect();
        r.sort_unstable();
        r.dedup();
        r.into_iter().map(rate).collect()
    };
    let split = disagreed(&tried);
    if !repeated.is_empty() && split.is_empty() {
        out.push_str(&format!(" {} ran twice and gave the same verdict both times.", repeated.join(" and ")));
    } else if !split.is_empty() {
        out.push_str(&format!(
            " {} met the objective in one run and broke it in another: the capacity's range runs from {} to {}.",
            split.iter().map(|r| rate(*r)).collect::<Vec<_>>().join(" and "),
            lo.map_or("below the rates tried".into(), rate),
            upper(&tried).map_or("above the rates tried".into(), rate)
        ));
    }
    out.push_str(&neither_way(levels, &tried, unit, hi.is_some() || lo.is_none()));
    // A met rate above a failed one: the edge is noisy, and the answer takes the lower.
    if let (Some(hi), true) = (hi, tried.iter().any(|(r, v)| v.met() && Some(*r) > hi)) {
        let above: Vec<String> = tried.iter().filter(|(r, v)| v.met() && *r > hi).map(|(r, _)| rate(*r)).collect();
        out.push_str(&format!(
            " {} met the objective above the failure at {}: near the limit the verdict varies from run to run, and \
             the answer keeps the lower.",
            above.join(", "),
            rate(hi)
        ));
    }
    if let RateUnit::Replay(ReplayScale { made_from_schema: true, .. }) = unit {
        out.push_str(
            " The data was made from the capture's schema, not copied: its values are drawn, so plans, index \
             selectivity and row sizes differ from the captured server's, and this capacity holds for that data.",
        );
    }
    out
}

/// The rates that count neither way, said in turn: too few transactions to judge, not
/// counted, starved by other programs, stolen by the hypervisor. `longer_judges`: a
/// longer --step-time would judge the rates below (no bracket closed under them).
fn neither_way(
    levels: &[(u32, RateFigures, Verdict)],
    tried: &[(u32, Verdict)],
    unit: RateUnit,
    longer_judges: bool,
) -> String {
    let rate = |r: u32| rate_text(r as f64, unit);
    let mut out = String::new();
    for (r, _, v) in levels {
        match v {
            Verdict::TooShort { objective, transactions, needed } => out.push_str(&format!(
                " At {} only {transactions} transactions finished: too few to judge {objective} ({needed} needed), \
                 so that rate counts neither way{}.",
                rate(*r),
                if longer_judges { "; a longer --step-time judges lower rates" } else { "" }
            )),
            Verdict::NotCounted { why } => out.push_str(&format!(
                " At {} {why}: the search stopped there and that rate counts neither way.",
                rate(*r)
            )),
            Verdict::Starved { other_cores, busy_cores } => out.push_str(&format!(
                " At {} other programs starved the server ({}): the search stopped there and that rate counts \
                 neither way; measure again on a quiet host.",
                rate(*r),
                crate::monitor::os::Starved { other_cores: *other_cores, busy_cores: *busy_cores }.words()
            )),
            _ => {}
        }
    }
    let mut stolen: Vec<(u32, f64)> = levels
        .iter()
        .filter_map(|(r, _, v)| match v {
            Verdict::Stolen { steal_pct } => Some((*r, *steal_pct)),
            _ => None,
        })
        .collect();
    stolen.sort_by_key(|(r, _)| *r);
    if !stolen.is_empty() {
        let ended = stopped_by_steal(tried);
        out.push_str(&format!(
            " The hypervisor took {} of the host's CPU time (steal) in {} run(s) at {}: those runs count neither way \
             (a paused virtual CPU is latency no server causes){}.",
            stolen.iter().map(|(_, p)| format!("{p:.0} %")).collect::<Vec<_>>().join(", "),
            stolen.len(),
            {
                let mut r: Vec<String> = stolen.iter().map(|(r, _)| rate(*r)).collect();
                r.dedup();
                r.join(" and ")
            },
            if ended {
                "; a rate stolen twice stopped the search there: measure again when the host's neighbours are \
                 quieter"
            } else {
                " and each ran again"
            }
        ));
    }
    out
}

/// The knee of the latency curve: the highest rate tried before the first objective's
/// percentile reached twice its value at the lightest rate (queueing begins to rule).
pub fn knee(levels: &[(u32, RateFigures, Verdict)]) -> Option<u32> {
    let mut by_rate: Vec<(u32, f64)> =
        levels.iter().filter_map(|(r, f, _)| Some((*r, f.measured.first()?.ms))).collect();
    by_rate.sort_by_key(|(r, _)| *r);
    let base = by_rate.first()?.1;
    let mut last = None;
    for (r, ms) in by_rate {
        if ms > 2.0 * base {
            return last;
        }
        last = Some(r);
    }
    None
}

fn trim_number(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `8.2 ms`, `1.50 s`.
pub fn ms_text(ms: f64) -> String {
    if !ms.is_finite() || ms >= f64::MAX / 2.0 {
        "not measured".into()
    } else if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

fn thousands(x: f64) -> String {
    let n = x.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(s: &str) -> Vec<Objective> {
        parse_objectives(s).unwrap()
    }

    /// A level that kept up (or fell `behind` %) with `ms` at the first objective.
    fn level(rate: u32, ms: f64, behind: f64, objectives: &[Objective]) -> (u32, RateFigures, Verdict) {
        let f = RateFigures {
            offered: rate as f64,
            achieved: rate as f64 * (1.0 - behind / 100.0),
            connections: default_connections(rate as f64, objectives, 2, 10_000),
            in_flight_mean: 3.0,
            measured: objectives
                .iter()
                .map(|o| Measured {
                    objective: o.name(),
                    ms,
                    below_ms: o.below_ms,
                    on: "event".into(),
                    transactions: None,
                })
                .collect(),
            ..Default::default()
        };
        let v = verdict(&f, 10.0, objectives, None);
        (rate, f, v)
    }

    #[test]
    fn an_objective_given_twice() {
        let e = parse_objectives("p99<1ms,p99<2ms").unwrap_err();
        assert_eq!(e, Invalid::Twice("--latency names p99 twice (<1ms and <2ms): give each objective once".into()));
        assert_eq!(parse_objectives("p99<1ms,p50<500us").unwrap().len(), 2);
        assert!(parse_objectives("p90[delivery]<5s,p90<1s").is_ok());
    }

    #[test]
    fn objectives_parse_with_percentile_type_and_unit() {
        let o = obj("p99<20ms, p99.9[delivery]<5s,p50<=0.5ms");
        assert_eq!(o[0], Objective { percentile: 99.0, only: None, below_ms: 20.0 });
        assert_eq!(o[1], Objective { percentile: 99.9, only: Some("delivery".into()), below_ms: 5000.0 });
        assert_eq!(o[2].below_ms, 0.5);
        assert_eq!(o[1].label(), "p99.9[delivery] <= 5.00 s");
        for bad in ["", "99<20ms", "p99>20ms", "p100<1ms", "p99<20", "p99[]<1ms", "p99<0ms", "pX<1ms"] {
            let e = parse_objectives(bad).unwrap_err();
            assert!(matches!(e, Invalid::Entry { option: "--latency", .. } | Invalid::Missing(_)), "{bad}: {e}");
            assert!(e.to_string().starts_with("--latency"), "{bad}: {e}");
        }
        let types = vec!["new_order".to_string(), "delivery".to_string()];
        assert!(check_types(&o, &types).is_ok());
        let e = check_types(&obj("p90[nosuch]<1s"), &types).unwrap_err();
        assert!(
            matches!(&e, Invalid::UnknownType { ty, types, .. } if ty == "nosuch" && types == "new_order, delivery")
        );
    }

    #[test]
    fn a_met_level_must_be_sustained() {
        // A queue growing through a 10-s level: latency 2 -> 11 ms, in system 4 -> 22.
        let growing: Vec<(f64, f64)> = (0..10).map(|i| (2.0 + i as f64, 4.0 + 2.0 * i as f64)).collect();
        let r = rising(&growing).expect("rising");
        assert_eq!((r.from_ms, r.to_ms), (4.0, 9.0));
        let o = obj("p99<20ms");
        let mut f = level(500, 15.0, 0.0, &o).1;
        f.rising = Some(r);
        let v = verdict(&f, 10.0, &o, None);
        assert_eq!(v, Verdict::Unsteady { from_ms: 4.0, to_ms: 9.0 });
        assert!(v.server_failed() && !v.met());
        assert!(v.short().starts_with("met, not steady (latency 4.00 ms -> 9.00 ms"), "{}", v.short());
        // The answer says the level was met but not steady.
        let levels = vec![level(250, 5.0, 0.0, &o), (500, f, v)];
        let a = answer(&levels, &o, 0.05);
        assert!(a.contains("at 500 tps the objective held") && a.contains("the queue was still growing"), "{a}");
        // Steady levels with noise, one slow interval, or latency alone drifting up
        // while the system holds as many transactions: met.
        let noisy: Vec<(f64, f64)> =
            [3.0, 5.0, 2.5, 4.0, 6.0, 3.0, 2.8, 5.5, 3.2, 4.1].iter().map(|ms| (*ms, 5.0 + ms)).collect();
        assert_eq!(rising(&noisy), None);
        let spike: Vec<(f64, f64)> = (0..10).map(|i| if i == 9 { (40.0, 60.0) } else { (3.0, 6.0) }).collect();
        assert_eq!(rising(&spike), None, "one slow interval is noise, not a trend");
        let drift: Vec<(f64, f64)> = (0..10).map(|i| (2.0 + i as f64, 6.0 + (i % 2) as f64)).collect();
        assert_eq!(rising(&drift), None);
        assert_eq!(rising(&growing[..5]), None, "too few intervals to read a trend");
    }

    #[test]
    fn a_level_is_met_missed_behind_or_pool_limited() {
        let o = obj("p99<10ms");
        assert_eq!(level(1000, 8.0, 0.0, &o).2, Verdict::Met);
        assert_eq!(level(1000, 12.0, 0.0, &o).2, Verdict::Missed { objective: "p99".into(), ms: 12.0, below_ms: 10.0 });
        // 1 % short of 10,000 arrivals is chance (allowance 3 %); 12 % is not.
        assert_eq!(level(1000, 8.0, 1.0, &o).2, Verdict::Met);
        assert!(matches!(level(1000, 900.0, 12.0, &o).2, Verdict::Behind { pct } if (pct - 12.0).abs() < 1e-9));
        // Four connections, all busy, where 10 are needed in flight, each transaction
        // taking 4.5 ms (4 / 880 per s) against the probe's 3 ms: the pool's limit.
        let mut f = level(1000, 900.0, 12.0, &o).1;
        f.connections = 4;
        f.in_flight_mean = 3.9;
        assert_eq!(verdict(&f, 10.0, &o, Some((5000.0, 3.0))), Verdict::PoolLimited { connections: 4, needed: 10 });
        // At the probe's own throughput the server was the limit, whatever the pool.
        assert!(matches!(verdict(&f, 10.0, &o, Some((900.0, 3.0))), Verdict::Behind { .. }));
        // Arrivals never served count against the tail: 1.5 % of them hide a p99.
        let mut unserved = level(1000, 8.0, 0.0, &o).1;
        unserved.missed = 150;
        assert!(matches!(verdict(&unserved, 10.0, &o, None), Verdict::Behind { pct } if (pct - 1.5).abs() < 1e-9));
        assert_eq!(verdict(&f, 10.0, &o, None), Verdict::PoolLimited { connections: 4, needed: 10 });
        // The same full pool on a server that slowed down (the probe's 0.5 ms): its limit.
        assert!(matches!(verdict(&f, 10.0, &o, Some((5000.0, 0.5))), Verdict::Behind { .. }));
        // A full pool larger than the objective needs: the server was slow.
        f.connections = 40;
        f.in_flight_mean = 39.0;
        assert!(matches!(verdict(&f, 10.0, &o, None), Verdict::Behind { .. }));
        assert_eq!(behind_allowance_pct(100.0, 1.0), 30.0);
        assert_eq!(behind_allowance_pct(1e6, 10.0), 2.0);
    }

    /// a_percentile_from_a_few_transactions_is_not_judged (issue 61, 3): "Sustains 1 tps"
    /// rested on a 2-tps level whose p99 came from about 20 transactions.
    #[test]
    fn a_percentile_from_a_few_transactions_is_not_judged() {
        assert_eq!(transactions_to_judge(99.0), 1000);
        assert_eq!(transactions_to_judge(90.0), 100);
        assert_eq!(transactions_to_judge(99.9), 10_000);
        let o = obj("p99<10ms");
        let mut f = level(2, 61.0, 0.0, &o).1;
        f.measured[0].transactions = Some(20);
        let v = verdict(&f, 10.0, &o, None);
        assert_eq!(v, Verdict::TooShort { objective: "p99".into(), transactions: 20, needed: 1000 });
        assert!(!v.met() && !v.server_failed());
        f.measured[0].transactions = Some(1000);
        assert!(matches!(verdict(&f, 10.0, &o, None), Verdict::Missed { .. }));
        // Going down from a failure, the search stops at a level too short to judge.
        let tried =
            vec![(400, Verdict::Missed { objective: "p99".into(), ms: 61.0, below_ms: 10.0 }), (200, v.clone())];
        assert_eq!(next_rate(&plan(400), &tried), None);
        // With only levels too short to judge, it goes up: more transactions.
        assert_eq!(next_rate(&plan(50), &[(50, v.clone())]), Some(100));
        let levels = vec![(400, level(400, 61.0, 0.0, &o).1, tried[0].1.clone()), (200, f.clone(), v)];
        let a = answer(&levels, &o, 0.05);
        assert!(a.starts_with("No rate tried up to 400 tps met"), "{a}");
        assert!(a.contains("At 200 tps only 20 transactions finished: too few to judge p99 (1000 needed)"), "{a}");
        // A starved level ends the search and counts neither way.
        let starved = Verdict::Starved { other_cores: 1.05, busy_cores: 2.0 };
        assert_eq!(next_rate(&plan(400), &[(400, Verdict::Met), (800, starved.clone())]), None);
        assert_eq!(bracket(&[(400, Verdict::Met), (800, starved)]), (Some(400), None));
        // a_rate_level_without_a_counted_interval: such a level failed the study whole;
        // now it ends the search as a starved one does, and the answer says why.
        let late =
            Verdict::NotCounted { why: "no interval after the warm-up counted: 3 were counted off schedule".into() };
        assert_eq!(next_rate(&plan(400), &[(400, Verdict::Met), (800, late.clone())]), None);
        assert!(late.spoiled() && !late.met() && !late.server_failed());
        let levels = vec![(400, f.clone(), Verdict::Met), (800, f.clone(), late)];
        let a = answer(&levels, &o, 0.05);
        assert!(a.contains("At 800 tps no interval after the warm-up counted"), "{a}");
    }

    /// the_bracket_is_repeated_and_its_range_holds_both_runs (issue 61, 4): one sample
    /// per rate said 777 tps broke the objective; a repeat four minutes later met it.
    #[test]
    fn the_bracket_is_repeated_and_its_range_holds_both_runs() {
        let s = Search { repeat_bracket: true, ..plan(500) };
        let tried = search(&s, 1430);
        let rates: Vec<u32> = tried.iter().map(|(r, _)| *r).collect();
        assert_eq!(rates, [500, 1000, 2000, 1500, 1250, 1375, 1437, 1375, 1437], "the bracket's two rates once more");
        assert_eq!(next_rate(&s, &tried), None);
        // The repeat of the failure met: the range runs to it, and the answer says so.
        let o = obj("p99<10ms");
        let missed = Verdict::Missed { objective: "p99".into(), ms: 12.0, below_ms: 10.0 };
        let mut t = vec![(700, Verdict::Met), (777, missed.clone()), (700, Verdict::Met), (777, Verdict::Met)];
        assert_eq!(bracket(&t), (Some(700), Some(777)));
        assert_eq!((upper(&t), disagreed(&t)), (Some(777), vec![777]));
        t.push((900, Verdict::Met));
        assert_eq!(upper(&t), Some(900), "a rate above the failure met: the range holds it");
        // The repeat of the lower end failed: the search bisects below it.
        let u = vec![
            (500, Verdict::Met),
            (1000, missed.clone()),
            (700, Verdict::Met),
            (777, missed.clone()),
            (700, missed),
        ];
        assert_eq!(bracket(&u), (Some(500), Some(700)));
        assert_eq!(next_rate(&Search { repeat_bracket: true, resolution: 0.1, ..plan(500) }, &u), Some(600));
        let levels: Vec<_> = t.iter().map(|(r, v)| (*r, level(*r, 5.0, 0.0, &o).1, v.clone())).collect();
        let a = answer(&levels, &o, 0.1);
        assert!(a.contains("777 tps met the objective in one run and broke it in another: the capacity's range runs from 700 tps to 900 tps"), "{a}");
    }

    /// a_level_the_hypervisor_stole_from_runs_again_and_is_not_judged (issue 61, 4): two
    /// quiet runs of one plan gave 547 (547-597) and 779 (779-839) tps; the first's
    /// repeat of 597 and its 647 broke p99 while the hypervisor took 11.2 % and 8.6 %.
    #[test]
    fn a_level_the_hypervisor_stole_from_runs_again_and_is_not_judged() {
        let o = obj("p99<20ms");
        let s = Search { repeat_bracket: true, ..plan(400) };
        let stolen = |p: f64| Verdict::Stolen { steal_pct: p };
        let missed = Verdict::Missed { objective: "p99".into(), ms: 40.0, below_ms: 20.0 };
        let mut t = vec![(400, Verdict::Met), (800, missed), (600, Verdict::Met), (700, stolen(8.6))];
        assert!(!t[3].1.met() && !t[3].1.server_failed() && t[3].1.spoiled());
        assert_eq!(bracket(&t), (Some(600), Some(800)), "a stolen run counts neither way");
        assert_eq!(next_rate(&s, &t), Some(700), "the stolen rate runs again");
        t.push((700, Verdict::Met));
        assert_eq!(next_rate(&s, &t), Some(750), "then the search goes on");
        // A rate the bracket repeats counts only its judged runs.
        let mut u =
            vec![(620, Verdict::Met), (650, Verdict::Missed { objective: "p99".into(), ms: 30.0, below_ms: 20.0 })];
        assert_eq!(next_rate(&s, &u), Some(620), "the bracket is fine enough: its lower end once more");
        u.push((620, stolen(11.2)));
        assert_eq!(next_rate(&s, &u), Some(620), "stolen: once more");
        u.push((620, Verdict::Met));
        assert_eq!(next_rate(&s, &u), Some(650), "620 has two judged runs now: repeat 650");
        // Stolen twice: the search stops there, and the answer says why.
        // the_answer_quotes_the_run_that_met: 760 tps was stolen (p99 87 ms), then met.
        let levels: Vec<_> = [
            (760, 87.2, stolen(10.0)),
            (760, 11.7, Verdict::Met),
            (845, 98.9, Verdict::Missed { objective: "p99".into(), ms: 98.9, below_ms: 20.0 }),
        ]
        .into_iter()
        .map(|(r, ms, v)| (r, level(r, ms, 0.0, &o).1, v))
        .collect();
        let a = answer(&levels, &o, 0.05);
        assert!(a.starts_with("Sustains 760 tps with p99 <= 20.0 ms (p99 was 11.7 ms)"), "{a}");
        // a_stolen_level_that_met_or_fell_far_behind_is_judged: the steal only hides a
        // miss near the edge (the suite's 200,000 tps overload fell 49 % behind).
        let m = Verdict::Missed { objective: "p99".into(), ms: 40.0, below_ms: 20.0 };
        assert_eq!(verdict_with_steal(m.clone(), None), m);
        assert_eq!(verdict_with_steal(m, Some(8.0)), stolen(8.0));
        assert_eq!(verdict_with_steal(Verdict::Met, Some(12.0)), Verdict::Met);
        assert_eq!(verdict_with_steal(Verdict::Behind { pct: 48.8 }, Some(10.0)), Verdict::Behind { pct: 48.8 });
        assert_eq!(verdict_with_steal(Verdict::Behind { pct: 15.0 }, Some(10.0)), stolen(10.0));
        let pool = Verdict::PoolLimited { connections: 1, needed: 5000 };
        assert_eq!(verdict_with_steal(pool.clone(), Some(10.0)), pool);
        // Given rates: a stolen one runs again, and all the rates given still run.
        let given = Search { given: vec![1000, 2000, 200_000], max_levels: 3, ..plan(1000) };
        assert_eq!(next_rate(&given, &[(1000, stolen(7.0))]), Some(1000));
        assert_eq!(
            next_rate(&given, &[(1000, stolen(7.0)), (1000, Verdict::Met), (2000, Verdict::Met)]),
            Some(200_000)
        );
        let w = vec![(400, Verdict::Met), (800, stolen(9.0)), (800, stolen(12.0))];
        assert_eq!(next_rate(&s, &w), None);
        let levels: Vec<_> = w.iter().map(|(r, v)| (*r, level(*r, 5.0, 0.0, &o).1, v.clone())).collect();
        let a = answer(&levels, &o, 0.05);
        assert!(
            a.starts_with("Sustains 400 tps with p99 <= 20.0 ms (p99 was 5.00 ms), the highest rate judged"),
            "{a}"
        );
        assert!(!a.contains("ran twice and gave the same verdict"), "{a}");
        assert!(
            a.contains("The hypervisor took 9 %, 12 % of the host's CPU time (steal) in 2 run(s) at 800 tps"),
            "{a}"
        );
        assert!(a.contains("a rate stolen twice stopped the search there"), "{a}");
        // the_lowest_failure_is_the_one_quoted: studies/10 said "at 448 tps p99 was 33.3 ms"
        // of a stolen run below its one failure, 896 tps.
        let missed = |ms: f64| Verdict::Missed { objective: "p99".into(), ms, below_ms: 20.0 };
        let x: Vec<_> = [(896, 120.0, missed(120.0)), (448, 33.3, stolen(13.0)), (448, 62.3, stolen(23.0))]
            .into_iter()
            .map(|(r, ms, v)| (r, level(r, ms, 0.0, &o).1, v))
            .collect();
        let tried_x: Vec<_> = x.iter().map(|(r, _, v)| (*r, v.clone())).collect();
        assert_eq!(next_rate(&s, &tried_x), None);
        let a = answer(&x, &o, 0.05);
        assert!(a.starts_with("No rate tried up to 896 tps met p99 <= 20.0 ms: at 896 tps p99 was 120.0 ms."), "{a}");
        assert!(a.contains("a rate stolen twice stopped the search") && !a.contains("each ran again"), "{a}");
        assert_eq!(stolen(11.2).short(), "hypervisor took 11 % (steal): not judged");
    }

    #[test]
    fn pools_hold_twice_what_the_objective_needs() {
        let o = obj("p99<10ms");
        assert_eq!(connections_needed(3000.0, &o), 30);
        assert_eq!(default_connections(3000.0, &o, 2, 10_000), 62);
        assert_eq!(default_connections(10.0, &o, 2, 10_000), 4, "at least 4");
        assert_eq!(default_connections(1e6, &o, 2, 490), 490, "within the server's limit");
        assert_eq!(connections_needed(50.0, &obj("p90[delivery]<5s,p99<10ms")), 250);
    }

    /// A server that meets the objective up to `cap` tps: the search's levels.
    fn search(s: &Search, cap: u32) -> Vec<(u32, Verdict)> {
        let o = obj("p99<10ms");
        let mut tried = Vec::new();
        while let Some(r) = next_rate(s, &tried) {
            let ms = if r <= cap { 5.0 } else { 50.0 };
            let behind = if r > 2 * cap { 40.0 } else { 0.0 };
            tried.push((r, level(r, ms, behind, &o).2));
        }
        tried
    }

    fn plan(first: u32) -> Search {
        Search { first, factor: 2.0, resolution: 0.05, max_levels: 20, given: Vec::new(), repeat_bracket: false }
    }

    #[test]
    fn the_search_steps_up_then_bisects_to_the_resolution() {
        let tried = search(&plan(500), 1430);
        let rates: Vec<u32> = tried.iter().map(|(r, _)| *r).collect();
        assert_eq!(rates, [500, 1000, 2000, 1500, 1250, 1375, 1437]);
        let (lo, hi) = bracket(&tried);
        assert_eq!((lo, hi), (Some(1375), Some(1437)));
        assert!(lo.unwrap() <= 1430 && hi.unwrap() > 1430);
        assert!((hi.unwrap() - lo.unwrap()) as f64 <= 0.05 * lo.unwrap() as f64);
    }

    #[test]
    fn the_search_steps_down_when_the_first_rate_fails() {
        let tried = search(&plan(4000), 700);
        let rates: Vec<u32> = tried.iter().map(|(r, _)| *r).collect();
        assert_eq!(&rates[..3], [4000, 2000, 1000]);
        let (lo, hi) = bracket(&tried);
        assert!(lo.unwrap() <= 700 && hi.unwrap() > 700, "{lo:?} {hi:?}");
        // Nothing meets it: it stops going down at 1 tps.
        let none = search(&plan(8), 0);
        assert_eq!(none.iter().map(|(r, _)| *r).collect::<Vec<_>>(), [8, 4, 2, 1]);
        assert_eq!(bracket(&none), (None, Some(1)));
    }

    #[test]
    fn given_rates_run_in_order_until_one_falls_behind() {
        let mut s = plan(1);
        s.given = vec![400, 800, 1600, 3200, 6400];
        let rates: Vec<u32> = search(&s, 1000).iter().map(|(r, _)| *r).collect();
        assert_eq!(rates, [400, 800, 1600, 3200], "3200 fell behind: 6400 would only fall further");
        s.max_levels = 2;
        assert_eq!(search(&s, 1000).len(), 2);
    }

    #[test]
    fn a_pool_limited_level_ends_the_search() {
        let o = obj("p99<10ms");
        let mut f = level(2000, 50.0, 20.0, &o).1;
        f.connections = 5;
        f.in_flight_mean = 5.0;
        let tried = vec![(1000, Verdict::Met), (2000, verdict(&f, 10.0, &o, None))];
        assert_eq!(next_rate(&plan(1000), &tried), None);
        let levels = vec![level(1000, 5.0, 0.0, &o), (2000, f, tried[1].1.clone())];
        let a = answer(&levels, &o, 0.05);
        assert!(a.starts_with("Sustains 1,000 tps with p99 <= 10.0 ms (p99 was 5.00 ms), the highest rate"), "{a}");
        assert!(a.contains("at 2,000 tps the 5 connection(s) could not carry the rate"), "{a}");
        let alone = answer(&levels[1..], &o, 0.05);
        assert!(alone.starts_with("No rate tried met p99 <= 10.0 ms: at 2,000 tps the 5 connection(s)"), "{alone}");
        assert!(a.contains("the pool's limit, not the server's"), "{a}");
    }

    #[test]
    fn the_answer_gives_the_bracket_and_what_broke() {
        let o = obj("p99<10ms");
        let levels = vec![level(1000, 4.0, 0.0, &o), level(2000, 80.0, 0.0, &o), level(1500, 8.1, 0.0, &o)];
        let a = answer(&levels, &o, 0.05);
        assert_eq!(
            a,
            "Sustains 1,500 tps with p99 <= 10.0 ms (p99 was 8.10 ms); at 2,000 tps p99 was 80.0 ms: the capacity \
             lies between the two, a bracket of 33 %, wider than asked."
        );
        let behind = vec![level(1000, 4.0, 0.0, &o), level(1040, 900.0, 25.0, &o)];
        let a = answer(&behind, &o, 0.05);
        assert!(a.contains("at 1,040 tps it fell 25 % behind the arrivals (p99 was 900.0 ms)"), "{a}");
        assert!(a.contains("lies between the two (a bracket of 4 %)"), "{a}");
        let none = vec![level(10, 40.0, 0.0, &o)];
        assert_eq!(
            answer(&none, &o, 0.05),
            "No rate tried up to 10 tps met p99 <= 10.0 ms: at 10 tps p99 was 40.0 ms."
        );
        let noisy = vec![level(1000, 4.0, 0.0, &o), level(1200, 12.0, 0.0, &o), level(1300, 9.0, 0.0, &o)];
        let a = answer(&noisy, &o, 0.05);
        assert!(a.starts_with("Sustains 1,000 tps"), "{a}");
        assert!(a.contains("1,300 tps met the objective above the failure at 1,200 tps"), "{a}");
        // TPC-C speaks in NOPM.
        let mut tpcc = vec![level(100, 4.0, 0.0, &o), level(200, 40.0, 0.0, &o)];
        for l in &mut tpcc {
            l.1.nopm_per_tps = Some(27.0);
        }
        assert!(answer(&tpcc, &o, 0.05).starts_with("Sustains 2,700 NOPM"), "{}", answer(&tpcc, &o, 0.05));
    }

    /// A replay's rates are statements a second, said as speeds of the capture with
    /// the application's transactions beside them; the digests over the objective at
    /// the rate that broke it are named worst first.
    #[test]
    fn a_replays_answer_speaks_in_speeds_and_names_the_digests_that_broke() {
        let o = obj("p99<10ms");
        let scale =
            ReplayScale { captured_rate: 1000.0, transactions_per_statement: Some(0.05), made_from_schema: true };
        let mut levels = vec![level(1000, 4.0, 0.0, &o), level(2000, 6.0, 0.0, &o), level(4000, 30.0, 12.0, &o)];
        for l in &mut levels {
            l.1.replay = Some(scale);
        }
        let a = answer(&levels, &o, 0.05);
        assert!(
            a.starts_with(
                "Sustains 2.00x the captured rate (2,000 statements/s, 100 transactions/s) with p99 <= 10.0 ms"
            ),
            "{a}"
        );
        assert!(
            a.contains("at 4.00x the captured rate (4,000 statements/s, 200 transactions/s) it fell 12 % behind"),
            "{a}"
        );
        assert!(a.ends_with("this capacity holds for that data."), "said on data made from the schema: {a}");
        let t = |name: &str, p99: f64| TypeLatency { name: name.into(), p50: 1.0, p95: 2.0, p99, p999: p99 * 2.0 };
        let broke = RateFigures {
            types: vec![
                t("select c from t where id=?", 45.0),
                t("commit", 3.0),
                t("update t set k=k+? where id=?", 80.0),
            ],
            ..levels[2].1.clone()
        };
        assert_eq!(
            digests_over(&broke, &o[0], 3),
            [("update t set k=k+? where id=?".to_string(), 80.0), ("select c from t where id=?".to_string(), 45.0)]
        );
        assert_eq!(digests_over(&broke, &o[0], 1).len(), 1);
        assert_eq!(kept_percentile(&o[0]), "p99");
        // A replay's sessions all busy is no pool to widen: the objective's verdict.
        let busy = RateFigures { connections: 8, in_flight_mean: 8.0, ..levels[1].1.clone() };
        let busy = RateFigures { measured: levels[2].1.measured.clone(), offered: 2000.0, achieved: 2000.0, ..busy };
        assert!(
            matches!(verdict(&busy, 10.0, &o, None), Verdict::Missed { .. }),
            "{:?}",
            verdict(&busy, 10.0, &o, None)
        );
        let pool = RateFigures { replay: None, ..busy.clone() };
        assert!(matches!(verdict(&pool, 10.0, &o, None), Verdict::PoolLimited { .. }), "the same without a replay");
        assert!(digests_over(&levels[0].1, &o[0], 3).is_empty(), "no digest kept: none named");
    }

    #[test]
    fn the_knee_is_where_latency_doubles() {
        let o = obj("p99<10ms");
        let levels: Vec<_> = [(100, 1.0), (200, 1.2), (400, 1.9), (800, 2.5), (1600, 9.0)]
            .iter()
            .map(|(r, ms)| level(*r, *ms, 0.0, &o))
            .collect();
        assert_eq!(knee(&levels), Some(400));
        assert_eq!(knee(&levels[..2]), None, "no knee while latency holds");
    }
}
