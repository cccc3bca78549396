//! UDP: a constant-bit-rate source and a sink that measures what arrives. No feedback, no
//! congestion control — the unresponsive traffic of Talau et al.'s scenario 2.

use crate::config::{UdpCfg, UDP_HEADER_BYTES};
use crate::engine::{Event, TimerKind};
use crate::ids::{FlowId, RouteId, SockId};
use crate::net::{Ecn, Header, Packet, UdpHeader};
use crate::tcp::Cx;
use crate::units::{Dur, SimTime};
use crate::metrics::record_delay;
use hdrhistogram::Histogram;

#[derive(Debug, Clone, Copy, Default)]
pub struct UdpStats {
    pub pkts_sent: u64,
    pub bytes_sent: u64,
    pub pkts_received: u64,
    pub bytes_received: u64,
    pub owd_sum_ns: f64,
    pub owd_n: u64,
}

pub struct UdpEndpoint {
    pub id: SockId,
    pub flow: FlowId,
    route: RouteId,
    cfg: UdpCfg,
    /// Payload bytes the source still has to send (u64::MAX/4 for unlimited).
    budget: u64,
    next_seq: u64,
    gap: Dur,
    pub stats: UdpStats,
    pub owd_hist: Histogram<u64>,
    pub metrics_from: SimTime,
    /// Payload bytes the sink waits for (sized flows) and when they were all in.
    pub expect: Option<u64>,
    pub completed_at: Option<SimTime>,
}

impl UdpEndpoint {
    pub fn new(id: SockId, flow: FlowId, route: RouteId, cfg: UdpCfg) -> UdpEndpoint {
        let wire = (cfg.payload + UDP_HEADER_BYTES) as u64;
        UdpEndpoint {
            id,
            flow,
            route,
            cfg,
            budget: 0,
            next_seq: 0,
            gap: cfg.rate.tx_time(wire),
            stats: UdpStats::default(),
            owd_hist: crate::metrics::delay_histogram(),
            metrics_from: SimTime::ZERO,
            expect: None,
            completed_at: None,
        }
    }

    /// The application starts sending `bytes` of payload.
    pub fn start(&mut self, bytes: u64, cx: &mut Cx) {
        self.budget = bytes;
        self.send_one(cx);
    }

    /// The send timer fired.
    pub fn on_timer(&mut self, kind: TimerKind, cx: &mut Cx) {
        if kind == TimerKind::Pace {
            self.send_one(cx);
        }
    }

    fn send_one(&mut self, cx: &mut Cx) {
        if self.budget == 0 {
            return;
        }
        let len = (self.cfg.payload as u64).min(self.budget) as u32;
        self.budget -= len as u64;
        let p = Packet {
            flow: self.flow,
            route: self.route,
            hop: 0,
            wire_bytes: len + UDP_HEADER_BYTES,
            ecn: Ecn::NotEct,
            sent_at: cx.now,
            conn: 0,
            hdr: Header::Udp(UdpHeader { seq: self.next_seq, len }),
        };
        self.next_seq += 1;
        cx.out.push(cx.pool.alloc(p));
        self.stats.pkts_sent += 1;
        self.stats.bytes_sent += len as u64;
        if self.budget > 0 {
            cx.events.schedule(cx.now + self.gap, Event::Timer(self.id, TimerKind::Pace));
        }
    }

    /// A datagram arrived at the sink.
    pub fn on_packet(&mut self, pkt: &Packet, now: SimTime) {
        let Header::Udp(h) = pkt.hdr else { return };
        self.stats.pkts_received += 1;
        self.stats.bytes_received += h.len as u64;
        if now >= self.metrics_from {
            let owd = now.since(pkt.sent_at).0;
            record_delay(&mut self.stats.owd_sum_ns, &mut self.stats.owd_n, &mut self.owd_hist, owd);
        }
        if let Some(want) = self.expect {
            if self.completed_at.is_none() && self.stats.bytes_received >= want {
                self.completed_at = Some(now);
            }
        }
    }
}
