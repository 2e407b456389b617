//! The certificate and key every server of a run presents, made once per run and written to files
//! the server children read.

use anyhow::{anyhow, Result};
use std::path::{Path, PathBuf};

/// The certificate both sides of every stack use: ECDSA P-256, made at start (rcgen).
#[derive(Clone)]
pub struct Identity {
    pub cert_der: Vec<u8>,
    pub key_pem: String,
}

impl Identity {
    pub fn new() -> Result<Identity> {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
        let cert =
            rcgen::CertificateParams::new(vec!["localhost".to_string()])?.self_signed(&key)?;
        Ok(Identity {
            cert_der: cert.der().to_vec(),
            key_pem: key.serialize_pem(),
        })
    }

    /// Reads what `Files::write` wrote (in a server child).
    pub fn read(cert: &Path, key: &Path) -> Result<Identity> {
        Ok(Identity {
            cert_der: std::fs::read(cert)
                .map_err(|e| anyhow!("{}: cannot read: {e}", cert.display()))?,
            key_pem: std::fs::read_to_string(key)
                .map_err(|e| anyhow!("{}: cannot read: {e}", key.display()))?,
        })
    }
}

/// DER of the prime256v1 OID inside an ecPublicKey SPKI: how the certificate's key type is checked.
const P256_OID: [u8; 10] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07];

/// The key type of a certificate, as the evidence names it.
pub fn cert_key_type(der: &[u8]) -> String {
    if der.windows(P256_OID.len()).any(|w| w == P256_OID) {
        "ECDSA P-256".into()
    } else {
        "other".into()
    }
}

/// The identity's files for server children, in a folder of this process's; removed on drop.
pub struct Files {
    dir: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Files {
    pub fn write(id: &Identity, purpose: &str) -> Result<Files> {
        let dir = std::env::temp_dir().join(format!("pqprof-{purpose}-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let (cert, key) = (dir.join("cert.der"), dir.join("key.pem"));
        std::fs::write(&cert, &id.cert_der)?;
        std::fs::write(&key, &id.key_pem)?;
        Ok(Files { dir, cert, key })
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
