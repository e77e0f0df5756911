//! The agent's side: `sizeup agent --listen ADDR` waits for a coordinator, proves it
//! (the shared token, or a client certificate its CA signed), and runs each share it is
//! given with the engine every run uses, relaying what its threads count. Without TLS it
//! listens on loopback only: the token's proof keeps others out, but the server's
//! password and the figures would cross the network in clear. `--stdio` serves one
//! coordinator over stdin and stdout (started over SSH, whose login is the proof).

use super::wire::{self, Down, Up, Work};
use super::{Order, Share};
use crate::target::{Target, Targets, Tls, TlsArgs};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};

/// `sizeup agent --listen`'s options.
#[derive(Clone, Debug, Default)]
pub struct ListenOptions {
    pub addr: String,
    pub token: Option<String>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// Coordinators presenting a certificate this CA signed need no token.
    pub client_ca: Option<PathBuf>,
    /// Exit once the first coordinator has left (a pod of a Kubernetes Job completes).
    pub once: bool,
}

/// How a coordinator proves itself on this link.
#[derive(Clone)]
enum Proof {
    /// The link is already authenticated (SSH, or a verified client certificate).
    Trusted,
    Token(String),
}

/// Checks the options, binds, and serves coordinators one at a time until the process
/// ends; `ready` is called with the bound address.
pub fn listen(o: &ListenOptions, ready: &dyn Fn(SocketAddr, &str)) -> Result<(), String> {
    let addr: SocketAddr = o
        .addr
        .parse()
        .map_err(|_| format!("--listen {}: give an address and port, e.g. 0.0.0.0:7800 or 127.0.0.1:7800", o.addr))?;
    let tls = match (&o.tls_cert, &o.tls_key) {
        (Some(c), Some(k)) => Some(server_config(c, k, o.client_ca.as_deref())?),
        (None, None) => None,
        _ => return Err("--tls-cert and --tls-key go together: give both or neither".into()),
    };
    if tls.is_none() && !addr.ip().is_loopback() {
        return Err(format!(
            "--listen {addr}: without TLS an agent listens on loopback only (the server's password and the \
             figures would cross the network in clear); give --tls-cert and --tls-key, or listen on 127.0.0.1"
        ));
    }
    if tls.is_none() && o.client_ca.is_some() {
        return Err("--client-ca checks certificates on a TLS link: give --tls-cert and --tls-key too".into());
    }
    let token = o.token.clone().filter(|t| !t.is_empty());
    if token.is_none() && o.client_ca.is_none() {
        return Err("an agent accepts work only from a coordinator that proves itself: give --token (or set \
             SIZEUP_AGENT_TOKEN), the same on both sides, or --client-ca"
            .into());
    }
    if token.as_ref().is_some_and(|t| t.len() < 16) {
        return Err("--token: give at least 16 characters (e.g. `openssl rand -hex 16`)".into());
    }
    let rt = runtime()?;
    rt.block_on(async move {
        let listener =
            tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("--listen {addr}: cannot listen: {e}"))?;
        let bound = listener.local_addr().map_err(|e| e.to_string())?;
        let how = match (&tls, &token) {
            (Some(_), Some(_)) if o.client_ca.is_some() => "TLS; a token or a client certificate",
            (Some(_), Some(_)) => "TLS; the shared token",
            (Some(_), None) => "TLS; a client certificate",
            (None, _) => "loopback only, no TLS; the shared token",
        };
        ready(bound, how);
        let busy = Arc::new(tokio::sync::Mutex::new(()));
        let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
        let (left_tx, mut left) = mpsc::unbounded_channel::<()>();
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a,
                _ = left.recv() => return Ok(()),
            };
            let (tcp, peer) = match accepted {
                Ok(x) => x,
                Err(e) => {
                    eprintln!("agent: accepting a connection failed: {e}");
                    continue;
                }
            };
            let left_tx = o.once.then(|| left_tx.clone());
            let _ = tcp.set_nodelay(true);
            let (busy, acceptor, token) = (busy.clone(), acceptor.clone(), token.clone());
            tokio::spawn(async move {
                let (r, w, trusted): (Reader, Writer, bool) = match acceptor {
                    Some(a) => match a.accept(tcp).await {
                        Ok(s) => {
                            let trusted = s.get_ref().1.peer_certificates().is_some_and(|c| !c.is_empty());
                            let (r, w) = tokio::io::split(s);
                            (Box::new(r), Box::new(w), trusted)
                        }
                        Err(e) => {
                            eprintln!("agent: TLS with {peer} failed: {e}");
                            return;
                        }
                    },
                    None => {
                        let (r, w) = tokio::io::split(tcp);
                        (Box::new(r), Box::new(w), false)
                    }
                };
                let proof = match (trusted, token) {
                    (true, _) => Proof::Trusted,
                    (false, Some(t)) => Proof::Token(t),
                    (false, None) => {
                        let mut w = w;
                        let why = "this agent takes coordinators with a client certificate only".to_string();
                        let _ = wire::send(&mut w, &Up::Refused { why }).await;
                        return;
                    }
                };
                let Ok(_held) = busy.try_lock() else {
                    let mut w = w;
                    let why = "busy with another coordinator's run".to_string();
                    let _ = wire::send(&mut w, &Up::Refused { why }).await;
                    return;
                };
                eprintln!("agent: coordinator {peer} connected");
                match session(r, w, proof).await {
                    Ok(()) => {
                        eprintln!("agent: coordinator {peer} left");
                        // Only a coordinator that proved itself ends a --once agent.
                        if let Some(tx) = left_tx {
                            let _ = tx.send(());
                        }
                    }
                    Err(e) => eprintln!("agent: coordinator {peer}: {e}"),
                }
            });
        }
    })
}

/// Serves one coordinator over stdin and stdout (`--agents-ssh`). Standard output is
/// the link: anything else printed goes to standard error instead.
pub fn stdio(remove_self: bool) -> Result<(), String> {
    if remove_self {
        // A copy the coordinator made for this run: gone from the disk at once, running on.
        if let Ok(me) = std::env::current_exe() {
            let _ = std::fs::remove_file(me);
        }
    }
    use std::os::fd::FromRawFd;
    // SAFETY: dup and dup2 on the process's own standard descriptors.
    let link = unsafe {
        let fd = libc::dup(1);
        if fd < 0 || libc::dup2(2, 1) < 0 {
            return Err("cannot set standard output aside for the link".into());
        }
        std::fs::File::from_raw_fd(fd)
    };
    let rt = runtime()?;
    rt.block_on(async move {
        let r: Reader = Box::new(tokio::io::stdin());
        let w: Writer = Box::new(tokio::fs::File::from_std(link));
        session(r, w, Proof::Trusted).await
    })
}

/// The agent's own runtime: one thread for its links (its runs have their own).
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the agent's runtime: {e}"))
}

type Reader = Box<dyn AsyncRead + Unpin + Send>;
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// One coordinator: the handshake, then each share it sends, until it leaves.
async fn session(mut r: Reader, mut w: Writer, proof: Proof) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let nonce = wire::nonce();
    let hello = Up::Hello {
        protocol: wire::PROTOCOL,
        version: env!("CARGO_PKG_VERSION").into(),
        host: std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map_or_else(|_| "unknown".into(), |h| h.trim().to_string()),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        nonce: nonce.clone(),
    };
    wire::send(&mut w, &hello).await.map_err(io)?;
    let auth = crate::timer::timeout(std::time::Duration::from_secs(30), wire::recv::<_, Down>(&mut r))
        .await
        .map_err(|_| "no proof came in 30 s".to_string())?
        .map_err(io)?;
    let refuse = |why: &str| Up::Refused { why: why.into() };
    match (auth, &proof) {
        (Some(Down::Auth { protocol, .. }), _) if protocol != wire::PROTOCOL => {
            let why = format!("this agent speaks protocol {}, the coordinator {protocol}", wire::PROTOCOL);
            wire::send(&mut w, &refuse(&why)).await.map_err(io)?;
            return Err(why);
        }
        (Some(Down::Auth { .. }), Proof::Trusted) => {}
        (Some(Down::Auth { proof: p, .. }), Proof::Token(t)) if wire::proves(t, &nonce, &p) => {}
        (Some(Down::Auth { .. }), Proof::Token(_)) => {
            wire::send(&mut w, &refuse("the token does not match this agent's")).await.map_err(io)?;
            return Err("a coordinator with another token was refused".into());
        }
        _ => return Err("the coordinator did not prove itself".into()),
    }
    wire::send(&mut w, &Up::Accepted).await.map_err(io)?;
    // Frames are read on a task of their own: a read cut off halfway is lost.
    let (down_tx, mut down) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok(Some(m)) = wire::recv::<_, Down>(&mut r).await {
            if down_tx.send(m).is_err() {
                return;
            }
        }
    });
    loop {
        match down.recv().await {
            Some(Down::Work(work)) => {
                if !run_share(*work, &mut down, &mut w).await? {
                    return Ok(());
                }
            }
            Some(Down::Bye) | None => return Ok(()),
            Some(_) => {}
        }
    }
}

/// Runs one share, relaying it; false when the coordinator left meanwhile.
async fn run_share(work: Work, down: &mut mpsc::UnboundedReceiver<Down>, w: &mut Writer) -> Result<bool, String> {
    let (up_tx, mut up) = mpsc::unbounded_channel();
    let (orders, order_rx) = watch::channel(Order::Wait);
    let share = Share { index: work.index, first: work.first, up: up_tx, orders: order_rx };
    eprintln!(
        "agent: {} connection(s) {}..{} of {}",
        work.spec.threads,
        work.first,
        work.first + work.spec.threads,
        work.workload
    );
    let worker = std::thread::Builder::new()
        .name("sizeup-agent-run".into())
        .spawn(move || perform(work, share))
        .map_err(|e| format!("cannot start the run: {e}"))?;
    let mut here = true;
    loop {
        tokio::select! {
            m = up.recv() => match m {
                Some(m) => {
                    if wire::send(w, &Up::of(m)).await.is_err() {
                        orders.send_replace(Order::Stop);
                        here = false;
                    }
                }
                None => break,
            },
            d = down.recv(), if here => match d {
                Some(Down::Go) => { orders.send_replace(Order::Go); }
                Some(Down::Stop) => { orders.send_replace(Order::Stop); }
                Some(Down::Bye) | None => {
                    orders.send_replace(Order::Stop);
                    here = false;
                }
                Some(_) => {}
            },
        }
    }
    // The run's thread has dropped its share: it has ended, or could not start.
    let ended = tokio::task::spawn_blocking(move || worker.join()).await;
    let failed = match ended {
        Ok(Ok(Ok(()))) => None,
        Ok(Ok(Err(e))) => Some(e),
        _ => Some("the run's thread panicked".to_string()),
    };
    if let (Some(error), true) = (failed, here) {
        wire::send(w, &Up::Failed { error }).await.map_err(|e| e.to_string())?;
    }
    Ok(here)
}

/// The share's run, as `sizeup run` would run it from here.
fn perform(work: Work, share: Share) -> Result<(), String> {
    let workload = crate::workload::build(&work.workload, &work.options).map_err(|e| e.to_string())?;
    let mut targets = Vec::new();
    for t in &work.targets {
        let tls =
            Tls::from_args(&TlsArgs { ssl_mode: t.ssl_mode.clone(), ssl_ca: t.ssl_ca.clone(), ..Default::default() })
                .map_err(|e| e.to_string())?;
        targets.push(Target {
            host: t.host.clone(),
            port: t.port,
            socket: None,
            user: t.user.clone(),
            password: t.password.clone(),
            database: t.database.clone(),
            tls,
        });
    }
    let targets = Targets::new(targets);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let first = targets.first().clone();
    let ready = rt.block_on(async {
        let mut conn = first.connect().await.map_err(|e| e.to_string())?;
        let ready = workload.start(&mut conn, &first.database, &work.spec, false).await.map_err(|e| e.to_string());
        let _ = conn.disconnect().await;
        ready
    })?;
    drop(rt);
    let ctx = crate::exec::RunContext { share: Some(share), ..Default::default() };
    ready.run(&targets, &work.spec, &ctx, &mut |_| {}).map(|_| ()).map_err(|e| e.to_string())
}

/// The agent's TLS: its certificate, and the CA of coordinators' certificates when given.
fn server_config(
    cert: &std::path::Path,
    key: &std::path::Path,
    client_ca: Option<&std::path::Path>,
) -> Result<Arc<rustls::ServerConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let read = |p: &std::path::Path, opt: &str| {
        crate::client::tls::read_pem(p).map_err(|e| format!("{opt} {}: {e}", p.display()))
    };
    let certs = |p: &std::path::Path, opt: &str| -> Result<Vec<CertificateDer<'static>>, String> {
        let c = CertificateDer::pem_slice_iter(&read(p, opt)?)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{opt} {}: {e}", p.display()))?;
        if c.is_empty() {
            return Err(format!("{opt} {} holds no PEM certificate", p.display()));
        }
        Ok(c)
    };
    let chain = certs(cert, "--tls-cert")?;
    let key = PrivateKeyDer::from_pem_slice(&read(key, "--tls-key")?)
        .map_err(|e| format!("--tls-key {}: no private key ({e})", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up failed: {e}"))?;
    let builder = match client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in certs(ca, "--client-ca")? {
                roots.add(c).map_err(|e| format!("--client-ca {}: {e}", ca.display()))?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .map_err(|e| format!("--client-ca {}: {e}", ca.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let config = builder.with_single_cert(chain, key).map_err(|e| format!("--tls-cert/--tls-key: {e}"))?;
    Ok(Arc::new(config))
}
