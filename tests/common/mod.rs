//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the built binary from the repository root.
pub fn pqprof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pqprof"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A path in this test binary's own temporary folder. A test binary cannot remove its folder when
/// it exits (no test runs last), so the first call of each group removes the folders that earlier
/// runs of it left, those whose process is gone: every `make test` left a dozen, 2-3 MB each.
pub fn tmp(group: &str, name: &str) -> PathBuf {
    static SWEPT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
    if !swept.iter().any(|g| g == group) {
        swept.push(group.to_string());
        sweep(group);
    }
    drop(swept);
    let dir = std::env::temp_dir().join(format!("pqprof-{group}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Removes `pqprof-{group}-{pid}` folders whose process no longer runs (a pid that runs again,
/// for another program, keeps its folder: nothing of a live process is touched).
fn sweep(group: &str) {
    let prefix = format!("pqprof-{group}-");
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(&prefix)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            // Another run sweeping at once may have removed it first.
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// pqprof's own backends (the Go peer has its own test, tests/go.rs).
pub const BUILT_IN: [&str; 10] = [
    "--backend",
    "liboqs",
    "--backend",
    "rustcrypto",
    "--backend",
    "openssl",
    "--backend",
    "awslc",
    "--backend",
    "libcrux",
];

/// A short real measurement of tests/data/mini into `out`, with pqprof's own backends.
pub fn measure_mini(out: &Path, iterations: &str) {
    measure_suites(out, "tests/data/mini", iterations);
}

/// One short measurement per test binary, shared by its tests.
pub fn measured(group: &str) -> &'static Path {
    static OUT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    OUT.get_or_init(|| {
        let out = tmp(group, "mini.json");
        measure_mini(&out, "20");
        out
    })
}

/// Every `.rs` file under `dir`, recursively.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A raw array of a results file as its integers: packed (schema 4, `results::packed`) or, in an
/// older file, a JSON list.
pub fn ints(v: &serde_json::Value) -> Vec<u64> {
    match v {
        serde_json::Value::String(s) => pqprof::results::packed::decode(s).unwrap(),
        serde_json::Value::Array(a) => a.iter().map(|x| x.as_u64().unwrap()).collect(),
        other => panic!("not a raw array: {other}"),
    }
}

/// Integers as a results file stores a raw array (packed).
pub fn packed(xs: &[u64]) -> serde_json::Value {
    serde_json::Value::String(pqprof::results::packed::encode(xs))
}

/// Whether this machine can run the network grid: root, iptables and ethtool (where it cannot,
/// the step says "skipped" and its tests check that).
#[allow(dead_code)]
pub fn network_available() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() == 0 };
    root && Command::new("iptables").arg("--version").output().is_ok()
        && Command::new("ethtool").arg("--version").output().is_ok()
}

/// The Go peer's binary: PQPROF_GO_PEER, or where `make go-peer` builds it.
#[allow(dead_code)]
pub fn go_peer() -> PathBuf {
    std::env::var_os("PQPROF_GO_PEER").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/go/pqprof-go-peer"),
        PathBuf::from,
    )
}

/// Whether the Go peer is built (`make go-peer`).
#[allow(dead_code)]
pub fn go_built() -> bool {
    go_peer().exists()
}

/// Whether the Go peer is built with quic-go (its `version` names one).
#[allow(dead_code)]
pub fn go_has_quic() -> bool {
    std::process::Command::new(go_peer())
        .arg("version")
        .output()
        .ok()
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
        .is_some_and(|v| v["quic"].as_str().is_some_and(|q| !q.is_empty()))
}

/// Whether the lab root is made (tools/lab/root.sh --path answers); where it is not, the lab's
/// tests say so and pass, unless PQPROF_REQUIRE_LAB is set, as CI sets it.
pub fn lab_root_made() -> bool {
    let made = Command::new("sh")
        .args(["tools/lab/root.sh", "--path"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        made || std::env::var_os("PQPROF_REQUIRE_LAB").is_none(),
        "PQPROF_REQUIRE_LAB is set, and the lab root is not made (tools/lab/root.sh)"
    );
    if !made {
        eprintln!("skipped: the lab root is not made (make lab)");
    }
    made
}

/// A short real measurement of `suites` into `out`, with pqprof's own backends.
pub fn measure_suites(out: &Path, suites: &str, iterations: &str) {
    let mut args = vec![
        "run",
        "--suites",
        suites,
        "--iterations",
        iterations,
        "--rounds",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(BUILT_IN);
    let o = pqprof(&args);
    assert!(o.status.success(), "run failed: {}", stderr(&o));
}
