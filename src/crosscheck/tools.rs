//! The canonical tools, built from the very sources pqprof links: liboqs's speed_kem / speed_sig
//! from the liboqs tree vendored in `oqs-sys` and linked with the very liboqs.a pqprof links, and
//! the `openssl` app from the OpenSSL tree vendored in `openssl-src`. Both are built once and cached
//! under `target/crosscheck/`.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// liboqs 0.13 identifiers of the algorithms the suites use (OQS_MINIMAL_BUILD syntax).
const LIBOQS_ALGS: &str = "KEM_ml_kem_768;SIG_ml_dsa_44;SIG_ml_dsa_65;SIG_ml_dsa_87;SIG_falcon_512;SIG_falcon_1024;SIG_sphincs_shake_128s_simple;SIG_sphincs_shake_128f_simple";

/// The Configure options openssl-src 300.5.x passes (its src/lib.rs, default features).
const OPENSSL_OPTIONS: [&str; 15] = [
    "no-shared",
    "no-module",
    "no-tests",
    "no-comp",
    "no-zlib",
    "no-zlib-dynamic",
    "--libdir=lib",
    "no-legacy",
    "no-ssl3",
    "no-md2",
    "no-rc5",
    "no-weak-ssl-ciphers",
    "no-camellia",
    "no-idea",
    "no-seed",
];

fn run(cmd: &mut Command, what: &str, log: &Path) -> Result<()> {
    let out = cmd
        .output()
        .with_context(|| format!("{what}: cannot start {:?}", cmd.get_program()))?;
    std::fs::write(log, [&out.stdout[..], &out.stderr[..]].concat())?;
    if !out.status.success() {
        bail!("{what} failed ({}); see {}", out.status, log.display());
    }
    Ok(())
}

/// Where cargo unpacked a dependency's sources (`cargo metadata`).
pub(crate) fn package_dir(name: &str) -> Result<PathBuf> {
    let out = Command::new("cargo")
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .context("cargo metadata: is cargo installed?")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let manifest = v["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == name))
        .and_then(|p| p["manifest_path"].as_str())
        .ok_or_else(|| anyhow!("{name} is not a dependency"))?;
    Ok(Path::new(manifest)
        .parent()
        .ok_or_else(|| anyhow!("manifest without folder"))?
        .to_path_buf())
}

/// The OpenSSL that openssl-sys built and linked (its install folder under target/).
pub(crate) fn vendored_openssl(profile_dir: &Path) -> Result<PathBuf> {
    let build = profile_dir.join("build");
    for entry in std::fs::read_dir(&build)
        .with_context(|| format!("{}: no build folder", build.display()))?
    {
        let p = entry?.path().join("out/openssl-build/install");
        if p.join("lib/libcrypto.a").exists() {
            return Ok(p);
        }
    }
    bail!(
        "no vendored OpenSSL under {}: build pqprof first (cargo build --release)",
        build.display()
    )
}

pub(crate) struct Tools {
    pub(crate) speed_kem: PathBuf,
    pub(crate) speed_sig: PathBuf,
    pub(crate) openssl: Option<PathBuf>,
}

/// Builds (or reuses) the tools. `profile_dir` is target/release.
pub(crate) fn build(
    profile_dir: &Path,
    with_openssl: bool,
    log: &mut dyn FnMut(&str),
) -> Result<Tools> {
    let work = profile_dir
        .parent()
        .unwrap_or(profile_dir)
        .join("crosscheck");
    std::fs::create_dir_all(&work)?;
    let oqs_build = work.join("liboqs");
    let (speed_kem, speed_sig) = (
        oqs_build.join("tests/speed_kem"),
        oqs_build.join("tests/speed_sig"),
    );
    let c_flags = vendored_liboqs_flags(profile_dir)?;
    let stamp = work.join("liboqs-flags.txt");
    let same_flags = std::fs::read_to_string(&stamp).is_ok_and(|s| s == c_flags);
    if !speed_kem.exists() || !speed_sig.exists() || !same_flags {
        log(&format!("building liboqs speed_kem and speed_sig with the library's flags ({}; once, about 2 minutes)", c_flags.trim()));
        let src = package_dir("oqs-sys")?.join("liboqs");
        let root = vendored_openssl(profile_dir)?;
        let _ = std::fs::remove_dir_all(&oqs_build);
        run(
            Command::new("cmake")
                .arg("-S")
                .arg(&src)
                .arg("-B")
                .arg(&oqs_build)
                .args([
                    "-DCMAKE_BUILD_TYPE=Release",
                    "-DOQS_DIST_BUILD=ON",
                    "-DOQS_BUILD_ONLY_LIB=OFF",
                    "-DOQS_USE_OPENSSL=ON",
                ])
                .arg(format!("-DCMAKE_C_FLAGS={c_flags}"))
                .arg(format!("-DOPENSSL_ROOT_DIR={}", root.display()))
                .arg("-DOPENSSL_USE_STATIC_LIBS=TRUE")
                .arg(format!("-DOQS_MINIMAL_BUILD={LIBOQS_ALGS}")),
            "cmake configure of liboqs",
            &work.join("liboqs-configure.log"),
        )?;
        run(
            Command::new("cmake").arg("--build").arg(&oqs_build).args([
                "--target",
                "speed_kem",
                "speed_sig",
                "-j",
                "2",
            ]),
            "building speed_kem / speed_sig",
            &work.join("liboqs-build.log"),
        )?;
        std::fs::write(&stamp, &c_flags)?;
    }
    let lib = vendored_liboqs(profile_dir)?;
    for tool in ["speed_kem", "speed_sig"] {
        relink(
            &oqs_build,
            tool,
            &lib,
            &work.join(format!("{tool}-link.log")),
        )?;
    }
    let openssl = if with_openssl {
        Some(build_openssl(
            &work,
            &vendored_openssl_flags(profile_dir)?,
            log,
        )?)
    } else {
        None
    };
    Ok(Tools {
        speed_kem,
        speed_sig,
        openssl,
    })
}

/// The liboqs.a oqs-sys built, which pqprof links: the newest under `build/oqs-sys-*/out/`.
fn vendored_liboqs(profile_dir: &Path) -> Result<PathBuf> {
    build_files(
        profile_dir,
        "oqs-sys-",
        &["out/lib/liboqs.a", "out/lib64/liboqs.a"],
    )?
    .into_iter()
    .next()
    .ok_or_else(|| {
        anyhow!(
            "no liboqs.a under {}/build/oqs-sys-*/out: build pqprof first (cargo build --release)",
            profile_dir.display()
        )
    })
}

/// Every file `build/<prefix>*/<rel>` that exists, for each `rel`, newest first.
fn build_files(profile_dir: &Path, prefix: &str, rels: &[&str]) -> Result<Vec<PathBuf>> {
    let build = profile_dir.join("build");
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for e in std::fs::read_dir(&build)
        .with_context(|| format!("{}: no build folder", build.display()))?
        .flatten()
    {
        if !e.file_name().to_string_lossy().starts_with(prefix) {
            continue;
        }
        for path in rels.iter().map(|r| e.path().join(r)) {
            if let Ok(when) = std::fs::metadata(&path).and_then(|m| m.modified()) {
                found.push((when, path));
            }
        }
    }
    found.sort_by_key(|(when, _)| std::cmp::Reverse(*when));
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// Links `tool` again, CMake's own link line with `lib` in place of the liboqs.a its build made,
/// so the tool's harness times the very library code pqprof times. Two builds of the same source
/// with the same flags need not run alike: on the Zen 4 VM, speed_sig linked with its own build ran
/// SLH-DSA-SHAKE-128f keygen, sign and verify 4-6% slower (1.470 M against 1.410 M cycles per
/// keygen) with the same instructions, its AVX2 Keccak code placed 16 bytes apart mod 64.
fn relink(oqs_build: &Path, tool: &str, lib: &Path, log: &Path) -> Result<()> {
    let link_txt = oqs_build.join(format!("tests/CMakeFiles/{tool}.dir/link.txt"));
    let line = std::fs::read_to_string(&link_txt)
        .with_context(|| format!("{}: CMake's link line for {tool}", link_txt.display()))?;
    let own = " ../lib/liboqs.a ";
    if !line.contains(own) {
        bail!(
            "{}: no `{}` to replace on {tool}'s link line",
            link_txt.display(),
            own.trim()
        );
    }
    let quoted = format!("'{}'", lib.display().to_string().replace('\'', "'\\''"));
    let line = line.trim().replacen(own, &format!(" {quoted} "), 1);
    run(
        Command::new("sh")
            .arg("-c")
            .arg(&line)
            .current_dir(oqs_build.join("tests")),
        &format!("linking {tool} with pqprof's liboqs.a"),
        log,
    )
}

/// The C flags oqs-sys gave liboqs's CMake when it built the liboqs pqprof links (cmake-rs passes
/// cc's flags: -ffunction-sections -fdata-sections -fPIC -m64 -march=x86-64 ...), read from its
/// build output, so speed_kem / speed_sig run the library compiled as pqprof's is. Built with
/// CMake's defaults alone, speed_sig ran SLH-DSA-SHAKE-128f 4-6% slower than pqprof on Zen 4.
pub(crate) fn vendored_liboqs_flags(profile_dir: &Path) -> Result<String> {
    let out = newest_build_output(profile_dir, "oqs-sys-", |l| {
        l.starts_with("running") && l.contains("\"cmake\"")
    })?;
    out.split('"')
        .find_map(|a| a.strip_prefix("-DCMAKE_C_FLAGS="))
        .map(str::to_string)
        .ok_or_else(|| anyhow!("oqs-sys's CMake invocation has no CMAKE_C_FLAGS"))
}

/// The newest build-script output (stdout or stderr) of the package `prefix`* with a line `wanted`
/// accepts: that line.
fn newest_build_output(
    profile_dir: &Path,
    prefix: &str,
    wanted: impl Fn(&str) -> bool,
) -> Result<String> {
    // openssl-src prints its commands to stdout, cmake-rs to stderr.
    build_files(profile_dir, prefix, &["output", "stderr"])?
        .iter()
        .find_map(|out| std::fs::read_to_string(out).ok()?.lines().find(|l| wanted(l)).map(str::to_string))
        .ok_or_else(|| anyhow!("no {prefix}* build output under {}/build: build pqprof first (cargo build --release)", profile_dir.display()))
}

/// The compiler flags openssl-src gave OpenSSL's Configure when it built the libcrypto pqprof links
/// (from openssl-sys's build output: cc's -O level, -march, -fPIC ...), so the openssl app is
/// compiled as the library it is compared with. Without them the app is built with Configure's own
/// -O3, and OpenSSL's C ML-KEM then runs up to 1.7x faster in `openssl speed` than in the -O2
/// library pqprof measures: a build difference, not a measuring one.
pub(crate) fn vendored_openssl_flags(profile_dir: &Path) -> Result<Vec<String>> {
    let line = newest_build_output(profile_dir, "openssl-sys-", |l| {
        l.starts_with("running") && l.contains("\"./Configure\"")
    })?;
    let args: Vec<String> = line
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    let t = args
        .iter()
        .position(|a| a.starts_with("linux-"))
        .ok_or_else(|| anyhow!("openssl-sys's Configure line names no linux target"))?;
    Ok(args[t + 1..]
        .iter()
        .filter(|a| a.starts_with('-') && !a.starts_with("--"))
        .cloned()
        .collect())
}

fn build_openssl(work: &Path, flags: &[String], log: &mut dyn FnMut(&str)) -> Result<PathBuf> {
    let tree = work.join("openssl");
    let app = tree.join("apps/openssl");
    let stamp = work.join("openssl-flags.txt");
    let same_flags = std::fs::read_to_string(&stamp).is_ok_and(|s| s == flags.join(" "));
    if app.exists() && same_flags {
        return Ok(app);
    }
    log(&format!("building the openssl app from the openssl-src tree with the library's flags ({}; once, about 5 minutes)", flags.join(" ")));
    let src = package_dir("openssl-src")?.join("openssl");
    let _ = std::fs::remove_dir_all(&tree);
    run(
        Command::new("cp").arg("-r").arg(&src).arg(&tree),
        "copying the OpenSSL sources",
        &work.join("openssl-copy.log"),
    )?;
    let target = match std::env::consts::ARCH {
        "x86_64" => "linux-x86_64",
        "aarch64" => "linux-aarch64",
        other => bail!("no OpenSSL Configure target known for {other}"),
    };
    run(
        Command::new("perl")
            .arg("./Configure")
            .arg(target)
            .args(OPENSSL_OPTIONS)
            .args(flags)
            .current_dir(&tree),
        "OpenSSL Configure",
        &work.join("openssl-configure.log"),
    )?;
    run(
        Command::new("make")
            .args(["-j2", "build_generated"])
            .current_dir(&tree),
        "make build_generated",
        &work.join("openssl-generated.log"),
    )?;
    run(
        Command::new("make")
            .args(["-j2", "apps/openssl"])
            .current_dir(&tree),
        "make apps/openssl",
        &work.join("openssl-app.log"),
    )?;
    std::fs::write(&stamp, flags.join(" "))?;
    Ok(app)
}
