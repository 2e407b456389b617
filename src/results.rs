//! The results schema (one serde struct tree, versioned) and its atomic read / write.

use crate::algorithm::Operation;
use crate::measure::{Reason, Settings};
use crate::plan::Stack;
use crate::stats::{Outliers, Summary};
use crate::suite::TrackKind;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// Bumped whenever a field changes meaning or a required field is added.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub run: Run,
    pub backends: Vec<BackendInfo>,
    pub stacks: Vec<Stack>,
    pub phases: Vec<Phase>,
    pub suites: Vec<Suite>,
    /// Phases that could not be measured or failed verification, and why; suites that needed them
    /// are left out.
    #[serde(default)]
    pub failures: Vec<Failure>,
    /// What in this run deserves caution, and what to do about it.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Present when the run was made of several independent processes (`run --samples K`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_samples: Option<ProcessSamples>,
    /// `pqprof crosscheck`: the canonical tools and published references beside this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crosscheck: Option<crate::crosscheck::Crosscheck>,
    /// `pqprof handshake`: real loopback handshakes beside the composed figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshakes: Option<crate::handshake::Handshakes>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessSamples {
    pub count: usize,
    pub phases: Vec<SampleSpread>,
    pub suites: Vec<SampleSpread>,
}

/// One phase or suite across process samples: each sample's median, their median and spread.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SampleSpread {
    /// "backend algorithm operation" for a phase, "suite [stack]" for a suite.
    pub name: String,
    pub medians_ns: Vec<f64>,
    pub median_of_medians_ns: f64,
    pub rsd_pct: f64,
}

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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timer {
    pub clock: String,
    pub tsc_invariant: bool,
    /// Measured TSC frequency, if the TSC is used.
    pub tsc_hz: Option<f64>,
    /// Median cost of one timed region around an empty call; not subtracted from samples.
    pub overhead_ns: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackendInfo {
    pub name: String,
    pub version: String,
    /// Standard name -> the backend's own name, for every algorithm it supports.
    pub names: Vec<(String, String)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Phase {
    pub backend: String,
    pub algorithm: String,
    pub operation: Operation,
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
    pub samples_ns: Vec<u64>,
    pub cycles: Option<Cycles>,
    /// 95% bootstrap interval of the median (stats::median_ci95).
    #[serde(default)]
    pub median_ci95_ns: Option<(f64, f64)>,
    /// Relative standard deviation, percent.
    #[serde(default)]
    pub rsd_pct: f64,
    /// Tukey-fence outliers, counted and kept.
    #[serde(default)]
    pub outliers: Outliers,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cycles {
    pub mean: f64,
    pub median: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuitePhase {
    pub backend: String,
    pub algorithm: String,
    pub operation: Operation,
    pub count: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Composed {
    pub mean_ns: f64,
    pub median_ns: f64,
    pub p95_ns: f64,
    pub p99_ns: f64,
    /// Percentiles come from this many resampled handshakes, drawn with this seed (compose.rs).
    pub resamples: usize,
    pub seed: u64,
    /// 95% bootstrap interval of the composed median (compose::intervals).
    #[serde(default)]
    pub median_ci95_ns: Option<(f64, f64)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Suite {
    pub name: String,
    pub protocol: String,
    pub kind: TrackKind,
    pub stack: String,
    pub baseline: Option<String>,
    pub code_point: Option<String>,
    pub wire_bytes: Option<usize>,
    pub phases: Vec<SuitePhase>,
    pub composed: Composed,
    /// Composed median against the baseline's, same stack, percent.
    pub delta_vs_baseline_pct: Option<f64>,
    #[serde(default)]
    pub delta_ci95_pct: Option<(f64, f64)>,
    pub ops_per_sec: f64,
    /// Composed p99 / composed median: how far the slow end strays.
    pub tail: f64,
    /// Signature tracks: sizes and family; record tracks: payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key_bytes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_bytes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_bytes: Option<usize>,
    pub source_file: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Failure {
    pub backend: String,
    pub algorithm: String,
    pub operation: Operation,
    pub error: String,
}

impl Results {
    /// " · N process samples, RSD x%" for a phase or suite name, if the run has process samples.
    pub fn run_spread(&self, name: &str) -> String {
        let Some(ps) = &self.process_samples else { return String::new() };
        ps.phases
            .iter()
            .chain(&ps.suites)
            .find(|s| s.name == name)
            .map_or(String::new(), |s| format!(" · {} process samples, median RSD {:.2}%", ps.count, s.rsd_pct))
    }

    pub fn phase(&self, backend: &str, algorithm: &str, op: Operation) -> Option<&Phase> {
        self.phases.iter().find(|p| p.backend == backend && p.algorithm == algorithm && p.operation == op)
    }
}

/// Reads a results file, refusing other schema versions with a message that says what to do.
pub fn read(path: &Path) -> Result<Results> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not valid JSON", path.display()))?;
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    match version {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => bail!(
            "{}: schema_version {v}, but this pqprof reads schema_version {SCHEMA_VERSION}; re-run the measurement or use the pqprof that wrote it",
            path.display()
        ),
        None => bail!("{}: no schema_version: not a pqprof results file", path.display()),
    }
    serde_json::from_value(value).map_err(|e| anyhow!("{}: does not match schema {SCHEMA_VERSION}: {e}", path.display()))
}

/// Writes to a temporary file in the same folder, then renames: a reader never sees half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create folder", dir.display()))?;
    let name = path.file_name().ok_or_else(|| anyhow!("{}: not a file name", path.display()))?;
    let tmp = dir.join(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("{}: cannot write", path.display()))
}

pub fn write(path: &Path, results: &Results) -> Result<()> {
    let mut bytes = serde_json::to_vec(results)?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}
