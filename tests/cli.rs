//! The binary end to end: a short real measurement, `check` on it, and the ways bad input is refused.

mod common;

use common::{pqprof, stderr};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    common::tmp("cli", name)
}

/// One short measurement shared by the tests that read results.
fn measured() -> &'static Path {
    common::measured("cli")
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_fresh_run_passes_check_and_composes_every_stack() {
    let out = measured();
    let o = pqprof(&["check", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(out);
    assert_eq!(v["schema_version"], 4);
    let suites = v["suites"].as_array().unwrap();
    // X25519, the hybrid and the two raw round trips, each in the default, openssl, rustls and
    // rustcrypto stacks (russh composes SSH only).
    assert_eq!(suites.len(), 16);
    for s in suites {
        let sum: f64 = s["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|sp| {
                let p = v["phases"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| {
                        p["backend"] == sp["backend"]
                            && p["operation"] == sp["operation"]
                            && p["algorithm"] == sp["algorithm"]
                    })
                    .unwrap();
                sp["count"].as_f64().unwrap() * p["stats"]["mean_ns"].as_f64().unwrap()
            })
            .sum();
        let composed = s["composed"]["mean_ns"].as_f64().unwrap();
        assert!(
            (composed - sum).abs() / sum < 2e-5,
            "{}: {composed} vs {sum}",
            s["name"]
        );
    }
    let p = &v["phases"][0];
    assert_eq!(common::ints(&p["samples_ns"]).len(), 20);
    assert_eq!(p["stats"]["iterations"], 20);
    for field in [
        "date_utc",
        "tool_commit",
        "liboqs_version",
        "openssl_version",
        "rustc_version",
        "pinned_core",
        "timer",
    ] {
        assert!(!v["run"][field].is_null(), "run.{field}");
    }
    assert!(v["run"]["openssl_version"]
        .as_str()
        .unwrap()
        .contains("3.5"));
    assert_eq!(
        v["run"]["wall_seconds"].as_f64().map(|s| s > 0.0),
        Some(true)
    );
}

fn tampered(name: &str, edit: impl Fn(&mut serde_json::Value)) -> (bool, String) {
    let mut v = json(measured());
    edit(&mut v);
    let path = tmp(name);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let o = pqprof(&["check", path.to_str().unwrap()]);
    (o.status.success(), stderr(&o))
}

#[test]
fn an_edited_phase_mean_fails_check() {
    let (ok, err) = tampered("phase.json", |v| {
        let m = v["phases"][0]["stats"]["mean_ns"].as_f64().unwrap();
        v["phases"][0]["stats"]["mean_ns"] = (m * 1.001).into();
    });
    assert!(!ok);
    assert!(err.contains("mean_ns: stored"), "{err}");
}

#[test]
fn an_edited_composed_mean_fails_check() {
    let (ok, err) = tampered("composed.json", |v| {
        let m = v["suites"][1]["composed"]["mean_ns"].as_f64().unwrap();
        v["suites"][1]["composed"]["mean_ns"] = (m * 1.0001).into();
    });
    assert!(!ok);
    assert!(err.contains("identity"), "{err}");
}

#[test]
fn an_edited_sample_fails_check() {
    let (ok, err) = tampered("sample.json", |v| {
        let mut s = common::ints(&v["phases"][2]["samples_ns"]);
        s[0] = 999_999_999;
        v["phases"][2]["samples_ns"] = common::packed(&s);
    });
    assert!(!ok && err.contains("phase "), "{err}");
}

/// The hybrid key exchange's flow on the rustls composition, as `run` stored it.
fn hybrid_flow(v: &mut serde_json::Value) -> &mut serde_json::Value {
    v["suites"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["name"] == "X25519MLKEM768" && s["stack"] == "rustls")
        .unwrap()
        .get_mut("flow")
        .unwrap()
}

#[test]
fn a_flow_places_every_call_on_its_side_and_a_tampered_one_fails_check() {
    let mut v = json(measured());
    let f = hybrid_flow(&mut v).clone();
    // The client makes the KEM key and decapsulates, the server encapsulates: the client's CPU and
    // the server's add up to the latency, as no segments of rustls overlap.
    let names: Vec<&str> = f["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "ClientHello", "{f}");
    let (c, s, l) = (
        f["client_ns"].as_f64().unwrap(),
        f["server_ns"].as_f64().unwrap(),
        f["latency_ns"].as_f64().unwrap(),
    );
    assert!(c > 0.0 && s > 0.0 && ((c + s) - l).abs() <= 1e-6 * l, "{f}");
    // A latency that is not its segments', a call counted twice, an encapsulation on the client.
    let (ok, err) = tampered("flow-latency.json", |v| {
        let f = hybrid_flow(v);
        f["latency_ns"] = (f["latency_ns"].as_f64().unwrap() * 0.9).into();
    });
    assert!(!ok && err.contains("flow: latency_ns"), "{err}");
    let (ok, err) = tampered("flow-count.json", |v| {
        let f = hybrid_flow(v);
        f["segments"][0]["parts"][0]["count"] = 2.0.into();
    });
    assert!(!ok && err.contains("calls in the segments"), "{err}");
    let (ok, err) = tampered("flow-side.json", |v| {
        let f = hybrid_flow(v);
        let encaps = f["segments"][1]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["operation"] == "kem.encaps")
            .unwrap()
            .clone();
        f["segments"][3]["parts"]
            .as_array_mut()
            .unwrap()
            .push(encaps);
        f["segments"][1]["parts"]
            .as_array_mut()
            .unwrap()
            .retain(|p| p["operation"] != "kem.encaps");
    });
    assert!(
        !ok && err.contains("the protocol has the server make kem.encaps"),
        "{err}"
    );
}

#[test]
fn an_impossible_count_fails_check_at_once() {
    // Found while fuzzing the results reader: a huge count would make the resampling run for hours.
    // The count is refused before anything is resampled: it is the only problem reported, not the
    // composed figures it would have made wrong.
    let (ok, err) = tampered("count.json", |v| {
        v["suites"][0]["phases"][0]["count"] = 4_000_000_000u64.into()
    });
    assert!(
        !ok && err.contains("count 4000000000 is out of range 0..=1024"),
        "{err}"
    );
    assert!(!err.contains("composed"), "{err}");
}

#[test]
fn another_schema_version_is_refused_clearly() {
    let (ok, err) = tampered("v99.json", |v| v["schema_version"] = 99.into());
    assert!(!ok);
    assert!(
        err.contains("schema_version 99, but this pqprof reads schema_version 1, 2, 3 or 4"),
        "{err}"
    );
}

#[test]
fn malformed_suite_names_file_line_column_and_writes_nothing() {
    let suite = tmp("bad.toml");
    std::fs::write(
        &suite,
        "protocol = \"tls13\"\nkind = \"kex\"\n\n[[suite]\nname = \"x\"\n",
    )
    .unwrap();
    let out = tmp("never.json");
    let o = pqprof(&[
        "run",
        "--suites",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains(&format!("{}:4:", suite.display())), "{err}");
    assert!(!out.exists());
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn unknown_algorithm_lists_the_valid_names() {
    let suite = tmp("unknown.toml");
    std::fs::write(&suite, "protocol = \"tls13\"\nkind = \"kex\"\n[[suite]]\nname = \"x\"\nphases = [{ operation = \"kem.keygen\", algorithm = \"Kyber768\", count = 1 }]\n").unwrap();
    let o = pqprof(&["list", "--suites", suite.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(":5:")
            && err.contains("unknown algorithm \"Kyber768\"; valid algorithms: ML-KEM-768"),
        "{err}"
    );
}

#[test]
fn garbage_results_file_is_an_error_not_a_panic() {
    let path = tmp("garbage.json");
    std::fs::write(&path, "{\"schema_version\": 1, \"run\": 3}").unwrap();
    let o = pqprof(&["check", path.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("does not match schema 1"),
        "{}",
        stderr(&o)
    );
    let o = pqprof(&["check", "no/such/file.json"]);
    assert!(!o.status.success() && stderr(&o).contains("no/such/file.json: cannot read"));
}

#[test]
fn list_shows_suites_backends_and_support() {
    let o = pqprof(&["list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for want in [
        "X25519MLKEM768",
        "2336 B on the wire",
        "liboqs=SPHINCS+-SHAKE-128s-simple",
        "openssl=ML-KEM-768",
        "default",
    ] {
        assert!(out.contains(want), "missing {want}");
    }
}

#[test]
fn compare_a_run_with_itself_finds_no_change() {
    let out = measured().to_str().unwrap();
    let o = pqprof(&["compare", out, out, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 35 + 16);
    for r in rows {
        assert_eq!(r["ratio"], 1.0);
        assert_eq!(r["verdict"], "no_change");
    }
    assert!(v["caveats"].as_array().unwrap().is_empty());
    let md = pqprof(&["compare", out, out, "--format", "md"]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("| suite | X25519MLKEM768 [default] |"));
}

#[test]
fn compare_labels_other_hosts_and_sees_a_real_change() {
    // B: every sample of one phase three times as slow, on another host (a change no interval of
    // a 20-iteration run on a busy host can hide: 30% was not always called, when three processes
    // of 7 samples disagreed by several percent).
    let mut v = json(measured());
    v["run"]["host"]["hostname"] = "other".into();
    v["run"]["host"]["cpu_model"] = "Other CPU".into();
    let p = &mut v["phases"][0];
    let slower: Vec<u64> = common::ints(&p["samples_ns"])
        .into_iter()
        .map(|x| x * 3)
        .collect();
    p["samples_ns"] = common::packed(&slower);
    for f in [
        "mean_ns",
        "median_ns",
        "p95_ns",
        "p99_ns",
        "stdev_ns",
        "min_ns",
        "max_ns",
    ] {
        p["stats"][f] = (p["stats"][f].as_f64().unwrap() * 3.0).into();
    }
    let b = tmp("slower.json");
    std::fs::write(&b, serde_json::to_vec(&v).unwrap()).unwrap();
    let o = pqprof(&[
        "compare",
        measured().to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["rows"][0]["verdict"], "slower", "{}", c["rows"][0]);
    assert_eq!(c["rows"][1]["verdict"], "no_change");
    assert!(c["caveats"][0]
        .as_str()
        .unwrap()
        .contains("different hosts"));
}

#[test]
fn export_writes_every_phase_and_suite() {
    let out = tmp("export.csv");
    let o = pqprof(&[
        "export",
        "--format",
        "csv",
        measured().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("kind,name,stack_or_backend,mean_ns,median_ns"));
    assert_eq!(lines.len(), 1 + 35 + 16);
    assert_eq!(lines.iter().filter(|l| l.starts_with("suite,")).count(), 16);
    let md = pqprof(&["export", "--format", "md", measured().to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("| suite | X25519 | default |"));
    // A section by name, as JSON; a section that does not exist is named in one line.
    let json = pqprof(&[
        "export",
        "--format",
        "json",
        "--section",
        "suites",
        measured().to_str().unwrap(),
    ]);
    assert!(json.status.success(), "{}", stderr(&json));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["section"], "suites");
    assert_eq!(v["rows"].as_array().unwrap().len(), 16);
    assert!(v["rows"][0]["median_ns"].is_number());
    let bad = pqprof(&["export", "--format", "csv", "--section", "nope", "x.json"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("one of: answer, handshakes"),
        "{}",
        stderr(&bad)
    );
    // A probe's file: its own section, a row per group and the hybrid's difference; a run's
    // section asked of it is refused in one line.
    let probe = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/core/tests/data/probes/lab-nginx-mldsa65-loopback.json"
    );
    let csv = pqprof(&["export", "--format", "csv", probe]);
    assert!(csv.status.success(), "{}", stderr(&csv));
    let text = String::from_utf8_lossy(&csv.stdout);
    assert!(text.starts_with("target,group,taken_alone,"), "{text}");
    assert_eq!(text.lines().count(), 1 + 4 + 1, "{text}");
    assert!(
        text.contains(",X25519MLKEM768 - X25519 (paired),"),
        "{text}"
    );
    let wrong = pqprof(&["export", "--format", "csv", "--section", "answer", probe]);
    assert!(!wrong.status.success());
    assert!(
        stderr(&wrong).contains("has no answer section"),
        "{}",
        stderr(&wrong)
    );
}

#[test]
fn process_samples_are_pooled_and_kept() {
    let out = tmp("samples.json");
    let mut args = vec![
        "run",
        "--suites",
        "tests/data/mini",
        "--iterations",
        "10",
        "--rounds",
        "2",
        "--samples",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(common::BUILT_IN);
    let o = pqprof(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&out);
    assert_eq!(v["process_samples"]["count"], 2);
    // A forced count is the total over the processes, five from each, and nothing more.
    assert_eq!(common::ints(&v["phases"][0]["samples_ns"]).len(), 10);
    assert_eq!(v["phases"][0]["processes"], serde_json::json!([5, 5]));
    assert_eq!(v["phases"][0]["precision"]["reason"], "fixed");
    assert_eq!(
        v["process_samples"]["suites"][0]["medians_ns"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(pqprof(&["check", out.to_str().unwrap()]).status.success());
}

#[test]
fn intervals_and_outliers_are_recorded_and_checked() {
    let v = json(measured());
    let p = &v["phases"][0];
    let (lo, hi) = (
        p["median_ci95_ns"][0].as_f64().unwrap(),
        p["median_ci95_ns"][1].as_f64().unwrap(),
    );
    let median = p["stats"]["median_ns"].as_f64().unwrap();
    assert!(lo <= median && median <= hi);
    assert!(p["outliers"]["high_severe"].is_u64());
    let s = &v["suites"][1];
    assert!(s["composed"]["median_ci95_ns"].is_array());
    let (ok, err) = tampered("ci.json", |v| {
        let hi = v["suites"][1]["composed"]["median_ci95_ns"][1]
            .as_f64()
            .unwrap();
        v["suites"][1]["composed"]["median_ci95_ns"][1] = (hi * 0.9).into();
    });
    assert!(!ok && err.contains("median_ci95_ns high"), "{err}");
}
