//! Read-only TCP_INFO-style view of an endpoint (what Linux's getsockopt(TCP_INFO) reports),
//! for the packetdrill runner's `%{ assert tcpi_... }%` blocks, plus the one hook a script
//! needs to change a live socket: switching its congestion control (TCP_CONGESTION).

use super::{TcpSocket, TcpState, PACING_CA_RATIO, PACING_SS_RATIO};
use crate::cc::{CaState, CongestionControl};
use crate::tcp::scoreboard::{LOST, RETRANS, SACKED};
use crate::units::SimTime;
use std::sync::Arc;

/// Linux's `struct tcp_info` fields the simulator models, in Linux's units: counts of
/// segments, times in microseconds, rates in bytes per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// TCP_ESTABLISHED 1, SYN_SENT 2, SYN_RECV 3, CLOSE 7, LISTEN 10.
    pub state: u8,
    /// Open 0, Disorder 1, (CWR 2, not modeled), Recovery 3, Loss 4.
    pub ca_state: u8,
    /// Consecutive timeouts of the current RTO (the backoff exponent).
    pub retransmits: u32,
    pub backoff: u32,
    pub rto: u64,
    pub snd_mss: u64,
    pub rcv_mss: u64,
    /// Segments sent and not cumulatively acknowledged.
    pub unacked: u64,
    pub sacked: u64,
    pub lost: u64,
    /// Retransmissions in flight.
    pub retrans: u64,
    pub total_retrans: u64,
    pub rtt: u64,
    pub rttvar: u64,
    pub min_rtt: u64,
    /// Segments; Linux's "infinite" 0x7fffffff until the first reduction.
    pub snd_ssthresh: u64,
    pub snd_cwnd: u64,
    pub snd_wnd: u64,
    pub snd_wscale: u8,
    pub rcv_wscale: u8,
    /// TCPI_OPT_TIMESTAMPS 1 | SACK 2 | WSCALE 4 | ECN 8.
    pub options: u8,
    pub pacing_rate: u64,
    pub delivery_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u64,
    pub data_segs_out: u64,
    /// AccECN: CE-marked packets the peer reported (Linux's tcpi_delivered_ce) and CE-marked
    /// packets this endpoint received (tcpi_received_ce); 0 without AccECN.
    pub delivered_ce: u64,
    pub received_ce: u64,
    /// Linux's reordering degree (segments; 3 until reordering is seen) and the number of
    /// reordering events (tcpi_reordering, tcpi_reord_seen).
    pub reordering: u32,
    pub reord_seen: u32,
}

/// Linux's TCP_INFINITE_SSTHRESH.
const INFINITE_SSTHRESH: u64 = 0x7fff_ffff;

impl TcpSocket {
    /// The TCP_INFO view at this instant.
    pub fn info(&self, _now: SimTime) -> TcpInfo {
        let us = |d: crate::units::Dur| d.0 / 1_000;
        let mut sacked = 0;
        let mut lost = 0;
        let mut retrans = 0;
        for i in 0..self.sb.len() {
            let s = self.sb.get(i);
            sacked += s.has(SACKED) as u64;
            lost += (s.has(LOST) && !s.has(SACKED)) as u64;
            retrans += s.has(RETRANS) as u64;
        }
        let mss = self.mss.max(1);
        let srtt = self.rtt.srtt();
        // Linux computes a pacing rate whether or not anything paces (tcp_update_pacing_rate).
        let pacing_rate = match self.cc.pacing_rate() {
            Some(r) => r.bytes_per_sec() as u64,
            None => match srtt {
                Some(s) if s.0 > 0 => {
                    let ratio = if self.win.cwnd < self.win.ssthresh / 2 {
                        PACING_SS_RATIO
                    } else {
                        PACING_CA_RATIO
                    };
                    (ratio * self.win.cwnd as f64 / s.secs_f64()) as u64
                }
                _ => 0,
            },
        };
        TcpInfo {
            state: self.state.linux_number(),
            ca_state: match self.ca {
                CaState::Open => 0,
                CaState::Disorder => 1,
                CaState::Cwr => 2,
                CaState::Recovery => 3,
                CaState::Loss => 4,
            },
            retransmits: self.rtt.backoff,
            backoff: self.rtt.backoff,
            rto: us(self.rtt.rto()),
            snd_mss: self.mss,
            rcv_mss: self.mss,
            unacked: self.sb.len() as u64,
            sacked,
            lost,
            retrans,
            total_retrans: self.stats.retransmits,
            rtt: srtt.map_or(0, us),
            rttvar: us(self.rtt.rttvar()),
            min_rtt: self.rtt.min_rtt().map_or(0, us),
            snd_ssthresh: if self.win.ssthresh == u64::MAX {
                INFINITE_SSTHRESH
            } else {
                self.win.ssthresh / mss
            },
            snd_cwnd: self.win.cwnd / mss,
            snd_wnd: self.snd_wnd,
            snd_wscale: self.snd_wscale,
            rcv_wscale: self.rcv_wscale,
            options: (self.ts_ok as u8)
                | (self.sack_ok as u8) << 1
                | (self.wscale_ok as u8) << 2
                | (self.ecn.mode.is_on() as u8) << 3,
            delivered_ce: self.ecn.delivered_ce() as u64,
            received_ce: self.ecn.received_ce() as u64,
            reordering: self.reordering,
            reord_seen: self.reord_seen,
            pacing_rate,
            delivery_rate: self.rate.last_rate.map_or(0, |r| r.bytes_per_sec() as u64),
            bytes_acked: self.una.saturating_sub(self.iss + 1),
            bytes_received: self.rcv_nxt.saturating_sub(self.irs + 1),
            segs_out: self.stats.pkts_sent,
            data_segs_out: self.stats.data_pkts_sent,
        }
    }

    /// setsockopt(TCP_CONGESTION) on a live socket: the new controller starts from the
    /// current window (Linux's tcp_reinit_congestion_control keeps cwnd and ssthresh).
    pub fn set_congestion_control(&mut self, mut cc: Box<dyn CongestionControl>) {
        if self.state == TcpState::Established {
            self.ecn.use_ = cc.ecn_setup(self.ecn.mode);
        }
        self.cc = cc;
    }

    /// The controller needs ECN feedback (Linux's TCP_CONG_NEEDS_ECN / NEEDS_ACCECN): ask for
    /// it on the handshake whatever the configured mode, if the handshake has not started.
    pub fn request_ecn(&mut self, mode: crate::wire::EcnMode) {
        if matches!(self.state, TcpState::Closed | TcpState::Listen) && self.cfg.ecn < mode {
            Arc::make_mut(&mut self.cfg).ecn = mode;
        }
    }

    /// Payload bytes the application has written and the peer has not yet acknowledged.
    pub fn unacked_bytes(&self) -> u64 {
        self.app_end.saturating_sub(self.una.max(self.iss + 1))
    }

    /// Bytes in flight now (sent, not acknowledged).
    /// Whether unsent data waits because its next segment does not fit the peer's receive
    /// window (Linux's tcp_snd_wnd_test failing in tcp_write_xmit).
    pub fn rwnd_limited(&self) -> bool {
        let unsent = self.app_end.saturating_sub(self.nxt);
        let usable = (self.una + self.snd_wnd).saturating_sub(self.nxt);
        unsent > 0 && unsent.min(self.mss) > usable
    }

    pub fn outstanding(&self) -> u64 {
        self.nxt.saturating_sub(self.una)
    }

    pub fn negotiated_mss(&self) -> u64 {
        self.mss
    }
}
