//! Stress runs: every run checks packet conservation per flow, per link and for the pool, and
//! the scoreboard counters; these scenarios push the loss and recovery paths hard.

use crate::common;
use common::{f, run};

#[test]
fn heavy_loss_many_flows_all_recovery_modes() {
    let s = run(r#"
        duration = "30s"
        [topology]
        bottleneck = { rate = "5Mbps", delay = "15ms", loss = 0.03 }
        bottleneck_queue = { limit = "12p" }
        reverse_queue = { limit = "8p" }
        access = { rate = "50Mbps", delay = "1ms" }
        [[flows]]
        cc = "reno"
        count = 4
        tcp = { recovery = "sack" }
        [[flows]]
        cc = "newreno"
        count = 4
        [[flows]]
        cc = "reno"
        count = 4
        size = "400KB"
        start = { uniform = ["0s", "10s"] }
    "#);
    // Per-flow goodputs use each flow's own active time; the link-level check uses bytes.
    let bytes: f64 = (0..12).map(|i| f(&s, &format!("flows.{i}.bytes_delivered"))).sum();
    let mbps = bytes * 8.0 / 30.0 / 1e6;
    assert!(mbps > 0.5 && mbps <= 5.0 * 1448.0 / 1500.0, "aggregate goodput {mbps}");
    assert!(f(&s, "bottleneck.drops") > 0.0);
    assert!(f(&s, "bottleneck.random_losses") > 0.0);
}

/// Physics: no link carries more than its rate; goodput ≤ throughput ≤ bottleneck rate.
#[test]
fn rates_respect_the_link() {
    let s = run(r#"
        duration = "20s"
        warmup = "2s"
        [topology]
        bottleneck = { rate = "8Mbps", delay = "5ms" }
        bottleneck_queue = { limit = "30KB" }
        [[flows]]
        cc = "reno"
        count = 3
        tcp = { recovery = "sack" }
    "#);
    let mut total = 0.0;
    for i in 0..3 {
        let t = f(&s, &format!("flows.{i}.throughput_mbps"));
        let g = f(&s, &format!("flows.{i}.goodput_mbps"));
        assert!(g <= t + 1e-9, "flow {i}: goodput {g} > throughput {t}");
        total += g;
    }
    // Payload is 1448 of every 1500 wire bytes.
    assert!(total <= 8.0 * 1448.0 / 1500.0 + 0.01, "aggregate goodput {total}");
    assert!(f(&s, "bottleneck.utilization_pct") <= 100.0);
}
