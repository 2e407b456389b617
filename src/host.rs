//! What the machine is: CPU, extensions, cores, kernel; on aarch64 the core by its MIDR_EL1
//! implementer and part (as /proc/cpuinfo gives them, which qemu-user answers for the CPU it
//! emulates), and whether the run is emulated.

use crate::results::{Emulation, Host};

/// CPU flags that decide which code paths the libraries take (from /proc/cpuinfo): x86-64's, then
/// aarch64's (asimd is NEON; sha3 the SHA-3 instructions FEAT_SHA3, which Keccak code can use; sve
/// and sve2 the scalable vectors).
const INTERESTING: [&str; 19] = [
    "aes",
    "pclmulqdq",
    "avx",
    "avx2",
    "bmi2",
    "adx",
    "sha_ni",
    "vaes",
    "vpclmulqdq",
    "avx512f",
    "avx512vl",
    "avx512bw",
    "asimd",
    "pmull",
    "sha2",
    "sha3",
    "sha512",
    "sve",
    "sve2",
];

pub(crate) fn describe() -> Host {
    describe_as(None)
}

/// The machine as this process sees it; under an emulator, the emulated CPU (qemu answers
/// /proc/cpuinfo for it) on the real host's name, marked emulated.
pub(crate) fn describe_as(emulated: Option<Emulation>) -> Host {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| cpu_field(&cpuinfo, name);
    let arm = field("CPU implementer")
        .zip(field("CPU part"))
        .and_then(|(i, p)| arm_core(parse_hex(&i)?, parse_hex(&p)?));
    let cpu_model = match arm {
        Some(core) => format!("{} {}", core.vendor, core.name),
        None => field("model name")
            .or_else(|| field("CPU part").map(|p| format!("ARM part {p}")))
            .unwrap_or_else(|| "unknown".into()),
    };
    let flags = field("flags")
        .or_else(|| field("Features"))
        .unwrap_or_default();
    let cpu_extensions = INTERESTING
        .iter()
        .filter(|f| flags.split_whitespace().any(|x| x == **f))
        .map(|f| f.to_string())
        .collect();
    let mut identity: Vec<String> = vec![
        std::fs::read_to_string("/etc/machine-id")
            .unwrap_or_default()
            .trim()
            .to_string(),
        hostname(),
        field("vendor_id").unwrap_or_default(),
        field("cpu family").unwrap_or_default(),
        field("model").unwrap_or_default(),
        field("stepping").unwrap_or_default(),
        cpu_model.clone(),
    ];
    // Only where they exist, so an x86-64 machine keeps the fingerprint it always had.
    for f in ["CPU implementer", "CPU variant", "CPU part", "CPU revision"] {
        identity.extend(field(f));
    }
    if let Some(e) = &emulated {
        identity.push(format!("emulated by {} as {}", e.emulator, e.cpu));
    }
    let parts: Vec<&str> = identity.iter().map(String::as_str).collect();
    let microarchitecture = match arm {
        Some(core) => core.microarchitecture,
        None => microarchitecture(
            &field("vendor_id").unwrap_or_default(),
            field("cpu family")
                .and_then(|f| f.parse().ok())
                .unwrap_or(0),
            field("model").and_then(|m| m.parse().ok()).unwrap_or(0),
        ),
    };
    Host {
        hostname: hostname(),
        cpu_model,
        arch: std::env::consts::ARCH.into(),
        cpu_extensions,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .into(),
        microarchitecture: microarchitecture.into(),
        fingerprint: fingerprint(&parts),
        emulated,
    }
}

/// The value of the first `name : value` line of /proc/cpuinfo.
fn cpu_field(cpuinfo: &str, name: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn parse_hex(s: &str) -> Option<u32> {
    u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

/// An aarch64 core pqprof knows by its MIDR_EL1 implementer and part number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ArmCore {
    pub(crate) vendor: &'static str,
    pub(crate) name: &'static str,
    pub(crate) microarchitecture: &'static str,
}

/// Implementer and part numbers from Linux's arch/arm64/include/asm/cputype.h (and Arm's technical
/// reference manuals, which give each core's MIDR_EL1). The cloud cores: Neoverse-N1 is AWS
/// Graviton2's and Ampere Altra's, Neoverse-V1 Graviton3's, Neoverse-V2 Graviton4's and NVIDIA
/// Grace's, Neoverse-N2 Azure Cobalt 100's.
pub(crate) fn arm_core(implementer: u32, part: u32) -> Option<ArmCore> {
    let (vendor, name, microarchitecture) = match (implementer, part) {
        (0x41, 0xd03) => ("ARM", "Cortex-A53", "cortex-a53"),
        (0x41, 0xd04) => ("ARM", "Cortex-A35", "cortex-a35"),
        (0x41, 0xd05) => ("ARM", "Cortex-A55", "cortex-a55"),
        (0x41, 0xd07) => ("ARM", "Cortex-A57", "cortex-a57"),
        (0x41, 0xd08) => ("ARM", "Cortex-A72", "cortex-a72"),
        (0x41, 0xd09) => ("ARM", "Cortex-A73", "cortex-a73"),
        (0x41, 0xd0b) => ("ARM", "Cortex-A76", "cortex-a76"),
        (0x41, 0xd0c) => ("ARM", "Neoverse-N1", "neoverse-n1"),
        (0x41, 0xd0d) => ("ARM", "Cortex-A77", "cortex-a77"),
        (0x41, 0xd40) => ("ARM", "Neoverse-V1", "neoverse-v1"),
        (0x41, 0xd41) => ("ARM", "Cortex-A78", "cortex-a78"),
        (0x41, 0xd42) => ("ARM", "Cortex-A78AE", "cortex-a78ae"),
        (0x41, 0xd47) => ("ARM", "Cortex-A710", "cortex-a710"),
        (0x41, 0xd49) => ("ARM", "Neoverse-N2", "neoverse-n2"),
        (0x41, 0xd4f) => ("ARM", "Neoverse-V2", "neoverse-v2"),
        (0x41, 0xd84) => ("ARM", "Neoverse-V3", "neoverse-v3"),
        (0x41, 0xd8e) => ("ARM", "Neoverse-N3", "neoverse-n3"),
        (0x46, 0x001) => ("Fujitsu", "A64FX", "a64fx"),
        (0x48, 0xd01) => ("HiSilicon", "TSV110", "tsv110"),
        (0xc0, 0xac3) => ("Ampere", "AmpereOne", "ampere1"),
        _ => return None,
    };
    Some(ArmCore {
        vendor,
        name,
        microarchitecture,
    })
}

/// Six hex digits of FNV-1a over the machine's identity: enough to tell apart two machines that
/// share a hostname (a fresh VM image), not a secret.
pub(crate) fn fingerprint(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in parts.join("\n").bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:06x}", h & 0xff_ffff)
}

/// A results path that no other run takes: results/<host>-<UTC time to the second>-<fingerprint>.json.gz
/// (gzip'd JSON: results::io writes by the name);
/// an emulated run's name says so after the host (results/vm-aarch64-emulated-neoverse-n1-...), so
/// it is never taken for a measurement of the machine itself.
pub(crate) fn results_path(host: &Host, utc: &str) -> std::path::PathBuf {
    let name: String = host
        .hostname
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let emulated = host.emulated.as_ref().map_or(String::new(), |e| {
        let cpu: String = e
            .cpu
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        format!("-{}-emulated-{cpu}", host.arch)
    });
    let stamp: String = utc.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    std::path::PathBuf::from("results").join(format!(
        "{name}{emulated}-{stamp}-{}.json.gz",
        host.fingerprint
    ))
}

/// AMD families from AMD's processor programming references (0x17 Zen/Zen 2, 0x19 Zen 3/Zen 4,
/// 0x1A Zen 5); Intel is left unnamed since its models need a long table.
pub(crate) fn microarchitecture(vendor: &str, family: u32, model: u32) -> &'static str {
    match (vendor, family) {
        ("AuthenticAMD", 0x17) if model >= 0x30 => "zen2",
        ("AuthenticAMD", 0x17) => "zen1",
        ("AuthenticAMD", 0x19)
            if (0x10..=0x1f).contains(&model) || (0x60..=0xaf).contains(&model) =>
        {
            "zen4"
        }
        ("AuthenticAMD", 0x19) => "zen3",
        ("AuthenticAMD", 0x1a) => "zen5",
        _ => "",
    }
}

/// Now, as RFC 3339 UTC to the second ("2026-11-30T03:26:02Z").
pub(crate) fn utc_now() -> String {
    format_utc(time::OffsetDateTime::now_utc())
}

pub(crate) fn format_utc(t: time::OffsetDateTime) -> String {
    let t = t
        .to_offset(time::UtcOffset::UTC)
        .replace_nanosecond(0)
        .unwrap_or(t);
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "host".into())
}

/// A PM QoS request that keeps every core out of its idle states while it is held (the kernel's
/// `/dev/cpu_dma_latency` at 0 µs: the cpuidle governor then polls instead of halting, as tuned's
/// latency-performance profile asks). On a VM an idle vCPU halts, and its next wake-up waits for
/// the host to schedule it again: on the Zen 3 VM (KVM, the haltpoll driver) a ping-pong between
/// two processes over a socket pair took 127-170 µs at the median and 0.7-1.9 ms at p90 without
/// it, 19-20 µs and 39-49 µs with it (2026-12-03, a noisy hour). A handshake waits for its peer at
/// every flight, so the steps that time handshakes hold it; released when dropped or when the
/// process ends, however it ends.
pub(crate) struct NoIdle {
    _request: std::fs::File,
}

/// Holds the request, or says why it cannot (no such device, or not root; or PQPROF_IDLE=allow,
/// to measure what idle cores cost).
pub(crate) fn hold_off_idle() -> Result<NoIdle, String> {
    use std::io::Write;
    if std::env::var("PQPROF_IDLE").is_ok_and(|v| v == "allow") {
        return Err("PQPROF_IDLE=allow".into());
    }
    let path = "/dev/cpu_dma_latency";
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| format!("{path}: {e}"))?;
    f.write_all(&0i32.to_ne_bytes())
        .map_err(|e| format!("{path}: {e}"))?;
    Ok(NoIdle { _request: f })
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates() {
        let at = |s: i64| super::format_utc(time::OffsetDateTime::from_unix_timestamp(s).unwrap());
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_796_009_162), "2026-11-30T03:26:02Z");
    }

    #[test]
    fn arm_cores_by_implementer_and_part() {
        // qemu -cpu neoverse-n1 and neoverse-v1 report these (MIDR_EL1 0x414fd0c1, 0x411fd402).
        let cpuinfo = "processor\t: 0\nmodel name\t: ARMv8 Processor rev 1 (v8l)\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        let core = super::cpu_field(cpuinfo, "CPU part")
            .and_then(|p| super::arm_core(0x41, super::parse_hex(&p)?));
        assert_eq!(core.map(|c| c.name), Some("Neoverse-N1"));
        assert_eq!(
            super::arm_core(0x41, 0xd40).unwrap().microarchitecture,
            "neoverse-v1"
        );
        assert_eq!(super::arm_core(0x41, 0xfff), None);
        assert_eq!(super::parse_hex("0x41"), Some(0x41));
    }

    #[test]
    fn amd_families() {
        assert_eq!(super::microarchitecture("AuthenticAMD", 26, 2), "zen5");
        assert_eq!(super::microarchitecture("AuthenticAMD", 25, 1), "zen3");
        assert_eq!(super::microarchitecture("AuthenticAMD", 25, 0x11), "zen4");
        assert_eq!(super::microarchitecture("GenuineIntel", 6, 143), "");
    }

    #[test]
    fn results_paths_differ_by_machine_and_second() {
        let mut h = super::describe();
        h.hostname = "vm".into();
        h.fingerprint = super::fingerprint(&["a", "vm"]);
        let p1 = super::results_path(&h, "2026-11-30T03:26:02Z");
        assert_eq!(
            p1.to_str().unwrap(),
            format!("results/vm-20261130T032602Z-{}.json.gz", h.fingerprint)
        );
        assert_ne!(p1, super::results_path(&h, "2026-11-30T03:26:03Z"));
        h.fingerprint = super::fingerprint(&["b", "vm"]);
        assert_ne!(p1, super::results_path(&h, "2026-11-30T03:26:02Z"));
        h.arch = "aarch64".into();
        h.emulated = Some(crate::results::Emulation {
            emulator: "qemu-aarch64 version 10.2.2".into(),
            cpu: "neoverse-n1".into(),
            host_arch: "x86_64".into(),
        });
        assert_eq!(
            super::results_path(&h, "2026-11-30T03:26:02Z")
                .to_str()
                .unwrap(),
            format!(
                "results/vm-aarch64-emulated-neoverse-n1-20261130T032602Z-{}.json.gz",
                h.fingerprint
            )
        );
        assert_eq!(super::fingerprint(&["a", "vm"]).len(), 6);
    }
}
