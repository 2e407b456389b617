//! The results files git tracks: the runs the tests read. A run a user makes lands in the same
//! folders (`make run` writes to results/), so a test that listed the folder would check the
//! user's run in place of the committed one, and fail on figures it was never written for.
//! Shared by core's and the tool's tests (included by path where a crate needs it).

use std::path::{Path, PathBuf};

/// The results files git tracks directly in results/ and, with `archive`, in results/archive/,
/// in file-name order (the names sort by time).
pub fn tracked_results(archive: bool) -> Vec<PathBuf> {
    let root = PathBuf::from(git(&["rev-parse", "--show-toplevel"]).trim_end());
    let mut folders = vec![Path::new("results").to_path_buf()];
    if archive {
        folders.push(Path::new("results/archive").to_path_buf());
    }
    let mut files: Vec<PathBuf> = git(&[
        "-C",
        &root.to_string_lossy(),
        "ls-files",
        "-z",
        "--",
        "results",
    ])
    .split('\0')
    .filter(|name| name.ends_with(".json") || name.ends_with(".json.gz"))
    .map(PathBuf::from)
    .filter(|path| {
        path.parent()
            .is_some_and(|p| folders.iter().any(|f| f == p))
    })
    .map(|path| root.join(path))
    .collect();
    files.sort_by_key(|p| p.file_name().map(|n| n.to_owned()));
    files
}

/// The newest committed run in results/ of the machine whose fingerprint is `fingerprint` (the
/// names end with it and sort by time). Some crates that include this file use only
/// `tracked_results`.
#[allow(dead_code)]
pub fn newest_of(fingerprint: &str) -> Option<PathBuf> {
    let tail = format!("-{fingerprint}.json");
    tracked_results(false)
        .into_iter()
        .filter(|f| f.to_string_lossy().contains(&tail))
        .max()
}

/// git's output for `args`, run in the crate's own folder.
fn git(args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .expect("the tests read the results files git tracks: run them in a git checkout");
    String::from_utf8(out.stdout).expect("git's output is UTF-8")
}
