//! Rate studies (`sizeup capacity`, issue 48) against a real private server the test
//! starts: the capacity bracketed between two rates, an overloaded level that falls
//! behind, a pool too small to carry its rate, sizing from the study, the report.

use crate::common::{answered, run_in as out, TestServer};
use sizeup::study::capacity::Verdict;

const DATA: &[&str] = &["--tables", "1", "--table-size", "2000"];
const SHORT: &[&str] = &["--step-time", "2", "--warmup", "0"];

fn study(s: &TestServer, id: i64) -> (sizeup::store::StudyRow, sizeup::study::spec::StudySpec) {
    let row = sizeup::store::Store::open(&s.results()).unwrap().load_study(id).unwrap();
    let spec = sizeup::study::spec::StudySpec::stored(&row).unwrap();
    (row, spec)
}

#[test]
fn a_rate_study_brackets_the_capacity_and_an_overload_falls_behind() {
    let s = TestServer::start();
    // 200,000 point selects a second is far past what a 2-core box serves.
    // 1,000 and 2,000 a second for 3 s: enough transactions (1,000) to judge a p99.
    let head = ["capacity", "oltp_point_select", "--latency", "p99<50ms", "--rates", "1000,2000,200000"];
    // 3 s, not 2: the overload's sampler, on a box whose hypervisor steals, can miss
    // both of two intervals' schedule ("no interval after the warm-up counted").
    let (code, stdout, stderr) = out(&s, &[&head[..], DATA, &["--step-time", "3", "--warmup", "0"]].concat());
    if !answered(code, &s.results(), &format!("{stdout}\n{stderr}")) {
        return;
    }
    let (row, _) = study(&s, 1);
    assert_eq!(row.kind, "rate");
    // A run the hypervisor stole from (steal) ran again: its rerun is the level.
    let levels: Vec<_> =
        sizeup::study::rate_levels(&row, "oltp_point_select").into_iter().filter(|(_, _, v)| !v.spoiled()).collect();
    let verdicts: Vec<(u32, &Verdict)> = levels.iter().map(|(r, _, v)| (*r, v)).collect();
    assert_eq!(verdicts[..2], [(1000, &Verdict::Met), (2000, &Verdict::Met)], "{verdicts:?}");
    let (rate, f, v) = &levels[2];
    assert_eq!(*rate, 200_000);
    assert!(matches!(v, Verdict::Behind { pct } if *pct > 50.0), "{v:?} {f:?}");
    assert!(f.achieved < f.offered / 2.0 && f.max_backlog > 0, "{f:?}");
    // Every level records its corrected percentiles and its pool.
    assert!(levels.iter().all(|(_, f, _)| f.types.len() == 1 && f.types[0].p99 > 0.0 && f.connections >= 4));
    // The answer: the rate that held, the one that broke it, and why.
    let answer = stdout.lines().find(|l| l.starts_with("oltp_point_select: Sustains")).unwrap_or_default();
    assert!(answer.contains("Sustains 2,000 tps with p99 <= 50.0 ms"), "{stdout}");
    assert!(answer.contains("at 200,000 tps it fell") && answer.contains("behind the arrivals"), "{answer}");
    assert!(answer.contains("closed loop of 8 connections gave"), "the probe beside it: {answer}");
    assert!(stdout.contains("offered  achieved"), "the level table: {stdout}");
    // The probe is a step of its own, and `study show` prints what the run printed.
    assert!(row.steps.iter().any(|st| st.series == "oltp_point_select (closed-loop probe)"));
    let (_, shown, _) = out(&s, &["study", "show", "1"]);
    assert!(shown.contains("Sustains 2,000 tps"), "{shown}");

    // Sized from it: 1,000 tps at 300 per server is 4 servers, 5 at most... at least 1.
    let (code, sized, err) = out(&s, &["size", "--from", "s1", "--target-tps", "1000", "--efficiency", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(sized.contains("open-loop capacity at p99<50ms (sustained 2000, failed at 200000)"), "{sized}");
    assert!(sized.contains("capacity at p99<50ms"), "which figure it used: {sized}");

    // The report draws the curve with the objective and says the answer.
    let html = s.home.path().join("r.html");
    let (code, _, err) = out(&s, &["report", "s1", "--html", html.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("objective p99 &lt;= 50.0 ms") && page.contains("<svg"), "the chart");
    assert!(page.contains("Study 1: oltp_point_select: Sustains 2,000 tps"), "the answer");
    assert!(page.contains("latency objective</dt><dd>p99&lt;50ms"), "the provenance");
}

#[test]
fn a_pool_too_small_for_its_rate_is_not_the_servers_limit() {
    let s = TestServer::start();
    // One connection cannot carry 100,000 a second with p99 under 50 ms: Little's law
    // wants 5,000 in flight. The server answers it faster than the probe's 8.
    let head = ["capacity", "oltp_point_select", "--latency", "p99<50ms", "--rates", "100000", "--connections", "1"];
    let (code, stdout, stderr) = out(&s, &[&head[..], DATA, SHORT].concat());
    if !answered(code, &s.results(), &format!("{stdout}\n{stderr}")) {
        return;
    }
    let (row, _) = study(&s, 1);
    let levels: Vec<_> =
        sizeup::study::rate_levels(&row, "oltp_point_select").into_iter().filter(|(_, _, v)| !v.spoiled()).collect();
    assert!(matches!(levels[0].2, Verdict::PoolLimited { connections: 1, needed: 5000 }), "{levels:?}");
    assert!(stdout.contains("the pool's limit, not the server's"), "{stdout}");
    assert!(stdout.contains("No rate tried met p99 <= 50.0 ms: at 100,000 tps the 1 connection(s)"), "{stdout}");
}

#[test]
fn rate_study_files_and_bad_objectives() {
    let s = TestServer::start();
    let bad = |extra: &[&str], wanted: &str| {
        let (code, stdout, stderr) = out(&s, &[&["capacity", "oltp_point_select"][..], extra, DATA].concat());
        assert_ne!(code, 0, "{extra:?}: {stdout}");
        assert!(stderr.contains(wanted), "{extra:?}: wanted '{wanted}' in {stderr}");
        assert!(stderr.trim().lines().count() <= 2, "{stderr}");
    };
    bad(&["--latency", "p99>5ms"], "write an objective as p99<20ms");
    bad(&["--latency", "p90[nosuch]<1s"], "no workload here reports a transaction type 'nosuch'");
    bad(&["--latency", "p99<5ms", "--stop-when", "cpu>80"], "leave stop_when (--stop-when) out");
    bad(&["--latency", "p99<5ms", "--rates", "0,5"], "levels must be 1 or more");
    bad(&["--latency", "p99<5ms", "--resolution", "90"], "between 0.5 and 50");
    assert!(sizeup::store::Store::open(&s.results()).unwrap().list_studies().unwrap().is_empty());
    // The study file form, as `sizeup capacity` stores it.
    let file = s.home.path().join("rate.toml");
    std::fs::write(
        &file,
        "name = \"rate\"\nkind = \"rate\"\nworkloads = [\"oltp_point_select\"]\nlevels = [100, 200]\n\
         step_time = 2\nwarmup = 0\n[rate]\nlatency = \"p90<100ms\"\n[options]\ntables = 1\ntable-size = 2000\n",
    )
    .unwrap();
    let (code, stdout, stderr) = out(&s, &["study", "run", file.to_str().unwrap()]);
    if !answered(code, &s.results(), &format!("{stdout}\n{stderr}")) {
        return;
    }
    assert!(stdout.contains("Sustains 200 tps with p90 <= 100.0 ms"), "{stdout}");
    assert!(stdout.contains("the highest rate tried: its limit at this objective lies above it"), "{stdout}");
}
