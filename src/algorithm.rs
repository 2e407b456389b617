//! The algorithm registry: standard names, kinds and sizes, from `src/algorithms.toml`.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// What an algorithm does; decides which operations apply to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Kem,
    Dh,
    Sig,
    Aead,
}

/// A timed operation, by the names suites and results use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Operation {
    #[serde(rename = "kem.keygen")]
    KemKeygen,
    #[serde(rename = "kem.encaps")]
    KemEncaps,
    #[serde(rename = "kem.decaps")]
    KemDecaps,
    #[serde(rename = "dh.keygen")]
    DhKeygen,
    #[serde(rename = "dh.derive")]
    DhDerive,
    #[serde(rename = "sig.keygen")]
    SigKeygen,
    #[serde(rename = "sig.sign")]
    SigSign,
    #[serde(rename = "sig.verify")]
    SigVerify,
    #[serde(rename = "aead.encrypt")]
    AeadEncrypt,
    #[serde(rename = "aead.decrypt")]
    AeadDecrypt,
}

impl Operation {
    pub const ALL: [Operation; 10] = [
        Operation::KemKeygen,
        Operation::KemEncaps,
        Operation::KemDecaps,
        Operation::DhKeygen,
        Operation::DhDerive,
        Operation::SigKeygen,
        Operation::SigSign,
        Operation::SigVerify,
        Operation::AeadEncrypt,
        Operation::AeadDecrypt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Operation::KemKeygen => "kem.keygen",
            Operation::KemEncaps => "kem.encaps",
            Operation::KemDecaps => "kem.decaps",
            Operation::DhKeygen => "dh.keygen",
            Operation::DhDerive => "dh.derive",
            Operation::SigKeygen => "sig.keygen",
            Operation::SigSign => "sig.sign",
            Operation::SigVerify => "sig.verify",
            Operation::AeadEncrypt => "aead.encrypt",
            Operation::AeadDecrypt => "aead.decrypt",
        }
    }

    pub fn from_name(s: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|o| o.name() == s)
    }

    pub fn kind(self) -> Kind {
        match self {
            Operation::KemKeygen | Operation::KemEncaps | Operation::KemDecaps => Kind::Kem,
            Operation::DhKeygen | Operation::DhDerive => Kind::Dh,
            Operation::SigKeygen | Operation::SigSign | Operation::SigVerify => Kind::Sig,
            Operation::AeadEncrypt | Operation::AeadDecrypt => Kind::Aead,
        }
    }

    /// The label the site uses (as on the seed site).
    pub fn label(self) -> &'static str {
        match self {
            Operation::KemKeygen => "KEM keygen",
            Operation::KemEncaps => "KEM encapsulate",
            Operation::KemDecaps => "KEM decapsulate",
            Operation::DhKeygen => "Classical keygen",
            Operation::DhDerive => "Classical derive",
            Operation::SigKeygen => "Keygen",
            Operation::SigSign => "Sign",
            Operation::SigVerify => "Verify",
            Operation::AeadEncrypt => "Encrypt",
            Operation::AeadDecrypt => "Decrypt",
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One row of `src/algorithms.toml`. Sizes are in bytes; a size that does not apply is absent.
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
    pub secret_key: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_secret: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<usize>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub variable_signature: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<usize>,
    pub source: String,
}

impl Algorithm {
    /// Bytes this algorithm adds to the key exchange on the wire: (client share, server share).
    /// A KEM's client share is its encapsulation key and the server's its ciphertext; an ECDH
    /// group sends one public key each way.
    pub fn wire_shares(&self) -> Option<(usize, usize)> {
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

/// Every algorithm pqprof knows, in the order of `src/algorithms.toml`.
pub fn all() -> &'static [Algorithm] {
    static ALL: OnceLock<Vec<Algorithm>> = OnceLock::new();
    ALL.get_or_init(|| {
        // The file is compiled in and covered by a test, so a parse failure is a build defect.
        toml::from_str::<Registry>(include_str!("algorithms.toml"))
            .expect("src/algorithms.toml is valid (tested)")
            .algorithm
    })
}

pub fn find(name: &str) -> Option<&'static Algorithm> {
    all().iter().find(|a| a.name == name)
}

pub fn names() -> Vec<&'static str> {
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
