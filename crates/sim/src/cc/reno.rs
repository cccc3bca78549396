//! Reno/NewReno window growth (RFC 5681, counted like Linux: slow start adds the bytes
//! acknowledged; congestion avoidance adds one MSS per cwnd of acknowledged bytes). The two
//! names differ only in the loss recovery the scenario pairs them with by default.

use super::registry::{CcEntry, CcKind, CcTransport, NoParams};
use super::{AckSample, CongestionControl, CongestionEvent, Window};
use std::sync::Arc;

pub(super) const RENO: CcEntry = CcEntry {
    name: "reno",
    doc: "Reno window growth (RFC 5681), halving on loss",
    keys: &[],
    extra: CcKind { transport: CcTransport::Tcp, plus: Some("reno+") },
    parse: |_, _| Ok(Arc::new(NoParams(|_| Box::new(Reno::new("reno"))))),
};

pub(super) const NEWRENO: CcEntry = CcEntry {
    name: "newreno",
    doc: "the same window rules as reno, named for NewReno recovery (RFC 6582)",
    keys: &[],
    extra: CcKind { transport: CcTransport::Tcp, plus: Some("newreno+") },
    parse: |_, _| Ok(Arc::new(NoParams(|_| Box::new(Reno::new("newreno"))))),
};

pub struct Reno {
    name: &'static str,
    /// Bytes acknowledged toward the next one-MSS increase in congestion avoidance.
    credit: u64,
}

impl Reno {
    pub fn new(name: &'static str) -> Reno {
        Reno { name, credit: 0 }
    }
}

/// Slow start: grow by the bytes acked, up to ssthresh; returns the bytes not consumed.
pub fn slow_start(w: &mut Window, acked: u64) -> u64 {
    let room = w.ssthresh.saturating_sub(w.cwnd);
    let used = acked.min(room);
    w.cwnd += used;
    acked - used
}

/// Additive increase: one MSS per `per` bytes acknowledged (Linux tcp_cong_avoid_ai).
pub fn additive_increase(w: &mut Window, credit: &mut u64, per: u64, acked: u64) {
    *credit += acked;
    if *credit >= per {
        let inc = *credit / per;
        *credit -= inc * per;
        w.cwnd += inc * w.mss;
    }
}

/// Reno's growth for one ACK: none during fast recovery or when the sender was not limited
/// by cwnd; slow start, then one MSS per cwnd of acknowledged bytes.
pub fn reno_grow(w: &mut Window, credit: &mut u64, a: &AckSample) {
    if a.ca_state.reducing() || !a.cwnd_limited {
        return;
    }
    let mut acked = a.acked_bytes;
    if w.in_slow_start() {
        acked = slow_start(w, acked);
    }
    if acked > 0 {
        let per = w.cwnd;
        additive_increase(w, credit, per, acked);
    }
}

/// Multiplicative decrease: ssthresh = max(cwnd / 2, 2·SMSS). Linux (tcp_reno_ssthresh)
/// halves cwnd; RFC 5681 eq. 4 halves FlightSize, which after a timeout still counts the
/// presumed-lost data and would set ssthresh far above what the path carried.
pub fn halve(w: &Window) -> u64 {
    (w.cwnd / 2).max(2 * w.mss)
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        reno_grow(w, &mut self.credit, a);
    }

    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent) {
        let _ = e;
        w.ssthresh = halve(w);
        self.credit = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CongestionKind;
    use crate::units::SimTime;

    fn ack(bytes: u64) -> AckSample {
        AckSample::test(SimTime(0), bytes, None)
    }

    #[test]
    fn slow_start_doubles_per_window_then_ca_adds_one_mss_per_window() {
        let mss = 1000;
        let mut w = Window { cwnd: 10 * mss, ssthresh: 20 * mss, mss };
        let mut r = Reno::new("reno");
        for _ in 0..10 {
            r.on_ack(&mut w, &ack(mss));
        }
        assert_eq!(w.cwnd, 20 * mss);
        // One full window of ACKs in CA adds exactly one MSS.
        for _ in 0..20 {
            r.on_ack(&mut w, &ack(mss));
        }
        assert_eq!(w.cwnd, 21 * mss);
    }

    #[test]
    fn leftover_of_slow_start_continues_in_ca_and_app_limited_does_not_grow() {
        let mss = 1000;
        let mut w = Window { cwnd: 9 * mss, ssthresh: 10 * mss, mss };
        let mut r = Reno::new("reno");
        r.on_ack(&mut w, &ack(2 * mss));
        assert_eq!(w.cwnd, 10 * mss);
        let mut a = ack(100 * mss);
        a.cwnd_limited = false;
        r.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 10 * mss);
    }

    #[test]
    fn loss_halves_flight_with_two_mss_floor() {
        let mss = 1000;
        let mut w = Window { cwnd: 10 * mss, ssthresh: u64::MAX, mss };
        let mut r = Reno::new("reno");
        let ev = CongestionEvent {
            now: SimTime(0),
            kind: CongestionKind::FastRetransmit,
            flight_size: 0,
            in_flight: 0,
        };
        r.on_congestion_event(&mut w, &ev);
        assert_eq!(w.ssthresh, 5 * mss);
        w.cwnd = mss;
        r.on_congestion_event(&mut w, &ev);
        assert_eq!(w.ssthresh, 2 * mss);
    }
}
