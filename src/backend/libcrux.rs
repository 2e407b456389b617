//! libcrux-ml-kem 0.0.11: ML-KEM-512/768/1024 generated from a formally verified specification
//! (hax / F*), with a portable implementation and an AVX2 one chosen at run time
//! (libcrux_platform::simd256_support, the same check the library makes on every call).
//!
//! Its API takes the randomness explicitly (64 bytes for a key pair, 32 for an encapsulation): they
//! come from the same kind of user-space generator as every other backend's, inside the timed call.
//! It does not check an encapsulation key it is handed; FIPS 203 section 7.2 asks for the modulus
//! check on input, so the handshake form validates (validate_public_key) before encapsulating, as a
//! TLS server must, and the primitive form encapsulates to a key validated beforehand.

use super::{loaded, Backend, Kem, Loaded};
use crate::algorithm::Operation;
use anyhow::{anyhow, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cell::RefCell;

#[derive(Default)]
pub(crate) struct Libcrux;

thread_local! {
    static RNG: RefCell<StdRng> = RefCell::new(StdRng::try_from_rng(&mut getrandom::SysRng).expect("the operating system's random source"));
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    RNG.with(|r| r.borrow_mut().fill_bytes(&mut b));
    b
}

/// Restarts this thread's generator from a fixed seed (instruction counting).
pub(crate) fn seed(seed: u64) {
    RNG.with(|r| *r.borrow_mut() = StdRng::seed_from_u64(seed));
}

/// Which implementation the library runs on this CPU: its build script compiles the AVX2 code in
/// on every x86-64 build and the NEON code on every aarch64 one, and it checks the CPU at run time.
pub(crate) fn dispatch() -> &'static str {
    if libcrux_platform::simd256_support() {
        "AVX2"
    } else if libcrux_platform::simd128_support() {
        if cfg!(target_arch = "aarch64") {
            "NEON (128-bit SIMD)"
        } else {
            "128-bit SIMD"
        }
    } else {
        "portable"
    }
}

impl Backend for Libcrux {
    fn name(&self) -> &'static str {
        "libcrux"
    }

    fn version(&self) -> String {
        format!(
            "libcrux-ml-kem 0.0.11 (formally verified; {} on this CPU)",
            dispatch()
        )
    }

    fn build(&self) -> String {
        let simd = if cfg!(target_arch = "aarch64") {
            "NEON"
        } else {
            "AVX2"
        };
        format!("pure Rust, generated from a verified specification; run-time choice between portable and {simd} code: {} here", dispatch())
    }

    fn native_name(&self, algorithm: &str) -> Option<&'static str> {
        Some(match algorithm {
            "ML-KEM-512" => "libcrux_ml_kem::mlkem512",
            "ML-KEM-768" => "libcrux_ml_kem::mlkem768",
            "ML-KEM-1024" => "libcrux_ml_kem::mlkem1024",
            _ => return None,
        })
    }

    fn includes(&self, op: Operation) -> &'static str {
        match op {
            Operation::KemKeygen => "64 bytes from the generator, then generate_key_pair",
            Operation::KemEncaps => "copying the encapsulation key in, validate_public_key (FIPS 203 section 7.2), 32 bytes from the generator, encapsulate",
            _ => "decapsulate with the private key already in memory",
        }
    }

    fn setup(&self, algorithm: &str, op: Operation) -> Option<&'static str> {
        (algorithm.starts_with("ML-KEM") && op == Operation::KemEncaps)
            .then_some("validating the encapsulation key (validate_public_key)")
    }

    fn kem(&self, algorithm: &str) -> Option<Box<dyn Kem>> {
        Some(match algorithm {
            "ML-KEM-512" => Box::new(MlKem512),
            "ML-KEM-768" => Box::new(MlKem768),
            "ML-KEM-1024" => Box::new(MlKem1024),
            _ => return None,
        })
    }
}

macro_rules! libcrux_kem {
    ($name:ident, $module:ident, $pk:ident, $ct:ident, $kp:ident, $pk_len:literal, $ct_len:literal, $label:literal) => {
        struct $name;

        impl $name {
            fn parse(ek: &[u8]) -> Result<libcrux_ml_kem::$module::$pk> {
                let bytes: [u8; $pk_len] = ek.try_into().map_err(|_| {
                    anyhow!(concat!(
                        $label,
                        " encapsulation key must be ",
                        $pk_len,
                        " bytes"
                    ))
                })?;
                Ok(libcrux_ml_kem::$module::$pk::from(bytes))
            }
        }

        impl Kem for $name {
            fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
                let kp = libcrux_ml_kem::$module::generate_key_pair(random::<64>());
                Ok((kp.pk().to_vec(), Box::new(kp)))
            }

            fn encaps(&self, ek: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
                let pk = Self::parse(ek)?;
                if !libcrux_ml_kem::$module::validate_public_key(&pk) {
                    return Err(anyhow!(concat!("invalid ", $label, " encapsulation key")));
                }
                let (ct, ss) = libcrux_ml_kem::$module::encapsulate(&pk, random::<32>());
                Ok((ct.as_slice().to_vec(), ss.as_ref().to_vec()))
            }

            fn import_ek(&self, ek: &[u8]) -> Option<Result<Loaded>> {
                Some(Self::parse(ek).and_then(|pk| {
                    if libcrux_ml_kem::$module::validate_public_key(&pk) {
                        Ok(Box::new(pk) as Loaded)
                    } else {
                        Err(anyhow!(concat!("invalid ", $label, " encapsulation key")))
                    }
                }))
            }

            fn encaps_imported(&self, ek: &mut Loaded) -> Result<(Vec<u8>, Vec<u8>)> {
                let pk = loaded::<libcrux_ml_kem::$module::$pk>(ek)?;
                let (ct, ss) = libcrux_ml_kem::$module::encapsulate(pk, random::<32>());
                Ok((ct.as_slice().to_vec(), ss.as_ref().to_vec()))
            }

            fn decaps(&self, dk: &Loaded, ct: &[u8]) -> Result<Vec<u8>> {
                let bytes: [u8; $ct_len] = ct.try_into().map_err(|_| {
                    anyhow!(concat!($label, " ciphertext must be ", $ct_len, " bytes"))
                })?;
                let ct = libcrux_ml_kem::$module::$ct::from(bytes);
                let kp = loaded::<libcrux_ml_kem::$module::$kp>(dk)?;
                Ok(libcrux_ml_kem::$module::decapsulate(kp.private_key(), &ct)
                    .as_ref()
                    .to_vec())
            }
        }
    };
}

libcrux_kem!(
    MlKem512,
    mlkem512,
    MlKem512PublicKey,
    MlKem512Ciphertext,
    MlKem512KeyPair,
    800,
    768,
    "ML-KEM-512"
);
libcrux_kem!(
    MlKem768,
    mlkem768,
    MlKem768PublicKey,
    MlKem768Ciphertext,
    MlKem768KeyPair,
    1184,
    1088,
    "ML-KEM-768"
);
libcrux_kem!(
    MlKem1024,
    mlkem1024,
    MlKem1024PublicKey,
    MlKem1024Ciphertext,
    MlKem1024KeyPair,
    1568,
    1568,
    "ML-KEM-1024"
);
