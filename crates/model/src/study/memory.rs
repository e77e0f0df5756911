//! The data-against-memory study (`sizeup memory`, kind = "memory"): throughput as the
//! buffer pool shrinks under fixed data (or the data grows under a fixed pool), with
//! each level's hit ratio and reads from disk, and the answer in one sentence: how far
//! down throughput holds, where it falls and by how much, and about how large the hot
//! set is, with the method behind that figure.
//!
//! Pure: the pool levels (given or found from the data's size), the check that the OS
//! page cache did not serve the misses, the knee and the sentence. Running the levels
//! (a restart per pool, a warm-up until the hit ratio settles) is `runner::memory`'s.
//!
//! Both kinds of level are read on one axis, the pool's share of the data: a pool of
//! 32 MiB under 128 MiB of data and 32 MiB under data grown to 128 MiB are both 25 %.
//! The hot set is the share below which misses leave their floor.

use super::figures::LevelResult;
use super::levels::Levels;
use super::saturation::{self, Change, Measured};
use crate::error::Invalid;
use crate::monitor::os::OsSample;
use crate::monitor::status::StatusSample;
use serde::{Deserialize, Serialize};

/// The smallest pool a level may have: MariaDB 10.11 refuses to start with 5 MiB.
pub const MIN_POOL_MIB: u32 = 8;
/// The most pool levels `auto` picks (each halves the one before).
const AUTO_LEVELS: usize = 6;

/// What a memory study's levels are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vary {
    /// Buffer-pool sizes (`128M,64M,32M` or `auto`), the data fixed.
    #[default]
    Pool,
    /// Data sizes in the workload's size option (rows per table, warehouses), the
    /// pool fixed; each size in a database of its own.
    Data,
}

impl std::str::FromStr for Vary {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Vary, Invalid> {
        match s {
            "pool" => Ok(Vary::Pool),
            "data" => Ok(Vary::Data),
            _ => Err(Invalid::Value(format!("'{s}': vary pool or data"))),
        }
    }
}

/// Pool levels in MiB, in the order given: sizes (`128M,64M,1G`), a list of MiB
/// (`[128, 64]`), or none for `auto` (found from the data's size when the study runs).
pub fn parse_pools(levels: &Levels) -> Result<Vec<u32>, Invalid> {
    let mib: Vec<u32> = match levels {
        Levels::Text(t) if t.trim() == "auto" => return Ok(Vec::new()),
        Levels::Text(t) => t
            .split(',')
            .map(|p| {
                let bad = || Invalid::Value(format!("pool '{}': give sizes like 128M,64M,32M (or auto)", p.trim()));
                let bytes = crate::size_bytes(p.trim()).ok_or_else(bad)?;
                if !p.trim().ends_with(|c: char| c.is_ascii_alphabetic()) || bytes % (1 << 20) != 0 {
                    return Err(bad());
                }
                u32::try_from(bytes >> 20).map_err(|_| bad())
            })
            .collect::<Result<_, _>>()?,
        Levels::List(v) => v.clone(),
    };
    if mib.is_empty() || mib.contains(&0) {
        return Err(Invalid::Value("pools: give sizes like 128M,64M,32M (or auto)".into()));
    }
    if let Some(twice) = mib.iter().enumerate().find(|(i, l)| mib[..*i].contains(l)).map(|(_, l)| l) {
        return Err(Invalid::Twice(format!("pools name {twice} MiB twice: give each pool once")));
    }
    if mib.len() > 20 {
        return Err(Invalid::Value(format!("{} pools: at most 20", mib.len())));
    }
    Ok(mib)
}

/// `auto` pools for `data_bytes` of data: from the first power of two at or above
/// 1.25 x the data (all of it fits, with room for the pool's own structures), halving
/// down to 1/32 of that or the smallest pool the server starts with.
pub fn auto_pools(data_bytes: u64) -> Vec<u32> {
    let data_mib = data_bytes as f64 / (1u64 << 20) as f64;
    let top = ((data_mib * 1.25).max(MIN_POOL_MIB as f64 * 2.0)).log2().ceil().exp2() as u32;
    let mut v = vec![top];
    while v.len() < AUTO_LEVELS {
        let next = v[v.len() - 1] / 2;
        if next < MIN_POOL_MIB {
            break;
        }
        v.push(next);
    }
    v
}

/// Whether the OS page cache was kept out of a level's misses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageCache {
    /// Direct I/O, and the data's device read about as often as InnoDB did.
    KeptOut,
    /// Direct I/O set, but not verified against the device (too few reads, or a device
    /// sizeup does not watch).
    Unverified,
    /// Reads went through (or were served by) a cache the pool does not count.
    Through,
}

/// The page-cache verdict with the figures behind it, in words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageCacheCheck {
    pub state: PageCache,
    pub words: String,
}

/// InnoDB file reads per second below which the device check says nothing.
const FEW_READS: f64 = 20.0;

/// The check, from the server's `innodb_flush_method`, its file reads (`Innodb_data_reads`)
/// and the data device's reads over the same steady state.
pub fn page_cache(flush_method: Option<&str>, status: Option<&StatusSample>, os: Option<&OsSample>) -> PageCacheCheck {
    let check = |state, words: String| PageCacheCheck { state, words };
    let method = flush_method.unwrap_or("");
    let direct = method.to_ascii_uppercase().starts_with("O_DIRECT");
    if !direct {
        let said = if method.is_empty() { "not reported".to_string() } else { method.to_string() };
        return check(
            PageCache::Through,
            format!(
                "innodb_flush_method is {said}: reads go through the OS page cache, which holds pages the pool \
                 does not, so misses cost less here than where the pool is all the memory there is"
            ),
        );
    }
    let reads = status.and_then(|s| s.data_reads_per_s);
    let device = os.and_then(|o| o.disk_reads_per_s);
    match (reads, device) {
        (Some(r), _) if r < FEW_READS => check(
            PageCache::Unverified,
            format!("{method}; InnoDB read {r:.0} times a second, too few to check against the device"),
        ),
        (Some(r), Some(d)) if d >= 0.5 * r => check(
            PageCache::KeptOut,
            format!("{method}: the data's device read {d:.0} times a second for InnoDB's {r:.0}"),
        ),
        (Some(r), Some(d)) => check(
            PageCache::Through,
            format!(
                "{method} is set, but the data's device read only {d:.0} times a second for InnoDB's {r:.0}: a \
                 cache served the rest, so misses cost less here than on a host without one"
            ),
        ),
        (_, None) => check(
            PageCache::Unverified,
            format!("{method}; the data's device is not watched (a server sizeup does not manage), so not checked"),
        ),
        (None, _) => check(PageCache::Unverified, format!("{method}; the server reports no file reads to check")),
    }
}

/// What a memory level stores beside its run's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryLevel {
    /// The buffer pool the server ran with (its `innodb_buffer_pool_size`).
    pub pool_bytes: Option<u64>,
    /// The data's size (information_schema's data + index bytes).
    pub data_bytes: Option<u64>,
    /// How long the warm-up ran before the measured run, and whether the hit ratio
    /// settled in it (else its bound ended it).
    pub warmup_s: f64,
    pub settled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_run: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush_method: Option<String>,
    /// Filled in from the step's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<PageCacheCheck>,
}

impl MemoryLevel {
    /// The pool's share of the data, when both are known.
    pub fn share(&self) -> Option<f64> {
        Some(self.pool_bytes? as f64 / self.data_bytes.filter(|d| *d > 0)? as f64)
    }

    /// Several repeats of a level as one: the longest warm-up, settled only if every
    /// one did, the weakest page-cache verdict.
    pub fn combine(all: &[&MemoryLevel]) -> Option<MemoryLevel> {
        let mut out = (*all.first()?).clone();
        for m in &all[1..] {
            out.warmup_s = out.warmup_s.max(m.warmup_s);
            out.settled &= m.settled;
            let rank = |c: &Option<PageCacheCheck>| match c.as_ref().map(|c| c.state) {
                Some(PageCache::KeptOut) => 0,
                Some(PageCache::Unverified) | None => 1,
                Some(PageCache::Through) => 2,
            };
            if rank(&m.page_cache) > rank(&out.page_cache) {
                out.page_cache = m.page_cache.clone();
            }
        }
        Some(out)
    }
}

/// Reads from disk per transaction (`Innodb_buffer_pool_reads` over transactions per
/// second, every type) at a level, when the server counts them.
pub fn misses_per_txn(l: &LevelResult) -> Option<f64> {
    let misses = l.observed.status.as_ref()?.buffer_pool_reads_per_s?;
    // Not NOPM: a minute's new orders are not the transactions that read the pages
    // (misses_per_transaction_of_tpcc_divided_by_nopm).
    let tps = if l.tps > 0.0 { l.tps } else { l.throughput.mean };
    (tps > 0.0).then(|| misses / tps)
}

/// How the hot set was estimated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The knee of reads from disk per transaction against the pool's share.
    Misses,
    /// The knee of throughput (the server reports no buffer-pool counters).
    Throughput,
}

/// The hot set as a share of the data: about `share`, between `low` and `high` (the
/// levels around the knee); `at_least` when even the largest pool tried missed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HotSet {
    pub share: f64,
    pub low: f64,
    pub high: f64,
    pub method: Method,
    pub at_least: bool,
    /// The floor of misses per transaction, and the misses at the level below the knee.
    pub floor: Option<f64>,
    pub above: Option<f64>,
    /// How `share` was read: "the line through the 2 smaller pools meets the floor".
    pub how: String,
}

/// The verdict on one series of a memory study.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Levels as they read on the shared axis, largest share of data first: (level,
    /// share, misses per transaction).
    pub points: Vec<(u32, f64, Option<f64>)>,
    /// The best level.
    pub best: u32,
    /// The level of the smallest share whose throughput cannot be told from the best,
    /// with every larger share between them alike.
    pub holds_to: u32,
    /// The next smaller share, where throughput fell beyond the noise, and by how much.
    pub falls: Option<Change>,
    pub hot: Option<HotSet>,
    /// A level past the fall that is above the fall's level beyond the noise: the
    /// levels disagree with a curve that only falls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rises_again: Option<u32>,
}

/// The verdict, from the series' levels (each with its memory facts); None when fewer
/// than two levels know their pool's share of the data.
pub fn verdict(levels: &[LevelResult]) -> Option<Verdict> {
    let mut with: Vec<(&LevelResult, f64)> =
        levels.iter().filter(|l| l.counts()).filter_map(|l| Some((l, l.memory.as_ref()?.share()?))).collect();
    if with.len() < 2 {
        return None;
    }
    with.sort_by(|a, b| b.1.total_cmp(&a.1));
    let best = with.iter().map(|(l, _)| *l).max_by(|a, b| a.mean().total_cmp(&b.mean()))?;
    let from = with.iter().position(|(l, _)| l.level == best.level)?;
    let mut holds = from;
    while holds + 1 < with.len() && saturation::same(with[holds + 1].0, best) {
        holds += 1;
    }
    let falls = with.get(holds + 1).map(|(l, _)| saturation::change(best, *l));
    let points: Vec<(u32, f64, Option<f64>)> = with.iter().map(|(l, s)| (l.level, *s, misses_per_txn(l))).collect();
    let hot = match points.iter().map(|p| p.2).collect::<Option<Vec<f64>>>() {
        Some(m) => knee(&with.iter().map(|w| w.1).zip(m).collect::<Vec<_>>()),
        None => falls.map(|_| {
            let (hi, lo) = (with[holds].1, with[holds + 1].1);
            HotSet {
                share: (hi * lo).sqrt(),
                low: lo,
                high: hi,
                method: Method::Throughput,
                at_least: false,
                floor: None,
                above: None,
                how: "between the last share that held throughput and the first that lost it".into(),
            }
        }),
    };
    // Past the fall, a level that beats the fall's beyond the noise.
    let rises_again = with.get(holds + 1).and_then(|(fell, _)| {
        with[holds + 2..]
            .iter()
            .map(|(l, _)| *l)
            .find(|l| l.mean() > fell.mean() && !saturation::same(*l, *fell))
            .map(|l| l.level)
    });
    Some(Verdict { points, best: best.level, holds_to: with[holds].0.level, falls, hot, rises_again })
}

/// The knee of misses per transaction against the pool's share (points largest share
/// first): the floor is the fewest misses; the knee the smallest share still within a
/// tenth of the climb above it (and 0.01) in an unbroken run from the largest. The hot
/// set lies between the knee and the next smaller share; with two or more shares below
/// the knee, the least-squares line through them meets the floor at the estimate
/// (for uniform access, misses fall in a line to the floor as the pool grows to the
/// hot set), kept within that bracket. None when misses never rose above their floor.
pub fn knee(points: &[(f64, f64)]) -> Option<HotSet> {
    let floor = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let top = points.iter().map(|p| p.1).fold(0.0, f64::max);
    // A rise of fewer than 0.05 reads a transaction, or within half the floor, is no knee.
    if !floor.is_finite() || top - floor <= 0.05_f64.max(0.5 * floor) {
        return None;
    }
    let tolerance = (0.1 * (top - floor)).max(0.01);
    let at_floor = |m: f64| m <= floor + tolerance;
    // Even the largest pool misses as much as the climb: the hot set is above it.
    if !at_floor(points[0].1) || floor > 0.1 * top {
        let largest = points[0].0;
        return Some(HotSet {
            share: largest,
            low: largest,
            high: largest,
            method: Method::Misses,
            at_least: true,
            floor: Some(floor),
            above: Some(points[0].1),
            how: "misses still fell at the largest pool tried".into(),
        });
    }
    let k = points.iter().take_while(|p| at_floor(p.1)).count() - 1;
    let below = &points[k + 1..];
    let (high, low) = (points[k].0, below[0].0);
    let (share, how) = match fit_line(below) {
        Some((a, b)) if b < 0.0 => {
            let x = ((floor - a) / b).clamp(low, high);
            (x, format!("the line through the {} smaller pools meets the floor there", below.len()))
        }
        _ => ((high * low).sqrt(), "between the two pools around the knee".to_string()),
    };
    Some(HotSet {
        share,
        low,
        high,
        method: Method::Misses,
        at_least: false,
        floor: Some(floor),
        above: Some(below[0].1),
        how,
    })
}

/// Least squares y = a + b x over two or more points.
fn fit_line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| (my - sxy / sxx * mx, sxy / sxx))
}

fn mib(bytes: f64) -> String {
    let m = bytes / (1u64 << 20) as f64;
    // Whole MiB (every pool level) without a decimal.
    if m >= 10.0 || (m - m.round()).abs() < 0.05 {
        format!("{m:.0} MiB")
    } else {
        format!("{m:.1} MiB")
    }
}

fn pct(share: f64) -> String {
    let p = share * 100.0;
    if p >= 10.0 {
        format!("{p:.0} %")
    } else {
        format!("{p:.1} %")
    }
}

fn figure(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The answer in words, its first sentence the data-to-memory answer: "throughput holds
/// down to a pool of X (Y % of the data); at Z it falls W %; the hot set is about H",
/// then the method behind H and what weakens it. `unit` is tps or NOPM, `vary` what the
/// levels are, `level_word` what a data level counts.
pub fn answer(v: &Verdict, levels: &[LevelResult], vary: Vary, unit: &str, level_word: &str) -> String {
    let get = |level: u32| levels.iter().find(|l| l.level == level).expect("a verdict's levels are the series'");
    let facts = |level: u32| get(level).memory.clone().expect("a verdict's levels have memory facts");
    let data = |level: u32| facts(level).data_bytes.unwrap_or(0) as f64;
    let pool = |level: u32| facts(level).pool_bytes.unwrap_or(0) as f64;
    let share = |level: u32| v.points.iter().find(|p| p.0 == level).map_or(0.0, |p| p.1);
    let at = |level: u32| match vary {
        Vary::Pool => format!("a pool of {} ({} of the data)", mib(pool(level)), pct(share(level))),
        Vary::Data => format!(
            "{level} {level_word} ({} of data, the {} pool {} of it)",
            mib(data(level)),
            mib(pool(level)),
            pct(share(level))
        ),
    };
    let best = get(v.best);
    let (lo, hi) = saturation::range(best);
    let direction = if vary == Vary::Pool { "down to" } else { "up to" };
    // Held nowhere below the best: the best is the first level, and the next one fell.
    let mut s = match v.holds_to == v.best && v.points.first().is_some_and(|p| p.0 == v.best) {
        true => format!(
            "Throughput is highest at {}: {} {unit} (range {}-{})",
            at(v.best),
            figure(best.mean()),
            figure(lo),
            figure(hi)
        ),
        false => format!(
            "Throughput holds {direction} {}: {} {unit} at best (range {}-{})",
            at(v.holds_to),
            figure(best.mean()),
            figure(lo),
            figure(hi)
        ),
    };
    match &v.falls {
        Some(c) => {
            s += &format!(
                "; at {} it {}falls {:.0} % (range {:.0} to {:.0} %)",
                at(c.at),
                if v.holds_to == v.best && v.points.first().is_some_and(|p| p.0 == v.best) { "already " } else { "" },
                -c.pct,
                -c.high,
                -c.low
            )
        }
        None => {
            let edge = if vary == Vary::Pool { "smallest pool" } else { "largest data" };
            s += &format!("; it did not fall beyond the noise at the {edge} tried")
        }
    }
    let data_of = |level: u32| data(level);
    match &v.hot {
        Some(h) => {
            let (words, reading) = hot_words(h, v, vary, &data_of, &pool);
            s += &format!("; {words}.");
            s += &format!(" Method: {reading}.");
        }
        None => {
            s += ". ";
            s += match vary {
                Vary::Pool => {
                    "The hot set fits in the smallest pool tried: reads from disk per transaction stayed at \
                               their floor at every level (try smaller pools to find it)."
                }
                Vary::Data => {
                    "The hot set stayed within the pool at every data size: reads from disk per transaction \
                               stayed at their floor (try larger data to find it)."
                }
            };
        }
    }
    if let (Some(r), Some(c)) = (v.rises_again, &v.falls) {
        s += &format!(
            " Past the fall throughput rose again beyond the noise ({} {unit} at {} against {} at {}): the \
             levels do not trace one curve (noise between runs, or a cost that is not the misses'), so repeat the \
             study (repeat = 2 or more) before sizing memory from it.",
            figure(get(r).mean()),
            at(r),
            figure(c.value),
            at(c.at)
        );
    }
    let unsettled: Vec<String> =
        levels.iter().filter(|l| l.memory.as_ref().is_some_and(|m| !m.settled)).map(|l| l.level.to_string()).collect();
    if !unsettled.is_empty() {
        s += &format!(
            " The hit ratio had not settled when the warm-up's bound ended it at level(s) {}: their figures may be \
             from a pool still warming.",
            unsettled.join(", ")
        );
    }
    let through: Vec<String> = levels
        .iter()
        .filter_map(|l| l.memory.as_ref()?.page_cache.as_ref().filter(|c| c.state == PageCache::Through))
        .map(|c| c.words.clone())
        .take(1)
        .collect();
    if let Some(w) = through.first() {
        s += &format!(" The OS page cache was not kept out: {w}.");
    }
    if v.points.len() < 3 {
        s += " Only two levels: the knee is a guess between them; more levels place it.";
    }
    s
}

/// The hot-set clause and the method behind it.
fn hot_words(
    h: &HotSet,
    v: &Verdict,
    vary: Vary,
    data_of: &dyn Fn(u32) -> f64,
    pool: &dyn Fn(u32) -> f64,
) -> (String, String) {
    // The data the share is of: the fixed data (pool levels), or the largest data tried.
    let reference = v.points.iter().map(|p| data_of(p.0)).fold(0.0, f64::max);
    let size = match vary {
        Vary::Pool => format!("{} ({} of the data)", mib(h.share * reference), pct(h.share)),
        Vary::Data => format!("{} of the data ({} of the largest data tried)", pct(h.share), mib(h.share * reference)),
    };
    let words = match (h.at_least, vary) {
        (true, Vary::Pool) => format!("the hot set is larger than the largest pool tried, {size}"),
        (true, Vary::Data) => format!("the hot set is more than {size}"),
        (false, _) => format!("the hot set is about {size}"),
    };
    let shares = format!("{} to {}", pct(h.low), pct(h.high));
    let reading = match h.method {
        Method::Misses => {
            let axis = if vary == Vary::Pool { "pool size" } else { "the pool's share of the data" };
            let floor = h.floor.map_or(String::new(), |f| format!("{f:.2}"));
            let above = h.above.map_or(String::new(), |a| format!("{a:.2}"));
            match h.at_least {
                true => format!(
                    "the knee of reads from disk per transaction against {axis}: {above} at the largest pool \
                     ({}), still above the floor of {floor}, so {}",
                    mib(pool(v.points[0].0)),
                    h.how
                ),
                false => format!(
                    "the knee of reads from disk per transaction against {axis}: {floor} at their floor, {above} \
                     just below the knee (the pool's share {shares} of the data brackets it); {}",
                    h.how
                ),
            }
        }
        Method::Throughput => format!(
            "the knee of throughput against {} (the server reports no buffer-pool counters): {}, the pool's share \
             {shares}",
            if vary == Vary::Pool { "pool size" } else { "data size" },
            h.how
        ),
    };
    (words, reading)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_are_sizes_in_the_order_given() {
        assert_eq!(parse_pools(&Levels::Text("128M,64M,1G".into())).unwrap(), [128, 64, 1024]);
        assert_eq!(parse_pools(&Levels::Text("auto".into())).unwrap(), Vec::<u32>::new());
        assert_eq!(parse_pools(&Levels::List(vec![32, 16])).unwrap(), [32, 16]);
        assert!(
            matches!(parse_pools(&Levels::Text("128,64".into())), Err(Invalid::Value(m)) if m.contains("128M,64M"))
        );
        assert!(matches!(parse_pools(&Levels::Text("64M,64M".into())), Err(Invalid::Twice(m)) if m.contains("twice")));
        assert!(
            matches!(parse_pools(&Levels::Text("lots".into())), Err(Invalid::Value(m)) if m.contains("sizes like"))
        );
    }

    #[test]
    fn auto_pools_halve_from_above_the_data() {
        // 93 MiB of data: 128 MiB holds it with room, then halves to 8 MiB.
        assert_eq!(auto_pools(93 << 20), [128, 64, 32, 16, 8]);
        // 800 MiB: six levels, 1 GiB down to 32 MiB.
        assert_eq!(auto_pools(800 << 20), [1024, 512, 256, 128, 64, 32]);
        // Tiny data still gets two levels.
        assert_eq!(auto_pools(1 << 20), [16, 8]);
    }

    #[test]
    fn the_page_cache_check_reads_the_device_against_innodb() {
        let status = |r: f64| StatusSample { data_reads_per_s: Some(r), ..Default::default() };
        let os = |d: f64| OsSample { disk_reads_per_s: Some(d), ..Default::default() };
        let c = page_cache(Some("O_DIRECT"), Some(&status(9634.0)), Some(&os(9632.0)));
        assert_eq!(c.state, PageCache::KeptOut, "{}", c.words);
        let c = page_cache(Some("O_DIRECT"), Some(&status(9634.0)), Some(&os(120.0)));
        assert_eq!(c.state, PageCache::Through);
        assert!(c.words.contains("read only 120"), "{}", c.words);
        assert_eq!(page_cache(Some("fsync"), Some(&status(9634.0)), Some(&os(9632.0))).state, PageCache::Through);
        assert_eq!(page_cache(Some("O_DIRECT"), Some(&status(3.0)), Some(&os(0.0))).state, PageCache::Unverified);
        assert_eq!(page_cache(Some("O_DIRECT"), Some(&status(500.0)), None).state, PageCache::Unverified);
    }

    /// Uniform access over 100 MiB: misses fall in a line to the floor at the data's
    /// size, so the four pools below it put the hot set at the data, as the line says.
    #[test]
    fn the_hot_set_of_uniform_access_is_the_data() {
        let k = 10.0; // leaf pages read per transaction
        let pts: Vec<(f64, f64)> = [2.56, 1.28, 0.64, 0.32, 0.16, 0.08]
            .iter()
            .map(|&s: &f64| (s, if s >= 1.0 { 0.02 } else { 0.02 + k * (1.0 - s) }))
            .collect();
        let h = knee(&pts).unwrap();
        assert!(!h.at_least);
        assert_eq!((h.high, h.low), (1.28, 0.64));
        assert!((h.share - 1.0).abs() < 0.01, "{h:?}");
        assert!(h.how.contains("line through the 4 smaller pools"), "{}", h.how);
    }

    /// A skewed workload: a hot quarter takes most reads; misses leave their floor
    /// below a pool of a quarter of the data.
    #[test]
    fn a_skewed_hot_set_is_found_at_its_knee() {
        let pts = [(1.0, 0.01), (0.5, 0.02), (0.25, 0.05), (0.125, 1.6), (0.0625, 3.1)];
        let h = knee(&pts).unwrap();
        assert_eq!((h.high, h.low), (0.25, 0.125));
        // The line through 0.125 and 0.0625 meets the floor beyond the bracket: kept in it.
        assert!((0.125..=0.25).contains(&h.share), "{h:?}");
        // No rise at all: no knee.
        assert!(knee(&[(1.0, 0.02), (0.5, 0.03), (0.25, 0.04)]).is_none());
        // Still falling at the largest pool: the hot set is above it.
        let h = knee(&[(0.5, 2.0), (0.25, 5.0), (0.125, 7.0)]).unwrap();
        assert!(h.at_least && h.share == 0.5, "{h:?}");
    }

    fn level(level: u32, tps: f64, pool_mib: u64, data_mib: u64, misses_per_s: Option<f64>) -> LevelResult {
        let mut l = crate::study::saturation::tests::level(level, tps, 0.03);
        l.memory = Some(MemoryLevel {
            pool_bytes: Some(pool_mib << 20),
            data_bytes: Some(data_mib << 20),
            warmup_s: 12.0,
            settled: true,
            warmup_run: None,
            flush_method: Some("O_DIRECT".into()),
            page_cache: None,
        });
        l.observed.status =
            misses_per_s.map(|m| StatusSample { buffer_pool_reads_per_s: Some(m), ..Default::default() });
        l
    }

    #[test]
    fn the_answer_says_where_throughput_holds_and_falls_and_the_hot_set() {
        // 100 MiB of uniform data: throughput holds at 64 MiB (misses rose, the disk is
        // fast), falls at 32 MiB.
        let levels = vec![
            level(128, 2400.0, 128, 100, Some(48.0)),
            level(64, 2350.0, 64, 100, Some(2350.0 * 3.6)),
            level(32, 1800.0, 32, 100, Some(1800.0 * 6.8)),
            level(16, 1500.0, 16, 100, Some(1500.0 * 8.4)),
        ];
        let v = verdict(&levels).unwrap();
        assert_eq!((v.best, v.holds_to), (128, 64));
        let falls = v.falls.unwrap();
        assert_eq!(falls.at, 32);
        assert!((falls.pct + 25.0).abs() < 0.1, "{falls:?}");
        let h = v.hot.clone().unwrap();
        assert_eq!((h.high, h.low), (1.28, 0.64));
        let a = answer(&v, &levels, Vary::Pool, "tps", "rows per table");
        assert!(a.starts_with("Throughput holds down to a pool of 64 MiB (64 % of the data): 2400 tps at best"), "{a}");
        assert!(a.contains("; at a pool of 32 MiB (32 % of the data) it falls 25 %"), "{a}");
        assert!(v.rises_again.is_none() && !a.contains("rose again"), "{a}");
        assert!(a.contains("the hot set is about"), "{a}");
        assert!(a.contains("Method: the knee of reads from disk per transaction against pool size"), "{a}");
        // Noise is no fall: 2400 against 2350 at a 3 % spread is the same.
        let flat = vec![level(128, 2400.0, 128, 100, Some(48.0)), level(64, 2350.0, 64, 100, Some(47.0))];
        let v = verdict(&flat).unwrap();
        assert!(v.falls.is_none() && v.hot.is_none());
        let a = answer(&v, &flat, Vary::Pool, "tps", "");
        assert!(a.contains("did not fall beyond the noise at the smallest pool tried"), "{a}");
        assert!(a.contains("fits in the smallest pool tried"), "{a}");
        assert!(a.contains("Only two levels"), "{a}");
    }

    /// The first pool is the best and the next one already fell: no "holds down to" the
    /// largest pool, which would read as if smaller pools had held.
    #[test]
    fn a_fall_at_the_first_smaller_pool_is_said_so() {
        let levels = vec![
            level(128, 1964.0, 128, 93, Some(20.0)),
            level(64, 1409.0, 64, 93, Some(14.0)),
            level(32, 911.0, 32, 93, Some(911.0 * 2.38)),
        ];
        let v = verdict(&levels).unwrap();
        let a = answer(&v, &levels, Vary::Pool, "tps", "");
        assert!(a.starts_with("Throughput is highest at a pool of 128 MiB (138 % of the data): 1964 tps"), "{a}");
        assert!(a.contains("at a pool of 64 MiB (69 % of the data) it already falls 28 %"), "{a}");
    }

    /// study 9 on the 2-core box: 32 MiB gave 1490 tps, 16 MiB 2002 (cv 15 %): an
    /// answer that only read the first fall would have hidden it.
    #[test]
    fn throughput_that_rises_again_past_the_fall_is_said_so() {
        let levels = vec![
            level(128, 2843.0, 128, 92, Some(28.0)),
            level(64, 2690.0, 64, 92, Some(80.0)),
            level(32, 1490.0, 32, 92, Some(1490.0 * 2.46)),
            level(16, 2002.0, 16, 92, Some(2002.0 * 6.07)),
        ];
        let v = verdict(&levels).unwrap();
        assert_eq!(v.rises_again, Some(16));
        let a = answer(&v, &levels, Vary::Pool, "tps", "");
        assert!(
            a.contains("Past the fall throughput rose again beyond the noise (2002 tps at a pool of 16 MiB"),
            "{a}"
        );
        assert!(a.contains("repeat the study"), "{a}");
    }

    /// misses_per_transaction_of_tpcc_divided_by_nopm: a TPC-C level at 10,680 NOPM and
    /// 18,667 misses/s read as 1.75 misses a transaction; its transactions were ~390/s.
    #[test]
    fn misses_per_transaction_of_tpcc_divided_by_nopm() {
        let mut l = level(16, 10680.0, 16, 103, Some(18667.0));
        l.tps = 390.0;
        assert!((misses_per_txn(&l).unwrap() - 47.86).abs() < 0.01);
    }

    #[test]
    fn data_levels_read_on_the_pools_share() {
        // A 32 MiB pool under growing data.
        let levels = vec![
            level(10000, 2400.0, 32, 10, Some(10.0)),
            level(40000, 2380.0, 32, 40, Some(2380.0 * 1.0)),
            level(160000, 1500.0, 32, 160, Some(1500.0 * 7.0)),
            level(320000, 1200.0, 32, 320, Some(1200.0 * 8.5)),
        ];
        let v = verdict(&levels).unwrap();
        assert_eq!(v.holds_to, 40000);
        assert_eq!(v.falls.unwrap().at, 160000);
        let a = answer(&v, &levels, Vary::Data, "tps", "rows per table");
        assert!(
            a.starts_with("Throughput holds up to 40000 rows per table (40 MiB of data, the 32 MiB pool 80 % of it)"),
            "{a}"
        );
        assert!(a.contains("the hot set is about"), "{a}");
    }

    #[test]
    fn without_counters_the_knee_of_throughput_stands_in() {
        let levels = vec![
            level(128, 2400.0, 128, 100, None),
            level(64, 2380.0, 64, 100, None),
            level(32, 1500.0, 32, 100, None),
        ];
        let v = verdict(&levels).unwrap();
        let h = v.hot.clone().unwrap();
        assert_eq!(h.method, Method::Throughput);
        assert_eq!((h.high, h.low), (0.64, 0.32));
        assert!(answer(&v, &levels, Vary::Pool, "tps", "").contains("the knee of throughput"));
    }
}
