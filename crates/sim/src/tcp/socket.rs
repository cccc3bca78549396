//! One TCP endpoint (both directions of the byte stream).
//!
//! Sequence numbers are 64-bit and start at 0 (the SYN); data starts at 1. All windows are in
//! bytes. Timers are lazily cancelled: the endpoint keeps each timer's deadline and at most one
//! pending event per timer, so re-arming the RTO on every ACK costs no heap operation.

use super::rate::RateSampler;
use super::rcvbuf::RcvTune;
use super::reassembly::Reassembly;
use super::recovery::{LossState, LossStats, XmitTimer, MAX_QUICKACKS};
use super::rtt::RttEstimator;
use super::rwnd::RwndState;
use super::scoreboard::{self, Scoreboard, Seg, EVER_RETRANS, SACKED};
use super::SNDBUF_UNLIMITED;
use crate::cc::{AckSample, CaState, CongestionControl, CongestionEvent, CongestionKind, Window};
use crate::engine::{Event, EventQueue, TimerKind};
use crate::ids::{FlowId, PacketId, RouteId, SockId};
use crate::metrics::record_delay;
use crate::metrics::DelayHist;
use crate::net::{Ecn, Header, Packet, PacketPool, SackBlocks, SynOptions, TcpFlags, TcpHeader};
use crate::tcp::{Recovery, TcpCfg};
use crate::units::{Dur, Rate, SimTime};
use crate::wire::{EcnMode, TCP_HEADER_BYTES, TCP_TS_OPTION_BYTES};
use std::sync::Arc;

mod close;
mod cork;
mod ecn;
mod info;
mod lossrec;
pub use close::SockError;
pub use info::TcpInfo;
use lossrec::Delivered;

const DUPTHRESH: u64 = 3;
/// Linux's pacing ratios for controllers without their own rate (tcp_update_pacing_rate).
const PACING_SS_RATIO: f64 = 2.0;
const PACING_CA_RATIO: f64 = 1.2;
/// The largest TSO skb (Linux's `sk_gso_max_size`, 64 KB).
const TSO_MAX_BYTES: u64 = 65_536;
/// Linux leaves a connection's first data segments unpaced (`data_segs_out` < 10).
const UNPACED_SEGMENTS: u64 = 10;
/// Linux defers a TSO skb only while the last one left less than 1 ms ago.
const TSO_DEFER_MAX: Dur = Dur::from_millis(1);

/// What a socket needs from the world while it runs.
pub struct Cx<'a> {
    pub now: SimTime,
    pub pool: &'a mut PacketPool,
    pub events: &'a mut EventQueue,
    /// Packets the socket sent, to be injected on its route in order.
    pub out: &'a mut Vec<PacketId>,
    /// The capacity of this endpoint's last-hop link, for receive-window policies that read
    /// it (the world fills it in only for those).
    pub channel: Option<Rate>,
}

/// What an event about to reach a socket does there (which of its lines it reads: see
/// [`TcpSocket::lines_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// A data segment delivered to a receiver.
    Receive,
    /// A pure ACK delivered to a sender.
    Ack,
    /// One of the socket's timers fires.
    Timer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpState {
    Closed,
    Listen,
    SynSent,
    SynRcvd,
    Established,
    // Teardown (RFC 9293 §3.3.2; tcp/socket/close.rs).
    FinWait1,
    FinWait2,
    Closing,
    TimeWait,
    CloseWait,
    LastAck,
}

/// Counters a socket keeps as it runs (the world snapshots them at the end of warm-up).
/// Laid out in declaration order (`repr(C)`): the two counters a receiver updates first.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct SockStats {
    pub pkts_sent: u64,
    /// Unique payload bytes delivered in order to the application (receiving side).
    pub bytes_delivered: u64,
    pub data_pkts_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    pub bytes_retx: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub recoveries: u64,
    /// Window reductions in answer to ECN echoes.
    pub ecn_reductions: u64,
    pub rtt_sum_ns: f64,
    pub rtt_n: u64,
}

/// One timer: [`SimTime::MAX`] stands for "none" in both fields (no deadline is ever that
/// late), so that the three slots take 48 bytes of a receiver's lines instead of 96.
#[derive(Debug, Clone, Copy)]
struct TimerSlot {
    deadline: SimTime,
    /// Time of the one pending heap event for this timer, if any.
    scheduled: SimTime,
}

impl Default for TimerSlot {
    fn default() -> Self {
        TimerSlot { deadline: SimTime::MAX, scheduled: SimTime::MAX }
    }
}

impl TimerSlot {
    fn deadline(&self) -> Option<SimTime> {
        (self.deadline != SimTime::MAX).then_some(self.deadline)
    }
}

#[cfg(test)]
thread_local! {
    /// Tests run the ACK processing and the send loop in full where a quiet socket's
    /// shortcuts (`acks_nothing`, `nothing_to_send`) would skip them.
    pub(crate) static NO_SHORTCUTS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Laid out in declaration order (`repr(C)`), by use: first what every segment received
/// touches, whichever half it is for (the receiver's delivery path, a few lines), then the
/// send half's state that an ACK works through, then what is read rarely (the handshake,
/// counters for the summary, the RTT histogram). At thousands of flows each line a segment
/// touches is a cache miss, and the compiler's own order would spread a receiver's few
/// fields over all the socket's lines. Aligned to a cache line, so that the lines named here
/// (and prefetched: [`TcpSocket::lines_for`]) are the machine's lines.
#[repr(C, align(64))]
pub struct TcpSocket {
    // ----- Every segment.
    pub state: TcpState,
    pub ca: CaState,
    // Negotiated on the handshake.
    sack_ok: bool,
    ts_ok: bool,
    /// Both sides sent the window-scale option (RFC 7323 §2.2).
    wscale_ok: bool,
    /// The peer's window-scale shift (applied to windows it advertises).
    snd_wscale: u8,
    /// Our shift (applied to windows we advertise).
    rcv_wscale: u8,
    cwnd_limited: bool,
    syn_retransmitted: bool,
    /// `cwnd_limited = "linux"`: Linux's is_cwnd_limited, which a cwnd-limited send pass sets
    /// for the window it sent (until SND.UNA passes `max_out_seq`).
    cwnd_limited_win: bool,
    /// Connection number within the flow (stamped on packets; older ones are ignored).
    pub conn: u16,
    pub id: SockId,
    pub flow: FlowId,
    route: RouteId,
    /// Partial ACKs seen in the current NewReno recovery (RFC 6582's timer rule).
    partial_acks: u32,
    unacked_segs: u32,
    mss: u64,
    una: u64,
    nxt: u64,
    /// One past the last byte the application has written (into the send buffer).
    app_end: u64,
    /// Bytes the application still has to write: they enter the send buffer (`tcp.sndbuf`)
    /// as it drains (`fill_sndbuf`).
    app_pending: u64,
    snd_wnd: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    dupacks: u64,
    // Receive half.
    rcv_nxt: u64,
    ts_recent: u64,
    last_ack_sent: u64,
    rcv_buf: u64,
    /// The right edge of the window last advertised (Linux never moves it left), and that
    /// window's size (Linux's rcv_wnd).
    rcv_edge: u64,
    rcv_wnd_adv: u64,
    next_send_at: SimTime,
    last_send_at: SimTime,
    pub stats: SockStats,
    pub win: Window,
    /// Bytes the application expects (file transfers): completion is recorded when reached.
    pub expect: Option<u64>,
    /// (Beside `expect`: the `Endpoint` enum keeps its variant in the largest niche of the
    /// socket, the tag of one of these two options, and every event for the socket reads it.)
    pub completed_at: Option<SimTime>,
    timers: [TimerSlot; 3],
    /// ECN negotiation, feedback and counters (tcp/socket/ecn.rs).
    ecn: ecn::EcnState,
    /// Shared by the sockets of flows configured alike (the world builder interns it): one
    /// pointer in the socket's lines instead of a 120-byte copy, and one copy in cache for
    /// thousands of flows. A socket that changes its own (`request_ecn`, TCP_QUICKACK) copies
    /// it first (`Arc::make_mut`).
    cfg: Arc<TcpCfg>,
    ooo: Reassembly,
    rwnd: RwndState,
    /// Receive-buffer autotuning (`tcp.rcvbuf_auto`).
    tune: RcvTune,
    /// Its first 16 bytes are a receiver's too (`mark_app_limited`).
    rate: RateSampler,
    /// PRR, undo, F-RTO, RACK-TLP, D-SACK and quick-ACK state (tcp/recovery); a receiver
    /// reads its first line, the last of the socket it touches.
    lr: LossState,
    sb: Scoreboard,

    // ----- The send half's ACK processing.
    cc: Box<dyn CongestionControl>,
    pub rtt: RttEstimator,
    recovery_point: u64,
    /// The largest flight (SND.NXT − SND.UNA after a send) since SND.UNA last passed
    /// `max_out_seq` (Linux's max_packets_out / cwnd_usage_seq; `cwnd_limited = "linux"`).
    max_out: u64,
    max_out_seq: u64,
    /// RTT samples before this instant are not recorded (warm-up).
    pub metrics_from: SimTime,
    pub rtt_hist: DelayHist,

    // ----- Rarely.
    iss: u64,
    irs: u64,
    syn_sent_at: SimTime,
    pub lstats: LossStats,
    /// Teardown: our FIN, the peer's, resets (tcp/socket/close.rs).
    close: close::CloseState,
    /// Linux's reordering degree in segments (tp->reordering, from tcp_reordering = 3) and
    /// the reordering events seen (tp->reord_seen): reported in TCP_INFO only.
    reordering: u32,
    reord_seen: u32,
    /// Bytes of the fast retransmission sent on entering recovery, before PRR set the
    /// window for the same ACK (`prr_entry = "linux"`).
    prr_forced: u64,
    /// TCP_CORK / MSG_MORE (tcp/socket/cork.rs).
    cork: cork::Cork,
}

impl TcpSocket {
    /// The cache lines (a bit each) a data segment's delivery to a one-way flow's receiver
    /// touches: everything up to the loss state's first line (see the layout's notes; the
    /// ACK processing and the send loop take their shortcuts, `acks_nothing` and
    /// `nothing_to_send`).
    pub const RECEIVE_LINES: u64 =
        crate::engine::line_span(0, std::mem::offset_of!(TcpSocket, lr) + 64);

    /// The lines a timer event reads first: the first (the socket's id, the `Endpoint` tag's
    /// neighbours) and the timers'. Most timer events find their timer moved or cleared and
    /// read nothing else.
    pub const TIMER_LINES: u64 = 1 | crate::engine::line_span(
        std::mem::offset_of!(TcpSocket, timers),
        std::mem::size_of::<[TimerSlot; 3]>(),
    );

    /// The socket's cache lines (bit i: bytes 64·i to 64·i + 63) that an event of kind `t`
    /// reads, for the event loop to prefetch ahead of it: a data segment's receiver about half
    /// of the socket, a pure ACK's sender nearly all of it, a timer its first and its timers'.
    #[inline]
    pub const fn lines_for(t: Touch) -> u64 {
        match t {
            Touch::Receive => Self::RECEIVE_LINES,
            Touch::Ack => u64::MAX,
            Touch::Timer => Self::TIMER_LINES,
        }
    }

    /// The route this socket sends on.
    #[inline]
    pub fn route(&self) -> RouteId {
        self.route
    }

    /// Starts loading what an ACK's processing reads outside the socket: the congestion
    /// controller's state, the scoreboard's two oldest segments and the slot its next segment
    /// goes to (a hint; it reads the socket, whose lines must be on their way already).
    #[inline]
    pub fn prefetch_ack_state(&self) {
        crate::engine::prefetch(&*self.cc, 4);
        self.sb.prefetch_ends();
    }

    pub fn new(
        id: SockId,
        flow: FlowId,
        route: RouteId,
        cfg: &Arc<TcpCfg>,
        cc: Box<dyn CongestionControl>,
    ) -> TcpSocket {
        let mss = cfg.mss as u64;
        let rcv_wscale = (0..=14u8).find(|s| cfg.rcvbuf >> s <= 65_535).unwrap_or(14);
        TcpSocket {
            id,
            flow,
            conn: 0,
            route,
            cfg: Arc::clone(cfg),
            state: TcpState::Closed,
            sack_ok: false,
            ts_ok: false,
            wscale_ok: false,
            ecn: ecn::EcnState::new(),
            snd_wscale: 0,
            rcv_wscale,
            mss,
            iss: 0,
            una: 0,
            nxt: 0,
            app_end: 1,
            app_pending: 0,
            snd_wnd: mss,
            snd_wl1: 0,
            snd_wl2: 0,
            sb: Scoreboard::new(),
            win: Window { cwnd: cfg.init_cwnd as u64 * mss, ssthresh: u64::MAX, mss },
            cc,
            ca: CaState::Open,
            recovery_point: 0,
            max_out: 0,
            max_out_seq: 0,
            dupacks: 0,
            partial_acks: 0,
            rtt: RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max),
            rate: RateSampler::default(),
            syn_sent_at: SimTime::ZERO,
            syn_retransmitted: false,
            lr: LossState::default(),
            lstats: LossStats::default(),
            next_send_at: SimTime::ZERO,
            last_send_at: SimTime::ZERO,
            cwnd_limited: false,
            cwnd_limited_win: false,
            rcv_nxt: 0,
            irs: 0,
            ooo: Reassembly::default(),
            unacked_segs: 0,
            ts_recent: 0,
            last_ack_sent: 0,
            rcv_buf: cfg.rcvbuf,
            rwnd: RwndState::default(),
            tune: RcvTune::new(
                cfg.mech.rcvbuf_auto,
                cfg.window_max.min(cfg.rcvbuf),
                mss + if cfg.timestamps { TCP_TS_OPTION_BYTES } else { 0 },
                mss,
            ),
            rcv_edge: 0,
            rcv_wnd_adv: 0,
            expect: None,
            completed_at: None,
            timers: [TimerSlot::default(); 3],
            stats: SockStats::default(),
            rtt_hist: crate::metrics::delay_histogram(),
            metrics_from: SimTime::ZERO,
            close: close::CloseState::default(),
            cork: cork::Cork::new(cfg.nagle),
            reordering: 3,
            reord_seen: 0,
            prr_forced: 0,
        }
    }

    // ----- application interface -------------------------------------------------------

    /// Sets how this endpoint sizes the window it advertises.
    pub fn set_rwnd_policy(&mut self, policy: &crate::tcp::rwnd::RwndPolicy) {
        self.rwnd = RwndState::new(policy, self.cfg.mss as u64);
    }

    /// Does this endpoint's receive-window policy read the last-hop capacity?
    pub fn needs_channel(&self) -> bool {
        self.rwnd.needs_channel()
    }

    /// The window this endpoint advertises now, in bytes.
    pub fn adv_window(&self) -> u64 {
        match self.rwnd.window() {
            None if self.tune.on => {
                // Linux's tcp_select_window: the autotuned window, never shrinking the edge
                // already offered.
                let w = self.tune.window(self.ooo.bytes(), 1 << self.rcv_wscale);
                w.max(self.rcv_edge.saturating_sub(self.rcv_nxt)).min(self.rcv_buf)
            }
            None => self.rcv_buf,
            Some(w) => w.clamp(self.mss, self.rcv_buf),
        }
    }

    /// Passive open.
    pub fn listen(&mut self) {
        self.state = TcpState::Listen;
    }

    /// Active open: send the SYN.
    pub fn connect(&mut self, cx: &mut Cx) {
        self.state = TcpState::SynSent;
        self.una = self.iss;
        self.nxt = self.iss + 1;
        self.send_syn(false, cx);
    }

    /// The application writes `bytes` more (u64::MAX/2 for an unlimited source): into the
    /// send buffer as far as it takes them, the rest as it drains.
    pub fn app_write(&mut self, bytes: u64, cx: &mut Cx) {
        if self.cfg.sndbuf == SNDBUF_UNLIMITED {
            self.app_end = self.app_end.saturating_add(bytes);
            self.note_write();
        } else {
            self.app_pending = self.app_pending.saturating_add(bytes);
            self.fill_sndbuf();
        }
        if self.state.sends() {
            self.try_send(cx);
        }
    }

    /// The application's writes while the send buffer is writable, as an application that
    /// waits for poll's POLLOUT and then writes `tcp.write_size` bytes without blocking (the
    /// emulator's senders, iperf-like tools): Linux reports a socket writable while its free
    /// space is at least half of what it holds (`sk_stream_is_writeable`: at most 2/3 of
    /// `sk_sndbuf` queued), and a write copies until the buffer is full. Each write first runs
    /// Linux's `tcp_rate_check_app_limited` (tcp_sendmsg_locked): with less than a segment
    /// unsent, the window not full and every lost segment retransmitted, delivery-rate
    /// samples until what is in flight is delivered are app-limited. Memory is counted in
    /// payload bytes written and not yet acknowledged (Linux counts skb truesize: ~2.6 % more
    /// on the emulator's TSO skbs, left out). Returns whether anything was written.
    fn fill_sndbuf(&mut self) -> bool {
        let mut wrote = false;
        while self.app_pending > 0 {
            let queued = self.unacked_bytes();
            let free = self.cfg.sndbuf.saturating_sub(queued);
            if free == 0 || free < queued / 2 {
                break;
            }
            let in_flight = self.in_flight();
            if self.app_end.saturating_sub(self.nxt) < self.mss
                && in_flight < self.win.cwnd
                && self.sb.lost_bytes <= self.sb.retrans_bytes
            {
                self.rate.mark_app_limited(in_flight);
            }
            let n = self.app_pending.min(self.cfg.write_size).min(free);
            self.app_end += n;
            self.app_pending -= n;
            self.note_write();
            wrote = true;
        }
        wrote
    }

    /// Payload bytes the application has written into the socket so far.
    pub fn app_written(&self) -> u64 {
        self.app_end.saturating_sub(self.iss + 1)
    }

    /// Payload bytes sent at least once (the highest sequence sent).
    pub fn bytes_sent_high(&self) -> u64 {
        self.nxt.saturating_sub(self.iss + 1)
    }

    /// Payload bytes received in order by the application.
    pub fn delivered(&self) -> u64 {
        self.stats.bytes_delivered
    }

    // ----- observation -----------------------------------------------------------------

    /// Linux's in-flight estimate: outstanding − SACKed − lost + retransmitted.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        (self.nxt.saturating_sub(self.una) + self.sb.retrans_bytes)
            .saturating_sub(self.sb.sacked_bytes + self.sb.lost_bytes)
    }

    /// The peer's advertised window as this sender uses it.
    pub fn snd_wnd(&self) -> u64 {
        self.snd_wnd
    }

    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    pub fn cc_state(&self) -> &'static str {
        self.cc.state_label(&self.win)
    }

    pub fn pacing_rate(&self) -> Option<Rate> {
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r);
        }
        if !self.cfg.pacing {
            return None;
        }
        let srtt = self.rtt.srtt()?;
        Some(Rate::from_bytes_per_sec(self.linux_rate(srtt)))
    }

    /// Linux's internal pacing rate in bytes per second (`tcp_update_pacing_rate`: 2 ×
    /// cwnd/SRTT in the first half of slow start, 1.2 × after), which it computes whether or
    /// not it paces.
    fn linux_rate(&self, srtt: Dur) -> f64 {
        let ratio =
            if self.win.cwnd < self.win.ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
        ratio * self.win.cwnd as f64 / srtt.secs_f64()
    }

    // ----- timers ----------------------------------------------------------------------

    fn set_timer(&mut self, kind: TimerKind, at: SimTime, cx: &mut Cx) {
        debug_assert!(at != SimTime::MAX, "SimTime::MAX stands for no deadline");
        let slot = &mut self.timers[kind as usize];
        slot.deadline = at;
        if at < slot.scheduled {
            slot.scheduled = at;
            cx.events.schedule(at, Event::Timer(self.id, kind));
        }
    }

    fn clear_timer(&mut self, kind: TimerKind) {
        self.timers[kind as usize].deadline = SimTime::MAX;
    }

    fn timer_armed(&self, kind: TimerKind) -> bool {
        self.timers[kind as usize].deadline().is_some()
    }

    fn arm_rto(&mut self, cx: &mut Cx) {
        let at = cx.now + self.rtt.rto();
        self.set_xmit_timer(XmitTimer::Rto, at, cx);
    }

    /// Arms the one retransmission timer slot for the RTO, RACK's reordering timer or the
    /// tail loss probe.
    fn set_xmit_timer(&mut self, kind: XmitTimer, at: SimTime, cx: &mut Cx) {
        self.lr.xmit_timer = kind;
        self.set_timer(TimerKind::Rto, at, cx);
    }

    /// A timer event fired at `cx.now`.
    pub fn on_timer(&mut self, kind: TimerKind, cx: &mut Cx) {
        let slot = &mut self.timers[kind as usize];
        if slot.scheduled != cx.now {
            return; // superseded by an earlier event for the same timer
        }
        slot.scheduled = SimTime::MAX;
        match slot.deadline() {
            None => return,
            Some(d) if d > cx.now => {
                slot.scheduled = d;
                cx.events.schedule(d, Event::Timer(self.id, kind));
                return;
            }
            Some(_) => slot.deadline = SimTime::MAX,
        }
        match kind {
            TimerKind::Rto => match std::mem::take(&mut self.lr.xmit_timer) {
                XmitTimer::Rto => self.on_rto(cx),
                XmitTimer::Reorder => self.on_reorder_timer(cx),
                XmitTimer::Probe => self.on_probe_timer(cx),
            },
            TimerKind::DelAck => {
                // A delayed ACK missed: Linux's tcp_delack_timer_handler leaves ping-pong mode
                // (a held SACK, on this timer too, is its own hrtimer in Linux: not that).
                if self.ooo.is_empty() {
                    self.lr.pingpong = false;
                }
                self.send_ack(cx)
            }
            TimerKind::Pace => self.try_send(cx),
        }
    }

    // ----- segment output --------------------------------------------------------------

    fn window_field(&self, syn: bool) -> u16 {
        // Windows in SYNs are never scaled (RFC 7323 §2.2).
        if syn {
            let w = if self.tune.on { self.tune.window(0, 1) } else { self.rcv_buf };
            w.min(65_535) as u16
        } else {
            (self.adv_window() >> self.rcv_wscale).min(65_535) as u16
        }
    }

    fn emit(&mut self, mut flags: u16, seq: u64, len: u32, syn_opts: SynOptions, cx: &mut Cx) {
        let syn = flags & TcpFlags::SYN != 0;
        let mut accecn = None;
        if !syn && flags & TcpFlags::ACK != 0 {
            let (f, o) = self.ecn.ack_fields();
            flags |= f;
            accecn = o;
        }
        let has_ack = flags & TcpFlags::ACK != 0;
        let window = self.window_field(syn);
        if has_ack && !syn {
            self.rcv_wnd_adv = (window as u64) << self.rcv_wscale;
            self.rcv_edge = self.rcv_nxt + self.rcv_wnd_adv;
        }
        // A SYN offers timestamps; a SYN-ACK carries them only if the SYN did (RFC 7323 §3.2).
        let offer = syn && !has_ack && self.cfg.timestamps;
        let ts = if self.ts_ok || offer { Some((cx.now.0, self.ts_recent)) } else { None };
        let sack = if has_ack && self.sack_ok && (self.lr.dsack.is_some() || !self.ooo.is_empty()) {
            self.sack_option()
        } else {
            SackBlocks::default()
        };
        let h = TcpHeader {
            seq,
            ack: if has_ack { self.rcv_nxt } else { 0 },
            len,
            flags: TcpFlags(flags),
            window,
            ts,
            sack,
            syn_opts,
            accecn,
        };
        let p = Packet {
            flow: self.flow,
            route: self.route,
            hop: 0,
            wire_bytes: len + TCP_HEADER_BYTES,
            ecn: Ecn::NotEct,
            sent_at: cx.now,
            conn: self.conn,
            pure_ack: None,
            hdr: Header::Tcp(h),
        };
        cx.out.push(cx.pool.alloc(p));
        self.stats.pkts_sent += 1;
        if has_ack {
            self.lr.compressed = 0;
            self.last_ack_sent = self.rcv_nxt;
            self.unacked_segs = 0;
            self.clear_timer(TimerKind::DelAck);
        }
    }

    /// The MSS option this end sends: `tcp.mss` is the payload of a segment with the
    /// timestamp option, and the option's value excludes TCP options (RFC 6691; Linux
    /// advertises 1460 and sends 1448-byte payloads with timestamps).
    fn mss_option(&self) -> u64 {
        self.cfg.mss as u64 + if self.cfg.timestamps { TCP_TS_OPTION_BYTES } else { 0 }
    }

    /// The SYN offers every option configured; the SYN-ACK answers only those the SYN
    /// offered (window scale and timestamps: RFC 7323 §2.2, §3.2; SACK-permitted: RFC 2018).
    fn syn_options(&self) -> SynOptions {
        let offer = SynOptions {
            mss: self.mss_option().min(65_535) as u16,
            wscale: Some(self.rcv_wscale),
            sack_permitted: self.cfg.recovery == Recovery::Sack,
            timestamps: self.cfg.timestamps,
        };
        if self.state != TcpState::SynRcvd {
            return offer;
        }
        SynOptions {
            wscale: self.wscale_ok.then_some(self.rcv_wscale),
            sack_permitted: self.sack_ok,
            timestamps: self.ts_ok,
            ..offer
        }
    }

    fn send_syn(&mut self, retransmission: bool, cx: &mut Cx) {
        let opts = self.syn_options();
        // ECN setup: ECE+CWR on the SYN, ECE on the SYN-ACK (RFC 3168 §6.1.1); AccECN adds AE
        // to the SYN and answers with the SYN's IP-ECN field in the ACE bits (RFC 9768 §3.1).
        let flags = if self.state == TcpState::SynRcvd {
            TcpFlags::SYN
                | TcpFlags::ACK
                | match self.ecn.mode {
                    EcnMode::Off => 0,
                    EcnMode::Classic => TcpFlags::ECE,
                    EcnMode::AccEcn => ecn::ace_flags(ecn::handshake_ace(self.ecn.syn_seen)),
                }
        } else {
            TcpFlags::SYN | ecn::syn_flags(self.cfg.ecn)
        };
        self.emit(flags, self.iss, 0, opts, cx);
        self.syn_sent_at = cx.now;
        self.syn_retransmitted |= retransmission;
        self.arm_rto(cx);
    }

    fn send_ack(&mut self, cx: &mut Cx) {
        self.emit(TcpFlags::ACK, self.nxt, 0, SynOptions::default(), cx);
    }

    /// Sends [seq, seq + len); `psh`: with the PSH flag (`tcp.psh`: a write's end,
    /// `holds_write_end`, or a multi-segment skb's, `skb_end`).
    fn send_data(&mut self, seq: u64, len: u64, retransmission: bool, psh: bool, cx: &mut Cx) {
        let mut flags = TcpFlags::ACK;
        if self.ecn.cwr_pending {
            flags |= TcpFlags::CWR;
            self.ecn.cwr_pending = false;
        }
        // Our FIN takes the last sequence number of the segment that holds it.
        let payload = if self.holds_fin(seq, len) {
            flags |= TcpFlags::FIN;
            len - 1
        } else {
            len
        };
        if psh {
            flags |= TcpFlags::PSH;
        }
        if self.cfg.mech.psh && !retransmission && cx.now.since(self.lr.last_rx) < self.cfg.delack {
            self.lr.pingpong = true; // tcp_event_data_sent
        }
        self.emit(flags, seq, payload as u32, SynOptions::default(), cx);
        // The controller's codepoint; RFC 3168 §6.1.5: retransmissions are not ECN-capable.
        if self.ecn.mode.is_on() && !retransmission {
            if let Some(&id) = cx.out.last() {
                cx.pool.get_mut(id).ecn = self.ecn.use_.ect;
            }
        }
        self.stats.data_pkts_sent += 1;
        self.stats.bytes_sent += len;
        if self.ca.reducing() {
            self.lr.prr.on_sent(len);
        }
        if !self.timer_armed(TimerKind::Rto) {
            self.arm_rto(cx);
        }
        if let Some(rate) = self.pacing_rate() {
            // `unpaced_start`: Linux (tcp_update_skb_after_send) paces nothing before a
            // connection's tenth data segment, as the original sch_fq did not.
            if rate.0 > 0
                && (!self.cfg.mech.unpaced_start || self.stats.data_pkts_sent >= UNPACED_SEGMENTS)
            {
                let mut gap = rate.tx_time(len + TCP_HEADER_BYTES as u64);
                if self.cfg.mech.pacing_credit {
                    gap = self.pacing_credit_cut(gap, cx.now);
                }
                self.next_send_at = self.next_send_at.max(cx.now) + gap;
            }
        }
        // After the pacing step, which tells a burst's later segments by it.
        self.last_send_at = cx.now;
    }

    fn send_new_segment(&mut self, len: u64, skb_end: bool, cx: &mut Cx) {
        if self.state != TcpState::Established && self.close.fin_at == self.nxt + len {
            // The FIN rides on the last data segment (Linux tcp_send_fin).
            return self.send_fin_segment(len, cx);
        }
        let seq = self.nxt;
        let write_end = self.holds_write_end(seq, len);
        let psh = write_end || skb_end;
        let stamp = self.rate.on_send(cx.now, self.sb.is_empty());
        // Only tcp_push's mark is the skb's own; the GSO one is set on the transmitted clone.
        let flags = if write_end { scoreboard::PUSH } else { 0 };
        self.sb.push(Seg::new(seq, seq + len, cx.now, flags, stamp));
        self.nxt += len;
        if len < self.mss {
            self.cork.snd_sml = self.nxt; // tcp_minshall_update
        }
        self.send_data(seq, len, false, psh, cx);
        self.schedule_probe(cx);
    }

    fn retransmit(&mut self, i: usize, cx: &mut Cx) {
        let s = *self.sb.get(i);
        let stamp = self.rate.on_send(cx.now, false);
        self.sb.retransmitted(i, cx.now, stamp);
        self.lr.undo.on_retransmit(cx.now);
        self.stats.retransmits += 1;
        self.stats.bytes_retx += s.len();
        // Linux retransmits the skb with its own flags: the PSH of a write's end.
        self.send_data(s.start, s.len(), true, s.has(scoreboard::PUSH), cx);
    }

    /// Sends what the windows allow: retransmissions of presumed-lost segments first, then new
    /// data (RFC 6675 NextSeg order), paced if a pacing rate is set.
    fn try_send(&mut self, cx: &mut Cx) {
        if self.state != TcpState::Established {
            if self.state.sends() {
                self.try_send_closing(cx);
            }
            return;
        }
        if self.cfg.mech.linux_cwnd_limited {
            // Linux's tcp_write_xmit runs when there is unsent data, and ends with
            // tcp_cwnd_validate when it sent some or was cwnd-limited.
            let (had_new, nxt) = (self.nxt < self.app_end, self.nxt);
            self.cwnd_limited = false;
            self.try_send_data(cx);
            if had_new || self.nxt > nxt {
                self.cwnd_validate(self.nxt > nxt);
            }
        } else {
            self.try_send_data(cx);
        }
    }

    /// Linux's tcp_cwnd_validate (`cwnd_limited = "linux"`): a pass that was cwnd-limited
    /// marks its window so until SND.UNA passes the SND.NXT of that time; otherwise a new
    /// window (SND.UNA past the last one's end), or a larger flight in a window not so marked,
    /// restarts the record of the window's largest flight.
    fn cwnd_validate(&mut self, sent: bool) {
        let limited = self.cwnd_limited || self.in_flight() >= self.win.cwnd;
        if !(sent || limited) {
            return;
        }
        let out = self.nxt - self.una;
        if self.una >= self.max_out_seq || limited || (!self.cwnd_limited_win && out > self.max_out)
        {
            self.cwnd_limited_win = limited;
            self.max_out = out;
            self.max_out_seq = self.nxt;
        }
    }

    #[inline]
    fn try_send_data(&mut self, cx: &mut Cx) {
        if self.nothing_to_send() {
            // What the loop below does when it finds nothing in flight, nothing to retransmit
            // and nothing new, without reading the scoreboard to find that out. (The
            // retransmission hint it would reset is reset by the next full pass, before the
            // scoreboard holds anything again.)
            debug_assert!(self.in_flight() == 0 && self.sb.is_empty());
            if self.pacing_gate(cx).is_none() {
                return;
            }
            if self.win.cwnd > 0 {
                self.cwnd_limited = false;
                if self.cfg.sndbuf == SNDBUF_UNLIMITED {
                    self.rate.mark_app_limited(0);
                }
            }
            return;
        }
        if self.sb.is_empty() && self.nxt < self.app_end && self.last_send_at > SimTime::ZERO {
            self.restart_after_idle(cx.now);
        }
        // Segments left of the TSO skb being sent (`tso_defer`).
        let mut skb_left = 0u64;
        loop {
            let Some(in_burst) = self.pacing_gate(cx) else { return };
            let in_flight = self.in_flight();
            // Limited transmit (RFC 3042): one new segment per early dupACK. With SACK the
            // pipe already excludes SACKed data, which frees that room (RFC 6675 §5, Linux).
            let early = matches!(self.ca, CaState::Open | CaState::Disorder) && !self.sack_ok;
            let allowance = if early { self.dupacks.min(2) * self.mss } else { 0 };
            let cwnd = self.win.cwnd + allowance;
            // `paced_fast_retransmit`: the forced fast retransmission is owed at this slot.
            let forced = !in_burst && self.lr.fr_due;
            if forced {
                self.lr.fr_due = false;
            }
            // F-RTO step 2b: this ACK's allowance goes to new data, not retransmissions.
            let rtx = if self.lr.send_new_only { None } else { self.sb.next_to_retransmit() };
            if let Some(i) = rtx {
                if in_burst {
                    // A retransmission is an skb of its own, paced on its own.
                    self.lr.burst_left = 0;
                    continue;
                }
                // The forced one goes regardless of cwnd, as `force_retransmit`'s does.
                if !forced && in_flight + self.sb.get(i).len() > cwnd {
                    self.cwnd_limited = true;
                    return;
                }
                self.retransmit(i, cx);
                continue;
            }
            if self.nxt < self.app_end {
                let mut len = (self.app_end - self.nxt).min(self.mss);
                if len < self.mss && self.cork_holds() {
                    self.cork_hold(cx);
                    return;
                }
                // Nagle's algorithm: an ACK will come for the small segment in flight.
                if len < self.mss && self.nagle_holds() {
                    return;
                }
                let usable = (self.una + self.snd_wnd).saturating_sub(self.nxt);
                if len > usable {
                    self.cwnd_limited = false;
                    if !self.sb.is_empty() {
                        return; // receive-window limited: wait for the edge to move
                    }
                    // `zero_window_probe = "linux"`: a window below one segment waits for the
                    // persist timer too (Linux's tcp_snd_wnd_test), whose probe then sends
                    // what fits (tcp_write_wakeup).
                    if usable == 0 || self.cfg.mech.linux_zero_window_probe {
                        // Zero window and nothing in flight: the RTO timer doubles as the
                        // persist timer and sends a one-byte probe when it fires.
                        if !self.timer_armed(TimerKind::Rto) {
                            self.arm_rto(cx);
                        }
                        return;
                    }
                    // A window below one segment with nothing in flight: send what fits rather
                    // than wait for an ACK that will not come (RFC 9293 §3.8.6.2.1).
                    len = usable;
                }
                if in_flight + len > cwnd {
                    self.cwnd_limited = true;
                    return;
                }
                if skb_left == 0 && self.cfg.mech.tso_defer {
                    match self.tso_skb(in_flight, cwnd, cx.now) {
                        Some(n) => skb_left = n,
                        None => {
                            // Linux's is_cwnd_limited / is_rwnd_limited of a deferral.
                            self.cwnd_limited = cwnd - in_flight < usable;
                            return;
                        }
                    }
                }
                skb_left = skb_left.saturating_sub(1);
                let skb_end = self.cfg.mech.psh && self.skb_end(in_flight, cwnd, in_burst);
                let burst = if in_burst { self.lr.burst_left } else { self.gso_segs() };
                self.send_new_segment(len, skb_end, cx);
                self.lr.burst_left = burst.saturating_sub(1);
                continue;
            }
            // Nothing new to send. RFC 6675 NextSeg rules (3) and (4) (retransmitting
            // not-yet-lost segments, the rescue retransmission) are left out, as in Linux:
            // they trade spurious retransmissions for ACK clock, and a tail loss falls to the RTO.
            if in_flight < self.win.cwnd {
                self.cwnd_limited = false;
                // Without a send buffer the application is taken to have nothing more to
                // write now; with one, Linux marks when the application writes into the
                // drained socket (`fill_sndbuf`), and not while it waits for the buffer (a
                // recovery holding SND.UNA back keeps its data queued, its writes blocked).
                if self.cfg.sndbuf == SNDBUF_UNLIMITED {
                    self.rate.mark_app_limited(in_flight);
                }
            }
            return;
        }
    }

    /// `psh`: whether new data [seq, seq + len) holds the end of the last pushed write
    /// (tcp_push marks the write queue's tail unless MSG_MORE). The other PSH, on the last
    /// segment of a multi-segment skb, is `skb_end`'s.
    pub(super) fn holds_write_end(&self, seq: u64, len: u64) -> bool {
        let at = self.cork.push_at;
        self.cfg.mech.psh && seq < at && at <= seq + len
    }

    /// Linux's `tcp_tso_autosize` for a sender without pacing: about 1 ms of data at its
    /// internal rate (`linux_rate`), at least 2 segments, at most 64 KB; 64 KB without an SRTT.
    fn tso_autosize(&self, srtt: Option<Dur>) -> u64 {
        let per_ms = srtt.map_or(TSO_MAX_BYTES, |s| self.linux_rate(s) as u64 >> 10);
        (per_ms.min(TSO_MAX_BYTES) / self.mss.max(1)).max(2)
    }

    /// `psh`: whether the segment about to go is the last of a multi-segment skb. An skb
    /// starts when the last one is done (or, paced, with each pacing slot) and holds what
    /// Linux's tcp_write_xmit puts in one: min(`tcp_tso_autosize`, cwnd − in flight, the
    /// receive window, the written data) segments.
    fn skb_end(&mut self, in_flight: u64, cwnd: u64, in_burst: bool) -> bool {
        let paced = self.pacing_rate().is_some_and(|r| r.0 > 0);
        if self.lr.skb_left == 0 || (paced && !in_burst) {
            let mss = self.mss.max(1);
            // Linux's rate is first set by an ACK of data; before one, skbs are 64 KB.
            let rate = self.rtt.srtt().filter(|_| self.una > self.iss + 1);
            let auto = if paced { self.gso_segs() } else { self.tso_autosize(rate) };
            let quota = cwnd.saturating_sub(in_flight) / mss;
            let wnd = (self.una + self.snd_wnd).saturating_sub(self.nxt).div_ceil(mss);
            let data = self.app_end.saturating_sub(self.nxt).div_ceil(mss);
            self.lr.skb_segs = auto.min(quota).min(wnd).min(data).max(1);
            self.lr.skb_left = self.lr.skb_segs;
        }
        self.lr.skb_left -= 1;
        self.lr.skb_left == 0 && self.lr.skb_segs >= 2
    }

    /// The pacing gate before each send: None when it must wait for the pacing timer (armed
    /// here), else whether it continues a GSO burst (Linux sends a TSO-autosized skb whole,
    /// paced as one: the rest of the burst goes out at the instant its first segment did).
    #[inline]
    fn pacing_gate(&mut self, cx: &mut Cx) -> Option<bool> {
        let in_burst = self.lr.burst_left > 0 && self.last_send_at == cx.now;
        if cx.now < self.next_send_at && !in_burst {
            let at = self.next_send_at;
            self.set_timer(TimerKind::Pace, at, cx);
            return None;
        }
        if !in_burst {
            self.lr.burst_left = 0;
        }
        Some(in_burst)
    }

    /// Linux's pacing credit (`tcp_update_skb_after_send`, "take into account OS jitter"): a
    /// send that starts `c` after its pacing slot was due owes only `len − min(len / 2, c)`
    /// to the next one. The credit is taken when a burst starts late and spent over its
    /// segments, so a GSO burst of two segments sent late owes one segment's time, as
    /// Linux's one skb of two does. A send before its slot that does not continue a burst
    /// (sent at the instant of the one before: a probe, a timeout's retransmission) has no
    /// credit. Called before `last_send_at` moves to `now`.
    fn pacing_credit_cut(&mut self, gap: Dur, now: SimTime) -> Dur {
        if now >= self.next_send_at {
            self.lr.pace_credit = now.since(self.next_send_at);
        } else if self.last_send_at != now {
            self.lr.pace_credit = Dur::ZERO;
        }
        let cut = self.lr.pace_credit.min(Dur(gap.0 / 2));
        self.lr.pace_credit = Dur(self.lr.pace_credit.0 - cut.0);
        Dur(gap.0 - cut.0)
    }

    /// Segments per pacing slot: Linux's `tcp_tso_autosize` (about 1 ms of data at the pacing
    /// rate, `sk_pacing_shift` = 10, at least `tcp_min_tso_segs` = 2 or the controller's own
    /// goal), for paced senders with `gso` on; 1 otherwise.
    fn gso_segs(&self) -> u64 {
        if !self.cfg.mech.gso {
            return 1;
        }
        let Some(rate) = self.pacing_rate().filter(|r| r.0 > 0) else { return 1 };
        if let Some(n) = self.cc.tso_segs() {
            return n.max(1);
        }
        let bytes = (rate.0 / 8) >> 10;
        (bytes / self.mss.max(1)).clamp(2, 0x7F)
    }

    /// Linux's TSO deferral (`tcp_tso_should_defer`, `tcp_tso_autosize`) for a sender
    /// without pacing (`tso_defer`): the next skb holds up to the autosized count of
    /// segments (about 1 ms at Linux's internal pacing rate, 2 × or 1.2 × cwnd/SRTT; at
    /// least 2, at most 64 KB); it goes now if the windows take it whole, in recovery, if
    /// the application has nothing more to write and what is left fits, if a third of the
    /// window is free (`tcp_tso_win_divisor` = 3), if nothing was sent for 1 ms, or if the
    /// head's ACK is due more than min(1 ms, SRTT/2) from now; otherwise it waits for the
    /// ACK to widen the window. Returns the skb's segments, or None to defer.
    /// Simplified: the `tcp_tso_rtt_log` term (more bytes below ~4 ms min RTT) is left out.
    fn tso_skb(&self, in_flight: u64, cwnd: u64, now: SimTime) -> Option<u64> {
        if self.pacing_rate().is_some() || matches!(self.ca, CaState::Recovery | CaState::Loss) {
            return Some(u64::MAX);
        }
        let Some(srtt) = self.rtt.srtt() else { return Some(u64::MAX) };
        let segs = self.tso_autosize(Some(srtt));
        let send_win = (self.una + self.snd_wnd).saturating_sub(self.nxt);
        let limit = cwnd.saturating_sub(in_flight).min(send_win);
        let left = self.app_end.saturating_sub(self.nxt);
        if limit >= segs * self.mss
            || (left <= limit && self.app_pending == 0)
            || limit >= self.snd_wnd.min(cwnd) / 3
            || now.since(self.last_send_at) > TSO_DEFER_MAX
            || self.sb.is_empty()
        {
            return Some(segs);
        }
        // Linux since 6.18 / the 2025 stable kernels ("tcp: fix tcp_tso_should_defer() vs
        // large RTT"): defer only if the head's ACK is due within min(1 ms, SRTT/2).
        let ack_due = self.sb.get(0).sent_at + srtt;
        if ack_due > now && ack_due.since(now) > TSO_DEFER_MAX.min(Dur(srtt.0 / 2)) {
            return Some(segs);
        }
        None
    }

    /// SACK compression (Linux `__tcp_ack_snd_check`): an out-of-order segment is ACKed at
    /// once for the first three after RCV.NXT last moved, then the ACK waits min(1 ms,
    /// RTT/20) (`tcp_comp_sack_delay_ns`; RTT the smaller of the receiver's estimate and
    /// SRTT), at most 44 held (`tcp_comp_sack_nr`). Returns the delay, or None: ACK now.
    fn sack_compress_delay(&mut self) -> Option<Dur> {
        if !self.cfg.mech.sack_compress
            || !self.sack_ok
            || self.lr.quickacks > 0
            || self.lr.dsack.is_some()
        {
            return None;
        }
        if self.lr.compressed >= 44 {
            return None;
        }
        if self.lr.comp_rcv_nxt != self.rcv_nxt {
            self.lr.comp_rcv_nxt = self.rcv_nxt;
            self.lr.dup_acks_sent = 0;
        }
        if self.lr.dup_acks_sent < 3 {
            self.lr.dup_acks_sent += 1;
            return None;
        }
        // Linux: the receiver's RTT estimate, or SRTT where that is smaller (none yet: 0).
        let mut rtt = self.tune.rtt().unwrap_or(Dur(0));
        if let Some(s) = self.rtt.srtt().filter(|s| s.0 > 0 && *s < rtt) {
            rtt = s;
        }
        let delay = Dur::from_millis(1).min(Dur(rtt.0 / 20));
        if delay.0 == 0 {
            return None;
        }
        self.lr.compressed += 1;
        Some(delay)
    }

    /// Sending resumes with nothing in flight: tell the controller, and (Linux
    /// tcp_cwnd_restart, with `tcp_slow_start_after_idle` on) after an idle period longer
    /// than the RTO halve cwnd per RTO of idleness, not below the initial window (RFC 5681
    /// §4.1 in spirit).
    fn restart_after_idle(&mut self, now: SimTime) {
        let idle = now.since(self.last_send_at);
        self.cc.on_tx_start(&mut self.win, now, idle);
        let rto = self.rtt.rto();
        if idle < rto || !self.cfg.slow_start_after_idle {
            return;
        }
        let restart = (self.cfg.init_cwnd as u64 * self.mss).min(self.win.cwnd);
        self.win.ssthresh = self.win.ssthresh.max(self.win.cwnd / 4 * 3);
        let mut cwnd = self.win.cwnd;
        let mut left = idle.0;
        while left > rto.0 && cwnd > restart {
            left -= rto.0;
            cwnd /= 2;
        }
        self.win.cwnd = cwnd.max(restart);
    }

    // ----- input -----------------------------------------------------------------------

    /// A packet for this endpoint arrived.
    pub fn on_packet(&mut self, pkt: &Packet, cx: &mut Cx) {
        if pkt.conn != self.conn {
            return; // a straggler of an earlier connection of this flow
        }
        let h = pkt.tcp();
        let syn = h.flags.has(TcpFlags::SYN);
        let ack = h.flags.has(TcpFlags::ACK);
        match self.state {
            TcpState::Closed if self.close.dead => self.on_teardown_segment(h, pkt.ecn, cx),
            TcpState::Closed => {}
            TcpState::Listen => {
                if syn && !ack {
                    self.accept_syn(h, pkt.ecn);
                    self.state = TcpState::SynRcvd;
                    self.una = self.iss;
                    self.nxt = self.iss + 1;
                    self.send_syn(false, cx);
                }
            }
            TcpState::SynRcvd => {
                if syn && !ack {
                    self.send_syn(true, cx); // our SYN-ACK was lost: the peer retried
                } else if ack && h.ack == self.iss + 1 {
                    self.establish(h, cx);
                    // Its ACE field reflects our SYN-ACK's IP-ECN field: not a CE count.
                    self.ecn.handshake_ack = true;
                    self.on_established_segment(h, pkt.ecn, cx);
                }
            }
            TcpState::SynSent => {
                if syn && ack && h.ack == self.iss + 1 {
                    self.accept_syn(h, pkt.ecn);
                    self.establish(h, cx);
                    self.send_ack(cx);
                    self.try_send(cx);
                }
            }
            TcpState::Established => {
                if h.flags.0 & (TcpFlags::SYN | TcpFlags::FIN | close::RST) != 0 {
                    if syn {
                        // A retransmitted SYN-ACK: our handshake ACK was lost.
                        self.send_ack(cx);
                        return;
                    }
                    return self.on_teardown_segment(h, pkt.ecn, cx);
                }
                self.on_established_segment(h, pkt.ecn, cx);
            }
            _ => self.on_teardown_segment(h, pkt.ecn, cx),
        }
    }

    /// Records the peer's SYN (or SYN-ACK) and negotiates options.
    fn accept_syn(&mut self, h: &TcpHeader, ip_ecn: Ecn) {
        self.irs = h.seq;
        self.rcv_nxt = h.seq + 1;
        self.last_ack_sent = self.rcv_nxt;
        let o = h.syn_opts;
        self.sack_ok = o.sack_permitted && self.cfg.recovery == Recovery::Sack;
        self.ts_ok = o.timestamps && self.cfg.timestamps;
        self.ecn.mode = if h.flags.has(TcpFlags::ACK) {
            ecn::accept_synack(self.cfg.ecn, h.flags)
        } else {
            ecn::accept_syn(self.cfg.ecn, h.flags)
        };
        self.ecn.syn_seen = ip_ecn;
        // The connecting side reflects the SYN-ACK's IP-ECN field on its first ACK.
        self.ecn.reflect_on_ack = h.flags.has(TcpFlags::ACK) && self.ecn.mode == EcnMode::AccEcn;
        if let Some((tsval, _)) = h.ts {
            self.ts_recent = tsval;
        }
        self.wscale_ok = o.wscale.is_some();
        match o.wscale {
            Some(s) => self.snd_wscale = s.min(14),
            None => {
                self.snd_wscale = 0;
                self.rcv_wscale = 0;
            }
        }
        if o.mss > 0 {
            // The options' room comes out of the smaller MSS (Linux's mss_cache; RFC 6691).
            let ts_room = if self.ts_ok { TCP_TS_OPTION_BYTES } else { 0 };
            self.mss = self.mss_option().min(o.mss as u64).saturating_sub(ts_room).max(1);
            self.win.mss = self.mss;
            self.win.cwnd = self.cfg.init_cwnd as u64 * self.mss;
        }
        self.snd_wnd = h.window as u64; // unscaled in a SYN
        self.snd_wl1 = h.seq;
        self.snd_wl2 = h.ack;
    }

    fn establish(&mut self, h: &TcpHeader, cx: &mut Cx) {
        self.state = TcpState::Established;
        self.lr.last_rx = cx.now;
        self.tune.on_established(cx.now, self.rcv_nxt);
        if self.cfg.mech.quickack {
            self.lr.quickacks = MAX_QUICKACKS;
        }
        self.ecn.use_ = self.cc.ecn_setup(self.ecn.mode);
        self.una = self.iss + 1;
        self.nxt = self.una;
        self.app_end = self.app_end.max(self.una);
        self.clear_timer(TimerKind::Rto);
        // RTT from the handshake: the echoed timestamp, or Karn-safe send time.
        let sample = match h.ts {
            Some((_, ecr)) if self.ts_ok => Some(cx.now.since(SimTime(ecr))),
            _ if !self.syn_retransmitted => Some(cx.now.since(self.syn_sent_at)),
            _ => None,
        };
        match sample {
            Some(r) => self.rtt.sample(r),
            None => self.rtt.syn_timeout_fallback(),
        }
        self.rtt.backoff = 0;
        if !h.flags.has(TcpFlags::SYN) {
            // The handshake's final ACK can carry a window update for the SYN-ACK's sender.
            self.snd_wnd = (h.window as u64) << self.snd_wscale;
            self.snd_wl1 = h.seq;
            self.snd_wl2 = h.ack;
        }
    }

    fn on_established_segment(&mut self, h: &TcpHeader, ecn: Ecn, cx: &mut Cx) {
        if let Some((tsval, _)) = h.ts {
            // RFC 7323 §4.3: TS.Recent from any segment at or below Last.ACK.sent (pure ACKs
            // included), so the peer's RTT samples stay fresh.
            if h.seq <= self.last_ack_sent {
                self.ts_recent = self.ts_recent.max(tsval);
            }
        }
        if h.flags.has(TcpFlags::ACK) {
            self.on_ack(h, cx);
        }
        let (ack_before, ack_now) = self.ecn.on_segment(h, ecn);
        if ack_before {
            // DCTCP echo: what came before this segment is acknowledged under the old state.
            if self.unacked_segs > 0 {
                self.send_ack(cx);
            }
            self.ecn.commit_echo();
        }
        if h.len > 0 {
            if ack_now {
                self.unacked_segs = self.cfg.ack_every;
            }
            self.on_data(h, cx);
        }
        self.try_send(cx);
        // The ACK's own transmissions go first, then the application wakes to write into
        // the space it freed (Linux: tcp_data_snd_check, then tcp_check_space).
        if self.app_pending > 0 && self.fill_sndbuf() {
            self.try_send(cx);
        }
        self.lr.send_new_only = false;
    }

    // ----- receive half ----------------------------------------------------------------

    fn on_data(&mut self, h: &TcpHeader, cx: &mut Cx) {
        let start = h.seq;
        let end = h.seq + h.len as u64;
        if end <= self.rcv_nxt {
            // Duplicate: re-ACK at once, reporting it (D-SACK), and ACK the next segments at
            // once too (Linux enters quick-ACK mode: the sender may be recovering).
            self.note_duplicate(start, end);
            self.send_ack(cx);
            return;
        }
        if start > self.rcv_nxt {
            if self.ooo.covers(start, end) {
                self.note_duplicate(start, end);
            }
            self.ooo.insert(start, end);
            self.tune_on_data(h, cx.now, false);
            self.tune.on_out_of_order(self.rcv_nxt, self.ooo.end());
            // Out of order: a duplicate ACK with SACK blocks, at once or compressed (not in
            // quick-ACK mode: Linux's __tcp_ack_snd_check tests that first).
            if self.cfg.mech.grow_quickack && self.lr.quickacks > 0 {
                self.lr.quickacks -= 1;
                self.send_ack(cx);
                return;
            }
            match self.sack_compress_delay() {
                Some(d) => {
                    let at = cx.now + d;
                    if self.timers[TimerKind::DelAck as usize].deadline > at {
                        self.set_timer(TimerKind::DelAck, at, cx);
                    }
                }
                None => self.send_ack(cx),
            }
            return;
        }
        if start < self.rcv_nxt {
            self.note_duplicate(start, self.rcv_nxt);
        }
        // In order (possibly overlapping old data).
        if !self.rwnd.is_static() {
            // The receiver's own RTT sample: now minus the echo of one of its ACK timestamps.
            let rtt = match h.ts {
                Some((_, ecr)) if self.ts_ok && ecr > 0 => Some(cx.now.since(SimTime(ecr))),
                _ => None,
            };
            self.rwnd.on_data(cx.now, h.len as u64, rtt, cx.channel);
        }
        let filled_hole = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt = self.ooo.advance(end);
        self.stats.bytes_delivered += self.rcv_nxt - before;
        // The application reads what is in order at once.
        self.tune_on_data(h, cx.now, true);
        self.tune.on_read(cx.now, self.rcv_nxt, self.ooo.end());
        if let Some(want) = self.expect {
            if self.completed_at.is_none() && self.stats.bytes_delivered >= want {
                self.completed_at = Some(cx.now);
            }
        }
        self.unacked_segs += 1;
        if self.cfg.mech.psh {
            self.lr.last_rx = cx.now;
        }
        // Linux's ICSK_ACK_PUSHED: a segment with PSH is ACKed when the reader drains,
        // here at once, unless the connection is interactive (ping-pong).
        let pushed = self.cfg.mech.psh && h.flags.has(TcpFlags::PSH) && !self.lr.pingpong;
        let quick = self.lr.quickacks > 0 || pushed;
        if filled_hole || quick || self.unacked_segs >= self.cfg.ack_every || self.cfg.delack.0 == 0
        {
            self.lr.quickacks = self.lr.quickacks.saturating_sub(1);
            self.send_ack(cx);
        } else {
            self.schedule_delack(cx);
        }
    }

    /// Arms the delayed-ACK timer for `delack` from now, unless it is armed already.
    pub(super) fn schedule_delack(&mut self, cx: &mut Cx) {
        if !self.timer_armed(TimerKind::DelAck) {
            let at = cx.now + self.cfg.delack;
            self.set_timer(TimerKind::DelAck, at, cx);
        }
    }

    /// Receive-buffer autotuning's view of an arriving data segment; with `grow_quickack`,
    /// a segment that raised rcv_ssthresh is ACKed at once (Linux's `quick |= 1`).
    fn tune_on_data(&mut self, h: &TcpHeader, now: SimTime, in_order: bool) {
        let ecr = match h.ts {
            Some((_, ecr)) if self.ts_ok => Some(ecr),
            _ => None,
        };
        let grow = in_order || self.sack_ok;
        let grew = self.tune.on_data(
            now,
            h.len as u64,
            ecr,
            self.rcv_nxt,
            self.rcv_wnd_adv,
            self.ooo.bytes(),
            grow,
        );
        // Not after TCP_QUICKACK 0 (the simulator's `quickack` off): Linux is then in
        // ping-pong mode, where quick ACKs do not apply.
        if grew && self.cfg.mech.grow_quickack && self.cfg.mech.quickack {
            self.lr.quickacks |= 1;
        }
    }

    // ----- send half: ACK processing ---------------------------------------------------

    fn on_ack(&mut self, h: &TcpHeader, cx: &mut Cx) {
        let now = cx.now;
        let ack = h.ack;
        if ack > self.nxt || ack < self.una {
            if ack < self.una && self.cfg.mech.linux_old_ack_sack {
                self.on_old_ack(h, cx);
            }
            return; // acknowledges data never sent, or stale
        }
        let wnd = (h.window as u64) << self.snd_wscale;
        let mut window_changed = false;
        if self.snd_wl1 < h.seq || (self.snd_wl1 == h.seq && self.snd_wl2 <= ack) {
            window_changed = wnd != self.snd_wnd;
            self.snd_wnd = wnd;
            self.snd_wl1 = h.seq;
            self.snd_wl2 = ack;
        }
        if self.acks_nothing(h) {
            return;
        }
        if !self.cfg.mech.linux_xmit_timer_on_progress {
            self.rto_from_head(cx);
        }
        let prior_una = self.una;
        let prior_in_flight = self.in_flight();
        let outstanding = self.nxt - self.una;

        let ecr = match h.ts {
            Some((_, e)) if self.ts_ok => Some(e),
            _ => None,
        };

        // A D-SACK block reports a duplicate: it counts for undo, not as new SACK information.
        let blocks = if self.sack_ok { h.sack.as_slice() } else { &[] };
        let dsack = self.dsack_block(blocks, ack);
        let blocks = if dsack.is_some() { &blocks[1..] } else { blocks };

        let mut d = self.apply_sack_blocks(blocks, now);
        let min_rtt = self.rtt.min_rtt();
        let rate = &mut self.rate;
        let rack = &mut self.lr.rack;
        let newly_sacked = d.acked;
        if ack > self.una {
            self.sb.ack_to(ack, |seg| {
                d.retrans_acked |= seg.has(EVER_RETRANS);
                if !seg.has(SACKED) {
                    d.note(seg, false, now, min_rtt, rate, rack);
                }
            });
            self.una = ack;
        }
        let acked = d.acked;
        let newly_cum = self.una - prior_una;
        // Linux also restarts the timer on a SACK of data sent before the head's latest
        // (re)transmission: the pipe still drains, so the head's timer should not run out
        // while a deep queue delivers what was sent before it.
        let sack_rearm = newly_cum == 0
            && d.sack_clean
                .is_some_and(|(oldest, _)| self.sb.front().is_some_and(|h| oldest < h.sent_at));
        if self.cfg.mech.linux_xmit_timer_on_progress && (newly_cum > 0 || sack_rearm) {
            // Linux's FLAG_SET_XMIT_TIMER: only an ACK that delivered data moves the timer.
            self.rto_from_head(cx);
        }
        if d.reordered {
            self.lr.rack.reord_seen = true;
            self.note_reordering(d.reorder_low);
        }

        let (rtt, cc_rtt) = self.rtt_samples(&d, ecr, newly_cum > 0, now);
        if let Some(r) = rtt {
            self.rtt.sample(r);
            if now >= self.metrics_from {
                record_delay(
                    &mut self.stats.rtt_sum_ns,
                    &mut self.stats.rtt_n,
                    &mut self.rtt_hist,
                    r.0,
                );
            }
        }
        if let Some(r) = cc_rtt {
            self.rtt.note_min(r);
        }
        let rs = self.rate.finish(now, self.rtt.min_rtt());

        let is_dup = newly_cum == 0
            && h.len == 0
            && outstanding > 0
            && if self.sack_ok { newly_sacked > 0 } else { !window_changed };
        if let Some(b) = dsack {
            self.on_dsack(b);
        }
        self.process_tlp_ack(
            ack,
            dsack,
            newly_cum > 0 || newly_sacked > 0 || h.len > 0 || window_changed,
            cx,
        );
        // Without SACK, Linux counts each duplicate ACK as a segment delivered out of order;
        // the ACK that fills the hole then credits the controller only with what lies beyond
        // them, at least one segment (tcp_remove_reno_sacks). Read before `recover` clears
        // the count.
        let cc_acked =
            if self.cfg.mech.linux_reno_sacks && !self.sack_ok && newly_cum > 0 && self.dupacks > 0
            {
                let segs = acked.div_ceil(self.mss);
                acked - self.dupacks.min(segs.saturating_sub(1)) * self.mss
            } else {
                acked
            };
        let lost_before = self.sb.lost_bytes;
        let reo_armed = self.recover(newly_cum, is_dup, &d, ecr, cx);
        if self.ecn.mode.is_on() && self.ecn.on_ack(h, acked, self.mss, self.una, self.nxt) {
            self.on_ecn_echo(cx);
        }
        let newly_lost = self.sb.lost_bytes.saturating_sub(lost_before);
        let rtt = cc_rtt;

        if acked > 0 {
            let (ce_bytes, ce_pkts) = self.ecn.take_ce();
            let a = AckSample {
                now,
                rtt,
                srtt: self.rtt.srtt(),
                min_rtt: self.rtt.min_rtt(),
                acked_bytes: cc_acked,
                prior_in_flight,
                in_flight: self.in_flight(),
                lost_bytes: newly_lost,
                delivered: self.rate.delivered,
                rate: rs,
                ca_state: self.ca,
                // Linux grows cwnd only on ACKs that advance snd.una, or on any delivery once
                // reordering was seen (tcp_may_raise_cwnd; RFC 5681 §3.1).
                cwnd_limited: (newly_cum > 0 || self.lr.rack.reord_seen)
                    && if self.cfg.mech.linux_cwnd_limited {
                        // tcp_is_cwnd_limited.
                        self.cwnd_limited_win
                            || (self.win.in_slow_start() && self.win.cwnd < 2 * self.max_out)
                    } else {
                        self.cwnd_limited
                            || (self.win.in_slow_start() && 2 * prior_in_flight >= self.win.cwnd)
                    },
                snd_una: self.una,
                snd_nxt: self.nxt,
                ce_bytes,
                ce_pkts,
                owd: h.ts.and_then(|(val, ecr)| val.checked_sub(ecr)).map(Dur),
            };
            self.cc.on_ack(&mut self.win, &a);
            self.win.cwnd = self.win.cwnd.max(self.mss);
        }
        self.prr_update(acked, newly_lost > 0, newly_cum > 0);

        // RFC 6298 (5.2)/(5.3): stop the timer when all is acknowledged, restart it on new data —
        // except in NewReno recovery, where RFC 6582 (§3.2 step 5, the "Impatient" variant)
        // restarts it on the first partial ACK only: a window with many losses then ends in a
        // timeout and slow start instead of repairing one hole per RTT for minutes.
        // RACK's reordering timer, when this ACK set it, takes the slot instead; in the Open
        // state the tail loss probe comes first (RFC 8985 §7.2).
        if self.una == self.nxt {
            self.clear_timer(TimerKind::Rto);
        } else if !reo_armed
            && (newly_cum > 0 || sack_rearm)
            && !(self.ca == CaState::Recovery && self.partial_acks > 1)
            && !self.schedule_probe(cx)
        {
            self.arm_rto(cx);
        }
    }

    /// Applies an ACK's SACK blocks (its D-SACK block already taken out) to the scoreboard:
    /// what they newly deliver, noted for the rate sample and RACK.
    #[inline]
    fn apply_sack_blocks(&mut self, blocks: &[(u64, u64)], now: SimTime) -> Delivered {
        let mut d = Delivered {
            frto_high: if self.lr.frto { self.recovery_point } else { 0 },
            high_sacked: self.sb.high_sacked,
            reorder_low: u64::MAX,
            ..Default::default()
        };
        let min_rtt = self.rtt.min_rtt();
        let rate = &mut self.rate;
        let rack = &mut self.lr.rack;
        for &(s, e) in blocks {
            if e <= self.una {
                continue;
            }
            self.sb.sack(s, e, |seg| d.note(seg, true, now, min_rtt, rate, rack));
        }
        self.sb.end_sack_batch();
        d
    }

    /// An ACK below SND.UNA (one overtaken by a later ACK) that may still carry news in its
    /// SACK blocks: Linux tags them, runs loss detection and sends what the pipe they free
    /// allows (tcp_ack's `old_ack` path), but leaves the window, cwnd, RTT and the timers as
    /// they are — the ACK field itself is stale. Simplified: D-SACK blocks on such an ACK are
    /// ignored, and one older than a window is dropped without the RFC 5961 challenge ACK.
    fn on_old_ack(&mut self, h: &TcpHeader, cx: &mut Cx) {
        let blocks = if self.sack_ok { h.sack.as_slice() } else { &[] };
        if blocks.is_empty() || h.ack + self.snd_wnd.max(self.mss) < self.una {
            return;
        }
        let blocks = if self.dsack_block(blocks, h.ack).is_some() { &blocks[1..] } else { blocks };
        let now = cx.now;
        let d = self.apply_sack_blocks(blocks, now);
        let min_rtt = self.rtt.min_rtt();
        // The deliveries count; the sample itself is dropped, as Linux drops this ACK's.
        let _ = self.rate.finish(now, min_rtt);
        if d.acked == 0 {
            return;
        }
        if d.reordered {
            self.lr.rack.reord_seen = true;
            self.note_reordering(d.reorder_low);
        }
        let ecr = match h.ts {
            Some((_, e)) if self.ts_ok => Some(e),
            _ => None,
        };
        self.recover(0, false, &d, ecr, cx);
    }

    /// Whether the ACK field of `h` (its window already applied) is news to nobody: nothing
    /// is outstanding and it acknowledges nothing new, carries no SACK blocks, and no state
    /// waits for an ACK (no recovery, duplicate ACKs, retransmission-timer slot, tail probe or
    /// ECN feedback). Then every step of the ACK processing below is a no-op: no delivery, no
    /// RTT or rate sample, no duplicate, nothing to detect lost. This is every data segment a
    /// one-way flow's receiver gets, so it skips the send half's state (a third of the
    /// socket's cache lines, which at thousands of flows are misses).
    #[inline]
    fn acks_nothing(&self, h: &TcpHeader) -> bool {
        #[cfg(test)]
        if NO_SHORTCUTS.with(|c| c.get()) {
            return false;
        }
        let quiet = h.ack == self.una
            && self.una == self.nxt
            && (h.sack.as_slice().is_empty() || !self.sack_ok)
            && self.ca == CaState::Open
            && self.dupacks == 0
            && !self.timer_armed(TimerKind::Rto)
            && self.lr.rack.tlp_high_seq.is_none()
            && !self.ecn.mode.is_on();
        debug_assert!(
            !quiet || (self.sb.is_empty() && self.sb.sacked_bytes == 0 && self.sb.lost_bytes == 0)
        );
        quiet
    }

    /// Nothing is outstanding and the application has nothing new: every data segment a
    /// one-way flow's receiver gets ends in such a send attempt.
    #[inline]
    fn nothing_to_send(&self) -> bool {
        #[cfg(test)]
        if NO_SHORTCUTS.with(|c| c.get()) {
            return false;
        }
        self.una == self.nxt && self.nxt >= self.app_end
    }

    /// Loss detection and recovery state after one ACK was applied to the scoreboard.
    /// Returns whether RACK armed its reordering timer.
    fn recover(
        &mut self,
        newly_cum: u64,
        is_dup: bool,
        d: &Delivered,
        ecr: Option<u64>,
        cx: &mut Cx,
    ) -> bool {
        if newly_cum > 0 {
            self.dupacks = 0;
        }
        if is_dup {
            self.dupacks += 1;
        }
        let mut reo_armed = false;
        if self.cfg.recovery == Recovery::Sack {
            self.sb.mark_lost(self.mss, DUPTHRESH);
            let reo = if self.cfg.mech.rack {
                let reo = self.reo_wnd();
                // Open with nothing SACKed: everything outstanding was sent after what was
                // delivered, so RACK has nothing to find (the common case, skipped).
                if self.ca != CaState::Open || self.sb.sacked_bytes > 0 {
                    reo_armed = self.rack_detect(reo, cx);
                }
                reo
            } else {
                // RFC 8985 reordering window for retransmissions only: a quarter of the min RTT.
                Dur(self.rtt.min_rtt().map_or(0, |m| m.0 / 4))
            };
            if matches!(self.ca, CaState::Recovery | CaState::Loss) {
                let r = self.lr.rack;
                if self.cfg.mech.linux_rack_retrans
                    && self.cfg.mech.rack
                    && r.xmit_ts > SimTime::ZERO
                {
                    self.sb.rack_lost_retransmissions(r.xmit_ts, r.end_seq, r.rtt, reo, cx.now);
                } else {
                    self.sb.detect_lost_retransmissions(reo);
                }
            }
        }
        match self.ca {
            CaState::Open | CaState::Disorder => {
                // A late D-SACK can still show the last reduction spurious.
                if self.ca == CaState::Disorder && self.cfg.mech.undo && self.lr.undo.all_dsacked()
                {
                    self.undo_reduction(false, cx.now);
                }
                let loss_signalled = self.loss_signalled();
                // One reduction per window: no new recovery until the last one's data is acked.
                if loss_signalled && self.una >= self.recovery_point {
                    self.enter_recovery(cx);
                } else {
                    self.ca = self.open_or_disorder();
                }
            }
            CaState::Recovery => {
                if self.una >= self.recovery_point {
                    let undone = self.cfg.mech.undo && self.lr.undo.may_undo(ecr);
                    if undone {
                        self.undo_reduction(false, cx.now);
                    }
                    self.exit_recovery(!undone, cx.now);
                    // Linux's tcp_fastretrans_alert ends the state and runs the entry test
                    // on the same ACK.
                    if self.cfg.mech.linux_recovery_restart && self.loss_signalled() {
                        self.enter_recovery(cx);
                    }
                } else if self.try_undo_in_recovery(newly_cum, ecr, cx.now) {
                    // Spurious: back to the window before; the scoreboard carries on.
                } else {
                    match self.cfg.recovery {
                        Recovery::Sack => {}
                        Recovery::NewReno => {
                            if newly_cum > 0 {
                                // Partial ACK (RFC 6582): retransmit the next hole, deflate.
                                self.partial_acks += 1;
                                self.sb.mark_head_lost();
                                self.force_retransmit(cx);
                                if !self.cc.owns_cwnd() {
                                    let back = if newly_cum >= self.mss { self.mss } else { 0 };
                                    self.win.cwnd = (self.win.cwnd.saturating_sub(newly_cum)
                                        + back)
                                        .max(self.mss);
                                }
                            } else if is_dup && !self.cc.owns_cwnd() {
                                self.win.cwnd += self.mss; // inflation
                            }
                        }
                        Recovery::Reno => {
                            if newly_cum > 0 {
                                self.exit_recovery(true, cx.now);
                            } else if is_dup && !self.cc.owns_cwnd() {
                                self.win.cwnd += self.mss;
                            }
                        }
                    }
                }
            }
            CaState::Cwr => {
                let loss_signalled = self.loss_signalled();
                if loss_signalled {
                    self.cwr_to_recovery(cx);
                } else if self.una > self.recovery_point {
                    // Linux's tcp_end_cwnd_reduction once an ACK passes the SND.NXT of the
                    // echo (strictly: the ACK of CWR's own segment must reach the peer).
                    self.win.cwnd = self.win.ssthresh.max(self.mss);
                    self.ca = self.open_or_disorder();
                }
            }
            CaState::Loss => self.process_loss(newly_cum, is_dup, d, ecr, cx.now),
        }
        reo_armed
    }

    fn enter_recovery(&mut self, cx: &mut Cx) {
        let prior_ssthresh = self.current_ssthresh();
        self.lr.undo.start(
            self.una,
            self.sb.retrans_bytes.div_ceil(self.mss),
            self.win.cwnd,
            prior_ssthresh,
        );
        self.lr.prr.start(self.win.cwnd);
        self.lr.rack.tlp_high_seq = None;
        self.ca = CaState::Recovery;
        self.recovery_point = self.nxt;
        self.partial_acks = 0;
        self.stats.recoveries += 1;
        let ev = CongestionEvent {
            now: cx.now,
            kind: CongestionKind::FastRetransmit,
            flight_size: self.nxt - self.una,
            in_flight: self.in_flight(),
        };
        self.cc.on_congestion_event(&mut self.win, &ev);
        if !self.cc.owns_cwnd() {
            self.win.cwnd = match self.cfg.recovery {
                // RFC 6675: cwnd = ssthresh, then send while cwnd − pipe ≥ 1 SMSS.
                Recovery::Sack => self.win.ssthresh,
                // RFC 5681/6582: cwnd = ssthresh + 3 SMSS, inflated per dupACK.
                Recovery::NewReno | Recovery::Reno => self.win.ssthresh + 3 * self.mss,
            }
            .max(self.mss);
        }
        self.sb.mark_head_lost();
        let before = self.stats.bytes_retx;
        self.force_retransmit(cx);
        if self.cfg.mech.prr_linux_entry {
            self.prr_forced = self.stats.bytes_retx - before;
        }
    }

    /// Duplicate ACKs reached the threshold or loss detection marked a segment lost.
    #[inline]
    fn loss_signalled(&self) -> bool {
        self.dupacks >= DUPTHRESH || self.sb.lost_bytes > 0
    }

    /// The state outside recovery: Disorder while duplicates or SACKed data show a hole.
    #[inline]
    fn open_or_disorder(&self) -> CaState {
        if self.dupacks > 0 || self.sb.sacked_bytes > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        }
    }

    /// A loss while in CWR (Linux's tcp_enter_recovery when tcp_in_cwnd_reduction): recovery
    /// begins with the reduction already under way — no second ssthresh, PRR carries on.
    fn cwr_to_recovery(&mut self, cx: &mut Cx) {
        self.lr.undo.clear(); // nothing to undo: the reduction answered an ECN echo
        self.ca = CaState::Recovery;
        self.recovery_point = self.nxt;
        self.partial_acks = 0;
        self.stats.recoveries += 1;
        self.sb.mark_head_lost();
        self.force_retransmit(cx);
    }

    /// RFC 3168 §6.1.2: answer an ECN echo like a loss, at most once per window of data,
    /// without retransmitting; the next data segment carries CWR.
    fn on_ecn_echo(&mut self, cx: &mut Cx) {
        if !matches!(self.ca, CaState::Open | CaState::Disorder) || self.una < self.recovery_point {
            return;
        }
        self.recovery_point = self.nxt;
        self.lr.undo.clear(); // an ECN reduction is never undone
        self.stats.ecn_reductions += 1;
        let ev = CongestionEvent {
            now: cx.now,
            kind: CongestionKind::Ecn,
            flight_size: self.nxt - self.una,
            in_flight: self.in_flight(),
        };
        let prior_cwnd = self.win.cwnd;
        self.cc.on_congestion_event(&mut self.win, &ev);
        if self.cfg.mech.linux_cwr && !self.cc.owns_cwnd() {
            // Linux's tcp_enter_cwr: PRR takes cwnd down from here, starting with this ACK.
            self.ca = CaState::Cwr;
            self.lr.prr.start(prior_cwnd);
            self.lr.rack.tlp_high_seq = None;
        } else if !self.cc.owns_cwnd() {
            self.win.cwnd = self.win.ssthresh.max(self.mss);
        }
        // AccECN has no CWR signal: its counters need no acknowledgement.
        self.ecn.cwr_pending = self.ecn.mode == EcnMode::Classic;
    }

    /// Recovery is over; `set_cwnd`: the reduction stands (not undone), cwnd = ssthresh.
    fn exit_recovery(&mut self, set_cwnd: bool, now: SimTime) {
        self.ca = CaState::Open;
        self.lr.fr_due = false;
        self.dupacks = 0;
        if set_cwnd && !self.cc.owns_cwnd() {
            self.win.cwnd = self.win.ssthresh.max(self.mss);
        }
        self.cc.on_recovery_exit(&mut self.win, now);
    }

    /// Fast retransmit: the first presumed-lost segment goes out regardless of cwnd — with
    /// `paced_fast_retransmit`, at the pacing slot if that is still ahead (Linux's
    /// tcp_xmit_retransmit_queue checks tcp_pacing_check before every skb, the first too).
    fn force_retransmit(&mut self, cx: &mut Cx) {
        let next = self.sb.next_to_retransmit();
        if self.cfg.mech.paced_fast_retransmit
            && cx.now < self.next_send_at
            && self.pacing_rate().is_some_and(|r| r.0 > 0)
        {
            self.lr.fr_due = next.is_some();
            let at = self.next_send_at;
            self.set_timer(TimerKind::Pace, at, cx);
            return;
        }
        self.lr.fr_due = false;
        if let Some(i) = next {
            self.retransmit(i, cx);
        }
    }

    fn on_rto(&mut self, cx: &mut Cx) {
        match self.state {
            TcpState::SynSent | TcpState::SynRcvd => {
                self.stats.timeouts += 1;
                // Linux (tcp_retransmit_timer): an active open's first
                // `tcp_syn_linear_timeouts` timeouts keep the RTO; the SYN-ACK always backs off.
                let linear = self.state == TcpState::SynSent
                    && self.stats.timeouts <= self.cfg.syn_linear_timeouts as u64;
                if !linear {
                    self.rtt.back_off();
                }
                self.send_syn(true, cx);
            }
            s if s.sends() => {
                if self.una == self.nxt {
                    if self.cork_probe(cx) {
                        return;
                    }
                    let fits =
                        self.snd_wnd.min(self.mss).min(self.app_end.saturating_sub(self.nxt));
                    if self.cfg.mech.linux_zero_window_probe && fits > 0 {
                        // Linux's tcp_write_wakeup: the probe is the data that fits a window
                        // below one segment; no backoff once data is in flight.
                        self.send_new_segment(fits, false, cx);
                        return;
                    }
                    if self.nxt < self.app_end && self.snd_wnd == 0 {
                        self.rtt.back_off();
                        if self.cfg.mech.linux_zero_window_probe {
                            // Linux's probe: no data, SND.UNA − 1 (an old sequence number the
                            // peer answers with an ACK and its window).
                            self.emit(TcpFlags::ACK, self.una - 1, 0, SynOptions::default(), cx);
                            self.arm_rto(cx);
                        } else {
                            // Window probe (persist timer): one byte beyond the closed window.
                            self.send_new_segment(1, false, cx);
                        }
                    }
                    return;
                }
                self.stats.timeouts += 1;
                self.enter_loss(cx.now);
                self.rtt.back_off();
                self.next_send_at = cx.now;
                self.force_retransmit(cx);
                self.arm_rto(cx);
                self.try_send(cx);
            }
            _ => {}
        }
    }

    /// Internal consistency (tests).
    pub fn check_invariants(&self) -> bool {
        self.sb.check()
            && self.una <= self.nxt
            && self.nxt <= self.app_end.max(self.iss + 1) + self.close.fin_sent as u64
    }

    /// Time the first byte of the SYN was sent (for start-up metrics).
    pub fn rto_now(&self) -> Dur {
        self.rtt.rto()
    }
}

#[cfg(test)]
mod tests {
    //! Two endpoints joined by a lossless wire of fixed delay, with a hook to rewrite the
    //! packets the receiver sends (as a gateway would).
    use super::*;
    use crate::cc::{build, BuildCtx, CcSpec};
    use crate::engine::{SimRng, Stream};
    use crate::tcp::{Recovery, TcpCfg};
    use std::collections::VecDeque;

    fn cfg() -> TcpCfg {
        TcpCfg {
            mss: 1000,
            init_cwnd: 10,
            recovery: Recovery::Sack,
            delack: Dur::from_millis(40),
            ack_every: 2,
            rto_min: Dur::from_millis(200),
            rto_initial: Dur::from_secs(1),
            rto_max: Dur::from_secs(60),
            timestamps: true,
            rcvbuf: 1_000_000,
            window_max: 1_000_000,
            sndbuf: crate::tcp::SNDBUF_UNLIMITED,
            write_size: crate::tcp::WRITE_SIZE,
            pacing: false,
            slow_start_after_idle: true,
            syn_linear_timeouts: 0,
            nagle: false,
            ecn: EcnMode::Off,
            mech: crate::tcp::Mechanisms::default(),
            hz: crate::linux::DEFAULT_HZ,
        }
    }

    struct Wire {
        socks: [TcpSocket; 2],
        pool: PacketPool,
        events: EventQueue,
        now: SimTime,
        delay: Dur,
        flying: VecDeque<(SimTime, usize, PacketId)>,
        /// What endpoint 1 received (arrival, flags, seq, len) and the ACKs it sent (time, ack).
        to_1: Vec<(SimTime, u16, u64, u32)>,
        acks_from_1: Vec<(SimTime, u64)>,
    }

    impl Wire {
        fn with(c: &TcpCfg) -> Wire {
            let mk = |i: u32| {
                let cc = build(
                    &CcSpec::tcp("reno").unwrap(),
                    BuildCtx {
                        mss: 1000,
                        rng: SimRng::new(1, Stream::Endpoint, i as u64),
                        hz: crate::linux::DEFAULT_HZ,
                    },
                );
                TcpSocket::new(SockId(i), FlowId(0), RouteId(i), &Arc::new(c.clone()), cc)
            };
            Wire {
                socks: [mk(0), mk(1)],
                pool: PacketPool::default(),
                events: EventQueue::new(),
                now: SimTime::ZERO,
                delay: Dur::from_millis(10),
                flying: VecDeque::new(),
                to_1: Vec::new(),
                acks_from_1: Vec::new(),
            }
        }

        /// A wire whose socket 1 listens and socket 0 connects and writes `bytes` at once.
        fn bulk(c: &TcpCfg, bytes: u64) -> Wire {
            let mut w = Wire::with(c);
            w.call(1, |s, _| s.listen());
            w.call(0, |s, cx| {
                s.connect(cx);
                s.app_write(bytes, cx);
            });
            w
        }

        fn call(&mut self, i: usize, f: impl FnOnce(&mut TcpSocket, &mut Cx)) {
            let mut out = Vec::new();
            let mut cx = Cx {
                now: self.now,
                pool: &mut self.pool,
                events: &mut self.events,
                out: &mut out,
                channel: None,
            };
            f(&mut self.socks[i], &mut cx);
            for id in out {
                if i == 1 {
                    self.acks_from_1.push((self.now, self.pool.get(id).tcp().ack));
                }
                self.flying.push_back((self.now + self.delay, 1 - i, id));
            }
        }

        /// Runs until `until`, applying `rewrite` to every packet endpoint 1 sends.
        fn run(
            &mut self,
            until: SimTime,
            rewrite: &mut dyn FnMut(SimTime, &mut Packet),
            watch: &mut dyn FnMut(&TcpSocket),
        ) {
            loop {
                let next_pkt = self.flying.front().map(|f| f.0);
                let next_ev = self.events.peek_time();
                let t = match (next_pkt, next_ev) {
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) => a,
                    (None, Some(b)) => b,
                    (None, None) => break,
                };
                if t > until {
                    break;
                }
                self.now = t;
                if next_pkt == Some(t) {
                    let (_, to, id) = self.flying.pop_front().unwrap();
                    let mut p = *self.pool.get(id);
                    self.pool.free(id);
                    if to == 0 {
                        rewrite(t, &mut p);
                    } else {
                        let h = p.tcp();
                        self.to_1.push((t, h.flags.0, h.seq, h.len));
                    }
                    self.call(to, |s, cx| s.on_packet(&p, cx));
                } else {
                    let (_, ev) = self.events.pop().unwrap();
                    if let Event::Timer(s, k) = ev {
                        self.call(s.idx(), |sock, cx| sock.on_timer(k, cx));
                    }
                }
                watch(&self.socks[0]);
            }
        }
    }

    /// A gateway cuts the advertised window to 3 segments mid-transfer: the sender never
    /// retracts what it sent, sends nothing new beyond the new right edge, and finishes.
    #[test]
    fn sender_tolerates_a_shrinking_window() {
        let mut w = Wire::bulk(&cfg(), 1_000_000);
        w.socks[1].expect = Some(1_000_000);
        let cut = SimTime(Dur::from_millis(100).0);
        let mut rewrite = |t: SimTime, p: &mut Packet| {
            if t >= cut {
                let h = p.tcp_mut().unwrap();
                if !h.flags.has(TcpFlags::SYN) {
                    h.window = h.window.min((3000u64 >> 4) as u16); // rcvbuf 1 MB → shift 4
                }
            }
        };
        let mut nxt_at_cut: Option<u64> = None;
        let mut edge_ok = true;
        let mut retracted = false;
        let mut watch = |s: &TcpSocket| {
            if s.state == TcpState::Established && s.snd_wnd() <= 3000 {
                // After the cut is seen, new data never passes una + wnd; what was already
                // sent beyond it stays outstanding (nxt never moves back).
                let at_cut = *nxt_at_cut.get_or_insert(s.nxt);
                edge_ok &= s.nxt <= at_cut.max(s.una + s.snd_wnd());
                retracted |= s.nxt < at_cut;
            }
        };
        w.run(SimTime(Dur::from_secs(30).0), &mut rewrite, &mut watch);
        assert!(edge_ok, "new data was sent beyond the shrunken right edge");
        assert!(!retracted);
        assert!(nxt_at_cut.is_some());
        assert_eq!(w.socks[1].delivered(), 1_000_000, "transfer completes under the small window");
        assert!(w.socks[0].stats.timeouts == 0, "no timeouts from the shrink");
        // At most 3 segments per 20 ms round trip after the cut: ≥ 3 s for what was left.
        let done = w.socks[1].completed_at.unwrap();
        assert!(
            done > SimTime(Dur::from_secs(3).0),
            "3-segment window should slow the transfer, done at {done:?}"
        );
    }

    fn transfer_under(
        rewrite: &mut dyn FnMut(SimTime, &mut Packet),
        bytes: u64,
    ) -> (TcpSocket, TcpSocket) {
        let mut w = Wire::bulk(&cfg(), bytes);
        w.socks[1].expect = Some(bytes);
        w.run(SimTime(Dur::from_secs(120).0), rewrite, &mut |_| {});
        let [a, b] = w.socks;
        (a, b)
    }

    /// A window below one segment (a gateway's cut, rounded by window scaling) with nothing in
    /// flight: the sender sends what fits instead of stalling.
    #[test]
    fn sender_progresses_under_a_window_below_one_segment() {
        let mut rewrite = |_: SimTime, p: &mut Packet| {
            let h = p.tcp_mut().unwrap();
            if !h.flags.has(TcpFlags::SYN) {
                h.window = h.window.min((600u64 >> 4) as u16); // 592 B after scaling by 16
            }
        };
        let (a, b) = transfer_under(&mut rewrite, 20_000);
        assert_eq!(b.delivered(), 20_000);
        assert_eq!(a.stats.timeouts, 0);
    }

    /// A 20 kB send buffer and 8 kB writes: never more than the buffer unacknowledged, all
    /// of a 300 kB write delivered, and a shutdown made while most of it waits for the buffer
    /// sends its FIN after the last byte.
    #[test]
    fn a_send_buffer_holds_what_is_unacknowledged_and_a_shutdown_waits_for_the_rest() {
        let c = TcpCfg { sndbuf: 20_000, write_size: 8_000, ..cfg() };
        for shutdown in [false, true] {
            let mut w = Wire::bulk(&c, 300_000);
            w.socks[1].expect = Some(300_000);
            let mut most = 0;
            let mut watch = |s: &TcpSocket| most = most.max(s.unacked_bytes());
            // The handshake takes one 20 ms round trip; then the application shuts down.
            w.run(SimTime(Dur::from_millis(30).0), &mut |_, _| {}, &mut watch);
            if shutdown {
                w.call(0, |s, cx| s.shutdown_write(cx));
            }
            w.run(SimTime(Dur::from_secs(60).0), &mut |_, _| {}, &mut watch);
            assert_eq!(w.socks[1].delivered(), 300_000, "shutdown {shutdown}");
            if shutdown {
                assert!(w.socks[1].peer_closed(), "the FIN follows the last byte");
            } else {
                // Written while at most 2/3 of the buffer is queued, up to the buffer.
                assert!(most <= 20_000 && most > 13_000, "at most {most} B unacknowledged");
            }
        }
    }

    /// `psh` (Linux 6.x): the sender marks the last segment of each skb of two or more
    /// segments and the end of the write, and the receiver acknowledges a segment with PSH the
    /// moment it arrives instead of holding it for a partner or the delayed-ACK timer. Off:
    /// no PSH on the wire.
    #[test]
    fn psh_marks_skb_ends_and_the_receiver_acks_it_at_once() {
        for psh in [false, true] {
            let mut c = cfg();
            c.mech.psh = psh;
            let mut w = Wire::bulk(&c, 100_500);
            w.run(SimTime(Dur::from_secs(10).0), &mut |_, _| {}, &mut |_| {});
            let data: Vec<_> = w.to_1.iter().filter(|d| d.3 > 0).collect();
            let marked: Vec<_> = data.iter().filter(|d| d.1 & TcpFlags::PSH != 0).collect();
            assert_eq!(w.socks[1].delivered(), 100_500);
            if !psh {
                assert!(marked.is_empty());
                continue;
            }
            let last = data.iter().max_by_key(|d| d.2).unwrap();
            assert!(last.1 & TcpFlags::PSH != 0 && last.3 == 500, "the write's end is marked");
            // Slow start on this wire sends skbs of 2 to 5 segments.
            let share = marked.len() as f64 / data.len() as f64;
            assert!((0.15..0.6).contains(&share), "{} of {} marked", marked.len(), data.len());
            for &&&(t, _, seq, len) in &marked {
                let end = seq + len as u64;
                assert!(
                    w.acks_from_1.iter().any(|&(at, ack)| at == t && ack >= end),
                    "the PSH segment ending at {end} is acknowledged on arrival"
                );
            }
        }
    }

    /// Linux's receiver ACKs every segment that raises rcv_ssthresh (`tcp_grow_window`:
    /// `quick |= 1`), so while autotuning opens the window each segment is ACKed alone: 94 %
    /// of the advancing ACKs of the first 3 s in the emulator's Linux 6.18 receiver (validate
    /// cell `reno-droptail-b2-rtt150-loss1-f1-r100`). Without the rule, every second one.
    #[test]
    fn a_growing_window_acks_every_segment() {
        for grow_quickack in [false, true] {
            let mut c = cfg();
            c.mech.grow_quickack = grow_quickack;
            let mut w = Wire::bulk(&c, 2_000_000);
            w.run(SimTime(Dur::from_secs(20).0), &mut |_, _| {}, &mut |_| {});
            assert_eq!(w.socks[1].delivered(), 2_000_000);
            let mss = w.socks[0].mss;
            // The share of advancing ACKs that acknowledge one segment, between two sequence
            // numbers, after the connection's 16 quick ACKs.
            let single_share = |from: u64, to: u64| {
                let (mut single, mut advancing, mut last) = (0u32, 0u32, 0);
                for &(_, ack) in w.acks_from_1.iter().skip(20) {
                    if ack > last && last > 0 && ack > from && ack <= to {
                        advancing += 1;
                        single += u32::from(ack - last == mss);
                    }
                    last = last.max(ack);
                }
                f64::from(single) / f64::from(advancing)
            };
            // The window opens toward its 1 MB cap over the first ~500 kB of this transfer.
            let opening = single_share(0, 400_000);
            let open = single_share(800_000, 2_000_000);
            if grow_quickack {
                assert!(opening > 0.8, "while the window opens: {opening:.2} single");
            } else {
                assert!(opening < 0.2, "without the rule: {opening:.2} single");
            }
            assert!(open < 0.2, "once the window is open: {open:.2} single");
        }
    }

    /// A window closed to zero for a second: the persist probe finds it open again.
    #[test]
    fn zero_window_is_probed_until_it_opens() {
        let reopen = SimTime(Dur::from_millis(1500).0);
        let mut rewrite = |t: SimTime, p: &mut Packet| {
            let h = p.tcp_mut().unwrap();
            if !h.flags.has(TcpFlags::SYN) && t >= SimTime(Dur::from_millis(50).0) && t < reopen {
                h.window = 0;
            }
        };
        let (_, b) = transfer_under(&mut rewrite, 2_000_000);
        assert_eq!(b.delivered(), 2_000_000);
        assert!(b.completed_at.unwrap() > reopen);
    }

    /// What the layout is for, as bounds (a new field fails them only where it costs): the
    /// socket is line-aligned (else the line numbers the event loop prefetches are not the
    /// machine's), a data segment's receiver touches a few lines at the front, a timer few.
    #[test]
    fn the_hot_paths_stay_within_a_few_lines() {
        const LINE: usize = 64;
        assert_eq!(
            std::mem::align_of::<TcpSocket>(),
            LINE,
            "TcpSocket must be aligned to a cache line: RECEIVE_LINES and TIMER_LINES count lines \
             from its start"
        );
        let receive = TcpSocket::RECEIVE_LINES.count_ones();
        assert!(
            receive <= 12,
            "a data segment's delivery touches {receive} of the socket's lines (at most 12): a \
             field the receiver does not read belongs after `lr`, in the send half or the rare part"
        );
        assert_eq!(
            TcpSocket::RECEIVE_LINES,
            (1 << receive) - 1,
            "the receiver's lines must be the socket's first ones"
        );
        let timer = TcpSocket::TIMER_LINES.count_ones();
        assert!(
            timer <= 3,
            "a timer event touches {timer} lines (at most 3: the first, and `timers`' 48 bytes)"
        );
        let size = std::mem::size_of::<TcpSocket>();
        assert!(
            size <= 32 * LINE,
            "TcpSocket is {size} bytes (at most 2 kB): every flow has two, and an idle flow's \
             memory is mostly them (docs/performance.md)"
        );
    }

    /// Linux's pacing credit (tcp_update_skb_after_send): an skb of length L sent c after
    /// its slot owes L − min(L / 2, c) to the next; here a GSO burst of two 1 ms segments.
    #[test]
    fn a_late_burst_owes_its_length_less_the_lateness_at_most_half() {
        let ms = |x: f64| Dur((x * 1e6) as u64);
        let owed = |late_ms: f64| {
            let mut c = cfg();
            c.mech.pacing_credit = true;
            let mut s = Wire::with(&c).socks.into_iter().next().unwrap();
            s.next_send_at = SimTime(10_000_000);
            let now = s.next_send_at + ms(late_ms);
            for _ in 0..2 {
                let gap = s.pacing_credit_cut(ms(1.0), now);
                s.next_send_at = s.next_send_at.max(now) + gap;
                s.last_send_at = now;
            }
            s.next_send_at.since(now)
        };
        assert_eq!(owed(0.0), ms(2.0), "on time: the whole burst");
        assert_eq!(owed(0.3), ms(1.7), "0.3 ms late: 0.3 ms less");
        assert_eq!(owed(1.0), ms(1.0), "late by half the burst: half");
        assert_eq!(owed(5.0), ms(1.0), "later still: never less than half");
    }
}
