//! The `network` section (`pqprof network`): real handshakes through a router namespace that
//! delays and drops packets, on a grid of round-trip times and loss rates, with what the link
//! really did at each point and a model beside each measurement. Times in nanoseconds, as in
//! every other section (files of schema 2 stored milliseconds; `upgrade_v2` converts them on read).

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
    /// The emulated links' MTU, the client connection's MSS (TCP_MAXSEG) and the sender's initial
    /// congestion window in segments (schema 3; the ip route's initcwnd, else the kernel's
    /// TCP_INIT_CWND of 10, RFC 6928).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initcwnd: Option<u32>,
    pub offloads_off: bool,
    /// Bottleneck rate (tbf on the router's egress), Mbit/s; none: unlimited.
    pub rate_mbit: Option<f64>,
    /// Connect time through the router with no delay, median (since 2026-12-03 the zero point's
    /// link, whose RTT its handshakes include; before, a first probe, which ran cold on a VM), and
    /// the offset taken off each direction's delay so the measured RTT is the target (half the
    /// base RTT).
    pub base_rtt_ns: f64,
    pub offset_ns: f64,
    /// The most handshakes of a cell in flight at once (its threads: network::pace; the zero point
    /// runs one at a time), and handshakes per scenario and point (since 2026-12-02 four times as
    /// many at the zero point and three times at 0% and 1% loss, six times since f2cf533:
    /// network::handshakes_at). Files
    /// without `load_pct` ran every handshake of a cell at once, min(per_point, 40): a unit error
    /// ignored `parallel`.
    pub parallel: usize,
    /// The endpoints' offered load, percent of one core: a cell starts a handshake every zero-point
    /// median / load (files from 2026-12-02 on; before, handshakes started as threads came free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_pct: Option<f64>,
    pub per_point: usize,
    /// After this many seconds a cell starts no new handshake once it has 10 (0: no budget).
    #[serde(default)]
    pub cell_budget_s: f64,
    /// Paquin et al.'s percentiles.
    pub percentiles: Vec<f64>,
    /// How late a thread of this host woke past a 1 ms sleep (1 ns timer slack), 200 times before
    /// the first point, nanoseconds (files from 2026-12-03 08:35 on; that run's endpoints inherited the probe's 1 ns timer slack, later ones keep the default): a VM's vCPU that halts when
    /// idle wakes tens to hundreds of microseconds late, and the endpoints pay that at every flight
    /// they wait for (`figures::network::slow_wake`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(with = "super::packed::u64s")]
    pub wake_ns: Vec<u64>,
    /// The form of QUIC's loss model its cells were modelled by (`netmodel::QUIC_LOSS_MODEL`;
    /// files up to the make run of 2026-12-04 11:04 say nothing: the first).
    #[serde(default = "first_form")]
    pub quic_loss_model: u32,
    pub points: Vec<Point>,
    #[serde(default)]
    pub notes: Vec<super::Warning>,
}

/// The form a file without `quic_loss_model` was modelled by.
fn first_form() -> u32 {
    1
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    /// The target round-trip time of the point.
    pub rtt_ns: f64,
    /// Loss probability per packet and direction, percent.
    pub loss_pct: f64,
    pub link: Link,
    pub cells: Vec<Cell>,
    /// Resumed TLS 1.3 handshakes (psk_dhe_ke, each with the ticket its client's connection before
    /// brought, #34), at the zero point and the points without loss, each against its full twin
    /// in `cells`; in the same windows as those.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed: Vec<Cell>,
    /// QUIC handshakes whose address the server validated before its first flight (#35): with a
    /// NEW_TOKEN token the connection before brought (`Mode::Token`), or after a Retry
    /// (`Mode::Retry`), each cell naming its mode, against its full twin in `cells`; at the zero
    /// point and the points without loss, in the same windows (files from 2026-12-04 on).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validated: Vec<Cell>,
}

/// What the link did before the point's handshakes: TCP connect times (one RTT each) with the
/// point's delay and no loss.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Link {
    #[serde(with = "super::packed::u64s")]
    pub connect_ns: Vec<u64>,
    pub rtt_median_ns: f64,
    /// max(0.3 ms, 3% of the target): a point whose measured RTT is further off is invalid.
    pub tolerance_ns: f64,
    pub valid: bool,
    /// The delay the emulator applied each way, and how many probes it took to set it (files from
    /// 2026-12-02 on: the delay is corrected until a connect takes the target RTT, the endpoints'
    /// wake-up on this host being part of the path as the base RTT is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_way_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probes: Option<u32>,
}

/// A network scenario's first connection through the zero point, beside what it declared: the
/// group's key-share bytes (client's, server's) and the authentication its server presents.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CellEvidence {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_shares: Option<(usize, usize)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<super::AuthInfo>,
    pub seen: super::Evidence,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub protocol: String,
    /// The handshake's mode where it is not full: `Point::validated`'s cells (files from
    /// 2026-12-04 on; `resumed`'s cells say theirs by where they are).
    #[serde(default, skip_serializing_if = "super::Mode::is_full")]
    pub mode: super::Mode,
    /// The connections over the cell's window its server saw resume (resumed cells): every
    /// completed handshake, and at most the failed ones besides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumptions: Option<u64>,
    pub stack: RealStack,
    pub group: String,
    /// The authentication the server presented (schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<String>,
    /// The server's first flight, bytes (from the zero point's first connection), and the
    /// segments it takes at the section's MSS (schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_flight_bytes: Option<u64>,
    /// TCP or QUIC (files from 2026-12-03 on; absent: TCP).
    #[serde(default, skip_serializing_if = "super::Transport::is_tcp")]
    pub transport: super::Transport,
    /// The zero point's cells (files from 2026-12-07 on): what the scenario's first connection
    /// showed and what it declared, which `check` holds to each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<CellEvidence>,
    /// QUIC: the zero point's first connection's flights (Initial, server's first), from which the
    /// model's round trips follow (`netmodel::quic_round_trips`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic: Option<super::QuicEvidence>,
    /// The classical group of the same stack and protocol, if this is not it.
    pub baseline: Option<String>,
    /// The cell this one is set against, group and authentication (schema 3): the classical group
    /// with the baseline authentication, or the same group with the baseline authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<super::Against>,
    /// Per completed handshake, nanoseconds: connect() to handshake complete, and to the 32-byte
    /// echo back.
    #[serde(with = "super::packed::u64s")]
    pub ready_ns: Vec<u64>,
    #[serde(with = "super::packed::u64s")]
    pub echo_ns: Vec<u64>,
    pub failed: usize,
    /// At each of the section's percentiles.
    pub ready_percentiles_ns: Vec<f64>,
    pub echo_percentiles_ns: Vec<f64>,
    pub ready_mean_ns: f64,
    /// The 95% intervals of the p50 and p95 connect-to-complete times, and the p50's precision
    /// (files from 2026-12-01 on; `figures::network::ready_intervals`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_p50_ci95_ns: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_p95_ci95_ns: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<super::Precision>,
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
    /// CPU time of the client and of the server over the cell, percent of one core (`cpu`).
    pub client_busy_pct: f64,
    pub server_busy_pct: f64,
    /// The cell's measured window and each side's CPU over it, from which the busy percentages
    /// and the CPU per handshake are computed (files from 2026-12-02 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CellCpu>,
    /// How the handshakes started (files from 2026-12-02 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<CellPace>,
    /// How late the emulator released the packets it delayed, against each one's due time (files
    /// from 2026-12-02 on): the router's own share of what a cell reads above its model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<Release>,
    /// Per completed handshake, in the order of `ready_ns`: its wire time, nanoseconds — how long,
    /// between its connect() and its completion, at least one of its packets was held by the
    /// emulator (the router's own clock, per connection). The rest of `ready_ns` is endpoint time:
    /// nothing of the handshake was on the emulated wire, so it waited on the client, the server or
    /// their kernels (compute, scheduling, and under loss the retransmission timers). Files from
    /// 2026-12-03 on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(with = "super::packed::u64s")]
    pub wire_ns: Vec<u64>,
    /// Per completed handshake, in the order of `ready_ns`: the span of the server's first flight
    /// on the wire, nanoseconds — from its first data packet's arrival at the emulator to the last
    /// before the client's next data (the router's clock). At the zero point that is the time the
    /// server took to write ServerHello to Finished, what it does between its writes included (a
    /// stack that writes up to the Certificate and then signs: its signing, its record and
    /// socket work); past the initial window, at a longer RTT, it holds the wait for ACKs too.
    /// `Stall::server_flight_ns` takes the zero point's median. It means that for TLS 1.3 over TCP
    /// alone, whose client sends no data within the flight: over QUIC every ACK is a data packet
    /// and cuts the run, and SSH's first run is the server's banner. Files from 2026-12-05 10:44
    /// on; that run's file holds spans for every cell, later files for TLS 1.3 over TCP alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(with = "super::packed::u64s")]
    pub server_flight_ns: Vec<u64>,
    /// The cell's wire/endpoint split from `wire_ns` and `ready_ns` (`figures::network::split`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
    /// The model's expected connect-to-complete time and its inputs (netmodel.rs).
    pub model: Model,
}

/// A cell's handshake time split into wire and endpoint time, nanoseconds: the medians of each
/// (which need not add up to the handshake's median) and the means (which do).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub wire_p50_ns: f64,
    pub endpoint_p50_ns: f64,
    pub wire_mean_ns: f64,
    pub endpoint_mean_ns: f64,
}

/// A cell's measured window: its wall time and the CPU each endpoint used over it, nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CellCpu {
    pub wall_ns: f64,
    /// The client's CPU: the cell's client threads' own (since f2cf533; before, this process's,
    /// when a cell had the process to itself), with what the Go peer's client processes report;
    /// the clients were made before the window.
    pub client_ns: f64,
    /// The server process's CPU.
    pub server_ns: f64,
}

/// The emulator's release lateness over a cell: packets it released, their lateness summed and
/// the largest, nanoseconds, and how many were more than 1 ms late.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Release {
    pub released: u64,
    pub late_sum_ns: u64,
    pub late_max_ns: u64,
    pub late_over_1ms: u64,
}

/// How a cell's handshakes started: one every `gap_ns` (0: back to back) from `threads` client
/// threads (network::pace: the zero point's median over the offered load).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CellPace {
    pub gap_ns: f64,
    pub threads: usize,
    /// How late the starts were against their slots, mean over the handshakes and largest (every
    /// thread busy: at 78.7 ms more are in flight than threads, or one waits out an RTO).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_mean_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_max_ns: Option<f64>,
    /// How many cells shared the window, one after another: a cell's first start came a gap after
    /// the one before's last, while that one's stragglers still waited on the network
    /// (`cpu.wall_ns` is the cell's own: its first start to its last handshake's end). None: the
    /// cell alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_cells: Option<usize>,
    /// How many rounds the cell's handshakes ran in: at a point without loss, and at the zero
    /// point, every cell runs a share of its handshakes in each of the rounds, and each round runs
    /// those points one after another, so that a cell and its zero point sample the same minutes
    /// of a host whose speed drifts. None: one round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<usize>,
    /// The zero-point median the gap and threads were set from: in rounds, the zero point's
    /// first round, which a third of its handshakes gave (the model's `zero_ns` takes them all).
    /// None: one at a time, or a file before rounds (its model's `zero_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_ns: Option<f64>,
}

/// One flight on a handshake's critical path: who sends it, how many segments (QUIC: datagrams)
/// it takes, and whether it is a connection-opening packet (SYN, SYN-ACK), which only the initial
/// RTO recovers, or over QUIC a flight sent before its sender had an RTT sample, whose loss as a
/// whole only the initial probe timeout recovers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Flight {
    pub from_client: bool,
    pub segments: u32,
    #[serde(default)]
    pub opening: bool,
    /// QUIC's timers recover it (RFC 9002), not TCP's (files from 2026-12-04 on).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quic: bool,
    /// Whose QUIC sent it (its timers: `netmodel::quic_params`); quinn's in files before quic-go.
    #[serde(default, skip_serializing_if = "super::QuicSender::is_quinn")]
    pub sender: super::QuicSender,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Model {
    /// Median connect-to-complete time at no delay and no loss: the compute and the path's own
    /// latency, measured through the same router.
    pub zero_ns: f64,
    /// Round trips before the client completes (TCP connect, then the TLS or SSH exchange, and
    /// one more for each initial congestion window the server's first flight overflows).
    pub round_trips: f64,
    /// Data packets each way before completion, from the zero point's router counters.
    pub data_packets: [f64; 2],
    pub bytes: [f64; 2],
    pub expected_ns: f64,
    /// The round trip the model counts: the point's measured link RTT (files from 2026-12-02 on;
    /// before, the target RTT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_rtt_ns: Option<f64>,
    /// The flights on the critical path (netmodel::critical_path) and, from them, the modelled
    /// p50 and p95 under the point's loss (netmodel::loss_percentiles; files from 2026-12-02 on).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<Flight>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ns: Option<f64>,
    /// The compute a window stall hides (netmodel::stall_hidden_ns), taken off the zero point in
    /// `expected_ns` and the percentiles; none where the stack does not say when its client starts
    /// the chain (files before 2026-12-03 12:40) or it is not TLS 1.3 over TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
    /// What quic-go's pacer adds to a first flight it sends knowing the RTT already (a token's:
    /// netmodel::quic_go_pacing_ns), added to the zero point in `expected_ns` and the
    /// percentiles; none for every other cell (and in files before QUIC's model form 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacer: Option<Pacer>,
}

/// The paced part of a QUIC server's first flight: its datagrams, and the time the pacer holds
/// the last of them back at the point's RTT beyond what it held at the zero point's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pacer {
    pub datagrams: u64,
    pub delay_ns: f64,
}

/// What a TCP window stall can hide of a TLS 1.3 handshake's compute, with its inputs: the zero
/// point counts the server's work after its first write and the client's chain check in its time,
/// and at a round trip where the server's flight overflows the initial window, work that can run
/// while the flight waits for the client's ACKs leaves the critical path (netmodel::
/// stall_hidden_ns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stall {
    /// The composed suite whose flow gave the segments' medians, and its stack.
    pub suite: String,
    pub composed_stack: String,
    /// The server's first flight, its bytes up to the end of the Certificate (the flight less a
    /// CertificateVerify of the chain's signature size and a Finished of the suite's hash, each in
    /// a record of its own), and the initial window (initcwnd x MSS), bytes.
    pub flight_bytes: u64,
    pub certificate_end: u64,
    pub window_bytes: u64,
    /// The median of the server's segment that a stack which writes up to the Certificate before
    /// it signs runs after that write (`Stack::overlap`); none where the stack writes the flight
    /// at once, after its work.
    pub server_after_write_ns: Option<f64>,
    /// For such a stack, the median span of the server's first flight at the zero point
    /// (`Cell::server_flight_ns`), where the file has it: the server's whole time between its
    /// first write and its last, which is what the window's wait hides, in place of the composed
    /// segment (its calls alone). Files from 2026-12-05 10:44 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_flight_ns: Option<f64>,
    /// The median of the client's chain segment, and whether the client starts it as soon as the
    /// Certificate is in (`Stack::on_certificate`) rather than with the CertificateVerify.
    pub client_chain_ns: f64,
    pub chain_on_arrival: bool,
    /// What it hides at this point's round trip.
    pub hidden_ns: f64,
}

impl Cell {
    /// The median connect-to-complete time (the 50th of the section's percentiles).
    pub fn ready_median_ns(&self, n: &Network) -> Option<f64> {
        self.ready_at(n, 50.0)
    }

    /// Connect-to-complete at one of the section's percentiles.
    pub fn ready_at(&self, n: &Network, percentile: f64) -> Option<f64> {
        n.percentiles
            .iter()
            .position(|&p| p == percentile)
            .and_then(|i| self.ready_percentiles_ns.get(i))
            .copied()
    }
}

/// Reads the section of any readable schema: schema 2's milliseconds (`upgrade_v2`) are renamed
/// and converted on the way; a schema 3 section has none of those names, so it passes unchanged.
/// Only a schema 2 section goes through a JSON value: the rest of a file is read straight into its
/// types.
pub(super) fn read_section<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Network>, D::Error> {
    let Some(raw) = Option::<Box<serde_json::value::RawValue>>::deserialize(d)? else {
        return Ok(None);
    };
    let text = raw.get();
    // Only a section with a name ending in `_ms` can hold what `upgrade_v2` renames: any other is
    // read straight into its types, without a JSON value between (a third of a render's reading).
    if !text.contains("_ms\"") {
        return serde_json::from_str(text)
            .map(Some)
            .map_err(serde::de::Error::custom);
    }
    let mut v: serde_json::Value = serde_json::from_str(text).map_err(serde::de::Error::custom)?;
    upgrade_v2(&mut v);
    serde_json::from_value(v)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// Schema 2 stored the network section's times in milliseconds under `_ms` names: renamed and
/// converted to nanoseconds, in place, so an old file reads as the current schema.
pub(super) fn upgrade_v2(network: &mut serde_json::Value) {
    use serde_json::Value;
    fn ms_to_ns(obj: &mut serde_json::Map<String, Value>, from: &str, to: &str) {
        let Some(v) = obj.remove(from) else { return };
        let ns = |x: &Value| x.as_f64().map_or(Value::Null, |ms| Value::from(ms * 1e6));
        let converted = match &v {
            Value::Array(xs) => Value::Array(xs.iter().map(ns).collect()),
            x => ns(x),
        };
        obj.insert(to.into(), converted);
    }
    let Some(n) = network.as_object_mut() else {
        return;
    };
    ms_to_ns(n, "base_rtt_ms", "base_rtt_ns");
    ms_to_ns(n, "offset_ms", "offset_ns");
    let Some(points) = n.get_mut("points").and_then(Value::as_array_mut) else {
        return;
    };
    for p in points.iter_mut().filter_map(Value::as_object_mut) {
        ms_to_ns(p, "rtt_ms", "rtt_ns");
        if let Some(l) = p.get_mut("link").and_then(Value::as_object_mut) {
            ms_to_ns(l, "rtt_median_ms", "rtt_median_ns");
            ms_to_ns(l, "tolerance_ms", "tolerance_ns");
        }
        let Some(cells) = p.get_mut("cells").and_then(Value::as_array_mut) else {
            continue;
        };
        for c in cells.iter_mut().filter_map(Value::as_object_mut) {
            ms_to_ns(c, "ready_ms", "ready_percentiles_ns");
            ms_to_ns(c, "echo_ms", "echo_percentiles_ns");
            ms_to_ns(c, "ready_mean_ms", "ready_mean_ns");
            if let Some(m) = c.get_mut("model").and_then(Value::as_object_mut) {
                ms_to_ns(m, "zero_ms", "zero_ns");
                ms_to_ns(m, "expected_ms", "expected_ns");
            }
        }
    }
}
