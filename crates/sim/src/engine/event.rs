//! What the event queue holds: the events, and the slot that orders them.

use crate::ids::{FlowId, LinkId, PacketId, SockId};

/// Which of an endpoint's timers fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    Rto = 0,
    DelAck = 1,
    Pace = 2,
}

/// Aligned to 8 bytes: copied as two whole words (an event moves through the queue's slots
/// and the loop's return values at every step; at its natural 4-byte alignment the copies
/// were split into pieces that stalled the loads that read them back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(align(8))]
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

/// Who each event is for, as a number (engine/queue.rs keys simultaneous events by it): 0 is
/// the run itself (samples, the warm-up's end), then every link's transmissions, every link's
/// arrivals, every endpoint, every flow, the RPM test's clock and the Wi-Fi BSS.
#[derive(Debug, Clone, Copy)]
pub struct Actors {
    arrive: u32,
    sock: u32,
    flow: u32,
    flows: u32,
}

impl Actors {
    pub fn new(links: usize, endpoints: usize, flows: usize) -> Actors {
        let arrive = 1 + links as u32;
        let sock = arrive + links as u32;
        Actors { arrive, sock, flow: sock + endpoints as u32, flows: flows as u32 }
    }

    pub fn count(&self) -> u64 {
        (self.flow + self.flows + 2) as u64
    }

    /// The actor `ev` is for.
    #[inline(always)]
    pub fn of(&self, ev: &Event) -> u32 {
        match *ev {
            Event::LinkTxDone(l) => 1 + l.0,
            Event::LinkArrive(l, _) => self.arrive + l.0,
            Event::Timer(s, _) => self.sock + s.0,
            // Ids past the flows: the RPM test's clock.
            Event::FlowStart(f) | Event::AppNext(f) => self.flow + f.0.min(self.flows),
            Event::Sample | Event::WarmupEnd => 0,
            Event::Wifi => self.flow + self.flows + 1,
        }
    }
}
