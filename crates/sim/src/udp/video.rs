//! Interactive video over UDP: the sender's frame clock, packetiser, pacer and feedback
//! handling, and the receiver's reassembly, frame statistics and feedback reports. The rate
//! controllers and the encoder are app/video/.
//!
//! - Packets: RTP over UDP (RFC 3550: 12-byte RTP header), a frame split into equal packets
//!   of at most one MTU; each media packet has its media sequence number (the RTP sequence
//!   of the media stream, extended), and the sender numbers every packet it sends — media,
//!   padding and retransmissions — in a transport-wide sequence (as RFC 8888 and
//!   transport-wide-cc do). The receiver finds a packet's frame from its media sequence number
//!   (the frames' first numbers and sizes are the RTP timestamp and marker facts).
//! - Pacing: the controller's pacing rate (GCC: WebRTC's 2.5 × target; SCReAM: 1.5 ×), one
//!   packet at a time; a window-based controller (SCReAM) may also hold packets back.
//! - Feedback: RFC 8888-style reports — each packet's arrival time and ECN — sent by the
//!   receiver every `feedback` interval while data arrives (RFC 8888 §3.1 leaves the interval
//!   to the controller: "once per RTT or per frame"), as a real packet on the reverse path of
//!   RTCP's size (RFC 8888 §3.1: 4-byte RTCP header, 4-byte sender SSRC, 8 bytes per source
//!   block head, 2 bytes per packet padded to 4, 4-byte report timestamp). The report's
//!   content travels beside its packet (a per-flow mailbox); a lost report packet loses its
//!   content: the sender then knows nothing of those packets (counted neither as received
//!   nor as lost).
//! - Frames: the receiver counts a frame's packets; a frame is received when all are. Frame
//!   delay = receive time − capture time. A frame is lost if it is not complete 2 s after
//!   capture at the end of the run (frames captured in the last 2 s are not judged). Rendered
//!   frames are the complete frames newer than the last rendered; a freeze is a gap between
//!   rendered frames ≥ max(3 × the mean of the last 30 gaps, that mean + `freeze`) — the
//!   W3C "Identifiers for WebRTC's Statistics API" definition of freezeCount.
//!
//! - Probing (GCC, app/video/probe.rs): the controller may ask for a probe cluster; its
//!   packets go out paced at the cluster's rate, marked with its id (as WebRTC's pacer marks
//!   them with `PacedPacketInfo::probe_cluster_id`): queued media first, then padding
//!   packets (an MTU on the wire, no media payload, so not counted as goodput; the receiver
//!   reports their arrival like any packet's).
//!
//! - Repair (`nack = true`, the default, as WebRTC negotiates it; app/video/nack.rs): the
//!   receiver puts the media sequence numbers a newer packet skipped on its NACK list and
//!   sends a generic NACK (RFC 4585 §6.2.1) at once as its own packet on the reverse path,
//!   then again every RTT (checked every 20 ms) up to 10 times; the sender resends a
//!   requested packet from its history as an RTX packet (RFC 4588: the original sequence
//!   number in 2 more payload bytes, its own transport-wide number, so congestion feedback
//!   reports the original as lost — GCC's loss estimate counts loss before repair, as
//!   WebRTC's does), ahead of new media in the pacer (libwebrtc's pacer sends
//!   retransmissions first) and paced like media, so repairs spend the pacer's rate. The
//!   receiver's jitter buffer renders frames in order: a complete frame waits for the
//!   frames before it to complete or be given up (one of their packets given up by the NACK
//!   list); a given-up frame is lost. Frame delay is still capture to completion, so a
//!   repaired frame has its real delay. The receiver learns the RTT that the sender measures
//!   (in RTP, RFC 3611 XR receiver reference time and DLRR blocks give it).
//!
//! Simplified: no FEC; a lost frame does not break the next P-frames' decoding (no key-frame
//! request); with `nack = false` frames render as they complete (newer than the last
//! rendered) and nothing is repaired. The encoder's target is not lowered by the rate spent
//! on retransmissions (WebRTC subtracts its measured protection overhead).

use crate::app::video::nack::{self, Arrival, NackList, RtxHistory};
use crate::app::video::{self, PacketResult, RateControl, VideoCfg};
use crate::engine::{Event, TimerKind};
use crate::ids::{FlowId, RouteId, SockId};
use crate::metrics::DelayHist;
use crate::net::{Ecn, Header, Packet, UdpHeader};
use crate::tcp::Cx;
use crate::units::{Dur, SimTime};
use crate::wire::{MTU_BYTES, UDP_HEADER_BYTES};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// RTP's fixed header (RFC 3550 §5.1).
const RTP_HEADER: u32 = 12;
/// The most media payload a packet carries: an MTU less IP, UDP and RTP headers.
const MAX_MEDIA: u64 = MTU_BYTES - UDP_HEADER_BYTES as u64 - RTP_HEADER as u64;
/// A data packet's header `seq`: the transport-wide number in the low 32 bits, the media
/// sequence number in the next 31, and the top bit set on a retransmission (RTX). A
/// feedback packet's `seq` is its report's number, with the top bit set on a NACK.
const SEQ_BITS: u32 = 32;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;
const MEDIA_MASK: u64 = (1 << 31) - 1;
const RTX_BIT: u64 = 1 << 63;
/// RFC 4588 §4: an RTX payload starts with the 2-byte original sequence number.
const OSN_BYTES: u32 = 2;
/// A frame still incomplete this long after capture at the end of the run is lost.
pub const LOSS_GRACE: Dur = Dur(2_000_000_000);
/// The sender drops a frame that has waited this long in its own queue: far past any use
/// in a conversation (ITU-T G.114: one-way delay above 400 ms is unacceptable for most
/// interactive use); SCReAMv2 ("Media Rate Control") allows discarding frames to drain it.
const SENDER_DISCARD: Dur = Dur(1_000_000_000);
/// The media sequence number that marks a padding packet.
const PAD_SEQ: u64 = MEDIA_MASK;
/// At most this many retransmissions wait in the sender's queue.
const RTX_QUEUE: usize = nack::MAX_LIST;

#[derive(Debug, Clone, Copy)]
struct FrameInfo {
    capture: SimTime,
    /// The media sequence number of its first packet.
    first_seq: u64,
    pkts: u32,
    got: u32,
    done: bool,
    /// The receiver gave up on one of its packets (NACK list): lost.
    given_up: bool,
    /// A retransmitted packet completed it.
    repaired: bool,
}

struct Report {
    id: u64,
    time: SimTime,
    from: u64,
    to: u64,
    /// (sequence, arrival, CE) in sequence order.
    arrivals: Vec<(u64, SimTime, bool)>,
}

/// What the two ends share: the frames' RTP header facts (capture time, packet count: the
/// receiver reads them from each packet's RTP header), the reports and NACKs in transit,
/// and the sender's RTT (what RFC 3611 XR blocks would tell the receiver).
#[derive(Default)]
struct Shared {
    frames: Vec<FrameInfo>,
    reports: VecDeque<Report>,
    spare: Vec<Vec<(u64, SimTime, bool)>>,
    nacks: VecDeque<(u64, Vec<u64>)>,
    nack_spare: Vec<Vec<u64>>,
    rtt: Option<Dur>,
}

impl Shared {
    /// The frame a media sequence number belongs to.
    fn frame_of(&self, seq: u64) -> usize {
        self.frames.partition_point(|f| f.first_seq <= seq).saturating_sub(1)
    }
}

/// One end of a video flow.
pub enum Video {
    Sender(Box<Sender>),
    Receiver(Box<Receiver>),
}

/// The two ends of a video flow from client (sender) to server (receiver).
pub fn pair(
    cfg: VideoCfg,
    c: (SockId, RouteId),
    s: (SockId, RouteId),
    flow: FlowId,
) -> (Video, Video) {
    let shared = Arc::new(Mutex::new(Shared::default()));
    let sender = Sender {
        id: c.0,
        flow,
        route: c.1,
        cfg,
        ctrl: video::build(&cfg),
        enc: video::Encoder::new(&cfg),
        shared: shared.clone(),
        queue: VecDeque::new(),
        rtx: VecDeque::with_capacity(if cfg.nack { 64 } else { 0 }),
        history: cfg.nack.then(RtxHistory::new),
        rtx_packets: 0,
        next_media: 0,
        discarded: 0,
        hist: VecDeque::new(),
        hist_base: 0,
        probe: None,
        next_seq: 0,
        next_frame: 0,
        in_flight: 0,
        next_send: SimTime::ZERO,
        pace_at: None,
        results: Vec::new(),
        last_rtt: Dur::from_millis(100),
        frames_from: SimTime::ZERO,
    };
    let receiver = Receiver {
        id: s.0,
        flow,
        route: s.1,
        cfg,
        shared,
        pending: Vec::new(),
        nack: cfg.nack.then(NackList::new),
        nack_armed: false,
        next_nack: 0,
        batch: Vec::new(),
        gave_up: Vec::new(),
        next_render: 0,
        next_from: 0,
        next_report: 0,
        fb_armed: false,
        frame_delay: crate::metrics::delay_histogram(),
        last_render: None,
        gaps: VecDeque::with_capacity(31),
        gap_sum: 0,
        freezes: 0,
        metrics_from: SimTime::ZERO,
    };
    (Video::Sender(Box::new(sender)), Video::Receiver(Box::new(receiver)))
}

impl Video {
    /// Frames captured from `from` on (the measurement window) are the ones measured.
    pub fn measured_from(mut self, from: SimTime) -> Video {
        match &mut self {
            Video::Sender(s) => s.frames_from = from,
            Video::Receiver(r) => r.metrics_from = from,
        }
        self
    }
}

pub struct Sender {
    id: SockId,
    flow: FlowId,
    route: RouteId,
    cfg: VideoCfg,
    ctrl: Box<dyn RateControl>,
    enc: video::Encoder,
    shared: Arc<Mutex<Shared>>,
    /// Packets of encoded frames waiting for the pacer: (frame, media sequence number,
    /// capture time, payload bytes).
    queue: VecDeque<(u64, u64, SimTime, u32)>,
    /// Retransmissions waiting for the pacer (sent first): (frame, media sequence, payload).
    rtx: VecDeque<(u64, u64, u32)>,
    /// Sent media packets kept for retransmission (`nack = true`).
    history: Option<RtxHistory>,
    /// Retransmissions sent from `frames_from` on.
    pub rtx_packets: u64,
    next_media: u64,
    /// Frames the sender dropped from its queue.
    pub discarded: u64,
    /// Sent packets not yet reported, from sequence `hist_base`: (send time, wire bytes,
    /// probe cluster).
    hist: VecDeque<(SimTime, u32, Option<u32>)>,
    /// The probe cluster being sent: (cluster, packets sent, wire bytes sent).
    probe: Option<(video::ProbeCluster, u32, u32)>,
    hist_base: u64,
    next_seq: u64,
    next_frame: u64,
    in_flight: u64,
    next_send: SimTime,
    /// The pending pace timer's time.
    pace_at: Option<SimTime>,
    results: Vec<PacketResult>,
    last_rtt: Dur,
    /// Frames captured from here on are judged (the measurement window's start).
    pub frames_from: SimTime,
}

impl Sender {
    /// The flow starts: the first frame now, then one per frame interval.
    pub fn start(&mut self, cx: &mut Cx, stats: &mut super::UdpStats) {
        self.capture(cx, stats);
    }

    pub fn on_timer(&mut self, kind: TimerKind, cx: &mut Cx, stats: &mut super::UdpStats) {
        match kind {
            // The media clock uses the DelAck slot (UDP has no ACKs to delay).
            TimerKind::DelAck => self.capture(cx, stats),
            TimerKind::Pace if self.pace_at == Some(cx.now) => {
                self.pace_at = None;
                self.try_send(cx, stats);
            }
            _ => {}
        }
    }

    fn capture(&mut self, cx: &mut Cx, stats: &mut super::UdpStats) {
        let now = cx.now;
        let waited = self.queue.front().map_or(Dur::ZERO, |q| now.since(q.2));
        self.ctrl.on_frame(waited, self.cfg.frame_interval());
        let (bytes, _iframe) = self.enc.next_frame(now, self.ctrl.target_bps());
        let n = bytes.div_ceil(MAX_MEDIA).max(1);
        let frame = self.next_frame;
        self.next_frame += 1;
        let first_seq = self.next_media;
        // Equal packets (the last may be a byte short), each with its RTP header.
        for i in 0..n {
            let share = bytes / n + u64::from(i < bytes % n);
            self.queue.push_back((frame, self.next_media, now, share as u32 + RTP_HEADER));
            self.next_media += 1;
        }
        self.shared.lock().unwrap().frames.push(FrameInfo {
            capture: now,
            first_seq,
            pkts: n as u32,
            got: 0,
            done: false,
            given_up: false,
            repaired: false,
        });
        cx.events
            .schedule(now + self.cfg.frame_interval(), Event::Timer(self.id, TimerKind::DelAck));
        self.try_send(cx, stats);
    }

    fn try_send(&mut self, cx: &mut Cx, stats: &mut super::UdpStats) {
        let now = cx.now;
        // Frames that waited too long leave the queue whole (a partly sent one stays).
        while let Some(&(frame, _, at, _)) = self.queue.front() {
            if now.since(at) < SENDER_DISCARD {
                break;
            }
            while self.queue.front().is_some_and(|q| q.0 == frame) {
                self.queue.pop_front();
            }
            self.discarded += 1;
        }
        if self.probe.is_none() {
            self.probe = self.ctrl.take_probe(now).map(|c| (c, 0, 0));
        }
        loop {
            // Retransmissions first, then media: (frame, media sequence, payload, is RTX).
            let media = match self.rtx.front() {
                Some(&(frame, seq, len)) => Some((frame, seq, len + OSN_BYTES, true)),
                None => self.queue.front().map(|&(frame, seq, _, len)| (frame, seq, len, false)),
            };
            if media.is_none() && self.probe.is_none() {
                return;
            }
            if now < self.next_send {
                if self.pace_at.is_none_or(|t| t > self.next_send) {
                    self.pace_at = Some(self.next_send);
                    cx.events.schedule(self.next_send, Event::Timer(self.id, TimerKind::Pace));
                }
                return;
            }
            // Media, or (a probe with no media queued) a padding packet of an MTU.
            let (mseq, len, wire, rtx) = match media {
                Some((_, mseq, len, rtx)) => (mseq, len, len + UDP_HEADER_BYTES, rtx),
                None => (PAD_SEQ, 0, MTU_BYTES as u32, false),
            };
            if self.probe.is_none() && !self.ctrl.may_send(self.in_flight, wire) {
                return; // the next report reopens the window
            }
            if let Some((frame, mseq, len, rtx)) = media {
                if rtx {
                    self.rtx.pop_front();
                    if now >= self.frames_from {
                        self.rtx_packets += 1;
                    }
                } else {
                    self.queue.pop_front();
                }
                if let Some(h) = self.history.as_mut() {
                    h.sent(mseq, frame, len - if rtx { OSN_BYTES } else { 0 }, now);
                }
            }
            let seq = self.next_seq & SEQ_MASK;
            self.next_seq += 1;
            let rtx_bit = if rtx { RTX_BIT } else { 0 };
            let p = Packet {
                flow: self.flow,
                route: self.route,
                hop: 0,
                wire_bytes: wire,
                ecn: if self.ctrl.ect1() { Ecn::Ect1 } else { Ecn::NotEct },
                sent_at: now,
                conn: 0,
                pure_ack: None,
                hdr: Header::Udp(UdpHeader {
                    seq: rtx_bit | mseq << SEQ_BITS | seq,
                    len,
                    echo_of: None,
                }),
            };
            cx.out.push(cx.pool.alloc(p));
            stats.pkts_sent += 1;
            stats.bytes_sent += len as u64;
            let cluster = self.probe.map(|p| p.0.id);
            self.hist.push_back((now, wire, cluster));
            self.in_flight += wire as u64;
            let rate = match self.probe.as_mut() {
                Some((c, n, b)) => {
                    *n += 1;
                    *b += wire;
                    let rate = c.rate_bps;
                    if *n >= c.min_packets && *b >= c.min_bytes {
                        // This cluster is done: the next one (if any) follows at once.
                        self.probe = self.ctrl.take_probe(now).map(|c| (c, 0, 0));
                    }
                    rate
                }
                None => self.ctrl.pacing_bps(),
            };
            let gap = (wire as f64 * 8.0 / rate.max(1.0) * 1e9).ceil() as u64;
            self.next_send = now + Dur(gap);
        }
    }

    /// A feedback packet arrived: read its report, tell the controller, send what it allows.
    pub fn on_feedback(&mut self, pkt: &Packet, cx: &mut Cx, stats: &mut super::UdpStats) {
        let Header::Udp(h) = pkt.hdr else { return };
        if h.seq & RTX_BIT != 0 {
            return self.on_nack(h.seq & !RTX_BIT, cx, stats);
        }
        let now = cx.now;
        let shared = self.shared.clone();
        let mut sh = shared.lock().unwrap();
        // Reports older than this one were lost on the way: their content with them.
        while sh.reports.front().is_some_and(|r| r.id < h.seq) {
            let r = sh.reports.pop_front().unwrap();
            sh.spare.push(r.arrivals);
        }
        let Some(r) = sh.reports.pop_front().filter(|r| r.id == h.seq) else { return };
        // Packets before the report's range were in a lost report: forget them.
        while self.hist_base < r.from && !self.hist.is_empty() {
            let (_, b, _) = self.hist.pop_front().unwrap();
            self.in_flight -= b as u64;
            self.hist_base += 1;
        }
        self.results.clear();
        let mut arr = r.arrivals.iter().peekable();
        let mut rtt = None;
        while self.hist_base <= r.to {
            let Some((sent, bytes, cluster)) = self.hist.pop_front() else { break };
            let seq = self.hist_base;
            self.hist_base += 1;
            self.in_flight -= bytes as u64;
            while arr.peek().is_some_and(|a| a.0 < seq) {
                arr.next();
            }
            let got = arr.peek().filter(|a| a.0 == seq).map(|a| (a.1, a.2));
            if let Some((at, _)) = got {
                // The round trip less the time the report waited at the receiver.
                rtt = Some(now.since(sent).0.saturating_sub(r.time.since(at).0));
            }
            self.results.push(PacketResult {
                seq,
                sent,
                bytes,
                arrival: got.map(|g| g.0),
                ce: got.is_some_and(|g| g.1),
                cluster,
            });
        }
        sh.spare.push(r.arrivals);
        if let Some(r) = rtt {
            self.last_rtt = Dur(r.max(1));
            sh.rtt = Some(self.last_rtt);
        }
        drop(sh);
        self.ctrl.on_feedback(now, &self.results, self.last_rtt, self.in_flight);
        self.try_send(cx, stats);
    }

    /// A NACK packet arrived: queue a retransmission of each requested packet the history
    /// may resend (held, not sent within the last RTT, not already queued).
    fn on_nack(&mut self, id: u64, cx: &mut Cx, stats: &mut super::UdpStats) {
        let now = cx.now;
        let shared = self.shared.clone();
        let mut sh = shared.lock().unwrap();
        // NACKs older than this one were lost on the way.
        while sh.nacks.front().is_some_and(|n| n.0 < id) {
            let (_, v) = sh.nacks.pop_front().unwrap();
            sh.nack_spare.push(v);
        }
        let Some((_, seqs)) = sh.nacks.pop_front().filter(|n| n.0 == id) else { return };
        if let Some(h) = self.history.as_ref() {
            for &seq in &seqs {
                let Some((frame, len)) = h.request(seq, now, self.last_rtt) else { continue };
                if self.rtx.len() < RTX_QUEUE && !self.rtx.iter().any(|r| r.1 == seq) {
                    self.rtx.push_back((frame, seq, len));
                }
            }
        }
        sh.nack_spare.push(seqs);
        drop(sh);
        self.try_send(cx, stats);
    }

    /// For time series: the target (Mbit/s), the window, bytes in flight, the state.
    pub fn target_mbps(&self) -> f64 {
        self.ctrl.target_bps() / 1e6
    }
    pub fn window(&self) -> u64 {
        self.ctrl.window()
    }
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }
    pub fn state(&self) -> &'static str {
        self.ctrl.state()
    }
}

pub struct Receiver {
    id: SockId,
    flow: FlowId,
    route: RouteId,
    cfg: VideoCfg,
    shared: Arc<Mutex<Shared>>,
    pending: Vec<(u64, SimTime, bool)>,
    /// The NACK list (`nack = true`) and its process timer.
    nack: Option<NackList>,
    nack_armed: bool,
    next_nack: u64,
    batch: Vec<u64>,
    gave_up: Vec<u64>,
    /// The jitter buffer (`nack = true`): the next frame to render, in order.
    next_render: usize,
    next_from: u64,
    next_report: u64,
    fb_armed: bool,
    pub frame_delay: DelayHist,
    last_render: Option<(u64, SimTime)>,
    gaps: VecDeque<u64>,
    gap_sum: u64,
    pub freezes: u64,
    pub metrics_from: SimTime,
}

/// A video flow's frame statistics over the window.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameStats {
    /// Frames captured in the window and judged (≥ LOSS_GRACE before the end).
    pub judged: u64,
    pub lost: u64,
    /// Judged frames completed by a retransmitted packet.
    pub repaired: u64,
}

impl Receiver {
    /// A media packet arrived: the payload bytes it delivers that were not delivered before
    /// (0 for padding, a duplicate or a packet given up on; an RTX packet's less its OSN).
    pub fn on_data(&mut self, pkt: &Packet, cx: &mut Cx) -> u32 {
        let Header::Udp(h) = pkt.hdr else { return 0 };
        let now = cx.now;
        let mseq = (h.seq >> SEQ_BITS) & MEDIA_MASK;
        let rtx = h.seq & RTX_BIT != 0;
        self.pending.push((h.seq & SEQ_MASK, now, pkt.ecn == Ecn::Ce));
        if !self.fb_armed {
            self.fb_armed = true;
            cx.events.schedule(now + self.cfg.feedback, Event::Timer(self.id, TimerKind::DelAck));
        }
        if mseq == PAD_SEQ {
            return 0; // padding: reported, belongs to no frame
        }
        let arrival = match self.nack.as_mut() {
            Some(n) => n.on_packet(mseq, &mut self.gave_up),
            None => Arrival::New,
        };
        let mut delivered = 0;
        if arrival != Arrival::Duplicate {
            delivered = h.len - if rtx { OSN_BYTES } else { 0 };
            let done = {
                let mut sh = self.shared.lock().unwrap();
                let i = sh.frame_of(mseq);
                let f = &mut sh.frames[i];
                f.got += 1;
                f.repaired |= rtx;
                (f.got == f.pkts && !f.done && !f.given_up).then(|| {
                    f.done = true;
                    (i, f.capture)
                })
            };
            if let Some((i, capture)) = done {
                self.frame_done(i as u64, capture, now);
            }
        }
        if self.nack.is_some() {
            // libwebrtc NACKs a new gap at once; the process timer repeats and gives up.
            self.nack_send(cx, true);
            self.settle(now);
        }
        delivered
    }

    /// NACK what is due (`fresh`: only what was never requested), mark the frames of what the
    /// list gave up, and keep the process timer running while anything is listed.
    fn nack_send(&mut self, cx: &mut Cx, fresh: bool) {
        let Some(n) = self.nack.as_mut() else { return };
        let now = cx.now;
        let mut sh = self.shared.lock().unwrap();
        let rtt = sh.rtt.unwrap_or(nack::DEFAULT_RTT);
        self.batch.clear();
        if fresh {
            n.due_fresh(now, &mut self.batch);
        } else {
            n.due(now, rtt, &mut self.batch, &mut self.gave_up);
        }
        for &seq in &self.gave_up {
            let i = sh.frame_of(seq);
            let f = &mut sh.frames[i];
            f.given_up |= !f.done;
        }
        self.gave_up.clear();
        if !self.batch.is_empty() {
            let id = self.next_nack;
            self.next_nack += 1;
            let mut seqs = sh.nack_spare.pop().unwrap_or_default();
            seqs.clear();
            seqs.extend_from_slice(&self.batch);
            sh.nacks.push_back((id, seqs));
            let p = Packet {
                flow: self.flow,
                route: self.route,
                hop: 0,
                wire_bytes: nack::nack_bytes(&self.batch) + UDP_HEADER_BYTES,
                ecn: Ecn::NotEct,
                sent_at: now,
                conn: 0,
                pure_ack: None,
                hdr: Header::Udp(UdpHeader { seq: RTX_BIT | id, len: 0, echo_of: None }),
            };
            cx.out.push(cx.pool.alloc(p));
        }
        drop(sh);
        if !self.nack_armed && !n.is_empty() {
            self.nack_armed = true;
            cx.events.schedule(now + nack::PROCESS, Event::Timer(self.id, TimerKind::Pace));
        }
    }

    /// The jitter buffer (`nack = true`): render, in order, each frame that is complete once
    /// every frame before it is complete or given up.
    fn settle(&mut self, now: SimTime) {
        loop {
            let next = {
                let sh = self.shared.lock().unwrap();
                sh.frames.get(self.next_render).map(|f| (f.done, f.given_up))
            };
            match next {
                Some((true, _)) => self.render(self.next_render as u64, now),
                Some((false, true)) => {}
                _ => return,
            }
            self.next_render += 1;
        }
    }

    fn frame_done(&mut self, frame: u64, capture: SimTime, now: SimTime) {
        if capture >= self.metrics_from {
            self.frame_delay.record(now.since(capture).0.clamp(1_000, 3_600_000_000_000));
        }
        // With repair the jitter buffer renders in order (settle); without, a frame renders
        // when complete.
        if self.nack.is_none() {
            self.render(frame, now);
        }
    }

    fn render(&mut self, frame: u64, now: SimTime) {
        // Only a frame newer than the last rendered one shows.
        if self.last_render.is_some_and(|(f, _)| f >= frame) {
            return;
        }
        if let Some((_, t)) = self.last_render {
            let gap = now.since(t).0;
            if let Some(mean) =
                (!self.gaps.is_empty()).then(|| self.gap_sum / self.gaps.len() as u64)
            {
                let limit = (3 * mean).max(mean + self.cfg.freeze.0);
                if gap >= limit && now >= self.metrics_from {
                    self.freezes += 1;
                }
            }
            self.gaps.push_back(gap);
            self.gap_sum += gap;
            if self.gaps.len() > 30 {
                self.gap_sum -= self.gaps.pop_front().unwrap();
            }
        }
        self.last_render = Some((frame, now));
    }

    /// The feedback timer: report what arrived since the last report.
    pub fn on_timer(&mut self, kind: TimerKind, cx: &mut Cx) {
        if kind == TimerKind::Pace {
            // The NACK process: requests again, gives up, renders what that unblocks.
            self.nack_armed = false;
            self.nack_send(cx, false);
            return self.settle(cx.now);
        }
        if kind != TimerKind::DelAck {
            return;
        }
        self.fb_armed = false;
        if self.pending.is_empty() {
            return;
        }
        self.pending.sort_unstable_by_key(|a| a.0);
        let to = self.pending.last().unwrap().0.max(self.next_from);
        let from = self.next_from;
        self.next_from = to + 1;
        let n = to + 1 - from;
        let id = self.next_report;
        self.next_report += 1;
        {
            let mut sh = self.shared.lock().unwrap();
            let mut arrivals = sh.spare.pop().unwrap_or_default();
            arrivals.clear();
            arrivals.extend(self.pending.drain(..).filter(|a| a.0 >= from));
            sh.reports.push_back(Report { id, time: cx.now, from, to, arrivals });
        }
        self.pending.clear();
        // RFC 8888 §3.1: RTCP header 4 + SSRC 4 + block head 8 + 2 per packet (padded to
        // 4) + report timestamp 4.
        let rtcp = 20 + (2 * n as u32).div_ceil(4) * 4;
        let p = Packet {
            flow: self.flow,
            route: self.route,
            hop: 0,
            wire_bytes: rtcp + UDP_HEADER_BYTES,
            ecn: Ecn::NotEct,
            sent_at: cx.now,
            conn: 0,
            pure_ack: None,
            // Feedback carries no media: payload 0 so that its loss is not a data loss.
            hdr: Header::Udp(UdpHeader { seq: id, len: 0, echo_of: None }),
        };
        cx.out.push(cx.pool.alloc(p));
    }

    /// Frames captured in [from, end − LOSS_GRACE] and how many never completed.
    pub fn frame_stats(&self, from: SimTime, end: SimTime) -> FrameStats {
        let sh = self.shared.lock().unwrap();
        let last = SimTime(end.0.saturating_sub(LOSS_GRACE.0));
        let mut s = FrameStats::default();
        for f in sh.frames.iter().filter(|f| f.capture >= from && f.capture <= last) {
            s.judged += 1;
            s.lost += u64::from(!f.done);
            s.repaired += u64::from(f.done && f.repaired);
        }
        s
    }
}
