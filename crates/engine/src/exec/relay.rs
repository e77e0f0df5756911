//! An agent's side of a run: its client threads run as any run's do, and instead of
//! measuring, each interval they have all handed over goes to the coordinator, merged,
//! with the agent's CPU; the coordinator's go and stop come the other way.

use super::remote::{Order, Relayed, Share, ShareCpu, ShareEnd};
use super::{clock, Go, Msg, RunError, RunResult, RunSpec};
use super::{pacing::Arrivals, worker::Control};
use crate::monitor;
use crate::stats::{Recorder, Summary};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// How often a running agent says it is alive between intervals.
pub const ALIVE_EVERY: Duration = Duration::from_secs(1);

/// The CPU an agent has used since its go.
struct Cpu {
    process0: f64,
    clocks: Vec<Option<libc::clockid_t>>,
    start: Vec<f64>,
    /// A client thread's own reading as it ended (its clock is gone after).
    ended: Vec<Option<f64>>,
}

impl Cpu {
    fn start(handles: &[std::thread::JoinHandle<()>]) -> Cpu {
        let clocks: Vec<_> = handles.iter().map(monitor::thread_clock).collect();
        let start = clocks.iter().map(|c| c.and_then(monitor::clock_seconds).unwrap_or(0.0)).collect();
        Cpu { process0: monitor::self_cpu_seconds(), ended: vec![None; clocks.len()], clocks, start }
    }

    fn now(&self) -> ShareCpu {
        let threads_s = (0..self.clocks.len())
            .map(|i| {
                let now = self.ended[i].or_else(|| self.clocks[i].and_then(monitor::clock_seconds));
                now.map_or(0.0, |n| (n - self.start[i]).max(0.0))
            })
            .collect();
        ShareCpu { process_s: monitor::self_cpu_seconds() - self.process0, threads_s }
    }
}

/// Relays the share's run; returns once every client thread has ended (or the work was
/// called off before the go). The result is empty: the coordinator measures.
#[allow(clippy::too_many_arguments)]
pub(super) fn relay(
    share: &Share,
    handles: Vec<std::thread::JoinHandle<()>>,
    mut rx: mpsc::UnboundedReceiver<Msg>,
    go: watch::Sender<Go>,
    (shards, types): (u32, usize),
    spec: &RunSpec,
    control: &Control,
    arrivals: Option<&Mutex<Arrivals>>,
) -> Result<RunResult, RunError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RunError::Client(format!("cannot start the relaying runtime: {e}")))?;
    let up = &share.up;
    let outcome = rt.block_on(async {
        for _ in 0..shards {
            super::ready_or_abort(rx.recv().await, &go)?;
        }
        let _ = up.send(Relayed::Ready);
        let mut orders = share.orders.clone();
        let order = *orders.wait_for(|o| *o != Order::Wait).await.map_err(|_| RunError::GroupFailed)?;
        if order == Order::Stop {
            go.send_replace(Go::Abort);
            return Ok(false);
        }
        let start = Instant::now();
        go.send_replace(Go::Start(start));
        let mut cpu = Cpu::start(&handles);
        let mut clock = clock::IntervalClock::new(shards, types);
        let (mut tail, mut tallies, mut finals, mut end) = (Recorder::new(types), Vec::new(), 0, start);
        let mut alive = tokio::time::interval_at(start + ALIVE_EVERY, ALIVE_EVERY);
        while finals < shards {
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(Msg::Tick(k, rec)) => {
                        for (k, rec) in clock.tick(k, &rec) {
                            let _ = up.send(Relayed::Tick { k, rec, cpu: cpu.now() });
                        }
                    }
                    Some(Msg::Final(rec, at, t, (index, thread_cpu))) => {
                        tail.merge(&rec);
                        tallies.extend(t);
                        end = end.max(at);
                        if let Some(e) = cpu.ended.get_mut(index) {
                            *e = Some(thread_cpu);
                        }
                        finals += 1;
                    }
                    Some(_) => {}
                    None => break,
                },
                changed = orders.changed() => {
                    if changed.is_err() || *orders.borrow() == Order::Stop {
                        control.stop();
                    }
                }
                _ = alive.tick() => { let _ = up.send(Relayed::Alive { cpu: cpu.now() }); }
            }
        }
        clock.leftovers(&mut tail);
        let end_s = (end - start).as_secs_f64();
        let until = spec.time.map_or(end_s, |t| t.as_secs_f64().min(end_s));
        let missed = arrivals.map_or(0, |a| a.lock().expect("not poisoned").backlog(until));
        let fatal = control.fatal().or_else(|| {
            control.lost_since().map(|at| {
                format!("the server was lost {:.1} s into the run", at.saturating_duration_since(start).as_secs_f64())
            })
        });
        let fatal = fatal.or_else(|| {
            (control.abandoned() > 0)
                .then(|| format!("{} transaction(s) had no answer at the end", control.abandoned()))
        });
        let _ = up.send(Relayed::Final(Box::new(ShareEnd {
            rec: tail,
            end_s,
            tallies,
            cpu: cpu.now(),
            missed,
            fatal,
            ended_by_workload: control.ended_by_workload(),
        })));
        Ok(true)
    });
    for h in handles {
        let _ = h.join();
    }
    let ended = match outcome? {
        true => super::Ended::Completed,
        false => super::Ended::Interrupted,
    };
    Ok(RunResult {
        intervals: Vec::new(),
        summary: Summary::from_recorder(&Recorder::new(types), &[], 0.0, 0),
        histograms: Vec::new(),
        ended,
        fatal: None,
    })
}
