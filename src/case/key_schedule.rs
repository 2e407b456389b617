//! The TLS 1.3 key schedule's kernels: HKDF-Extract and Expand-Label, the Finished HMAC and the
//! transcript hash, each checked against a RustCrypto reference (`reference`).

use super::inputs::*;
use super::{Case, Kernel, Slots};
use crate::algorithm::{Algorithm, Operation};
use crate::backend::{Backend, Hash, Kdf, Loaded, Mac};
use anyhow::{anyhow, ensure, Result};
use std::hint::black_box;

/// HKDF-Expand-Label's info for a Derive-Secret of the handshake traffic (RFC 8446 section 7.1):
/// length, "tls13 " + label, then the transcript hash.
fn expand_label_info(label: &str, hash_len: usize, context: &[u8]) -> Vec<u8> {
    let full = format!("tls13 {label}");
    let mut info = (hash_len as u16).to_be_bytes().to_vec();
    info.push(full.len() as u8);
    info.extend_from_slice(full.as_bytes());
    info.push(context.len() as u8);
    info.extend_from_slice(context);
    info
}

/// The labels TLS 1.3 expands with (RFC 8446 section 7.1 and 7.3).
const LABELS: [&str; 8] = [
    "derived",
    "c hs traffic",
    "s hs traffic",
    "c ap traffic",
    "s ap traffic",
    "exp master",
    "res master",
    "finished",
];

/// The reference for every backend's HKDF, HMAC and SHA-2: RustCrypto's `hkdf`, `hmac` and `sha2`
/// (themselves checked against RFC 5869 and FIPS 180-4 vectors in the tests).
pub mod reference {
    use anyhow::{bail, Result};
    use hmac::{KeyInit, Mac};
    use sha2::Digest;

    pub(crate) fn hkdf(
        hash_len: usize,
        salt: &[u8],
        ikm: &[u8],
        info: &[u8],
        len: usize,
    ) -> Result<Vec<u8>> {
        let mut out = vec![0u8; len];
        match hash_len {
            32 => hkdf::Hkdf::<sha2::Sha256>::new(Some(salt), ikm)
                .expand(info, &mut out)
                .map_err(|e| anyhow::anyhow!("{e}"))?,
            48 => hkdf::Hkdf::<sha2::Sha384>::new(Some(salt), ikm)
                .expand(info, &mut out)
                .map_err(|e| anyhow::anyhow!("{e}"))?,
            n => bail!("no reference HKDF for a {n}-byte hash"),
        }
        Ok(out)
    }

    pub(crate) fn hmac(hash_len: usize, key: &[u8], msg: &[u8]) -> Result<Vec<u8>> {
        Ok(match hash_len {
            32 => hmac::Hmac::<sha2::Sha256>::new_from_slice(key)?
                .chain_update(msg)
                .finalize()
                .into_bytes()
                .to_vec(),
            48 => hmac::Hmac::<sha2::Sha384>::new_from_slice(key)?
                .chain_update(msg)
                .finalize()
                .into_bytes()
                .to_vec(),
            n => bail!("no reference HMAC for a {n}-byte hash"),
        })
    }

    pub(crate) fn sha(hash_len: usize, data: &[u8]) -> Result<Vec<u8>> {
        Ok(match hash_len {
            32 => sha2::Sha256::digest(data).to_vec(),
            48 => sha2::Sha384::digest(data).to_vec(),
            n => bail!("no reference hash of {n} bytes"),
        })
    }
}

fn hash_len(alg: &Algorithm) -> Result<usize> {
    alg.output
        .ok_or_else(|| anyhow!("{} has no output size in algorithms.toml", alg.name))
}

/// `kdf.extract`: HKDF-Extract with a hash-length salt (the "derived" secret) and a 32-byte input
/// (an ECDHE secret), as the handshake secret is made. Checked by expanding the result.
struct KdfExtract {
    kdf: Box<dyn Kdf>,
    n: usize,
    salt: Vec<u8>,
    ikms: Vec<Vec<u8>>,
}

impl Kernel for KdfExtract {
    type In = usize;
    type Out = Result<Loaded>;
    fn input(&mut self, i: usize, _: Option<usize>) -> Result<usize> {
        Ok(i % POOL)
    }
    fn call(&mut self, j: &mut usize) -> Self::Out {
        self.kdf
            .extract(black_box(&self.salt), black_box(&self.ikms[*j]))
    }
    fn check(&mut self, j: &usize, out: Self::Out) -> Result<()> {
        let info = expand_label_info("c hs traffic", self.n, &[0u8; 48][..self.n]);
        let got = self.kdf.expand(&out?, &info, self.n)?;
        ensure!(
            got == reference::hkdf(self.n, &self.salt, &self.ikms[*j], &info, self.n)?,
            "HKDF differs from the reference"
        );
        Ok(())
    }
}

/// `kdf.expand`: one HKDF-Expand-Label of a hash-length secret (Derive-Secret), over the labels
/// TLS 1.3 uses, from a pseudorandom key extracted beforehand.
struct KdfExpand {
    kdf: Box<dyn Kdf>,
    n: usize,
    salt: Vec<u8>,
    ikm: Vec<u8>,
    prk: Loaded,
    infos: Vec<Vec<u8>>,
}

impl Kernel for KdfExpand {
    type In = usize;
    type Out = Result<Vec<u8>>;
    fn input(&mut self, i: usize, _: Option<usize>) -> Result<usize> {
        Ok(i % self.infos.len())
    }
    fn call(&mut self, j: &mut usize) -> Self::Out {
        self.kdf
            .expand(&self.prk, black_box(&self.infos[*j]), self.n)
    }
    fn check(&mut self, j: &usize, out: Self::Out) -> Result<()> {
        ensure!(
            out? == reference::hkdf(self.n, &self.salt, &self.ikm, &self.infos[*j], self.n)?,
            "HKDF-Expand differs from the reference"
        );
        Ok(())
    }
}

/// `mac.compute`: the Finished MAC, HMAC keyed with a finished key over a transcript hash (RFC 8446
/// section 4.4.4), keyed per call.
struct MacCase {
    mac: Box<dyn Mac>,
    n: usize,
    key: Vec<u8>,
    msgs: Vec<Vec<u8>>,
}

impl Kernel for MacCase {
    type In = usize;
    type Out = Result<Vec<u8>>;
    fn input(&mut self, i: usize, _: Option<usize>) -> Result<usize> {
        Ok(i % POOL)
    }
    fn call(&mut self, j: &mut usize) -> Self::Out {
        self.mac
            .compute(black_box(&self.key), black_box(&self.msgs[*j]))
    }
    fn check(&mut self, j: &usize, out: Self::Out) -> Result<()> {
        ensure!(
            out? == reference::hmac(self.n, &self.key, &self.msgs[*j])?,
            "HMAC differs from the reference"
        );
        Ok(())
    }
}

/// `hash.block` (one block into a running transcript hash) and `hash.finish` (the digest of a copy of
/// it). Each call gets a context that has already taken a 300-byte prefix, as a transcript has.
struct HashCase {
    hash: Box<dyn Hash>,
    op: Operation,
    n: usize,
    prefix: Vec<u8>,
    block: Vec<u8>,
}

impl Kernel for HashCase {
    type In = Loaded;
    type Out = Result<Vec<u8>>;
    fn input(&mut self, _: usize, _: Option<Loaded>) -> Result<Loaded> {
        let mut ctx = self.hash.start()?;
        self.hash.update(&mut ctx, &self.prefix)?;
        Ok(ctx)
    }
    fn call(&mut self, ctx: &mut Loaded) -> Self::Out {
        if self.op == Operation::HashBlock {
            self.hash
                .update(ctx, black_box(&self.block))
                .map(|()| Vec::new())
        } else {
            self.hash.finish_copy(ctx)
        }
    }
    fn check(&mut self, ctx: &Loaded, out: Self::Out) -> Result<()> {
        let out = out?;
        if self.op == Operation::HashBlock {
            let whole = [self.prefix.as_slice(), &self.block].concat();
            ensure!(
                self.hash.finish_copy(ctx)? == reference::sha(self.n, &whole)?,
                "the transcript hash differs from the reference"
            );
        } else {
            ensure!(
                out == reference::sha(self.n, &self.prefix)?,
                "the transcript hash differs from the reference"
            );
        }
        Ok(())
    }
}

pub(super) fn key_schedule_case(
    backend: &dyn Backend,
    alg: &'static Algorithm,
    op: Operation,
) -> Result<Box<dyn Case>> {
    let missing = || anyhow!("{} does not support {} {}", backend.name(), alg.name, op);
    let n = hash_len(alg)?;
    Ok(match op {
        Operation::KdfExtract => {
            let kdf = backend.kdf(&alg.name).ok_or_else(missing)?;
            Box::new(Slots::new(KdfExtract {
                kdf,
                n,
                salt: random(n)?,
                ikms: (0..POOL).map(|_| random(32)).collect::<Result<_>>()?,
            }))
        }
        Operation::KdfExpand => {
            let kdf = backend.kdf(&alg.name).ok_or_else(missing)?;
            let (salt, ikm) = (random(n)?, random(n)?);
            let prk = kdf.extract(&salt, &ikm)?;
            let infos = LABELS
                .iter()
                .map(|l| random(n).map(|ctx| expand_label_info(l, n, &ctx)))
                .collect::<Result<_>>()?;
            Box::new(Slots::new(KdfExpand {
                kdf,
                n,
                salt,
                ikm,
                prk,
                infos,
            }))
        }
        Operation::MacCompute => {
            let mac = backend.mac(&alg.name).ok_or_else(missing)?;
            Box::new(Slots::new(MacCase {
                mac,
                n,
                key: random(n)?,
                msgs: (0..POOL).map(|_| random(n)).collect::<Result<_>>()?,
            }))
        }
        _ => {
            let hash = backend.hash(&alg.name).ok_or_else(missing)?;
            let block =
                random(alg.block.ok_or_else(|| {
                    anyhow!("{} has no block size in algorithms.toml", alg.name)
                })?)?;
            Box::new(Slots::new(HashCase {
                hash,
                op,
                n,
                prefix: random(300)?,
                block,
            }))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_key_schedule_matches_rfc_5869_and_fips_180_4() {
        // RFC 5869 appendix A.1 (SHA-256, test case 1).
        let ikm = [0x0bu8; 22];
        let salt: Vec<u8> = (0x00..=0x0c).collect();
        let info: Vec<u8> = (0xf0..=0xf9).collect();
        let okm = reference::hkdf(32, &salt, &ikm, &info, 42).unwrap();
        assert_eq!(okm[..8], [0x3c, 0xb2, 0x5f, 0x25, 0xfa, 0xac, 0xd5, 0x7a]);
        // FIPS 180-4 examples: SHA-256("abc") and SHA-384("abc").
        assert_eq!(
            reference::sha(32, b"abc").unwrap()[..4],
            [0xba, 0x78, 0x16, 0xbf]
        );
        assert_eq!(
            reference::sha(48, b"abc").unwrap()[..4],
            [0xcb, 0x00, 0x75, 0x3f]
        );
        // RFC 4231 test case 2: HMAC-SHA-256("Jefe", "what do ya want for nothing?").
        assert_eq!(
            reference::hmac(32, b"Jefe", b"what do ya want for nothing?").unwrap()[..4],
            [0x5b, 0xdc, 0xc1, 0x46]
        );
        // RFC 8446 section 7.1: HkdfLabel = length, "tls13 " + label, context.
        let info = expand_label_info("derived", 48, &[]);
        assert_eq!(info[..3], [0, 48, 13]);
        assert_eq!(&info[3..16], b"tls13 derived");
    }
}
