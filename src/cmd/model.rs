//! `sizeup model usl` (the Universal Scalability Law fitted to points or a study) and
//! `sizeup size` (servers needed, requirement checks). The arithmetic lives in
//! `crate::model`; this module reads studies and prints.

use super::{load_study, parse_ref, Context, Ref};
use crate::cli::{ModelCommand, SizeArgs};
use crate::store::Store;
use crate::study::spec::Kind;
use crate::{cost, model, report, Error};

pub fn model(cx: &Context, cmd: ModelCommand) -> Result<i32, Error> {
    let ModelCommand::Usl { points, from } = cmd;
    // (series name, unit, points)
    type PointSet = (String, String, Vec<(f64, f64)>);
    let sets: Vec<PointSet> = match (points, from) {
        (Some(p), _) => {
            vec![("the points given".into(), "throughput".into(), model::usl::parse_points(&p).map_err(Error::Usage)?)]
        }
        (None, Some(f)) => {
            let Ref::Study(id) = parse_ref(&f)? else {
                return Err(Error::Usage("--from takes a study (s3 or study:3)".into()));
            };
            let (row, spec, series) = load_study(&Store::open_read_only(&cx.results)?, id)?;
            // A fit from a study cut short is from its finished levels only: said, as `size` says it.
            for s in &series {
                if let Some(why) = report::answer::unfinished(s, spec.level_name()) {
                    eprintln!("warning: study {id} is {} ({}): {why}", row.status, s.name);
                }
            }
            series
                .into_iter()
                .map(|s| {
                    let pts = s.capacity().map(|l| (l.level as f64, l.throughput.mean)).collect();
                    (s.name, s.unit, pts)
                })
                .collect()
        }
        (None, None) => return Err(Error::Usage("give --points N:X,... or --from STUDY".into())),
    };
    let mut failed = 0;
    for (name, unit, pts) in sets {
        match model::usl::fit(&pts) {
            Ok(f) => crate::out!("{}", report::usl_text(&name, &unit, &f)),
            Err(e) => {
                failed += 1;
                crate::outln!("{name}: cannot fit: {e}");
            }
        }
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

/// Servers needed and requirement checks from stored studies.
pub fn size(cx: &Context, a: &SizeArgs) -> Result<i32, Error> {
    if !a.target_tps.is_finite() || a.target_tps <= 0.0 {
        return Err(Error::Usage(format!("--target-tps {}: give a throughput above 0, e.g. 17000", a.target_tps)));
    }
    let given: Option<f64> = match a.efficiency.as_str() {
        "measured" => None,
        v => Some(v.parse().ok().filter(|e: &f64| *e > 0.0 && *e <= 1.0).ok_or_else(|| {
            Error::Usage(format!("--efficiency {v}: give a number above 0 and at most 1, or measured"))
        })?),
    };
    let objectives = match &a.latency {
        None => Vec::new(),
        Some(l) => model::sizing::parse_level_objectives(l).map_err(Error::Usage)?,
    };
    let given_cost = a.cost.as_deref().map(cost::CostInputs::parse).transpose().map_err(Error::Usage)?;
    let store = Store::open_read_only(&cx.results)?;
    let mut out = String::new();
    let mut answered = false;
    let mut sweeps = Vec::new();
    let mut scale_ups = Vec::new();
    let mut measured = None;
    let mut rates = Vec::new();
    let mut memories = Vec::new();
    if let Some(p) = a.memory_price.filter(|p| !(p.is_finite() && *p >= 0.0)) {
        return Err(Error::Usage(format!("--memory-price {p}: give a price per GiB, 0 or more")));
    }
    for f in &a.from {
        let Ref::Study(id) = parse_ref(f)? else {
            return Err(Error::Usage(format!("--from {f}: give a study (s3 or study:3)")));
        };
        let (row, spec, series) = load_study(&store, id)?;
        // A study cut short (failed, interrupted) still sizes from its finished levels,
        // but never as if it had found its limit.
        for s in &series {
            if let Some(why) = report::answer::unfinished(s, spec.level_name()) {
                out += &format!("warning: study {id} is {} ({}): {why}\n", row.status, s.name);
            }
            for l in s.levels.iter().filter(|l| l.over_bound) {
                out += &format!(
                    "warning: study {id} ({}): {} {} broke the study's bound and is not counted\n",
                    s.name,
                    l.level,
                    spec.level_name()
                );
            }
            for l in s.starved() {
                out += &format!(
                    "warning: study {id} ({}): at {} {} other programs starved the server ({}): not counted\n",
                    s.name,
                    l.level,
                    spec.level_name(),
                    l.starved.map(|st| st.words()).unwrap_or_default()
                );
            }
        }
        // A lab node is a miniature server: a server count from it is the lab's.
        if let Some(lab) = crate::runner::plan::emulated(&store, &row) {
            out += &format!("warning: study {id} ran on {lab}: its per-server figures are a lab node's\n");
        }
        match spec.kind() {
            Kind::Scale => scale_ups.extend(series.into_iter().map(|s| {
                let cost = spec.cost_of(&s.name).cloned();
                (id, s, cost)
            })),
            Kind::ScaleOut => {
                let s = series.into_iter().find(|s| s.efficiency.len() > 1).ok_or_else(|| {
                    Error::Usage(format!("study {id} measured no scale-out efficiency (it needs 1 node and more)"))
                })?;
                let pts: Vec<(f64, f64)> = s.capacity().map(|l| (l.level as f64, l.throughput.mean)).collect();
                // A fit that does not describe its points is not extrapolated from.
                let fit = match model::usl::fit(&pts) {
                    Ok(f) if f.r2 < model::usl::WEAK_R2 => {
                        out += &format!(
                            "warning: study {id}'s USL fit has R² {:.2} (below {}): not used past the measured node \
                             counts; the last two counts' trend is\n",
                            f.r2,
                            model::usl::WEAK_R2
                        );
                        None
                    }
                    Ok(f) => Some((f.sigma, f.kappa)),
                    Err(_) => None,
                };
                // Without a scale study, one node is one server: its throughput is P.
                if measured.is_none() {
                    measured = Some((
                        model::sizing::ScaleOut::Measured { study: id, points: s.efficiency.clone(), fit },
                        id,
                        s,
                    ));
                }
            }
            Kind::Sweep => sweeps.extend(series),
            Kind::Memory => memories.extend(series.into_iter().map(|s| (id, s, spec.cost.clone()))),
            Kind::Rate => rates.extend(crate::study::series_of(&spec).into_iter().map(|s| {
                let levels = crate::study::rate_levels(&row, &s.name);
                // Watts by rate, where the steps measured them.
                let watts: Vec<(u32, f64)> = crate::study::completed_steps(&row, &s.name)
                    .into_iter()
                    .filter_map(|(l, f)| Some((l, f.os?.watts?)))
                    .collect();
                (id, s.name, levels, watts, spec.clone())
            })),
        }
    }
    let e = match (given, &measured) {
        (Some(e), _) => model::sizing::ScaleOut::Given(e),
        (None, Some((m, _, _))) => m.clone(),
        (None, None) => {
            return Err(Error::Usage(
                "--efficiency measured needs a scale-out study among --from (sizeup scale-out, \
                 studies/6-galera-scale-out.toml); or give E as a number, e.g. --efficiency 0.9"
                    .into(),
            ))
        }
    };
    // Only the scale-out study: its one-node throughput is one server's.
    let nodes_only = scale_ups.is_empty() && measured.is_some();
    if nodes_only {
        if let Some((_, id, s)) = &measured {
            scale_ups.push((*id, s.clone(), None));
        }
    }
    if let (Some((_, from, m)), false) = (&measured, nodes_only) {
        for (id, s, _) in scale_ups.iter().filter(|(_, s, _)| s.name != m.name) {
            out += &format!(
                "warning: study {id}'s {} is sized with the efficiency study {from} measured for {}: another workload\n",
                s.name, m.name
            );
        }
    }
    // What was refused because other programs starved the server: the answer when
    // nothing else can be sized from.
    let mut starved: Vec<String> = Vec::new();
    for (id, s, _) in scale_ups.iter().filter(|(_, s, _)| s.only_starved()) {
        starved.push(format!("study {id} ({}): {}", s.name, s.starved_words("levels")));
    }
    scale_ups.retain(|(_, s, _)| !s.only_starved());
    for (id, s, cost) in &scale_ups {
        let plans = if nodes_only {
            model::sizing::node_per_server(s, a.target_tps, &e, &objectives)
        } else {
            model::sizing::plans(s, a.target_tps, &e, &objectives)
        }
        .map_err(Error::Failed)?;
        out += &report::sizing_text(
            &format!("study {id}: {}", s.name),
            &s.unit,
            a.target_tps,
            &e,
            &objectives,
            &plans,
            given_cost.as_ref().or(cost.as_ref()),
        );
        answered = true;
    }
    // Rate studies: each server carries the rate that met the objective.
    for (id, name, levels, watts, spec) in &rates {
        let tried: Vec<(u32, crate::study::capacity::Verdict)> =
            levels.iter().map(|(r, _, v)| (*r, v.clone())).collect();
        let (Some(lo), hi) = crate::study::capacity::bracket(&tried) else {
            let spoiled: Vec<String> =
                tried.iter().filter(|(_, v)| v.spoiled()).map(|(r, v)| format!("{r} tps: {}", v.short())).collect();
            if spoiled.is_empty() {
                out += &format!("warning: study {id} ({name}): no rate met its objective; nothing to size from\n");
            } else {
                starved.push(format!("study {id} ({name}): no rate was judged ({}) ", spoiled.join("; ")));
            }
            continue;
        };
        let goal = spec.rate().map_or(String::new(), |r| r.latency.clone());
        if !objectives.is_empty() {
            out += &format!("warning: study {id} is sized at its own objective ({goal}), not --latency\n");
        }
        let watts = watts.iter().find(|(l, _)| *l == lo).map(|(_, w)| *w);
        let plan = model::sizing::rate_plan(
            &format!("capacity at {goal}"),
            lo as f64,
            hi.map(|h| h as f64),
            watts,
            a.target_tps,
            &e,
        )
        .map_err(Error::Failed)?;
        out += &report::sizing_text(
            &format!(
                "study {id}: {name}, open-loop capacity at {goal} (sustained {lo}, failed at {})",
                hi.map_or("none tried".into(), |h| h.to_string())
            ),
            "tps",
            a.target_tps,
            &e,
            &[],
            &[plan],
            given_cost.as_ref().or(spec.cost.as_ref()),
        );
        answered = true;
    }
    // Memory studies: each pool's servers and, with a memory price, its cost.
    for (id, s, _) in memories.iter().filter(|(_, s, _)| s.only_starved()) {
        starved.push(format!("study {id} ({}): {}", s.name, s.starved_words("levels")));
    }
    memories.retain(|(_, s, _)| !s.only_starved());
    for (id, s, cost) in &memories {
        let plans = model::sizing::memory_plans(s, a.target_tps, &e).map_err(Error::Failed)?;
        if plans.is_empty() {
            out +=
                &format!("warning: study {id} ({}): no level with its pool known finished; nothing to size\n", s.name);
            continue;
        }
        out += &report::memory::sizing_text(
            &format!("study {id}: {}", s.name),
            &s.unit,
            a.target_tps,
            &plans,
            given_cost.as_ref().or(cost.as_ref()),
            a.memory_price,
        );
        answered = true;
    }
    if a.memory_price.is_some() && memories.is_empty() {
        out += "warning: --memory-price prices a memory study's pools: none is among --from\n";
    }
    if let Some(at) = a.at_connections {
        let verdicts = model::sizing::requirement(&sweeps, a.target_tps, at);
        if verdicts.is_empty() {
            return Err(Error::Usage(format!("no sweep among --from measured {at} connections")));
        }
        out += &report::requirement_text(a.target_tps, at, &verdicts);
        answered = true;
    }
    if !answered && !starved.is_empty() {
        crate::out!("{out}");
        return Err(Error::Failed(format!(
            "nothing to size from: {}; measure again on a quiet host",
            starved.join("; ").trim_end().trim_end_matches('.')
        )));
    }
    for w in &starved {
        out += &format!("warning: {w}\n");
    }
    if !answered {
        return Err(Error::Usage(
            "nothing to size from: give a scale study (sizeup scale, studies/2-instance-scale-up.toml), \
             a rate study (sizeup capacity), a memory study (sizeup memory), or --at-connections N with sweep studies"
                .into(),
        ));
    }
    crate::out!("{out}");
    Ok(0)
}
