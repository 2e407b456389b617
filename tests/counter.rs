//! Instruction counts under valgrind: in the JSON for every phase with each call's count, identical
//! from one run to the next where the randomness is seeded, checked by `check`, and used by `compare`. Needs valgrind
//! (.ci/deps installs it); says so and passes where it is missing.

mod common;

use common::{pqprof, stderr};

fn counted(name: &str) -> serde_json::Value {
    let out = common::tmp("counter", name);
    let o = pqprof(&[
        "run",
        "--suites",
        "tests/data/counter",
        "--backend",
        "liboqs",
        "--backend",
        "rustcrypto",
        "--iterations",
        "20",
        "--rounds",
        "1",
        "--quiet",
        "--counter",
        "instructions",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = pqprof(&["check", out.to_str().unwrap()]);
    assert!(c.status.success(), "{}", stderr(&c));
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

#[test]
fn instruction_counts_repeat_and_compare_uses_them() {
    // Under qemu-user a program that is not there can still "start" (its exec fails in the child):
    // valgrind is there when its --version succeeds.
    if !std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skipped: valgrind is not installed");
        return;
    }
    let (a, b) = (counted("a.json"), counted("b.json"));
    let ir = |v: &serde_json::Value, backend: &str, op: &str, form: Option<&str>| -> f64 {
        let p = v["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["backend"] == backend && p["operation"] == op && p["form"].as_str() == form)
            .unwrap();
        let i = &p["instructions"];
        // What the child saw of the CPU's vector features, in this architecture's words.
        let vector = if cfg!(target_arch = "aarch64") {
            "NEON"
        } else {
            "AVX-512"
        };
        assert!(i["cpu"].as_str().unwrap().contains(vector), "{i}");
        i["per_call"][0].as_f64().unwrap()
    };
    // liboqs and RustCrypto draw from seeded generators under valgrind: the same count every run.
    for (backend, op, form) in [
        ("liboqs", "kem.keygen", None),
        ("liboqs", "kem.encaps", None),
        ("liboqs", "kem.decaps", None),
        ("rustcrypto", "kem.encaps", Some("primitive")),
    ] {
        let (x, y) = (ir(&a, backend, op, form), ir(&b, backend, op, form));
        assert!(x > 10_000.0, "{backend} {op}: {x} instructions");
        assert!((x - y).abs() / x < 0.001, "{backend} {op}: {x} then {y}");
    }
    // Seeded inputs too: liboqs's ML-DSA signing repeats call for call, though its rejection loop
    // runs a different number of times from one call to the next.
    let calls = |v: &serde_json::Value| -> Vec<u64> {
        let p = v["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["backend"] == "liboqs" && p["operation"] == "sig.sign")
            .unwrap();
        let i = &p["instructions"];
        let c: Vec<u64> = i["ir_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(c.len() as u64, i["calls"].as_u64().unwrap());
        assert_eq!(
            c.iter().sum::<u64>(),
            i["totals"][0].as_u64().unwrap(),
            "per-call counts add up to the total"
        );
        c
    };
    let (ca, cb) = (calls(&a), calls(&b));
    assert_eq!(ca, cb);
    assert!(
        ca.iter().any(|&x| x != ca[0]),
        "the rejection loop varies between calls: {ca:?}"
    );
    // A suite's instructions are the sum of count x its phases'.
    let s = a["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stack"] == "default" && s["name"] == "MLKEM768")
        .unwrap();
    let sum = ir(&a, "liboqs", "kem.keygen", None)
        + ir(&a, "liboqs", "kem.encaps", None)
        + ir(&a, "liboqs", "kem.decaps", None);
    assert!((s["instructions"].as_f64().unwrap() - sum).abs() / sum < 1e-9);
    // compare judges on instructions where both runs have them.
    let (pa, pb) = (
        common::tmp("counter", "a.json"),
        common::tmp("counter", "b.json"),
    );
    let o = pqprof(&[
        "compare",
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = c["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["statistic"] == "instructions"), "{c}");
    assert!(rows
        .iter()
        .filter(|r| r["name"].as_str().unwrap().starts_with("liboqs"))
        .all(|r| r["verdict"] == "no_change"));
}
