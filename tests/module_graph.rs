//! The module graph of both crates has no cycles and every edge runs with the flow (the module
//! order in core/src/lib.rs, the flow in src/lib.rs, the rules in the lists below): the results
//! schema imports nothing else of the tool, core never names the measuring crate, producers never
//! reach into `check` or the pages, lower layers never import upper ones. Read from the sources:
//! every `crate::NAME` a file mentions (in `use` lines, grouped `use crate::{a, b}` lists or paths)
//! is an edge from the file's top-level module to NAME. And no two files import each other, even
//! through others: every path a file names through `crate::`, `super::` or `self::` is an edge to
//! the file of the longest module it starts with (`file_graph`).

use common::rust_files;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod common;

/// Top-level module of a file under `src` (src/ or core/src/): `core/src/render/svg.rs` -> render,
/// `core/src/stats.rs` -> stats, `src/run.rs` -> run.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let name = first.trim_end_matches(".rs").to_string();
    (name != "lib" && name != "main").then_some(name)
}

/// Names after `crate::` in a text, expanding `crate::{a, b::c}` groups; test modules excluded.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let body = &group[..group.find('}').unwrap_or(group.len())];
            for item in body.split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != "self" {
                    out.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(m) = module_of(src, f) else { continue };
        let refs = crate_refs(&std::fs::read_to_string(f).unwrap());
        let entry = g.entry(m.clone()).or_default();
        entry.extend(refs.into_iter().filter(|r| *r != m));
    }
    g
}

/// A file's module path under `src`: core/src/figures/answer.rs -> figures::answer,
/// core/src/figures/mod.rs -> figures, core/src/lib.rs -> the crate itself (empty).
fn file_module(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// One use tree or path at `code[i..]` (after its `crate::`, `super::` or `self::`, whose module
/// is `prefix`), its groups expanded: every full path it names, and where it ends.
fn use_tree(code: &[u8], mut i: usize, prefix: &[String]) -> (Vec<Vec<String>>, usize) {
    let mut path = prefix.to_vec();
    let mut out = Vec::new();
    loop {
        let start = i;
        while i < code.len() && (code[i].is_ascii_alphanumeric() || code[i] == b'_') {
            i += 1;
        }
        if i > start {
            path.push(String::from_utf8_lossy(&code[start..i]).into_owned());
        }
        if !code[i..].starts_with(b"::") {
            break;
        }
        i += 2;
        if code.get(i) == Some(&b'{') {
            i += 1;
            loop {
                while i < code.len() && b" \n\t\r,".contains(&code[i]) {
                    i += 1;
                }
                if i >= code.len() || code[i] == b'}' {
                    return (out, i + 1);
                }
                let (paths, end) = use_tree(code, i, &path);
                out.extend(paths);
                // A name the tree could not read (`*`, `self`'s own): step over it.
                i = end.max(i + 1);
            }
        }
    }
    out.push(path);
    (out, i)
}

/// Every path a file's code names through `crate::`, `super::` or `self::`, as absolute module
/// paths (`me`: the file's own); comments and test modules left out.
fn file_paths(text: &str, me: &[String]) -> Vec<Vec<String>> {
    let code: String = text
        .split("#[cfg(test)]")
        .next()
        .unwrap_or("")
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for (k, _) in code.match_indices("::") {
        let word_start = bytes[..k]
            .iter()
            .rposition(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .map_or(0, |p| p + 1);
        // Only the first segment of a path: `crate`, `self`, or a run of `super`s.
        if word_start >= 2 && &bytes[word_start - 2..word_start] == b"::" {
            continue;
        }
        let mut prefix: Vec<String> = match &code[word_start..k] {
            "crate" => Vec::new(),
            "self" => me.to_vec(),
            "super" => me[..me.len().saturating_sub(1)].to_vec(),
            _ => continue,
        };
        let mut i = k + 2;
        while code[i..].starts_with("super::") {
            prefix.pop();
            i += "super::".len();
        }
        out.extend(use_tree(bytes, i, &prefix).0);
    }
    out
}

/// The files' graph: each file's module -> the files' modules it names (each path's longest
/// prefix that is a file's module), its own and its ancestors' left out: a file naming what the
/// module it sits in declares is how modules nest, not a cycle.
fn file_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: Vec<(Vec<String>, &Path)> = files
        .iter()
        .map(|f| (file_module(src, f), f.as_path()))
        .collect();
    let known: BTreeSet<&Vec<String>> = modules.iter().map(|(m, _)| m).collect();
    let mut g = BTreeMap::new();
    for (me, file) in &modules {
        let mut to = BTreeSet::new();
        for path in file_paths(&std::fs::read_to_string(file).unwrap(), me) {
            let Some(target) = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| known.contains(p))
            else {
                continue;
            };
            if !me.starts_with(&target) {
                to.insert(target.join("::"));
            }
        }
        g.insert(me.join("::"), to);
    }
    g
}

/// A topological order, or the modules left on a cycle.
fn topo(g: &BTreeMap<String, BTreeSet<String>>) -> Result<Vec<String>, Vec<String>> {
    let mut left: BTreeMap<String, BTreeSet<String>> = g
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.iter().filter(|d| g.contains_key(*d)).cloned().collect(),
            )
        })
        .collect();
    let mut order = Vec::new();
    while !left.is_empty() {
        let ready: Vec<String> = left
            .iter()
            .filter(|(_, d)| d.is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        if ready.is_empty() {
            return Err(left.keys().cloned().collect());
        }
        for r in &ready {
            left.remove(r);
        }
        for d in left.values_mut() {
            for r in &ready {
                d.remove(r);
            }
        }
        order.extend(ready);
    }
    Ok(order)
}

/// Of the modules `topo` left, those on a cycle: the ones that only import a cycle's members
/// (none of the left imports them) are taken away until none is.
fn on_cycles(g: &BTreeMap<String, BTreeSet<String>>, mut left: Vec<String>) -> Vec<String> {
    loop {
        let imported = |m: &String| left.iter().any(|from| g[from].contains(m));
        let before = left.len();
        left = left.iter().filter(|m| imported(m)).cloned().collect();
        if left.len() == before {
            return left;
        }
    }
}

/// Edges that run against the flow: (module, modules it must never import).
const CORE_RULES: &[(&str, &[&str])] = &[
    // What producers and `check` both compute lives below `check`, so producers need not reach it.
    (
        "figures",
        &[
            "check",
            "render",
            "export",
            "tables",
            "comparison",
            "league",
        ],
    ),
    // `check` recomputes; it never formats pages or tables.
    (
        "check",
        &["render", "export", "tables", "comparison", "league"],
    ),
    (
        "compose",
        &[
            "check",
            "render",
            "export",
            "tables",
            "comparison",
            "league",
            "figures",
        ],
    ),
    // The flow places phases and sums them, as `compose` does, beneath every reader.
    (
        "flow",
        &[
            "check",
            "render",
            "export",
            "tables",
            "comparison",
            "league",
            "figures",
            "compose",
        ],
    ),
    (
        "stats",
        &[
            "check",
            "render",
            "compose",
            "figures",
            "suite",
            "algorithm",
        ],
    ),
    ("units", &["check", "render", "results", "stats"]),
    ("tables", &["render", "check"]),
    ("export", &["render", "check", "tables"]),
];

/// In the measuring crate: the producers, the lower layers and what each must not import.
const PRODUCERS: &[&str] = &[
    "run",
    "samples",
    "counter",
    "emulator",
    "handshake",
    "capacity",
    "network",
    "crosscheck",
    "go",
];
/// Downstream of results: a producer never reaches into these (it calls core's `figures`).
const READERS: &[&str] = &["check", "render", "export", "comparison", "league"];
const TOOL_RULES: &[(&str, &[&str])] = &[
    (
        "backend",
        &[
            "stack",
            "handshake",
            "capacity",
            "network",
            "run",
            "samples",
            "plan",
            "case",
        ],
    ),
    (
        "case",
        &[
            "stack",
            "handshake",
            "capacity",
            "network",
            "run",
            "samples",
            "plan",
        ],
    ),
    (
        "measure",
        &[
            "stack",
            "handshake",
            "capacity",
            "network",
            "run",
            "samples",
            "plan",
        ],
    ),
    (
        "insitu",
        &[
            "stack",
            "handshake",
            "capacity",
            "network",
            "run",
            "backend",
        ],
    ),
    (
        "alloc",
        &["stack", "handshake", "capacity", "network", "run", "insitu"],
    ),
    (
        "host",
        &[
            "stack",
            "handshake",
            "capacity",
            "network",
            "run",
            "samples",
        ],
    ),
    (
        "stack",
        &["handshake", "capacity", "network", "run", "samples", "plan"],
    ),
    (
        "plan",
        &["run", "samples", "handshake", "capacity", "network"],
    ),
];

/// Every edge of `g` that a rule forbids: "from -> to".
fn violations(g: &BTreeMap<String, BTreeSet<String>>, rules: &[(&str, &[&str])]) -> Vec<String> {
    let mut out = Vec::new();
    for (from, forbidden) in rules {
        for to in g.get(*from).into_iter().flatten() {
            if forbidden.contains(&to.as_str()) {
                out.push(format!("{from} -> {to}"));
            }
        }
    }
    out
}

/// The measuring crate's rules: the table above, and every producer kept off the readers and the
/// command line (only `commands` reads `cli`).
fn tool_violations(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut rules: Vec<(&str, &[&str])> = TOOL_RULES.to_vec();
    let off_limits: Vec<&str> = READERS.iter().copied().chain(["cli", "commands"]).collect();
    let off: &'static [&'static str] = Box::leak(off_limits.into_boxed_slice());
    rules.extend(PRODUCERS.iter().map(|p| (*p, off)));
    let mut v = violations(g, &rules);
    for (from, to) in g {
        if from != "commands" && (to.contains("cli") || to.contains("commands")) {
            v.push(format!("{from} -> cli/commands"));
        }
    }
    v.sort();
    v.dedup();
    v
}

/// Files of `src` that name the measuring crate (`pqprof::`), which core must never do.
fn names_the_tool(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
            code.contains("pqprof::") || code.contains("use pqprof")
        })
        .map(|f| f.display().to_string())
        .collect()
}

#[test]
fn every_edge_runs_with_the_flow() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let core = graph(&root.join("core/src"));
    assert_eq!(violations(&core, CORE_RULES), Vec::<String>::new());
    assert_eq!(names_the_tool(&root.join("core/src")), Vec::<String>::new());
    let tool = graph(&root.join("src"));
    assert_eq!(tool_violations(&tool), Vec::<String>::new());
}

#[test]
fn a_seeded_wrong_edge_is_found() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // A producer that reaches into check, as capacity once did for its rates.
    let mut tool = graph(&root.join("src"));
    let seeded = crate_refs("use crate::check::capacity::rate_per_s;\nlet x = 1;");
    tool.get_mut("capacity").unwrap().extend(seeded);
    assert_eq!(
        tool_violations(&tool),
        vec!["capacity -> check".to_string()]
    );
    // A stack that reads the handshake command's internals.
    let mut tool = graph(&root.join("src"));
    tool.get_mut("stack").unwrap().insert("handshake".into());
    assert_eq!(
        tool_violations(&tool),
        vec!["stack -> handshake".to_string()]
    );
    // In core: figures importing check.
    let mut core = graph(&root.join("core/src"));
    core.get_mut("figures").unwrap().insert("check".into());
    assert_eq!(
        violations(&core, CORE_RULES),
        vec!["figures -> check".to_string()]
    );
    // And a core file naming the measuring crate.
    let dir = std::env::temp_dir().join(format!("pqprof-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.rs"), "use pqprof::stack;\n").unwrap();
    assert_eq!(names_the_tool(&dir).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_results_schema_is_a_leaf_and_no_module_graph_has_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let core = graph(&root.join("core/src"));
    assert_eq!(
        core.get("results").cloned().unwrap_or_default(),
        BTreeSet::new(),
        "results imports another module"
    );
    let order =
        topo(&core).unwrap_or_else(|cycle| panic!("pqprof-core has a cycle among {cycle:?}"));
    // The schema comes before everything that reads it (other leaves, like netmodel, may share its layer).
    let at = |m: &str| order.iter().position(|x| x == m);
    for (m, deps) in &core {
        if deps.contains("results") {
            assert!(at("results") < at(m), "{m} reads results but comes first");
        }
    }
    eprintln!("pqprof-core: {}", order.join(" -> "));
    let tool = graph(&root.join("src"));
    let order = topo(&tool).unwrap_or_else(|cycle| panic!("pqprof has a cycle among {cycle:?}"));
    eprintln!("pqprof: {}", order.join(" -> "));
}

#[test]
fn the_scanner_sees_grouped_imports_and_cycles() {
    let refs = crate_refs("use crate::{check, render::verify, self};\nlet x = crate::stats::mean(&v);\n#[cfg(test)]\nuse crate::hidden;");
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        vec!["check", "render", "stats"]
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert!(topo(&g).is_err());
}

#[test]
fn no_file_imports_another_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for src in ["core/src", "src"] {
        let g = file_graph(&root.join(src));
        if let Err(left) = topo(&g) {
            panic!("{src}: the files of a cycle: {:?}", on_cycles(&g, left));
        }
    }
}

#[test]
fn the_file_scanner_resolves_super_self_and_groups_and_finds_a_seeded_cycle() {
    let me: Vec<String> = vec!["figures".into(), "modes".into()];
    let text = "use super::answer::{CERTIFICATE, HYBRID};\n\
                use super::handshake::{paired_connections, Connections};\n\
                // use super::hidden;\n\
                let x = crate::stats::{mean, median}(&v); let y = self::inner::f();\n\
                #[cfg(test)]\nuse super::tested;";
    let paths: Vec<String> = file_paths(text, &me).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        paths,
        [
            "figures::answer::CERTIFICATE",
            "figures::answer::HYBRID",
            "figures::handshake::paired_connections",
            "figures::handshake::Connections",
            "stats::mean",
            "stats::median",
            "figures::modes::inner::f",
        ]
    );
    // In core, figures::modes imports figures::handshake and figures::answer, which imports
    // figures::handshake: an edge from handshake to modes closes two cycles through the three.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut g = file_graph(&root.join("core/src"));
    assert!(g["figures::modes"].contains("figures::handshake"));
    g.get_mut("figures::handshake")
        .unwrap()
        .insert("figures::modes".into());
    let left = topo(&g).unwrap_err();
    assert_eq!(
        on_cycles(&g, left),
        ["figures::answer", "figures::handshake", "figures::modes"]
    );
}

#[test]
fn core_documents_its_module_order_as_the_imports_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("core/src/lib.rs")).unwrap();
    // The names in backticks of the doc comment's paragraph from "Module order" on.
    let doc: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .skip_while(|l| !l.contains("Module order"))
        .take_while(|l| !l.trim().is_empty())
        .collect();
    let order: Vec<&str> = doc.split('`').skip(1).step_by(2).collect();
    let core = graph(&root.join("core/src"));
    let at = |m: &str| order.iter().position(|x| *x == m);
    for (m, deps) in &core {
        let here = at(m).unwrap_or_else(|| panic!("core/src/lib.rs's module order has no {m}"));
        for d in deps.iter().filter(|d| core.contains_key(*d)) {
            assert!(
                at(d).is_some_and(|there| there < here),
                "{m} imports {d}, which core/src/lib.rs's module order puts after it"
            );
        }
    }
}
