//! Who computes what, and when: a handshake's message flow (`suites/flights.toml`), a suite's
//! phases placed in it, and the three figures that follow: the client's CPU, the server's CPU and
//! the latency along the critical path.
//!
//! A protocol's flow is a list of segments in the order the handshake runs them, each one side's
//! work between two of its messages (RFC 8446 §2 for TLS 1.3; RFC 4253 §7-8 and RFC 9142 for SSH).
//! Each operation's calls in a suite are shared out among the segments by fixed shares. A stack may
//! run two segments of opposite sides at once (`Stack::overlap`: an OpenSSL 3.5 server writes
//! ServerHello to Certificate before it signs, so the client verifies the chain while the server
//! signs); the latency then counts the longer of the two, where the plain sum counts both.

use crate::algorithm::Operation;
use crate::results::{Flow, FlowPart, Phase, Segment, Side, SuitePhase};
use crate::suite::SuiteError;
use serde::Deserialize;
use std::path::Path;
use toml::Spanned;

/// A protocol's flow as `suites/flights.toml` declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowDef {
    pub protocol: String,
    /// (name, side), in the order the handshake runs them.
    pub(crate) segments: Vec<(String, Side)>,
    /// Per operation, each segment's share of its calls (indices into `segments`).
    pub(crate) shares: Vec<(Operation, Vec<(usize, f64)>)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDef {
    kind: String,
    protocol: Vec<ProtocolDef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProtocolDef {
    name: Spanned<String>,
    segments: Vec<SegmentDef>,
    operation: Vec<OperationDef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SegmentDef {
    name: Spanned<String>,
    side: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OperationDef {
    operation: Spanned<String>,
    shares: Spanned<toml::Table>,
}

/// The sides the protocols fix for an operation, whatever a flights file says: in TLS 1.3 and SSH
/// the client makes the KEM key pair and decapsulates, the server encapsulates and signs, the
/// client verifies (RFC 8446 §4.2.8, §4.4.3; RFC 9142; draft-ietf-tls-ecdhe-mlkem;
/// draft-kampanakis-curdle-ssh-pq-ke). `None`: both sides make such calls.
pub(crate) fn fixed_side(op: Operation) -> Option<Side> {
    match op {
        Operation::KemKeygen | Operation::KemDecaps | Operation::SigVerify => Some(Side::Client),
        Operation::KemEncaps | Operation::SigSign => Some(Side::Server),
        _ => None,
    }
}

/// Every protocol's flow from the flights files of a suite folder (or the file given); none where
/// there is no such file.
pub fn load(path: &Path) -> Result<Vec<FlowDef>, SuiteError> {
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        let mut v: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| SuiteError::Io {
                file: path.to_path_buf(),
                source: e,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        v.sort();
        v
    } else {
        vec![path.to_path_buf()]
    };
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| SuiteError::Io {
            file: f.clone(),
            source: e,
        })?;
        if crate::suite::is_flights_file(&text) {
            out.extend(parse(&f, &text)?);
        }
    }
    Ok(out)
}

/// Parses and validates a flights file: known sides and operations, shares naming segments of the
/// file and adding up to 1, and every operation the protocols fix on the side they fix it.
pub(crate) fn parse(file: &Path, text: &str) -> Result<Vec<FlowDef>, SuiteError> {
    let at = |offset: usize| crate::suite::locate(file, text, offset);
    let invalid = |offset: usize, message: String| SuiteError::Invalid {
        at: at(offset),
        message,
    };
    let def: FileDef = toml::from_str(text).map_err(|e| {
        invalid(
            e.span().map_or(0, |s| s.start),
            e.message().trim().to_string(),
        )
    })?;
    if def.kind != "flights" {
        return Err(invalid(
            0,
            format!("kind \"{}\" is not \"flights\"", def.kind),
        ));
    }
    let mut out: Vec<FlowDef> = Vec::new();
    for p in &def.protocol {
        if out.iter().any(|f| &f.protocol == p.name.get_ref()) {
            return Err(invalid(
                p.name.span().start,
                format!("protocol \"{}\" is declared twice", p.name.get_ref()),
            ));
        }
        let mut segments: Vec<(String, Side)> = Vec::new();
        for s in &p.segments {
            let side = Side::from_name(s.side.get_ref()).ok_or_else(|| {
                invalid(
                    s.side.span().start,
                    format!("unknown side \"{}\": client or server", s.side.get_ref()),
                )
            })?;
            if segments.iter().any(|(n, _)| n == s.name.get_ref()) {
                return Err(invalid(
                    s.name.span().start,
                    format!("segment \"{}\" is named twice", s.name.get_ref()),
                ));
            }
            segments.push((s.name.get_ref().clone(), side));
        }
        if segments.is_empty() {
            return Err(invalid(
                p.name.span().start,
                format!("protocol \"{}\" has no segments", p.name.get_ref()),
            ));
        }
        let mut shares: Vec<(Operation, Vec<(usize, f64)>)> = Vec::new();
        for o in &p.operation {
            let op = Operation::from_name(o.operation.get_ref()).ok_or_else(|| {
                invalid(
                    o.operation.span().start,
                    format!("unknown operation \"{}\"", o.operation.get_ref()),
                )
            })?;
            if shares.iter().any(|(x, _)| *x == op) {
                return Err(invalid(
                    o.operation.span().start,
                    format!("operation {op} is shared out twice"),
                ));
            }
            let mut v = Vec::new();
            for (name, share) in o.shares.get_ref() {
                let Some(i) = segments.iter().position(|(n, _)| n == name) else {
                    return Err(invalid(
                        o.shares.span().start,
                        format!("{op}: \"{name}\" is not a segment of {}", p.name.get_ref()),
                    ));
                };
                let share = share
                    .as_float()
                    .or_else(|| share.as_integer().map(|i| i as f64))
                    .filter(|x| x.is_finite() && *x > 0.0 && *x <= 1.0)
                    .ok_or_else(|| {
                        invalid(
                            o.shares.span().start,
                            format!("{op}: the share of \"{name}\" is not a number in (0, 1]"),
                        )
                    })?;
                if let Some(side) = fixed_side(op).filter(|s| *s != segments[i].1) {
                    return Err(invalid(
                        o.shares.span().start,
                        format!(
                            "{op}: \"{name}\" is the {}'s, but the protocol has the {side} make every such call",
                            segments[i].1
                        ),
                    ));
                }
                v.push((i, share));
            }
            let total: f64 = v.iter().map(|(_, s)| s).sum();
            if (total - 1.0).abs() > 1e-9 {
                return Err(invalid(
                    o.shares.span().start,
                    format!("{op}: the shares add up to {total}, not 1"),
                ));
            }
            v.sort_by_key(|(i, _)| *i);
            shares.push((op, v));
        }
        out.push(FlowDef {
            protocol: p.name.get_ref().clone(),
            segments,
            shares,
        });
    }
    Ok(out)
}

/// A suite's phases placed in its protocol's flow: each segment with its share of every phase's
/// count. `None` where an operation of the suite has no shares in the flow (the suite is then
/// composed as before, without a flow).
pub fn segments(def: &FlowDef, parts: &[SuitePhase]) -> Option<Vec<Segment>> {
    let mut out: Vec<Segment> = def
        .segments
        .iter()
        .map(|(name, side)| Segment {
            name: name.clone(),
            side: *side,
            parts: Vec::new(),
            median_ns: 0.0,
        })
        .collect();
    for p in parts.iter().filter(|p| p.count > 0) {
        let (_, shares) = def.shares.iter().find(|(op, _)| *op == p.operation)?;
        for &(i, share) in shares {
            out[i].parts.push(FlowPart {
                backend: p.backend.clone(),
                algorithm: p.algorithm.clone(),
                operation: p.operation,
                count: f64::from(p.count) * share,
            });
        }
    }
    Some(out)
}

/// The three figures of a flow from the calls' medians as a handshake makes them (`in_state`;
/// `Segment::median_ns` is set on the way):
/// the client's and the server's CPU (the sums of their segments) and the latency along the
/// critical path: every segment in turn, except that each pair in `overlap` (a server segment and
/// a client segment the stack runs at once) counts the longer of the two. Each figure's 95%
/// half-width adds the calls' half-widths (`in_state`: the in-state samples' interval, else
/// `Phase::median_ci95_own_ns`, else `median_ci95_ns`) times their counts in quadrature; the latency takes, in each overlapping
/// pair, the half-width of the longer. `None` where a phase is missing.
pub fn figures(
    mut segments: Vec<Segment>,
    overlap: &[(String, String)],
    phases: &[Phase],
) -> Option<Flow> {
    let mut half_sq = vec![0.0; segments.len()];
    for (s, h) in segments.iter_mut().zip(half_sq.iter_mut()) {
        let mut total = 0.0;
        for p in &s.parts {
            let id = crate::results::PhaseId::handshake(&p.backend, &p.algorithm, p.operation);
            let q = crate::results::find_phase(phases, &id)?;
            let (median, ci) = in_state(q);
            total += p.count * median;
            if let Some((lo, hi)) = ci {
                *h += (p.count * (hi - lo) / 2.0).powi(2);
            }
        }
        s.median_ns = total;
    }
    let side = |which: Side| -> (f64, f64) {
        let (ns, sq) = segments
            .iter()
            .zip(&half_sq)
            .filter(|(s, _)| s.side == which)
            .fold((0.0, 0.0), |(a, b), (s, h)| (a + s.median_ns, b + h));
        (ns, sq.sqrt())
    };
    let (client_ns, client_half) = side(Side::Client);
    let (server_ns, server_half) = side(Side::Server);
    let (latency_ns, latency_sq) = critical_path(&segments, &half_sq, overlap);
    Some(Flow {
        segments,
        overlap: overlap.to_vec(),
        client_ns,
        server_ns,
        latency_ns,
        client_half95_ns: client_half,
        server_half95_ns: server_half,
        latency_half95_ns: latency_sq.sqrt(),
    })
}

/// A call's median and interval as a handshake makes it: its calls timed in a handshake's state
/// where the run has them (`Phase::situ`), else the phase loop's (files before 2026-12-05, and
/// every phase outside a real stack's flow).
pub fn in_state(q: &Phase) -> (f64, Option<(f64, f64)>) {
    match &q.situ {
        Some(s) => (s.median_ns, s.median_ci95_ns),
        None => (q.stats.median_ns, q.median_ci95_own_ns.or(q.median_ci95_ns)),
    }
}

/// The critical path's length and its squared half-width: every segment in turn, each overlapping
/// pair counted once, by its longer segment. A pair naming a segment the flow does not have is
/// left out (its segments count in turn).
fn critical_path(
    segments: &[Segment],
    half_sq: &[f64],
    overlap: &[(String, String)],
) -> (f64, f64) {
    let values: Vec<f64> = segments.iter().map(|s| s.median_ns).collect();
    on_path(segments, &values, overlap)
        .into_iter()
        .zip(values.iter().zip(half_sq))
        .filter(|(counted, _)| *counted)
        .fold((0.0, 0.0), |(ns, sq), (_, (v, h))| (ns + v, sq + h))
}

/// Which segments the critical path counts, their lengths `values`: every one, except that of each
/// overlapping pair only the longer counts (the first where they are equal).
pub(crate) fn on_path(
    segments: &[Segment],
    values: &[f64],
    overlap: &[(String, String)],
) -> Vec<bool> {
    let mut counted = vec![true; segments.len()];
    for (i, j) in overlapping_pairs(segments, overlap) {
        let shorter = if values[i] >= values[j] { j } else { i };
        counted[shorter] = false;
    }
    counted
}

/// The pairs of `overlap` that `on_path` takes, as segment indices: both segments named in the
/// flow, distinct, and neither in an earlier pair. Which pairs count does not depend on the
/// segments' values, so a flow drawn many times resolves them once.
pub(crate) fn overlapping_pairs(
    segments: &[Segment],
    overlap: &[(String, String)],
) -> Vec<(usize, usize)> {
    let index = |name: &str| segments.iter().position(|s| s.name == name);
    let mut paired = vec![false; segments.len()];
    let mut pairs = Vec::new();
    for (a, b) in overlap {
        let (Some(i), Some(j)) = (index(a), index(b)) else {
            continue;
        };
        if i == j || paired[i] || paired[j] {
            continue;
        }
        paired[i] = true;
        paired[j] = true;
        pairs.push((i, j));
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Form, PhaseId};

    fn phase(op: Operation, median: u64) -> Phase {
        let mut p = crate::figures::measured_phase(
            PhaseId {
                backend: "b".into(),
                algorithm: "A".into(),
                operation: op,
                form: Form::Handshake,
            },
            vec![median; 3],
            crate::figures::Measured::bare(),
        );
        p.median_ci95_ns = Some((median as f64 - 1.0, median as f64 + 1.0));
        p
    }

    fn part(op: Operation, count: u32) -> SuitePhase {
        SuitePhase {
            backend: "b".into(),
            algorithm: "A".into(),
            operation: op,
            count,
        }
    }

    /// The toy's phases, the signature's given, and its parts: a key (10), the chain checked
    /// twice (30 each), a derive on each side (20).
    fn toy(sign: Phase) -> ([Phase; 4], [SuitePhase; 4]) {
        let phases = [
            phase(Operation::KemKeygen, 10),
            sign,
            phase(Operation::SigVerify, 30),
            phase(Operation::DhDerive, 20),
        ];
        let parts = [
            part(Operation::KemKeygen, 1),
            part(Operation::SigSign, 1),
            part(Operation::SigVerify, 2),
            part(Operation::DhDerive, 2),
        ];
        (phases, parts)
    }

    const TOY: &str = r#"
kind = "flights"
[[protocol]]
name = "toy"
segments = [
  { name = "hello", side = "client" },
  { name = "sign", side = "server" },
  { name = "check", side = "client" },
]
[[protocol.operation]]
operation = "kem.keygen"
shares = { hello = 1 }
[[protocol.operation]]
operation = "sig.sign"
shares = { sign = 1 }
[[protocol.operation]]
operation = "sig.verify"
shares = { check = 1 }
[[protocol.operation]]
operation = "dh.derive"
shares = { sign = 0.5, check = 0.5 }
"#;

    #[test]
    fn a_two_flight_toy_composes_by_hand_with_overlap_and_without() {
        let defs = parse(Path::new("toy.toml"), TOY).unwrap();
        let def = &defs[0];
        assert_eq!(def.segments.len(), 3);
        // The client makes a key (10), the server signs (100) and derives (20 each side), the
        // client verifies the chain twice (30 each) and derives.
        let (phases, parts) = toy(phase(Operation::SigSign, 100));
        let segs = segments(def, &parts).unwrap();
        let f = figures(segs.clone(), &[], &phases).unwrap();
        // hello 10, sign 100 + 20, check 60 + 20.
        let ns: Vec<f64> = f.segments.iter().map(|s| s.median_ns).collect();
        assert_eq!(ns, vec![10.0, 120.0, 80.0]);
        assert_eq!(
            (f.client_ns, f.server_ns, f.latency_ns),
            (90.0, 120.0, 210.0)
        );
        // The server's signing and the client's check at once: the longer, 120, counts.
        let both = [("sign".to_string(), "check".to_string())];
        let o = figures(segs.clone(), &both, &phases).unwrap();
        assert_eq!(
            (o.client_ns, o.server_ns, o.latency_ns),
            (90.0, 120.0, 130.0)
        );
        // Half-widths: each phase's is 1, times its count, in quadrature. Client: keygen 1,
        // verify 2, derive 1: sqrt 6; the latency with the overlap: hello's 1 and sign's (sign 1,
        // derive 1): sqrt 3.
        assert!((o.client_half95_ns - 6f64.sqrt()).abs() < 1e-12);
        assert!((o.latency_half95_ns - 3f64.sqrt()).abs() < 1e-12);
        // A phase the flow does not place: no flow; a phase not measured: no figures.
        assert!(segments(def, &[part(Operation::AeadKey, 1)]).is_none());
        assert!(figures(segs, &[], &phases[..2]).is_none());
    }

    #[test]
    fn a_call_timed_in_a_handshakes_state_is_composed_at_that_median() {
        let defs = parse(Path::new("toy.toml"), TOY).unwrap();
        let mut sign = phase(Operation::SigSign, 100);
        // The signature's calls timed in a handshake's state: 110, 130, 120 -> median 120,
        // and the interval that the samples give.
        sign.situ = crate::figures::situ(1 << 20, 100_000, vec![110, 130, 120], Vec::new());
        let situ = sign.situ.clone().unwrap();
        assert_eq!(situ.median_ns, 120.0);
        let (phases, parts) = toy(sign);
        let f = figures(segments(&defs[0], &parts).unwrap(), &[], &phases).unwrap();
        // hello 10, sign 120 + 20, check 60 + 20: the server's CPU and the path take the 120.
        assert_eq!(
            (f.client_ns, f.server_ns, f.latency_ns),
            (90.0, 140.0, 230.0)
        );
        // The server's half-width: the signature's interval in state, the derive's 1.
        let (lo, hi) = situ.median_ci95_ns.unwrap();
        let want = ((hi - lo) / 2.0).hypot(1.0);
        assert!(
            (f.server_half95_ns - want).abs() < 1e-9,
            "{}",
            f.server_half95_ns
        );
    }

    #[test]
    fn a_flights_file_that_contradicts_the_protocol_is_refused_where_it_does() {
        let bad = |from: &str, to: &str| {
            let text = TOY.replace(from, to);
            parse(Path::new("toy.toml"), &text).unwrap_err().to_string()
        };
        // Signing on the client.
        let e = bad("shares = { sign = 1 }", "shares = { check = 1 }");
        assert!(
            e.contains("toy.toml:15") && e.contains("sig.sign") && e.contains("the server"),
            "{e}"
        );
        // Shares that do not add up, a segment that is not there, a side that is neither.
        assert!(bad("sign = 0.5, check = 0.5", "sign = 0.5, check = 0.4").contains("add up to 0.9"));
        assert!(bad("shares = { hello = 1 }", "shares = { nowhere = 1 }")
            .contains("\"nowhere\" is not a segment"));
        assert!(bad("side = \"server\"", "side = \"proxy\"").contains("unknown side \"proxy\""));
        assert!(
            bad("operation = \"dh.derive\"", "operation = \"kem.keygen\"")
                .contains("shared out twice")
        );
    }
}
