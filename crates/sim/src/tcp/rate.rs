//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation, as in Linux
//! tcp_rate.c): each transmitted segment remembers the connection's delivery state; when it is
//! (S)ACKed, the most recently sent of the newly delivered segments gives the sample
//! rate = delivered bytes / max(send interval, ack interval).

use crate::cc::RateSample;
use crate::units::{Dur, Rate, SimTime};

/// Delivery state stamped on a segment when it is (re)transmitted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxStamp {
    pub delivered: u64,
    pub delivered_at: SimTime,
    pub first_tx_at: SimTime,
    pub app_limited: bool,
}

/// Laid out in declaration order (`repr(C)`): what marking the sender app-limited reads and
/// writes first (every segment a receiver gets does, see `TcpSocket::try_send`).
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub struct RateSampler {
    /// Total bytes delivered (cumulatively or selectively acknowledged) so far.
    pub delivered: u64,
    /// Non-zero while app-limited: the `delivered` count that ends the app-limited phase.
    app_limited_until: u64,
    delivered_at: SimTime,
    first_tx_at: SimTime,
    // The sample being built from one ACK.
    building: bool,
    prior_delivered: u64,
    prior_at: SimTime,
    send_elapsed: Dur,
    sample_app_limited: bool,
    /// The rate of the latest sample (TCP_INFO's delivery_rate).
    pub last_rate: Option<Rate>,
}

impl RateSampler {
    /// Stamp for a segment sent now; `nothing_outstanding` restarts the send-interval clock.
    pub fn on_send(&mut self, now: SimTime, nothing_outstanding: bool) -> TxStamp {
        if nothing_outstanding {
            self.first_tx_at = now;
            self.delivered_at = now;
        }
        TxStamp {
            delivered: self.delivered,
            delivered_at: self.delivered_at,
            first_tx_at: self.first_tx_at,
            app_limited: self.app_limited_until != 0,
        }
    }

    /// A segment of `bytes` sent at `sent_at` with `stamp` was delivered by the current ACK.
    pub fn on_delivered(&mut self, bytes: u64, sent_at: SimTime, stamp: &TxStamp) {
        self.delivered += bytes;
        if !self.building || stamp.delivered >= self.prior_delivered {
            self.building = true;
            self.prior_delivered = stamp.delivered;
            self.prior_at = stamp.delivered_at;
            self.sample_app_limited = stamp.app_limited;
            self.send_elapsed = sent_at.since(stamp.first_tx_at);
            // The next send interval starts at this (most recently sent) segment.
            self.first_tx_at = sent_at;
        }
    }

    /// Closes the sample for this ACK. Samples shorter than `min_rtt` are discarded (they
    /// reflect ACK compression, not the path).
    pub fn finish(&mut self, now: SimTime, min_rtt: Option<Dur>) -> Option<RateSample> {
        if !self.building {
            return None;
        }
        self.building = false;
        self.delivered_at = now;
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let delivered = self.delivered - self.prior_delivered;
        let ack_elapsed = now.since(self.prior_at);
        let interval = self.send_elapsed.max(ack_elapsed);
        if interval.0 == 0 || min_rtt.is_some_and(|m| interval < m) {
            return None;
        }
        let bps = delivered as u128 * 8 * 1_000_000_000 / interval.0 as u128;
        self.last_rate = Some(Rate(bps as u64));
        Some(RateSample {
            delivered,
            interval,
            rate: Rate(bps as u64),
            prior_delivered: self.prior_delivered,
            app_limited: self.sample_app_limited,
        })
    }

    /// The application has nothing to send and the window is not full: samples taken until
    /// what is now in flight is delivered are app-limited.
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited_until = (self.delivered + in_flight).max(1);
    }

    pub fn is_app_limited(&self) -> bool {
        self.app_limited_until != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_stream_measures_its_rate() {
        // One 1000 B segment sent every 1 ms, each acked 50 ms later: 8 Mbit/s once the
        // first round trip has passed.
        let mut r = RateSampler::default();
        let mut inflight = std::collections::VecDeque::new();
        let mut last = None;
        for ms in 0..300u64 {
            let now = SimTime(ms * 1_000_000);
            // ACKs due now are processed before the send at the same instant.
            while inflight
                .front()
                .is_some_and(|(t, _): &(SimTime, TxStamp)| t.0 + 50_000_000 <= now.0)
            {
                let (sent, st) = inflight.pop_front().unwrap();
                r.on_delivered(1000, sent, &st);
                last = r.finish(now, Some(Dur::from_millis(50)));
            }
            let st = r.on_send(now, inflight.is_empty());
            inflight.push_back((now, st));
        }
        let s = last.expect("samples after the first round trip");
        assert_eq!(s.rate, Rate(8_000_000));
        assert!(!s.app_limited);
    }

    #[test]
    fn app_limited_marking_clears_after_the_marked_data() {
        let mut r = RateSampler::default();
        r.mark_app_limited(3000);
        let st = r.on_send(SimTime(0), true);
        assert!(st.app_limited);
        r.on_delivered(3000, SimTime(0), &st);
        r.finish(SimTime(10), None);
        assert!(r.is_app_limited());
        r.on_delivered(1, SimTime(0), &st);
        r.finish(SimTime(20), None);
        assert!(!r.is_app_limited());
    }
}
