//! A one-direction link, an active part: queue discipline → serializer → random / listed loss
//! → propagation. Its owner (the simulated world, or one direction of the emulator) hands it
//! packets and calls it when its timers are due; the link says what happened and when it next
//! needs to be called. The packets themselves live with the owner (a pool, a slab of real
//! bytes), so the link reaches them through a small [`LinkCx`].
//!
//! The walk of one packet:
//! 1. [`Link::enqueue`]: the discipline takes it, marks it, or drops it (and may push others out).
//!    Then [`Link::after_enqueue`] says whether to start a transmission now, call the link back
//!    at a time it names, or nothing (a call is already due).
//! 2. [`Link::start_tx`] when the serializer is idle: the discipline hands out its next packet
//!    (or, if a shaping discipline holds them back, the time to ask again).
//! 3. [`Link::end_tx`] at the end of serialization: the packet is lost on the wire, handed on at
//!    once (zero delay), or propagates until a time the link names.
//! 4. [`Link::arrive`] when a propagating packet reaches the far end: it leaves the link.
//!
//! **Folding** (an owner's opt-in, [`Link::fold_ends`], for links with a propagation delay):
//! nothing that happens while a packet is serialized changes what its end of transmission does
//! (the loss draw is the link's own stream, in crossing order; the end time is known at the
//! start), so `start_tx` does step 3 at once and returns the packet launched. The serializer
//! stays busy until the end all the same; only if a packet waits (now, or when one arrives
//! before then) does the owner get a time to call back. A lone packet crossing an idle link,
//! the common case on access links at thousands of flows, costs one event instead of two.
//! The measurements do not change: the window and interval counters of a transmission still in
//! progress when a window or interval starts or ends are moved to where its end falls
//! (`start_window`, `close_window`, `take_interval`, `transmitted_by`). What does move is the
//! order of simultaneous events (the arrival is scheduled earlier), and a wire loss reaches the
//! owner (its flow's drop counters) at the start of the transmission instead of its end.
//!
//! The link counts its propagating packets but does not hold them: a constant delay keeps them
//! in the order they left, so the owner keeps them where its own timing wants them (the
//! simulator in the event lane of their lead time, shared by all links; the emulator in a
//! FIFO per direction).

mod stats;

pub use stats::LinkStats;

use crate::engine::SimRng;
use crate::ids::PacketId;
use crate::net::rate_model::RateModel;
use crate::net::schedule::PathSchedule;
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
    /// A folding link serialized a packet and launched it at once (its end of transmission
    /// already done: see the module's notes); the serializer is busy until the end all the
    /// same. `wake`: packets wait, call [`Link::tx_event`] at this time.
    Launched { launch: Launch, wake: Option<SimTime> },
    /// Nothing sent; a shaping discipline releases a packet at this time: call
    /// [`Link::tx_event`] then (reported once per distinct time).
    Wake(SimTime),
    /// Nothing to send.
    Idle,
}

/// What the owner does after [`Link::enqueue`] kept a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterEnqueue {
    /// The serializer is idle: call [`Link::start_tx`] now.
    StartNow,
    /// The serializer is busy with a folded transmission until this time and nothing calls the
    /// link then: call [`Link::tx_event`] at it.
    CallAt(SimTime),
    /// A call is already due (the end of the transmission in progress, or a wake-up).
    Nothing,
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
    /// A schedule-driven link's delay and loss (net/schedule.rs); `delay` and `loss` above
    /// are then replaced by the schedule's first point.
    pub path: Option<PathSchedule>,
}

/// Laid out in declaration order (`repr(C)`): what every packet's walk through a link that is
/// not monitored touches (serializer, discipline, rate, loss, the whole-run counters of `stats`)
/// sits in the first three cache lines ([`HOT_LINES`]), which the event loop prefetches one
/// event ahead; a monitored link's window counters, names, the random stream and the
/// histograms come after. At thousands of links a hop misses on every line it touches.
/// Aligned to a cache line, so that the hot lines counted from the link's start are the
/// machine's lines (a large vector otherwise starts 16 bytes into one, and they would spill
/// into one more).
#[repr(C, align(64))]
pub struct Link {
    pub in_tx: Option<InTx>,
    /// Cut-through: a packet the discipline would have handed out at once
    /// ([`QueueDisc::cut_through`]: an empty drop-tail FIFO) taken while the serializer was
    /// idle, held here (id, bytes) for the `start_tx` that follows at the same instant instead
    /// of in the queue's buffer. The outcome is the discipline's; what it saves is the
    /// buffer's cache line, a miss per hop when thousands of lightly loaded links take turns.
    handoff: Option<(PacketId, u32)>,
    /// Packets propagating (their owner holds them: see the module's notes).
    propagating: u32,
    /// When the transmission in progress (or the last one) ends: the serializer is busy until
    /// then. On a folding link `in_tx` keeps the last transmission (already launched).
    pub tx_end: SimTime,
    /// A pending wake-up (SimTime::MAX: none): a shaping discipline's release, or the end of
    /// a folded transmission that packets wait for.
    pub wake_at: SimTime,
    pub queue: LinkQueue,
    pub rate: RateModel,
    pub delay: Dur,
    pub loss: f64,
    /// The crossing index of the next packet on the loss list (u64::MAX: none).
    next_listed_loss: u64,
    /// Do the end of transmission at its start (see the module's notes).
    fold: bool,
    /// A schedule-driven link (`path` is set): every end of transmission asks it (a flag in
    /// the padding here, so that other links pay a test of a byte they load anyway).
    scheduled: bool,
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
    path: Option<Box<PathSchedule>>,
}

/// The cache lines of a link that a packet's walk touches (see [`Link`]).
const HOT_LINES: usize = (std::mem::offset_of!(Link, stats)
    + std::mem::offset_of!(LinkStats, window_start))
.div_ceil(64);
const _: () = assert!(
    HOT_LINES <= 3,
    "a packet's walk through a link should touch at most three lines: keep what it reads \
     before `stats.window_start` small (or move it after)"
);

impl Link {
    pub fn new(s: LinkSpec) -> Link {
        let delay = s.path.as_ref().map_or(s.delay, |p| p.initial_delay());
        Link {
            name: s.name,
            rate: s.rate,
            delay,
            scheduled: s.path.is_some(),
            path: s.path.map(Box::new),
            loss: s.loss,
            next_listed_loss: s.drop_list.first().copied().unwrap_or(u64::MAX),
            drop_list: s.drop_list,
            drop_next: 0,
            rng: s.loss_rng,
            queue: s.queue,
            in_tx: None,
            handoff: None,
            tx_end: SimTime::ZERO,
            wake_at: SimTime::MAX,
            propagating: 0,
            stats: LinkStats::new(s.monitored),
            fold: false,
            qdrops: Vec::new(),
        }
    }

    /// Starts loading the link's often-used fields into the cache (a hint).
    #[inline]
    pub fn prefetch(&self) {
        crate::engine::prefetch(self, HOT_LINES);
    }

    /// Folds the end of every transmission into its start (see the module's notes). Only for
    /// links with a propagation delay (a zero-delay link hands a packet on at the end).
    pub fn fold_ends(&mut self) {
        assert!(self.delay > Dur::ZERO, "folding link {} has no delay", self.name);
        self.fold = true;
    }

    /// The folded transmission still in progress at `now`, if any.
    #[inline]
    fn folded_in_progress(&self, now: SimTime) -> Option<InTx> {
        self.in_tx.filter(|_| self.fold && self.tx_end > now)
    }

    /// A packet is in the serializer and its end is still to be done ([`Link::end_tx`]).
    #[inline]
    fn unlaunched(&self) -> bool {
        !self.fold && self.in_tx.is_some()
    }

    /// The link is measured (see [`LinkStats::monitored`]).
    pub fn monitored(&self) -> bool {
        self.stats.monitored
    }

    /// Measures the link from now on (see [`LinkStats::monitored`]).
    pub fn monitor(&mut self) {
        self.stats.monitored = true;
        self.stats.counting = true;
    }

    /// The serializer is idle at `now`.
    #[inline]
    pub fn idle(&self, now: SimTime) -> bool {
        if self.fold {
            self.tx_end <= now
        } else {
            self.in_tx.is_none()
        }
    }

    /// After [`Link::enqueue`] kept a packet at `now`: what the owner does next.
    #[inline]
    pub fn after_enqueue(&mut self, now: SimTime) -> AfterEnqueue {
        if self.idle(now) {
            return AfterEnqueue::StartNow;
        }
        // Busy with a folded transmission that nobody waits for yet. (A shaper's wake-up
        // pending at another time is overwritten: it still fires, and finds the link busy or
        // asks again.)
        if self.fold && self.wake_at != self.tx_end {
            self.wake_at = self.tx_end;
            return AfterEnqueue::CallAt(self.tx_end);
        }
        AfterEnqueue::Nothing
    }

    /// When the owner is next due to call [`Link::tx_event`] (SimTime::MAX: not until a packet
    /// comes): the end of the transmission in progress, or a pending wake-up.
    pub fn next_tx_event(&self) -> SimTime {
        if self.unlaunched() {
            self.tx_end.min(self.wake_at)
        } else {
            self.wake_at
        }
    }

    /// Packets inside the link: queued, in the serializer, propagating.
    pub fn inside(&self) -> u64 {
        self.queue.backlog().pkts
            + self.handoff.is_some() as u64
            + self.unlaunched() as u64
            + self.propagating as u64
    }

    /// Step 1: a packet arrives at the queue. Returns whether the discipline kept it. The
    /// caller starts a transmission if the serializer is idle (after any hook of its own).
    #[inline]
    pub fn enqueue(&mut self, e: QEntry, now: SimTime, cx: &mut impl LinkCx) -> bool {
        let id = e.id;
        self.stats.arrival();
        // Unmonitored (no sojourn or backlog to record), idle, and a discipline that would
        // hand the packet out at this very instant (`QueueDisc::cut_through`).
        if self.idle(now)
            && !self.stats.monitored
            && self.handoff.is_none()
            && self.queue.cut_through(&e)
        {
            self.handoff = Some((id, e.bytes));
            return true;
        }
        let verdict = if self.queue.drops_only_arrivals() {
            // No scratch for pushed-out packets (it is kept in a cold line).
            self.queue.enqueue(e, now, &mut Vec::new())
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
        if self.stats.monitored {
            self.stats.backlog_changed(now, self.queue.backlog().bytes);
        }
        true
    }

    /// Step 2: the serializer is idle at `now`; take the discipline's next packet.
    #[inline]
    pub fn start_tx(&mut self, now: SimTime, cx: &mut impl LinkCx) -> TxStart {
        if let Some((id, bytes)) = self.handoff.take() {
            return self.serialize(id, bytes, now, cx);
        }
        let arrivals_only = self.queue.drops_only_arrivals();
        let mut drops = if arrivals_only { Vec::new() } else { std::mem::take(&mut self.qdrops) };
        let next = self.queue.dequeue(now, &mut drops);
        if let Some(Dequeued { entry: e, mark }) = next {
            // An AQM that marks at dequeue (CoDel with ECN) asks for the CE mark here.
            if mark {
                cx.mark_ce(e.id);
            }
            if self.stats.monitored {
                self.stats.sojourn(now.since(e.enqueued_at).0);
                self.stats.backlog_changed(now, self.queue.backlog().bytes);
            }
        }
        if !arrivals_only {
            for (e, r) in drops.drain(..) {
                self.stats.drop(r);
                cx.dropped(e.id, r);
            }
            self.qdrops = drops;
        }
        if let Some(Dequeued { entry: e, .. }) = next {
            return self.serialize(e.id, e.bytes, now, cx);
        }
        // A shaping discipline holding packets back: ask again when it releases one.
        if let Some(t) = self.queue.ready_at() {
            if t > now && self.wake_at != t {
                self.wake_at = t;
                return TxStart::Wake(t);
            }
        }
        TxStart::Idle
    }

    /// Puts packet `id` in the serializer at `now` (a folding link launches it at once).
    #[inline]
    fn serialize(
        &mut self,
        id: PacketId,
        bytes: u32,
        now: SimTime,
        cx: &mut impl LinkCx,
    ) -> TxStart {
        let end = self.rate.serve(now, bytes as u64);
        self.tx_end = end;
        self.in_tx = Some(InTx { id, started: now, bytes });
        if !self.fold {
            return TxStart::Started { end };
        }
        let launch = self.launch(id, now, end, bytes, cx);
        let wake = (self.queue.backlog().pkts > 0).then(|| {
            self.wake_at = end;
            end
        });
        TxStart::Launched { launch, wake }
    }

    /// A timer at the serializer's time (`Started::end` or a `Wake`) fired at `now`: which it is.
    /// A wake-up and an end at the same instant are interchangeable.
    #[inline]
    pub fn tx_event(&mut self, now: SimTime) -> TxEvent {
        if self.unlaunched() && self.tx_end == now {
            return TxEvent::End;
        }
        if self.wake_at == now {
            self.wake_at = SimTime::MAX;
        }
        if self.idle(now) {
            TxEvent::WakeIdle
        } else {
            TxEvent::Stale
        }
    }

    /// Step 3: the transmission in progress ends at `now`. The caller then passes on an `Out`
    /// packet and calls [`Link::start_tx`] for the next one.
    #[inline]
    pub fn end_tx(&mut self, now: SimTime, cx: &mut impl LinkCx) -> Launch {
        debug_assert!(!self.fold, "a folding link's transmissions end at their start");
        let tx = self.in_tx.take().expect("end_tx without a packet in the serializer");
        self.launch(tx.id, tx.started, now, tx.bytes, cx)
    }

    /// The transmission of `id` over [started, end] ends: count it, capture it, lose it on the
    /// wire or send it on its way.
    #[inline]
    fn launch(
        &mut self,
        id: PacketId,
        started: SimTime,
        end: SimTime,
        bytes: u32,
        cx: &mut impl LinkCx,
    ) -> Launch {
        self.stats.transmitted(started, end, bytes as u64);
        let crossing = self.stats.transmitted - 1;
        cx.on_wire(id, end);
        if self.scheduled {
            self.follow_schedule(started, end);
        }
        if self.loses_next(crossing) {
            self.stats.drop(DropReason::RandomLoss);
            cx.dropped(id, DropReason::RandomLoss);
            Launch::Lost
        } else if self.delay.0 == 0 {
            self.stats.delivered += 1;
            Launch::Out(id)
        } else {
            self.propagating += 1;
            Launch::Propagating(end + self.delay, id)
        }
    }

    /// A schedule-driven link's packet ends serialization at `end`: take the delay and loss
    /// the schedule has in force (net/schedule.rs).
    #[cold]
    fn follow_schedule(&mut self, started: SimTime, end: SimTime) {
        let path = self.path.as_mut().expect("a scheduled link has its schedule");
        if let Some(now) = path.at(started, end, self.delay) {
            self.delay = now.delay;
            if let Some(l) = now.loss {
                self.loss = l;
            }
        }
    }

    /// Step 4: the oldest propagating packet reaches the far end and leaves the link.
    #[inline]
    pub fn arrive(&mut self) {
        debug_assert!(self.propagating > 0, "arrival without a packet propagating");
        self.propagating -= 1;
        self.stats.delivered += 1;
    }

    /// A propagating packet leaves this copy of the link for the partition at its far end
    /// (world/parallel.rs): the far end's copy counts it from now on.
    pub fn cross_out(&mut self) {
        self.propagating -= 1;
    }

    /// A propagating packet from the partition that owns the link reaches this (far-end) copy.
    pub fn cross_in(&mut self) {
        self.propagating += 1;
    }

    /// Takes over what the far end's copy of the link counted of the packets that crossed.
    pub fn absorb_arrivals(&mut self, far: &Link) {
        self.propagating += far.propagating;
        self.stats.delivered += far.stats.delivered;
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
        // A folded transmission counted at its start, before the window, ends inside it.
        if let Some(tx) = self.folded_in_progress(now) {
            self.stats.window_tx(tx.bytes as u64, self.tx_end - now, true);
        }
    }

    /// Closes the window's time integrals at `now` (the end of the run).
    pub fn close_window(&mut self, now: SimTime) {
        let b = self.stats.last_backlog;
        self.stats.backlog_changed(now, b);
        if let Some(tx) = self.folded_in_progress(now) {
            // Counted at its start, it ends after the window.
            self.stats.window_tx(tx.bytes as u64, self.tx_end - now, false);
        } else if let Some(tx) = self.in_tx.filter(|_| self.unlaunched()) {
            self.stats.add_busy(tx.started, now);
        }
        self.stats.w_capacity = self.rate.cumulative_capacity(now) - self.stats.w_capacity_start;
    }

    /// The interval counters since the last call, for a time-series sample at `now` (see
    /// [`LinkStats::take_interval`]); a folded transmission that ends after `now` counts in
    /// the next interval.
    pub fn take_interval(&mut self, now: SimTime) -> (f64, u64) {
        let carry = self
            .folded_in_progress(now)
            .filter(|_| self.stats.monitored)
            .map_or(0, |tx| tx.bytes as u64);
        let (sojourn, bytes) = self.stats.take_interval();
        self.stats.i_tx_bytes = carry;
        (sojourn, bytes - carry)
    }

    /// Transmissions ended by `now` (a folded one is counted at its start).
    pub fn transmitted_by(&self, now: SimTime) -> u64 {
        self.stats.transmitted - self.folded_in_progress(now).is_some() as u64
    }

    /// The queue over the window ending at `end` (closed), for the summary builder.
    pub fn measure(&self, end: SimTime) -> crate::metrics::QueueMeasure {
        self.stats.measure(
            end,
            self.queue.name(),
            self.queue.capacity_bytes(),
            self.rate.mean_rate().mbps_f64(),
            self.rate.is_constant(),
        )
    }

    /// The conservation of packets through the link: arrivals = queue drops + queued + in the
    /// serializer + transmitted, and transmitted = wire losses + delivered + propagating.
    pub fn check_conservation(&self) -> Result<(), String> {
        let s = &self.stats;
        let b = self.queue.backlog().pkts + self.handoff.is_some() as u64;
        let in_tx = self.unlaunched() as u64;
        let ok_queue = s.arrivals == s.queue_drops() + b + in_tx + s.transmitted;
        let ok_wire = s.transmitted
            == s.drops[DropReason::RandomLoss as usize] + s.delivered + self.propagating as u64;
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
    use crate::engine::Stream;
    use crate::net::Ecn;
    use crate::queue::DropTail;
    use crate::queue::QueueLimit;
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
            path: None,
            monitored: true,
        })
    }

    fn entry(id: u32, t: SimTime) -> QEntry {
        QEntry {
            id: PacketId(id),
            bytes: 1500,
            enqueued_at: t,
            ecn: Ecn::NotEct,
            key: Default::default(),
            dscp: 0,
            ack: None,
        }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn a_packet_walks_queue_serializer_pipe() {
        let mut l = link(Dur(10 * MS), vec![1]);
        let mut o = Owner::default();
        let t0 = SimTime::ZERO;
        // Three arrive at once: one goes to the serializer, two wait, the fourth overflows.
        for id in 0..4 {
            if l.enqueue(entry(id, t0), t0, &mut o) && l.idle(t0) {
                assert_eq!(l.start_tx(t0, &mut o), TxStart::Started { end: SimTime(MS) });
            }
        }
        assert_eq!(o.dropped, vec![(PacketId(3), DropReason::Overflow)]);
        assert_eq!(l.inside(), 3);
        // End of the first transmission: it propagates, due at the far end 10 ms later.
        assert_eq!(l.tx_event(SimTime(MS)), TxEvent::End);
        assert_eq!(
            l.end_tx(SimTime(MS), &mut o),
            Launch::Propagating(SimTime(11 * MS), PacketId(0))
        );
        assert_eq!(l.start_tx(SimTime(MS), &mut o), TxStart::Started { end: SimTime(2 * MS) });
        // The second crossing is on the drop list.
        assert_eq!(l.tx_event(SimTime(2 * MS)), TxEvent::End);
        assert_eq!(l.end_tx(SimTime(2 * MS), &mut o), Launch::Lost);
        assert_eq!(o.dropped[1], (PacketId(1), DropReason::RandomLoss));
        assert_eq!(l.start_tx(SimTime(2 * MS), &mut o), TxStart::Started { end: SimTime(3 * MS) });
        assert_eq!(
            l.end_tx(SimTime(3 * MS), &mut o),
            Launch::Propagating(SimTime(13 * MS), PacketId(2))
        );
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
            if monitored {
                l.monitor();
            }
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
                    assert_eq!(
                        l.inside(),
                        l.stats.arrivals
                            - l.stats.queue_drops()
                            - l.stats.delivered
                            - l.stats.drops[DropReason::RandomLoss as usize]
                    );
                    l.check_conservation().unwrap();
                    if kept && l.idle(now) {
                        log.push(format!("{:?}", l.start_tx(now, &mut o)));
                    }
                }
            }
            (log, o.dropped, o.on_wire, l.stats.arrivals, l.stats.transmitted)
        };
        let (fifo, cut) = (walk(true), walk(false));
        assert_eq!(fifo, cut);
        assert_eq!(
            cut.1,
            vec![(PacketId(3), DropReason::Overflow), (PacketId(1), DropReason::RandomLoss)]
        );
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

    /// A monitored link driven by a small event loop, folding or not: the same packets launched
    /// at the same times, the same losses, and the same window, interval and run counters, with
    /// the window's start, the samples and the window's end all falling inside transmissions.
    #[test]
    fn folding_moves_no_measurement() {
        #[derive(Debug, Clone, Copy)]
        enum Act {
            Arrive(u32),
            Tx,
            Window,
            Sample,
            Close,
        }
        type Queue = std::collections::BTreeMap<(u64, u64), Act>;
        fn push(q: &mut Queue, seq: &mut u64, t: SimTime, a: Act) {
            q.insert((t.0, *seq), a);
            *seq += 1;
        }
        fn started(s: TxStart, q: &mut Queue, seq: &mut u64, launched: &mut Vec<Launch>) {
            match s {
                TxStart::Started { end } => push(q, seq, end, Act::Tx),
                TxStart::Launched { launch, wake } => {
                    launched.push(launch);
                    if let Some(t) = wake {
                        push(q, seq, t, Act::Tx);
                    }
                }
                TxStart::Wake(t) => push(q, seq, t, Act::Tx),
                TxStart::Idle => {}
            }
        }
        let drive = |fold: bool| {
            let mut l = link(Dur(10 * MS), vec![2]);
            l.stats.counting = false;
            if fold {
                l.fold_ends();
            }
            let mut o = Owner::default();
            let (mut q, mut seq) = (Queue::new(), 0u64);
            for (t, id) in
                [(0, 0), (0, 1), (0, 2), (0, 3), (5 * MS + MS / 2, 4), (20 * MS, 5), (20 * MS, 6)]
            {
                push(&mut q, &mut seq, SimTime(t), Act::Arrive(id));
            }
            push(&mut q, &mut seq, SimTime(MS / 2), Act::Window);
            for t in [MS + MS / 2, 5 * MS + 3 * MS / 4, 21 * MS + MS / 4] {
                push(&mut q, &mut seq, SimTime(t), Act::Sample);
            }
            push(&mut q, &mut seq, SimTime(21 * MS + MS / 2), Act::Close);
            let (mut launched, mut samples) = (Vec::new(), Vec::new());
            while let Some(((t, _), a)) = q.pop_first() {
                let now = SimTime(t);
                match a {
                    Act::Arrive(id) => {
                        if l.enqueue(entry(id, now), now, &mut o) {
                            match l.after_enqueue(now) {
                                AfterEnqueue::StartNow => started(
                                    l.start_tx(now, &mut o),
                                    &mut q,
                                    &mut seq,
                                    &mut launched,
                                ),
                                AfterEnqueue::CallAt(t) => push(&mut q, &mut seq, t, Act::Tx),
                                AfterEnqueue::Nothing => {}
                            }
                        }
                    }
                    Act::Tx => match l.tx_event(now) {
                        TxEvent::End => {
                            launched.push(l.end_tx(now, &mut o));
                            started(l.start_tx(now, &mut o), &mut q, &mut seq, &mut launched);
                        }
                        TxEvent::WakeIdle => {
                            started(l.start_tx(now, &mut o), &mut q, &mut seq, &mut launched)
                        }
                        TxEvent::Stale => {}
                    },
                    Act::Window => l.start_window(now),
                    Act::Sample => samples.push(format!("{:?}", l.take_interval(now))),
                    Act::Close => {
                        l.close_window(now);
                        l.check_conservation().unwrap();
                        let m = l.measure(now);
                        let counts = (
                            m.arrivals,
                            m.tx_packets,
                            m.tx_bytes,
                            format!("{:?}", m.busy),
                            m.sojourn_n,
                            l.transmitted_by(now),
                        );
                        // A folding link launches a packet at its start: compare those whose
                        // transmission ended by now.
                        launched.retain(
                            |x| !matches!(x, Launch::Propagating(t, _) if *t > now + l.delay),
                        );
                        launched.sort_by_key(|x| format!("{x:?}"));
                        let mut dropped = o.dropped.clone();
                        dropped.sort_by_key(|d| d.0);
                        return (launched, dropped, samples, counts);
                    }
                }
            }
            unreachable!("the run closes")
        };
        let (plain, folded) = (drive(false), drive(true));
        assert_eq!(plain, folded);
        // What the walk went through: an overflow, a listed wire loss, and transmissions in
        // progress at the window's start (packet 0), at two samples and at its end (packet 6).
        assert_eq!(
            plain.1,
            vec![(PacketId(2), DropReason::RandomLoss), (PacketId(3), DropReason::Overflow)]
        );
        assert_eq!(plain.0.len(), 5);
        assert_eq!(
            plain.3 .1, 5,
            "packets 0, 1, 2 (lost on the wire), 4 and 5 ended inside the window"
        );
        assert_eq!(plain.2, vec!["(0.5, 1500)", "(1.0, 3000)", "(0.5, 3000)"]);
    }
}
