//! ECN on one TCP endpoint: negotiation on the handshake (RFC 3168 §6.1.1, RFC 9768 §3.1),
//! the receiver's feedback and the sender's reading of it. Three feedback schemes:
//!
//! - classic (RFC 3168): ECE on every ACK from a CE mark until the sender's CWR;
//! - classic with a scalable controller on both ends (DCTCP, RFC 8257 §3.2): ECE echoes the CE
//!   state of the last data segment, with an immediate ACK when that state changes;
//! - Accurate ECN (RFC 9768 §3.2): the 3-bit ACE counter (AE, CWR, ECE) carries the count of
//!   CE-marked packets modulo 8 on every ACK, and the AccECN option the byte counters.

use crate::cc::EcnUse;
use crate::net::{AccEcnOption, Ecn, TcpFlags, TcpHeader};
use crate::wire::EcnMode;

const AE: u16 = TcpFlags::AE;
const CWR: u16 = TcpFlags::CWR;
const ECE: u16 = TcpFlags::ECE;
/// The option's counters are 24 bits on the wire.
const BYTES_MASK: u32 = 0x00FF_FFFF;
/// RFC 9768 §3.2.2.5.1: ACK at once after this many CE marks since the last ACK (n = 2).
const CE_ACK_AFTER: u32 = 2;

/// The SYN's ECN flags for the feedback an endpoint asks for.
pub(super) fn syn_flags(want: EcnMode) -> u16 {
    match want {
        EcnMode::Off => 0,
        EcnMode::Classic => ECE | CWR,
        EcnMode::AccEcn => AE | CWR | ECE,
    }
}

/// A listener's choice from the SYN's flags (RFC 9768 Table 2): AE+CWR+ECE asks for AccECN
/// (a classic-only listener answers it with classic ECN), CWR+ECE for classic ECN.
pub(super) fn accept_syn(want: EcnMode, f: TcpFlags) -> EcnMode {
    let (ae, cwr, ece) = (f.has(AE), f.has(CWR), f.has(ECE));
    match want {
        EcnMode::Off => EcnMode::Off,
        _ if !(cwr && ece) => EcnMode::Off,
        EcnMode::AccEcn if ae => EcnMode::AccEcn,
        _ => EcnMode::Classic,
    }
}

/// The connecting side's reading of the SYN-ACK (RFC 9768 Table 2): with AccECN asked, any
/// non-zero ACE but 0b001 (classic ECE) and 0b111 (reserved, read as no ECN) is AccECN.
pub(super) fn accept_synack(want: EcnMode, f: TcpFlags) -> EcnMode {
    let v = ace_of(f);
    match want {
        EcnMode::Off => EcnMode::Off,
        EcnMode::Classic => {
            if f.has(ECE) && !f.has(CWR) {
                EcnMode::Classic
            } else {
                EcnMode::Off
            }
        }
        EcnMode::AccEcn => match v {
            0b000 | 0b111 => EcnMode::Off,
            0b001 => EcnMode::Classic,
            _ => EcnMode::AccEcn,
        },
    }
}

/// The ACE value of a header's AE, CWR and ECE flags.
pub(super) fn ace_of(f: TcpFlags) -> u32 {
    (f.has(AE) as u32) << 2 | (f.has(CWR) as u32) << 1 | f.has(ECE) as u32
}

/// Flags carrying an ACE value.
pub(super) fn ace_flags(v: u32) -> u16 {
    (if v & 4 != 0 { AE } else { 0 })
        | (if v & 2 != 0 { CWR } else { 0 })
        | (if v & 1 != 0 { ECE } else { 0 })
}

/// On the SYN-ACK and the handshake's last ACK an AccECN endpoint reflects the IP-ECN field
/// of the SYN (SYN-ACK) it received (RFC 9768 Table 3).
pub(super) fn handshake_ace(seen: Ecn) -> u32 {
    match seen {
        Ecn::NotEct => 0b010,
        Ecn::Ect1 => 0b011,
        Ecn::Ect0 => 0b100,
        Ecn::Ce => 0b110,
    }
}

/// The CE-marked packets an ACE change stands for, given `delivered` packets newly acknowledged
/// (RFC 9768 §3.2.2.5 and Appendix A.2). Below 8 there is no ambiguity; above it the byte
/// counter's change (in MSS) picks the wrap count, and without it the sender assumes the
/// largest count consistent with what was delivered (the "safe" estimate of Appendix A.2.1).
pub(super) fn ace_delta(ace: u32, s_cep: u32, delivered: u64, ceb_segs: Option<u64>) -> u64 {
    let delta = (ace.wrapping_sub(s_cep) & 7) as u64;
    if delivered < 8 || delivered < delta {
        return delta;
    }
    let max_k = (delivered - delta) / 8;
    let k = match ceb_segs {
        Some(n) => ((n.saturating_sub(delta) + 4) / 8).min(max_k),
        None => max_k,
    };
    delta + 8 * k
}

pub(super) struct EcnState {
    /// Negotiated feedback.
    pub mode: EcnMode,
    /// What this endpoint's controller does with it.
    pub use_: EcnUse,
    // Receiving side.
    /// Classic: ECE pending until CWR. DCTCP echo: the CE state of the last data segment.
    pub ece: bool,
    /// The last data segment was CE (change-triggered ACKs).
    last_ce: bool,
    /// RFC 9768's r.cep, r.e0b, r.ceb, r.e1b (wrapping).
    r_cep: u32,
    r_e0b: u32,
    r_ceb: u32,
    r_e1b: u32,
    /// r.cep when the last ACK went out.
    cep_at_ack: u32,
    /// The IP-ECN field of the SYN or SYN-ACK received, for the reflection on the handshake.
    pub syn_seen: Ecn,
    /// The connecting side's first ACK still has to reflect the SYN-ACK's IP-ECN.
    pub reflect_on_ack: bool,
    /// The next ACK read completes the handshake: its ACE is a reflection, not a count.
    pub handshake_ack: bool,
    // Sending side.
    s_cep: u32,
    s_ceb: u32,
    pub cwr_pending: bool,
    cwr_end: u64,
    /// CE feedback not yet handed to the controller (it came on an ACK that acked nothing).
    pend_bytes: u64,
    pend_pkts: u64,
}

impl EcnState {
    pub fn new() -> EcnState {
        EcnState {
            mode: EcnMode::Off,
            use_: EcnUse { ect: Ecn::NotEct, scalable: false },
            ece: false,
            last_ce: false,
            // RFC 9768 §3.2.1: the packet counters start at 5, the byte counters at 1 (ECT) and 0 (CE),
            // so a middlebox that zeroes the flags is told from a real zero.
            r_cep: 5,
            r_e0b: 1,
            r_ceb: 0,
            r_e1b: 1,
            cep_at_ack: 5,
            syn_seen: Ecn::NotEct,
            reflect_on_ack: false,
            handshake_ack: false,
            s_cep: 5,
            s_ceb: 0,
            cwr_pending: false,
            cwr_end: 0,
            pend_bytes: 0,
            pend_pkts: 0,
        }
    }

    /// The DCTCP echo of RFC 8257 §3.2 (classic negotiation, a scalable controller here).
    fn dctcp_echo(&self) -> bool {
        self.mode == EcnMode::Classic && self.use_.scalable
    }

    /// The ECN flags (and option) of an ACK-bearing segment this endpoint sends.
    pub fn ack_fields(&mut self) -> (u16, Option<AccEcnOption>) {
        match self.mode {
            EcnMode::Off => (0, None),
            EcnMode::Classic => (if self.ece { ECE } else { 0 }, None),
            EcnMode::AccEcn => {
                self.cep_at_ack = self.r_cep;
                let v =
                    if self.reflect_on_ack { handshake_ace(self.syn_seen) } else { self.r_cep & 7 };
                self.reflect_on_ack = false;
                let o = AccEcnOption {
                    e0b: self.r_e0b & BYTES_MASK,
                    ceb: self.r_ceb & BYTES_MASK,
                    e1b: self.r_e1b & BYTES_MASK,
                };
                (ace_flags(v), Some(o))
            }
        }
    }

    /// A segment arrived with IP-ECN field `ecn`: update the receiver's counters. Returns
    /// (ack what came before at once with the old ECE — DCTCP echo, ack this one at once).
    pub fn on_segment(&mut self, h: &TcpHeader, ecn: Ecn) -> (bool, bool) {
        let ce = ecn == Ecn::Ce;
        let data = h.len > 0;
        match self.mode {
            EcnMode::Off => (false, false),
            EcnMode::Classic if self.dctcp_echo() => {
                if !data || ce == self.ece {
                    return (false, false);
                }
                // The CE state changed: acknowledge what came before under the old state, then
                // echo the new one (RFC 8257 §3.2; the caller flips with `commit_echo`).
                (true, false)
            }
            EcnMode::Classic => {
                if !data {
                    return (false, false);
                }
                if h.flags.has(CWR) {
                    self.ece = false;
                }
                if ce && !self.ece {
                    // A new congestion signal: echo it at once (Linux enters quick-ACK).
                    self.ece = true;
                    return (false, true);
                }
                (false, false)
            }
            EcnMode::AccEcn => {
                let len = h.len;
                match ecn {
                    Ecn::Ce => {
                        self.r_cep = self.r_cep.wrapping_add(1);
                        self.r_ceb = self.r_ceb.wrapping_add(len);
                    }
                    Ecn::Ect0 => self.r_e0b = self.r_e0b.wrapping_add(len),
                    Ecn::Ect1 => self.r_e1b = self.r_e1b.wrapping_add(len),
                    Ecn::NotEct => {}
                }
                if !data {
                    return (false, false);
                }
                let changed = ce && !self.last_ce;
                self.last_ce = ce;
                (false, changed || self.r_cep.wrapping_sub(self.cep_at_ack) >= CE_ACK_AFTER)
            }
        }
    }

    /// DCTCP echo: the ACK of the segments before a CE change went out; echo the new state.
    pub fn commit_echo(&mut self) {
        self.ece = !self.ece;
    }

    /// The sender reads an ACK's ECN feedback. `acked` bytes were newly delivered (cumulative
    /// and SACKed) and `una`/`nxt` are the send sequence after it. Returns whether the
    /// controller-independent RFC 3168 response (one reduction per window) is due.
    pub fn on_ack(&mut self, h: &TcpHeader, acked: u64, mss: u64, una: u64, nxt: u64) -> bool {
        if std::mem::take(&mut self.handshake_ack) {
            return false;
        }
        let (pkts, bytes) = match self.mode {
            EcnMode::Off => return false,
            EcnMode::Classic if !self.use_.scalable => return h.flags.has(ECE),
            EcnMode::Classic => {
                if !h.flags.has(ECE) {
                    return false;
                }
                // RFC 8257 §3.3: the bytes an ECE-flagged ACK acknowledges were marked. CWR
                // tells a classic receiver the window was reduced (once per window).
                if una >= self.cwr_end {
                    self.cwr_pending = true;
                    self.cwr_end = nxt;
                }
                (acked.div_ceil(mss.max(1)), acked)
            }
            EcnMode::AccEcn => {
                let delivered = acked.div_ceil(mss.max(1));
                let ceb = h.accecn.map(|o| (o.ceb.wrapping_sub(self.s_ceb) & BYTES_MASK) as u64);
                let n = ace_delta(
                    ace_of(h.flags),
                    self.s_cep,
                    delivered,
                    ceb.map(|b| (b + mss / 2) / mss.max(1)),
                );
                self.s_cep = self.s_cep.wrapping_add(n as u32);
                if let Some(o) = h.accecn {
                    self.s_ceb = o.ceb;
                }
                if n == 0 {
                    return false;
                }
                (n, ceb.filter(|&b| b > 0).unwrap_or(n * mss))
            }
        };
        self.pend_pkts += pkts;
        self.pend_bytes += bytes;
        !self.use_.scalable
    }

    /// CE feedback for the controller's next ACK sample (scalable controllers only).
    pub fn take_ce(&mut self) -> (u64, u64) {
        if !self.use_.scalable {
            self.pend_bytes = 0;
            self.pend_pkts = 0;
            return (0, 0);
        }
        let r = (self.pend_bytes, self.pend_pkts);
        self.pend_bytes = 0;
        self.pend_pkts = 0;
        r
    }

    /// The packet counter the receiving side keeps (RFC 9768 r.cep), for tests and TCP_INFO.
    pub fn received_ce(&self) -> u32 {
        self.r_cep.wrapping_sub(5)
    }

    /// CE-marked packets the sending side has been told of (s.cep).
    pub fn delivered_ce(&self) -> u32 {
        self.s_cep.wrapping_sub(5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_follows_rfc9768_table_2() {
        let f = |v: u16| TcpFlags(TcpFlags::SYN | v);
        assert_eq!(syn_flags(EcnMode::AccEcn), AE | CWR | ECE);
        assert_eq!(accept_syn(EcnMode::AccEcn, f(AE | CWR | ECE)), EcnMode::AccEcn);
        assert_eq!(
            accept_syn(EcnMode::Classic, f(AE | CWR | ECE)),
            EcnMode::Classic,
            "classic-only listener"
        );
        assert_eq!(accept_syn(EcnMode::AccEcn, f(CWR | ECE)), EcnMode::Classic, "classic client");
        assert_eq!(accept_syn(EcnMode::AccEcn, f(0)), EcnMode::Off);
        assert_eq!(accept_syn(EcnMode::Off, f(AE | CWR | ECE)), EcnMode::Off);
        let sa = |v: u16| TcpFlags(TcpFlags::SYN | TcpFlags::ACK | v);
        assert_eq!(accept_synack(EcnMode::AccEcn, sa(CWR)), EcnMode::AccEcn, "SYN was Not-ECT");
        assert_eq!(accept_synack(EcnMode::AccEcn, sa(AE)), EcnMode::AccEcn, "SYN was ECT(0)");
        assert_eq!(accept_synack(EcnMode::AccEcn, sa(ECE)), EcnMode::Classic);
        assert_eq!(accept_synack(EcnMode::AccEcn, sa(0)), EcnMode::Off);
        assert_eq!(accept_synack(EcnMode::AccEcn, sa(AE | CWR | ECE)), EcnMode::Off, "reserved");
        assert_eq!(accept_synack(EcnMode::Classic, sa(ECE)), EcnMode::Classic);
        assert_eq!(handshake_ace(Ecn::NotEct), 0b010);
        assert_eq!(handshake_ace(Ecn::Ce), 0b110);
        for v in 0..8 {
            assert_eq!(ace_of(TcpFlags(ace_flags(v))), v);
        }
    }

    #[test]
    fn ace_delta_without_wrap_is_the_counter_difference() {
        assert_eq!(ace_delta(5, 5, 2, None), 0);
        assert_eq!(ace_delta(7, 5, 2, None), 2);
        // The 3-bit counter wrapped: 5 → 1 is 4 marks.
        assert_eq!(ace_delta(1, 5, 4, None), 4);
        // Fewer than 8 delivered: no ambiguity even if delta exceeds delivered (marks on
        // retransmitted or duplicate segments).
        assert_eq!(ace_delta(4, 5, 3, None), 7);
    }

    #[test]
    fn ace_wrap_is_resolved_by_delivered_packets_and_byte_counter() {
        // 20 packets newly delivered, ACE moved by 3: 3, 11 or 19 marks.
        assert_eq!(ace_delta(0, 5, 20, None), 19, "safe estimate: the largest count that fits");
        assert_eq!(ace_delta(0, 5, 20, Some(11)), 11, "the byte counter picks the wrap");
        assert_eq!(ace_delta(0, 5, 20, Some(3)), 3);
        assert_eq!(ace_delta(0, 5, 20, Some(40)), 19, "never more than delivered");
        assert_eq!(ace_delta(0, 5, 8, None), 3, "8 delivered, delta 3: 11 would exceed it");
    }

    fn data(len: u32, flags: u16) -> TcpHeader {
        TcpHeader { len, flags: TcpFlags(TcpFlags::ACK | flags), ..TcpHeader::default() }
    }

    #[test]
    fn accecn_receiver_counts_and_acks_on_a_ce_onset() {
        let mut r = EcnState::new();
        r.mode = EcnMode::AccEcn;
        assert_eq!(r.on_segment(&data(1000, 0), Ecn::Ect1), (false, false));
        assert_eq!(
            r.on_segment(&data(1000, 0), Ecn::Ce),
            (false, true),
            "onset of CE: ACK at once"
        );
        let (f, o) = r.ack_fields();
        assert_eq!(ace_of(TcpFlags(f)), 6);
        assert_eq!(o, Some(AccEcnOption { e0b: 1, ceb: 1000, e1b: 1001 }));
        assert_eq!(r.on_segment(&data(1000, 0), Ecn::Ce), (false, false), "one more mark may wait");
        assert_eq!(r.on_segment(&data(1000, 0), Ecn::Ce), (false, true), "two since the last ACK");
        assert_eq!(r.received_ce(), 3);
    }

    #[test]
    fn accecn_sender_reads_the_counters() {
        let mut s = EcnState::new();
        s.mode = EcnMode::AccEcn;
        s.use_ = EcnUse { ect: Ecn::Ect1, scalable: true };
        let mut h = data(0, ace_flags(7));
        h.accecn = Some(AccEcnOption { e0b: 1, ceb: 2000, e1b: 1 });
        assert!(!s.on_ack(&h, 4000, 1000, 4001, 10_001));
        assert_eq!(s.take_ce(), (2000, 2));
        assert_eq!(s.delivered_ce(), 2);
        // Same counters again: nothing new.
        s.on_ack(&h, 2000, 1000, 6001, 10_001);
        assert_eq!(s.take_ce(), (0, 0));
        // A classic controller over AccECN: any increase asks the core for a reduction.
        s.use_.scalable = false;
        let mut h2 = data(0, ace_flags(0));
        h2.accecn = Some(AccEcnOption { e0b: 1, ceb: 3000, e1b: 1 });
        assert!(s.on_ack(&h2, 1000, 1000, 7001, 10_001));
    }

    #[test]
    fn dctcp_echo_reflects_the_last_ce_state() {
        let mut r = EcnState::new();
        r.mode = EcnMode::Classic;
        r.use_ = EcnUse { ect: Ecn::Ect0, scalable: true };
        assert_eq!(r.on_segment(&data(1000, 0), Ecn::Ect0), (false, false));
        assert_eq!(
            r.on_segment(&data(1000, 0), Ecn::Ce),
            (true, false),
            "ack the past under the old state"
        );
        assert!(!r.ece);
        r.commit_echo();
        assert!(r.ece);
        assert_eq!(
            r.on_segment(&data(1000, CWR), Ecn::Ce),
            (false, false),
            "CWR does not clear a DCTCP echo"
        );
        assert_eq!(r.on_segment(&data(1000, 0), Ecn::Ect0), (true, false));
        r.commit_echo();
        assert!(!r.ece);
    }
}
