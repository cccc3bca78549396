//! The UDP constant-bit-rate source: exact rates, one-way delay, and loss when it overloads
//! the bottleneck.

use crate::common;
use common::{f, run};

/// Alone on an idle path, a CBR flow delivers its rate (payload share of the wire bytes) with
/// no loss and a one-way delay of propagation plus three serializations.
#[test]
fn cbr_alone_delivers_its_rate_with_fixed_delay() {
    let s = run(r#"
        duration = "10s"
        [topology]
        bottleneck = { rate = "45Mbps", delay = "40ms" }
        access = { rate = "100Mbps", delay = "1ms" }
        [[flows]]
        transport = "udp"
        rate = "13.5Mbps"
        packet_size = "1472B"
    "#);
    let goodput = f(&s, "flows.0.goodput_mbps");
    // What is still propagating at the end (one one-way delay of 42.4 ms) is not delivered.
    let expected = 13.5 * 1472.0 / 1500.0 * (10.0 - 0.0424) / 10.0;
    assert!((goodput / expected - 1.0).abs() < 0.002, "goodput {goodput} vs {expected}");
    assert_eq!(f(&s, "flows.0.loss_pct"), 0.0);
    let owd = f(&s, "flows.0.owd_mean_ms");
    let ser = 1500.0 * 8.0 * (2.0 / 100e6 + 1.0 / 45e6) * 1e3;
    assert!((owd - (42.0 + ser)).abs() < 0.01, "one-way delay {owd} ms");
    assert!(s["flows"][0]["rtt_mean_ms"].is_null());
    // Every datagram carries 1472 payload bytes.
    assert_eq!(f(&s, "flows.0.datagrams_delivered") * 1472.0, f(&s, "flows.0.bytes_delivered"));
    assert_eq!(s["flows"][0]["transport"], "udp");
}

/// Offered 2× the bottleneck rate, half the datagrams are dropped at the queue.
#[test]
fn cbr_overload_loses_the_excess() {
    let s = run(r#"
        duration = "20s"
        warmup = "2s"
        [topology]
        bottleneck = { rate = "10Mbps", delay = "10ms" }
        bottleneck_queue = { limit = "50p" }
        access = { rate = "100Mbps", delay = "1ms" }
        [[flows]]
        transport = "udp"
        rate = "20Mbps"
    "#);
    let loss = f(&s, "flows.0.loss_pct");
    assert!((loss - 50.0).abs() < 0.5, "loss {loss}%");
    assert!(f(&s, "bottleneck.utilization_pct") > 99.9);
}

/// TCP shares the link with unresponsive UDP: it takes (most of) what the UDP flow leaves.
#[test]
fn tcp_takes_what_cbr_leaves() {
    let s = run(r#"
        duration = "30s"
        warmup = "5s"
        [topology]
        bottleneck = { rate = "10Mbps", delay = "10ms" }
        bottleneck_queue = { limit = "60KB" }
        access = { rate = "100Mbps", delay = "1ms" }
        [[flows]]
        transport = "udp"
        rate = "3Mbps"
        [[flows]]
        cc = "reno"
        tcp = { recovery = "sack" }
    "#);
    let udp = f(&s, "flows.0.goodput_mbps");
    let tcp = f(&s, "flows.1.goodput_mbps");
    assert!(udp > 2.8, "udp {udp}");
    assert!(tcp > 6.0 && tcp + udp < 10.0, "tcp {tcp} udp {udp}");
}
