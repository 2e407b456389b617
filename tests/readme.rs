//! README.md reads in one screen (#69): the part before `## Command reference` is at most 60
//! lines, and no sentence of its prose is over 40 words. Prose is every line outside code fences
//! (```), table rows (lines starting with `|`) and HTML comments. A paragraph ends at a blank
//! line, a heading or a list item; a sentence ends at '.', '!' or '?' followed by whitespace or
//! the end of its paragraph.

use std::path::Path;

/// The heading the one-screen part ends at.
const REFERENCE: &str = "## Command reference";
const MAX_LINES: usize = 60;
const MAX_WORDS: usize = 40;

/// The text with every HTML comment removed, its line breaks kept.
fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => {
                let comment = &rest[start..start + end + 3];
                out.extend(comment.chars().filter(|&c| c == '\n'));
                rest = &rest[start + end + 3..];
            }
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether a trimmed line starts a list item: `- `, `* `, `+ ` or `1. `.
fn is_list_item(line: &str) -> bool {
    if ["- ", "* ", "+ "].iter().any(|m| line.starts_with(*m)) {
        return true;
    }
    let digits = line.chars().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && line[digits..].starts_with(". ")
}

/// The prose paragraphs of a Markdown text, each joined into one line.
fn paragraphs(text: &str) -> Vec<String> {
    let text = without_comments(text);
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_fence = !in_fence;
            out.push(current.join(" "));
            current.clear();
            continue;
        }
        if in_fence {
            continue;
        }
        if t.is_empty() || t.starts_with('|') || t.starts_with('#') || is_list_item(t) {
            out.push(current.join(" "));
            current.clear();
        }
        if t.starts_with('#') {
            out.push(t.to_string());
        } else if !t.is_empty() && !t.starts_with('|') {
            current.push(t);
        }
    }
    out.push(current.join(" "));
    out.retain(|p| !p.trim().is_empty());
    out
}

/// The sentences of a paragraph: split after '.', '!' or '?' followed by whitespace or the end.
fn sentences(paragraph: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = paragraph.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let at_end = match chars.peek() {
            None => true,
            Some(&(_, next)) => next.is_whitespace(),
        };
        if matches!(c, '.' | '!' | '?') && at_end {
            out.push(&paragraph[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    out.push(&paragraph[start..]);
    out.retain(|s| !s.trim().is_empty());
    out
}

/// Every sentence of the text's prose over `max` words, as its word count and its first words.
fn long_sentences(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    for p in paragraphs(text) {
        for s in sentences(&p) {
            let words: Vec<&str> = s.split_whitespace().collect();
            if words.len() > max {
                let start: Vec<&str> = words.iter().take(12).copied().collect();
                let start = start.join(" ");
                out.push(format!("{} words: \"{start} ...\"", words.len()));
            }
        }
    }
    out
}

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_part_before_the_command_reference_fits_one_screen() {
    let text = readme();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_end() == REFERENCE)
        .unwrap_or_else(|| panic!("README.md has no heading \"{REFERENCE}\""));
    assert!(
        at <= MAX_LINES,
        "README.md has {at} lines before \"{REFERENCE}\", at most {MAX_LINES}"
    );
}

#[test]
fn no_sentence_of_the_readme_is_over_40_words() {
    let long = long_sentences(&readme(), MAX_WORDS);
    assert!(
        long.is_empty(),
        "README.md: {} sentences over {MAX_WORDS} words:\n  {}",
        long.len(),
        long.join("\n  ")
    );
}

#[test]
fn the_counter_catches_41_words_and_passes_40() {
    let words = |n: usize| vec!["word"; n].join(" ");
    // 41 words in one sentence, wrapped over two lines: too long.
    let long = format!("# Title\n\n{}\n{}.\n", words(20), words(21));
    assert_eq!(long_sentences(&long, MAX_WORDS).len(), 1);
    // 40 words, then another sentence: within the limit.
    let fits = format!("{}. And a second one.\n", words(40));
    assert!(long_sentences(&fits, MAX_WORDS).is_empty());
    // Code fences, table rows and HTML comments are not prose; a list item starts a sentence;
    // a full stop inside a number or a path does not end one.
    let skipped = format!(
        "```sh\n{w}\n```\n| {w} |\n<!-- {w}\n{w} -->\n- {half}\n- {half}\n\nv3.5 of a/b.rs {half}.\n",
        w = words(50),
        half = words(30)
    );
    assert!(long_sentences(&skipped, MAX_WORDS).is_empty());
    assert_eq!(
        sentences("One. Two! Three? 3.5 ends. x"),
        ["One.", " Two!", " Three?", " 3.5 ends.", " x"]
    );
}
