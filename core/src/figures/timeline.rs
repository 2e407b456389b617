//! When a real TLS handshake's calls ran, both sides on one time line: the in-situ scenarios'
//! `InSituConnection::client_at_ns` and `server_at_ns` (files from 2026-12-05 on). It shows the
//! flight structure a stack really has, which the flows (suites/flights.toml, `Stack::overlap`)
//! only declare: whether the client checks the chain while the server signs, and how long the
//! client then waits for the CertificateVerify beyond its own work.

use crate::results::{CallLabel, Flow, InSitu, InSituConnection};
use crate::shift::Ran;
use crate::stats;

/// A span's start and end, each the median over connections, nanoseconds after the client began.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub start_ns: f64,
    pub end_ns: f64,
}

/// A TLS 1.3 handshake's time line at the median connection.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeLine {
    /// Connections with a time line.
    pub connections: usize,
    /// The server's CertificateVerify signature.
    pub server_sign: Option<Span>,
    /// The client's work on the ServerHello: from its first key-exchange call there (a
    /// decapsulation or a derivation) to the end of its chain's certificate checks, the flows'
    /// "ServerHello to the chain" segment.
    pub client_chain: Option<Span>,
    /// The client's CertificateVerify check.
    pub client_verify: Option<Span>,
    /// The client's segment "ServerHello to the chain" as it ran (median per connection of its end
    /// less its start), and the calls in it: its key-exchange calls and certificate checks.
    pub segment_ns: Option<f64>,
    pub segment_calls_ns: Option<f64>,
    /// Median per connection of the client's CertificateVerify check's start less its chain
    /// check's end: its wait for the server's CertificateVerify, with its own reading of it.
    pub wait_ns: Option<f64>,
}

impl TimeLine {
    /// Whether the client began on the ServerHello before the server had signed: the server
    /// wrote its flight to the Certificate before it signed, as a stack's overlap in the flows
    /// declares, rather than with its CertificateVerify. `None` without both spans.
    pub fn overlaps(&self) -> Option<bool> {
        Some(self.client_chain?.start_ns < self.server_sign?.end_ns)
    }
}

/// The flows' segment of the client's work on the ServerHello (suites/flights.toml).
pub const CLIENT_CHAIN_SEGMENT: &str = "ServerHello to the chain";

/// `flow` as the stack ran it:
/// - where its handshakes have a time line (`ran`: the scenario's, or its twin's timed in situ),
///   the pairs of the flows' overlap that hold the client's segment on the ServerHello dropped
///   where the client began there only after the server had signed (`TimeLine::overlaps`): an
///   OpenSSL server writes its flight to the Certificate before it signs only where that flight
///   overflows its write buffer (an ML-DSA chain, not an ECDSA one);
/// - `own_ns`, the stack's own work in that segment (`own_in_segment`, measured once per stack
///   on its baseline), added to it, where it then counts or hides beside the signing as the calls
///   do. It is the stack's, so every flow of the stack takes it, with a time line or not.
pub fn as_run(flow: &Flow, ran: Option<&TimeLine>, own_ns: Option<f64>) -> Ran {
    let mut r = Ran::declared(flow);
    if ran.and_then(TimeLine::overlaps) == Some(false) {
        r.flow
            .overlap
            .retain(|(a, b)| a != CLIENT_CHAIN_SEGMENT && b != CLIENT_CHAIN_SEGMENT);
    }
    if let Some(own) = own_ns {
        for (seg, o) in r.flow.segments.iter().zip(r.own_ns.iter_mut()) {
            if seg.name == CLIENT_CHAIN_SEGMENT {
                *o = own;
            }
        }
    }
    r
}

/// The stack's own work in the client's segment on the ServerHello, from its baseline: the
/// segment's length in the baseline's handshakes (`t`, the median connection) less what the
/// baseline's flow composes in it (`flow`: its calls at their medians in state, the flows'
/// shares of the key schedule and the transcript included). Parsing the certificates, building
/// the chain, reading the records.
pub fn own_in_segment(t: &TimeLine, flow: &Flow) -> Option<f64> {
    let composed = flow
        .segments
        .iter()
        .find(|s| s.name == CLIENT_CHAIN_SEGMENT)?
        .median_ns;
    Some(t.segment_ns? - composed)
}

/// The client's calls on the ServerHello that start its segment (`TimeLine::client_chain`).
const SERVER_HELLO: [CallLabel; 3] = [
    CallLabel::KxDecaps,
    CallLabel::DhDerive,
    CallLabel::KemDecaps,
];

fn label_index(i: &InSitu, l: CallLabel) -> Option<usize> {
    i.labels.iter().position(|x| x == l.name())
}

/// A connection's client segment on the ServerHello: (start, end, the time in its calls).
type ChainSegment = (u64, u64, u64);

/// Per connection, the client's segment on the ServerHello.
fn segment(i: &InSitu, c: &InSituConnection) -> Option<ChainSegment> {
    let chain = label_index(i, CallLabel::SigVerifyCert)?;
    let (_, end) = InSituConnection::span(&c.client_at_ns, chain)?;
    let hello: Vec<usize> = SERVER_HELLO
        .iter()
        .filter_map(|&l| label_index(i, l))
        .filter(|&k| InSituConnection::span(&c.client_at_ns, k).is_some())
        .collect();
    let start = hello
        .iter()
        .filter_map(|&k| InSituConnection::span(&c.client_at_ns, k).map(|s| s.0))
        .min()?;
    let calls = hello
        .iter()
        .chain(std::iter::once(&chain))
        .filter_map(|&k| c.client.get(k))
        .sum();
    (start <= end).then_some((start, end, calls))
}

/// The medians of a label's spans on one side over the connections that have one.
fn span_of(i: &InSitu, l: CallLabel, server: bool) -> Option<Span> {
    let k = label_index(i, l)?;
    let (starts, ends): (Vec<f64>, Vec<f64>) = i
        .connections
        .iter()
        .filter_map(|c| {
            InSituConnection::span(
                if server {
                    &c.server_at_ns
                } else {
                    &c.client_at_ns
                },
                k,
            )
        })
        .map(|(s, e)| (s as f64, e as f64))
        .unzip();
    (!starts.is_empty()).then(|| Span {
        start_ns: stats::median(&starts),
        end_ns: stats::median(&ends),
    })
}

fn median_of(xs: Vec<f64>) -> Option<f64> {
    (!xs.is_empty()).then(|| stats::median(&xs))
}

/// The time line of an in-situ scenario, where its connections have one.
pub fn of(i: &InSitu) -> Option<TimeLine> {
    let connections = i
        .connections
        .iter()
        .filter(|c| !c.client_at_ns.is_empty())
        .count();
    if connections == 0 {
        return None;
    }
    let verify = label_index(i, CallLabel::SigVerify);
    // Each connection's segment on the ServerHello, and the client's wait after it.
    let (segments, waits): (Vec<ChainSegment>, Vec<Option<f64>>) = i
        .connections
        .iter()
        .filter_map(|c| {
            let seg = segment(i, c)?;
            let wait = verify
                .and_then(|v| InSituConnection::span(&c.client_at_ns, v))
                .map(|(v, _)| v as f64 - seg.1 as f64);
            Some((seg, wait))
        })
        .unzip();
    Some(TimeLine {
        connections,
        server_sign: span_of(i, CallLabel::SigSign, true),
        client_chain: median_of(segments.iter().map(|s| s.0 as f64).collect()).and_then(|s| {
            Some(Span {
                start_ns: s,
                end_ns: median_of(segments.iter().map(|s| s.1 as f64).collect())?,
            })
        }),
        client_verify: span_of(i, CallLabel::SigVerify, false),
        segment_ns: median_of(segments.iter().map(|s| (s.1 - s.0) as f64).collect()),
        segment_calls_ns: median_of(segments.iter().map(|s| s.2 as f64).collect()),
        wait_ns: median_of(waits.into_iter().flatten().collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two connections of a toy handshake whose client decapsulates at 100 ns, checks the chain
    /// (two calls, 300 ns in all) until 600, and the CertificateVerify from 900, while the server
    /// signs from 250 to 850 (the second connection everything 100 ns later but the signing).
    fn in_situ() -> InSitu {
        let labels = CallLabel::names();
        let n = labels.len();
        let at = |spans: &[(CallLabel, u64, u64)], shift: u64| {
            let mut v = vec![0; 2 * n];
            for &(l, s, e) in spans {
                v[2 * l as usize] = s + shift;
                v[2 * l as usize + 1] = e + shift;
            }
            v
        };
        let ns = |calls: &[(CallLabel, u64)]| {
            let mut v = vec![0; n];
            for &(l, t) in calls {
                v[l as usize] = t;
            }
            v
        };
        let conn = |shift: u64| InSituConnection {
            total_ns: 2_000,
            client: ns(&[
                (CallLabel::KxDecaps, 50),
                (CallLabel::SigVerifyCert, 300),
                (CallLabel::SigVerify, 80),
            ]),
            server: ns(&[(CallLabel::SigSign, 600)]),
            remainder_ns: 970,
            client_at_ns: at(
                &[
                    (CallLabel::KxDecaps, 100, 150),
                    (CallLabel::SigVerifyCert, 250, 600),
                    (CallLabel::SigVerify, 900, 980),
                ],
                shift,
            ),
            server_at_ns: at(&[(CallLabel::SigSign, 250, 850)], 0),
        };
        InSitu::from_connections(
            labels.clone(),
            vec![conn(0), conn(100)],
            (vec![0.0; n], vec![0.0; n]),
            (0.0, 0.0),
        )
    }

    #[test]
    fn a_time_line_by_hand() {
        let t = of(&in_situ()).expect("a time line");
        assert_eq!(t.connections, 2);
        assert_eq!(
            t.server_sign,
            Some(Span {
                start_ns: 250.0,
                end_ns: 850.0
            })
        );
        // Medians of 100 and 200, of 600 and 700.
        assert_eq!(
            t.client_chain,
            Some(Span {
                start_ns: 150.0,
                end_ns: 650.0
            })
        );
        assert_eq!(t.segment_ns, Some(500.0));
        // The decapsulation and the two checks: 350 of the segment's 500 ns.
        assert_eq!(t.segment_calls_ns, Some(350.0));
        // 900 - 600 in both.
        assert_eq!(t.wait_ns, Some(300.0));
    }

    #[test]
    fn a_flow_as_run_drops_an_overlap_the_time_line_does_not_show_and_takes_the_own_work() {
        use crate::results::{Segment, Side};
        let seg = |name: &str, side, median_ns| Segment {
            name: name.into(),
            side,
            parts: Vec::new(),
            median_ns,
        };
        // The server signs for 600, the client's segment on the ServerHello composes 300; a
        // third pair of the flows' overlap the time line does not speak for.
        let flow = Flow {
            segments: vec![
                seg("CertificateVerify, Finished", Side::Server, 600.0),
                seg(CLIENT_CHAIN_SEGMENT, Side::Client, 300.0),
                seg("a", Side::Server, 10.0),
                seg("b", Side::Client, 20.0),
            ],
            overlap: vec![
                (
                    "CertificateVerify, Finished".into(),
                    CLIENT_CHAIN_SEGMENT.into(),
                ),
                ("a".into(), "b".into()),
            ],
            client_ns: 0.0,
            server_ns: 0.0,
            latency_ns: 0.0,
            client_half95_ns: 0.0,
            server_half95_ns: 0.0,
            latency_half95_ns: 0.0,
        };
        // The toy's client begins at 150 ns, before the signing ends at 850: it overlaps. Its
        // segment ran 500 ns where its flow composes 300: 200 of the stack's own.
        let t = of(&in_situ()).expect("a time line");
        assert_eq!(t.overlaps(), Some(true));
        let own = own_in_segment(&t, &flow);
        assert_eq!(own, Some(200.0));
        let ran = as_run(&flow, Some(&t), own);
        assert_eq!(ran.flow.overlap, flow.overlap);
        assert_eq!(ran.own_ns, [0.0, 200.0, 0.0, 0.0]);
        // max(600, 300 + 200) + max(10, 20).
        assert_eq!(ran.latency_ns(), 620.0);
        // A client that began after the signing had ended: the flight came whole, in turn, and
        // only the pair with its segment goes: 600 + 500 + 20.
        let late = TimeLine {
            client_chain: Some(Span {
                start_ns: 900.0,
                end_ns: 1_200.0,
            }),
            ..t.clone()
        };
        assert_eq!(late.overlaps(), Some(false));
        let ran = as_run(&flow, Some(&late), own);
        assert_eq!(ran.flow.overlap, [("a".to_string(), "b".to_string())]);
        assert_eq!(ran.latency_ns(), 1_120.0);
        // No time line of its own: the overlap as declared, the stack's own work still taken.
        let ran = as_run(&flow, None, own);
        assert_eq!(ran.flow.overlap, flow.overlap);
        assert_eq!(ran.own_ns, [0.0, 200.0, 0.0, 0.0]);
        // The flows this names hold the segment (suites/flights.toml).
        assert!(
            include_str!("../../../suites/flights.toml").contains(&format!(
                "{{ name = \"{CLIENT_CHAIN_SEGMENT}\", side = \"client\" }}"
            ))
        );
    }

    #[test]
    fn an_older_file_has_none() {
        let mut i = in_situ();
        for c in &mut i.connections {
            c.client_at_ns.clear();
            c.server_at_ns.clear();
        }
        assert_eq!(of(&i), None);
    }
}
