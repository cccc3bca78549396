//! Linux's loss-recovery mechanisms (PRR, F-RTO/undo, D-SACK, RACK-TLP, quick-ACK, the
//! controllers' RTT sample): each switch changes what it should, the defaults bring the
//! Wang et al. 2016 scenario I close to what Linux does, and bad values name their key.

use crate::common;
use common::{f, run};

/// A summary without its wall-clock figures (the `engine` block): what two runs of the same
/// scenario must agree on.
fn strip(mut v: serde_json::Value) -> serde_json::Value {
    v.as_object_mut().unwrap().remove("engine");
    v
}

/// Wang et al. 2016 scenario I (2 Mbit/s, 20 ms, 500 KB drop-tail, one CUBIC flow, 90 s).
/// Linux (`bloatlab compare`): goodput 1.923 Mbit/s, 453 drops, 428 retransmissions, no
/// spurious timeout. Without the mechanisms the simulator had a timeout in the first
/// recovery (the RTT had grown to 2 s), resent the queued window go-back-N and lost 724
/// packets, retransmitting 896.
fn wang_i(tcp: &str) -> serde_json::Value {
    wang_i_flow(tcp, "")
}

/// [`wang_i`] with `flow` written into the flow's table too.
fn wang_i_flow(tcp: &str, flow: &str) -> serde_json::Value {
    run(&format!(
        r#"
        duration = "90s"
        [topology]
        bottleneck = {{ rate = "2Mbps", delay = "5ms" }}
        bottleneck_queue = {{ kind = "droptail", limit = "500KB" }}
        access = {{ rate = "10Mbps", delay = "2.5ms" }}
        [tcp]
        mss = "1448B"
        {tcp}
        [[flows]]
        cc = "cubic"
        {flow}
        "#
    ))
}

#[test]
fn wang_scenario_i_matches_linux_within_the_targets() {
    let s = wang_i("");
    let (gp, drops, retx) =
        (f(&s, "flows.0.goodput_mbps"), f(&s, "bottleneck.drops"), f(&s, "flows.0.retransmits"));
    eprintln!("wang I: goodput {gp:.3} drops {drops} retransmits {retx}");
    assert_eq!(f(&s, "flows.0.timeouts"), 0.0);
    assert!((gp / 1.923 - 1.0).abs() <= 0.02, "goodput {gp:.3} vs Linux 1.923");
    // The issue's targets (15 %). Since Linux's timer ticks are modelled (`tcp.hz`: RACK's
    // reordering timer fires after the dupthresh ACK, not into a full queue) the simulator
    // loses 431 and retransmits 431 (Linux 453 / 428); with receive-buffer autotuning alone it
    // lost 372 and the tolerance had been widened to 20 %.
    assert!((drops / 453.0 - 1.0).abs() <= 0.15, "drops {drops} vs Linux 453");
    assert!((retx / 428.0 - 1.0).abs() <= 0.15, "retransmissions {retx} vs Linux 428");
}

/// A flow of one initial window whose segments `drop` (0-based among the data segments) are
/// lost on the bottleneck; returns (completion time, timeouts, retransmissions).
fn one_window_with_loss(drop: &[usize], tcp: &str) -> (f64, f64, f64) {
    let drop: Vec<String> = drop.iter().map(|d| (d + 2).to_string()).collect();
    // Forward bottleneck packets: SYN, handshake ACK, then the ten data segments.
    let s = run(&format!(
        r#"
        duration = "5s"
        [topology]
        bottleneck = {{ rate = "100Mbps", delay = "20ms", drop_packets = [{}] }}
        [tcp]
        {tcp}
        [[flows]]
        cc = "cubic"
        size = "14480B"
        "#,
        drop.join(", ")
    ));
    (f(&s, "flows.0.fct_s"), f(&s, "flows.0.timeouts"), f(&s, "flows.0.retransmits"))
}

/// The last two segments of a flight are lost: no SACK can reveal them. The tail loss probe
/// resends the last one 2·SRTT after the last ACK; its SACK shows the other lost (RACK),
/// and fast recovery repairs it. Without the probe the RTO (SRTT + 200 ms at least) does.
/// (With one segment out the probe waits 200 ms more for a delayed ACK, RFC 8985 §7.2, and
/// is no earlier than the RTO on this path.)
#[test]
fn tail_loss_probe_repairs_a_lost_tail_before_the_rto() {
    let (with, to_with, rx_with) = one_window_with_loss(&[8, 9], "");
    let (without, to_without, _) = one_window_with_loss(&[8, 9], "tlp = false");
    assert_eq!((to_with, rx_with), (0.0, 2.0), "the probe and one fast retransmission");
    assert_eq!(to_without, 1.0);
    assert!(with + 0.1 < without, "TLP {with:.3}s vs RTO {without:.3}s");
}

/// The eighth of ten segments is lost: two SACKs follow it, one short of dupthresh. RACK
/// marks it lost a quarter min-RTT after the SACKs (its reordering timer); without RACK
/// (and without the probe) only the RTO finds it.
#[test]
fn rack_finds_a_loss_dupthresh_cannot() {
    let (with, to_with, _) = one_window_with_loss(&[7], "tlp = false");
    let (without, to_without, _) = one_window_with_loss(&[7], "tlp = false\nrack = false");
    assert_eq!(to_with, 0.0);
    assert_eq!(to_without, 1.0);
    assert!(with + 0.1 < without, "RACK {with:.3}s vs RTO {without:.3}s");
}

/// Quick-ACK mode: the first segments of a connection are ACKed at once, so a lone first
/// segment (initial window 1) does not wait for the 40 ms delayed-ACK timer.
#[test]
fn quick_ack_mode_acks_the_first_segments_at_once() {
    let sc = |quick: bool| {
        run(&format!(
            r#"
            duration = "5s"
            [topology]
            bottleneck = {{ rate = "1Gbps", delay = "20ms" }}
            [[flows]]
            cc = "newreno"
            size = "4344B"
            tcp = {{ init_cwnd = 1, quickack = {quick} }}
            "#
        ))
    };
    let quick = f(&sc(true), "flows.0.fct_s");
    let delayed = f(&sc(false), "flows.0.fct_s");
    assert!(
        (delayed - quick - 0.040).abs() < 1e-3,
        "quick-ACK {quick:.4}s vs delayed {delayed:.4}s"
    );
}

/// Each switch is read from [tcp] and from a flow's own tcp table, and changes the run
/// (on scenario I: PRR keeps the ACK clock in recovery; RACK and the SACK-driven timer keep
/// the first recovery free of a timeout only together with the rest); `rtt_sample` too.
#[test]
fn switches_are_read_and_runs_stay_deterministic() {
    let base = strip(wang_i(""));
    assert_eq!(base, strip(wang_i("")), "same scenario, same results");
    let no_prr = wang_i("prr = false");
    assert_ne!(f(&base, "bottleneck.drops"), f(&no_prr, "bottleneck.drops"));
    let ts = strip(wang_i("rtt_sample = \"timestamp\"\nquickack = false"));
    assert_ne!(base, ts);
    // Linux's cwnd-limited rule is accepted (and deterministic) from [tcp].
    let lin = strip(wang_i("cwnd_limited = \"linux\""));
    assert_eq!(lin, strip(wang_i("cwnd_limited = \"linux\"")));
    // The rules the packetdrill runner turns on are [tcp] keys too; Wang I's recoveries
    // (SACK, lost retransmissions, old ACKs behind a 2 s queue) see them.
    let rules = "xmit_timer = \"linux\"\nold_ack_sack = \"linux\"\nrack_retrans = \"linux\"\n\
                 reno_dupacks = \"linux\"";
    let linux = strip(wang_i(rules));
    assert_eq!(linux, strip(wang_i(rules)), "same scenario, same results");
    assert_ne!(linux, base);
}

/// `rules = "linux"` is every Linux rule spelled out; a switch set beside it wins, and a
/// flow's own `tcp = { rules = "linux" }` is the same as the global one.
#[test]
fn linux_rules_are_every_linux_switch_and_explicit_keys_win() {
    let every = |psh: bool| {
        format!(
            "tso_defer = true\npsh = {psh}\ngrow_quickack = true\ncwnd_limited = \"linux\"\n\
             prr_entry = \"linux\"\nzero_window_probe = \"linux\"\nxmit_timer = \"linux\"\n\
             reno_dupacks = \"linux\"\nold_ack_sack = \"linux\"\nrack_retrans = \"linux\"\n\
             ecn_reduction = \"cwr\"\npacing_credit = true\npaced_fast_retransmit = true\n\
             unpaced_start = true\nsyn_linear_timeouts = 4\nnagle = true"
        )
    };
    let linux = strip(wang_i("rules = \"linux\""));
    let hystart = "cc_params = { hystart_rounds = \"linux\" }";
    assert_eq!(linux, strip(wang_i_flow(&every(true), hystart)));
    assert_ne!(linux, strip(wang_i("")));
    assert_eq!(strip(wang_i("rules = \"default\"")), strip(wang_i("")));
    assert_eq!(
        strip(wang_i("rules = \"linux\"\npsh = false")),
        strip(wang_i_flow(&every(false), hystart))
    );
    let per_flow = wang_i_flow("", "tcp = { rules = \"linux\" }");
    assert_eq!(strip(per_flow), linux);
}

/// `rules = "linux"` includes CUBIC's HyStart round rule (Linux 6.14+) unless the flow sets
/// it: on the cell where the rule was traced (100 Mbit/s, 150 ms, 0.5 BDP; docs/fidelity.md)
/// the two rules leave slow start at different windows, so the runs differ.
#[test]
fn linux_rules_take_cubics_hystart_rule_unless_the_flow_sets_it() {
    let cell = |tcp: &str, params: &str| {
        strip(run(&format!(
            r#"
            duration = "4s"
            [topology]
            bottleneck = {{ rate = "100Mbps", delay = "75ms" }}
            bottleneck_queue = {{ kind = "droptail", limit = "937500B" }}
            [tcp]
            {tcp}
            [[flows]]
            cc = "cubic"
            {params}
            "#
        )))
    };
    let rules = "rules = \"linux\"";
    let linux = cell(rules, "");
    assert_eq!(linux, cell(rules, "cc_params = { hystart_rounds = \"linux\" }"));
    let low_window = cell(rules, "cc_params = { hystart_rounds = \"low_window\" }");
    assert_ne!(linux, low_window, "the HyStart rule must matter in this cell");
    // Reno has no HyStart: the rule set is read without it.
    let reno =
        run("duration = \"1s\"\n[topology]\nbottleneck = { rate = \"10Mbps\", delay = \"5ms\" }\n\
                    [tcp]\nrules = \"linux\"\n[[flows]]\ncc = \"reno\"\n");
    assert!(f(&reno, "flows.0.goodput_mbps") > 5.0);
}

#[test]
fn bad_values_name_their_key() {
    use bloatlab_sim::{run_toml, RunError, RunOptions};
    let err = |tcp: &str, flow_tcp: &str| {
        let sc = format!(
            "duration = \"1s\"\n[topology]\nbottleneck = {{ rate = \"1Mbps\", delay = \"1ms\" }}\n[tcp]\n{tcp}\n[[flows]]\ncc = \"cubic\"\n{flow_tcp}\n"
        );
        match run_toml(&sc, &RunOptions::default()) {
            Err(RunError::Invalid(e)) => e.to_string(),
            Err(e) => panic!("not an input error: {e}"),
            Ok(_) => panic!("accepted: {tcp} {flow_tcp}"),
        }
    };
    for key in [
        "prr",
        "frto",
        "undo",
        "dsack",
        "rack",
        "tlp",
        "quickack",
        "rcvbuf_auto",
        "sack_compress",
        "gso",
        "tso_defer",
        "psh",
        "grow_quickack",
        "pacing_credit",
        "paced_fast_retransmit",
    ] {
        assert_eq!(
            err(&format!("{key} = 1"), ""),
            format!("tcp.{key}: expected true or false, got an integer")
        );
        assert_eq!(
            err("", &format!("tcp = {{ {key} = \"yes\" }}")),
            format!("flows[0].tcp.{key}: expected true or false, got a string")
        );
    }
    let e = err("rtt_sample = \"newest\"", "");
    assert!(e.starts_with("tcp.rtt_sample: "), "{e}");
    assert_eq!(e, "tcp.rtt_sample: unknown RTT sampling \"newest\" (known: linux, timestamp)");
    let e = err("rtt_sample = true", "");
    assert!(e.starts_with("tcp.rtt_sample: "), "{e}");
    assert_eq!(
        err("cwnd_limited = \"max\"", ""),
        "tcp.cwnd_limited: unknown cwnd-limited rule \"max\" (known: flight, linux)"
    );
    assert!(err("", "tcp = { cwnd_limited = true }").starts_with("flows[0].tcp.cwnd_limited: "));
    assert_eq!(
        err("prr_entry = \"late\"", ""),
        "tcp.prr_entry: unknown PRR entry order \"late\" (known: retransmit_first, linux)"
    );
    assert_eq!(
        err("", "tcp = { zero_window_probe = \"none\" }"),
        "flows[0].tcp.zero_window_probe: unknown zero-window probe \"none\" (known: byte, linux)"
    );
    assert_eq!(
        err("ecn_reduction = \"prr\"", ""),
        "tcp.ecn_reduction: unknown ECN reduction \"prr\" (known: at_once, cwr)"
    );
    assert!(err("", "tcp = { ecn_reduction = true }").starts_with("flows[0].tcp.ecn_reduction: "));
    assert_eq!(
        err("recovery_restart = \"never\"", ""),
        "tcp.recovery_restart: unknown recovery restart \"never\" (known: same_ack, next_ack)"
    );
    assert!(
        err("", "tcp = { recovery_restart = 1 }").starts_with("flows[0].tcp.recovery_restart: ")
    );
    for (key, what, known) in [
        ("xmit_timer", "transmission-timer rule", "every_ack, linux"),
        ("reno_dupacks", "duplicate-ACK accounting", "every_segment, linux"),
        ("old_ack_sack", "old-ACK SACK rule", "ignore, linux"),
        ("rack_retrans", "RACK retransmission rule", "new_data_only, linux"),
    ] {
        assert_eq!(
            err(&format!("{key} = \"bsd\""), ""),
            format!("tcp.{key}: unknown {what} \"bsd\" (known: {known})")
        );
        assert!(err("", &format!("tcp = {{ {key} = true }}"))
            .starts_with(&format!("flows[0].tcp.{key}: ")));
    }
    assert_eq!(
        err("rules = \"bsd\"", ""),
        "tcp.rules: unknown TCP rule set \"bsd\" (known: default, linux)"
    );
    assert!(err("", "tcp = { rules = true }").starts_with("flows[0].tcp.rules: "));
    assert_eq!(
        err("hz = 200", ""),
        "tcp.hz: must be one of Linux's CONFIG_HZ choices (allowed: 100, 250, 300, 1000; got 200)"
    );
    assert_eq!(
        err("", "tcp = { hz = 10 }"),
        "flows[0].tcp.hz: must be one of Linux's CONFIG_HZ choices (allowed: 100, 250, 300, 1000; got 10)"
    );
    assert!(err("hz = \"250\"", "").starts_with("tcp.hz: "));
}

/// One flow, 10 Mbit/s, 10 ms, a 2-BDP drop-tail buffer (25 kB), metrics after 5 s: a
/// congestion event every half second (`bloatlab validate`'s cells `*-droptail-b2-rtt10-loss0-f1`).
/// Linux (emulated, kernel 6.18 at HZ = 250, three runs): CUBIC loses one packet per event
/// (54 retransmissions, 54 drops), Reno 133, 125 and 126. Linux's reordering timer, armed in
/// 4 ms ticks with a 2 ms floor, fires after the third duplicate ACK, so the retransmission
/// goes in a slot the queue just freed; a timer that fired at the exact RACK deadline (before
/// the floor and the ticks were modelled) sent it behind new data into the full queue and lost
/// it: CUBIC 102 retransmissions in 51 recoveries, Reno 165.
#[test]
fn reordering_timer_ticks_keep_the_fast_retransmission_alive() {
    let cell = |cc: &str, hz: u32| {
        let s = run(&format!(
            r#"
            duration = "30s"
            warmup = "5s"
            [topology]
            bottleneck = {{ rate = "10Mbps", delay = "5ms" }}
            bottleneck_queue = {{ kind = "droptail", limit = "25000B" }}
            [tcp]
            hz = {hz}
            [[flows]]
            cc = "{cc}"
            "#
        ));
        let (retx, rec) = (f(&s, "flows.0.retransmits"), f(&s, "flows.0.recoveries"));
        eprintln!("{cc} hz {hz}: {retx} retransmissions in {rec} recoveries");
        (retx, rec)
    };
    for hz in [250, 1000] {
        // CUBIC: one per event, with a lost retransmission allowed in one event of ten.
        let (retx, rec) = cell("cubic", hz);
        assert!(rec >= 30.0, "cubic hz {hz}: only {rec} recoveries");
        assert!(
            retx <= 1.1 * rec + 2.0,
            "cubic hz {hz}: {retx} retransmissions in {rec} recoveries"
        );
    }
    // Reno overshoots by more (+1 segment per RTT up to the loss): Linux's count, within the
    // validate target (25 %) of the three runs' mean.
    let (retx, _) = cell("reno", 250);
    assert!((retx / 128.0 - 1.0).abs() <= 0.25, "reno: {retx} retransmissions, Linux 125-133");
}

/// `ecn_reduction = "cwr"` (Linux's CWR state: PRR takes cwnd down over the window after an
/// ECN echo instead of at once) is read from [tcp] and a flow's own table, changes an ECN run
/// over a marking CoDel and keeps it deterministic; marks still replace drops.
#[test]
fn ecn_reduction_cwr_is_read_and_changes_an_ecn_run() {
    let sc = |tcp: &str, flow_tcp: &str| {
        strip(run(&format!(
            r#"
            duration = "10s"
            [topology]
            bottleneck = {{ rate = "20Mbps", delay = "10ms" }}
            bottleneck_queue = {{ kind = "codel", limit = "1000p", ecn = true }}
            [tcp]
            ecn = true
            {tcp}
            [[flows]]
            cc = "cubic"
            {flow_tcp}
            "#
        )))
    };
    let at_once = sc("", "");
    let cwr = sc("ecn_reduction = \"cwr\"", "");
    assert_eq!(cwr, sc("ecn_reduction = \"cwr\"", ""), "same scenario, same results");
    assert_eq!(cwr, sc("", "tcp = { ecn_reduction = \"cwr\" }"));
    assert_eq!(at_once, sc("ecn_reduction = \"at_once\"", ""));
    assert_ne!(at_once, cwr);
    for s in [&at_once, &cwr] {
        assert_eq!(f(s, "bottleneck.drops"), 0.0);
        assert_eq!(f(s, "flows.0.retransmits"), 0.0);
    }
    // PRR keeps the pipe full through each reduction where the at-once cut leaves it short
    // (89.4 % against 98.0 % utilisation here); a wide margin, only the direction is claimed.
    assert!(
        f(&cwr, "bottleneck.utilization_pct") > f(&at_once, "bottleneck.utilization_pct"),
        "cwr {} at_once {}",
        f(&cwr, "bottleneck.utilization_pct"),
        f(&at_once, "bottleneck.utilization_pct")
    );
}

/// `recovery_restart` (Linux's tcp_fastretrans_alert runs the entry test on the ACK that ends
/// a recovery): with losses in every round trip a recovery ends while the next loss is already
/// marked. With `"same_ack"` (the default) the state stays Recovery, so BBR v1 conserves
/// packets once and keeps its window; with `"next_ack"` (the earlier rule) BBR sees Open, then
/// Recovery one ACK later, and sets cwnd to the flight every round trip. One BBR flow at
/// 100 Mbit/s, 150 ms, 1 % random loss (validate's cell `bbr-droptail-b2-rtt150-loss1-f1`):
/// Linux 64.2 Mbit/s, the simulator 45.4 with `"next_ack"` and 53.9 with `"same_ack"` over
/// 30 s (docs/fidelity.md). Claimed: the direction with a 10 % margin, about half the gap
/// measured (shorter runs are dominated by the start: 50.9 against 47.6 over 15 s).
#[test]
fn recovery_restart_on_the_same_ack_keeps_bbr_from_conserving_every_round() {
    let sc = |tcp: &str| {
        run(&format!(
            r#"
            duration = "30s"
            warmup = "5s"
            [topology]
            bottleneck = {{ rate = "100Mbps", delay = "75ms", loss = 0.01 }}
            bottleneck_queue = {{ kind = "droptail", limit = "3750000B" }}
            [tcp]
            {tcp}
            [[flows]]
            cc = "bbr"
            "#
        ))
    };
    let same = sc("");
    assert_eq!(strip(same.clone()), strip(sc("recovery_restart = \"same_ack\"")));
    let next = sc("recovery_restart = \"next_ack\"");
    let (gs, gn) = (f(&same, "flows.0.goodput_mbps"), f(&next, "flows.0.goodput_mbps"));
    eprintln!("bbr, 1 % loss, 150 ms: same_ack {gs:.1} Mbit/s, next_ack {gn:.1}");
    assert!(gs > 1.1 * gn, "same_ack {gs:.1} Mbit/s, next_ack {gn:.1}");
}
