//! rustls's aws-lc-rs provider with every crypto call timed in situ: a `CryptoProvider` that wraps
//! aws-lc-rs's default one (every field of rustls 0.23's provider, cipher suite and webpki
//! algorithm list is public), with the hybrid groups re-made from their two halves (rustls's own
//! `Hybrid` is crate-private) so that the ML-KEM and the ECDH half are timed apart; wire layout and
//! secret order as rustls 0.23 `crypto/aws_lc_rs/pq/` (X25519MLKEM768: ML-KEM first;
//! SecP256r1MLKEM768: ECDH first; draft-ietf-tls-ecdhe-mlkem section 3). Its hash and HKDF are
//! re-made over aws-lc-rs as rustls's own, so they allocate no more than rustls's.

use super::*;
use aws_lc_rs::hkdf::KeyType as _;
use aws_lc_rs::{digest, hkdf as awshkdf, hmac as awshmac};
use rustls::crypto::cipher::{
    AeadKey, InboundOpaqueMessage, InboundPlainMessage, Iv, MessageDecrypter, MessageEncrypter,
    OutboundOpaqueMessage, OutboundPlainMessage, Tls13AeadAlgorithm, UnsupportedOperationError,
};
use rustls::crypto::tls13::{Hkdf, HkdfExpander, OkmBlock, OutputLengthError};
use rustls::crypto::{
    hash, hmac, ActiveKeyExchange, CompletedKeyExchange, CryptoProvider, KeyProvider, SharedSecret,
    SupportedKxGroup, WebPkiSupportedAlgorithms,
};
use rustls::ffdhe_groups::FfdheGroup;
use rustls::pki_types::{
    AlgorithmIdentifier, FipsStatus, InvalidSignature, PrivateKeyDer,
    SignatureVerificationAlgorithm, SubjectPublicKeyInfoDer,
};
use rustls::sign::{Signer, SigningKey};
use rustls::{
    CipherSuiteCommon, ConnectionTrafficSecrets, Error, NamedGroup, ProtocolVersion,
    SignatureAlgorithm, SignatureScheme, SupportedCipherSuite, Tls13CipherSuite,
};
use std::sync::Arc;

fn leak<T>(t: T) -> &'static T {
    Box::leak(Box::new(t))
}

/// One group alone (X25519, P-256 or ML-KEM-768), its calls named as the phases are.
#[derive(Debug)]
struct Single {
    inner: &'static dyn SupportedKxGroup,
    kem: bool,
}

impl SupportedKxGroup for Single {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let kem = self.kem;
        let inner = timed(
            if kem {
                CallLabel::KemKeygen
            } else {
                CallLabel::DhKeygen
            },
            || self.inner.start(),
        )?;
        Ok(Box::new(SingleActive { inner, kem }))
    }
    fn start_and_complete(&self, peer: &[u8]) -> Result<CompletedKeyExchange, Error> {
        if self.kem {
            // ML-KEM's server side is one call: import the encapsulation key and encapsulate.
            return timed(CallLabel::KemEncaps, || self.inner.start_and_complete(peer));
        }
        // ECDH's server side is rustls's default: a key share, then the agreement.
        let kx = timed(CallLabel::DhKeygen, || self.inner.start())?;
        let (group, pub_key) = (kx.group(), kx.pub_key().to_vec());
        let secret = timed(CallLabel::DhDerive, || kx.complete(peer))?;
        Ok(CompletedKeyExchange {
            group,
            pub_key,
            secret,
        })
    }
    fn ffdhe_group(&self) -> Option<FfdheGroup<'static>> {
        self.inner.ffdhe_group()
    }
    fn name(&self) -> NamedGroup {
        self.inner.name()
    }
    fn fips(&self) -> bool {
        self.inner.fips()
    }
    fn usable_for_version(&self, v: ProtocolVersion) -> bool {
        self.inner.usable_for_version(v)
    }
}

struct SingleActive {
    inner: Box<dyn ActiveKeyExchange>,
    kem: bool,
}

impl ActiveKeyExchange for SingleActive {
    fn complete(self: Box<Self>, peer: &[u8]) -> Result<SharedSecret, Error> {
        let l = if self.kem {
            CallLabel::KemDecaps
        } else {
            CallLabel::DhDerive
        };
        timed(l, move || self.inner.complete(peer))
    }
    fn pub_key(&self) -> &[u8] {
        self.inner.pub_key()
    }
    fn ffdhe_group(&self) -> Option<FfdheGroup<'static>> {
        self.inner.ffdhe_group()
    }
    fn group(&self) -> NamedGroup {
        self.inner.group()
    }
}

/// A hybrid group made of its two halves, as rustls 0.23 `crypto/aws_lc_rs/pq/hybrid.rs` does:
/// shares and secrets concatenated, in the group's order.
#[derive(Debug)]
struct Hybrid {
    name: NamedGroup,
    classical: &'static Single,
    pq: &'static Single,
    pq_first: bool,
    /// (encapsulation key, ciphertext) lengths of the ML-KEM half.
    ek_len: usize,
    ct_len: usize,
}

impl Hybrid {
    fn split<'a>(&self, share: &'a [u8], pq_len: usize) -> Result<(&'a [u8], &'a [u8]), Error> {
        let bad = || Error::from(rustls::PeerMisbehaved::InvalidKeyShare);
        let cl_len = share.len().checked_sub(pq_len).ok_or_else(bad)?;
        Ok(if self.pq_first {
            let (p, c) = share.split_at(pq_len);
            (p, c)
        } else {
            let (c, p) = share.split_at(cl_len);
            (p, c)
        })
    }

    fn join(&self, pq: &[u8], cl: &[u8]) -> Vec<u8> {
        if self.pq_first {
            [pq, cl].concat()
        } else {
            [cl, pq].concat()
        }
    }
}

impl SupportedKxGroup for Hybrid {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let cl = self.classical.start()?;
        let pq = self.pq.start()?;
        let pub_key = self.join(pq.pub_key(), cl.pub_key());
        Ok(Box::new(HybridActive {
            cl,
            pq,
            pub_key,
            group: self.name,
            ct_len: self.ct_len,
            pq_first: self.pq_first,
        }))
    }
    fn start_and_complete(&self, client_share: &[u8]) -> Result<CompletedKeyExchange, Error> {
        let (pq_share, cl_share) = self.split(client_share, self.ek_len)?;
        let cl = self.classical.start_and_complete(cl_share)?;
        let pq = self.pq.start_and_complete(pq_share)?;
        Ok(CompletedKeyExchange {
            group: self.name,
            pub_key: self.join(&pq.pub_key, &cl.pub_key),
            secret: SharedSecret::from(
                self.join(pq.secret.secret_bytes(), cl.secret.secret_bytes()),
            ),
        })
    }
    fn ffdhe_group(&self) -> Option<FfdheGroup<'static>> {
        None
    }
    fn name(&self) -> NamedGroup {
        self.name
    }
    fn usable_for_version(&self, v: ProtocolVersion) -> bool {
        v == ProtocolVersion::TLSv1_3
    }
}

struct HybridActive {
    cl: Box<dyn ActiveKeyExchange>,
    pq: Box<dyn ActiveKeyExchange>,
    pub_key: Vec<u8>,
    group: NamedGroup,
    ct_len: usize,
    pq_first: bool,
}

impl ActiveKeyExchange for HybridActive {
    fn complete(self: Box<Self>, peer: &[u8]) -> Result<SharedSecret, Error> {
        let bad = || Error::from(rustls::PeerMisbehaved::InvalidKeyShare);
        let cl_len = peer.len().checked_sub(self.ct_len).ok_or_else(bad)?;
        let (pq_share, cl_share) = if self.pq_first {
            (&peer[..self.ct_len], &peer[self.ct_len..])
        } else {
            (&peer[cl_len..], &peer[..cl_len])
        };
        let pq_first = self.pq_first;
        let cl = self.cl.complete(cl_share)?;
        let pq = self.pq.complete(pq_share)?;
        let (a, b) = (pq.secret_bytes(), cl.secret_bytes());
        Ok(SharedSecret::from(if pq_first {
            [a, b].concat()
        } else {
            [b, a].concat()
        }))
    }
    fn hybrid_component(&self) -> Option<(NamedGroup, &[u8])> {
        Some((self.cl.group(), self.cl.pub_key()))
    }
    fn complete_hybrid_component(self: Box<Self>, peer: &[u8]) -> Result<SharedSecret, Error> {
        self.cl.complete(peer)
    }
    fn pub_key(&self) -> &[u8] {
        &self.pub_key
    }
    fn ffdhe_group(&self) -> Option<FfdheGroup<'static>> {
        None
    }
    fn group(&self) -> NamedGroup {
        self.group
    }
}

// The hash and HKDF objects are re-made over aws-lc-rs, line for line as rustls 0.23.46
// `crypto/ring/hash.rs` (its aws-lc-rs provider builds the same file) and
// `crypto/aws_lc_rs/tls13.rs` (`AwsLcHkdf`), instead of wrapping rustls's: a wrapper boxes every
// context and expander a second time, 21 of the 32 allocations per handshake the timing
// provider added (callgrind, X25519 in memory). Only the timed calls differ from rustls's own.
// `tests::same_outputs_as_rustls` checks every output against rustls's provider.
struct TimedHash {
    alg: &'static digest::Algorithm,
    id: hash::HashAlgorithm,
}

fn output(d: digest::Digest) -> hash::Output {
    hash::Output::new(d.as_ref())
}

impl hash::Hash for TimedHash {
    fn start(&self) -> Box<dyn hash::Context> {
        Box::new(TimedCtx(digest::Context::new(self.alg)))
    }
    fn hash(&self, data: &[u8]) -> hash::Output {
        timed(CallLabel::HashFinish, || {
            let mut ctx = digest::Context::new(self.alg);
            ctx.update(data);
            output(ctx.finish())
        })
    }
    fn output_len(&self) -> usize {
        self.alg.output_len()
    }
    fn algorithm(&self) -> hash::HashAlgorithm {
        self.id
    }
    fn fips(&self) -> bool {
        aws_lc_rs::try_fips_mode().is_ok()
    }
}

struct TimedCtx(digest::Context);

impl hash::Context for TimedCtx {
    fn fork_finish(&self) -> hash::Output {
        timed(CallLabel::HashFinish, || output(self.0.clone().finish()))
    }
    fn fork(&self) -> Box<dyn hash::Context> {
        Box::new(TimedCtx(timed(CallLabel::HashFinish, || self.0.clone())))
    }
    fn finish(self: Box<Self>) -> hash::Output {
        timed(CallLabel::HashFinish, move || output(self.0.finish()))
    }
    fn update(&mut self, data: &[u8]) {
        add_hashed(data.len());
        timed(CallLabel::HashUpdate, || self.0.update(data))
    }
}

struct TimedHkdf {
    hkdf: awshkdf::Algorithm,
    hmac: awshmac::Algorithm,
}

impl TimedHkdf {
    fn extract(&self, salt: Option<&[u8]>, secret: Option<&[u8]>) -> Box<dyn HkdfExpander> {
        let zeroes = [0u8; OkmBlock::MAX_LEN];
        let n = self.hkdf.len();
        let prk = timed(CallLabel::KdfExtract, || {
            awshkdf::Salt::new(self.hkdf, salt.unwrap_or(&zeroes[..n]))
                .extract(secret.unwrap_or(&zeroes[..n]))
        });
        Box::new(TimedExpander {
            alg: self.hkdf,
            prk,
        })
    }
}

impl Hkdf for TimedHkdf {
    fn extract_from_zero_ikm(&self, salt: Option<&[u8]>) -> Box<dyn HkdfExpander> {
        self.extract(salt, None)
    }
    fn extract_from_secret(&self, salt: Option<&[u8]>, secret: &[u8]) -> Box<dyn HkdfExpander> {
        self.extract(salt, Some(secret))
    }
    fn expander_for_okm(&self, okm: &OkmBlock) -> Box<dyn HkdfExpander> {
        // Only a copy of the key (aws-lc-rs 1.19 `Prk::new_less_safe`): no crypto, not timed.
        Box::new(TimedExpander {
            alg: self.hkdf,
            prk: awshkdf::Prk::new_less_safe(self.hkdf, okm.as_ref()),
        })
    }
    fn hmac_sign(&self, key: &OkmBlock, message: &[u8]) -> hmac::Tag {
        timed(CallLabel::MacCompute, || {
            hmac::Tag::new(
                awshmac::sign(&awshmac::Key::new(self.hmac, key.as_ref()), message).as_ref(),
            )
        })
    }
    fn fips(&self) -> bool {
        aws_lc_rs::try_fips_mode().is_ok()
    }
}

struct TimedExpander {
    alg: awshkdf::Algorithm,
    prk: awshkdf::Prk,
}

/// An output length, as aws-lc-rs's `expand` takes it.
struct Len(usize);

impl awshkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

impl TimedExpander {
    fn fill(&self, info: &[&[u8]], out: &mut [u8]) -> Result<(), OutputLengthError> {
        timed(CallLabel::KdfExpand, || {
            self.prk
                .expand(info, Len(out.len()))
                .and_then(|okm| okm.fill(out))
                .map_err(|_| OutputLengthError)
        })
    }
}

impl HkdfExpander for TimedExpander {
    fn expand_slice(&self, info: &[&[u8]], out: &mut [u8]) -> Result<(), OutputLengthError> {
        self.fill(info, out)
    }
    fn expand_block(&self, info: &[&[u8]]) -> OkmBlock {
        let mut buf = [0u8; OkmBlock::MAX_LEN];
        let out = &mut buf[..self.alg.len()];
        // rustls unwraps here too: a hash-length output is always within HKDF's limit.
        self.fill(info, out)
            .expect("HKDF output of one hash length");
        OkmBlock::new(out)
    }
    fn hash_len(&self) -> usize {
        self.alg.len()
    }
}

struct TimedAead(&'static dyn Tls13AeadAlgorithm);

impl Tls13AeadAlgorithm for TimedAead {
    fn encrypter(&self, key: AeadKey, iv: Iv) -> Box<dyn MessageEncrypter> {
        Box::new(TimedEnc(timed(CallLabel::AeadKey, || {
            self.0.encrypter(key, iv)
        })))
    }
    fn decrypter(&self, key: AeadKey, iv: Iv) -> Box<dyn MessageDecrypter> {
        Box::new(TimedDec(timed(CallLabel::AeadKey, || {
            self.0.decrypter(key, iv)
        })))
    }
    fn key_len(&self) -> usize {
        self.0.key_len()
    }
    fn extract_keys(
        &self,
        key: AeadKey,
        iv: Iv,
    ) -> Result<ConnectionTrafficSecrets, UnsupportedOperationError> {
        self.0.extract_keys(key, iv)
    }
    fn fips(&self) -> bool {
        self.0.fips()
    }
}

struct TimedEnc(Box<dyn MessageEncrypter>);

impl MessageEncrypter for TimedEnc {
    fn encrypt(
        &mut self,
        msg: OutboundPlainMessage<'_>,
        seq: u64,
    ) -> Result<OutboundOpaqueMessage, Error> {
        timed(CallLabel::AeadSeal, || self.0.encrypt(msg, seq))
    }
    fn encrypted_payload_len(&self, n: usize) -> usize {
        self.0.encrypted_payload_len(n)
    }
}

struct TimedDec(Box<dyn MessageDecrypter>);

impl MessageDecrypter for TimedDec {
    fn decrypt<'a>(
        &mut self,
        msg: InboundOpaqueMessage<'a>,
        seq: u64,
    ) -> Result<InboundPlainMessage<'a>, Error> {
        timed(CallLabel::AeadOpen, || self.0.decrypt(msg, seq))
    }
}

#[derive(Debug)]
struct TimedKeyProvider(&'static dyn KeyProvider);

impl KeyProvider for TimedKeyProvider {
    fn load_private_key(
        &self,
        key_der: PrivateKeyDer<'static>,
    ) -> Result<Arc<dyn SigningKey>, Error> {
        Ok(Arc::new(TimedSigningKey(self.0.load_private_key(key_der)?)))
    }
    fn fips(&self) -> bool {
        self.0.fips()
    }
}

#[derive(Debug)]
struct TimedSigningKey(Arc<dyn SigningKey>);

impl SigningKey for TimedSigningKey {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        self.0
            .choose_scheme(offered)
            .map(|s| Box::new(TimedSigner(s)) as Box<dyn Signer>)
    }
    fn public_key(&self) -> Option<SubjectPublicKeyInfoDer<'_>> {
        self.0.public_key()
    }
    fn algorithm(&self) -> SignatureAlgorithm {
        self.0.algorithm()
    }
}

#[derive(Debug)]
struct TimedSigner(Box<dyn Signer>);

impl Signer for TimedSigner {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, Error> {
        timed(CallLabel::SigSign, || self.0.sign(message))
    }
    fn scheme(&self) -> SignatureScheme {
        self.0.scheme()
    }
}

/// The identifiers are copied in: webpki asks every algorithm of the list for them until one
/// matches the certificate's, and each would otherwise be one more indirect call on the path.
#[derive(Debug)]
struct TimedVerify {
    inner: &'static dyn SignatureVerificationAlgorithm,
    label: CallLabel,
    public_key_alg_id: AlgorithmIdentifier,
    signature_alg_id: AlgorithmIdentifier,
}

impl SignatureVerificationAlgorithm for TimedVerify {
    fn verify_signature(&self, pk: &[u8], msg: &[u8], sig: &[u8]) -> Result<(), InvalidSignature> {
        timed(self.label, || self.inner.verify_signature(pk, msg, sig))
    }
    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        self.public_key_alg_id
    }
    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        self.signature_alg_id
    }
    fn fips_status(&self) -> FipsStatus {
        self.inner.fips_status()
    }
    fn fips(&self) -> bool {
        self.inner.fips()
    }
}

/// webpki checks certificate signatures with `all` and a TLS 1.3 CertificateVerify with the
/// first entry of `mapping` for its scheme (rustls 0.23 `webpki/verify.rs`): two labels.
fn timed_algs(base: WebPkiSupportedAlgorithms) -> WebPkiSupportedAlgorithms {
    let wrap = |a: &'static dyn SignatureVerificationAlgorithm,
                l: CallLabel|
     -> &'static dyn SignatureVerificationAlgorithm {
        leak(TimedVerify {
            inner: a,
            label: l,
            public_key_alg_id: a.public_key_alg_id(),
            signature_alg_id: a.signature_alg_id(),
        })
    };
    let all: Vec<_> = base
        .all
        .iter()
        .map(|a| wrap(*a, CallLabel::SigVerifyCert))
        .collect();
    let mapping: Vec<_> = base
        .mapping
        .iter()
        .map(|(scheme, algs)| {
            let v: Vec<_> = algs
                .iter()
                .map(|a| wrap(*a, CallLabel::SigVerify))
                .collect();
            (*scheme, &*Box::leak(v.into_boxed_slice()))
        })
        .collect();
    WebPkiSupportedAlgorithms {
        all: Box::leak(all.into_boxed_slice()),
        mapping: Box::leak(mapping.into_boxed_slice()),
    }
}

fn timed_suite(base: SupportedCipherSuite) -> Option<SupportedCipherSuite> {
    let s: &'static Tls13CipherSuite = base.tls13()?;
    let id = s.common.hash_provider.algorithm();
    let (alg, hkdf, mac) = match id {
        hash::HashAlgorithm::SHA256 => {
            (&digest::SHA256, awshkdf::HKDF_SHA256, awshmac::HMAC_SHA256)
        }
        hash::HashAlgorithm::SHA384 => {
            (&digest::SHA384, awshkdf::HKDF_SHA384, awshmac::HMAC_SHA384)
        }
        _ => return None,
    };
    Some(SupportedCipherSuite::Tls13(leak(Tls13CipherSuite {
        common: CipherSuiteCommon {
            suite: s.common.suite,
            hash_provider: leak(TimedHash { alg, id }),
            confidentiality_limit: s.common.confidentiality_limit,
        },
        hkdf_provider: leak(TimedHkdf { hkdf, hmac: mac }),
        aead_alg: leak(TimedAead(s.aead_alg)),
        quic: s.quic,
    })))
}

/// The kx group of `name`, timed. `None` for a group this provider does not have.
fn group(name: &str) -> Option<&'static dyn SupportedKxGroup> {
    use rustls::crypto::aws_lc_rs::kx_group;
    let single = |g: &'static dyn SupportedKxGroup, kem: bool| leak(Single { inner: g, kem });
    // ML-KEM-768 sizes: encapsulation key 1,184 B, ciphertext 1,088 B (FIPS 203, Table 3).
    let hybrid = |name, classical, pq_first| -> &'static dyn SupportedKxGroup {
        leak(Hybrid {
            name,
            classical: single(classical, false),
            pq: single(kx_group::MLKEM768, true),
            pq_first,
            ek_len: 1184,
            ct_len: 1088,
        })
    };
    Some(match name {
        "X25519" => single(kx_group::X25519, false),
        "MLKEM768" => single(kx_group::MLKEM768, true),
        "X25519MLKEM768" => hybrid(NamedGroup::X25519MLKEM768, kx_group::X25519, true),
        "SecP256r1MLKEM768" => hybrid(NamedGroup::secp256r1MLKEM768, kx_group::SECP256R1, false),
        _ => return None,
    })
}

/// The verification algorithms with the CertificateVerify offer cut to one scheme (the client's
/// signature_algorithms is the `mapping`'s schemes, rustls 0.23 `client/hs.rs`); certificate
/// signatures (`all`) keep every algorithm. A server's key has exactly one TLS 1.3 scheme, so
/// only the client's offer needs it: plain and timed clients then send the same ClientHello.
pub(crate) fn one_scheme(
    base: WebPkiSupportedAlgorithms,
    scheme: u16,
) -> WebPkiSupportedAlgorithms {
    let scheme = SignatureScheme::from(scheme);
    let mapping: Vec<_> = base
        .mapping
        .iter()
        .filter(|(s, _)| *s == scheme)
        .copied()
        .collect();
    WebPkiSupportedAlgorithms {
        all: base.all,
        mapping: Box::leak(mapping.into_boxed_slice()),
    }
}

/// aws-lc-rs's default provider with these key-exchange groups, the CertificateVerify offer cut to
/// `scheme`, and every call timed.
pub(crate) fn provider(groups: &[&str], scheme: u16) -> anyhow::Result<Arc<CryptoProvider>> {
    let base = rustls::crypto::aws_lc_rs::default_provider();
    let kx = groups
        .iter()
        .map(|g| group(g).ok_or_else(|| anyhow::anyhow!("rustls: no key-exchange group {g}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Arc::new(CryptoProvider {
        cipher_suites: base
            .cipher_suites
            .iter()
            .filter_map(|s| timed_suite(*s))
            .collect(),
        kx_groups: kx,
        signature_verification_algorithms: timed_algs(one_scheme(
            base.signature_verification_algorithms,
            scheme,
        )),
        secure_random: base.secure_random,
        key_provider: leak(TimedKeyProvider(base.key_provider)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The re-made hash and HKDF objects give rustls's outputs, for every TLS 1.3 suite.
    #[test]
    fn same_outputs_as_rustls() {
        let base = rustls::crypto::aws_lc_rs::default_provider();
        let suites: Vec<_> = base
            .cipher_suites
            .iter()
            .filter_map(|s| s.tls13())
            .collect();
        assert!(suites.len() >= 2, "a SHA-256 and a SHA-384 suite");
        for s in suites {
            let t = timed_suite(SupportedCipherSuite::Tls13(s))
                .and_then(|t| t.tls13())
                .expect("every TLS 1.3 suite is timed");
            let (h0, h1) = (s.common.hash_provider, t.common.hash_provider);
            assert_eq!(h0.algorithm(), h1.algorithm());
            assert_eq!(h0.hash(b"abc").as_ref(), h1.hash(b"abc").as_ref());
            let (mut c0, mut c1) = (h0.start(), h1.start());
            for part in [&b"client hello"[..], b"", b"server hello"] {
                c0.update(part);
                c1.update(part);
                assert_eq!(c0.fork_finish().as_ref(), c1.fork_finish().as_ref());
            }
            assert_eq!(c0.fork().finish().as_ref(), c1.fork().finish().as_ref());
            assert_eq!(c0.finish().as_ref(), c1.finish().as_ref());

            let (k0, k1) = (s.hkdf_provider, t.hkdf_provider);
            let secret = [7u8; 48];
            let pairs = [
                (
                    k0.extract_from_zero_ikm(None),
                    k1.extract_from_zero_ikm(None),
                ),
                (
                    k0.extract_from_zero_ikm(Some(b"salt")),
                    k1.extract_from_zero_ikm(Some(b"salt")),
                ),
                (
                    k0.extract_from_secret(Some(b"salt"), &secret),
                    k1.extract_from_secret(Some(b"salt"), &secret),
                ),
                (
                    k0.extract_from_secret(None, &secret),
                    k1.extract_from_secret(None, &secret),
                ),
            ];
            for (e0, e1) in pairs {
                assert_eq!(e0.hash_len(), e1.hash_len());
                let b0 = e0.expand_block(&[b"tls13 ", b"derived"]);
                assert_eq!(
                    b0.as_ref(),
                    e1.expand_block(&[b"tls13 ", b"derived"]).as_ref()
                );
                let (mut o0, mut o1) = ([0u8; 44], [0u8; 44]);
                assert!(
                    e0.expand_slice(&[b"key"], &mut o0).is_ok()
                        && e1.expand_slice(&[b"key"], &mut o1).is_ok()
                );
                assert_eq!(o0, o1);
                let (mut big0, mut big1) = (vec![0u8; 255 * 64], vec![0u8; 255 * 64]);
                assert_eq!(
                    e0.expand_slice(&[], &mut big0).is_err(),
                    e1.expand_slice(&[], &mut big1).is_err(),
                    "the same output limit"
                );
                let (x0, x1) = (k0.expander_for_okm(&b0), k1.expander_for_okm(&b0));
                assert_eq!(
                    x0.expand_block(&[b"iv"]).as_ref(),
                    x1.expand_block(&[b"iv"]).as_ref()
                );
                assert_eq!(
                    k0.hmac_sign(&b0, b"finished").as_ref(),
                    k1.hmac_sign(&b0, b"finished").as_ref()
                );
            }
        }
    }
}
