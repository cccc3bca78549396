//! IPv4 / TCP header parsing on raw packets read from a TUN device. Every access is
//! bounds-checked against the buffer *and* the lengths the headers claim, so a truncated or
//! lying packet parses as `Other` or `Invalid`, never as a panic or an out-of-range access.

use bloatlab_sim::net::Ecn;
use bloatlab_sim::queue::{FlowKey, PureAck};

/// TCP flag bits (byte 13 of the header).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const ACK: u8 = 0x10;

/// Where the fields of a well-formed IPv4 + TCP packet are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpView {
    /// IP header length (bytes).
    pub ip_hlen: usize,
    /// IP total length (bytes; ≤ the buffer's length).
    pub total_len: usize,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    /// TCP header length including options (bytes).
    pub tcp_hlen: usize,
    pub flags: u8,
    pub window: u16,
    pub payload_len: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    Tcp(TcpView),
    /// A valid IPv4 packet that is not (a first fragment of) TCP.
    OtherIpv4 {
        total_len: usize,
    },
    /// Not IPv4, or headers that contradict the buffer.
    Invalid,
}

#[inline]
fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

#[inline]
fn addr(b: &[u8], at: usize) -> Option<[u8; 4]> {
    b.get(at..at + 4)?.try_into().ok()
}

/// Parses the first `buf.len()` bytes as an IPv4 packet.
pub fn parse(buf: &[u8]) -> Parsed {
    parse_opt(buf).unwrap_or(Parsed::Invalid)
}

fn parse_opt(buf: &[u8]) -> Option<Parsed> {
    let v_ihl = *buf.first()?;
    if v_ihl >> 4 != 4 {
        return None;
    }
    let ip_hlen = ((v_ihl & 0x0f) as usize) * 4;
    let total_len = be16(buf, 2)? as usize;
    if ip_hlen < 20 || total_len < ip_hlen || total_len > buf.len() {
        return None;
    }
    let frag = be16(buf, 6)?;
    // Only an unfragmented packet (no MF, offset 0) has a TCP header we may rewrite.
    if buf[9] != 6 || frag & 0x3fff != 0 {
        return Some(Parsed::OtherIpv4 { total_len });
    }
    let l4 = &buf[ip_hlen..total_len];
    if l4.len() < 20 {
        return None;
    }
    let tcp_hlen = ((l4[12] >> 4) as usize) * 4;
    if tcp_hlen < 20 || tcp_hlen > l4.len() {
        return None;
    }
    Some(Parsed::Tcp(TcpView {
        ip_hlen,
        total_len,
        src: addr(buf, 12)?,
        dst: addr(buf, 16)?,
        sport: be16(l4, 0)?,
        dport: be16(l4, 2)?,
        tcp_hlen,
        flags: l4[13],
        window: be16(l4, 14)?,
        payload_len: l4.len() - tcp_hlen,
    }))
}

/// The ports of an unfragmented IPv4 UDP packet that `parse` found well formed (None for
/// anything else): the emulator's UDP flows are known by port, as its TCP flows are.
pub fn udp_ports(buf: &[u8]) -> Option<(u16, u16)> {
    let ip_hlen = ((*buf.first()? & 0x0f) as usize) * 4;
    if *buf.get(9)? != 17 || be16(buf, 6)? & 0x3fff != 0 {
        return None;
    }
    Some((be16(buf, ip_hlen)?, be16(buf, ip_hlen + 2)?))
}

/// The options a SYN carries that matter to a window rewriter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SynOpts {
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub timestamps: bool,
}

/// Reads the TCP options of `v` (in `buf`). Malformed options (a length that is < 2 or runs
/// past the header) end the walk: what was read before them stands.
pub fn syn_options(buf: &[u8], v: &TcpView) -> SynOpts {
    let mut o = SynOpts::default();
    let start = v.ip_hlen + 20;
    let end = v.ip_hlen + v.tcp_hlen;
    let Some(opts) = buf.get(start..end) else { return o };
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => break,
            1 => i += 1,
            kind => {
                let Some(&len) = opts.get(i + 1) else { break };
                let len = len as usize;
                if len < 2 || i + len > opts.len() {
                    break;
                }
                let body = &opts[i + 2..i + len];
                match (kind, body.len()) {
                    (2, 2) => o.mss = Some(u16::from_be_bytes([body[0], body[1]])),
                    (3, 1) => o.wscale = Some(body[0]),
                    (8, 8) => o.timestamps = true,
                    _ => {}
                }
                i += len;
            }
        }
    }
    o
}

/// The ECN codepoint of the IP header (RFC 3168: 00 Not-ECT, 10 ECT(0), 01 ECT(1), 11 CE);
/// Not-ECT for a buffer too short to hold it.
#[inline]
pub fn ecn(buf: &[u8]) -> Ecn {
    match buf.get(1).map(|tos| tos & 0x03) {
        Some(0b10) => Ecn::Ect0,
        Some(0b01) => Ecn::Ect1,
        Some(0b11) => Ecn::Ce,
        _ => Ecn::NotEct,
    }
}

/// What a queue discipline classifies on, read from the IP and transport headers: the
/// 5-tuple (ports for TCP, UDP and DCCP; 0 otherwise or for a non-first fragment), DSCP and,
/// for a pure TCP ACK, its acknowledgement number. Anything unparsable gives a zero key.
pub fn queue_fields(buf: &[u8]) -> (FlowKey, u8, Option<PureAck>) {
    let dscp = buf.get(1).map_or(0, |tos| tos >> 2);
    let Some(&v_ihl) = buf.first() else { return (FlowKey::default(), dscp, None) };
    let ip_hlen = ((v_ihl & 0x0f) as usize) * 4;
    if v_ihl >> 4 != 4 || buf.len() < 20 || ip_hlen < 20 {
        return (FlowKey::default(), dscp, None);
    }
    let u32_at =
        |at: usize| buf.get(at..at + 4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let proto = buf[9];
    let first_fragment = be16(buf, 6).is_some_and(|f| f & 0x1fff == 0);
    let ports = matches!(proto, 6 | 17 | 33) && first_fragment;
    let port = |at: usize| if ports { be16(buf, ip_hlen + at).unwrap_or(0) } else { 0 };
    let key = FlowKey { src: u32_at(12), dst: u32_at(16), sport: port(0), dport: port(2), proto };
    let ack = match parse(buf) {
        Parsed::Tcp(v)
            if v.payload_len == 0 && v.flags & ACK != 0 && v.flags & (SYN | FIN | RST) == 0 =>
        {
            // No SACK option (kind 5) and no ECE/CWR: the ACK says nothing a later one won't.
            let opts = buf.get(v.ip_hlen + 20..v.ip_hlen + v.tcp_hlen).unwrap_or(&[]);
            let plain = v.flags & 0xc0 == 0 && !has_option(opts, 5);
            Some(PureAck::new(u32_at(v.ip_hlen + 8) as u64, plain))
        }
        _ => None,
    };
    (key, dscp, ack)
}

/// Whether a TCP option of `kind` is present (malformed options end the walk).
fn has_option(opts: &[u8], kind: u8) -> bool {
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => return false,
            1 => i += 1,
            k => {
                if k == kind {
                    return true;
                }
                let Some(&len) = opts.get(i + 1) else { return false };
                if len < 2 {
                    return false;
                }
                i += len as usize;
            }
        }
    }
    false
}

/// Sets the ECN field to CE, fixing the IP header checksum (RFC 1624). Does nothing to a
/// buffer too short to hold an IPv4 header.
pub fn mark_ce(buf: &mut [u8]) {
    if buf.len() < 20 || buf[0] >> 4 != 4 {
        return;
    }
    let old = u16::from_be_bytes([buf[0], buf[1]]);
    buf[1] |= 0x03;
    let new = u16::from_be_bytes([buf[0], buf[1]]);
    let ck = u16::from_be_bytes([buf[10], buf[11]]);
    buf[10..12].copy_from_slice(&crate::checksum::update(ck, old, new).to_be_bytes());
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal IPv4/TCP packet with the given TCP options and payload, checksums correct.
    pub fn tcp_packet(flags: u8, window: u16, options: &[u8], payload: usize) -> Vec<u8> {
        assert!(options.len().is_multiple_of(4));
        let tcp_hlen = 20 + options.len();
        let total = 20 + tcp_hlen + payload;
        let mut b = vec![0u8; total];
        b[0] = 0x45;
        b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        b[8] = 64;
        b[9] = 6;
        b[12..16].copy_from_slice(&[10, 0, 0, 1]);
        b[16..20].copy_from_slice(&[10, 1, 0, 1]);
        let t = 20;
        b[t..t + 2].copy_from_slice(&10000u16.to_be_bytes());
        b[t + 2..t + 4].copy_from_slice(&5001u16.to_be_bytes());
        b[t + 4..t + 8].copy_from_slice(&12345u32.to_be_bytes());
        b[t + 12] = ((tcp_hlen / 4) as u8) << 4;
        b[t + 13] = flags;
        b[t + 14..t + 16].copy_from_slice(&window.to_be_bytes());
        b[t + 20..t + 20 + options.len()].copy_from_slice(options);
        for (i, x) in b[t + tcp_hlen..].iter_mut().enumerate() {
            *x = i as u8;
        }
        crate::checksum::fill_ipv4(&mut b);
        crate::checksum::fill_tcp(&mut b);
        b
    }

    #[test]
    fn parses_a_syn_with_options() {
        // MSS 1460, SACK-permitted, timestamps, NOP, window scale 7.
        let opts = [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7];
        let p = tcp_packet(SYN, 64240, &opts, 0);
        let Parsed::Tcp(v) = parse(&p) else { panic!("not tcp") };
        assert_eq!(
            (v.sport, v.dport, v.flags, v.window, v.tcp_hlen, v.payload_len),
            (10000, 5001, SYN, 64240, 40, 0)
        );
        assert_eq!(
            syn_options(&p, &v),
            SynOpts { mss: Some(1460), wscale: Some(7), timestamps: true }
        );
    }

    #[test]
    fn rejects_lies_and_truncation() {
        let p = tcp_packet(ACK, 1000, &[], 100);
        assert!(matches!(parse(&p), Parsed::Tcp(_)));
        assert_eq!(parse(&p[..p.len() - 1]), Parsed::Invalid, "total length beyond the buffer");
        assert_eq!(parse(&p[..30]), Parsed::Invalid);
        let mut q = p.clone();
        q[0] = 0x44; // IHL 4 < 5
        assert_eq!(parse(&q), Parsed::Invalid);
        let mut q = p.clone();
        q[20 + 12] = 0xf0; // TCP data offset 60 B > what the packet holds? (140 B of TCP: fits)
        assert!(matches!(parse(&q), Parsed::Tcp(v) if v.tcp_hlen == 60));
        let mut q = p.clone();
        q[2..4].copy_from_slice(&30u16.to_be_bytes()); // total length cuts the TCP header
        assert_eq!(parse(&q), Parsed::Invalid);
        let mut q = p.clone();
        q[6] = 0x20; // more fragments: not rewritable
        assert_eq!(parse(&q), Parsed::OtherIpv4 { total_len: p.len() });
        let mut q = p;
        q[0] = 0x60; // IPv6
        assert_eq!(parse(&q), Parsed::Invalid);
        assert_eq!(parse(&[]), Parsed::Invalid);
    }

    #[test]
    fn malformed_options_stop_the_walk() {
        // Window scale, then an option with length 0, then an MSS that must not be read.
        let opts = [3, 3, 5, 9, 0, 2, 4, 0x05, 0xb4, 0, 0, 0];
        let p = tcp_packet(SYN, 1, &opts, 0);
        let Parsed::Tcp(v) = parse(&p) else { panic!() };
        assert_eq!(syn_options(&p, &v), SynOpts { mss: None, wscale: Some(5), timestamps: false });
        // An option whose length runs past the header.
        let opts = [1, 1, 3, 9];
        let p = tcp_packet(SYN, 1, &opts, 0);
        let Parsed::Tcp(v) = parse(&p) else { panic!() };
        assert_eq!(syn_options(&p, &v), SynOpts::default());
    }

    #[test]
    fn ce_mark_keeps_the_ip_checksum_valid() {
        let mut p = tcp_packet(ACK, 1000, &[], 10);
        p[1] = 0x02; // ECT(0)
        crate::checksum::fill_ipv4(&mut p);
        assert_eq!(ecn(&p), Ecn::Ect0);
        mark_ce(&mut p);
        assert_eq!(p[1] & 3, 3);
        assert!(crate::checksum::ipv4_ok(&p));
    }

    #[test]
    fn queue_fields_read_the_five_tuple_dscp_and_pure_acks() {
        let mut p = tcp_packet(ACK, 1000, &[], 0);
        p[1] = (46 << 2) | 0b01; // EF, ECT(1)
        let (k, dscp, ack) = queue_fields(&p);
        assert_eq!(
            k,
            FlowKey { src: 0x0a00_0001, dst: 0x0a01_0001, sport: 10000, dport: 5001, proto: 6 }
        );
        assert_eq!(dscp, 46);
        assert_eq!(ack, Some(PureAck::new(0, true)));
        assert_eq!(ecn(&p), Ecn::Ect1);
        // Data is not a pure ACK; a SACK option makes an ACK not plain.
        assert_eq!(queue_fields(&tcp_packet(ACK, 1000, &[], 10)).2, None);
        let sack = [1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2];
        assert_eq!(
            queue_fields(&tcp_packet(ACK, 1000, &sack, 0)).2.map(|a| a.plain()),
            Some(false)
        );
        assert_eq!(queue_fields(&[]).0, FlowKey::default());
    }
}
