//! Each key-exchange and signature call timed inside real handshakes, per call, beside the same
//! phase of the same library in the phase loop: how much more a call costs where the handshake makes
//! it. The suites' sums are the phase loop's (hot, back to back), the flows' the calls' in a
//! handshake's state where the run timed them so (`Phase::situ`); this says by how much each call
//! costs beyond either in a real handshake, so a gap between the composed and the in-situ Δ can be
//! put on the phase that makes it. Everything here is recomputed from stored data: the in-situ connections'
//! per-label times and the phases' summaries.

use crate::results::{
    CallLabel, CallPhases, InSitu, InSituConnection, Kind, Operation, Results, Scenario,
};
use crate::stats;

/// One kind of call: its in-situ median per call against the phase loop's median.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PerCall {
    /// The in-situ label (`sig.verify.cert` is the certificate's signature check).
    pub(crate) label: String,
    pub(crate) algorithm: String,
    pub(crate) backend: String,
    /// Median over the kept connections of the per-call time, client and server pooled.
    pub(crate) insitu_ns: f64,
    /// How many per-call values that median is of.
    pub(crate) values: usize,
    /// The median's 95% bootstrap interval (`stats::median_ci95`): with an ML-DSA signature's
    /// rejection loop, 150 calls leave it about ±10% wide.
    pub(crate) insitu_ci95_ns: Option<(f64, f64)>,
    /// The phase loop's median for the same backend, algorithm and operation; for a call that does
    /// several phases at once (OpenSSL's hybrid key shares), the sum of theirs.
    pub(crate) loop_ns: f64,
    /// The phase operations `loop_ns` is the sum of, where there are more than one.
    pub(crate) parts: Vec<String>,
    /// The same phases' calls timed in a handshake's state (`Phase::situ`), summed as `loop_ns`
    /// is; `None` where one of them has none.
    pub(crate) situ_ns: Option<f64>,
    /// Its 95% interval, where it is one phase's (`Situ::median_ci95_ns`).
    pub(crate) situ_ci95_ns: Option<(f64, f64)>,
}

impl PerCall {
    pub(crate) fn ratio(&self) -> f64 {
        self.insitu_ns / self.loop_ns
    }

    /// What the flow composes this call at (`flow::in_state`): in a handshake's state where it
    /// was timed so, else the loop's median.
    pub(crate) fn composed_ns(&self) -> f64 {
        self.situ_ns.unwrap_or(self.loop_ns)
    }

    /// In situ over what the flow composes.
    pub(crate) fn composed_ratio(&self) -> f64 {
        self.insitu_ns / self.composed_ns()
    }

    /// "ML-KEM-768 (awslc)": the algorithm and the backend whose phase it is set beside; for a
    /// call of several phases, which ones ("ML-KEM-768 + X25519 (openssl: kem.keygen + dh.keygen)").
    pub(crate) fn implementation(&self) -> String {
        if self.parts.len() > 1 {
            format!(
                "{} ({}: {})",
                self.algorithm,
                self.backend,
                self.parts.join(" + ")
            )
        } else {
            format!("{} ({})", self.algorithm, self.backend)
        }
    }
}

/// What each label of a file before schema 3 stood for, which its stack did not store: the
/// labels `kem.*`, `dh.*` and `sig.*` are their phase; `sig.verify.cert` is one signature check in
/// rustls (webpki) but OpenSSL's whole `X509_verify_cert`, which checked no signature for the
/// trusted self-signed certificate those files used; OpenSSL's `kx.*` calls are a whole key share
/// (OpenSSL 3.5.5 `providers/implementations/keymgmt/mlx_kmgmt.c` `mlx_kem_gen` and
/// `providers/implementations/kem/mlx_kem.c`), with `kx.import` added to the encapsulation and
/// the derive.
pub(crate) fn legacy_call_phases(stack: &str, labels: &[String]) -> Vec<CallPhases> {
    use Operation::*;
    let openssl = stack == "openssl";
    labels
        .iter()
        .filter_map(|l| {
            let label = CallLabel::from_name(l)?;
            let (operations, with) = match label {
                CallLabel::SigVerifyCert if openssl => return None,
                CallLabel::SigVerifyCert => (vec![SigVerify], None),
                CallLabel::DhDerive if openssl => (vec![DhDerive], Some(CallLabel::KxImport)),
                CallLabel::KxKeygen if openssl => (vec![KemKeygen, DhKeygen], None),
                CallLabel::KxEncaps if openssl => (
                    vec![KemEncaps, DhKeygen, DhDerive],
                    Some(CallLabel::KxImport),
                ),
                CallLabel::KxDecaps if openssl => (vec![KemDecaps, DhDerive], None),
                _ => (
                    vec![Operation::from_name(l)
                        .filter(|op| matches!(op.kind(), Kind::Kem | Kind::Dh | Kind::Sig))?],
                    None,
                ),
            };
            Some(CallPhases {
                label: l.clone(),
                operations,
                with: with.map(|w| w.name().to_string()),
            })
        })
        .collect()
}

/// Per-call times of label `k` in each connection, both sides: a side's time over its calls per
/// handshake. Only where a side makes the same whole number of calls in every handshake (the
/// key-exchange and signature calls do), so that the quotient is a per-call time; with label
/// `with` added on each side where it is called as often as `k`
/// (OpenSSL's `kx.import`, setting the peer's share, which the phases count in the encapsulation
/// or the derive); a side that calls `with` some other number of times is left out.
pub(crate) fn per_call_values_with(i: &InSitu, k: usize, with: Option<usize>) -> Vec<f64> {
    type Side = fn(&InSituConnection) -> &Vec<u64>;
    type Calls = fn(&InSitu) -> &Vec<f64>;
    let sides: [(Calls, Side); 2] = [
        (|i| &i.client_calls, |c| &c.client),
        (|i| &i.server_calls, |c| &c.server),
    ];
    let mut out = Vec::new();
    for (calls_of, side) in sides {
        let Some(&calls) = calls_of(i)
            .get(k)
            .filter(|&&n| n >= 1.0 && n.fract() == 0.0)
        else {
            continue;
        };
        let with = match with.map(|w| (w, calls_of(i).get(w).copied().unwrap_or(0.0))) {
            Some((w, n)) if n == calls => Some(w),
            Some((_, n)) if n != 0.0 => continue,
            _ => None,
        };
        out.extend(i.connections.iter().filter_map(|c| {
            let v = side(c);
            let extra = with.map_or(Some(0), |w| v.get(w).copied())?;
            v.get(k).map(|&ns| (ns + extra) as f64 / calls)
        }));
    }
    out
}

/// The per-call rows of one instrumented scenario, against the phases its stack's suites are
/// composed from (the full-handshake suite of its group where there is one, else the group's).
pub(crate) fn per_call(r: &Results, s: &Scenario) -> Vec<PerCall> {
    let Some(i) = &s.insitu else {
        return Vec::new();
    };
    let full = s.full_suite();
    let suite = r
        .suite(&full, &s.composed_stack)
        .or_else(|| r.suite(&s.suite, &s.composed_stack));
    let Some(suite) = suite else {
        return Vec::new();
    };
    let calls = if i.call_phases.is_empty() {
        legacy_call_phases(s.stack.name(), &i.labels)
    } else {
        i.call_phases.clone()
    };
    // A label added to another (OpenSSL's `kx.import`) counts only where a side calls it.
    let called = |k: usize| {
        i.client_calls
            .get(k)
            .into_iter()
            .chain(i.server_calls.get(k))
            .any(|&n| n > 0.0)
    };
    let position = |name: &str| i.labels.iter().position(|l| l == name);
    let mut rows = Vec::new();
    for c in &calls {
        let Some(k) = position(&c.label) else {
            continue;
        };
        let label = &c.label;
        let with = c.with.as_deref().and_then(position).filter(|&w| called(w));
        let ops = &c.operations;
        let phases: Vec<_> = ops
            .iter()
            .filter_map(|&op| suite.phases.iter().find(|p| p.operation == op))
            .collect();
        let measured: Option<Vec<&crate::results::Phase>> =
            phases.iter().map(|sp| r.phase(&sp.id())).collect();
        let medians: Option<Vec<f64>> = measured
            .as_ref()
            .map(|m| m.iter().map(|p| p.stats.median_ns).collect());
        let situ_ns: Option<f64> = measured
            .as_ref()
            .and_then(|m| m.iter().map(|p| p.situ.as_ref().map(|s| s.median_ns)).sum());
        let situ_ci95_ns = match measured.as_deref() {
            Some([one]) => one.situ.as_ref().and_then(|s| s.median_ci95_ns),
            _ => None,
        };
        let (Some(first), Some(medians)) = (phases.first(), medians) else {
            continue;
        };
        let loop_ns: f64 = medians.iter().sum();
        let values = per_call_values_with(i, k, with);
        if values.is_empty() || loop_ns <= 0.0 {
            continue;
        }
        let mut algorithms: Vec<&str> = Vec::new();
        for sp in &phases {
            if !algorithms.contains(&sp.algorithm.as_str()) {
                algorithms.push(&sp.algorithm);
            }
        }
        rows.push(PerCall {
            label: match (&c.with, with) {
                (Some(w), Some(_)) => format!("{w} + {label}"),
                _ => label.clone(),
            },
            algorithm: algorithms.join(" + "),
            backend: first.backend.clone(),
            insitu_ns: stats::median(&values),
            insitu_ci95_ns: crate::derived::median_ci95(&values),
            values: values.len(),
            loop_ns,
            parts: if phases.len() > 1 {
                phases
                    .iter()
                    .map(|p| p.operation.name().to_string())
                    .collect()
            } else {
                Vec::new()
            },
            situ_ns,
            situ_ci95_ns,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insitu() -> InSitu {
        let labels = vec![
            "kem.keygen".to_string(),
            "hash.update".to_string(),
            "sig.verify.cert".to_string(),
        ];
        let conn = |a: u64, b: u64, c: u64| InSituConnection {
            total_ns: 1000,
            client: vec![a, b, c],
            server: vec![0, b, 0],
            remainder_ns: 0,
            ..Default::default()
        };
        InSitu::from_connections(
            labels,
            vec![conn(10, 70, 30), conn(14, 77, 31), conn(12, 7, 29)],
            (vec![1.0, 7.0, 1.0], vec![0.0, 3.5, 0.0]),
            (0.0, 0.0),
        )
    }

    #[test]
    fn per_call_values_divide_by_whole_calls_and_skip_the_rest() {
        let i = insitu();
        // kem.keygen: client only, one call each.
        assert_eq!(per_call_values_with(&i, 0, None), vec![10.0, 14.0, 12.0]);
        // hash.update: 7 client calls per handshake (70 / 7 = 10, 77 / 7 = 11, 7 / 7 = 1); the
        // server's 3.5 is an average of varying counts, not a per-call divisor.
        assert_eq!(per_call_values_with(&i, 1, None), vec![10.0, 11.0, 1.0]);
    }

    #[test]
    fn an_added_label_counts_where_it_is_called_as_often() {
        // kem.keygen with sig.verify.cert added: one call each on the client, none on the server.
        let i = insitu();
        assert_eq!(per_call_values_with(&i, 0, Some(2)), vec![40.0, 45.0, 41.0]);
        // hash.update (7 client calls) with kem.keygen (1): called some other number of times, so
        // the client is left out; the server's 3.5 calls are no per-call divisor either.
        assert!(per_call_values_with(&i, 1, Some(0)).is_empty());
        // An added label with no calls on a side adds nothing there.
        let labels = vec!["kx.encaps".to_string(), "kx.import".to_string()];
        let conn = |e: u64, m: u64| InSituConnection {
            total_ns: 1000,
            client: vec![0, 0],
            server: vec![e, m],
            remainder_ns: 0,
            ..Default::default()
        };
        let j = InSitu::from_connections(
            labels,
            vec![conn(100, 20), conn(110, 30)],
            (vec![0.0, 0.0], vec![1.0, 1.0]),
            (0.0, 0.0),
        );
        assert_eq!(per_call_values_with(&j, 0, Some(1)), vec![120.0, 140.0]);
        assert_eq!(per_call_values_with(&j, 0, None), vec![100.0, 110.0]);
    }

    /// The operations and the added label of one label in a legacy mapping.
    fn legacy(stack: &str, label: &str) -> Option<(Vec<Operation>, Option<String>)> {
        legacy_call_phases(stack, &CallLabel::names())
            .into_iter()
            .find(|c| c.label == label)
            .map(|c| (c.operations, c.with))
    }

    #[test]
    fn openssl_key_shares_are_the_phases_they_do() {
        use Operation::*;
        let import = Some("kx.import".to_string());
        assert_eq!(
            legacy("openssl", "kx.keygen"),
            Some((vec![KemKeygen, DhKeygen], None))
        );
        assert_eq!(
            legacy("openssl", "kx.encaps"),
            Some((vec![KemEncaps, DhKeygen, DhDerive], import.clone()))
        );
        assert_eq!(
            legacy("openssl", "kx.decaps"),
            Some((vec![KemDecaps, DhDerive], None))
        );
        assert_eq!(
            legacy("openssl", "dh.derive"),
            Some((vec![DhDerive], import))
        );
        assert_eq!(
            legacy("openssl", "kx.import"),
            None,
            "added to the call the phases count it in"
        );
        let row = |parts: Vec<String>| PerCall {
            label: "kx.encaps".into(),
            algorithm: "ML-KEM-768 + X25519".into(),
            backend: "openssl".into(),
            insitu_ns: 2.0,
            insitu_ci95_ns: None,
            values: 1,
            loop_ns: 1.0,
            parts,
            situ_ns: None,
            situ_ci95_ns: None,
        };
        assert_eq!(
            row(vec!["kem.encaps".into(), "dh.keygen".into()]).implementation(),
            "ML-KEM-768 + X25519 (openssl: kem.encaps + dh.keygen)"
        );
        assert_eq!(
            row(Vec::new()).implementation(),
            "ML-KEM-768 + X25519 (openssl)"
        );
    }

    #[test]
    fn labels_map_to_their_phase_operation() {
        use Operation::*;
        assert_eq!(
            legacy("rustls", "sig.verify.cert"),
            Some((vec![SigVerify], None))
        );
        assert_eq!(legacy("openssl", "sig.verify.cert"), None);
        assert_eq!(
            legacy("openssl", "kem.decaps"),
            Some((vec![KemDecaps], None))
        );
        assert_eq!(legacy("rustls", "kx.keygen"), None);
        assert_eq!(legacy("rustls", "hash.update"), None);
        assert_eq!(legacy("rustls", "kdf.expand"), None);
        assert_eq!(legacy("rustls", "dh.derive"), Some((vec![DhDerive], None)));
    }
}
