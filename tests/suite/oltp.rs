//! The OLTP workloads end to end against a real private MariaDB: prepare, every
//! workload's statement mix, cleanup, and compatibility with sysbench both ways.

use crate::common;
use common::*;
use std::process::Command;

#[test]
fn prepare_run_every_workload_and_cleanup() {
    let s = TestServer::start();
    assert_eq!(
        s.sizeup(&["prepare", "oltp_read_write", "--tables=2", "--table-size=3000", "--rand-seed=1"]).unwrap(),
        0
    );

    // sysbench's rows: ids 1..N, k in range, c and pad in digit groups, k index built.
    assert_eq!(s.sql("SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest.sbtest2").trim(), "3000\t1\t3000");
    assert_eq!(
        s.sql("SELECT COUNT(*) FROM sbtest.sbtest1 WHERE k < 1 OR k > 3000 OR LENGTH(c) <> 119 OR LENGTH(pad) <> 59")
            .trim(),
        "0"
    );
    assert_eq!(
        s.sql("SELECT COUNT(*) FROM sbtest.sbtest1 WHERE c NOT REGEXP '^([0-9]{11}-){9}[0-9]{11}$'").trim(),
        "0"
    );
    assert_eq!(s.sql("SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA='sbtest' AND TABLE_NAME='sbtest2' AND INDEX_NAME='k_2'").trim(), "k_2");

    // Each workload's reads/writes/other per transaction are its script's mix (one
    // connection: no deadlock retries to blur the count).
    let expected = [
        ("oltp_read_write", 14.0, 4.0, 2.0),
        ("oltp_read_only", 14.0, 0.0, 2.0),
        ("oltp_write_only", 0.0, 4.0, 2.0),
        ("oltp_point_select", 1.0, 0.0, 0.0),
        ("oltp_update_index", 0.0, 1.0, 0.0),
        ("oltp_update_non_index", 0.0, 1.0, 0.0),
        ("oltp_insert", 0.0, 1.0, 0.0),
        ("oltp_delete", 0.0, 1.0, 0.0),
        ("oltp_complex", 14.0, 4.0, 2.0),
    ];
    for (workload, r, w, o) in expected {
        let json = s.home.path().join(format!("{workload}.json"));
        let j = json.to_string_lossy().into_owned();
        let code = s
            .sizeup(&[
                "run",
                workload,
                "--tables=2",
                "--table-size=3000",
                "--threads=1",
                "--time=1.5",
                "--report-interval=0.5",
                "--json",
                &j,
            ])
            .unwrap();
        assert_eq!(code, 0, "{workload}");
        let doc = read_json(&json);
        let sm = &doc["summary"];
        let tx = sm["transactions"].as_f64().unwrap();
        assert!(tx > 10.0, "{workload}: only {tx} transactions");
        assert_eq!(sm["errors"], 0, "{workload}");
        // sysbench's rule: a DML statement that changed no rows (a DELETE of an id an
        // earlier run deleted) is "other", not a write.
        let (reads, writes, other) =
            (sm["reads"].as_f64().unwrap(), sm["writes"].as_f64().unwrap(), sm["other"].as_f64().unwrap());
        assert_eq!(reads, r * tx, "{workload} reads");
        assert_eq!(writes + other, (w + o) * tx, "{workload} writes + other");
        assert!(writes <= w * tx && writes > 0.0 || w == 0.0, "{workload} writes {writes}");
        let lat = &sm["latency_ms"];
        let p = |k: &str| lat[k].as_f64().unwrap();
        assert!(
            p("p50") > 0.0
                && p("p50") <= p("p90")
                && p("p90") <= p("p95")
                && p("p95") <= p("p99")
                && p("p99") <= p("max")
        );
        assert_eq!(doc["config"]["workload"], workload);
        assert!(doc["config"]["server"]["version"].as_str().unwrap().contains("MariaDB"));
        assert!(doc["intervals"].as_array().unwrap().len() >= 3);
        assert!(doc["histograms"][workload].as_str().unwrap().len() > 10);
    }
    // oltp_insert added rows (AUTO_INCREMENT ids), oltp_delete removed some.
    let rows: i64 = s.sql("SELECT COUNT(*) FROM sbtest.sbtest1").trim().parse().unwrap();
    assert_ne!(rows, 3000);

    // The store has every run, readable back as the same document.
    let store = sizeup::store::Store::open(&s.results()).unwrap();
    let runs = store.list_runs().unwrap();
    assert_eq!(runs.len(), expected.len());
    assert!(runs.iter().all(|r| r.status == sizeup::store::Status::Completed));
    let back = store.load_run(runs[0].id).unwrap();
    assert_eq!(
        back.summary.unwrap().transactions as f64,
        read_json(&s.home.path().join("oltp_read_write.json"))["summary"]["transactions"].as_f64().unwrap()
    );

    // The binary reads the store back: `runs show ID --json` is the --json document.
    let show = std::process::Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args(["--home", &s.home(), "runs", "show", &runs[0].id.to_string(), "--json"])
        .output()
        .unwrap();
    assert!(show.status.success());
    let shown: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let written = read_json(&s.home.path().join("oltp_read_write.json"));
    assert_eq!(shown["summary"], written["summary"]);
    assert_eq!(shown["intervals"], written["intervals"]);
    assert_eq!(shown["histograms"], written["histograms"]);
    let list = std::process::Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args(["--home", &s.home(), "runs", "list"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert_eq!(list.lines().filter(|l| l.contains("completed")).count(), expected.len(), "{list}");

    // A second prepare over our own tables is refused, and points at cleanup.
    let e = s.sizeup(&["prepare", "oltp_read_write", "--tables=2", "--table-size=10"]).unwrap_err().to_string();
    assert!(e.contains("sizeup cleanup"), "{e}");

    assert_eq!(s.sizeup(&["cleanup", "oltp_read_write"]).unwrap(), 0);
    assert_eq!(s.sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest'").trim(), "0");
}

#[test]
fn sysbench_and_sizeup_use_each_others_tables() {
    let s = TestServer::start();
    let sb = |args: &[&str]| {
        let out = Command::new("sysbench")
            .args(args)
            .arg(format!("--mysql-socket={}", s.socket.display()))
            .args(["--mysql-user=root", "--mysql-db=sbtest"])
            .output()
            .expect("sysbench is installed");
        assert!(out.status.success(), "sysbench {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    s.sql("CREATE DATABASE sbtest");
    sb(&["oltp_read_write", "--tables=2", "--table-size=2000", "prepare"]);

    // prewarm only reads, so it works on tables sizeup did not make; after a restart
    // without the buffer pool reload, prewarm brings the table's pages back into it.
    let pages = |s: &TestServer| -> i64 {
        s.sql("SELECT COUNT(*) FROM information_schema.INNODB_BUFFER_PAGE WHERE TABLE_NAME LIKE '%sbtest2%'")
            .trim()
            .parse()
            .unwrap()
    };
    assert_eq!(s.sizeup(&["server", "stop"]).unwrap(), 0);
    let no_reload = "--set=innodb_buffer_pool_load_at_startup=OFF";
    assert_eq!(
        s.sizeup(&["server", "start", "--buffer-pool", "128M", "--log-file-size", "48M", no_reload]).unwrap(),
        0
    );
    let cold = pages(&s);
    assert_eq!(s.sizeup(&["prewarm", "oltp_read_write", "--tables=2", "--table-size=2000"]).unwrap(), 0);
    assert!(pages(&s) > cold + 5, "prewarm read sbtest2 into the buffer pool ({cold} pages before)");

    // sizeup runs on sysbench's tables when told it may write to them...
    let json = s.home.path().join("r.json");
    let j = json.to_string_lossy().into_owned();
    let run = ["run", "oltp_read_write", "--tables=2", "--table-size=2000", "--threads=2", "--time=1", "--json", &j];
    let e = s.sizeup(&run).unwrap_err().to_string();
    assert!(e.contains("--write-foreign-tables"), "{e}");
    assert_eq!(s.sizeup(&[&run[..], &["--write-foreign-tables"]].concat()).unwrap(), 0);
    assert!(read_json(&json)["summary"]["transactions"].as_u64().unwrap() > 0);
    // ...but refuses to load into them or drop them.
    let e = s.sizeup(&["prepare", "oltp_read_write", "--tables=2", "--table-size=10"]).unwrap_err().to_string();
    assert!(e.contains("did not create") && e.contains("sbtest1"), "{e}");
    assert_eq!(s.sizeup(&["cleanup", "oltp_read_write"]).unwrap(), 0);
    assert_eq!(s.sql("SELECT COUNT(*) FROM sbtest.sbtest1").trim(), "2000");

    // sysbench runs on tables sizeup prepared.
    s.sql("DROP DATABASE sbtest");
    assert_eq!(s.sizeup(&["prepare", "oltp_read_write", "--tables=2", "--table-size=2000"]).unwrap(), 0);
    let out = sb(&["oltp_read_write", "--tables=2", "--table-size=2000", "--threads=2", "--time=1", "run"]);
    let tx: u64 = out
        .lines()
        .find(|l| l.trim_start().starts_with("transactions:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .parse()
        .unwrap();
    assert!(tx > 0, "{out}");
}

#[test]
fn every_load_method_loads_the_same_rows() {
    let s = TestServer::start();
    let prepare = |db: &str, method: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_sizeup"))
            .args(["--home", &s.home(), "prepare", "oltp_read_write", "--tables=2", "--table-size=30000"])
            .args(["--rand-seed=7", "--threads=2", &format!("--load-method={method}"), &format!("--mysql-db={db}")])
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    };
    // 25,000-row chunks as many commands: max_allowed_packet is read per connection.
    s.sql("SET GLOBAL max_allowed_packet=65536");
    let (ok, out, err) = prepare("m_small", "array-binding");
    assert!(ok && out.contains(", array binding)"), "{out}{err}");
    s.sql("SET GLOBAL max_allowed_packet=16777216");
    for (db, method, says) in [
        ("m_auto", "auto", ", array binding)"),
        ("m_load", "load-data", ", LOAD DATA LOCAL)"),
        ("m_insert", "insert", ", multi-row INSERT)"),
    ] {
        let (ok, out, err) = prepare(db, method);
        assert!(ok && out.contains(says), "{method}: {out}{err}");
    }
    // The same rows whichever way they went in (CHECKSUM TABLE prints name, sum).
    let sums = |db: &str| {
        let t = s.sql(&format!("CHECKSUM TABLE {db}.sbtest1, {db}.sbtest2"));
        t.lines().map(|l| l.split('\t').nth(1).unwrap().to_string()).collect::<Vec<_>>()
    };
    let want = sums("m_auto");
    assert_eq!(want.len(), 2);
    assert_ne!(want[0], want[1]);
    for db in ["m_small", "m_load", "m_insert"] {
        assert_eq!(sums(db), want, "{db}");
        assert_eq!(s.sql(&format!("SELECT COUNT(*) FROM {db}.sbtest2 FORCE INDEX (k_2) WHERE k > 0")).trim(), "30000");
    }

    // A server refusing LOCAL INFILE: asked for, LOAD DATA fails and says what to do,
    // leaving no table; auto on MariaDB does not need it.
    s.sql("SET GLOBAL local_infile=0");
    let (ok, out, err) = prepare("m_refused", "load-data");
    assert!(!ok, "{out}");
    assert!(err.contains("the server has local_infile=OFF") && err.contains("--load-method auto or insert"), "{err}");
    assert_eq!(s.sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='m_refused'").trim(), "0");
    let (ok, out, err) = prepare("m_auto2", "auto");
    assert!(ok && out.contains(", array binding)"), "{out}{err}");
    assert_eq!(sums("m_auto2"), want);
}
