//! Exports of a run or a study: JSON (the document `--json` writes), CSV (one row per
//! interval, or per level of a study) and Markdown (a table ready to paste). Pure
//! formatting: the caller loads and writes.

use crate::result::RunDocument;
use crate::study::figures::SeriesResult;
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Json,
    Csv,
    Markdown,
}

/// Numbers as CSV and Markdown print them: up to 3 decimals, no trailing zeros.
fn num(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(num).unwrap_or_default()
}

/// A CSV field, quoted when it needs to be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn run(doc: &RunDocument, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(doc).expect("serialisable") + "\n",
        Format::Csv => run_csv(doc),
        Format::Markdown => run_markdown(doc),
    }
}

fn run_csv(doc: &RunDocument) -> String {
    let types: Vec<String> =
        doc.intervals.first().map(|iv| iv.types.iter().map(|t| t.name.clone()).collect()).unwrap_or_default();
    let mut head: Vec<String> = [
        "t",
        "duration",
        "warmup",
        "threads",
        "transactions",
        "tps",
        "qps",
        "reads_per_s",
        "writes_per_s",
        "other_per_s",
        "avg_ms",
        "p50_ms",
        "p90_ms",
        "p95_ms",
        "p99_ms",
        "max_ms",
        "errors",
        "reconnects",
        "rollbacks",
        "backlog",
        "outage",
        "stall",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if types.len() > 1 {
        for t in &types {
            head.push(format!("{t}_transactions"));
            head.push(format!("{t}_p90_ms"));
        }
    }
    head.extend(
        [
            "cpu_usr",
            "cpu_nice",
            "cpu_sys",
            "cpu_iowait",
            "cpu_irq",
            "cpu_soft",
            "cpu_steal",
            "cpu_idle",
            "server_cores",
            "client_cores",
            "disk_reads_per_s",
            "disk_writes_per_s",
            "disk_read_bytes_per_s",
            "disk_write_bytes_per_s",
            "mem_used_bytes",
            "watts",
            "power_source",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    // The server's status counters: empty cells for an interval without a reading.
    let status_names = crate::monitor::status::StatusSample::default().figures().map(|(name, _)| name);
    head.push("status_seconds".into());
    head.extend(status_names.iter().map(|n| format!("status_{n}")));
    let mut out = head.join(",") + "\n";
    for iv in &doc.intervals {
        let mut row = vec![
            num(iv.t),
            num(iv.duration),
            iv.warmup.to_string(),
            iv.threads.to_string(),
            iv.transactions.to_string(),
            num(iv.tps),
            num(iv.qps),
            num(iv.reads_per_s),
            num(iv.writes_per_s),
            num(iv.other_per_s),
            num(iv.avg_ms),
            num(iv.p50_ms),
            num(iv.p90_ms),
            num(iv.p95_ms),
            num(iv.p99_ms),
            num(iv.max_ms),
            iv.errors.to_string(),
            iv.reconnects.to_string(),
            iv.rollbacks.to_string(),
            iv.backlog.to_string(),
            iv.outage.to_string(),
            iv.stall.to_string(),
        ];
        if types.len() > 1 {
            for name in &types {
                let t = iv.types.iter().find(|t| &t.name == name);
                row.push(t.map_or(String::new(), |t| t.transactions.to_string()));
                row.push(t.map_or(String::new(), |t| num(t.p90_ms)));
            }
        }
        match &iv.os {
            Some(o) => row.extend([
                num(o.usr),
                num(o.nice),
                num(o.sys),
                num(o.iowait),
                num(o.irq),
                num(o.soft),
                num(o.steal),
                num(o.idle),
                opt(o.server_cores),
                num(o.client_cores),
                opt(o.disk_reads_per_s),
                opt(o.disk_writes_per_s),
                opt(o.disk_read_bytes_per_s),
                opt(o.disk_write_bytes_per_s),
                o.mem_used_bytes.map_or(String::new(), |m| m.to_string()),
                opt(o.watts),
                field(&o.power_source),
            ]),
            None => row.extend(std::iter::repeat_n(String::new(), 17)),
        }
        match &iv.status {
            Some(st) => {
                row.push(num(st.seconds));
                row.extend(st.figures().iter().map(|(_, v)| opt(*v)));
            }
            None => row.extend(std::iter::repeat_n(String::new(), status_names.len() + 1)),
        }
        out += &row.join(",");
        out.push('\n');
    }
    out
}

fn run_markdown(doc: &RunDocument) -> String {
    let (workload, threads) = (&doc.config.workload, doc.config.run.threads);
    let mut out = format!("**Run {}** — {workload}, {threads} threads, {}\n\n", doc.id.unwrap_or(0), doc.status);
    let Some(s) = &doc.summary else {
        return out + "No summary (the run did not finish).\n";
    };
    let tpcc = s.nopm.is_some();
    if let (Some(nopm), Some(tpm)) = (s.nopm, s.tpm) {
        let _ = writeln!(out, "NOPM {} · TPM {}\n", num(nopm.round()), num(tpm.round()));
    }
    out += "| type | transactions | tps | errors | avg ms | p50 ms | p90 ms | p95 ms | p99 ms | max ms |";
    out += if tpcc { " p90 limit |\n" } else { "\n" };
    out += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|";
    out += if tpcc { "---|\n" } else { "\n" };
    let mut row = |name: &str, n: u64, errors: u64, l: &crate::stats::LatencyMs, limit: String| {
        let tps = if s.seconds > 0.0 { n as f64 / s.seconds } else { 0.0 };
        let _ = write!(
            out,
            "| {name} | {n} | {} | {errors} | {} | {} | {} | {} | {} | {} |",
            num((tps * 100.0).round() / 100.0),
            num(l.avg),
            num(l.p50),
            num(l.p90),
            num(l.p95),
            num(l.p99),
            num(l.max)
        );
        out += &if tpcc { format!(" {limit} |\n") } else { "\n".into() };
    };
    if s.types.len() > 1 {
        for t in &s.types {
            let limit = match (t.p90_limit_ms, t.p90_within_limit) {
                (Some(ms), Some(ok)) => format!("{} {} s", if ok { "within" } else { "OVER" }, num(ms / 1000.0)),
                _ => String::new(),
            };
            row(&t.name, t.transactions, t.errors, &t.latency_ms, limit);
        }
    }
    row("**all**", s.transactions, s.errors, &s.latency_ms, String::new());
    let _ = writeln!(out, "\n{} s measured after warm-up.", num(s.seconds));
    let status = crate::report::status_rows(s);
    if !status.is_empty() {
        let _ = writeln!(out, "\nServer status counters (steady-state mean):\n\n| figure | value |\n|---|---|");
        for (name, v) in status {
            let _ = writeln!(out, "| {name} | {} |", v.replace('|', "/"));
        }
    }
    if let Some(why) = s.not_capacity() {
        let _ = writeln!(out, "\n**Not a capacity figure:** {why}.");
    }
    out
}

/// A study: JSON the stored study (spec, status, steps, result); CSV one row per
/// series and level; Markdown one table per series with the peak in bold.
pub fn study(row: &crate::store::StudyRow, series: &[SeriesResult], level_name: &str, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(row).expect("serialisable") + "\n",
        Format::Csv => {
            let mut out = format!(
                "series,{level_name},unit,throughput,throughput_min,throughput_max,repeats,sample_cv,latency_avg_ms,\
                 p95_ms,p99_ms,cpu_busy_pct,server_cores,client_cores,other_cores,disk_busy_pct,buffer_pool_hit_ratio,\
                 row_lock_sessions,ran_out,watts,per_watt,ratio_to_first,efficiency,stop,notes\n"
            );
            for s in series {
                for l in &s.levels {
                    let os = l.observed.os.as_ref();
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                        field(&s.name),
                        l.level,
                        s.unit,
                        num(l.throughput.mean),
                        num(l.throughput.min),
                        num(l.throughput.max),
                        l.throughput.n,
                        num(l.sample_cv),
                        num(l.latency_avg_ms),
                        num(l.p95_ms),
                        num(l.p99_ms),
                        opt(os.and_then(|o| o.busy())),
                        opt(os.and_then(|o| o.server_cores)),
                        opt(os.map(|o| o.client_cores)),
                        opt(os.and_then(|o| o.other_cores)),
                        opt(os.and_then(|o| o.disk_busy_pct)),
                        opt(l.observed.status.as_ref().and_then(|s| s.buffer_pool_hit_ratio)),
                        opt(l.observed.status.as_ref().and_then(|s| s.row_lock_time_ms_per_s).map(|ms| ms / 1000.0)),
                        field(
                            &crate::study::bottleneck::findings(l).iter().map(|f| f.tag).collect::<Vec<_>>().join(" ")
                        ),
                        opt(os.and_then(|o| o.watts)),
                        opt(l.per_watt),
                        num(l.ratio_to_first),
                        // Scale-out: e(N) = X(N) / (N x X(1)), not the ratio before it.
                        opt(s.efficiency.iter().find(|e| e.nodes == l.level).map(|e| e.e)),
                        field(l.stop.as_ref().map_or("", |s| s.words.as_str())),
                        field(&super::answer::level_notes(l).join("; "))
                    );
                }
            }
            out
        }
        Format::Markdown => {
            let mut out = String::new();
            for s in series {
                let _ = writeln!(out, "**{}**\n", s.name);
                let scale_out = !s.efficiency.is_empty();
                let e_head = if scale_out { " e(N) |" } else { "" };
                let _ = writeln!(out, "| {level_name} | {} | avg ms | p95 ms | CPU % |{e_head} note |", s.unit);
                out += if scale_out {
                    "|---:|---:|---:|---:|---:|---:|---|\n"
                } else {
                    "|---:|---:|---:|---:|---:|---|\n"
                };
                for l in &s.levels {
                    let x = num((l.throughput.mean * 10.0).round() / 10.0);
                    let x = if s.peak.is_some_and(|(lv, _)| lv == l.level) { format!("**{x}**") } else { x };
                    let mut note = Vec::new();
                    if s.saturation == Some(l.level) {
                        note.push("saturation".to_string());
                    }
                    if let Some(why) = &l.stop {
                        note.push(format!("stop: {why}"));
                    }
                    note.extend(super::answer::level_notes(l));
                    let e = match scale_out {
                        true => format!(
                            " {} |",
                            s.efficiency
                                .iter()
                                .find(|e| e.nodes == l.level)
                                .map_or("-".into(), |e| format!("{:.2}", e.e))
                        ),
                        false => String::new(),
                    };
                    let _ = writeln!(
                        out,
                        "| {} | {x} | {} | {} | {} |{e} {} |",
                        l.level,
                        num(l.latency_avg_ms),
                        num(l.p95_ms),
                        opt(l.observed.os.as_ref().and_then(|o| o.busy()).map(|b| (b * 10.0).round() / 10.0)),
                        note.join("; ").replace('|', "/")
                    );
                }
                if let Some(why) = super::answer::unfinished(s, level_name) {
                    let _ = writeln!(out, "\n_{why}._");
                }
                out.push('\n');
            }
            out
        }
    }
}
