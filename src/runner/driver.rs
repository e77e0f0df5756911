//! One loop runs every study kind. A kind says what comes next from what is done (the
//! next level of a grid of levels and repeats, or the rate a search picks) and runs one
//! step; the loop does the rest once for all: resume from the stored steps, progress,
//! the interrupt between steps, a step that measured no capacity, recording each step
//! as it finishes, the failure, and the study's stored result and answer.
//!
//! Sweep, scale, scale-out (and each configuration's series) and memory levels are grid
//! kinds (`runner::study`, `runner::memory`); the rate search is `runner::capacity`.

use crate::exec::Ended;
use crate::result::RunDocument;
use crate::stats::Interval;
use crate::store::{StepRow, Store, StudyRow};
use crate::study::figures::{self, StepFigures};
use crate::study::memory::MemoryLevel;
use crate::study::spec::StudySpec;
pub use crate::study::{done_of, Done};
use crate::study::{series_of, stop, Series};
use crate::{report, workload, Error};
use std::path::Path;
use std::time::{Duration, Instant};

/// Which step: a level and its repeat (from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    pub level: u32,
    pub repeat: u32,
}

/// What a kind says comes next in a series.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// This step.
    Step(At),
    /// The series must begin (data, a probe) before the kind can say.
    Begin,
    /// Nothing: every step is done, or a stop condition tripped (its level and why).
    Finished { stop: Option<(u32, String)> },
}

/// How a series' beginning ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Begun {
    Ready,
    Interrupted,
    /// The series cannot run, and why (the study fails with it).
    Failed(String),
}

/// One step's measured runs and how they ended; a memory level's facts besides.
pub struct Measured {
    pub docs: Vec<RunDocument>,
    pub ended: Ended,
    pub memory: Option<MemoryLevel>,
}

impl Measured {
    pub fn one((doc, ended): (RunDocument, Ended)) -> Measured {
        Measured { docs: vec![doc], ended, memory: None }
    }
}

/// What a step sees of the screen: the bar, its label, and how to show an interval.
pub struct Screen<'a> {
    pub bar: &'a indicatif::ProgressBar,
    pub label: &'a str,
    pub show: &'a (dyn Fn(&Interval) + Sync),
}

/// An interval's figures in words, for the bar.
pub type Progress = Box<dyn Fn(&Interval) -> String + Send + Sync>;

/// Where a finished step stands, for its line.
pub struct Place<'a> {
    pub step_no: u64,
    pub total: u64,
    pub elapsed: Duration,
    pub label: &'a str,
    pub at: At,
}

/// A study's levels and stop conditions, read once from its spec: the grid the grid
/// kinds walk (a rate study's levels are searched: its grid has none).
pub struct Grid {
    pub spec: StudySpec,
    pub levels: Vec<u32>,
    pub conditions: Vec<stop::Condition>,
}

impl Grid {
    pub fn of(spec: &StudySpec) -> Result<Grid, Error> {
        Ok(Grid {
            spec: spec.clone(),
            levels: spec.level_values().map_err(Error::from)?,
            conditions: stop::parse(&spec.stop_when).map_err(Error::from)?,
        })
    }

    /// The first step of the grid not done, in order (levels, then repeats), or why
    /// the series is finished (stop conditions judged on the figures so far).
    pub fn next(&self, series: &Series, done: &[Done]) -> Next {
        let steps: Vec<(u32, StepFigures)> = done.iter().map(|d| (d.level, d.figures.clone())).collect();
        let r = figures::series_result(&series.name, &self.levels, self.spec.repeat, &steps, &self.conditions);
        if r.complete {
            return Next::Finished { stop: r.stopped_at.zip(r.stop.map(|s| s.words)) };
        }
        for &level in &self.levels {
            for repeat in 1..=self.spec.repeat {
                if !done.iter().any(|d| d.level == level && d.repeat == repeat) {
                    return Next::Step(At { level, repeat });
                }
            }
        }
        Next::Finished { stop: None }
    }
}

/// One study kind: the next step from what is done, and how to run one. The provided
/// methods are the grid's; the rate search overrides them.
pub trait StudyKind {
    fn grid(&self) -> &Grid;

    /// Runs one step: its measured runs (one per client group) and how they ended.
    fn step(&self, series: &Series, at: At, screen: &Screen) -> Result<Measured, Error>;

    /// The opening line's words after the study's name.
    fn opening(&self, series: usize) -> String {
        let g = self.grid();
        let repeats = g.spec.repeat;
        format!(
            "{series} series x {} levels{}",
            g.levels.len(),
            if repeats > 1 { format!(" x {repeats} repeats") } else { String::new() }
        )
    }

    /// Steps in each series when known before it runs (the bar's length).
    fn steps_per_series(&self) -> Option<u64> {
        let g = self.grid();
        Some(g.levels.len() as u64 * g.spec.repeat as u64)
    }

    /// Before the series' first step in this process: its data, a probe.
    fn begin(&mut self, _series: &Series, _bar: &indicatif::ProgressBar) -> Result<Begun, Error> {
        Ok(Begun::Ready)
    }

    fn next(&self, series: &Series, done: &[Done]) -> Next {
        self.grid().next(series, done)
    }

    /// A level in words ("8 threads", "2 instance(s)").
    fn what(&self, series: &Series, level: u32) -> String {
        let name = workload::kind(&series.workload).map_or("threads", |k| k.level_name());
        format!("{level} {name}")
    }

    fn label(&self, series: &Series, at: At) -> String {
        format!("{} · {}", series.name, self.what(series, at.level))
    }

    /// How the bar shows a series' intervals (called from the run's threads).
    fn progress(&self, series: &Series) -> Progress {
        match workload::kind(&series.workload) {
            Ok(k) => Box::new(move |iv| format!("{:.0} {}", k.throughput(iv), k.unit().label())),
            Err(_) => Box::new(|iv| format!("{:.0} tps", iv.tps)),
        }
    }

    /// A completed step's figures (with a memory level's facts).
    fn figures(&self, _series: &Series, at: At, m: &Measured) -> Result<StepFigures, Error> {
        let g = self.grid();
        let mut f = figures::step_figures(&m.docs, g.spec.sample_interval, g.spec.steady_last)
            .map_err(|e| Error::Failed(format!("step {}: {e}", at.level)))?;
        f.memory = m.memory.clone().map(|mut level| {
            level.page_cache = Some(crate::study::memory::page_cache(
                level.flush_method.as_deref(),
                f.observed.status.as_ref(),
                f.observed.os.as_ref(),
            ));
            level
        });
        Ok(f)
    }

    /// A finished step, as a line that stays on screen.
    fn line(&self, p: &Place, f: &StepFigures, runs: &[i64]) -> String {
        report::step_line(p.step_no, p.total, p.elapsed, p.label, p.at.repeat, self.grid().spec.repeat, f, runs)
    }

    /// The study's stored result (an object) and its tables, from what the store holds.
    fn answer(&self, row: &StudyRow) -> Result<(serde_json::Value, String), Error> {
        let spec = &self.grid().spec;
        let verdicts = crate::study::results_of(spec, row).map_err(Error::from)?;
        let text = report::study_text(spec, row, &verdicts);
        Ok((serde_json::json!({ "series": verdicts }), text))
    }
}

/// The stored study a kind runs under, and what its opening says.
pub struct Study<'a> {
    pub id: i64,
    pub store: &'a Store,
    pub results: &'a Path,
    pub resumed: bool,
    pub configuration: Option<String>,
    pub notes: Vec<String>,
}

/// Runs (or continues) every series of a study through its kind, records each step as
/// it finishes, stores the study's result and prints its answer; returns the exit code.
/// `interrupted` is asked between steps (Ctrl-C or SIGTERM ends the study there).
pub fn drive(kind: &mut dyn StudyKind, study: &Study, interrupted: &dyn Fn() -> bool) -> Result<i32, Error> {
    let spec = kind.grid().spec.clone();
    let (id, store) = (study.id, study.store);
    let all_series = series_of(&spec);
    let per_series = kind.steps_per_series();
    let total = per_series.map_or(0, |n| n * all_series.len() as u64);
    let started = Instant::now();
    let bar = report::study_bar(total);
    let say = |line: String| bar.suspend(|| crate::outln!("{line}"));
    say(format!(
        "study {id}: {} — {} ({})",
        spec.name,
        kind.opening(all_series.len()),
        if study.resumed { "resumed; its finished steps are kept" } else { "stored as it goes" }
    ));
    if let Some(c) = &study.configuration {
        say(format!("configuration: {c}"));
    }
    for n in &study.notes {
        say(format!("note: {n}"));
    }
    let mut outcome = Ended::Completed;
    let mut failure: Option<String> = None;
    'series: for (i, series) in all_series.iter().enumerate() {
        let mut done = done_of(&store.load_study(id)?, &series.name);
        if let Some(per) = per_series {
            bar.set_position(i as u64 * per + (done.len() as u64).min(per));
        }
        let mut begun = false;
        let mut ran = false;
        loop {
            let next = kind.next(series, &done);
            if let Next::Finished { stop } = next {
                if let (true, Some((level, why))) = (ran, stop) {
                    say(format!("{}: stopped at {level}: {why}", series.name));
                }
                break;
            }
            if interrupted() {
                say("interrupted between steps: the finished steps are kept".into());
                outcome = Ended::Interrupted;
                break 'series;
            }
            if !begun {
                match kind.begin(series, &bar)? {
                    Begun::Ready => {}
                    Begun::Interrupted => {
                        outcome = Ended::Interrupted;
                        break 'series;
                    }
                    Begun::Failed(why) => {
                        say(format!("{}: {why}", series.name));
                        outcome = Ended::Failed;
                        failure = Some(why);
                        break 'series;
                    }
                }
                begun = true;
                continue; // the kind may say more now
            }
            let Next::Step(at) = next else {
                return Err(Error::Failed(format!("series {}: its kind asked to begin it twice", series.name)));
            };
            ran = true;
            let label = kind.label(series, at);
            let step_no = bar.position() + 1;
            bar.set_message(format!("{label} · starting"));
            let length = spec.warmup + spec.step_time;
            let words = kind.progress(series);
            let show = |iv: &Interval| {
                bar.set_message(format!(
                    "{label} · {:.0}/{length:.0} s · {}{}",
                    iv.t,
                    words(iv),
                    if iv.warmup { " (warm-up)" } else { "" }
                ))
            };
            let measured = kind.step(series, at, &Screen { bar: &bar, label: &label, show: &show })?;
            let runs: Vec<i64> = measured.docs.iter().filter_map(|d| d.id).collect();
            let sick = super::study::not_capacity(&measured.docs, measured.ended);
            let ended = match (&sick, measured.ended) {
                (Some(_), Ended::Completed) => Ended::Failed,
                (_, e) => e,
            };
            let figures = match ended {
                Ended::Completed => Some(kind.figures(series, at, &measured)?),
                _ => None,
            };
            store.record_step(
                id,
                &StepRow {
                    series: series.name.clone(),
                    level: at.level,
                    repeat: at.repeat,
                    status: ended.status(),
                    runs: runs.clone(),
                    figures: figures.as_ref().map(|f| serde_json::to_value(f).expect("serialisable")),
                },
            )?;
            bar.inc(1);
            let Some(f) = figures else {
                // A lost or stalled server, or an interrupted step, is never a level.
                let why = sick
                    .or_else(|| measured.docs.iter().find_map(|d| d.error.clone()))
                    .unwrap_or_else(|| ended.status().to_string());
                let of = if total > 0 { format!("step {step_no} of {total}: ") } else { String::new() };
                say(format!("{of}{label}: {why} ({})", report::run_ids(&runs)));
                outcome = ended;
                failure = Some(format!("step {label}: {why}"));
                break 'series;
            };
            let place = Place { step_no, total, elapsed: started.elapsed(), label: &label, at };
            say(kind.line(&place, &f, &runs));
            done.push(Done { level: at.level, repeat: at.repeat, figures: f });
        }
        if let Some(per) = per_series {
            bar.set_position((i as u64 + 1) * per);
        }
    }
    bar.finish_and_clear();
    let row = store.load_study(id)?;
    let (mut result, text) = kind.answer(&row)?;
    if !study.notes.is_empty() {
        result["notes"] = study.notes.clone().into();
    }
    if let Some(c) = &study.configuration {
        result["configuration"] = c.clone().into();
    }
    if let Some(why) = &failure {
        result["error"] = why.clone().into();
    }
    let status = outcome.status();
    store.set_study_status(id, status, Some(&result))?;
    crate::out!("{text}");
    crate::outln!(
        "\nstudy {id} {status} in {:.0} s; stored in {} (`sizeup study show {id}`)",
        started.elapsed().as_secs_f64(),
        study.results.display()
    );
    if outcome != Ended::Completed {
        crate::outln!("finished steps are kept: `sizeup study resume {id}` continues it");
    }
    Ok(no_answer_code(&spec, &row, outcome.exit_code()))
}

/// A finished study whose every figure was starved by other programs answered nothing:
/// exit 1, as a failed one does (its answer says why).
fn no_answer_code(spec: &StudySpec, row: &StudyRow, code: i32) -> i32 {
    if code == 0 && crate::study::starved_only(spec, row) {
        crate::outln!("no answer: other programs (or the hypervisor) took the CPU the server needed at every level; measure again on a quiet host");
        return 1;
    }
    code
}

#[cfg(test)]
mod tests {
    //! The loop with a fake step (no server): order, resume, failure, stop, interrupt.
    use super::*;
    use crate::study::figures::fixtures::step;
    use std::cell::{Cell, RefCell};

    /// A kind whose steps measure `tps(level)` at once, failing at `fail_at`; with
    /// `must_begin` it cannot say its next step before the series begins.
    struct Fake {
        grid: Grid,
        tps: fn(u32) -> f64,
        fail_at: Option<u32>,
        must_begin: bool,
        ran: RefCell<Vec<(String, At)>>,
        begun: Vec<String>,
    }

    impl StudyKind for Fake {
        fn grid(&self) -> &Grid {
            &self.grid
        }
        fn begin(&mut self, series: &Series, _bar: &indicatif::ProgressBar) -> Result<Begun, Error> {
            self.begun.push(series.name.clone());
            Ok(Begun::Ready)
        }
        fn next(&self, series: &Series, done: &[Done]) -> Next {
            match self.must_begin && !self.begun.contains(&series.name) {
                true => Next::Begin,
                false => self.grid.next(series, done),
            }
        }
        fn step(&self, series: &Series, at: At, _screen: &Screen) -> Result<Measured, Error> {
            self.ran.borrow_mut().push((series.name.clone(), at));
            let ended = if self.fail_at == Some(at.level) { Ended::Failed } else { Ended::Completed };
            Ok(Measured { docs: Vec::new(), ended, memory: None })
        }
        fn figures(&self, _series: &Series, at: At, _m: &Measured) -> Result<StepFigures, Error> {
            Ok(step((self.tps)(at.level), 1.0, 50.0))
        }
    }

    fn spec(extra: &str) -> StudySpec {
        let text = format!(
            "name = 'fake'\nkind = 'sweep'\nworkloads = ['oltp_read_only', 'oltp_point_select']\n\
             levels = '1,2,4,8'\nstep_time = 1\n{extra}"
        );
        StudySpec::from_toml(&text, "test").unwrap()
    }

    fn fake(spec: &StudySpec, tps: fn(u32) -> f64, fail_at: Option<u32>) -> Fake {
        let grid = Grid::of(spec).unwrap();
        Fake { grid, tps, fail_at, must_begin: false, ran: RefCell::new(Vec::new()), begun: Vec::new() }
    }

    fn rising(level: u32) -> f64 {
        100.0 * level as f64
    }

    struct Stored {
        _dir: tempfile::TempDir,
        path: std::path::PathBuf,
        store: Store,
        id: i64,
    }

    fn stored(spec: &StudySpec) -> Stored {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        let store = Store::open(&path).unwrap();
        let id = store.begin_study(&spec.name, "sweep", &serde_json::to_value(spec).unwrap()).unwrap();
        Stored { _dir: dir, path, store, id }
    }

    fn drive_it(kind: &mut Fake, s: &Stored, resumed: bool, interrupted: &dyn Fn() -> bool) -> i32 {
        let study =
            Study { id: s.id, store: &s.store, results: &s.path, resumed, configuration: None, notes: Vec::new() };
        drive(kind, &study, interrupted).unwrap()
    }

    #[test]
    fn the_driver_runs_every_step_in_order_and_records_each() {
        let spec = spec("repeat = 2");
        let s = stored(&spec);
        let mut kind = fake(&spec, rising, None);
        assert_eq!(drive_it(&mut kind, &s, false, &|| false), 0);
        let ran = kind.ran.borrow();
        assert_eq!(ran.len(), 2 * 4 * 2, "{ran:?}");
        let first: Vec<(u32, u32)> = ran.iter().take(8).map(|(_, a)| (a.level, a.repeat)).collect();
        assert_eq!(first, [(1, 1), (1, 2), (2, 1), (2, 2), (4, 1), (4, 2), (8, 1), (8, 2)]);
        assert!(
            ran[..8].iter().all(|(s, _)| s == "oltp_read_only")
                && ran[8..].iter().all(|(s, _)| s == "oltp_point_select")
        );
        let row = s.store.load_study(s.id).unwrap();
        assert_eq!(row.status, crate::store::Status::Completed);
        assert_eq!(row.steps.iter().filter(|r| r.status == crate::store::Status::Completed).count(), 16);
        let series = &row.result.unwrap()["series"];
        assert_eq!(series.as_array().map(Vec::len), Some(2), "one verdict per series");
    }

    #[test]
    fn a_failed_step_ends_the_study_and_a_resume_runs_only_what_is_missing() {
        let spec = spec("");
        let s = stored(&spec);
        let mut kind = fake(&spec, rising, Some(4));
        assert_ne!(drive_it(&mut kind, &s, false, &|| false), 0);
        let row = s.store.load_study(s.id).unwrap();
        assert_eq!(row.status, crate::store::Status::Failed);
        let error = row.result.as_ref().unwrap()["error"].as_str().unwrap().to_string();
        assert!(error.starts_with("step oltp_read_only · 4 threads: "), "{error}");
        let states: Vec<(u32, crate::store::Status)> = row.steps.iter().map(|r| (r.level, r.status)).collect();
        use crate::store::Status::{Completed, Failed};
        assert_eq!(states, [(1, Completed), (2, Completed), (4, Failed)], "the failed step is stored, none after it");

        let mut again = fake(&spec, rising, None);
        assert_eq!(drive_it(&mut again, &s, true, &|| false), 0);
        let ran: Vec<(String, u32)> = again.ran.borrow().iter().map(|(s, a)| (s.clone(), a.level)).collect();
        assert_eq!(ran[..2], [("oltp_read_only".to_string(), 4), ("oltp_read_only".to_string(), 8)]);
        assert_eq!(ran.len(), 2 + 4, "the finished steps are not run again: {ran:?}");
        assert_eq!(s.store.load_study(s.id).unwrap().status, crate::store::Status::Completed);
    }

    #[test]
    fn a_tripped_stop_condition_ends_the_series_not_the_study() {
        fn flat(level: u32) -> f64 {
            if level == 1 {
                100.0
            } else {
                101.0
            }
        }
        let spec = spec("stop_when = 'plateau<5%'");
        let s = stored(&spec);
        let mut kind = fake(&spec, flat, None);
        assert_eq!(drive_it(&mut kind, &s, false, &|| false), 0);
        let levels: Vec<u32> = kind.ran.borrow().iter().map(|(_, a)| a.level).collect();
        assert_eq!(levels, [1, 2, 1, 2], "each series stops at its plateau (level 2), the next still runs");
        let row = s.store.load_study(s.id).unwrap();
        let series = row.result.unwrap()["series"].clone();
        assert_eq!(series[0]["stopped_at"], 2);
    }

    #[test]
    fn an_interrupt_between_steps_keeps_the_finished_ones() {
        let spec = spec("");
        let s = stored(&spec);
        let mut kind = fake(&spec, rising, None);
        let asked = Cell::new(0);
        // Asked before the series begins, then before each step: the 5th ask is after 3 steps.
        let code = drive_it(&mut kind, &s, false, &|| {
            asked.set(asked.get() + 1);
            asked.get() > 4
        });
        assert_eq!(code, crate::EXIT_INTERRUPTED);
        assert_eq!(kind.ran.borrow().len(), 3);
        let row = s.store.load_study(s.id).unwrap();
        assert_eq!(row.status, crate::store::Status::Interrupted);
        assert_eq!(row.steps.len(), 3);
    }

    #[test]
    fn a_kind_that_must_begin_is_begun_once_per_series_it_runs() {
        let spec = spec("");
        let s = stored(&spec);
        let mut kind = fake(&spec, rising, None);
        kind.must_begin = true;
        assert_eq!(drive_it(&mut kind, &s, false, &|| false), 0);
        assert_eq!(kind.begun, ["oltp_read_only", "oltp_point_select"]);
        assert_eq!(kind.ran.borrow().len(), 8);
        // A finished study begins nothing when resumed.
        let mut again = fake(&spec, rising, None);
        assert_eq!(drive_it(&mut again, &s, true, &|| false), 0);
        assert!(again.begun.is_empty() && again.ran.borrow().is_empty());
    }
}
