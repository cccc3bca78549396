//! A lane of the event queue: a ring of events that were scheduled in time order, so the
//! earliest are always at the front. At thousands of links a lane holds thousands of events and
//! cycles through more memory than the cache keeps between a slot's write and its read a
//! propagation delay later, so both ends prefetch a few slots ahead.
//!
//! Events of one instant (a run) may come in any key order: a run that keys events by actor
//! (queue.rs) launches packets on many links at one nanosecond, in the order their handlers
//! fire, not in the order of the links. The lane keeps the smallest key of the front run at
//! hand and sorts the run once, when its first event is popped — by then the run is whole: a
//! lane's events are due a fixed lead after they are scheduled, so nothing is scheduled into
//! the run of the instant being popped.

use super::event::Slot;

/// How many slots ahead of either end a push or pop prefetches (two 32-byte slots a line).
const AHEAD: usize = 8;

#[inline(always)]
fn time(s: &Slot) -> u64 {
    (s.key >> 64) as u64
}

#[derive(Debug)]
pub(super) struct Lane {
    /// Power-of-two capacity; the live slots are `head .. head + len` modulo it.
    buf: Vec<Slot>,
    head: usize,
    len: usize,
    /// Every slot is in key order (each push's key was above the back's): a plain FIFO. The
    /// rest applies only when this is false; it is true again once the lane empties.
    in_order: bool,
    /// The front run's smallest slot, as an offset from the head.
    min_at: usize,
    /// Slots at the front already in key order (a sorted run being popped).
    sorted: usize,
    /// Where a run that wraps around the ring is sorted.
    scratch: Vec<Slot>,
}

impl Lane {
    pub(super) fn new() -> Lane {
        Lane {
            buf: Vec::new(),
            head: 0,
            len: 0,
            in_order: true,
            min_at: 0,
            sorted: 0,
            scratch: Vec::new(),
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The slot that pops next: the smallest key of the earliest instant.
    #[inline]
    pub(super) fn front(&self) -> Option<&Slot> {
        let off = if self.in_order { 0 } else { self.min_at };
        (self.len > 0).then(|| &self.buf[(self.head + off) & (self.buf.len() - 1)])
    }

    /// The `i`-th slot from the front in the ring (in key order within a sorted run; a hint
    /// of what comes soon otherwise).
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&Slot> {
        (i < self.len).then(|| &self.buf[(self.head + i) & (self.buf.len() - 1)])
    }

    /// The slot pushed last (the latest instant).
    #[inline]
    pub(super) fn back(&self) -> Option<&Slot> {
        (self.len > 0).then(|| &self.buf[(self.head + self.len - 1) & (self.buf.len() - 1)])
    }

    /// Appends `s`, due no earlier than the back (the caller checks).
    #[inline]
    pub(super) fn push_back(&mut self, s: Slot) {
        debug_assert!(self.back().is_none_or(|b| time(b) <= time(&s)), "a lane in time order");
        debug_assert!(
            self.sorted == 0 || time(&s) > time(&self.buf[self.head]),
            "nothing joins the instant being popped"
        );
        if self.len == self.buf.len() {
            self.grow(s);
        }
        let mask = self.buf.len() - 1;
        if self.in_order && self.len > 0 && s.key < self.buf[(self.head + self.len - 1) & mask].key
        {
            // The first slot out of key order: from here the front run is tracked.
            (self.in_order, self.min_at, self.sorted) = (false, 0, 0);
        }
        self.buf[(self.head + self.len) & mask] = s;
        if !self.in_order && self.sorted == 0 {
            let m = &self.buf[(self.head + self.min_at) & mask];
            if time(&s) == time(m) && s.key < m.key {
                self.min_at = self.len;
            }
        }
        self.len += 1;
        super::prefetch(&self.buf[(self.head + self.len + AHEAD) & mask], 1);
    }

    #[inline(always)]
    pub(super) fn pop_front(&mut self) -> Option<Slot> {
        if self.len == 0 {
            return None;
        }
        if !self.in_order {
            return Some(self.pop_run());
        }
        let s = self.take_head();
        self.prefetch_front();
        Some(s)
    }

    /// Takes the head slot (the caller checked there is one); at the head's wrap the ring may
    /// shrink ([`Lane::shrink_if_sparse`]).
    #[inline(always)]
    fn take_head(&mut self) -> Slot {
        let s = self.buf[self.head];
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        if self.head == 0 {
            self.shrink_if_sparse();
        }
        s
    }

    /// Starts loading the slot `AHEAD` pops from now.
    #[inline(always)]
    fn prefetch_front(&self) {
        super::prefetch(&self.buf[(self.head + AHEAD) & (self.buf.len() - 1)], 1);
    }

    /// Pops the smallest slot of the front run (sorting the run at its first pop).
    #[inline(never)]
    fn pop_run(&mut self) -> Slot {
        if self.sorted == 0 {
            self.sort_front_run();
        }
        let s = self.take_head();
        self.sorted -= 1;
        if self.len == 0 {
            (self.in_order, self.min_at) = (true, 0);
        } else if self.sorted == 0 {
            self.find_run_min();
        }
        self.prefetch_front();
        s
    }

    /// Puts the front run in key order (usually it is one slot, or already in order).
    #[inline]
    fn sort_front_run(&mut self) {
        let mask = self.buf.len() - 1;
        let t = time(&self.buf[self.head]);
        let mut n = 1;
        let mut in_order = true;
        while n < self.len {
            let (prev, cur) =
                (&self.buf[(self.head + n - 1) & mask], &self.buf[(self.head + n) & mask]);
            if time(cur) != t {
                break;
            }
            in_order &= prev.key < cur.key;
            n += 1;
        }
        if !in_order {
            self.sort_range(n);
        }
        self.sorted = n;
        self.min_at = 0;
    }

    #[cold]
    fn sort_range(&mut self, n: usize) {
        let mask = self.buf.len() - 1;
        if self.head + n <= self.buf.len() {
            self.buf[self.head..self.head + n].sort_unstable_by_key(|s| s.key);
            return;
        }
        self.scratch.clear();
        self.scratch.extend((0..n).map(|i| self.buf[(self.head + i) & mask]));
        self.scratch.sort_unstable_by_key(|s| s.key);
        for (i, s) in self.scratch.iter().enumerate() {
            self.buf[(self.head + i) & mask] = *s;
        }
    }

    /// Finds the smallest key of the new front run.
    #[inline]
    fn find_run_min(&mut self) {
        let mask = self.buf.len() - 1;
        let t = time(&self.buf[self.head]);
        self.min_at = 0;
        let mut i = 1;
        while i < self.len {
            let s = &self.buf[(self.head + i) & mask];
            if time(s) != t {
                break;
            }
            if s.key < self.buf[(self.head + self.min_at) & mask].key {
                self.min_at = i;
            }
            i += 1;
        }
    }

    /// At the head's wrap to slot 0 (the live slots are then `0 .. len`, unbroken): a ring
    /// eight times larger than what it holds is cut to a quarter of that or less. A ring grown
    /// for a burst (at 10,000 flows the start's initial windows: 131,072 slots, 4 MB) and left
    /// that size walks all of it between a slot's pop and its next push, a stretch the cache
    /// does not keep; a ring a few times its live length is rewritten while still in cache.
    #[cold]
    fn shrink_if_sparse(&mut self) {
        const MIN: usize = 4096;
        let cap = self.buf.len();
        if cap <= MIN || self.len * 8 >= cap {
            return;
        }
        let keep = (self.len * 2).next_power_of_two().max(MIN);
        self.buf.truncate(keep);
        self.buf.shrink_to_fit();
    }

    /// Doubles the ring, its slots in order from index 0 (`fill` pads the new half).
    #[cold]
    fn grow(&mut self, fill: Slot) {
        let cap = (self.buf.len() * 2).max(64);
        let mut buf = Vec::with_capacity(cap);
        let mask = self.buf.len().wrapping_sub(1);
        buf.extend((0..self.len).map(|i| self.buf[(self.head + i) & mask]));
        buf.resize(cap, fill);
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Event;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// A ring grown for a burst is cut back once it holds an eighth of its slots, at the
    /// head's wrap, and keeps its slots in order through the cut and the growth after it.
    #[test]
    fn a_ring_grown_for_a_burst_shrinks_back_and_keeps_its_order() {
        let slot = |t: u64| Slot { key: (t as u128) << 64, ev: Event::Sample };
        let mut lane = Lane::new();
        let (mut pushed, mut popped) = (0u64, 0u64);
        let mut pop = |lane: &mut Lane| {
            let s = lane.pop_front().unwrap();
            assert_eq!(time(&s), popped, "FIFO order");
            popped += 1;
        };
        for _ in 0..20_000 {
            lane.push_back(slot(pushed));
            pushed += 1;
        }
        assert_eq!(lane.buf.len(), 32_768);
        while lane.len() > 100 {
            pop(&mut lane);
        }
        // Steady state: one in, one out, until the head wraps.
        for _ in 0..20_000 {
            lane.push_back(slot(pushed));
            pushed += 1;
            pop(&mut lane);
        }
        assert_eq!(lane.buf.len(), 4096, "cut to the smallest ring once sparse");
        for _ in 0..10_000 {
            lane.push_back(slot(pushed));
            pushed += 1;
        }
        while lane.len() > 0 {
            pop(&mut lane);
        }
        assert_eq!(popped, pushed);
    }

    proptest! {
        /// Slots pushed in time order with keys in any order within an instant pop in key
        /// order, across growth, whatever the interleaving of pushes and pops (pushes never
        /// join the instant being popped, as in the queue).
        #[test]
        fn pops_in_key_order_within_each_instant(ops in proptest::collection::vec((0u8..4, 0u64..3, 0u64..1000), 0..600)) {
            let mut lane = Lane::new();
            let mut model: Vec<u128> = Vec::new();
            let (mut t, mut popping) = (0u64, None::<u64>);
            for (op, dt, low) in ops {
                if op < 3 {
                    // Never into the instant being popped.
                    t += dt;
                    if popping.is_some_and(|p| p >= t) {
                        t = popping.unwrap() + 1;
                    }
                    let key = ((t as u128) << 64) | low as u128;
                    if model.contains(&key) {
                        continue;
                    }
                    lane.push_back(Slot { key, ev: Event::Sample });
                    model.push(key);
                    model.sort_unstable();
                } else {
                    prop_assert_eq!(lane.front().map(|s| s.key), model.first().copied());
                    let got = lane.pop_front().map(|s| s.key);
                    let want = (!model.is_empty()).then(|| model.remove(0));
                    prop_assert_eq!(got, want);
                    popping = got.map(|k| (k >> 64) as u64);
                }
                prop_assert_eq!(lane.len(), model.len());
                prop_assert_eq!(lane.front().map(|s| s.key), model.first().copied());
            }
        }

        /// Pushes and pops in any interleaving behave as a plain FIFO, across growth.
        #[test]
        fn is_a_fifo(ops in proptest::collection::vec(0u8..3, 0..600)) {
            let mut lane = Lane::new();
            let mut model = VecDeque::new();
            for (i, op) in ops.into_iter().enumerate() {
                if op < 2 {
                    let s = Slot { key: i as u128, ev: Event::Sample };
                    lane.push_back(s);
                    model.push_back(i as u128);
                } else {
                    prop_assert_eq!(lane.pop_front().map(|s| s.key), model.pop_front());
                }
                prop_assert_eq!(lane.len(), model.len());
                prop_assert_eq!(lane.front().map(|s| s.key), model.front().copied());
                prop_assert_eq!(lane.back().map(|s| s.key), model.back().copied());
                for i in 0..3 {
                    prop_assert_eq!(lane.get(i).map(|s| s.key), model.get(i).copied());
                }
            }
        }
    }
}
