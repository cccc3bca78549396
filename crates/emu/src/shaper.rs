//! One direction of the emulated path: the simulator's link (`bloatlab_sim::net::Link`, the
//! queue → serializer → loss → propagation walk) between two access delay lines, on real
//! packets:
//!
//! ```text
//! ingress delay (near access link) → queue discipline → serializer (rate model)
//!     → [random / listed loss, data direction] → propagation (bottleneck delay)
//!     → [gateway hook] → far access delay → out
//! ```
//!
//! Every step runs at its *logical* time (when it would happen on an ideal wire), computed from
//! the rate model, not at the moment the loop gets round to it: a late wake-up delays the
//! write to the TUN device, never the queue's decisions or the rate. Events are taken in time
//! order by the caller (`Core::advance`).

use crate::access::AccessLines;
use crate::slab::Slab;
use bloatlab_sim::engine::SimRng;
use bloatlab_sim::ids::PacketId;
use bloatlab_sim::net::link::{AfterEnqueue, Launch, Link, LinkCx, LinkSpec, TxEvent};
use bloatlab_sim::net::rate_model::RateModel;
use bloatlab_sim::queue::{Backlog, DropReason, LinkQueue, QEntry, QueueDisc};
use bloatlab_sim::units::{Dur, SimTime};
use std::collections::VecDeque;

/// The internal events of a direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The link's serializer timer: the packet in the serializer finishes, or a shaping
    /// discipline (CAKE's `bandwidth`) releases its next packet.
    Tx,
    /// The head of the bottleneck propagation line arrives at the far router.
    MidExit,
    /// The head of the ingress access line reaches the queue.
    Ingress,
}

/// What a step did that the gateway may want to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Effects {
    pub enqueued: bool,
    pub dequeued: bool,
    /// A packet left the link at this time; the caller (who may rewrite it, as the gateway
    /// does with ACKs) passes it on with `to_far`.
    pub mid_exit: Option<PacketId>,
}

pub struct Direction {
    pub name: &'static str,
    ingress: AccessLines,
    /// The bottleneck link of this direction: queue, serializer, loss, propagation, and its
    /// statistics.
    pub link: Link,
    /// The packets propagating along the link (it counts them; they arrive in this order).
    mid: VecDeque<(SimTime, PacketId)>,
    out: AccessLines,
    /// Flows of the data segments this step dropped or lost (read by the caller after each step).
    pub lost_flows: Vec<u16>,
}

pub struct DirectionCfg {
    pub name: &'static str,
    /// The access delay of each RTT class (class 0: the topology's) before the link (near)
    /// and after it (far).
    pub near_delays: Vec<Dur>,
    pub far_delays: Vec<Dur>,
    /// Flow index → RTT class.
    pub flow_class: Vec<u8>,
    pub mid_delay: Dur,
    pub loss: f64,
    pub drop_list: Vec<u64>,
}

/// What the link reaches of the emulator: the slab of real packets.
struct Hands<'a> {
    slab: &'a mut Slab,
    lost_flows: &'a mut Vec<u16>,
}

impl LinkCx for Hands<'_> {
    #[inline]
    fn mark_ce(&mut self, id: PacketId) {
        crate::packet::mark_ce(self.slab.pkt_mut(id));
    }

    #[inline]
    fn dropped(&mut self, id: PacketId, _reason: DropReason) {
        let m = self.slab.meta(id);
        if m.data {
            self.lost_flows.push(m.flow);
        }
        self.slab.free(id);
    }
}

impl Direction {
    pub fn new(
        cfg: DirectionCfg,
        queue: LinkQueue,
        rate: RateModel,
        loss_rng: SimRng,
        slots: usize,
    ) -> Direction {
        let mut drop_list = cfg.drop_list;
        drop_list.sort_unstable();
        let mut link = Link::new(LinkSpec {
            name: cfg.name.to_string(),
            rate,
            delay: cfg.mid_delay,
            queue,
            loss: cfg.loss,
            drop_list,
            loss_rng,
            monitored: true,
            path: None,
        });
        // The core starts the window when the warm-up ends.
        link.stats.counting = false;
        Direction {
            name: cfg.name,
            ingress: AccessLines::new(&cfg.near_delays, cfg.flow_class.clone(), slots),
            link,
            mid: VecDeque::with_capacity(slots),
            out: AccessLines::new(&cfg.far_delays, cfg.flow_class, slots),
            lost_flows: Vec::with_capacity(slots),
        }
    }

    /// A packet of `flow` read from the near device at `now` enters its near access line.
    #[inline]
    pub fn arrive(&mut self, now: SimTime, id: PacketId, flow: u16) {
        self.ingress.push(now, id, flow);
    }

    /// The earliest internal event and its time.
    #[inline]
    pub fn next(&self) -> Option<(SimTime, Next)> {
        let l = &self.link;
        let tx = l.next_tx_event();
        let mut best: Option<(SimTime, Next)> = (tx != SimTime::MAX).then_some((tx, Next::Tx));
        for (t, k) in [
            (self.mid.front().map(|&(t, _)| t), Next::MidExit),
            (self.ingress.next(), Next::Ingress),
        ] {
            if let Some(t) = t {
                if best.is_none_or(|b| t < b.0) {
                    best = Some((t, k));
                }
            }
        }
        best
    }

    /// When the next packet may be written to the far device.
    #[inline]
    pub fn next_out(&self) -> Option<SimTime> {
        self.out.next()
    }

    #[inline]
    pub fn pop_out(&mut self, now: SimTime) -> Option<(SimTime, PacketId)> {
        self.out.pop_ready(now)
    }

    /// Passes a packet of `flow` that left the link at `t` on to its far access line.
    #[inline]
    pub fn to_far(&mut self, t: SimTime, id: PacketId, flow: u16) {
        self.out.push(t, id, flow);
    }

    pub fn backlog(&self) -> Backlog {
        self.link.queue.backlog()
    }

    /// Runs the internal event `k` due at `t`. Freed packets go back to `slab`.
    pub fn step(&mut self, t: SimTime, k: Next, slab: &mut Slab) -> Effects {
        let mut fx = Effects::default();
        self.lost_flows.clear();
        let mut cx = Hands { slab, lost_flows: &mut self.lost_flows };
        let link = &mut self.link;
        match k {
            Next::Ingress => {
                let (_, id) = self.ingress.pop_ready(t).expect("due ingress");
                let data = cx.slab.pkt(id);
                let (key, dscp, ack) = crate::packet::queue_fields(data);
                let e = QEntry {
                    id,
                    bytes: data.len() as u32,
                    enqueued_at: t,
                    ecn: crate::packet::ecn(data),
                    key,
                    dscp,
                    ack,
                };
                fx.enqueued = link.enqueue(e, t, &mut cx);
                if fx.enqueued && link.after_enqueue(t) == AfterEnqueue::StartNow {
                    fx.dequeued = start_tx(link, t, &mut cx);
                }
            }
            Next::Tx => match link.tx_event(t) {
                TxEvent::End => {
                    match link.end_tx(t, &mut cx) {
                        Launch::Out(id) => fx.mid_exit = Some(id),
                        Launch::Propagating(at, id) => self.mid.push_back((at, id)),
                        Launch::Lost => {}
                    }
                    fx.dequeued = start_tx(link, t, &mut cx);
                }
                TxEvent::WakeIdle => fx.dequeued = start_tx(link, t, &mut cx),
                TxEvent::Stale => {}
            },
            Next::MidExit => {
                let (at, id) = self.mid.pop_front().expect("a packet propagating");
                debug_assert_eq!(at, t);
                link.arrive();
                fx.mid_exit = Some(id);
            }
        }
        fx
    }

    /// Packets anywhere inside this direction (for conservation checks).
    pub fn inside(&self) -> u64 {
        self.ingress.len() as u64 + self.link.inside() + self.out.len() as u64
    }
}

/// The serializer is free at `t`: take the next packet, if any (the link tells the next timer
/// through `Link::next_tx_event`, which `next` reads).
#[inline]
fn start_tx(link: &mut Link, t: SimTime, cx: &mut Hands) -> bool {
    matches!(link.start_tx(t, cx), bloatlab_sim::net::link::TxStart::Started { .. })
}
