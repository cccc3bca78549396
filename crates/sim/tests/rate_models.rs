//! Variable-rate links: a Mahimahi trace and the stochastic cellular model deliver the
//! capacity they offer to a backlogged flow.

use crate::common;
use common::{f, run};

fn backlogged_over(rate: &str, duration: &str) -> serde_json::Value {
    run(&format!(
        r#"
        duration = "{duration}"
        [topology]
        bottleneck = {{ rate = {rate}, reverse_rate = "100Mbps", delay = "20ms" }}
        bottleneck_queue = {{ limit = "3000p" }}
        access = {{ rate = "1Gbps", delay = "1ms" }}
        [[flows]]
        cc = "reno"
        tcp = {{ recovery = "sack" }}
        "#
    ))
}

/// Delivered wire rate of flow 0 (1500-byte packets carry 1448 payload bytes).
fn wire_mbps(s: &serde_json::Value, secs: f64) -> f64 {
    f(s, "flows.0.bytes_delivered") * 1500.0 / 1448.0 * 8.0 / secs / 1e6
}

/// A synthetic trace: 1, 2 or 3 opportunities per millisecond in a 30 ms pattern, with
/// 10 ms gaps; mean = 40 opportunities / 30 ms = 16 Mbit/s.
#[test]
fn synthetic_trace_delivers_its_mean_rate() {
    let dir = std::env::temp_dir().join(format!("bloatlab-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut lines = Vec::new();
    for ms in 1..=30u64 {
        let k = match ms {
            1..=10 => 1,
            11..=20 => 0,
            _ => 3,
        };
        lines.extend(std::iter::repeat_n(ms.to_string(), k));
    }
    let path = dir.join("synthetic.down");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let s = backlogged_over(
        &format!("{{ model = \"trace\", file = {:?} }}", path.to_str().unwrap()),
        "60s",
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let got = wire_mbps(&s, 60.0);
    // The slow start of the first second or so costs under 2 %.
    assert!((got / 16.0 - 1.0).abs() < 0.02, "delivered {got:.3} Mbit/s vs trace mean 16");
    assert!((f(&s, "bottleneck.rate_mbps") - 16.0).abs() < 1e-9);
}

/// A real cellular trace (T-Mobile LTE, 16.703 Mbit/s mean over its 140 s loop, per the
/// traces' README): over two loops a backlogged flow carries the mean within 2 %.
#[test]
fn mahimahi_trace_delivers_its_mean_rate() {
    let path = common::mahimahi_dir().join("TMobile-LTE-short.down");
    let s = backlogged_over(
        &format!("{{ model = \"trace\", file = {:?} }}", path.to_str().unwrap()),
        "280s",
    );
    let got = wire_mbps(&s, 280.0);
    assert!((got / 16.703 - 1.0).abs() < 0.02, "delivered {got:.3} Mbit/s vs trace mean 16.703");
}

/// The stochastic model: a symmetric good/weak regime chain gives a long-run mean of
/// (min + max) / 2; a backlogged flow uses nearly all the capacity offered.
#[test]
fn cellular_model_offers_its_mean_and_is_used() {
    let s = backlogged_over(
        r#"{ model = "cellular", min = "3.1Mbps", max = "9.3Mbps", interval = "10ms", dwell = "2s" }"#,
        "300s",
    );
    let got = wire_mbps(&s, 300.0);
    // 150 regime periods of ~2 s: the good share has sd ≈ 4 %, so ±10 % on the mean.
    assert!((got / 6.2 - 1.0).abs() < 0.10, "delivered {got:.3} Mbit/s vs model mean 6.2");
    assert!(
        f(&s, "bottleneck.utilization_pct") > 97.0,
        "utilization {}",
        f(&s, "bottleneck.utilization_pct")
    );
}

#[test]
fn bad_rate_models_are_rejected_with_their_paths() {
    use bloatlab_sim::{run_toml, RunError, RunOptions};
    let err = |rate: &str| {
        match run_toml(
        &format!("duration = \"1s\"\n[topology]\nbottleneck = {{ rate = {rate}, delay = \"1ms\" }}\n[[flows]]\ncc = \"reno\"\n"),
        &RunOptions::default(),
    ) {
        Err(RunError::Invalid(e)) => (e.path, e.message),
        other => panic!("expected an invalid scenario, got {other:?}"),
    }
    };
    let (p, m) = err(r#"{ model = "trace", file = "/nonexistent/x.down" }"#);
    assert_eq!(p, "topology.bottleneck.rate.file");
    assert!(m.contains("/nonexistent/x.down"), "{m}");
    let (p, _) = err(r#"{ model = "cellular", min = "9Mbps", max = "3Mbps" }"#);
    assert_eq!(p, "topology.bottleneck.rate.min");
    let (p, m) = err(r#"{ model = "warp" }"#);
    assert_eq!(p, "topology.bottleneck.rate.model");
    assert!(m.contains("trace") && m.contains("cellular"), "{m}");
}
