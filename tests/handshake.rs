//! Real loopback handshakes: every stack negotiates what the suite says, the key shares on the wire
//! have the declared sizes, and the section lands in the results file.

mod common;

use common::pqprof;
use std::path::PathBuf;

/// An in-situ record's call labels, in its order.
fn labels(insitu: &serde_json::Value) -> Vec<&str> {
    insitu["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect()
}

fn results_copy(name: &str) -> PathBuf {
    let out = common::tmp("hs", name);
    common::measure_mini(&out, "5");
    out
}

#[test]
fn tls_and_ssh_handshakes_negotiate_what_the_suites_say() {
    let out = results_copy("hs.json");
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
        "--budget-s",
        "0",
        "--stack",
        "rustls",
        "--stack",
        "openssl",
        "--stack",
        "quinn",
    ]);
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let sc = v["handshakes"]["scenarios"].as_array().unwrap();
    assert_eq!(
        sc.len(),
        18,
        "two groups with ECDSA-P256 and X25519MLKEM768 with ML-DSA-65, x rustls, openssl, quinn x plain, in situ"
    );
    // Each in-situ key-exchange call beside the same phase of the stack's library.
    let stdout = String::from_utf8_lossy(&o.stdout);
    let per_call = stdout
        .split("Per call, in situ")
        .nth(1)
        .unwrap_or_else(|| panic!("no per-call table:\n{stdout}"));
    assert!(
        per_call.lines().any(|l| l.contains("X25519MLKEM768")
            && l.contains("rustls")
            && l.contains("kem.decaps")
            && l.contains("ML-KEM-768 (awslc)")),
        "{stdout}"
    );
    for s in sc {
        if s["instrumented"] == true {
            let i = &s["insitu"];
            let conns = i["connections"].as_array().unwrap();
            // 2 samples x 3 connections, every 5th kept.
            assert_eq!(conns.len(), 2, "{s}");
            let labels = labels(i);
            for c in conns {
                let sum: i64 = common::ints(&c["client"])
                    .into_iter()
                    .chain(common::ints(&c["server"]))
                    .map(|x| x as i64)
                    .sum();
                assert_eq!(
                    c["total_ns"].as_i64().unwrap(),
                    sum + c["remainder_ns"].as_i64().unwrap()
                );
            }
            // The server signs, the client verifies: each side's calls are where they belong.
            let at = |side: &str, l: &str| {
                i[side][labels.iter().position(|x| *x == l).unwrap()]
                    .as_f64()
                    .unwrap()
            };
            assert!(
                at("server_ns", "sig.sign") > 0.0 && at("client_ns", "sig.sign") == 0.0,
                "{i}"
            );
            assert!(at("client_ns", "sig.verify") > 0.0, "{i}");
            // quinn's server adds each connection's windows (a datagram's handling, the
            // connection's turn) into its record: the encapsulation and the signing land there.
            if s["stack"] != "openssl" && s["suite"] == "X25519MLKEM768" {
                assert!(
                    at("client_ns", "kem.keygen") > 0.0
                        && at("server_ns", "kem.encaps") > 0.0
                        && at("client_ns", "kem.decaps") > 0.0,
                    "{i}"
                );
            }
            // The certificate checks: one per signature of the chain (leaf and intermediate), on
            // the client, in both stacks (webpki's calls; libssl's X509_verify).
            assert_eq!(at("client_calls", "sig.verify.cert"), 2.0, "{i}");
            assert_eq!(at("server_calls", "sig.verify.cert"), 0.0, "{i}");
        } else if s["auth"]["name"] == "ML-DSA-65" {
            // The timers' cost is measured paired for the baseline authentication only.
            assert!(s["insitu_overhead_paired"].is_null(), "{s}");
        } else {
            assert!(s["insitu_overhead_pct"].is_number(), "{s}");
            // Calls x cost per call: positive, and a small share of the handshake, not all of it.
            let est = s["insitu_overhead_est_pct"].as_f64().unwrap();
            assert!(est > 0.0 && est < 100.0, "{s}");
            // Paired in memory: every variant has its blocks; only rustls's provider (over TCP and
            // in quinn) has a wrapped-unarmed one.
            let p = &s["insitu_overhead_paired"];
            let blocks = p["plain_ns"].as_array().unwrap().len();
            assert!(
                blocks >= 2 && p["timed_ns"].as_array().unwrap().len() == blocks,
                "{p}"
            );
            assert_eq!(
                p["wrapped_ns"].as_array().map_or(0, Vec::len),
                if s["stack"] != "openssl" { blocks } else { 0 },
                "{p}"
            );
            assert!(p["delta_half95_ns"].as_f64().unwrap() > 0.0, "{p}");
            let l = &s["insitu_overhead_paired_loopback"];
            // On loopback, blocks of their own size and number (shorter, more of them).
            let lblocks = l["plain_ns"].as_array().unwrap().len();
            assert!(
                lblocks >= 2 && l["timed_ns"].as_array().unwrap().len() == lblocks,
                "{l}"
            );
            assert_eq!(
                l["wrapped_ns"].as_array().map_or(0, Vec::len),
                if s["stack"] != "openssl" { lblocks } else { 0 },
                "{l}"
            );
            // The headline: the median difference inside its interval, for both.
            for o in [p, l] {
                let m = &o["median"];
                let (d, lo, hi) = (
                    m["delta_ns"].as_f64().unwrap(),
                    m["lo95_ns"].as_f64().unwrap(),
                    m["hi95_ns"].as_f64().unwrap(),
                );
                assert!(lo <= d && d <= hi, "{m}");
                assert_eq!(m["wrapper_ns"].is_number(), s["stack"] != "openssl", "{m}");
            }
        }
        let e = &s["evidence"];
        let auth = s["auth"]["name"].as_str().unwrap();
        let (key, scheme) = if auth == "ML-DSA-65" {
            ("ML-DSA-65", 0x0905)
        } else {
            ("ECDSA P-256", 0x0403)
        };
        assert_eq!(
            (
                e["cert_key"].as_str().unwrap(),
                e["scheme"].as_u64().unwrap()
            ),
            (key, scheme),
            "{s}"
        );
        // Leaf and intermediate, as made, and the flight that carries them.
        assert_eq!(e["chain_bytes"], s["auth"]["sent_bytes"], "{s}");
        let certs: u64 = e["chain_bytes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .sum();
        assert!(e["server_flight_bytes"].as_u64().unwrap() > certs, "{s}");
        assert_eq!(e["resumed"], false);
        assert!(s["median_ns"].as_f64().unwrap() > 0.0);
        assert!(s["client_to_server_bytes"].as_f64().unwrap() > 0.0);
        assert_eq!(s["sample_medians_ns"].as_array().unwrap().len(), 2);
        // Every connection kept, by round; no budget: a fixed design of two rounds.
        assert_eq!(common::ints(&s["totals_ns"]).len(), 6, "{s}");
        assert_eq!(s["sample_rounds"], serde_json::json!([0, 1]));
        assert_eq!(s["precision"]["reason"], "fixed");
        assert_eq!(s["precision"]["batches"], 2);
        if s["suite"] == "X25519MLKEM768" {
            // draft-ietf-tls-ecdhe-mlkem: 1,216 B from the client, 1,120 B from the server.
            assert_eq!(e["client_share"][1], 1216, "{s}");
            assert_eq!(e["server_share"][1], 1120, "{s}");
            assert!(s["vs_baseline_ratio"].as_f64().is_some());
        } else {
            assert_eq!(e["client_share"][1], 32);
        }
        // The paired design: every scenario against another has its relative paired difference
        // (two pairs: one block of 3 per round, blocks of 4, 3 connections a round) inside its
        // interval.
        assert_eq!(v["handshakes"]["pair_block"], 4);
        assert_eq!(v["handshakes"]["delta_form"], "relative");
        if s["against"].is_object() {
            let d = s["measured_delta_ns"].as_f64().unwrap();
            let (lo, hi) = (
                s["measured_delta_ci95_ns"][0].as_f64().unwrap(),
                s["measured_delta_ci95_ns"][1].as_f64().unwrap(),
            );
            assert!(lo <= d && d <= hi, "{s}");
            assert_eq!(s["measured_delta_pairs"], 2, "{s}");
        } else {
            assert!(s["measured_delta_ns"].is_null(), "{s}");
        }
        if s["stack"] == "openssl" {
            // OpenSSL's own allocations are counted through CRYPTO_set_mem_functions.
            assert!(s["client_mem"]["c_allocs"].as_f64().unwrap() > 0.0, "{s}");
        }
    }
    // The file still passes check and renders with the handshake rows.
    let o = pqprof(&["check", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Evidence that contradicts its scenario fails, the scenario named: the negotiated group
    // swapped, then the signature scheme.
    for (field, value, says) in [
        (
            "group",
            serde_json::json!("X25519"),
            "negotiated \"X25519\"",
        ),
        ("scheme", serde_json::json!(0x0904), "scheme 0x0904"),
    ] {
        let mut t = v.clone();
        let scen = t["handshakes"]["scenarios"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|s| s["suite"] == "X25519MLKEM768" && s["auth"]["name"] == "ML-DSA-65")
            .unwrap();
        scen["evidence"][field] = value;
        let bad = out.with_extension(format!("{field}.json"));
        std::fs::write(&bad, serde_json::to_vec(&t).unwrap()).unwrap();
        let o = pqprof(&["check", bad.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success()
                && err.contains("tls13 X25519MLKEM768 + ML-DSA-65 on")
                && err.contains("contradicts the scenario")
                && err.contains(says),
            "{err}"
        );
    }
    // A tampered in-situ figure fails the identity.
    let mut t = v.clone();
    let scen = t["handshakes"]["scenarios"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["instrumented"] == true)
        .unwrap();
    let r = scen["insitu"]["connections"][0]["remainder_ns"]
        .as_i64()
        .unwrap();
    scen["insitu"]["connections"][0]["remainder_ns"] = (r + 1000).into();
    let bad = out.with_extension("tampered.json");
    std::fs::write(&bad, serde_json::to_vec(&t).unwrap()).unwrap();
    let o = pqprof(&["check", bad.to_str().unwrap()]);
    assert!(
        !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("plus its remainder"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A paired difference that its connections do not make fails: the stored difference moved,
    // then the baseline's block it is paired with, then the form it was taken in.
    for tamper in ["delta", "connection", "form"] {
        let mut t = v.clone();
        if tamper == "form" {
            t["handshakes"]
                .as_object_mut()
                .unwrap()
                .remove("delta_form");
        }
        let scenarios = t["handshakes"]["scenarios"].as_array_mut().unwrap();
        let k = scenarios
            .iter()
            .position(|s| s["suite"] == "X25519MLKEM768" && s["stack"] == "rustls")
            .unwrap();
        if tamper == "delta" {
            let d = scenarios[k]["measured_delta_ns"].as_f64().unwrap();
            scenarios[k]["measured_delta_ns"] = (d + 5_000.0).into();
        } else if tamper == "connection" {
            let base = scenarios
                .iter_mut()
                .find(|s| {
                    s["suite"] == "X25519"
                        && s["stack"] == "rustls"
                        && s["instrumented"] != true
                        && s["auth"]["name"] == "ECDSA-P256"
                })
                .unwrap();
            // The first round's block, every connection of it.
            let mut totals = common::ints(&base["totals_ns"]);
            for x in &mut totals[..3] {
                *x += 1_000_000;
            }
            base["totals_ns"] = common::packed(&totals);
        }
        std::fs::write(&bad, serde_json::to_vec(&t).unwrap()).unwrap();
        let o = pqprof(&["check", bad.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains("measured_delta"),
            "{tamper}: {err}"
        );
    }
    // So does an estimated timer cost that is not calls x cost per call.
    assert!(v["handshakes"]["insitu_call_cost_ns"].as_f64().unwrap() > 0.0);
    let mut t = v.clone();
    let plain = t["handshakes"]["scenarios"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["insitu_overhead_est_pct"].is_number())
        .unwrap();
    plain["insitu_overhead_est_pct"] =
        (plain["insitu_overhead_est_pct"].as_f64().unwrap() * 2.0).into();
    std::fs::write(&bad, serde_json::to_vec(&t).unwrap()).unwrap();
    let o = pqprof(&["check", bad.to_str().unwrap()]);
    assert!(
        !o.status.success()
            && String::from_utf8_lossy(&o.stderr).contains("insitu_overhead_est_pct"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // And a paired block that no longer gives the stored timer cost.
    let mut t = v.clone();
    let plain = t["handshakes"]["scenarios"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["insitu_overhead_paired"].is_object())
        .unwrap();
    let b = plain["insitu_overhead_paired"]["timed_ns"][0]
        .as_f64()
        .unwrap();
    plain["insitu_overhead_paired"]["timed_ns"][0] = (b + 50_000.0).into();
    std::fs::write(&bad, serde_json::to_vec(&t).unwrap()).unwrap();
    let o = pqprof(&["check", bad.to_str().unwrap()]);
    assert!(
        !o.status.success()
            && String::from_utf8_lossy(&o.stderr).contains("paired overhead in memory delta_ns"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // And a stored median of the loopback differences that is not the blocks' median.
    let mut t = v.clone();
    let plain = t["handshakes"]["scenarios"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["insitu_overhead_paired_loopback"]["median"].is_object())
        .unwrap();
    let m = &mut plain["insitu_overhead_paired_loopback"]["median"];
    m["delta_ns"] = (m["delta_ns"].as_f64().unwrap() - 4_000.0).into();
    std::fs::write(&bad, serde_json::to_vec(&t).unwrap()).unwrap();
    let o = pqprof(&["check", bad.to_str().unwrap()]);
    assert!(
        !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("median.delta_ns"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A connection's time moved: the interval and the precision no longer follow from the
    // connections.
    let mut t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let sc = &mut t["handshakes"]["scenarios"][0];
    let mut totals = common::ints(&sc["totals_ns"]);
    totals[0] *= 10;
    sc["totals_ns"] = common::packed(&totals);
    std::fs::write(&bad, serde_json::to_vec(&t).unwrap()).unwrap();
    let o = pqprof(&["check", bad.to_str().unwrap()]);
    assert!(
        !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("median_ci95_ns"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    resumed_handshakes_resume(&v, &bad);
    let site = out.with_extension("site");
    assert!(pqprof(&[
        "render",
        out.to_str().unwrap(),
        "--out",
        site.to_str().unwrap()
    ])
    .status
    .success());
    let html = std::fs::read_to_string(site.join("phases.html")).unwrap();
    assert!(html.contains("Real handshakes on loopback"));
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains("real handshakes</a>"));

    let o = pqprof(&[
        "handshake",
        "--results",
        out.to_str().unwrap(),
        "--suites",
        "suites/ssh.toml",
        "--samples",
        "1",
        "--per-sample",
        "3",
        "--force",
        // russh's own server: sshd of servers/ has tests/lab.rs.
        "--stack",
        "russh",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let sc = v["handshakes"]["scenarios"].as_array().unwrap();
    assert_eq!(sc.len(), 2);
    // One round each, then precision rounds within the default budget: every sample has its
    // round, the first is round 0, and check recomputes the rest.
    assert!(pqprof(&["check", out.to_str().unwrap()]).status.success());
    for s in sc {
        let rounds = s["sample_rounds"].as_array().unwrap();
        assert_eq!(rounds.len(), s["sample_sizes"].as_array().unwrap().len());
        assert_eq!(rounds[0], 0);
        assert_eq!(
            s["precision"]["batches"].as_u64().unwrap() as usize,
            rounds.len()
        );
    }
    for s in sc {
        assert_eq!(s["stack"], "russh");
        assert_eq!(
            s["evidence"]["group"], s["suite"],
            "negotiated kex read from the KEXINIT packets"
        );
    }
}

/// The other modes of the same run (#34). Resumed: the hybrid and X25519 with ECDSA and the hybrid
/// with ML-DSA-65, plain and in situ, on both stacks; each resumed on every connection, without a
/// CertificateVerify, with a first flight smaller than its full twin's by at least the chain, and in
/// situ no signature on either side. Two key shares: the hybrid with ECDSA, its ClientHello with the
/// hybrid's share and X25519's. HelloRetryRequest: the hybrid with ECDSA, its first ClientHello with
/// X25519's share alone and the server's first flight a retry; to X25519, rustls's and OpenSSL's
/// X25519 after a first ClientHello with the hybrid's share alone. `check` fails a resumed scenario whose evidence shows a
/// CertificateVerify, or whose server did not see every connection resume.
fn resumed_handshakes_resume(v: &serde_json::Value, bad: &std::path::Path) {
    let full = v["handshakes"]["scenarios"].as_array().unwrap();
    let others = v["handshakes"]["other_modes"].as_array().unwrap();
    let of =
        |m: &str| -> Vec<&serde_json::Value> { others.iter().filter(|s| s["mode"] == m).collect() };
    let two = of("two_shares");
    assert_eq!(
        two.len(),
        4,
        "the hybrid x rustls, openssl x plain, in situ"
    );
    for s in &two {
        assert_eq!(s["suite"], "X25519MLKEM768", "{s}");
        assert_eq!(
            s["evidence"]["client_shares"],
            serde_json::json!([[0x11ec, 1216], [0x1d, 32]]),
            "{s}"
        );
        assert!(s["server_resumed"].is_null(), "{s}");
        assert!(s["evidence"]["hello_retry"].is_null(), "{s}");
    }
    let retried = of("hello_retry");
    assert_eq!(
        retried.len(),
        4,
        "the hybrid x rustls, openssl x plain, in situ"
    );
    for s in &retried {
        assert_eq!(s["evidence"]["hello_retry"], true, "{s}");
        assert_eq!(
            s["evidence"]["group"]
                .as_str()
                .map(|g| g.to_ascii_lowercase().replace('_', "")),
            Some("x25519mlkem768".into()),
            "{s}"
        );
        assert_eq!(
            s["evidence"]["client_shares"],
            serde_json::json!([[0x1d, 32]]),
            "{s}"
        );
    }
    // The other direction (a server without the hybrid): X25519 negotiated after a first
    // ClientHello with the hybrid's share alone, rustls's hybrid wrapped to share no X25519 half.
    let down = of("hello_retry_classical");
    assert_eq!(down.len(), 4, "X25519 x rustls, openssl x plain, in situ");
    for s in &down {
        assert_eq!(s["suite"], "X25519", "{s}");
        assert_eq!(s["evidence"]["hello_retry"], true, "{s}");
        assert_eq!(
            s["evidence"]["client_shares"],
            serde_json::json!([[0x11ec, 1216]]),
            "{s}"
        );
    }
    let resumed = of("resumed");
    assert_eq!(
        resumed.len(),
        12,
        "3 scenarios x rustls, openssl x plain, in situ"
    );
    for r in resumed {
        let made = common::ints(&r["totals_ns"]).len() as u64;
        assert_eq!(r["server_resumed"].as_u64(), Some(made), "{r}");
        let e = &r["evidence"];
        assert_eq!(e["resumed"], true, "{r}");
        assert!(e["scheme"].is_null(), "{r}");
        let twin = full
            .iter()
            .find(|f| {
                ["stack", "suite", "instrumented"]
                    .iter()
                    .all(|k| f[*k] == r[*k])
                    && f["auth"]["name"] == r["auth"]["name"]
            })
            .unwrap_or_else(|| panic!("no full twin for {r}"));
        let chain: u64 = r["auth"]["sent_bytes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_u64().unwrap())
            .sum();
        let flight = |s: &serde_json::Value| s["evidence"]["server_flight_bytes"].as_u64().unwrap();
        assert!(flight(r) + chain <= flight(twin), "{r}\n{twin}");
        if r["instrumented"] == true {
            let i = &r["insitu"];
            let labels = labels(i);
            let calls = |side: &str, l: &str| {
                labels
                    .iter()
                    .position(|x| *x == l)
                    .map_or(0.0, |k| i[side][k].as_f64().unwrap())
            };
            assert_eq!(calls("server_calls", "sig.sign"), 0.0, "{i}");
            assert_eq!(calls("client_calls", "sig.verify"), 0.0, "{i}");
            assert_eq!(calls("client_calls", "sig.verify.cert"), 0.0, "{i}");
        }
    }
    let first = others.iter().position(|s| s["mode"] == "resumed").unwrap();
    let mut t = v.clone();
    t["handshakes"]["other_modes"][first]["server_resumed"] = 1.into();
    std::fs::write(bad, serde_json::to_vec(&t).unwrap()).unwrap();
    let o = pqprof(&["check", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("connections resume"),
        "{err}"
    );
    let mut t = v.clone();
    t["handshakes"]["other_modes"][first]["evidence"]["scheme"] = 0x0403.into();
    std::fs::write(bad, serde_json::to_vec(&t).unwrap()).unwrap();
    let o = pqprof(&["check", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err
                .contains("(resumed): its evidence contradicts the scenario: a CertificateVerify"),
        "{err}"
    );
    // A composed difference stored where the run's suites give none (the ML-DSA-65 chain's
    // resumed row: a resumption makes no signature, so none is composed against ECDSA).
    let chain = others
        .iter()
        .position(|s| {
            s["mode"] == "resumed"
                && s["auth"]["name"] == "ML-DSA-65"
                && s["composed_delta_ns"].is_null()
        })
        .expect("a resumed ML-DSA-65 row without a composed difference");
    let mut t = v.clone();
    t["handshakes"]["other_modes"][chain]["composed_delta_ns"] = 1000.0.into();
    std::fs::write(bad, serde_json::to_vec(&t).unwrap()).unwrap();
    let o = pqprof(&["check", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err.contains("a composed_delta_ns the run's suites do not recompute"),
        "{err}"
    );
}

#[test]
fn an_unknown_group_fails_that_scenario_clearly() {
    let out = results_copy("bad.json");
    let dir = out.parent().unwrap();
    let suite = dir.join("odd.toml");
    // A TLS group rustls and OpenSSL do not have, built from registered algorithms.
    std::fs::write(&suite, "protocol = \"tls13\"\nkind = \"kex\"\n[[suite]]\nname = \"P256Only\"\nphases = [{ operation = \"dh.keygen\", algorithm = \"P-256\", count = 2 }]\n").unwrap();
    let o = pqprof(&[
        "handshake",
        "--results",
        out.to_str().unwrap(),
        "--suites",
        suite.to_str().unwrap(),
        "--samples",
        "1",
        "--per-sample",
        "1",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("failed") && !err.contains("panicked"), "{err}");
}

#[test]
fn a_server_that_dies_ends_its_scenario_without_a_hang() {
    let out = results_copy("dies.json");
    let started = std::time::Instant::now();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_pqprof"))
        .args([
            "handshake",
            "--results",
            out.to_str().unwrap(),
            "--suites",
            "suites/ssh.toml",
            "--samples",
            "2",
            "--per-sample",
            "5",
        ])
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
