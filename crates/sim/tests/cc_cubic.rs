//! CUBIC in the full simulator against RFC 9438: the window after a loss follows the cubic
//! with the right K, the mean window under random loss matches the response function, and
//! on a short-RTT, low-BDP path the Reno-friendly region makes CUBIC behave like Reno.

use crate::cc_util;
use cc_util::run;

const MSS: f64 = 1448.0;
const C: f64 = 0.4;
const BETA: f64 = 0.7;

/// One loss, then a full concave-convex epoch. 200 Mbit/s, 100 ms base RTT (BDP ≈ 1670
/// segments), a 300-packet buffer: slow start overflows it once (a burst of losses repaired
/// in one SACK recovery, so one reduction), at a window (≈ 1240) below the BDP, so the epoch
/// runs on an empty queue and the ACK clock is the base RTT throughout. The window is
/// sampled every 10 ms for 16 s (~180 k packets, ~0.3 s of wall time).
#[test]
fn window_after_a_loss_follows_the_cubic_with_the_rfc_9438_k() {
    let sc = r#"
        duration = "16s"
        metrics = { interval = "10ms" }
        [topology]
        bottleneck = { rate = "200Mbps", delay = "40ms" }
        bottleneck_queue = { limit = "300p" }
        access = { rate = "1Gbps", delay = "5ms" }
        [tcp]
        rcvbuf = "64MB"
        [[flows]]
        cc = "cubic"
    "#;
    let r = run(sc, None, true);
    let t = r.num("t_s");
    let cwnd: Vec<f64> = r.num("cwnd_bytes").iter().map(|c| c / MSS).collect();
    let ssthresh: Vec<f64> = r.num("ssthresh_bytes").iter().map(|c| c / MSS).collect();
    let ca = r.text("ca_state");
    assert_eq!(r.f("flows.0.recoveries"), 1.0, "exactly one congestion event");
    assert_eq!(r.f("flows.0.timeouts"), 0.0);

    // The reduction: ssthresh = ⌊β·W_max⌋, so W_max is known to within one segment.
    let i_loss = ssthresh.iter().position(|&s| s > 0.0).expect("a loss");
    let s = ssthresh[i_loss];
    let w_max = (s / BETA).ceil();
    // The epoch starts at the first congestion-avoidance ACK after recovery, at cwnd = ssthresh
    // (PRR may end recovery a little below it; slow start then closes the gap in a round).
    let i0 =
        (i_loss..t.len()).find(|&i| ca[i] == "open" && cwnd[i] >= s - 2.0).expect("recovery ends");
    let t0 = t[i0];
    let w0 = cwnd[i0];
    assert!((w0 - s).abs() <= 2.0, "epoch starts at ssthresh: cwnd {w0} vs {s}");
    // RFC 9438 Fig. 2: K = ∛((W_max − cwnd_epoch)/C) ≈ 9.76 s here.
    let k = ((w_max - s) / C).cbrt();
    // Linux evaluates the curve one minimum RTT ahead of the epoch time.
    let d_min =
        r.num("rtt_ms").iter().cloned().filter(|x| x.is_finite()).fold(f64::MAX, f64::min) / 1e3;
    assert!((0.100..0.102).contains(&d_min), "min RTT {d_min}");
    let model = |tt: f64| C * (tt - t0 + d_min - k).powi(3) + w_max;
    let slope = |tt: f64| 3.0 * C * (tt - t0 + d_min - k).powi(2);
    let mut worst: (f64, f64, f64) = (0.0, 0.0, 0.0);
    for i in i0..t.len() {
        // Tolerance: per ACK cwnd grows by 1/cnt = (target − cwnd)/cwnd, so it closes the gap
        // to the target by a factor e per RTT and trails a moving target by about one RTT
        // (0.1 s) of growth; 1.5 RTT covers the 10 ms sampling and the transient as the epoch
        // starts. Linux rounds the cubic term down to whole segments: 2 more segments.
        let tol = slope(t[i]) * 0.15 + 2.0;
        let err = cwnd[i] - model(t[i]);
        if err.abs() / tol > worst.0 {
            worst = (err.abs() / tol, t[i] - t0, err);
        }
        assert!(
            err.abs() <= tol,
            "t = {:.2} s: cwnd {} vs W(t) {:.1} (tolerance {tol:.1})",
            t[i],
            cwnd[i],
            model(t[i])
        );
    }
    eprintln!("cubic: W_max {w_max}, cwnd_epoch {w0}, K {k:.3} s, worst error {:.2} of tolerance ({:+.1} segments at {:.2} s)", worst.0, worst.2, worst.1);
    // K itself: the window passes W_max − 10 % of the reduction at K − ∛(0.1·(W_max − cwnd_epoch)/C)
    // (≈ 4.5 s into the epoch). An error of 0.25 s in K (or RFC 8312's K = ∛(W_max·β/C), off
    // by 3.5 s) would move this crossing by as much.
    let level = w_max - 0.1 * (w_max - s);
    let t_cross = t[(i0..t.len()).find(|&i| cwnd[i] >= level).expect("reaches the level")] - t0;
    let expected = k - (0.1 * (w_max - s) / C).cbrt() - d_min;
    assert!(
        (t_cross - expected).abs() < 0.25,
        "crossing after {t_cross:.2} s, expected {expected:.2} s (K = {k:.2})"
    );
    // The window stays in the concave region until t ≈ K, then turns convex.
    let labels = r.text("cc_state");
    let i_convex = (i0..t.len()).find(|&i| labels[i] == "convex").expect("convex region reached");
    assert!((t[i_convex] - t0 - (k - d_min)).abs() < 0.1, "convex from {:.2} s", t[i_convex] - t0);
}

/// RFC 9438 §5.1: under a loss probability p, CUBIC's mean window is
/// W = ∜(C(3+β)/(4(1−β))) · RTT^¾ / p^¾ segments, when that exceeds the Reno-friendly window
/// sqrt(α(1+β)/(2(1−β)p)) = sqrt(1.5/p) (α = 3(1−β)/(1+β)). p = 10⁻⁴ and RTT = 100 ms:
/// W ≈ 187 (friendly 122), i.e. ~22 Mbit/s on a 100 Mbit/s bottleneck that never queues. The mean window is
/// goodput × RTT. Tolerance ±15 %: the model assumes periodic losses, the simulation draws
/// them independently per packet (exponential loss spacing, several losses in one window
/// count once); over 4 seeds × 290 s there are ≈ 200 loss events, each seed's mean varies by
/// ±8 %, so the 4-seed mean has a standard error near 4 %. About 2 M packets, ~2 s.
#[test]
fn mean_window_under_random_loss_matches_the_response_function() {
    let sc = r#"
        duration = "300s"
        warmup = "10s"
        [topology]
        bottleneck = { rate = "100Mbps", delay = "40ms", loss = 0.0001 }
        bottleneck_queue = { limit = "1000p" }
        access = { rate = "1Gbps", delay = "5ms" }
        [tcp]
        rcvbuf = "64MB"
        [[flows]]
        cc = "cubic"
    "#;
    let p: f64 = 1e-4;
    let rtt: f64 = 0.1;
    let model =
        (C * (3.0 + BETA) / (4.0 * (1.0 - BETA))).powf(0.25) * rtt.powf(0.75) / p.powf(0.75);
    let friendly = (1.5 / p).sqrt();
    assert!(model > friendly, "the test must sit in the cubic region");
    let seeds = [1u64, 2, 3, 4];
    let windows: Vec<f64> = seeds
        .iter()
        .map(|&s| {
            let r = run(sc, Some(s), false);
            r.f("flows.0.goodput_mbps") * 1e6 * r.f("flows.0.rtt_mean_ms") / 1e3 / (MSS * 8.0)
        })
        .collect();
    let mean = windows.iter().sum::<f64>() / windows.len() as f64;
    eprintln!("cubic response: windows {windows:.1?}, mean {mean:.1}, RFC 9438 {model:.1}, friendly {friendly:.1}");
    assert!((mean / model - 1.0).abs() < 0.15, "mean window {mean:.1} vs RFC 9438 {model:.1}");
}

/// RFC 9438 §4.3: where the cubic grows slower than Reno would (short RTT, small window),
/// CUBIC follows its Reno estimate (AIMD with α = 3(1−β)/(1+β), β = 0.7, which has Reno's
/// average rate). 10 ms RTT, 1 % random loss: Reno's window is ~12 segments, the cubic's
/// ~1. CUBIC must get Reno's goodput (same SACK recovery) within ±20 % — the AIMD emulation
/// is exact only for periodic losses and its epoch starts after recovery, which costs a few
/// per cent — and most of its congestion-avoidance time is labelled "friendly"; without the
/// friendly region it would get a fraction of that. 2 seeds × 120 s each, ~1 s in all.
#[test]
fn short_rtt_low_bdp_cubic_behaves_like_reno() {
    let sc = |cc: &str, extra: &str, seed: u64| {
        format!(
            r#"
            duration = "120s"
            warmup = "5s"
            seed = {seed}
            [topology]
            bottleneck = {{ rate = "100Mbps", delay = "2ms", loss = 0.01 }}
            bottleneck_queue = {{ limit = "1000p" }}
            access = {{ rate = "1Gbps", delay = "1.5ms" }}
            [[flows]]
            cc = "{cc}"
            {extra}
            "#
        )
    };
    let mut cubic = 0.0;
    let mut reno = 0.0;
    let mut pure = 0.0;
    let mut friendly = 0usize;
    let mut ca = 0usize;
    for seed in [1, 2] {
        let r = run(&sc("cubic", "", seed), None, true);
        cubic += r.f("flows.0.goodput_mbps");
        for s in r.text("cc_state") {
            if s != "slow_start" {
                ca += 1;
                friendly += (s == "friendly") as usize;
            }
        }
        reno += run(&sc("newreno", "tcp = { recovery = \"sack\" }", seed), None, false)
            .f("flows.0.goodput_mbps");
        pure += run(&sc("cubic", "cc_params = { tcp_friendliness = false }", seed), None, false)
            .f("flows.0.goodput_mbps");
    }
    let share = friendly as f64 / ca as f64;
    eprintln!(
        "friendly region: cubic {:.2}, newreno {:.2}, cubic without it {:.2} Mbit/s; {:.0} % friendly",
        cubic / 2.0,
        reno / 2.0,
        pure / 2.0,
        share * 100.0
    );
    assert!((cubic / reno - 1.0).abs() < 0.2, "cubic {cubic:.2} vs newreno {reno:.2}");
    assert!(share > 0.5, "friendly share {share:.2}");
    assert!(pure < 0.4 * cubic, "without the friendly region: {pure:.2} vs {cubic:.2}");
}
