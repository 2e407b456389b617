//! Three network namespaces, client - router - server, joined by veth pairs; made by pqprof and
//! always taken down by it: on drop (so also on an error or Ctrl-C), and at the next start when a
//! killed run left them behind. Nothing outside the three namespaces is changed, except for a
//! moment the global list of allowed congestion controls (to give the endpoints cubic, as
//! Paquin et al. used), which is restored at once.
//!
//! The impairment sits in the router (FORWARD), never on an endpoint: packets held on the sender's
//! own OUTPUT path count against its TCP small-queue budget (a 20 ms delay there made a 200 kB echo
//! take 727 ms against 107 ms on the router; issue #10).

use crate::results::Warning;
use anyhow::{anyhow, bail, Context, Result};
use std::process::Command;

pub(crate) const CLIENT: &str = "pqp-c";
pub(crate) const ROUTER: &str = "pqp-r";
pub(crate) const SERVER: &str = "pqp-s";
pub(crate) const NAMESPACES: [&str; 3] = [CLIENT, ROUTER, SERVER];
pub(crate) const CLIENT_ADDR: &str = "10.77.1.1";
pub(crate) const SERVER_ADDR: &str = "10.77.2.1";
/// The router's interface facing the client: packets arriving on it go client to server.
pub(crate) const ROUTER_CLIENT_IF: &str = "r-c";

fn run(args: &[&str]) -> Result<String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .with_context(|| format!("cannot run {}", args[0]))?;
    if !out.status.success() {
        bail!(
            "{} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn in_ns(ns: &str, args: &[&str]) -> Result<String> {
    let mut all = vec!["ip", "netns", "exec", ns];
    all.extend_from_slice(args);
    run(&all)
}

fn exists(ns: &str) -> bool {
    std::path::Path::new("/var/run/netns").join(ns).exists()
        || std::path::Path::new("/run/netns").join(ns).exists()
}

/// Why this machine cannot run the network grid, in one line; None when it can.
pub(crate) fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (network namespaces, iptables)".into());
    }
    for tool in ["ip", "iptables", "ethtool", "tc"] {
        if Command::new(tool).arg("-V").output().is_err()
            && Command::new(tool).arg("--version").output().is_err()
        {
            return Some(format!("{tool} is not installed (.ci/deps installs it)"));
        }
    }
    None
}

/// Where the holder of the namespaces keeps its lock: the names are fixed, so a second `pqprof
/// network` (another terminal, a test run beside `make run`) would remove the first's namespaces
/// and kill the processes in them.
const LOCK_PATH: &str = "/run/pqprof-network.lock";

/// The namespaces' lock: an exclusive `flock`, released by the kernel when its holder ends, even
/// killed (so a killed run's namespaces are still removed by the next one).
pub(crate) struct Lock {
    _file: std::fs::File,
}

impl Lock {
    /// Takes the lock, or says which process holds it.
    pub(crate) fn take() -> Result<Lock> {
        Lock::take_at(std::path::Path::new(LOCK_PATH))
    }

    fn take_at(path: &std::path::Path) -> Result<Lock> {
        use std::io::{Read, Seek, Write};
        use std::os::fd::AsRawFd;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| {
                format!(
                    "{}: cannot open the network namespaces' lock",
                    path.display()
                )
            })?;
        // SAFETY: flock on a descriptor this File owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = match holder.trim() {
                "" => String::new(),
                pid => format!(" (process {pid})"),
            };
            bail!(
                "another pqprof network{holder} is using the namespaces {}: wait for it to end ({} is its lock)",
                NAMESPACES.join(", "),
                path.display()
            );
        }
        file.set_len(0)?;
        file.rewind()?;
        write!(file, "{}", std::process::id())?;
        Ok(Lock { _file: file })
    }
}

/// Removes whatever a previous run left: processes inside the namespaces first (a process still
/// inside keeps a deleted namespace and its veths alive, invisibly), then the namespaces.
pub(crate) fn cleanup() -> Vec<String> {
    let mut removed = Vec::new();
    for ns in NAMESPACES {
        if !exists(ns) {
            continue;
        }
        let pids = in_pids(ns);
        for sig in [libc::SIGTERM, libc::SIGKILL] {
            for &p in &pids {
                // SAFETY: signalling a process id we just listed.
                unsafe { libc::kill(p, sig) };
            }
            if !pids.is_empty() {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        let _ = run(&["ip", "netns", "del", ns]);
        removed.push(ns.to_string());
    }
    removed
}

fn in_pids(ns: &str) -> Vec<i32> {
    run(&["ip", "netns", "pids", ns])
        .map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The namespaces, set up; torn down on drop (the lock, its last field, is released after).
pub(crate) struct Lab {
    pub(crate) congestion_control: String,
    pub(crate) offloads_off: bool,
    pub(crate) notes: Vec<Warning>,
    _lock: Lock,
}

impl Lab {
    pub(crate) fn new() -> Result<Lab> {
        let lock = Lock::take()?;
        let left = cleanup();
        let mut lab = Lab {
            congestion_control: String::new(),
            offloads_off: true,
            notes: Vec::new(),
            _lock: lock,
        };
        if !left.is_empty() {
            lab.notes
                .push(Warning::LeftoverNamespaces { removed: left });
        }
        lab.setup()
            .context("setting up the client, router and server namespaces")?;
        Ok(lab)
    }

    fn setup(&mut self) -> Result<()> {
        for ns in NAMESPACES {
            run(&["ip", "netns", "add", ns])?;
            in_ns(ns, &["ip", "link", "set", "lo", "up"])?;
            // The NFQUEUE rule is IPv4 only: IPv6 would pass undelayed.
            in_ns(ns, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])?;
        }
        run(&[
            "ip", "link", "add", "c-r", "netns", CLIENT, "type", "veth", "peer", "name", "r-c",
            "netns", ROUTER,
        ])?;
        run(&[
            "ip", "link", "add", "s-r", "netns", SERVER, "type", "veth", "peer", "name", "r-s",
            "netns", ROUTER,
        ])?;
        in_ns(
            CLIENT,
            &[
                "ip",
                "addr",
                "add",
                &format!("{CLIENT_ADDR}/24"),
                "dev",
                "c-r",
            ],
        )?;
        in_ns(ROUTER, &["ip", "addr", "add", "10.77.1.2/24", "dev", "r-c"])?;
        in_ns(ROUTER, &["ip", "addr", "add", "10.77.2.2/24", "dev", "r-s"])?;
        in_ns(
            SERVER,
            &[
                "ip",
                "addr",
                "add",
                &format!("{SERVER_ADDR}/24"),
                "dev",
                "s-r",
            ],
        )?;
        for (ns, dev) in [
            (CLIENT, "c-r"),
            (ROUTER, "r-c"),
            (ROUTER, "r-s"),
            (SERVER, "s-r"),
        ] {
            // Offloads off, as Paquin et al. did: no super-packets through the queue or tbf.
            if let Err(e) = in_ns(
                ns,
                &[
                    "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off",
                ],
            ) {
                self.offloads_off = false;
                self.notes.push(Warning::OffloadsOn {
                    device: dev.into(),
                    error: format!("{e:#}"),
                });
            }
            in_ns(ns, &["ip", "link", "set", dev, "up"])?;
        }
        in_ns(
            CLIENT,
            &["ip", "route", "add", "default", "via", "10.77.1.2"],
        )?;
        in_ns(
            SERVER,
            &["ip", "route", "add", "default", "via", "10.77.2.2"],
        )?;
        in_ns(ROUTER, &["sysctl", "-qw", "net.ipv4.ip_forward=1"])?;
        for ns in [CLIENT, SERVER] {
            // No cached ssthresh / RTT from earlier connections to the same address.
            in_ns(ns, &["sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1"])?;
        }
        in_ns(
            ROUTER,
            &[
                "iptables",
                "-w",
                "-A",
                "FORWARD",
                "-j",
                "NFQUEUE",
                "--queue-num",
                "0",
            ],
        )
        .context("the iptables NFQUEUE target")?;
        self.congestion_control = self.cubic()?;
        Ok(())
    }

    /// cubic in both endpoints where the kernel has it: a namespace may only pick from the global
    /// allowed list, so cubic is added to it for the two sysctls and the list restored at once.
    fn cubic(&mut self) -> Result<String> {
        let available =
            std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
                .unwrap_or_default();
        let current = in_ns(CLIENT, &["sysctl", "-n", "net.ipv4.tcp_congestion_control"])?
            .trim()
            .to_string();
        if !available.split_whitespace().any(|c| c == "cubic") {
            self.notes.push(Warning::NoCubic {
                used: current.clone(),
            });
            return Ok(current);
        }
        let allowed_path = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";
        let allowed = std::fs::read_to_string(allowed_path)?.trim().to_string();
        let widened = !allowed.split_whitespace().any(|c| c == "cubic");
        if widened {
            std::fs::write(allowed_path, format!("{allowed} cubic"))?;
        }
        let set = [CLIENT, SERVER].iter().try_for_each(|ns| {
            in_ns(
                ns,
                &["sysctl", "-qw", "net.ipv4.tcp_congestion_control=cubic"],
            )
            .map(|_| ())
        });
        if widened {
            std::fs::write(allowed_path, &allowed)
                .context("restoring tcp_allowed_congestion_control")?;
        }
        set?;
        Ok("cubic".into())
    }

    /// tbf on both of the router's egress interfaces, or none.
    pub(crate) fn rate(&self, mbit: Option<f64>) -> Result<()> {
        for dev in ["r-c", "r-s"] {
            let _ = in_ns(ROUTER, &["tc", "qdisc", "del", "dev", dev, "root"]);
            if let Some(r) = mbit {
                // Burst: at least one timer tick's worth at HZ=250, and 16 kB.
                let burst = ((r * 1e6 / 8.0 / 250.0) as u64).max(16_000);
                in_ns(
                    ROUTER,
                    &[
                        "tc",
                        "qdisc",
                        "add",
                        "dev",
                        dev,
                        "root",
                        "tbf",
                        "rate",
                        &format!("{r}mbit"),
                        "burst",
                        &burst.to_string(),
                        "latency",
                        "200ms",
                    ],
                )?;
            }
        }
        Ok(())
    }

    /// A command that runs inside a namespace.
    pub(crate) fn command(ns: &str, program: &std::path::Path) -> Command {
        let (ip, args) = Lab::wrap(ns);
        let mut c = Command::new(ip);
        c.args(args).arg(program);
        c
    }

    /// The command line that runs a program in namespace `ns`: the program, then the arguments
    /// to put before the one to run.
    pub(crate) fn wrap(ns: &str) -> (std::path::PathBuf, Vec<String>) {
        ("ip".into(), vec!["netns".into(), "exec".into(), ns.into()])
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        cleanup();
    }
}

/// Moves the calling thread into a namespace: its sockets from now on belong there.
pub(crate) fn enter(ns: &str) -> Result<()> {
    let path = ["/var/run/netns", "/run/netns"]
        .iter()
        .map(|d| std::path::Path::new(d).join(ns))
        .find(|p| p.exists())
        .ok_or_else(|| anyhow!("no namespace {ns}"))?;
    let f = std::fs::File::open(&path)?;
    use std::os::fd::AsRawFd;
    // SAFETY: a valid namespace file descriptor; CLONE_NEWNET may be set per thread.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        bail!("setns {ns}: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// The MTU of a device in a namespace (`ip -o link show`: "... mtu 1500 ...").
pub(crate) fn mtu(ns: &str, dev: &str) -> Result<u32> {
    let out = in_ns(ns, &["ip", "-o", "link", "show", "dev", dev])?;
    let words: Vec<&str> = out.split_whitespace().collect();
    words
        .iter()
        .position(|w| *w == "mtu")
        .and_then(|i| words.get(i + 1))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow!("{ns} {dev}: no mtu in {out:?}"))
}

/// Linux's initial congestion window, segments (include/net/tcp.h TCP_INIT_CWND; RFC 6928).
pub(crate) const TCP_INIT_CWND: u32 = 10;

/// The initial congestion window a namespace's routes give (an `initcwnd` on the route, else the
/// kernel's TCP_INIT_CWND).
pub(crate) fn initcwnd(ns: &str) -> u32 {
    let routes = in_ns(ns, &["ip", "route", "show"]).unwrap_or_default();
    routes
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .find(|w| w[0] == "initcwnd")
        .and_then(|w| w[1].parse().ok())
        .unwrap_or(TCP_INIT_CWND)
}

/// The MSS of a connection from the client namespace to `addr` (TCP_MAXSEG once connected).
pub(crate) fn mss(addr: std::net::SocketAddr) -> Result<u32> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| -> Result<u32> {
                enter(CLIENT)?;
                let s =
                    std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(5))?;
                crate::stack::wire::mss(&s).context("TCP_MAXSEG")
            })
            .join()
            .map_err(|_| anyhow!("the MSS thread panicked"))?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_told_who_holds_the_lock() {
        let path = std::env::temp_dir().join(format!("pqprof-lock-test-{}", std::process::id()));
        let first = Lock::take_at(&path).unwrap();
        let e = Lock::take_at(&path)
            .err()
            .expect("a second lock while the first is held");
        let msg = format!("{e:#}");
        assert!(msg.contains(&std::process::id().to_string()), "{msg}");
        assert!(msg.contains("pqp-c, pqp-r, pqp-s"), "{msg}");
        drop(first);
        // Released with its holder: the next run takes it.
        let again = Lock::take_at(&path);
        assert!(again.is_ok());
        drop(again);
        let _ = std::fs::remove_file(&path);
    }
}
