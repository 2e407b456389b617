//! The calibration reference workload, timed in every round beside the phases.

use super::Kernel;
use anyhow::{ensure, Result};
use std::hint::black_box;

/// The calibration reference: SHA-256 (RustCrypto's sha2) of a fixed 4,096-byte buffer. It does not
/// depend on any backend under test, and its time moves with the machine, not with the code.
pub struct Reference {
    buf: Vec<u8>,
    expected: Vec<u8>,
}

impl Reference {
    pub(crate) const DESCRIPTION: &'static str =
        "SHA-256 (RustCrypto sha2) of a fixed 4,096-byte buffer";

    pub(crate) fn new() -> Reference {
        use sha2::Digest;
        let buf: Vec<u8> = (0..4096u32)
            .map(|i| ((i * 2_654_435_761u32) >> 24) as u8)
            .collect();
        let expected = sha2::Sha256::digest(&buf).to_vec();
        Reference { buf, expected }
    }
}

impl Default for Reference {
    fn default() -> Self {
        Self::new()
    }
}

impl Kernel for Reference {
    type In = ();
    type Out = Vec<u8>;
    fn input(&mut self, _: usize, _: Option<()>) -> Result<()> {
        Ok(())
    }
    fn call(&mut self, _: &mut ()) -> Vec<u8> {
        use sha2::Digest;
        sha2::Sha256::digest(black_box(&self.buf)).to_vec()
    }
    fn check(&mut self, _: &(), out: Vec<u8>) -> Result<()> {
        ensure!(out == self.expected, "the reference digest changed");
        Ok(())
    }
}

/// The calibration reference on the tests' virtual clock (`crate::virtual_clock`): a known time per
/// call at the process's speed, as a real host's reference moves with its phases.
pub struct VirtualReference;

impl VirtualReference {
    /// Its time per call at the base speed, nanoseconds.
    pub(crate) const NS: u64 = 5_000;
}

impl Kernel for VirtualReference {
    type In = ();
    type Out = ();
    fn input(&mut self, _: usize, _: Option<()>) -> Result<()> {
        Ok(())
    }
    fn call(&mut self, _: &mut ()) {
        crate::virtual_clock::advance(crate::backend::fixed::in_this_process(Self::NS));
    }
    fn check(&mut self, _: &(), _: ()) -> Result<()> {
        Ok(())
    }
}
