//! Schedule-driven links: a link whose propagation delay, capacity and loss change at listed
//! times — a satellite path reconfigured every few seconds, a replayed measurement.
//!
//! A [`Schedule`] is a list of points, each holding from its time until the next (the last
//! until the run ends). It comes from a file (format in docs/topology.md, "Schedule-driven
//! links") or from the LEO generator ([`LeoCfg`]) with the behaviour measurement studies of
//! Starlink report:
//! - the user terminal is reassigned to a satellite by a global scheduler every 15 s, at
//!   fixed offsets (seconds 12, 27, 42 and 57 of each minute): Tanveer, Puchol, Singh,
//!   Bianchi, Nithyanand, "Making Sense of Constellations: Methodologies for Understanding
//!   Starlink's Scheduling Algorithms", CoNEXT 2023 companion (arXiv 2307.00402);
//! - the minimum latency steps at every reassignment and packets are lost around it
//!   (Huston, APNIC, "A Transport Protocol's View of Starlink", 2024: minimum RTT changing
//!   every 15 s, the worst step 30 → 80 ms, loss at the switches); capacity changes with the
//!   satellite and its load.
//!
//! Simplified: within an interval the delay is constant (the satellite's drift over 15 s,
//! ~1 ms, is left out); the generator draws each interval's delay and rate uniformly and
//! independently in the ranges given (no correlation between neighbouring intervals); the
//! switch's loss is a burst of random loss at a fixed probability for a fixed time.
//!
//! **Order on the wire.** A packet keeps the delay in force when it finishes serialization.
//! When the delay drops, a packet sent just after the step would overtake those still on the
//! old, longer path; the link keeps the wire first-in first-out instead: such a packet arrives
//! no earlier than the last one sent before the step (see [`Link`](super::Link)'s
//! `follow_schedule`). A real handover may reorder; the choice keeps TCP's reordering
//! heuristics out of what the schedule measures.

use crate::engine::SimRng;
use crate::units::{Dur, Rate, SimTime};
use std::sync::Arc;

/// One point of a schedule: from `at`, the link has this delay, rate and loss.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub at: SimTime,
    pub delay: Dur,
    /// None: the link's own `rate` model serves (a file whose rate column is `-`).
    pub rate: Option<Rate>,
    pub loss: f64,
}

/// Points in increasing time, the first at time 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub points: Vec<Point>,
}

impl Schedule {
    /// Parses a schedule file: one point a line, `time_ms delay_ms rate_mbps loss` separated
    /// by spaces, tabs or commas (`rate` may be `-`: the link's `rate` serves; `loss` is a
    /// probability in [0, 1]); `#` starts a comment. Errors name the line.
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let mut points: Vec<Point> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let n = i + 1;
            let cols: Vec<&str> = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .collect();
            if cols.len() != 4 {
                return Err(format!(
                    "line {n}: expected 4 columns (time_ms delay_ms rate_mbps loss), got {}",
                    cols.len()
                ));
            }
            let num = |s: &str, what: &str| -> Result<f64, String> {
                let v: f64 = s
                    .parse()
                    .map_err(|_| format!("line {n}: {what} must be a number, got \"{s}\""))?;
                if !v.is_finite() || v < 0.0 {
                    return Err(format!("line {n}: {what} must not be negative, got {s}"));
                }
                Ok(v)
            };
            let at = SimTime((num(cols[0], "time_ms")? * 1e6).round() as u64);
            let delay = Dur((num(cols[1], "delay_ms")? * 1e6).round() as u64);
            if delay.0 == 0 {
                return Err(format!("line {n}: delay_ms must be greater than 0"));
            }
            let rate = match cols[2] {
                "-" => None,
                s => {
                    let r = Rate((num(s, "rate_mbps")? * 1e6).round() as u64);
                    Some(r)
                }
            };
            let loss = num(cols[3], "loss")?;
            if loss > 1.0 {
                return Err(format!("line {n}: loss is a probability in [0, 1], got {}", cols[3]));
            }
            match points.last() {
                None if at != SimTime::ZERO => {
                    return Err(format!("line {n}: the first point must be at time 0"))
                }
                Some(p) if at <= p.at => {
                    return Err(format!(
                        "line {n}: times must increase ({} ms after {} ms)",
                        cols[0],
                        p.at.0 as f64 / 1e6
                    ))
                }
                Some(p) if p.rate.is_some() != rate.is_some() => {
                    return Err(format!(
                        "line {n}: the rate column is either `-` on every line or a rate on \
                         every line"
                    ))
                }
                _ => {}
            }
            points.push(Point { at, delay, rate, loss });
        }
        if points.is_empty() {
            return Err("the schedule has no points".into());
        }
        if points.last().is_some_and(|p| p.rate == Some(Rate(0))) {
            return Err("the last point's rate must be greater than 0 (it holds to the end)".into());
        }
        Ok(Schedule { points })
    }

    /// Whether the schedule sets the rate (else the link's own rate model serves).
    pub fn sets_rate(&self) -> bool {
        self.points[0].rate.is_some()
    }

    /// The time-weighted mean rate over [0, `span`) (the nominal rate in reports and what
    /// rate-derived queue settings use); the first point's rate if the span is empty.
    pub fn mean_rate(&self, span: Dur) -> Option<Rate> {
        self.points[0].rate?;
        let end = SimTime(span.0.max(1));
        let mut bits = 0u128;
        for (i, p) in self.points.iter().enumerate() {
            if p.at >= end {
                break;
            }
            let until = self.points.get(i + 1).map_or(end, |q| q.at.min(end));
            bits += p.rate.unwrap().0 as u128 * until.since(p.at).0 as u128;
        }
        Some(Rate((bits / end.0 as u128) as u64))
    }

    /// The nominal rate (reports, rate-derived queue settings): the time-weighted mean up to
    /// the last point, or the only point's rate; None if the schedule leaves the rate to the
    /// link.
    pub fn nominal_rate(&self) -> Option<Rate> {
        match self.points.len() {
            1 => self.points[0].rate,
            _ => self.mean_rate(self.points.last().unwrap().at.since(SimTime::ZERO)),
        }
    }

    /// The smallest delay of any point (the base of the path).
    pub fn min_delay(&self) -> Dur {
        self.points.iter().map(|p| p.delay).min().unwrap()
    }
}

/// The LEO access generator's settings (`schedule = { model = "leo", ... }`).
#[derive(Debug, Clone, PartialEq)]
pub struct LeoCfg {
    /// Time between reconfigurations (15 s measured).
    pub interval: Dur,
    /// When the first reconfiguration happens (12 s: the first boundary of a minute).
    pub offset: Dur,
    /// The range each interval's one-way delay is drawn from.
    pub delay_min: Dur,
    pub delay_max: Dur,
    /// The range each interval's rate is drawn from.
    pub rate_min: Rate,
    pub rate_max: Rate,
    /// Random loss during the switch and how long it lasts (0: no burst).
    pub switch_loss: f64,
    pub switch_time: Dur,
    /// Random loss between switches.
    pub loss: f64,
}

impl LeoCfg {
    /// The schedule over [0, `horizon`): a point at 0, one at every reconfiguration (a new
    /// delay and rate), and the end of each loss burst.
    pub fn generate(&self, mut rng: SimRng, horizon: Dur) -> Schedule {
        let mut draw = |lo: u64, hi: u64| lo + (rng.uniform() * (hi - lo) as f64) as u64;
        let mut points = Vec::new();
        let mut at = SimTime::ZERO;
        let mut next = SimTime(self.offset.0);
        let end = SimTime(horizon.0.max(1));
        loop {
            let delay = Dur(draw(self.delay_min.0, self.delay_max.0));
            let rate = Rate(draw(self.rate_min.0, self.rate_max.0));
            let burst = at > SimTime::ZERO && self.switch_time.0 > 0 && self.switch_loss > 0.0;
            if burst {
                points.push(Point { at, delay, rate: Some(rate), loss: self.switch_loss });
                let calm = (at + self.switch_time).min(next);
                if calm < next {
                    points.push(Point { at: calm, delay, rate: Some(rate), loss: self.loss });
                }
            } else {
                points.push(Point { at, delay, rate: Some(rate), loss: self.loss });
            }
            if next >= end {
                break;
            }
            at = next;
            next += self.interval;
        }
        Schedule { points }
    }
}

/// A schedule's capacity as a link's rate model: piecewise constant, integrated exactly across
/// its steps (a rate of 0 is an outage the serializer waits out).
#[derive(Debug, Clone)]
pub struct ScheduleRate {
    sched: Arc<Schedule>,
    /// The point in force at the last time asked, and the capacity in bits before it.
    i: usize,
    bits_before: u128,
}

impl ScheduleRate {
    pub fn new(sched: Arc<Schedule>) -> ScheduleRate {
        debug_assert!(sched.sets_rate());
        ScheduleRate { sched, i: 0, bits_before: 0 }
    }

    fn rate(&self, i: usize) -> u64 {
        self.sched.points[i].rate.map_or(0, |r| r.0)
    }

    fn end_of(&self, i: usize) -> SimTime {
        self.sched.points.get(i + 1).map_or(SimTime::MAX, |p| p.at)
    }

    /// Moves to the point in force at `t` (calls come in non-decreasing time).
    fn advance_to(&mut self, t: SimTime) {
        while t >= self.end_of(self.i) {
            let p = &self.sched.points[self.i];
            let span = self.end_of(self.i).since(p.at).0 as u128;
            self.bits_before += self.rate(self.i) as u128 * span / 1_000_000_000;
            self.i += 1;
        }
    }

    pub fn serve(&mut self, start: SimTime, bytes: u64) -> SimTime {
        self.advance_to(start);
        let mut t = start;
        let mut bits = bytes as u128 * 8;
        loop {
            let end = self.end_of(self.i);
            let r = self.rate(self.i) as u128;
            if end == SimTime::MAX {
                let ns = (bits * 1_000_000_000).div_ceil(r);
                return t + Dur(ns as u64);
            }
            let can = end.since(t).0 as u128 * r / 1_000_000_000;
            if bits <= can && r > 0 {
                let ns = (bits * 1_000_000_000).div_ceil(r);
                return t + Dur(ns as u64);
            }
            bits -= can;
            t = end;
            self.advance_to(t);
        }
    }

    pub fn rate_at(&mut self, now: SimTime) -> Rate {
        self.advance_to(now);
        Rate(self.rate(self.i))
    }

    pub fn cumulative_bytes(&mut self, t: SimTime) -> u64 {
        self.advance_to(t);
        let p = &self.sched.points[self.i];
        ((self.bits_before + self.rate(self.i) as u128 * t.since(p.at).0 as u128 / 1_000_000_000)
            / 8) as u64
    }

    /// The schedule's nominal rate ([`Schedule::nominal_rate`]).
    pub fn mean_rate(&self) -> Rate {
        self.sched.nominal_rate().unwrap_or(Rate(0))
    }
}

/// Where a link stands in its schedule's delay and loss (the rate is its rate model's).
#[derive(Debug, Clone)]
pub struct PathSchedule {
    sched: Arc<Schedule>,
    /// The next point to apply.
    next: usize,
    /// The delay in force (the link's `delay` may be stretched to keep the wire in order).
    delay: Dur,
    /// The latest arrival of a packet already on the wire (packets after a delay drop wait
    /// for it).
    last_arrival: SimTime,
    /// Whether this direction takes the schedule's loss (the data direction).
    lossy: bool,
    /// The first end of transmission with something to change.
    due: SimTime,
}

/// What changes from a packet's end of serialization on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathNow {
    /// This packet's propagation delay (and the next ones', until the next change).
    pub delay: Dur,
    /// The loss probability from now on, if it changed.
    pub loss: Option<f64>,
}

impl PathSchedule {
    pub fn new(sched: Arc<Schedule>, lossy: bool) -> PathSchedule {
        let delay = sched.points[0].delay;
        PathSchedule {
            sched,
            next: 0,
            delay,
            last_arrival: SimTime::ZERO,
            lossy,
            due: SimTime::ZERO,
        }
    }

    /// The first delay (the link's at the start).
    pub fn initial_delay(&self) -> Dur {
        self.sched.points[0].delay
    }

    /// A packet finishes serialization at `end` (`started`: when it started; the previous
    /// packet ended no later), with the link's delay so far `prev_delay`: applies the points
    /// due and says this packet's delay and loss, if they change (None: as before).
    pub fn at(&mut self, started: SimTime, end: SimTime, prev_delay: Dur) -> Option<PathNow> {
        if end < self.due {
            return None;
        }
        let pts = &self.sched.points;
        let mut loss = None;
        let mut stepped = false;
        while self.next < pts.len() && pts[self.next].at <= end {
            let p = pts[self.next];
            if self.next > 0 && !stepped {
                // Every packet before this one ended before the step and no later than this
                // one started: it arrives by then plus the delay it left with.
                let prev_end = p.at.min(started);
                self.last_arrival = self.last_arrival.max(prev_end + prev_delay);
                stepped = true;
            }
            self.delay = p.delay;
            if self.lossy {
                loss = Some(p.loss);
            }
            self.next += 1;
        }
        let natural = end + self.delay;
        let arrival = natural.max(self.last_arrival);
        self.last_arrival = arrival;
        self.due = if arrival > natural {
            // Still behind the old path's last packet: the next one must check again.
            end
        } else {
            pts.get(self.next).map_or(SimTime::MAX, |p| p.at)
        };
        Some(PathNow { delay: arrival.since(end), loss })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Stream;

    fn ms(m: u64) -> SimTime {
        SimTime(m * 1_000_000)
    }

    #[test]
    fn parse_accepts_the_documented_format_and_names_bad_lines() {
        let s = Schedule::parse("# t d r l\n0 20 100 0\n15000, 35, 80, 0.01\n").unwrap();
        assert_eq!(s.points.len(), 2);
        assert_eq!(s.points[1].at, ms(15_000));
        assert_eq!(s.points[1].delay, Dur::from_millis(35));
        assert_eq!(s.points[1].rate, Some(Rate(80_000_000)));
        assert_eq!(s.points[1].loss, 0.01);
        let e = |t: &str| Schedule::parse(t).unwrap_err();
        assert!(e("0 20 100 0\n10 20 100 0\n5 20 100 0\n").contains("line 3: times must increase"));
        assert!(e("0 -1 100 0\n").contains("line 1: delay_ms must not be negative"));
        assert!(e("0 0 100 0\n").contains("greater than 0"));
        assert!(e("5 20 100 0\n").contains("first point must be at time 0"));
        assert!(e("0 20 100\n").contains("expected 4 columns"));
        assert!(e("0 20 x 0\n").contains("rate_mbps must be a number"));
        assert!(e("0 20 100 2\n").contains("probability"));
        assert!(e("0 20 - 0\n10 20 5 0\n").contains("either `-`"));
        assert!(e("0 20 0 0\n").contains("last point's rate"));
        assert!(e("# nothing\n").contains("no points"));
        assert!(!Schedule::parse("0 20 - 0\n").unwrap().sets_rate());
    }

    #[test]
    fn rate_integrates_across_steps_and_waits_out_outages() {
        let s = Schedule::parse("0 10 8 0\n10 10 0 0\n20 10 16 0\n").unwrap();
        let mut r = ScheduleRate::new(Arc::new(s));
        // 8 Mbit/s: 1000 B take 1 ms.
        assert_eq!(r.serve(ms(0), 1000), ms(1));
        // Starting at 9 ms: 1 ms at 8 Mbit/s, the outage to 20 ms, then 1000 B at 16 Mbit/s.
        assert_eq!(r.serve(ms(9), 2000), ms(20) + Dur(500_000));
        assert_eq!(r.rate_at(ms(25)), Rate(16_000_000));
        // 10 ms at 8 Mbit/s + 0 + 10 ms at 16 Mbit/s.
        assert_eq!(r.cumulative_bytes(ms(30)), 10_000 + 20_000);
    }

    #[test]
    fn a_delay_drop_keeps_the_wire_in_order() {
        let s = Schedule::parse("0 50 - 0\n100 10 - 0.5\n").unwrap();
        let mut p = PathSchedule::new(Arc::new(s), true);
        // Before the step: 50 ms, next call at the step.
        let a = p.at(ms(98), ms(99), Dur::from_millis(50)).unwrap();
        assert_eq!((a.delay, p.due), (Dur::from_millis(50), ms(100)));
        assert_eq!(p.at(ms(99), ms(99) + Dur(1), a.delay), None);
        // Just after: the last packet left at ≤ 100 ms with 50 ms, so this one waits for it.
        let b = p.at(ms(100), ms(101), a.delay).unwrap();
        assert_eq!(b.loss, Some(0.5));
        assert_eq!(ms(101) + b.delay, ms(150));
        assert_eq!(p.due, ms(101));
        // Once the new path's arrivals pass the old one's last, the plain 10 ms applies.
        let c = p.at(ms(141), ms(142), b.delay).unwrap();
        assert_eq!(c.delay, Dur::from_millis(10));
        assert_eq!(p.due, SimTime::MAX);
        // A direction without the schedule's loss gets none.
        let s = Schedule::parse("0 50 - 0.2\n").unwrap();
        let mut q = PathSchedule::new(Arc::new(s), false);
        assert_eq!(q.at(ms(0), ms(1), Dur(1)).unwrap().loss, None);
    }

    #[test]
    fn leo_generator_steps_at_its_offsets_with_bursts() {
        let cfg = LeoCfg {
            interval: Dur::from_secs(15),
            offset: Dur::from_secs(12),
            delay_min: Dur::from_millis(10),
            delay_max: Dur::from_millis(30),
            rate_min: Rate(50_000_000),
            rate_max: Rate(150_000_000),
            switch_loss: 0.3,
            switch_time: Dur::from_millis(50),
            loss: 0.0,
        };
        let s = cfg.generate(SimRng::new(3, Stream::LinkRate, 0), Dur::from_secs(60));
        let at: Vec<u64> = s.points.iter().map(|p| p.at.0 / 1_000_000).collect();
        assert_eq!(at, [0, 12_000, 12_050, 27_000, 27_050, 42_000, 42_050, 57_000, 57_050]);
        for p in &s.points {
            assert!(p.delay >= cfg.delay_min && p.delay <= cfg.delay_max);
            assert!(p.rate.unwrap() >= cfg.rate_min && p.rate.unwrap() <= cfg.rate_max);
        }
        assert_eq!(s.points[1].loss, 0.3);
        assert_eq!(s.points[2].loss, 0.0);
        assert_eq!(s.points[1].delay, s.points[2].delay);
        // The same seed, the same schedule.
        assert_eq!(s, cfg.generate(SimRng::new(3, Stream::LinkRate, 0), Dur::from_secs(60)));
    }
}
