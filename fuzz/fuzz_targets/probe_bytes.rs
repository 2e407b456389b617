//! Any bytes as what a probed server sent: its records, its plaintext flight, its last
//! ServerHello's share and a certificate of its chain are read or refused, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqprof_core::parse::{tls, x509};

fuzz_target!(|data: &[u8]| {
    let records = tls::records(data);
    assert!(records.iter().map(|(_, r)| r.len()).sum::<usize>() <= data.len());
    let plain = tls::plaintext_records(data);
    assert!(plain.len() <= data.len());
    if let Some((_, n)) = tls::last_server_share(&plain) {
        assert!(n <= data.len());
    }
    for n in tls::client_hello_sizes(data) {
        assert!(n as usize <= data.len());
    }
    let _ = x509::algorithms(data);
});
