//! liboqs through the `oqs` crate (liboqs 0.13.0, built with OQS_DIST_BUILD: CPU features are
//! detected at run time). Post-quantum only.
//!
//! Names: liboqs 0.13 has no algorithm called SLH-DSA. Its SPHINCS+-SHAKE-128s/f-simple
//! (round-3.1 SPHINCS+) is the scheme FIPS 205 standardised with small changes to hashing and
//! addressing, so it has SLH-DSA's sizes and cost profile but not its exact outputs: its signatures
//! do not verify under FIPS 205 (the interop test proves which way it goes). We map the names
//! explicitly and the site labels these rows as SPHINCS+.

use super::{loaded, Backend, Kem, Loaded, Sig};
use crate::algorithm::Operation;
use anyhow::{anyhow, Result};
use oqs::{kem, sig};

pub(crate) struct Liboqs;

impl Liboqs {
    pub(crate) fn new() -> Self {
        oqs::init();
        Liboqs
    }
}

impl Default for Liboqs {
    fn default() -> Self {
        Self::new()
    }
}

fn kem_alg(name: &str) -> Option<kem::Algorithm> {
    match name {
        "ML-KEM-512" => Some(kem::Algorithm::MlKem512),
        "ML-KEM-768" => Some(kem::Algorithm::MlKem768),
        "ML-KEM-1024" => Some(kem::Algorithm::MlKem1024),
        _ => None,
    }
}

fn sig_alg(name: &str) -> Option<sig::Algorithm> {
    Some(match name {
        "ML-DSA-44" => sig::Algorithm::MlDsa44,
        "ML-DSA-65" => sig::Algorithm::MlDsa65,
        "ML-DSA-87" => sig::Algorithm::MlDsa87,
        "Falcon-512" => sig::Algorithm::Falcon512,
        "Falcon-1024" => sig::Algorithm::Falcon1024,
        "SLH-DSA-SHAKE-128s" => sig::Algorithm::SphincsShake128sSimple,
        "SLH-DSA-SHAKE-128f" => sig::Algorithm::SphincsShake128fSimple,
        _ => return None,
    })
}

impl Backend for Liboqs {
    fn name(&self) -> &'static str {
        "liboqs"
    }

    fn version(&self) -> String {
        format!("liboqs {}", liboqs_version())
    }

    fn build(&self) -> String {
        dispatch()
    }

    fn native_name(&self, algorithm: &str) -> Option<&'static str> {
        if let Some(a) = kem_alg(algorithm) {
            return Some(a.name());
        }
        sig_alg(algorithm).map(|a| a.name())
    }

    fn includes(&self, op: Operation) -> &'static str {
        match op {
            Operation::KemEncaps => {
                "OQS_KEM_encaps on the encapsulation key bytes, output buffers allocated"
            }
            Operation::SigVerify => "OQS_SIG_verify on the public key bytes",
            _ => "one liboqs call on raw key bytes, output buffers allocated",
        }
    }

    fn kem(&self, algorithm: &str) -> Option<Box<dyn Kem>> {
        let k = kem::Kem::new(kem_alg(algorithm)?).ok()?;
        Some(Box::new(OqsKem(k)))
    }

    fn sig(&self, algorithm: &str) -> Option<Box<dyn Sig>> {
        let s = sig::Sig::new(sig_alg(algorithm)?).ok()?;
        Some(Box::new(OqsSig(s)))
    }
}

/// liboqs's build and the code path it chooses on this CPU (OQS_CPU_has_extension, which reads the
/// CPU-feature cache OQS_init fills): what a dispatching build runs depends on it.
#[cfg(target_arch = "x86_64")]
fn dispatch() -> String {
    use oqs::ffi::common::{OQS_CPU_has_extension, OQS_CPU_EXT};
    // SAFETY: a query of liboqs's CPU-feature cache, filled by OQS_init.
    let has = |e: OQS_CPU_EXT| unsafe { OQS_CPU_has_extension(e) } == 1;
    let path = if has(OQS_CPU_EXT::OQS_CPU_EXT_AVX2) {
        "AVX2"
    } else {
        "portable C"
    };
    format!(
        "OQS_DIST_BUILD (every CPU path compiled in, chosen at run time); liboqs reports AVX2 {}, AVX-512 {}: ML-KEM (mlkem-native) and ML-DSA run their {path} code",
        yes(has(OQS_CPU_EXT::OQS_CPU_EXT_AVX2)),
        yes(has(OQS_CPU_EXT::OQS_CPU_EXT_AVX512))
    )
}

/// On aarch64 a dist build (OQS_DIST_ARM64_V8_BUILD) compiles mlkem-native's AArch64 backend in
/// and takes it where liboqs sees NEON; liboqs 0.13 has no aarch64 ML-DSA, and its Keccak is the
/// portable C one (the SHA-3 instructions are used only in a build for one CPU,
/// OQS_USE_ARM_SHA3_INSTRUCTIONS); SHA-2 and AES go through OpenSSL (OQS_USE_SHA2_OPENSSL).
#[cfg(target_arch = "aarch64")]
fn dispatch() -> String {
    use oqs::ffi::common::{OQS_CPU_has_extension, OQS_CPU_EXT};
    // SAFETY: a query of liboqs's CPU-feature cache, filled by OQS_init.
    let has = |e: OQS_CPU_EXT| unsafe { OQS_CPU_has_extension(e) } == 1;
    let neon = has(OQS_CPU_EXT::OQS_CPU_EXT_ARM_NEON);
    format!(
        "OQS_DIST_BUILD for ARM64 v8 (every CPU path compiled in, chosen at run time); liboqs reports NEON {}, AES {}, SHA-2 {}, SHA3 {}: ML-KEM (mlkem-native) runs its {} code, ML-DSA its portable C, Keccak liboqs's portable C",
        yes(neon),
        yes(has(OQS_CPU_EXT::OQS_CPU_EXT_ARM_AES)),
        yes(has(OQS_CPU_EXT::OQS_CPU_EXT_ARM_SHA2)),
        yes(has(OQS_CPU_EXT::OQS_CPU_EXT_ARM_SHA3)),
        if neon { "AArch64 NEON" } else { "portable C" }
    )
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn dispatch() -> String {
    "OQS_DIST_BUILD; the code path liboqs takes is not reported on this architecture".into()
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The version string liboqs reports about itself.
pub(crate) fn liboqs_version() -> String {
    // SAFETY: OQS_version returns a pointer to a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(oqs::ffi::common::OQS_version()) }
        .to_string_lossy()
        .into_owned()
}

struct OqsKem(kem::Kem);

impl Kem for OqsKem {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let (pk, sk) = self.0.keypair()?;
        Ok((pk.into_vec(), Box::new(sk)))
    }

    fn encaps(&self, ek: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        let pk = self
            .0
            .public_key_from_bytes(ek)
            .ok_or_else(|| anyhow!("encapsulation key has the wrong length"))?;
        let (ct, ss) = self.0.encapsulate(pk)?;
        Ok((ct.into_vec(), ss.into_vec()))
    }

    fn decaps(&self, dk: &Loaded, ct: &[u8]) -> Result<Vec<u8>> {
        let sk = loaded::<kem::SecretKey>(dk)?;
        let ct = self
            .0
            .ciphertext_from_bytes(ct)
            .ok_or_else(|| anyhow!("ciphertext has the wrong length"))?;
        Ok(self.0.decapsulate(sk, ct)?.into_vec())
    }
}

struct OqsSig(sig::Sig);

impl Sig for OqsSig {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        let (pk, sk) = self.0.keypair()?;
        Ok((pk.into_vec(), Box::new(sk)))
    }

    fn load_public(&self, pk: &[u8]) -> Result<Loaded> {
        self.0
            .public_key_from_bytes(pk)
            .ok_or_else(|| anyhow!("public key has the wrong length"))?;
        Ok(Box::new(pk.to_vec()))
    }

    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>> {
        Ok(self.0.sign(msg, loaded::<sig::SecretKey>(sk)?)?.into_vec())
    }

    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool> {
        let pk = self
            .0
            .public_key_from_bytes(loaded::<Vec<u8>>(pk)?)
            .ok_or_else(|| anyhow!("public key has the wrong length"))?;
        let Some(sig) = self.0.signature_from_bytes(sig) else {
            return Ok(false);
        };
        Ok(self.0.verify(msg, sig, pk).is_ok())
    }
}

/// A fixed stream of random bytes for liboqs (instruction counting only): the same inputs every
/// run, so the same count.
static SEEDED: std::sync::Mutex<Option<rand::rngs::StdRng>> = std::sync::Mutex::new(None);

unsafe extern "C" fn seeded_randombytes(out: *mut u8, n: usize) {
    use rand::Rng;
    if let Ok(mut g) = SEEDED.lock() {
        if let Some(rng) = g.as_mut() {
            // SAFETY: liboqs passes a buffer of `n` writable bytes.
            rng.fill_bytes(unsafe { std::slice::from_raw_parts_mut(out, n) });
        }
    }
}

/// Makes liboqs draw from a generator seeded with `seed`.
pub(crate) fn seed(seed: u64) {
    use rand::SeedableRng;
    if let Ok(mut g) = SEEDED.lock() {
        *g = Some(rand::rngs::StdRng::seed_from_u64(seed));
    }
    // SAFETY: the callback has the signature liboqs expects and stays valid for the process.
    unsafe { oqs::ffi::rand::OQS_randombytes_custom_algorithm(Some(seeded_randombytes)) };
}
