//! The look-ahead: while one event runs, ask the CPU to start loading what the next events
//! will touch. At thousands of links and sockets most of an event's time is otherwise spent
//! waiting for the link, packet or socket it names to come from memory. Hints only: nothing
//! here changes what the run computes (the golden manifest checks it event for event), and
//! the `no-prefetch` feature removes all of it (docs/performance.md, "How to measure").
//!
//! Each part names only its own lines: the link its hot lines ([`Link::prefetch`]), the
//! packet pool what forwarding or delivering a packet reads, the socket what a receive, an
//! ACK or a timer reads of it ([`Touch`], [`TcpSocket::lines_for`]) and, for an ACK, outside
//! it ([`TcpSocket::prefetch_ack_state`]). The world adds its own per-route and per-flow
//! lines, and the two maps below that exist only to know where a packet goes before it does.
//!
//! [`Link::prefetch`]: crate::net::Link::prefetch

use super::{Endpoint, RouteRt, World};
use crate::engine::Event;
use crate::ids::{LinkId, PacketId, SockId};
use crate::tcp::{TcpSocket, Touch};

/// Topologies with at least this many links also prefetch along the arrival lanes: below,
/// the state stays in cache and the look-ahead is pure cost (docs/performance.md).
const LANE_LINKS: usize = 4096;

/// What the look-ahead knows beyond the world's own state.
pub(super) struct Lookahead {
    /// Prefetch four arrivals ahead along the lane of the current event.
    lanes: bool,
    /// Per link: the one endpoint every packet leaving it is delivered to (u32::MAX: none,
    /// or several), so that the endpoint is loaded an event before the arrival.
    sole_dst: Vec<u32>,
    /// Per endpoint, the first link of the route it sends on (loaded with the endpoint: a
    /// segment received or a timer fired is often answered at once).
    first_hop: Vec<LinkId>,
}

impl Lookahead {
    /// For `n_links` links and the world's routes (endpoint i sends on route i: the world
    /// builds two of each per flow, in the same order).
    pub(super) fn new(n_links: usize, routes: &[RouteRt]) -> Lookahead {
        let mut last_hop_dst: Vec<Option<Option<u32>>> = vec![None; n_links];
        for r in routes {
            let d = r.path.dst.0;
            let slot = &mut last_hop_dst[r.path.links[r.path.len as usize - 1].idx()];
            *slot = match *slot {
                None => Some(Some(d)),
                Some(Some(e)) if e == d => Some(Some(d)),
                _ => Some(None),
            };
        }
        Lookahead {
            lanes: n_links >= LANE_LINKS,
            sole_dst: last_hop_dst.into_iter().map(|d| d.flatten().unwrap_or(u32::MAX)).collect(),
            first_hop: routes.iter().map(|r| r.path.links[0]).collect(),
        }
    }
}

// The endpoint is prefetched before its kind is known (reading its tag would be the very
// miss the prefetch is for), with a TCP socket's lines. They are the endpoint's own only if
// the socket fills the enum (its tag in the socket's niche, the socket at offset 0).
const _: () = assert!(
    std::mem::size_of::<Endpoint>() == std::mem::size_of::<TcpSocket>(),
    "Endpoint must be exactly a TcpSocket (its tag in the socket's niche): the look-ahead \
     prefetches an endpoint with the socket's line numbers"
);

impl Endpoint {
    /// Starts loading the lines of this endpoint that `t` reads, without reading it.
    #[inline]
    fn prefetch(&self, t: Touch) {
        crate::engine::prefetch_lines(self, TcpSocket::lines_for(t));
    }
}

impl World {
    /// Called by the loop before each event: starts loading what the next event (the queue's
    /// top) and, on large topologies, the next arrivals of the current lane will touch.
    #[inline(always)]
    pub(super) fn prefetch_ahead(&self) {
        if cfg!(feature = "no-prefetch") {
            return;
        }
        if let Some(&next) = self.events.peek() {
            self.prefetch_for(next);
        }
        if self.ahead.lanes {
            self.prefetch_lane_ahead();
        }
    }

    /// What event `ev` will touch first (usually the next to fire: events the current one
    /// schedules almost always come later).
    #[inline(always)]
    fn prefetch_for(&self, ev: Event) {
        match ev {
            Event::LinkTxDone(l) => self.links[l.idx()].prefetch(),
            Event::LinkArrive(l, p) => {
                self.links[l.idx()].prefetch();
                // Where the packet is delivered: its endpoint, its whole header, and the link
                // the answer will take; elsewhere forwarding reads little of the packet.
                if let Some(&s) = self.ahead.sole_dst.get(l.idx()).filter(|&&s| s != u32::MAX) {
                    self.prefetch_delivery(p, SockId(s));
                    self.links[self.ahead.first_hop[s as usize].idx()].prefetch();
                } else {
                    self.pool.prefetch_for_forward(p);
                }
            }
            Event::Timer(s, _) => self.eps[s.idx()].prefetch(Touch::Timer),
            _ => {}
        }
    }

    /// Four arrivals ahead in the lane the current event came from, a pipeline of loads a
    /// step apart: the packet, then its route, then the link it goes to next or the endpoint
    /// it is delivered to, then what that endpoint's answer reads outside it (its route and
    /// flow counters; for an ACK the socket's [`TcpSocket::prefetch_ack_state`]). Forwarding
    /// and the socket would otherwise miss on each in turn at every hop of a large topology.
    /// Each step reads only memory an earlier step prefetched.
    #[inline]
    fn prefetch_lane_ahead(&self) {
        if let Some(&Event::LinkArrive(_, p)) = self.events.lane_ahead(3) {
            self.pool.prefetch_for_forward(p);
        }
        if let Some(&Event::LinkArrive(_, p)) = self.events.lane_ahead(2) {
            crate::engine::prefetch(&self.routes[self.pool.get(p).route.idx()], 1);
        }
        if let Some(&Event::LinkArrive(_, id)) = self.events.lane_ahead(1) {
            let p = self.pool.get(id);
            let r = &self.routes[p.route.idx()].path;
            let next = p.hop as usize + 1;
            if next < r.len as usize {
                self.links[r.links[next].idx()].prefetch();
            } else {
                // Delivered: the endpoint's lines and the whole header need the longer lead.
                self.prefetch_delivery(id, r.dst);
            }
        }
        if let Some(&Event::LinkArrive(_, id)) = self.events.lane_ahead(0) {
            let p = self.pool.get(id);
            let r = &self.routes[p.route.idx()].path;
            if p.hop as usize + 1 == r.len as usize {
                if let Endpoint::Tcp(t) = &self.eps[r.dst.idx()] {
                    // What the answer it sends reads: its route and its flow's counters.
                    crate::engine::prefetch(&self.routes[t.route().idx()], 1);
                    crate::engine::prefetch(&self.pkts[t.flow.idx()], 1);
                    if p.pure_ack.is_some() {
                        t.prefetch_ack_state();
                    }
                }
            }
        }
    }

    /// Packet `id` is about to be delivered to endpoint `s`: its header, and what the
    /// delivery reads of the endpoint (a data segment's receiver, or a pure ACK's sender).
    /// (The packet's first line, read here, was prefetched earlier.)
    #[inline]
    fn prefetch_delivery(&self, id: PacketId, s: SockId) {
        self.pool.prefetch_for_delivery(id);
        let t = if self.pool.get(id).pure_ack.is_none() { Touch::Receive } else { Touch::Ack };
        self.eps[s.idx()].prefetch(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Packet;

    /// What the look-ahead's line counts assume of the packet: forwarding reads its first
    /// line only, a delivery all of it, and it never straddles more lines than it must.
    #[test]
    fn a_packet_forwards_from_its_first_32_bytes_and_delivers_from_160() {
        let pure_ack = std::mem::size_of::<Option<crate::queue::PureAck>>();
        let first = std::mem::offset_of!(Packet, pure_ack) + pure_ack;
        assert!(
            first <= 32,
            "what forwarding reads of a packet (flow .. pure_ack) ends at byte {first}: it must \
             fit in the first 32 bytes, the part of a 32-aligned packet that is one line"
        );
        assert_eq!(
            std::mem::align_of::<Packet>(),
            32,
            "Packet must be 32-aligned: its first 32 bytes then never straddle two lines"
        );
        let size = std::mem::size_of::<Packet>();
        assert!(
            size <= 160,
            "Packet is {size} bytes (at most 160: three lines a delivery, and millions of \
             packets in deep queues)"
        );
    }

    /// The endpoint the look-ahead prefetches is a TCP socket's size (checked when compiling,
    /// above) and no larger than two kilobytes.
    #[test]
    fn an_endpoint_is_a_socket() {
        let size = std::mem::size_of::<Endpoint>();
        assert!(size <= 2048, "Endpoint is {size} bytes (at most 2 kB: two per flow)");
        assert_eq!(std::mem::align_of::<Endpoint>(), 64, "Endpoint must be line-aligned");
    }
}
