//! One timed case per (backend, operation, algorithm, form). A case is a small kernel: `input`
//! makes the inputs of one call (untimed), `call` is exactly the timed operation, `check` verifies
//! an output (untimed). `Slots` turns a kernel into the `Case` the timed loop drives: inputs for a
//! whole batch are made before the clock starts, outputs chosen for verification are kept and
//! checked only after the chunk, so nothing but timed calls runs between two timed calls.
//! Generic over backends: adding an algorithm to a backend needs no code here.

use crate::algorithm::{Algorithm, Operation};
use crate::backend::{Aead, Backend, Dh, Hash, Kdf, Kem, Loaded, Mac, Sig};
use crate::results::Form;
use crate::suite::Workload;
use anyhow::{anyhow, bail, ensure, Context, Result};
use std::hint::black_box;

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
pub trait Kernel {
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
pub struct Slots<K: Kernel> {
    kernel: K,
    slots: Vec<Slot<K>>,
    kept: Vec<(usize, K::In, K::Out)>,
}

impl<K: Kernel> Slots<K> {
    pub fn new(kernel: K) -> Self {
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

/// Inputs that rotate through a small pool, so a phase does not work on one value only.
const POOL: usize = 16;

/// RFC 8446 section 4.4.3: 64 spaces, the context string, a zero byte, then the transcript hash.
const CV_CONTEXT: &[u8] = b"TLS 1.3, server CertificateVerify";
pub const CV_MESSAGE_LEN: usize = 64 + 33 + 1 + 32;
/// liboqs's speed_sig signs and verifies one message of this many bytes (tests/speed_sig.c,
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

fn inputs_seeded() -> bool {
    INPUTS.with(|r| r.borrow().is_some())
}

fn fill(buf: &mut [u8]) -> Result<()> {
    INPUTS.with(|r| match r.borrow_mut().as_mut() {
        Some(rng) => {
            rand::Rng::fill_bytes(rng, buf);
            Ok(())
        }
        None => getrandom::fill(buf).map_err(|e| anyhow!("getrandom: {e}")),
    })
}

/// A new transcript hash in the message's last 32 bytes.
fn fresh_hash(m: &mut [u8]) -> Result<()> {
    let n = m.len();
    fill(&mut m[n - 32..])
}

fn random(n: usize) -> Result<Vec<u8>> {
    let mut v = vec![0u8; n];
    fill(&mut v)?;
    Ok(v)
}

fn expect_len(what: &str, got: usize, want: Option<usize>) -> Result<()> {
    match want {
        Some(w) if w != got => bail!("{what} is {got} bytes, the specification says {w}"),
        _ => Ok(()),
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
        Operation::SigKeygen => Box::new(Slots::new(SigCase::new(sig()?, alg, op, primitive)?)),
        Operation::SigSign | Operation::SigVerify => {
            Box::new(Slots::new(SigCase::new(sig()?, alg, op, primitive)?))
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

/// The calibration reference: SHA-256 (RustCrypto's sha2) of a fixed 4,096-byte buffer. It does not
/// depend on any backend under test, and its time moves with the machine, not with the code.
pub struct Reference {
    buf: Vec<u8>,
    expected: Vec<u8>,
}

impl Reference {
    pub const DESCRIPTION: &'static str = "SHA-256 (RustCrypto sha2) of a fixed 4,096-byte buffer";

    pub fn new() -> Reference {
        use sha2::Digest;
        let buf: Vec<u8> = (0..4096u32)
            .map(|i| (i * 2_654_435_761u32 >> 24) as u8)
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

// ---- KEM ----

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

struct KemKeygen {
    kem: Box<dyn Kem>,
    alg: &'static Algorithm,
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
struct KemKeygenPrimitive {
    kem: Box<dyn Kem>,
    alg: &'static Algorithm,
    state: Loaded,
}

impl KemKeygenPrimitive {
    fn new(kem: Box<dyn Kem>, alg: &'static Algorithm) -> Result<Option<Self>> {
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

struct KemEncaps {
    kem: Box<dyn Kem>,
    alg: &'static Algorithm,
    ek: Vec<u8>,
    dk: Loaded,
    /// Primitive form: the encapsulation key imported once.
    imported: Option<Loaded>,
}

impl KemEncaps {
    fn new(kem: Box<dyn Kem>, alg: &'static Algorithm, primitive: bool) -> Result<Option<Self>> {
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

struct KemDecaps {
    kem: Box<dyn Kem>,
    dk: Loaded,
    /// Primitive form: the per-key state (an OpenSSL context) made once.
    state: Option<Loaded>,
    /// (ciphertext, shared secret) pairs.
    pool: Vec<(Vec<u8>, Vec<u8>)>,
}

impl KemDecaps {
    fn new(kem: Box<dyn Kem>, _alg: &'static Algorithm, primitive: bool) -> Result<Option<Self>> {
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

// ---- DH ----

struct DhKeygen {
    dh: Box<dyn Dh>,
    alg: &'static Algorithm,
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

struct DhDerive {
    dh: Box<dyn Dh>,
    alg: &'static Algorithm,
    secret: Loaded,
    /// (peer share, imported peer for the primitive form, expected shared secret).
    peers: Vec<(Vec<u8>, Option<Loaded>, Vec<u8>)>,
}

impl DhDerive {
    fn new(dh: Box<dyn Dh>, alg: &'static Algorithm, primitive: bool) -> Result<Option<Self>> {
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

// ---- signatures ----

struct SigCase {
    sig: Box<dyn Sig>,
    alg: &'static Algorithm,
    op: Operation,
    sk: Loaded,
    pk: Loaded,
    /// Primitive form (speed_sig's way): one fixed message signed and verified again and again.
    fixed: Option<Vec<u8>>,
    /// (message, signature) pairs for verification.
    pool: Vec<(Vec<u8>, Vec<u8>)>,
}

impl SigCase {
    fn new(
        sig: Box<dyn Sig>,
        alg: &'static Algorithm,
        op: Operation,
        primitive: bool,
    ) -> Result<Self> {
        let (pk_bytes, sk) = sig.keygen().context("keygen for setup")?;
        expect_len("public key", pk_bytes.len(), alg.public_key)?;
        let pk = sig.load_public(&pk_bytes)?;
        let msg = certificate_verify_message()?;
        // A flipped bit must fail, or "verifies" means nothing.
        let mut bad = sig.sign(&sk, &msg)?;
        ensure!(
            sig.verify(&pk, &msg, &bad)?,
            "a fresh signature does not verify"
        );
        bad[0] ^= 1;
        ensure!(
            !sig.verify(&pk, &msg, &bad)?,
            "a signature with a flipped bit verifies"
        );
        let fixed = primitive
            .then(|| random(SPEED_SIG_MESSAGE_LEN))
            .transpose()?;
        let mut pool = Vec::new();
        if op == Operation::SigVerify {
            if let Some(m) = &fixed {
                pool.push((m.clone(), sig.sign(&sk, m)?));
            } else {
                // Slow signers (SLH-DSA-128s: seconds) get a smaller pool: about one second of signing.
                let t0 = std::time::Instant::now();
                sig.sign(&sk, &msg)?;
                let per_sign = t0.elapsed().as_secs_f64();
                // With seeded inputs (the counting child) the pool must not follow the clock, or
                // two counts would verify different signatures: the full pool, or 2 for a signer
                // slower than a second (SLH-DSA under valgrind; nothing lies near that line).
                let n = if inputs_seeded() {
                    if per_sign < 1.0 {
                        POOL
                    } else {
                        2
                    }
                } else {
                    ((1.0 / per_sign) as usize).clamp(2, POOL)
                };
                for _ in 0..n {
                    let m = certificate_verify_message()?;
                    let s = sig.sign(&sk, &m)?;
                    pool.push((m, s));
                }
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
        Ok(())
    }
}

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

// ---- AEAD ----

struct AeadCase {
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
    fn new(
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
struct AeadKeyCase {
    aead: Box<dyn Aead>,
    reference: Loaded,
    key_bytes: Vec<u8>,
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

// ---- the key schedule: HKDF, HMAC, transcript hash ----

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

    pub fn hkdf(
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

    pub fn hmac(hash_len: usize, key: &[u8], msg: &[u8]) -> Result<Vec<u8>> {
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

    pub fn sha(hash_len: usize, data: &[u8]) -> Result<Vec<u8>> {
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

fn key_schedule_case(
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
    fn certificate_verify_message_is_130_bytes_per_rfc_8446() {
        let m = certificate_verify_message().unwrap();
        assert_eq!(m.len(), CV_MESSAGE_LEN);
        assert_eq!(m.len(), 130);
        assert!(m[..64].iter().all(|&b| b == 0x20));
        assert_eq!(&m[64..97], CV_CONTEXT);
        assert_eq!(m[97], 0);
    }

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

    #[test]
    fn record_nonce_xors_the_sequence_into_the_low_bytes() {
        let iv = [0xffu8; 12];
        let n = record_nonce(&iv, 1);
        assert_eq!(&n[..11], &[0xff; 11]);
        assert_eq!(n[11], 0xfe);
    }
}
