//! Studies: a series of runs that answers a capacity question. A sweep raises the load
//! on one server level by level until a stop condition; a scale study runs 1..N
//! instances at once. Every step is a run in the store, grouped under the study, so an
//! interrupted study keeps its finished steps and `study resume` continues it.
//!
//! Everything here is pure: the spec (study files), levels, the steady state, stop
//! conditions, figures, and the verdicts read back from the store. Running a study is
//! `runner::study`'s job.

pub use sizeup_model::study::{bottleneck, capacity, figures, levels, memory, saturation, steady, stop};
pub mod spec;

use crate::store::StudyRow;
use figures::{SeriesResult, StepFigures};
use spec::{Config, StudySpec};

/// One series of a study: a workload, on one server configuration.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub workload: String,
    pub config: Option<Config>,
}

pub fn series_of(spec: &StudySpec) -> Vec<Series> {
    let configs: Vec<Option<Config>> =
        if spec.configs.is_empty() { vec![None] } else { spec.configs.iter().cloned().map(Some).collect() };
    let mut out = Vec::new();
    for config in configs {
        for w in &spec.workloads {
            let name = match &config {
                Some(c) => format!("{w} @ {}", c.name),
                None => w.clone(),
            };
            out.push(Series { name, workload: w.clone(), config: config.clone() });
        }
    }
    out
}

/// Every series' verdict from what the store holds for a study.
pub fn results_of(spec: &StudySpec, row: &StudyRow) -> Result<Vec<SeriesResult>, crate::error::Invalid> {
    if spec.kind() == spec::Kind::Rate {
        return Ok(Vec::new()); // its levels are rates: `rate_levels`
    }
    let levels = spec.level_values()?;
    let conditions = stop::parse(&spec.stop_when)?;
    Ok(series_of(spec)
        .iter()
        .map(|s| {
            let steps = completed_steps(row, &s.name);
            let mut r = figures::series_result(&s.name, &levels, spec.repeat, &steps, &conditions);
            if spec.kind() == spec::Kind::ScaleOut {
                r.efficiency = figures::efficiency(&r.levels);
            }
            r
        })
        .collect())
}

/// A rate study's levels for one series, in the order run: rate, figures, verdict.
pub fn rate_levels(row: &StudyRow, series: &str) -> Vec<(u32, capacity::RateFigures, capacity::Verdict)> {
    completed_steps(row, series)
        .into_iter()
        .filter_map(|(level, f)| f.rate.map(|r| (level, r.figures, r.verdict)))
        .collect()
}

/// Programs outside the test starved the server wherever a series measured: the study
/// holds no figure of the server to answer from (its command exits non-zero).
pub fn starved_only(spec: &StudySpec, row: &StudyRow) -> bool {
    if spec.kind() == spec::Kind::Rate {
        let levels: Vec<_> = series_of(spec).iter().flat_map(|s| rate_levels(row, &s.name)).collect();
        let judged = levels.iter().any(|(_, _, v)| v.met() || v.server_failed());
        return !judged && levels.iter().any(|(_, _, v)| v.spoiled());
    }
    results_of(spec, row).is_ok_and(|all| all.iter().any(|s| s.only_starved()))
}

/// The series name of a rate study's closed-loop probe.
pub fn probe_series(series: &str) -> String {
    format!("{series} (closed-loop probe)")
}

/// A series' completed steps: level and figures.
pub fn completed_steps(row: &StudyRow, series: &str) -> Vec<(u32, StepFigures)> {
    done_of(row, series).into_iter().map(|d| (d.level, d.figures)).collect()
}

/// A finished step of a series, as the store holds it.
#[derive(Clone, Debug)]
pub struct Done {
    pub level: u32,
    pub repeat: u32,
    pub figures: StepFigures,
}

/// A series' finished steps, in the order stored.
pub fn done_of(row: &StudyRow, series: &str) -> Vec<Done> {
    row.steps
        .iter()
        .filter(|s| s.series == series && s.status == crate::store::Status::Completed)
        .filter_map(|s| {
            let figures = serde_json::from_value(s.figures.clone()?).ok()?;
            Some(Done { level: s.level, repeat: s.repeat, figures })
        })
        .collect()
}
