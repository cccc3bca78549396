//! The TCP delayed-window-update mechanism of Wang & Yuan 2016 ("TCP Delayed Window Update
//! Mechanism for Fighting the Bufferbloat", KSII TIIS), as a wrapper around any controller.
//! Over CUBIC it is the paper's "Cubic+".
//!
//! Every `period` the wrapper looks at the RTT samples of the period:
//! - bandwidth utilisation U = 1 − noncongested/total (eq. 1), where a packet is
//!   "noncongested" when its RTT equals RTT_min — here: within `rtt_tolerance` of it;
//! - jitter = ave_rtt − last_ave_rtt (eq. 2), the change of the period's mean RTT;
//! - it then classifies the network (eq. 3 with the rules of §3.4):
//!   - U = 1 → serious congestion: cwnd × θ, and the suspend timer starts (§3.4's text
//!     adds "and jitter > 0"; eq. 3 does not — see `serious_requires_jitter`);
//!   - 0.99 < U < 1 and jitter > 0 → mild congestion: suspend_flag = 1, the timer starts;
//!   - U ≤ 0.99 and |jitter| < threshold → suspend_flag = 0;
//!   - flag = 1 when ave_rtt > (RTT_min + max_rtt)/2, else 0 (RTT_min taken with the same
//!     tolerance as in eq. 1).
//!
//! While suspend_flag or flag is set the window update is suspended: the inner controller
//! still sees every ACK (so its model — RTT filters, bandwidth estimates, HyStart rounds —
//! stays current), but cwnd may not grow beyond its value at the start of the ACK (a
//! decrease by the inner controller is kept). The suspend timer lasts RTT_min × rand,
//! rand ~ U(0, 1] (eq. 4), and clears suspend_flag when it expires. A loss cancels the timer,
//! clears both flags and restarts detection; during loss recovery the wrapper stays out.
//!
//! Readings of the paper where it is not explicit (documented in docs/congestion-control.md):
//! - RTT_min is the smallest RTT sample of data so far (eq. 4 "minimum RTT observed so far");
//!   max_rtt in the flag rule is the largest sample of the period;
//! - packets are counted by the segments each RTT-carrying ACK acknowledges (numerator and
//!   denominator of eq. 1 over the same population);
//! - a decrease in slow start also ends slow start (ssthresh = the reduced cwnd); otherwise
//!   the next update would double the window again;
//! - serious congestion follows eq. 3 (U = 1) by default; the first period after start or
//!   loss has no previous mean, hence no jitter, and cannot be "mild";
//! - the flag's RTT_min carries the eq. 1 tolerance: with a flat RTT a hair above RTT_min the
//!   exact rule would hold the window forever on an empty queue.

use super::{read_f64, AckSample, CaState, CongestionControl, CongestionEvent, Window};
use crate::engine::SimRng;
use crate::params::{err, Res, Table};
use crate::units::{Dur, Rate, SimTime};

/// Keys of the wrapper's parameters (accepted with the inner controller's).
pub(super) const DELAYED_KEYS: &[&str] =
    &["period", "threshold", "theta", "rtt_tolerance", "serious_requires_jitter"];

/// Parameters of the mechanism (`flows[i].cc_params`). Defaults: the paper's Table 1,
/// scenario I (period 100 ms, threshold 30 ms, θ = 0.9).
#[derive(Debug, Clone, PartialEq)]
pub struct DelayedParams {
    /// How often the congestion level is estimated.
    pub period: Dur,
    /// Largest |jitter| still counted as "no congestion".
    pub threshold: Dur,
    /// cwnd factor on serious congestion, in (0, 1].
    pub theta: f64,
    /// An RTT within this much of RTT_min "equals" RTT_min (eq. 1). Default 1 ms: the tick
    /// of the TCP timestamp clock (Linux, RFC 7323) the paper's RTTs are measured with.
    pub rtt_tolerance: Dur,
    /// Serious congestion needs Jitter > 0 as well as U = 1 (the wording of §3.4) instead of
    /// U = 1 alone (eq. 3, the default).
    pub serious_requires_jitter: bool,
}

impl Default for DelayedParams {
    fn default() -> Self {
        DelayedParams {
            period: Dur::from_millis(100),
            threshold: Dur::from_millis(30),
            theta: 0.9,
            rtt_tolerance: Dur::from_millis(1),
            serious_requires_jitter: false,
        }
    }
}

impl DelayedParams {
    pub(crate) fn read(t: &mut Table) -> Res<DelayedParams> {
        let d = DelayedParams::default();
        let period = t.opt_duration("period")?.unwrap_or(d.period);
        if period.0 == 0 {
            return err(&t.key_path("period"), "must be greater than 0 (got \"0s\")");
        }
        Ok(DelayedParams {
            period,
            threshold: t.opt_duration("threshold")?.unwrap_or(d.threshold),
            theta: read_f64(t, "theta", 0.0, true, 1.0, false)?.unwrap_or(d.theta),
            rtt_tolerance: t.opt_duration("rtt_tolerance")?.unwrap_or(d.rtt_tolerance),
            serious_requires_jitter: t
                .opt_bool("serious_requires_jitter")?
                .unwrap_or(d.serious_requires_jitter),
        })
    }
}

/// Fraction of delayed packets above which the network counts as congested (eq. 3).
const U_CONGESTED: f64 = 0.99;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Normal,
    Suspended,
    Decreased,
}

/// Counters of one detection period.
#[derive(Debug, Clone, Copy, Default)]
struct PeriodStats {
    total: u64,
    noncongested: u64,
    /// Σ rtt × packets, ns.
    rtt_sum: u128,
    max_rtt: Dur,
}

pub struct Delayed {
    name: &'static str,
    inner: Box<dyn CongestionControl>,
    p: DelayedParams,
    rng: SimRng,
    rtt_min: Option<Dur>,
    period_start: Option<SimTime>,
    stats: PeriodStats,
    last_ave: Option<Dur>,
    suspend_flag: bool,
    suspend_until: SimTime,
    /// ave_rtt > (RTT_min + max_rtt)/2 in the last period.
    flag: bool,
    last: Decision,
    /// Counters for tests and diagnostics.
    pub decreases: u64,
    pub suspensions: u64,
}

impl Delayed {
    pub fn new(
        name: &'static str,
        inner: Box<dyn CongestionControl>,
        p: DelayedParams,
        rng: SimRng,
    ) -> Delayed {
        Delayed {
            name,
            inner,
            p,
            rng,
            rtt_min: None,
            period_start: None,
            stats: PeriodStats::default(),
            last_ave: None,
            suspend_flag: false,
            suspend_until: SimTime::ZERO,
            flag: false,
            last: Decision::Normal,
            decreases: 0,
            suspensions: 0,
        }
    }

    fn holding(&self) -> bool {
        self.suspend_flag || self.flag
    }

    /// Forget the current detection (start, loss): a new period starts at `now`.
    fn restart(&mut self, now: Option<SimTime>) {
        self.period_start = now;
        self.stats = PeriodStats::default();
        self.last_ave = None;
        self.suspend_flag = false;
        self.flag = false;
        self.last = Decision::Normal;
    }

    fn start_suspend_timer(&mut self, now: SimTime) {
        self.suspend_flag = true;
        // Eq. 4: RTT_min × rand, rand ~ U(0, 1].
        let r = 1.0 - self.rng.uniform();
        self.suspend_until = now + self.rtt_min.unwrap_or(Dur::ZERO).mul_f64(r);
        self.suspensions += 1;
    }

    fn record(&mut self, a: &AckSample, rtt: Dur, mss: u64) {
        let min = *self.rtt_min.get_or_insert(rtt);
        let min = min.min(rtt);
        self.rtt_min = Some(min);
        let pkts = a.acked_bytes.div_ceil(mss.max(1)).max(1);
        let s = &mut self.stats;
        s.total += pkts;
        if rtt <= min + self.p.rtt_tolerance {
            s.noncongested += pkts;
        }
        s.rtt_sum += rtt.0 as u128 * pkts as u128;
        s.max_rtt = s.max_rtt.max(rtt);
    }

    /// End of a detection period: classify the network and act (eq. 1-4, §3.4).
    fn evaluate(&mut self, w: &mut Window, now: SimTime) {
        let s = std::mem::take(&mut self.stats);
        self.period_start = Some(now);
        let (Some(min), true) = (self.rtt_min, s.total > 0) else {
            return;
        };
        let u = 1.0 - s.noncongested as f64 / s.total as f64;
        let ave = Dur((s.rtt_sum / s.total as u128) as u64);
        self.last = if self.holding() { Decision::Suspended } else { Decision::Normal };
        // Jitter (eq. 2) needs the previous period's mean.
        let rising = self.last_ave.is_some_and(|l| ave > l);
        let small = self.last_ave.is_some_and(|l| ave.0.abs_diff(l.0) < self.p.threshold.0);
        if s.noncongested == 0 && (rising || !self.p.serious_requires_jitter) {
            // Serious congestion (U = 1): decrease moderately although nothing was lost.
            let pkts = ((w.cwnd / w.mss) as f64 * self.p.theta) as u64;
            w.cwnd = pkts.max(2) * w.mss;
            if w.in_slow_start() {
                w.ssthresh = w.cwnd;
            }
            self.decreases += 1;
            self.start_suspend_timer(now);
            self.last = Decision::Decreased;
        } else if u > U_CONGESTED && rising {
            // Mild congestion: suspend the window update for a while.
            self.start_suspend_timer(now);
            self.last = Decision::Suspended;
        } else if u <= U_CONGESTED && small {
            self.suspend_flag = false;
        }
        // flag: the period's mean RTT sits in the upper half between the uncongested RTT
        // (RTT_min, with the same tolerance as eq. 1) and the period's largest RTT.
        let lo = min + self.p.rtt_tolerance;
        self.flag = s.max_rtt > lo && ave.0 as u128 * 2 > lo.0 as u128 + s.max_rtt.0 as u128;
        self.last_ave = Some(ave);
    }
}

impl CongestionControl for Delayed {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if matches!(a.ca_state, CaState::Recovery | CaState::Loss) {
            // Loss recovery belongs to the inner controller and the core.
            self.inner.on_ack(w, a);
            return;
        }
        let start = *self.period_start.get_or_insert(a.now);
        if let Some(rtt) = a.rtt {
            self.record(a, rtt, w.mss);
        }
        if a.now >= start + self.p.period {
            self.evaluate(w, a.now);
        }
        if self.suspend_flag && a.now >= self.suspend_until {
            self.suspend_flag = false;
        }
        let held = w.cwnd;
        self.inner.on_ack(w, a);
        if self.holding() {
            w.cwnd = w.cwnd.min(held);
        }
    }

    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent) {
        self.inner.on_congestion_event(w, e);
        // A loss cancels the suspend timer and restarts detection.
        self.restart(None);
    }

    fn on_recovery_exit(&mut self, w: &mut Window, now: SimTime) {
        self.inner.on_recovery_exit(w, now);
        self.restart(Some(now));
    }

    fn on_tx_start(&mut self, w: &mut Window, now: SimTime, idle: Dur) {
        self.inner.on_tx_start(w, now, idle);
        // The previous period's RTTs say nothing about the network after idle.
        self.restart(Some(now));
    }

    fn owns_cwnd(&self) -> bool {
        self.inner.owns_cwnd()
    }

    fn pacing_rate(&self) -> Option<Rate> {
        self.inner.pacing_rate()
    }

    fn tso_segs(&self) -> Option<u64> {
        self.inner.tso_segs()
    }

    fn state_label(&self, _w: &Window) -> &'static str {
        match self.last {
            Decision::Decreased => "decreased",
            _ if self.holding() => "suspended",
            _ => "normal",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CongestionKind, Reno};
    use crate::engine::Stream;

    const MSS: u64 = 1000;

    fn wrapper(p: DelayedParams) -> Delayed {
        Delayed::new("reno+", Box::new(Reno::new("reno")), p, SimRng::new(1, Stream::Endpoint, 9))
    }

    fn ack(now_ms: f64, rtt_ms: f64) -> AckSample {
        let rtt = Some(Dur::from_secs_f64(rtt_ms / 1e3));
        AckSample {
            srtt: None,
            min_rtt: None,
            ..AckSample::test(SimTime((now_ms * 1e6) as u64), MSS, rtt)
        }
    }

    /// ACKs every `step` ms in [from, to] (ms) with RTTs from `rtt(t)`.
    fn feed(
        d: &mut Delayed,
        w: &mut Window,
        from: f64,
        to: f64,
        step: f64,
        rtt: impl Fn(f64) -> f64,
    ) {
        let mut t = from;
        while t <= to + 1e-9 {
            d.on_ack(w, &ack(t, rtt(t)));
            t += step;
        }
    }

    #[test]
    fn no_queue_means_the_inner_controller_works_untouched() {
        let mut d = wrapper(DelayedParams::default());
        let mut w = Window { cwnd: 20 * MSS, ssthresh: 10 * MSS, mss: MSS };
        let mut r = Reno::new("reno");
        let mut w2 = w;
        for t in 0..1000u64 {
            // Up to 0.9 ms of noise: within the 1 ms tolerance.
            let rtt = 40.0 + (t % 10) as f64 * 0.1;
            d.on_ack(&mut w, &ack(t as f64, rtt));
            r.on_ack(&mut w2, &ack(t as f64, rtt));
        }
        assert_eq!(w, w2);
        assert_eq!(d.decreases + d.suspensions, 0);
        assert_eq!(d.state_label(&w), "normal");
    }

    #[test]
    fn every_packet_queued_is_serious_congestion_theta_decrease_then_hold() {
        let mut d = wrapper(DelayedParams::default());
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 10 * MSS, mss: MSS };
        // Period 1 sees RTT_min (40 ms) once; period 2 has every sample 10 ms above it.
        d.on_ack(&mut w, &ack(0.0, 40.0));
        feed(&mut d, &mut w, 1.0, 100.0, 1.0, |_| 50.0);
        assert_eq!(d.decreases, 0);
        feed(&mut d, &mut w, 101.0, 199.0, 1.0, |_| 50.0);
        let before = w.cwnd;
        d.on_ack(&mut w, &ack(200.0, 50.0)); // ends period 2: U = 1
        assert_eq!(d.decreases, 1);
        assert_eq!(w.cwnd, before * 9 / 10 / MSS * MSS);
        assert_eq!(d.state_label(&w), "decreased");
        // Flat RTT far above RTT_min: flag holds the window through the next period.
        let held = w.cwnd;
        feed(&mut d, &mut w, 201.0, 299.0, 1.0, |_| 50.0);
        assert_eq!(w.cwnd, held);
    }

    #[test]
    fn mild_congestion_suspends_for_at_most_one_min_rtt() {
        let mut d = wrapper(DelayedParams::default());
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 10 * MSS, mss: MSS };
        // Period 1: no queue (mean 40 ms).
        feed(&mut d, &mut w, 0.0, 100.0, 0.5, |_| 40.0);
        // Period 2: 199 of 200 packets queued (U = 0.995) and the mean rises: mild
        // congestion. The RTT rises slowly then faster, so the mean stays in the lower half
        // between RTT_min and the maximum (flag = 0).
        d.on_ack(&mut w, &ack(100.5, 40.0));
        feed(&mut d, &mut w, 101.0, 199.5, 0.5, |t| 41.5 + (t - 100.0) * (t - 100.0) * 0.002);
        let before = w.cwnd;
        d.on_ack(&mut w, &ack(200.0, 41.5));
        assert_eq!((d.suspensions, d.decreases), (1, 0));
        assert!(!d.flag);
        assert_eq!(w.cwnd, before, "no decrease on mild congestion");
        assert_eq!(d.state_label(&w), "suspended");
        feed(&mut d, &mut w, 200.5, 205.0, 0.5, |_| 41.5);
        let t_end = d.suspend_until;
        assert!(t_end <= SimTime(240_000_000), "timer ≤ RTT_min");
        // After the timer the window grows again (Reno: +1 MSS per window of ACKs).
        feed(&mut d, &mut w, 240.5, 299.5, 0.5, |_| 41.5);
        assert!(w.cwnd > before, "window update resumed: {} vs {before}", w.cwnd);
    }

    #[test]
    fn a_loss_cancels_the_suspension() {
        let mut d = wrapper(DelayedParams::default());
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 10 * MSS, mss: MSS };
        d.on_ack(&mut w, &ack(0.0, 40.0));
        feed(&mut d, &mut w, 1.0, 201.0, 1.0, |_| 60.0);
        assert!(d.holding());
        let ev = CongestionEvent {
            now: SimTime(201_000_000),
            kind: CongestionKind::FastRetransmit,
            flight_size: 0,
            in_flight: 0,
        };
        d.on_congestion_event(&mut w, &ev);
        assert!(!d.holding());
        assert_eq!(w.ssthresh, w.cwnd / 2);
        d.on_recovery_exit(&mut w, SimTime(250_000_000));
        assert_eq!(d.state_label(&w), "normal");
    }

    #[test]
    fn serious_rule_of_section_3_4_needs_rising_jitter() {
        for (requires, expected) in [(true, 0), (false, 2)] {
            let p = DelayedParams { serious_requires_jitter: requires, ..DelayedParams::default() };
            let mut d = wrapper(p);
            let mut w = Window { cwnd: 100 * MSS, ssthresh: 10 * MSS, mss: MSS };
            d.on_ack(&mut w, &ack(0.0, 40.0));
            // Means 50.9, 50, 50 ms: U = 1 in periods 2 and 3, the mean never rises.
            feed(&mut d, &mut w, 1.0, 100.0, 1.0, |_| 51.0);
            feed(&mut d, &mut w, 101.0, 300.0, 1.0, |_| 50.0);
            assert_eq!(d.decreases, expected, "requires jitter: {requires}");
        }
    }
}
