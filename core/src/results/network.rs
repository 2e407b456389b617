//! The `network` section (`pqprof network`): real handshakes through a router namespace that
//! delays and drops packets, on a grid of round-trip times and loss rates, with what the link
//! really did at each point and a model beside each measurement.

use super::RealStack;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Network {
    pub date_utc: String,
    pub wall_seconds: f64,
    /// "nfqueue": pqprof's netem-router (user space, NFQUEUE in the router's FORWARD chain).
    pub emulator: String,
    pub grid: String,
    pub congestion_control: String,
    pub offloads_off: bool,
    /// Bottleneck rate (tbf on the router's egress), Mbit/s; none: unlimited.
    pub rate_mbit: Option<f64>,
    /// Connect time through the router with no delay, median, and the offset taken off each
    /// direction's delay so the measured RTT is the target (half the base RTT).
    pub base_rtt_ms: f64,
    pub offset_ms: f64,
    /// Handshakes in flight at RTTs up to 5.6 ms (scaled with the RTT up to 40: network::in_flight; the
    /// zero point runs one at a time), and handshakes per scenario and point.
    pub parallel: usize,
    pub per_point: usize,
    /// After this many seconds a cell starts no new handshake once it has 10 (0: no budget).
    #[serde(default)]
    pub cell_budget_s: f64,
    /// Paquin et al.'s percentiles.
    pub percentiles: Vec<f64>,
    pub points: Vec<Point>,
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    pub rtt_ms: f64,
    /// Loss probability per packet and direction, percent.
    pub loss_pct: f64,
    pub link: Link,
    pub cells: Vec<Cell>,
}

/// What the link did before the point's handshakes: TCP connect times (one RTT each) with the
/// point's delay and no loss.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Link {
    pub connect_ns: Vec<u64>,
    pub rtt_median_ms: f64,
    /// max(0.3 ms, 3% of the target): a point whose measured RTT is further off is invalid.
    pub tolerance_ms: f64,
    pub valid: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub protocol: String,
    pub stack: RealStack,
    pub group: String,
    /// The classical group of the same stack and protocol, if this is not it.
    pub baseline: Option<String>,
    /// Per completed handshake, nanoseconds: connect() to handshake complete, and to the 32-byte
    /// echo back.
    pub ready_ns: Vec<u64>,
    pub echo_ns: Vec<u64>,
    pub failed: usize,
    /// At each of the section's percentiles, milliseconds.
    pub ready_ms: Vec<f64>,
    pub echo_ms: Vec<f64>,
    pub ready_mean_ms: f64,
    /// The router's counters over this cell, per direction [client to server, server to client].
    pub packets: [u64; 2],
    pub bytes: [u64; 2],
    pub data_packets: [u64; 2],
    pub dropped: [u64; 2],
    /// Per handshake (completed + failed).
    pub packets_per_handshake: [f64; 2],
    pub bytes_per_handshake: [f64; 2],
    /// dropped / packets, percent.
    pub observed_loss_pct: [f64; 2],
    /// CPU time of the client (this process) and of the server over the cell, percent of one core.
    pub client_busy_pct: f64,
    pub server_busy_pct: f64,
    /// The model's expected connect-to-complete time and its inputs (netmodel.rs).
    pub model: Model,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Model {
    /// Median connect-to-complete time at no delay and no loss: the compute and the path's own
    /// latency, measured through the same router.
    pub zero_ms: f64,
    /// Round trips before the client completes (TCP connect, then the TLS or SSH exchange).
    pub round_trips: f64,
    /// Data packets each way before completion, from the zero point's router counters.
    pub data_packets: [f64; 2],
    pub bytes: [f64; 2],
    pub expected_ms: f64,
}
