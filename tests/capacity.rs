//! `pqprof capacity`: the section lands with its raw data (rustls, OpenSSL, and Go where its peer
//! is built), `check` recomputes it and catches a changed figure, memory steps hold what they say,
//! and a peer that stalls mid-handshake is a counted failure, not a hang.

mod common;

use common::pqprof;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The groups the Go peer negotiates, where it is built (`make go-peer`).
fn go_groups() -> Option<Vec<String>> {
    let peer = common::go_peer();
    if !peer.exists() {
        eprintln!("the Go peer is not built (make go-peer): rustls and OpenSSL only");
        return None;
    }
    let out = Command::new(peer).arg("version").output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    Some(
        v["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_str().unwrap().to_string())
            .collect(),
    )
}

#[test]
fn the_capacity_section_lands_and_check_recomputes_it() {
    let out = common::tmp("cap", "cap.json");
    common::measure_mini(&out, "5");
    let file = out.to_str().unwrap();
    let o = pqprof(&[
        "capacity",
        "--results",
        file,
        "--quick",
        "--connections",
        "20",
        "--connections",
        "60",
    ]);
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        common::stderr(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let c = &v["capacity"];

    // Go (where its peer is built) in the groups its version negotiates: X25519 and
    // X25519MLKEM768 at least (Go 1.24 on), with ECDSA-P256 and the pairings of those groups.
    let go = go_groups();
    let of = |section: &str, stack: &str| -> Vec<serde_json::Value> {
        c[section]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["stack"] == stack)
            .cloned()
            .collect()
    };
    let inmem = c["in_memory"].as_array().unwrap();
    assert_eq!(
        inmem.len() - of("in_memory", "go").len(),
        27,
        "rustls, OpenSSL and quinn x (four groups with ECDSA-P256 + the five pairings of suites/auth.toml's capacity step)"
    );
    // quinn (QUIC) in memory only: no capacity server, and a note says so.
    assert_eq!(of("in_memory", "quinn").len(), 9);
    assert!(of("sockets", "quinn").is_empty() && of("memory", "quinn").is_empty());
    assert!(
        c["notes"]
            .to_string()
            .contains("quinn over sockets and with connections held"),
        "{}",
        c["notes"]
    );
    if let Some(groups) = &go {
        let rows = of("in_memory", "go");
        for g in ["X25519", "X25519MLKEM768", "SecP256r1MLKEM768", "MLKEM768"] {
            let has = rows
                .iter()
                .any(|m| m["group"] == g && m["auth"] == "ECDSA-P256");
            assert_eq!(has, groups.iter().any(|x| x == g), "go {g}: {groups:?}");
        }
        // Each handshake's two sides, timed in the peer, lie inside its wall time.
        for m in &rows {
            let v = |k: &str| -> Vec<u64> { common::ints(&m[k]) };
            let (cl, sv, wall) = (v("client_ns"), v("server_ns"), v("wall_ns"));
            assert!(cl.iter().zip(&sv).zip(&wall).all(|((c, s), w)| c + s <= *w));
            assert_eq!(m["composed_stack"], "go");
        }
    }
    for m in inmem {
        let n = common::ints(&m["wall_ns"]).len();
        assert!(n >= 5, "{m}");
        assert_eq!(common::ints(&m["client_ns"]).len(), n);
        assert_eq!(m["failures"], 0, "{}", m["group"]);
        // Both sides did work on every handshake.
        assert!(
            m["server"]["min_ns"].as_f64().unwrap() > 0.0
                && m["client"]["min_ns"].as_f64().unwrap() > 0.0
        );
        // Against the classical group with the baseline authentication, or the same group with
        // the baseline authentication for a post-quantum certificate.
        let ecdsa = m["auth"] == "ECDSA-P256";
        if m["group"] == "X25519" && ecdsa {
            assert!(m["baseline"].is_null());
        } else if ecdsa {
            assert_eq!(m["baseline"], "X25519");
        } else {
            assert_eq!(m["against"]["suite"], m["group"], "{m}");
            assert_eq!(m["against"]["auth"], "ECDSA-P256", "{m}");
        }
    }

    // Resumed beside full (#34), where the handshake step resumes: the hybrid and X25519, each
    // with the baseline chain and with ML-DSA-65; every handshake resumed, each row against its
    // full twin.
    let resumed = c["resumed"].as_array().unwrap();
    let resuming = if go.is_some() { 3 } else { 2 };
    assert_eq!(resumed.len(), 4 * resuming, "{resumed:?}");
    for m in resumed {
        let n = common::ints(&m["wall_ns"]).len();
        assert!(n >= 5, "{m}");
        assert_eq!(m["resumptions"], n, "{}", m["group"]);
        assert_eq!(m["failures"], 0, "{}", m["group"]);
        assert_eq!(m["against"]["suite"], m["group"]);
        assert_eq!(m["against"]["auth"], m["auth"]);
        assert!(m["composed_server_delta_ns"].is_null());
        let full = inmem
            .iter()
            .find(|f| {
                f["stack"] == m["stack"] && f["group"] == m["group"] && f["auth"] == m["auth"]
            })
            .unwrap_or_else(|| panic!("no full row for {m}"));
        assert!(full.get("resumptions").is_none(), "{full}");
        let ratio =
            m["server_per_core_s"].as_f64().unwrap() / full["server_per_core_s"].as_f64().unwrap();
        assert!((m["vs_baseline"].as_f64().unwrap() - ratio).abs() < 1e-9 * ratio);
    }
    let triples: Vec<String> = of("resumed", "rustls")
        .iter()
        .map(|m| format!("{} + {}", m["group"], m["auth"]).replace('"', ""))
        .collect();
    assert_eq!(
        triples,
        [
            "X25519 + ECDSA-P256",
            "X25519 + ML-DSA-65",
            "X25519MLKEM768 + ECDSA-P256",
            "X25519MLKEM768 + ML-DSA-65"
        ]
    );

    let sockets = c["sockets"].as_array().unwrap();
    let stacks = if go.is_some() { 3 } else { 2 };
    assert_eq!(
        sockets.len(),
        2 * stacks,
        "rustls, OpenSSL (and Go) x X25519, X25519MLKEM768"
    );
    for s in sockets {
        let steps: Vec<u64> = s["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|st| st["concurrency"].as_u64().unwrap())
            .collect();
        assert_eq!(steps, [1, 16]);
        for st in s["steps"].as_array().unwrap() {
            assert!(st["completed"].as_u64().unwrap() > 0, "{st}");
            assert!(st["server_cpu_ns"].as_f64().unwrap() > 0.0);
        }
    }

    let memory = c["memory"].as_array().unwrap();
    assert_eq!(
        memory.len(),
        6 * stacks,
        "rustls, OpenSSL (and Go) x (X25519, X25519MLKEM768 with ECDSA-P256, X25519MLKEM768 with ML-DSA-44/65/87, X25519 with ML-DSA-65)"
    );
    // Go's server reports its own heap, Go's, and none in Rust's or C's.
    for m in of("memory", "go") {
        let last = m["steps"].as_array().unwrap().last().unwrap().clone();
        assert!(last["heap_go_bytes"].as_i64().unwrap() > 0, "{last}");
        assert_eq!(last["heap_rust_bytes"], 0);
        assert!(
            m["per_connection"]["heap_go_bytes"].as_f64().unwrap() > 0.0,
            "{m}"
        );
    }
    for m in memory {
        let held: Vec<u64> = m["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["connections"].as_u64().unwrap())
            .collect();
        let steps: &[u64] = if m["auth"] == "ECDSA-P256" {
            &[0, 20, 60]
        } else {
            &[0, 20]
        };
        assert_eq!(held, steps, "{}", m["group"]);
        // A held TLS connection keeps its buffers and keys: it costs heap and kernel memory.
        assert!(
            m["per_connection"]["heap_bytes"].as_f64().unwrap() > 0.0,
            "{m}"
        );
        // Kernel memory is the system-wide TCP page count (/proc/net/sockstat): other sockets (the
        // test beside this one) move it too, so its slope is only known to be a number.
        assert!(
            m["per_connection"]["kernel_bytes"]
                .as_f64()
                .unwrap()
                .is_finite(),
            "{m}"
        );
        let (peak, kept) = (
            m["peak_median_bytes"].as_f64().unwrap(),
            m["retained_median_bytes"].as_f64().unwrap(),
        );
        assert!(peak >= kept, "{m}");
    }
    // OpenSSL's C allocations are counted: the hybrid server handles a 1,216-byte client share and
    // makes a 1,120-byte one, so its handshake peak is above the classical one.
    let peak = |group: &str| {
        memory
            .iter()
            .find(|m| m["stack"] == "openssl" && m["group"] == group)
            .unwrap()["peak_median_bytes"]
            .as_f64()
            .unwrap()
    };
    assert!(
        peak("X25519MLKEM768") > peak("X25519"),
        "{} vs {}",
        peak("X25519MLKEM768"),
        peak("X25519")
    );

    let check = pqprof(&["check", file]);
    assert!(check.status.success(), "{}", common::stderr(&check));

    // A changed figure is caught, by name.
    let mut tampered = v.clone();
    let rate = tampered["capacity"]["in_memory"][0]["handshakes_per_s"]
        .as_f64()
        .unwrap();
    tampered["capacity"]["in_memory"][0]["handshakes_per_s"] = serde_json::json!(rate * 1.01);
    let bad = common::tmp("cap", "tampered.json");
    std::fs::write(&bad, serde_json::to_string(&tampered).unwrap()).unwrap();
    let check = pqprof(&["check", bad.to_str().unwrap()]);
    assert!(!check.status.success());
    assert!(
        String::from_utf8_lossy(&check.stdout).contains("handshakes_per_s")
            || common::stderr(&check).contains("handshakes_per_s"),
        "{}",
        common::stderr(&check)
    );

    // A resumed row whose handshakes did not all resume is caught: the certificate's cost would
    // be back in it.
    let mut fell_back = v.clone();
    let n = fell_back["capacity"]["resumed"][1]["resumptions"]
        .as_u64()
        .unwrap();
    fell_back["capacity"]["resumed"][1]["resumptions"] = serde_json::json!(n - 1);
    let bad = common::tmp("cap", "fell-back.json");
    std::fs::write(&bad, serde_json::to_string(&fell_back).unwrap()).unwrap();
    fails_saying(&bad, "handshakes resumed");
    // So is one set against another row than its full twin.
    let mut elsewhere = v.clone();
    // (resumed[1] is X25519 with ML-DSA-65: set against X25519 with ECDSA-P256.)
    assert_eq!(elsewhere["capacity"]["resumed"][1]["auth"], "ML-DSA-65");
    elsewhere["capacity"]["resumed"][1]["against"]["auth"] = serde_json::json!("ECDSA-P256");
    std::fs::write(&bad, serde_json::to_string(&elsewhere).unwrap()).unwrap();
    fails_saying(&bad, "against its full twin");

    // A second capacity run does not replace the first without --force.
    let again = pqprof(&["capacity", "--results", file, "--quick"]);
    assert!(!again.status.success());
    assert!(
        common::stderr(&again).contains("capacity"),
        "{}",
        common::stderr(&again)
    );
}

#[test]
fn a_peer_that_stalls_mid_handshake_is_a_counted_failure() {
    use pqprof::stack::{identity::Files, Config, Identity, Teardown, TlsStack};
    let id = Identity::baseline().unwrap();
    let files = Files::write(&id, "cap-test").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pqprof"))
        .args([
            "capacity-server",
            "--stack",
            "rustls",
            "--group",
            "X25519",
            "--threads",
            "2",
            "--identity",
            files.dir.to_str().unwrap(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let port: u16 = lines
        .next()
        .unwrap()
        .unwrap()
        .strip_prefix("port ")
        .unwrap()
        .parse()
        .unwrap();
    // Half a ClientHello record header, then nothing.
    let mut stalled = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stalled.write_all(&[0x16, 0x03, 0x01]).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let t0 = Instant::now();
    let answer = loop {
        writeln!(stdin, "cpu").unwrap();
        let a: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if a["failed"].as_u64().unwrap() >= 1 || t0.elapsed() > Duration::from_secs(20) {
            break a;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(
        answer["failed"], 1,
        "the stalled connection times out and is counted: {answer}"
    );
    assert_eq!(answer["served"], 0);
    // The server still serves after it.
    let client = pqprof::stack::rustls::Rustls
        .client(Config::plain("X25519", &id))
        .unwrap();
    client
        .connect_with(([127, 0, 0, 1], port).into(), Teardown::Close)
        .unwrap();
    drop(stalled);
    let _ = child.kill();
    let _ = child.wait();
}

/// `check` fails the file at `bad`, saying `what` (on stdout or stderr).
fn fails_saying(bad: &std::path::Path, what: &str) {
    let check = pqprof(&["check", bad.to_str().unwrap()]);
    assert!(!check.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        common::stderr(&check)
    );
    assert!(said.contains(what), "{said}");
}
