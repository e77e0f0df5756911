//! A purchase plan's model: what a plan is asked (`PlanSpec`), the host it measures,
//! its stages and what each found, the decisions (`decide`: which study next, sized
//! from the findings) and the purchase plan (`purchase`: servers x instances with their
//! range, cost and watts). Pure: running the studies is the binary's (`runner::plan`),
//! reading a plan file and turning a decision into a study spec the report crate's
//! (`plan`), the words `report::plan`'s.

pub mod decide;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod purchase;

use crate::cost::CostInputs;
use crate::error::Invalid;
use crate::status::Status;
use crate::study::capacity::{RateFigures, Verdict};
use crate::study::figures::SeriesResult;
use crate::study::section::PowerSpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The shortest budget a plan takes: a sweep of a few short levels needs about this.
pub const MIN_BUDGET_S: f64 = 120.0;
/// The scale-out efficiency assumed when no cluster is measured and none is given.
pub const DEFAULT_EFFICIENCY: f64 = 0.9;

/// The cluster scale-out is measured on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterChoice {
    /// No cluster: the efficiency given (or assumed) is used.
    #[default]
    None,
    /// A Galera cluster made on this host (every node reads and writes).
    Galera,
    /// A primary with replicas made on this host (reads dealt over the nodes).
    Replicas,
}

impl ClusterChoice {
    /// The words a plan file and `--cluster` take, in order.
    pub const NAMES: [&'static str; 3] = ["none", "galera", "replicas"];
    const ALL: [ClusterChoice; 3] = [ClusterChoice::None, ClusterChoice::Galera, ClusterChoice::Replicas];

    /// The choice a word names.
    pub fn named(word: &str) -> Option<ClusterChoice> {
        Self::NAMES.iter().position(|n| *n == word).map(|i| Self::ALL[i])
    }
}

/// What a plan is asked: the command line's or a plan file's (`kind = "plan"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanSpec {
    pub name: String,
    /// The throughput to provide (tps; NOPM for tpcc).
    pub target_tps: f64,
    /// The latency objective(s) each server must meet at its share: "p99<50ms".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<String>,
    #[serde(default = "default_workload")]
    pub workload: String,
    /// `sizeup run` options by long name (tables, table-size, warehouses, socket, ...).
    #[serde(default)]
    pub options: BTreeMap<String, Value>,
    /// A Lua script's own options.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub script_options: BTreeMap<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostInputs>,
    #[serde(default)]
    pub power: PowerSpec,
    #[serde(default)]
    pub cluster: ClusterChoice,
    /// The scale-out efficiency when no cluster is measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
    /// The price of a GiB of server memory (prices a memory study's pools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_price: Option<f64>,
    /// Seconds the plan's studies may take, all together.
    pub budget_s: f64,
    /// A replayed capture's plan: the captured traffic times this is the target
    /// (`target_tps` holds it in statements a second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth: Option<f64>,
}

pub fn default_workload() -> String {
    "oltp_read_write".into()
}

/// "30m", "90s", "1h", "1h30m" or plain seconds, in seconds.
pub fn parse_budget(s: &str) -> Result<f64, Invalid> {
    let bad = || Invalid::Value(format!("--budget '{s}': give a time such as 10m, 90s or 1h30m"));
    let t = s.trim();
    if let Ok(v) = t.parse::<f64>() {
        return Some(v).filter(|v| v.is_finite() && *v > 0.0).ok_or_else(bad);
    }
    let (mut total, mut num) = (0.0, String::new());
    for c in t.chars() {
        match c {
            '0'..='9' | '.' => num.push(c),
            'h' | 'm' | 's' => {
                let v: f64 = num.parse().map_err(|_| bad())?;
                total += v * match c {
                    'h' => 3600.0,
                    'm' => 60.0,
                    _ => 1.0,
                };
                num.clear();
            }
            _ => return Err(bad()),
        }
    }
    if !(num.is_empty() && total.is_finite() && total > 0.0) {
        return Err(bad());
    }
    Ok(total)
}

impl PlanSpec {
    /// Whether `other` measures what this one does (the same workload, data, options and
    /// objective): its one-server figure is a run of the same measurement. The target,
    /// budget, prices and efficiency change only the arithmetic on it.
    pub fn measures_like(&self, other: &PlanSpec) -> bool {
        self.workload == other.workload
            && self.latency == other.latency
            && self.options == other.options
            && self.script_options == other.script_options
    }

    /// Everything checkable before a server is touched but the workload's name (which
    /// the engine knows: the report crate's `plan::validate` checks both); each message
    /// says what to give.
    /// The plan sizes for a replayed capture (`--replay`): its rates are statements a
    /// second and its only study the capacity search at the objective.
    pub fn replays(&self) -> bool {
        self.workload.ends_with(crate::unit::CAPTURE_SUFFIX)
    }

    /// The load comes from agents on other hosts (`--agents`, `--agents-ssh`).
    pub fn uses_agents(&self) -> bool {
        ["agents", "agents-ssh"]
            .iter()
            .any(|k| self.options.get(*k).and_then(Value::as_array).is_some_and(|a| !a.is_empty()))
    }

    pub fn check(&self) -> Result<(), Invalid> {
        if !(self.target_tps.is_finite() && self.target_tps > 0.0) {
            return Err(Invalid::Value(format!(
                "--target-tps {}: give the throughput to provide, above 0 (e.g. 5000)",
                self.target_tps
            )));
        }
        if let Some(l) = &self.latency {
            crate::study::capacity::parse_objectives(l)?;
        }
        if self.replays() && self.latency.is_none() {
            return Err(Invalid::Missing(
                "a plan for a capture needs its objective (--latency 'p99<20ms'): its servers are sized at the \
                 speed that meets it"
                    .into(),
            ));
        }
        if self.replays() && self.cluster != ClusterChoice::None {
            return Err(Invalid::Conflict(
                "--cluster and a capture: a replay is one application's traffic on one copy; give --efficiency to \
                 size a scale-out"
                    .into(),
            ));
        }
        if let Some(g) = self.growth.filter(|g| !(g.is_finite() && *g > 0.0)) {
            return Err(Invalid::Value(format!("--growth {g}: give a factor of the captured traffic above 0, e.g. 3")));
        }
        if self.budget_s.is_nan() || self.budget_s < MIN_BUDGET_S {
            return Err(Invalid::Value(format!(
                "--budget {:.0}s: a plan needs at least {:.0} s (a sweep of short levels); give --budget 10m or more",
                self.budget_s, MIN_BUDGET_S
            )));
        }
        if let Some(e) = self.efficiency.filter(|e| !(*e > 0.0 && *e <= 1.0)) {
            return Err(Invalid::Value(format!("--efficiency {e}: give a number above 0 and at most 1")));
        }
        if self.efficiency.is_some() && self.cluster != ClusterChoice::None {
            return Err(Invalid::Value(
                "--efficiency and --cluster: give one (the cluster measures the efficiency)".into(),
            ));
        }
        if let Some(p) = self.memory_price.filter(|p| !(p.is_finite() && *p >= 0.0)) {
            return Err(Invalid::Value(format!("--memory-price {p}: give a price per GiB, 0 or more")));
        }
        if let Some(c) = &self.cost {
            c.validate()?;
        }
        crate::monitor::os::power(self.power.model.as_deref(), self.power.watts)?;
        Ok(())
    }
}

/// The host and server the plan measures, found once before its first study and
/// stored with the plan, so a resumed plan decides as the first run did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// CPUs of this host (the client's and, for a managed server, the server's).
    pub cpus: u32,
    /// The server is one sizeup manages here: it may start instances and clusters.
    pub managed: bool,
    /// The workload's data, and the server's buffer pool, in bytes.
    pub data_bytes: Option<u64>,
    pub pool_bytes: Option<u64>,
    /// Why the server's buffer pool does not hold the data (its storage is not InnoDB),
    /// when it does not: `pool_bytes` is None then, and no decision weighs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_unused: Option<String>,
    /// This host's memory, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// The device the managed server's data lives on, in words ("vda, 100 GiB, not
    /// rotational"); None for a server elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<String>,
    /// How the client reached the server ("a unix socket", "TCP to 127.0.0.1:3306").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Host {
    /// The same host and server as `other` measured: the same CPUs, memory, storage,
    /// connection path and buffer pool, and data within a tenth (its size is estimated).
    pub fn same_as(&self, other: &Host) -> bool {
        let data = match (self.data_bytes, other.data_bytes) {
            (Some(a), Some(b)) => a.abs_diff(b) as f64 <= 0.1 * a.max(b) as f64,
            (a, b) => a == b,
        };
        self.cpus == other.cpus
            && self.managed == other.managed
            && self.memory_bytes == other.memory_bytes
            && self.storage == other.storage
            && self.path == other.path
            && self.pool_bytes == other.pool_bytes
            && data
    }
}

/// The studies a plan may run, in the order it runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    Sweep,
    Capacity,
    ScaleUp,
    ScaleOut,
    Memory,
}

impl Stage {
    pub const ALL: [Stage; 5] = [Stage::Sweep, Stage::Capacity, Stage::ScaleUp, Stage::ScaleOut, Stage::Memory];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Sweep => "connection sweep",
            Stage::Capacity => "capacity at the objective",
            Stage::ScaleUp => "scale-up",
            Stage::ScaleOut => "scale-out",
            Stage::Memory => "memory",
        }
    }
}

/// A study the plan ran, as the store holds it: its status and what it found.
#[derive(Clone, Debug, Default)]
pub struct Found {
    pub study: i64,
    /// completed, interrupted, failed, abandoned.
    pub status: Status,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// Its series' verdicts (none for a rate study).
    pub series: Vec<SeriesResult>,
    /// A rate study's levels in the order run.
    pub rates: Vec<(u32, RateFigures, Verdict)>,
    /// A rate study's watts by rate, where measured.
    pub rate_watts: Vec<(u32, f64)>,
    /// A rate study's host figures by rate, where sampled (what ran out where the
    /// objective broke).
    pub rate_os: Vec<(u32, crate::monitor::os::OsSample)>,
    /// The lab its runs ran in ("emulated (node CPU quota 0.3 ...)"), if any.
    pub emulated: Option<String>,
}

impl Found {
    pub fn completed(&self) -> bool {
        self.status == Status::Completed
    }
    /// The first series (a plan's studies run one workload).
    pub fn first(&self) -> Option<&SeriesResult> {
        self.series.first()
    }
}

/// What the studies run so far found, by stage.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    pub sweep: Option<Found>,
    pub capacity: Option<Found>,
    pub scale_up: Option<Found>,
    pub scale_out: Option<Found>,
    pub memory: Option<Found>,
    /// Earlier plans that measured the same thing on the same host, newest first:
    /// their one-server ranges go into this plan's (a host's speed changes between runs).
    pub earlier: Vec<Earlier>,
}

/// An earlier plan's one-server figure: what a run of the same measurement gave before.
#[derive(Clone, Debug, PartialEq)]
pub struct Earlier {
    pub plan: i64,
    pub started_at: String,
    /// The figure is the capacity at the objective (else the sweep's peak).
    pub at_objective: bool,
    pub range: (f64, f64),
}

impl Findings {
    pub fn get(&self, stage: Stage) -> Option<&Found> {
        match stage {
            Stage::Sweep => self.sweep.as_ref(),
            Stage::Capacity => self.capacity.as_ref(),
            Stage::ScaleUp => self.scale_up.as_ref(),
            Stage::ScaleOut => self.scale_out.as_ref(),
            Stage::Memory => self.memory.as_ref(),
        }
    }
    pub fn set(&mut self, stage: Stage, f: Found) {
        let slot = match stage {
            Stage::Sweep => &mut self.sweep,
            Stage::Capacity => &mut self.capacity,
            Stage::ScaleUp => &mut self.scale_up,
            Stage::ScaleOut => &mut self.scale_out,
            Stage::Memory => &mut self.memory,
        };
        *slot = Some(f);
    }
}

/// One stage as the plan stores it: run (with its study) or skipped, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    pub stage: Stage,
    /// The study that ran it; None when skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<i64>,
    pub why: String,
    /// Left out because the budget had no room for it (it would have run otherwise).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub for_time: bool,
    /// Seconds it took (across resumes).
    #[serde(default)]
    pub seconds: f64,
}

/// A plan's stored state: the host, each stage decided so far, the time spent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<Host>,
    #[serde(default)]
    pub stages: Vec<StageRecord>,
    /// Seconds spent before the studies began (loading the data), across resumes.
    #[serde(default)]
    pub setup_s: f64,
    /// Why the plan stopped on an error, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PlanState {
    pub fn spent_s(&self) -> f64 {
        self.setup_s + self.stages.iter().map(|s| s.seconds).sum::<f64>()
    }
    pub fn record(&self, stage: Stage) -> Option<&StageRecord> {
        self.stages.iter().find(|r| r.stage == stage)
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::plan as spec;
    use super::*;

    /// an_earlier_plan_counts_only_when_it_measured_the_same_thing (issue 61, 4): its
    /// range joins this plan's only for the same workload, data, objective and host.
    #[test]
    fn an_earlier_plan_counts_only_when_it_measured_the_same_thing() {
        let spec = PlanSpec { target_tps: 17000.0, latency: Some("p99<20ms".into()), ..spec() };
        let other_target = PlanSpec { target_tps: 5000.0, budget_s: 60.0, efficiency: Some(0.8), ..spec.clone() };
        assert!(spec.measures_like(&other_target), "the target and budget change only the arithmetic");
        assert!(!spec.measures_like(&PlanSpec { latency: Some("p99<50ms".into()), ..spec.clone() }));
        let mut sized = spec.clone();
        sized.options.insert("table-size".into(), Value::from(1_000_000));
        assert!(!spec.measures_like(&sized), "other data");
        let host = Host {
            cpus: 2,
            managed: true,
            data_bytes: Some(2_850_816),
            pool_bytes: Some(1 << 30),
            pool_unused: None,
            memory_bytes: Some(25_276_510_208),
            storage: Some("vda".into()),
            path: Some("a unix socket".into()),
        };
        assert!(host.same_as(&Host { data_bytes: Some(2_900_000), ..host.clone() }), "data is estimated");
        assert!(!host.same_as(&Host { data_bytes: Some(4_000_000), ..host.clone() }));
        assert!(!host.same_as(&Host { cpus: 4, ..host.clone() }));
        assert!(!host.same_as(&Host { pool_bytes: Some(8 << 20), ..host.clone() }));
        assert!(!host.same_as(&Host { path: Some("TCP to 10.0.0.5:3306".into()), ..host.clone() }));
    }

    #[test]
    fn budgets_read_as_people_write_them() {
        assert_eq!(parse_budget("10m").unwrap(), 600.0);
        assert_eq!(parse_budget("90s").unwrap(), 90.0);
        assert_eq!(parse_budget("1h30m").unwrap(), 5400.0);
        assert_eq!(parse_budget("600").unwrap(), 600.0);
        for bad in ["", "10x", "m", "-5m", "10m5", "0"] {
            assert!(parse_budget(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cluster_choices_are_the_plan_files_words() {
        for (n, c) in ClusterChoice::NAMES.iter().zip(ClusterChoice::ALL) {
            assert_eq!(serde_json::to_value(c).unwrap(), *n);
            assert_eq!(ClusterChoice::named(n), Some(c));
        }
        assert_eq!(ClusterChoice::named("nope"), None);
    }
}
