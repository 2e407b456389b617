//! Any bytes as a TLS first flight: the key_share parser answers or says None, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((msg, shares)) = pqprof_core::parse::tls::key_shares(data) {
        assert!(msg == 1 || msg == 2, "message type {msg}");
        for (_, len) in shares {
            assert!(len <= data.len());
        }
    }
});
