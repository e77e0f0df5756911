//! Telling a statement the server works on from one it will never answer, for the
//! statements outside a run that have no time bound of their own (an index build, a
//! prewarm scan, a consistency check take as long as their tables need): every statement
//! timeout a new connection asks the server what the statement's connection is doing.

use super::Target;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use std::time::Duration;

/// The longest the watch waits for the server to say what a connection is doing (below
/// the 10-s connect bound, so a server that does not answer is told from one that
/// refuses, which the statement's own connection reports).
pub(crate) const PROBE_WITHIN: Duration = Duration::from_secs(8);

/// A watched statement that stalled: the server stopped answering, or showed it waiting
/// (on a lock) for a statement timeout or longer. Its connection may still hold or wait
/// on the server.
#[derive(Debug)]
pub struct Stalled(pub String);

/// Why a connection's server-side id could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NoId {
    #[error("reading the connection's id: {}", crate::target::short_error(.0))]
    Refused(mysql_async::Error),
    #[error("the server did not answer within {} s", .0.as_secs())]
    NoAnswer(Duration),
}

impl crate::error::LayerError for NoId {}

/// Runs `statements` on connection `id` of `target`, watching that the server still
/// works on them: every `every` (at most 10 s) a new connection asks what `id` is doing.
/// Once they have run for `every`, a probe with no answer within 8 s ends them as stalled;
/// so does `id` seen waiting for something (a lock) at every probe for `every` or longer
/// ("`what`: why: the statement stalled"). Otherwise they run as long as they take, and
/// their own outcome is returned.
pub async fn watched<F: std::future::Future>(
    target: &Target,
    id: u32,
    every: Duration,
    what: &str,
    statements: F,
) -> Result<F::Output, Stalled> {
    let step = every.min(Duration::from_secs(10));
    let started = tokio::time::Instant::now();
    let mut first_wait = None;
    tokio::pin!(statements);
    loop {
        // biased: statements that end as a verdict comes in have ended, not stalled.
        tokio::select! {
            biased;
            r = &mut statements => return Ok(r),
            _ = crate::timer::sleep(step) => {}
        }
        let seen = tokio::select! {
            biased;
            r = &mut statements => return Ok(r),
            seen = probe(target, id) => seen,
        };
        if let Some(why) = verdict(seen, started.elapsed(), &mut first_wait, every) {
            let what = if what.is_empty() { String::new() } else { format!("{what}: ") };
            return Err(Stalled(format!("{what}{why}: the statement stalled")));
        }
    }
}

/// What one probe saw of the watched connection.
#[derive(Debug)]
enum Seen {
    /// No answer within 8 s.
    NoAnswer,
    /// Waiting for something: PROCESSLIST's state (`Waiting for table metadata lock`).
    Waiting(String),
    /// Working, gone, or the probe was refused (the statement's own connection then
    /// says why).
    Other,
}

async fn probe(target: &Target, id: u32) -> Seen {
    let asked = async {
        let mut conn = target.connect().await.ok()?;
        let row = doing(&mut conn, id).await.ok()?;
        let _ = conn.disconnect().await;
        row
    };
    match crate::timer::timeout(PROBE_WITHIN, asked).await {
        Err(_) => Seen::NoAnswer,
        Ok(Some((Some(state), _))) if state.starts_with("Waiting for") => Seen::Waiting(state),
        Ok(_) => Seen::Other,
    }
}

/// Why the watched statements count as stalled after a probe `elapsed` into them, or
/// `None`. `first_wait` is when probes began to see the connection waiting (reset when
/// one sees it otherwise). The client's clock, not PROCESSLIST's TIME: that counts from
/// the statement's start, so an index build that worked for minutes and then waits a
/// moment for its table's lock would look long stalled.
fn verdict(seen: Seen, elapsed: Duration, first_wait: &mut Option<Duration>, every: Duration) -> Option<String> {
    let bound = every.as_secs_f64();
    match seen {
        Seen::NoAnswer if elapsed >= every => Some(format!(
            "the server stopped answering (a new connection got no answer within {} s)",
            PROBE_WITHIN.as_secs()
        )),
        Seen::NoAnswer => None,
        Seen::Waiting(state) => {
            let waited = elapsed - *first_wait.get_or_insert(elapsed);
            (waited >= every).then(|| {
                format!(
                    "the server showed it '{state}' for at least {} s (--statement-timeout {bound} s)",
                    waited.as_secs()
                )
            })
        }
        Seen::Other => {
            *first_wait = None;
            None
        }
    }
}

/// The server's own number for this connection, the one PROCESSLIST shows and KILL
/// takes. Not the handshake's (`Conn::id`): a proxy in between answers the handshake
/// with a number of its own, and the watch would then look up, and the undo KILL,
/// a connection that is not this one. Bounded like a probe: it runs before the watch.
pub async fn server_id(conn: &mut Conn) -> Result<u32, NoId> {
    match crate::timer::timeout(
        PROBE_WITHIN,
        conn.query_first(format!("{} SELECT CONNECTION_ID()", sizeup_model::capture::OWN_MARK)),
    )
    .await
    {
        Ok(Ok(id)) => Ok(id.unwrap_or(0)),
        Ok(Err(e)) => Err(NoId::Refused(e)),
        Err(_) => Err(NoId::NoAnswer(PROBE_WITHIN)),
    }
}

/// What connection `id` is doing in the server (its PROCESSLIST state and seconds in
/// it), or `None` when it is gone.
/// Only a connection of this login's user: behind a proxy an id may be another's.
pub async fn doing(conn: &mut Conn, id: u32) -> Result<Option<(Option<String>, Option<u64>)>, mysql_async::Error> {
    let sql = format!(
        "{} SELECT STATE, TIME FROM information_schema.PROCESSLIST WHERE ID = {id} AND USER = SUBSTRING_INDEX(USER(), '@', 1)",
        sizeup_model::capture::OWN_MARK
    );
    conn.query_first(sql).await
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY: Duration = Duration::from_secs(60);

    fn at(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    fn waiting() -> Seen {
        Seen::Waiting("Waiting for table metadata lock".into())
    }

    /// The false stall a review found: a build that worked for minutes, then waits a
    /// moment for its lock at one probe (PROCESSLIST's TIME then reads minutes), is left
    /// alone; only waiting at every probe for the bound is a stall.
    #[test]
    fn a_long_statement_seen_waiting_once_is_not_stalled() {
        let mut first = None;
        assert_eq!(verdict(Seen::Other, at(600), &mut first, EVERY), None);
        assert_eq!(verdict(waiting(), at(610), &mut first, EVERY), None);
        assert_eq!(verdict(Seen::Other, at(620), &mut first, EVERY), None);
        assert_eq!(first, None, "working again resets the wait");
        assert_eq!(verdict(waiting(), at(630), &mut first, EVERY), None);
        assert_eq!(verdict(waiting(), at(680), &mut first, EVERY), None);
        let why = verdict(waiting(), at(690), &mut first, EVERY).expect("60 s of waiting");
        assert!(
            why.contains("'Waiting for table metadata lock' for at least 60 s (--statement-timeout 60 s)"),
            "{why}"
        );
    }

    #[test]
    fn no_answer_is_a_stall_only_once_the_statement_ran_its_bound() {
        let mut first = None;
        assert_eq!(verdict(Seen::NoAnswer, at(10), &mut first, EVERY), None);
        let why = verdict(Seen::NoAnswer, at(60), &mut first, EVERY).expect("a stall");
        assert!(why.contains("stopped answering"), "{why}");
    }

    #[test]
    fn a_fractional_bound_is_not_truncated() {
        let every = Duration::from_millis(1500);
        let mut first = None;
        assert_eq!(verdict(waiting(), Duration::from_millis(1500), &mut first, every), None);
        assert_eq!(verdict(waiting(), Duration::from_millis(2900), &mut first, every), None);
        let why = verdict(waiting(), Duration::from_millis(3000), &mut first, every).expect("1.5 s of waiting");
        assert!(why.contains("(--statement-timeout 1.5 s)"), "{why}");
    }
}
