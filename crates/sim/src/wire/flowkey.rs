//! What a flow-aware discipline classifies on: the 5-tuple of a packet (hosts as 32-bit
//! addresses, ports, protocol) and a keyed hash of it. The key is drawn from the queue's own
//! random stream, so the hash (and its collisions, as in Linux) is perturbed per run seed.

use std::num::NonZeroU64;

/// IP protocol numbers.
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const PROTO_DCCP: u8 = 33;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct FlowKey {
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    pub proto: u8,
}

/// A pure TCP ACK (no payload, no SYN/FIN/RST): what CAKE's ACK filter may drop. Packed in
/// one word, `1 << 63 | ack << 1 | plain`, so that `Option<PureAck>` takes 8 bytes of every
/// queue entry instead of 24 (acknowledgment numbers stay far below 2^62).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PureAck(NonZeroU64);

const ACK_PRESENT: u64 = 1 << 63;

impl PureAck {
    /// `plain`: carries nothing but the cumulative ACK (no SACK blocks, no ECE/CWR). Only such
    /// ACKs are filtered (the others tell the sender more than the newer ACK does).
    #[inline]
    pub fn new(ack: u64, plain: bool) -> PureAck {
        debug_assert!(ack < 1 << 62, "acknowledgment number out of range");
        PureAck(NonZeroU64::new(ACK_PRESENT | ack << 1 | plain as u64).expect("top bit set"))
    }

    #[inline]
    pub fn ack(self) -> u64 {
        (self.0.get() & !ACK_PRESENT) >> 1
    }

    #[inline]
    pub fn plain(self) -> bool {
        self.0.get() & 1 != 0
    }
}

impl std::fmt::Debug for PureAck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PureAck").field("ack", &self.ack()).field("plain", &self.plain()).finish()
    }
}

/// splitmix64's finalizer: a cheap, well-mixing 64-bit permutation.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl FlowKey {
    /// The keyed hash of the whole 5-tuple.
    #[inline]
    pub fn hash(&self, key: u64) -> u64 {
        let a = ((self.src as u64) << 32) | self.dst as u64;
        let b = ((self.sport as u64) << 24) | ((self.dport as u64) << 8) | self.proto as u64;
        mix(mix(key ^ a).wrapping_add(b))
    }

    /// The same key with the two directions folded together (for host hashing).
    #[inline]
    pub fn host_hash(addr: u32, key: u64) -> u64 {
        mix(key.rotate_left(17) ^ addr as u64)
    }
}

/// `hash` scaled into [0, n) (multiply-shift, as Linux's reciprocal_scale).
#[inline]
pub fn bucket(hash: u64, n: u32) -> u32 {
    (((hash >> 32) * n as u64) >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_depends_on_every_field_and_the_key() {
        let k = FlowKey { src: 1, dst: 2, sport: 3, dport: 4, proto: 6 };
        let h = k.hash(42);
        assert_ne!(h, k.hash(43));
        for other in [
            FlowKey { src: 9, ..k },
            FlowKey { dst: 9, ..k },
            FlowKey { sport: 9, ..k },
            FlowKey { dport: 9, ..k },
            FlowKey { proto: 17, ..k },
        ] {
            assert_ne!(h, other.hash(42));
        }
    }

    #[test]
    fn a_pure_ack_packs_into_one_word() {
        assert_eq!(std::mem::size_of::<Option<PureAck>>(), 8);
        for (ack, plain) in
            [(0, true), (0, false), (1, true), (u32::MAX as u64, false), ((1 << 62) - 1, true)]
        {
            let a = PureAck::new(ack, plain);
            assert_eq!((a.ack(), a.plain()), (ack, plain));
        }
    }

    #[test]
    fn buckets_are_in_range_and_spread() {
        let mut seen = [0u32; 16];
        for i in 0..16_000u32 {
            let b = bucket(FlowKey { src: i, ..Default::default() }.hash(7), 16);
            seen[b as usize] += 1;
        }
        // 1000 expected per bucket; binomial sd ≈ 31, so ±200 is > 6 sd.
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
    }
}
