//! The handshakes other than the full one with one key share (#34): which scenarios the handshake
//! step also makes in each mode, and what such a handshake costs against its full twin. Pure
//! functions of the results.
//!
//! A resumed TLS 1.3 handshake (psk_dhe_ke, RFC 8446 §2.2 and §4.2.9) still runs the key exchange,
//! so the hybrid's cost stays; the Certificate and CertificateVerify go, and with them the chain's
//! signing, verifying and bytes. A ClientHello with two key shares (the hybrid's and X25519's, as
//! Go 1.24+ and OpenSSL 3.5 send by default) costs bytes, and a key generation where the stack does
//! not reuse the hybrid's X25519 key.

use super::answer::{CERTIFICATE, HYBRID};
use super::handshake::{paired_connections, Connections, DeltaPairing, PairedDelta};
use crate::results::{Capacity, Cell, Handshakes, InMemory, Mode, Network, Scenario};

/// Whether the handshake step makes a scenario in `mode` as well as full:
/// - resumed: the TLS hybrid and its classical baseline, each with the baseline certificate (the
///   hybrid's difference when resuming) and with the answer's ML-DSA-65 chain (the chain's
///   difference, which resumption removes; suites/auth.toml pairs X25519 with it for this);
/// - two key shares: the hybrid with the baseline certificate (X25519 is its second share);
/// - HelloRetryRequest: the hybrid with the baseline certificate, X25519 predicted;
/// - HelloRetryRequest to X25519: X25519 with the baseline certificate, the hybrid predicted;
/// - QUIC with a NEW_TOKEN token or after a Retry (the network step's): see below.
pub fn made(
    mode: Mode,
    protocol: &str,
    group: &str,
    auth: Option<&str>,
    baseline_auth: &str,
) -> bool {
    if mode == Mode::Full {
        return true;
    }
    let Some((_, hybrid, classical)) = HYBRID.iter().find(|(p, ..)| *p == protocol) else {
        return false;
    };
    if protocol != "tls13" {
        return false;
    }
    let baseline = auth == Some(baseline_auth);
    match mode {
        Mode::Full => true,
        Mode::Resumed => {
            (group == *hybrid || group == *classical) && (baseline || auth == Some(CERTIFICATE.1))
        }
        Mode::TwoShares | Mode::HelloRetry => baseline && group == *hybrid,
        Mode::HelloRetryClassical => baseline && group == *classical,
        // QUIC's (the network step, #35): a token wherever the full handshake runs, the hybrid's
        // and X25519's, so that each chain's amplification round trip shows with it and without;
        // a Retry with the baseline certificate and ML-DSA-44's (the smallest chain past the
        // budget, which TCP's initial window still holds).
        Mode::Token => group == *hybrid || group == *classical,
        Mode::Retry => {
            (group == *hybrid || group == *classical) && (baseline || auth == Some(SMALLEST_PQ))
        }
    }
}

/// The smallest post-quantum chain of the registry (suites/auth.toml): over QUIC past the
/// anti-amplification budget of a one- or two-datagram Initial, over TCP within the initial window.
pub const SMALLEST_PQ: &str = "ML-DSA-44";

/// What resumption saves by the composition, along the critical path: the group's resumed suite
/// against the scenario's full one (its chain's), for the stack's composition. `None` where the
/// run composed either not.
pub(crate) fn composed_saving(r: &crate::results::Results, s: &Scenario) -> Option<f64> {
    let baseline = r.baseline_auth().unwrap_or("");
    let full = crate::auth::full_suite(&s.suite, s.auth_name(), baseline);
    let resumed = r.suite(&crate::auth::resumed_suite(&s.suite), &s.composed_stack)?;
    let full = r.suite(&full, &s.composed_stack)?;
    Some(crate::compose::predicted_difference(resumed, full))
}

/// The group a client that retries to X25519 predicted first (`Mode::HelloRetryClassical`): the
/// protocol's hybrid.
pub fn predicted_hybrid(protocol: &str) -> Option<&'static str> {
    HYBRID
        .iter()
        .find(|(p, ..)| *p == protocol)
        .map(|(_, hybrid, _)| *hybrid)
}

/// The group of the second key share a two-share ClientHello offers: the hybrid's classical
/// baseline (X25519).
pub fn second_share(protocol: &str) -> Option<&'static str> {
    HYBRID
        .iter()
        .find(|(p, ..)| *p == protocol)
        .map(|(_, _, classical)| *classical)
}

/// A scenario of another mode beside the full one of the same stack, group, chain and form.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pair<'a> {
    pub(crate) full: &'a Scenario,
    pub(crate) other: &'a Scenario,
}

/// Every scenario of `mode` with its full twin, in the file's order (one without a twin is left
/// out: nothing to set it beside).
pub(crate) fn pairs(h: &Handshakes, mode: Mode) -> Vec<Pair<'_>> {
    h.other_modes
        .iter()
        .filter(|o| o.mode == mode)
        .filter_map(|o| {
            let full = h.scenarios.iter().find(|f| {
                f.stack == o.stack
                    && f.protocol == o.protocol
                    && f.suite == o.suite
                    && f.auth_name() == o.auth_name()
                    && f.instrumented == o.instrumented
            })?;
            Some(Pair { full, other: o })
        })
        .collect()
}

/// The other mode minus full, paired: the two took turns block by block in every round both ran
/// in (one stack's scenarios share their turns), so this is a paired difference like the others.
/// `None` before the paired design or where the connections do not pair.
pub(crate) fn difference(p: &Pair, h: &Handshakes) -> Option<PairedDelta> {
    paired_connections(
        Connections::of(p.other),
        Connections::of(p.full),
        DeltaPairing::of(h)?,
    )
}

/// The two medians over the rounds both ran in, nanoseconds (full, other): the full handshake
/// gets more rounds where it is a row of the answer table, and on a host whose speed moves the
/// rounds only it ran in would move its median against the other's. `None` where the connections
/// do not make their samples or no round is shared.
pub(crate) fn shared_medians(p: &Pair) -> Option<(f64, f64)> {
    let (f, o) = (Connections::of(p.full), Connections::of(p.other));
    let median = |c: &Connections, other: &Connections| {
        let groups = crate::stats::groups(c.totals_ns, c.sizes)?;
        let xs: Vec<f64> = groups
            .iter()
            .zip(c.rounds)
            .filter(|(_, r)| other.rounds.contains(r))
            .flat_map(|(g, _)| g.iter().map(|&x| x as f64))
            .collect();
        (!xs.is_empty()).then(|| crate::stats::median(&xs))
    };
    Some((median(&f, &o)?, median(&o, &f)?))
}

/// The other mode's median as a share of the full one's over the rounds both ran in, percent.
pub(crate) fn kept_pct(p: &Pair) -> Option<f64> {
    let (f, o) = shared_medians(p)?;
    (f > 0.0).then(|| o / f * 100.0)
}

/// The in-memory capacity rows of a resumed scenario (`capacity.resumed`) and its full twin:
/// (full, resumed), matched by stack, group and authentication.
pub(crate) fn in_memory_rates<'a>(
    c: &'a Capacity,
    stack: &str,
    group: &str,
    auth: Option<&str>,
) -> Option<(&'a InMemory, &'a InMemory)> {
    let of = |rows: &'a [InMemory]| {
        rows.iter()
            .find(|m| m.stack.name() == stack && m.group == group && m.auth.as_deref() == auth)
    };
    Some((of(&c.in_memory)?, of(&c.resumed)?))
}

/// The network cells of a resumed scenario and its full twin at the grid's point of `rtt_ms` with
/// no loss: (full, resumed), matched by stack, group and authentication.
pub(crate) fn network_cells<'a>(
    n: &'a Network,
    rtt_ms: f64,
    stack: &str,
    group: &str,
    auth: Option<&str>,
) -> Option<(&'a Cell, &'a Cell)> {
    let p = n
        .points
        .iter()
        .find(|p| p.loss_pct == 0.0 && (p.rtt_ns - rtt_ms * 1e6).abs() < 1.0)?;
    let of = |cells: &'a [Cell]| {
        cells
            .iter()
            .find(|c| c.stack.name() == stack && c.group == group && c.auth.as_deref() == auth)
    };
    Some((of(&p.cells)?, of(&p.resumed)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Mode, RealStack};

    #[test]
    fn quic_presents_a_token_with_every_chain_and_retries_with_ecdsa_and_ml_dsa_44() {
        let e = "ECDSA-P256";
        let token = |g: &str, a: &str| made(Mode::Token, "tls13", g, Some(a), e);
        let retry = |g: &str, a: &str| made(Mode::Retry, "tls13", g, Some(a), e);
        for a in [e, "ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "ML-DSA-44 leaf"] {
            assert!(token("X25519MLKEM768", a) && token("X25519", a), "{a}");
            assert!(!token("MLKEM768", a), "{a}");
        }
        assert!(retry("X25519", e) && retry("X25519MLKEM768", e));
        assert!(retry("X25519MLKEM768", SMALLEST_PQ));
        assert!(!retry("X25519MLKEM768", "ML-DSA-65") && !retry("MLKEM768", e));
        assert!(!made(Mode::Token, "ssh", "curve25519-sha256", None, e));
    }

    #[test]
    fn the_hybrid_its_baseline_and_the_answers_chain_are_resumed_and_nothing_else() {
        let e = "ECDSA-P256";
        let resumed = |g: &str, a: Option<&str>| made(Mode::Resumed, "tls13", g, a, e);
        assert!(resumed("X25519MLKEM768", Some(e)));
        assert!(resumed("X25519", Some(e)));
        assert!(resumed("X25519MLKEM768", Some("ML-DSA-65")));
        assert!(resumed("X25519", Some("ML-DSA-65")));
        assert!(!resumed("X25519", Some("ML-DSA-44")));
        assert!(!resumed("MLKEM768", Some(e)));
        assert!(!resumed("X25519MLKEM768", Some("ML-DSA-44")));
        // SSH has no resumption and no second share.
        assert!(!made(Mode::Resumed, "ssh", "curve25519-sha256", None, e));
        assert!(!made(
            Mode::TwoShares,
            "ssh",
            "mlkem768x25519-sha256",
            None,
            e
        ));
        // Two shares: the hybrid with the baseline chain only, X25519 beside it.
        assert!(made(Mode::TwoShares, "tls13", "X25519MLKEM768", Some(e), e));
        assert!(!made(Mode::TwoShares, "tls13", "X25519", Some(e), e));
        assert!(!made(
            Mode::TwoShares,
            "tls13",
            "X25519MLKEM768",
            Some("ML-DSA-65"),
            e
        ));
        assert!(made(
            Mode::HelloRetry,
            "tls13",
            "X25519MLKEM768",
            Some(e),
            e
        ));
        assert!(!made(Mode::HelloRetry, "tls13", "X25519", Some(e), e));
        // The other direction: X25519 after the client predicted the hybrid, baseline chain only.
        let classical = |g: &str, a: &str| made(Mode::HelloRetryClassical, "tls13", g, Some(a), e);
        assert!(classical("X25519", e));
        assert!(!classical("X25519MLKEM768", e));
        assert!(!classical("X25519", "ML-DSA-65"));
        assert_eq!(predicted_hybrid("tls13"), Some("X25519MLKEM768"));
        assert_eq!(second_share("tls13"), Some("X25519"));
        // Every scenario of every protocol is made full.
        assert!(made(Mode::Full, "ssh", "curve25519-sha256", None, e));
        assert!(made(Mode::Full, "tls13", "MLKEM768", Some("ML-DSA-87"), e));
    }

    fn scenario(suite: &str, mode: Mode, totals: &[u64]) -> Scenario {
        let mut s: Scenario = serde_json::from_value(serde_json::json!({
            "protocol": "tls13", "suite": suite, "stack": "rustls",
            "evidence": {"version": "TLSv1_3", "group": suite, "cipher": "", "cert_key": "",
                         "resumed": mode == Mode::Resumed, "client_share": null, "server_share": null},
            "median_ns": 0.0, "p95_ns": 0.0, "ready_median_ns": 0.0, "sample_medians_ns": [],
            "rsd_pct": 0.0, "client_to_server_bytes": 0.0, "server_to_client_bytes": 0.0,
            "declared_wire_bytes": null, "client_cpu_ns": 0.0, "server_cpu_ns": 0.0,
            "client_mem": {"rust_allocs": 0.0, "rust_bytes": 0.0, "c_allocs": 0.0, "c_bytes": 0.0},
            "server_mem": {"rust_allocs": 0.0, "rust_bytes": 0.0, "c_allocs": 0.0, "c_bytes": 0.0},
            "vs_baseline_ratio": null, "measured_delta_ns": null, "composed_delta_ns": null
        }))
        .expect("a scenario");
        s.mode = mode;
        s.stack = RealStack::new("rustls");
        s.totals_ns = totals.to_vec();
        s.sample_sizes = vec![totals.len()];
        s.sample_rounds = vec![0];
        s.median_ns = crate::stats::median(&totals.iter().map(|&t| t as f64).collect::<Vec<_>>());
        s
    }

    #[test]
    fn each_resumed_scenario_meets_its_full_twin_and_the_difference_pairs_block_by_block() {
        // Two blocks of two connections each: full 1000/1010 then 1100/1120, resumed 600/620
        // then 700/740. Block medians: full 1005, 1110; resumed 610, 720; differences −395, −390.
        let full = scenario("X25519", Mode::Full, &[1000, 1010, 1100, 1120]);
        let resumed = scenario("X25519", Mode::Resumed, &[600, 620, 700, 740]);
        let other = scenario("X25519MLKEM768", Mode::Full, &[2000, 2000, 2000, 2000]);
        let h: Handshakes = Handshakes {
            scenarios: vec![other, full],
            other_modes: vec![resumed],
            pair_block: Some(2),
            ..serde_json::from_value(serde_json::json!({
                "date_utc": "", "wall_seconds": 0.0, "samples": 1, "per_sample": 4,
                "scenarios": [], "failures": [], "notes": []
            }))
            .expect("handshakes")
        };
        assert!(pairs(&h, Mode::TwoShares).is_empty());
        let p = pairs(&h, Mode::Resumed);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].full.suite, "X25519");
        let d = difference(&p[0], &h).expect("paired");
        assert_eq!(d.pairs, 2);
        assert_eq!(d.median_ns, -392.5);
        // Medians 1055 and 660.
        assert_eq!(shared_medians(&p[0]), Some((1055.0, 660.0)));
        assert_eq!(kept_pct(&p[0]), Some(660.0 / 1055.0 * 100.0));
        // A round only the full one ran in does not move its median against the other's.
        let mut more = p[0].full.clone();
        more.totals_ns.extend([5000, 5000]);
        more.sample_sizes.push(2);
        more.sample_rounds.push(1);
        let q = Pair {
            full: &more,
            other: p[0].other,
        };
        assert_eq!(shared_medians(&q), Some((1055.0, 660.0)));
    }
}
