//! TLS for benchmark connections: rustls set up with the mysql client's `--ssl-mode`
//! meanings. REQUIRED and PREFERRED encrypt without checking the certificate (as the
//! mysql client does); VERIFY_CA checks the chain against `--ssl-ca`; VERIFY_IDENTITY
//! also the host name.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::Path;
use std::sync::Arc;

/// How much of the server's certificate is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// Nothing (REQUIRED, PREFERRED): encryption only.
    Nothing,
    /// The chain up to a certificate of `--ssl-ca` (VERIFY_CA).
    Chain,
    /// The chain and the host name (VERIFY_IDENTITY).
    Identity,
}

/// What a TLS connection negotiated, for the run's record.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TlsInfo {
    /// e.g. "TLSv1.3".
    pub version: String,
    /// e.g. "TLS13_AES_256_GCM_SHA384".
    pub cipher: String,
}

impl TlsInfo {
    pub(crate) fn of(c: &rustls::ClientConnection) -> TlsInfo {
        let version = match c.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
            Some(v) => format!("{v:?}"),
            None => "unknown".to_string(),
        };
        let cipher = c.negotiated_cipher_suite().map(|s| format!("{:?}", s.suite())).unwrap_or_default();
        TlsInfo { version, cipher }
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A client configuration for `verify`, trusting `ca` and presenting `cert`/`key` when
/// given. Errors name the file and the option.
pub fn client_config(
    verify: Verify,
    ca: Option<&Path>,
    cert: Option<&Path>,
    key: Option<&Path>,
) -> Result<Arc<ClientConfig>, String> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up failed: {e}"))?;
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        Verify::Nothing => Arc::new(Unverified(provider.signature_verification_algorithms)),
        Verify::Chain | Verify::Identity => {
            let ca = ca.ok_or_else(|| "certificate verification needs --ssl-ca FILE".to_string())?;
            let mut roots = RootCertStore::empty();
            for c in read_certs(ca, "--ssl-ca")? {
                roots.add(c).map_err(|e| format!("--ssl-ca {}: {e}", ca.display()))?;
            }
            let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| format!("--ssl-ca {}: {e}", ca.display()))?;
            if verify == Verify::Chain {
                Arc::new(ChainOnly(inner))
            } else {
                inner
            }
        }
    };
    let builder = builder.dangerous().with_custom_certificate_verifier(verifier);
    let config = match (cert, key) {
        (Some(cert), Some(key)) => {
            let chain = read_certs(cert, "--ssl-cert")?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("cannot read a private key from --ssl-key {}: {e}", key.display()))?;
            builder.with_client_auth_cert(chain, key).map_err(|e| match version_1(&e.to_string()) {
                true => format!(
                    "--ssl-cert {} is an X.509 version 1 certificate, which rustls cannot use; \
                     make a version 3 one (openssl x509 -req ... -extfile with extendedKeyUsage=clientAuth)",
                    cert.display()
                ),
                false => format!("--ssl-cert/--ssl-key: {e}"),
            })?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("--ssl-cert and --ssl-key go together: give both or neither".into()),
    };
    Ok(Arc::new(config))
}

/// Whether a rustls error is its refusal of an X.509 version 1 certificate. rustls
/// (webpki) reads only version 3, even when nothing is verified; `openssl x509 -req`
/// without extensions makes version 1, and servers present such certificates (MariaDB
/// 11.4.0-11.4.1's self-made ones, a MySQL HeatWave default one).
pub fn version_1(rustls_message: &str) -> bool {
    rustls_message.contains("UnsupportedCertVersion")
}

/// The words for a server whose certificate is version 1, after "the server's TLS
/// certificate".
pub const SERVER_VERSION_1: &str = "is X.509 version 1, which rustls (sizeup's TLS library) cannot read, \
     even without verification; give the server a version 3 certificate, or use --ssl-mode=DISABLED \
     where the server allows plain connections";

fn read_certs(path: &Path, option: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read certificates from {option} {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{option} {} holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

/// The name rustls checks the certificate against: an IP address or a DNS name.
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(host.to_string()).map_err(|_| format!("'{host}' is not a host name TLS can check"))
}

/// REQUIRED/PREFERRED: any certificate, but the handshake signatures are still checked.
#[derive(Debug)]
struct Unverified(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// VERIFY_CA: the full check, except that a name mismatch is accepted (rustls checks
/// the chain first, so a name error means the chain was good).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
