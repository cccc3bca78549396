//! AWM — Active Window Management (Barbera, Lombardo, Panarello & Schembra 2007), as
//! summarised by Talau et al. 2019 §3.3, eq. 6–8.
//!
//! On every packet entering or leaving the forward queue the suggested window moves by
//! `swnd ← max(swnd + DQ + DT, MSS)` with `DQ = (q_prev − q)/N` (a queue change shared out
//! among the N flows) and `DT = α·(target − q)` (an integral term pulling the queue to
//! target). An ACK whose window exceeds swnd gets swnd. Anti-windup (bloatlab's addition):
//! swnd never exceeds the larger of B and the largest window seen in an ACK — above that it
//! could not restrict anyone, and an unbounded integral would make AWM blind to the next
//! congestion episode.

use super::within_buffer;
use super::{AckRewriter, QueueView, RewriterBuild, RewriterEntry};
use crate::params::{err, Res, Table};
use std::sync::Arc;

pub(super) const ENTRY: RewriterEntry = RewriterEntry {
    name: "awm",
    doc: "Active Window Management (Barbera et al. 2007)",
    keys: &["alpha", "target", "flows"],
    extra: (),
    parse: |t, ctx| Ok(Arc::new(read(t, ctx.capacity_bytes)?)),
};

impl RewriterBuild for AwmParams {
    fn build(&self) -> Box<dyn AckRewriter> {
        Box::new(Awm::new(*self))
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AwmParams {
    /// α of DT = α·(target − q), per queue event.
    pub alpha: f64,
    /// The queue occupancy AWM steers to (bytes).
    pub target: u64,
    /// N: the number of flows sharing the gateway.
    pub flows: u32,
}

/// AWM: N (`flows`) is required — the scheme divides queue changes among the flows and a
/// wrong N makes it unstable; α = 1e-4 per queue event and target = B/4 are bloatlab's
/// choices (the original values were not available).
fn read(t: &mut Table, b: u64) -> Res<AwmParams> {
    let alpha = t.opt_f64("alpha", 0.0, 1.0, true)?.unwrap_or(1e-4);
    let target = within_buffer(t, "target", b)?.unwrap_or(b / 4);
    let fp = t.key_path("flows");
    let flows = match t.opt_int("flows", 1, 1_000_000)? {
        Some(n) => n as u32,
        None => {
            return err(
                &fp,
                "missing required key: AWM needs N, the number of flows sharing the gateway (e.g. flows = 17)",
            )
        }
    };
    Ok(AwmParams { alpha, target, flows })
}

pub struct Awm {
    p: AwmParams,
    /// The suggested window (bytes); NaN until the first queue event.
    swnd: f64,
    q_prev: f64,
    /// The last MSS seen on an ACK: the floor of swnd.
    mss: f64,
    /// The largest advertised window seen.
    max_window: f64,
}

impl Awm {
    pub fn new(p: AwmParams) -> Awm {
        Awm { p, swnd: f64::NAN, q_prev: 0.0, mss: 1448.0, max_window: 0.0 }
    }

    pub fn swnd(&self) -> f64 {
        self.swnd
    }

    fn step(&mut self, fwd: &QueueView) {
        let b = fwd.capacity_bytes as f64;
        if self.swnd.is_nan() {
            self.swnd = b;
        }
        let q = fwd.backlog.bytes as f64;
        let dq = (self.q_prev - q) / self.p.flows as f64;
        let dt = self.p.alpha * (self.p.target as f64 - q);
        let upper = b.max(self.max_window).max(self.mss);
        self.swnd = (self.swnd + dq + dt).max(self.mss).min(upper);
        self.q_prev = q;
    }
}

impl AckRewriter for Awm {
    fn name(&self) -> &'static str {
        "awm"
    }

    fn rewrite(&mut self, window: u64, mss: u64, fwd: &QueueView) -> u64 {
        self.mss = mss as f64;
        self.max_window = self.max_window.max(window as f64);
        if self.swnd.is_nan() {
            self.swnd = fwd.capacity_bytes as f64;
        }
        if window as f64 > self.swnd {
            (self.swnd.max(self.mss).round() as u64).min(window)
        } else {
            window
        }
    }

    fn on_fwd_enqueue(&mut self, fwd: &QueueView) {
        self.step(fwd);
    }

    fn on_fwd_dequeue(&mut self, fwd: &QueueView) {
        self.step(fwd);
    }

    /// swnd, the window AWM imposes (bytes).
    fn internal_state(&self) -> f64 {
        self.swnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::Backlog;
    use crate::units::SimTime;

    fn view(used: u64) -> QueueView {
        QueueView {
            now: SimTime(0),
            backlog: Backlog { bytes: used, pkts: used / 1500 },
            capacity_bytes: 100_000,
        }
    }

    #[test]
    fn swnd_follows_eq_6_to_8() {
        let mut awm = Awm::new(AwmParams { alpha: 0.01, target: 20_000, flows: 4 });
        assert!(awm.internal_state().is_nan());
        // First event initialises swnd = B, then q 0 → 1500: DQ = −1500/4, DT = 0.01·18 500.
        awm.on_fwd_enqueue(&view(1500));
        assert!((awm.swnd() - (100_000.0 - 375.0 + 185.0)).abs() < 1e-9);
        // Dequeue back to 0: DQ = +375, DT = 0.01·20 000 = 200.
        let before = awm.swnd();
        awm.on_fwd_dequeue(&view(0));
        assert!((awm.swnd() - (before + 375.0 + 200.0).min(100_000.0)).abs() < 1e-9);
        // A queue far above target drives swnd down to the MSS floor.
        for q in (0..200).map(|i| 60_000 + i * 100) {
            awm.on_fwd_enqueue(&view(q));
        }
        assert!(awm.swnd() < 100_000.0 - 15_000.0);
        let mut low = Awm::new(AwmParams { alpha: 0.5, target: 0, flows: 1 });
        low.rewrite(65_535, 1000, &view(0));
        low.on_fwd_enqueue(&view(90_000));
        assert_eq!(low.swnd(), 1000.0);
    }

    #[test]
    fn rewrites_only_larger_windows_and_caps_the_integral() {
        let mut awm = Awm::new(AwmParams { alpha: 0.01, target: 20_000, flows: 1 });
        awm.rewrite(200_000, 1448, &view(0));
        awm.swnd = 30_000.0;
        assert_eq!(awm.rewrite(40_000, 1448, &view(0)), 30_000);
        assert_eq!(awm.rewrite(20_000, 1448, &view(0)), 20_000);
        // An empty queue keeps adding α·target; swnd stops at the largest window seen.
        for _ in 0..10_000 {
            awm.on_fwd_dequeue(&view(0));
        }
        assert_eq!(awm.swnd(), 200_000.0);
    }
}
