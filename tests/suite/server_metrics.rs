//! A server watched from outside (issue 62): `--server-metrics` scrapes a Prometheus
//! node_exporter on the server's host every interval. The tests start Debian's
//! prometheus-node-exporter on a free loopback port (never the system service), name a
//! private MariaDB by host and port only, and read its host's figures back.

use crate::common;
use common::*;
use std::process::{Child, Command, Stdio};

/// node_exporter on a loopback port, killed on drop.
struct NodeExporter {
    child: Child,
    port: u16,
}

impl NodeExporter {
    fn start() -> NodeExporter {
        let port = free_port();
        let child = Command::new("prometheus-node-exporter")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .args(["--collector.disable-defaults", "--collector.cpu", "--collector.meminfo"])
            .args(["--collector.diskstats", "--collector.netdev"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus-node-exporter is installed (scripts/test.sh installs it)");
        let n = NodeExporter { child, port };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return n;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("node_exporter did not listen on 127.0.0.1:{port}");
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/metrics", self.port)
    }
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A run against a server named only by host and port, with its host's node_exporter:
/// each interval after the first and the summary carry the server host's figures, the
/// summary prints them, and the run records where they came from.
#[test]
fn a_run_reads_the_server_host_from_node_exporter() {
    let s = TestServer::start();
    let n = NodeExporter::start();
    let port = s.port.to_string();
    let url = n.url();
    let json = s.home.path().join("m.json");
    let j = json.display().to_string();
    let t = ["--host", "127.0.0.1", "--port", &port, "--user", "root", "--server-metrics", &url];
    assert_eq!(s.sizeup(&[&["prepare", "oltp_read_only", "--table-size", "1000"], &t[..]].concat()).unwrap(), 0);
    let (code, out, err) = run_in(
        &s,
        &[&["run", "oltp_read_only", "--table-size", "1000", "--time", "3", "--threads", "2", "--json", &j], &t[..]]
            .concat(),
    );
    assert_eq!(code, 0, "{out}{err}");
    let doc = read_json(&json);
    assert_eq!(doc["config"]["server"]["server_metrics"], url.as_str());
    let host = &doc["summary"]["os"]["server_host"];
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!(host["cpus"].as_u64(), Some(cpus), "{host}");
    let busy = 100.0 - host["idle"].as_f64().unwrap() - host["iowait"].as_f64().unwrap();
    assert!((0.0..=100.0).contains(&busy), "{host}");
    let with: usize =
        doc["intervals"].as_array().unwrap().iter().filter(|iv| iv["os"]["server_host"].is_object()).count();
    assert!(with >= 1, "the intervals after the first scrape carry the server host: {}", doc["intervals"]);
    assert!(out.contains("server host (node_exporter)") && out.contains("% busy of"), "{out}");
}

/// A study on the same server: its levels carry the server host's figures, and where
/// it says what ran out of CPU it names the server host's, from node_exporter.
#[test]
fn a_study_names_what_ran_out_from_node_exporter() {
    let s = TestServer::start();
    let n = NodeExporter::start();
    let port = s.port.to_string();
    let url = n.url();
    let t = ["--host", "127.0.0.1", "--port", &port, "--user", "root", "--server-metrics", &url];
    let (code, out, err) = run_in(
        &s,
        &[
            &[
                "sweep",
                "oltp_read_only",
                "--threads",
                "1,8",
                "--table-size",
                "1000",
                "--step-time",
                "3",
                "--warmup",
                "1",
            ],
            &t[..],
        ]
        .concat(),
    );
    assert!(answered_or_starved(code, &s.results()), "{out}{err}");
    let (_, shown, _) = run_in(&s, &["study", "show", "1"]);
    // Every level's figures have the server host's.
    let store = rusqlite::Connection::open(s.results()).unwrap();
    let with: i64 = store
        .query_row(
            "SELECT COUNT(*) FROM study_steps WHERE json_extract(figures, '$.os.server_host.cpus') > 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(with, 2, "{shown}");
    // What ran out (or, where nothing did, what was checked) is read from the server
    // host's node_exporter, said so; never this host's CPU under the server's name.
    if code == 0 {
        assert!(
            shown.contains("(node_exporter: CPU ") || shown.contains("the server host (node_exporter): CPU "),
            "{shown}"
        );
    }
    for line in shown.lines().filter(|l| l.contains("ran out") && l.contains("CPU (")) {
        assert!(line.contains("the server host's CPU (node_exporter: CPU "), "{line}");
    }
}

/// A wrong address is said before anything runs, not found as gaps afterwards.
#[test]
fn a_server_metrics_url_that_does_not_answer_is_refused() {
    let s = TestServer::start();
    let dead = format!("http://127.0.0.1:{}/metrics", free_port());
    let (code, out, err) =
        run_in(&s, &["run", "oltp_point_select", "--table-size", "100", "--time", "1", "--server-metrics", &dead]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(err.contains("--server-metrics: http://127.0.0.1:") && err.contains("start node_exporter there"), "{err}");
    let (code, _, err) = run_in(
        &s,
        &["run", "oltp_point_select", "--table-size", "100", "--time", "1", "--server-metrics", "https://x:9100/"],
    );
    assert_ne!(code, 0);
    assert!(err.contains("plain-HTTP"), "{err}");
}
