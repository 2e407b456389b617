//! The overview page's authentication section: per run, a row per stack, group and certificate
//! chain with what it costs against the same group's baseline chain (figures::auth), a leaf-only
//! ML-DSA-44 chain beside Paquin et al.'s Dilithium2, and what is not negotiable in TLS 1.3 here.

use super::Run;
use crate::figures::answer;
use crate::figures::auth::{self as fig, Figures, Row as Key};
use crate::units::{count, ratio, signed_time, time};
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct View {
    pub(crate) host: String,
    pub(crate) machine_id: String,
    pub(crate) baseline: String,
    pub(crate) window: String,
    /// A row runs over QUIC: the page says what its budget is.
    pub(crate) quic: bool,
    pub(crate) columns: Vec<&'static str>,
    /// Each column's most common cell title, on its header: a cell carries a title of its own only
    /// where it says something else (the page is read per machine, and repeating a column's
    /// sentence in every row is most of its weight).
    pub(crate) column_titles: Vec<String>,
    pub(crate) rows: Vec<Row>,
    /// Per point: stack, RTT, loss, our two leaf-only cells, their RTT and their two medians.
    pub(crate) paquin: Vec<Vec<String>>,
}

#[derive(Serialize)]
pub(crate) struct Row {
    pub key: String,
    pub(crate) first_of_group: bool,
    pub stack: String,
    pub group: String,
    pub auth: String,
    pub baseline: bool,
    pub cells: Vec<Cell>,
}

#[derive(Serialize)]
pub(crate) struct Cell {
    pub text: String,
    pub sub: String,
    pub title: String,
    pub(crate) values: Vec<(String, String)>,
}

/// The columns every row fills, in order (the phone layout repeats them beside each figure).
pub(crate) const COLUMNS: [&str; 10] = [
    "Server first flight",
    "Loopback handshake",
    "Δ vs baseline (95%)",
    "Composed Δ",
    "In memory, per core",
    "Server CPU per handshake",
    "Memory / held conn. Δ",
    "Round trips at 78.7 ms: model, measured",
    "p50 at 78.7 ms, 0% (Δ)",
    "p50 at 78.7 ms, lossy",
];

fn cell(text: String, sub: String, title: &str, values: &[(&str, Option<f64>)]) -> Cell {
    Cell {
        text,
        sub,
        title: title.into(),
        values: values
            .iter()
            .filter_map(|(n, v)| Some((n.to_string(), format!("{}", (*v)?))))
            .collect(),
    }
}

fn dash(why: &str) -> Cell {
    cell("–".into(), String::new(), why, &[])
}

fn interval_us(lo: f64, hi: f64) -> String {
    format!(
        "{} – {}",
        signed_time(lo).replace('-', "−"),
        signed_time(hi).replace('-', "−")
    )
}

/// A difference with its 95% interval beneath, or "not resolved" with the interval's half-width
/// where the interval holds zero or is wider than the difference (`figures::answer::resolved`).
fn difference(d: f64, interval: Option<(f64, f64)>, title: &str, name: &str) -> Cell {
    let values = [(name, Some(d))];
    match interval {
        Some(i) if !answer::resolved(d, i) => cell(
                "not resolved".into(),
                format!("±{}", time((i.1 - i.0) / 2.0)),
                &format!(
                    "{title}: {} here, {} to {}, an interval that holds zero or is wider than the difference",
                    signed_time(d),
                    signed_time(i.0),
                    signed_time(i.1)
                ),
            &values,
        ),
        _ => cell(
            signed_time(d),
            interval.map_or(String::new(), |(lo, hi)| interval_us(lo, hi)),
            title,
            &values,
        ),
    }
}

/// The round trips at `fig::RTT_NS` and no loss: the model's, with the measured median over the
/// RTT, and over QUIC with a token and after a Retry.
fn round_trips(f: &Figures) -> Cell {
    match f.round_trips {
        Some(rt) => {
            let measured =
                |p: Option<f64>| p.map_or(String::new(), |p| format!(" ({:.2})", p / fig::RTT_NS));
            let validated: Vec<String> = [
                f.token_round_trips.map(|t| {
                    // quic-go's pacer holds the end of a large flight back (Model::pacer).
                    let paced = f
                        .token_paced_ns
                        .map_or(String::new(), |d| format!(" + {:.1} ms paced", d / 1e6));
                    format!("NEW_TOKEN {t}{paced}{}", measured(f.token_p50_ns))
                }),
                f.retry_round_trips
                    .map(|t| format!("Retry {t}{}", measured(f.retry_p50_ns))),
            ]
            .into_iter()
            .flatten()
            .collect();
            let sub = f.p50_ns.map_or(String::new(), |p| {
                format!("{:.2} measured", p / fig::RTT_NS)
            });
            cell(
            format!("{rt}"),
            std::iter::once(sub)
                .chain(validated)
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" · "),
            "the model's round trips before the client's Finished (TCP connect, the TLS exchange, one more per initial window the server's flight overflows; over QUIC no connect, one more while the flight is over three times the client's Initial flight, RFC 9000 section 8.1, then per congestion window), and the measured median over the RTT; over QUIC also with a NEW_TOKEN token from the connection before (no amplification limit; the congestion window stays; quic-go's pacer, which takes the RTT the token carries, spaces a flight past 10 datagrams) and after a Retry (a round trip more, then no limit)",
            &[
                ("round-trips", Some(rt)),
                ("token-round-trips", f.token_round_trips),
                ("retry-round-trips", f.retry_round_trips),
                ("token-p50", f.token_p50_ns),
                ("token-paced", f.token_paced_ns),
                ("retry-p50", f.retry_p50_ns),
            ],
        )
        }
        None => dash("the grid has no such cell"),
    }
}

fn cells(f: &Figures) -> Vec<Cell> {
    let against = |x: Option<f64>| if f.baseline { None } else { x };
    let mut out = Vec::new();
    out.push(match f.flight_bytes {
        Some(b) => cell(
            format!("{} B", count(b)),
            match (f.budget_bytes, f.window_bytes) {
                (Some(q), _) => format!(
                    "{:.2}× the {} B amplification budget",
                    b / q.max(1.0),
                    count(q)
                ),
                (None, Some(w)) => {
                    fig::windows(b, w).map_or(String::new(), |x| format!("{x:.2} initial windows"))
                }
                (None, None) => String::new(),
            },
            "ServerHello to Finished as the client received it (over QUIC: the UDP payload of its packets, headers, padding and acknowledgements included; the evidence of the first connection)",
            &[("flight", Some(b))],
        ),
        None => dash("no connection recorded its flight"),
    });
    out.push(match f.median_ns {
        Some(m) => cell(
            time(m),
            String::new(),
            "median loopback connection: connect, handshake, 32-byte echo, close",
            &[("median", Some(m))],
        ),
        None => dash("no real handshake of this chain here (network only)"),
    });
    out.push(match against(f.real_ns) {
        Some(d) => {
            let i = f.real_interval.map(|i| (i.lo95_ns, i.hi95_ns));
            difference(
                d,
                i,
                "the paired difference from the baseline chain, same group and stack (the answer's real Δ: in a run of the relative form, the blocks' shares times the baseline's median)",
                "real",
            )
        }
        None if f.baseline => dash("the baseline"),
        None => dash("no real handshakes of both chains"),
    });
    out.push(match against(f.composed_ns) {
        Some(d) => cell(
            signed_time(d),
            String::new(),
            "the two full-handshake suites composed from the stack's library: one sign, three verifies, the transcript's real bytes",
            &[("composed", Some(d))],
        ),
        None if f.baseline => dash("the baseline"),
        None => dash("no composition of this stack's library"),
    });
    out.push(match f.rate_per_core_s {
        Some(rate) => cell(
            format!("{}/s", count(rate)),
            against(f.capacity_ratio).map_or(String::new(), ratio),
            "server handshakes per core-second in memory, and over the baseline chain's",
            &[
                ("rate", Some(rate)),
                ("capacity", against(f.capacity_ratio)),
            ],
        ),
        None => dash("capacity does not measure this chain"),
    });
    out.push(match f.server_cpu_ns {
        Some(c) => cell(
            time(c),
            String::new(),
            "the server's CPU per in-memory handshake, median",
            &[("server-cpu", Some(c))],
        ),
        None => dash("capacity does not measure this chain"),
    });
    out.push(match against(f.memory_bytes) {
        Some(m) => cell(
            format!("{}{} B", if m >= 0.0 { "+" } else { "" }, count(m)),
            String::new(),
            "server heap per held connection against the baseline chain's",
            &[("memory", Some(m))],
        ),
        None if f.baseline => dash("the baseline"),
        None => dash("memory per connection is not measured for this chain"),
    });
    out.push(round_trips(f));
    out.push(match f.p50_ns {
        Some(p) => {
            let extra = against(f.extra_ns);
            let sub = extra.map_or(String::new(), |x| match f.extra_interval_ns {
                Some(i) if !answer::resolved(x, i) => {
                    format!("extra not resolved (±{})", time((i.1 - i.0) / 2.0))
                }
                _ => signed_time(x),
            });
            cell(
                time(p),
                sub,
                "median connect to handshake complete at 78.7 ms RTT and no loss, and its difference from the baseline chain's (not resolved where its 95% interval, each cell's p50 interval in quadrature, holds zero or is wider than itself)",
                &[("p50", Some(p)), ("extra", extra)],
            )
        }
        None => dash("the grid has no such cell"),
    });
    out.push(match f.lossy {
        Some((loss, p50, p95)) => cell(
            time(p50),
            format!("p95 {}, {loss}% loss", time(p95)),
            "median and 95th percentile at 78.7 ms RTT and the grid's lossy point for chains",
            &[("lossy-p50", Some(p50))],
        ),
        // quinn-rs/quinn#1075: see network's `Bench::runs_lossy`.
        None if f.held_from_loss => {
            dash("over QUIC only the baseline chain runs under loss: with post-quantum chains a lost server Initial stalled some of quinn's handshakes for good (quinn-rs/quinn#1075)")
        }
        None => dash("the grid has no lossy cell of this chain"),
    });
    out
}

pub(crate) fn build(runs: &[&Run]) -> Vec<View> {
    // A machine at a time, on threads of their own (the paired differences resampled per run are
    // most of the front page's time with many machines).
    super::par_map(runs, |run| {
        let r = &run.results;
        let keys = fig::rows(r);
        if keys.is_empty() {
            return None;
        }
        let mut rows = Vec::new();
        let mut last: Option<(String, String)> = None;
        let mut quic = false;
        for k in &keys {
            let f = fig::figures(r, k);
            quic |= f.budget_bytes.is_some();
            let group = (k.group.clone(), k.stack.clone());
            rows.push(Row {
                key: k.key(&run.json_href),
                first_of_group: last.as_ref() != Some(&group),
                stack: r.stack_label(&k.stack),
                group: k.group.clone(),
                auth: k.auth.clone(),
                baseline: f.baseline,
                cells: cells(&f),
            });
            last = Some(group);
        }
        let column_titles = shared_titles(&mut rows);
        let paquin = r
            .network
            .iter()
            .flat_map(crate::figures::network::beside_paquin)
            .map(|p| {
                vec![
                    p.stack,
                    crate::units::rtt(p.rtt_ns),
                    format!("{}%", p.loss_pct),
                    time(p.leaf_ns),
                    p.ecdsa_ns.map_or("–".into(), time),
                    format!("{} ms", p.their_rtt_ms),
                    format!("{} ms", p.their_dilithium2_ms),
                    format!("{} ms", p.their_ecdsa_ms),
                ]
            })
            .collect();
        let n = r.network.as_ref();
        Some(View {
            host: run.label.clone(),
            machine_id: run.anchor.clone(),
            baseline: r.baseline_auth().unwrap_or_default().to_string(),
            window: n
                .and_then(|n| {
                    Some(format!(
                        "MTU {}, MSS {}, initial window {} segments = {} B",
                        n.mtu?,
                        n.mss?,
                        n.initcwnd?,
                        count(f64::from(n.mss? * n.initcwnd?))
                    ))
                })
                .unwrap_or_default(),
            quic,
            columns: COLUMNS.to_vec(),
            column_titles,
            rows,
            paquin,
        })
    })
    .into_iter()
    .flatten()
    .collect()
}

/// Per column, the title most of its cells carry (the first such, on a tie), which is then left off
/// those cells.
fn shared_titles(rows: &mut [Row]) -> Vec<String> {
    let columns = rows.first().map_or(0, |r| r.cells.len());
    (0..columns)
        .map(|k| {
            let mut counts: Vec<(&str, usize)> = Vec::new();
            for r in rows.iter() {
                let t = r.cells.get(k).map_or("", |c| c.title.as_str());
                match counts.iter_mut().find(|(x, _)| *x == t) {
                    Some(c) => c.1 += 1,
                    None => counts.push((t, 1)),
                }
            }
            let shared = counts
                .iter()
                .fold(("", 0), |best, &c| if c.1 > best.1 { c } else { best })
                .0
                .to_string();
            for r in rows.iter_mut() {
                if let Some(c) = r.cells.get_mut(k).filter(|c| c.title == shared) {
                    c.title.clear();
                }
            }
            shared
        })
        .collect()
}

/// The figures a row shows, by the names `verify` reads back.
pub(crate) fn values(r: &crate::results::Results, key: &Key) -> Vec<(&'static str, Option<f64>)> {
    let f = fig::figures(r, key);
    let mut v = fig::values(&f);
    if f.baseline {
        // The baseline's own row shows no differences.
        for (name, x) in v.iter_mut() {
            if matches!(*name, "real" | "composed" | "capacity" | "memory" | "extra") {
                *x = None;
            }
        }
    }
    v
}
