//! The rendered site shows what the JSON says, keeps the identity, escapes what it shows, copes
//! with missing optional parts and with several hosts.

mod common;

use pqprof::render::{self, verify};
use pqprof::units as format;
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    common::tmp("site", name)
}

fn measured() -> &'static Path {
    common::measured("site")
}

fn edited(name: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(measured()).unwrap()).unwrap();
    edit(&mut v);
    let path = tmp(name);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    path
}

fn render(files: &[PathBuf], name: &str) -> PathBuf {
    let out = tmp(name);
    render::render(
        files,
        &out,
        &render::Options {
            source_url: Some("https://example.org/src/{commit}".into()),
            baseline: None,
            all: false,
        },
    )
    .unwrap();
    out
}

/// The text of `<td class="{class}">` inside the headline row with this data-key.
fn cell(html: &str, key: &str, class: &str) -> String {
    let row = html
        .split(&format!("class=\"headline\" data-key=\"{key}\""))
        .nth(1)
        .unwrap_or_else(|| panic!("no row {key}"));
    let row = row.split("</tr>").next().unwrap();
    let td = row
        .split(&format!("class=\"{class}\">"))
        .nth(1)
        .unwrap_or_else(|| panic!("no {class} in {key}"));
    verify::unescape(td.split("</td>").next().unwrap())
}

#[test]
fn numbers_on_the_page_are_the_numbers_in_the_json() {
    let site = render(&[measured().to_path_buf()], "site-numbers");
    let html = std::fs::read_to_string(site.join("index.html")).unwrap();
    let r = pqprof::results::read(measured()).unwrap();
    let file = measured()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mut seen = 0;
    for s in r
        .suites
        .iter()
        .filter(|s| s.stack == "default" && s.kind == pqprof::results::TrackKind::Kex)
    {
        let key = format!("data&#x2f;{file}|{}|default", s.name);
        assert_eq!(cell(&html, &key, "mean"), format::time(s.composed.mean_ns));
        assert_eq!(
            cell(&html, &key, "median"),
            format::time(s.composed.median_ns)
        );
        assert_eq!(cell(&html, &key, "p95"), format::time(s.composed.p95_ns));
        assert_eq!(cell(&html, &key, "p99"), format::time(s.composed.p99_ns));
        assert_eq!(cell(&html, &key, "ops"), format::count(s.ops_per_sec));
        assert_eq!(
            cell(&html, &key, "wire"),
            format::bytes(s.wire_bytes.unwrap())
        );
        seen += 1;
    }
    assert_eq!(seen, 2);
    // The raw workload: one row per stack, none repeated.
    let raw = html
        .split("<table class=\"raw\">")
        .nth(1)
        .unwrap()
        .split("</table>")
        .next()
        .unwrap();
    assert_eq!(raw.matches("<tr><td>").count(), 4, "{raw}");
    assert!(html.contains("class=\"delta slower\"") || html.contains("class=\"delta faster\""));
    assert!(html.contains("class=\"delta baseline\""));
    // The raw JSON is in the site and linked.
    assert!(site.join("data").join(&file).exists());
    assert!(html.contains(&format!("href=\"data&#x2f;{file}\"")));
    assert!(html.contains("https:&#x2f;&#x2f;example.org&#x2f;src&#x2f;"));
}

#[test]
fn shares_sum_to_100_and_the_page_keeps_the_identity() {
    let site = render(&[measured().to_path_buf()], "site-identity");
    assert_eq!(verify::check_site(&site).unwrap(), Vec::<String>::new());
    // And the check can fail: an edited contribution on the phases page is caught.
    let phases = site.join("phases.html");
    let html = std::fs::read_to_string(&phases).unwrap();
    let at = html.find("data-contribution-ns=\"").unwrap() + "data-contribution-ns=\"".len();
    let broken = format!("{}9{}", &html[..at], &html[at..]);
    std::fs::write(&phases, broken).unwrap();
    let problems = verify::check_site(&site).unwrap();
    assert!(
        problems.iter().any(|p| p.contains("phases add up to")),
        "{problems:?}"
    );
}

#[test]
fn script_in_names_comes_out_escaped() {
    let evil = edited("evil.json", |v| {
        v["run"]["host"]["hostname"] = "<script>alert(1)</script>".into();
        for s in v["suites"].as_array_mut().unwrap() {
            if s["name"] == "X25519MLKEM768" {
                s["name"] = "<script>alert(2)</script>".into();
            }
        }
    });
    let site = render(&[evil], "site-evil");
    for page in ["index.html", "compare.html", "methodology.html"] {
        let html = std::fs::read_to_string(site.join(page)).unwrap();
        assert!(!html.contains("<script>"), "{page} has a raw <script>");
    }
    let html = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(html.contains("&lt;script&gt;alert(2)&lt;&#x2f;script&gt;"));
    assert!(html.contains("&lt;script&gt;alert(1)"));
}

#[test]
fn missing_optional_sections_render() {
    let sparse = edited("sparse.json", |v| {
        let o = v.as_object_mut().unwrap();
        o.remove("failures");
        v["run"]["host"].as_object_mut().unwrap().remove("kernel");
        v["run"].as_object_mut().unwrap().remove("wall_seconds");
        for p in v["phases"].as_array_mut().unwrap() {
            p["cycles"] = serde_json::Value::Null;
            p["steal_pct"] = serde_json::Value::Null;
        }
        v["suites"]
            .as_array_mut()
            .unwrap()
            .retain(|s| s["name"] != "X25519");
    });
    let site = render(&[sparse], "site-sparse");
    let html = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(html.contains("X25519MLKEM768"));
}

#[test]
fn several_hosts_get_a_row_each() {
    let arm = edited("arm.json", |v| {
        v["run"]["host"]["hostname"] = "graviton".into();
        // The other architecture than this build's (make aarch64 runs this test under qemu).
        v["run"]["host"]["arch"] = if cfg!(target_arch = "aarch64") {
            "x86_64"
        } else {
            "aarch64"
        }
        .into();
        v["run"]["host"]["cpu_model"] = "ARM part 0xd40".into();
    });
    let site = render(&[measured().to_path_buf(), arm], "site-hosts");
    let html = std::fs::read_to_string(site.join("index.html")).unwrap();
    let card = html
        .split("id=\"X25519MLKEM768\"")
        .nth(1)
        .unwrap()
        .split("</section>")
        .next()
        .unwrap();
    assert_eq!(card.matches("class=\"headline\"").count(), 2);
    assert!(card.contains("graviton"));
    assert!(html.contains("aarch64 · x86_64"));
    let compare = std::fs::read_to_string(site.join("compare.html")).unwrap();
    assert!(compare.contains("graviton"));
    assert_eq!(verify::check_site(&site).unwrap(), Vec::<String>::new());
}

#[test]
fn a_failed_render_leaves_the_old_site() {
    let site = render(&[measured().to_path_buf()], "site-keep");
    let bad = tmp("bad.json");
    std::fs::write(&bad, "{\"schema_version\": 7}").unwrap();
    assert!(render::render(
        &[bad],
        &site,
        &render::Options {
            source_url: None,
            baseline: None,
            all: false,
        }
    )
    .is_err());
    assert!(site.join("index.html").exists());
}
