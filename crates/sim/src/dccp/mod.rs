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
//! Parts: `ackvec` (the Ack Vector option), `ccid2` (RFC 4341), `bbr` (BBR v1 with the paper's
//! bandwidth sampling, and the loss-adaptive DCCP-BBR), `lossrate` (the receiver's loss rate
//! over a sliding window, eqs. 6 and 11 of the paper). The sent-packet history, loss
//! detection, RTT/RTO and the Ack Ratio live here, shared by the controllers.
//! See `docs/dccp.md` for the choices made where the RFCs or the paper leave room.

pub mod ackvec;
pub mod bbr;
pub mod ccid2;
pub mod lossrate;

use crate::config::{DccpApp, DccpCcKind, DccpCfg};
use crate::engine::{Event, SimRng, TimerKind};
use crate::ids::{FlowId, RouteId, SockId};
use crate::net::{Ecn, Header, Packet};
use crate::tcp::Cx;
use crate::units::{Dur, SimTime};
use ackvec::{AckVector, STATE_NOT_RECEIVED, STATE_RECEIVED};
use bbr::{AckSample, DccpBbr};
use ccid2::Ccid2;
use crate::metrics::{delay_histogram, record_delay};
use hdrhistogram::Histogram;
use lossrate::LossWindow;
use std::collections::VecDeque;

/// Bytes of the IPv4 header in front of every DCCP packet.
pub const IP_HEADER_BYTES: u32 = 20;
/// The generic DCCP header with 48-bit sequence numbers (X = 1).
pub const GENERIC_HEADER_BYTES: u32 = 16;
/// The acknowledgement subheader (48-bit Acknowledgement Number).
pub const ACK_SUBHEADER_BYTES: u32 = 8;
/// Request and Response carry a Service Code.
pub const SERVICE_CODE_BYTES: u32 = 4;
/// The loss-rate option of `bbr-adaptive` ACKs: type 192 (a CCID-specific option sent from the
/// HC-Receiver to the HC-Sender), length 6, the rate in parts per million as a 32-bit integer.
pub const LOSS_RATE_OPTION_BYTES: u32 = 6;
/// Change L(Ack Ratio) carried by the sender until the receiver has seen it: type 32,
/// length 5, feature 5, 16-bit value.
pub const ACK_RATIO_OPTION_BYTES: u32 = 5;
/// Change L(CCID) on the Request: type 32, length 4, feature 1, the CCID.
pub const CCID_OPTION_BYTES: u32 = 4;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DccpType {
    Request,
    Response,
    Data,
    Ack,
    DataAck,
}

impl DccpType {
    /// The 4-bit Type field.
    pub fn code(self) -> u8 {
        match self {
            DccpType::Request => 0,
            DccpType::Response => 1,
            DccpType::Data => 2,
            DccpType::Ack => 3,
            DccpType::DataAck => 4,
        }
    }
    pub fn has_ack(self) -> bool {
        !matches!(self, DccpType::Request | DccpType::Data)
    }
}

/// A DCCP header (Copy; the Ack Vector is stored inline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DccpHeader {
    pub ptype: DccpType,
    pub seq: u64,
    /// Acknowledgement Number (valid when `ptype.has_ack()`).
    pub ack: u64,
    /// Application payload bytes.
    pub len: u32,
    pub ackvec: AckVector,
    /// The receiver's loss rate in parts per million (`bbr-adaptive` ACKs).
    pub loss_rate_ppm: Option<u32>,
    /// A Change L(Ack Ratio) option.
    pub ack_ratio: Option<u16>,
    /// The CCID asked for (Request only).
    pub ccid: u8,
}

impl DccpHeader {
    pub fn new(ptype: DccpType, seq: u64) -> DccpHeader {
        DccpHeader { ptype, seq, ack: 0, len: 0, ackvec: AckVector::default(), loss_rate_ppm: None, ack_ratio: None, ccid: 0 }
    }

    /// Option bytes before padding.
    pub fn options_bytes(&self) -> u32 {
        self.ackvec.option_bytes()
            + if self.loss_rate_ppm.is_some() { LOSS_RATE_OPTION_BYTES } else { 0 }
            + if self.ack_ratio.is_some() { ACK_RATIO_OPTION_BYTES } else { 0 }
            + if self.ptype == DccpType::Request { CCID_OPTION_BYTES } else { 0 }
    }

    /// DCCP header bytes (generic header, subheaders and options padded to 32 bits).
    pub fn header_bytes(&self) -> u32 {
        GENERIC_HEADER_BYTES
            + if self.ptype.has_ack() { ACK_SUBHEADER_BYTES } else { 0 }
            + if matches!(self.ptype, DccpType::Request | DccpType::Response) { SERVICE_CODE_BYTES } else { 0 }
            + self.options_bytes().div_ceil(4) * 4
    }

    /// Bytes on the wire: IPv4 + DCCP header + payload.
    pub fn wire_bytes(&self) -> u32 {
        IP_HEADER_BYTES + self.header_bytes() + self.len
    }
}

/// The IANA-style CCID number of a controller (2 = CCID2; BBR has none: 5 is the number the
/// CCID5 draft uses for BBR, 248 one of the experimental values for the adaptive variant).
pub fn ccid_number(k: DccpCcKind) -> u8 {
    match k {
        DccpCcKind::Ccid2 => 2,
        DccpCcKind::Bbr => 5,
        DccpCcKind::BbrAdaptive => 248,
    }
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PktState {
    Outstanding,
    Acked,
    Lost,
}

/// What the sender remembers of a data packet (the paper's per-packet bookkeeping).
#[derive(Debug, Clone, Copy)]
struct SentRec {
    sent_at: SimTime,
    wire: u32,
    delivered_bytes: u64,
    delivered_pkts: u64,
    app_limited: bool,
    state: PktState,
}

/// The congestion controller of a sender.
#[derive(Debug, Clone)]
pub enum Controller {
    Ccid2(Ccid2),
    Bbr(Box<DccpBbr>),
}

impl Controller {
    pub fn cwnd(&self) -> u64 {
        match self {
            Controller::Ccid2(c) => c.cwnd,
            Controller::Bbr(b) => b.cwnd,
        }
    }
    /// Pacing rate in wire bytes per second.
    pub fn pacing_rate(&self) -> Option<f64> {
        match self {
            Controller::Ccid2(_) => None,
            Controller::Bbr(b) => b.pacing_rate(),
        }
    }
    pub fn label(&self) -> &'static str {
        match self {
            Controller::Ccid2(c) => {
                if c.cwnd < c.ssthresh {
                    "slow_start"
                } else {
                    "congestion_avoidance"
                }
            }
            Controller::Bbr(b) => b.label(),
        }
    }
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
    pub cc: Controller,
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
    pub owd_hist: Histogram<u64>,
    pub rtt_hist: Histogram<u64>,
    pub metrics_from: SimTime,
}


impl DccpEndpoint {
    pub fn new(id: SockId, flow: FlowId, route: RouteId, cfg: DccpCfg, mut rng: SimRng) -> DccpEndpoint {
        // A random initial sequence number (below 2^40, so a run never wraps 48 bits).
        let iss = rng.range_u64(0, 1 << 40);
        let data_wire = IP_HEADER_BYTES + GENERIC_HEADER_BYTES + cfg.packet_size;
        let cc = match cfg.cc {
            DccpCcKind::Ccid2 => Controller::Ccid2(Ccid2::new(cfg.packet_size as u64)),
            DccpCcKind::Bbr => Controller::Bbr(Box::new(DccpBbr::new(false, data_wire as u64, rng.clone()))),
            DccpCcKind::BbrAdaptive => Controller::Bbr(Box::new(DccpBbr::new(true, data_wire as u64, rng.clone()))),
        };
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
            ack_ratio: cfg.ack_ratio as u64,
            ack_ratio_from: None,
            ack_ratio_cc: cfg.ack_ratio as u64,
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
            rx_ack_ratio: cfg.ack_ratio as u64,
            delack_at: None,
            delack_ev: None,
            loss: LossWindow::new(cfg.loss_window),
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
            hdr: Header::Dccp(h),
        };
        cx.out.push(cx.pool.alloc(p));
    }

    fn take_seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    // ------------------------------------------------------------------ client

    /// The application starts: open the connection (and start the constant-rate clock).
    pub fn connect(&mut self, cx: &mut Cx) {
        self.state = State::Requesting;
        self.send_request(cx);
        if let DccpApp::Cbr(_) = self.cfg.app {
            // The client never delays ACKs; its DelAck timer is the application's clock.
            cx.events.schedule(cx.now, Event::Timer(self.id, TimerKind::DelAck));
        }
    }

    fn send_request(&mut self, cx: &mut Cx) {
        let mut h = DccpHeader::new(DccpType::Request, self.take_seq());
        h.ccid = ccid_number(self.cfg.cc);
        self.request_sent_at = cx.now;
        self.emit(h, cx);
        let at = cx.now + self.rto;
        self.arm_rto(at, cx);
    }

    fn arm_rto(&mut self, at: SimTime, cx: &mut Cx) {
        self.rto_at = Some(at);
        if self.rto_ev.is_none_or(|e| e > at) {
            cx.events.schedule(at, Event::Timer(self.id, TimerKind::Rto));
            self.rto_ev = Some(at);
        }
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
                    cx.events.schedule(cx.now + self.cbr_gap, Event::Timer(self.id, TimerKind::DelAck));
                    if self.state == State::Open {
                        self.try_send(cx);
                    }
                }
            }
        }
    }

    fn rto_expired(&mut self, cx: &mut Cx) {
        self.rto = (self.rto + self.rto).min(MAX_RTO);
        match self.state {
            State::Requesting => self.send_request(cx),
            State::Open if self.pipe > 0 => {
                self.stats.timeouts += 1;
                match &mut self.cc {
                    Controller::Ccid2(c) => c.on_timeout(),
                    Controller::Bbr(b) => b.on_timeout(),
                }
                // Forget the history: every outstanding packet is given up on.
                self.hist_base = self.next_seq;
                self.hist.clear();
                self.pipe = 0;
                self.top = [None; NUMDUPACK];
                self.update_ack_ratio();
                self.try_send(cx);
            }
            _ => {}
        }
    }

    fn app_has_data(&self) -> bool {
        match self.cfg.app {
            DccpApp::Greedy => true,
            DccpApp::Cbr(_) => self.cbr_queue > 0,
        }
    }

    fn try_send(&mut self, cx: &mut Cx) {
        if self.state != State::Open {
            return;
        }
        loop {
            if !self.app_has_data() {
                if self.pipe < self.cc.cwnd() {
                    // The application, not the controller, is the limit (BBR's app-limited mark).
                    self.app_limited_until = (self.delivered_pkts + self.pipe).max(1);
                }
                return;
            }
            if self.pipe >= self.cc.cwnd() {
                return;
            }
            let rate = self.cc.pacing_rate();
            if rate.is_some() && cx.now < self.pace_next {
                let at = self.pace_next;
                if self.pace_ev.is_none_or(|e| e > at) {
                    cx.events.schedule(at, Event::Timer(self.id, TimerKind::Pace));
                    self.pace_ev = Some(at);
                }
                return;
            }
            let wire = self.send_data(cx);
            if let Some(r) = rate {
                self.pace_next = cx.now + Dur((wire as f64 / r * 1e9).ceil() as u64);
            }
        }
    }

    fn send_data(&mut self, cx: &mut Cx) -> u32 {
        let seq = self.take_seq();
        let ptype = if self.first_data { DccpType::DataAck } else { DccpType::Data };
        let mut h = DccpHeader::new(ptype, seq);
        if self.first_data {
            h.ack = self.peer_seq;
            self.first_data = false;
            self.hist_base = seq;
        }
        h.len = self.cfg.packet_size;
        if self.ack_ratio_from.is_some() {
            h.ack_ratio = Some(self.ack_ratio.min(u16::MAX as u64) as u16);
        }
        if let DccpApp::Cbr(_) = self.cfg.app {
            self.cbr_queue -= 1;
        }
        if self.app_limited_until != 0 && self.delivered_pkts >= self.app_limited_until {
            self.app_limited_until = 0;
        }
        let wire = h.wire_bytes();
        debug_assert_eq!(seq, self.hist_base + self.hist.len() as u64);
        self.hist.push_back(SentRec {
            sent_at: cx.now,
            wire,
            delivered_bytes: self.delivered_bytes,
            delivered_pkts: self.delivered_pkts,
            app_limited: self.app_limited_until != 0,
            state: PktState::Outstanding,
        });
        self.pipe += 1;
        self.stats.pkts_sent += 1;
        self.stats.bytes_sent += h.len as u64;
        self.emit(h, cx);
        if self.rto_at.is_none() {
            let at = cx.now + self.rto;
            self.arm_rto(at, cx);
        }
        wire
    }

    fn rtt_sample(&mut self, rtt: Dur, now: SimTime) {
        self.latest_rtt = Some(rtt);
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = Dur(rtt.0 / 2);
            }
            Some(s) => {
                let err = s.0.abs_diff(rtt.0);
                self.rttvar = Dur((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(Dur((7 * s.0 + rtt.0) / 8));
            }
        }
        let s = self.srtt.expect("set above");
        self.rto = Dur(s.0 + (4 * self.rttvar.0).max(MIN_RTO_VAR.0)).min(MAX_RTO);
        if now >= self.metrics_from {
            record_delay(&mut self.stats.rtt_sum_ns, &mut self.stats.rtt_n, &mut self.rtt_hist, rtt.0);
        }
    }

    /// Ack Ratio ≤ ceil(cwnd / 2) (RFC 4341 §6.1.2).
    fn update_ack_ratio(&mut self) {
        let want = self.ack_ratio_cc.min(self.cc.cwnd().div_ceil(2)).max(1);
        if want != self.ack_ratio {
            self.ack_ratio = want;
            self.ack_ratio_from = Some(self.next_seq);
        }
    }

    fn client_packet(&mut self, h: &DccpHeader, cx: &mut Cx) {
        match (self.state, h.ptype) {
            (State::Requesting, DccpType::Response) => {
                self.state = State::Open;
                self.peer_seq = h.seq;
                self.last_ack_seq = h.seq;
                self.rto_at = None;
                let rtt = cx.now.since(self.request_sent_at);
                self.rtt_sample(rtt, cx.now);
                if let Controller::Bbr(b) = &mut self.cc {
                    b.on_handshake_rtt(rtt, cx.now);
                }
                self.try_send(cx);
            }
            (State::Open, DccpType::Ack | DccpType::DataAck) => self.on_ack(h, cx),
            _ => {}
        }
    }

    fn on_ack(&mut self, h: &DccpHeader, cx: &mut Cx) {
        self.peer_seq = self.peer_seq.max(h.seq);
        // ACK congestion control (RFC 4341 §6.1.2): a lost ACK doubles Ack Ratio.
        if h.seq > self.last_ack_seq + 1 {
            self.acks_lost += h.seq - self.last_ack_seq - 1;
            self.ack_ratio_cc = (2 * self.ack_ratio_cc).min(u16::MAX as u64);
            self.acked_since_ack_loss = 0;
        }
        self.last_ack_seq = self.last_ack_seq.max(h.seq);
        let end = self.hist_base + self.hist.len() as u64;
        let mut newly = 0u64;
        let mut newest: Option<(u64, SentRec)> = None;
        let mut seq = h.ack;
        'runs: for (st, n) in h.ackvec.runs() {
            for _ in 0..n {
                if seq < self.hist_base {
                    break 'runs;
                }
                if st != STATE_NOT_RECEIVED && seq < end {
                    let rec = &mut self.hist[(seq - self.hist_base) as usize];
                    if rec.state == PktState::Outstanding {
                        rec.state = PktState::Acked;
                        let r = *rec;
                        self.pipe -= 1;
                        newly += 1;
                        self.delivered_bytes += r.wire as u64;
                        self.delivered_pkts += 1;
                        if newest.is_none_or(|(s, _)| seq > s) {
                            newest = Some((seq, r));
                        }
                        if self.ack_ratio_from.is_some_and(|f| seq >= f) {
                            self.ack_ratio_from = None;
                        }
                        // Keep the three highest sequence numbers seen received.
                        if self.top[NUMDUPACK - 1].is_none_or(|t| seq > t) && !self.top.contains(&Some(seq)) {
                            self.top[NUMDUPACK - 1] = Some(seq);
                            self.top.sort_unstable_by(|a, b| b.cmp(a));
                        }
                    }
                }
                if seq == 0 {
                    break 'runs;
                }
                seq -= 1;
            }
        }
        // Loss detection: below the third-highest packet received, whatever is still
        // outstanding is lost.
        self.lost_buf.clear();
        if let Some(s3) = self.top[NUMDUPACK - 1] {
            let mut i = 0usize;
            while i < self.hist.len() && self.hist_base + (i as u64) < s3 {
                let rec = &mut self.hist[i];
                if rec.state == PktState::Outstanding {
                    rec.state = PktState::Lost;
                    self.pipe -= 1;
                    self.lost_buf.push(rec.sent_at);
                }
                i += 1;
            }
        }
        while self.hist.front().is_some_and(|r| r.state != PktState::Outstanding) {
            self.hist.pop_front();
            self.hist_base += 1;
        }
        let lost = self.lost_buf.len() as u64;
        self.stats.lost_detected += lost;
        let sample = newest.map(|(_, r)| {
            let rtt = cx.now.since(r.sent_at);
            (self.delivered_bytes - r.delivered_bytes, rtt, r.delivered_pkts, r.app_limited)
        });
        if let Some((_, rtt, _, _)) = sample {
            self.rtt_sample(rtt, cx.now);
        }
        let now = cx.now;
        match &mut self.cc {
            Controller::Ccid2(c) => {
                c.on_ack(newly, self.ack_ratio);
                for &t in &self.lost_buf {
                    if c.on_loss(now, t) {
                        self.stats.reductions += 1;
                    }
                }
            }
            Controller::Bbr(b) => b.on_ack(&AckSample {
                now,
                acked: newly,
                lost,
                pipe: self.pipe,
                delivered_pkts: self.delivered_pkts,
                sample,
                loss_rate: h.loss_rate_ppm.map(|p| p as f64 / 1e6),
            }),
        }
        if let Controller::Bbr(b) = &self.cc {
            if b.mode == bbr::Mode::ProbeRtt {
                // Samples taken while PROBE_RTT holds the window down must not lower the
                // bandwidth estimate (Linux marks the flow application-limited).
                self.app_limited_until = (self.delivered_pkts + self.pipe).max(1);
            }
        }
        // cwnd/(R² − R) windows of cwnd packets without a lost ACK lower R by one.
        self.acked_since_ack_loss += newly;
        let r = self.ack_ratio_cc;
        if r > self.cfg.ack_ratio as u64 {
            let w = self.cc.cwnd();
            if self.acked_since_ack_loss * (r * r - r) >= w * w {
                self.ack_ratio_cc -= 1;
                self.acked_since_ack_loss = 0;
            }
        }
        self.update_ack_ratio();
        if newly > 0 || lost > 0 {
            if self.pipe > 0 {
                let at = now + self.rto;
                self.arm_rto(at, cx);
            } else {
                self.rto_at = None;
            }
        }
        self.try_send(cx);
    }

    // ------------------------------------------------------------------ server

    fn arm_delack(&mut self, at: SimTime, cx: &mut Cx) {
        self.delack_at = Some(at);
        if self.delack_ev.is_none_or(|e| e > at) {
            cx.events.schedule(at, Event::Timer(self.id, TimerKind::DelAck));
            self.delack_ev = Some(at);
        }
    }

    fn server_packet(&mut self, pkt: &Packet, h: &DccpHeader, cx: &mut Cx) {
        match h.ptype {
            DccpType::Request => {
                if matches!(self.state, State::Listen | State::Respond) {
                    self.state = State::Respond;
                    let mut r = DccpHeader::new(DccpType::Response, self.take_seq());
                    r.ack = h.seq;
                    self.emit(r, cx);
                }
            }
            DccpType::Data | DccpType::DataAck => {
                if self.state == State::Respond {
                    self.state = State::Open;
                }
                if self.state != State::Open {
                    return;
                }
                self.receive_data(pkt, h, cx);
            }
            _ => {}
        }
    }

    fn receive_data(&mut self, pkt: &Packet, h: &DccpHeader, cx: &mut Cx) {
        let now = cx.now;
        let seq = h.seq;
        match self.gsr {
            None => {
                self.gsr = Some(seq);
                self.rx_base = seq;
                self.rx.push_back(STATE_RECEIVED);
            }
            Some(g) if seq > g => {
                for _ in g + 1..seq {
                    self.rx.push_back(STATE_NOT_RECEIVED);
                }
                self.rx.push_back(STATE_RECEIVED);
                self.gsr = Some(seq);
                while self.rx.len() as u64 > RX_HISTORY {
                    self.rx.pop_front();
                    self.rx_base += 1;
                }
            }
            Some(_) if seq >= self.rx_base => {
                let s = &mut self.rx[(seq - self.rx_base) as usize];
                if *s == STATE_RECEIVED {
                    return; // a duplicate
                }
                *s = STATE_RECEIVED;
            }
            Some(_) => {} // older than the history: counted, not reported again
        }
        self.loss.on_packet(seq, now);
        self.stats.pkts_received += 1;
        self.stats.bytes_received += h.len as u64;
        if now >= self.metrics_from {
            let owd = now.since(pkt.sent_at).0;
            record_delay(&mut self.stats.owd_sum_ns, &mut self.stats.owd_n, &mut self.owd_hist, owd);
        }
        if let Some(r) = h.ack_ratio {
            self.rx_ack_ratio = (r as u64).max(1);
        }
        self.data_since_ack += 1;
        if self.data_since_ack >= self.rx_ack_ratio {
            self.send_ack(cx);
        } else if self.delack_at.is_none() {
            self.arm_delack(now + ACK_DELAY, cx);
        }
    }

    fn send_ack(&mut self, cx: &mut Cx) {
        let Some(gsr) = self.gsr else { return };
        let mut h = DccpHeader::new(DccpType::Ack, self.take_seq());
        h.ack = gsr;
        let base = self.rx_base;
        let rx = &self.rx;
        h.ackvec = AckVector::encode(gsr, base, |s| rx[(s - base) as usize]);
        if self.cfg.cc == DccpCcKind::BbrAdaptive {
            h.loss_rate_ppm = Some((self.loss.rate() * 1e6).round() as u32);
        }
        self.data_since_ack = 0;
        self.delack_at = None;
        self.stats.acks_sent += 1;
        self.emit(h, cx);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DccpCfg;
    use crate::engine::{EventQueue, Stream};
    use crate::net::PacketPool;

    fn client() -> DccpEndpoint {
        let cfg = DccpCfg { cc: DccpCcKind::Ccid2, ack_ratio: 2, loss_window: Dur::from_secs(10), packet_size: 1000, app: DccpApp::Greedy };
        let mut c = DccpEndpoint::new(SockId(0), FlowId(0), RouteId(0), cfg, SimRng::new(1, Stream::Endpoint, 0));
        c.state = State::Open;
        if let Controller::Ccid2(k) = &mut c.cc {
            k.cwnd = 10;
        }
        c
    }

    /// An ACK from the receiver: `got(i)` says whether the i-th data packet arrived; the
    /// vector covers packets 0..=last.
    fn ack_for(c: &DccpEndpoint, first: u64, last: u64, got: impl Fn(u64) -> bool) -> DccpHeader {
        let mut h = DccpHeader::new(DccpType::Ack, 77);
        h.ack = first + last;
        h.ackvec = AckVector::encode(first + last, first, |s| if got(s - first) { STATE_RECEIVED } else { STATE_NOT_RECEIVED });
        let _ = c;
        h
    }

    #[test]
    fn loss_needs_three_later_packets_received() {
        let mut pool = PacketPool::with_capacity(64);
        let mut events = EventQueue::new();
        let mut out = Vec::new();
        let mut c = client();
        let mut cx = Cx { now: SimTime(1_000_000), pool: &mut pool, events: &mut events, out: &mut out, channel: None };
        c.try_send(&mut cx);
        assert_eq!(c.pipe, 10);
        let first = c.hist_base;
        // Packets 0..=7 reported, 4 missing: only 5, 6, 7 are above it → 4 is lost.
        // Packet 2 is missing too (also below three received ones).
        cx.now = SimTime(101_000_000);
        let h = ack_for(&c, first, 7, |i| i != 4 && i != 2);
        c.on_ack(&h, &mut cx);
        assert_eq!(c.stats.lost_detected, 2);
        // 6 received, 2 lost; 8 and 9 still outstanding — and the ACK let two more out.
        assert_eq!(c.pipe, 2 + (c.stats.pkts_sent - 10));
        assert!(c.stats.pkts_sent > 10);
        // Both losses are in one window: a single halving.
        assert_eq!(c.stats.reductions, 1);

        // A hole with only two later packets received is not (yet) a loss.
        let mut c = client();
        c.try_send(&mut cx);
        let first = c.hist_base;
        let h = ack_for(&c, first, 9, |i| i != 7);
        c.on_ack(&h, &mut cx);
        assert_eq!(c.stats.lost_detected, 0);
        // The next ACK reports packet 10 received: now three are above 7.
        let h = ack_for(&c, first, 10, |i| i != 7);
        c.on_ack(&h, &mut cx);
        assert_eq!(c.stats.lost_detected, 1);
    }

    #[test]
    fn lost_acks_double_ack_ratio_and_it_decays_back() {
        let mut pool = PacketPool::with_capacity(64);
        let mut events = EventQueue::new();
        let mut out = Vec::new();
        let mut c = client();
        if let Controller::Ccid2(k) = &mut c.cc {
            k.cwnd = 20;
            k.ssthresh = 20;
        }
        let mut cx = Cx { now: SimTime(1_000_000), pool: &mut pool, events: &mut events, out: &mut out, channel: None };
        c.try_send(&mut cx);
        let first = c.hist_base;
        cx.now = SimTime(101_000_000);
        let mut h = ack_for(&c, first, 1, |_| true);
        h.seq = c.last_ack_seq + 1;
        c.on_ack(&h, &mut cx);
        assert_eq!(c.ack_ratio, 2);
        // The next ACK arrives with two ACK sequence numbers missing: Ack Ratio doubles, and
        // the change rides on data packets until the receiver has seen one.
        let mut h = ack_for(&c, first, 3, |_| true);
        h.seq = c.last_ack_seq + 3;
        c.on_ack(&h, &mut cx);
        assert_eq!((c.acks_lost, c.ack_ratio), (2, 4));
        assert!(c.ack_ratio_from.is_some());
        // cwnd / (R² − R) windows (here 20/12 windows of 20 packets, 34 packets) later
        // without a lost ACK it is back to 3.
        let mut last = 3;
        while c.ack_ratio == 4 && last < 200 {
            last += 2;
            let mut h = ack_for(&c, first, last, |_| true);
            h.seq = c.last_ack_seq + 1;
            c.on_ack(&h, &mut cx);
        }
        assert_eq!(c.ack_ratio, 3);
        assert!((30..=40).contains(&(last - 3)), "decreased after {} packets", last - 3);
    }

    #[test]
    fn late_ack_vectors_do_not_count_twice() {
        let mut pool = PacketPool::with_capacity(64);
        let mut events = EventQueue::new();
        let mut out = Vec::new();
        let mut c = client();
        let mut cx = Cx { now: SimTime(1_000_000), pool: &mut pool, events: &mut events, out: &mut out, channel: None };
        c.try_send(&mut cx);
        let first = c.hist_base;
        cx.now = SimTime(101_000_000);
        let h = ack_for(&c, first, 3, |_| true);
        c.on_ack(&h, &mut cx);
        let d = c.delivered_pkts;
        assert_eq!(d, 4);
        c.on_ack(&h, &mut cx);
        assert_eq!(c.delivered_pkts, d);
        assert_eq!(c.stats.rtt_n, 1);
    }

    #[test]
    fn header_sizes_on_the_wire() {
        let mut d = DccpHeader::new(DccpType::Data, 1);
        d.len = 1460;
        assert_eq!(d.header_bytes(), 16);
        assert_eq!(d.wire_bytes(), 20 + 16 + 1460);
        let mut a = DccpHeader::new(DccpType::Ack, 2);
        a.ackvec = AckVector::encode(10, 9, |_| STATE_RECEIVED);
        // 16 + 8 + (2 + 1 option bytes, padded to 4).
        assert_eq!(a.header_bytes(), 28);
        a.loss_rate_ppm = Some(1);
        assert_eq!(a.header_bytes(), 16 + 8 + 12);
        let r = DccpHeader::new(DccpType::Request, 0);
        assert_eq!(r.header_bytes(), 16 + 4 + 4);
        let s = DccpHeader::new(DccpType::Response, 0);
        assert_eq!(s.header_bytes(), 16 + 8 + 4);
        // The header stays small enough to copy around.
        assert!(std::mem::size_of::<DccpHeader>() <= 96, "{}", std::mem::size_of::<DccpHeader>());
    }
}
