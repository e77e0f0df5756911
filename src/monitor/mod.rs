//! What the operating system says: CPU time of sizeup itself and of a server process,
//! and the host facts recorded with every result. Linux /proc only. Beside them, the
//! server's own status counters ([`status`]), read over SQL.

pub mod node;
pub mod os;
pub mod owner;
pub mod status;

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

/// Host facts for a result's config: CPU model and count, memory, kernel.
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

pub fn host_facts() -> HostFacts {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kb = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok().map(|s| s.trim().to_string());
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|s| s.trim().to_string());
    HostFacts {
        hostname,
        cpus: std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1),
        cpu_model: model,
        memory_bytes: mem_kb.map(|k| k * 1024),
        kernel,
        client_io: Some(crate::client::outbox::how().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_parser_skips_odd_command_names() {
        // A captured line, with a command name holding spaces and a parenthesis.
        let line = "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 2150 0 0 0 731 215 0 0 20 0 31 0 1234 0 0";
        assert_eq!(parse_stat_cpu_ticks(line), Some(731 + 215));
        assert_eq!(parse_stat_cpu_ticks("garbage"), None);
        assert_eq!(parse_stat_state(line), Some('S'));
        assert_eq!(parse_stat_state("4242 (x) T 1"), Some('T'));
    }

    #[test]
    fn own_cpu_time_grows() {
        let t = thread_cpu_seconds();
        // The thread waits until its clock is taken: on a busy box a short one could
        // end before (own_cpu_time_grows failed beside stress: no clock to read).
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let h = std::thread::spawn(move || {
            let _ = wait.recv();
            (0..5_000_000u64).fold(0u64, |a, b| a.wrapping_add(b * b))
        });
        let clock = thread_clock(&h);
        let _ = go.send(());
        let _ = h.join();
        assert!(thread_cpu_seconds() >= t);
        // A finished thread's clock no longer reads (once the kernel has reaped the
        // thread, which on a busy box comes a moment after join returns).
        let c = clock.expect("a clock for a running thread");
        let gone = (0..200).any(|_| {
            let gone = clock_seconds(c).is_none();
            if !gone {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            gone
        });
        assert!(gone, "the finished thread's clock still reads after 2 s");
        let a = self_cpu_seconds();
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i * i));
        }
        assert!(self_cpu_seconds() > a);
        assert!(process_cpu_seconds(std::process::id() as i32).is_some());
    }
}
