//! What the machine is: CPU, extensions, cores, kernel.

use crate::results::Host;

/// CPU flags that decide which code paths the libraries take (from /proc/cpuinfo).
const INTERESTING: [&str; 16] = [
    "aes", "pclmulqdq", "avx", "avx2", "bmi2", "adx", "sha_ni", "vaes", "vpclmulqdq", "avx512f", "avx512vl",
    "avx512bw", "asimd", "pmull", "sha3", "sve",
];

pub fn describe() -> Host {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let cpu_model = field("model name").or_else(|| field("CPU part").map(|p| format!("ARM part {p}"))).unwrap_or_else(|| "unknown".into());
    let flags = field("flags").or_else(|| field("Features")).unwrap_or_default();
    let cpu_extensions = INTERESTING.iter().filter(|f| flags.split_whitespace().any(|x| x == **f)).map(|f| f.to_string()).collect();
    Host {
        hostname: hostname(),
        cpu_model,
        arch: std::env::consts::ARCH.into(),
        cpu_extensions,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().into(),
    }
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "host".into())
}
