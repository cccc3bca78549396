//! PIE (RFC 8033; Pan et al. 2013): a PI controller on the queueing delay that sets an
//! early-drop probability, applied at enqueue.
//!
//! Every T_UPDATE the drop probability p moves by
//! `Δp = α·(qdelay − target) + β·(qdelay − qdelay_old)` (α, β per second, delays in
//! seconds), scaled down while p is small (auto-tuning: ÷2048 below 0.0001 %, ÷512 below
//! 0.001 %, ÷128 below 0.01 %, ÷32 below 0.1 %, ÷8 below 1 %, ÷2 below 10 %), capped at +2 %
//! once p ≥ 10 %, and p decays by 2 % per update while both delays are below target/2.
//! The burst allowance (MAX_BURST) shrinks by T_UPDATE per update and is restored when p is
//! 0 and both delays are below target/2; while any is left, nothing is dropped early.
//! Enqueue: no early drop while qdelay_old < target/2 and p < 20 %, or with ≤ 2 MTU queued;
//! otherwise drop with probability p, de-randomised as in RFC 8033 §5.1 (the accumulated
//! probability must reach 0.85 before a drop and forces one at 8.5). With ECN on, an
//! ECN-capable packet is marked instead while p ≤ 10 %.
//!
//! The queueing delay is measured with timestamps (as current Linux does by default): the
//! sojourn time of the last packet dequeued, 0 once the queue is empty. The periodic update
//! runs lazily at the next enqueue or dequeue for every T_UPDATE tick that has passed; the
//! inputs of an update only change at those events, so this equals a real timer.

use super::{
    Backlog, BuildCx, Dequeued, DropReason, Fifo, QEntry, QueueBuild, QueueDisc, QueueEntry,
    Verdict,
};
use crate::engine::SimRng;
use crate::params::positive_duration;
use crate::queue::QueueLimit;
use crate::units::{Dur, SimTime};
use crate::wire::MTU_BYTES;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieParams {
    /// QDELAY_REF.
    pub target: Dur,
    /// T_UPDATE.
    pub t_update: Dur,
    /// α and β, per second.
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Dur,
    pub ecn: bool,
    /// RFC 8033 §5.1 de-randomisation (Linux's default).
    pub derandomize: bool,
}

pub const DEF: QueueEntry = QueueEntry {
    name: "pie",
    doc: "PIE (RFC 8033): a drop probability steered by the queueing delay",
    keys: &["target", "t_update", "alpha", "beta", "max_burst", "ecn", "derandomize"],
    extra: super::DEFAULT_LIMIT,
    // RFC 8033 / Linux defaults: target 15 ms, T_UPDATE 15 ms, α 0.125, β 1.25, MAX_BURST
    // 150 ms, de-randomisation on, ECN off.
    parse: |t, _| {
        let target = positive_duration(t, "target", Dur::from_millis(15))?;
        let t_update = positive_duration(t, "t_update", Dur::from_millis(15))?;
        let alpha = t.opt_f64("alpha", 0.0, 100.0, true)?.unwrap_or(0.125);
        let beta = t.opt_f64("beta", 0.0, 100.0, true)?.unwrap_or(1.25);
        let max_burst = t.opt_duration("max_burst")?.unwrap_or(Dur::from_millis(150));
        let ecn = t.opt_bool("ecn")?.unwrap_or(false);
        let derandomize = t.opt_bool("derandomize")?.unwrap_or(true);
        Ok(super::share(PieParams { target, t_update, alpha, beta, max_burst, ecn, derandomize }))
    },
};

impl QueueBuild for PieParams {
    fn build(&self, cx: BuildCx) -> Box<dyn QueueDisc> {
        Box::new(Pie::new(cx.limit, *self, cx.rng))
    }
}

/// ECN marking replaces early drops only while p is at most this (RFC 8033 §5.1, Linux).
const MARK_ECN_THRESHOLD: f64 = 0.1;

pub struct Pie {
    q: Fifo,
    p: PieParams,
    rng: SimRng,
    prob: f64,
    /// Current queueing-delay estimate, seconds.
    qdelay: f64,
    /// The estimate at the previous update, seconds.
    qdelay_old: f64,
    /// Burst allowance left, ns.
    burst: u64,
    accu_prob: f64,
    next_update: SimTime,
}

/// Auto-tuning: Δp is divided by this while p is small (RFC 8033 §4.2).
pub fn autotune_divisor(p: f64) -> f64 {
    if p < 0.000_001 {
        2048.0
    } else if p < 0.000_01 {
        512.0
    } else if p < 0.000_1 {
        128.0
    } else if p < 0.001 {
        32.0
    } else if p < 0.01 {
        8.0
    } else if p < 0.1 {
        2.0
    } else {
        1.0
    }
}

impl Pie {
    pub fn new(limit: QueueLimit, p: PieParams, rng: SimRng) -> Pie {
        Pie {
            q: Fifo::new(limit),
            p,
            rng,
            prob: 0.0,
            qdelay: 0.0,
            qdelay_old: 0.0,
            burst: p.max_burst.0,
            accu_prob: 0.0,
            next_update: SimTime::ZERO + p.t_update,
        }
    }

    pub fn prob(&self) -> f64 {
        self.prob
    }

    fn target(&self) -> f64 {
        self.p.target.secs_f64()
    }

    /// One T_UPDATE step of the controller.
    fn update(&mut self) {
        let target = self.target();
        let (qd, old) = (self.qdelay, self.qdelay_old);
        let mut dp = self.p.alpha * (qd - target) + self.p.beta * (qd - old);
        dp /= autotune_divisor(self.prob);
        if self.prob >= 0.1 && dp > 0.02 {
            dp = 0.02;
        }
        self.prob += dp;
        if qd < target / 2.0 && old < target / 2.0 {
            self.prob *= 0.98;
        }
        self.prob = self.prob.clamp(0.0, 1.0);
        self.qdelay_old = qd;
        self.burst = self.burst.saturating_sub(self.p.t_update.0);
        if self.prob == 0.0 && qd < target / 2.0 && old < target / 2.0 {
            self.burst = self.p.max_burst.0;
        }
    }

    /// Runs the updates of every T_UPDATE tick up to `now`.
    fn catch_up(&mut self, now: SimTime) {
        let t = self.p.t_update.0;
        while now >= self.next_update {
            let settled = self.prob == 0.0
                && self.qdelay == 0.0
                && self.qdelay_old == 0.0
                && self.burst == self.p.max_burst.0;
            if settled {
                // An idle, settled controller is a fixed point of update(): skip the ticks.
                let ticks = (now.0 - self.next_update.0) / t + 1;
                self.next_update = SimTime(self.next_update.0 + ticks * t);
                return;
            }
            self.update();
            self.next_update = SimTime(self.next_update.0 + t);
        }
    }

    fn drop_early(&mut self) -> bool {
        if self.burst > 0 {
            return false;
        }
        if self.qdelay_old < self.target() / 2.0 && self.prob < 0.2 {
            return false;
        }
        if self.q.bytes() <= 2 * MTU_BYTES {
            return false;
        }
        if self.p.derandomize {
            if self.prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                self.accu_prob = 0.0;
                return true;
            }
        }
        if self.rng.chance(self.prob) {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl QueueDisc for Pie {
    fn name(&self) -> &'static str {
        "pie"
    }

    fn enqueue(
        &mut self,
        e: QEntry,
        now: SimTime,
        _dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Verdict {
        self.catch_up(now);
        if self.q.overflows(&e) {
            self.accu_prob = 0.0;
            return Verdict::Dropped(DropReason::Overflow);
        }
        let mut verdict = Verdict::Queued;
        if self.drop_early() {
            if self.p.ecn && e.ect() && self.prob <= MARK_ECN_THRESHOLD {
                verdict = Verdict::Marked;
            } else {
                return Verdict::Dropped(DropReason::Early);
            }
        }
        self.q.push(e);
        verdict
    }

    fn dequeue(
        &mut self,
        now: SimTime,
        _dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Option<Dequeued> {
        self.catch_up(now);
        let e = self.q.pop()?;
        self.qdelay = if self.q.is_empty() { 0.0 } else { now.since(e.enqueued_at).secs_f64() };
        Some(Dequeued::plain(e))
    }

    fn backlog(&self) -> Backlog {
        self.q.backlog()
    }

    fn capacity_bytes(&self) -> u64 {
        self.q.capacity_bytes()
    }

    /// The drop probability.
    fn internal_state(&self) -> f64 {
        self.prob
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{ect, entry};
    use super::*;
    use crate::engine::Stream;

    const MS: u64 = 1_000_000;

    fn params() -> PieParams {
        PieParams {
            target: Dur::from_millis(15),
            t_update: Dur::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Dur::from_millis(150),
            ecn: false,
            derandomize: true,
        }
    }

    fn pie(p: PieParams) -> Pie {
        Pie::new(QueueLimit::Packets(10_000), p, SimRng::new(1, Stream::Queue, 0))
    }

    fn e(i: u32, at: SimTime, ecn: bool) -> QEntry {
        entry(i, 1500, at, ect(ecn))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-15 + 1e-12 * b.abs()
    }

    #[test]
    fn auto_tuning_divisors() {
        let cases = [
            (0.0, 2048.0),
            (0.000_000_99, 2048.0),
            (0.000_001, 512.0),
            (0.000_01, 128.0),
            (0.000_1, 32.0),
            (0.001, 8.0),
            (0.01, 2.0),
            (0.099, 2.0),
            (0.1, 1.0),
            (0.9, 1.0),
        ];
        for (p, d) in cases {
            assert_eq!(autotune_divisor(p), d, "p = {p}");
        }
    }

    #[test]
    fn probability_update_follows_rfc_8033() {
        let mut q = pie(params());
        // From p = 0: Δp = 0.125·(0.030 − 0.015) + 1.25·(0.030 − 0.015) = 0.020625, ÷2048.
        q.qdelay = 0.030;
        q.qdelay_old = 0.015;
        q.update();
        assert!(close(q.prob(), 0.020625 / 2048.0), "{}", q.prob());
        assert_eq!(q.qdelay_old, 0.030);
        // p = 5 %: Δp = 0.125·0.015 = 0.001875, halved.
        q.prob = 0.05;
        q.update();
        assert!(close(q.prob(), 0.05 + 0.001875 / 2.0), "{}", q.prob());
        // p ≥ 10 %: no scaling, but an increase is capped at 2 %.
        q.prob = 0.5;
        q.qdelay = 0.5;
        q.qdelay_old = 0.1;
        q.update();
        assert!(close(q.prob(), 0.52));
        q.prob = 0.5;
        q.qdelay = 0.016;
        q.qdelay_old = 0.016;
        q.update();
        assert!(close(q.prob(), 0.5 + 0.000125));
        // Both delays below target/2: Δp = 0.125·(0.005 − 0.015) = −0.00125, ÷2 at p = 1 %,
        // then the 2 % decay: (0.01 − 0.000625)·0.98.
        q.prob = 0.01;
        q.qdelay = 0.005;
        q.qdelay_old = 0.005;
        q.update();
        assert!(close(q.prob(), (0.01 - 0.000625) * 0.98), "{}", q.prob());
        // Clamped to [0, 1].
        q.prob = 0.001;
        q.qdelay = 0.0;
        q.qdelay_old = 0.3;
        q.update();
        assert_eq!(q.prob(), 0.0);
        q.prob = 0.995;
        q.qdelay = 0.3;
        q.qdelay_old = 0.3;
        q.update();
        assert_eq!(q.prob(), 1.0);
    }

    #[test]
    fn burst_allowance_shrinks_per_update_and_is_restored_when_calm() {
        let mut q = pie(params());
        assert_eq!(q.burst, 150 * MS);
        q.qdelay = 0.050;
        for k in 1..=10 {
            q.update();
            assert_eq!(q.burst, (150 - 15 * k) * MS);
        }
        q.update();
        assert_eq!(q.burst, 0);
        // Calm again: p falls to 0 and both delays are below target/2 → full allowance.
        q.prob = 0.0;
        q.qdelay = 0.001;
        q.update(); // qdelay_old was 50 ms: not yet
        assert_eq!(q.burst, 0);
        q.update();
        assert_eq!(q.burst, 150 * MS);
    }

    #[test]
    fn the_timer_runs_every_t_update_even_lazily() {
        let mut a = pie(params());
        let mut d = Vec::new();
        for i in 0..100 {
            a.enqueue(e(i, SimTime(0), false), SimTime(0), &mut Vec::new());
        }
        // Ticks at 15 and 30 ms run (with qdelay 0) before the dequeue at 40 ms, which
        // measures 40 ms of delay; the next tick is at 45 ms.
        a.dequeue(SimTime(40 * MS), &mut d);
        assert_eq!(a.next_update, SimTime(45 * MS));
        assert_eq!(a.qdelay, 0.040);
        // A late event runs every tick it missed: 45, 60, ..., 120 ms (6 ticks).
        a.dequeue(SimTime(121 * MS), &mut d);
        assert_eq!(a.next_update, SimTime(135 * MS));
        let mut b = pie(params());
        b.update();
        b.update();
        b.qdelay = 0.040;
        for _ in 0..6 {
            b.update();
        }
        assert!(a.prob() > 0.0);
        assert!(close(a.prob(), b.prob()), "{} vs {}", a.prob(), b.prob());
        assert_eq!(a.burst, b.burst);
    }

    #[test]
    fn no_early_drop_during_burst_allowance_or_at_low_delay() {
        let mut q = pie(PieParams { derandomize: false, ..params() });
        q.prob = 0.5;
        q.qdelay_old = 0.1;
        for i in 0..50 {
            assert_eq!(
                q.enqueue(e(i, SimTime(0), false), SimTime(0), &mut Vec::new()),
                Verdict::Queued
            );
        }
        // Allowance spent: now p = 50 % applies.
        q.burst = 0;
        let drops = (50..1050)
            .filter(|&i| {
                q.enqueue(e(i, SimTime(0), false), SimTime(0), &mut Vec::new()) != Verdict::Queued
            })
            .count();
        // Binomial(1000, 0.5): sd 15.8; ±80 is 5 sd.
        assert!((420..=580).contains(&drops), "{drops}");
        // Low delay and p < 20 %: no early drop.
        let mut q = pie(params());
        q.burst = 0;
        q.prob = 0.19;
        q.qdelay_old = 0.007;
        for i in 0..1000 {
            assert_eq!(
                q.enqueue(e(i, SimTime(0), false), SimTime(0), &mut Vec::new()),
                Verdict::Queued
            );
        }
        // Two MTUs or less queued: no early drop.
        let mut q = pie(params());
        q.burst = 0;
        q.prob = 1.0;
        q.qdelay_old = 0.5;
        assert_eq!(
            q.enqueue(e(0, SimTime(0), false), SimTime(0), &mut Vec::new()),
            Verdict::Queued
        );
        assert_eq!(
            q.enqueue(e(1, SimTime(0), false), SimTime(0), &mut Vec::new()),
            Verdict::Queued
        );
        assert_eq!(
            q.enqueue(e(2, SimTime(0), false), SimTime(0), &mut Vec::new()),
            Verdict::Queued
        );
        assert_eq!(
            q.enqueue(e(3, SimTime(0), false), SimTime(0), &mut Vec::new()),
            Verdict::Dropped(DropReason::Early)
        );
    }

    #[test]
    fn derandomisation_bounds_the_gap_between_drops() {
        let mut q = pie(params());
        q.burst = 0;
        q.prob = 0.1;
        q.qdelay_old = 0.1;
        for i in 0..3 {
            q.enqueue(e(i, SimTime(0), false), SimTime(0), &mut Vec::new());
        }
        let mut last = None;
        let mut gaps = Vec::new();
        for i in 0..20_000u32 {
            if q.enqueue(e(i, SimTime(0), false), SimTime(0), &mut Vec::new())
                == Verdict::Dropped(DropReason::Early)
            {
                if let Some(l) = last {
                    gaps.push(i - l);
                }
                last = Some(i);
            }
        }
        // accu reaches 0.85 at the 9th packet after a drop and 8.5 at the 85th (86th if the
        // float sum falls just short).
        assert!(gaps.iter().all(|g| (9..=86).contains(g)), "{:?}", gaps.iter().min());
        assert!(gaps.len() > 100);
    }

    #[test]
    fn ecn_marks_while_p_is_at_most_ten_percent() {
        let mut q = pie(PieParams { ecn: true, derandomize: false, ..params() });
        q.burst = 0;
        q.prob = 0.1;
        q.qdelay_old = 0.1;
        for i in 0..3 {
            q.enqueue(e(i, SimTime(0), true), SimTime(0), &mut Vec::new());
        }
        let v: Vec<Verdict> = (0..2000)
            .map(|i| q.enqueue(e(i, SimTime(0), true), SimTime(0), &mut Vec::new()))
            .collect();
        assert!(v.contains(&Verdict::Marked));
        assert!(!v.contains(&Verdict::Dropped(DropReason::Early)));
        q.prob = 0.3;
        let v: Vec<Verdict> = (0..200)
            .map(|i| q.enqueue(e(i, SimTime(0), true), SimTime(0), &mut Vec::new()))
            .collect();
        assert!(v.contains(&Verdict::Dropped(DropReason::Early)));
        assert!(!v.contains(&Verdict::Marked));
    }

    #[test]
    fn settled_idle_controller_skips_ticks_exactly() {
        let mut q = pie(params());
        let mut d = Vec::new();
        q.enqueue(e(0, SimTime(0), false), SimTime(0), &mut Vec::new());
        q.dequeue(SimTime(1), &mut d);
        // A day of idle time costs no loop iterations and leaves the state unchanged.
        q.enqueue(
            e(1, SimTime(86_400 * 1_000 * MS), false),
            SimTime(86_400 * 1_000 * MS),
            &mut Vec::new(),
        );
        assert_eq!(q.prob(), 0.0);
        assert_eq!(q.burst, 150 * MS);
        assert!(q.next_update > SimTime(86_400 * 1_000 * MS));
        assert_eq!((q.next_update.0 % (15 * MS)), 0);
    }
}
