//! Managed server instances: private MariaDB (or MySQL) servers that sizeup initialises,
//! starts, watches and stops itself, each with its own datadir, option file, unix socket
//! and loopback port. They are the embedded default target and the building block of
//! multi-instance studies.
//!
//! It never touches the system service or /etc/mysql: every instance is started with
//! its own `--defaults-file` under the state directory, and binds to 127.0.0.1 only.
//! This module is synchronous on purpose: starting and stopping are rare, slow events.
//! `cluster` builds Galera and primary + replica clusters from the same instances (a node
//! is an instance with the options of its role), and `lab` places an instance in its own
//! network namespace and CPU cgroup.

pub mod cluster;
pub mod lab;

use serde::{Deserialize, Serialize};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The first port tried for instance 0 when the user names none.
pub const DEFAULT_BASE_PORT: u16 = 13306;
const READY_TIMEOUT: Duration = Duration::from_secs(120);
const STOP_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a command that changes instances waits for another one to finish.
pub const LOCK_WAIT: Duration = Duration::from_secs(300);
/// The most instances one state directory manages.
pub const MAX_INSTANCES: u32 = 64;
/// The lowest port a managed instance may listen on (below are the system's services).
pub const MIN_PORT: u16 = 1024;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// No server binary on PATH or in the usual places.
    #[error("no MariaDB/MySQL server binary found (looked for mariadbd and mysqld on PATH and in /usr/sbin).\nInstall one, e.g. `apt-get install mariadb-server`, or put it on PATH.")]
    NoBinary,
    /// Datadir initialisation failed.
    #[error("initialising the datadir of instance {index} failed: {detail}")]
    Init { index: u32, detail: String },
    /// The server exited or never became ready.
    #[error("instance {index} did not start: {detail}\n(full log: {log})")]
    Start { index: u32, detail: String, log: String },
    /// A buffer pool the host cannot hold.
    #[error("{0}")]
    Memory(String),
    /// A port of the requested range is taken by another program.
    #[error("port {port} on 127.0.0.1 is in use; choose another with --base-port")]
    PortInUse { port: u16 },
    /// Another sizeup held the state directory's lock for too long.
    #[error(
        "another sizeup has been starting or stopping instances in {home} for {seconds} s; try again when it ends"
    )]
    Busy { home: String, seconds: u64 },
    /// Another sizeup measures the server a study would load.
    #[error("{0}")]
    Measuring(String),
    /// A base port that would put an instance where the user did not ask.
    #[error("{0}")]
    Ports(String),
    /// State directory problems.
    #[error("{0}")]
    State(String),
    /// A cluster that could not be started, formed or stopped: names the node.
    #[error("{0}")]
    Cluster(String),
}

impl crate::error::LayerError for ServerError {}

/// Settings written into each instance's option file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerSettings {
    pub buffer_pool: String,
    pub log_file_size: String,
    pub flush_log_at_trx_commit: u8,
    pub max_connections: u32,
    /// Further `name=value` server options (`--set`).
    pub extra: Vec<(String, String)>,
    /// Where it listens for TCP, when not loopback (`--bind-address`): clients on other
    /// hosts (agents) reach it there. A lab node listens on its namespace's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bind_address: Option<String>,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            buffer_pool: "1G".into(),
            log_file_size: "512M".into(),
            flush_log_at_trx_commit: 2,
            max_connections: 2000,
            extra: Vec::new(),
            bind_address: None,
        }
    }
}

/// One instance as remembered in the state file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    pub index: u32,
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub port: u16,
    pub pid: Option<i32>,
    /// True from a successful start until `stop`: a dead process while this is set
    /// means the instance crashed or was killed.
    pub should_run: bool,
    pub settings: ServerSettings,
    pub binary: PathBuf,
    /// When the server was last launched (seconds since the Unix epoch).
    #[serde(default)]
    pub started_at: u64,
    /// The last launch followed a crash: InnoDB recovered and the buffer pool is cold.
    #[serde(default)]
    pub recovered: bool,
    /// The address it listens on for TCP: 127.0.0.1, or its namespace's address in the lab.
    #[serde(default = "loopback")]
    pub address: String,
    /// Server options of its role in a cluster (wsrep, server_id, binary log), written
    /// after the settings and before `--set`, so the user's `--set` has the last word.
    #[serde(default)]
    pub role_options: Vec<(String, String)>,
    /// The network namespace and CPU cgroup it runs in (the lab); none by default.
    #[serde(default)]
    pub placement: lab::Placement,
    /// Directories put first on the server's PATH: helpers its role's scripts run (a
    /// Galera node's state transfer), found before the system's.
    #[serde(default)]
    pub path_first: Vec<PathBuf>,
    /// Where the last launch's lines begin in its error log (bytes).
    #[serde(default)]
    pub log_from: u64,
    /// The settings the user last started it with (`sizeup server start`), which a
    /// study that names nothing keeps; None when only studies or runs started it (a
    /// study then starts from sizeup's defaults, not from what an earlier study left).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_settings: Option<ServerSettings>,
}

fn loopback() -> String {
    "127.0.0.1".into()
}

impl Instance {
    pub fn datadir(&self) -> PathBuf {
        self.dir.join("data")
    }
    pub fn option_file(&self) -> PathBuf {
        self.dir.join("my.cnf")
    }
    pub fn error_log(&self) -> PathBuf {
        self.dir.join("error.log")
    }
    /// Managed instances let root in without a password over the socket and loopback.
    pub fn user(&self) -> &'static str {
        "root"
    }

    /// Writes its option file and initialises its datadir if it has none. The datadir
    /// is initialised with the plain options: a role's (wsrep, binary log) have no
    /// business in the bootstrap that creates the system tables.
    pub fn prepare(&self) -> Result<(), ServerError> {
        std::fs::create_dir_all(self.dir.join("tmp"))
            .map_err(|e| ServerError::State(format!("cannot create {}: {e}", self.dir.display())))?;
        let write = |text: String| {
            std::fs::write(self.option_file(), text)
                .map_err(|e| ServerError::State(format!("cannot write {}: {e}", self.option_file().display())))
        };
        if self.role_options.is_empty() {
            write(option_file(self))?;
            return ensure_datadir(self);
        }
        if !self.datadir().join("mysql").exists() {
            write(option_file(&Instance { role_options: Vec::new(), ..self.clone() }))?;
        }
        ensure_datadir(self)?;
        write(option_file(self))
    }

    /// Launches the server (with further command-line arguments, e.g.
    /// `--wsrep-new-cluster`) and records its pid and start time; does not wait.
    pub fn launch(&mut self, args: &[&str]) -> Result<(), ServerError> {
        self.log_from = std::fs::metadata(self.error_log()).map_or(0, |m| m.len());
        self.pid = Some(launch(self, args)?);
        self.should_run = true;
        self.started_at = unix_now();
        Ok(())
    }

    /// Waits (up to 120 s) until the launched server greets on its socket.
    pub fn wait_ready(&self) -> Result<(), ServerError> {
        wait_ready(self)
    }

    /// Stops the server if it runs (SIGTERM, a clean shutdown, SIGKILL after 120 s).
    pub fn stop(&mut self) {
        if let Some(pid) = self.pid.filter(|&p| alive(p, &self.dir)) {
            terminate(pid);
        }
        self.should_run = false;
        self.pid = None;
    }

    /// Its live state: running, stopped, or crashed (should run and does not).
    pub fn state(&self) -> State {
        status_of(self).state
    }

    /// The last `lines` non-empty lines of its error log, for messages.
    pub fn log_tail(&self, lines: usize) -> String {
        tail(&self.error_log(), lines)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Running,
    Stopped,
    /// Was started by sizeup and is gone without `sizeup server stop`.
    Crashed,
}

#[derive(Clone, Debug, Serialize)]
pub struct Status {
    pub index: u32,
    pub state: State,
    pub pid: Option<i32>,
    pub socket: PathBuf,
    pub port: u16,
    pub user: String,
    pub datadir: PathBuf,
    /// Running but stopped by a signal (SIGSTOP): it answers nothing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
}

/// Refuses a base port that would put an instance on a port the user did not ask for:
/// 0 (the server's default, 3306) or past 65535.
pub fn check_ports(base: u16, count: u32) -> Result<(), String> {
    let highest = 65535 - count.clamp(1, MAX_INSTANCES) + 1;
    if base < MIN_PORT || base as u32 > highest {
        return Err(format!(
            "--base-port {base}: with {count} instance(s) the base port must be from {MIN_PORT} to {highest} \
             (instance i listens on base + i)"
        ));
    }
    Ok(())
}

/// The exclusive lock of a state directory, held while instances are started or
/// stopped; released when dropped (or when the process dies).
pub struct Lock {
    _file: std::fs::File,
}

/// How long after a restart that followed a crash a measurement is flagged as taken
/// on a cold, just-recovered server.
pub const COLD_AFTER_RECOVERY: Duration = Duration::from_secs(600);

impl Instance {
    /// A line saying the server was restarted after a crash shortly before, if it was.
    pub fn cold_note(&self) -> Option<String> {
        let ago = unix_now().saturating_sub(self.started_at);
        (self.recovered && ago < COLD_AFTER_RECOVERY.as_secs()).then(|| {
            format!(
                "managed instance {} was restarted after a crash {ago} s before this run: \
                 its buffer pool was cold and InnoDB may still have been recovering; measure again for a warm figure",
                self.index
            )
        })
    }
}

/// The state directory and its instances.
pub struct Manager {
    home: PathBuf,
}

#[derive(Default, Serialize, Deserialize)]
struct StateFile {
    instances: Vec<Instance>,
}

impl Manager {
    pub fn new(home: &Path) -> Manager {
        Manager { home: home.to_path_buf() }
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Takes the state directory's lock, waiting (up to [`LOCK_WAIT`], with a line
    /// saying so) while another sizeup starts or stops instances here.
    pub fn lock(&self) -> Result<Lock, ServerError> {
        self.lock_within(LOCK_WAIT)
    }

    fn lock_within(&self, wait: Duration) -> Result<Lock, ServerError> {
        use std::os::fd::AsRawFd;
        std::fs::create_dir_all(&self.home)
            .map_err(|e| ServerError::State(format!("cannot create {}: {e}", self.home.display())))?;
        let path = self.home.join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| ServerError::State(format!("cannot open {}: {e}", path.display())))?;
        let started = Instant::now();
        let mut said = false;
        loop {
            // SAFETY: flock on a descriptor we own; it is released when the file closes.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(Lock { _file: file });
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(ServerError::State(format!("cannot lock {}: {err}", path.display())));
            }
            if started.elapsed() >= wait {
                return Err(ServerError::Busy { home: self.home.display().to_string(), seconds: wait.as_secs() });
            }
            if !said {
                eprintln!(
                    "another sizeup is starting or stopping instances in {}: waiting for it (up to {} s)",
                    self.home.display(),
                    wait.as_secs()
                );
                said = true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Takes the measurement lock of one server (`key`: "managed" for this directory's
    /// instances, else the server's address) for the life of the returned lock, and
    /// writes who holds it; refuses at once, naming the holder, when another sizeup
    /// measures it (concurrent_studies_are_not_coordinated: two sweeps at once each
    /// reported a "peak" of a shared server).
    pub fn measuring(&self, key: &str, what: &str) -> Result<Lock, ServerError> {
        use std::io::{Read, Seek, Write};
        use std::os::fd::AsRawFd;
        let path = self.lock_path(key);
        let dir = path.parent().expect("in locks/");
        std::fs::create_dir_all(dir)
            .map_err(|e| ServerError::State(format!("cannot create {}: {e}", dir.display())))?;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| ServerError::State(format!("cannot open {}: {e}", path.display())))?;
        // SAFETY: flock on a descriptor we own; it is released when the file closes.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let server = if key == "managed" {
                format!("the managed instances of {}", self.home.display())
            } else {
                key.to_string()
            };
            return Err(ServerError::Measuring(format!(
                "another measurement is loading {server}: {}; two at once would each measure a share of it. \
                 Wait for it to end, or measure another server",
                holder.trim()
            )));
        }
        let _ = file.set_len(0).and_then(|_| file.rewind());
        let t = unix_now() % 86_400;
        let since = format!("{:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
        let _ = write!(file, "sizeup pid {} since {since} UTC: {what}", std::process::id());
        Ok(Lock { _file: file })
    }

    /// Who holds the measurement lock `key` (as [`Manager::measuring`] wrote it), if a
    /// live sizeup does; takes nothing.
    pub fn measured_by(&self, key: &str) -> Option<String> {
        // No lock file: nobody measures it, and asking leaves nothing behind.
        if !self.lock_path(key).exists() {
            return None;
        }
        match self.measuring(key, "a check") {
            Ok(_released) => None,
            Err(ServerError::Measuring(m)) => {
                let holder = m.split_once(": ").map_or(m.as_str(), |(_, h)| h);
                Some(holder.split("; two at once").next().unwrap_or(holder).to_string())
            }
            Err(_) => None,
        }
    }

    /// The measurement lock file of `key`.
    fn lock_path(&self, key: &str) -> PathBuf {
        let name: String = key.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
        self.home.join("locks").join(format!("{name}.lock"))
    }

    fn state_path(&self) -> PathBuf {
        self.home.join("instances.json")
    }

    fn load(&self) -> Result<StateFile, ServerError> {
        match std::fs::read_to_string(self.state_path()) {
            Ok(s) => serde_json::from_str(&s).map_err(|e| {
                ServerError::State(format!(
                    "{} is damaged ({e}); move it away to start afresh",
                    self.state_path().display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(StateFile::default()),
            Err(e) => Err(ServerError::State(format!("cannot read {}: {e}", self.state_path().display()))),
        }
    }

    /// Remembers these instances as the state file would (unit tests of what a
    /// study asks for, without a server).
    #[cfg(any(test, feature = "fixtures"))]
    pub fn remember(&self, instances: Vec<Instance>) {
        self.save(&StateFile { instances }).unwrap();
    }

    fn save(&self, s: &StateFile) -> Result<(), ServerError> {
        std::fs::create_dir_all(&self.home)
            .map_err(|e| ServerError::State(format!("cannot create {}: {e}", self.home.display())))?;
        let tmp = self.state_path().with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_string_pretty(s).expect("serialisable"))
            .and_then(|_| std::fs::rename(&tmp, self.state_path()))
            .map_err(|e| ServerError::State(format!("cannot write {}: {e}", self.state_path().display())))
    }

    /// Every instance sizeup remembers, with its live state.
    pub fn status(&self) -> Result<Vec<Status>, ServerError> {
        Ok(self.load()?.instances.iter().map(status_of).collect())
    }

    /// The settings instance `index` last ran with, if sizeup knows it.
    pub fn settings_of(&self, index: u32) -> Result<Option<ServerSettings>, ServerError> {
        Ok(self.load()?.instances.into_iter().find(|i| i.index == index).map(|i| i.settings))
    }

    /// The settings the user last started instance `index` with (`sizeup server
    /// start`), if any: not those an earlier study left.
    pub fn user_settings_of(&self, index: u32) -> Result<Option<ServerSettings>, ServerError> {
        Ok(self.load()?.instances.into_iter().find(|i| i.index == index).and_then(|i| i.user_settings))
    }

    /// The instance `index` if it is running.
    pub fn running(&self, index: u32) -> Result<Option<Instance>, ServerError> {
        Ok(self
            .load()?
            .instances
            .into_iter()
            .find(|i| i.index == index)
            .filter(|i| status_of(i).state == State::Running))
    }

    /// Starts instances `0..count` (those already running are left as they are, with a
    /// line naming the settings they keep) and returns their status. `base_port` of
    /// `None` keeps remembered ports, or finds a free range from [`DEFAULT_BASE_PORT`].
    /// Instance directories go under `root` (default: the state directory). Holds the
    /// state directory's lock throughout.
    pub fn start(
        &self,
        count: u32,
        settings: &ServerSettings,
        base_port: Option<u16>,
        root: Option<&Path>,
    ) -> Result<Vec<Status>, ServerError> {
        let _lock = self.lock()?;
        self.start_locked(count, settings, base_port, root, false)
    }

    /// As `start`, for `sizeup server start`: the instances it starts remember these
    /// settings as the user's own, which a study that names nothing keeps.
    pub fn start_by_user(
        &self,
        count: u32,
        settings: &ServerSettings,
        base_port: Option<u16>,
        root: Option<&Path>,
    ) -> Result<Vec<Status>, ServerError> {
        let _lock = self.lock()?;
        self.start_locked(count, settings, base_port, root, true)
    }

    fn start_locked(
        &self,
        count: u32,
        settings: &ServerSettings,
        base_port: Option<u16>,
        root: Option<&Path>,
        by_user: bool,
    ) -> Result<Vec<Status>, ServerError> {
        if count == 0 || count > MAX_INSTANCES {
            return Err(ServerError::Ports(format!("--instances must be from 1 to {MAX_INSTANCES} (got {count})")));
        }
        check_memory(settings, count, true)?;
        if let Some(p) = base_port {
            check_ports(p, count).map_err(ServerError::Ports)?;
        }
        let binary = find_binary()?;
        let mut state = self.load()?;
        let base = match base_port {
            Some(p) => p,
            None => match state.instances.iter().find(|i| i.index == 0) {
                Some(i) => i.port,
                None => free_port_range(DEFAULT_BASE_PORT, count)?,
            },
        };
        check_ports(base, count).map_err(ServerError::Ports)?;
        let mut out = Vec::new();
        for index in 0..count {
            let mut port = base + index as u16;
            let existing = state.instances.iter().position(|i| i.index == index);
            let mut recovered = false;
            if let Some(pos) = existing {
                let old = &state.instances[pos];
                match status_of(old).state {
                    State::Running => {
                        let ignored = ignored_settings(old, settings, base_port.map(|_| port));
                        if !ignored.is_empty() {
                            eprintln!(
                                "instance {index} is already running; not applied: {}. To apply them: \
                                 `sizeup server stop --instance {index}`, then start again with them",
                                ignored.join(", ")
                            );
                        }
                        out.push(status_of(old));
                        continue;
                    }
                    State::Crashed => {
                        eprintln!(
                            "instance {index} crashed or was killed (its server{} is gone without `sizeup server stop`); \
                             starting it again: InnoDB recovers its data, and the buffer pool starts cold{}",
                            old.pid.map_or(String::new(), |p| format!(", pid {p},")),
                            last_log_line(&old.error_log()).map_or(String::new(), |l| format!("\n  last line of its log: {l}"))
                        );
                        recovered = true;
                    }
                    State::Stopped => {}
                }
                // Said, not silent: a plain `server start` after a crash took the defaults.
                let changed = settings_differences(&state.instances[pos].settings, settings);
                if !changed.is_empty() {
                    eprintln!(
                        "instance {index} starts with other settings than it last ran with: {}",
                        changed.join(", ").replace("(it has", "(it had")
                    );
                }
                // A crashed server's threads may still be exiting and holding its port.
                if let Some(pid) = state.instances[pos].pid {
                    wait_gone(pid);
                }
            }
            if base_port.is_none() && port_taken(port) {
                // Another program holds base + i (no --base-port was asked for): the
                // instance keeps its own port when that is free, else takes the next free
                // one, as instance 0 took the first free one.
                let others: Vec<u16> = state.instances.iter().filter(|i| i.index != index).map(|i| i.port).collect();
                let free = |p: &u16| !others.contains(p) && !port_taken(*p);
                let own = existing.map(|pos| state.instances[pos].port).filter(free);
                port = match own {
                    Some(p) => p,
                    None => (port.saturating_add(1)..65000).find(free).ok_or(ServerError::PortInUse { port })?,
                };
            }
            let dir = root.map_or_else(|| self.home.join("instances"), Path::to_path_buf).join(index.to_string());
            let mut inst = Instance {
                index,
                socket: socket_path(&dir, &self.home, &index.to_string()),
                dir,
                port,
                pid: None,
                should_run: false,
                settings: settings.clone(),
                binary: binary.clone(),
                started_at: 0,
                recovered,
                address: loopback(),
                role_options: Vec::new(),
                placement: lab::Placement::default(),
                path_first: Vec::new(),
                log_from: 0,
                user_settings: match by_user {
                    true => Some(settings.clone()),
                    false => existing.and_then(|pos| state.instances[pos].user_settings.clone()),
                },
            };
            if port_taken(inst.port) {
                return Err(ServerError::PortInUse { port: inst.port });
            }
            // What it ran with before, kept if the server refuses these settings.
            let previous = existing.map(|pos| state.instances[pos].settings.clone());
            let previous_user = existing.and_then(|pos| state.instances[pos].user_settings.clone());
            inst.prepare()?;
            inst.launch(&[])?;
            match existing {
                Some(pos) => state.instances[pos] = inst.clone(),
                None => state.instances.push(inst.clone()),
            }
            state.instances.sort_by_key(|i| i.index);
            self.save(&state)?;
            if let Err(e) = inst.wait_ready() {
                // It never ran: stopped, not "crashed" (which would make the next start
                // and every run say it recovered from a crash). Settings it refused do not
                // stick: the next start, a run's automatic one too, would fail the same way
                // (bad_server_set_kills_instance_0_and_sticks). A new instance falls back
                // to the defaults.
                if let Some(i) = state.instances.iter_mut().find(|i| i.index == index) {
                    (i.should_run, i.pid) = (false, None);
                    i.settings = previous.unwrap_or_default();
                    i.user_settings = previous_user;
                    let _ = i.prepare();
                }
                self.save(&state)?;
                return Err(e);
            }
            out.push(status_of(&inst));
        }
        Ok(out)
    }

    /// Instances `0..count` running with exactly `settings`: those running with other
    /// settings are restarted (their data stays), the rest started.
    pub fn start_with(&self, count: u32, settings: &ServerSettings) -> Result<Vec<Status>, ServerError> {
        let _lock = self.lock()?;
        // Checked before a running instance is stopped for settings it cannot start with.
        check_memory(settings, count, false)?;
        let mut restarted = Vec::new();
        for index in 0..count {
            if let Some(i) = self.running(index)?.filter(|i| &i.settings != settings) {
                eprintln!("restarting managed instance {index} with the study's settings");
                self.stop_locked(Some(index), false)?;
                restarted.push((index, i.settings));
            }
        }
        let failed = match self.start_locked(count, settings, None, None, false) {
            Err(ServerError::Start { index, detail, log }) => (index, detail, log),
            other => return other,
        };
        // The server refused the settings: what was running runs again as it was, so a
        // bad study setting does not take a working instance down with it.
        let mut back = Vec::new();
        for (index, old) in restarted {
            match self.start_locked(index + 1, &old, None, None, false) {
                Ok(_) => back.push(index.to_string()),
                Err(e) => {
                    let detail = format!(
                        "{}\nand it did not start again with its previous settings either: {e}\n\
                         `sizeup server start` starts it with the defaults",
                        failed.1
                    );
                    return Err(ServerError::Start { index: failed.0, detail, log: failed.2 });
                }
            }
        }
        let detail = if back.is_empty() {
            failed.1
        } else {
            format!(
                "{}\nthe study's server settings were not applied; instance(s) {} run again with their previous settings",
                failed.1,
                back.join(", ")
            )
        };
        Err(ServerError::Start { index: failed.0, detail, log: failed.2 })
    }

    /// Stops every running instance (or only `only`), waiting for a clean shutdown.
    /// With `purge`, also deletes their directories and forgets them.
    pub fn stop(&self, only: Option<u32>, purge: bool) -> Result<Vec<Status>, ServerError> {
        let _lock = self.lock()?;
        self.stop_locked(only, purge)
    }

    fn stop_locked(&self, only: Option<u32>, purge: bool) -> Result<Vec<Status>, ServerError> {
        let mut state = self.load()?;
        let mut stopped = Vec::new();
        for inst in state.instances.iter_mut().filter(|i| only.is_none_or(|o| o == i.index)) {
            inst.stop();
            if purge {
                let _ = std::fs::remove_dir_all(&inst.dir);
                let _ = std::fs::remove_file(&inst.socket);
            }
            stopped.push(status_of(inst));
        }
        if purge {
            state.instances.retain(|i| only.is_some_and(|o| o != i.index));
        }
        self.save(&state)?;
        Ok(stopped)
    }
}

/// The settings `asked` has and a running server (`old`) does not, as the options that
/// set them: "--buffer-pool 2G (it has 1G)".
pub fn settings_differences(old: &ServerSettings, new: &ServerSettings) -> Vec<String> {
    let mut v = Vec::new();
    if old.buffer_pool != new.buffer_pool {
        v.push(format!("--buffer-pool {} (it has {})", new.buffer_pool, old.buffer_pool));
    }
    if old.log_file_size != new.log_file_size {
        v.push(format!("--log-file-size {} (it has {})", new.log_file_size, old.log_file_size));
    }
    if old.flush_log_at_trx_commit != new.flush_log_at_trx_commit {
        v.push(format!(
            "--flush-log-at-trx-commit {} (it has {})",
            new.flush_log_at_trx_commit, old.flush_log_at_trx_commit
        ));
    }
    if old.max_connections != new.max_connections {
        v.push(format!("--max-connections {} (it has {})", new.max_connections, old.max_connections));
    }
    if old.extra != new.extra {
        let set: Vec<String> = new.extra.iter().map(|(k, v)| format!("{k}={v}")).collect();
        v.push(format!("--set {}", if set.is_empty() { "(none)".to_string() } else { set.join(" ") }));
    }
    v
}

/// The settings in words, as a study's configuration line lists them: "buffer pool 1G,
/// redo log 512M, flush_log_at_trx_commit 2, max_connections 2000" and each `--set`.
pub fn settings_words(s: &ServerSettings) -> Vec<String> {
    let mut v = vec![
        format!("buffer pool {}", s.buffer_pool),
        format!("redo log {}", s.log_file_size),
        format!("flush_log_at_trx_commit {}", s.flush_log_at_trx_commit),
        format!("max_connections {}", s.max_connections),
    ];
    v.extend(s.extra.iter().map(|(k, v)| format!("{k}={v}")));
    v
}

/// What differs from `from` to `to`, setting by setting, in words: "buffer pool 8M
/// (now 1G)", "innodb_flush_method=O_DIRECT (now unset)". `keep` picks the settings to
/// name, by their name (buffer_pool, log_file_size, flush_log_at_trx_commit,
/// max_connections, or a `--set` option's) and `from`'s value.
pub fn settings_changes(
    from: &ServerSettings,
    to: &ServerSettings,
    keep: &dyn Fn(&str, Option<&str>) -> bool,
) -> Vec<String> {
    let mut v = Vec::new();
    let mut one = |name: &str, word: &str, a: Option<String>, b: Option<String>| {
        if a != b && keep(name, a.as_deref()) {
            let now = format!("now {}", b.as_deref().unwrap_or("unset"));
            v.push(match word.is_empty() {
                true => format!("{name}={} ({now})", a.as_deref().unwrap_or("unset")),
                false => format!("{word} {} ({now})", a.as_deref().unwrap_or("unset")),
            });
        }
    };
    one("buffer_pool", "buffer pool", Some(from.buffer_pool.clone()), Some(to.buffer_pool.clone()));
    one("log_file_size", "redo log", Some(from.log_file_size.clone()), Some(to.log_file_size.clone()));
    let f = |x: &ServerSettings| Some(x.flush_log_at_trx_commit.to_string());
    one("flush_log_at_trx_commit", "flush_log_at_trx_commit", f(from), f(to));
    let m = |x: &ServerSettings| Some(x.max_connections.to_string());
    one("max_connections", "max_connections", m(from), m(to));
    let get = |x: &ServerSettings, k: &str| x.extra.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut names: Vec<&String> = from.extra.iter().chain(&to.extra).map(|(k, _)| k).collect();
    names.dedup();
    let mut seen = std::collections::BTreeSet::new();
    for k in names {
        if seen.insert(k.clone()) {
            one(k, "", get(from, k), get(to, k));
        }
    }
    v
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// What a start asked for that a running instance does not have (it keeps its own).
fn ignored_settings(running: &Instance, asked: &ServerSettings, port: Option<u16>) -> Vec<String> {
    let mut v = settings_differences(&running.settings, asked);
    if let Some(p) = port.filter(|&p| p != running.port) {
        v.push(format!("port {p} (it listens on {})", running.port));
    }
    v
}

fn last_log_line(path: &Path) -> Option<String> {
    let t = tail(path, 1);
    (!t.is_empty()).then_some(t)
}

fn status_of(i: &Instance) -> Status {
    let live = i.pid.filter(|&p| alive(p, &i.dir));
    let state = match (live, i.should_run) {
        (Some(_), _) => State::Running,
        (None, true) => State::Crashed,
        (None, false) => State::Stopped,
    };
    Status {
        index: i.index,
        state,
        pid: live,
        socket: i.socket.clone(),
        port: i.port,
        user: i.user().to_string(),
        datadir: i.datadir(),
        paused: live.is_some_and(crate::monitor::process_stopped),
    }
}

/// The default state directory: `SIZEUP_HOME`, else `$XDG_STATE_HOME/sizeup`, else
/// `~/.local/state/sizeup`.
pub fn default_home() -> PathBuf {
    if let Some(h) = std::env::var_os("SIZEUP_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(x).join("sizeup");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"));
    home.join(".local/state/sizeup")
}

/// mariadbd or mysqld: on PATH first, then the usual system places.
pub fn find_binary() -> Result<PathBuf, ServerError> {
    let names = ["mariadbd", "mysqld"];
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in
        std::env::split_paths(&path).chain(["/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"].map(PathBuf::from))
    {
        for n in names {
            let p = dir.join(n);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(ServerError::NoBinary)
}

/// Unix socket paths are limited to 107 bytes; deep state directories fall back to /tmp
/// (`name` tells instances and cluster nodes of one state directory apart there).
fn socket_path(dir: &Path, home: &Path, name: &str) -> PathBuf {
    let p = dir.join("mysqld.sock");
    if p.as_os_str().len() < 100 {
        return p;
    }
    PathBuf::from(format!("/tmp/sizeup-{:016x}-{name}.sock", home_hash(home)))
}

/// A stable 64-bit hash (FNV-1a) of the state directory's path: names in places shared
/// by every state directory (/tmp, network namespaces, cgroups) carry it.
pub fn home_hash(home: &Path) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in home.as_os_str().as_encoded_bytes() {
        h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn option_file(i: &Instance) -> String {
    let s = &i.settings;
    let mut f = String::from("# Written by sizeup for a private benchmark instance.\n[mysqld]\n");
    let mut set = |k: &str, v: &str| f.push_str(&format!("{k}={v}\n"));
    set("datadir", &i.datadir().to_string_lossy());
    set("socket", &i.socket.to_string_lossy());
    set("port", &i.port.to_string());
    let bind = s.bind_address.as_deref().filter(|_| i.address == loopback()).unwrap_or(&i.address);
    set("bind-address", bind);
    set("pid-file", &i.dir.join("mysqld.pid").to_string_lossy());
    set("log-error", &i.error_log().to_string_lossy());
    // A private tmpdir: instances initialising side by side must not share /tmp files.
    set("tmpdir", &i.dir.join("tmp").to_string_lossy());
    set("innodb_buffer_pool_size", &s.buffer_pool);
    set("innodb_log_file_size", &s.log_file_size);
    set("innodb_flush_log_at_trx_commit", &s.flush_log_at_trx_commit.to_string());
    set("max_connections", &s.max_connections.to_string());
    set("local_infile", "1");
    if is_root() {
        set("user", "root");
    }
    for (k, v) in i.role_options.iter().chain(&s.extra) {
        set(k, v);
    }
    // No binary log unless a role needs one (a primary, a replica that may become one).
    if !i.role_options.iter().any(|(k, _)| k == "log_bin") {
        f.push_str("skip-log-bin\n");
    }
    f.push_str(&format!("\n[client]\nsocket={}\nuser=root\n", i.socket.to_string_lossy()));
    f
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let v: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

/// Why a launch failed, from its error log's lines since `from`: their `[ERROR]` lines
/// when there are any (the cause; a plain tail showed a note written after it), else
/// their last lines.
fn start_failure(path: &Path, from: u64) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(text.get(from as usize..).unwrap_or(&text));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let errors: Vec<&str> = lines.iter().filter(|l| l.contains("[ERROR]")).copied().collect();
    let pick = if errors.is_empty() { &lines } else { &errors };
    pick[pick.len().saturating_sub(8)..].join("\n")
}

/// Refuses a buffer pool the host cannot hold at all (more than its memory and swap: the
/// server fails to start, as a 100T one did) before a running instance is stopped for
/// it; with `warn`, says when the instances' pools together exceed the memory (they
/// start, as InnoDB touches its pages lazily, but a run that fills them swaps).
pub fn check_memory(settings: &ServerSettings, count: u32, warn: bool) -> Result<(), ServerError> {
    use crate::monitor::os::meminfo_bytes;
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let (Some(pool), Some(mem)) = (size_bytes(&settings.buffer_pool), meminfo_bytes(&meminfo, "MemTotal:")) else {
        return Ok(());
    };
    let swap = meminfo_bytes(&meminfo, "SwapTotal:").unwrap_or(0);
    match memory_fits(&settings.buffer_pool, pool, count, mem, swap) {
        Err(e) => Err(ServerError::Memory(e)),
        Ok(Some(note)) if warn => {
            eprintln!("note: {note}");
            Ok(())
        }
        Ok(_) => Ok(()),
    }
}

/// Err when one pool exceeds memory and swap; a note when `count` of them exceed memory.
fn memory_fits(given: &str, pool: u64, count: u32, mem: u64, swap: u64) -> Result<Option<String>, String> {
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    if pool > mem.saturating_add(swap) {
        return Err(format!(
            "a buffer pool of {given} ({:.1} GiB) is more than this host's memory and swap ({:.1} GiB): \
             the server cannot start with it; give a smaller one",
            gib(pool),
            gib(mem + swap)
        ));
    }
    let all = pool.saturating_mul(count as u64);
    Ok((all > mem).then(|| {
        format!(
            "{count} buffer pools of {given} ({:.1} GiB together) are more than this host's memory ({:.1} GiB): \
             once the data fills them the host swaps, and the figures measure that",
            gib(all),
            gib(mem)
        )
    }))
}

pub use sizeup_model::size_bytes;

/// The instance's datadir, initialised if it has none. Initialisation goes into a
/// temporary directory renamed into place when complete, so a kill part-way leaves
/// no datadir that looks real; leftovers of such a kill are removed with a line.
fn ensure_datadir(i: &Instance) -> Result<(), ServerError> {
    let data = i.datadir();
    if data.join("mysql").exists() {
        return Ok(());
    }
    let partial = i.dir.join("data.init");
    let leftover = [&partial, &data].into_iter().find(|d| d.exists());
    if let Some(d) = leftover {
        eprintln!(
            "instance {}: {} is a datadir whose initialisation did not finish (interrupted?); initialising it again",
            i.index,
            d.display()
        );
        for d in [&partial, &data] {
            std::fs::remove_dir_all(d)
                .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })
                .map_err(|e| ServerError::State(format!("cannot remove {}: {e}", d.display())))?;
        }
    }
    initialise(i, &partial)?;
    std::fs::rename(&partial, &data)
        .map_err(|e| ServerError::State(format!("cannot rename {} to {}: {e}", partial.display(), data.display())))
}

fn initialise(i: &Instance, datadir: &Path) -> Result<(), ServerError> {
    let name = i.binary.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let install_db = ["mariadb-install-db", "mysql_install_db"]
        .iter()
        .flat_map(|n| {
            [i.binary.with_file_name(n), PathBuf::from("/usr/bin").join(n), PathBuf::from("/usr/local/bin").join(n)]
        })
        .find(|p| p.is_file());
    let defaults = format!("--defaults-file={}", i.option_file().display());
    // MariaDB (and old MySQL) ship an install script; MySQL 5.7+ initialises itself.
    let tool = install_db.filter(|t| name == "mariadbd" || t.ends_with("mariadb-install-db"));
    let mut cmd = match tool {
        Some(tool) => {
            let mut c = Command::new(tool);
            c.arg(&defaults)
                .arg(format!("--datadir={}", datadir.display()))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db");
            c
        }
        None => {
            let mut c = Command::new(&i.binary);
            c.arg(&defaults).arg(format!("--datadir={}", datadir.display())).arg("--initialize-insecure");
            c
        }
    };
    let out =
        cmd.stdin(Stdio::null()).output().map_err(|e| ServerError::Init { index: i.index, detail: e.to_string() })?;
    if !out.status.success() {
        let mut detail = String::from_utf8_lossy(&out.stderr).lines().rev().take(5).collect::<Vec<_>>().join(" | ");
        if detail.is_empty() {
            detail = tail(&i.error_log(), 5);
        }
        return Err(ServerError::Init { index: i.index, detail });
    }
    Ok(())
}

fn launch(i: &Instance, args: &[&str]) -> Result<i32, ServerError> {
    let _ = std::fs::remove_file(&i.socket);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(i.dir.join("server.out"))
        .map_err(|e| ServerError::State(e.to_string()))?;
    let mut cmd = Command::new(&i.binary);
    cmd.arg(format!("--defaults-file={}", i.option_file().display())).args(args);
    if !i.path_first.is_empty() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let joined = std::env::join_paths(i.path_first.iter().cloned().chain(std::env::split_paths(&path)))
            .map_err(|e| ServerError::State(format!("PATH for instance {}: {e}", i.index)))?;
        cmd.env("PATH", joined);
    }
    i.placement.apply(&mut cmd).map_err(|e| ServerError::Start {
        index: i.index,
        detail: e.to_string(),
        log: i.error_log().display().to_string(),
    })?;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| ServerError::State(e.to_string()))?)
        .stderr(log)
        // Its own process group: a Ctrl-C meant for sizeup must not stop the server.
        .process_group(0)
        .spawn()
        .map_err(|e| ServerError::Start {
            index: i.index,
            detail: e.to_string(),
            log: i.error_log().display().to_string(),
        })?;
    Ok(child.id() as i32)
}

/// Ready means the server sends its protocol greeting on the socket.
fn wait_ready(i: &Instance) -> Result<(), ServerError> {
    let started = Instant::now();
    let pid = i.pid.expect("launched");
    loop {
        if greets(&i.socket) {
            return Ok(());
        }
        if !alive(pid, &i.dir) && !alive_after(pid, &i.dir, Duration::from_millis(200)) {
            return Err(ServerError::Start {
                index: i.index,
                detail: {
                    let log = start_failure(&i.error_log(), i.log_from);
                    // What it printed itself, when its log says nothing of why.
                    let out = if log.contains("[ERROR]") { String::new() } else { tail(&i.dir.join("server.out"), 4) };
                    let said: Vec<&str> = [log.as_str(), out.as_str()].into_iter().filter(|t| !t.is_empty()).collect();
                    format!("the server exited; its log says:\n{}", said.join("\n"))
                },
                log: i.error_log().display().to_string(),
            });
        }
        if started.elapsed() > READY_TIMEOUT {
            terminate(pid);
            return Err(ServerError::Start {
                index: i.index,
                detail: format!("not ready after {} s", READY_TIMEOUT.as_secs()),
                log: i.error_log().display().to_string(),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A second look before declaring a just-launched server dead.
fn alive_after(pid: i32, dir: &Path, pause: Duration) -> bool {
    std::thread::sleep(pause);
    alive(pid, dir)
}

fn greets(socket: &Path) -> bool {
    let Ok(mut s) = std::os::unix::net::UnixStream::connect(socket) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = [0u8; 5];
    // 4-byte packet header, then protocol version 10; an error packet (0xff) means not ready.
    s.read_exact(&mut head).is_ok() && head[4] == 10
}

/// True when `pid` is a live (not zombie) server process of this instance directory.
pub fn alive(pid: i32, dir: &Path) -> bool {
    // Reap it if it is our own exited child, so it does not linger as a zombie.
    // SAFETY: waitpid with WNOHANG on a pid never blocks or touches memory we own.
    unsafe {
        libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat.rsplit(')').next().and_then(|r| r.split_whitespace().next());
    if state == Some("Z") || state == Some("X") {
        return false;
    }
    // Guard against pid reuse: the command line names our option file. It reads empty
    // while a process is being set up or torn down; that is not someone else's process.
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let needle = dir.join("my.cnf");
    cmdline.is_empty() || String::from_utf8_lossy(&cmdline).contains(&*needle.to_string_lossy())
}

fn terminate(pid: i32) {
    // SAFETY: plain signals to a process we verified is ours.
    // SIGCONT too: a SIGSTOPped server handles the SIGTERM only once it runs again
    // (server stop on a frozen server waited 120 s, then killed it without a word).
    unsafe {
        libc::kill(pid, libc::SIGTERM);
        libc::kill(pid, libc::SIGCONT);
    }
    let started = Instant::now();
    while started.elapsed() < STOP_TIMEOUT {
        unsafe {
            libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
        }
        if std::fs::metadata(format!("/proc/{pid}")).is_err() || zombie(pid) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!(
        "the server (pid {pid}) did not shut down within {} s of SIGTERM: killed it (SIGKILL); \
         InnoDB recovers its data at the next start",
        STOP_TIMEOUT.as_secs()
    );
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Waits (up to 30 s) until process `pid` has no trace left: a killed multi-threaded
/// server shows as a zombie while its other threads still hold its sockets and files.
fn wait_gone(pid: i32) {
    let started = Instant::now();
    while started.elapsed() < STOP_TIMEOUT / 4 {
        // SAFETY: reaps our own exited child if it is one; never blocks.
        unsafe {
            libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
        }
        if std::fs::metadata(format!("/proc/{pid}")).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit(')').next().and_then(|r| r.split_whitespace().next()) == Some("Z"))
        .unwrap_or(true)
}

pub(crate) fn port_taken(port: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", port)).is_err()
}

/// The first base port from `from` whose `count` ports are all free.
pub(crate) fn free_port_range(from: u16, count: u32) -> Result<u16, ServerError> {
    let mut base = from;
    while (base as u32) + count < 65000 {
        if (0..count).all(|i| !port_taken(base + i as u16)) {
            return Ok(base);
        }
        base += count.max(1) as u16;
    }
    Err(ServerError::PortInUse { port: from })
}

/// Instances for the other crates' unit tests of what a study asks for.
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures {
    use super::*;

    /// An instance as a state file would hold it (no server behind it).
    pub fn inst() -> Instance {
        Instance {
            index: 1,
            dir: PathBuf::from("/state/instances/1"),
            socket: PathBuf::from("/state/instances/1/mysqld.sock"),
            port: 13307,
            pid: None,
            should_run: false,
            settings: ServerSettings {
                extra: vec![("innodb_io_capacity".into(), "2000".into())],
                ..Default::default()
            },
            binary: PathBuf::from("/usr/sbin/mariadbd"),
            started_at: 0,
            recovered: false,
            address: loopback(),
            role_options: Vec::new(),
            placement: lab::Placement::default(),
            path_first: Vec::new(),
            log_from: 0,
            user_settings: None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    pub(crate) use super::fixtures::inst;
    use super::*;

    /// scale_with_a_buffer_pool_the_host_cannot_hold_leaves_the_instance_running: a
    /// 100T buffer pool stopped the running instance, failed to start it and left it
    /// "CRASHED"; it is refused before anything is touched.
    #[test]
    fn buffer_pools_larger_than_the_host_are_refused() {
        assert_eq!(size_bytes("100T"), Some(100 << 40));
        assert_eq!((size_bytes("512M"), size_bytes("4096"), size_bytes("2X")), (Some(512 << 20), Some(4096), None));
        let (mem, swap) = (24u64 << 30, 1u64 << 30);
        let e = memory_fits("100T", 100 << 40, 1, mem, swap).unwrap_err();
        assert!(
            e.contains("a buffer pool of 100T (102400.0 GiB) is more than this host's memory and swap (25.0 GiB)"),
            "{e}"
        );
        // Four 8G pools start (pages are touched lazily) but would swap once filled.
        let note = memory_fits("8G", 8 << 30, 4, mem, swap).unwrap().unwrap();
        assert!(note.contains("4 buffer pools of 8G (32.0 GiB together)"), "{note}");
        assert_eq!(memory_fits("8G", 8 << 30, 2, mem, swap), Ok(None));
    }

    /// start_failure_quotes_the_error_not_the_last_note: the message showed the log's
    /// last line ("[Note] InnoDB: Using io_uring"), not the [ERROR] that said why.
    #[test]
    fn start_failure_quotes_this_launchs_errors() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("error.log");
        let old = "0 [ERROR] an old start's error\n";
        std::fs::write(
            &log,
            format!("{old}0 [ERROR] InnoDB: Cannot map innodb_buffer_pool_size_max\n0 [Note] InnoDB: Using io_uring\n"),
        )
        .unwrap();
        let got = start_failure(&log, old.len() as u64);
        assert_eq!(got, "0 [ERROR] InnoDB: Cannot map innodb_buffer_pool_size_max");
        std::fs::write(&log, "a\nb\n").unwrap();
        assert_eq!(start_failure(&log, 0), "a\nb");
    }

    #[test]
    fn option_file_is_private_and_complete() {
        let f = option_file(&inst());
        for line in [
            "datadir=/state/instances/1/data",
            "socket=/state/instances/1/mysqld.sock",
            "port=13307",
            "bind-address=127.0.0.1",
            "innodb_buffer_pool_size=1G",
            "innodb_flush_log_at_trx_commit=2",
            "innodb_io_capacity=2000",
        ] {
            assert!(f.lines().any(|l| l == line), "missing {line} in\n{f}");
        }
    }

    #[test]
    fn long_homes_get_short_sockets() {
        let long = PathBuf::from(format!("/{}", "x".repeat(120)));
        let p = socket_path(&long.join("instances/0"), &long, "0");
        assert!(p.starts_with("/tmp") && p.as_os_str().len() < 100);
        let short = socket_path(Path::new("/s/instances/0"), Path::new("/s"), "0");
        assert_eq!(short, PathBuf::from("/s/instances/0/mysqld.sock"));
    }

    #[test]
    fn a_forgotten_pid_is_not_alive() {
        assert!(!alive(i32::MAX - 1, Path::new("/nowhere")));
        // Our own test process is alive but is not a server of that directory.
        assert!(!alive(std::process::id() as i32, Path::new("/nowhere")));
    }
}
