//! Latency-under-load building blocks: echoed UDP probes (irtt-like), voice-like frames with
//! RFC 3550 jitter, and flows in both directions over one bottleneck pair.

use crate::common;
use bloatlab_sim::{run_toml, RunOptions};
use common::{f, run};

/// On an idle path a probe's round trip is exactly the propagation delay plus the
/// serialization of its datagram at every hop (92 B on the wire: 64 B of payload + 28 B of
/// headers), and its one-way delay half of that; no probe is lost and there is no jitter.
#[test]
fn probe_alone_measures_the_base_rtt_exactly() {
    let s = run(r#"
        duration = "10s"
        [topology]
        bottleneck = { rate = "10Mbps", delay = "10ms" }
        access = { rate = "100Mbps", delay = "2ms" }
        [[flows]]
        transport = "udp"
        app = "probe"
    "#);
    let ser_one_way_ms = 92.0 * 8.0 * (2.0 / 100e6 + 1.0 / 10e6) * 1e3;
    let rtt = f(&s, "flows.0.rtt_mean_ms");
    assert!((rtt - (28.0 + 2.0 * ser_one_way_ms)).abs() < 1e-6, "rtt {rtt}");
    assert!((f(&s, "flows.0.owd_mean_ms") - (14.0 + ser_one_way_ms)).abs() < 1e-6);
    assert_eq!(f(&s, "flows.0.loss_pct"), 0.0);
    assert_eq!(f(&s, "flows.0.jitter_ms"), 0.0);
    // 200 ms apart for 10 s: 50 probes, each delivered once (the echoes are not app data).
    assert_eq!(f(&s, "flows.0.datagrams_delivered"), 50.0);
    assert_eq!(s["flows"][0]["cc"], "none");
}

/// Under load the probe sees the standing queue: behind two bulk flows filling a 250 KB
/// drop-tail buffer at 10 Mbit/s, its round trip grows by about the mean sojourn of the
/// forward queue (ACKs keep the reverse queue nearly empty). The probe samples the queue at
/// its own instants, the summary averages over packets, so they agree within 10 %.
#[test]
fn probe_under_load_sees_the_queue() {
    let s = run(r#"
        duration = "20s"
        warmup = "5s"
        [topology]
        bottleneck = { rate = "10Mbps", delay = "10ms" }
        bottleneck_queue = { limit = "250KB" }
        access = { rate = "100Mbps", delay = "2ms" }
        [[flows]]
        cc = "cubic"
        count = 2
        [[flows]]
        transport = "udp"
        app = "probe"
        interval = "50ms"
    "#);
    let added = f(&s, "flows.2.rtt_mean_ms") - f(&s, "flows.2.base_rtt_ms");
    let sojourn = f(&s, "bottleneck.mean_sojourn_ms");
    assert!(sojourn > 100.0, "the buffer should be bloated: {sojourn} ms");
    assert!((added / sojourn - 1.0).abs() < 0.10, "added {added} ms vs sojourn {sojourn} ms");
    assert!(f(&s, "flows.2.rtt_p95_ms") >= f(&s, "flows.2.rtt_mean_ms"));
}

/// Voice frames: 172 B every 20 ms, one way. Idle: no jitter and 50 frames a second.
/// Beside a bulk flow on a drop-tail queue the transit time varies, so jitter is positive.
#[test]
fn voip_jitter_is_zero_idle_and_positive_under_load() {
    let base = r#"
        duration = "10s"
        [topology]
        bottleneck = { rate = "5Mbps", delay = "10ms" }
        bottleneck_queue = { limit = "100KB" }
        access = { rate = "100Mbps", delay = "2ms" }
        [[flows]]
        transport = "udp"
        app = "voip"
    "#;
    let idle = run(base);
    assert_eq!(f(&idle, "flows.0.jitter_ms"), 0.0);
    assert_eq!(f(&idle, "flows.0.datagrams_delivered"), 500.0);
    assert!(idle["flows"][0]["rtt_mean_ms"].is_null(), "voice frames are one-way");
    let loaded = run(&format!("{base}\n[[flows]]\ncc = \"cubic\"\n"));
    let j = f(&loaded, "flows.0.jitter_ms");
    assert!(j > 0.05, "jitter {j} ms under load");
    assert!(f(&loaded, "flows.0.owd_mean_ms") > f(&idle, "flows.0.owd_mean_ms") + 20.0);
}

/// A home link, 20 Mbit/s down and 4 up. An upload alone gets its direction's rate; a
/// download beside it suffers what two-way traffic does to TCP over drop-tail queues (Zhang,
/// Shenker & Clark 1991): its ACKs wait behind the upload's data in the uplink queue (50 KB at
/// 4 Mbit/s = 100 ms), so its RTT grows by most of that queue and its ACKs arrive bunched,
/// sending bursts into the downlink buffer. The download alone fills the link.
#[test]
fn flows_in_both_directions_share_the_bottleneck_pair() {
    let path = r#"
        duration = "20s"
        warmup = "5s"
        [topology]
        bottleneck = { rate = "20Mbps", reverse_rate = "4Mbps", delay = "10ms" }
        bottleneck_queue = { limit = "100KB" }
        reverse_queue = { limit = "50KB" }
        access = { rate = "1Gbps", delay = "2ms" }
        [[flows]]
        cc = "cubic"
        group = "down"
    "#;
    let alone = run(path);
    let down_alone = f(&alone, "flows.0.goodput_mbps");
    // Payload share of a 1500 B packet: 1448 / 1500 = 0.965.
    assert!(
        down_alone > 20.0 * 0.95 && down_alone < 20.0 * 0.966,
        "download alone {down_alone} Mbit/s"
    );
    let s = run(&format!(
        "{path}\n[[flows]]\ncc = \"cubic\"\ngroup = \"up\"\ndirection = \"reverse\"\n"
    ));
    let down = f(&s, "flows.0.goodput_mbps");
    let up = f(&s, "flows.1.goodput_mbps");
    // The upload's own ACKs cross the downlink queue: a few percent of its rate is lost to
    // its own slow-start and recovery, not to the download.
    assert!(up > 4.0 * 0.85 && up < 4.0 * 0.966, "upload {up} Mbit/s");
    let base = f(&s, "flows.0.base_rtt_ms");
    let rtt = f(&s, "flows.0.rtt_mean_ms");
    assert!(rtt > base + 50.0, "download RTT {rtt} ms should include the uplink queue");
    assert!(down < 0.8 * down_alone, "download {down} vs {down_alone} alone: no two-way penalty?");
    assert!(down > 0.25 * down_alone, "download {down} Mbit/s starved");
}

/// The same scenario and seed give the same summary, byte for byte, with probes, voice and
/// both directions in it.
#[test]
fn latency_under_load_runs_are_deterministic() {
    let toml = r#"
        duration = "5s"
        [topology]
        bottleneck = { rate = "10Mbps", reverse_rate = "2Mbps", delay = "10ms" }
        [[flows]]
        cc = "cubic"
        start = { uniform = ["0s", "1s"] }
        count = 2
        [[flows]]
        cc = "reno"
        direction = "reverse"
        [[flows]]
        transport = "udp"
        app = "probe"
        interval = "10ms"
        [[flows]]
        transport = "udp"
        app = "voip"
        direction = "reverse"
    "#;
    let strip = |j: String| -> String {
        let mut v: serde_json::Value = serde_json::from_str(&j).unwrap();
        v["engine"]["wall_s"] = 0.into();
        v["engine"]["packets_per_wall_s"] = 0.into();
        v["engine"]["setup_s"] = 0.into();
        v.to_string()
    };
    let a = run_toml(toml, &RunOptions { seed: Some(3), ..Default::default() }).unwrap();
    let b = run_toml(toml, &RunOptions { seed: Some(3), ..Default::default() }).unwrap();
    assert_eq!(strip(a.summary_json), strip(b.summary_json));
}

fn invalid(flow: &str) -> (String, String) {
    let toml = format!(
        "duration = \"1s\"\n[topology]\nbottleneck = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n[[flows]]\n{flow}\n"
    );
    let e = run_toml(&toml, &RunOptions::default()).expect_err("must be rejected");
    let s = e.to_string();
    let (path, msg) = s.split_once(": ").expect("path: message");
    (path.to_string(), msg.to_string())
}

#[test]
fn bad_probe_and_direction_settings_name_their_key() {
    let (p, m) = invalid("transport = \"udp\"\napp = \"probe\"\ninterval = \"0s\"");
    assert_eq!(p, "flows[0].interval");
    assert!(m.contains("greater than 0"), "{m}");
    let (p, m) = invalid("transport = \"udp\"\napp = \"probe\"\nrate = \"1Mbps\"");
    assert_eq!(p, "flows[0].rate");
    assert!(m.contains("cbr"), "{m}");
    let (p, _) = invalid("transport = \"udp\"\nrate = \"1Mbps\"\ninterval = \"10ms\"");
    assert_eq!(p, "flows[0].interval");
    let (p, m) = invalid("cc = \"cubic\"\napp = \"probe\"");
    assert_eq!(p, "flows[0].app");
    assert!(m.contains("UDP"), "{m}");
    let (p, m) = invalid("cc = \"cubic\"\ninterval = \"10ms\"");
    assert_eq!(p, "flows[0].interval");
    assert!(m.contains("not a setting of tcp flows"), "{m}");
    let (p, m) = invalid("transport = \"udp\"\napp = \"game\"");
    assert_eq!(p, "flows[0].app");
    assert!(m.contains("probe"), "{m}");
    let (p, m) = invalid("cc = \"cubic\"\ndirection = \"up\"");
    assert_eq!(p, "flows[0].direction");
    assert!(m.contains("forward") && m.contains("reverse"), "{m}");
    let (p, _) = invalid("transport = \"dccp\"\ncc = \"ccid2\"\ninterval = \"10ms\"");
    assert_eq!(p, "flows[0].interval");
}
