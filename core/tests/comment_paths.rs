//! Every repository path a comment or a Markdown file names exists. Code moves and files are
//! renamed; a comment that still names the old place points a reader at nothing, and no compiler
//! notices. This test reads the comments (`//`, `///`, `//!`) of every Rust file and the whole of
//! every Markdown file in the repository, takes each token that looks like a path of it, and fails
//! with every one that resolves nowhere.
//!
//! A token is a path when it has a `/` and ends in a file extension the repository uses, or when
//! it starts with one of the repository's top-level folders. It resolves when it exists relative to
//! the repository root, or to the folder of the file that names it or any folder above that (so
//! `src/stats.rs` in core/ is core's, and `fixture/` in smoke/browser/ is that folder's). Not paths:
//! URLs, absolute paths, build output (`target/`, `site/`), globs and placeholders (`*`, `<host>`,
//! `{a,b}`, `$out`, `name-...`).
//!
//! Comments also cite other projects' sources (OpenSSL's `ssl/t1_lib.c`, Linux's
//! `include/net/tcp.h`). A path whose first folder is no folder of this repository is taken for
//! one of those and skipped; one whose first folder this repository has too (liboqs's `tests/`,
//! russh's `src/`) is written `project:path` (`liboqs:tests/speed_sig.c`), which says whose it is
//! and is skipped. It lives in core so that `make test` (`cargo test --workspace`) runs it, and it
//! needs nothing built but this crate.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The extensions of files a comment might name.
const EXTENSIONS: &[&str] = &[
    "rs", "toml", "md", "sh", "json", "go", "mod", "c", "h", "html", "yml", "yaml", "py", "mjs",
    "js", "css", "txt", "csv", "lock", "svg", "jinja", "j2",
];

/// The repository's top-level folders: a token that starts with one is a path even without an
/// extension (`tools/noise.sh`, `suites/`, `.ci/run`).
const TOP_FOLDERS: &[&str] = &[
    "src/",
    "core/",
    "tests/",
    "tools/",
    "suites/",
    "peers/",
    "smoke/",
    "templates/",
    "references/",
    "results/",
    "examples/",
    "fuzz/",
    ".ci/",
    ".github/",
];

/// Folders never read: build output, version control, fuzzing inputs and dependencies.
fn skipped(rel: &Path) -> bool {
    let s = rel.to_string_lossy();
    matches!(
        s.as_ref(),
        "target" | ".git" | "site" | "fuzz/corpus" | "fuzz/target" | "fuzz/artifacts"
    ) || rel.file_name().is_some_and(|n| n == "node_modules")
}

/// The Rust and Markdown files under `dir`, and the name of every folder on the way.
fn files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>, folders: &mut BTreeSet<String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let rel = p.strip_prefix(root).unwrap();
        if p.is_dir() {
            if !skipped(rel) {
                folders.insert(p.file_name().unwrap().to_string_lossy().into_owned());
                files(root, &p, out, folders);
            }
        } else if p.extension().is_some_and(|x| x == "rs" || x == "md") {
            out.push(p);
        }
    }
}

/// The comment text of each line of Rust source, with its line number: the part from a `//`
/// that is not inside a string literal. A string is followed within its line only: a line inside
/// a string that spans lines is read as code, and one of its `//` as a comment, which at worst
/// asks for a path that is not one to exist.
fn rust_comments(source: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let bytes = line.as_bytes();
        let (mut at, mut in_string) = (0, false);
        while at + 1 < bytes.len() {
            match bytes[at] {
                b'\\' if in_string => at += 1,
                b'"' => in_string = !in_string,
                // A char literal of a quote ('"') does not open a string.
                b'\'' if !in_string && bytes.get(at + 2) == Some(&b'\'') => at += 2,
                b'/' if !in_string && bytes[at + 1] == b'/' => {
                    out.push((i + 1, &line[at..]));
                    break;
                }
                _ => {}
            }
            at += 1;
        }
    }
    out
}

/// The tokens of a text that look like repository paths, cleaned of what surrounds them in
/// prose: quotes and brackets, a Markdown link's parentheses, a trailing full stop, a `:line`
/// suffix, a `#anchor`.
fn path_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let split = |c: char| c.is_whitespace() || "`\"'()[],;|=".contains(c);
    for raw in text.split(split) {
        if raw.contains("://")
            || raw.starts_with('/')
            || raw.starts_with('~')
            || raw.contains("...")
        {
            continue;
        }
        // `path:line` keeps the path; `project:path` is another project's file.
        let token = match raw.split_once(':') {
            Some((before, _)) if before.contains('/') => before,
            Some(_) => continue,
            None => raw,
        };
        let token = token.split('#').next().unwrap_or("");
        let token = token.trim_end_matches(['.', '!', '?']);
        let token = token.strip_prefix("./").unwrap_or(token);
        if token.is_empty() || token.contains(['*', '<', '>', '{', '}', '$', '…', '\\']) {
            continue;
        }
        if token.starts_with("target/") || token.starts_with("site/") {
            continue;
        }
        let has_extension = token.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && !stem.ends_with('/') && EXTENSIONS.contains(&ext)
        });
        let is_path = (token.contains('/') && has_extension)
            || TOP_FOLDERS.iter().any(|f| token.starts_with(f));
        if is_path {
            out.push(token.to_string());
        }
    }
    out
}

/// Whether a path names a file of this repository rather than of another project: its first
/// folder is one of the repository's (`folders`), or it climbs from the file's (`../`).
fn ours(path: &str, folders: &BTreeSet<String>) -> bool {
    let first = path.split('/').next().unwrap_or("");
    first == ".." || folders.contains(first)
}

/// Whether `path`, named in a file in `dir`, exists relative to `dir` or any folder above it up
/// to the repository root.
fn resolves(root: &Path, dir: &Path, path: &str) -> bool {
    dir.ancestors()
        .take_while(|a| a.starts_with(root))
        .any(|a| a.join(path).exists())
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("core/ has a parent: the repository")
        .to_path_buf()
}

#[test]
fn every_path_a_comment_or_doc_names_exists() {
    let root = root();
    let (mut all, mut folders) = (Vec::new(), BTreeSet::new());
    files(&root, &root, &mut all, &mut folders);
    let mut missing = Vec::new();
    let mut named = 0;
    for file in &all {
        let text = std::fs::read_to_string(file).unwrap();
        let dir = file.parent().unwrap();
        let lines: Vec<(usize, &str)> = if file.extension().is_some_and(|x| x == "rs") {
            rust_comments(&text)
        } else {
            text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect()
        };
        for (line, comment) in lines {
            for path in path_tokens(comment) {
                if !ours(&path, &folders) {
                    continue;
                }
                named += 1;
                if !resolves(&root, dir, &path) {
                    let rel = file.strip_prefix(&root).unwrap();
                    missing.push(format!("{}:{line}: {path}", rel.display()));
                }
            }
        }
    }
    // The tree has about 170 such files naming about 140 of its paths; far fewer would mean the
    // walk or the tokens broke, and the test would pass on nothing.
    assert!(
        all.len() > 100 && named > 50,
        "{} files, {named} paths",
        all.len()
    );
    assert!(
        missing.is_empty(),
        "{} paths named in comments or docs do not exist (fix the path, or the comment):\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
}

#[test]
fn tokens_are_paths_only_where_they_name_a_file_of_this_repository() {
    let t = |s: &str| path_tokens(s);
    // Paths in prose, code spans, links, with a line number, an anchor or a full stop after them.
    assert_eq!(
        t("see `src/run.rs:445`, [the page](core/src/lib.rs#flow) and tools/noise.sh."),
        ["src/run.rs", "core/src/lib.rs", "tools/noise.sh"]
    );
    // A top-level folder alone, and a nested file by its extension.
    assert_eq!(
        t("(suites/) and peers/go/main.go"),
        ["suites/", "peers/go/main.go"]
    );
    // Not paths: URLs, absolute paths, build output, globs, placeholders, a file marked as another
    // project's, a bare file name, a ratio, a Rust path, a fraction.
    assert!(
        t("https://example.org/a/b.rs /tmp/x.json target/release/pqprof site/index.html")
            .is_empty()
    );
    assert!(
        t("results/*.json results/<host>.json src/{a,b}.rs $out/x.json results/vm-...").is_empty()
    );
    assert!(t("liboqs:tests/speed_kem.c case.rs ns/op crate::stats::median 1/2").is_empty());
}

#[test]
fn another_projects_file_is_one_whose_first_folder_is_not_ours() {
    let folders: BTreeSet<String> = ["src", "backend", "tests"].map(String::from).into();
    assert!(ours("src/backend/mod.rs", &folders));
    // A folder below the root, named from the root: ours, and then it must resolve.
    assert!(ours("backend/mod.rs", &folders));
    assert!(ours("../README.md", &folders));
    assert!(!ours("ssl/t1_lib.c", &folders));
    assert!(!ours("include/net/tcp.h", &folders));
}

#[test]
fn comments_are_read_outside_string_literals_only() {
    let src = "let url = \"https://x.org/a.rs\"; // see src/a.rs\n/// doc src/b.rs\nlet q = '\"'; // c\nlet s = \"// not src/d.rs\";";
    assert_eq!(
        rust_comments(src),
        [(1, "// see src/a.rs"), (2, "/// doc src/b.rs"), (3, "// c")]
    );
}

#[test]
fn a_path_resolves_from_the_root_or_from_the_folders_above_its_file() {
    let root = root();
    let core = root.join("core/src/stats");
    assert!(resolves(&root, &core, "core/src/stats.rs"));
    // Crate-relative (core's src/) and relative to the file's own folder.
    assert!(resolves(&root, &core, "src/stats/sample.rs"));
    assert!(resolves(&root, &core, "sample.rs"));
    assert!(!resolves(&root, &core, "src/stats/nowhere.rs"));
    // From core/src, the folder above.
    assert!(resolves(&root, &core, "check/mod.rs"));
    // A folder below the root is not found from the root by its name alone.
    assert!(!resolves(&root, &root, "stats/sample.rs"));
}
