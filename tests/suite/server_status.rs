//! The server's status counters (`SHOW GLOBAL STATUS` deltas) sampled every interval,
//! against a real private MariaDB: stored with the intervals and the summary, and
//! exported.

use crate::common;
use common::*;

/// Runs oltp_point_select on `database` (prepared with `rows` rows) and returns the
/// `--json` document.
fn point_select(s: &TestServer, database: &str, rows: &str) -> serde_json::Value {
    let json = s.home.path().join(format!("{database}.json"));
    let j = json.to_string_lossy().into_owned();
    let size = format!("--table-size={rows}");
    let args = ["oltp_point_select", "--database", database, "--tables=1", size.as_str()];
    let mut run = vec!["run"];
    run.extend_from_slice(&args);
    run.extend_from_slice(&["--threads=2", "--time=3", "--warmup=1", "--json", &j]);
    assert_eq!(s.sizeup(&run).unwrap(), 0);
    read_json(&json)
}

fn figure(v: &serde_json::Value, name: &str) -> f64 {
    v["status"][name].as_f64().unwrap_or_else(|| panic!("no {name} in {v}"))
}

#[test]
fn buffer_pool_misses_rise_when_the_data_is_larger_than_the_pool() {
    // 6 MiB, the least MariaDB takes with 16 KiB pages. No automatic statistics: their
    // background sampling of the big table (after its load) read its pages while the
    // small table ran, now and then (buffer_pool_misses_rise_... saw 44-57 misses a
    // second there, 1 run in 3).
    let s = TestServer::start_with(1, &["innodb_buffer_pool_size=6M", "innodb_stats_auto_recalc=OFF"]);
    assert_eq!(s.sql("SELECT @@innodb_buffer_pool_size").trim(), (6 << 20).to_string());

    // 50,000 rows: about 13 MiB of rows and index, twice the pool.
    let prepare = ["prepare", "oltp_point_select", "--database", "big", "--tables=1", "--table-size=50000"];
    assert_eq!(s.sizeup(&prepare).unwrap(), 0);
    let big = point_select(&s, "big", "50000");
    let ivs = big["intervals"].as_array().unwrap();
    assert_eq!(ivs.len(), 3, "{ivs:?}");
    // The intervals have their readings (a gap, where a reading came too late on a busy
    // box, would be absent: never zeros), each over about the interval.
    let read: Vec<&serde_json::Value> = ivs.iter().filter(|iv| !iv["status"].is_null()).collect();
    assert!(read.len() >= 2, "{ivs:?}");
    for iv in read {
        let span = iv["status"]["seconds"].as_f64().unwrap();
        assert!((0.5..1.6).contains(&span), "{iv}");
        assert!(figure(iv, "buffer_pool_reads_per_s") > 0.0, "{iv}");
    }
    let summary = &big["summary"];
    let misses = figure(summary, "buffer_pool_reads_per_s");
    let hit = figure(summary, "buffer_pool_hit_ratio");
    let tps = summary["tps"].as_f64().unwrap();
    assert!(misses > 100.0 && misses / tps > 0.01, "misses {misses}/s at {tps} tps: {summary}");
    assert!(hit < 0.995, "hit ratio {hit}: {summary}");
    // Point selects read rows by key and commit nothing explicitly: a measured 0.
    assert!(figure(summary, "handler_read_per_s") > 0.5 * tps, "{summary}");
    assert_eq!(figure(summary, "commits_per_s"), 0.0, "{summary}");
    assert!(figure(summary, "threads_running") >= 1.0, "{summary}");

    // 2,000 rows, loaded into the pool first: the misses all but vanish.
    let prepare = ["prepare", "oltp_point_select", "--database", "small", "--tables=1", "--table-size=2000"];
    assert_eq!(s.sizeup(&prepare).unwrap(), 0);
    let prewarm = ["prewarm", "oltp_point_select", "--database", "small", "--tables=1", "--table-size=2000"];
    assert_eq!(s.sizeup(&prewarm).unwrap(), 0);
    let small = point_select(&s, "small", "2000");
    let fits = figure(&small["summary"], "buffer_pool_reads_per_s");
    assert!(fits < misses / 20.0, "misses {fits}/s with the data in the pool, {misses}/s without");
    assert!(figure(&small["summary"], "buffer_pool_hit_ratio") > 0.999, "{}", small["summary"]);

    // The CSV export carries them per interval.
    let csv_path = s.home.path().join("big.csv");
    let id = big["id"].as_i64().unwrap().to_string();
    let out = csv_path.to_string_lossy().into_owned();
    assert_eq!(s.sizeup(&["runs", "export", &id, "--format", "csv", "--output", &out]).unwrap(), 0);
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = head.iter().position(|h| *h == "status_buffer_pool_reads_per_s").expect("a status column");
    let cells: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').nth(col).unwrap()).collect();
    assert_eq!(cells.len(), 3);
    // A gap is an empty cell, never 0.
    assert!(cells.iter().all(|c| c.is_empty() || c.parse::<f64>().unwrap() > 0.0), "{cells:?}");
    assert!(cells.iter().filter(|c| !c.is_empty()).count() >= 2, "{cells:?}");
}

/// What ran out is measured: a sweep on data twice the buffer pool names the pool (its
/// misses from the status counters) at the level where it saturates.
#[test]
fn a_sweep_on_data_larger_than_the_pool_says_the_pool_ran_out() {
    let s = TestServer::start_with(1, &["innodb_buffer_pool_size=6M"]);
    let sweep = [
        "sweep",
        "oltp_point_select",
        "--threads",
        "1,2",
        "--step-time",
        "3",
        "--warmup",
        "1",
        "--tables",
        "1",
        "--table-size",
        "50000",
    ];
    assert!(crate::common::answered_or_starved(s.sizeup(&sweep).unwrap(), &s.results()));
    let study = sizeup::store::Store::open(&s.results()).unwrap().list_studies().unwrap().pop().unwrap();
    let series: Vec<sizeup::study::figures::SeriesResult> =
        serde_json::from_value(study.result.unwrap()["series"].clone()).unwrap();
    for l in &series[0].levels {
        let st = l.observed.status.as_ref().expect("the level carries the status counters");
        assert!(st.buffer_pool_hit_ratio.unwrap() < 0.99, "{st:?}");
        let tags: Vec<&str> = sizeup::study::bottleneck::findings(l).iter().map(|f| f.tag).collect();
        assert!(tags.contains(&"pool"), "level {}: {tags:?}", l.level);
    }
    let answer = sizeup::report::answer::series(&series[0], sizeup::study::spec::Kind::Sweep, "threads", "ps");
    // Starved at every level (a busy box), the answer rightly rests on none of them.
    if series[0].only_starved() {
        assert!(answer.contains("no answer"), "{answer}");
        return;
    }
    assert!(answer.contains("the buffer pool (") && answer.contains("missed it and went to disk"), "{answer}");
}
