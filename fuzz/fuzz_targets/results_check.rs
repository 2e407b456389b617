//! Any text as a results file: read, checked, compared with itself and exported without a panic
//! or a hang, whatever the numbers in it say.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqprof_core::{check, comparison, export, results};

fuzz_target!(|text: &str| {
    let Ok(r) = results::parse(text) else { return };
    let _ = check::check(&r);
    let c = comparison::compare(&r, &r, comparison::DEFAULT_NOISE_FLOOR_PCT);
    let _ = comparison::render(&c, comparison::Format::Table);
    // Every section in every format, as `pqprof export --section` writes it.
    for section in export::Section::all() {
        let Ok(t) = export::table(&r, &[section]) else {
            continue;
        };
        for f in [export::Format::Csv, export::Format::Md, export::Format::Json] {
            let _ = export::exporter(f).serialize(&export::Source::run(&r), &t);
        }
    }
});
