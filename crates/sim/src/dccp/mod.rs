//! DCCP (RFC 4340): unreliable datagram flows with congestion control.
//!
//! One [`DccpEndpoint`] per side of a flow. The client is the half-connection sender
//! (HC-Sender) of data, the server its receiver (HC-Receiver), which acknowledges with
//! DCCP-Ack packets carrying an Ack Vector. The client opens with a DCCP-Request (repeated with
//! exponential back-off from 1 s), the server answers with a DCCP-Response, and the client's
//! first data packet is a DCCP-DataAck completing the handshake; later data packets are
//! DCCP-Data. Every packet, pure ACKs included, takes a sequence number (48-bit on the wire;
//! a run never wraps them). Nothing is retransmitted.
//!
//! Parts: the header and the Ack Vector option (`crate::wire::dccp`, `crate::wire::ackvec`:
//! packets carry them), `lossrate` (the receiver's loss rate over a sliding window, eqs. 6
//! and 11 of the DCCP-BBR paper), `sender` (the sent-packet history, loss detection, RTT/RTO,
//! Ack Ratio, pacing) and `receiver`. The congestion controllers (`ccid2`, `bbr`,
//! `bbr-adaptive`) are [`DccpControl`](crate::cc::DccpControl) trait objects from the `cc`
//! registry — TCP's controller interface plus DCCP's own inputs; the endpoint hands them
//! windows in bytes of whole data packets.
//! See `docs/dccp.md` for the choices made where the RFCs or the paper leave room.

pub mod lossrate;
mod receiver;
mod sender;

pub use crate::wire::ackvec;
pub use crate::wire::dccp::*;

use crate::cc::{
    AckSample, BuildCtx, CaState, CongestionEvent, CongestionKind, DccpControl, Window,
};
use crate::engine::{Event, SimRng, TimerKind};
use crate::ids::{FlowId, RouteId, SockId};
use crate::metrics::DelayHist;
use crate::metrics::{delay_histogram, record_delay};
use crate::net::{Ecn, Header, Packet};
use crate::tcp::{Cx, RateSample};
use crate::units::{Dur, Rate, SimTime};
use ackvec::{AckVector, STATE_NOT_RECEIVED, STATE_RECEIVED};
use lossrate::LossWindow;
use sender::SentRec;
use std::collections::VecDeque;

/// What drives a DCCP sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DccpApp {
    /// As many datagrams as the controller allows.
    Greedy,
    /// Datagrams at a constant rate (counted in wire bytes), queued while the controller
    /// holds them back.
    Cbr(Rate),
}

/// A DCCP flow's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct DccpCfg {
    /// Its congestion control (a DCCP entry of the `cc` registry: the CCID).
    pub cc: crate::cc::CcSpec,
    /// ACK after this many data packets (RFC 4341 default 2).
    pub ack_ratio: u32,
    /// The receiver's loss-rate window (`bbr-adaptive`; the paper's 10 s).
    pub loss_window: Dur,
    /// Application payload bytes per datagram.
    pub packet_size: u32,
    pub app: DccpApp,
}

/// History the receiver keeps for its Ack Vector (packets below the newest).
pub const RX_HISTORY: u64 = 256;
/// The receiver acknowledges data that has waited this long even before Ack Ratio packets
/// have arrived (so a sender with fewer than Ack Ratio packets in flight is not stalled).
pub const ACK_DELAY: Dur = Dur::from_millis(40);
/// Initial timeout of the Request and of the CCID (RFC 4340 §8.1.1, RFC 4341 §5).
pub const INITIAL_RTO: Dur = Dur::from_secs(1);
pub const MAX_RTO: Dur = Dur::from_secs(64);
/// RFC 4341 §5 allows DCCP to go below TCP's 1 s minimum; the floor Linux CCID2 uses.
pub const MIN_RTO_VAR: Dur = Dur::from_millis(200);
/// CCID2's three later packets ("NUMDUPACK").
pub const NUMDUPACK: usize = 3;
/// Datagrams a constant-rate application may queue while the controller holds them back;
/// more are dropped at the source (as Linux's `tx_qlen`).
pub const TX_QLEN: u64 = 100;

#[derive(Debug, Clone, Copy, Default)]
pub struct DccpStats {
    /// Data packets and their payload bytes sent (client).
    pub pkts_sent: u64,
    pub bytes_sent: u64,
    /// Data packets and payload bytes received (server).
    pub pkts_received: u64,
    pub bytes_received: u64,
    pub owd_sum_ns: f64,
    pub owd_n: u64,
    pub rtt_sum_ns: f64,
    pub rtt_n: u64,
    pub acks_sent: u64,
    pub timeouts: u64,
    /// Packets the sender declared lost from Ack Vectors.
    pub lost_detected: u64,
    /// Congestion events that cut the window (CCID2).
    pub reductions: u64,
    /// Datagrams a constant-rate application could not queue.
    pub app_drops: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed,
    Listen,
    Requesting,
    Respond,
    Open,
}

pub struct DccpEndpoint {
    pub id: SockId,
    pub flow: FlowId,
    route: RouteId,
    cfg: DccpCfg,
    state: State,
    /// The receiving side (HC-Receiver) of the flow.
    server: bool,
    next_seq: u64,
    // ---- sender (client) ----
    pub cc: Box<dyn DccpControl>,
    /// The controller's window, in bytes of whole data packets (`w.mss` = one data packet).
    pub w: Window,
    /// When the last congestion event was answered: the losses of packets sent before it
    /// belong to it.
    last_cong: Option<SimTime>,
    hist: VecDeque<SentRec>,
    /// Sequence number of `hist[0]`.
    hist_base: u64,
    pub pipe: u64,
    /// The three highest sequence numbers reported received (highest first).
    top: [Option<u64>; NUMDUPACK],
    delivered_bytes: u64,
    delivered_pkts: u64,
    app_limited_until: u64,
    srtt: Option<Dur>,
    rttvar: Dur,
    pub rto: Dur,
    pub latest_rtt: Option<Dur>,
    rto_at: Option<SimTime>,
    rto_ev: Option<SimTime>,
    pace_next: SimTime,
    pace_ev: Option<SimTime>,
    request_sent_at: SimTime,
    peer_seq: u64,
    first_data: bool,
    /// Current Ack Ratio, and the first packet that carried it while the receiver may not
    /// have seen it yet.
    pub ack_ratio: u64,
    ack_ratio_from: Option<u64>,
    /// Ack Ratio as RFC 4341 §6.1.2's ACK congestion control sets it (doubled on a lost
    /// ACK, lowered by one after cwnd/(R² − R) windows without one; never below the
    /// configured value); `ack_ratio` is this capped at ⌈cwnd/2⌉.
    ack_ratio_cc: u64,
    /// Sequence number of the last ACK received (gaps are lost ACKs: the receiver sends
    /// nothing else once the connection is open).
    last_ack_seq: u64,
    /// Packets acknowledged since the last lost ACK.
    acked_since_ack_loss: u64,
    /// ACKs found lost.
    pub acks_lost: u64,
    /// Datagrams the constant-rate application has queued.
    cbr_queue: u64,
    cbr_gap: Dur,
    lost_buf: Vec<SimTime>,
    // ---- receiver (server) ----
    gsr: Option<u64>,
    rx_base: u64,
    rx: VecDeque<u8>,
    data_since_ack: u64,
    rx_ack_ratio: u64,
    delack_at: Option<SimTime>,
    delack_ev: Option<SimTime>,
    loss: LossWindow,
    pub stats: DccpStats,
    pub owd_hist: DelayHist,
    pub rtt_hist: DelayHist,
    pub metrics_from: SimTime,
}

impl DccpEndpoint {
    pub fn new(
        id: SockId,
        flow: FlowId,
        route: RouteId,
        cfg: DccpCfg,
        mut rng: SimRng,
    ) -> DccpEndpoint {
        // A random initial sequence number (below 2^40, so a run never wraps 48 bits).
        let iss = rng.range_u64(0, 1 << 40);
        let data_wire = IP_HEADER_BYTES + GENERIC_HEADER_BYTES + cfg.packet_size;
        // Windows are counted in whole data packets: the Window's mss is one data packet.
        let mut cc = cfg.cc.build_dccp(BuildCtx {
            mss: data_wire as u64,
            rng: rng.clone(),
            hz: crate::linux::DEFAULT_HZ,
        });
        let mut w = Window { cwnd: 0, ssthresh: u64::MAX, mss: data_wire as u64 };
        cc.on_init(&mut w);
        let (ack_ratio, loss_window) = (cfg.ack_ratio as u64, cfg.loss_window);
        cc.on_ack_ratio(ack_ratio);
        let cbr_gap = match cfg.app {
            DccpApp::Cbr(r) => r.tx_time(data_wire as u64),
            DccpApp::Greedy => Dur::ZERO,
        };
        DccpEndpoint {
            id,
            flow,
            route,
            cfg,
            state: State::Closed,
            server: false,
            next_seq: iss,
            cc,
            w,
            last_cong: None,
            hist: VecDeque::with_capacity(1024),
            hist_base: 0,
            pipe: 0,
            top: [None; NUMDUPACK],
            delivered_bytes: 0,
            delivered_pkts: 0,
            app_limited_until: 0,
            srtt: None,
            rttvar: Dur::ZERO,
            rto: INITIAL_RTO,
            latest_rtt: None,
            rto_at: None,
            rto_ev: None,
            pace_next: SimTime::ZERO,
            pace_ev: None,
            request_sent_at: SimTime::ZERO,
            peer_seq: 0,
            first_data: true,
            ack_ratio,
            ack_ratio_from: None,
            ack_ratio_cc: ack_ratio,
            last_ack_seq: 0,
            acked_since_ack_loss: 0,
            acks_lost: 0,
            cbr_queue: 0,
            cbr_gap,
            lost_buf: Vec::with_capacity(16),
            gsr: None,
            rx_base: 0,
            rx: VecDeque::with_capacity(RX_HISTORY as usize + 1),
            data_since_ack: 0,
            rx_ack_ratio: ack_ratio,
            delack_at: None,
            delack_ev: None,
            loss: LossWindow::new(loss_window),
            stats: DccpStats::default(),
            owd_hist: delay_histogram(),
            rtt_hist: delay_histogram(),
            metrics_from: SimTime::ZERO,
        }
    }

    /// The server side waits for a Request.
    pub fn listen(&mut self) {
        self.state = State::Listen;
        self.server = true;
    }

    /// Wire bytes of a full data packet (for reporting windows in bytes).
    pub fn data_wire_bytes(&self) -> u64 {
        (IP_HEADER_BYTES + GENERIC_HEADER_BYTES + self.cfg.packet_size) as u64
    }

    /// The congestion window in packets.
    pub fn cwnd_pkts(&self) -> u64 {
        self.w.cwnd / self.w.mss
    }

    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }

    /// Receiver's current loss-rate estimate.
    pub fn rx_loss_rate(&self) -> f64 {
        self.loss.rate()
    }

    fn emit(&mut self, h: DccpHeader, cx: &mut Cx) {
        let p = Packet {
            flow: self.flow,
            route: self.route,
            hop: 0,
            wire_bytes: h.wire_bytes(),
            ecn: Ecn::NotEct,
            sent_at: cx.now,
            conn: 0,
            pure_ack: None,
            hdr: Header::Dccp(h),
        };
        cx.out.push(cx.pool.alloc(p));
    }

    fn take_seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    pub fn on_timer(&mut self, kind: TimerKind, cx: &mut Cx) {
        match kind {
            TimerKind::Rto => {
                if self.rto_ev != Some(cx.now) {
                    return; // superseded by an earlier one
                }
                self.rto_ev = None;
                match self.rto_at {
                    Some(t) if t <= cx.now => {
                        self.rto_at = None;
                        self.rto_expired(cx);
                    }
                    Some(t) => self.arm_rto(t, cx),
                    None => {}
                }
            }
            TimerKind::Pace => {
                if self.pace_ev == Some(cx.now) {
                    self.pace_ev = None;
                    self.try_send(cx);
                }
            }
            TimerKind::DelAck => {
                if self.server {
                    // Server: the delayed-ACK timer.
                    if self.delack_ev != Some(cx.now) {
                        return;
                    }
                    self.delack_ev = None;
                    match self.delack_at {
                        Some(t) if t <= cx.now && self.data_since_ack > 0 => self.send_ack(cx),
                        Some(t) if t <= cx.now => self.delack_at = None,
                        Some(t) => self.arm_delack(t, cx),
                        None => {}
                    }
                } else {
                    // Client: one datagram from the constant-rate application.
                    if self.cbr_queue < TX_QLEN {
                        self.cbr_queue += 1;
                    } else {
                        self.stats.app_drops += 1;
                    }
                    cx.events
                        .schedule(cx.now + self.cbr_gap, Event::Timer(self.id, TimerKind::DelAck));
                    if self.state == State::Open {
                        self.try_send(cx);
                    }
                }
            }
        }
    }

    /// A packet arrived for this endpoint.
    pub fn on_packet(&mut self, pkt: &Packet, cx: &mut Cx) {
        let Header::Dccp(h) = pkt.hdr else { return };
        if self.server {
            self.server_packet(pkt, &h, cx);
        } else {
            self.client_packet(&h, cx);
        }
    }
}
