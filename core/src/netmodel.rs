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
//! That first-order figure predicts the mean. Under loss the model is also a distribution
//! (`loss_percentiles`): which packet of the critical path is lost and which timer recovers it,
//! whose p50 and p95 stand beside the measured ones; loss moves the tail, not the median, until
//! p is large.

/// Initial RTO (RFC 6298 section 2.1), nanoseconds (1 s).
pub(crate) const INITIAL_RTO_NS: f64 = 1e9;
/// Linux's minimum RTO (include/net/tcp.h TCP_RTO_MIN = HZ / 5), nanoseconds (200 ms).
pub(crate) const MIN_RTO_NS: f64 = 200e6;

#[allow(clippy::too_many_arguments)]
pub(crate) fn expected_ns(
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

/// What the model takes of a QUIC sender (`QuicSender`): its initial congestion window, how it
/// fills it, and its probe timeout before any RTT sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuicParams {
    /// Bytes.
    pub initial_window: u64,
    /// It holds a datagram back once the bytes in flight and that datagram would reach the window
    /// (quinn); otherwise once the bytes in flight reach it (quic-go), so a round may pass the
    /// window by less than a datagram.
    pub whole_datagram_under_window: bool,
    /// Nanoseconds.
    pub initial_pto_ns: f64,
}

/// A sender's parameters, from its source:
/// - quinn-proto 0.11: an initial window of 14,720 bytes clamped to 2-10 datagrams of 1,200
///   (congestion/cubic.rs, after RFC 9002 section 7.2), 12,000; `in_flight + segment >= window`
///   blocks (connection/mod.rs); the initial RTT 333 ms (RFC 9002 section 6.2.2's kInitialRtt),
///   so before a sample the probe timeout is 333 + 4 x 166.5 ms, 999 ms, with no ack delay in the
///   Initial and Handshake spaces (section 6.2.1);
/// - quic-go 0.59: 32 datagrams of its initial packet size, which pqprof sets to 1,200
///   (internal/congestion/cubic_sender.go: initialCongestionWindow = 32), 38,400 bytes; it sends
///   while the bytes in flight are under the window (CanSend); the initial RTT 100 ms, and before
///   a sample the probe timeout is twice that, 200 ms (internal/utils/rtt_stats.go: PTO). Its
///   pacer is in the model where it holds a first flight back (`quic_go_pacing_ns`).
///
/// After a sample both set the probe timeout by RFC 9002's rule (`Timers::quic`).
pub fn quic_params(sender: crate::results::QuicSender) -> QuicParams {
    match sender {
        crate::results::QuicSender::Quinn => QuicParams {
            initial_window: 12_000,
            whole_datagram_under_window: true,
            initial_pto_ns: 3.0 * 333e6,
        },
        crate::results::QuicSender::QuicGo => QuicParams {
            initial_window: 32 * QUIC_DATAGRAM,
            whole_datagram_under_window: false,
            initial_pto_ns: 2.0 * 100e6,
        },
    }
}

/// The datagrams quic-go's pacer lets go at once, at least (internal/congestion/pacer.go,
/// maxBurstSizePackets).
const QUIC_GO_BURST_DATAGRAMS: u64 = 10;

/// The datagram size quic-go's pacer counts in, bytes: its `maxDatagramSize` starts at the
/// package's `initialMaxDatagramSize`, protocol.InitialPacketSize (1,280; internal/congestion/
/// cubic_sender.go, internal/protocol/params.go), not the configured initial packet size, and
/// only path MTU discovery changes it (connection.go: SetMaxDatagramSize), which pqprof turns
/// off. So the burst is at least 10 x 1,280 bytes and a datagram waits for 1,280 bytes of
/// budget, while each one sent takes 1,200.
const QUIC_GO_PACER_DATAGRAM: u64 = 1_280;

/// How long quic-go's pacer holds back the last of a first flight of `datagrams` (of
/// `QUIC_DATAGRAM` bytes) that it sends with a smoothed RTT of `srtt_ns` and its initial window,
/// nanoseconds, in the model's `form` (`QUIC_LOSS_MODEL`): its token bucket, step by step, from
/// quic-go 0.59's source (internal/congestion/pacer.go). The rate is 5/4 of window / smoothed RTT
/// (adjustedBandwidth, over cubic_sender.go's BandwidthEstimate); the bucket holds the larger of
/// 10 of the pacer's datagrams and 2 ms at that rate (maxBurstSize: the minimum pacing delay and
/// the timer granularity, 1 ms each, internal/protocol/params.go) and starts full; a datagram
/// goes when the bucket held one of the pacer's datagrams after the last, else when it will, but
/// not sooner than 1 ms after the last (TimeUntilSend), by when the bucket may hold several. The
/// pacer's datagram is 1,280 bytes from form 5 (`QUIC_GO_PACER_DATAGRAM`), 1,200 in form 4,
/// which read the NEW_TOKEN ML-DSA cells at 78.7 ms 0.7-1.4 ms over what they took (Xeon model
/// 207, make runs of 2026-12-04 and 2026-12-05: form 5 holds their flights of 11-14 datagrams
/// 1.0-1.2 ms less). A server has a smoothed RTT before its first flight only
/// from a NEW_TOKEN token, which carries the RTT it measured when it gave the token (server.go:
/// "restore RTT from token"; a Retry's token carries none, and without one the RTT is 0, which
/// BandwidthEstimate takes as 1 ms: no flight here is then held). At 78.7 ms the rate is
/// 610 kB/s and the burst 10 datagrams; in form 5 the 11th goes 1 ms later, the 12th 1.75 ms
/// after that and the rest one every 1.97 ms; at 5.6 ms the burst is 14 datagrams, more than any
/// flight here.
pub fn quic_go_pacing_ns(datagrams: u64, srtt_ns: f64, form: u32) -> f64 {
    if srtt_ns <= 0.0 || datagrams == 0 {
        return 0.0;
    }
    let window = quic_params(crate::results::QuicSender::QuicGo).initial_window as f64;
    let size = QUIC_DATAGRAM as f64;
    let unit = if form >= 5 {
        QUIC_GO_PACER_DATAGRAM
    } else {
        QUIC_DATAGRAM
    } as f64;
    let rate = 1.25 * window / srtt_ns;
    let most = (rate * 2e6).max(QUIC_GO_BURST_DATAGRAMS as f64 * unit);
    // The first datagram goes at 0 with the bucket full.
    let (mut at, mut left) = (0.0, (most - size).max(0.0));
    for _ in 1..datagrams {
        let next = if left >= unit {
            at
        } else {
            at + ((unit - left) / rate).max(1e6)
        };
        let budget = (left + rate * (next - at)).min(most);
        left = (budget - size).max(0.0);
        at = next;
    }
    at
}

/// The datagrams of a QUIC cell's first flight that quic-go's pacer spaces (`quic_go_pacing_ns`),
/// in `form` 4 of the model on: quic-go's server answering a token, whose flight here is one
/// round (the token lifts the address budget, and the flight is under its window); none
/// otherwise.
pub fn quic_paced(q: &crate::results::QuicEvidence, form: u32) -> Option<u64> {
    (form >= 4 && q.sender == crate::results::QuicSender::QuicGo && q.token && !q.retry)
        .then_some(q.server_datagrams)
}

/// Round trips before a QUIC client completes, when nothing waits: its Initial, the server's
/// flight back (RFC 9000 section 7; no TCP connect before it).
pub const QUIC_ROUND_TRIPS: f64 = 1.0;

/// The datagrams a QUIC handshake's flights travel in before path MTU discovery (RFC 9000
/// section 14.1: an Initial's at least 1,200 bytes; quinn stays at 1,200 without discovery, and
/// pqprof sets quic-go's initial packet size to it).
pub(crate) const QUIC_DATAGRAM: u64 = 1_200;

/// Round trips a QUIC server's first flight of `server_bytes` takes beyond its first, without an
/// address-validation token (`token` false): until the client's next flight validates its address
/// the server may send three times what it received (RFC 9000 section 8.1), the client's Initial
/// flight of `client_initial_bytes`; and it sends a datagram only while its congestion window
/// lets it (`QuicParams`: quinn while the bytes in flight and that datagram stay under it, so the
/// window less a datagram per round trip; quic-go while the bytes in flight are under it). Slow
/// start (RFC 9002 section 7.3.1) adds to the window the bytes acknowledged while the sender was
/// held by the window, not while it was held by the budget or had nothing to send (section 7.8:
/// quinn's `app_limited`). So how the client acknowledges the first round matters:
/// - `batched` (pqprof's client from 2026-12-03 03:00, as quinn's own endpoint driver does: every
///   datagram waiting is read before it answers): one acknowledgement for the budget-limited
///   round, which grows nothing; the second round carries the initial window less a datagram;
/// - otherwise (each datagram acknowledged as it came, the files before): the first
///   acknowledgement validates the address and the rest find the server held by its window, which
///   then grows by the first round.
///
/// After that each round trip carries the window as it is, and the window grows by it.
pub fn quic_round_trips(
    server_bytes: u64,
    client_initial_bytes: u64,
    token: bool,
    sender: &QuicParams,
    batched: bool,
) -> u32 {
    quic_rounds(server_bytes, client_initial_bytes, token, sender, batched).len() as u32 - 1
}

/// The bytes of the server's first flight each round trip carries (`quic_round_trips`): the
/// first what the budget or the window lets go, the last what is left.
pub fn quic_rounds(
    server_bytes: u64,
    client_initial_bytes: u64,
    token: bool,
    sender: &QuicParams,
    batched: bool,
) -> Vec<u64> {
    let window = sender.initial_window;
    let room = |w: u64| {
        if sender.whole_datagram_under_window {
            w.saturating_sub(QUIC_DATAGRAM).max(QUIC_DATAGRAM)
        } else {
            w.div_ceil(QUIC_DATAGRAM).max(1) * QUIC_DATAGRAM
        }
    };
    let first = if token {
        room(window)
    } else {
        room(window).min(3 * client_initial_bytes)
    };
    let held_by_window = first >= room(window);
    let mut window = if held_by_window || !batched {
        window + first
    } else {
        window
    };
    let mut rounds = vec![first.min(server_bytes)];
    let mut sent = first;
    while sent < server_bytes {
        let round = room(window);
        rounds.push(round.min(server_bytes - sent));
        sent += round;
        window += round;
    }
    rounds
}

/// The form of QUIC's loss model a file's cells follow (`Network::quic_loss_model`; `check`
/// recomputes each file by its own, and refuses a form it does not know):
/// - 1 (files up to the make run of 2026-12-04 11:04, which have no such field): the server's
///   first round as one flight; a lost last datagram resent at the probe timeout, then one probe
///   timeout more for each further loss, doubling from there (3, 6, 12 RTT);
/// - 2 (the make run of 2026-12-04 13:20, commit b9d065e): the server's first datagram on its own,
///   opening after a one-datagram Initial flight; a lost last datagram's probe timeouts doubling
///   (RFC 9002 section 6.2.1: 3, 9, 21 RTT);
/// - 3 (the make runs of 2026-12-04 14:27 to 17:35): as 2, but after an Initial flight of two
///   datagrams or more the server's first two datagrams are one opening flight;
/// - 4 (the make runs of 2026-12-04 19:42 to 2026-12-05 01:40): as 3, with quic-go's pacer
///   holding back the end of a first flight it sends with a token's RTT (`quic_paced`,
///   `quic_go_pacing_ns`; `Model::pacer`), counting in 1,200-byte datagrams;
/// - 5: as 4, the pacer counting in its own 1,280-byte datagrams (`QUIC_GO_PACER_DATAGRAM`).
///
/// Why the head of the server's flight: its first datagram carries the Initial packet with the
/// ServerHello, without which the client can decrypt none of the Handshake packets after it and
/// has nothing to acknowledge, so losing it waits for the probe timeout before any RTT sample on
/// both sides (quinn's 999 ms, quic-go's 200 ms: `quic_params`; the case of quinn-rs/quinn#1075). After a one-datagram Initial flight
/// (X25519) that datagram is the head. After two (a hybrid's key share), the ServerHello, with its
/// 1,088-byte ML-KEM-768 ciphertext (FIPS 203 table 3), spills into an Initial packet in the
/// second datagram (quinn pads a datagram with an Initial packet to 1,200 bytes: X25519's flight
/// came back as 1,200 + 47 bytes, the hybrid's as 1,200 + 1,200), which the client can read and
/// acknowledge: the head is both, 999 ms only where both are lost, and one of them lost is found
/// by the loss thresholds or the probe timeout its acknowledgement's sample sets (3 RTT). The
/// Initial flight's datagrams stand in for the ServerHello's: both carry the key share, and the
/// groups run here put both past one datagram or neither. The rest of a one-round flight follows
/// the head.
///
/// Measured (Xeon 4769b0, make runs of 2026-12-04 11:04 and 13:20, 5.6 and 78.7 ms RTT, 1%
/// loss): 7 of 349 and 8 of 344 X25519 handshakes took over 900 ms, where form 1 expects one loss
/// in a hundred and the head two; 0 of 356 and 0 of 358 hybrid ones, where a 999-ms wait for the
/// first datagram alone would put 3.6.
pub const QUIC_LOSS_MODEL: u32 = 5;

/// The critical path of a QUIC handshake for the loss model (`form`: `QUIC_LOSS_MODEL`'s): the
/// client's Initial flight (opening: no RTT sample yet), the head of the server's flight (forms 2
/// and 3), then for each round trip the budget or the window adds to the server's flight the
/// client's acknowledgement that releases the next round, and the server's last round in the
/// datagrams its bytes take (opening where it is its first, in form 1; less the head where it is
/// the first round, in forms 2 and 3). A datagram lost in a round before the last costs no time of
/// its own (the head's aside): the acknowledgement that releases the next round reports the gap,
/// and the datagram goes again with that round, which waits a round trip anyway. After a Retry,
/// the first Initial flight and the Retry, taken as one opening datagram, come first; quic-go
/// takes an RTT sample from the Retry (sent_packet_handler.go, ResetForRetry), so its second
/// Initial flight is not an opening one, quinn's is. Taken as
/// simpler than it is, in forms 2 and 3: the head and another datagram of the round both lost cost
/// the probe timeout and the other's recovery one after the other.
pub fn quic_critical_path(q: &crate::results::QuicEvidence, form: u32) -> Vec<Flight> {
    let rounds = quic_rounds(
        q.server_bytes,
        q.client_initial_bytes,
        q.address_validated(),
        &quic_params(q.sender),
        q.batched_acks,
    );
    let datagrams = |b: u64| b.div_ceil(QUIC_DATAGRAM).max(1) as u32;
    let flight = |from_client: bool, segments: u32, opening: bool| Flight {
        from_client,
        segments,
        opening,
        quic: true,
        sender: q.sender,
    };
    let initial = flight(true, q.client_initial_datagrams.max(1) as u32, true);
    let mut v = Vec::new();
    if q.retry {
        v.push(initial);
        v.push(flight(false, 1, true));
        v.push(Flight {
            opening: q.sender == crate::results::QuicSender::Quinn,
            ..initial
        });
    } else {
        v.push(initial);
    }
    let one_initial = q.client_initial_datagrams <= 1;
    let first = datagrams(rounds.first().copied().unwrap_or(0));
    let (head, head_opening) = match form {
        1 => (0, false),
        2 => (1, one_initial),
        _ if one_initial => (1, true),
        _ => (first.min(2), true),
    };
    if head > 0 {
        v.push(flight(false, head, head_opening));
    }
    for _ in 1..rounds.len() {
        v.push(flight(true, 1, false));
    }
    let last = datagrams(rounds.last().copied().unwrap_or(0));
    let one_round = rounds.len() == 1;
    let rest = if one_round { last - head } else { last };
    if rest > 0 {
        v.push(flight(false, rest, form == 1 && one_round));
    }
    v
}

/// The mean delay loss adds along a critical path (each flight's `flight_delay`, summed): QUIC's
/// expected time under loss, in place of TCP's first-order `expected_ns` term.
pub(crate) fn loss_mean_ns(path: &[Flight], rtt_ns: f64, p: f64, form: u32) -> f64 {
    path.iter()
        .map(|f| {
            flight_delay(f, rtt_ns, p, form)
                .iter()
                .map(|(d, q)| d * q)
                .sum::<f64>()
        })
        .sum()
}

/// Round trips beyond QUIC's one that a connection's recorded flights take: a Retry's round trip,
/// and those the anti-amplification budget (none where a token or the Retry validated the
/// address) and slow start add to the server's first flight (`quic_round_trips`, at its sender's
/// initial window).
pub fn quic_extra_round_trips(q: &crate::results::QuicEvidence) -> u32 {
    u32::from(q.retry)
        + quic_round_trips(
            q.server_bytes,
            q.client_initial_bytes,
            q.address_validated(),
            &quic_params(q.sender),
            q.batched_acks,
        )
}

/// What a window stall hides of the zero point's compute, nanoseconds (#38, #37's flows): where
/// the server's first flight overflows the initial window (`flight_bytes > window_bytes`), the
/// rest of it waits a round trip for the client's ACKs (`wait_ns`), and work that needs no more
/// of the flight than has gone runs in that wait instead of on the critical path:
/// - a server that writes up to the Certificate before it signs (OpenSSL 3.5) signs in the wait;
/// - a client that checks the chain as soon as the Certificate is in (OpenSSL, Go's crypto/tls)
///   checks it in the wait when the Certificate ends inside the window; otherwise after it, as a
///   client that checks the chain with the CertificateVerify (rustls) always does.
///
/// Without a wait that work counts once: the longer of the two where they overlap (the server
/// signs while the client checks the chain), the chain check alone where the server signs before
/// its one write. Hidden is that less what still runs after the wait (whatever of the work
/// outlasts it; where the chain must wait for the rest of the flight, the longer of the chain
/// check and what of the signing outlasts the wait). The zero point, through the same router,
/// waits its own base RTT: a cell's model takes off what its RTT hides beyond that
/// (figures::network::model).
pub(crate) fn stall_hidden_ns(s: &crate::results::Stall, wait_ns: f64) -> f64 {
    if s.flight_bytes <= s.window_bytes || wait_ns <= 0.0 {
        return 0.0;
    }
    let chain = s.client_chain_ns;
    // The server's measured time between its writes where the file has it, else its composed
    // segment.
    let server_after = s
        .server_after_write_ns
        .map(|composed| s.server_flight_ns.unwrap_or(composed));
    let counted = server_after.map_or(chain, |server| server.max(chain));
    let chain_waits = s.chain_on_arrival && s.certificate_end <= s.window_bytes;
    let in_wait = match (server_after, chain_waits) {
        (Some(server), true) => server.max(chain),
        (Some(server), false) => server,
        (None, true) => chain,
        (None, false) => 0.0,
    };
    // What still runs after the wait: what outlasts it; or, where the chain must wait for the
    // rest of the flight, the chain check beside whatever of the signing outlasts the wait (the
    // two sides at once).
    let after = if chain_waits {
        (in_wait - wait_ns).max(0.0)
    } else {
        chain.max((in_wait - wait_ns).max(0.0))
    };
    (counted - after).max(0.0)
}

pub use crate::results::Flight;

/// The critical path of a TLS 1.3 or SSH handshake over TCP, flight by flight: SYN, SYN-ACK, then
/// a flight each way for every further round trip (TLS: the ClientHello and the server's flight,
/// ServerHello to Finished, in the segments they take; SSH: one segment each). Round trips that
/// slow start adds wait for ACKs of the same server flight and carry no new flight.
pub fn critical_path(exchanges: u32, client_segments: u32, server_segments: u32) -> Vec<Flight> {
    let mut v = vec![
        Flight {
            from_client: true,
            segments: 1,
            opening: true,
            quic: false,
            sender: Default::default(),
        },
        Flight {
            from_client: false,
            segments: 1,
            opening: true,
            quic: false,
            sender: Default::default(),
        },
    ];
    for k in 0..exchanges {
        let (c, s) = if k == 0 {
            (client_segments, server_segments)
        } else {
            (1, 1)
        };
        v.push(Flight {
            from_client: true,
            segments: c.max(1),
            opening: false,
            quic: false,
            sender: Default::default(),
        });
        v.push(Flight {
            from_client: false,
            segments: s.max(1),
            opening: false,
            quic: false,
            sender: Default::default(),
        });
    }
    v
}

/// How often a packet is counted lost again after its retransmission was lost (its retransmissions
/// back off: 1, 2, 4 times the timer): beyond this many losses of one packet the probability is
/// below p^4, 0.16% at 20% loss, and the rest of the tail is folded into the last.
const MAX_LOSSES: u32 = 4;

/// The extra delay one flight adds when loss takes some of its segments, as a distribution
/// (delay, probability), independent loss p per packet.
/// - An opening packet (SYN, SYN-ACK) is recovered by the initial RTO, 1 s (RFC 6298 section 2.1),
///   doubling at each loss: 1, 3, 7 s.
/// - A one-segment flight by the RTO after the handshake's first RTT sample: Linux sets
///   RTO = RTT + max(2 RTT, TCP_RTO_MIN) (net/ipv4/tcp_input.c `tcp_rtt_estimator`, first sample:
///   mdev = 2 RTT, rttvar at least 200 ms); a tail-loss probe would come later (2 RTT + 200 ms with
///   one packet out, tcp_output.c `tcp_schedule_loss_probe`), so the RTO recovers it.
/// - In a flight of several segments a lost one with a later one delivered is found by RACK after
///   its reordering window, min RTT / 4 (RFC 8985 section 6.2): resent about 1.25 RTT after it was
///   sent; Linux closes the window once 3 segments are SACKed (net/ipv4/tcp_recovery.c
///   `tcp_rack_reo_wnd`, the default `tcp_reordering` of 3), so in a flight of 4 or more about 1
///   RTT. A lost tail segment is found by the tail-loss probe, 2 RTT + 2 ms with more than one
///   packet out, or the RTO if sooner. A retransmission lost again waits for the RTO, then twice
///   that.
///
/// The flight's delay is its slowest segment's, the segments being recovered in parallel. Taken
/// as simpler than they are: several segments lost at a flight's end (the probe brings back the
/// last; the rest take about one RTT more) and ACKs lost (a later one covers them).
///
/// A QUIC flight (`Flight::quic`) is recovered by QUIC's timers instead (`Timers::quic`).
pub(crate) fn flight_delay(f: &Flight, rtt_ns: f64, p: f64, form: u32) -> Vec<(f64, f64)> {
    let t = if f.quic {
        Timers::quic(f, rtt_ns, form)
    } else {
        Timers::tcp(f, rtt_ns)
    };
    t.delay(f.segments, p)
}

/// The timers that recover a flight's losses: `whole`, the first wait for a flight of one packet
/// lost (and over QUIC for an opening flight lost whole), doubling at each loss; `backoff`, the
/// wait after a retransmission is lost, doubling; `early`, when an earlier packet is found lost
/// from a later one acknowledged; `tail`, when a lost last packet is resent.
struct Timers {
    whole: f64,
    backoff: f64,
    early: f64,
    tail: f64,
    /// Losing every packet of the flight waits for `whole` (QUIC's opening flights: no RTT sample
    /// to time a probe by); otherwise the tail's timer recovers it.
    whole_when_all_lost: bool,
    /// A lost tail's retransmission lost again waits twice `tail`, then four times (QUIC's probe
    /// timeouts, each doubling the next); otherwise `backoff`, then twice that (TCP's tail-loss
    /// probe, then its RTO).
    tail_doubles: bool,
}

impl Timers {
    /// TCP's (`flight_delay`).
    fn tcp(f: &Flight, rtt_ns: f64) -> Timers {
        let rto = rtt_ns + (2.0 * rtt_ns).max(MIN_RTO_NS);
        Timers {
            whole: if f.opening { INITIAL_RTO_NS } else { rto },
            backoff: rto,
            early: if f.segments >= 4 { 1.0 } else { 1.25 } * rtt_ns,
            tail: (2.0 * rtt_ns + 2e6).min(rto),
            whole_when_all_lost: false,
            tail_doubles: false,
        }
    }

    /// QUIC's (RFC 9002, as quinn-proto 0.11 and quic-go 0.59 run it):
    /// - a flight its sender sent before any RTT sample (the client's Initial, the server's first
    ///   flight), lost whole, waits for the probe timeout before a sample (`QuicParams`: quinn's
    ///   999 ms, quic-go's 200 ms), doubling;
    /// - otherwise the receiver's acknowledgement gives the sender a sample, and a lost last packet
    ///   waits for the probe timeout it sets, RTT + max(4 x RTT / 2, 1 ms) = 3 RTT (first sample:
    ///   rttvar = RTT / 2, section 5.3), doubling;
    /// - an earlier packet with a later one acknowledged is lost by the time threshold, 9/8 of the
    ///   RTT after it was sent (section 6.1.2), or at once by the packet threshold of 3 (section
    ///   6.1.1), taken as a flight of 4 or more;
    /// - from `form` 2 on (`QUIC_LOSS_MODEL`), a lost tail lost again waits twice the probe
    ///   timeout, then four times (3, 9, 21 RTT in all); in form 1 one probe timeout, then two
    ///   (3, 6, 12 RTT).
    fn quic(f: &Flight, rtt_ns: f64, form: u32) -> Timers {
        let pto = rtt_ns + (2.0 * rtt_ns).max(1e6);
        Timers {
            whole: if f.opening {
                quic_params(f.sender).initial_pto_ns
            } else {
                pto
            },
            backoff: pto,
            early: if f.segments >= 4 { 1.0 } else { 9.0 / 8.0 } * rtt_ns,
            tail: pto,
            whole_when_all_lost: f.opening,
            tail_doubles: form != 1,
        }
    }

    /// The flight's delay over `segments` packets at loss `p`, as (delay, probability).
    fn delay(&self, segments: u32, p: f64) -> Vec<(f64, f64)> {
        let p = p.clamp(0.0, 1.0);
        // The delay after k losses of one packet whose first recovery takes `first`.
        let chain = |first: f64, k: u32| first + self.backoff * (2f64.powi(k as i32 - 1) - 1.0);
        let losses = |first: f64, timer: f64| -> Vec<(f64, f64)> {
            // Lost k times (k >= 1), then delivered; the last atom holds every k beyond it.
            (1..=MAX_LOSSES)
                .map(|k| {
                    let pk = p.powi(k as i32) * if k == MAX_LOSSES { 1.0 } else { 1.0 - p };
                    let d = if timer > 0.0 {
                        timer * (2f64.powi(k as i32) - 1.0)
                    } else {
                        chain(first, k)
                    };
                    (d, pk)
                })
                .collect()
        };
        let mut v = vec![(0.0, 1.0 - p)];
        if segments <= 1 {
            v.extend(losses(0.0, self.whole));
            return v;
        }
        let rest = segments - 1;
        let none_before = (1.0 - p).powi(rest as i32);
        v[0].1 *= none_before;
        // The tail delivered and an earlier segment lost: `early`; the tail lost: its timer, taken
        // as the flight's delay whatever else it lost (or, where that is every packet, `whole`).
        v.extend(losses(self.early, 0.0).into_iter().map(|(d, q)| {
            (
                d,
                q / p.max(f64::MIN_POSITIVE) * (1.0 - p) * (1.0 - none_before),
            )
        }));
        let all_lost = if self.whole_when_all_lost {
            p.powi(rest as i32)
        } else {
            0.0
        };
        let tail = if self.tail_doubles {
            losses(0.0, self.tail)
        } else {
            losses(self.tail, 0.0)
        };
        v.extend(tail.into_iter().map(|(d, q)| (d, q * (1.0 - all_lost))));
        v.extend(
            losses(0.0, self.whole)
                .into_iter()
                .map(|(d, q)| (d, q * all_lost)),
        );
        v.retain(|&(_, q)| q > 0.0);
        v
    }
}

/// The sum of independent delays, as a distribution: atoms closer than 1 µs merged, those below
/// 1e-12 dropped.
fn convolve(a: &[(f64, f64)], b: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = a
        .iter()
        .flat_map(|&(x, p)| b.iter().map(move |&(y, q)| (x + y, p * q)))
        .filter(|&(_, w)| w > 1e-12)
        .collect();
    v.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(v.len());
    for (d, w) in v {
        match out.last_mut() {
            Some(last) if d - last.0 < 1e3 => last.1 += w,
            _ => out.push((d, w)),
        }
    }
    out
}

/// The modelled percentiles of connect-to-complete under independent loss p per packet and
/// direction: the loss-free time plus the delay loss adds along the critical path, each flight's
/// delay (`flight_delay`) added to the next's; the `q`-th percentile is the smallest time whose
/// probability of not being exceeded reaches q. At 1% loss most handshakes lose nothing, so the
/// p50 is the loss-free time and the p95 shows the timers.
pub(crate) fn loss_percentiles(
    loss_free_ns: f64,
    path: &[Flight],
    rtt_ns: f64,
    p: f64,
    qs: &[f64],
    form: u32,
) -> Vec<f64> {
    let mut dist = vec![(0.0, 1.0)];
    for f in path {
        dist = convolve(&dist, &flight_delay(f, rtt_ns, p, form));
    }
    qs.iter()
        .map(|&q| {
            let target = q / 100.0;
            let mut acc = 0.0;
            let d = dist
                .iter()
                .find(|&&(_, w)| {
                    acc += w;
                    acc >= target - 1e-12
                })
                .or(dist.last())
                .map_or(0.0, |&(d, _)| d);
            loss_free_ns + d
        })
        .collect()
}

#[cfg(test)]
mod tests {
    const MS: f64 = 1e6;
    const FORM: u32 = super::QUIC_LOSS_MODEL;

    #[test]
    fn a_quic_flight_past_three_times_the_initial_costs_a_round_trip_and_then_slow_starts() {
        use super::{quic_params, quic_round_trips};
        let w = quic_params(crate::results::QuicSender::Quinn);
        let q = |f, i, token| quic_round_trips(f, i, token, &w, true);
        let each = |f, i| quic_round_trips(f, i, false, &w, false);
        // ECDSA chain, X25519: 1,253 bytes back for a 1,200-byte Initial (budget 3,600).
        assert_eq!(q(1_253, 1_200, false), 0);
        // The hybrid (two Initial datagrams): 7,200 first; the one acknowledgement of a
        // budget-limited round grows nothing, so 12,000 less a datagram next: 18,000 in two
        // round trips (ML-DSA-65's 16,529 bytes), and ML-DSA-87's 22,012 in three: the window,
        // grown by the 10,800 it then held, carries 21,600 more.
        assert_eq!(q(16_529, 2_400, false), 1);
        assert_eq!(q(18_000, 2_400, false), 1);
        assert_eq!(q(22_012, 2_400, false), 2);
        assert_eq!(q(39_600, 2_400, false), 2);
        assert_eq!(q(39_601, 2_400, false), 3);
        // Acknowledged datagram by datagram the window grows by the first round too:
        // 7,200, then 19,200 less a datagram: 25,200 in two.
        assert_eq!(each(22_158, 2_400), 1);
        assert_eq!(each(25_200, 2_400), 1);
        assert_eq!(each(25_201, 2_400), 2);
        // One Initial datagram: a budget of 3,600, then 10,800: 14,400.
        assert_eq!(q(12_634, 1_200, false), 1);
        assert_eq!(q(3_600, 1_200, false), 0);
        assert_eq!(q(3_601, 1_200, false), 1);
        assert_eq!(q(14_401, 1_200, false), 2);
        // 60,000 bytes: 3,600, then 10,800 (14,400; window 22,800), 21,600 (36,000; 44,400),
        // 43,200 (79,200).
        assert_eq!(q(60_000, 1_200, false), 3);
        // A token lifts the budget; the window less a datagram still holds: 10,800, and that
        // round, held by the window, grows it: 21,600 more.
        assert_eq!(q(10_800, 1_200, true), 0);
        assert_eq!(q(10_801, 1_200, true), 1);
        assert_eq!(q(32_400, 1_200, true), 1);
    }

    #[test]
    fn quic_gos_pacer_spaces_what_passes_its_burst_at_a_fortieth_of_the_rtt() {
        use super::{quic_go_pacing_ns, quic_paced};
        use crate::results::{QuicEvidence, QuicSender};
        const MS: f64 = 1e6;
        // Form 4, 1,200-byte datagrams. 78.7 ms: 1.25 x 38,400 B / 78.7 ms is 610 kB/s, 2 ms of
        // it 1,220 B, so the burst is 10 datagrams and the rest go one every 1,200 B / 610 kB/s
        // = 78.7 / 40 = 1.9675 ms.
        let close = |a: f64, b: f64| (a - b).abs() < 1.0;
        assert!(close(quic_go_pacing_ns(10, 78.7 * MS, 4), 0.0));
        assert!(close(quic_go_pacing_ns(11, 78.7 * MS, 4), 1.9675 * MS));
        assert!(close(
            quic_go_pacing_ns(13, 78.7 * MS, 4),
            3.0 * 1.9675 * MS
        ));
        // Form 5, the pacer counting 1,280 bytes: the bucket holds 12,800 B; ten datagrams of
        // 1,200 leave 800, short of 1,280: the 11th waits 480 / 609.91 B/ms = 0.787 ms, so the
        // least spacing, 1 ms, by when 1,409.9 B are there (209.9 left after it); the 12th
        // waits 1,070.1 / 609.91 = 1.7545 ms (80 left), the 13th and 14th 1,200 / 609.91 =
        // 1.9675 ms each: 1, 2.7545, 4.7220 and 6.6895 ms.
        assert!(close(quic_go_pacing_ns(10, 78.7 * MS, 5), 0.0));
        assert!(close(quic_go_pacing_ns(11, 78.7 * MS, 5), 1.0 * MS));
        assert!((quic_go_pacing_ns(12, 78.7 * MS, 5) - 2.7545 * MS).abs() < 100.0);
        assert!((quic_go_pacing_ns(14, 78.7 * MS, 5) - 6.6895 * MS).abs() < 100.0);
        // 5.6 ms: 2 ms at 8,571 B/ms is 17,143 B, a burst of 14 datagrams (343 B left); the
        // 15th waits the 1 ms least spacing, by when the bucket holds 8,914 B: the 16th to the
        // 21st go with it, the 22nd a millisecond later. The same in both forms.
        for form in [4, 5] {
            assert!(close(quic_go_pacing_ns(14, 5.6 * MS, form), 0.0));
            assert!(close(quic_go_pacing_ns(15, 5.6 * MS, form), 1.0 * MS));
            assert!(close(quic_go_pacing_ns(21, 5.6 * MS, form), 1.0 * MS));
            assert!(close(quic_go_pacing_ns(22, 5.6 * MS, form), 2.0 * MS));
        }
        // No RTT (no token, or a Retry's): nothing held.
        assert_eq!(quic_go_pacing_ns(20, 0.0, 5), 0.0);
        let q = |sender, token, retry| QuicEvidence {
            version: 1,
            client_initial_datagrams: 1,
            client_initial_bytes: 1_200,
            client_initial_smallest: Some(1_200),
            server_datagrams: 13,
            server_bytes: 15_211,
            token,
            retry,
            batched_acks: true,
            sender,
        };
        assert_eq!(quic_paced(&q(QuicSender::QuicGo, true, false), 4), Some(13));
        assert_eq!(quic_paced(&q(QuicSender::QuicGo, true, false), 3), None);
        assert_eq!(quic_paced(&q(QuicSender::QuicGo, false, false), 4), None);
        assert_eq!(quic_paced(&q(QuicSender::QuicGo, false, true), 4), None);
        assert_eq!(quic_paced(&q(QuicSender::Quinn, true, false), 4), None);
    }

    #[test]
    fn quic_gos_window_holds_every_chain_so_only_the_budget_costs_a_round_trip() {
        use super::quic_extra_round_trips as extra;
        use crate::results::{QuicEvidence, QuicSender};
        let q = |initial: u64, server_bytes: u64, token: bool| QuicEvidence {
            version: 1,
            client_initial_datagrams: initial,
            client_initial_bytes: initial * 1_200,
            client_initial_smallest: Some(1_200),
            server_datagrams: server_bytes.div_ceil(1_200),
            server_bytes,
            token,
            retry: false,
            batched_acks: true,
            sender: QuicSender::QuicGo,
        };
        // X25519's one Initial datagram: 3,600 bytes first. ECDSA's 1,2xx-byte flight fits;
        // ML-DSA-44's 12,3xx needs a second round, which 38,400 bytes of window carry whole.
        assert_eq!(extra(&q(1, 1_230, false)), 0);
        assert_eq!(extra(&q(1, 12_300, false)), 1);
        // The hybrid's two: 7,200 first; ML-DSA-65's 16,3xx in two rounds (quinn's too).
        assert_eq!(extra(&q(2, 16_300, false)), 1);
        // With a token the whole window goes at once: no chain here waits (quinn's 10,800 does).
        assert_eq!(extra(&q(2, 16_300, true)), 0);
        assert_eq!(
            extra(&QuicEvidence {
                sender: QuicSender::Quinn,
                ..q(2, 16_300, true)
            }),
            1
        );
        // A window past a whole number of datagrams: quic-go sends while under it, so one more.
        let go = super::quic_params(QuicSender::QuicGo);
        assert_eq!(
            super::quic_rounds(50_000, 2_400, true, &go, true),
            vec![38_400, 11_600]
        );
        let odd = super::QuicParams {
            initial_window: 38_500,
            ..go
        };
        assert_eq!(
            super::quic_rounds(40_000, 2_400, true, &odd, true),
            vec![39_600, 400]
        );
    }

    #[test]
    fn a_token_lifts_the_budget_and_a_retry_costs_a_round_trip_and_lifts_it_too() {
        use super::quic_extra_round_trips as extra;
        use crate::results::QuicEvidence;
        // quinn with the hybrid and ML-DSA-44's chain (2026-12-04, Xeon 4769b0): 12,4xx bytes
        // after a 2,400-byte Initial flight.
        let q = QuicEvidence {
            version: 1,
            client_initial_datagrams: 2,
            client_initial_bytes: 2_400,
            client_initial_smallest: Some(1_200),
            server_datagrams: 11,
            server_bytes: 12_400,
            token: false,
            retry: false,
            batched_acks: true,
            sender: Default::default(),
        };
        // 7,200 first (the budget), then 10,800.
        assert_eq!(extra(&q), 1);
        // A token: 10,800 first (the window less a datagram), then the rest: still one more,
        // the window's, not the budget's.
        let token = QuicEvidence {
            token: true,
            ..q.clone()
        };
        assert_eq!(extra(&token), 1);
        // A leaf-only chain's 8,200 bytes: the budget's round trip, which a token removes.
        let leaf = QuicEvidence {
            server_bytes: 8_200,
            ..q.clone()
        };
        assert_eq!(extra(&leaf), 1);
        assert_eq!(
            extra(&QuicEvidence {
                token: true,
                ..leaf.clone()
            }),
            0
        );
        // A Retry: its round trip, then the window's as with a token.
        assert_eq!(
            extra(&QuicEvidence {
                retry: true,
                ..q.clone()
            }),
            2
        );
        assert_eq!(
            extra(&QuicEvidence {
                retry: true,
                ..leaf.clone()
            }),
            1
        );
        // The loss model's path: after a Retry its first Initial and the Retry come first.
        let path = super::quic_critical_path(
            &QuicEvidence {
                retry: true,
                ..leaf.clone()
            },
            1,
        );
        let shape: Vec<(bool, u32, bool)> = path
            .iter()
            .map(|f| (f.from_client, f.segments, f.opening))
            .collect();
        assert_eq!(
            shape,
            [
                (true, 2, true),
                (false, 1, true),
                (true, 2, true),
                (false, 7, true)
            ]
        );
        assert!(path.iter().all(|f| f.quic));
        // From the second form on, the head of the server's flight stands alone: lost, it waits
        // for the initial probe timeout; the rest of the round follows it, the client having its
        // RTT sample by then. In the second form the head is the first datagram, opening after a
        // one-datagram Initial; in the third, after two Initial datagrams, the first two (the
        // ServerHello spills into the second), opening.
        // A path flight as (from client, datagrams, opening).
        type Shape = (bool, u32, bool);
        let shape = |q: &QuicEvidence, form: u32| -> Vec<Shape> {
            super::quic_critical_path(q, form)
                .iter()
                .map(|f| (f.from_client, f.segments, f.opening))
                .collect()
        };
        let retry = QuicEvidence {
            retry: true,
            ..leaf.clone()
        };
        // After a Retry (one round: the address is validated), and in two rounds (the budget's
        // 7,200 bytes, then the rest, 5,200): the head, the acknowledgement that releases the
        // second round, that round's datagrams.
        let (c, s) = (true, false);
        // One case a line, each line its path.
        #[rustfmt::skip]
        let cases: [(&QuicEvidence, u32, &[Shape]); 4] = [
            (&retry, 2, &[(c, 2, true), (s, 1, true), (c, 2, true), (s, 1, false), (s, 6, false)]),
            (&retry, 3, &[(c, 2, true), (s, 1, true), (c, 2, true), (s, 2, true), (s, 5, false)]),
            (&q, 2, &[(c, 2, true), (s, 1, false), (c, 1, false), (s, 5, false)]),
            (&q, 3, &[(c, 2, true), (s, 2, true), (c, 1, false), (s, 5, false)]),
        ];
        for (evidence, form, want) in cases {
            assert_eq!(shape(evidence, form), want, "form {form}: {evidence:?}");
        }
        // Two Initial datagrams and one or two back: the head is the whole flight.
        for (bytes, back) in [(1_100, 1), (2_400, 2)] {
            let hybrid = QuicEvidence {
                server_bytes: bytes,
                ..q.clone()
            };
            assert_eq!(shape(&hybrid, 3), [(true, 2, true), (false, back, true)]);
        }
        // One Initial datagram and one back: the ServerHello's alone, before any sample.
        let small = QuicEvidence {
            client_initial_datagrams: 1,
            client_initial_bytes: 1_200,
            server_bytes: 1_100,
            ..q.clone()
        };
        for form in [2, 3] {
            assert_eq!(shape(&small, form), [(true, 1, true), (false, 1, true)]);
        }
        // One Initial datagram and three back: the ServerHello's datagram before any sample,
        // the other two after it.
        let three = QuicEvidence {
            server_bytes: 2_600,
            ..small.clone()
        };
        for form in [2, 3] {
            assert_eq!(
                shape(&three, form),
                [(true, 1, true), (false, 1, true), (false, 2, false)]
            );
        }
        // The first form: the server's rounds as they are, its first opening.
        assert_eq!(shape(&three, 1), [(true, 1, true), (false, 3, true)]);
    }

    #[test]
    fn an_opening_flight_lost_whole_waits_its_senders_first_probe_timeout() {
        use super::{flight_delay, Flight};
        use crate::results::QuicSender;
        let opening = |sender| Flight {
            from_client: false,
            segments: 1,
            opening: true,
            quic: true,
            sender,
        };
        // Lost once, then delivered: quinn's 999 ms, quic-go's 2 x 100 ms.
        let first = |s| flight_delay(&opening(s), 5.6 * MS, 0.1, FORM)[1];
        assert!((first(QuicSender::Quinn).0 - 999.0 * MS).abs() < 1e-3);
        assert!((first(QuicSender::QuicGo).0 - 200.0 * MS).abs() < 1e-3);
        // After a sample both wait 3 RTT.
        let later = |sender| Flight {
            opening: false,
            ..opening(sender)
        };
        let go = flight_delay(&later(QuicSender::QuicGo), 5.6 * MS, 0.1, FORM);
        assert_eq!(
            go,
            flight_delay(&later(QuicSender::Quinn), 5.6 * MS, 0.1, FORM)
        );
    }

    #[test]
    fn quics_timers_recover_a_flight_by_its_probe_timeouts_and_loss_thresholds() {
        use super::{flight_delay, Flight};
        let total = |v: &[(f64, f64)]| v.iter().map(|x| x.1).sum::<f64>();
        let quic = |segments, opening| Flight {
            from_client: true,
            segments,
            opening,
            quic: true,
            sender: Default::default(),
        };
        // A one-datagram Initial at 10% loss: the initial probe timeout, 999 ms, doubling.
        let initial = flight_delay(&quic(1, true), 5.6 * MS, 0.1, FORM);
        assert!(close(total(&initial), 1.0));
        assert!(close(initial[1].0, 999.0 * MS) && close(initial[2].0, 3.0 * 999.0 * MS));
        assert!((initial[1].1 - 0.09).abs() < 1e-12);
        // A one-datagram flight after a sample: 3 RTT (RTT + 4 x RTT / 2), doubling.
        let ack = flight_delay(&quic(1, false), 78.7 * MS, 0.01, FORM);
        assert!(close(ack[1].0, 3.0 * 78.7 * MS) && close(ack[2].0, 9.0 * 78.7 * MS));
        // An opening flight of two at 10% loss: both lost (1%) waits 999 ms; the tail alone
        // (9%) the probe timeout its acknowledged head gives, 3 RTT; the head alone (9%) 9/8 RTT.
        let two = flight_delay(&quic(2, true), 5.6 * MS, 0.1, FORM);
        assert!(close(total(&two), 1.0), "{two:?}");
        let at = |d: f64| {
            two.iter()
                .filter(|x| close(x.0, d))
                .map(|x| x.1)
                .sum::<f64>()
        };
        assert!((at(0.0) - 0.81).abs() < 1e-9);
        assert!(
            (at(9.0 / 8.0 * 5.6 * MS) - 0.09 * 0.9).abs() < 1e-9,
            "{two:?}"
        );
        assert!((at(3.0 * 5.6 * MS) - 0.09 * 0.9).abs() < 1e-9, "{two:?}");
        assert!((at(999.0 * MS) - 0.01 * 0.9).abs() < 1e-9, "{two:?}");
        // Four or more: the packet threshold finds an early loss at the acknowledgement, 1 RTT.
        let four = flight_delay(&quic(4, false), 5.6 * MS, 0.1, FORM);
        assert!(close(total(&four), 1.0) && close(four[1].0, 5.6 * MS));
        // A lost last datagram lost again: the second probe timeout is twice the first, so 3 x 3
        // RTT in all, then 7 x 3 RTT; in the first form 2 x 3 RTT, then 4 x 3 RTT.
        let tail_at = |form: u32| {
            let v = flight_delay(&quic(2, false), 5.6 * MS, 0.1, form);
            let at = |d: f64| v.iter().any(|x| close(x.0, d) && x.1 > 0.0);
            (at(9.0 * 5.6 * MS), at(21.0 * 5.6 * MS), at(6.0 * 5.6 * MS))
        };
        assert_eq!(tail_at(2), (true, true, false));
        assert_eq!(tail_at(3), (true, true, false));
        assert_eq!(tail_at(1), (false, false, true));
    }

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

    #[test]
    fn the_critical_path_is_syn_syn_ack_and_a_flight_each_way_per_exchange() {
        use super::{critical_path, Flight};
        let p = critical_path(1, 2, 11);
        assert_eq!(p.len(), 4);
        assert_eq!(
            p[0],
            Flight {
                from_client: true,
                segments: 1,
                opening: true,
                quic: false,
                sender: Default::default(),
            }
        );
        assert_eq!(
            p[1],
            Flight {
                from_client: false,
                segments: 1,
                opening: true,
                quic: false,
                sender: Default::default(),
            }
        );
        assert_eq!(
            p[2],
            Flight {
                from_client: true,
                segments: 2,
                opening: false,
                quic: false,
                sender: Default::default(),
            }
        );
        assert_eq!(
            p[3],
            Flight {
                from_client: false,
                segments: 11,
                opening: false,
                quic: false,
                sender: Default::default(),
            }
        );
        // SSH: two exchanges after the connect, a segment each.
        let s = critical_path(2, 1, 1);
        assert_eq!(s.len(), 6);
        assert!(s[2..].iter().all(|f| f.segments == 1 && !f.opening));
    }

    #[test]
    fn each_flights_delay_is_a_distribution_of_its_timers() {
        use super::{flight_delay, Flight};
        let total = |v: &[(f64, f64)]| v.iter().map(|x| x.1).sum::<f64>();
        // A SYN at 10% loss: 0 with 0.9, 1 s with 0.09, 3 s with 0.009, 7 s with 0.0009, 15 s 0.0001.
        let syn = flight_delay(
            &Flight {
                from_client: true,
                segments: 1,
                opening: true,
                quic: false,
                sender: Default::default(),
            },
            5.6 * MS,
            0.1,
            FORM,
        );
        assert!(close(total(&syn), 1.0));
        let want = [
            (0.0, 0.9),
            (1e3 * MS, 0.09),
            (3e3 * MS, 0.009),
            (7e3 * MS, 0.0009),
            (15e3 * MS, 0.0001),
        ];
        for ((d, w), (d0, w0)) in syn.iter().zip(want) {
            assert!(close(*d, d0) && (w - w0).abs() < 1e-12, "{syn:?}");
        }
        // One data segment at RTT 78.7 ms: the RTO is 78.7 + max(157.4, 200) = 278.7 ms.
        let one = flight_delay(
            &Flight {
                from_client: true,
                segments: 1,
                opening: false,
                quic: false,
                sender: Default::default(),
            },
            78.7 * MS,
            0.01,
            FORM,
        );
        assert!(close(one[1].0, 278.7 * MS) && close(one[2].0, 3.0 * 278.7 * MS));
        // Four segments: RACK without its reordering window, 1 RTT.
        let four = flight_delay(
            &Flight {
                from_client: false,
                segments: 4,
                opening: false,
                quic: false,
                sender: Default::default(),
            },
            5.6 * MS,
            0.1,
            FORM,
        );
        assert!(
            close(total(&four), 1.0) && close(four[1].0, 5.6 * MS),
            "{four:?}"
        );
        // Two segments at RTT 5.6 ms, 10% loss: nothing lost 0.81; the first alone lost, RACK at
        // 1.25 RTT = 7 ms, with 0.9 x 0.1 = 0.09 (0.081 delivered on its first resend); the tail
        // lost, the probe at 2 RTT + 2 ms = 13.2 ms, with 0.1 (0.09 on its first resend).
        let two = flight_delay(
            &Flight {
                from_client: false,
                segments: 2,
                opening: false,
                quic: false,
                sender: Default::default(),
            },
            5.6 * MS,
            0.1,
            FORM,
        );
        assert!(close(total(&two), 1.0), "{two:?}");
        assert!((two[0].1 - 0.81).abs() < 1e-12);
        assert!(
            close(two[1].0, 7.0 * MS) && (two[1].1 - 0.081).abs() < 1e-12,
            "{two:?}"
        );
        let tail = two.iter().find(|x| close(x.0, 13.2 * MS)).unwrap();
        assert!((tail.1 - 0.09).abs() < 1e-12);
    }

    #[test]
    fn loss_moves_the_tail_first_and_the_median_only_when_most_handshakes_lose_a_packet() {
        use super::{critical_path, loss_percentiles};
        let path = critical_path(1, 1, 2);
        // No loss: every percentile is the loss-free time.
        let none = loss_percentiles(12.0 * MS, &path, 5.6 * MS, 0.0, &[50.0, 95.0], FORM);
        assert!(close(none[0], 12.0 * MS) && close(none[1], 12.0 * MS));
        // 0.5%: 5 packets, P(none lost) = 0.995^5 = 97.5%: p50 and p95 loss-free.
        let one = loss_percentiles(12.0 * MS, &path, 5.6 * MS, 0.005, &[50.0, 95.0], FORM);
        assert!(
            close(one[0], 12.0 * MS) && close(one[1], 12.0 * MS),
            "{one:?}"
        );
        // 5%: P(none) = 0.95^5 = 77.4%; P(no SYN or SYN-ACK loss) = 0.9025, so the p95 waits for
        // the initial RTO: 12 ms + 1 s.
        let five = loss_percentiles(12.0 * MS, &path, 5.6 * MS, 0.05, &[50.0, 95.0], FORM);
        assert!(
            close(five[0], 12.0 * MS) && close(five[1], 1012.0 * MS),
            "{five:?}"
        );
        // 20%: P(none) = 0.8^5 = 32.8% < 50%, so the median carries a recovery.
        let twenty = loss_percentiles(12.0 * MS, &path, 5.6 * MS, 0.2, &[50.0], FORM);
        assert!(twenty[0] > 12.0 * MS, "{twenty:?}");
    }

    fn stall(
        server: Option<f64>,
        chain: f64,
        on_arrival: bool,
        cert_end: u64,
    ) -> crate::results::Stall {
        crate::results::Stall {
            suite: "s".into(),
            composed_stack: "x".into(),
            flight_bytes: 15_675,
            certificate_end: cert_end,
            window_bytes: 14_480,
            server_after_write_ns: server,
            server_flight_ns: None,
            client_chain_ns: chain,
            chain_on_arrival: on_arrival,
            hidden_ns: 0.0,
        }
    }

    #[test]
    fn a_stall_hides_what_runs_while_the_flight_waits_for_its_acks() {
        // (what the case is, server after its write, chain check, on arrival, Certificate's end,
        // wait, hidden); the flight is 15,675 bytes against a 14,480-byte window.
        type Case = (&'static str, Option<f64>, f64, bool, u64, f64, f64);
        let cases: [Case; 8] = [
            // OpenSSL, ML-DSA-65: without a wait the longer (1,000) counts, and all of it runs
            // in a 5.5 ms wait.
            (
                "both in the wait",
                Some(1000.0),
                600.0,
                true,
                12_262,
                5500.0,
                1000.0,
            ),
            // ML-DSA-87: the chain is checked after the wait: 1,000 counted, 600 still run.
            (
                "chain after the wait",
                Some(1000.0),
                600.0,
                true,
                16_178,
                5500.0,
                400.0,
            ),
            (
                "a longer chain check",
                Some(500.0),
                600.0,
                true,
                16_178,
                5500.0,
                0.0,
            ),
            // Go: one write after signing, the chain on arrival inside the window.
            ("the chain alone", None, 600.0, true, 12_262, 5500.0, 600.0),
            // rustls: the chain with the CertificateVerify, one write.
            ("nothing early", None, 600.0, false, 12_262, 5500.0, 0.0),
            // A short wait hides only itself: 1,000 counted, 1,000 - 300 after it.
            (
                "a short wait",
                Some(1000.0),
                600.0,
                true,
                12_262,
                300.0,
                300.0,
            ),
            // After a short wait the chain (600) runs beside the rest of the signing (700).
            (
                "chain beside signing",
                Some(1000.0),
                600.0,
                true,
                16_178,
                300.0,
                300.0,
            ),
            // No wait (the zero point): nothing.
            ("no wait", Some(1000.0), 600.0, true, 12_262, 0.0, 0.0),
        ];
        for (what, server, chain, on_arrival, cert_end, wait, want) in cases {
            let s = stall(server, chain, on_arrival, cert_end);
            assert_eq!(super::stall_hidden_ns(&s, wait), want, "{what}");
        }
        // A flight that fits the window stalls nothing.
        let mut fits = stall(Some(1000.0), 600.0, true, 9_000);
        fits.flight_bytes = 11_728;
        assert_eq!(super::stall_hidden_ns(&fits, 5500.0), 0.0);
        // The server's measured flight (1,400: its signing, records and sends) stands in for its
        // composed segment (1,000) where the file has it; a stack that writes once has none.
        let mut measured = stall(Some(1000.0), 600.0, true, 16_178);
        measured.server_flight_ns = Some(1400.0);
        assert_eq!(super::stall_hidden_ns(&measured, 5500.0), 800.0);
        let mut once = stall(None, 600.0, true, 12_262);
        once.server_flight_ns = Some(1400.0);
        assert_eq!(super::stall_hidden_ns(&once, 5500.0), 600.0);
    }
}
