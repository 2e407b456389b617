//! The servers of servers/ in the lab root, end to end: a user's own server file (a second nginx
//! configuration) gets its rows with no code, its evidence names its software and `check` holds
//! it; a bad server file or a server that cannot start is a one-line reason, and nothing is left
//! running. Needs the lab root (`make lab`); where it is not made the tests say so and pass,
//! unless PQPROF_REQUIRE_LAB is set, as CI sets it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// Held by the tests that start sshd, one at a time: each asserts that no sshd is left when it
/// ends, which another's running sshd would fail.
static SSHD: Mutex<()> = Mutex::new(());

fn root_made() -> bool {
    common::lab_root_made()
}

/// pqprof with its server files from `servers`.
fn pqprof_with(servers: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pqprof"))
        .args(args)
        .env("PQPROF_SERVERS", servers)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// `pqprof handshake` of the mini suites into a fresh copy of a short run, shortest design, with
/// `servers` as the server files and only `stacks`.
fn handshake(servers: &Path, name: &str, stacks: &[&str]) -> (PathBuf, Output) {
    handshake_of(servers, "tests/data/mini", name, stacks)
}

/// `handshake` of the suites in `suites`.
fn handshake_of(servers: &Path, suites: &str, name: &str, stacks: &[&str]) -> (PathBuf, Output) {
    let out = common::tmp("lab", name);
    common::measure_suites(&out, suites, "5");
    let mut args = vec![
        "handshake",
        "--results",
        out.to_str().unwrap(),
        "--suites",
        suites,
        "--samples",
        "2",
        "--per-sample",
        "3",
        "--budget-s",
        "0",
    ];
    for s in stacks {
        args.extend(["--stack", s]);
    }
    let o = pqprof_with(servers, &args);
    (out, o)
}

/// A folder of server files: nginx's, renamed `name`, with `edit` applied to its text.
fn servers(dir: &str, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let d = common::tmp("lab", dir);
    std::fs::create_dir_all(&d).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("servers");
    std::fs::copy(shipped.join("nginx.conf.in"), d.join("nginx.conf.in")).unwrap();
    let text = std::fs::read_to_string(shipped.join("nginx.toml"))
        .unwrap()
        .replace("name = \"nginx\"", &format!("name = \"{name}\""));
    std::fs::write(d.join(format!("{name}.toml")), edit(text)).unwrap();
    d
}

/// `pqprof check FILE` passes.
fn assert_checks(file: &Path) {
    let check = common::pqprof(&["check", file.to_str().unwrap()]);
    assert!(check.status.success(), "{}", common::stderr(&check));
}

/// `pqprof check` of `text` in a file of its own (`name`) fails, saying `says`.
fn assert_check_refuses(name: &str, text: &str, says: &str) {
    let bad = common::tmp("lab", name);
    std::fs::write(&bad, text).unwrap();
    let check = common::pqprof(&["check", bad.to_str().unwrap()]);
    assert!(!check.status.success());
    let said = String::from_utf8_lossy(&check.stdout).to_string() + &common::stderr(&check);
    assert!(said.contains(says), "{said}");
}

/// The rows `pqprof export FILE --section capacity --format json` gives.
fn exported_capacity(file: &Path) -> Vec<serde_json::Value> {
    let export = common::pqprof(&[
        "export",
        file.to_str().unwrap(),
        "--section",
        "capacity",
        "--format",
        "json",
    ]);
    assert!(export.status.success(), "{}", common::stderr(&export));
    let exported: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    exported["rows"].as_array().unwrap().clone()
}

/// Every connection a server held was still established at it when its memory was read, and
/// holding them grew it (`row`: the stored row, for the message).
fn assert_held_and_grew(held: &serde_json::Value, row: &serde_json::Value) {
    assert_eq!(held["established"], held["connections"], "{row}");
    let pss = held["pss_bytes"].as_array().unwrap();
    assert!(pss.last().unwrap().as_u64() > pss[0].as_u64(), "{row}");
}

/// Processes whose command line names `text`.
fn running(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(text) && !cmdline.contains("cargo") {
            found.push(cmdline);
        }
    }
    found
}

#[test]
fn a_users_own_server_file_gets_its_rows_with_no_code() {
    if !root_made() {
        return;
    }
    // A second nginx configuration: two workers, the same binary.
    let dir = servers("own", "nginx-tuned", |t| {
        t.replace("workers = 1", "workers = 2")
    });
    let (out, o) = handshake(&dir, "own.json", &["nginx-tuned"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let sc = v["handshakes"]["scenarios"].as_array().unwrap();
    // X25519 and the hybrid with ECDSA-P256, the hybrid with ML-DSA-65 (tests/data/mini).
    assert_eq!(sc.len(), 3, "{sc:#?}");
    for s in sc {
        assert_eq!(s["stack"], "nginx-tuned");
        let ev = &s["evidence"];
        // OpenSSL names X25519 "x25519": the group as the suite names it, whatever the case.
        let group = ev["group"].as_str().unwrap();
        assert!(
            group.eq_ignore_ascii_case(s["suite"].as_str().unwrap()),
            "{ev}"
        );
        let software = ev["server_software"].as_str().unwrap();
        assert!(software.starts_with("nginx-tuned 1."), "{software}");
        assert!(s["server_cpu_ns"].as_f64().unwrap() > 0.0);
        // Its CPU read after every round: one figure a sample, packed.
        let per_sample = s["server_cpu_samples_ns"].as_str().unwrap_or_default();
        assert!(per_sample.starts_with("d1:"), "{s}");
        assert_eq!(
            s["totals_ns"].as_array().map_or(0, |t| t.len()),
            0,
            "packed, not a list"
        );
    }
    let mldsa = sc
        .iter()
        .find(|s| s["auth"]["name"] == "ML-DSA-65")
        .unwrap();
    assert_eq!(mldsa["evidence"]["cert_key"], "ML-DSA-65");
    assert_checks(&out);
    // Evidence that names another server fails the check, naming the scenario.
    let text = std::fs::read_to_string(&out)
        .unwrap()
        .replacen("nginx-tuned 1.", "haproxy 3.", 1);
    assert_check_refuses("bad-software.json", &text, "not nginx-tuned and a version");
    // Nothing of this test's servers is left: no process names their folders (lab-<name>-<pid>).
    let left = running("lab-nginx-tuned-");
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_users_own_server_is_loaded_by_h2load_and_checked() {
    if !root_made() {
        return;
    }
    let dir = servers("own-load", "nginx-loaded", |t| t);
    let out = common::tmp("lab", "own-load.json");
    common::measure_suites(&out, "tests/data/mini", "5");
    let o = pqprof_with(
        &dir,
        &[
            "capacity",
            "--results",
            out.to_str().unwrap(),
            "--stack",
            "nginx-loaded",
            "--quick",
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let loads = v["capacity"]["servers"].as_array().unwrap();
    // Both socket groups, with the ECDSA and the ML-DSA-65 chain.
    let mut seen: Vec<(String, String)> = loads
        .iter()
        .map(|l| (l["group"].to_string(), l["auth"].to_string()))
        .collect();
    seen.sort();
    assert_eq!(seen.len(), 4, "{loads:#?}");
    for l in loads {
        assert_eq!(l["server"], "nginx-loaded");
        assert_eq!(l["tls_version"], "TLSv1.3");
        assert!(
            l["tool"].as_str().unwrap().starts_with("h2load nghttp2/"),
            "{l}"
        );
        for r in l["rounds"].as_array().unwrap() {
            assert_eq!(r["failed"], 0, "{l}");
            assert!(r["server_cpu_ns"].as_u64().unwrap() > 0, "{l}");
        }
        assert_held_and_grew(&l["held"], l);
    }
    assert_checks(&out);
    // Exported: a row under h2load and one held for each, the held one's figure the growth of
    // the stored proportional set size over the connections held.
    let rows = exported_capacity(&out);
    let of = |what: &str| -> Vec<&serde_json::Value> {
        rows.iter()
            .filter(|r| r["measurement"] == what && r["stack"] == "nginx-loaded")
            .collect()
    };
    assert_eq!(of("under h2load").len(), 4, "{rows:#?}");
    for r in of("held connections") {
        let l = loads
            .iter()
            .find(|l| l["group"] == r["group"] && l["auth"] == r["auth"])
            .unwrap();
        let (pss, n) = (&l["held"]["pss_bytes"], &l["held"]["connections"]);
        let last = n.as_array().unwrap().len() - 1;
        let grown = pss[last].as_f64().unwrap() - pss[0].as_f64().unwrap();
        let want = grown / n[last].as_f64().unwrap();
        assert_eq!(r["pss_per_connection_bytes"].as_f64(), Some(want), "{r}");
    }
    // A round whose connections failed fails the check.
    let mut broken = v.clone();
    let round = &mut broken["capacity"]["servers"][0]["rounds"][0];
    round["succeeded"] = (round["succeeded"].as_u64().unwrap() - 3).into();
    round["failed"] = 3.into();
    let says = "3 connection(s) of round 0 failed";
    assert_check_refuses("own-load-bad.json", &broken.to_string(), says);
    let left = running("h2load-nginx-loaded-");
    assert!(left.is_empty(), "{left:?}");
}

/// sshd, which h2load cannot load, holds connections after each key exchange: both methods,
/// every connection still established at the server when its memory was read, the memory grown,
/// the file checked and exported, and nothing of it left running.
#[test]
fn sshd_holds_connections_after_each_key_exchange() {
    if !root_made() {
        return;
    }
    let _one = SSHD.lock().unwrap_or_else(|e| e.into_inner());
    let out = common::tmp("lab", "sshd-held.json");
    common::measure_suites(&out, "tests/data/mini", "5");
    let o = common::pqprof(&[
        "capacity",
        "--results",
        out.to_str().unwrap(),
        "--stack",
        "sshd",
        "--quick",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let held = v["capacity"]["servers_held"].as_array().unwrap();
    let mut groups: Vec<&str> = held.iter().map(|h| h["group"].as_str().unwrap()).collect();
    groups.sort();
    assert_eq!(
        groups,
        ["curve25519-sha256", "mlkem768x25519-sha256"],
        "{held:#?}"
    );
    for h in held {
        assert_eq!(h["server"], "sshd");
        assert!(h["version"].as_str().unwrap().starts_with("10."), "{h}");
        assert_held_and_grew(&h["held"], h);
    }
    assert_checks(&out);
    let rows = exported_capacity(&out);
    let held_rows = rows
        .iter()
        .filter(|r| r["measurement"] == "held connections" && r["stack"] == "sshd");
    assert_eq!(held_rows.count(), 2, "{rows:#?}");
    // Evidence that names a method the server was not given fails the check.
    let mut broken = v.clone();
    broken["capacity"]["servers_held"][0]["group"] = "sntrup761x25519-sha512".into();
    broken["capacity"]["servers_held"][0]["server_groups"] =
        serde_json::json!(["mlkem768x25519-sha256", "curve25519-sha256"]);
    let says = "which the server was not given";
    assert_check_refuses("sshd-held-bad.json", &broken.to_string(), says);
    let left = running("held-sshd-");
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_bad_server_file_or_a_missing_binary_is_one_line_and_the_rest_goes_on() {
    if !root_made() {
        return;
    }
    let dir = servers("bad", "absent", |t| {
        t.replace(
            "binary = \"/usr/sbin/nginx\"",
            "binary = \"/usr/sbin/absent\"",
        )
    });
    std::fs::write(
        dir.join("broken.toml"),
        "name = \"broken\"\nkind = \"tls\"\nstart = 3\n",
    )
    .unwrap();
    let (out, o) = handshake(&dir, "bad.json", &["absent", "rustls"]);
    let err = common::stderr(&o);
    // The broken file: its name, line and column, and the rest goes on.
    let line = err
        .lines()
        .find(|l| l.contains("broken.toml"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("broken.toml:3:9") && line.contains("left out"),
        "{line}"
    );
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let notes = v["handshakes"]["notes"].to_string();
    assert!(
        notes.contains("/usr/sbin/absent is not in the lab root"),
        "{notes}"
    );
    let rustls = v["handshakes"]["scenarios"].as_array().unwrap();
    assert!(rustls.iter().all(|s| s["stack"] == "rustls") && !rustls.is_empty());
}

#[test]
fn a_server_that_cannot_start_says_why_in_one_line() {
    if !root_made() {
        return;
    }
    // nginx refuses an unknown directive and exits: its own last words are the reason.
    let dir = servers("dies", "nginx-broken", |t| t);
    let conf = dir.join("nginx.conf.in");
    let text = std::fs::read_to_string(&conf).unwrap();
    std::fs::write(
        &conf,
        text.replace("access_log off;", "no_such_directive on;"),
    )
    .unwrap();
    let (_, o) = handshake(&dir, "dies.json", &["nginx-broken"]);
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &common::stderr(&o);
    assert!(
        said.contains("nginx-broken exited before it was ready")
            && said.contains("unknown directive \"no_such_directive\""),
        "{said}"
    );
    assert!(running("lab-nginx-broken-").is_empty());
}

/// OpenSSH's sshd from the lab root, driven by russh's client with mlkem768x25519-sha256 and
/// curve25519-sha256: its rows name its version from its own identification line, the method
/// negotiated and its host key, and `check` holds them.
#[test]
fn sshd_is_driven_with_both_key_exchanges_and_names_itself() {
    if !root_made() {
        return;
    }
    let _one = SSHD.lock().unwrap_or_else(|e| e.into_inner());
    // The SSH suites and their flows alone: a short run of them, then the handshakes.
    let suites = common::tmp("lab", "ssh-suites");
    std::fs::create_dir_all(&suites).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in ["ssh.toml", "flights.toml"] {
        std::fs::copy(root.join("suites").join(f), suites.join(f)).unwrap();
    }
    let servers = root.join("servers");
    let (out, o) = handshake_of(&servers, suites.to_str().unwrap(), "sshd.json", &["sshd"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let sc = v["handshakes"]["scenarios"].as_array().unwrap();
    let methods: Vec<&str> = sc.iter().map(|s| s["suite"].as_str().unwrap()).collect();
    for m in ["curve25519-sha256", "mlkem768x25519-sha256"] {
        assert!(methods.contains(&m), "{methods:?}");
    }
    for s in sc {
        assert_eq!(s["stack"], "sshd");
        let ev = &s["evidence"];
        assert_eq!(ev["group"], s["suite"], "{ev}");
        assert!(
            ev["version"]
                .as_str()
                .unwrap()
                .starts_with("SSH-2.0-OpenSSH_10"),
            "{ev}"
        );
        assert!(
            ev["server_software"]
                .as_str()
                .unwrap()
                .starts_with("sshd 10."),
            "{ev}"
        );
        // sshd's work is its processes': each connection's sshd-session is counted.
        assert!(s["server_cpu_ns"].as_f64().unwrap() > 0.0);
        // Its CPU read after every round: one figure a sample, packed.
        let per_sample = s["server_cpu_samples_ns"].as_str().unwrap_or_default();
        assert!(per_sample.starts_with("d1:"), "{s}");
    }
    assert_checks(&out);
    assert!(
        running("sshd_config").is_empty(),
        "{:?}",
        running("sshd_config")
    );
}

/// nginx, HAProxy and sshd through the emulated router (the quick grid: the zero point, then
/// 5.6 ms without and with loss), each in the server namespace on its own address: every server
/// has cells of both groups at 5.6 ms, the zero point's first connection names its software,
/// nginx and HAProxy resume as their own logs count, and `check` holds that evidence to the
/// scenario.
#[test]
fn the_servers_go_through_the_emulated_network_and_name_themselves() {
    if !root_made() || !common::network_available() {
        return;
    }
    let _one = SSHD.lock().unwrap_or_else(|e| e.into_inner());
    let out = common::tmp("lab", "network.json");
    common::measure_mini(&out, "5");
    let file = out.to_str().unwrap();
    let o = common::pqprof(&[
        "network",
        "--results",
        file,
        "--grid",
        "quick",
        "--per-point",
        "6",
        "--parallel",
        "2",
        "--suites",
        "tests/data/mini",
        "--stack",
        "nginx",
        "--stack",
        "haproxy",
        "--stack",
        "sshd",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let points = v["network"]["points"].as_array().unwrap();
    let (zero, at_5_6) = (&points[0], &points[1]);
    for (server, groups, software) in [
        ("nginx", ["X25519", "X25519MLKEM768"], "nginx 1."),
        ("haproxy", ["X25519", "X25519MLKEM768"], "haproxy 3."),
        (
            "sshd",
            ["curve25519-sha256", "mlkem768x25519-sha256"],
            "sshd 10.",
        ),
    ] {
        for g in groups {
            let of = |p: &serde_json::Value| -> Vec<serde_json::Value> {
                p["cells"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|c| c["stack"] == server && c["group"] == g)
                    .cloned()
                    .collect()
            };
            let here = of(at_5_6);
            assert!(!here.is_empty(), "{server} {g}: no cell at 5.6 ms");
            assert!(here
                .iter()
                .all(|c| c["ready_ns"].is_string() || c["ready_ns"].is_array()));
            for c in of(zero) {
                let seen = &c["evidence"]["seen"];
                assert_eq!(
                    seen["group"].as_str().map(str::to_lowercase),
                    Some(g.to_lowercase())
                );
                let named = seen["server_software"].as_str().unwrap_or_default();
                assert!(named.starts_with(software), "{server}: {named}");
            }
        }
    }
    // nginx and HAProxy log each connection's resumption (their files' resumed_log): their
    // resumed cells are there, every completed handshake resumed as the server itself counted.
    for server in ["nginx", "haproxy"] {
        for p in [zero, at_5_6] {
            let resumed: Vec<&serde_json::Value> = p["resumed"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["stack"] == server)
                .collect();
            assert!(!resumed.is_empty(), "{server}: no resumed cell");
            for c in resumed {
                let done = common::ints(&c["ready_ns"]).len() as u64;
                assert!(done > 0 && c["resumptions"].as_u64() >= Some(done), "{c}");
            }
        }
    }
    assert_checks(&out);
    let left = running("--bind 10.77.2.1");
    assert!(left.is_empty(), "{left:?}");
}
