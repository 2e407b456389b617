//! A run under an emulator: tools/aarch64 starts the aarch64 build of pqprof under qemu-aarch64
//! with a fixed `-cpu` model and says so (`run --emulator QEMU --emulated-cpu MODEL --qemu-plugin
//! SO`). The emulator's clock is the host's time stretched by translation (CNTVCT_EL0 under
//! qemu-user is the host's clock at 62.5 MHz), so nothing is timed: each phase's case is built and
//! its first output verified as in a timed run, then its instructions are counted by qemu's plugin,
//! and the results carry those counts alone, marked emulated (`run.host.emulated`).

use crate::backend::Backend;
use crate::counter::{self, QemuPlugin};
use crate::plan::Plan;
use crate::results::{CounterRun, Emulation, Failure, Host, Phase, PhaseId};
use anyhow::{anyhow, bail, Context, Result};
use std::io::Read;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

#[derive(Debug, Clone)]
pub(crate) struct Emulator {
    /// The qemu-aarch64 this process was started under.
    pub(crate) qemu: PathBuf,
    /// Its `-cpu` model.
    pub(crate) cpu: String,
    /// The counting plugin (libpqcount.so), for `--counter instructions`.
    pub(crate) plugin: Option<PathBuf>,
}

impl Emulator {
    /// The emulator's version and the architecture it runs on.
    pub(crate) fn describe(&self) -> Result<Emulation> {
        let out = Command::new(&self.qemu)
            .arg("--version")
            .output()
            .with_context(|| format!("--emulator {}: cannot start it", self.qemu.display()))?;
        let version = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        if !out.status.success() || version.is_empty() {
            bail!(
                "--emulator {}: no version from --version",
                self.qemu.display()
            );
        }
        let mut head = [0u8; 20];
        std::fs::File::open(&self.qemu)
            .and_then(|mut f| f.read_exact(&mut head))
            .with_context(|| format!("{}: cannot read its ELF header", self.qemu.display()))?;
        Ok(Emulation {
            emulator: version,
            cpu: self.cpu.clone(),
            host_arch: elf_machine(&head)
                .ok_or_else(|| anyhow!("{}: not an ELF file", self.qemu.display()))?
                .into(),
        })
    }

    /// qemu answers /proc/cpuinfo (MIDR_EL1's implementer and part) for the model it emulates:
    /// a run whose CPU is not the one named is refused, since the counts depend on the model
    /// (qemu's default `max` advertises SHA3, SVE2 and more, and changes code paths).
    pub(crate) fn check_cpu(&self, host: &Host) -> Result<()> {
        if host.microarchitecture != self.cpu {
            bail!(
                "--emulated-cpu {}: this process runs on {} ({}); start it under `{} -cpu {}`",
                self.cpu,
                host.cpu_model,
                if host.microarchitecture.is_empty() {
                    "a core pqprof does not know"
                } else {
                    &host.microarchitecture
                },
                self.qemu.display(),
                self.cpu
            );
        }
        Ok(())
    }

    /// The plugin counter for this emulator.
    pub(crate) fn counter(&self, e: &Emulation) -> Result<QemuPlugin> {
        let plugin = self.plugin.clone().ok_or_else(|| {
            anyhow!("--counter instructions under --emulator needs --qemu-plugin (libpqcount.so)")
        })?;
        if !plugin.is_file() {
            bail!("--qemu-plugin {}: no such file", plugin.display());
        }
        Ok(QemuPlugin {
            qemu: self.qemu.clone(),
            cpu: self.cpu.clone(),
            plugin,
            version: e.emulator.clone(),
        })
    }
}

/// The architecture an ELF header's e_machine names (System V ABI, "Machine" values).
pub(crate) fn elf_machine(head: &[u8]) -> Option<&'static str> {
    if head.len() < 20 || &head[..4] != b"\x7fELF" {
        return None;
    }
    let machine = if head[5] == 2 {
        u16::from_be_bytes([head[18], head[19]])
    } else {
        u16::from_le_bytes([head[18], head[19]])
    };
    Some(match machine {
        0x3e => "x86_64",
        0xb7 => "aarch64",
        0x03 => "x86",
        0x28 => "arm",
        0xf3 => "riscv",
        0x15 => "powerpc64",
        0x16 => "s390x",
        _ => "unknown",
    })
}

/// Every planned phase built and its first output verified (setup and checks as in a timed run,
/// and nothing timed), then counted: the phases that have their instructions, the failures, and
/// the counter's run. `includes` says what a phase's call contains.
pub(crate) fn count_phases(
    backends: &[Box<dyn Backend>],
    plan: &Plan,
    counter: &QemuPlugin,
    includes: &dyn Fn(&PhaseId) -> String,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<Phase>, Vec<Failure>, CounterRun)> {
    let mut phases = Vec::new();
    let mut failures = Vec::new();
    // One call's emulated time per phase: only to choose how many calls to count (`calls_for`),
    // never stored.
    let mut estimates: Vec<(PhaseId, f64)> = Vec::new();
    for (key, workload) in &plan.phases {
        crate::interrupt::check()?;
        let (Some(alg), Some(be)) = (
            crate::algorithm::find(&key.algorithm),
            backends.iter().find(|b| b.name() == key.backend),
        ) else {
            continue;
        };
        let verified = crate::case::build(be.as_ref(), alg, key.operation, workload, key.form)
            .and_then(|mut case| {
                case.prepare(0, 0)?;
                let t = Instant::now();
                case.run(0);
                estimates.push((key.clone(), t.elapsed().as_nanos() as f64));
                case.keep(0);
                case.verify_kept()
            });
        match verified {
            Ok(n) => phases.push(crate::figures::arch::counted_phase(
                key.clone(),
                n,
                includes(key),
            )),
            Err(e) => failures.push(Failure::new(key, format!("{e:#}"))),
        }
    }
    let estimate = |p: &Phase| {
        estimates
            .iter()
            .find(|(k, _)| p.is(k))
            .map_or(f64::INFINITY, |(_, ns)| *ns)
    };
    let run = counter::count(counter, &mut phases, &plan.phases, &estimate, progress)?;
    // A phase the plugin did not count carries nothing here; why is in `run.skipped`.
    phases.retain(|p| p.instructions.is_some());
    Ok((phases, failures, run))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_emulators_architecture_from_its_elf_header() {
        let mut head = *b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0\x3e\0";
        assert_eq!(super::elf_machine(&head), Some("x86_64"));
        head[18] = 0xb7;
        assert_eq!(super::elf_machine(&head), Some("aarch64"));
        assert_eq!(super::elf_machine(b"#!/bin/sh\n"), None);
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(super::elf_machine(&me[..20]), Some(std::env::consts::ARCH));
    }
}
