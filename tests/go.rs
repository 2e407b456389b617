//! The Go peer (peers/go) as a backend and a real stack: its phases land in the results as backend
//! `go` and compose the `go` stack, its raw round trips are kept and checked, and its TLS 1.3
//! handshakes negotiate what the suites say. Runs where the peer is built (`make go-peer`, which
//! `make test` does); says so and passes elsewhere.

mod common;

use common::{pqprof, stderr};

fn peer_built() -> bool {
    let built = common::go_built();
    if !built {
        eprintln!("skipped: the Go peer is not built (make go-peer)");
    }
    built
}

#[test]
fn go_phases_compose_the_go_stack_and_its_handshakes_negotiate_the_suites() {
    if !peer_built() {
        return;
    }
    let out = common::tmp("go", "go.json");
    let o = pqprof(&[
        "run",
        "--suites",
        "tests/data/mini",
        "--backend",
        "go",
        "--iterations",
        "20",
        "--rounds",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let phases = v["phases"].as_array().unwrap();
    for (alg, op) in [
        ("ML-KEM-768", "kem.keygen"),
        ("ML-KEM-768", "kem.encaps"),
        ("ML-KEM-768", "kem.decaps"),
        ("X25519", "dh.derive"),
        ("P-256", "dh.keygen"),
    ] {
        let p = phases
            .iter()
            .find(|p| p["backend"] == "go" && p["algorithm"] == alg && p["operation"] == op)
            .unwrap_or_else(|| panic!("no go {alg} {op}"));
        assert_eq!(common::ints(&p["samples_ns"]).len(), 20);
        assert!(
            p["verified"].as_u64().unwrap() >= 2,
            "first and last output checked"
        );
    }
    let go_suites: Vec<&str> = v["suites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["stack"] == "go")
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        go_suites.len(),
        4,
        "X25519, the hybrid and the two raw round trips: {go_suites:?}"
    );
    let raw = v["go"]["raw"].as_array().unwrap();
    assert_eq!(raw.len(), 2);
    for r in raw {
        assert_eq!(
            r["sample_medians_ns"].as_array().unwrap().len(),
            20,
            "seed 000's 20 samples"
        );
        assert_eq!(common::ints(&r["samples_ns"]).len(), 2000);
    }
    let o = pqprof(&["check", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));

    let o = pqprof(&[
        "handshake",
        "--results",
        out.to_str().unwrap(),
        "--suites",
        "tests/data/mini",
        "--samples",
        "2",
        "--per-sample",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let go: Vec<&serde_json::Value> = v["handshakes"]["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["stack"] == "go")
        .collect();
    assert_eq!(
        go.len(),
        3,
        "X25519 and X25519MLKEM768 with ECDSA-P256, X25519MLKEM768 with ML-DSA-65"
    );
    for s in go {
        let e = &s["evidence"];
        assert_eq!(e["group"], s["suite"]);
        let key = if s["auth"]["name"] == "ML-DSA-65" {
            "ML-DSA-65"
        } else {
            "ECDSA P-256"
        };
        assert_eq!(e["cert_key"], key);
        assert_eq!(e["chain_bytes"], s["auth"]["sent_bytes"]);
        assert_eq!(e["resumed"], false);
        assert!(
            s["client_mem"]["go_allocs"].as_f64().unwrap() > 0.0
                && s["server_mem"]["go_bytes"].as_f64().unwrap() > 0.0,
            "{s}"
        );
        if s["suite"] == "X25519MLKEM768" {
            assert_eq!(e["client_share"][1], 1216);
            assert_eq!(e["server_share"][1], 1120);
            assert_eq!(s["composed_stack"], "go");
            // Against X25519 with the same chain: the key exchanges composed from Go's phases
            // (the test suites have no full handshakes for the ML-DSA row to be set beside).
            if key == "ECDSA P-256" {
                assert!(s["composed_delta_ns"].is_number());
            }
        }
    }
    // quic-go (#35), where the peer has it: the same three scenarios over QUIC, their key shares
    // read from the client's Initial packets and the server's, decrypted (`quic_wire`), the
    // client's Initial flight one padded datagram for X25519 and two for the hybrid's share.
    let quic: Vec<&serde_json::Value> = v["handshakes"]["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["stack"] == "quic-go")
        .collect();
    assert_eq!(quic.len(), if common::go_has_quic() { 3 } else { 0 });
    for s in quic {
        let e = &s["evidence"];
        assert_eq!(e["group"], s["suite"]);
        assert_eq!(e["version"], "QUIC v1 (TLS 1.3, RFC 9001)");
        assert_eq!(e["chain_bytes"], s["auth"]["sent_bytes"]);
        let q = &e["quic"];
        assert_eq!(q["sender"], "quic-go", "{e}");
        assert_eq!(q["server_bytes"], e["server_flight_bytes"]);
        let hybrid = s["suite"] == "X25519MLKEM768";
        let (datagrams, client, server) = if hybrid { (2, 1216, 1120) } else { (1, 32, 32) };
        assert_eq!(q["client_initial_datagrams"], datagrams, "{e}");
        assert_eq!(q["client_initial_bytes"], 1200 * datagrams, "{e}");
        assert_eq!(e["client_share"][1], client, "{e}");
        assert_eq!(e["server_share"][1], server, "{e}");
        assert_eq!(q["token"], false);
    }
}

/// Go as the network grid and capacity use it, without namespaces: a server on the address it is
/// given, serving clients at once (each thread its own client process, started by `ready`), and
/// in-memory handshakes whose sides the peer times.
#[test]
fn go_serves_concurrent_clients_on_its_address_and_pairs_in_memory() {
    use pqprof::stack::{child::Start, go::Go, identity::Files, Config, Identity, TlsStack};
    if !peer_built() {
        return;
    }
    let id = Identity::baseline().unwrap();
    let files = Files::write(&id, "go-test").unwrap();
    let group = "X25519MLKEM768";
    // 127.0.0.2: the server listens where it is told, not on 127.0.0.1.
    let mut server = Go
        .start_server(&Start {
            bind: Some([127, 0, 0, 2].into()),
            concurrent: true,
            timeout_s: Some(30),
            ..Start::loopback(group, &files, false)
        })
        .unwrap();
    let addr = server.addr;
    assert_eq!(addr.ip().to_string(), "127.0.0.2");
    assert!(std::net::TcpStream::connect(("127.0.0.1", addr.port())).is_err());
    let clients: Vec<_> = (0..4)
        .map(|_| Go.client(Config::plain(group, &id)).unwrap())
        .collect();
    let evidence = clients[0].connect(addr, true).unwrap().evidence.unwrap();
    assert_eq!(evidence.group, group);
    assert_eq!(evidence.client_share.map(|s| s.1), Some(1216));
    std::thread::scope(|scope| {
        for c in &clients {
            scope.spawn(move || {
                c.ready(addr).unwrap();
                for _ in 0..3 {
                    let one = c.connect(addr, false).unwrap();
                    assert!(one.ready_ns > 0.0 && one.total_ns >= one.ready_ns);
                    assert!(one.sent > 1216 && one.received > 0);
                }
            });
        }
    });
    // The evidence connection and 4 x 3 more, all served.
    let stats: serde_json::Value =
        serde_json::from_str(&server.command("stats 13").unwrap()).unwrap();
    assert_eq!(stats["served"], 13, "{stats}");
    for c in &clients {
        assert!(
            c.outside_cpu_ns() > 0.0,
            "each client's process reported its CPU"
        );
    }

    let pair = Go.pair(Config::plain(group, &id)).unwrap();
    pair.handshake(true).unwrap();
    let samples: Vec<_> = pair
        .handshakes(10)
        .into_iter()
        .collect::<anyhow::Result<_>>()
        .unwrap();
    assert_eq!(samples.len(), 10);
    for s in samples {
        assert!(s.client_ns > 0 && s.server_ns > 0 && s.client_ns + s.server_ns <= s.wall_ns);
    }
    // A group this Go does not negotiate is refused by the peer, not measured as another.
    if let Ok(p) = Go.pair(Config::plain("MLKEM768", &id)) {
        assert!(p.handshake(true).is_err());
    }
}
