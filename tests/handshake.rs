//! Real loopback handshakes: every stack negotiates what the suite says, the key shares on the wire
//! have the declared sizes, and the section lands in the results file.

mod common;

use common::pqprof;
use std::path::PathBuf;

fn results_copy(name: &str) -> PathBuf {
    let out = common::tmp("hs", name);
    common::measure_mini(&out, "5");
    out
}

#[test]
fn tls_and_ssh_handshakes_negotiate_what_the_suites_say() {
    let out = results_copy("hs.json");
    let o = pqprof(&["handshake", "--results", out.to_str().unwrap(), "--suites", "tests/data/mini", "--samples", "2", "--per-sample", "3"]);
    assert!(o.status.success(), "{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let sc = v["handshakes"]["scenarios"].as_array().unwrap();
    assert_eq!(sc.len(), 4, "two suites x rustls, openssl");
    for s in sc {
        let e = &s["evidence"];
        assert_eq!(e["cert_key"], "ECDSA P-256");
        assert_eq!(e["resumed"], false);
        assert!(s["median_ns"].as_f64().unwrap() > 0.0);
        assert!(s["client_to_server_bytes"].as_f64().unwrap() > 0.0);
        assert_eq!(s["sample_medians_ns"].as_array().unwrap().len(), 2);
        if s["suite"] == "X25519MLKEM768" {
            // draft-ietf-tls-ecdhe-mlkem: 1,216 B from the client, 1,120 B from the server.
            assert_eq!(e["client_share"][1], 1216, "{s}");
            assert_eq!(e["server_share"][1], 1120, "{s}");
            assert!(s["vs_baseline_ratio"].as_f64().is_some());
        } else {
            assert_eq!(e["client_share"][1], 32);
        }
        if s["stack"] == "openssl" {
            // OpenSSL's own allocations are counted through CRYPTO_set_mem_functions.
            assert!(s["client_mem"]["c_allocs"].as_f64().unwrap() > 0.0, "{s}");
        }
    }
    // The file still passes check and renders with the handshake rows.
    assert!(pqprof(&["check", out.to_str().unwrap()]).status.success());
    let site = out.with_extension("site");
    assert!(pqprof(&["render", out.to_str().unwrap(), "--out", site.to_str().unwrap()]).status.success());
    let html = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(html.contains("Real handshakes on loopback"));

    let o = pqprof(&["handshake", "--results", out.to_str().unwrap(), "--suites", "suites/ssh.toml", "--samples", "1", "--per-sample", "3", "--force"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let sc = v["handshakes"]["scenarios"].as_array().unwrap();
    assert_eq!(sc.len(), 2);
    for s in sc {
        assert_eq!(s["stack"], "russh");
        assert_eq!(s["evidence"]["group"], s["suite"], "negotiated kex read from the KEXINIT packets");
    }
}

#[test]
fn an_unknown_group_fails_that_scenario_clearly() {
    let out = results_copy("bad.json");
    let dir = out.parent().unwrap();
    let suite = dir.join("odd.toml");
    // A TLS group rustls and OpenSSL do not have, built from registered algorithms.
    std::fs::write(&suite, "protocol = \"tls13\"\nkind = \"kex\"\n[[suite]]\nname = \"P256Only\"\nphases = [{ operation = \"dh.keygen\", algorithm = \"P-256\", count = 2 }]\n").unwrap();
    let o = pqprof(&["handshake", "--results", out.to_str().unwrap(), "--suites", suite.to_str().unwrap(), "--samples", "1", "--per-sample", "1"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("failed") && !err.contains("panicked"), "{err}");
}

#[test]
fn a_server_that_dies_ends_its_scenario_without_a_hang() {
    let out = results_copy("dies.json");
    let started = std::time::Instant::now();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_pqprof"))
        .args(["handshake", "--results", out.to_str().unwrap(), "--suites", "suites/ssh.toml", "--samples", "2", "--per-sample", "5"])
        .env("PQPROF_SERVER_DIES_AFTER", "3")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("failed") && !err.contains("panicked"), "{err}");
    // Connect and read timeouts are 5 s; the whole run must end well before a hang would.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}
