//! Talau, Fonseca & Wille 2019 (EWT), scenario 1: 4 Mbit/s everywhere, 360 ms bottleneck
//! RTT, 5 ms access RTTs, 97 kB of gateway memory, CUBIC, 5 MB files starting uniformly in
//! [1 s, 8 s] (Tables 3 and 4).
//!
//! Choices: "TCP segment size 1458 bytes" is ns-3's `TcpSocket::SegmentSize`, i.e. the MSS
//! (payload), so mss = 1458 B (1510 B on the wire with bloatlab's 52 B of headers); the
//! receive buffer is ns-3's default `RcvBufSize` of 131072 B, which matters because EWT scales
//! the advertised window; "RTT 360 ms" of a link is twice its one-way delay.
//!
//! The congestion levels are RFC 7928's, found as the paper did — by adding drop-tail flows
//! until the loss rate reaches the level — but in bloatlab rather than ns-3 (the paper's
//! Table 2 counts belong to its simulator): 2 flows lose nothing, 3 flows lose ≈ 0.5 %
//! ("medium"; measured 0.6–1.1 % over seeds 1–3), 4 flows ≈ 1 % ("heavy"; 0.8–1.7 %). No
//! flow count gives the "mild" 0.1 %.

use crate::common;
use common::{f, run_seeded};
use serde_json::Value;

const SEEDS: [u64; 3] = [1, 2, 3];
const MEDIUM: u32 = 3;

fn talau1(queue: &str, gateway: &str, flows: u32) -> String {
    format!(
        r#"
        name = "talau2019-s1"
        duration = "90s"
        [topology]
        bottleneck = {{ rate = "4Mbps", delay = "180ms" }}
        bottleneck_queue = {queue}
        access = {{ rate = "4Mbps", delay = "2.5ms" }}
        {gateway}
        [tcp]
        mss = "1458B"
        rcvbuf = "131072B"
        [[flows]]
        cc = "cubic"
        count = {flows}
        size = "5MB"
        start = {{ uniform = ["1s", "8s"] }}
        "#
    )
}

const DROPTAIL: &str = r#"{ kind = "droptail", limit = "97KB" }"#;
/// Table 3: min_th = memory/12, max_th = memory/4, q_w = 0.002, max_p = 0.02 — the defaults.
const RED: &str = r#"{ kind = "red", limit = "97KB" }"#;
const ARED: &str = r#"{ kind = "ared", limit = "97KB" }"#;
const EWT: &str = r#"gateway = { kind = "ewt", start = "29KB" }"#;

fn runs(queue: &str, gateway: &str, flows: u32) -> Vec<Value> {
    SEEDS.iter().map(|&s| run_seeded(&talau1(queue, gateway, flows), Some(s))).collect()
}

/// Mean file-transfer latency over the flows of one run (all must have completed).
fn mean_fct(s: &Value) -> f64 {
    let flows = s["flows"].as_array().unwrap();
    let fcts: Vec<f64> =
        flows.iter().map(|fl| fl["fct_s"].as_f64().expect("every transfer completes")).collect();
    fcts.iter().sum::<f64>() / fcts.len() as f64
}

fn max_fct(s: &Value) -> f64 {
    s["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|fl| fl["fct_s"].as_f64().unwrap())
        .fold(0.0, f64::max)
}

fn avg(v: &[Value], g: impl Fn(&Value) -> f64) -> f64 {
    v.iter().map(g).sum::<f64>() / v.len() as f64
}

/// The calibration above, and the paper's finding for the AQMs: at the medium level
/// drop-tail, RED and ARED all lose segments (in every seed).
#[test]
fn medium_level_is_calibrated_and_droptail_red_ared_lose() {
    for s in runs(DROPTAIL, "", MEDIUM - 1) {
        assert_eq!(
            f(&s, "bottleneck.drops"),
            0.0,
            "{} drop-tail flows should not lose",
            MEDIUM - 1
        );
    }
    let dt = runs(DROPTAIL, "", MEDIUM);
    let loss = avg(&dt, |s| f(s, "bottleneck.drop_pct"));
    eprintln!("drop-tail loss at {MEDIUM} flows: {loss:.3} % (mean of {} seeds)", SEEDS.len());
    // Medium ≈ 0.5 %; [0.3, 1.5] keeps it clear of "none" and of well past "heavy".
    assert!((0.3..=1.5).contains(&loss), "drop-tail loss {loss:.3} %");
    for (name, q) in [("drop-tail", DROPTAIL), ("RED", RED), ("ARED", ARED)] {
        for (seed, s) in SEEDS.iter().zip(runs(q, "", MEDIUM)) {
            let drops = f(&s, "bottleneck.drops");
            eprintln!("{name} seed {seed}: {drops} drops, mean FCT {:.2} s", mean_fct(&s));
            assert!(drops > 0.0, "{name} lost nothing with seed {seed}");
        }
    }
}

/// EWT (S_t = 29 kB) loses no segment at the medium level, and its transfers are not slower
/// than drop-tail's: its last transfer ends no later (EWT shares the link fairly, drop-tail
/// recovers losses), and its mean latency is within 5 % of drop-tail's. Why 5 %: both keep
/// the link busy until the work is done, so with equal files and nearly equal starts the
/// mean latency differs only by the order in which transfers end — fair EWT ends them
/// together, drop-tail's unfairness lets some end early, which lowers the mean (measured
/// +1.7–2 %). Drop-tail's losses cost it at the end, not on average, at this level.
///
/// This needs the rewrite where the gateway is (on arrival at R1 after the reverse bottleneck
/// link) and window scaling rounded up, both in world.rs (docs/gateway.md).
#[test]
fn ewt_loses_nothing_at_the_medium_level() {
    let ewt = runs(DROPTAIL, EWT, MEDIUM);
    let dt = runs(DROPTAIL, "", MEDIUM);
    for (seed, s) in SEEDS.iter().zip(&ewt) {
        assert_eq!(f(s, "bottleneck.drops"), 0.0, "EWT dropped with seed {seed}");
        for fl in s["flows"].as_array().unwrap() {
            assert_eq!(
                fl["loss_pct"].as_f64().unwrap(),
                0.0,
                "EWT flow lost a segment (seed {seed})"
            );
        }
    }
    for (seed, s) in SEEDS.iter().zip(&dt) {
        assert!(f(s, "bottleneck.drops") > 0.0, "drop-tail lost nothing with seed {seed}");
    }
    let (e_mean, d_mean) = (avg(&ewt, mean_fct), avg(&dt, mean_fct));
    let (e_max, d_max) = (avg(&ewt, max_fct), avg(&dt, max_fct));
    eprintln!(
        "mean FCT: EWT {e_mean:.2} s, drop-tail {d_mean:.2} s; last FCT: EWT {e_max:.2} s, drop-tail {d_max:.2} s"
    );
    assert!(
        e_max <= d_max,
        "EWT's last transfer ends at {e_max:.2} s, drop-tail's at {d_max:.2} s"
    );
    assert!(e_mean <= 1.05 * d_mean, "EWT mean FCT {e_mean:.2} s vs drop-tail {d_mean:.2} s");
}
