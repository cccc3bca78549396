//! Vegas keeps α..β packets queued; Westwood+ drains a deep drop-tail queue after each loss.

use crate::cc_util;
use cc_util::run;

/// Bytes a full-size segment occupies in the bottleneck queue (payload + headers).
const WIRE: f64 = 1500.0;

/// On a deep buffer (1000 packets) Vegas settles where its estimate of its own queued
/// packets, diff = cwnd·(RTT − baseRTT)/baseRTT, is within [α, β] = [2, 4]; with a BDP of
/// ~34 packets the estimate is the queue itself to within 15 %. The link stays busy. The
/// mean backlog is read from the summary (time average after a 10 s warm-up). Accepted
/// range [α − 0.5, β + 1]: diff is an integer floor (a queue up to β + 1 packets can read
/// as β) and the overestimate factor cwnd/BDP is ≤ 1.15 here; the half packet below α
/// allows for the dequeue of the packet in service in the time average.
#[test]
fn vegas_keeps_alpha_to_beta_packets_queued_and_the_link_busy() {
    let sc = r#"
        duration = "60s"
        warmup = "10s"
        [topology]
        bottleneck = { rate = "10Mbps", delay = "10ms" }
        bottleneck_queue = { limit = "1000p" }
        access = { rate = "100Mbps", delay = "5ms" }
        [[flows]]
        cc = "vegas"
    "#;
    let r = run(sc, None, true);
    let queued = r.f("bottleneck.mean_bytes") / WIRE;
    let util = r.f("bottleneck.utilization_pct");
    eprintln!("vegas: {queued:.2} packets queued on average, utilization {util:.2} %");
    assert!((1.5..=5.0).contains(&queued), "mean queue {queued:.2} packets");
    assert!(util >= 99.0, "utilization {util:.2} %");
    assert_eq!(r.f("flows.0.loss_pct"), 0.0);
    // The backlog never grows past a few packets after the warm-up (the slow-start exit is
    // the only excursion).
    let t = r.queue("bottleneck", "t_s");
    let q = r.queue("bottleneck", "backlog_pkts");
    let max_q = t.iter().zip(&q).filter(|(t, _)| **t >= 10.0).map(|(_, q)| *q).fold(0.0, f64::max);
    assert!(max_q <= 6.0, "backlog up to {max_q} packets");
}

fn deep(cc: &str) -> cc_util::Run {
    // 10 Mbit/s, 20 ms base RTT (BDP ≈ 17 packets), a 100-packet drop-tail buffer (~6 BDP):
    // a loss-based flow fills it every few seconds (≈ 20 loss cycles in 180 s).
    run(
        &format!(
            r#"
            duration = "200s"
            warmup = "20s"
            [topology]
            bottleneck = {{ rate = "10Mbps", delay = "5ms" }}
            bottleneck_queue = {{ limit = "100p" }}
            access = {{ rate = "100Mbps", delay = "2.5ms" }}
            [[flows]]
            cc = "{cc}"
            "#
        ),
        None,
        true,
    )
}

/// After each loss Westwood+ sets cwnd = ssthresh = BWE × RTTmin, about one BDP, so the
/// standing queue drains; NewReno halves (cwnd/2 is still ~3 BDP here, the queue stays more
/// than half full); CUBIC keeps 0.7 of its window and lingers near W_max. Same path, so the
/// time-average backlogs must order Westwood+ < NewReno < CUBIC, each at least 8 % below the
/// next (measured: ~63 %, 73 %, 84 % of the buffer; the order follows from where each one
/// restarts after a loss: ~0, ~45 and ~65 packets). And Westwood+'s queue does empty after
/// losses: its smallest backlog after warm-up is a few packets while NewReno's never goes
/// below a third of the buffer.
#[test]
fn westwood_drains_the_queue_after_losses_newreno_less_cubic_least() {
    let ww = deep("westwood+");
    let nr = deep("newreno");
    let cu = deep("cubic");
    let usage = |r: &cc_util::Run| r.f("bottleneck.buffer_usage_pct");
    let min_backlog = |r: &cc_util::Run| {
        let t = r.queue("bottleneck", "t_s");
        let q = r.queue("bottleneck", "backlog_pkts");
        t.iter().zip(&q).filter(|(t, _)| **t >= 20.0).map(|(_, q)| *q).fold(f64::MAX, f64::min)
    };
    let (u_ww, u_nr, u_cu) = (usage(&ww), usage(&nr), usage(&cu));
    let (m_ww, m_nr, m_cu) = (min_backlog(&ww), min_backlog(&nr), min_backlog(&cu));
    eprintln!("buffer usage: westwood+ {u_ww:.1} %, newreno {u_nr:.1} %, cubic {u_cu:.1} %");
    eprintln!("smallest backlog: westwood+ {m_ww}, newreno {m_nr}, cubic {m_cu} packets");
    assert!(u_ww < 0.92 * u_nr, "westwood+ {u_ww:.1} % vs newreno {u_nr:.1} %");
    assert!(u_nr < 0.92 * u_cu, "newreno {u_nr:.1} % vs cubic {u_cu:.1} %");
    assert!(m_ww <= 10.0, "westwood+ leaves {m_ww} packets queued");
    assert!(m_nr >= 30.0 && m_cu >= m_nr, "newreno {m_nr}, cubic {m_cu}");
    // Every flow still fills the link.
    for r in [&ww, &nr, &cu] {
        assert!(r.f("bottleneck.utilization_pct") >= 99.0);
    }
    // Westwood+'s window after recovery is BWE × RTTmin (≈ BDP of 17-18 packets, the
    // estimate lags slightly): the ssthresh it leaves is far below NewReno's.
    let ss: Vec<f64> =
        ww.num("ssthresh_bytes").iter().filter(|&&s| s > 0.0).map(|s| s / 1448.0).collect();
    let last = *ss.last().unwrap();
    assert!((10.0..=30.0).contains(&last), "westwood+ ssthresh {last} segments");
}
