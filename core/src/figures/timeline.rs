//! When a real TLS handshake's calls ran, both sides on one time line: the in-situ scenarios'
//! `InSituConnection::client_at_ns` and `server_at_ns` (files from 2026-12-05 on). It shows the
//! flight structure a stack really has, which the flows (suites/flights.toml, `Stack::overlap`)
//! only declare: whether the client checks the chain while the server signs, and how long the
//! client then waits for the CertificateVerify beyond its own work.

use crate::results::{CallLabel, Flow, InSitu, InSituConnection};
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
    /// Its own work: the median per connection of its length less its calls.
    pub own_ns: Option<f64>,
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

/// `flow` as the stack ran it, where its handshakes have a time line (`ran`: the scenario's, or
/// its twin's timed in situ):
/// - the flows' overlap dropped where the client began on the ServerHello only after the server
///   had signed (`TimeLine::overlaps`): an OpenSSL server writes its flight to the Certificate
///   before it signs only where that flight overflows its write buffer (an ML-DSA chain, not an
///   ECDSA one);
/// - `own_ns`, the client's own work on the ServerHello (parsing the certificates, building the
///   chain; measured once per stack on its baseline's time line), added to that segment, where
///   it then counts or hides beside the signing as the calls do.
///
/// Without a time line, `flow` as it is.
pub fn as_run(flow: &Flow, ran: Option<&TimeLine>, own_ns: Option<f64>) -> Flow {
    let mut f = flow.clone();
    let Some(t) = ran else {
        return f;
    };
    if t.overlaps() == Some(false) {
        f.overlap.clear();
    }
    if let Some(own) = own_ns {
        for seg in f
            .segments
            .iter_mut()
            .filter(|s| s.name == CLIENT_CHAIN_SEGMENT)
        {
            seg.own_ns = own;
        }
    }
    f
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

/// Per connection, the client's segment on the ServerHello: (start, end, the time in its calls).
fn segment(i: &InSitu, c: &InSituConnection) -> Option<(u64, u64, u64)> {
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
    let segments: Vec<(u64, u64, u64)> =
        i.connections.iter().filter_map(|c| segment(i, c)).collect();
    let verify = label_index(i, CallLabel::SigVerify);
    let waits = i
        .connections
        .iter()
        .filter_map(|c| {
            let (_, chain_end, _) = segment(i, c)?;
            let (v, _) = InSituConnection::span(&c.client_at_ns, verify?)?;
            Some(v as f64 - chain_end as f64)
        })
        .collect();
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
        own_ns: median_of(
            segments
                .iter()
                .map(|s| (s.1 - s.0) as f64 - s.2 as f64)
                .collect(),
        ),
        wait_ns: median_of(waits),
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
        // The decapsulation and the two checks: 350 of the segment's 500 ns, 150 its own.
        assert_eq!(t.segment_calls_ns, Some(350.0));
        assert_eq!(t.own_ns, Some(150.0));
        // 900 - 600 in both.
        assert_eq!(t.wait_ns, Some(300.0));
    }

    #[test]
    fn a_flow_as_run_drops_an_overlap_the_time_line_does_not_show_and_takes_the_own_work() {
        use crate::results::{Segment, Side};
        let seg = |name: &str, side| Segment {
            name: name.into(),
            side,
            parts: Vec::new(),
            median_ns: 0.0,
            own_ns: 0.0,
        };
        let flow = Flow {
            segments: vec![
                seg("CertificateVerify, Finished", Side::Server),
                seg(CLIENT_CHAIN_SEGMENT, Side::Client),
            ],
            overlap: vec![(
                "CertificateVerify, Finished".into(),
                CLIENT_CHAIN_SEGMENT.into(),
            )],
            client_ns: 0.0,
            server_ns: 0.0,
            latency_ns: 0.0,
            client_half95_ns: 0.0,
            server_half95_ns: 0.0,
            latency_half95_ns: 0.0,
        };
        // The toy's client begins at 150 ns, before the signing ends at 850: it overlaps.
        let t = of(&in_situ()).expect("a time line");
        assert_eq!(t.overlaps(), Some(true));
        let ran = as_run(&flow, Some(&t), Some(150.0));
        assert_eq!(ran.overlap, flow.overlap);
        assert_eq!(
            ran.segments.iter().map(|s| s.own_ns).collect::<Vec<_>>(),
            [0.0, 150.0]
        );
        // A client that began after the signing had ended: the flight came whole, in turn.
        let late = TimeLine {
            client_chain: Some(Span {
                start_ns: 900.0,
                end_ns: 1_200.0,
            }),
            ..t.clone()
        };
        assert_eq!(late.overlaps(), Some(false));
        assert!(as_run(&flow, Some(&late), None).overlap.is_empty());
        // No time line: the flow as it is.
        assert_eq!(as_run(&flow, None, Some(150.0)), flow);
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
