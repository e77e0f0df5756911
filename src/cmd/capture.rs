//! `sizeup capture`: a server's slow log as a capture file; `capture show`: what one
//! holds, by digest.

use crate::capture::digest::{Digester, Summary};
use crate::capture::file::{self, CaptureError, Reader};
use crate::capture::Kind;
use crate::cli::{CaptureArgs, CaptureCommand};
use crate::error::Invalid;
use crate::Error;
use std::io::{BufReader, BufWriter};
use std::path::Path;

pub fn capture(a: &CaptureArgs) -> Result<i32, Error> {
    match &a.command {
        Some(CaptureCommand::Show { capture, limit, json }) => show(capture, *limit, *json),
        None => from_slow_log(
            a.slow_log.as_deref().expect("clap requires --slow-log"),
            a.output.as_deref().expect("clap requires --output"),
        ),
    }
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
    if same_file(log, out) {
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
    let dir = out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| Invalid::File(format!("--output {}: cannot write in {}: {e}", out.display(), dir.display())))?;
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
        "digests": s.rows.iter().map(|r| serde_json::json!({
            "digest": r.digest, "kind": r.kind, "count": r.count, "share": r.share,
            "mean_ms": r.mean_ms, "p99_ms": r.p99_ms, "example": r.example,
        })).collect::<Vec<_>>(),
    })
}
