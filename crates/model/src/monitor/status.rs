//! The server's own status counters (`SHOW GLOBAL STATUS`) sampled beside each interval,
//! so a run says what ran out on the server: buffer-pool misses, row-lock waits, InnoDB
//! I/O and fsyncs, threads running, commits, handler reads.
//!
//! A [`Reading`] is the counters this module keeps, as one or several servers returned
//! them; [`StatusSample::between`] turns two readings and the seconds between them into
//! per-second figures. Every figure is an `Option`: `None` when the server lacks the
//! counter, when a reading is missing (a gap, never 0), or when a counter or the uptime
//! went backwards (the server restarted between the readings). Which readings go with
//! which interval is [`Track`]'s. The parsing and the arithmetic are pure and tested on
//! captured rows; the query itself is the engine's `monitor::status::read`, called by `exec`.
//!
//! What it does not do: judge the figures (reports and studies do), read
//! `performance_schema` or `information_schema.innodb_metrics`, or keep counters other
//! than those named in [`KEPT`] and `Handler_read_*`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// The counters kept, as MySQL 8 and MariaDB both name them. All are cumulative counts
/// except `Threads_running` (a gauge); `Innodb_row_lock_time` is in milliseconds;
/// `Uptime` (seconds) only tells a restart between two readings.
pub const KEPT: [&str; 12] = [
    "Uptime",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_wait_free",
    "Innodb_row_lock_waits",
    "Innodb_row_lock_time",
    "Innodb_data_reads",
    "Innodb_data_writes",
    "Innodb_data_fsyncs",
    "Innodb_log_waits",
    "Threads_running",
    "Com_commit",
];

/// Every `Handler_read_*` counter is kept too (MariaDB has `_retry` and `_rnd_deleted`
/// beside MySQL's), and summed into one figure.
const HANDLER_READ: &str = "Handler_read_";

/// One reading of the kept counters: name (as [`KEPT`] spells it) -> value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    pub counters: BTreeMap<String, u64>,
}

impl Reading {
    /// The kept counters among `SHOW GLOBAL STATUS` rows (name, value). Names match
    /// whatever their case; rows that are not kept, or whose value is not a whole
    /// number (`ON`, an empty string, a decimal), are skipped.
    pub fn from_rows<N: AsRef<str>, V: AsRef<str>>(rows: impl IntoIterator<Item = (N, V)>) -> Reading {
        let mut counters = BTreeMap::new();
        for (name, value) in rows {
            let name = name.as_ref().trim();
            let Some(kept) = kept_name(name) else { continue };
            if let Ok(v) = value.as_ref().trim().parse::<u64>() {
                counters.insert(kept, v);
            }
        }
        Reading { counters }
    }

    /// Several servers' readings summed counter by counter (round robin over targets);
    /// a counter only some of them have is left out, so the sum never mixes a part with
    /// the whole. None when any reading is missing. (Their uptimes are summed too: a
    /// restart of one of them still shows as the sum going back, unless it had been up
    /// for less time than the others gained since the last reading.)
    pub fn sum(readings: &[Option<Reading>]) -> Option<Reading> {
        let all: Vec<&Reading> = readings.iter().map(Option::as_ref).collect::<Option<_>>()?;
        let (first, rest) = all.split_first()?;
        let counters = first
            .counters
            .iter()
            .filter_map(|(k, v)| {
                rest.iter()
                    .try_fold(*v, |sum, r| r.counters.get(k).map(|x| sum.saturating_add(*x)))
                    .map(|s| (k.clone(), s))
            })
            .collect();
        Some(Reading { counters })
    }

    fn get(&self, name: &str) -> Option<u64> {
        self.counters.get(name).copied()
    }

    /// The sum of the `Handler_read_*` counters, and their names.
    fn handler_reads(&self) -> Option<(u64, Vec<&str>)> {
        let names: Vec<&str> =
            self.counters.keys().map(String::as_str).filter(|k| k.starts_with(HANDLER_READ)).collect();
        (!names.is_empty()).then(|| (names.iter().filter_map(|n| self.get(n)).sum(), names))
    }
}

/// The spelling kept for a status name, if it is one of ours.
fn kept_name(name: &str) -> Option<String> {
    if let Some(k) = KEPT.iter().find(|k| k.eq_ignore_ascii_case(name)) {
        return Some(k.to_string());
    }
    let prefix = name.get(..HANDLER_READ.len())?;
    prefix
        .eq_ignore_ascii_case(HANDLER_READ)
        .then(|| format!("{HANDLER_READ}{}", name[HANDLER_READ.len()..].to_ascii_lowercase()))
}

/// The server's figures over one interval (or, in a summary, the steady-state mean).
/// Rates are per second; each is None when it could not be measured, never 0 then.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StatusSample {
    /// Seconds between the two readings the figures come from (a summary: all its
    /// samples' seconds together).
    pub seconds: f64,
    /// Logical page reads from the buffer pool (`Innodb_buffer_pool_read_requests`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_pool_read_requests_per_s: Option<f64>,
    /// Buffer-pool misses: pages read from disk (`Innodb_buffer_pool_reads`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_pool_reads_per_s: Option<f64>,
    /// 1 - misses / requests; None when nothing was requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_pool_hit_ratio: Option<f64>,
    /// Waits for a free page (`Innodb_buffer_pool_wait_free`): the pool is too small or
    /// its flushing cannot keep up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_pool_wait_free_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_lock_waits_per_s: Option<f64>,
    /// Milliseconds spent waiting for row locks per second (`Innodb_row_lock_time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_lock_time_ms_per_s: Option<f64>,
    /// InnoDB's file reads and writes (`Innodb_data_reads`, `Innodb_data_writes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_reads_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_writes_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_fsyncs_per_s: Option<f64>,
    /// Waits for room in the log buffer (`Innodb_log_waits`): it is too small.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_waits_per_s: Option<f64>,
    /// Threads running at the later reading (a gauge; the reading's own thread counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads_running: Option<f64>,
    /// COMMIT statements (`Com_commit`; autocommitted statements are not counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits_per_s: Option<f64>,
    /// Rows read through the handler interface, all `Handler_read_*` together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handler_read_per_s: Option<f64>,
}

impl StatusSample {
    /// The figures between reading `a` and the later reading `b`, `seconds` apart.
    pub fn between(a: &Reading, b: &Reading, seconds: f64) -> StatusSample {
        let secs = seconds.max(1e-9);
        // The server restarted in between (its uptime went back): its counters began
        // again from 0, and a difference is no count, even where it came out positive.
        let restarted = matches!((a.get("Uptime"), b.get("Uptime")), (Some(x), Some(y)) if y < x);
        // A counter both readings have and that did not go backwards, per second.
        let rate = |name: &str| match restarted {
            true => None,
            false => Some(b.get(name)?.checked_sub(a.get(name)?)? as f64 / secs),
        };
        let handler = match (a.handler_reads(), b.handler_reads()) {
            // The same counters on both sides, none of them gone backwards.
            (Some((_, na)), Some((sb, nb))) if !restarted && na == nb && na.iter().all(|n| b.get(n) >= a.get(n)) => {
                Some((sb - na.iter().filter_map(|n| a.get(n)).sum::<u64>()) as f64 / secs)
            }
            _ => None,
        };
        let requests = rate("Innodb_buffer_pool_read_requests");
        let misses = rate("Innodb_buffer_pool_reads");
        StatusSample {
            seconds,
            buffer_pool_read_requests_per_s: requests,
            buffer_pool_reads_per_s: misses,
            buffer_pool_hit_ratio: hit_ratio(requests, misses),
            buffer_pool_wait_free_per_s: rate("Innodb_buffer_pool_wait_free"),
            row_lock_waits_per_s: rate("Innodb_row_lock_waits"),
            row_lock_time_ms_per_s: rate("Innodb_row_lock_time"),
            data_reads_per_s: rate("Innodb_data_reads"),
            data_writes_per_s: rate("Innodb_data_writes"),
            data_fsyncs_per_s: rate("Innodb_data_fsyncs"),
            log_waits_per_s: rate("Innodb_log_waits"),
            threads_running: b.get("Threads_running").map(|v| v as f64),
            commits_per_s: rate("Com_commit"),
            handler_read_per_s: handler,
        }
    }
}

/// The work a run sent, over the same spans as its samples: what a counter that did
/// not move is weighed against.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sent {
    /// Read statements.
    pub reads: f64,
    /// Statements that are neither reads nor writes: BEGIN, COMMIT, ROLLBACK.
    pub other: f64,
}

/// Counters that stayed at 0 over a whole run while the work they count was sent: the
/// server reports them but does not keep them (go-mysql-server and Dolt report every
/// `Innodb_*`, `Com_commit` and `Handler_read_*` as 0 with no InnoDB underneath). They
/// are no measurement, so they are left out, never stored as 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unmoved {
    /// Every InnoDB counter: the buffer pool served no page while rows were read, so
    /// the server's storage is not InnoDB (its InnoDB settings do not apply either).
    pub innodb: bool,
    /// `Com_commit`, while the client sent BEGIN/COMMIT statements.
    pub commits: bool,
    /// `Handler_read_*`, while rows were read.
    pub handler: bool,
}

impl Unmoved {
    pub fn any(&self) -> bool {
        self.innodb || self.commits || self.handler
    }

    /// The counters, as the server names them: "Innodb_*, Com_commit".
    pub fn names(&self) -> String {
        let all = [(self.innodb, "Innodb_*"), (self.commits, "Com_commit"), (self.handler, "Handler_read_*")];
        all.iter().filter(|(on, _)| *on).map(|(_, n)| *n).collect::<Vec<_>>().join(", ")
    }

    /// Which counters did not move over `samples` (a run's, warm-up included) while
    /// `sent` was sent. A counter no sample has is absent already, not unmoved.
    pub fn of(samples: &[&StatusSample], sent: Sent) -> Unmoved {
        let total = |f: Field| {
            let v: Vec<f64> = samples.iter().filter_map(|s| f(s).map(|r| r * s.seconds)).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>())
        };
        // Ten statements at least: a reading taken a moment off the work is no evidence.
        let still = |f: Field, work: f64| work >= 10.0 && total(f).is_some_and(|t| t < 0.5);
        Unmoved {
            innodb: still(|s| s.buffer_pool_read_requests_per_s, sent.reads),
            commits: still(|s| s.commits_per_s, sent.other),
            handler: still(|s| s.handler_read_per_s, sent.reads),
        }
    }
}

impl StatusSample {
    /// The sample without the counters `u` found unmoved.
    pub fn forget(&mut self, u: Unmoved) {
        if u.innodb {
            *self = StatusSample {
                seconds: self.seconds,
                threads_running: self.threads_running,
                commits_per_s: self.commits_per_s,
                handler_read_per_s: self.handler_read_per_s,
                ..Default::default()
            };
        }
        if u.commits {
            self.commits_per_s = None;
        }
        if u.handler {
            self.handler_read_per_s = None;
        }
    }
}

/// A field of a sample, for combining samples field by field.
type Field = fn(&StatusSample) -> Option<f64>;

impl StatusSample {
    /// A sample whose rates and gauge are each `combine(that field)`; `seconds` 0 and no
    /// hit ratio (a ratio is no rate: the caller derives it from the combined counts).
    fn each(combine: impl Fn(Field) -> Option<f64>) -> StatusSample {
        StatusSample {
            seconds: 0.0,
            buffer_pool_read_requests_per_s: combine(|s| s.buffer_pool_read_requests_per_s),
            buffer_pool_reads_per_s: combine(|s| s.buffer_pool_reads_per_s),
            buffer_pool_hit_ratio: None,
            buffer_pool_wait_free_per_s: combine(|s| s.buffer_pool_wait_free_per_s),
            row_lock_waits_per_s: combine(|s| s.row_lock_waits_per_s),
            row_lock_time_ms_per_s: combine(|s| s.row_lock_time_ms_per_s),
            data_reads_per_s: combine(|s| s.data_reads_per_s),
            data_writes_per_s: combine(|s| s.data_writes_per_s),
            data_fsyncs_per_s: combine(|s| s.data_fsyncs_per_s),
            log_waits_per_s: combine(|s| s.log_waits_per_s),
            threads_running: combine(|s| s.threads_running),
            commits_per_s: combine(|s| s.commits_per_s),
            handler_read_per_s: combine(|s| s.handler_read_per_s),
        }
    }

    /// Each figure with its name as stored (exports and reports list them in this order).
    pub fn figures(&self) -> [(&'static str, Option<f64>); 13] {
        [
            ("buffer_pool_read_requests_per_s", self.buffer_pool_read_requests_per_s),
            ("buffer_pool_reads_per_s", self.buffer_pool_reads_per_s),
            ("buffer_pool_hit_ratio", self.buffer_pool_hit_ratio),
            ("buffer_pool_wait_free_per_s", self.buffer_pool_wait_free_per_s),
            ("row_lock_waits_per_s", self.row_lock_waits_per_s),
            ("row_lock_time_ms_per_s", self.row_lock_time_ms_per_s),
            ("data_reads_per_s", self.data_reads_per_s),
            ("data_writes_per_s", self.data_writes_per_s),
            ("data_fsyncs_per_s", self.data_fsyncs_per_s),
            ("log_waits_per_s", self.log_waits_per_s),
            ("threads_running", self.threads_running),
            ("commits_per_s", self.commits_per_s),
            ("handler_read_per_s", self.handler_read_per_s),
        ]
    }
}

/// 1 - misses / requests, when there were requests (clamped: the two counters are read
/// at slightly different moments).
fn hit_ratio(requests: Option<f64>, misses: Option<f64>) -> Option<f64> {
    let (r, m) = (requests?, misses?);
    (r > 0.0).then(|| (1.0 - m / r).clamp(0.0, 1.0))
}

/// The mean of several samples (a run's steady state), field by field over the samples
/// that have the field, weighted by their seconds (equal intervals: the plain mean); None
/// for a field no sample has, and None when there are no samples. The hit ratio is the
/// mean misses over the mean requests, not a mean of ratios.
pub fn mean(samples: &[&StatusSample]) -> Option<StatusSample> {
    if samples.is_empty() {
        return None;
    }
    let avg = |f: &dyn Fn(&StatusSample) -> Option<f64>| {
        let (sum, weight) = samples
            .iter()
            .filter_map(|s| f(s).map(|v| (v, s.seconds.max(1e-9))))
            .fold((0.0, 0.0), |(sum, weight), (v, w)| (sum + v * w, weight + w));
        (weight > 0.0).then(|| sum / weight)
    };
    // The ratio over the samples that have both figures.
    let both: Vec<&StatusSample> = samples
        .iter()
        .copied()
        .filter(|s| s.buffer_pool_read_requests_per_s.is_some() && s.buffer_pool_reads_per_s.is_some())
        .collect();
    let weighted = |f: fn(&StatusSample) -> Option<f64>| {
        both.iter().map(|s| f(s).unwrap_or(0.0) * s.seconds.max(1e-9)).sum::<f64>()
    };
    let ratio = match both.is_empty() {
        true => None,
        false => hit_ratio(
            Some(weighted(|s| s.buffer_pool_read_requests_per_s)),
            Some(weighted(|s| s.buffer_pool_reads_per_s)),
        ),
    };
    Some(StatusSample {
        seconds: samples.iter().map(|s| s.seconds).sum(),
        buffer_pool_hit_ratio: ratio,
        ..StatusSample::each(|f| avg(&f))
    })
}

/// Several servers' figures over the same span added up (a scale step's instances):
/// rates and the running threads summed over the servers that have them, the hit
/// ratio recomputed from the sums. None without parts.
pub fn total(parts: &[&StatusSample]) -> Option<StatusSample> {
    if parts.is_empty() {
        return None;
    }
    let sum = |f: fn(&StatusSample) -> Option<f64>| {
        let v: Vec<f64> = parts.iter().filter_map(|s| f(s)).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    let all = StatusSample::each(sum);
    Some(StatusSample {
        seconds: parts.iter().map(|s| s.seconds).fold(0.0, f64::max),
        buffer_pool_hit_ratio: hit_ratio(all.buffer_pool_read_requests_per_s, all.buffer_pool_reads_per_s),
        ..all
    })
}

/// Which readings go with which interval. A reading belongs to the interval it was taken
/// in; an interval's figures are those between the last reading before its start (the
/// previous interval's, or the run's first) and the last one taken inside it. An
/// interval with no reading taken inside it, or whose previous interval had none (the
/// span would straddle more than one interval), gets no figures: a gap.
#[derive(Debug, Default)]
pub struct Track {
    /// The last reading taken before the next interval to close, and when.
    before: Option<(Reading, Instant)>,
    /// Readings not yet placed, in the order they were taken.
    pending: Vec<(Reading, Instant)>,
    /// Where the last interval closed began: `before` must have been taken after it.
    last_from: Option<Instant>,
}

impl Track {
    /// The run's first reading, taken as it started (a moment after its clock did):
    /// where the first interval's figures begin.
    pub fn first(&mut self, r: Reading, at: Instant) {
        self.before = Some((r, at));
    }

    /// A reading came in (taken at `at`).
    pub fn reading(&mut self, r: Reading, at: Instant) {
        self.pending.push((r, at));
    }

    /// The interval from `from` to `to` closes: its figures, or None for a gap.
    pub fn close(&mut self, from: Instant, to: Instant) -> Option<StatusSample> {
        let pending = std::mem::take(&mut self.pending);
        let mut inside = None;
        for (r, at) in pending {
            if at < from {
                self.before = Some((r, at));
            } else if at <= to {
                inside = Some((r, at));
            } else {
                self.pending.push((r, at));
            }
        }
        let fresh_start = match (&self.before, self.last_from) {
            (Some((_, at)), Some(last)) => *at >= last,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let sample = match (&self.before, &inside) {
            (Some((a, a_at)), Some((b, b_at))) if fresh_start => {
                Some(StatusSample::between(a, b, b_at.saturating_duration_since(*a_at).as_secs_f64()))
            }
            _ => None,
        };
        if inside.is_some() {
            self.before = inside;
        }
        self.last_from = Some(from);
        sample
    }
}

/// The statement that reads the kept counters: `SHOW GLOBAL STATUS` filtered on the
/// server (the whole list is some 500 rows on MariaDB 10.11: 400 us of client CPU a
/// reading against 25 us filtered, measured on the project's 2-core box).
pub fn statement() -> String {
    let names: Vec<String> = KEPT.iter().map(|k| format!("'{k}'")).collect();
    format!(
        "{} SHOW GLOBAL STATUS WHERE Variable_name IN ({}) OR Variable_name LIKE '{HANDLER_READ}%'",
        crate::capture::OWN_MARK,
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SHOW GLOBAL STATUS` rows as `mariadb -N -B` prints them, a selection.
    fn rows(text: &str) -> Reading {
        Reading::from_rows(text.lines().filter_map(|l| l.split_once('\t')))
    }

    // MariaDB 10.11, a second apart under oltp_point_select on a pool smaller than the data.
    const MARIADB_A: &str = "Aborted_clients\t0\n\
Com_commit\t120\n\
Handler_read_first\t3\n\
Handler_read_key\t50000\n\
Handler_read_next\t200\n\
Handler_read_prev\t0\n\
Handler_read_retry\t0\n\
Handler_read_rnd\t10\n\
Handler_read_rnd_deleted\t0\n\
Handler_read_rnd_next\t7000\n\
Innodb_buffer_pool_dump_status\t\n\
Innodb_buffer_pool_load_status\tBuffer pool(s) load completed at 250101 10:00:00\n\
Innodb_buffer_pool_read_requests\t1000000\n\
Innodb_buffer_pool_reads\t20000\n\
Innodb_buffer_pool_wait_free\t0\n\
Innodb_data_fsyncs\t300\n\
Innodb_data_reads\t21000\n\
Innodb_data_writes\t900\n\
Innodb_have_atomic_builtins\tON\n\
Innodb_log_waits\t0\n\
Innodb_row_lock_time\t1500\n\
Innodb_row_lock_waits\t30\n\
Threads_running\t3\n\
Uptime\t100\n";
    const MARIADB_B: &str = "Com_commit\t120\n\
Handler_read_first\t3\n\
Handler_read_key\t54000\n\
Handler_read_next\t200\n\
Handler_read_prev\t0\n\
Handler_read_retry\t0\n\
Handler_read_rnd\t10\n\
Handler_read_rnd_deleted\t0\n\
Handler_read_rnd_next\t7000\n\
Innodb_buffer_pool_read_requests\t1010000\n\
Innodb_buffer_pool_reads\t22000\n\
Innodb_buffer_pool_wait_free\t4\n\
Innodb_data_fsyncs\t310\n\
Innodb_data_reads\t23000\n\
Innodb_data_writes\t920\n\
Innodb_log_waits\t0\n\
Innodb_row_lock_time\t1700\n\
Innodb_row_lock_waits\t32\n\
Threads_running\t5\n\
Uptime\t102\n";

    #[test]
    fn the_kept_counters_are_read_and_words_skipped() {
        let r = rows(MARIADB_A);
        assert_eq!(r.get("Innodb_buffer_pool_reads"), Some(20000));
        assert_eq!(r.get("Threads_running"), Some(3));
        // Not kept, or not a number.
        assert_eq!(r.get("Aborted_clients"), None);
        assert_eq!(r.get("Innodb_have_atomic_builtins"), None);
        assert_eq!(r.get("Innodb_buffer_pool_load_status"), None);
        assert_eq!(r.counters.len(), KEPT.len() + 8, "{r:?}");
        // Any case, as some servers print the names; stored in the one spelling.
        let upper = Reading::from_rows([("INNODB_BUFFER_POOL_READS", "7"), ("HANDLER_READ_KEY", " 8 ")]);
        assert_eq!(upper.get("Innodb_buffer_pool_reads"), Some(7));
        assert_eq!(upper.get("Handler_read_key"), Some(8));
        assert_eq!(Reading::from_rows([("Com_commit", "1.5"), ("Com_commit_x", "2")]).counters.len(), 0);
    }

    #[test]
    fn a_sample_is_rates_between_two_readings() {
        let s = StatusSample::between(&rows(MARIADB_A), &rows(MARIADB_B), 2.0);
        assert_eq!(s.seconds, 2.0);
        assert_eq!(s.buffer_pool_read_requests_per_s, Some(5000.0));
        assert_eq!(s.buffer_pool_reads_per_s, Some(1000.0));
        assert_eq!(s.buffer_pool_hit_ratio, Some(0.8));
        assert_eq!(s.buffer_pool_wait_free_per_s, Some(2.0));
        assert_eq!(s.row_lock_waits_per_s, Some(1.0));
        assert_eq!(s.row_lock_time_ms_per_s, Some(100.0));
        assert_eq!(s.data_reads_per_s, Some(1000.0));
        assert_eq!(s.data_writes_per_s, Some(10.0));
        assert_eq!(s.data_fsyncs_per_s, Some(5.0));
        assert_eq!(s.log_waits_per_s, Some(0.0));
        // A gauge: the later reading's value, not a difference.
        assert_eq!(s.threads_running, Some(5.0));
        // No COMMIT statements: a measured 0, not a gap.
        assert_eq!(s.commits_per_s, Some(0.0));
        assert_eq!(s.handler_read_per_s, Some(2000.0));
    }

    #[test]
    fn a_counter_the_server_lacks_is_no_figure() {
        // A server without InnoDB's wait counters and without Handler_read_*.
        let strip = |t: &str| {
            t.lines()
                .filter(|l| !l.starts_with("Innodb_buffer_pool_wait_free") && !l.starts_with("Handler_read"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let s = StatusSample::between(&rows(&strip(MARIADB_A)), &rows(&strip(MARIADB_B)), 1.0);
        assert_eq!(s.buffer_pool_wait_free_per_s, None);
        assert_eq!(s.handler_read_per_s, None);
        assert_eq!(s.buffer_pool_reads_per_s, Some(2000.0));
        // Present in one reading only: still no figure.
        let s = StatusSample::between(&rows(&strip(MARIADB_A)), &rows(MARIADB_B), 1.0);
        assert_eq!((s.buffer_pool_wait_free_per_s, s.handler_read_per_s), (None, None));
        // Nothing requested from the pool: no hit ratio (not 100 %).
        let idle = StatusSample::between(&rows(MARIADB_A), &rows(MARIADB_A), 1.0);
        assert_eq!(idle.buffer_pool_read_requests_per_s, Some(0.0));
        assert_eq!(idle.buffer_pool_hit_ratio, None);
    }

    #[test]
    fn a_counter_that_went_backwards_is_no_figure() {
        // The server restarted between the readings: its counters began again from 0.
        let restarted = "Innodb_buffer_pool_read_requests\t5000\nInnodb_buffer_pool_reads\t900\n\
Innodb_row_lock_waits\t0\nThreads_running\t2\nHandler_read_key\t10\nHandler_read_first\t0\n";
        let s = StatusSample::between(&rows(MARIADB_A), &rows(restarted), 1.0);
        assert_eq!(s.buffer_pool_read_requests_per_s, None);
        assert_eq!(s.buffer_pool_reads_per_s, None);
        assert_eq!(s.buffer_pool_hit_ratio, None);
        assert_eq!(s.row_lock_waits_per_s, None);
        assert_eq!(s.handler_read_per_s, None);
        // The gauge is still the later reading's.
        assert_eq!(s.threads_running, Some(2.0));
        // Restarted and already past the old counts (a burst of reads at startup): the
        // uptime went back, so no difference is a count.
        let busy_restart = MARIADB_B.replace("Uptime\t102", "Uptime\t3");
        let s = StatusSample::between(&rows(MARIADB_A), &rows(&busy_restart), 1.0);
        assert_eq!((s.buffer_pool_reads_per_s, s.data_reads_per_s, s.handler_read_per_s), (None, None, None));
        assert_eq!(s.threads_running, Some(5.0));
        // Without an uptime (a server that has none), the counters alone decide.
        let no_uptime = |t: &str| t.lines().filter(|l| !l.starts_with("Uptime")).collect::<Vec<_>>().join("\n");
        let s = StatusSample::between(&rows(&no_uptime(MARIADB_A)), &rows(&no_uptime(MARIADB_B)), 1.0);
        assert_eq!(s.buffer_pool_reads_per_s, Some(2000.0));
    }

    #[test]
    fn each_interval_gets_the_readings_taken_inside_it_or_a_gap() {
        let t0 = Instant::now();
        let at = |s: f64| t0 + std::time::Duration::from_secs_f64(s + 1.0);
        let reads = |n: u64| Reading::from_rows([("Innodb_buffer_pool_reads", n.to_string())]);
        let misses = |s: Option<StatusSample>| s.and_then(|s| s.buffer_pool_reads_per_s);
        let mut t = Track::default();
        // The run's first reading, as it starts, then one shortly before each boundary
        // (0.9 s, 1.9 s, ...).
        t.first(reads(0), at(0.01));
        t.reading(reads(88), at(0.9));
        let first = t.close(at(0.0), at(1.0)).unwrap();
        assert!((first.seconds - 0.89).abs() < 1e-9 && (misses(Some(first)).unwrap() - 88.0 / 0.89).abs() < 1e-9);
        // The reading for (1, 2] came after that interval closed (a slow server): a gap,
        // and the late reading is where (2, 3] starts from.
        assert_eq!(t.close(at(1.0), at(2.0)), None);
        t.reading(reads(190), at(1.9));
        t.reading(reads(290), at(2.9));
        assert_eq!(misses(t.close(at(2.0), at(3.0))), Some(100.0));
        // No reading at all in (3, 4] (the server stalled): a gap, and (4, 5] too, whose
        // only start would be the reading of 2.9 s, two intervals back.
        assert_eq!(t.close(at(3.0), at(4.0)), None);
        t.reading(reads(500), at(4.9));
        assert_eq!(t.close(at(4.0), at(5.0)), None);
        // Two intervals closed at once: each takes its own reading.
        t.reading(reads(600), at(5.9));
        t.reading(reads(800), at(6.9));
        assert_eq!(misses(t.close(at(5.0), at(6.0))), Some(100.0));
        assert_eq!(misses(t.close(at(6.0), at(7.0))), Some(200.0));
    }

    #[test]
    fn the_figures_are_named_as_stored() {
        let s = StatusSample::between(&rows(MARIADB_A), &rows(MARIADB_B), 2.0);
        let json = serde_json::to_value(&s).unwrap();
        for (name, v) in s.figures() {
            assert_eq!(json[name].as_f64(), v, "{name}");
        }
        // Every stored figure is listed (and the span).
        assert_eq!(json.as_object().unwrap().len(), s.figures().len() + 1);
    }

    #[test]
    fn several_servers_are_summed_and_a_missing_one_is_a_gap() {
        let a = rows(MARIADB_A);
        let partial = Reading::from_rows([("Innodb_buffer_pool_reads", "5"), ("Threads_running", "2")]);
        let sum = Reading::sum(&[Some(a.clone()), Some(partial)]).unwrap();
        assert_eq!(sum.get("Innodb_buffer_pool_reads"), Some(20005));
        assert_eq!(sum.get("Threads_running"), Some(5));
        // Only one of them has it: left out, not half a figure.
        assert_eq!(sum.get("Innodb_buffer_pool_read_requests"), None);
        assert_eq!(Reading::sum(&[Some(a.clone()), None]), None);
        assert_eq!(Reading::sum(&[]), None);
        assert_eq!(Reading::sum(&[Some(a.clone())]), Some(a));
    }

    #[test]
    fn the_mean_is_over_the_samples_that_have_each_figure() {
        let s1 = StatusSample {
            seconds: 1.0,
            buffer_pool_read_requests_per_s: Some(1000.0),
            buffer_pool_reads_per_s: Some(100.0),
            buffer_pool_hit_ratio: Some(0.9),
            threads_running: Some(2.0),
            ..Default::default()
        };
        let s2 = StatusSample {
            seconds: 1.0,
            buffer_pool_read_requests_per_s: Some(3000.0),
            buffer_pool_reads_per_s: Some(100.0),
            buffer_pool_hit_ratio: Some(1.0 - 100.0 / 3000.0),
            threads_running: None,
            row_lock_waits_per_s: Some(4.0),
            ..Default::default()
        };
        let m = mean(&[&s1, &s2]).unwrap();
        assert_eq!(m.seconds, 2.0);
        assert_eq!(m.buffer_pool_read_requests_per_s, Some(2000.0));
        assert_eq!(m.buffer_pool_reads_per_s, Some(100.0));
        // Misses over requests of the whole span: 200 / 4000.
        assert_eq!(m.buffer_pool_hit_ratio, Some(0.95));
        // Only the samples that have a figure count; one without it is no 0.
        assert_eq!(m.threads_running, Some(2.0));
        assert_eq!(m.row_lock_waits_per_s, Some(4.0));
        assert_eq!(m.commits_per_s, None);
        // A longer span (after a gap) weighs by its seconds.
        let long = StatusSample { seconds: 3.0, buffer_pool_reads_per_s: Some(200.0), ..Default::default() };
        assert_eq!(mean(&[&s1, &long]).unwrap().buffer_pool_reads_per_s, Some(175.0));
        assert_eq!(mean(&[]), None);
        // Stored and read back: absent figures stay absent.
        let json = serde_json::to_string(&s1).unwrap();
        assert!(!json.contains("commits_per_s"), "{json}");
        assert_eq!(serde_json::from_str::<StatusSample>(&json).unwrap(), s1);
    }

    #[test]
    fn counters_that_never_move_are_absent_not_zero() {
        // go-mysql-server: every counter there and 0, while 240 statements a second ran.
        let zero = |s: f64| StatusSample {
            seconds: s,
            buffer_pool_read_requests_per_s: Some(0.0),
            buffer_pool_reads_per_s: Some(0.0),
            row_lock_waits_per_s: Some(0.0),
            data_writes_per_s: Some(0.0),
            threads_running: Some(2.0),
            commits_per_s: Some(0.0),
            handler_read_per_s: Some(0.0),
            ..Default::default()
        };
        let (a, b) = (zero(1.0), zero(1.0));
        let sent = Sent { reads: 180.0, other: 40.0 };
        let u = Unmoved::of(&[&a, &b], sent);
        assert_eq!(u, Unmoved { innodb: true, commits: true, handler: true });
        let mut s = a.clone();
        s.forget(u);
        assert_eq!(s, StatusSample { seconds: 1.0, threads_running: Some(2.0), ..Default::default() });
        // Nothing of the kind sent (autocommitted point selects: no COMMIT): a measured 0.
        let reads_only = Unmoved::of(&[&a, &b], Sent { reads: 180.0, other: 0.0 });
        assert!(!reads_only.commits && reads_only.innodb);
        assert_eq!(Unmoved::of(&[&a, &b], Sent::default()), Unmoved::default());
        // MariaDB: the pool served pages; its misses and lock waits stay 0 and are kept.
        let moved = StatusSample {
            buffer_pool_read_requests_per_s: Some(5000.0),
            commits_per_s: Some(20.0),
            handler_read_per_s: Some(900.0),
            ..zero(1.0)
        };
        let u = Unmoved::of(&[&moved, &a], sent);
        assert!(!u.any(), "{u:?}");
        let mut kept = moved.clone();
        kept.forget(u);
        assert_eq!(kept, moved);
        assert_eq!(kept.row_lock_waits_per_s, Some(0.0));
        // A counter the server lacks is absent already, not unmoved.
        let none = StatusSample { seconds: 1.0, ..Default::default() };
        assert_eq!(Unmoved::of(&[&none], sent), Unmoved::default());
    }
}
