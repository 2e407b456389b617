//! Any bytes as an SSH first flight: the KEXINIT parser answers or says None, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(names) = pqprof_core::parse::ssh::kexinit_methods(data) {
        assert!(names.iter().map(|n| n.len()).sum::<usize>() <= data.len());
    }
});
