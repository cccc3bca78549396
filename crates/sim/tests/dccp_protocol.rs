//! DCCP as a protocol: handshake, header overhead, the two applications, loss detection in
//! a run, pcap, and scenario validation.

use crate::common;
use bloatlab_sim::{run_toml, RunError, RunOptions};
use common::{f, run};

const PATH: &str = r#"
    [topology]
    bottleneck = { rate = "20Mbps", delay = "20ms" }
    bottleneck_queue = { kind = "droptail", limit = "200p" }
    access = { rate = "1Gbps", delay = "1ms" }
"#;

fn scenario(extra_topology: &str, flow: &str) -> String {
    format!("duration = \"10s\"\n{PATH}{extra_topology}\n[[flows]]\ntransport = \"dccp\"\n{flow}\n")
}

/// Alone on a clean path every controller fills the link, minus header overhead: a 1460-byte
/// datagram is 1496 bytes on the wire (IPv4 20 + DCCP 16), and ACKs do not share the
/// forward link.
#[test]
fn greedy_flows_fill_a_clean_link() {
    for cc in ["ccid2", "bbr", "bbr-adaptive"] {
        let s = run(&scenario("", &format!("cc = \"{cc}\"")));
        let g = f(&s, "flows.0.goodput_mbps");
        let max = 20.0 * 1460.0 / 1496.0;
        // Start-up (handshake, slow start / STARTUP) costs part of the first second or two.
        assert!(g > 0.85 * max && g <= max, "{cc}: goodput {g} of {max}");
        // No retransmissions: throughput counts each datagram once.
        assert!(f(&s, "flows.0.throughput_mbps") >= g);
        assert_eq!(f(&s, "flows.0.retransmits"), 0.0);
        let rtt = f(&s, "flows.0.rtt_mean_ms");
        assert!(rtt >= 44.0, "{cc}: rtt {rtt}");
        if cc != "ccid2" {
            // BBR's window (2 BDP in flight) bounds the queue to about one BDP: RTT below
            // twice the 44 ms base (+10 %), where CCID2 fills the 200-packet queue (+120 ms).
            // (The paper's per-packet sample, delivered / RTT, runs ~1.5 % high through the
            // max filter here, so the queue does creep up to that bound: measured 82 ms.)
            assert!(rtt < 97.0, "{cc}: rtt {rtt}");
            assert_eq!(f(&s, "flows.0.loss_pct"), 0.0, "{cc}");
        }
    }
}

/// The constant-rate application sends its rate when the controller allows it, with the
/// one-way delay of an idle path.
#[test]
fn cbr_application_sends_its_rate() {
    let s = run(&scenario("", "cc = \"ccid2\"\napp = \"cbr\"\nrate = \"5Mbps\""));
    // The rate counts wire bytes; goodput counts payload.
    let expect = 5.0 * 1460.0 / 1496.0;
    let g = f(&s, "flows.0.goodput_mbps");
    // The first datagrams wait for the handshake (one RTT) and slow start (a few RTTs).
    assert!((g / expect - 1.0).abs() < 0.03, "goodput {g} vs {expect}");
    let owd = f(&s, "flows.0.owd_mean_ms");
    assert!(owd > 22.0 && owd < 25.0, "owd {owd}");
    assert_eq!(f(&s, "flows.0.loss_pct"), 0.0);
}

/// A lost Request is repeated after 1 s; the flow then runs normally.
#[test]
fn lost_request_is_repeated_after_one_second() {
    let clean = run(&scenario("", "cc = \"bbr\""));
    let lossy = run(&scenario("", "cc = \"bbr\"")
        .replace("delay = \"20ms\" }", "delay = \"20ms\", drop_packets = [0] }"));
    let (a, b) = (f(&clean, "flows.0.bytes_delivered"), f(&lossy, "flows.0.bytes_delivered"));
    // About one second of a 20 Mbit/s flow is missing (±0.3 s for start-up differences).
    let missing_s = (a - b) * 8.0 / 20e6 * 1496.0 / 1460.0;
    assert!(missing_s > 0.7 && missing_s < 1.3, "missing {missing_s} s");
}

/// A single dropped data packet is found from the Ack Vectors (three later packets received)
/// and costs CCID2 exactly one halving; nothing is retransmitted.
#[test]
fn one_drop_is_one_congestion_event() {
    // Drop a packet well after slow start (the 200-packet queue overflows once in slow
    // start, so count events against a run without the extra drop).
    let base = run(&scenario("", "cc = \"ccid2\""));
    let one = run(&scenario("", "cc = \"ccid2\"")
        .replace("delay = \"20ms\" }", "delay = \"20ms\", drop_packets = [14000] }"));
    let (r0, r1) = (f(&base, "flows.0.recoveries"), f(&one, "flows.0.recoveries"));
    assert_eq!(r1, r0 + 1.0, "halvings {r0} → {r1}");
    assert_eq!(f(&one, "flows.0.timeouts"), 0.0);
}

/// The pcap writer emits DCCP headers (IP protocol 33).
#[test]
fn pcap_has_dccp_headers() {
    let dir = std::env::temp_dir().join(format!("bloatlab-dccp-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = format!(
        "{}\n[capture]\nlinks = [\"bottleneck\", \"bottleneck_rev\"]\n",
        scenario("", "cc = \"bbr\"")
    )
    .replace("duration = \"10s\"", "duration = \"0.5s\"");
    run_toml(&toml, &RunOptions { capture_dir: Some(dir.clone()), ..Default::default() }).unwrap();
    for (name, first_type) in [("bottleneck", 0u8), ("bottleneck_rev", 1u8)] {
        let b = std::fs::read(dir.join(format!("{name}.pcap"))).unwrap();
        // Global header 24 bytes, record header 16, then IPv4.
        let ip = &b[40..];
        assert_eq!(ip[0], 0x45);
        assert_eq!(ip[9], 33, "{name}: IP protocol");
        let dccp = &ip[20..];
        // Type (Request on the forward link, Response on the reverse) and X = 1.
        assert_eq!(dccp[8] >> 1 & 0x0F, first_type, "{name}");
        assert_eq!(dccp[8] & 1, 1);
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn invalid(flow: &str) -> (String, String) {
    match run_toml(&scenario("", flow), &RunOptions::default()) {
        Err(RunError::Invalid(e)) => (e.path, e.message),
        Err(e) => panic!("expected a scenario error, got {e}"),
        Ok(_) => panic!("expected a scenario error for {flow:?}"),
    }
}

#[test]
fn bad_dccp_settings_name_their_key_paths() {
    let (p, m) = invalid("cc = \"ccid3\"");
    assert_eq!(p, "flows[0].cc");
    assert!(m.contains("ccid2") && m.contains("bbr-adaptive"), "{m}");
    let (p, _) = invalid("cc = \"cubic\"");
    assert_eq!(p, "flows[0].cc");
    assert_eq!(invalid("").0, "flows[0].cc");
    assert_eq!(invalid("cc = \"ccid2\"\nack_ratio = 0").0, "flows[0].ack_ratio");
    assert_eq!(invalid("cc = \"ccid2\"\nack_ratio = -2").0, "flows[0].ack_ratio");
    assert_eq!(invalid("cc = \"bbr-adaptive\"\nloss_window = \"0s\"").0, "flows[0].loss_window");
    assert_eq!(invalid("cc = \"bbr-adaptive\"\nloss_window = \"-1s\"").0, "flows[0].loss_window");
    assert_eq!(invalid("cc = \"bbr\"\napp = \"web\"").0, "flows[0].app");
    assert_eq!(invalid("cc = \"bbr\"\napp = \"cbr\"").0, "flows[0].rate");
    assert_eq!(invalid("cc = \"bbr\"\nrate = \"1Mbps\"").0, "flows[0].rate");
    assert_eq!(invalid("cc = \"bbr\"\nsize = \"5MB\"").0, "flows[0].size");
    assert_eq!(invalid("cc = \"bbr\"\ntcp = { mss = 1000 }").0, "flows[0].tcp");
    assert_eq!(invalid("cc = \"bbr\"\npacket_size = \"0B\"").0, "flows[0].packet_size");
    // DCCP-only keys on a TCP flow.
    let toml = format!("duration = \"1s\"\n{PATH}\n[[flows]]\ncc = \"reno\"\nack_ratio = 2\n");
    match run_toml(&toml, &RunOptions::default()) {
        Err(RunError::Invalid(e)) => assert_eq!(e.path, "flows[0].ack_ratio"),
        _ => panic!("expected a scenario error"),
    }
}

/// Same scenario and seed, same summary (wall-clock fields aside), across controllers and
/// under loss.
#[test]
fn dccp_runs_are_deterministic() {
    for cc in ["ccid2", "bbr-adaptive"] {
        let toml = scenario("", &format!("cc = \"{cc}\""))
            .replace("delay = \"20ms\" }", "delay = \"20ms\", loss = 0.05 }");
        let a = run(&toml);
        let b = run(&toml);
        let strip = |mut v: serde_json::Value| {
            v["engine"]["wall_s"] = 0.into();
            v["engine"]["packets_per_wall_s"] = 0.into();
            v["engine"]["setup_s"] = 0.into();
            v
        };
        assert_eq!(strip(a), strip(b), "{cc}");
    }
}
