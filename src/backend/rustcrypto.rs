//! RustCrypto: pure-Rust implementations (`ml-kem`, `ml-dsa`, `slh-dsa`, `x25519-dalek`, `p256`,
//! `aes-gcm`). Signing is randomized (hedged) as in liboqs and OpenSSL.

use super::{loaded, loaded_mut, Aead, Backend, Dh, Hash, Kdf, Kem, Loaded, Mac, Sig};
use crate::algorithm::Operation;
use aes_gcm::aead::{AeadInOut, KeyInit};
use aes_gcm::Aes256Gcm;
use anyhow::{anyhow, Result};
use ml_kem::{Decapsulate, Encapsulate, KeyExport, TryKeyInit};
use p256::elliptic_curve::Generate as _;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::cell::RefCell;
use std::marker::PhantomData;

#[derive(Default)]
pub(crate) struct RustCrypto;

thread_local! {
    /// The randomness policy shared with OpenSSL, liboqs and aws-lc: a user-space CSPRNG
    /// (ChaCha12, rand's StdRng) seeded once per thread from the operating system, so no timed
    /// call makes a getrandom system call.
    static RNG: RefCell<StdRng> = RefCell::new(StdRng::try_from_rng(&mut getrandom::SysRng).expect("the operating system's random source"));
}

/// Restarts this thread's generator from a fixed seed (instruction counting: the same inputs every
/// run, so the same count).
pub(crate) fn seed(seed: u64) {
    RNG.with(|r| *r.borrow_mut() = StdRng::seed_from_u64(seed));
}

/// Runs `f` with this thread's generator.
fn with_rng<T>(f: impl FnOnce(&mut StdRng) -> T) -> T {
    RNG.with(|r| f(&mut r.borrow_mut()))
}

impl Backend for RustCrypto {
    fn name(&self) -> &'static str {
        "rustcrypto"
    }

    fn version(&self) -> String {
        "RustCrypto ml-kem 0.3, ml-dsa 0.1, slh-dsa 0.2.0-rc.5, x25519-dalek 3 (curve25519-dalek 5), p256 0.14, ed25519-dalek 3, aes-gcm 0.11, sha2 0.11, hmac 0.13, hkdf 0.13".into()
    }

    fn build(&self) -> String {
        if cfg!(target_arch = "aarch64") {
            "pure Rust; ml-kem, ml-dsa, slh-dsa, curve25519-dalek (serial u64 field arithmetic) and p256 portable; sha2, aes and polyval (AES-GCM) have ARMv8 SHA-2 / AES + PMULL code they choose at run time (cpufeatures)".into()
        } else {
            "pure Rust; ml-kem, ml-dsa, slh-dsa, curve25519-dalek (serial u64 field arithmetic) and p256 portable; sha2 and aes-gcm pick SHA-NI / AES-NI + CLMUL at run time (cpufeatures)".into()
        }
    }

    fn native_name(&self, algorithm: &str) -> Option<&'static str> {
        Some(match algorithm {
            "ML-KEM-512" => "ml_kem::MlKem512",
            "ML-KEM-768" => "ml_kem::MlKem768",
            "ML-KEM-1024" => "ml_kem::MlKem1024",
            "ECDSA-P256" => "p256::ecdsa::SigningKey",
            "Ed25519" => "ed25519_dalek::SigningKey",
            "HKDF-SHA256" => "hkdf::Hkdf<Sha256>",
            "HKDF-SHA384" => "hkdf::Hkdf<Sha384>",
            "HMAC-SHA256" => "hmac::Hmac<Sha256>",
            "HMAC-SHA384" => "hmac::Hmac<Sha384>",
            "SHA-256" => "sha2::Sha256",
            "SHA-384" => "sha2::Sha384",
            "ML-DSA-44" => "ml_dsa::MlDsa44",
            "ML-DSA-65" => "ml_dsa::MlDsa65",
            "ML-DSA-87" => "ml_dsa::MlDsa87",
            "SLH-DSA-SHAKE-128s" => "slh_dsa::Shake128s",
            "SLH-DSA-SHAKE-128f" => "slh_dsa::Shake128f",
            "X25519" => "x25519_dalek::ReusableSecret",
            "P-256" => "p256::ecdh::EphemeralSecret",
            "AES-256-GCM" => "aes_gcm::Aes256Gcm",
            _ => return None,
        })
    }

    fn includes(&self, op: Operation) -> &'static str {
        match op {
            Operation::KemEncaps => {
                "parsing the encapsulation key (EncapsulationKey::new_from_slice), then encapsulate"
            }
            Operation::DhDerive => "parsing the peer's public key, then the scalar multiplication",
            Operation::SigVerify => {
                "decoding the signature, then verify with an already decoded public key"
            }
            Operation::AeadEncrypt | Operation::AeadDecrypt => {
                "in-place seal/open with a cipher keyed beforehand"
            }
            _ => "one library call on keys already in memory",
        }
    }

    fn setup(&self, algorithm: &str, op: Operation) -> Option<&'static str> {
        match (algorithm, op) {
            (a, Operation::KemEncaps) if a.starts_with("ML-KEM") => {
                Some("parsing the encapsulation key (EncapsulationKey::new_from_slice)")
            }
            ("P-256", Operation::DhDerive) => {
                Some("parsing and validating the peer's point (PublicKey::from_sec1_bytes)")
            }
            _ => None,
        }
    }

    fn kem(&self, algorithm: &str) -> Option<Box<dyn Kem>> {
        Some(match algorithm {
            "ML-KEM-512" => Box::new(MlKem512),
            "ML-KEM-768" => Box::new(MlKem768),
            "ML-KEM-1024" => Box::new(MlKem1024),
            _ => return None,
        })
    }

    fn dh(&self, algorithm: &str) -> Option<Box<dyn Dh>> {
        match algorithm {
            "X25519" => Some(Box::new(X25519)),
            "P-256" => Some(Box::new(P256)),
            _ => None,
        }
    }

    fn sig(&self, algorithm: &str) -> Option<Box<dyn Sig>> {
        Some(match algorithm {
            "ML-DSA-44" => Box::new(MlDsa::<ml_dsa::MlDsa44>(PhantomData)),
            "ML-DSA-65" => Box::new(MlDsa::<ml_dsa::MlDsa65>(PhantomData)),
            "ML-DSA-87" => Box::new(MlDsa::<ml_dsa::MlDsa87>(PhantomData)),
            "SLH-DSA-SHAKE-128s" => Box::new(SlhDsa::<slh_dsa::Shake128s>(PhantomData)),
            "SLH-DSA-SHAKE-128f" => Box::new(SlhDsa::<slh_dsa::Shake128f>(PhantomData)),
            "ECDSA-P256" => Box::new(EcdsaP256),
            "Ed25519" => Box::new(Ed25519),
            _ => return None,
        })
    }

    fn kdf(&self, algorithm: &str) -> Option<Box<dyn Kdf>> {
        Some(match algorithm {
            "HKDF-SHA256" => Box::new(Hkdf::<sha2::Sha256>(PhantomData)),
            "HKDF-SHA384" => Box::new(Hkdf::<sha2::Sha384>(PhantomData)),
            _ => return None,
        })
    }

    fn mac(&self, algorithm: &str) -> Option<Box<dyn Mac>> {
        Some(match algorithm {
            "HMAC-SHA256" => Box::new(Hmac::<sha2::Sha256>(PhantomData)),
            "HMAC-SHA384" => Box::new(Hmac::<sha2::Sha384>(PhantomData)),
            _ => return None,
        })
    }

    fn hash(&self, algorithm: &str) -> Option<Box<dyn Hash>> {
        Some(match algorithm {
            "SHA-256" => Box::new(Sha::<sha2::Sha256>(PhantomData)),
            "SHA-384" => Box::new(Sha::<sha2::Sha384>(PhantomData)),
            _ => return None,
        })
    }

    fn aead(&self, algorithm: &str) -> Option<Box<dyn Aead>> {
        (algorithm == "AES-256-GCM").then(|| Box::new(AesGcm) as Box<dyn Aead>)
    }
}

/// ML-KEM for one parameter set of the `ml-kem` crate (the code russh 0.65 runs for
/// mlkem768x25519-sha256).
macro_rules! ml_kem {
    ($name:ident, $params:ty, $label:literal) => {
        struct $name;

        impl $name {
            fn parse(ek: &[u8]) -> Result<ml_kem::EncapsulationKey<$params>> {
                ml_kem::EncapsulationKey::<$params>::new_from_slice(ek)
                    .map_err(|_| anyhow!(concat!("invalid ", $label, " encapsulation key")))
            }
        }

        impl Kem for $name {
            fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
                let dk = with_rng(|r| ml_kem::DecapsulationKey::<$params>::generate_from_rng(r));
                Ok((dk.encapsulation_key().to_bytes().to_vec(), Box::new(dk)))
            }

            fn encaps(&self, ek: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
                let ek = Self::parse(ek)?;
                let (ct, ss) = with_rng(|r| ek.encapsulate_with_rng(r));
                Ok((ct.to_vec(), ss.to_vec()))
            }

            fn import_ek(&self, ek: &[u8]) -> Option<Result<Loaded>> {
                Some(Self::parse(ek).map(|k| Box::new(k) as Loaded))
            }

            fn encaps_imported(&self, ek: &mut Loaded) -> Result<(Vec<u8>, Vec<u8>)> {
                let (ct, ss) = with_rng(|r| {
                    loaded::<ml_kem::EncapsulationKey<$params>>(ek)
                        .map(|k| k.encapsulate_with_rng(r))
                })?;
                Ok((ct.to_vec(), ss.to_vec()))
            }

            fn decaps(&self, dk: &Loaded, ct: &[u8]) -> Result<Vec<u8>> {
                let ss = loaded::<ml_kem::DecapsulationKey<$params>>(dk)?
                    .decapsulate_slice(ct)
                    .map_err(|_| anyhow!("ciphertext has the wrong length"))?;
                Ok(ss.to_vec())
            }
        }
    };
}

ml_kem!(MlKem512, ml_kem::MlKem512, "ML-KEM-512");
ml_kem!(MlKem768, ml_kem::MlKem768, "ML-KEM-768");
ml_kem!(MlKem1024, ml_kem::MlKem1024, "ML-KEM-1024");

struct X25519;

impl Dh for X25519 {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let sk = with_rng(x25519_dalek::ReusableSecret::random_from_rng);
        let pk = x25519_dalek::PublicKey::from(&sk);
        Ok((pk.as_bytes().to_vec(), Box::new(sk)))
    }

    fn derive(&self, secret: &Loaded, peer: &[u8]) -> Result<Vec<u8>> {
        let peer: [u8; 32] = peer
            .try_into()
            .map_err(|_| anyhow!("X25519 share must be 32 bytes"))?;
        let ss = loaded::<x25519_dalek::ReusableSecret>(secret)?.diffie_hellman(&peer.into());
        // RFC 8446 section 7.4.2: an all-zero X25519 secret must be rejected.
        if !ss.was_contributory() {
            return Err(anyhow!("X25519 shared secret is all zero"));
        }
        Ok(ss.as_bytes().to_vec())
    }
}

struct P256;

impl Dh for P256 {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let sk = with_rng(p256::ecdh::EphemeralSecret::generate_from_rng);
        Ok((sk.public_key().to_sec1_bytes().into_vec(), Box::new(sk)))
    }

    fn derive(&self, secret: &Loaded, peer: &[u8]) -> Result<Vec<u8>> {
        let peer =
            p256::PublicKey::from_sec1_bytes(peer).map_err(|_| anyhow!("invalid P-256 point"))?;
        let ss = loaded::<p256::ecdh::EphemeralSecret>(secret)?.diffie_hellman(&peer);
        Ok(ss.raw_secret_bytes().to_vec())
    }

    fn import_peer(&self, _secret: &Loaded, peer: &[u8]) -> Option<Result<Loaded>> {
        Some(
            p256::PublicKey::from_sec1_bytes(peer)
                .map(|k| Box::new(k) as Loaded)
                .map_err(|_| anyhow!("invalid P-256 point")),
        )
    }

    fn derive_imported(&self, secret: &Loaded, peer: &mut Loaded) -> Result<Vec<u8>> {
        let ss = loaded::<p256::ecdh::EphemeralSecret>(secret)?
            .diffie_hellman(loaded::<p256::PublicKey>(peer)?);
        Ok(ss.raw_secret_bytes().to_vec())
    }
}

struct MlDsa<P>(PhantomData<P>);

impl<P: ml_dsa::MlDsaParams + Send + 'static> Sig for MlDsa<P> {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        use ml_dsa::Generate;
        let sk = with_rng(ml_dsa::SigningKey::<P>::generate_from_rng);
        let pk = sk.expanded_key().verifying_key().encode().to_vec();
        Ok((pk, Box::new(sk)))
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        let enc = ml_dsa::EncodedVerifyingKey::<P>::try_from(pk)
            .map_err(|_| anyhow!("ML-DSA public key has the wrong length"))?;
        Ok(Box::new(ml_dsa::VerifyingKey::<P>::decode(&enc)))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        let sk = loaded::<ml_dsa::SigningKey<P>>(sk)?;
        let sig = with_rng(|r| sk.expanded_key().sign_randomized(msg, &[], r))
            .map_err(|e| anyhow!("ML-DSA sign: {e}"))?;
        Ok(sig.encode().to_vec())
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        let Ok(enc) = ml_dsa::EncodedSignature::<P>::try_from(sig) else {
            return Ok(false);
        };
        let Some(sig) = ml_dsa::Signature::<P>::decode(&enc) else {
            return Ok(false);
        };
        Ok(loaded::<ml_dsa::VerifyingKey<P>>(pk)?.verify_with_context(msg, &[], &sig))
    }
}

struct SlhDsa<P>(PhantomData<P>);

impl<P: slh_dsa::ParameterSet + Send + 'static> Sig for SlhDsa<P> {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let sk = with_rng(|r| slh_dsa::SigningKey::<P>::new(r));
        let pk = AsRef::<slh_dsa::VerifyingKey<P>>::as_ref(&sk).to_vec();
        Ok((pk, Box::new(sk)))
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        let vk = slh_dsa::VerifyingKey::<P>::try_from(pk)
            .map_err(|_| anyhow!("invalid SLH-DSA public key"))?;
        Ok(Box::new(vk))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        // Hedged signing (FIPS 205 section 10.2.1): fresh opt_rand of n = 16 bytes for the 128 sets.
        let mut opt_rand = [0u8; 16];
        with_rng(|r| rand::Rng::fill_bytes(r, &mut opt_rand));
        let sig = loaded::<slh_dsa::SigningKey<P>>(sk)?
            .try_sign_with_context(msg, &[], Some(&opt_rand))
            .map_err(|e| anyhow!("SLH-DSA sign: {e}"))?;
        Ok(sig.to_vec())
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        let Ok(sig) = slh_dsa::Signature::<P>::try_from(sig) else {
            return Ok(false);
        };
        Ok(loaded::<slh_dsa::VerifyingKey<P>>(pk)?
            .try_verify_with_context(msg, &[], &sig)
            .is_ok())
    }
}

struct AesGcm;

impl Aead for AesGcm {
    fn load_key(&self, key: &[u8]) -> Result<Loaded> {
        Ok(Box::new(
            Aes256Gcm::new_from_slice(key).map_err(|_| anyhow!("AES-256 key must be 32 bytes"))?,
        ))
    }

    fn seal(&self, key: &mut Loaded, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; 16]> {
        let nonce =
            aes_gcm::Nonce::try_from(nonce).map_err(|_| anyhow!("nonce must be 12 bytes"))?;
        let tag = loaded_mut::<Aes256Gcm>(key)?
            .encrypt_inout_detached(&nonce, aad, buf.into())
            .map_err(|_| anyhow!("AES-GCM seal failed"))?;
        Ok(tag.into())
    }

    fn open(&self, key: &mut Loaded, nonce: &[u8], aad: &[u8], record: &mut [u8]) -> Result<()> {
        let (buf, tag) = super::split_tag(record)?;
        let nonce =
            aes_gcm::Nonce::try_from(nonce).map_err(|_| anyhow!("nonce must be 12 bytes"))?;
        let tag: [u8; 16] = *tag;
        loaded_mut::<Aes256Gcm>(key)?
            .decrypt_inout_detached(&nonce, aad, buf.into(), &tag.into())
            .map_err(|_| anyhow!("AES-GCM tag mismatch"))
    }
}

struct EcdsaP256;

impl Sig for EcdsaP256 {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let sk = with_rng(p256::ecdsa::SigningKey::generate_from_rng);
        Ok((sk.verifying_key().to_sec1_bytes().to_vec(), Box::new(sk)))
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        Ok(Box::new(
            p256::ecdsa::VerifyingKey::from_sec1_bytes(pk)
                .map_err(|_| anyhow!("invalid P-256 public key"))?,
        ))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        use p256::ecdsa::signature::Signer;
        // RFC 6979 deterministic nonces: ECDSA in p256 needs no randomness.
        let sig: p256::ecdsa::Signature = loaded::<p256::ecdsa::SigningKey>(sk)?
            .try_sign(msg)
            .map_err(|e| anyhow!("ECDSA sign: {e}"))?;
        Ok(sig.to_der().as_bytes().to_vec())
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        use p256::ecdsa::signature::Verifier;
        let Ok(sig) = p256::ecdsa::Signature::from_der(sig) else {
            return Ok(false);
        };
        Ok(loaded::<p256::ecdsa::VerifyingKey>(pk)?
            .verify(msg, &sig)
            .is_ok())
    }
}

struct Ed25519;

impl Sig for Ed25519 {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let sk = with_rng(ed25519_dalek::SigningKey::generate);
        Ok((sk.verifying_key().to_bytes().to_vec(), Box::new(sk)))
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        let pk: [u8; 32] = pk
            .try_into()
            .map_err(|_| anyhow!("Ed25519 public key must be 32 bytes"))?;
        Ok(Box::new(
            ed25519_dalek::VerifyingKey::from_bytes(&pk)
                .map_err(|_| anyhow!("invalid Ed25519 public key"))?,
        ))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        use ed25519_dalek::Signer;
        Ok(loaded::<ed25519_dalek::SigningKey>(sk)?
            .sign(msg)
            .to_bytes()
            .to_vec())
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        let Ok(sig) = ed25519_dalek::Signature::from_slice(sig) else {
            return Ok(false);
        };
        Ok(loaded::<ed25519_dalek::VerifyingKey>(pk)?
            .verify_strict(msg, &sig)
            .is_ok())
    }
}

struct Hkdf<D>(PhantomData<D>);

impl<D> Kdf for Hkdf<D>
where
    D: hmac::EagerHash + sha2::digest::OutputSizeUser + Send + 'static,
    hkdf::Hkdf<D>: Send,
{
    fn extract(&self, salt: &[u8], ikm: &[u8]) -> Result<Loaded> {
        Ok(Box::new(hkdf::Hkdf::<D>::new(Some(salt), ikm)))
    }

    fn expand(&self, prk: &Loaded, info: &[u8], len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0u8; len];
        loaded::<hkdf::Hkdf<D>>(prk)?
            .expand(info, &mut out)
            .map_err(|e| anyhow!("HKDF-Expand: {e}"))?;
        Ok(out)
    }
}

struct Hmac<D>(PhantomData<D>);

impl<D> Mac for Hmac<D>
where
    D: hmac::EagerHash + Send + 'static,
{
    fn compute(&self, key: &[u8], msg: &[u8]) -> Result<Vec<u8>> {
        use hmac::{KeyInit, Mac as _};
        Ok(hmac::Hmac::<D>::new_from_slice(key)?
            .chain_update(msg)
            .finalize()
            .into_bytes()
            .to_vec())
    }
}

struct Sha<D>(PhantomData<D>);

impl<D> Hash for Sha<D>
where
    D: sha2::Digest + Clone + Send + 'static,
{
    fn start(&self) -> Result<Loaded> {
        Ok(Box::new(D::new()))
    }

    fn update(&self, ctx: &mut Loaded, data: &[u8]) -> Result<()> {
        loaded_mut::<D>(ctx)?.update(data);
        Ok(())
    }

    fn finish_copy(&self, ctx: &Loaded) -> Result<Vec<u8>> {
        Ok(loaded::<D>(ctx)?.clone().finalize().to_vec())
    }
}
