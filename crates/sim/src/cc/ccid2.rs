//! CCID 2, TCP-like congestion control for DCCP (RFC 4341; behaviour as Linux
//! `net/dccp/ccids/ccid2.c`): a window in packets compared with the pipe (packets
//! outstanding), slow start at one packet per two acknowledged, congestion avoidance at one
//! packet per window, halving on a loss, and a timeout that collapses the window to one packet.
//! Loss detection (Ack Vector holes with three later packets received) and the rule that the
//! losses of one window are one congestion event belong to the DCCP endpoint, which owns the
//! sent-packet history (as the TCP core does for TCP controllers).

use super::registry::{CcEntry, CcKind, CcTransport, DccpNoParams};
use super::{AckSample, CongestionControl, CongestionEvent, CongestionKind, DccpControl, Window};
use crate::wire::dccp::{GENERIC_HEADER_BYTES, IP_HEADER_BYTES};
use std::sync::Arc;

pub(super) const ENTRY: CcEntry = CcEntry {
    name: "ccid2",
    doc: "CCID 2, TCP-like congestion control for DCCP (RFC 4341)",
    keys: &[],
    extra: CcKind { transport: CcTransport::Dccp, plus: None },
    parse: |_, _| {
        Ok(Arc::new(DccpNoParams(|ctx| {
            // The builder gets the wire bytes of a data packet; RFC 3390 counts the payload.
            let payload = ctx.mss.saturating_sub((IP_HEADER_BYTES + GENERIC_HEADER_BYTES) as u64);
            Box::new(Ccid2::new(payload))
        })))
    },
};

/// The window is kept in the endpoint's [`Window`], in bytes of whole data packets
/// (`w.mss` = one data packet); the rules below work in packets, as RFC 4341 does.
#[derive(Debug, Clone)]
pub struct Ccid2 {
    /// Payload bytes of a data packet (for the initial window).
    payload: u64,
    /// Packets acknowledged towards the next increase.
    acked: u64,
    /// The Ack Ratio in force.
    ack_ratio: u64,
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

/// ssthresh in packets (u64::MAX: not set yet).
fn ssthresh_pkts(w: &Window) -> u64 {
    if w.ssthresh == u64::MAX {
        u64::MAX
    } else {
        w.ssthresh / w.mss
    }
}

impl Ccid2 {
    pub fn new(payload: u64) -> Ccid2 {
        Ccid2 { payload, acked: 0, ack_ratio: 2 }
    }

    /// `newly` packets were reported received by one ACK.
    fn grow(&mut self, w: &mut Window, newly: u64) {
        let (mut cwnd, ssthresh) = (w.cwnd / w.mss, ssthresh_pkts(w));
        // Slow start grows at most ceil(AckRatio / 2) packets per ACK.
        let mut maxincr = self.ack_ratio.div_ceil(2);
        for _ in 0..newly {
            if cwnd < ssthresh {
                if maxincr > 0 {
                    self.acked += 1;
                    if self.acked >= 2 {
                        cwnd += 1;
                        maxincr -= 1;
                        self.acked = 0;
                    }
                }
            } else {
                self.acked += 1;
                if self.acked >= cwnd {
                    cwnd += 1;
                    self.acked = 0;
                }
            }
        }
        w.cwnd = cwnd * w.mss;
    }
}

impl CongestionControl for Ccid2 {
    fn name(&self) -> &'static str {
        "ccid2"
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        self.grow(w, a.acked_bytes / w.mss);
    }

    /// DCCP applies no recovery rule of its own: CCID2 sets both cwnd and ssthresh. A loss
    /// (the endpoint calls once per window of data) halves the window; a timeout collapses it
    /// to one packet with half the old one as threshold.
    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent) {
        let cwnd = w.cwnd / w.mss;
        let (cwnd, ssthresh) = match e.kind {
            CongestionKind::Rto => {
                self.acked = 0;
                (1, (cwnd / 2).max(2))
            }
            CongestionKind::FastRetransmit | CongestionKind::Ecn => {
                let c = (cwnd / 2).max(1);
                (c, c.max(2))
            }
        };
        w.cwnd = cwnd * w.mss;
        w.ssthresh = ssthresh * w.mss;
    }
}

impl DccpControl for Ccid2 {
    fn on_init(&mut self, w: &mut Window) {
        w.cwnd = initial_window(self.payload) * w.mss;
        w.ssthresh = u64::MAX;
    }

    fn on_ack_ratio(&mut self, ratio: u64) {
        self.ack_ratio = ratio;
    }

    fn ccid(&self) -> u8 {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Dur, SimTime};

    const MSS: u64 = 1496;

    fn ack(c: &mut Ccid2, w: &mut Window, newly: u64, ratio: u64) {
        c.on_ack_ratio(ratio);
        c.on_ack(w, &AckSample::test(SimTime::ZERO, newly * MSS, None));
    }

    fn pkts(w: &Window) -> u64 {
        w.cwnd / MSS
    }

    fn loss(c: &mut Ccid2, w: &mut Window, kind: CongestionKind) {
        c.on_congestion_event(
            w,
            &CongestionEvent {
                now: SimTime(Dur::from_secs(1).0),
                kind,
                flight_size: 0,
                in_flight: 0,
            },
        );
    }

    #[test]
    fn slow_start_one_per_two_packets_then_linear() {
        let mut c = Ccid2::new(1460);
        let mut w = Window { cwnd: 0, ssthresh: 0, mss: MSS };
        c.on_init(&mut w);
        assert_eq!(pkts(&w), 3);
        // Ack Ratio 2: each ACK covers two packets and may add one.
        for _ in 0..10 {
            ack(&mut c, &mut w, 2, 2);
        }
        assert_eq!(pkts(&w), 13);
        // An ACK covering 6 packets with Ack Ratio 2 adds only ceil(2/2) = 1.
        ack(&mut c, &mut w, 6, 2);
        assert_eq!(pkts(&w), 14);
        w.ssthresh = 14 * MSS;
        ack(&mut c, &mut w, 13, 2);
        assert_eq!(pkts(&w), 14);
        ack(&mut c, &mut w, 1, 2);
        assert_eq!(pkts(&w), 15);
        assert_eq!(c.state_label(&w), "cong_avoid");
    }

    #[test]
    fn halves_on_loss_and_collapses_on_timeout() {
        let mut c = Ccid2::new(1460);
        let mut w = Window { cwnd: 40 * MSS, ssthresh: u64::MAX, mss: MSS };
        loss(&mut c, &mut w, CongestionKind::FastRetransmit);
        assert_eq!((w.cwnd, w.ssthresh), (20 * MSS, 20 * MSS));
        loss(&mut c, &mut w, CongestionKind::FastRetransmit);
        assert_eq!(w.cwnd, 10 * MSS);
        loss(&mut c, &mut w, CongestionKind::Rto);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 5 * MSS));
        loss(&mut c, &mut w, CongestionKind::FastRetransmit);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 2 * MSS));
    }
}
