//! Event queue: a binary min-heap on (time, sequence number). Events at the same instant fire
//! in the order they were scheduled, so a run is a pure function of (scenario, seed).

use crate::ids::{FlowId, LinkId, SockId};
use crate::units::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
    /// The packet at the head of a link's propagation pipe reaches the far end.
    LinkArrive(LinkId),
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
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    at: SimTime,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap, we want the earliest (then lowest seq) on top.
    fn cmp(&self, o: &Self) -> Ordering {
        o.at.cmp(&self.at).then_with(|| o.seq.cmp(&self.seq))
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), next_seq: 0, popped: 0 }
    }

    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, ev });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some((e.at, e.ev))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.at)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events fired so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
