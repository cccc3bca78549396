//! How fast a link serializes: a constant rate, a Mahimahi trace of delivery opportunities,
//! or a stochastic cellular model. `serve` integrates the time-varying capacity, so a rate
//! change in the middle of a packet is handled exactly. The capacity of a link never depends
//! on the traffic it carries: the models advance in time on their own, so two runs with the
//! same seed see the same capacity whatever their congestion controls do.

use crate::engine::SimRng;
use crate::net::schedule::ScheduleRate;
use crate::units::{Dur, Rate, SimTime};
use std::sync::Arc;

/// Bytes a Mahimahi delivery opportunity carries.
pub const TRACE_OPPORTUNITY_BYTES: u64 = 1500;

#[derive(Debug, Clone)]
pub enum RateModel {
    Constant(Rate),
    // Boxed: a constant rate (nearly every link) keeps the enum at 16 bytes, in the link's
    // first cache line.
    Trace(Box<TraceRate>),
    Cellular(Box<CellularRate>),
    /// The rate column of a schedule-driven link (net/schedule.rs).
    Schedule(Box<ScheduleRate>),
}

impl RateModel {
    /// When serialization of `bytes` that starts at `start` ends. Calls come in
    /// non-decreasing `start` order (one packet at a time).
    #[inline]
    pub fn serve(&mut self, start: SimTime, bytes: u64) -> SimTime {
        match self {
            RateModel::Constant(r) => start + r.tx_time(bytes),
            RateModel::Trace(t) => t.serve(start, bytes),
            RateModel::Cellular(c) => c.serve(start, bytes),
            RateModel::Schedule(s) => s.serve(start, bytes),
        }
    }

    /// The capacity at `now` (what a phone reads from its radio; for time series).
    pub fn rate_at(&mut self, now: SimTime) -> Rate {
        match self {
            RateModel::Constant(r) => *r,
            RateModel::Trace(t) => t.rate_at(now),
            RateModel::Cellular(c) => c.rate_at(now),
            RateModel::Schedule(s) => s.rate_at(now),
        }
    }

    /// Bytes the link could have carried over [0, t). Calls come in non-decreasing `t`
    /// (measurement windows take differences).
    pub fn cumulative_capacity(&mut self, t: SimTime) -> u64 {
        match self {
            RateModel::Constant(r) => r.bytes_in(t.since(SimTime::ZERO)),
            RateModel::Trace(tr) => tr.opportunities_in(SimTime::ZERO, t) * TRACE_OPPORTUNITY_BYTES,
            RateModel::Cellular(c) => c.cumulative_bits(t) / 8,
            RateModel::Schedule(s) => s.cumulative_bytes(t),
        }
    }

    /// The long-run mean rate (the nominal rate in reports).
    pub fn mean_rate(&self) -> Rate {
        match self {
            RateModel::Constant(r) => *r,
            RateModel::Trace(t) => t.mean_rate(),
            RateModel::Cellular(c) => Rate((c.min.0 + c.max.0) / 2),
            RateModel::Schedule(s) => s.mean_rate(),
        }
    }

    pub fn is_constant(&self) -> bool {
        matches!(self, RateModel::Constant(_))
    }
}

/// A Mahimahi trace: one line per 1500-byte delivery opportunity, at a millisecond timestamp;
/// the trace loops with the last timestamp as its period (as `mm-link` does). Opportunities
/// not used when they occur are lost; part of one left over by a small packet serves the next
/// packet at that same instant.
#[derive(Debug, Clone)]
pub struct TraceRate {
    /// Opportunity times in ms from the start of the trace (non-decreasing).
    times_ms: Arc<Vec<u64>>,
    period_ms: u64,
    /// Global index (over loops) of the next unused opportunity.
    next: u64,
    credit: u64,
    credit_at: SimTime,
}

impl TraceRate {
    pub fn new(times_ms: Arc<Vec<u64>>) -> TraceRate {
        let period_ms = *times_ms.last().expect("validated non-empty trace");
        TraceRate { times_ms, period_ms, next: 0, credit: 0, credit_at: SimTime::ZERO }
    }

    /// Parses Mahimahi's format; errors say which line is wrong.
    pub fn parse(text: &str) -> Result<Vec<u64>, String> {
        let mut v = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() {
                continue;
            }
            let t: u64 = l.parse().map_err(|_| {
                format!("line {}: expected a millisecond timestamp, got \"{l}\"", i + 1)
            })?;
            if v.last().is_some_and(|&p| t < p) {
                return Err(format!(
                    "line {}: timestamps must not decrease ({} after {})",
                    i + 1,
                    t,
                    v.last().unwrap()
                ));
            }
            v.push(t);
        }
        match v.last() {
            None => Err("the trace has no delivery opportunities".into()),
            Some(0) => {
                Err("the last timestamp must be greater than 0 (it is the loop period)".into())
            }
            Some(_) => Ok(v),
        }
    }

    #[inline]
    fn time_of(&self, j: u64) -> SimTime {
        let n = self.times_ms.len() as u64;
        let ms = (j / n) * self.period_ms + self.times_ms[(j % n) as usize];
        SimTime(ms * 1_000_000)
    }

    /// Index of the first opportunity at or after `t`.
    fn first_at_or_after(&self, t: SimTime) -> u64 {
        let n = self.times_ms.len() as u64;
        let period_ns = self.period_ms * 1_000_000;
        let mut lap = t.0 / period_ns;
        let mut within_ms = (t.0 - lap * period_ns).div_ceil(1_000_000);
        if within_ms == 0 && lap > 0 {
            // A lap's last opportunities sit at time = period, i.e. at the next lap's start.
            lap -= 1;
            within_ms = self.period_ms;
        }
        let k = self.times_ms.partition_point(|&m| m < within_ms) as u64;
        lap * n + k
    }

    fn serve(&mut self, start: SimTime, bytes: u64) -> SimTime {
        let mut need = bytes;
        if self.credit > 0 && self.credit_at == start {
            let used = need.min(self.credit);
            self.credit -= used;
            need -= used;
            if need == 0 {
                return start;
            }
        }
        self.credit = 0;
        self.next = self.next.max(self.first_at_or_after(start));
        loop {
            let t = self.time_of(self.next);
            self.next += 1;
            if need <= TRACE_OPPORTUNITY_BYTES {
                self.credit = TRACE_OPPORTUNITY_BYTES - need;
                self.credit_at = t;
                return t;
            }
            need -= TRACE_OPPORTUNITY_BYTES;
        }
    }

    fn opportunities_in(&self, from: SimTime, to: SimTime) -> u64 {
        self.first_at_or_after(to).saturating_sub(self.first_at_or_after(from))
    }

    /// Capacity over the last 100 ms.
    fn rate_at(&self, now: SimTime) -> Rate {
        let from = SimTime(now.0.saturating_sub(100_000_000));
        let span = now.since(from).0.max(1);
        Rate(
            (self.opportunities_in(from, now) * TRACE_OPPORTUNITY_BYTES * 8) as u128 as u64
                * 1_000_000_000
                / span,
        )
    }

    fn mean_rate(&self) -> Rate {
        Rate(self.times_ms.len() as u64 * TRACE_OPPORTUNITY_BYTES * 8 * 1000 / self.period_ms)
    }
}

/// The stochastic cellular model (after the ABRWDA paper's two random variables): a signal
/// regime, good or weak, that persists for exponentially distributed times (mean `dwell`),
/// and within it a rate drawn uniformly every `interval` from the regime's half of
/// [min, max] (good: the upper half, weak: the lower half).
#[derive(Debug, Clone)]
pub struct CellularRate {
    pub min: Rate,
    pub max: Rate,
    pub interval: Dur,
    pub dwell: Dur,
    rng: SimRng,
    good: bool,
    regime_until: SimTime,
    /// Start of the current interval and its rate.
    slot_start: SimTime,
    slot_rate: Rate,
    /// Capacity in bits over [0, slot_start).
    bits_before_slot: u128,
}

impl CellularRate {
    pub fn new(
        min: Rate,
        max: Rate,
        interval: Dur,
        dwell: Dur,
        p_good: f64,
        mut rng: SimRng,
    ) -> CellularRate {
        let good = rng.uniform() < p_good;
        let mut c = CellularRate {
            min,
            max,
            interval,
            dwell,
            rng,
            good,
            regime_until: SimTime::ZERO,
            slot_start: SimTime::ZERO,
            slot_rate: min,
            bits_before_slot: 0,
        };
        c.regime_until = SimTime::ZERO + c.draw_dwell();
        c.slot_rate = c.draw_rate();
        c
    }

    fn draw_dwell(&mut self) -> Dur {
        // Exponential with mean `dwell` (at least one interval).
        let u = self.rng.uniform();
        Dur::from_secs_f64(-(1.0 - u).ln() * self.dwell.secs_f64()).max(self.interval)
    }

    fn draw_rate(&mut self) -> Rate {
        let mid = (self.min.0 + self.max.0) / 2;
        let (lo, hi) = if self.good { (mid, self.max.0) } else { (self.min.0, mid) };
        Rate(lo + (self.rng.uniform() * (hi - lo) as f64) as u64)
    }

    /// Moves to the interval containing `t`, drawing every interval on the way.
    fn advance_to(&mut self, t: SimTime) {
        while t >= self.slot_start + self.interval {
            self.bits_before_slot +=
                self.slot_rate.0 as u128 * self.interval.0 as u128 / 1_000_000_000;
            self.slot_start += self.interval;
            if self.slot_start >= self.regime_until {
                self.good = !self.good;
                self.regime_until = self.slot_start + self.draw_dwell();
            }
            self.slot_rate = self.draw_rate();
        }
    }

    fn serve(&mut self, start: SimTime, bytes: u64) -> SimTime {
        self.advance_to(start);
        let mut t = start;
        let mut bits = bytes as u128 * 8;
        loop {
            let end = self.slot_start + self.interval;
            let avail_ns = end.since(t).0 as u128;
            let can = avail_ns * self.slot_rate.0 as u128 / 1_000_000_000;
            if bits <= can {
                let ns = (bits * 1_000_000_000).div_ceil(self.slot_rate.0 as u128);
                return t + Dur(ns as u64);
            }
            bits -= can;
            t = end;
            self.advance_to(t);
        }
    }

    fn rate_at(&mut self, now: SimTime) -> Rate {
        self.advance_to(now);
        self.slot_rate
    }

    fn cumulative_bits(&mut self, t: SimTime) -> u64 {
        self.advance_to(t);
        (self.bits_before_slot
            + self.slot_rate.0 as u128 * t.since(self.slot_start).0 as u128 / 1_000_000_000)
            as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Stream;

    #[test]
    fn trace_parsing_rejects_bad_files() {
        assert_eq!(TraceRate::parse("0\n1\n1\n3\n").unwrap(), vec![0, 1, 1, 3]);
        assert!(TraceRate::parse("5\n3\n").unwrap_err().contains("line 2"));
        assert!(TraceRate::parse("x\n").unwrap_err().contains("line 1"));
        assert!(TraceRate::parse("0\n").unwrap_err().contains("greater than 0"));
        assert!(TraceRate::parse("\n").is_err());
    }

    #[test]
    fn trace_serves_one_packet_per_opportunity_and_loops() {
        // Opportunities at 1, 1, 3 ms; period 3 ms.
        let mut t = TraceRate::new(Arc::new(vec![1, 1, 3]));
        let ms = |m: u64| SimTime(m * 1_000_000);
        assert_eq!(t.serve(ms(0), 1500), ms(1));
        assert_eq!(t.serve(ms(1), 1500), ms(1));
        assert_eq!(t.serve(ms(1), 1500), ms(3));
        // Next lap: 4, 4, 6 ms.
        assert_eq!(t.serve(ms(3), 3000), ms(4));
        // An idle gap wastes opportunities: starting at 5 ms, the next is at 6.
        assert_eq!(t.serve(ms(5), 52), ms(6));
        // The rest of that opportunity serves a small packet at the same instant.
        assert_eq!(t.serve(ms(6), 1000), ms(6));
        // Opportunities at a lap's end (6 ms = 2 periods) are not skipped by a start at 6 ms.
        let mut u = TraceRate::new(Arc::new(vec![1, 3, 3]));
        assert_eq!(u.serve(ms(3), 1500), ms(3));
        assert_eq!(u.serve(ms(3), 1500), ms(3));
        assert_eq!(u.serve(ms(3), 1500), ms(4));
        assert_eq!(u.opportunities_in(ms(0), ms(6)), 4); // 1, 3, 3, 4 (the two at 6 ms are outside)
        assert_eq!(t.mean_rate(), Rate(3 * 1500 * 8 * 1000 / 3));
    }

    #[test]
    fn cellular_rate_stays_in_range_and_integrates_across_slots() {
        let rng = SimRng::new(1, Stream::LinkLoss, 0);
        let mut c = CellularRate::new(
            Rate(3_100_000),
            Rate(9_300_000),
            Dur::from_millis(10),
            Dur::from_secs(2),
            0.5,
            rng,
        );
        let mut t = SimTime::ZERO;
        for _ in 0..20_000 {
            let before = c.cumulative_bits(t);
            let r = c.rate_at(t);
            assert!(r >= Rate(3_100_000) && r <= Rate(9_300_000));
            let end = c.serve(t, 1500);
            // 1500 B at ≥ 3.1 Mbit/s takes at most 3.88 ms; at ≤ 9.3 Mbit/s at least 1.29 ms.
            let d = end.since(t);
            assert!(d >= Dur(1_290_000) && d <= Dur(3_872_000), "{d:?}");
            // The capacity integral over the packet's service is its size (±1 bit of rounding).
            let served = c.cumulative_bits(end) - before;
            assert!(served.abs_diff(12_000) <= 1, "{served}");
            t = end;
        }
    }
}
