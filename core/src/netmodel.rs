//! The network model set beside each measured point: what connect-to-complete should take from the
//! compute, the round trips, the bottleneck and the loss.
//!
//! expected = zero + round_trips x (RTT - base RTT) + serialization + retransmission delay, where
//! - zero is the median at no delay and no loss through the same router (compute plus the path's
//!   own latency, which the base RTT is);
//! - serialization is each direction's bytes at the bottleneck rate (none when unlimited);
//! - retransmission delay, to first order in the loss probability p: a lost SYN or SYN-ACK costs
//!   the 1 s initial retransmission timeout (RFC 6298 section 2.1; Linux TCP_TIMEOUT_INIT), and a
//!   lost data packet about one RTO after the handshake's first RTT sample, RTT + 200 ms (Linux
//!   TCP_RTO_MIN); every data packet of the connection is counted, so this is an upper bound for
//!   the packets after completion, which cannot delay it.
//!
//! It predicts the mean: loss moves the tail, not the median, until p is large.

/// Initial RTO (RFC 6298 section 2.1), nanoseconds (1 s).
pub const INITIAL_RTO_NS: f64 = 1e9;
/// Linux's minimum RTO (include/net/tcp.h TCP_RTO_MIN = HZ / 5), nanoseconds (200 ms).
pub const MIN_RTO_NS: f64 = 200e6;

#[allow(clippy::too_many_arguments)]
pub fn expected_ns(
    zero_ns: f64,
    round_trips: f64,
    rtt_ns: f64,
    base_rtt_ns: f64,
    loss: f64,
    data_packets: [f64; 2],
    bytes: [f64; 2],
    rate_mbit: Option<f64>,
) -> f64 {
    let serialization = rate_mbit.map_or(0.0, |r| (bytes[0] + bytes[1]) * 8.0 / (r * 1e6) * 1e9);
    let retransmission =
        loss * (2.0 * INITIAL_RTO_NS + (data_packets[0] + data_packets[1]) * (rtt_ns + MIN_RTO_NS));
    zero_ns + round_trips * (rtt_ns - base_rtt_ns).max(0.0) + serialization + retransmission
}

/// Round trips a server's first flight of `bytes` takes beyond its first: slow start (RFC 5681
/// section 3.1) sends `initcwnd` segments of `mss` bytes, then doubles the window each round trip
/// as the ACKs come back, so a flight of more than `initcwnd` segments waits a round trip for each
/// window it overflows (about 14.6 kB at MSS 1,460 and the RFC 6928 window of 10).
pub fn slow_start_round_trips(bytes: u64, mss: u32, initcwnd: u32) -> u32 {
    let segments = bytes.div_ceil(u64::from(mss.max(1)));
    let (mut sent, mut window, mut extra) = (0u64, u64::from(initcwnd.max(1)), 0);
    loop {
        sent += window;
        if sent >= segments {
            return extra;
        }
        window *= 2;
        extra += 1;
    }
}

#[cfg(test)]
mod tests {
    const MS: f64 = 1e6;

    #[test]
    fn a_flight_past_the_initial_window_costs_a_round_trip_per_doubling() {
        use super::slow_start_round_trips as rt;
        // MSS 1,448 (1,500 less IP, TCP and timestamps), a window of 10.
        assert_eq!(rt(2_149, 1448, 10), 0, "ECDSA chain: 2 segments");
        assert_eq!(rt(11_690, 1448, 10), 0, "ML-DSA-44: 9 segments");
        assert_eq!(rt(15_637, 1448, 10), 1, "ML-DSA-65: 11 segments");
        assert_eq!(rt(20_893, 1448, 10), 1, "ML-DSA-87: 15 segments");
        assert_eq!(rt(14_480, 1448, 10), 0, "exactly ten");
        assert_eq!(rt(44_000, 1448, 10), 2, "31 segments: 10 + 20 + 40");
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-3
    }

    #[test]
    fn the_model_adds_round_trips_serialization_and_expected_timeouts() {
        let bytes = [2000.0, 4000.0];
        let model = |rate| {
            super::expected_ns(
                1.5 * MS,
                2.0,
                78.7 * MS,
                0.2 * MS,
                0.0,
                [5.0, 6.0],
                bytes,
                rate,
            )
        };
        // No loss, no rate: zero + 2 x (78.7 - 0.2).
        assert!(close(model(None), 158.5 * MS));
        // 10 Mbit/s: 6000 bytes = 48,000 bits = 4.8 ms more.
        assert!(close(model(Some(10.0)), 163.3 * MS));
        // 10% loss at RTT 5.6: 0.1 x (2000 + 11 x 205.6) = 426.16 ms more.
        let e = super::expected_ns(
            1.0 * MS,
            2.0,
            5.6 * MS,
            0.1 * MS,
            0.1,
            [5.0, 6.0],
            [0.0; 2],
            None,
        );
        assert!(close(e, (1.0 + 11.0 + 426.16) * MS), "{e}");
    }
}
