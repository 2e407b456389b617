//! The servers people run (`servers/*.toml`: nginx, HAProxy, sshd, a user's own), run in the lab
//! root: a Debian trixie root that tools/lab/root.sh makes once and caches. Each server runs as
//! pid 1 of its own pid and mount namespaces over a throw-away overlay of the root
//! (tools/lab/in-root.sh), so a killed run leaves no process or mount behind. This module finds
//! the root, reads a server's version, renders a scenario's templates, starts the server, waits
//! until its port answers, reads the CPU of its whole process tree and stops it; the hidden
//! `lab-server` child (`stack::lab`) serves a scenario with them.

use anyhow::{anyhow, bail, ensure, Context, Result};
use pqprof_core::lab::{self, Server};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The scripts, compiled in so that the binary runs them from any folder.
const ROOT_SH: &str = include_str!("../../tools/lab/root.sh");
const IN_ROOT_SH: &str = include_str!("../../tools/lab/in-root.sh");

/// Where the server files are: `PQPROF_SERVERS`, else servers/ in the working folder (as suites/).
pub(crate) fn servers_dir() -> PathBuf {
    std::env::var_os("PQPROF_SERVERS").map_or_else(|| PathBuf::from("servers"), PathBuf::from)
}

/// The lab root's path: `PQPROF_LAB_ROOT`, else the one tools/lab/root.sh made (it is never made
/// here: `make lab`, `make build` and CI make it, once).
pub(crate) fn root() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("PQPROF_LAB_ROOT") {
        return Ok(p.into());
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(ROOT_SH)
        .args(["root.sh", "--path"])
        .stderr(Stdio::piped())
        .output()
        .context("cannot run sh for tools/lab/root.sh")?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        bail!("{}", why.trim().trim_start_matches("root.sh: "));
    }
    let path = String::from_utf8_lossy(&out.stdout);
    let path = path.lines().last().unwrap_or("").trim();
    ensure!(!path.is_empty(), "tools/lab/root.sh printed no path");
    Ok(path.into())
}

/// The server's version as its own binary prints it in the root ("1.26.3").
pub(crate) fn version(server: &Server, root: &Path) -> Result<String> {
    let binary = root.join(server.binary.trim_start_matches('/'));
    ensure!(
        binary.exists(),
        "{}: {} is not in the lab root ({})",
        server.file.display(),
        server.binary,
        root.display()
    );
    let out = Command::new("chroot")
        .arg(root)
        .args(&server.version_argv)
        .output()
        .with_context(|| format!("{}: cannot run its version command", server.name))?;
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    server.version_in(&printed).ok_or_else(|| {
        anyhow!(
            "{}: its version command printed no \"{}\": {}",
            server.file.display(),
            server.version_after,
            printed.lines().next().unwrap_or("").trim()
        )
    })
}

/// A port free on `bind` now (the kernel's choice), for the server to listen on.
pub(crate) fn free_port(bind: IpAddr) -> Result<u16> {
    let l = std::net::TcpListener::bind(SocketAddr::new(bind, 0))
        .with_context(|| format!("cannot bind a port on {bind}"))?;
    Ok(l.local_addr()?.port())
}

/// The placeholders of one scenario: pqprof's own and its resumption table's.
pub(crate) fn values(
    server: &Server,
    groups: &[&str],
    addr: SocketAddr,
    resumed: bool,
) -> Result<BTreeMap<String, String>> {
    let groups = server.groups_for(groups).ok_or_else(|| {
        anyhow!(
            "{}: serves no group {} ([groups] has {})",
            server.file.display(),
            groups.join(" or "),
            server.groups.keys().cloned().collect::<Vec<_>>().join(", ")
        )
    })?;
    let mut v: BTreeMap<String, String> = [
        ("address", addr.ip().to_string()),
        ("port", addr.port().to_string()),
        ("groups", groups),
        ("cert", "/lab/chain.pem".into()),
        ("key", "/lab/key.pem".into()),
        ("dir", "/lab".into()),
        ("workers", server.workers.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let mode = if resumed { "on" } else { "off" };
    match server.resumption.get(mode) {
        // A resumption table's text may use pqprof's own placeholders ("{dir}/resumed.log").
        Some(t) => {
            let filled: Vec<(String, String)> = t
                .iter()
                .map(|(k, text)| (k.clone(), lab::fill(text, &v)))
                .collect();
            v.extend(filled);
        }
        None if resumed => bail!("{}: no [resumption.on]", server.file.display()),
        None => {}
    }
    Ok(v)
}

/// Sums the CPU of a process tree: every thread's run time (schedstat, nanoseconds) of every
/// process below `top`, and what its reaped children spent (cutime + cstime), so that a server that
/// forks a process per connection (sshd) counts them too.
pub(crate) fn tree_cpu_ns(top: u32) -> f64 {
    let tick_ns = 1e9 / clock_ticks();
    let mut total = 0.0;
    let mut stack = children(top);
    while let Some(pid) = stack.pop() {
        stack.extend(children(pid));
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                let s = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
                total += s
                    .split_whitespace()
                    .next()
                    .and_then(|x| x.parse::<f64>().ok())
                    .unwrap_or(0.0);
            }
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Fields after the command's closing parenthesis: state is field 3; cutime and cstime
        // are 16 and 17 (proc(5)).
        if let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) {
            let f: Vec<f64> = rest
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            // rest starts at field 3 (state, not a number, skipped): field n is f[n - 4].
            total += (f.get(12).unwrap_or(&0.0) + f.get(13).unwrap_or(&0.0)) * tick_ns;
        }
    }
    total
}

/// The server tree's CPU once two reads 5 ms apart agree (at most 100 ms of reads).
pub(crate) fn settled_cpu_ns(top: u32) -> f64 {
    let mut last = tree_cpu_ns(top);
    for _ in 0..20 {
        std::thread::sleep(std::time::Duration::from_millis(5));
        let now = tree_cpu_ns(top);
        if now == last {
            break;
        }
        last = now;
    }
    last
}

/// The connections a server's resumption log shows (`lab::ResumedLog`), and those that resumed,
/// once it shows at least `at_least` and two reads 20 ms apart agree (at most 2 s of reads: a
/// server may log a connection a moment after the client has closed it, and one made before may
/// still be on its way). The log is read from the run's folder `dir`, which the server sees as
/// `{dir}` (`lab::inside_dir` holds the file to it).
pub(crate) fn resumed_count(log: &lab::ResumedLog, dir: &Path, at_least: u64) -> (u64, u64) {
    let file = dir.join(log.file.trim_start_matches("{dir}/"));
    let read = || {
        log.count(&String::from_utf8_lossy(
            &std::fs::read(&file).unwrap_or_default(),
        ))
    };
    let mut counts = read();
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(20));
        let again = read();
        if counts.0 >= at_least && again == counts {
            break;
        }
        counts = again;
    }
    counts
}

/// The resident and proportional set sizes of every process below `top`, bytes (the "Rss:" and
/// "Pss:" lines of /proc/PID/smaps_rollup, in kB).
pub(crate) fn tree_memory_bytes(top: u32) -> (u64, u64) {
    let (mut rss, mut pss) = (0, 0);
    let mut stack = children(top);
    while let Some(pid) = stack.pop() {
        stack.extend(children(pid));
        let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
        let kb = |name: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or(0)
        };
        rss += kb("Rss:") * 1024;
        pss += kb("Pss:") * 1024;
    }
    (rss, pss)
}

/// Established TCP connections whose local end is 127.0.0.1:`port` and whose socket a process
/// below `top` holds: the server's side of each, and not a client's of another program that was
/// given `port` as its own ephemeral port (on loopback both ends are listed). From /proc/net/tcp
/// (proc(5): the local address in hex, 127.0.0.1 as 0100007F, a colon, the port in hex; state 01;
/// the socket's inode tenth) and the processes' /proc/PID/fd links ("socket:[INODE]").
pub(crate) fn established(top: u32, port: u16) -> usize {
    let mut inodes = std::collections::BTreeSet::new();
    let mut stack = children(top);
    while let Some(pid) = stack.pop() {
        stack.extend(children(pid));
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let link = std::fs::read_link(fd.path()).unwrap_or_default();
            let link = link.to_string_lossy();
            if let Some(inode) = link
                .strip_prefix("socket:[")
                .and_then(|l| l.strip_suffix(']'))
            {
                inodes.insert(inode.to_string());
            }
        }
    }
    let text = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let local = format!("0100007F:{port:04X}");
    text.lines()
        .skip(1)
        .filter(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            fields.get(1) == Some(&local.as_str())
                && fields.get(3) == Some(&"01")
                && fields.get(9).is_some_and(|i| inodes.contains(*i))
        })
        .count()
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf reads a constant of the system.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// A process's children (every thread's), from /proc.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            let c = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            out.extend(c.split_whitespace().filter_map(|x| x.parse::<u32>().ok()));
        }
    }
    out
}

/// A server started in the root: unshare (this process's child) and, below it, the server.
pub(crate) struct Running {
    pub(crate) unshare: Child,
    log: PathBuf,
    stop_signal: i32,
}

impl Running {
    /// The server's own process: unshare's one child (pid 1 of the namespace).
    fn server_pid(&self) -> Option<u32> {
        children(self.unshare.id()).into_iter().next()
    }

    /// The log's last line: why a server that died died.
    pub(crate) fn last_words(&self) -> String {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .rfind(|l| !l.trim().is_empty() && !l.contains("sigprocmask"))
            .unwrap_or("(nothing in its log)")
            .trim()
            .to_string()
    }

    /// Gracefully, then for sure: the stop signal to the server, SIGKILL to unshare after 3 s
    /// (`--kill-child` ends the namespace and every mount in it). Nothing is signalled once
    /// unshare has been reaped: its pid, and its child's, may then be another process's.
    pub(crate) fn stop(&mut self) {
        if !matches!(self.unshare.try_wait(), Ok(None)) {
            return;
        }
        // While unshare is unreaped its child is still its child (or a zombie holding its pid).
        if let Some(pid) = self.server_pid() {
            // SAFETY: kill sends a signal to the child of our own unreaped child.
            unsafe { libc::kill(pid as i32, self.stop_signal) };
        }
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(3) {
            if matches!(self.unshare.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.unshare.kill();
        let _ = self.unshare.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

fn signal_number(name: &str) -> i32 {
    match name {
        "QUIT" => libc::SIGQUIT,
        "INT" => libc::SIGINT,
        "HUP" => libc::SIGHUP,
        "USR1" => libc::SIGUSR1,
        _ => libc::SIGTERM,
    }
}

/// Renders the templates into `dir` (the root's /lab), copies the chain and key in, and starts
/// the server in the root; returns once its port accepts a connection.
pub(crate) fn start(
    server: &Server,
    root: &Path,
    dir: &Path,
    identity: &Path,
    values: &BTreeMap<String, String>,
    addr: SocketAddr,
) -> Result<Running> {
    std::fs::create_dir_all(dir)?;
    for f in ["chain.pem", "key.pem"] {
        std::fs::copy(identity.join(f), dir.join(f))
            .with_context(|| format!("cannot copy {f} from {}", identity.display()))?;
    }
    // The key readable by its owner alone: sshd refuses a host key others may read ("no
    // hostkeys available"), as OpenSSH's sshkey_perm_ok does for every private key.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("key.pem"), std::fs::Permissions::from_mode(0o600))?;
    for (template, target) in &server.templates {
        let text = std::fs::read_to_string(server.folder().join(template))
            .with_context(|| format!("{}: cannot read its template {template}", server.name))?;
        let inside = lab::fill(target, values);
        let name = inside.strip_prefix("/lab/").ok_or_else(|| {
            anyhow!(
                "{}: template {template} must go to {{dir}}/...",
                server.file.display()
            )
        })?;
        std::fs::write(dir.join(name), lab::fill(&text, values))?;
    }
    let argv: Vec<String> = server.start.iter().map(|a| lab::fill(a, values)).collect();
    let log = dir.join("server.log");
    // One file for both streams, so that neither writes over the other.
    let log_file = std::fs::File::create(&log)?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(IN_ROOT_SH)
        .arg("in-root.sh")
        .arg("-w")
        .arg(dir)
        .arg(root)
        .args(&argv)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file);
    crate::interrupt::die_with_parent(&mut cmd);
    let unshare = cmd
        .spawn()
        .with_context(|| format!("{}: cannot start unshare", server.name))?;
    let mut running = Running {
        unshare,
        log,
        stop_signal: signal_number(&server.stop_signal),
    };
    let t0 = Instant::now();
    loop {
        if let Ok(Some(status)) = running.unshare.try_wait() {
            bail!(
                "{} exited before it was ready ({status}): {}",
                server.name,
                running.last_words()
            );
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(running);
        }
        if t0.elapsed() > Duration::from_secs(10) {
            bail!(
                "{} did not accept a connection on {addr} within 10 s: {}",
                server.name,
                running.last_words()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_tree_counts_its_childrens_cpu() {
        // A shell whose child spins until the shell kills it: while it spins, the tree below the
        // shell has spent CPU, and more a moment later.
        let mut sh = Command::new("sh")
            .args(["-c", "while :; do :; done & sleep 1; kill $!"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let early = tree_cpu_ns(sh.id());
        std::thread::sleep(Duration::from_millis(200));
        let later = tree_cpu_ns(sh.id());
        sh.wait().unwrap();
        assert!(
            early > 0.0,
            "no CPU read below the shell while its child spun"
        );
        assert!(
            later > early,
            "{later} ns after {early} ns: the spinning child's time grows"
        );
    }

    #[test]
    fn a_scenarios_placeholders_come_from_the_file_and_the_mode() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("servers/haproxy.toml");
        let s = lab::load(&file).unwrap();
        let local = |port| SocketAddr::from(([127, 0, 0, 1], port));
        let off = values(&s, &["X25519MLKEM768"], local(8443), false).unwrap();
        assert_eq!(off["groups"], "X25519MLKEM768");
        assert_eq!(off["address"], "127.0.0.1");
        assert_eq!(off["port"], "8443");
        assert_eq!(off["num_tickets"], "0");
        assert_eq!(
            values(&s, &["X25519"], local(1), true).unwrap()["num_tickets"],
            "1"
        );
        let e = values(&s, &["X448"], local(1), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("serves no group X448"), "{e}");
    }
}
