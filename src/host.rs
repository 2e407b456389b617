//! What the machine is: CPU, extensions, cores, kernel.

use crate::results::Host;

/// CPU flags that decide which code paths the libraries take (from /proc/cpuinfo).
const INTERESTING: [&str; 16] = [
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
    "sha3",
    "sve",
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
    let cpu_model = field("model name")
        .or_else(|| field("CPU part").map(|p| format!("ARM part {p}")))
        .unwrap_or_else(|| "unknown".into());
    let flags = field("flags")
        .or_else(|| field("Features"))
        .unwrap_or_default();
    let cpu_extensions = INTERESTING
        .iter()
        .filter(|f| flags.split_whitespace().any(|x| x == **f))
        .map(|f| f.to_string())
        .collect();
    let fingerprint = fingerprint(&[
        std::fs::read_to_string("/etc/machine-id")
            .unwrap_or_default()
            .trim(),
        &hostname(),
        &field("vendor_id").unwrap_or_default(),
        &field("cpu family").unwrap_or_default(),
        &field("model").unwrap_or_default(),
        &field("stepping").unwrap_or_default(),
        &cpu_model,
    ]);
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
        microarchitecture: microarchitecture(
            &field("vendor_id").unwrap_or_default(),
            field("cpu family")
                .and_then(|f| f.parse().ok())
                .unwrap_or(0),
            field("model").and_then(|m| m.parse().ok()).unwrap_or(0),
        )
        .into(),
        fingerprint,
    }
}

/// Six hex digits of FNV-1a over the machine's identity: enough to tell apart two machines that
/// share a hostname (a fresh VM image), not a secret.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in parts.join("\n").bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:06x}", h & 0xff_ffff)
}

/// A results path that no other run takes: results/<host>-<UTC time to the second>-<fingerprint>.json.
pub fn results_path(host: &Host, utc: &str) -> std::path::PathBuf {
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
    let stamp: String = utc.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    std::path::PathBuf::from("results").join(format!("{name}-{stamp}-{}.json", host.fingerprint))
}

/// AMD families from AMD's processor programming references (0x17 Zen/Zen 2, 0x19 Zen 3/Zen 4,
/// 0x1A Zen 5); Intel is left unnamed since its models need a long table.
pub fn microarchitecture(vendor: &str, family: u32, model: u32) -> &'static str {
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
pub fn utc_now() -> String {
    format_utc(time::OffsetDateTime::now_utc())
}

pub fn format_utc(t: time::OffsetDateTime) -> String {
    let t = t
        .to_offset(time::UtcOffset::UTC)
        .replace_nanosecond(0)
        .unwrap_or(t);
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "host".into())
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
            format!("results/vm-20261130T032602Z-{}.json", h.fingerprint)
        );
        assert_ne!(p1, super::results_path(&h, "2026-11-30T03:26:03Z"));
        h.fingerprint = super::fingerprint(&["b", "vm"]);
        assert_ne!(p1, super::results_path(&h, "2026-11-30T03:26:02Z"));
        assert_eq!(super::fingerprint(&["a", "vm"]).len(), 6);
    }
}
