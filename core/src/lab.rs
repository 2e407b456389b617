//! Server files (`servers/*.toml`): the servers people run (nginx, HAProxy, sshd, a user's own),
//! as data. A file says how to start the server in the lab root, which templates take the port,
//! groups, chain and key, how to stop it, and which groups and chains it serves; the tool's
//! `lab` module runs it. Every error names the file, line and column. Schema: servers/README.md.

use crate::suite::Location;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// A server file, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    pub file: PathBuf,
    pub name: String,
    pub kind: ServerKind,
    /// The binary's path inside the root.
    pub binary: String,
    /// How its version is read: this command in the root, and the text its version follows.
    pub version_argv: Vec<String>,
    pub version_after: String,
    /// Template file (beside the server file) -> where it is rendered, placeholders filled.
    pub templates: BTreeMap<String, String>,
    pub start: Vec<String>,
    /// The signal that stops it gracefully (a name: QUIT, TERM, USR1, INT, HUP).
    pub stop_signal: String,
    pub workers: u32,
    pub groups_separator: String,
    /// The chains it serves, by suites/auth.toml's names (TLS) or host key types (SSH).
    pub chains: Vec<String>,
    /// pqprof's group name -> the server's own.
    pub groups: BTreeMap<String, String>,
    /// Resumption mode ("off", "on") -> the placeholders it sets.
    pub resumption: BTreeMap<String, BTreeMap<String, String>>,
    /// How the connections it saw resume are counted, where it can say: without it, the server
    /// serves full handshakes only.
    pub resumed_log: Option<ResumedLog>,
}

/// A log the server writes with `[resumption.on]`: a line a request, starting with `prefix`,
/// then `resumed` where the server saw the connection resume (nginx's `$ssl_session_reused`,
/// HAProxy's `ssl_fc_is_resumed`). pqprof's client makes one request a connection, so a line is
/// a connection. Other lines in the file are not counted.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumedLog {
    /// Where, as the server sees it: inside `{dir}/`.
    pub file: String,
    pub prefix: String,
    pub resumed: String,
}

impl ResumedLog {
    /// The connections a log's text shows, and those of them that resumed. A last line without
    /// its end is still being written, and not counted yet.
    pub fn count(&self, text: &str) -> (u64, u64) {
        let mut connections = 0;
        let mut resumed = 0;
        let complete = &text[..text.rfind('\n').map_or(0, |k| k + 1)];
        for rest in complete
            .lines()
            .filter_map(|l| l.strip_prefix(&self.prefix))
        {
            connections += 1;
            resumed += u64::from(rest.trim_end() == self.resumed);
        }
        (connections, resumed)
    }
}

/// What is wrong with a server file's `resumed_log` (`on`: it has a `[resumption.on]` table), if
/// anything.
fn resumed_log_problem(log: &ResumedLog, kind: ServerKind, on: bool) -> Option<String> {
    if !inside_dir(&log.file) {
        Some(format!("resumed_log: {} is not inside {{dir}}/", log.file))
    } else if log.prefix.is_empty() || log.resumed.is_empty() {
        Some("resumed_log: prefix and resumed, neither empty".into())
    } else if !on {
        Some("resumed_log without [resumption.on]: nothing turns resumption on".into())
    } else if kind == ServerKind::Ssh {
        Some("resumed_log: an SSH server has no resumption to count".into())
    } else {
        None
    }
}

/// Whether `path` names a file inside the server's folder: `{dir}/` once, then plain names
/// (none empty, `.` or `..`), so that a server file cannot have pqprof read or write elsewhere.
pub fn inside_dir(path: &str) -> bool {
    path.strip_prefix("{dir}/").is_some_and(|rest| {
        rest.split('/')
            .all(|p| !p.is_empty() && p != "." && p != ".." && !p.contains('{'))
    })
}

/// What a server speaks, and so which of pqprof's clients drive it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    Tls,
    Ssh,
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{at}: {message}")]
    Invalid { at: Location, message: String },
    #[error("{file}: cannot read: {source}")]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VersionDef {
    argv: Vec<String>,
    after: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDef {
    name: Spanned<String>,
    kind: Spanned<String>,
    binary: Spanned<String>,
    version: VersionDef,
    templates: BTreeMap<String, String>,
    start: Spanned<Vec<String>>,
    stop_signal: Spanned<String>,
    ready: Spanned<String>,
    workers: u32,
    groups_separator: String,
    chains: Vec<String>,
    groups: BTreeMap<String, String>,
    #[serde(default)]
    resumption: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default)]
    resumed_log: Option<Spanned<ResumedLog>>,
}

/// The signals a server file may name to stop its server.
pub const STOP_SIGNALS: [&str; 5] = ["TERM", "QUIT", "INT", "HUP", "USR1"];

/// The placeholders pqprof fills itself; a resumption table may add others.
pub const PLACEHOLDERS: [&str; 7] = ["address", "port", "groups", "cert", "key", "dir", "workers"];

fn invalid(at: Location, message: impl Into<String>) -> ServerError {
    ServerError::Invalid {
        at,
        message: message.into(),
    }
}

/// Reads and validates one server file.
pub fn load(file: &Path) -> Result<Server, ServerError> {
    let text = std::fs::read_to_string(file).map_err(|source| ServerError::Io {
        file: file.to_path_buf(),
        source,
    })?;
    parse(file, &text)
}

/// Parses and validates one server file's text.
pub fn parse(file: &Path, text: &str) -> Result<Server, ServerError> {
    let at = |offset: usize| crate::suite::locate(file, text, offset);
    let def: FileDef = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        invalid(at(offset), e.message().trim().to_string())
    })?;
    let kind = match def.kind.get_ref().as_str() {
        "tls" => ServerKind::Tls,
        "ssh" => ServerKind::Ssh,
        other => {
            return Err(invalid(
                at(def.kind.span().start),
                format!("unknown kind \"{other}\"; valid kinds: tls, ssh"),
            ))
        }
    };
    let name = def.name.get_ref();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(invalid(
            at(def.name.span().start),
            format!(
                "name \"{name}\": letters, digits, '-', '_' and '.' only (it names rows and files)"
            ),
        ));
    }
    if !def.binary.get_ref().starts_with('/') {
        return Err(invalid(
            at(def.binary.span().start),
            "binary: an absolute path inside the root",
        ));
    }
    if def.start.get_ref().is_empty() {
        return Err(invalid(
            at(def.start.span().start),
            "start: an empty command",
        ));
    }
    if !STOP_SIGNALS.contains(&def.stop_signal.get_ref().as_str()) {
        return Err(invalid(
            at(def.stop_signal.span().start),
            format!(
                "stop_signal \"{}\": one of {}",
                def.stop_signal.get_ref(),
                STOP_SIGNALS.join(", ")
            ),
        ));
    }
    if def.ready.get_ref() != "tcp" {
        return Err(invalid(
            at(def.ready.span().start),
            format!(
                "ready \"{}\": \"tcp\" (ready once the port accepts a connection) is the one way known",
                def.ready.get_ref()
            ),
        ));
    }
    let located = |key: &str| {
        text.find(&format!("\n{key}"))
            .map_or_else(|| at(0), |o| at(o + 1))
    };
    if def.groups.is_empty() {
        return Err(invalid(located("[groups]"), "[groups]: no group"));
    }
    if def.chains.is_empty() {
        return Err(invalid(located("chains"), "chains: no chain"));
    }
    if def.version.argv.is_empty() || def.version.after.is_empty() {
        return Err(invalid(
            located("version"),
            "version: argv and after, neither empty",
        ));
    }
    let resumed_log = match def.resumed_log {
        Some(log) => {
            let start = log.span().start;
            let log = log.into_inner();
            if let Some(why) = resumed_log_problem(&log, kind, def.resumption.contains_key("on")) {
                return Err(invalid(at(start), why));
            }
            Some(log)
        }
        None => None,
    };
    let server = Server {
        file: file.to_path_buf(),
        name: name.clone(),
        kind,
        binary: def.binary.into_inner(),
        version_argv: def.version.argv,
        version_after: def.version.after,
        templates: def.templates,
        start: def.start.into_inner(),
        stop_signal: def.stop_signal.into_inner(),
        workers: def.workers,
        groups_separator: def.groups_separator,
        chains: def.chains,
        groups: def.groups,
        resumption: def.resumption,
        resumed_log,
    };
    // Every placeholder a template or the start command uses is one pqprof or a resumption table
    // fills: a typo would otherwise reach the server as text.
    let known = |p: &str| {
        PLACEHOLDERS.contains(&p)
            || server.resumption.values().all(|t| t.contains_key(p))
                && !server.resumption.is_empty()
    };
    for word in &server.start {
        if let Some(p) = placeholders(word).into_iter().find(|p| !known(p)) {
            return Err(invalid(
                located("start"),
                format!(
                    "start: unknown placeholder {{{p}}}; known: {}",
                    PLACEHOLDERS.join(", ")
                ),
            ));
        }
    }
    for (template, target) in &server.templates {
        // A template is a file beside the server file, rendered into the run's folder: neither
        // may name a place outside them.
        let escapes = |path: &str| path.split('/').any(|part| part == "..");
        if template.contains('/') || escapes(template) {
            return Err(invalid(
                located("templates"),
                format!("templates: {template} must be a file name beside the server file"),
            ));
        }
        if !inside_dir(target) {
            return Err(invalid(
                located("templates"),
                format!("templates: {template} goes to {target}, not inside {{dir}}/"),
            ));
        }
        if let Some(p) = placeholders(target).into_iter().find(|p| !known(p)) {
            return Err(invalid(
                located("templates"),
                format!("templates: {template} goes to an unknown placeholder {{{p}}}"),
            ));
        }
    }
    Ok(server)
}

/// The `{name}` placeholders in a text, in order.
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close)
                if close > 0
                    && after[..close]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                out.push(&after[..close]);
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    out
}

/// `text` with every known `{name}` replaced by its value; other braces stay as they are (nginx's
/// blocks, a template's own braces).
pub fn fill(text: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = text.to_string();
    for (k, v) in values {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

impl Server {
    /// The server's spelling of a group list, or `None` where it does not serve one of them.
    pub fn groups_for(&self, groups: &[&str]) -> Option<String> {
        let mapped: Option<Vec<&str>> = groups
            .iter()
            .map(|g| self.groups.get(*g).map(String::as_str))
            .collect();
        Some(mapped?.join(&self.groups_separator))
    }

    /// The version in what the version command printed: the word after `version_after`.
    pub fn version_in(&self, printed: &str) -> Option<String> {
        let at = printed.find(&self.version_after)? + self.version_after.len();
        let word: String = printed[at..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ',')
            .collect();
        (!word.is_empty()).then_some(word)
    }

    /// The folder its templates are read from: the server file's.
    pub fn folder(&self) -> &Path {
        self.file.parent().unwrap_or(Path::new("."))
    }
}

/// Every server file (`*.toml`) in `dir`, in name order: the servers that load, and one line for
/// each that does not (so that one bad file leaves the others measured).
pub fn load_all(dir: &Path) -> (Vec<Server>, Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let (mut servers, mut errors) = (Vec::new(), Vec::new());
    for f in files {
        match load(&f) {
            Ok(s) if servers.iter().any(|x: &Server| x.name == s.name) => errors.push(format!(
                "{}: a second server named \"{}\"",
                f.display(),
                s.name
            )),
            Ok(s) => servers.push(s),
            Err(e) => errors.push(e.to_string()),
        }
    }
    (servers, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"name = "web"
kind = "tls"
binary = "/usr/sbin/web"
version = { argv = ["/usr/sbin/web", "-v"], after = "web/" }
templates = { "web.conf.in" = "{dir}/web.conf" }
start = ["/usr/sbin/web", "-c", "{dir}/web.conf"]
stop_signal = "QUIT"
ready = "tcp"
workers = 1
groups_separator = ":"
chains = ["ECDSA-P256", "ML-DSA-65"]

[groups]
X25519 = "x25519"
X25519MLKEM768 = "X25519MLKEM768"

[resumption.off]
tickets = "off"
[resumption.on]
tickets = "on"
"#;

    fn err(text: &str) -> String {
        parse(Path::new("servers/web.toml"), text)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_good_file_loads_with_its_groups_mapped() {
        let s = parse(Path::new("servers/web.toml"), GOOD).unwrap();
        assert_eq!(s.name, "web");
        assert_eq!(s.kind, ServerKind::Tls);
        assert_eq!(
            s.groups_for(&["X25519MLKEM768", "X25519"]).as_deref(),
            Some("X25519MLKEM768:x25519")
        );
        assert_eq!(s.groups_for(&["MLKEM768"]), None);
        assert_eq!(
            s.version_in("web version: web/1.26.3 (Debian)\n")
                .as_deref(),
            Some("1.26.3")
        );
        assert_eq!(s.version_in("OpenSSH_10.0p2 Debian-7, OpenSSL 3.5"), None);
        assert_eq!(s.folder(), Path::new("servers"));
    }

    #[test]
    fn a_bad_field_names_its_file_and_line() {
        let e = err(&GOOD.replace("stop_signal = \"QUIT\"", "stop_signal = \"KILL9\""));
        assert!(e.starts_with("servers/web.toml:7:"), "{e}");
        assert!(e.contains("one of TERM"), "{e}");
        let e = err(&GOOD.replace("kind = \"tls\"", "kind = \"quic\""));
        assert!(
            e.starts_with("servers/web.toml:2:") && e.contains("tls, ssh"),
            "{e}"
        );
        let e = err(&GOOD.replace("ready = \"tcp\"\n", ""));
        assert!(e.contains("missing field `ready`"), "{e}");
        let e = err(&GOOD.replace("binary = \"/usr/sbin/web\"", "binary = \"web\""));
        assert!(e.starts_with("servers/web.toml:3:"), "{e}");
        let e = err(&GOOD.replace("workers = 1", "workers = 1\nwrokers = 2"));
        assert!(e.contains("unknown field `wrokers`"), "{e}");
    }

    #[test]
    fn a_template_outside_its_folders_is_refused() {
        let e = err(&GOOD.replace("\"{dir}/web.conf\" }", "\"{dir}/../etc/web.conf\" }"));
        assert!(e.contains("not inside {dir}/"), "{e}");
        let e = err(&GOOD.replace("\"{dir}/web.conf\" }", "\"/etc/web.conf\" }"));
        assert!(e.contains("not inside {dir}/"), "{e}");
        // An empty part would make the rest absolute once {dir} is filled in, another
        // placeholder might be one.
        for target in [
            "{dir}//etc/web.conf",
            "{dir}/{dir}/web.conf",
            "{dir}/./web.conf",
        ] {
            let e = err(&GOOD.replace("\"{dir}/web.conf\" }", &format!("\"{target}\" }}")));
            assert!(e.contains("not inside {dir}/"), "{target}: {e}");
        }
        let e = err(&GOOD.replace("\"web.conf.in\"", "\"../../secret\""));
        assert!(
            e.contains("must be a file name beside the server file"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_placeholder_is_refused() {
        let e = err(&GOOD.replace("\"{dir}/web.conf\"]", "\"{dri}/web.conf\"]"));
        assert!(e.contains("unknown placeholder {dri}"), "{e}");
        // One every resumption table sets is known.
        let s = GOOD.replace("\"-c\",", "\"-t\", \"{tickets}\", \"-c\",");
        assert!(parse(Path::new("w.toml"), &s).is_ok());
    }

    #[test]
    fn a_resumed_log_is_inside_the_folder_and_counts_its_own_lines() {
        let with =
            |log: &str| GOOD.replace("workers = 1", &format!("workers = 1\nresumed_log = {log}"));
        let s = parse(
            Path::new("w.toml"),
            &with(r#"{ file = "{dir}/server.log", prefix = "reused ", resumed = "1" }"#),
        )
        .unwrap();
        let log = s.resumed_log.unwrap();
        // Four connections, two resumed (a near-miss "10" is a connection that did not); a
        // warning line is none, and a last line still being written is not counted yet.
        let text = "[WARNING] x\nreused 1\nreused 0\nreused 1\nreused 10\n";
        assert_eq!(log.count(text), (4, 2));
        assert_eq!(log.count(&format!("{text}reused ")), (4, 2));
        assert_eq!(log.count("reused 1"), (0, 0));
        let e = err(&with(
            r#"{ file = "/var/log/x", prefix = "r ", resumed = "1" }"#,
        ));
        assert!(
            e.starts_with("servers/web.toml:10:") && e.contains("not inside {dir}/"),
            "{e}"
        );
        let e = err(&with(r#"{ file = "{dir}/x", prefix = "", resumed = "1" }"#));
        assert!(e.contains("neither empty"), "{e}");
        let e = err(
            &with(r#"{ file = "{dir}/x", prefix = "r ", resumed = "1" }"#)
                .replace("[resumption.on]\ntickets = \"on\"\n", ""),
        );
        assert!(e.contains("nothing turns resumption on"), "{e}");
    }

    #[test]
    fn placeholders_are_found_and_filled_leaving_other_braces() {
        let text = "events { x {port}; } {groups}{ {not one} {cert}";
        assert_eq!(placeholders(text), vec!["port", "groups", "cert"]);
        let values: BTreeMap<String, String> = [("port", "8443"), ("groups", "a:b")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            fill(text, &values),
            "events { x 8443; } a:b{ {not one} {cert}"
        );
    }

    #[test]
    fn the_shipped_servers_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../servers");
        let (servers, errors) = load_all(&dir);
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert!(names.contains(&"nginx") && names.contains(&"haproxy") && names.contains(&"sshd"));
        for s in &servers {
            for template in s.templates.keys() {
                assert!(
                    s.folder().join(template).is_file(),
                    "{}: {template}",
                    s.name
                );
            }
        }
    }
}
