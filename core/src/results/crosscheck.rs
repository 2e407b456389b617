//! The `crosscheck` section (`pqprof crosscheck`): the canonical tools and published references.

use super::{Form, Operation};
use serde::{Deserialize, Serialize};

/// A cross-check verdict: the 95% interval of pqprof / tool inside the tolerance, outside it, or
/// straddling its edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agreement {
    Agree,
    Disagree,
    Undecided,
}

impl Agreement {
    /// From the 95% interval of pqprof / tool and the tolerance in percent: agree when the whole
    /// interval is within it, disagree when the whole interval is outside it, else undecided.
    pub fn judge(ci: Option<(f64, f64)>, tolerance_pct: f64) -> Agreement {
        let (lo_ok, hi_ok) = (1.0 - tolerance_pct / 100.0, 1.0 + tolerance_pct / 100.0);
        match ci {
            Some((lo, hi)) if lo >= lo_ok && hi <= hi_ok => Agreement::Agree,
            Some((lo, hi)) if hi < lo_ok || lo > hi_ok => Agreement::Disagree,
            _ => Agreement::Undecided,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            Agreement::Agree => "agree",
            Agreement::Disagree => "disagree",
            Agreement::Undecided => "undecided",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Crosscheck {
    pub date_utc: String,
    pub wall_seconds: f64,
    pub tolerance_pct: f64,
    pub duration_s: u64,
    /// Rounds every tool run makes before a verdict can end it (all rounds, before `max_rounds`).
    pub rounds: usize,
    /// Rounds a tool run may go on to while one of its phases is undecided; absent: `rounds` fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<usize>,
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
    /// (pqprof - tool) / tool, percent: the geometric mean of the per-round ratios.
    pub diff_pct: f64,
    pub agree: bool,
    /// What differs between the two measurements, where known.
    pub note: String,
    /// Which form of pqprof's phase was compared (schema 2; absent = handshake).
    #[serde(default, skip_serializing_if = "Form::is_handshake")]
    pub form: Form,
    /// pqprof's figure in each of its runs (one more than the tool's: each tool run sits between
    /// two of pqprof's) and the tool's in each of its runs, in `statistic` (schema 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pqprof_rounds: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_rounds: Vec<f64>,
    /// 95% interval of (pqprof - tool) / tool, percent, from the per-round ratios (schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_ci95_pct: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Agreement>,
    /// The tool run this row came from (rows of one run share their rounds); with `max_rounds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<usize>,
}

impl CrosscheckRow {
    /// The phase of pqprof's that was compared.
    pub fn id(&self) -> super::PhaseId {
        super::PhaseId::new(&self.backend, &self.algorithm, self.operation, self.form)
    }
}

/// The stopping rule of an adaptive cross-check, as a pure function so `check` can replay it: a
/// tool run goes on while any of its phases is undecided, from `min` rounds up to `max`;
/// `verdicts_after_k` are its phases' verdicts on their first k rounds.
pub fn should_continue(verdicts_after_k: &[Agreement], k: usize, min: usize, max: usize) -> bool {
    k < max && (k < min || verdicts_after_k.contains(&Agreement::Undecided))
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
