//! What ran out at a level, from what was measured there: the host's CPU (and who used
//! it: the server, sizeup, other processes, each measured), I/O wait or a busy data
//! device, row-lock waits, reads that missed the buffer pool, sizeup's own client
//! threads, replication lag. Each finding quotes its figures; a level where nothing
//! measured ran out says that too, never a guess. Pure: one level's figures in, words
//! out; thresholds are named below so the README can state them.

use super::figures::LevelResult;
use crate::monitor::os;

/// Host CPU busy at or above this share (per cent) counts as run out: a 2-core host
/// at 95 % has a tenth of a core left, which a server cannot use for more work.
pub const CPU_BUSY: f64 = 90.0;
/// I/O wait at or above this share of the host, or the data device busy at or above
/// `DISK_BUSY` per cent of the time, counts as I/O run out.
pub const IO_WAIT: f64 = 10.0;
pub const DISK_BUSY: f64 = 80.0;
/// Replication lag at or above this many seconds: the replicas did not keep up.
pub const LAG_S: f64 = 5.0;
/// Row locks ran out when on average at least this share of the running sessions (and
/// at least `LOCK_SESSIONS` sessions) were waiting on one: Innodb_row_lock_time's
/// milliseconds per second / 1000 is the mean number of sessions waiting.
pub const LOCK_SHARE: f64 = 0.25;
pub const LOCK_SESSIONS: f64 = 0.2;
/// The buffer pool ran out when its hit ratio fell below this and at least
/// `POOL_MISSES` pages a second came from disk.
pub const POOL_HIT: f64 = 0.99;
pub const POOL_MISSES: f64 = 100.0;
/// Free-page or log-buffer waits at or above this many a second count as a shortage.
pub const WAITS_PER_S: f64 = 1.0;

/// One resource that ran out, and the sentence with its figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// A short tag for tables: cpu, io, locks, pool, client, others, lag.
    pub tag: &'static str,
    pub words: String,
}

fn cores(v: f64) -> String {
    format!("{v:.2}")
}

/// Who used the host's CPU, each measured: "server 1.62, sizeup 0.31, other processes
/// 0.02 of 2 cores".
pub fn cpu_users(o: &os::OsSample) -> String {
    let mut parts = Vec::new();
    if let Some(s) = o.server_cores {
        parts.push(format!("server {}", cores(s)));
    }
    parts.push(format!("sizeup {}", cores(o.client_cores)));
    if let Some(x) = o.other_cores {
        // An unwatched server's own CPU is counted there.
        let whose = if o.server_cores.is_none() { " (the server's among them: not watched)" } else { "" };
        parts.push(format!("other processes{whose} {}", cores(x)));
    }
    let of = o.host_cpus.map_or(String::new(), |n| format!(" of {n} cores"));
    format!("{}{of}", parts.join(", "))
}

/// What ran out at `l`, most telling first; empty when nothing measured did.
pub fn findings(l: &LevelResult) -> Vec<Finding> {
    let mut out = Vec::new();
    let load_generator = l.observed.notes.iter().find(|n| n.starts_with(os::LOAD_GENERATOR));
    if let Some(n) = load_generator {
        out.push(Finding { tag: "client", words: n.clone() });
    }
    if let Some(n) = l.observed.notes.iter().find(|n| n.starts_with(os::OTHER_PROCESSES)) {
        out.push(Finding { tag: "others", words: n.clone() });
    }
    // The host's CPU and disks are the server's only when sizeup watched the server's
    // process here (a managed instance); a remote server's are not measured at all.
    if let Some(o) = l.observed.os.as_ref().filter(|o| o.server_cores.is_some() && o.server_host.is_none()) {
        if let Some(busy) = o.busy().filter(|b| *b >= CPU_BUSY) {
            out.push(Finding { tag: "cpu", words: format!("the host's CPU ({busy:.0} % busy: {})", cpu_users(o)) });
        }
        let disk = o.disk_busy_pct.filter(|d| *d >= DISK_BUSY);
        if (o.has_cpu() && o.iowait >= IO_WAIT) || disk.is_some() {
            let mut parts = Vec::new();
            if o.has_cpu() {
                parts.push(format!("{:.0} % I/O wait", o.iowait));
            }
            if let Some(d) = o.disk_busy_pct {
                parts.push(format!("the data device busy {d:.0} % of the time"));
            }
            let mut w = format!("I/O ({}", parts.join(", "));
            if let (Some(r), Some(wr)) = (o.disk_reads_per_s, o.disk_writes_per_s) {
                w += &format!(", {r:.0} reads/s and {wr:.0} writes/s");
            }
            out.push(Finding { tag: "io", words: w + ")" });
        }
    }
    // The server host's node_exporter, where the user named one: that host's CPU and
    // disks are the server's, wherever it runs (a server elsewhere has no other).
    if let Some(h) = l.observed.os.as_ref().and_then(|o| o.server_host.as_ref()) {
        if h.busy() >= CPU_BUSY {
            out.push(Finding { tag: "cpu", words: format!("the server host's CPU (node_exporter: {})", h.words()) });
        }
        let disk = h.disk_busy_pct.filter(|d| *d >= DISK_BUSY);
        if h.iowait >= IO_WAIT || disk.is_some() {
            out.push(Finding { tag: "io", words: format!("the server host's I/O (node_exporter: {})", h.words()) });
        }
    }
    // Lab nodes are held to a CPU quota the host's figures do not show.
    if let Some(q) = l.node_cpus.filter(|q| *q > 0.0) {
        let busiest = l.per_instance_cores.iter().copied().fold(0.0, f64::max);
        if busiest >= 0.9 * q {
            let used: Vec<String> = l.per_instance_cores.iter().map(|c| format!("{c:.2}")).collect();
            out.push(Finding {
                tag: "quota",
                words: format!("the nodes' CPU quota ({q} cores each; the nodes used {})", used.join(", ")),
            });
        }
    }
    if let Some(st) = &l.observed.status {
        if let Some(ms) = st.row_lock_time_ms_per_s {
            let waiting = ms / 1000.0;
            let running = st.threads_running.unwrap_or(0.0);
            if waiting >= LOCK_SESSIONS && waiting >= LOCK_SHARE * running {
                out.push(Finding {
                    tag: "locks",
                    words: format!(
                        "row locks (on average {waiting:.1} sessions waited on a row lock{}, {:.0} lock waits/s)",
                        if running > 0.0 { format!(" of {running:.0} running") } else { String::new() },
                        st.row_lock_waits_per_s.unwrap_or(0.0)
                    ),
                });
            }
        }
        if let (Some(hit), Some(miss)) = (st.buffer_pool_hit_ratio, st.buffer_pool_reads_per_s) {
            if hit < POOL_HIT && miss >= POOL_MISSES {
                out.push(Finding {
                    tag: "pool",
                    words: format!(
                        "the buffer pool ({miss:.0} page reads/s missed it and went to disk: hit ratio {:.2} %)",
                        hit * 100.0
                    ),
                });
            }
        }
        // A wait now and then is no shortage: at least one a second.
        if let Some(w) = st.buffer_pool_wait_free_per_s.filter(|w| *w >= WAITS_PER_S) {
            out.push(Finding {
                tag: "pool",
                words: format!("free buffer-pool pages ({w:.1} waits/s for a free page)"),
            });
        }
        if let Some(w) = st.log_waits_per_s.filter(|w| *w >= WAITS_PER_S) {
            out.push(Finding { tag: "log", words: format!("the redo log buffer ({w:.1} waits/s for room in it)") });
        }
    }
    if let Some(lag) = l.observed.max_lag_s.filter(|v| *v >= LAG_S) {
        out.push(Finding {
            tag: "lag",
            words: format!("the replicas' apply rate (replication lag reached {lag:.0} s)"),
        });
    }
    out
}

/// The one-line account of `l`'s resources when nothing ran out, so a reader sees what
/// was checked: "CPU 62 % busy, I/O wait 0 %".
pub fn headroom(l: &LevelResult) -> String {
    let Some(o) = &l.observed.os else { return "no host figures were recorded".into() };
    if let Some(h) = &o.server_host {
        return format!("the server host (node_exporter): {}", h.words());
    }
    if o.server_cores.is_none() {
        return "the server's process was not watched (not a managed instance): its CPU and disk are not \
                measured here"
            .into();
    }
    let mut parts = Vec::new();
    match o.busy() {
        Some(b) => parts.push(format!("CPU {b:.0} % busy ({})", cpu_users(o))),
        None => parts.push("no CPU reading".into()),
    }
    if o.has_cpu() {
        parts.push(format!("I/O wait {:.0} %", o.iowait));
    }
    if let Some(d) = o.disk_busy_pct {
        parts.push(format!("data device busy {d:.0} %"));
    }
    if let Some(st) = &l.observed.status {
        if let Some(hit) = st.buffer_pool_hit_ratio {
            parts.push(format!("buffer-pool hit ratio {:.2} %", hit * 100.0));
        }
        if let Some(ms) = st.row_lock_time_ms_per_s {
            parts.push(format!("{:.2} sessions waiting on row locks", ms / 1000.0));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::figures::fixtures::bare_level;

    fn with_os(busy: f64, iowait: f64, server: f64, client: f64, other: f64) -> LevelResult {
        let mut l = bare_level(2, 1000.0);
        l.observed.os = Some(os::OsSample {
            idle: 100.0 - busy - iowait,
            iowait,
            usr: busy,
            host_cpus: Some(2),
            server_cores: Some(server),
            client_cores: client,
            other_cores: Some(other),
            ..Default::default()
        });
        l
    }

    #[test]
    fn cpu_bound_names_who_used_it() {
        let f = findings(&with_os(97.0, 0.5, 1.55, 0.36, 0.03));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].tag, "cpu");
        assert_eq!(f[0].words, "the host's CPU (97 % busy: server 1.55, sizeup 0.36, other processes 0.03 of 2 cores)");
    }

    #[test]
    fn io_bound_is_io_not_cpu() {
        let mut l = with_os(40.0, 35.0, 0.6, 0.1, 0.0);
        if let Some(o) = l.observed.os.as_mut() {
            o.disk_busy_pct = Some(96.0);
            o.disk_reads_per_s = Some(2400.0);
            o.disk_writes_per_s = Some(300.0);
        }
        let f = findings(&l);
        assert_eq!(f.iter().map(|f| f.tag).collect::<Vec<_>>(), ["io"]);
        assert!(f[0].words.contains("35 % I/O wait, the data device busy 96 %"), "{}", f[0].words);
    }

    #[test]
    fn nothing_ran_out_says_what_was_checked() {
        let l = with_os(55.0, 1.0, 0.9, 0.1, 0.02);
        assert!(findings(&l).is_empty());
        assert!(headroom(&l).starts_with("CPU 55 % busy (server 0.90"), "{}", headroom(&l));
    }

    /// A lab node at its CPU quota has run out, whatever the host shows.
    #[test]
    fn lab_nodes_at_their_cpu_quota_ran_out() {
        let mut l = with_os(33.0, 0.0, 0.59, 0.1, 0.0);
        l.node_cpus = Some(0.3);
        l.per_instance_cores = vec![0.29, 0.21];
        let f = findings(&l);
        assert_eq!(f.iter().map(|f| f.tag).collect::<Vec<_>>(), ["quota"]);
        assert_eq!(f[0].words, "the nodes' CPU quota (0.3 cores each; the nodes used 0.29, 0.21)");
        l.per_instance_cores = vec![0.15, 0.12];
        assert!(findings(&l).is_empty());
    }

    #[test]
    fn lock_bound_and_pool_bound_are_read_from_the_status_counters() {
        use crate::monitor::status::StatusSample;
        let mut l = with_os(60.0, 2.0, 1.0, 0.15, 0.0);
        // 3.2 s of row-lock waiting every second: 3.2 of 8 running sessions waiting.
        l.observed.status = Some(StatusSample {
            row_lock_time_ms_per_s: Some(3200.0),
            row_lock_waits_per_s: Some(410.0),
            threads_running: Some(8.0),
            buffer_pool_hit_ratio: Some(0.9995),
            buffer_pool_reads_per_s: Some(3.0),
            ..Default::default()
        });
        let f = findings(&l);
        assert_eq!(f.iter().map(|f| f.tag).collect::<Vec<_>>(), ["locks"]);
        assert_eq!(
            f[0].words,
            "row locks (on average 3.2 sessions waited on a row lock of 8 running, 410 lock waits/s)"
        );
        // A pool that misses: 3,033 page reads/s from disk at a 96.97 % hit ratio.
        l.observed.status = Some(StatusSample {
            buffer_pool_hit_ratio: Some(0.9697),
            buffer_pool_reads_per_s: Some(3033.0),
            row_lock_time_ms_per_s: Some(1.0),
            threads_running: Some(3.0),
            ..Default::default()
        });
        let f = findings(&l);
        assert_eq!(f.iter().map(|f| f.tag).collect::<Vec<_>>(), ["pool"]);
        assert!(
            f[0].words.contains("3033 page reads/s missed it and went to disk: hit ratio 96.97 %"),
            "{}",
            f[0].words
        );
        // A server that lacks the counters: no finding, never a guess.
        l.observed.status = Some(StatusSample::default());
        assert!(findings(&l).is_empty());
    }

    /// A server sizeup does not watch (remote, or not managed): the host's CPU and disks
    /// are the client's, not the server's, and nothing is said to have run out there.
    #[test]
    fn an_unwatched_server_gets_no_host_findings() {
        let mut l = with_os(99.0, 30.0, 0.0, 0.3, 1.5);
        if let Some(o) = l.observed.os.as_mut() {
            o.server_cores = None;
            o.disk_busy_pct = Some(95.0);
        }
        assert!(findings(&l).is_empty());
        assert!(headroom(&l).contains("not watched"), "{}", headroom(&l));
        assert_eq!(os::other_processes_note(l.observed.os.as_ref()), None, "the unwatched server is no other program");
        // With its host's node_exporter (--server-metrics): what ran out there, named.
        if let Some(o) = l.observed.os.as_mut() {
            o.server_host = Some(crate::monitor::node::NodeSample {
                cpus: 16,
                usr: 80.0,
                sys: 15.0,
                idle: 5.0,
                busiest_disk: Some("nvme0n1".into()),
                disk_busy_pct: Some(20.0),
                ..Default::default()
            });
        }
        let f = findings(&l);
        assert_eq!(f.iter().map(|f| f.tag).collect::<Vec<_>>(), ["cpu"], "{f:?}");
        assert!(
            f[0].words.starts_with("the server host's CPU (node_exporter: CPU 95 % busy of 16 cores"),
            "{}",
            f[0].words
        );
        assert!(headroom(&l).starts_with("the server host (node_exporter): CPU 95 % busy"), "{}", headroom(&l));
    }

    /// an_interval_without_a_cpu_sample_is_a_gap: it read as 100 % busy (idle 0).
    #[test]
    fn an_interval_without_a_cpu_sample_is_a_gap() {
        let mut l = bare_level(2, 1000.0);
        l.observed.os = Some(os::OsSample { no_cpu: true, server_cores: Some(1.0), ..Default::default() });
        assert!(findings(&l).is_empty());
        assert!(headroom(&l).starts_with("no CPU reading"), "{}", headroom(&l));
        // A busy disk beside the gap: I/O, with no invented 0 % I/O wait.
        if let Some(o) = l.observed.os.as_mut() {
            o.disk_busy_pct = Some(90.0);
        }
        assert_eq!(findings(&l)[0].words, "I/O (the data device busy 90 % of the time)");
        // Samples stored before gaps were marked: all shares 0 are no reading either.
        assert_eq!(os::OsSample::default().busy(), None);
        let gap = os::OsSample { no_cpu: true, ..Default::default() };
        let half = os::OsSample { idle: 31.0, usr: 69.0, ..Default::default() };
        let m = os::mean(&[&gap, &half]).unwrap();
        assert_eq!((m.busy(), m.no_cpu), (Some(69.0), false), "the gap does not pull the mean to 100 % busy");
        assert_eq!(os::mean(&[&gap]).unwrap().busy(), None);
    }

    /// other_processes_cpu_is_not_the_load_generators: 1.4 of 2 cores used by other
    /// programs was read as "the load generator took 0.39 cores ... starved".
    #[test]
    fn other_processes_cpu_is_not_the_load_generators() {
        let l = with_os(98.0, 0.0, 0.36, 0.39, 1.2);
        let o = l.observed.os.as_ref().unwrap();
        assert_eq!(os::load_generator_note(Some(o), 2), None);
        let note = os::other_processes_note(Some(o)).unwrap();
        assert!(note.starts_with("other processes took 1.20 of the 1.96 busy cores"), "{note}");
        // A quiet host is no one's fault.
        assert_eq!(
            os::other_processes_note(Some(with_os(98.0, 0.0, 1.5, 0.4, 0.05).observed.os.as_ref().unwrap())),
            None
        );
    }
}
