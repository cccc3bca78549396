//! DualPI2 (RFC 9332) at scale: classic traffic alone is held near the PI2 target.
//! L4S traffic (Prague/DCTCP with ECT(1)) waits for those controllers; the L queue's step,
//! coupling and overload rules are unit-tested in queue/dualpi2.rs.

use crate::common;
use common::{f, run};

/// 100 Mbit/s, 4 CUBIC flows (base RTTs 20–80 ms), no ECN: the classic queue. PI2 steers the
/// queueing delay to target = 15 ms: the mean sojourn over the measured 40 s sits within
/// [10, 20] ms (PI control around CUBIC's sawtooth swings a few ms either side), the link
/// stays busy and drops are the AQM's, not overflow.
#[test]
fn classic_cubic_sits_near_the_classic_target() {
    let mut s = String::from(
        r#"
        duration = "50s"
        warmup = "10s"
        [topology]
        bottleneck = { rate = "100Mbps", delay = "1ms" }
        bottleneck_queue = { kind = "dualpi2" }
        access = { rate = "1Gbps" }
        "#,
    );
    for i in 0..4 {
        s += &format!("[[flows]]\ncc = \"cubic\"\nrtt = \"{}ms\"\n", 20 + 20 * i);
    }
    let r = run(&s);
    let soj = f(&r, "bottleneck.mean_sojourn_ms");
    assert!((10.0..=20.0).contains(&soj), "mean sojourn {soj} ms");
    assert!(f(&r, "bottleneck.utilization_pct") > 95.0);
    assert_eq!(f(&r, "bottleneck.drop_reasons.overflow"), 0.0);
    assert!(f(&r, "bottleneck.drop_reasons.aqm_dequeue") > 0.0);
    assert_eq!(r["bottleneck"]["aqm"], "dualpi2");
}
