//! The HC-Sender (client) side of a DCCP flow: the handshake, the sent-packet history, loss
//! detection from Ack Vectors (a packet is lost once three later ones were received), the
//! RTT/RTO estimate, Ack Ratio (with RFC 4341 §6.1.2's ACK congestion control), pacing, and
//! the calls into the congestion controller.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PktState {
    Outstanding,
    Acked,
    Lost,
}

/// What the sender remembers of a data packet (the paper's per-packet bookkeeping).
#[derive(Debug, Clone, Copy)]
pub(super) struct SentRec {
    sent_at: SimTime,
    wire: u32,
    delivered_bytes: u64,
    delivered_pkts: u64,
    app_limited: bool,
    state: PktState,
}

impl DccpEndpoint {
    /// The application starts: open the connection (and start the constant-rate clock).
    pub fn connect(&mut self, cx: &mut Cx) {
        self.state = State::Requesting;
        self.send_request(cx);
        if let DccpApp::Cbr(_) = self.cfg.app {
            // The client never delays ACKs; its DelAck timer is the application's clock.
            cx.events.schedule(cx.now, Event::Timer(self.id, TimerKind::DelAck));
        }
    }

    pub(super) fn send_request(&mut self, cx: &mut Cx) {
        let mut h = DccpHeader::new(DccpType::Request, self.take_seq());
        h.ccid = self.cc.ccid();
        self.request_sent_at = cx.now;
        self.emit(h, cx);
        let at = cx.now + self.rto;
        self.arm_rto(at, cx);
    }

    pub(super) fn arm_rto(&mut self, at: SimTime, cx: &mut Cx) {
        self.rto_at = Some(at);
        if self.rto_ev.is_none_or(|e| e > at) {
            cx.events.schedule(at, Event::Timer(self.id, TimerKind::Rto));
            self.rto_ev = Some(at);
        }
    }

    pub(super) fn rto_expired(&mut self, cx: &mut Cx) {
        self.rto = (self.rto + self.rto).min(MAX_RTO);
        match self.state {
            State::Requesting => self.send_request(cx),
            State::Open if self.pipe > 0 => {
                self.stats.timeouts += 1;
                let flight = self.pipe * self.w.mss;
                let ev = CongestionEvent {
                    now: cx.now,
                    kind: CongestionKind::Rto,
                    flight_size: flight,
                    in_flight: flight,
                };
                self.cc.on_congestion_event(&mut self.w, &ev);
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

    pub(super) fn app_has_data(&self) -> bool {
        match self.cfg.app {
            DccpApp::Greedy => true,
            DccpApp::Cbr(_) => self.cbr_queue > 0,
        }
    }

    pub(super) fn try_send(&mut self, cx: &mut Cx) {
        if self.state != State::Open {
            return;
        }
        loop {
            if !self.app_has_data() {
                if self.pipe < self.cwnd_pkts() {
                    // The application, not the controller, is the limit (BBR's app-limited mark).
                    self.app_limited_until = (self.delivered_pkts + self.pipe).max(1);
                }
                return;
            }
            if self.pipe >= self.cwnd_pkts() {
                return;
            }
            let rate = self.cc.pacing_bytes_per_sec();
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

    pub(super) fn send_data(&mut self, cx: &mut Cx) -> u32 {
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

    pub(super) fn rtt_sample(&mut self, rtt: Dur, now: SimTime) {
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
            record_delay(
                &mut self.stats.rtt_sum_ns,
                &mut self.stats.rtt_n,
                &mut self.rtt_hist,
                rtt.0,
            );
        }
    }

    /// Ack Ratio ≤ ceil(cwnd / 2) (RFC 4341 §6.1.2).
    pub(super) fn update_ack_ratio(&mut self) {
        let want = self.ack_ratio_cc.min(self.cwnd_pkts().div_ceil(2)).max(1);
        if want != self.ack_ratio {
            self.ack_ratio = want;
            self.ack_ratio_from = Some(self.next_seq);
            self.cc.on_ack_ratio(want);
        }
    }

    pub(super) fn client_packet(&mut self, h: &DccpHeader, cx: &mut Cx) {
        match (self.state, h.ptype) {
            (State::Requesting, DccpType::Response) => {
                self.state = State::Open;
                self.peer_seq = h.seq;
                self.last_ack_seq = h.seq;
                self.rto_at = None;
                let rtt = cx.now.since(self.request_sent_at);
                self.rtt_sample(rtt, cx.now);
                self.cc.on_first_rtt(rtt, cx.now);
                self.try_send(cx);
            }
            (State::Open, DccpType::Ack | DccpType::DataAck) => self.on_ack(h, cx),
            _ => {}
        }
    }

    pub(super) fn on_ack(&mut self, h: &DccpHeader, cx: &mut Cx) {
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
                        if self.top[NUMDUPACK - 1].is_none_or(|t| seq > t)
                            && !self.top.contains(&Some(seq))
                        {
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
        let m = self.w.mss;
        if let Some(ppm) = h.loss_rate_ppm {
            self.cc.on_loss_rate_report(ppm as f64 / 1e6);
        }
        // The controller's view, in bytes of whole data packets (the Window's unit).
        let a = AckSample {
            now,
            rtt: sample.map(|s| s.1),
            srtt: self.srtt,
            min_rtt: None,
            acked_bytes: newly * m,
            prior_in_flight: (self.pipe + newly + lost) * m,
            in_flight: self.pipe * m,
            lost_bytes: lost * m,
            delivered: self.delivered_pkts * m,
            // The DCCP-BBR paper's sample (§3.1) from the most recently sent packet the ACK
            // covers: bytes delivered since it was sent over its RTT.
            rate: sample.map(|(delivered, rtt, prior_pkts, app_limited)| RateSample {
                delivered,
                interval: rtt,
                rate: if rtt.0 > 0 {
                    Rate::from_bytes_per_sec(delivered as f64 / rtt.secs_f64())
                } else {
                    Rate(0)
                },
                prior_delivered: prior_pkts * m,
                app_limited,
            }),
            ca_state: CaState::Open,
            cwnd_limited: true,
            snd_una: 0,
            snd_nxt: 0,
            // DCCP here runs without ECN.
            ce_bytes: 0,
            ce_pkts: 0,
            owd: None,
        };
        self.cc.on_ack(&mut self.w, &a);
        // The losses of one window of data are one congestion event: a loss counts only if
        // its packet was sent after the previous event (RFC 4341 §5).
        for i in 0..self.lost_buf.len() {
            if self.last_cong.is_some_and(|t| self.lost_buf[i] < t) {
                continue;
            }
            self.last_cong = Some(now);
            let flight = self.pipe * m;
            let ev = CongestionEvent {
                now,
                kind: CongestionKind::FastRetransmit,
                flight_size: flight,
                in_flight: flight,
            };
            self.cc.on_congestion_event(&mut self.w, &ev);
            if !self.cc.owns_cwnd() {
                self.stats.reductions += 1;
            }
        }
        if self.cc.marks_app_limited() {
            // Samples taken while PROBE_RTT holds the window down must not lower the
            // bandwidth estimate (Linux marks the flow application-limited).
            self.app_limited_until = (self.delivered_pkts + self.pipe).max(1);
        }
        // cwnd/(R² − R) windows of cwnd packets without a lost ACK lower R by one.
        self.acked_since_ack_loss += newly;
        let r = self.ack_ratio_cc;
        if r > self.cfg.ack_ratio as u64 {
            let w = self.cwnd_pkts();
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CcSpec, CcTransport};
    use crate::dccp::DccpCfg;
    use crate::engine::{EventQueue, Stream};
    use crate::net::PacketPool;

    fn client() -> DccpEndpoint {
        let cfg = DccpCfg {
            cc: CcSpec::parse_for(CcTransport::Dccp, "ccid2", None, "cc_params").unwrap(),
            ack_ratio: 2,
            loss_window: Dur::from_secs(10),
            packet_size: 1000,
            app: DccpApp::Greedy,
        };
        let mut c = DccpEndpoint::new(
            SockId(0),
            FlowId(0),
            RouteId(0),
            cfg,
            SimRng::new(1, Stream::Endpoint, 0),
        );
        c.state = State::Open;
        c.w.cwnd = 10 * c.w.mss;
        c
    }

    /// An ACK from the receiver: `got(i)` says whether the i-th data packet arrived; the
    /// vector covers packets 0..=last.
    fn ack_for(c: &DccpEndpoint, first: u64, last: u64, got: impl Fn(u64) -> bool) -> DccpHeader {
        let mut h = DccpHeader::new(DccpType::Ack, 77);
        h.ack = first + last;
        h.ackvec = AckVector::encode(first + last, first, |s| {
            if got(s - first) {
                STATE_RECEIVED
            } else {
                STATE_NOT_RECEIVED
            }
        });
        let _ = c;
        h
    }

    #[test]
    fn loss_needs_three_later_packets_received() {
        let mut pool = PacketPool::with_capacity(64);
        let mut events = EventQueue::new();
        let mut out = Vec::new();
        let mut c = client();
        let mut cx = Cx {
            now: SimTime(1_000_000),
            pool: &mut pool,
            events: &mut events,
            out: &mut out,
            channel: None,
        };
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
        c.w.cwnd = 20 * c.w.mss;
        c.w.ssthresh = 20 * c.w.mss;
        let mut cx = Cx {
            now: SimTime(1_000_000),
            pool: &mut pool,
            events: &mut events,
            out: &mut out,
            channel: None,
        };
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
        let mut cx = Cx {
            now: SimTime(1_000_000),
            pool: &mut pool,
            events: &mut events,
            out: &mut out,
            channel: None,
        };
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
}
