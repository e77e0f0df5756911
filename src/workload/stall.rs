//! Telling a statement the server works on from one it will never answer, for the
//! statements outside a run that have no time bound of their own (an index build, a
//! prewarm scan, a consistency check take as long as their tables need): every statement
//! timeout a new connection asks the server what the statement's connection is doing.

use crate::target::Target;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use std::time::Duration;

/// The longest the watch waits for the server to say what a connection is doing (below
/// the 10-s connect bound, so a server that does not answer is told from one that
/// refuses, which the statement's own connection reports).
const PROBE_WITHIN: Duration = Duration::from_secs(8);

/// A watched statement that stalled: the server stopped answering, or showed it waiting
/// (on a lock) for a statement timeout or longer. Its connection may still hold or wait
/// on the server.
#[derive(Debug, PartialEq)]
pub struct Stalled(pub String);

/// Runs `statements` on connection `id` of `target`, watching that the server still
/// works on them: every `every` a new connection asks what `id` is doing. No answer
/// within 8 s, or `id` waiting for something for `every` or longer, ends them as
/// stalled ("`what`: why: the statement stalled"); otherwise they run as long as they
/// take, and their own outcome is returned.
pub async fn watched<F: std::future::Future>(
    target: &Target,
    id: u32,
    every: Duration,
    what: &str,
    statements: F,
) -> Result<F::Output, Stalled> {
    tokio::pin!(statements);
    loop {
        tokio::select! {
            r = &mut statements => return Ok(r),
            _ = tokio::time::sleep(every) => {}
        }
        let probe = stalled_because(target, id, every);
        let why = tokio::select! {
            r = &mut statements => return Ok(r),
            why = probe => why,
        };
        if let Some(why) = why {
            return Err(Stalled(format!("{what}: {why}: the statement stalled")));
        }
    }
}

/// Why connection `id`'s statement counts as stalled, or `None` while the server works
/// on it (or cannot say: a refused probe leaves the verdict to the statement's own
/// connection).
async fn stalled_because(target: &Target, id: u32, every: Duration) -> Option<String> {
    let probe = async {
        let mut conn = target.connect().await.ok()?;
        let row = doing(&mut conn, id).await.ok()?;
        let _ = conn.disconnect().await;
        row
    };
    match tokio::time::timeout(PROBE_WITHIN, probe).await {
        Err(_) => Some(format!(
            "the server stopped answering (a new connection got no answer within {} s)",
            PROBE_WITHIN.as_secs()
        )),
        // PROCESSLIST's TIME, not the client's clock: a lock wait's starts when the
        // statement reaches it.
        Ok(Some((Some(state), Some(t)))) if state.starts_with("Waiting for") && t >= every.as_secs() => {
            Some(format!("the server showed it '{state}' for {t} s (--statement-timeout {} s)", every.as_secs_f64()))
        }
        Ok(_) => None,
    }
}

/// What connection `id` is doing in the server (its PROCESSLIST state and seconds in
/// it), or `None` when it is gone.
pub async fn doing(conn: &mut Conn, id: u32) -> Result<Option<(Option<String>, Option<u64>)>, mysql_async::Error> {
    conn.exec_first("SELECT STATE, TIME FROM information_schema.PROCESSLIST WHERE ID = ?", (id,)).await
}
