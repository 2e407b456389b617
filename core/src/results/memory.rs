//! The `memory` section (`pqprof memory`): memory per operation, as the OQS profiling pages report
//! it: the peak heap bytes and the peak stack bytes of one call of each key-exchange and signature
//! phase, per backend. Each call is measured on its own (`calls`), so `check` can hold the
//! entry's figures to them.

use super::{Form, Operation, PhaseId};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OperationMemory {
    pub date_utc: String,
    pub wall_seconds: f64,
    /// The backends measured: every backend of the binary with a KEM, DH or signature algorithm.
    /// Each phase was measured in a child process of its own.
    pub backends: Vec<String>,
    /// How the heap figure is made and which allocators it includes.
    pub heap_method: String,
    /// How the stack figure is made and what it includes.
    pub stack_method: String,
    /// Stack bytes an empty call through the same probe shows (return address, the probe's own
    /// leaf frames): subtracted from every call's figure.
    pub harness_stack_bytes: u64,
    /// Calls made and dropped before the measured ones (lazy initialisation: library set-up,
    /// provider fetches, thread-local generators).
    pub warmup_calls: usize,
    pub entries: Vec<MemoryEntry>,
    /// Phases that could not be measured, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<MemoryFailure>,
}

/// One phase's memory: the figures of its calls, and the largest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryEntry {
    pub backend: String,
    pub algorithm: String,
    pub operation: Operation,
    #[serde(default, skip_serializing_if = "Form::is_handshake")]
    pub form: Form,
    /// The largest of the calls' peak heap bytes.
    pub peak_heap_bytes: u64,
    /// The calls' peak stack bytes (equal in every call, which `check` holds them to).
    pub peak_stack_bytes: u64,
    /// The most allocations one call made.
    pub heap_allocs: u64,
    /// Every measured call, in order.
    pub calls: Vec<MemoryCall>,
}

/// One measured call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryCall {
    /// The most heap bytes in use during the call above what was in use when it started.
    pub heap_bytes: u64,
    /// Allocations (malloc, calloc, realloc, aligned) the call made.
    pub allocs: u64,
    /// Deepest stack write below the probe's stack pointer, less `harness_stack_bytes`.
    pub stack_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryFailure {
    pub backend: String,
    pub algorithm: String,
    pub operation: Operation,
    pub error: String,
}

impl MemoryEntry {
    pub fn id(&self) -> PhaseId {
        PhaseId::new(&self.backend, &self.algorithm, self.operation, self.form)
    }

    /// An entry from its calls: the largest heap and allocation count, the stack of the first
    /// call (the others must equal it).
    pub fn from_calls(id: &PhaseId, calls: Vec<MemoryCall>) -> MemoryEntry {
        MemoryEntry {
            backend: id.backend.clone(),
            algorithm: id.algorithm.clone(),
            operation: id.operation,
            form: id.form,
            peak_heap_bytes: calls.iter().map(|c| c.heap_bytes).max().unwrap_or(0),
            peak_stack_bytes: calls.first().map_or(0, |c| c.stack_bytes),
            heap_allocs: calls.iter().map(|c| c.allocs).max().unwrap_or(0),
            calls,
        }
    }
}

impl OperationMemory {
    /// The entry of a phase, if it was measured.
    pub fn entry(&self, id: &PhaseId) -> Option<&MemoryEntry> {
        self.entries.iter().find(|e| &e.id() == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_takes_the_largest_heap_and_the_first_stack() {
        let id = PhaseId::handshake("liboqs", "ML-KEM-768", Operation::KemKeygen);
        let call = |heap_bytes, allocs| MemoryCall {
            heap_bytes,
            allocs,
            stack_bytes: 9_000,
        };
        let e = MemoryEntry::from_calls(&id, vec![call(100, 2), call(132, 3), call(90, 1)]);
        assert_eq!(
            (e.peak_heap_bytes, e.heap_allocs, e.peak_stack_bytes),
            (132, 3, 9_000)
        );
        assert_eq!(e.id(), id);
    }
}
