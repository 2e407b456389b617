//! A probe as text: its findings in words and figures, once, for what `pqprof probe` prints as it
//! finishes and for the site's probes page (`render::probes`).

use crate::figures::probe::scheme_name;
use crate::results::Probe;
use crate::units::{bytes, signed_time, time};
use serde::Serialize;

/// Each finding of a probe, as the terminal and the site show it.
#[derive(Debug, Clone, Serialize)]
pub struct Answers {
    /// Group offered alone, taken ("yes"/"no"), why not.
    pub groups: Vec<[String; 3]>,
    pub both_shares: String,
    pub without_share: String,
    pub client_hello: String,
    pub chain: String,
    pub scheme: String,
    /// Group, flight, segments, initial window, round trips predicted, round trips seen.
    pub flights: Vec<[String; 6]>,
    /// Group, handshakes, median, 95% interval.
    pub latency: Vec<[String; 4]>,
    pub delta: String,
    pub connect: String,
}

pub fn answers(p: &Probe) -> Answers {
    let f = &p.findings;
    // Only X25519 and the hybrid are timed; round trips show on a long enough path alone.
    let seen = |group: &str| match f.latency.iter().find(|l| l.group == group) {
        None => "not timed".to_string(),
        Some(l) => l
            .observed_round_trips
            .map_or_else(|| "path too short to tell".into(), |r| format!("{r:.1}")),
    };
    let or_dash = |x: Option<u64>| x.map_or_else(|| "–".into(), |n| n.to_string());
    Answers {
        groups: f
            .groups
            .iter()
            .map(|g| {
                [
                    g.group.clone(),
                    if g.taken { "yes" } else { "no" }.into(),
                    g.reason.clone().unwrap_or_default(),
                ]
            })
            .collect(),
        both_shares: f
            .with_both_shares
            .clone()
            .unwrap_or_else(|| "no handshake".into()),
        without_share: match &f.hybrid_without_share {
            Some((g, true)) => format!("{g}, after a HelloRetryRequest (one more round trip)"),
            Some((g, false)) => format!("{g}, no retry"),
            None => "no handshake".into(),
        },
        client_hello: f
            .client_hello
            .map_or_else(String::new, |(b, segs)| match segs {
                Some(n) => format!(
                    "{} in {n} TCP segment(s) of {} bytes",
                    bytes(b as usize),
                    p.mss_bytes
                ),
                None => format!("{} (the MSS was not readable)", bytes(b as usize)),
            }),
        chain: format!(
            "{} in {} certificate(s): {}",
            bytes(f.chain_bytes as usize),
            p.chain.len(),
            p.chain
                .iter()
                .map(|c| format!(
                    "{} {} signed {}",
                    bytes(c.bytes as usize),
                    c.key,
                    c.signature
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        scheme: p
            .connections
            .iter()
            .find_map(|c| c.scheme)
            .map_or_else(|| "?".into(), scheme_name),
        flights: f
            .flights
            .iter()
            .map(|fl| {
                [
                    fl.group.clone(),
                    bytes(fl.bytes as usize),
                    or_dash(fl.segments),
                    fl.initial_window.to_string(),
                    or_dash(fl.predicted_round_trips),
                    seen(&fl.group),
                ]
            })
            .collect(),
        latency: f
            .latency
            .iter()
            .map(|l| {
                [
                    l.group.clone(),
                    l.handshakes.to_string(),
                    time(l.median_ns),
                    l.ci95_ns.map_or_else(String::new, |(lo, hi)| {
                        format!("{} – {}", time(lo), time(hi))
                    }),
                ]
            })
            .collect(),
        delta: f.hybrid_delta.as_ref().map_or_else(String::new, |d| {
            // An interval that holds zero is the path's noise, not a cost (the site's rule).
            let resolved = d.ci95_ns.is_none_or(|(lo, hi)| lo > 0.0 || hi < 0.0);
            format!(
                "{}{} over {} paired rounds{}",
                signed_time(d.median_ns),
                d.ci95_ns.map_or_else(String::new, |(lo, hi)| format!(
                    " (95% interval {} to {})",
                    signed_time(lo),
                    signed_time(hi)
                )),
                d.pairs,
                if resolved {
                    ""
                } else {
                    ": not resolved, noise on this path and not a cost"
                }
            )
        }),
        connect: time(f.connect_median_ns),
    }
}

fn table<const N: usize>(header: [&str; N], rows: &[[String; N]]) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(header.to_vec());
    for r in rows {
        t.add_row(r.to_vec());
    }
    t.to_string()
}

/// What `pqprof probe` prints as it finishes.
pub fn terminal(p: &Probe) -> String {
    let a = answers(p);
    let mut out = format!(
        "{} ({}), server name {}, chain {}; {} connections in {:.1} s from {}\n\n",
        p.target,
        p.address,
        p.sni,
        p.verification,
        p.connections.len(),
        p.wall_seconds,
        p.host.label()
    );
    out += &table(["group offered alone", "taken", "why not"], &a.groups);
    out += &format!("\n\nhybrid and X25519, a share each: {}\n", a.both_shares);
    out += &format!(
        "X25519's share, the hybrid without one: {}\n",
        a.without_share
    );
    if !a.client_hello.is_empty() {
        out += &format!("the hybrid's ClientHello: {}\n", a.client_hello);
    }
    out += &format!("chain: {}; CertificateVerify {}\n\n", a.chain, a.scheme);
    out += &table(
        [
            "group",
            "server flight",
            "segments",
            "initial window",
            "round trips (TCP + TLS), predicted",
            "seen",
        ],
        &a.flights,
    );
    out += "\n\n";
    out += &table(
        ["group", "handshakes", "median", "95% interval"],
        &a.latency,
    );
    out += &format!("\nTCP connect (about one round trip): {}\n", a.connect);
    if !a.delta.is_empty() {
        out += &format!("the hybrid's handshake against X25519's: {}\n", a.delta);
    }
    out
}
