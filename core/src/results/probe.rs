//! `pqprof probe`'s file: one endpoint a user named, asked over TLS 1.3 which key-exchange groups
//! it takes, whether it retries, how big its flights are and what the hybrid adds to the
//! handshake's latency. Each probe is a file of its own in results/probes/ (beside the machine
//! runs, not among them): the raw connections, in the order they were made, and the findings
//! computed from them (`figures::probe::findings`), which `check` recomputes.

use super::Host;
use serde::{Deserialize, Serialize};

/// Bumped whenever a field of a probe file changes meaning or a required one is added.
pub const PROBE_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeFile {
    pub probe_schema_version: u32,
    pub probe: Probe,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Probe {
    /// The endpoint as the user named it ("example.org:443").
    pub target: String,
    /// The address connected to ("93.184.215.14:443").
    pub address: String,
    /// The server name sent (SNI) and verified.
    pub sni: String,
    /// How the chain was checked: "verified against FILE", or "not verified (--insecure)".
    pub verification: String,
    pub date_utc: String,
    pub pqprof_version: String,
    /// The machine the probe ran from.
    pub host: Host,
    pub wall_seconds: f64,
    /// The politeness limits the probe kept to: connections started per second, and in all.
    pub per_second: f64,
    pub max_connections: usize,
    /// The maximum segment size of the probe's TCP connections (TCP_MAXSEG of the first that
    /// reports one); 0 where none did, and then no finding counts segments.
    pub mss_bytes: u32,
    /// Every connection made, in order.
    pub connections: Vec<ProbeConnection>,
    /// The chain the server sent on the first completed handshake, leaf first.
    pub chain: Vec<ProbeCertificate>,
    /// What the connections show, computed from them (`figures::probe::findings`).
    pub findings: ProbeFindings,
}

/// One TCP connection and the TLS 1.3 handshake on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeConnection {
    /// What the connection asks (`figures::probe::Scenario::name`).
    pub scenario: String,
    /// The groups offered, in the client's order; the first `shared` of them with a key share.
    pub offered: Vec<String>,
    pub shared: usize,
    /// The paired latency round it belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
    /// When it started, milliseconds after the probe's first connection.
    pub start_ms: f64,
    /// Why the handshake did not complete, in one line; none when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The group the server chose (from its ServerHello).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negotiated: Option<String>,
    /// The server answered the first ClientHello with a HelloRetryRequest.
    pub hello_retry: bool,
    /// Each ClientHello's bytes on the wire (its records), the first and, after a retry, the second.
    pub client_hello_bytes: Vec<u64>,
    /// The first ClientHello's key shares: (group code point, share bytes).
    pub client_shares: Vec<(u16, u64)>,
    /// The server's last flight before the client's Finished: from its ServerHello through its
    /// Finished (after a retry, the flight that answers the second ClientHello), bytes on the wire.
    pub server_flight_bytes: u64,
    /// The server's records up to and including its (last) ServerHello, hex: kept for the
    /// connections that find what the server takes, so `check` re-reads group and retry from them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_hello_hex: Option<String>,
    /// The CertificateVerify's signature scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<u16>,
    /// The TCP handshake (connect), ns: one round trip and the peer's accept.
    pub connect_ns: u64,
    /// From the first ClientHello's making (the client's key generation) until the client's
    /// Finished is written, ns.
    pub handshake_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeCertificate {
    pub bytes: u64,
    /// The certificate's public key ("ML-DSA-65", "ECDSA P-256", or its OID).
    pub key: String,
    /// The issuer's signature on it ("ECDSA with SHA-256", "ML-DSA-65", or its OID).
    pub signature: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeFindings {
    /// Each group offered alone with its share: taken or not.
    pub groups: Vec<GroupFinding>,
    /// The group chosen when the hybrid and X25519 are both offered with a share (server's
    /// preference where it has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_both_shares: Option<String>,
    /// X25519's share offered, the hybrid listed after it without one: the group chosen, and
    /// whether the server asked for the hybrid's share with a HelloRetryRequest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid_without_share: Option<(String, bool)>,
    /// The hybrid's ClientHello alone: bytes, and TCP segments at `mss_bytes` where it is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_hello: Option<(u64, Option<u64>)>,
    /// Per group taken: the server's flight, against the initial window.
    pub flights: Vec<FlightFinding>,
    pub chain_bytes: u64,
    /// Per group taken: the handshake's latency over the paired rounds.
    pub latency: Vec<LatencyFinding>,
    /// The hybrid's handshake minus X25519's, per round: median and 95% interval, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid_delta: Option<DeltaFinding>,
    /// The TCP handshake's median over every connection, ns: the path's round trip, near enough.
    pub connect_median_ns: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupFinding {
    pub group: String,
    pub taken: bool,
    /// Why not, when it was not (the alert or error, in one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlightFinding {
    pub group: String,
    pub bytes: u64,
    /// At `mss_bytes`; none where the MSS is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<u64>,
    /// The segments the server may send before the client's first acknowledgment.
    pub initial_window: u64,
    /// Round trips before the client can send data: 2 (TCP's handshake and TLS's), and 1 more
    /// for each time the flight outgrows the window as it doubles in slow start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_round_trips: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyFinding {
    pub group: String,
    pub handshakes: usize,
    pub median_ns: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_ns: Option<(f64, f64)>,
    /// (connect + handshake) / connect, medians: the round trips before the client can send data,
    /// TCP's included, where the path's round trip is long enough (2 ms or more) to tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_round_trips: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeltaFinding {
    pub pairs: usize,
    pub median_ns: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_ns: Option<(f64, f64)>,
}

/// Reads a probe file, naming the file in any error.
pub fn read_probe(path: &std::path::Path) -> anyhow::Result<ProbeFile> {
    use anyhow::Context;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let f: ProbeFile = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a probe file", path.display()))?;
    anyhow::ensure!(
        f.probe_schema_version == PROBE_SCHEMA_VERSION,
        "{}: probe schema {} (this pqprof reads {})",
        path.display(),
        f.probe_schema_version,
        PROBE_SCHEMA_VERSION
    );
    Ok(f)
}

/// Whether a JSON text is a probe file (it names the probe schema) rather than a machine's run.
pub fn is_probe_text(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Tag {
        probe_schema_version: Option<u32>,
    }
    serde_json::from_str::<Tag>(text).is_ok_and(|t| t.probe_schema_version.is_some())
}
