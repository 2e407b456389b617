//! The `phases` section: one entry per measured (backend, operation, algorithm), with every sample.

use serde::{Deserialize, Serialize};

/// What an algorithm does; decides which operations apply to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Kem,
    Dh,
    Sig,
    Aead,
    /// HKDF (RFC 5869), the TLS 1.3 key schedule's function.
    Kdf,
    /// HMAC (RFC 2104): the TLS 1.3 Finished message.
    Mac,
    /// A hash over the handshake transcript.
    Hash,
}

/// A timed operation, by the names suites and results use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Operation {
    #[serde(rename = "kem.keygen")]
    KemKeygen,
    #[serde(rename = "kem.encaps")]
    KemEncaps,
    #[serde(rename = "kem.decaps")]
    KemDecaps,
    #[serde(rename = "dh.keygen")]
    DhKeygen,
    #[serde(rename = "dh.derive")]
    DhDerive,
    #[serde(rename = "sig.keygen")]
    SigKeygen,
    #[serde(rename = "sig.sign")]
    SigSign,
    #[serde(rename = "sig.verify")]
    SigVerify,
    #[serde(rename = "aead.encrypt")]
    AeadEncrypt,
    #[serde(rename = "aead.decrypt")]
    AeadDecrypt,
    #[serde(rename = "aead.key")]
    AeadKey,
    #[serde(rename = "kdf.extract")]
    KdfExtract,
    #[serde(rename = "kdf.expand")]
    KdfExpand,
    #[serde(rename = "mac.compute")]
    MacCompute,
    #[serde(rename = "hash.block")]
    HashBlock,
    #[serde(rename = "hash.finish")]
    HashFinish,
}

impl Operation {
    pub const ALL: [Operation; 16] = [
        Operation::KemKeygen,
        Operation::KemEncaps,
        Operation::KemDecaps,
        Operation::DhKeygen,
        Operation::DhDerive,
        Operation::SigKeygen,
        Operation::SigSign,
        Operation::SigVerify,
        Operation::AeadEncrypt,
        Operation::AeadDecrypt,
        Operation::AeadKey,
        Operation::KdfExtract,
        Operation::KdfExpand,
        Operation::MacCompute,
        Operation::HashBlock,
        Operation::HashFinish,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Operation::KemKeygen => "kem.keygen",
            Operation::KemEncaps => "kem.encaps",
            Operation::KemDecaps => "kem.decaps",
            Operation::DhKeygen => "dh.keygen",
            Operation::DhDerive => "dh.derive",
            Operation::SigKeygen => "sig.keygen",
            Operation::SigSign => "sig.sign",
            Operation::SigVerify => "sig.verify",
            Operation::AeadEncrypt => "aead.encrypt",
            Operation::AeadDecrypt => "aead.decrypt",
            Operation::AeadKey => "aead.key",
            Operation::KdfExtract => "kdf.extract",
            Operation::KdfExpand => "kdf.expand",
            Operation::MacCompute => "mac.compute",
            Operation::HashBlock => "hash.block",
            Operation::HashFinish => "hash.finish",
        }
    }

    pub fn from_name(s: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|o| o.name() == s)
    }

    pub fn kind(self) -> Kind {
        match self {
            Operation::KemKeygen | Operation::KemEncaps | Operation::KemDecaps => Kind::Kem,
            Operation::DhKeygen | Operation::DhDerive => Kind::Dh,
            Operation::SigKeygen | Operation::SigSign | Operation::SigVerify => Kind::Sig,
            Operation::AeadEncrypt | Operation::AeadDecrypt | Operation::AeadKey => Kind::Aead,
            Operation::KdfExtract | Operation::KdfExpand => Kind::Kdf,
            Operation::MacCompute => Kind::Mac,
            Operation::HashBlock | Operation::HashFinish => Kind::Hash,
        }
    }

    /// The label the site uses (as on the seed site).
    pub fn label(self) -> &'static str {
        match self {
            Operation::KemKeygen => "KEM keygen",
            Operation::KemEncaps => "KEM encapsulate",
            Operation::KemDecaps => "KEM decapsulate",
            Operation::DhKeygen => "Classical keygen",
            Operation::DhDerive => "Classical derive",
            Operation::SigKeygen => "Keygen",
            Operation::SigSign => "Sign",
            Operation::SigVerify => "Verify",
            Operation::AeadEncrypt => "Encrypt",
            Operation::AeadDecrypt => "Decrypt",
            Operation::AeadKey => "AEAD key setup",
            Operation::KdfExtract => "HKDF-Extract",
            Operation::KdfExpand => "HKDF-Expand-Label",
            Operation::MacCompute => "HMAC (Finished)",
            Operation::HashBlock => "Transcript hash, one block",
            Operation::HashFinish => "Transcript hash, finish",
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Summary of one phase's samples, in nanoseconds (means and spreads are not rounded).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub mean_ns: f64,
    pub median_ns: f64,
    pub p95_ns: f64,
    pub p99_ns: f64,
    pub stdev_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub iterations: usize,
}

/// Tukey-fence outliers (see `stats::tukey`), counted, never dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outliers {
    pub low_severe: usize,
    pub low_mild: usize,
    pub high_mild: usize,
    pub high_severe: usize,
}

impl Outliers {
    pub fn total(&self) -> usize {
        self.low_severe + self.low_mild + self.high_mild + self.high_severe
    }
}

/// Why a phase has the iteration count it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Default,
    Budget,
    Forced,
    /// Fewer calls than the minimum fit the budget; the minimum was timed, so the phase takes
    /// longer than the budget by design (SLH-DSA-128s signing: about 0.3-1.7 s a call).
    Floor,
}

/// Which form of an operation a phase times.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// As a TLS / SSH stack calls it once per handshake: peer keys imported from bytes, contexts
    /// made per call. What suites compose.
    #[default]
    Handshake,
    /// The operation alone, as speed tools time it: keys imported and contexts made once, outside
    /// the timed call (signatures: one fixed 50-byte message, as liboqs's speed_sig).
    Primitive,
}

impl Form {
    pub fn is_handshake(&self) -> bool {
        *self == Form::Handshake
    }

    /// What a phase's name carries for its form: nothing for the handshake form.
    pub fn suffix(self) -> &'static str {
        match self {
            Form::Handshake => "",
            Form::Primitive => " (primitive)",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Phase {
    pub backend: String,
    pub algorithm: String,
    pub operation: Operation,
    /// Handshake form (composed into suites) or the primitive alone (schema 2; absent = handshake).
    #[serde(default, skip_serializing_if = "Form::is_handshake")]
    pub form: Form,
    pub stats: Summary,
    pub ops_per_sec: f64,
    /// CPU steal on the pinned core while this phase ran, percent.
    pub steal_pct: Option<f64>,
    pub iterations_reason: Reason,
    /// Untimed calls made before measuring.
    pub warmup: usize,
    /// How many timed outputs were checked (always the first and last).
    pub verified: usize,
    /// What the timed region contains beyond the arithmetic.
    pub includes: String,
    #[serde(with = "super::packed::u64s")]
    pub samples_ns: Vec<u64>,
    pub cycles: Option<Cycles>,
    /// 95% bootstrap interval of the median (stats::median_ci95; measured in several processes,
    /// the two-stage bootstrap over `processes`).
    #[serde(default)]
    pub median_ci95_ns: Option<(f64, f64)>,
    /// The same interval with the host's common mode taken out (files from 2026-12-02 on; a
    /// phase of several processes in a run with a host drift): each process's samples divided by
    /// its factor (`process_samples.host_factors`; `figures::drift::own_interval`). What a
    /// difference or ratio of phases carries; the common mode is stated once, as
    /// `process_samples.host_half95_pct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ci95_own_ns: Option<(f64, f64)>,
    /// Samples per process, in the order `samples_ns` holds them (schema 3; empty: one process).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<usize>,
    /// Which of the run's processes (0: the first) each entry of `processes` came from: the first
    /// K measure every phase, precision batches only some (empty in files before 2026-12-01's
    /// sixth session).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub process_ids: Vec<usize>,
    /// The median's precision against the run's target, and why measuring stopped (schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<super::Precision>,
    /// Relative standard deviation, percent.
    #[serde(default)]
    pub rsd_pct: f64,
    /// Tukey-fence outliers, counted and kept.
    #[serde(default)]
    pub outliers: Outliers,
    /// Calls per sample: phases shorter than about 100 times the timer's cost are timed k calls at a
    /// time and each sample is the mean of those k (schema 2; absent = 1).
    #[serde(default = "one")]
    pub batch: usize,
    /// Time this thread waited for a CPU while the phase was timed (schedstat run delay), percent of
    /// the phase's timed wall time (schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_delay_pct: Option<f64>,
    /// Sum of the timed calls, milliseconds, against the run's budget (schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_ms: Option<f64>,
    /// Instructions and simulated cache events per call, under valgrind (`run --counter
    /// instructions`, schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Instructions>,
    /// The same call timed in the state a handshake makes it in (#37; files from 2026-12-05 on,
    /// for the key-exchange and signature phases of the real stacks' flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub situ: Option<Situ>,
}

/// A phase's calls timed one at a time in the state a real handshake leaves them: before each,
/// untimed, `evict_bytes` written a cache line at a time (the parsing, buffers and system calls
/// between two crypto calls take the caches) and a sleep of `wait_ns` (the wait for the peer's
/// flight, in which the core may idle). The statistics are those of `samples_ns`, as a phase's
/// are of its own (`stats::figures_grouped`), and `check` recomputes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Situ {
    pub evict_bytes: u64,
    pub wait_ns: u64,
    #[serde(with = "super::packed::u64s")]
    pub samples_ns: Vec<u64>,
    /// Samples per process, in order (empty: one process).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<usize>,
    pub median_ns: f64,
    pub mean_ns: f64,
    pub median_ci95_ns: Option<(f64, f64)>,
}

/// Callgrind's counts over `calls` calls of a phase, and per call (what `check` recomputes).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Instructions {
    /// Callgrind's event names: Ir (instructions), Dr / Dw (data reads / writes), I1mr, D1mr, D1mw
    /// (first-level misses), ILmr, DLmr, DLmw (last-level misses).
    pub events: Vec<String>,
    pub totals: Vec<u64>,
    pub calls: usize,
    pub per_call: Vec<f64>,
    /// What the emulated CPU reported to the child (which code path a dispatching library took).
    pub cpu: String,
    /// Instructions (Ir) of each counted call, from one callgrind dump per call; they sum to the Ir
    /// total. Equal where the call's work does not depend on its input; spread where it does (a
    /// signature's rejection loop, variable-time verification), which `compare` turns into an interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ir_calls: Vec<u64>,
}

impl Instructions {
    pub fn new(
        events: Vec<String>,
        totals: Vec<u64>,
        calls: usize,
        cpu: String,
        ir_calls: Vec<u64>,
    ) -> Instructions {
        let per_call = totals
            .iter()
            .map(|t| *t as f64 / calls.max(1) as f64)
            .collect();
        Instructions {
            events,
            totals,
            calls,
            per_call,
            cpu,
            ir_calls,
        }
    }

    /// Instructions per call (callgrind's Ir).
    pub fn ir(&self) -> Option<f64> {
        self.events
            .iter()
            .position(|e| e == "Ir")
            .and_then(|i| self.per_call.get(i).copied())
    }
}

fn one() -> usize {
    1
}

impl Phase {
    /// Which phase this is: every lookup of a phase goes through it.
    pub fn id(&self) -> PhaseId {
        PhaseId::new(&self.backend, &self.algorithm, self.operation, self.form)
    }

    /// Whether this is the phase `id` names (without making an id of its own).
    pub fn is(&self, id: &PhaseId) -> bool {
        self.backend == id.backend
            && self.algorithm == id.algorithm
            && self.operation == id.operation
            && self.form == id.form
    }

    /// "backend algorithm operation", with " (primitive)" for the primitive form.
    pub fn name(&self) -> String {
        self.id().to_string()
    }
}

/// The phase `id` names among `phases`.
pub fn find_phase<'a>(phases: &'a [Phase], id: &PhaseId) -> Option<&'a Phase> {
    phases.iter().find(|p| p.is(id))
}

/// What makes a measured phase one phase: the library, the algorithm, the operation and the form
/// (a phase's handshake form and its primitive form are two phases). Ordered by backend, then
/// operation, algorithm and form: the order in which `run` measures its phases.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PhaseId {
    pub backend: String,
    pub operation: Operation,
    pub algorithm: String,
    #[serde(default, skip_serializing_if = "Form::is_handshake")]
    pub form: Form,
}

impl PhaseId {
    pub fn new(backend: &str, algorithm: &str, operation: Operation, form: Form) -> PhaseId {
        PhaseId {
            backend: backend.into(),
            operation,
            algorithm: algorithm.into(),
            form,
        }
    }

    /// The handshake form: what suites compose.
    pub fn handshake(backend: &str, algorithm: &str, operation: Operation) -> PhaseId {
        PhaseId::new(backend, algorithm, operation, Form::Handshake)
    }

    /// The same phase in the other form.
    pub fn with_form(&self, form: Form) -> PhaseId {
        PhaseId {
            form,
            ..self.clone()
        }
    }

    /// "algorithm operation", with " (primitive)" for the primitive form: the phase within one
    /// backend's rows.
    pub fn short(&self) -> String {
        format!(
            "{} {}{}",
            self.algorithm,
            self.operation,
            self.form.suffix()
        )
    }
}

impl std::fmt::Display for PhaseId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.backend, self.short())
    }
}

/// TSC cycles per call over the same span as `samples_ns` (schema 2: fenced reads, and the
/// nanoseconds are these cycles at the measured TSC rate).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cycles {
    pub mean: f64,
    pub median: f64,
}

/// The setup a phase's handshake form adds to its primitive form (key import, context): the two
/// medians and their difference, which `check` recomputes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Component {
    pub backend: String,
    pub algorithm: String,
    pub operation: Operation,
    /// What the handshake form adds, in words ("importing the encapsulation key, a new EVP_PKEY_CTX").
    pub name: String,
    pub handshake_median_ns: f64,
    pub primitive_median_ns: f64,
    pub setup_ns: f64,
}

impl Component {
    /// The handshake-form phase whose setup this is.
    pub fn id(&self) -> PhaseId {
        PhaseId::handshake(&self.backend, &self.algorithm, self.operation)
    }
}

/// A phase that could not be measured or failed verification.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Failure {
    pub backend: String,
    pub algorithm: String,
    pub operation: Operation,
    /// Which form failed (absent: the handshake form; files before 2026-12-01 said "primitive
    /// form: " in the error instead).
    #[serde(default, skip_serializing_if = "Form::is_handshake")]
    pub form: Form,
    pub error: String,
}

impl Failure {
    pub fn new(id: &PhaseId, error: String) -> Failure {
        Failure {
            backend: id.backend.clone(),
            algorithm: id.algorithm.clone(),
            operation: id.operation,
            form: id.form,
            error,
        }
    }

    pub fn id(&self) -> PhaseId {
        PhaseId::new(&self.backend, &self.algorithm, self.operation, self.form)
    }
}
