//! The authentication dimension of the real handshakes (`suites/auth.toml`, `kind = "auth"`): the
//! certificate chains a TLS 1.3 server presents, and which key-exchange group meets which of them
//! in which step. Data, like the groups: every error names the file, line and column.

use crate::algorithm::{self, Kind};
pub use crate::suite::is_auth_file;
use crate::suite::{Location, SuiteError};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// How a chain is presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// root -> intermediate -> leaf; the server sends leaf + intermediate, the client trusts the
    /// root: two certificate signatures to check.
    Chain,
    /// root -> leaf; the server sends the leaf alone, the client trusts the root: one signature to
    /// check (Paquin et al.'s setup, the CA as trust anchor).
    Leaf,
}

/// The full-handshake suite (suites/tls13-full.toml, tls13-auth.toml) of a group with an
/// authentication: "X25519MLKEM768 full handshake" with the baseline, "X25519MLKEM768 + ML-DSA-65
/// full handshake" with another.
pub fn full_suite(group: &str, auth: Option<&str>, baseline: &str) -> String {
    match auth {
        Some(a) if a != baseline => format!("{group} + {a} full handshake"),
        _ => format!("{group} full handshake"),
    }
}

/// The suite that composes a group's resumed handshake (suites/tls13-resumed.toml); the same for
/// every chain, since a resumption sends none.
pub fn resumed_suite(group: &str) -> String {
    format!("{group} resumed handshake")
}

/// One authentication: a signature algorithm and how its chain is presented.
#[derive(Debug, Clone)]
pub struct Auth {
    pub name: String,
    /// The signature algorithm of every certificate and of the CertificateVerify.
    pub algorithm: String,
    pub form: Form,
    /// TLS 1.3 SignatureScheme (from the algorithm registry) and its IANA name.
    pub scheme: u16,
    pub scheme_name: String,
    /// Bytes of padding the leaf carries in a private, non-critical extension (0: none): a size
    /// control, the baseline's calls with a post-quantum chain's bytes, so that what the bytes
    /// alone cost the stack is measured apart from the calls (#37).
    pub padding: usize,
    pub at: Location,
}

/// The most padding a leaf may carry: rustls refuses a handshake message over 65,535 bytes
/// (`MAX_HANDSHAKE_SIZE`), and the Certificate message holds the chain and its framing too.
pub const MAX_PADDING: usize = 60_000;

/// The steps a pairing of a group and an authentication runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Handshake,
    Capacity,
    Network,
}

impl Step {
    const NAMES: [&'static str; 3] = ["handshake", "capacity", "network"];

    fn from_name(s: &str) -> Option<Step> {
        Some(match s {
            "handshake" => Step::Handshake,
            "capacity" => Step::Capacity,
            "network" => Step::Network,
            _ => return None,
        })
    }
}

/// A key-exchange group that meets authentications beyond the baseline in some steps.
#[derive(Debug, Clone)]
pub(crate) struct Pairing {
    pub(crate) group: String,
    pub(crate) auths: Vec<String>,
    pub(crate) steps: Vec<Step>,
    /// Only the stacks over this transport make it (`transport = "quic"`); `None`: every stack.
    pub(crate) transport: Option<crate::results::Transport>,
}

/// The authentications of a protocol and their pairings.
#[derive(Debug, Clone)]
pub struct Auths {
    pub(crate) protocol: String,
    /// The authentication every group meets (the classical one).
    pub baseline: String,
    pub auths: Vec<Auth>,
    pub(crate) pairings: Vec<Pairing>,
}

impl Auths {
    /// Where no file says more: the classical chain alone, ECDSA-P256 (RFC 8446 section 4.2.3),
    /// which every group meets.
    pub fn baseline_only() -> Auths {
        let name = "ECDSA-P256";
        let alg = algorithm::find(name);
        Auths {
            protocol: "tls13".into(),
            baseline: name.into(),
            auths: vec![Auth {
                name: name.into(),
                algorithm: name.into(),
                form: Form::Chain,
                scheme: alg.and_then(|a| a.tls_scheme).unwrap_or(0x0403),
                scheme_name: alg
                    .and_then(|a| a.tls_scheme_name.clone())
                    .unwrap_or_else(|| "ecdsa_secp256r1_sha256".into()),
                padding: 0,
                at: Location {
                    file: "core/src/algorithms.toml".into(),
                    line: 0,
                    column: 0,
                },
            }],
            pairings: Vec::new(),
        }
    }

    pub fn find(&self, name: &str) -> Option<&Auth> {
        self.auths.iter().find(|a| a.name == name)
    }

    pub fn baseline(&self) -> Option<&Auth> {
        self.find(&self.baseline)
    }

    /// The authentications `group` meets in `step`: the baseline first, then its pairings'.
    pub fn for_group(&self, group: &str, step: Step) -> Vec<&Auth> {
        let mut out: Vec<&Auth> = self.baseline().into_iter().collect();
        for p in self
            .pairings
            .iter()
            .filter(|p| p.group == group && p.steps.contains(&step))
        {
            for a in p.auths.iter().filter_map(|n| self.find(n)) {
                if !out.iter().any(|o| o.name == a.name) {
                    out.push(a);
                }
            }
        }
        out
    }

    /// Whether a stack over `transport` makes `group` with `auth` at `step`: the baseline always,
    /// another where a pairing of `step` names it for every transport or for this one.
    pub fn pairs(
        &self,
        group: &str,
        auth: &str,
        step: Step,
        transport: crate::results::Transport,
    ) -> bool {
        auth == self.baseline
            || self.pairings.iter().any(|p| {
                p.group == group
                    && p.steps.contains(&step)
                    && p.auths.iter().any(|a| a == auth)
                    && p.transport.is_none_or(|t| t == transport)
            })
    }

    /// Every (group, authentication) of `step` beyond `group` x baseline, in the file's order.
    pub fn extra_pairs(&self, step: Step) -> Vec<(&str, &Auth)> {
        let mut out: Vec<(&str, &Auth)> = Vec::new();
        for p in self.pairings.iter().filter(|p| p.steps.contains(&step)) {
            for a in p.auths.iter().filter_map(|n| self.find(n)) {
                if a.name != self.baseline
                    && !out.iter().any(|(g, b)| *g == p.group && b.name == a.name)
                {
                    out.push((&p.group, a));
                }
            }
        }
        out
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDef {
    protocol: String,
    kind: String,
    baseline: Spanned<String>,
    auth: Vec<AuthDef>,
    #[serde(default)]
    pairing: Vec<PairingDef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AuthDef {
    name: Spanned<String>,
    algorithm: Spanned<String>,
    form: Spanned<String>,
    #[serde(default)]
    padding: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PairingDef {
    group: Spanned<String>,
    auths: Vec<Spanned<String>>,
    steps: Vec<Spanned<String>>,
    #[serde(default)]
    transport: Option<Spanned<String>>,
}

/// An authentication's `padding`: 0 where it has none, else a number of bytes from 1 to
/// `MAX_PADDING`.
fn padding(p: Option<&Spanned<i64>>, at: &dyn Fn(usize) -> Location) -> Result<usize, SuiteError> {
    let Some(p) = p else {
        return Ok(0);
    };
    usize::try_from(*p.get_ref())
        .ok()
        .filter(|&n| (1..=MAX_PADDING).contains(&n))
        .ok_or_else(|| {
            invalid(
                at(p.span().start),
                format!(
                    "padding {} is not a number of bytes from 1 to {MAX_PADDING}",
                    p.get_ref()
                ),
            )
        })
}

/// A size control is the baseline's chain with more bytes: the same algorithm and form, and one
/// per file, since the composition takes each stack's cost per byte from it.
fn size_control(
    auths: &[Auth],
    def: &FileDef,
    at: &dyn Fn(usize) -> Location,
) -> Result<(), SuiteError> {
    let Some(base) = auths.iter().find(|a| &a.name == def.baseline.get_ref()) else {
        return Ok(());
    };
    let mut padded = 0;
    for (a, d) in auths.iter().zip(&def.auth) {
        let Some(p) = &d.padding else {
            continue;
        };
        padded += 1;
        let why = if a.name == base.name {
            "the baseline cannot be padded: a size control is measured against it".to_string()
        } else if (&a.algorithm, a.form) != (&base.algorithm, base.form) {
            format!(
                "a padded authentication is a size control of the baseline {}: its algorithm and form must be the baseline's",
                base.name
            )
        } else if padded > 1 {
            "a second padded authentication: the composition takes each stack's cost per byte from one size control".to_string()
        } else {
            continue;
        };
        return Err(invalid(at(p.span().start), why));
    }
    Ok(())
}

fn invalid(at: Location, message: String) -> SuiteError {
    SuiteError::Invalid { at, message }
}

/// Parses one authentication file; `groups` are the key-exchange suites' names a pairing may name
/// (`None`: any name).
pub(crate) fn parse(file: &Path, text: &str, groups: Option<&[&str]>) -> Result<Auths, SuiteError> {
    let at = |offset: usize| crate::suite::locate(file, text, offset);
    let def: FileDef = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        invalid(at(offset), e.message().trim().to_string())
    })?;
    if def.kind != "auth" {
        return Err(invalid(
            at(0),
            format!("kind \"{}\" is not \"auth\"", def.kind),
        ));
    }
    let mut auths: Vec<Auth> = Vec::new();
    for a in &def.auth {
        let name = a.name.get_ref();
        if auths.iter().any(|x| &x.name == name) {
            return Err(invalid(
                at(a.name.span().start),
                format!("authentication \"{name}\" is defined twice"),
            ));
        }
        let alg_name = a.algorithm.get_ref();
        let alg = algorithm::find(alg_name)
            .filter(|x| x.kind == Kind::Sig)
            .ok_or_else(|| {
                invalid(
                    at(a.algorithm.span().start),
                    format!("\"{alg_name}\" is not a signature algorithm of the registry (core/src/algorithms.toml)"),
                )
            })?;
        let (Some(scheme), Some(scheme_name)) = (alg.tls_scheme, alg.tls_scheme_name.clone())
        else {
            return Err(invalid(
                at(a.algorithm.span().start),
                format!("{alg_name} has no TLS 1.3 signature scheme in the registry: it cannot authenticate a TLS 1.3 handshake"),
            ));
        };
        let form = match a.form.get_ref().as_str() {
            "chain" => Form::Chain,
            "leaf" => Form::Leaf,
            other => {
                return Err(invalid(
                    at(a.form.span().start),
                    format!("unknown form \"{other}\"; valid forms: chain, leaf"),
                ))
            }
        };
        let padding = padding(a.padding.as_ref(), &at)?;
        auths.push(Auth {
            name: name.clone(),
            algorithm: alg_name.clone(),
            form,
            scheme,
            scheme_name,
            padding,
            at: at(a.name.span().start),
        });
    }
    if !auths.iter().any(|a| &a.name == def.baseline.get_ref()) {
        return Err(invalid(
            at(def.baseline.span().start),
            format!(
                "baseline \"{}\" is not an authentication of this file",
                def.baseline.get_ref()
            ),
        ));
    }
    size_control(&auths, &def, &at)?;
    let mut pairings = Vec::new();
    for p in &def.pairing {
        if let Some(groups) = groups.filter(|g| !g.contains(&p.group.get_ref().as_str())) {
            return Err(invalid(
                at(p.group.span().start),
                format!(
                    "unknown group \"{}\"; groups of the key-exchange suites: {}",
                    p.group.get_ref(),
                    groups.join(", ")
                ),
            ));
        }
        for a in &p.auths {
            if !auths.iter().any(|x| &x.name == a.get_ref()) {
                return Err(invalid(
                    at(a.span().start),
                    format!("unknown authentication \"{}\"", a.get_ref()),
                ));
            }
        }
        let mut steps = Vec::new();
        for s in &p.steps {
            steps.push(Step::from_name(s.get_ref()).ok_or_else(|| {
                invalid(
                    at(s.span().start),
                    format!(
                        "unknown step \"{}\"; valid steps: {}",
                        s.get_ref(),
                        Step::NAMES.join(", ")
                    ),
                )
            })?);
        }
        let transport = match p
            .transport
            .as_ref()
            .map(|t| (t.get_ref().as_str(), t.span()))
        {
            None => None,
            Some(("tcp", _)) => Some(crate::results::Transport::Tcp),
            Some(("quic", _)) => Some(crate::results::Transport::Quic),
            Some((other, span)) => {
                return Err(invalid(
                    at(span.start),
                    format!("unknown transport \"{other}\"; valid transports: tcp, quic"),
                ))
            }
        };
        pairings.push(Pairing {
            group: p.group.get_ref().clone(),
            auths: p.auths.iter().map(|a| a.get_ref().clone()).collect(),
            steps,
            transport,
        });
    }
    Ok(Auths {
        protocol: def.protocol,
        baseline: def.baseline.get_ref().clone(),
        auths,
        pairings,
    })
}

/// The authentication file of `protocol` in a suite folder (or the file itself), if there is one.
pub fn load(
    path: &Path,
    protocol: &str,
    groups: Option<&[&str]>,
) -> Result<Option<Auths>, SuiteError> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| SuiteError::Io {
                file: path.to_path_buf(),
                source: e,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        v.sort();
        v
    } else {
        vec![path.to_path_buf()]
    };
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| SuiteError::Io {
            file: f.clone(),
            source: e,
        })?;
        if !is_auth_file(&text) {
            continue;
        }
        let a = parse(&f, &text, groups)?;
        if a.protocol == protocol {
            return Ok(Some(a));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUPS: [&str; 2] = ["X25519", "X25519MLKEM768"];

    fn file(extra: &str) -> String {
        format!(
            "protocol = \"tls13\"\nkind = \"auth\"\nbaseline = \"ECDSA-P256\"\n\n[[auth]]\nname = \"ECDSA-P256\"\nalgorithm = \"ECDSA-P256\"\nform = \"chain\"\n\n[[auth]]\nname = \"ML-DSA-65\"\nalgorithm = \"ML-DSA-65\"\nform = \"chain\"\n{extra}"
        )
    }

    fn err(text: &str) -> String {
        parse(Path::new("a.toml"), text, Some(&GROUPS))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn the_committed_file_parses_and_pairs_every_group_with_the_baseline() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites");
        let groups = ["X25519", "X25519MLKEM768", "SecP256r1MLKEM768", "MLKEM768"];
        let a = load(&dir, "tls13", Some(&groups))
            .unwrap()
            .expect("suites/auth.toml");
        assert_eq!(a.baseline, "ECDSA-P256");
        let b = a.baseline().unwrap();
        assert_eq!(
            (b.scheme, b.scheme_name.as_str(), b.form),
            (0x0403, "ecdsa_secp256r1_sha256", Form::Chain)
        );
        for g in groups {
            assert_eq!(a.for_group(g, Step::Handshake)[0].name, "ECDSA-P256");
        }
        let hybrid: Vec<&str> = a
            .for_group("X25519MLKEM768", Step::Handshake)
            .iter()
            .map(|x| x.name.as_str())
            .collect();
        assert!(
            hybrid.starts_with(&["ECDSA-P256", "ML-DSA-44", "ML-DSA-65", "ML-DSA-87"]),
            "{hybrid:?}"
        );
        assert!(a
            .for_group("MLKEM768", Step::Handshake)
            .iter()
            .any(|x| x.name == "ML-DSA-65"));
        assert_eq!(a.find("ML-DSA-65").unwrap().scheme, 0x0905);
    }

    #[test]
    fn a_pairing_over_one_transport_is_made_by_its_stacks_alone() {
        use crate::results::Transport::{Quic, Tcp};
        let a = parse(
            Path::new("a.toml"),
            &file("\n[[pairing]]\ngroup = \"X25519\"\nauths = [\"ML-DSA-65\"]\nsteps = [\"network\"]\ntransport = \"quic\"\n"),
            Some(&GROUPS),
        )
        .unwrap();
        assert!(a.pairs("X25519", "ML-DSA-65", Step::Network, Quic));
        assert!(!a.pairs("X25519", "ML-DSA-65", Step::Network, Tcp));
        assert!(!a.pairs("X25519", "ML-DSA-65", Step::Handshake, Quic));
        assert!(!a.pairs("X25519MLKEM768", "ML-DSA-65", Step::Network, Quic));
        // The baseline, always; and `for_group` lists what any transport makes (the chains made).
        assert!(a.pairs("X25519MLKEM768", "ECDSA-P256", Step::Handshake, Tcp));
        assert_eq!(a.for_group("X25519", Step::Network).len(), 2);
    }

    #[test]
    fn pairings_add_to_the_baseline_per_step() {
        let a = parse(
            Path::new("a.toml"),
            &file("\n[[pairing]]\ngroup = \"X25519MLKEM768\"\nauths = [\"ML-DSA-65\"]\nsteps = [\"network\"]\n"),
            Some(&GROUPS),
        )
        .unwrap();
        assert_eq!(a.for_group("X25519MLKEM768", Step::Handshake).len(), 1);
        assert_eq!(a.for_group("X25519MLKEM768", Step::Network).len(), 2);
        assert_eq!(a.extra_pairs(Step::Network).len(), 1);
        assert!(a.extra_pairs(Step::Capacity).is_empty());
    }

    #[test]
    fn bad_input_names_the_place() {
        assert!(err(&file(
            "\n[[pairing]]\ngroup = \"X448\"\nauths = [\"ML-DSA-65\"]\nsteps = [\"handshake\"]\n"
        ))
        .starts_with("a.toml:16:9: unknown group \"X448\""));
        assert!(err(&file("\n[[pairing]]\ngroup = \"X25519\"\nauths = [\"Falcon-512\"]\nsteps = [\"handshake\"]\n"))
            .contains("unknown authentication \"Falcon-512\""));
        assert!(err(&file(
            "\n[[pairing]]\ngroup = \"X25519\"\nauths = [\"ML-DSA-65\"]\nsteps = [\"lunch\"]\n"
        ))
        .contains("unknown step \"lunch\""));
        assert!(err(&file(
            "\n[[pairing]]\ngroup = \"X25519\"\nauths = [\"ML-DSA-65\"]\nsteps = [\"network\"]\ntransport = \"sctp\"\n"
        ))
        .contains("unknown transport \"sctp\"; valid transports: tcp, quic"));
        let falcon =
            file("\n[[auth]]\nname = \"F\"\nalgorithm = \"Falcon-512\"\nform = \"chain\"\n");
        assert!(
            err(&falcon).contains("Falcon-512 has no TLS 1.3 signature scheme"),
            "{}",
            err(&falcon)
        );
        let kem = file("\n[[auth]]\nname = \"K\"\nalgorithm = \"ML-KEM-768\"\nform = \"chain\"\n");
        assert!(err(&kem).contains("is not a signature algorithm"));
        let form = file("\n[[auth]]\nname = \"X\"\nalgorithm = \"ML-DSA-44\"\nform = \"tree\"\n");
        assert!(err(&form).contains("unknown form \"tree\""));
        assert!(
            err(&file("").replace("baseline = \"ECDSA-P256\"", "baseline = \"RSA\""))
                .contains("baseline \"RSA\"")
        );
        assert!(is_auth_file(&file("")) && !is_auth_file("kind = \"kex\""));
        for bad in ["0", "-5", "60001"] {
            let padded = file(&format!(
                "\n[[auth]]\nname = \"P\"\nalgorithm = \"ECDSA-P256\"\nform = \"chain\"\npadding = {bad}\n"
            ));
            assert!(
                err(&padded).starts_with(&format!(
                    "a.toml:19:11: padding {bad} is not a number of bytes from 1 to 60000"
                )),
                "{}",
                err(&padded)
            );
        }
    }

    #[test]
    fn only_one_padded_copy_of_the_baseline_is_a_size_control() {
        let padded = |name: &str, alg: &str, form: &str| {
            format!("\n[[auth]]\nname = \"{name}\"\nalgorithm = \"{alg}\"\nform = \"{form}\"\npadding = 100\n")
        };
        let e = err(&file(&padded("P", "ML-DSA-44", "chain")));
        assert!(e.starts_with("a.toml:19:11: a padded authentication is a size control of the baseline ECDSA-P256"), "{e}");
        let e = err(&file(&padded("P", "ECDSA-P256", "leaf")));
        assert!(e.contains("must be the baseline's"), "{e}");
        let two = file(&(padded("P", "ECDSA-P256", "chain") + &padded("Q", "ECDSA-P256", "chain")));
        assert!(
            err(&two).starts_with("a.toml:25:11: a second padded authentication"),
            "{}",
            err(&two)
        );
        let base = file("").replacen("form = \"chain\"\n", "form = \"chain\"\npadding = 5\n", 1);
        assert!(
            err(&base).starts_with("a.toml:9:11: the baseline cannot be padded"),
            "{}",
            err(&base)
        );
    }

    #[test]
    fn a_padded_authentication_keeps_its_algorithm_and_carries_its_bytes() {
        let a = parse(
            Path::new("a.toml"),
            &file("\n[[auth]]\nname = \"P\"\nalgorithm = \"ECDSA-P256\"\nform = \"chain\"\npadding = 13450\n"),
            Some(&GROUPS),
        )
        .unwrap();
        let p = a.find("P").unwrap();
        assert_eq!(
            (p.algorithm.as_str(), p.scheme, p.padding),
            ("ECDSA-P256", 0x0403, 13_450)
        );
        assert_eq!(a.baseline().unwrap().padding, 0);
    }
}
