//! Interactive video (`app = "video"`, udp/video.rs, app/video/): the issue's targets on a
//! 10 Mbit/s path of 40 ms base RTT (one way 2.5 + 15 + 2.5 = 20 ms), the refusals of bad
//! video settings, and same seed, same bytes.
//!
//! Numbers of this build (`cargo test --release -p bloatlab-sim --test integration video:: -- --nocapture`
//! prints them), 30 s runs measured after a 10 s warm-up, NACK/RTX on (the default):
//! - alone on FQ-CoDel: GCC 9.17 Mbit/s, frame loss 0.00 %, frame delay p95 52.4 ms (no
//!   overshoot of the link in this window); over 130 s: p95 172.6 ms, 362 frames repaired
//!   by 1027 retransmissions, 27.66 % lost with `nack = false`; SCReAM 9.35 Mbit/s, p95
//!   59.8 ms;
//! - 1 % random loss, GCC at 4 Mbit/s: frame loss 9.44 % without repair (theory 11.4 %),
//!   0.00 % with it (52 frames repaired by 60 retransmissions for 60 losses);
//! - beside 2 CUBIC on a 1 s drop-tail buffer: p95 1873 ms (GCC), 2001 ms (SCReAM);
//! - SCReAM beside 2 CUBIC on a 300 ms drop-tail buffer: frame loss 25.19 % without its
//!   competing-flow compensation, 0.00 % with it (frame delay p50 1241 → 278 ms);
//! - SCReAM-L4S beside CUBIC on DualPI2: packets' one-way p95 22.3 ms, frame delay p95 39.0 ms.

use crate::common;
use common::{f, refused, run, summary_and_series};

const BASE_OWD_MS: f64 = 20.0;

fn path(queue: &str, flows: &str) -> String {
    format!(
        r#"
        duration = "30s"
        warmup = "10s"
        [topology]
        bottleneck = {{ rate = "10Mbps", delay = "15ms" }}
        bottleneck_queue = {queue}
        access = {{ rate = "100Mbps", delay = "2.5ms" }}
        {flows}
        "#
    )
}

fn video(cc: &str, extra: &str) -> String {
    format!("[[flows]]\ntransport = \"udp\"\napp = \"video\"\ncc = \"{cc}\"\n{extra}\n")
}

fn report(label: &str, s: &serde_json::Value) {
    println!(
        "{label}: goodput {:.2} Mbit/s, utilisation {:.1} %, frame delay p50 {:.1} p95 {:.1} p99 {:.1} ms, owd p95 {:.1} ms, frame loss {:.2} %, freezes {}, frames repaired {}, rtx packets {}",
        f(s, "flows.0.goodput_mbps"),
        f(s, "bottleneck.utilization_pct"),
        f(s, "flows.0.frame_delay_p50_ms"),
        f(s, "flows.0.frame_delay_p95_ms"),
        f(s, "flows.0.frame_delay_p99_ms"),
        f(s, "flows.0.owd_p95_ms"),
        f(s, "flows.0.frame_loss_pct"),
        f(s, "flows.0.freezes"),
        f(s, "flows.0.frames_repaired"),
        f(s, "flows.0.rtx_packets"),
    );
}

/// Alone on FQ-CoDel, both fill the link: ≥ 80 % of 10 Mbit/s after the 10 s warm-up (the
/// issue's target). GCC gets there by probing (probe.rs): its 3× and 6× start probes and the
/// 2× further probes find the link in 0.2 s, where the multiplicative ramp of
/// draft-ietf-rmcat-gcc-02 §5.5 alone (8 %/s from 1 Mbit/s) averaged 5.1 Mbit/s over
/// 10-30 s. SCReAM's frame delay p95 ≤ base one-way delay + 50 ms (FQ-CoDel keeps the queue
/// near its 5 ms target; the rest is the frame's own transmission).
///
/// GCC's frame delay is bounded, here and over a long call (next test), by the issue's
/// 50 ms plus one base RTT (a NACK-RTX round trip: a frame repaired after a drop) plus
/// FQ-CoDel's 100 ms interval of queue it lets build before dropping: 20 + 50 + 40 + 100 ms.
/// In this window (10-30 s) it meets the issue's 70 ms (52.4 ms), but only because its
/// overshoots of the link — GCC "depends on over-using the channel" (§5.5) — come every
/// 35-45 s at its additive increase of half a packet per response time (at 41-52, 84-87 and
/// 119-122 s in the next test's run), and none falls in it.
#[test]
fn alone_on_fq_codel_the_link_fills_and_frames_stay_fast() {
    let q = r#"{ kind = "fq_codel" }"#;
    let gcc = run(&path(q, &video("gcc", "")));
    report("gcc alone", &gcc);
    let g = f(&gcc, "flows.0.goodput_mbps");
    assert!(g >= 8.0, "GCC goodput {g} Mbit/s of 10");
    assert!(f(&gcc, "bottleneck.utilization_pct") >= 80.0);
    let loss = f(&gcc, "flows.0.frame_loss_pct");
    assert!(loss <= 2.0, "GCC frame loss {loss} % with NACK/RTX");
    let p95 = f(&gcc, "flows.0.frame_delay_p95_ms");
    assert!(p95 <= BASE_OWD_MS + 50.0 + 40.0 + 100.0, "GCC frame delay p95 {p95} ms");
    let scream = run(&path(q, &video("scream", "")));
    report("scream alone", &scream);
    let s = f(&scream, "flows.0.goodput_mbps");
    assert!(s >= 8.0, "SCReAM goodput {s} Mbit/s of 10");
    assert!(f(&scream, "bottleneck.utilization_pct") >= 80.0);
    assert!(f(&scream, "flows.0.frame_loss_pct") <= 2.0);
    let p95 = f(&scream, "flows.0.frame_delay_p95_ms");
    assert!(p95 <= BASE_OWD_MS + 50.0, "scream: frame delay p95 {p95} ms");
    for (name, v) in [("gcc", &gcc), ("scream", &scream)] {
        assert!(
            f(v, "flows.0.frame_delay_p50_ms") >= BASE_OWD_MS,
            "{name}: below the path's delay"
        );
    }
}

/// GCC alone on FQ-CoDel over a long call (120 s measured). Near the link its delay-based
/// estimate grows by half a packet per response time (§5.5: 0.5 × 9600 bit / 0.14 s ≈
/// 34 kbit/s a second) until it sends more than the link; FQ-CoDel then keeps the queue
/// short by dropping, so the delay slope stays under the detector's threshold (the draft,
/// §6: with short queues over-use shows only as loss) and the overshoot ends when CoDel's
/// drops pass the loss controller's 10 % in a report or the queue grows fast enough for the
/// detector.
/// So frames are lost to drops in every overshoot: without repair (`nack = false`) more
/// than 10 % of them (a frame of ~30 packets loses one), with NACK/RTX none (≤ 2 %: a
/// frame is lost only if a packet fails 10 requests), at the price of a NACK-RTX round trip
/// for the repaired ones, within the bound of the test above.
#[test]
fn gcc_alone_over_a_long_call_overshoots_and_repair_covers_the_drops() {
    let q = r#"{ kind = "fq_codel" }"#;
    let long = |extra: &str| run(&path(q, &video("gcc", extra)).replace("30s", "130s"));
    let s = long("");
    report("gcc alone, 130 s", &s);
    assert!(f(&s, "flows.0.frame_loss_pct") <= 2.0);
    assert!(f(&s, "flows.0.frames_repaired") > 0.0 && f(&s, "flows.0.rtx_packets") > 0.0);
    let p95 = f(&s, "flows.0.frame_delay_p95_ms");
    assert!(p95 <= BASE_OWD_MS + 50.0 + 40.0 + 100.0, "GCC frame delay p95 {p95} ms");
    let bare = long("video = { nack = false }");
    report("gcc alone, 130 s, nack = false", &bare);
    let bare_loss = f(&bare, "flows.0.frame_loss_pct");
    assert!(bare_loss > 10.0, "without repair: {bare_loss} %");
    assert_eq!(f(&bare, "flows.0.rtx_packets"), 0.0);
}

/// Repair against theory, on a path without congestion: 1 % random loss on the 10 Mbit/s
/// bottleneck (data direction only, so NACKs arrive), GCC capped at 4 Mbit/s (it reaches the
/// cap: the path is not the limit). A frame is 4 Mbit/s / 30 fps = 16 667 B, k = 12 packets
/// of at most 1460 B of media (1500 − 20 IP − 8 UDP − 12 RTP). Without repair a frame is lost
/// when any of its packets is: 1 − 0.99^12 = 11.4 % of the 540 judged frames (20 s window
/// less the 2 s grace, × 30), binomial standard deviation 1.4 points: ± 3 SD allowed. With
/// repair a frame is lost only if a packet is lost 11 times (1e-22): none; the same share of
/// frames is repaired instead; every random loss — of a packet or of its retransmission — is
/// answered by one retransmission (± 3 at the window's edges); and a repaired frame arrives at
/// most one frame interval (the lost packet may be a frame's last, seen missing only when the
/// next frame starts) plus one base RTT (NACK out, RTX back) plus 5 ms (pacing and
/// serialisation of a packet) after the median frame.
#[test]
fn nack_rtx_repairs_random_loss_as_theory_says() {
    let lossy = |nack: bool| {
        let toml = format!(
            r#"
            duration = "30s"
            warmup = "10s"
            [topology]
            bottleneck = {{ rate = "10Mbps", delay = "15ms", loss = 0.01 }}
            access = {{ rate = "100Mbps", delay = "2.5ms" }}
            {}"#,
            video("gcc", &format!("video = {{ max_rate = \"4Mbps\", nack = {nack} }}"))
        );
        run(&toml)
    };
    let (judged, k) = (540.0, (4e6_f64 / 30.0 / 8.0 / 1460.0).ceil());
    let expect = 1.0 - 0.99_f64.powf(k);
    let sd = (expect * (1.0 - expect) / judged).sqrt();
    let bare = lossy(false);
    report("gcc 4 Mbit/s, 1 % random loss, nack = false", &bare);
    let lost = f(&bare, "flows.0.frame_loss_pct") / 100.0;
    assert!((lost - expect).abs() <= 3.0 * sd, "lost {lost} vs 1 − 0.99^{k} = {expect}");
    let s = lossy(true);
    report("gcc 4 Mbit/s, 1 % random loss, nack = true", &s);
    assert!(f(&s, "flows.0.goodput_mbps") >= 3.8, "at the cap");
    assert_eq!(f(&s, "flows.0.frame_loss_pct"), 0.0);
    let repaired = f(&s, "flows.0.frames_repaired") / judged;
    assert!((repaired - expect).abs() <= 3.0 * sd, "repaired {repaired} vs {expect}");
    let (rtx, losses) = (f(&s, "flows.0.rtx_packets"), f(&s, "bottleneck.random_losses"));
    assert!((rtx - losses).abs() <= 3.0, "{rtx} retransmissions for {losses} losses");
    let (p50, p99) = (f(&s, "flows.0.frame_delay_p50_ms"), f(&s, "flows.0.frame_delay_p99_ms"));
    assert!(p99 <= p50 + 1000.0 / 30.0 + 2.0 * BASE_OWD_MS + 5.0, "p50 {p50} p99 {p99}");
}

/// Beside two CUBIC flows on a drop-tail buffer of 1 s (1.25 MB at 10 Mbit/s): CUBIC keeps it
/// nearly full, so every frame waits about a second — p95 > 500 ms, bufferbloat made visible.
#[test]
fn beside_cubic_on_a_bloated_buffer_frames_wait_a_second() {
    let q = r#"{ kind = "droptail", limit = "1250000B" }"#;
    for cc in ["gcc", "scream"] {
        let s = run(&path(q, &format!("{}[[flows]]\ncc = \"cubic\"\ncount = 2\n", video(cc, ""))));
        report(&format!("{cc} beside 2 cubic, drop-tail 1 s"), &s);
        let p95 = f(&s, "flows.0.frame_delay_p95_ms");
        assert!(p95 > 500.0, "{cc}: frame delay p95 {p95} ms");
    }
}

/// SCReAM in its L4S mode beside a CUBIC flow on DualPI2 (1 ms L4S step threshold): its
/// packets see an almost empty L queue, one-way p95 ≤ base + 10 ms (the issue's bound).
/// The frame delay adds what no queue can remove: the pacer spreads a frame over 1/1.5 of
/// the 33.3 ms frame interval (SCReAMv2's PACKET_PACING_HEADROOM), 22.2 ms, so the frame
/// bound is base + 10 ms + 22.2 ms; the issue's base + 10 ms is not met by frames (39.0 ms):
/// the draft relaxes pacing only as the target nears `max_rate` (docs/latency-under-load.md).
#[test]
fn scream_l4s_on_dualpi2_keeps_its_packets_near_the_base_delay() {
    let flows = format!("{}[[flows]]\ncc = \"cubic\"\n", video("scream", "video = { l4s = true }"));
    let s = run(&path(r#"{ kind = "dualpi2" }"#, &flows));
    report("scream-l4s beside cubic, dualpi2", &s);
    let owd = f(&s, "flows.0.owd_p95_ms");
    assert!(owd <= BASE_OWD_MS + 10.0, "one-way p95 {owd} ms");
    let p95 = f(&s, "flows.0.frame_delay_p95_ms");
    assert!(p95 <= BASE_OWD_MS + 10.0 + 1000.0 / 30.0 / 1.5, "frame delay p95 {p95} ms");
    assert_eq!(f(&s, "flows.0.frame_loss_pct"), 0.0);
}

/// SCReAM's competing-flow compensation (RFC 8298 §4.1.2, kept by SCReAMv2), beside two
/// CUBIC flows on a 300 ms drop-tail buffer (375 000 B at 10 Mbit/s). CUBIC holds the queue
/// between about 200 and 300 ms (a loss halves one flow's share of the 40 ms + 300 ms pipe
/// by 30 %) and its overflows drop SCReAM's packets too. Without the compensation the
/// qdelay target stays at QDELAY_TARGET_LO, 60 ms: the delay back-off is in full from 60 ms,
/// so the window sits at MIN_REF_WND (3000 B), which lets out 1.5 × 3000 B a round trip of
/// 0.24-0.33 s, 110-150 kbit/s, at or below the encoder's 150 kbit/s minimum: frames wait in
/// the sender's queue until it discards them (a second old), more than 5 % of them. With it,
/// the loss raises the target to 1.5 × (average + deviation) of the queue, held to
/// QDELAY_TARGET_HI (400 ms), then the steady queue keeps it near the queue: the back-off
/// starts only at half the target, the window leaves its minimum and carries the minimum
/// rate, so no frame waits a second (frame loss ≤ 1 %: none but a burst at a drop) and the
/// median frame is no later than the network's worst (base one way 20 ms + a full 300 ms
/// buffer) plus one frame interval of pacing. It does not win SCReAM a fair share: the
/// draft keeps the delay back-off above half the target and only ~1 MSS a round trip of
/// increase after a loss (measured in docs/latency-under-load.md).
#[test]
fn scream_compensation_keeps_frames_flowing_beside_cubic_on_a_300ms_buffer() {
    let q = r#"{ kind = "droptail", limit = "375000B" }"#;
    let go = |extra: &str| {
        let s = run(&path(
            q,
            &format!("{}[[flows]]\ncc = \"cubic\"\ncount = 2\n", video("scream", extra)),
        ));
        let label = if extra.is_empty() { "compensation on" } else { "compensation = false" };
        report(&format!("scream beside 2 cubic, drop-tail 300 ms, {label}"), &s);
        s
    };
    let off = go("video = { compensation = false }");
    let on = go("");
    let lost_off = f(&off, "flows.0.frame_loss_pct");
    assert!(lost_off > 5.0, "without compensation: {lost_off} % of frames lost");
    assert!(f(&on, "flows.0.frame_loss_pct") <= 1.0);
    let p50 = f(&on, "flows.0.frame_delay_p50_ms");
    assert!(p50 <= BASE_OWD_MS + 300.0 + 1000.0 / 30.0, "frame delay p50 {p50} ms");
    assert!(f(&on, "flows.0.goodput_mbps") > f(&off, "flows.0.goodput_mbps"));
}

/// Alone on FQ-CoDel and in L4S mode on DualPI2 the queue SCReAM sees stays short and
/// steady, so the compensation never raises the target above QDELAY_TARGET_LO: the runs
/// with and without it are identical, to the byte (the numbers of the tests above).
#[test]
fn scream_compensation_changes_nothing_on_short_queues() {
    let cases = [
        (r#"{ kind = "fq_codel" }"#, String::new(), ""),
        (r#"{ kind = "dualpi2" }"#, "[[flows]]\ncc = \"cubic\"\n".to_string(), "l4s = true, "),
    ];
    for (q, others, l4s) in cases {
        let with = |on: bool| {
            let v = video("scream", &format!("video = {{ {l4s}compensation = {on} }}"));
            let s = run(&path(q, &format!("{v}{others}")));
            (s["flows"].to_string(), s["bottleneck"].to_string())
        };
        assert_eq!(with(true), with(false), "{q}");
    }
}

#[test]
fn same_seed_same_bytes_for_a_video_flow() {
    let flows = format!("{}[[flows]]\ncc = \"cubic\"\nstart = \"2s\"\n", video("gcc", ""));
    let toml = path(r#"{ kind = "droptail", limit = "200p" }"#, &flows)
        .replace("30s", "8s")
        .replace("10s", "1s");
    let go = || summary_and_series(&toml, 7);
    let a = go();
    assert!(a.contains("frame_delay_p95_ms"));
    assert_eq!(a, go());
}

fn flow(keys: &str) -> String {
    let topology = "[topology]\nbottleneck = { rate = \"10Mbps\", delay = \"5ms\" }";
    format!("duration = \"1s\"\n{topology}\n[[flows]]\n{keys}\n")
}

#[test]
fn bad_video_settings_are_refused_with_their_key() {
    let v = "transport = \"udp\"\napp = \"video\"\ncc = \"gcc\"\n";
    refused(&flow(&format!("{v}video = {{ fps = 0 }}")), "flows[0].video.fps", "");
    refused(&flow("app = \"video\"\ncc = \"gcc\""), "flows[0].app", "set transport = \"udp\"");
    refused(&flow("cc = \"gcc\""), "flows[0].cc", "video rate controller");
    refused(
        &flow("transport = \"udp\"\ncc = \"scream\"\nrate = \"1Mbps\""),
        "flows[0].cc",
        "app = \"video\"",
    );
    refused(&flow("transport = \"udp\"\napp = \"video\""), "flows[0].cc", "missing required key");
    refused(&flow("transport = \"udp\"\napp = \"video\"\ncc = \"cubic\""), "flows[0].cc", "gcc");
    refused(
        &flow(&format!("{v}video = {{ min_rate = \"5Mbps\", max_rate = \"2Mbps\" }}")),
        "flows[0].video.min_rate",
        "must not exceed max_rate",
    );
    refused(
        &flow(&format!("{v}video = {{ start_rate = \"50Mbps\" }}")),
        "flows[0].video.start_rate",
        "between min_rate and max_rate",
    );
    refused(
        &flow(&format!("{v}video = {{ max_rate = \"0bps\" }}")),
        "flows[0].video.max_rate",
        "greater than 0",
    );
    refused(&flow(&format!("{v}video = {{ l4s = true }}")), "flows[0].video.l4s", "SCReAM");
    refused(
        &flow(&format!("{v}video = {{ compensation = false }}")),
        "flows[0].video.compensation",
        "SCReAM",
    );
    let scream = "transport = \"udp\"\napp = \"video\"\ncc = \"scream\"\n";
    for bad in ["1", "\"off\""] {
        refused(
            &flow(&format!("{scream}video = {{ compensation = {bad} }}")),
            "flows[0].video.compensation",
            "true or false",
        );
    }
    refused(&flow(&format!("{v}video = {{ nack = 1 }}")), "flows[0].video.nack", "true or false");
    refused(
        &flow(&format!("{v}video = {{ nack = \"yes\" }}")),
        "flows[0].video.nack",
        "true or false",
    );
    refused(
        &flow(&format!("{v}video = {{ feedback = \"0s\" }}")),
        "flows[0].video.feedback",
        "greater than 0",
    );
    refused(
        &flow(&format!("{v}video = {{ iframe_interval = \"0s\" }}")),
        "flows[0].video.iframe_interval",
        "",
    );
    refused(
        &flow(&format!("{v}video = {{ iframe_ratio = 0 }}")),
        "flows[0].video.iframe_ratio",
        "",
    );
    refused(&flow(&format!("{v}video = {{ bitrate = 1 }}")), "flows[0].video.bitrate", "");
    refused(&flow(&format!("{v}packet_size = \"1000B\"")), "flows[0].packet_size", "video");
    refused(&flow(&format!("{v}size = \"1MB\"")), "flows[0].size", "no size");
    refused(&flow("cc = \"cubic\"\nvideo = { fps = 30 }"), "flows[0].video", "app = \"video\"");
}
