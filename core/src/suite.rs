//! Suite files (`suites/*.toml`) -> a validated model. Every error names the file, line and column.

use crate::algorithm::{self, Operation};
pub use crate::results::TrackKind;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use thiserror::Error;
use toml::Spanned;

/// A place in a suite file, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

#[derive(Debug, Error)]
pub enum SuiteError {
    #[error("{at}: {message}")]
    Invalid { at: Location, message: String },
    #[error("{file}: cannot read: {source}")]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: no suite files (*.toml) found")]
    Empty(PathBuf),
}

#[derive(Debug, Clone)]
pub struct PhaseSpec {
    pub operation: Operation,
    pub algorithm: String,
    /// How many times the phase happens in one handshake (0: measured and shown, not composed).
    pub count: u32,
    pub at: Location,
}

/// The inputs an operation works on, fixed by the suite file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Workload {
    /// AEAD payload and additional-data sizes.
    pub payload_bytes: usize,
    pub aad_bytes: usize,
}

#[derive(Debug, Clone)]
pub struct Suite {
    pub name: String,
    pub protocol: String,
    pub kind: TrackKind,
    pub baseline: Option<String>,
    pub code_point: Option<String>,
    /// Backends allowed to serve this suite's phases; `None` means any.
    pub backends: Option<Vec<String>>,
    pub phases: Vec<PhaseSpec>,
    pub workload: Workload,
    pub at: Location,
}

impl Suite {
    /// (client share, server share) in bytes, summed over the suite's distinct algorithms (a hybrid
    /// group sends both parts each way); `None` for tracks without a key exchange.
    pub fn wire_shares(&self) -> Option<(usize, usize)> {
        if !matches!(
            self.kind,
            TrackKind::Kex | TrackKind::Full | TrackKind::Resumed
        ) {
            return None;
        }
        let mut seen: Vec<&str> = Vec::new();
        let (mut client, mut server) = (0, 0);
        for p in self.phases.iter().filter(|p| {
            matches!(
                p.operation.kind(),
                algorithm::Kind::Kem | algorithm::Kind::Dh
            )
        }) {
            if seen.contains(&p.algorithm.as_str()) {
                continue;
            }
            seen.push(&p.algorithm);
            let (c, s) = algorithm::find(&p.algorithm)?.wire_shares()?;
            client += c;
            server += s;
        }
        Some((client, server))
    }

    /// Client share + server share.
    pub fn wire_bytes(&self) -> Option<usize> {
        self.wire_shares().map(|(c, s)| c + s)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDef {
    protocol: String,
    kind: Spanned<String>,
    baseline: Option<Spanned<String>>,
    message: Option<Spanned<String>>,
    payload_bytes: Option<usize>,
    aad_bytes: Option<usize>,
    suite: Vec<SuiteDef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteDef {
    name: Spanned<String>,
    code_point: Option<String>,
    backends: Option<Vec<Spanned<String>>>,
    phases: Spanned<Vec<PhaseDef>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PhaseDef {
    operation: Spanned<String>,
    algorithm: Spanned<String>,
    count: Spanned<i64>,
}

/// The messages a signature track may sign (see suites/signatures.toml).
const MESSAGES: [&str; 1] = ["tls13-certificate-verify"];
/// The most times one phase may occur in a handshake (also enforced on results files by `check`).
pub(crate) const MAX_COUNT: i64 = 1024;

/// How a page names a protocol of the suite files ("tls13" -> "TLS 1.3", "ssh" -> "SSH").
pub(crate) fn protocol_label(protocol: &str) -> String {
    match protocol {
        "tls13" => "TLS 1.3".into(),
        "ssh" => "SSH".into(),
        other => other.to_string(),
    }
}

/// Loads one file or every `*.toml` in a folder (sorted by name). `backends` are the valid names.
pub fn load(path: &Path, backends: &[&str]) -> Result<Vec<Suite>, SuiteError> {
    let files = if path.is_dir() {
        let entries = std::fs::read_dir(path).map_err(|e| io(path, e))?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    if files.is_empty() {
        return Err(SuiteError::Empty(path.to_path_buf()));
    }
    let mut suites: Vec<Suite> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| io(&file, e))?;
        // Authentication files are the other dimension of the handshakes (auth.rs reads them).
        if is_auth_file(&text) || is_flights_file(&text) {
            continue;
        }
        for suite in parse(&file, &text, backends)? {
            if let Some(prev) = suites.iter().find(|s| s.name == suite.name) {
                return Err(invalid(
                    suite.at.clone(),
                    format!("suite \"{}\" is already defined at {}", suite.name, prev.at),
                ));
            }
            suites.push(suite);
        }
    }
    check_workloads(&suites)?;
    Ok(suites)
}

fn io(file: &Path, source: std::io::Error) -> SuiteError {
    SuiteError::Io {
        file: file.to_path_buf(),
        source,
    }
}

fn invalid(at: Location, message: String) -> SuiteError {
    SuiteError::Invalid { at, message }
}

/// Whether a suite folder's file is an authentication file (`kind = "auth"`), which `load`
/// leaves to auth.rs.
pub fn is_auth_file(text: &str) -> bool {
    file_kind(text).as_deref() == Some("auth")
}

/// Whether a suite folder's file is a flights file (`kind = "flights"`), which `load` leaves to
/// flow.rs.
pub(crate) fn is_flights_file(text: &str) -> bool {
    file_kind(text).as_deref() == Some("flights")
}

/// A suite folder's file's `kind`, where it parses as TOML and has one.
fn file_kind(text: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Kind {
        kind: Option<String>,
    }
    toml::from_str::<Kind>(text).ok()?.kind
}

/// Parses and validates one suite file's text.
pub fn parse(file: &Path, text: &str, backends: &[&str]) -> Result<Vec<Suite>, SuiteError> {
    let at = |offset: usize| locate(file, text, offset);
    let def: FileDef = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        invalid(at(offset), e.message().trim().to_string())
    })?;

    let kind = TrackKind::from_name(def.kind.get_ref()).ok_or_else(|| {
        invalid(
            at(def.kind.span().start),
            format!(
                "unknown kind \"{}\"; valid kinds: {}",
                def.kind.get_ref(),
                TrackKind::NAMES.join(", ")
            ),
        )
    })?;
    if let Some(m) = &def.message {
        if !MESSAGES.contains(&m.get_ref().as_str()) {
            return Err(invalid(
                at(m.span().start),
                format!(
                    "unknown message \"{}\"; valid messages: {}",
                    m.get_ref(),
                    MESSAGES.join(", ")
                ),
            ));
        }
    }
    let workload = match kind {
        TrackKind::Record => Workload {
            payload_bytes: def.payload_bytes.filter(|&n| n > 0).ok_or_else(|| {
                invalid(
                    at(def.kind.span().start),
                    "a record track needs payload_bytes > 0".into(),
                )
            })?,
            aad_bytes: def.aad_bytes.unwrap_or(0),
        },
        _ => Workload::default(),
    };
    if def.suite.is_empty() {
        return Err(invalid(at(0), "no [[suite]] in this file".into()));
    }

    let mut suites = Vec::new();
    for s in &def.suite {
        let mut phases: Vec<PhaseSpec> = Vec::new();
        if s.phases.get_ref().is_empty() {
            return Err(invalid(
                at(s.phases.span().start),
                format!("suite \"{}\" has no phases", s.name.get_ref()),
            ));
        }
        for p in s.phases.get_ref() {
            let phase = phase(p, kind, &at)?;
            if phases
                .iter()
                .any(|q| q.operation == phase.operation && q.algorithm == phase.algorithm)
            {
                return Err(invalid(
                    phase.at,
                    format!(
                        "{} {} appears twice in suite \"{}\": raise its count instead",
                        phase.algorithm,
                        phase.operation,
                        s.name.get_ref()
                    ),
                ));
            }
            phases.push(phase);
        }
        if phases.iter().all(|p| p.count == 0) {
            return Err(invalid(
                at(s.phases.span().start),
                format!(
                    "suite \"{}\": every phase has count 0, so nothing is composed",
                    s.name.get_ref()
                ),
            ));
        }
        let allowed = match &s.backends {
            None => None,
            Some(list) => {
                let mut names = Vec::new();
                for b in list {
                    if !backends.contains(&b.get_ref().as_str()) {
                        return Err(invalid(
                            at(b.span().start),
                            format!(
                                "unknown backend \"{}\"; valid backends: {}",
                                b.get_ref(),
                                backends.join(", ")
                            ),
                        ));
                    }
                    names.push(b.get_ref().clone());
                }
                Some(names)
            }
        };
        suites.push(Suite {
            name: s.name.get_ref().clone(),
            protocol: def.protocol.clone(),
            kind,
            baseline: def.baseline.as_ref().map(|b| b.get_ref().clone()),
            code_point: s.code_point.clone(),
            backends: allowed,
            phases,
            workload,
            at: at(s.name.span().start),
        });
    }
    if let Some(b) = &def.baseline {
        if !suites.iter().any(|s| &s.name == b.get_ref()) {
            let names: Vec<&str> = suites.iter().map(|s| s.name.as_str()).collect();
            return Err(invalid(
                at(b.span().start),
                format!(
                    "baseline \"{}\" is not a suite of this file; suites here: {}",
                    b.get_ref(),
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(suites)
}

fn phase(
    p: &PhaseDef,
    kind: TrackKind,
    at: &dyn Fn(usize) -> Location,
) -> Result<PhaseSpec, SuiteError> {
    let op_name = p.operation.get_ref();
    let operation = Operation::from_name(op_name).ok_or_else(|| {
        let valid: Vec<&str> = Operation::ALL.iter().map(|o| o.name()).collect();
        invalid(
            at(p.operation.span().start),
            format!(
                "unknown operation \"{op_name}\"; valid operations: {}",
                valid.join(", ")
            ),
        )
    })?;
    let alg_name = p.algorithm.get_ref();
    let alg = algorithm::find(alg_name).ok_or_else(|| {
        invalid(
            at(p.algorithm.span().start),
            format!(
                "unknown algorithm \"{alg_name}\"; valid algorithms: {}",
                algorithm::names().join(", ")
            ),
        )
    })?;
    if operation.kind() != alg.kind {
        return Err(invalid(
            at(p.operation.span().start),
            format!(
                "operation {operation} does not apply to {alg_name}, which is a {:?} algorithm",
                alg.kind
            )
            .to_lowercase(),
        ));
    }
    if !kind.allows(alg.kind) {
        return Err(invalid(
            at(p.operation.span().start),
            format!("operation {operation} does not belong in a {kind:?} track").to_lowercase(),
        ));
    }
    let count = *p.count.get_ref();
    if !(0..=MAX_COUNT).contains(&count) {
        return Err(invalid(
            at(p.count.span().start),
            format!("count {count} is out of range 0..={MAX_COUNT}"),
        ));
    }
    Ok(PhaseSpec {
        operation,
        algorithm: alg_name.clone(),
        count: count as u32,
        at: at(p.operation.span().start),
    })
}

/// Phases are measured once per run and shared, so two files must not ask for different inputs.
fn check_workloads(suites: &[Suite]) -> Result<(), SuiteError> {
    for (i, a) in suites.iter().enumerate() {
        for b in &suites[i + 1..] {
            let shares_phase = a.phases.iter().any(|p| {
                b.phases
                    .iter()
                    .any(|q| q.algorithm == p.algorithm && q.operation == p.operation)
            });
            if shares_phase && a.workload != b.workload {
                return Err(invalid(
                    b.at.clone(),
                    format!("suite \"{}\" shares a phase with \"{}\" ({}) but declares a different payload", b.name, a.name, a.at),
                ));
            }
        }
    }
    Ok(())
}

pub(crate) fn locate(file: &Path, text: &str, offset: usize) -> Location {
    // A span that does not fall on a character boundary (it should) still gives a line.
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Location {
        file: file.to_path_buf(),
        line,
        column,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BACKENDS: [&str; 3] = ["liboqs", "rustcrypto", "openssl"];

    fn err(text: &str) -> String {
        parse(Path::new("t.toml"), text, &BACKENDS)
            .unwrap_err()
            .to_string()
    }

    const GOOD: &str = r#"
protocol = "tls13"
kind = "kex"
baseline = "X25519"

[[suite]]
name = "X25519"
phases = [
  { operation = "dh.keygen", algorithm = "X25519", count = 2 },
  { operation = "dh.derive", algorithm = "X25519", count = 2 },
]
"#;

    #[test]
    fn committed_suites_load_with_the_published_wire_sizes() {
        let suites = load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites"),
            &BACKENDS,
        )
        .unwrap();
        let wire = |n: &str| suites.iter().find(|s| s.name == n).unwrap().wire_bytes();
        assert_eq!(wire("X25519"), Some(64));
        assert_eq!(wire("X25519MLKEM768"), Some(2336));
        assert_eq!(wire("SecP256r1MLKEM768"), Some(2402));
        assert_eq!(wire("MLKEM768"), Some(2272));
        assert_eq!(wire("mlkem768x25519-sha256"), Some(2336));
        assert_eq!(wire("ML-DSA-65"), None);
        assert_eq!(
            suites
                .iter()
                .filter(|s| s.kind == TrackKind::Signature)
                .count(),
            8
        );
        assert_eq!(
            wire("X25519MLKEM768 full handshake"),
            Some(2336),
            "key shares only"
        );
        // A resumption keeps the key exchange and signs nothing.
        assert_eq!(wire("X25519MLKEM768 resumed handshake"), Some(2336));
        let resumed: Vec<&Suite> = suites
            .iter()
            .filter(|s| s.kind == TrackKind::Resumed)
            .collect();
        assert_eq!(resumed.len(), 2);
        assert!(resumed.iter().all(|s| s
            .phases
            .iter()
            .all(|p| p.operation.kind() != algorithm::Kind::Sig)));
    }

    #[test]
    fn good_file_parses() {
        let s = parse(Path::new("t.toml"), GOOD, &BACKENDS).unwrap();
        assert_eq!(s[0].phases[1].count, 2);
        assert_eq!(s[0].at.line, 7);
    }

    #[test]
    fn malformed_toml_names_line_and_column() {
        let e = err("protocol = \"tls13\"\nkind = \"kex\"\n[[suite]\nname = 1\n");
        assert!(e.starts_with("t.toml:3:"), "{e}");
    }

    #[test]
    fn unknown_algorithm_lists_valid_names() {
        let e = err(&GOOD.replace(
            "algorithm = \"X25519\", count = 2 },\n  { operation = \"dh.derive\"",
            "algorithm = \"X25518\", count = 2 },\n  { operation = \"dh.derive\"",
        ));
        assert!(e.starts_with("t.toml:9:"), "{e}");
        assert!(
            e.contains("unknown algorithm \"X25518\"") && e.contains("ML-KEM-768"),
            "{e}"
        );
    }

    #[test]
    fn unknown_operation_lists_valid_names() {
        let e = err(&GOOD.replace("dh.derive", "dh.agree"));
        assert!(
            e.starts_with("t.toml:10:") && e.contains("valid operations: kem.keygen"),
            "{e}"
        );
    }

    #[test]
    fn unknown_backend_lists_valid_names() {
        let e = err(&GOOD.replace("phases = [", "backends = [\"boringssl\"]\nphases = ["));
        assert!(
            e.contains(
                "unknown backend \"boringssl\"; valid backends: liboqs, rustcrypto, openssl"
            ),
            "{e}"
        );
    }

    #[test]
    fn wrong_kind_count_and_baseline_are_rejected() {
        assert!(err(&GOOD.replace(
            "\"dh.derive\", algorithm = \"X25519\"",
            "\"kem.decaps\", algorithm = \"X25519\""
        ))
        .contains("does not apply"));
        assert!(
            err(&GOOD.replace("count = 2 },\n]", "count = 9999 },\n]")).contains("out of range")
        );
        assert!(
            err(&GOOD.replace("baseline = \"X25519\"", "baseline = \"X448\""))
                .contains("not a suite of this file")
        );
        assert!(err(&GOOD.replace("kind = \"kex\"", "kind = \"kx\"")).contains("valid kinds: kex"));
        assert!(err(&GOOD.replace("dh.derive", "dh.keygen")).contains("appears twice"));
        assert!(err(&GOOD.replace("kind = \"kex\"", "kind = \"signature\""))
            .contains("does not belong"));
        assert!(err(&GOOD.replace("count = 2", "count = 0")).contains("nothing is composed"));
        assert!(err(&GOOD.replace("protocol", "protocl")).contains("unknown field"));
    }

    #[test]
    fn a_missing_file_is_an_io_error_naming_it() {
        let e = load(Path::new("no/such.toml"), &BACKENDS)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("no/such.toml: cannot read"), "{e}");
    }
}
