//! A memory study in the terminal and in HTML: the answer first, then per level the
//! pool and its share of the data, throughput with its range, p95/p99, the hit ratio,
//! reads from disk per transaction, the data device's reads, the warm-up and the
//! page-cache check; and `size`'s memory-against-servers table. The figures come from
//! `study::memory`'s verdict; this module only lays them out.

use super::svg::{esc, Line, LineChart, Mark, Side};
use crate::cost::CostInputs;
use crate::model::sizing::Plan;
use crate::study::figures::{LevelResult, SeriesResult};
use crate::study::memory::{self, PageCache};
use crate::study::saturation;
use crate::study::spec::{StudySpec, Vary};
use std::fmt::Write;

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("-".into(), |b| format!("{:.0}", b as f64 / (1u64 << 20) as f64))
}

/// The answer sentence for each series (its first sentence answers the data-to-memory
/// question), or why there is none yet.
pub fn answers(spec: &StudySpec, series: &[SeriesResult]) -> Vec<String> {
    let vary = spec.memory_spec().vary;
    series
        .iter()
        .map(|s| match memory::verdict(&s.levels) {
            Some(v) => format!("{}: {}", s.name, memory::answer(&v, &s.levels, vary, &s.unit, spec.level_name())),
            // Every pool measured was starved (studies/9 beside `stress --cpu 1` said "no
            // answer yet", as if levels were still to come).
            None if s.only_starved() => format!("{}: {}", s.name, s.starved_words(spec.level_name())),
            None => format!(
                "{}: fewer than two levels with their pool and data known finished: no answer yet{}",
                s.name,
                if s.complete { "" } else { " (`sizeup study resume` continues it)" }
            ),
        })
        .collect()
}

fn level_row(l: &LevelResult) -> [String; 11] {
    let m = l.memory.as_ref();
    let (lo, hi) = saturation::range(l);
    let status = l.observed.status.as_ref();
    let os = l.observed.os.as_ref();
    let opt = |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    [
        mib(m.and_then(|m| m.pool_bytes)),
        opt(m.and_then(|m| m.share()).map(|s| s * 100.0), 0),
        format!("{:.0} [{:.0}-{:.0}]", l.throughput.mean, lo, hi),
        format!("{:.2}", l.p95_ms),
        format!("{:.2}", l.p99_ms),
        opt(status.and_then(|s| s.buffer_pool_hit_ratio).map(|h| h * 100.0), 2),
        opt(memory::misses_per_txn(l), 2),
        opt(os.and_then(|o| o.disk_reads_per_s), 0),
        opt(os.and_then(|o| o.disk_read_bytes_per_s).map(|b| b / 1e6), 1),
        m.map_or("-".into(), |m| format!("{:.0}{}", m.warmup_s, if m.settled { "" } else { "!" })),
        m.and_then(|m| m.page_cache.as_ref()).map_or("-".into(), |c| {
            match c.state {
                PageCache::KeptOut => "kept out",
                PageCache::Unverified => "unverified",
                PageCache::Through => "NOT kept out",
            }
            .to_string()
        }),
    ]
}

/// The page-cache check that says most: one that found the cache serving misses, else
/// one verified against the device, else any.
fn strongest_check(s: &SeriesResult) -> Option<&memory::PageCacheCheck> {
    let checks: Vec<&memory::PageCacheCheck> =
        s.levels.iter().filter_map(|l| l.memory.as_ref()?.page_cache.as_ref()).collect();
    [PageCache::Through, PageCache::KeptOut, PageCache::Unverified]
        .iter()
        .find_map(|state| checks.iter().find(|c| c.state == *state).copied())
}

/// Pool levels are the pool already: its column is left out.
fn first_column(vary: Vary) -> usize {
    match vary {
        Vary::Pool => 1,
        Vary::Data => 0,
    }
}

const HEADERS: [&str; 11] = [
    "pool MiB",
    "pool/data %",
    "throughput [range]",
    "p95 ms",
    "p99 ms",
    "hit ratio %",
    "disk reads/txn",
    "device r/s",
    "device MB/s",
    "warm-up s",
    "page cache",
];

/// The study in the terminal: per series the answer, then its levels.
pub fn tables(spec: &StudySpec, series: &[SeriesResult]) -> String {
    let mut out = String::new();
    let vary = spec.memory_spec().vary;
    let answers = answers(spec, series);
    for (s, answer) in series.iter().zip(&answers) {
        let data = s.levels.iter().filter_map(|l| l.memory.as_ref()?.data_bytes).max();
        let _ = writeln!(
            out,
            "\n{} at {} connection(s){}",
            s.name,
            spec.memory_spec().threads(),
            match vary {
                Vary::Pool => format!(", data {} MiB, buffer pool by level", mib(data)),
                Vary::Data => format!(", buffer pool fixed, data by level ({})", spec.level_name()),
            }
        );
        let _ = write!(out, "  {:>10}", spec.level_name());
        let skip = first_column(vary);
        for h in &HEADERS[skip..] {
            let _ = write!(out, " {h:>w$}", w = h.len().max(10));
        }
        out.push('\n');
        for l in &s.levels {
            let row = level_row(l);
            let _ = write!(out, "  {:>10}", l.level);
            for (h, v) in HEADERS[skip..].iter().zip(&row[skip..]) {
                let _ = write!(out, " {v:>w$}", w = h.len().max(10));
            }
            out.push('\n');
        }
        if s.levels.iter().any(|l| l.memory.as_ref().is_some_and(|m| !m.settled)) {
            out.push_str("  ! the warm-up's bound ended it before the hit ratio settled\n");
        }
        if let Some(c) = strongest_check(s) {
            let _ = writeln!(out, "  page cache: {}", c.words);
        }
        let _ = writeln!(out, "\n{answer}");
    }
    out
}

/// The study in HTML: per series throughput and reads from disk per transaction
/// against the pool's share of the data, the hot set marked, and the levels' table.
pub fn html(out: &mut String, spec: &StudySpec, row_id: i64, series: &[SeriesResult]) {
    for (i, s) in series.iter().enumerate() {
        let _ = writeln!(out, "<h3>{}</h3>", esc(&s.name));
        let Some(v) = memory::verdict(&s.levels) else {
            out.push_str("<p class=\"muted\">Fewer than two levels finished: no curve yet.</p>\n");
            continue;
        };
        let pct = |share: f64| share * 100.0;
        let tput: Vec<(f64, f64)> = v
            .points
            .iter()
            .filter_map(|p| Some((pct(p.1), s.levels.iter().find(|l| l.level == p.0)?.throughput.mean)))
            .collect();
        let misses: Vec<(f64, f64)> = v.points.iter().filter_map(|p| Some((pct(p.1), p.2?))).collect();
        let mut marks = Vec::new();
        if let Some(h) = &v.hot {
            marks.push(Mark { x: pct(h.share), label: "hot set".into() });
        }
        let id = format!("memory-{row_id}-{i}");
        let mut lines =
            vec![Line { name: format!("throughput ({})", s.unit), points: tput, side: Side::Left, dashed: false }];
        if !misses.is_empty() {
            lines.push(Line {
                name: "reads from disk per transaction".into(),
                points: misses,
                side: Side::Right,
                dashed: true,
            });
        }
        let chart = LineChart {
            id: &id,
            title: "throughput and misses against the pool's share of the data",
            x_label: "buffer pool as % of the data",
            left_label: &s.unit,
            right_label: "reads/txn",
            log_x: true,
            lines,
            marks,
            bands: Vec::new(),
            x_ticks: None,
        };
        let _ = writeln!(out, "<figure class=\"chart\">{}</figure>", chart.render());
        out.push_str("<table><tr><th>");
        out.push_str(&esc(spec.level_name()));
        out.push_str("</th>");
        let skip = first_column(spec.memory_spec().vary);
        for h in &HEADERS[skip..] {
            let _ = write!(out, "<th>{}</th>", esc(h));
        }
        out.push_str("</tr>\n");
        for l in &s.levels {
            let _ = write!(out, "<tr><td>{}</td>", l.level);
            for v in &level_row(l)[skip..] {
                let _ = write!(out, "<td>{}</td>", esc(v));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        if let Some(c) = strongest_check(s) {
            let _ = writeln!(out, "<p class=\"muted\">Page cache: {}</p>", esc(&c.words));
        }
    }
}

/// `size` from a memory study: one instance per server at each pool, the servers the
/// target needs, and with a memory price each plan's cost, the pool's memory priced on
/// top of the server; then which is cheaper, more memory per server or more servers.
pub fn sizing_text(
    name: &str,
    unit: &str,
    target: f64,
    plans: &[(Plan, u64)],
    cost: Option<&CostInputs>,
    memory_price: Option<f64>,
) -> String {
    let mut out = format!("\n{name}: {target:.0} {unit}, one instance per server, by buffer pool\n");
    let _ = writeln!(out, "  {:>9} {:>24} {:>11}  cost", "pool MiB", format!("{unit}/server [range]"), "servers");
    let priced: Vec<Option<f64>> = plans
        .iter()
        .map(|(p, pool)| {
            let (c, price) = (cost?, memory_price?);
            let mut with_memory = c.clone();
            with_memory.server_capex += price * *pool as f64 / (1u64 << 30) as f64;
            Some(with_memory.tco(p.watts.unwrap_or(0.0), p.per_server).total * p.servers as f64)
        })
        .collect();
    for ((p, pool), c) in plans.iter().zip(&priced) {
        let per = format!("{:.0} [{:.0}-{:.0}]", p.per_server, p.per_server_range.0, p.per_server_range.1);
        let cost = c.map_or("-".to_string(), |v| format!("{}{v:.0}", cost.map_or("$", |c| c.currency.as_str())));
        let _ = writeln!(out, "  {:>9} {per:>24} {:>11}  {cost}", mib(Some(*pool)), p.servers_text());
        for w in &p.weak {
            let _ = writeln!(out, "            weak: {w}");
        }
    }
    let cheapest = priced.iter().enumerate().filter_map(|(i, c)| Some((i, (*c)?))).min_by(|a, b| a.1.total_cmp(&b.1));
    match (cheapest, cost, memory_price) {
        (Some((i, best)), Some(c), Some(_)) => {
            let (bp, bpool) = &plans[i];
            let cur = &c.currency;
            let plan_words =
                |p: &Plan, pool: u64| format!("{} server(s) with a {} MiB pool", p.servers_text(), mib(Some(pool)));
            // The alternative in the other direction: the smallest pool (more servers)
            // against the cheapest, or the largest (more memory) when the cheapest is
            // the smallest.
            let smallest = plans.iter().enumerate().min_by_key(|(_, (_, pool))| *pool).map(|(j, _)| j);
            let largest = plans.iter().enumerate().max_by_key(|(_, (_, pool))| *pool).map(|(j, _)| j);
            let other = if Some(i) == smallest { largest } else { smallest };
            let _ = write!(out, "  Cheapest: {} for {cur}{best:.0}", plan_words(bp, *bpool));
            if let Some(j) = other.filter(|j| *j != i) {
                let (op, opool) = &plans[j];
                let verdict = if opool < bpool {
                    "more memory per server beats more servers"
                } else {
                    "more servers beat more memory per server"
                };
                let alt = priced[j].map_or("-".into(), |v| format!("{cur}{v:.0}"));
                let _ = write!(out, "; {verdict} ({} would cost {alt})", plan_words(op, *opool));
            }
            out.push_str(".\n");
            out.push_str(
                "  Each server is priced at server_capex plus its pool's memory at --memory-price per GiB; the \
                 server counts' ranges come from each level's throughput range.\n",
            );
            if plans.iter().any(|(p, _)| p.watts.is_none()) {
                out.push_str(
                    "  No watts were measured or modelled for the study (--power-model, --watts): the costs are \
                     capital only, without energy.\n",
                );
            }
        }
        _ => out.push_str(
            "  To price memory against servers give --memory-price (per GiB) and the cost inputs (--cost or the \
             study's [cost]).\n",
        ),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::figures::fixtures::fixture_with_others;

    /// a_starved_memory_study_says_so: beside `stress --cpu 1` studies/9 said "fewer
    /// than two levels ... finished: no answer yet" of five finished, starved pools.
    #[test]
    fn a_starved_memory_study_says_so() {
        let spec = StudySpec::from_toml(
            "name = \"m\"\nkind = \"memory\"\nworkloads = [\"oltp_read_only\"]\nlevels = \"128M,64M\"\nstep_time = 10\n",
            "test",
        )
        .unwrap();
        let s =
            fixture_with_others(&[(128, 1440.0, 0.02, 99.0), (64, 1390.0, 0.02, 99.0)], &[(128, 0.56), (64, 0.62)], "");
        assert!(s.only_starved());
        let a = answers(&spec, &[s]);
        assert!(a[0].starts_with("oltp_read_write: no answer: other programs starved the server at every level measured (other processes took 0.62"), "{a:?}");
        assert!(a[0].contains("at 64 MiB pool") && !a[0].contains("no answer yet"), "{a:?}");
    }
}
