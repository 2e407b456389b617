//! `pqprof network` end to end on the quick grid, for rustls and (where its peer is built) Go: the
//! link is measured before every point, the 5.6 ms point sits where two round trips put it, loss
//! shows in the emulator's counters, `check` recomputes the section; and an interrupted or killed
//! run leaves no namespace or process behind (the Go peer's servers and clients included).
//! Where the machine cannot run the grid (not root, no iptables), the command must say so in one
//! line and succeed, and that is what is tested instead.

mod common;

use common::pqprof;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The namespaces have fixed names: one test at a time.
static LAB: Mutex<()> = Mutex::new(());

fn namespaces() -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    out.lines()
        .filter(|l| l.starts_with("pqp-"))
        .map(String::from)
        .collect()
}

/// pqprof children still alive (emulator, servers or Go peer clients started for a network run).
fn children() -> Vec<String> {
    let out = Command::new("ps")
        .args(["-eo", "pid,args"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            l.contains("netem-router")
                || (l.contains("handshake-server") && l.contains("--bind 10.77"))
                || (l.contains("pqprof-go-peer") && l.contains(" 10.77."))
        })
        .map(String::from)
        .collect()
}

/// The stacks the tests run: rustls, quinn (QUIC), and Go where its peer is built, with quic-go
/// where the peer has it (required where PQPROF_REQUIRE_QUIC_GO is set, as CI sets it).
fn stacks() -> Vec<&'static str> {
    let mut v = vec!["rustls", "quinn"];
    if common::go_built() {
        v.push("go");
        if common::go_has_quic() {
            v.push("quic-go");
        }
    } else {
        eprintln!("the Go peer is not built (make go-peer): rustls only");
    }
    assert!(
        v.contains(&"quic-go") || std::env::var_os("PQPROF_REQUIRE_QUIC_GO").is_none(),
        "PQPROF_REQUIRE_QUIC_GO is set, and the Go peer has no quic-go (peers/go/quic-deps.sh)"
    );
    v
}

/// The QUIC stacks.
const QUIC: [&str; 2] = ["quinn", "quic-go"];

/// `--stack S` for each stack.
fn stack_args(stacks: &[&'static str]) -> Vec<&'static str> {
    stacks.iter().flat_map(|s| ["--stack", s]).collect()
}

#[test]
fn the_quick_grid_measures_the_link_and_check_recomputes_it() {
    let _one = LAB.lock().unwrap_or_else(|e| e.into_inner());
    let out = common::tmp("net", "net.json");
    common::measure_mini(&out, "5");
    let file = out.to_str().unwrap();
    let stacks = stacks();
    let mut args = vec![
        "network",
        "--results",
        file,
        "--grid",
        "quick",
        "--per-point",
        "12",
        "--parallel",
        "4",
        "--suites",
        "tests/data/mini",
    ];
    args.extend(stack_args(&stacks));
    let o = pqprof(&args);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{stdout}\n{}", common::stderr(&o));
    if !common::network_available() {
        assert!(stdout.starts_with("network: skipped: "), "{stdout}");
        return;
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let n = &v["network"];
    let points = n["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "the zero point, then 5.6 ms x 0% and 10%");
    assert_eq!(n["quic_loss_model"], 5, "QUIC's model: its fifth form");
    // The points without loss ran in three rounds, every cell in each; the lossy one in one.
    for (p, rounds) in points.iter().zip([Some(3), Some(3), None]) {
        for kind in ["cells", "resumed", "validated"] {
            for c in p[kind].as_array().map_or(&[][..], |v| v.as_slice()) {
                assert_eq!(c["pace"]["rounds"].as_u64(), rounds, "{}", p["loss_pct"]);
            }
        }
    }
    // The mini suites pair X25519MLKEM768 with an ML-DSA-65 chain at the loss rates the quick
    // grid authenticates at (the zero point and 0%), not at 10%: per stack, X25519 and
    // X25519MLKEM768 with ECDSA-P256, and X25519MLKEM768 with ML-DSA-65.
    let of = |p: &serde_json::Value, stack: &str| -> Vec<serde_json::Value> {
        p["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["stack"] == stack)
            .cloned()
            .collect()
    };
    // QUIC's cells run under loss too (its loss model from 2026-12-04).
    let quic = |stack: &str| QUIC.contains(&stack);
    for (p, cells) in points.iter().zip([3, 3, 2]) {
        assert_eq!(common::ints(&p["link"]["connect_ns"]).len(), 16);
        assert_eq!(
            p["cells"].as_array().unwrap().len(),
            cells * stacks.len(),
            "{stacks:?} at {}",
            p["loss_pct"]
        );
        for stack in &stacks {
            let cells = of(p, stack);
            let groups: Vec<&str> = cells.iter().map(|c| c["group"].as_str().unwrap()).collect();
            assert!(
                groups.contains(&"X25519") && groups.contains(&"X25519MLKEM768"),
                "{stack}: {groups:?}"
            );
            for c in &cells {
                // Every handshake started finished or failed, and the clean points lost none.
                let done = common::ints(&c["ready_ns"]).len() as u64;
                assert!(done >= 10, "{stack} {}: {done} handshakes", c["group"]);
                if p["loss_pct"] == 0.0 {
                    assert_eq!(c["failed"], 0, "{stack} {}", c["group"]);
                }
                // The clients' CPU over the window: for Go the peer's client processes report
                // it, so it is there too.
                assert!(
                    c["cpu"]["client_ns"].as_f64().unwrap() > 0.0
                        && c["cpu"]["server_ns"].as_f64().unwrap() > 0.0,
                    "{stack}: {}",
                    c["cpu"]
                );
            }
        }
    }
    // Every cell says how its handshakes started: the zero point one at a time, back to back;
    // every other point a start every zero-point median / load, from at most --parallel threads,
    // with the measured window's CPU (clients made before it) and the emulator's lateness.
    for (k, p) in points.iter().enumerate() {
        for c in p["cells"].as_array().unwrap() {
            let (gap, threads) = (
                c["pace"]["gap_ns"].as_f64().unwrap(),
                c["pace"]["threads"].as_u64().unwrap(),
            );
            if k == 0 {
                assert!(gap == 0.0 && threads == 1, "{}", c["pace"]);
            } else {
                // A start every zero-point median / the load, a thread for each connection then
                // in flight (each holds its thread for its handshake and the echo's round trip)
                // and one more, at most --parallel 4.
                // In rounds, the zero point's first round set the pace; the model's zero point
                // is all of its rounds.
                let zero = c["pace"]["zero_ns"].as_f64().unwrap();
                let expected = c["model"]["expected_ns"].as_f64().unwrap()
                    - c["model"]["zero_ns"].as_f64().unwrap()
                    + zero
                    + c["model"]["link_rtt_ns"].as_f64().unwrap();
                assert!(
                    (gap - zero / (n["load_pct"].as_f64().unwrap() / 100.0)).abs() <= 1.0,
                    "{} {}",
                    c["pace"],
                    c["model"]
                );
                let want = ((expected / gap).ceil() as u64 + 1).min(4);
                assert_eq!(threads, want, "{} {}", c["pace"], c["model"]);
            }
            assert!(c["cpu"]["wall_ns"].as_f64().unwrap() > 0.0, "{}", c["cpu"]);
            assert!(
                c["release"]["released"].as_u64().unwrap() > 0,
                "{}",
                c["release"]
            );
            // The loss model's critical path: SYN, SYN-ACK, the ClientHello, the server's flight;
            // over QUIC the Initial flight (no RTT sample yet) first and the server's last round
            // last, and QUIC's timers throughout.
            if quic(c["stack"].as_str().unwrap()) {
                let path = c["model"]["path"].as_array().unwrap();
                assert!(
                    path.len() >= 2 && path.iter().all(|f| f["quic"] == true),
                    "{c}"
                );
                assert!(path[0]["from_client"] == true && path[0]["opening"] == true);
                // The head of the server's flight on its own: its first datagram, with the
                // ServerHello (and, after two Initial datagrams, the second, into which the
                // ServerHello spills); all of it lost, nothing can be read until the probe timeout
                // before any RTT sample.
                let head = if path[0]["segments"] == 1 { 1 } else { 2 };
                assert!(
                    path[1]["from_client"] == false
                        && path[1]["segments"].as_u64().unwrap() <= head
                        && path[1]["opening"] == true,
                    "{c}"
                );
                assert_eq!(path[path.len() - 1]["from_client"], false, "{c}");
                assert_eq!(c["transport"], "quic");
                continue;
            }
            assert_eq!(
                c["model"]["path"].as_array().unwrap().len(),
                4,
                "{}",
                c["model"]
            );
            assert!(
                c["model"]["p95_ns"].as_f64().unwrap() >= c["model"]["p50_ns"].as_f64().unwrap()
            );
        }
    }
    let clean = &points[1];
    assert_eq!(clean["rtt_ns"], 5.6e6);
    assert_eq!(
        clean["link"]["valid"], true,
        "{}",
        clean["link"]["rtt_median_ns"]
    );
    for stack in &stacks {
        let cells = of(clean, stack);
        let x25519 = cells.iter().find(|c| c["group"] == "X25519").unwrap();
        let median = x25519["ready_percentiles_ns"][2].as_f64().unwrap() / 1e6;
        // TCP connect and the TLS 1.3 exchange: two round trips at least (the link is measured,
        // and a handshake cannot beat its round trips; QUIC: one, no connect), and less than
        // one more beyond the model, whose compute term is the zero point's median (one
        // handshake at a time; the cells are paced).
        let model = x25519["model"]["expected_ns"].as_f64().unwrap() / 1e6;
        let tolerance = clean["link"]["tolerance_ns"].as_f64().unwrap() / 1e6;
        let least = if quic(stack) { 1.0 } else { 2.0 };
        assert!(
            median >= least * (5.6 - tolerance) && median < model + 5.6,
            "{stack} X25519 median {median} ms at RTT 5.6 ms, model {model} ms"
        );
        assert_eq!(x25519["dropped"], serde_json::json!([0, 0]));
        // An ML-DSA-65 chain's first flight (about 15.6 kB) overflows the 10-segment initial
        // window of a 1,500-byte MTU (14,480 bytes at MSS 1,448); ECDSA's (about 2 kB) does not:
        // one round trip more in the model, and the evidence says how many bytes it was.
        let cell = |group: &str, auth: &str| {
            cells
                .iter()
                .find(|c| c["group"] == group && c["auth"] == auth)
                .unwrap_or_else(|| panic!("no {stack} {group} + {auth} cell: {clean}"))
                .clone()
        };
        let ecdsa = cell("X25519MLKEM768", "ECDSA-P256");
        let mldsa = cell("X25519MLKEM768", "ML-DSA-65");
        let flight = |c: &serde_json::Value| c["server_flight_bytes"].as_u64().unwrap();
        // Over QUIC the bound is the anti-amplification budget: three times the hybrid's two
        // 1,200-byte Initial datagrams (RFC 9000 section 8.1).
        let bound = if quic(stack) { 7_200 } else { 14_480 };
        assert!(
            flight(&ecdsa) < bound && flight(&mldsa) > bound,
            "{stack}: {ecdsa}\n{mldsa}"
        );
        if quic(stack) {
            assert_eq!(mldsa["quic"]["client_initial_bytes"], 2400, "{mldsa}");
            assert_eq!(ecdsa["model"]["round_trips"], 1.0, "{ecdsa}");
        }
        assert_eq!(
            mldsa["model"]["round_trips"].as_f64().unwrap(),
            ecdsa["model"]["round_trips"].as_f64().unwrap() + 1.0
        );
        assert_eq!(mldsa["against"]["auth"], "ECDSA-P256");
        assert_eq!(mldsa["against"]["suite"], "X25519MLKEM768");
        // The hybrid's ClientHello carries its 1,216-byte share, X25519's its 32 bytes: the
        // client's bytes per handshake say which group went over the wire.
        let sent = |c: &serde_json::Value| c["bytes_per_handshake"][0].as_f64().unwrap();
        assert!(
            sent(&ecdsa) > sent(x25519) + 1_100.0,
            "{stack}: {} vs {} bytes",
            sent(&ecdsa),
            sent(x25519)
        );
    }
    // Resumed cells (#34) on the stacks that resume, at the zero point and 5.6 ms without loss,
    // none at 10%: every completed handshake resumed as its server saw it, no certificate on the
    // wire (the ML-DSA-65 chain's flight gone, so no round trip more in the model).
    let resuming: Vec<&str> = stacks.iter().copied().filter(|s| !quic(s)).collect();
    for (p, want) in points.iter().zip([3, 3, 0]) {
        let resumed = p["resumed"].as_array().map_or(&[][..], |v| v.as_slice());
        assert_eq!(resumed.len(), want * resuming.len(), "{}", p["loss_pct"]);
        for c in resumed {
            let done = common::ints(&c["ready_ns"]).len() as u64;
            assert!(done >= 10, "{c}");
            assert_eq!(c["resumptions"], done, "{} {}", c["stack"], c["group"]);
            assert_eq!(c["failed"], 0);
            assert_eq!(c["against"]["suite"], c["group"]);
            assert_eq!(c["against"]["auth"], c["auth"]);
            let full = twin(p, c);
            assert!(full.get("resumptions").is_none(), "{full}");
            let flight = |c: &serde_json::Value| c["server_flight_bytes"].as_u64().unwrap();
            assert!(flight(c) < flight(full), "{c}\n{full}");
            if c["auth"] == "ML-DSA-65" && p["rtt_ns"].as_f64().unwrap() > 0.0 {
                assert!(flight(c) < 14_480, "{c}");
                assert_eq!(
                    c["model"]["round_trips"].as_f64().unwrap() + 1.0,
                    full["model"]["round_trips"].as_f64().unwrap(),
                    "{c}\n{full}"
                );
            }
        }
    }
    // QUIC's validated addresses (#35), at the points without loss: a NEW_TOKEN token with each
    // of its three scenarios, a Retry with ECDSA's two; each shows its token or Retry on the wire
    // and no more round trips than its full twin, the Retry one more with ECDSA's small flight.
    let quics = stacks.iter().filter(|s| quic(s)).count();
    for (p, want) in points.iter().zip([5, 5, 0]) {
        let validated = p["validated"].as_array().map_or(&[][..], |v| v.as_slice());
        assert_eq!(validated.len(), want * quics, "{}", p["loss_pct"]);
        for c in validated {
            assert!(quic(c["stack"].as_str().unwrap()), "{c}");
            let done = common::ints(&c["ready_ns"]).len();
            assert!(done >= 10 && c["failed"] == 0, "{c}");
            let full = twin(p, c);
            let rt = |c: &serde_json::Value| c["model"]["round_trips"].as_f64().unwrap();
            match c["mode"].as_str() {
                Some("token") => {
                    assert!(c["quic"]["token"] == true && c["quic"].get("retry").is_none());
                    // quic-go's server paces a token's flight, at the token's RTT: the model
                    // counts the flight's datagrams; quinn's is not paced.
                    let pacer = &c["model"]["pacer"];
                    if c["stack"] == "quic-go" {
                        assert_eq!(pacer["datagrams"], c["quic"]["server_datagrams"], "{c}");
                    } else {
                        assert!(pacer.is_null(), "{c}");
                    }
                    assert!(
                        rt(c) <= rt(full),
                        "{c}
{full}"
                    );
                }
                Some("retry") => {
                    assert!(c["quic"]["token"] == false && c["quic"]["retry"] == true);
                    assert_eq!(c["auth"], "ECDSA-P256");
                    assert_eq!(
                        rt(c),
                        rt(full) + 1.0,
                        "{c}
{full}"
                    );
                }
                m => panic!("a validated cell of mode {m:?}"),
            }
        }
    }
    let lossy = &points[2];
    let dropped: u64 = lossy["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["dropped"][0].as_u64().unwrap() + c["dropped"][1].as_u64().unwrap())
        .sum();
    assert!(dropped > 0, "10% loss dropped nothing: {lossy}");
    let check = pqprof(&["check", file]);
    assert!(check.status.success(), "{}", common::stderr(&check));
    assert!(namespaces().is_empty(), "left behind: {:?}", namespaces());
    assert!(children().is_empty(), "left behind: {:?}", children());
}

/// The full handshake's cell of a resumed or validated cell's point, stack, group and chain.
fn twin<'a>(p: &'a serde_json::Value, c: &serde_json::Value) -> &'a serde_json::Value {
    p["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["stack"] == c["stack"] && f["group"] == c["group"] && f["auth"] == c["auth"])
        .unwrap_or_else(|| panic!("no full twin of {c}"))
}

/// Starts a long network run and waits until it is measuring, with packets in the emulator.
fn start_long(file: &str) -> (std::process::Child, Instant) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pqprof"))
        .args([
            "network",
            "--results",
            file,
            "--grid",
            "quick",
            "--per-point",
            "100000",
            "--parallel",
            "2",
        ])
        .args(stack_args(&stacks()))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let t0 = Instant::now();
    for line in lines.by_ref() {
        if line.unwrap().contains("point 1/") {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run never started measuring"
        );
    }
    // Keep draining so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    std::thread::sleep(Duration::from_millis(1500));
    (child, t0)
}

#[test]
fn an_interrupted_or_killed_run_leaves_nothing_behind() {
    let _one = LAB.lock().unwrap_or_else(|e| e.into_inner());
    if !common::network_available() {
        return;
    }
    let out = common::tmp("net", "interrupted.json");
    common::measure_mini(&out, "5");
    let before = std::fs::read(&out).unwrap();
    let file = out.to_str().unwrap();

    let (mut child, _) = start_long(file);
    assert!(
        !namespaces().is_empty(),
        "the run should be inside its namespaces now"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "Ctrl-C exits 128 + SIGINT");
    std::thread::sleep(Duration::from_millis(300));
    assert!(namespaces().is_empty(), "after Ctrl-C: {:?}", namespaces());
    assert!(children().is_empty(), "after Ctrl-C: {:?}", children());
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "an interrupted run writes nothing"
    );

    // SIGKILL cannot be caught: the children die with their parent, and the next start (or
    // --cleanup) removes the namespaces.
    let (mut child, _) = start_long(file);
    child.kill().unwrap();
    child.wait().unwrap();
    let t0 = Instant::now();
    while !children().is_empty() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(children().is_empty(), "after SIGKILL: {:?}", children());
    let o = pqprof(&["network", "--cleanup"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("removed pqp-c"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        namespaces().is_empty(),
        "after --cleanup: {:?}",
        namespaces()
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

/// `pqprof probe` through the emulated network at 78.7 ms: for each chain the round trips it
/// predicts from the flight against the 10-segment initial window are the ones it observes (an
/// ECDSA or ML-DSA-44 flight fits the window: 2 with TCP's; an ML-DSA-65 or -87 one does not: 3).
#[test]
fn a_probes_predicted_round_trips_are_the_ones_it_sees_at_78_7_ms() {
    if !common::network_available() {
        eprintln!("skipped: the emulated network needs root and iptables");
        return;
    }
    let _one = LAB.lock().unwrap_or_else(|e| e.into_inner());
    for (auth, expected) in [
        ("ECDSA-P256", 2),
        ("ML-DSA-44", 2),
        ("ML-DSA-65", 3),
        ("ML-DSA-87", 3),
    ] {
        let out = common::tmp("net", &format!("probe-{auth}.json"));
        let o = pqprof(&[
            "probe-emulated",
            "--rtt-ms",
            "78.7",
            "--auth",
            auth,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{auth}: {}", common::stderr(&o));
        let p: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let f = &p["probe"]["findings"];
        let predicted = f["flights"][0]["predicted_round_trips"].as_u64().unwrap();
        let seen = f["latency"][0]["observed_round_trips"].as_f64().unwrap();
        assert_eq!(predicted, expected, "{auth}: {f}");
        // At 78.7 ms a round trip is 40 times the handshake's compute: the count is the ratio's
        // nearest whole number.
        assert_eq!(seen.round() as u64, predicted, "{auth}: seen {seen:.2}");
        assert!(pqprof(&["check", out.to_str().unwrap()]).status.success());
    }
    assert!(namespaces().is_empty(), "{:?}", namespaces());
    assert!(children().is_empty(), "{:?}", children());
}
