//! DCCP under random loss (the DCCP-BBR paper's Fig. 7 shape): on a 100 Mbit/s, 100 ms RTT
//! path with a 4000-packet drop-tail queue, CCID2 collapses at about 1 % loss, BBR's
//! throughput collapses above about 20 %, and the loss-adaptive `bbr-adaptive` holds out about
//! 10 % further.
//!
//! Runs are 15 s (the paper's experiments are short too); each takes about 0.1 s in release.

use crate::common;
use common::{f, run};

fn scenario(cc: &str, loss: f64) -> String {
    format!(
        r#"
        duration = "15s"
        [topology]
        bottleneck = {{ rate = "100Mbps", delay = "48ms", loss = {loss} }}
        bottleneck_queue = {{ kind = "droptail", limit = "4000p" }}
        access = {{ rate = "1Gbps", delay = "1ms" }}
        [[flows]]
        transport = "dccp"
        cc = "{cc}"
    "#
    )
}

fn goodput(cc: &str, loss: f64) -> f64 {
    let s = run(&scenario(cc, loss));
    assert_eq!(s["flows"][0]["transport"], "dccp");
    assert_eq!(s["flows"][0]["cc"], cc);
    // The loss rate the flow saw is the configured one (the queue never overflows here
    // except in CCID2's loss-free slow start).
    if loss > 0.0 {
        let seen = f(&s, "flows.0.loss_pct") / 100.0;
        assert!((seen - loss).abs() < 0.02 + loss * 0.1, "{cc} at {loss}: saw {seen}");
    }
    f(&s, "flows.0.goodput_mbps")
}

const GRID: [f64; 9] = [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4];

/// The goodput a controller keeps at each loss rate, as a fraction of what the loss itself
/// leaves of its loss-free goodput: g(p) / ((1 − p) · g(0)). A controller whose model is
/// not hurt by random loss keeps about 1 (BBR-style rate control pays a little more: it paces
/// at the delivered rate, which is (1 − p) of what it sends).
fn retained(cc: &str) -> Vec<f64> {
    let g: Vec<f64> = GRID.iter().map(|&p| goodput(cc, p)).collect();
    eprintln!("{cc}: goodput (Mbit/s) at {GRID:?}: {g:.1?}");
    GRID.iter().zip(&g).map(|(&p, &x)| x / ((1.0 - p) * g[0])).collect()
}

/// The loss rate at which `r` first falls below `level`, interpolated linearly on the grid.
fn collapse_at(r: &[f64], level: f64) -> f64 {
    for i in 1..r.len() {
        if r[i] < level {
            let (a, b) = (r[i - 1], r[i]);
            return GRID[i - 1] + (GRID[i] - GRID[i - 1]) * (a - level) / (a - b);
        }
    }
    f64::INFINITY
}

#[test]
fn ccid2_collapses_at_one_percent_loss() {
    let g0 = goodput("ccid2", 0.0);
    // Loss-free, CCID2 fills the link (slow start overshoots the 4000-packet queue once).
    assert!(g0 > 80.0, "loss-free ccid2 {g0}");
    // TCP-like AIMD on a 833-packet BDP: the Mathis rate at 1 % is ~12 packets per RTT, about
    // 1.4 Mbit/s. Allow up to 5 % of the link.
    let g1 = goodput("ccid2", 0.01);
    assert!(g1 < 5.0, "ccid2 at 1 %: {g1}");
    let g10 = goodput("ccid2", 0.1);
    assert!(g10 < 1.0, "ccid2 at 10 %: {g10}");
}

#[test]
fn bbr_collapses_above_20_percent_and_adaptive_holds_10_percent_further() {
    let bbr = retained("bbr");
    let ada = retained("bbr-adaptive");
    eprintln!("retained bbr {bbr:.2?}\nretained bbr-adaptive {ada:.2?}");
    // Up to 20 % loss both keep most of their rate (measured: ≥ 0.78 for both). The
    // 1.25 probe phase still lifts the estimate while 1.25 · (1 − p) ≥ 1.
    for (i, &p) in GRID.iter().enumerate().filter(|(_, &p)| p <= 0.2) {
        assert!(bbr[i] > 0.7, "bbr at {p}: {}", bbr[i]);
        assert!(ada[i] > 0.7, "bbr-adaptive at {p}: {}", ada[i]);
    }
    // Above 20 %, BBR's probe phase no longer refreshes the estimate and its rate decays
    // round after round (measured 0.37 at 30 %, 0.23 at 40 %).
    for (i, &p) in GRID.iter().enumerate().filter(|(_, &p)| p >= 0.3) {
        assert!(bbr[i] < 0.45, "bbr at {p}: {}", bbr[i]);
    }
    // bbr-adaptive's probe gain 1/(1 − LR) holds the estimate up to 30 % (measured 0.67 at
    // 30 %, 1.8× BBR) and only 1.5 is left above, enough up to 1/3.
    let i30 = GRID.iter().position(|&p| p == 0.3).unwrap();
    assert!(ada[i30] > 0.55, "bbr-adaptive at 30 %: {}", ada[i30]);
    assert!(ada[i30] > 1.4 * bbr[i30], "bbr-adaptive {} vs bbr {} at 30 %", ada[i30], bbr[i30]);
    // Where each collapses: the loss at which it keeps less than 60 % (interpolated on the
    // grid). Measured: BBR about 0.23, bbr-adaptive about 0.34. The paper: 20 % and ~10 %
    // more; allow 0.17–0.27 for BBR and 5–15 points more for bbr-adaptive.
    let (cb, ca) = (collapse_at(&bbr, 0.6), collapse_at(&ada, 0.6));
    eprintln!("collapse: bbr {cb:.3}, bbr-adaptive {ca:.3}");
    assert!((0.17..=0.27).contains(&cb), "bbr collapses at {cb}");
    assert!((0.05..=0.15).contains(&(ca - cb)), "bbr-adaptive collapses at {ca}, bbr at {cb}");
}

/// bbr-adaptive's lowered STARTUP gain (2.5) must still get the flow going at the top of the
/// paper's loss range, whatever the loss pattern: 2.5 · (1 − 0.4) = 1.5 ≥ the 1.25 growth
/// STARTUP looks for. (A gain of 2.0 starves the flow at ~1 Mbit/s here for most seeds.)
#[test]
fn adaptive_startup_survives_40_percent_loss() {
    for seed in 1..=3 {
        let s = common::run_seeded(&scenario("bbr-adaptive", 0.4), Some(seed));
        let g = f(&s, "flows.0.goodput_mbps");
        // Measured 19–21 Mbit/s over seeds 1–4.
        assert!(g > 12.0, "seed {seed}: goodput {g}");
    }
}
