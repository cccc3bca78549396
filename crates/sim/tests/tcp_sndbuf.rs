//! The send buffer (`tcp.sndbuf`, Linux `tcp_wmem[2]`), the application's writes into it
//! (`tcp.write_size`) and the receive window's scaling ratio (`tcp.rcv_truesize`), against
//! the arithmetic of the rules they model.
//!
//! The path is the one where `bloatlab validate --rate 100` found them: 100 Mbit/s, 150 ms
//! (a bandwidth-delay product of 1.875 MB), a drop-tail buffer of two BDPs. An application
//! that writes `w` bytes whenever Linux reports the socket writable (at most 2/3 of the
//! buffer `S` queued) keeps between 2S/3 and 2S/3 + w written and unacknowledged, so a flow
//! whose window would allow more keeps a mean flight of about 2S/3 + w/2 — 3.32 MB with
//! Linux's 4 MiB and the emulator's 1 MiB writes — and the queue holds what exceeds the BDP.
//! The tolerances (±20 % on queueing delay) cover the sawtooth's shape, which is not quite
//! uniform (the refill lands in one instant, the drain follows the ACK clock).

use crate::common;
use bloatlab_sim::{run_toml, Column, RunError, RunOptions};
use common::{f, run};

const BDP: f64 = 100e6 / 8.0 * 0.150;
const RATE_BYTES_PER_S: f64 = 100e6 / 8.0;

fn path(cc: &str, tcp: &str) -> String {
    format!(
        r#"
        duration = "20s"
        warmup = "5s"
        [topology]
        bottleneck = {{ rate = "100Mbps", delay = "75ms" }}
        bottleneck_queue = {{ kind = "droptail", limit = "3750000B" }}
        [tcp]
        {tcp}
        [[flows]]
        cc = "{cc}"
        "#
    )
}

/// The mean queueing delay (ms) of a flight of `flight` bytes on the path.
fn queue_ms(flight: f64) -> f64 {
    (flight - BDP) / RATE_BYTES_PER_S * 1e3
}

fn within(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol * want,
        "{what}: {got:.1} against {want:.1} (±{:.0} %)",
        tol * 100.0
    );
}

/// Reno's window outgrows both buffers: the send buffer bounds its flight (no loss: the
/// bottleneck's two BDPs hold more than the flight's excess), and with a send buffer above
/// the receive window the receive window does, at the window of `tcp_rmem[2]` (6 MB) at the
/// scaling ratio its segments' truesize gives (the emulated Linux receiver advertises 3.93 MB
/// of its 6 MiB: ratio 160).
#[test]
fn the_send_buffer_and_the_receive_window_bound_a_reno_flight() {
    let s = run(&path("reno", ""));
    assert_eq!(f(&s, "bottleneck.drops"), 0.0);
    let sndbuf = 4_194_304.0;
    let mib = 1_048_576.0;
    within(
        f(&s, "bottleneck.mean_sojourn_ms"),
        queue_ms(2.0 * sndbuf / 3.0 + mib / 2.0),
        0.2,
        "4 MiB buffer, 1 MiB writes",
    );
    // Writes of 64 KiB refill the buffer nearly as it drains: flight ≈ 2S/3 + 32 KiB.
    let s = run(&path("reno", "write_size = \"64KiB\""));
    within(
        f(&s, "bottleneck.mean_sojourn_ms"),
        queue_ms(2.0 * sndbuf / 3.0 + 32_768.0),
        0.2,
        "4 MiB buffer, 64 KiB writes",
    );
    // An 8 MiB send buffer: the receive window binds, 6 MB × ⌊1448·256/2304⌋/256 = 3.75 MB.
    let s = run(&path("reno", "sndbuf = \"8MiB\""));
    within(f(&s, "bottleneck.mean_sojourn_ms"), queue_ms(3_750_000.0), 0.1, "8 MiB buffer");
    // The same with a truesize of two segments (ratio 128): a 3 MB window.
    let s = run(&path("reno", "sndbuf = \"8MiB\"\nrcv_truesize = \"2896B\""));
    within(f(&s, "bottleneck.mean_sojourn_ms"), queue_ms(3_000_000.0), 0.1, "ratio 128");
    // A set `rcvbuf` is the largest window as written and leaves the send buffer unlimited:
    // 6 MB of window overflows the 5.6 MB of BDP and buffer (CUBIC: Reno's one segment per
    // round trip after the slow start's loss takes longer than the run to get back there).
    let s = run(&path("cubic", "rcvbuf = \"6MB\""));
    assert!(f(&s, "bottleneck.drops") > 0.0, "no drops with a 6 MB window");
}

/// Each write into a drained buffer runs Linux's `tcp_rate_check_app_limited`: the samples of
/// the round that follows are app-limited, so BBR v1 never sees three rounds of bandwidth
/// without growth that end its STARTUP, and paces at its high gain, 2.885 × the bottleneck,
/// for the whole run: the flight is the send buffer's, as for Reno. Without a send buffer it
/// leaves STARTUP within a second and keeps the queue short (Linux 6.18 through the emulator
/// on this path: STARTUP throughout, pacing_gain 2.88672, 104 ms of queue).
#[test]
fn writes_into_a_drained_send_buffer_keep_bbr_in_startup() {
    let opts = RunOptions { series: true, ..RunOptions::default() };
    let out = run_toml(&path("bbr", ""), &opts).unwrap();
    let s: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    within(
        f(&s, "bottleneck.mean_sojourn_ms"),
        queue_ms(2.0 * 4_194_304.0 / 3.0 + 524_288.0),
        0.2,
        "BBR, 4 MiB buffer",
    );
    let flows = out.tables.iter().find(|t| t.name == "flows").expect("a flows table");
    let Some((_, Column::Str(states))) = flows.columns.iter().find(|(c, _)| c == "cc_state") else {
        panic!("no cc_state column")
    };
    let late = &states[states.len() / 2..];
    assert!(late.iter().all(|s| s == "startup" || s == "probe_rtt"), "{late:?}");

    let s = run(&path("bbr", "sndbuf = \"unlimited\""));
    let q = f(&s, "bottleneck.mean_sojourn_ms");
    assert!(q < 20.0, "BBR without a send buffer keeps {q:.1} ms queued");
}

#[test]
fn send_buffer_keys_refuse_bad_values_naming_the_key() {
    let err = |tcp: &str| match run_toml(&path("cubic", tcp), &RunOptions::default()) {
        Err(RunError::Invalid(e)) => e.to_string(),
        Err(e) => panic!("not an input error: {e}"),
        Ok(_) => panic!("accepted: {tcp}"),
    };
    assert_eq!(
        err("sndbuf = \"2000B\""),
        "tcp.sndbuf: must be at least 4608B (Linux's SOCK_MIN_SNDBUF) or \"unlimited\" (got 2000B)"
    );
    let e = err("sndbuf = \"lots\"");
    assert!(
        e.starts_with("tcp.sndbuf: invalid size \"lots\"") && e.ends_with(", or \"unlimited\""),
        "{e}"
    );
    let e = err("sndbuf = 4194304");
    assert!(
        e.starts_with("tcp.sndbuf: expected a size string") && e.ends_with(", or \"unlimited\""),
        "{e}"
    );
    assert_eq!(err("write_size = \"0B\""), "tcp.write_size: must be between 1B and 1TiB (got 0B)");
    assert!(err("write_size = true").starts_with("tcp.write_size: expected a size string"));
    assert_eq!(
        err("rcv_truesize = \"1448B\""),
        "tcp.rcv_truesize: must be more than one MSS (1448B) and at most 256 MSS (370688B) (got 1448B)"
    );
    assert!(
        err("rcv_truesize = \"1MB\"").starts_with("tcp.rcv_truesize: must be more than one MSS")
    );
}

/// Nagle's algorithm (`tcp.nagle`, tcp/socket/cork.rs; the packetdrill script
/// tests/packetdrill/nagle-minshall.pkt checks its rule against Linux) holds only a sub-MSS
/// segment. Without a send buffer the application's data is all in the socket and every
/// segment is full: Nagle changes nothing. With Linux's 4 MiB buffer the flight here is
/// bounded by the buffer, the sender catches up with the last 1 MiB write, whose end is not
/// on a segment boundary, and sends that tail as a sub-MSS segment; with Nagle the next tail
/// waits while that one is unacknowledged (on Linux, the emulator's senders, which do not set
/// TCP_NODELAY, do the same).
#[test]
fn nagle_holds_only_a_sub_mss_tail() {
    let bulk = |tcp: &str| {
        let mut s = run(&path("cubic", tcp));
        s.as_object_mut().unwrap().remove("engine");
        s
    };
    let unlimited = "sndbuf = \"unlimited\"";
    assert_eq!(
        bulk(&format!("{unlimited}\nnagle = true")),
        bulk(unlimited),
        "full segments only: nothing for Nagle to hold"
    );
    let (off, on) = (bulk("nagle = false"), bulk("nagle = true"));
    assert_ne!(off, on, "the send buffer's tails are held");
    // A few tails a round trip in a flight of ~2,300 segments: the flows stay within 0.1 %.
    within(f(&on, "flows.0.goodput_mbps"), f(&off, "flows.0.goodput_mbps"), 0.001, "goodput");
}
