//! h2load's summary (nghttp2's load generator, as Debian trixie ships it: nghttp2 1.64): the
//! protocol it negotiated, its own elapsed time and its counts. The lines read, as h2load.cc in
//! the nghttp2 repository prints them:
//!
//! ```text
//! TLS Protocol: TLSv1.3
//! finished in 360.86ms, 1385.59 req/s, 159.67KB/s
//! requests: 500 total, 500 started, 500 done, 500 succeeded, 0 failed, 0 errored, 0 timeout
//! ```
//!
//! "finished in" is written by util::format_duration: seconds, "ms" or "us", two decimals.

/// What one h2load run reported.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// "TLSv1.3"; `None` where no connection got as far as a protocol.
    pub tls_version: Option<String>,
    pub elapsed_ns: u64,
    pub total: u64,
    pub succeeded: u64,
}

/// The summary in h2load's output, or what is missing from it.
pub fn parse(text: &str) -> Result<Run, String> {
    let tls_version = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("TLS Protocol:"))
        .map(|v| v.trim().to_string());
    let finished = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("finished in "))
        .ok_or("no \"finished in\" line")?;
    let elapsed = finished.split(',').next().unwrap_or("").trim();
    let elapsed_ns = duration_ns(elapsed).ok_or_else(|| format!("not a duration: {elapsed:?}"))?;
    let requests = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("requests:"))
        .ok_or("no \"requests:\" line")?;
    let count = |what: &str| -> Result<u64, String> {
        requests
            .split(',')
            .find_map(|part| part.trim().strip_suffix(what)?.trim().parse().ok())
            .ok_or_else(|| format!("no count of {what} requests in {:?}", requests.trim()))
    };
    let (total, succeeded) = (count("total")?, count("succeeded")?);
    if succeeded > total {
        return Err(format!("{succeeded} succeeded of {total}"));
    }
    Ok(Run {
        tls_version,
        elapsed_ns,
        total,
        succeeded,
    })
}

/// "360.86ms", "1.02s", "950.12us": nanoseconds.
fn duration_ns(text: &str) -> Option<u64> {
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = text.strip_suffix("us") {
        (n, 1e3)
    } else {
        (text.strip_suffix('s')?, 1e9)
    };
    let x: f64 = number.trim().parse().ok()?;
    (x.is_finite() && x >= 0.0 && x * scale < u64::MAX as f64).then(|| (x * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "starting benchmark...
spawning thread #0: 100 total client(s). 100 total requests
TLS Protocol: TLSv1.3
Cipher: TLS_AES_128_GCM_SHA256
Application protocol: h2
progress: 100% done

finished in 67.79ms, 1475.14 req/s, 169.99KB/s
requests: 100 total, 100 started, 100 done, 100 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 100 2xx, 0 3xx, 0 4xx, 0 5xx
";

    #[test]
    fn a_summary_reads_as_h2load_wrote_it() {
        let r = parse(OUTPUT).unwrap();
        assert_eq!(r.tls_version.as_deref(), Some("TLSv1.3"));
        assert_eq!(r.elapsed_ns, 67_790_000);
        assert_eq!((r.total, r.succeeded), (100, 100));
        // h2load's own rate is the same figure: 100 / 67.79 ms = 1,475.14 a second.
        assert!((r.succeeded as f64 / (r.elapsed_ns as f64 / 1e9) - 1475.14).abs() < 0.01);
    }

    #[test]
    fn every_unit_and_a_failed_run() {
        assert_eq!(duration_ns("1.50s"), Some(1_500_000_000));
        assert_eq!(duration_ns("950.12us"), Some(950_120));
        assert_eq!(duration_ns("12ms"), Some(12_000_000));
        assert_eq!(duration_ns("-1ms"), None);
        assert_eq!(duration_ns("fast"), None);
        // A server that refused the group: no protocol, nothing succeeded.
        let refused = "finished in 94.09ms, 0.00 req/s, 0B/s
requests: 500 total, 0 started, 0 done, 0 succeeded, 500 failed, 500 errored, 0 timeout";
        let r = parse(refused).unwrap();
        assert_eq!((r.tls_version, r.succeeded, r.total), (None, 0, 500));
        assert!(parse("h2load: command not found")
            .unwrap_err()
            .contains("finished in"));
        assert!(parse("finished in 1ms\nrequests: 5 total, 6 succeeded")
            .unwrap_err()
            .contains("6 succeeded of 5"));
    }
}
