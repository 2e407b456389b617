//! Signature kernels: keygen, signing a CertificateVerify message with a new transcript hash every
//! call, and verification; the primitive form signs speed_sig's fixed 50-byte message.

use super::inputs::*;
use super::Kernel;
use crate::algorithm::{Algorithm, Operation};
use crate::backend::{Loaded, Sig};
use anyhow::{anyhow, bail, ensure, Context, Result};
use std::hint::black_box;

pub(super) struct SigCase {
    sig: Box<dyn Sig>,
    alg: &'static Algorithm,
    op: Operation,
    sk: Loaded,
    pk: Loaded,
    /// Primitive form (speed_sig's way): one fixed message signed and verified again and again.
    fixed: Option<Vec<u8>>,
    /// (message, signature) pairs for verification.
    pool: Vec<(Vec<u8>, Vec<u8>)>,
    /// Whether a signature with a flipped bit has been seen to fail (set up for verification;
    /// on the first output checked for keygen and signing).
    flip_checked: std::cell::Cell<bool>,
}

/// A flipped bit must fail, or "verifies" means nothing.
fn ensure_flip_fails(sig: &dyn Sig, pk: &Loaded, msg: &[u8], good: &[u8]) -> Result<()> {
    let mut bad = good.to_vec();
    bad[0] ^= 1;
    ensure!(
        !sig.verify(pk, msg, &bad)?,
        "a signature with a flipped bit verifies"
    );
    Ok(())
}

impl SigCase {
    pub(super) fn new(
        sig: Box<dyn Sig>,
        alg: &'static Algorithm,
        op: Operation,
        primitive: bool,
        few: bool,
    ) -> Result<Self> {
        let (pk_bytes, sk) = sig.keygen().context("keygen for setup")?;
        expect_len("public key", pk_bytes.len(), alg.public_key)?;
        let pk = sig.load_public(&pk_bytes)?;
        let fixed = primitive
            .then(|| random(SPEED_SIG_MESSAGE_LEN))
            .transpose()?;
        // Only verification needs a signature made before the clock starts; keygen and signing
        // check the bit-flip on their first output instead (`check`), so no setup signature is
        // made that nothing uses (SLH-DSA-128s: 0.2-1.3 s each, in every process).
        let mut pool = Vec::new();
        if op == Operation::SigVerify {
            let msg = match &fixed {
                Some(m) => m.clone(),
                None => certificate_verify_message()?,
            };
            let t0 = std::time::Instant::now();
            let first = sig.sign(&sk, &msg)?;
            let per_sign = t0.elapsed().as_secs_f64();
            ensure!(
                sig.verify(&pk, &msg, &first)?,
                "a fresh signature does not verify"
            );
            ensure_flip_fails(sig.as_ref(), &pk, &msg, &first)?;
            // The primitive form verifies one fixed message again and again; a few calls
            // (`pqprof memory`) verify the signature just checked.
            let n = if fixed.is_some() || few {
                1
            } else if inputs_seeded() {
                // With seeded inputs (the counting child) the pool must not follow the clock, or
                // two counts would verify different signatures: the full pool, or 2 for a signer
                // slower than a second (SLH-DSA under valgrind; nothing lies near that line).
                if per_sign < 1.0 {
                    POOL
                } else {
                    2
                }
            } else {
                // Slow signers (SLH-DSA: 10 ms to seconds a signature) get a smaller pool: about
                // a tenth of a second of signing, the checked signature alone for one slower than
                // 50 ms. Verification's work does not follow the message (a fixed count of hash
                // calls in SLH-DSA), and this set-up is paid again in every process: a second of
                // signing for each of the six SLH-DSA verification phases was 5 s of a process.
                ((POOL_SIGNING_S / per_sign) as usize).clamp(1, POOL)
            };
            pool.push((msg, first));
            for _ in 1..n {
                let m = certificate_verify_message()?;
                let s = sig.sign(&sk, &m)?;
                pool.push((m, s));
            }
        }
        Ok(SigCase {
            sig,
            alg,
            op,
            sk,
            pk,
            fixed,
            pool,
            flip_checked: std::cell::Cell::new(op == Operation::SigVerify),
        })
    }

    fn check_signature(&self, pk: &Loaded, msg: &[u8], s: &[u8]) -> Result<()> {
        match self.alg.signature {
            Some(max) if self.alg.variable_signature => ensure!(
                s.len() <= max,
                "signature is {} bytes, more than {max}",
                s.len()
            ),
            want => expect_len("signature", s.len(), want)?,
        }
        ensure!(self.sig.verify(pk, msg, s)?, "signature does not verify");
        if !self.flip_checked.get() {
            ensure_flip_fails(self.sig.as_ref(), pk, msg, s)?;
            self.flip_checked.set(true);
        }
        Ok(())
    }
}

/// The signing time a verification case's pool may cost in set-up, seconds.
const POOL_SIGNING_S: f64 = 0.1;

/// A signature call's input: the message to sign (sign, keygen's check) or a pool index (verify).
pub enum SigIn {
    Message(Vec<u8>),
    Pooled(usize),
}

pub enum SigOut {
    Keys(Result<(Vec<u8>, Loaded)>),
    Signature(Result<Vec<u8>>),
    Verdict(Result<bool>),
}

impl Kernel for SigCase {
    type In = SigIn;
    type Out = SigOut;
    fn input(&mut self, i: usize, reuse: Option<SigIn>) -> Result<SigIn> {
        if self.op == Operation::SigVerify {
            return Ok(SigIn::Pooled(i % self.pool.len()));
        }
        if let Some(m) = &self.fixed {
            return Ok(SigIn::Message(m.clone()));
        }
        // ML-DSA's rejection loop depends on the message: a new transcript hash each time.
        let mut m = match reuse {
            Some(SigIn::Message(m)) if m.len() == CV_MESSAGE_LEN => m,
            _ => certificate_verify_message()?,
        };
        fresh_hash(&mut m)?;
        Ok(SigIn::Message(m))
    }
    fn call(&mut self, input: &mut SigIn) -> SigOut {
        match (self.op, input) {
            (Operation::SigKeygen, _) => SigOut::Keys(self.sig.keygen()),
            (Operation::SigSign, SigIn::Message(m)) => {
                SigOut::Signature(self.sig.sign(&self.sk, black_box(m)))
            }
            (_, SigIn::Pooled(j)) => {
                let (m, s) = &self.pool[*j];
                SigOut::Verdict(self.sig.verify(&self.pk, black_box(m), black_box(s)))
            }
            _ => SigOut::Verdict(Err(anyhow!("input does not fit {}", self.op))),
        }
    }
    fn check(&mut self, input: &SigIn, out: SigOut) -> Result<()> {
        match (out, input) {
            (SigOut::Keys(k), SigIn::Message(m)) => {
                let (pk, sk) = k?;
                expect_len("public key", pk.len(), self.alg.public_key)?;
                let pk = self.sig.load_public(&pk)?;
                let s = self.sig.sign(&sk, m)?;
                self.check_signature(&pk, m, &s)
            }
            (SigOut::Signature(s), SigIn::Message(m)) => self.check_signature(&self.pk, m, &s?),
            (SigOut::Verdict(v), _) => {
                ensure!(v?, "a valid signature was rejected");
                Ok(())
            }
            _ => bail!("output does not fit its input"),
        }
    }
}
