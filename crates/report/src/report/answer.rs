//! The answer in words, and the warnings a reviewer needs beside the figures: what a
//! study or run found (peak, saturation level, what limited it), and where the data is
//! weak (spread, few samples, a non-durable server, modelled watts, the load generator
//! as the bottleneck). Pure: figures in, sentences out, so tests check the numbers.

use crate::result::RunDocument;
use crate::study::bottleneck;
use crate::study::figures::{LevelResult, SeriesResult};
use crate::study::saturation::{self, Saturation, Shape};
use crate::study::spec::{Kind, StudySpec};
use crate::study::stop::{StopReason, Tripped};

/// A level's samples vary too much to quote one figure without its spread (CV above this).
pub use crate::study::saturation::HIGH_CV;
/// Fewer interval samples than this make a median that a single hiccup can move.
pub const FEW_SAMPLES: usize = 5;

/// What limited a series, in words, from the stop condition it met.
pub fn limit(stop: &StopReason) -> &'static str {
    match stop.tripped {
        Tripped::Cpu => "the limit was CPU",
        Tripped::Latency => "the limit was the latency bound",
        Tripped::Plateau => "throughput stopped growing (a plateau)",
        Tripped::Kink => "response time bent upward (a kink: added load became waiting)",
        Tripped::Lag => "the limit was replication lag",
        Tripped::Other => "a stop condition was met",
    }
}

fn fmt(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// "1 node", "4 nodes": the level word in the singular for one.
fn count(n: u32, what: &str) -> String {
    match (n, what.strip_suffix('s')) {
        (1, Some(one)) => format!("1 {one}"),
        _ => format!("{n} {what}"),
    }
}

/// "2-4 threads", "1 instance": a peak region in words.
fn region(s: &SeriesResult, r: &[u32], what: &str) -> String {
    let all: Vec<u32> = s.levels.iter().map(|l| l.level).collect();
    match r {
        [one] => count(*one, what),
        _ => format!("{} {what}", saturation::levels_text(r, &all)),
    }
}

/// "995 tps (range 940-1050)": a figure with its range.
fn with_range(v: &Saturation, unit: &str) -> String {
    format!("{} {unit} (range {}-{})", fmt(v.best_value), fmt(v.best_range.0.max(0.0)), fmt(v.best_range.1))
}

/// What ran out at a level, or what was checked when nothing did.
pub fn ran_out(l: &LevelResult) -> String {
    let f = bottleneck::findings(l);
    if f.is_empty() {
        format!("nothing measured ran out ({})", bottleneck::headroom(l))
    } else {
        format!("{} ran out", f.iter().map(|f| f.words.as_str()).collect::<Vec<_>>().join("; "))
    }
}

/// The answer for one series of a study: where it saturates (from the data), its peak
/// with its range, what ran out there, what happens beyond it, and the stop condition
/// that ended the study if one did. `label` says what the figures are of (the
/// series' workload, or more: see `StudySpec::series_label`).
pub fn series(s: &SeriesResult, kind: Kind, what: &str, label: &str) -> String {
    let (Some(v), Some(_)) = (&s.verdict, s.peak) else {
        if s.only_starved() {
            return format!("{label}: {}", starved_words(s, what));
        }
        if let (Some(l), Some(why)) = (s.levels.first(), &s.stop) {
            return format!(
                "{label}: already its first level ({}) broke the study's bound ({why}), so there is no capacity \
                 figure within it: try fewer {what}.",
                count(l.level, what)
            );
        }
        return format!("{label}: no level finished, so there is no answer yet.");
    };
    let level = |n: u32| s.levels.iter().find(|l| l.level == n);
    let mut out = match v.shape {
        _ if !s.complete => format!(
            "{label} carried {} at {} so far; {}.",
            with_range(v, &s.unit),
            count(v.best, what),
            unfinished(s, what).expect("unfinished")
        ),
        Shape::OneLevel => format!(
            "{label} carried {} at {}; one level says nothing of where it saturates.",
            with_range(v, &s.unit),
            count(v.best, what)
        ),
        Shape::Rising => {
            let last = s.capacity().last().expect("a level");
            let before = s.capacity().rev().nth(1).expect("two levels");
            let gain = saturation::change(before, last);
            let mut t = format!(
                "{label} was still rising at {}: {}, {:+.0} % over {} (beyond the noise)",
                count(last.level, what),
                with_range(v, &s.unit),
                gain.pct,
                count(before.level, what)
            );
            match (&s.stop, s.stopped_at) {
                (Some(why), Some(at)) => {
                    t += &format!("; the study's stop condition ended it at {} ({why})", count(at, what));
                    t += &match s.saturation {
                        Some(sat) => format!(", which puts its saturation at {}", count(sat, what)),
                        None => ", which puts it saturated from the first level".into(),
                    };
                }
                _ => t += ", so its limit lies beyond the levels tried",
            }
            // What ran out at the last level, or what was checked there: the headroom a
            // rising series still had (a_rising_series_says_what_was_checked).
            t += &format!("; at {} {}", count(last.level, what), ran_out(last));
            t + "."
        }
        Shape::Flat | Shape::Plateau | Shape::Decline => {
            let sat = v.saturation.expect("saturated");
            let mut t = format!(
                "{label} peaked at {}: {} at {}",
                region(s, &v.region, what),
                with_range(v, &s.unit),
                count(v.best, what)
            );
            let others: Vec<u32> = v.region.iter().copied().filter(|l| *l != v.best).collect();
            if !others.is_empty() {
                t += &format!(" ({} within the noise of it)", region(s, &others, what));
            }
            let first = s.capacity().next().map(|l| l.level);
            t += &match v.shape {
                _ if first == Some(sat) => format!("; it was saturated from the first level ({})", count(sat, what)),
                _ => format!("; it saturated at {}", count(sat, what)),
            };
            if let Some(l) = level(sat) {
                t += &format!(", where {}", ran_out(l));
            }
            match (v.shape, v.decline) {
                (Shape::Decline, Some(d)) => {
                    t += &format!(
                        "; beyond it throughput fell: {:+.0} % at {} ({} {}; {:+.0} to {:+.0} %)",
                        d.pct,
                        count(d.at, what),
                        fmt(d.value),
                        s.unit,
                        d.low,
                        d.high.min(0.0)
                    )
                }
                (Shape::Flat, _) => t += &format!("; more {what} gained nothing"),
                _ => t += &format!("; more {what} gained nothing beyond the noise"),
            }
            if let (Some(why), Some(at)) = (&s.stop, s.stopped_at) {
                t += &format!(". The study stopped at {}: {} ({why})", count(at, what), limit(why));
            }
            t + "."
        }
    };
    if let Some(l) = s.levels.iter().find(|l| l.over_bound) {
        out += &format!(
            " The figures at {} broke the study's bound and are not counted as capacity.",
            count(l.level, what)
        );
    }
    if let Some(r) = recommendation(s, kind, what) {
        out += &format!(" {r}");
    }
    if let Some(note) = load_generator(s) {
        out += &format!(" {note}");
    }
    let starved: Vec<String> = s.starved().map(|l| l.level.to_string()).collect();
    if !starved.is_empty() {
        out += &format!(
            " At {} {what} other programs took a large share of the saturated host: those figures are not the \
             server's capacity, and nothing above rests on them; measure again on a quiet host.",
            starved.join(", ")
        );
    }
    let weak = weak_levels(s, what);
    if !weak.is_empty() {
        out += &format!(" Weak data: {}.", weak.join("; "));
    }
    out
}

/// Why a series whose every level was starved has no answer, naming the worst level.
pub fn starved_words(s: &SeriesResult, what: &str) -> String {
    s.starved_words(what)
}

/// What to run at, per study kind, from the verdict: a sweep names the connections, a
/// scale study the instances per server, a scale-out study e(N) with its range.
pub fn recommendation(s: &SeriesResult, kind: Kind, what: &str) -> Option<String> {
    let v = s.verdict.as_ref()?;
    if !s.complete || v.shape == Shape::OneLevel {
        return None;
    }
    // How far the last level fell below the level recommended (not below the best).
    let level = |n: u32| s.capacity().find(|l| l.level == n);
    let decline = match (v.decline, v.saturation.and_then(level)) {
        (Some(d), Some(sat)) => level(d.at).map(|last| {
            let c = saturation::change(sat, last);
            format!("{:+.0} % at {} against {}", c.pct, count(d.at, what), count(sat.level, what))
        }),
        _ => None,
    };
    Some(match (kind, v.shape) {
        // A rate study answers in `capacity::answer`, a memory study in `memory::answer`.
        (Kind::Rate | Kind::Memory, _) => return None,
        (Kind::ScaleOut, _) => {
            let last = s.efficiency.iter().filter(|e| e.nodes > 1).max_by_key(|e| e.nodes)?;
            format!(
                "Scale-out efficiency at {} nodes: e = {:.2} ({:.2}..{:.2} over the repeats), each node keeping {:.0} % of one node's throughput.",
                last.nodes,
                last.e,
                last.low,
                last.high,
                last.e * 100.0
            )
        }
        (_, Shape::Rising) => {
            format!("Recommendation: none yet: try more than {}.", count(s.capacity().last()?.level, what))
        }
        (Kind::Scale, _) => {
            let n = v.saturation?;
            match &decline {
                Some(d) => {
                    format!("Recommendation: {} per server: more instances cost throughput ({d}).", count(n, what))
                }
                None => format!("Recommendation: {} per server: more instances add nothing.", count(n, what)),
            }
        }
        (Kind::Sweep, _) => {
            let n = v.saturation?;
            match &decline {
                Some(d) => format!(
                    "Recommendation: run at {}, the fewest that reach the peak; more only queue, and cost throughput ({d}).",
                    count(n, what)
                ),
                None => format!("Recommendation: run at {}, the fewest that reach the peak; more only queue.", count(n, what)),
            }
        }
    })
}

/// The levels whose figures are too weak to lean on, each in a phrase.
fn weak_levels(s: &SeriesResult, what: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some(v) = &s.verdict else { return out };
    for l in s.levels.iter().filter(|l| v.region.contains(&l.level) || Some(l.level) == v.saturation) {
        if l.sample_cv > HIGH_CV {
            out.push(format!("the samples at {} vary by cv {:.0} %", count(l.level, what), l.sample_cv * 100.0));
        }
        if l.throughput.n > 1 && l.throughput.cv > HIGH_CV {
            out.push(format!("the repeats at {} differ by cv {:.0} %", count(l.level, what), l.throughput.cv * 100.0));
        }
    }
    out
}

/// Configurations compared at their peaks, workload by workload: which carries more
/// beyond the noise, or that they cannot be told apart.
pub fn configurations(spec: &StudySpec, series: &[SeriesResult]) -> Vec<String> {
    let mut out = Vec::new();
    if spec.configs.len() < 2 {
        return out;
    }
    for w in &spec.workloads {
        // Peaks that are final: a finished series whose figures are above 0 (a series
        // still rising has no final peak, and says so in its own answer).
        let mut not_final = Vec::new();
        let peaks: Vec<(&str, &LevelResult)> = spec
            .configs
            .iter()
            .filter_map(|c| {
                let s = series.iter().find(|s| s.name == format!("{w} @ {}", c.name))?;
                if s.only_starved() {
                    not_final.push(format!("{} (other programs starved it at every level)", c.name));
                    return None;
                }
                let (lv, x) = s.peak?;
                let rising = s.verdict.as_ref().is_some_and(|v| v.shape == Shape::Rising);
                if !s.complete || rising || x <= 0.0 {
                    not_final.push(c.name.clone());
                    return None;
                }
                Some((c.name.as_str(), s.levels.iter().find(|l| l.level == lv)?))
            })
            .collect();
        if !not_final.is_empty() {
            out.push(format!(
                "{w}: {} not compared: no final peak (unfinished, still rising at its last level, or starved).",
                not_final.join(", ")
            ));
        }
        let Some(&(best_name, best)) = peaks.iter().max_by(|a, b| a.1.throughput.mean.total_cmp(&b.1.throughput.mean))
        else {
            continue;
        };
        // Others' CPU at either peak (under the share that starves): the comparison is
        // of a shared host, said so (studies/3 beside `stress --cpu 1`: 0.37 and 0.49).
        let shared = |l: &LevelResult| l.observed.os.as_ref().and_then(|o| o.squeezed()).map(|s| s.other_cores);
        for &(name, l) in peaks.iter().filter(|(n, _)| *n != best_name) {
            let c = saturation::change(l, best);
            let sharing = match (shared(best), shared(l)) {
                (None, None) => String::new(),
                (a, b) => format!(
                    " Other programs took {:.2} and {:.2} cores at the two peaks: measured on a shared host, compare \
                     again on a quiet one.",
                    a.or(best.observed.os.as_ref().and_then(|o| o.other_cores)).unwrap_or(0.0),
                    b.or(l.observed.os.as_ref().and_then(|o| o.other_cores)).unwrap_or(0.0)
                ),
            };
            let mut line = if saturation::same(l, best) {
                format!(
                    "{w}: {best_name} ({} {}) and {name} ({}) cannot be told apart at their peaks ({:+.1} %, inside the noise).",
                    fmt(best.throughput.mean),
                    unit_of(series),
                    fmt(l.throughput.mean),
                    c.pct
                )
            } else {
                format!(
                    "{w}: {best_name} carried {:+.0} % more than {name} at their peaks ({} against {} {}; {:+.0} to {:+.0} %).",
                    c.pct,
                    fmt(best.throughput.mean),
                    fmt(l.throughput.mean),
                    unit_of(series),
                    c.low,
                    c.high
                )
            };
            line.push_str(&sharing);
            out.push(line);
        }
    }
    out
}

fn unit_of(series: &[SeriesResult]) -> &str {
    series.first().map_or("tps", |s| s.unit.as_str())
}

/// A series whose study stopped before its levels were done (a failed step, an
/// interrupt, or still running): what its figures cover, never "beyond the levels tried".
pub fn unfinished(s: &SeriesResult, what: &str) -> Option<String> {
    if s.complete {
        return None;
    }
    Some(match s.levels.last() {
        Some(l) => format!(
            "the study did not finish its levels (its figures stop at {}), so where it saturates is not known",
            count(l.level, what)
        ),
        None => "the study did not finish a level".into(),
    })
}

/// What a reader must know beside one level's figures: that it broke the study's bound,
/// and the notes its runs carried (a cold just-recovered server, missed open-loop
/// arrivals, a CPU quota, no transaction finished, ...).
pub fn level_notes(l: &LevelResult) -> Vec<String> {
    let mut n = Vec::new();
    if l.over_bound {
        n.push("over the study's bound: not counted as capacity".to_string());
    }
    if let Some(st) = l.starved {
        n.push(format!("starved: {} on a saturated host: not counted as capacity", st.words()));
    }
    let ran_out: Vec<&str> = bottleneck::findings(l).iter().map(|f| f.tag).collect();
    if !ran_out.is_empty() {
        n.push(format!("ran out: {}", ran_out.join(", ")));
    }
    n.extend(l.observed.notes.iter().cloned());
    n
}

fn load_generator(s: &SeriesResult) -> Option<String> {
    let l =
        s.levels.iter().find(|l| l.observed.notes.iter().any(|n| n.starts_with(crate::monitor::os::LOAD_GENERATOR)))?;
    Some(format!("At {} the load generator itself was the bottleneck.", l.level))
}

/// Warnings about one level's figures, each a short phrase.
pub fn level_warnings(l: &LevelResult) -> Vec<String> {
    let mut w = Vec::new();
    if l.sample_cv > HIGH_CV {
        w.push(format!(
            "high spread: the samples' CV is {:.0} % (above {:.0} %)",
            l.sample_cv * 100.0,
            HIGH_CV * 100.0
        ));
    }
    if l.samples < FEW_SAMPLES {
        w.push(format!("only {} sample(s): a longer step gives a steadier median", l.samples));
    }
    if l.throughput.n > 1 && l.throughput.cv > HIGH_CV {
        w.push(format!("the repeats differ by CV {:.0} %", l.throughput.cv * 100.0));
    }
    w
}

fn mib(bytes: f64) -> String {
    if bytes >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} GiB", bytes / (1024.0 * 1024.0 * 1024.0))
    } else {
        format!("{:.1} MiB", bytes / (1024.0 * 1024.0))
    }
}

/// The data a run read beside the buffer pool it had: "4 table(s) x 50000 rows, 45.6 MiB
/// on disk; buffer pool 128.0 MiB: the data is 36 % of the pool".
pub fn data_vs_pool(c: &crate::result::RunConfig) -> Option<String> {
    let bytes = c.data_bytes()? as f64;
    let what = c.server.data.clone().unwrap_or_default();
    let mut out =
        format!("{what}, {} on disk (information_schema's estimate)", mib(bytes)).trim_start_matches(", ").to_string();
    if let Some(why) = c.innodb_unused() {
        out += &format!("; buffer pool: not applicable ({why})");
    } else if let Some(pool) = c.pool_bytes().map(|p| p as f64) {
        out += &format!("; buffer pool {}: the data is {:.0} % of the pool", mib(pool), bytes / pool * 100.0);
    }
    Some(out)
}

/// Warnings about how a run's server and figures were set up.
pub fn config_warnings(doc: &RunDocument) -> Vec<String> {
    let mut w = Vec::new();
    let c = &doc.config;
    let fact = |k: &str| c.server.variable(k);
    if let Some(absent) = c.server.absent.as_deref().filter(|a| !a.is_empty()) {
        w.push(format!(
            "the server has no {absent}: its storage and durability settings are not InnoDB's, and \
             these figures compare with an InnoDB server's only as a whole"
        ));
    }
    if let Some(v) = fact("innodb_flush_log_at_trx_commit").filter(|v| v != "1") {
        w.push(format!(
            "non-durable: innodb_flush_log_at_trx_commit={v} (a crash can lose the last second of commits)"
        ));
    }
    if let Some(v) = fact("innodb_doublewrite").filter(|v| v.eq_ignore_ascii_case("OFF") || v == "0") {
        w.push(format!("non-durable: innodb_doublewrite={v} (a page torn by a crash cannot be repaired)"));
    }
    let binlog_on = fact("log_bin").is_some_and(|v| v.eq_ignore_ascii_case("ON") || v == "1");
    if binlog_on && fact("sync_binlog").as_deref() == Some("0") {
        w.push("non-durable: sync_binlog=0 with the binary log on".into());
    }
    if let Some(lab) = c.server.emulated() {
        w.push(format!("lab node: {lab}, not a separate server"));
    }
    if let Some(os) = doc.summary.as_ref().and_then(|s| s.observed.os.as_ref()) {
        if os.watts.is_some() && os.power_source != "measured" {
            w.push(format!("watts are {} (not measured)", os.power_source));
        }
    }
    if let Some(s) = &doc.summary {
        for n in s.observed.notes.iter().filter(|n| n.starts_with(crate::monitor::os::LOAD_GENERATOR)) {
            w.push(n.clone());
        }
        let samples = doc.intervals.iter().filter(|iv| !iv.warmup).count();
        if samples < FEW_SAMPLES {
            w.push(format!("only {samples} interval sample(s) after warm-up"));
        }
    }
    w
}

/// The opening sentence for a run.
pub fn run(doc: &RunDocument) -> String {
    let kind = crate::workload::kind_of_result(&doc.config.workload);
    let Some(s) = &doc.summary else {
        return format!("Run {} did not finish ({}): there is no figure to quote.", doc.id.unwrap_or(0), doc.status);
    };
    let value = if kind.unit() == crate::workload::Unit::Nopm { s.nopm.unwrap_or(0.0) } else { s.tps };
    let mut out = format!(
        "{} carried {} {} at {} {} over {:.0} s (mean {:.2} ms, p95 {:.2} ms).",
        doc.config.workload,
        fmt(value),
        kind.unit().label(),
        doc.config.run.threads,
        kind.level_name(),
        s.seconds,
        s.latency_ms.avg,
        s.latency_ms.p95
    );
    if doc.status != crate::store::Status::Completed {
        out += &format!(
            " The run ended {}{}.",
            doc.status,
            doc.error.as_ref().map_or(String::new(), |e| format!(": {e}"))
        );
    }
    if let Some(why) = s.not_capacity() {
        out += &format!(" Not a capacity figure: {why}.");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::figures::fixtures::{bare_level, fixture, fixture_with_others};

    fn level(level: u32, tps: f64, cv: f64, samples: usize) -> LevelResult {
        let mut l = bare_level(level, tps);
        l.sample_cv = cv;
        l.samples = samples;
        l
    }

    fn spec_of(kind: Kind) -> StudySpec {
        use crate::study::spec::Section;
        let mut spec: StudySpec = toml::from_str(
            "name = 'fixture'\nkind = 'sweep'\nworkloads = ['oltp_read_write']\nlevels = [1, 2, 4]\nstep_time = 1\n",
        )
        .expect("a study file");
        spec.section = match kind {
            Kind::Sweep => Section::Sweep,
            Kind::Scale => Section::Scale,
            Kind::ScaleOut => Section::ScaleOut { cluster: None },
            Kind::Rate => Section::Rate(Default::default()),
            Kind::Memory => Section::Memory(Default::default()),
        };
        spec
    }

    fn answer(points: &[(u32, f64, f64, f64)], kind: Kind, what: &str) -> String {
        let s = fixture(points, "");
        series(&s, kind, what, &s.name)
    }

    /// a_rising_series_says_what_was_checked: a sweep still rising with nothing run out
    /// said nothing of the headroom at its last level (a run's server_metrics test, on a
    /// slow box, found no node_exporter figure in the answer).
    #[test]
    fn rising_is_the_only_shape_whose_limit_lies_beyond() {
        let a =
            answer(&[(1, 300.0, 0.02, 40.0), (2, 560.0, 0.02, 70.0), (4, 900.0, 0.03, 85.0)], Kind::Sweep, "threads");
        assert_eq!(
            a,
            "oltp_read_write was still rising at 4 threads: 900 tps (range 855-945), +61 % over 2 threads \
             (beyond the noise), so its limit lies beyond the levels tried; at 4 threads nothing measured ran out \
             (CPU 85 % busy (server 1.36, sizeup 0.31, other processes 0.03 of 2 cores), I/O wait 0 %). \
             Recommendation: none yet: try more than 4 threads."
        );
    }

    /// a_best_last_level_matched_by_an_earlier_one_is_no_rise (issue 61, 3): study 1 said
    /// "still rising at 128 threads: 2398 tps (range 2174-2622), +29 % over 64 threads
    /// ... its limit lies beyond the levels tried" while 32 threads gave 2328, inside
    /// 128's range: a plateau with a dip.
    #[test]
    fn a_best_last_level_matched_by_an_earlier_one_is_no_rise() {
        let a = answer(
            &[(16, 2000.0, 0.05, 99.0), (32, 2328.0, 0.05, 99.0), (64, 1859.0, 0.05, 99.0), (128, 2398.0, 0.05, 99.0)],
            Kind::Sweep,
            "threads",
        );
        assert!(!a.contains("beyond the levels tried") && !a.contains("still rising"), "{a}");
        assert!(a.starts_with("oltp_read_write peaked at 32, 128 threads"), "{a}");
        assert!(a.contains("it saturated at 32 threads"), "{a}");
    }

    /// demo_answer_names_the_saturation_and_the_decline: the demo said "no stop condition
    /// was met up to 8 threads, so its limit lies beyond the levels tried" while
    /// throughput fell after 2 threads on a CPU 97 % busy.
    #[test]
    fn demo_answer_names_the_saturation_and_the_decline() {
        let a = answer(
            &[(1, 520.0, 0.05, 60.0), (2, 995.0, 0.07, 97.0), (4, 964.0, 0.08, 98.0), (8, 863.0, 0.07, 98.0)],
            Kind::Sweep,
            "threads",
        );
        assert_eq!(
            a,
            "oltp_read_write peaked at 2-4 threads: 995 tps (range 940-1050) at 2 threads (4 threads within the \
             noise of it); it saturated at 2 threads, where the host's CPU (97 % busy: server 1.55, sizeup 0.35, \
             other processes 0.04 of 2 cores) ran out; beyond it throughput fell: -13 % at 8 threads (863 tps; \
             -20 to -6 %). Recommendation: run at 2 threads, the fewest that reach the peak; more only queue, \
             and cost throughput (-13 % at 8 threads against 2 threads)."
        );
    }

    #[test]
    fn cpu_bound_from_the_first_instance_recommends_one() {
        let a = answer(
            &[(1, 5000.0, 0.05, 99.0), (2, 5150.0, 0.04, 99.0), (3, 5300.0, 0.06, 99.0), (8, 3800.0, 0.05, 99.0)],
            Kind::Scale,
            "instances",
        );
        assert!(a.starts_with("oltp_read_write peaked at 1-3 instances: 5300 tps"), "{a}");
        assert!(
            a.contains("it was saturated from the first level (1 instance), where the host's CPU (99 % busy"),
            "{a}"
        );
        assert!(a.contains("beyond it throughput fell: -28 % at 8 instances"), "{a}");
        // recommendation_quoted_the_decline_from_the_best: against the one instance it
        // recommends, 8 instances carry 0.76x (-24 %), not the -28 % below the best.
        assert!(
            a.contains("Recommendation: 1 instance per server: more instances cost throughput (-24 % at 8 instances against 1 instance)"),
            "{a}"
        );
        assert!(!a.contains("beyond the levels tried"), "{a}");
    }

    #[test]
    fn flat_within_the_noise_says_more_load_gained_nothing() {
        let a =
            answer(&[(1, 1000.0, 0.03, 99.0), (2, 1030.0, 0.03, 99.0), (4, 990.0, 0.04, 99.0)], Kind::Sweep, "threads");
        assert!(a.starts_with("oltp_read_write peaked at 1-4 threads"), "{a}");
        assert!(
            a.contains("saturated from the first level (1 thread)") && a.contains("more threads gained nothing"),
            "{a}"
        );
    }

    #[test]
    fn noisy_levels_are_called_weak_where_the_answer_rests_on_them() {
        let a = answer(
            &[(1, 400.0, 0.44, 50.0), (2, 700.0, 0.44, 70.0), (4, 1000.0, 0.44, 80.0), (8, 850.0, 0.44, 80.0)],
            Kind::Sweep,
            "threads",
        );
        assert!(a.starts_with("oltp_read_write peaked at 2-8 threads"), "{a}");
        assert!(a.contains("Weak data: the samples at 2 threads vary by cv 44 %"), "{a}");
        assert!(a.contains("nothing measured ran out (CPU 70 % busy"), "{a}");
    }

    /// A level where other programs starved the server is no capacity figure of it.
    #[test]
    fn other_programs_on_the_host_are_named_in_the_answer() {
        let s = fixture_with_others(
            &[(1, 800.0, 0.02, 60.0), (2, 1200.0, 0.02, 99.0), (4, 1190.0, 0.02, 99.0)],
            &[(2, 1.03)],
            "",
        );
        let a = series(&s, Kind::Sweep, "threads", &s.name);
        assert!(a.contains("At 2 threads other programs took a large share of the saturated host"), "{a}");
    }

    /// decisions_rest_on_no_starved_level (issue 61, 1): "run at 1 thread" was issued
    /// from levels where other programs took half the host. The starved level is shown
    /// but makes no peak, no saturation and no recommendation; a series of starved
    /// levels only has no answer at all.
    #[test]
    fn decisions_rest_on_no_starved_level() {
        // 2 threads starved, and lower than 1 thread: without the rule it made a decline
        // from 1 thread ("run at 1 thread").
        let points = [(1, 1000.0, 0.02, 60.0), (2, 700.0, 0.02, 99.0), (4, 1500.0, 0.02, 95.0)];
        let s = fixture_with_others(&points, &[(2, 1.05)], "plateau<5%");
        assert!(s.levels[1].starved.is_some() && s.levels[0].starved.is_none());
        assert_eq!(s.stop, None, "a starved level trips no plateau and is no previous level: {:?}", s.stop);
        assert_eq!(s.peak, Some((4, 1500.0)));
        let a = series(&s, Kind::Sweep, "threads", &s.name);
        assert!(!a.contains("run at 1 thread"), "{a}");
        assert!(a.contains("nothing above rests on them"), "{a}");
        // The level's own notes say so in every table.
        assert!(level_notes(&s.levels[1]).iter().any(|n| n.starts_with("starved: other processes took 1.05")));
        // Only starved levels: no answer, and the study exits non-zero (study::starved_only).
        let busy = [(1, 1000.0, 0.02, 95.0), (2, 700.0, 0.02, 99.0), (4, 1500.0, 0.02, 95.0)];
        let all = fixture_with_others(&busy, &[(1, 1.0), (2, 1.05), (4, 0.9)], "");
        assert!(all.only_starved() && all.peak.is_none() && all.verdict.is_none());
        let a = series(&all, Kind::Sweep, "threads", &all.name);
        assert!(a.starts_with("oltp_read_write: no answer: other programs starved the server at every level"), "{a}");
        assert!(!a.contains("Recommendation"), "{a}");
        // programs_that_starved_a_level_still_spoil_the_heavier_ones: beside `stress
        // --cpu 1` studies/1 "peaked at 64 threads", where 64 server threads had squeezed
        // stress from 0.99 cores (1 thread, starved) to 0.15; quiet, it peaked at 2.
        let busy =
            [(1, 1476.0, 0.02, 99.0), (8, 1500.0, 0.02, 99.0), (32, 1945.0, 0.02, 99.0), (64, 2019.0, 0.02, 99.0)];
        let s = fixture_with_others(&busy, &[(1, 0.99), (8, 0.27), (32, 0.17), (64, 0.15)], "");
        assert!(
            s.levels.iter().all(|l| l.starved.is_some()),
            "{:?}",
            s.levels.iter().map(|l| l.starved).collect::<Vec<_>>()
        );
        assert!(s.only_starved() && s.peak.is_none(), "{:?}", s.peak);
        assert!(
            s.levels[3].observed.notes.iter().any(|n| n.contains("squeezed by this one's threads")),
            "{:?}",
            s.levels[3].observed.notes
        );
        // Quiet levels (others at 0.04) after a starved one still count.
        let s = fixture_with_others(&busy, &[(1, 0.99), (8, 0.04), (32, 0.04), (64, 0.04)], "");
        assert_eq!(s.peak, Some((64, 2019.0)));
        // cpu>80 reads the test's share: other programs' 1.4 cores on a host 95 % busy
        // left the server and sizeup 25 %, no saturation.
        let s = fixture_with_others(&[(1, 500.0, 0.02, 95.0), (2, 900.0, 0.02, 60.0)], &[(1, 0.0)], "cpu>80");
        assert_eq!(s.stopped_at, Some(1), "95 % busy, all of it the test's");
        let mut o = s.levels[0].observed.os.clone().unwrap();
        o.other_cores = Some(1.4);
        assert!((o.test_busy().unwrap() - 25.0).abs() < 1e-9, "{:?}", o.test_busy());
    }

    /// a_comparison_on_a_shared_host_says_so (issue 61, 1): beside `stress --cpu 1`,
    /// studies/3 said "big pool carried +128 % more than small pool" with other programs
    /// at 0.37 and 0.49 cores on both peaks, under the share that marks a level starved.
    #[test]
    fn a_comparison_on_a_shared_host_says_so() {
        let spec = StudySpec::from_toml(
            "name = \"c\"\nkind = \"sweep\"\nworkloads = [\"oltp_read_write\"]\nlevels = [1, 2, 4]\nstep_time = 10\n\
             [[configs]]\nname = \"big\"\n[[configs]]\nname = \"small\"\n",
            "test",
        )
        .unwrap();
        let side = |name: &str, x: f64, others: f64| {
            let points = [(1, x / 2.0, 0.02, 60.0), (2, x, 0.02, 99.0), (4, x * 0.98, 0.02, 99.0)];
            let mut s = fixture_with_others(&points, &[(2, others), (4, others)], "");
            s.name = format!("oltp_read_write @ {name}");
            s
        };
        let shared = configurations(&spec, &[side("big", 3000.0, 0.37), side("small", 1300.0, 0.45)]);
        assert!(shared[0].contains("big carried"), "{shared:?}");
        assert!(shared[0].ends_with("Other programs took 0.37 and 0.45 cores at the two peaks: measured on a shared host, compare again on a quiet one."), "{shared:?}");
        let quiet = configurations(&spec, &[side("big", 3000.0, 0.02), side("small", 1300.0, 0.03)]);
        assert!(!quiet[0].contains("Other programs"), "{quiet:?}");
    }

    #[test]
    fn io_bound_names_io() {
        let mut s = fixture(&[(1, 300.0, 0.02, 20.0), (2, 420.0, 0.02, 25.0), (4, 410.0, 0.02, 25.0)], "");
        for l in s.levels.iter_mut() {
            if let Some(o) = l.observed.os.as_mut() {
                o.iowait = 40.0;
                o.idle = 35.0;
                o.disk_busy_pct = Some(97.0);
            }
        }
        let a = series(&s, Kind::Sweep, "threads", &s.name);
        assert!(a.contains("it saturated at 2 threads, where I/O (40 % I/O wait, the data device busy 97 %"), "{a}");
    }

    /// A study that failed at its next level said "its limit lies beyond the levels
    /// tried", the opposite of what happened.
    #[test]
    fn unfinished_study_never_says_its_limit_lies_beyond() {
        let mut s = fixture(&[(1, 800.0, 0.02, 50.0), (2, 1658.0, 0.03, 90.0), (4, 1900.0, 0.04, 95.0)], "");
        s.complete = false;
        let a = series(&s, Kind::Sweep, "threads", &s.name);
        assert!(!a.contains("beyond the levels tried"), "{a}");
        assert!(a.contains("did not finish its levels (its figures stop at 4 threads)"), "{a}");
        // Its level notes reach every table: a cold server, a level over the bound.
        let mut l = level(2, 10.0, 0.0, 10);
        l.over_bound = true;
        l.observed.notes.push("restarted after a crash 3 s before this run: cold".into());
        assert_eq!(level_notes(&l).len(), 2);
        assert!(level_notes(&l)[0].contains("not counted as capacity"));
    }

    #[test]
    fn a_stop_condition_still_ends_the_answer() {
        let s = fixture(&[(1, 800.0, 0.02, 50.0), (2, 1658.0, 0.03, 85.0), (4, 1600.0, 0.04, 93.0)], "cpu>80");
        let a = series(&s, Kind::Sweep, "threads", &s.name);
        assert!(a.starts_with("oltp_read_write was still rising at 2 threads"), "{a}");
        // 85 % busy less the fixture's other programs (0.034 cores of 2): the test's 83.3 %.
        assert!(a.contains("the study's stop condition ended it at 2 threads (CPU 83.3 % > 80 %)"), "{a}");
        // stop_and_answer_named_different_saturations: the table said "saturation at 1"
        // under an answer that named none; one figure serves both.
        assert_eq!(s.saturation, Some(1));
        assert!(a.contains("which puts its saturation at 1 thread"), "{a}");
        let table = crate::report::study_tables(&spec_of(Kind::Sweep), std::slice::from_ref(&s));
        assert!(table.contains("saturation at 1 threads") && table.contains("<- saturation"), "{table}");
        // Stored reasons are read back into their condition (typed_stop_reasons).
        let stored = |words: &str| StopReason::from(words.to_string());
        assert_eq!(limit(&stored("new_order p90 6.00 s > 5.00 s")), "the limit was the latency bound");
        assert!(limit(&stored("kink: response time +40 % ...")).contains("kink"));
        assert_eq!(limit(&stored("CPU 85.0 % > 80 %")), "the limit was CPU");
        assert_eq!(limit(&stored("replication lag 7 s > 5 s")), "the limit was replication lag");
        assert_eq!(limit(&stored("memory > 1")), "a stop condition was met");
    }

    #[test]
    fn weak_levels_are_flagged_and_sound_ones_are_not() {
        assert!(level_warnings(&level(1, 100.0, 0.02, 10)).is_empty());
        let w = level_warnings(&level(1, 100.0, 0.55, 10));
        assert_eq!(w, ["high spread: the samples' CV is 55 % (above 10 %)"]);
        let w = level_warnings(&level(1, 100.0, 0.02, 3));
        assert!(w[0].starts_with("only 3 sample(s)"), "{w:?}");
    }

    #[test]
    fn non_durable_and_modelled_configurations_are_flagged() {
        let mut doc: RunDocument = serde_json::from_value(serde_json::json!({
            "status": "completed", "config": {"workload": "oltp_read_write",
                "server": {"innodb_flush_log_at_trx_commit": "1", "log_bin": "ON", "sync_binlog": "1"}},
            "summary": null, "intervals": [], "histograms": {}
        }))
        .unwrap();
        assert!(config_warnings(&doc).is_empty());
        doc.config.server.variables.insert("innodb_flush_log_at_trx_commit".into(), "2".into());
        doc.config.server.variables.insert("sync_binlog".into(), "0".into());
        let w = config_warnings(&doc);
        assert!(w[0].contains("innodb_flush_log_at_trx_commit=2") && w[1].contains("sync_binlog=0"), "{w:?}");
        doc.config.server.variables.insert("log_bin".into(), "OFF".into());
        assert_eq!(config_warnings(&doc).len(), 1, "sync_binlog does not matter without a binary log");
        // A lab node's figures are emulated; a node outside the lab is not flagged.
        doc.config.server.lab = Some("not emulated".into());
        assert_eq!(config_warnings(&doc).len(), 1);
        doc.config.server.lab = Some("emulated (node CPU quota 0.4, link delay 0.2 ms)".into());
        assert!(config_warnings(&doc)[1].contains("emulated (node CPU quota 0.4"), "{:?}", config_warnings(&doc));
    }

    #[test]
    fn absent_variables_are_flagged_in_the_report() {
        let doc: RunDocument = serde_json::from_value(serde_json::json!({
            "status": "completed", "config": {"workload": "oltp_read_write",
                "server": {"absent": "innodb_buffer_pool_size, innodb_log_file_size", "server_family": "Dolt"}},
            "summary": null, "intervals": [], "histograms": {}
        }))
        .unwrap();
        let w = config_warnings(&doc);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("the server has no innodb_buffer_pool_size, innodb_log_file_size:"), "{w:?}");
    }
}
