//! Ctrl-C in the middle of a measurement: the command stops with 128 + SIGINT, writes nothing
//! half-measured, leaves every earlier results file as it was and no process behind.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn start(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_pqprof"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on a child we started and have not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Waits for the child, failing the test if it takes more than `limit`.
fn finish(mut child: Child, limit: Duration) -> (i32, String) {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("did not stop within {limit:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(marker))
        .collect()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn sigint_during_run_writes_nothing_and_keeps_the_old_results() {
    let dir = common::tmp("int-run", "x").parent().unwrap().to_path_buf();
    let old = dir.join("old.json");
    std::fs::copy(common::measured("int-run"), &old).unwrap();
    let before = std::fs::read(&old).unwrap();
    let out = dir.join("new.json");
    // Long enough to be in the middle of the timed rounds after 3 s.
    let child = start(&[
        "run",
        "--suites",
        "suites/tls13.toml",
        "--iterations",
        "200000",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_secs(3));
    signal(&child, libc::SIGINT);
    let (code, err) = finish(child, Duration::from_secs(10));
    assert_eq!(code, 130, "{err}");
    assert!(
        err.contains("interrupted") && !err.contains("panicked"),
        "{err}"
    );
    assert!(!out.exists());
    assert_eq!(std::fs::read(&old).unwrap(), before);
    assert_eq!(
        files_in(&dir),
        vec!["mini.json", "old.json"],
        "no temporary file left"
    );
}

#[test]
fn a_second_sigint_exits_at_once() {
    let out = common::tmp("int-twice", "never.json");
    let child = start(&[
        "run",
        "--suites",
        "suites/tls13.toml",
        "--iterations",
        "200000",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_secs(2));
    signal(&child, libc::SIGINT);
    signal(&child, libc::SIGINT);
    let (code, _) = finish(child, Duration::from_secs(5));
    assert_eq!(code, 130);
    assert!(!out.exists());
}

#[test]
fn sigint_during_handshakes_keeps_the_results_file_and_leaves_no_server() {
    let file = common::tmp("int-hs", "hs.json");
    common::measure_mini(&file, "5");
    let before = std::fs::read(&file).unwrap();
    let child = start(&[
        "handshake",
        "--results",
        file.to_str().unwrap(),
        "--suites",
        "tests/data/mini",
        "--samples",
        "200",
        "--per-sample",
        "100",
    ]);
    let marker = format!("pqprof-hs-{}", child.id());
    // Wait until the servers are up and connections are being measured.
    let t0 = Instant::now();
    while processes_with(&marker).is_empty() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !processes_with(&marker).is_empty(),
        "no handshake server started"
    );
    std::thread::sleep(Duration::from_secs(2));
    signal(&child, libc::SIGINT);
    let (code, err) = finish(child, Duration::from_secs(15));
    assert_eq!(code, 130, "{err}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the results file changed"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        processes_with(&marker),
        Vec::<String>::new(),
        "a server outlived pqprof"
    );
}

#[test]
fn an_unwritable_results_folder_fails_before_measuring() {
    let t0 = Instant::now();
    let o = common::pqprof(&["run", "--out", "/proc/pqprof-nowhere/r.json", "--quiet"]);
    assert!(!o.status.success());
    let err = common::stderr(&o);
    assert!(
        err.contains("/proc/pqprof-nowhere") && err.lines().count() == 1,
        "{err}"
    );
    assert!(t0.elapsed() < Duration::from_secs(5), "it measured first");
}
