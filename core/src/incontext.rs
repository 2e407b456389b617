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
    /// The phase loop's median for the same backend, algorithm and operation.
    pub loop_ns: f64,
}

impl PerCall {
    pub fn ratio(&self) -> f64 {
        self.insitu_ns / self.loop_ns
    }

    /// "ML-KEM-768 (awslc)": the algorithm and the backend whose phase it is set beside.
    pub fn implementation(&self) -> String {
        format!("{} ({})", self.algorithm, self.backend)
    }
}

/// The operation an in-situ label is one call of, for the labels that have a phase of their own.
/// `sig.verify.cert` is one signature check in rustls (webpki checks the certificate's signature)
/// but OpenSSL's whole `X509_verify_cert`, which checks no signature for a trusted self-signed
/// certificate; OpenSSL's `kx.*` calls are a whole hybrid group's key share, not one phase.
fn operation(label: &str, stack: RealStack) -> Option<Operation> {
    match label {
        "sig.verify.cert" => (stack == RealStack::Rustls).then_some(Operation::SigVerify),
        l if l.starts_with("kem.") || l.starts_with("dh.") || l.starts_with("sig.") => Operation::from_name(l),
        _ => None,
    }
}

/// Per-call times of label `k` in each connection, both sides: a side's time over its calls per
/// handshake. Only where a side makes the same whole number of calls in every handshake (the
/// key-exchange and signature calls do), so that the quotient is a per-call time.
pub fn per_call_values(i: &InSitu, k: usize) -> Vec<f64> {
    type Side = fn(&InSituConnection) -> &Vec<u64>;
    let sides: [(Option<&f64>, Side); 2] = [(i.client_calls.get(k), |c| &c.client), (i.server_calls.get(k), |c| &c.server)];
    let mut out = Vec::new();
    for (calls, side) in sides {
        let Some(&calls) = calls.filter(|&&n| n >= 1.0 && n.fract() == 0.0) else { continue };
        out.extend(i.connections.iter().filter_map(|c| side(c).get(k)).map(|&ns| ns as f64 / calls));
    }
    out
}

/// The per-call rows of one instrumented scenario, against the phases its stack's suites are
/// composed from (the full-handshake suite of its group where there is one, else the group's).
pub fn per_call(r: &Results, s: &Scenario) -> Vec<PerCall> {
    let Some(i) = &s.insitu else { return Vec::new() };
    let full = format!("{} full handshake", s.suite);
    let suite = r.suite(&full, &s.composed_stack).or_else(|| r.suite(&s.suite, &s.composed_stack));
    let Some(suite) = suite else { return Vec::new() };
    let mut rows = Vec::new();
    for (k, label) in i.labels.iter().enumerate() {
        let Some(op) = operation(label, s.stack) else { continue };
        let Some(sp) = suite.phases.iter().find(|p| p.operation == op) else { continue };
        let Some(phase) = r.phase(&sp.backend, &sp.algorithm, op) else { continue };
        let values = per_call_values(i, k);
        if values.is_empty() || phase.stats.median_ns <= 0.0 {
            continue;
        }
        rows.push(PerCall {
            label: label.clone(),
            algorithm: sp.algorithm.clone(),
            backend: sp.backend.clone(),
            insitu_ns: stats::median(&values),
            values: values.len(),
            loop_ns: phase.stats.median_ns,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insitu() -> InSitu {
        let labels = vec!["kem.keygen".to_string(), "hash.update".to_string(), "sig.verify.cert".to_string()];
        let conn = |a: u64, b: u64, c: u64| InSituConnection { total_ns: 1000, client: vec![a, b, c], server: vec![0, b, 0], remainder_ns: 0 };
        InSitu::from_connections(labels, vec![conn(10, 70, 30), conn(14, 77, 31), conn(12, 7, 29)], (vec![1.0, 7.0, 1.0], vec![0.0, 3.5, 0.0]), (0.0, 0.0))
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
    fn labels_map_to_their_phase_operation() {
        assert_eq!(operation("sig.verify.cert", RealStack::Rustls), Some(Operation::SigVerify));
        assert_eq!(operation("sig.verify.cert", RealStack::OpenSsl), None);
        assert_eq!(operation("kem.decaps", RealStack::OpenSsl), Some(Operation::KemDecaps));
        assert_eq!(operation("kx.keygen", RealStack::OpenSsl), None);
        assert_eq!(operation("hash.update", RealStack::Rustls), None);
        assert_eq!(operation("kdf.expand", RealStack::Rustls), None);
    }
}
