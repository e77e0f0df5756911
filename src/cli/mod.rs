//! The command line as the user types it. Raw arguments only: `plan.rs` validates them
//! once into what the rest of the program trusts. sysbench's spellings (`--table_size`,
//! `--mysql-socket`, `--max-time`, `--skip_trx=on`) are accepted as aliases so existing
//! command lines keep working.

pub mod plan;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "sizeup",
    version,
    about = "Measure how much OLTP work a MySQL-family server carries, and size for it"
)]
pub struct Cli {
    /// State directory: managed instances and the default results database.
    #[arg(long, global = true, env = "SIZEUP_HOME", value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Results database (SQLite). Default: results.db in the state directory ($SIZEUP_HOME).
    #[arg(long, global = true, value_name = "FILE")]
    pub results: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Managed private server instances (the default target).
    #[command(subcommand)]
    Server(ServerCommand),
    /// Create and load a workload's tables.
    Prepare(PrepareArgs),
    /// Run a workload and measure it.
    Run(RunArgs),
    /// Drop the tables sizeup created for a workload (and nothing else).
    Cleanup(CleanupArgs),
    /// Check a workload's data: for tpcc, the consistency conditions of clause 3.3.2.
    Check(CleanupArgs),
    /// Read a workload's tables and k indexes into the buffer pool (sysbench's prewarm).
    Prewarm(PrewarmArgs),
    /// Stored runs.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Raise the load level by level (threads, or users for tpcc) until a stop
    /// condition; each step is a stored run, the whole a study.
    Sweep(SweepArgs),
    /// 1..N server instances at once, one client group each: total and per-instance
    /// throughput, and the peak instance count.
    Scale(ScaleArgs),
    /// Study files, and stored studies.
    #[command(subcommand)]
    Study(StudyCommand),
    /// One self-contained HTML file with the charts and tables of runs and studies.
    Report(ReportArgs),
    /// Two runs or two studies side by side, with the significance of each difference.
    Compare(CompareArgs),
    /// Scalability models: fit the Universal Scalability Law to measured points.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Sizing answers from measured studies: instances per server, servers needed for a
    /// target, which configurations meet a requirement.
    Size(SizeArgs),
    /// A short study on the managed default instance: prepare, then oltp_read_write at
    /// 1, 2, 4 and 8 threads, with the peak marked.
    Demo(DemoArgs),
}

#[derive(Subcommand, Debug)]
pub enum ServerCommand {
    /// Initialise (if needed) and start managed instances 0..N.
    Start(ServerStartArgs),
    /// Stop managed instances.
    Stop(ServerStopArgs),
    /// Show each managed instance: state, socket, port, user.
    Status {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug, Clone)]
pub struct ServerStartArgs {
    /// How many instances (0..N-1) should be running.
    #[arg(long, default_value_t = 1)]
    pub instances: u32,
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
    /// Where instance directories go (default: the state directory).
    #[arg(long, value_name = "DIR")]
    pub datadir_root: Option<PathBuf>,
    /// Port of instance 0; instance i listens on base + i (default: first free from 13306).
    #[arg(long)]
    pub base_port: Option<u16>,
}

#[derive(Args, Debug)]
pub struct ServerStopArgs {
    /// Stop only this instance.
    #[arg(long)]
    pub instance: Option<u32>,
    /// Also delete the instances' directories and forget them.
    #[arg(long)]
    pub purge: bool,
}

/// Where the server is. With none of these, sizeup uses managed instance 0.
#[derive(Args, Debug, Clone, Default, serde::Serialize)]
pub struct TargetArgs {
    #[arg(long, alias = "mysql-host", help_heading = "Target")]
    pub host: Option<String>,
    #[arg(long, alias = "mysql-port", help_heading = "Target")]
    pub port: Option<u16>,
    #[arg(long, alias = "mysql-socket", help_heading = "Target")]
    pub socket: Option<PathBuf>,
    #[arg(long, alias = "mysql-user", help_heading = "Target")]
    pub user: Option<String>,
    /// Password (or set MYSQL_PWD). Never printed or stored.
    #[arg(long, alias = "mysql-password", env = "MYSQL_PWD", hide_env_values = true, help_heading = "Target")]
    #[serde(skip)]
    pub password: Option<String>,
    /// Database (default: sbtest for OLTP, tpcc for TPC-C); created when missing.
    #[arg(long, alias = "mysql-db", help_heading = "Target")]
    pub database: Option<String>,
    /// Managed instance to use when no host, port or socket is given.
    #[arg(long, default_value_t = 0, help_heading = "Target")]
    pub instance: u32,
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
}

/// sysbench's oltp_common.lua options (same names, same defaults).
#[derive(Args, Debug, Clone, serde::Serialize)]
pub struct OltpArgs {
    #[arg(long, default_value_t = 1, help_heading = "OLTP")]
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
    #[arg(long, alias = "mysql_storage_engine", default_value = "innodb", help_heading = "OLTP")]
    pub mysql_storage_engine: String,
    /// oltp_complex only: leave out the writes (sysbench 0.4's --oltp-read-only).
    #[arg(long, alias = "oltp-read-only", value_parser = parse_switch, num_args = 0..=1, require_equals = true, default_value = "off", default_missing_value = "on", help_heading = "OLTP")]
    pub read_only: bool,
    /// uniform, gaussian, special, pareto or zipfian.
    #[arg(long, alias = "rand_type", default_value = "special", help_heading = "Random numbers")]
    pub rand_type: String,
    #[arg(long, alias = "rand_spec_iter", default_value_t = 12, help_heading = "Random numbers")]
    pub rand_spec_iter: u32,
    #[arg(long, alias = "rand_spec_pct", default_value_t = 1, help_heading = "Random numbers")]
    pub rand_spec_pct: u32,
    #[arg(long, alias = "rand_spec_res", default_value_t = 75, help_heading = "Random numbers")]
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
#[derive(Args, Debug, Clone, serde::Serialize)]
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

#[derive(Args, Debug)]
pub struct PrepareArgs {
    /// Workload name: tpcc, or an OLTP workload such as oltp_read_write.
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub oltp: OltpArgs,
    #[command(flatten)]
    pub tpcc: TpccArgs,
    /// Loader connections (default: two per CPU).
    #[arg(long, alias = "num-threads")]
    pub threads: Option<u32>,
}

#[derive(Args, Debug)]
pub struct PrewarmArgs {
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[arg(long, default_value_t = 1, help_heading = "OLTP")]
    pub tables: u32,
    #[arg(long, alias = "table_size", default_value_t = 10_000, help_heading = "OLTP")]
    pub table_size: u32,
    /// Connections reading in parallel (default: the number of CPUs).
    #[arg(long)]
    pub threads: Option<u32>,
}

#[derive(Args, Debug)]
pub struct CleanupArgs {
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Workload name: tpcc, or an OLTP workload such as oltp_read_write.
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub oltp: OltpArgs,
    #[command(flatten)]
    pub tpcc: TpccArgs,
    /// Concurrent connections.
    #[arg(long, alias = "num-threads", default_value_t = 1)]
    pub threads: u32,
    /// TPC-C virtual users (terminals), one connection each; the same as --threads.
    #[arg(long, help_heading = "TPC-C")]
    pub users: Option<u32>,
    /// Seconds to run (0: no limit; then --events must be set).
    #[arg(long, alias = "max-time", default_value_t = 10.0)]
    pub time: f64,
    /// Stop after this many transactions (0: no limit).
    #[arg(long, alias = "max-requests", default_value_t = 0)]
    pub events: u64,
    /// Seconds at the start left out of the summary (rounded up to whole intervals).
    #[arg(long, alias = "warmup-time", default_value_t = 0.0)]
    pub warmup: f64,
    /// Open-loop arrival rate in transactions per second (0: as fast as possible).
    /// Latency is then measured from each transaction's intended start.
    #[arg(long, alias = "tx-rate", default_value_t = 0.0)]
    pub rate: f64,
    /// Seconds between interval lines (0: no lines; intervals are still stored each second).
    #[arg(long, default_value_t = 1.0)]
    pub report_interval: f64,
    #[command(flatten)]
    pub session: SessionArgs,
    /// Print a latency histogram after the summary (sysbench's --histogram).
    #[arg(long, value_parser = parse_switch, num_args = 0..=1, require_equals = true, default_value = "off", default_missing_value = "on")]
    pub histogram: bool,
    /// Latency percentile shown in the interval lines (1-100).
    #[arg(long, default_value_t = 95.0)]
    pub percentile: f64,
    /// Accepted for sysbench command lines; only `mysql` (any MySQL-protocol server).
    #[arg(long, default_value = "mysql", hide = true)]
    pub db_driver: String,
    /// Also write the whole result to this JSON file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub power: PowerArgs,
    /// Set by scale studies: start measuring together with the other client groups.
    #[arg(skip)]
    pub start_line: Option<std::sync::Arc<crate::exec::StartLine>>,
}

/// How each connection paces itself and what it retries (run, sweep and scale).
#[derive(Args, Debug, Clone, serde::Serialize)]
pub struct SessionArgs {
    /// Fixed pause in milliseconds after each transaction, per connection.
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    pub delay: f64,
    /// OS threads that drive the connections (default, closed loop: 1 per connection up
    /// to 1 per CPU while connections are at most 2 per CPU, else 1 per 4 CPUs, the
    /// cheapest under load; with --rate: 1 per connection, the most faithful latency).
    #[arg(long)]
    pub client_threads: Option<u32>,
    /// Server error codes that are counted and retried instead of stopping the run:
    /// a comma-separated list, `all` or `none` (sysbench's option and default).
    #[arg(long, alias = "ignore-errors", default_value = "1213,1020,1205")]
    pub mysql_ignore_errors: String,
}

/// Power inputs for hosts without RAPL energy counters.
#[derive(Args, Debug, Clone, Default, serde::Serialize)]
pub struct PowerArgs {
    /// Model the system's watts as linear in CPU utilisation: idle=W,max=W.
    #[arg(long, value_name = "idle=W,max=W", help_heading = "Power")]
    pub power_model: Option<String>,
    /// The system's power draw as a constant (a wall-meter reading).
    #[arg(long, value_name = "W", help_heading = "Power")]
    pub watts: Option<f64>,
}

/// What `runs export` and `study export` take.
#[derive(Args, Debug)]
pub struct ExportArgs {
    pub id: i64,
    #[arg(long, value_enum, default_value = "json")]
    pub format: crate::report::export::Format,
    /// Write here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum RunsCommand {
    /// One line per stored run.
    List,
    /// Write a stored run as JSON (the `--json` document), CSV (one row per interval)
    /// or Markdown (a table ready to paste).
    Export(ExportArgs),
    /// One stored run in full.
    Show {
        id: i64,
        /// Print the JSON document (the same as --json writes).
        #[arg(long)]
        json: bool,
    },
}

/// What sweeps and scale studies share: step length, repeats, stop conditions, and the
/// run options of every step.
#[derive(Args, Debug, Clone)]
pub struct StudyArgs {
    /// Seconds each step measures, after its warm-up.
    #[arg(long, default_value_t = 30.0, help_heading = "Study")]
    pub step_time: f64,
    /// Seconds at the start of each step left out.
    #[arg(long, default_value_t = 5.0, help_heading = "Study")]
    pub warmup: f64,
    /// Run each step this many times; the level reports their mean and spread.
    #[arg(long, default_value_t = 1, help_heading = "Study")]
    pub repeat: u32,
    /// Stop early on any of: cpu>80, p90>5s (p90>spec, p90[type]>20s), plateau<5%, kink>3.
    #[arg(long, default_value = "", help_heading = "Study")]
    pub stop_when: String,
    /// Seconds per sample; a step's figure is the median of its samples.
    #[arg(long, default_value_t = 1.0, help_heading = "Study")]
    pub sample_interval: f64,
    /// Share of the post-warm-up samples, counted from the end, that the median uses.
    #[arg(long, default_value_t = 1.0, help_heading = "Study")]
    pub steady_last: f64,
    /// A name for the study (default: the command).
    #[arg(long, help_heading = "Study")]
    pub name: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub oltp: OltpArgs,
    #[command(flatten)]
    pub tpcc: TpccArgs,
    #[command(flatten)]
    pub power: PowerArgs,
    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Workload name: tpcc, or an OLTP workload such as oltp_read_write.
    pub workload: String,
    /// Levels: 1,2,4,8 or 32..256+32 (start..max+step) or 1..128x2 (start..max x factor).
    #[arg(long, alias = "users", value_name = "LEVELS")]
    pub threads: String,
    #[command(flatten)]
    pub study: StudyArgs,
}

#[derive(Args, Debug)]
pub struct ScaleArgs {
    pub workload: String,
    /// Instance counts: 1..8, 1,2,4 (as sweep levels).
    #[arg(long, value_name = "LEVELS")]
    pub instances: String,
    /// Each instance's client group size.
    #[arg(long, help_heading = "Scale")]
    pub threads_per_instance: Option<u32>,
    /// Or a total number of threads (users) divided over the instances.
    #[arg(long, alias = "users", help_heading = "Scale")]
    pub threads: Option<u32>,
    /// Buffer pool of each managed instance.
    #[arg(long, value_name = "SIZE", help_heading = "Scale")]
    pub buffer_pool_per_instance: Option<String>,
    /// Split-data variant: divide the data (--warehouses, or --table-size) and
    /// --buffer-pool over the instances.
    #[arg(long, help_heading = "Scale")]
    pub split: bool,
    /// With --split: the buffer pool to divide.
    #[arg(long, value_name = "SIZE", help_heading = "Scale")]
    pub buffer_pool: Option<String>,
    /// Further server options for the managed instances (name=value, repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE", help_heading = "Scale")]
    pub set: Vec<String>,
    /// A server sizeup does not manage (host:port or a socket path), repeatable:
    /// used instead of managed instances.
    #[arg(long = "target", value_name = "HOST:PORT", help_heading = "Scale")]
    pub targets: Vec<String>,
    #[command(flatten)]
    pub study: StudyArgs,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs and studies: 12 or run:12 for a run, s3 or study:3 for a study.
    #[arg(required = true)]
    pub items: Vec<String>,
    /// The HTML file to write.
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
    /// Add a sizing table to each scale study: servers needed for this throughput.
    #[arg(long)]
    pub target_tps: Option<f64>,
    /// Scale-out efficiency for the sizing table.
    #[arg(long, default_value_t = 0.9, requires = "target_tps")]
    pub efficiency: f64,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Baseline: a run (12, run:12) or a study (s3, study:3).
    pub a: String,
    /// The other, of the same kind.
    pub b: String,
    /// Also draw the comparison into this HTML file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// Fit X(N) = λN / (1 + σ(N−1) + κN(N−1)) to points or to a study's series.
    Usl {
        /// Points measured by any tool: N:throughput,... e.g. "1:277,2:1469,4:1450".
        #[arg(long, conflicts_with = "from")]
        points: Option<String>,
        /// A stored study (s3 or study:3): each series' levels and steady throughput.
        #[arg(long)]
        from: Option<String>,
    },
}

#[derive(Args, Debug)]
pub struct SizeArgs {
    /// The throughput to provide (tps, or NOPM for TPC-C studies).
    #[arg(long)]
    pub target_tps: f64,
    /// Studies to size from (s3 or study:3), repeatable: scale studies give
    /// instances per server and servers needed; sweeps answer --at-connections.
    #[arg(long = "from", required = true)]
    pub from: Vec<String>,
    /// Latency requirement, e.g. "p95<50" (milliseconds).
    #[arg(long)]
    pub latency: Option<String>,
    /// Scale-out efficiency E (0..1]: the share of one server's throughput each added
    /// server keeps. `measured` needs a scale-out measurement, which sizeup cannot
    /// make on one host yet.
    #[arg(long, default_value = "0.9")]
    pub efficiency: String,
    /// Check "target at N connections" against sweep studies (SPEC study 1's question).
    #[arg(long)]
    pub at_connections: Option<u32>,
    /// Cost inputs for TCO (instead of the study's [cost]): server_capex=9000,devices=8,
    /// device_capex=250,power_price_kwh=0.15,cooling_factor=1.5,years=4
    #[arg(long, value_name = "KEY=VALUE,...")]
    pub cost: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum StudyCommand {
    /// Run a study file (TOML) end to end.
    Run { file: PathBuf },
    /// Continue an interrupted study from its first unfinished step.
    Resume { id: i64 },
    /// A stored study's tables (default: the latest).
    Show {
        id: Option<i64>,
        /// Print the stored study as JSON.
        #[arg(long)]
        json: bool,
    },
    /// One line per stored study.
    List,
    /// Write a stored study's levels as JSON, CSV (one row per level) or Markdown.
    Export(ExportArgs),
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Seconds per thread level.
    #[arg(long, default_value_t = 5.0)]
    pub step_time: f64,
    /// Rows per table (4 tables).
    #[arg(long, default_value_t = 50_000)]
    pub table_size: u32,
}

/// sysbench's boolean spellings.
pub fn parse_switch(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{s}' is not on/off")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn sysbench_spellings_are_accepted() {
        let cli = parse(&[
            "sizeup",
            "run",
            "oltp_read_write",
            "--table_size=5000",
            "--tables=4",
            "--mysql-socket=/tmp/s",
            "--skip_trx=on",
            "--max-time=30",
            "--rand-type=uniform",
            "--range_selects=off",
        ]);
        let Command::Run(r) = cli.command else { panic!() };
        assert_eq!(r.oltp.table_size, 5000);
        assert_eq!(r.oltp.tables, 4);
        assert_eq!(r.target.socket, Some(PathBuf::from("/tmp/s")));
        assert!(r.oltp.skip_trx);
        assert!(!r.oltp.range_selects);
        assert_eq!(r.time, 30.0);
        assert_eq!(r.oltp.rand_type, "uniform");
    }

    #[test]
    fn defaults_are_sysbench_defaults() {
        let Command::Run(r) = parse(&["sizeup", "run", "oltp_read_only"]).command else { panic!() };
        assert_eq!((r.oltp.tables, r.oltp.table_size, r.oltp.range_size), (1, 10_000, 100));
        assert!(r.oltp.range_selects && r.oltp.auto_inc && r.oltp.create_secondary && !r.oltp.skip_trx);
        assert_eq!(r.oltp.rand_type, "special");
        let Command::Run(r) = parse(&["sizeup", "run", "x", "--skip-trx"]).command else { panic!() };
        assert!(r.oltp.skip_trx);
    }

    #[test]
    fn bad_switch_is_rejected() {
        assert!(Cli::try_parse_from(["sizeup", "run", "x", "--skip-trx=maybe"]).is_err());
    }
}
