//! BBRv3 (draft-ietf-ccwg-bbr-04) in the full simulator beside BBR v1 and CUBIC (issue 33's
//! targets): a 100 Mbit/s, 40 ms path with a 2-BDP drop-tail buffer, the same path with 2 %
//! random loss, and a share against CUBIC on a deep buffer.

use crate::cc_util;
use crate::common;
use cc_util::{run, Run};
use common::refused;

/// 100 Mbit/s, base RTT 40 ms (BDP 500 kB ≈ 333 packets of 1500 B), a 667-packet (2-BDP)
/// drop-tail buffer.
fn path(loss: f64, warmup: &str, flows: &str) -> String {
    format!(
        r#"
        duration = "20s"
        warmup = "{warmup}"
        [topology]
        bottleneck = {{ rate = "100Mbps", delay = "15ms", loss = {loss} }}
        bottleneck_queue = {{ limit = "667p" }}
        access = {{ rate = "1Gbps", delay = "5ms" }}
        {flows}
        "#
    )
}

fn one(cc: &str) -> String {
    format!("[[flows]]\ncc = \"{cc}\"\n")
}

struct Fig {
    util: f64,
    delay: f64,
    retrans: f64,
    goodput: f64,
}

fn figures(r: &Run) -> Fig {
    Fig {
        util: r.f("bottleneck.utilization_pct"),
        delay: r.f("bottleneck.mean_sojourn_ms"),
        retrans: r.f("flows.0.retransmits"),
        goodput: r.f("flows.0.goodput_mbps"),
    }
}

fn report(label: &str, f: &Fig) {
    eprintln!(
        "{label}: utilization {:.2} %, mean queueing delay {:.2} ms, retransmits {}, goodput {:.2} Mbit/s",
        f.util, f.delay, f.retrans, f.goodput
    );
}

/// Alone on the 2-BDP buffer. v1's ProbeBW probes at pacing gain 1.25 with a 2-BDP cwnd and
/// keeps a standing queue of a few ms; v3 cruises at gain 1.0 with 15 % headroom and probes
/// (REFILL/UP) only every 2-3 s, so its mean queue is shorter. Targets (issue 33): v3 ≥ 95 %
/// utilisation (measured 96.6 %: ProbeRTT every 5 s halves cwnd for ~250 ms), a mean queueing
/// delay below v1's, and fewer retransmissions than v1's. Retransmissions are counted from
/// t = 0 (after the warmup neither loses a packet on this path): v1's Startup (pacing 2.89,
/// no loss response) overfills the buffer (measured 532 retransmissions); v3's 2.77 Startup
/// measured 0.
/// CUBIC is printed beside for reference.
#[test]
fn bbr3_alone_fills_the_link_with_less_queue_and_loss_than_v1() {
    let v3 = figures(&run(&path(0.0, "5s", &one("bbr3")), None, false));
    let v1 = figures(&run(&path(0.0, "5s", &one("bbr")), None, false));
    let cubic = figures(&run(&path(0.0, "5s", &one("cubic")), None, false));
    report("bbr3", &v3);
    report("bbr", &v1);
    report("cubic", &cubic);
    assert!(v3.util >= 95.0, "bbr3 utilization {:.2} %", v3.util);
    assert!(v3.delay < v1.delay, "bbr3 {:.2} ms vs bbr {:.2} ms", v3.delay, v1.delay);
    let from0 = |cc: &str| run(&path(0.0, "0s", &one(cc)), None, false).f("flows.0.retransmits");
    let (r3, r1) = (from0("bbr3"), from0("bbr"));
    eprintln!("retransmits from t = 0: bbr3 {r3}, bbr {r1}");
    assert!(r3 < r1, "bbr3 {r3} vs bbr {r1} retransmits");
}

/// 2 % random loss. The issue's target: v3 keeps ≥ 50 % of the link, v1 more, CUBIC least.
/// Measured (seed 1): v3 72.4 % of the payload capacity (69.9 Mbit/s of 96.5), v1 93 %, CUBIC
/// ~2 % (Mathis: 1.22/√0.02 ≈ 8.6 segments per RTT ≈ 2.5 Mbit/s). v3 stays below v1 because
/// of the draft's loss response: outside probing every loss round sets
/// bw_lo = max(bw_latest, 0.7 bw_lo) and inflight_lo likewise, and bw_latest of a paced flow
/// that loses 2 % is a little below bw_lo, so the bounds drift down until REFILL resets them
/// (every 2-3 s); UP meets a loss rate at BBRLossThresh and stops early. (Before draft-04's
/// recovery rule replaced v1's packet conservation, each fast-recovery entry — one every
/// ~50 ms at this loss rate — cut cwnd to the data in flight and restarted the round: 19 %.)
/// The 50 % floor leaves room for other seeds (the margin above it is 22 points).
#[test]
fn bbr3_under_two_percent_loss_sits_between_cubic_and_v1() {
    let v3 = figures(&run(&path(0.02, "5s", &one("bbr3")), None, false));
    let v1 = figures(&run(&path(0.02, "5s", &one("bbr")), None, false));
    let cubic = figures(&run(&path(0.02, "5s", &one("cubic")), None, false));
    report("bbr3 2% loss", &v3);
    report("bbr 2% loss", &v1);
    report("cubic 2% loss", &cubic);
    let payload = 100.0 * 1448.0 / 1500.0;
    eprintln!("bbr3 keeps {:.1} % of the payload capacity", 100.0 * v3.goodput / payload);
    assert!(v3.goodput >= 0.5 * payload, "bbr3 {:.2} Mbit/s", v3.goodput);
    assert!(v1.goodput > v3.goodput, "v1 {:.2} vs v3 {:.2}", v1.goodput, v3.goodput);
    assert!(v3.goodput > cubic.goodput, "v3 {:.2} vs cubic {:.2}", v3.goodput, cubic.goodput);
}

/// One CUBIC and one BBR flow on a deep buffer (20 Mbit/s, 40 ms, 1000 packets ≈ 15 BDP),
/// 60 s. The draft's authors report v3 as less aggressive toward loss-based flows than v1 (v1
/// sits at its 2-BDP cwnd cap and ignores the losses CUBIC causes; v3's loss bounds let CUBIC
/// keep more). Target: CUBIC's share beside v3 is larger than beside v1.
#[test]
fn bbr3_leaves_cubic_more_than_v1_on_a_deep_buffer() {
    let deep = |cc: &str| {
        format!(
            r#"
            duration = "60s"
            warmup = "10s"
            [topology]
            bottleneck = {{ rate = "20Mbps", delay = "15ms" }}
            bottleneck_queue = {{ limit = "1000p" }}
            access = {{ rate = "1Gbps", delay = "5ms" }}
            [[flows]]
            cc = "cubic"
            [[flows]]
            cc = "{cc}"
            "#
        )
    };
    let share = |cc: &str| {
        let r = run(&deep(cc), None, false);
        let (c, b) = (r.f("flows.0.goodput_mbps"), r.f("flows.1.goodput_mbps"));
        eprintln!("deep buffer: cubic {c:.2} Mbit/s beside {cc} {b:.2} Mbit/s");
        c / (c + b)
    };
    let with_v3 = share("bbr3");
    let with_v1 = share("bbr");
    eprintln!("cubic's share: beside bbr3 {with_v3:.3}, beside bbr {with_v1:.3}");
    assert!(with_v3 > with_v1, "cubic's share beside v3 {with_v3:.3} vs v1 {with_v1:.3}");
}

/// With `ecn = true` BBRv3 negotiates AccECN and sends ECT(1), so DualPI2 puts it in the L4S
/// queue (marking above 1 ms of queue). 100 Mbit/s, 30 s, measured after 10 s. Bounds: mean
/// queueing delay ≤ 1.5 ms (the L queue's 1 ms step plus a packet; measured 0.65 ms), the
/// flow's p95 RTT within 5 ms of its base (measured 3.6 ms: UP's 1.25 probes every 2-3 s
/// build a short queue before the CE fraction stops them), and ≥ 80 % utilisation (measured
/// 89 %: each marked round outside probing scales inflight_lo by 1 − α/3, which under-fills
/// the link until REFILL resets it). Without ECN the same flow is a classic one in PI2's queue;
/// its figures are printed beside.
#[test]
fn bbr3_with_ecn_is_an_l4s_sender_under_dualpi2() {
    let scen = |params: &str| {
        format!(
            r#"
            duration = "30s"
            warmup = "10s"
            [topology]
            bottleneck = {{ rate = "100Mbps", delay = "2ms" }}
            bottleneck_queue = {{ kind = "dualpi2", limit = "1000p" }}
            access = {{ rate = "1Gbps", delay = "3ms" }}
            [[flows]]
            cc = "bbr3"
            {params}
            "#
        )
    };
    let show = |label: &str, r: &Run| {
        let q95 = r.f("flows.0.rtt_p95_ms") - r.f("flows.0.base_rtt_ms");
        let (soj, util) = (r.f("bottleneck.mean_sojourn_ms"), r.f("bottleneck.utilization_pct"));
        eprintln!("dualpi2, {label}: mean queueing {soj:.2} ms, p95 RTT − base {q95:.2} ms, utilization {util:.1} %");
        (soj, q95, util)
    };
    let (soj, q95, util) = show("bbr3 ecn", &run(&scen("cc_params = { ecn = true }"), None, false));
    show("bbr3 without ecn", &run(&scen(""), None, false));
    assert!(soj <= 1.5, "mean queueing delay {soj:.2} ms");
    assert!(q95 <= 5.0, "p95 RTT − base {q95:.2} ms");
    assert!(util >= 80.0, "utilization {util:.1} %");
}

/// Bad input: exit-2 errors naming the key path (and `validate` says the same).
#[test]
fn bad_bbr3_parameters_are_refused_with_their_key_path() {
    let with = |params: &str| {
        format!(
            "duration = \"1s\"\n[topology]\nbottleneck = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n[[flows]]\ncc = \"bbr3\"\ncc_params = {{ {params} }}\n"
        )
    };
    refused(&with("ecn_mode = true"), "flows[0].cc_params.ecn_mode", "ecn");
    refused(&with("beta = 1.5"), "flows[0].cc_params.beta", "(0, 1)");
    refused(&with("loss_thresh = 0"), "flows[0].cc_params.loss_thresh", "(0, 1)");
    refused(&with("headroom = -0.1"), "flows[0].cc_params.headroom", "[0, 1)");
    refused(&with("ecn = \"yes\""), "flows[0].cc_params.ecn", "");
    // ECN on asks for AccECN: classic feedback is refused.
    refused(
        &(with("ecn = true") + "tcp = { ecn = \"classic\" }\n"),
        "flows[0].tcp.ecn",
        "bbr3 needs Accurate ECN",
    );
}

/// The state machine in the time series (20 Mbit/s, 40 ms, 1000 p, 30 s, 10 ms samples):
/// Startup → Drain → ProbeBW; every UP follows a REFILL; ProbeRTT every ProbeRTTInterval (5 s)
/// plus its ~200 ms and a round (gaps within 5.0-5.7 s); a bandwidth probe (REFILL) starts
/// 2-3 s after its cycle began (DOWN after a probe, or the exit from Drain or ProbeRTT, which
/// start a new cycle in the draft) — the random 2-3 s wait, or 63 rounds ≈ 2.6 s here if sooner —
/// within one 10 ms sample: 1.99-3.01 s. (ProbeRTT restarting the wait means one probe per
/// ~5.2 s here: measured UP at 3.30, 8.15, 13.29, 18.16, 23.12, 25.63, 28.50 s.)
#[test]
fn bbr3_cycles_through_its_states_on_schedule() {
    let scen = r#"
        duration = "30s"
        [metrics]
        interval = "10ms"
        [topology]
        bottleneck = { rate = "20Mbps", delay = "15ms" }
        bottleneck_queue = { limit = "1000p" }
        access = { rate = "1Gbps", delay = "5ms" }
        [[flows]]
        cc = "bbr3"
    "#;
    let r = run(scen, None, true);
    let t = r.num("t_s");
    let states = r.text("cc_state");
    let first = |s: &str| states.iter().position(|x| x == s).unwrap_or(usize::MAX);
    assert!(first("startup") < first("drain") && first("drain") < first("probe_bw_down"));
    let rtt = cc_util::entries(&t, &states, "probe_rtt");
    let ups = cc_util::entries(&t, &states, "probe_bw_up");
    eprintln!("ProbeRTT at {rtt:.2?} s; UP at {ups:.2?} s");
    assert!(rtt.len() >= 5, "{rtt:?}");
    for w in rtt.windows(2) {
        assert!((5.0..=5.7).contains(&(w[1] - w[0])), "ProbeRTT {:.2} s apart", w[1] - w[0]);
    }
    assert!(ups.len() >= 5, "{ups:?}");
    // Cycle starts: DOWN entries and the exits from Drain and ProbeRTT (DOWN may last less
    // than a sample).
    let mut cycle_starts = cc_util::entries(&t, &states, "probe_bw_down");
    for (i, s) in states.iter().enumerate().skip(1) {
        let prev = &states[i - 1];
        if (prev == "probe_rtt" || prev == "drain") && s != prev {
            cycle_starts.push(t[i]);
        }
    }
    cycle_starts.sort_by(f64::total_cmp);
    for refill in cc_util::entries(&t, &states, "probe_bw_refill") {
        let from = cycle_starts.iter().rev().find(|c| **c < refill).copied().unwrap();
        let wait = refill - from;
        assert!(
            (1.99..=3.01).contains(&wait),
            "REFILL at {refill:.2} s, {wait:.2} s into its cycle"
        );
    }
    for (i, s) in states.iter().enumerate().skip(1) {
        if s == "probe_bw_up" && states[i - 1] != "probe_bw_up" {
            assert_eq!(states[i - 1], "probe_bw_refill", "UP at {:.2} s", t[i]);
        }
    }
}
