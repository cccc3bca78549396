//! RACK-TLP (RFC 8985): time-based loss detection and the tail loss probe.
//!
//! RACK remembers the most recently sent segment known delivered; an outstanding segment sent
//! a reordering window before it is lost once it has also been out for an RTT plus that
//! window (the walk over the scoreboard is [`crate::tcp::Scoreboard::rack_mark_lost`]). TLP
//! sends one probe two smoothed RTTs after the last transmission when the ACK clock may have
//! stopped, so a tail loss is repaired by fast recovery instead of a timeout.

use crate::units::{Dur, SimTime};

/// The delayed-ACK allowance added to the probe timeout when one segment is in flight
/// (RFC 8985 WCDelAckT).
const WC_DELACK: Dur = Dur(200_000_000);

/// The floor Linux adds to the reordering and probe timeouts before rounding them to ticks
/// (TCP_TIMEOUT_MIN_US, since Linux 6.6 and the stable kernels of late 2023).
pub const TIMEOUT_MIN: Dur = Dur(2_000_000);

/// When a Linux TCP timer armed at `now` for `timeout` fires: the timeout is rounded up to
/// whole ticks (`usecs_to_jiffies`) and counted from the current tick, so the timer runs on
/// a tick boundary — up to one tick before the exact timeout, never after it rounds up.
/// At HZ = 250 a 2.1 ms reordering timer fires 0–4 ms later, a few ACKs after the exact one.
pub fn tick_expiry(now: SimTime, timeout: Dur, hz: u32) -> SimTime {
    let tick = 1_000_000_000 / u64::from(hz);
    let ticks = timeout.0.div_ceil(tick).max(1);
    SimTime((now.0 / tick + ticks) * tick)
}

/// Laid out in declaration order (`repr(C)`): the probe's state first, which every ACK reads.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct Rack {
    /// snd.nxt when the outstanding probe was sent (None: no probe out).
    pub tlp_high_seq: Option<u64>,
    /// Send time and end of the most recently sent segment known delivered.
    pub xmit_ts: SimTime,
    pub end_seq: u64,
    /// RTT of the most recently delivered segment.
    pub rtt: Dur,
    /// Some segment was delivered out of sequence without a retransmission.
    pub reord_seen: bool,
    /// The probe was a retransmission (a new-data probe tells nothing about loss).
    pub tlp_retrans: bool,
}

impl Rack {
    /// A segment [.., end) sent at `sent_at` was delivered by this ACK (RFC 8985 step 2).
    #[inline]
    pub fn on_delivered(
        &mut self,
        sent_at: SimTime,
        end: u64,
        retransmitted: bool,
        now: SimTime,
        min_rtt: Option<Dur>,
    ) {
        let rtt = now.since(sent_at);
        // An ACK faster than the path can be for the original transmission, not this one.
        if retransmitted && min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.rtt = rtt;
        if sent_at > self.xmit_ts || (sent_at == self.xmit_ts && end > self.end_seq) {
            self.xmit_ts = sent_at;
            self.end_seq = end;
        }
    }

    /// The reordering window: none while no reordering was seen and recovery is under way
    /// (or dupthresh segments are already SACKed), else a quarter of the minimum RTT, at most
    /// the smoothed RTT (Linux tcp_rack_reo_wnd).
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_dupthresh: bool,
        min_rtt: Option<Dur>,
        srtt: Option<Dur>,
    ) -> Dur {
        if !self.reord_seen && (in_recovery || sacked_dupthresh) {
            return Dur::ZERO;
        }
        let q = min_rtt.map_or(0, |m| m.0 / 4);
        Dur(srtt.map_or(q, |s| q.min(s.0)))
    }

    /// The probe timeout (RFC 8985 §7.2): two smoothed RTTs, plus the delayed-ACK allowance
    /// with a single segment out or Linux's 2 ms floor with more, never later than the RTO.
    pub fn pto(srtt: Option<Dur>, one_segment: bool, rto: Dur) -> Dur {
        let base = match srtt {
            Some(s) => Dur(2 * s.0 + if one_segment { WC_DELACK.0 } else { TIMEOUT_MIN.0 }),
            None => Dur::from_secs(1),
        };
        base.min(rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_delivered_segment_wins_and_fast_retransmit_acks_are_ignored() {
        let mut r = Rack::default();
        r.on_delivered(SimTime(100), 2000, false, SimTime(300), Some(Dur(150)));
        r.on_delivered(SimTime(50), 1000, false, SimTime(300), Some(Dur(150)));
        assert_eq!((r.xmit_ts, r.rtt), (SimTime(100), Dur(250)));
        // Retransmitted at 280, "acked" at 300: faster than min_rtt, the original's ACK.
        r.on_delivered(SimTime(280), 500, true, SimTime(300), Some(Dur(150)));
        assert_eq!(r.xmit_ts, SimTime(100));
    }

    #[test]
    fn reordering_window_and_probe_timeout() {
        let mut r = Rack::default();
        let (m, s) = (Some(Dur(40)), Some(Dur(100)));
        assert_eq!(r.reo_wnd(true, false, m, s), Dur::ZERO);
        assert_eq!(r.reo_wnd(false, false, m, s), Dur(10));
        r.reord_seen = true;
        assert_eq!(r.reo_wnd(true, true, m, s), Dur(10));
        assert_eq!(Rack::pto(s, false, Dur(1_000_000_000)), Dur(2_000_200));
        assert_eq!(Rack::pto(s, true, Dur(1_000_000_000)), Dur(200_000_200));
        assert_eq!(Rack::pto(s, true, Dur(300)), Dur(300));
    }

    #[test]
    fn timers_fire_on_ticks() {
        let ms = |x: u64| Dur::from_millis(x);
        // HZ = 250: 4 ms ticks. 2.1 ms from t = 1 ms rounds up to one tick: the next, at 4 ms.
        assert_eq!(tick_expiry(SimTime(1_000_000), Dur(2_100_000), 250), SimTime(4_000_000));
        // 4.1 ms is two ticks from the current one (0): 8 ms.
        assert_eq!(tick_expiry(SimTime(3_900_000), Dur(4_100_000), 250), SimTime(8_000_000));
        // Nothing fires before the next tick, however short the timeout.
        assert_eq!(tick_expiry(SimTime(4_000_000), Dur::ZERO, 250), SimTime(8_000_000));
        // HZ = 1000: within a millisecond of the exact time.
        let at = tick_expiry(SimTime(10_300_000), ms(5), 1000);
        assert!(at >= SimTime(14_300_000) && at <= SimTime(15_300_000), "{at:?}");
    }
}
