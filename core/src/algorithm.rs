//! The algorithm registry: standard names, kinds and sizes, from `algorithms.toml` (beside this file).

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

pub use crate::results::{Kind, Operation};

/// One row of `core/src/algorithms.toml`. Sizes are in bytes; a size that does not apply is absent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Algorithm {
    pub name: String,
    pub kind: Kind,
    pub family: String,
    pub post_quantum: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ciphertext: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) secret_key: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_secret: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<usize>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub variable_signature: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nonce: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tag: Option<usize>,
    /// Hash, HMAC and HKDF: the digest length and the block the compression function takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<usize>,
    /// Signatures a TLS 1.3 CertificateVerify can carry: the SignatureScheme code point and its
    /// IANA name (the name OpenSSL's sigalg lists take).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_scheme: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_scheme_name: Option<String>,
    pub source: String,
}

impl Algorithm {
    /// Bytes this algorithm adds to the key exchange on the wire: (client share, server share).
    /// A KEM's client share is its encapsulation key and the server's its ciphertext; an ECDH
    /// group sends one public key each way.
    pub(crate) fn wire_shares(&self) -> Option<(usize, usize)> {
        match self.kind {
            Kind::Kem => Some((self.public_key?, self.ciphertext?)),
            Kind::Dh => Some((self.public_key?, self.public_key?)),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Registry {
    algorithm: Vec<Algorithm>,
}

/// Every algorithm pqprof knows, in the order of `core/src/algorithms.toml`.
pub fn all() -> &'static [Algorithm] {
    static ALL: OnceLock<Vec<Algorithm>> = OnceLock::new();
    ALL.get_or_init(|| {
        // The file is compiled in and covered by a test, so a parse failure is a build defect.
        toml::from_str::<Registry>(include_str!("algorithms.toml"))
            .expect("core/src/algorithms.toml is valid (tested)")
            .algorithm
    })
}

pub fn find(name: &str) -> Option<&'static Algorithm> {
    all().iter().find(|a| a.name == name)
}

pub(crate) fn names() -> Vec<&'static str> {
    all().iter().map(|a| a.name.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_parses_and_names_are_unique() {
        let names = names();
        assert!(names.len() >= 11);
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
    }

    #[test]
    fn tls_key_shares_match_the_draft() {
        // draft-ietf-tls-ecdhe-mlkem: X25519MLKEM768 client 1,216 B, server 1,120 B.
        let kem = find("ML-KEM-768").unwrap().wire_shares().unwrap();
        let x = find("X25519").unwrap().wire_shares().unwrap();
        let p = find("P-256").unwrap().wire_shares().unwrap();
        assert_eq!((kem.0 + x.0, kem.1 + x.1), (1216, 1120));
        assert_eq!((kem.0 + p.0, kem.1 + p.1), (1249, 1153));
    }

    #[test]
    fn operation_names_round_trip() {
        for op in Operation::ALL {
            assert_eq!(Operation::from_name(op.name()), Some(op));
        }
        assert_eq!(Operation::from_name("kem.encap"), None);
    }
}
