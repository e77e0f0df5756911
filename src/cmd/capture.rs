//! `sizeup capture`: a server's slow log as a capture file; `capture show`: what one
//! holds, by digest.

use super::Context;
use crate::capture::digest::{Digester, Summary};
use crate::capture::file::{self, CaptureError, Reader};
use crate::capture::Kind;
use crate::cli::{CaptureArgs, CaptureCommand};
use crate::error::Invalid;
use crate::live_capture;
use crate::options::TargetArgs;
use crate::runner;
use crate::Error;
use std::io::{BufReader, BufWriter};
use std::path::Path;

pub fn capture(cx: &Context, a: &CaptureArgs) -> Result<i32, Error> {
    let out = || a.output.as_deref().expect("clap requires --output");
    match (&a.command, &a.live) {
        (Some(CaptureCommand::Show { capture, limit, json }), _) => show(capture, *limit, *json),
        (None, Some(live)) => from_server(cx, live, &a.target, out()),
        (None, None) => from_slow_log(a.slow_log.as_deref().expect("clap requires --slow-log"), out()),
    }
}

/// `--for 60s`, `--for 5m`, `--for 90`: seconds.
fn duration(text: &str) -> Result<f64, Invalid> {
    let t = text.trim();
    let (n, k) = match t.strip_suffix('m') {
        Some(n) => (n, 60.0),
        None => (t.strip_suffix('s').unwrap_or(t), 1.0),
    };
    n.trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * k)
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 24.0 * 3600.0)
        .ok_or_else(|| Invalid::Value(format!("--for {text}: give how long to capture, such as 60s or 5m")))
}

/// A capture may replace only a capture, and never the log it reads.
fn check_output(out: &Path, log: Option<&Path>) -> Result<(), Error> {
    if log.is_some_and(|log| same_file(log, out)) {
        return Err(Invalid::Conflict(format!(
            "--output {} is the slow log itself: give the capture a file of its own",
            out.display()
        ))
        .into());
    }
    if out.exists() && Reader::new(std::fs::File::open(out).map_err(|e| captured(e.into(), out))?, "").is_err() {
        return Err(Invalid::Conflict(format!(
            "--output {} exists and is not a sizeup capture: give a new file (sizeup replaces only a capture)",
            out.display()
        ))
        .into());
    }
    Ok(())
}

/// A file beside `out`, renamed into place when the capture is whole.
fn beside(out: &Path) -> Result<tempfile::NamedTempFile, Error> {
    let dir = out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        Invalid::File(format!("--output {}: cannot write in {}: {e}", out.display(), dir.display())).into()
    })
}

/// `capture --for`: the server's own slow log table for a while (see `live_capture`).
/// The settings are put back before the rows are read, whatever happened meanwhile; a
/// Ctrl-C ends the wait early and keeps what was captured.
fn from_server(cx: &Context, live: &str, target: &TargetArgs, out: &Path) -> Result<i32, Error> {
    let seconds = duration(live)?;
    check_output(out, None)?;
    let (t, _) = runner::resolve_target(&cx.manager, target, "sizeup")?;
    let tmp = beside(out)?;
    crate::exec::install_signal_handler();
    let at = crate::exec::signals_received();
    let lost = |e: live_capture::LiveError| -> Error {
        match e {
            live_capture::LiveError::Privilege(_) | live_capture::LiveError::NoTable(_) => Error::Usage(e.to_string()),
            e => Error::Failed(e.to_string()),
        }
    };
    let trailer = runner::runtime(1)?.block_on(async {
        let mut conn = t.connect_server().await?;
        let was = live_capture::settings(&mut conn).await.map_err(lost)?;
        let on = live_capture::turn_on(&mut conn, &was).await;
        let Ok((since, own)) = on else {
            let _ = live_capture::restore(&mut conn, &was).await;
            return Err(lost(on.expect_err("failed")));
        };
        crate::outln!(
            "capturing the statements of {} for {seconds:.0} s into mysql.slow_log (long_query_time 0); its slow log \
             settings are put back after (Ctrl-C ends it early)",
            t.describe()
        );
        crate::outln!(
            "note: sessions already connected keep their own long_query_time ({} s): their statements are in the \
             capture only where slower than that",
            was.long_query_time.trim()
        );
        let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds);
        while std::time::Instant::now() < end && crate::exec::signals_received() == at {
            crate::timer::sleep(std::time::Duration::from_millis(100)).await;
        }
        if crate::exec::signals_received() != at {
            crate::outln!("interrupted: the capture ends here, with what it holds");
        }
        live_capture::restore(&mut conn, &was).await.map_err(|e| {
            Error::Failed(format!(
                "the slow log's settings could not be put back ({e}): set them as they were: SET GLOBAL \
                 slow_query_log = {}, long_query_time = {}, log_output = '{}'",
                u8::from(was.slow_query_log),
                was.long_query_time.trim(),
                was.log_output
            ))
        })?;
        let tables = live_capture::tables(&mut conn, &since, own).await.map_err(lost)?;
        let header = crate::capture::file::Header {
            version: file::VERSION,
            source: format!("mysql.slow_log on {}", t.describe()),
            precision: live_capture::PRECISION,
            start_us: 0,
            tables,
        };
        let trailer =
            live_capture::read(&mut conn, &since, own, header, BufWriter::new(tmp.as_file())).await.map_err(lost)?;
        let _ = conn.disconnect().await;
        Ok::<_, Error>(trailer)
    })?;
    let Some(trailer) = trailer else {
        return Err(Invalid::File(format!(
            "no statement reached mysql.slow_log in the {seconds:.0} s: nothing ran, or only in sessions connected \
             before the capture (they keep their own long_query_time)"
        ))
        .into());
    };
    tmp.persist(out).map_err(|e| Invalid::File(format!("--output {}: {}", out.display(), e.error)))?;
    crate::outln!(
        "captured {} statements of {} sessions into {}; times {}",
        trailer.statements,
        trailer.sessions,
        out.display(),
        live_capture::PRECISION.words()
    );
    if trailer.own > 0 {
        crate::outln!("left out: {} of sizeup's own (it watched the server)", trailer.own);
    }
    crate::outln!(
        "the captured rows stay in mysql.slow_log (the server's table): TRUNCATE it when they are not needed"
    );
    Ok(0)
}

fn captured(e: CaptureError, what: &Path) -> Error {
    match e {
        CaptureError::Io(e) => Invalid::File(format!("{}: {e}", what.display())).into(),
        CaptureError::NotACapture(m) | CaptureError::Empty(m) => Invalid::File(m).into(),
    }
}

/// Reads the log twice (its first start and each second's count, then the statements)
/// and writes the capture beside its destination, renamed into place when whole: a
/// capture that fails leaves no half file, and one it replaces stays until then.
fn from_slow_log(log: &Path, out: &Path) -> Result<i32, Error> {
    let open = || std::fs::File::open(log).map(|f| BufReader::with_capacity(1 << 20, f));
    open().map_err(|e| Invalid::File(format!("--slow-log {}: {e}", log.display())))?;
    check_output(out, Some(log))?;
    let tmp = beside(out)?;
    let started = std::time::Instant::now();
    let source = format!("slow log {}", log.display());
    let (header, trailer) =
        file::from_slow_log(open, &source, BufWriter::new(tmp.as_file())).map_err(|e| captured(e, log))?;
    tmp.persist(out).map_err(|e| Invalid::File(format!("--output {}: {}", out.display(), e.error)))?;
    let bytes = std::fs::metadata(log).map(|m| m.len()).unwrap_or(0);
    crate::outln!(
        "captured {} statements of {} sessions from {} into {} ({:.1} s, {:.0} MB/s of log); times {}",
        trailer.statements,
        trailer.sessions,
        log.display(),
        out.display(),
        started.elapsed().as_secs_f64(),
        bytes as f64 / 1e6 / started.elapsed().as_secs_f64().max(1e-6),
        header.precision.words()
    );
    let left_out = [
        (trailer.own, "of sizeup's own (it watched the server)"),
        (trailer.admin, "administrator commands (Quit, Prepare, Ping: nothing to send as text)"),
        (trailer.untimed, "without a time (no SET timestamp or # Time)"),
        (trailer.skipped_entries, "cut off (the log began or ended inside them)"),
    ];
    for (n, what) in left_out.iter().filter(|(n, _)| *n > 0) {
        crate::outln!("left out: {n} {what}");
    }
    if trailer.skipped_lines > 0 {
        crate::outln!(
            "skipped {} lines that belong to no entry (server banners, a log cut mid-entry)",
            trailer.skipped_lines
        );
    }
    if trailer.statements == 0 {
        return Err(Invalid::File(format!(
            "{} held only statements sizeup leaves out: nothing to replay",
            log.display()
        ))
        .into());
    }
    Ok(0)
}

/// The same file, by identity where both exist.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

fn show(path: &Path, limit: usize, json: bool) -> Result<i32, Error> {
    let f = std::fs::File::open(path).map_err(|e| Invalid::File(format!("{}: {e}", path.display())))?;
    let origin = path.display().to_string();
    let mut r = Reader::new(BufReader::new(f), &origin).map_err(|e| captured(e, path))?;
    let mut d = Digester::default();
    for s in r.by_ref() {
        d.add(&s.map_err(|e| captured(e, path))?);
    }
    let summary = d.finish();
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&as_json(&r.header, &summary)).expect("serialisable"));
        return Ok(0);
    }
    let h = &r.header;
    crate::outln!("capture {} — {}", path.display(), h.source);
    crate::outln!(
        "{:.1} s, {} sessions, {} statements ({}), times {}",
        summary.duration_s,
        summary.sessions,
        summary.statements,
        summary.per_second().map_or("no rate: one instant".to_string(), |r| format!("{r:.0} a second")),
        h.precision.words()
    );
    if !h.tables.is_empty() {
        let rows: u64 = h.tables.iter().map(|t| t.rows).sum();
        crate::outln!(
            "{} tables with their definitions and row counts as captured ({rows} rows, information_schema's estimate)",
            h.tables.len()
        );
    }
    let count = |k: Kind| summary.kinds.get(&k).copied().unwrap_or(0);
    crate::outln!(
        "{} reads, {} writes, {} other (transaction control, SET){}",
        count(Kind::Read),
        count(Kind::Write),
        count(Kind::Other),
        summary.write_share().map_or(String::new(), |w| format!("; writes are {:.0} % of reads and writes", w * 100.0))
    );
    if r.trailer.is_none() {
        crate::outln!("note: the file ends without its trailer (the capture was cut short): these are its statements up to the cut");
    }
    crate::outln!("\n{:>6} {:>9} {:>6} {:>9} {:>9}  digest", "share", "count", "kind", "mean ms", "p99 ms");
    let shown = if limit == 0 { summary.rows.len() } else { limit.min(summary.rows.len()) };
    for row in &summary.rows[..shown] {
        crate::outln!(
            "{:>5.1}% {:>9} {:>6} {:>9.3} {:>9.3}  {}",
            row.share * 100.0,
            row.count,
            kind_word(row.kind),
            row.mean_ms,
            row.p99_ms,
            row.digest
        );
    }
    if shown < summary.rows.len() {
        crate::outln!("... {} more digests (--limit 0 shows all)", summary.rows.len() - shown);
    }
    Ok(0)
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Read => "read",
        Kind::Write => "write",
        Kind::Other => "other",
    }
}

fn as_json(h: &file::Header, s: &Summary) -> serde_json::Value {
    serde_json::json!({
        "source": h.source,
        "precision": h.precision,
        "duration_s": s.duration_s,
        "sessions": s.sessions,
        "statements": s.statements,
        "per_second": s.per_second(),
        "kinds": s.kinds,
        "tables": h.tables.iter().map(|t| serde_json::json!({
            "schema": t.schema, "name": t.name, "rows": t.rows, "create": t.create,
        })).collect::<Vec<_>>(),
        "digests": s.rows.iter().map(|r| serde_json::json!({
            "digest": r.digest, "kind": r.kind, "count": r.count, "share": r.share,
            "mean_ms": r.mean_ms, "p99_ms": r.p99_ms, "example": r.example,
        })).collect::<Vec<_>>(),
    })
}
