//! Which (backend, operation, algorithm) to time: every suite is composed for each stack whose
//! backends cover all its phases, and each distinct phase is measured once and shared.

use crate::algorithm;
use crate::backend::Backend;
pub use crate::results::Stack;
use crate::results::{Form, PhaseId};
use crate::suite::{Suite, Workload};
use anyhow::{bail, Result};

/// The backend a stack uses for an algorithm: its post-quantum one or its classical one.
pub(crate) fn backend_for<'a>(stack: &'a Stack, algorithm: &str) -> &'a str {
    match algorithm::find(algorithm) {
        Some(a) if a.post_quantum => &stack.post_quantum,
        _ => &stack.classical,
    }
}

/// The stacks, default first: liboqs for post-quantum and OpenSSL for classical and AES, as on the
/// seed site; then one per real stack (`stack::all`), made of exactly the libraries it calls, so
/// each real handshake sits beside a composition from its own code; and RustCrypto alone. Behind the
/// tests' switch (`backend::fixed`), the one `fixed` stack.
pub(crate) fn stacks() -> Vec<Stack> {
    // Behind the tests' switch the deterministic backend composes everything on its own.
    if crate::backend::fixed::enabled() {
        return vec![Stack::new(
            "fixed",
            "the deterministic test backend for everything",
            "fixed",
            "fixed",
            &[],
        )];
    }
    let mut v = vec![Stack::new(
        "default",
        "liboqs for post-quantum, OpenSSL for classical and AES",
        "liboqs",
        "openssl",
        &[],
    )];
    for s in crate::stack::all() {
        let c = s.composition();
        if !v.iter().any(|x| x.name == c.name) {
            v.push(c);
        }
    }
    v.push(Stack::new(
        "rustcrypto",
        "RustCrypto for everything",
        "rustcrypto",
        "rustcrypto",
        &["tls13", "raw"],
    ));
    v
}

#[derive(Debug, Clone)]
pub(crate) struct Composition {
    pub(crate) suite: usize,
    pub(crate) stack: String,
    /// One backend per phase of the suite, in the suite's order.
    pub(crate) backends: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) phases: Vec<(PhaseId, Workload)>,
    pub(crate) compositions: Vec<Composition>,
}

/// Builds the plan; a suite that no stack can compose is an error naming the phase and its place.
pub(crate) fn plan(
    suites: &[Suite],
    backends: &[Box<dyn Backend>],
    stacks: &[Stack],
) -> Result<Plan> {
    let find = |name: &str| backends.iter().find(|b| b.name() == name);
    let mut phases: Vec<(PhaseId, Workload)> = Vec::new();
    let mut compositions = Vec::new();
    for (i, suite) in suites.iter().enumerate() {
        let mut composed_any = false;
        for stack in stacks.iter().filter(|st| st.composes(&suite.protocol)) {
            let chosen: Vec<String> = suite
                .phases
                .iter()
                .map(|p| backend_for(stack, &p.algorithm).to_string())
                .collect();
            let usable = suite.phases.iter().zip(&chosen).all(|(p, b)| {
                let allowed = suite.backends.as_ref().is_none_or(|list| list.contains(b));
                allowed && find(b).is_some_and(|be| be.supports(&p.algorithm, p.operation))
            });
            if !usable {
                continue;
            }
            composed_any = true;
            for (p, b) in suite.phases.iter().zip(&chosen) {
                let key = PhaseId::handshake(b, &p.algorithm, p.operation);
                if !phases.iter().any(|(k, _)| *k == key) {
                    phases.push((key, suite.workload));
                }
            }
            compositions.push(Composition {
                suite: i,
                stack: stack.name.clone(),
                backends: chosen,
            });
        }
        if !composed_any {
            let stack_names: Vec<&str> = stacks.iter().map(|s| s.name.as_str()).collect();
            for p in &suite.phases {
                let allowed = |b: &dyn Backend| {
                    suite
                        .backends
                        .as_ref()
                        .is_none_or(|l| l.iter().any(|n| n == b.name()))
                };
                let supported = backends
                    .iter()
                    .any(|b| allowed(b.as_ref()) && b.supports(&p.algorithm, p.operation));
                if !supported {
                    let scope = match &suite.backends {
                        Some(list) => format!(
                            "none of the backends this suite allows ({})",
                            list.join(", ")
                        ),
                        None => "no backend".to_string(),
                    };
                    bail!(
                        "{}: {scope} supports {} {} (suite \"{}\")",
                        p.at,
                        p.algorithm,
                        p.operation,
                        suite.name
                    );
                }
            }
            bail!(
                "{}: suite \"{}\" cannot be composed: no stack ({}) has a backend for every phase",
                suite.at,
                suite.name,
                stack_names.join(", ")
            );
        }
    }
    // Extra phases a backend supports but no stack uses (for the compare page): every backend's
    // version of every phase in the suites, so each operation is seen across libraries.
    let wanted: Vec<(PhaseId, Workload)> = suites
        .iter()
        .flat_map(|s| s.phases.iter().map(move |p| (p, s)))
        .flat_map(|(p, s)| {
            backends
                .iter()
                .filter(|b| b.supports(&p.algorithm, p.operation))
                .filter(|b| {
                    s.backends
                        .as_ref()
                        .is_none_or(|list| list.iter().any(|n| n == b.name()))
                })
                .map(move |b| {
                    (
                        PhaseId::handshake(b.name(), &p.algorithm, p.operation),
                        s.workload,
                    )
                })
        })
        .collect();
    for (k, w) in wanted {
        if !phases.iter().any(|(q, _)| *q == k) {
            phases.push((k, w));
        }
    }
    // The primitive form beside every handshake form that does setup the primitive does once.
    let primitives: Vec<(PhaseId, Workload)> = phases
        .iter()
        .filter(|(k, _)| {
            find(&k.backend).is_some_and(|b| b.setup(&k.algorithm, k.operation).is_some())
        })
        .map(|(k, w)| (k.with_form(Form::Primitive), *w))
        .collect();
    phases.extend(primitives);
    phases.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Plan {
        phases,
        compositions,
    })
}

/// The phases whose calls are also timed in a handshake's state (`measure::situ_samples`): the
/// key exchanges and signatures of every handshake suite a real stack composes (`stack::all`),
/// which its flow places and the composition page sets beside that stack's real handshakes.
pub(crate) fn situ(plan: &Plan, suites: &[Suite]) -> Vec<PhaseId> {
    use crate::algorithm::Kind;
    use crate::suite::TrackKind;
    let real: Vec<String> = crate::stack::all()
        .iter()
        .map(|s| s.composed_stack())
        .collect();
    let mut out: Vec<PhaseId> = Vec::new();
    for c in plan.compositions.iter().filter(|c| real.contains(&c.stack)) {
        let s = &suites[c.suite];
        if !matches!(
            s.kind,
            TrackKind::Kex | TrackKind::Full | TrackKind::Resumed
        ) {
            continue;
        }
        for (p, b) in s.phases.iter().zip(&c.backends) {
            let timed =
                p.count > 0 && matches!(p.operation.kind(), Kind::Kem | Kind::Dh | Kind::Sig);
            let id = PhaseId::handshake(b, &p.algorithm, p.operation);
            if timed && !out.contains(&id) {
                out.push(id);
            }
        }
    }
    out
}

/// The suites the given backends can compose, and the names of those they cannot: with `run
/// --backend`, a suite of algorithms none of the chosen libraries has is left out, not an error.
pub(crate) fn composable(
    suites: Vec<Suite>,
    backends: &[Box<dyn Backend>],
    stacks: &[Stack],
) -> (Vec<Suite>, Vec<String>) {
    let (mut kept, mut skipped) = (Vec::new(), Vec::new());
    for s in suites {
        if plan(std::slice::from_ref(&s), backends, stacks).is_ok() {
            kept.push(s);
        } else {
            skipped.push(s.name.clone());
        }
    }
    (kept, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Operation;
    use crate::backend;
    use std::path::Path;

    /// A pairing the handshake step makes is set beside its composition: without the suite, its
    /// composed figures would be left out without a word.
    #[test]
    fn every_pairing_the_handshake_step_makes_has_its_composed_full_suite() {
        let suites = crate::suite::load(Path::new("suites"), &backend::names()).unwrap();
        let auths = crate::auth::load(Path::new("suites"), "tls13", None)
            .unwrap()
            .unwrap();
        let pairs = auths.extra_pairs(crate::auth::Step::Handshake);
        assert!(pairs.len() >= 5, "{pairs:?}");
        for (group, a) in pairs {
            let name = crate::auth::full_suite(group, Some(&a.name), &auths.baseline);
            assert!(
                suites.iter().any(|s| s.name == name),
                "{name}: no suite composes it"
            );
        }
    }

    #[test]
    fn each_phase_is_measured_once_and_the_default_stack_covers_every_suite() {
        let suites = crate::suite::load(Path::new("suites"), &backend::names()).unwrap();
        let backends = backend::all();
        let p = plan(&suites, &backends, &stacks()).unwrap();
        let mut keys: Vec<&PhaseId> = p.phases.iter().map(|(k, _)| k).collect();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n);
        for (i, s) in suites.iter().enumerate() {
            assert!(
                p.compositions
                    .iter()
                    .any(|c| c.suite == i && c.stack == "default"),
                "{}",
                s.name
            );
        }
        // X25519 keygen is one phase per backend, shared by every suite that uses it.
        let x = p
            .phases
            .iter()
            .filter(|(k, _)| k.algorithm == "X25519" && k.operation == Operation::DhKeygen)
            .count();
        assert_eq!(x, 3, "rustcrypto, openssl, awslc");
        // OpenSSL's encapsulation imports the key and makes a context per call: its primitive form
        // is measured beside it; liboqs's call has no such setup.
        let encaps = |b: &str, f: Form| {
            p.phases
                .iter()
                .any(|(k, _)| k.backend == b && k.operation == Operation::KemEncaps && k.form == f)
        };
        assert!(encaps("openssl", Form::Primitive) && encaps("openssl", Form::Handshake));
        assert!(!encaps("liboqs", Form::Primitive));
    }

    #[test]
    fn the_real_stacks_key_exchanges_and_signatures_are_timed_in_a_handshakes_state() {
        let suites = crate::suite::load(Path::new("suites"), &backend::names()).unwrap();
        let p = plan(&suites, &backend::all(), &stacks()).unwrap();
        let situ = situ(&p, &suites);
        let has = |b: &str, a: &str, op: Operation| situ.contains(&PhaseId::handshake(b, a, op));
        // rustls signs with aws-lc-rs, OpenSSL with itself; both make ML-KEM and X25519 keys.
        assert!(has("awslc", "ML-DSA-65", Operation::SigSign));
        assert!(has("openssl", "ML-DSA-65", Operation::SigVerify));
        assert!(has("awslc", "ML-KEM-768", Operation::KemDecaps));
        assert!(has("openssl", "X25519", Operation::DhDerive));
        // No stack's handshake calls liboqs, and no key schedule or record call is timed so.
        assert!(situ.iter().all(|k| k.backend != "liboqs"), "{situ:?}");
        assert!(situ.iter().all(|k| matches!(
            k.operation.kind(),
            crate::algorithm::Kind::Kem | crate::algorithm::Kind::Dh | crate::algorithm::Kind::Sig
        )));
        // Certificate keys are made once, not per handshake.
        assert!(situ.iter().all(|k| k.operation != Operation::SigKeygen));
        // Each once, and each a planned phase.
        let mut sorted = situ.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), situ.len());
        assert!(situ.iter().all(|k| p.phases.iter().any(|(q, _)| q == k)));
    }

    #[test]
    fn chosen_backends_keep_only_the_suites_they_compose() {
        let suites = crate::suite::load(Path::new("suites"), &backend::names()).unwrap();
        let openssl: Vec<Box<dyn Backend>> = backend::all()
            .into_iter()
            .filter(|b| b.name() == "openssl")
            .collect();
        let (kept, skipped) = composable(suites, &openssl, &stacks());
        assert!(skipped.iter().any(|s| s == "Falcon-512"), "{skipped:?}");
        assert!(kept.iter().any(|s| s.name == "X25519MLKEM768"));
        assert!(plan(&kept, &openssl, &stacks()).is_ok());
    }

    #[test]
    fn a_phase_no_backend_supports_is_a_clear_error() {
        let text = "protocol = \"t\"\nkind = \"kex\"\n[[suite]]\nname = \"x\"\nbackends = [\"liboqs\"]\nphases = [\n  { operation = \"dh.keygen\", algorithm = \"X25519\", count = 1 },\n]\n";
        let suites = crate::suite::parse(Path::new("t.toml"), text, &backend::names()).unwrap();
        let e = plan(&suites, &backend::all(), &stacks())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.toml:7:")
                && e.contains(
                    "none of the backends this suite allows (liboqs) supports X25519 dh.keygen"
                ),
            "{e}"
        );
    }
}
