//! The endpoints' timers, in a heap of their own beside the event heap.
//!
//! Why apart: every socket keeps its retransmission timer (and a receiver its delayed-ACK
//! timer) pending, tens to hundreds of milliseconds ahead, while links schedule their ends of
//! transmission microseconds ahead. In one heap, at 10,000 flows, the ~36,000 pending slots
//! are nearly all such timers, and every near event paid for them: pushed at the bottom, it
//! climbed ~5 of the heap's eight levels (a cold pair of lines each); the root's hole, filled
//! with the last slot (a timer), sank it ~7 levels again. Kept apart, the event heap holds
//! only what is due soon (~80 slots, in cache) and the timers pay their own depth once per
//! timer event — 3 % of the events (docs/performance.md, "Per-flow cost at 10,000 flows").
//!
//! The order is unchanged: a timer's slot carries the same (time, sequence) key it would have
//! had in the one heap, and the queue pops whichever head is smallest, so the merged order is
//! the one total order of the keys (the proptest below drives timers, heap and lane events
//! interleaved against one `BinaryHeap`).
//!
//! A plain 4-ary min-heap, the event heap's steps (heap.rs).

use super::event::Slot;
use super::heap;

#[derive(Debug, Default)]
pub(super) struct TimerHeap {
    heap: Vec<Slot>,
}

impl TimerHeap {
    /// The smallest key (`u128::MAX`: none).
    #[inline(always)]
    pub(super) fn first_key(&self) -> u128 {
        self.heap.first().map_or(u128::MAX, |s| s.key)
    }

    #[inline(always)]
    pub(super) fn first(&self) -> Option<&Slot> {
        self.heap.first()
    }

    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Adds `s`, sifting it up: a timer is usually due after most pending ones, so it climbs
    /// a level or two.
    #[inline]
    pub(super) fn push(&mut self, s: Slot) {
        heap::push(&mut self.heap, s);
    }

    /// Removes and returns the smallest slot (the caller knows there is one).
    #[inline]
    pub(super) fn pop(&mut self) -> Slot {
        let top = self.heap[0];
        let last = self.heap.pop().expect("pop of an empty timer heap");
        if !self.heap.is_empty() {
            // The last slot sinks from the root.
            heap::sift_down(&mut self.heap, 0, last);
        }
        top
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Event, EventQueue, TimerKind};
    use crate::ids::{FlowId, SockId};
    use crate::units::SimTime;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// The `i`-th event scheduled, as a timer or not (its number rides in the id).
    fn ev(timer: bool, i: u32) -> Event {
        if timer {
            Event::Timer(SockId(i), TimerKind::Rto)
        } else {
            Event::FlowStart(FlowId(i))
        }
    }

    fn id(e: Event) -> u32 {
        match e {
            Event::Timer(s, _) => s.0,
            Event::FlowStart(f) => f.0,
            _ => unreachable!(),
        }
    }

    proptest! {
        /// Timers (in their own heap), heap events and lane events, scheduled, peeked and
        /// popped in any interleaving, come out in exactly the (time, seq) order of one
        /// `BinaryHeap` holding them all; `len` counts all three.
        #[test]
        fn timers_merge_in_time_then_seq_order(
            ops in proptest::collection::vec((0u8..6, 0u64..5000), 0..500),
            n_lanes in 0usize..3,
            end in 0u64..30_000,
        ) {
            let mut q = EventQueue::with_lanes(n_lanes);
            let mut model = BinaryHeap::new();
            let (mut now, mut seq) = (0u64, 0u32);
            for (op, x) in ops {
                match op {
                    // A timer far or near, an ordinary event, a lane event (a recurring lead).
                    0..=2 => {
                        let at = now + if op == 0 { x * 7 } else { x };
                        q.schedule(SimTime(at), ev(op < 2, seq));
                        model.push(Reverse((at, seq)));
                        seq += 1;
                    }
                    3 => {
                        let at = now + 500 * (x % 3);
                        q.schedule_ahead(SimTime(now), SimTime(at), ev(false, seq));
                        model.push(Reverse((at, seq)));
                        seq += 1;
                    }
                    4 => prop_assert_eq!(q.peek().map(|e| id(*e)), model.peek().map(|r| r.0 .1)),
                    _ => {
                        let got = q.pop_until(SimTime(end)).map(|(t, e)| (t.0, id(e)));
                        let want = model.peek().map(|r| r.0).filter(|&(t, _)| t <= end);
                        prop_assert_eq!(got, want);
                        if let Some((t, _)) = got {
                            model.pop();
                            now = t;
                        }
                    }
                }
                prop_assert_eq!(q.len(), model.len());
            }
            while let Some(Reverse(want)) = model.pop() {
                let (t, e) = q.pop().unwrap();
                prop_assert_eq!((t.0, id(e)), want);
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
