//! What the operating system says: CPU time of sizeup itself and of a server process,
//! and the host facts recorded with every result. Linux /proc only. Beside them, the
//! server's own status counters ([`status`]), read over SQL.

pub mod node;
pub use sizeup_model::monitor::os;
pub mod owner;
pub mod status;
pub use sizeup_model::monitor::HostFacts;

pub use sizeup_model::monitor::{
    clock_seconds, parse_stat_cpu_ticks, parse_stat_state, process_cpu_seconds, process_stopped, self_cpu_seconds,
    thread_clock, thread_cpu_seconds,
};

/// Host facts for a result's config: CPU model and count, memory, kernel.
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
