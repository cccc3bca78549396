//! pcap capture of a link: classic libpcap files (microsecond timestamps, LINKTYPE_RAW) with
//! real IPv4, TCP (with MSS, window-scale, SACK-permitted, timestamp and SACK options) and
//! UDP headers, and DCCP headers (IP protocol 33; checksum left 0), so Wireshark, tshark and tcptrace read them. Payload bytes are zeros, cut at
//! the snap length. Addresses: flow i's sender is 10.0.i/256.i%256 port 10000+i, its receiver
//! 10.1.i/256.i%256 port 5001 (5001 + k for a web flow's k-th connection). Sequence numbers are the simulator's (ISN 0), mod 2^32;
//! timestamps are in milliseconds. Each packet is recorded when its serialization ends.

use crate::net::{Ecn, Header, Packet, TcpFlags};
use crate::units::SimTime;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

const LINKTYPE_RAW: u32 = 101;
const MAX_HDR: usize = 20 + 100;

/// The timestamp resolution of a pcap file (its magic number says which).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    Micro,
    Nano,
}

/// The 24-byte file header of a classic pcap file of raw IP packets (LINKTYPE_RAW).
pub fn write_file_header(out: &mut impl Write, res: Resolution, snaplen: u32) -> io::Result<()> {
    let magic: u32 = match res {
        Resolution::Micro => 0xa1b2_c3d4,
        Resolution::Nano => 0xa1b2_3c4d,
    };
    out.write_all(&magic.to_le_bytes())?;
    out.write_all(&2u16.to_le_bytes())?; // version 2.4
    out.write_all(&4u16.to_le_bytes())?;
    out.write_all(&0i32.to_le_bytes())?; // GMT offset
    out.write_all(&0u32.to_le_bytes())?; // timestamp accuracy
    out.write_all(&snaplen.to_le_bytes())?;
    out.write_all(&LINKTYPE_RAW.to_le_bytes())
}

/// The 16-byte header of one record: capture time, bytes stored, bytes on the wire.
pub fn write_record_header(
    out: &mut impl Write,
    res: Resolution,
    at: SimTime,
    incl: u32,
    orig: u32,
) -> io::Result<()> {
    let (secs, frac) = match res {
        Resolution::Micro => (at.0 / 1_000_000_000, (at.0 % 1_000_000_000) / 1_000),
        Resolution::Nano => (at.0 / 1_000_000_000, at.0 % 1_000_000_000),
    };
    out.write_all(&(secs as u32).to_le_bytes())?;
    out.write_all(&(frac as u32).to_le_bytes())?;
    out.write_all(&incl.to_le_bytes())?;
    out.write_all(&orig.to_le_bytes())
}

pub struct PcapWriter {
    out: BufWriter<File>,
    snaplen: u32,
    ip_id: u16,
    buf: Vec<u8>,
}

fn addr(side: u8, flow: u32) -> [u8; 4] {
    [10, side, (flow >> 8) as u8, flow as u8]
}

impl PcapWriter {
    pub fn create(path: &Path, snaplen: u32) -> io::Result<PcapWriter> {
        let mut out = BufWriter::new(File::create(path)?);
        write_file_header(&mut out, Resolution::Micro, snaplen)?;
        Ok(PcapWriter { out, snaplen, ip_id: 0, buf: Vec::with_capacity(MAX_HDR + 64) })
    }

    /// Records `p` crossing the link at `at`; `forward` is the data direction (sender → receiver).
    pub fn record(&mut self, at: SimTime, p: &Packet, forward: bool) -> io::Result<()> {
        let f = p.flow.0;
        let (src, dst) = if forward { (addr(0, f), addr(1, f)) } else { (addr(1, f), addr(0, f)) };
        // Each connection of a flow (web flows open one per request) gets its own port pair.
        let rport = 5001u16.wrapping_add(p.conn % 50_000);
        let (sport, dport) =
            if forward { (10_000 + f as u16, rport) } else { (rport, 10_000 + f as u16) };
        self.buf.clear();
        self.buf.extend_from_slice(&[0; 20]); // IPv4 header, filled below
        let (proto, payload) = match &p.hdr {
            Header::Tcp(h) => {
                let b = &mut self.buf;
                b.extend_from_slice(&sport.to_be_bytes());
                b.extend_from_slice(&dport.to_be_bytes());
                b.extend_from_slice(&(h.seq as u32).to_be_bytes());
                b.extend_from_slice(
                    &(if h.flags.has(TcpFlags::ACK) { h.ack as u32 } else { 0 }).to_be_bytes(),
                );
                // Byte 12: data offset (patched below) and AE; byte 13: the other flags.
                b.extend_from_slice(&[(h.flags.0 >> 8) as u8 & 1, h.flags.0 as u8]);
                b.extend_from_slice(&h.window.to_be_bytes());
                b.extend_from_slice(&[0, 0, 0, 0]); // checksum (not computed), urgent pointer
                if h.flags.has(TcpFlags::SYN) {
                    let o = h.syn_opts;
                    b.extend_from_slice(&[2, 4]);
                    b.extend_from_slice(&o.mss.to_be_bytes());
                    if o.sack_permitted {
                        b.extend_from_slice(&[1, 1, 4, 2]);
                    }
                    if let Some(ws) = o.wscale {
                        b.extend_from_slice(&[1, 3, 3, ws]);
                    }
                }
                if let Some((val, ecr)) = h.ts {
                    b.extend_from_slice(&[1, 1, 8, 10]);
                    b.extend_from_slice(&((val / 1_000_000) as u32).to_be_bytes());
                    b.extend_from_slice(&((ecr / 1_000_000) as u32).to_be_bytes());
                }
                let blocks = h.sack.as_slice();
                if !blocks.is_empty() && h.flags.has(TcpFlags::ACK) {
                    b.extend_from_slice(&[1, 1, 5, 2 + 8 * blocks.len() as u8]);
                    for &(s, e) in blocks {
                        b.extend_from_slice(&(s as u32).to_be_bytes());
                        b.extend_from_slice(&(e as u32).to_be_bytes());
                    }
                }
                if let Some(o) = h.accecn {
                    // AccECN Order 0 (kind 172): EE0B, ECEB, EE1B, 24 bits each.
                    b.extend_from_slice(&[172, 11]);
                    for v in [o.e0b, o.ceb, o.e1b] {
                        b.extend_from_slice(&v.to_be_bytes()[1..]);
                    }
                }
                while !(b.len() - 20).is_multiple_of(4) {
                    b.push(1); // NOP padding
                }
                let off = ((b.len() - 20) / 4) as u8;
                b[20 + 12] |= off << 4;
                (6u8, h.len)
            }
            Header::Udp(h) => {
                let b = &mut self.buf;
                b.extend_from_slice(&sport.to_be_bytes());
                b.extend_from_slice(&dport.to_be_bytes());
                b.extend_from_slice(&((8 + h.len) as u16).to_be_bytes());
                b.extend_from_slice(&[0, 0]);
                (17u8, h.len)
            }
            Header::Dccp(h) => {
                // RFC 4340 §5.1 generic header with X = 1 (48-bit sequence numbers), the
                // acknowledgement subheader, the Service Code (Request/Response) and options.
                let b = &mut self.buf;
                let start = b.len();
                b.extend_from_slice(&sport.to_be_bytes());
                b.extend_from_slice(&dport.to_be_bytes());
                b.extend_from_slice(&[(h.header_bytes() / 4) as u8, 0, 0, 0]); // offset, CCVal/CsCov, checksum
                b.push((h.ptype.code() << 1) | 1); // Res | Type | X
                b.push(0);
                b.extend_from_slice(&(h.seq & 0xFFFF_FFFF_FFFF).to_be_bytes()[2..]);
                if h.ptype.has_ack() {
                    b.extend_from_slice(&[0, 0]);
                    b.extend_from_slice(&(h.ack & 0xFFFF_FFFF_FFFF).to_be_bytes()[2..]);
                }
                if matches!(
                    h.ptype,
                    crate::wire::dccp::DccpType::Request | crate::wire::dccp::DccpType::Response
                ) {
                    b.extend_from_slice(&[0, 0, 0, 0]); // Service Code 0
                }
                if h.ptype == crate::wire::dccp::DccpType::Request {
                    b.extend_from_slice(&[32, 4, 1, h.ccid]); // Change L(CCID)
                }
                if let Some(r) = h.ack_ratio {
                    b.extend_from_slice(&[32, 5, 5]); // Change L(Ack Ratio)
                    b.extend_from_slice(&r.to_be_bytes());
                }
                if h.ackvec.len > 0 {
                    b.extend_from_slice(&[38, 2 + h.ackvec.len]); // Ack Vector [Nonce 0]
                    b.extend_from_slice(&h.ackvec.bytes[..h.ackvec.len as usize]);
                }
                if let Some(lr) = h.loss_rate_ppm {
                    b.extend_from_slice(&[192, 6]);
                    b.extend_from_slice(&lr.to_be_bytes());
                }
                while !(b.len() - start).is_multiple_of(4) {
                    b.push(0); // Padding
                }
                debug_assert_eq!((b.len() - start) as u32, h.header_bytes());
                (33u8, h.len)
            }
        };
        let hdr_len = self.buf.len();
        let total = hdr_len as u32 + payload;
        let ecn = match p.ecn {
            Ecn::NotEct => 0u8,
            Ecn::Ect0 => 2,
            Ecn::Ect1 => 1,
            Ecn::Ce => 3,
        };
        self.ip_id = self.ip_id.wrapping_add(1);
        let ip = &mut self.buf[..20];
        ip[0] = 0x45;
        ip[1] = ecn;
        ip[2..4].copy_from_slice(&(total.min(65_535) as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&self.ip_id.to_be_bytes());
        ip[6] = 0x40; // don't fragment
        ip[8] = 64;
        ip[9] = proto;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        let sum = checksum(&self.buf[..20]);
        self.buf[10..12].copy_from_slice(&sum.to_be_bytes());
        let incl = total.min(self.snaplen);
        let pad = incl.saturating_sub(hdr_len as u32) as usize;
        write_record_header(&mut self.out, Resolution::Micro, at, incl, total)?;
        let keep = hdr_len.min(incl as usize);
        self.out.write_all(&self.buf[..keep])?;
        const ZEROS: [u8; 256] = [0; 256];
        let mut left = pad;
        while left > 0 {
            let n = left.min(ZEROS.len());
            self.out.write_all(&ZEROS[..n])?;
            left -= n;
        }
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The Internet checksum (RFC 1071) of a header.
fn checksum(b: &[u8]) -> u16 {
    let mut sum: u32 =
        b.chunks(2).map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32).sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::checksum;

    #[test]
    fn ipv4_checksum_matches_rfc1071_example() {
        // A header whose checksum field is zero, from a textbook example.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0x00,
            0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(checksum(&h), 0xb861);
    }
}
