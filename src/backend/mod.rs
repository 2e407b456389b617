//! Backends: one file each, behind seven small byte-level traits (Kem, Dh, Sig, Kdf, Mac, Hash, Aead)
//! and one `Backend` trait that hands them out, registered in one list (`all`).
//!
//! A backend hands out a primitive per algorithm. Keys that stay with their owner (a KEM's
//! decapsulation key, a DH or signing secret, an AEAD key, a verifier's public key) are loaded once,
//! outside any timed region, into an opaque [`Loaded`] value; what crosses the wire is bytes. This
//! is what fixes what each phase includes (see `src/case/`, a file per kind of primitive, and the
//! methodology page).

mod evp;
pub mod fixed;

use crate::algorithm::{Kind, Operation};
use anyhow::Result;
use std::any::Any;

/// A backend's own in-memory form of a key; only the backend that made it can use it.
pub(crate) type Loaded = Box<dyn Any + Send>;

/// The primitive form of an operation is not separate from its handshake form in this backend.
fn no_primitive<T>() -> Result<T> {
    anyhow::bail!("this backend has no primitive form of the operation")
}

pub trait Kem: Send {
    /// -> (encapsulation key bytes, decapsulation key).
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)>;
    /// Imports the peer's encapsulation key and encapsulates -> (ciphertext, shared secret).
    fn encaps(&self, ek: &[u8]) -> Result<(Vec<u8>, Vec<u8>)>;
    fn decaps(&self, dk: &Loaded, ct: &[u8]) -> Result<Vec<u8>>;

    // The primitive forms, as speed tools time them (see `Backend::setup`); a backend whose calls
    // have no separate setup keeps these defaults.

    /// Per-call state for keygen (a context) made once; `None` if there is none.
    fn keygen_state(&self) -> Option<Result<Loaded>> {
        None
    }
    fn keygen_with(&self, _state: &mut Loaded) -> Result<Loaded> {
        no_primitive()
    }
    /// The encapsulation key of a key made by `keygen_with` (untimed, for verification).
    fn export_ek(&self, _dk: &Loaded) -> Result<Vec<u8>> {
        no_primitive()
    }
    /// The peer's encapsulation key imported (and any context made) once.
    fn import_ek(&self, _ek: &[u8]) -> Option<Result<Loaded>> {
        None
    }
    fn encaps_imported(&self, _ek: &mut Loaded) -> Result<(Vec<u8>, Vec<u8>)> {
        no_primitive()
    }
    /// Per-key decapsulation state (a context) made once.
    fn decaps_state(&self, _dk: &Loaded) -> Option<Result<Loaded>> {
        None
    }
    fn decaps_with(&self, _state: &mut Loaded, _ct: &[u8]) -> Result<Vec<u8>> {
        no_primitive()
    }
}

pub trait Dh: Send {
    /// -> (public share bytes, secret).
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)>;
    /// Imports the peer's share and derives the raw shared secret.
    fn derive(&self, secret: &Loaded, peer: &[u8]) -> Result<Vec<u8>>;
    /// Primitive form: the peer's share imported (and a derive context made) once.
    fn import_peer(&self, _secret: &Loaded, _peer: &[u8]) -> Option<Result<Loaded>> {
        None
    }
    fn derive_imported(&self, _secret: &Loaded, _peer: &mut Loaded) -> Result<Vec<u8>> {
        no_primitive()
    }
}

pub trait Sig: Send {
    /// -> (public key bytes, signing key).
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)>;
    /// Imports a public key for verification (untimed: a verifier parses a certificate once).
    fn load_public(&self, pk: &[u8]) -> Result<Loaded>;
    fn sign(&self, sk: &Loaded, msg: &[u8]) -> Result<Vec<u8>>;
    fn verify(&self, pk: &Loaded, msg: &[u8], sig: &[u8]) -> Result<bool>;
}

/// HKDF (RFC 5869).
pub trait Kdf: Send {
    /// HKDF-Extract(salt, ikm) -> the pseudorandom key, in the backend's own form.
    fn extract(&self, salt: &[u8], ikm: &[u8]) -> Result<Loaded>;
    /// HKDF-Expand(prk, info, len).
    fn expand(&self, prk: &Loaded, info: &[u8], len: usize) -> Result<Vec<u8>>;
}

/// HMAC (RFC 2104), keyed per call as TLS 1.3's Finished is (RFC 8446 section 4.4.4).
pub trait Mac: Send {
    fn compute(&self, key: &[u8], msg: &[u8]) -> Result<Vec<u8>>;
}

/// A running hash, as a TLS transcript is kept.
pub trait Hash: Send {
    fn start(&self) -> Result<Loaded>;
    fn update(&self, ctx: &mut Loaded, data: &[u8]) -> Result<()>;
    /// The digest of a copy, leaving the running context as it was (rustls' `fork_finish`).
    fn finish_copy(&self, ctx: &Loaded) -> Result<Vec<u8>>;
}

pub trait Aead: Send {
    fn load_key(&self, key: &[u8]) -> Result<Loaded>;
    /// Encrypts `buf` in place -> tag.
    fn seal(&self, key: &mut Loaded, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; 16]>;
    /// Decrypts a record in place as it arrives, ciphertext then the 16-byte tag; the plaintext is
    /// left in the record's first bytes. An error if the tag does not match.
    fn open(&self, key: &mut Loaded, nonce: &[u8], aad: &[u8], record: &mut [u8]) -> Result<()>;
}

pub trait Backend: Send + Sync {
    fn name(&self) -> &'static str;
    /// The library and version behind this backend, as the binary reports it.
    fn version(&self) -> String;
    /// How it was built and which code path it takes on this CPU, as far as the library tells.
    fn build(&self) -> String {
        String::new()
    }
    /// The backend's own name for an algorithm, where it supports it.
    fn native_name(&self, algorithm: &str) -> Option<&'static str>;
    /// What a timed call of `op` includes beyond the arithmetic, for the methodology page.
    fn includes(&self, op: Operation) -> &'static str;
    /// Where the handshake form of `op` does setup the primitive form does once (key import,
    /// context): that setup in words. `None`: the two forms are the same call here.
    fn setup(&self, _algorithm: &str, _op: Operation) -> Option<&'static str> {
        None
    }
    fn kem(&self, _algorithm: &str) -> Option<Box<dyn Kem>> {
        None
    }
    fn dh(&self, _algorithm: &str) -> Option<Box<dyn Dh>> {
        None
    }
    fn sig(&self, _algorithm: &str) -> Option<Box<dyn Sig>> {
        None
    }
    fn aead(&self, _algorithm: &str) -> Option<Box<dyn Aead>> {
        None
    }
    fn kdf(&self, _algorithm: &str) -> Option<Box<dyn Kdf>> {
        None
    }
    fn mac(&self, _algorithm: &str) -> Option<Box<dyn Mac>> {
        None
    }
    fn hash(&self, _algorithm: &str) -> Option<Box<dyn Hash>> {
        None
    }

    fn supports(&self, algorithm: &str, op: Operation) -> bool {
        match op.kind() {
            Kind::Kem => self.kem(algorithm).is_some(),
            Kind::Dh => self.dh(algorithm).is_some(),
            Kind::Sig => self.sig(algorithm).is_some(),
            Kind::Aead => self.aead(algorithm).is_some(),
            Kind::Kdf => self.kdf(algorithm).is_some(),
            Kind::Mac => self.mac(algorithm).is_some(),
            Kind::Hash => self.hash(algorithm).is_some(),
        }
    }
}

/// The registry: each backend's module and type, in the order the site shows them. A new backend
/// is its file and one entry here; `all`, `names` and the CLI's `--backend` values follow.
macro_rules! registry {
    ($($module:ident :: $backend:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every backend, in the registry's order; behind the tests' hidden switch
        /// (`PQPROF_TEST_BACKEND=fixed`) the deterministic one alone.
        pub fn all() -> Vec<Box<dyn Backend>> {
            if fixed::enabled() {
                return vec![Box::new(fixed::Fixed)];
            }
            vec![$(Box::new($module::$backend::default())),*]
        }
    };
}

registry!(
    liboqs::Liboqs,
    rustcrypto::RustCrypto,
    openssl::OpenSsl,
    awslc::AwsLc,
    libcrux::Libcrux,
);

/// The backends' names, in `all`'s order (what suite files may name in `backends`).
pub fn names() -> Vec<&'static str> {
    all().iter().map(|b| b.name()).collect()
}

/// What `run --backend` takes: every backend, and the Go peer, which measures its own phases.
pub(crate) fn cli_names() -> Vec<&'static str> {
    let mut v = names();
    v.push(crate::results::GoPeer::STACK);
    v
}

/// Seeds the generators that can be seeded (RustCrypto's, liboqs's), for instruction counting.
/// OpenSSL's and aws-lc's DRBGs cannot be, and keep drawing from the operating system's seed.
pub(crate) fn deterministic_randomness(seed: u64) {
    rustcrypto::seed(seed);
    liboqs::seed(seed);
    libcrux::seed(seed);
}

/// A received record split into its ciphertext and its 16-byte tag.
pub(crate) fn split_tag(record: &mut [u8]) -> Result<(&mut [u8], &mut [u8; 16])> {
    let n = record
        .len()
        .checked_sub(16)
        .ok_or_else(|| anyhow::anyhow!("a record shorter than its tag"))?;
    let (ct, tag) = record.split_at_mut(n);
    Ok((ct, tag.try_into().map_err(|_| anyhow::anyhow!("tag"))?))
}

/// Downcasts a [`Loaded`] key to the type its backend stored; a mismatch means a key was handed to
/// the wrong backend, which is a bug in the caller, reported as an error rather than a panic.
pub(crate) fn loaded<T: 'static>(key: &Loaded) -> Result<&T> {
    key.downcast_ref::<T>()
        .ok_or_else(|| anyhow::anyhow!("key belongs to another backend"))
}

pub(crate) fn loaded_mut<T: 'static>(key: &mut Loaded) -> Result<&mut T> {
    key.downcast_mut::<T>()
        .ok_or_else(|| anyhow::anyhow!("key belongs to another backend"))
}
