//! A lab server under h2load (`results::ServerLoad`): the rate h2load saw, the server's CPU per
//! handshake under that load and how busy its core was, each over the rounds with a t-interval;
//! and the cross-check of the rate against the capacity the real handshakes give the same server,
//! group and chain (one core's second over its CPU per handshake, `figures::server_cpu`). The two
//! agree where the server's core is the limit and its work per handshake does not change under
//! load; where they do not, the figures say which of the two it is.

use super::server_cpu;
use crate::results::{Capacity, Held, Mode, Results, Scenario, ServerLoad};
use crate::stats;

/// How far h2load's rate and the real handshakes' capacity may differ and still agree, percent
/// (#65: "agree within 10%").
pub const AGREE_PCT: f64 = 10.0;

/// Below this share of its core the server was not the limit: h2load's own core was.
pub const SERVER_BOUND_PCT: f64 = 90.0;

/// What the rounds of one server, group and chain under h2load give.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFigures {
    /// Handshakes a second: each round's succeeded connections over h2load's own elapsed time,
    /// their mean and its 95% half-width.
    pub rate_per_s: f64,
    pub rate_half95: Option<f64>,
    /// The server's CPU per handshake under the load, likewise.
    pub cpu_per_handshake_ns: f64,
    pub cpu_half95_ns: Option<f64>,
    /// The server's CPU over h2load's time, every round together, percent of one core.
    pub busy_pct: f64,
    pub rounds: usize,
}

/// The figures of `l`'s rounds; `None` without a round, or with one that served nothing or took
/// no time (`check` names those).
pub fn of(l: &ServerLoad) -> Option<LoadFigures> {
    if l.rounds.is_empty()
        || l.rounds
            .iter()
            .any(|r| r.succeeded == 0 || r.elapsed_ns == 0)
    {
        return None;
    }
    let rates: Vec<f64> = l
        .rounds
        .iter()
        .map(|r| r.succeeded as f64 / (r.elapsed_ns as f64 / 1e9))
        .collect();
    let cpu: Vec<f64> = l
        .rounds
        .iter()
        .map(|r| r.server_cpu_ns as f64 / r.succeeded as f64)
        .collect();
    // Summed as reals: a file's figures may be anything, and a sum of them must not wrap.
    let spent: f64 = l.rounds.iter().map(|r| r.server_cpu_ns as f64).sum();
    let elapsed: f64 = l.rounds.iter().map(|r| r.elapsed_ns as f64).sum();
    Some(LoadFigures {
        rate_per_s: stats::mean(&rates),
        rate_half95: stats::mean_half95(&rates).map(|(_, h)| h),
        cpu_per_handshake_ns: stats::mean(&cpu),
        cpu_half95_ns: stats::mean_half95(&cpu).map(|(_, h)| h),
        busy_pct: spent / elapsed * 100.0,
        rounds: l.rounds.len(),
    })
}

/// Why h2load's rate and the real handshakes' capacity differ by more than `AGREE_PCT`, or that
/// they agree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    Agree,
    /// The server's core was busy less than `SERVER_BOUND_PCT` of h2load's time: the load
    /// generator (its core doing the client's half of every handshake) was the limit.
    LoadBound {
        busy_pct: f64,
    },
    /// The server was the limit, but spent another CPU per handshake under load than in the
    /// real handshakes, one connection at a time (percent more, or less).
    ServerCpuDiffers {
        cpu_diff_pct: f64,
    },
}

/// h2load's rate set against the capacity the real handshakes give the same server, group and
/// chain.
#[derive(Debug, Clone, PartialEq)]
pub struct Crosscheck {
    /// The real handshakes' server CPU per handshake (over their samples where stored, else over
    /// every connection), and the handshakes a core serves a second at it.
    pub handshake_cpu_ns: f64,
    pub capacity_per_s: f64,
    /// h2load's rate over that capacity, less one, percent.
    pub diff_pct: f64,
    pub verdict: Verdict,
}

/// The real handshakes' scenario of `l`'s server, group and chain: plain, full handshakes.
pub fn scenario<'a>(r: &'a Results, l: &ServerLoad) -> Option<&'a Scenario> {
    r.handshakes.as_ref()?.scenarios.iter().find(|s| {
        s.stack.name() == l.server
            && s.suite == l.group
            && s.auth_name() == Some(l.auth.as_str())
            && !s.instrumented
            && s.mode == Mode::Full
    })
}

/// `l` against the real handshakes of the run, where they have its scenario.
pub fn crosscheck(r: &Results, l: &ServerLoad) -> Option<Crosscheck> {
    let s = scenario(r, l)?;
    let load = of(l)?;
    let handshake_cpu_ns = server_cpu::of(s).map_or(s.server_cpu_ns, |c| c.per_handshake_ns);
    verdict(&load, handshake_cpu_ns)
}

/// The cross-check of `load` against a CPU per handshake of `handshake_cpu_ns`.
pub fn verdict(load: &LoadFigures, handshake_cpu_ns: f64) -> Option<Crosscheck> {
    if handshake_cpu_ns <= 0.0 {
        return None;
    }
    let capacity_per_s = 1e9 / handshake_cpu_ns;
    let diff_pct = (load.rate_per_s / capacity_per_s - 1.0) * 100.0;
    let verdict = if diff_pct.abs() <= AGREE_PCT {
        Verdict::Agree
    } else if load.busy_pct < SERVER_BOUND_PCT {
        Verdict::LoadBound {
            busy_pct: load.busy_pct,
        }
    } else {
        Verdict::ServerCpuDiffers {
            cpu_diff_pct: (load.cpu_per_handshake_ns / handshake_cpu_ns - 1.0) * 100.0,
        }
    };
    Some(Crosscheck {
        handshake_cpu_ns,
        capacity_per_s,
        diff_pct,
        verdict,
    })
}

/// The server's proportional set size per held connection: from none held to the most held,
/// bytes. `None` without two steps.
pub fn held_bytes(l: &ServerLoad) -> Option<f64> {
    growth(l.held.as_ref()?, |h| &h.pss_bytes)
}

/// The growth of one of a server's held steps' memory figures (`of`: PSS or RSS) per connection,
/// from none held to the most held, bytes. `None` without two steps.
pub fn growth(h: &Held, of: fn(&Held) -> &[u64]) -> Option<f64> {
    let xs = of(h);
    if h.connections.len() < 2 || xs.len() != h.connections.len() {
        return None;
    }
    let k = h.connections.len() - 1;
    let n = h.connections[k].checked_sub(h.connections[0])?;
    if n == 0 {
        return None;
    }
    Some((xs[k] as f64 - xs[0] as f64) / n as f64)
}

/// The difference in proportional set size per held connection between two of a server's
/// scenarios, where it held both: a TLS server's from its rows under h2load (group and chain
/// each; a chain of `None` takes the first row of the group), an SSH server's from its own rows
/// (group each: an SSH scenario names no chain, and its server is held with one host key).
pub fn held_delta_bytes(
    c: &Capacity,
    server: &str,
    (group, auth): (&str, Option<&str>),
    (baseline_group, baseline_auth): (&str, Option<&str>),
) -> Option<f64> {
    let of = |g: &str, a: Option<&str>| {
        c.servers
            .iter()
            .find(|l| l.server == server && l.group == g && a.is_none_or(|a| a == l.auth))
            .and_then(held_bytes)
            .or_else(|| {
                let h = c
                    .servers_held
                    .iter()
                    .find(|h| h.server == server && h.group == g)?;
                growth(&h.held, |h| &h.pss_bytes)
            })
    };
    Some(of(group, auth)? - of(baseline_group, baseline_auth)?)
}

impl Verdict {
    /// The verdict in a few words, for a table.
    pub fn label(&self) -> String {
        match self {
            Verdict::Agree => format!("agree within {AGREE_PCT:.0}%"),
            Verdict::LoadBound { busy_pct } => format!(
                "h2load's core is the limit: the server was busy {busy_pct:.0}% of the time"
            ),
            Verdict::ServerCpuDiffers { cpu_diff_pct } => format!(
                "the server is the limit, at {cpu_diff_pct:+.0}% CPU per handshake under load"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ServerLoadRound;

    fn load(rounds: &[(u64, u64, u64)]) -> ServerLoad {
        ServerLoad {
            server: "nginx".into(),
            version: "1.26.3".into(),
            server_groups: vec!["X25519MLKEM768".into(), "X25519".into()],
            group: "X25519MLKEM768".into(),
            auth: "ECDSA-P256".into(),
            tool: "h2load nghttp2/1.64.0".into(),
            tls_version: "TLSv1.3".into(),
            connections: 500,
            held: None,
            rounds: rounds
                .iter()
                .enumerate()
                .map(
                    |(turn, &(elapsed_ns, succeeded, server_cpu_ns))| ServerLoadRound {
                        turn,
                        elapsed_ns,
                        succeeded,
                        failed: 0,
                        server_cpu_ns,
                    },
                )
                .collect(),
        }
    }

    #[test]
    fn rounds_give_the_rate_the_cpu_and_how_busy_the_server_was() {
        // 500 handshakes in 0.25 s and in 0.5 s: 2,000 and 1,000 a second, mean 1,500, sd
        // 707.107, t(1) 12.706: half = 12.706 x 707.107 / sqrt(2) = 6,353. CPU 0.2 s and 0.25 s:
        // 400 and 500 us a handshake; busy 0.45 s of 0.75 s = 60%.
        let f = of(&load(&[
            (250_000_000, 500, 200_000_000),
            (500_000_000, 500, 250_000_000),
        ]))
        .unwrap();
        assert_eq!(f.rate_per_s, 1500.0);
        assert!((f.rate_half95.unwrap() - 6353.0).abs() < 1.0, "{f:?}");
        assert_eq!(f.cpu_per_handshake_ns, 450_000.0);
        assert!((f.busy_pct - 60.0).abs() < 1e-9);
        assert_eq!(f.rounds, 2);
        // A round that served nothing gives no figures.
        assert_eq!(of(&load(&[(250_000_000, 0, 1)])), None);
        assert_eq!(of(&load(&[])), None);
    }

    #[test]
    fn memory_per_held_connection_is_the_growth_over_the_connections() {
        use crate::results::Held;
        let mut a = load(&[]);
        // 40 MB with none held, 52 MB with 500: 24,000 bytes a connection.
        a.held = Some(Held {
            connections: vec![0, 250, 500],
            established: vec![0, 250, 500],
            rss_bytes: vec![50_000_000, 56_000_000, 62_000_000],
            pss_bytes: vec![40_000_000, 46_000_000, 52_000_000],
        });
        assert_eq!(held_bytes(&a), Some(24_000.0));
        // X25519's at 22,000 a connection: the hybrid holds 2,000 bytes more each.
        let mut b = a.clone();
        b.group = "X25519".into();
        b.held.as_mut().unwrap().pss_bytes[2] = 51_000_000;
        let mut c: Capacity = serde_json::from_value(serde_json::json!({
            "date_utc": "", "wall_seconds": 0.0, "cores": 2, "fd_limit_before": 0,
            "fd_limit": 0, "in_memory": [], "sockets": [], "memory": [],
        }))
        .unwrap();
        c.servers = vec![a.clone(), b];
        let hybrid = ("X25519MLKEM768", Some("ECDSA-P256"));
        let delta = held_delta_bytes(&c, "nginx", hybrid, ("X25519", Some("ECDSA-P256")));
        assert_eq!(delta, Some(2_000.0));
        // Another chain's rows are not these.
        let other = held_delta_bytes(&c, "nginx", hybrid, ("X25519", Some("ML-DSA-65")));
        assert_eq!(other, None);
        // An SSH server's own rows, whose scenarios name no chain: 10 MB over 50 connections
        // (200,000 bytes each) against 9.5 MB (190,000): 10,000 bytes more each.
        let ssh = |group: &str, top: u64| crate::results::ServerHeld {
            server: "sshd".into(),
            version: "10.0p2".into(),
            server_groups: vec!["mlkem768x25519-sha256".into(), "curve25519-sha256".into()],
            group: group.into(),
            auth: "ECDSA-P256".into(),
            held: Held {
                connections: vec![0, 25, 50],
                established: vec![0, 25, 50],
                rss_bytes: vec![9_000_000, 20_000_000, 30_000_000],
                pss_bytes: vec![4_000_000, 9_000_000, top],
            },
        };
        c.servers_held = vec![
            ssh("mlkem768x25519-sha256", 14_000_000),
            ssh("curve25519-sha256", 13_500_000),
        ];
        let delta = held_delta_bytes(
            &c,
            "sshd",
            ("mlkem768x25519-sha256", None),
            ("curve25519-sha256", None),
        );
        assert_eq!(delta, Some(10_000.0));
        // Whatever chain the answer's baseline names: the host key is the server's one.
        let delta = held_delta_bytes(
            &c,
            "sshd",
            ("mlkem768x25519-sha256", Some("ML-DSA-65")),
            ("curve25519-sha256", Some("ML-DSA-65")),
        );
        assert_eq!(delta, Some(10_000.0));
        // One step: no figure.
        a.held.as_mut().unwrap().connections.truncate(1);
        assert_eq!(held_bytes(&a), None);
    }

    #[test]
    fn the_verdict_names_which_side_was_the_limit() {
        // One round: 1,900 a second, CPU 500 us (busy 95%).
        let busy = of(&load(&[(1_000_000_000, 1900, 950_000_000)])).unwrap();
        // At 500 us in the real handshakes a core serves 2,000: -5%, they agree.
        let c = verdict(&busy, 500_000.0).unwrap();
        assert_eq!(c.capacity_per_s, 2000.0);
        assert!((c.diff_pct + 5.0).abs() < 1e-9);
        assert_eq!(c.verdict, Verdict::Agree);
        // At 400 us a core would serve 2,500: -24%, and the server was busy: its CPU per
        // handshake under load is 500 / 400 = +25%.
        let c = verdict(&busy, 400_000.0).unwrap();
        assert!((c.diff_pct + 24.0).abs() < 1e-9);
        match c.verdict {
            Verdict::ServerCpuDiffers { cpu_diff_pct } => {
                assert!((cpu_diff_pct - 25.0).abs() < 1e-9)
            }
            v => panic!("{v:?}"),
        }
        // 1,000 a second with the server busy half the time: h2load was the limit.
        let idle = of(&load(&[(1_000_000_000, 1000, 500_000_000)])).unwrap();
        assert_eq!(
            verdict(&idle, 500_000.0).unwrap().verdict,
            Verdict::LoadBound { busy_pct: 50.0 }
        );
        assert_eq!(verdict(&idle, 0.0), None);
    }
}
