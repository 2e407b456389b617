//! What a server presents: one authentication of `suites/auth.toml`, as a certificate chain made
//! once per run (rcgen) and written to files the server children read, so every stack serves the
//! same DER. `chain`: root -> intermediate -> leaf, the server sending leaf + intermediate; `leaf`:
//! root -> leaf, the leaf alone. The client trusts the root either way.

use crate::auth::{Auth, Form};
use crate::results::AuthInfo;
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub struct Identity {
    /// The authentication's name, algorithm, form and signature scheme.
    pub auth: AuthInfo,
    /// The trust anchor, DER.
    pub(crate) root_der: Vec<u8>,
    /// What the server sends, leaf first, DER each, and as PEM (the files servers read).
    pub(crate) chain_der: Vec<Vec<u8>>,
    pub(crate) chain_pem: String,
    /// The leaf's private key, PKCS#8 PEM (ML-DSA: the seed-only form every stack reads).
    pub(crate) key_pem: String,
}

/// The rcgen algorithm of a registry signature algorithm.
fn rcgen_alg(algorithm: &str) -> Result<&'static rcgen::SignatureAlgorithm> {
    Ok(match algorithm {
        "ECDSA-P256" => &rcgen::PKCS_ECDSA_P256_SHA256,
        "ML-DSA-44" => &rcgen::PKCS_ML_DSA_44,
        "ML-DSA-65" => &rcgen::PKCS_ML_DSA_65,
        "ML-DSA-87" => &rcgen::PKCS_ML_DSA_87,
        other => {
            bail!("no certificate chain for {other}: rcgen makes ECDSA-P256 and ML-DSA-44/65/87")
        }
    })
}

fn named(cn: &str) -> rcgen::DistinguishedName {
    let mut d = rcgen::DistinguishedName::new();
    d.push(rcgen::DnType::CommonName, cn);
    d
}

/// A CA's parameters: distinct names (a leaf whose issuer equals its subject would look
/// self-issued to a path builder), CA:TRUE, keyCertSign.
fn ca(cn: &str, bc: rcgen::BasicConstraints) -> Result<rcgen::CertificateParams> {
    let mut p = rcgen::CertificateParams::new(Vec::<String>::new())?;
    p.distinguished_name = named(cn);
    p.is_ca = rcgen::IsCa::Ca(bc);
    p.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign];
    Ok(p)
}

/// The OID of the padding extension: under 2.999, the arc ITU-T X.660 reserves for examples, so
/// that it names nothing any stack acts on.
const PADDING_OID: [u64; 4] = [2, 999, 37, 1];

/// A size control's padding: a non-critical extension whose value is an OCTET STRING of `n`
/// bytes (DER, X.690 section 8.7). A verifier skips an extension it does not know unless it is
/// critical (RFC 5280 section 4.2), so the leaf costs its bytes and no other work. The bytes are a
/// fixed pseudo-random sequence (xorshift64), not zeros, so that a stack compressing certificates
/// (RFC 8879) could not shrink them.
fn padding(n: usize) -> rcgen::CustomExtension {
    let mut der = vec![0x04];
    let len = n.to_be_bytes();
    let skip = len.iter().take_while(|b| **b == 0).count();
    if n < 0x80 {
        der.push(n as u8);
    } else {
        der.push(0x80 | (len.len() - skip) as u8);
        der.extend_from_slice(&len[skip..]);
    }
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    der.extend((0..n).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 56) as u8
    }));
    let mut ext = rcgen::CustomExtension::from_oid_content(&PADDING_OID, der);
    ext.set_criticality(false);
    ext
}

impl Identity {
    /// Makes the chain of one authentication (minimal extensions: names, basic constraints, key
    /// usage for the CAs, the leaf's subjectAltName localhost).
    pub fn new(auth: &Auth) -> Result<Identity> {
        let alg = rcgen_alg(&auth.algorithm)?;
        let root_key = rcgen::KeyPair::generate_for(alg)?;
        let root_params = ca("pqprof root", rcgen::BasicConstraints::Unconstrained)?;
        let root = root_params.self_signed(&root_key)?;
        let root_issuer = rcgen::Issuer::new(root_params, root_key);
        let leaf_key = rcgen::KeyPair::generate_for(alg)?;
        let mut leaf_params = rcgen::CertificateParams::new(vec!["localhost".to_string()])?;
        leaf_params.distinguished_name = named("localhost");
        if auth.padding > 0 {
            leaf_params.custom_extensions.push(padding(auth.padding));
        }
        let sent = match auth.form {
            Form::Chain => {
                let int_key = rcgen::KeyPair::generate_for(alg)?;
                let int_params = ca(
                    "pqprof intermediate",
                    rcgen::BasicConstraints::Constrained(0),
                )?;
                let inter = int_params.signed_by(&int_key, &root_issuer)?;
                let int_issuer = rcgen::Issuer::new(int_params, int_key);
                vec![leaf_params.signed_by(&leaf_key, &int_issuer)?, inter]
            }
            Form::Leaf => vec![leaf_params.signed_by(&leaf_key, &root_issuer)?],
        };
        let chain_der: Vec<Vec<u8>> = sent.iter().map(|c| c.der().to_vec()).collect();
        let chain_pem: String = sent.iter().map(|c| c.pem()).collect();
        let root_der = root.der().to_vec();
        Ok(Identity {
            auth: AuthInfo {
                name: auth.name.clone(),
                algorithm: auth.algorithm.clone(),
                form: match auth.form {
                    Form::Chain => "chain".into(),
                    Form::Leaf => "leaf".into(),
                },
                scheme: auth.scheme,
                sent_bytes: chain_der.iter().map(Vec::len).collect(),
                root_bytes: root_der.len(),
                padding_bytes: auth.padding,
            },
            root_der,
            chain_der,
            chain_pem,
            key_pem: leaf_key.serialize_pem(),
        })
    }

    /// The baseline chain (ECDSA-P256, root -> intermediate -> leaf), for tests and experiments.
    pub fn baseline() -> Result<Identity> {
        let auths = crate::auth::load(Path::new("suites"), "tls13", None)?
            .unwrap_or_else(crate::auth::Auths::baseline_only);
        let b = auths
            .baseline()
            .ok_or_else(|| anyhow!("suites/auth.toml: no baseline authentication"))?;
        Identity::new(b)
    }

    #[cfg(test)]
    pub(crate) fn leaf_der(&self) -> &[u8] {
        &self.chain_der[0]
    }

    /// The IANA name of its signature scheme (OpenSSL's sigalg lists take it).
    pub(crate) fn scheme_name(&self) -> Result<String> {
        crate::algorithm::find(&self.auth.algorithm)
            .and_then(|a| a.tls_scheme_name.clone())
            .ok_or_else(|| anyhow!("{}: no TLS 1.3 signature scheme", self.auth.algorithm))
    }

    /// Reads what `Files::write` wrote (in a server child).
    pub(crate) fn read(dir: &Path) -> Result<Identity> {
        let file = |name: &str| dir.join(name);
        let read = |name: &str| {
            std::fs::read(file(name))
                .with_context(|| format!("{}: cannot read", file(name).display()))
        };
        let auth: AuthInfo = serde_json::from_slice(&read("auth.json")?)
            .with_context(|| format!("{}: not an authentication", file("auth.json").display()))?;
        let chain_pem = String::from_utf8(read("chain.pem")?)?;
        let chain_der = pem_blocks(&chain_pem)?;
        if chain_der.len() != auth.sent_bytes.len() {
            bail!(
                "{}: {} certificates, auth.json says {}",
                file("chain.pem").display(),
                chain_der.len(),
                auth.sent_bytes.len()
            );
        }
        Ok(Identity {
            auth,
            root_der: read("root.der")?,
            chain_der,
            chain_pem,
            key_pem: String::from_utf8(read("key.pem")?)?,
        })
    }
}

/// The DER of each PEM CERTIFICATE block, in order.
fn pem_blocks(pem: &str) -> Result<Vec<Vec<u8>>> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes())
        .map(|c| c.map(|c| c.to_vec()).map_err(|e| anyhow!("PEM: {e}")))
        .collect()
}

/// DER of the OIDs inside a certificate's SubjectPublicKeyInfo that name its key: prime256v1 (an
/// ecPublicKey on P-256) and id-ml-dsa-44/65/87 (2.16.840.1.101.3.4.3.17/18/19, RFC 9881).
const KEY_OIDS: [(&[u8], &str); 4] = [
    (
        &[0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07],
        "ECDSA P-256",
    ),
    (
        &[
            0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11,
        ],
        "ML-DSA-44",
    ),
    (
        &[
            0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12,
        ],
        "ML-DSA-65",
    ),
    (
        &[
            0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x13,
        ],
        "ML-DSA-87",
    ),
];

/// The key type of a certificate, as the evidence names it. The signature algorithm of an
/// ML-DSA certificate is the same OID, so the key's is the last one in the DER: the SPKI follows
/// the signature AlgorithmIdentifier inside the TBS.
pub(crate) fn cert_key_type(der: &[u8]) -> String {
    let at = |oid: &[u8]| der.windows(oid.len()).rposition(|w| w == oid);
    KEY_OIDS
        .iter()
        .filter_map(|(oid, name)| at(oid).map(|p| (p, *name)))
        .max()
        .map_or_else(|| "other".into(), |(_, n)| n.to_string())
}

/// An identity's files for server children, in a folder of this process's; removed on drop:
/// `auth.json`, `root.der`, `chain.pem` (leaf first) and `key.pem`.
pub struct Files {
    pub dir: PathBuf,
    pub(crate) chain: PathBuf,
    pub(crate) key: PathBuf,
    pub(crate) root: PathBuf,
}

impl Files {
    pub fn write(id: &Identity, purpose: &str) -> Result<Files> {
        let slug: String = id
            .auth
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        // pqprof-<purpose>-<pid>/<authentication>: one folder of this process per purpose.
        let dir = std::env::temp_dir()
            .join(format!("pqprof-{purpose}-{}", std::process::id()))
            .join(slug);
        std::fs::create_dir_all(&dir)?;
        let f = Files {
            chain: dir.join("chain.pem"),
            key: dir.join("key.pem"),
            root: dir.join("root.der"),
            dir,
        };
        std::fs::write(f.dir.join("auth.json"), serde_json::to_vec(&id.auth)?)?;
        std::fs::write(&f.root, &id.root_der)?;
        std::fs::write(&f.chain, &id.chain_pem)?;
        std::fs::write(&f.key, &id.key_pem)?;
        Ok(f)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        // The purpose's folder goes with its last identity.
        if let Some(parent) = self.dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

/// The TLS 1.3 authentication of suites/auth.toml named `name` ("ML-DSA-65").
pub(crate) fn auth_named(name: &str) -> Result<Auth> {
    let auths = crate::auth::load(Path::new("suites"), "tls13", None)?
        .unwrap_or_else(crate::auth::Auths::baseline_only);
    auths
        .find(name)
        .cloned()
        .ok_or_else(|| anyhow!("suites/auth.toml: no authentication {name}"))
}

/// The identities of a step, one per authentication, each with its files: made once per run, so
/// every scenario of one authentication serves the same DER.
pub struct Chains {
    made: Vec<(Identity, Files)>,
}

impl Chains {
    pub fn make<'a>(auths: impl IntoIterator<Item = &'a Auth>, purpose: &str) -> Result<Chains> {
        let mut made: Vec<(Identity, Files)> = Vec::new();
        for a in auths {
            if made.iter().any(|(i, _)| i.auth.name == a.name) {
                continue;
            }
            let id = Identity::new(a).with_context(|| format!("the {} chain", a.name))?;
            let files = Files::write(&id, purpose)?;
            made.push((id, files));
        }
        Ok(Chains { made })
    }

    pub fn get(&self, name: &str) -> Result<&(Identity, Files)> {
        self.made
            .iter()
            .find(|(i, _)| i.auth.name == name)
            .ok_or_else(|| anyhow!("no chain made for {name}"))
    }

    /// The first made (the baseline, where it was made first).
    pub(crate) fn first(&self) -> Result<&(Identity, Files)> {
        self.made.first().ok_or_else(|| anyhow!("no chain made"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth(algorithm: &str, form: Form) -> Auth {
        let a = crate::algorithm::find(algorithm).unwrap();
        Auth {
            name: format!("{algorithm} test"),
            algorithm: algorithm.into(),
            form,
            scheme: a.tls_scheme.unwrap(),
            scheme_name: a.tls_scheme_name.clone().unwrap(),
            padding: 0,
            at: crate::suite::Location {
                file: "t".into(),
                line: 1,
                column: 1,
            },
        }
    }

    #[test]
    fn chains_have_the_sizes_fips_204_fixes_and_name_their_keys() {
        for (alg, pk, sig) in [
            ("ML-DSA-44", 1312, 2420),
            ("ML-DSA-65", 1952, 3309),
            ("ML-DSA-87", 2592, 4627),
        ] {
            let id = Identity::new(&auth(alg, Form::Chain)).unwrap();
            assert_eq!(id.chain_der.len(), 2);
            for der in id.chain_der.iter().chain([&id.root_der]) {
                assert_eq!(cert_key_type(der), alg);
                // A certificate holds its key and its issuer's signature, and little else.
                assert!(
                    der.len() > pk + sig && der.len() < pk + sig + 400,
                    "{alg}: {} B",
                    der.len()
                );
            }
            assert_eq!(
                id.auth.sent_bytes,
                vec![id.chain_der[0].len(), id.chain_der[1].len()]
            );
            assert!(id.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        }
        let leaf = Identity::new(&auth("ECDSA-P256", Form::Leaf)).unwrap();
        assert_eq!(leaf.chain_der.len(), 1);
        assert_eq!(cert_key_type(leaf.leaf_der()), "ECDSA P-256");
    }

    #[test]
    fn a_padded_leaf_carries_its_bytes_and_still_verifies() {
        let plain = Identity::new(&auth("ECDSA-P256", Form::Chain)).unwrap();
        let padded = Identity::new(&Auth {
            padding: 13_450,
            ..auth("ECDSA-P256", Form::Chain)
        })
        .unwrap();
        assert_eq!(padded.auth.padding_bytes, 13_450);
        assert_eq!(cert_key_type(padded.leaf_der()), "ECDSA P-256");
        // The padding and its DER: the two OCTET STRINGs' headers (4 bytes each), the OID (6),
        // the extension's SEQUENCE (4), the extensions' and the TBS's lengths growing into longer
        // forms (5); an ECDSA signature's length varies by a byte or two between the chains.
        let grown = padded.leaf_der().len() as i64 - plain.leaf_der().len() as i64;
        assert!((13_450 + 20..=13_450 + 26).contains(&grown), "{grown}");
        assert!(!padded
            .leaf_der()
            .windows(64)
            .any(|w| w.iter().all(|&b| b == 0)));
        // OpenSSL's verifier, which rejects an unknown critical extension, takes the chain.
        use openssl::stack::Stack;
        use openssl::x509::{store::X509StoreBuilder, X509StoreContext, X509};
        let x509 = |der: &[u8]| X509::from_der(der).unwrap();
        let mut store = X509StoreBuilder::new().unwrap();
        store.add_cert(x509(&padded.root_der)).unwrap();
        let store = store.build();
        let mut untrusted = Stack::new().unwrap();
        untrusted.push(x509(&padded.chain_der[1])).unwrap();
        let leaf = x509(padded.leaf_der());
        let mut ctx = X509StoreContext::new().unwrap();
        let ok = ctx
            .init(&store, &leaf, &untrusted, |c| {
                c.verify_cert().map(|ok| (ok, c.error()))
            })
            .unwrap();
        assert!(ok.0, "{}", ok.1);
    }

    #[test]
    fn files_read_back_as_written() {
        let id = Identity::new(&auth("ML-DSA-44", Form::Chain)).unwrap();
        let files = Files::write(&id, "test").unwrap();
        let back = Identity::read(&files.dir).unwrap();
        assert_eq!(
            (back.root_der, back.chain_der, back.key_pem),
            (
                id.root_der.clone(),
                id.chain_der.clone(),
                id.key_pem.clone()
            )
        );
        assert_eq!(back.auth, id.auth);
        let dir = files.dir.clone();
        drop(files);
        assert!(!dir.exists());
    }
}
