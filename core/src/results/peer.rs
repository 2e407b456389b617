//! The `go` section: the Go peer (peers/go, Go's standard library), whose phases are in `phases`
//! under backend `go` and whose real handshakes are in `handshakes` under stack `go`; here its
//! toolchain and seed 000's raw round trips timed in Go.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GoPeer {
    pub go_version: String,
    pub goos: String,
    pub goarch: String,
    pub gomaxprocs: usize,
    /// TLS groups this Go negotiates (of X25519, X25519MLKEM768, SecP256r1MLKEM768, MLKEM768).
    pub groups: Vec<String>,
    pub raw: Vec<RawRoundTrip>,
    pub wall_seconds: f64,
}

/// Seed 000's raw workload timed in Go: every round trip, in samples of `per_sample`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RawRoundTrip {
    pub name: String,
    pub per_sample: usize,
    #[serde(with = "super::packed::u64s")]
    pub samples_ns: Vec<u64>,
    /// The median of each sample, and their median (the seed's statistic).
    pub sample_medians_ns: Vec<f64>,
    pub median_ns: f64,
}

impl GoPeer {
    /// The stack (and backend) name the Go peer's handshakes and phases are recorded under.
    pub const STACK: &'static str = "go";
}
