//! OpenSSL 3.5 (vendored through `openssl-src` 300.5.x, one libcrypto shared with liboqs) through the
//! `openssl` crate, and `evp.rs` for the ML-KEM calls the crate lacks.
//!
//! Each call makes its own EVP_PKEY_CTX / EVP_MD_CTX, as libssl does for each handshake; the AEAD
//! keeps one keyed EVP_CIPHER_CTX per direction and only sets a new nonce per record, as libssl does.

use super::evp;
use super::{loaded, loaded_mut, Aead, Backend, Dh, Hash, Kdf, Kem, Loaded, Mac, Sig};
use crate::algorithm::Operation;
use anyhow::{anyhow, Result};
use openssl::bn::BigNumContext;
use openssl::cipher::Cipher;
use openssl::cipher_ctx::CipherCtx;
use openssl::derive::Deriver;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::hash::{Hasher, MessageDigest};
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private, Public};
use openssl::pkey_ctx::PkeyCtx;
use openssl::sign::{Signer, Verifier};
use std::ffi::CStr;

#[derive(Default)]
pub(crate) struct OpenSsl;

/// OpenSSL's names for the provider algorithms.
fn provider_name(algorithm: &str) -> Option<&'static CStr> {
    Some(match algorithm {
        "ML-KEM-512" => c"ML-KEM-512",
        "ML-KEM-768" => c"ML-KEM-768",
        "ML-KEM-1024" => c"ML-KEM-1024",
        "ML-DSA-44" => c"ML-DSA-44",
        "ML-DSA-65" => c"ML-DSA-65",
        "ML-DSA-87" => c"ML-DSA-87",
        "SLH-DSA-SHAKE-128s" => c"SLH-DSA-SHAKE-128s",
        "SLH-DSA-SHAKE-128f" => c"SLH-DSA-SHAKE-128f",
        _ => return None,
    })
}

impl Backend for OpenSsl {
    fn name(&self) -> &'static str {
        "openssl"
    }

    fn version(&self) -> String {
        openssl::version::version().to_string()
    }

    fn build(&self) -> String {
        // OpenSSL picks its assembly at run time from a capability vector it fills from CPUID on
        // x86-64 and from the kernel's HWCAPs on aarch64 (crypto/armcap.c).
        let (cap, asm) = if cfg!(target_arch = "aarch64") {
            ("OPENSSL_armcap", "AES-GCM (ARMv8 AES + PMULL), SHA-2 (ARMv8 SHA), P-256 (ecp_nistz256-armv8) assembly; X25519 is C")
        } else {
            ("OPENSSL_ia32cap", "AES-GCM, SHA and X25519/P-256 assembly")
        };
        format!("vendored (openssl-src, static, no-shared no-module) unless built with OPENSSL_NO_VENDOR (run.openssl_version names the one linked); run-time dispatch by {cap} for {asm}; ML-KEM and ML-DSA are portable C in 3.5")
    }

    fn native_name(&self, algorithm: &str) -> Option<&'static str> {
        match algorithm {
            "X25519" => Some("X25519"),
            "P-256" => Some("prime256v1"),
            "AES-256-GCM" => Some("AES-256-GCM"),
            "ECDSA-P256" => Some("EC prime256v1 with SHA-256"),
            "Ed25519" => Some("ED25519"),
            "HKDF-SHA256" => Some("HKDF with SHA256"),
            "HKDF-SHA384" => Some("HKDF with SHA384"),
            "HMAC-SHA256" => Some("HMAC with SHA256"),
            "HMAC-SHA384" => Some("HMAC with SHA384"),
            "SHA-256" => Some("SHA256"),
            "SHA-384" => Some("SHA384"),
            a => provider_name(a).and_then(|n| n.to_str().ok()),
        }
    }

    fn includes(&self, op: Operation) -> &'static str {
        match op {
            Operation::KemEncaps => "importing the encapsulation key (EVP_PKEY_new_raw_public_key_ex), a new EVP_PKEY_CTX, encapsulate",
            Operation::KemDecaps => "a new EVP_PKEY_CTX, decapsulate",
            Operation::DhDerive => "importing the peer's share into an EVP_PKEY, a new EVP_PKEY_CTX, derive",
            Operation::DhKeygen | Operation::KemKeygen | Operation::SigKeygen => "a new EVP_PKEY_CTX, generate, export the public key",
            Operation::SigSign | Operation::SigVerify => "a new EVP_MD_CTX (EVP_DigestSignInit/VerifyInit, no digest), one-shot sign or verify",
            Operation::AeadEncrypt | Operation::AeadDecrypt => "setting the nonce on a keyed EVP_CIPHER_CTX, AAD, in-place update, final and tag",
            Operation::AeadKey => "two EVP_CIPHER_CTX keyed for AES-256-GCM (one per direction), as libssl does per traffic secret",
            Operation::KdfExtract | Operation::KdfExpand => "EVP_KDF_fetch(\"HKDF\"), a new EVP_KDF_CTX, parameters and EVP_KDF_derive: as libssl's tls13_hkdf_expand does per call",
            Operation::MacCompute => "EVP_Q_mac(\"HMAC\") with the key bytes: as libssl computes Finished",
            Operation::HashBlock => "EVP_DigestUpdate of one block",
            Operation::HashFinish => "EVP_MD_CTX_copy of the running context and EVP_DigestFinal on the copy, as libssl's ssl_handshake_hash",
        }
    }

    fn setup(&self, algorithm: &str, op: Operation) -> Option<&'static str> {
        let kem = algorithm.starts_with("ML-KEM");
        let dh = matches!(algorithm, "X25519" | "P-256");
        match op {
            Operation::KemKeygen if kem => Some("a new EVP_PKEY_CTX, and exporting the encapsulation key"),
            Operation::KemEncaps if kem => Some("importing the encapsulation key (EVP_PKEY_new_raw_public_key_ex) and a new EVP_PKEY_CTX"),
            Operation::KemDecaps if kem => Some("a new EVP_PKEY_CTX"),
            Operation::DhDerive if dh => Some("importing the peer's share into an EVP_PKEY and a new EVP_PKEY_CTX with the peer set"),
            _ => None,
        }
    }

    fn kem(&self, algorithm: &str) -> Option<Box<dyn Kem>> {
        let name = provider_name(algorithm)?;
        algorithm
            .starts_with("ML-KEM")
            .then(|| Box::new(PqKey(name)) as Box<dyn Kem>)
    }

    fn dh(&self, algorithm: &str) -> Option<Box<dyn Dh>> {
        match algorithm {
            "X25519" => Some(Box::new(X25519)),
            "P-256" => EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)
                .ok()
                .map(|g| Box::new(P256(g)) as Box<dyn Dh>),
            _ => None,
        }
    }

    fn sig(&self, algorithm: &str) -> Option<Box<dyn Sig>> {
        if algorithm == "ECDSA-P256" {
            return EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)
                .ok()
                .map(|g| Box::new(Ecdsa(g)) as Box<dyn Sig>);
        }
        if algorithm == "Ed25519" {
            return Some(Box::new(Ed25519));
        }
        let name = provider_name(algorithm)?;
        algorithm
            .contains("DSA")
            .then(|| Box::new(PqKey(name)) as Box<dyn Sig>)
    }

    fn aead(&self, algorithm: &str) -> Option<Box<dyn Aead>> {
        (algorithm == "AES-256-GCM").then(|| Box::new(AesGcm) as Box<dyn Aead>)
    }

    fn kdf(&self, algorithm: &str) -> Option<Box<dyn Kdf>> {
        Some(Box::new(evp::Hkdf(match algorithm {
            "HKDF-SHA256" => c"SHA256",
            "HKDF-SHA384" => c"SHA384",
            _ => return None,
        })))
    }

    fn mac(&self, algorithm: &str) -> Option<Box<dyn Mac>> {
        Some(Box::new(evp::Hmac(match algorithm {
            "HMAC-SHA256" => c"SHA256",
            "HMAC-SHA384" => c"SHA384",
            _ => return None,
        })))
    }

    fn hash(&self, algorithm: &str) -> Option<Box<dyn Hash>> {
        Some(Box::new(Sha(match algorithm {
            "SHA-256" => MessageDigest::sha256(),
            "SHA-384" => MessageDigest::sha384(),
            _ => return None,
        })))
    }
}

/// A provider algorithm (ML-KEM, ML-DSA, SLH-DSA) by its OpenSSL name.
struct PqKey(&'static CStr);

impl PqKey {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let key = evp::generate(self.0)?;
        Ok((key.raw_public_key()?, Box::new(key)))
    }
}

impl Kem for PqKey {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        PqKey::keygen(self)
    }

    fn encaps(&self, ek: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        Ok(evp::encapsulate(&evp::public_from_raw(self.0, ek)?)?)
    }

    fn decaps(&self, dk: &Loaded, ct: &[u8]) -> Result<Vec<u8>> {
        Ok(evp::decapsulate(loaded::<PKey<Private>>(dk)?, ct)?)
    }

    fn keygen_state(&self) -> Option<Result<Loaded>> {
        Some(
            evp::keygen_ctx(self.0)
                .map(|c| Box::new(c) as Loaded)
                .map_err(Into::into),
        )
    }

    fn keygen_with(&self, state: &mut Loaded) -> Result<Loaded> {
        Ok(Box::new(evp::generate_with(loaded::<PkeyCtx<()>>(state)?)?))
    }

    fn export_ek(&self, dk: &Loaded) -> Result<Vec<u8>> {
        Ok(loaded::<PKey<Private>>(dk)?.raw_public_key()?)
    }

    fn import_ek(&self, ek: &[u8]) -> Option<Result<Loaded>> {
        let e = (|| {
            Ok(Box::new(evp::Encapsulator::new(&evp::public_from_raw(self.0, ek)?)?) as Loaded)
        })();
        Some(e)
    }

    fn encaps_imported(&self, ek: &mut Loaded) -> Result<(Vec<u8>, Vec<u8>)> {
        Ok(loaded_mut::<evp::Encapsulator>(ek)?.encapsulate()?)
    }

    fn decaps_state(&self, dk: &Loaded) -> Option<Result<Loaded>> {
        Some((|| {
            Ok(Box::new(evp::Decapsulator::new(loaded::<PKey<Private>>(dk)?)?) as Loaded)
        })())
    }

    fn decaps_with(&self, state: &mut Loaded, ct: &[u8]) -> Result<Vec<u8>> {
        Ok(loaded_mut::<evp::Decapsulator>(state)?.decapsulate(ct)?)
    }
}

/// A derive context with the peer set (the primitive form of ECDH, as `openssl speed` times it).
fn derive_ctx(sk: &PKey<Private>, peer: &PKey<Public>) -> Result<Loaded> {
    let mut ctx = PkeyCtx::new(sk)?;
    ctx.derive_init()?;
    ctx.derive_set_peer(peer)?;
    Ok(Box::new(ctx))
}

fn derive_with(ctx: &mut Loaded) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loaded_mut::<PkeyCtx<Private>>(ctx)?.derive_to_vec(&mut out)?;
    Ok(out)
}

impl Sig for PqKey {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        PqKey::keygen(self)
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        Ok(Box::new(evp::public_from_raw(self.0, pk)?))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        Ok(Signer::new_without_digest(loaded::<PKey<Private>>(sk)?)?.sign_oneshot_to_vec(msg)?)
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        let mut v = Verifier::new_without_digest(loaded::<PKey<Public>>(pk)?)?;
        // A malformed signature is reported by some providers as an error rather than a mismatch.
        Ok(v.verify_oneshot(sig, msg).unwrap_or(false))
    }
}

fn derive(sk: &PKey<Private>, peer: &PKey<Public>) -> Result<Vec<u8>> {
    let mut d = Deriver::new(sk)?;
    d.set_peer(peer)?;
    Ok(d.derive_to_vec()?)
}

struct X25519;

impl Dh for X25519 {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let key = PKey::generate_x25519()?;
        Ok((key.raw_public_key()?, Box::new(key)))
    }

    fn derive(&self, secret: &Loaded, peer: &[u8]) -> Result<Vec<u8>> {
        let peer = PKey::public_key_from_raw_bytes(peer, Id::X25519)?;
        derive(loaded::<PKey<Private>>(secret)?, &peer)
    }

    fn import_peer(&self, secret: &Loaded, peer: &[u8]) -> Option<Result<Loaded>> {
        Some((|| {
            derive_ctx(
                loaded::<PKey<Private>>(secret)?,
                &PKey::public_key_from_raw_bytes(peer, Id::X25519)?,
            )
        })())
    }

    fn derive_imported(&self, _secret: &Loaded, peer: &mut Loaded) -> Result<Vec<u8>> {
        derive_with(peer)
    }
}

struct P256(EcGroup);

impl Dh for P256 {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let ec = EcKey::generate(&self.0)?;
        let mut ctx = BigNumContext::new()?;
        let share =
            ec.public_key()
                .to_bytes(&self.0, PointConversionForm::UNCOMPRESSED, &mut ctx)?;
        Ok((share, Box::new(PKey::from_ec_key(ec)?)))
    }

    fn derive(&self, secret: &Loaded, peer: &[u8]) -> Result<Vec<u8>> {
        derive(loaded::<PKey<Private>>(secret)?, &self.peer_key(peer)?)
    }

    fn import_peer(&self, secret: &Loaded, peer: &[u8]) -> Option<Result<Loaded>> {
        Some((|| {
            derive_ctx(loaded::<PKey<Private>>(secret)?, &self.peer_key(peer)?)
        })())
    }

    fn derive_imported(&self, _secret: &Loaded, peer: &mut Loaded) -> Result<Vec<u8>> {
        derive_with(peer)
    }
}

impl P256 {
    fn peer_key(&self, peer: &[u8]) -> Result<PKey<Public>> {
        let mut ctx = BigNumContext::new()?;
        let point = EcPoint::from_bytes(&self.0, peer, &mut ctx)?;
        Ok(PKey::from_ec_key(EcKey::from_public_key(&self.0, &point)?)?)
    }
}

struct AesGcm;

/// One keyed context per direction: the key schedule is done once, as in a TLS connection.
struct GcmKey {
    seal: CipherCtx,
    open: CipherCtx,
}

impl Aead for AesGcm {
    fn load_key(&self, key: &[u8]) -> Result<Loaded> {
        if key.len() != 32 {
            return Err(anyhow!("AES-256 key must be 32 bytes"));
        }
        let (mut seal, mut open) = (CipherCtx::new()?, CipherCtx::new()?);
        seal.encrypt_init(Some(Cipher::aes_256_gcm()), Some(key), None)?;
        open.decrypt_init(Some(Cipher::aes_256_gcm()), Some(key), None)?;
        Ok(Box::new(GcmKey { seal, open }))
    }

    fn seal(&self, key: &mut Loaded, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; 16]> {
        let ctx = &mut loaded_mut::<GcmKey>(key)?.seal;
        ctx.encrypt_init(None, None, Some(nonce))?;
        ctx.cipher_update(aad, None)?;
        let n = buf.len();
        ctx.cipher_update_inplace(buf, n)?;
        ctx.cipher_final(&mut [])?;
        let mut tag = [0u8; 16];
        ctx.tag(&mut tag)?;
        Ok(tag)
    }

    fn open(&self, key: &mut Loaded, nonce: &[u8], aad: &[u8], record: &mut [u8]) -> Result<()> {
        let (buf, tag) = super::split_tag(record)?;
        let ctx = &mut loaded_mut::<GcmKey>(key)?.open;
        ctx.decrypt_init(None, None, Some(nonce))?;
        ctx.cipher_update(aad, None)?;
        let n = buf.len();
        ctx.cipher_update_inplace(buf, n)?;
        ctx.set_tag(tag)?;
        ctx.cipher_final(&mut [])
            .map_err(|_| anyhow!("AES-GCM tag mismatch"))?;
        Ok(())
    }
}

/// ECDSA P-256 with SHA-256 and DER signatures, as a TLS 1.3 CertificateVerify
/// (ecdsa_secp256r1_sha256, RFC 8446 section 4.2.3).
struct Ecdsa(EcGroup);

impl Sig for Ecdsa {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let ec = EcKey::generate(&self.0)?;
        let mut ctx = BigNumContext::new()?;
        let pk = ec
            .public_key()
            .to_bytes(&self.0, PointConversionForm::UNCOMPRESSED, &mut ctx)?;
        Ok((pk, Box::new(PKey::from_ec_key(ec)?)))
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        let mut ctx = BigNumContext::new()?;
        let point = EcPoint::from_bytes(&self.0, pk, &mut ctx)?;
        Ok(Box::new(PKey::from_ec_key(EcKey::from_public_key(
            &self.0, &point,
        )?)?))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        Ok(
            Signer::new(MessageDigest::sha256(), loaded::<PKey<Private>>(sk)?)?
                .sign_oneshot_to_vec(msg)?,
        )
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        let mut v = Verifier::new(MessageDigest::sha256(), loaded::<PKey<Public>>(pk)?)?;
        Ok(v.verify_oneshot(sig, msg).unwrap_or(false))
    }
}

struct Sha(MessageDigest);

impl Hash for Sha {
    fn start(&self) -> Result<Loaded> {
        Ok(Box::new(Hasher::new(self.0)?))
    }

    fn update(&self, ctx: &mut Loaded, data: &[u8]) -> Result<()> {
        Ok(loaded_mut::<Hasher>(ctx)?.update(data)?)
    }

    fn finish_copy(&self, ctx: &Loaded) -> Result<Vec<u8>> {
        Ok(loaded::<Hasher>(ctx)?.clone().finish()?.to_vec())
    }
}

struct Ed25519;

impl Sig for Ed25519 {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let key = PKey::generate_ed25519()?;
        Ok((key.raw_public_key()?, Box::new(key)))
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        Ok(Box::new(PKey::public_key_from_raw_bytes(pk, Id::ED25519)?))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        Ok(Signer::new_without_digest(loaded::<PKey<Private>>(sk)?)?.sign_oneshot_to_vec(msg)?)
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        let mut v = Verifier::new_without_digest(loaded::<PKey<Public>>(pk)?)?;
        Ok(v.verify_oneshot(sig, msg).unwrap_or(false))
    }
}
