//! The delayed-window-update mechanism (Wang & Yuan 2016) on the paper's Table 1 scenarios:
//! Cubic+ against CUBIC, and the wrapper over other controllers.

use crate::cc_util;
use cc_util::{run, Run};

/// Scenario I of Table 1: 2 Mbit/s bottleneck, 20 ms RTT, 10 Mbit/s access, 500 KB FIFO,
/// 1500 B packets, 200 s (33 k packets, a few ms of wall time).
fn scenario_1(cc: &str, params: &str) -> Run {
    run(
        &format!(
            r#"
            duration = "200s"
            [topology]
            bottleneck = {{ rate = "2Mbps", delay = "5ms" }}
            bottleneck_queue = {{ limit = "500KB" }}
            access = {{ rate = "10Mbps", delay = "2.5ms" }}
            [[flows]]
            cc = "{cc}"
            {params}
            "#
        ),
        None,
        true,
    )
}

/// Scenario II of Table 1: 400 Mbit/s, 120 ms RTT, 1 Gbit/s access, 300 KB FIFO. A 400 Mbit/s
/// run simulates ~33 k packets per simulated second, so instead of the paper's 200 s this
/// runs 45 s and measures the last 20: after the slow-start overshoot (which is the same for
/// both) CUBIC needs ~28 s to climb back to the BDP, and [25 s, 45 s] holds its first loss
/// cycles at full window (~0.7 M packets, ~0.5 s of wall time per run).
fn scenario_2(cc: &str, params: &str) -> Run {
    run(
        &format!(
            r#"
            duration = "45s"
            warmup = "25s"
            [topology]
            bottleneck = {{ rate = "400Mbps", delay = "50ms" }}
            bottleneck_queue = {{ limit = "300KB" }}
            access = {{ rate = "1Gbps", delay = "5ms" }}
            [tcp]
            rcvbuf = "32MB"
            [[flows]]
            cc = "{cc}"
            {params}
            "#
        ),
        None,
        false,
    )
}

fn report(name: &str, r: &Run) {
    eprintln!(
        "{name}: goodput {:.4} Mbit/s, loss {:.3} %, buffer usage {:.2} %, queueing delay {:.3} ms, utilization {:.2} %",
        r.f("flows.0.goodput_mbps"),
        r.f("flows.0.loss_pct"),
        r.f("bottleneck.buffer_usage_pct"),
        r.f("bottleneck.mean_sojourn_ms"),
        r.f("bottleneck.utilization_pct"),
    );
}

/// Paper, Table 2 (500 KB): CUBIC 3.27 % loss, 81.68 % buffer usage, 1.61 s queueing delay;
/// Cubic+ no loss, 1.74 %, 0.03 s; both ~2 Mbit/s. Required here: Cubic+ cuts buffer usage
/// and queueing delay by at least 10× against CUBIC, loses nothing and still carries ≥ 95 %
/// of the link (payload goodput ≥ 95 % of the 1.93 Mbit/s of payload 2 Mbit/s can carry).
#[test]
fn cubic_plus_scenario_1_cuts_buffer_and_delay_by_an_order_of_magnitude() {
    let params = r#"cc_params = { period = "100ms", threshold = "30ms", theta = 0.9 }"#;
    let cubic = scenario_1("cubic", "");
    let plus = scenario_1("cubic+", params);
    report("scenario I cubic ", &cubic);
    report("scenario I cubic+", &plus);
    let buf = (cubic.f("bottleneck.buffer_usage_pct"), plus.f("bottleneck.buffer_usage_pct"));
    let delay = (cubic.f("bottleneck.mean_sojourn_ms"), plus.f("bottleneck.mean_sojourn_ms"));
    assert!(buf.0 > 50.0, "CUBIC fills the buffer ({:.1} %)", buf.0);
    assert!(buf.1 * 10.0 <= buf.0, "buffer usage {:.2} % vs CUBIC {:.2} %", buf.1, buf.0);
    assert!(
        delay.1 * 10.0 <= delay.0,
        "queueing delay {:.1} ms vs CUBIC {:.1} ms",
        delay.1,
        delay.0
    );
    assert_eq!(plus.f("flows.0.loss_pct"), 0.0);
    assert!(plus.f("bottleneck.utilization_pct") >= 95.0);
    let payload_capacity = 2.0 * 1448.0 / 1500.0;
    assert!(plus.f("flows.0.goodput_mbps") >= 0.95 * payload_capacity);
    // The mechanism acts: the series shows θ decreases and suspensions, never a loss.
    let states = plus.text("cc_state");
    assert!(states.iter().any(|s| s == "decreased"));
    assert!(plus.text("ca_state").iter().all(|s| s == "open"));
}

/// Paper, Table 2 (300 KB): CUBIC 203.9 Mbit/s, 0.219 % loss, 0.42 ms; Cubic+ 285.7 Mbit/s,
/// 0.054 %, 0.13 ms. Here both reach ~330 Mbit/s, and Cubic+ holds the queue lower: buffer
/// usage and queueing delay at most 3/4 of CUBIC's (measured ~0.58×) at no more than 7 %
/// less goodput (measured ~2 %). Unlike in the paper, Cubic+ does not lose fewer packets
/// here: after a θ decrease CUBIC's curve (whose epoch the wrapper leaves alone) regrows at
/// up to 1.5×/RTT, faster than a 200 ms period can catch on a 300 KB buffer (see
/// docs/congestion-control.md). Loss is therefore reported, not asserted.
#[test]
fn cubic_plus_scenario_2_lowers_the_queue() {
    let params = r#"cc_params = { period = "200ms", threshold = "0.6ms", theta = 0.9 }"#;
    let cubic = scenario_2("cubic", "");
    let plus = scenario_2("cubic+", params);
    report("scenario II cubic ", &cubic);
    report("scenario II cubic+", &plus);
    let buf = (cubic.f("bottleneck.buffer_usage_pct"), plus.f("bottleneck.buffer_usage_pct"));
    let delay = (cubic.f("bottleneck.mean_sojourn_ms"), plus.f("bottleneck.mean_sojourn_ms"));
    let gp = (cubic.f("flows.0.goodput_mbps"), plus.f("flows.0.goodput_mbps"));
    assert!(buf.1 <= 0.75 * buf.0, "buffer usage {:.2} % vs CUBIC {:.2} %", buf.1, buf.0);
    assert!(
        delay.1 <= 0.75 * delay.0,
        "queueing delay {:.3} ms vs CUBIC {:.3} ms",
        delay.1,
        delay.0
    );
    assert!(gp.1 >= 0.93 * gp.0, "goodput {:.1} vs CUBIC {:.1} Mbit/s", gp.1, gp.0);
}

/// The wrapper works over any controller: on scenario I, NewReno+ and Westwood++ keep the
/// queue short with no loss where their plain versions fill the buffer, and Vegas+ stays a
/// delay-based flow (no loss, full link).
#[test]
fn the_wrapper_works_over_other_controllers() {
    for (plain, wrapped) in [("newreno", "newreno+"), ("westwood+", "westwood++")] {
        let a = scenario_1(plain, "");
        let b = scenario_1(wrapped, "");
        report(plain, &a);
        report(wrapped, &b);
        assert!(
            b.f("bottleneck.buffer_usage_pct") * 10.0 <= a.f("bottleneck.buffer_usage_pct"),
            "{wrapped}"
        );
        assert_eq!(b.f("flows.0.loss_pct"), 0.0, "{wrapped}");
        assert!(b.f("bottleneck.utilization_pct") >= 95.0, "{wrapped}");
        assert_eq!(b.summary["flows"][0]["cc"], wrapped);
    }
    let v = scenario_1("vegas+", "");
    assert_eq!(v.f("flows.0.loss_pct"), 0.0);
    // Quick-ACK mode at start (as Linux) shows Vegas the true 20 ms base RTT rather than one
    // inflated by a delayed ACK; Vegas+ then keeps so short a queue that the link idles ~5 %.
    assert!(v.f("bottleneck.utilization_pct") >= 95.0);
}

/// Unknown names and bad parameters are rejected with the key path.
#[test]
fn bad_names_and_parameters_are_rejected_with_the_key_path() {
    use bloatlab_sim::{run_toml, RunError, RunOptions};
    let sc = |flow: &str| {
        format!(
            "duration = \"1s\"\n[topology]\nbottleneck = {{ rate = \"1Mbps\", delay = \"1ms\" }}\n[[flows]]\n{flow}\n"
        )
    };
    let err = |flow: &str| match run_toml(&sc(flow), &RunOptions::default()) {
        Err(RunError::Invalid(e)) => e.to_string(),
        Err(e) => panic!("not an input error: {e}"),
        Ok(_) => panic!("accepted: {flow}"),
    };
    let e = err("cc = \"cubik+\"");
    assert!(e.starts_with("flows[0].cc: unknown congestion control \"cubik+\""), "{e}");
    assert!(e.contains("cubic+"), "{e}");
    assert_eq!(
        err("cc = \"cubic+\"\ncc_params = { theta = 1.5 }"),
        "flows[0].cc_params.theta: must be in (0, 1] (got 1.5)"
    );
    assert_eq!(
        err("cc = \"reno+\"\ncc_params = { period = \"0ms\" }"),
        "flows[0].cc_params.period: must be greater than 0 (got \"0s\")"
    );
    assert!(err("cc = \"bbr\"\ncc_params = { theta = 0.9 }")
        .starts_with("flows[0].cc_params.theta: unknown key"));
    assert_eq!(
        err("cc = \"cubic\"\ncc_params = { hystart_rounds = \"first_ack\" }"),
        "flows[0].cc_params.hystart_rounds: unknown HyStart round rule \"first_ack\" (known: \
         low_window, linux)"
    );
    assert!(err("cc = \"cubic\"\ncc_params = { hystart_rounds = true }")
        .starts_with("flows[0].cc_params.hystart_rounds: "));
}
