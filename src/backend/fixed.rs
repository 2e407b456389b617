//! A deterministic backend for the tests (#36), in the spirit of hyperfine's `MockExecutor`: its
//! calls take known times on the virtual clock (`crate::virtual_clock`), so a run through it is
//! exact and its figures can be worked out by hand. It is registered only behind a hidden switch,
//! `PQPROF_TEST_BACKEND=fixed`, which also makes it the only backend and the clock virtual: no real
//! library is timed on that clock.
//!
//! Its "cryptography" is a toy that keeps the cases' checks honest, not a cipher: a DH share is its
//! secret, and the shared secret their XOR (the same from both sides); a KEM's encapsulation key
//! carries the decapsulation key, its ciphertext a random value, and the shared secret their XOR.
//! Every output has the algorithm's sizes (core/src/algorithms.toml), so the cases' length checks
//! hold.
//!
//! Process `i` of a run (`PQPROF_PROCESS`, which `run --samples` sets for each child) runs every
//! call `PROCESS_FACTORS[i mod 3]` times as long: a host whose speed moves between processes by
//! a known common mode, which the drift split must then take out exactly.

use super::{loaded, Backend, Dh, Kem, Loaded};
use crate::algorithm::{self, Operation};
use anyhow::{ensure, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether the hidden switch is on (the clock turns virtual with it).
pub(crate) fn enabled() -> bool {
    crate::virtual_clock::on()
}

/// Each operation's time per call on the virtual clock, nanoseconds, before the process factor.
pub const CALL_NS: &[(Operation, u64)] = &[
    (Operation::DhKeygen, 10_000),
    (Operation::DhDerive, 20_000),
    (Operation::KemKeygen, 30_000),
    (Operation::KemEncaps, 40_000),
    (Operation::KemDecaps, 50_000),
];

/// Process `i`'s speed, per mille of the base times: 1.00, 1.02, 0.98, and again.
pub const PROCESS_FACTORS: [u64; 3] = [1000, 1020, 980];

/// This process's index in its run (0 outside `run --samples`).
fn process() -> usize {
    std::env::var("PQPROF_PROCESS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// `base_ns` at this process's speed.
pub(crate) fn in_this_process(base_ns: u64) -> u64 {
    base_ns * PROCESS_FACTORS[process() % PROCESS_FACTORS.len()] / 1000
}

/// Advances the virtual clock by one call of `op` in this process.
fn spend(op: Operation) {
    let base = CALL_NS
        .iter()
        .find(|(o, _)| *o == op)
        .map_or(0, |(_, ns)| *ns);
    crate::virtual_clock::advance(in_this_process(base));
}

/// A counter's bytes: distinct values for every draw, the same in every run.
fn draw(len: usize) -> Vec<u8> {
    static NEXT: AtomicU64 = AtomicU64::new(0x9e37_79b9_7f4a_7c15);
    (0..len.div_ceil(8))
        .flat_map(|_| {
            let mut z = NEXT.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)).to_le_bytes()
        })
        .take(len)
        .collect()
}

fn xor(a: &[u8], b: &[u8], len: usize) -> Vec<u8> {
    a.iter().zip(b).take(len).map(|(x, y)| x ^ y).collect()
}

#[derive(Default)]
pub struct Fixed;

impl Backend for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn version(&self) -> String {
        "the deterministic test backend (known times on a virtual clock)".into()
    }
    fn native_name(&self, algorithm: &str) -> Option<&'static str> {
        ["X25519", "P-256", "ML-KEM-768"]
            .into_iter()
            .find(|a| *a == algorithm)
    }
    fn includes(&self, _op: Operation) -> &'static str {
        "a known time on the virtual clock, and a toy computation that keeps the checks honest"
    }
    fn kem(&self, algorithm: &str) -> Option<Box<dyn Kem>> {
        let a = algorithm::find(algorithm).filter(|a| a.name == "ML-KEM-768")?;
        Some(Box::new(ToyKem {
            ek: a.public_key?,
            ct: a.ciphertext?,
            ss: a.shared_secret?,
        }))
    }
    fn dh(&self, algorithm: &str) -> Option<Box<dyn Dh>> {
        let a = algorithm::find(algorithm).filter(|a| ["X25519", "P-256"].contains(&&*a.name))?;
        Some(Box::new(ToyDh {
            share: a.public_key?,
            ss: a.shared_secret?,
        }))
    }
}

struct ToyKem {
    ek: usize,
    ct: usize,
    ss: usize,
}

impl Kem for ToyKem {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        spend(Operation::KemKeygen);
        let dk = draw(self.ss);
        let mut ek = dk.clone();
        ek.resize(self.ek, 0);
        Ok((ek, Box::new(dk)))
    }
    fn encaps(&self, ek: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        spend(Operation::KemEncaps);
        ensure!(
            ek.len() == self.ek,
            "an encapsulation key of {} bytes",
            ek.len()
        );
        let r = draw(self.ss);
        let ss = xor(&r, ek, self.ss);
        let mut ct = r;
        ct.resize(self.ct, 0);
        Ok((ct, ss))
    }
    fn decaps(&self, dk: &Loaded, ct: &[u8]) -> Result<Vec<u8>> {
        spend(Operation::KemDecaps);
        ensure!(ct.len() == self.ct, "a ciphertext of {} bytes", ct.len());
        Ok(xor(ct, loaded::<Vec<u8>>(dk)?, self.ss))
    }
}

struct ToyDh {
    share: usize,
    ss: usize,
}

impl Dh for ToyDh {
    fn keygen(&self) -> Result<(Vec<u8>, Loaded)> {
        spend(Operation::DhKeygen);
        let secret = draw(self.share);
        Ok((secret.clone(), Box::new(secret)))
    }
    fn derive(&self, secret: &Loaded, peer: &[u8]) -> Result<Vec<u8>> {
        spend(Operation::DhDerive);
        ensure!(peer.len() == self.share, "a share of {} bytes", peer.len());
        Ok(xor(loaded::<Vec<u8>>(secret)?, peer, self.ss))
    }
}
