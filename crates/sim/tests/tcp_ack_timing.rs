//! Linux's SACK compression at the receiver (`tcp.sack_compress`) and GSO bursts of a paced
//! sender (`tcp.gso`): together they make BBR v1 over-estimate the bottleneck by a few per
//! cent after each random loss (a delivery-rate sample whose send phase ends with a burst and
//! whose ACK phase starts at a held-back SACK), so its queue grows with random loss as Linux's
//! does (validate matrix, `bbr-droptail-b2-rtt40-loss1-f1`: 12.8–14.4 ms on Linux 6.18, 8.0
//! ms in the simulator without them).

mod common;
use common::{f, run};

fn bbr_loss(tcp: &str) -> f64 {
    let s = run(&format!(
        r#"
        duration = "30s"
        warmup = "5s"
        [topology]
        bottleneck = {{ rate = "10Mbps", delay = "20ms", loss = 0.01 }}
        bottleneck_queue = {{ kind = "droptail", limit = "100000B" }}
        [tcp]
        {tcp}
        [[flows]]
        cc = "bbr"
        "#
    ));
    f(&s, "bottleneck.mean_sojourn_ms")
}

#[test]
fn bbr_queue_grows_with_random_loss_as_on_linux() {
    let both = bbr_loss("");
    let no_compress = bbr_loss("sack_compress = false");
    let no_gso = bbr_loss("gso = false");
    let neither = bbr_loss("sack_compress = false\ngso = false");
    eprintln!("mean sojourn: both {both:.2} ms, no SACK compression {no_compress:.2}, no GSO {no_gso:.2}, neither {neither:.2}");
    assert!((11.0..16.0).contains(&both), "with both: {both:.2} ms (Linux 12.8–14.4)");
    assert!(neither < 9.0, "without either: {neither:.2} ms");
    assert!(no_compress < both - 3.0 && no_gso < both, "each mechanism adds to the queue");
}
