//! Which study next, from what the last ones found: each stage is run (with the study
//! it runs, sized from the findings) or skipped, and the reason is said either way.
//! The budget is split once into a step length that lets every study the plan may need
//! fit; a stage that would still overrun what is left is left out, said so, with what
//! running it would have changed.

use super::{ClusterChoice, Findings, Host, PlanSpec, Stage, DEFAULT_EFFICIENCY};
use crate::study::bottleneck::{self, Finding};
use crate::study::figures::{LevelResult, SeriesResult};
use crate::study::levels::Levels;
use crate::study::saturation::Saturation;
use crate::study::section::{ClusterSection, MemorySpec, RateSpec, Route, ScaleSpec, Section, ServerSpec};

/// Each step's measured seconds and warm-up, from the budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub step_time: f64,
    pub warmup: f64,
}

/// The study a stage runs, as decided: its kind with its section, levels and step
/// length, and what it changes from the plan's own options. The report crate writes
/// it as a study spec named after the plan (`study_name`).
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub stage: Stage,
    pub section: Section,
    pub levels: Levels,
    pub timing: Timing,
    /// Each instance's or node's load, and how a cluster's is routed.
    pub scale: ScaleSpec,
    /// Settings of the instances the study makes (a cluster's miniature nodes).
    pub server: ServerSpec,
    /// A database of its own (a cluster's, made fresh), else the plan's (`DATABASE`
    /// unless the plan names one).
    pub database: Option<String>,
}

impl Planned {
    fn new(stage: Stage, section: Section, levels: Levels, timing: Timing) -> Planned {
        Planned {
            stage,
            section,
            levels,
            timing,
            scale: ScaleSpec::default(),
            server: ServerSpec::default(),
            database: None,
        }
    }
}

/// What a stage does.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    Run {
        study: Box<Planned>,
        why: String,
    },
    /// `for_time`: it would have run, but the budget had no room.
    Skip {
        why: String,
        for_time: bool,
    },
}

/// The rate levels a capacity search runs at most in a plan (the probe besides): six
/// to find the bracket, and its two rates once more.
const RATE_LEVELS: usize = 8;
/// The bracket a plan's capacity search aims for, per cent (coarser than a capacity
/// study's 5: each level costs a step of the budget).
const RATE_RESOLUTION_PCT: f64 = 10.0;
/// Nodes of the cluster a plan makes for scale-out.
const CLUSTER_NODES: u32 = 3;
/// The longest a memory level's warm-up may wait in a plan, seconds.
const MEMORY_WARMUP_S: f64 = 60.0;
/// The most pool levels a plan's memory study runs (`auto` picks up to 6).
const MEMORY_LEVELS: usize = 6;
/// Seconds beside the measured steps: loading data, starting instances and clusters.
const SWEEP_SETUP_S: f64 = 15.0;
const RATE_SETUP_S: f64 = 10.0;
const INSTANCE_SETUP_S: f64 = 20.0;
const CLUSTER_SETUP_S: f64 = 90.0;
const MEMORY_LEVEL_SETUP_S: f64 = 15.0;
/// Of the budget, the share the step length is planned to fill: the rest absorbs
/// setup that took longer than estimated.
const PLANNED_SHARE: f64 = 0.8;

/// Read-only workloads: the ones a primary-with-replicas cluster can spread over its
/// nodes.
const READ_ONLY: [&str; 4] = ["oltp_read_only", "oltp_point_select", "select_random_points", "select_random_ranges"];

/// The sweep's connection levels: powers of two up to 8 per CPU (at most 256).
pub fn sweep_levels(host: &Host) -> Vec<u32> {
    let most = (8 * host.cpus.max(1)).min(256);
    std::iter::successors(Some(1u32), |n| Some(n * 2)).take_while(|n| *n <= most).collect()
}

/// Instance counts of the scale-up: powers of two up to the CPUs (at most 8).
pub fn instance_levels(host: &Host) -> Vec<u32> {
    let most = host.cpus.clamp(1, 8);
    std::iter::successors(Some(1u32), |n| Some(n * 2)).take_while(|n| *n <= most).collect()
}

/// The step length that fits every study the plan may run into the budget: the sweep,
/// the capacity search with a latency objective, a scale-up on a managed server of 2
/// CPUs or more, the cluster when one is asked for, and the memory study when the data
/// already outgrows the pool. Between 5 and 30 s a step, a quarter of it warm-up.
pub fn timing(plan: &PlanSpec, host: &Host) -> Timing {
    if plan.replays() {
        // Its only study, the capacity search (each level replays the whole capture:
        // the step length is the capture's span at that speed, this its warm-up cap).
        let each = ((plan.budget_s * PLANNED_SHARE - RATE_SETUP_S) / RATE_LEVELS as f64).max(0.0);
        return Timing {
            step_time: (each * 0.8).clamp(5.0, 30.0).round(),
            warmup: (each * 0.2).clamp(1.0, 10.0).round(),
        };
    }
    let mut steps = sweep_levels(host).len() as f64;
    let mut setup = SWEEP_SETUP_S;
    if plan.latency.is_some() {
        steps += 1.0 + RATE_LEVELS as f64;
        setup += RATE_SETUP_S;
    }
    if host.managed && host.cpus >= 2 {
        let levels = instance_levels(host);
        steps += levels.len() as f64;
        setup += INSTANCE_SETUP_S * *levels.last().unwrap_or(&1) as f64;
    }
    if plan.cluster != ClusterChoice::None {
        steps += CLUSTER_NODES as f64;
        setup += CLUSTER_SETUP_S;
    }
    if host.managed && outgrows(host) {
        steps += MEMORY_LEVELS as f64 * 2.0; // a warm-up about as long as the step
        setup += MEMORY_LEVELS as f64 * MEMORY_LEVEL_SETUP_S;
    }
    let each = ((plan.budget_s * PLANNED_SHARE - setup) / steps).max(0.0);
    let step_time = (each * 0.8).clamp(5.0, 30.0).round();
    let warmup = (each * 0.2).clamp(1.0, 10.0).round();
    Timing { step_time, warmup }
}

/// The data is larger than the buffer pool.
fn outgrows(host: &Host) -> bool {
    matches!((host.data_bytes, host.pool_bytes), (Some(d), Some(p)) if d > p)
}

/// About how long a study runs: its steps and its setup, seconds.
pub fn estimate_s(study: &Planned) -> f64 {
    let step = study.timing.step_time + study.timing.warmup;
    let values = || study.levels.resolve().unwrap_or_default();
    let levels = || values().len().max(1) as f64;
    match &study.section {
        Section::Sweep => levels() * step + SWEEP_SETUP_S,
        Section::Rate(r) => (1 + r.max_levels.unwrap_or(RATE_LEVELS)) as f64 * step + RATE_SETUP_S,
        Section::Scale => values().len() as f64 * step + INSTANCE_SETUP_S * *values().iter().max().unwrap_or(&1) as f64,
        Section::ScaleOut { .. } => levels() * (step + 20.0) + CLUSTER_SETUP_S,
        Section::Memory(m) => {
            let n = match &study.levels {
                Levels::Text(t) if t.trim() == "auto" => MEMORY_LEVELS as f64,
                _ => levels(),
            };
            n * (step + m.max_warmup() / 2.0 + MEMORY_LEVEL_SETUP_S)
        }
    }
}

/// The sweep's peak as the planner reads it: the verdict, the best level and what ran
/// out there. None when the sweep has no capacity level.
pub struct Peak<'a> {
    pub verdict: &'a Saturation,
    pub level: &'a LevelResult,
    pub ran_out: Vec<Finding>,
}

impl Peak<'_> {
    /// The connections the later studies load each instance with: where it saturates,
    /// else the best level.
    pub fn connections(&self) -> u32 {
        self.verdict.saturation.unwrap_or(self.verdict.best)
    }
    fn has(&self, tag: &str) -> bool {
        self.ran_out.iter().any(|f| f.tag == tag)
    }
}

pub fn peak(s: &SeriesResult) -> Option<Peak<'_>> {
    let verdict = s.verdict.as_ref()?;
    let level = s.capacity().find(|l| l.level == verdict.best)?;
    Some(Peak { verdict, level, ran_out: bottleneck::findings(level) })
}

/// The study a stage runs, named after the plan so a resumed plan finds it.
pub fn study_name(plan_id: i64, stage: Stage) -> String {
    format!("plan {plan_id}: {}", stage.name())
}

/// The database a plan's data goes in unless the plan names one: its own, so data of
/// another size (the demo's, a user's sbtest) is neither refused nor touched.
pub const DATABASE: &str = "sizeup_plan";

fn run(study: Planned, why: String) -> Decision {
    Decision::Run { study: Box::new(study), why }
}

fn skip(why: impl Into<String>) -> Decision {
    Decision::Skip { why: why.into(), for_time: false }
}

fn mib(bytes: u64) -> String {
    let m = bytes as f64 / (1u64 << 20) as f64;
    if m >= 1024.0 {
        format!("{:.1} GiB", m / 1024.0)
    } else {
        format!("{m:.0} MiB")
    }
}

/// What leaving a stage out changes in the plan, said when the budget left it out.
pub fn left_out(stage: Stage, plan: &PlanSpec) -> String {
    match stage {
        Stage::Sweep | Stage::Capacity if plan.replays() => "a capture's plan has nothing else to size from".into(),
        Stage::Sweep => "there is no plan without it".into(),
        Stage::Capacity => format!(
            "each server is sized at the sweep's closed-loop peak, where latency is at its worst, not at {}; \
             the server count may be too low",
            plan.latency.as_deref().unwrap_or("the objective")
        ),
        Stage::ScaleUp => {
            "one instance per server is assumed: if more instances used the CPU one left, fewer servers would do".into()
        }
        Stage::ScaleOut => format!(
            "the scale-out efficiency is assumed ({}), not measured",
            plan.efficiency.unwrap_or(DEFAULT_EFFICIENCY)
        ),
        Stage::Memory => "each server is assumed to need a buffer pool like this one's; a smaller pool may do, or may \
                          not carry the load"
            .into(),
    }
}

/// The decision on `stage`, given the findings so far and `left_s` of the budget.
pub fn decide(
    stage: Stage,
    plan: &PlanSpec,
    plan_id: i64,
    host: &Host,
    t: Timing,
    found: &Findings,
    left_s: f64,
) -> Decision {
    let wanted = want(stage, plan, plan_id, host, t, found);
    match wanted {
        Decision::Run { study, why } if stage != Stage::Sweep && estimate_s(&study) > left_s => Decision::Skip {
            why: format!(
                "left out for time: it would take about {:.0} s and {:.0} s of the budget were left ({why}); \
                 without it {}",
                estimate_s(&study),
                left_s.max(0.0),
                left_out(stage, plan)
            ),
            for_time: true,
        },
        d => d,
    }
}

/// A replayed capture's plan: its sessions are its connections, so there is nothing to
/// sweep, and the instances, nodes and pools of the other stages run workloads sizeup
/// generates; the capacity search at the objective is its one study.
fn want_replay(stage: Stage, plan: &PlanSpec, t: Timing) -> Decision {
    match stage {
        Stage::Sweep => skip("a capture's sessions are its connections: there is no connection count to sweep"),
        Stage::Capacity => {
            let latency = plan.latency.clone().unwrap_or_default();
            let rate = RateSpec {
                latency: latency.clone(),
                resolution: Some(RATE_RESOLUTION_PCT),
                connections: None,
                probe_threads: None,
                max_levels: Some(RATE_LEVELS),
            };
            let why = format!(
                "the highest speed of the captured traffic that meets {latency}: the capture replayed from its own \
                 rate, doubled until the objective breaks, then bracketed"
            );
            run(Planned::new(stage, Section::Rate(rate), Levels::Text("auto".into()), t), why)
        }
        Stage::ScaleUp | Stage::Memory => skip(
            "a replay is one application's traffic on one copy of its data: more instances or other pools are not \
             measured with it; one instance per server, with this one's pool, is assumed",
        ),
        Stage::ScaleOut => skip(format!(
            "a replay is one copy's traffic: the scale-out efficiency is assumed ({})",
            plan.efficiency.unwrap_or(DEFAULT_EFFICIENCY)
        )),
    }
}

/// Whether `stage` should run, budget aside, and the study it would run.
fn want(stage: Stage, plan: &PlanSpec, plan_id: i64, host: &Host, t: Timing, found: &Findings) -> Decision {
    if plan.replays() {
        return want_replay(stage, plan, t);
    }
    if stage == Stage::Sweep {
        let levels = sweep_levels(host);
        let why = format!(
            "where one instance saturates and what runs out there: {} to {} connections ({} per CPU at most)",
            levels[0],
            levels.last().expect("a level"),
            levels.last().expect("a level") / host.cpus.max(1)
        );
        return run(Planned::new(stage, Section::Sweep, Levels::List(levels), t), why);
    }
    let Some(sweep) = found.sweep.as_ref().and_then(|f| f.first()) else {
        return skip("the sweep measured nothing to build on");
    };
    let Some(p) = peak(sweep) else {
        if sweep.only_starved() {
            return skip(
                "other programs starved the server at every level of the sweep, so there is nothing to size from",
            );
        }
        return skip("the sweep finished no level, so there is nothing to size from");
    };
    let at = p.connections();
    match stage {
        Stage::Sweep => unreachable!("decided above"),
        Stage::Capacity => {
            let Some(latency) = &plan.latency else {
                return skip(
                    "no latency objective was given (--latency 'p99<50ms'): each server is sized at the sweep's \
                     closed-loop peak",
                );
            };
            let rate = RateSpec {
                latency: latency.clone(),
                resolution: Some(RATE_RESOLUTION_PCT),
                connections: None,
                probe_threads: Some(at),
                max_levels: Some(RATE_LEVELS),
            };
            let s = Planned::new(stage, Section::Rate(rate), Levels::Text("auto".into()), t);
            let why = format!(
                "the highest arrival rate that meets {latency}: open-loop rates searched from a closed-loop probe at \
                 {at} connections, where the sweep saturated ({:.0} {} at best)",
                p.verdict.best_value, sweep.unit
            );
            run(s, why)
        }
        Stage::ScaleUp if plan.uses_agents() => skip(
            "the load comes from agents, and a scale-up's client groups (one per instance, at once) run from one \
             process: one instance per server is assumed",
        ),
        Stage::ScaleUp => scale_up(host, t, &p),
        Stage::ScaleOut => scale_out(plan, plan_id, t, at),
        Stage::Memory => memory(host, t, &p),
    }
}

fn scale_up(host: &Host, t: Timing, p: &Peak) -> Decision {
    if !host.managed {
        return skip(
            "the server is not one sizeup manages, so it cannot start more instances of it: one instance per \
             server is assumed",
        );
    }
    if host.cpus < 2 {
        return skip("this host has one CPU: there is no second core for another instance");
    }
    if let Some(f) = p.ran_out.iter().find(|f| f.tag == "client") {
        return skip(format!(
            "sizeup's own client was the limit at the peak ({}): more instances would measure the load generator",
            f.words
        ));
    }
    let Some(os) = p.level.observed.os.as_ref().filter(|o| o.server_cores.is_some()) else {
        return skip("the host's CPU at the peak was not measured, so whether a core was left unused is not known");
    };
    let busy = os.busy().unwrap_or(0.0);
    if p.has("cpu") {
        return skip(format!(
            "one instance kept the host's CPU {busy:.0} % busy at its peak ({}): another instance would share the \
             same cores",
            bottleneck::cpu_users(os)
        ));
    }
    if p.has("pool") {
        return skip(
            "the buffer pool ran out at the peak: another instance would share the host's memory and miss more; \
             memory comes first",
        );
    }
    let levels = instance_levels(host);
    let mut s = Planned::new(Stage::ScaleUp, Section::Scale, Levels::List(levels.clone()), t);
    s.scale = ScaleSpec { threads_per_instance: Some(p.connections()), ..Default::default() };
    let what = if p.ran_out.is_empty() {
        "nothing measured ran out".to_string()
    } else {
        format!("{} ran out", p.ran_out.iter().map(|f| f.words.as_str()).collect::<Vec<_>>().join("; "))
    };
    let why = format!(
        "one instance left CPU unused at its peak ({busy:.0} % busy: {}) and {what}: 1 to {} instances of {} \
         connections each",
        bottleneck::cpu_users(os),
        levels.last().expect("a level"),
        p.connections()
    );
    run(s, why)
}

fn scale_out(plan: &PlanSpec, plan_id: i64, t: Timing, at: u32) -> Decision {
    let kind = match plan.cluster {
        ClusterChoice::None => {
            return skip(match plan.efficiency {
                Some(e) => format!("no cluster was asked for: the efficiency given, {e}, is used"),
                None => format!(
                    "no cluster was asked for (--cluster galera|replicas) and no efficiency given (--efficiency): \
                     {DEFAULT_EFFICIENCY} is assumed"
                ),
            })
        }
        ClusterChoice::Replicas if !READ_ONLY.contains(&plan.workload.as_str()) => {
            return skip(format!(
                "replicas take reads only and {} writes: --cluster galera, or a read-only workload; the efficiency \
                 {DEFAULT_EFFICIENCY} is assumed",
                plan.workload
            ))
        }
        ClusterChoice::Galera => "galera",
        ClusterChoice::Replicas => "replicas",
    };
    let cluster = ClusterSection {
        kind: kind.into(),
        nodes: CLUSTER_NODES,
        // Each node a miniature server, the nodes together leaving a core to the client.
        node_cpus: Some(0.3),
        link_delay: Some("0.2ms".into()),
        link_jitter: None,
    };
    let section = Section::ScaleOut { cluster: Some(cluster) };
    let mut s = Planned::new(Stage::ScaleOut, section, Levels::Text(format!("1..{CLUSTER_NODES}")), t);
    s.server = ServerSpec { buffer_pool: Some("128M".into()), log_file_size: Some("64M".into()), ..Default::default() };
    s.database = Some(format!("plan{plan_id}"));
    s.scale = ScaleSpec {
        threads_per_instance: Some(at.clamp(1, 8)),
        route: if kind == "galera" { Route::EveryNode } else { Route::RoundRobin },
        ..Default::default()
    };
    let why = format!(
        "the efficiency e(N) of 1 to {CLUSTER_NODES} {kind} nodes made on this host (a lab: each node under a CPU \
         quota behind a delayed link, so the figures are emulated)"
    );
    run(s, why)
}

fn memory(host: &Host, t: Timing, p: &Peak) -> Decision {
    let pool_ran_out = p.has("pool");
    if let Some(why) = &host.pool_unused {
        return skip(format!(
            "could not tell whether memory limits this server: its storage is not InnoDB ({why}), so its buffer pool \
             setting holds nothing"
        ));
    }
    let (Some(data), Some(pool)) = (host.data_bytes, host.pool_bytes) else {
        return skip("the server did not say how large the data or the buffer pool is");
    };
    if data <= pool && !pool_ran_out {
        return skip(format!(
            "the data ({}) fits the buffer pool ({}) and the pool did not run out at the peak: memory is not what \
             limits this server",
            mib(data),
            mib(pool)
        ));
    }
    let why = match pool_ran_out {
        true => "the buffer pool ran out at the sweep's peak".to_string(),
        false => format!("the data ({}) outgrows the buffer pool ({})", mib(data), mib(pool)),
    };
    if !host.managed {
        return skip(format!(
            "{why}, but the pool of a server sizeup does not manage is not changed: `sizeup memory --vary data` \
             studies it by data size"
        ));
    }
    let memory = MemorySpec { threads: Some(p.connections()), max_warmup: Some(MEMORY_WARMUP_S), ..Default::default() };
    let s = Planned::new(Stage::Memory, Section::Memory(memory), Levels::Text("auto".into()), t);
    run(s, format!("{why}: how far down throughput holds as the pool shrinks, and the hot set"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::fixtures::*;
    use crate::plan::Found;
    use crate::study::figures::fixtures::fixture;
    use crate::study::saturation::Shape;
    use crate::study::section::Kind;

    fn next(stage: Stage, f: &Findings, h: &Host) -> Decision {
        decide(stage, &plan(), 7, h, timing(&plan(), h), f, 10_000.0)
    }

    fn said(d: &Decision) -> &str {
        match d {
            Decision::Run { why, .. } | Decision::Skip { why, .. } => why,
        }
    }

    #[test]
    fn a_cpu_bound_server_gets_no_scale_up() {
        let f = cpu_bound();
        let d = next(Stage::ScaleUp, &f, &host());
        assert!(matches!(d, Decision::Skip { for_time: false, .. }), "{d:?}");
        assert!(said(&d).contains("CPU 97 % busy") && said(&d).contains("share the same cores"), "{}", said(&d));
        // The objective is measured where the sweep saturated.
        let Decision::Run { study, why } = next(Stage::Capacity, &f, &host()) else { panic!("capacity runs") };
        let Section::Rate(rate) = &study.section else { panic!("a rate study: {study:?}") };
        assert_eq!(rate.probe_threads, Some(8));
        assert_eq!(rate.latency, "p99<50ms");
        assert!(why.contains("p99<50ms") && why.contains("8 connections"), "{why}");
        // The data fits: no memory study.
        let d = next(Stage::Memory, &f, &host());
        assert!(matches!(d, Decision::Skip { .. }) && said(&d).contains("fits the buffer pool"), "{d:?}");
    }

    #[test]
    fn a_lock_bound_server_gets_a_scale_up_at_its_saturation() {
        let f = lock_bound();
        let Decision::Run { study, why } = next(Stage::ScaleUp, &f, &host()) else { panic!("scale-up runs") };
        assert_eq!(study.section.kind(), Kind::Scale);
        assert_eq!(study.levels, Levels::List(vec![1, 2]));
        assert_eq!(study.scale.threads_per_instance, Some(8));
        assert!(why.contains("left CPU unused") && why.contains("row locks"), "{why}");
        assert_eq!(study.database, None, "the plan's own database");
        // Not on a server sizeup does not manage.
        let named = Host { managed: false, ..host() };
        let d = next(Stage::ScaleUp, &f, &named);
        assert!(said(&d).contains("cannot start more instances"), "{d:?}");
        // Nor with the load from agents: a scale-up's client groups run from one process.
        let mut p = plan();
        p.options.insert("agents".into(), serde_json::json!(["c1:7800", "c2:7800"]));
        let d = decide(Stage::ScaleUp, &p, 7, &host(), timing(&p, &host()), &f, 10_000.0);
        assert!(matches!(d, Decision::Skip { for_time: false, .. }) && said(&d).contains("agents"), "{d:?}");
    }

    #[test]
    fn a_memory_bound_server_gets_the_memory_study_before_more_instances() {
        let f = memory_bound();
        let d = next(Stage::ScaleUp, &f, &host());
        assert!(matches!(d, Decision::Skip { .. }) && said(&d).contains("memory comes first"), "{d:?}");
        let Decision::Run { study, why } = next(Stage::Memory, &f, &host()) else { panic!("memory runs") };
        let Section::Memory(m) = &study.section else { panic!("a memory study: {study:?}") };
        assert_eq!(m.threads, Some(8));
        assert!(why.contains("the buffer pool ran out"), "{why}");
        // Data larger than the pool runs it too, with the sizes said.
        let big = Host { data_bytes: Some(3 << 30), pool_bytes: Some(1 << 30), ..host() };
        let Decision::Run { why, .. } = next(Stage::Memory, &cpu_bound(), &big) else { panic!("memory runs") };
        assert!(why.contains("the data (3.0 GiB) outgrows the buffer pool (1.0 GiB)"), "{why}");
        // A named server's pool is not changed.
        let named = Host { managed: false, ..big };
        let d = next(Stage::Memory, &cpu_bound(), &named);
        assert!(matches!(d, Decision::Skip { .. }) && said(&d).contains("--vary data"), "{d:?}");
    }

    #[test]
    fn non_innodb_pool_is_not_applicable() {
        // go-mysql-server reports a 128 MiB pool with no InnoDB underneath: the memory
        // stage says it could not tell, not that memory does not limit the server.
        let gms = Host {
            pool_bytes: None,
            pool_unused: Some("reading sbtest1's rows left Innodb_buffer_pool_read_requests at 0".into()),
            ..host()
        };
        let d = next(Stage::Memory, &cpu_bound(), &gms);
        assert!(matches!(d, Decision::Skip { .. }), "{d:?}");
        assert!(said(&d).starts_with("could not tell whether memory limits this server"), "{d:?}");
        assert!(!said(&d).contains("is not what limits"), "{d:?}");
    }

    #[test]
    fn a_stage_that_overruns_the_budget_is_left_out_with_what_it_would_change() {
        let f = lock_bound();
        let h = host();
        let d = decide(Stage::ScaleUp, &plan(), 7, &h, timing(&plan(), &h), &f, 20.0);
        let Decision::Skip { why, for_time: true } = d else { panic!("left out: {d:?}") };
        assert!(why.starts_with("left out for time: it would take about"), "{why}");
        assert!(why.contains("fewer servers would do"), "{why}");
        // The sweep always runs: there is no plan without it.
        let d = decide(Stage::Sweep, &plan(), 7, &h, timing(&plan(), &h), &Findings::default(), 0.0);
        assert!(matches!(d, Decision::Run { .. }));
    }

    #[test]
    fn the_steps_shrink_to_fit_the_budget() {
        let h = host();
        let ten = timing(&plan(), &h);
        let hour = timing(&PlanSpec { budget_s: 3600.0, ..plan() }, &h);
        let two = timing(&PlanSpec { budget_s: 120.0, ..plan() }, &h);
        assert!(ten.step_time < hour.step_time && two.step_time <= ten.step_time, "{ten:?} {hour:?} {two:?}");
        assert_eq!(hour.step_time, 30.0);
        assert_eq!(two.step_time, 5.0);
        // At 10 minutes the studies a 2-core managed host may need fit in the budget.
        let f = lock_bound();
        let total: f64 = [Stage::Sweep, Stage::Capacity, Stage::ScaleUp]
            .iter()
            .map(|s| match want(*s, &plan(), 7, &h, ten, &f) {
                Decision::Run { study, .. } => estimate_s(&study),
                Decision::Skip { .. } => 0.0,
            })
            .sum();
        assert!(total <= 600.0, "{total} s planned for {ten:?}");
        assert!(total >= 0.6 * 600.0, "{total} s uses the budget");
    }

    #[test]
    fn scale_out_runs_on_a_cluster_asked_for_and_says_what_it_assumes_otherwise() {
        let f = cpu_bound();
        let d = next(Stage::ScaleOut, &f, &host());
        assert!(said(&d).contains("0.9 is assumed"), "{d:?}");
        let given = PlanSpec { efficiency: Some(0.75), ..plan() };
        let d = decide(Stage::ScaleOut, &given, 7, &host(), timing(&given, &host()), &f, 1e4);
        assert!(said(&d).contains("the efficiency given, 0.75, is used"), "{d:?}");
        let galera = PlanSpec { cluster: ClusterChoice::Galera, ..plan() };
        let Decision::Run { study, why } =
            decide(Stage::ScaleOut, &galera, 7, &host(), timing(&galera, &host()), &f, 1e4)
        else {
            panic!("scale-out runs")
        };
        let Section::ScaleOut { cluster: Some(cluster) } = &study.section else { panic!("a cluster: {study:?}") };
        assert_eq!(cluster.kind, "galera");
        assert_eq!(study.scale.route, Route::EveryNode);
        assert_eq!(study.database.as_deref(), Some("plan7"), "a fresh database on the new cluster");
        assert!(why.contains("emulated"), "{why}");
        let replicas = PlanSpec { cluster: ClusterChoice::Replicas, ..plan() };
        let d = decide(Stage::ScaleOut, &replicas, 7, &host(), timing(&replicas, &host()), &f, 1e4);
        assert!(said(&d).contains("replicas take reads only"), "{d:?}");
    }

    #[test]
    fn nothing_is_built_on_a_sweep_that_measured_nothing() {
        let failed = Findings {
            sweep: Some(Found { study: 1, status: crate::status::Status::Failed, ..Default::default() }),
            ..Default::default()
        };
        for stage in [Stage::Capacity, Stage::ScaleUp, Stage::ScaleOut, Stage::Memory] {
            assert!(matches!(next(stage, &failed, &host()), Decision::Skip { .. }), "{stage:?}");
        }
    }

    #[test]
    fn without_an_objective_the_capacity_search_is_skipped_and_said_why() {
        let p = PlanSpec { latency: None, ..plan() };
        let d = decide(Stage::Capacity, &p, 7, &host(), timing(&p, &host()), &cpu_bound(), 1e4);
        assert!(said(&d).contains("no latency objective was given"), "{d:?}");
    }

    #[test]
    fn a_rising_sweep_still_gives_later_studies_its_best_level() {
        let s = fixture(&[(1, 100.0, 0.02, 20.0), (2, 200.0, 0.02, 30.0), (4, 400.0, 0.02, 40.0)], "");
        assert_eq!(s.verdict.as_ref().unwrap().shape, Shape::Rising);
        let p = peak(&s).unwrap();
        assert_eq!(p.connections(), 4);
    }

    /// A capture's plan runs the capacity search alone: there is no connection count to
    /// sweep, and the other stages measure workloads sizeup generates.
    #[test]
    fn a_captures_plan_runs_only_the_capacity_search() {
        let p = PlanSpec { workload: "/c/shop.capture".into(), latency: Some("p99<20ms".into()), ..plan() };
        assert!(p.replays() && p.check().is_ok());
        let t = timing(&p, &host());
        for stage in Stage::ALL {
            let d = decide(stage, &p, 1, &host(), t, &Findings::default(), 3600.0);
            match (stage, d) {
                (Stage::Capacity, Decision::Run { study, .. }) => {
                    let Section::Rate(r) = &study.section else { panic!("a rate study: {study:?}") };
                    assert_eq!((r.latency.as_str(), r.probe_threads), ("p99<20ms", None));
                }
                (Stage::Capacity, d) => panic!("the capacity search runs: {d:?}"),
                (_, Decision::Skip { why, for_time }) => assert!(!for_time && !why.is_empty()),
                (s, d) => panic!("{s:?} is not run for a capture: {d:?}"),
            }
        }
        let no_objective = PlanSpec { latency: None, ..p.clone() };
        assert!(no_objective.check().unwrap_err().to_string().contains("--latency"));
        let cluster = PlanSpec { cluster: ClusterChoice::Galera, ..p };
        assert!(cluster.check().unwrap_err().to_string().contains("--efficiency"));
    }
}
