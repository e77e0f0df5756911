//! What sizeup prints on stdout, when the reader may go away: `sizeup run ... | head -1`
//! closes the pipe after a line (standard_output_closed_by_its_reader). Rust ignores
//! SIGPIPE, so `println!` would panic there and lose the run being measured; instead
//! printing stops, measuring and storing go on, and the command ends as one killed by
//! SIGPIPE would ([`exit`]), which is what the shell and `set -o pipefail` expect.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to stdout failed: nothing more is printed.
static FAILED: AtomicBool = AtomicBool::new(false);
/// Set when it failed because the reader had gone (EPIPE).
static BROKEN_PIPE: AtomicBool = AtomicBool::new(false);

/// Writes to stdout unless an earlier write failed; a failure stops later ones.
pub fn write(args: std::fmt::Arguments) {
    if FAILED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    // Flushed at once: a reader that left is found at the write, not at exit.
    if let Err(e) = out.write_fmt(args).and_then(|_| out.flush()) {
        FAILED.store(true, Ordering::Relaxed);
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            BROKEN_PIPE.store(true, Ordering::Relaxed);
        }
    }
}

/// True once the reader of stdout went away.
pub fn reader_gone() -> bool {
    BROKEN_PIPE.load(Ordering::Relaxed)
}

/// Ends the process with `code`, or as one killed by SIGPIPE when stdout's reader went
/// away (what `yes | head -1` gives: status 141 in the shell).
pub fn exit(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    if reader_gone() {
        // SAFETY: restoring the default action of a signal and raising it in this
        // process; nothing else runs after this.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::raise(libc::SIGPIPE);
        }
    }
    std::process::exit(code)
}

/// `println!` that a closed stdout does not end.
#[macro_export]
macro_rules! outln {
    () => { $crate::stdout::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::stdout::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that a closed stdout does not end.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdout::write(format_args!($($arg)*)) };
}
