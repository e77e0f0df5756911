//! Operating-system figures sampled beside each interval: host CPU as mpstat shows it,
//! the server processes' and sizeup's own CPU, disk I/O on the device holding the data,
//! memory, and power.
//!
//! A [`Snapshot`] is raw counters read from /proc and /sys; [`OsSample::between`] turns
//! two of them into rates and shares. The parsers and the arithmetic are pure, so they
//! are tested on captured text; only `Snapshot::take` reads files.

use crate::error::Invalid;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The aggregate `cpu` line of /proc/stat, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTicks {
    fn total(&self) -> u64 {
        self.user + self.nice + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal
    }
}

/// How many CPUs /proc/stat lists (`cpuN` lines): the host's cores, for turning shares
/// into cores.
pub fn parse_cpu_count(text: &str) -> Option<u32> {
    let n =
        text.lines().filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit)).count();
    (n > 0).then_some(n as u32)
}

/// The `cpu ` line of /proc/stat. guest time is already inside user, so it is not added.
pub fn parse_proc_stat(text: &str) -> Option<CpuTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).map(|f| f.parse().unwrap_or(0)).collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    if v.len() < 4 {
        return None;
    }
    Some(CpuTicks {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
    })
}

/// Completed I/Os and sectors (512 bytes each, whatever the device's block size).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DiskCounters {
    pub reads: u64,
    pub read_sectors: u64,
    pub writes: u64,
    pub write_sectors: u64,
    /// Milliseconds the devices had I/O in flight (field 13), summed, and how many.
    pub busy_ms: u64,
    pub devices: u32,
}

/// The counters of `devices` summed, from /proc/diskstats.
pub fn parse_diskstats(text: &str, devices: &[String]) -> Option<DiskCounters> {
    let mut sum = DiskCounters::default();
    let mut found = false;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 || !devices.iter().any(|d| d == f[2]) {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        sum.reads += n(3);
        sum.read_sectors += n(5);
        sum.writes += n(7);
        sum.write_sectors += n(9);
        sum.busy_ms += if f.len() > 12 { n(12) } else { 0 };
        sum.devices += 1;
        found = true;
    }
    found.then_some(sum)
}

/// (MemTotal, MemAvailable) in bytes from /proc/meminfo.
pub fn parse_meminfo(text: &str) -> Option<(u64, u64)> {
    Some((meminfo_bytes(text, "MemTotal:")?, meminfo_bytes(text, "MemAvailable:")?))
}

/// One /proc/meminfo field (`key` with its colon), in bytes.
pub fn meminfo_bytes(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|k| k * 1024)
}

/// Where a watts figure comes from: the report names it beside every energy figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "source")]
pub enum Power {
    /// RAPL energy counters (CPU packages and DRAM where present).
    Measured,
    /// Linear between idle and max watts in the host CPU the test used (other
    /// programs' share left out: `OsSample::test_busy`).
    Modelled { idle_w: f64, max_w: f64 },
    /// A constant the user gave.
    Given { watts: f64 },
    /// No counters and nothing given.
    None,
}

impl Power {
    pub fn label(&self) -> &'static str {
        match self {
            Power::Measured => "measured",
            Power::Modelled { .. } => "modelled",
            Power::Given { .. } => "given",
            Power::None => "none",
        }
    }
}

/// The most `--watts` one system may draw.
pub const MAX_WATTS: f64 = 1e6;

/// `--power-model idle=W,max=W` or `--watts W` (one of them at most).
pub fn power(model: Option<&str>, watts: Option<f64>) -> Result<Power, Invalid> {
    match (model, watts) {
        (Some(_), Some(_)) => Err(Invalid::Value("give --power-model or --watts, not both".into())),
        (Some(m), None) => parse_power_model(m),
        // A megawatt is far beyond one server; 1e308 W gave "inf W" per transaction.
        (None, Some(w)) if w.is_finite() && w > 0.0 && w <= MAX_WATTS => Ok(Power::Given { watts: w }),
        (None, Some(w)) => Err(Invalid::Value(format!(
            "--watts {}: give the system's power draw in watts, above 0 and at most {MAX_WATTS}",
            crate::error::shown(w)
        ))),
        (None, None) => Ok(Power::None),
    }
}

/// `--power-model idle=W,max=W`.
pub fn parse_power_model(s: &str) -> Result<Power, Invalid> {
    let mut idle = None;
    let mut max = None;
    for part in s.split(',') {
        let (k, v) =
            part.split_once('=').ok_or_else(|| Invalid::Value(format!("--power-model '{s}': write idle=W,max=W")))?;
        let w: f64 = v
            .trim()
            .trim_end_matches('W')
            .parse()
            .map_err(|_| Invalid::Value(format!("--power-model: '{v}' is not watts")))?;
        match k.trim() {
            "idle" => idle = Some(w),
            "max" => max = Some(w),
            other => return Err(Invalid::Value(format!("--power-model: unknown key '{other}'; write idle=W,max=W"))),
        }
    }
    match (idle, max) {
        (Some(i), Some(m)) if i >= 0.0 && m >= i => Ok(Power::Modelled { idle_w: i, max_w: m }),
        _ => Err(Invalid::Value(format!("--power-model '{s}': give both idle=W and max=W with max >= idle >= 0"))),
    }
}

/// The RAPL domains worth summing: packages (`intel-rapl:N`) and their DRAM subdomains;
/// core/uncore subdomains are inside the package figure already.
pub fn rapl_domains(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else { return out };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let path = e.path();
        let is_package = name.starts_with("intel-rapl:") && name.matches(':').count() == 1;
        let is_dram = name.matches(':').count() == 2
            && std::fs::read_to_string(path.join("name")).is_ok_and(|n| n.trim() == "dram");
        if (is_package || is_dram) && path.join("energy_uj").exists() {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Microjoules of each domain: (energy, wrap range).
fn read_rapl(domains: &[PathBuf]) -> Option<Vec<(u64, u64)>> {
    domains
        .iter()
        .map(|d| {
            let e = std::fs::read_to_string(d.join("energy_uj")).ok()?.trim().parse().ok()?;
            let r = std::fs::read_to_string(d.join("max_energy_range_uj"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(u64::MAX);
            Some((e, r))
        })
        .collect()
}

/// Joules between two RAPL readings, allowing each counter to wrap once.
pub fn rapl_joules(a: &[(u64, u64)], b: &[(u64, u64)]) -> f64 {
    a.iter().zip(b).map(|(&(e0, range), &(e1, _))| if e1 >= e0 { e1 - e0 } else { range - e0 + e1 }).sum::<u64>() as f64
        / 1e6
}

/// What to watch: the server processes, the disk holding the data, the power source.
#[derive(Clone, Debug)]
pub struct Watch {
    pub server_pids: Vec<i32>,
    /// Block devices to count (the data's device, or every physical disk).
    pub disks: Vec<String>,
    pub power: Power,
    rapl: Vec<PathBuf>,
}

impl Watch {
    /// Watches `pids`, the device holding `data_dir` (every physical disk when it is
    /// unknown, e.g. a remote server), and RAPL when the host has it, else `power`.
    pub fn new(server_pids: Vec<i32>, data_dir: Option<&Path>, power: Power) -> Watch {
        let disks = data_dir.and_then(device_of).map(|d| vec![d]).unwrap_or_else(physical_disks);
        let rapl = rapl_domains(Path::new("/sys/class/powercap"));
        let power = if !rapl.is_empty() && read_rapl(&rapl).is_some() && power == Power::None {
            Power::Measured
        } else {
            power
        };
        Watch { server_pids, disks, power, rapl }
    }
}

/// The block device (`vda`, `nvme0n1p2`) a path's file system lives on.
pub fn device_of(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    // SAFETY: major/minor are pure arithmetic on the number.
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    Some(link.file_name()?.to_string_lossy().to_string())
}

/// Whole disks that are not virtual (loop, zram, device-mapper stacks are skipped).
fn physical_disks() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| !l.to_string_lossy().contains("/virtual/")))
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect()
}

/// Raw counters at one moment.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub at: std::time::Instant,
    pub cpu: Option<CpuTicks>,
    /// CPU seconds of the server processes (summed) and of sizeup.
    pub server_cpu_s: Option<f64>,
    /// A server process was stopped (state T: SIGSTOP, a job-control stop, a tracer).
    pub server_stopped: bool,
    pub self_cpu_s: f64,
    pub disk: Option<DiskCounters>,
    pub memory: Option<(u64, u64)>,
    /// CPU ticks of every other process (pid -> utime + stime), so that what other
    /// programs took is measured, not inferred from the host's total.
    pub others: Option<std::collections::HashMap<i32, u64>>,
    /// CPU ticks of each of sizeup's client threads (tid -> utime + stime): a lone busy
    /// thread is a serial stage that the process's total hides.
    pub client_threads: Option<std::collections::HashMap<i32, u64>>,
    pub cpus: Option<u32>,
    rapl: Option<Vec<(u64, u64)>>,
}

/// utime + stime of every process but `skip`, from /proc (None when /proc cannot be
/// listed). A process that ends between two snapshots drops out of both.
fn other_processes(skip: &[i32]) -> Option<std::collections::HashMap<i32, u64>> {
    let me = std::process::id() as i32;
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut out = std::collections::HashMap::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if pid == me || skip.contains(&pid) {
            continue;
        }
        if let Some(t) =
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| super::parse_stat_cpu_ticks(&s))
        {
            out.insert(pid, t);
        }
    }
    Some(out)
}

/// The prefix of the worker loop's client threads' names (exec::run).
pub const CLIENT_THREAD: &str = "sizeup-client";

/// utime + stime of each of this process's client threads, from /proc/self/task.
fn client_thread_ticks() -> Option<std::collections::HashMap<i32, u64>> {
    let mut out = std::collections::HashMap::new();
    for e in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let Some(tid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // The name is between the first '(' and the last ')' (it may hold either).
        let named = stat.split_once('(').is_some_and(|(_, r)| r.starts_with(CLIENT_THREAD));
        if let Some(t) = named.then(|| super::parse_stat_cpu_ticks(&stat)).flatten() {
            out.insert(tid, t);
        }
    }
    Some(out)
}

/// The most CPU one thread present in both snapshots used, in cores.
pub fn busiest(
    a: &std::collections::HashMap<i32, u64>,
    b: &std::collections::HashMap<i32, u64>,
    secs: f64,
    ticks_per_s: f64,
) -> Option<f64> {
    b.iter()
        .filter_map(|(tid, t)| a.get(tid).map(|t0| t.saturating_sub(*t0)))
        .max()
        .map(|ticks| (ticks as f64 / ticks_per_s / secs.max(1e-9)).min(1.0))
}

/// Cores the other processes used between two snapshots: the processes present in both.
pub fn other_cores(
    a: &std::collections::HashMap<i32, u64>,
    b: &std::collections::HashMap<i32, u64>,
    secs: f64,
    ticks_per_s: f64,
) -> f64 {
    let ticks: u64 = b.iter().filter_map(|(pid, t)| a.get(pid).map(|t0| t.saturating_sub(*t0))).sum();
    ticks as f64 / ticks_per_s / secs.max(1e-9)
}

impl Snapshot {
    pub fn take(w: &Watch) -> Snapshot {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let server: Option<Vec<f64>> = w.server_pids.iter().map(|&p| super::process_cpu_seconds(p)).collect();
        let stat = read("/proc/stat");
        Snapshot {
            at: std::time::Instant::now(),
            cpu: parse_proc_stat(&stat),
            cpus: parse_cpu_count(&stat),
            others: other_processes(&w.server_pids),
            client_threads: client_thread_ticks(),
            server_cpu_s: server.filter(|s| !s.is_empty()).map(|s| s.iter().sum()),
            server_stopped: w.server_pids.iter().any(|&p| super::process_stopped(p)),
            self_cpu_s: super::self_cpu_seconds(),
            disk: parse_diskstats(&read("/proc/diskstats"), &w.disks),
            memory: parse_meminfo(&read("/proc/meminfo")),
            rapl: if w.rapl.is_empty() { None } else { read_rapl(&w.rapl) },
        }
    }
}

/// OS figures over one interval. CPU shares are percentages of the whole host (all
/// CPUs), as mpstat's `all` line; process CPU is in CPUs (1.0 = one core busy).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OsSample {
    pub usr: f64,
    pub nice: f64,
    pub sys: f64,
    pub iowait: f64,
    pub irq: f64,
    pub soft: f64,
    pub steal: f64,
    pub idle: f64,
    /// True when the interval had no host CPU reading: its shares above are a gap, not
    /// 0 % or 100 % busy.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_cpu: bool,
    /// The host's CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpus: Option<u32>,
    /// Server processes' CPU, in cores.
    pub server_cores: Option<f64>,
    /// A server process was seen stopped (state T) at either end of the interval: it was
    /// frozen for part of it, whatever the host's CPU did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_stopped: bool,
    /// sizeup's own CPU, in cores.
    pub client_cores: f64,
    /// Every other process's CPU, in cores, measured per process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_cores: Option<f64>,
    /// The busiest of sizeup's client threads, in cores (1.0 = never idle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_client_thread: Option<f64>,
    pub disk_reads_per_s: Option<f64>,
    pub disk_writes_per_s: Option<f64>,
    pub disk_read_bytes_per_s: Option<f64>,
    pub disk_write_bytes_per_s: Option<f64>,
    /// Share of the interval the data's device had I/O in flight (as iostat's %util).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_busy_pct: Option<f64>,
    pub mem_used_bytes: Option<u64>,
    pub mem_total_bytes: Option<u64>,
    /// Average watts over the interval and where they come from.
    pub watts: Option<f64>,
    #[serde(default)]
    pub power_source: String,
    /// The server host's own figures, from its node_exporter (`--server-metrics`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_host: Option<super::node::NodeSample>,
}

impl OsSample {
    /// Busy share of the host: everything but idle and iowait (what "CPU above 80 %"
    /// means in a saturation ramp); None for an interval without a CPU reading.
    pub fn busy(&self) -> Option<f64> {
        self.has_cpu().then_some(100.0 - self.idle - self.iowait)
    }

    /// Whether the sample has a host CPU reading: shares that sum to nothing (samples
    /// stored before gaps were marked) are none either.
    pub fn has_cpu(&self) -> bool {
        let sum = self.usr + self.nice + self.sys + self.iowait + self.irq + self.soft + self.steal + self.idle;
        !self.no_cpu && sum > 0.0
    }

    /// Whether programs outside the test starved the server (see [`Starved`]): the host
    /// over 90 % busy, others taking a quarter of its busy cores and at least 0.2.
    pub fn starved(&self) -> Option<Starved> {
        let (others, busy_cores) = self.others_on_a_saturated_host()?;
        (others >= 0.25 * busy_cores && others >= 0.2).then_some(Starved { other_cores: others, busy_cores })
    }

    /// Other programs' cores and the busy cores, on a host over 90 % busy whose server
    /// sizeup watches and was running. An unwatched server (not a managed instance)
    /// would be among the "others"; a stopped one was frozen, not starved (see
    /// frozen_note).
    fn others_on_a_saturated_host(&self) -> Option<(f64, f64)> {
        self.server_cores?;
        if self.server_stopped {
            return None;
        }
        (self.busy()? > 90.0).then_some((self.other_cores?, self.busy_cores()?))
    }

    /// Whether programs outside the test still took a twentieth of a saturated host's
    /// CPUs (at least 0.1 cores): after they starved a lighter level, more server threads
    /// squeeze them to a smaller share, not away. Quiet runs here leave others under 0.05.
    pub fn squeezed(&self) -> Option<Starved> {
        let (others, busy_cores) = self.others_on_a_saturated_host()?;
        let cpus = self.host_cpus? as f64;
        (others >= 0.05 * cpus && others >= 0.1).then_some(Starved { other_cores: others, busy_cores })
    }

    /// Whether programs outside the test took a quarter of the host's CPUs (at least
    /// 0.2 cores), busy or not: an open-loop level's latency is theirs too, since its
    /// transactions wait for a CPU they hold, long before the host saturates (studies/8
    /// "sustained" 329 tps at p99 < 10 ms beside `stress --cpu 1` with the host 72 %
    /// busy). A rate level so crowded is not judged.
    pub fn crowded(&self) -> Option<Starved> {
        self.server_cores?;
        if self.server_stopped {
            return None;
        }
        let others = self.other_cores?;
        let cpus = self.host_cpus? as f64;
        (others >= 0.25 * cpus && others >= 0.2)
            .then(|| Starved { other_cores: others, busy_cores: self.busy_cores().unwrap_or(others) })
    }

    /// The hypervisor's share of the host's CPU time (steal, in %) when it reached
    /// [`STOLEN_PCT`]: a virtual CPU paused that long adds latency no server causes.
    pub fn stolen(&self) -> Option<f64> {
        (self.has_cpu() && self.steal >= STOLEN_PCT).then_some(self.steal)
    }

    /// The host's busy share less what programs outside the test took: the share the
    /// server, sizeup and the kernel's work for them used. `cpu>80` and modelled watts
    /// read this, so another program's load neither stops a ramp nor is priced as the
    /// server's energy.
    pub fn test_busy(&self) -> Option<f64> {
        let busy = self.busy()?;
        // An unwatched server's own CPU is among the "others": nothing to take away then.
        match (self.other_cores, self.host_cpus, self.server_cores) {
            (Some(others), Some(cpus), Some(_)) if cpus > 0 => Some((busy - others / cpus as f64 * 100.0).max(0.0)),
            _ => Some(busy),
        }
    }

    /// Host cores busy (busy share x CPUs), when both are known.
    pub fn busy_cores(&self) -> Option<f64> {
        Some(self.busy()? / 100.0 * self.host_cpus? as f64)
    }

    pub fn between(a: &Snapshot, b: &Snapshot, power: &Power) -> OsSample {
        let secs = (b.at - a.at).as_secs_f64().max(1e-9);
        let mut s = OsSample { no_cpu: true, host_cpus: b.cpus.or(a.cpus), ..Default::default() };
        if let (Some(x), Some(y)) = (a.cpu, b.cpu) {
            s.no_cpu = false;
            let total = y.total().saturating_sub(x.total()).max(1) as f64;
            let pct = |f: fn(&CpuTicks) -> u64| f(&y).saturating_sub(f(&x)) as f64 * 100.0 / total;
            s.usr = pct(|c| c.user);
            s.nice = pct(|c| c.nice);
            s.sys = pct(|c| c.system);
            s.iowait = pct(|c| c.iowait);
            s.irq = pct(|c| c.irq);
            s.soft = pct(|c| c.softirq);
            s.steal = pct(|c| c.steal);
            s.idle = pct(|c| c.idle);
        }
        if let (Some(x), Some(y)) = (a.server_cpu_s, b.server_cpu_s) {
            s.server_cores = Some((y - x).max(0.0) / secs);
        }
        s.server_stopped = a.server_stopped || b.server_stopped;
        s.client_cores = (b.self_cpu_s - a.self_cpu_s).max(0.0) / secs;
        if let (Some(x), Some(y)) = (&a.others, &b.others) {
            s.other_cores = Some(other_cores(x, y, secs, super::clock_ticks()));
        }
        if let (Some(x), Some(y)) = (&a.client_threads, &b.client_threads) {
            s.busiest_client_thread = busiest(x, y, secs, super::clock_ticks());
        }
        if let (Some(x), Some(y)) = (a.disk, b.disk) {
            let rate = |f: fn(&DiskCounters) -> u64| f(&y).saturating_sub(f(&x)) as f64 / secs;
            s.disk_reads_per_s = Some(rate(|d| d.reads));
            s.disk_writes_per_s = Some(rate(|d| d.writes));
            s.disk_read_bytes_per_s = Some(rate(|d| d.read_sectors) * 512.0);
            s.disk_write_bytes_per_s = Some(rate(|d| d.write_sectors) * 512.0);
            let busy = y.busy_ms.saturating_sub(x.busy_ms) as f64 / (secs * 1000.0) / y.devices.max(1) as f64;
            s.disk_busy_pct = Some((busy * 100.0).min(100.0));
        }
        if let Some((total, available)) = b.memory {
            s.mem_total_bytes = Some(total);
            s.mem_used_bytes = Some(total.saturating_sub(available));
        }
        s.watts = match power {
            Power::Measured => a.rapl.as_ref().zip(b.rapl.as_ref()).map(|(x, y)| rapl_joules(x, y) / secs),
            Power::Modelled { idle_w, max_w } => s.test_busy().map(|b| idle_w + (max_w - idle_w) * b / 100.0),
            Power::Given { watts } => Some(*watts),
            _ => None,
        };
        s.power_source = power.label().to_string();
        s
    }
}

/// The steal (in % of the host's CPU time) from which a rate level is not judged: a
/// twentieth of the time. Quiet runs of the plan on this project's VMs stayed at or
/// under 3 %; the two levels that broke a repeat of one bracket took 8.6 and 11.2 %.
pub const STOLEN_PCT: f64 = 5.0;

/// The mean of several samples, field by field (a step's OS figures).
pub fn mean(samples: &[&OsSample]) -> Option<OsSample> {
    if samples.is_empty() {
        return None;
    }
    let n = samples.len() as f64;
    // CPU shares over the samples that have them: a gap is neither idle nor busy.
    let with_cpu: Vec<&&OsSample> = samples.iter().filter(|s| s.has_cpu()).collect();
    let cpu =
        |f: &dyn Fn(&OsSample) -> f64| with_cpu.iter().map(|s| f(s)).sum::<f64>() / (with_cpu.len().max(1)) as f64;
    let avg = |f: &dyn Fn(&OsSample) -> f64| samples.iter().map(|s| f(s)).sum::<f64>() / n;
    let avg_opt = |f: &dyn Fn(&OsSample) -> Option<f64>| {
        let v: Vec<f64> = samples.iter().filter_map(|s| f(s)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    Some(OsSample {
        usr: cpu(&|s| s.usr),
        nice: cpu(&|s| s.nice),
        sys: cpu(&|s| s.sys),
        iowait: cpu(&|s| s.iowait),
        irq: cpu(&|s| s.irq),
        soft: cpu(&|s| s.soft),
        steal: cpu(&|s| s.steal),
        idle: cpu(&|s| s.idle),
        no_cpu: with_cpu.is_empty(),
        host_cpus: samples.iter().filter_map(|s| s.host_cpus).max(),
        server_cores: avg_opt(&|s| s.server_cores),
        server_stopped: samples.iter().any(|s| s.server_stopped),
        client_cores: avg(&|s| s.client_cores),
        other_cores: avg_opt(&|s| s.other_cores),
        busiest_client_thread: avg_opt(&|s| s.busiest_client_thread),
        disk_busy_pct: avg_opt(&|s| s.disk_busy_pct),
        disk_reads_per_s: avg_opt(&|s| s.disk_reads_per_s),
        disk_writes_per_s: avg_opt(&|s| s.disk_writes_per_s),
        disk_read_bytes_per_s: avg_opt(&|s| s.disk_read_bytes_per_s),
        disk_write_bytes_per_s: avg_opt(&|s| s.disk_write_bytes_per_s),
        mem_used_bytes: samples.iter().filter_map(|s| s.mem_used_bytes).max(),
        mem_total_bytes: samples.iter().filter_map(|s| s.mem_total_bytes).max(),
        watts: avg_opt(&|s| s.watts),
        power_source: samples[0].power_source.clone(),
        server_host: super::node::mean(&samples.iter().filter_map(|s| s.server_host.as_ref()).collect::<Vec<_>>()),
    })
}

/// How every load-generator note begins.
pub const LOAD_GENERATOR: &str = "the load generator";

/// Says so when sizeup itself, not the server, limited the run: its client threads
/// were nearly always busy, one of them was (a serial stage the connections it serves
/// queue at), one was busy enough for them to queue while the host had CPU to spare, or
/// it took as much CPU as the server on a saturated host.
pub fn load_generator_note(os: Option<&OsSample>, client_threads: u32) -> Option<String> {
    let os = os?;
    let server = os.server_cores?;
    if os.client_cores >= 0.9 * client_threads as f64 {
        return Some(format!(
            "the load generator was the bottleneck: its {client_threads} client thread(s) were {:.0} % busy; \
             add --client-threads or run sizeup on another host",
            os.client_cores * 100.0 / client_threads as f64
        ));
    }
    const MORE: &str = "more --client-threads help up to one per connection, beyond that only a faster client host";
    let busiest = os.busiest_client_thread.unwrap_or(0.0);
    if busiest >= 0.9 {
        return Some(format!(
            "the load generator was the bottleneck: its busiest client thread was {:.0} % busy, so the \
             connections it serves waited for it rather than for the server; {MORE}",
            busiest * 100.0
        ));
    }
    // On 16 CPUs, 4 client threads about 70 % busy each held point select 15 % below one
    // thread per connection while the host idled (docs/PERFORMANCE.md, issue 50).
    if let Some(idle) = os.busy().map(|b| 100.0 - b).filter(|&idle| busiest >= 0.6 && idle >= 10.0) {
        return Some(format!(
            "the load generator may have held the throughput down: its busiest client thread was {:.0} % \
             busy while {idle:.0} % of the host's CPU was idle, and connections queue at a thread that busy; \
             {MORE}",
            busiest * 100.0
        ));
    }
    // Other programs' CPU is measured per process: what they took is theirs, not sizeup's.
    // A stopped server took no CPU because it could not run at all, not for want of it.
    let others = os.other_cores.unwrap_or(0.0);
    if !os.server_stopped
        && os.busy().is_some_and(|b| b > 90.0)
        && os.client_cores > 0.5 * server
        && os.client_cores >= others
    {
        return Some(format!(
            "the load generator took {:.2} cores against the server's {:.2} on a saturated host: \
             the server was starved of CPU; run the client on another host for its true capacity",
            os.client_cores, server
        ));
    }
    None
}

/// How the note on other programs begins.
pub const OTHER_PROCESSES: &str = "other processes";

/// Programs outside the test (neither the server nor sizeup) took a large share of a
/// saturated host while the server ran: what was measured then is how much of the host
/// was left to the server, not its capacity. No decision rests on such a figure.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Starved {
    pub other_cores: f64,
    pub busy_cores: f64,
}

impl Starved {
    /// "other processes took 1.05 of the 2.00 busy cores"
    pub fn words(&self) -> String {
        format!("{OTHER_PROCESSES} took {:.2} of the {:.2} busy cores", self.other_cores, self.busy_cores)
    }
}

/// Says so when programs outside the test (neither the server nor sizeup) took a
/// large share of a saturated host: the server's figures are then not its capacity.
pub fn other_processes_note(os: Option<&OsSample>) -> Option<String> {
    os?.starved().map(|s| {
        format!(
            "{} on a saturated host: the server was starved by programs outside the test; stop them and measure \
             again",
            s.words()
        )
    })
}

/// How the note on a stopped server begins.
pub const FROZEN: &str = "the server's process was stopped";

/// Says so when a server process was seen stopped (state T) during the measurement: it
/// was frozen (SIGSTOP, a job-control stop, a debugger), so it made no progress whatever
/// CPU the host had, and starvation is no explanation of its figures.
pub fn frozen_note(os: Option<&OsSample>) -> Option<String> {
    os.filter(|o| o.server_stopped).map(|_| {
        format!(
            "{FROZEN} (state T: SIGSTOP, a job-control stop or a debugger) during the measurement: \
             it was frozen, not starved of CPU, and these figures are not its capacity"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    // Captured on the 2-core Debian 12 box.
    const STAT_A: &str = "cpu  841388 0 835039 854002 12125 0 3486 244 0 0\n\
cpu0 408594 0 411792 448420 3265 0 749 118 0 0\n\
cpu1 432793 0 423247 405581 8860 0 2737 126 0 0\n\
intr 1 2 3\nctxt 99\n";
    const STAT_B: &str = "cpu  841488 0 835089 854042 12135 0 3496 244 0 0\n\
cpu0 408644 0 411817 448440 3270 0 754 118 0 0\n";
    const DISKSTATS_A: &str = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
 254       0 vda 1055259 45993 42841210 1126551 2598722 945987 216097680 1096509 0 252512 2309391 185493 89 218978928 25628 712136 60701\n\
 254       1 vda1 1000 0 8000 10 2000 0 16000 20 0 0 0\n\
 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
    const DISKSTATS_B: &str = " 254       0 vda 1055359 45993 42842010 1126551 2599722 945987 216105680 1096509 0 252512 2309391 185493 89 218978928 25628 712136 60701\n";
    const MEMINFO: &str =
        "MemTotal:       24667768 kB\nMemFree:         1234567 kB\nMemAvailable:   20000000 kB\nBuffers: 1 kB\n";

    #[test]
    fn proc_stat_cpu_line() {
        let c = parse_proc_stat(STAT_A).unwrap();
        assert_eq!(
            c,
            CpuTicks {
                user: 841388,
                nice: 0,
                system: 835039,
                idle: 854002,
                iowait: 12125,
                irq: 0,
                softirq: 3486,
                steal: 244
            }
        );
        assert_eq!(parse_proc_stat("intr 1 2"), None);
    }

    #[test]
    fn diskstats_picks_the_named_devices() {
        let vda = parse_diskstats(DISKSTATS_A, &["vda".into()]).unwrap();
        assert_eq!(
            vda,
            DiskCounters {
                reads: 1055259,
                read_sectors: 42841210,
                writes: 2598722,
                write_sectors: 216097680,
                busy_ms: 252512,
                devices: 1
            }
        );
        let part = parse_diskstats(DISKSTATS_A, &["vda1".into()]).unwrap();
        assert_eq!((part.reads, part.writes, part.write_sectors), (1000, 2000, 16000));
        assert_eq!(parse_diskstats(DISKSTATS_A, &["sdz".into()]), None);
    }

    #[test]
    fn meminfo_total_and_available() {
        assert_eq!(parse_meminfo(MEMINFO), Some((24667768 * 1024, 20000000 * 1024)));
    }

    fn snap(at: Instant, stat: &str, disk: &str, server: f64, me: f64) -> Snapshot {
        Snapshot {
            at,
            cpu: parse_proc_stat(stat),
            server_cpu_s: Some(server),
            server_stopped: false,
            self_cpu_s: me,
            disk: parse_diskstats(disk, &["vda".into()]),
            memory: parse_meminfo(MEMINFO),
            others: None,
            client_threads: None,
            cpus: parse_cpu_count(stat),
            rapl: Some(vec![(1_000_000, 10_000_000)]),
        }
    }

    #[test]
    fn the_busiest_client_thread_is_read_per_thread() {
        let a = std::collections::HashMap::from([(1, 100), (2, 100), (3, 5)]);
        // Thread 3 ended; thread 4 began: neither is counted.
        let b = std::collections::HashMap::from([(1, 150), (2, 280), (4, 900)]);
        assert_eq!(busiest(&a, &b, 2.0, 100.0), Some(0.9));
        assert_eq!(busiest(&a, &std::collections::HashMap::new(), 2.0, 100.0), None);
        // This process's client threads, by name.
        let t = std::thread::Builder::new().name(format!("{CLIENT_THREAD}-9")).spawn(|| {
            // SAFETY: gettid has no preconditions.
            let me = unsafe { libc::gettid() };
            assert!(client_thread_ticks().unwrap().contains_key(&me));
        });
        t.unwrap().join().unwrap();
    }

    #[test]
    fn a_sample_is_shares_and_rates_between_two_snapshots() {
        let t0 = Instant::now();
        let a = snap(t0, STAT_A, DISKSTATS_A, 10.0, 1.0);
        let b = snap(t0 + Duration::from_secs(2), STAT_B, DISKSTATS_B, 13.0, 1.5);
        let s = OsSample::between(&a, &b, &Power::Modelled { idle_w: 50.0, max_w: 150.0 });
        // Deltas: user 100, sys 50, idle 40, iowait 10, softirq 10: 210 ticks.
        let close = |x: f64, y: f64| (x - y).abs() < 1e-9;
        assert!(close(s.usr, 100.0 * 100.0 / 210.0));
        assert!(close(s.sys, 50.0 * 100.0 / 210.0));
        assert!(close(s.idle, 40.0 * 100.0 / 210.0));
        assert!(close(s.iowait, 10.0 * 100.0 / 210.0));
        assert!(close(s.soft, 10.0 * 100.0 / 210.0));
        assert!(close(s.usr + s.sys + s.idle + s.iowait + s.soft + s.irq + s.nice + s.steal, 100.0));
        assert!(close(s.busy().unwrap(), 160.0 * 100.0 / 210.0));
        assert_eq!(s.server_cores, Some(1.5));
        assert!(close(s.client_cores, 0.25));
        assert_eq!(s.disk_reads_per_s, Some(50.0));
        assert_eq!(s.disk_writes_per_s, Some(500.0));
        assert_eq!(s.disk_read_bytes_per_s, Some(800.0 / 2.0 * 512.0));
        assert_eq!(s.disk_write_bytes_per_s, Some(8000.0 / 2.0 * 512.0));
        assert_eq!(s.mem_used_bytes, Some((24667768 - 20000000) * 1024));
        assert!(close(s.watts.unwrap(), 50.0 + 100.0 * s.busy().unwrap() / 100.0));
        assert_eq!(s.power_source, "modelled");
        let given = OsSample::between(&a, &b, &Power::Given { watts: 120.0 });
        assert_eq!((given.watts, given.power_source.as_str()), (Some(120.0), "given"));
    }

    /// modelled_watts_count_the_tests_cpu_not_other_programs (issue 61, 1): a host that
    /// other programs kept busy was priced as the server's energy.
    #[test]
    fn modelled_watts_count_the_tests_cpu_not_other_programs() {
        let t0 = Instant::now();
        let mut a = snap(t0, STAT_A, DISKSTATS_A, 10.0, 1.0);
        let mut b = snap(t0 + Duration::from_secs(2), STAT_B, DISKSTATS_B, 13.0, 1.5);
        // 160 of 210 ticks busy on 2 CPUs (76 %); other programs took 0.5 cores of it.
        a.cpus = Some(2);
        b.cpus = Some(2);
        a.others = Some([(7, 0u64)].into_iter().collect());
        b.others = Some([(7, 100u64)].into_iter().collect());
        let s = OsSample::between(&a, &b, &Power::Modelled { idle_w: 50.0, max_w: 150.0 });
        let others_pct = s.other_cores.unwrap() / 2.0 * 100.0;
        assert!(others_pct > 0.0);
        let close = |x: f64, y: f64| (x - y).abs() < 1e-9;
        assert!(close(s.test_busy().unwrap(), s.busy().unwrap() - others_pct));
        assert!(close(s.watts.unwrap(), 50.0 + 100.0 * (s.busy().unwrap() - others_pct) / 100.0));
        // An unwatched server's CPU is among the others: nothing is taken away.
        let unwatched = OsSample { server_cores: None, ..s.clone() };
        assert_eq!(unwatched.test_busy(), unwatched.busy());
        // a_crowded_host_is_no_latency_figure: 0.5 of 2 cores to others on a host 76 %
        // busy starves nothing (not saturated) but crowds an open-loop level's latency.
        assert_eq!(s.starved(), None);
        assert!(s.crowded().is_some_and(|c| (c.other_cores - 0.5).abs() < 1e-9), "{:?}", s.crowded());
        assert_eq!(unwatched.crowded(), None);
        // Steal is the hypervisor's, watched server or not.
        let mut v = OsSample { idle: 80.0, usr: 11.2, steal: 8.8, ..Default::default() };
        assert_eq!(v.stolen(), Some(8.8));
        v.steal = 3.0;
        assert_eq!(v.stolen(), None);
        assert_eq!(OsSample { steal: 9.0, no_cpu: true, ..Default::default() }.stolen(), None, "a gap steals nothing");
    }

    #[test]
    fn rapl_counts_joules_across_a_wrap() {
        assert_eq!(rapl_joules(&[(1_000_000, 10_000_000)], &[(3_000_000, 10_000_000)]), 2.0);
        // Wrapped: 9.5 J -> 10 J (range) then 0 -> 1 J: 1.5 J.
        assert_eq!(rapl_joules(&[(9_500_000, 10_000_000)], &[(1_000_000, 10_000_000)]), 1.5);
    }

    #[test]
    fn rapl_domains_are_packages_and_dram() {
        let dir = tempfile::tempdir().unwrap();
        let mk = |name: &str, kind: &str| {
            let d = dir.path().join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("name"), kind).unwrap();
            std::fs::write(d.join("energy_uj"), "123\n").unwrap();
        };
        mk("intel-rapl:0", "package-0");
        mk("intel-rapl:0:0", "core");
        mk("intel-rapl:0:1", "dram");
        mk("intel-rapl:1", "package-1");
        let names: Vec<String> =
            rapl_domains(dir.path()).iter().map(|p| p.file_name().unwrap().to_string_lossy().to_string()).collect();
        assert_eq!(names, ["intel-rapl:0", "intel-rapl:0:1", "intel-rapl:1"]);
        assert_eq!(read_rapl(&rapl_domains(dir.path())).unwrap(), vec![(123, u64::MAX); 3]);
    }

    #[test]
    fn power_model_parsing() {
        assert_eq!(parse_power_model("idle=60,max=180").unwrap(), Power::Modelled { idle_w: 60.0, max_w: 180.0 });
        assert_eq!(parse_power_model("max=180W, idle=60W").unwrap(), Power::Modelled { idle_w: 60.0, max_w: 180.0 });
        assert!(matches!(parse_power_model("idle=60"), Err(Invalid::Value(m)) if m.contains("both")));
        assert!(matches!(parse_power_model("idle=200,max=100"), Err(Invalid::Value(_))));
        assert!(matches!(parse_power_model("low=1,max=2"), Err(Invalid::Value(m)) if m.contains("unknown key")));
    }

    #[test]
    fn the_load_generator_is_named_when_it_limits() {
        let os = |busy: f64, client: f64, server: f64| OsSample {
            idle: 100.0 - busy,
            client_cores: client,
            server_cores: Some(server),
            ..Default::default()
        };
        assert_eq!(load_generator_note(Some(&os(95.0, 0.3, 1.6)), 1), None);
        assert!(load_generator_note(Some(&os(60.0, 0.95, 0.4)), 1).unwrap().contains("95 % busy"));
        assert!(load_generator_note(Some(&os(99.0, 0.9, 1.0)), 2).unwrap().contains("starved"));
        assert_eq!(load_generator_note(Some(&os(50.0, 0.9, 1.0)), 2), None);
        assert_eq!(load_generator_note(None, 1), None);
    }

    /// client_threads_that_cap_the_run_are_named: the process's total hid a lone busy
    /// thread (4 threads for 64 connections on 16 CPUs: 2.7 cores of 4, yet 15 % below
    /// one thread per connection).
    #[test]
    fn client_threads_that_cap_the_run_are_named() {
        let os = |busy: f64, client: f64, thread: f64| OsSample {
            idle: 100.0 - busy,
            client_cores: client,
            server_cores: Some(10.0),
            busiest_client_thread: Some(thread),
            ..Default::default()
        };
        let saturated = load_generator_note(Some(&os(99.0, 2.0, 0.95)), 4).unwrap();
        assert!(saturated.contains("busiest client thread was 95 % busy"), "{saturated}");
        let queued = load_generator_note(Some(&os(80.0, 2.7, 0.7)), 4).unwrap();
        assert!(queued.contains("may have held") && queued.contains("20 % of the host's CPU was idle"), "{queued}");
        // A busy thread on a saturated host is the server's CPU share, not a queue.
        assert_eq!(load_generator_note(Some(&os(95.0, 2.7, 0.7)), 4), None);
        // The 2-CPU default: one thread for 8 connections about 40 % busy.
        assert_eq!(load_generator_note(Some(&os(60.0, 0.4, 0.4)), 1), None);
    }

    #[test]
    fn the_data_directory_has_a_device() {
        // /proc is not on a block device; the current directory normally is.
        assert_eq!(device_of(Path::new("/proc")), None);
        if let Some(d) = device_of(Path::new(".")) {
            assert!(!d.is_empty() && !d.contains('/'));
        }
    }
}
