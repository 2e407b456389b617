//! The `run`, `backends` and `stacks` sections: what made the figures, where, and how.

use super::{CounterMethod, Emulation};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub date_utc: String,
    pub tool_commit: String,
    pub host: Host,
    pub liboqs_version: String,
    /// liboqs built with OQS_DIST_BUILD: every CPU-specific path compiled in, chosen at run time.
    pub liboqs_dist_build: bool,
    pub openssl_version: String,
    pub rustc_version: String,
    pub build_profile: String,
    pub pinned_core: Option<usize>,
    pub iterations_policy: Settings,
    pub timer: Timer,
    /// Wall time of the whole measurement, seconds.
    #[serde(default)]
    pub wall_seconds: f64,
    /// Instruction counts (`run --counter instructions`, schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<CounterRun>,
    /// A fixed reference workload timed in every round beside the phases (schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
}

/// The reference workload's samples, round by round, and the factor that calibrates a figure of
/// this run to the reference's pinned time: calibrated = figure x pinned_ns / median_ns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Calibration {
    pub workload: String,
    /// Samples per round (the rounds' samples follow each other in `samples_ns`).
    pub per_round: usize,
    #[serde(with = "super::packed::u64s")]
    pub samples_ns: Vec<u64>,
    pub round_medians_ns: Vec<f64>,
    pub median_ns: f64,
    /// (largest - smallest) round median / median, percent: how far the machine drifted in the run.
    pub drift_pct: f64,
    pub pinned_ns: f64,
    pub factor: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CounterRun {
    /// valgrind's version and options.
    pub tool: String,
    pub wall_seconds: f64,
    /// Phases not counted, and why.
    pub skipped: Vec<String>,
    /// The seed of the generators that can be seeded (RustCrypto, liboqs).
    pub seed: u64,
    /// Callgrind or the qemu plugin (absent in older files: callgrind).
    #[serde(default)]
    pub method: CounterMethod,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub hostname: String,
    pub cpu_model: String,
    pub arch: String,
    pub cpu_extensions: Vec<String>,
    pub cores: usize,
    #[serde(default)]
    pub kernel: String,
    /// From the CPU's vendor, family and model where pqprof knows them ("zen5"); else "".
    #[serde(default)]
    pub microarchitecture: String,
    /// A short hash of the machine's identity (machine-id, CPU, hostname), so two machines with one
    /// hostname are told apart. Empty in files written before schema 2.
    #[serde(default)]
    pub fingerprint: String,
    /// Set when the run was made under an emulator: then it holds instruction counts only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated: Option<Emulation>,
}

impl Host {
    /// "vm · AMD EPYC (zen5) · a1b2c3": how a site or a comparison names the machine.
    pub fn label(&self) -> String {
        let mut arch = if self.microarchitecture.is_empty() {
            self.arch.clone()
        } else {
            self.microarchitecture.clone()
        };
        if self.is_emulated() {
            arch += ", emulated";
        }
        let mut s = format!("{} · {} ({arch})", self.hostname, self.cpu_model);
        if !self.fingerprint.is_empty() {
            s += &format!(" · {}", self.fingerprint);
        }
        s
    }

    /// What tells one machine from another across runs: the fingerprint (a hash of machine-id, CPU
    /// and hostname) with the host, CPU and microarchitecture it was made from. A file written
    /// before fingerprints (schema 1) is told apart by the rest alone: a run whose recorded
    /// microarchitecture differs is another machine, even under the same hostname and CPU name.
    pub fn machine_key(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}",
            self.fingerprint, self.hostname, self.cpu_model, self.microarchitecture, self.arch
        )
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timer {
    pub clock: String,
    pub tsc_invariant: bool,
    /// Measured TSC frequency, if the TSC is used.
    pub tsc_hz: Option<f64>,
    /// The generic timer's rate (CNTFRQ_EL0), where the clock is aarch64's CNTVCT_EL0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_hz: Option<f64>,
    /// One tick of the clock, nanoseconds: with the overhead, what sets the batching (a coarse
    /// counter needs longer samples for the same 1%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_ns: Option<f64>,
    /// Median cost of one timed region around an empty call: the floor under every sample. Not
    /// subtracted; phases shorter than `batch_threshold` times it are timed in batches.
    pub overhead_ns: f64,
    /// The same in TSC cycles (schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_cycles: Option<f64>,
    /// How the random numbers the timed calls consume are made, for every backend (schema 2).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub randomness: String,
}

/// The iteration policy of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    /// Iterations per phase when the phase fits its time budget.
    pub default_iterations: usize,
    /// Fewest iterations a slow phase gets.
    pub min_iterations: usize,
    /// Time budget per phase (timed part only), in milliseconds.
    pub budget_ms: u64,
    /// Every phase's iterations are split into this many rounds, run in turn.
    pub rounds: usize,
    /// Warm-up per phase before measuring, in milliseconds (at least one call).
    pub warmup_ms: u64,
    /// `--iterations N`: the same count for every phase, whatever its speed.
    pub forced: Option<usize>,
    /// The 95% half-width every phase median is measured towards, percent (schema 3; `run
    /// --precision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_pct: Option<f64>,
    /// The run's time to measure in, seconds (schema 3; `run --budget-s`, less the 2% kept for
    /// closing in files from 2026-12-05 13:00 on; none: unbounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// Processes every phase is measured in at least (schema 3; `run --samples`); the iteration
    /// counts, budget and floor above are per phase over all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<usize>,
    /// The share of their timed calls the first processes after the first were made to take on a
    /// host too slow for all K in the budget (`run --samples`; absent: 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_scale: Option<f64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            default_iterations: 1000,
            min_iterations: 10,
            budget_ms: 2000,
            rounds: 10,
            warmup_ms: 100,
            forced: None,
            target_pct: None,
            budget_s: None,
            processes: None,
            first_scale: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackendInfo {
    pub name: String,
    pub version: String,
    /// Standard name -> the backend's own name, for every algorithm it supports.
    pub names: Vec<(String, String)>,
    /// How it was built and which code path it takes on the measured CPU (schema 2).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub build: String,
    /// The phases it covers, "ML-KEM-768 kem.keygen" (schema 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub covers: Vec<String>,
}

/// A choice of backend for post-quantum and for classical algorithms, under which every suite is
/// composed once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stack {
    pub name: String,
    pub description: String,
    pub post_quantum: String,
    pub classical: String,
    /// The protocols this stack composes suites of; empty: every protocol (schema 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protocols: Vec<String>,
    /// Segments of a flow (`suites/flights.toml`) this stack runs at once, server's and client's
    /// (files from 2026-12-02 on): what makes its critical path shorter than the sum.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlap: Vec<(String, String)>,
    /// Client segments of a flow this stack starts as soon as the server's Certificate is in,
    /// before the rest of the server's flight (files from 2026-12-03 on): what a window stall
    /// can hide (netmodel::stall_hidden_ns).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_certificate: Vec<String>,
}

impl Stack {
    pub fn new(
        name: &str,
        description: &str,
        pq: &str,
        classical: &str,
        protocols: &[&str],
    ) -> Stack {
        Stack {
            name: name.into(),
            description: description.into(),
            post_quantum: pq.into(),
            classical: classical.into(),
            protocols: protocols.iter().map(|p| p.to_string()).collect(),
            overlap: Vec::new(),
            on_certificate: Vec::new(),
        }
    }

    /// The same stack, running these segments of its flows at once (server's, client's).
    pub fn with_overlap(mut self, pairs: &[(&str, &str)]) -> Stack {
        self.overlap = pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        self
    }

    /// The same stack, whose client starts these segments as soon as the Certificate is in.
    pub fn with_on_certificate(mut self, segments: &[&str]) -> Stack {
        self.on_certificate = segments.iter().map(|s| s.to_string()).collect();
        self
    }

    pub fn composes(&self, protocol: &str) -> bool {
        self.protocols.is_empty() || self.protocols.iter().any(|p| p == protocol)
    }
}
