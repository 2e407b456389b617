//! `pqprof probe` end to end, on loopback: against pqprof's own rustls and OpenSSL servers and the
//! lab's nginx and HAProxy, each configured with known groups and a chain pqprof made, the report's
//! findings are what the server was configured to do; the defaults keep to their rate and count,
//! as a counting relay sees them; every bad input and bad peer is one line, a failing exit status
//! and no file.

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A `probe-target` child: its port and root; it stops when dropped.
struct Target {
    child: Child,
    stdin: Option<ChildStdin>,
    port: u16,
    root: PathBuf,
}

impl Target {
    fn start(stack: &str, group: &str, auth: &str) -> Target {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pqprof"))
            .args([
                "probe-target",
                "--stack",
                stack,
                "--group",
                group,
                "--auth",
                auth,
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let (mut port, mut root) = (0, PathBuf::new());
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(r) = line.strip_prefix("root ") {
                root = r.into();
            } else if let Some(p) = line.strip_prefix("port ") {
                port = p.parse().unwrap();
                break;
            }
        }
        assert!(port > 0, "{stack} {group}: no port");
        Target {
            child,
            stdin,
            port,
            root,
        }
    }

    fn target(&self) -> String {
        format!("localhost:{}", self.port)
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        drop(self.stdin.take());
        for _ in 0..100 {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn probe(args: &[&str]) -> Output {
    common::pqprof(&[&["probe"], args].concat())
}

/// Probes `t` quickly (fast rate, few rounds) and returns the probe file as JSON, checked.
fn probe_ok(name: &str, t: &Target, extra: &[&str]) -> Value {
    let out = common::tmp("probe", &format!("{name}.json"));
    let o = probe(
        &[
            &[
                t.target().as_str(),
                "--ca",
                t.root.to_str().unwrap(),
                "--rate",
                "100",
                "--rounds",
                "8",
                "--out",
                out.to_str().unwrap(),
            ][..],
            extra,
        ]
        .concat(),
    );
    assert!(o.status.success(), "{name}: {}", common::stderr(&o));
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(report.contains("group offered alone"), "{report}");
    let c = common::pqprof(&["check", out.to_str().unwrap()]);
    assert!(c.status.success(), "{name}: {}", common::stderr(&c));
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

fn taken(p: &Value) -> Vec<(String, bool)> {
    p["probe"]["findings"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["group"].as_str().unwrap().to_string(),
                g["taken"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn groups_taken(p: &Value) -> Vec<String> {
    taken(p)
        .into_iter()
        .filter(|(_, t)| *t)
        .map(|(g, _)| g)
        .collect()
}

/// The sizes of the certificates in `chain.pem` beside the target's root: what the server sends.
fn chain_sizes(root: &Path) -> Vec<u64> {
    let pem = std::fs::read_to_string(root.with_file_name("chain.pem")).unwrap();
    pem.split("-----BEGIN CERTIFICATE-----")
        .skip(1)
        .map(|b| {
            let body: String = b
                .split("-----END")
                .next()
                .unwrap()
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            // Base64: 3 bytes per 4 characters, less the padding.
            (body.len() / 4 * 3 - body.matches('=').count()) as u64
        })
        .collect()
}

#[test]
fn a_server_taking_the_hybrid_alone_retries_for_it_and_its_chain_is_the_one_made() {
    let t = Target::start("rustls", "X25519MLKEM768", "ML-DSA-65");
    let p = probe_ok("rustls-hybrid", &t, &[]);
    assert_eq!(groups_taken(&p), ["X25519MLKEM768"]);
    let f = &p["probe"]["findings"];
    assert_eq!(f["with_both_shares"], "X25519MLKEM768");
    // X25519's share offered, the hybrid without one: the server asks for the hybrid's.
    assert_eq!(f["hybrid_without_share"][0], "X25519MLKEM768");
    assert_eq!(f["hybrid_without_share"][1], true);
    // No X25519 rounds: no paired difference.
    assert!(f["hybrid_delta"].is_null());
    let chain: Vec<u64> = p["probe"]["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(chain, chain_sizes(&t.root));
    // The flight carries the chain, the CertificateVerify's 3,309-byte signature (FIPS 204) and
    // the ServerHello's 1,120-byte share.
    let flight = f["flights"][0]["bytes"].as_u64().unwrap();
    assert!(flight > chain.iter().sum::<u64>() + 3309 + 1120, "{flight}");
    assert_eq!(p["probe"]["chain"][0]["key"], "ML-DSA-65");
    assert_eq!(p["probe"]["chain"][0]["signature"], "ML-DSA-65");
    // The CertificateVerify's scheme: mldsa65 (0x0905).
    let schemes: Vec<u64> = p["probe"]["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["scheme"].as_u64())
        .collect();
    assert!(!schemes.is_empty() && schemes.iter().all(|&s| s == 0x0905));
    // The hybrid's ClientHello carries its 1,216-byte share.
    assert!(f["client_hello"][0].as_u64().unwrap() > 1216);
}

/// Go's crypto/tls server (the Go peer) configured with the hybrid alone: it retries for the
/// hybrid's share as rustls's does, and serves the ECDSA chain pqprof made.
#[test]
fn gos_server_taking_the_hybrid_alone_retries_for_it() {
    if !common::go_built() {
        eprintln!("the Go peer is not built (make go-peer): Go's server is not probed");
        return;
    }
    let t = Target::start("go", "X25519MLKEM768", "ECDSA-P256");
    let p = probe_ok("go-hybrid", &t, &[]);
    assert_eq!(groups_taken(&p), ["X25519MLKEM768"]);
    let f = &p["probe"]["findings"];
    assert_eq!(f["with_both_shares"], "X25519MLKEM768");
    assert_eq!(f["hybrid_without_share"][0], "X25519MLKEM768");
    assert_eq!(f["hybrid_without_share"][1], true);
    assert_eq!(p["probe"]["chain"][0]["key"], "ECDSA P-256");
    let sizes: u64 = chain_sizes(&t.root).iter().sum();
    assert_eq!(f["chain_bytes"].as_u64().unwrap(), sizes);
}

#[test]
fn a_server_without_any_post_quantum_group_takes_x25519_alone_and_never_retries() {
    let t = Target::start("openssl", "X25519", "ECDSA-P256");
    let p = probe_ok("openssl-classical", &t, &[]);
    assert_eq!(groups_taken(&p), ["X25519"]);
    let f = &p["probe"]["findings"];
    assert_eq!(f["with_both_shares"], "X25519");
    assert_eq!(f["hybrid_without_share"][0], "X25519");
    assert_eq!(f["hybrid_without_share"][1], false);
    assert_eq!(f["latency"].as_array().unwrap().len(), 1);
    assert_eq!(p["probe"]["chain"][0]["key"], "ECDSA P-256");
    let sizes: u64 = chain_sizes(&t.root).iter().sum();
    assert_eq!(f["chain_bytes"].as_u64().unwrap(), sizes);
    // Refused groups say why, in one line.
    let refused = f["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "MLKEM768");
    assert!(refused.unwrap()["reason"]
        .as_str()
        .unwrap()
        .starts_with("refused (alert"));
}

/// The lab's servers configured as an operator would: the hybrid first, then X25519.
#[test]
fn the_lab_servers_take_both_and_the_hybrid_costs_a_measured_difference() {
    if !common::lab_root_made() {
        return;
    }
    for server in ["servers/nginx.toml", "servers/haproxy.toml"] {
        let t = Target::start(server, "X25519MLKEM768,X25519", "ECDSA-P256");
        let p = probe_ok(&server.replace(['/', '.'], "-"), &t, &[]);
        assert_eq!(groups_taken(&p), ["X25519", "X25519MLKEM768"], "{server}");
        let f = &p["probe"]["findings"];
        assert_eq!(f["with_both_shares"], "X25519MLKEM768", "{server}");
        // Its preference list has no retry for a group the client shared.
        assert_eq!(f["hybrid_without_share"][1], false, "{server}");
        assert_eq!(f["hybrid_delta"]["pairs"], 8, "{server}");
        let flights = f["flights"].as_array().unwrap();
        let bytes = |g: &str| {
            flights.iter().find(|x| x["group"] == g).unwrap()["bytes"]
                .as_u64()
                .unwrap()
        };
        // The hybrid's ServerHello carries 1,120 bytes where X25519's carries 32; X25519's
        // EncryptedExtensions add the server's supported_groups (10 bytes for two groups: RFC
        // 8446 section 4.2.7), which OpenSSL sends when the client's group is not its first;
        // an ECDSA signature's DER varies by a few bytes.
        assert!(
            bytes("X25519MLKEM768") + 16 >= bytes("X25519") + 1088,
            "{server}: {flights:?}"
        );
    }
}

/// A relay on loopback that counts the connections it accepts and when, and passes each to
/// `to`.
fn counting_relay(to: u16) -> (u16, Arc<Mutex<Vec<Instant>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(client) = c else { continue };
            s.lock().unwrap().push(Instant::now());
            let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else {
                continue;
            };
            for (mut a, mut b) in [
                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                (server, client),
            ] {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut a, &mut b);
                    let _ = b.shutdown(std::net::Shutdown::Write);
                });
            }
        }
    });
    (port, seen)
}

#[test]
fn the_defaults_keep_to_five_connections_a_second_and_the_planned_count() {
    let t = Target::start("rustls", "X25519MLKEM768", "ECDSA-P256");
    let (port, seen) = counting_relay(t.port);
    let out = common::tmp("probe", "defaults.json");
    let o = probe(&[
        &format!("localhost:{port}"),
        "--ca",
        t.root.to_str().unwrap(),
        "--rounds",
        "10",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    // It says what it will send before it sends it.
    assert!(common::stderr(&o).contains("at most 5 per second"));
    let seen = seen.lock().unwrap().clone();
    // 6 questions, then 10 rounds of the hybrid alone (the server refuses X25519).
    assert_eq!(seen.len(), 16);
    // 15 gaps of 200 ms at least: the span from the first accept to the last. (One gap alone can
    // look shorter when the relay accepted its first connection late.)
    let span = seen[15] - seen[0];
    assert!(span >= Duration::from_millis(15 * 200 - 20), "{span:?}");
    let p: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(p["probe"]["per_second"], 5.0);
    assert_eq!(p["probe"]["max_connections"], 300);
    // The client's own start times, stored, are 200 ms apart each (check holds them to it).
    let starts: Vec<f64> = p["probe"]["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["start_ms"].as_f64().unwrap())
        .collect();
    assert!(
        starts.windows(2).all(|w| w[1] - w[0] >= 200.0),
        "{starts:?}"
    );
}

#[test]
fn the_count_limit_cuts_the_rounds() {
    let t = Target::start("rustls", "X25519MLKEM768", "ECDSA-P256");
    let (port, seen) = counting_relay(t.port);
    let out = common::tmp("probe", "limited.json");
    let o = probe(&[
        &format!("localhost:{port}"),
        "--ca",
        t.root.to_str().unwrap(),
        "--rate",
        "100",
        "--max-connections",
        "10",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    // 6 questions and 2 rounds fit 10; the server takes the hybrid alone: 6 + 2.
    assert_eq!(seen.lock().unwrap().len(), 8);
}

/// A probe that must fail: one line on standard error naming the target, a failing status, and
/// no file.
fn fails(name: &str, args: &[&str], says: &str) {
    let out = common::tmp("probe", &format!("{name}.json"));
    let o = probe(&[args, &["--out", out.to_str().unwrap(), "--timeout-s", "1"]].concat());
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{name}: {err}");
    // One line says what went wrong; it is the last.
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("Error")).collect();
    assert_eq!(errors.len(), 1, "{name}: {err}");
    assert!(err.trim_end().ends_with(errors[0]), "{name}: {err}");
    assert!(errors[0].contains(says), "{name}: {err}");
    assert!(!out.exists(), "{name}: a file was written");
}

/// A listener that does `answer` with each connection it accepts.
fn peer(answer: fn(TcpStream)) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            std::thread::spawn(move || answer(c));
        }
    });
    port
}

#[test]
fn bad_inputs_and_bad_peers_are_one_line_each() {
    fails(
        "unresolvable",
        &["no-such-host.invalid", "--insecure"],
        "cannot resolve no-such-host.invalid",
    );
    fails(
        "scheme",
        &["https://example.org", "--insecure"],
        "give HOST[:PORT]",
    );
    for rate in ["0", "1e-20", "NaN", "inf", "-5"] {
        let rate = format!("--rate={rate}");
        fails(
            "rate",
            &["localhost:1", "--insecure", &rate],
            "--rate must be",
        );
    }
    fails(
        "few",
        &["localhost:1", "--insecure", "--max-connections", "0"],
        "is under the 6",
    );
    fails(
        "many",
        &[
            "localhost:1",
            "--insecure",
            "--max-connections",
            "10000000000",
        ],
        "at most",
    );
    fails("bracket", &["[::1", "--insecure"], "closes with ]");
    fails("port", &["localhost:", "--insecure"], "is not a port");
    // A port nothing listens on: bind one, then let it go.
    let free = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    fails(
        "refused",
        &[&format!("127.0.0.1:{free}"), "--insecure"],
        "connection refused",
    );
    // Accepts and never answers.
    let silent = peer(|c| {
        std::thread::sleep(Duration::from_secs(5));
        drop(c);
    });
    fails(
        "silent",
        &[&format!("127.0.0.1:{silent}"), "--insecure"],
        "no answer",
    );
    // Not TLS: an HTTP server's answer.
    let http = peer(|mut c| {
        let _ = c.read(&mut [0; 2048]);
        let _ = c.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
    });
    fails(
        "http",
        &[&format!("127.0.0.1:{http}"), "--insecure"],
        "not a TLS server: it answered \"HTTP/1.1 400 Bad Request",
    );
    // Resets every handshake before answering.
    let reset = peer(|mut c| {
        let _ = c.read(&mut [0; 64]);
        let _ = socket_reset(c);
    });
    fails(
        "reset",
        &[&format!("127.0.0.1:{reset}"), "--insecure"],
        "no handshake completed",
    );
    // A chain that does not verify against the roots given: the system's.
    let t = Target::start("rustls", "X25519", "ECDSA-P256");
    fails("unverified", &[&t.target()], "does not verify");
    // A missing CA file.
    fails(
        "no-ca",
        &[&t.target(), "--ca", "/nonexistent/ca.pem"],
        "cannot read /nonexistent/ca.pem",
    );
    // An output folder that cannot be made: said before any connection.
    let o = probe(&[&t.target(), "--insecure", "--out", "/proc/nope/probe.json"]);
    assert!(!o.status.success());
    assert!(
        common::stderr(&o).contains("cannot make /proc/nope"),
        "{}",
        common::stderr(&o)
    );
    assert!(
        !common::stderr(&o).contains("pqprof probe:"),
        "it connected first"
    );
}

/// A server that goes away during the rounds: the probe writes what it measured, the failed
/// rounds recorded as such, and stops after a few failures in a row.
#[test]
fn a_server_gone_during_the_rounds_leaves_the_rounds_measured_so_far() {
    let t = Target::start("rustls", "X25519MLKEM768", "ECDSA-P256");
    let (port, seen) = counting_relay(t.port);
    let out = common::tmp("probe", "gone.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pqprof"))
        .args([
            "probe",
            &format!("127.0.0.1:{port}"),
            "--sni",
            "localhost",
            "--ca",
        ])
        .arg(&t.root)
        .args([
            "--rate",
            "20",
            "--rounds",
            "40",
            "--out",
            out.to_str().unwrap(),
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The 6 questions and a few rounds, then the server stops.
    while seen.lock().unwrap().len() < 12 {
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(t);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(child.wait().unwrap().success(), "{err}");
    assert!(err.contains("failed in a row"), "{err}");
    let p: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let conns = p["probe"]["connections"].as_array().unwrap();
    assert!(conns.len() < 6 + 40, "{}", conns.len());
    let failed = conns
        .iter()
        .filter(|c| !c["error"].is_null() && !c["round"].is_null());
    assert_eq!(failed.count(), 3);
    assert!(common::pqprof(&["check", out.to_str().unwrap()])
        .status
        .success());
}

/// Closes a connection with a reset (SO_LINGER 0), as a peer that drops a handshake does.
fn socket_reset(c: TcpStream) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt reads a struct linger of the size given, alive for the call, on an open
    // socket.
    let r = unsafe {
        libc::setsockopt(
            c.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    drop(c);
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[test]
fn a_server_speaking_tls_1_2_alone_is_named_so() {
    // The host's openssl: s_server with TLS 1.2 only and a fresh self-signed key.
    let dir = common::tmp("probe", "tls12");
    std::fs::create_dir_all(&dir).unwrap();
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-days",
            "1",
        ])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .output();
    let Ok(made) = made else {
        eprintln!("skipped: no openssl command");
        return;
    };
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new("openssl")
        .args([
            "s_server",
            "-tls1_2",
            "-quiet",
            "-accept",
            &port.to_string(),
        ])
        .arg("-cert")
        .arg(dir.join("cert.pem"))
        .arg("-key")
        .arg(dir.join("key.pem"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(("127.0.0.1", port)).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    fails(
        "tls12",
        &[&format!("127.0.0.1:{port}"), "--insecure"],
        "does not speak TLS 1.3",
    );
    let _ = server.kill();
    let _ = server.wait();
}
