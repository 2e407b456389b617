//! Any text as the output of liboqs's speed tools, `openssl speed -mr`, a callgrind file or
//! h2load: rows or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqprof_core::parse::{callgrind, h2load, liboqs_speed, openssl_speed};

fuzz_target!(|text: &str| {
    if let Ok(rows) = liboqs_speed::parse(text) {
        assert!(!rows.is_empty());
    }
    if let Ok(rows) = openssl_speed::parse(text) {
        for r in rows {
            assert!(r.count > 0 && r.seconds > 0.0);
        }
    }
    if let Ok((events, totals)) = callgrind::totals(text) {
        assert_eq!(events.len(), totals.len());
    }
    if let Ok(run) = h2load::parse(text) {
        assert!(run.succeeded <= run.total);
    }
});
