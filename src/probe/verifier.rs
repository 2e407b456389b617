//! How a probe checks the server: webpki against the roots the user trusts (the system's bundle by
//! default, or `--ca FILE`), or, with `--insecure`, the chain unchecked but the CertificateVerify
//! still verified with the leaf's key. Either way it notes the CertificateVerify's scheme and why
//! a chain did not verify, which rustls does not report.

use anyhow::{anyhow, bail, Context, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::DigitallySignedStruct;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The system's bundle of trusted roots (Debian's and Ubuntu's ca-certificates).
pub(super) const SYSTEM_ROOTS: &str = "/etc/ssl/certs/ca-certificates.crt";

#[derive(Debug, Default, Clone)]
pub(super) struct Recorded {
    pub(super) scheme: Option<u16>,
    pub(super) certificate_error: Option<String>,
}

#[derive(Debug)]
pub(super) struct Verifier {
    /// None: `--insecure`.
    webpki: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
    noted: Mutex<Recorded>,
}

impl Verifier {
    /// Against the roots of `ca` (PEM, one or more certificates, or one DER certificate).
    pub(super) fn with_roots(ca: &Path) -> Result<Verifier> {
        let bytes = std::fs::read(ca).with_context(|| format!("cannot read {}", ca.display()))?;
        let ders: Vec<Vec<u8>> = if bytes.windows(10).any(|w| w == b"-----BEGIN") {
            use rustls::pki_types::pem::PemObject;
            CertificateDer::pem_slice_iter(&bytes)
                .map(|c| c.map(|c| c.to_vec()))
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| anyhow!("{}: not PEM certificates: {e:?}", ca.display()))?
        } else {
            vec![bytes]
        };
        let mut roots = rustls::RootCertStore::empty();
        let (added, _) =
            roots.add_parsable_certificates(ders.into_iter().map(CertificateDer::from));
        if added == 0 {
            bail!("{}: no certificate in it can be a root", ca.display());
        }
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let algorithms = provider.signature_verification_algorithms;
        let webpki =
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()?;
        Ok(Verifier {
            webpki: Some(webpki),
            algorithms,
            noted: Mutex::default(),
        })
    }

    /// No chain check (`--insecure`); the CertificateVerify is still verified.
    pub(super) fn insecure() -> Verifier {
        Verifier {
            webpki: None,
            algorithms: rustls::crypto::aws_lc_rs::default_provider()
                .signature_verification_algorithms,
            noted: Mutex::default(),
        }
    }

    fn note(&self, f: impl FnOnce(&mut Recorded)) {
        f(&mut self.noted.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// What the last handshake noted, cleared for the next.
    pub(super) fn take(&self) -> Recorded {
        std::mem::take(&mut *self.noted.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(w) = &self.webpki else {
            return Ok(ServerCertVerified::assertion());
        };
        let r = w.verify_server_cert(end_entity, intermediates, server_name, ocsp, now);
        if let Err(e) = &r {
            let why = e.to_string();
            self.note(|n| n.certificate_error = Some(why));
        }
        r
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        // The client offers TLS 1.3 alone.
        Err(rustls::Error::General("TLS 1.2 is not offered".into()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let scheme = u16::from(dss.scheme);
        self.note(|n| n.scheme = Some(scheme));
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
