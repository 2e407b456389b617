//! aws-lc through `aws-lc-rs` 1.19 (the library rustls's default provider runs, and the one rcgen
//! signs with): ML-KEM-512/768/1024, X25519 and P-256 agreement, ECDSA P-256 and ML-DSA signatures,
//! AES-256-GCM, and the TLS 1.3 key schedule's HKDF, HMAC and SHA-2.
//!
//! The calls are the ones rustls's aws-lc-rs provider makes (rustls 0.23
//! `rustls:src/crypto/aws_lc_rs/`): ML-KEM encapsulation parses the peer's key per call
//! (`EncapsulationKey::new`), agreement parses the peer's share inside `agree`, HKDF-Extract is
//! `Salt::extract`, which aws-lc-rs only records: the work happens in every `Prk::expand`, which
//! runs extract and expand together (aws-lc-rs `hkdf.rs`, `PrkMode`). Randomness comes from aws-lc's
//! own DRBG (user space, seeded from the operating system).

use super::{loaded, loaded_mut, Aead, Backend, Dh, Hash, Kdf, Kem, Loaded, Mac, Sig};
use crate::algorithm::Operation;
use anyhow::{anyhow, Result};
use aws_lc_rs::signature::KeyPair as _;
use aws_lc_rs::{aead, agreement, digest, hkdf, hmac, kem, signature};

pub(crate) struct AwsLc;

impl AwsLc {
    pub(crate) fn new() -> Self {
        // The first call into aws-lc initialises it (tens of milliseconds): never inside a timed call.
        aws_lc_rs::init();
        AwsLc
    }
}

impl Default for AwsLc {
    fn default() -> Self {
        Self::new()
    }
}

fn kem_alg(name: &str) -> Option<&'static kem::Algorithm<kem::AlgorithmId>> {
    Some(match name {
        "ML-KEM-512" => &kem::ML_KEM_512,
        "ML-KEM-768" => &kem::ML_KEM_768,
        "ML-KEM-1024" => &kem::ML_KEM_1024,
        _ => return None,
    })
}

fn dh_alg(name: &str) -> Option<&'static agreement::Algorithm> {
    Some(match name {
        "X25519" => &agreement::X25519,
        "P-256" => &agreement::ECDH_P256,
        _ => return None,
    })
}

fn hash_alg(name: &str) -> Option<&'static digest::Algorithm> {
    Some(match name {
        "SHA-256" => &digest::SHA256,
        "SHA-384" => &digest::SHA384,
        _ => return None,
    })
}

fn err(e: aws_lc_rs::error::Unspecified) -> anyhow::Error {
    anyhow!("aws-lc: {e}")
}

impl Backend for AwsLc {
    fn name(&self) -> &'static str {
        "awslc"
    }

    fn version(&self) -> String {
        format!(
            "aws-lc {} (aws-lc-rs 1.19, as rustls 0.23 and russh use it)",
            aws_lc_rs::awslc_version()
        )
    }

    fn build(&self) -> String {
        if cfg!(target_arch = "aarch64") {
            "aws-lc-sys 0.47, static; run-time dispatch on its own CPU capability vector from the kernel's HWCAPs (AArch64 NEON ML-KEM from mlkem-native, ARMv8 AES + PMULL AES-GCM, s2n-bignum X25519 and P-256, and the SHA3 instructions for Keccak where the CPU has them); aws-lc-rs does not report the path taken".into()
        } else {
            "aws-lc-sys 0.47, static; run-time dispatch on its own CPU capability vector (AVX2 ML-KEM from mlkem-native, AVX-512/VAES AES-GCM, BMI2/ADX X25519 from s2n-bignum where the CPU has them); aws-lc-rs does not report the path taken".into()
        }
    }

    fn native_name(&self, algorithm: &str) -> Option<&'static str> {
        Some(match algorithm {
            "ML-KEM-512" => "kem::ML_KEM_512",
            "ML-KEM-768" => "kem::ML_KEM_768",
            "ML-KEM-1024" => "kem::ML_KEM_1024",
            "X25519" => "agreement::X25519",
            "P-256" => "agreement::ECDH_P256",
            "ECDSA-P256" => "signature::ECDSA_P256_SHA256_ASN1",
            "Ed25519" => "signature::ED25519",
            "ML-DSA-44" => "signature::ML_DSA_44",
            "ML-DSA-65" => "signature::ML_DSA_65",
            "ML-DSA-87" => "signature::ML_DSA_87",
            "AES-256-GCM" => "aead::AES_256_GCM",
            "HKDF-SHA256" => "hkdf::HKDF_SHA256",
            "HKDF-SHA384" => "hkdf::HKDF_SHA384",
            "HMAC-SHA256" => "hmac::HMAC_SHA256",
            "HMAC-SHA384" => "hmac::HMAC_SHA384",
            "SHA-256" => "digest::SHA256",
            "SHA-384" => "digest::SHA384",
            _ => return None,
        })
    }

    fn includes(&self, op: Operation) -> &'static str {
        match op {
            Operation::KemEncaps => "parsing the encapsulation key (EncapsulationKey::new), then encapsulate, as rustls does per handshake",
            Operation::DhDerive => "agree: parsing the peer's share and the scalar multiplication (aws-lc-rs parses inside agree)",
            Operation::SigSign => "signing the message (ECDSA: SHA-256 of it inside), key already parsed",
            Operation::SigVerify => "UnparsedPublicKey::verify: parsing the public key and verifying, as webpki does per signature",
            Operation::AeadEncrypt | Operation::AeadDecrypt => "in-place seal/open with a LessSafeKey keyed beforehand",
            Operation::AeadKey => "UnboundKey::new + LessSafeKey: the AES key schedule and GHASH tables, as rustls does per traffic secret",
            Operation::KdfExtract => "Salt::extract, which aws-lc-rs only records; its work is in every expand",
            Operation::KdfExpand => "Prk::expand + fill of one hash-length block: aws-lc-rs runs extract and expand together here",
            Operation::MacCompute => "hmac::Key::new from the key bytes, then sign: as rustls's Finished does",
            Operation::HashBlock => "Context::update with one block",
            Operation::HashFinish => "cloning the running Context and finishing the clone (rustls's fork_finish)",
            _ => "one aws-lc-rs call on keys already in memory",
        }
    }

    fn kem(&self, algorithm: &str) -> Option<Box<dyn Kem>> {
        kem_alg(algorithm).map(|a| Box::new(AwsKem(a)) as Box<dyn Kem>)
    }

    fn dh(&self, algorithm: &str) -> Option<Box<dyn Dh>> {
        dh_alg(algorithm).map(|a| Box::new(AwsDh(a)) as Box<dyn Dh>)
    }

    fn sig(&self, algorithm: &str) -> Option<Box<dyn Sig>> {
        Some(match algorithm {
            "ECDSA-P256" => Box::new(Ecdsa),
            "Ed25519" => Box::new(Ed25519),
            "ML-DSA-44" => Box::new(MlDsa(&signature::ML_DSA_44_SIGNING, &signature::ML_DSA_44)),
            "ML-DSA-65" => Box::new(MlDsa(&signature::ML_DSA_65_SIGNING, &signature::ML_DSA_65)),
            "ML-DSA-87" => Box::new(MlDsa(&signature::ML_DSA_87_SIGNING, &signature::ML_DSA_87)),
            _ => return None,
        })
    }

    fn aead(&self, algorithm: &str) -> Option<Box<dyn Aead>> {
        (algorithm == "AES-256-GCM").then(|| Box::new(AesGcm) as Box<dyn Aead>)
    }

    fn kdf(&self, algorithm: &str) -> Option<Box<dyn Kdf>> {
        Some(Box::new(Hkdf(match algorithm {
            "HKDF-SHA256" => hkdf::HKDF_SHA256,
            "HKDF-SHA384" => hkdf::HKDF_SHA384,
            _ => return None,
        })))
    }

    fn mac(&self, algorithm: &str) -> Option<Box<dyn Mac>> {
        Some(Box::new(Hmac(match algorithm {
            "HMAC-SHA256" => hmac::HMAC_SHA256,
            "HMAC-SHA384" => hmac::HMAC_SHA384,
            _ => return None,
        })))
    }

    fn hash(&self, algorithm: &str) -> Option<Box<dyn Hash>> {
        hash_alg(algorithm).map(|a| Box::new(Sha(a)) as Box<dyn Hash>)
    }
}

struct AwsKem(&'static kem::Algorithm<kem::AlgorithmId>);

/// aws-lc-rs cannot give back the encapsulation key of a decapsulation key made from bytes, so the
/// pair travels together.
struct AwsDk {
    dk: kem::DecapsulationKey<kem::AlgorithmId>,
}

impl Kem for AwsKem {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let dk = kem::DecapsulationKey::generate(self.0).map_err(err)?;
        let ek = dk
            .encapsulation_key()
            .map_err(err)?
            .key_bytes()
            .map_err(err)?
            .as_ref()
            .to_vec();
        Ok((ek, Box::new(AwsDk { dk })))
    }

    fn encaps(&self, ek: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        let ek = kem::EncapsulationKey::new(self.0, ek)
            .map_err(|e| anyhow!("aws-lc: encapsulation key rejected: {e}"))?;
        let (ct, ss) = ek.encapsulate().map_err(err)?;
        Ok((ct.as_ref().to_vec(), ss.as_ref().to_vec()))
    }

    fn decaps(&self, dk: &Loaded, ct: &[u8]) -> Result<Vec<u8>> {
        let ss = loaded::<AwsDk>(dk)?
            .dk
            .decapsulate(kem::Ciphertext::from(ct))
            .map_err(err)?;
        Ok(ss.as_ref().to_vec())
    }
}

struct AwsDh(&'static agreement::Algorithm);

impl Dh for AwsDh {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let sk = agreement::PrivateKey::generate(self.0).map_err(err)?;
        let pk = sk.compute_public_key().map_err(err)?.as_ref().to_vec();
        Ok((pk, Box::new(sk)))
    }

    fn derive(&self, secret: &Loaded, peer: &[u8]) -> Result<Vec<u8>> {
        let sk = loaded::<agreement::PrivateKey>(secret)?;
        agreement::agree(
            sk,
            agreement::UnparsedPublicKey::new(self.0, peer),
            anyhow!("aws-lc: agreement failed"),
            |z| Ok(z.to_vec()),
        )
    }
}

struct Ecdsa;

impl Sig for Ecdsa {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let kp = signature::EcdsaKeyPair::generate(&signature::ECDSA_P256_SHA256_ASN1_SIGNING)
            .map_err(err)?;
        Ok((kp.public_key().as_ref().to_vec(), Box::new(kp)))
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        Ok(Box::new(pk.to_vec()))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        Ok(loaded::<signature::EcdsaKeyPair>(sk)?
            .sign(&rng, msg)
            .map_err(err)?
            .as_ref()
            .to_vec())
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        let pk = signature::UnparsedPublicKey::new(
            &signature::ECDSA_P256_SHA256_ASN1,
            loaded::<Vec<u8>>(pk)?.as_slice(),
        );
        Ok(pk.verify(msg, sig).is_ok())
    }
}

struct Ed25519;

impl Sig for Ed25519 {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let kp = signature::Ed25519KeyPair::generate().map_err(err)?;
        Ok((kp.public_key().as_ref().to_vec(), Box::new(kp)))
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        Ok(Box::new(pk.to_vec()))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        Ok(loaded::<signature::Ed25519KeyPair>(sk)?
            .sign(msg)
            .as_ref()
            .to_vec())
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        Ok(signature::UnparsedPublicKey::new(
            &signature::ED25519,
            loaded::<Vec<u8>>(pk)?.as_slice(),
        )
        .verify(msg, sig)
        .is_ok())
    }
}

struct MlDsa(
    &'static signature::PqdsaSigningAlgorithm,
    &'static signature::PqdsaVerificationAlgorithm,
);

impl Sig for MlDsa {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let kp = signature::PqdsaKeyPair::generate(self.0).map_err(err)?;
        Ok((kp.public_key().as_ref().to_vec(), Box::new(kp)))
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        Ok(Box::new(pk.to_vec()))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.0.signature_len()];
        let n = loaded::<signature::PqdsaKeyPair>(sk)?
            .sign(msg, &mut out)
            .map_err(err)?;
        out.truncate(n);
        Ok(out)
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        Ok(
            signature::UnparsedPublicKey::new(self.1, loaded::<Vec<u8>>(pk)?.as_slice())
                .verify(msg, sig)
                .is_ok(),
        )
    }
}

struct AesGcm;

impl Aead for AesGcm {
    fn load_key(&self, key: &[u8]) -> Result<Loaded> {
        let k = aead::UnboundKey::new(&aead::AES_256_GCM, key).map_err(err)?;
        Ok(Box::new(aead::LessSafeKey::new(k)))
    }

    fn seal(&self, key: &mut Loaded, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; 16]> {
        let nonce = aead::Nonce::try_assume_unique_for_key(nonce).map_err(err)?;
        let tag = loaded::<aead::LessSafeKey>(key)?
            .seal_in_place_separate_tag(nonce, aead::Aad::from(aad), buf)
            .map_err(err)?;
        tag.as_ref()
            .try_into()
            .map_err(|_| anyhow!("aws-lc: tag is not 16 bytes"))
    }

    fn open(&self, key: &mut Loaded, nonce: &[u8], aad: &[u8], record: &mut [u8]) -> Result<()> {
        let nonce = aead::Nonce::try_assume_unique_for_key(nonce).map_err(err)?;
        loaded::<aead::LessSafeKey>(key)?
            .open_in_place(nonce, aead::Aad::from(aad), record)
            .map_err(|_| anyhow!("AES-GCM tag mismatch"))?;
        Ok(())
    }
}

struct Hkdf(hkdf::Algorithm);

/// An output length for `Prk::expand`.
struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

impl Kdf for Hkdf {
    fn extract(&self, salt: &[u8], ikm: &[u8]) -> Result<Loaded> {
        Ok(Box::new(hkdf::Salt::new(self.0, salt).extract(ikm)))
    }

    fn expand(&self, prk: &Loaded, info: &[u8], len: usize) -> Result<Vec<u8>> {
        let info = [info];
        let okm = loaded::<hkdf::Prk>(prk)?
            .expand(&info, Len(len))
            .map_err(err)?;
        let mut out = vec![0u8; len];
        okm.fill(&mut out).map_err(err)?;
        Ok(out)
    }
}

struct Hmac(hmac::Algorithm);

impl Mac for Hmac {
    fn compute(&self, key: &[u8], msg: &[u8]) -> Result<Vec<u8>> {
        Ok(hmac::sign(&hmac::Key::new(self.0, key), msg)
            .as_ref()
            .to_vec())
    }
}

struct Sha(&'static digest::Algorithm);

impl Hash for Sha {
    fn start(&self) -> Result<Loaded> {
        Ok(Box::new(digest::Context::new(self.0)))
    }

    fn update(&self, ctx: &mut Loaded, data: &[u8]) -> Result<()> {
        loaded_mut::<digest::Context>(ctx)?.update(data);
        Ok(())
    }

    fn finish_copy(&self, ctx: &Loaded) -> Result<Vec<u8>> {
        Ok(loaded::<digest::Context>(ctx)?
            .clone()
            .finish()
            .as_ref()
            .to_vec())
    }
}
