//! `run.host.emulated`: a run made under an emulator (qemu-user running the aarch64 build on
//! another machine), and what it emulated. An emulator's clock is the host's wall time stretched by
//! translation, so such a file carries instruction counts only: nothing in it is timed, and `check`
//! refuses a timed figure in it. `run.counter.method` says how its instructions were counted.

use super::Host;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Emulation {
    /// The emulator's own version line ("qemu-aarch64 version 10.2.2 (Debian 1:10.2.2+ds-1)").
    pub emulator: String,
    /// The CPU model it emulated, as its `-cpu` names it ("neoverse-n1"): it decides which code
    /// paths a dispatching library takes, so counts are only comparable under one model.
    pub cpu: String,
    /// The architecture of the machine the emulator ran on, from the emulator's ELF header
    /// ("x86_64"); the guest cannot see it otherwise (qemu answers uname and /proc/cpuinfo).
    pub host_arch: String,
}

/// How a run's instructions were counted (`run.counter.method`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CounterMethod {
    /// valgrind's callgrind, collecting inside `pqprof_counted_call` (x86-64, and a real aarch64
    /// host); what every file before this field counted with.
    #[default]
    Callgrind,
    /// QEMU's TCG plugin `tools/aarch64/pqcount.c`, counting the guest instructions executed
    /// between the markers `pqprof_count_begin` and `pqprof_count_end` around the same call.
    QemuPlugin,
}

impl CounterMethod {
    pub fn name(self) -> &'static str {
        match self {
            CounterMethod::Callgrind => "callgrind",
            CounterMethod::QemuPlugin => "qemu plugin",
        }
    }
}

impl Host {
    pub fn is_emulated(&self) -> bool {
        self.emulated.is_some()
    }

    /// "aarch64 (emulated: neoverse-n1)" or "x86_64": how the site and `compare` set architectures
    /// apart by name.
    pub fn architecture(&self) -> String {
        match &self.emulated {
            Some(e) => format!("{} (emulated: {})", self.arch, e.cpu),
            None => self.arch.clone(),
        }
    }
}
