//! TCP behaviour checked against theory and against the RFCs' timing rules.

use crate::common;
use common::{f, run, run_seeded};

/// Mathis et al. 1997: a loss-limited Reno-style flow gets MSS/RTT · C/√p, C = √(3/2) when
/// cwnd grows one MSS per RTT (our controllers count acknowledged bytes, so delayed ACKs do
/// not slow growth). The bottleneck (100 Mbit/s) is far above the loss-limited rate, so loss
/// alone limits the flow. Tolerance ±25 %: the formula ignores timeouts (which lower the
/// rate at 1 % loss), the random (not periodic) loss pattern, and the queueing-free RTT it
/// assumes; averaging 4 seeds of 300 s keeps sampling noise near 5 %.
#[test]
fn newreno_under_one_percent_loss_follows_mathis() {
    let sc = r#"
        duration = "300s"
        warmup = "10s"
        [topology]
        bottleneck = { rate = "100Mbps", delay = "40ms", loss = 0.01 }
        access = { rate = "1Gbps", delay = "5ms" }
        [[flows]]
        cc = "newreno"
    "#;
    let mss_bits = 1448.0 * 8.0;
    let rtt = 0.100;
    let p: f64 = 0.01;
    let mathis = mss_bits / rtt * (1.5 / p).sqrt() / 1e6;
    let seeds = [1u64, 2, 3, 4];
    let mean: f64 =
        seeds.iter().map(|&s| f(&run_seeded(sc, Some(s)), "flows.0.goodput_mbps")).sum::<f64>()
            / seeds.len() as f64;
    let ratio = mean / mathis;
    eprintln!("mathis: goodput {mean:.3} Mbit/s, formula {mathis:.3}, ratio {ratio:.3}");
    assert!(
        (0.75..=1.25).contains(&ratio),
        "goodput {mean:.3} Mbit/s vs Mathis {mathis:.3} (ratio {ratio:.2})"
    );
}

/// With a buffer of one bandwidth-delay product, a single Reno-style flow never lets the
/// bottleneck go idle: after halving, cwnd is still ≥ BDP (Villamizar & Song 1994).
#[test]
fn one_bdp_buffer_keeps_the_bottleneck_busy() {
    let sc = r#"
        duration = "120s"
        warmup = "20s"
        [topology]
        bottleneck = { rate = "10Mbps", delay = "10ms" }
        bottleneck_queue = { limit = "52KB" }
        access = { rate = "1Gbps", delay = "5ms" }
        [[flows]]
        cc = "newreno"
    "#;
    // BDP = 10 Mbit/s × 40 ms = 50 KB (+ headers: 52 KB of 1500-byte packets).
    let s = run(sc);
    let u = f(&s, "bottleneck.utilization_pct");
    assert!(u >= 98.0, "utilization {u:.2}%");
}

/// Little's law on a constant-rate link: mean waiting time = mean backlog / service rate
/// when the link is saturated (all packets are the same size). 1 % tolerance: the backlog is
/// a time average and the sojourn a per-packet average over the same window.
#[test]
fn sojourn_equals_backlog_over_rate() {
    let sc = r#"
        duration = "60s"
        warmup = "5s"
        [topology]
        bottleneck = { rate = "10Mbps", delay = "10ms" }
        bottleneck_queue = { limit = "200KB" }
        access = { rate = "1Gbps", delay = "5ms" }
        [[flows]]
        cc = "reno"
        count = 2
    "#;
    let s = run(sc);
    let backlog = f(&s, "bottleneck.mean_bytes");
    let util = f(&s, "bottleneck.utilization_pct") / 100.0;
    let predicted_ms = backlog * 8.0 / (10e6 * util) * 1e3;
    let sojourn = f(&s, "bottleneck.mean_sojourn_ms");
    assert!(backlog > 50_000.0, "the queue should be well used ({backlog} B)");
    assert!(
        (sojourn / predicted_ms - 1.0).abs() < 0.01,
        "sojourn {sojourn:.2} ms vs backlog/rate {predicted_ms:.2} ms"
    );
}

fn one_segment_file(drops: &str) -> String {
    format!(
        r#"
        duration = "30s"
        [topology]
        bottleneck = {{ rate = "10Mbps", delay = "20ms", drop_packets = {drops} }}
        access = {{ rate = "1Gbps", delay = "5ms" }}
        [[flows]]
        cc = "newreno"
        size = "1000B"
        "#
    )
}

/// A lost SYN waits the initial RTO of 1 s (RFC 6298 2.1); each further loss doubles it.
#[test]
fn lost_syn_costs_one_second_and_rto_backs_off_by_doubling() {
    let base = f(&run(&one_segment_file("[]")), "flows.0.fct_s");
    // SYN, SYN-ACK, ACK+data: 1.5 RTT of 60 ms plus serialization.
    assert!((0.090..0.092).contains(&base), "unloaded fct {base}");
    let cases = [("[0]", 1.0), ("[0, 1]", 3.0), ("[0, 1, 2]", 7.0)];
    for (drops, extra) in cases {
        let fct = f(&run(&one_segment_file(drops)), "flows.0.fct_s");
        assert!((fct - base - extra).abs() < 1e-3, "drops {drops}: fct {fct} vs {base} + {extra}");
    }
}

fn burst_loss(recovery: &str) -> serde_json::Value {
    // A 50-segment file; segments 38, 40, 42 and 44 (of the third, 20-segment flight) are lost
    // on the bottleneck (packets 0 and 1 there are the SYN and the handshake ACK). The file
    // ends soon after, so the time to repair the holes shows in the completion time.
    run(&format!(
        r#"
        duration = "30s"
        [topology]
        bottleneck = {{ rate = "10Mbps", delay = "20ms", drop_packets = [40, 42, 44, 46] }}
        bottleneck_queue = {{ limit = "1000p" }}
        access = {{ rate = "1Gbps", delay = "5ms" }}
        [[flows]]
        cc = "reno"
        size = "72400B"
        tcp = {{ recovery = "{recovery}" }}
        "#
    ))
}

/// SACK (RFC 6675) repairs several holes of one window in about one RTT; NewReno (RFC 6582)
/// repairs one hole per RTT; neither needs a timeout.
#[test]
fn sack_recovers_a_burst_in_one_rtt_newreno_needs_one_rtt_per_hole() {
    let sack = burst_loss("sack");
    let newreno = burst_loss("newreno");
    for s in [&sack, &newreno] {
        assert_eq!(f(s, "flows.0.timeouts"), 0.0);
        assert_eq!(f(s, "flows.0.recoveries"), 1.0);
        assert_eq!(f(s, "flows.0.retransmits"), 4.0);
    }
    let rtt = 0.060;
    let gap = f(&newreno, "flows.0.fct_s") - f(&sack, "flows.0.fct_s");
    // Three extra round trips for the three later holes.
    assert!((gap / rtt - 3.0).abs() < 0.1, "NewReno {gap:.3}s slower than SACK, expected 3 RTTs");
}

/// RFC 6582 restarts the retransmission timer on the first partial ACK only (the "Impatient"
/// variant): after a slow-start overshoot into a deep buffer (hundreds of holes in one window)
/// NewReno recovery ends in a timeout and slow start, instead of repairing one hole per RTT for
/// the rest of the run, which restarting the timer on every partial ACK would do (it gave
/// 0.36 Mbit/s here, with no timeout).
#[test]
fn newreno_recovery_times_out_instead_of_one_hole_per_rtt_for_minutes() {
    let s = run(r#"
        duration = "60s"
        [topology]
        bottleneck = { rate = "6Mbps", delay = "75ms" }
        bottleneck_queue = { kind = "droptail", limit = "500p" }
        access = { rate = "1Gbps", delay = "500us" }
        [tcp]
        recovery = "newreno"
        [[flows]]
        cc = "newreno"
        "#);
    assert!(f(&s, "flows.0.timeouts") >= 1.0, "the long repair must end in a timeout");
    let g = f(&s, "flows.0.goodput_mbps");
    assert!(g > 4.0, "goodput {g:.2} Mbit/s: the flow must not stall in recovery");
}

/// The receiver delays the ACK of a lone segment by the 40 ms delayed-ACK timer (quick-ACK
/// mode off: it would ACK the first segments of a connection at once).
#[test]
fn delayed_ack_timer_holds_a_lone_segment() {
    let sc = |delack: &str| {
        format!(
            r#"
            duration = "10s"
            [topology]
            bottleneck = {{ rate = "1Gbps", delay = "20ms" }}
            access = {{ rate = "10Gbps", delay = "0ms" }}
            [[flows]]
            cc = "newreno"
            size = "4344B"
            tcp = {{ init_cwnd = 1, delack = "{delack}", quickack = false }}
            "#
        )
    };
    // init_cwnd 1: segment 1 alone (ACK delayed), then segments 2-3.
    let with = f(&run(&sc("40ms")), "flows.0.fct_s");
    let without = f(&run(&sc("0s")), "flows.0.fct_s");
    assert!((with - without - 0.040).abs() < 1e-4, "delayed {with} vs immediate {without}");
    assert!((without - 0.100).abs() < 1e-3, "2.5 RTT expected, got {without}");
}

/// A receive buffer smaller than the path's BDP caps the flow at window / RTT (flow control:
/// send window = min(cwnd, advertised window)); window scaling carries buffers above 64 KiB.
/// The sender keeps whole segments in the window: ⌊rcvbuf / MSS⌋ · MSS per RTT.
#[test]
fn receive_window_limits_throughput_to_window_over_rtt() {
    for (rcvbuf, segs) in [(50_000u64, 34u64), (200_000, 138)] {
        let s = run(&format!(
            r#"
            duration = "30s"
            warmup = "5s"
            [topology]
            bottleneck = {{ rate = "100Mbps", delay = "40ms" }}
            access = {{ rate = "1Gbps", delay = "5ms" }}
            [[flows]]
            cc = "reno"
            tcp = {{ rcvbuf = "{rcvbuf}B", recovery = "sack" }}
            "#
        ));
        let expected = (segs * 1448) as f64 * 8.0 / 0.100 / 1e6;
        let got = f(&s, "flows.0.goodput_mbps");
        assert!(
            (got / expected - 1.0).abs() < 0.03,
            "rcvbuf {rcvbuf}: {got:.3} Mbit/s vs window/RTT {expected:.3}"
        );
        assert_eq!(f(&s, "bottleneck.drops"), 0.0);
    }
}

/// Pacing spreads a window over the RTT. Unpaced, the initial window of 10 segments leaves
/// a 10 Gbit/s access link back to back and queues at the 50 Mbit/s bottleneck (the k-th
/// waits k−1 serialization times of 0.24 ms). Paced at Linux's slow-start ratio (2 · cwnd /
/// SRTT, SRTT from the handshake) one segment per slot (`gso = false`) the segments are 2.6 ms
/// apart and never queue; with Linux's GSO bursts (the default) they leave in pairs, paced
/// 5.2 ms apart, and the second of each pair waits one serialization time.
#[test]
fn pacing_spreads_the_initial_window() {
    let sc_gso = |pacing: bool, gso: bool| {
        format!(
            r#"
            duration = "3s"
            [topology]
            bottleneck = {{ rate = "50Mbps", delay = "20ms" }}
            access = {{ rate = "10Gbps", delay = "5ms" }}
            [[flows]]
            cc = "reno"
            size = "14480B"
            tcp = {{ pacing = {pacing}, gso = {gso} }}
            "#
        )
    };
    let sc = |pacing: bool| sc_gso(pacing, false);
    let unpaced = run(&sc(false));
    let paced = run(&sc(true));
    let tx_ms = 1500.0 * 8.0 / 50e6 * 1e3;
    // Mean wait over the 10 data packets (the SYN and handshake ACK wait 0): 4.5 tx times.
    let u = f(&unpaced, "bottleneck.mean_sojourn_ms");
    assert!((u - 4.5 * tx_ms * 10.0 / 12.0).abs() < 0.01, "unpaced mean sojourn {u}");
    // Only the first segment waits, behind the 52-byte handshake ACK sent with it (8 µs).
    let p = f(&paced, "bottleneck.mean_sojourn_ms");
    assert!(p < 0.01, "paced mean sojourn {p}");
    // Spreading 10 segments over 2.6 ms gaps costs ~9 gaps of completion time.
    let extra = f(&paced, "flows.0.fct_s") - f(&unpaced, "flows.0.fct_s");
    assert!(extra > 0.015 && extra < 0.030, "pacing added {extra:.4} s");
    // GSO pairs: 5 of the 12 packets wait one serialization time behind their pair's first.
    let g = f(&run(&sc_gso(true, true)), "bottleneck.mean_sojourn_ms");
    assert!((g - 5.0 * tx_ms / 12.0).abs() < 0.01, "paced GSO pairs: mean sojourn {g}");
}
