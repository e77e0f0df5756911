//! Exporters against fixtures, by exact match. The fixture run is built here from
//! fixed numbers; tests/fixtures/ holds what each format must print for it. After a
//! deliberate format change, regenerate with SIZEUP_BLESS=1 and review the diff.

use sizeup::monitor::os::OsSample;
use sizeup::monitor::status::StatusSample;
use sizeup::report::export::{self, Format};
use sizeup::result::RunDocument;
use sizeup::stats::{Interval, LatencyMs, Recorder, Summary};
use std::path::Path;

fn fixture_run() -> RunDocument {
    let names = vec!["new_order".to_string(), "payment".to_string()];
    let mut intervals = Vec::new();
    let mut steady = Recorder::new(2);
    for k in 1..=3u32 {
        let mut rec = Recorder::new(2);
        for i in 0..(10 * k as u64) {
            rec.transaction(0, 2000 + i * 100, i == 0);
            rec.transaction(1, 1000 + i * 50, false);
        }
        rec.queries.reads = 100 * k as u64;
        rec.queries.writes = 50;
        let mut iv = Interval::from_recorder(&rec, &names, k as f64, 1.0, k == 1, 4, 95.0);
        iv.os = Some(OsSample {
            usr: 40.0 + k as f64,
            sys: 20.0,
            iowait: 1.5,
            soft: 0.5,
            idle: 38.0 - k as f64,
            server_cores: Some(1.2),
            client_cores: 0.25,
            disk_reads_per_s: Some(0.0),
            disk_writes_per_s: Some(120.0),
            disk_read_bytes_per_s: Some(0.0),
            disk_write_bytes_per_s: Some(2_457_600.0),
            mem_used_bytes: Some(4_000_000_000),
            mem_total_bytes: Some(24_000_000_000),
            watts: Some(130.5),
            power_source: "modelled".into(),
            ..Default::default()
        });
        // The server's counters; interval 2 has no reading (a gap: empty cells).
        if k != 2 {
            let k = k as f64;
            iv.status = Some(StatusSample {
                seconds: 1.0,
                buffer_pool_read_requests_per_s: Some(5000.0 * k),
                buffer_pool_reads_per_s: Some(50.0),
                buffer_pool_hit_ratio: Some(1.0 - 50.0 / (5000.0 * k)),
                row_lock_waits_per_s: Some(0.5),
                row_lock_time_ms_per_s: Some(12.0),
                data_reads_per_s: Some(50.0),
                data_writes_per_s: Some(30.0),
                threads_running: Some(3.0),
                commits_per_s: Some(20.0 * k),
                ..Default::default()
            });
        }
        if k > 1 {
            steady.merge(&rec);
        }
        intervals.push(iv);
    }
    let mut summary = Summary::from_recorder(&steady, &names, 2.0, 0);
    summary.nopm = Some(summary.types[0].transactions as f64 * 30.0);
    summary.tpm = Some(summary.transactions as f64 * 30.0);
    summary.types[0].p90_limit_ms = Some(5000.0);
    summary.types[0].p90_within_limit = Some(true);
    summary.types[1].p90_limit_ms = Some(5000.0);
    summary.types[1].p90_within_limit = Some(true);
    let steady_status: Vec<&StatusSample> = intervals[1..].iter().filter_map(|iv| iv.status.as_ref()).collect();
    summary.observed.status = sizeup::monitor::status::mean(&steady_status);
    assert_ne!(summary.latency_ms, LatencyMs::default());
    RunDocument {
        id: Some(7),
        status: sizeup::store::Status::Completed,
        error: None,
        config: serde_json::from_value(serde_json::json!({"workload": "tpcc", "run": {"threads": 4}})).unwrap(),
        summary: Some(summary),
        intervals,
        histograms: Default::default(),
    }
}

fn check(name: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    if std::env::var_os("SIZEUP_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(text, want, "{name} differs from its fixture");
}

#[test]
fn run_exports_match_their_fixtures() {
    let doc = fixture_run();
    let csv = export::run(&doc, Format::Csv);
    let widths: Vec<usize> = csv.lines().map(|l| l.split(',').count()).collect();
    assert!(widths.iter().all(|&w| w == widths[0]), "every row as wide as the header: {widths:?}");
    assert_eq!(widths.len(), doc.intervals.len() + 1, "one row per interval");
    check("run.csv", &csv);
    check("run.md", &export::run(&doc, Format::Markdown));
    let json = export::run(&doc, Format::Json);
    check("run.json", &json);
    // The JSON export is the `--json` document: it reads back as the same run.
    let back: RunDocument = serde_json::from_str(&json).unwrap();
    assert_eq!(back.intervals, doc.intervals);
    assert_eq!(back.summary, doc.summary);
}

#[test]
fn study_exports_match_their_fixtures() {
    use sizeup::study::figures::{series_result, InstanceFigures, StepFigures};
    use sizeup::study::steady::Steady;
    let step = |x: f64, r: f64, idle: f64| StepFigures {
        unit: "tps".into(),
        throughput: Steady { median: x, mean: x, min: x * 0.95, max: x * 1.05, cv: 0.02, samples: 10, n_eff: None },
        tps: x,
        latency_ms: LatencyMs { avg: r, p95: r * 1.5, p99: r * 2.0, ..Default::default() },
        p90: vec![sizeup::stats::TypeP90::new("oltp_read_write", r * 1.3, None)],
        observed: sizeup::stats::Observed {
            os: Some(OsSample {
                usr: 60.0,
                sys: 30.0,
                idle,
                server_cores: Some(1.5),
                client_cores: 0.3,
                ..Default::default()
            }),
            ..Default::default()
        },
        instances: vec![InstanceFigures { run: 1, throughput: x, latency_avg_ms: r, server_cores: None }],
        ..Default::default()
    };
    let steps = vec![(1, step(500.0, 2.0, 10.0)), (2, step(900.0, 2.2, 5.0)), (4, step(910.0, 4.4, 2.0))];
    let stop = sizeup::study::stop::parse("plateau<5%").unwrap();
    let series = vec![series_result("oltp_read_write", &[1, 2, 4, 8], 1, &steps, &stop)];
    let row = sizeup::store::StudyRow {
        id: 1,
        name: "fixture".into(),
        kind: "sweep".into(),
        started_at: "2026-11-22T00:00:00Z".into(),
        finished_at: None,
        status: sizeup::store::Status::Completed,
        spec: serde_json::Value::Null,
        result: None,
        steps: vec![],
    };
    check("study.csv", &export::study(&row, &series, "threads", Format::Csv));
    check("study.md", &export::study(&row, &series, "threads", Format::Markdown));
}
