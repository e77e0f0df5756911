//! The server a command talks to: where it is, who to log in as, which database.
//!
//! A password may be held here to log in, but it is never printed, serialised or
//! stored: `describe` and the `Serialize` form leave it out.

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Clone, Serialize)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub socket: Option<PathBuf>,
    pub user: String,
    #[serde(skip)]
    pub password: Option<String>,
    pub database: String,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The server could not be reached or refused the login (`code`: the server's
    /// error code when it answered with one).
    #[error("cannot connect to {target}: {reason}")]
    Unreachable { target: String, reason: String, code: Option<u16> },
    /// A statement needed to set up the database failed.
    #[error("{what} on {target} failed: {reason}")]
    Setup { what: String, target: String, reason: String },
}

impl ConnectError {
    /// The server is there but the database is not (error 1049): a missing prepare.
    pub fn is_unknown_database(&self) -> bool {
        matches!(self, ConnectError::Unreachable { code: Some(1049), .. })
    }
}

impl Target {
    /// Where this target is, for messages and results: never the password.
    pub fn describe(&self) -> String {
        let place = match &self.socket {
            Some(s) => format!("socket {}", s.display()),
            None => format!("{}:{}", self.host, self.port),
        };
        format!("{place} as {}", self.user)
    }

    pub fn opts(&self, with_database: bool) -> Opts {
        let mut b = OptsBuilder::default()
            .user(Some(self.user.clone()))
            .pass(self.password.clone())
            .prefer_socket(false)
            // Every table x statement of a workload stays prepared on each connection.
            .stmt_cache_size(4096usize)
            .tcp_nodelay(true);
        b = match &self.socket {
            Some(s) => b.socket(Some(s.to_string_lossy().into_owned())).ip_or_hostname("localhost"),
            None => b.ip_or_hostname(self.host.clone()).tcp_port(self.port),
        };
        if with_database {
            b = b.db_name(Some(self.database.clone()));
        }
        b.into()
    }

    /// Options for the benchmark client (`crate::client`), which runs the measured path.
    pub fn client_options(&self) -> crate::client::ConnectOptions {
        crate::client::ConnectOptions {
            socket: self.socket.clone(),
            host: self.host.clone(),
            port: self.port,
            user: self.user.clone(),
            password: self.password.clone(),
            database: Some(self.database.clone()),
        }
    }

    fn unreachable(&self, e: mysql_async::Error) -> ConnectError {
        let code = match &e {
            mysql_async::Error::Server(s) => Some(s.code),
            _ => None,
        };
        ConnectError::Unreachable { target: self.describe(), reason: short_error(&e), code }
    }

    /// Connects to the target's database.
    pub async fn connect(&self) -> Result<Conn, ConnectError> {
        Conn::new(self.opts(true)).await.map_err(|e| self.unreachable(e))
    }

    /// Connects without selecting a database (to create it, or to read server facts).
    pub async fn connect_server(&self) -> Result<Conn, ConnectError> {
        Conn::new(self.opts(false)).await.map_err(|e| self.unreachable(e))
    }

    /// Creates the target database when missing (as sysbench users expect `sbtest`).
    pub async fn ensure_database(&self) -> Result<(), ConnectError> {
        let mut conn = self.connect_server().await?;
        let sql = format!("CREATE DATABASE IF NOT EXISTS {}", quote_ident(&self.database));
        conn.query_drop(sql).await.map_err(|e| ConnectError::Setup {
            what: format!("creating database {}", self.database),
            target: self.describe(),
            reason: short_error(&e),
        })?;
        let _ = conn.disconnect().await;
        Ok(())
    }
}

/// Backquotes an identifier for MySQL.
pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A one-line form of a driver error: the server's own message when there is one.
pub fn short_error(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(s) => format!("{} (error {})", s.message, s.code),
        mysql_async::Error::Io(io) => io.to_string().replace("Input/output error: ", ""),
        other => other.to_string(),
    }
}

/// Server facts recorded with every result: version and the variables that matter for
/// an OLTP measurement.
pub async fn server_facts(conn: &mut Conn) -> Result<serde_json::Value, mysql_async::Error> {
    const VARS: &[&str] = &[
        "version",
        "version_comment",
        "innodb_buffer_pool_size",
        "innodb_log_file_size",
        "innodb_flush_log_at_trx_commit",
        "innodb_flush_method",
        "innodb_io_capacity",
        "sync_binlog",
        "log_bin",
        "max_connections",
        "thread_handling",
        "transaction_isolation",
        "tx_isolation",
        "performance_schema",
    ];
    let list = VARS.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(",");
    let rows: Vec<(String, String)> = conn
        .query(format!("SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE LOWER(VARIABLE_NAME) IN ({list})"))
        .await?;
    let mut map = serde_json::Map::new();
    for (k, v) in rows {
        map.insert(k, serde_json::Value::String(v));
    }
    Ok(serde_json::Value::Object(map))
}
