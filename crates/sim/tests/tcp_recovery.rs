//! Linux's loss-recovery mechanisms (PRR, F-RTO/undo, D-SACK, RACK-TLP, quick-ACK, the
//! controllers' RTT sample): each switch changes what it should, the defaults bring the
//! Wang et al. 2016 scenario I close to what Linux does, and bad values name their key.

mod common;
use common::{f, run};

/// Wang et al. 2016 scenario I (2 Mbit/s, 20 ms, 500 KB drop-tail, one CUBIC flow, 90 s).
/// Linux (`bloatlab compare`): goodput 1.923 Mbit/s, 453 drops, 428 retransmissions, no
/// spurious timeout. Without the mechanisms the simulator had a timeout in the first
/// recovery (the RTT had grown to 2 s), resent the queued window go-back-N and lost 724
/// packets, retransmitting 896.
fn wang_i(tcp: &str) -> serde_json::Value {
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
        "#
    ))
}

#[test]
fn wang_scenario_i_matches_linux_within_the_targets() {
    let s = wang_i("");
    let (gp, drops, retx) = (f(&s, "flows.0.goodput_mbps"), f(&s, "bottleneck.drops"), f(&s, "flows.0.retransmits"));
    eprintln!("wang I: goodput {gp:.3} drops {drops} retransmits {retx}");
    assert_eq!(f(&s, "flows.0.timeouts"), 0.0);
    assert!((gp / 1.923 - 1.0).abs() <= 0.02, "goodput {gp:.3} vs Linux 1.923");
    // 20 %: since receive-buffer autotuning (issue 15) the flow is receive-window-limited in
    // its first recovery (2 s of queue), as the Linux flow is (emulated, kernel 6.18: the
    // sender's window stuck at 753 segments from 12 to 14.5 s, here at 769), and loses fewer
    // packets than Linux afterwards (372 against Linux's 454 in that emulation).
    assert!((drops / 453.0 - 1.0).abs() <= 0.20, "drops {drops} vs Linux 453");
    assert!((retx / 428.0 - 1.0).abs() <= 0.20, "retransmissions {retx} vs Linux 428");
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
    assert!((delayed - quick - 0.040).abs() < 1e-3, "quick-ACK {quick:.4}s vs delayed {delayed:.4}s");
}

/// Each switch is read from [tcp] and from a flow's own tcp table, and changes the run
/// (on scenario I: PRR keeps the ACK clock in recovery; RACK and the SACK-driven timer keep
/// the first recovery free of a timeout only together with the rest); `rtt_sample` too.
#[test]
fn switches_are_read_and_runs_stay_deterministic() {
    let strip = |mut v: serde_json::Value| {
        v.as_object_mut().unwrap().remove("engine"); // wall-clock figures
        v
    };
    let base = strip(wang_i(""));
    assert_eq!(base, strip(wang_i("")), "same scenario, same results");
    let no_prr = wang_i("prr = false");
    assert_ne!(f(&base, "bottleneck.drops"), f(&no_prr, "bottleneck.drops"));
    let ts = strip(wang_i("rtt_sample = \"timestamp\"\nquickack = false"));
    assert_ne!(base, ts);
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
    for key in ["prr", "frto", "undo", "dsack", "rack", "tlp", "quickack", "rcvbuf_auto", "sack_compress", "gso"] {
        assert_eq!(err(&format!("{key} = 1"), ""), format!("tcp.{key}: expected true or false, got an integer"));
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
}
