//! Primary + replicas: MariaDB GTID replication. The primary writes a binary log; each
//! replica has its own replication login on the primary (a random password sizeup
//! hands to the replica's CHANGE MASTER and never prints or keeps: the replica's
//! master.info holds it, as with any replica) and follows with MASTER_USE_GTID=slave_pos.

use super::{admin_sql, block_on, connect, failed, lab_login, until_ready, Cluster};
use super::{Network, Node, NodeRecord, NodeRole};
use crate::server::ServerError;
use mysql_async::prelude::Queryable;
use std::time::Duration;

/// IO and SQL threads running after START SLAVE.
const CONNECT_BOUND: Duration = Duration::from_secs(60);
/// A replica applying what the primary had written when it started.
const CATCH_UP_BOUND: u32 = 120;

/// The role's server options: a unique server_id, a row-based binary log; replicas also
/// relay logs, log what they apply (so one can become the primary) and are read-only.
pub(super) fn options(record: &NodeRecord) -> Vec<(String, String)> {
    let i = &record.instance;
    let o = |k: &str, v: String| (k.to_string(), v);
    let mut v = vec![
        o("server_id", (i.index + 1).to_string()),
        o("log_bin", i.dir.join("binlog").display().to_string()),
        o("binlog_format", "ROW".into()),
    ];
    if record.role == NodeRole::Replica {
        v.push(o("relay_log", i.dir.join("relay").display().to_string()));
        v.push(o("log_slave_updates", "ON".into()));
        v.push(o("read_only", "ON".into()));
    }
    v
}

/// The primary answers: give the lab's TCP login (replicas copy it from the binary log).
pub(super) fn primary_ready(node: &Node, net: Option<&Network>) -> Result<(), ServerError> {
    admin_sql(node, &lab_login(net))
}

/// Points a replica at the primary (again, on every start: the primary's address may
/// have changed) and waits until both replication threads run.
pub(super) fn replica_ready(primary: &Node, replica: &Node, _net: Option<&Network>) -> Result<(), ServerError> {
    use rand::distr::{Alphanumeric, SampleString};
    let password = Alphanumeric.sample_string(&mut rand::rng(), 24);
    let user = format!("sizeup_repl_{}", replica.index);
    // The replica connects from its own address: loopback, or its namespace's.
    let account = format!("'{user}'@'{}'", replica.host);
    admin_sql(
        primary,
        &[
            format!("CREATE OR REPLACE USER {account} IDENTIFIED BY '{password}'"),
            format!("GRANT REPLICATION SLAVE ON *.* TO {account}"),
        ],
    )?;
    admin_sql(
        replica,
        &[
            "STOP SLAVE".into(),
            format!(
                "CHANGE MASTER TO MASTER_HOST='{}', MASTER_PORT={}, MASTER_USER='{user}', \
                 MASTER_PASSWORD='{password}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
                primary.host, primary.port
            ),
            "START SLAVE".into(),
        ],
    )?;
    until_ready(replica, CONNECT_BOUND, |_| true).map_err(|seen| {
        failed(format!(
            "{} does not replicate from {} after {} s ({seen}); its log: {}",
            replica.describe(),
            primary.describe(),
            CONNECT_BOUND.as_secs(),
            replica.error_log.display()
        ))
    })
}

/// Every replica has applied what the primary had written (MASTER_GTID_WAIT).
pub(super) fn caught_up(cluster: &Cluster) -> Result<(), ServerError> {
    let Some(primary) = cluster.primary() else { return Ok(()) };
    let pos = block_on(async {
        let mut c = connect(&primary.admin_target()).await?;
        let p: Option<String> =
            c.query_first("SELECT @@gtid_binlog_pos").await.map_err(|e| crate::target::short_error(&e))?;
        let _ = c.disconnect().await;
        Ok::<_, String>(p.unwrap_or_default())
    })
    .map_err(|e| failed(format!("{}: {e}", primary.describe())))?;
    if pos.is_empty() {
        return Ok(());
    }
    for r in cluster.replicas().filter(|r| r.state == crate::server::State::Running) {
        let waited = block_on(async {
            let mut c = connect(&r.admin_target()).await?;
            let w: Option<i64> = c
                .exec_first("SELECT MASTER_GTID_WAIT(?, ?)", (pos.clone(), CATCH_UP_BOUND))
                .await
                .map_err(|e| crate::target::short_error(&e))?;
            let _ = c.disconnect().await;
            Ok::<_, String>(w)
        })
        .map_err(|e| failed(format!("{}: {e}", r.describe())))?;
        if waited != Some(0) {
            return Err(failed(format!(
                "{} has not applied the primary's {pos} after {CATCH_UP_BOUND} s; see `sizeup cluster status`",
                r.describe()
            )));
        }
    }
    Ok(())
}
