//! Any text as a suite file: a suite list or an error naming a place in the file, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqprof_core::suite;
use std::path::Path;

fuzz_target!(|text: &str| {
    match suite::parse(
        Path::new("fuzz.toml"),
        text,
        &["liboqs", "rustcrypto", "openssl"],
    ) {
        Ok(suites) => {
            for s in &suites {
                let _ = s.wire_shares();
                assert!(!s.phases.is_empty());
            }
        }
        Err(e) => assert!(e.to_string().starts_with("fuzz.toml")),
    }
});
