//! One timed case per (backend, operation, algorithm, form). A case is a small kernel: `input`
//! makes the inputs of one call (untimed), `call` is exactly the timed operation, `check` verifies
//! an output (untimed). `Slots` turns a kernel into the `Case` the timed loop drives: inputs for a
//! whole batch are made before the clock starts, outputs chosen for verification are kept and
//! checked only after the chunk, so nothing but timed calls runs between two timed calls.
//! Generic over backends: adding an algorithm to a backend needs no code here.

use crate::algorithm::{Algorithm, Operation};
use crate::backend::Backend;
use crate::results::Form;
use crate::suite::Workload;
use anyhow::{anyhow, bail, Context, Result};
use std::hint::black_box;

mod aead;
mod dh;
pub mod inputs;
mod kem;
mod key_schedule;
mod reference;
mod sig;

pub use aead::Record;
pub use inputs::{certificate_verify_message, seed_inputs, CV_MESSAGE_LEN, SPEED_SIG_MESSAGE_LEN};
pub use reference::{Reference, VirtualReference};
pub use sig::{SigIn, SigOut};

use aead::{AeadCase, AeadKeyCase};
use dh::{DhDerive, DhKeygen};
use inputs::random;
use kem::{KemDecaps, KemEncaps, KemKeygen, KemKeygenPrimitive};
use key_schedule::key_schedule_case;
use sig::SigCase;

/// What the timed loop drives. Slots `0..batch` hold the inputs of the calls one sample times.
pub trait Case {
    /// Untimed: make the inputs of call `i` in slot `s`, dropping the slot's previous output.
    fn prepare(&mut self, i: usize, s: usize) -> Result<()>;
    /// Timed: exactly one operation on slot `s`; its output stays in the slot.
    fn run(&mut self, s: usize);
    /// Untimed, a move: set slot `s`'s input and output aside for `verify_kept`.
    fn keep(&mut self, s: usize);
    /// Untimed, after the chunk: check every kept output; returns how many were checked.
    fn verify_kept(&mut self) -> Result<usize>;
    /// Sets how many slots a batch uses (1 unless the phase is timed in batches).
    fn set_batch(&mut self, k: usize);
}

/// One operation of one backend: the three steps of a call, each separate.
pub(crate) trait Kernel {
    type In;
    type Out;
    /// Untimed: the inputs of call `i`; `reuse` is the slot's previous input, to refill in place.
    fn input(&mut self, i: usize, reuse: Option<Self::In>) -> Result<Self::In>;
    /// Timed: the operation.
    fn call(&mut self, input: &mut Self::In) -> Self::Out;
    /// Untimed: is this output right for this input?
    fn check(&mut self, input: &Self::In, out: Self::Out) -> Result<()>;
}

struct Slot<K: Kernel> {
    input: Option<K::In>,
    out: Option<K::Out>,
    i: usize,
}

/// A kernel as a `Case`, with `batch` input slots and the outputs kept for verification.
pub(crate) struct Slots<K: Kernel> {
    kernel: K,
    slots: Vec<Slot<K>>,
    kept: Vec<(usize, K::In, K::Out)>,
}

impl<K: Kernel> Slots<K> {
    pub(crate) fn new(kernel: K) -> Self {
        Slots {
            kernel,
            slots: vec![Slot {
                input: None,
                out: None,
                i: 0,
            }],
            kept: Vec::new(),
        }
    }
}

impl<K: Kernel> Case for Slots<K> {
    fn prepare(&mut self, i: usize, s: usize) -> Result<()> {
        let slot = &mut self.slots[s];
        slot.out = None;
        slot.i = i;
        slot.input = Some(self.kernel.input(i, slot.input.take())?);
        Ok(())
    }

    #[inline(never)]
    fn run(&mut self, s: usize) {
        let slot = &mut self.slots[s];
        if let Some(input) = slot.input.as_mut() {
            slot.out = Some(black_box(self.kernel.call(black_box(input))));
        }
    }

    fn keep(&mut self, s: usize) {
        let slot = &mut self.slots[s];
        if let (Some(input), Some(out)) = (slot.input.take(), slot.out.take()) {
            self.kept.push((slot.i, input, out));
        }
    }

    fn verify_kept(&mut self) -> Result<usize> {
        let n = self.kept.len();
        for (i, input, out) in std::mem::take(&mut self.kept) {
            self.kernel
                .check(&input, out)
                .with_context(|| format!("output of call {i}"))?;
        }
        Ok(n)
    }

    fn set_batch(&mut self, k: usize) {
        self.slots.resize_with(k.max(1), || Slot {
            input: None,
            out: None,
            i: 0,
        });
    }
}

/// Builds the case; fails if the backend lacks the algorithm (or the form) or its first outputs
/// are wrong.
pub fn build(
    backend: &dyn Backend,
    alg: &'static Algorithm,
    op: Operation,
    w: &Workload,
    form: Form,
) -> Result<Box<dyn Case>> {
    build_case(backend, alg, op, w, form, false)
}

/// `build` for a case that makes only a few calls (`pqprof memory`): the same set-up, but a
/// verification case's pool is the one signature the set-up already checks, where `build` signs
/// about a second's worth (SLH-DSA-128s: seconds per signature).
pub(crate) fn build_few(
    backend: &dyn Backend,
    alg: &'static Algorithm,
    op: Operation,
    w: &Workload,
    form: Form,
) -> Result<Box<dyn Case>> {
    build_case(backend, alg, op, w, form, true)
}

fn build_case(
    backend: &dyn Backend,
    alg: &'static Algorithm,
    op: Operation,
    w: &Workload,
    form: Form,
    few: bool,
) -> Result<Box<dyn Case>> {
    let missing = || anyhow!("{} does not support {} {}", backend.name(), alg.name, op);
    let kem = || backend.kem(&alg.name).ok_or_else(missing);
    let dh = || backend.dh(&alg.name).ok_or_else(missing);
    let sig = || backend.sig(&alg.name).ok_or_else(missing);
    let aead = || backend.aead(&alg.name).ok_or_else(missing);
    let primitive = form == Form::Primitive;
    let no_primitive = || {
        anyhow!(
            "{} {} {op} has no primitive form separate from its handshake form",
            backend.name(),
            alg.name
        )
    };
    Ok(match op {
        Operation::KemKeygen if primitive => Box::new(Slots::new(
            KemKeygenPrimitive::new(kem()?, alg)?.ok_or_else(no_primitive)?,
        )),
        Operation::KemKeygen => Box::new(Slots::new(KemKeygen { kem: kem()?, alg })),
        Operation::KemEncaps => Box::new(Slots::new(
            KemEncaps::new(kem()?, alg, primitive)?.ok_or_else(no_primitive)?,
        )),
        Operation::KemDecaps => Box::new(Slots::new(
            KemDecaps::new(kem()?, alg, primitive)?.ok_or_else(no_primitive)?,
        )),
        Operation::DhKeygen if primitive => bail!(no_primitive()),
        Operation::DhKeygen => Box::new(Slots::new(DhKeygen { dh: dh()?, alg })),
        Operation::DhDerive => Box::new(Slots::new(
            DhDerive::new(dh()?, alg, primitive)?.ok_or_else(no_primitive)?,
        )),
        Operation::SigKeygen => {
            Box::new(Slots::new(SigCase::new(sig()?, alg, op, primitive, few)?))
        }
        Operation::SigSign | Operation::SigVerify => {
            Box::new(Slots::new(SigCase::new(sig()?, alg, op, primitive, few)?))
        }
        _ if primitive => bail!(no_primitive()),
        Operation::AeadEncrypt | Operation::AeadDecrypt => {
            Box::new(Slots::new(AeadCase::new(aead()?, alg, op, w)?))
        }
        Operation::AeadKey => {
            let aead = aead()?;
            let key_bytes = random(alg.key.unwrap_or(32))?;
            let reference = aead.load_key(&key_bytes)?;
            Box::new(Slots::new(AeadKeyCase {
                aead,
                reference,
                key_bytes,
            }))
        }
        Operation::KdfExtract
        | Operation::KdfExpand
        | Operation::MacCompute
        | Operation::HashBlock
        | Operation::HashFinish => key_schedule_case(backend, alg, op)?,
    })
}
