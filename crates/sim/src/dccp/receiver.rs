//! The HC-Receiver (server) side of a DCCP flow: answers the Request, records what arrived
//! in the Ack Vector history and the loss-rate window, and acknowledges every Ack Ratio data
//! packets (or after [`ACK_DELAY`]).

use super::*;

impl DccpEndpoint {
    pub(super) fn arm_delack(&mut self, at: SimTime, cx: &mut Cx) {
        self.delack_at = Some(at);
        if self.delack_ev.is_none_or(|e| e > at) {
            cx.events.schedule(at, Event::Timer(self.id, TimerKind::DelAck));
            self.delack_ev = Some(at);
        }
    }

    pub(super) fn server_packet(&mut self, pkt: &Packet, h: &DccpHeader, cx: &mut Cx) {
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

    pub(super) fn receive_data(&mut self, pkt: &Packet, h: &DccpHeader, cx: &mut Cx) {
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
            record_delay(
                &mut self.stats.owd_sum_ns,
                &mut self.stats.owd_n,
                &mut self.owd_hist,
                owd,
            );
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

    pub(super) fn send_ack(&mut self, cx: &mut Cx) {
        let Some(gsr) = self.gsr else { return };
        let mut h = DccpHeader::new(DccpType::Ack, self.take_seq());
        h.ack = gsr;
        let base = self.rx_base;
        let rx = &self.rx;
        h.ackvec = AckVector::encode(gsr, base, |s| rx[(s - base) as usize]);
        if self.cc.wants_loss_rate_reports() {
            h.loss_rate_ppm = Some((self.loss.rate() * 1e6).round() as u32);
        }
        self.data_since_ack = 0;
        self.delack_at = None;
        self.stats.acks_sent += 1;
        self.emit(h, cx);
    }
}
