// Records the tool's commit and the compiler version in the binary, for the results' `run` section.
use std::process::Command;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// In-situ timing's libcrypto wrappers, and memory per operation's allocator wrappers.
const WRAPPERS: [&str; 2] = ["src/insitu/openssl_wrap.rs", "src/memory/heap.rs"];

/// The symbols a wrapper file wraps: every `fn __wrap_NAME` in it.
fn wrapped(file: &str) -> Vec<String> {
    let src = std::fs::read_to_string(file).unwrap_or_default();
    src.lines()
        .filter_map(|l| {
            l.trim_start()
                .strip_prefix("pub unsafe extern \"C\" fn __wrap_")
        })
        .filter_map(|rest| rest.split('(').next())
        .map(str::to_string)
        .collect()
}

fn main() {
    let commit =
        output("git", &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = output("git", &["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|s| !s.is_empty());
    println!(
        "cargo:rustc-env=PQPROF_COMMIT={commit}{}",
        if dirty { "-dirty" } else { "" }
    );
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    println!(
        "cargo:rustc-env=PQPROF_RUSTC={}",
        output(&rustc, &["--version"]).unwrap_or_else(|| "unknown".into())
    );
    // In-situ timing inside libssl (src/insitu/openssl_wrap.rs): the linker routes these libcrypto
    // calls through timing wrappers; memory per operation (src/memory/heap.rs): every allocator
    // call in the executable through counting wrappers.
    for file in WRAPPERS {
        let wrapped = wrapped(file);
        // A moved or renamed file would silently leave libssl untimed or the heap uncounted:
        // refuse to build instead.
        assert!(
            !wrapped.is_empty(),
            "build.rs: no `pub unsafe extern \"C\" fn __wrap_NAME` in {file}"
        );
        let allocator = file.starts_with("src/memory/");
        for sym in wrapped {
            if allocator {
                // The pqprof binary only: the standard library calls malloc too, so every program
                // linked with this wrap must hold the wrappers, and test programs that do not use
                // the library would not. Pulled in from the library whichever object first calls
                // the symbol (the standard library comes after pqprof's objects on the line).
                println!("cargo:rustc-link-arg-bins=-Wl,--wrap={sym}");
                println!("cargo:rustc-link-arg-bins=-Wl,--undefined=__wrap_{sym}");
            } else {
                println!("cargo:rustc-link-arg=-Wl,--wrap={sym}");
            }
        }
        println!("cargo:rerun-if-changed={file}");
    }
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
}
