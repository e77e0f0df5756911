//! The lab: miniature servers on one host. A node runs in its own network namespace,
//! joined to the others and to the client by a veth link with an optional netem delay and
//! jitter, and in a CPU cgroup with a quota, so N nodes behave as N small servers rather
//! than N processes sharing every core.
//!
//! The network is a star. A "switch" namespace sizeup creates holds a bridge; each node's
//! link is a veth pair from that bridge to `eth0` in the node's namespace, and one more
//! pair joins the bridge to the root namespace, where the client runs, at 10.213.K.1/24
//! (nodes are 10.213.K.(10+i)). Traffic between nodes is bridged inside the switch
//! namespace, so the host's forwarding setting (`ip_forward`) and firewall (its FORWARD
//! chain, which bridged packets meet when br_netfilter is on) are neither needed nor
//! touched: a fresh namespace has its own, empty, rule set. The delay sits on both ends
//! of each node's link, per direction: a client round trip crosses one link twice (2 x
//! delay), a node-to-node round trip two links twice (4 x delay).
//!
//! Everything is named `sizeup-HASH-...` (`szHASH...` for the one interface in the root
//! namespace) from the state directory's hash, and teardown removes only names with this
//! state directory's hash. What the host cannot do (not root, no `ip`, no cpu
//! controller, no netem) is said in one line, recorded, and the node runs without it.
//! It does not emulate memory bandwidth, disks or a real network's losses and switches.

use crate::error::Invalid;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The subnet's first two octets: 10.213.K.0/24 per lab, K picked free.
const NET_PREFIX: &str = "10.213";
/// The period a CPU quota is expressed in (the kernel's default).
const CPU_PERIOD_US: u64 = 100_000;

/// What the user asked the lab for (`--node-cpus`, `--link-delay`, `--link-jitter`) and
/// the client's CPU need it must leave room for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabSpec {
    /// CPU quota per node, in cores (0.4 = 40 ms of CPU time per 100 ms).
    pub node_cpus: Option<f64>,
    /// netem delay on each end of a node's link, per direction, in milliseconds.
    pub link_delay_ms: Option<f64>,
    /// netem jitter added to that delay, in milliseconds.
    pub link_jitter_ms: Option<f64>,
    /// Cores the client needs beside the nodes (1 unless measured).
    pub client_cpus: f64,
}

/// The lab facts of one node, read back from the kernel after it started: what a result
/// measured on it must say ("emulated (node CPU quota 0.4, link delay 0.2 ms)").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Lab {
    /// The network namespace it runs in (a name under /run/netns); `None` where
    /// namespaces were unavailable (see `notes`).
    pub netns: Option<String>,
    /// Its TCP address: the namespace end of its link, or 127.0.0.1 without a namespace.
    pub address: String,
    /// The CPU cgroup directory it runs in, if any.
    pub cgroup: Option<PathBuf>,
    /// CPU quota in cores as the cgroup files hold it (quota / period); `None`: no quota.
    pub cpu_quota: Option<f64>,
    /// netem delay on its link as `tc qdisc show` reports it, per direction, in ms.
    pub link_delay_ms: Option<f64>,
    /// netem jitter on its link as `tc qdisc show` reports it, in ms.
    pub link_jitter_ms: Option<f64>,
    /// Each thing asked for and not applied, with the reason, one line each.
    pub notes: Vec<String>,
}

impl Lab {
    /// How a result measured on this node is labelled: "emulated (node CPU quota 0.4,
    /// link delay 0.2 ms)", with what was asked and not applied after a semicolon.
    pub fn label(&self) -> String {
        let mut applied = Vec::new();
        if let Some(q) = self.cpu_quota {
            applied.push(format!("node CPU quota {}", trim_float(q)));
        }
        if let Some(d) = self.link_delay_ms {
            let jitter = self.link_jitter_ms.map_or(String::new(), |j| format!(" ± {} ms", trim_float(j)));
            applied.push(format!("link delay {} ms{jitter}", trim_float(d)));
        }
        if self.netns.is_some() && self.link_delay_ms.is_none() {
            applied.push("own network namespace".into());
        }
        let head =
            if applied.is_empty() { "not emulated".to_string() } else { format!("emulated ({})", applied.join(", ")) };
        if self.notes.is_empty() {
            head
        } else {
            format!("{head}; {}", self.notes.join("; "))
        }
    }
}

/// "0.4", "0.25", "2": a float without trailing zeros.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Where an instance runs: its network namespace and CPU cgroup, both optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// A network namespace name under /run/netns.
    pub netns: Option<String>,
    /// A cgroup directory whose `cgroup.procs` the server joins before it execs.
    pub cgroup: Option<PathBuf>,
}

impl Placement {
    /// Makes `cmd`'s process join the cgroup and enter the namespace between fork and
    /// exec, so the server's pid is the one spawned and no thread of it ever runs
    /// outside either. The same as `ip netns exec`, without its extra mount namespace.
    pub fn apply(&self, cmd: &mut Command) -> Result<(), LabError> {
        use std::os::unix::process::CommandExt;
        if self.netns.is_none() && self.cgroup.is_none() {
            return Ok(());
        }
        let netns = match &self.netns {
            Some(n) => {
                let path = Path::new("/run/netns").join(n);
                Some(std::fs::File::open(&path).map_err(|e| LabError::File(format!("network namespace {n}: {e}")))?)
            }
            None => None,
        };
        let procs = match &self.cgroup {
            Some(dir) => Some(
                std::ffi::CString::new(dir.join("cgroup.procs").as_os_str().as_encoded_bytes())
                    .map_err(|_| LabError::File(format!("cgroup path {} has a NUL byte", dir.display())))?,
            ),
            None => None,
        };
        // SAFETY: between fork and exec only async-signal-safe calls (open, write, close,
        // setns) on values prepared before the fork.
        unsafe {
            cmd.pre_exec(move || {
                use std::os::fd::AsRawFd;
                if let Some(p) = &procs {
                    let fd = libc::open(p.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    // "0" is the writing process itself, in cgroup v1 and v2.
                    if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    libc::close(fd);
                }
                if let Some(ns) = &netns {
                    if libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        Ok(())
    }
}

/// A duration as `--link-delay` takes it: `0.2ms`, `200us`, `1ms`, `0.001s`; a bare
/// number is milliseconds. Returns milliseconds.
pub fn parse_ms(flag: &str, s: &str) -> Result<f64, Invalid> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| Invalid::Value(format!("--{flag} '{s}' is not a duration; write it like 0.2ms or 200us")))?;
    let ms = v * scale;
    if ms > 1000.0 {
        return Err(Invalid::Value(format!("--{flag} {s}: at most 1 s (a lab link, not a satellite)")));
    }
    Ok(ms)
}

impl LabSpec {
    /// Checks the quota arithmetic: the nodes' quotas plus the client's need must fit
    /// the host's cores, or the nodes would not get what their quota promises.
    pub fn check(&self, nodes: u32, host_cpus: f64) -> Result<(), Invalid> {
        if self.link_jitter_ms.is_some() && self.link_delay_ms.is_none() {
            return Err(Invalid::Value("--link-jitter needs --link-delay (jitter varies a delay)".into()));
        }
        let Some(c) = self.node_cpus else { return Ok(()) };
        if !(c.is_finite() && c >= 0.01) {
            return Err(Invalid::Value(format!("--node-cpus {c}: at least 0.01 (a quota of 1 ms per 100 ms)")));
        }
        let need = c * nodes as f64 + self.client_cpus;
        if need > host_cpus + 1e-9 {
            return Err(Invalid::Value(format!(
                "--node-cpus {} x {nodes} node(s) + {} core(s) for the client = {} cores, more than this host's {}: \
                 lower --node-cpus or the node count (or give the client's measured need with --client-cpus)",
                trim_float(c),
                trim_float(self.client_cpus),
                trim_float(need),
                trim_float(host_cpus)
            )));
        }
        Ok(())
    }
}

/// The host's cores as the scheduler offers them to this process.
pub fn host_cpus() -> f64 {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as f64
}

/// Names of everything one state directory's lab creates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Names {
    /// 8 hex digits of the state directory's hash.
    pub tag: String,
}

impl Names {
    pub fn new(home: &Path) -> Names {
        let h = super::home_hash(home);
        Names { tag: format!("{:08x}", (h ^ (h >> 32)) as u32) }
    }
    fn prefix(&self) -> String {
        format!("sizeup-{}-", self.tag)
    }
    pub fn switch_ns(&self) -> String {
        format!("sizeup-{}-sw", self.tag)
    }
    pub fn node_ns(&self, index: u32) -> String {
        format!("sizeup-{}-{index}", self.tag)
    }
    /// The client end of the switch's uplink, in the root namespace (15 bytes at most).
    pub fn host_if(&self) -> String {
        format!("sz{}c", self.tag)
    }
    pub fn cgroup(&self, index: u32) -> String {
        format!("sizeup-{}-{index}", self.tag)
    }
}

/// The lab network of one cluster, as created.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Network {
    pub names: Names,
    /// K in 10.213.K.0/24.
    pub subnet: u8,
}

impl Network {
    /// The client's address (root namespace end of the uplink).
    pub fn client_address(&self) -> String {
        format!("{NET_PREFIX}.{}.1", self.subnet)
    }
    pub fn node_address(&self, index: u32) -> String {
        format!("{NET_PREFIX}.{}.{}", self.subnet, 10 + index)
    }
    /// The subnet as a MariaDB host pattern ("10.213.7.%"), for the TCP login of clients.
    pub fn host_pattern(&self) -> String {
        format!("{NET_PREFIX}.{}.%", self.subnet)
    }
}

/// What the host offers the lab, probed once per start.
pub struct Host {
    /// Why nodes cannot have namespaces here, if they cannot.
    pub no_netns: Option<String>,
    /// The cpu controller, or why there is none.
    pub cpu: Result<CpuController, LabError>,
}

/// Why the lab could not give a node what it asked for. A missing quota or delay goes
/// into the node's notes (a node without one is still a node, said so); a namespace, a
/// link or a cgroup that could not be made stops the cluster, naming the node.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LabError {
    /// This host cannot hold a node to a CPU quota (not root, no cpu controller).
    #[error("{0}")]
    NoQuota(String),
    /// An iproute2 tool is not installed.
    #[error("no `{0}` command (iproute2)")]
    NoTool(String),
    /// A tool refused a command: the command, and its stderr's first line.
    #[error("`{command}`: {why}")]
    Refused { command: String, why: String },
    /// A file of the lab (a namespace, a cgroup, the host's lock) could not be opened,
    /// written or removed.
    #[error("{0}")]
    File(String),
    /// Every 10.213.K.0/24 is used on this host.
    #[error("every subnet {NET_PREFIX}.K.0/24 is in use on this host")]
    NoSubnet,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CpuController {
    /// cgroup v1: the `cpu` hierarchy's mount point (cpu.cfs_quota_us / cpu.cfs_period_us).
    V1(PathBuf),
    /// cgroup v2: the unified hierarchy's mount point (cpu.max).
    V2(PathBuf),
}

/// Probes what the lab can use: root, the `ip` command, and a cpu controller (v1 or v2,
/// from /proc/self/mountinfo; nothing is assumed about where it is mounted).
pub fn probe() -> Host {
    let no_netns = if !is_root() {
        Some("not root: nodes share the host's network (no namespaces, no link delay)".to_string())
    } else if tool("ip").is_none() {
        Some("no `ip` command (iproute2): nodes share the host's network (no namespaces, no link delay)".to_string())
    } else {
        None
    };
    let cpu = match is_root() {
        true => cpu_controller(),
        false => Err(LabError::NoQuota("not root: no CPU quota (cgroups need root)".into())),
    };
    Host { no_netns, cpu }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn cpu_controller() -> Result<CpuController, LabError> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut v2 = None;
    for line in info.lines() {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
        let Some((left, right)) = line.split_once(" - ") else { continue };
        let mount = left.split_whitespace().nth(4).unwrap_or_default();
        let mut r = right.split_whitespace();
        let fstype = r.next().unwrap_or_default();
        let superopts = r.nth(1).unwrap_or_default();
        if fstype == "cgroup" && superopts.split(',').any(|o| o == "cpu") {
            return Ok(CpuController::V1(PathBuf::from(mount)));
        }
        if fstype == "cgroup2" && v2.is_none() {
            v2 = Some(PathBuf::from(mount));
        }
    }
    let Some(root) = v2 else {
        return Err(LabError::NoQuota("no cgroup cpu controller mounted: no CPU quota".into()));
    };
    let has = |file: &str| {
        std::fs::read_to_string(root.join(file)).unwrap_or_default().split_whitespace().any(|c| c == "cpu")
    };
    if !has("cgroup.controllers") {
        return Err(LabError::NoQuota(format!("cgroup v2 at {} has no cpu controller: no CPU quota", root.display())));
    }
    if !has("cgroup.subtree_control") {
        return Err(LabError::NoQuota(format!(
            "cgroup v2 at {}: the cpu controller is not enabled for child groups (cgroup.subtree_control), \
             and enabling it is a host-wide change sizeup does not make: no CPU quota",
            root.display()
        )));
    }
    Ok(CpuController::V2(root))
}

/// A tool from iproute2 (`ip`, `tc`): on PATH or in the sbin directories.
fn tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Runs `ip` or `tc`; the error is the command and its stderr's first line.
fn run(name: &str, args: &[&str]) -> Result<String, LabError> {
    let bin = tool(name).ok_or_else(|| LabError::NoTool(name.to_string()))?;
    let command = || format!("{name} {}", args.join(" "));
    let out = Command::new(&bin)
        .args(args)
        .output()
        .map_err(|e| LabError::Refused { command: command(), why: e.to_string() })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(LabError::Refused { command: command(), why: err.lines().next().unwrap_or("failed").trim().to_string() })
    }
}

/// Serialises subnet choice and creation between sizeup processes on this host (state
/// directories differ, the address space does not).
fn host_lock() -> Result<std::fs::File, LabError> {
    use std::os::fd::AsRawFd;
    let path = std::env::temp_dir().join("sizeup-lab.lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| LabError::File(format!("cannot open {}: {e}", path.display())))?;
    // SAFETY: flock on a descriptor we own; released when the file closes.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(LabError::File(format!("cannot lock {}: {}", path.display(), std::io::Error::last_os_error())));
    }
    Ok(f)
}

/// The first 10.213.K.0/24 from the tag's own K upward that no address or route on the
/// host touches.
fn free_subnet(names: &Names) -> Result<u8, LabError> {
    let used = format!("{}\n{}", run("ip", &["-4", "-o", "addr", "show"])?, run("ip", &["-4", "route", "show"])?);
    let start = u32::from_str_radix(&names.tag, 16).unwrap_or(0) % 256;
    (0..256u32)
        .map(|d| ((start + d) % 256) as u8)
        .find(|k| !used.contains(&format!("{NET_PREFIX}.{k}.")))
        .ok_or(LabError::NoSubnet)
}

impl Network {
    /// Creates the switch namespace, its bridge and the client's uplink. Anything it
    /// made is removed again if a later step fails.
    pub fn create(home: &Path) -> Result<Network, LabError> {
        let names = Names::new(home);
        let _lock = host_lock()?;
        let subnet = free_subnet(&names)?;
        let net = Network { names, subnet };
        let sw = net.names.switch_ns();
        let host_if = net.names.host_if();
        let cidr = format!("{}/24", net.client_address());
        let steps: [&[&str]; 9] = [
            &["netns", "add", &sw],
            &["-n", &sw, "link", "set", "lo", "up"],
            &["-n", &sw, "link", "add", "br0", "type", "bridge"],
            &["-n", &sw, "link", "set", "br0", "up"],
            &["link", "add", &host_if, "type", "veth", "peer", "name", "uplink", "netns", &sw],
            &["-n", &sw, "link", "set", "uplink", "master", "br0"],
            &["-n", &sw, "link", "set", "uplink", "up"],
            &["addr", "add", &cidr, "dev", &host_if],
            &["link", "set", &host_if, "up"],
        ];
        for s in steps {
            if let Err(e) = run("ip", s) {
                net.destroy();
                return Err(e);
            }
        }
        Ok(net)
    }

    /// Whether its switch namespace is still there.
    pub fn exists(&self) -> bool {
        Path::new("/run/netns").join(self.names.switch_ns()).exists()
    }

    /// Creates node `index`'s namespace and its link to the switch, with netem on both
    /// ends when a delay is asked. Returns the namespace and what was not applied.
    pub fn add_node(&self, index: u32, spec: &LabSpec) -> Result<(String, Vec<String>), LabError> {
        let sw = self.names.switch_ns();
        let ns = self.names.node_ns(index);
        let port = format!("n{index}");
        let cidr = format!("{}/24", self.node_address(index));
        if Path::new("/run/netns").join(&ns).exists() {
            self.remove_node(index);
        }
        let steps: [&[&str]; 6] = [
            &["netns", "add", &ns],
            &["-n", &ns, "link", "set", "lo", "up"],
            &["-n", &sw, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns", &ns],
            &["-n", &sw, "link", "set", &port, "master", "br0", "up"],
            &["-n", &ns, "addr", "add", &cidr, "dev", "eth0"],
            &["-n", &ns, "link", "set", "eth0", "up"],
        ];
        for s in steps {
            if let Err(e) = run("ip", s) {
                self.remove_node(index);
                return Err(e);
            }
        }
        let mut notes = Vec::new();
        if let Some(delay) = spec.link_delay_ms {
            let mut netem = vec!["delay".to_string(), format!("{delay}ms")];
            if let Some(j) = spec.link_jitter_ms {
                netem.push(format!("{j}ms"));
            }
            for (space, dev) in [(&sw, &port), (&ns, &"eth0".to_string())] {
                let mut args = vec!["-n", space.as_str(), "qdisc", "add", "dev", dev.as_str(), "root", "netem"];
                args.extend(netem.iter().map(String::as_str));
                if let Err(e) = run("tc", &args) {
                    let why = match &e {
                        LabError::Refused { why, .. }
                            if why.contains("qdisc kind is unknown") || why.contains("No such file") =>
                        {
                            "the kernel has no netem qdisc (sch_netem)".to_string()
                        }
                        e => e.to_string(),
                    };
                    notes.push(format!("link delay {} ms not applied: {why}", trim_float(delay)));
                    break;
                }
            }
        }
        Ok((ns, notes))
    }

    /// Removes node `index`'s namespace (its link goes with it) after ending any process
    /// still in it: only processes inside a namespace sizeup made are touched.
    pub fn remove_node(&self, index: u32) {
        remove_netns(&self.names.node_ns(index));
    }

    /// Removes the switch namespace, the bridge, every link and the client's uplink.
    pub fn destroy(&self) {
        remove_netns(&self.names.switch_ns());
        // The uplink dies with its peer; make sure, as namespaces are torn down lazily.
        let host_if = self.names.host_if();
        if Path::new("/sys/class/net").join(&host_if).exists() {
            let _ = run("ip", &["link", "del", &host_if]);
        }
    }
}

fn remove_netns(ns: &str) {
    if !Path::new("/run/netns").join(ns).exists() {
        return;
    }
    if let Ok(pids) = run("ip", &["netns", "pids", ns]) {
        for pid in pids.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
            // SAFETY: a plain signal to a process inside a namespace sizeup created.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    let _ = run("ip", &["netns", "del", ns]);
}

/// Every namespace, cgroup and interface named with this state directory's tag, whether
/// or not the state file remembers it: the last resort of `cluster stop`.
pub fn remove_leftovers(home: &Path) -> Vec<String> {
    let names = Names::new(home);
    let mut removed = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/run/netns") {
        let mut found: Vec<String> = dir
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&names.prefix()))
            .collect();
        // Nodes first, the switch last.
        found.sort_by_key(|n| n.ends_with("-sw"));
        for n in found {
            remove_netns(&n);
            removed.push(format!("network namespace {n}"));
        }
    }
    let host_if = names.host_if();
    if Path::new("/sys/class/net").join(&host_if).exists() && run("ip", &["link", "del", &host_if]).is_ok() {
        removed.push(format!("interface {host_if}"));
    }
    if let Ok(CpuController::V1(root) | CpuController::V2(root)) = cpu_controller() {
        if let Ok(dir) = std::fs::read_dir(&root) {
            for e in dir.flatten() {
                if e.file_name().to_string_lossy().starts_with(&names.prefix()) && remove_cgroup(&e.path()).is_ok() {
                    removed.push(format!("cgroup {}", e.path().display()));
                }
            }
        }
    }
    removed
}

/// Creates node `index`'s CPU cgroup with a quota of `cpus` cores.
pub fn create_cgroup(ctrl: &CpuController, names: &Names, index: u32, cpus: f64) -> Result<PathBuf, LabError> {
    let (CpuController::V1(root) | CpuController::V2(root)) = ctrl;
    let dir = root.join(names.cgroup(index));
    if dir.exists() {
        remove_cgroup(&dir)?;
    }
    std::fs::create_dir(&dir).map_err(|e| LabError::File(format!("cannot create cgroup {}: {e}", dir.display())))?;
    let write = |file: &str, v: String| {
        std::fs::write(dir.join(file), &v)
            .map_err(|e| LabError::File(format!("cannot write {v} to {}: {e}", dir.join(file).display())))
    };
    let quota = (cpus * CPU_PERIOD_US as f64).round() as u64;
    let r = match ctrl {
        CpuController::V1(_) => write("cpu.cfs_period_us", CPU_PERIOD_US.to_string())
            .and_then(|_| write("cpu.cfs_quota_us", quota.to_string())),
        CpuController::V2(_) => write("cpu.max", format!("{quota} {CPU_PERIOD_US}")),
    };
    if let Err(e) = r {
        let _ = std::fs::remove_dir(&dir);
        return Err(e);
    }
    Ok(dir)
}

/// The quota of a cgroup in cores, read back from its files (v1 or v2); `None` when
/// it has none ("max", -1) or cannot be read.
pub fn read_quota(dir: &Path) -> Option<f64> {
    if let Ok(max) = std::fs::read_to_string(dir.join("cpu.max")) {
        let mut it = max.split_whitespace();
        let q: f64 = it.next()?.parse().ok()?;
        let p: f64 = it.next()?.parse().ok()?;
        return Some(q / p);
    }
    let q: i64 = std::fs::read_to_string(dir.join("cpu.cfs_quota_us")).ok()?.trim().parse().ok()?;
    let p: i64 = std::fs::read_to_string(dir.join("cpu.cfs_period_us")).ok()?.trim().parse().ok()?;
    (q > 0 && p > 0).then(|| q as f64 / p as f64)
}

/// Removes a cgroup sizeup made, ending any process still in it first.
pub fn remove_cgroup(dir: &Path) -> Result<(), LabError> {
    let started = std::time::Instant::now();
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if started.elapsed() > std::time::Duration::from_secs(10) => {
                return Err(LabError::File(format!("cannot remove cgroup {}: {e}", dir.display())))
            }
            Err(_) => {
                let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
                for pid in procs.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
                    // SAFETY: a plain signal to a process inside a cgroup sizeup created.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    }
}

/// The netem delay and jitter (ms) on `dev` in namespace `ns`, from `tc qdisc show`.
pub fn read_netem(ns: &str, dev: &str) -> Option<(f64, Option<f64>)> {
    parse_netem(&run("tc", &["-n", ns, "qdisc", "show", "dev", dev]).ok()?)
}

/// `qdisc netem 8001: root refcnt 2 limit 1000 delay 200us  50us` -> (0.2, Some(0.05)).
pub fn parse_netem(show: &str) -> Option<(f64, Option<f64>)> {
    let line = show.lines().find(|l| l.contains("netem"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "delay")?;
    let delay = tc_time_ms(words.get(at + 1)?)?;
    let jitter = words.get(at + 2).and_then(|w| tc_time_ms(w));
    Some((delay, jitter))
}

/// tc's printed times: `200us`, `1ms`, `1.5ms`, `2s`, `500ns`.
fn tc_time_ms(w: &str) -> Option<f64> {
    let (num, scale) = if let Some(n) = w.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = w.strip_suffix("us") {
        (n, 1e-3)
    } else if let Some(n) = w.strip_suffix("ns") {
        (n, 1e-6)
    } else if let Some(n) = w.strip_suffix('s') {
        (n, 1e3)
    } else {
        return None;
    };
    num.parse::<f64>().ok().map(|v| v * scale)
}

/// Sets up node `index` of the lab: namespace and link (if the host allows), cgroup with
/// its quota (if the host allows). Returns where the server must run and the node's
/// lab facts so far (read back after the server started: see [`read_back`]).
pub fn place_node(
    host: &Host,
    names: &Names,
    net: Result<&Network, &str>,
    spec: &LabSpec,
    index: u32,
) -> Result<(Placement, Lab), LabError> {
    let mut placement = Placement::default();
    let mut lab = Lab { address: "127.0.0.1".into(), ..Lab::default() };
    match net {
        Ok(net) => {
            let (ns, notes) = net.add_node(index, spec)?;
            placement.netns = Some(ns.clone());
            lab.netns = Some(ns);
            lab.address = net.node_address(index);
            lab.notes.extend(notes);
        }
        Err(why) => lab.notes.push(why.to_string()),
    }
    if let Some(cpus) = spec.node_cpus {
        match &host.cpu {
            Ok(ctrl) => {
                let dir = create_cgroup(ctrl, names, index, cpus)?;
                placement.cgroup = Some(dir.clone());
                lab.cgroup = Some(dir);
            }
            Err(why) => lab.notes.push(why.to_string()),
        }
    }
    Ok((placement, lab))
}

/// Fills a node's lab facts from the kernel: the quota from its cgroup files, the delay
/// from `tc qdisc show` on its end of the link.
pub fn read_back(lab: &mut Lab) {
    lab.cpu_quota = lab.cgroup.as_deref().and_then(read_quota);
    match lab.netns.as_deref().and_then(|ns| read_netem(ns, "eth0")) {
        Some((d, j)) => {
            lab.link_delay_ms = Some(d);
            lab.link_jitter_ms = j;
        }
        None => {
            lab.link_delay_ms = None;
            lab.link_jitter_ms = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// lab_errors_have_kinds: a missing tool and a refused command are told apart by
    /// kind (the netem note reads the refusal's words, not the whole sentence).
    #[test]
    fn lab_errors_have_kinds() {
        assert_eq!(run("sizeup-no-such-tool", &[]), Err(LabError::NoTool("sizeup-no-such-tool".into())));
        let refused = LabError::Refused { command: "tc qdisc add".into(), why: "qdisc kind is unknown".into() };
        assert_eq!(refused.to_string(), "`tc qdisc add`: qdisc kind is unknown");
        assert_eq!(LabError::NoSubnet.to_string(), format!("every subnet {NET_PREFIX}.K.0/24 is in use on this host"));
    }

    #[test]
    fn durations_read_as_milliseconds() {
        assert_eq!(parse_ms("link-delay", "0.2ms").unwrap(), 0.2);
        assert!((parse_ms("link-delay", "200us").unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(parse_ms("link-delay", "1").unwrap(), 1.0);
        assert_eq!(parse_ms("link-delay", "0.001s").unwrap(), 1.0);
        assert!(matches!(parse_ms("link-delay", "fast"), Err(Invalid::Value(m)) if m.contains("0.2ms")));
        assert!(parse_ms("link-delay", "-1ms").is_err());
        assert!(matches!(parse_ms("link-delay", "5s"), Err(Invalid::Value(m)) if m.contains("at most")));
    }

    #[test]
    fn quotas_must_fit_the_host_with_the_arithmetic() {
        let spec = |c| LabSpec { node_cpus: Some(c), link_delay_ms: None, link_jitter_ms: None, client_cpus: 1.0 };
        assert!(spec(0.3).check(3, 2.0).is_ok());
        let e = spec(0.4).check(3, 2.0).unwrap_err();
        assert!(
            matches!(&e, Invalid::Value(m) if m.contains("0.4 x 3 node(s) + 1 core(s) for the client = 2.2 cores, more than this host's 2")),
            "{e}"
        );
        assert!(matches!(spec(0.001).check(1, 2.0), Err(Invalid::Value(m)) if m.contains("at least 0.01")));
        let jitter_alone = LabSpec { link_jitter_ms: Some(0.05), ..spec(0.1) };
        assert!(matches!(jitter_alone.check(1, 2.0), Err(Invalid::Value(m)) if m.contains("needs --link-delay")));
    }

    #[test]
    fn netem_is_read_from_tc_output() {
        let show = "qdisc netem 8001: root refcnt 2 limit 1000 delay 200us  50us\n";
        let (d, j) = parse_netem(show).unwrap();
        assert!((d - 0.2).abs() < 1e-9 && (j.unwrap() - 0.05).abs() < 1e-9);
        assert_eq!(parse_netem("qdisc netem 8002: root refcnt 2 limit 1000 delay 1ms\n"), Some((1.0, None)));
        assert_eq!(parse_netem("qdisc noqueue 0: root refcnt 2\n"), None);
    }

    #[test]
    fn labels_say_what_was_applied_and_what_was_not() {
        let lab = Lab {
            netns: Some("sizeup-x-0".into()),
            address: "10.213.1.10".into(),
            cpu_quota: Some(0.4),
            link_delay_ms: Some(0.2),
            ..Lab::default()
        };
        assert_eq!(lab.label(), "emulated (node CPU quota 0.4, link delay 0.2 ms)");
        let partly = Lab {
            link_delay_ms: None,
            notes: vec!["link delay 0.2 ms not applied: the kernel has no netem qdisc (sch_netem)".into()],
            ..lab
        };
        assert_eq!(
            partly.label(),
            "emulated (node CPU quota 0.4, own network namespace); link delay 0.2 ms not applied: \
             the kernel has no netem qdisc (sch_netem)"
        );
        assert!(Lab::default().label().starts_with("not emulated"));
    }

    #[test]
    fn a_host_without_namespaces_or_cgroups_runs_nodes_plain_and_says_so() {
        let host = Host {
            no_netns: Some("not root: nodes share the host's network (no namespaces, no link delay)".into()),
            cpu: Err(LabError::NoQuota("not root: no CPU quota (cgroups need root)".into())),
        };
        let spec = LabSpec { node_cpus: Some(0.4), link_delay_ms: Some(0.2), link_jitter_ms: None, client_cpus: 1.0 };
        let why = host.no_netns.clone().unwrap();
        let (placement, lab) = place_node(&host, &Names::new(Path::new("/s")), Err(&why), &spec, 0).unwrap();
        assert_eq!(placement, Placement::default());
        assert_eq!(lab.address, "127.0.0.1");
        assert_eq!(lab.notes.len(), 2);
        assert_eq!(
            lab.label(),
            "not emulated; not root: nodes share the host's network (no namespaces, no link delay); \
             not root: no CPU quota (cgroups need root)"
        );
    }

    #[test]
    fn names_carry_the_state_directory_and_fit_interface_limits() {
        let a = Names::new(Path::new("/tmp/a"));
        let b = Names::new(Path::new("/tmp/b"));
        assert_ne!(a.tag, b.tag);
        assert!(a.host_if().len() <= 15);
        assert!(a.node_ns(3).starts_with("sizeup-") && a.node_ns(3).ends_with("-3"));
    }
}
