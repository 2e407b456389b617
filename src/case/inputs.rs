//! The inputs a case makes before the clock starts: random or seeded bytes, the CertificateVerify
//! message with a new transcript hash, pool sizes, and the length checks against the specification.

use anyhow::{anyhow, bail, Result};

/// Inputs that rotate through a small pool, so a phase does not work on one value only.
pub(crate) const POOL: usize = 16;

/// RFC 8446 section 4.4.3: 64 spaces, the context string, a zero byte, then the transcript hash.
pub(crate) const CV_CONTEXT: &[u8] = b"TLS 1.3, server CertificateVerify";
pub const CV_MESSAGE_LEN: usize = 64 + 33 + 1 + 32;
/// liboqs's speed_sig signs and verifies one message of this many bytes (liboqs:tests/speed_sig.c,
/// `message_len = 50`): the primitive form of a signature phase uses the same.
pub const SPEED_SIG_MESSAGE_LEN: usize = 50;

pub fn certificate_verify_message() -> Result<Vec<u8>> {
    let mut m = vec![0x20u8; 64];
    m.extend_from_slice(CV_CONTEXT);
    m.push(0);
    m.extend_from_slice(&[0u8; 32]);
    fresh_hash(&mut m)?;
    Ok(m)
}

thread_local! {
    /// Where the cases' inputs come from: the operating system, or a fixed seed (`seed_inputs`).
    static INPUTS: std::cell::RefCell<Option<rand::rngs::StdRng>> = const { std::cell::RefCell::new(None) };
}

/// From now on, this thread's case inputs (messages, transcript hashes, keys) come from `seed`, so
/// a counting child sees the same inputs every time and its instruction counts repeat.
pub fn seed_inputs(seed: u64) {
    use rand::SeedableRng;
    INPUTS.with(|r| *r.borrow_mut() = Some(rand::rngs::StdRng::seed_from_u64(seed)));
}

pub(crate) fn inputs_seeded() -> bool {
    INPUTS.with(|r| r.borrow().is_some())
}

pub(crate) fn fill(buf: &mut [u8]) -> Result<()> {
    INPUTS.with(|r| match r.borrow_mut().as_mut() {
        Some(rng) => {
            rand::Rng::fill_bytes(rng, buf);
            Ok(())
        }
        None => getrandom::fill(buf).map_err(|e| anyhow!("getrandom: {e}")),
    })
}

/// A new transcript hash in the message's last 32 bytes.
pub(crate) fn fresh_hash(m: &mut [u8]) -> Result<()> {
    let n = m.len();
    fill(&mut m[n - 32..])
}

pub(crate) fn random(n: usize) -> Result<Vec<u8>> {
    let mut v = vec![0u8; n];
    fill(&mut v)?;
    Ok(v)
}

pub(crate) fn expect_len(what: &str, got: usize, want: Option<usize>) -> Result<()> {
    match want {
        Some(w) if w != got => bail!("{what} is {got} bytes, the specification says {w}"),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_verify_message_is_130_bytes_per_rfc_8446() {
        let m = certificate_verify_message().unwrap();
        assert_eq!(m.len(), CV_MESSAGE_LEN);
        assert_eq!(m.len(), 130);
        assert!(m[..64].iter().all(|&b| b == 0x20));
        assert_eq!(&m[64..97], CV_CONTEXT);
        assert_eq!(m[97], 0);
    }
}
