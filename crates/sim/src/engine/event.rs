//! What the event queue holds: the events, and the slot that orders them.

use crate::ids::{FlowId, LinkId, PacketId, SockId};

/// Which of an endpoint's timers fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    Rto = 0,
    DelAck = 1,
    Pace = 2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A link finished serializing its current packet.
    LinkTxDone(LinkId),
    /// A packet propagating on a link reaches its far end.
    LinkArrive(LinkId, PacketId),
    /// An endpoint timer (lazily cancelled: the endpoint checks it is still wanted).
    Timer(SockId, TimerKind),
    /// A flow's application starts.
    FlowStart(FlowId),
    /// A web flow's next request starts (after its think time).
    AppNext(FlowId),
    /// Periodic time-series sample.
    Sample,
    /// End of warm-up: metrics start counting.
    WarmupEnd,
    /// The Wi-Fi BSS's medium changes state (net/wifi: a countdown or a busy period ends).
    Wifi,
}

/// A pending event and its order as one integer: time in the high half, scheduling sequence
/// number in the low half (one branch-free comparison instead of two chained ones).
/// Aligned to its size, so that a slot never straddles two cache lines.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
pub(super) struct Slot {
    pub(super) key: u128,
    pub(super) ev: Event,
}
