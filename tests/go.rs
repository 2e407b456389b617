//! The Go peer (peers/go) as a backend and a real stack: its phases land in the results as backend
//! `go` and compose the `go` stack, its raw round trips are kept and checked, and its TLS 1.3
//! handshakes negotiate what the suites say. Runs where the peer is built (`make go-peer`, which
//! `make test` does); says so and passes elsewhere.

mod common;

use common::{pqprof, stderr};

fn peer_built() -> bool {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/go/pqprof-go-peer");
    let built = std::env::var_os("PQPROF_GO_PEER").is_some() || here.exists();
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
        assert_eq!(p["samples_ns"].as_array().unwrap().len(), 20);
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
        assert_eq!(r["samples_ns"].as_array().unwrap().len(), 2000);
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
}
