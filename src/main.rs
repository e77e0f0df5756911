//! The sizeup command: parse, run, exit code. Errors become one or two lines on stderr.

fn main() {
    // Copy the arguments first, then overwrite any password in the process's own argv,
    // which every local user can read in `ps` and /proc/PID/cmdline.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    argv::hide_passwords();
    let cli = match sizeup::cli::Cli::parse_args(args) {
        Ok(cli) => cli,
        Err(e) => {
            match e {
                sizeup::error::Invalid::CommandLine(parser) => eprint!("{parser}"),
                e => eprintln!("error: {e}"),
            }
            std::process::exit(2);
        }
    };
    let code = match sizeup::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    };
    sizeup::stdout::exit(code);
}

/// The password options' values in argv, overwritten in place with `x` as the mysql
/// client does. glibc hands argc and argv to every `.init_array` function: this one
/// keeps the pointers, so the very bytes the kernel shows are rewritten.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod argv {
    use std::ffi::{c_char, c_int, CStr};
    use std::sync::atomic::{AtomicIsize, AtomicPtr, Ordering};

    static ARGC: AtomicIsize = AtomicIsize::new(0);
    static ARGV: AtomicPtr<*mut c_char> = AtomicPtr::new(std::ptr::null_mut());

    #[used]
    #[link_section = ".init_array"]
    static CAPTURE: extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) = capture;

    extern "C" fn capture(argc: c_int, argv: *mut *mut c_char, _envp: *mut *mut c_char) {
        ARGC.store(argc as isize, Ordering::Relaxed);
        ARGV.store(argv, Ordering::Relaxed);
    }

    const NAMES: [&[u8]; 2] = [b"--password", b"--mysql-password"];

    pub fn hide_passwords() {
        let argc = ARGC.load(Ordering::Relaxed);
        let argv = ARGV.load(Ordering::Relaxed);
        if argv.is_null() {
            return;
        }
        let mut value_next = false;
        for i in 1..argc.max(0) as usize {
            // SAFETY: argv holds argc pointers to NUL-terminated strings (or a null).
            let p = unsafe { *argv.add(i) };
            if p.is_null() {
                break;
            }
            // SAFETY: as above; the bytes are only overwritten within their length.
            let len = unsafe { CStr::from_ptr(p) }.to_bytes().len();
            let bytes = unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) };
            if std::mem::take(&mut value_next) {
                bytes.fill(b'x');
                continue;
            }
            if bytes == b"--" {
                break;
            }
            for name in NAMES {
                if bytes == name {
                    value_next = true;
                } else if bytes.starts_with(name) && bytes.get(name.len()) == Some(&b'=') {
                    bytes[name.len() + 1..].fill(b'x');
                }
            }
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod argv {
    pub fn hide_passwords() {}
}
