//! `pqprof memory`: the section lands beside the phases, `check` holds it, a changed figure or a
//! sign call recorded for a key exchange fails `check`, and a second measurement gives the same
//! stack figures. Where the stack probe is not implemented (not x86-64) the step is skipped with
//! a line and leaves the file as it was.
// The helpers serve the x86-64 test only.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

mod common;

use common::pqprof;
use serde_json::Value;

fn memory(file: &str, force: bool) -> Value {
    let mut args = vec![
        "memory",
        "--results",
        file,
        "--algorithm",
        "ML-KEM-768",
        "--algorithm",
        "X25519",
    ];
    if force {
        args.push("--force");
    }
    let o = pqprof(&args);
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        common::stderr(&o)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["memory"].clone()
}

fn check_fails(group: &str, v: &Value, needle: &str) {
    let bad = common::tmp(group, "tampered.json");
    std::fs::write(&bad, serde_json::to_string(v).unwrap()).unwrap();
    let check = pqprof(&["check", bad.to_str().unwrap()]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        common::stderr(&check)
    );
    assert!(!check.status.success(), "check passed a tampered file");
    assert!(said.contains(needle), "{said}");
}

/// (backend, algorithm, operation) -> stack bytes, for comparing two measurements.
fn stacks(m: &Value) -> Vec<(String, u64)> {
    m["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                format!("{} {} {}", e["backend"], e["algorithm"], e["operation"]),
                e["peak_stack_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_memory_section_lands_check_holds_it_and_the_stack_repeats() {
    let out = common::tmp("memory", "mem.json");
    common::measure_mini(&out, "5");
    let file = out.to_str().unwrap();
    let m = memory(file, false);

    // Every timed phase of the two algorithms has an entry: tests/data/mini times them on
    // liboqs/rustcrypto/openssl/awslc/libcrux where each has them.
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let entries = m["entries"].as_array().unwrap();
    for p in v["phases"].as_array().unwrap() {
        let listed = p["algorithm"] == "ML-KEM-768" || p["algorithm"] == "X25519";
        if p.get("form").is_some() || !listed {
            continue; // the primitive form, or an algorithm not asked for
        }
        assert!(
            entries.iter().any(|e| e["backend"] == p["backend"]
                && e["algorithm"] == p["algorithm"]
                && e["operation"] == p["operation"]),
            "no memory entry for {p:?}"
        );
    }
    for e in entries {
        let calls = e["calls"].as_array().unwrap();
        assert_eq!(calls.len(), 3);
        assert!(e["peak_stack_bytes"].as_u64().unwrap() > 0, "{e}");
        // An ML-KEM-768 key pair's 1,184 + 2,400 bytes are held by the keygen call's output.
        if e["algorithm"] == "ML-KEM-768" && e["operation"] == "kem.keygen" {
            assert!(
                e["peak_heap_bytes"].as_u64().unwrap() >= 1_184 + 2_400,
                "{e}"
            );
        }
    }

    let check = pqprof(&["check", file]);
    assert!(check.status.success(), "{}", common::stderr(&check));

    // One call's stack changed: the calls disagree.
    let mut t = v.clone();
    t["memory"]["entries"][0]["calls"][1]["stack_bytes"] = serde_json::json!(1);
    check_fails("memory", &t, "stack figures differ");
    // The heap maximum no longer the largest call's.
    let mut t = v.clone();
    let heap = t["memory"]["entries"][0]["peak_heap_bytes"]
        .as_u64()
        .unwrap();
    t["memory"]["entries"][0]["peak_heap_bytes"] = serde_json::json!(heap + 8);
    check_fails("memory", &t, "peak_heap_bytes");
    // A signing call recorded for a key exchange.
    let mut t = v.clone();
    t["memory"]["entries"][0]["operation"] = serde_json::json!("sig.sign");
    check_fails("memory", &t, "operation");
    // A phase's entry removed.
    let mut t = v.clone();
    t["memory"]["entries"].as_array_mut().unwrap().remove(0);
    check_fails("memory", &t, "no memory entry");

    // Not replaced without --force; with it, the same stack figures again.
    let again = pqprof(&["memory", "--results", file]);
    assert!(!again.status.success());
    assert!(
        common::stderr(&again).contains("memory"),
        "{}",
        common::stderr(&again)
    );
    let second = memory(file, true);
    assert_eq!(stacks(&m), stacks(&second));
}

/// `make run` goes on to the other steps on an aarch64 runner: the step succeeds, says why it did
/// nothing, and the results file is byte for byte what it was.
#[cfg(not(target_arch = "x86_64"))]
#[test]
fn without_the_stack_probe_the_step_is_skipped_and_the_file_left_as_it_was() {
    let out = common::tmp("memory", "mem.json");
    common::measure_mini(&out, "5");
    let before = std::fs::read(&out).unwrap();
    let o = pqprof(&["memory", "--results", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("memory: skipped"),
        "{}",
        common::stderr(&o)
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
}
