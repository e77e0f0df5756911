//! Managed clusters on one host: a Galera cluster (MariaDB with Debian's galera-4, every
//! node read/write) or one primary with N replicas (MariaDB GTID replication). Each node
//! is a managed [`Instance`] with the options of its role, under the state directory in
//! `cluster/node<i>`, remembered in `cluster.json`; in the lab (`super::lab`) each also
//! runs in its own network namespace and CPU cgroup. One cluster per state directory.
//!
//! The API study code uses: [`Cluster::load`] for the nodes' target facts, pids and lab
//! facts; [`replication_lag_s`] and [`galera_conflicts`] while a run is measured. Starting
//! and stopping are synchronous (they build their own runtime to talk to the nodes): call
//! them outside an async context. It does not route load or measure anything itself.

mod galera;
mod replicas;

pub use super::lab::{Lab, LabSpec};

use super::lab::{self, Network};
use super::{Instance, ServerError, ServerSettings, State};
use crate::target::{Conflicts, Target};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most nodes a managed cluster has (a primary and its replicas count as nodes).
pub const MAX_NODES: u32 = 32;
/// The first port tried for node 0 when the user names none; instances start at 13306.
pub const DEFAULT_BASE_PORT: u16 = 14306;
/// Ports a cluster reserves from its base: SQL, group communication, IST and SST, one
/// block of [`MAX_NODES`] each, so node i keeps its ports when the cluster grows.
pub const PORT_SPAN: u32 = 4 * MAX_NODES;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterKind {
    /// Galera (wsrep): every node takes reads and writes; a write commits on all.
    Galera,
    /// One primary takes writes; replicas apply its binary log (GTID) and take reads.
    Replicas,
}

impl ClusterKind {
    pub fn name(self) -> &'static str {
        match self {
            ClusterKind::Galera => "Galera",
            ClusterKind::Replicas => "primary + replicas",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeRole {
    /// A Galera node: reads and writes.
    Galera,
    /// The replication primary: writes (and reads).
    Primary,
    /// A read-only replica of the primary.
    Replica,
}

impl NodeRole {
    pub fn name(self) -> &'static str {
        match self {
            NodeRole::Galera => "galera",
            NodeRole::Primary => "primary",
            NodeRole::Replica => "replica",
        }
    }
}

/// A cluster to start: validated by the command line (or a study) before it gets here.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterSpec {
    pub kind: ClusterKind,
    /// Every node, a primary included: `--galera --nodes 3` is 3, `--replicas 2` is 3.
    pub nodes: u32,
    /// The same settings as `sizeup server start` (buffer pool, log size, flush, `--set`).
    pub settings: ServerSettings,
    /// SQL port of node 0 (node i: base + i); `None`: remembered, or the first free.
    pub base_port: Option<u16>,
    /// Miniature servers (namespaces, links, CPU quotas); `None`: nodes share the host.
    pub lab: Option<LabSpec>,
}

/// One node as study code sees it: where to connect, its process, its lab facts.
#[derive(Clone, Debug, Serialize)]
pub struct Node {
    pub index: u32,
    pub role: NodeRole,
    pub state: State,
    /// The TCP address clients use: 127.0.0.1, or the node's namespace address in the lab.
    pub host: String,
    pub port: u16,
    /// The unix socket for local clients; `None` in the lab, where a socket would
    /// bypass the node's link (clients must use `host`:`port`).
    pub socket: Option<PathBuf>,
    /// Passwordless over the socket and from this host (loopback, or the lab subnet).
    pub user: String,
    /// The server process while it runs (its CPU: /proc/PID/stat).
    pub pid: Option<i32>,
    /// Namespace, address, CPU quota and link delay as read back from the kernel;
    /// `None` outside the lab.
    pub lab: Option<Lab>,
    /// Galera's group communication, IST and SST ports (Galera nodes only).
    pub galera_ports: Option<GaleraPorts>,
    pub error_log: PathBuf,
    /// Restarted after a crash moments ago: a run on it measures a cold server.
    #[serde(skip)]
    pub cold_note: Option<String>,
    /// sizeup's own way in (the socket, never delayed): status and the helpers below.
    #[serde(skip)]
    admin_socket: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GaleraPorts {
    /// gmcast.listen_addr: group communication.
    pub group: u16,
    /// ist.recv_addr: incremental state transfer.
    pub ist: u16,
    /// wsrep_sst_receive_address: state snapshot transfer (rsync).
    pub sst: u16,
}

impl Node {
    /// A target for this node's `database` (root, no password; TCP in the lab).
    pub fn target(&self, database: &str) -> Target {
        Target {
            host: self.host.clone(),
            port: self.port,
            socket: self.socket.clone(),
            user: self.user.clone(),
            password: None,
            database: database.to_string(),
            tls: Default::default(),
        }
    }

    /// "node 1 (replica, 10.213.7.11:14307)".
    pub fn describe(&self) -> String {
        format!("node {} ({}, {}:{})", self.index, self.role.name(), self.host, self.port)
    }

    fn admin_target(&self) -> Target {
        admin_target(&self.admin_socket, self.port)
    }
}

/// A managed cluster as remembered in the state directory, with each node's live state.
#[derive(Clone, Debug, Serialize)]
pub struct Cluster {
    pub kind: ClusterKind,
    /// wsrep_cluster_name for Galera; the same tag names the lab's namespaces.
    pub name: String,
    pub settings: ServerSettings,
    /// What the lab was asked for (`None`: no lab); each node's `lab` says what applied.
    pub lab: Option<LabSpec>,
    pub nodes: Vec<Node>,
}

impl Cluster {
    /// The cluster managed in state directory `home`, if there is one (running or not).
    pub fn load(home: &Path) -> Result<Option<Cluster>, ServerError> {
        Ok(read_state(home)?.map(|s| s.public()))
    }

    /// Nodes that are running.
    pub fn running(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.state == State::Running)
    }

    /// The replication primary (a replica cluster's node 0).
    pub fn primary(&self) -> Option<&Node> {
        self.nodes.iter().find(|n| n.role == NodeRole::Primary)
    }

    pub fn replicas(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.role == NodeRole::Replica)
    }

    /// How results measured on this cluster are labelled: `None` outside the lab, else
    /// node 0's lab label ("emulated (node CPU quota 0.4, link delay 0.2 ms)"); nodes
    /// are set up alike, and a node that differs is named.
    pub fn label(&self) -> Option<String> {
        let labs: Vec<(u32, String)> =
            self.nodes.iter().filter_map(|n| n.lab.as_ref().map(|l| (n.index, l.label()))).collect();
        let (_, first) = labs.first()?;
        let differ: Vec<String> =
            labs.iter().filter(|(_, l)| l != first).map(|(i, l)| format!("node {i}: {l}")).collect();
        Some(if differ.is_empty() { first.clone() } else { format!("{first} ({})", differ.join("; ")) })
    }

    /// Starts (or resizes) the cluster of state directory `home` to `spec`: nodes that
    /// run are kept, missing ones started and joined, nodes beyond `spec.nodes` stopped.
    /// Waits until the cluster is whole (Galera: `wsrep_cluster_size` = N and every node
    /// `wsrep_ready`; replicas: IO and SQL threads running and caught up), within bounds.
    /// On failure every node is stopped again, and the lab removed; datadirs and logs stay.
    pub fn start(home: &Path, spec: &ClusterSpec) -> Result<Cluster, ServerError> {
        let _lock = super::Manager::new(home).lock()?;
        start_locked(home, spec)
    }

    /// Stops every node (Galera: the highest index first, so node 0 stops last and can
    /// bootstrap the next start) and removes what the lab made: processes, namespaces,
    /// links, qdiscs and cgroups carrying this state directory's tag. With `purge`, also
    /// deletes the nodes' directories and forgets the cluster. Returns one line per
    /// thing stopped or removed.
    pub fn stop(home: &Path, purge: bool) -> Result<Vec<String>, ServerError> {
        let _lock = super::Manager::new(home).lock()?;
        stop_locked(home, purge)
    }

    /// Each node's readiness, asked of the node itself (synchronous; see [`Readiness`]).
    pub fn status(&self) -> Vec<NodeStatus> {
        block_on(async {
            let mut out = Vec::new();
            for n in &self.nodes {
                let readiness = match n.state {
                    State::Running => readiness(n).await.unwrap_or_else(|e| Readiness::Unreachable { reason: e }),
                    State::Stopped => Readiness::Stopped,
                    State::Crashed => Readiness::Crashed { last_log_line: super::tail(&n.error_log, 1) },
                };
                out.push(NodeStatus { node: n.clone(), readiness });
            }
            out
        })
    }
}

/// A node and what it says about itself.
#[derive(Clone, Debug, Serialize)]
pub struct NodeStatus {
    #[serde(flatten)]
    pub node: Node,
    pub readiness: Readiness,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Readiness {
    Galera {
        /// wsrep_ready: the node accepts queries.
        ready: bool,
        /// wsrep_local_state_comment: Synced, Donor/Desynced, Joining, ...
        state: String,
        /// wsrep_cluster_size as this node sees it.
        cluster_size: u32,
    },
    Primary {
        /// gtid_binlog_pos: the last transaction it wrote.
        gtid: String,
    },
    Replica {
        io_running: bool,
        sql_running: bool,
        /// Seconds_Behind_Master; `None` while the SQL thread is not running.
        lag_s: Option<f64>,
        /// Last_IO_Error or Last_SQL_Error, when there is one.
        error: Option<String>,
    },
    Stopped,
    Crashed {
        last_log_line: String,
    },
    Unreachable {
        reason: String,
    },
}

impl Readiness {
    /// One line: "Synced, cluster size 3", "IO yes, SQL yes, lag 0 s", ...
    pub fn describe(&self) -> String {
        let yes = |b: bool| if b { "yes" } else { "no" };
        match self {
            Readiness::Galera { ready, state, cluster_size } => {
                format!("{state}, cluster size {cluster_size}{}", if *ready { "" } else { ", wsrep_ready OFF" })
            }
            Readiness::Primary { gtid } => format!("gtid {}", if gtid.is_empty() { "(none yet)" } else { gtid }),
            Readiness::Replica { io_running, sql_running, lag_s, error } => format!(
                "IO {}, SQL {}, lag {}{}",
                yes(*io_running),
                yes(*sql_running),
                lag_s.map_or("-".into(), |l| format!("{l} s")),
                error.as_ref().map_or(String::new(), |e| format!(", error: {e}"))
            ),
            Readiness::Stopped => String::new(),
            Readiness::Crashed { last_log_line } => format!("last log line: {last_log_line}"),
            Readiness::Unreachable { reason } => reason.clone(),
        }
    }

    /// Whether the node is a full member: Galera ready and Synced, a replica with both
    /// threads running, a primary answering.
    pub fn ready(&self) -> bool {
        match self {
            Readiness::Galera { ready, state, .. } => *ready && state == "Synced",
            Readiness::Primary { .. } => true,
            Readiness::Replica { io_running, sql_running, .. } => *io_running && *sql_running,
            _ => false,
        }
    }
}

/// A replica's lag in seconds (Seconds_Behind_Master); `Ok(None)` for a node that is
/// not a replica or whose SQL thread is not running. Asked over the node's socket.
pub async fn replication_lag_s(node: &Node) -> Result<Option<f64>, String> {
    if node.role != NodeRole::Replica {
        return Ok(None);
    }
    let mut conn = connect(&node.admin_target()).await?;
    let lag = replica_lag_on(&mut conn).await.map_err(|e| crate::target::short_error(&e));
    let _ = conn.disconnect().await;
    lag
}

/// A Galera node's conflict counters (zero for nodes that are not Galera nodes).
pub async fn galera_conflicts(node: &Node) -> Result<Conflicts, String> {
    if node.role != NodeRole::Galera {
        return Ok(Conflicts::default());
    }
    let mut conn = connect(&node.admin_target()).await?;
    let c = crate::target::galera_conflicts_on(&mut conn).await.map_err(|e| crate::target::short_error(&e));
    let _ = conn.disconnect().await;
    c
}

/// Replication lag on any connection: MariaDB's and MySQL's `SHOW SLAVE STATUS`, or
/// MySQL 8.4's `SHOW REPLICA STATUS` (Seconds_Behind_Source), for servers sizeup does
/// not manage. `None`: not a replica, or its SQL thread is not running.
pub async fn replica_lag_on(conn: &mut Conn) -> Result<Option<f64>, mysql_async::Error> {
    Ok(crate::target::replication_lag(conn).await.flatten())
}

/// A column of a status row by any of its names (servers renamed some), as text.
fn column(row: &mysql_async::Row, names: &[&str]) -> Option<String> {
    let cols = row.columns_ref();
    let i = cols.iter().position(|c| names.iter().any(|n| c.name_str().eq_ignore_ascii_case(n)))?;
    match row.as_ref(i)? {
        mysql_async::Value::NULL => None,
        mysql_async::Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        v => Some(v.as_sql(true).trim_matches('\'').to_string()),
    }
}

/// What a node says about its part in the cluster.
async fn readiness(node: &Node) -> Result<Readiness, String> {
    let mut conn = connect(&node.admin_target()).await?;
    let r = readiness_on(&mut conn, node.role).await.map_err(|e| crate::target::short_error(&e));
    let _ = conn.disconnect().await;
    r
}

async fn readiness_on(conn: &mut Conn, role: NodeRole) -> Result<Readiness, mysql_async::Error> {
    Ok(match role {
        NodeRole::Galera => {
            let v =
                crate::target::status_vars(conn, &["wsrep_ready", "wsrep_local_state_comment", "wsrep_cluster_size"])
                    .await?;
            let get = |k: &str| v.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default();
            Readiness::Galera {
                ready: get("wsrep_ready").eq_ignore_ascii_case("ON"),
                state: get("wsrep_local_state_comment"),
                cluster_size: get("wsrep_cluster_size").parse().unwrap_or(0),
            }
        }
        NodeRole::Primary => {
            let gtid: Option<String> = conn.query_first("SELECT @@gtid_binlog_pos").await?;
            Readiness::Primary { gtid: gtid.unwrap_or_default() }
        }
        NodeRole::Replica => {
            let rows: Vec<mysql_async::Row> = conn.query("SHOW SLAVE STATUS").await?;
            match rows.first() {
                None => Readiness::Replica {
                    io_running: false,
                    sql_running: false,
                    lag_s: None,
                    error: Some("replication is not configured".into()),
                },
                Some(row) => {
                    let yes = |c: &str| column(row, &[c]).is_some_and(|v| v.eq_ignore_ascii_case("Yes"));
                    let error = ["Last_IO_Error", "Last_SQL_Error"]
                        .iter()
                        .filter_map(|c| column(row, &[c]))
                        .find(|e| !e.is_empty());
                    Readiness::Replica {
                        io_running: yes("Slave_IO_Running"),
                        sql_running: yes("Slave_SQL_Running"),
                        lag_s: column(row, &["Seconds_Behind_Master"]).and_then(|v| v.parse().ok()),
                        error,
                    }
                }
            }
        }
    })
}

/// Root over a node's socket: how sizeup itself talks to its nodes.
fn admin_target(socket: &Path, port: u16) -> Target {
    Target {
        host: "localhost".into(),
        port,
        socket: Some(socket.to_path_buf()),
        user: "root".into(),
        password: None,
        database: "mysql".into(),
        tls: Default::default(),
    }
}

async fn connect(t: &Target) -> Result<Conn, String> {
    t.connect_server().await.map_err(|e| e.to_string())
}

/// Runs `f` on a runtime of its own (start, stop and status are synchronous).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime").block_on(f)
}

// ---------------------------------------------------------------------------------------
// The state file and the start/stop work behind the API.

/// `cluster.json`: the cluster as started.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ClusterFile {
    kind: ClusterKind,
    name: String,
    settings: ServerSettings,
    base_port: u16,
    lab: Option<LabSpec>,
    /// The lab's network, while it exists.
    network: Option<Network>,
    nodes: Vec<NodeRecord>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct NodeRecord {
    role: NodeRole,
    instance: Instance,
    lab: Option<Lab>,
    galera_ports: Option<GaleraPorts>,
}

impl ClusterFile {
    fn public(&self) -> Cluster {
        Cluster {
            kind: self.kind,
            name: self.name.clone(),
            settings: self.settings.clone(),
            lab: self.lab.clone(),
            nodes: self.nodes.iter().map(NodeRecord::public).collect(),
        }
    }
}

impl NodeRecord {
    fn public(&self) -> Node {
        let i = &self.instance;
        let state = i.state();
        let in_netns = self.lab.as_ref().is_some_and(|l| l.netns.is_some());
        Node {
            index: i.index,
            role: self.role,
            state,
            host: i.address.clone(),
            port: i.port,
            socket: (!in_netns).then(|| i.socket.clone()),
            user: i.user().to_string(),
            pid: i.pid.filter(|_| state == State::Running),
            lab: self.lab.clone(),
            galera_ports: self.galera_ports,
            error_log: i.error_log(),
            cold_note: i.cold_note().map(|n| n.replacen("managed instance", "cluster node", 1)),
            admin_socket: i.socket.clone(),
        }
    }
}

fn state_path(home: &Path) -> PathBuf {
    home.join("cluster.json")
}

fn read_state(home: &Path) -> Result<Option<ClusterFile>, ServerError> {
    let path = state_path(home);
    match std::fs::read_to_string(&path) {
        Ok(s) => serde_json::from_str(&s).map(Some).map_err(|e| {
            ServerError::State(format!(
                "{} is damaged ({e}); stop its servers by hand and move it away to start afresh",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ServerError::State(format!("cannot read {}: {e}", path.display()))),
    }
}

fn write_state(home: &Path, s: &ClusterFile) -> Result<(), ServerError> {
    let path = state_path(home);
    std::fs::create_dir_all(home).map_err(|e| ServerError::State(format!("cannot create {}: {e}", home.display())))?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(s).expect("serialisable"))
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| ServerError::State(format!("cannot write {}: {e}", path.display())))
}

/// A cluster error: one or two lines naming the node, its log's last lines after them.
fn failed(msg: String) -> ServerError {
    ServerError::Cluster(msg)
}

/// "node 2 did not start: ...", from an instance error.
fn node_error(index: u32, e: ServerError) -> ServerError {
    match e {
        ServerError::Start { detail, log, .. } => {
            failed(format!("node {index} did not start: {detail}\n(full log: {log})"))
        }
        ServerError::Init { detail, .. } => failed(format!("initialising node {index}'s datadir failed: {detail}")),
        e => e,
    }
}

fn start_locked(home: &Path, spec: &ClusterSpec) -> Result<Cluster, ServerError> {
    if spec.nodes == 0 || spec.nodes > MAX_NODES {
        return Err(failed(format!("a cluster has 1 to {MAX_NODES} nodes (asked: {})", spec.nodes)));
    }
    if spec.kind == ClusterKind::Galera {
        galera::check_installed()?;
    }
    if let Some(l) = &spec.lab {
        l.check(spec.nodes, lab::host_cpus()).map_err(|e| failed(e.to_string()))?;
    }
    let mut state = match read_state(home)? {
        Some(old) => reuse(old, spec)?,
        None => ClusterFile {
            kind: spec.kind,
            name: format!("sizeup-{}", lab::Names::new(home).tag),
            settings: spec.settings.clone(),
            base_port: match spec.base_port {
                Some(p) => p,
                None => super::free_port_range(DEFAULT_BASE_PORT, PORT_SPAN)?,
            },
            lab: spec.lab.clone(),
            network: None,
            nodes: Vec::new(),
        },
    };
    check_base_port(state.base_port)?;
    write_state(home, &state)?;
    let before: Vec<u32> =
        state.nodes.iter().filter(|n| n.instance.state() == State::Running).map(|n| n.instance.index).collect();
    match bring_up(home, spec, &mut state) {
        Ok(()) => Ok(state.public()),
        Err(e) if before.is_empty() => {
            // Nothing half-made stays running: the nodes stop, the lab goes; logs stay.
            let _ = stop_locked(home, false);
            Err(e)
        }
        Err(e) => {
            // A resize (a study's next level, a crashed node restarted): the nodes that
            // ran before keep running as they were; only what this start began stops.
            let _ = stop_others(home, &mut state, &before);
            Err(e)
        }
    }
}

/// Stops the nodes not in `keep`, highest index first.
fn stop_others(home: &Path, state: &mut ClusterFile, keep: &[u32]) -> Result<(), ServerError> {
    for p in (0..state.nodes.len()).rev() {
        let n = &mut state.nodes[p];
        if !keep.contains(&n.instance.index) && n.instance.state() != State::Stopped {
            n.instance.stop();
            remove_node_lab(state.network.as_ref(), n);
            write_state(home, state)?;
        }
    }
    Ok(())
}

/// The remembered cluster, if it can take `spec`: same kind, and the same settings and
/// lab while any node runs (they cannot change under a running cluster).
fn reuse(mut old: ClusterFile, spec: &ClusterSpec) -> Result<ClusterFile, ServerError> {
    let running = old.nodes.iter().any(|n| n.instance.state() == State::Running);
    if old.kind != spec.kind {
        return Err(failed(format!(
            "this state directory holds a {} cluster{}; `sizeup cluster stop --purge` removes it first",
            old.kind.name(),
            if running { " (running)" } else { "" }
        )));
    }
    if running {
        let mut differ = Vec::new();
        let settings = crate::server::settings_differences(&old.settings, &spec.settings);
        if !settings.is_empty() {
            differ.push(format!("server settings: {}", settings.join(", ")));
        }
        if old.lab != spec.lab {
            differ.push("lab (--node-cpus, --link-delay, --link-jitter)".into());
        }
        if spec.base_port.is_some_and(|p| p != old.base_port) {
            differ.push(format!("--base-port (it runs on {})", old.base_port));
        }
        if !differ.is_empty() {
            return Err(failed(format!(
                "the cluster runs with other {}: repeat its settings to resize it, or `sizeup cluster stop`, then \
                 start it with the new ones",
                differ.join(" and ")
            )));
        }
    }
    old.settings = spec.settings.clone();
    old.lab = spec.lab.clone();
    if let Some(p) = spec.base_port {
        old.base_port = p;
    }
    Ok(old)
}

fn check_base_port(base: u16) -> Result<(), ServerError> {
    if base < super::MIN_PORT || base as u32 + PORT_SPAN > 65536 {
        return Err(failed(format!(
            "--base-port {base}: a cluster uses {PORT_SPAN} ports from its base (SQL, group, IST and SST \
             for up to {MAX_NODES} nodes), so the base must be from {} to {}",
            super::MIN_PORT,
            65536 - PORT_SPAN
        )));
    }
    Ok(())
}

/// Node `index`'s ports: SQL base + i, then a block each for group, IST and SST.
fn ports(base: u16, index: u32) -> (u16, GaleraPorts) {
    let at = |block: u32| (base as u32 + block * MAX_NODES + index) as u16;
    (at(0), GaleraPorts { group: at(1), ist: at(2), sst: at(3) })
}

/// The lab's network: made now if the lab wants one and has none, or why not.
fn ensure_network(home: &Path, state: &mut ClusterFile, host: &lab::Host) -> Result<(), String> {
    match &state.network {
        Some(n) if n.exists() => return Ok(()),
        // Gone behind sizeup's back (a reboot empties /run/netns): made again below.
        Some(n) => n.destroy(),
        None => {}
    }
    state.network = None;
    if let Some(why) = &host.no_netns {
        return Err(why.clone());
    }
    match Network::create(home) {
        Ok(n) => {
            state.network = Some(n);
            Ok(())
        }
        Err(e) => Err(format!("cannot create network namespaces ({e}): nodes share the host's network")),
    }
}

fn bring_up(home: &Path, spec: &ClusterSpec, state: &mut ClusterFile) -> Result<(), ServerError> {
    let binary = super::find_binary()?;
    let host = state.lab.as_ref().map(|_| lab::probe());
    let mut net_error = None;
    if let Some(h) = &host {
        // What the host cannot do goes into each node's lab notes and so into the label.
        net_error = ensure_network(home, state, h).err();
        write_state(home, state)?;
    }
    // Nodes beyond the asked size leave first (Galera: a clean leave shrinks the group).
    shrink(home, state, spec.nodes)?;
    let any_running = state.nodes.iter().any(|n| n.instance.state() == State::Running);
    let bootstrap = match spec.kind {
        ClusterKind::Galera if !any_running => Some(galera::bootstrap_node(state, spec.nodes)?),
        _ => None,
    };
    // Bootstrap (or the primary) first, then the others in turn.
    let mut order: Vec<u32> = (0..spec.nodes).collect();
    if let Some(b) = bootstrap {
        order.retain(|&i| i != b);
        order.insert(0, b);
    }
    for index in order {
        let pos = state.nodes.iter().position(|n| n.instance.index == index);
        if let Some(p) = pos {
            match state.nodes[p].instance.state() {
                State::Running => continue,
                State::Crashed => eprintln!(
                    "node {index} crashed or was killed (gone without `sizeup cluster stop`); starting it again{}",
                    Some(state.nodes[p].instance.log_tail(1))
                        .filter(|l| !l.is_empty())
                        .map_or(String::new(), |l| format!("\n  last line of its log: {l}"))
                ),
                State::Stopped => {}
            }
        }
        start_node(
            home,
            spec,
            state,
            (index, pos),
            bootstrap,
            &binary,
            host.as_ref().map(|h| (h, net_error.as_deref())),
        )?;
    }
    let cluster = state.public();
    match spec.kind {
        ClusterKind::Galera => galera::formed(&cluster, spec.nodes),
        ClusterKind::Replicas => replicas::caught_up(&cluster),
    }
}

/// Starts node `index` (at `pos` in the state when it was there before): its record,
/// its lab placement (`lab`: the host and why the lab network is missing, if it is),
/// its role's options, then launched, ready, joined or replicating, and answering on
/// its address.
fn start_node(
    home: &Path,
    spec: &ClusterSpec,
    state: &mut ClusterFile,
    (index, pos): (u32, Option<usize>),
    bootstrap: Option<u32>,
    binary: &Path,
    lab: Option<(&lab::Host, Option<&str>)>,
) -> Result<(), ServerError> {
    let role = match (spec.kind, index) {
        (ClusterKind::Galera, _) => NodeRole::Galera,
        (ClusterKind::Replicas, 0) => NodeRole::Primary,
        (ClusterKind::Replicas, _) => NodeRole::Replica,
    };
    let port = ports(state.base_port, index).0;
    let recovered = pos.is_some_and(|p| state.nodes[p].instance.state() == State::Crashed);
    let mut record = node_record(home, state, binary, index, role, recovered);
    if let (Some((h, net_error)), Some(l)) = (lab, &state.lab) {
        let net = match (&state.network, net_error) {
            (Some(n), _) => Ok(n),
            (None, Some(why)) => Err(why),
            (None, None) => Err("no lab network"),
        };
        let (placement, facts) = lab::place_node(h, &lab::Names::new(home), net, l, index)
            .map_err(|e| failed(format!("lab: setting up node {index} failed: {e}")))?;
        record.instance.address = facts.address.clone();
        record.instance.placement = placement;
        record.lab = Some(facts);
    }
    let in_netns = record.instance.placement.netns.is_some();
    if !in_netns {
        for p in
            [Some(port), record.galera_ports.map(|g| g.group), record.galera_ports.map(|g| g.ist)].into_iter().flatten()
        {
            if super::port_taken(p) {
                return Err(ServerError::PortInUse { port: p });
            }
        }
    }
    let peers: Vec<(String, GaleraPorts)> = (0..spec.nodes)
        .map(|i| {
            let addr = match (&state.network, &record.lab) {
                (Some(n), Some(l)) if l.netns.is_some() => n.node_address(i),
                _ => "127.0.0.1".to_string(),
            };
            (addr, ports(state.base_port, i).1)
        })
        .collect();
    record.instance.role_options = match role {
        NodeRole::Galera => {
            record.instance.path_first = galera::sst_helpers(&record.instance)?;
            galera::options(state, &record, &peers)?
        }
        NodeRole::Primary | NodeRole::Replica => replicas::options(&record),
    };
    match pos {
        Some(p) => state.nodes[p] = record.clone(),
        None => state.nodes.push(record.clone()),
    }
    state.nodes.sort_by_key(|n| n.instance.index);
    write_state(home, state)?;
    record.instance.prepare().map_err(|e| node_error(index, e))?;
    let args: &[&str] = if bootstrap == Some(index) { &["--wsrep-new-cluster"] } else { &[] };
    record.instance.launch(args).map_err(|e| node_error(index, e))?;
    let at = state.nodes.iter().position(|n| n.instance.index == index).expect("recorded");
    state.nodes[at] = record.clone();
    write_state(home, state)?;
    record.instance.wait_ready().map_err(|e| node_error(index, e))?;
    if let Some(l) = record.lab.as_mut() {
        lab::read_back(l);
    }
    state.nodes[at] = record.clone();
    write_state(home, state)?;
    let node = record.public();
    let net = state.network.clone();
    match role {
        NodeRole::Galera => galera::joined(&node, net.as_ref(), bootstrap == Some(index))?,
        NodeRole::Primary => replicas::primary_ready(&node, net.as_ref())?,
        NodeRole::Replica => {
            let primary = state.nodes.iter().find(|n| n.role == NodeRole::Primary).expect("primary first").public();
            replicas::replica_ready(&primary, &node, net.as_ref())?
        }
    }
    // A lab node is ready over its socket before its namespace address answers the
    // clients, which use only that address: a study's next step failed connecting.
    if node.socket.is_none()
        && wait_for(LAB_ADDRESS_BOUND, || tcp_greets(&node.host, node.port).then_some(())).is_none()
    {
        return Err(failed(format!(
            "{} is ready but its address {}:{} gave no MySQL greeting within {} s",
            node.describe(),
            node.host,
            node.port,
            LAB_ADDRESS_BOUND.as_secs()
        )));
    }
    Ok(())
}

/// A node's record before it starts: its directory, socket and ports from its index.
/// A node's record before it starts: its directory, socket and ports from its index.
fn node_record(
    home: &Path,
    state: &ClusterFile,
    binary: &Path,
    index: u32,
    role: NodeRole,
    recovered: bool,
) -> NodeRecord {
    let (port, gports) = ports(state.base_port, index);
    let dir = home.join("cluster").join(format!("node{index}"));
    NodeRecord {
        role,
        instance: Instance {
            index,
            socket: super::socket_path(&dir, home, &format!("node{index}")),
            dir,
            port,
            pid: None,
            should_run: false,
            settings: state.settings.clone(),
            binary: binary.to_path_buf(),
            started_at: 0,
            recovered,
            address: "127.0.0.1".into(),
            role_options: Vec::new(),
            placement: Default::default(),
            path_first: Vec::new(),
            log_from: 0,
            user_settings: None,
        },
        lab: None,
        galera_ports: (role == NodeRole::Galera).then_some(gports),
    }
}

/// Stops the nodes from `keep` upward and removes their lab parts (their data stays).
fn shrink(home: &Path, state: &mut ClusterFile, keep: u32) -> Result<(), ServerError> {
    let mut extra: Vec<usize> = (0..state.nodes.len()).filter(|&p| state.nodes[p].instance.index >= keep).collect();
    extra.reverse();
    for p in extra {
        let n = &mut state.nodes[p];
        if n.instance.state() == State::Running {
            eprintln!("stopping node {} (the cluster is to have {keep} node(s))", n.instance.index);
        }
        n.instance.stop();
        remove_node_lab(state.network.as_ref(), n);
        write_state(home, state)?;
    }
    Ok(())
}

/// Removes a stopped node's namespace and cgroup.
fn remove_node_lab(net: Option<&Network>, n: &mut NodeRecord) {
    if let (Some(net), Some(l)) = (net, &n.lab) {
        if l.netns.is_some() {
            net.remove_node(n.instance.index);
        }
    }
    if let Some(dir) = n.lab.as_ref().and_then(|l| l.cgroup.clone()) {
        let _ = lab::remove_cgroup(&dir);
    }
    n.instance.placement = Default::default();
}

fn stop_locked(home: &Path, purge: bool) -> Result<Vec<String>, ServerError> {
    let mut lines = Vec::new();
    let Some(mut state) = read_state(home)? else {
        lines.extend(lab::remove_leftovers(home).into_iter().map(|r| format!("removed {r}")));
        return Ok(lines);
    };
    // Highest index first: a Galera cluster's node 0 leaves last and is safe to bootstrap.
    let order: Vec<usize> = (0..state.nodes.len()).rev().collect();
    for p in order {
        let was = state.nodes[p].instance.state();
        state.nodes[p].instance.stop();
        let net = state.network.clone();
        remove_node_lab(net.as_ref(), &mut state.nodes[p]);
        let n = &state.nodes[p];
        if was != State::Stopped {
            lines.push(format!("node {} ({}) stopped", n.instance.index, n.role.name()));
        }
        if purge {
            let _ = std::fs::remove_dir_all(&n.instance.dir);
            let _ = std::fs::remove_file(&n.instance.socket);
        }
        write_state(home, &state)?;
    }
    if let Some(net) = state.network.take() {
        net.destroy();
        lines.push(format!("lab network {}.{}.0/24 removed", "10.213", net.subnet));
    }
    lines.extend(lab::remove_leftovers(home).into_iter().map(|r| format!("removed leftover {r}")));
    if purge {
        let _ = std::fs::remove_dir(home.join("cluster"));
        std::fs::remove_file(state_path(home))
            .map_err(|e| ServerError::State(format!("cannot remove {}: {e}", state_path(home).display())))?;
        lines.push("cluster data removed".into());
    } else {
        write_state(home, &state)?;
    }
    Ok(lines)
}

/// Polls `check` every 200 ms until it returns `Some`, or `bound` passes.
fn wait_for<T>(bound: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let started = std::time::Instant::now();
    loop {
        if let Some(v) = check() {
            return Some(v);
        }
        if started.elapsed() >= bound {
            return None;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits (up to `bound`) until `node` says it is a full member and `also` holds for
/// what it says; else returns what it said last.
/// How long a lab node's namespace address may take to answer once the node is ready.
const LAB_ADDRESS_BOUND: Duration = Duration::from_secs(30);

/// A MySQL server greets on this TCP address (protocol version 10 in its first packet).
fn tcp_greets(host: &str, port: u16) -> bool {
    use std::io::Read;
    let Ok(addr) = format!("{host}:{port}").parse::<std::net::SocketAddr>() else {
        return false;
    };
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = [0u8; 5];
    s.read_exact(&mut head).is_ok() && head[4] == 10
}

/// A node whose process ended is not waited for to the bound.
fn until_ready(node: &Node, bound: Duration, also: impl Fn(&Readiness) -> bool) -> Result<(), String> {
    let mut last = String::from("no answer");
    let ok = wait_for(bound, || {
        if let Some(pid) = node.pid.filter(|p| process_ended(*p)) {
            last = format!("its server process {pid} ended");
            return Some(false);
        }
        match block_on(readiness(node)) {
            Ok(r) if r.ready() && also(&r) => Some(true),
            Ok(r) => {
                last = r.describe();
                None
            }
            Err(e) => {
                last = e;
                None
            }
        }
    });
    match ok {
        Some(true) => Ok(()),
        _ => Err(last),
    }
}

/// The process is gone (or a zombie): nothing will answer.
fn process_ended(pid: i32) -> bool {
    // SAFETY: waitpid with WNOHANG never blocks; it reaps our own exited child.
    unsafe {
        libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => matches!(stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()), Some("Z" | "X")),
        Err(_) => true,
    }
}

/// Runs statements on a node as root over its socket.
fn admin_sql(node: &Node, statements: &[String]) -> Result<(), ServerError> {
    block_on(async {
        let mut conn = connect(&node.admin_target()).await.map_err(failed)?;
        for s in statements {
            conn.query_drop(s).await.map_err(|e| {
                failed(format!("{}: {} failed: {}", node.describe(), redact(s), crate::target::short_error(&e)))
            })?;
        }
        let _ = conn.disconnect().await;
        Ok(())
    })
}

/// A statement for a message, with any password replaced.
fn redact(sql: &str) -> String {
    for key in ["IDENTIFIED BY '", "MASTER_PASSWORD='"] {
        if let Some(at) = sql.find(key) {
            let start = at + key.len();
            let end = sql[start..].find('\'').map_or(sql.len(), |e| start + e);
            return format!("{}xxxx{}", &sql[..start], &sql[end..]);
        }
    }
    sql.to_string()
}

/// The lab's TCP login for clients in the root namespace: root from the lab subnet,
/// passwordless as root is from 127.0.0.1 (the subnet is reachable from this host only).
fn lab_login(net: Option<&Network>) -> Vec<String> {
    match net {
        Some(n) => vec![
            format!("CREATE USER IF NOT EXISTS 'root'@'{}'", n.host_pattern()),
            format!("GRANT ALL ON *.* TO 'root'@'{}' WITH GRANT OPTION", n.host_pattern()),
        ],
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ports_stay_put_as_the_cluster_grows() {
        let (sql, g) = ports(14306, 2);
        assert_eq!(sql, 14308);
        assert_eq!(g, GaleraPorts { group: 14306 + 32 + 2, ist: 14306 + 64 + 2, sst: 14306 + 96 + 2 });
        assert!(check_base_port((65536 - PORT_SPAN) as u16).is_ok());
        assert!(check_base_port((65536 - PORT_SPAN + 1) as u16).is_err());
        assert!(check_base_port(80).is_err());
    }

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact("CREATE OR REPLACE USER 'r'@'%' IDENTIFIED BY 's3cret'"),
            "CREATE OR REPLACE USER 'r'@'%' IDENTIFIED BY 'xxxx'"
        );
        assert_eq!(
            redact("CHANGE MASTER TO MASTER_PASSWORD='p', MASTER_PORT=1"),
            "CHANGE MASTER TO MASTER_PASSWORD='xxxx', MASTER_PORT=1"
        );
    }

    /// resize_refusal_names_no_setting: `cluster start --galera --nodes 2` on a cluster
    /// started with --buffer-pool 128M said only "other server settings".
    #[test]
    fn a_resize_refusal_names_the_settings_to_repeat() {
        let running = crate::server::ServerSettings { buffer_pool: "128M".into(), ..Default::default() };
        let asked = crate::server::ServerSettings::default();
        assert_eq!(crate::server::settings_differences(&running, &asked), ["--buffer-pool 1G (it has 128M)"]);
        assert!(crate::server::settings_differences(&asked, &asked).is_empty());
    }

    #[test]
    fn a_cluster_label_names_nodes_that_differ() {
        let node = |i: u32, quota: Option<f64>| Node {
            index: i,
            role: NodeRole::Galera,
            state: State::Running,
            host: "10.213.1.10".into(),
            port: 1,
            socket: None,
            user: "root".into(),
            pid: None,
            lab: Some(Lab { netns: Some("ns".into()), cpu_quota: quota, ..Lab::default() }),
            galera_ports: None,
            error_log: PathBuf::new(),
            cold_note: None,
            admin_socket: PathBuf::new(),
        };
        let mut c = Cluster {
            kind: ClusterKind::Galera,
            name: "x".into(),
            settings: ServerSettings::default(),
            lab: None,
            nodes: vec![node(0, Some(0.4)), node(1, Some(0.4))],
        };
        assert_eq!(c.label().unwrap(), "emulated (node CPU quota 0.4, own network namespace)");
        c.nodes[1] = node(1, None);
        assert!(c.label().unwrap().contains("node 1: emulated (own network namespace)"));
        c.nodes.iter_mut().for_each(|n| n.lab = None);
        assert_eq!(c.label(), None);
    }
}
