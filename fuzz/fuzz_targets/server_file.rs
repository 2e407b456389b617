//! Any text as a server file (servers/*.toml): a server or an error naming a place in the file,
//! never a panic; a server that loads fills its start command with every placeholder it uses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqprof_core::lab;
use std::collections::BTreeMap;
use std::path::Path;

fuzz_target!(|text: &str| {
    match lab::parse(Path::new("fuzz.toml"), text) {
        Ok(s) => {
            let mut values: BTreeMap<String, String> = lab::PLACEHOLDERS
                .iter()
                .map(|p| (p.to_string(), "x".to_string()))
                .collect();
            if let Some(t) = s.resumption.get("off") {
                values.extend(t.clone());
            }
            for word in &s.start {
                let _ = lab::fill(word, &values);
            }
            let _ = s.groups_for(&["X25519", "X25519MLKEM768"]);
            let _ = s.version_in(text);
        }
        Err(e) => assert!(e.to_string().starts_with("fuzz.toml"), "{e}"),
    }
});
