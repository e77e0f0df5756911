//! Running a rate study (`sizeup capacity`): a short closed-loop probe gives the scale,
//! then open-loop levels at rates the pure search (`study::capacity`) picks from the
//! verdicts so far, each stored as a step as it finishes. A resumed study re-reads its
//! steps and the search continues where it stood.

use super::driver::{self, At, Done, Grid, Measured, Next, Place, Screen, StudyKind};
use super::study::{not_capacity, prepare_sweep, Site};
use crate::exec::Ended;
use crate::runner::{self, observe};
use crate::store::{StepRow, Store, StudyRow};
use crate::study::capacity::{self, Objective, RateFigures, RateLevel, Search, Verdict};
use crate::study::figures::{self, StepFigures};
use crate::study::spec::{RateSpec, Section, StudySpec, DEFAULT_MAX_RATE_LEVELS};
use crate::study::{probe_series, Series};
use crate::workload::replay;
use crate::{report, Error};
use sizeup_model::capture::schedule::Schedule;
use std::sync::Arc;
use std::time::Duration;

/// The probe's length: enough for a throughput figure, short beside the levels.
const PROBE_SECONDS: f64 = 10.0;

/// A rate study: the closed-loop probe begins each series, then the search picks each
/// level's rate from the verdicts so far.
pub struct Rate<'a> {
    grid: Grid,
    site: &'a Site<'a>,
    store: &'a Store,
    id: i64,
    rate: RateSpec,
    objectives: Vec<Objective>,
    given: Vec<u32>,
    /// The series begun in this process: its search, the probe's throughput (tps) and
    /// mean latency (ms), and the most connections a level may open.
    begun: Option<Begun>,
}

struct Begun {
    series: String,
    search: Search,
    probe: (u32, f64),
    cap: u32,
    /// A replayed capture's schedule, read once for all its levels.
    replay: Option<Arc<Schedule>>,
}

impl<'a> Rate<'a> {
    pub fn new(site: &'a Site<'a>, spec: &StudySpec, store: &'a Store, id: i64) -> Result<Rate<'a>, Error> {
        let Section::Rate(rate) = spec.section.clone() else {
            return Err(Error::Usage("a rate study needs its [rate] section".into()));
        };
        let objectives = rate.objectives().map_err(Error::from)?;
        let given = spec.rates().map_err(Error::from)?;
        Ok(Rate { grid: Grid::of(spec)?, site, store, id, rate, objectives, given, begun: None })
    }

    fn begun(&self, series: &Series) -> Option<&Begun> {
        self.begun.as_ref().filter(|b| b.series == series.name)
    }

    /// The search from `first`: doubling, then bracketing to the study's resolution.
    fn search(&self, first: u32) -> Search {
        Search {
            first,
            factor: 2.0,
            resolution: self.rate.resolution(),
            // Rates given all run unless told otherwise.
            max_levels: self.rate.max_levels.unwrap_or(match self.given.is_empty() {
                true => DEFAULT_MAX_RATE_LEVELS,
                false => self.given.len(),
            }),
            given: self.given.clone(),
            repeat_bracket: self.given.is_empty(),
        }
    }

    /// What the series' rates are said in: a replay's as speeds of its capture.
    fn unit(&self, series: &Series) -> capacity::RateUnit {
        match self.begun(series).and_then(|b| b.replay.as_deref()) {
            Some(s) => capacity::RateUnit::Replay(capacity::ReplayScale {
                captured_rate: s.rate(),
                transactions_per_statement: Some(s.transactions_per_statement()),
                made_from_schema: false, // a level's label; the answer reads the runs' own record
            }),
            None => capacity::RateUnit::Tps,
        }
    }

    /// A replay's series: no closed-loop probe (the capture's own rate is the scale),
    /// and its connections are its captured sessions, which the server must allow.
    fn begin_replay(&mut self, series: &Series, cap: u32) -> Result<driver::Begun, Error> {
        let spec = &self.grid.spec;
        let read_only = spec.run_options(1).map_err(Error::from)?.workload.oltp.read_only;
        let schedule = replay::load(&series.workload, read_only).map_err(Error::from)?;
        let sessions = schedule.sessions.len() as u32;
        if sessions > cap {
            return Err(Error::Usage(format!(
                "{} replays {sessions} captured sessions, one connection each, and the server allows {cap} for a \
                 level (max_connections less 10): raise max_connections on the copy",
                series.workload
            )));
        }
        let captured = schedule.rate().round().max(1.0) as u32;
        crate::outln!(
            "{}: {} statements ({} transactions) over {:.1} s in {sessions} sessions: {captured} statements/s \
             captured, the search starts there",
            series.workload,
            schedule.statements,
            schedule.transactions,
            schedule.span_us as f64 / 1e6
        );
        let search = self.search(self.given.first().copied().unwrap_or(captured));
        self.begun = Some(Begun { series: series.name.clone(), search, probe: (0, 0.0), cap, replay: Some(schedule) });
        Ok(driver::Begun::Ready)
    }
}

impl StudyKind for Rate<'_> {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn opening(&self, _series: usize) -> String {
        format!(
            "rates {} against {}",
            if self.given.is_empty() { "found by search".to_string() } else { self.given.len().to_string() + " given" },
            self.objectives.iter().map(Objective::label).collect::<Vec<_>>().join(" and ")
        )
    }

    fn steps_per_series(&self) -> Option<u64> {
        None
    }

    fn begin(&mut self, series: &Series, bar: &indicatif::ProgressBar) -> Result<driver::Begun, Error> {
        let spec = &self.grid.spec;
        prepare_sweep(self.site, spec, series)?;
        // The most connections a level may open: the tool's limit, and the server's
        // (connections and prepared statements) less a margin for its own clients.
        let cap = connection_cap(self.site, spec, series)?;
        if series.workload.ends_with(replay::SUFFIX) {
            return self.begin_replay(series, cap);
        }
        // The probe runs for given rates too: its latency tells a pool that caps the rate
        // from a server that slows down, and its throughput is the closed loop's figure.
        let Some(probe) = probe(self.site, spec, series, self.id, self.store, bar, cap)? else {
            return Ok(driver::Begun::Interrupted);
        };
        // Given rates need no first one: the search runs them in order.
        let first = if self.given.is_empty() { first_rate(probe.0) } else { self.given.first().copied() };
        let Some(first) = first else {
            return Ok(driver::Begun::Failed(
                "the closed-loop probe finished no transaction: there is no scale to search from".into(),
            ));
        };
        let search = self.search(first);
        self.begun = Some(Begun { series: series.name.clone(), search, probe, cap, replay: None });
        Ok(driver::Begun::Ready)
    }

    fn next(&self, series: &Series, done: &[Done]) -> Next {
        let Some(b) = self.begun(series) else { return Next::Begin };
        let tried: Vec<(u32, Verdict)> =
            done.iter().filter_map(|d| Some((d.level, d.figures.rate.as_ref()?.verdict.clone()))).collect();
        match capacity::next_rate(&b.search, &tried) {
            // The bracket's rates run twice: each run is a step of its own (with repeat 1
            // the second replaced the first: the_repeat_keeps_both_runs).
            Some(level) => {
                Next::Step(At { level, repeat: tried.iter().filter(|(r, _)| *r == level).count() as u32 + 1 })
            }
            None => Next::Finished { stop: None },
        }
    }

    fn what(&self, series: &Series, level: u32) -> String {
        capacity::rate_text(level as f64, self.unit(series))
    }

    fn progress(&self, _series: &Series) -> driver::Progress {
        Box::new(|iv| format!("{:.0} tps · backlog {}", iv.tps, iv.backlog))
    }

    fn step(&self, series: &Series, at: At, screen: &Screen) -> Result<Measured, Error> {
        let b = self.begun(series).ok_or_else(|| Error::Failed(format!("series {}: not begun", series.name)))?;
        let level = at.level;
        if let Some(schedule) = &b.replay {
            let speed = level as f64 / schedule.rate();
            let req = self
                .grid
                .spec
                .replay_request(&series.workload, schedule.clone(), speed, self.site.password.as_deref())
                .map_err(Error::from)?;
            let show = &observe::Progress(screen.show);
            return Ok(Measured::one(runner::measure(self.site.manager, self.site.results, req, show)?));
        }
        let connections = match self.rate.connections {
            Some(c) => c,
            None => capacity::default_connections(level as f64, &self.objectives, runner::cpus(), b.cap),
        };
        let req = self
            .grid
            .spec
            .rate_request(&series.workload, level, connections, self.site.password.as_deref())
            .map_err(Error::from)?;
        Ok(Measured::one(runner::measure(self.site.manager, self.site.results, req, &observe::Progress(screen.show))?))
    }

    fn figures(&self, series: &Series, at: At, m: &Measured) -> Result<StepFigures, Error> {
        let spec = &self.grid.spec;
        let level = at.level;
        let (probe_tps, probe_ms) = self.begun(series).map_or((0, 0.0), |b| b.probe);
        // A replay has no closed-loop probe (its own rate is the scale).
        let replayed = self.begun(series).is_some_and(|b| b.replay.is_some());
        let probe = (!replayed).then_some((probe_tps as f64, probe_ms));
        let docs = &m.docs;
        // A fast replay's intervals are shorter than the study's (a tenth of its span).
        let interval = match replayed {
            true => docs[0].config.run.interval.as_secs_f64(),
            false => spec.sample_interval,
        };
        let (mut f, uncounted) = figures::step_figures_or_whole(docs, interval, spec.steady_last)
            .map_err(|e| Error::Failed(format!("rate {level}: {e}")))?;
        let rf = capacity::rate_figures(&docs[0], level as f64, &self.objectives).map_err(Error::from)?;
        let seconds = docs[0].summary.as_ref().map_or(spec.step_time, |s| s.seconds);
        let verdict = match (f.observed.os.as_ref().and_then(|o| o.starved().or_else(|| o.crowded())), uncounted) {
            // The host's leftovers are no verdict on the server.
            (Some(s), _) => Verdict::Starved { other_cores: s.other_cores, busy_cores: s.busy_cores },
            (None, Some(why)) => Verdict::NotCounted { why },
            (None, None) => capacity::verdict_with_steal(
                capacity::verdict(&rf, seconds, &self.objectives, probe),
                f.observed.os.as_ref().and_then(|o| o.stolen()),
            ),
        };
        f.rate = Some(RateLevel { figures: rf, verdict });
        Ok(f)
    }

    fn line(&self, p: &Place, f: &StepFigures, runs: &[i64]) -> String {
        let Some(level) = &f.rate else { return report::step_line(p.step_no, 0, p.elapsed, p.label, 1, 1, f, runs) };
        level_line(p.elapsed, p.label, &level.figures, &level.verdict, f, runs)
    }

    fn answer(&self, row: &StudyRow) -> Result<(serde_json::Value, String), Error> {
        // The answer is printed with the study's tables, as `study show` prints it.
        Ok((serde_json::json!({}), report::capacity::tables(&self.grid.spec, row)))
    }
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
    let threads = spec.rate().and_then(|r| r.probe_threads).unwrap_or(4 * runner::cpus()).min(cap);
    let mut probe = spec.clone();
    probe.step_time = spec.step_time.min(PROBE_SECONDS);
    probe.warmup = spec.warmup.min(2.0);
    probe.sample_interval = spec.sample_interval.min(probe.step_time / 4.0).max(0.1);
    let req = probe.request(&series.workload, threads, site.password.as_deref()).map_err(Error::from)?;
    bar.set_message(format!("{} · closed-loop probe at {threads} connections", series.name));
    let (doc, ended) = runner::measure(site.manager, site.results, req, &observe::Quiet)?;
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
    let f = figures::step_figures(&docs, probe.sample_interval, 1.0).map_err(Error::from)?;
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
    let req = spec.request(&series.workload, 1, site.password.as_deref()).map_err(Error::from)?;
    let (max_connections, statements) = runner::server_limits(site.manager, &req)?;
    let per = req.workload.statements_per_connection().max(1) as u64;
    let by_statements = statements.map_or(u64::MAX, |s| s / per);
    let by_connections = max_connections.map_or(u64::MAX, |m| m.saturating_sub(10));
    Ok(by_statements.min(by_connections).min(crate::request::MAX_THREADS as u64).max(1) as u32)
}

/// One finished level, as a line that stays on screen.
fn level_line(
    elapsed: Duration,
    label: &str,
    f: &RateFigures,
    v: &Verdict,
    step: &StepFigures,
    runs: &[i64],
) -> String {
    let measured: Vec<String> =
        f.measured.iter().map(|m| format!("{} {}", m.objective, capacity::ms_text(m.ms))).collect();
    let verdict = v.short();
    let cpu = step.observed.os.as_ref().and_then(|o| o.busy()).map_or(String::new(), |b| format!(" cpu {b:.0} %"));
    format!(
        "[{}] {label}: achieved {:.0} {}, {} connection(s) ({:.1} in the system), backlog <= {}, {}{cpu}: {verdict} {}",
        report::fmt_elapsed(elapsed.as_secs()),
        f.achieved,
        if f.replay.is_some() { "statements/s" } else { "tps" },
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
