//! Figures derived from a run's raw samples by resampling: the composition's median shifts
//! (`shift::median_shift`) and the bootstrap intervals the pages show (`median_ci95`,
//! `median_interval`). Each takes thousands of draws, and a site asks for the same one from
//! several pages, so each is computed once per inputs and kept here by a digest of them (`Key`).
//!
//! A producer stores the figures a run's pages ask for in its results file (`Results::derived`,
//! written by `render::derive`), `check` recomputes them from the raw samples (`fresh`) and
//! compares, and `render` loads them (`remember`) so that it only looks them up: a page never
//! resamples what its file already holds. The key holds the method (the figure's kind, its
//! resamples and seed) beside every input, so a stored figure is found only for the inputs and
//! method it was computed from.

use crate::stats;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

/// Figures by their key's hex digest, as a results file stores them. A figure is a list of
/// numbers: one for a shift, two for an interval, none where there is no figure.
pub type Figures = BTreeMap<String, Vec<f64>>;

/// A stable 128-bit digest of a figure's method and inputs (FNV-1a, 128 bits, over bytes and
/// 64-bit words: the same on every machine and Rust version, unlike std's hasher, so a stored key
/// is found again).
pub(crate) struct Key(u128);

impl Key {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

    /// A key for a figure of kind `method` (its name; a change of method is a change of name),
    /// under the methods' version (`METHODS`).
    pub(crate) fn new(method: &str) -> Key {
        let mut k = Key(Key::OFFSET);
        k.bytes(method.as_bytes());
        k.u64(0xff);
        k.u64(METHODS);
        k
    }

    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u128::from(b);
            self.0 = self.0.wrapping_mul(Key::PRIME);
        }
    }

    /// A number is taken a 64-bit word at a time, FNV-1a's step on the word: a key over a run's
    /// samples costs one multiplication per sample, not eight.
    pub(crate) fn u64(&mut self, x: u64) {
        self.0 ^= u128::from(x);
        self.0 = self.0.wrapping_mul(Key::PRIME);
    }

    pub(crate) fn usize(&mut self, x: usize) {
        self.u64(x as u64);
    }

    pub(crate) fn f64(&mut self, x: f64) {
        self.u64(x.to_bits());
    }

    pub(crate) fn u64s(&mut self, xs: &[u64]) {
        self.usize(xs.len());
        for &x in xs {
            self.u64(x);
        }
    }

    pub(crate) fn f64s(&mut self, xs: &[f64]) {
        self.usize(xs.len());
        for &x in xs {
            self.f64(x);
        }
    }

    /// The digest in hex, as a results file stores it.
    pub(crate) fn hex(&self) -> String {
        format!("{:032x}", self.0)
    }
}

/// The version of the resampling methods behind every key: raised when one of them (`stats`'
/// bootstraps, `shift::median_shift`) changes what it gives for the same inputs, so that no stored
/// figure of the old method is taken for the new one.
const METHODS: u64 = 1;

/// The figures this process knows: computed here, or read from results files (`remember`).
fn known() -> &'static Mutex<HashMap<String, Vec<f64>>> {
    static KNOWN: OnceLock<Mutex<HashMap<String, Vec<f64>>>> = OnceLock::new();
    KNOWN.get_or_init(Default::default)
}

thread_local! {
    /// Where the figures this thread asks for are recorded, while `recording` (shared with the
    /// threads it starts: `Inherited`).
    static RECORDED: RefCell<Option<Arc<Mutex<Figures>>>> = const { RefCell::new(None) };
    /// Whether this thread computes every figure afresh (`fresh`: `check`'s recomputation).
    static FRESH: Cell<bool> = const { Cell::new(false) };
}

/// The figure of `key`: the one known for it, else `compute`'s (then known from now on).
pub(crate) fn figure(key: Key, compute: impl FnOnce() -> Vec<f64>) -> Vec<f64> {
    let key = key.hex();
    let value = if FRESH.with(Cell::get) {
        // A recomputation is compared with what is known, so it does not join it.
        compute()
    } else if let Some(v) = known().lock().ok().and_then(|k| k.get(&key).cloned()) {
        v
    } else {
        let v = compute();
        if let Ok(mut k) = known().lock() {
            k.insert(key.clone(), v.clone());
        }
        v
    };
    RECORDED.with(|r| {
        if let Some(Ok(mut m)) = r.borrow().as_ref().map(|m| m.lock()) {
            m.insert(key, value.clone());
        }
    });
    value
}

/// What a thread's figures are asked under (`recording`, `fresh`), for the threads it starts to
/// ask theirs under the same: a page builder that shares its runs among threads
/// (`render::par_map`) records, and recomputes, every figure as if it were one thread.
#[derive(Clone)]
pub(crate) struct Inherited {
    fresh: bool,
    recorded: Option<Arc<Mutex<Figures>>>,
}

/// This thread's `Inherited`.
pub(crate) fn inherited() -> Inherited {
    Inherited {
        fresh: FRESH.with(Cell::get),
        recorded: RECORDED.with(|r| r.borrow().clone()),
    }
}

impl Inherited {
    /// Runs `f` on this thread under what `self` was taken from.
    pub(crate) fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        let fresh = FRESH.with(|x| x.replace(self.fresh));
        let recorded = RECORDED.with(|r| r.replace(self.recorded.clone()));
        let value = f();
        FRESH.with(|x| x.set(fresh));
        RECORDED.with(|r| r.replace(recorded));
        value
    }
}

/// Adds stored figures (a results file's `derived`) to those this process knows.
pub fn remember(figures: &Figures) {
    if let Ok(mut k) = known().lock() {
        for (key, v) in figures {
            k.entry(key.clone()).or_insert_with(|| v.clone());
        }
    }
}

/// Forgets every figure this process knows: for a test that renders the same run twice, once from
/// the figures its file stores alone.
#[doc(hidden)]
pub fn forget_all() {
    if let Ok(mut k) = known().lock() {
        k.clear();
    }
}

/// Runs `f` on this thread and returns, beside its value, every figure it asked for.
pub fn recording<T>(f: impl FnOnce() -> T) -> (T, Figures) {
    let mine = Arc::new(Mutex::new(Figures::new()));
    let before = RECORDED.with(|r| r.replace(Some(mine.clone())));
    let value = f();
    RECORDED.with(|r| r.replace(before));
    let got = mine
        .lock()
        .map(|mut m| std::mem::take(&mut *m))
        .unwrap_or_default();
    (value, got)
}

/// Runs `f` on this thread with every figure computed from its inputs, none taken from what is
/// known: what `check` compares a file's stored figures with.
pub fn fresh<T>(f: impl FnOnce() -> T) -> T {
    let before = FRESH.with(|x| x.replace(true));
    let value = f();
    FRESH.with(|x| x.set(before));
    value
}

/// `stats::median_ci95` of `xs` with the phases' resamples and seed, computed once per `xs`.
pub(crate) fn median_ci95(xs: &[f64]) -> Option<(f64, f64)> {
    let mut key = Key::new("median_ci95");
    key.usize(stats::BOOTSTRAP_RESAMPLES);
    key.u64(stats::BOOTSTRAP_SEED);
    key.f64s(xs);
    let v = figure(key, || {
        stats::median_ci95(xs, stats::BOOTSTRAP_RESAMPLES, stats::BOOTSTRAP_SEED)
            .map_or_else(Vec::new, |(lo, hi)| vec![lo, hi])
    });
    match v[..] {
        [lo, hi] => Some((lo, hi)),
        _ => None,
    }
}

/// `stats::Sample::median_interval` of `xs`, its interval computed once per `xs`; `None` where
/// `xs` is not a sample or holds one value.
pub(crate) fn median_interval(xs: &[f64]) -> Option<(f64, f64, f64)> {
    let s = stats::Sample::new(xs).ok()?;
    let (lo, hi) = median_ci95(xs)?;
    Some((s.median(), lo, hi))
}

/// `stats::grouped_median_ci95` of `groups` around `median`, computed once per groups and median.
pub(crate) fn grouped_median_ci95(groups: &[&[f64]], median: f64) -> Option<(f64, f64)> {
    let mut key = Key::new("grouped_median_ci95");
    key.usize(stats::BOOTSTRAP_RESAMPLES);
    key.u64(stats::BOOTSTRAP_SEED);
    key.f64(median);
    key.usize(groups.len());
    for g in groups {
        key.f64s(g);
    }
    let v = figure(key, || {
        stats::grouped_median_ci95(groups, median).map_or_else(Vec::new, |(lo, hi)| vec![lo, hi])
    });
    match v[..] {
        [lo, hi] => Some((lo, hi)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_fnv1a_of_its_bytes_and_tells_methods_and_inputs_apart() {
        // FNV-1a 128 of no bytes is its offset basis; of "a", the published test vector
        // (http://www.isthe.com/chongo/tech/comp/fnv/: d228cb696f1a8caf78912b704e4a8964).
        assert_eq!(Key(Key::OFFSET).hex(), "6c62272e07bb014262b821756295c58d");
        let mut a = Key(Key::OFFSET);
        a.bytes(b"a");
        assert_eq!(a.hex(), "d228cb696f1a8caf78912b704e4a8964");
        let of = |method: &str, xs: &[f64]| {
            let mut k = Key::new(method);
            k.f64s(xs);
            k.hex()
        };
        assert_eq!(of("m", &[1.0, 2.0]), of("m", &[1.0, 2.0]));
        assert_ne!(of("m", &[1.0, 2.0]), of("n", &[1.0, 2.0]));
        assert_ne!(of("m", &[1.0, 2.0]), of("m", &[2.0, 1.0]));
        // The length is in the key: [0] then [] is not [] then [0].
        assert_ne!(of("m", &[0.0]), of("m", &[]));
    }

    #[test]
    fn a_figure_is_computed_once_recorded_and_recomputed_when_fresh() {
        let calls = Cell::new(0);
        let key = || {
            let mut k = Key::new("derived::tests");
            k.u64(0x5eed_f00d);
            k
        };
        let compute = || {
            calls.set(calls.get() + 1);
            vec![calls.get() as f64]
        };
        let (first, got) = recording(|| figure(key(), compute));
        assert_eq!(first, vec![1.0]);
        assert_eq!(got.len(), 1);
        assert_eq!(got.values().next(), Some(&vec![1.0]));
        // Known now: not computed again.
        assert_eq!(figure(key(), compute), vec![1.0]);
        assert_eq!(calls.get(), 1);
        // Fresh: computed again, whatever is known.
        assert_eq!(fresh(|| figure(key(), compute)), vec![2.0]);
        assert_eq!(calls.get(), 2);
        // Fresh figures do not join the known ones, and a remembered figure does not replace a
        // known one.
        let stored: Figures = [(key().hex(), vec![9.0])].into();
        remember(&stored);
        assert_eq!(figure(key(), compute), vec![1.0]);
    }

    #[test]
    fn a_thread_started_while_recording_or_fresh_records_and_recomputes_as_its_parent() {
        let key = || {
            let mut k = Key::new("derived::tests::threads");
            k.u64(0x7417);
            k
        };
        let calls = std::sync::atomic::AtomicU32::new(0);
        let compute = || {
            vec![f64::from(
                calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
            )]
        };
        let in_a_thread = || {
            let under = inherited();
            std::thread::scope(|s| s.spawn(|| under.run(|| figure(key(), compute))).join()).unwrap()
        };
        let (v, got) = recording(in_a_thread);
        assert_eq!(v, vec![0.0]);
        assert_eq!(got.get(&key().hex()), Some(&vec![0.0]));
        // Known now; a fresh parent's thread computes it again.
        assert_eq!(in_a_thread(), vec![0.0]);
        assert_eq!(fresh(in_a_thread), vec![1.0]);
    }

    #[test]
    fn the_memoized_interval_is_the_bootstrap_one() {
        let xs: Vec<f64> = (0..40).map(|i| f64::from((i * 37) % 11)).collect();
        let direct = stats::median_ci95(&xs, stats::BOOTSTRAP_RESAMPLES, stats::BOOTSTRAP_SEED);
        assert_eq!(fresh(|| median_ci95(&xs)), direct);
        assert_eq!(median_ci95(&xs), direct);
        let (m, lo, hi) = median_interval(&xs).unwrap();
        assert_eq!((m, Some((lo, hi))), (stats::median(&xs), direct));
        let groups: Vec<&[f64]> = xs.chunks(10).collect();
        let m = stats::median(&xs);
        let direct = stats::grouped_median_ci95(&groups, m);
        assert!(direct.is_some());
        assert_eq!(fresh(|| grouped_median_ci95(&groups, m)), direct);
        assert_eq!(grouped_median_ci95(&groups, m), direct);
        assert_eq!(grouped_median_ci95(&groups[..1], m), None);
        assert_eq!(median_interval(&[3.0]), None);
        assert_eq!(median_interval(&[]), None);
    }
}
