//! Running a rate study (`sizeup capacity`): a short closed-loop probe gives the scale,
//! then open-loop levels at rates the pure search (`study::capacity`) picks from the
//! verdicts so far, each stored as a step as it finishes. A resumed study re-reads its
//! steps and the search continues where it stood.

use super::study::{not_capacity, prepare_sweep, Site};
use crate::exec::Ended;
use crate::runner::{self, Print};
use crate::stats::Interval;
use crate::store::{StepRow, Store};
use crate::study::capacity::{self, Objective, RateFigures, RateLevel, Search, Verdict};
use crate::study::figures::{self, StepFigures};
use crate::study::spec::{StudySpec, DEFAULT_MAX_RATE_LEVELS};
use crate::study::{probe_series, rate_levels, series_of, Series};
use crate::{report, Error};
use std::time::Instant;

/// The probe's length: enough for a throughput figure, short beside the levels.
const PROBE_SECONDS: f64 = 10.0;

/// How a rate study ended: its outcome and, when it failed, why.
pub struct Ending {
    pub outcome: Ended,
    pub failure: Option<String>,
}

/// Runs (or continues) rate study `id`'s series; prints each level and the answer.
pub fn run(site: &Site, spec: &StudySpec, id: i64, store: &Store, started: Instant) -> Result<Ending, Error> {
    let rate = spec.rate.as_ref().expect("validated: a rate study has [rate]");
    let objectives = rate.objectives().map_err(Error::Usage)?;
    let given = spec.rates().map_err(Error::Usage)?;
    let bar = report::study_bar(0);
    let say = |line: String| bar.suspend(|| crate::outln!("{line}"));
    say(format!(
        "study {id}: {} — rates {} against {}",
        spec.name,
        if given.is_empty() { "found by search".to_string() } else { given.len().to_string() + " given" },
        objectives.iter().map(Objective::label).collect::<Vec<_>>().join(" and ")
    ));
    for series in series_of(spec) {
        let ending = run_series(site, spec, &series, id, store, started, &bar, &objectives, &given)?;
        if ending.outcome != Ended::Completed {
            bar.finish_and_clear();
            return Ok(ending);
        }
    }
    bar.finish_and_clear();
    Ok(Ending { outcome: Ended::Completed, failure: None })
}

#[allow(clippy::too_many_arguments)]
fn run_series(
    site: &Site,
    spec: &StudySpec,
    series: &Series,
    id: i64,
    store: &Store,
    started: Instant,
    bar: &indicatif::ProgressBar,
    objectives: &[Objective],
    given: &[u32],
) -> Result<Ending, Error> {
    let rate = spec.rate.as_ref().expect("validated");
    let say = |line: String| bar.suspend(|| crate::outln!("{line}"));
    let row = store.load_study(id)?;
    let mut done = rate_levels(&row, &series.name);
    prepare_sweep(site, spec, series)?;
    // The most connections a level may open: the tool's limit, and the server's
    // (connections and prepared statements) less a margin for its own clients.
    let cap = connection_cap(site, spec, series)?;
    let cpus = runner::cpus();
    // The probe runs for given rates too: its latency tells a pool that caps the rate
    // from a server that slows down, and its throughput is the closed loop's figure.
    let Some((probe_tps, probe_ms)) = probe(site, spec, series, id, store, bar, cap)? else {
        return Ok(Ending { outcome: Ended::Interrupted, failure: None });
    };
    // Given rates need no first one: the search runs them in order.
    let first = if given.is_empty() { first_rate(probe_tps) } else { given.first().copied() };
    let Some(first) = first else {
        return Ok(failed("the closed-loop probe finished no transaction: there is no scale to search from".into()));
    };
    let search = Search {
        first,
        factor: 2.0,
        resolution: rate.resolution(),
        // Rates given all run unless told otherwise.
        max_levels: rate.max_levels.unwrap_or(if given.is_empty() { DEFAULT_MAX_RATE_LEVELS } else { given.len() }),
        given: given.to_vec(),
        repeat_bracket: given.is_empty(),
    };
    loop {
        let tried: Vec<(u32, Verdict)> = done.iter().map(|(r, _, v)| (*r, v.clone())).collect();
        let Some(level) = capacity::next_rate(&search, &tried) else { break };
        if crate::exec::interrupt_pending() {
            say("interrupted between steps: the finished steps are kept".into());
            return Ok(Ending { outcome: Ended::Interrupted, failure: None });
        }
        let connections =
            rate.connections.unwrap_or_else(|| capacity::default_connections(level as f64, objectives, cpus, cap));
        let label = format!("{} · {}", series.name, capacity::rate_text(level as f64, None));
        bar.set_message(format!("{label} · starting"));
        let show = |iv: &Interval| {
            bar.set_message(format!(
                "{label} · {:.0}/{:.0} s · {:.0} tps · backlog {}{}",
                iv.t,
                spec.warmup + spec.step_time,
                iv.tps,
                iv.backlog,
                if iv.warmup { " (warm-up)" } else { "" }
            ))
        };
        let req =
            spec.rate_request(&series.workload, level, connections, site.password.as_deref()).map_err(Error::Usage)?;
        let (doc, ended) = runner::measure(site.manager, site.results, req, Print::Progress(&show))?;
        let docs = [doc];
        let sick = not_capacity(&docs, ended);
        let ended = if sick.is_some() && ended == Ended::Completed { Ended::Failed } else { ended };
        let runs: Vec<i64> = docs.iter().filter_map(|d| d.id).collect();
        let figures = match ended {
            Ended::Completed => {
                let (mut f, uncounted) = figures::step_figures_or_whole(&docs, spec.sample_interval, spec.steady_last)
                    .map_err(|e| Error::Failed(format!("rate {level}: {e}")))?;
                let rf = capacity::rate_figures(&docs[0], level as f64, objectives).map_err(Error::Failed)?;
                let seconds = docs[0].summary.as_ref().map_or(spec.step_time, |s| s.seconds);
                let verdict = match (f.os.as_ref().and_then(|o| o.starved().or_else(|| o.crowded())), uncounted) {
                    // The host's leftovers are no verdict on the server.
                    (Some(s), _) => Verdict::Starved { other_cores: s.other_cores, busy_cores: s.busy_cores },
                    (None, Some(why)) => Verdict::NotCounted { why },
                    (None, None) => capacity::verdict_with_steal(
                        capacity::verdict(&rf, seconds, objectives, Some((probe_tps as f64, probe_ms))),
                        f.os.as_ref().and_then(|o| o.stolen()),
                    ),
                };
                f.rate = Some(RateLevel { figures: rf, verdict });
                Some(f)
            }
            _ => None,
        };
        store.record_step(
            id,
            &StepRow {
                series: series.name.clone(),
                level,
                // The bracket's rates run twice: each run is a step of its own (with
                // repeat 1 the second replaced the first: the_repeat_keeps_both_runs).
                repeat: done.iter().filter(|(r, ..)| *r == level).count() as u32 + 1,
                status: ended.status(),
                runs: runs.clone(),
                figures: figures.as_ref().map(|f| serde_json::to_value(f).expect("serialisable")),
            },
        )?;
        let Some(f) = figures else {
            // A lost or stalled server, or an interrupted level, is never a level.
            let why = sick
                .or_else(|| docs.iter().find_map(|d| d.error.clone()))
                .unwrap_or_else(|| ended.status().to_string());
            say(format!("{label}: {why} ({})", report::run_ids(&runs)));
            return Ok(Ending { outcome: ended, failure: Some(format!("rate {level}: {why}")) });
        };
        let level_figures = f.rate.clone().expect("set above");
        say(level_line(started, &label, &level_figures.figures, &level_figures.verdict, &f, &runs));
        done.push((level, level_figures.figures, level_figures.verdict));
    }
    // The answer is printed with the study's tables, as `study show` prints it.
    Ok(Ending { outcome: Ended::Completed, failure: None })
}

fn failed(why: String) -> Ending {
    Ending { outcome: Ended::Failed, failure: Some(why) }
}

/// Half the closed-loop probe's throughput, the search's first rate (a closed loop
/// at a few connections per CPU runs near the peak; the objective usually holds lower).
fn first_rate(probe_tps: u32) -> Option<u32> {
    (probe_tps > 0).then(|| (probe_tps / 2).max(1))
}

/// The closed-loop probe: stored as a step of its own series, reused when the study
/// is resumed. Returns its throughput (tps) and mean latency (ms); `None` when it was
/// interrupted.
fn probe(
    site: &Site,
    spec: &StudySpec,
    series: &Series,
    id: i64,
    store: &Store,
    bar: &indicatif::ProgressBar,
    cap: u32,
) -> Result<Option<(u32, f64)>, Error> {
    let name = probe_series(&series.name);
    let row = store.load_study(id)?;
    if let Some((_, f)) = crate::study::completed_steps(&row, &name).into_iter().next() {
        return Ok(Some((f.tps.round() as u32, f.latency_ms.avg)));
    }
    let threads = spec.rate.as_ref().and_then(|r| r.probe_threads).unwrap_or(4 * runner::cpus()).min(cap);
    let mut probe = spec.clone();
    probe.step_time = spec.step_time.min(PROBE_SECONDS);
    probe.warmup = spec.warmup.min(2.0);
    probe.sample_interval = spec.sample_interval.min(probe.step_time / 4.0).max(0.1);
    let req = probe.request(&series.workload, threads, site.password.as_deref()).map_err(Error::Usage)?;
    bar.set_message(format!("{} · closed-loop probe at {threads} connections", series.name));
    let (doc, ended) = runner::measure(site.manager, site.results, req, Print::Quiet)?;
    let docs = [doc];
    if let Some(why) = not_capacity(&docs, ended) {
        return Err(Error::Failed(format!("the closed-loop probe: {why}")));
    }
    if ended == Ended::Interrupted {
        return Ok(None);
    }
    if ended != Ended::Completed {
        let why = docs[0].error.clone().unwrap_or_else(|| ended.status().to_string());
        return Err(Error::Failed(format!("the closed-loop probe: {why}")));
    }
    let f = figures::step_figures(&docs, probe.sample_interval, 1.0).map_err(Error::Failed)?;
    store.record_step(
        id,
        &StepRow {
            series: name,
            level: threads,
            repeat: 1,
            status: crate::store::Status::Completed,
            runs: docs.iter().filter_map(|d| d.id).collect(),
            figures: Some(serde_json::to_value(&f).expect("serialisable")),
        },
    )?;
    bar.suspend(|| {
        crate::outln!(
            "closed-loop probe at {threads} connections: {:.0} tps (p99 {}){}",
            f.tps,
            capacity::ms_text(f.latency_ms.p99),
            if spec.rates().is_ok_and(|r| r.is_empty()) { ": the search starts at half of it" } else { "" }
        )
    });
    Ok(Some((f.tps.round() as u32, f.latency_ms.avg)))
}

/// The most connections a level may open: the tool's limit and the server's, less 10
/// for its other clients (and sizeup's own control connection).
fn connection_cap(site: &Site, spec: &StudySpec, series: &Series) -> Result<u32, Error> {
    let req = spec.request(&series.workload, 1, site.password.as_deref()).map_err(Error::Usage)?;
    let (max_connections, statements) = runner::server_limits(site.manager, &req)?;
    let per = req.workload.statements_per_connection().max(1) as u64;
    let by_statements = statements.map_or(u64::MAX, |s| s / per);
    let by_connections = max_connections.map_or(u64::MAX, |m| m.saturating_sub(10));
    Ok(by_statements.min(by_connections).min(crate::request::MAX_THREADS as u64).max(1) as u32)
}

/// One finished level, as a line that stays on screen.
fn level_line(started: Instant, label: &str, f: &RateFigures, v: &Verdict, step: &StepFigures, runs: &[i64]) -> String {
    let measured: Vec<String> =
        f.measured.iter().map(|m| format!("{} {}", m.objective, capacity::ms_text(m.ms))).collect();
    let verdict = v.short();
    let cpu = step.os.as_ref().and_then(|o| o.busy()).map_or(String::new(), |b| format!(" cpu {b:.0} %"));
    format!(
        "[{}] {label}: achieved {:.0} tps, {} connection(s) ({:.1} in the system), backlog <= {}, {}{cpu}: {verdict} {}",
        report::fmt_elapsed(started.elapsed().as_secs()),
        f.achieved,
        f.connections,
        f.in_flight_mean,
        f.max_backlog,
        measured.join(", "),
        report::run_ids(runs)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_search_starts_at_half_the_probe() {
        assert_eq!(super::first_rate(0), None);
        assert_eq!(super::first_rate(1), Some(1));
        assert_eq!(super::first_rate(2779), Some(1389));
    }
}
