//! The server host's node_exporter: its readings and samples are the model's
//! ([`sizeup_model::monitor::node`]); scraping it over HTTP is here.

pub use sizeup_model::monitor::node::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// One scrape of `url` within `timeout`.
pub fn scrape(url: &str, timeout: Duration) -> Result<NodeReading, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(timeout)).build().into();
    let text = agent
        .get(url)
        .call()
        .map_err(|e| format!("{url}: {e}"))?
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("{url}: {e}"))?;
    NodeReading::parse(&text).ok_or_else(|| format!("{url} has no node_cpu_seconds_total: is it a node_exporter?"))
}

/// Scrapes a node_exporter every `every` on a thread of its own until dropped; the
/// worker loop takes the readings as it closes each interval.
pub struct Scraper {
    rx: mpsc::Receiver<(Instant, NodeReading)>,
    stop: Arc<AtomicBool>,
    last: Option<(Instant, NodeReading)>,
    newest: Option<(Instant, NodeReading)>,
}

impl Scraper {
    pub fn start(url: String, every: Duration) -> Scraper {
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::Builder::new()
            .name("sizeup-node".into())
            .spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    let t0 = Instant::now();
                    if let Ok(r) = scrape(&url, every.max(Duration::from_millis(200))) {
                        if tx.send((Instant::now(), r)).is_err() {
                            break;
                        }
                    }
                    std::thread::sleep(every.saturating_sub(t0.elapsed()));
                }
            })
            .expect("a thread");
        Scraper { rx, stop, last: None, newest: None }
    }

    /// The figures since the previous call's newest reading, over the readings' own
    /// span; None (a gap) when no new reading came.
    pub fn close(&mut self) -> Option<NodeSample> {
        while let Ok(r) = self.rx.try_recv() {
            self.newest = Some(r);
        }
        let newest = self.newest.take()?;
        let sample =
            self.last.as_ref().and_then(|(t, a)| NodeSample::between(a, &newest.1, (newest.0 - *t).as_secs_f64()));
        self.last = Some(newest);
        sample
    }
}

impl Drop for Scraper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
