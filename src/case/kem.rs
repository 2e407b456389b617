//! KEM kernels: keygen, encapsulation (the peer's key imported from bytes) and decapsulation, in
//! both forms.

use super::inputs::*;
use super::Kernel;
use crate::algorithm::Algorithm;
use crate::backend::{Kem, Loaded};
use anyhow::{ensure, Context, Result};
use std::hint::black_box;

fn check_roundtrip(
    kem: &dyn Kem,
    alg: &Algorithm,
    dk: &Loaded,
    ct: &[u8],
    ss: &[u8],
) -> Result<()> {
    expect_len("ciphertext", ct.len(), alg.ciphertext)?;
    expect_len("shared secret", ss.len(), alg.shared_secret)?;
    let back = kem.decaps(dk, ct)?;
    ensure!(
        back == ss,
        "decapsulated secret differs from the encapsulated one"
    );
    Ok(())
}

fn check_keypair(kem: &dyn Kem, alg: &Algorithm, ek: &[u8], dk: &Loaded) -> Result<()> {
    expect_len("encapsulation key", ek.len(), alg.public_key)?;
    let (ct, ss) = kem.encaps(ek)?;
    check_roundtrip(kem, alg, dk, &ct, &ss)
}

pub(super) struct KemKeygen {
    pub(super) kem: Box<dyn Kem>,
    pub(super) alg: &'static Algorithm,
}

impl Kernel for KemKeygen {
    type In = ();
    type Out = Result<(Vec<u8>, Loaded)>;
    fn input(&mut self, _: usize, _: Option<()>) -> Result<()> {
        Ok(())
    }
    fn call(&mut self, _: &mut ()) -> Self::Out {
        self.kem.keygen()
    }
    fn check(&mut self, _: &(), out: Self::Out) -> Result<()> {
        let (ek, dk) = out?;
        check_keypair(self.kem.as_ref(), self.alg, &ek, &dk)
    }
}

/// Keygen with the per-call state (an OpenSSL context) made once; the encapsulation key is
/// exported only when the output is checked.
pub(super) struct KemKeygenPrimitive {
    kem: Box<dyn Kem>,
    alg: &'static Algorithm,
    state: Loaded,
}

impl KemKeygenPrimitive {
    pub(super) fn new(kem: Box<dyn Kem>, alg: &'static Algorithm) -> Result<Option<Self>> {
        let Some(state) = kem.keygen_state().transpose()? else {
            return Ok(None);
        };
        Ok(Some(KemKeygenPrimitive { kem, alg, state }))
    }
}

impl Kernel for KemKeygenPrimitive {
    type In = ();
    type Out = Result<Loaded>;
    fn input(&mut self, _: usize, _: Option<()>) -> Result<()> {
        Ok(())
    }
    fn call(&mut self, _: &mut ()) -> Self::Out {
        self.kem.keygen_with(&mut self.state)
    }
    fn check(&mut self, _: &(), out: Self::Out) -> Result<()> {
        let dk = out?;
        let ek = self.kem.export_ek(&dk)?;
        check_keypair(self.kem.as_ref(), self.alg, &ek, &dk)
    }
}

pub(super) struct KemEncaps {
    kem: Box<dyn Kem>,
    alg: &'static Algorithm,
    ek: Vec<u8>,
    dk: Loaded,
    /// Primitive form: the encapsulation key imported once.
    imported: Option<Loaded>,
}

impl KemEncaps {
    pub(super) fn new(
        kem: Box<dyn Kem>,
        alg: &'static Algorithm,
        primitive: bool,
    ) -> Result<Option<Self>> {
        let (ek, dk) = kem.keygen().context("keygen for setup")?;
        expect_len("encapsulation key", ek.len(), alg.public_key)?;
        let imported = if primitive {
            let Some(k) = kem.import_ek(&ek).transpose()? else {
                return Ok(None);
            };
            Some(k)
        } else {
            None
        };
        Ok(Some(KemEncaps {
            kem,
            alg,
            ek,
            dk,
            imported,
        }))
    }
}

impl Kernel for KemEncaps {
    type In = ();
    type Out = Result<(Vec<u8>, Vec<u8>)>;
    fn input(&mut self, _: usize, _: Option<()>) -> Result<()> {
        Ok(())
    }
    fn call(&mut self, _: &mut ()) -> Self::Out {
        match self.imported.as_mut() {
            Some(k) => self.kem.encaps_imported(k),
            None => self.kem.encaps(black_box(&self.ek)),
        }
    }
    fn check(&mut self, _: &(), out: Self::Out) -> Result<()> {
        let (ct, ss) = out?;
        check_roundtrip(self.kem.as_ref(), self.alg, &self.dk, &ct, &ss)
    }
}

pub(super) struct KemDecaps {
    kem: Box<dyn Kem>,
    dk: Loaded,
    /// Primitive form: the per-key state (an OpenSSL context) made once.
    state: Option<Loaded>,
    /// (ciphertext, shared secret) pairs.
    pool: Vec<(Vec<u8>, Vec<u8>)>,
}

impl KemDecaps {
    pub(super) fn new(
        kem: Box<dyn Kem>,
        _alg: &'static Algorithm,
        primitive: bool,
    ) -> Result<Option<Self>> {
        let (ek, dk) = kem.keygen().context("keygen for setup")?;
        let pool = (0..POOL)
            .map(|_| kem.encaps(&ek).context("encapsulate for setup"))
            .collect::<Result<_>>()?;
        let state = if primitive {
            let Some(s) = kem.decaps_state(&dk).transpose()? else {
                return Ok(None);
            };
            Some(s)
        } else {
            None
        };
        Ok(Some(KemDecaps {
            kem,
            dk,
            state,
            pool,
        }))
    }
}

impl Kernel for KemDecaps {
    type In = usize;
    type Out = Result<Vec<u8>>;
    fn input(&mut self, i: usize, _: Option<usize>) -> Result<usize> {
        Ok(i % POOL)
    }
    fn call(&mut self, j: &mut usize) -> Self::Out {
        let ct = &self.pool[*j].0;
        match self.state.as_mut() {
            Some(s) => self.kem.decaps_with(s, black_box(ct)),
            None => self.kem.decaps(&self.dk, black_box(ct)),
        }
    }
    fn check(&mut self, j: &usize, out: Self::Out) -> Result<()> {
        ensure!(
            out? == self.pool[*j].1,
            "decapsulated secret differs from the encapsulated one"
        );
        Ok(())
    }
}
