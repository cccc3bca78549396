//! Event queue: a 4-ary min-heap on (time, actor, sequence number), so a run is a pure
//! function of (scenario, seed).
//!
//! A run that names no actors ([`Actors`]) keys every event by one counter: events at the
//! same instant fire in the order they were scheduled. Runs that may be split over threads
//! (world/parallel.rs) name them: an event is keyed by the actor it is for (the link whose
//! transmission ends, the link whose packet arrives, the socket whose timer fires, ...) and
//! that actor's own count. Only the partition that owns an actor schedules its events, so the
//! order of simultaneous events is the same whichever partitions run them.

use super::event::{Actors, Event, Slot};
use super::heap::{self, ARITY};
use super::lane::Lane;
use super::timers::TimerHeap;
use crate::units::SimTime;

/// `lane_min_at` naming the timer heap (engine/timers.rs), which is merged as a lane is.
const TIMERS: usize = usize::MAX - 1;

/// Bits of a key below the actor: an actor's own sequence numbers (64 G events each).
const SEQ_BITS: u32 = 36;
/// Actors a run may name (the bits of a key's low half above the sequence).
pub const MAX_ACTORS: u64 = 1 << (64 - SEQ_BITS);

/// A 4-ary min-heap of [`Slot`]s. Keys are unique, so any correct heap pops them in one order:
/// runs are those of the `BinaryHeap` this replaced, event for event.
///
/// A pop leaves a hole at the root instead of sifting the last slot down at once: the event
/// being handled almost always schedules another, which then fills the hole and sinks only as
/// deep as its time ranks — usually a few levels, as it is due soon — where the last slot
/// (most often a far-off timer) would have sunk to the bottom, through the heap's cold levels.
/// Only when no schedule comes before the next pop is the hole filled the usual way.
///
/// Beside the heap, **lanes**: FIFOs of events due a fixed lead time after they are scheduled
/// (every packet leaving a link with propagation delay D arrives at now + D; one launched at
/// the start of a folded transmission at now + serialization + D). Events of one lead are
/// scheduled in time order, so a lane holds those of one lead, whatever link they come from.
/// A lane's events carry the same keys as the heap's, so the merged order is the same total
/// order whichever lane or the heap an event went to; a lane event costs a push and a pop, not
/// a sift. Endpoint timers have a heap of their own (timers.rs), merged as a lane is; a
/// partition of a parallel run adds lanes for the arrivals handed to it.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Slot>,
    /// `heap[0]` is a hole (already popped); the live slots are `heap[1..]`.
    hole: bool,
    /// The next sequence number of a run without actors.
    next_seq: u64,
    /// Lanes at the end of `lanes` kept for arrivals from other partitions.
    inbox_lanes: usize,
    /// The run's actors, if it names them, and each one's next sequence number.
    actors: Option<Actors>,
    seqs: Vec<u64>,
    popped: u64,
    lanes: Vec<Lane>,
    /// The lead time of each lane's events (`u64::MAX`: none yet). An empty lane takes the
    /// lead of the next event no lane has, so the lanes follow the leads in use.
    lane_lead: Vec<u64>,
    /// Each lane's smallest key (its next to pop; `u128::MAX`: empty), side by side: a pop
    /// compares them all.
    heads: Vec<u128>,
    /// The smallest key at the head of a lane or of the timers (`u128::MAX`: all empty), and
    /// its lane (`TIMERS`: the timer heap).
    lane_min: u128,
    lane_min_at: usize,
    /// The lane of the last pop (`usize::MAX`: the heap or the timers).
    last_lane: usize,
    /// Endpoint timers, apart from the near events (engine/timers.rs); their head takes part
    /// in `lane_min` as a lane's does (`lane_min_at == TIMERS`).
    timers: TimerHeap,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::with_capacity(1024),
            lane_min: u128::MAX,
            last_lane: usize::MAX,
            ..Default::default()
        }
    }

    /// A queue with `n` lanes (a pop compares every lane's head, so they are few).
    pub fn with_lanes(n: usize) -> Self {
        let mut q = Self::new();
        q.lanes = (0..n).map(|_| Lane::new()).collect();
        q.heads = vec![u128::MAX; n];
        q.lane_lead = vec![u64::MAX; n];
        q
    }

    /// Keys events by actor from now on (call before anything is scheduled).
    pub fn name_actors(&mut self, actors: Actors) {
        let n = actors.count();
        assert!(self.next_seq == 0 && n <= MAX_ACTORS, "actors named once, at most {MAX_ACTORS}");
        self.actors = Some(actors);
        self.seqs = vec![0; n as usize];
    }

    /// The key of `ev` at `at`, taking a sequence number.
    #[inline(always)]
    fn key(&mut self, at: SimTime, ev: &Event) -> u128 {
        let low = match &self.actors {
            None => {
                self.next_seq += 1;
                self.next_seq - 1
            }
            Some(a) => {
                let o = a.of(ev);
                let s = &mut self.seqs[o as usize];
                // An actor's count stays below 2^36 (a run 10^4 times the longest we know of).
                assert!(*s < 1 << SEQ_BITS, "actor {o} was scheduled 2^36 events");
                *s += 1;
                ((o as u64) << SEQ_BITS) | (*s - 1)
            }
        };
        ((at.0 as u128) << 64) | low as u128
    }

    /// The key of `ev` at `at` (taking its actor's next sequence number), for an event another
    /// queue will hold ([`EventQueue::schedule_key`]).
    #[inline]
    pub fn next_key(&mut self, at: SimTime, ev: &Event) -> u128 {
        self.key(at, ev)
    }

    /// Schedules `ev` with a key another queue made ([`EventQueue::next_key`]).
    pub fn schedule_key(&mut self, key: u128, ev: Event) {
        self.insert(Slot { key, ev });
    }

    /// Keeps only the pending events `keep` accepts, with their keys (a partition keeps the
    /// events of what it owns).
    pub fn retain(&mut self, mut keep: impl FnMut(&Event) -> bool) {
        let mut all = Vec::with_capacity(self.len());
        while let Some(s) = self.pop_slot() {
            all.push(s);
        }
        for s in all.into_iter().filter(|s| keep(&s.ev)) {
            self.insert(s);
        }
    }

    /// Takes the next slot without counting it as fired.
    fn pop_slot(&mut self) -> Option<Slot> {
        let heap_key = self.heap_first().map_or(u128::MAX, |s| s.key);
        if heap_key == u128::MAX && self.lane_min == u128::MAX {
            return None;
        }
        if self.lane_min < heap_key {
            return Some(self.pop_lane());
        }
        self.fill_hole();
        let top = *self.heap.first()?;
        if self.heap.len() == 1 {
            self.heap.clear();
        } else {
            self.hole = true;
        }
        Some(top)
    }

    /// Schedules `ev` at `at`, scheduled at `now`, in the lane of its lead time `at − now` if
    /// one has it or is free to take it; else in the heap. For events whose lead recurs (a
    /// link's propagation delay): `now` never decreasing from one call to the next keeps each
    /// lane in time order (an event that would not be is put in the heap instead).
    #[inline]
    pub fn schedule_ahead(&mut self, now: SimTime, at: SimTime, ev: Event) {
        debug_assert!(at >= now, "an event scheduled in the past");
        let Some(lane) = self.lane_for(at.0 - now.0, 0..self.local_lanes()) else {
            return self.schedule(at, ev);
        };
        let key = self.key(at, &ev);
        self.push_lane(lane, Slot { key, ev });
    }

    /// Lanes `0..local_lanes()` take this queue's own events; those after, a partition's
    /// arrivals from other partitions ([`EventQueue::schedule_key_ahead`]).
    #[inline(always)]
    fn local_lanes(&self) -> usize {
        self.lanes.len() - self.inbox_lanes
    }

    /// The lane among `range` whose lead is `lead`, or an empty one of them (which takes it).
    #[inline(always)]
    fn lane_for(&mut self, lead: u64, range: std::ops::Range<usize>) -> Option<usize> {
        let leads = &self.lane_lead[range.clone()];
        if let Some(i) = leads.iter().position(|&d| d == lead) {
            return Some(range.start + i);
        }
        let i = range.start + self.lanes[range].iter().position(|q| q.len() == 0)?;
        self.lane_lead[i] = lead;
        Some(i)
    }

    #[inline(always)]
    fn push_lane(&mut self, lane: usize, s: Slot) {
        let q = &mut self.lanes[lane];
        // Time order is all a lane needs (it orders each instant's keys itself).
        if q.back().is_some_and(|b| b.key >> 64 > s.key >> 64) {
            return self.push_slot(s);
        }
        q.push_back(s);
        // Smaller than the lane's front: the lane was empty, or the key joins its front
        // instant and is the smallest there.
        if s.key < self.heads[lane] {
            self.heads[lane] = s.key;
            if s.key < self.lane_min {
                (self.lane_min, self.lane_min_at) = (s.key, lane);
            }
        }
    }

    /// Adds `n` lanes for arrivals handed over from other partitions: a window's arrivals
    /// come in the order their senders launched them, so per lead they are in time order,
    /// and a lane holds them as it holds local ones (in the heap they would each sift).
    pub fn add_inbox_lanes(&mut self, n: usize) {
        self.lanes.extend((0..n).map(|_| Lane::new()));
        self.heads.extend(std::iter::repeat_n(u128::MAX, n));
        self.lane_lead.extend(std::iter::repeat_n(u64::MAX, n));
        self.inbox_lanes += n;
    }

    /// Schedules `ev` with a key another queue made, launched at `sent` by its sender: in an
    /// inbox lane of its lead if there is one, else where [`EventQueue::schedule_key`] would.
    pub fn schedule_key_ahead(&mut self, sent: SimTime, key: u128, ev: Event) {
        let at = (key >> 64) as u64;
        let inbox = self.local_lanes()..self.lanes.len();
        match self.lane_for(at - sent.0, inbox) {
            Some(lane) => self.push_lane(lane, Slot { key, ev }),
            None => self.insert(Slot { key, ev }),
        }
    }

    /// Pops the head of the lane (or the timer heap) holding the smallest head and finds the
    /// new smallest head.
    #[inline(always)]
    fn pop_lane(&mut self) -> Slot {
        let s = if self.lane_min_at == TIMERS {
            self.last_lane = usize::MAX;
            self.timers.pop()
        } else {
            self.last_lane = self.lane_min_at;
            let q = &mut self.lanes[self.lane_min_at];
            let s = q.pop_front().expect("lane_min names a non-empty lane");
            self.heads[self.lane_min_at] = q.front().map_or(u128::MAX, |h| h.key);
            s
        };
        let (mut m, mut at) = (self.timers.first_key(), TIMERS);
        for (i, &h) in self.heads.iter().enumerate() {
            if h < m {
                (m, at) = (h, i);
            }
        }
        (self.lane_min, self.lane_min_at) = (m, at);
        s
    }

    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        let key = self.key(at, &ev);
        self.insert(Slot { key, ev });
    }

    /// Endpoint timers to their own heap, every other event to the main one.
    #[inline(always)]
    fn insert(&mut self, s: Slot) {
        if let Event::Timer(..) = s.ev {
            self.timers.push(s);
            if s.key < self.lane_min {
                (self.lane_min, self.lane_min_at) = (s.key, TIMERS);
            }
            return;
        }
        self.push_slot(s);
    }

    #[inline(always)]
    fn push_slot(&mut self, new: Slot) {
        if self.hole {
            self.hole = false;
            heap::sift_down(&mut self.heap, 0, new);
            return;
        }
        heap::push(&mut self.heap, new);
    }

    /// Fills a pending hole at the root with the last slot.
    #[inline]
    fn fill_hole(&mut self) {
        if self.hole {
            self.hole = false;
            let last = self.heap.pop().expect("a hole has a live slot after it");
            if !self.heap.is_empty() {
                heap::sift_down(&mut self.heap, 0, last);
            }
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.pop_until(SimTime::MAX)
    }

    /// Pops the next event if it is due at or before `end` (the event loop's one call per
    /// event: the heap's and the lanes' heads are compared once).
    #[inline(always)]
    pub fn pop_until(&mut self, end: SimTime) -> Option<(SimTime, Event)> {
        let heap_key = self.heap_first().map_or(u128::MAX, |s| s.key);
        let key = heap_key.min(self.lane_min);
        if key == u128::MAX || (key >> 64) as u64 > end.0 {
            return None;
        }
        if self.lane_min < heap_key {
            self.popped += 1;
            let s = self.pop_lane();
            return Some((SimTime((s.key >> 64) as u64), s.ev));
        }
        self.last_lane = usize::MAX;
        self.fill_hole();
        let top = *self.heap.first()?;
        self.popped += 1;
        if self.heap.len() == 1 {
            self.heap.clear();
        } else {
            self.hole = true;
        }
        Some((SimTime((top.key >> 64) as u64), top.ev))
    }

    /// The slot that fires next, from the heap or a lane.
    #[inline(always)]
    fn first(&self) -> Option<&Slot> {
        let h = self.heap_first();
        if self.lane_min < h.map_or(u128::MAX, |s| s.key) {
            if self.lane_min_at == TIMERS {
                return self.timers.first();
            }
            return self.lanes[self.lane_min_at].front();
        }
        h
    }

    /// The heap's smallest slot: the root, or with a hole there the smallest of its children.
    #[inline(always)]
    fn heap_first(&self) -> Option<&Slot> {
        if !self.hole {
            return self.heap.first();
        }
        let kids = &self.heap[1..self.heap.len().min(1 + ARITY)];
        let mut m = &kids[0];
        for k in &kids[1..] {
            if k.key < m.key {
                m = k;
            }
        }
        Some(m)
    }

    /// When the last pop came from a lane, the event `i` places behind it in that lane (0: the
    /// lane's new head). A lane's later events are known long before they fire, so the loop
    /// can start loading what they touch several steps ahead.
    #[inline]
    pub fn lane_ahead(&self, i: usize) -> Option<&Event> {
        self.lanes.get(self.last_lane)?.get(i).map(|s| &s.ev)
    }

    /// The next event to fire, if any (without removing it).
    #[inline]
    pub fn peek(&self) -> Option<&Event> {
        self.first().map(|s| &s.ev)
    }

    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.first().map(|s| SimTime((s.key >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.heap.len() - self.hole as usize
            + self.timers.len()
            + self.lanes.iter().map(Lane::len).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Events fired so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::FlowId;
    use proptest::prelude::*;
    use std::collections::BinaryHeap;

    #[test]
    fn equal_times_fire_in_scheduling_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), Event::Sample);
        q.schedule(SimTime(5), Event::WarmupEnd);
        q.schedule(SimTime(1), Event::FlowStart(FlowId(0)));
        assert_eq!(q.pop(), Some((SimTime(1), Event::FlowStart(FlowId(0)))));
        assert_eq!(q.pop(), Some((SimTime(5), Event::Sample)));
        assert_eq!(q.pop(), Some((SimTime(5), Event::WarmupEnd)));
        assert_eq!(q.pop(), None);
    }

    proptest! {
        #[test]
        fn pops_are_sorted_by_time_then_insertion(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.schedule(SimTime(*t), Event::FlowStart(FlowId(i as u32)));
            }
            let mut last = (0u64, 0u32);
            let mut n = 0;
            while let Some((t, Event::FlowStart(f))) = q.pop() {
                prop_assert!((t.0, f.0) >= last);
                last = (t.0, f.0);
                n += 1;
            }
            prop_assert_eq!(n, times.len());
        }

        /// Lanes beside the heap: events scheduled at now + a recurring lead (as links do; more
        /// leads than lanes, so lanes change leads when empty and some events go to the heap)
        /// interleaved with heap events, peeks and pops give exactly the (time, seq) order a
        /// single binary heap gives, and `lane_ahead` names the lane's next events in order.
        #[test]
        fn lanes_merge_with_the_heap_in_time_then_seq_order(ops in proptest::collection::vec((0u8..5, 0u64..3000), 0..500), delays in proptest::collection::vec(0u64..2000, 1..6), n_lanes in 0usize..4, end in 0u64..20_000) {
            let mut q = EventQueue::with_lanes(n_lanes);
            let mut model = BinaryHeap::new();
            let (mut now, mut seq) = (0u64, 0u32);
            for (op, x) in ops {
                match op {
                    0 => {
                        q.schedule(SimTime(now + x), Event::FlowStart(FlowId(seq)));
                        model.push(std::cmp::Reverse((now + x, seq)));
                        seq += 1;
                    }
                    1 | 2 => {
                        let at = now + delays[x as usize % delays.len()];
                        q.schedule_ahead(SimTime(now), SimTime(at), Event::FlowStart(FlowId(seq)));
                        model.push(std::cmp::Reverse((at, seq)));
                        seq += 1;
                    }
                    3 => prop_assert_eq!(q.peek().copied(), model.peek().map(|r| Event::FlowStart(FlowId(r.0 .1)))),
                    _ => {
                        let got = q.pop_until(SimTime(end)).map(|(t, e)| match e { Event::FlowStart(f) => (t.0, f.0), _ => unreachable!() });
                        let want = model.peek().map(|r| r.0).filter(|&(t, _)| t <= end);
                        prop_assert_eq!(got, want);
                        if let Some((t, _)) = got {
                            model.pop();
                            now = t;
                            // What the lane holds behind the popped event is in its order.
                            let ahead: Vec<_> = (0..3).filter_map(|i| q.lane_ahead(i).copied()).collect();
                            let mut sorted = ahead.clone();
                            sorted.sort_by_key(|e| match e { Event::FlowStart(f) => f.0, _ => unreachable!() });
                            prop_assert_eq!(ahead, sorted);
                        }
                    }
                }
                prop_assert_eq!(q.len(), model.len());
            }
            while let Some(want) = model.pop() {
                let (t, e) = q.pop().unwrap();
                prop_assert_eq!((t.0, e), (want.0 .0, Event::FlowStart(FlowId(want.0 .1))));
            }
            prop_assert!(q.pop().is_none());
        }

        /// Interleaved schedules (never before the last pop; after a peek possibly before
        /// the peeked event, as the TCP test harness does), peeks and pops give exactly a sorted (time, seq) order.
        #[test]
        fn matches_a_binary_heap_under_interleaving(ops in proptest::collection::vec((0u8..4, 0u64..1u64 << 40), 0..400)) {
            let mut q = EventQueue::new();
            let mut model = BinaryHeap::new();
            let (mut now, mut seq) = (0u64, 0u32);
            for (op, dt) in ops {
                match op {
                    0 | 1 => {
                        // Mostly near times (same bucket), sometimes far ones.
                        let at = now + if op == 0 { dt % 1000 } else { dt };
                        q.schedule(SimTime(at), Event::FlowStart(FlowId(seq)));
                        model.push(std::cmp::Reverse((at, seq)));
                        seq += 1;
                    }
                    2 => {
                        prop_assert_eq!(q.peek_time().map(|t| t.0), model.peek().map(|r| r.0 .0));
                        // peek names the event pop would return (the loop prefetches for it).
                        prop_assert_eq!(q.peek().copied(), model.peek().map(|r| Event::FlowStart(FlowId(r.0 .1))));
                    }
                    _ => {
                        let got = q.pop().map(|(t, e)| match e { Event::FlowStart(f) => (t.0, f.0), _ => unreachable!() });
                        let want = model.pop().map(|r| r.0);
                        prop_assert_eq!(got, want);
                        if let Some((t, _)) = got { now = t; }
                    }
                }
                prop_assert_eq!(q.len(), model.len());
            }
            while let Some(want) = model.pop() {
                let (t, e) = q.pop().unwrap();
                prop_assert_eq!((t.0, e), (want.0 .0, Event::FlowStart(FlowId(want.0 .1))));
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
