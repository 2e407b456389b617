//! No function in `src/` or `core/src/` is longer than 150 lines (#36). A function is read from
//! rustfmt's layout: a line opening `fn NAME` and the first line after it that closes its block at
//! the same indentation.

use common::rust_files;
use std::path::Path;

mod common;

const LIMIT: usize = 150;

/// Every function of a source text with its length in lines: (name, lines).
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let indent = &l[..l.len() - t.len()];
        let t = t
            .trim_start_matches("pub ")
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("const ")
            .trim_start_matches("async ")
            .trim_start_matches("unsafe ");
        let Some(rest) = t.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // A declaration without a body (a trait's) ends with ';' before any '{'.
        let head_end = (i..lines.len())
            .find(|&k| lines[k].contains('{') || lines[k].trim_end().ends_with(';'))
            .unwrap_or(i);
        if !lines[head_end].contains('{') {
            continue;
        }
        let close = format!("{indent}}}");
        if lines[head_end].trim_end().ends_with('}') && lines[head_end].contains("{ ") {
            continue; // a one-line body
        }
        if let Some(end) = (head_end + 1..lines.len()).find(|&k| lines[k].trim_end() == close) {
            out.push((name, end - i + 1));
        }
    }
    out
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("core/src"), &mut files);
    let mut problems = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(f).unwrap();
        // Test modules are not held to it.
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        for (name, n) in functions(code) {
            if n <= LIMIT {
                continue;
            }
            problems.push(format!("{rel}: fn {name} is {n} lines (limit {LIMIT})"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn functions_are_measured_from_their_opening_to_their_closing_line() {
    let text = "fn a() {\n    x();\n}\n\n    pub fn b(\n        y: u8,\n    ) -> u8 {\n        y\n    }\nfn c();\nfn d() { 1 }\n";
    assert_eq!(
        functions(text),
        vec![("a".to_string(), 3), ("b".to_string(), 5)]
    );
}
