//! The HTML report: one self-contained file (inline CSS, inline SVG, no script, no
//! fetch) with the charts and tables the seed studies publish, and how each figure was
//! obtained. Pure: the caller loads runs and studies and writes the file.

use super::svg::{esc, Band, BarChart, Line, LineChart, Mark, Side};
use crate::result::RunDocument;
use crate::stats::LatencyMs;
use crate::store::StudyRow;
use crate::study::figures::{LevelResult, SeriesResult};
use crate::study::spec::{Kind, StudySpec};
use std::fmt::Write;

/// What a report shows.
pub enum Item {
    Run(Box<RunDocument>),
    Study {
        row: Box<StudyRow>,
        spec: Box<StudySpec>,
        series: Vec<SeriesResult>,
        /// One run of each series (its first), in series order: each configuration's
        /// server settings as they were.
        samples: Vec<(String, RunDocument)>,
    },
}

const STYLE: &str = r#"
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 980px; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; } h3 { margin-top: 1.5em; }
table { border-collapse: collapse; margin: .8em 0; font-size: .9em; display: block; max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
figure.chart { margin: 1em 0; } figure.chart svg { max-width: 100%; height: auto; background: #fff; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
dl.provenance { display: grid; grid-template-columns: max-content auto; gap: .15em 1em; font-size: .85em; background: #fafafa; padding: .6em; border: 1px solid #eee; }
dl.provenance dt { font-weight: bold; } .note { color: #8a4b00; } .muted { color: #666; font-size: .85em; }
section.answer p { font-size: 1.05em; margin: .4em 0; }
ul.warnings { color: #8a4b00; font-size: .9em; margin: .4em 0; padding-left: 1.2em; } ul.warnings li::marker { content: "⚠ "; }
"#;

/// A sizing question to answer from the scale studies in a report: target throughput
/// and scale-out efficiency.
#[derive(Clone, Copy, Debug)]
pub struct Sizing {
    pub target: f64,
    pub efficiency: f64,
}

pub fn report(items: &[Item], generated_at: &str, sizing: Option<Sizing>) -> String {
    report_with("sizeup report", "", items, generated_at, sizing)
}

/// A report titled `title` that opens with `preamble` (HTML: a plan's answer) before
/// the items' answers and sections.
pub fn report_with(title: &str, preamble: &str, items: &[Item], generated_at: &str, sizing: Option<Sizing>) -> String {
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = writeln!(out, "<title>{}</title><style>{STYLE}</style></head><body>", esc(title));
    let _ = writeln!(
        out,
        "<h1>{}</h1><p class=\"muted\">sizeup {} · generated {}</p>",
        esc(title),
        env!("CARGO_PKG_VERSION"),
        esc(generated_at)
    );
    out.push_str(preamble);
    // The answer first, in words, for every study and run in the report.
    let heading = if preamble.is_empty() { "Answer" } else { "What each study found" };
    let _ = writeln!(out, "<section class=\"answer\"><h2>{heading}</h2>");
    for item in items {
        match item {
            Item::Run(doc) => {
                let _ = writeln!(out, "<p>Run {}: {}</p>", doc.id.unwrap_or(0), esc(&super::answer::run(doc)));
            }
            Item::Study { row, spec, .. } if spec.kind() == Kind::Rate => {
                for a in super::capacity::answers(spec, row) {
                    let _ = writeln!(out, "<p>Study {}: {}</p>", row.id, esc(&a));
                }
            }
            Item::Study { row, spec, series, .. } if spec.kind() == Kind::Memory => {
                for a in super::memory::answers(spec, series) {
                    let _ = writeln!(out, "<p>Study {}: {}</p>", row.id, esc(&a));
                }
            }
            Item::Study { row, spec, series, .. } => {
                for s in series {
                    let what = spec.level_name();
                    let label = spec.series_label(&s.name);
                    let answer = super::answer::series(s, spec.kind(), what, &label);
                    let _ = writeln!(out, "<p>Study {}: {}</p>", row.id, esc(&answer));
                }
                for c in super::answer::configurations(spec, series) {
                    let _ = writeln!(out, "<p>Study {}: {}</p>", row.id, esc(&c));
                }
            }
        }
    }
    out.push_str("</section>\n");
    for item in items {
        match item {
            Item::Run(doc) => run_section(&mut out, doc),
            Item::Study { row, spec, series, samples } => {
                study_section(&mut out, row, spec, series, samples);
                if let Some(q) = sizing.filter(|_| spec.kind() == Kind::Scale) {
                    sizing_table(&mut out, spec, series, q);
                }
            }
        }
    }
    out.push_str("</body></html>\n");
    out
}

/// Weak data, said where the data is shown.
fn warnings(out: &mut String, list: &[String]) {
    if list.is_empty() {
        return;
    }
    out.push_str("<ul class=\"warnings\">");
    for w in list {
        let _ = write!(out, "<li>{}</li>", esc(w));
    }
    out.push_str("</ul>\n");
}

fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Versions, server variables, host facts, and the measuring rules.
fn provenance(out: &mut String, config: Option<&crate::result::RunConfig>, extra: &[(&str, String)]) {
    out.push_str("<dl class=\"provenance\">");
    let mut row = |k: &str, v: String| {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(&v));
    };
    if let Some(c) = config {
        let version = if c.sizeup_version.is_empty() { "?" } else { &c.sizeup_version };
        row("tool", format!("sizeup {version}"));
        if let Some(v) = c.server.variable("version") {
            row("server", format!("{v} {}", c.server.variable("version_comment").unwrap_or_default()));
        }
        let vars: Vec<String> = c
            .server
            .variables
            .keys()
            .filter(|k| !k.starts_with("version"))
            .map(|k| format!("{k}={}", c.server.variable(k).unwrap_or_default()))
            .collect();
        if !vars.is_empty() {
            row("server variables", vars.join(", "));
        }
        let h = &c.host;
        row(
            "host",
            format!(
                "{} · {} CPUs · {} · {:.1} GiB · kernel {}",
                h.hostname.as_deref().unwrap_or("?"),
                h.cpus,
                h.cpu_model.as_deref().unwrap_or("?"),
                h.memory_bytes.unwrap_or(0) as f64 / (1u64 << 30) as f64,
                h.kernel.as_deref().unwrap_or("?")
            ),
        );
        let t = &c.target;
        row("target", format!("{} as {}, database {}", t.place(), t.user, t.database));
        if let Some(d) = super::answer::data_vs_pool(c) {
            row("data", d);
        }
        if let Some(tls) = c.server.tls.map(|on| if on { "on" } else { "off" }) {
            let detail = [&c.server.tls_version, &c.server.tls_cipher]
                .into_iter()
                .flatten()
                .filter(|v| !v.is_empty())
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" ");
            row("connection", if detail.is_empty() { format!("TLS {tls}") } else { format!("TLS {tls}: {detail}") });
        }
    }
    // An empty value is a row that does not apply (why a completed study failed).
    for (k, v) in extra.iter().filter(|(_, v)| !v.is_empty()) {
        row(k, v.clone());
    }
    out.push_str("</dl>\n");
}

/// Each configuration's recorded server variables, the settings the study named for
/// it, and its warnings.
fn configuration_settings(out: &mut String, spec: &StudySpec, samples: &[(String, RunDocument)]) {
    out.push_str("<table class=\"configs\"><tr><th class=\"l\">configuration</th><th class=\"l\">settings the study named</th><th class=\"l\">server variables recorded</th></tr>\n");
    let mut all_warnings = Vec::new();
    for c in &spec.configs {
        let doc = samples.iter().find(|(s, _)| s.ends_with(&format!(" @ {}", c.name))).map(|(_, d)| d);
        let named = crate::study::spec::config_settings_text(&spec.server, c);
        let recorded = doc.map_or("no run finished".to_string(), |d| {
            d.config
                .server
                .variables
                .keys()
                .filter(|k| !k.starts_with("version"))
                .map(|k| format!("{k}={}", d.config.server.variable(k).unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", ")
        });
        let _ = writeln!(
            out,
            "<tr data-config=\"{}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(&c.name),
            esc(&c.name),
            esc(&named),
            esc(&recorded)
        );
        if let Some(d) = doc {
            all_warnings.extend(super::answer::config_warnings(d).into_iter().map(|w| format!("{}: {w}", c.name)));
        }
    }
    out.push_str("</table>\n");
    warnings(out, &all_warnings);
}

fn study_section(
    out: &mut String,
    row: &StudyRow,
    spec: &StudySpec,
    series: &[SeriesResult],
    samples: &[(String, RunDocument)],
) {
    let sample = samples.first().map(|(_, d)| d);
    let _ = writeln!(
        out,
        "<section class=\"study\" id=\"study-{}\" data-study=\"{}\"><h2>Study {} — {}</h2>",
        row.id,
        row.id,
        row.id,
        esc(&row.name)
    );
    if !spec.description.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", esc(spec.description.trim()));
    }
    let power = series
        .iter()
        .flat_map(|s| s.levels.iter())
        .find_map(|l| l.observed.os.as_ref().filter(|o| o.watts.is_some()).map(|o| o.power_source.clone()))
        .unwrap_or_else(|| "none (no RAPL counters, no model or constant given)".into());
    let steady = if spec.steady_last < 1.0 {
        format!(
            "median of the last {:.0} % of the {} s samples after warm-up",
            spec.steady_last * 100.0,
            spec.sample_interval
        )
    } else {
        format!("median of the {} s samples after warm-up", spec.sample_interval)
    };
    provenance(
        out,
        sample.map(|d| &d.config),
        &[
            ("study", format!("{} ({}), status {}, started {}", row.kind, row.id, row.status, row.started_at)),
            ("why it failed", row.error().unwrap_or("").to_string()),
            (
                "configuration",
                row.result
                    .as_ref()
                    .and_then(|r| r.get("configuration")?.as_str().map(str::to_string))
                    .unwrap_or_default(),
            ),
            (
                "steps",
                format!(
                    "{} s each after {} s warm-up (excluded), {} repeat(s)",
                    spec.step_time, spec.warmup, spec.repeat
                ),
            ),
            ("headline", steady),
            match spec.rate() {
                Some(r) => ("latency objective", format!("{} (open loop, Poisson arrivals)", r.latency)),
                None => {
                    ("stop conditions", if spec.stop_when.is_empty() { "none".into() } else { spec.stop_when.clone() })
                }
            },
            ("power", power),
        ],
    );
    let notes: Vec<String> = row
        .result
        .as_ref()
        .and_then(|r| r.get("notes"))
        .and_then(|n| serde_json::from_value(n.clone()).ok())
        .unwrap_or_default();
    warnings(out, &notes);
    // A configurations study: each configuration's settings and warnings, as its runs
    // recorded them (not the first one's for all).
    if spec.configs.is_empty() {
        if let Some(doc) = sample {
            warnings(out, &super::answer::config_warnings(doc));
        }
    } else {
        configuration_settings(out, spec, samples);
    }
    if spec.kind() == Kind::Rate {
        super::capacity::html(out, spec, row);
    }
    if spec.kind() == Kind::Memory {
        super::memory::html(out, spec, row.id, series);
        cost_table(out, spec, series);
        out.push_str("</section>\n");
        return;
    }
    let what = spec.level_name();
    for s in series {
        series_section(out, spec, s, what);
    }
    if series.len() > 1 {
        pivot_table(out, series, what);
        comparison_charts(out, series);
    }
    cost_table(out, spec, series);
    out.push_str("</section>\n");
}

fn series_section(out: &mut String, spec: &StudySpec, s: &SeriesResult, what: &str) {
    let _ = writeln!(out, "<h3>{}</h3>", esc(&spec.series_label(&s.name)));
    if s.levels.is_empty() {
        out.push_str("<p>No level finished.</p>");
        return;
    }
    // One level is a point, not a curve: its figures are in the table and, beside the
    // other series, in the comparison charts.
    if s.levels.len() > 1 {
        level_chart(out, s, what);
    }
    if s.efficiency.len() > 1 {
        efficiency_chart(out, s);
    }
    cpu_chart(out, s, what);
    level_table(out, spec, s, what);
    let weak: Vec<String> = s
        .levels
        .iter()
        .flat_map(|l| super::answer::level_warnings(l).into_iter().map(move |w| format!("at {} {what}: {w}", l.level)))
        .collect();
    warnings(out, &weak);
    if let (Some(at), Some(why)) = (s.stopped_at, &s.stop) {
        saturation_table(out, s, at, &why.words, what);
    } else if s.complete {
        // Where it saturates, from the data: the answer at the top says it in full.
        let _ =
            writeln!(out, "<p>{}</p>", esc(&super::answer::series(s, spec.kind(), what, &spec.series_label(&s.name))));
    } else if let Some(why) = super::answer::unfinished(s, what) {
        warnings(out, &[why]);
    }
}

fn level_chart(out: &mut String, s: &SeriesResult, what: &str) {
    let xs: Vec<f64> = s.levels.iter().map(|l| l.level as f64).collect();
    let measured: Vec<(f64, f64)> = s.capacity().map(|l| (l.level as f64, l.throughput.mean)).collect();
    let fit = crate::model::usl::fit(&measured);
    let log_x = xs.len() > 2 && xs.windows(2).all(|w| w[1] >= 2.0 * w[0] - 1e-9);
    let mut marks = Vec::new();
    if let Some((lv, x)) = s.peak {
        marks.push(Mark { x: lv as f64, label: format!("peak {} {}", num(x), s.unit) });
    }
    if let Some(sat) = s.saturation {
        marks.push(Mark { x: sat as f64, label: format!("saturation at {sat} {what}") });
    }
    if let (Some(at), Some(why)) = (s.stopped_at, &s.stop) {
        marks.push(Mark { x: at as f64, label: format!("stop: {why}") });
    }
    let chart = LineChart {
        id: "throughput-latency",
        title: &format!("{}: {} and latency by {what}", s.name, s.unit),
        x_label: what,
        left_label: &s.unit,
        right_label: "latency ms",
        log_x,
        lines: {
            let mut lines = vec![
                Line { name: s.unit.clone(), points: pts(s, |l| l.throughput.mean), side: Side::Left, dashed: false },
                Line { name: "mean ms".into(), points: pts(s, |l| l.latency_avg_ms), side: Side::Right, dashed: true },
                Line { name: "p95 ms".into(), points: pts(s, |l| l.p95_ms), side: Side::Right, dashed: true },
            ];
            if let Ok(f) = &fit {
                // The fitted curve over the measured range, 40 points, on the throughput axis.
                let (a, b) = (xs[0], xs[xs.len() - 1]);
                let grid = (0..=40).map(|i| {
                    let n = if log_x { a * (b / a).powf(i as f64 / 40.0) } else { a + (b - a) * i as f64 / 40.0 };
                    (n, crate::model::usl::predict(f.lambda, f.sigma, f.kappa, n))
                });
                lines.push(Line { name: "USL fit".into(), points: grid.collect(), side: Side::Left, dashed: true });
            }
            lines
        },
        marks,
        bands: vec![],
        x_ticks: None,
    };
    out.push_str(&chart.render());
    let text = match &fit {
        Ok(f) => super::usl_text(&s.name, &s.unit, f),
        Err(e) => format!("USL: cannot fit {}: {e}", s.name),
    };
    let _ = writeln!(out, "<pre class=\"usl\" data-fit=\"{}\">{}</pre>", fit.is_ok(), esc(text.trim_end()));
}

/// Scale-out: e(N) with the repeats' range, against the ideal (1) and the planning
/// guess the sizing guides use (0.9).
fn efficiency_chart(out: &mut String, s: &SeriesResult) {
    let e = &s.efficiency;
    let line = |name: &str, f: &dyn Fn(&crate::study::figures::Efficiency) -> f64, dashed| Line {
        name: name.into(),
        points: e.iter().map(|m| (m.nodes as f64, f(m))).collect(),
        side: Side::Left,
        dashed,
    };
    let chart = LineChart {
        id: "efficiency",
        title: &format!("{}: scale-out efficiency e(N) = X(N) / (N × X(1))", s.name),
        x_label: "nodes",
        left_label: "e(N)",
        right_label: "",
        log_x: false,
        lines: vec![
            line("e(N)", &|m| m.e, false),
            line("lowest repeat", &|m| m.low, true),
            line("highest repeat", &|m| m.high, true),
            line("0.9 (the usual guess)", &|_| 0.9, true),
        ],
        marks: vec![],
        bands: vec![],
        x_ticks: Some(e.iter().map(|m| (m.nodes as f64, m.nodes.to_string())).collect()),
    };
    out.push_str(&chart.render());
}

fn cpu_chart(out: &mut String, s: &SeriesResult, what: &str) {
    if s.levels.iter().any(|l| l.observed.os.is_some()) {
        let os = |f: &dyn Fn(&crate::monitor::os::OsSample) -> f64| {
            s.levels.iter().map(|l| l.observed.os.as_ref().map_or(0.0, f)).collect::<Vec<f64>>()
        };
        let cpu = BarChart {
            id: "cpu",
            title: &format!("{}: host CPU by {what} (as mpstat)", s.name),
            y_label: "% of host CPU",
            categories: s.levels.iter().map(|l| l.level.to_string()).collect(),
            series: vec![
                ("usr".into(), os(&|o| o.usr)),
                ("sys".into(), os(&|o| o.sys + o.irq + o.soft)),
                ("iowait".into(), os(&|o| o.iowait)),
                ("other".into(), os(&|o| o.nice + o.steal)),
                ("idle".into(), os(&|o| o.idle)),
            ],
            stacked: true,
            colours: Some(vec!["#1f77b4", "#d62728", "#ff7f0e", "#9467bd", "#dddddd"]),
            line: None,
            y_max: Some(100.0),
            errors: None,
        };
        out.push_str(&cpu.render());
    }
}

fn pts(s: &SeriesResult, f: impl Fn(&LevelResult) -> f64) -> Vec<(f64, f64)> {
    s.levels.iter().map(|l| (l.level as f64, f(l))).collect()
}

fn level_table(out: &mut String, spec: &StudySpec, s: &SeriesResult, what: &str) {
    let scale = spec.kind() == Kind::Scale;
    let watts = s.levels.iter().any(|l| l.per_watt.is_some());
    let _ = write!(
        out,
        "<table class=\"levels\" data-series=\"{}\"><tr><th>{what}</th><th>{}</th><th>spread</th><th>mean ms</th><th>p95 ms</th><th>p99 ms</th><th>CPU busy %</th><th>server cores</th><th>sizeup cores</th>",
        esc(&s.name),
        esc(&s.unit)
    );
    if scale {
        // The ratio is to the first level measured, which need not be 1 instance.
        let first = s.levels.first().map_or(1, |l| l.level);
        let _ = write!(
            out,
            "<th>per instance</th><th>× {}</th>",
            if first == 1 { "1 instance".into() } else { format!("{first} instances") }
        );
    }
    let out_kind = spec.kind() == Kind::ScaleOut;
    if out_kind {
        out.push_str("<th>per node</th><th>each node's cores</th><th>e(N)</th><th>lag s</th><th>conflicts</th>");
    }
    if watts {
        let _ = write!(out, "<th>W</th><th>{}/W</th>", esc(&s.unit));
    }
    out.push_str("<th class=\"l\">note</th></tr>\n");
    for l in &s.levels {
        let peak = s.peak.is_some_and(|(lv, _)| lv == l.level);
        let x = if peak { format!("<b>{}</b>", num(l.throughput.mean)) } else { num(l.throughput.mean) };
        let spread = if l.throughput.n > 1 {
            format!(
                "{}..{} (n={}, cv {:.1} %)",
                num(l.throughput.min),
                num(l.throughput.max),
                l.throughput.n,
                l.throughput.cv * 100.0
            )
        } else {
            format!("cv {:.1} % over {} samples", l.sample_cv * 100.0, l.samples)
        };
        let os = l.observed.os.clone().unwrap_or_default();
        let _ = write!(
            out,
            "<tr data-level=\"{}\"><td>{}</td><td data-value=\"{}\">{x}</td><td>{spread}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td>",
            l.level,
            l.level,
            l.throughput.mean,
            num(l.latency_avg_ms),
            num(l.p95_ms),
            num(l.p99_ms),
            os.busy().map_or("-".into(), |b| format!("{b:.1}")),
            os.server_cores.map_or("-".into(), |c| format!("{c:.2}")),
            os.client_cores
        );
        if scale {
            let per = l.throughput.mean / l.per_instance.len().max(1) as f64;
            let _ = write!(out, "<td>{}</td><td>{:.2}</td>", num(per), l.ratio_to_first);
        }
        if out_kind {
            let e = s.efficiency.iter().find(|e| e.nodes == l.level);
            let _ = write!(
                out,
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                num(l.throughput.mean / l.level.max(1) as f64),
                if l.per_instance_cores.is_empty() {
                    "-".to_string()
                } else {
                    l.per_instance_cores.iter().map(|c| format!("{c:.2}")).collect::<Vec<_>>().join(" / ")
                },
                e.map_or("-".into(), |e| format!("{:.2} ({:.2}..{:.2})", e.e, e.low, e.high)),
                l.observed.max_lag_s.map_or("-".into(), |v| format!("{v:.0}")),
                l.observed.conflicts.map_or("-".into(), |v| format!("{v:.0}"))
            );
        }
        if watts {
            let _ = write!(
                out,
                "<td>{}</td><td>{}</td>",
                os.watts.map_or("-".into(), num),
                l.per_watt.map_or("-".into(), num)
            );
        }
        let mut note = Vec::new();
        if peak {
            note.push("peak".to_string());
        }
        if s.saturation == Some(l.level) {
            note.push("saturation".into());
        }
        if let Some(why) = &l.stop {
            note.push(format!("stop: {why}"));
        }
        note.extend(super::answer::level_notes(l));
        let _ = writeln!(out, "<td class=\"l\">{}</td></tr>", esc(&note.join("; ")));
    }
    out.push_str("</table>\n");
}

/// The saturation summary as HammerDB-style studies print it.
fn saturation_table(out: &mut String, s: &SeriesResult, at: u32, why: &str, what: &str) {
    let sat = s.saturation.and_then(|lv| s.levels.iter().find(|l| l.level == lv));
    let _ = write!(
        out,
        "<table class=\"saturation\"><tr><th class=\"l\">saturation</th><th>{what}</th><th>{}</th><th>mean ms</th>",
        esc(&s.unit)
    );
    let types: Vec<String> = s.levels[0].p90.iter().map(|p| p.name.clone()).collect();
    for t in &types {
        let _ = write!(out, "<th>{} p90 ms</th>", esc(t));
    }
    out.push_str("</tr>");
    let mut row = |label: &str, l: &LevelResult| {
        let _ = write!(
            out,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(label),
            l.level,
            num(l.throughput.mean),
            num(l.latency_avg_ms)
        );
        for t in &types {
            let v = l.p90.iter().find(|p| &p.name == t).map_or(0.0, |p| p.ms);
            let _ = write!(out, "<td>{}</td>", num(v));
        }
        out.push_str("</tr>");
    };
    if let Some(l) = sat {
        row("saturation point", l);
    }
    if let Some(l) = s.levels.iter().find(|l| l.level == at) {
        row(&format!("stopped: {why}"), l);
    }
    out.push_str("</table>\n");
}

/// Throughput by level with one column per series and each column's maximum in bold
/// (study 1's table).
fn pivot_table(out: &mut String, series: &[SeriesResult], what: &str) {
    let mut levels: Vec<u32> = series.iter().flat_map(|s| s.levels.iter().map(|l| l.level)).collect();
    levels.sort();
    levels.dedup();
    let _ = write!(out, "<h3>{} by {what}</h3><table class=\"pivot\"><tr><th>{what}</th>", esc(&series[0].unit));
    for s in series {
        let _ = write!(out, "<th>{}</th>", esc(&s.name));
    }
    out.push_str("</tr>\n");
    for lv in levels {
        let _ = write!(out, "<tr><td>{lv}</td>");
        for s in series {
            match s.levels.iter().find(|l| l.level == lv) {
                Some(l) if s.peak.is_some_and(|(p, _)| p == lv) => {
                    let _ = write!(out, "<td><b>{}</b></td>", num(l.throughput.mean));
                }
                Some(l) => {
                    let _ = write!(out, "<td>{}</td>", num(l.throughput.mean));
                }
                None => out.push_str("<td>-</td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

/// Configurations side by side at their peaks: throughput bars with mean response time
/// as a line, and throughput per watt where watts are known.
fn comparison_charts(out: &mut String, series: &[SeriesResult]) {
    let peaks: Vec<(&SeriesResult, &LevelResult)> = series
        .iter()
        .filter_map(|s| {
            let (lv, _) = s.peak?;
            Some((s, s.levels.iter().find(|l| l.level == lv)?))
        })
        .collect();
    if peaks.is_empty() {
        return;
    }
    let unit = &series[0].unit;
    let chart = BarChart {
        id: "compare-throughput",
        title: &format!("Peak {unit} and mean response time by series"),
        y_label: unit,
        categories: peaks.iter().map(|(s, _)| s.name.clone()).collect(),
        series: vec![(unit.clone(), peaks.iter().map(|(_, l)| l.throughput.mean).collect())],
        stacked: false,
        colours: None,
        line: Some(("mean ms".into(), peaks.iter().map(|(_, l)| l.latency_avg_ms).collect(), "mean response ms")),
        y_max: None,
        // Each peak's range (± Z standard errors, `study::saturation`).
        errors: Some(vec![peaks
            .iter()
            .map(|(_, l)| {
                let (x, se) = (l.throughput.mean, crate::study::saturation::standard_error(l));
                let z = crate::study::saturation::Z;
                Some((x - z * se, x + z * se))
            })
            .collect()]),
    };
    out.push_str(&chart.render());
    if peaks.iter().all(|(_, l)| l.per_watt.is_some()) {
        let chart = BarChart {
            id: "compare-per-watt",
            title: &format!("{unit} per watt at the peak"),
            y_label: &format!("{unit}/W"),
            categories: peaks.iter().map(|(s, _)| s.name.clone()).collect(),
            series: vec![(format!("{unit}/W"), peaks.iter().map(|(_, l)| l.per_watt.unwrap_or(0.0)).collect())],
            stacked: false,
            colours: Some(vec!["#2ca02c"]),
            line: None,
            y_max: None,
            errors: None,
        };
        out.push_str(&chart.render());
    }
}

/// Servers needed for the target, scale-up first against one instance per server.
fn sizing_table(out: &mut String, spec: &StudySpec, series: &[SeriesResult], q: Sizing) {
    for s in series {
        let _ = writeln!(out, "<h3>Sizing: {} {} from {}</h3>", num(q.target), esc(&s.unit), esc(&s.name));
        if let Some(why) = super::answer::unfinished(s, spec.level_name()) {
            warnings(out, &[format!("{why}: the plan uses the levels it finished")]);
        }
        match crate::model::sizing::plans(s, q.target, &crate::model::sizing::ScaleOut::Given(q.efficiency), &[]) {
            Ok(plans) => {
                let _ = writeln!(
                    out,
                    "<table class=\"sizing\"><tr><th class=\"l\">plan</th><th>instances per server</th><th>{} per server</th><th>servers</th><th>TCO</th></tr>",
                    esc(&s.unit)
                );
                for p in &plans {
                    let tco = match (spec.cost_of(&s.name), p.watts) {
                        (Some(c), Some(w)) => {
                            format!("{}{:.0}", esc(&c.currency), c.tco(w, p.per_server).total * p.servers as f64)
                        }
                        _ => "-".into(),
                    };
                    let _ = writeln!(
                        out,
                        "<tr data-plan=\"{}\"><td class=\"l\">{}</td><td>{}</td><td>{} [{}-{}]</td><td>{}</td><td>{tco}</td></tr>",
                        esc(&p.name),
                        esc(&p.name),
                        p.instances_per_server,
                        num(p.per_server),
                        num(p.per_server_range.0),
                        num(p.per_server_range.1),
                        esc(&p.servers_text())
                    );
                }
                let weak: Vec<String> =
                    plans.iter().flat_map(|p| p.weak.iter().map(move |w| format!("{}: {w}", p.name))).collect();
                warnings(out, &weak);
                let _ = writeln!(
                    out,
                    "</table><p class=\"muted\">servers = ceil(T / (P × E)), E = {} given (scale-out is not measured); in brackets, P's range (± 2 standard errors) and the servers at its ends.</p>",
                    q.efficiency
                );
            }
            Err(e) => {
                let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&e.to_string()));
            }
        }
    }
}

/// TCO and cost per transaction at each series' peak (SPEC study 4's table), where
/// cost inputs and watts are known.
fn cost_table(out: &mut String, spec: &StudySpec, series: &[SeriesResult]) {
    // A scale-out peak is N nodes' throughput against one server's cost (and, in the
    // lab, one host's watts): `sizeup size --from` prices whole plans instead.
    if spec.kind() == Kind::ScaleOut {
        if series.iter().any(|s| spec.cost_of(&s.name).is_some()) {
            out.push_str("<p class=\"muted\">Cost per transaction is not given at a scale-out peak (several servers' throughput); `sizeup size --from` prices whole plans.</p>\n");
        }
        return;
    }
    let rows: Vec<(&SeriesResult, &LevelResult, &crate::cost::CostInputs, f64)> = series
        .iter()
        .filter_map(|s| {
            let (lv, _) = s.peak?;
            let l = s.levels.iter().find(|l| l.level == lv)?;
            Some((s, l, spec.cost_of(&s.name)?, l.observed.os.as_ref()?.watts?))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let c = rows[0].2;
    let _ = writeln!(
        out,
        "<h3>Cost per transaction</h3><table class=\"cost\"><tr><th class=\"l\">series</th><th>peak {}</th><th>W</th><th>capex</th><th>energy kWh ({} years, cooling ×{})</th><th>energy cost</th><th>TCO</th><th>cost per {}</th></tr>",
        esc(&rows[0].0.unit),
        c.years,
        c.cooling_factor,
        esc(&rows[0].0.unit)
    );
    for (s, l, c, w) in &rows {
        let t = c.tco(*w, l.throughput.mean);
        let m = |v: f64| format!("{}{:.0}", esc(&c.currency), v);
        // The peak's range carries into the cost per transaction.
        let (lo, hi) = crate::study::saturation::range(l);
        let per = |x: f64| if x > 0.0 { format!("{:.3}", t.total / x) } else { "-".into() };
        let _ = writeln!(
            out,
            "<tr data-series=\"{}\"><td class=\"l\">{}</td><td>{} [{}-{}]</td><td>{:.0}</td><td>{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}{:.3} [{}-{}]</td></tr>",
            esc(&s.name),
            esc(&s.name),
            num(l.throughput.mean),
            num(lo),
            num(hi),
            w,
            m(t.capex),
            t.energy_kwh,
            m(t.energy_cost),
            m(t.total),
            esc(&c.currency),
            t.per_throughput,
            per(hi),
            per(lo)
        );
    }
    let source = rows[0].1.observed.os.as_ref().map_or(String::new(), |o| o.power_source.clone());
    let _ = writeln!(out, "</table><p class=\"muted\">Watts {source}; TCO = capex + kWh × price, kWh = W × hours × years × cooling factor; in brackets, the peak's range (± 2 standard errors) and the cost per transaction at its ends.</p>");
}

fn run_section(out: &mut String, doc: &RunDocument) {
    let workload = doc.config.workload.as_str();
    let kind = crate::workload::kind_of_result(&doc.config.workload);
    let id = doc.id.unwrap_or(0);
    let threads = doc.config.run.threads;
    let _ = writeln!(
        out,
        "<section class=\"run\" data-run=\"{id}\"><h2>Run {id} — {} at {threads} {}, {}</h2>",
        esc(workload),
        kind.level_name(),
        esc(doc.status.as_str())
    );
    let unit = kind.unit().label();
    let value = |iv: &crate::stats::Interval| kind.throughput(iv);
    let warmup = doc.config.run.warmup.as_secs_f64();
    let samples = doc.intervals.iter().filter(|iv| !iv.warmup).count();
    let power =
        doc.summary.as_ref().and_then(|s| s.observed.os.as_ref()).map_or("none".into(), |o| o.power_source.clone());
    provenance(
        out,
        Some(&doc.config),
        &[("measured", format!("{samples} interval samples after {warmup} s warm-up (excluded)")), ("power", power)],
    );
    if let Some(e) = &doc.error {
        let _ = writeln!(out, "<p class=\"note\">stopped by: {}</p>", esc(e));
    }
    warnings(out, &super::answer::config_warnings(doc));
    if !doc.intervals.is_empty() {
        let end = doc.intervals.last().map_or(0.0, |iv| iv.t);
        let first_steady = doc.intervals.iter().find(|iv| !iv.warmup).map_or(end, |iv| iv.t - iv.duration);
        let mut bands = Vec::new();
        if first_steady > 0.0 {
            bands.push(Band { from: 0.0, to: first_steady, label: "warm-up".into(), colour: "#999999" });
        }
        bands.push(Band { from: first_steady, to: end, label: "steady state".into(), colour: "#2ca02c" });
        let chart = LineChart {
            id: "intervals",
            title: &format!("Run {id}: {unit} per interval"),
            x_label: "seconds",
            left_label: unit,
            right_label: "p95 ms",
            log_x: false,
            lines: vec![
                Line {
                    name: unit.into(),
                    points: doc.intervals.iter().map(|iv| (iv.t, value(iv))).collect(),
                    side: Side::Left,
                    dashed: false,
                },
                Line {
                    name: "p95 ms".into(),
                    points: doc.intervals.iter().map(|iv| (iv.t, iv.p95_ms)).collect(),
                    side: Side::Right,
                    dashed: true,
                },
            ],
            marks: vec![],
            bands,
            x_ticks: None,
        };
        out.push_str(&chart.render());
    }
    let Some(s) = &doc.summary else {
        out.push_str("</section>\n");
        return;
    };
    // Types with a response-time limit (TPC-C's clause 5.2.5.3) get a column for it.
    let limits = s.types.iter().any(|t| t.p90_limit_ms.is_some());
    let _ = writeln!(
        out,
        "<table class=\"percentiles\"><tr><th class=\"l\">type</th><th>count</th><th>avg ms</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>max</th>{}</tr>",
        if limits { "<th>p90 limit</th>" } else { "" }
    );
    let mut row = |name: &str, n: u64, l: &LatencyMs, limit: String| {
        let _ = writeln!(
            out,
            "<tr data-type=\"{}\"><td class=\"l\">{}</td><td>{n}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{limit}</tr>",
            esc(name),
            esc(name),
            num(l.avg),
            num(l.p50),
            num(l.p90),
            num(l.p95),
            num(l.p99),
            num(l.max)
        );
    };
    for t in s.types.iter().filter(|_| s.types.len() > 1) {
        let limit = match (limits, t.p90_limit_ms, t.p90_within_limit) {
            (true, Some(ms), Some(ok)) => format!("<td>{} {} s</td>", if ok { "within" } else { "OVER" }, ms / 1000.0),
            (true, ..) => "<td>-</td>".into(),
            _ => String::new(),
        };
        row(&t.name, t.transactions, &t.latency_ms, limit);
    }
    row("all", s.transactions, &s.latency_ms, if limits { "<td></td>".into() } else { String::new() });
    out.push_str("</table>\n");
    let _ = writeln!(
        out,
        "<p>{} {} over {:.0} s; {} errors retried, {} reconnects.</p>",
        num(if kind.unit() == crate::workload::Unit::Nopm { s.nopm.unwrap_or(0.0) } else { s.tps }),
        unit,
        s.seconds,
        s.errors,
        s.reconnects
    );
    status_table(out, doc, s);
    percentile_curve(out, doc, id);
    for n in &s.observed.notes {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(n));
    }
    out.push_str("</section>\n");
}

/// The server's status counters over the steady state (`SHOW GLOBAL STATUS` deltas),
/// and how many steady-state intervals had a reading: the others are gaps, left out.
fn status_table(out: &mut String, doc: &RunDocument, s: &crate::stats::Summary) {
    if s.observed.status.is_none() {
        return;
    }
    let steady = doc.intervals.iter().filter(|iv| !iv.warmup);
    let (read, all) = steady.fold((0, 0), |(r, a), iv| (r + usize::from(iv.status.is_some()), a + 1));
    out.push_str("<table class=\"status\"><tr><th class=\"l\">server status (steady-state mean)</th><th class=\"l\">value</th></tr>\n");
    for (name, v) in super::status_rows(s) {
        let _ = writeln!(out, "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>", esc(name), esc(&v));
    }
    let _ = writeln!(
        out,
        "</table><p class=\"muted\">SHOW GLOBAL STATUS deltas read every interval: {read} of {all} steady-state \
         intervals have a reading (an interval without one is a gap, not a zero).</p>"
    );
}

/// Latency against percentile from the stored HDR histograms, one line per type, on the
/// usual log scale of 1 / (1 - q).
fn percentile_curve(out: &mut String, doc: &RunDocument, id: i64) {
    const QS: [f64; 9] = [0.0, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999];
    let x = |q: f64| (1.0 / (1.0 - q)).log10();
    let mut lines = Vec::new();
    for (name, enc) in &doc.histograms {
        let Ok(h) = crate::stats::decode_histogram(enc) else { continue };
        if h.is_empty() {
            continue;
        }
        let points = QS.iter().map(|&q| (x(q), h.value_at_quantile(q) as f64 / 1000.0)).collect();
        lines.push(Line { name: name.clone(), points, side: Side::Left, dashed: false });
    }
    if lines.is_empty() {
        return;
    }
    let ticks =
        [(0.0, "0%"), (x(0.5), "50%"), (x(0.9), "90%"), (x(0.99), "99%"), (x(0.999), "99.9%"), (x(0.9999), "99.99%")]
            .iter()
            .map(|(v, l)| (*v, l.to_string()))
            .collect();
    let chart = LineChart {
        id: "percentiles",
        title: &format!("Run {id}: latency by percentile (HDR histograms, steady state)"),
        x_label: "percentile",
        left_label: "latency ms",
        right_label: "",
        log_x: false,
        lines,
        marks: vec![],
        bands: vec![],
        x_ticks: Some(ticks),
    };
    out.push_str(&chart.render());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::figures::{series_result, StepFigures};
    use crate::study::steady::Steady;

    #[test]
    fn a_run_shows_its_server_status_and_counts_its_gaps() {
        use crate::monitor::status::StatusSample;
        let names = vec!["point_select".to_string()];
        let rec = crate::stats::Recorder::new(1);
        let sample = StatusSample {
            seconds: 1.0,
            buffer_pool_read_requests_per_s: Some(4000.0),
            buffer_pool_reads_per_s: Some(400.0),
            buffer_pool_hit_ratio: Some(0.9),
            ..Default::default()
        };
        let intervals: Vec<crate::stats::Interval> = (1..=3)
            .map(|k| {
                let mut iv = crate::stats::Interval::from_recorder(&rec, &names, k as f64, 1.0, k == 1, 2, 95.0);
                // The second interval had no reading.
                iv.status = (k != 2).then(|| sample.clone());
                iv
            })
            .collect();
        let mut summary = crate::stats::Summary::from_recorder(&rec, &names, 2.0, 0);
        summary.tps = 800.0;
        summary.observed.status = Some(sample);
        let doc = RunDocument {
            id: Some(3),
            status: crate::store::Status::Completed,
            error: None,
            config: serde_json::from_value(serde_json::json!({"workload": "oltp_point_select", "run": {"threads": 2}}))
                .unwrap(),
            summary: Some(summary),
            intervals,
            histograms: Default::default(),
        };
        let html = report(&[Item::Run(Box::new(doc))], "now", None);
        let table = &html[html.find("<table class=\"status\">").expect("status table")..];
        assert!(table.contains("4000 / 400 per s  (hit ratio 90.00 %; 0.500 misses per transaction)"), "{table}");
        assert!(table.contains("1 of 2 steady-state intervals have a reading"), "{table}");
    }

    #[test]
    fn a_study_with_cost_inputs_gets_its_cost_table() {
        let spec = StudySpec::from_toml(
            "name='c'\nkind='sweep'\nworkloads=['oltp_read_write']\nlevels=[8]\nstep_time=5\n\
             [cost]\nserver_capex=10000\ndevices=4\ndevice_capex=500\npower_price_kwh=0.1\ncooling_factor=1.5\nyears=4",
            "c",
        )
        .unwrap();
        let step = StepFigures {
            unit: "tps".into(),
            throughput: Steady::flat(2000.0, 4),
            tps: 2000.0,
            observed: crate::stats::Observed {
                os: Some(crate::monitor::os::OsSample {
                    watts: Some(200.0),
                    power_source: "given".into(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let series = vec![series_result("oltp_read_write", &[8], 1, &[(8, step)], &[])];
        let row = StudyRow {
            id: 1,
            name: "c".into(),
            kind: "sweep".into(),
            started_at: "t".into(),
            finished_at: None,
            status: crate::store::Status::Completed,
            spec: serde_json::Value::Null,
            result: None,
            steps: vec![],
        };
        let html = report(
            &[Item::Study { row: Box::new(row), spec: Box::new(spec), series, samples: Vec::new() }],
            "now",
            None,
        );
        let table = &html[html.find("<table class=\"cost\">").expect("cost table")..];
        let table = &table[..table.find("</table>").unwrap()];
        // The hand-computed case of cost::tests: $13,052 TCO, $6.526 per tps.
        assert!(table.contains("<td>$12000</td>") && table.contains("<td>$13052</td>"), "{table}");
        // With the peak's range (one run: ± 2 x 2.5 %) carried into the cost per tps.
        assert!(
            table.contains("<td>2000 [1900-2100]</td>") && table.contains("<td>$6.526 [6.215-6.869]</td>"),
            "{table}"
        );
        assert!(html.contains("Watts given"));
    }
}
