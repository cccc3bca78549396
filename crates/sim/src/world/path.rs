//! Where a packet goes next: from an endpoint onto the first link of its route, through each
//! link (the link's own walk: queue → serializer → loss → propagation, net/link), past the
//! gateway at the bottleneck, on to the next link of its route, and at the end into the
//! destination endpoint. Every step is an event of the engine; their order is the run.

use super::{Endpoint, FlowPkts, RouteRt, World};
use crate::engine::Event;
use crate::gateway::{self, QueueView};
use crate::ids::{LinkId, PacketId};
use crate::net::link::{AfterEnqueue, Launch, LinkCx, TxEvent, TxStart};
use crate::net::pcap::PcapWriter;
use crate::net::{PacketPool, TcpFlags};
use crate::queue::QueueDisc;
use crate::queue::{DropReason, QEntry};
use crate::units::SimTime;

/// A link and the hands it works with: the pool, the flows' drop counters, its capture.
/// (A macro rather than a method so that the borrows stay field by field.)
macro_rules! link_cx {
    ($w:ident, $l:expr) => {
        (
            &mut $w.links[$l.idx()],
            link_hands!($w, $w.captures.get_mut($l.idx()).and_then(Option::as_mut)),
        )
    };
}

/// The world's [`LinkHands`] with a capture (or None), borrowing the world's fields one by
/// one so that the caller may hold another field (a link, the BSS) beside them.
macro_rules! link_hands {
    ($w:ident, $capture:expr) => {
        LinkHands {
            pool: &mut $w.pool,
            pkts: &mut $w.pkts,
            counting: $w.counting,
            routes: &$w.routes,
            capture: $capture,
            run_end: $w.end,
            capture_error: &mut $w.capture_error,
        }
    };
}
pub(super) use link_hands;

/// What a link reaches of the world while it works.
pub(super) struct LinkHands<'a> {
    pub(super) pool: &'a mut PacketPool,
    pub(super) pkts: &'a mut [FlowPkts],
    pub(super) counting: bool,
    pub(super) routes: &'a [RouteRt],
    pub(super) capture: Option<&'a mut PcapWriter>,
    /// A folded transmission is captured when it starts, stamped with its end: one that ends
    /// after the run is left out, as an unfolded one would be.
    pub(super) run_end: SimTime,
    pub(super) capture_error: &'a mut Option<String>,
}

impl LinkCx for LinkHands<'_> {
    #[inline]
    fn mark_ce(&mut self, id: PacketId) {
        self.pool.get_mut(id).ecn = crate::net::Ecn::Ce;
    }

    #[inline]
    fn dropped(&mut self, id: PacketId, _reason: DropReason) {
        let p = self.pool.get(id);
        let fl = &mut self.pkts[p.flow.idx()];
        fl.dropped += 1;
        if self.counting && p.payload() > 0 {
            fl.w_data_drops += 1;
        }
        self.pool.free(id);
    }

    #[inline]
    fn on_wire(&mut self, id: PacketId, now: SimTime) {
        if let Some(w) = self.capture.as_mut().filter(|_| now <= self.run_end) {
            let p = self.pool.get(id);
            let forward = self.routes[p.route.idx()].path.forward;
            if let Err(e) = w.record(now, p, forward) {
                self.capture_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

impl World {
    #[inline]
    pub(super) fn inject(&mut self, pid: PacketId) {
        let p = self.pool.get(pid);
        self.pkts[p.flow.idx()].sent += 1;
        let first = self.routes[p.route.idx()].path.links[0];
        self.link_enqueue(first, pid);
    }

    /// What the queue sees of a packet: size, ECN, 5-tuple, DSCP, pure-ACK-ness.
    #[inline]
    pub(super) fn qentry(&self, pid: PacketId, now: SimTime) -> QEntry {
        let p = self.pool.get(pid);
        let RouteRt { path, key: rk } = &self.routes[p.route.idx()];
        let mut key = rk.key;
        // A web flow opens a new connection per request: a new port on the sender's side (the
        // source port on the data route).
        if p.conn != 0 {
            if path.forward {
                key.sport = key.sport.wrapping_add(p.conn);
            } else {
                key.dport = key.dport.wrapping_add(p.conn);
            }
        }
        QEntry {
            id: pid,
            bytes: p.wire_bytes,
            enqueued_at: now,
            ecn: p.ecn,
            key,
            dscp: rk.dscp,
            ack: p.pure_ack,
        }
    }

    #[inline]
    fn link_enqueue(&mut self, l: LinkId, pid: PacketId) {
        // The Wi-Fi preset's station links stand last (u32::MAX: no BSS): one compare.
        if l.0 >= self.wifi_from {
            return self.wifi_enqueue(l, pid);
        }
        let now = self.now;
        let e = self.qentry(pid, now);
        let (link, mut cx) = link_cx!(self, l);
        if !link.enqueue(e, now, &mut cx) {
            return;
        }
        if l == self.bottleneck {
            if let Some(g) = self.gateway.as_mut() {
                g.on_fwd_enqueue(&QueueView {
                    now,
                    backlog: link.queue.backlog(),
                    capacity_bytes: link.queue.capacity_bytes(),
                });
            }
        }
        match link.after_enqueue(now) {
            AfterEnqueue::StartNow => self.start_tx(l),
            AfterEnqueue::CallAt(t) => self.events.schedule(t, Event::LinkTxDone(l)),
            AfterEnqueue::Nothing => {}
        }
    }

    /// The gateway's view of the forward bottleneck queue.
    fn fwd_view(&self) -> QueueView {
        let q = &self.links[self.bottleneck.idx()].queue;
        QueueView { now: self.now, backlog: q.backlog(), capacity_bytes: q.capacity_bytes() }
    }

    /// A packet reaches the gateway on its way to a sender: learn window scaling from
    /// SYN-ACKs and let the rewriter lower the window of ACKs.
    fn gateway_rewrite(&mut self, pid: PacketId) {
        let view = self.fwd_view();
        let Some(g) = self.gateway.as_mut() else { return };
        let p = self.pool.get_mut(pid);
        let flow = p.flow.idx();
        let Some(h) = p.tcp_mut() else { return };
        if h.flags.has(TcpFlags::SYN) {
            self.gw_wscale[flow] = Some(h.syn_opts.wscale.unwrap_or(0));
            return;
        }
        if !h.flags.has(TcpFlags::ACK) {
            return;
        }
        let shift = self.gw_wscale[flow].unwrap_or(0) as u32;
        if let Some(field) =
            gateway::rewritten_field(g.as_mut(), h.window, shift, self.flows[flow].mss, &view)
        {
            h.window = field;
            self.gw_rewrites += 1;
        }
    }

    #[inline]
    fn start_tx(&mut self, l: LinkId) {
        let now = self.now;
        let (link, mut cx) = link_cx!(self, l);
        let out = link.start_tx(now, &mut cx);
        if self.gateway.is_some()
            && l == self.bottleneck
            && matches!(out, TxStart::Started { .. } | TxStart::Launched { .. })
        {
            let view = self.fwd_view();
            if let Some(g) = self.gateway.as_mut() {
                g.on_fwd_dequeue(&view);
            }
        }
        match out {
            TxStart::Started { end } => self.events.schedule(end, Event::LinkTxDone(l)),
            TxStart::Launched { launch, wake } => {
                self.launched(l, launch);
                if let Some(t) = wake {
                    self.events.schedule(t, Event::LinkTxDone(l));
                }
            }
            TxStart::Wake(t) => self.events.schedule(t, Event::LinkTxDone(l)),
            TxStart::Idle => {}
        }
    }

    #[inline]
    pub(super) fn tx_done(&mut self, l: LinkId) {
        let now = self.now;
        let (link, mut cx) = link_cx!(self, l);
        match link.tx_event(now) {
            TxEvent::End => {}
            TxEvent::WakeIdle => return self.start_tx(l),
            TxEvent::Stale => return,
        }
        let launch = link.end_tx(now, &mut cx);
        self.launched(l, launch);
        self.start_tx(l);
    }

    /// A packet that left link `l`'s serializer goes on: at once, or when it arrives.
    #[inline]
    fn launched(&mut self, l: LinkId, launch: Launch) {
        match launch {
            Launch::Lost => {}
            Launch::Out(pid) => {
                debug_assert!(!self.crosses(l, self.now, pid), "a link without delay is cut");
                self.forward(pid)
            }
            Launch::Propagating(at, pid) => {
                // A parallel run's cut link hands the packet to the far end's partition.
                if !self.crosses(l, at, pid) {
                    self.events.schedule_ahead(self.now, at, Event::LinkArrive(l, pid))
                }
            }
        }
    }

    /// Packet `pid` propagating on `l` reaches its far end.
    #[inline]
    pub(super) fn arrive(&mut self, l: LinkId, pid: PacketId) {
        self.links[l.idx()].arrive();
        self.forward(pid);
    }

    #[inline]
    pub(super) fn forward(&mut self, pid: PacketId) {
        let p = self.pool.get_mut(pid);
        p.hop += 1;
        let r = &self.routes[p.route.idx()].path;
        // An ACK that has crossed the reverse bottleneck is at the gateway router, the one that
        // holds the forward bottleneck queue: rewrite it there, before it heads to its sender.
        // (Data crossing that link, of a flow the other way, is left alone.)
        if self.gateway.is_some()
            && r.links[p.hop as usize - 1] == self.bottleneck_rev
            && !r.forward
        {
            self.gateway_rewrite(pid);
        }
        let p = self.pool.get(pid);
        let r = &self.routes[p.route.idx()].path;
        if (p.hop as usize) < r.len as usize {
            let next = r.links[p.hop as usize];
            self.link_enqueue(next, pid);
        } else {
            let dst = r.dst;
            let pkt = *p;
            self.pkts[pkt.flow.idx()].delivered += 1;
            self.pool.free(pid);
            self.ep_call(dst, |ep, cx| match ep {
                Endpoint::Tcp(s) => s.on_packet(&pkt, cx),
                Endpoint::Udp(u) => u.on_packet(&pkt, cx),
                Endpoint::Dccp(d) => d.on_packet(&pkt, cx),
            });
            if self.any_web && self.flows[pkt.flow.idx()].web.is_some() {
                self.web_progress(pkt.flow);
            }
            if self.rpm.is_some() {
                self.rpm_progress(pkt.flow);
            }
            if self.any_page && self.flows[pkt.flow.idx()].page.is_some() {
                self.page_progress(pkt.flow, dst);
            }
        }
    }
}
