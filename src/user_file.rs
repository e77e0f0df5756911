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
    let file = std::fs::File::open(path)?;
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
