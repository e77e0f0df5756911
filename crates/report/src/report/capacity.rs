//! A rate study shown: its levels as a table (text and HTML), the latency-against-
//! throughput chart with the objective drawn on it and the knee marked, and the answer.

use super::svg::{esc, Line, LineChart, Mark, Side};
use crate::store::StudyRow;
use crate::study::capacity::{self, ms_text, Objective, RateFigures, Verdict};
use crate::study::figures::StepFigures;
use crate::study::spec::StudySpec;
use crate::study::{completed_steps, probe_series, rate_levels, series_of};
use std::fmt::Write;

type Level = (u32, RateFigures, Verdict);
/// A series: its name, its levels by rate, and its closed-loop probe (threads, figures).
type SeriesLevels = (String, Vec<Level>, Option<(u32, StepFigures)>);

/// Each series: its name, its levels by rate, and its closed-loop probe.
fn series(spec: &StudySpec, row: &StudyRow) -> Vec<SeriesLevels> {
    series_of(spec)
        .into_iter()
        .map(|s| {
            let mut levels = rate_levels(row, &s.name);
            levels.sort_by_key(|(r, _, _)| *r);
            let probe = completed_steps(row, &probe_series(&s.name)).into_iter().next();
            (s.name, levels, probe)
        })
        .collect()
}

/// The study's stored objectives. Validated when the study was made, so an error here
/// is a study a later or earlier release stored: said, never read as "no objective".
fn objectives(spec: &StudySpec) -> Result<Vec<Objective>, crate::error::Invalid> {
    match spec.rate() {
        Some(r) => r.objectives().map_err(|e| e.found_in("the study's stored objective cannot be read")),
        None => Ok(Vec::new()),
    }
}

fn resolution(spec: &StudySpec) -> f64 {
    spec.rate().map_or(0.05, |r| r.resolution())
}

/// The answer per series, with the closed-loop probe beside it.
pub fn answers(spec: &StudySpec, row: &StudyRow) -> Vec<String> {
    let objectives = match objectives(spec) {
        Ok(o) => o,
        Err(e) => return vec![format!("{e}: no capacity is answered")],
    };
    series(spec, row)
        .into_iter()
        .map(|(name, levels, probe)| {
            let mut a = format!("{name}: {}", capacity::answer(&levels, &objectives, resolution(spec)));
            // What ran out where it broke: the host's CPU, by who used it.
            let tried: Vec<(u32, Verdict)> = levels.iter().map(|(r, _, v)| (*r, v.clone())).collect();
            if let (_, Some(hi)) = capacity::bracket(&tried) {
                let os =
                    completed_steps(row, &name).into_iter().find(|(l, _)| *l == hi).and_then(|(_, f)| f.observed.os);
                let unit = capacity::RateUnit::of(&levels);
                if let Some(o) = &os {
                    a += &ran_out_at(o, &capacity::rate_text(hi as f64, unit));
                }
                if let (capacity::RateUnit::Replay(_), Some((_, f, _))) = (unit, levels.iter().find(|l| l.0 == hi)) {
                    a += &broke_first(f, &objectives, &capacity::rate_text(hi as f64, unit));
                }
            }
            if let Some((threads, f)) = probe {
                let _ = write!(
                    a,
                    " (For scale: a closed loop of {threads} connections gave {:.0} tps, p99 {}; a closed loop's \
                     latency is whatever its queue makes it, an open loop's is held to the arrivals.)",
                    f.tps,
                    ms_text(f.latency_ms.p99)
                );
            }
            a
        })
        .collect()
}

/// A replay's digests whose latency broke the objectives first, at the rate that
/// broke them.
fn broke_first(f: &RateFigures, objectives: &[Objective], rate: &str) -> String {
    let mut out = String::new();
    for o in objectives {
        let over = capacity::digests_over(f, o, 3);
        if over.is_empty() {
            continue;
        }
        let said: Vec<String> = over
            .iter()
            .map(|(d, ms)| format!("`{}` ({} {})", short_digest(d), capacity::kept_percentile(o), ms_text(*ms)))
            .collect();
        let _ = write!(out, " The digests over {} at {rate}, worst first: {}.", o.label(), said.join(", "));
    }
    out
}

/// A digest short enough for a sentence.
fn short_digest(d: &str) -> String {
    const MOST: usize = 80;
    match d.char_indices().nth(MOST) {
        Some((i, _)) => format!("{}...", &d[..i]),
        None => d.to_string(),
    }
}

/// What the host's CPU says at the rate that broke the objective. The CPU ran out only
/// for a server whose process sizeup watched: an unwatched one's CPU is among the
/// "others", so a busy host says nothing of it (the_capacity_answer_blames_no_cpu_it_did_not_watch).
fn ran_out_at(o: &crate::monitor::os::OsSample, rate: &str) -> String {
    // The threshold `bottleneck::findings` uses, so the answer and the tables agree.
    use crate::study::bottleneck::CPU_BUSY;
    let Some(busy) = o.busy() else { return String::new() };
    let users = crate::study::bottleneck::cpu_users(o);
    match (&o.server_host, o.server_cores) {
        (Some(h), _) => format!(
            " At {rate} the server host's CPU was {:.0} % busy (node_exporter: {}){}.",
            h.busy(),
            h.words(),
            if h.busy() >= CPU_BUSY { ": the server host's CPU ran out" } else { "" }
        ),
        (None, Some(_)) => {
            format!(
                " At {rate} the host's CPU was {busy:.0} % busy ({users}){}.",
                if busy >= CPU_BUSY { ": the CPU ran out" } else { "" }
            )
        }
        (None, None) => format!(
            " At {rate} the host's CPU was {busy:.0} % busy ({users}); the server's process was not watched (not \
             found on this host), so what ran out is not known."
        ),
    }
}

fn verdict_text(v: &Verdict) -> String {
    v.short()
}

/// The worst type's corrected percentiles at a level.
fn worst(f: &RateFigures) -> (f64, f64, f64, f64) {
    f.types.iter().fold((0.0, 0.0, 0.0, 0.0), |a, t| (a.0.max(t.p50), a.1.max(t.p95), a.2.max(t.p99), a.3.max(t.p999)))
}

/// The text tables `study run` and `study show` print.
pub fn tables(spec: &StudySpec, row: &StudyRow) -> String {
    let mut out = String::new();
    let goal: Vec<String> = match objectives(spec) {
        Ok(o) => o.iter().map(Objective::label).collect(),
        Err(e) => vec![format!("(an objective that cannot be read: {e})")],
    };
    for (name, levels, _) in series(spec, row) {
        let _ = writeln!(out, "\n{name} against {} (latency from each arrival's intended start)", goal.join(" and "));
        let _ = writeln!(
            out,
            "  {:>9} {:>9} {:>7} {:>6} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8} {:>5}  verdict",
            "offered",
            "achieved",
            "behind",
            "conns",
            "in system",
            "backlog",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "p99.9 ms",
            "cpu"
        );
        for (rate, f, v) in &levels {
            let (p50, p95, p99, p999) = worst(f);
            let cpu = step_cpu(row, &name, *rate).map_or("-".to_string(), |c| format!("{c:.0}"));
            let _ = writeln!(
                out,
                "  {:>9} {:>9.0} {:>6.1}% {:>6} {:>9.1} {:>7} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>5}  {}",
                rate,
                f.achieved,
                f.behind_pct(),
                f.connections,
                f.in_flight_mean,
                f.max_backlog,
                p50,
                p95,
                p99,
                p999,
                cpu,
                verdict_text(v)
            );
        }
        if let Some(k) = capacity::knee(&levels) {
            let k = capacity::rate_text(k as f64, capacity::RateUnit::of(&levels));
            let _ = writeln!(out, "  knee: latency stays within twice the lightest level's up to {k}");
        }
    }
    for a in answers(spec, row) {
        let _ = writeln!(out, "\n{a}");
    }
    out
}

/// The host CPU busy share of a level's step, when sampled.
fn step_cpu(row: &StudyRow, series: &str, rate: u32) -> Option<f64> {
    completed_steps(row, series).into_iter().find(|(l, _)| *l == rate)?.1.observed.os?.busy()
}

/// The HTML section of a rate study: chart, then table.
pub fn html(out: &mut String, spec: &StudySpec, row: &StudyRow) {
    let objectives = match objectives(spec) {
        Ok(o) => o,
        Err(e) => {
            let _ = writeln!(out, "<p class=\"muted\">{}</p>", esc(&e.to_string()));
            return;
        }
    };
    let Some(first) = objectives.first() else { return };
    for (i, (name, levels, _)) in series(spec, row).into_iter().enumerate() {
        let _ = writeln!(out, "<h3>{}</h3>", esc(&name));
        if levels.is_empty() {
            out.push_str("<p class=\"muted\">No rate level finished.</p>\n");
            continue;
        }
        // Levels far past the objective would flatten the curve: drawn at 4x it, said.
        let ceiling = first.below_ms * 4.0;
        let at = |f: &RateFigures| f.measured.first().map_or(0.0, |m| m.ms);
        let clipped = levels.iter().any(|(_, f, _)| at(f) > ceiling);
        let points: Vec<(f64, f64)> = levels.iter().map(|(_, f, _)| (f.achieved, at(f).min(ceiling))).collect();
        let x_end = points.iter().map(|p| p.0).fold(0.0, f64::max);
        let mut marks = Vec::new();
        let tried: Vec<(u32, Verdict)> = levels.iter().map(|(r, _, v)| (*r, v.clone())).collect();
        if let (Some(lo), _) = capacity::bracket(&tried) {
            if let Some((_, f, _)) = levels.iter().find(|(r, _, _)| *r == lo) {
                marks.push(Mark { x: f.achieved, label: format!("sustains {lo} tps") });
            }
        }
        if let Some(k) = capacity::knee(&levels) {
            if let Some((_, f, _)) = levels.iter().find(|(r, _, _)| *r == k) {
                marks.push(Mark { x: f.achieved, label: "knee".into() });
            }
        }
        let id = format!("rate-{}-{i}", row.id);
        let title = format!("{} against throughput", first.name());
        let chart = LineChart {
            id: &id,
            title: &title,
            x_label: "achieved tps (open loop)",
            left_label: "ms",
            right_label: "",
            log_x: false,
            lines: vec![
                Line {
                    name: format!(
                        "{} (corrected){}",
                        first.name(),
                        if clipped { ", drawn at most 4x the objective" } else { "" }
                    ),
                    points,
                    side: Side::Left,
                    dashed: false,
                },
                Line {
                    name: format!("objective {}", first.label()),
                    points: vec![(0.0, first.below_ms), (x_end, first.below_ms)],
                    side: Side::Left,
                    dashed: true,
                },
            ],
            marks,
            bands: Vec::new(),
            x_ticks: None,
        };
        let _ = writeln!(out, "<figure class=\"chart\">{}</figure>", chart.render());
        out.push_str(
            "<table><tr><th>offered tps</th><th>achieved tps</th><th>behind</th><th>connections</th>\
             <th>in system</th><th>backlog</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>p99.9 ms</th>\
             <th class=\"l\">verdict</th></tr>\n",
        );
        for (rate, f, v) in &levels {
            let (p50, p95, p99, p999) = worst(f);
            let _ = writeln!(
                out,
                "<tr><td>{rate}</td><td>{:.0}</td><td>{:.1} %</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{p50:.2}</td>\
                 <td>{p95:.2}</td><td>{p99:.2}</td><td>{p999:.2}</td><td class=\"l\">{}</td></tr>",
                f.achieved,
                f.behind_pct(),
                f.connections,
                f.in_flight_mean,
                f.max_backlog,
                esc(&verdict_text(v))
            );
        }
        out.push_str("</table>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::os::OsSample;

    #[test]
    fn the_capacity_answer_blames_no_cpu_it_did_not_watch() {
        // Dolt on a busy host: not found, so not watched; other programs used the CPU.
        let host = OsSample {
            usr: 90.0,
            sys: 10.0,
            host_cpus: Some(2),
            client_cores: 0.09,
            other_cores: Some(1.73),
            ..Default::default()
        };
        let said = ran_out_at(&host, "1 tps");
        assert!(!said.contains("ran out:") && !said.contains("the CPU ran out"), "{said}");
        assert!(said.contains("what ran out is not known"), "{said}");
        assert!(said.contains("the server's among them"), "{said}");
        // The same host with the server's process watched: its CPU ran out.
        let watched = OsSample { server_cores: Some(1.6), other_cores: Some(0.1), ..host };
        let said = ran_out_at(&watched, "1 tps");
        assert!(said.ends_with(": the CPU ran out."), "{said}");
        assert!(said.contains("server 1.60"), "{said}");
    }

    /// an_unreadable_objective_is_said: a stored objective that did not parse was
    /// dropped, and the capacity answered against no objective at all.
    #[test]
    fn an_unreadable_objective_is_said() {
        let mut spec = StudySpec::from_toml(
            "name = \"c\"\nkind = \"rate\"\nworkloads = [\"oltp_point_select\"]\nlevels = \"auto\"\n\
             step_time = 10\n[rate]\nlatency = \"p99<20ms\"\n",
            "c",
        )
        .unwrap();
        let crate::study::spec::Section::Rate(rate) = &mut spec.section else { panic!("a rate study") };
        rate.latency = "p99 under 20 ms".into();
        let row = StudyRow::default();
        let said = answers(&spec, &row);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("the study's stored objective cannot be read: --latency 'p99 under 20 ms'"),
            "{said:?}"
        );
        assert!(said[0].ends_with("no capacity is answered"), "{said:?}");
        let mut html_out = String::new();
        html(&mut html_out, &spec, &row);
        assert!(html_out.contains("cannot be read"), "{html_out}");
    }
}
