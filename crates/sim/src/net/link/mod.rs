//! A one-direction link, an active part: queue discipline → serializer → random / listed loss
//! → propagation. Its owner (the simulated world, or one direction of the emulator) hands it
//! packets and calls it when its timers are due; the link says what happened and when it next
//! needs to be called. The packets themselves live with the owner (a pool, a slab of real
//! bytes), so the link reaches them through a small [`LinkCx`].
//!
//! The walk of one packet:
//! 1. [`Link::enqueue`]: the discipline takes it, marks it, or drops it (and may push others out).
//! 2. [`Link::start_tx`] when the serializer is idle: the discipline hands out its next packet
//!    (or, if a shaping discipline holds them back, the time to ask again).
//! 3. [`Link::end_tx`] at the end of serialization: the packet is lost on the wire, handed on at
//!    once (zero delay), or propagates until a time the link names.
//! 4. [`Link::arrive`] when a propagating packet reaches the far end: it leaves the link.
//!
//! The link counts its propagating packets but does not hold them: a constant delay keeps them
//! in the order they left, so the owner keeps them where its own timing wants them (the
//! simulator in one event lane per delay, shared by all links of that delay; the emulator in a
//! FIFO per direction).

mod stats;

pub use stats::LinkStats;

use crate::engine::SimRng;
use crate::ids::PacketId;
use crate::net::rate_model::RateModel;
use crate::queue::{Dequeued, DropReason, LinkQueue, QEntry, QueueDisc, Verdict};
use crate::units::{Dur, SimTime};

/// What the link needs from its owner: packets live outside it.
pub trait LinkCx {
    /// The discipline asks for a CE mark on packet `id`.
    fn mark_ce(&mut self, id: PacketId);
    /// Packet `id` is gone (a queue drop or a wire loss, already counted in the link's
    /// statistics): the owner accounts for it and frees it.
    fn dropped(&mut self, id: PacketId, reason: DropReason);
    /// Packet `id` finished serialization at `now` and is about to go on the wire (pcap
    /// capture hooks in here).
    fn on_wire(&mut self, _id: PacketId, _now: SimTime) {}
}

/// The outcome of [`Link::start_tx`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxStart {
    /// A packet is in the serializer until `end`: call [`Link::tx_event`] then.
    Started { end: SimTime },
    /// Nothing sent; a shaping discipline releases a packet at this time: call
    /// [`Link::tx_event`] then (reported once per distinct time).
    Wake(SimTime),
    /// Nothing to send.
    Idle,
}

/// What a timer at the serializer's time turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxEvent {
    /// The transmission in progress ends: call [`Link::end_tx`].
    End,
    /// A shaper wake-up while the serializer is idle: call [`Link::start_tx`].
    WakeIdle,
    /// A wake-up with nothing to do (the serializer is busy, or the time moved).
    Stale,
}

/// The outcome of [`Link::end_tx`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// Lost on the wire (already passed to [`LinkCx::dropped`]).
    Lost,
    /// A zero-delay link: the packet leaves the link now.
    Out(PacketId),
    /// The packet propagates: it arrives at the far end at `t` (call [`Link::arrive`] then).
    Propagating(SimTime, PacketId),
}

/// The packet in the serializer.
#[derive(Debug, Clone, Copy)]
pub struct InTx {
    pub id: PacketId,
    pub started: SimTime,
    pub bytes: u32,
}

/// How to build a link (the rate model, discipline and loss stream are built by the caller).
pub struct LinkSpec {
    pub name: String,
    pub rate: RateModel,
    pub delay: Dur,
    pub queue: LinkQueue,
    /// Random loss probability per packet crossing.
    pub loss: f64,
    /// Indices (0-based, sorted) of the crossings to lose.
    pub drop_list: Vec<u64>,
    pub loss_rng: SimRng,
    /// Record per-packet sojourn and the backlog integral.
    pub monitored: bool,
}

/// Laid out in declaration order (`repr(C)`): what every packet's walk touches (serializer,
/// discipline, rate, loss, the per-packet counters of `stats`) sits in the first four
/// cache lines ([`HOT_LINES`]), which the event loop prefetches one event ahead; names, the random stream and
/// the histograms come after. At thousands of links this halves the lines a hop misses.
#[repr(C)]
pub struct Link {
    pub in_tx: Option<InTx>,
    /// Cut-through: a packet an empty drop-tail FIFO took while the serializer was idle,
    /// held here (id, bytes) for the `start_tx` that follows at the same instant instead of
    /// in the FIFO's buffer. The outcome is the FIFO's; what it saves is the buffer's cache
    /// line, a miss per hop when thousands of lightly loaded links take turns.
    handoff: Option<(PacketId, u32)>,
    /// When the transmission in progress ends.
    pub tx_end: SimTime,
    /// The pending wake-up of a shaping discipline (SimTime::MAX: none).
    pub shaper_wake: SimTime,
    /// Packets propagating (their owner holds them: see the module's notes).
    propagating: u64,
    pub queue: LinkQueue,
    pub rate: RateModel,
    pub delay: Dur,
    pub loss: f64,
    /// The crossing index of the next packet on the loss list (u64::MAX: none).
    next_listed_loss: u64,
    /// Record per-packet sojourn and the backlog integral (bottleneck links).
    pub monitored: bool,
    pub stats: LinkStats,
    /// Sorted indices of packets to lose (deterministic loss list) and the next one's position
    /// (private: `next_listed_loss` caches the entry at `drop_next`).
    drop_next: usize,
    drop_list: Vec<u64>,
    /// Scratch for the packets a discipline drops inside one call (kept to avoid allocating;
    /// drop-tail never needs it).
    qdrops: Vec<(QEntry, DropReason)>,
    pub rng: SimRng,
    pub name: String,
}

/// The cache lines of a link that a packet's walk touches (see [`Link`]).
const HOT_LINES: usize = (std::mem::offset_of!(Link, stats) + std::mem::offset_of!(LinkStats, w_capacity_start)).div_ceil(64);
const _: () = assert!(HOT_LINES <= 4);

impl Link {
    pub fn new(s: LinkSpec) -> Link {
        Link {
            name: s.name,
            rate: s.rate,
            delay: s.delay,
            loss: s.loss,
            next_listed_loss: s.drop_list.first().copied().unwrap_or(u64::MAX),
            drop_list: s.drop_list,
            drop_next: 0,
            rng: s.loss_rng,
            queue: s.queue,
            in_tx: None,
            handoff: None,
            tx_end: SimTime::MAX,
            shaper_wake: SimTime::MAX,
            propagating: 0,
            stats: LinkStats::new(),
            monitored: s.monitored,
            qdrops: Vec::new(),
        }
    }

    /// Starts loading the link's often-used fields into the cache (a hint).
    #[inline]
    pub fn prefetch(&self) {
        crate::engine::prefetch(self, HOT_LINES);
    }

    /// The serializer is idle.
    #[inline]
    pub fn idle(&self) -> bool {
        self.in_tx.is_none()
    }

    /// Packets inside the link: queued, in the serializer, propagating.
    pub fn inside(&self) -> u64 {
        self.queue.backlog().pkts + self.handoff.is_some() as u64 + self.in_tx.is_some() as u64 + self.propagating
    }

    /// Step 1: a packet arrives at the queue. Returns whether the discipline kept it. The
    /// caller starts a transmission if the serializer is idle (after any hook of its own).
    #[inline]
    pub fn enqueue(&mut self, e: QEntry, now: SimTime, cx: &mut impl LinkCx) -> bool {
        let id = e.id;
        self.stats.arrival();
        // Unmonitored (no sojourn or backlog to record), idle, and a drop-tail FIFO that is
        // empty and admits the packet: it would leave the FIFO at this very instant.
        if self.in_tx.is_none() && !self.monitored && self.handoff.is_none() {
            if let LinkQueue::DropTail(q) = &self.queue {
                if q.admits_into_empty(&e) {
                    self.handoff = Some((id, e.bytes));
                    return true;
                }
            }
        }
        let verdict = if let LinkQueue::DropTail(q) = &mut self.queue {
            // Drop-tail only ever drops the arriving packet: no scratch (kept in a cold line).
            q.enqueue(e, now, &mut Vec::new())
        } else {
            let mut pushed_out = std::mem::take(&mut self.qdrops);
            let verdict = self.queue.enqueue(e, now, &mut pushed_out);
            // Packets the discipline pushed out of its queue to make room (or filtered).
            for (d, r) in pushed_out.drain(..) {
                self.stats.drop(r);
                cx.dropped(d.id, r);
            }
            self.qdrops = pushed_out;
            verdict
        };
        match verdict {
            Verdict::Dropped(r) => {
                self.stats.drop(r);
                cx.dropped(id, r);
                return false;
            }
            Verdict::Marked => cx.mark_ce(id),
            Verdict::Queued => {}
        }
        if self.monitored {
            self.stats.backlog_changed(now, self.queue.backlog().bytes);
        }
        true
    }

    /// Step 2: the serializer is idle at `now`; take the discipline's next packet.
    #[inline]
    pub fn start_tx(&mut self, now: SimTime, cx: &mut impl LinkCx) -> TxStart {
        if let Some((id, bytes)) = self.handoff.take() {
            self.in_tx = Some(InTx { id, started: now, bytes });
            let end = self.rate.serve(now, bytes as u64);
            self.tx_end = end;
            return TxStart::Started { end };
        }
        let drop_tail = matches!(self.queue, LinkQueue::DropTail(_));
        let mut drops = if drop_tail { Vec::new() } else { std::mem::take(&mut self.qdrops) };
        let next = self.queue.dequeue(now, &mut drops);
        let mut out = TxStart::Idle;
        if let Some(Dequeued { entry: e, mark }) = next {
            // An AQM that marks at dequeue (CoDel with ECN) asks for the CE mark here.
            if mark {
                cx.mark_ce(e.id);
            }
            self.in_tx = Some(InTx { id: e.id, started: now, bytes: e.bytes });
            if self.monitored {
                self.stats.sojourn(now.since(e.enqueued_at).0);
                self.stats.backlog_changed(now, self.queue.backlog().bytes);
            }
            let end = self.rate.serve(now, e.bytes as u64);
            self.tx_end = end;
            out = TxStart::Started { end };
        }
        if !drop_tail {
            for (e, r) in drops.drain(..) {
                self.stats.drop(r);
                cx.dropped(e.id, r);
            }
            self.qdrops = drops;
        }
        if next.is_none() {
            // A shaping discipline holding packets back: ask again when it releases one.
            if let Some(t) = self.queue.ready_at() {
                if t > now && self.shaper_wake != t {
                    self.shaper_wake = t;
                    out = TxStart::Wake(t);
                }
            }
        }
        out
    }

    /// A timer at the serializer's time (`Started::end` or a `Wake`) fired at `now`: which it is.
    /// A wake-up and an end at the same instant are interchangeable.
    #[inline]
    pub fn tx_event(&mut self, now: SimTime) -> TxEvent {
        if self.in_tx.is_some() && self.tx_end == now {
            return TxEvent::End;
        }
        if self.shaper_wake == now {
            self.shaper_wake = SimTime::MAX;
        }
        if self.in_tx.is_none() {
            TxEvent::WakeIdle
        } else {
            TxEvent::Stale
        }
    }

    /// Step 3: the transmission in progress ends at `now`. The caller then passes on an `Out`
    /// packet and calls [`Link::start_tx`] for the next one.
    #[inline]
    pub fn end_tx(&mut self, now: SimTime, cx: &mut impl LinkCx) -> Launch {
        let tx = self.in_tx.take().expect("end_tx without a packet in the serializer");
        self.stats.transmitted(tx.started, now, tx.bytes as u64);
        let crossing = self.stats.transmitted - 1;
        cx.on_wire(tx.id, now);
        if self.loses_next(crossing) {
            self.stats.drop(DropReason::RandomLoss);
            cx.dropped(tx.id, DropReason::RandomLoss);
            Launch::Lost
        } else if self.delay.0 == 0 {
            self.stats.delivered += 1;
            Launch::Out(tx.id)
        } else {
            self.propagating += 1;
            Launch::Propagating(now + self.delay, tx.id)
        }
    }

    /// Step 4: the oldest propagating packet reaches the far end and leaves the link.
    #[inline]
    pub fn arrive(&mut self) {
        debug_assert!(self.propagating > 0, "arrival without a packet propagating");
        self.propagating -= 1;
        self.stats.delivered += 1;
    }

    /// Decides whether the packet that just finished serialization is lost on the wire:
    /// by the deterministic list first (the n-th packet to cross), then at random.
    #[inline]
    pub fn loses_next(&mut self, crossing_index: u64) -> bool {
        if self.next_listed_loss == crossing_index {
            self.drop_next += 1;
            self.next_listed_loss = self.drop_list.get(self.drop_next).copied().unwrap_or(u64::MAX);
            return true;
        }
        self.loss > 0.0 && self.rng.chance(self.loss)
    }

    /// Starts the measurement window at `now` (the end of the warm-up).
    pub fn start_window(&mut self, now: SimTime) {
        let b = self.queue.backlog().bytes;
        self.stats.start_window(now);
        self.stats.last_backlog = b;
        self.stats.w_capacity_start = self.rate.cumulative_capacity(now);
    }

    /// Closes the window's time integrals at `now` (the end of the run).
    pub fn close_window(&mut self, now: SimTime) {
        let b = self.stats.last_backlog;
        self.stats.backlog_changed(now, b);
        if let Some(tx) = self.in_tx {
            self.stats.add_busy(tx.started, now);
        }
        self.stats.w_capacity = self.rate.cumulative_capacity(now) - self.stats.w_capacity_start;
    }

    /// The queue over the window ending at `end` (closed), for the summary builder.
    pub fn measure(&self, end: SimTime) -> crate::metrics::QueueMeasure {
        self.stats.measure(end, self.queue.name(), self.queue.capacity_bytes(), self.rate.mean_rate().mbps_f64(), self.rate.is_constant())
    }

    /// The conservation of packets through the link: arrivals = queue drops + queued + in the
    /// serializer + transmitted, and transmitted = wire losses + delivered + propagating.
    pub fn check_conservation(&self) -> Result<(), String> {
        let s = &self.stats;
        let b = self.queue.backlog().pkts + self.handoff.is_some() as u64;
        let in_tx = self.in_tx.is_some() as u64;
        let ok_queue = s.arrivals == s.queue_drops() + b + in_tx + s.transmitted;
        let ok_wire = s.transmitted == s.drops[DropReason::RandomLoss as usize] + s.delivered + self.propagating;
        if ok_queue && ok_wire {
            return Ok(());
        }
        Err(format!(
            "conservation violated on link {}: arrivals {} drops {:?} backlog {} in_tx {} transmitted {} delivered {} propagating {}",
            self.name,
            s.arrivals,
            s.drops,
            b,
            in_tx,
            s.transmitted,
            s.delivered,
            self.propagating
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::QueueLimit;
    use crate::engine::Stream;
    use crate::net::Ecn;
    use crate::queue::DropTail;
    use crate::units::Rate;

    /// Records what the link asked of its owner.
    #[derive(Default)]
    struct Owner {
        marked: Vec<PacketId>,
        dropped: Vec<(PacketId, DropReason)>,
        on_wire: Vec<(PacketId, SimTime)>,
    }

    impl LinkCx for Owner {
        fn mark_ce(&mut self, id: PacketId) {
            self.marked.push(id);
        }
        fn dropped(&mut self, id: PacketId, reason: DropReason) {
            self.dropped.push((id, reason));
        }
        fn on_wire(&mut self, id: PacketId, now: SimTime) {
            self.on_wire.push((id, now));
        }
    }

    /// 12 Mbit/s (1500 B take 1 ms), 10 ms, a 2-packet drop-tail queue, crossing 1 listed lost.
    fn link(delay: Dur, drop_list: Vec<u64>) -> Link {
        Link::new(LinkSpec {
            name: "l".into(),
            rate: RateModel::Constant(Rate(12_000_000)),
            delay,
            queue: DropTail::new(QueueLimit::Packets(2)).into(),
            loss: 0.0,
            drop_list,
            loss_rng: SimRng::new(1, Stream::LinkLoss, 0),
            monitored: true,
        })
    }

    fn entry(id: u32, t: SimTime) -> QEntry {
        QEntry { id: PacketId(id), bytes: 1500, enqueued_at: t, ecn: Ecn::NotEct, key: Default::default(), dscp: 0, ack: None }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn a_packet_walks_queue_serializer_pipe() {
        let mut l = link(Dur(10 * MS), vec![1]);
        let mut o = Owner::default();
        let t0 = SimTime::ZERO;
        // Three arrive at once: one goes to the serializer, two wait, the fourth overflows.
        for id in 0..4 {
            if l.enqueue(entry(id, t0), t0, &mut o) && l.idle() {
                assert_eq!(l.start_tx(t0, &mut o), TxStart::Started { end: SimTime(MS) });
            }
        }
        assert_eq!(o.dropped, vec![(PacketId(3), DropReason::Overflow)]);
        assert_eq!(l.inside(), 3);
        // End of the first transmission: it propagates, due at the far end 10 ms later.
        assert_eq!(l.tx_event(SimTime(MS)), TxEvent::End);
        assert_eq!(l.end_tx(SimTime(MS), &mut o), Launch::Propagating(SimTime(11 * MS), PacketId(0)));
        assert_eq!(l.start_tx(SimTime(MS), &mut o), TxStart::Started { end: SimTime(2 * MS) });
        // The second crossing is on the drop list.
        assert_eq!(l.tx_event(SimTime(2 * MS)), TxEvent::End);
        assert_eq!(l.end_tx(SimTime(2 * MS), &mut o), Launch::Lost);
        assert_eq!(o.dropped[1], (PacketId(1), DropReason::RandomLoss));
        assert_eq!(l.start_tx(SimTime(2 * MS), &mut o), TxStart::Started { end: SimTime(3 * MS) });
        assert_eq!(l.end_tx(SimTime(3 * MS), &mut o), Launch::Propagating(SimTime(13 * MS), PacketId(2)));
        assert_eq!(l.start_tx(SimTime(3 * MS), &mut o), TxStart::Idle);
        assert_eq!(o.on_wire.len(), 3);
        assert_eq!(l.inside(), 2);
        l.arrive();
        l.arrive();
        l.check_conservation().unwrap();
        assert_eq!(l.inside(), 0);
        assert_eq!((l.stats.arrivals, l.stats.transmitted, l.stats.delivered), (4, 3, 2));
        assert!(o.marked.is_empty());
    }

    /// An unmonitored drop-tail link hands a packet that finds it idle and empty straight to
    /// the serializer (cut-through): the same walk, drops and counters as through the FIFO.
    #[test]
    fn cut_through_walks_as_the_fifo_does() {
        let walk = |monitored: bool| {
            let mut l = link(Dur(10 * MS), vec![1]);
            l.monitored = monitored;
            let mut o = Owner::default();
            let mut log = Vec::new();
            for (t, ids) in [(0, 0..4), (5 * MS, 4..5), (20 * MS, 5..6)] {
                let now = SimTime(t);
                while let Some(end) = (l.tx_end <= now && l.in_tx.is_some()).then_some(l.tx_end) {
                    log.push(format!("{:?}", l.end_tx(end, &mut o)));
                    log.push(format!("{:?}", l.start_tx(end, &mut o)));
                }
                for id in ids {
                    let kept = l.enqueue(entry(id, now), now, &mut o);
                    assert_eq!(l.inside(), l.stats.arrivals - l.stats.queue_drops() - l.stats.delivered - l.stats.drops[DropReason::RandomLoss as usize]);
                    l.check_conservation().unwrap();
                    if kept && l.idle() {
                        log.push(format!("{:?}", l.start_tx(now, &mut o)));
                    }
                }
            }
            (log, o.dropped, o.on_wire, l.stats.arrivals, l.stats.transmitted)
        };
        let (fifo, cut) = (walk(true), walk(false));
        assert_eq!(fifo, cut);
        assert_eq!(cut.1, vec![(PacketId(3), DropReason::Overflow), (PacketId(1), DropReason::RandomLoss)]);
    }

    #[test]
    fn zero_delay_hands_on_at_the_end_of_serialization() {
        let mut l = link(Dur::ZERO, vec![]);
        let mut o = Owner::default();
        assert!(l.enqueue(entry(7, SimTime::ZERO), SimTime::ZERO, &mut o));
        assert_eq!(l.start_tx(SimTime::ZERO, &mut o), TxStart::Started { end: SimTime(MS) });
        // A timer at another time is not the end of the transmission.
        assert_eq!(l.tx_event(SimTime(MS / 2)), TxEvent::Stale);
        assert_eq!(l.end_tx(SimTime(MS), &mut o), Launch::Out(PacketId(7)));
        assert_eq!(l.tx_event(SimTime(2 * MS)), TxEvent::WakeIdle);
        l.check_conservation().unwrap();
    }

    #[test]
    fn the_summary_constructor_reads_the_window() {
        let mut l = link(Dur(MS), vec![]);
        let mut o = Owner::default();
        l.stats.counting = false;
        assert!(l.enqueue(entry(0, SimTime::ZERO), SimTime::ZERO, &mut o));
        let _ = l.start_tx(SimTime::ZERO, &mut o);
        // The window starts half-way through the first transmission.
        l.start_window(SimTime(MS / 2));
        let _ = l.end_tx(SimTime(MS), &mut o);
        l.close_window(SimTime(2 * MS));
        let m = l.measure(SimTime(2 * MS));
        assert_eq!((m.arrivals, m.tx_packets, m.tx_bytes), (0, 1, 1500));
        assert!((m.window_s - 0.0015).abs() < 1e-12);
        match m.busy {
            crate::metrics::Busy::Time { busy_s } => assert!((busy_s - 0.0005).abs() < 1e-12),
            other => panic!("{other:?}"),
        }
        assert_eq!(m.aqm, l.queue.name());
    }
}
