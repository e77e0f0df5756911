//! Files a user names (certificates and keys, option files, study files, scripts),
//! read whole with a bound: a device or pipe that never ends (`--ssl-ca /dev/zero`)
//! is refused at the bound instead of read until memory runs out. Pipes stay allowed
//! (`--ssl-ca <(...)`, `/dev/stdin`): only the size is bounded, not the file type.

use std::io::Read;
use std::path::Path;

/// Certificates, keys and public keys: a PEM file is a few KiB, a long chain tens.
pub const PEM_LIMIT: u64 = 4 << 20;
/// Option files, study files, sysbench config files, scripts: text written by hand.
pub const TEXT_LIMIT: u64 = 16 << 20;

/// The bytes of `path`, at most `limit` of them; `what` says what the file should be
/// ("a PEM file is a few KiB"). An over-long file is an `InvalidData` error whose text
/// says why, for the caller to prefix with the option and the path as for any other
/// read error.
pub fn read(path: &Path, limit: u64, what: &str) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    // A named pipe nothing writes to would hold a plain open forever: opened without
    // waiting, then read as usual (a writer's bytes are read; none reads as empty).
    let fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    let file = match fifo {
        true => {
            let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
            // SAFETY: fcntl on a descriptor this function owns; no memory is passed.
            unsafe {
                let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
                libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) & !libc::O_NONBLOCK);
            }
            f
        }
        false => std::fs::File::open(path)?,
    };
    let meta = file.metadata()?;
    let too_long = |kind: &str| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{kind} more than {} MiB, which sizeup does not read ({what})", limit >> 20),
        )
    };
    if meta.is_file() && meta.len() > limit {
        return Err(too_long("it is"));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_long(&format!("it is {} and gives", file_type(&meta))));
    }
    if fifo && bytes.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("it is a named pipe that nothing wrote to ({what})"),
        ));
    }
    Ok(bytes)
}

/// As `read`, as UTF-8 text.
pub fn read_to_string(path: &Path, limit: u64, what: &str) -> std::io::Result<String> {
    String::from_utf8(read(path, limit, what)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

fn file_type(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_char_device() {
        "a character device (not a regular file)"
    } else if t.is_block_device() {
        "a block device (not a regular file)"
    } else if t.is_fifo() {
        "a pipe"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a file that grew as it was read"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_device_is_refused_at_the_bound() {
        let e = read(Path::new("/dev/zero"), 1 << 20, "a PEM file is a few KiB").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        let m = e.to_string();
        assert!(m.contains("character device") && m.contains("more than 1 MiB") && m.contains("a few KiB"), "{m}");
    }

    /// ssl_ca_fifo_hangs: a retest found `--ssl-ca` on a named pipe nothing writes to
    /// waiting forever in open().
    #[test]
    fn ssl_ca_fifo_hangs() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; mkfifo reads it only.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let m = read(&p, 1 << 20, "a PEM file").unwrap_err().to_string();
        assert!(m.contains("named pipe that nothing wrote to"), "{m}");
        // A pipe with a writer is read as before (the writer holds the pipe open for
        // reading too, so it never fails for want of a reader).
        let writer = {
            let p = p.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new().read(true).write(true).open(p).unwrap();
                f.write_all(b"pem").unwrap();
                std::thread::sleep(std::time::Duration::from_millis(300));
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(100));
        let got = read(&p, 1 << 20, "x").unwrap();
        writer.join().unwrap();
        assert_eq!(got, b"pem");
    }

    #[test]
    fn a_file_over_the_bound_is_refused_and_one_within_it_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b'x'; (1 << 20) + 1]).unwrap();
        let m = read(&p, 1 << 20, "x").unwrap_err().to_string();
        assert!(m.starts_with("it is more than 1 MiB"), "{m}");
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(read_to_string(&p, 1 << 20, "x").unwrap(), "abc");
    }
}
