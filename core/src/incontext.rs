//! Each key-exchange and signature call timed inside real handshakes, per call, beside the same
//! phase of the same library in the phase loop: how much more a call costs where the handshake makes
//! it. The composed figure is the phase loop's (hot, back to back); this says by how much each of its
//! parts grows in a real handshake, so a gap between the composed and the in-situ Δ can be put on
//! the phase that makes it. Everything here is recomputed from stored data: the in-situ connections'
//! per-label times and the phases' summaries.

use crate::results::{InSitu, InSituConnection, Operation, RealStack, Results, Scenario};
use crate::stats;

/// One kind of call: its in-situ median per call against the phase loop's median.
#[derive(Debug, Clone, PartialEq)]
pub struct PerCall {
    /// The in-situ label (`sig.verify.cert` is the certificate's signature check).
    pub label: String,
    pub algorithm: String,
    pub backend: String,
    /// Median over the kept connections of the per-call time, client and server pooled.
    pub insitu_ns: f64,
    /// How many per-call values that median is of.
    pub values: usize,
    /// The phase loop's median for the same backend, algorithm and operation; for a call that does
    /// several phases at once (OpenSSL's hybrid key shares), the sum of theirs.
    pub loop_ns: f64,
    /// The phase operations `loop_ns` is the sum of, where there are more than one.
    pub parts: Vec<String>,
}

impl PerCall {
    pub fn ratio(&self) -> f64 {
        self.insitu_ns / self.loop_ns
    }

    /// "ML-KEM-768 (awslc)": the algorithm and the backend whose phase it is set beside; for a
    /// call of several phases, which ones ("ML-KEM-768 + X25519 (openssl: kem.keygen + dh.keygen)").
    pub fn implementation(&self) -> String {
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

/// The operation an in-situ label is one call of, for the labels that have a phase of their own.
/// `sig.verify.cert` is one signature check in rustls (webpki checks the certificate's signature)
/// but OpenSSL's whole `X509_verify_cert`, which checks no signature for a trusted self-signed
/// certificate; OpenSSL's `kx.*` calls are a whole key share, several phases (`kx_parts`).
fn operation(label: &str, stack: RealStack) -> Option<Operation> {
    match label {
        "sig.verify.cert" => (stack == RealStack::Rustls).then_some(Operation::SigVerify),
        l if l.starts_with("kem.") || l.starts_with("dh.") || l.starts_with("sig.") => {
            Operation::from_name(l)
        }
        _ => None,
    }
}

/// The phases one of OpenSSL's key-share calls does in one provider call (OpenSSL 3.5.5's hybrid
/// TLS groups, `providers/implementations/keymgmt/mlx_kmgmt.c` `mlx_kem_gen` and
/// `providers/implementations/kem/mlx_kem.c`): a hybrid key share makes both keys;
/// encapsulating to a hybrid share also makes an ECDH key and derives; decapsulating also derives.
/// Only the operations a suite has count, so for ML-KEM alone each is the one KEM phase and for
/// X25519 `kx.keygen` is the ECDH key share.
fn kx_parts(label: &str) -> Option<&'static [Operation]> {
    use Operation::*;
    match label {
        "kx.keygen" => Some(&[KemKeygen, DhKeygen]),
        "kx.encaps" => Some(&[KemEncaps, DhKeygen, DhDerive]),
        "kx.decaps" => Some(&[KemDecaps, DhDerive]),
        _ => None,
    }
}

/// Per-call times of label `k` in each connection, both sides: a side's time over its calls per
/// handshake. Only where a side makes the same whole number of calls in every handshake (the
/// key-exchange and signature calls do), so that the quotient is a per-call time.
pub fn per_call_values(i: &InSitu, k: usize) -> Vec<f64> {
    per_call_values_with(i, k, None)
}

/// As `per_call_values`, with label `with` added on each side where it is called as often as `k`
/// (OpenSSL's `kx.import`, setting the peer's share, which the phases count in the encapsulation
/// or the derive); a side that calls `with` some other number of times is left out.
pub fn per_call_values_with(i: &InSitu, k: usize, with: Option<usize>) -> Vec<f64> {
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
pub fn per_call(r: &Results, s: &Scenario) -> Vec<PerCall> {
    let Some(i) = &s.insitu else {
        return Vec::new();
    };
    let full = format!("{} full handshake", s.suite);
    let suite = r
        .suite(&full, &s.composed_stack)
        .or_else(|| r.suite(&s.suite, &s.composed_stack));
    let Some(suite) = suite else {
        return Vec::new();
    };
    let openssl = s.stack == RealStack::OpenSsl;
    // OpenSSL times setting the peer's share apart; the phases count it in the encapsulation (or,
    // for an ECDH group, the derive), so it is added there.
    let called = |k: usize| {
        i.client_calls
            .get(k)
            .into_iter()
            .chain(i.server_calls.get(k))
            .any(|&n| n > 0.0)
    };
    let import = i
        .labels
        .iter()
        .position(|l| l == "kx.import")
        .filter(|&k| openssl && called(k));
    let mut rows = Vec::new();
    for (k, label) in i.labels.iter().enumerate() {
        let (ops, with): (Vec<Operation>, Option<usize>) =
            match (operation(label, s.stack), kx_parts(label)) {
                (Some(op), _) => (vec![op], import.filter(|_| op == Operation::DhDerive)),
                (None, Some(parts)) if openssl => {
                    (parts.to_vec(), import.filter(|_| label == "kx.encaps"))
                }
                _ => continue,
            };
        let phases: Vec<_> = ops
            .iter()
            .filter_map(|&op| suite.phases.iter().find(|p| p.operation == op))
            .collect();
        let medians: Option<Vec<f64>> = phases
            .iter()
            .map(|sp| {
                r.phase(&sp.backend, &sp.algorithm, sp.operation)
                    .map(|p| p.stats.median_ns)
            })
            .collect();
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
            label: if with.is_some() {
                format!("kx.import + {label}")
            } else {
                label.clone()
            },
            algorithm: algorithms.join(" + "),
            backend: first.backend.clone(),
            insitu_ns: stats::median(&values),
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
        assert_eq!(per_call_values(&i, 0), vec![10.0, 14.0, 12.0]);
        // hash.update: 7 client calls per handshake (70 / 7 = 10, 77 / 7 = 11, 7 / 7 = 1); the
        // server's 3.5 is an average of varying counts, not a per-call divisor.
        assert_eq!(per_call_values(&i, 1), vec![10.0, 11.0, 1.0]);
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

    #[test]
    fn openssl_key_shares_are_the_phases_they_do() {
        assert_eq!(
            kx_parts("kx.keygen"),
            Some(&[Operation::KemKeygen, Operation::DhKeygen][..])
        );
        assert_eq!(
            kx_parts("kx.encaps"),
            Some(
                &[
                    Operation::KemEncaps,
                    Operation::DhKeygen,
                    Operation::DhDerive
                ][..]
            )
        );
        assert_eq!(
            kx_parts("kx.decaps"),
            Some(&[Operation::KemDecaps, Operation::DhDerive][..])
        );
        assert_eq!(
            kx_parts("kx.import"),
            None,
            "added to the call the phases count it in"
        );
        let row = |parts: Vec<String>| PerCall {
            label: "kx.encaps".into(),
            algorithm: "ML-KEM-768 + X25519".into(),
            backend: "openssl".into(),
            insitu_ns: 2.0,
            values: 1,
            loop_ns: 1.0,
            parts,
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
        assert_eq!(
            operation("sig.verify.cert", RealStack::Rustls),
            Some(Operation::SigVerify)
        );
        assert_eq!(operation("sig.verify.cert", RealStack::OpenSsl), None);
        assert_eq!(
            operation("kem.decaps", RealStack::OpenSsl),
            Some(Operation::KemDecaps)
        );
        assert_eq!(operation("kx.keygen", RealStack::OpenSsl), None);
        assert_eq!(operation("hash.update", RealStack::Rustls), None);
        assert_eq!(operation("kdf.expand", RealStack::Rustls), None);
    }
}
