//! Who watches a measured run ([`super::measure`]): sizeup's own lines, sysbench's
//! layout, a study's progress bar, or nobody. The runner tells its observer what
//! happens (notes on the servers, the start, each interval, the finished run); each
//! observer decides what of it the user sees, so the runner never asks how to print.

use crate::exec::{RunResult, RunSpec};
use crate::report;
use crate::request::Output;
use crate::result::RunConfig;
use crate::stats::{self, Interval};
use crate::store::Status;
use std::sync::OnceLock;

/// What an observer is told. Every method has a silent default.
pub trait Observer: Sync {
    /// Whether a person reads this run as it goes: sizeup's notes and warnings, and the
    /// workload's own, are said on standard error.
    fn on_terminal(&self) -> bool {
        false
    }
    /// sizeup's note about the servers or the data, before the run.
    fn note(&self, line: &str) {
        if self.on_terminal() {
            eprintln!("note: {line}");
        }
    }
    /// A warning about how the run is set up (an unused TLS option).
    fn warning(&self, line: &str) {
        if self.on_terminal() {
            eprintln!("warning: {line}");
        }
    }
    /// Whether the workload says its own warnings as it starts.
    fn warns(&self) -> bool {
        self.on_terminal()
    }
    /// Whether a script's own report hook may print the interval lines (sysbench's
    /// layout calls it as sysbench does); asked before the run, which then turns the
    /// hook on.
    fn lets_scripts_report(&self) -> bool {
        false
    }
    /// The run starts measuring.
    fn start(&self, _run: &Starting) {}
    /// One interval, as it is measured (from the run's threads).
    fn interval(&self, _iv: &Interval) {}
    /// The run ended and is stored.
    fn finish(&self, _run: &Finished) {}
}

/// A run as it starts.
pub struct Starting<'a> {
    pub name: &'a str,
    /// The servers, in words.
    pub targets: &'a str,
    pub spec: &'a RunSpec,
    /// "user(s)" or "thread(s)".
    pub level_word: &'a str,
    pub run_id: i64,
    /// TPC-C's interval lines count NOPM.
    pub nopm: bool,
    /// A script's own report hook prints its interval lines (the observer let it, and
    /// the script has one).
    pub hook_prints_intervals: bool,
}

/// A finished run.
pub struct Finished<'a> {
    pub outcome: &'a RunResult,
    pub config: &'a RunConfig,
    pub spec: &'a RunSpec,
    pub name: &'a str,
    pub run_id: i64,
    pub status: Status,
}

/// Nobody watches: the caller reports (`--json -`, `--verbosity` below 3, a probe).
pub struct Quiet;

impl Observer for Quiet {}

/// A study's step: each interval goes to its progress bar, nothing else is printed.
pub struct Progress<'a>(pub &'a (dyn Fn(&Interval) + Sync));

impl Observer for Progress<'_> {
    fn interval(&self, iv: &Interval) {
        (self.0)(iv)
    }
}

/// How interval lines look, known when the run starts.
struct Shape {
    nopm: bool,
    open_loop: bool,
    step: f64,
    hooked: bool,
}

impl Shape {
    fn of(run: &Starting) -> Shape {
        Shape {
            nopm: run.nopm,
            open_loop: run.spec.rate.is_some(),
            step: run.spec.interval.as_secs_f64(),
            hooked: run.hook_prints_intervals,
        }
    }

    /// An interval's line: sysbench prints whole intervals only (the last, partial one
    /// is still stored).
    fn line(&self, iv: &Interval) -> Option<String> {
        if self.hooked || iv.duration <= self.step * 0.999 {
            return None;
        }
        let line = if self.nopm { report::tpcc_interval_line(iv) } else { report::interval_line(iv, self.open_loop) };
        Some(format!("{line}{}", report::fault_tag(iv)))
    }
}

/// Interval lines as a terminal shows them, when asked for (`--report-interval`).
struct IntervalLines {
    on: bool,
    shape: OnceLock<Shape>,
}

impl IntervalLines {
    fn new(on: bool) -> IntervalLines {
        IntervalLines { on, shape: OnceLock::new() }
    }
    fn start(&self, shape: Shape) {
        let _ = self.shape.set(shape);
    }
    fn print(&self, iv: &Interval) {
        if let Some(line) = self.shape.get().filter(|_| self.on).and_then(|s| s.line(iv)) {
            crate::outln!("{line}");
        }
    }
}

/// `sizeup run`'s own output: a start line, interval lines, the summary table.
pub struct Lines {
    lines: IntervalLines,
    histogram: bool,
}

impl Observer for Lines {
    fn on_terminal(&self) -> bool {
        true
    }
    fn start(&self, run: &Starting) {
        let spec = run.spec;
        eprintln!(
            "running {} on {} with {} {}{} (run {})",
            run.name,
            run.targets,
            spec.threads,
            run.level_word,
            spec.rate.map_or(String::new(), |r| format!(" at {r} tps open loop")),
            run.run_id
        );
        self.lines.start(Shape { hooked: false, ..Shape::of(run) });
    }
    fn interval(&self, iv: &Interval) {
        self.lines.print(iv)
    }
    fn finish(&self, run: &Finished) {
        let (all, pct_ms) = whole_histogram(run);
        crate::out!("{}", report::sysbench_summary(&run.outcome.summary, run.spec.percentile, pct_ms));
        let title = format!("{} summary (run {}, {})", run.name, run.run_id, run.status);
        crate::out!("{}", report::summary_table(&run.outcome.summary, &title));
        if let Some(d) = report::answer::data_vs_pool(run.config) {
            crate::outln!("data: {d}");
        }
        if self.histogram {
            crate::out!("\n{}", report::latency_histogram(&all));
        }
    }
}

/// A command line in sysbench's order gets sysbench's output: its header, interval
/// lines and closing block alone (`sizeup runs show` has sizeup's summary).
pub struct Sysbench {
    lines: IntervalLines,
    histogram: bool,
    rand_seed: u64,
}

impl Observer for Sysbench {
    fn on_terminal(&self) -> bool {
        true
    }
    fn lets_scripts_report(&self) -> bool {
        self.lines.on
    }
    fn start(&self, run: &Starting) {
        crate::out!("{}", report::sysbench_header(run.spec, self.lines.on, self.rand_seed));
        self.lines.start(Shape::of(run));
    }
    fn interval(&self, iv: &Interval) {
        self.lines.print(iv)
    }
    fn finish(&self, run: &Finished) {
        let (all, pct_ms) = whole_histogram(run);
        // sysbench's closing block alone, its histogram before it.
        if self.histogram {
            crate::out!("{}", report::sysbench_histogram(&all));
        }
        crate::out!("{}", report::sysbench_summary(&run.outcome.summary, run.spec.percentile, pct_ms));
        for note in &run.outcome.summary.observed.notes {
            eprintln!("note: {note}");
        }
        eprintln!(
            "sizeup: stored as run {} ({}); `sizeup runs show {}` has sizeup's summary",
            run.run_id, run.status, run.run_id
        );
    }
}

/// The run's latency over every transaction type, and its `--percentile` in ms; says
/// when the warm-up left nothing.
fn whole_histogram(run: &Finished) -> (hdrhistogram::Histogram<u64>, f64) {
    if run.outcome.summary.seconds == 0.0 && run.outcome.ended == crate::exec::Ended::Completed {
        eprintln!("warning: the warm-up covered the whole run: nothing was measured");
    }
    let mut all = stats::new_histogram();
    for (_, h) in &run.outcome.histograms {
        all.add(h).expect("same bounds");
    }
    let pct_ms = all.value_at_quantile(run.spec.percentile / 100.0) as f64 / 1000.0;
    (all, pct_ms)
}

/// The observer `sizeup run` (and sysbench's command line) asks for with its output
/// options.
pub fn for_output(output: &Output) -> Box<dyn Observer> {
    // `--json -`: standard output carries the JSON document alone.
    let json_to_stdout = output.json.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if output.quiet || json_to_stdout {
        return Box::new(Quiet);
    }
    let (interval_lines, histogram) = (output.interval_lines, output.histogram);
    let lines = IntervalLines::new(interval_lines);
    match output.sysbench {
        true => Box::new(Sysbench { lines, histogram, rand_seed: output.rand_seed }),
        false => Box::new(Lines { lines, histogram }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--json -` and `--verbosity` below 3 watch quietly; the others say notes.
    #[test]
    fn the_output_options_choose_the_observer() {
        let quiet = |o: Output| !for_output(&o).warns();
        assert!(quiet(Output { json: Some("-".into()), ..Default::default() }));
        assert!(quiet(Output { quiet: true, ..Default::default() }));
        assert!(!quiet(Output { json: Some("run.json".into()), ..Default::default() }));
        assert!(!quiet(Output { sysbench: true, ..Default::default() }));
    }

    /// Asking a script whether it reports turns its hook on: only sysbench's layout with
    /// interval lines may (sizeup's own layout printed no note and ran the hook when it
    /// asked every run).
    #[test]
    fn a_scripts_report_hook_is_called_only_for_sysbench_output() {
        let lets = |o: Output| for_output(&o).lets_scripts_report();
        assert!(!lets(Output { interval_lines: true, ..Default::default() }));
        assert!(lets(Output { sysbench: true, interval_lines: true, ..Default::default() }));
        assert!(!lets(Output { sysbench: true, interval_lines: false, ..Default::default() }));
        assert!(!lets(Output { sysbench: true, interval_lines: true, quiet: true, ..Default::default() }));
    }

    /// Whole intervals get a line; the last, partial one and a script's own report
    /// hook's do not.
    #[test]
    fn interval_lines_are_whole_intervals_the_script_does_not_print() {
        let spec = RunSpec::default();
        let run = |hooked| Starting {
            name: "w",
            targets: "t",
            spec: &spec,
            level_word: "thread(s)",
            run_id: 1,
            nopm: false,
            hook_prints_intervals: hooked,
        };
        let step = spec.interval.as_secs_f64();
        let whole = Interval { duration: step, tps: 10.0, ..Default::default() };
        let partial = Interval { duration: step / 2.0, ..whole.clone() };
        let shape = Shape::of(&run(false));
        assert!(shape.line(&whole).is_some_and(|l| l.contains("tps: 10.00")), "{:?}", shape.line(&whole));
        assert_eq!(shape.line(&partial), None);
        assert_eq!(Shape::of(&run(true)).line(&whole), None);
    }
}
