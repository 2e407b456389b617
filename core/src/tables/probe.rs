//! A probe as text: what `pqprof probe` prints as it finishes, one table a question, each answer
//! from the stored findings.

use crate::figures::probe::scheme_name;
use crate::results::Probe;
use crate::units::{bytes, signed_time, time};

fn table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(header.to_vec());
    t
}

pub fn terminal(p: &Probe) -> String {
    let f = &p.findings;
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
    let mut groups = table(&["group offered alone", "taken", "why not"]);
    for g in &f.groups {
        groups.add_row(vec![
            g.group.clone(),
            if g.taken { "yes" } else { "no" }.into(),
            g.reason.clone().unwrap_or_default(),
        ]);
    }
    out += &format!("{groups}\n\n");
    out += &format!(
        "hybrid and X25519, a share each: {}\n",
        f.with_both_shares.as_deref().unwrap_or("no handshake")
    );
    out += &format!(
        "X25519's share, the hybrid without one: {}\n",
        match &f.hybrid_without_share {
            Some((g, true)) => format!("{g}, after a HelloRetryRequest (one more round trip)"),
            Some((g, false)) => format!("{g}, no retry"),
            None => "no handshake".into(),
        }
    );
    if let Some((b, segs)) = f.client_hello {
        out += &format!(
            "the hybrid's ClientHello: {} in {segs} TCP segment(s) of {} bytes\n",
            bytes(b as usize),
            p.mss_bytes
        );
    }
    let scheme = p
        .connections
        .iter()
        .find_map(|c| c.scheme)
        .map_or_else(|| "?".into(), scheme_name);
    out += &format!(
        "chain: {} in {} certificate(s) ({}); CertificateVerify {scheme}\n\n",
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
            .join(", ")
    );
    let mut flights = table(&[
        "group",
        "server flight",
        "segments",
        "initial window",
        "round trips (TCP + TLS), predicted",
    ]);
    for fl in &f.flights {
        flights.add_row(vec![
            fl.group.clone(),
            bytes(fl.bytes as usize),
            fl.segments.to_string(),
            fl.initial_window.to_string(),
            fl.predicted_round_trips.to_string(),
        ]);
    }
    out += &format!("{flights}\n\n");
    let mut latency = table(&[
        "group",
        "handshakes",
        "median",
        "95% interval",
        "round trips seen",
    ]);
    for l in &f.latency {
        latency.add_row(vec![
            l.group.clone(),
            l.handshakes.to_string(),
            time(l.median_ns),
            l.ci95_ns.map_or_else(String::new, |(lo, hi)| {
                format!("{} – {}", time(lo), time(hi))
            }),
            l.observed_round_trips
                .map_or_else(|| "path too short to tell".into(), |r| format!("{r:.1}")),
        ]);
    }
    out += &format!("{latency}\n");
    out += &format!(
        "TCP connect (about one round trip): {}\n",
        time(f.connect_median_ns)
    );
    if let Some(d) = &f.hybrid_delta {
        out += &format!(
            "the hybrid adds {} to the handshake{} over {} paired rounds\n",
            signed_time(d.median_ns),
            d.ci95_ns.map_or_else(String::new, |(lo, hi)| format!(
                " (95% interval {} to {})",
                signed_time(lo),
                signed_time(hi)
            )),
            d.pairs
        );
    }
    out
}
