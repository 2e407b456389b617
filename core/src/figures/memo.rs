//! A run's intermediate figures kept while one caller works through it: the composition asks for
//! a stack's cost per byte, and each path as the stack ran it, once for every row and every
//! answer, and each costs a pass over the run's in-situ connections and its size controls. Inside
//! a `scope`, each is computed once.
//!
//! The keys are the addresses of what the figure is computed from (the run, its scenarios, its
//! flows). They are sound only because every caller of `scope` borrows the runs it computes from
//! for the whole scope, and nothing inside one builds a temporary run or scenario to ask about: an
//! address freed and taken again inside a scope would answer for another value. The run's date and
//! host in the key only tell two different runs apart; they do not guard against that. Outside
//! any scope nothing is kept.

use crate::results::Results;
use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

type Memo = HashMap<(&'static str, Vec<u64>), Box<dyn Any>>;

thread_local! {
    /// One memo for each scope this thread is in, the innermost last.
    static SCOPES: RefCell<Vec<Memo>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a memo of its own, dropped when `f` returns: for a caller that borrows the runs
/// it computes from for the whole of `f` (a page, a `derive`).
pub(crate) fn scope<T>(f: impl FnOnce() -> T) -> T {
    SCOPES.with(|s| s.borrow_mut().push(Memo::new()));
    // Popped even if `f` panics, so that a caught panic leaves no memo behind.
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            SCOPES.with(|s| s.borrow_mut().pop());
        }
    }
    let _pop = Pop;
    f()
}

/// Runs `f` inside the current scope, or in a scope of its own where there is none.
pub(crate) fn within<T>(f: impl FnOnce() -> T) -> T {
    if SCOPES.with(|s| s.borrow().is_empty()) {
        scope(f)
    } else {
        f()
    }
}

/// The address of `x`, for a key.
pub(crate) fn at<T: ?Sized>(x: &T) -> u64 {
    std::ptr::from_ref(x).cast::<u8>() as usize as u64
}

/// The value of `kind` for `r` and `parts` (addresses and numbers, as `at` gives them): the one
/// the current scope holds, else `compute`'s, which it then holds. Without a scope, `compute`'s.
pub(crate) fn get<V: Clone + 'static>(
    kind: &'static str,
    r: &Results,
    parts: &[u64],
    compute: impl FnOnce() -> V,
) -> V {
    let mut key = vec![at(r)];
    key.extend_from_slice(parts);
    let mut run = std::hash::DefaultHasher::new();
    (&r.run.date_utc, &r.run.host.fingerprint).hash(&mut run);
    key.push(run.finish());
    let hit = SCOPES.with(|s| {
        s.borrow()
            .last()
            .and_then(|m| m.get(&(kind, key.clone())))
            .and_then(|v| v.downcast_ref::<V>())
            .cloned()
    });
    if let Some(v) = hit {
        return v;
    }
    // Computed with no borrow held: `compute` may ask for other values.
    let v = compute();
    SCOPES.with(|s| {
        if let Some(m) = s.borrow_mut().last_mut() {
            m.insert((kind, key), Box::new(v.clone()));
        }
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A committed run.
    fn results() -> Results {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../results/vm-2026-11-30.json");
        crate::results::read(std::path::Path::new(path)).unwrap()
    }

    #[test]
    fn a_scope_computes_each_value_once_and_forgets_it_at_its_end() {
        let r = results();
        let calls = std::cell::Cell::new(0);
        let count = || {
            calls.set(calls.get() + 1);
            calls.get()
        };
        scope(|| {
            assert_eq!(get("t", &r, &[1], count), 1);
            assert_eq!(get("t", &r, &[1], count), 1);
            assert_eq!(get("t", &r, &[2], count), 2);
            // A scope within shares its caller's memo; a new one starts empty.
            within(|| assert_eq!(get("t", &r, &[1], count), 1));
            scope(|| assert_eq!(get("t", &r, &[1], count), 3));
            assert_eq!(get("t", &r, &[1], count), 1);
        });
        assert_eq!(get("t", &r, &[1], count), 4);
        assert_eq!(get("t", &r, &[1], count), 5);
    }
}
