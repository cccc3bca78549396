//! Bandwidth probing for the GCC-like controller: a probe controller that asks the sender for
//! clusters of packets paced at a multiple of the estimate, and a probe-bitrate estimator that
//! turns the receiver's arrival times of a cluster into the rate the path delivered.
//!
//! Sources (read for facts; the code is our own): WebRTC's
//! modules/congestion_controller/goog_cc/`probe_controller.cc` (`ProbeControllerConfig`:
//! p1 = 3, p2 = 6, step_size = 2, further_probe_threshold = 0.7, min_probe_packets_sent = 5,
//! min_probe_duration = 15 ms; kMaxWaitingTimeForProbingResult = 1 s) and
//! `probe_bitrate_estimator.cc` (its constants below), as vendored in the DrKLO/Telegram
//! repository (TMessagesProj/jni/voip/webrtc/):
//! - start: two clusters at 3× and 6× the start rate; a cluster is at least 5 packets and
//!   15 ms worth of bytes at its rate, paced at that rate;
//! - further probing: while an estimate exceeds 70 % of the last probe's rate (the path
//!   delivered most of it), probe again at 2× the estimate; give up waiting after 1 s;
//!   never probe above the controller's maximum rate;
//! - estimator: a cluster counts once 80 % of its packets and bytes are reported; its send
//!   interval (first to last send) and receive interval (first to last arrival) must both be
//!   in (0, 1 s]; the send rate leaves out the last sent packet's bytes and the receive rate
//!   the first received one's (an interval of n packets spans n − 1 gaps); a receive rate
//!   above 2× the send rate is invalid; the estimate is min(send, receive) rate, or 95 % of
//!   the receive rate when that is under 90 % of the send rate (the link is saturated:
//!   its capacity was found); clusters older than 1 s are forgotten.
//!
//! Simplified: no probing in application-limited periods (ALR) nor after a large drop of the
//! estimate, and no periodic re-probing (our encoder always fills its target, so the sender
//! is never application-limited); a cluster's packets are media when media is queued and
//! padding (MTU-sized, no payload) otherwise, where WebRTC pads with RTX copies.

use std::collections::VecDeque;

/// WebRTC's first two probes: these multiples of the start rate.
const FIRST_SCALES: [f64; 2] = [3.0, 6.0];
/// Further probes: this multiple of the estimate.
const FURTHER_SCALE: f64 = 2.0;
/// Probe further while the estimate exceeds this share of the last probe's rate.
const FURTHER_FRACTION: f64 = 0.7;
/// How long a probe's result is waited for before probing stops.
const WAIT_NS: u64 = 1_000_000_000;
const MIN_PACKETS: u32 = 5;
const MIN_DURATION_NS: u64 = 15_000_000;
const MIN_RECEIVED_FRACTION: f64 = 0.8;
const MAX_INTERVAL_NS: u64 = 1_000_000_000;
const MAX_RATIO: f64 = 2.0;
const SATURATED_RATIO: f64 = 0.9;
const TARGET_FRACTION: f64 = 0.95;
const HISTORY_NS: u64 = 1_000_000_000;

/// A cluster the sender is asked to send: at least `min_packets` packets and `min_bytes`
/// (on the wire), paced at `rate_bps`, each packet marked with `id`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeCluster {
    pub id: u32,
    pub rate_bps: f64,
    pub min_packets: u32,
    pub min_bytes: u32,
}

/// When to probe and at what rate.
pub struct ProbeController {
    next_id: u32,
    max_bps: f64,
    queue: VecDeque<ProbeCluster>,
    started: bool,
    /// Probe again when the estimate exceeds this (None: not waiting for a result).
    further_above: Option<f64>,
    waiting_since: u64,
}

impl ProbeController {
    pub fn new(max_bps: f64) -> ProbeController {
        ProbeController {
            next_id: 0,
            max_bps,
            queue: VecDeque::new(),
            started: false,
            further_above: None,
            waiting_since: 0,
        }
    }

    fn push(&mut self, rate: f64, now: u64) {
        let rate = rate.min(self.max_bps);
        let bytes = (rate * MIN_DURATION_NS as f64 / 8e9).ceil() as u32;
        self.queue.push_back(ProbeCluster {
            id: self.next_id,
            rate_bps: rate,
            min_packets: MIN_PACKETS,
            min_bytes: bytes,
        });
        self.next_id += 1;
        // At the maximum there is nothing further to find.
        self.further_above = (rate < self.max_bps).then_some(FURTHER_FRACTION * rate);
        self.waiting_since = now;
    }

    /// The next cluster to send, if any (the first call starts the initial probes).
    pub fn take(&mut self, now: u64, start_bps: f64) -> Option<ProbeCluster> {
        if !self.started {
            self.started = true;
            for s in FIRST_SCALES {
                self.push(s * start_bps, now);
            }
        }
        self.queue.pop_front()
    }

    /// The controller's estimate changed: probe further if the last probe found room.
    pub fn on_estimate(&mut self, now: u64, estimate_bps: f64) {
        let Some(above) = self.further_above else { return };
        if !self.queue.is_empty() {
            return;
        }
        if now.saturating_sub(self.waiting_since) > WAIT_NS {
            self.further_above = None;
        } else if estimate_bps > above {
            self.push(FURTHER_SCALE * estimate_bps, now);
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Agg {
    cluster: ProbeCluster,
    first_send: u64,
    last_send: u64,
    size_last_send: u32,
    first_recv: u64,
    last_recv: u64,
    size_first_recv: u32,
    bytes: u64,
    packets: u32,
}

/// The probe-bitrate estimator: a cluster's delivered rate from its packets' feedback.
#[derive(Default)]
pub struct ProbeEstimator {
    clusters: Vec<Agg>,
}

impl ProbeEstimator {
    /// One received packet of `cluster` (sent, arrived, wire bytes): the cluster's rate
    /// estimate once it is valid, bit/s.
    pub fn on_packet(
        &mut self,
        cluster: &ProbeCluster,
        sent: u64,
        arrival: u64,
        bytes: u32,
    ) -> Option<f64> {
        self.clusters.retain(|a| a.last_recv + HISTORY_NS >= arrival);
        let i = match self.clusters.iter().position(|a| a.cluster.id == cluster.id) {
            Some(i) => i,
            None => {
                self.clusters.push(Agg {
                    cluster: *cluster,
                    first_send: sent,
                    last_send: sent,
                    size_last_send: bytes,
                    first_recv: arrival,
                    last_recv: arrival,
                    size_first_recv: bytes,
                    bytes: 0,
                    packets: 0,
                });
                self.clusters.len() - 1
            }
        };
        let a = &mut self.clusters[i];
        a.first_send = a.first_send.min(sent);
        if sent > a.last_send {
            a.last_send = sent;
            a.size_last_send = bytes;
        }
        if arrival < a.first_recv {
            a.first_recv = arrival;
            a.size_first_recv = bytes;
        }
        a.last_recv = a.last_recv.max(arrival);
        a.bytes += bytes as u64;
        a.packets += 1;
        let c = a.cluster;
        if (a.packets as f64) < MIN_RECEIVED_FRACTION * c.min_packets as f64
            || (a.bytes as f64) < MIN_RECEIVED_FRACTION * c.min_bytes as f64
        {
            return None;
        }
        let send_ns = a.last_send - a.first_send;
        let recv_ns = a.last_recv - a.first_recv;
        if send_ns == 0 || send_ns > MAX_INTERVAL_NS || recv_ns == 0 || recv_ns > MAX_INTERVAL_NS {
            return None;
        }
        let send_rate = (a.bytes - a.size_last_send as u64) as f64 * 8e9 / send_ns as f64;
        let recv_rate = (a.bytes - a.size_first_recv as u64) as f64 * 8e9 / recv_ns as f64;
        if recv_rate > MAX_RATIO * send_rate {
            return None;
        }
        Some(if recv_rate < SATURATED_RATIO * send_rate {
            TARGET_FRACTION * recv_rate
        } else {
            send_rate.min(recv_rate)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(rate: f64) -> ProbeCluster {
        ProbeCluster { id: 1, rate_bps: rate, min_packets: 5, min_bytes: 11_250 }
    }

    /// 10 packets of 1250 B sent at 6 Mbit/s (one per 1.667 ms) through a bottleneck of
    /// `link` bit/s: they arrive one serialisation time apart when the link is slower.
    fn run(link: f64) -> Option<f64> {
        let mut e = ProbeEstimator::default();
        let c = cluster(6e6);
        let (send_gap, ser) = (1250.0 * 8.0 / 6e6 * 1e9, 1250.0 * 8.0 / link * 1e9);
        let mut last = None;
        for i in 0..10u64 {
            let sent = (i as f64 * send_gap) as u64;
            let arr = 20_000_000 + (i as f64 * send_gap.max(ser)) as u64;
            last = e.on_packet(&c, sent, arr, 1250).or(last);
        }
        last
    }

    #[test]
    fn an_unsaturated_probe_reads_its_send_rate_and_a_saturated_one_the_link() {
        // The link is faster than the probe: the probe's own rate (within rounding).
        let r = run(10e6).unwrap();
        assert!((r / 6e6 - 1.0).abs() < 0.01, "{r}");
        // A 4 Mbit/s link: receive rate 4 Mbit/s < 90 % of 6, so 95 % of it.
        let r = run(4e6).unwrap();
        assert!((r / (0.95 * 4e6) - 1.0).abs() < 0.01, "{r}");
    }

    #[test]
    fn too_few_packets_or_an_impossible_ratio_give_nothing() {
        let mut e = ProbeEstimator::default();
        let c = cluster(6e6);
        // 3 packets: under 80 % of the 5 required.
        for i in 0..3 {
            assert_eq!(e.on_packet(&c, i * 1_666_667, 20_000_000 + i * 1_666_667, 1250), None);
        }
        // Packets sent 10 ms apart arriving back to back (1 µs apart): receive rate far
        // above twice the send rate, a compressed reading not a path's rate.
        let mut e = ProbeEstimator::default();
        let c = ProbeCluster { id: 2, rate_bps: 1e6, min_packets: 5, min_bytes: 1 };
        for i in 0..8 {
            assert_eq!(e.on_packet(&c, i * 10_000_000, 100_000_000 + i * 1_000, 1250), None);
        }
    }

    #[test]
    fn the_controller_probes_at_3x_and_6x_then_doubles_while_it_finds_room() {
        let mut p = ProbeController::new(1e8);
        let a = p.take(0, 1e6).unwrap();
        let b = p.take(0, 1e6).unwrap();
        assert_eq!((a.rate_bps, b.rate_bps, a.min_packets), (3e6, 6e6, 5));
        assert_eq!(b.min_bytes, 11_250, "15 ms at 6 Mbit/s");
        assert!(p.take(0, 1e6).is_none());
        p.on_estimate(100_000_000, 5.5e6);
        assert_eq!(p.take(100_000_000, 1e6).unwrap().rate_bps, 11e6);
        // 11 Mbit/s probe found 5 (< 70 %): stop.
        p.on_estimate(200_000_000, 5e6);
        assert!(p.take(200_000_000, 1e6).is_none());
    }
}
