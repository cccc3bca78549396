//! Connection teardown: close(), shutdown() half-close, the FIN in both directions and RST.
//!
//! Sources: RFC 9293 §3.3.2 (the state machine: FIN-WAIT-1/2, CLOSING, TIME-WAIT,
//! CLOSE-WAIT, LAST-ACK), §3.10.4 (CLOSE), §3.10.7 (segment arrival: RST, FIN, the reset
//! a closed connection answers with), §3.6 (the FIN occupies one sequence number and is
//! retransmitted like data), RFC 5961 §3.2 (an in-window RST not at RCV.NXT gets a challenge
//! ACK). Linux facts (net/ipv4/tcp.c tcp_close/tcp_shutdown/tcp_send_fin, tcp_input.c
//! tcp_fin/tcp_rcv_state_process/tcp_reset, read for facts only): close() with unread data
//! sends RST|ACK and drops the connection; the FIN rides on the last unsent data segment,
//! otherwise a bare FIN goes out at once whatever the congestion window (tcp_cwnd_test's
//! "final FIN" rule); an in-order FIN is ACKed at once; a segment that acknowledges data
//! never sent is dropped silently.
//!
//! Simplified: TIME-WAIT never expires (no 2·MSL timer: nothing reuses the 4-tuple in the
//! simulator), FIN-WAIT-2 has no orphan timeout, a FIN that arrives out of order is dropped
//! (the peer retransmits it), and a closed connection keeps no state beyond answering with RST.
//!
//! None of this runs in a simulated bulk flow (they never close): every hook below sits
//! behind `state != Established`, which the hot paths read anyway.

use super::{Cx, TcpSocket, TcpState};
use crate::engine::TimerKind;
use crate::net::{SynOptions, TcpFlags, TcpHeader};
use crate::tcp::scoreboard::{self, Seg};

/// RST's bit in the TCP flags (RFC 9293 §3.1).
pub const RST: u16 = 0x04;

/// Teardown state beyond [`TcpState`] (rarely read: at the socket's end).
#[derive(Debug, Clone, Copy)]
pub(super) struct CloseState {
    /// Sequence number of our FIN once the application closed its sending half (SND.NXT of
    /// the last written byte + 1), u64::MAX before.
    pub fin_at: u64,
    /// The FIN has been sent (it is in the scoreboard as one sequence number).
    pub fin_sent: bool,
    /// The peer's FIN arrived in order (reads return 0 after the data).
    pub peer_fin: bool,
    /// The connection was reset (by the peer's RST or our abort).
    pub reset: bool,
    /// The connection existed and is gone: segments are answered with RST.
    pub dead: bool,
}

impl Default for CloseState {
    fn default() -> Self {
        CloseState { fin_at: u64::MAX, fin_sent: false, peer_fin: false, reset: false, dead: false }
    }
}

/// Why a call on a torn-down socket fails (the errno Linux returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SockError {
    /// The sending half is shut down (write after shutdown(SHUT_WR)/close: EPIPE).
    Pipe,
    /// The peer reset the connection (ECONNRESET, reported once, then EPIPE).
    Reset,
}

impl TcpState {
    /// States in which the socket may still (re)transmit data or its FIN.
    #[inline]
    pub fn sends(self) -> bool {
        matches!(
            self,
            TcpState::Established
                | TcpState::CloseWait
                | TcpState::FinWait1
                | TcpState::Closing
                | TcpState::LastAck
        )
    }

    /// Synchronized states (RFC 9293 §3.3.2): segments are processed as on a connection.
    #[inline]
    pub fn synchronized(self) -> bool {
        self.sends() || matches!(self, TcpState::FinWait2 | TcpState::TimeWait)
    }

    /// Linux's tcp_states numbering (TCP_INFO's tcpi_state).
    pub fn linux_number(self) -> u8 {
        match self {
            TcpState::Established => 1,
            TcpState::SynSent => 2,
            TcpState::SynRcvd => 3,
            TcpState::FinWait1 => 4,
            TcpState::FinWait2 => 5,
            TcpState::TimeWait => 6,
            TcpState::Closed => 7,
            TcpState::CloseWait => 8,
            TcpState::LastAck => 9,
            TcpState::Listen => 10,
            TcpState::Closing => 11,
        }
    }
}

impl TcpSocket {
    // ----- application calls ---------------------------------------------------------

    /// shutdown(SHUT_WR): no more data; the FIN follows what was written (RFC 9293 §3.10.4).
    pub fn shutdown_write(&mut self, cx: &mut Cx) {
        let next = match self.state {
            TcpState::Established | TcpState::SynRcvd => TcpState::FinWait1,
            TcpState::CloseWait => TcpState::LastAck,
            TcpState::SynSent | TcpState::Listen => {
                self.drop_connection();
                return;
            }
            _ => return, // already shut down, or closed
        };
        // A shutdown follows the application's last write, which a blocking write returns
        // from only once it is all in the socket: what still waits for the send buffer joins.
        self.app_end = self.app_end.saturating_add(std::mem::take(&mut self.app_pending));
        self.close.fin_at = self.app_end;
        self.state = next;
        self.try_send(cx);
    }

    /// close(): with data the application never read, abort with RST|ACK as Linux does
    /// (RFC 9293 §3.10.4 allows either); otherwise shut down the sending half.
    pub fn close(&mut self, unread: bool, cx: &mut Cx) {
        if unread && self.state.synchronized() && !matches!(self.state, TcpState::TimeWait) {
            self.emit(RST | TcpFlags::ACK, self.nxt, 0, SynOptions::default(), cx);
            self.drop_connection();
            return;
        }
        self.shutdown_write(cx);
    }

    /// Whether a write fails, and how (EPIPE after the sending half closed, ECONNRESET once
    /// after a reset).
    pub fn write_error(&mut self) -> Option<SockError> {
        if self.close.reset {
            return Some(SockError::Reset);
        }
        (self.close.fin_at != u64::MAX || self.close.dead).then_some(SockError::Pipe)
    }

    /// The peer's FIN arrived (a read with nothing left returns 0).
    pub fn peer_closed(&self) -> bool {
        self.close.peer_fin
    }

    /// The peer reset the connection.
    pub fn was_reset(&self) -> bool {
        self.close.reset
    }

    /// The TCB is gone: closed after a connection, answering with RST.
    fn drop_connection(&mut self) {
        self.state = TcpState::Closed;
        self.close.dead = true;
        // A reset from a connection that no longer exists carries no timestamp (Linux sends
        // it without a socket).
        self.ts_ok = false;
        for k in [TimerKind::Rto, TimerKind::DelAck, TimerKind::Pace] {
            self.clear_timer(k);
        }
    }

    // ----- output --------------------------------------------------------------------

    /// try_send in a closing state: what Established sends, then a bare FIN once every
    /// written byte has gone out.
    pub(super) fn try_send_closing(&mut self, cx: &mut Cx) {
        self.try_send_data(cx);
        let c = self.close;
        if c.fin_at != u64::MAX && !c.fin_sent && self.nxt == c.fin_at {
            // The final FIN is not held back by the congestion window (Linux tcp_cwnd_test).
            self.send_fin_segment(0, cx);
        }
    }

    /// A new segment of `len` data bytes from SND.NXT; in a closing state it carries the FIN
    /// when it ends at the last written byte.
    pub(super) fn send_fin_segment(&mut self, len: u64, cx: &mut Cx) {
        let seq = self.nxt;
        // A FIN alone is a new skb without PSH (tcp_send_fin); on data, the data's rule.
        let psh = len > 0 && self.holds_write_end(seq, len);
        let stamp = self.rate.on_send(cx.now, self.sb.is_empty());
        let flags = if psh { scoreboard::PUSH } else { 0 };
        self.sb.push(Seg::new(seq, seq + len + 1, cx.now, flags, stamp));
        self.nxt += len + 1;
        self.close.fin_sent = true;
        self.send_data(seq, len + 1, false, psh, cx);
        self.schedule_probe(cx);
    }

    /// Whether a segment [seq, seq+len) of the sequence space holds our FIN (its last
    /// number), to be sent with FIN set and one byte less payload.
    #[inline]
    pub(super) fn holds_fin(&self, seq: u64, len: u64) -> bool {
        self.state != TcpState::Established
            && self.close.fin_sent
            && seq + len == self.close.fin_at + 1
    }

    // ----- input ---------------------------------------------------------------------

    /// A segment with SYN, FIN or RST in a synchronized state, or any segment once the
    /// connection is gone. Returns true when it was handled here (no further processing).
    pub(super) fn on_special(&mut self, h: &TcpHeader, cx: &mut Cx) -> bool {
        if self.close.dead {
            self.answer_with_reset(h, cx);
            return true;
        }
        if h.flags.has(RST) {
            // RFC 5961 §3.2: only a reset at RCV.NXT aborts; one elsewhere in the window
            // draws a challenge ACK.
            if h.seq == self.rcv_nxt {
                self.close.reset = true;
                self.drop_connection();
                self.close.dead = false; // a reset connection answers nothing
            } else if h.seq > self.rcv_nxt && h.seq < self.rcv_nxt + self.adv_window().max(1) {
                self.send_ack(cx);
            }
            return true;
        }
        false
    }

    /// After the segment's ACK and data: our FIN acknowledged, the peer's FIN in order.
    pub(super) fn after_segment(&mut self, h: &TcpHeader, data_acked: bool, cx: &mut Cx) {
        if self.close.fin_sent && self.una > self.close.fin_at {
            self.state = match self.state {
                TcpState::FinWait1 => TcpState::FinWait2,
                TcpState::Closing => TcpState::TimeWait,
                TcpState::LastAck => {
                    self.drop_connection();
                    return;
                }
                s => s,
            };
        }
        if !h.flags.has(TcpFlags::FIN) {
            return;
        }
        let fin_seq = h.seq + h.len as u64;
        if fin_seq < self.rcv_nxt && self.close.peer_fin {
            self.send_ack(cx); // a retransmitted FIN: ACK it again
            return;
        }
        if fin_seq != self.rcv_nxt {
            return; // out of order (or the data before it was not taken): dropped
        }
        if data_acked
            && cx.out.last().is_some_and(|&id| {
                let p = cx.pool.get(id);
                let t = p.tcp();
                t.len == 0 && t.flags.0 & (TcpFlags::SYN | TcpFlags::FIN | RST) == 0
            })
        {
            // The data's own ACK is superseded by the one that covers the FIN (one ACK).
            let id = cx.out.pop().expect("checked");
            cx.pool.free(id);
            self.stats.pkts_sent -= 1;
        }
        // Data received before this FIN (Linux's delayed-ACK engine starts with the first).
        let got_data = self.rcv_nxt > self.irs + 1;
        self.rcv_nxt += 1;
        self.close.peer_fin = true;
        let open = matches!(self.state, TcpState::Established | TcpState::SynRcvd);
        self.state = match self.state {
            TcpState::Established | TcpState::SynRcvd => TcpState::CloseWait,
            TcpState::FinWait1 => TcpState::Closing,
            TcpState::FinWait2 => TcpState::TimeWait,
            s => s,
        };
        if open && self.cfg.mech.psh && got_data {
            // `psh`'s ping-pong rules: Linux's tcp_fin puts an open connection in ping-pong
            // mode and only schedules the ACK (delayed), expecting the application's answer
            // to carry it. Before any data the delayed-ACK timeout is still 0 (icsk_ack.ato
            // starts with the first data segment), so the ACK goes at once, as it does for a
            // FIN in FIN-WAIT.
            self.lr.pingpong = true;
            self.schedule_delack(cx);
            return;
        }
        self.send_ack(cx);
    }

    /// RFC 9293 §3.10.7.1: a closed connection answers a non-RST segment with RST:
    /// <SEQ=SEG.ACK><CTL=RST> if it has an ACK, else <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>.
    fn answer_with_reset(&mut self, h: &TcpHeader, cx: &mut Cx) {
        if h.flags.has(RST) {
            return;
        }
        if h.flags.has(TcpFlags::ACK) {
            self.emit(RST, h.ack, 0, SynOptions::default(), cx);
        } else {
            let syn = h.flags.has(TcpFlags::SYN) as u64;
            let fin = h.flags.has(TcpFlags::FIN) as u64;
            self.rcv_nxt = h.seq + h.len as u64 + syn + fin;
            self.emit(RST | TcpFlags::ACK, 0, 0, SynOptions::default(), cx);
        }
    }
}

impl TcpSocket {
    /// A segment in a teardown state, or one with FIN or RST on an established connection.
    pub(super) fn on_teardown_segment(&mut self, h: &TcpHeader, ecn: crate::net::Ecn, cx: &mut Cx) {
        if self.on_special(h, cx) {
            return;
        }
        if h.flags.has(TcpFlags::SYN) {
            self.send_ack(cx); // a retransmitted SYN-ACK
            return;
        }
        if h.flags.has(TcpFlags::ACK) && h.ack > self.nxt {
            // Acknowledges what was never sent: dropped whole, TS.Recent untouched (Linux
            // tcp_ack's "unsent data" case).
            return;
        }
        self.on_established_segment(h, ecn, cx);
        self.after_segment(h, h.len > 0, cx);
    }
}
