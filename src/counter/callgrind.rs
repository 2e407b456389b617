//! Callgrind: the counting child under valgrind, with collection switched on only inside
//! `pqprof_counted_call` and one dump as each counted call returns. With its cache simulation it
//! also gives data reads and writes and simulated cache misses.

use super::{child_args, ChildReport, Counter};
use crate::results::{CounterMethod, Instructions, Phase};
use crate::suite::Workload;
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Callgrind {
    /// `valgrind --version`.
    pub(crate) version: String,
}

impl Callgrind {
    /// Valgrind slows code by about this much against its native time.
    pub(crate) const SLOWDOWN: f64 = 60.0;

    /// The valgrind on PATH, or why there is none.
    pub(crate) fn detect() -> Result<Callgrind> {
        Ok(Callgrind {
            version: valgrind()?,
        })
    }
}

/// The valgrind on PATH and its version, or why there is none.
pub fn valgrind() -> Result<String> {
    let out = Command::new("valgrind")
        .arg("--version")
        .output()
        .context("valgrind is not installed (apt-get install valgrind)")?;
    // Under qemu-user a missing program can "start" and fail in the child: only a version counts.
    if !out.status.success() {
        bail!("valgrind --version failed: is valgrind installed? (apt-get install valgrind)");
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Counter for Callgrind {
    fn tool(&self) -> String {
        format!("{} --tool=callgrind --cache-sim=yes", self.version)
    }

    fn method(&self) -> CounterMethod {
        CounterMethod::Callgrind
    }

    fn slowdown(&self) -> f64 {
        Self::SLOWDOWN
    }

    fn cannot(&self, p: &Phase) -> Option<String> {
        (p.backend == "go").then(|| "the Go runtime does not run under valgrind".into())
    }

    fn count(
        &self,
        exe: &Path,
        dir: &Path,
        p: &Phase,
        calls: usize,
        w: Workload,
    ) -> Result<Instructions> {
        let out: PathBuf = dir.join(format!(
            "cg-{}-{}-{}-{:?}.out",
            p.backend, p.algorithm, p.operation, p.form
        ));
        let mut cmd = Command::new("valgrind");
        // One dump as each counted call returns: out.1, out.2, ... hold each call's own counts.
        cmd.args([
            "--tool=callgrind",
            "--cache-sim=yes",
            "--collect-atstart=no",
            "--toggle-collect=pqprof_counted_call",
            "--dump-after=pqprof_counted_call",
            "-q",
        ])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(exe)
        .args(child_args(p, calls, w));
        let o = crate::interrupt::die_with_parent(&mut cmd)
            .output()
            .context("cannot start valgrind")?;
        if !o.status.success() {
            bail!(
                "valgrind: {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
        }
        let report: ChildReport =
            serde_json::from_slice(&o.stdout).context("the counting child's report")?;
        let (events, totals, ir_calls) = dumps(&out, report.calls)?;
        Ok(Instructions::new(
            events,
            totals,
            report.calls,
            format!("valgrind's CPU: {}", report.cpu),
            ir_calls,
        ))
    }
}

/// Reads callgrind's numbered dumps `out.1` .. `out.N` (one per counted call) and the final `out`
/// (what was collected after the last dump: nothing, collection being off outside the call):
/// the events, their totals over all dumps, and each call's instructions (Ir).
fn dumps(out: &Path, calls: usize) -> Result<(Vec<String>, Vec<u64>, Vec<u64>)> {
    let read = |p: &Path| -> Result<(Vec<String>, Vec<u64>)> {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("{}: no callgrind output", p.display()))?;
        crate::parse::callgrind::totals(&text).with_context(|| p.display().to_string())
    };
    let mut events: Option<Vec<String>> = None;
    let mut totals: Vec<u64> = Vec::new();
    let mut ir_calls = Vec::new();
    let mut add = |e: Vec<String>, t: Vec<u64>, ir_calls: Option<&mut Vec<u64>>| -> Result<()> {
        let known = events.get_or_insert_with(|| e.clone());
        if *known != e {
            bail!("callgrind dumps with different events");
        }
        totals.resize(t.len(), 0);
        totals.iter_mut().zip(&t).for_each(|(a, b)| *a += b);
        if let Some(v) = ir_calls {
            v.push(
                e.iter()
                    .position(|x| x == "Ir")
                    .and_then(|k| t.get(k).copied())
                    .ok_or_else(|| anyhow!("no Ir event"))?,
            );
        }
        Ok(())
    };
    for n in 1..=calls {
        let (e, t) = read(&PathBuf::from(format!("{}.{n}", out.display())))?;
        add(e, t, Some(&mut ir_calls))?;
    }
    // The final dump at exit, if callgrind wrote one (with or without the next number).
    for last in [
        out.to_path_buf(),
        PathBuf::from(format!("{}.{}", out.display(), calls + 1)),
    ] {
        if last.exists() {
            if let Ok((e, t)) = read(&last) {
                add(e, t, None)?;
            }
        }
    }
    let events = events.ok_or_else(|| anyhow!("no callgrind dump"))?;
    Ok((events, totals, ir_calls))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_call_dumps_give_each_call_and_the_totals() {
        let dir = std::env::temp_dir().join(format!("pqprof-dumps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("cg.out");
        // Two calls (Ir 100 and 120, Dr 10 and 12) and the final dump with nothing collected.
        std::fs::write(dir.join("cg.out.1"), "events: Ir Dr\nsummary: 100 10\n").unwrap();
        std::fs::write(dir.join("cg.out.2"), "events: Ir Dr\nsummary: 120 12\n").unwrap();
        std::fs::write(&out, "events: Ir Dr\nsummary: 0 0\n").unwrap();
        let (events, totals, ir) = dumps(&out, 2).unwrap();
        assert_eq!(
            (events, totals, ir),
            (
                vec!["Ir".to_string(), "Dr".to_string()],
                vec![220, 22],
                vec![100, 120]
            )
        );
        // A missing call's dump is an error, not a shorter list.
        assert!(dumps(&out, 3).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
