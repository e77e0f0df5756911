//! `sizeup compare`: two runs or two studies side by side, each difference with a
//! Welch t-test. One run against one run: over the interval samples (effective sample
//! sizes corrected for autocorrelation; see stats::significance), which says whether
//! these two runs differed, not whether a repeat would: the run-to-run spread is
//! unknown and the verdict says so. Studies whose levels were repeated (`--repeat`):
//! over the repeats' figures, the spread between runs. Runs stored before intervals
//! kept their mean and percentiles show those figures for the whole run, without a
//! verdict.

use super::html::Item;
use crate::error::Invalid;
use crate::result::RunDocument;
use crate::stats::significance::{welch, Welch};
use crate::stats::Interval;
use std::collections::BTreeMap;
use std::fmt::Write;

pub struct Row {
    pub metric: String,
    pub a: f64,
    pub b: f64,
    pub test: Option<Welch>,
    /// Lower is better (latency) rather than higher (throughput).
    pub lower_is_better: bool,
    /// What the test's samples are: the intervals inside one run a side (the spread
    /// between runs unknown), or each side's repeated runs.
    pub between_runs: bool,
    /// Each side's mean ± 2 standard errors, for error bars.
    pub a_range: Option<(f64, f64)>,
    pub b_range: Option<(f64, f64)>,
}

pub struct Comparison {
    pub title: String,
    pub a: String,
    pub b: String,
    pub rows: Vec<Row>,
    /// What makes a side no capacity figure (its server was lost or stalled).
    pub warnings: Vec<String>,
}

/// Intervals that count: after warm-up, at least half a sampling interval long.
fn steady(d: &RunDocument) -> Vec<&Interval> {
    let step = d.config.run.interval.as_secs_f64();
    d.intervals.iter().filter(|iv| !iv.warmup && iv.duration >= 0.5 * step).collect()
}

/// A latency figure of each interval that saw a transaction.
fn answered(ivs: &[&Interval], pick: impl Fn(&Interval) -> f64) -> Vec<f64> {
    ivs.iter().filter(|iv| iv.transactions > 0).map(|iv| pick(iv)).collect()
}

fn throughput(d: &RunDocument, iv: &Interval) -> f64 {
    d.throughput(iv)
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// mean ± 2 standard errors of samples (`independent`: repeats; else interval samples
/// of one run, their count corrected for autocorrelation).
fn range(v: &[f64], independent: bool) -> Option<(f64, f64)> {
    if v.len() < 2 {
        return None;
    }
    let m = mean(v);
    let sd = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt();
    let n = if independent { v.len() as f64 } else { crate::stats::significance::effective_sample_size(v) };
    let half = 2.0 * sd / n.sqrt();
    Some((m - half, m + half))
}

fn sampled(metric: String, a: Vec<f64>, b: Vec<f64>, lower_is_better: bool) -> Row {
    Row {
        metric,
        a: mean(&a),
        b: mean(&b),
        test: welch(&a, &b),
        lower_is_better,
        between_runs: false,
        a_range: range(&a, false),
        b_range: range(&b, false),
    }
}

/// A row tested on each side's repeated runs (one figure a run): the spread between runs.
fn repeated(metric: String, a: Vec<f64>, b: Vec<f64>) -> Row {
    Row {
        metric,
        a: mean(&a),
        b: mean(&b),
        test: crate::stats::significance::welch_independent(&a, &b),
        lower_is_better: false,
        between_runs: true,
        a_range: range(&a, true),
        b_range: range(&b, true),
    }
}

pub fn runs(a: &RunDocument, b: &RunDocument) -> Result<Comparison, Invalid> {
    let (sa, sb) = (
        a.summary.as_ref().ok_or_else(|| Invalid::Value("run A has no summary (it did not finish)".into()))?,
        b.summary.as_ref().ok_or_else(|| Invalid::Value("run B has no summary (it did not finish)".into()))?,
    );
    let unit = a.config.unit().label();
    if unit != b.config.unit().label() {
        return Err(Invalid::Conflict(format!(
            "run A counts {unit} and run B {}: compare runs of one kind",
            b.config.unit().label()
        )));
    }
    let (ia, ib) = (steady(a), steady(b));
    let series = |d: &RunDocument, ivs: &[&Interval], f: &dyn Fn(&RunDocument, &Interval) -> f64| {
        ivs.iter().map(|iv| f(d, iv)).collect::<Vec<f64>>()
    };
    let mut rows = vec![
        sampled(format!("{unit} (interval mean)"), series(a, &ia, &throughput), series(b, &ib, &throughput), false),
        // An interval without a transaction (an outage) has no latency, not 0 ms.
        sampled("p95 ms (interval mean)".into(), answered(&ia, |iv| iv.p95_ms), answered(&ib, |iv| iv.p95_ms), true),
    ];
    // Each latency figure against its per-interval samples; runs stored before those
    // were kept have none, and get the whole-run figure without a verdict.
    let has = |ivs: &[&Interval]| ivs.iter().any(|iv| iv.p50_ms > 0.0);
    let (la, lb) = (&sa.latency_ms, &sb.latency_ms);
    type Pick = fn(&Interval) -> f64;
    let figures: [(&str, Pick, f64, f64); 5] = [
        ("avg ms", |iv| iv.avg_ms, la.avg, lb.avg),
        ("p50 ms", |iv| iv.p50_ms, la.p50, lb.p50),
        ("p90 ms", |iv| iv.p90_ms, la.p90, lb.p90),
        ("p99 ms", |iv| iv.p99_ms, la.p99, lb.p99),
        ("max ms", |iv| iv.max_ms, la.max, lb.max),
    ];
    for (name, pick, x, y) in figures {
        if has(&ia) && has(&ib) {
            rows.push(sampled(format!("{name} (interval mean)"), answered(&ia, pick), answered(&ib, pick), true));
        } else {
            rows.push(Row {
                metric: format!("{name} (whole run)"),
                a: x,
                b: y,
                test: None,
                lower_is_better: true,
                between_runs: false,
                a_range: None,
                b_range: None,
            });
        }
    }
    if sa.types.len() > 1 {
        for t in &sa.types {
            let p90 = |ivs: &[&Interval]| {
                ivs.iter()
                    .filter_map(|iv| iv.types.iter().find(|x| x.name == t.name).filter(|x| x.transactions > 0))
                    .map(|x| x.p90_ms)
                    .collect::<Vec<f64>>()
            };
            rows.push(sampled(format!("{} p90 ms (interval mean)", t.name), p90(&ia), p90(&ib), true));
        }
    }
    let label = |d: &RunDocument| {
        format!("run {} ({}, {} threads)", d.id.unwrap_or(0), d.config.workload, d.config.run.threads)
    };
    let mut warnings: Vec<String> =
        [("A", a, sa), ("B", b, sb)].iter().flat_map(|(side, d, s)| side_warnings(side, d, s)).collect();
    // Two servers under the same load is what a comparison is for; other differences
    // are said, so a verdict is not read as the server's alone.
    let (ca, cb) = (&a.config, &b.config);
    if ca.workload != cb.workload {
        warnings.push(format!("A runs {} and B {}: the workloads differ", ca.workload, cb.workload));
    }
    if ca.run.threads != cb.run.threads {
        warnings.push(format!("A ran {} connection(s) and B {}: the loads differ", ca.run.threads, cb.run.threads));
    }
    let differ = settings_differ(&ca.server.variables, &cb.server.variables);
    if !differ.is_empty() {
        warnings.push(settings_warning(&differ));
    }
    warnings.push(ONE_RUN_EACH.into());
    Ok(Comparison { title: format!("{} against {}", label(b), label(a)), a: label(a), b: label(b), rows, warnings })
}

/// Byte counts as sizes ("8388608" -> "8M"); anything else as it is.
fn setting_value(name: &str, v: &str) -> String {
    let sized = name.ends_with("_size") || name.ends_with("_capacity");
    match v.parse::<u64>() {
        Ok(b) if sized && b >= 1 << 20 => {
            let (g, m) = (b as f64 / (1u64 << 30) as f64, b as f64 / (1u64 << 20) as f64);
            if b % (1 << 30) == 0 {
                format!("{g:.0}G")
            } else if b % (1 << 20) == 0 {
                format!("{m:.0}M")
            } else {
                format!("{m:.1}M")
            }
        }
        _ => v.to_string(),
    }
}

/// Every recorded server setting whose value differs between A's facts and B's:
/// "innodb_flush_log_at_trx_commit 2 against 0". A setting one side did not record is
/// not called different.
pub fn settings_differ(
    a: &BTreeMap<String, serde_json::Value>,
    b: &BTreeMap<String, serde_json::Value>,
) -> Vec<String> {
    let text = |m: &BTreeMap<String, serde_json::Value>, k: &str| {
        m.get(k).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
    };
    crate::target::SERVER_VARIABLES
        .iter()
        .filter_map(|k| match (text(a, k), text(b, k)) {
            (Some(x), Some(y)) if !x.eq_ignore_ascii_case(&y) => {
                Some(format!("{k} {} against {}", setting_value(k, &x), setting_value(k, &y)))
            }
            _ => None,
        })
        .collect()
}

fn settings_warning(differ: &[String]) -> String {
    format!(
        "the servers' settings differ: {} (A against B) — the difference is not only the change you made",
        differ.join("; ")
    )
}

/// What makes one side of a run comparison no like-for-like figure: an outage or stall,
/// a run that failed or was interrupted, no transaction, an open loop the server did
/// not hold.
fn side_warnings(side: &str, d: &RunDocument, s: &crate::stats::Summary) -> Vec<String> {
    let id = d.id.unwrap_or(0);
    let mut w: Vec<String> = s.not_capacity().map(|why| format!("{side} (run {id}): {why}")).into_iter().collect();
    if d.status != crate::store::Status::Completed {
        let why = d.error.as_deref().map_or(String::new(), |e| format!(": {e}"));
        w.push(format!("{side} (run {id}) {}{why}: its figures cover only part of the run", d.status));
    }
    if s.transactions == 0 {
        w.push(format!("{side} (run {id}): no transaction finished after the warm-up: there is no figure to compare"));
    }
    if s.missed_arrivals > 0 {
        w.push(format!(
            "{side} (run {id}): {} open-loop arrivals never started: the server did not hold the rate",
            s.missed_arrivals
        ));
    }
    if let Some(st) = s.observed.os.as_ref().and_then(|o| o.starved()) {
        w.push(format!(
            "{side} (run {id}): {} on a saturated host: its figures are not the server's capacity",
            st.words()
        ));
    }
    w
}

/// Said of every comparison whose sides are one run each.
pub const ONE_RUN_EACH: &str = "one run a side: the test sees the samples inside each run, not how far a repeat of \
     the same run would land (runs minutes apart differ by a few per cent), so a difference called real is real \
     for these two runs only; a study with --repeat 3 on each side measures the spread between runs";

/// Each step's steady median (one figure a run of the level; instances summed).
fn step_medians(steps: &[Vec<RunDocument>]) -> Vec<f64> {
    steps.iter().map(|r| crate::study::steady::median(&step_samples(r))).filter(|m| *m > 0.0).collect()
}

/// Per-interval totals of one step (its instances' intervals summed), after warm-up.
fn step_samples(runs: &[RunDocument]) -> Vec<f64> {
    let Some(first) = runs.first() else { return Vec::new() };
    let n = runs.iter().map(|d| d.intervals.len()).min().unwrap_or(0);
    let step = first.config.run.interval.as_secs_f64();
    (0..n)
        .filter(|&k| !first.intervals[k].warmup && first.intervals[k].duration >= 0.5 * step)
        .map(|k| runs.iter().map(|d| throughput(d, &d.intervals[k])).sum())
        .collect()
}

/// A study's completed steps by (series, level): each step's runs (one per instance).
pub type Steps = BTreeMap<(String, u32), Vec<Vec<RunDocument>>>;

/// Level by level, series matched by name (or by position when the names differ).
pub fn studies(a: &Item, ra: &Steps, b: &Item, rb: &Steps) -> Result<Comparison, Invalid> {
    let (
        Item::Study { row: row_a, series: sa, spec: spec_a, .. },
        Item::Study { row: row_b, series: sb, spec: spec_b, .. },
    ) = (a, b)
    else {
        return Err(Invalid::Conflict("compare needs two studies".into()));
    };
    // Levels of a scale study are instances, of a scale-out study nodes, of a sweep
    // connections: "@ 2" would set two different things side by side.
    if spec_a.level_name() != spec_b.level_name() {
        return Err(Invalid::Conflict(format!(
            "study A's levels are {} and study B's {}: compare studies of one kind",
            spec_a.level_name(),
            spec_b.level_name()
        )));
    }
    let mut rows = Vec::new();
    let mut units_differ = None;
    let mut single_runs = false;
    let mut pairs = Vec::new();
    for (i, x) in sa.iter().enumerate() {
        let Some(y) = sb.iter().find(|y| y.name == x.name).or_else(|| sb.get(i)) else { continue };
        pairs.push((x, y));
        if x.unit != y.unit {
            units_differ = Some(format!("study A's {} counts {} and study B's {} {}", x.name, x.unit, y.name, y.unit));
            continue;
        }
        for lx in &x.levels {
            if !y.levels.iter().any(|l| l.level == lx.level) {
                continue;
            }
            let samples = |steps: &Steps, name: &str| {
                steps
                    .get(&(name.to_string(), lx.level))
                    .map_or(Vec::new(), |s| s.iter().flat_map(|r| step_samples(r)).collect())
            };
            let name = if x.name == y.name { x.name.clone() } else { format!("{} / {}", x.name, y.name) };
            let medians = |steps: &Steps, name: &str| {
                steps.get(&(name.to_string(), lx.level)).map_or(Vec::new(), |s| step_medians(s))
            };
            let (ma, mb) = (medians(ra, &x.name), medians(rb, &y.name));
            if ma.len() >= 2 && mb.len() >= 2 {
                rows.push(repeated(
                    format!("{name} @ {} {} (median of {}+{} runs)", lx.level, x.unit, ma.len(), mb.len()),
                    ma,
                    mb,
                ));
            } else {
                single_runs = true;
                rows.push(sampled(
                    format!("{name} @ {} {} (interval mean)", lx.level, x.unit),
                    samples(ra, &x.name),
                    samples(rb, &y.name),
                    false,
                ));
            }
        }
    }
    if rows.is_empty() {
        return Err(match units_differ {
            Some(why) => Invalid::Conflict(format!("{why}: compare studies of one kind")),
            None => Invalid::Conflict("the two studies share no level to compare".into()),
        });
    }
    let label = |r: &crate::store::StudyRow| format!("study {} ({})", r.id, r.name);
    let mut warnings = Vec::new();
    // Level by level, the first run of each side's step: a setting that differs at any
    // level is named once, with each pair of values it took.
    let mut differ: Vec<String> = Vec::new();
    for (x, y) in &pairs {
        for level in x.levels.iter().map(|l| l.level) {
            let first = |steps: &Steps, name: &str| {
                steps
                    .get(&(name.to_string(), level))
                    .and_then(|s| s.first()?.first())
                    .map(|d| d.config.server.variables.clone())
            };
            if let (Some(fa), Some(fb)) = (first(ra, &x.name), first(rb, &y.name)) {
                for d in settings_differ(&fa, &fb) {
                    if !differ.contains(&d) {
                        differ.push(d);
                    }
                }
            }
        }
    }
    if !differ.is_empty() {
        warnings.push(settings_warning(&differ));
    }
    if single_runs {
        warnings.push(ONE_RUN_EACH.into());
    }
    // A step whose server was lost or stalled has no figures; a study that stopped
    // early, or a level over its own bound, is said beside the table.
    for (side, row, series) in [("A", row_a, sa), ("B", row_b, sb)] {
        if row.status != crate::store::Status::Completed {
            warnings.push(format!("{side} ({}) is {}: its levels stop where it stopped", label(row), row.status));
        }
        for l in series.iter().flat_map(|s| s.levels.iter().filter(|l| l.over_bound).map(move |l| (s, l))) {
            warnings.push(format!(
                "{side}: {} at {} broke its study's p90 or lag bound: not a capacity figure",
                l.0.name, l.1.level
            ));
        }
        for (s, l) in series.iter().flat_map(|s| s.starved().map(move |l| (s, l))) {
            warnings.push(format!(
                "{side}: {} at {}: {} on a saturated host: not a capacity figure",
                s.name,
                l.level,
                l.starved.map(|st| st.words()).unwrap_or_default()
            ));
        }
    }
    Ok(Comparison {
        title: format!("{} against {}", label(row_b), label(row_a)),
        a: label(row_a),
        b: label(row_b),
        rows,
        warnings,
    })
}

fn verdict(r: &Row) -> String {
    match &r.test {
        Some(w) if w.significant && r.between_runs => {
            let better = (r.b < r.a) == r.lower_is_better;
            format!("significant between runs (p={:.3}), {}", w.p, if better { "better" } else { "worse" })
        }
        Some(w) if w.significant => {
            let better = (r.b < r.a) == r.lower_is_better;
            format!(
                "these runs differ (p={:.3}), {}; run-to-run spread unknown",
                w.p,
                if better { "better" } else { "worse" }
            )
        }
        Some(w) if r.between_runs => format!("not significant between runs (p={:.2})", w.p),
        Some(w) => format!("not significant (p={:.2})", w.p),
        None => "no interval samples".into(),
    }
}

/// B against A in percent; none when A is 0 and B is not (no ratio to 0).
pub fn change(r: &Row) -> Option<f64> {
    if r.a != 0.0 {
        Some((r.b - r.a) / r.a * 100.0)
    } else {
        (r.b == 0.0).then_some(0.0)
    }
}

fn change_text(r: &Row) -> String {
    change(r).map_or("n/a".into(), |c| format!("{c:+.1}%"))
}

/// The terminal table.
pub fn table(c: &Comparison) -> String {
    let mut out = format!("{}\n  A = {}\n  B = {}\n\n", c.title, c.a, c.b);
    let w = c.rows.iter().map(|r| r.metric.len()).max().unwrap_or(6).max(6);
    for warning in &c.warnings {
        let _ = writeln!(out, "  warning: {warning}");
    }
    if !c.warnings.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(out, "  {:<w$} {:>12} {:>12} {:>9}  verdict", "metric", "A", "B", "change");
    for r in &c.rows {
        let _ = writeln!(out, "  {:<w$} {:>12.2} {:>12.2} {:>9}  {}", r.metric, r.a, r.b, change_text(r), verdict(r));
    }
    out.push_str("\n  Welch t-test on the interval samples after warm-up, sample sizes corrected for\n  autocorrelation (n_eff = n(1-r1)/(1+r1)), or on the repeats' medians where both\n  sides repeated the level; significant means p < 0.05.\n");
    out
}

/// The comparison as a report: the table, a bar chart of A against B, then both items.
pub fn html(c: &Comparison, items: Vec<Item>, generated_at: &str) -> String {
    use super::svg::{esc, BarChart};
    let warnings = match c.warnings.is_empty() {
        true => String::new(),
        false => {
            let items: String = c.warnings.iter().map(|w| format!("<li>{}</li>", esc(w))).collect();
            format!("<ul class=\"warnings\">{items}</ul>")
        }
    };
    let mut body = format!(
        "<section class=\"compare\"><h2>Comparison: {}</h2>{warnings}<table class=\"compare\"><tr><th class=\"l\">metric</th><th>A: {}</th><th>B: {}</th><th>change</th><th class=\"l\">verdict</th></tr>\n",
        esc(&c.title),
        esc(&c.a),
        esc(&c.b)
    );
    for r in &c.rows {
        let _ = writeln!(
            body,
            "<tr data-metric=\"{}\"><td class=\"l\">{}</td><td>{:.2}</td><td>{:.2}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(&r.metric),
            esc(&r.metric),
            r.a,
            r.b,
            change_text(r).replace('%', " %"),
            esc(&verdict(r))
        );
    }
    body.push_str("</table><p class=\"muted\">Welch t-test on interval samples after warm-up (sample sizes corrected for autocorrelation), or on the repeats' medians where both sides repeated the level. Error bars: mean ± 2 standard errors.</p>");
    // Throughput and latency share no scale: chart the rows of the first row's kind.
    let first = &c.rows[0];
    let same_kind: Vec<&Row> = c.rows.iter().filter(|r| r.lower_is_better == first.lower_is_better).collect();
    let chart = BarChart {
        id: "compare",
        title: "A and B",
        y_label: if first.lower_is_better { "ms" } else { "throughput" },
        categories: same_kind.iter().map(|r| r.metric.clone()).collect(),
        series: vec![
            ("A".into(), same_kind.iter().map(|r| r.a).collect()),
            ("B".into(), same_kind.iter().map(|r| r.b).collect()),
        ],
        stacked: false,
        colours: None,
        line: None,
        y_max: None,
        // Each side's mean ± 2 standard errors (within the run, or between repeats).
        errors: Some(vec![
            same_kind.iter().map(|r| r.a_range).collect(),
            same_kind.iter().map(|r| r.b_range).collect(),
        ]),
    };
    body.push_str(&chart.render());
    body.push_str("</section>\n");
    let page = super::html::report(&items, generated_at, None);
    page.replacen("</p>\n", &format!("</p>\n{body}"), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 61, point 2: a scale-up rerun on flush_log_at_trx_commit=0 and doublewrite
    /// OFF (left by study 4) was called "better"; every setting that differs is named.
    #[test]
    fn compare_names_every_setting_that_differs() {
        let facts = |pairs: &[(&str, &str)]| -> BTreeMap<String, serde_json::Value> {
            pairs.iter().map(|(k, v)| (k.to_string(), serde_json::Value::from(*v))).collect()
        };
        let a = facts(&[
            ("version", "10.11.6-MariaDB"),
            ("innodb_buffer_pool_size", "1073741824"),
            ("innodb_flush_log_at_trx_commit", "2"),
            ("innodb_doublewrite", "ON"),
            ("sync_binlog", "0"),
            ("innodb_log_file_size", "536870912"),
            ("innodb_flush_method", "fsync"),
            ("max_connections", "2000"),
            ("data_bytes", "1000"),
        ]);
        let b = facts(&[
            ("version", "10.11.7-MariaDB"),
            ("innodb_buffer_pool_size", "8388608"),
            ("innodb_flush_log_at_trx_commit", "0"),
            ("innodb_doublewrite", "OFF"),
            ("sync_binlog", "1"),
            ("innodb_log_file_size", "536870912"),
            ("innodb_flush_method", "O_DIRECT"),
            ("max_connections", "2000"),
            ("data_bytes", "2000"),
            ("innodb_io_capacity", "2000"),
        ]);
        let d = settings_differ(&a, &b);
        assert_eq!(
            d,
            [
                "version 10.11.6-MariaDB against 10.11.7-MariaDB",
                "innodb_buffer_pool_size 1G against 8M",
                "innodb_flush_log_at_trx_commit 2 against 0",
                "innodb_flush_method fsync against O_DIRECT",
                "innodb_doublewrite ON against OFF",
                "sync_binlog 0 against 1",
            ]
        );
        let w = settings_warning(&d);
        assert!(w.starts_with("the servers' settings differ: version") && w.contains("not only the change"), "{w}");
        // The same settings (a fact only one side recorded is no difference): no warning.
        assert!(settings_differ(&a, &a).is_empty());
    }

    /// compare_called_noise_significant: two identical configurations run a minute
    /// apart were "+21.1 %, significant (p=0.001)" from the samples inside each run.
    #[test]
    fn compare_called_noise_significant() {
        let a: Vec<f64> = (0..20).map(|i| 1000.0 + (i % 3) as f64).collect();
        let b: Vec<f64> = (0..20).map(|i| 1211.0 + (i % 3) as f64).collect();
        let r = sampled("tps (interval mean)".into(), a, b, false);
        let v = verdict(&r);
        assert!(v.starts_with("these runs differ (p=0.000), better; run-to-run spread unknown"), "{v}");
        assert!(!v.starts_with("significant"), "{v}");
        // With repeats, the test is on the spread between runs: three runs a side that
        // scatter by 10 % cannot tell 1 % apart ...
        let r = repeated("x".into(), vec![1000.0, 1100.0, 900.0], vec![1010.0, 1110.0, 910.0]);
        assert!(verdict(&r).starts_with("not significant between runs"), "{}", verdict(&r));
        // ... and tight repeats can tell 20 %.
        let r = repeated("x".into(), vec![1000.0, 1005.0, 995.0], vec![1200.0, 1195.0, 1205.0]);
        assert!(verdict(&r).starts_with("significant between runs"), "{}", verdict(&r));
        let (lo, hi) = r.a_range.unwrap();
        assert!(lo < 1000.0 && hi > 1000.0 && hi - lo < 30.0, "{lo}..{hi}");
    }
}
