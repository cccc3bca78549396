//! Linux's SACK compression at the receiver (`tcp.sack_compress`) and GSO bursts of a paced
//! sender (`tcp.gso`): together they make BBR v1 over-estimate the bottleneck by a few per
//! cent after each random loss (a delivery-rate sample whose send phase ends with a burst and
//! whose ACK phase starts at a held-back SACK), so its queue grows with random loss as Linux's
//! does (validate matrix, `bbr-droptail-b2-rtt40-loss1-f1`: 12.8–14.4 ms on Linux 6.18, 8.0
//! ms in the simulator without them).

use crate::common;
use common::{f, run};
use serde_json::Value;

fn bbr_loss(tcp: &str) -> f64 {
    let s = run(&format!(
        r#"
        duration = "30s"
        warmup = "5s"
        [topology]
        bottleneck = {{ rate = "10Mbps", delay = "20ms", loss = 0.01 }}
        bottleneck_queue = {{ kind = "droptail", limit = "100000B" }}
        [tcp]
        {tcp}
        [[flows]]
        cc = "bbr"
        "#
    ));
    f(&s, "bottleneck.mean_sojourn_ms")
}

#[test]
fn bbr_queue_grows_with_random_loss_as_on_linux() {
    let both = bbr_loss("");
    let no_compress = bbr_loss("sack_compress = false");
    let no_gso = bbr_loss("gso = false");
    let neither = bbr_loss("sack_compress = false\ngso = false");
    eprintln!("mean sojourn: both {both:.2} ms, no SACK compression {no_compress:.2}, no GSO {no_gso:.2}, neither {neither:.2}");
    assert!((11.0..16.0).contains(&both), "with both: {both:.2} ms (Linux 12.8–14.4)");
    assert!(neither < 9.0, "without either: {neither:.2} ms");
    assert!(no_compress < both - 3.0 && no_gso < both, "each mechanism adds to the queue");
}

/// The same cell with Linux's pacing credit: alone it lengthened the simulated queue (Linux
/// 12.4-14.3 ms mean over six runs, the simulator 14.4-18.8 with the credit). Traced to the
/// fast retransmission: Linux sends it at the pacing slot (tcp_xmit_retransmit_queue checks
/// tcp_pacing_check), the simulator on the ACK that entered recovery, and with the credit the
/// recovery's sends then left on the pacing timer instead of on the ACKs (docs/tcp.md, "The
/// paced fast retransmission"). Measured at this seed: the credit alone 17.1 ms, with the
/// paced fast retransmission 13.3 ms; bounds: the pair within 15 % of Linux's six-run mean
/// (13.4 ms), and at least 2 ms below the credit alone.
#[test]
fn paced_fast_retransmit_brings_one_lossy_bbr_flows_queue_back_to_linuxs() {
    let credit = bbr_loss("pacing_credit = true");
    let both = bbr_loss("pacing_credit = true\npaced_fast_retransmit = true");
    eprintln!(
        "mean queueing delay: credit {credit:.2} ms, with the paced retransmission {both:.2}"
    );
    assert!((both - 13.4).abs() <= 0.15 * 13.4, "credit + paced retransmission: {both:.2} ms");
    assert!(credit >= both + 2.0, "credit alone {credit:.2} ms against {both:.2}");
}

/// One Reno flow for `duration` (measured after `warmup`) on `bottleneck` behind `queue`,
/// with the `[tcp]` switch `key` set to `on`.
fn reno_with(key: &str, on: bool, times: (&str, &str), bottleneck: &str, queue: &str) -> Value {
    let (duration, warmup) = times;
    run(&format!(
        r#"
        duration = "{duration}"
        warmup = "{warmup}"
        [topology]
        bottleneck = {bottleneck}
        bottleneck_queue = {queue}
        [tcp]
        {key} = {on}
        [[flows]]
        cc = "reno"
        "#
    ))
}

/// Linux's TSO deferral for a sender without pacing (`tcp.tso_defer`, Linux
/// `tcp_tso_should_defer`): at 100 Mbit/s a Reno flow's skbs hold about 1 ms of data at
/// 1.2 · cwnd / SRTT, ~10 segments, and a partial one waits for the ACK due within 1 ms, so
/// the flow leaves in back-to-back groups instead of ACK-clocked pairs. Behind CoDel the k-th
/// segment of a group waits k − 1 serialization times (0.12 ms): at most ~0.54 ms more mean
/// sojourn if every group were whole. Linux 6.18 in the validate cell
/// `reno-codel-b2-rtt40-loss0-f1-r100`: 1.62 ms; the simulator 0.85 ms without deferral.
#[test]
fn tso_deferral_sends_in_groups_at_high_rates() {
    let sojourn = |on: bool| {
        let s = reno_with(
            "tso_defer",
            on,
            ("12s", "4s"),
            r#"{ rate = "100Mbps", delay = "20ms" }"#,
            r#"{ kind = "codel", limit = "1000000B" }"#,
        );
        (f(&s, "bottleneck.mean_sojourn_ms"), f(&s, "flows.0.goodput_mbps"))
    };
    let (off, gp_off) = sojourn(false);
    let (on, gp_on) = sojourn(true);
    eprintln!("mean sojourn: off {off:.3} ms, on {on:.3} ms; goodput {gp_off:.2} / {gp_on:.2}");
    assert!(on - off > 0.15 && on - off < 0.6, "deferral adds {:.3} ms", on - off);
    assert!((gp_on - gp_off).abs() < 0.05 * gp_off, "goodput {gp_off:.2} → {gp_on:.2}");
}

/// Linux's PSH flag and the receiver's quick ACK of it (`tcp.psh`). In the validate cell
/// `reno-droptail-b0.5-rtt40-loss1-f1` (10 Mbit/s, 1 % loss) Linux 6.18 marks 41 % of its data
/// segments (the last of each 2-segment skb) and its receiver acknowledges a lone segment in
/// 12.7 % of its ACKs, so no segment waits 40 ms for the delayed-ACK timer: RTT p95 46.7 ms
/// over the 40 ms path. Without the rule the simulator's lone segments wait (1.4 % single-
/// segment ACKs, p95 59.7 ms); with it, 9.1 % and 44.9 ms. The bounds sit between the two
/// (the path's 40 ms plus a delayed ACK would be 80 ms; a quarter of that margin each side).
#[test]
fn psh_segments_are_acknowledged_at_once_under_random_loss() {
    let rtt = |on: bool| {
        let s = reno_with(
            "psh",
            on,
            ("30s", "5s"),
            r#"{ rate = "10Mbps", delay = "20ms", loss = 0.01 }"#,
            r#"{ kind = "droptail", limit = "25000B" }"#,
        );
        (f(&s, "flows.0.rtt_p95_ms"), f(&s, "flows.0.goodput_mbps"))
    };
    let (off, gp_off) = rtt(false);
    let (on, gp_on) = rtt(true);
    eprintln!("RTT p95: off {off:.1} ms, on {on:.1} ms; goodput {gp_off:.2} / {gp_on:.2}");
    assert!(on < 50.0, "with psh: p95 {on:.1} ms (Linux 46.7)");
    assert!(off > 52.0, "without: p95 {off:.1} ms");
    assert!(gp_on >= gp_off, "goodput {gp_off:.2} → {gp_on:.2} (Linux 3.63)");
}
