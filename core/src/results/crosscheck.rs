//! The `crosscheck` section (`pqprof crosscheck`): the canonical tools and published references.

use super::Operation;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Crosscheck {
    pub date_utc: String,
    pub wall_seconds: f64,
    pub tolerance_pct: f64,
    pub duration_s: u64,
    pub rounds: usize,
    pub rows: Vec<CrosscheckRow>,
    pub references: Vec<ReferenceRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrosscheckRow {
    /// "liboqs speed_kem", "liboqs speed_sig" or "openssl speed".
    pub tool: String,
    pub backend: String,
    pub algorithm: String,
    pub operation: Operation,
    /// The statistic compared, the same on both sides: "mean TSC cycles" or "mean ns".
    pub statistic: String,
    pub pqprof: f64,
    pub pqprof_median_ns: f64,
    pub tool_value: f64,
    /// (pqprof - tool) / tool, percent.
    pub diff_pct: f64,
    pub agree: bool,
    /// What differs between the two measurements, where known.
    pub note: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReferenceRow {
    pub algorithm: String,
    pub operation: Operation,
    pub backend: String,
    /// pqprof's median TSC cycles per call (per byte for throughput references).
    pub pqprof_cycles: f64,
    pub reference_cycles: f64,
    pub per_byte: bool,
    /// pqprof / reference.
    pub ratio: f64,
    pub implementation: String,
    pub machine: String,
    pub microarchitecture: String,
    /// Same microarchitecture as this host: only then is the ratio a like-for-like check.
    pub comparable: bool,
    pub statistic: String,
    pub source: String,
    pub source_date: String,
}
