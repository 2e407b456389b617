//! The figures a run's pages derive by resampling (`crate::derived`): which ones (those the page
//! builders ask for when the run is rendered alone), `check`'s comparison of the stored ones with
//! a recomputation, and the cache that stands in for them where a file stores none (files written
//! before 2026-12-06, which are never rewritten).

use super::{arch, compare, composition, history, machines, methodology, overview, Run};
use crate::check::Problem;
use crate::derived::{self, Figures};
use crate::figures::memo;
use crate::results::Results;
use std::path::{Path, PathBuf};

/// The figures the pages of `results` rendered alone ask for: what a producer stores in
/// `Results::derived` when it writes the file. Figures already known to this process (computed
/// from the same inputs by the same method: the key holds both) are not computed again.
pub fn derive(results: &Results) -> Figures {
    let runs = [Run {
        results: Results {
            derived: Figures::new(),
            ..results.clone()
        },
        label: String::new(),
        json_href: String::new(),
        anchor: String::new(),
        machine_anchor: String::new(),
    }];
    let one = [&runs[0]];
    // A memo of its own (`figures::memo`): `runs` lives only as long as this call.
    let ((), figures) = derived::recording(|| {
        memo::scope(|| {
            let _ = overview::build(&one);
            let _ = arch::build(&one);
            let _ = composition::build(&one);
            let _ = compare::build(&one, 0);
            let _ = methodology::build(&one);
            let _ = history::build(&runs, &machines(&runs));
        })
    });
    figures
}

/// `check`'s part for the stored derived figures: each the pages ask for, recomputed from the raw
/// samples, must be the stored one exactly (the draws are seeded, so a recomputation repeats them
/// bit for bit). A file that stores none has nothing to compare.
pub fn check_derived(results: &Results) -> Vec<Problem> {
    if results.derived.is_empty() {
        return Vec::new();
    }
    let fresh = derived::fresh(|| derive(results));
    let mut problems = Vec::new();
    for (key, stored) in &results.derived {
        match fresh.get(key) {
            Some(f) if f.len() != stored.len() || f.iter().zip(stored).any(|(a, b)| a != b) => {
                problems.push(Problem::recomputed(format!(
                    "derived figure {key}: stored {stored:?}, the raw samples give {f:?}"
                )));
            }
            _ => {}
        }
    }
    // Each stored figure the pages ask for must be the recomputed one. Which figures they ask
    // for changes with the pages (and a key with its method), so a figure stored and no longer
    // asked for, or asked for and not stored, is no problem: `render` computes what it lacks.
    // One is asked for by this run's pages, or the file stores none that is.
    if !fresh.is_empty() && !results.derived.keys().any(|k| fresh.contains_key(k)) {
        problems.push(Problem::incomplete(format!(
            "none of the {} derived figure(s) stored is one this run's pages ask for",
            results.derived.len()
        )));
    }
    problems
        .into_iter()
        .map(|p| p.in_section("derived"))
        .collect()
}

/// Where the figures derived for a file that stores none are kept, by the digest of its bytes:
/// `$XDG_CACHE_HOME/pqprof/derived`, else `~/.cache/pqprof/derived`; `PQPROF_DERIVED_CACHE`
/// names another folder, or turns the cache off when empty.
fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PQPROF_DERIVED_CACHE") {
        return (!d.is_empty()).then(|| PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("pqprof").join("derived"))
}

/// The cache file for the file whose bytes are `bytes`. Its key holds the methods' version
/// (`derived::Key::new`), so a build whose resampling differs reads none of an older build's;
/// one whose pages ask for figures the cache lacks computes them as it draws.
fn cache_file(dir: &Path, bytes: &[u8]) -> PathBuf {
    let mut key = derived::Key::new("results file");
    key.bytes(bytes);
    dir.join(format!("{}.json", key.hex()))
}

/// Removes the cache's files written more than `CACHE_DAYS` ago (for results files since removed,
/// or under an older methods' version). One still wanted is derived and written again. A file
/// that cannot be removed stays.
fn prune(dir: &Path) {
    const CACHE_DAYS: u64 = 30;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let old = std::time::Duration::from_secs(CACHE_DAYS * 24 * 3600);
    for e in entries.flatten() {
        let stale = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > old);
        // Only the cache's own names (`cache_file`: 32 hex digits), wherever the folder is.
        let ours = e.file_name().to_str().is_some_and(|n| {
            n.strip_suffix(".json")
                .is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        });
        if stale && ours {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Makes the figures of a run known to this process before its pages are drawn: those its file
/// stores, else those derived for it before (the cache), else derived now and cached. A cache
/// that cannot be read or written only costs the time to derive again.
fn prepare(results: &Results, file: &Path) {
    if !results.derived.is_empty() {
        derived::remember(&results.derived);
        return;
    }
    let cached = cache_dir().and_then(|dir| {
        let bytes = std::fs::read(file).ok()?;
        Some(cache_file(&dir, &bytes))
    });
    if let Some(c) = &cached {
        let stored = std::fs::read(c)
            .ok()
            .and_then(|b| serde_json::from_slice::<Figures>(&b).ok());
        if let Some(figures) = stored {
            derived::remember(&figures);
            return;
        }
    }
    // From this file's raw samples alone, not from figures another file stored.
    let figures = derived::fresh(|| derive(results));
    derived::remember(&figures);
    if let Some(c) = cached {
        if let Some(dir) = c.parent() {
            prune(dir);
        }
        if let Ok(bytes) = serde_json::to_vec(&figures) {
            let _ = c
                .parent()
                .map(std::fs::create_dir_all)
                .transpose()
                .ok()
                .and_then(|_| crate::results::write_atomic(&c, &bytes).ok());
        }
    }
}

/// `prepare` for every run (`files` in the same order), the runs shared among the cores.
pub(super) fn prepare_all(runs: &[Run], files: &[PathBuf]) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(runs.len().max(1));
    std::thread::scope(|scope| {
        for t in 0..threads {
            scope.spawn(move || {
                for (run, file) in runs.iter().zip(files).skip(t).step_by(threads) {
                    prepare(&run.results, file);
                }
            });
        }
    });
}
