//! A plain (unix or TCP) socket, registered with the thread's runtime for reading only.
//!
//! Why not tokio's own streams: they register for both directions, edge-triggered, and a
//! unix socket signals "writable" each time the peer reads what was sent to it. So every
//! command woke its client thread once more, for nothing, when the server read it: the
//! thread found no work and slept again. That was 6 context switches per point select
//! instead of 4, more client CPU, and server CPU spent waking the client
//! (docs/PERFORMANCE.md). A request/answer protocol's command fits the empty send buffer,
//! so write readiness matters only when a send would block; then a second registration of
//! the same socket (a duplicate descriptor) waits for it, and goes away.
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

enum Sock {
    Unix(std::os::unix::net::UnixStream),
    Tcp(std::net::TcpStream),
}

impl AsRawFd for Sock {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Sock::Unix(s) => s.as_raw_fd(),
            Sock::Tcp(s) => s.as_raw_fd(),
        }
    }
}

impl AsFd for Sock {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Sock::Unix(s) => s.as_fd(),
            Sock::Tcp(s) => s.as_fd(),
        }
    }
}

impl Sock {
    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Unix(s) => (&*s).read(buf),
            Sock::Tcp(s) => (&*s).read(buf),
        }
    }
    fn write(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Unix(s) => (&*s).write(buf),
            Sock::Tcp(s) => (&*s).write(buf),
        }
    }
}

/// Registers a socket this process owns with the thread's runtime.
fn register<T: AsRawFd>(inner: T, interest: Interest) -> io::Result<AsyncFd<T>> {
    // Safety: `inner` owns its descriptor (a std socket or an `OwnedFd`), which stays
    // open and the same until the `AsyncFd` is dropped or gives it back.
    unsafe { AsyncFd::register_with_interest(inner, interest) }.map_err(|e| e.into())
}

/// A connected, non-blocking unix or TCP socket.
pub struct Plain(AsyncFd<Sock>);

impl Plain {
    pub async fn unix(path: &std::path::Path) -> io::Result<Plain> {
        let s = tokio::net::UnixStream::connect(path).await?.into_std()?;
        Ok(Plain(register(Sock::Unix(s), Interest::READABLE)?))
    }

    pub async fn tcp(host: &str, port: u16) -> io::Result<Plain> {
        let s = tokio::net::TcpStream::connect((host, port)).await?;
        s.set_nodelay(true)?;
        Ok(Plain(register(Sock::Tcp(s.into_std()?), Interest::READABLE)?))
    }

    /// One end of a socket pair, for tests that play the server.
    #[cfg(test)]
    pub fn from_unix(s: std::os::unix::net::UnixStream) -> io::Result<Plain> {
        s.set_nonblocking(true)?;
        Ok(Plain(register(Sock::Unix(s), Interest::READABLE)?))
    }

    /// A unix socket (a secure transport: a password may cross it in clear).
    pub fn is_unix(&self) -> bool {
        matches!(self.0.get_ref(), Sock::Unix(_))
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// The TCP socket as a tokio stream, for TLS to wrap; `None` for a unix socket.
    pub fn into_tokio_tcp(self) -> io::Result<Option<tokio::net::TcpStream>> {
        match self.0.into_inner() {
            Sock::Tcp(s) => tokio::net::TcpStream::from_std(s).map(Some),
            Sock::Unix(_) => Ok(None),
        }
    }

    /// Reads what has arrived, waiting for something when nothing has.
    ///
    /// Waits with `poll_read_ready`, which keeps the one reader's waker in a slot, not
    /// `readable()`, whose future joins and leaves a list of waiters under a lock each
    /// time: a point select's client instructions went from 3,740 to 3,490 (callgrind,
    /// 8 connections, session 23). A connection has one reader, as `poll_read_ready`
    /// requires.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        std::future::poll_fn(|cx| loop {
            let mut ready = match self.0.poll_read_ready(cx) {
                std::task::Poll::Ready(r) => r?,
                std::task::Poll::Pending => return std::task::Poll::Pending,
            };
            match ready.try_io(|s| s.get_ref().read(buf)) {
                Ok(Ok(n)) => {
                    // Less than asked: the socket is drained, so the next read waits for
                    // the runtime's word instead of trying a read that finds nothing
                    // (tokio's own streams do the same).
                    if n > 0 && n < buf.len() {
                        ready.clear_ready();
                    }
                    return std::task::Poll::Ready(Ok(n));
                }
                Ok(Err(e)) => return std::task::Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        })
        .await
    }

    /// Writes all of `buf`, waiting for room only when the send buffer is full.
    pub async fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.0.get_ref().write(buf) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => buf = &buf[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.writable().await?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Waits until a send can make progress, through a registration of its own.
    async fn writable(&self) -> io::Result<()> {
        let dup = self.0.get_ref().as_fd().try_clone_to_owned()?;
        let w = register(dup, Interest::WRITABLE)?;
        w.writable().await?.retain_ready();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_write_larger_than_the_send_buffer_waits_for_room_and_arrives_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let big: Vec<u8> = (0..8 << 20).map(|i| (i % 251) as u8).collect();
        let expect = big.clone();
        let reader = std::thread::spawn(move || {
            let (mut peer, _) = listener.accept().unwrap();
            // Read slowly at first, so the writer finds its buffer full.
            std::thread::sleep(std::time::Duration::from_millis(200));
            let mut got = Vec::new();
            peer.read_to_end(&mut got).unwrap();
            got
        });
        let s = Plain::unix(&path).await.unwrap();
        s.write_all(&big).await.unwrap();
        drop(s);
        assert_eq!(reader.join().unwrap(), expect);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn reads_wait_for_data_and_see_the_peer_close() {
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let s = Plain(register(Sock::Unix(a), Interest::READABLE).unwrap());
        let writer = std::thread::spawn(move || {
            for chunk in [&b"one"[..], b"two"] {
                std::thread::sleep(std::time::Duration::from_millis(50));
                b.write_all(chunk).unwrap();
            }
        });
        let mut buf = [0u8; 64];
        let mut got = Vec::new();
        while got.len() < 6 {
            let n = s.read(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, b"onetwo");
        writer.join().unwrap();
        assert_eq!(s.read(&mut buf).await.unwrap(), 0, "end of stream once the peer is gone");
    }

    /// The cause of the extra context switches per statement over a unix socket: the
    /// server reading a command made the socket writable, which woke the client thread
    /// for nothing. Counts the runtime's wake-ups while one command is read by the peer
    /// and then answered: one (the answer), not two.
    #[test]
    fn a_command_read_by_the_server_does_not_wake_the_client_thread() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = wakes.clone();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_unpark(move || {
                w.fetch_add(1, Ordering::Relaxed);
            })
            .build()
            .unwrap();
        let (a, mut server) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let peer = std::thread::spawn(move || {
            let pause = std::time::Duration::from_millis(100);
            std::thread::sleep(pause);
            let mut command = [0u8; 7];
            server.read_exact(&mut command).unwrap();
            std::thread::sleep(pause);
            server.write_all(b"answer").unwrap();
            command
        });
        let (answer, during) = rt.block_on(async {
            let s = Plain(register(Sock::Unix(a), Interest::READABLE).unwrap());
            s.write_all(b"command").await.unwrap();
            let before = wakes.load(Ordering::Relaxed);
            let mut buf = [0u8; 16];
            let n = s.read(&mut buf).await.unwrap();
            (buf[..n].to_vec(), wakes.load(Ordering::Relaxed) - before)
        });
        assert_eq!(&peer.join().unwrap(), b"command");
        assert_eq!(answer, b"answer");
        assert_eq!(during, 1, "the client thread woke {during} times for one answer");
    }
}
