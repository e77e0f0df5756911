//! TLS for every connection (benchmark and control): rustls set up with the mysql
//! client's `--ssl-mode` meanings. REQUIRED and PREFERRED encrypt without checking the
//! certificate (as the mysql client does); VERIFY_CA checks the chain against `--ssl-ca`;
//! VERIFY_IDENTITY also the host name.
//!
//! webpki (rustls's verifier) reads only X.509 version 3 certificates and refuses a CA
//! certificate as the server's own; OpenSSL, under the mysql client, takes both. Where
//! webpki refuses for those reasons only, the certificate is checked here instead:
//! parsed by x509-parser, its signature checked by ring through x509-parser (issued by a
//! certificate of `--ssl-ca`, or that certificate itself), its validity period, and for
//! VERIFY_IDENTITY its names; the handshake's signature by webpki's raw-key check.

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
    let algs = provider.signature_verification_algorithms;
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        Verify::Nothing => Arc::new(Unverified(algs)),
        Verify::Chain | Verify::Identity => {
            let ca = ca.ok_or_else(|| "certificate verification needs --ssl-ca FILE".to_string())?;
            let mut roots = RootCertStore::empty();
            let anchors = read_certs(ca, "--ssl-ca")?;
            for c in anchors.iter().cloned() {
                // A version 1 CA is no webpki trust anchor: it is still one of ours.
                if let Err(e) = roots.add(c) {
                    if !version_1(&format!("{e:?}")) {
                        return Err(format!("--ssl-ca {}: {e}", ca.display()));
                    }
                }
            }
            let webpki = (!roots.is_empty())
                .then(|| WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone()).build())
                .transpose()
                .map_err(|e| format!("--ssl-ca {}: {e}", ca.display()))?;
            Arc::new(Checked { webpki, anchors, identity: verify == Verify::Identity, algs })
        }
    };
    let builder = builder.dangerous().with_custom_certificate_verifier(verifier);
    let config = match (cert, key) {
        (Some(cert), Some(key)) => {
            let chain = read_certs(cert, "--ssl-cert")?;
            let key = read_pem(key)
                .map_err(|e| e.to_string())
                .and_then(|pem| PrivateKeyDer::from_pem_slice(&pem).map_err(|e| e.to_string()))
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

/// A certificate or key file, bounded: `--ssl-ca /dev/zero` read line by line never ends.
pub(crate) fn read_pem(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::user_file::read(path, crate::user_file::PEM_LIMIT, "a PEM file is a few KiB")
}

fn read_certs(path: &Path, option: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = read_pem(path)
        .map_err(|e| e.to_string())
        .and_then(|pem| CertificateDer::pem_slice_iter(&pem).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string()))
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
        handshake_signature(message, cert, dss, &self.0, false)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signature(message, cert, dss, &self.0, true)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// A handshake signature checked against `cert`'s key: by rustls (webpki), or, for a
/// certificate webpki cannot read (version 1), by webpki's raw-key check of the key
/// x509-parser finds in it.
fn handshake_signature(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &WebPkiSupportedAlgorithms,
    tls13: bool,
) -> Result<HandshakeSignatureValid, rustls::Error> {
    let checked = match tls13 {
        true => rustls::crypto::verify_tls13_signature(message, cert, dss, algs),
        false => rustls::crypto::verify_tls12_signature(message, cert, dss, algs),
    };
    let refused = match checked {
        Err(e) if unreadable(&e) => e,
        other => return other,
    };
    let Ok((_, parsed)) = x509_parser::parse_x509_certificate(cert) else { return Err(refused) };
    let spki = rustls::pki_types::SubjectPublicKeyInfoDer::from(parsed.public_key().raw);
    let key = webpki::RawPublicKeyEntity::try_from(&spki).map_err(|_| refused.clone())?;
    let candidates = algs.mapping.iter().filter(|(s, _)| *s == dss.scheme).flat_map(|(_, a)| a.iter());
    for alg in candidates {
        if key.verify_signature(*alg, message, dss.signature()).is_ok() {
            return Ok(HandshakeSignatureValid::assertion());
        }
    }
    Err(rustls::Error::InvalidCertificate(CertificateError::BadSignature))
}

/// Whether rustls refused a certificate only for what webpki cannot read or allow, which
/// OpenSSL (the mysql client) accepts: X.509 version 1, or a CA certificate as the
/// server's own.
fn unreadable(e: &rustls::Error) -> bool {
    let text = format!("{e:?}");
    version_1(&text) || text.contains("CaUsedAsEndEntity")
}

/// VERIFY_CA and VERIFY_IDENTITY. webpki's full check first (a name mismatch passes
/// VERIFY_CA: rustls checks the chain before the name, so a name error means the chain
/// was good); for a certificate webpki refuses as [`unreadable`], sizeup's own check
/// ([`own_check`]).
#[derive(Debug)]
struct Checked {
    webpki: Option<Arc<WebPkiServerVerifier>>,
    /// The certificates of `--ssl-ca`.
    anchors: Vec<CertificateDer<'static>>,
    identity: bool,
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Checked {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let checked = match &self.webpki {
            Some(w) => w.verify_server_cert(end_entity, intermediates, server_name, ocsp, now),
            None => Err(rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)),
        };
        match checked {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.identity => Ok(ServerCertVerified::assertion()),
            // Only the two refusals OpenSSL would not make: any other (an unknown issuer,
            // a wrong purpose, a non-CA issuer) stands.
            Err(e) if unreadable(&e) || self.webpki.is_none() => {
                let name = self.identity.then_some(server_name);
                own_check(end_entity, intermediates, &self.anchors, name, now).map_err(|why| {
                    rustls::Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(Arc::new(OwnCheck(
                        why,
                    )))))
                })?;
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signature(message, cert, dss, &self.algs, false)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signature(message, cert, dss, &self.algs, true)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// Why sizeup's own check refused a certificate.
#[derive(Debug)]
struct OwnCheck(String);

impl std::fmt::Display for OwnCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OwnCheck {}

/// The check of a certificate webpki will not read: within its validity period, for
/// a server (no extended key usage, or serverAuth among it); either one of `anchors`
/// itself (a self-signed server certificate given as its own CA, as OpenSSL trusts it)
/// or issued, through `intermediates`, by one of them, each signature checked
/// (x509-parser, ring) and each issuer allowed to issue (a CA by its basic constraints,
/// within its path length; a version 1 anchor only when self-signed, as OpenSSL takes
/// version 1 roots); and, when `name` is given, valid for it ([`valid_for`]).
fn own_check(
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
    anchors: &[CertificateDer<'_>],
    name: Option<&ServerName<'_>>,
    now: UnixTime,
) -> Result<(), String> {
    use x509_parser::prelude::*;
    fn parse<'a>(der: &'a [u8]) -> Result<X509Certificate<'a>, String> {
        parse_x509_certificate(der).map(|(_, c)| c).map_err(|e| format!("unreadable: {e}"))
    }
    let leaf = parse(end_entity)?;
    let at = ASN1Time::from_timestamp(now.as_secs() as i64).map_err(|e| e.to_string())?;
    if !leaf.validity().is_valid_at(at) {
        return Err("the server's certificate is outside its validity period".into());
    }
    match leaf.extended_key_usage() {
        Ok(None) => {}
        Ok(Some(eku)) if eku.value.server_auth || eku.value.any => {}
        _ => return Err("the server's certificate is not for a TLS server (extended key usage)".into()),
    }
    if let Some(name) = name {
        if !valid_for(&leaf, name) {
            return Err(format!("the server's certificate is not valid for {}", name.to_str()));
        }
    }
    let anchors: Vec<X509Certificate> = anchors.iter().filter_map(|a| parse(a).ok()).collect();
    let intermediates: Vec<X509Certificate> = intermediates.iter().filter_map(|a| parse(a).ok()).collect();
    if anchors.iter().any(|a| a.as_raw() == leaf.as_raw()) {
        return Ok(());
    }
    // May `issuer` issue `cert`, with `below` CA certificates between them and the leaf?
    let issues = |issuer: &X509Certificate, cert: &X509Certificate, below: u32, anchor: bool| {
        let allowed = match issuer.basic_constraints() {
            Ok(Some(bc)) => bc.value.ca && bc.value.path_len_constraint.is_none_or(|n| below <= n),
            Ok(None) => anchor && issuer.version().0 == 0 && issuer.subject().as_raw() == issuer.issuer().as_raw(),
            Err(_) => false,
        };
        allowed
            && issuer.subject().as_raw() == cert.issuer().as_raw()
            && issuer.validity().is_valid_at(at)
            && cert.verify_signature(Some(issuer.public_key())).is_ok()
    };
    let mut current = &leaf;
    let mut used = Vec::new();
    for below in 0..=intermediates.len() as u32 {
        if anchors.iter().any(|a| issues(a, current, below, true)) {
            return Ok(());
        }
        // Each intermediate at most once: no loops.
        let next =
            intermediates.iter().enumerate().find(|(i, c)| !used.contains(i) && issues(c, current, below, false));
        match next {
            Some((i, c)) => {
                used.push(i);
                current = c;
            }
            None => break,
        }
    }
    Err("the server's certificate is not issued by a certificate of --ssl-ca".into())
}

/// Whether `cert` names `name`, as OpenSSL's host check: an IP address only among its
/// subject alternative names' addresses; a DNS name among their DNS names (a wildcard
/// only as the whole leftmost label, over at least two more), or, when they hold no DNS
/// name, its common name.
fn valid_for(cert: &x509_parser::certificate::X509Certificate<'_>, name: &ServerName<'_>) -> bool {
    use x509_parser::extensions::GeneralName;
    let want = name.to_str().to_ascii_lowercase();
    let ip: Option<std::net::IpAddr> = want.parse().ok();
    let dns = |pattern: &str| {
        let pattern = pattern.to_ascii_lowercase();
        match pattern.strip_prefix("*.") {
            Some(rest) => {
                rest.contains('.')
                    && want.split_once('.').is_some_and(|(first, tail)| !first.is_empty() && tail == rest)
            }
            None => pattern == want,
        }
    };
    let san = cert.subject_alternative_name().ok().flatten();
    if let Some(ip) = ip {
        return san.is_some_and(|san| {
            san.value.general_names.iter().any(|g| match g {
                GeneralName::IPAddress(b) => match b.len() {
                    4 => <[u8; 4]>::try_from(*b).is_ok_and(|b| std::net::IpAddr::from(b) == ip),
                    16 => <[u8; 16]>::try_from(*b).is_ok_and(|b| std::net::IpAddr::from(b) == ip),
                    _ => false,
                },
                _ => false,
            })
        });
    }
    let names: Vec<&str> = san
        .iter()
        .flat_map(|san| san.value.general_names.iter())
        .filter_map(|g| match g {
            GeneralName::DNSName(d) => Some(*d),
            _ => None,
        })
        .collect();
    match names.is_empty() {
        false => names.into_iter().any(dns),
        true => cert.subject().iter_common_name().filter_map(|cn| cn.as_str().ok()).any(dns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert(sans: &[&str], cn: Option<&str>) -> Vec<u8> {
        let mut params = rcgen::CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        if let Some(cn) = cn {
            params.distinguished_name.push(rcgen::DnType::CommonName, cn);
        }
        params.self_signed(&rcgen::KeyPair::generate().unwrap()).unwrap().der().to_vec()
    }

    fn valid(der: &[u8], host: &str) -> bool {
        let (_, c) = x509_parser::parse_x509_certificate(der).unwrap();
        valid_for(&c, &server_name(host).unwrap())
    }

    #[test]
    fn names_match_as_openssl_host_checks_do() {
        let wild = cert(&["*.example.com"], None);
        assert!(valid(&wild, "db.example.com") && valid(&wild, "DB.Example.com"));
        assert!(!valid(&wild, "example.com") && !valid(&wild, "a.db.example.com"));
        assert!(!valid(&cert(&["*.com"], None), "example.com"), "a wildcard over one label");
        // An IP host: only an IP address among the alternative names.
        let both = cert(&["localhost", "127.0.0.1"], Some("127.0.0.2"));
        assert!(valid(&both, "127.0.0.1") && valid(&both, "localhost"));
        assert!(!valid(&both, "127.0.0.2"), "the common name is no IP address's");
        assert!(!valid(&cert(&["*.0.0.1"], None), "127.0.0.1"), "no wildcard for an IP address");
        assert!(!valid(&cert(&[], Some("127.0.0.1")), "127.0.0.1"));
        // No alternative DNS names: the common name.
        assert!(valid(&cert(&[], Some("db.local")), "db.local"));
        assert!(!valid(&cert(&["other.local"], Some("db.local")), "db.local"), "alternative names win");
    }
}
