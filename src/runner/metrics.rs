//! `--metrics-addr`: the live figures of whatever this command is running (a run, each
//! step of a study or plan), served as OpenMetrics text for Prometheus to scrape: the
//! latest interval's throughput and latency percentiles, errors, the server's status
//! figures, each agent's CPU and lag; and each finished run's summary.
//!
//! The HTTP side is the least a scrape needs (a GET answered, the connection closed), on
//! a thread of its own: nothing here is on the run's path but a lock taken once an
//! interval.

use crate::stats::{Interval, Summary};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::sync::Mutex;

/// What the endpoint serves.
#[derive(Default)]
struct Live {
    /// The address it is served on, once started.
    addr: Option<String>,
    current: Option<Current>,
    /// Finished runs: (run id, workload, tps, p99 seconds, completed).
    finished: Vec<(i64, String, f64, f64, bool)>,
}

struct Current {
    run: i64,
    workload: String,
    iv: Interval,
    transactions: u64,
    errors: u64,
    agents: Vec<crate::exec::remote::Live>,
}

static LIVE: Mutex<Live> = Mutex::new(Live { addr: None, current: None, finished: Vec::new() });

/// The OpenMetrics content type.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Serves the figures on `addr` from now on, once per process (a study's steps share it).
pub fn serve(addr: &str) -> Result<(), crate::Error> {
    let mut live = LIVE.lock().expect("not poisoned");
    match &live.addr {
        Some(a) if a == addr => return Ok(()),
        Some(a) => {
            return Err(crate::Error::Usage(format!(
                "--metrics-addr {addr}: this command already serves its figures on {a}"
            )))
        }
        None => {}
    }
    let listener = std::net::TcpListener::bind(addr).map_err(|e| {
        crate::Error::Usage(format!("--metrics-addr {addr}: cannot listen ({e}); give a free ADDRESS:PORT"))
    })?;
    let bound = listener.local_addr().map(|a| a.to_string()).unwrap_or_else(|_| addr.to_string());
    std::thread::Builder::new()
        .name("sizeup-metrics".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = answer(stream);
            }
        })
        .map_err(|e| crate::Error::Failed(format!("cannot start the metrics endpoint: {e}")))?;
    eprintln!("live figures: http://{bound}/metrics (OpenMetrics)");
    live.addr = Some(addr.to_string());
    Ok(())
}

/// Whether the figures are served (the interval hook costs nothing otherwise).
pub fn serving() -> bool {
    LIVE.lock().expect("not poisoned").addr.is_some()
}

/// A run's interval, as it is stored.
pub fn interval(run: i64, workload: &str, iv: &Interval, agents: Vec<crate::exec::remote::Live>) {
    let mut live = LIVE.lock().expect("not poisoned");
    let (mut transactions, mut errors) = (0, 0);
    if let Some(c) = live.current.as_ref().filter(|c| c.run == run) {
        (transactions, errors) = (c.transactions, c.errors);
    }
    live.current = Some(Current {
        run,
        workload: workload.to_string(),
        iv: iv.clone(),
        transactions: transactions + iv.transactions,
        errors: errors + iv.errors,
        agents,
    });
}

/// A run's summary, once it has ended.
pub fn finished(run: i64, workload: &str, summary: &Summary, completed: bool) {
    let mut live = LIVE.lock().expect("not poisoned");
    live.finished.push((run, workload.to_string(), summary.tps, summary.latency_ms.p99 / 1e3, completed));
}

fn answer(mut s: std::net::TcpStream) -> std::io::Result<()> {
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    // The whole request head, up to its blank line: answering after a first piece and
    // closing would reset a client still sending the rest.
    let mut req = Vec::new();
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 16 * 1024 {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        req.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&req);
    let path = line.split_whitespace().nth(1).unwrap_or("/");
    let (status, kind, body) = match (line.starts_with("GET "), path) {
        (true, "/metrics") => ("200 OK", CONTENT_TYPE, render()),
        (true, _) => ("404 Not Found", "text/plain", "the figures are at /metrics\n".to_string()),
        (false, _) => ("405 Method Not Allowed", "text/plain", "GET /metrics\n".to_string()),
    };
    write!(
        s,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    s.write_all(body.as_bytes())
}

/// A label value, escaped as OpenMetrics asks.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# TYPE {name} {kind}\n# HELP {name} {help}");
}

/// The figures as OpenMetrics text.
fn render() -> String {
    let live = LIVE.lock().expect("not poisoned");
    let mut out = String::new();
    if let Some(c) = &live.current {
        let l = format!("run=\"{}\",workload=\"{}\"", c.run, label(&c.workload));
        let iv = &c.iv;
        family(&mut out, "sizeup_transactions", "counter", "Transactions finished in the run so far.");
        let _ = writeln!(out, "sizeup_transactions_total{{{l}}} {}", c.transactions);
        family(&mut out, "sizeup_errors", "counter", "Errors retried in the run so far.");
        let _ = writeln!(out, "sizeup_errors_total{{{l}}} {}", c.errors);
        family(&mut out, "sizeup_tps", "gauge", "Transactions a second over the latest interval.");
        let _ = writeln!(out, "sizeup_tps{{{l}}} {}", iv.tps);
        family(&mut out, "sizeup_qps", "gauge", "Statements a second over the latest interval.");
        let _ = writeln!(out, "sizeup_qps{{{l}}} {}", iv.qps);
        family(
            &mut out,
            "sizeup_interval_end_seconds",
            "gauge",
            "Where the latest interval ends, from the run's start.",
        );
        let _ = writeln!(out, "sizeup_interval_end_seconds{{{l}}} {}", iv.t);
        family(&mut out, "sizeup_warmup", "gauge", "1 while the latest interval is in the warm-up.");
        let _ = writeln!(out, "sizeup_warmup{{{l}}} {}", iv.warmup as u8);
        family(&mut out, "sizeup_connections", "gauge", "Connections the run drives.");
        let _ = writeln!(out, "sizeup_connections{{{l}}} {}", iv.threads);
        family(&mut out, "sizeup_latency_seconds", "gauge", "Latency percentiles over the latest interval.");
        for (q, ms) in [("0.5", iv.p50_ms), ("0.9", iv.p90_ms), ("0.95", iv.p95_ms), ("0.99", iv.p99_ms)] {
            let _ = writeln!(out, "sizeup_latency_seconds{{{l},quantile=\"{q}\"}} {}", ms / 1e3);
        }
        family(&mut out, "sizeup_backlog", "gauge", "Open loop: arrivals due and not started at the interval's end.");
        let _ = writeln!(out, "sizeup_backlog{{{l}}} {}", iv.backlog);
        if let Some(os) = &iv.os {
            family(&mut out, "sizeup_host_cpu_idle_ratio", "gauge", "This host's idle CPU share over the interval.");
            let _ = writeln!(out, "sizeup_host_cpu_idle_ratio{{{l}}} {}", os.idle / 100.0);
            if let Some(s) = os.server_cores {
                family(&mut out, "sizeup_server_cpu_cores", "gauge", "The server's cores busy over the interval.");
                let _ = writeln!(out, "sizeup_server_cpu_cores{{{l}}} {s}");
            }
        }
        if let Some(st) = &iv.status {
            family(&mut out, "sizeup_server_status", "gauge", "The server's status figures over the interval.");
            if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(st) {
                for (name, v) in m.iter().filter(|(n, _)| *n != "seconds") {
                    if let Some(v) = v.as_f64() {
                        let _ = writeln!(out, "sizeup_server_status{{{l},figure=\"{}\"}} {v}", label(name));
                    }
                }
            }
        }
        if !c.agents.is_empty() {
            family(&mut out, "sizeup_agent_cpu_cores", "gauge", "Each agent's process CPU over its latest interval.");
            for a in &c.agents {
                if let Some(cores) = a.cores {
                    let _ = writeln!(out, "sizeup_agent_cpu_cores{{{l},agent=\"{}\"}} {cores}", label(&a.agent));
                }
            }
            family(&mut out, "sizeup_agent_backlog", "gauge", "Each agent's arrivals due and not started.");
            for a in &c.agents {
                let _ = writeln!(out, "sizeup_agent_backlog{{{l},agent=\"{}\"}} {}", label(&a.agent), a.backlog);
            }
            if c.agents.iter().any(|a| a.lag_s.is_some()) {
                family(
                    &mut out,
                    "sizeup_agent_lag_seconds",
                    "gauge",
                    "Each agent's backlog in seconds of its schedule.",
                );
                for a in &c.agents {
                    if let Some(lag) = a.lag_s {
                        let _ = writeln!(out, "sizeup_agent_lag_seconds{{{l},agent=\"{}\"}} {lag}", label(&a.agent));
                    }
                }
            }
        }
    }
    if !live.finished.is_empty() {
        family(&mut out, "sizeup_run_tps", "gauge", "A finished run's steady-state transactions a second.");
        for (run, w, tps, _, _) in &live.finished {
            let _ = writeln!(out, "sizeup_run_tps{{run=\"{run}\",workload=\"{}\"}} {tps}", label(w));
        }
        family(&mut out, "sizeup_run_p99_seconds", "gauge", "A finished run's steady-state p99 latency.");
        for (run, w, _, p99, _) in &live.finished {
            let _ = writeln!(out, "sizeup_run_p99_seconds{{run=\"{run}\",workload=\"{}\"}} {p99}", label(w));
        }
        family(
            &mut out,
            "sizeup_run_completed",
            "gauge",
            "1 when a finished run completed, 0 when it failed or stopped.",
        );
        for (run, w, _, _, ok) in &live.finished {
            let _ = writeln!(out, "sizeup_run_completed{{run=\"{run}\",workload=\"{}\"}} {}", label(w), *ok as u8);
        }
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// a_scrape_sent_in_pieces_is_answered_whole: the endpoint answered after the first
    /// piece of a request and closed, and the client's next piece met a reset.
    #[test]
    fn a_scrape_sent_in_pieces_is_answered_whole() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || answer(listener.accept().unwrap().0));
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        for piece in ["GET /metrics HTTP/1.1\r\nHost: ", "127.0.0.1", "\r\n\r\n"] {
            c.write_all(piece.as_bytes()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(30));
        }
        let mut text = String::new();
        c.read_to_string(&mut text).unwrap();
        server.join().unwrap().unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK") && text.contains(CONTENT_TYPE), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn labels_are_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
