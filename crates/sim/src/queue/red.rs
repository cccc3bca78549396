//! RED (Floyd & Jacobson 1993) with gentle mode (Floyd 2000), and Adaptive RED (Floyd,
//! Gummadi & Shenker 2001), which adapts max_p every `interval` to keep the average queue in
//! the middle of [min_th, max_th].
//!
//! Per arrival (before the packet joins the queue): the average is updated — an EWMA of the
//! instantaneous queue, or, when the queue is empty, decayed as if m small packets had left
//! during the idle time — then the arrival is compared with the thresholds:
//! - avg < min_th: accepted, count = −1;
//! - min_th ≤ avg < max_th: p_b = max_p·(avg − min_th)/(max_th − min_th);
//! - gentle and max_th ≤ avg < 2·max_th: p_b = max_p + (1 − max_p)·(avg − max_th)/max_th;
//! - above (avg ≥ max_th, or ≥ 2·max_th when gentle): forced drop, count = 0.
//!
//! In the random regions count is incremented and the packet is dropped (or ECN-marked) with
//! p_a = p_b / (1 − count·p_b), which spaces drops roughly uniformly; count = 0 after a drop.
//!
//! The queue is measured in the unit of its limit: bytes (as Linux's RED) for a byte limit,
//! packets (as ns-3's default) for a packet limit. The idle decay needs the time a typical
//! small packet takes to send (FJ's s): RED learns the link's per-byte time from back-to-back
//! dequeues and uses AVPKT bytes (tc's recommended avpkt) as the typical packet; until the
//! first measurement it assumes tc's default bandwidth of 10 Mbit/s.

use super::{
    Backlog, BuildCx, Dequeued, DropReason, Fifo, QEntry, QueueBuild, QueueDisc, QueueEntry,
    Verdict,
};
use crate::engine::SimRng;
use crate::params::{amount_bytes, fmt_num, positive_duration};
use crate::params::{err, Res, Table};
use crate::queue::QueueLimit;
use crate::units::{Dur, SimTime};
use crate::wire::MTU_BYTES;

/// RED and Adaptive RED. The queue is measured in the unit of the queue limit (bytes for a
/// byte limit, packets for a packet limit); thresholds are in that unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    /// EWMA weight of the average queue.
    pub q_w: f64,
    /// Probability at max_th (the initial one for Adaptive RED).
    pub max_p: f64,
    /// Gentle RED: the probability ramps from max_p to 1 between max_th and 2·max_th.
    pub gentle: bool,
    /// Mark ECN-capable packets instead of dropping them early.
    pub ecn: bool,
    /// Adaptive RED (Floyd, Gummadi & Shenker 2001): adapt max_p this often.
    pub adapt_interval: Option<Dur>,
}

const RED_KEYS: &[&str] = &["min_th", "max_th", "q_w", "max_p", "gentle", "ecn"];

pub const RED_DEF: QueueEntry = QueueEntry {
    name: "red",
    doc: "RED (Floyd & Jacobson 1993), optionally gentle and ECN-marking",
    keys: RED_KEYS,
    extra: super::DEFAULT_LIMIT,
    parse: |t, &limit| parse(t, limit, false).map(super::share),
};

pub const ARED_DEF: QueueEntry = QueueEntry {
    name: "ared",
    doc: "Adaptive RED (Floyd, Gummadi & Shenker 2001): RED adapting max_p",
    keys: &["min_th", "max_th", "q_w", "max_p", "gentle", "ecn", "interval"],
    extra: super::DEFAULT_LIMIT,
    parse: |t, &limit| parse(t, limit, true).map(super::share),
};

impl QueueBuild for RedParams {
    fn build(&self, cx: BuildCx) -> Box<dyn QueueDisc> {
        Box::new(Red::new(cx.limit, *self, cx.rng))
    }
}

/// The queue limit in the unit RED measures the queue in (bytes or packets).
fn limit_units(limit: QueueLimit) -> f64 {
    match limit {
        QueueLimit::Bytes(b) => b as f64,
        QueueLimit::Packets(p) => p as f64,
    }
}

fn unit_name(limit: QueueLimit) -> &'static str {
    match limit {
        QueueLimit::Bytes(_) => "B",
        QueueLimit::Packets(_) => "p",
    }
}

/// A threshold key in the queue's unit (bytes converted to packets at MTU_BYTES if the limit
/// is in packets).
fn threshold(t: &mut Table, key: &'static str, limit: QueueLimit) -> Res<Option<f64>> {
    let p = t.key_path(key);
    let Some(v) = t.get(key) else { return Ok(None) };
    let bytes = amount_bytes(&p, v)?;
    Ok(Some(match limit {
        QueueLimit::Bytes(_) => bytes,
        QueueLimit::Packets(_) => bytes / MTU_BYTES as f64,
    }))
}

/// RED / ARED parameters. Defaults are Linux's (`tc red` with only a limit): max_th =
/// limit/4, min_th = max_th/3 (= limit/12), q_w = 0.002, max_p = 0.02 — the values of Talau
/// et al. 2019, Table 3. With only one threshold given, tc's rules fill the other (max =
/// 3·min, min = max/3).
fn parse(t: &mut Table, limit: QueueLimit, adaptive: bool) -> Res<RedParams> {
    let lim = limit_units(limit);
    let unit = unit_name(limit);
    let min_given = threshold(t, "min_th", limit)?;
    let max_given = threshold(t, "max_th", limit)?;
    let (min_th, max_th) = match (min_given, max_given) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) => (a, 3.0 * a),
        (None, Some(b)) => (b / 3.0, b),
        (None, None) => (lim / 12.0, lim / 4.0),
    };
    if min_th >= max_th {
        let key = if min_given.is_some() { "min_th" } else { "max_th" };
        return err(
            &t.key_path(key),
            format!(
                "min_th ({}{unit}) must be below max_th ({}{unit})",
                fmt_num(min_th),
                fmt_num(max_th)
            ),
        );
    }
    if max_th > lim {
        let key = if max_given.is_some() { "max_th" } else { "min_th" };
        return err(
            &t.key_path(key),
            format!(
                "max_th ({}{unit}) must not exceed the queue limit ({}{unit})",
                fmt_num(max_th),
                fmt_num(lim)
            ),
        );
    }
    let q_w = t.opt_f64("q_w", 0.0, 1.0, true)?.unwrap_or(0.002);
    if q_w == 0.0 {
        return err(&t.key_path("q_w"), "must be greater than 0 (got 0)");
    }
    let max_p = t.opt_f64("max_p", 0.0, 1.0, true)?.unwrap_or(0.02);
    let gentle = t.opt_bool("gentle")?.unwrap_or(true);
    let ecn = t.opt_bool("ecn")?.unwrap_or(false);
    let adapt_interval = if adaptive {
        Some(positive_duration(t, "interval", Dur::from_millis(500))?)
    } else {
        None
    };
    Ok(RedParams { min_th, max_th, q_w, max_p, gentle, ecn, adapt_interval })
}

/// The "typical small packet" of the idle decay, bytes (tc-red's recommended avpkt).
const AVPKT: f64 = 1000.0;
/// ns per byte at tc-red's default bandwidth (10 Mbit/s), used until RED has measured its link.
const DEFAULT_NS_PER_BYTE: f64 = 800.0;
/// Adaptive RED bounds on max_p and its multiplicative decrease (Floyd et al. 2001).
const ARED_MAX_P_MIN: f64 = 0.01;
const ARED_MAX_P_MAX: f64 = 0.5;
const ARED_BETA: f64 = 0.9;

/// What RED does with an arrival, given the average queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Region {
    /// Below min_th.
    Accept,
    /// Drop with base probability p_b (before count spacing).
    Random(f64),
    /// At or above the forced-drop threshold.
    Forced,
}

pub struct Red {
    q: Fifo,
    p: RedParams,
    packets_mode: bool,
    /// The average queue, in the queue's unit.
    avg: f64,
    /// Arrivals since the last drop in the random region (−1: below min_th).
    count: i64,
    /// Current max_p (Adaptive RED changes it).
    max_p: f64,
    /// The queue has been empty since then (the idle decay is accounted up to it).
    idle_since: Option<SimTime>,
    /// Measured transmission time per byte of the link this queue feeds.
    ns_per_byte: f64,
    /// The last dequeue left packets behind: (when, its size). The next dequeue happens when
    /// that packet has been sent, which measures the link.
    back_to_back: Option<(SimTime, u32)>,
    next_adapt: SimTime,
    rng: SimRng,
}

impl Red {
    pub fn new(limit: QueueLimit, p: RedParams, rng: SimRng) -> Red {
        Red {
            q: Fifo::new(limit),
            p,
            packets_mode: matches!(limit, QueueLimit::Packets(_)),
            avg: 0.0,
            count: -1,
            max_p: p.max_p,
            idle_since: Some(SimTime::ZERO),
            ns_per_byte: DEFAULT_NS_PER_BYTE,
            back_to_back: None,
            next_adapt: SimTime::ZERO + p.adapt_interval.unwrap_or_default(),
            rng,
        }
    }

    pub fn avg(&self) -> f64 {
        self.avg
    }

    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    fn qlen(&self) -> f64 {
        if self.packets_mode {
            self.q.len() as f64
        } else {
            self.q.bytes() as f64
        }
    }

    /// The region (and base probability p_b) an average falls in.
    pub fn region(&self, avg: f64) -> Region {
        let RedParams { min_th, max_th, gentle, .. } = self.p;
        let max_p = self.max_p;
        if avg < min_th {
            Region::Accept
        } else if avg < max_th {
            Region::Random(max_p * (avg - min_th) / (max_th - min_th))
        } else if gentle && avg < 2.0 * max_th {
            Region::Random(max_p + (1.0 - max_p) * (avg - max_th) / max_th)
        } else {
            Region::Forced
        }
    }

    /// The drop probability of an arrival in the random region after `count` undropped
    /// arrivals (FJ's p_a = p_b / (1 − count·p_b), 1 once count·p_b ≥ 1).
    pub fn spaced_probability(p_b: f64, count: i64) -> f64 {
        let c = count as f64 * p_b;
        if c >= 1.0 {
            1.0
        } else {
            p_b / (1.0 - c)
        }
    }

    fn update_avg(&mut self, now: SimTime) {
        let w = self.p.q_w;
        if self.q.is_empty() {
            let since = self.idle_since.unwrap_or(now);
            let idle_ns = now.since(since).0 as f64;
            let m = idle_ns / (AVPKT * self.ns_per_byte);
            self.avg *= (1.0 - w).powf(m);
            self.idle_since = Some(now);
        } else {
            self.avg = (1.0 - w) * self.avg + w * self.qlen();
        }
    }

    /// Adaptive RED's max_p step (Floyd et al. 2001, Fig. 2): keep avg in the middle fifth.
    fn adapt(&mut self) {
        let RedParams { min_th, max_th, .. } = self.p;
        let target_lo = min_th + 0.4 * (max_th - min_th);
        let target_hi = min_th + 0.6 * (max_th - min_th);
        if self.avg > target_hi && self.max_p <= ARED_MAX_P_MAX {
            let alpha = (self.max_p / 4.0).min(0.01);
            self.max_p = (self.max_p + alpha).min(ARED_MAX_P_MAX);
        } else if self.avg < target_lo && self.max_p >= ARED_MAX_P_MIN {
            self.max_p = (self.max_p * ARED_BETA).max(ARED_MAX_P_MIN);
        }
    }
}

/// The early verdict on one arrival.
enum Early {
    None,
    Drop,
    Mark,
}

impl QueueDisc for Red {
    fn name(&self) -> &'static str {
        if self.p.adapt_interval.is_some() {
            "ared"
        } else {
            "red"
        }
    }

    fn enqueue(
        &mut self,
        e: QEntry,
        now: SimTime,
        _dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Verdict {
        self.update_avg(now);
        if let Some(iv) = self.p.adapt_interval {
            if now >= self.next_adapt {
                self.adapt();
                self.next_adapt = now + iv;
            }
        }
        let early = match self.region(self.avg) {
            Region::Accept => {
                self.count = -1;
                Early::None
            }
            Region::Forced => {
                self.count = 0;
                Early::Drop
            }
            Region::Random(p_b) => {
                self.count += 1;
                if self.rng.chance(Red::spaced_probability(p_b, self.count)) {
                    self.count = 0;
                    if self.p.ecn && e.ect() {
                        Early::Mark
                    } else {
                        Early::Drop
                    }
                } else {
                    Early::None
                }
            }
        };
        if let Early::Drop = early {
            return Verdict::Dropped(DropReason::Early);
        }
        if self.q.overflows(&e) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.q.push(e);
        self.idle_since = None;
        match early {
            Early::Mark => Verdict::Marked,
            _ => Verdict::Queued,
        }
    }

    fn dequeue(
        &mut self,
        now: SimTime,
        _dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Option<Dequeued> {
        let e = self.q.pop()?;
        if let Some((t, b)) = self.back_to_back {
            if now > t && b > 0 {
                self.ns_per_byte = now.since(t).0 as f64 / b as f64;
            }
        }
        if self.q.is_empty() {
            self.back_to_back = None;
            self.idle_since = Some(now);
        } else {
            self.back_to_back = Some((now, e.bytes));
        }
        Some(Dequeued::plain(e))
    }

    fn backlog(&self) -> Backlog {
        self.q.backlog()
    }

    fn capacity_bytes(&self) -> u64 {
        self.q.capacity_bytes()
    }

    /// The average queue (bytes, or packets for a packet-limited queue).
    fn internal_state(&self) -> f64 {
        self.avg
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{ect, entry};
    use super::*;
    use crate::engine::Stream;

    fn params(min_th: f64, max_th: f64, gentle: bool) -> RedParams {
        RedParams {
            min_th,
            max_th,
            q_w: 0.002,
            max_p: 0.1,
            gentle,
            ecn: false,
            adapt_interval: None,
        }
    }

    fn red(limit: QueueLimit, p: RedParams) -> Red {
        Red::new(limit, p, SimRng::new(1, Stream::Queue, 0))
    }

    fn e(i: u32, bytes: u32, ecn: bool) -> QEntry {
        entry(i, bytes, SimTime(0), ect(ecn))
    }

    #[test]
    fn probability_curve_linear_then_gentle_then_forced() {
        let r = red(QueueLimit::Packets(100), params(5.0, 15.0, true));
        assert_eq!(r.region(4.999), Region::Accept);
        assert_eq!(r.region(5.0), Region::Random(0.0));
        // Halfway between the thresholds: max_p / 2.
        assert_eq!(r.region(10.0), Region::Random(0.05));
        // At max_th the gentle ramp starts at max_p and reaches 1 at 2·max_th.
        assert_eq!(r.region(15.0), Region::Random(0.1));
        let Region::Random(p) = r.region(22.5) else { panic!() };
        assert!((p - (0.1 + 0.9 * 0.5)).abs() < 1e-12, "{p}");
        assert_eq!(r.region(30.0), Region::Forced);
        // Without gentle mode everything from max_th on is a forced drop.
        let r = red(QueueLimit::Packets(100), params(5.0, 15.0, false));
        assert_eq!(r.region(15.0), Region::Forced);
        let Region::Random(p) = r.region(14.0) else { panic!() };
        assert!((p - 0.09).abs() < 1e-12);
    }

    #[test]
    fn count_spacing_follows_floyd_jacobson() {
        assert_eq!(Red::spaced_probability(0.1, 0), 0.1);
        assert!((Red::spaced_probability(0.1, 5) - 0.2).abs() < 1e-12);
        assert_eq!(Red::spaced_probability(0.1, 10), 1.0);
        assert_eq!(Red::spaced_probability(0.1, 12), 1.0);
        // With p_a = p_b/(1 − count·p_b) the gap between drops is uniform on
        // {1, …, 1/p_b − 1} (FJ 1993 §7): mean 1/(2·p_b) = 5 arrivals for p_b = 0.1.
        let mut rng = SimRng::new(3, Stream::Queue, 1);
        let (mut count, mut drops, n) = (0i64, 0u32, 200_000u32);
        for _ in 0..n {
            count += 1;
            if rng.chance(Red::spaced_probability(0.1, count)) {
                drops += 1;
                count = 0;
            }
        }
        let gap = n as f64 / drops as f64;
        // sd of a uniform{1..9} gap is 2.58; over ~40k gaps ±0.05 is 3.9 standard errors.
        assert!((gap - 5.0).abs() < 0.05, "mean gap {gap}");
    }

    #[test]
    fn average_is_an_ewma_of_the_queue_at_arrival() {
        let mut r =
            red(QueueLimit::Packets(1000), RedParams { q_w: 0.25, ..params(500.0, 900.0, true) });
        let mut d = Vec::new();
        // First arrival: empty queue at time 0, no idle time: avg stays 0.
        assert_eq!(r.enqueue(e(0, 1500, false), SimTime(0), &mut Vec::new()), Verdict::Queued);
        assert_eq!(r.avg(), 0.0);
        // The next arrivals see 1, 2, 3 packets (the arriving one is not counted).
        r.enqueue(e(1, 1500, false), SimTime(10), &mut Vec::new());
        assert_eq!(r.avg(), 0.25);
        r.enqueue(e(2, 1500, false), SimTime(20), &mut Vec::new());
        assert_eq!(r.avg(), 0.75 * 0.25 + 0.25 * 2.0);
        r.enqueue(e(3, 1500, false), SimTime(30), &mut Vec::new());
        let a3 = 0.75 * (0.75 * 0.25 + 0.5) + 0.25 * 3.0;
        assert!((r.avg() - a3).abs() < 1e-12);
        // Byte mode counts bytes.
        let mut b =
            red(QueueLimit::Bytes(1_000_000), RedParams { q_w: 0.5, ..params(500e3, 900e3, true) });
        b.enqueue(e(0, 1000, false), SimTime(0), &mut Vec::new());
        b.enqueue(e(1, 1000, false), SimTime(1), &mut Vec::new());
        assert_eq!(b.avg(), 500.0);
        assert!(r.dequeue(SimTime(40), &mut d).is_some());
    }

    #[test]
    fn idle_time_decays_the_average() {
        let w = 0.01;
        let mut r =
            red(QueueLimit::Bytes(1_000_000), RedParams { q_w: w, ..params(500e3, 900e3, true) });
        let mut d = Vec::new();
        // Two packets back to back: the second dequeue, 1 ms after the first, measures the
        // link (1500 B in 1 ms, 12 Mbit/s: 666.7 ns/B).
        r.enqueue(e(0, 1500, false), SimTime(0), &mut Vec::new());
        r.enqueue(e(1, 1500, false), SimTime(0), &mut Vec::new());
        r.avg = 100_000.0;
        r.dequeue(SimTime(0), &mut d).unwrap();
        r.dequeue(SimTime(1_000_000), &mut d).unwrap();
        assert!((r.ns_per_byte - 1e6 / 1500.0).abs() < 1e-9);
        // The queue is empty from t = 1 ms. An arrival 20 ms later: m = 20 ms / (1000 B ·
        // 666.7 ns/B) = 30 small packets could have been sent, avg ·= (1 − w)^30.
        let t = SimTime(21_000_000);
        r.enqueue(e(2, 1500, false), t, &mut Vec::new());
        let want = 100_000.0 * (1.0f64 - w).powf(30.0);
        assert!((r.avg() - want).abs() < 1e-6, "{} vs {want}", r.avg());
        // A busy queue is not decayed: the next arrival is a plain EWMA step.
        r.enqueue(e(3, 1500, false), SimTime(21_000_001), &mut Vec::new());
        assert!((r.avg() - ((1.0 - w) * want + w * 1500.0)).abs() < 1e-6);
    }

    #[test]
    fn drops_only_in_the_random_and_forced_regions() {
        let mut r = red(QueueLimit::Packets(1000), params(5.0, 15.0, true));
        r.avg = 4.0;
        r.q.push(e(99, 1500, false)); // keep the queue non-empty: avg follows the EWMA
        for i in 0..500 {
            assert_eq!(
                r.enqueue(e(i, 1500, false), SimTime(i as u64), &mut Vec::new()),
                Verdict::Queued
            );
            r.avg = 4.0;
        }
        assert_eq!(r.count, -1);
        r.avg = 40.0;
        assert_eq!(
            r.enqueue(e(0, 1500, false), SimTime(2000), &mut Vec::new()),
            Verdict::Dropped(DropReason::Early)
        );
        assert_eq!(r.count, 0);
    }

    #[test]
    fn ecn_marks_instead_of_early_drops_but_not_forced_ones() {
        let mut r = red(
            QueueLimit::Packets(1000),
            RedParams { ecn: true, max_p: 1.0, ..params(5.0, 15.0, true) },
        );
        r.q.push(e(99, 1500, true));
        // With max_p = 1 the gentle region has p_b = 1: every ECT arrival there is marked.
        r.avg = 20.0;
        let v = r.enqueue(e(1, 1500, true), SimTime(1), &mut Vec::new());
        assert_eq!(v, Verdict::Marked, "avg {}", r.avg);
        r.avg = 100.0;
        assert_eq!(
            r.enqueue(e(2, 1500, true), SimTime(2), &mut Vec::new()),
            Verdict::Dropped(DropReason::Early)
        );
    }

    #[test]
    fn full_queue_overflows() {
        let mut r = red(QueueLimit::Packets(2), params(100.0, 200.0, true));
        assert_eq!(r.enqueue(e(0, 1500, false), SimTime(0), &mut Vec::new()), Verdict::Queued);
        assert_eq!(r.enqueue(e(1, 1500, false), SimTime(0), &mut Vec::new()), Verdict::Queued);
        assert_eq!(
            r.enqueue(e(2, 1500, false), SimTime(0), &mut Vec::new()),
            Verdict::Dropped(DropReason::Overflow)
        );
        assert_eq!(r.backlog(), Backlog { bytes: 3000, pkts: 2 });
    }

    #[test]
    fn adaptive_red_steps_max_p_per_floyd_2001() {
        let p = RedParams {
            max_p: 0.02,
            adapt_interval: Some(Dur::from_millis(500)),
            ..params(10.0, 30.0, true)
        };
        let mut r = red(QueueLimit::Packets(1000), p);
        assert_eq!(r.name(), "ared");
        // Target band [18, 22]. Above it: max_p += min(0.01, max_p/4) = 0.005.
        r.avg = 25.0;
        r.adapt();
        assert!((r.max_p() - 0.025).abs() < 1e-12);
        r.max_p = 0.2;
        r.adapt();
        assert!((r.max_p() - 0.21).abs() < 1e-12);
        r.max_p = 0.499;
        r.adapt();
        assert_eq!(r.max_p(), 0.5);
        r.adapt();
        assert_eq!(r.max_p(), 0.5);
        // Inside the band: unchanged. Below: max_p ·= 0.9, never below 0.01.
        r.avg = 20.0;
        r.adapt();
        assert_eq!(r.max_p(), 0.5);
        r.avg = 12.0;
        r.adapt();
        assert!((r.max_p() - 0.45).abs() < 1e-12);
        r.max_p = 0.0105;
        r.adapt();
        assert_eq!(r.max_p(), 0.01);
        // Adaptation runs at arrivals, at most once per interval.
        let mut r = red(QueueLimit::Packets(1000), p);
        r.q.push(e(99, 1500, false));
        r.avg = 25.0 / (1.0 - 0.002);
        r.enqueue(e(0, 1500, false), SimTime(Dur::from_millis(499).0), &mut Vec::new());
        assert_eq!(r.max_p(), 0.02);
        r.avg = 25.0;
        r.enqueue(e(1, 1500, false), SimTime(Dur::from_millis(500).0), &mut Vec::new());
        assert!((r.max_p() - 0.025).abs() < 1e-12);
        r.avg = 25.0;
        r.enqueue(e(2, 1500, false), SimTime(Dur::from_millis(900).0), &mut Vec::new());
        assert!((r.max_p() - 0.025).abs() < 1e-12);
    }
}
