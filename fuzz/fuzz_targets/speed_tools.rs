//! Any text as the output of liboqs's speed tools or `openssl speed -mr`: rows or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqprof_core::parse::{liboqs_speed, openssl_speed};

fuzz_target!(|text: &str| {
    if let Ok(rows) = liboqs_speed::parse(text) {
        assert!(!rows.is_empty());
    }
    if let Ok(rows) = openssl_speed::parse(text) {
        for r in rows {
            assert!(r.count > 0 && r.seconds > 0.0);
        }
    }
});
