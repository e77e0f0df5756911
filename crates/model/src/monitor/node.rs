//! The server host's figures from a Prometheus node_exporter on it (`--server-metrics
//! URL`): for a server on another host, or one sizeup cannot watch, what its host's
//! CPU, disks, memory and network did in each interval, so "what ran out" can name
//! the server host's CPU or disk instead of saying it could not see.
//!
//! A [`NodeReading`] is one scrape's counters (node_exporter's text format); a
//! [`NodeSample`] the per-second figures between two readings, as `os::OsSample` has
//! them for this host. The parsing and the arithmetic are pure and tested on captured
//! text; the engine's `Scraper` fetches on a thread of its own (a slow exporter never holds up
//! the worker loop), and a scrape that fails is a gap, never 0.

use crate::error::Invalid;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One scrape: cumulative counters, summed where node_exporter splits them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeReading {
    /// CPU seconds by mode, over all CPUs (`node_cpu_seconds_total`).
    pub cpu: BTreeMap<String, f64>,
    /// CPUs seen in `node_cpu_seconds_total`.
    pub cpus: u32,
    /// Seconds each disk had I/O in flight (`node_disk_io_time_seconds_total`).
    pub disk_io: BTreeMap<String, f64>,
    pub mem_available: Option<f64>,
    pub mem_total: Option<f64>,
    /// Bytes over every interface but loopback.
    pub net_rx: Option<f64>,
    pub net_tx: Option<f64>,
}

/// Devices node_exporter reports that are no disk of the server's data (partitions
/// are counted with their disk by the kernel already).
fn is_disk(device: &str) -> bool {
    !(device.starts_with("loop") || device.starts_with("ram") || device.starts_with("sr") || device.starts_with("fd"))
}

/// One sample line: its name, its labels (name, value) and its value.
type Sample<'a> = (&'a str, Vec<(&'a str, &'a str)>, f64);

/// A sample's name, labels and value: `name{a="x",b="y"} 1.5e+03`.
fn sample(line: &str) -> Option<Sample<'_>> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let (head, rest) = match line.find('{') {
        Some(open) => {
            let close = line[open..].find('}')? + open;
            (&line[..open], (Some(&line[open + 1..close]), &line[close + 1..]))
        }
        None => {
            let sp = line.find(char::is_whitespace)?;
            (&line[..sp], (None, &line[sp..]))
        }
    };
    let (labels, value) = rest;
    // A value, then an optional timestamp.
    let value: f64 = value.split_whitespace().next()?.parse().ok()?;
    let labels = labels
        .map(|l| {
            l.split(',')
                .filter_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    Some((k.trim(), v.trim().trim_matches('"')))
                })
                .collect()
        })
        .unwrap_or_default();
    Some((head, labels, value))
}

impl NodeReading {
    /// The counters kept from node_exporter's text; None when it has no CPU counter
    /// (not a node_exporter, or its cpu collector is off).
    pub fn parse(text: &str) -> Option<NodeReading> {
        let mut r = NodeReading::default();
        let mut cpus = std::collections::BTreeSet::new();
        for (name, labels, value) in text.lines().filter_map(sample) {
            let label = |k: &str| labels.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
            match name {
                "node_cpu_seconds_total" => {
                    let (Some(cpu), Some(mode)) = (label("cpu"), label("mode")) else { continue };
                    cpus.insert(cpu.to_string());
                    *r.cpu.entry(mode.to_string()).or_default() += value;
                }
                "node_disk_io_time_seconds_total" => {
                    if let Some(d) = label("device").filter(|d| is_disk(d)) {
                        r.disk_io.insert(d.to_string(), value);
                    }
                }
                "node_memory_MemAvailable_bytes" => r.mem_available = Some(value),
                "node_memory_MemTotal_bytes" => r.mem_total = Some(value),
                "node_network_receive_bytes_total" | "node_network_transmit_bytes_total"
                    if label("device").is_some_and(|d| d != "lo") =>
                {
                    let sum = if name.contains("receive") { &mut r.net_rx } else { &mut r.net_tx };
                    *sum = Some(sum.unwrap_or(0.0) + value);
                }
                _ => {}
            }
        }
        r.cpus = cpus.len() as u32;
        (r.cpus > 0).then_some(r)
    }
}

/// The server host's figures over one interval: CPU shares in percent of all its CPUs
/// (as `OsSample`'s), its busiest disk, its memory and its network.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeSample {
    pub cpus: u32,
    pub usr: f64,
    pub sys: f64,
    pub iowait: f64,
    pub steal: f64,
    pub idle: f64,
    /// Everything else busy: nice, irq, softirq.
    pub other: f64,
    /// The disk with I/O in flight the longest share of the interval, and that share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_disk: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_busy_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_available_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_total_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_rx_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_tx_bytes_per_s: Option<f64>,
}

impl NodeSample {
    /// The figures between readings `a` and the later `b`, `seconds` apart; None when
    /// the host restarted in between (a counter went back) or no CPU time passed.
    pub fn between(a: &NodeReading, b: &NodeReading, seconds: f64) -> Option<NodeSample> {
        let delta = |m: &str| Some(b.cpu.get(m).copied().unwrap_or(0.0) - a.cpu.get(m).copied().unwrap_or(0.0));
        let total: f64 = b.cpu.values().sum::<f64>() - a.cpu.values().sum::<f64>();
        if total <= 0.0 || seconds <= 0.0 || b.cpu.iter().any(|(m, v)| a.cpu.get(m).is_some_and(|x| v < x)) {
            return None;
        }
        let pct = |m: &str| delta(m).unwrap_or(0.0).max(0.0) / total * 100.0;
        let (usr, sys, iowait, steal, idle) = (pct("user"), pct("system"), pct("iowait"), pct("steal"), pct("idle"));
        let busiest = b
            .disk_io
            .iter()
            .filter_map(|(d, v)| Some((d, (v - a.disk_io.get(d)?) / seconds * 100.0)))
            .filter(|(_, p)| *p >= 0.0)
            .max_by(|x, y| x.1.total_cmp(&y.1));
        let rate = |x: Option<f64>, y: Option<f64>| Some(((y? - x?) / seconds).max(0.0));
        Some(NodeSample {
            cpus: b.cpus,
            usr,
            sys,
            iowait,
            steal,
            idle,
            other: (100.0 - usr - sys - iowait - steal - idle).max(0.0),
            busiest_disk: busiest.map(|(d, _)| d.clone()),
            disk_busy_pct: busiest.map(|(_, p)| p.min(100.0)),
            mem_available_bytes: b.mem_available,
            mem_total_bytes: b.mem_total,
            net_rx_bytes_per_s: rate(a.net_rx, b.net_rx),
            net_tx_bytes_per_s: rate(a.net_tx, b.net_tx),
        })
    }

    /// Busy share of the server host: all but idle and iowait, as `OsSample::busy`.
    pub fn busy(&self) -> f64 {
        100.0 - self.idle - self.iowait
    }

    /// "CPU 95 % busy of 16 cores (iowait 1 %), disk nvme0n1 12 % busy, 3.2 GiB of 16.0
    /// GiB available, network 1.2 / 3.4 MB/s in / out".
    pub fn words(&self) -> String {
        let mut w = format!("CPU {:.0} % busy of {} cores (iowait {:.0} %", self.busy(), self.cpus, self.iowait);
        if self.steal >= 1.0 {
            w += &format!(", steal {:.0} %", self.steal);
        }
        w.push(')');
        if let (Some(d), Some(p)) = (&self.busiest_disk, self.disk_busy_pct) {
            w += &format!(", disk {d} {p:.0} % busy");
        }
        let gib = |b: f64| b / (1u64 << 30) as f64;
        match (self.mem_available_bytes, self.mem_total_bytes) {
            (Some(a), Some(t)) => w += &format!(", {:.1} GiB of {:.1} GiB available", gib(a), gib(t)),
            (Some(a), None) => w += &format!(", {:.1} GiB available", gib(a)),
            _ => {}
        }
        if let (Some(rx), Some(tx)) = (self.net_rx_bytes_per_s, self.net_tx_bytes_per_s) {
            w += &format!(", network {:.1} / {:.1} MB/s in / out", rx / 1e6, tx / 1e6);
        }
        w
    }
}

/// The mean of several intervals' figures (a run's steady state); None without any.
pub fn mean(samples: &[&NodeSample]) -> Option<NodeSample> {
    if samples.is_empty() {
        return None;
    }
    let n = samples.len() as f64;
    let avg = |f: &dyn Fn(&NodeSample) -> f64| samples.iter().map(|s| f(s)).sum::<f64>() / n;
    let avg_opt = |f: &dyn Fn(&NodeSample) -> Option<f64>| {
        let v: Vec<f64> = samples.iter().filter_map(|s| f(s)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    // The disk busiest most often, and its mean share where it was the busiest.
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for d in samples.iter().filter_map(|s| s.busiest_disk.as_deref()) {
        *counts.entry(d).or_default() += 1;
    }
    let disk = counts.into_iter().max_by_key(|(_, c)| *c).map(|(d, _)| d.to_string());
    Some(NodeSample {
        cpus: samples.iter().map(|s| s.cpus).max().unwrap_or(0),
        usr: avg(&|s| s.usr),
        sys: avg(&|s| s.sys),
        iowait: avg(&|s| s.iowait),
        steal: avg(&|s| s.steal),
        idle: avg(&|s| s.idle),
        other: avg(&|s| s.other),
        disk_busy_pct: avg_opt(&|s| s.disk_busy_pct.filter(|_| s.busiest_disk == disk)),
        busiest_disk: disk,
        mem_available_bytes: avg_opt(&|s| s.mem_available_bytes),
        mem_total_bytes: avg_opt(&|s| s.mem_total_bytes),
        net_rx_bytes_per_s: avg_opt(&|s| s.net_rx_bytes_per_s),
        net_tx_bytes_per_s: avg_opt(&|s| s.net_tx_bytes_per_s),
    })
}

/// Checks a `--server-metrics` URL before anything runs: plain http, a host, a path.
pub fn check_url(url: &str) -> Result<(), Invalid> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(Invalid::Value(format!(
            "--server-metrics '{url}': give node_exporter's plain-HTTP address, e.g. http://db1:9100/metrics"
        )));
    };
    if rest.is_empty() || rest.starts_with('/') {
        return Err(Invalid::Value(format!("--server-metrics '{url}' names no host: e.g. http://db1:9100/metrics")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// node_exporter 1.5's lines (Debian 12's prometheus-node-exporter), cut down.
    const A: &str = r#"# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 1000
node_cpu_seconds_total{cpu="0",mode="iowait"} 10
node_cpu_seconds_total{cpu="0",mode="system"} 100
node_cpu_seconds_total{cpu="0",mode="user"} 300
node_cpu_seconds_total{cpu="1",mode="idle"} 1000
node_cpu_seconds_total{cpu="1",mode="user"} 300
node_disk_io_time_seconds_total{device="vda"} 50
node_disk_io_time_seconds_total{device="loop0"} 9
node_memory_MemAvailable_bytes 8.589934592e+09
node_memory_MemTotal_bytes 1.7179869184e+10
node_network_receive_bytes_total{device="eth0"} 1e+06
node_network_receive_bytes_total{device="lo"} 5e+09
node_network_transmit_bytes_total{device="eth0"} 2e+06
"#;

    fn later(cpu_user: f64, idle: f64, disk: f64) -> String {
        A.replace("mode=\"user\"} 300", &format!("mode=\"user\"}} {cpu_user}"))
            .replace("mode=\"idle\"} 1000", &format!("mode=\"idle\"}} {idle}"))
            .replace("device=\"vda\"} 50", &format!("device=\"vda\"}} {disk}"))
            .replace("eth0\"} 1e+06", "eth0\"} 3e+06")
    }

    #[test]
    fn a_node_exporter_page_is_read() {
        let r = NodeReading::parse(A).unwrap();
        assert_eq!(r.cpus, 2);
        assert_eq!(r.cpu["idle"], 2000.0);
        assert_eq!(r.cpu["user"], 600.0);
        assert_eq!(r.disk_io.keys().collect::<Vec<_>>(), ["vda"], "loop devices are no disk");
        assert_eq!(r.mem_available, Some(8589934592.0));
        assert_eq!(r.net_rx, Some(1e6), "loopback's bytes are not the network's");
        assert_eq!(NodeReading::parse("# nothing\nup 1\n"), None);
        let (name, labels, v) = sample(r#"x{a="1",b="two"} 2.5 1700000000000"#).unwrap();
        assert_eq!((name, labels, v), ("x", vec![("a", "1"), ("b", "two")], 2.5));
    }

    #[test]
    fn the_server_host_figures_between_two_scrapes() {
        // 2 s: both CPUs busy in user mode 1.9 s each, idle 0.1 s each; vda busy 1 s.
        let a = NodeReading::parse(A).unwrap();
        let b = NodeReading::parse(&later(301.9, 1000.1, 51.0)).unwrap();
        let s = NodeSample::between(&a, &b, 2.0).unwrap();
        assert!((s.usr - 95.0).abs() < 1e-9 && (s.idle - 5.0).abs() < 1e-9, "{s:?}");
        assert!((s.busy() - 95.0).abs() < 1e-9);
        assert_eq!((s.busiest_disk.as_deref(), s.disk_busy_pct), (Some("vda"), Some(50.0)));
        assert_eq!(s.net_rx_bytes_per_s, Some(1e6));
        assert!(
            s.words().starts_with("CPU 95 % busy of 2 cores (iowait 0 %), disk vda 50 % busy, 8.0 GiB of 16.0 GiB"),
            "{}",
            s.words()
        );
        // The host restarted (its counters went back): no figures, not negative ones.
        assert_eq!(NodeSample::between(&b, &a, 2.0), None);
        let m = mean(&[&s, &s]).unwrap();
        assert_eq!(m, s);
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn a_server_metrics_url_is_checked() {
        assert!(check_url("http://127.0.0.1:9100/metrics").is_ok());
        assert!(matches!(check_url("https://db1:9100/metrics"), Err(Invalid::Value(m)) if m.contains("plain-HTTP")));
        assert!(matches!(check_url("http://"), Err(Invalid::Value(m)) if m.contains("names no host")));
    }
}
