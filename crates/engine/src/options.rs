//! The options of a run as the user gives them: on a command line (clap fills these
//! structs) or in a study file's `[options]` table (serde fills the same structs from
//! the same names). One definition, so a study names options exactly as `sizeup run`
//! does and both are validated by `request` alone.
//!
//! Raw values only: nothing here checks ranges or meaning (that is `request`'s job), and
//! nothing here talks to a server. sysbench's spellings (`--table_size`,
//! `--mysql-socket`, `--max-time`, `--skip_trx=on`) are aliases, so existing command
//! lines keep working.
// Doc comments here are clap's help text, printed as written: `[client]` is an
// option file's section and `p90[type]` an objective, not links.
#![allow(rustdoc::broken_intra_doc_links)]

use crate::error::Invalid;
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where the server is. With none of host, port or socket, sizeup uses managed instance N.
#[derive(Args, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct TargetArgs {
    #[arg(long, alias = "mysql-host", help_heading = "Target")]
    pub host: Option<String>,
    #[arg(long, alias = "mysql-port", help_heading = "Target")]
    pub port: Option<u16>,
    #[arg(long, alias = "mysql-socket", help_heading = "Target")]
    pub socket: Option<PathBuf>,
    #[arg(long, alias = "mysql-user", help_heading = "Target")]
    pub user: Option<String>,
    /// Password. Never printed or stored; better set MYSQL_PWD or put it in an option
    /// file (`password` under [client] in ~/.my.cnf), where other users cannot see it.
    // A value that starts with '-' is still the password: clap echoed it as an
    // unexpected argument.
    #[arg(long, alias = "mysql-password", help_heading = "Target", allow_hyphen_values = true)]
    #[serde(skip)]
    pub password: Option<String>,
    /// Database (default: sbtest for OLTP, tpcc for TPC-C); created when missing.
    #[arg(long, alias = "mysql-db", help_heading = "Target")]
    pub database: Option<String>,
    /// The server host's Prometheus node_exporter (http://HOST:9100/metrics), scraped
    /// every interval: its CPU, disks, memory and network beside the server's figures,
    /// and "what ran out" for a server on another host.
    #[arg(long, value_name = "URL", help_heading = "Target")]
    pub server_metrics: Option<String>,
    /// Managed instance to use when no host, port or socket is given anywhere.
    #[arg(long, default_value_t = 0, help_heading = "Target")]
    pub instance: u32,
    /// Read connection settings from this option file only ([client] and [sizeup]).
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub defaults_file: Option<PathBuf>,
    /// Read this option file before ~/.my.cnf.
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub defaults_extra_file: Option<PathBuf>,
    /// Read no option file.
    #[arg(long, help_heading = "Target")]
    pub no_defaults: bool,
    /// TLS as the mysql client means it: DISABLED, PREFERRED (default: TLS over TCP when
    /// the server offers it), REQUIRED, VERIFY_CA, VERIFY_IDENTITY. Never over a socket.
    #[arg(long, value_name = "MODE", help_heading = "Target")]
    pub ssl_mode: Option<String>,
    /// CA certificate (PEM) that signed the server's; alone it means --ssl-mode=VERIFY_CA.
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub ssl_ca: Option<PathBuf>,
    /// Client certificate (PEM), for users that REQUIRE X509.
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub ssl_cert: Option<PathBuf>,
    /// Client private key (PEM) for --ssl-cert.
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub ssl_key: Option<PathBuf>,
    /// The server's RSA public key (PEM), for caching_sha2_password / sha256_password
    /// logins over plain TCP.
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub server_public_key_path: Option<PathBuf>,
    /// Ask the server for its RSA public key when a password must cross plain TCP.
    #[arg(long, help_heading = "Target")]
    #[serde(default)]
    pub get_server_public_key: bool,
    /// sysbench's spelling: on (TLS, certificate unchecked), off, or an --ssl-mode value.
    #[arg(long, value_name = "on|off|MODE", help_heading = "Target")]
    pub mysql_ssl: Option<String>,
    /// sysbench's spelling of --ssl-ca.
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub mysql_ssl_ca: Option<PathBuf>,
    /// sysbench's spelling of --ssl-cert.
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub mysql_ssl_cert: Option<PathBuf>,
    /// sysbench's spelling of --ssl-key.
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub mysql_ssl_key: Option<PathBuf>,
    /// Agents (`sizeup agent --listen`) that drive the load from their hosts instead of
    /// this process: HOST:PORT, comma-separated. The server is named as they reach it.
    #[arg(long, value_name = "HOST:PORT,...", value_delimiter = ',', help_heading = "Agents")]
    #[serde(default)]
    pub agents: Vec<String>,
    /// Hosts to start `sizeup agent` on over OpenSSH (USER@HOST, comma-separated),
    /// stopped afterwards; `SIZEUP_SSH_COMMAND` replaces `ssh` (e.g. `ssh -F FILE`).
    #[arg(long, value_name = "USER@HOST,...", value_delimiter = ',', help_heading = "Agents")]
    #[serde(default)]
    pub agents_ssh: Vec<String>,
    /// The token the agents were started with (better: SIZEUP_AGENT_TOKEN). Never
    /// printed or stored.
    #[arg(long, env = "SIZEUP_AGENT_TOKEN", hide_env_values = true, value_name = "TOKEN", help_heading = "Agents")]
    #[serde(skip)]
    pub token: Option<String>,
    /// The CA that signed the agents' --tls-cert: the links to them are TLS (required
    /// for an agent that is not on loopback).
    #[arg(long, value_name = "FILE", help_heading = "Agents")]
    pub agent_ca: Option<PathBuf>,
    /// A client certificate and key for agents started with --client-ca.
    #[arg(long, value_name = "FILE", help_heading = "Agents")]
    pub agent_cert: Option<PathBuf>,
    #[arg(long, value_name = "FILE", help_heading = "Agents")]
    pub agent_key: Option<PathBuf>,
    /// Serve the live figures (throughput, latency, errors, the server's status, each
    /// agent's CPU and lag) as OpenMetrics on ADDRESS:PORT/metrics while this runs.
    #[arg(long, value_name = "ADDR:PORT", help_heading = "Live metrics")]
    pub metrics_addr: Option<String>,
}

impl TargetArgs {
    /// The TLS and login options as plain values, for `target::Tls::from_args`.
    pub fn tls_args(&self) -> crate::target::TlsArgs {
        crate::target::TlsArgs {
            ssl_mode: self.ssl_mode.clone(),
            mysql_ssl: self.mysql_ssl.clone(),
            ssl_ca: self.ssl_ca.clone(),
            ssl_cert: self.ssl_cert.clone(),
            ssl_key: self.ssl_key.clone(),
            mysql_ssl_ca: self.mysql_ssl_ca.clone(),
            mysql_ssl_cert: self.mysql_ssl_cert.clone(),
            mysql_ssl_key: self.mysql_ssl_key.clone(),
            server_public_key_path: self.server_public_key_path.clone(),
            get_server_public_key: self.get_server_public_key,
        }
    }

    /// True when the user named a server; otherwise the managed instance is used.
    pub fn names_a_server(&self) -> bool {
        self.host.is_some() || self.port.is_some() || self.socket.is_some()
    }
}

/// sysbench's oltp_common.lua options (same names, same defaults).
#[derive(Args, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct OltpArgs {
    #[arg(long, alias = "oltp-tables-count", default_value_t = 1, help_heading = "OLTP")]
    pub tables: u32,
    #[arg(long, alias = "table_size", alias = "oltp-table-size", default_value_t = 10_000, help_heading = "OLTP")]
    pub table_size: u32,
    #[arg(long, alias = "range_size", default_value_t = 100, help_heading = "OLTP")]
    pub range_size: u32,
    #[arg(long, alias = "point_selects", default_value_t = 10, help_heading = "OLTP")]
    pub point_selects: u32,
    #[arg(long, alias = "simple_ranges", default_value_t = 1, help_heading = "OLTP")]
    pub simple_ranges: u32,
    #[arg(long, alias = "sum_ranges", default_value_t = 1, help_heading = "OLTP")]
    pub sum_ranges: u32,
    #[arg(long, alias = "order_ranges", default_value_t = 1, help_heading = "OLTP")]
    pub order_ranges: u32,
    #[arg(long, alias = "distinct_ranges", default_value_t = 1, help_heading = "OLTP")]
    pub distinct_ranges: u32,
    #[arg(long, alias = "index_updates", default_value_t = 1, help_heading = "OLTP")]
    pub index_updates: u32,
    #[arg(long, alias = "non_index_updates", default_value_t = 1, help_heading = "OLTP")]
    pub non_index_updates: u32,
    #[arg(long, alias = "delete_inserts", default_value_t = 1, help_heading = "OLTP")]
    pub delete_inserts: u32,
    #[arg(long, alias = "range_selects", value_parser = parse_switch, num_args = 0..=1, require_equals = true, default_value = "on", default_missing_value = "on", help_heading = "OLTP")]
    pub range_selects: bool,
    #[arg(long, alias = "auto_inc", value_parser = parse_switch, num_args = 0..=1, require_equals = true, default_value = "on", default_missing_value = "on", help_heading = "OLTP")]
    pub auto_inc: bool,
    #[arg(long, alias = "skip_trx", value_parser = parse_switch, num_args = 0..=1, require_equals = true, default_value = "off", default_missing_value = "on", help_heading = "OLTP")]
    pub skip_trx: bool,
    #[arg(long, value_parser = parse_switch, num_args = 0..=1, require_equals = true, default_value = "off", default_missing_value = "on", help_heading = "OLTP")]
    pub secondary: bool,
    #[arg(long, alias = "create_secondary", value_parser = parse_switch, num_args = 0..=1, require_equals = true, default_value = "on", default_missing_value = "on", help_heading = "OLTP")]
    pub create_secondary: bool,
    #[arg(
        long,
        alias = "mysql_storage_engine",
        alias = "mysql-table-engine",
        default_value = "innodb",
        help_heading = "OLTP"
    )]
    pub mysql_storage_engine: String,
    /// oltp_complex, and a replay: leave out the writes (sysbench 0.4's --oltp-read-only).
    #[arg(long, alias = "oltp-read-only", value_parser = parse_switch, num_args = 0..=1, require_equals = true, default_value = "off", default_missing_value = "on", help_heading = "OLTP")]
    pub read_only: bool,
    /// uniform, gaussian, special, pareto or zipfian.
    #[arg(
        long,
        alias = "rand_type",
        alias = "oltp-dist-type",
        default_value = "special",
        help_heading = "Random numbers"
    )]
    pub rand_type: String,
    #[arg(
        long,
        alias = "rand_spec_iter",
        alias = "oltp-dist-iter",
        default_value_t = 12,
        help_heading = "Random numbers"
    )]
    pub rand_spec_iter: u32,
    #[arg(
        long,
        alias = "rand_spec_pct",
        alias = "oltp-dist-pct",
        default_value_t = 1,
        help_heading = "Random numbers"
    )]
    pub rand_spec_pct: u32,
    #[arg(
        long,
        alias = "rand_spec_res",
        alias = "oltp-dist-res",
        default_value_t = 75,
        help_heading = "Random numbers"
    )]
    pub rand_spec_res: u32,
    #[arg(long, alias = "rand_pareto_h", default_value_t = 0.2, help_heading = "Random numbers")]
    pub rand_pareto_h: f64,
    #[arg(long, alias = "rand_zipfian_exp", default_value_t = 0.8, help_heading = "Random numbers")]
    pub rand_zipfian_exp: f64,
    /// Seed for the random streams; 0 takes one from the clock.
    #[arg(long, alias = "rand_seed", default_value_t = 0, help_heading = "Random numbers")]
    pub rand_seed: u64,
}

/// TPC-C's options.
#[derive(Args, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct TpccArgs {
    /// Warehouses to load (prepare); at run time the database says how many it holds.
    #[arg(long, help_heading = "TPC-C")]
    pub warehouses: Option<u32>,
    /// Deck of transaction types: new_order,payment,order_status,delivery,stock_level.
    #[arg(long, default_value = "45,43,4,4,4", help_heading = "TPC-C")]
    pub mix: String,
    /// User i of U works on warehouses i, i+U, i+2U, ... (default: one random home warehouse each).
    #[arg(long, help_heading = "TPC-C")]
    pub all_warehouses: bool,
    /// `spec`: the spec's keying and think times (clause 5.2.5); `none`: back to back.
    #[arg(long, default_value = "none", value_parser = ["none", "spec"], help_heading = "TPC-C")]
    pub think_time: String,
}

/// What the workloads themselves take: each workload reads its own group.
#[derive(Args, Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub oltp: OltpArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub tpcc: TpccArgs,
    /// sysbench's prepared-statement mode: `auto` (prepared statements) or `disable`
    /// (every statement sent as text with its values written in).
    #[arg(long, default_value = "auto", value_parser = ["auto", "disable"])]
    #[serde(rename = "db-ps-mode")]
    pub db_ps_mode: String,
    /// A Lua script's own options by sysbench name, as given (`cli` takes them out of
    /// the command line; a study file's `[script_options]`). Validated against the
    /// script's `sysbench.cmdline.options` when the workload is built.
    #[arg(skip)]
    #[serde(skip)]
    pub script_options: BTreeMap<String, String>,
    /// How a capture is replayed: set by `sizeup replay`, not given to `run`.
    #[arg(skip)]
    #[serde(skip)]
    pub replay: ReplayArgs,
}

/// How `sizeup replay` plays a capture back.
#[derive(Clone, Default, PartialEq)]
pub struct ReplayArgs {
    /// The captured pace times this (0: as captured).
    pub speed: f64,
    /// Only the statements that change no data.
    pub read_only: bool,
    /// The user said the target holds a copy the replay may write to
    /// (`--write-foreign-tables`).
    pub writes_allowed: bool,
    /// The capture as read (with `read_only`'s statements left out) by the command that
    /// replays it at several speeds: read and fingerprinted once, not once a speed.
    pub schedule: Option<std::sync::Arc<sizeup_model::capture::schedule::Schedule>>,
}

impl std::fmt::Debug for ReplayArgs {
    // The schedule is the whole capture: its size, not its statements.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayArgs")
            .field("speed", &self.speed)
            .field("read_only", &self.read_only)
            .field("writes_allowed", &self.writes_allowed)
            .field("statements", &self.schedule.as_ref().map(|s| s.statements))
            .finish()
    }
}

impl Default for WorkloadArgs {
    fn default() -> Self {
        RunOptions::default().workload
    }
}

/// How each connection paces itself and what it retries (run, sweep and scale).
#[derive(Args, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SessionArgs {
    /// Fixed pause in milliseconds after each transaction, per connection.
    #[arg(long, value_name = "MS", default_value_t = 0.0, allow_negative_numbers = true)]
    pub delay: f64,
    /// OS threads that drive the connections (default, closed loop: 1 per connection up
    /// to 1 per CPU while connections are at most 2 per CPU, else 1 per 4 CPUs, the
    /// cheapest under load, but at least 1 per 16 connections up to 1 per CPU; with
    /// --rate: 1 per connection, the most faithful latency).
    #[arg(long, allow_negative_numbers = true, value_parser = parse_count_u32)]
    pub client_threads: Option<u32>,
    /// Server error codes that are counted and retried instead of stopping the run:
    /// a comma-separated list, `all` or `none` (sysbench's option and default).
    #[arg(long, alias = "ignore-errors", default_value = "1213,1020,1205")]
    pub mysql_ignore_errors: String,
}

/// Power inputs for hosts without RAPL energy counters.
#[derive(Args, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PowerArgs {
    /// Model the system's watts as linear in CPU utilisation: idle=W,max=W.
    #[arg(long, value_name = "idle=W,max=W", help_heading = "Power")]
    pub power_model: Option<String>,
    /// The system's power draw as a constant (a wall-meter reading).
    #[arg(long, value_name = "W", help_heading = "Power")]
    pub watts: Option<f64>,
}

/// Settings of managed instances (`server start`, and a study's `[server]`).
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// InnoDB buffer pool per instance.
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub buffer_pool: String,
    /// InnoDB redo log size per instance (allocated on disk at start).
    #[arg(long, value_name = "SIZE", default_value = "512M")]
    pub log_file_size: String,
    #[arg(long, value_name = "0|1|2", default_value_t = 2)]
    pub flush_log_at_trx_commit: u8,
    #[arg(long, default_value_t = 2000)]
    pub max_connections: u32,
    /// Any other server option, repeatable: --set innodb_io_capacity=2000
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// The address the instances listen on for TCP (default 127.0.0.1): 0.0.0.0 or
    /// this host's address, for agents or clients on other hosts to reach them.
    #[arg(long, value_name = "IP")]
    pub bind_address: Option<String>,
}

impl TargetArgs {
    /// These settings (login, database, TLS) for the server at `place`: `host:port`,
    /// `host` or a socket path.
    pub fn at(&self, place: &str) -> TargetArgs {
        let mut t = TargetArgs { host: None, port: None, socket: None, ..self.clone() };
        if place.starts_with('/') {
            t.socket = Some(PathBuf::from(place));
            return t;
        }
        match place.rsplit_once(':') {
            Some((host, port)) if port.parse::<u16>().is_ok() => {
                t.host = Some(host.to_string());
                t.port = port.parse().ok();
            }
            _ => t.host = Some(place.to_string()),
        }
        t
    }
}

/// Everything `sizeup run` takes besides the workload's name.
#[derive(Args, Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct RunOptions {
    #[command(flatten)]
    #[serde(flatten)]
    pub target: TargetArgs,
    /// A server (host:port or a socket path), repeatable, instead of --host, --port
    /// and --socket: with several, connection i goes to the i-th mod N (round robin per
    /// connection, as a connection pool or a proxy in round-robin mode deals them); the
    /// data is checked on the first.
    #[arg(long = "target", value_name = "HOST:PORT", help_heading = "Target")]
    #[serde(rename = "target", default)]
    pub targets: Vec<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub workload: WorkloadArgs,
    /// Concurrent connections.
    #[arg(long, alias = "num-threads", default_value_t = 1, allow_negative_numbers = true, value_parser = parse_count_u32)]
    pub threads: u32,
    /// TPC-C virtual users (terminals), one connection each; the same as --threads.
    #[arg(long, help_heading = "TPC-C", allow_negative_numbers = true, value_parser = parse_count_u32)]
    pub users: Option<u32>,
    /// Seconds to run (0: no limit; then --events must be set).
    #[arg(long, alias = "max-time", default_value_t = 10.0, allow_negative_numbers = true)]
    pub time: f64,
    /// Stop after this many transactions (0: no limit).
    #[arg(long, alias = "max-requests", default_value_t = 0, allow_negative_numbers = true, value_parser = parse_count)]
    pub events: u64,
    /// Seconds at the start left out of the summary (rounded up to whole intervals).
    #[arg(long, alias = "warmup-time", default_value_t = 0.0, allow_negative_numbers = true)]
    pub warmup: f64,
    /// Open-loop arrival rate in transactions per second (0: as fast as possible).
    /// Latency is then measured from each transaction's intended start.
    #[arg(long, alias = "tx-rate", default_value_t = 0.0, allow_negative_numbers = true)]
    pub rate: f64,
    /// Seconds between interval lines (0: no lines; intervals are still stored each second).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub report_interval: f64,
    /// Seconds a lost server (refused or dropped connections) has to come back before
    /// the run ends as failed.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::exec::DEFAULT_SERVER_LOST_TIMEOUT, allow_negative_numbers = true)]
    #[serde(default = "default_server_lost_timeout")]
    pub server_lost_timeout: f64,
    /// Seconds one transaction may wait for the server before the run ends as failed
    /// (a stalled server); connects and logins time out after 10 s.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::exec::DEFAULT_STATEMENT_TIMEOUT, allow_negative_numbers = true)]
    #[serde(default = "default_statement_timeout")]
    pub statement_timeout: f64,
    #[command(flatten)]
    #[serde(flatten)]
    pub session: SessionArgs,
    /// How the tables are loaded when the run prepares them itself (missing tables):
    /// as `sizeup prepare --load-method`.
    #[arg(long, value_enum, default_value_t)]
    #[serde(default)]
    pub load_method: LoadMethod,
    /// Let a workload that changes rows (every built-in but oltp_read_only and
    /// oltp_point_select, and tpcc) write to tables sizeup did not create: sysbench's, or
    /// anyone's. Without it such a run is refused, since it updates, deletes and inserts
    /// rows there.
    #[arg(long)]
    #[serde(default)]
    pub write_foreign_tables: bool,
    /// Print a latency histogram after the summary (sysbench's --histogram).
    #[arg(long, value_parser = parse_switch, num_args = 0..=1, require_equals = true, default_value = "off", default_missing_value = "on")]
    pub histogram: bool,
    /// Latency percentile shown in the interval lines (1-100).
    #[arg(long, default_value_t = 95.0, allow_negative_numbers = true)]
    pub percentile: f64,
    /// Accepted for sysbench command lines; only `mysql` (any MySQL-protocol server).
    #[arg(long, default_value = "mysql", hide = true)]
    pub db_driver: String,
    /// sysbench's: seconds after --time to wait for transactions in flight before
    /// giving up on them, or `off` (accepted; sizeup's own bound applies).
    #[arg(long, default_value = "off", hide = true)]
    pub forced_shutdown: String,
    /// sysbench's verbosity 0-5: below 3 prints no interval lines or summary, only errors.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=5))]
    pub verbosity: u8,
    /// Also write the whole result to this JSON file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    pub power: PowerArgs,
}

/// The run options a study sets itself for every step (levels, step_time, warmup,
/// sample_interval), so a study file may not.
pub const STUDY_OWNED: &[&str] = &["threads", "users", "time", "warmup", "events", "report-interval", "json"];

/// The clap form of the run options, to look names up by.
fn run_command() -> clap::Command {
    let mut cmd = RunOptions::augment_args(clap::Command::new("run").no_binary_name(true).disable_help_flag(true));
    // Building settles each argument's action (a bare flag, or one taking a value).
    cmd.build();
    cmd
}

fn default_server_lost_timeout() -> f64 {
    crate::exec::DEFAULT_SERVER_LOST_TIMEOUT
}

fn default_statement_timeout() -> f64 {
    crate::exec::DEFAULT_STATEMENT_TIMEOUT
}

impl Default for RunOptions {
    /// The defaults `sizeup run` has: clap's, so there is one place that says them.
    fn default() -> Self {
        use clap::FromArgMatches;
        let matches = run_command().try_get_matches_from(Vec::<String>::new()).expect("no argument is required");
        RunOptions::from_arg_matches(&matches).expect("defaults are valid")
    }
}

impl RunOptions {
    /// Run options from a study's `[options]` table: names as `sizeup run` spells them
    /// (`table-size`, `table_size`, `mysql-socket`, ...), values as TOML gives them
    /// (numbers, booleans or text, `on`/`off` for switches). The study-owned options
    /// and a password are refused.
    pub fn from_map(map: &BTreeMap<String, Value>) -> Result<RunOptions, Invalid> {
        let cmd = run_command();
        let mut doc = serde_json::to_value(RunOptions::default()).expect("serialisable");
        let fields = doc.as_object_mut().expect("an object");
        for (key, value) in map {
            let name = key.replace('_', "-");
            if name == "password" || name == "mysql-password" {
                return Err(Invalid::Value("a password does not belong in a study: give it with MYSQL_PWD".into()));
            }
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_long() == Some(name.as_str()) || a.get_all_aliases().is_some_and(|al| al.contains(&name.as_str())))
                .ok_or_else(|| Invalid::Value(format!("unknown option '{key}': options are `sizeup run` options, e.g. tables, table-size, warehouses, think-time")))?;
            let long = arg.get_long().expect("options are long");
            if STUDY_OWNED.contains(&long) {
                return Err(Invalid::Value(format!(
                    "option '{key}' is set by the study itself (levels, step_time, warmup, sample_interval)"
                )));
            }
            let v = coerce(arg, value).map_err(|e| Invalid::Value(format!("option '{key}': {e}")))?;
            // serde's message names no field ("integer `-5`, expected u32"): try the
            // value alone over the defaults to say whose it is.
            let mut alone = serde_json::to_value(RunOptions::default()).expect("serialisable");
            alone.as_object_mut().expect("an object").insert(long.to_string(), v.clone());
            serde_json::from_value::<RunOptions>(alone).map_err(|e| Invalid::Value(format!("option '{key}': {e}")))?;
            fields.insert(long.to_string(), v);
        }
        serde_json::from_value(doc).map_err(|e| Invalid::Value(format!("options: {e}")))
    }

    /// The options that differ from the defaults, by `sizeup run` name: what a study
    /// stores for a `sweep` or `scale` command line (never the password).
    pub fn changed(&self) -> BTreeMap<String, Value> {
        let ours = serde_json::to_value(self).expect("serialisable");
        let defaults = serde_json::to_value(RunOptions::default()).expect("serialisable");
        let mut out = BTreeMap::new();
        for (k, v) in ours.as_object().expect("an object") {
            if !v.is_null() && defaults.get(k) != Some(v) && !STUDY_OWNED.contains(&k.as_str()) {
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }
}

/// A study file's value in the type the option takes: text where the option takes
/// text, on/off for switches, numbers written as text read as numbers.
fn coerce(arg: &clap::Arg, value: &Value) -> Result<Value, Invalid> {
    use clap::builder::ValueParser;
    let ty = arg.get_value_parser().type_id();
    let switch = ty == ValueParser::bool().type_id();
    // A choice (--load-method insert) is text too.
    let choice = !switch && !arg.get_possible_values().is_empty();
    let text = ty == ValueParser::string().type_id() || ty == ValueParser::path_buf().type_id() || choice;
    Ok(match value {
        Value::Number(n) if text => Value::String(n.to_string()),
        Value::String(s) if switch => Value::Bool(parse_switch(s)?),
        Value::String(s) if !text => serde_json::from_str::<serde_json::Number>(s.trim())
            .map(Value::Number)
            .map_err(|_| Invalid::Value(format!("'{s}' is not a number")))?,
        other => other.clone(),
    })
}

/// A count (of transactions): a whole number, 0 or more.
pub fn parse_count(s: &str) -> Result<u64, Invalid> {
    s.trim().parse::<u64>().map_err(|_| Invalid::Value(format!("'{s}' is not a count: give a whole number, 0 or more")))
}

/// A count given on the command line (threads, connections): a whole number, 0 or more,
/// said in those words rather than as the integer type's range
/// (a_negative_count_is_said_plainly: `--threads -3` gave "-3 is not in 0..=4294967295").
pub fn parse_count_u32(v: &str) -> Result<u32, Invalid> {
    match v.trim().parse::<i64>() {
        Ok(n) if n < 0 => Err(Invalid::Value(format!("{n} is below 0: give a whole number, 0 or more"))),
        Ok(n) => u32::try_from(n)
            .map_err(|_| Invalid::Value(format!("{n} is more than any server takes ({} at most)", u32::MAX))),
        Err(_) => Err(Invalid::Value(format!("'{v}' is not a whole number"))),
    }
}

/// sysbench's boolean spellings.
pub fn parse_switch(s: &str) -> Result<bool, Invalid> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(Invalid::Value(format!("'{s}' is not on/off"))),
    }
}

/// `sizeup cluster start`: what kind of cluster, its servers and its lab.
#[derive(Args, Debug, Clone)]
pub struct ClusterStartArgs {
    /// A Galera cluster (wsrep, galera-4): every node takes reads and writes.
    #[arg(long)]
    pub galera: bool,
    /// How many Galera nodes (with --galera).
    #[arg(long)]
    pub nodes: Option<u32>,
    /// One primary and this many replicas (MariaDB GTID replication).
    #[arg(long, value_name = "N")]
    pub replicas: Option<u32>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// SQL port of node 0 (node i: base + i; group, IST and SST ports follow in blocks
    /// of 32). Default: the first free range from 14306.
    #[arg(long)]
    pub base_port: Option<u16>,
    #[command(flatten)]
    pub lab: LabArgs,
}

/// Miniature servers: any of these puts each node in its own network namespace.
#[derive(Args, Debug, Clone, Default)]
pub struct LabArgs {
    /// Lab: a CPU quota per node, in cores (0.4 = 40 ms of CPU per 100 ms).
    #[arg(long, value_name = "CORES", help_heading = "Lab")]
    pub node_cpus: Option<f64>,
    /// Lab: netem delay on each end of a node's link, per direction (0.2ms, 200us).
    #[arg(long, value_name = "TIME", help_heading = "Lab")]
    pub link_delay: Option<String>,
    /// Lab: jitter added to --link-delay (0.05ms).
    #[arg(long, value_name = "TIME", help_heading = "Lab")]
    pub link_jitter: Option<String>,
    /// Lab: each node in its own network namespace, even without quota or delay.
    #[arg(long, help_heading = "Lab")]
    pub lab: bool,
    /// Lab: cores the client needs beside the nodes, for the quota check (measured, or 1).
    #[arg(long, value_name = "CORES", default_value_t = 1.0, help_heading = "Lab")]
    pub client_cpus: f64,
}

/// How loaders send rows (`--load-method`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadMethod {
    /// Array binding where the server offers it, else LOAD DATA LOCAL where its greeting
    /// offers it and its local_infile is not OFF, else multi-row INSERTs (one note says why).
    #[default]
    Auto,
    /// MariaDB's COM_STMT_BULK_EXECUTE: one prepared INSERT run over every row sent.
    ArrayBinding,
    /// LOAD DATA LOCAL INFILE streams.
    LoadData,
    /// Multi-row INSERT statements of 1,000 rows, as sysbench loads.
    Insert,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// a_negative_count_is_said_plainly: `--threads -3` named the integer type's range.
    #[test]
    fn a_negative_count_is_said_plainly() {
        assert_eq!(
            parse_count_u32("-3").unwrap_err(),
            Invalid::Value("-3 is below 0: give a whole number, 0 or more".into())
        );
        assert!(matches!(parse_count_u32("x"), Err(Invalid::Value(m)) if m.contains("not a whole number")));
        assert_eq!(parse_count_u32("16").unwrap(), 16);
        assert!(matches!(parse_count_u32("5000000000"), Err(Invalid::Value(m)) if !m.contains("0..=")));
    }

    #[test]
    fn every_run_option_name_and_alias_reads_from_a_study() {
        // The command line and study files must accept the same names with the same
        // types: feed each name its default value and expect the defaults back.
        let defaults = serde_json::to_value(RunOptions::default()).unwrap();
        let cmd = run_command();
        let mut checked = 0;
        for arg in cmd.get_arguments() {
            let long = arg.get_long().unwrap();
            // Secrets are never stored, so never read from a study either.
            if STUDY_OWNED.contains(&long) || long == "password" || long == "token" {
                continue;
            }
            let value = defaults.get(long).unwrap_or_else(|| panic!("--{long} has no serde field"));
            let names = std::iter::once(long).chain(arg.get_all_aliases().unwrap_or_default());
            for name in names {
                let map = [(name.to_string(), value.clone())].into();
                let o = RunOptions::from_map(&map).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(o, RunOptions::default(), "{name}");
                checked += 1;
            }
        }
        assert!(checked > 40, "{checked}");
    }

    #[test]
    fn study_values_take_the_option_types() {
        let map: BTreeMap<String, Value> = [
            ("table_size".to_string(), Value::from("5000")),
            ("skip-trx".into(), Value::from("on")),
            ("database".into(), Value::from(123)),
            ("mysql-socket".into(), Value::from("/tmp/s")),
            ("warehouses".into(), Value::from(8)),
            ("all_warehouses".into(), Value::from(true)),
        ]
        .into();
        let o = RunOptions::from_map(&map).unwrap();
        assert_eq!(o.workload.oltp.table_size, 5000);
        assert!(o.workload.oltp.skip_trx && o.workload.tpcc.all_warehouses);
        assert_eq!(o.target.database.as_deref(), Some("123"));
        assert_eq!(o.target.socket, Some(PathBuf::from("/tmp/s")));
        assert_eq!(o.workload.tpcc.warehouses, Some(8));
        let e = |k: &str, v: Value| RunOptions::from_map(&[(k.to_string(), v)].into()).unwrap_err();
        assert!(matches!(&e("tabels", 1.into()), Invalid::Value(m) if m.contains("unknown option 'tabels'")));
        assert!(matches!(&e("threads", 4.into()), Invalid::Value(m) if m.contains("set by the study")));
        assert!(matches!(&e("password", "x".into()), Invalid::Value(m) if m.contains("MYSQL_PWD")));
        assert!(matches!(&e("skip_trx", "maybe".into()), Invalid::Value(m) if m.contains("on/off")));
        assert!(matches!(&e("tables", "many".into()), Invalid::Value(m) if m.contains("not a number")));
        // study_option_out_of_range_names_it: "options: invalid value: integer `-5`".
        let neg = e("table-size", (-5).into());
        assert!(
            matches!(&neg, Invalid::Value(m) if m.starts_with("option 'table-size': "))
                && matches!(&neg, Invalid::Value(m) if m.contains("-5")),
            "{neg}"
        );
    }

    #[test]
    fn changed_options_round_trip_through_a_study() {
        let mut o = RunOptions::default();
        o.workload.oltp.table_size = 5000;
        o.workload.oltp.skip_trx = true;
        o.workload.tpcc.all_warehouses = true;
        o.target.socket = Some("/tmp/x".into());
        o.threads = 9; // study-owned: never stored
        let map = o.changed();
        assert_eq!(map.keys().collect::<Vec<_>>(), ["all-warehouses", "skip-trx", "socket", "table-size"]);
        let back = RunOptions::from_map(&map).unwrap();
        assert_eq!(back, RunOptions { threads: 1, ..o });
    }
}
