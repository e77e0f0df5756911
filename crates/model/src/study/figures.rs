//! From stored runs to a study's figures: one step's headline from its run(s), a
//! level's mean over repeats, and a series' stop and saturation. Pure: the executor
//! and `study show` both call these on what the store holds, so a resumed study
//! reaches the same verdicts as an uninterrupted one.

use super::steady::{spread, steady, Sample, Spread, Steady};
use super::stop::{self, Condition};
use crate::error::Unmeasured;
use crate::monitor::os::{self, OsSample};
use crate::monitor::status::{self as server_status, StatusSample};
use crate::result::RunDocument;
use crate::stats::{self, LatencyMs, Observed};
use serde::{Deserialize, Serialize};

/// What one step (one repeat of one level) measured; with several instances, their
/// client groups ran at the same time and are summed (throughput) or merged (latency).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepFigures {
    /// `tps`, or `NOPM` for TPC-C.
    pub unit: String,
    /// Median of the interval samples after warm-up, with their spread.
    pub throughput: Steady,
    pub tps: f64,
    pub latency_ms: LatencyMs,
    /// Per type: name, p90 ms, its specified bound.
    pub p90: Vec<crate::stats::TypeP90>,
    pub instances: Vec<InstanceFigures>,
    /// Host figures, servers' status and lag, Galera conflicts on all nodes, notes.
    #[serde(flatten)]
    pub observed: Observed,
    /// Lab nodes: each node's CPU quota in cores (the host's CPU does not show it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_cpus: Option<f64>,
    /// A rate study's level: what the rate measured, and its verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<super::capacity::RateLevel>,
    /// A memory study's level: its pool, data, warm-up and page-cache check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<super::memory::MemoryLevel>,
}

/// A lab node's CPU quota: the stored fact, or in runs stored before it was kept, the
/// lab's label ("emulated (node CPU quota 0.4, link delay 0.2 ms)").
fn node_quota(d: &RunDocument) -> Option<f64> {
    if let Some(q) = d.config.server.lab_cpu_quota {
        return Some(q);
    }
    let lab = d.config.server.lab.as_deref()?;
    let rest = lab.split("node CPU quota ").nth(1)?;
    rest.split(|c: char| !(c.is_ascii_digit() || c == '.')).next()?.parse().ok()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceFigures {
    pub run: i64,
    pub throughput: f64,
    pub latency_avg_ms: f64,
    /// Its server's cores busy, when sizeup could watch the server's process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cores: Option<f64>,
}

fn value(doc: &RunDocument, iv: &stats::Interval) -> f64 {
    doc.throughput(iv)
}

/// Which server a run watched: its target (every one, for round robin).
fn server_key(d: &RunDocument) -> String {
    std::iter::once(&d.config.target)
        .chain(&d.config.round_robin)
        .map(|t| format!("{}:{}:{}", t.host, t.port, t.socket.as_deref().unwrap_or("")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cores the step's servers were busy, from each run's (server, cores), each server
/// counted once: groups on the same server (the split route's primary while it is
/// alone) each watched that one process.
fn servers_cores(each: &[(String, f64)]) -> Option<f64> {
    let mut seen: Vec<(&str, f64, u32)> = Vec::new();
    for (key, cores) in each {
        match seen.iter_mut().find(|(k, _, _)| k == key) {
            Some((_, sum, n)) => (*sum, *n) = (*sum + cores, *n + 1),
            None => seen.push((key, *cores, 1)),
        }
    }
    (!seen.is_empty()).then(|| seen.iter().map(|(_, sum, n)| sum / *n as f64).sum())
}

/// The figures of one step from its runs' documents.
pub fn step_figures(docs: &[RunDocument], interval: f64, steady_last: f64) -> Result<StepFigures, Unmeasured> {
    figures_of(docs, interval, steady_last, false).map(|(f, _)| f)
}

/// The figures of one step, or, where no interval after the warm-up counted, the
/// figures with the whole run's throughput standing in and why none counted: a rate
/// level judged "not counted" rather than a study failed whole
/// (a_rate_level_without_a_counted_interval).
pub fn step_figures_or_whole(
    docs: &[RunDocument],
    interval: f64,
    steady_last: f64,
) -> Result<(StepFigures, Option<String>), Unmeasured> {
    figures_of(docs, interval, steady_last, true)
}

fn figures_of(
    docs: &[RunDocument],
    interval: f64,
    steady_last: f64,
    whole_ok: bool,
) -> Result<(StepFigures, Option<String>), Unmeasured> {
    let first = docs.first().ok_or(Unmeasured::NoRuns)?;
    let unit = first.config.unit().label().to_string();
    // Total throughput per interval: the groups started together, so interval k of
    // each covers the same span.
    let n = docs.iter().map(|d| d.intervals.len()).min().unwrap_or(0);
    let samples: Vec<Sample> = (0..n)
        .map(|k| Sample {
            value: docs.iter().map(|d| value(d, &d.intervals[k])).sum(),
            duration: first.intervals[k].duration,
            warmup: first.intervals[k].warmup,
            // One group counted off schedule: the step's sum is off too.
            late: docs.iter().any(|d| d.intervals[k].client_late_s.is_some()),
        })
        .collect();
    let late = super::steady::late(&samples);
    let uncounted = || match late {
        0 => "no interval after the warm-up was long enough to count: lengthen step_time".to_string(),
        n => format!(
            "no interval after the warm-up counted: {n} were counted off schedule (sizeup was not running on time)"
        ),
    };
    let (throughput, why) = match steady(&samples, interval, steady_last) {
        Some(t) => (t, None),
        None if whole_ok => {
            let tps: f64 = docs.iter().filter_map(|d| d.summary.as_ref()).map(|s| s.tps).sum();
            let whole =
                super::steady::Steady { median: tps, mean: tps, min: tps, max: tps, cv: 0.0, samples: 0, n_eff: None };
            (whole, Some(uncounted()))
        }
        None => return Err(Unmeasured::NotCounted(uncounted())),
    };
    let mut instances = Vec::new();
    let mut types: Vec<(String, hdrhistogram::Histogram<u64>)> = Vec::new();
    let mut tps = 0.0;
    for d in docs {
        let summary = d.summary.as_ref().ok_or(Unmeasured::NoSummary)?;
        tps += summary.tps;
        let own: Vec<Sample> = d
            .intervals
            .iter()
            .map(|iv| Sample {
                value: value(d, iv),
                duration: iv.duration,
                warmup: iv.warmup,
                late: iv.client_late_s.is_some(),
            })
            .collect();
        let group = steady(&own, interval, steady_last).map_or(0.0, |s| s.median);
        if summary.nodes.is_empty() {
            instances.push(InstanceFigures {
                run: d.id.unwrap_or(0),
                throughput: group,
                latency_avg_ms: summary.latency_ms.avg,
                server_cores: summary.observed.os.as_ref().and_then(|o| o.server_cores),
            });
        } else {
            // Round robin: one group over several nodes; each node is an instance of
            // the step, with the group's throughput in proportion to the transactions
            // it served, and its own server's cores.
            let total = summary.nodes.iter().map(|n| n.transactions).sum::<u64>().max(1) as f64;
            instances.extend(summary.nodes.iter().map(|n| InstanceFigures {
                run: d.id.unwrap_or(0),
                throughput: group * n.transactions as f64 / total,
                latency_avg_ms: summary.latency_ms.avg,
                server_cores: n.server_cores,
            }));
        }
        for t in &summary.types {
            let h = match d.histograms.get(&t.name) {
                Some(enc) => stats::decode_histogram(enc)?,
                None => continue,
            };
            match types.iter_mut().find(|(n, _)| n == &t.name) {
                Some((_, all)) => {
                    all.add(&h).map_err(|e| Unmeasured::Histogram(format!("merging histograms: {e:?}")))?
                }
                None => types.push((t.name.clone(), h)),
            }
        }
    }
    let limits = |name: &str| {
        first.summary.as_ref().and_then(|s| s.types.iter().find(|t| t.name == name)).and_then(|t| t.p90_limit_ms)
    };
    let mut all = stats::new_histogram();
    for (_, h) in &types {
        all.add(h).map_err(|e| Unmeasured::Histogram(format!("merging histograms: {e:?}")))?;
    }
    let p90 = types.iter().map(|(name, h)| stats::TypeP90::new(name, LatencyMs::of(h).p90, limits(name))).collect();
    let figures = StepFigures {
        unit,
        throughput,
        tps,
        latency_ms: LatencyMs::of(&all),
        p90,
        instances,
        observed: step_observed(docs, late),
        node_cpus: docs.iter().find_map(node_quota),
        rate: None,
        memory: None,
    };
    Ok((figures, why))
}

/// What a step's runs observed together: the first group's OS figures with each server's
/// cores counted once, the notes (the load-generator and other-programs verdicts made
/// again for the step when several groups ran), each server's status counters once, the
/// largest lag and the conflicts summed. `late`: intervals counted off schedule.
fn step_observed(docs: &[RunDocument], late: usize) -> Observed {
    let mut os = docs[0].summary.as_ref().and_then(|s| s.observed.os.clone());
    if let Some(os) = os.as_mut() {
        let each: Vec<(String, f64)> = docs
            .iter()
            .filter_map(|d| Some((server_key(d), d.summary.as_ref()?.observed.os.as_ref()?.server_cores?)))
            .collect();
        let own = os.server_cores;
        os.server_cores = servers_cores(&each);
        // Any group's server seen stopped: the step's verdict names no starvation.
        os.server_stopped = docs
            .iter()
            .any(|d| d.summary.as_ref().and_then(|s| s.observed.os.as_ref()).is_some_and(|o| o.server_stopped));
        // The first group counted the step's other servers among "other processes":
        // they are this step's servers, not programs outside the test.
        if let (Some(others), Some(own), Some(all)) = (os.other_cores, own, os.server_cores) {
            os.other_cores = Some((others - (all - own)).max(0.0));
        }
    }
    // Every group's client CPU is the whole process's: with several groups the
    // load-generator verdict is the step's, against all servers together.
    let several = docs.len() > 1;
    let mut notes: Vec<String> = Vec::new();
    for n in docs.iter().filter_map(|d| d.summary.as_ref()).flat_map(|s| s.observed.notes.iter()) {
        let recomputed = several && (n.starts_with(os::LOAD_GENERATOR) || n.starts_with(os::OTHER_PROCESSES));
        if !recomputed && !notes.contains(n) {
            notes.push(n.clone());
        }
    }
    // Lab nodes are held to CPU quotas the host-wide verdict cannot see: each run's
    // own verdict (made knowing its node's quota) stands.
    let lab = docs.iter().any(|d| d.config.server.emulated().is_some());
    if several && lab {
        for n in docs.iter().filter_map(|d| d.summary.as_ref()).flat_map(|s| s.observed.notes.iter()) {
            if n.starts_with(os::LOAD_GENERATOR) && !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    } else if several {
        let client_threads = docs.iter().map(|d| d.config.run.client_threads as u64).sum::<u64>().max(1);
        notes.extend(os::load_generator_note(os.as_ref(), client_threads as u32));
    }
    if several {
        notes.extend(os::other_processes_note(os.as_ref()));
    }
    if late > 0 {
        notes.push(format!(
            "{late} interval(s) left out of the median: the client counted them off schedule (sizeup was not \
             running on time: stopped, or starved of CPU), so their counts are not the server's throughput"
        ));
    }
    // Each server's counters once: groups that watched one server read the same ones.
    let mut watched: Vec<(String, &StatusSample)> = Vec::new();
    for d in docs {
        if let Some(st) = d.summary.as_ref().and_then(|s| s.observed.status.as_ref()) {
            let key = server_key(d);
            if !watched.iter().any(|(k, _)| *k == key) {
                watched.push((key, st));
            }
        }
    }
    let status = server_status::total(&watched.iter().map(|(_, s)| *s).collect::<Vec<_>>());
    let summaries = || docs.iter().filter_map(|d| d.summary.as_ref());
    let max_lag_s = summaries().filter_map(|s| s.observed.max_lag_s).reduce(f64::max);
    let conflicts = summaries().filter_map(|s| s.observed.conflicts).reduce(|a, b| a + b);
    Observed { os, status, max_lag_s, conflicts, notes }
}

/// One level: its repeats combined.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelResult {
    pub level: u32,
    /// Over the repeats' medians (one repeat: its median, spread 0).
    pub throughput: Spread,
    /// The samples' own coefficient of variation, averaged over repeats.
    pub sample_cv: f64,
    /// The standard error of `throughput.mean` from the runs' own samples (their
    /// spread and effective count), before any run-to-run spread: `saturation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_se: Option<f64>,
    pub samples: usize,
    /// Transactions per second of every type, mean over the repeats (the throughput
    /// above is NOPM for TPC-C: new orders a minute).
    #[serde(default)]
    pub tps: f64,
    pub latency_avg_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p90: Vec<crate::stats::TypeP90>,
    /// Mean throughput of each instance (scale studies).
    pub per_instance: Vec<f64>,
    /// Mean server cores busy of each instance or node, where watched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_instance_cores: Vec<f64>,
    /// Throughput per watt, when watts are known.
    pub per_watt: Option<f64>,
    /// This level's throughput over the first level's.
    pub ratio_to_first: f64,
    /// Over the repeats: OS figures, status counters and conflicts their mean, lag its
    /// largest, notes every step's.
    #[serde(flatten)]
    pub observed: Observed<f64>,
    /// Lab nodes' CPU quota in cores, where the nodes had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_cpus: Option<f64>,
    pub stop: Option<super::stop::StopReason>,
    /// It broke a latency or lag bound the study set (`p90>`, `lag>`): shown, but no
    /// capacity figure, so it is left out of the peak, e(N), fits and sizing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub over_bound: bool,
    /// Programs outside the test starved the server in one of its repeats: shown, but
    /// no capacity figure, so no verdict, stop, peak, e(N), fit or size rests on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starved: Option<os::Starved>,
    /// A memory study's level: its pool and data, its repeats' warm-ups together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<super::memory::MemoryLevel>,
}

impl LevelResult {
    /// Whether the level is a capacity figure: within the study's bounds, and not
    /// starved by programs outside the test.
    pub fn counts(&self) -> bool {
        !self.over_bound && self.starved.is_none()
    }
}

impl super::saturation::Measured for LevelResult {
    fn level(&self) -> u32 {
        self.level
    }
    fn mean(&self) -> f64 {
        self.throughput.mean
    }
    fn repeats_stddev(&self) -> f64 {
        self.throughput.stddev
    }
    fn repeats(&self) -> usize {
        self.throughput.n
    }
    fn sample_se(&self) -> Option<f64> {
        self.sample_se
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesResult {
    pub name: String,
    pub unit: String,
    pub levels: Vec<LevelResult>,
    /// The stop condition met, and at which level.
    pub stop: Option<super::stop::StopReason>,
    pub stopped_at: Option<u32>,
    /// The last level that met no stop condition (None: the first level met one, or
    /// no condition was met at all).
    pub saturation: Option<u32>,
    /// The level with the highest throughput, and that throughput.
    pub peak: Option<(u32, f64)>,
    /// True when stopped or every level finished.
    pub complete: bool,
    /// Scale-out studies: the efficiency at each node count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub efficiency: Vec<Efficiency>,
    /// Where it saturates, read from the data (`study::saturation`), whatever stop
    /// conditions said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<super::saturation::Saturation>,
}

impl SeriesResult {
    /// The levels that are capacity figures: all but those over a bound the study set
    /// and those other programs starved.
    pub fn capacity(&self) -> impl DoubleEndedIterator<Item = &LevelResult> {
        self.levels.iter().filter(|l| l.counts())
    }

    /// The levels other programs starved, in order.
    pub fn starved(&self) -> impl Iterator<Item = &LevelResult> {
        self.levels.iter().filter(|l| l.starved.is_some())
    }

    /// Why a series whose every level was starved has no answer, naming the worst level
    /// (`what`: the level's word, "threads").
    pub fn starved_words(&self, what: &str) -> String {
        let worst = self.starved().filter_map(|l| Some((l.level, l.starved?))).max_by(|a, b| {
            (a.1.other_cores / a.1.busy_cores.max(1e-9)).total_cmp(&(b.1.other_cores / b.1.busy_cores.max(1e-9)))
        });
        format!(
            "no answer: other programs starved the server at every level measured{}, so no figure here is its \
             capacity; stop them (or run on a quiet host) and measure again.",
            worst.map_or(String::new(), |(l, st)| {
                let what = if l == 1 { what.strip_suffix('s').unwrap_or(what) } else { what };
                format!(" ({} at {l} {what})", st.words())
            })
        )
    }

    /// Every finished level was starved by other programs: there is no figure to answer from.
    pub fn only_starved(&self) -> bool {
        !self.levels.is_empty()
            && self.levels.iter().all(|l| l.starved.is_some() || l.over_bound)
            && self.levels.iter().any(|l| l.starved.is_some())
    }
}

/// Scale-out efficiency at one node count: e(N) = X(N) / (N x X(1)), and the range the
/// repeats' spread gives (X(N)'s lowest and highest repeat over X(1)'s mean).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Efficiency {
    pub nodes: u32,
    pub e: f64,
    pub low: f64,
    pub high: f64,
}

/// e(N) for every measured node count, from the levels of a scale-out series; empty
/// without a 1-node level.
pub fn efficiency(levels: &[LevelResult]) -> Vec<Efficiency> {
    let measured = || levels.iter().filter(|l| l.counts());
    let Some(one) = measured().find(|l| l.level == 1).map(|l| l.throughput.mean).filter(|x| *x > 0.0) else {
        return Vec::new();
    };
    measured()
        .map(|l| {
            let per = |x: f64| x / (l.level as f64 * one);
            Efficiency {
                nodes: l.level,
                e: per(l.throughput.mean),
                low: per(l.throughput.min),
                high: per(l.throughput.max),
            }
        })
        .collect()
}

/// e at `n` nodes from measured efficiencies: measured at n, else interpolated
/// linearly between the measured counts around it, else (beyond the last) None.
pub fn efficiency_at(measured: &[Efficiency], n: u32) -> Option<f64> {
    if let Some(m) = measured.iter().find(|m| m.nodes == n) {
        return Some(m.e);
    }
    let below = measured.iter().filter(|m| m.nodes < n).max_by_key(|m| m.nodes)?;
    let above = measured.iter().filter(|m| m.nodes > n).min_by_key(|m| m.nodes)?;
    let f = (n - below.nodes) as f64 / (above.nodes - below.nodes) as f64;
    Some(below.e + f * (above.e - below.e))
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.collect();
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn level_result(level: u32, steps: &[&StepFigures]) -> LevelResult {
    let medians: Vec<f64> = steps.iter().map(|s| s.throughput.median).collect();
    let os_all: Vec<&OsSample> = steps.iter().filter_map(|s| s.observed.os.as_ref()).collect();
    let os = os::mean(&os_all);
    let throughput = spread(&medians);
    let instances = steps.iter().map(|s| s.instances.len()).max().unwrap_or(0);
    let per_instance =
        (0..instances).map(|i| mean(steps.iter().filter_map(|s| s.instances.get(i)).map(|f| f.throughput))).collect();
    let mut p90 = Vec::new();
    if let Some(first) = steps.first() {
        for t in &first.p90 {
            let v = mean(steps.iter().filter_map(|s| s.p90.iter().find(|p| p.name == t.name)).map(|p| p.ms));
            p90.push(stats::TypeP90::new(&t.name, v, t.bound_ms));
        }
    }
    let per_watt = os.as_ref().and_then(|o| o.watts).filter(|w| *w > 0.0).map(|w| throughput.mean / w);
    let k = steps.len().max(1) as f64;
    let sample_se = steps
        .iter()
        .map(|s| {
            let t = &s.throughput;
            super::saturation::median_standard_error(t.median, t.cv, t.n_eff.unwrap_or(t.samples as f64))
        })
        .map(|se| se * se)
        .sum::<f64>()
        .sqrt()
        / k;
    LevelResult {
        level,
        sample_cv: mean(steps.iter().map(|s| s.throughput.cv)),
        sample_se: Some(sample_se),
        samples: steps.iter().map(|s| s.throughput.samples).sum(),
        tps: mean(steps.iter().map(|s| s.tps)),
        latency_avg_ms: mean(steps.iter().map(|s| s.latency_ms.avg)),
        p95_ms: mean(steps.iter().map(|s| s.latency_ms.p95)),
        p99_ms: mean(steps.iter().map(|s| s.latency_ms.p99)),
        throughput,
        p90,
        per_instance_cores: (0..instances)
            .map_while(|i| {
                let c: Vec<f64> = steps.iter().filter_map(|s| s.instances.get(i)?.server_cores).collect();
                (!c.is_empty()).then(|| mean(c.into_iter()))
            })
            .collect(),
        per_instance,
        per_watt,
        ratio_to_first: 1.0,
        observed: Observed {
            os,
            status: server_status::mean(&steps.iter().filter_map(|s| s.observed.status.as_ref()).collect::<Vec<_>>()),
            max_lag_s: steps.iter().filter_map(|s| s.observed.max_lag_s).reduce(f64::max),
            conflicts: {
                let c: Vec<f64> = steps.iter().filter_map(|s| s.observed.conflicts.map(|c| c as f64)).collect();
                (!c.is_empty()).then(|| mean(c.into_iter()))
            },
            notes: {
                let mut notes: Vec<String> = Vec::new();
                for n in steps.iter().flat_map(|s| s.observed.notes.iter()) {
                    if !notes.contains(n) {
                        notes.push(n.clone());
                    }
                }
                notes
            },
        },
        node_cpus: steps.iter().find_map(|s| s.node_cpus),
        stop: None,
        over_bound: false,
        // The worst repeat: one starved repeat makes the level's mean no capacity figure.
        starved: steps
            .iter()
            .filter_map(|s| s.observed.os.as_ref()?.starved())
            .max_by(|a, b| a.other_cores.total_cmp(&b.other_cores)),
        memory: super::memory::MemoryLevel::combine(
            &steps.iter().filter_map(|s| s.memory.as_ref()).collect::<Vec<_>>(),
        ),
    }
}

/// A series' verdict from the steps finished so far: levels in order, each once all its
/// repeats are in; the first level meeting a stop condition ends it.
pub fn series_result(
    name: &str,
    levels: &[u32],
    repeat: u32,
    steps: &[(u32, StepFigures)],
    conditions: &[Condition],
) -> SeriesResult {
    let mut out = SeriesResult {
        name: name.to_string(),
        unit: steps.first().map_or("tps".into(), |s| s.1.unit.clone()),
        levels: Vec::new(),
        stop: None,
        stopped_at: None,
        saturation: None,
        peak: None,
        complete: false,
        efficiency: Vec::new(),
        verdict: None,
    };
    let mut previous: Option<LevelResult> = None;
    for (i, &level) in levels.iter().enumerate() {
        let mine: Vec<&StepFigures> = steps.iter().filter(|(l, _)| *l == level).map(|(_, f)| f).collect();
        if mine.len() < repeat as usize {
            return finish(out, false);
        }
        let mut r = level_result(level, &mine);
        // The programs that starved a lighter level are still there when more threads
        // squeeze them to a smaller share (studies/1 beside `stress --cpu 1`: 0.99 cores
        // at 1 thread, 0.13-0.27 from 8 threads, and a "peak" at 64): not counted either.
        if r.starved.is_none() && out.levels.iter().any(|l| l.starved.is_some()) {
            let squeezed = mine
                .iter()
                .filter_map(|s| s.observed.os.as_ref()?.squeezed())
                .max_by(|a, b| a.other_cores.total_cmp(&b.other_cores));
            if let Some(s) = squeezed {
                r.observed.notes.push(format!(
                    "{} on a saturated host: the programs that starved a lighter level, squeezed by this one's \
                     threads, not gone; not counted",
                    s.words()
                ));
                r.starved = Some(s);
            }
        }
        // A starved level is the host's leftovers, not the server's figure: it trips no
        // stop condition and is no "previous level" for a plateau or a kink.
        if r.starved.is_none() {
            r.stop = stop::tripped(conditions, previous.as_ref(), &r);
            r.over_bound = stop::over_bound(conditions, &r);
        }
        if let Some(first) = out.capacity().next().map(|f| f.throughput.mean).filter(|f| *f > 0.0) {
            r.ratio_to_first = r.throughput.mean / first;
        }
        let stopped = r.stop.clone();
        if r.starved.is_none() {
            previous = Some(r.clone());
        }
        out.levels.push(r);
        if let Some(why) = stopped {
            out.stop = Some(why);
            out.stopped_at = Some(level);
            // The last level before it that counts (a starved one in between is no figure).
            out.saturation = match stop::saturation(levels, Some(i)) {
                Some(_) => out.levels[..out.levels.len() - 1].iter().rev().find(|l| l.counts()).map(|l| l.level),
                None => None,
            };
            return finish(out, true);
        }
    }
    finish(out, true)
}

fn finish(mut out: SeriesResult, complete: bool) -> SeriesResult {
    out.complete = complete;
    out.peak = out
        .capacity()
        .max_by(|a, b| a.throughput.mean.total_cmp(&b.throughput.mean))
        .map(|l| (l.level, l.throughput.mean));
    out.verdict = super::saturation::judge(out.capacity());
    // One saturation figure for the tables and the answer: where the data puts it; the
    // stop condition's (the level before the stop, the user's own definition) only
    // while the data still rose when the study stopped. An unfinished series has none.
    use super::saturation::Shape;
    let data = out.verdict.as_ref().map(|v| (v.shape, v.saturation));
    out.saturation = match (complete, data) {
        (false, _) => None,
        (true, Some((Shape::Rising | Shape::OneLevel, _))) | (true, None) if out.stop.is_some() => out.saturation,
        (true, Some((_, sat))) => sat,
        (true, None) => None,
    };
    out
}

/// Series of known shapes that tests of every layer pin answers on (the feature
/// `fixtures` lends them to the other crates' tests).
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures {
    use super::*;

    /// A level measured once at `tps`, no spread, no OS figures: fixtures start here.
    pub fn bare_level(level: u32, tps: f64) -> LevelResult {
        LevelResult {
            level,
            throughput: Spread { mean: tps, min: tps, max: tps, stddev: 0.0, cv: 0.0, n: 1 },
            sample_cv: 0.0,
            sample_se: None,
            samples: 10,
            tps,
            latency_avg_ms: 1.0,
            p95_ms: 2.0,
            p99_ms: 3.0,
            p90: Vec::new(),
            observed: Observed::default(),
            per_instance: Vec::new(),
            per_instance_cores: Vec::new(),
            per_watt: None,
            ratio_to_first: 1.0,
            stop: None,
            over_bound: false,
            starved: None,
            memory: None,
            node_cpus: None,
        }
    }

    /// A series of one run per level from (level, tps, the samples' cv, host busy %)
    /// on a 2-core host, the server taking 80 % of the busy CPU and sizeup 18 %, 10
    /// effective samples a level: the known shapes the answer is pinned on.
    pub fn fixture(points: &[(u32, f64, f64, f64)], stop_when: &str) -> SeriesResult {
        let (levels, steps) = fixture_steps(points);
        series_result("oltp_read_write", &levels, 1, &steps, &stop::parse(stop_when).expect("conditions"))
    }

    /// `fixture`'s steps, for a test to change before `series_result` reads them.
    pub fn fixture_steps(points: &[(u32, f64, f64, f64)]) -> (Vec<u32>, Vec<(u32, StepFigures)>) {
        let levels: Vec<u32> = points.iter().map(|p| p.0).collect();
        let steps: Vec<(u32, StepFigures)> = points
            .iter()
            .map(|&(level, x, cv, busy)| {
                let mut s = step(x, 1.0, busy);
                s.throughput.cv = cv;
                s.throughput.n_eff = Some(10.0);
                if let Some(o) = s.observed.os.as_mut() {
                    let used = busy / 100.0 * 2.0;
                    o.host_cpus = Some(2);
                    o.usr = busy;
                    o.server_cores = Some(used * 0.8);
                    o.client_cores = used * 0.18;
                    o.other_cores = Some(used * 0.02);
                    o.watts = None;
                }
                (level, s)
            })
            .collect();
        (levels, steps)
    }

    /// `fixture`, with other programs taking `others` cores at the levels named.
    pub fn fixture_with_others(
        points: &[(u32, f64, f64, f64)],
        others: &[(u32, f64)],
        stop_when: &str,
    ) -> SeriesResult {
        let (levels, mut steps) = fixture_steps(points);
        for (level, s) in steps.iter_mut() {
            if let (Some((_, c)), Some(o)) = (others.iter().find(|(l, _)| l == level), s.observed.os.as_mut()) {
                o.other_cores = Some(*c);
                o.server_cores = Some((o.busy().unwrap_or(0.0) / 50.0 - c - o.client_cores).max(0.0));
            }
        }
        series_result("oltp_read_write", &levels, 1, &steps, &stop::parse(stop_when).expect("conditions"))
    }

    pub fn step(median: f64, latency: f64, busy: f64) -> StepFigures {
        StepFigures {
            unit: "tps".into(),
            throughput: Steady { median, mean: median, min: median, max: median, cv: 0.01, samples: 10, n_eff: None },
            tps: median,
            latency_ms: LatencyMs { avg: latency, p95: latency * 2.0, ..Default::default() },
            p90: vec![stats::TypeP90::new("t", latency * 1.5, None)],
            observed: Observed {
                os: Some(OsSample { idle: 100.0 - busy, watts: Some(100.0), ..Default::default() }),
                ..Default::default()
            },
            instances: vec![InstanceFigures {
                run: 1,
                throughput: median,
                latency_avg_ms: latency,
                server_cores: None,
            }],
            ..Default::default()
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::fixtures::*;
    use super::*;

    /// one_measurement_at_every_level: what a run, a step and a level observed is one
    /// embedded type, stored flattened: its fields stay at the top of each level's JSON
    /// (a run's conflicts a count, a level's a mean), and levels stored before, with
    /// `"os": null` and an empty notes list written out, read back.
    #[test]
    fn one_measurement_at_every_level_keeps_its_fields_at_the_top() {
        let observed =
            Observed { max_lag_s: Some(2.0), conflicts: Some(3), notes: vec!["n".into()], ..Default::default() };
        let mut d: RunDocument = serde_json::from_str(include_str!("../../../../tests/fixtures/run.json")).unwrap();
        let summary = d.summary.as_mut().unwrap();
        summary.observed = observed.clone();
        let run = serde_json::to_value(&*summary).unwrap();
        assert_eq!((run["max_lag_s"].clone(), run["conflicts"].clone()), (2.0.into(), 3.into()));
        assert_eq!(run["notes"], serde_json::json!(["n"]));
        assert!(run.get("observed").is_none() && run.get("os").is_none(), "{run}");
        let back: stats::Summary = serde_json::from_value(run).unwrap();
        assert_eq!(&back, &*summary);

        let step = StepFigures { tps: 10.0, observed, ..Default::default() };
        let json = serde_json::to_value(&step).unwrap();
        assert_eq!(json["conflicts"], 3);
        assert_eq!(serde_json::from_value::<StepFigures>(json).unwrap(), step);

        let mut level = bare_level(4, 100.0);
        level.observed.conflicts = Some(1.5);
        let mut json = serde_json::to_value(&level).unwrap();
        assert_eq!(json["conflicts"], 1.5);
        assert_eq!(serde_json::from_value::<LevelResult>(json.clone()).unwrap(), level);
        json["os"] = serde_json::Value::Null;
        json["notes"] = serde_json::json!([]);
        assert_eq!(serde_json::from_value::<LevelResult>(json).unwrap(), level, "the shape stored before");
    }

    /// lab_quota_is_a_fact_not_a_label: the quota was read back out of the label's
    /// words; it is stored as a number, and runs stored before still read.
    #[test]
    fn lab_quota_is_a_fact_not_a_label() {
        let mut d: RunDocument = serde_json::from_str(include_str!("../../../../tests/fixtures/run.json")).unwrap();
        d.config.server.lab = Some("emulated (node CPU quota 0.4, link delay 0.2 ms)".into());
        assert_eq!(node_quota(&d), Some(0.4));
        d.config.server.lab_cpu_quota = Some(0.75);
        d.config.server.lab = Some("a label worded otherwise".into());
        assert_eq!(node_quota(&d), Some(0.75));
    }

    #[test]
    fn a_series_stops_at_its_first_condition_and_names_saturation() {
        let levels = [1, 2, 4, 8, 16];
        let steps = vec![
            (1, step(100.0, 1.0, 30.0)),
            (2, step(190.0, 1.05, 55.0)),
            (4, step(300.0, 1.3, 85.0)),
            (8, step(310.0, 2.6, 99.0)),
        ];
        let r = series_result("s", &levels, 1, &steps, &stop::parse("cpu>80").unwrap());
        assert_eq!((r.stopped_at, r.saturation, r.complete), (Some(4), Some(2), true));
        assert_eq!(
            r.stop.as_ref().map(|s| (s.tripped, s.words.as_str())),
            Some((stop::Tripped::Cpu, "CPU 85.0 % > 80 %"))
        );
        assert_eq!(r.levels.len(), 3, "levels after the stop do not count");
        assert_eq!(r.peak, Some((4, 300.0)));
        assert_eq!(r.levels[2].ratio_to_first, 3.0);
        assert_eq!(r.levels[0].per_watt, Some(1.0));
        // Without conditions it runs on; level 16 is not in yet.
        let r = series_result("s", &levels, 1, &steps, &[]);
        assert_eq!((r.levels.len(), r.complete, r.stop.clone()), (4, false, None));
        assert_eq!(r.peak, Some((8, 310.0)));
        let r = series_result("s", &levels, 1, &steps, &stop::parse("kink").unwrap());
        assert_eq!((r.stopped_at, r.saturation), (Some(8), Some(4)));
    }

    /// The level that broke a `p90>` or `lag>` bound was kept as the peak and fed e(N),
    /// the USL fit and sizing: a figure the user's own bound had disqualified.
    #[test]
    fn level_over_a_latency_or_lag_bound_is_no_peak_and_no_efficiency() {
        let levels = [1, 2, 4];
        // step(median, latency): p90 is 1.5 x latency ms.
        let steps = vec![(1, step(100.0, 1.0, 10.0)), (2, step(190.0, 10.0, 10.0)), (4, step(240.0, 60.0, 10.0))];
        let r = series_result("s", &levels, 1, &steps, &stop::parse("p90>50ms").unwrap());
        assert_eq!(r.stopped_at, Some(4));
        assert!(r.levels[2].over_bound && !r.levels[1].over_bound);
        assert_eq!(r.peak, Some((2, 190.0)), "the level over the bound is not the peak");
        assert_eq!(r.capacity().map(|l| l.level).collect::<Vec<_>>(), [1, 2]);
        let e = efficiency(&r.levels);
        assert_eq!(e.iter().map(|e| e.nodes).collect::<Vec<_>>(), [1, 2]);
        // CPU and plateau stops mark saturation; their level is still a figure.
        let r = series_result("s", &levels, 1, &steps, &stop::parse("plateau<30%").unwrap());
        assert_eq!((r.stopped_at, r.peak), (Some(4), Some((4, 240.0))));
        assert!(!r.levels[2].over_bound);
    }

    #[test]
    fn repeats_are_averaged_with_their_spread() {
        let steps = vec![(1, step(100.0, 1.0, 10.0)), (1, step(110.0, 3.0, 10.0)), (2, step(150.0, 1.0, 10.0))];
        let r = series_result("s", &[1, 2], 2, &steps, &[]);
        // Level 2 has one of its two repeats: not counted yet.
        assert_eq!((r.levels.len(), r.complete), (1, false));
        let l = &r.levels[0];
        assert_eq!((l.throughput.mean, l.throughput.min, l.throughput.max, l.throughput.n), (105.0, 100.0, 110.0, 2));
        assert!((l.throughput.stddev - 50f64.sqrt()).abs() < 1e-9);
        assert_eq!(l.latency_avg_ms, 2.0);
        assert_eq!(l.p90[0].ms, 3.0);
        assert_eq!(l.samples, 20);
    }

    /// scale_step_counted_its_own_servers_as_other_programs: at 2 instances the first
    /// group's "other processes" held instance 1's server, and the study said other
    /// programs had starved the host.
    #[test]
    fn scale_step_counted_its_own_servers_as_other_programs() {
        let base: RunDocument = serde_json::from_str(include_str!("../../../../tests/fixtures/run.json")).unwrap();
        let group = |port: u16, server: f64, others: f64| {
            let mut d = base.clone();
            d.config.target.port = port;
            let s = d.summary.as_mut().unwrap();
            s.observed.os = Some(OsSample {
                usr: 99.0,
                host_cpus: Some(2),
                server_cores: Some(server),
                client_cores: 0.2,
                other_cores: Some(others),
                ..Default::default()
            });
            s.observed.notes = os::other_processes_note(s.observed.os.as_ref()).into_iter().collect();
            d
        };
        // Each group sees the other instance's 0.85 cores (and 0.05 of real others).
        let docs = [group(1, 0.85, 0.90), group(2, 0.85, 0.90)];
        assert!(docs[0].summary.as_ref().unwrap().observed.notes[0].starts_with(os::OTHER_PROCESSES));
        let f = step_figures(&docs, 1.0, 1.0).unwrap();
        let o = f.observed.os.unwrap();
        assert!((o.server_cores.unwrap() - 1.7).abs() < 1e-9);
        assert!((o.other_cores.unwrap() - 0.05).abs() < 1e-9, "{o:?}");
        assert!(!f.observed.notes.iter().any(|n| n.starts_with(os::OTHER_PROCESSES)), "{:?}", f.observed.notes);
    }

    /// scale_out_split_counts_the_primarys_cpu_once: at 1 node both of the split
    /// route's groups run on the primary and each watched its process; the step added
    /// the two (2.23 cores on a 2-core host).
    #[test]
    fn scale_out_split_counts_the_primarys_cpu_once() {
        let k = |s: &str| s.to_string();
        assert_eq!(servers_cores(&[(k("a"), 1.11), (k("a"), 1.13)]), Some(1.12));
        assert_eq!(servers_cores(&[(k("a"), 1.0), (k("b"), 0.5), (k("b"), 0.7)]), Some(1.6));
        assert_eq!(servers_cores(&[]), None);
    }

    #[test]
    fn scale_out_efficiency_from_levels() {
        // 1 node 1,000; 2 nodes 1,800 and 1,900 (two repeats); 4 nodes 3,200.
        let steps = vec![
            (1, step(1000.0, 1.0, 50.0)),
            (2, step(1800.0, 1.0, 50.0)),
            (2, step(1900.0, 1.0, 50.0)),
            (4, step(3200.0, 1.0, 50.0)),
        ];
        let steps: Vec<(u32, StepFigures)> = steps;
        let one = |l: u32| steps.iter().filter(|(x, _)| *x == l).map(|(_, f)| f).collect::<Vec<_>>();
        let levels: Vec<LevelResult> = [1, 2, 4].iter().map(|&l| level_result(l, &one(l))).collect();
        let e = efficiency(&levels);
        assert_eq!(e.iter().map(|m| m.nodes).collect::<Vec<_>>(), [1, 2, 4]);
        assert_eq!((e[0].e, e[2].e), (1.0, 0.8));
        assert!((e[1].e - 0.925).abs() < 1e-12 && (e[1].low - 0.9).abs() < 1e-12 && (e[1].high - 0.95).abs() < 1e-12);
        // At 3 nodes: between 2's 0.925 and 4's 0.8; beyond 4: not measured.
        assert!((efficiency_at(&e, 3).unwrap() - 0.8625).abs() < 1e-12);
        assert_eq!(efficiency_at(&e, 4), Some(0.8));
        assert_eq!(efficiency_at(&e, 5), None);
        // Without a 1-node level there is nothing to compare with.
        assert!(efficiency(&levels[1..]).is_empty());
    }
}
