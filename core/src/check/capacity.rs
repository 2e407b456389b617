//! The `capacity` section: every summary, rate and ratio recomputed from the stored per-handshake
//! samples, load-step latencies and memory steps; the composed server-side difference recomputed
//! from the phases.

use super::differs;
use super::problem::Problem;
use crate::results::{Capacity, Results, Summary};
use crate::stats;

fn summary(problems: &mut Vec<Problem>, name: &str, stored: &Summary, samples: &[u64]) {
    let xs: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
    let s = match stats::Sample::new(&xs) {
        Ok(s) => s.summary(),
        Err(e) => {
            problems.push(Problem::incomplete(format!("{name}: {e}")));
            return;
        }
    };
    differs(
        problems,
        format!("{name} mean_ns"),
        stored.mean_ns,
        s.mean_ns,
    );
    differs(
        problems,
        format!("{name} median_ns"),
        stored.median_ns,
        s.median_ns,
    );
    differs(problems, format!("{name} p95_ns"), stored.p95_ns, s.p95_ns);
    differs(problems, format!("{name} p99_ns"), stored.p99_ns, s.p99_ns);
    if stored.iterations != samples.len() {
        problems.push(Problem::incomplete(format!(
            "{name}: {} iterations stored, {} samples",
            stored.iterations,
            samples.len()
        )));
    }
}

pub(crate) fn check(results: &Results) -> Vec<Problem> {
    let mut problems = Vec::new();
    let Some(c) = &results.capacity else {
        return problems;
    };
    in_memory(&mut problems, c, results);
    for s in &c.sockets {
        for st in &s.steps {
            let name = format!(
                "capacity sockets {} {} x{}",
                s.stack.name(),
                s.group,
                st.concurrency
            );
            if st.latency_ns.len() as u64 != st.completed {
                problems.push(Problem::incomplete(format!(
                    "{name}: {} latencies for {} completed handshakes",
                    st.latency_ns.len(),
                    st.completed
                )));
            }
            if st.completed > 0 {
                let sorted =
                    stats::sorted(&st.latency_ns.iter().map(|&x| x as f64).collect::<Vec<_>>());
                differs(
                    &mut problems,
                    format!("{name} p50_ns"),
                    st.p50_ns,
                    stats::percentile_sorted(&sorted, 50.0),
                );
                differs(
                    &mut problems,
                    format!("{name} p90_ns"),
                    st.p90_ns,
                    stats::percentile_sorted(&sorted, 90.0),
                );
                differs(
                    &mut problems,
                    format!("{name} p99_ns"),
                    st.p99_ns,
                    stats::percentile_sorted(&sorted, 99.0),
                );
                differs(
                    &mut problems,
                    format!("{name} server_cpu_per_handshake_ns"),
                    st.server_cpu_per_handshake_ns,
                    st.server_cpu_ns / st.completed as f64,
                );
            }
            differs(
                &mut problems,
                format!("{name} handshakes_per_s"),
                st.handshakes_per_s,
                st.completed as f64 / (st.duration_ns / 1e9),
            );
        }
    }
    for m in &c.memory {
        let name = format!("capacity memory {} {}", m.stack.name(), m.group);
        let (Some(first), Some(last)) = (m.steps.first(), m.steps.last()) else {
            problems.push(Problem::incomplete(format!("{name}: no steps")));
            continue;
        };
        if first.connections != 0
            || last.connections != m.per_connection.connections
            || last.connections == 0
        {
            problems.push(Problem::incomplete(format!(
                "{name}: steps must run from 0 connections to the per-connection figure's {}",
                m.per_connection.connections
            )));
            continue;
        }
        let pc = &m.per_connection;
        let fresh = crate::figures::capacity::per_connection(first, last, pc.page_bytes);
        for (field, stored, recomputed) in [
            ("heap_rust_bytes", pc.heap_rust_bytes, fresh.heap_rust_bytes),
            ("heap_c_bytes", pc.heap_c_bytes, fresh.heap_c_bytes),
            ("heap_go_bytes", pc.heap_go_bytes, fresh.heap_go_bytes),
            ("heap_bytes", pc.heap_bytes, fresh.heap_bytes),
            ("rss_bytes", pc.rss_bytes, fresh.rss_bytes),
            ("kernel_bytes", pc.kernel_bytes, fresh.kernel_bytes),
            (
                "kernel_slab_bytes",
                pc.kernel_slab_bytes,
                fresh.kernel_slab_bytes,
            ),
        ] {
            differs(&mut problems, format!("{name} {field}"), stored, recomputed);
        }
        let med = |v: &[i64]| stats::median(&v.iter().map(|&x| x as f64).collect::<Vec<_>>());
        if !m.peak_bytes.is_empty() {
            differs(
                &mut problems,
                format!("{name} peak_median_bytes"),
                m.peak_median_bytes,
                med(&m.peak_bytes),
            );
            differs(
                &mut problems,
                format!("{name} retained_median_bytes"),
                m.retained_median_bytes,
                med(&m.retained_bytes),
            );
        }
        if m.peak_bytes
            .iter()
            .zip(&m.retained_bytes)
            .any(|(p, r)| p < r)
        {
            problems.push(Problem::bound(format!(
                "{name}: a handshake retained more than its peak"
            )));
        }
    }
    for l in &c.servers {
        servers(&mut problems, l);
    }
    for h in &c.servers_held {
        ssh_held(&mut problems, h);
    }
    problems
}

/// A server under h2load (`figures::server_load` computes its figures from these rounds): every
/// connection of every round succeeded over TLS 1.3 with the one group h2load offered, which the
/// server was configured with; each round took time and the server's CPU grew over it.
fn servers(problems: &mut Vec<Problem>, l: &crate::results::ServerLoad) {
    let name = format!(
        "capacity {} {} + {} under h2load",
        l.server, l.group, l.auth
    );
    if l.version.is_empty() || l.tool.is_empty() {
        problems.push(Problem::evidence(format!(
            "{name}: no server version or no h2load version"
        )));
    }
    if !l.server_groups.contains(&l.group) {
        problems.push(Problem::evidence(format!(
            "{name}: h2load offered {}, which the server was not given ({})",
            l.group,
            l.server_groups.join(", ")
        )));
    }
    if l.tls_version != "TLSv1.3" {
        problems.push(Problem::evidence(format!(
            "{name}: h2load negotiated {:?}, not TLSv1.3",
            l.tls_version
        )));
    }
    if l.rounds.is_empty() {
        problems.push(Problem::incomplete(format!("{name}: no rounds")));
    }
    for (k, r) in l.rounds.iter().enumerate() {
        if r.succeeded.checked_add(r.failed) != Some(l.connections as u64) {
            problems.push(Problem::incomplete(format!(
                "{name}: round {k} counts {} succeeded and {} failed of {} connections",
                r.succeeded, r.failed, l.connections
            )));
        }
        if r.failed > 0 {
            problems.push(Problem::evidence(format!(
                "{name}: {} connection(s) of round {k} failed",
                r.failed
            )));
        }
        if r.elapsed_ns == 0 || r.server_cpu_ns == 0 {
            problems.push(Problem::bound(format!(
                "{name}: round {k} took {} ns and the server {} ns of CPU",
                r.elapsed_ns, r.server_cpu_ns
            )));
        }
    }
    if let Some(h) = &l.held {
        held(problems, &name, h);
    }
    let mut turns: Vec<usize> = l.rounds.iter().map(|r| r.turn).collect();
    turns.sort_unstable();
    if turns.windows(2).any(|w| w[0] == w[1]) {
        problems.push(Problem::incomplete(format!(
            "{name}: two rounds in one turn"
        )));
    }
}

/// An SSH server's held connections: its version, the method offered one it was configured
/// with, and the steps as `held` holds any server's.
fn ssh_held(problems: &mut Vec<Problem>, h: &crate::results::ServerHeld) {
    let name = format!("capacity {} {} with connections held", h.server, h.group);
    if h.version.is_empty() {
        problems.push(Problem::evidence(format!("{name}: no server version")));
    }
    if !h.server_groups.contains(&h.group) {
        problems.push(Problem::evidence(format!(
            "{name}: the client offered {}, which the server was not given ({})",
            h.group,
            h.server_groups.join(", ")
        )));
    }
    held(problems, &name, &h.held);
}

/// A server's memory with connections held: steps from none held up, a memory figure for each,
/// the server's established connections at each step the ones held (its evidence), and a
/// proportional set size within its resident one.
fn held(problems: &mut Vec<Problem>, name: &str, h: &crate::results::Held) {
    let n = h.connections.len();
    if n < 2 || h.rss_bytes.len() != n || h.pss_bytes.len() != n {
        problems.push(Problem::incomplete(format!(
            "{name}: {n} held-connection steps with {} and {} memory figures",
            h.rss_bytes.len(),
            h.pss_bytes.len()
        )));
    } else if h.connections[0] != 0 || h.connections.windows(2).any(|w| w[0] >= w[1]) {
        problems.push(Problem::incomplete(format!(
            "{name}: held connections {:?}: not 0 and then more at each step",
            h.connections
        )));
    }
    if h.established != h.connections {
        problems.push(Problem::evidence(format!(
            "{name}: the server held {:?} connections at steps of {:?}",
            h.established, h.connections
        )));
    }
    if h.pss_bytes
        .iter()
        .zip(&h.rss_bytes)
        .any(|(p, r)| *p == 0 || p > r)
    {
        problems.push(Problem::bound(format!(
            "{name}: a proportional set size of zero or above its resident one"
        )));
    }
}

fn in_memory(problems: &mut Vec<Problem>, c: &Capacity, results: &Results) {
    let full = c.in_memory.iter().map(|m| (m, false));
    for (m, resumed) in full.chain(c.resumed.iter().map(|m| (m, true))) {
        let name = format!(
            "capacity in-memory {} {}{}{}",
            m.stack.name(),
            m.group,
            m.auth.as_ref().map_or(String::new(), |a| format!(" + {a}")),
            if resumed { " (resumed)" } else { "" }
        );
        resumptions(problems, &name, m, resumed);
        if resumed {
            twin(problems, &name, m, c);
        }
        if m.client_ns.len() != m.wall_ns.len() || m.server_ns.len() != m.wall_ns.len() {
            problems.push(Problem::incomplete(format!(
                "{name}: client, server and wall samples differ in number"
            )));
            continue;
        }
        if m.client_ns
            .iter()
            .zip(&m.server_ns)
            .zip(&m.wall_ns)
            .any(|((c, s), w)| c + s > *w)
        {
            problems.push(Problem::bound(format!(
                "{name}: a handshake's two sides add up to more than its wall time"
            )));
        }
        summary(problems, &format!("{name} client"), &m.client, &m.client_ns);
        summary(problems, &format!("{name} server"), &m.server, &m.server_ns);
        summary(problems, &format!("{name} wall"), &m.wall, &m.wall_ns);
        if let Some((rate, ci)) = crate::figures::capacity::rate_per_s(&m.wall_ns) {
            differs(
                problems,
                format!("{name} handshakes_per_s"),
                m.handshakes_per_s,
                rate,
            );
            if let (Some(a), Some(b)) = (m.handshakes_per_s_ci95, ci) {
                differs(
                    problems,
                    format!("{name} handshakes_per_s_ci95 low"),
                    a.0,
                    b.0,
                );
                differs(
                    problems,
                    format!("{name} handshakes_per_s_ci95 high"),
                    a.1,
                    b.1,
                );
            }
            if let Some(pr) = &m.precision {
                // The rounds are not stored one by one: the half-width and the reason are what
                // the samples can hold the record to.
                super::precision::check(
                    problems,
                    &name,
                    pr,
                    ci,
                    rate,
                    super::precision::Batches {
                        count: pr.batches,
                        what: "rounds",
                        confirm: 0,
                    },
                );
            }
        }
        if let Some((rate, _)) = crate::figures::capacity::rate_per_s(&m.server_ns) {
            differs(
                problems,
                format!("{name} server_per_core_s"),
                m.server_per_core_s,
                rate,
            );
            differs(
                problems,
                format!("{name} servers_for_10k"),
                m.servers_for_10k,
                10_000.0 / (rate * c.cores.max(1) as f64),
            );
        }
        if let Some(base) = &m.baseline {
            // The row it is against: group and authentication where stored (schema 3), else the
            // baseline group (older files had one authentication).
            let against = m.against.clone().unwrap_or(crate::results::Against {
                suite: base.clone(),
                auth: m.auth.clone(),
            });
            match c
                .in_memory
                .iter()
                .find(|b| b.stack == m.stack && b.group == against.suite && b.auth == against.auth)
            {
                Some(b) => {
                    if let Some(v) = m.vs_baseline {
                        differs(
                            problems,
                            format!("{name} vs_baseline"),
                            v,
                            m.server_per_core_s / b.server_per_core_s,
                        );
                    }
                    if let Some(d) = m.server_delta_ns {
                        differs(
                            problems,
                            format!("{name} server_delta_ns"),
                            d,
                            m.server.median_ns - b.server.median_ns,
                        );
                    }
                    if let Some(d) = m.composed_server_delta_ns {
                        // The baseline authentication is the one the row is against (for the
                        // baseline's own rows, its own).
                        let baseline_auth = against.auth.clone().unwrap_or_default();
                        let full = |g: &str, a: Option<&str>| {
                            crate::auth::full_suite(g, a, &baseline_auth)
                        };
                        let fresh = crate::figures::capacity::composed_server_delta(
                            results,
                            &m.composed_stack(),
                            &full(&m.group, m.auth.as_deref()),
                            &full(&against.suite, against.auth.as_deref()),
                        );
                        match fresh {
                            Some(x) => differs(problems, format!("{name} composed_server_delta_ns"), d, x),
                            None => problems.push(Problem::incomplete(format!("{name}: a composed server-side difference without its full-handshake suites"))),
                        }
                    }
                }
                None => problems.push(Problem::incomplete(format!(
                    "{name}: its baseline {base} was not measured"
                ))),
            }
        }
    }
}

/// A resumed row is against its full twin (the same stack, group and authentication in
/// `in_memory`, which must be there), with no composed figure, and is the only resumed row of its
/// scenario.
fn twin(problems: &mut Vec<Problem>, name: &str, m: &crate::results::InMemory, c: &Capacity) {
    let same =
        |b: &crate::results::InMemory| b.stack == m.stack && b.group == m.group && b.auth == m.auth;
    let own = crate::results::Against {
        suite: m.group.clone(),
        auth: m.auth.clone(),
    };
    if m.against.as_ref() != Some(&own) || m.baseline.as_ref() != Some(&m.group) {
        problems.push(Problem::evidence(format!(
            "{name}: a resumed row is against its full twin, not {:?}",
            m.against
        )));
    }
    if !c.in_memory.iter().any(same) {
        problems.push(Problem::incomplete(format!(
            "{name}: no full row of the same scenario to set it beside"
        )));
    }
    if c.resumed.iter().filter(|b| same(b)).count() > 1 {
        problems.push(Problem::evidence(format!(
            "{name}: more than one resumed row of the same scenario"
        )));
    }
    if m.composed_server_delta_ns.is_some() {
        problems.push(Problem::incomplete(format!(
            "{name}: a composed server-side difference, which no resumed suite gives"
        )));
    }
}

/// A resumed row's handshakes all resumed, as its client saw them (a resumption that fell back to
/// a full handshake would put the certificate's cost back in); a full row claims none.
fn resumptions(
    problems: &mut Vec<Problem>,
    name: &str,
    m: &crate::results::InMemory,
    resumed: bool,
) {
    match (resumed, m.resumptions) {
        (true, Some(n)) if n == m.wall_ns.len() => {}
        (true, Some(n)) => problems.push(Problem::evidence(format!(
            "{name}: {n} of its {} handshakes resumed; a resumed row's must all resume",
            m.wall_ns.len()
        ))),
        (true, None) => problems.push(Problem::evidence(format!(
            "{name}: a resumed row without its count of resumptions"
        ))),
        (false, Some(n)) if n > 0 => problems.push(Problem::evidence(format!(
            "{name}: a full handshake's row says {n} of its handshakes resumed"
        ))),
        (false, _) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{ServerLoad, ServerLoadRound};

    #[test]
    fn a_server_under_h2load_is_held_to_its_evidence_and_counts() {
        let round = |turn, succeeded, failed| ServerLoadRound {
            turn,
            elapsed_ns: 150_000_000,
            succeeded,
            failed,
            server_cpu_ns: 90_000_000,
        };
        let mut l = ServerLoad {
            server: "nginx".into(),
            version: "1.26.3".into(),
            server_groups: vec!["X25519MLKEM768".into(), "X25519".into()],
            group: "X25519".into(),
            auth: "ECDSA-P256".into(),
            tool: "h2load nghttp2/1.64.0".into(),
            tls_version: "TLSv1.3".into(),
            connections: 200,
            rounds: vec![round(0, 200, 0), round(2, 200, 0)],
            held: Some(crate::results::Held {
                connections: vec![0, 200],
                established: vec![0, 200],
                rss_bytes: vec![10_000_000, 15_000_000],
                pss_bytes: vec![8_000_000, 13_000_000],
            }),
        };
        let check = |l: &ServerLoad| {
            let mut p = Vec::new();
            servers(&mut p, l);
            p
        };
        assert!(check(&l).is_empty(), "{:?}", check(&l));
        l.group = "MLKEM768".into();
        assert!(check(&l)[0].is(
            crate::check::problem::Kind::Evidence,
            "which the server was not given"
        ));
        l.group = "X25519".into();
        l.rounds[1] = round(2, 190, 10);
        assert!(check(&l)[0].is(
            crate::check::problem::Kind::Evidence,
            "10 connection(s) of round 1 failed"
        ));
        l.rounds[1] = round(0, 199, 0);
        let p = check(&l);
        assert!(
            p.iter()
                .any(|p| p.to_string().contains("counts 199 succeeded")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|p| p.to_string().contains("two rounds in one turn")),
            "{p:?}"
        );
        l.rounds = vec![round(0, 200, 0)];
        l.held.as_mut().unwrap().connections = vec![200, 0];
        assert!(check(&l)[0].to_string().contains("not 0 and then more"));
        l.held.as_mut().unwrap().connections = vec![0, 200];
        l.held.as_mut().unwrap().established = vec![0, 150];
        assert!(check(&l)[0].is(
            crate::check::problem::Kind::Evidence,
            "held [0, 150] connections"
        ));
        l.held.as_mut().unwrap().established = vec![0, 200];
        l.held.as_mut().unwrap().pss_bytes[1] = 16_000_000;
        assert!(check(&l)[0].to_string().contains("above its resident one"));
        l.held = None;
        l.rounds.clear();
        assert!(check(&l)[0].to_string().contains("no rounds"));
    }

    #[test]
    fn an_ssh_servers_held_connections_are_held_to_its_methods_and_steps() {
        let mut h = crate::results::ServerHeld {
            server: "sshd".into(),
            version: "10.0p2".into(),
            server_groups: vec!["mlkem768x25519-sha256".into(), "curve25519-sha256".into()],
            group: "curve25519-sha256".into(),
            auth: "ECDSA-P256".into(),
            held: crate::results::Held {
                connections: vec![0, 25, 50],
                established: vec![0, 25, 50],
                rss_bytes: vec![9_000_000, 20_000_000, 30_000_000],
                pss_bytes: vec![4_000_000, 9_000_000, 14_000_000],
            },
        };
        let check = |h: &crate::results::ServerHeld| {
            let mut p = Vec::new();
            ssh_held(&mut p, h);
            p
        };
        assert!(check(&h).is_empty(), "{:?}", check(&h));
        h.group = "sntrup761x25519-sha512".into();
        assert!(check(&h)[0].is(
            crate::check::problem::Kind::Evidence,
            "which the server was not given"
        ));
        h.group = "curve25519-sha256".into();
        h.held.established[2] = 49;
        assert!(check(&h)[0].is(
            crate::check::problem::Kind::Evidence,
            "held [0, 25, 49] connections"
        ));
        h.held.established[2] = 50;
        h.version.clear();
        assert!(check(&h)[0].is(crate::check::problem::Kind::Evidence, "no server version"));
    }
}
