//! Corking and Nagle's algorithm: TCP_CORK and MSG_MORE hold a partial segment back until more
//! data fills it; without TCP_NODELAY, Nagle's algorithm holds it while an earlier small segment
//! is unacknowledged.
//!
//! Sources: Linux's tcp(7) man page (TCP_CORK: "If set, don't send out partial frames. All
//! queued partial frames are sent when the option is cleared again"; TCP_NODELAY forces an
//! explicit push of pending output, even if corked) and send(2) (MSG_MORE: "The caller has
//! more data to send ... the same effect as TCP_CORK" for this call). Linux facts (net/ipv4/
//! tcp.c tcp_push, __tcp_sock_set_cork, __tcp_sock_set_nodelay; tcp_output.c tcp_nagle_test,
//! tcp_check_probe_timer, tcp_write_wakeup; read for facts only): the hold applies to the
//! sub-MSS tail only — full segments go out; MSG_MORE holds only in the push of that call
//! (a later push, e.g. on an ACK, follows the socket's own Nagle mode); with nothing in
//! flight the held tail is sent by the zero-window-probe timer (armed for max(RTO, 200 ms))
//! when it fires; clearing TCP_CORK or setting TCP_NODELAY pushes at once.
//!
//! Nagle's algorithm (RFC 896; RFC 1122 §4.2.3.4) as Linux runs it (`tcp_nagle_check`,
//! `tcp_minshall_check`, `tcp_minshall_update`): Minshall's variant, which holds a sub-MSS
//! segment only while the last *small* segment sent is unacknowledged (SND.SML, the end of
//! the last sub-MSS new-data segment, above SND.UNA), not while any data is; a segment with
//! nothing in flight, or one that carries the FIN, goes at once. On in a socket without
//! TCP_NODELAY (`tcp.nagle = true`; the packetdrill runner's sockets, as Linux's); the
//! simulated applications set TCP_NODELAY by default, as browsers and Go's net package do.
//!
//! Simplified: TCP_NODELAY's push overrides the cork for that push only (Linux keeps its
//! TCP_NAGLE_PUSH bit until the next push); Linux's autocorking (which holds a small tail
//! while an earlier skb of the socket is still in the local qdisc or NIC) is not modelled;
//! and no simulated application corks. Nagle reaches a bulk flow only where its send buffer
//! binds (the tail of the last write leaves as a sub-MSS segment: docs/tcp.md).

use super::{Cx, TcpSocket, TcpState};

/// TCP_CORK / MSG_MORE state (rarely read: at the socket's end).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cork {
    /// TCP_CORK is set.
    corked: bool,
    /// The write in progress was given MSG_MORE.
    more: bool,
    /// A tail is held with nothing in flight: the probe timer (the RTO slot) sends it.
    pub(super) held: bool,
    /// Nagle's algorithm is on (no TCP_NODELAY).
    pub(super) nagle: bool,
    /// `tcp.psh`: the end of the last write that pushed (its segment carries PSH); 0: none.
    pub(super) push_at: u64,
    /// SND.SML: the end of the last sub-MSS new-data segment sent (Linux's `snd_sml`).
    pub(super) snd_sml: u64,
}

impl Cork {
    /// A socket's, with Nagle's algorithm on or (TCP_NODELAY) off.
    pub(super) fn new(nagle: bool) -> Cork {
        Cork { nagle, ..Cork::default() }
    }
}

impl TcpSocket {
    /// Whether a sub-MSS segment must wait (TCP_CORK, or MSG_MORE during its own write).
    #[inline]
    pub(super) fn cork_holds(&self) -> bool {
        (self.cork.corked || self.cork.more)
            && matches!(self.state, TcpState::Established | TcpState::CloseWait)
    }

    /// Whether Nagle's algorithm holds a sub-MSS segment now: data in flight and the last
    /// small segment among it (Linux's tcp_nagle_check with tcp_minshall_check).
    #[inline]
    pub(super) fn nagle_holds(&self) -> bool {
        self.cork.nagle
            && self.una < self.nxt
            && self.cork.snd_sml > self.una
            && self.cork.snd_sml <= self.nxt
    }

    /// try_send held a sub-MSS tail: with nothing in flight, Linux's tcp_check_probe_timer
    /// arms the probe timer, whose expiry sends the tail (tcp_write_wakeup).
    pub(super) fn cork_hold(&mut self, cx: &mut Cx) {
        if self.una == self.nxt {
            self.cork.held = true;
            if !self.timer_armed(crate::engine::TimerKind::Rto) {
                self.arm_rto(cx);
            }
        }
    }

    /// The probe timer fired with a held tail and nothing in flight: send it regardless of
    /// the cork (tcp_write_wakeup). Returns whether this was such a timer.
    pub(super) fn cork_probe(&mut self, cx: &mut Cx) -> bool {
        if !self.cork.held || self.nxt >= self.app_end || self.snd_wnd == 0 {
            return false;
        }
        self.cork.held = false;
        self.push_ignoring_cork(cx);
        true
    }

    fn push_ignoring_cork(&mut self, cx: &mut Cx) {
        let c = self.cork;
        self.cork.corked = false;
        self.cork.more = false;
        self.try_send(cx);
        self.cork.corked = c.corked;
        self.cork.more = c.more;
    }

    /// `psh`: a write ended at `app_end`. Its first bytes join the unsent tail, whose earlier
    /// PSH Linux clears (tcp_sendmsg_locked); its end is pushed unless it had MSG_MORE.
    #[inline]
    pub(super) fn note_write(&mut self) {
        if self.cfg.mech.psh {
            self.cork.push_at = if self.cork.more { 0 } else { self.app_end };
        }
    }

    /// The application writes `bytes`; `more`: with MSG_MORE (the tail waits for the next
    /// write unless a full segment forms).
    pub fn app_write_more(&mut self, bytes: u64, more: bool, cx: &mut Cx) {
        self.cork.more = more;
        self.app_write(bytes, cx);
        self.cork.more = false;
    }

    /// setsockopt TCP_CORK: clearing it sends what was held.
    pub fn set_cork(&mut self, on: bool, cx: &mut Cx) {
        self.cork.corked = on;
        if !on && self.state.sends() {
            self.try_send(cx);
        }
    }

    /// setsockopt TCP_NODELAY: 1 turns Nagle's algorithm off and pushes pending output at
    /// once, even if corked; 0 turns it on.
    pub fn set_nodelay(&mut self, on: bool, cx: &mut Cx) {
        self.cork.nagle = !on;
        if on && self.state.sends() {
            self.push_ignoring_cork(cx);
        }
    }

    /// Payload bytes written but not yet sent (held by the cork, or waiting for the window).
    pub fn unsent_bytes(&self) -> u64 {
        self.app_end.saturating_sub(self.nxt)
    }
}
