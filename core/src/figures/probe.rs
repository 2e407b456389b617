//! What a probe's connections show (`results::ProbeFindings`): which groups the endpoint takes, its
//! flights against TCP's initial window, and the hybrid's latency over paired rounds. `pqprof
//! probe` stores these and `check` recomputes them from the same connections, with this module's
//! scenarios and groups as the evidence each connection must agree with.

use crate::results::{
    DeltaFinding, FlightFinding, GroupFinding, LatencyFinding, Probe, ProbeConnection,
    ProbeFindings,
};
use crate::stats;

/// A TLS 1.3 key-exchange group a probe offers: its name, code point and the key share each side
/// sends, bytes. Sources: RFC 8446 section 4.2.7 and RFC 7748 (X25519: 32 bytes each way);
/// draft-ietf-tls-ecdhe-mlkem-00 section 4 (X25519MLKEM768: ML-KEM-768's 1,184-byte key or 1,088-
/// byte ciphertext, then X25519's 32; SecP256r1MLKEM768: P-256's 65-byte point first);
/// draft-connolly-tls-mlkem-key-agreement-05 (MLKEM768, 0x0201); sizes of ML-KEM-768 from FIPS 203
/// table 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    pub name: &'static str,
    pub code_point: u16,
    pub client_share: u64,
    pub server_share: u64,
}

/// The groups a probe offers alone, in the order it offers them.
pub const GROUPS: [Group; 4] = [
    Group {
        name: CLASSICAL,
        code_point: 0x001d,
        client_share: 32,
        server_share: 32,
    },
    Group {
        name: HYBRID,
        code_point: 0x11ec,
        client_share: 1216,
        server_share: 1120,
    },
    Group {
        name: "SecP256r1MLKEM768",
        code_point: 0x11eb,
        client_share: 1249,
        server_share: 1153,
    },
    Group {
        name: "MLKEM768",
        code_point: 0x0201,
        client_share: 1184,
        server_share: 1088,
    },
];

/// The hybrid whose cost a probe measures, and the classical group it is set against.
pub const HYBRID: &str = "X25519MLKEM768";
pub const CLASSICAL: &str = "X25519";

/// The segments a TCP sender may send before its first acknowledgment: RFC 6928's initial window,
/// Linux's default since 2.6.39. The prediction assumes it; a server tuned to a larger one (some
/// CDNs are) sends more at once, and its round trips seen then say so.
pub const INITIAL_WINDOW_SEGMENTS: u64 = 10;

/// The shortest round trip (ns) at which round trips are counted from times: a TLS 1.3 handshake
/// computes for a millisecond or two at most (an ML-DSA-87 signature and a hybrid key exchange on
/// a slow core), so from 2 ms on a round trip more shows as about one more in the ratio, and
/// below it the compute alone can.
const ROUND_TRIPS_VISIBLE_NS: f64 = 2e6;

pub fn group(name: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.name == name)
}

pub fn group_by_code(code: u16) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.code_point == code)
}

/// What one connection of a probe asks the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scenario {
    /// One group offered, with its share: does the server take it?
    Alone(&'static str),
    /// The hybrid and X25519 offered, each with a share: which does the server choose?
    BothShares,
    /// X25519's share offered, the hybrid listed after it without one: does the server ask for
    /// the hybrid's share with a HelloRetryRequest, or take X25519?
    HybridWithoutShare,
    /// One group alone, in a paired latency round.
    Round(&'static str, usize),
}

impl Scenario {
    /// How a connection records its scenario.
    pub fn name(&self) -> &'static str {
        match self {
            Scenario::Alone(_) => "alone",
            Scenario::BothShares => "both shares",
            Scenario::HybridWithoutShare => "hybrid without share",
            Scenario::Round(..) => "round",
        }
    }

    /// The groups offered, in order, and how many of them (from the first) carry a share.
    pub fn offered(&self) -> (Vec<&'static str>, usize) {
        match self {
            Scenario::Alone(g) | Scenario::Round(g, _) => (vec![g], 1),
            // rustls sends the hybrid's X25519 half as X25519's share (one key, two shares).
            Scenario::BothShares => (vec![HYBRID, CLASSICAL], 2),
            Scenario::HybridWithoutShare => (vec![CLASSICAL, HYBRID], 1),
        }
    }

    pub fn round(&self) -> Option<usize> {
        match self {
            Scenario::Round(_, r) => Some(*r),
            _ => None,
        }
    }

    /// The scenario a stored connection claims, if its name, groups and round fit one.
    pub fn of(c: &ProbeConnection) -> Option<Scenario> {
        let s = match (c.scenario.as_str(), c.round) {
            ("alone", None) => Scenario::Alone(group(c.offered.first()?)?.name),
            ("both shares", None) => Scenario::BothShares,
            ("hybrid without share", None) => Scenario::HybridWithoutShare,
            ("round", Some(r)) => Scenario::Round(group(c.offered.first()?)?.name, r),
            _ => return None,
        };
        let (offered, shared) = s.offered();
        (offered == c.offered && shared == c.shared).then_some(s)
    }
}

/// The connections of a probe, in order: every group alone, the two preference questions, then
/// `rounds` paired rounds of X25519 and the hybrid, the order within a round alternating so that
/// neither always goes first.
pub fn plan(rounds: usize) -> Vec<Scenario> {
    let mut out: Vec<Scenario> = GROUPS.iter().map(|g| Scenario::Alone(g.name)).collect();
    out.push(Scenario::BothShares);
    out.push(Scenario::HybridWithoutShare);
    for r in 0..rounds {
        let pair = [Scenario::Round(CLASSICAL, r), Scenario::Round(HYBRID, r)];
        if r % 2 == 0 {
            out.extend(pair);
        } else {
            out.extend(pair.into_iter().rev());
        }
    }
    out
}

/// The rounds that fit `max_connections` with the questions before them, at most `wanted`.
pub fn rounds_within(max_connections: usize, wanted: usize) -> usize {
    let questions = plan(0).len();
    wanted.min(max_connections.saturating_sub(questions) / 2)
}

/// TCP segments of `bytes` at `mss`; none where the MSS is not known (0).
pub fn segments(bytes: u64, mss: u32) -> Option<u64> {
    (mss > 0).then(|| bytes.div_ceil(u64::from(mss)))
}

/// Round trips before the client can send data, the TCP handshake's included: one for TCP, one
/// for TLS 1.3's full handshake, and one more each time the server's flight outgrows the window
/// it may send, which doubles each round trip in slow start (RFC 5681 section 3.1).
pub fn predicted_round_trips(flight_segments: u64, initial_window: u64) -> u64 {
    let (mut left, mut window, mut trips) = (flight_segments, initial_window.max(1), 2);
    while left > window {
        left -= window;
        window *= 2;
        trips += 1;
    }
    trips
}

/// The lower median of integers (a size that was sent, not a mean of two).
fn lower_median(xs: &mut [u64]) -> Option<u64> {
    xs.sort_unstable();
    xs.get(xs.len().checked_sub(1)? / 2).copied()
}

fn completed(c: &ProbeConnection) -> bool {
    c.error.is_none() && c.negotiated.is_some()
}

/// Every finding of `p`'s connections.
pub fn findings(p: &Probe) -> ProbeFindings {
    let conns = &p.connections;
    let scenario = |c: &ProbeConnection| Scenario::of(c);
    let alone = |name: &'static str| {
        conns
            .iter()
            .find(|c| scenario(c) == Some(Scenario::Alone(name)))
    };
    let groups = GROUPS
        .iter()
        .filter_map(|g| {
            let c = alone(g.name)?;
            let taken = completed(c) && c.negotiated.as_deref() == Some(g.name);
            Some(GroupFinding {
                group: g.name.into(),
                taken,
                reason: (!taken).then(|| {
                    c.error.clone().unwrap_or_else(|| {
                        format!("chose {}", c.negotiated.as_deref().unwrap_or("nothing"))
                    })
                }),
            })
        })
        .collect::<Vec<_>>();
    let first_of = |s: Scenario| conns.iter().find(|c| scenario(c) == Some(s.clone()));
    let with_both_shares = first_of(Scenario::BothShares)
        .filter(|c| completed(c))
        .and_then(|c| c.negotiated.clone());
    let hybrid_without_share = first_of(Scenario::HybridWithoutShare)
        .filter(|c| completed(c))
        .and_then(|c| Some((c.negotiated.clone()?, c.hello_retry)));
    let client_hello = alone(HYBRID)
        .and_then(|c| c.client_hello_bytes.first())
        .map(|&b| (b, segments(b, p.mss_bytes)));
    let flights = groups
        .iter()
        .filter(|g| g.taken)
        .filter_map(|g| {
            let mut sizes: Vec<u64> = conns
                .iter()
                .filter(|c| completed(c) && !c.hello_retry)
                .filter(|c| c.negotiated.as_deref() == Some(g.group.as_str()))
                .map(|c| c.server_flight_bytes)
                .collect();
            let bytes = lower_median(&mut sizes)?;
            let segs = segments(bytes, p.mss_bytes);
            Some(FlightFinding {
                group: g.group.clone(),
                bytes,
                segments: segs,
                initial_window: INITIAL_WINDOW_SEGMENTS,
                predicted_round_trips: segs
                    .map(|n| predicted_round_trips(n, INITIAL_WINDOW_SEGMENTS)),
            })
        })
        .collect();
    let connects: Vec<f64> = conns
        .iter()
        .filter(|c| c.connect_ns > 0)
        .map(|c| c.connect_ns as f64)
        .collect();
    let connect_median_ns = if connects.is_empty() {
        0.0
    } else {
        stats::median(&connects)
    };
    // A round that retried took a round trip more than its group needs: not its latency.
    let round_times = |name: &str| -> Vec<(usize, f64)> {
        conns
            .iter()
            .filter(|c| completed(c) && !c.hello_retry && c.negotiated.as_deref() == Some(name))
            .filter_map(|c| match scenario(c)? {
                Scenario::Round(g, r) if g == name => Some((r, c.handshake_ns as f64)),
                _ => None,
            })
            .collect()
    };
    let latency = [CLASSICAL, HYBRID]
        .iter()
        .filter_map(|&name| {
            let xs: Vec<f64> = round_times(name).into_iter().map(|(_, t)| t).collect();
            if xs.is_empty() {
                return None;
            }
            let median_ns = stats::median(&xs);
            Some(LatencyFinding {
                group: name.into(),
                handshakes: xs.len(),
                median_ns,
                ci95_ns: interval(&xs),
                observed_round_trips: (connect_median_ns >= ROUND_TRIPS_VISIBLE_NS)
                    .then(|| (connect_median_ns + median_ns) / connect_median_ns),
            })
        })
        .collect();
    let classical = round_times(CLASSICAL);
    let diffs: Vec<f64> = round_times(HYBRID)
        .into_iter()
        .filter_map(|(r, h)| {
            classical
                .iter()
                .find(|(rc, _)| *rc == r)
                .map(|(_, c)| h - c)
        })
        .collect();
    let hybrid_delta = (!diffs.is_empty()).then(|| DeltaFinding {
        pairs: diffs.len(),
        median_ns: stats::median(&diffs),
        ci95_ns: interval(&diffs),
    });
    ProbeFindings {
        groups,
        with_both_shares,
        hybrid_without_share,
        client_hello,
        flights,
        chain_bytes: p.chain.iter().map(|c| c.bytes).sum(),
        latency,
        hybrid_delta,
        connect_median_ns,
    }
}

/// The bootstrap 95% interval of a median (`stats::median_ci95`, fixed seed: `check` gets the
/// same); none under 5 values, where it says nothing.
fn interval(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 5 {
        return None;
    }
    stats::median_ci95(xs, stats::BOOTSTRAP_RESAMPLES, stats::BOOTSTRAP_SEED)
}

/// A TLS 1.3 signature scheme's name. Source: IANA's TLS SignatureScheme registry;
/// draft-ietf-tls-mldsa-00 section 2 (ML-DSA, 0x0904-0x0906).
pub fn scheme_name(code: u16) -> String {
    match code {
        0x0403 => "ecdsa_secp256r1_sha256".into(),
        0x0503 => "ecdsa_secp384r1_sha384".into(),
        0x0603 => "ecdsa_secp521r1_sha512".into(),
        0x0804 => "rsa_pss_rsae_sha256".into(),
        0x0805 => "rsa_pss_rsae_sha384".into(),
        0x0806 => "rsa_pss_rsae_sha512".into(),
        0x0807 => "ed25519".into(),
        0x0808 => "ed448".into(),
        0x0809 => "rsa_pss_pss_sha256".into(),
        0x0904 => "mldsa44".into(),
        0x0905 => "mldsa65".into(),
        0x0906 => "mldsa87".into(),
        c => format!("0x{c:04x}"),
    }
}

/// A connection of scenario `s` as a probe records one that completed with the first group it
/// offered, its shares those of the groups it shared (for the tests of this and of `check`).
#[cfg(test)]
pub(crate) fn test_connection(s: &Scenario) -> ProbeConnection {
    let (offered, shared) = s.offered();
    ProbeConnection {
        scenario: s.name().into(),
        offered: offered.iter().map(|g| g.to_string()).collect(),
        shared,
        round: s.round(),
        start_ms: 0.0,
        error: None,
        negotiated: Some(offered[0].into()),
        hello_retry: false,
        client_hello_bytes: vec![1500],
        client_shares: offered[..shared]
            .iter()
            .filter_map(|g| group(g))
            .map(|g| (g.code_point, g.client_share))
            .collect(),
        server_flight_bytes: 2000,
        server_hello_hex: None,
        scheme: None,
        connect_ns: 100,
        handshake_ns: 1000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_doubles_in_slow_start() {
        // 10 segments fit the first window: TCP's round trip and TLS's.
        assert_eq!(predicted_round_trips(10, 10), 2);
        // 11: one more; 30 = 10 + 20: one more; 31: two more (10 + 20 + 40).
        assert_eq!(predicted_round_trips(11, 10), 3);
        assert_eq!(predicted_round_trips(30, 10), 3);
        assert_eq!(predicted_round_trips(31, 10), 4);
        assert_eq!(segments(14_480, 1448), Some(10));
        assert_eq!(segments(14_481, 1448), Some(11));
        assert_eq!(segments(14_481, 0), None);
    }

    #[test]
    fn the_plan_asks_every_group_then_pairs_rounds_in_alternating_order() {
        let p = plan(2);
        assert_eq!(p.len(), 4 + 2 + 4);
        assert_eq!(p[0], Scenario::Alone("X25519"));
        assert_eq!(p[6], Scenario::Round(CLASSICAL, 0));
        assert_eq!(p[7], Scenario::Round(HYBRID, 0));
        assert_eq!(p[8], Scenario::Round(HYBRID, 1));
        assert_eq!(p[9], Scenario::Round(CLASSICAL, 1));
        // 300 connections: the 6 questions and 147 rounds.
        assert_eq!(rounds_within(300, 1000), 147);
        assert_eq!(rounds_within(300, 60), 60);
        assert_eq!(rounds_within(3, 60), 0);
    }

    fn conn(s: &Scenario, negotiated: Option<&str>, handshake_ns: u64) -> ProbeConnection {
        let mut c = test_connection(s);
        c.error = negotiated.map_or(Some("alert handshake_failure".into()), |_| None);
        c.negotiated = negotiated.map(String::from);
        c.client_shares = Vec::new();
        c.handshake_ns = handshake_ns;
        c
    }

    #[test]
    fn findings_pair_each_round_and_name_what_was_refused() {
        use crate::results::Probe;
        let mut connections = Vec::new();
        for s in plan(5) {
            let (negotiated, t) = match &s {
                Scenario::Alone(g) if *g == "MLKEM768" => (None, 0),
                Scenario::Alone(g) => (Some(*g), 1000),
                Scenario::BothShares | Scenario::HybridWithoutShare => (Some(HYBRID), 1000),
                // X25519 takes 1,000 ns + r, the hybrid 1,100 + 2r: differences 100 + r.
                Scenario::Round(g, r) if *g == CLASSICAL => (Some(*g), 1000 + *r as u64),
                Scenario::Round(g, r) => (Some(*g), 1100 + 2 * *r as u64),
            };
            connections.push(conn(&s, negotiated, t));
        }
        let p: Probe = serde_json::from_value(serde_json::json!({
            "target": "t", "address": "a", "sni": "s", "verification": "v", "date_utc": "d",
            "pqprof_version": "0", "wall_seconds": 0.0, "per_second": 5.0, "max_connections": 300,
            "mss_bytes": 1448, "chain": [{"bytes": 500, "key": "k", "signature": "s"}],
            "host": {"hostname": "h", "cpu_model": "c", "arch": "x86_64", "cpu_extensions": [],
                     "cores": 2},
            "connections": connections,
            "findings": {"groups": [], "flights": [], "chain_bytes": 0, "latency": [],
                         "connect_median_ns": 0.0}
        }))
        .unwrap();
        let f = findings(&p);
        assert_eq!(f.groups.len(), 4);
        assert!(f.groups[..3].iter().all(|g| g.taken));
        assert_eq!(
            f.groups[3].reason.as_deref(),
            Some("alert handshake_failure")
        );
        assert_eq!(f.with_both_shares.as_deref(), Some(HYBRID));
        assert_eq!(f.client_hello, Some((1500, Some(2))));
        let d = f.hybrid_delta.unwrap();
        // Differences 100..=104: median 102.
        assert_eq!((d.pairs, d.median_ns), (5, 102.0));
        assert_eq!(f.latency[0].median_ns, 1002.0);
        assert_eq!(f.latency[1].median_ns, 1104.0);
        // A 100 ns connect says nothing of round trips.
        assert_eq!(f.latency[0].observed_round_trips, None);
        assert_eq!(f.chain_bytes, 500);
        assert_eq!(f.flights[0].segments, Some(2));
    }
}
