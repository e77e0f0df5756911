//! The benchmark connection: a lean MySQL-protocol client for the measured path only.
//!
//! Why not the general driver here: measured on the 2-core box, mysql_async spent ~25 %
//! more client CPU than sysbench per oltp_read_write transaction, most of it building a
//! `Row` of owned `Value`s for each of the ~400 rows a transaction reads and throws away.
//! This client reads result rows in place and skips them without allocating, binds
//! parameters from borrowed bytes, and sends each command with one write. Loading into a
//! MariaDB server uses it too (array binding); everything else in sizeup (checks, server
//! facts, loading elsewhere) uses mysql_async.
//!
//! It does what a benchmark session needs and nothing more: handshake, TLS (rustls, with
//! the mysql client's --ssl-mode meanings) and login (mysql_native_password,
//! caching_sha2_password and sha256_password with their TLS, socket and RSA exchanges,
//! MariaDB's client_ed25519, unix_socket), COM_QUERY, COM_STMT_PREPARE,
//! COM_STMT_EXECUTE with integer and string parameters, MariaDB's COM_STMT_BULK_EXECUTE
//! (prepare's loaders), and result sets read as counted rows or decoded values. No
//! compression, no LOCAL INFILE, no cursors.
//!
//! Plain connections write through the thread's io_uring outbox; TLS connections write
//! through rustls directly (the outbox sends raw bytes on the socket).

mod auth;
mod error;
pub mod outbox;
mod packet;
mod socket;
pub mod tls;

pub use error::Error;
pub use packet::{StoredRows, Value};
pub use tls::TlsInfo;

use packet::lenenc_int;
use std::path::PathBuf;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_PACKET: usize = 0xff_ffff;

/// A packet header's payload length: its first three bytes, little-endian.
#[inline]
fn payload_len(h: &[u8]) -> usize {
    h[0] as usize | (h[1] as usize) << 8 | (h[2] as usize) << 16
}

/// The next packet of `conn`: taken from its buffer when all there, read otherwise. A
/// macro, not an async fn, so that the buffered case costs no future (see
/// `Conn::buffered_packet`).
macro_rules! next_packet {
    ($conn:expr) => {
        loop {
            if let Some(p) = $conn.buffered_packet() {
                break p;
            }
            match $conn.wanted() {
                Some(n) => $conn.receive(n).await?,
                // 16 MB or more: read_packet joins the pieces.
                None => break $conn.read_packet().await?,
            }
        }
    };
}

// Capability flags (protocol docs, "Capabilities Flags").
const CLIENT_LONG_FLAG: u32 = 4;
const CLIENT_CONNECT_WITH_DB: u32 = 8;
const CLIENT_LOCAL_FILES: u32 = 128;
const CLIENT_PROTOCOL_41: u32 = 512;
const CLIENT_SSL: u32 = 2048;
const CLIENT_TRANSACTIONS: u32 = 8192;
const CLIENT_SECURE_CONNECTION: u32 = 32768;
const CLIENT_MULTI_RESULTS: u32 = 1 << 17;
const CLIENT_PS_MULTI_RESULTS: u32 = 1 << 18;
const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;
const CLIENT_PLUGIN_AUTH_LENENC_DATA: u32 = 1 << 21;

/// MariaDB extended capability (bit 36, so bit 4 of the upper word): the server sends a
/// prepared statement's result metadata only when it changed, as libmariadb asks.
const MARIADB_CLIENT_CACHE_METADATA: u32 = 1 << 4;
/// MariaDB extended capability (bit 34): COM_STMT_BULK_EXECUTE, a prepared statement run
/// over many rows of parameters sent in one command.
const MARIADB_CLIENT_STMT_BULK_OPERATIONS: u32 = 1 << 2;
/// COM_STMT_BULK_EXECUTE flag: parameter types precede the rows.
const STMT_BULK_FLAG_SEND_TYPES_TO_SERVER: u16 = 128;

const SERVER_MORE_RESULTS_EXISTS: u16 = 8;

/// Largest read buffer a connection grows to by itself (bigger packets still fit).
const READ_BUFFER_MAX: usize = 64 * 1024;

/// How a benchmark connection reaches its server.
#[derive(Clone, Default)]
pub struct ConnectOptions {
    pub socket: Option<PathBuf>,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub database: Option<String>,
    /// TLS over TCP (never over a unix socket, which is a secure transport already).
    pub tls: TlsUse,
    /// The server's RSA public key (PEM), as `--server-public-key-path` gives it.
    pub server_public_key: Option<std::sync::Arc<[u8]>>,
    /// Ask the server for its RSA public key when a password must cross plain TCP.
    pub get_server_public_key: bool,
    /// Set when the options could not be prepared (an unreadable file): every connect
    /// fails with this message.
    pub invalid: Option<String>,
}

/// Whether a TCP connection uses TLS.
#[derive(Clone, Default)]
pub enum TlsUse {
    /// --ssl-mode=DISABLED.
    #[default]
    Off,
    /// PREFERRED: TLS when the server offers it, else plain.
    Preferred(std::sync::Arc<rustls::ClientConfig>),
    /// REQUIRED, VERIFY_CA, VERIFY_IDENTITY: TLS or no connection.
    Required(std::sync::Arc<rustls::ClientConfig>),
}

/// The server refused a plain connection because it accepts only secure transport.
fn tls_required() -> Error {
    Error::protocol(
        "the server requires TLS (require_secure_transport) and refuses this plain connection; \
         --ssl-mode=REQUIRED (or PREFERRED) turns TLS on",
    )
}

/// Whether `pem` is an RSA public key a password can be encrypted with. The control
/// connection checks --server-public-key-path with it before mysql_async (whose PEM
/// parser panics on bad input) gets the key.
pub(crate) fn is_public_key(pem: &[u8]) -> bool {
    auth::public_key(pem).is_ok()
}

/// A password would cross plain TCP and no RSA key may be used to protect it (the
/// control connection gives the same error: `target::short_error`).
pub(crate) fn needs_rsa_key(plugin: &str) -> Error {
    Error::Protocol(format!(
        "{plugin} full authentication over plain TCP needs the server's RSA public key: \
         add --get-server-public-key or --server-public-key-path FILE, or use TLS (--ssl-mode=REQUIRED)"
    ))
}

enum Stream {
    /// A unix or TCP socket, registered for reading only (see [`socket`]).
    Plain(socket::Plain),
    Tls(Box<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>),
    /// Only while the TCP stream is being wrapped in TLS.
    Upgrading,
    /// No socket: the placeholder of [`Conn::detached`].
    Detached,
}

impl Stream {
    async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf).await,
            Stream::Tls(s) => s.read(buf).await,
            Stream::Upgrading | Stream::Detached => Err(std::io::Error::from(std::io::ErrorKind::NotConnected)),
        }
    }
    fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Plain(s) => s.fd(),
            Stream::Tls(s) => s.get_ref().0.as_raw_fd(),
            Stream::Upgrading | Stream::Detached => -1,
        }
    }
    /// Writes one whole command, or hands it to the outbox to be written with others.
    /// TLS bytes must go through rustls, so TLS connections never use the outbox.
    async fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self {
            Stream::Tls(s) => {
                s.write_all(buf).await?;
                s.flush().await
            }
            Stream::Plain(s) if outbox::hold(s.fd(), buf) => Ok(()),
            Stream::Plain(s) => s.write_all(buf).await,
            Stream::Upgrading | Stream::Detached => Err(std::io::Error::from(std::io::ErrorKind::NotConnected)),
        }
    }
    /// A unix socket or TLS: a password may cross it in clear (as the mysql client holds).
    fn secure(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_unix(),
            Stream::Tls(_) => true,
            Stream::Upgrading | Stream::Detached => false,
        }
    }
    fn is_unix(&self) -> bool {
        matches!(self, Stream::Plain(s) if s.is_unix())
    }
}

/// A server-side prepared statement on one connection.
#[derive(Clone, Debug)]
pub struct Statement {
    id: u32,
    params: u16,
    /// Result column types from the prepare (for rows whose metadata the server skips).
    columns: Vec<u8>,
}

impl Statement {
    /// Columns of its result set (0: it returns none, as an UPDATE).
    pub fn columns(&self) -> usize {
        self.columns.len()
    }
    /// Parameters it takes (its `?` placeholders).
    pub fn params(&self) -> usize {
        self.params as usize
    }
}

/// A parameter bound from borrowed data: no allocation per execute.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    Int(i64),
    /// Sent as a DOUBLE; the server rounds it into DECIMAL columns.
    Float(f64),
    Bytes(&'a [u8]),
    Null,
}

/// Where decoded rows go, for statements whose rows are read.
pub type RowSink<'a> = &'a mut (dyn FnMut(&[Value]) + Send);

/// What happens to result rows as they arrive.
enum Rows<'a> {
    /// Counted and skipped in place (the hot path).
    Skip,
    Decode(RowSink<'a>),
    /// Copied as they came (text rows), for a Lua script to fetch later.
    Store(&'a mut StoredRows),
}

/// What a statement returned, when it is not read row by row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub rows: u64,
    pub affected: u64,
    /// Columns of its result set; 0 when it returned none (an UPDATE, a BEGIN).
    pub columns: u64,
}

pub struct Conn {
    stream: Stream,
    buf: Vec<u8>,
    /// Unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    out: Vec<u8>,
    seq: u8,
    server_version: String,
    /// Result column types of the statement being read (binary rows need them).
    types: Vec<u8>,
    /// Negotiated: result metadata of prepared statements is sent only when it changed.
    cache_metadata: bool,
    /// Negotiated: COM_STMT_BULK_EXECUTE (MariaDB 10.2+).
    bulk: bool,
    /// The server's greeting offers LOAD DATA LOCAL (CLIENT_LOCAL_FILES).
    local_files: bool,
    param_types: Vec<u8>,
    /// Parameter types last sent per statement: like libmariadb, types go only with the
    /// first execute (or when they change), and the server reuses them. Keyed by the
    /// server's statement id with FxHash: SipHash here cost about 150 of a point select's
    /// 4,200 client instructions (callgrind, 8 connections, session 23).
    sent_types: rustc_hash::FxHashMap<u32, Vec<u8>>,
    /// What TLS negotiated, when the connection uses it.
    tls: Option<TlsInfo>,
    /// The server's greeting offered TLS (CLIENT_SSL).
    offered_tls: bool,
}

impl Drop for Conn {
    fn drop(&mut self) {
        outbox::forget(self.stream.fd());
    }
}

impl Conn {
    pub async fn connect(o: &ConnectOptions) -> Result<Conn, Error> {
        match crate::timer::timeout(CONNECT_TIMEOUT, Self::connect_inner(o)).await {
            Ok(r) => r,
            Err(_) => Err(Error::Io(std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer within 10 s"))),
        }
    }

    async fn connect_inner(o: &ConnectOptions) -> Result<Conn, Error> {
        if let Some(why) = &o.invalid {
            return Err(Error::protocol(why.clone()));
        }
        match Self::open(o).await {
            Err((Error::Server { code: 3159, .. }, _)) => Err(tls_required()),
            // MariaDB with require_secure_transport=ON refuses a plain login as if the
            // password were wrong. When the server offers TLS and the same login works
            // over it, say what is really wrong instead of sending the user after it.
            Err((denied @ Error::Server { code: 1045, .. }, true))
                if matches!(o.tls, TlsUse::Off) && o.socket.is_none() =>
            {
                let probe = ConnectOptions {
                    tls: match tls::client_config(tls::Verify::Nothing, None, None, None) {
                        Ok(c) => TlsUse::Required(c),
                        Err(e) => return Err(Error::protocol(e)),
                    },
                    // The login alone is the question (the database may not exist yet).
                    database: None,
                    ..o.clone()
                };
                match Self::open(&probe).await {
                    Ok(conn) => {
                        conn.close().await;
                        Err(tls_required())
                    }
                    Err(_) => Err(denied),
                }
            }
            r => r.map_err(|(e, _)| e),
        }
    }

    /// One connection attempt; on failure also whether the server offered TLS.
    async fn open(o: &ConnectOptions) -> Result<Conn, (Error, bool)> {
        let mut conn = Self::open_stream(o).await.map_err(|e| (e, false))?;
        match conn.handshake(o).await {
            Ok(()) => Ok(conn),
            Err(e) => Err((e, conn.offered_tls)),
        }
    }

    /// A connection to nothing, standing in while the real one is lent out (a Lua
    /// script's event holds its worker's connection); every command on it fails.
    pub fn detached() -> Conn {
        Conn::with_stream(Stream::Detached, Vec::new())
    }

    fn with_stream(stream: Stream, buf: Vec<u8>) -> Conn {
        Conn {
            stream,
            buf,
            start: 0,
            end: 0,
            out: Vec::new(),
            seq: 0,
            server_version: String::new(),
            types: Vec::new(),
            cache_metadata: false,
            bulk: false,
            local_files: false,
            param_types: Vec::new(),
            sent_types: Default::default(),
            tls: None,
            offered_tls: false,
        }
    }

    async fn open_stream(o: &ConnectOptions) -> Result<Conn, Error> {
        let stream = match &o.socket {
            Some(path) => Stream::Plain(socket::Plain::unix(path).await?),
            None => Stream::Plain(socket::Plain::tcp(&o.host, o.port).await?),
        };
        // Small at first (thousands of mostly idle TPC-C users must stay cheap); `fill`
        // doubles it while reads keep filling it, up to READ_BUFFER_MAX.
        Ok(Conn::with_stream(stream, vec![0; 8 * 1024]))
    }

    /// The TLS protocol version and cipher suite, when this connection is encrypted.
    pub fn tls(&self) -> Option<&TlsInfo> {
        self.tls.as_ref()
    }

    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// True when the server sends prepared statements' result metadata only when it
    /// changed (MariaDB 10.6+), as it does for libmariadb clients such as sysbench.
    pub fn caches_metadata(&self) -> bool {
        self.cache_metadata
    }

    /// True when the server runs a prepared statement over many rows of parameters in one
    /// command ([`Conn::exec_bulk`]; MariaDB 10.2+).
    pub fn bulk(&self) -> bool {
        self.bulk
    }

    /// True when the server's greeting offers LOAD DATA LOCAL (CLIENT_LOCAL_FILES): a
    /// server without it takes no LOCAL INFILE whatever its variables say.
    pub fn offers_local_files(&self) -> bool {
        self.local_files
    }

    // ---- packets -------------------------------------------------------------------

    /// A whole packet that is already buffered, taken without a wait: most of a result's
    /// packets arrive together, and taking them here, not through `read_packet`'s nested
    /// futures, cut the client's instructions a read/write transaction (300 rows) from
    /// 195k to 105k and a point select's from 6.0k to 5.0k (callgrind, docs/PERFORMANCE.md,
    /// session 22).
    #[inline]
    fn buffered_packet(&mut self) -> Option<(usize, usize)> {
        let len = self.next_len()?;
        if len >= MAX_PACKET || self.end - self.start < 4 + len {
            return None;
        }
        Some(self.take(len))
    }

    /// Takes every whole row packet already buffered, stopping before the end of the
    /// result (EOF or error), a packet of 16 MB or more, or one not wholly here; returns
    /// how many. Rows nobody reads are walked here, not a packet at a time through
    /// `read_results`' general loop: a read/write transaction's ~310 rows took about 2 %
    /// fewer client instructions (callgrind, docs/PERFORMANCE.md, session 24).
    fn skip_buffered_rows(&mut self) -> u64 {
        let (mut rest, mut seq, mut n) = (&self.buf[self.start..self.end], 0, 0);
        while let [_, _, _, s, first, ..] = *rest {
            let len = payload_len(rest);
            let last = (first == 0xfe && len < 9) || first == 0xff;
            if last || len == 0 || len >= MAX_PACKET || rest.len() < 4 + len {
                break;
            }
            seq = s;
            rest = &rest[4 + len..];
            n += 1;
        }
        if n > 0 {
            self.seq = seq.wrapping_add(1);
            self.start = self.end - rest.len();
        }
        n
    }

    /// The payload length in the next packet's header, when the header is buffered.
    #[inline]
    fn next_len(&self) -> Option<usize> {
        if self.end - self.start < 4 {
            return None;
        }
        Some(payload_len(&self.buf[self.start..]))
    }

    /// Takes the buffered packet of payload `len`: its sequence number and its range.
    #[inline]
    fn take(&mut self, len: usize) -> (usize, usize) {
        self.seq = self.buf[self.start + 3].wrapping_add(1);
        let s = self.start + 4;
        self.start = s + len;
        (s, len)
    }

    /// Reads one packet; returns its payload as a range of `buf` (valid until the next read).
    async fn read_packet(&mut self) -> Result<(usize, usize), Error> {
        let (s, len) = self.read_one().await?;
        if len < MAX_PACKET {
            return Ok((s, len));
        }
        // A payload of 16 MB or more continues in further packets: join them.
        let mut joined = self.buf[s..s + len].to_vec();
        loop {
            let (s, len) = self.read_one().await?;
            joined.extend_from_slice(&self.buf[s..s + len]);
            if len < MAX_PACKET {
                break;
            }
        }
        // The joined payload goes first, then what arrived after it, still unread: the
        // caller reads buf[0..len] before the next read.
        let rest = self.buf[self.start..self.end].to_vec();
        let total = joined.len() + rest.len();
        if self.buf.len() < total {
            self.buf.resize(total, 0);
        }
        self.buf[..joined.len()].copy_from_slice(&joined);
        self.buf[joined.len()..total].copy_from_slice(&rest);
        self.start = joined.len();
        self.end = total;
        Ok((0, joined.len()))
    }

    async fn read_one(&mut self) -> Result<(usize, usize), Error> {
        self.fill(4).await?;
        let len = self.next_len().expect("fill(4) buffered a header");
        self.fill(4 + len).await?;
        Ok(self.take(len))
    }

    /// Makes sure `n` unread bytes are buffered.
    async fn fill(&mut self, n: usize) -> Result<(), Error> {
        while self.end - self.start < n {
            self.receive(n).await?;
        }
        Ok(())
    }

    /// The unread bytes the next packet needs in all (`None`: one of 16 MB or more,
    /// which `read_packet` joins), for when `buffered_packet` found it incomplete.
    #[inline]
    fn wanted(&self) -> Option<usize> {
        match self.next_len() {
            None => Some(4),
            Some(len) => (len < MAX_PACKET).then_some(4 + len),
        }
    }

    /// One read of what has arrived, with room made for `n` unread bytes in all. Called
    /// straight from `read_results` when a packet is incomplete: one future there rather
    /// than three nested ones (read_packet, read_one, fill) cut a point select's client
    /// instructions from 4,030 to 3,730, a read/write's by about a tenth (callgrind,
    /// docs/PERFORMANCE.md, session 23).
    async fn receive(&mut self, n: usize) -> Result<(), Error> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < n {
            self.buf.resize(n.next_power_of_two(), 0);
        }
        let got = self.stream.read(&mut self.buf[self.end..]).await?;
        if got == 0 {
            return Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )));
        }
        self.end += got;
        // A read that filled the buffer means results arrive faster than it drains:
        // a bigger buffer saves system calls on this connection from now on.
        if self.end == self.buf.len() && self.buf.len() < READ_BUFFER_MAX {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        Ok(())
    }

    /// Starts a command packet in `out` (header filled in by `send`).
    fn begin(&mut self, command: u8) {
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0, command]);
    }

    async fn send(&mut self, first_seq: u8) -> Result<(), Error> {
        let len = self.out.len() - 4;
        if len >= MAX_PACKET {
            return Err(Error::protocol("command larger than 16 MB"));
        }
        self.out[0] = len as u8;
        self.out[1] = (len >> 8) as u8;
        self.out[2] = (len >> 16) as u8;
        self.out[3] = first_seq;
        self.seq = first_seq.wrapping_add(1);
        self.stream.write_all(&self.out).await?;
        Ok(())
    }

    fn server_error(p: &[u8]) -> Error {
        // ERR: 0xff, code u16, ['#', state 5 bytes], message.
        let code = u16::from_le_bytes([p[1], p[2]]);
        let (state, msg) = if p.len() > 9 && p[3] == b'#' { (&p[4..9], &p[9..]) } else { (&b"HY000"[..], &p[3..]) };
        Error::Server {
            code,
            state: String::from_utf8_lossy(state).into_owned(),
            message: String::from_utf8_lossy(msg).into_owned(),
        }
    }

    // ---- connection phase ----------------------------------------------------------

    async fn handshake(&mut self, o: &ConnectOptions) -> Result<(), Error> {
        let (s, len) = self.read_packet().await?;
        let p = self.buf[s..s + len].to_vec();
        if p.first() == Some(&0xff) {
            return Err(Self::server_error(&p));
        }
        let hs = auth::Greeting::parse(&p)?;
        self.server_version = hs.version.clone();
        self.offered_tls = hs.capabilities & CLIENT_SSL != 0;
        if hs.capabilities & CLIENT_PROTOCOL_41 == 0 {
            return Err(Error::protocol("the server does not speak protocol 4.1"));
        }
        // Not CLIENT_LONG_PASSWORD (bit 0): to a MariaDB server that bit says "MySQL client",
        // and it would ignore our extended capabilities.
        let mut caps = CLIENT_LONG_FLAG
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_RESULTS
            | CLIENT_PS_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH
            | CLIENT_PLUGIN_AUTH_LENENC_DATA;
        if o.database.is_some() {
            caps |= CLIENT_CONNECT_WITH_DB;
        }
        caps &= hs.capabilities | CLIENT_CONNECT_WITH_DB;
        self.cache_metadata = hs.mariadb_capabilities & MARIADB_CLIENT_CACHE_METADATA != 0;
        self.bulk = hs.mariadb_capabilities & MARIADB_CLIENT_STMT_BULK_OPERATIONS != 0;
        self.local_files = hs.capabilities & CLIENT_LOCAL_FILES != 0;
        let ext = hs.mariadb_capabilities & (MARIADB_CLIENT_CACHE_METADATA | MARIADB_CLIENT_STMT_BULK_OPERATIONS);

        // TLS over TCP only: a unix socket is a secure transport already (as the mysql
        // client and the server's require_secure_transport hold).
        let config = match (&o.tls, &self.stream) {
            (_, s) if s.is_unix() => None,
            (TlsUse::Off, _) => None,
            (TlsUse::Preferred(c), _) => self.offered_tls.then(|| c.clone()),
            (TlsUse::Required(c), _) if self.offered_tls => Some(c.clone()),
            (TlsUse::Required(_), _) => {
                return Err(Error::protocol(format!(
                    "--ssl-mode asks for TLS, but the server at {}:{} does not offer it (no ssl_cert set up there); \
                     configure TLS on the server or use --ssl-mode=PREFERRED",
                    o.host, o.port
                )))
            }
        };
        if let Some(config) = config {
            caps |= CLIENT_SSL;
            // SSLRequest: the first 32 bytes of the handshake response, then TLS.
            self.out.clear();
            self.out.extend_from_slice(&[0, 0, 0, 0]);
            self.put_response_head(caps, ext);
            let seq = self.seq;
            self.send(seq).await?;
            self.start_tls(config, &o.host).await?;
        }

        let password = o.password.as_deref().unwrap_or("");
        let (plugin, response) = match self.first_answer(&hs.plugin, password, &hs.scramble, o) {
            Ok(response) => (hs.plugin.clone(), response),
            // A server whose default method is sha256_password, over plain TCP with no RSA
            // key: answer as mysql_native_password. A sha256_password account gets an auth
            // switch, which names the missing key; any other account logs in (the control
            // connection does the same).
            Err(_) if hs.plugin == "sha256_password" => {
                let native = "mysql_native_password";
                (native.to_string(), auth::scramble(native, password, &hs.scramble)?)
            }
            Err(e) => return Err(e),
        };
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0]);
        self.put_response_head(caps, ext);
        self.out.extend_from_slice(o.user.as_bytes());
        self.out.push(0);
        packet::put_lenenc_bytes(&mut self.out, &response);
        if let Some(db) = &o.database {
            self.out.extend_from_slice(db.as_bytes());
            self.out.push(0);
        }
        self.out.extend_from_slice(plugin.as_bytes());
        self.out.push(0);
        let seq = self.seq;
        self.send(seq).await?;
        self.auth_result(o, plugin, hs.scramble).await
    }

    /// Capabilities, max packet, character set, filler and MariaDB's extended capabilities.
    fn put_response_head(&mut self, caps: u32, ext: u32) {
        self.out.extend_from_slice(&caps.to_le_bytes());
        self.out.extend_from_slice(&(MAX_PACKET as u32).to_le_bytes());
        self.out.push(45); // utf8mb4_general_ci
        self.out.extend_from_slice(&[0; 19]);
        self.out.extend_from_slice(&ext.to_le_bytes());
    }

    /// Wraps the TCP stream in TLS and records what was negotiated.
    async fn start_tls(&mut self, config: std::sync::Arc<rustls::ClientConfig>, host: &str) -> Result<(), Error> {
        if self.start != self.end {
            return Err(Error::protocol("the server sent data before the TLS handshake"));
        }
        let name = tls::server_name(host).map_err(Error::Protocol)?;
        let Stream::Plain(plain) = std::mem::replace(&mut self.stream, Stream::Upgrading) else {
            return Err(Error::protocol("TLS over a non-TCP connection"));
        };
        let Some(tcp) = plain.into_tokio_tcp()? else {
            return Err(Error::protocol("TLS over a non-TCP connection"));
        };
        let stream = tokio_rustls::TlsConnector::from(config).connect(name, tcp).await.map_err(|e| {
            // rustls's own words name the problem (for a name mismatch, the names the
            // certificate holds).
            let hint = if e.to_string().contains("not valid for name") {
                "; --ssl-mode=VERIFY_IDENTITY needs --host to be one of the certificate's names (or use VERIFY_CA)"
            } else {
                ""
            };
            Error::Protocol(format!("TLS handshake with {host} failed: {e}{hint}"))
        })?;
        self.tls = Some(TlsInfo::of(stream.get_ref().1));
        self.stream = Stream::Tls(Box::new(stream));
        Ok(())
    }

    /// The first answer for `plugin`: its scramble, or for sha256_password the password
    /// in clear (secure transport), RSA-encrypted (known key), or a request for the key.
    fn first_answer(
        &self,
        plugin: &str,
        password: &str,
        scramble: &[u8],
        o: &ConnectOptions,
    ) -> Result<Vec<u8>, Error> {
        match plugin {
            "sha256_password" if password.is_empty() => Ok(vec![0]),
            "sha256_password" if self.stream.secure() => Ok(auth::cleartext(password)),
            "sha256_password" => match &o.server_public_key {
                Some(pem) => auth::rsa_encrypt(password, scramble, pem),
                None if o.get_server_public_key => Ok(vec![1]),
                None => Err(needs_rsa_key("sha256_password")),
            },
            "mysql_clear_password" if self.stream.secure() => Ok(auth::cleartext(password)),
            "mysql_clear_password" => Err(Error::protocol(
                "the server asks for mysql_clear_password, which would send the password in clear over plain TCP; use TLS (--ssl-mode=REQUIRED) or a unix socket",
            )),
            _ => auth::scramble(plugin, password, scramble),
        }
    }

    /// Follows the server through auth switches and the caching_sha2 / sha256 steps to
    /// OK or ERR.
    async fn auth_result(
        &mut self,
        o: &ConnectOptions,
        mut plugin: String,
        mut scramble: Vec<u8>,
    ) -> Result<(), Error> {
        let password = o.password.as_deref().unwrap_or("");
        // Whether the next AuthMoreData is the server's public key, asked for.
        let mut awaiting_key = plugin == "sha256_password"
            && !self.stream.secure()
            && !password.is_empty()
            && o.server_public_key.is_none();
        loop {
            let (s, len) = self.read_packet().await?;
            let p = self.buf[s..s + len].to_vec();
            let answer = match p.first() {
                Some(0x00) => return Ok(()),
                Some(0xff) => return Err(Self::server_error(&p)),
                Some(0xfe) => {
                    // Auth switch: plugin name, NUL, the plugin's data (a scramble).
                    let rest = &p[1..];
                    let nul = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                    plugin = String::from_utf8_lossy(&rest[..nul]).into_owned();
                    scramble = rest.get(nul + 1..).unwrap_or(&[]).to_vec();
                    // The password scrambles carry a closing NUL; ed25519's 32 random
                    // bytes do not, and may end in a zero byte.
                    if plugin != "client_ed25519" && scramble.last() == Some(&0) {
                        scramble.pop();
                    }
                    let answer = self.first_answer(&plugin, password, &scramble, o)?;
                    awaiting_key = answer == [1] && plugin == "sha256_password";
                    answer
                }
                Some(0x01) if awaiting_key => {
                    // AuthMoreData: the server's PEM public key.
                    awaiting_key = false;
                    auth::rsa_encrypt(password, &scramble, &p[1..])?
                }
                Some(0x01) if plugin == "caching_sha2_password" => match p.get(1) {
                    Some(3) => continue, // fast auth succeeded; OK follows
                    Some(4) => {
                        // Full authentication: the server has no cached hash of this password.
                        if self.stream.secure() {
                            auth::cleartext(password)
                        } else if let Some(pem) = &o.server_public_key {
                            auth::rsa_encrypt(password, &scramble, pem)?
                        } else if o.get_server_public_key {
                            awaiting_key = true;
                            vec![2]
                        } else {
                            return Err(needs_rsa_key("caching_sha2_password"));
                        }
                    }
                    _ => return Err(Error::protocol("unexpected caching_sha2_password step")),
                },
                _ => return Err(Error::protocol(format!("unexpected packet during the {plugin} login"))),
            };
            self.out.clear();
            self.out.extend_from_slice(&[0, 0, 0, 0]);
            self.out.extend_from_slice(&answer);
            let seq = self.seq;
            self.send(seq).await?;
        }
    }

    // ---- commands ------------------------------------------------------------------

    /// Runs SQL as text (COM_QUERY) and discards any result.
    pub async fn query_drop(&mut self, sql: &str) -> Result<Outcome, Error> {
        self.begin(0x03);
        self.out.extend_from_slice(sql.as_bytes());
        self.send(0).await?;
        self.read_results(false, None, Rows::Skip).await
    }

    /// Runs SQL as text and hands each row, decoded, to `row`.
    pub async fn query_rows(&mut self, sql: &str, row: RowSink<'_>) -> Result<Outcome, Error> {
        self.begin(0x03);
        self.out.extend_from_slice(sql.as_bytes());
        self.send(0).await?;
        self.read_results(false, None, Rows::Decode(row)).await
    }

    /// Runs SQL as text and keeps its rows as they came in `rows` (cleared first).
    pub async fn query_stored(&mut self, sql: &[u8], rows: &mut StoredRows) -> Result<Outcome, Error> {
        rows.clear();
        self.begin(0x03);
        self.out.extend_from_slice(sql);
        self.send(0).await?;
        self.read_results(false, None, Rows::Store(rows)).await
    }

    /// Frees a prepared statement on the server (COM_STMT_CLOSE, which has no answer).
    pub async fn close_statement(&mut self, stmt: &Statement) -> Result<(), Error> {
        self.sent_types.remove(&stmt.id);
        self.begin(0x19);
        self.out.extend_from_slice(&stmt.id.to_le_bytes());
        self.send(0).await
    }

    pub async fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        self.begin(0x16);
        self.out.extend_from_slice(sql.as_bytes());
        self.send(0).await?;
        let (s, len) = self.read_packet().await?;
        let p = &self.buf[s..s + len];
        match p.first() {
            Some(0x00) if len >= 12 => {}
            Some(0xff) => return Err(Self::server_error(p)),
            _ => return Err(Error::protocol("unexpected answer to a prepare")),
        }
        let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
        let columns = u16::from_le_bytes([p[5], p[6]]);
        let params = u16::from_le_bytes([p[7], p[8]]);
        // Parameter and column definitions, each list closed by an EOF packet.
        let mut types = Vec::with_capacity(columns as usize);
        for (count, keep) in [(params, false), (columns, true)] {
            if count > 0 {
                for _ in 0..count {
                    let (s, len) = self.read_packet().await?;
                    if keep {
                        types.push(packet::column_type(&self.buf[s..s + len]).unwrap_or(0xfd));
                    }
                }
                self.read_packet().await?;
            }
        }
        Ok(Statement { id, params, columns: types })
    }

    fn encode_execute(&mut self, stmt: &Statement, params: &[Param<'_>]) -> Result<(), Error> {
        if params.len() != stmt.params as usize {
            return Err(Error::protocol(format!("statement takes {} parameters, given {}", stmt.params, params.len())));
        }
        self.begin(0x17);
        self.out.extend_from_slice(&stmt.id.to_le_bytes());
        self.out.push(0); // no cursor
        self.out.extend_from_slice(&1u32.to_le_bytes());
        if !params.is_empty() {
            let bitmap = params.len().div_ceil(8);
            let at = self.out.len();
            self.out.extend(std::iter::repeat_n(0u8, bitmap));
            for (i, p) in params.iter().enumerate() {
                if matches!(p, Param::Null) {
                    self.out[at + i / 8] |= 1 << (i % 8);
                }
            }
            self.param_types.clear();
            for p in params {
                self.param_types.extend_from_slice(match p {
                    // INT-sized ids go as LONG, as sysbench binds them; larger as LONGLONG.
                    Param::Int(v) if i32::try_from(*v).is_ok() => &[0x03, 0],
                    Param::Int(_) => &[0x08, 0],
                    Param::Float(_) => &[0x05, 0], // DOUBLE
                    Param::Bytes(_) => &[0xfd, 0], // VAR_STRING
                    Param::Null => &[0x06, 0],     // NULL
                });
            }
            let sent = self.sent_types.entry(stmt.id).or_default();
            if *sent == self.param_types {
                self.out.push(0); // the server keeps the types of the last execute
            } else {
                self.out.push(1);
                self.out.extend_from_slice(&self.param_types);
                sent.clone_from(&self.param_types);
            }
            for p in params {
                match p {
                    Param::Int(v) => match i32::try_from(*v) {
                        Ok(small) => self.out.extend_from_slice(&small.to_le_bytes()),
                        Err(_) => self.out.extend_from_slice(&v.to_le_bytes()),
                    },
                    Param::Float(f) => self.out.extend_from_slice(&f.to_le_bytes()),
                    Param::Bytes(b) => packet::put_lenenc_bytes(&mut self.out, b),
                    Param::Null => {}
                }
            }
        }
        Ok(())
    }

    /// Executes a prepared statement and discards its rows, counting them.
    pub async fn exec_drop(&mut self, stmt: &Statement, params: &[Param<'_>]) -> Result<Outcome, Error> {
        self.encode_execute(stmt, params)?;
        self.send(0).await?;
        self.read_results(true, Some(&stmt.columns), Rows::Skip).await
    }

    /// Executes a prepared statement and hands each row, decoded, to `row`.
    pub async fn exec_rows(
        &mut self,
        stmt: &Statement,
        params: &[Param<'_>],
        row: RowSink<'_>,
    ) -> Result<Outcome, Error> {
        self.encode_execute(stmt, params)?;
        self.send(0).await?;
        self.read_results(true, Some(&stmt.columns), Rows::Decode(row)).await
    }

    /// Executes and returns the first row, if any.
    pub async fn exec_first(&mut self, stmt: &Statement, params: &[Param<'_>]) -> Result<Option<Vec<Value>>, Error> {
        let mut first = None;
        self.exec_rows(stmt, params, &mut |r| {
            if first.is_none() {
                first = Some(r.to_vec());
            }
        })
        .await?;
        Ok(first)
    }

    /// Runs `stmt` once per row of `rows` with MariaDB's COM_STMT_BULK_EXECUTE: the rows
    /// go in commands of about `limit` bytes, each a list of parameter values sent as
    /// strings (None is NULL), which the server converts as it would literals. Nothing is
    /// parsed per row. Returns the rows affected. Only where [`Conn::bulk`] is true.
    pub async fn exec_bulk<'r, R, F>(&mut self, stmt: &Statement, rows: R, limit: usize) -> Result<u64, Error>
    where
        R: Iterator<Item = F>,
        F: Iterator<Item = Option<&'r [u8]>>,
    {
        if !self.bulk {
            return Err(Error::protocol("the server does not offer COM_STMT_BULK_EXECUTE"));
        }
        let mut rows = rows.peekable();
        let mut affected = 0;
        while rows.peek().is_some() {
            self.begin(0xfa);
            self.out.extend_from_slice(&stmt.id.to_le_bytes());
            self.out.extend_from_slice(&STMT_BULK_FLAG_SEND_TYPES_TO_SERVER.to_le_bytes());
            for _ in 0..stmt.params {
                self.out.extend_from_slice(&[0xfd, 0]); // VAR_STRING
            }
            let first = self.out.len();
            while self.out.len() < limit || self.out.len() == first {
                let Some(row) = rows.next() else { break };
                let mut n = 0;
                for value in row {
                    n += 1;
                    match value {
                        Some(v) => {
                            self.out.push(0); // a value follows
                            packet::put_lenenc_bytes(&mut self.out, v);
                        }
                        None => self.out.push(1), // NULL
                    }
                }
                if n != stmt.params as usize {
                    return Err(Error::protocol(format!("statement takes {} parameters, a row has {n}", stmt.params)));
                }
            }
            self.send(0).await?;
            affected += self.read_results(true, None, Rows::Skip).await?.affected;
        }
        Ok(affected)
    }

    /// Reads every result of a command. Without a row consumer, rows are counted and
    /// skipped in place: nothing is decoded or allocated (the hot path).
    async fn read_results(
        &mut self,
        binary: bool,
        cached_types: Option<&[u8]>,
        mut rows: Rows<'_>,
    ) -> Result<Outcome, Error> {
        let mut outcome = Outcome::default();
        let mut values = Vec::new();
        loop {
            let (s, len) = next_packet!(self);
            let p = &self.buf[s..s + len];
            let status = match p.first() {
                Some(0x00) => {
                    let mut pos = 1;
                    outcome.affected += lenenc_int(p, &mut pos).unwrap_or(0);
                    let _ = lenenc_int(p, &mut pos);
                    u16::from_le_bytes([*p.get(pos).unwrap_or(&0), *p.get(pos + 1).unwrap_or(&0)])
                }
                Some(0xff) => return Err(Self::server_error(p)),
                Some(0xfb) => {
                    return Err(Error::protocol(
                        "the server asked for a LOCAL INFILE, which benchmark sessions do not send",
                    ))
                }
                Some(_) => {
                    let mut pos = 0;
                    let columns = lenenc_int(p, &mut pos).ok_or_else(|| Error::protocol("bad column count"))? as usize;
                    outcome.columns = columns as u64;
                    // With cached metadata the server says whether definitions follow.
                    let follows = !self.cache_metadata || p.get(pos) != Some(&0);
                    // Column types matter only when rows are decoded; the hot path skips them.
                    let decode = matches!(rows, Rows::Decode(_));
                    self.types.clear();
                    if follows {
                        for _ in 0..columns {
                            let (s, len) = next_packet!(self);
                            if decode {
                                self.types.push(packet::column_type(&self.buf[s..s + len]).unwrap_or(0xfd));
                            }
                        }
                    } else if decode {
                        self.types.extend_from_slice(cached_types.unwrap_or(&[]));
                        if self.types.len() != columns {
                            return Err(Error::protocol("the server skipped result metadata this client has not seen"));
                        }
                    }
                    next_packet!(self); // EOF after the column definitions
                    loop {
                        if let Rows::Skip = rows {
                            outcome.rows += self.skip_buffered_rows();
                        }
                        let (s, len) = next_packet!(self);
                        let p = &self.buf[s..s + len];
                        match p.first() {
                            Some(0xfe) if len < 9 => {
                                break u16::from_le_bytes([*p.get(3).unwrap_or(&0), *p.get(4).unwrap_or(&0)]);
                            }
                            Some(0xff) => return Err(Self::server_error(p)),
                            _ => {
                                outcome.rows += 1;
                                match &mut rows {
                                    Rows::Skip => {}
                                    Rows::Decode(consume) => {
                                        if binary {
                                            packet::decode_binary_row(p, &self.types, &mut values)?;
                                        } else {
                                            packet::decode_text_row(p, columns, &mut values)?;
                                        }
                                        consume(&values);
                                    }
                                    Rows::Store(stored) => stored.push(p, columns),
                                }
                            }
                        }
                    }
                }
                None => return Err(Error::protocol("empty packet")),
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(outcome);
            }
        }
    }

    /// Says goodbye (COM_QUIT); errors do not matter any more.
    pub async fn close(mut self) {
        self.begin(0x01);
        let _ = self.send(0).await;
        // Out before the socket closes (dropping the connection forgets held bytes).
        outbox::flush();
    }
}

/// The statement with its parameters written in as literals (the text fallback).
pub fn interpolate(sql: &str, params: &[Param<'_>]) -> String {
    let mut out = String::with_capacity(sql.len() + 16 * params.len());
    let mut params = params.iter();
    for (i, part) in sql.split('?').enumerate() {
        if i > 0 {
            match params.next() {
                Some(Param::Int(v)) => out.push_str(itoa::Buffer::new().format(*v)),
                Some(Param::Float(f)) => out.push_str(&format!("{f}")),
                Some(Param::Bytes(b)) => {
                    out.push('\'');
                    for &c in *b {
                        match c {
                            b'\'' => out.push_str("''"),
                            b'\\' => out.push_str("\\\\"),
                            c => out.push(c as char),
                        }
                    }
                    out.push('\'');
                }
                Some(Param::Null) | None => out.push_str("NULL"),
            }
        }
        out.push_str(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let len = payload.len() as u32;
        let mut p = vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, seq];
        p.extend_from_slice(payload);
        p
    }

    /// A server side that writes `bytes` in pieces of 1 to `max` bytes, pausing every
    /// 40 pieces and after byte `pause_at`, so that the client's reads see packets cut
    /// anywhere. What the client sends is left unread (its commands are small).
    fn peer_writing(
        bytes: Vec<u8>,
        max: usize,
        pause_at: Option<usize>,
    ) -> (std::os::unix::net::UnixStream, std::thread::JoinHandle<std::os::unix::net::UnixStream>) {
        let (ours, mut server) = std::os::unix::net::UnixStream::pair().unwrap();
        let peer = std::thread::spawn(move || {
            let (mut at, mut n) = (0, 0usize);
            while at < bytes.len() {
                let size = (n * 7 % max + 1).min(bytes.len() - at);
                server.write_all(&bytes[at..at + size]).unwrap();
                at += size;
                n += 1;
                if n % 40 == 0 || Some(at) == pause_at {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            }
            server
        });
        (ours, peer)
    }

    /// Pins the buffered-packet fast path: a result whose packets reach the client cut
    /// at every possible place (inside headers, inside rows, several at once), followed
    /// at once by the next command's answer. Every row is counted, every value decoded
    /// right, and the bytes of the second answer are not lost to the first.
    #[tokio::test(flavor = "current_thread")]
    async fn rows_cut_anywhere_across_reads_are_each_read_once() {
        const ROWS: i64 = 700;
        // A binary result without metadata (MariaDB's cached metadata): column count 1
        // with "no definitions follow", an EOF, the rows, the final EOF; then an OK
        // with 3 rows affected.
        let mut stream = packet(1, &[1, 0]);
        stream.extend(packet(2, &[0xfe, 0, 0, 2, 0]));
        for i in 0..ROWS {
            let mut row = vec![0x00, 0x00];
            row.extend_from_slice(&(i * 1_000_003).to_le_bytes());
            stream.extend(packet(3u8.wrapping_add(i as u8), &row));
        }
        stream.extend(packet(0, &[0xfe, 0, 0, 2, 0]));
        let first = stream.len();
        stream.extend(packet(1, &[0x00, 3, 0, 2, 0, 0, 0]));

        let (ours, peer) = peer_writing(stream, 13, Some(first));
        let mut conn = Conn::with_stream(Stream::Plain(socket::Plain::from_unix(ours).unwrap()), vec![0; 64]);
        conn.cache_metadata = true;
        let stmt = Statement { id: 1, params: 0, columns: vec![0x08] };
        let mut seen = Vec::new();
        let out = conn
            .exec_rows(&stmt, &[], &mut |r| {
                seen.push(r[0].as_i64().unwrap());
            })
            .await
            .unwrap();
        assert_eq!(out.rows, ROWS as u64);
        assert_eq!(seen, (0..ROWS).map(|i| i * 1_000_003).collect::<Vec<_>>());
        let out = conn.exec_drop(&stmt, &[]).await.unwrap();
        assert_eq!((out.rows, out.affected), (0, 3));
        drop(peer.join().unwrap());
    }

    /// Pins the skipped-rows walk (`skip_buffered_rows`): rows nobody reads, reaching the
    /// client in pieces of every size, are each counted once; a row that starts with
    /// 0xfe but is too long for an EOF is a row; an error in the middle of the rows ends
    /// the result as an error; and the answers after each are read whole.
    #[tokio::test(flavor = "current_thread")]
    async fn skipped_rows_cut_anywhere_are_counted_once() {
        const ROWS: usize = 700;
        let head = |stream: &mut Vec<u8>| {
            stream.extend(packet(1, &[1, 0]));
            stream.extend(packet(2, &[0xfe, 0, 0, 2, 0]));
        };
        let mut stream = Vec::new();
        head(&mut stream);
        for i in 0..ROWS {
            // Rows of 2 to 40 bytes; every 50th is a text row whose first value's length
            // is written as 0xfe and eight bytes.
            let row = if i % 50 == 7 { vec![0xfe; 9 + i % 5] } else { vec![0x00; 2 + i * 11 % 39] };
            stream.extend(packet(3u8.wrapping_add(i as u8), &row));
        }
        stream.extend(packet(0, &[0xfe, 0, 0, 2, 0]));
        head(&mut stream);
        for i in 0..5u8 {
            stream.extend(packet(3 + i, &[0x00, 0x00, i]));
        }
        stream.extend(packet(8, b"\xff\x28\x04#HY000Out of sort memory"));
        stream.extend(packet(1, &[0x00, 3, 0, 2, 0, 0, 0]));

        for chunk in [1usize, 5, 13, 97, 4096] {
            let (ours, peer) = peer_writing(stream.clone(), chunk, None);
            let mut conn = Conn::with_stream(Stream::Plain(socket::Plain::from_unix(ours).unwrap()), vec![0; 64]);
            conn.cache_metadata = true;
            let stmt = Statement { id: 1, params: 0, columns: vec![0x08] };
            // Bounded: an end of result taken for a row leaves the client waiting.
            let answers = async {
                let rows = conn.exec_drop(&stmt, &[]).await.unwrap();
                let err = conn.exec_drop(&stmt, &[]).await.unwrap_err();
                (rows, err, conn.exec_drop(&stmt, &[]).await.unwrap())
            };
            let bound = std::time::Duration::from_secs(60);
            let (rows, err, ok) = crate::timer::timeout(bound, answers).await.expect("an end of result was missed");
            assert_eq!(rows.rows, ROWS as u64, "pieces of up to {chunk} bytes");
            assert!(err.to_string().contains("Out of sort memory"), "pieces of up to {chunk}: {err}");
            assert_eq!((ok.rows, ok.affected), (0, 3), "pieces of up to {chunk} bytes");
            drop(peer.join().unwrap());
        }
    }

    /// Pins the way out of the buffered-packet path for a row of 16 MB or more: it comes
    /// as a full-size packet and the rest, which `read_results` must join, not take the
    /// first piece for the whole row. And the bug it found: joining dropped whatever had
    /// arrived after the row (here the final EOF and the next answer), and the client
    /// then waited for them for ever.
    #[tokio::test(flavor = "current_thread")]
    async fn joining_a_16_mb_row_keeps_what_arrived_after_it() {
        // One VAR_STRING column: row header, null bitmap, lenenc length (0xfe + 8 bytes).
        let len = MAX_PACKET + 50 - 11;
        let mut row = vec![0x00, 0x00, 0xfe];
        row.extend_from_slice(&(len as u64).to_le_bytes());
        row.extend((0..len).map(|i| (i % 251) as u8));
        let mut stream = packet(1, &[1, 0]);
        stream.extend(packet(2, &[0xfe, 0, 0, 2, 0]));
        stream.extend(packet(3, &row[..MAX_PACKET]));
        stream.extend(packet(4, &row[MAX_PACKET..]));
        stream.extend(packet(5, &[0xfe, 0, 0, 2, 0]));
        stream.extend(packet(1, &[0x00, 1, 0, 2, 0, 0, 0]));
        let (ours, mut server) = std::os::unix::net::UnixStream::pair().unwrap();
        let peer = std::thread::spawn(move || {
            server.write_all(&stream).unwrap();
            server
        });
        let mut conn = Conn::with_stream(Stream::Plain(socket::Plain::from_unix(ours).unwrap()), vec![0; 64]);
        conn.cache_metadata = true;
        let stmt = Statement { id: 1, params: 0, columns: vec![0xfd] };
        let mut seen = Vec::new();
        // Bounded, so that the bug fails the test instead of hanging it.
        let wait = std::time::Duration::from_secs(60);
        let mut keep = |r: &[Value]| seen.push(r[0].as_bytes().unwrap().to_vec());
        let out = crate::timer::timeout(wait, conn.exec_rows(&stmt, &[], &mut keep))
            .await
            .expect("the rest of the result never came")
            .unwrap();
        assert_eq!(out.rows, 1);
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].len(), len);
        assert!(seen[0].iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        let out =
            crate::timer::timeout(wait, conn.exec_drop(&stmt, &[])).await.expect("the next answer never came").unwrap();
        assert_eq!((out.rows, out.affected), (0, 1));
        drop(peer.join().unwrap());
    }
}
