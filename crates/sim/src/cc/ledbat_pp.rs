//! LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus-06, January 2026; what Windows' background
//! transfers use): LEDBAT (RFC 6817, `ledbat`) with the draft's changes —
//! - delay from round-trip times: queueing delay = filtered RTT − base RTT, with
//!   RFC 6817's filters (minimum of the last 4 samples; base = minimum of 10 one-minute minima);
//! - TARGET 60 ms;
//! - a slower-than-Reno increase: GAIN = 1 / min(16, ceil(2·TARGET / base delay)), so a
//!   flow on a short path ramps more slowly than Reno would;
//! - multiplicative decrease above the target: per RTT
//!   W += max(GAIN − CONSTANT·W·(delay/TARGET − 1), −W/2) with CONSTANT = 1 (in MSS), applied
//!   per ACK in proportion to the bytes it acknowledges;
//! - a modified slow start: growth by GAIN × bytes acked, left when the queueing delay
//!   exceeds 3/4 of TARGET;
//! - an initial slowdown two RTTs after slow start ends and periodic slowdowns after it:
//!   ssthresh = cwnd, cwnd = 2 packets for two RTTs (the queue drains, so the base delay is
//!   measured again by every LEDBAT++ flow sharing the bottleneck), then slow start back to
//!   ssthresh; the next slowdown starts 9 × that slowdown's duration after it ended, so a
//!   slowdown costs at most ~10 % of the time.
//!
//! Loss halves cwnd (floor 2 MSS), as LEDBAT. As in `ledbat`, cwnd may not exceed FlightSize + 1
//! MSS in congestion avoidance. Decided here: a loss in slow start ends slow start like the
//! delay exit (and schedules the initial slowdown); a loss during a slowdown ends it. The RTT
//! of "two RTTs" is the smoothed RTT when the slowdown starts.

use super::ledbat::{DelayFilters, LedbatParams, ALLOWED_INCREASE, MIN_CWND};
use super::{
    AckSample, BuildCtx, CcBuild, CcEntry, CcKind, CcTransport, CongestionControl, CongestionEvent,
    Window,
};
use crate::units::{Dur, SimTime};
use std::sync::Arc;

pub(super) const ENTRY: CcEntry = CcEntry {
    name: "ledbat++",
    doc: "LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus): RTT-based, 60 ms target, slowdowns",
    keys: &["target", "gain"],
    extra: CcKind { transport: CcTransport::Tcp, plus: None },
    parse: |t, _| Ok(Arc::new(PlusPlusParams(LedbatParams::read(t, TARGET)?))),
};

const TARGET: Dur = Dur::from_millis(60);
/// The largest divisor of the dynamic gain.
const MAX_GAIN_DIVISOR: f64 = 16.0;
/// Multiplicative-decrease constant.
const DECREASE_CONSTANT: f64 = 1.0;
/// Slow start ends when the queueing delay exceeds this fraction of TARGET.
const SS_EXIT_FRACTION: f64 = 0.75;
/// RTTs at 2 packets in a slowdown, and RTTs from slow-start exit to the initial slowdown.
const SLOWDOWN_RTTS: u64 = 2;
/// The next slowdown comes this many slowdown durations after one ends.
const SLOWDOWN_INTERVAL: u64 = 9;

/// LEDBAT++'s parameters: LEDBAT's keys (gain unset: the dynamic gain).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlusPlusParams(pub LedbatParams);

impl CcBuild for PlusPlusParams {
    fn build(&self, ctx: BuildCtx) -> Box<dyn CongestionControl> {
        Box::new(LedbatPlusPlus::new(self.0, ctx.mss))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    SlowStart,
    CongAvoid,
    /// cwnd held at 2 packets until `until`.
    SlowdownHold {
        until: SimTime,
    },
    /// Slow start back to the ssthresh saved when the slowdown began.
    SlowdownRamp,
}

pub struct LedbatPlusPlus {
    p: LedbatParams,
    mss: u64,
    f: DelayFilters,
    phase: Phase,
    cwnd: f64,
    written: u64,
    /// When the next slowdown begins (None: not scheduled yet).
    next_slowdown: Option<SimTime>,
    slowdown_start: SimTime,
    /// Slowdowns begun so far (diagnostics, tests).
    pub slowdowns: u64,
}

impl LedbatPlusPlus {
    pub fn new(p: LedbatParams, mss: u64) -> LedbatPlusPlus {
        LedbatPlusPlus {
            p,
            mss: mss.max(1),
            f: DelayFilters::new(),
            phase: Phase::SlowStart,
            cwnd: 0.0,
            written: 0,
            next_slowdown: None,
            slowdown_start: SimTime::ZERO,
            slowdowns: 0,
        }
    }

    /// The draft's dynamic gain: the configured gain, or 1 / min(16, ceil(2·TARGET / base)).
    fn gain(&self) -> f64 {
        if let Some(g) = self.p.gain {
            return g;
        }
        let base = self.f.base().map_or(0.0, Dur::secs_f64);
        if base <= 0.0 {
            return 1.0 / MAX_GAIN_DIVISOR;
        }
        1.0 / MAX_GAIN_DIVISOR.min((2.0 * self.p.target.secs_f64() / base).ceil()).max(1.0)
    }

    fn end_slow_start(&mut self, w: &mut Window, now: SimTime, rtt: Dur) {
        w.ssthresh = w.cwnd.max(MIN_CWND * self.mss);
        self.phase = Phase::CongAvoid;
        if self.next_slowdown.is_none() {
            self.next_slowdown = Some(now + Dur(SLOWDOWN_RTTS * rtt.0));
        }
    }

    fn end_slowdown(&mut self, w: &mut Window, now: SimTime) {
        let took = now.since(self.slowdown_start);
        self.next_slowdown = Some(now + Dur(SLOWDOWN_INTERVAL * took.0));
        self.phase = Phase::CongAvoid;
        w.ssthresh = w.cwnd.max(MIN_CWND * self.mss);
    }
}

impl CongestionControl for LedbatPlusPlus {
    fn name(&self) -> &'static str {
        "ledbat++"
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if let Some(rtt) = a.rtt {
            self.f.add(a.now, rtt);
        }
        if w.cwnd != self.written {
            self.cwnd = w.cwnd as f64;
        }
        if a.ca_state.reducing() || a.acked_bytes == 0 {
            return;
        }
        let Some(q) = self.f.queuing_delay() else { return };
        let rtt = a.srtt.or(a.rtt).unwrap_or(Dur::from_millis(100));
        let mss = self.mss as f64;
        let acked = a.acked_bytes as f64;
        let gain = self.gain();
        let ratio = q.secs_f64() / self.p.target.secs_f64();
        if let Phase::SlowdownHold { until } = self.phase {
            if a.now < until {
                return; // cwnd stays at 2 packets: the queue drains
            }
            self.phase = Phase::SlowdownRamp;
        }
        match self.phase {
            Phase::SlowStart | Phase::SlowdownRamp => {
                if ratio > SS_EXIT_FRACTION {
                    if self.phase == Phase::SlowStart {
                        self.end_slow_start(w, a.now, rtt);
                    } else {
                        self.end_slowdown(w, a.now);
                    }
                } else {
                    self.cwnd += gain * acked;
                    if self.phase == Phase::SlowdownRamp && self.cwnd >= w.ssthresh as f64 {
                        self.cwnd = w.ssthresh as f64;
                        w.cwnd = self.cwnd as u64;
                        self.end_slowdown(w, a.now);
                    }
                }
            }
            Phase::CongAvoid => {
                let per_rtt_mss = if ratio <= 1.0 {
                    gain
                } else {
                    let wnd = self.cwnd / mss;
                    (gain - DECREASE_CONSTANT * wnd * (ratio - 1.0)).max(-wnd / 2.0)
                };
                self.cwnd += per_rtt_mss * mss * acked / self.cwnd.max(mss);
                let max_allowed = (a.prior_in_flight + ALLOWED_INCREASE * self.mss) as f64;
                self.cwnd = self.cwnd.min(max_allowed);
                if self.next_slowdown.is_some_and(|t| a.now >= t) {
                    // A periodic (or the initial) slowdown. ssthresh remembers the window to ramp back to.
                    w.ssthresh = (self.cwnd as u64).max(MIN_CWND * self.mss);
                    self.cwnd = (MIN_CWND * self.mss) as f64;
                    self.slowdown_start = a.now;
                    self.slowdowns += 1;
                    self.phase = Phase::SlowdownHold { until: a.now + Dur(SLOWDOWN_RTTS * rtt.0) };
                }
            }
            Phase::SlowdownHold { .. } => unreachable!("left above"),
        }
        self.cwnd = self.cwnd.max((MIN_CWND * self.mss) as f64);
        w.cwnd = self.cwnd as u64;
        if self.phase == Phase::CongAvoid {
            w.ssthresh = w.ssthresh.min(w.cwnd);
        }
        self.written = w.cwnd;
    }

    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent) {
        w.ssthresh = (w.cwnd / 2).max(MIN_CWND * self.mss);
        match self.phase {
            Phase::SlowStart => {
                self.phase = Phase::CongAvoid;
                if self.next_slowdown.is_none() {
                    // Two RTTs from now; the RTT is not known here, so the base delay stands in.
                    let rtt = self.f.current().unwrap_or(Dur::from_millis(100));
                    self.next_slowdown = Some(e.now + Dur(SLOWDOWN_RTTS * rtt.0));
                }
            }
            Phase::SlowdownHold { .. } | Phase::SlowdownRamp => {
                let ss = w.ssthresh;
                self.end_slowdown(w, e.now);
                w.ssthresh = ss;
            }
            Phase::CongAvoid => {}
        }
    }

    fn state_label(&self, _w: &Window) -> &'static str {
        match self.phase {
            Phase::SlowStart => "slow_start",
            Phase::CongAvoid => "cong_avoid",
            Phase::SlowdownHold { .. } | Phase::SlowdownRamp => "slowdown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(ms: u64, rtt_ms: u64, acked: u64, prior_in_flight: u64) -> AckSample {
        let mut a =
            AckSample::test(SimTime(Dur::from_millis(ms).0), acked, Some(Dur::from_millis(rtt_ms)));
        a.prior_in_flight = prior_in_flight;
        a
    }

    fn pp() -> LedbatPlusPlus {
        LedbatPlusPlus::new(LedbatParams { target: TARGET, gain: None }, MSS)
    }

    #[test]
    fn gain_follows_the_base_delay() {
        let mut c = pp();
        assert_eq!(c.gain(), 1.0 / 16.0, "no sample yet");
        c.f.add(SimTime::ZERO, Dur::from_millis(20)); // ceil(120 / 20) = 6
        assert_eq!(c.gain(), 1.0 / 6.0);
        let mut c = pp();
        c.f.add(SimTime::ZERO, Dur::from_millis(200)); // ceil(0.6) = 1
        assert_eq!(c.gain(), 1.0);
        let mut c = pp();
        c.f.add(SimTime::ZERO, Dur::from_millis(1)); // 120, capped at 16
        assert_eq!(c.gain(), 1.0 / 16.0);
    }

    #[test]
    fn decrease_is_multiplicative_and_bounded_by_half_a_window() {
        let mut c = pp();
        let mut w = Window { cwnd: 100 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.phase = Phase::CongAvoid;
        c.f.add(SimTime::ZERO, Dur::from_millis(20));
        // 20 ms base, delay 90 ms (1.5 × target): W·0.5 = 50 MSS per RTT, capped at W/2 = 50.
        for i in 0..4 {
            c.f.add(SimTime(i), Dur::from_millis(110));
        }
        let before = w.cwnd;
        c.on_ack(&mut w, &ack(1, 110, MSS, 200 * MSS));
        let per_ack = before as f64 - w.cwnd as f64;
        // Per ACK: (1/6 − 50) MSS × MSS / cwnd ≈ 498 bytes.
        assert!((per_ack - 498.3).abs() < 2.0, "{per_ack}");
    }

    #[test]
    fn slowdown_holds_two_packets_then_ramps_back_and_schedules_the_next() {
        let mut c = pp();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        // Slow start on a 20 ms path until the delay passes 45 ms of queue.
        let mut t = 0;
        for _ in 0..200 {
            t += 1;
            let a = ack(t, 20, MSS, w.cwnd);
            c.on_ack(&mut w, &a);
        }
        assert_eq!(c.phase, Phase::SlowStart);
        for _ in 0..4 {
            t += 1;
            let a = ack(t, 70, MSS, w.cwnd);
            c.on_ack(&mut w, &a);
        }
        assert_eq!(c.phase, Phase::CongAvoid);
        let window = w.cwnd;
        // Two RTTs (srtt 70 ms) later the initial slowdown begins.
        t += 150;
        let a = ack(t, 70, MSS, w.cwnd + MSS);
        c.on_ack(&mut w, &a);
        assert_eq!(c.slowdowns, 1);
        assert_eq!(w.cwnd, 2 * MSS);
        assert!(w.ssthresh >= window - MSS, "{} vs {window}", w.ssthresh);
        t += 100;
        c.on_ack(&mut w, &ack(t, 20, MSS, 2 * MSS));
        assert_eq!(w.cwnd, 2 * MSS, "held for two RTTs");
        // After the hold, slow start (gain 1/6 per byte acked) back to ssthresh.
        t += 100;
        let start = t;
        while c.phase != Phase::CongAvoid {
            t += 1;
            let a = ack(t, 20, MSS, w.cwnd);
            c.on_ack(&mut w, &a);
        }
        assert!(w.cwnd >= w.ssthresh && w.cwnd + MSS >= window, "{}", w.cwnd);
        let took = Dur::from_millis(t - start + 200);
        let next = c.next_slowdown.unwrap();
        assert_eq!(next, SimTime(Dur::from_millis(t).0) + Dur(9 * took.0));
    }
}
