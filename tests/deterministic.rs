//! run -> pool -> compose -> check -> render, exact (#36): the deterministic backend
//! (`src/backend/fixed.rs`, behind `PQPROF_TEST_BACKEND=fixed`) takes known times on a virtual clock,
//! and process i of a run takes them 1.00, 1.02 or 0.98 times as long (i mod 3). Every figure below
//! is worked out by hand from those times and tests/data/mini's counts.

use common::{stderr, tmp};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

mod common;

/// The binary with the switch on.
fn fixed(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pqprof"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PQPROF_TEST_BACKEND", "fixed")
        .env_remove("PQPROF_PROCESS")
        .output()
        .unwrap()
}

fn json(p: &Path) -> Value {
    serde_json::from_str(&pqprof_core::results::read_text(p).unwrap()).unwrap()
}

/// A phase by operation and algorithm.
fn phase<'a>(v: &'a Value, operation: &str, algorithm: &str) -> &'a Value {
    v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["operation"] == operation && p["algorithm"] == algorithm)
        .unwrap_or_else(|| panic!("no phase {operation} {algorithm}"))
}

fn suite<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no suite {name}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// The base times, nanoseconds (src/backend/fixed.rs `CALL_NS`).
const BASE: [(&str, &str, f64); 7] = [
    ("dh.keygen", "X25519", 10_000.0),
    ("dh.derive", "X25519", 20_000.0),
    ("dh.keygen", "P-256", 10_000.0),
    ("dh.derive", "P-256", 20_000.0),
    ("kem.keygen", "ML-KEM-768", 30_000.0),
    ("kem.encaps", "ML-KEM-768", 40_000.0),
    ("kem.decaps", "ML-KEM-768", 50_000.0),
];

#[test]
fn a_fixed_design_run_is_exact_and_checks_and_renders() {
    let out = tmp("deterministic", "fixed.json");
    let o = fixed(&[
        "run",
        "--suites",
        "tests/data/mini",
        "--iterations",
        "30",
        "--rounds",
        "2",
        "--samples",
        "3",
        // No run budget: the time kept for pooling is timed on the wall clock.
        "--budget-s",
        "0",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&out);
    assert_eq!(v["backends"][0]["name"], "fixed");
    assert_eq!(v["process_samples"]["count"], 3);
    for (op, alg, base) in BASE {
        let p = phase(&v, op, alg);
        // Ten calls in each process: ten at 1.00 x, ten at 1.02 x, ten at 0.98 x the base time.
        assert_eq!(
            p["processes"],
            serde_json::json!([10, 10, 10]),
            "{op} {alg}"
        );
        let samples: Vec<f64> = common::ints(&p["samples_ns"])
            .into_iter()
            .map(|x| x as f64)
            .collect();
        let mut want = vec![base; 10];
        want.extend(vec![base * 1.02; 10]);
        want.extend(vec![base * 0.98; 10]);
        assert_eq!(samples, want, "{op} {alg}");
        // The 15th and 16th of the 30 sorted are both the base; the mean is the base too.
        assert_eq!(f(&p["stats"]["median_ns"]), base);
        assert!((f(&p["stats"]["mean_ns"]) - base).abs() < 1e-6);
        assert_eq!(f(&p["stats"]["min_ns"]), base * 0.98);
        assert_eq!(f(&p["stats"]["max_ns"]), base * 1.02);
        // All of the processes' spread is the host's common mode: without it the interval is the
        // base alone.
        let own = &p["median_ci95_own_ns"];
        assert!((f(&own[0]) - base).abs() < 1e-6 && (f(&own[1]) - base).abs() < 1e-6);
        // With it, the interval holds all three processes' levels.
        let ci = &p["median_ci95_ns"];
        assert!(f(&ci[0]) <= base * 0.98 + 1e-6 && f(&ci[1]) >= base * 1.02 - 1e-6);
    }
    // Factors 1.00, 1.02, 0.98: a standard deviation of 0.02 around a mean of 1, 2%.
    let ps = &v["process_samples"];
    let factors: Vec<f64> = ps["host_factors"]
        .as_array()
        .unwrap()
        .iter()
        .map(f)
        .collect();
    for (got, want) in factors.iter().zip([1.0, 1.02, 0.98]) {
        assert!((got - want).abs() < 1e-12, "{factors:?}");
    }
    assert!((f(&ps["host_drift_pct"]) - 2.0).abs() < 1e-9);
    // Composed means, count x mean: X25519 2 x 10 + 2 x 20 = 60 us; the hybrid adds the KEM's
    // 30 + 40 + 50 = 180 us, +200%; the raw round trips 10 + 2 x 20 = 50 us and 40 + 50 = 90 us.
    for (name, want) in [
        ("X25519", 60_000.0),
        ("X25519MLKEM768", 180_000.0),
        ("P-256 ECDH round trip", 50_000.0),
        ("ML-KEM-768 round trip", 90_000.0),
    ] {
        let s = suite(&v, name);
        assert_eq!(s["stack"], "fixed");
        assert!((f(&s["composed"]["mean_ns"]) - want).abs() < 1e-6, "{name}");
        assert!(
            (f(&s["composed"]["median_ns"]) - want).abs() < 1e-6,
            "{name}"
        );
    }
    assert!((f(&suite(&v, "X25519MLKEM768")["delta_vs_baseline_pct"]) - 200.0).abs() < 1e-9);
    // Its interval: each drawn handshake runs in one process, the same for both suites, so the
    // host's factors cancel and the +200% is exact in every world (drawn apart, the processes
    // gave 198.0-202.0%). The composed median itself keeps the host's part: its interval spans
    // the processes' levels, 0.98 to 1.02 x 60 us.
    let hybrid = suite(&v, "X25519MLKEM768");
    assert_eq!(hybrid["composed"]["ci_by_process"], true);
    let d = &hybrid["delta_ci95_pct"];
    assert!(
        (f(&d[0]) - 200.0).abs() < 1e-9 && (f(&d[1]) - 200.0).abs() < 1e-9,
        "{d}"
    );
    let ci = &suite(&v, "X25519")["composed"]["median_ci95_ns"];
    assert!(
        f(&ci[0]) >= 58_800.0 - 1e-6 && f(&ci[1]) <= 61_200.0 + 1e-6,
        "{ci}"
    );
    assert!(f(&ci[0]) < 60_000.0 && f(&ci[1]) > 60_000.0, "{ci}");
    let o = fixed(&["check", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The site shows the same figures.
    let site = tmp("deterministic", "site");
    let o = fixed(&[
        "render",
        out.to_str().unwrap(),
        "--out",
        site.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    for figure in ["60.0 µs", "180.0 µs", "+200"] {
        assert!(index.contains(figure), "{figure} not on the front page");
    }
}

/// A run with no forced count and no run budget (`--budget-ms` is each phase's time in a process):
/// processes are added while a phase is wider than `precision` percent or not yet confirmed, up to
/// the most a run takes (12).
fn precision_run(name: &str, precision: &str) -> Value {
    let out = tmp("deterministic", name);
    let o = fixed(&[
        "run",
        "--suites",
        "tests/data/mini",
        "--samples",
        "3",
        "--precision",
        precision,
        "--budget-ms",
        "20",
        "--rounds",
        "2",
        "--budget-s",
        "0",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fixed(&["check", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    json(&out)
}

#[test]
fn precision_batches_stop_where_the_rule_says_and_are_the_same_in_two_runs() {
    // A 3% target: after the first three processes the medians' t-interval is t(2) x 0.02 /
    // sqrt 3 = 4.97% (too wide); the fourth, at 1.00, confirms them (no phase stops before K + 1)
    // and leaves t(3) x 0.01633 / 2 = 2.60%, within it. Four processes, every phase.
    // Written through gzip (a run's default form), checked and read back the same way.
    let v = precision_run("precision-3.json.gz", "3");
    let gz = std::fs::read(tmp("deterministic", "precision-3.json.gz")).unwrap();
    assert_eq!(gz[..2], [0x1f, 0x8b]);
    assert_eq!(v["process_samples"]["count"], 4);
    for (op, alg, base) in BASE {
        let p = phase(&v, op, alg);
        assert_eq!(p["processes"].as_array().unwrap().len(), 4, "{op} {alg}");
        let hw = f(&p["precision"]["half_width_pct"]);
        assert!(
            (hw - 3.182_446 * (0.0008f64 / 3.0).sqrt() / 2.0 * 100.0).abs() < 1e-3,
            "{hw}"
        );
        assert_eq!(f(&p["stats"]["median_ns"]), base);
    }
    // A 1% target: no number of processes reaches it (below), so both runs take the most, 12.
    let (a, b) = (
        precision_run("precision-a.json", "1"),
        precision_run("precision-b.json", "1"),
    );
    for (op, alg, base) in BASE {
        let (p, q) = (phase(&a, op, alg), phase(&b, op, alg));
        assert_eq!(p["samples_ns"], q["samples_ns"], "{op} {alg}");
        assert_eq!(p["processes"], q["processes"]);
        assert_eq!(p["median_ci95_ns"], q["median_ci95_ns"]);
        // The processes' levels repeat 1.00, 1.02, 0.98, so after 12 their medians' t-interval
        // is still t(11) x 0.0171 / sqrt 12 = 1.08% of the median, over the target, and the
        // resampled processes' medians reach both outer levels.
        let k = p["processes"].as_array().unwrap().len();
        assert_eq!(k, 12, "{op} {alg}");
        assert_eq!(f(&p["stats"]["median_ns"]), base);
        let ci = &p["median_ci95_ns"];
        assert_eq!((f(&ci[0]), f(&ci[1])), (base * 0.98, base * 1.02));
        assert!((f(&p["precision"]["half_width_pct"]) - 2.0).abs() < 1e-9);
        // And without the host's common mode, nothing is left.
        let own = &p["median_ci95_own_ns"];
        assert_eq!((f(&own[0]), f(&own[1])), (base, base));
    }
    assert_eq!(a["process_samples"]["count"], 12);
    let drift = f(&a["process_samples"]["host_drift_pct"]);
    // Four of each factor: a standard deviation of sqrt(8 x 0.02^2 / 11) = 1.7056%.
    assert!(
        (drift - (8.0f64 * 0.0004 / 11.0).sqrt() * 100.0).abs() < 1e-9,
        "{drift}"
    );
}
