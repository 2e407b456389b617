//! The `handshakes` section (`pqprof handshake`): real loopback handshakes beside the composed figures.

use serde::{Deserialize, Serialize};

/// A real client/server library a handshake runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RealStack {
    Rustls,
    #[serde(rename = "openssl")]
    OpenSsl,
    Russh,
}

impl RealStack {
    pub const ALL: [RealStack; 3] = [RealStack::Rustls, RealStack::OpenSsl, RealStack::Russh];

    pub fn name(self) -> &'static str {
        match self {
            RealStack::Rustls => "rustls",
            RealStack::OpenSsl => "openssl",
            RealStack::Russh => "russh",
        }
    }

    pub fn from_name(s: &str) -> Option<RealStack> {
        RealStack::ALL.into_iter().find(|x| x.name() == s)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Handshakes {
    pub date_utc: String,
    pub wall_seconds: f64,
    pub samples: usize,
    pub per_sample: usize,
    pub scenarios: Vec<Scenario>,
    pub failures: Vec<String>,
    /// What is and is not counted, in words.
    pub notes: Vec<String>,
}

/// What the first, unmeasured connection showed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Evidence {
    pub version: String,
    /// Negotiated group (TLS) or key-exchange method (SSH).
    pub group: String,
    pub cipher: String,
    pub cert_key: String,
    pub resumed: bool,
    /// (code point, bytes) of the key_share in ClientHello / ServerHello.
    pub client_share: Option<(u16, usize)>,
    pub server_share: Option<(u16, usize)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scenario {
    pub protocol: String,
    pub suite: String,
    pub stack: RealStack,
    pub evidence: Evidence,
    /// Connect + handshake + 32-byte echo + close, per connection.
    pub median_ns: f64,
    pub p95_ns: f64,
    pub ready_median_ns: f64,
    pub sample_medians_ns: Vec<f64>,
    /// Relative standard deviation of the per-sample medians, percent.
    pub rsd_pct: f64,
    pub client_to_server_bytes: f64,
    pub server_to_client_bytes: f64,
    pub declared_wire_bytes: Option<usize>,
    pub client_cpu_ns: f64,
    pub server_cpu_ns: f64,
    pub client_mem: PerHandshake,
    pub server_mem: PerHandshake,
    /// Against the protocol's baseline suite on the same stack: ratio of medians and difference.
    pub vs_baseline_ratio: Option<f64>,
    pub measured_delta_ns: Option<f64>,
    /// The composed difference of the same two suites, from the stack named in `composed_stack`.
    pub composed_delta_ns: Option<f64>,
}

/// Allocations per handshake: Rust's through the counting allocator, C's through the library's hooks.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct PerHandshake {
    pub rust_allocs: f64,
    pub rust_bytes: f64,
    pub c_allocs: f64,
    pub c_bytes: f64,
}

/// Raw allocation counters (a process's running totals or a difference of two readings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocCounters {
    pub rust_allocs: u64,
    pub rust_bytes: u64,
    pub c_allocs: u64,
    pub c_bytes: u64,
}

impl AllocCounters {
    pub fn since(self, before: AllocCounters) -> AllocCounters {
        AllocCounters {
            rust_allocs: self.rust_allocs.saturating_sub(before.rust_allocs),
            rust_bytes: self.rust_bytes.saturating_sub(before.rust_bytes),
            c_allocs: self.c_allocs.saturating_sub(before.c_allocs),
            c_bytes: self.c_bytes.saturating_sub(before.c_bytes),
        }
    }

    pub fn per(self, n: f64) -> PerHandshake {
        let n = n.max(1.0);
        PerHandshake { rust_allocs: self.rust_allocs as f64 / n, rust_bytes: self.rust_bytes as f64 / n, c_allocs: self.c_allocs as f64 / n, c_bytes: self.c_bytes as f64 / n }
    }
}
