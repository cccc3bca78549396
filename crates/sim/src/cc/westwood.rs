//! Westwood+ as Linux runs it (`net/ipv4/tcp_westwood.c`; Mascolo et al. 2001, Grieco &
//! Mascolo 2004). The sender estimates the bandwidth it gets from the ACK stream — bytes
//! acknowledged over intervals of one RTT (at least 50 ms), smoothed by two cascaded
//! 7/8 low-pass filters — and after a loss sets the window to what the path carries without a
//! queue, BWE × RTTmin, instead of blindly halving. Growth is Reno's.
//!
//! Linux timing is kept: entering fast recovery halves ssthresh (Reno); when recovery
//! completes, both cwnd and ssthresh become BWE × RTTmin (CA_EVENT_COMPLETE_CWR); on a timeout
//! ssthresh becomes BWE × RTTmin and RTTmin is re-learned from the next sample.
//!
//! Deviation: Linux credits bytes per ACK from the snd_una advance plus one MSS per dupACK
//! (its estimate of SACKed data). Here each ACK credits the bytes it newly acknowledged
//! cumulatively or selectively, which the core knows exactly.

use super::registry::{CcEntry, CcKind, CcTransport, NoParams};
use super::reno::{halve, reno_grow};
use super::{AckSample, CongestionControl, CongestionEvent, CongestionKind, Window};
use crate::units::{Dur, SimTime};
use std::sync::Arc;

pub(super) const ENTRY: CcEntry = CcEntry {
    name: "westwood+",
    doc: "Westwood+ (Linux's westwood module): ssthresh from the bandwidth estimate",
    keys: &[],
    extra: CcKind { transport: CcTransport::Tcp, plus: Some("westwood++") },
    parse: |_, _| Ok(Arc::new(NoParams(|_| Box::new(Westwood::new())))),
};

/// Shortest sampling interval.
const RTT_MIN_INTERVAL: Dur = Dur::from_millis(50);
/// RTT assumed before the first sample (Linux TCP_WESTWOOD_INIT_RTT).
const INIT_RTT: Dur = Dur::from_secs(20);

pub struct Westwood {
    credit: u64,
    /// Bytes acknowledged in the current sampling interval.
    bk: u64,
    /// First filter stage and the estimate, bytes per second.
    bw_ns_est: f64,
    bw_est: f64,
    /// Start of the current sampling interval (None before the first ACK).
    win_start: Option<SimTime>,
    /// Latest RTT sample.
    rtt: Dur,
    rtt_min: Dur,
    reset_rtt_min: bool,
}

impl Default for Westwood {
    fn default() -> Self {
        Self::new()
    }
}

impl Westwood {
    pub fn new() -> Westwood {
        Westwood {
            credit: 0,
            bk: 0,
            bw_ns_est: 0.0,
            bw_est: 0.0,
            win_start: None,
            rtt: INIT_RTT,
            rtt_min: INIT_RTT,
            reset_rtt_min: true,
        }
    }

    /// The bandwidth estimate, bytes per second.
    pub fn bwe(&self) -> f64 {
        self.bw_est
    }

    /// BWE × RTTmin in whole segments, at least 2 (Linux tcp_westwood_bw_rttmin), in bytes.
    fn bw_rttmin(&self, mss: u64) -> u64 {
        let pkts = (self.bw_est * self.rtt_min.secs_f64() / mss as f64) as u64;
        pkts.max(2) * mss
    }

    fn update_window(&mut self, now: SimTime) {
        let start = *self.win_start.get_or_insert(now);
        let delta = now.since(start);
        if delta > self.rtt.max(RTT_MIN_INTERVAL) {
            let sample = self.bk as f64 / delta.secs_f64();
            if self.bw_ns_est == 0.0 && self.bw_est == 0.0 {
                self.bw_ns_est = sample;
                self.bw_est = sample;
            } else {
                self.bw_ns_est = (7.0 * self.bw_ns_est + sample) / 8.0;
                self.bw_est = (7.0 * self.bw_est + self.bw_ns_est) / 8.0;
            }
            self.bk = 0;
            self.win_start = Some(now);
        }
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood+"
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        self.update_window(a.now);
        self.bk += a.acked_bytes;
        if let Some(r) = a.rtt {
            self.rtt = Dur(r.0.max(1));
        }
        if self.reset_rtt_min {
            if a.rtt.is_some() {
                self.rtt_min = self.rtt;
                self.reset_rtt_min = false;
            }
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
        reno_grow(w, &mut self.credit, a);
    }

    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent) {
        self.credit = 0;
        match e.kind {
            CongestionKind::Rto => {
                w.ssthresh = self.bw_rttmin(w.mss);
                self.reset_rtt_min = true;
            }
            CongestionKind::FastRetransmit | CongestionKind::Ecn => w.ssthresh = halve(w),
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: SimTime) {
        let target = self.bw_rttmin(w.mss);
        w.cwnd = target;
        w.ssthresh = target;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(ms: u64, bytes: u64, rtt_ms: u64) -> AckSample {
        let rtt = Some(Dur::from_millis(rtt_ms));
        AckSample {
            srtt: None,
            min_rtt: None,
            ..AckSample::test(SimTime(ms * 1_000_000), bytes, rtt)
        }
    }

    #[test]
    fn estimates_the_ack_rate_and_sets_the_window_to_bwe_times_rttmin() {
        let mut ww = Westwood::new();
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 50 * MSS, mss: MSS };
        // 1 MB/s: 1000 B every ms for 5 s, RTT 100 ms (queue) with a 40 ms minimum.
        for ms in 0..5000 {
            let rtt = if ms == 10 { 40 } else { 100 };
            ww.on_ack(&mut w, &ack(ms, MSS, rtt));
        }
        assert!((ww.bwe() / 1e6 - 1.0).abs() < 0.02, "bwe {}", ww.bwe());
        w.cwnd = 100 * MSS;
        ww.on_congestion_event(
            &mut w,
            &CongestionEvent {
                now: SimTime(0),
                kind: CongestionKind::FastRetransmit,
                flight_size: 0,
                in_flight: 0,
            },
        );
        assert_eq!(w.ssthresh, 50 * MSS); // Reno's half while recovering
        ww.on_recovery_exit(&mut w, SimTime(0));
        // 1 MB/s × 40 ms = 40 segments.
        assert!((39 * MSS..=40 * MSS).contains(&w.cwnd), "{w:?}");
        assert_eq!(w.ssthresh, w.cwnd);
    }
}
