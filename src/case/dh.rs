//! ECDH kernels: keygen and derive (the peer's share imported from bytes), in both forms.

use super::inputs::*;
use super::Kernel;
use crate::algorithm::Algorithm;
use crate::backend::{Dh, Loaded};
use anyhow::{ensure, Context, Result};
use std::hint::black_box;

pub(super) struct DhKeygen {
    pub(super) dh: Box<dyn Dh>,
    pub(super) alg: &'static Algorithm,
}

impl Kernel for DhKeygen {
    type In = ();
    type Out = Result<(Vec<u8>, Loaded)>;
    fn input(&mut self, _: usize, _: Option<()>) -> Result<()> {
        Ok(())
    }
    fn call(&mut self, _: &mut ()) -> Self::Out {
        self.dh.keygen()
    }
    fn check(&mut self, _: &(), out: Self::Out) -> Result<()> {
        let (share, secret) = out?;
        expect_len("public share", share.len(), self.alg.public_key)?;
        let (peer, peer_secret) = self.dh.keygen()?;
        let ours = self.dh.derive(&secret, &peer)?;
        ensure!(
            ours == self.dh.derive(&peer_secret, &share)?,
            "the two sides derived different secrets"
        );
        expect_len("shared secret", ours.len(), self.alg.shared_secret)
    }
}

pub(super) struct DhDerive {
    dh: Box<dyn Dh>,
    alg: &'static Algorithm,
    secret: Loaded,
    /// (peer share, imported peer for the primitive form, expected shared secret).
    peers: Vec<(Vec<u8>, Option<Loaded>, Vec<u8>)>,
}

impl DhDerive {
    pub(super) fn new(
        dh: Box<dyn Dh>,
        alg: &'static Algorithm,
        primitive: bool,
    ) -> Result<Option<Self>> {
        let (share, secret) = dh.keygen().context("keygen for setup")?;
        expect_len("public share", share.len(), alg.public_key)?;
        let mut peers = Vec::new();
        for _ in 0..POOL {
            let (peer, peer_secret) = dh.keygen()?;
            let imported = if primitive {
                let Some(k) = dh.import_peer(&secret, &peer).transpose()? else {
                    return Ok(None);
                };
                Some(k)
            } else {
                None
            };
            // The peer's view of the secret is the expected value for our derive.
            let expected = dh.derive(&peer_secret, &share)?;
            peers.push((peer, imported, expected));
        }
        Ok(Some(DhDerive {
            dh,
            alg,
            secret,
            peers,
        }))
    }
}

impl Kernel for DhDerive {
    type In = usize;
    type Out = Result<Vec<u8>>;
    fn input(&mut self, i: usize, _: Option<usize>) -> Result<usize> {
        Ok(i % POOL)
    }
    fn call(&mut self, j: &mut usize) -> Self::Out {
        let (peer, imported, _) = &mut self.peers[*j];
        match imported {
            Some(k) => self.dh.derive_imported(&self.secret, k),
            None => self.dh.derive(&self.secret, black_box(peer)),
        }
    }
    fn check(&mut self, j: &usize, out: Self::Out) -> Result<()> {
        let ss = out?;
        ensure!(
            ss == self.peers[*j].2,
            "the two sides derived different secrets"
        );
        expect_len("shared secret", ss.len(), self.alg.shared_secret)
    }
}
