//! The server greeting and login scrambles. Pure.

use super::error::Error;
use sha1::{Digest, Sha1};
use sha2::Sha256;

/// What the server's first packet (Protocol::HandshakeV10) tells the client.
#[derive(Debug, PartialEq)]
pub struct Greeting {
    pub version: String,
    pub capabilities: u32,
    /// MariaDB's extended capabilities (the upper 32 bits), when the server is MariaDB.
    pub mariadb_capabilities: u32,
    pub scramble: Vec<u8>,
    pub plugin: String,
}

impl Greeting {
    pub fn parse(p: &[u8]) -> Result<Greeting, Error> {
        let bad = || Error::protocol("malformed server greeting");
        if p.first() != Some(&10) {
            return Err(Error::protocol("the server speaks an unknown protocol version"));
        }
        let nul = p[1..].iter().position(|&b| b == 0).ok_or_else(bad)? + 1;
        let version = String::from_utf8_lossy(&p[1..nul]).into_owned();
        let mut pos = nul + 1 + 4; // connection id
        let mut scramble = p.get(pos..pos + 8).ok_or_else(bad)?.to_vec();
        pos += 8 + 1;
        let cap_low = u16::from_le_bytes(p.get(pos..pos + 2).ok_or_else(bad)?.try_into().unwrap()) as u32;
        pos += 2;
        let mut capabilities = cap_low;
        let mut mariadb_capabilities = 0;
        let mut plugin = String::from("mysql_native_password");
        if p.len() > pos {
            pos += 1 + 2; // charset, status
            let cap_high = u16::from_le_bytes(p.get(pos..pos + 2).ok_or_else(bad)?.try_into().unwrap()) as u32;
            capabilities |= cap_high << 16;
            pos += 2;
            let data_len = *p.get(pos).ok_or_else(bad)? as usize;
            // 6 reserved bytes, then MariaDB's extended capabilities, which are only
            // meaningful when the server does not claim CLIENT_MYSQL (bit 0).
            if capabilities & 1 == 0 {
                if let Some(ext) = p.get(pos + 1 + 6..pos + 1 + 10) {
                    mariadb_capabilities = u32::from_le_bytes(ext.try_into().unwrap());
                }
            }
            pos += 1 + 10;
            let part2 = data_len.saturating_sub(8).max(13);
            if let Some(rest) = p.get(pos..pos + part2) {
                scramble.extend_from_slice(rest);
                if scramble.last() == Some(&0) {
                    scramble.pop();
                }
                pos += part2;
                if let Some(tail) = p.get(pos..) {
                    let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
                    if end > 0 {
                        plugin = String::from_utf8_lossy(&tail[..end]).into_owned();
                    }
                }
            }
        }
        Ok(Greeting { version, capabilities, mariadb_capabilities, scramble, plugin })
    }
}

/// The login response for `plugin` with `password` and the server's `scramble`, for
/// the methods whose first answer needs nothing but these (sha256_password is handled by
/// the connection, which knows whether the transport is secure).
pub fn scramble(plugin: &str, password: &str, scramble: &[u8]) -> Result<Vec<u8>, Error> {
    match plugin {
        "mysql_native_password" | "" => Ok(native(password, scramble)),
        "caching_sha2_password" => Ok(caching_sha2(password, scramble)),
        "client_ed25519" => Ok(ed25519(password, scramble).to_vec()),
        // The server checks the peer's OS user; the client sends nothing.
        "unix_socket" | "auth_socket" => Ok(Vec::new()),
        other => Err(unsupported(other)),
    }
}

/// The error for a login method this client does not speak.
pub fn unsupported(plugin: &str) -> Error {
    Error::Protocol(format!(
        "the server asks for the {plugin} login method, which sizeup does not speak; \
         use a user with caching_sha2_password, mysql_native_password, client_ed25519 or unix_socket"
    ))
}

/// The password with a closing NUL, as cleartext exchanges send it.
pub fn cleartext(password: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(password.len() + 1);
    v.extend_from_slice(password.as_bytes());
    v.push(0);
    v
}

/// MariaDB's client_ed25519: an Ed25519 signature of the server's scramble, with
/// SHA-512(password) taken as the expanded secret key (as MariaDB's ref10 client does:
/// the first half, clamped, is the scalar, the second half the nonce prefix).
pub fn ed25519(password: &str, scramble: &[u8]) -> [u8; 64] {
    use ed25519_dalek::hazmat::{raw_sign, ExpandedSecretKey};
    use sha2::Sha512;
    let h: [u8; 64] = Sha512::digest(password.as_bytes()).into();
    let secret = ExpandedSecretKey::from_bytes(&h);
    let public = ed25519_dalek::VerifyingKey::from(&secret);
    raw_sign::<Sha512>(&secret, scramble, &public).to_bytes()
}

/// The server's RSA public key from PEM text (SubjectPublicKeyInfo or PKCS#1).
pub fn public_key(pem: &[u8]) -> Result<rsa::RsaPublicKey, Error> {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::DecodePublicKey;
    let bad =
        |what: &str| Error::Protocol(format!("the server's RSA public key {what}; check --server-public-key-path"));
    let text = std::str::from_utf8(pem)
        .map_err(|_| bad("is not PEM text"))?
        .trim_matches(|c: char| c == '\0' || c.is_whitespace());
    rsa::RsaPublicKey::from_public_key_pem(text)
        .or_else(|_| rsa::RsaPublicKey::from_pkcs1_pem(text))
        .map_err(|_| bad("is not a PEM RSA public key"))
}

/// caching_sha2_password / sha256_password over plain TCP: (password + NUL) XOR the
/// scramble, RSA-OAEP (SHA-1, as the server decrypts) encrypted with the server's key.
pub fn rsa_encrypt(password: &str, scramble: &[u8], pem: &[u8]) -> Result<Vec<u8>, Error> {
    let key = public_key(pem)?;
    let mut message = cleartext(password);
    if !scramble.is_empty() {
        let salt = &scramble[..scramble.len().min(20)];
        for (i, b) in message.iter_mut().enumerate() {
            *b ^= salt[i % salt.len()];
        }
    }
    key.encrypt(&mut rsa::rand_core::OsRng, rsa::Oaep::new::<Sha1>(), &message)
        .map_err(|e| Error::Protocol(format!("RSA encryption of the password failed: {e}")))
}

/// SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))).
fn native(password: &str, scramble: &[u8]) -> Vec<u8> {
    xor_scramble::<Sha1>(password, scramble, true)
}

/// SHA256(password) XOR SHA256(SHA256(SHA256(password)) + scramble).
fn caching_sha2(password: &str, scramble: &[u8]) -> Vec<u8> {
    xor_scramble::<Sha256>(password, scramble, false)
}

/// H(password) XOR H(salt + H(H(password))), or with H(H(password)) first: the two
/// plugins differ only in the hash and that order. No password, no response.
fn xor_scramble<D: Digest>(password: &str, scramble: &[u8], salt_first: bool) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let salt = &scramble[..scramble.len().min(20)];
    let h1 = D::digest(password.as_bytes());
    let h2 = D::digest(&h1);
    let mut h = D::new();
    if salt_first {
        h.update(salt);
        h.update(&h2);
    } else {
        h.update(&h2);
        h.update(salt);
    }
    let h3 = h.finalize();
    h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn scrambles_match_vectors_computed_with_python_hashlib() {
        let scramble: Vec<u8> = (1u8..=20).collect();
        assert_eq!(hex(&native("secret", &scramble)), "b32bb3a583e1340c0a1108d58b1be49781ad8c2f");
        assert_eq!(
            hex(&caching_sha2("secret", &scramble)),
            "746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9"
        );
        assert!(native("", &scramble).is_empty());
    }

    #[test]
    fn greeting_parses_mariadb_shape() {
        let mut p = vec![10];
        p.extend_from_slice(b"5.5.5-10.11.19-MariaDB\0");
        p.extend_from_slice(&42u32.to_le_bytes());
        p.extend_from_slice(b"abcdefgh");
        p.push(0);
        p.extend_from_slice(&0xf7feu16.to_le_bytes());
        p.push(45);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&0x81bfu16.to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 6]);
        p.extend_from_slice(&0x1du32.to_le_bytes());
        p.extend_from_slice(b"ijklmnopqrst\0");
        p.extend_from_slice(b"mysql_native_password\0");
        let g = Greeting::parse(&p).unwrap();
        assert_eq!(g.version, "5.5.5-10.11.19-MariaDB");
        assert_eq!(g.scramble, b"abcdefghijklmnopqrst");
        assert_eq!(g.plugin, "mysql_native_password");
        assert_eq!(g.capabilities, 0x81bf_f7fe);
        assert_eq!(g.mariadb_capabilities, 0x1d, "bit 0 clear: a MariaDB server");
        assert!(Greeting::parse(&[9, 0]).is_err());
    }

    #[test]
    fn unknown_login_methods_are_named() {
        let e = scramble("dialog", "x", b"s").unwrap_err().to_string();
        assert!(e.contains("dialog") && e.contains("mysql_native_password"), "{e}");
    }

    #[test]
    fn ed25519_signature_verifies_with_the_key_mariadb_stores() {
        use ed25519_dalek::{Signature, Verifier, VerifyingKey};
        // MariaDB stores the public key of SHA-512(password)'s clamped first half.
        let h = sha2::Sha512::digest(b"secret");
        let s = ed25519_dalek::hazmat::ExpandedSecretKey::from_bytes(&h.into());
        let public = VerifyingKey::from(&s);
        let nonce = [7u8; 32];
        let sig = ed25519("secret", &nonce);
        public.verify(&nonce, &Signature::from_bytes(&sig)).unwrap();
        assert!(public.verify(&[8u8; 32], &Signature::from_bytes(&sig)).is_err());
    }

    #[test]
    fn rsa_encrypted_password_decrypts_to_password_xor_scramble() {
        use rsa::pkcs8::EncodePublicKey;
        let private = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024).unwrap();
        let pem = private.to_public_key().to_public_key_pem(Default::default()).unwrap();
        let scramble: Vec<u8> = (1u8..=20).collect();
        let sealed = rsa_encrypt("pw", &scramble, pem.as_bytes()).unwrap();
        let plain = private.decrypt(rsa::Oaep::new::<Sha1>(), &sealed).unwrap();
        assert_eq!(plain, vec![b'p' ^ 1, b'w' ^ 2, 3]);
        assert!(rsa_encrypt("pw", &scramble, b"not a key").unwrap_err().to_string().contains("RSA public key"));
    }
}
