//! What sizeup measures of the machines: the OS's figures, the server's status
//! counters, a server host's node_exporter, and the client host's facts.

pub mod node;
pub mod os;
pub mod status;

/// The machine a run was made on, as results record it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct HostFacts {
    pub hostname: Option<String>,
    pub cpus: u32,
    pub cpu_model: Option<String>,
    pub memory_bytes: Option<u64>,
    pub kernel: Option<String>,
    /// How the client sent its commands (io_uring batches or direct writes).
    pub client_io: Option<String>,
}

/// CPU seconds (user + system) this process has used, all threads.
pub fn self_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the struct we pass and nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// CPU seconds the calling thread has used (its own CPU clock, nanosecond resolution).
pub fn thread_cpu_seconds() -> f64 {
    clock_seconds(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0.0)
}

/// The CPU clock of another running thread of this process: readable from any thread
/// while that one runs, so client groups sharing the process each count their own.
pub fn thread_clock<T>(handle: &std::thread::JoinHandle<T>) -> Option<libc::clockid_t> {
    use std::os::unix::thread::JoinHandleExt;
    let mut id: libc::clockid_t = 0;
    // SAFETY: the handle's thread is not joined yet, so its pthread_t is valid.
    (unsafe { libc::pthread_getcpuclockid(handle.as_pthread_t(), &mut id) } == 0).then_some(id)
}

/// A CPU clock's seconds; None once its thread has exited.
pub fn clock_seconds(clock: libc::clockid_t) -> Option<f64> {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec we pass and nothing else.
    (unsafe { libc::clock_gettime(clock, &mut t) } == 0).then(|| t.tv_sec as f64 + t.tv_nsec as f64 / 1e9)
}

/// CPU seconds (user + system) process `pid` has used, from /proc/PID/stat.
pub fn process_cpu_seconds(pid: i32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat_cpu_ticks(&stat).map(|ticks| ticks as f64 / clock_ticks())
}

/// Whether the process is stopped by a signal (SIGSTOP, SIGTSTP) or a tracer: state T or
/// t, field 3 of /proc/PID/stat. Such a server accepts connections and answers nothing.
pub fn process_stopped(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    parse_stat_state(&stat).is_some_and(|s| s == 'T' || s == 't')
}

/// The state letter, field 3 of /proc/PID/stat (after the command name in parentheses).
pub fn parse_stat_state(stat: &str) -> Option<char> {
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// utime + stime, fields 14 and 15 of /proc/PID/stat (counted after the command name,
/// which may itself contain spaces and parentheses).
pub fn parse_stat_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): utime is field 14 -> index 11.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}
