//! Renders the site from results files or folders without the measuring binary (which links the
//! C libraries): `cargo run --release -p pqprof-core --example render -- results --out site`.
//! Also the renderer's benchmark: it prints how long loading and rendering took.
//!
//! Usage: render FILE|DIR... --out DIR [--all] [--check]
//! `--check` runs `check` on every results file given and `check_site` on the site rendered, and
//! exits non-zero on any problem.

use pqprof_core::render;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut inputs = Vec::new();
    let mut out = None;
    let mut check = false;
    let mut all = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = args.next().map(PathBuf::from),
            "--check" => check = true,
            "--all" => all = true,
            _ => inputs.push(PathBuf::from(a)),
        }
    }
    let Some(out) = out else {
        eprintln!("usage: render FILE|DIR... --out DIR [--all] [--check]");
        return ExitCode::from(2);
    };
    let start = std::time::Instant::now();
    let opts = render::Options {
        source_url: None,
        baseline: None,
        all,
    };
    let files = match render::inputs(&inputs) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("render: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = render::render(&files, &out, &opts) {
        eprintln!("render: {e:#}");
        return ExitCode::FAILURE;
    }
    println!(
        "{}: {} file(s) rendered in {:.3} s",
        out.display(),
        files.len(),
        start.elapsed().as_secs_f64()
    );
    let mut failed = false;
    if check {
        for f in &files {
            match pqprof_core::results::read(f) {
                Ok(r) => {
                    let mut p = pqprof_core::derived::fresh(|| pqprof_core::check::check(&r));
                    p.extend(pqprof_core::render::check_derived(&r));
                    if !p.is_empty() {
                        failed = true;
                        let lines: Vec<String> = p.iter().map(|x| x.line()).collect();
                        eprintln!(
                            "{}: {} problem(s): {}",
                            f.display(),
                            p.len(),
                            lines.join("; ")
                        );
                    }
                }
                Err(e) => {
                    failed = true;
                    eprintln!("{}: {e:#}", f.display());
                }
            }
        }
        match render::verify::check_site(&out) {
            Ok(p) if p.is_empty() => println!("{}: site checks out", out.display()),
            Ok(p) => {
                failed = true;
                eprintln!("{}: {}", out.display(), p.join("; "));
            }
            Err(e) => {
                failed = true;
                eprintln!("{}: {e:#}", out.display());
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
