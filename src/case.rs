//! One timed case per (backend, operation, algorithm): inputs made in `prepare` (untimed), exactly
//! one operation in `run` (timed), its output checked in `verify` (untimed). Generic over backends:
//! adding an algorithm to a backend needs no code here.

use crate::algorithm::{Algorithm, Operation};
use crate::backend::{Aead, Backend, Dh, Kem, Loaded, Sig};
use crate::suite::Workload;
use anyhow::{anyhow, bail, ensure, Context, Result};
use std::hint::black_box;

pub trait Case {
    /// Untimed: drop the previous output and make the inputs of iteration `i`.
    fn prepare(&mut self, i: usize) -> Result<()>;
    /// Timed: exactly one operation.
    fn run(&mut self);
    /// Untimed: check the output of the last `run`.
    fn verify(&mut self) -> Result<()>;
}

/// Inputs that rotate through a small pool, so a phase does not work on one value only.
const POOL: usize = 16;

/// RFC 8446 section 4.4.3: 64 spaces, the context string, a zero byte, then the transcript hash.
const CV_CONTEXT: &[u8] = b"TLS 1.3, server CertificateVerify";
pub const CV_MESSAGE_LEN: usize = 64 + 33 + 1 + 32;

pub fn certificate_verify_message() -> Result<Vec<u8>> {
    let mut m = vec![0x20u8; 64];
    m.extend_from_slice(CV_CONTEXT);
    m.push(0);
    m.extend_from_slice(&[0u8; 32]);
    fresh_hash(&mut m)?;
    Ok(m)
}

/// A new transcript hash in the message's last 32 bytes.
fn fresh_hash(m: &mut [u8]) -> Result<()> {
    let n = m.len();
    getrandom::fill(&mut m[n - 32..]).map_err(|e| anyhow!("getrandom: {e}"))
}

fn random(n: usize) -> Result<Vec<u8>> {
    let mut v = vec![0u8; n];
    getrandom::fill(&mut v).map_err(|e| anyhow!("getrandom: {e}"))?;
    Ok(v)
}

fn expect_len(what: &str, got: usize, want: Option<usize>) -> Result<()> {
    match want {
        Some(w) if w != got => bail!("{what} is {got} bytes, the specification says {w}"),
        _ => Ok(()),
    }
}

fn output<T>(out: &mut Option<Result<T>>) -> Result<T> {
    out.take().ok_or_else(|| anyhow!("verify called before run"))?
}

/// Builds the case; fails if the backend lacks the algorithm or its first outputs are wrong.
pub fn build(backend: &dyn Backend, alg: &'static Algorithm, op: Operation, w: &Workload) -> Result<Box<dyn Case>> {
    let missing = || anyhow!("{} does not support {} {}", backend.name(), alg.name, op);
    let case: Box<dyn Case> = match op {
        Operation::KemKeygen | Operation::KemEncaps | Operation::KemDecaps => {
            kem_case(backend.kem(&alg.name).ok_or_else(missing)?, alg, op)?
        }
        Operation::DhKeygen | Operation::DhDerive => dh_case(backend.dh(&alg.name).ok_or_else(missing)?, alg, op)?,
        Operation::SigKeygen | Operation::SigSign | Operation::SigVerify => {
            sig_case(backend.sig(&alg.name).ok_or_else(missing)?, alg, op)?
        }
        Operation::AeadEncrypt | Operation::AeadDecrypt => aead_case(backend.aead(&alg.name).ok_or_else(missing)?, alg, op, w)?,
    };
    Ok(case)
}

// ---- KEM ----

struct KemCase {
    kem: Box<dyn Kem>,
    alg: &'static Algorithm,
    op: Operation,
    ek: Vec<u8>,
    dk: Loaded,
    /// (ciphertext, shared secret) pairs for decapsulation.
    pool: Vec<(Vec<u8>, Vec<u8>)>,
    i: usize,
    keys: Option<Result<(Vec<u8>, Loaded)>>,
    encapsulated: Option<Result<(Vec<u8>, Vec<u8>)>>,
    secret: Option<Result<Vec<u8>>>,
}

fn kem_case(kem: Box<dyn Kem>, alg: &'static Algorithm, op: Operation) -> Result<Box<dyn Case>> {
    let (ek, dk) = kem.keygen().context("keygen for setup")?;
    expect_len("encapsulation key", ek.len(), alg.public_key)?;
    let mut pool = Vec::new();
    if op == Operation::KemDecaps {
        for _ in 0..POOL {
            pool.push(kem.encaps(&ek).context("encapsulate for setup")?);
        }
    }
    Ok(Box::new(KemCase { kem, alg, op, ek, dk, pool, i: 0, keys: None, encapsulated: None, secret: None }))
}

impl KemCase {
    fn check_roundtrip(&self, dk: &Loaded, ct: &[u8], ss: &[u8]) -> Result<()> {
        expect_len("ciphertext", ct.len(), self.alg.ciphertext)?;
        expect_len("shared secret", ss.len(), self.alg.shared_secret)?;
        let back = self.kem.decaps(dk, ct)?;
        ensure!(back == ss, "decapsulated secret differs from the encapsulated one");
        Ok(())
    }
}

impl Case for KemCase {
    fn prepare(&mut self, i: usize) -> Result<()> {
        self.keys = None;
        self.encapsulated = None;
        self.secret = None;
        self.i = i;
        Ok(())
    }

    fn run(&mut self) {
        match self.op {
            Operation::KemKeygen => self.keys = Some(black_box(self.kem.keygen())),
            Operation::KemEncaps => self.encapsulated = Some(black_box(self.kem.encaps(black_box(&self.ek)))),
            _ => {
                let (ct, _) = &self.pool[self.i % POOL];
                self.secret = Some(black_box(self.kem.decaps(&self.dk, black_box(ct))));
            }
        }
    }

    fn verify(&mut self) -> Result<()> {
        match self.op {
            Operation::KemKeygen => {
                let (ek, dk) = output(&mut self.keys)?;
                expect_len("encapsulation key", ek.len(), self.alg.public_key)?;
                let (ct, ss) = self.kem.encaps(&ek)?;
                self.check_roundtrip(&dk, &ct, &ss)
            }
            Operation::KemEncaps => {
                let (ct, ss) = output(&mut self.encapsulated)?;
                self.check_roundtrip(&self.dk, &ct, &ss)
            }
            _ => {
                let ss = output(&mut self.secret)?;
                ensure!(ss == self.pool[self.i % POOL].1, "decapsulated secret differs from the encapsulated one");
                Ok(())
            }
        }
    }
}

// ---- DH ----

struct DhCase {
    dh: Box<dyn Dh>,
    alg: &'static Algorithm,
    op: Operation,
    secret: Loaded,
    /// (peer share, expected shared secret).
    peers: Vec<(Vec<u8>, Vec<u8>)>,
    i: usize,
    keys: Option<Result<(Vec<u8>, Loaded)>>,
    derived: Option<Result<Vec<u8>>>,
}

fn dh_case(dh: Box<dyn Dh>, alg: &'static Algorithm, op: Operation) -> Result<Box<dyn Case>> {
    let (share, secret) = dh.keygen().context("keygen for setup")?;
    expect_len("public share", share.len(), alg.public_key)?;
    let mut peers = Vec::new();
    for _ in 0..POOL {
        let (peer, peer_secret) = dh.keygen()?;
        // The peer's view of the secret is the expected value for our derive.
        peers.push((peer, dh.derive(&peer_secret, &share)?));
    }
    Ok(Box::new(DhCase { dh, alg, op, secret, peers, i: 0, keys: None, derived: None }))
}

impl Case for DhCase {
    fn prepare(&mut self, i: usize) -> Result<()> {
        self.keys = None;
        self.derived = None;
        self.i = i;
        Ok(())
    }

    fn run(&mut self) {
        if self.op == Operation::DhKeygen {
            self.keys = Some(black_box(self.dh.keygen()));
        } else {
            let (peer, _) = &self.peers[self.i % POOL];
            self.derived = Some(black_box(self.dh.derive(&self.secret, black_box(peer))));
        }
    }

    fn verify(&mut self) -> Result<()> {
        if self.op == Operation::DhKeygen {
            let (share, secret) = output(&mut self.keys)?;
            expect_len("public share", share.len(), self.alg.public_key)?;
            let (peer, peer_secret) = self.dh.keygen()?;
            let ours = self.dh.derive(&secret, &peer)?;
            ensure!(ours == self.dh.derive(&peer_secret, &share)?, "the two sides derived different secrets");
            expect_len("shared secret", ours.len(), self.alg.shared_secret)
        } else {
            let ss = output(&mut self.derived)?;
            ensure!(ss == self.peers[self.i % POOL].1, "the two sides derived different secrets");
            expect_len("shared secret", ss.len(), self.alg.shared_secret)
        }
    }
}

// ---- signatures ----

struct SigCase {
    sig: Box<dyn Sig>,
    alg: &'static Algorithm,
    op: Operation,
    sk: Loaded,
    pk: Loaded,
    msg: Vec<u8>,
    /// (message, signature) pairs for verification.
    pool: Vec<(Vec<u8>, Vec<u8>)>,
    i: usize,
    keys: Option<Result<(Vec<u8>, Loaded)>>,
    signature: Option<Result<Vec<u8>>>,
    verdict: Option<Result<bool>>,
}

fn sig_case(sig: Box<dyn Sig>, alg: &'static Algorithm, op: Operation) -> Result<Box<dyn Case>> {
    let (pk_bytes, sk) = sig.keygen().context("keygen for setup")?;
    expect_len("public key", pk_bytes.len(), alg.public_key)?;
    let pk = sig.load_public(&pk_bytes)?;
    let msg = certificate_verify_message()?;
    // A flipped bit must fail, or "verifies" means nothing.
    let mut bad = sig.sign(&sk, &msg)?;
    ensure!(sig.verify(&pk, &msg, &bad)?, "a fresh signature does not verify");
    bad[0] ^= 1;
    ensure!(!sig.verify(&pk, &msg, &bad)?, "a signature with a flipped bit verifies");
    // Slow signers (SLH-DSA-128s: seconds) get a smaller pool: about one second of signing.
    let t0 = std::time::Instant::now();
    sig.sign(&sk, &msg)?;
    let per_sign = t0.elapsed().as_secs_f64();
    let pool_size = if op == Operation::SigVerify { ((1.0 / per_sign) as usize).clamp(2, POOL) } else { 0 };
    let mut pool = Vec::new();
    for _ in 0..pool_size {
        let m = certificate_verify_message()?;
        let s = sig.sign(&sk, &m)?;
        pool.push((m, s));
    }
    Ok(Box::new(SigCase { sig, alg, op, sk, pk, msg, pool, i: 0, keys: None, signature: None, verdict: None }))
}

impl SigCase {
    fn check_signature(&self, pk: &Loaded, msg: &[u8], s: &[u8]) -> Result<()> {
        match self.alg.signature {
            Some(max) if self.alg.variable_signature => ensure!(s.len() <= max, "signature is {} bytes, more than {max}", s.len()),
            want => expect_len("signature", s.len(), want)?,
        }
        ensure!(self.sig.verify(pk, msg, s)?, "signature does not verify");
        Ok(())
    }
}

impl Case for SigCase {
    fn prepare(&mut self, i: usize) -> Result<()> {
        self.keys = None;
        self.signature = None;
        self.verdict = None;
        self.i = i;
        if self.op == Operation::SigSign {
            // ML-DSA's rejection loop depends on the message: a new one each time.
            fresh_hash(&mut self.msg)?;
        }
        Ok(())
    }

    fn run(&mut self) {
        match self.op {
            Operation::SigKeygen => self.keys = Some(black_box(self.sig.keygen())),
            Operation::SigSign => self.signature = Some(black_box(self.sig.sign(&self.sk, black_box(&self.msg)))),
            _ => {
                let (m, s) = &self.pool[self.i % self.pool.len()];
                self.verdict = Some(black_box(self.sig.verify(&self.pk, black_box(m), black_box(s))));
            }
        }
    }

    fn verify(&mut self) -> Result<()> {
        match self.op {
            Operation::SigKeygen => {
                let (pk, sk) = output(&mut self.keys)?;
                expect_len("public key", pk.len(), self.alg.public_key)?;
                let pk = self.sig.load_public(&pk)?;
                let s = self.sig.sign(&sk, &self.msg)?;
                self.check_signature(&pk, &self.msg, &s)
            }
            Operation::SigSign => {
                let s = output(&mut self.signature)?;
                self.check_signature(&self.pk, &self.msg, &s)
            }
            _ => {
                ensure!(output(&mut self.verdict)?, "a valid signature was rejected");
                Ok(())
            }
        }
    }
}

// ---- AEAD ----

struct AeadCase {
    aead: Box<dyn Aead>,
    op: Operation,
    key: Loaded,
    plaintext: Vec<u8>,
    aad: Vec<u8>,
    buf: Vec<u8>,
    iv: [u8; 12],
    /// This iteration's nonce, made in `prepare`.
    nonce: [u8; 12],
    /// (nonce, ciphertext, tag) records for decryption.
    pool: Vec<([u8; 12], Vec<u8>, [u8; 16])>,
    i: usize,
    result: Option<Result<[u8; 16]>>,
}

/// TLS 1.3 per-record nonce: the IV XOR the 64-bit record sequence number (RFC 8446 section 5.3).
fn record_nonce(iv: &[u8; 12], seq: u64) -> [u8; 12] {
    let mut n = *iv;
    for (b, s) in n[4..].iter_mut().zip(seq.to_be_bytes()) {
        *b ^= s;
    }
    n
}

fn aead_case(aead: Box<dyn Aead>, alg: &'static Algorithm, op: Operation, w: &Workload) -> Result<Box<dyn Case>> {
    let key_bytes = random(alg.key.unwrap_or(32))?;
    let mut key = aead.load_key(&key_bytes)?;
    let plaintext = random(w.payload_bytes)?;
    // RFC 8446 section 5.2: the additional data is the record header (type 23, version 0x0303, length).
    let len = (w.payload_bytes + alg.tag.unwrap_or(16)) as u16;
    let mut aad = vec![23u8, 3, 3, (len >> 8) as u8, len as u8];
    aad.resize(w.aad_bytes, 0);
    let iv: [u8; 12] = random(12)?.try_into().map_err(|_| anyhow!("iv"))?;
    let mut pool = Vec::new();
    for seq in 0..POOL as u64 {
        let nonce = record_nonce(&iv, 1 << 40 | seq);
        let mut ct = plaintext.clone();
        let tag = aead.seal(&mut key, &nonce, &aad, &mut ct)?;
        pool.push((nonce, ct, tag));
    }
    // A tampered record must be refused.
    let (nonce, mut ct, tag) = pool[0].clone();
    ct[0] ^= 1;
    ensure!(aead.open(&mut key, &nonce, &aad, &mut ct, &tag).is_err(), "a tampered record was accepted");
    let buf = plaintext.clone();
    Ok(Box::new(AeadCase { aead, op, key, plaintext, aad, buf, iv, nonce: iv, pool, i: 0, result: None }))
}

impl Case for AeadCase {
    fn prepare(&mut self, i: usize) -> Result<()> {
        self.result = None;
        self.i = i;
        if self.op == Operation::AeadEncrypt {
            self.buf.copy_from_slice(&self.plaintext);
            self.nonce = record_nonce(&self.iv, i as u64);
        } else {
            self.buf.copy_from_slice(&self.pool[i % POOL].1);
            self.nonce = self.pool[i % POOL].0;
        }
        Ok(())
    }

    fn run(&mut self) {
        if self.op == Operation::AeadEncrypt {
            self.result = Some(black_box(self.aead.seal(&mut self.key, &self.nonce, &self.aad, black_box(&mut self.buf))));
        } else {
            let tag = &self.pool[self.i % POOL].2;
            let r = self.aead.open(&mut self.key, &self.nonce, &self.aad, black_box(&mut self.buf), tag);
            self.result = Some(black_box(r.map(|()| *tag)));
        }
    }

    fn verify(&mut self) -> Result<()> {
        let tag = output(&mut self.result)?;
        if self.op == Operation::AeadEncrypt {
            let mut back = self.buf.clone();
            self.aead.open(&mut self.key, &self.nonce, &self.aad, &mut back, &tag)?;
            ensure!(back == self.plaintext, "decrypting the sealed record does not give the plaintext");
        } else {
            ensure!(self.buf == self.plaintext, "the opened record differs from the plaintext");
        }
        Ok(())
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

    #[test]
    fn record_nonce_xors_the_sequence_into_the_low_bytes() {
        let iv = [0xffu8; 12];
        let n = record_nonce(&iv, 1);
        assert_eq!(&n[..11], &[0xff; 11]);
        assert_eq!(n[11], 0xfe);
    }
}
