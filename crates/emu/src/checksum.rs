//! Internet checksums: the incremental update of RFC 1624 (what the rewriter uses on the hot
//! path: a 16-bit field changed, the checksum follows without touching the payload) and full
//! computations (tests and the property checks).

/// RFC 1624 eqn. 3: the checksum after one 16-bit word changes from `old` to `new`,
/// HC' = ~(~HC + ~m + m'). Never yields the 0x0000 / 0xFFFF ambiguity of eqn. 2.
#[inline]
pub fn update(ck: u16, old: u16, new: u16) -> u16 {
    let mut sum = (!ck as u32) + (!old as u32) + new as u32;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    !(sum as u16)
}

/// One's-complement sum of `data` (odd length padded with a zero byte), not folded.
fn sum(data: &[u8], mut acc: u32) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        acc += (*b as u32) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The TCP checksum of an IPv4 packet's segment as it should be (checksum field counted as 0).
/// None when the headers do not describe a TCP segment inside the buffer.
pub fn tcp_expected(p: &[u8]) -> Option<u16> {
    let ihl = ((*p.first()? & 0x0f) as usize) * 4;
    let total = u16::from_be_bytes([*p.get(2)?, *p.get(3)?]) as usize;
    let seg = p.get(ihl..total)?;
    if seg.len() < 20 {
        return None;
    }
    let mut acc = sum(p.get(12..20)?, 0);
    acc += 6 + seg.len() as u32;
    acc = sum(&seg[..16], acc);
    acc = sum(&seg[18..], acc);
    Some(!fold(acc))
}

/// Whether the TCP checksum in `p` verifies (the receiver's check: the one's-complement sum
/// over pseudo-header and segment, checksum included, is all ones — so 0x0000 and 0xFFFF are
/// both accepted where they are equivalent).
pub fn tcp_ok(p: &[u8]) -> bool {
    let Some(&b0) = p.first() else { return false };
    let ihl = ((b0 & 0x0f) as usize) * 4;
    let Some(total) = p.get(2..4).map(|b| u16::from_be_bytes([b[0], b[1]]) as usize) else {
        return false;
    };
    let (Some(seg), Some(addrs)) = (p.get(ihl..total), p.get(12..20)) else { return false };
    if seg.len() < 20 {
        return false;
    }
    let acc = sum(seg, sum(addrs, 6 + seg.len() as u32));
    fold(acc) == 0xffff
}

pub fn ipv4_ok(p: &[u8]) -> bool {
    let Some(&b0) = p.first() else { return false };
    let ihl = ((b0 & 0x0f) as usize) * 4;
    p.len() >= ihl && fold(sum(&p[..ihl], 0)) == 0xffff
}

/// Writes a correct IPv4 header checksum.
pub fn fill_ipv4(p: &mut [u8]) {
    let ihl = ((p[0] & 0x0f) as usize) * 4;
    p[10] = 0;
    p[11] = 0;
    let c = !fold(sum(&p[..ihl], 0));
    p[10..12].copy_from_slice(&c.to_be_bytes());
}

/// Writes a correct TCP checksum (the packet must hold a TCP header).
pub fn fill_tcp(p: &mut [u8]) {
    let ihl = ((p[0] & 0x0f) as usize) * 4;
    let c = tcp_expected(p).expect("a TCP segment");
    p[ihl + 16..ihl + 18].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 1624 §4's example: HC = 0xDD2F, m = 0x5555 → m' = 0x3285 gives HC' = 0x0000.
    #[test]
    fn rfc1624_example() {
        assert_eq!(update(0xdd2f, 0x5555, 0x3285), 0x0000);
    }

    #[test]
    fn incremental_equals_full_recomputation() {
        let mut p = crate::packet::tests::tcp_packet(crate::packet::ACK, 0x1234, &[], 33);
        for new in [0u16, 1, 0x1233, 0xffff, 0x8000] {
            let at = 20 + 14;
            let old = u16::from_be_bytes([p[at], p[at + 1]]);
            let ck = u16::from_be_bytes([p[36], p[37]]);
            p[at..at + 2].copy_from_slice(&new.to_be_bytes());
            p[36..38].copy_from_slice(&update(ck, old, new).to_be_bytes());
            assert!(tcp_ok(&p), "window {new:#x}");
        }
    }
}
