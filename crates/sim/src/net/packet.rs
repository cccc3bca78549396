//! Packets and the pool that holds them. Packets move through the simulation by [`PacketId`];
//! slots are recycled, so a run in steady state allocates nothing per packet.

use crate::ids::{FlowId, PacketId, RouteId};
use crate::units::SimTime;
use crate::wire::flowkey::PureAck;
pub use crate::wire::Ecn;

/// TCP flag bits: the eight of byte 13 plus AE (RFC 9768, the former NS bit), bit 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpFlags(pub u16);

impl TcpFlags {
    pub const SYN: u16 = 0x02;
    pub const ACK: u16 = 0x10;
    pub const FIN: u16 = 0x01;
    /// Push: the sender's end of an skb or of a write (with the `tcp.psh` mechanism).
    pub const PSH: u16 = 0x08;
    /// ECN-Echo: the receiver saw a CE mark (RFC 3168).
    pub const ECE: u16 = 0x40;
    /// Congestion Window Reduced: the sender reacted to ECE.
    pub const CWR: u16 = 0x80;
    /// Accurate ECN (RFC 9768): with CWR and ECE, the 3-bit ACE field of an AccECN connection.
    pub const AE: u16 = 0x100;
    #[inline]
    pub fn has(self, f: u16) -> bool {
        self.0 & f != 0
    }
}

/// Options carried on SYN and SYN-ACK only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SynOptions {
    pub mss: u16,
    /// Window-scale shift; None when the option is absent.
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
}

/// Up to three SACK blocks (the most that fit beside the timestamp option), [start, end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlocks {
    pub blocks: [(u64, u64); 3],
    pub len: u8,
}

impl SackBlocks {
    #[inline]
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }
    #[inline]
    pub fn push(&mut self, b: (u64, u64)) {
        if (self.len as usize) < self.blocks.len() {
            self.blocks[self.len as usize] = b;
            self.len += 1;
        }
    }
}

/// The AccECN option's byte counters (RFC 9768 §3.2.3), 24 bits each as on the wire: payload
/// bytes received in ECT(0), CE and ECT(1) packets. It is modelled as header fields; its
/// 11 bytes are not charged on the wire (like SACK blocks, see docs/architecture.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccEcnOption {
    pub e0b: u32,
    pub ceb: u32,
    pub e1b: u32,
}

/// A TCP header. Sequence numbers are 64-bit internally (no wrap-around in a run); the
/// 32-bit wire form is their low half. `window` is the raw 16-bit field, scaled by the
/// receiver's shift as on the wire, so gateways can rewrite it faithfully.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpHeader {
    pub seq: u64,
    pub ack: u64,
    pub len: u32,
    pub flags: TcpFlags,
    pub window: u16,
    /// Timestamp value/echo in simulated nanoseconds; None when timestamps are off.
    pub ts: Option<(u64, u64)>,
    pub sack: SackBlocks,
    pub syn_opts: SynOptions,
    /// The AccECN option, when the connection negotiated Accurate ECN.
    pub accecn: Option<AccEcnOption>,
}

/// A UDP datagram (the sequence number is the source's own count, for loss accounting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UdpHeader {
    pub seq: u64,
    pub len: u32,
    /// An echoed latency probe carries the send time of the probe it answers.
    pub echo_of: Option<SimTime>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    Tcp(TcpHeader),
    Udp(UdpHeader),
    Dccp(crate::wire::dccp::DccpHeader),
}

/// In declaration order (`repr(C)`): what forwarding reads at every hop (flow, route, hop,
/// size, ECN) comes first, so a hop that only forwards needs the packet's first line.
/// Aligned to 32 bytes (160 is a multiple, so the size stays): a packet then starts at the
/// start or the middle of a line, its first 32 bytes never straddle two lines and its whole
/// header spans three, not four (64-byte alignment would make it 192 bytes: measured slower).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Packet {
    pub flow: FlowId,
    pub route: RouteId,
    /// Size on the wire (headers + payload), what links serialize and queues count.
    pub wire_bytes: u32,
    /// Index of the link the packet is on (or about to enter) within its route.
    pub hop: u8,
    pub ecn: Ecn,
    /// Which connection of the flow sent it (the web application opens one per request):
    /// an endpoint ignores packets of an older connection, as a new port pair would.
    pub conn: u16,
    /// What queues see of a pure TCP ACK (ACK filters thin them), derived from the header by
    /// [`PacketPool::alloc`] so that no hop reads the header: write `None`.
    pub pure_ack: Option<PureAck>,
    pub sent_at: SimTime,
    pub hdr: Header,
}

impl Packet {
    /// The TCP header; panics on other transports (callers dispatch on the endpoint kind).
    #[inline]
    pub fn tcp(&self) -> &TcpHeader {
        match &self.hdr {
            Header::Tcp(h) => h,
            _ => panic!("not a TCP packet"),
        }
    }
    #[inline]
    pub fn tcp_mut(&mut self) -> Option<&mut TcpHeader> {
        match &mut self.hdr {
            Header::Tcp(h) => Some(h),
            _ => None,
        }
    }
    /// Payload bytes carried (data, not headers).
    #[inline]
    pub fn payload(&self) -> u32 {
        match &self.hdr {
            Header::Tcp(h) => h.len,
            Header::Udp(h) => h.len,
            Header::Dccp(h) => h.len,
        }
    }
}

/// Slab of packets with a free list.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    live: usize,
}

impl PacketPool {
    pub fn with_capacity(n: usize) -> Self {
        PacketPool { slots: Vec::with_capacity(n), free: Vec::with_capacity(n), live: 0 }
    }

    #[inline]
    pub fn alloc(&mut self, mut p: Packet) -> PacketId {
        p.pure_ack = match &p.hdr {
            Header::Tcp(h)
                if h.len == 0
                    && h.flags.has(TcpFlags::ACK)
                    && !h.flags.has(TcpFlags::SYN | TcpFlags::FIN) =>
            {
                let plain = h.sack.len == 0 && !h.flags.has(TcpFlags::ECE | TcpFlags::CWR);
                Some(PureAck::new(h.ack, plain))
            }
            _ => None,
        };
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            PacketId(i)
        } else {
            self.slots.push(p);
            PacketId(self.slots.len() as u32 - 1)
        }
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(!self.free.contains(&id.0), "double free of {id:?}");
        self.live -= 1;
        self.free.push(id.0);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.idx()]
    }

    /// Starts loading what forwarding packet `id` reads: its first line (see [`Packet`]'s
    /// layout). A hint; nothing happens if it is not live.
    #[inline]
    pub fn prefetch_for_forward(&self, id: PacketId) {
        self.prefetch(id, 1);
    }

    /// Starts loading what delivering packet `id` to its endpoint reads: all of it.
    #[inline]
    pub fn prefetch_for_delivery(&self, id: PacketId) {
        self.prefetch(id, usize::MAX);
    }

    #[inline]
    fn prefetch(&self, id: PacketId, lines: usize) {
        if let Some(p) = self.slots.get(id.idx()) {
            crate::engine::prefetch(p, lines);
        }
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.idx()]
    }

    /// Packets currently alive (allocated and not freed).
    pub fn live(&self) -> usize {
        self.live
    }

    /// Slots ever allocated (the pool's high-water mark).
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }

    /// Visits every live packet (end-of-run accounting; not for the hot path).
    pub fn for_each_live(&self, mut f: impl FnMut(&Packet)) {
        let mut is_free = vec![false; self.slots.len()];
        for &i in &self.free {
            is_free[i as usize] = true;
        }
        for (i, p) in self.slots.iter().enumerate() {
            if !is_free[i] {
                f(p);
            }
        }
    }
}
