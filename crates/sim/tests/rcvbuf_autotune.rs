//! Receive-buffer autotuning (`tcp.rcvbuf_auto`, Linux `tcp_moderate_rcvbuf`): the window a
//! receiver advertises grows with what it reads instead of being the whole buffer, so a
//! rewriter that scales it (EWT) acts as it does on Linux, and a plain path is not slowed.

use crate::common;
use common::{f, run};

/// The validate matrix's `*-ewt-b2-rtt40-loss0-f1` cell: 10 Mbit/s, 40 ms, a 100 kB drop-tail
/// buffer behind EWT (start 30 %), 30 s.
fn ewt(cc: &str, count: u32, auto: bool) -> String {
    format!(
        r#"
        duration = "30s"
        warmup = "5s"
        [topology]
        bottleneck = {{ rate = "10Mbps", delay = "20ms" }}
        bottleneck_queue = {{ kind = "droptail", limit = "100000B" }}
        gateway = {{ kind = "ewt" }}
        [tcp]
        rcvbuf_auto = {auto}
        [[flows]]
        cc = "{cc}"
        count = {count}
        "#
    )
}

#[test]
fn ewt_holds_linux_windows_below_the_full_buffer() {
    for (cc, n) in [("reno", 1), ("cubic", 4)] {
        // Linux (validate matrix, kernel 6.18): no retransmission after the warm-up.
        let s = run(&ewt(cc, n, true));
        assert_eq!(f(&s, "bottleneck.drops"), 0.0, "{cc} ×{n}: drops with autotuned windows");
        let p95 = f(&s, "bottleneck.p95_sojourn_ms");
        assert!(p95 < 75.0, "{cc} ×{n}: p95 sojourn {p95:.1} ms (the full buffer is 80 ms)");
        // The whole 6 MB buffer as the window: EWT's cut stays above cwnd, the buffer overflows.
        let s = run(&ewt(cc, n, false));
        assert!(f(&s, "bottleneck.drops") > 0.0, "{cc} ×{n}: no drops with 6 MB windows");
    }
}

#[test]
fn autotuning_does_not_slow_an_unrewritten_flow() {
    for delay in ["5ms", "75ms"] {
        let sc = |auto: bool| {
            format!(
                r#"
                duration = "20s"
                warmup = "5s"
                [topology]
                bottleneck = {{ rate = "10Mbps", delay = "{delay}" }}
                bottleneck_queue = {{ kind = "droptail", limit = "2MB" }}
                [tcp]
                rcvbuf_auto = {auto}
                [[flows]]
                cc = "cubic"
                "#
            )
        };
        let a = f(&run(&sc(true)), "flows.0.goodput_mbps");
        let b = f(&run(&sc(false)), "flows.0.goodput_mbps");
        // Not slower (within 1 %). It may be faster: with the default largest window,
        // out-of-order data held during a recovery narrows the window (clamp − held, as
        // Linux's), which the whole 6 MB buffer did not (5 ms: 9.217 against 9.025 Mbit/s).
        assert!(a >= 0.99 * b, "{delay}: goodput {a:.3} autotuned vs {b:.3}");
    }
}
