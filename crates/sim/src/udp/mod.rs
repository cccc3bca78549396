//! UDP: a source sending one datagram every `gap` and a sink that measures what arrives. No
//! congestion control. Three applications: constant bit rate (the unresponsive traffic of
//! Talau et al.'s scenario 2), voice-like frames (one-way delay and RFC 3550 jitter), and
//! isochronous latency probes that the sink echoes back at once, as irtt's server does, so the
//! source measures round-trip times under load. A fourth, interactive video with a rate
//! controller, has its sender and receiver in video.rs.

use crate::engine::{Event, TimerKind};
use crate::ids::{FlowId, RouteId, SockId};
use crate::metrics::record_delay;
use crate::metrics::DelayHist;
use crate::net::{Ecn, Header, Packet, UdpHeader};
use crate::tcp::Cx;
use crate::units::{Dur, SimTime};
use crate::wire::UDP_HEADER_BYTES;

pub mod video;

/// What a UDP flow's source does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpApp {
    /// Constant bit rate, one way (Talau et al.'s unresponsive traffic).
    Cbr,
    /// Isochronous latency probes that the sink echoes back (as irtt does): round-trip and
    /// one-way delays, loss.
    Probe,
    /// Voice-like frames one way (20 ms by default): one-way delay, jitter, loss.
    Voip,
    /// Interactive video with a rate controller and feedback (video.rs).
    Video,
}

impl UdpApp {
    pub fn name(self) -> &'static str {
        match self {
            UdpApp::Cbr => "cbr",
            UdpApp::Probe => "probe",
            UdpApp::Voip => "voip",
            UdpApp::Video => "video",
        }
    }
}

/// A UDP source sending one datagram every `gap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpCfg {
    pub app: UdpApp,
    /// Time between datagrams (for CBR, the wire size at the configured rate).
    pub gap: Dur,
    /// UDP payload bytes per datagram.
    pub payload: u32,
    /// The video application's settings (app = "video").
    pub video: Option<crate::app::VideoCfg>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct UdpStats {
    pub pkts_sent: u64,
    pub bytes_sent: u64,
    pub pkts_received: u64,
    pub bytes_received: u64,
    pub owd_sum_ns: f64,
    pub owd_n: u64,
    /// Round trips of echoed probes (the probe source).
    pub rtt_sum_ns: f64,
    pub rtt_n: u64,
}

/// RFC 3550 §6.4.1 interarrival jitter: a running estimate of the mean deviation of the
/// transit-time difference between consecutive datagrams, gain 1/16. Kept in ns as f64 (the
/// RFC's integer form rounds; the estimate is a statistic, not wire state).
#[derive(Debug, Clone, Copy, Default)]
pub struct Jitter {
    last_transit: Option<u64>,
    pub jitter_ns: f64,
}

impl Jitter {
    #[inline]
    pub fn update(&mut self, transit_ns: u64) {
        if let Some(prev) = self.last_transit {
            let d = transit_ns.abs_diff(prev) as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.last_transit = Some(transit_ns);
    }
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
    /// One-way delays of the datagrams this endpoint receives (the sink: the forward
    /// direction; a probe source: the echoes' return trip).
    pub owd_hist: DelayHist,
    /// Round trips of a probe source's echoed probes.
    pub rtt_hist: DelayHist,
    /// Jitter of what this endpoint receives (measured from the metrics window on).
    pub jitter: Jitter,
    /// Round trips completed since the last time-series sample, and the latest one.
    pub interval_rtt_sum_ns: u64,
    pub interval_rtt_n: u64,
    pub latest_rtt: Option<Dur>,
    pub metrics_from: SimTime,
    /// Payload bytes the sink waits for (sized flows) and when they were all in.
    pub expect: Option<u64>,
    pub completed_at: Option<SimTime>,
    /// The video application's end (sender or receiver), for video flows.
    pub video: Option<video::Video>,
}

impl UdpEndpoint {
    pub fn new(id: SockId, flow: FlowId, route: RouteId, cfg: UdpCfg) -> UdpEndpoint {
        UdpEndpoint {
            id,
            flow,
            route,
            cfg,
            budget: 0,
            next_seq: 0,
            gap: cfg.gap,
            stats: UdpStats::default(),
            owd_hist: crate::metrics::delay_histogram(),
            rtt_hist: crate::metrics::delay_histogram(),
            jitter: Jitter::default(),
            interval_rtt_sum_ns: 0,
            interval_rtt_n: 0,
            latest_rtt: None,
            metrics_from: SimTime::ZERO,
            expect: None,
            completed_at: None,
            video: None,
        }
    }

    /// The application's name, for time series.
    pub fn app_name(&self) -> &'static str {
        self.cfg.app.name()
    }

    /// The application starts sending `bytes` of payload.
    pub fn start(&mut self, bytes: u64, cx: &mut Cx) {
        if let Some(video::Video::Sender(v)) = self.video.as_mut() {
            return v.start(cx, &mut self.stats);
        }
        self.budget = bytes;
        self.send_one(cx);
    }

    /// The send timer fired.
    pub fn on_timer(&mut self, kind: TimerKind, cx: &mut Cx) {
        match self.video.as_mut() {
            Some(video::Video::Sender(v)) => return v.on_timer(kind, cx, &mut self.stats),
            Some(video::Video::Receiver(v)) => return v.on_timer(kind, cx),
            None => {}
        }
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
            pure_ack: None,
            hdr: Header::Udp(UdpHeader { seq: self.next_seq, len, echo_of: None }),
        };
        self.next_seq += 1;
        cx.out.push(cx.pool.alloc(p));
        self.stats.pkts_sent += 1;
        self.stats.bytes_sent += len as u64;
        if self.budget > 0 {
            cx.events.schedule(cx.now + self.gap, Event::Timer(self.id, TimerKind::Pace));
        }
    }

    /// A datagram arrived: at the sink, data (echoed at once if it is a probe); at a probe
    /// source, an echo closing a round trip.
    pub fn on_packet(&mut self, pkt: &Packet, cx: &mut Cx) {
        let now = cx.now;
        let Header::Udp(h) = pkt.hdr else { return };
        // Payload bytes delivered to the application (a video receiver leaves out duplicates).
        let mut delivered = h.len;
        match self.video.as_mut() {
            Some(video::Video::Sender(v)) => return v.on_feedback(pkt, cx, &mut self.stats),
            Some(video::Video::Receiver(v)) => delivered = v.on_data(pkt, cx),
            None => {}
        }
        let measuring = now >= self.metrics_from;
        let owd = now.since(pkt.sent_at).0;
        if measuring {
            record_delay(
                &mut self.stats.owd_sum_ns,
                &mut self.stats.owd_n,
                &mut self.owd_hist,
                owd,
            );
            self.jitter.update(owd);
        }
        if let Some(sent) = h.echo_of {
            // An echo back at the probe source: not application data.
            let rtt = now.since(sent);
            self.latest_rtt = Some(rtt);
            if measuring {
                record_delay(
                    &mut self.stats.rtt_sum_ns,
                    &mut self.stats.rtt_n,
                    &mut self.rtt_hist,
                    rtt.0,
                );
                self.interval_rtt_sum_ns += rtt.0;
                self.interval_rtt_n += 1;
            }
            return;
        }
        self.stats.pkts_received += 1;
        self.stats.bytes_received += delivered as u64;
        if self.cfg.app == UdpApp::Probe {
            let echo = Packet {
                flow: self.flow,
                route: self.route,
                hop: 0,
                wire_bytes: pkt.wire_bytes,
                ecn: Ecn::NotEct,
                sent_at: now,
                conn: 0,
                pure_ack: None,
                hdr: Header::Udp(UdpHeader { seq: h.seq, len: h.len, echo_of: Some(pkt.sent_at) }),
            };
            cx.out.push(cx.pool.alloc(echo));
        }
        if let Some(want) = self.expect {
            if self.completed_at.is_none() && self.stats.bytes_received >= want {
                self.completed_at = Some(now);
            }
        }
    }
}
