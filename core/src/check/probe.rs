//! `check` of a probe file: the findings recomputed from its connections, each connection's
//! evidence held to the scenario it claims (groups offered and shared, the group chosen, the
//! retry, the key shares' sizes, the ServerHello's own bytes where they were kept), and the
//! probe's politeness limits held to the times its connections started.

use super::Problem;
use crate::figures::probe::{self as figures, Scenario};
use crate::parse::tls;
use crate::results::{Probe, ProbeConnection};

/// Every way a probe file disagrees with its own connections; empty means it holds.
pub fn check(p: &Probe) -> Vec<Problem> {
    let mut problems = Vec::new();
    let recomputed = figures::findings(p);
    if recomputed != p.findings {
        let (stored, again) = (
            serde_json::to_value(&p.findings).unwrap_or_default(),
            serde_json::to_value(&recomputed).unwrap_or_default(),
        );
        // Every key either side holds: a finding stored and no longer recomputed is named too.
        let mut keys: Vec<&String> = again
            .as_object()
            .into_iter()
            .chain(stored.as_object())
            .flat_map(|o| o.keys())
            .collect();
        keys.sort();
        keys.dedup();
        let differ: Vec<String> = keys
            .into_iter()
            .filter(|k| stored.get(k.as_str()) != again.get(k.as_str()))
            .map(|k| {
                let show =
                    |v: Option<&serde_json::Value>| v.map_or("none".into(), |v| v.to_string());
                format!(
                    "{k} (stored {}, recomputed {})",
                    show(stored.get(k.as_str())),
                    show(again.get(k.as_str()))
                )
            })
            .collect();
        problems.push(Problem::recomputed(format!(
            "the findings differ from the connections': {}",
            differ.join("; ")
        )));
    }
    if p.connections.len() > p.max_connections {
        problems.push(Problem::bound(format!(
            "{} connections made, over the limit of {}",
            p.connections.len(),
            p.max_connections
        )));
    }
    // Start times 1/rate apart or more: the limiter sleeps to the next slot, so only the clock's
    // rounding (microseconds) can bring two closer.
    let gap_ms = 1000.0 / p.per_second;
    for (i, w) in p.connections.windows(2).enumerate() {
        if w[1].start_ms - w[0].start_ms < gap_ms - 0.01 {
            problems.push(Problem::bound(format!(
                "connections {} and {} started {:.3} ms apart, under the {:.1} ms of {} per second",
                i,
                i + 1,
                w[1].start_ms - w[0].start_ms,
                gap_ms,
                p.per_second
            )));
        }
    }
    for (i, c) in p.connections.iter().enumerate() {
        for why in evidence(c) {
            problems.push(Problem::evidence(format!(
                "connection {i} ({}, {}): {why}",
                c.scenario,
                c.offered.join(" + ")
            )));
        }
    }
    // Every completed flight carries the chain (one server, one chain: the probe records the
    // first).
    let chain: u64 = p.chain.iter().map(|c| c.bytes).sum();
    for (i, c) in p.connections.iter().enumerate() {
        if c.error.is_none() && c.server_flight_bytes < chain {
            problems.push(Problem::evidence(format!(
                "connection {i}: a flight of {} bytes cannot carry the {chain}-byte chain",
                c.server_flight_bytes
            )));
        }
    }
    if p.connections.iter().any(|c| c.error.is_none()) && p.chain.is_empty() {
        problems.push(Problem::incomplete(
            "handshakes completed, but no chain is recorded",
        ));
    }
    problems
        .into_iter()
        .map(|p| p.in_section("probe"))
        .collect()
}

/// What in one connection contradicts its scenario.
fn evidence(c: &ProbeConnection) -> Vec<String> {
    let mut out = Vec::new();
    let Some(scenario) = Scenario::of(c) else {
        return vec!["no scenario of a probe offers these groups so".into()];
    };
    let (offered, shared) = scenario.offered();
    let shares: Vec<(u16, u64)> = offered[..shared]
        .iter()
        .filter_map(|g| figures::group(g))
        .map(|g| (g.code_point, g.client_share))
        .collect();
    // A connection that failed before its ClientHello went out recorded none.
    if !c.client_hello_bytes.is_empty() && c.client_shares != shares {
        out.push(format!(
            "the ClientHello's key shares are {:?}, the scenario's {:?}",
            c.client_shares, shares
        ));
    }
    if c.error.is_some() {
        return out;
    }
    let Some(negotiated) = c.negotiated.as_deref() else {
        out.push("completed, with no group chosen".into());
        return out;
    };
    if !offered.contains(&negotiated) {
        out.push(format!("{negotiated} was chosen, and not offered"));
    }
    // A group offered without a share can be chosen only after a retry asked for its share. (A
    // retry for a group that had one is legal: a server may retry to send a cookie alone.)
    if !c.hello_retry && !offered[..shared].contains(&negotiated) {
        out.push(format!(
            "{negotiated} was chosen without a HelloRetryRequest, and offered without a share"
        ));
    }
    if c.client_hello_bytes.len() != 1 + usize::from(c.hello_retry) {
        out.push(format!(
            "{} ClientHellos recorded, for {} retry",
            c.client_hello_bytes.len(),
            if c.hello_retry { "a" } else { "no" }
        ));
    }
    if let Some(hex) = &c.server_hello_hex {
        match server_hello(hex) {
            None => out.push("its stored ServerHello does not parse".into()),
            Some((retry, share)) => {
                if retry != c.hello_retry {
                    out.push(format!(
                        "its ServerHello's bytes {} a HelloRetryRequest",
                        if retry { "open with" } else { "have no" }
                    ));
                }
                let expected = figures::group(negotiated).map(|g| (g.code_point, g.server_share));
                if share != expected {
                    out.push(format!(
                        "its ServerHello's key share is {share:?}, {negotiated}'s {expected:?}"
                    ));
                }
            }
        }
    }
    out
}

/// From the server's records up to its last ServerHello: whether they open with a retry, and the
/// last ServerHello's key share (code point, bytes).
fn server_hello(hex: &str) -> Option<(bool, Option<(u16, u64)>)> {
    let bytes = crate::parse::from_hex(hex)?;
    if tls::records(&bytes).is_empty() {
        return None;
    }
    Some((
        tls::is_hello_retry(&bytes),
        tls::last_server_share(&bytes).map(|(code, n)| (code, n as u64)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(s: &Scenario) -> ProbeConnection {
        figures::test_connection(s)
    }

    #[test]
    fn a_connection_is_held_to_its_scenario() {
        let ok = conn(&Scenario::Alone("X25519MLKEM768"));
        assert!(evidence(&ok).is_empty(), "{:?}", evidence(&ok));
        let mut other = ok.clone();
        other.negotiated = Some("X25519".into());
        assert!(evidence(&other)[0].contains("X25519 was chosen, and not offered"));
        // A retry for a group that had a share (a cookie) is legal.
        let mut retry = ok.clone();
        retry.hello_retry = true;
        retry.client_hello_bytes = vec![1500, 1500];
        assert!(evidence(&retry).is_empty(), "{:?}", evidence(&retry));
        // The hybrid chosen, offered without a share, with no retry: impossible.
        let mut unasked = conn(&Scenario::HybridWithoutShare);
        unasked.negotiated = Some("X25519MLKEM768".into());
        assert!(evidence(&unasked)[0].contains("without a HelloRetryRequest"));
        // A connection that failed before its ClientHello went out holds no shares.
        let mut early = ok.clone();
        early.error = Some("the server closed the connection before answering".into());
        early.client_hello_bytes = Vec::new();
        early.client_shares = Vec::new();
        assert!(evidence(&early).is_empty(), "{:?}", evidence(&early));
        // The hybrid offered without a share: chosen after a retry is the expected answer.
        let mut asked = conn(&Scenario::HybridWithoutShare);
        asked.negotiated = Some("X25519MLKEM768".into());
        asked.hello_retry = true;
        asked.client_hello_bytes = vec![300, 1500];
        assert!(evidence(&asked).is_empty(), "{:?}", evidence(&asked));
        let mut shares = ok.clone();
        shares.client_shares = vec![(0x1d, 32)];
        assert!(evidence(&shares)[0].contains("key shares"));
        let mut unknown = ok;
        unknown.offered = vec!["P-521".into()];
        assert!(evidence(&unknown)[0].contains("no scenario"));
    }

    #[test]
    fn a_stored_server_hello_is_read_again() {
        // A ServerHello record: type, length, version, random, empty session id, suite,
        // compression, then key_share (0x0033) with X25519's 32 bytes.
        let mut body = vec![3, 3];
        body.extend([7; 32]);
        body.extend([0, 0x13, 0x01, 0]);
        let ext = [&[0, 0x33, 0, 36, 0, 0x1d, 0, 32][..], &[9; 32]].concat();
        body.extend((ext.len() as u16).to_be_bytes());
        body.extend(ext);
        let mut msg = vec![2, 0, 0, body.len() as u8];
        msg.extend(body);
        let mut rec = vec![22, 3, 3, 0, msg.len() as u8];
        rec.extend(msg);
        let hex = crate::parse::to_hex(&rec);
        assert_eq!(server_hello(&hex), Some((false, Some((0x1d, 32)))));
        let mut c = conn(&Scenario::Alone("X25519"));
        c.server_hello_hex = Some(hex.clone());
        assert!(evidence(&c).is_empty(), "{:?}", evidence(&c));
        // Split across two records, it reads the same.
        let split = [&rec[..5], &rec[5..40]].concat();
        let mut split = [&[22, 3, 3, 0, 35][..], &split[5..]].concat();
        split.extend([22, 3, 3, 0, (rec.len() - 40) as u8]);
        split.extend(&rec[40..]);
        let hex2 = crate::parse::to_hex(&split);
        assert_eq!(server_hello(&hex2), Some((false, Some((0x1d, 32)))));
        assert_eq!(server_hello("0"), None);
        assert_eq!(server_hello(&hex[..hex.len() - 2]), None);
    }

    #[test]
    fn a_stored_probe_holds_and_each_kind_of_edit_is_caught() {
        let text = include_str!("../../tests/data/probes/lab-nginx-mldsa65-loopback.json");
        let stored: crate::results::ProbeFile = serde_json::from_str(text).unwrap();
        assert!(
            check(&stored.probe).is_empty(),
            "{:?}",
            check(&stored.probe)
        );
        let mut findings = stored.probe.clone();
        findings.findings.chain_bytes += 1;
        assert!(check(&findings)[0].is(super::super::Kind::Recomputed, "chain_bytes"));
        let mut evidence = stored.probe.clone();
        let c = evidence
            .connections
            .iter_mut()
            .find(|c| c.error.is_none())
            .unwrap();
        c.negotiated = Some("MLKEM768".into());
        assert!(check(&evidence).iter().any(|p| p.is(
            super::super::Kind::Evidence,
            "MLKEM768 was chosen, and not offered"
        )));
        let mut rate = stored.probe.clone();
        rate.connections[1].start_ms = rate.connections[0].start_ms + 1.0;
        assert!(check(&rate)
            .iter()
            .any(|p| p.is(super::super::Kind::Bound, "started 1.000 ms apart")));
        let mut flight = stored.probe;
        for c in &mut flight.connections {
            c.server_flight_bytes = 100;
        }
        assert!(check(&flight)
            .iter()
            .any(|p| p.is(super::super::Kind::Evidence, "cannot carry")));
    }
}
