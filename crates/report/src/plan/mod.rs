//! `sizeup plan`: from a requirement (a throughput, perhaps a latency objective) to a
//! purchase plan. The planner runs, in order, the studies the answer needs, each chosen
//! and sized from what the one before found, each stored as an ordinary study:
//!
//! 1. a connection sweep: where one instance saturates and what ran out there;
//! 2. the capacity at the latency objective (an open-loop rate study probed at the
//!    sweep's saturation);
//! 3. a scale-up over instances, when one instance left CPU unused at its peak;
//! 4. scale-out on a cluster made on this host (emulated), or the efficiency given;
//! 5. the memory study, when the data outgrows the buffer pool;
//!
//! then servers x instances per server with their range, cost and watts, and the
//! alternatives the plan beat.
//!
//! The plan's spec, the decisions and the purchase plan are the model's
//! (`sizeup_model::plan`, re-exported here); this module reads a plan file, checks the
//! workload's name, and writes a decided study as a study spec. Running the studies is
//! `runner::plan`'s job, the words and the report `report::plan`'s.

pub use sizeup_model::plan::*;

use crate::cost::CostInputs;
use crate::error::Invalid;
use crate::study::spec::{Levels, PowerSpec, Section, StudySpec};
use decide::{Planned, Timing};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// A plan file: `kind = "plan"`, the budget as written on the command line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    /// "plan", checked before the rest is read.
    #[allow(dead_code)]
    kind: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    target_tps: f64,
    #[serde(default)]
    latency: Option<String>,
    #[serde(default = "default_workload")]
    workload: String,
    #[serde(default)]
    options: BTreeMap<String, Value>,
    #[serde(default)]
    script_options: BTreeMap<String, Value>,
    #[serde(default)]
    cost: Option<CostInputs>,
    #[serde(default)]
    power: PowerSpec,
    #[serde(default)]
    cluster: ClusterChoice,
    #[serde(default)]
    efficiency: Option<f64>,
    #[serde(default)]
    memory_price: Option<f64>,
    #[serde(default = "default_budget")]
    budget: Value,
}

fn default_budget() -> Value {
    Value::String("30m".into())
}

/// A plan file's spec (`kind = "plan"`); errors name the file.
pub fn from_toml(text: &str, origin: &str) -> Result<PlanSpec, Invalid> {
    // A study file is no plan, whatever else it holds (a_file_of_another_kind_is_no_plan:
    // `kind = "sweep"` ran a whole plan).
    let table: toml::Table = toml::from_str(text).map_err(|e| Invalid::Value(format!("{origin}: {}", e.message())))?;
    match table.get("kind").and_then(|k| k.as_str()) {
        Some("plan") => {}
        Some(other) => {
            return Err(Invalid::Value(format!(
            "{origin} is a {other} study file, not a plan (kind = \"plan\"): run it with `sizeup study run {origin}`"
        )))
        }
        None => return Err(Invalid::Value(format!("{origin}: a plan file says kind = \"plan\""))),
    }
    let f: PlanFile = toml::from_str(text).map_err(|e| Invalid::Value(format!("{origin}: {}", e.message())))?;
    let budget_s = match &f.budget {
        Value::String(s) => parse_budget(s),
        Value::Number(n) => parse_budget(&n.to_string()),
        _ => Err(Invalid::Value("budget: give a time such as \"10m\"".into())),
    }
    .map_err(|e| Invalid::Value(format!("{origin}: {e}")))?;
    let _ = f.description;
    let spec = PlanSpec {
        name: f.name.unwrap_or_else(|| format!("plan {} {}", f.workload, f.target_tps)),
        target_tps: f.target_tps,
        latency: f.latency,
        workload: f.workload,
        options: f.options,
        script_options: f.script_options,
        cost: f.cost,
        power: f.power,
        cluster: f.cluster,
        efficiency: f.efficiency,
        memory_price: f.memory_price,
        budget_s,
        growth: None,
    };
    validate(&spec).map_err(|e| Invalid::Value(format!("{origin}: {e}")))?;
    Ok(spec)
}

/// Everything checkable before a server is touched: the model's checks and the
/// workload's name.
pub fn validate(spec: &PlanSpec) -> Result<(), Invalid> {
    spec.check()?;
    crate::workload::kind(&spec.workload)?;
    Ok(())
}

/// The study spec a decided study runs: named after the plan (so a resumed plan finds
/// it), on the plan's workload, options, power and cost, in the plan's own database
/// unless the plan or the study names one.
pub fn study_spec(plan: &PlanSpec, plan_id: i64, study: &Planned) -> StudySpec {
    let mut options = plan.options.clone();
    match &study.database {
        Some(db) => {
            options.insert("database".into(), db.clone().into());
        }
        // A capture's statements run in its own databases (the one most sessions start in).
        None if plan.replays() => {}
        None => {
            options.entry("database".to_string()).or_insert_with(|| decide::DATABASE.into());
        }
    }
    StudySpec {
        name: decide::study_name(plan_id, study.stage),
        description: format!("Run by `sizeup plan` {plan_id} ({}).", plan.name),
        section: study.section.clone(),
        workloads: vec![plan.workload.clone()],
        levels: study.levels.clone(),
        step_time: study.timing.step_time,
        warmup: study.timing.warmup,
        repeat: 1,
        sample_interval: 1.0,
        steady_last: 1.0,
        stop_when: String::new(),
        options,
        server: study.server.clone(),
        configs: Vec::new(),
        scale: study.scale.clone(),
        power: plan.power.clone(),
        cost: plan.cost.clone(),
        script_options: plan.script_options.clone(),
    }
}

/// The study the host's facts are read through before the first stage: the sweep's
/// workload, data and target at one connection (its data loaded as the sweep would).
pub fn probe_spec(plan: &PlanSpec) -> StudySpec {
    // A capture is replayed by a rate study only (its sessions set the connections).
    let section = match plan.replays() {
        true => Section::Rate(crate::study::spec::RateSpec {
            latency: plan.latency.clone().unwrap_or_default(),
            ..Default::default()
        }),
        false => Section::Sweep,
    };
    let probe = Planned {
        stage: Stage::Sweep,
        section,
        levels: Levels::List(vec![1]),
        timing: Timing { step_time: 5.0, warmup: 1.0 },
        scale: Default::default(),
        server: Default::default(),
        database: None,
    };
    study_spec(plan, 0, &probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::fixtures::plan as spec;

    #[test]
    fn a_plan_that_cannot_be_planned_is_refused_with_what_to_give() {
        assert!(validate(&spec()).is_ok());
        let bad = [
            (PlanSpec { target_tps: 0.0, ..spec() }, "--target-tps"),
            (PlanSpec { latency: Some("p99 fast".into()), ..spec() }, "objective"),
            (PlanSpec { budget_s: 30.0, ..spec() }, "--budget"),
            (PlanSpec { efficiency: Some(1.5), ..spec() }, "--efficiency"),
            (PlanSpec { efficiency: Some(0.8), cluster: ClusterChoice::Galera, ..spec() }, "give one"),
            (PlanSpec { workload: "nope".into(), ..spec() }, "nope"),
        ];
        for (s, says) in bad {
            let e = validate(&s).unwrap_err();
            let said = match &e {
                Invalid::Value(m) => m.contains(says),
                Invalid::Entry { option, why, .. } => *option == "--latency" && why.contains("bound"),
                _ => false,
            };
            assert!(said, "{e}");
        }
    }

    #[test]
    fn the_shipped_plan_file_is_valid() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies/10-purchase-plan.toml");
        let spec = from_toml(&std::fs::read_to_string(&p).unwrap(), "10").unwrap();
        assert_eq!((spec.target_tps, spec.budget_s), (5000.0, 600.0));
        assert!(spec.cost.is_some() && spec.power.model.is_some());
    }

    #[test]
    fn a_plan_file_reads_its_budget_and_cost() {
        let text = r#"
kind = "plan"
target_tps = 1200
latency = "p99<20ms"
budget = "10m"
cluster = "galera"
[options]
tables = 4
[cost]
server_capex = 9000
power_price_kwh = 0.15
years = 4
"#;
        let p = from_toml(text, "f.toml").unwrap();
        assert_eq!(p.budget_s, 600.0);
        assert_eq!(p.cluster, ClusterChoice::Galera);
        assert_eq!(p.cost.unwrap().server_capex, 9000.0);
        assert_eq!(p.workload, "oltp_read_write");
        let e = from_toml("kind = \"sweep\"\ntarget_tps = 5\nbudget = \"1m\"", "s.toml").unwrap_err();
        assert!(
            matches!(&e, Invalid::Value(m) if m.starts_with("s.toml is a sweep study file, not a plan")),
            "a_file_of_another_kind_is_no_plan: {e}"
        );
        let e = from_toml("kind = \"sweep\"\nlevels = \"1,2\"\nworkloads = [\"x\"]", "s.toml").unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("not a plan")), "{e}");
        let e = from_toml("kind = \"plan\"\ntarget_tps = 5\nbudget = \"1m\"", "g.toml").unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.starts_with("g.toml: --budget 60s")), "{e}");
        let e = from_toml("kind = \"plan\"\ntarget_tps = 5\nlevels = 3", "h.toml").unwrap_err();
        assert!(matches!(&e, Invalid::Value(m) if m.contains("levels")), "{e}");
    }

    /// Every study a plan decides is one `study run` accepts: the decisions are the
    /// model's, the study spec and its checks the engine's.
    #[test]
    fn every_study_a_plan_decides_is_a_valid_study() {
        use super::decide::{decide, timing, Decision};
        use super::fixtures::{cpu_bound, host, lock_bound, memory_bound};
        let galera = PlanSpec { cluster: ClusterChoice::Galera, ..spec() };
        let mut ran = Vec::new();
        for (plan, found) in
            [(spec(), cpu_bound()), (spec(), lock_bound()), (spec(), memory_bound()), (galera, cpu_bound())]
        {
            for stage in Stage::ALL {
                let h = host();
                if let Decision::Run { study, .. } = decide(stage, &plan, 7, &h, timing(&plan, &h), &found, 1e6) {
                    let s = study_spec(&plan, 7, &study);
                    assert!(s.validate().is_ok(), "{stage:?}: {:?}", s.validate());
                    assert_eq!(s.name, format!("plan 7: {}", stage.name()));
                    ran.push(stage);
                }
            }
        }
        for stage in Stage::ALL {
            assert!(ran.contains(&stage), "{stage:?} was decided to run at least once");
        }
        let probe = probe_spec(&spec());
        assert!(probe.validate().is_ok(), "{:?}", probe.validate());
        assert_eq!(probe.options["database"], decide::DATABASE, "the plan's own database unless one is named");
    }
}
