//! The `suites` section: each suite composed once per stack from the shared phases.

use super::Operation;
use serde::{Deserialize, Serialize};

/// What a track measures; decides which operations its phases may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrackKind {
    Kex,
    Signature,
    Record,
    Raw,
    /// Every cryptographic phase of one full handshake.
    Full,
    /// Every cryptographic phase of one resumed TLS 1.3 handshake (psk_dhe_ke: the key exchange,
    /// the key schedule from the PSK, no certificate and no signature), #34.
    Resumed,
}

impl TrackKind {
    pub const NAMES: [&'static str; 6] = ["kex", "signature", "record", "raw", "full", "resumed"];

    pub fn from_name(s: &str) -> Option<TrackKind> {
        Some(match s {
            "kex" => TrackKind::Kex,
            "signature" => TrackKind::Signature,
            "record" => TrackKind::Record,
            "raw" => TrackKind::Raw,
            "full" => TrackKind::Full,
            "resumed" => TrackKind::Resumed,
            _ => return None,
        })
    }

    pub fn allows(self, kind: super::Kind) -> bool {
        use super::Kind;
        match self {
            TrackKind::Kex | TrackKind::Raw => matches!(kind, Kind::Kem | Kind::Dh),
            TrackKind::Signature => kind == Kind::Sig,
            TrackKind::Record => kind == Kind::Aead,
            TrackKind::Full | TrackKind::Resumed => true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuitePhase {
    pub backend: String,
    pub algorithm: String,
    pub operation: Operation,
    pub count: u32,
}

impl SuitePhase {
    /// The measured phase this part of a suite is composed from: its handshake form.
    pub fn id(&self) -> super::PhaseId {
        super::PhaseId::handshake(&self.backend, &self.algorithm, self.operation)
    }
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
    /// Bootstrap worlds and draws per world behind the intervals (files before schema 2: 200 x 2,000).
    #[serde(default = "v1_worlds")]
    pub ci_worlds: usize,
    #[serde(default = "v1_draws")]
    pub ci_draws: usize,
    /// Whether those worlds drew the run's processes once for every phase and each handshake in
    /// one process (compose::bootstrap_medians_by_process; files from 2026-12-03 on), so that the
    /// host's common mode cancels in a difference; before, each phase's processes were drawn apart.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ci_by_process: bool,
}

fn v1_worlds() -> usize {
    200
}

fn v1_draws() -> usize {
    2000
}

/// One suite composed with one stack.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteResult {
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
    /// Composed instructions: the sum of count x instructions per call of the phases, where every
    /// phase was counted (schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<f64>,
    /// Who computes what, and when (files from 2026-12-02 on; TLS 1.3 and SSH suites whose
    /// operations the flights file places): the client's CPU, the server's, and the latency along
    /// the critical path, from the phases' medians (`flow::figures`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
}

/// Which end of a handshake makes a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Client,
    Server,
}

impl Side {
    pub fn from_name(s: &str) -> Option<Side> {
        match s {
            "client" => Some(Side::Client),
            "server" => Some(Side::Server),
            _ => None,
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Client => "client",
            Side::Server => "server",
        })
    }
}

/// A phase's calls in one segment of a flow: its share of the suite's count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowPart {
    pub backend: String,
    pub algorithm: String,
    pub operation: super::Operation,
    pub count: f64,
}

/// One side's work between two messages of a handshake, and its sum of count x phase median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub name: String,
    pub side: Side,
    pub parts: Vec<FlowPart>,
    pub median_ns: f64,
}

/// A suite in its protocol's flow (`flow::figures`): the segments in order, the pairs of segments
/// the composition stack runs at once (`Stack::overlap`), and the three figures with their 95%
/// half-widths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    pub segments: Vec<Segment>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlap: Vec<(String, String)>,
    pub client_ns: f64,
    pub server_ns: f64,
    pub latency_ns: f64,
    pub client_half95_ns: f64,
    pub server_half95_ns: f64,
    pub latency_half95_ns: f64,
}
