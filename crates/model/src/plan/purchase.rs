//! The purchase plan from what the studies found: what one server carries (at the
//! latency objective when one was measured, else at the sweep's peak), the ways to build
//! for the target (one instance per server, the scale-up's instance count, each pool of
//! the memory study), each with its server count and range, cost and watts; the
//! cheapest is chosen (the fewest servers without cost inputs) and the others are the
//! alternatives it beat. Only finished levels within the studies' bounds count: a failed
//! or stalled level never has a figure, an over-bound one is left out by `capacity()`.

use super::{Findings, PlanSpec, StageRecord, DEFAULT_EFFICIENCY};
use crate::sizing::{self, NoPlan, Plan, ScaleOut};
use crate::status::Status;
use crate::study::capacity;
use crate::study::figures::LevelResult;
use crate::study::saturation::{self, Shape};

/// One way to build for the target.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub plan: Plan,
    /// Where its per-server figure comes from, naming the studies.
    pub basis: String,
    /// The buffer pool each server needs, when the memory study priced it.
    pub pool_bytes: Option<u64>,
    pub cost: Option<Cost>,
}

/// A candidate's cost over the years of the cost inputs, for all its servers.
#[derive(Clone, Debug, PartialEq)]
pub struct Cost {
    pub total: f64,
    /// At the ends of the servers' range (fewest, most); None where unreachable.
    pub range: (Option<f64>, Option<f64>),
    pub per_server: f64,
    /// Energy (power and cooling) was counted: the watts were known.
    pub energy: bool,
    /// Memory at the given price was counted.
    pub memory: bool,
    pub currency: String,
}

/// The answer: the plan chosen, the alternatives it beat, and what qualifies it.
#[derive(Clone, Debug)]
pub struct Purchase {
    pub chosen: Candidate,
    pub beaten: Vec<Candidate>,
    /// What one instance carries and where that figure comes from.
    pub per_instance: f64,
    pub per_instance_range: (f64, f64),
    /// The figure is the capacity at the latency objective (else the sweep's peak).
    pub at_objective: bool,
    pub unit: String,
    pub efficiency: ScaleOut,
    /// "measured on an emulated 3-node galera cluster (study 14)", "given", "assumed".
    pub efficiency_words: String,
    /// What ran out at one instance's peak, in short words ("the host's CPU"), and the
    /// sweep that found it; empty when nothing measured ran out.
    pub ran_out: Vec<&'static str>,
    /// The server's process was watched at the peak (a managed server): "nothing ran
    /// out" means something only then.
    pub watched: bool,
    pub sweep_study: i64,
    /// The host's figures at one instance's peak (who used the CPU).
    pub at_peak: Option<crate::monitor::os::OsSample>,
    /// What the reader must know beside the plan: weak figures, studies cut short,
    /// stages left out for time.
    pub caveats: Vec<String>,
}

/// A resource that ran out, in a few words, by `bottleneck`'s tag.
fn resource(tag: &str) -> &'static str {
    match tag {
        "cpu" => "the host's CPU",
        "io" => "I/O",
        "locks" => "row locks",
        "pool" => "the buffer pool",
        "log" => "the redo log buffer",
        "lag" => "the replicas' apply rate",
        "quota" => "the nodes' CPU quota",
        "client" => "the load generator",
        "others" => "CPU taken by other processes",
        _ => "a resource",
    }
}

/// One run's range widened to hold the earlier runs of the same measurement on this
/// host (`Findings::earlier`): a host's speed changes between runs by more than one
/// run's spread shows (two quiet runs minutes apart gave 640-699 and 760-845 tps).
/// Says what the earlier runs measured, or that this is the only run.
fn earlier_runs(
    found: &Findings,
    at_objective: bool,
    per_instance: f64,
    range: (f64, f64),
    unit: &str,
    weak: &mut Vec<String>,
    caveats: &mut Vec<String>,
) -> (f64, f64) {
    let runs: Vec<&super::Earlier> = found.earlier.iter().filter(|e| e.at_objective == at_objective).collect();
    if runs.is_empty() {
        caveats.push(
            "Measured in one run: a host's speed can change between runs (a virtual machine's above all), by more \
             than one run's range shows; run the same plan again and its range holds both runs."
                .into(),
        );
        return range;
    }
    let lo = runs.iter().map(|e| e.range.0).fold(range.0, f64::min).min(per_instance);
    let hi = runs.iter().map(|e| e.range.1).fold(range.1, f64::max);
    let when = |at: &str| at.get(..16).map_or(at.to_string(), |t| format!("{} UTC", t.replace('T', " ")));
    let each = runs
        .iter()
        .map(|e| format!("{}-{} (plan {}, {})", e.range.0.round(), e.range.1.round(), e.plan, when(&e.started_at)))
        .collect::<Vec<_>>()
        .join(", ");
    let apart = runs.iter().any(|e| e.range.1 < range.0 || e.range.0 > range.1);
    let said = format!(
        "earlier runs of the same measurement on this host (same workload, data and objective) gave {each} \
         {unit} a server"
    );
    if apart {
        weak.push(format!(
            "{said}: the host's speed changed between runs beyond one run's range, and the range holds every run \
             ({}-{} {unit})",
            lo.round(),
            hi.round()
        ));
    } else {
        caveats.push(format!(
            "{}{}; the range holds every run ({}-{} {unit}).",
            said[..1].to_uppercase(),
            &said[1..],
            lo.round(),
            hi.round()
        ));
    }
    (lo, hi)
}

/// The purchase plan, or why there is none.
pub fn purchase(
    plan: &PlanSpec,
    found: &Findings,
    stages: &[StageRecord],
    pool_bytes: Option<u64>,
) -> Result<Purchase, NoPlan> {
    let t = plan.target_tps;
    let mut caveats = Vec::new();
    for r in stages.iter().filter(|r| r.for_time) {
        caveats.push(format!("The {} was left out for time: {}.", r.stage.name(), after_colon(&r.why)));
    }
    // A study that did not finish is no ground for a price: the sweep and the capacity
    // search refuse the plan (below), the others' ways to build are left out.
    for stage in [super::Stage::ScaleUp, super::Stage::ScaleOut, super::Stage::Memory] {
        if let Some((f, why)) = found.get(stage).and_then(|f| Some((f, unfinished(f)?))) {
            caveats.push(format!(
                "The {} (study {}) {why}: nothing here rests on it; a plan run again measures it.",
                stage.name(),
                f.study
            ));
        }
    }
    if plan.replays() {
        return replayed(plan, found, caveats);
    }
    let sweep_found = found.sweep.as_ref().ok_or(NoPlan::NotMeasured("the plan has no sweep".into()))?;
    not_priced_unless_finished(sweep_found, "the connection sweep")?;
    let sweep = sweep_found.first().ok_or(NoPlan::NotMeasured("the sweep stored no series".into()))?;
    let peak = super::decide::peak(sweep).ok_or_else(|| {
        NoPlan::NotMeasured(if sweep.only_starved() {
            format!(
                "the connection sweep (study {}) has {}",
                sweep_found.study,
                sweep.starved_words("connections").trim_end_matches('.')
            )
        } else {
            format!(
                "the sweep (study {}) finished no level within its bounds: there is nothing to size from",
                sweep_found.study
            )
        })
    })?;
    let unit = sweep.unit.clone();
    let (efficiency, efficiency_words) = efficiency(plan, found, &mut caveats);
    // One instance's figure: the capacity at the objective, else the sweep's peak.
    let base = match (&plan.latency, finished(&found.capacity)) {
        (Some(goal), Some(c)) => at_objective(goal, c, &unit)?,
        _ => None,
    };
    let at_objective = base.is_some();
    let Base { per_instance, range, watts, mut weak, basis } = match base {
        Some(b) => b,
        None => at_peak(plan, found, stages, &peak, sweep, sweep_found.study, &unit)?,
    };
    let range = earlier_runs(found, at_objective, per_instance, range, &unit, &mut weak, &mut caveats);
    weak.dedup();
    let base_basis = basis.clone();
    let mut candidates = vec![Candidate {
        plan: sizing::plan_at("one instance per server", 1, per_instance, range, watts, t, &efficiency, weak)?,
        basis,
        pool_bytes: None,
        cost: None,
    }];
    let from = FromOne { per_instance, range, watts, t, efficiency: &efficiency, basis: &base_basis };
    // More instances per server: the scale-up's gain on one instance's figure.
    if let Some(f) = finished(&found.scale_up) {
        candidates.extend(more_instances(f, &from, &mut caveats)?);
    }
    // Other pools: each memory level's throughput against the level at the pool one
    // instance's figure was measured with (the server's own, else the nearest level).
    if let Some(f) = finished(&found.memory) {
        other_pools(f, &from, pool_bytes, &mut candidates, &mut caveats)?;
    }
    if let Some(c) = &plan.cost {
        price(&mut candidates, c, plan.memory_price, &mut caveats);
    }
    // Inputs given and not used: said, so no one thinks they shaped the plan.
    if plan.memory_price.is_some() && !candidates.iter().any(|c| c.pool_bytes.is_some()) {
        caveats.push(match stages.iter().find(|r| r.stage == super::Stage::Memory && r.study.is_none()) {
            Some(r) => format!("--memory-price was not used: the memory study was skipped ({}).", r.why),
            None => "--memory-price was not used: no memory study priced a pool.".into(),
        });
    }
    if plan.efficiency.is_some() && matches!(efficiency, ScaleOut::Measured { .. }) {
        caveats.push("--efficiency was not used: the scale-out study measured the efficiency.".into());
    }
    // The cheapest, else the fewest servers; then fewer instances, then the larger pool
    // (candidates were added in that order, and the sort keeps it among equals).
    let key = |c: &Candidate| (c.cost.as_ref().map_or(0.0, |c| c.total), c.plan.servers, c.plan.instances_per_server);
    candidates.sort_by(|a, b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
    let chosen = candidates.remove(0);
    // Where the user named the server host's node_exporter, what ran out is its host's.
    let remote = peak.level.observed.os.as_ref().is_some_and(|o| o.server_host.is_some());
    let mut ran_out: Vec<&'static str> = peak
        .ran_out
        .iter()
        .map(|f| match (f.tag, remote) {
            ("cpu", true) => "the server host's CPU (node_exporter)",
            ("io", true) => "the server host's I/O (node_exporter)",
            (tag, _) => resource(tag),
        })
        .collect();
    ran_out.dedup();
    Ok(Purchase {
        ran_out,
        watched: peak.level.observed.os.as_ref().is_some_and(|o| o.server_cores.is_some() || o.server_host.is_some()),
        sweep_study: sweep_found.study,
        at_peak: peak.level.observed.os.clone(),
        chosen,
        beaten: candidates,
        per_instance,
        per_instance_range: range,
        at_objective,
        unit,
        efficiency,
        efficiency_words,
        caveats,
    })
}

fn finished(f: &Option<super::Found>) -> Option<&super::Found> {
    f.as_ref().filter(|f| f.completed())
}

/// A replayed capture's plan: one instance's figure is the capacity search's, in
/// statements a second, the speed that met the objective (there is no sweep); what
/// ran out is the host's CPU where the objective broke, when it was watched.
fn replayed(plan: &PlanSpec, found: &Findings, mut caveats: Vec<String>) -> Result<Purchase, NoPlan> {
    let goal = plan.latency.as_deref().unwrap_or_default();
    let c = found.capacity.as_ref().ok_or(NoPlan::NotMeasured("the plan's capacity search did not run".into()))?;
    not_priced_unless_finished(c, "the capacity search")?;
    let unit = crate::unit::Unit::Statements.label().to_string();
    let Base { per_instance, range, watts, mut weak, basis } = at_objective(goal, c, &unit)?.ok_or_else(|| {
        NoPlan::NotMeasured(format!(
            "the capacity search (study {}) judged no speed either way against {goal}: measure again on a quiet host",
            c.study
        ))
    })?;
    let range = earlier_runs(found, true, per_instance, range, &unit, &mut weak, &mut caveats);
    weak.dedup();
    let (efficiency, efficiency_words) = efficiency(plan, found, &mut caveats);
    let mut candidates = vec![Candidate {
        plan: sizing::plan_at(
            "one instance per server",
            1,
            per_instance,
            range,
            watts,
            plan.target_tps,
            &efficiency,
            weak,
        )?,
        basis,
        pool_bytes: None,
        cost: None,
    }];
    if let Some(k) = &plan.cost {
        price(&mut candidates, k, plan.memory_price, &mut caveats);
    }
    if plan.memory_price.is_some() {
        caveats.push("--memory-price was not used: a replay's plan measures no other pool.".into());
    }
    let tried: Vec<(u32, capacity::Verdict)> = c.rates.iter().map(|(r, _, v)| (*r, v.clone())).collect();
    // Where the objective broke, else the highest speed that met it.
    let (lo, broke) = capacity::bracket(&tried);
    let at_peak = broke.or(lo).and_then(|r| c.rate_os.iter().find(|(x, _)| *x == r)).map(|(_, o)| o.clone());
    let watched = at_peak.as_ref().is_some_and(|o| o.server_cores.is_some() || o.server_host.is_some());
    let cpu = at_peak.as_ref().and_then(|o| match &o.server_host {
        Some(h) => (h.busy() >= crate::study::bottleneck::CPU_BUSY).then_some("the server host's CPU (node_exporter)"),
        None => o.busy().filter(|b| *b >= crate::study::bottleneck::CPU_BUSY).map(|_| resource("cpu")),
    });
    Ok(Purchase {
        ran_out: cpu.filter(|_| watched).into_iter().collect(),
        watched,
        sweep_study: c.study,
        at_peak,
        chosen: candidates.remove(0),
        beaten: candidates,
        per_instance,
        per_instance_range: range,
        at_objective: true,
        unit,
        efficiency,
        efficiency_words,
        caveats,
    })
}

/// No plan is priced from a study that did not finish (`what`: the study in words).
fn not_priced_unless_finished(f: &super::Found, what: &str) -> Result<(), NoPlan> {
    match unfinished(f) {
        None => Ok(()),
        Some(why) => Err(NoPlan::NotMeasured(format!(
            "{what} (study {}) {why}: a plan is not priced from a study that did not finish; run the plan again (on \
             a quiet host, with the server healthy)",
            f.study
        ))),
    }
}

/// How a study that did not finish ended, in words ("was interrupted (why)"); None
/// when it finished.
fn unfinished(f: &super::Found) -> Option<String> {
    (!f.completed()).then(|| {
        format!(
            "{}{}",
            match f.status {
                Status::Abandoned => "was abandoned",
                Status::Interrupted => "was interrupted",
                Status::Running => "is still running",
                Status::Completed | Status::Failed => "failed",
            },
            f.error.as_deref().map_or(String::new(), |e| format!(" ({e})"))
        )
    })
}

/// One instance's figure as measured: per-instance throughput, its range, the watts at
/// it, what makes it weak, and the sentence saying where it comes from.
struct Base {
    per_instance: f64,
    range: (f64, f64),
    watts: Option<f64>,
    weak: Vec<String>,
    basis: String,
}

/// One instance's figure at the objective `goal`, from the capacity search `c`: the
/// highest rate that met it (None when the search judged no rate either way); no plan
/// when no rate met it.
fn at_objective(goal: &str, c: &super::Found, unit: &str) -> Result<Option<Base>, NoPlan> {
    let tried: Vec<(u32, capacity::Verdict)> = c.rates.iter().map(|(r, _, v)| (*r, v.clone())).collect();
    // A replay's rates are statements a second, said as speeds of its capture.
    let replay = capacity::RateUnit::of(&c.rates);
    let tps = |r: u32| match replay {
        capacity::RateUnit::Replay(_) => capacity::rate_text(r as f64, replay),
        _ => format!("{r} tps"),
    };
    match capacity::bracket(&tried) {
        (Some(lo), hi) => {
            // Rates are transactions a second; TPC-C's target is NOPM.
            let per = c.rates.iter().find(|(r, ..)| *r == lo).and_then(|(_, f, _)| f.nopm_per_tps);
            let k = if unit == "NOPM" { per.unwrap_or(1.0) } else { 1.0 };
            let watts = c.rate_watts.iter().find(|(r, _)| *r == lo).map(|(_, w)| *w);
            let mut weak = Vec::new();
            if hi.is_none() {
                weak.push(format!(
                    "no rate above {} broke the objective: a server may carry more, and the server count is an \
                     upper bound",
                    tps(lo)
                ));
            }
            // The range's top holds a rate that met the objective in another run.
            let split = capacity::disagreed(&tried);
            if !split.is_empty() {
                weak.push(format!(
                    "{} met the objective in one run and broke it in another: the capacity varies from run to \
                     run there, and the range holds both",
                    split.iter().map(|r| tps(*r)).collect::<Vec<_>>().join(" and ")
                ));
            }
            let hi = capacity::upper(&tried).or(hi).map_or(lo, |h| h.max(lo));
            Ok(Some(Base {
                per_instance: lo as f64 * k,
                range: (lo as f64 * k, hi as f64 * k),
                watts,
                weak,
                basis: format!(
                    "study {}: the highest rate that met {goal} was {}{}",
                    c.study,
                    tps(lo),
                    match (hi > lo, replay) {
                        (true, capacity::RateUnit::Replay(_)) => format!(" ({} broke it)", tps(hi)),
                        (true, _) => format!(" ({hi} broke it)"),
                        (false, _) => String::new(),
                    }
                ),
            }))
        }
        (None, Some(lowest)) => {
            // Below the lowest failure, rates spoiled or too short to judge: the
            // objective may hold there, unmeasured.
            let unjudged: Vec<String> = c
                .rates
                .iter()
                .filter(|(r, _, v)| *r < lowest && !v.met() && !v.server_failed())
                .map(|(r, _, v)| format!("{}: {}", tps(*r), v.short()))
                .collect();
            if !unjudged.is_empty() {
                return Err(NoPlan::NotMeasured(format!(
                    "{goal} was not measured below {}, which broke it (study {}): {}; a lower rate may meet it: \
                     measure again on a quiet host, or with a longer --budget",
                    tps(lowest),
                    c.study,
                    unjudged.join("; ")
                )));
            }
            Err(NoPlan::NotMeasured(format!(
                "no rate met {goal} (study {}; the lowest tried, {}, broke it): a server like this one cannot meet \
                 the objective at the rates tried, so no number of them plans for it",
                c.study,
                tps(lowest)
            )))
        }
        (None, None) => Ok(None),
    }
}

/// One instance's figure at the sweep's peak; no plan when an objective was asked for
/// and not measured (the closed-loop peak says nothing of the latency at it).
fn at_peak(
    plan: &PlanSpec,
    found: &Findings,
    stages: &[StageRecord],
    peak: &super::decide::Peak,
    sweep: &crate::study::figures::SeriesResult,
    study: i64,
    unit: &str,
) -> Result<Base, NoPlan> {
    let l = peak.level;
    let mut weak = sizing::weak_level(l, "connections");
    if peak.verdict.shape == Shape::Rising {
        weak.push(format!(
            "the sweep was still rising at {} connections: a server may carry more, and the server count is \
             an upper bound",
            sweep.capacity().last().map_or(0, |l| l.level)
        ));
    }
    if let Some(goal) = plan.latency.as_deref() {
        let why = match (&found.capacity, stages.iter().find(|r| r.stage == super::Stage::Capacity)) {
            (Some(c), _) if !c.completed() => {
                format!("the capacity search (study {}) {}", c.study, unfinished(c).unwrap_or_default())
            }
            (Some(c), _) => format!(
                "the capacity search (study {}) judged no rate ({})",
                c.study,
                c.rates.iter().map(|(r, _, v)| format!("{r} tps: {}", v.short())).collect::<Vec<_>>().join("; ")
            ),
            (None, Some(r)) => format!("the capacity search was skipped ({})", r.why),
            (None, None) => "the capacity search did not run".into(),
        };
        return Err(NoPlan::NotMeasured(format!(
            "{goal} was not measured: {why}; a plan at an objective is not priced from the closed-loop \
             peak: give a longer --budget (or a quiet host), or leave out --latency to size at the peak"
        )));
    }
    Ok(Base {
        per_instance: peak.verdict.best_value,
        range: peak.verdict.best_range,
        watts: l.observed.os.as_ref().and_then(|o| o.watts),
        weak,
        basis: format!(
            "study {study}: the sweep's peak, {:.0} {unit} at {} connections",
            peak.verdict.best_value, peak.verdict.best
        ),
    })
}

/// One instance's figure, which the other ways to build are scaled from.
struct FromOne<'a> {
    per_instance: f64,
    range: (f64, f64),
    watts: Option<f64>,
    t: f64,
    efficiency: &'a ScaleOut,
    /// Where it comes from, in words.
    basis: &'a str,
}

/// More instances per server, from the scale-up's gain over one instance; None (and a
/// caveat) when the gain is inside the noise.
fn more_instances(f: &super::Found, from: &FromOne, caveats: &mut Vec<String>) -> Result<Option<Candidate>, NoPlan> {
    if let Some(s) = f.first() {
        if let (Some((k, ..)), Some(one)) = (sizing::best_instances(s, &[]), s.capacity().find(|l| l.level == 1)) {
            let best = s.capacity().find(|l| l.level == k).expect("best_instances names a level");
            if k > 1 && !saturation::same(best, one) && best.throughput.mean > one.throughput.mean {
                let (r, r_low, r_high) = gain(best, one);
                let mut weak = sizing::weak_level(best, "instances");
                weak.extend(sizing::weak_level(one, "instances"));
                let name = format!("{k} instances per server");
                return Ok(Some(Candidate {
                    plan: sizing::plan_at(
                        &name,
                        k,
                        from.per_instance * r,
                        (from.range.0 * r_low, from.range.1 * r_high),
                        best.observed.os.as_ref().and_then(|o| o.watts),
                        from.t,
                        from.efficiency,
                        weak,
                    )?,
                    basis: format!(
                        "study {}: {k} instances carried {:.2}x one instance ({:.0} against {:.0} {}), applied to \
                         one instance's figure ({})",
                        f.study, r, best.throughput.mean, one.throughput.mean, s.unit, from.basis
                    ),
                    pool_bytes: None,
                    cost: None,
                }));
            } else if k > 1 || s.capacity().count() > 1 {
                let most = s.capacity().last().expect("a level");
                caveats.push(format!(
                    "More instances per server did not carry more beyond the noise (study {}: {} instances {:.0} \
                     against one's {:.0} {}): one instance per server stands.",
                    f.study, most.level, most.throughput.mean, one.throughput.mean, s.unit
                ));
            }
        }
    }
    Ok(None)
}

/// Other pools, each from the memory study's level at that pool against the level at
/// the pool one instance's figure was measured with.
fn other_pools(
    f: &super::Found,
    from: &FromOne,
    pool_bytes: Option<u64>,
    candidates: &mut Vec<Candidate>,
    caveats: &mut Vec<String>,
) -> Result<(), NoPlan> {
    if let Some(s) = f.first() {
        let pools: Vec<(&LevelResult, u64)> =
            s.capacity().filter_map(|l| Some((l, l.memory.as_ref()?.pool_bytes?))).collect();
        let distance = |p: u64| pool_bytes.map_or(0.0, |h| (p as f64 / h as f64).ln().abs());
        let reference = pools.iter().min_by(|a, b| {
            distance(a.1).total_cmp(&distance(b.1)).then(b.1.cmp(&a.1)) // the larger on a tie
        });
        if let Some(&(at, at_pool)) = reference {
            if pool_bytes.is_some_and(|h| h != at_pool) {
                caveats.push(format!(
                    "The memory study (study {}) ran no level at this server's {} MiB pool: the other pools are \
                     scaled from its nearest, {} MiB.",
                    f.study,
                    pool_bytes.unwrap_or(0) >> 20,
                    at_pool >> 20
                ));
            }
            candidates[0].pool_bytes = Some(pool_bytes.unwrap_or(at_pool));
            candidates[0].plan.name =
                format!("one instance per server, {} MiB pool", pool_bytes.unwrap_or(at_pool) >> 20);
            for (l, pool) in pools.iter().filter(|(_, p)| *p != at_pool) {
                let (r, r_low, r_high) = gain(l, at);
                candidates.push(Candidate {
                    plan: sizing::plan_at(
                        &format!("one instance per server, {} MiB pool", pool >> 20),
                        1,
                        from.per_instance * r,
                        (from.range.0 * r_low, from.range.1 * r_high),
                        l.observed.os.as_ref().and_then(|o| o.watts).or(from.watts),
                        from.t,
                        from.efficiency,
                        sizing::weak_level(l, "MiB pool"),
                    )?,
                    basis: format!(
                        "study {}: a {} MiB pool carried {:.2}x the {} MiB pool's throughput, applied to one \
                         instance's figure ({})",
                        f.study,
                        pool >> 20,
                        r,
                        at_pool >> 20,
                        from.basis
                    ),
                    pool_bytes: Some(*pool),
                    cost: None,
                });
            }
        }
    }
    Ok(())
}

/// Each candidate's cost: its servers' TCO, and with a memory price their pools.
fn price(
    candidates: &mut [Candidate],
    c: &crate::cost::CostInputs,
    memory_price: Option<f64>,
    caveats: &mut Vec<String>,
) {
    for cand in candidates.iter_mut() {
        let p = &cand.plan;
        let memory = match (memory_price, cand.pool_bytes) {
            (Some(price), Some(b)) => Some(price * b as f64 / (1u64 << 30) as f64),
            _ => None,
        };
        let per_server = c.tco(p.watts.unwrap_or(0.0), p.per_server).total + memory.unwrap_or(0.0);
        let at = |n: Option<u64>| n.map(|n| n as f64 * per_server);
        cand.cost = Some(Cost {
            total: p.servers as f64 * per_server,
            range: (at(p.servers_range.0), at(p.servers_range.1)),
            per_server,
            energy: p.watts.is_some(),
            memory: memory.is_some(),
            currency: c.currency.clone(),
        });
    }
    if candidates.iter().any(|c| c.plan.watts.is_none()) {
        caveats.push(
            "Energy is not in the cost where the watts were not measured: give --watts W (a wall-meter reading) \
             or --power-model idle=W,max=W."
                .into(),
        );
    }
}

/// `a` over `b`, and its range from `a`'s (b's figure as measured).
fn gain(a: &LevelResult, b: &LevelResult) -> (f64, f64, f64) {
    let x = b.throughput.mean.max(f64::MIN_POSITIVE);
    let (lo, hi) = saturation::range(a);
    (a.throughput.mean / x, lo.max(0.0) / x, hi / x)
}

/// The scale-out efficiency the plan sizes with, and how it was obtained.
fn efficiency(plan: &PlanSpec, found: &Findings, caveats: &mut Vec<String>) -> (ScaleOut, String) {
    let given = || match plan.efficiency {
        Some(e) => (ScaleOut::Given(e), format!("{e}, as given")),
        None => (
            ScaleOut::Assumed(DEFAULT_EFFICIENCY),
            format!("{DEFAULT_EFFICIENCY}, assumed (none was measured or given)"),
        ),
    };
    let Some(f) = found.scale_out.as_ref().filter(|f| f.completed()) else { return given() };
    let Some(s) = f.series.iter().find(|s| s.efficiency.len() > 1) else {
        caveats.push(format!(
            "The scale-out study (study {}) measured no efficiency (it needs 1 node and more): {} is assumed.",
            f.study, DEFAULT_EFFICIENCY
        ));
        return given();
    };
    let pts: Vec<(f64, f64)> = s.capacity().map(|l| (l.level as f64, l.throughput.mean)).collect();
    let fit = crate::usl::fit(&pts).ok().filter(|f| f.r2 >= crate::usl::WEAK_R2).map(|f| (f.sigma, f.kappa));
    let last = s.efficiency.iter().max_by_key(|e| e.nodes).expect("two points");
    let lab = f.emulated.as_deref().map_or(String::new(), |l| format!(", {l}"));
    (
        ScaleOut::Measured { study: f.study, points: s.efficiency.clone(), fit },
        format!("measured by study {} (e({}) = {:.2}{lab})", f.study, last.nodes, last.e),
    )
}

/// The reason after "left out for time: ...; without it ...": the part a reader needs.
fn after_colon(why: &str) -> &str {
    why.split_once("; without it ").map_or(why, |(_, rest)| rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::CostInputs;
    use crate::plan::fixtures::{cpu_bound, found, lock_bound, plan};
    use crate::plan::{Found, Stage};
    use crate::study::capacity::{RateFigures, Verdict};
    use crate::study::figures::fixtures::fixture;

    fn rates(study: i64, levels: &[(u32, Verdict)]) -> Found {
        Found {
            study,
            status: Status::Completed,
            rates: levels.iter().map(|(r, v)| (*r, RateFigures::default(), v.clone())).collect(),
            ..Default::default()
        }
    }

    fn missed() -> Verdict {
        Verdict::Missed { objective: "p99".into(), ms: 80.0, below_ms: 50.0 }
    }

    fn cost() -> CostInputs {
        CostInputs {
            server_capex: 9000.0,
            devices: 0,
            device_capex: 0.0,
            power_price_kwh: 0.15,
            cooling_factor: 1.5,
            years: 4.0,
            currency: "$".into(),
        }
    }

    #[test]
    fn a_cpu_bound_server_is_sized_at_its_capacity_at_the_objective() {
        let mut f = cpu_bound();
        f.capacity = Some(rates(2, &[(900, Verdict::Met), (1800, missed()), (1350, Verdict::Met), (1575, missed())]));
        let p = purchase(&plan(), &f, &[], None).unwrap();
        assert!(p.at_objective);
        assert_eq!(p.per_instance, 1350.0);
        assert_eq!(p.per_instance_range, (1350.0, 1575.0));
        // 5000 / (1350 x 0.9) = 4.1 -> 5; at 1575, 3.5 -> 4.
        assert_eq!(p.chosen.plan.servers, 5);
        assert_eq!(p.chosen.plan.servers_range, (Some(4), Some(5)));
        assert_eq!(p.chosen.plan.instances_per_server, 1);
        assert!(p.beaten.is_empty());
        assert!(p.chosen.basis.contains("study 2") && p.chosen.basis.contains("1350 tps (1575 broke it)"));
        assert!(p.efficiency_words.contains("assumed"), "{}", p.efficiency_words);
        assert_eq!((p.ran_out.as_slice(), p.sweep_study), (&["the host's CPU"][..], 1));
    }

    /// two_runs_of_one_plan_agree_within_their_ranges (issue 61, 4): two quiet runs of
    /// one plan minutes apart gave 640-699 and 760-845 tps a server (30 and 25 servers,
    /// ranges apart); the second now holds the first's figures, and says so.
    #[test]
    fn two_runs_of_one_plan_agree_within_their_ranges() {
        let plan = PlanSpec { target_tps: 17000.0, latency: Some("p99<20ms".into()), ..plan() };
        let mut f = cpu_bound();
        f.capacity = Some(rates(2, &[(640, Verdict::Met), (699, missed()), (640, Verdict::Met), (699, Verdict::Met)]));
        // The first run: its own range, and a caveat that it is one run.
        let first = purchase(&plan, &f, &[], None).unwrap();
        assert_eq!(first.per_instance_range, (640.0, 699.0));
        assert!(first.caveats.iter().any(|c| c.starts_with("Measured in one run")), "{:?}", first.caveats);
        // 17000 / (640 x 0.9) = 29.5 -> 30; at 699, 27.02 -> 28.
        assert_eq!((first.chosen.plan.servers, first.chosen.plan.servers_range), (30, (Some(28), Some(30))));
        // With an earlier run at 760-845 tps: the range holds both, and the plan says why.
        f.earlier = vec![super::super::Earlier {
            plan: 5,
            started_at: "2026-11-27T21:22:58Z".into(),
            at_objective: true,
            range: (760.0, 845.0),
        }];
        let second = purchase(&plan, &f, &[], None).unwrap();
        assert_eq!(second.per_instance, 640.0, "the point is this run's");
        assert_eq!(second.per_instance_range, (640.0, 845.0));
        // At 845: 17000 / 760.5 = 22.4 -> 23.
        assert_eq!(second.chosen.plan.servers_range, (Some(23), Some(30)));
        let weak = second.chosen.plan.weak.join(" ");
        assert!(weak.contains("gave 760-845 (plan 5, 2026-11-27 21:22 UTC) tps a server"), "{weak}");
        assert!(weak.contains("the range holds every run (640-845 tps)"), "{weak}");
        assert!(!second.caveats.iter().any(|c| c.starts_with("Measured in one run")));
        // An earlier run sized at the sweep's peak measured something else: left out.
        f.earlier[0].at_objective = false;
        assert_eq!(purchase(&plan, &f, &[], None).unwrap().per_instance_range, (640.0, 699.0));
        // Runs that agree: a caveat, not a weakness.
        f.earlier[0] = super::super::Earlier { at_objective: true, range: (660.0, 720.0), ..f.earlier[0].clone() };
        let agree = purchase(&plan, &f, &[], None).unwrap();
        assert_eq!(agree.per_instance_range, (640.0, 720.0));
        assert!(
            agree.caveats.iter().any(|c| c.starts_with("Earlier runs of the same measurement")),
            "{:?}",
            agree.caveats
        );
    }

    /// a_stolen_rate_below_the_failure_is_no_cannot_meet (issue 61, 5): studies/10 said
    /// "no rate met p99<50ms (the lowest tried, 448 tps, broke it)" where 448 tps ran
    /// twice with the hypervisor taking 13 % and 23 % of the CPU, never judged.
    #[test]
    fn a_stolen_rate_below_the_failure_is_no_cannot_meet() {
        let mut f = cpu_bound();
        let stolen = |p: f64| Verdict::Stolen { steal_pct: p };
        f.capacity = Some(rates(2, &[(896, missed()), (448, stolen(13.0)), (448, stolen(23.0))]));
        let e = purchase(&plan(), &f, &[], None).unwrap_err();
        assert!(
            matches!(&e, NoPlan::NotMeasured(m) if m.starts_with("p99<50ms was not measured below 896 tps, which broke it (study 2): 448 tps: hypervisor took 13 % (steal)")),
            "{e}"
        );
        assert!(
            matches!(&e, NoPlan::NotMeasured(m) if m.contains("measure again on a quiet host"))
                && matches!(&e, NoPlan::NotMeasured(m) if !m.contains("cannot meet")),
            "{e}"
        );
        // Levels only too short or starved: no rate judged, said so.
        f.capacity = Some(rates(2, &[(448, stolen(13.0)), (448, stolen(23.0))]));
        let e = purchase(&plan(), &f, &[], None).unwrap_err();
        assert!(
            matches!(&e, NoPlan::NotMeasured(m) if m.contains("judged no rate"))
                && matches!(&e, NoPlan::NotMeasured(m) if m.contains("448 tps: hypervisor took 23 %")),
            "{e}"
        );
    }

    #[test]
    fn no_rate_that_met_the_objective_is_no_plan() {
        let mut f = cpu_bound();
        f.capacity = Some(rates(2, &[(900, missed()), (450, missed())]));
        let e = purchase(&plan(), &f, &[], None).unwrap_err();
        assert!(
            matches!(&e, NoPlan::NotMeasured(m) if m.contains("no rate met p99<50ms"))
                && matches!(&e, NoPlan::NotMeasured(m) if m.contains("450 tps")),
            "{e}"
        );
    }

    #[test]
    fn a_lock_bound_server_that_scales_up_is_planned_with_more_instances() {
        let mut f = lock_bound();
        f.capacity = Some(rates(2, &[(900, Verdict::Met), (1800, missed()), (1350, Verdict::Met), (1575, missed())]));
        // Two instances carried 1.6x one.
        f.scale_up = Some(found(3, fixture(&[(1, 1500.0, 0.02, 55.0), (2, 2400.0, 0.02, 90.0)], "")));
        let p = purchase(&PlanSpec { cost: Some(cost()), ..plan() }, &f, &[], None).unwrap();
        assert_eq!(p.chosen.plan.instances_per_server, 2);
        assert_eq!(p.ran_out, ["row locks"]);
        assert!((p.chosen.plan.per_server - 2160.0).abs() < 1e-6, "{}", p.chosen.plan.per_server);
        assert_eq!(p.chosen.plan.servers, 3); // 5000 / (2160 x 0.9) = 2.6
        assert_eq!(p.beaten.len(), 1);
        assert_eq!(p.beaten[0].plan.servers, 5);
        let (a, b) = (p.chosen.cost.as_ref().unwrap(), p.beaten[0].cost.as_ref().unwrap());
        assert_eq!(a.total, 27_000.0);
        assert_eq!(b.total, 45_000.0);
        assert!(!a.energy);
        assert!(p.caveats.iter().any(|c| c.contains("Energy is not in the cost")), "{:?}", p.caveats);
        assert!(p.chosen.basis.contains("study 3: 2 instances carried 1.60x"), "{}", p.chosen.basis);
        assert!(
            p.chosen.basis.ends_with("(study 2: the highest rate that met p99<50ms was 1350 tps (1575 broke it))"),
            "{}",
            p.chosen.basis
        );
    }

    #[test]
    fn a_scale_up_inside_the_noise_leaves_one_instance_per_server() {
        let mut f = lock_bound();
        f.scale_up = Some(found(3, fixture(&[(1, 1500.0, 0.02, 55.0), (2, 1530.0, 0.02, 90.0)], "")));
        let p = purchase(&PlanSpec { latency: None, ..plan() }, &f, &[], None).unwrap();
        assert_eq!(p.chosen.plan.instances_per_server, 1);
        assert!(p.beaten.is_empty());
        assert!(p.caveats.iter().any(|c| c.contains("did not carry more beyond the noise")), "{:?}", p.caveats);
        // Sized at the sweep's peak, said so by the basis.
        assert!(!p.at_objective);
        assert!(p.chosen.basis.contains("the sweep's peak, 1800 tps at 8 connections"), "{}", p.chosen.basis);
    }

    #[test]
    fn a_rising_sweep_gives_an_upper_bound() {
        let s = fixture(&[(1, 100.0, 0.02, 20.0), (2, 200.0, 0.02, 30.0), (4, 400.0, 0.02, 40.0)], "");
        let f = Findings { sweep: Some(found(1, s)), ..Default::default() };
        let p = purchase(&PlanSpec { latency: None, ..plan() }, &f, &[], None).unwrap();
        assert!(
            p.chosen.plan.weak.iter().any(|w| w.contains("still rising at 4 connections")),
            "{:?}",
            p.chosen.plan.weak
        );
    }

    /// a_plan_never_prices_from_a_failed_study_or_an_unmeasured_objective (issue 61, 5):
    /// study 10 headlined "carry 5,000 tps ... at p99<50ms" and a price while its sweep
    /// and capacity studies had failed and the objective was not measured.
    #[test]
    fn a_plan_never_prices_from_a_failed_study_or_an_unmeasured_objective() {
        let left = StageRecord {
            stage: Stage::Capacity,
            study: None,
            why: "left out for time: it would take about 200 s and 50 s of the budget were left (x); without it each \
                  server is sized at the peak"
                .into(),
            for_time: true,
            seconds: 0.0,
        };
        // A failed sweep: no plan, whatever it finished.
        let mut f = cpu_bound();
        capacity_met(&mut f);
        f.sweep.as_mut().unwrap().status = Status::Failed;
        f.sweep.as_mut().unwrap().error = Some("the server stalled".into());
        let e = purchase(&plan(), &f, &[], None).unwrap_err();
        assert!(
            matches!(&e, NoPlan::NotMeasured(m) if m.contains("the connection sweep (study 1) failed (the server stalled): a plan is not priced")),
            "{e}"
        );
        // An objective asked for and not measured (left out for time, or its study failed).
        let e = purchase(&plan(), &cpu_bound(), std::slice::from_ref(&left), None).unwrap_err();
        assert!(
            matches!(&e, NoPlan::NotMeasured(m) if m.starts_with("p99<50ms was not measured: the capacity search was skipped (left out for time")),
            "{e}"
        );
        assert!(matches!(&e, NoPlan::NotMeasured(m) if m.contains("leave out --latency")), "{e}");
        let mut f = cpu_bound();
        capacity_met(&mut f);
        f.capacity.as_mut().unwrap().status = Status::Failed;
        let e = purchase(&plan(), &f, &[], None).unwrap_err();
        assert!(matches!(&e, NoPlan::NotMeasured(m) if m.contains("the capacity search (study 2) failed")), "{e}");
        // Without an objective the peak is the figure, and a stage left out is said.
        let no_goal = PlanSpec { latency: None, ..plan() };
        let left = StageRecord { stage: Stage::Memory, ..left };
        let p = purchase(&no_goal, &cpu_bound(), &[left], None).unwrap();
        assert!(p.caveats.join(" ").contains("The memory was left out for time"), "{:?}", p.caveats);
        // A failed scale-up is no way to build.
        let mut f = lock_bound();
        capacity_met(&mut f);
        f.scale_up = Some(found(3, fixture(&[(1, 1500.0, 0.02, 55.0), (2, 2400.0, 0.02, 90.0)], "")));
        assert_eq!(purchase(&plan(), &f, &[], None).unwrap().chosen.plan.instances_per_server, 2);
        f.scale_up.as_mut().unwrap().status = Status::Failed;
        let p = purchase(&plan(), &f, &[], None).unwrap();
        assert!(p.beaten.is_empty() && p.chosen.plan.instances_per_server == 1, "{:?}", p.chosen);
        assert!(
            p.caveats.join(" ").contains("The scale-up (study 3) failed: nothing here rests on it"),
            "{:?}",
            p.caveats
        );
    }

    /// A capture's plan (`plan --replay shop.capture --growth 10`): no sweep, one
    /// instance's figure the speed that met the objective, said as a speed, and the
    /// host's CPU where it broke.
    #[test]
    fn a_captures_plan_is_sized_at_the_speed_that_met_the_objective() {
        let plan = PlanSpec {
            workload: "/c/shop.capture".into(),
            target_tps: 28580.0,
            latency: Some("p99<20ms".into()),
            growth: Some(10.0),
            ..plan()
        };
        let scale = crate::study::capacity::ReplayScale {
            captured_rate: 2858.0,
            transactions_per_statement: Some(0.05),
            made_from_schema: false,
        };
        let levels =
            [(2858, Verdict::Met), (5716, Verdict::Met), (11432, missed()), (10717, Verdict::Met), (11074, missed())];
        let mut c = rates(6, &levels);
        for (_, f, _) in &mut c.rates {
            f.replay = Some(scale);
        }
        let busy =
            crate::monitor::os::OsSample { usr: 90.0, idle: 10.0, server_cores: Some(1.1), ..Default::default() };
        c.rate_os = vec![(11074, busy)];
        let f = Findings { capacity: Some(c), ..Default::default() };
        let p = purchase(&plan, &f, &[], None).unwrap();
        assert_eq!((p.per_instance, p.per_instance_range), (10717.0, (10717.0, 11074.0)));
        assert_eq!(p.unit, "statements/s");
        // 28580 / (10717 x 0.9) = 2.96 -> 3; at 11074, 2.87 -> 3.
        assert_eq!((p.chosen.plan.servers, p.chosen.plan.servers_range), (3, (Some(3), Some(3))));
        assert!(
            p.chosen.basis.contains("was 3.75x the captured rate (10,717 statements/s, 536 transactions/s) (3.87x"),
            "{}",
            p.chosen.basis
        );
        assert_eq!((p.ran_out.as_slice(), p.sweep_study, p.watched), (&["the host's CPU"][..], 6, true));
        // No speed met it: no plan, said in speeds.
        let none = Findings { capacity: Some(rates(6, &[(2858, missed())])), ..Default::default() };
        let e = purchase(&plan, &none, &[], None).unwrap_err().to_string();
        assert!(e.contains("no rate met p99<20ms"), "{e}");
        // The search not run: no plan, and no sweep asked for.
        let e = purchase(&plan, &Findings::default(), &[], None).unwrap_err().to_string();
        assert!(e.contains("capacity search did not run"), "{e}");
    }

    fn capacity_met(f: &mut Findings) {
        f.capacity = Some(rates(2, &[(900, Verdict::Met), (1800, missed()), (1350, Verdict::Met), (1575, missed())]));
    }

    #[test]
    fn a_memory_bound_server_weighs_smaller_pools_against_more_servers() {
        use crate::study::memory::MemoryLevel;
        // Pools of 1024, 512 and 256 MiB carried 2000, 1900 and 1000 tps.
        let mut s = fixture(&[(1024, 2000.0, 0.01, 60.0), (512, 1900.0, 0.01, 60.0), (256, 1000.0, 0.01, 60.0)], "");
        for l in &mut s.levels {
            l.memory = Some(MemoryLevel {
                pool_bytes: Some((l.level as u64) << 20),
                data_bytes: Some(800 << 20),
                warmup_s: 10.0,
                settled: true,
                warmup_run: None,
                flush_method: Some("O_DIRECT".into()),
                page_cache: None,
            });
        }
        let mut f = crate::plan::fixtures::memory_bound();
        f.memory = Some(found(5, s));
        let plan = PlanSpec { latency: None, cost: Some(cost()), memory_price: Some(20_000.0), ..plan() };
        let p = purchase(&plan, &f, &[], Some(1 << 30)).unwrap();
        // One instance's 1800 tps (the sweep's peak): 4 servers with the 1 GiB pool; the
        // 512 MiB pool carries 0.95 of it, also 4 servers and half the memory; 256 MiB
        // carries half, 7 servers.
        assert_eq!(p.chosen.plan.name, "one instance per server, 512 MiB pool");
        assert_eq!(p.chosen.plan.servers, 4);
        assert_eq!(p.chosen.cost.as_ref().unwrap().total, 4.0 * (9000.0 + 10_000.0));
        let names: Vec<&str> = p.beaten.iter().map(|c| c.plan.name.as_str()).collect();
        // Cheapest first: 7 servers with a quarter of the memory beat 4 with all of it.
        assert_eq!(names, ["one instance per server, 256 MiB pool", "one instance per server, 1024 MiB pool"]);
        assert_eq!(p.beaten[0].plan.servers, 7);
        assert_eq!(p.beaten[0].cost.as_ref().unwrap().total, 7.0 * (9000.0 + 5_000.0));
        assert_eq!(p.beaten[1].cost.as_ref().unwrap().total, 4.0 * (9000.0 + 20_000.0));
        assert!(
            p.chosen.basis.contains("study 5: a 512 MiB pool carried 0.95x the 1024 MiB pool's"),
            "{}",
            p.chosen.basis
        );
        // Without a memory price the pools cost the same: the fewest servers, then the
        // larger pool, win.
        let plain = PlanSpec { memory_price: None, ..plan };
        let p = purchase(&plain, &f, &[], Some(1 << 30)).unwrap();
        assert_eq!(p.chosen.plan.name, "one instance per server, 1024 MiB pool");
        // Measured on a 256 MiB pool, one instance's figure is that pool's: the larger
        // pools carry 2x and 1.9x of it.
        let p = purchase(&plain, &f, &[], Some(256 << 20)).unwrap();
        assert_eq!(p.chosen.plan.name, "one instance per server, 1024 MiB pool");
        assert!((p.chosen.plan.per_server - 3600.0).abs() < 1e-6, "{}", p.chosen.plan.per_server);
        assert_eq!(p.chosen.plan.servers, 2);
        assert!(p.chosen.basis.contains("carried 2.00x the 256 MiB pool's"), "{}", p.chosen.basis);
        // A pool the study did not run: scaled from the nearest level, said so.
        let p = purchase(&plain, &f, &[], Some(300 << 20)).unwrap();
        assert!(
            p.caveats
                .iter()
                .any(|c| c.contains("no level at this server's 300 MiB pool") && c.contains("nearest, 256 MiB")),
            "{:?}",
            p.caveats
        );
        // the_nearest_pool_caveat_is_one_sentence: it carried a run of 26 spaces.
        assert!(p.caveats.iter().any(|c| c.contains("the other pools are scaled from its nearest")), "{:?}", p.caveats);
        assert!(p.caveats.iter().all(|c| !c.contains("  ")), "{:?}", p.caveats);
    }

    #[test]
    fn a_sweep_with_no_level_is_no_plan() {
        let f = Findings {
            sweep: Some(Found {
                study: 4,
                status: Status::Completed,
                series: vec![fixture(&[], "")],
                ..Default::default()
            }),
            ..Default::default()
        };
        let e = purchase(&plan(), &f, &[], None).unwrap_err();
        assert!(
            matches!(&e, NoPlan::NotMeasured(m) if m.contains("study 4"))
                && matches!(&e, NoPlan::NotMeasured(m) if m.contains("nothing to size from")),
            "{e}"
        );
    }
}
