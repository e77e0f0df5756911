//! The coordinator's side: the agents it reached, each run shared out among them, and
//! what each sent relayed into the run's measuring as one client thread's hand-overs.
//!
//! Each agent's link lives on the fleet's own runtime (a study's steps reuse it): a task
//! reads its frames into a channel and another writes what the run sends it. A run
//! starts one thread per agent that hands the agent its work, waits for its connections,
//! passes on the go and the stop, and turns its messages into the run's own. An agent
//! whose link breaks, or that says nothing for [`LOST_AFTER`], fails the run as a lost
//! server does, named, and what was measured until then is kept.

use super::wire::{self, AgentCpu, Down, Up, WireTarget, Work};
use crate::exec::remote::{Live, Remote};
use crate::exec::worker::Control;
use crate::exec::{Clients, Go, Msg, RunError, RunSpec};
use crate::options::WorkloadArgs;
use crate::stats::{AgentShare, LatencyMs, Recorder, Summary};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// An agent silent this long (no interval, no "alive" each second) is lost.
pub const LOST_AFTER: Duration = Duration::from_secs(10);
/// How long reaching an agent and its handshake may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Where the agents are and how the coordinator proves itself to them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Addresses {
    /// `sizeup agent --listen` addresses, HOST:PORT.
    pub tcp: Vec<String>,
    /// USER@HOST (or HOST) to start `sizeup agent` on over OpenSSH.
    pub ssh: Vec<String>,
    /// The shared token (never printed or stored).
    pub token: Option<String>,
    /// The CA that signed the agents' certificates: the links are TLS.
    pub ca: Option<PathBuf>,
    /// The coordinator's client certificate and key, for agents that ask for one.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

impl Addresses {
    /// Where the target options say the agents are.
    pub fn of(t: &crate::options::TargetArgs) -> Addresses {
        Addresses {
            tcp: t.agents.iter().map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).collect(),
            ssh: t.agents_ssh.iter().map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).collect(),
            // A study's steps carry no token (it is never stored): the environment's then.
            token: t.token.clone().or_else(|| std::env::var("SIZEUP_AGENT_TOKEN").ok()),
            ca: t.agent_ca.clone(),
            cert: t.agent_cert.clone(),
            key: t.agent_key.clone(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.tcp.is_empty() && self.ssh.is_empty()
    }

    /// Whether every agent runs on this host's loopback (then a server on loopback is
    /// one they reach too).
    pub fn all_on_loopback(&self) -> bool {
        self.ssh.is_empty()
            && self.tcp.iter().all(|a| {
                let host = a.rsplit_once(':').map_or(a.as_str(), |(h, _)| h);
                let host = host.trim_start_matches('[').trim_end_matches(']');
                host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
            })
    }
}

/// What every agent's share of a run is made of, besides its part of the spec.
#[derive(Clone, Debug)]
pub struct Recipe {
    pub workload: String,
    pub options: WorkloadArgs,
    pub targets: Vec<WireTarget>,
}

enum Event {
    Up(Up),
    Closed(String),
}

struct Agent {
    name: String,
    host: String,
    cpus: u32,
    down: mpsc::UnboundedSender<Down>,
    /// Taken by a run's relaying thread and put back after it.
    up: Mutex<Option<mpsc::UnboundedReceiver<Event>>>,
    /// Why it was lost, once it was: later runs are refused at once.
    lost: Mutex<Option<String>>,
    /// The `ssh` process that runs it, when started over SSH.
    ssh: Mutex<Option<tokio::process::Child>>,
}

/// What one agent did in the current run, from its messages.
#[derive(Default)]
struct AgentRun {
    connections: u32,
    rate: Option<f64>,
    /// Its intervals after the warm-up, merged, and its tail.
    steady: Option<Recorder>,
    cpu_base: Option<AgentCpu>,
    cpu_last: Option<AgentCpu>,
    /// Seconds from its go: where its steady state began and where it ended.
    steady_from: f64,
    end_s: f64,
    max_backlog: u64,
    missed: u64,
    lost: bool,
    /// The latest interval's CPU in cores and backlog, for live metrics.
    live_cores: Option<f64>,
    live_backlog: u64,
}

/// The agents a command reached.
pub struct Fleet {
    rt: tokio::runtime::Runtime,
    agents: Vec<Agent>,
    recipe: Mutex<Option<(Recipe, Vec<u32>)>>,
    runs: Mutex<Vec<AgentRun>>,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.agents.iter().map(|a| &a.name)).finish()
    }
}

/// Fleets reached by this process, by their addresses: a study's steps share one.
static FLEETS: Mutex<Vec<(Addresses, Arc<Fleet>)>> = Mutex::new(Vec::new());

/// The fleet at `a`, reached once per process; `say` tells the user how each was reached.
pub fn shared(a: &Addresses, say: &dyn Fn(&str)) -> Result<Arc<Fleet>, String> {
    let mut all = FLEETS.lock().expect("not poisoned");
    if let Some((_, f)) = all.iter().find(|(k, _)| k == a) {
        return Ok(f.clone());
    }
    let f = Arc::new(Fleet::connect(a, say)?);
    all.push((a.clone(), f.clone()));
    Ok(f)
}

/// Lets every agent go: links closed, agents started over SSH stopped.
pub fn close_all() {
    let all = std::mem::take(&mut *FLEETS.lock().expect("not poisoned"));
    for (_, f) in all {
        f.close();
    }
}

type Reader = Box<dyn AsyncRead + Unpin + Send>;
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

impl Fleet {
    /// Reaches every agent and proves the token to each; an error names the agent.
    pub fn connect(a: &Addresses, say: &dyn Fn(&str)) -> Result<Fleet, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("sizeup-agents")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the agents' runtime: {e}"))?;
        let mut agents = Vec::new();
        for name in &a.tcp {
            let (r, w) = rt.block_on(open_tcp(name, a))?;
            agents.push(rt.block_on(greet(&rt, name, r, w, a.token.as_deref(), None))?);
        }
        for dest in &a.ssh {
            let (r, w, child) = rt.block_on(super::ssh::start(dest, say))?;
            agents.push(rt.block_on(greet(&rt, dest, r, w, None, Some(child)))?);
        }
        for ag in &agents {
            say(&format!("agent {} ({}, {} CPUs) is ready", ag.name, ag.host, ag.cpus));
        }
        Ok(Fleet { rt, agents, recipe: Mutex::new(None), runs: Mutex::new(Vec::new()) })
    }

    pub fn len(&self) -> usize {
        self.agents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
    }

    /// Each agent's name and CPUs, in order.
    pub fn cpus(&self) -> Vec<u32> {
        self.agents.iter().map(|a| a.cpus).collect()
    }

    /// What the next run's shares are made of, and each agent's client threads.
    pub fn set_recipe(&self, recipe: Recipe, client_threads: Vec<u32>) {
        *self.recipe.lock().expect("not poisoned") = Some((recipe, client_threads));
    }
}

impl Remote for Fleet {
    fn parties(&self) -> usize {
        self.agents.len()
    }

    /// Starts the run on the agents: one relaying thread each, standing for one client
    /// thread of the run's measuring.
    fn start(self: Arc<Self>, spec: &RunSpec, control: &Arc<Control>, types: usize) -> Result<Clients, RunError> {
        let n = self.agents.len() as u32;
        if let Some((a, why)) = self.agents.iter().find_map(|a| Some((a, a.lost.lock().ok()?.clone()?))) {
            return Err(RunError::Connect(format!("agent {} was lost earlier in this command: {why}", a.name)));
        }
        if spec.threads < n {
            return Err(RunError::Connect(format!(
                "{} connection(s) cannot be shared by {n} agents: give at least one per agent",
                spec.threads
            )));
        }
        let (recipe, client_threads) = self
            .recipe
            .lock()
            .expect("not poisoned")
            .clone()
            .ok_or_else(|| RunError::Client("no workload was given to the agents".into()))?;
        let steady_from = crate::exec::steady_from(spec).as_secs_f64();
        let (tx, rx) = mpsc::unbounded_channel();
        let (go, go_rx) = watch::channel(Go::Wait);
        let mut runs = Vec::new();
        let mut handles = Vec::new();
        for (i, agent) in self.agents.iter().enumerate() {
            let i32_ = i as u32;
            let (first, count) = super::split(spec.threads as u64, n, i32_);
            let mut share = spec.clone();
            share.threads = count as u32;
            share.run_connections = Some(spec.threads);
            share.rate = spec.rate.map(|r| r / n as f64);
            share.events = spec.events.map(|e| super::split(e, n, i32_).1.max(1));
            share.client_threads = client_threads.get(i).copied().unwrap_or(1).clamp(1, count as u32);
            // The coordinator samples the servers: an agent needs none of it.
            share.server_metrics = None;
            share.replica = false;
            share.settle = None;
            runs.push(AgentRun { connections: count as u32, rate: share.rate, steady_from, ..Default::default() });
            let work = Work {
                workload: recipe.workload.clone(),
                options: recipe.options.clone(),
                targets: recipe.targets.clone(),
                spec: share,
                first: first as u32,
                index: i32_,
            };
            let up =
                agent.up.lock().expect("not poisoned").take().ok_or_else(|| {
                    RunError::Client(format!("agent {} is still busy with an earlier run", agent.name))
                })?;
            let relay = Relay {
                fleet: self.clone(),
                i,
                tx: tx.clone(),
                go: go_rx.clone(),
                control: control.clone(),
                types,
                interval: spec.interval,
            };
            handles.push(
                std::thread::Builder::new()
                    .name(format!("sizeup-agent-{i}"))
                    .spawn(move || relay.run(work, up))
                    .map_err(|e| RunError::Client(format!("cannot start a thread for agent {}: {e}", agent.name)))?,
            );
        }
        *self.runs.lock().expect("not poisoned") = runs;
        Ok(Clients { handles, rx, go })
    }

    /// Adds each agent's figures to the run's summary: its throughput and latency, its
    /// CPU and busiest thread, its lag; the client CPU becomes the agents' and this
    /// process's together; an agent whose host held the load down is named.
    fn conclude(&self, summary: &mut Summary) {
        let runs = self.runs.lock().expect("not poisoned");
        summary.agents = self
            .agents
            .iter()
            .zip(runs.iter())
            .map(|(a, r)| share_of(a.name.clone(), a.host.clone(), a.cpus, r))
            .collect();
        let agents_cpu: f64 = runs.iter().filter_map(steady_cpu).map(|c| c.0).sum();
        let missed: u64 = runs.iter().map(|r| r.missed).sum();
        // Agents on this very host are sizeup's CPU, not other processes'.
        let here = this_host();
        let local: f64 = summary.agents.iter().filter(|a| a.host == here).filter_map(|a| a.client_cores).sum();
        if let Some(os) = summary.observed.os.as_mut().filter(|_| local > 0.0) {
            os.client_cores += local;
            if let Some(other) = os.other_cores.as_mut() {
                *other = (*other - local).max(0.0);
            }
            // The other-processes note was read before: the agents here are no strangers.
            let others = crate::monitor::os::OTHER_PROCESSES;
            summary.observed.notes.retain(|n| !n.starts_with(others));
            summary.observed.notes.extend(crate::monitor::os::other_processes_note(summary.observed.os.as_ref()));
        }
        if summary.transactions > 0 {
            let own = summary.client_cpu_us_per_txn.unwrap_or(0.0) * summary.transactions as f64 / 1e6;
            summary.client_cpu_us_per_txn = Some((own + agents_cpu) * 1e6 / summary.transactions as f64);
        }
        if missed > 0 {
            summary.missed_arrivals = missed;
            summary.observed.notes.push(format!(
                "{missed} arrivals due before the end never started on the agents (missed): the server did not \
                 hold the rate, or an agent did not"
            ));
        }
        let notes: Vec<String> = summary.agents.iter().filter_map(crate::stats::agent_note).collect();
        summary.observed.notes.extend(notes);
        summary.observed.notes.extend(crate::stats::agent_lag_note(&summary.agents));
    }

    /// Each agent's latest interval.
    fn live(&self) -> Vec<Live> {
        let runs = self.runs.lock().expect("not poisoned");
        self.agents
            .iter()
            .zip(runs.iter())
            .map(|(a, r)| Live {
                agent: a.name.clone(),
                cores: r.live_cores,
                backlog: r.live_backlog,
                lag_s: r.rate.filter(|&x| x > 0.0).map(|rate| r.live_backlog as f64 / rate),
            })
            .collect()
    }
}

impl Fleet {
    fn close(&self) {
        for a in &self.agents {
            // Closing the link ends the agent's session; an agent over SSH then exits.
            let _ = a.down.send(Down::Bye);
        }
        let children: Vec<_> = self.agents.iter().filter_map(|a| a.ssh.lock().ok()?.take()).collect();
        self.rt.block_on(async {
            for mut c in children {
                if crate::timer::timeout(Duration::from_secs(5), c.wait()).await.is_err() {
                    let _ = c.kill().await;
                }
            }
        });
    }

    fn with_run(&self, i: usize, f: impl FnOnce(&mut AgentRun)) {
        if let Some(r) = self.runs.lock().expect("not poisoned").get_mut(i) {
            f(r);
        }
    }
}

/// An agent's CPU over its steady state: its process's seconds and its busiest client
/// thread's; None over a span too short for /proc's ticks.
fn steady_cpu(r: &AgentRun) -> Option<(f64, f64)> {
    let seconds = (r.end_s - r.steady_from).max(0.0);
    let last = r.cpu_last.as_ref().filter(|_| seconds >= crate::exec::clock::MIN_CPU_SPAN)?;
    let base = r.cpu_base.clone().unwrap_or_default();
    let busiest = last
        .threads_s
        .iter()
        .enumerate()
        .map(|(k, t)| t - base.threads_s.get(k).copied().unwrap_or(0.0))
        .fold(0.0, f64::max);
    Some((last.process_s - base.process_s, busiest))
}

/// An agent's figures over its steady state.
fn share_of(agent: String, host: String, cpus: u32, r: &AgentRun) -> AgentShare {
    let seconds = (r.end_s - r.steady_from).max(0.0);
    let per_s = |v: f64| if seconds > 0.0 { v / seconds } else { 0.0 };
    let (transactions, latency_ms, histogram) = match &r.steady {
        Some(rec) => {
            let all = rec.total_latency();
            (rec.transactions(), LatencyMs::of(&all), crate::stats::encode_histogram(&all))
        }
        None => (0, LatencyMs::default(), String::new()),
    };
    let cpu = steady_cpu(r);
    AgentShare {
        agent,
        host,
        connections: r.connections,
        transactions,
        tps: per_s(transactions as f64),
        latency_ms,
        client_cores: cpu.map(|c| per_s(c.0)),
        cpus,
        busiest_thread: cpu.map(|c| per_s(c.1)),
        rate: r.rate,
        max_backlog: r.max_backlog,
        lag_s: r.rate.filter(|&x| x > 0.0).map(|rate| r.max_backlog as f64 / rate),
        missed_arrivals: r.missed,
        lost: r.lost,
        histogram,
    }
}

/// One agent's relaying thread for one run.
struct Relay {
    fleet: Arc<Fleet>,
    i: usize,
    tx: mpsc::UnboundedSender<Msg>,
    go: watch::Receiver<Go>,
    control: Arc<Control>,
    types: usize,
    interval: Duration,
}

impl Relay {
    fn run(self, work: Work, mut up: mpsc::UnboundedReceiver<Event>) {
        let rt = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
            Ok(rt) => rt,
            Err(e) => {
                let _ = self.tx.send(Msg::ConnectFailed(RunError::Client(format!("cannot relay an agent: {e}"))));
                return;
            }
        };
        rt.block_on(self.relay(work, &mut up));
        // The link is this fleet's again for the next run.
        *self.fleet.agents[self.i].up.lock().expect("not poisoned") = Some(up);
    }

    fn agent(&self) -> &Agent {
        &self.fleet.agents[self.i]
    }

    async fn relay(&self, work: Work, up: &mut mpsc::UnboundedReceiver<Event>) {
        let name = self.agent().name.clone();
        let failed = |why: String| Msg::ConnectFailed(RunError::Connect(format!("agent {name}: {why}")));
        if self.agent().down.send(Down::Work(Box::new(work))).is_err() {
            let _ = self.tx.send(failed("its link is closed".into()));
            return;
        }
        // Its connections open: as long as they take, unless the link breaks.
        loop {
            match up.recv().await {
                Some(Event::Up(Up::Ready)) => break,
                Some(Event::Up(Up::Failed { error })) => {
                    let _ = self.tx.send(failed(error));
                    return;
                }
                Some(Event::Up(_)) => continue,
                Some(Event::Closed(why)) => {
                    self.lost(&why);
                    let _ = self.tx.send(failed(format!("it was lost before the run started ({why})")));
                    return;
                }
                None => {
                    let _ = self.tx.send(failed("its link is closed".into()));
                    return;
                }
            }
        }
        let _ = self.tx.send(Msg::Ready);
        let mut go = self.go.clone();
        let started = loop {
            match *go.borrow_and_update() {
                Go::Start(at) => break Some(at),
                Go::Abort => break None,
                Go::Wait => {}
            }
            if go.changed().await.is_err() {
                break None;
            }
        };
        let Some(start) = started else {
            let _ = self.agent().down.send(Down::Stop);
            return;
        };
        let _ = self.agent().down.send(Down::Go);
        let mut stop = self.control.subscribe();
        let mut stop_sent = false;
        let mut heard = Instant::now();
        loop {
            tokio::select! {
                ev = up.recv() => {
                    heard = Instant::now();
                    match ev {
                        Some(Event::Up(msg)) => {
                            if self.on_message(msg) {
                                return;
                            }
                        }
                        Some(Event::Closed(why)) => return self.end_lost(start, &why),
                        None => return self.end_lost(start, "its link is closed"),
                    }
                }
                _ = crate::timer::sleep_until(heard + LOST_AFTER) => {
                    return self.end_lost(start, &format!("it sent nothing for {} s", LOST_AFTER.as_secs()));
                }
                changed = stop.changed(), if !stop_sent => {
                    if changed.is_err() || self.control.stopped() {
                        let _ = self.agent().down.send(Down::Stop);
                        stop_sent = true;
                    }
                }
            }
        }
    }

    /// One of the agent's messages during the run; true once it has ended.
    fn on_message(&self, msg: Up) -> bool {
        let step = self.interval.as_secs_f64();
        match msg {
            Up::Tick { k, rec, cpu } => {
                let rec = match rec.recorder(self.types) {
                    Ok(r) => r,
                    Err(e) => {
                        self.control.fail(format!("agent {}: {e}", self.agent().name));
                        return false;
                    }
                };
                self.fleet.with_run(self.i, |r| {
                    let t = k as f64 * step;
                    let cores = r.cpu_last.as_ref().map(|l| (cpu.process_s - l.process_s) / step);
                    r.live_cores = cores.or(Some(cpu.process_s / step));
                    r.live_backlog = rec.backlog;
                    r.max_backlog = r.max_backlog.max(rec.backlog);
                    if t <= r.steady_from + 1e-9 {
                        r.cpu_base = Some(cpu.clone());
                    } else {
                        r.steady.get_or_insert_with(|| Recorder::new(self.types)).merge(&rec);
                    }
                    r.cpu_last = Some(cpu);
                    r.end_s = r.end_s.max(t);
                });
                let _ = self.tx.send(Msg::Tick(k, rec));
                false
            }
            Up::Alive { .. } => false,
            Up::Final(f) => {
                let rec = f.rec.recorder(self.types).unwrap_or_else(|_| Recorder::new(self.types));
                self.fleet.with_run(self.i, |r| {
                    if f.end_s > r.steady_from {
                        r.steady.get_or_insert_with(|| Recorder::new(self.types)).merge(&rec);
                    }
                    r.cpu_last = Some(f.cpu.clone());
                    r.end_s = r.end_s.max(f.end_s);
                    r.missed = f.missed;
                });
                self.control.add_ended_by_workload(f.ended_by_workload);
                if let Some(why) = &f.fatal {
                    self.control.fail(format!("agent {}: {why}", self.agent().name));
                }
                let tallies = wire::tallies_from(&f.tallies);
                let _ = self.tx.send(Msg::Final(rec, Instant::now(), tallies, (self.i, 0.0)));
                true
            }
            _ => false,
        }
    }

    fn lost(&self, why: &str) {
        *self.agent().lost.lock().expect("not poisoned") = Some(why.to_string());
        self.fleet.with_run(self.i, |r| r.lost = true);
    }

    /// The agent is gone mid-run: the run fails naming it, the other agents stop, and
    /// what was measured is kept.
    fn end_lost(&self, start: Instant, why: &str) {
        self.lost(why);
        self.control.fail(format!(
            "agent {} was lost {:.1} s into the run ({why}); what was measured until then is kept",
            self.agent().name,
            start.elapsed().as_secs_f64()
        ));
        let _ = self.tx.send(Msg::Final(Recorder::new(self.types), Instant::now(), Vec::new(), (self.i, 0.0)));
    }
}

/// This host's name, as agents report theirs.
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map_or_else(|_| "unknown".into(), |h| h.trim().to_string())
}

/// A TCP link to `name` (HOST:PORT): TLS when a CA is given, plain only to loopback.
async fn open_tcp(name: &str, a: &Addresses) -> Result<(Reader, Writer), String> {
    let (host, _) = name
        .rsplit_once(':')
        .filter(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
        .ok_or_else(|| format!("--agents {name}: give each agent as HOST:PORT"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
    let tcp = crate::timer::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(name))
        .await
        .map_err(|_| format!("agent {name} did not answer in {} s", CONNECT_TIMEOUT.as_secs()))?
        .map_err(|e| format!("cannot reach agent {name}: {e}; is `sizeup agent --listen` running there?"))?;
    let _ = tcp.set_nodelay(true);
    let Some(ca) = &a.ca else {
        let loopback = tcp.peer_addr().is_ok_and(|p| p.ip().is_loopback());
        if !loopback {
            return Err(format!(
                "agent {name} is not on loopback: its link must be TLS; give --agent-ca FILE, the CA that signed \
                 the agent's --tls-cert"
            ));
        }
        let (r, w) = tokio::io::split(tcp);
        return Ok((Box::new(r), Box::new(w)));
    };
    let config = crate::client::tls::client_config(
        crate::client::tls::Verify::Identity,
        Some(ca),
        a.cert.as_deref(),
        a.key.as_deref(),
    )
    .map_err(|e| format!("--agent-ca/--agent-cert: {e}"))?;
    let server = crate::client::tls::server_name(&host)?;
    let tls = tokio_rustls::TlsConnector::from(config)
        .connect(server, tcp)
        .await
        .map_err(|e| format!("TLS with agent {name} failed: {e}"))?;
    let (r, w) = tokio::io::split(tls);
    Ok((Box::new(r), Box::new(w)))
}

/// The handshake on a fresh link, then its reading and writing tasks on `rt`.
async fn greet(
    rt: &tokio::runtime::Runtime,
    name: &str,
    mut r: Reader,
    mut w: Writer,
    token: Option<&str>,
    ssh: Option<tokio::process::Child>,
) -> Result<Agent, String> {
    let io = |e: std::io::Error| format!("agent {name}: {e}");
    let hello = crate::timer::timeout(CONNECT_TIMEOUT, wire::recv::<_, Up>(&mut r))
        .await
        .map_err(|_| format!("agent {name} said nothing in {} s: is it a sizeup agent?", CONNECT_TIMEOUT.as_secs()))?
        .map_err(io)?;
    let (host, cpus, nonce) = match hello {
        Some(Up::Hello { protocol, version, host, cpus, nonce }) => {
            if protocol != wire::PROTOCOL {
                return Err(format!(
                    "agent {name} runs sizeup {version} (agent protocol {protocol}); this is sizeup {} \
                     (protocol {}): run the same release on both",
                    env!("CARGO_PKG_VERSION"),
                    wire::PROTOCOL
                ));
            }
            (host, cpus, nonce)
        }
        Some(Up::Refused { why }) => return Err(format!("agent {name} refused: {why}")),
        _ => return Err(format!("agent {name} did not greet as a sizeup agent does")),
    };
    // Over SSH the login is the proof; over TCP the token (or the client certificate).
    let proof = wire::proof(token.unwrap_or_default(), &nonce);
    wire::send(&mut w, &Down::Auth { protocol: wire::PROTOCOL, proof }).await.map_err(io)?;
    match wire::recv::<_, Up>(&mut r).await.map_err(io)? {
        Some(Up::Accepted) => {}
        Some(Up::Refused { why }) => return Err(format!("agent {name} refused this coordinator: {why}")),
        _ => return Err(format!("agent {name} closed the link during the handshake")),
    }
    let (up_tx, up_rx) = mpsc::unbounded_channel();
    let (down_tx, mut down_rx) = mpsc::unbounded_channel::<Down>();
    rt.spawn(async move {
        loop {
            match wire::recv::<_, Up>(&mut r).await {
                Ok(Some(m)) => {
                    if up_tx.send(Event::Up(m)).is_err() {
                        return;
                    }
                }
                Ok(None) => {
                    let _ = up_tx.send(Event::Closed("its link was closed".into()));
                    return;
                }
                Err(e) => {
                    let _ = up_tx.send(Event::Closed(format!("its link failed: {e}")));
                    return;
                }
            }
        }
    });
    rt.spawn(async move {
        while let Some(m) = down_rx.recv().await {
            let bye = matches!(m, Down::Bye);
            if wire::send(&mut w, &m).await.is_err() || bye {
                let _ = tokio::io::AsyncWriteExt::shutdown(&mut w).await;
                return;
            }
        }
    });
    Ok(Agent {
        name: name.to_string(),
        host,
        cpus,
        down: down_tx,
        up: Mutex::new(Some(up_rx)),
        lost: Mutex::new(None),
        ssh: Mutex::new(ssh),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(steady_from: f64, end_s: f64, base: (f64, [f64; 2]), last: (f64, [f64; 2])) -> AgentRun {
        let mut rec = Recorder::new(1);
        for us in 1..=100 {
            rec.transaction(0, us * 100, false);
        }
        AgentRun {
            connections: 4,
            steady: Some(rec),
            cpu_base: Some(AgentCpu { process_s: base.0, threads_s: base.1.to_vec() }),
            cpu_last: Some(AgentCpu { process_s: last.0, threads_s: last.1.to_vec() }),
            steady_from,
            end_s,
            ..Default::default()
        }
    }

    /// Figures over the steady state only: CPU counted from the warm-up's end, the
    /// busiest thread the one that worked most since then (not the one busiest overall).
    #[test]
    fn an_agents_figures_cover_its_steady_state() {
        let r = run_of(2.0, 12.0, (1.0, [0.9, 0.1]), (6.0, [1.9, 5.1]));
        let a = share_of("h:1".into(), "box".into(), 8, &r);
        assert_eq!(a.transactions, 100);
        assert!((a.tps - 10.0).abs() < 1e-9);
        assert!((a.client_cores.unwrap() - 0.5).abs() < 1e-9, "5 s of CPU over 10 s");
        assert!((a.busiest_thread.unwrap() - 0.5).abs() < 1e-9, "thread 1: 5.0 s over 10 s");
        assert_eq!(a.latency_ms.p99, LatencyMs::of(&r.steady.as_ref().unwrap().total_latency()).p99);
        assert!(!a.histogram.is_empty());
        assert_eq!(crate::stats::agent_note(&a), None, "half a core is no bottleneck");
        // A thread never idle: the agent's host held the load down, and is named.
        let busy = share_of("h:1".into(), "box".into(), 8, &run_of(0.0, 10.0, (0.0, [0.0; 2]), (9.8, [9.7, 0.1])));
        let note = crate::stats::agent_note(&busy).expect("a busy thread is named");
        assert!(note.starts_with(crate::monitor::os::LOAD_GENERATOR) && note.contains("agent h:1"), "{note}");
    }

    /// Too short a steady state for /proc's ticks: no CPU figure rather than a wild one.
    #[test]
    fn a_moment_of_steady_state_has_no_cpu_figure() {
        let a = share_of("h:1".into(), "box".into(), 8, &run_of(2.0, 2.5, (1.0, [0.0; 2]), (1.2, [0.1, 0.1])));
        assert_eq!((a.client_cores, a.busiest_thread), (None, None));
    }
}
