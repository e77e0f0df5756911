//! The server a command talks to: where it is, who to log in as, which database.
//!
//! A password may be held here to log in, but it is never printed, serialised or
//! stored: `describe` and the `Serialize` form leave it out.

pub mod stall;

use crate::error::Invalid;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use serde::Serialize;
use sizeup_model::capture::OWN_MARK as OWN;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

#[derive(Clone, Serialize)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub socket: Option<PathBuf>,
    pub user: String,
    #[serde(skip)]
    pub password: Option<String>,
    pub database: String,
    /// TLS and login settings (the mysql client's --ssl-mode and friends).
    pub tls: Tls,
}

/// The mysql client's --ssl-mode values, with their meanings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SslMode {
    /// Never TLS.
    Disabled,
    /// TLS over TCP when the server offers it, else plain; the certificate is not checked.
    #[default]
    Preferred,
    /// TLS over TCP or no connection; the certificate is not checked.
    Required,
    /// As REQUIRED, and the certificate chain is checked against --ssl-ca.
    VerifyCa,
    /// As VERIFY_CA, and the certificate must name the host connected to.
    VerifyIdentity,
}

impl SslMode {
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disabled => "DISABLED",
            SslMode::Preferred => "PREFERRED",
            SslMode::Required => "REQUIRED",
            SslMode::VerifyCa => "VERIFY_CA",
            SslMode::VerifyIdentity => "VERIFY_IDENTITY",
        }
    }

    /// An --ssl-mode value (any case).
    pub fn parse(s: &str) -> Result<SslMode, Invalid> {
        Ok(match s.to_ascii_uppercase().replace('-', "_").as_str() {
            "DISABLED" => SslMode::Disabled,
            "PREFERRED" => SslMode::Preferred,
            "REQUIRED" => SslMode::Required,
            "VERIFY_CA" => SslMode::VerifyCa,
            "VERIFY_IDENTITY" => SslMode::VerifyIdentity,
            _ => {
                return Err(Invalid::Value(format!(
                    "--ssl-mode '{s}' is not one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY"
                )))
            }
        })
    }

    /// sysbench's --mysql-ssl: on/off (libmariadb builds: on means TLS without
    /// certificate checks, i.e. REQUIRED) or an --ssl-mode name (libmysqlclient builds).
    pub fn parse_sysbench(s: &str) -> Result<SslMode, Invalid> {
        match s.to_ascii_lowercase().as_str() {
            "on" | "yes" | "true" | "1" => Ok(SslMode::Required),
            "off" | "no" | "false" | "0" => Ok(SslMode::Disabled),
            _ => SslMode::parse(s).map_err(|_| {
                Invalid::Value(format!(
                    "--mysql-ssl '{s}' is not on, off, or one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY"
                ))
            }),
        }
    }
}

/// The TLS and login options as given on the command line (or by an option file),
/// before they are checked: plain values, whatever parsed them.
#[derive(Clone, Debug, Default)]
pub struct TlsArgs {
    pub ssl_mode: Option<String>,
    /// sysbench's --mysql-ssl.
    pub mysql_ssl: Option<String>,
    pub ssl_ca: Option<PathBuf>,
    pub ssl_cert: Option<PathBuf>,
    pub ssl_key: Option<PathBuf>,
    pub mysql_ssl_ca: Option<PathBuf>,
    pub mysql_ssl_cert: Option<PathBuf>,
    pub mysql_ssl_key: Option<PathBuf>,
    pub server_public_key_path: Option<PathBuf>,
    pub get_server_public_key: bool,
}

/// How a target's connections are secured and how passwords may travel. Serialised
/// with paths and mode only: never key material.
#[derive(Clone, Default, Serialize)]
pub struct Tls {
    pub mode: SslMode,
    pub ca: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// The server's RSA public key file (--server-public-key-path).
    pub server_public_key: Option<PathBuf>,
    /// Ask the server for its RSA public key when needed (--get-server-public-key).
    pub get_server_public_key: bool,
    /// Files read and the rustls configuration built once, shared by every clone.
    #[serde(skip)]
    state: Arc<TlsState>,
}

#[derive(Default)]
struct TlsState {
    prepared: OnceLock<Prepared>,
    /// A PREFERRED control connection found the server without TLS: later connections
    /// (both paths) go plain straight away.
    server_without_tls: AtomicBool,
}

struct Prepared {
    config: Option<Arc<rustls::ClientConfig>>,
    public_key: Option<Arc<[u8]>>,
    error: Option<String>,
}

impl Tls {
    /// Checks the raw options and makes them one setting. Pure: files are read at the
    /// first connection. --ssl-ca without --ssl-mode means VERIFY_CA, as in the mysql client.
    pub fn from_args(a: &TlsArgs) -> Result<Tls, Invalid> {
        let mode = match (&a.ssl_mode, &a.mysql_ssl) {
            (Some(m), Some(s)) => {
                let (m, s) = (SslMode::parse(m)?, SslMode::parse_sysbench(s)?);
                if m != s {
                    return Err(Invalid::Value(format!(
                        "--ssl-mode={} and --mysql-ssl={} disagree: give one of them",
                        m.name(),
                        s.name()
                    )));
                }
                Some(m)
            }
            (Some(m), None) => Some(SslMode::parse(m)?),
            (None, Some(s)) => Some(SslMode::parse_sysbench(s)?),
            (None, None) => None,
        };
        fn one(a: &Option<PathBuf>, b: &Option<PathBuf>, name: &str) -> Result<Option<PathBuf>, Invalid> {
            match (a, b) {
                (Some(x), Some(y)) if x != y => {
                    Err(Invalid::Value(format!("--ssl-{name} and --mysql-ssl-{name} name different files")))
                }
                _ => Ok(a.clone().or_else(|| b.clone())),
            }
        }
        let ca = one(&a.ssl_ca, &a.mysql_ssl_ca, "ca")?;
        let cert = one(&a.ssl_cert, &a.mysql_ssl_cert, "cert")?;
        let key = one(&a.ssl_key, &a.mysql_ssl_key, "key")?;
        let mode = mode.unwrap_or(if ca.is_some() { SslMode::VerifyCa } else { SslMode::Preferred });
        if matches!(mode, SslMode::VerifyCa | SslMode::VerifyIdentity) && ca.is_none() {
            return Err(Invalid::Value(format!(
                "--ssl-mode={} needs --ssl-ca FILE (the certificate of the CA that signed the server's)",
                mode.name()
            )));
        }
        if cert.is_some() != key.is_some() {
            return Err(Invalid::Value("--ssl-cert and --ssl-key go together: give both or neither".into()));
        }
        Ok(Tls {
            mode,
            ca,
            cert,
            key,
            server_public_key: a.server_public_key_path.clone(),
            get_server_public_key: a.get_server_public_key,
            state: Default::default(),
        })
    }

    /// What the user asked for that this connection will not do, as the mysql client
    /// warns of it: a CA given to a mode that checks no certificate, and TLS asked of a
    /// unix socket (never used there: it counts as secure).
    pub fn unused(&self, socket: bool) -> Vec<String> {
        let mut w = Vec::new();
        if socket && self.mode != SslMode::Disabled && (self.mode != SslMode::Preferred || self.ca.is_some()) {
            w.push(format!(
                "{}: TLS is not used over a unix socket (it counts as secure); give --host and --port for TLS",
                self.describe()
            ));
        } else if self.ca.is_some() && matches!(self.mode, SslMode::Required | SslMode::Preferred) {
            w.push(format!(
                "no verification of the server's certificate will be done with ssl-mode {}: the --ssl-ca given is \
                 not used; use --ssl-mode VERIFY_CA or VERIFY_IDENTITY",
                self.mode.name()
            ));
        }
        w
    }

    /// The one-line form for messages: the mode, and the CA when one is checked.
    pub fn describe(&self) -> String {
        match &self.ca {
            Some(ca) if matches!(self.mode, SslMode::VerifyCa | SslMode::VerifyIdentity) => {
                format!("ssl-mode {} (CA {})", self.mode.name(), ca.display())
            }
            _ => format!("ssl-mode {}", self.mode.name()),
        }
    }

    fn verify(&self) -> crate::client::tls::Verify {
        use crate::client::tls::Verify;
        match self.mode {
            SslMode::VerifyCa => Verify::Chain,
            SslMode::VerifyIdentity => Verify::Identity,
            _ => Verify::Nothing,
        }
    }

    fn prepared(&self) -> &Prepared {
        self.state.prepared.get_or_init(|| {
            let mut error = None;
            let config = if self.mode == SslMode::Disabled {
                None
            } else {
                let c = crate::client::tls::client_config(
                    self.verify(),
                    self.ca.as_deref(),
                    self.cert.as_deref(),
                    self.key.as_deref(),
                );
                c.map_err(|e| error = Some(e)).ok()
            };
            let public_key = self.server_public_key.as_deref().and_then(|p| match crate::client::tls::read_pem(p) {
                Ok(b) if crate::client::is_public_key(&b) => Some(Arc::from(b)),
                Ok(_) => {
                    error
                        .get_or_insert(format!("--server-public-key-path {} is not a PEM RSA public key", p.display()));
                    None
                }
                Err(e) => {
                    error.get_or_insert(format!("cannot read --server-public-key-path {}: {e}", p.display()));
                    None
                }
            });
            Prepared { config, public_key, error }
        })
    }

    /// mysql_async's TLS options for a TCP connection in this mode (None: plain).
    fn ssl_opts(&self) -> Option<mysql_async::SslOpts> {
        // sizeup's own rustls configuration (its certificate verifier, its client
        // certificate), as the benchmark connections use: the same checks in both paths.
        match self.mode {
            SslMode::Disabled => None,
            SslMode::Preferred if self.state.server_without_tls.load(Ordering::Relaxed) => None,
            _ => Some(mysql_async::SslOpts::default().with_rustls_config(self.prepared().config.clone())),
        }
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Where a run's connections go: one server, or several over which the connections are
/// dealt round robin (connection i to server i mod N, as a connection pool or a proxy in
/// round-robin mode deals them). A connection's server is chosen when it connects (and
/// reconnects), never per transaction, so one server costs nothing extra.
#[derive(Clone)]
pub struct Targets(Vec<Target>);

impl Targets {
    /// Several servers, in the order connections are dealt to them; at least one.
    pub fn new(all: Vec<Target>) -> Targets {
        assert!(!all.is_empty(), "a run needs a server");
        Targets(all)
    }

    /// The server connection `i` (counted over the whole run, from 0) talks to.
    pub fn for_connection(&self, i: u32) -> &Target {
        &self.0[i as usize % self.0.len()]
    }

    /// The first server: where the data is checked (node 0 of a cluster).
    pub fn first(&self) -> &Target {
        &self.0[0]
    }

    pub fn all(&self) -> &[Target] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// For messages and the results list: the server, or every server dealt over.
    pub fn describe(&self) -> String {
        match self.0.as_slice() {
            [one] => one.describe(),
            all => format!(
                "{} (round robin per connection)",
                all.iter().map(Target::describe).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

impl From<Target> for Targets {
    fn from(t: Target) -> Targets {
        Targets(vec![t])
    }
}

/// The longest a control connection may take to connect and log in.
pub const CONTROL_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The server could not be reached or refused the login (`code`: the server's
    /// error code when it answered with one).
    #[error("cannot connect to {target}: {reason}")]
    Unreachable { target: String, reason: String, code: Option<u16> },
    /// A statement needed to set up the database failed.
    #[error("{what} on {target} failed: {reason}")]
    Setup { what: String, target: String, reason: String },
}

impl crate::error::LayerError for ConnectError {}

impl ConnectError {
    /// The server is there but the database is not (error 1049): a missing prepare.
    pub fn is_unknown_database(&self) -> bool {
        matches!(self, ConnectError::Unreachable { code: Some(1049), .. })
    }
}

/// A connect that failed on bytes no MySQL server sends (an HTTP server's answer read as
/// a packet header says "Packet is larger than max_allowed_packet").
fn garbled_greeting(e: &mysql_async::Error) -> bool {
    use mysql_async::{DriverError, Error, IoError};
    match e {
        Error::Driver(DriverError::UnexpectedPacket { .. } | DriverError::PacketTooLarge) => true,
        // The packet codec's own errors, which mysql_async passes on as I/O errors.
        Error::Io(IoError::Io(io)) => io.get_ref().is_some_and(|inner| {
            let text = inner.to_string();
            text == "Packet is larger than max_allowed_packet" || text == "Packets out of sync"
        }),
        _ => false,
    }
}

impl Target {
    /// Where this target is, for messages and results: never the password.
    pub fn describe(&self) -> String {
        format!("{} as {}", self.place(), self.user)
    }

    /// The socket or host:port alone.
    pub fn place(&self) -> String {
        match &self.socket {
            Some(s) => format!("socket {}", s.display()),
            None => format!("{}:{}", self.host, self.port),
        }
    }

    pub fn opts(&self, with_database: bool) -> Opts {
        let mut b = OptsBuilder::default()
            .user(Some(self.user.clone()))
            .pass(self.password.clone())
            // Passwords over plain TCP (sha256_password; caching_sha2_password's full
            // authentication), as in the benchmark client (vendor/README.md).
            .server_public_key(self.tls.prepared().public_key.as_deref().map(<[u8]>::to_vec))
            .get_server_public_key(self.tls.get_server_public_key)
            .prefer_socket(false)
            // Every table x statement of a workload stays prepared on each connection.
            .stmt_cache_size(4096usize)
            .tcp_nodelay(true);
        b = match &self.socket {
            // Never TLS over a unix socket: it is a secure transport already.
            Some(s) => b.socket(Some(s.to_string_lossy().into_owned())).ip_or_hostname("localhost"),
            None => b.ip_or_hostname(self.host.clone()).tcp_port(self.port).ssl_opts(self.tls.ssl_opts()),
        };
        if with_database {
            b = b.db_name(Some(self.database.clone()));
        }
        b.into()
    }

    /// Options for the benchmark client (`crate::client`), which runs the measured path.
    pub fn client_options(&self) -> crate::client::ConnectOptions {
        use crate::client::TlsUse;
        let prepared = self.tls.prepared();
        let plain = self.tls.state.server_without_tls.load(Ordering::Relaxed);
        let tls = match (&prepared.config, self.tls.mode) {
            (None, _) | (_, SslMode::Disabled) => TlsUse::Off,
            (Some(_), SslMode::Preferred) if plain => TlsUse::Off,
            (Some(c), SslMode::Preferred) => TlsUse::Preferred(c.clone()),
            (Some(c), _) => TlsUse::Required(c.clone()),
        };
        crate::client::ConnectOptions {
            socket: self.socket.clone(),
            host: self.host.clone(),
            port: self.port,
            user: self.user.clone(),
            password: self.password.clone(),
            database: Some(self.database.clone()),
            tls,
            server_public_key: prepared.public_key.clone(),
            get_server_public_key: self.tls.get_server_public_key,
            invalid: prepared.error.clone(),
        }
    }

    fn unreachable(&self, e: mysql_async::Error) -> ConnectError {
        let code = match &e {
            mysql_async::Error::Server(s) => Some(s.code),
            _ => None,
        };
        let mut reason = short_error(&e);
        if garbled_greeting(&e) {
            reason = format!(
                "it did not answer with a MySQL handshake ({reason}): is a MySQL server listening there, \
                 or another program?"
            );
        }
        if reason.contains("not valid for name") {
            reason.push_str(
                "; --ssl-mode=VERIFY_IDENTITY needs --host to be one of the certificate's names (or use VERIFY_CA)",
            );
        }
        ConnectError::Unreachable { target: self.describe(), reason, code }
    }

    /// What TLS a connection of sizeup's own negotiates with this target (None: plain,
    /// a unix socket included): a benchmark connection, opened and closed.
    pub async fn negotiated_tls(&self) -> Result<Option<crate::client::TlsInfo>, String> {
        if self.socket.is_some() || self.tls.mode == SslMode::Disabled {
            return Ok(None);
        }
        let conn = crate::client::Conn::connect(&self.client_options()).await.map_err(|e| e.to_string())?;
        let tls = conn.tls().cloned();
        conn.close().await;
        Ok(tls)
    }

    /// Connects to the target's database.
    pub async fn connect(&self) -> Result<Conn, ConnectError> {
        self.open_within(true).await
    }

    /// Connects without selecting a database (to create it, or to read server facts).
    pub async fn connect_server(&self) -> Result<Conn, ConnectError> {
        self.open_within(false).await
    }

    /// A server that accepts connections but never greets (stopped, or not a MySQL
    /// server) must not hang sizeup: the connect and login are bounded.
    async fn open_within(&self, with_database: bool) -> Result<Conn, ConnectError> {
        match crate::timer::timeout(CONTROL_CONNECT_TIMEOUT, self.open(with_database)).await {
            Ok(r) => r,
            Err(_) => Err(ConnectError::Unreachable {
                target: self.describe(),
                reason: format!(
                    "no answer within {} s (a stopped or stalled server, or no MySQL server at that address)",
                    CONTROL_CONNECT_TIMEOUT.as_secs()
                ),
                code: None,
            }),
        }
    }

    /// One control connection with the TLS rules of --ssl-mode, and errors that name the
    /// real cause when the server wants TLS.
    async fn open(&self, with_database: bool) -> Result<Conn, ConnectError> {
        if let Some(why) = &self.tls.prepared().error {
            return Err(ConnectError::Unreachable { target: self.describe(), reason: why.clone(), code: None });
        }
        let tcp = self.socket.is_none();
        match self.login(with_database).await {
            Ok(c) => Ok(c),
            // PREFERRED: the server offers no TLS, so plain it is (and stays).
            Err(mysql_async::Error::Driver(mysql_async::DriverError::NoClientSslFlagFromServer))
                if self.tls.mode == SslMode::Preferred =>
            {
                self.tls.state.server_without_tls.store(true, Ordering::Relaxed);
                self.login(with_database).await.map_err(|e| self.unreachable(e))
            }
            Err(mysql_async::Error::Driver(mysql_async::DriverError::NoClientSslFlagFromServer)) => {
                Err(ConnectError::Unreachable {
                    target: self.describe(),
                    reason: format!(
                        "--ssl-mode={} asks for TLS, but the server does not offer it (no ssl_cert set up there); \
                         configure TLS on the server or use --ssl-mode=PREFERRED",
                        self.tls.mode.name()
                    ),
                    code: None,
                })
            }
            Err(mysql_async::Error::Server(e)) if e.code == 3159 => Err(self.tls_required()),
            // MariaDB's require_secure_transport answers a plain login "access denied":
            // if the same login works over TLS, that is what is wrong.
            Err(mysql_async::Error::Server(e)) if e.code == 1045 && tcp && self.opts_plain() => {
                let mut probe = self.clone();
                probe.tls = Tls { mode: SslMode::Required, ..Tls::default() };
                match probe.login(false).await {
                    Ok(c) => {
                        let _ = c.disconnect().await;
                        Err(self.tls_required())
                    }
                    Err(_) => Err(self.unreachable(mysql_async::Error::Server(e))),
                }
            }
            Err(e) => Err(self.unreachable(e)),
        }
    }

    /// One login, tried twice if refused: mysql_common drops a trailing zero byte from
    /// every auth switch's data, and MariaDB's client_ed25519 nonce is 32 random bytes,
    /// so one login in 256 signs the wrong message and is refused. A second try has a
    /// new nonce. Every login of a control connection goes through here (a retry on the
    /// first attempt only left the TLS fallbacks failing one run in 256).
    async fn login(&self, with_database: bool) -> Result<Conn, mysql_async::Error> {
        match Conn::new(self.opts(with_database)).await {
            Err(mysql_async::Error::Server(e)) if e.code == 1045 => Conn::new(self.opts(with_database)).await,
            r => r,
        }
    }

    /// Whether control connections to this target go without TLS.
    fn opts_plain(&self) -> bool {
        self.tls.ssl_opts().is_none()
    }

    fn tls_required(&self) -> ConnectError {
        ConnectError::Unreachable {
            target: self.describe(),
            reason: "the server requires TLS (require_secure_transport) and refuses this plain connection; \
                     --ssl-mode=REQUIRED (or PREFERRED) turns TLS on"
                .into(),
            code: None,
        }
    }

    /// Creates the target database when missing (as sysbench users expect `sbtest`).
    /// One that exists is left alone: `CREATE DATABASE IF NOT EXISTS` would wait for the
    /// schema's metadata lock while another session holds one of its tables (and need a
    /// privilege a user of one database may not have). The CREATE is watched (`every`).
    pub async fn ensure_database(&self, every: std::time::Duration) -> Result<(), ConnectError> {
        let mut conn = self.connect_server().await?;
        let what = format!("creating database {}", self.database);
        let failed = |reason: String| ConnectError::Setup { what: what.clone(), target: self.describe(), reason };
        let exists: Option<u8> = conn
            .query_first(format!(
                "SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = {}",
                literal(&self.database)
            ))
            .await
            .map_err(|e| failed(short_error(&e)))?;
        if exists.is_none() {
            let id = stall::server_id(&mut conn).await.map_err(|e| failed(e.to_string()))?;
            let sql = format!("CREATE DATABASE IF NOT EXISTS {}", quote_ident(&self.database));
            // The watch's probe cannot name a database that is not there yet.
            let probe = Target { database: "information_schema".into(), ..self.clone() };
            let created = stall::watched(&probe, id, every, "", conn.query_drop(sql));
            match created.await {
                Ok(r) => r.map_err(|e| failed(short_error(&e)))?,
                Err(stall::Stalled(why)) => return Err(failed(why)),
            }
        }
        let _ = conn.disconnect().await;
        Ok(())
    }
}

/// A SQL string literal for a name (a database or table name: `check_database` refuses
/// backslashes, which NO_BACKSLASH_ESCAPES would read differently). The control
/// connection sends names as text, not as parameters of a prepared statement: some
/// MySQL-protocol servers (mysql-mimic) answer COM_STMT_PREPARE out of step with
/// CLIENT_DEPRECATE_EOF clients, while every one speaks the text protocol.
pub fn literal(name: &str) -> String {
    format!("'{}'", name.replace('\'', "''"))
}

/// Backquotes an identifier for MySQL.
pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `word` as one shell word, for commands sizeup suggests: as it is when the shell
/// would not split or expand it, else in single quotes.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-.,/:@%+=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// A one-line form of a driver error: the server's own message when there is one.
pub fn short_error(e: &mysql_async::Error) -> String {
    use mysql_async::DriverError;
    match e {
        mysql_async::Error::Server(s) => format!("{} (error {})", s.message, s.code),
        mysql_async::Error::Io(io) => io.to_string().replace("Input/output error: ", ""),
        mysql_async::Error::Driver(DriverError::UnknownAuthPlugin { name }) => format!(
            "the server asks for the {name} login method, which sizeup's control connection does not speak; \
             use a user with caching_sha2_password, sha256_password, mysql_native_password, client_ed25519 or unix_socket"
        ),
        mysql_async::Error::Driver(DriverError::PasswordNeedsServerKey { plugin }) => {
            crate::client::needs_rsa_key(plugin).to_string()
        }
        mysql_async::Error::Driver(DriverError::CleartextPluginDisabled) => {
            "the server asks for mysql_clear_password, \
             which sizeup's control connection does not send; use a user with another login method"
                .into()
        }
        other => other.to_string(),
    }
}

/// The TLS state of a control connection as the server reports it (`Ssl_version`,
/// `Ssl_cipher`; both MySQL and MariaDB have them): None when it is not encrypted.
pub async fn tls_state(conn: &mut Conn) -> Result<Option<crate::client::TlsInfo>, mysql_async::Error> {
    let rows: Vec<(String, Option<String>)> =
        conn.query(format!("{OWN} SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")).await?;
    let get = |name: &str| {
        rows.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).and_then(|(_, v)| v.clone()).unwrap_or_default()
    };
    let (version, cipher) = (get("Ssl_version"), get("Ssl_cipher"));
    Ok((!cipher.is_empty()).then_some(crate::client::TlsInfo { version, cipher }))
}

/// The server family, from its `version` and `version_comment`: MySQL-protocol servers
/// that are not MySQL say so in one or the other (go-mysql-server and Dolt answer
/// version 8.0.31 with the comment "Dolt", mysql-mimic "mysql-mimic", Vitess
/// "8.0.30-Vitess").
pub fn server_family(version: &str, comment: &str) -> &'static str {
    let (v, c) = (version.to_ascii_lowercase(), comment.to_ascii_lowercase());
    let either = |word: &str| v.contains(word) || c.contains(word);
    const NAMED: [(&str, &str); 11] = [
        ("mariadb", "MariaDB"),
        ("tidb", "TiDB"),
        ("vitess", "Vitess"),
        ("dolt", "Dolt"),
        ("mysql-mimic", "mysql-mimic"),
        ("singlestore", "SingleStore"),
        ("memsql", "SingleStore"),
        ("oceanbase", "OceanBase"),
        ("percona xtradb cluster", "Percona XtraDB Cluster"),
        ("percona", "Percona Server"),
        ("aurora", "Aurora MySQL"),
    ];
    NAMED.iter().find(|(word, _)| either(word)).map_or("MySQL", |(_, name)| name)
}

/// The server variables every run records (`server_facts`), and `compare` names when
/// its sides differ in them: what shapes OLTP throughput besides the change compared.
pub const SERVER_VARIABLES: &[&str] = &[
    "version",
    "version_comment",
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "sync_binlog",
    "log_bin",
    "max_connections",
    "max_prepared_stmt_count",
    "thread_handling",
    "transaction_isolation",
    "tx_isolation",
    "performance_schema",
    "wsrep_on",
    "read_only",
];

/// Server facts recorded with every result: version, family, replication and the
/// variables that matter for an OLTP measurement (lowercase name -> value, all strings).
///
/// Variables are read with `SHOW GLOBAL VARIABLES WHERE`, which MySQL 5.7, 8.0, 8.4 and
/// 9.x and MariaDB all allow (MySQL 8.0 removed information_schema.GLOBAL_VARIABLES, and
/// 5.7 refuses it unless show_compatibility_56 is on). Settings that differ by family
/// (innodb_log_file_size / innodb_redo_log_capacity, tx_isolation /
/// transaction_isolation) are recorded as the server has them.
pub async fn server_facts(conn: &mut Conn) -> Result<ServerFacts, mysql_async::Error> {
    let list = SERVER_VARIABLES.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(",");
    let rows: Vec<(String, Option<String>)> =
        conn.query(format!("{OWN} SHOW GLOBAL VARIABLES WHERE Variable_name IN ({list})")).await?;
    let mut facts = ServerFacts::default();
    for (k, v) in rows {
        facts.variables.insert(k.to_ascii_lowercase(), serde_json::Value::String(v.unwrap_or_default()));
    }
    let (version, comment) = (facts.variable("version").unwrap_or_default(), facts.variable("version_comment"));
    let number: String = version.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    facts.server_family = Some(server_family(&version, comment.as_deref().unwrap_or_default()).into());
    facts.server_version = Some(number.trim_end_matches('.').into());
    if let Some(lag) = replication_lag(conn).await {
        facts.replica = true;
        facts.replication_lag_s = lag;
    }
    let absent = absent(&facts.variables);
    if !absent.is_empty() {
        facts.absent = Some(absent.join(", "));
    }
    facts.innodb_unused = innodb_missing(conn).await;
    Ok(facts)
}

pub use sizeup_model::result::ServerFacts;

/// Why InnoDB is not there, by `information_schema.ENGINES`; None when it is, or when
/// the server will not say (its other facts then decide).
async fn innodb_missing(conn: &mut Conn) -> Option<String> {
    let rows: Vec<(String, String)> =
        conn.query(format!("{OWN} SELECT ENGINE, SUPPORT FROM information_schema.ENGINES")).await.ok()?;
    if rows.is_empty() {
        return None;
    }
    match rows.iter().find(|(e, _)| e.eq_ignore_ascii_case("InnoDB")) {
        None => Some("the server has no InnoDB engine (information_schema.ENGINES)".into()),
        Some((_, s)) if !matches!(s.to_ascii_uppercase().as_str(), "YES" | "DEFAULT") => {
            Some(format!("InnoDB's support is {s} (information_schema.ENGINES)"))
        }
        Some(_) => None,
    }
}

/// Why InnoDB's buffer pool does not hold `database`'s data, asked before anything is
/// measured: no InnoDB engine, tables of another engine, or (go-mysql-server and Dolt
/// say InnoDB in both places) a read of a table that left
/// `Innodb_buffer_pool_read_requests` where it was. None: InnoDB serves it, or the
/// server would not say.
pub async fn innodb_unused(conn: &mut Conn, database: &str) -> Option<String> {
    if let Some(why) = innodb_missing(conn).await {
        return Some(why);
    }
    if let Some(why) = tables_not_innodb(conn, database).await {
        return Some(why);
    }
    let table: Option<String> = conn
        .query_first(format!(
            "{OWN} SELECT table_name FROM information_schema.TABLES WHERE table_schema = {} \
             AND table_type = 'BASE TABLE' AND table_name <> 'sizeup_marks' LIMIT 1",
            literal(database)
        ))
        .await
        .ok()
        .flatten();
    let table = table?;
    let requests = |rows: Vec<(String, String)>| rows.first().and_then(|(_, v)| v.trim().parse::<u64>().ok());
    let count = format!("{OWN} SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_read_requests'");
    let before = requests(conn.query(&count).await.ok()?)?;
    let read = format!("SELECT COUNT(*) FROM {}.{}", quote_ident(database), quote_ident(&table));
    let rows: Option<u64> = conn.query_first(read).await.ok()?;
    let after = requests(conn.query(&count).await.ok()?)?;
    (rows.unwrap_or(0) > 0 && after == before).then(|| {
        format!("reading {table}'s rows left Innodb_buffer_pool_read_requests at {before}: no InnoDB underneath")
    })
}

/// Why a run's tables in `database` are not InnoDB's: "the run's tables are
/// ENGINE=MEMORY"; None when any is InnoDB or the server will not say. sizeup's marks
/// table is not the run's data.
pub async fn tables_not_innodb(conn: &mut Conn, database: &str) -> Option<String> {
    let engines: Vec<Option<String>> = conn
        .query(format!(
            "{OWN} SELECT DISTINCT ENGINE FROM information_schema.TABLES WHERE table_schema = {} \
             AND table_type = 'BASE TABLE' AND table_name <> 'sizeup_marks'",
            literal(database)
        ))
        .await
        .ok()?;
    let engines: Vec<String> = engines.into_iter().flatten().collect();
    if engines.is_empty() || engines.iter().any(|e| e.eq_ignore_ascii_case("InnoDB")) {
        return None;
    }
    Some(format!("the run's tables are ENGINE={}", engines.join(", ENGINE=")))
}

/// The settings that shape an OLTP measurement which the server does not have (a
/// MySQL-protocol server that is not InnoDB underneath): named in the facts, so nobody
/// reads a missing one as a default. Where families spell one differently, either
/// spelling counts.
pub fn absent(variables: &std::collections::BTreeMap<String, serde_json::Value>) -> Vec<&'static str> {
    const MATTER: [&[&str]; 9] = [
        &["innodb_buffer_pool_size"],
        &["innodb_log_file_size", "innodb_redo_log_capacity"],
        &["innodb_flush_log_at_trx_commit"],
        &["innodb_flush_method"],
        &["innodb_doublewrite"],
        &["sync_binlog"],
        &["log_bin"],
        &["max_connections"],
        &["transaction_isolation", "tx_isolation"],
    ];
    MATTER.iter().filter(|names| !names.iter().any(|n| variables.contains_key(*n))).map(|names| names[0]).collect()
}

/// Records in `facts` the TLS state of sizeup's own connection (`tls`, what rustls
/// negotiated; None: plain): servers need not report it (go-mysql-server and
/// mysql-mimic leave Ssl_version and Ssl_cipher empty).
pub fn record_tls(facts: &mut ServerFacts, tls: Option<crate::client::TlsInfo>) {
    facts.tls = Some(tls.is_some());
    if let Some(t) = tls {
        facts.tls_version = Some(t.version);
        facts.tls_cipher = Some(t.cipher);
    }
}

/// The data a run reads, as information_schema reports it (InnoDB's figures are
/// estimates): base tables in `database` and their data + index bytes. None when the
/// server will not say.
pub async fn data_size(conn: &mut Conn, database: &str) -> Option<(u64, u64)> {
    let row: Option<(u64, Option<u64>)> = conn
        .query_first(format!(
            "{OWN} SELECT COUNT(*), CAST(SUM(data_length + index_length) AS UNSIGNED) FROM information_schema.TABLES \
             WHERE table_schema = {} AND table_type = 'BASE TABLE'",
            literal(database)
        ))
        .await
        .ok()
        .flatten();
    // No base table (an empty schema) is no size, not 0 bytes.
    row.and_then(|(tables, bytes)| Some((tables, bytes?)))
}

/// A replica's lag in seconds: None when the server replicates from nothing (or the
/// account may not ask), Some(None) when it is a replica whose lag is unknown (its SQL
/// thread stopped). MariaDB and MySQL before 8.4 answer SHOW SLAVE STATUS; MySQL 8.4
/// and later only SHOW REPLICA STATUS (Seconds_Behind_Source).
pub async fn replication_lag(conn: &mut Conn) -> Option<Option<f64>> {
    let mut rows: Vec<mysql_async::Row> = match conn.query(format!("{OWN} SHOW SLAVE STATUS")).await {
        Ok(r) => r,
        Err(mysql_async::Error::Server(_)) => conn.query(format!("{OWN} SHOW REPLICA STATUS")).await.ok()?,
        Err(_) => return None,
    };
    let row = rows.drain(..).next()?;
    let columns = row.columns();
    // A row is no replica without a source: Dolt answers with an idle row whose
    // Source_Host is empty (a_replica_where_there_is_none).
    let source = columns.iter().position(|c| matches!(c.name_str().as_ref(), "Master_Host" | "Source_Host"))?;
    let host: Option<String> = row.get_opt(source).and_then(Result::ok).flatten();
    if host.is_none_or(|h| h.trim().is_empty()) {
        return None;
    }
    let at = columns
        .iter()
        .position(|c| matches!(c.name_str().as_ref(), "Seconds_Behind_Master" | "Seconds_Behind_Source"))?;
    let lag: Option<String> = row.get_opt(at).and_then(Result::ok).flatten();
    Some(lag.and_then(|v| v.parse().ok()))
}

/// Galera's certification conflicts so far on this node: local certification
/// failures plus brute-force aborts (None: the counters cannot be read).
pub async fn galera_conflicts(conn: &mut Conn) -> Option<u64> {
    let c = galera_conflicts_on(conn).await.ok()?;
    Some(c.cert_failures + c.bf_aborts)
}

/// Galera conflicts counted by a node since it started: certification failures (a
/// write set that lost to a concurrent one from another node, the client sees a
/// deadlock error) and brute-force aborts (a local transaction killed by a replicated
/// one). Counted apart from InnoDB's own deadlocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Conflicts {
    /// wsrep_local_cert_failures
    pub cert_failures: u64,
    /// wsrep_local_bf_aborts
    pub bf_aborts: u64,
}

/// Galera's conflict counters on any connection (zeros where wsrep is not loaded).
pub async fn galera_conflicts_on(conn: &mut Conn) -> Result<Conflicts, mysql_async::Error> {
    let v = status_vars(conn, &["wsrep_local_cert_failures", "wsrep_local_bf_aborts"]).await?;
    let n = |k: &str| v.iter().find(|(name, _)| name == k).and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    Ok(Conflicts { cert_failures: n("wsrep_local_cert_failures"), bf_aborts: n("wsrep_local_bf_aborts") })
}

/// `SHOW GLOBAL STATUS` for the given names, as (name, value) pairs (lower-case names).
pub async fn status_vars(conn: &mut Conn, names: &[&str]) -> Result<Vec<(String, String)>, mysql_async::Error> {
    let list: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    let rows: Vec<(String, String)> =
        conn.query(format!("{OWN} SHOW GLOBAL STATUS WHERE Variable_name IN ({})", list.join(", "))).await?;
    Ok(rows.into_iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The undo's hint named the database as it was: `--database my db` runs a cleanup
    /// of a database called `my`, with a stray argument.
    #[test]
    fn the_cleanup_hint_named_a_database_the_shell_splits() {
        assert_eq!(shell_word("sbtest"), "sbtest");
        assert_eq!(shell_word("e-1.x"), "e-1.x");
        assert_eq!(shell_word("my db"), "'my db'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(shell_word(""), "''");
    }

    fn args() -> TlsArgs {
        TlsArgs::default()
    }

    #[test]
    fn tls_defaults_to_preferred_and_ssl_ca_alone_means_verify_ca() {
        assert_eq!(Tls::from_args(&args()).unwrap().mode, SslMode::Preferred);
        let t = Tls::from_args(&TlsArgs { ssl_ca: Some("ca.pem".into()), ..args() }).unwrap();
        assert_eq!(t.mode, SslMode::VerifyCa);
        let t = Tls::from_args(&TlsArgs { ssl_mode: Some("required".into()), ..args() }).unwrap();
        assert_eq!(t.mode, SslMode::Required);
    }

    /// `--ssl-mode REQUIRED --ssl-ca WRONG` ran without a word that the CA was not used,
    /// and VERIFY_IDENTITY over a socket dropped TLS silently.
    #[test]
    fn tls_asked_for_and_not_done_is_said() {
        let tls = |mode: &str, ca: bool| {
            Tls::from_args(&TlsArgs { ssl_mode: Some(mode.into()), ssl_ca: ca.then(|| "ca.pem".into()), ..args() })
                .unwrap()
        };
        let w = tls("REQUIRED", true).unused(false);
        assert!(w.len() == 1 && w[0].contains("--ssl-ca given is not used"), "{w:?}");
        assert!(tls("REQUIRED", false).unused(false).is_empty());
        assert!(tls("VERIFY_CA", true).unused(false).is_empty());
        let w = tls("VERIFY_IDENTITY", true).unused(true);
        assert!(w.len() == 1 && w[0].contains("not used over a unix socket"), "{w:?}");
        assert!(tls("PREFERRED", false).unused(true).is_empty(), "the default says nothing");
    }

    #[test]
    fn tls_options_are_checked_with_one_line_errors() {
        let e = |a: TlsArgs| Tls::from_args(&a).err().unwrap();
        let verify_ca = e(TlsArgs { ssl_mode: Some("VERIFY_CA".into()), ..args() });
        assert!(matches!(&verify_ca, Invalid::Value(m) if m.contains("--ssl-ca")), "{verify_ca}");
        assert!(
            matches!(&e(TlsArgs { ssl_mode: Some("sometimes".into()), ..args() }), Invalid::Value(m) if m.contains("DISABLED, PREFERRED"))
        );
        assert!(
            matches!(&e(TlsArgs { ssl_cert: Some("c.pem".into()), ..args() }), Invalid::Value(m) if m.contains("--ssl-key"))
        );
        let both = e(TlsArgs { ssl_mode: Some("DISABLED".into()), mysql_ssl: Some("on".into()), ..args() });
        assert!(matches!(&both, Invalid::Value(m) if m.contains("disagree")), "{both}");
        for e in [verify_ca, both] {
            assert!(matches!(&e, Invalid::Value(m) if !m.contains('\n')));
        }
    }

    #[test]
    fn sysbench_mysql_ssl_spellings() {
        let mode = |s: &str| Tls::from_args(&TlsArgs { mysql_ssl: Some(s.into()), ..args() }).map(|t| t.mode);
        assert_eq!(mode("on"), Ok(SslMode::Required));
        assert_eq!(mode("off"), Ok(SslMode::Disabled));
        assert_eq!(mode("PREFERRED"), Ok(SslMode::Preferred));
        assert_eq!(mode("disabled"), Ok(SslMode::Disabled));
        assert!(mode("maybe").is_err());
        let t = Tls::from_args(&TlsArgs {
            mysql_ssl: Some("VERIFY_IDENTITY".into()),
            mysql_ssl_ca: Some("ca.pem".into()),
            mysql_ssl_cert: Some("c.pem".into()),
            mysql_ssl_key: Some("k.pem".into()),
            ..args()
        })
        .unwrap();
        assert_eq!(
            (t.mode, t.ca.as_deref(), t.key.as_deref()),
            (SslMode::VerifyIdentity, Some(Path::new("ca.pem")), Some(Path::new("k.pem")))
        );
    }

    #[test]
    fn target_serialises_the_ssl_mode_but_no_secret() {
        let t = Target {
            host: "h".into(),
            port: 1,
            socket: None,
            user: "u".into(),
            password: Some("hunter2".into()),
            database: "d".into(),
            tls: Tls::from_args(&TlsArgs { ssl_mode: Some("REQUIRED".into()), ..args() }).unwrap(),
        };
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains("\"mode\":\"REQUIRED\""), "{json}");
        assert!(!json.contains("hunter2"), "{json}");
    }

    #[test]
    fn server_family_names_dolt_and_mysql_mimic() {
        assert_eq!(server_family("10.11.19-MariaDB-0+deb12u1", "Debian 12"), "MariaDB");
        assert_eq!(server_family("8.0.36-28", "Percona Server (GPL), Release 28"), "Percona Server");
        assert_eq!(server_family("8.4.0", "MySQL Community Server - GPL"), "MySQL");
        assert_eq!(server_family("8.0.11-TiDB-v7.5.0", "TiDB Server"), "TiDB");
        assert_eq!(server_family("8.0.31", "Dolt"), "Dolt");
        assert_eq!(server_family("8.0.29", "mysql-mimic"), "mysql-mimic");
        assert_eq!(server_family("8.0.30-Vitess", "Version: 19.0.4"), "Vitess");
        assert_eq!(server_family("8.0.32", "Source distribution"), "MySQL");
    }

    #[test]
    fn absent_variables_are_listed_in_the_facts() {
        let facts = |names: &[&str]| {
            names
                .iter()
                .map(|n| (n.to_string(), serde_json::Value::from("1")))
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        // MySQL 8.4 spells the redo log and isolation its way: nothing absent.
        let mysql = facts(&[
            "innodb_buffer_pool_size",
            "innodb_redo_log_capacity",
            "innodb_flush_log_at_trx_commit",
            "innodb_flush_method",
            "innodb_doublewrite",
            "sync_binlog",
            "log_bin",
            "max_connections",
            "transaction_isolation",
        ]);
        assert!(absent(&mysql).is_empty());
        // A server with no storage engine settings (mysql-mimic).
        let bare = facts(&["max_connections", "transaction_isolation"]);
        let missing = absent(&bare);
        assert!(
            missing.contains(&"innodb_buffer_pool_size") && missing.contains(&"innodb_log_file_size"),
            "{missing:?}"
        );
        assert!(!missing.contains(&"max_connections"));
    }
}
