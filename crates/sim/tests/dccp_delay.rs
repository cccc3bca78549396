//! The DCCP-BBR paper's Fig. 6: with two Vegas TCP flows keeping a 100 Mbit/s, 100 ms RTT
//! link with a 4000-packet drop-tail queue loaded, a bbr-adaptive DCCP connection sees a
//! clearly lower RTT than a CCID2 one (the paper: about 20 % lower on average).

use crate::common;
use common::{f, run};

fn with_vegas(cc: &str) -> serde_json::Value {
    run(&format!(
        r#"
        duration = "15s"
        [topology]
        bottleneck = {{ rate = "100Mbps", delay = "48ms" }}
        bottleneck_queue = {{ kind = "droptail", limit = "4000p" }}
        access = {{ rate = "1Gbps", delay = "1ms" }}
        [[flows]]
        cc = "vegas"
        count = 2
        [[flows]]
        transport = "dccp"
        cc = "{cc}"
    "#
    ))
}

#[test]
fn bbr_adaptive_keeps_rtt_below_ccid2_under_vegas_load() {
    let c = with_vegas("ccid2");
    let b = with_vegas("bbr-adaptive");
    let rc = f(&c, "flows.2.rtt_mean_ms");
    let rb = f(&b, "flows.2.rtt_mean_ms");
    eprintln!("mean RTT: ccid2 {rc:.1} ms, bbr-adaptive {rb:.1} ms");
    // CCID2 fills the drop-tail queue (up to 480 ms of it); bbr-adaptive keeps about one BDP
    // or less queued. Measured ~393 ms vs ~227 ms (42 % lower); the paper reports 20 % in
    // Mininet, so ask for at least 20 % lower.
    assert!(rb < 0.8 * rc, "bbr-adaptive {rb} ms vs ccid2 {rc} ms");
    // Both RTTs include the 100 ms base.
    assert!(rb > 100.0 && rc > 100.0);
    // One-way delay is measured at the receiver too.
    let ob = f(&b, "flows.2.owd_mean_ms");
    assert!(ob > 50.0 && ob < rb, "owd {ob}");
    // The link stays loaded in both runs.
    for s in [&c, &b] {
        assert!(f(s, "bottleneck.utilization_pct") > 90.0);
    }
}
