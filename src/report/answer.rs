//! The answer in words, and the warnings a reviewer needs beside the figures: what a
//! study or run found (peak, saturation level, what limited it), and where the data is
//! weak (spread, few samples, a non-durable server, modelled watts, the load generator
//! as the bottleneck). Pure: figures in, sentences out, so tests check the numbers.

use crate::result::RunDocument;
use crate::study::figures::{LevelResult, SeriesResult};

/// A level's samples vary too much to quote one figure without its spread (CV above this).
pub const HIGH_CV: f64 = 0.10;
/// Fewer interval samples than this make a median that a single hiccup can move.
pub const FEW_SAMPLES: usize = 5;

/// What limited a series, in words, from the stop condition it met.
pub fn limit(stop: &str) -> &'static str {
    if stop.starts_with("CPU") {
        "the limit was CPU"
    } else if stop.contains(" p90 ") {
        "the limit was the latency bound"
    } else if stop.starts_with("plateau") {
        "throughput stopped growing (a plateau)"
    } else if stop.starts_with("kink") {
        "response time bent upward (a kink: added load became waiting)"
    } else if stop.contains("lag") {
        "the limit was replication lag"
    } else {
        "a stop condition was met"
    }
}

fn fmt(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// One or two sentences for a series of a study: its peak, where it saturated, why.
/// "1 node", "4 nodes": the level word in the singular for one.
fn count(n: u32, what: &str) -> String {
    match (n, what.strip_suffix('s')) {
        (1, Some(one)) => format!("1 {one}"),
        _ => format!("{n} {what}"),
    }
}

/// `label` says what the figures are of (the series' workload, or more: see
/// `StudySpec::series_label`).
pub fn series(s: &SeriesResult, what: &str, label: &str) -> String {
    let Some((peak_level, peak)) = s.peak else {
        if let (Some(l), Some(why)) = (s.levels.first(), &s.stop) {
            return format!(
                "{label}: already its first level ({}) broke the study's bound ({why}), so there is no capacity \
                 figure within it: try fewer {what}.",
                count(l.level, what)
            );
        }
        return format!("{label}: no level finished, so there is no answer yet.");
    };
    let mut out = format!("{label} carried {} {} at {}", fmt(peak), s.unit, count(peak_level, what));
    match (&s.stop, s.stopped_at) {
        (Some(why), Some(at)) => {
            match s.saturation {
                Some(sat) => out += &format!("; it saturated at {}", count(sat, what)),
                None => out += &format!("; it was saturated from the first level ({})", count(at, what)),
            }
            out += &format!(": {} ({why} at {}).", limit(why), count(at, what));
        }
        _ if !s.complete => out += &format!("; {}.", unfinished(s, what).expect("unfinished")),
        _ => {
            let last = s.levels.last().map_or(0, |l| l.level);
            out += &format!(
                "; no stop condition was met up to {}, so its limit lies beyond the levels tried.",
                count(last, what)
            );
        }
    }
    if let Some(l) = s.levels.iter().find(|l| l.over_bound) {
        out += &format!(
            " The figures at {} broke the study's bound and are not counted as capacity.",
            count(l.level, what)
        );
    }
    if let Some(last) = s.efficiency.iter().filter(|e| e.nodes > 1).max_by_key(|e| e.nodes) {
        out += &format!(
            " Scale-out efficiency at {} nodes: e = {:.2} ({:.2}..{:.2} over the repeats), each node keeping {:.0} % of one node's throughput.",
            last.nodes,
            last.e,
            last.low,
            last.high,
            last.e * 100.0
        );
    }
    if let Some(note) = load_generator(s) {
        out += &format!(" {note}");
    }
    out
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
    n.extend(l.notes.iter().cloned());
    n
}

fn load_generator(s: &SeriesResult) -> Option<String> {
    let l = s.levels.iter().find(|l| l.notes.iter().any(|n| n.starts_with(crate::monitor::os::LOAD_GENERATOR)))?;
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

/// Warnings about how a run's server and figures were set up.
pub fn config_warnings(doc: &RunDocument) -> Vec<String> {
    let mut w = Vec::new();
    let c = &doc.config;
    let fact = |k: &str| c.server_fact(k);
    if let Some(v) = fact("innodb_flush_log_at_trx_commit").filter(|v| v != "1") {
        w.push(format!(
            "non-durable: innodb_flush_log_at_trx_commit={v} (a crash can lose the last second of commits)"
        ));
    }
    let binlog_on = fact("log_bin").is_some_and(|v| v.eq_ignore_ascii_case("ON") || v == "1");
    if binlog_on && fact("sync_binlog").as_deref() == Some("0") {
        w.push("non-durable: sync_binlog=0 with the binary log on".into());
    }
    if let Some(lab) = fact("lab").filter(|l| l.starts_with("emulated")) {
        w.push(format!("lab node: {lab}, not a separate server"));
    }
    if let Some(os) = doc.summary.as_ref().and_then(|s| s.os.as_ref()) {
        if os.watts.is_some() && os.power_source != "measured" {
            w.push(format!("watts are {} (not measured)", os.power_source));
        }
    }
    if let Some(s) = &doc.summary {
        for n in s.notes.iter().filter(|n| n.starts_with(crate::monitor::os::LOAD_GENERATOR)) {
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
    let kind = doc.kind();
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
    if doc.status != "completed" {
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
    use crate::study::steady::Spread;

    fn level(level: u32, tps: f64, cv: f64, samples: usize) -> LevelResult {
        LevelResult {
            level,
            throughput: Spread { mean: tps, min: tps, max: tps, stddev: 0.0, cv: 0.0, n: 1 },
            sample_cv: cv,
            samples,
            latency_avg_ms: 1.0,
            p95_ms: 2.0,
            p99_ms: 3.0,
            p90: Vec::new(),
            os: None,
            per_instance: Vec::new(),
            per_instance_cores: Vec::new(),
            per_watt: None,
            ratio_to_first: 1.0,
            stop: None,
            over_bound: false,
            notes: Vec::new(),
            max_lag_s: None,
            conflicts: None,
        }
    }

    /// A study that failed at its next level said "its limit lies beyond the levels
    /// tried", the opposite of what happened.
    #[test]
    fn unfinished_study_never_says_its_limit_lies_beyond() {
        let mut s = series(None, None);
        s.complete = false;
        let a = super::series(&s, "threads", &s.name);
        assert!(!a.contains("beyond the levels tried"), "{a}");
        assert!(a.contains("did not finish its levels (its figures stop at 4 threads)"), "{a}");
        // Its level notes reach every table: a cold server, a level over the bound.
        let mut l = level(2, 10.0, 0.0, 10);
        l.over_bound = true;
        l.notes.push("restarted after a crash 3 s before this run: cold".into());
        assert_eq!(level_notes(&l).len(), 2);
        assert!(level_notes(&l)[0].contains("not counted as capacity"));
    }

    fn series(stop: Option<(&str, u32)>, saturation: Option<u32>) -> SeriesResult {
        SeriesResult {
            name: "oltp_read_write".into(),
            unit: "tps".into(),
            levels: vec![level(1, 800.0, 0.02, 10), level(2, 1658.0, 0.03, 10), level(4, 1600.0, 0.04, 10)],
            stop: stop.map(|(s, _)| s.to_string()),
            stopped_at: stop.map(|(_, at)| at),
            saturation,
            peak: Some((2, 1658.0)),
            complete: true,
            efficiency: Vec::new(),
        }
    }

    #[test]
    fn the_answer_quotes_peak_saturation_and_limit() {
        let s = series(Some(("CPU 93.0 % > 80 %", 4)), Some(2));
        assert_eq!(
            super::series(&s, "threads", &s.name),
            "oltp_read_write carried 1658 tps at 2 threads; it saturated at 2 threads: \
             the limit was CPU (CPU 93.0 % > 80 % at 4 threads)."
        );
        let open = series(None, None);
        assert!(super::series(&open, "threads", &open.name).contains("no stop condition was met up to 4 threads"));
        let first = series(Some(("plateau: +1.0 % over level 1 (under 5 %)", 2)), None);
        assert!(super::series(&first, "users", &first.name)
            .contains("saturated from the first level (2 users): throughput stopped growing"));
        assert_eq!(limit("new_order p90 6.00 s > 5.00 s"), "the limit was the latency bound");
        assert!(limit("kink: response time +40 % ...").contains("kink"));
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
        doc.config.server.insert("innodb_flush_log_at_trx_commit".into(), "2".into());
        doc.config.server.insert("sync_binlog".into(), "0".into());
        let w = config_warnings(&doc);
        assert!(w[0].contains("innodb_flush_log_at_trx_commit=2") && w[1].contains("sync_binlog=0"), "{w:?}");
        doc.config.server.insert("log_bin".into(), "OFF".into());
        assert_eq!(config_warnings(&doc).len(), 1, "sync_binlog does not matter without a binary log");
        // A lab node's figures are emulated; a node outside the lab is not flagged.
        doc.config.server.insert("lab".into(), "not emulated".into());
        assert_eq!(config_warnings(&doc).len(), 1);
        doc.config.server.insert("lab".into(), "emulated (node CPU quota 0.4, link delay 0.2 ms)".into());
        assert!(config_warnings(&doc)[1].contains("emulated (node CPU quota 0.4"), "{:?}", config_warnings(&doc));
    }
}
