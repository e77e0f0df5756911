//! Galera nodes: the wsrep options of each node, which node bootstraps, and the waits
//! that say a node joined and the cluster formed. Debian's galera-4 provider and the
//! rsync state transfer (wsrep_sst_rsync); nothing else is supported.

use super::{admin_sql, failed, lab_login, until_ready, Cluster, ClusterFile};
use super::{GaleraPorts, Network, Node, NodeRecord, Readiness};
use crate::server::{Instance, ServerError, State};
use std::path::PathBuf;
use std::time::Duration;

/// Where distributions put the galera-4 provider.
const PROVIDERS: [&str; 4] = [
    "/usr/lib/galera/libgalera_smm.so",
    "/usr/lib/libgalera_smm.so",
    "/usr/lib64/galera-4/libgalera_smm.so",
    "/usr/lib/galera-4/libgalera_smm.so",
];
/// A node that greets has finished its state transfer; becoming Synced is quick.
const JOIN_BOUND: Duration = Duration::from_secs(120);
/// Every node seeing the whole group after the last one joined.
const FORM_BOUND: Duration = Duration::from_secs(60);

fn provider() -> Option<PathBuf> {
    PROVIDERS.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// galera-4, rsync and the rsync transfer script must be there before anything starts.
pub(super) fn check_installed() -> Result<(), ServerError> {
    let on_path = |name: &str| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path).chain([PathBuf::from("/usr/bin")]).any(|d| d.join(name).is_file())
    };
    let mut missing = Vec::new();
    if provider().is_none() {
        missing.push("galera-4 (no libgalera_smm.so in /usr/lib/galera or /usr/lib)");
    }
    if !on_path("rsync") {
        missing.push("rsync");
    }
    if !on_path("wsrep_sst_rsync") {
        missing.push("wsrep_sst_rsync (comes with mariadb-server)");
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(failed(format!(
        "a Galera cluster needs {}: install them (`apt-get install galera-4 rsync`, or scripts/setup.sh)",
        missing.join(", ")
    )))
}

/// As root, the joiner's rsync daemon would switch to `nobody`, who cannot write the
/// root-owned datadir, and every state transfer fails ("cannot stat destination":
/// MDEV-40688). A node run by root gets an `rsync` first on its PATH that keeps root for
/// the daemon. The server prepends its `basedir` + "/bin" to PATH unless that string is
/// in it already ("/usr//bin": MariaDB keeps basedir with a trailing slash), so both
/// spellings follow the wrapper's directory. Returns the directories to put first;
/// none when not root.
pub(super) fn sst_helpers(i: &Instance) -> Result<Vec<PathBuf>, ServerError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(Vec::new());
    }
    let rsync = ["/usr/bin/rsync", "/bin/rsync", "/usr/local/bin/rsync"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| failed("rsync is not installed (`apt-get install rsync`)".into()))?;
    let dir = i.dir.join("bin");
    let script = format!(
        "#!/bin/sh\n# Written by sizeup: rsync's daemon keeps root for a Galera state transfer (MDEV-40688).\n\
         case \" $* \" in *\" --daemon \"*) exec {r} --dparam=uid=0 --dparam=gid=0 \"$@\" ;; esac\n\
         exec {r} \"$@\"\n",
        r = rsync.display()
    );
    let path = dir.join("rsync");
    std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(&path, script))
        .and_then(|_| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        })
        .map_err(|e| ServerError::State(format!("cannot write {}: {e}", path.display())))?;
    let base = basedir(i);
    Ok(vec![dir, PathBuf::from(format!("{}//bin", base.display())), base.join("bin")])
}

/// The server's installation directory: /usr for /usr/sbin/mariadbd.
fn basedir(i: &Instance) -> PathBuf {
    i.binary.parent().and_then(|p| p.parent()).map_or_else(|| PathBuf::from("/usr"), PathBuf::from)
}

/// The node that starts a new group: a fresh cluster's node 0, else the lowest node
/// whose grastate.dat says `safe_to_bootstrap: 1` (the last to leave, node 0 when
/// `cluster stop` stopped the cluster).
pub(super) fn bootstrap_node(state: &ClusterFile, nodes: u32) -> Result<u32, ServerError> {
    let grastate = |i: u32| {
        state
            .nodes
            .iter()
            .find(|n| n.instance.index == i)
            .and_then(|n| std::fs::read_to_string(n.instance.datadir().join("grastate.dat")).ok())
    };
    let known: Vec<(u32, String)> = (0..nodes).filter_map(|i| grastate(i).map(|g| (i, g))).collect();
    if known.is_empty() {
        return Ok(0);
    }
    if let Some((i, _)) = known.iter().find(|(_, g)| g.lines().any(|l| l.trim() == "safe_to_bootstrap: 1")) {
        return Ok(*i);
    }
    Err(failed(
        "no node of the stopped Galera cluster is safe to bootstrap (none left it last, cleanly: a crash?); \
         `sizeup cluster stop --purge` and start afresh, or set safe_to_bootstrap: 1 in the grastate.dat \
         of the node with the highest seqno"
            .into(),
    ))
}

/// A node's wsrep options: its addresses and ports, its peers, rsync transfers, and
/// what Galera requires of the server (row events, interleaved auto-increment locks).
pub(super) fn options(
    state: &ClusterFile,
    record: &NodeRecord,
    peers: &[(String, GaleraPorts)],
) -> Result<Vec<(String, String)>, ServerError> {
    let provider = provider().ok_or_else(|| failed("galera-4 is not installed".into()))?;
    let g = record.galera_ports.expect("a Galera node has Galera ports");
    let addr = &record.instance.address;
    let gcomm: Vec<String> = peers.iter().map(|(a, p)| format!("{a}:{}", p.group)).collect();
    let o = |k: &str, v: String| (k.to_string(), v);
    Ok(vec![
        o("wsrep_on", "ON".into()),
        o("wsrep_provider", provider.display().to_string()),
        o("wsrep_cluster_name", state.name.clone()),
        o("wsrep_cluster_address", format!("gcomm://{}", gcomm.join(","))),
        o("wsrep_node_name", format!("node{}", record.instance.index)),
        o("wsrep_node_address", format!("{addr}:{}", g.group)),
        o("wsrep_node_incoming_address", format!("{addr}:{}", record.instance.port)),
        o(
            "wsrep_provider_options",
            format!("gmcast.listen_addr=tcp://{addr}:{};ist.recv_addr={addr}:{}", g.group, g.ist),
        ),
        o("wsrep_sst_method", "rsync".into()),
        o("wsrep_sst_receive_address", format!("{addr}:{}", g.sst)),
        o("binlog_format", "ROW".into()),
        o("innodb_autoinc_lock_mode", "2".into()),
        o("default_storage_engine", "InnoDB".into()),
    ])
}

/// Waits until a launched node is a full member (wsrep_ready, Synced); the bootstrap
/// node then gets the lab's TCP login, which Galera copies to every node.
pub(super) fn joined(node: &Node, net: Option<&Network>, bootstrap: bool) -> Result<(), ServerError> {
    if let Err(seen) = until_ready(node, JOIN_BOUND, |_| true) {
        let what = match seen.ends_with("ended") {
            true => format!("did not join: {seen}"),
            false => format!("not a synced member after {} s ({seen})", JOIN_BOUND.as_secs()),
        };
        return Err(not_joined(node, &what));
    }
    if bootstrap {
        admin_sql(node, &lab_login(net))?;
    }
    Ok(())
}

/// Every node sees `n` members and is ready.
pub(super) fn formed(cluster: &Cluster, n: u32) -> Result<(), ServerError> {
    let nodes: Vec<&Node> = cluster.nodes.iter().filter(|x| x.index < n).collect();
    for node in nodes {
        if node.state != State::Running {
            return Err(not_joined(node, "is not running"));
        }
        let whole = |r: &Readiness| matches!(r, Readiness::Galera { cluster_size, .. } if *cluster_size == n);
        if let Err(seen) = until_ready(node, FORM_BOUND, whole) {
            return Err(not_joined(
                node,
                &format!("does not see {n} ready members after {} s ({seen})", FORM_BOUND.as_secs()),
            ));
        }
    }
    Ok(())
}

fn not_joined(node: &Node, what: &str) -> ServerError {
    let log = node.error_log.display();
    let tail = crate::server::tail(&node.error_log, 8);
    failed(format!("Galera {} {what}; last lines of its log ({log}):\n{tail}", node.describe()))
}
