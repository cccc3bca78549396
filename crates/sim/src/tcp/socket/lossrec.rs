//! The socket's use of Linux's recovery refinements (tcp/recovery): D-SACK on both sides,
//! undo of spurious reductions, F-RTO after a timeout, PRR during recovery, RACK's loss
//! marking and reordering timer, and the tail loss probe.

use super::{Cx, TcpSocket, DUPTHRESH};
use crate::cc::{CaState, CongestionEvent, CongestionKind};
use crate::net::SackBlocks;
use crate::tcp::rate::RateSampler;
use crate::tcp::recovery::{tick_expiry, Rack, XmitTimer, MAX_QUICKACKS, TIMEOUT_MIN};
use crate::tcp::scoreboard::{Seg, EVER_RETRANS};
use crate::tcp::Recovery;
use crate::units::{Dur, SimTime};
use std::sync::Arc;

/// What one ACK delivered, as loss recovery and RTT sampling need it.
#[derive(Debug, Default)]
pub(super) struct Delivered {
    /// Bytes newly delivered (cumulatively or by SACK).
    pub acked: u64,
    /// Send times of the oldest and newest never-retransmitted segments newly delivered,
    /// by the cumulative ACK and by SACK (Linux's first/last_ackt and first/last_sackt).
    pub cum_clean: Option<(SimTime, SimTime)>,
    pub sack_clean: Option<(SimTime, SimTime)>,
    /// The cumulative ACK covered a segment that was ever retransmitted (Karn).
    pub retrans_acked: bool,
    /// F-RTO: data sent before the timeout and never retransmitted was delivered.
    pub orig: bool,
    pub frto_high: u64,
    /// A never-retransmitted segment arrived below one already SACKed (reordering).
    pub reordered: bool,
    /// The lowest such segment's start (Linux's state->reord), for the reordering degree.
    pub reorder_low: u64,
    pub high_sacked: u64,
}

impl Delivered {
    /// `seg` was newly delivered, by SACK (`sacked`) or by the cumulative ACK.
    #[inline]
    pub fn note(
        &mut self,
        seg: &Seg,
        sacked: bool,
        now: SimTime,
        min_rtt: Option<Dur>,
        rate: &mut RateSampler,
        rack: &mut Rack,
    ) {
        rate.on_delivered(seg.len(), seg.sent_at, &seg.stamp());
        self.acked += seg.len();
        let retx = seg.has(EVER_RETRANS);
        rack.on_delivered(seg.sent_at, seg.end(), retx, now, min_rtt);
        if retx {
            return;
        }
        let slot = if sacked { &mut self.sack_clean } else { &mut self.cum_clean };
        *slot =
            Some(slot.map_or((seg.sent_at, seg.sent_at), |(a, b)| {
                (a.min(seg.sent_at), b.max(seg.sent_at))
            }));
        self.orig |= seg.end() <= self.frto_high;
        if seg.end() < self.high_sacked {
            self.reordered = true;
            self.reorder_low = self.reorder_low.min(seg.start);
        }
    }
}

impl TcpSocket {
    /// A never-retransmitted segment starting at `low` was delivered below the highest SACKed
    /// sequence: Linux's tcp_check_sack_reordering raises the reordering degree to the
    /// distance in segments (at most tcp_max_reordering = 300). Reported, not acted on: the
    /// simulator's loss detection is RACK's or the fixed DupThresh of 3.
    pub(super) fn note_reordering(&mut self, low: u64) {
        let fack = self.sb.high_sacked;
        if low >= fack {
            return;
        }
        let metric = fack - low;
        if metric > self.reordering as u64 * self.mss && self.mss > 0 {
            self.reordering = metric.div_ceil(self.mss).min(300) as u32;
        }
        self.reord_seen += 1;
    }

    /// TCP_QUICKACK 0: delayed ACKs from now on, also after duplicates (Linux's ping-pong).
    pub fn leave_quickack_mode(&mut self) {
        self.lr.quickacks = 0;
        Arc::make_mut(&mut self.cfg).mech.quickack = false;
    }

    // ----- D-SACK ----------------------------------------------------------------------

    /// Receiver: [start, end) arrived again; report it in the next ACK's first SACK block.
    pub(super) fn note_duplicate(&mut self, start: u64, end: u64) {
        if self.sack_ok && self.cfg.mech.dsack {
            self.lr.dsack = Some((start, end));
            self.lstats.dsacks_sent += 1;
        }
        if self.cfg.mech.quickack {
            self.lr.quickacks = MAX_QUICKACKS;
        }
    }

    /// The SACK option of an outgoing ACK: a pending D-SACK block first (RFC 2883), then
    /// the out-of-order blocks.
    pub(super) fn sack_option(&mut self) -> SackBlocks {
        match self.lr.dsack.take() {
            None => self.ooo.sack_blocks(),
            Some(d) => {
                let mut out = SackBlocks::default();
                out.push(d);
                for &b in self.ooo.sack_blocks().as_slice() {
                    out.push(b);
                }
                out
            }
        }
    }

    /// Sender: is the first block a D-SACK (RFC 2883 §4: below the cumulative ACK, or
    /// inside the second block)?
    pub(super) fn dsack_block(&self, blocks: &[(u64, u64)], ack: u64) -> Option<(u64, u64)> {
        let &first = blocks.first()?;
        let inside_second = blocks.get(1).is_some_and(|&(s, e)| s <= first.0 && first.1 <= e);
        (first.1 <= ack || inside_second).then_some(first)
    }

    pub(super) fn on_dsack(&mut self, (start, end): (u64, u64)) {
        self.lstats.dsacks_received += 1;
        let segs = (end - start).div_ceil(self.mss).max(1) as i64;
        self.lr.undo.on_dsack(end, segs);
    }

    /// An ACK arrived while the timer slot held the probe or the reordering timer: it
    /// becomes the RTO again, counted from the first segment's latest transmission (Linux
    /// tcp_ack → tcp_rearm_rto); RACK and the probe may take it back on this same ACK.
    pub(super) fn rto_from_head(&mut self, cx: &mut Cx) {
        if self.lr.xmit_timer == XmitTimer::Rto || !self.timer_armed(crate::engine::TimerKind::Rto)
        {
            return;
        }
        let head = self.sb.front().map_or(cx.now, |s| s.sent_at);
        let at = (head + self.rtt.rto()).max(cx.now);
        self.set_xmit_timer(XmitTimer::Rto, at, cx);
    }

    // ----- RTT samples -----------------------------------------------------------------

    /// (sample for SRTT/RTO, sample for the controller). Linux (tcp_clean_rtx_queue,
    /// tcp_ack_update_rtt): SRTT from the oldest newly acknowledged never-retransmitted
    /// segment (cumulative first, unless retransmitted data was also acked; else SACKed), the
    /// controller from the newest; the echoed timestamp only when neither exists.
    pub(super) fn rtt_samples(
        &self,
        d: &Delivered,
        ecr: Option<u64>,
        cum: bool,
        now: SimTime,
    ) -> (Option<Dur>, Option<Dur>) {
        let ts = ecr.filter(|&e| cum && e > 0).map(|e| now.since(SimTime(e)));
        if !self.cfg.mech.linux_rtt {
            // Timestamp on a cumulative advance, else the newest clean segment (Karn).
            let newest = d.cum_clean.iter().chain(d.sack_clean.iter()).map(|x| x.1).max();
            let r = ts.or(newest.map(|t| now.since(t)));
            return (r, r);
        }
        let cum_clean = d.cum_clean.filter(|_| !d.retrans_acked);
        let srtt = cum_clean.or(d.sack_clean).map(|(old, _)| now.since(old));
        let cc = d.sack_clean.or(cum_clean).map(|(_, new)| now.since(new));
        match srtt {
            Some(r) => (Some(r), cc),
            None => (ts, ts),
        }
    }

    // ----- undo ------------------------------------------------------------------------

    /// Linux's tcp_current_ssthresh: what to restore if the coming reduction is undone.
    pub(super) fn current_ssthresh(&self) -> u64 {
        if self.ca == CaState::Recovery {
            self.win.ssthresh
        } else {
            self.win.ssthresh.max(self.win.cwnd / 4 * 3)
        }
    }

    /// The reduction was spurious: restore the window (and with `unmark`, forget what was
    /// presumed lost).
    pub(super) fn undo_reduction(&mut self, unmark: bool, now: SimTime) {
        if unmark {
            self.sb.unmark_all_lost();
        }
        let u = self.lr.undo;
        if u.active() {
            self.win.cwnd = self.cc.undo_cwnd(&self.win, u.prior_cwnd, now).max(self.mss);
            self.win.ssthresh = self.win.ssthresh.max(u.prior_ssthresh);
        }
        self.lr.undo.clear();
        self.lstats.undos += 1;
        // A new loss may start a recovery at once.
        self.recovery_point = self.una;
    }

    /// Linux's tcp_try_undo_loss: the timeout was spurious (F-RTO's verdict, or D-SACK /
    /// Eifel evidence): back to Open with the window before it.
    fn try_undo_loss(&mut self, frto_undo: bool, ecr: Option<u64>, now: SimTime) -> bool {
        if !(frto_undo || (self.cfg.mech.undo && self.lr.undo.may_undo(ecr))) {
            return false;
        }
        self.undo_reduction(true, now);
        if frto_undo {
            self.lstats.spurious_rtos += 1;
        }
        self.rtt.backoff = 0;
        self.lr.frto = false;
        self.ca = CaState::Open;
        self.dupacks = 0;
        true
    }

    /// In recovery: a hole filled by the original transmission (Eifel) with no
    /// retransmission left in flight, or every retransmission D-SACKed, means no loss.
    pub(super) fn try_undo_in_recovery(
        &mut self,
        newly_cum: u64,
        ecr: Option<u64>,
        now: SimTime,
    ) -> bool {
        if !self.cfg.mech.undo {
            return false;
        }
        let partial = newly_cum > 0
            && self.lr.undo.active()
            && self.lr.undo.packet_delayed(ecr)
            && self.sb.retrans_bytes == 0;
        let dsacked = self.lr.undo.all_dsacked();
        if !(partial || dsacked) {
            return false;
        }
        self.undo_reduction(partial, now);
        self.ca = if self.sb.sacked_bytes > 0 { CaState::Disorder } else { CaState::Open };
        self.dupacks = 0;
        true
    }

    /// The Loss state after an ACK (Linux tcp_process_loss with F-RTO, RFC 5682 §3.1 in its
    /// SACK-enhanced form).
    pub(super) fn process_loss(
        &mut self,
        newly_cum: u64,
        is_dup: bool,
        d: &Delivered,
        ecr: Option<u64>,
        now: SimTime,
    ) {
        let recovered = self.una >= self.recovery_point;
        if newly_cum > 0 && self.try_undo_loss(false, ecr, now) {
            return;
        }
        if self.lr.frto {
            // Step 3b: data never retransmitted was delivered, so not all of it was lost.
            if d.orig && self.try_undo_loss(true, ecr, now) {
                return;
            }
            if self.nxt > self.recovery_point {
                // Step 3a: new data went out after the first ACK; a duplicate ACK now means
                // the loss was real.
                if is_dup || d.sack_clean.is_some() {
                    self.lr.frto = false;
                }
            } else if newly_cum > 0 && !recovered {
                // Step 2b: send new data instead of retransmitting, if there is any.
                self.recovery_point = self.nxt;
                if self.nxt < self.app_end && self.una + self.snd_wnd > self.nxt {
                    self.lr.send_new_only = true;
                    return;
                }
                self.lr.frto = false;
            }
        }
        if recovered {
            if self.cfg.mech.undo && self.lr.undo.may_undo(ecr) {
                self.undo_reduction(false, now);
            }
            self.lr.frto = false;
            self.ca = CaState::Open;
            self.dupacks = 0;
        }
    }

    /// RTO (Linux tcp_enter_loss): reduce once per episode, mark what is overdue lost, and
    /// restart from a window of what is still in flight plus one segment.
    pub(super) fn enter_loss(&mut self, now: SimTime) {
        let open = matches!(self.ca, CaState::Open | CaState::Disorder);
        // A timeout inside a recovery continues that episode (no second reduction).
        let new_episode = open || self.una >= self.recovery_point;
        // F-RTO judges a timeout in the open state, or a repeated one (RFC 5682 §3.1/§3.2).
        self.lr.frto = self.cfg.mech.frto && (open || self.rtt.backoff > 0);
        if new_episode {
            let prior_ssthresh = self.current_ssthresh();
            self.lr.undo.start(
                self.una,
                self.sb.retrans_bytes.div_ceil(self.mss),
                self.win.cwnd,
                prior_ssthresh,
            );
            let ev = CongestionEvent {
                now,
                kind: CongestionKind::Rto,
                flight_size: self.nxt - self.una,
                in_flight: self.in_flight(),
            };
            self.cc.on_congestion_event(&mut self.win, &ev);
        }
        self.ca = CaState::Loss;
        self.recovery_point = self.nxt;
        self.dupacks = 0;
        self.lr.rack.tlp_high_seq = None;
        // RACK needs SACK (RFC 8985 §3): without it nothing would find a spared loss.
        let spare = (self.cfg.mech.rack && self.sack_ok).then(|| {
            let reo = self.reo_wnd();
            SimTime(now.0.saturating_sub(self.lr.rack.rtt.0 + reo.0))
        });
        self.sb.mark_all_lost(spare);
        self.win.cwnd = self.in_flight() + self.mss;
    }

    // ----- PRR -------------------------------------------------------------------------

    /// The window during SACK recovery, after the controller saw the ACK (Linux
    /// tcp_cwnd_reduction; the controllers do not grow cwnd in recovery).
    pub(super) fn prr_update(&mut self, delivered: u64, newly_lost: bool, una_advanced: bool) {
        // CWR reduces by PRR whatever the recovery mode (Linux's tcp_cwnd_reduction).
        let prr_recovery = self.ca == CaState::Recovery
            && self.cfg.mech.prr
            && self.cfg.recovery == Recovery::Sack;
        if !(self.ca == CaState::Cwr || prr_recovery) || self.cc.owns_cwnd() {
            self.prr_forced = 0;
            return;
        }
        // `prr_entry = "linux"`: the window as Linux sets it before the fast retransmission
        // of this ACK went out (that retransmission is then the first of its quota).
        let forced = std::mem::take(&mut self.prr_forced);
        self.lr.prr.unsend(forced);
        let in_flight = self.in_flight() - forced.min(self.in_flight());
        if let Some(c) = self.lr.prr.cwnd(
            self.win.ssthresh,
            in_flight,
            delivered,
            newly_lost,
            una_advanced,
            self.mss,
        ) {
            self.win.cwnd = c.max(self.mss);
        }
        self.lr.prr.on_sent(forced);
    }

    // ----- RACK ------------------------------------------------------------------------

    pub(super) fn reo_wnd(&self) -> Dur {
        let in_recovery = matches!(self.ca, CaState::Recovery | CaState::Loss);
        self.lr.rack.reo_wnd(
            in_recovery,
            self.sb.sacked_bytes >= DUPTHRESH * self.mss,
            self.rtt.min_rtt(),
            self.rtt.srtt(),
        )
    }

    /// Marks what RACK finds lost; arms the reordering timer for the first segment not yet
    /// overdue (returns whether it did).
    pub(super) fn rack_detect(&mut self, reo: Dur, cx: &mut Cx) -> bool {
        let r = self.lr.rack;
        if r.xmit_ts == SimTime::ZERO {
            return false;
        }
        let (_, timer) = self.sb.rack_mark_lost(r.xmit_ts, r.end_seq, r.rtt, reo, cx.now);
        match timer {
            Some(due) => {
                // Linux arms it for the time left plus a 2 ms floor, in ticks: at HZ = 250 a
                // dupthresh ACK usually comes first, so the retransmission takes the slot a
                // delivered segment freed instead of following new data into a full queue.
                let at = tick_expiry(cx.now, due.since(cx.now) + TIMEOUT_MIN, self.cfg.hz);
                self.set_xmit_timer(XmitTimer::Reorder, at, cx);
                true
            }
            None => false,
        }
    }

    /// RACK's reordering timer fired (Linux tcp_rack_reo_timeout).
    pub(super) fn on_reorder_timer(&mut self, cx: &mut Cx) {
        let lost_before = self.sb.lost_bytes;
        let reo = self.reo_wnd();
        let armed = self.rack_detect(reo, cx);
        if self.sb.lost_bytes > lost_before {
            if matches!(self.ca, CaState::Open | CaState::Disorder)
                && self.una >= self.recovery_point
            {
                self.enter_recovery(cx);
                if self.cfg.mech.prr_linux_entry {
                    // Linux's tcp_rack_reo_timeout: the reduction counts one segment delivered.
                    self.prr_update(self.mss, false, false);
                }
            }
            self.try_send(cx);
        }
        if !armed && !self.timer_armed(crate::engine::TimerKind::Rto) {
            self.arm_rto(cx);
        }
    }

    // ----- tail loss probe --------------------------------------------------------------

    /// Arms the probe timer instead of the RTO when a probe may be due (RFC 8985 §7.2).
    pub(super) fn schedule_probe(&mut self, cx: &mut Cx) -> bool {
        let ok = self.cfg.mech.tlp
            && self.sack_ok
            && self.state.sends()
            && matches!(self.ca, CaState::Open | CaState::Cwr)
            && self.lr.rack.tlp_high_seq.is_none()
            && self.una < self.nxt
            && self.snd_wnd > 0; // a closed window is the persist timer's business
        if !ok {
            return false;
        }
        let pto = Rack::pto(self.rtt.srtt(), self.nxt - self.una <= self.mss, self.rtt.rto());
        self.set_xmit_timer(XmitTimer::Probe, tick_expiry(cx.now, pto, self.cfg.hz), cx);
        true
    }

    /// The probe timer fired: send one new segment if the receive window allows, else
    /// retransmit the last one; then the RTO guards the rest (RFC 8985 §7.3).
    pub(super) fn on_probe_timer(&mut self, cx: &mut Cx) {
        if self.una == self.nxt || !self.state.sends() {
            return;
        }
        let len = self.app_end.saturating_sub(self.nxt).min(self.mss);
        if len > 0 && self.una + self.snd_wnd >= self.nxt + len {
            self.lr.rack.tlp_high_seq = Some(self.nxt + len);
            self.lr.rack.tlp_retrans = false;
            self.send_new_segment(len, false, cx);
        } else if let Some(i) = self.sb.last_unsacked() {
            self.lr.rack.tlp_high_seq = Some(self.nxt);
            self.lr.rack.tlp_retrans = true;
            self.retransmit(i, cx);
        } else {
            self.arm_rto(cx);
            return;
        }
        self.lstats.tlp_probes += 1;
        self.arm_rto(cx);
    }

    /// An ACK while a probe is out (Linux tcp_process_tlp_ack): a D-SACK of the probe or a
    /// pure duplicate ACK means nothing was lost; an ACK beyond it means the probe repaired
    /// a loss, answered with one reduction (Linux's CWR).
    pub(super) fn process_tlp_ack(
        &mut self,
        ack: u64,
        dsack: Option<(u64, u64)>,
        progress: bool,
        cx: &mut Cx,
    ) {
        let Some(high) = self.lr.rack.tlp_high_seq else { return };
        if ack < high {
            return;
        }
        if !self.lr.rack.tlp_retrans || dsack.is_some_and(|(_, e)| e <= high) {
            self.lr.rack.tlp_high_seq = None;
        } else if ack > high {
            self.lr.rack.tlp_high_seq = None;
            self.lstats.tlp_recoveries += 1;
            self.lr.undo.clear();
            let ev = CongestionEvent {
                now: cx.now,
                kind: CongestionKind::FastRetransmit,
                flight_size: self.nxt - self.una,
                in_flight: self.in_flight(),
            };
            self.cc.on_congestion_event(&mut self.win, &ev);
            if !self.cc.owns_cwnd() {
                self.win.cwnd = self.win.ssthresh.max(self.mss);
            }
            self.cc.on_recovery_exit(&mut self.win, cx.now);
            self.recovery_point = self.nxt;
        } else if !progress {
            self.lr.rack.tlp_high_seq = None;
        }
    }
}
