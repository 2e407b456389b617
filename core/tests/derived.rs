//! The figures a run's pages derive by resampling, stored in its file (`render::derive`): the
//! site drawn from them is the site drawn without them, `check` recomputes them, and a stored
//! figure changed, added or left out is caught.

use pqprof_core::render;
use pqprof_core::results::{self, Results};
use std::path::{Path, PathBuf};

mod support {
    pub mod committed;
}

/// The Zen 5 VM's newest committed run (flows, calls timed in situ, QUIC): every kind of
/// derived figure.
fn committed_run() -> PathBuf {
    support::committed::tracked_results(false)
        .into_iter()
        .filter(|f| f.to_string_lossy().contains("-38df4d.json"))
        .max()
        .expect("a committed run of the Zen 5 VM in results/")
}

/// A folder of its own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("pqprof-derived-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every page of the site rendered from `file`, by name, with the copied results files left out
/// (the one with figures stored differs from the one without by them).
fn pages(file: &Path, out: &Path) -> Vec<(String, String)> {
    render::render(
        &[file.to_path_buf()],
        out,
        &render::Options {
            source_url: None,
            baseline: None,
            all: false,
        },
    )
    .unwrap();
    let mut pages: Vec<(String, String)> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            // The copied file's name differs between the two; every figure must not.
            let html = std::fs::read_to_string(&p)
                .unwrap()
                .replace("derived.json", "run.json");
            (name, html)
        })
        .collect();
    pages.sort();
    pages
}

#[test]
fn a_run_with_its_figures_stored_renders_as_without_and_checks_out() {
    // The cache of figures derived for files that store none is off: both renders compute.
    std::env::set_var("PQPROF_DERIVED_CACHE", "");
    let dir = Scratch::new("same");
    let source = committed_run();
    let mut r: Results = results::read(&source).unwrap();
    assert!(
        r.derived.is_empty(),
        "committed files predate the derived figures"
    );
    let plain = dir.0.join("run.json");
    results::create(&plain, &r, true).unwrap();
    r.derived = render::derive(&r);
    // Every kind the pages ask for: the composition's shifts, intervals, paired differences.
    assert!(r.derived.len() > 100, "{} figures", r.derived.len());
    let with = dir.0.join("derived.json");
    results::create(&with, &r, true).unwrap();

    let without_pages = pages(&plain, &dir.0.join("site-without"));
    let with_pages = pages(&with, &dir.0.join("site-with"));
    assert_eq!(
        without_pages.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        with_pages.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for ((name, a), (_, b)) in without_pages.iter().zip(&with_pages) {
        assert!(a == b, "{name} differs with the figures stored");
    }

    // Read back, the stored figures are the recomputed ones, bit for bit.
    let back = results::read(&with).unwrap();
    assert_eq!(back.derived, r.derived);
    assert_eq!(render::check_derived(&back), Vec::new());
    // A file that stores none has nothing to compare.
    assert_eq!(
        render::check_derived(&results::read(&plain).unwrap()),
        Vec::new()
    );
}

#[test]
fn a_stored_figure_changed_added_or_left_out_is_caught() {
    let source = committed_run();
    let mut r: Results = results::read(&source).unwrap();
    r.derived = render::derive(&r);
    let named = |r: &Results, what: &str| {
        let problems = render::check_derived(r);
        assert!(!problems.is_empty(), "{what}: not caught");
        problems
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    };

    let mut changed = r.clone();
    let (key, v) = changed
        .derived
        .iter_mut()
        .find(|(_, v)| !v.is_empty())
        .unwrap();
    v[0] *= 1.0 + 1e-12;
    let key = key.clone();
    let text = named(&changed, "a changed figure");
    assert!(
        text.contains(&key) && text.contains("raw samples give"),
        "{text}"
    );

    let mut added = r.clone();
    added.derived.insert("0".repeat(32), vec![1.0]);
    let text = named(&added, "an added figure");
    assert!(text.contains("not asked for"), "{text}");

    let mut left_out = r.clone();
    let first = left_out.derived.keys().next().unwrap().clone();
    left_out.derived.remove(&first);
    let text = named(&left_out, "a figure left out");
    assert!(text.contains("not stored"), "{text}");
}
