//! Preallocated packet buffers addressed by `PacketId`: the queue disciplines hold ids, the
//! bytes stay here. Allocation is a pop from a free list; nothing is allocated after `new`.

use bloatlab_sim::ids::PacketId;
use bloatlab_sim::units::SimTime;

/// Bytes per slot: a 1500-byte MTU packet with room to spare (TUN hands over one IP packet
/// per read; a larger one would be truncated to this and then fail to parse).
pub const SLOT: usize = 2048;

/// What the bottleneck remembers about a packet besides its bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Meta {
    pub len: u16,
    /// Flow index (from the sender's port), or `NO_FLOW`.
    pub flow: u16,
    /// Carries TCP payload (a data segment, not a pure ACK).
    pub data: bool,
    pub arrived: SimTime,
}

pub const NO_FLOW: u16 = u16::MAX;

pub struct Slab {
    bytes: Vec<u8>,
    meta: Vec<Meta>,
    free: Vec<u32>,
}

impl Slab {
    pub fn new(slots: usize) -> Slab {
        Slab {
            bytes: vec![0; slots * SLOT],
            meta: vec![Meta::default(); slots],
            free: (0..slots as u32).rev().collect(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.meta.len()
    }

    pub fn in_use(&self) -> usize {
        self.meta.len() - self.free.len()
    }

    #[inline]
    pub fn alloc(&mut self) -> Option<PacketId> {
        self.free.pop().map(PacketId)
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(!self.free.contains(&id.0), "double free");
        self.free.push(id.0);
    }

    /// The whole slot, for reading a packet into.
    #[inline]
    pub fn slot_mut(&mut self, id: PacketId) -> &mut [u8] {
        let s = id.idx() * SLOT;
        &mut self.bytes[s..s + SLOT]
    }

    /// The packet's bytes.
    #[inline]
    pub fn pkt(&self, id: PacketId) -> &[u8] {
        let s = id.idx() * SLOT;
        &self.bytes[s..s + self.meta[id.idx()].len as usize]
    }

    #[inline]
    pub fn pkt_mut(&mut self, id: PacketId) -> &mut [u8] {
        let s = id.idx() * SLOT;
        let n = self.meta[id.idx()].len as usize;
        &mut self.bytes[s..s + n]
    }

    #[inline]
    pub fn meta(&self, id: PacketId) -> &Meta {
        &self.meta[id.idx()]
    }

    #[inline]
    pub fn meta_mut(&mut self, id: PacketId) -> &mut Meta {
        &mut self.meta[id.idx()]
    }
}
