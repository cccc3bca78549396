//! The gateway's side of window rewriting on real packets: learn each connection's window
//! scaling and MSS from its SYN and SYN-ACK, and rewrite the 16-bit window field of ACKs with an
//! RFC 1624 incremental checksum update. The scheme itself (EWT/EWA/AWM) is the simulator's
//! `AckRewriter`; this file only translates between bytes on the wire and its scaled windows.

use crate::checksum;
use crate::packet::{self, Parsed, TcpView, ACK, SYN};
use bloatlab_sim::gateway::{rewritten_field, AckRewriter, QueueView};

/// Connection key in the data direction: (sender addr, receiver addr, sender port, receiver port).
pub type ConnKey = ([u8; 4], [u8; 4], u16, u16);

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Conn {
    key: Option<ConnKey>,
    /// Window-scale option of the sender's SYN and of the receiver's SYN-ACK (RFC 7323: scaling
    /// is on only when both carry it).
    snd_ws: Option<u8>,
    rcv_ws: Option<u8>,
    synack_seen: bool,
    /// Payload bytes per full segment (SYN MSS, less 12 B when timestamps are on).
    mss: u16,
}

/// Fixed-size open-addressing table (preallocated; never grows). When every probe slot is
/// taken the oldest-probed entry is replaced: a forgotten connection is simply not rewritten.
pub struct ConnTable {
    slots: Vec<Conn>,
}

const PROBES: usize = 8;

fn hash(k: &ConnKey) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in
        k.0.iter().chain(k.1.iter()).chain(k.2.to_be_bytes().iter()).chain(k.3.to_be_bytes().iter())
    {
        h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// Why an ACK was not rewritten (or that it was).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Not a TCP ACK we may touch (malformed, not TCP, SYN, no ACK flag).
    NotAck,
    /// A connection whose SYN / SYN-ACK the gateway did not see: its scaling is unknown.
    Unknown,
    /// The scheme left the window as it was.
    Kept,
    /// The window field was lowered (and the checksum updated).
    Lowered,
}

impl ConnTable {
    pub fn new(capacity: usize) -> ConnTable {
        ConnTable { slots: vec![Conn::default(); capacity.next_power_of_two().max(PROBES)] }
    }

    fn slot(&mut self, k: &ConnKey, insert: bool) -> Option<&mut Conn> {
        let mask = self.slots.len() - 1;
        let h = hash(k) as usize;
        let mut free = None;
        for i in 0..PROBES {
            let s = (h + i) & mask;
            match self.slots[s].key {
                Some(ref kk) if kk == k => return Some(&mut self.slots[s]),
                None if free.is_none() => free = Some(s),
                _ => {}
            }
        }
        if !insert {
            return None;
        }
        let s = free.unwrap_or(h & mask);
        self.slots[s] = Conn { key: Some(*k), mss: 1448, ..Conn::default() };
        Some(&mut self.slots[s])
    }

    /// A packet in the data direction: a SYN records the sender's options.
    pub fn learn_forward(&mut self, buf: &[u8]) {
        let Parsed::Tcp(v) = packet::parse(buf) else { return };
        if v.flags & SYN == 0 || v.flags & ACK != 0 {
            return;
        }
        let o = packet::syn_options(buf, &v);
        let c = self.slot(&(v.src, v.dst, v.sport, v.dport), true).expect("insert");
        // A retransmitted SYN starts the connection over.
        *c = Conn { key: c.key, ..Conn::default() };
        c.snd_ws = o.wscale;
        let ts = if o.timestamps { 12 } else { 0 };
        c.mss = o.mss.unwrap_or(536).saturating_sub(ts).max(1);
    }

    /// A packet in the ACK direction: a SYN-ACK records the receiver's window scale.
    pub fn learn_reverse(&mut self, buf: &[u8]) {
        let Parsed::Tcp(v) = packet::parse(buf) else { return };
        if v.flags & SYN == 0 {
            return;
        }
        let o = packet::syn_options(buf, &v);
        if let Some(c) = self.slot(&(v.dst, v.src, v.dport, v.sport), false) {
            c.rcv_ws = o.wscale;
            c.synack_seen = true;
        }
    }

    /// The shift of the receiver's windows and the MSS, if the handshake was seen.
    fn scaling(&mut self, v: &TcpView) -> Option<(u32, u64)> {
        let c = self.slot(&(v.dst, v.src, v.dport, v.sport), false)?;
        // Without the SYN-ACK we cannot know whether scaling is on.
        if !c.synack_seen {
            return None;
        }
        let shift = match (c.snd_ws, c.rcv_ws) {
            (Some(_), Some(r)) => r.min(14) as u32, // RFC 7323 §2.3: values above 14 mean 14
            _ => 0,
        };
        Some((shift, c.mss as u64))
    }
}

/// Offers an ACK travelling to a sender (in `buf`) to `scheme`; lowers its window field if the
/// scheme asks for less, never raising it, and keeps the TCP checksum valid.
pub fn rewrite_ack(
    buf: &mut [u8],
    conns: &mut ConnTable,
    scheme: &mut dyn AckRewriter,
    view: &QueueView,
) -> Outcome {
    let Parsed::Tcp(v) = packet::parse(buf) else { return Outcome::NotAck };
    if v.flags & ACK == 0 || v.flags & SYN != 0 {
        return Outcome::NotAck;
    }
    let Some((shift, mss)) = conns.scaling(&v) else { return Outcome::Unknown };
    // The simulator's rule: never raise the window, round the scaled field up.
    match rewritten_field(scheme, v.window, shift, mss, view) {
        Some(field) => {
            set_window(buf, &v, field);
            Outcome::Lowered
        }
        None => Outcome::Kept,
    }
}

/// Writes `field` into the window of the TCP header described by `v`, updating the checksum.
pub fn set_window(buf: &mut [u8], v: &TcpView, field: u16) {
    let w = v.ip_hlen + 14;
    let c = v.ip_hlen + 16;
    // `v` came from parsing this buffer: both fields lie inside the 20-byte TCP header.
    let old = u16::from_be_bytes([buf[w], buf[w + 1]]);
    let ck = u16::from_be_bytes([buf[c], buf[c + 1]]);
    buf[w..w + 2].copy_from_slice(&field.to_be_bytes());
    buf[c..c + 2].copy_from_slice(&checksum::update(ck, old, field).to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::tests::tcp_packet;
    use bloatlab_sim::config::EwtParams;
    use bloatlab_sim::gateway::Ewt;
    use bloatlab_sim::queue::Backlog;
    use bloatlab_sim::units::SimTime;

    fn view(used: u64, cap: u64) -> QueueView {
        QueueView {
            now: SimTime(0),
            backlog: Backlog { bytes: used, pkts: used / 1500 },
            capacity_bytes: cap,
        }
    }

    fn syn(ws: Option<u8>, flags: u8) -> Vec<u8> {
        let mut o = vec![2, 4, 0x05, 0xb4, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0];
        if let Some(s) = ws {
            o.extend_from_slice(&[3, 3, s]);
        }
        while o.len() % 4 != 0 {
            o.push(1);
        }
        tcp_packet(flags, 64240, &o, 0)
    }

    /// The same packet seen from the other side (addresses and ports swapped).
    fn reversed(mut p: Vec<u8>) -> Vec<u8> {
        let (a, b) = (p[12..16].to_vec(), p[16..20].to_vec());
        p[12..16].copy_from_slice(&b);
        p[16..20].copy_from_slice(&a);
        let (s, d) = (p[20..22].to_vec(), p[22..24].to_vec());
        p[20..22].copy_from_slice(&d);
        p[22..24].copy_from_slice(&s);
        crate::checksum::fill_tcp(&mut p);
        p
    }

    #[test]
    fn ewt_cut_respects_window_scaling_and_checksum() {
        let mut t = ConnTable::new(64);
        t.learn_forward(&syn(Some(7), SYN));
        t.learn_reverse(&reversed(syn(Some(9), SYN | ACK)));
        let mut ewt = Ewt::new(EwtParams { start: 30_000 });
        // Field 1000 << 9 = 512000 B; queue 50 % full → 256000 B → field 500.
        let mut ack = reversed(tcp_packet(ACK, 1000, &[], 0));
        assert_eq!(
            rewrite_ack(&mut ack, &mut t, &mut ewt, &view(50_000, 100_000)),
            Outcome::Lowered
        );
        assert_eq!(u16::from_be_bytes([ack[34], ack[35]]), 500);
        assert!(crate::checksum::tcp_ok(&ack));
        // Below the start point: untouched.
        let mut ack = reversed(tcp_packet(ACK, 1000, &[], 0));
        let before = ack.clone();
        assert_eq!(rewrite_ack(&mut ack, &mut t, &mut ewt, &view(10_000, 100_000)), Outcome::Kept);
        assert_eq!(ack, before);
        // Nearly full: one MSS (1448 B = 2.83 fields of 512 B → rounded up to 3).
        let mut ack = reversed(tcp_packet(ACK, 1000, &[], 0));
        rewrite_ack(&mut ack, &mut t, &mut ewt, &view(99_999, 100_000));
        assert_eq!(u16::from_be_bytes([ack[34], ack[35]]), 3);
    }

    #[test]
    fn scaling_needs_both_sides_and_unknown_connections_are_left_alone() {
        let mut ewt = Ewt::new(EwtParams { start: 0 });
        // Sender offered scaling, receiver did not: windows are unscaled.
        let mut t = ConnTable::new(64);
        t.learn_forward(&syn(Some(7), SYN));
        t.learn_reverse(&reversed(syn(None, SYN | ACK)));
        let mut ack = reversed(tcp_packet(ACK, 60000, &[], 0));
        rewrite_ack(&mut ack, &mut t, &mut ewt, &view(50_000, 100_000));
        assert_eq!(u16::from_be_bytes([ack[34], ack[35]]), 30000);
        // No handshake seen.
        let mut t = ConnTable::new(64);
        let mut ack = reversed(tcp_packet(ACK, 60000, &[], 0));
        assert_eq!(
            rewrite_ack(&mut ack, &mut t, &mut ewt, &view(50_000, 100_000)),
            Outcome::Unknown
        );
        // SYN seen but SYN-ACK not yet: unknown.
        t.learn_forward(&syn(Some(7), SYN));
        assert_eq!(
            rewrite_ack(&mut ack, &mut t, &mut ewt, &view(50_000, 100_000)),
            Outcome::Unknown
        );
    }

    #[test]
    fn a_full_table_forgets_but_never_fails() {
        let mut t = ConnTable::new(8);
        for port in 0..1000u16 {
            let mut p = syn(Some(7), SYN);
            p[20..22].copy_from_slice(&port.to_be_bytes());
            crate::checksum::fill_tcp(&mut p);
            t.learn_forward(&p);
        }
        assert_eq!(t.slots.len(), 8);
    }
}
