//! The record layer: AES-GCM seal and open of one TLS 1.3 record, and the record key's setup.

use super::inputs::*;
use super::Kernel;
use crate::algorithm::{Algorithm, Operation};
use crate::backend::{Aead, Loaded};
use crate::suite::Workload;
use anyhow::{anyhow, ensure, Result};
use std::hint::black_box;

pub(super) struct AeadCase {
    aead: Box<dyn Aead>,
    op: Operation,
    key: Loaded,
    plaintext: Vec<u8>,
    aad: Vec<u8>,
    iv: [u8; 12],
    /// (nonce, record: ciphertext || tag) for decryption.
    pool: Vec<([u8; 12], Vec<u8>)>,
}

/// One record: the buffer worked on in place (payload, then room for the tag), its nonce, and
/// (decryption) its pool index.
pub struct Record {
    buf: Vec<u8>,
    nonce: [u8; 12],
    j: usize,
}

/// TLS 1.3 per-record nonce: the IV XOR the 64-bit record sequence number (RFC 8446 section 5.3).
fn record_nonce(iv: &[u8; 12], seq: u64) -> [u8; 12] {
    let mut n = *iv;
    for (b, s) in n[4..].iter_mut().zip(seq.to_be_bytes()) {
        *b ^= s;
    }
    n
}

/// RFC 8446 section 5.2: the additional data is the record header (type 23, version 0x0303, length).
fn record_aad(payload: usize, aad_bytes: usize) -> Vec<u8> {
    let len = (payload + 16) as u16;
    let mut aad = vec![23u8, 3, 3, (len >> 8) as u8, len as u8];
    aad.resize(aad_bytes, 0);
    aad
}

fn seal_record(
    aead: &dyn Aead,
    key: &mut Loaded,
    nonce: &[u8; 12],
    aad: &[u8],
    plaintext: &[u8],
) -> Result<Vec<u8>> {
    let mut rec = plaintext.to_vec();
    let tag = aead.seal(key, nonce, aad, &mut rec)?;
    rec.extend_from_slice(&tag);
    Ok(rec)
}

impl AeadCase {
    pub(super) fn new(
        aead: Box<dyn Aead>,
        alg: &'static Algorithm,
        op: Operation,
        w: &Workload,
    ) -> Result<Self> {
        let key_bytes = random(alg.key.unwrap_or(32))?;
        let mut key = aead.load_key(&key_bytes)?;
        let plaintext = random(w.payload_bytes)?;
        let aad = record_aad(w.payload_bytes, w.aad_bytes);
        let iv: [u8; 12] = random(12)?.try_into().map_err(|_| anyhow!("iv"))?;
        let mut pool = Vec::new();
        for seq in 0..POOL as u64 {
            let nonce = record_nonce(&iv, 1 << 40 | seq);
            pool.push((
                nonce,
                seal_record(aead.as_ref(), &mut key, &nonce, &aad, &plaintext)?,
            ));
        }
        // A tampered record must be refused.
        let (nonce, mut rec) = pool[0].clone();
        rec[0] ^= 1;
        ensure!(
            aead.open(&mut key, &nonce, &aad, &mut rec).is_err(),
            "a tampered record was accepted"
        );
        Ok(AeadCase {
            aead,
            op,
            key,
            plaintext,
            aad,
            iv,
            pool,
        })
    }
}

impl Kernel for AeadCase {
    type In = Record;
    type Out = Result<()>;
    fn input(&mut self, i: usize, reuse: Option<Record>) -> Result<Record> {
        let n = self.plaintext.len();
        let mut r = reuse.unwrap_or_else(|| Record {
            buf: vec![0; n + 16],
            nonce: [0; 12],
            j: 0,
        });
        if self.op == Operation::AeadEncrypt {
            r.buf[..n].copy_from_slice(&self.plaintext);
            r.nonce = record_nonce(&self.iv, i as u64);
        } else {
            r.j = i % POOL;
            r.buf.copy_from_slice(&self.pool[r.j].1);
            r.nonce = self.pool[r.j].0;
        }
        Ok(r)
    }
    fn call(&mut self, r: &mut Record) -> Self::Out {
        let n = self.plaintext.len();
        if self.op == Operation::AeadEncrypt {
            let tag = self.aead.seal(
                &mut self.key,
                &r.nonce,
                &self.aad,
                black_box(&mut r.buf[..n]),
            )?;
            r.buf[n..].copy_from_slice(&tag);
            Ok(())
        } else {
            self.aead
                .open(&mut self.key, &r.nonce, &self.aad, black_box(&mut r.buf))
        }
    }
    fn check(&mut self, r: &Record, out: Self::Out) -> Result<()> {
        out?;
        let n = self.plaintext.len();
        if self.op == Operation::AeadEncrypt {
            let mut back = r.buf.clone();
            self.aead
                .open(&mut self.key, &r.nonce, &self.aad, &mut back)?;
            ensure!(
                back[..n] == self.plaintext[..],
                "decrypting the sealed record does not give the plaintext"
            );
        } else {
            ensure!(
                r.buf[..n] == self.plaintext[..],
                "the opened record differs from the plaintext"
            );
        }
        Ok(())
    }
}

/// `aead.key`: a record key set up from its bytes (the AES key schedule and GHASH tables), as a TLS
/// stack does once per traffic secret. Checked by sealing with it and with a key set up before.
pub(super) struct AeadKeyCase {
    pub(super) aead: Box<dyn Aead>,
    pub(super) reference: Loaded,
    pub(super) key_bytes: Vec<u8>,
}

impl Kernel for AeadKeyCase {
    type In = ();
    type Out = Result<Loaded>;
    fn input(&mut self, _: usize, _: Option<()>) -> Result<()> {
        Ok(())
    }
    fn call(&mut self, _: &mut ()) -> Self::Out {
        self.aead.load_key(black_box(&self.key_bytes))
    }
    fn check(&mut self, _: &(), out: Self::Out) -> Result<()> {
        let mut key = out?;
        let (nonce, aad, msg) = ([7u8; 12], record_aad(64, 5), [0x5au8; 64]);
        let ours = seal_record(self.aead.as_ref(), &mut key, &nonce, &aad, &msg)?;
        ensure!(
            ours == seal_record(self.aead.as_ref(), &mut self.reference, &nonce, &aad, &msg)?,
            "the new key seals differently"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_nonce_xors_the_sequence_into_the_low_bytes() {
        let iv = [0xffu8; 12];
        let n = record_nonce(&iv, 1);
        assert_eq!(&n[..11], &[0xff; 11]);
        assert_eq!(n[11], 0xfe);
    }
}
