//! QEMU's TCG plugin `tools/aarch64/pqcount.c`: the counting child runs under the same
//! qemu-aarch64 and `-cpu` model as the run, and the plugin appends one line per region between
//! the markers `pqprof_count_begin` and `pqprof_count_end` to a file: each call's guest
//! instructions, exactly (an inline add per executed instruction, proved on regions of known size
//! by tools/aarch64/counttest). It counts instructions only (no cache model), reported as `Ir`.

use super::{child_args, ChildReport, Counter};
use crate::results::{CounterMethod, Instructions, Phase};
use crate::suite::Workload;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct QemuPlugin {
    pub(crate) qemu: PathBuf,
    /// The `-cpu` model, the one the run itself is emulated on.
    pub(crate) cpu: String,
    /// libpqcount.so.
    pub(crate) plugin: PathBuf,
    /// `qemu-aarch64 --version`'s first line.
    pub(crate) version: String,
}

impl QemuPlugin {
    /// The plugin's inline add per instruction costs little beside translation: the estimate
    /// given is already the call's emulated time.
    pub(crate) const SLOWDOWN: f64 = 1.2;
}

impl Counter for QemuPlugin {
    fn tool(&self) -> String {
        format!(
            "{} -cpu {} -plugin {} (tools/aarch64/pqcount.c)",
            self.version,
            self.cpu,
            self.plugin.display()
        )
    }

    fn method(&self) -> CounterMethod {
        CounterMethod::QemuPlugin
    }

    fn slowdown(&self) -> f64 {
        Self::SLOWDOWN
    }

    /// The estimate is a call's emulated time, which follows the host's load (with a build beside
    /// it, libcrux's ML-KEM-1024 decaps once passed 2 ms and was counted over 10 calls, over 50 in
    /// the next run): the number of calls must not move with it, so every phase gets the full
    /// count while the full count fits in `MAX_SECONDS`.
    fn full_count_ns(&self) -> f64 {
        super::MAX_SECONDS / super::MAX_CALLS as f64 / Self::SLOWDOWN * 1e9
    }

    fn count(
        &self,
        exe: &Path,
        dir: &Path,
        p: &Phase,
        calls: usize,
        w: Workload,
    ) -> Result<Instructions> {
        let out = dir.join(format!(
            "pq-{}-{}-{}-{:?}.lines",
            p.backend, p.algorithm, p.operation, p.form
        ));
        let _ = std::fs::remove_file(&out);
        // qemu-user hands a guest's execve to the host kernel, so the emulator is started as the
        // host program it is, with the model and the plugin named.
        let mut cmd = Command::new(&self.qemu);
        cmd.args(["-cpu", &self.cpu, "-plugin"])
            .arg(format!("{},out={}", self.plugin.display(), out.display()))
            .arg(exe)
            .args(child_args(p, calls, w));
        let o = crate::interrupt::die_with_parent(&mut cmd)
            .output()
            .with_context(|| format!("cannot start {}", self.qemu.display()))?;
        if !o.status.success() {
            bail!(
                "{} count-phase: {}",
                self.qemu.display(),
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
        }
        let report: ChildReport =
            serde_json::from_slice(&o.stdout).context("the counting child's report")?;
        let text = std::fs::read_to_string(&out)
            .with_context(|| format!("{}: the plugin wrote no counts", out.display()))?;
        let ir_calls = lines(&text, report.calls)?;
        let total = ir_calls.iter().sum();
        Ok(Instructions::new(
            vec!["Ir".into()],
            vec![total],
            report.calls,
            format!("qemu -cpu {}: {}", self.cpu, report.cpu),
            ir_calls,
        ))
    }
}

/// The plugin's lines: one count per counted call, exactly `calls` of them.
fn lines(text: &str, calls: usize) -> Result<Vec<u64>> {
    let counts: Vec<u64> = text
        .lines()
        .map(|l| l.trim().parse::<u64>())
        .collect::<Result<_, _>>()
        .context("a line of the plugin's output is not a count")?;
    if counts.len() != calls {
        bail!(
            "the plugin wrote {} counts for {calls} calls (a marker inlined, merged or stripped?)",
            counts.len()
        );
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line_per_call_or_an_error() {
        assert_eq!(
            super::lines("186955\n186957\n", 2).unwrap(),
            vec![186955, 186957]
        );
        assert!(super::lines("186955\n", 2).is_err());
        assert!(super::lines("186955\nx\n", 2).is_err());
    }
}
