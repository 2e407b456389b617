//! The figures a run's pages derive by resampling, stored in its file (`render::derive`): the
//! site drawn from them is the site drawn without them, `check` recomputes them, and a stored
//! figure changed, or a file whose figures no page asks for, is caught.

use pqprof_core::render;
use pqprof_core::results::{self, Results};
use std::path::{Path, PathBuf};

mod support {
    pub mod committed;
}

/// The Zen 5 VM's newest committed run (flows, calls timed in situ, QUIC): every kind of
/// derived figure.
fn committed_run() -> PathBuf {
    support::committed::newest_of("38df4d").expect("a committed run of the Zen 5 VM in results/")
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
    // The cache of figures derived for files that store none is off: the render without them
    // computes them.
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
    // Fresh: derived without joining the figures this process knows, so that the render of the
    // file that stores them can only take them from the file.
    r.derived = pqprof_core::derived::fresh(|| render::derive(&r));
    // Every kind the pages ask for: the composition's shifts, intervals, paired differences.
    assert!(r.derived.len() > 100, "{} figures", r.derived.len());
    let with = dir.0.join("derived.json");
    results::create(&with, &r, true).unwrap();
    // The same file with every stored figure doubled: what a render that reads them must show.
    let mut doubled = r.clone();
    for v in doubled.derived.values_mut() {
        v.iter_mut().for_each(|x| *x *= 2.0);
    }
    let doubled_file = dir.0.join("doubled").join("derived.json");
    std::fs::create_dir_all(doubled_file.parent().unwrap()).unwrap();
    results::create(&doubled_file, &doubled, true).unwrap();

    pqprof_core::derived::forget_all();
    let with_pages = pages(&with, &dir.0.join("site-with"));
    pqprof_core::derived::forget_all();
    let doubled_pages = pages(&doubled_file, &dir.0.join("site-doubled"));
    pqprof_core::derived::forget_all();
    let without_pages = pages(&plain, &dir.0.join("site-without"));
    assert_eq!(
        without_pages.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        with_pages.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for ((name, a), (_, b)) in without_pages.iter().zip(&with_pages) {
        assert!(a == b, "{name} differs with the figures stored");
    }
    // The stored figures are what the pages show: changed, the pages change.
    assert!(
        with_pages != doubled_pages,
        "the pages did not take the figures the file stores"
    );

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
fn a_stored_figure_changed_or_of_no_page_is_caught() {
    let source = committed_run();
    let mut r: Results = results::read(&source).unwrap();
    r.derived = pqprof_core::derived::fresh(|| render::derive(&r));
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
    v[0] += 1.0;
    let key = key.clone();
    let text = named(&changed, "a changed figure");
    assert!(
        text.contains(&key) && text.contains("raw samples give"),
        "{text}"
    );

    // Figures no page asks for any more (the pages changed), or asked for and not stored, are
    // no problem; a file whose figures are none the pages ask for is.
    let mut added = r.clone();
    added.derived.insert("0".repeat(32), vec![1.0]);
    let first = added.derived.keys().nth(1).unwrap().clone();
    added.derived.remove(&first);
    assert_eq!(render::check_derived(&added), Vec::new());
    let mut foreign = r.clone();
    foreign.derived = [("0".repeat(32), vec![1.0])].into();
    let text = named(&foreign, "figures of no page");
    assert!(text.contains("none of the 1"), "{text}");
}
