//! One direction of the emulated path, the simulator's link model on real packets:
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

use crate::delay::DelayLine;
use crate::slab::Slab;
use crate::stats::QueueStats;
use bloatlab_sim::engine::SimRng;
use bloatlab_sim::ids::PacketId;
use bloatlab_sim::net::rate_model::RateModel;
use bloatlab_sim::queue::{Backlog, Dequeued, DropReason, QEntry, QueueDisc, Verdict};
use bloatlab_sim::units::{Dur, SimTime};

/// The internal events of a direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The packet in the serializer finishes.
    TxEnd,
    /// The head of the bottleneck propagation line arrives at the far router.
    MidExit,
    /// The head of the ingress access line reaches the queue.
    Ingress,
    /// A shaping discipline (CAKE's `bandwidth`) releases its next packet.
    Wake,
}

/// What a step did that the gateway may want to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Effects {
    pub enqueued: bool,
    pub dequeued: bool,
    /// A packet left the propagation line at this time; the caller (who may rewrite it, as the
    /// gateway does with ACKs) passes it on with `to_far`.
    pub mid_exit: Option<PacketId>,
}

pub struct Direction {
    pub name: &'static str,
    ingress: DelayLine,
    pub queue: Box<dyn QueueDisc>,
    rate: RateModel,
    in_tx: Option<(PacketId, SimTime, SimTime)>,
    /// When a shaping discipline that held packets back will release one.
    wake: Option<SimTime>,
    mid: DelayLine,
    out: DelayLine,
    loss: f64,
    rng: SimRng,
    drop_list: Vec<u64>,
    drop_next: usize,
    crossings: u64,
    pub random_losses: u64,
    pub stats: QueueStats,
    dropped: Vec<(QEntry, DropReason)>,
    /// Flows of the data segments this step dropped or lost (read by the caller after each step).
    pub lost_flows: Vec<u16>,
}

pub struct DirectionCfg {
    pub name: &'static str,
    pub near_delay: Dur,
    pub mid_delay: Dur,
    pub far_delay: Dur,
    pub loss: f64,
    pub drop_list: Vec<u64>,
}

impl Direction {
    pub fn new(cfg: DirectionCfg, queue: Box<dyn QueueDisc>, rate: RateModel, loss_rng: SimRng, slots: usize) -> Direction {
        let mut drop_list = cfg.drop_list;
        drop_list.sort_unstable();
        Direction {
            name: cfg.name,
            ingress: DelayLine::new(cfg.near_delay, slots),
            queue,
            rate,
            in_tx: None,
            wake: None,
            mid: DelayLine::new(cfg.mid_delay, slots),
            out: DelayLine::new(cfg.far_delay, slots),
            loss: cfg.loss,
            rng: loss_rng,
            drop_list,
            drop_next: 0,
            crossings: 0,
            random_losses: 0,
            stats: QueueStats::new(),
            dropped: Vec::with_capacity(slots),
            lost_flows: Vec::with_capacity(slots),
        }
    }

    pub fn mean_rate_mbps(&self) -> f64 {
        self.rate.mean_rate().mbps_f64()
    }

    /// A packet read from the near device at `now` enters the near access line.
    #[inline]
    pub fn arrive(&mut self, now: SimTime, id: PacketId) {
        self.ingress.push(now, id);
    }

    /// The earliest internal event and its time.
    #[inline]
    pub fn next(&self) -> Option<(SimTime, Next)> {
        let mut best: Option<(SimTime, Next)> = self.in_tx.map(|(_, _, end)| (end, Next::TxEnd));
        for (t, k) in [(self.mid.next(), Next::MidExit), (self.ingress.next(), Next::Ingress), (self.wake, Next::Wake)] {
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

    /// Passes a packet that left the propagation line at `t` on to the far access line.
    #[inline]
    pub fn to_far(&mut self, t: SimTime, id: PacketId) {
        self.out.push(t, id);
    }

    pub fn backlog(&self) -> Backlog {
        self.queue.backlog()
    }

    /// Runs the internal event `k` due at `t`. Freed packets go back to `slab`.
    pub fn step(&mut self, t: SimTime, k: Next, slab: &mut Slab) -> Effects {
        let mut fx = Effects::default();
        self.lost_flows.clear();
        match k {
            Next::Ingress => {
                let (_, id) = self.ingress.pop_ready(t).expect("due ingress");
                let data = slab.pkt(id);
                let (key, dscp, ack) = crate::packet::queue_fields(data);
                let e = QEntry { id, bytes: data.len() as u32, enqueued_at: t, ecn: crate::packet::ecn(data), key, dscp, ack };
                self.stats.arrival();
                let mut pushed_out = std::mem::take(&mut self.dropped);
                let verdict = self.queue.enqueue(e, t, &mut pushed_out);
                for (d, r) in pushed_out.drain(..) {
                    self.drop(d.id, r, slab);
                }
                self.dropped = pushed_out;
                match verdict {
                    Verdict::Dropped(r) => self.drop(id, r, slab),
                    Verdict::Marked => {
                        crate::packet::mark_ce(slab.pkt_mut(id));
                        fx.enqueued = true;
                    }
                    Verdict::Queued => fx.enqueued = true,
                }
                self.stats.backlog_changed(t, self.queue.backlog().bytes);
                if self.in_tx.is_none() {
                    fx.dequeued = self.start_tx(t, slab);
                }
            }
            Next::TxEnd => {
                let (id, _, end) = self.in_tx.take().expect("packet in serializer");
                debug_assert_eq!(end, t);
                let idx = self.crossings;
                self.crossings += 1;
                let listed = self.drop_list.get(self.drop_next) == Some(&idx);
                if listed {
                    self.drop_next += 1;
                }
                if listed || self.rng.chance(self.loss) {
                    self.random_losses += 1;
                    self.note_loss(id, slab);
                    slab.free(id);
                } else {
                    self.mid.push(t, id);
                }
                fx.dequeued = self.start_tx(t, slab);
            }
            Next::MidExit => {
                let (_, id) = self.mid.pop_ready(t).expect("due mid");
                fx.mid_exit = Some(id);
            }
            Next::Wake => {
                self.wake = None;
                if self.in_tx.is_none() {
                    fx.dequeued = self.start_tx(t, slab);
                }
            }
        }
        fx
    }

    /// The serializer is free at `t`: take the next packet, if any.
    fn start_tx(&mut self, t: SimTime, slab: &mut Slab) -> bool {
        let mut dropped = std::mem::take(&mut self.dropped);
        let next = self.queue.dequeue(t, &mut dropped);
        for (e, r) in dropped.drain(..) {
            self.drop(e.id, r, slab);
        }
        self.dropped = dropped;
        let Some(Dequeued { entry: e, mark }) = next else {
            self.wake = self.queue.ready_at().filter(|&w| w > t);
            self.stats.backlog_changed(t, self.queue.backlog().bytes);
            return false;
        };
        if mark {
            crate::packet::mark_ce(slab.pkt_mut(e.id));
        }
        let end = self.rate.serve(t, e.bytes as u64);
        self.in_tx = Some((e.id, t, end));
        self.stats.transmit(t.since(e.enqueued_at).0, e.bytes as u64, t, end);
        self.stats.backlog_changed(t, self.queue.backlog().bytes);
        true
    }

    fn drop(&mut self, id: PacketId, r: DropReason, slab: &mut Slab) {
        self.stats.drop(r);
        self.note_loss(id, slab);
        slab.free(id);
    }

    fn note_loss(&mut self, id: PacketId, slab: &Slab) {
        let m = slab.meta(id);
        if m.data {
            self.lost_flows.push(m.flow);
        }
    }

    /// Packets anywhere inside this direction (for conservation checks).
    pub fn inside(&self) -> u64 {
        self.ingress.len() as u64 + self.queue.backlog().pkts + self.in_tx.is_some() as u64 + self.mid.len() as u64 + self.out.len() as u64
    }
}
