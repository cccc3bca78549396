//! Scalable congestion control over ECN (issue 13, L4S): DCTCP (RFC 8257) and TCP Prague
//! (RFC 9331) against a step-marking queue, and Prague's fall-back on a classic-ECN AQM.
//!
//! The step queue is `kind = "step"`: every ECN-capable packet that finds more than K packets
//! queued is marked CE (RFC 8257 §3.1's AQM).

use crate::common;
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
    let g: Vec<String> =
        (0..n).map(|i| format!("{:.1}", f(s, &format!("flows.{i}.goodput_mbps")))).collect();
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
    for (name, extra) in
        [("classic feedback", ""), ("accecn feedback", "tcp = { ecn = \"accecn\" }\n")]
    {
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
/// at full utilisation (measured: 0.88 ms mean sojourn, 100 %), no loss.
#[test]
fn prague_keeps_a_low_queue_at_full_utilisation_on_a_step_aqm() {
    let s = run(&dumbbell(&step(8), &flows("prague", 2)));
    report("prague step", &s);
    assert!(
        f(&s, "bottleneck.mean_sojourn_ms") < 1.5,
        "sojourn {:.2} ms",
        f(&s, "bottleneck.mean_sojourn_ms")
    );
    assert!(f(&s, "bottleneck.utilization_pct") >= 95.0);
    assert_eq!(f(&s, "bottleneck.drops"), 0.0);
    assert!(f(&s, "fairness.jain_goodput") > 0.95);
}

/// On a classic-ECN AQM (RED, CoDel) Prague detects the standing queue and falls back to a
/// Reno-like response, so it shares with CUBIC within a factor 2 (measured, CUBIC/Prague:
/// 54/43 Mbit/s on RED, 48/48 on CoDel). Without the fall-back it takes almost everything (93/3 on RED).
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
    let s = run(&dumbbell(
        &classic("red"),
        &cubic_vs_prague("cc_params = { classic_fallback = false }\n"),
    ));
    let (cubic, prague) = goodputs(&s);
    assert!(
        prague > 5.0 * cubic,
        "without fall-back the scalable response starves CUBIC: {prague:.1} vs {cubic:.1}"
    );
}

/// RTT independence (`rtt_independence = "rate"`, target 25 ms): a 5 ms flow grows by
/// (5/25)² MSS per RTT, one MSS per target RTT, so it no longer starves a 40 ms flow on a
/// shared step queue (measured: 91.1/5.4 Mbit/s without, 59.8/36.8 with; queue 0.8 ms).
#[test]
fn prague_rtt_independence_shares_between_short_and_long_rtts() {
    let pair = |mode: &str| {
        let params =
            format!("cc_params = {{ rtt_independence = \"{mode}\", rtt_transition = 0 }}\n");
        let fl = format!("[[flows]]\ncc = \"prague\"\nrtt = \"5ms\"\n{params}[[flows]]\ncc = \"prague\"\nrtt = \"40ms\"\n{params}");
        let s = run(&dumbbell(&step(8), &fl));
        report(mode, &s);
        assert!(f(&s, "bottleneck.utilization_pct") >= 95.0, "{mode}");
        assert!(f(&s, "bottleneck.mean_sojourn_ms") < 1.5, "{mode}");
        goodputs(&s)
    };
    let (short, long) = pair("off");
    assert!(
        short > 10.0 * long,
        "without RTT independence the 5 ms flow dominates: {short:.1} vs {long:.1}"
    );
    let (short, long) = pair("rate");
    assert!(short < 2.0 * long, "RTT-independent: {short:.1} vs {long:.1} Mbit/s");
}

/// RFC 9332 at 100 Mbit/s (base RTT 10 ms): one Prague flow (ECT(1), L queue) beside one
/// CUBIC flow (Not-ECT, C queue) on DualPI2 with its defaults. The L4S flow keeps its
/// queueing delay near the 1 ms step (its RTT p95 within 2 ms of the base RTT) while the
/// CUBIC flow sits near the classic target (15 ms; bounds 5–25 ms on its mean RTT above
/// base), and the coupling k = 2 with Prague's RTT independence (Linux's default) keeps their
/// rates within a factor of 2 (measured: queueing 0.49 ms p95 vs 14.8 ms mean, 55.7 vs
/// 40.8 Mbit/s; without RTT independence 72.4 vs 24.2: k = 2 balances windows, and the L4S
/// flow's RTT is 2.5x shorter).
#[test]
fn dualpi2_separates_prague_from_cubic_and_couples_their_rates() {
    let fl = flows("cubic", 1) + &flows("prague", 1);
    let s = run(&dumbbell(r#"{ kind = "dualpi2", limit = "1000p" }"#, &fl));
    report("dualpi2", &s);
    let base = 10.0;
    let cubic_q = f(&s, "flows.0.rtt_mean_ms") - base;
    let prague_p95 = f(&s, "flows.1.rtt_p95_ms") - base;
    eprintln!("cubic mean queueing {cubic_q:.2} ms, prague p95 queueing {prague_p95:.2} ms");
    assert!(prague_p95 <= 2.0, "L4S flow's p95 queueing delay {prague_p95:.2} ms");
    assert!((5.0..=25.0).contains(&cubic_q), "classic flow's mean queueing delay {cubic_q:.2} ms");
    let (cubic, prague) = goodputs(&s);
    let ratio = cubic.max(prague) / cubic.min(prague);
    assert!(ratio < 2.0, "prague {prague:.1} vs cubic {cubic:.1} Mbit/s");
    assert!(f(&s, "bottleneck.utilization_pct") >= 95.0);
}
