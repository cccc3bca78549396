//! CCID 2, TCP-like congestion control for DCCP (RFC 4341; behaviour as Linux
//! `net/dccp/ccids/ccid2.c`): a window in packets compared with the pipe (packets
//! outstanding), slow start at one packet per two acknowledged, congestion avoidance at one
//! packet per window, halving once per window of data on a loss, and a timeout that collapses
//! the window to one packet. Loss detection itself (Ack Vector holes with three later packets
//! received) is done by the endpoint, which owns the sent-packet history.

use crate::units::SimTime;

#[derive(Debug, Clone)]
pub struct Ccid2 {
    /// Congestion window, packets.
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Packets acknowledged towards the next increase.
    acked: u64,
    /// Time of the last window reduction: a loss of a packet sent before it is part of the
    /// same congestion event ("multiple losses in a window are one").
    last_cong: Option<SimTime>,
    /// Window reductions so far.
    pub reductions: u64,
}

/// RFC 3390 initial window in packets for a given packet size (as Linux
/// `rfc3390_bytes_to_packets`).
pub fn initial_window(packet_bytes: u64) -> u64 {
    if packet_bytes <= 1095 {
        4
    } else if packet_bytes <= 2190 {
        3
    } else {
        2
    }
}

impl Ccid2 {
    pub fn new(packet_bytes: u64) -> Ccid2 {
        Ccid2 { cwnd: initial_window(packet_bytes), ssthresh: u64::MAX, acked: 0, last_cong: None, reductions: 0 }
    }

    /// `newly` packets were reported received by one ACK; `ack_ratio` is the current Ack Ratio.
    pub fn on_ack(&mut self, newly: u64, ack_ratio: u64) {
        // Slow start grows at most ceil(AckRatio / 2) packets per ACK.
        let mut maxincr = ack_ratio.div_ceil(2);
        for _ in 0..newly {
            if self.cwnd < self.ssthresh {
                if maxincr > 0 {
                    self.acked += 1;
                    if self.acked >= 2 {
                        self.cwnd += 1;
                        maxincr -= 1;
                        self.acked = 0;
                    }
                }
            } else {
                self.acked += 1;
                if self.acked >= self.cwnd {
                    self.cwnd += 1;
                    self.acked = 0;
                }
            }
        }
    }

    /// A packet sent at `sent_at` was lost (or ECN-marked). Returns whether the window was cut.
    pub fn on_loss(&mut self, now: SimTime, sent_at: SimTime) -> bool {
        if self.last_cong.is_some_and(|t| sent_at < t) {
            return false;
        }
        self.cwnd = (self.cwnd / 2).max(1);
        self.ssthresh = self.cwnd.max(2);
        self.last_cong = Some(now);
        self.reductions += 1;
        true
    }

    /// The retransmission timer expired: one packet of window, half the old one as threshold.
    pub fn on_timeout(&mut self) {
        self.ssthresh = (self.cwnd / 2).max(2);
        self.cwnd = 1;
        self.acked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Dur;

    #[test]
    fn slow_start_one_per_two_packets_then_linear() {
        let mut c = Ccid2::new(1460);
        assert_eq!(c.cwnd, 3);
        // Ack Ratio 2: each ACK covers two packets and may add one.
        for _ in 0..10 {
            c.on_ack(2, 2);
        }
        assert_eq!(c.cwnd, 13);
        // An ACK covering 6 packets with Ack Ratio 2 adds only ceil(2/2) = 1.
        c.on_ack(6, 2);
        assert_eq!(c.cwnd, 14);
        c.ssthresh = 14;
        c.on_ack(13, 2);
        assert_eq!(c.cwnd, 14);
        c.on_ack(1, 2);
        assert_eq!(c.cwnd, 15);
    }

    #[test]
    fn halves_once_per_window() {
        let mut c = Ccid2::new(1460);
        c.cwnd = 40;
        let t = |ms| SimTime(Dur::from_millis(ms).0);
        assert!(c.on_loss(t(1000), t(900)));
        assert_eq!((c.cwnd, c.ssthresh), (20, 20));
        // Another packet of the same window (sent before the cut) does not cut again.
        assert!(!c.on_loss(t(1010), t(950)));
        assert_eq!(c.cwnd, 20);
        // A packet sent after the cut does.
        assert!(c.on_loss(t(1200), t(1050)));
        assert_eq!(c.cwnd, 10);
        c.on_timeout();
        assert_eq!((c.cwnd, c.ssthresh), (1, 5));
        c.cwnd = 1;
        c.on_loss(t(2000), t(1900));
        assert_eq!((c.cwnd, c.ssthresh), (1, 2));
    }
}
