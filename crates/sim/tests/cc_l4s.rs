//! Scalable congestion control over ECN (issue 13, L4S): DCTCP (RFC 8257) and TCP Prague
//! (RFC 9331) against a step-marking queue, and Prague's fall-back on a classic-ECN AQM.
//!
//! The step queue is `kind = "step"`: every ECN-capable packet that finds more than K packets
//! queued is marked CE (RFC 8257 §3.1's AQM).

mod common;
use common::{f, run};

/// `n` flows of `cc` over 100 Mbit/s, base RTT 10 ms, behind `queue`.
fn dumbbell(queue: &str, flows: &str) -> String {
    format!(
        r#"
        duration = "30s"
        warmup = "10s"
        [topology]
        bottleneck = {{ rate = "100Mbps", delay = "2ms" }}
        bottleneck_queue = {queue}
        access = {{ rate = "1Gbps", delay = "1.5ms" }}
        {flows}
        "#
    )
}

fn step(k_pkts: u32) -> String {
    format!(r#"{{ kind = "step", limit = "1000p", threshold = "{k_pkts}p" }}"#)
}

fn flows(cc: &str, count: u32) -> String {
    format!("[[flows]]\ncc = \"{cc}\"\ncount = {count}\n")
}

fn report(name: &str, s: &serde_json::Value) {
    let n = s["flows"].as_array().unwrap().len();
    let g: Vec<String> = (0..n).map(|i| format!("{:.1}", f(s, &format!("flows.{i}.goodput_mbps")))).collect();
    eprintln!(
        "{name}: util {:.1}% mean queue {:.0} B ({:.1} pkts) sojourn {:.2} ms p95 {:.2} ms drops {} goodput [{}]",
        f(s, "bottleneck.utilization_pct"),
        f(s, "bottleneck.mean_bytes"),
        f(s, "bottleneck.mean_bytes") / 1500.0,
        f(s, "bottleneck.mean_sojourn_ms"),
        f(s, "bottleneck.p95_sojourn_ms"),
        f(s, "bottleneck.drops"),
        g.join(", ")
    );
}

fn classic(kind: &str) -> String {
    format!(r#"{{ kind = "{kind}", limit = "1000p", ecn = true }}"#)
}

/// CUBIC with classic ECN beside one Prague flow (`prague_params` appended to its table).
fn cubic_vs_prague(prague_params: &str) -> String {
    flows("cubic", 1) + "tcp = { ecn = true }\n" + &flows("prague", 1) + prague_params
}

fn goodputs(s: &serde_json::Value) -> (f64, f64) {
    (f(s, "flows.0.goodput_mbps"), f(s, "flows.1.goodput_mbps"))
}

/// RFC 8257: DCTCP keeps the queue near the marking threshold K at full utilisation
/// (measured: mean 17.1 packets for K = 20, 100 % utilisation, no drop, with classic and
/// with AccECN feedback). Both feedback schemes carry the marked fraction.
#[test]
fn dctcp_holds_the_queue_near_the_step_threshold() {
    let k = 20.0;
    for (name, extra) in [("classic feedback", ""), ("accecn feedback", "tcp = { ecn = \"accecn\" }\n")] {
        let s = run(&dumbbell(&step(20), &(flows("dctcp", 2) + extra)));
        report(name, &s);
        let q = f(&s, "bottleneck.mean_bytes") / 1500.0;
        assert!(f(&s, "bottleneck.utilization_pct") >= 95.0, "{name}: utilisation");
        assert!((0.5 * k..=1.5 * k).contains(&q), "{name}: mean queue {q:.1} packets for K = {k}");
        assert_eq!(f(&s, "bottleneck.drops"), 0.0, "{name}: marks replace drops");
        assert!(f(&s, "fairness.jain_goodput") > 0.95, "{name}: two DCTCP flows share");
    }
}

/// Prague over a shallow step (K = 8 packets ≈ 1 ms at 100 Mbit/s): sub-millisecond queueing
/// at full utilisation (measured: 0.58 ms mean sojourn, 99.0 %), no loss.
#[test]
fn prague_keeps_a_low_queue_at_full_utilisation_on_a_step_aqm() {
    let s = run(&dumbbell(&step(8), &flows("prague", 2)));
    report("prague step", &s);
    assert!(f(&s, "bottleneck.mean_sojourn_ms") < 1.5, "sojourn {:.2} ms", f(&s, "bottleneck.mean_sojourn_ms"));
    assert!(f(&s, "bottleneck.utilization_pct") >= 95.0);
    assert_eq!(f(&s, "bottleneck.drops"), 0.0);
    assert!(f(&s, "fairness.jain_goodput") > 0.95);
}

/// On a classic-ECN AQM (RED, CoDel) Prague detects the standing queue and falls back to a
/// Reno-like response, so it shares with CUBIC within a factor 2 (measured: 52/45 Mbit/s on
/// RED, 51/46 on CoDel). Without the fall-back it takes almost everything (93/3 on RED).
#[test]
fn prague_falls_back_on_a_classic_ecn_bottleneck() {
    for kind in ["red", "codel"] {
        let s = run(&dumbbell(&classic(kind), &cubic_vs_prague("")));
        report(kind, &s);
        let (cubic, prague) = goodputs(&s);
        let ratio = prague.max(cubic) / prague.min(cubic);
        assert!(ratio < 2.0, "{kind}: prague {prague:.1} vs cubic {cubic:.1} Mbit/s");
        assert!(f(&s, "bottleneck.utilization_pct") >= 95.0);
    }
    let s = run(&dumbbell(&classic("red"), &cubic_vs_prague("cc_params = { classic_fallback = false }\n")));
    let (cubic, prague) = goodputs(&s);
    assert!(prague > 5.0 * cubic, "without fall-back the scalable response starves CUBIC: {prague:.1} vs {cubic:.1}");
}

/// RTT independence (`rtt_independence = "rate"`, target 25 ms): a 5 ms flow grows by
/// (5/25)² MSS per RTT, one MSS per target RTT, so it no longer starves a 40 ms flow on a
/// shared step queue (measured: 94.8/1.7 Mbit/s without, 59.8/36.8 with; queue 0.7–0.8 ms).
#[test]
fn prague_rtt_independence_shares_between_short_and_long_rtts() {
    let pair = |mode: &str| {
        let params = format!("cc_params = {{ rtt_independence = \"{mode}\", rtt_transition = 0 }}\n");
        let fl = format!("[[flows]]\ncc = \"prague\"\nrtt = \"5ms\"\n{params}[[flows]]\ncc = \"prague\"\nrtt = \"40ms\"\n{params}");
        let s = run(&dumbbell(&step(8), &fl));
        report(mode, &s);
        assert!(f(&s, "bottleneck.utilization_pct") >= 95.0, "{mode}");
        assert!(f(&s, "bottleneck.mean_sojourn_ms") < 1.5, "{mode}");
        goodputs(&s)
    };
    let (short, long) = pair("off");
    assert!(short > 10.0 * long, "without RTT independence the 5 ms flow dominates: {short:.1} vs {long:.1}");
    let (short, long) = pair("rate");
    assert!(short < 2.0 * long, "RTT-independent: {short:.1} vs {long:.1} Mbit/s");
}
