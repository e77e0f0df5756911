//! `sizeup model usl` (the Universal Scalability Law fitted to points or a study) and
//! `sizeup size` (servers needed, requirement checks). The arithmetic lives in
//! `crate::model`; this module reads studies and prints.

use super::{load_study, parse_ref, Context, Ref};
use crate::cli::{ModelCommand, SizeArgs};
use crate::store::Store;
use crate::study::capacity::{RateFigures, Verdict};
use crate::study::figures::SeriesResult;
use crate::study::spec::{Kind, StudySpec};
use crate::{cost, model, report, Error};

pub fn model(cx: &Context, cmd: ModelCommand) -> Result<i32, Error> {
    let ModelCommand::Usl { points, from } = cmd;
    // (series name, unit, points)
    type PointSet = (String, String, Vec<(f64, f64)>);
    let sets: Vec<PointSet> = match (points, from) {
        (Some(p), _) => {
            vec![("the points given".into(), "throughput".into(), model::usl::parse_points(&p).map_err(Error::from)?)]
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
        Some(l) => model::sizing::parse_level_objectives(l).map_err(Error::from)?,
    };
    let given_cost = a.cost.as_deref().map(cost::CostInputs::parse).transpose().map_err(Error::from)?;
    if let Some(p) = a.memory_price.filter(|p| !(p.is_finite() && *p >= 0.0)) {
        return Err(Error::Usage(format!("--memory-price {p}: give a price per GiB, 0 or more")));
    }
    let store = Store::open_read_only(&cx.results)?;
    let mut out = String::new();
    let mut g = gather(&store, a, &mut out)?;
    let e = match (given, &g.measured) {
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
    let nodes_only = g.scale_ups.is_empty() && g.measured.is_some();
    if nodes_only {
        if let Some((_, id, s)) = &g.measured {
            g.scale_ups.push((*id, s.clone(), None));
        }
    }
    if let (Some((_, from, m)), false) = (&g.measured, nodes_only) {
        for (id, s, _) in g.scale_ups.iter().filter(|(_, s, _)| s.name != m.name) {
            out += &format!(
                "warning: study {id}'s {} is sized with the efficiency study {from} measured for {}: another workload\n",
                s.name, m.name
            );
        }
    }
    let mut sizing = Sizing { a, e, objectives, given_cost, out, starved: Vec::new(), answered: false };
    sizing.scale_ups(g.scale_ups, nodes_only)?;
    sizing.rates(&g.rates)?;
    sizing.memories(g.memories)?;
    if let Some(at) = a.at_connections {
        let verdicts = model::sizing::requirement(&g.sweeps, a.target_tps, at);
        if verdicts.is_empty() {
            return Err(Error::Usage(format!("no sweep among --from measured {at} connections")));
        }
        sizing.out += &report::requirement_text(a.target_tps, at, &verdicts);
        sizing.answered = true;
    }
    sizing.finish()
}

/// A scale study's (or a scale-out study's) series, with its study and cost inputs.
type Sized = (i64, SeriesResult, Option<cost::CostInputs>);
/// A rate study's series: its study, name, levels (rate, figures, verdict), watts by
/// rate, and the study.
type RateSeries = (i64, String, Vec<(u32, RateFigures, Verdict)>, Vec<(u32, f64)>, StudySpec);

/// The studies `--from` names, sorted by what they can size, and the warnings on them.
struct Gathered {
    sweeps: Vec<SeriesResult>,
    scale_ups: Vec<Sized>,
    /// A scale-out study's measured efficiency, its study and its series.
    measured: Option<(model::sizing::ScaleOut, i64, SeriesResult)>,
    rates: Vec<RateSeries>,
    memories: Vec<Sized>,
}

fn gather(store: &Store, a: &SizeArgs, out: &mut String) -> Result<Gathered, Error> {
    let mut g =
        Gathered { sweeps: Vec::new(), scale_ups: Vec::new(), measured: None, rates: Vec::new(), memories: Vec::new() };
    for f in &a.from {
        let Ref::Study(id) = parse_ref(f)? else {
            return Err(Error::Usage(format!("--from {f}: give a study (s3 or study:3)")));
        };
        let (row, spec, series) = load_study(store, id)?;
        warn_of(id, &row, &spec, &series, out);
        // A lab node is a miniature server: a server count from it is the lab's.
        if let Some(lab) = crate::runner::plan::emulated(store, &row) {
            *out += &format!("warning: study {id} ran on {lab}: its per-server figures are a lab node's\n");
        }
        match spec.kind() {
            Kind::Scale => g.scale_ups.extend(series.into_iter().map(|s| {
                let cost = spec.cost_of(&s.name).cloned();
                (id, s, cost)
            })),
            Kind::ScaleOut => {
                // Without a scale study, one node is one server: its throughput is P.
                let measured = scale_out_efficiency(id, series, out)?;
                g.measured = g.measured.or(Some(measured));
            }
            Kind::Sweep => g.sweeps.extend(series),
            Kind::Memory => g.memories.extend(series.into_iter().map(|s| (id, s, spec.cost.clone()))),
            Kind::Rate => g.rates.extend(crate::study::series_of(&spec).into_iter().map(|s| {
                let levels = crate::study::rate_levels(&row, &s.name);
                // Watts by rate, where the steps measured them.
                let watts: Vec<(u32, f64)> = crate::study::completed_steps(&row, &s.name)
                    .into_iter()
                    .filter_map(|(l, f)| Some((l, f.observed.os?.watts?)))
                    .collect();
                (id, s.name, levels, watts, spec.clone())
            })),
        }
    }
    Ok(g)
}

/// A study cut short (failed, interrupted) still sizes from its finished levels, but
/// never as if it had found its limit; levels over its bound or starved do not count.
fn warn_of(id: i64, row: &crate::store::StudyRow, spec: &StudySpec, series: &[SeriesResult], out: &mut String) {
    for s in series {
        if let Some(why) = report::answer::unfinished(s, spec.level_name()) {
            *out += &format!("warning: study {id} is {} ({}): {why}\n", row.status, s.name);
        }
        for l in s.levels.iter().filter(|l| l.over_bound) {
            *out += &format!(
                "warning: study {id} ({}): {} {} broke the study's bound and is not counted\n",
                s.name,
                l.level,
                spec.level_name()
            );
        }
        for l in s.starved() {
            *out += &format!(
                "warning: study {id} ({}): at {} {} other programs starved the server ({}): not counted\n",
                s.name,
                l.level,
                spec.level_name(),
                l.starved.map(|st| st.words()).unwrap_or_default()
            );
        }
    }
}

/// A scale-out study's measured efficiency e(N), with its USL fit where the fit
/// describes its points.
fn scale_out_efficiency(
    id: i64,
    series: Vec<SeriesResult>,
    out: &mut String,
) -> Result<(model::sizing::ScaleOut, i64, SeriesResult), Error> {
    let s = series.into_iter().find(|s| s.efficiency.len() > 1).ok_or_else(|| {
        Error::Usage(format!("study {id} measured no scale-out efficiency (it needs 1 node and more)"))
    })?;
    let pts: Vec<(f64, f64)> = s.capacity().map(|l| (l.level as f64, l.throughput.mean)).collect();
    // A fit that does not describe its points is not extrapolated from.
    let fit = match model::usl::fit(&pts) {
        Ok(f) if f.r2 < model::usl::WEAK_R2 => {
            *out += &format!(
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
    Ok((model::sizing::ScaleOut::Measured { study: id, points: s.efficiency.clone(), fit }, id, s))
}

/// The answer as it is written: each study's plans, and what could not be sized.
struct Sizing<'a> {
    a: &'a SizeArgs,
    e: model::sizing::ScaleOut,
    objectives: Vec<crate::study::capacity::Objective>,
    given_cost: Option<cost::CostInputs>,
    out: String,
    /// What was refused because other programs starved the server: the answer when
    /// nothing else can be sized from.
    starved: Vec<String>,
    answered: bool,
}

impl Sizing<'_> {
    fn scale_ups(&mut self, mut scale_ups: Vec<Sized>, nodes_only: bool) -> Result<(), Error> {
        let (a, e) = (self.a, &self.e);
        for (id, s, _) in scale_ups.iter().filter(|(_, s, _)| s.only_starved()) {
            self.starved.push(format!("study {id} ({}): {}", s.name, s.starved_words("levels")));
        }
        scale_ups.retain(|(_, s, _)| !s.only_starved());
        for (id, s, cost) in &scale_ups {
            let plans = if nodes_only {
                model::sizing::node_per_server(s, a.target_tps, e, &self.objectives)
            } else {
                model::sizing::plans(s, a.target_tps, e, &self.objectives)
            }
            .map_err(Error::from)?;
            self.out += &report::sizing_text(
                &format!("study {id}: {}", s.name),
                &s.unit,
                a.target_tps,
                e,
                &self.objectives,
                &plans,
                self.given_cost.as_ref().or(cost.as_ref()),
            );
            self.answered = true;
        }
        Ok(())
    }

    /// Rate studies: each server carries the rate that met the objective.
    fn rates(&mut self, rates: &[RateSeries]) -> Result<(), Error> {
        let (a, e) = (self.a, &self.e);
        for (id, name, levels, watts, spec) in rates {
            let tried: Vec<(u32, Verdict)> = levels.iter().map(|(r, _, v)| (*r, v.clone())).collect();
            let (Some(lo), hi) = crate::study::capacity::bracket(&tried) else {
                let spoiled: Vec<String> =
                    tried.iter().filter(|(_, v)| v.spoiled()).map(|(r, v)| format!("{r} tps: {}", v.short())).collect();
                if spoiled.is_empty() {
                    self.out +=
                        &format!("warning: study {id} ({name}): no rate met its objective; nothing to size from\n");
                } else {
                    self.starved.push(format!("study {id} ({name}): no rate was judged ({}) ", spoiled.join("; ")));
                }
                continue;
            };
            let goal = spec.rate().map_or(String::new(), |r| r.latency.clone());
            if !self.objectives.is_empty() {
                self.out += &format!("warning: study {id} is sized at its own objective ({goal}), not --latency\n");
            }
            let watts = watts.iter().find(|(l, _)| *l == lo).map(|(_, w)| *w);
            let plan = model::sizing::rate_plan(
                &format!("capacity at {goal}"),
                lo as f64,
                hi.map(|h| h as f64),
                watts,
                a.target_tps,
                e,
            )
            .map_err(Error::from)?;
            self.out += &report::sizing_text(
                &format!(
                    "study {id}: {name}, open-loop capacity at {goal} (sustained {lo}, failed at {})",
                    hi.map_or("none tried".into(), |h| h.to_string())
                ),
                "tps",
                a.target_tps,
                e,
                &[],
                &[plan],
                self.given_cost.as_ref().or(spec.cost.as_ref()),
            );
            self.answered = true;
        }
        Ok(())
    }

    /// Memory studies: each pool's servers and, with a memory price, its cost.
    fn memories(&mut self, mut memories: Vec<Sized>) -> Result<(), Error> {
        let a = self.a;
        for (id, s, _) in memories.iter().filter(|(_, s, _)| s.only_starved()) {
            self.starved.push(format!("study {id} ({}): {}", s.name, s.starved_words("levels")));
        }
        memories.retain(|(_, s, _)| !s.only_starved());
        for (id, s, cost) in &memories {
            let plans = model::sizing::memory_plans(s, a.target_tps, &self.e).map_err(Error::from)?;
            if plans.is_empty() {
                self.out += &format!(
                    "warning: study {id} ({}): no level with its pool known finished; nothing to size\n",
                    s.name
                );
                continue;
            }
            self.out += &report::memory::sizing_text(
                &format!("study {id}: {}", s.name),
                &s.unit,
                a.target_tps,
                &plans,
                self.given_cost.as_ref().or(cost.as_ref()),
                a.memory_price,
            );
            self.answered = true;
        }
        if a.memory_price.is_some() && memories.is_empty() {
            self.out += "warning: --memory-price prices a memory study's pools: none is among --from\n";
        }
        Ok(())
    }

    /// Prints the answer; nothing to size from is an error that says why.
    fn finish(mut self) -> Result<i32, Error> {
        if !self.answered && !self.starved.is_empty() {
            crate::out!("{}", self.out);
            return Err(Error::Failed(format!(
                "nothing to size from: {}; measure again on a quiet host",
                self.starved.join("; ").trim_end().trim_end_matches('.')
            )));
        }
        for w in &self.starved {
            self.out += &format!("warning: {w}\n");
        }
        if !self.answered {
            return Err(Error::Usage(
                "nothing to size from: give a scale study (sizeup scale, studies/2-instance-scale-up.toml), \
                 a rate study (sizeup capacity), a memory study (sizeup memory), or --at-connections N with sweep studies"
                    .into(),
            ));
        }
        crate::out!("{}", self.out);
        Ok(0)
    }
}
