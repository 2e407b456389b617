//! What `check` finds: typed, as warnings are (`results::Warning`), so that a caller or a test can
//! tell a figure its raw data do not give from a scenario its evidence contradicts, and the text
//! stays what `pqprof check` prints.

use std::fmt;

/// The kinds of disagreement a results file can have with itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A stored figure that its raw data, recomputed, do not give (beyond `TOLERANCE_PCT`).
    Recomputed,
    /// Raw data that do not fit together: counts or lengths that differ, a figure without what it
    /// is made from (or the reverse), an entry twice or not at all.
    Incomplete,
    /// Evidence that contradicts the scenario or the protocol: a negotiated group, scheme, chain,
    /// size, flight or segment other than the one declared.
    Evidence,
    /// A measurement outside what can happen: a part over its whole, a value out of its range.
    Bound,
}

impl Kind {
    /// How `pqprof check` names the kind.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Recomputed => "recomputed",
            Kind::Incomplete => "incomplete",
            Kind::Evidence => "evidence",
            Kind::Bound => "bound",
        }
    }
}

/// One way a results file disagrees with its own raw data: its kind, the section it is in and,
/// in words, the place (phase, scenario, cell) and what differs.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub(crate) kind: Kind,
    /// The results file's section: "phases", "handshakes", "network", ... (`check::check` sets it).
    pub(crate) section: &'static str,
    pub(crate) text: String,
}

impl Problem {
    fn new(kind: Kind, text: impl Into<String>) -> Problem {
        Problem {
            kind,
            section: "",
            text: text.into(),
        }
    }

    pub fn recomputed(text: impl Into<String>) -> Problem {
        Problem::new(Kind::Recomputed, text)
    }

    pub fn incomplete(text: impl Into<String>) -> Problem {
        Problem::new(Kind::Incomplete, text)
    }

    pub fn evidence(text: impl Into<String>) -> Problem {
        Problem::new(Kind::Evidence, text)
    }

    pub fn bound(text: impl Into<String>) -> Problem {
        Problem::new(Kind::Bound, text)
    }

    /// The same problem, placed in `section`.
    pub fn in_section(self, section: &'static str) -> Problem {
        Problem { section, ..self }
    }

    /// As `pqprof check` prints it: where and what kind, then the text.
    pub fn line(&self) -> String {
        match self.section {
            "" => format!("[{}] {}", self.kind.name(), self.text),
            s => format!("[{s} · {}] {}", self.kind.name(), self.text),
        }
    }

    /// Whether it is of `kind` and its text says `what` (for tests and callers that look for one).
    pub fn is(&self, kind: Kind, what: &str) -> bool {
        self.kind == kind && self.text.contains(what)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_prints_its_text_and_keeps_its_kind_and_section() {
        let p = Problem::evidence("rustls X25519: negotiated P-256").in_section("handshakes");
        assert_eq!(p.to_string(), "rustls X25519: negotiated P-256");
        assert_eq!((p.kind, p.section), (Kind::Evidence, "handshakes"));
        assert!(p.is(Kind::Evidence, "negotiated"));
        assert!(!p.is(Kind::Recomputed, "negotiated"));
        assert!(!p.is(Kind::Evidence, "ML-DSA"));
        assert_eq!(
            p.line(),
            "[handshakes · evidence] rustls X25519: negotiated P-256"
        );
        assert_eq!(
            Problem::bound("a part over its whole").line(),
            "[bound] a part over its whole"
        );
    }
}
