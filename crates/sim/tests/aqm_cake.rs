//! CAKE at scale: host isolation and the built-in shaper.

use crate::common;
use common::{f, run};

/// triple-isolate: host A sends 1 flow, host B 8 flows (each to its own receiver). CAKE
/// divides a flow's quantum by its source host's active flows, so each host gets about half
/// of the link (per-flow fairness would give A 1/9). Tolerance ±8 %: CUBIC's sawtooth and
/// COBALT drops make the per-round shares wobble; over 20 s the mean is much closer.
#[test]
fn triple_isolate_shares_between_hosts() {
    let s = run(r#"
        duration = "30s"
        warmup = "10s"
        [topology]
        bottleneck = { rate = "20Mbps", delay = "5ms" }
        bottleneck_queue = { kind = "cake" }
        access = { rate = "1Gbps", delay = "10ms" }
        [[flows]]
        cc = "cubic"
        host = "A"
        [[flows]]
        cc = "cubic"
        host = "B"
        count = 8
    "#);
    let a = f(&s, "flows.0.goodput_mbps");
    let b: f64 = (1..9).map(|i| f(&s, &format!("flows.{i}.goodput_mbps"))).sum();
    let share = a / (a + b);
    assert!((share - 0.5).abs() < 0.08, "host A {a} Mbit/s, host B {b} Mbit/s: share {share}");
    // The per-flow mode gives A one ninth instead.
    let flows = run(r#"
        duration = "30s"
        warmup = "10s"
        [topology]
        bottleneck = { rate = "20Mbps", delay = "5ms" }
        bottleneck_queue = { kind = "cake", isolation = "flows" }
        access = { rate = "1Gbps", delay = "10ms" }
        [[flows]]
        cc = "cubic"
        host = "A"
        [[flows]]
        cc = "cubic"
        host = "B"
        count = 8
    "#);
    let a = f(&flows, "flows.0.goodput_mbps");
    let total: f64 = (0..9).map(|i| f(&flows, &format!("flows.{i}.goodput_mbps"))).sum();
    assert!((a / total - 1.0 / 9.0).abs() < 0.04, "flows mode: A's share {}", a / total);
}

/// The shaper holds its rate: 10 Mbit/s set on a 100 Mbit/s link with 18 B of per-packet
/// overhead, fed 20 Mbit/s of UDP in 1500 B datagrams (so the shaper is never idle). Each is
/// charged 1518 B, so the link's busy time × 100 Mbit/s × 1518/1500 must be 10 Mbit/s within
/// 1 %. (With a few TCP flows the shaped link idles after drops, which measures the flows,
/// not the shaper.)
#[test]
fn shaper_holds_the_set_rate_with_overhead() {
    let s = run(r#"
        duration = "20s"
        warmup = "2s"
        [topology]
        bottleneck = { rate = "100Mbps", delay = "5ms" }
        bottleneck_queue = { kind = "cake", bandwidth = "10Mbps", overhead = 18 }
        access = { rate = "1Gbps", delay = "10ms" }
        [[flows]]
        transport = "udp"
        rate = "20Mbps"
        packet_size = "1472B"
    "#);
    let wire_mbps = f(&s, "bottleneck.utilization_pct") / 100.0 * 100.0;
    let shaped = wire_mbps * 1518.0 / 1500.0;
    assert!((shaped / 10.0 - 1.0).abs() < 0.01, "shaped rate {shaped} Mbit/s (wire {wire_mbps})");
    // Without the overhead the same shaper lets 10 Mbit/s of wire bytes through: the
    // compensation is what lowers the wire rate by 18/1518.
    assert!(wire_mbps < 10.0 * 1500.0 / 1518.0 * 1.005, "{wire_mbps}");
}
