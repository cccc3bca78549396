//! LEDBAT, Low Extra Delay Background Transport (RFC 6817): a scavenger controller that keeps
//! the queueing delay it adds at a TARGET. The sender keeps a base-delay history (the minima
//! of the last BASE_HISTORY = 10 one-minute intervals; their minimum is the base delay) and a
//! current-delay filter (the minimum of the last CURRENT_FILTER = 4 samples). Per ACK (the RFC's sender pseudo-code):
//! queuing_delay = current − base, off_target = (TARGET − queuing_delay) / TARGET and
//! cwnd += GAIN · off_target · bytes_acked · MSS / cwnd — at most one MSS per RTT up, and down
//! as fast as one MSS per RTT per TARGET of excess delay — capped at FlightSize +
//! ALLOWED_INCREASE·MSS and floored at MIN_CWND = 2 MSS. A loss halves cwnd, at most once per
//! RTT (the core's recovery gives the once-per-window rule). Defaults: TARGET 100 ms (the
//! RFC's upper bound), GAIN 1 (its upper bound).
//!
//! Simplified / decided here:
//! - Delay samples are one-way delays from the TCP timestamps (RFC 6817 §2 asks for one-way
//!   measurement; over TCP the timestamp option carries it, as the RFC's §3.4.1 allows for
//!   other framings): the ACK's TSval minus its echo of the data's TSval ([`AckSample::owd`]).
//!   The simulation has one clock, so there is no offset to cancel; a delayed ACK adds its
//!   hold time to a sample, which the current-delay filter's minimum removes. A congested
//!   reverse path therefore does not count against LEDBAT. Without timestamps
//!   (`timestamps = false`) the samples are round-trip times, whose base is the minimum RTT:
//!   then a queue on the reverse path does count.
//! - No slow start (RFC 6817's algorithm has none); the first window is the
//!   core's initial window, then growth is LEDBAT's from the first ACK.
//! - The base history rolls over every 60 s of simulated time since the first sample (the RFC
//!   rounds to wall-clock minutes).
//!
//! The filters are shared with LEDBAT++ (`ledbat_pp`).

use super::{
    read_f64, AckSample, BuildCtx, CcBuild, CcEntry, CcKind, CcTransport, CongestionControl,
    CongestionEvent, Window,
};
use crate::params::{err, Res, Table};
use crate::units::{Dur, SimTime};
use std::sync::Arc;

pub(super) const ENTRY: CcEntry = CcEntry {
    name: "ledbat",
    doc: "LEDBAT (RFC 6817): scavenger that holds its queueing delay at a target (100 ms)",
    keys: &["target", "gain"],
    extra: CcKind { transport: CcTransport::Tcp, plus: None },
    parse: |t, _| Ok(Arc::new(LedbatParams::read(t, LEDBAT_TARGET)?)),
};

/// RFC 6817: TARGET MUST be 100 ms or less; 100 ms is the default here.
const LEDBAT_TARGET: Dur = Dur::from_millis(100);
/// Minutes of base-delay history (RFC 6817's BASE_HISTORY: 10).
pub(super) const BASE_HISTORY: usize = 10;
/// Samples in the current-delay filter (RFC 6817's CURRENT_FILTER).
pub(super) const CURRENT_FILTER: usize = 4;
/// One base-history bucket.
const BASE_BUCKET: Dur = Dur::from_secs(60);
/// Window floor in MSS (RFC 6817's MIN_CWND: 2).
pub(super) const MIN_CWND: u64 = 2;
/// cwnd may exceed FlightSize by this many MSS (RFC 6817's ALLOWED_INCREASE).
pub(super) const ALLOWED_INCREASE: u64 = 1;

/// `target` and `gain` of LEDBAT (and LEDBAT++, whose gain is computed when unset).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LedbatParams {
    pub target: Dur,
    /// None: LEDBAT++'s dynamic gain (LEDBAT's default is 1).
    pub gain: Option<f64>,
}

impl LedbatParams {
    /// Reads `target` (> 0, ≤ 10 s) and `gain` (in (0, 1]: RFC 6817 says GAIN MUST NOT
    /// exceed 1, so that LEDBAT ramps up no faster than Reno).
    pub(super) fn read(t: &mut Table, default_target: Dur) -> Res<LedbatParams> {
        let target = match t.opt_duration("target")? {
            None => default_target,
            Some(d) if d.0 == 0 => {
                return err(&t.key_path("target"), "must be greater than 0 (got \"0s\")");
            }
            Some(d) if d > Dur::from_secs(10) => {
                return err(
                    &t.key_path("target"),
                    format!("must be at most 10s (got {:.3}s)", d.secs_f64()),
                );
            }
            Some(d) => d,
        };
        let gain = read_f64(t, "gain", 0.0, true, 1.0, false)?;
        Ok(LedbatParams { target, gain })
    }
}

impl CcBuild for LedbatParams {
    fn build(&self, ctx: BuildCtx) -> Box<dyn CongestionControl> {
        Box::new(Ledbat::new(*self, ctx.mss))
    }
}

/// RFC 6817's two delay filters over RTT samples.
#[derive(Debug, Clone)]
pub(super) struct DelayFilters {
    /// Minima of the last BASE_HISTORY buckets, oldest first; `base_len` are in use.
    base: [Dur; BASE_HISTORY],
    base_len: usize,
    bucket_start: SimTime,
    /// The last CURRENT_FILTER samples (a ring); `cur_len` are in use.
    current: [Dur; CURRENT_FILTER],
    cur_len: usize,
    cur_next: usize,
}

impl DelayFilters {
    pub(super) fn new() -> DelayFilters {
        DelayFilters {
            base: [Dur::MAX; BASE_HISTORY],
            base_len: 0,
            bucket_start: SimTime::ZERO,
            current: [Dur::ZERO; CURRENT_FILTER],
            cur_len: 0,
            cur_next: 0,
        }
    }

    /// RFC 6817's update_base_delay and update_current_delay.
    pub(super) fn add(&mut self, now: SimTime, d: Dur) {
        if self.base_len == 0 {
            self.base[0] = d;
            self.base_len = 1;
            self.bucket_start = now;
        } else if now.since(self.bucket_start) >= BASE_BUCKET {
            // A new minute: a new bucket, the oldest dropped when the history is full.
            if self.base_len == BASE_HISTORY {
                self.base.copy_within(1.., 0);
            } else {
                self.base_len += 1;
            }
            self.base[self.base_len - 1] = d;
            self.bucket_start = now;
        } else {
            let last = &mut self.base[self.base_len - 1];
            *last = (*last).min(d);
        }
        self.current[self.cur_next] = d;
        self.cur_next = (self.cur_next + 1) % CURRENT_FILTER;
        self.cur_len = (self.cur_len + 1).min(CURRENT_FILTER);
    }

    /// The base delay: the minimum of the history (None before any sample).
    pub(super) fn base(&self) -> Option<Dur> {
        self.base[..self.base_len].iter().copied().min()
    }

    /// The current delay: the minimum of the last samples.
    pub(super) fn current(&self) -> Option<Dur> {
        self.current[..self.cur_len].iter().copied().min()
    }

    /// current − base.
    pub(super) fn queuing_delay(&self) -> Option<Dur> {
        Some(self.current()?.saturating_sub(self.base()?))
    }
}

pub struct Ledbat {
    target: Dur,
    gain: f64,
    mss: u64,
    f: DelayFilters,
    /// cwnd with its fraction (bytes); re-read from the window when the core changed it.
    cwnd: f64,
    written: u64,
    /// The connection's ACKs carry timestamps: delays are one-way (see the notes above).
    one_way: bool,
}

impl Ledbat {
    pub fn new(p: LedbatParams, mss: u64) -> Ledbat {
        Ledbat {
            target: p.target,
            gain: p.gain.unwrap_or(1.0),
            mss: mss.max(1),
            f: DelayFilters::new(),
            cwnd: 0.0,
            written: 0,
            one_way: false,
        }
    }

    /// The queueing delay LEDBAT currently sees (tests, diagnostics).
    pub fn queuing_delay(&self) -> Option<Dur> {
        self.f.queuing_delay()
    }
}

impl CongestionControl for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        // One-way samples once the connection has timestamps, round trips otherwise (never
        // mixed in one base history).
        self.one_way |= a.owd.is_some();
        if let Some(d) = if self.one_way { a.owd } else { a.rtt } {
            self.f.add(a.now, d);
        }
        if w.cwnd != self.written {
            self.cwnd = w.cwnd as f64; // the core reduced it (loss recovery, idle restart)
        }
        if a.ca_state.reducing() || a.acked_bytes == 0 {
            return;
        }
        let Some(q) = self.f.queuing_delay() else { return };
        let mss = self.mss as f64;
        let off_target = (self.target.secs_f64() - q.secs_f64()) / self.target.secs_f64();
        self.cwnd += self.gain * off_target * a.acked_bytes as f64 * mss / self.cwnd.max(mss);
        let max_allowed = (a.prior_in_flight + ALLOWED_INCREASE * self.mss) as f64;
        self.cwnd = self.cwnd.min(max_allowed).max((MIN_CWND * self.mss) as f64);
        w.cwnd = self.cwnd as u64;
        // No slow start: ssthresh follows cwnd so the core's state reads congestion avoidance.
        w.ssthresh = w.ssthresh.min(w.cwnd);
        self.written = w.cwnd;
    }

    fn on_congestion_event(&mut self, w: &mut Window, _e: &CongestionEvent) {
        // RFC 6817: cwnd = max(cwnd / 2, MIN_CWND·MSS) on loss (and on an ECN echo, as TCP).
        w.ssthresh = (w.cwnd / 2).max(MIN_CWND * self.mss);
    }

    fn state_label(&self, _w: &Window) -> &'static str {
        "cong_avoid"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MSS: u64 = 1000;

    #[test]
    fn filters_keep_minute_minima_and_the_last_four_samples() {
        let mut f = DelayFilters::new();
        f.add(SimTime::ZERO, Dur::from_millis(50));
        f.add(SimTime(Dur::from_secs(1).0), Dur::from_millis(40));
        for i in 0..4 {
            f.add(SimTime(Dur::from_secs(2 + i).0), Dur::from_millis(90 + i));
        }
        assert_eq!(f.base(), Some(Dur::from_millis(40)));
        assert_eq!(f.current(), Some(Dur::from_millis(90)));
        assert_eq!(f.queuing_delay(), Some(Dur::from_millis(50)));
        // Eleven more minutes of 60 ms samples push the 40 ms minute out of the history.
        for m in 1..=11 {
            f.add(SimTime(Dur::from_secs(60 * m + 1).0), Dur::from_millis(60));
        }
        assert_eq!(f.base(), Some(Dur::from_millis(60)));
    }

    fn ack(ms: u64, rtt_ms: u64, acked: u64, prior_in_flight: u64) -> AckSample {
        let mut a =
            AckSample::test(SimTime(Dur::from_millis(ms).0), acked, Some(Dur::from_millis(rtt_ms)));
        a.prior_in_flight = prior_in_flight;
        a
    }

    #[test]
    fn grows_below_target_and_shrinks_above_it() {
        let p = LedbatParams { target: Dur::from_millis(100), gain: Some(1.0) };
        let mut c = Ledbat::new(p, MSS);
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        // Base 40 ms, no queue: one cwnd of ACKs adds one MSS (off_target = 1), a little less
        // as cwnd grows under the per-ACK MSS²/cwnd steps (20977 bytes of the 21000).
        for i in 0..20 {
            c.on_ack(&mut w, &ack(i, 40, MSS, 20 * MSS));
        }
        assert!((w.cwnd as i64 - 21 * MSS as i64).abs() <= 50, "{}", w.cwnd);
        // 240 ms samples: 200 ms of queue, twice the target: one MSS off per cwnd of ACKs.
        let before = w.cwnd;
        for i in 0..25 {
            c.on_ack(&mut w, &ack(100 + i, 240, MSS, 30 * MSS));
        }
        assert!(w.cwnd < before && w.cwnd + 2 * MSS >= before, "{before} -> {}", w.cwnd);
        // Never below two segments.
        for i in 0..10_000 {
            c.on_ack(&mut w, &ack(200 + i, 2000, MSS, 30 * MSS));
        }
        assert_eq!(w.cwnd, 2 * MSS);
    }

    #[test]
    fn growth_is_capped_at_flight_size_plus_one_segment() {
        let p = LedbatParams { target: Dur::from_millis(100), gain: Some(1.0) };
        let mut c = Ledbat::new(p, MSS);
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_ack(&mut w, &ack(0, 40, MSS, 5 * MSS));
        assert_eq!(w.cwnd, 6 * MSS);
    }

    #[test]
    fn params_are_checked() {
        let p = |v: serde_json::Value| {
            let mut t = Table::new("flows[0].cc_params", &v).unwrap();
            LedbatParams::read(&mut t, LEDBAT_TARGET)
        };
        assert_eq!(
            p(json!({"target": "25ms", "gain": 0.5})).unwrap(),
            LedbatParams { target: Dur::from_millis(25), gain: Some(0.5) }
        );
        let e = p(json!({"target": "0ms"})).unwrap_err();
        assert_eq!(e.to_string(), "flows[0].cc_params.target: must be greater than 0 (got \"0s\")");
        let e = p(json!({"target": "-5ms"})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.target");
        let e = p(json!({"target": "11s"})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.target");
        let e = p(json!({"gain": 1.5})).unwrap_err();
        assert_eq!(e.to_string(), "flows[0].cc_params.gain: must be in (0, 1] (got 1.5)");
        let e = p(json!({"gain": 0})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.gain");
    }
}
