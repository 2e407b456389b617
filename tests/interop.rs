//! Every TLS client against every TLS server of its transport (TCP, QUIC), with every
//! authentication of suites/auth.toml: each pair completes a handshake and its evidence is what the scenario declares (group, certificate
//! key, signature scheme, the certificates received). Go takes part where its peer is built.

use pqprof::auth::{Auths, Step};
use pqprof::figures::evidence::{contradictions, Declared};
use pqprof::stack::child::Start;
use pqprof::stack::identity::Chains;
use pqprof::stack::{self, Config};
use std::path::Path;

fn auths() -> Auths {
    let suites = pqprof::suite::load(Path::new("suites"), &pqprof::backend::names()).unwrap();
    pqprof::handshake::tls_auths(Path::new("suites"), &suites).unwrap()
}

#[test]
fn every_client_completes_a_handshake_with_every_server_and_every_chain() {
    // The servers are pqprof's `handshake-server` children, not this test binary.
    std::env::set_var("PQPROF_BIN", env!("CARGO_BIN_EXE_pqprof"));
    let auths = auths();
    let group = "X25519MLKEM768";
    // Every authentication of the file, not only those the steps pair with the group.
    let chains = Chains::make(auths.auths.iter(), "interop").unwrap();
    let tls: Vec<(&'static dyn stack::TlsStack, stack::Availability)> = stack::all()
        .iter()
        .copied()
        .filter(|s| s.protocol() == "tls13")
        .filter_map(|s| Some((s, s.availability().ok().filter(|a| a.negotiates(group))?)))
        .collect();
    let names: Vec<&str> = tls.iter().map(|(s, _)| s.name()).collect();
    assert!(
        names.contains(&"rustls") && names.contains(&"openssl"),
        "{names:?}"
    );
    if !names.contains(&"go") {
        eprintln!("interop: the Go peer is not built; rustls and OpenSSL only");
    }
    let (mut pairs, mut expected) = (0, 0);
    for a in &auths.auths {
        let (id, files) = chains.get(&a.name).unwrap();
        // A stack that cannot complete a handshake with a chain says why (its notes), and takes
        // no part with it (quic-go's client and the ML-DSA-87 chain).
        let with: Vec<&'static dyn stack::TlsStack> = tls
            .iter()
            .filter(|(_, av)| av.authenticates(&a.algorithm))
            .map(|(s, _)| *s)
            .collect();
        // A client meets every server of its transport that carries what it carries after the
        // handshake (the echo, or HTTP for the servers of servers/).
        let meets = |c: &&'static dyn stack::TlsStack, s: &&'static dyn stack::TlsStack| {
            c.transport() == s.transport() && c.application() == s.application()
        };
        let quic = with
            .iter()
            .filter(|s| s.transport() == pqprof::results::Transport::Quic)
            .count();
        assert!(quic >= 1, "{names:?}: no QUIC stack with {}", a.name);
        expected += with
            .iter()
            .map(|s| with.iter().filter(|c| meets(c, s)).count())
            .sum::<usize>();
        for server in &with {
            let mut srv = server
                .start_server(&Start::loopback(group, files, false))
                .unwrap_or_else(|e| panic!("{} server, {}: {e:#}", server.name(), a.name));
            for client in with.iter().filter(|c| meets(c, server)) {
                let c = client.client(Config::plain(group, id)).unwrap();
                let one = c.connect(srv.addr, true).unwrap_or_else(|e| {
                    panic!(
                        "{} client -> {} server, {}: {e:#}",
                        client.name(),
                        server.name(),
                        a.name
                    )
                });
                let ev = one.evidence.unwrap();
                let wrong = contradictions(
                    &Declared {
                        protocol: "tls13",
                        group,
                        shares: Some((1216, 1120)),
                        auth: Some(&id.auth),
                        mode: pqprof::results::Mode::Full,
                        transport: server.transport(),
                    },
                    &ev,
                );
                assert!(
                    wrong.is_empty(),
                    "{} client -> {} server, {}: {wrong:?}",
                    client.name(),
                    server.name(),
                    a.name
                );
                pairs += 1;
            }
            let _ = srv.command("reset 0");
        }
    }
    // The pairings each step runs exist in the file.
    assert!(!auths.extra_pairs(Step::Handshake).is_empty());
    assert_eq!(pairs, expected);
}
