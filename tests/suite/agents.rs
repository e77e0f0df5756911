//! Load from several client hosts (issue 66): `sizeup agent` processes, each in a network
//! namespace of its own joined to the host by a veth pair, drive one private MariaDB
//! (bound to every address, reached over the veth links as a server on another host
//! is); the coordinator runs in the test. Links off loopback are TLS with a CA the test
//! makes. One test starts its agent through a real sshd (Debian's openssh-server) run
//! by the test inside a namespace. Everything the tests start is stopped on drop.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "an-agent-token-for-tests-0123456789";
const AGENT_PORT: u16 = 7800;

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip (iproute2) is installed");
    assert!(out.status.success(), "ip {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Namespaces with a veth link each: the host's end 10.231.K.1, the namespace's 10.231.K.2.
struct Hosts {
    tag: String,
    subnets: Vec<u32>,
}

impl Hosts {
    fn new(n: u32) -> Hosts {
        let tag = format!("{}", std::process::id() % 100_000);
        let base = 100 + (std::process::id() % 50) * 3;
        let h = Hosts { tag, subnets: (0..n).map(|i| base + i).collect() };
        for (i, k) in h.subnets.iter().enumerate() {
            let (ns, host_end, ns_end) = (h.ns(i), h.host_if(i), format!("szae{}", i));
            let _ = Command::new("ip").args(["netns", "del", &ns]).output();
            let _ = Command::new("ip").args(["link", "del", &host_end]).output();
            ip(&["netns", "add", &ns]);
            ip(&["link", "add", &host_end, "type", "veth", "peer", "name", &ns_end]);
            ip(&["link", "set", &ns_end, "netns", &ns]);
            ip(&["addr", "add", &format!("10.231.{k}.1/24"), "dev", &host_end]);
            ip(&["link", "set", &host_end, "up"]);
            ip(&["-n", &ns, "addr", "add", &format!("10.231.{k}.2/24"), "dev", &ns_end]);
            ip(&["-n", &ns, "link", "set", &ns_end, "up"]);
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
            // The host's addresses (the server's) through its end of the link.
            ip(&["-n", &ns, "route", "add", "default", "via", &format!("10.231.{k}.1")]);
        }
        h
    }

    fn ns(&self, i: usize) -> String {
        format!("szag-{}-{i}", self.tag)
    }

    fn host_if(&self, i: usize) -> String {
        format!("sza{}h{i}", self.tag)
    }

    /// Agent i's address, and the server's as agent i reaches it.
    fn agent_ip(&self, i: usize) -> String {
        format!("10.231.{}.2", self.subnets[i])
    }

    fn server_ip(&self, i: usize) -> String {
        format!("10.231.{}.1", self.subnets[i])
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for i in 0..self.subnets.len() {
            let _ = Command::new("ip").args(["netns", "del", &self.ns(i)]).status();
            let _ = Command::new("ip").args(["link", "del", &self.host_if(i)]).output();
        }
    }
}

/// A CA and a certificate for every agent address, signed by it.
fn certificates(dir: &Path, ips: &[String]) -> (PathBuf, PathBuf, PathBuf) {
    self_signed(
        dir,
        "ca.key",
        "ca.pem",
        "/CN=sizeup test agents CA",
        &["-addext", "basicConstraints=critical,CA:TRUE"],
    );
    openssl(
        dir,
        &["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "agent.key", "-out", "agent.csr", "-subj", "/CN=agent"],
    );
    let sans: Vec<String> = ips.iter().map(|i| format!("IP:{i}")).collect();
    std::fs::write(
        dir.join("agent.ext"),
        format!("subjectAltName={}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n", sans.join(",")),
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "agent.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "agent.pem",
            "-days",
            "2",
            "-extfile",
            "agent.ext",
        ],
    );
    (dir.join("ca.pem"), dir.join("agent.pem"), dir.join("agent.key"))
}

/// A `sizeup agent` process in a namespace, killed on drop.
struct AgentProcess {
    child: Child,
    pub addr: String,
}

impl AgentProcess {
    fn start(ns: &str, ip: &str, cert: &Path, key: &Path, log: &Path) -> AgentProcess {
        let addr = format!("{ip}:{AGENT_PORT}");
        let child = Command::new("ip")
            .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_sizeup"), "agent", "--listen", &addr])
            .arg("--tls-cert")
            .arg(cert)
            .arg("--tls-key")
            .arg(key)
            .env("SIZEUP_AGENT_TOKEN", TOKEN)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("ip netns exec runs");
        let a = AgentProcess { child, addr };
        let bound = eventually(Duration::from_secs(20), || std::fs::read_to_string(log).unwrap().contains("listening"));
        assert!(bound, "agent in {ns} did not listen: {}", std::fs::read_to_string(log).unwrap());
        a
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

fn eventually(bound: Duration, mut check: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + bound;
    while Instant::now() < until {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    check()
}

/// A private MariaDB bound to every address, with a user the agents' hosts may log in as.
fn server_for_agents() -> TestServer {
    let s = TestServer::start_args(1, &["--bind-address", "0.0.0.0", "--set", "skip-name-resolve=1"]);
    s.sql("CREATE USER 'agents'@'%' IDENTIFIED BY 'agents-pw'; GRANT ALL ON *.* TO 'agents'@'%';");
    s
}

fn hdr_add(all: &[&str]) -> hdrhistogram::Histogram<u64> {
    let mut sum = sizeup::stats::new_histogram();
    for h in all {
        sum.add(sizeup::stats::decode_histogram(h).unwrap()).unwrap();
    }
    sum
}

/// Three agents in namespaces at 2 connections each carry a run of 6 against one server
/// over TLS links: the statements per transaction are those of one process at 6, each
/// agent is stored beside the total, the stored p99 is the p99 of the union of the
/// agents' histograms (recomputed here), and the live OpenMetrics endpoint, scraped
/// during the run, parses with the Python prometheus-client's OpenMetrics parser and
/// its tps is the stored interval's.
#[test]
fn three_agents_carry_a_run_whose_p99_is_their_histograms_union() {
    let s = server_for_agents();
    let hosts = Hosts::new(3);
    let dir = tempfile::tempdir().unwrap();
    let ips: Vec<String> = (0..3).map(|i| hosts.agent_ip(i)).collect();
    let (ca, cert, key) = certificates(dir.path(), &ips);
    let agents: Vec<AgentProcess> = (0..3)
        .map(|i| AgentProcess::start(&hosts.ns(i), &ips[i], &cert, &key, &dir.path().join(format!("a{i}.log"))))
        .collect();
    let list = agents.iter().map(|a| a.addr.clone()).collect::<Vec<_>>().join(",");
    let (host, port) = (hosts.server_ip(0), s.port.to_string());
    let data = ["oltp_read_write", "--tables", "2", "--table-size", "5000"];
    let login = ["--user", "agents", "--password", "agents-pw"];
    assert_eq!(
        s.sizeup(&[&["prepare"], &data[..], &["--socket", &s.socket.display().to_string()]].concat()).unwrap(),
        0
    );

    // One process at 6 connections, then the three agents at 2 each.
    let one = dir.path().join("one.json");
    let args = [&["run"], &data[..], &["--threads", "6", "--time", "4", "--report-interval", "0"]].concat();
    let code = s.sizeup(
        &[&args[..], &login, &["--host", "127.0.0.1", "--port", &port, "--json", one.to_str().unwrap()]].concat(),
    );
    assert_eq!(code.unwrap(), 0);

    let metrics_port = free_port().to_string();
    let metrics = format!("127.0.0.1:{metrics_port}");
    let scrapes = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let scraper = {
        let (scrapes, done, metrics) = (scrapes.clone(), done.clone(), metrics.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(body) = scrape(&metrics) {
                    scrapes.lock().unwrap().push(body);
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        })
    };
    let many = dir.path().join("agents.json");
    let code = s.sizeup(
        &[
            &args[..],
            &login,
            &["--host", &host, "--port", &port, "--json", many.to_str().unwrap()],
            &["--agents", &list, "--token", TOKEN, "--agent-ca", ca.to_str().unwrap(), "--metrics-addr", &metrics],
        ]
        .concat(),
    );
    let after = scrape(&metrics).expect("the endpoint serves after the run, while the process lives");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    scraper.join().unwrap();
    assert_eq!(code.unwrap(), 0, "agent logs: {}", std::fs::read_to_string(dir.path().join("a0.log")).unwrap());

    let (one, many) = (read_json(&one), read_json(&many));
    let per_txn = |d: &serde_json::Value, class: &str| {
        d["summary"][class].as_f64().unwrap() / d["summary"]["transactions"].as_f64().unwrap()
    };
    for class in ["reads", "writes", "other"] {
        let (a, b) = (per_txn(&one, class), per_txn(&many, class));
        assert!((a - b).abs() <= 0.02 * a.max(1.0), "{class} per transaction: one process {a}, agents {b}");
    }
    let shares = many["summary"]["agents"].as_array().expect("each agent's figures are stored");
    assert_eq!(shares.len(), 3);
    for (share, a) in shares.iter().zip(&agents) {
        assert_eq!(share["agent"], a.addr.as_str(), "each agent named as the coordinator named it");
        assert_eq!(share["connections"], 2);
        assert!(share["transactions"].as_u64().unwrap() > 0, "{share}");
        assert!(share["client_cores"].as_f64().is_some(), "its CPU: {share}");
        assert!(share["busiest_thread"].as_f64().is_some(), "its busiest thread: {share}");
    }
    let total: u64 = shares.iter().map(|a| a["transactions"].as_u64().unwrap()).sum();
    assert_eq!(total, many["summary"]["transactions"].as_u64().unwrap(), "the agents' transactions are the run's");
    let hists: Vec<&str> = shares.iter().map(|a| a["histogram"].as_str().unwrap()).collect();
    let union = hdr_add(&hists);
    assert_eq!(union.len(), total, "the agents' histograms hold every transaction once");
    let p99 = union.value_at_quantile(0.99) as f64 / 1000.0;
    assert_eq!(many["summary"]["latency_ms"]["p99"].as_f64().unwrap(), p99, "the stored p99 is the union's");
    let max = union.max() as f64 / 1000.0;
    assert_eq!(many["summary"]["latency_ms"]["max"].as_f64().unwrap(), max);

    // The live figures: every scrape parses; one taken during the run matches the
    // stored interval it shows, and the last one the stored summary.
    let run = many["id"].as_i64().unwrap();
    let scrapes = scrapes.lock().unwrap().clone();
    let parsed: Vec<serde_json::Value> =
        scrapes.iter().chain([&after]).map(|t| parse_openmetrics(dir.path(), t)).collect();
    let intervals = many["intervals"].as_array().unwrap();
    let mut matched = 0;
    for p in &parsed {
        let sample = |name: &str| {
            p.as_array().unwrap().iter().find(|s| s["name"] == name && s["labels"]["run"] == run.to_string().as_str())
        };
        let (Some(tps), Some(end)) = (sample("sizeup_tps"), sample("sizeup_interval_end_seconds")) else { continue };
        let t = end["value"].as_f64().unwrap();
        let stored =
            intervals.iter().find(|iv| (iv["t"].as_f64().unwrap() - t).abs() < 1e-9).expect("a stored interval");
        let stored_tps = stored["tps"].as_f64().unwrap();
        assert!((tps["value"].as_f64().unwrap() - stored_tps).abs() <= 1e-9 * stored_tps.max(1.0), "{tps} vs {stored}");
        let agents_cpu = p.as_array().unwrap().iter().filter(|s| s["name"] == "sizeup_agent_cpu_cores").count();
        assert_eq!(agents_cpu, 3, "each agent's CPU is served");
        matched += 1;
    }
    assert!(matched >= 1, "no scrape saw the run: {scrapes:?}");
    let last = parsed.last().unwrap().as_array().unwrap();
    let final_tps = last
        .iter()
        .find(|s| s["name"] == "sizeup_run_tps" && s["labels"]["run"] == run.to_string().as_str())
        .expect("the finished run's tps is served");
    assert_eq!(final_tps["value"].as_f64().unwrap(), many["summary"]["tps"].as_f64().unwrap());
}

/// An agent killed mid-run ends the run as a lost server does: failed, the agent named,
/// the other agent stopped, and the intervals measured until then kept.
#[test]
fn an_agent_killed_mid_run_fails_the_run_naming_it() {
    let s = server_for_agents();
    let hosts = Hosts::new(2);
    let dir = tempfile::tempdir().unwrap();
    let ips: Vec<String> = (0..2).map(|i| hosts.agent_ip(i)).collect();
    let (ca, cert, key) = certificates(dir.path(), &ips);
    let mut agents: Vec<AgentProcess> = (0..2)
        .map(|i| AgentProcess::start(&hosts.ns(i), &ips[i], &cert, &key, &dir.path().join(format!("a{i}.log"))))
        .collect();
    let list = agents.iter().map(|a| a.addr.clone()).collect::<Vec<_>>().join(",");
    let victim = agents[1].addr.clone();
    let (host, port) = (hosts.server_ip(0), s.port.to_string());
    let data = ["oltp_read_only", "--tables", "1", "--table-size", "2000"];
    assert_eq!(
        s.sizeup(&[&["prepare"], &data[..], &["--socket", &s.socket.display().to_string()]].concat()).unwrap(),
        0
    );
    let json = dir.path().join("lost.json");
    let run = {
        let (s_home, json) = (s.home(), json.clone());
        let args: Vec<String> = [
            &["--home", s_home.as_str(), "run"],
            &data[..],
            &[
                "--threads",
                "4",
                "--time",
                "60",
                "--report-interval",
                "0",
                "--user",
                "agents",
                "--password",
                "agents-pw",
            ],
            &["--host", &host, "--port", &port, "--json", json.to_str().unwrap()],
            &["--agents", &list, "--token", TOKEN, "--agent-ca", ca.to_str().unwrap()],
        ]
        .concat()
        .iter()
        .map(|a| a.to_string())
        .collect();
        std::thread::spawn(move || {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            sizeup(&refs)
        })
    };
    // Once the run has stored an interval, the second agent dies.
    let results = s.results();
    let measuring = eventually(Duration::from_secs(60), || {
        let Ok(db) = rusqlite::Connection::open(&results) else { return false };
        db.query_row("SELECT COUNT(*) FROM intervals", [], |r| r.get::<_, i64>(0)).is_ok_and(|n| n >= 2)
    });
    assert!(measuring, "the run never stored an interval");
    let killed = Instant::now();
    agents[1].kill();
    let code = run.join().unwrap();
    let took = killed.elapsed();
    assert!(!matches!(code, Ok(0)), "a run that lost an agent is no success: {code:?}");
    assert!(took < Duration::from_secs(40), "the run ended once the agent was lost, not at its --time ({took:?})");
    let doc = read_json(&json);
    assert_eq!(doc["status"], "failed");
    let error = doc["error"].as_str().unwrap();
    assert!(error.contains(&format!("agent {victim} was lost")), "{error}");
    assert!(!doc["intervals"].as_array().unwrap().is_empty(), "what was measured is kept");
    let lost: Vec<bool> = doc["summary"]["agents"].as_array().unwrap().iter().map(|a| a["lost"] == true).collect();
    assert_eq!(lost, [false, true], "the lost agent is marked in the stored figures");
}

/// An sshd in a namespace (the test's own, never the system's).
struct Sshd {
    child: Child,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_sshd(dir: &Path, ns: &str, ip: &str) -> Sshd {
    let keygen = |file: &str| {
        let out = Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(dir.join(file)).output();
        assert!(out.expect("ssh-keygen").status.success());
    };
    keygen("host_key");
    keygen("id_ed25519");
    std::fs::copy(dir.join("id_ed25519.pub"), dir.join("authorized_keys")).unwrap();
    let d = dir.display();
    std::fs::write(
        dir.join("sshd_config"),
        format!(
            "ListenAddress {ip}\nPort 22\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\n\
             StrictModes no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("ssh_config"),
        format!(
            "Host *\n  IdentityFile {d}/id_ed25519\n  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n"
        ),
    )
    .unwrap();
    // sshd's privilege separation directory (Debian's package makes it at boot).
    let _ = std::fs::create_dir_all("/run/sshd");
    let child = Command::new("ip")
        .args(["netns", "exec", ns, "/usr/sbin/sshd", "-D", "-e", "-f"])
        .arg(dir.join("sshd_config"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
        .spawn()
        .expect("openssh-server is installed (scripts/test.sh installs it)");
    let up = eventually(Duration::from_secs(20), || std::net::TcpStream::connect((ip, 22)).is_ok());
    assert!(up, "sshd did not listen: {}", std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default());
    Sshd { child }
}

/// `--agents-ssh` logs in through a real sshd, starts `sizeup agent` there (copied, as
/// this test's harness is not sizeup), runs through it, and leaves nothing running or
/// on the host's disk afterwards.
#[test]
fn an_agent_started_over_ssh_runs_and_is_gone_afterwards() {
    let s = server_for_agents();
    let hosts = Hosts::new(1);
    let dir = tempfile::tempdir().unwrap();
    let _sshd = start_sshd(dir.path(), &hosts.ns(0), &hosts.agent_ip(0));
    std::env::set_var("SIZEUP_SSH_COMMAND", format!("ssh -F {}", dir.path().join("ssh_config").display()));
    std::env::set_var("SIZEUP_AGENT_BINARY", env!("CARGO_BIN_EXE_sizeup"));
    let before = copies();
    let data = ["oltp_read_only", "--tables", "1", "--table-size", "2000"];
    assert_eq!(
        s.sizeup(&[&["prepare"], &data[..], &["--socket", &s.socket.display().to_string()]].concat()).unwrap(),
        0
    );
    let json = dir.path().join("ssh.json");
    let (host, port) = (hosts.server_ip(0), s.port.to_string());
    let dest = format!("root@{}", hosts.agent_ip(0));
    let code = s.sizeup(
        &[
            &["run"],
            &data[..],
            &["--threads", "2", "--time", "3", "--report-interval", "0", "--user", "agents", "--password", "agents-pw"],
            &["--host", &host, "--port", &port, "--json", json.to_str().unwrap(), "--agents-ssh", &dest],
        ]
        .concat(),
    );
    assert_eq!(code.unwrap(), 0, "sshd: {}", std::fs::read_to_string(dir.path().join("sshd.log")).unwrap_or_default());
    let doc = read_json(&json);
    let shares = doc["summary"]["agents"].as_array().unwrap();
    assert_eq!(shares.len(), 1);
    assert_eq!(shares[0]["agent"], dest.as_str());
    assert_eq!(shares[0]["transactions"], doc["summary"]["transactions"]);
    assert!(doc["summary"]["transactions"].as_u64().unwrap() > 0);
    // The agent stopped with the command, and its copy removed itself as it started.
    let gone = eventually(Duration::from_secs(10), || agent_processes().is_empty());
    assert!(gone, "agents still running: {:?}", agent_processes());
    assert_eq!(copies(), before, "the copied binary is gone");
}

/// Copies `--agents-ssh` made in /tmp.
fn copies() -> Vec<String> {
    std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sizeup-agent-"))
        .collect()
}

fn agent_processes() -> Vec<String> {
    let out = Command::new("pgrep").args(["-af", "agent --stdio"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.contains("pgrep")).map(String::from).collect()
}

/// One GET of the metrics endpoint, the body.
fn scrape(addr: &str) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(addr)?;
    c.set_read_timeout(Some(Duration::from_secs(5)))?;
    c.write_all(format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())?;
    let mut text = String::new();
    c.read_to_string(&mut text)?;
    let (head, body) = text.split_once("\r\n\r\n").ok_or_else(|| std::io::Error::other("no body"))?;
    assert!(head.contains("application/openmetrics-text"), "{head}");
    Ok(body.to_string())
}

/// The samples, as the Python prometheus-client's OpenMetrics parser reads them (a
/// malformed exposition fails the test).
fn parse_openmetrics(dir: &Path, text: &str) -> serde_json::Value {
    let file = dir.join("scrape.txt");
    std::fs::write(&file, text).unwrap();
    let script =
        "import json,sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as p\n\
                  out=[]\nfor f in p(open(sys.argv[1]).read()):\n  for s in f.samples:\n    \
                  out.append({'name':s.name,'labels':s.labels,'value':s.value})\nprint(json.dumps(out))\n";
    let out = Command::new("/usr/bin/python3").args(["-c", script]).arg(&file).output().expect("python3");
    assert!(out.status.success(), "the OpenMetrics parser refused:\n{}\n{text}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Bad agent options get one clear line each, a non-zero exit and no run: an agent off
/// loopback without TLS, without a token, with a short token; a coordinator with another
/// token, a plain link to an agent off loopback, fewer connections than agents, a Lua
/// script, a data command with agents.
#[test]
fn bad_agent_options_are_refused_in_one_line() {
    let refused = |args: &[&str], says: &str| {
        let e = sizeup(args).expect_err("refused");
        let text = e.to_string();
        assert!(text.contains(says), "{args:?}: {text}");
        assert!(text.lines().count() <= 2, "one or two lines: {text}");
    };
    refused(&["agent", "--listen", "10.9.9.9:7800", "--token", TOKEN], "loopback only");
    refused(&["agent", "--listen", "127.0.0.1:7800"], "--token");
    refused(&["agent", "--listen", "127.0.0.1:7800", "--token", "short"], "at least 16");
    refused(&["agent", "--listen", "nowhere", "--token", TOKEN], "address and port");

    let s = TestServer::start();
    let sock = s.socket.display().to_string();
    let data = ["oltp_read_only", "--tables", "1", "--table-size", "500", "--socket", &sock];
    assert_eq!(s.sizeup(&[&["prepare"], &data[..]].concat()).unwrap(), 0);
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let log = s.home.path().join("agent.log");
    let mut agent = Command::new(env!("CARGO_BIN_EXE_sizeup"))
        .args(["agent", "--listen", &addr, "--token", TOKEN])
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    assert!(eventually(Duration::from_secs(20), || std::fs::read_to_string(&log).unwrap().contains("listening")));
    let run = |extra: &[&str]| {
        let h = s.home();
        let args =
            [&["--home", h.as_str(), "run"], &data[..], &["--time", "1", "--report-interval", "0"], extra].concat();
        sizeup(&args).expect_err("refused").to_string()
    };
    let wrong = run(&["--threads", "2", "--agents", &addr, "--token", "another-token-0123456789"]);
    assert!(wrong.contains(&format!("agent {addr} refused")) && wrong.contains("token"), "{wrong}");
    let few = run(&["--threads", "1", "--agents", &format!("{addr},{addr}"), "--token", TOKEN]);
    assert!(few.contains("at least one connection per agent") || few.contains("busy"), "{few}");
    let plain = run(&["--threads", "2", "--agents", "10.9.9.9:7800", "--token", TOKEN]);
    assert!(plain.contains("10.9.9.9:7800"), "{plain}");
    let script = std::path::Path::new("/usr/share/sysbench/oltp_read_only.lua");
    if script.exists() {
        let h = s.home();
        let args = ["--home", h.as_str(), "run", "/usr/share/sysbench/oltp_read_only.lua", "--socket", &sock];
        let e = sizeup(&[&args[..], &["--threads", "2", "--time", "1", "--agents", &addr, "--token", TOKEN]].concat());
        let e = e.expect_err("a script runs from one process").to_string();
        assert!(e.contains("runs from this process only"), "{e}");
    }
    refused(&[&["--home", &s.home(), "prepare"], &data[..], &["--agents", &addr]].concat(), "this host");
    let _ = agent.kill();
    let _ = agent.wait();
    // Nothing was stored as a run.
    let db = rusqlite::Connection::open(s.results()).unwrap();
    let runs: i64 = db.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)).unwrap_or(0);
    assert_eq!(runs, 0, "no run stored for refused options");
}
