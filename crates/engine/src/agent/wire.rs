//! What a coordinator and its agents say to each other: length-prefixed JSON frames,
//! latency as hdrhistogram's V2 serialisation (deflated, base64) so the coordinator adds
//! the agents' histograms exactly, and the proof of the shared token (an HMAC of the
//! agent's nonce: the token itself never crosses the wire).

use crate::exec::worker::Tally;
use crate::exec::RunSpec;
use crate::options::WorkloadArgs;
use crate::stats::{decode_histogram, encode_histogram, QueryCounts, Recorder};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The protocol's version: an agent and a coordinator of different ones refuse each
/// other (their messages would not mean the same).
pub const PROTOCOL: u32 = 1;

/// The largest frame either side accepts: a tick of a few histograms is kilobytes.
const MAX_FRAME: u32 = 64 << 20;

/// From an agent to its coordinator.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Up {
    /// First words on a connection: who it is, and the nonce the token proof signs.
    Hello {
        protocol: u32,
        version: String,
        host: String,
        cpus: u32,
        nonce: String,
    },
    Accepted,
    Refused {
        why: String,
    },
    /// Its connections are open: it waits for the go.
    Ready,
    /// The work could not start (a connection refused, bad options).
    Failed {
        error: String,
    },
    /// Interval `k`, all its client threads' recorders merged.
    Tick {
        k: u64,
        rec: WireRecorder,
        cpu: AgentCpu,
    },
    /// Still running (sent every second, so a silent agent is told from a quiet one).
    Alive {
        cpu: AgentCpu,
    },
    /// Its client threads have ended.
    Final(Box<Final>),
}

/// An agent's last word on a run.
#[derive(Debug, Serialize, Deserialize)]
pub struct Final {
    /// What its threads counted after the last whole interval.
    pub rec: WireRecorder,
    /// Seconds from its go to the end of its last thread.
    pub end_s: f64,
    /// Per connection: (connection over the whole run, transactions, busy microseconds).
    pub tallies: Vec<(u32, u64, u64)>,
    pub cpu: AgentCpu,
    /// Open loop: arrivals of its share due before its end that never started.
    pub missed: u64,
    /// Why its part failed, if it did (a lost or stalled server, a fatal error).
    pub fatal: Option<String>,
    pub ended_by_workload: u64,
}

/// An agent's CPU since the go: its whole process, and each client thread.
pub type AgentCpu = crate::exec::remote::ShareCpu;

/// From the coordinator to an agent.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Down {
    /// HMAC-SHA256 of the agent's nonce under the shared token, hex.
    Auth {
        protocol: u32,
        proof: String,
    },
    Work(Box<Work>),
    Go,
    Stop,
    /// The coordinator is done with this agent: the link closes after it.
    Bye,
}

/// One agent's share of a run.
#[derive(Debug, Serialize, Deserialize)]
pub struct Work {
    pub workload: String,
    pub options: WorkloadArgs,
    pub targets: Vec<WireTarget>,
    /// Its share: its connections, its rate and events, its client threads.
    pub spec: RunSpec,
    /// Its first connection's number over the whole run (seeds, round robin, TPC-C's
    /// terminals and their warehouses follow it).
    pub first: u32,
    /// Its place among the agents (its arrival schedule's seed).
    pub index: u32,
}

/// A server as an agent reaches it. The password travels only over the authenticated
/// link (TLS, loopback or SSH) and is kept in memory.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireTarget {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    pub ssl_mode: Option<String>,
    pub ssl_ca: Option<std::path::PathBuf>,
}

/// A recorder as it crosses the wire.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct WireRecorder {
    pub types: Vec<WireType>,
    pub queries: QueryCounts,
    pub reconnects: u64,
    pub backlog: u64,
    pub concurrency: u64,
    pub reconnect_failures: u64,
    pub outage: bool,
    pub stuck_us: Option<u64>,
    pub late_us: Option<u64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct WireType {
    /// hdrhistogram V2 (deflate), base64.
    pub latency: String,
    pub transactions: u64,
    pub rollbacks: u64,
    pub errors: u64,
}

impl WireRecorder {
    pub fn of(r: &Recorder) -> WireRecorder {
        let us = |d: Option<Duration>| d.map(|d| d.as_micros() as u64);
        WireRecorder {
            types: r
                .types
                .iter()
                .map(|t| WireType {
                    latency: encode_histogram(&t.latency),
                    transactions: t.transactions,
                    rollbacks: t.rollbacks,
                    errors: t.errors,
                })
                .collect(),
            queries: r.queries,
            reconnects: r.reconnects,
            backlog: r.backlog,
            concurrency: r.concurrency,
            reconnect_failures: r.reconnect_failures,
            outage: r.outage,
            stuck_us: us(r.stuck),
            late_us: us(r.late),
        }
    }

    /// The recorder, with `types` transaction types (the coordinator's names).
    pub fn recorder(&self, types: usize) -> Result<Recorder, String> {
        if self.types.len() != types.max(1) {
            return Err(format!("{} transaction type(s) where {} were expected", self.types.len(), types.max(1)));
        }
        let mut r = Recorder::new(types);
        for (mine, w) in r.types.iter_mut().zip(&self.types) {
            let h = decode_histogram(&w.latency).map_err(|e| e.to_string())?;
            mine.latency.add(&h).map_err(|e| format!("a histogram out of bounds: {e:?}"))?;
            mine.transactions = w.transactions;
            mine.rollbacks = w.rollbacks;
            mine.errors = w.errors;
        }
        let d = |us: Option<u64>| us.map(Duration::from_micros);
        r.queries = self.queries;
        r.reconnects = self.reconnects;
        r.backlog = self.backlog;
        r.concurrency = self.concurrency;
        r.reconnect_failures = self.reconnect_failures;
        r.outage = self.outage;
        r.stuck = d(self.stuck_us);
        r.late = d(self.late_us);
        Ok(r)
    }
}

pub fn tallies_of(t: &[Tally]) -> Vec<(u32, u64, u64)> {
    t.iter().map(|t| (t.connection, t.transactions, t.busy_us)).collect()
}

pub fn tallies_from(t: &[(u32, u64, u64)]) -> Vec<Tally> {
    t.iter().map(|&(connection, transactions, busy_us)| Tally { connection, transactions, busy_us }).collect()
}

impl Up {
    /// A share's message as it crosses the wire.
    pub fn of(r: crate::exec::remote::Relayed) -> Up {
        use crate::exec::remote::Relayed;
        match r {
            Relayed::Ready => Up::Ready,
            Relayed::Tick { k, rec, cpu } => Up::Tick { k, rec: WireRecorder::of(&rec), cpu },
            Relayed::Alive { cpu } => Up::Alive { cpu },
            Relayed::Final(f) => Up::Final(Box::new(Final {
                rec: WireRecorder::of(&f.rec),
                end_s: f.end_s,
                tallies: tallies_of(&f.tallies),
                cpu: f.cpu,
                missed: f.missed,
                fatal: f.fatal,
                ended_by_workload: f.ended_by_workload,
            })),
        }
    }
}

/// Writes one frame.
pub async fn send<W: AsyncWrite + Unpin + ?Sized, T: Serialize>(w: &mut W, msg: &T) -> std::io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    w.write_all(&(body.len() as u32).to_be_bytes()).await?;
    w.write_all(&body).await?;
    w.flush().await
}

/// Reads one frame; `None` at a clean end of the stream.
pub async fn recv<R: AsyncRead + Unpin + ?Sized, T: for<'de> Deserialize<'de>>(
    r: &mut R,
) -> std::io::Result<Option<T>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes(len);
    if len > MAX_FRAME {
        return Err(std::io::Error::other(format!("a frame of {len} bytes: not a sizeup agent's")));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body).await?;
    serde_json::from_slice(&body).map(Some).map_err(|e| std::io::Error::other(format!("a message not understood: {e}")))
}

/// A fresh nonce for the token proof.
pub fn nonce() -> String {
    let mut b = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b).expect("the OS has randomness");
    hex(&b)
}

const PROOF_CONTEXT: &[u8] = b"sizeup agent token proof v1\n";

/// What a coordinator holding `token` answers to `nonce`.
pub fn proof(token: &str, nonce: &str) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, token.as_bytes());
    let mut ctx = ring::hmac::Context::with_key(&key);
    ctx.update(PROOF_CONTEXT);
    ctx.update(nonce.as_bytes());
    hex(ctx.sign().as_ref())
}

/// Whether `proof` answers `nonce` under `token` (compared in constant time).
pub fn proves(token: &str, nonce: &str, proof: &str) -> bool {
    let Some(tag) = unhex(proof) else { return false };
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, token.as_bytes());
    let msg = [PROOF_CONTEXT, nonce.as_bytes()].concat();
    ring::hmac::verify(&key, &msg, &tag).is_ok()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_crosses_the_wire_unchanged() {
        let mut r = Recorder::new(2);
        for us in [150, 900, 12_000, 2_500_000] {
            r.transaction(1, us, us == 900);
        }
        r.error(0);
        r.queries.reads = 14;
        r.backlog = 3;
        r.stuck = Some(Duration::from_millis(1500));
        let back = WireRecorder::of(&r).recorder(2).unwrap();
        assert_eq!(back.types[1].latency, r.types[1].latency);
        assert_eq!(back.types[1].latency.value_at_quantile(0.99), r.types[1].latency.value_at_quantile(0.99));
        assert_eq!((back.transactions(), back.rollbacks(), back.errors()), (4, 1, 1));
        assert_eq!((back.queries.reads, back.backlog, back.stuck), (14, 3, r.stuck));
        assert!(WireRecorder::of(&r).recorder(3).is_err(), "another workload's types are refused");
    }

    #[test]
    fn only_the_token_proves_the_nonce() {
        let n = nonce();
        let p = proof("s3cret", &n);
        assert!(proves("s3cret", &n, &p));
        assert!(!proves("s3cret!", &n, &p), "another token");
        assert!(!proves("s3cret", &nonce(), &p), "another nonce: a proof cannot be replayed");
        assert!(!proves("s3cret", &n, "zz"), "not hex");
        assert!(!p.contains("s3cret"));
    }

    #[tokio::test]
    async fn frames_round_trip_and_end_cleanly() {
        let (mut a, mut b) = tokio::io::duplex(1 << 16);
        send(&mut a, &Down::Go).await.unwrap();
        send(&mut a, &Down::Stop).await.unwrap();
        drop(a);
        assert!(matches!(recv::<_, Down>(&mut b).await.unwrap(), Some(Down::Go)));
        assert!(matches!(recv::<_, Down>(&mut b).await.unwrap(), Some(Down::Stop)));
        assert!(recv::<_, Down>(&mut b).await.unwrap().is_none());
    }
}
