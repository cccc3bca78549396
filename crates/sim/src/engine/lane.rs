//! A lane of the event queue: a ring of events that were scheduled in time order, so the
//! oldest is always the next due. At thousands of links a lane holds thousands of events and
//! cycles through more memory than the cache keeps between a slot's write and its read a
//! propagation delay later, so both ends prefetch a few slots ahead.

use super::event::Slot;

/// How many slots ahead of either end a push or pop prefetches (two 32-byte slots a line).
const AHEAD: usize = 8;

#[derive(Debug)]
pub(super) struct Lane {
    /// Power-of-two capacity; the live slots are `head .. head + len` modulo it.
    buf: Vec<Slot>,
    head: usize,
    len: usize,
}

impl Lane {
    pub(super) fn new() -> Lane {
        Lane { buf: Vec::new(), head: 0, len: 0 }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn front(&self) -> Option<&Slot> {
        (self.len > 0).then(|| &self.buf[self.head])
    }

    /// The `i`-th oldest slot.
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&Slot> {
        (i < self.len).then(|| &self.buf[(self.head + i) & (self.buf.len() - 1)])
    }

    #[inline]
    pub(super) fn back(&self) -> Option<&Slot> {
        (self.len > 0).then(|| &self.buf[(self.head + self.len - 1) & (self.buf.len() - 1)])
    }

    #[inline]
    pub(super) fn push_back(&mut self, s: Slot) {
        if self.len == self.buf.len() {
            self.grow(s);
        }
        let mask = self.buf.len() - 1;
        self.buf[(self.head + self.len) & mask] = s;
        self.len += 1;
        super::prefetch(&self.buf[(self.head + self.len + AHEAD) & mask], 1);
    }

    /// Inserts `s` in key order if at most `max` slots at the back have larger keys (they move
    /// one place back); false, and nothing changed, if more do.
    #[inline]
    pub(super) fn insert_near_back(&mut self, s: Slot, max: usize) -> bool {
        let mut i = self.len;
        while i > 0 && self.get(i - 1).is_some_and(|b| b.key > s.key) {
            if self.len - i == max {
                return false;
            }
            i -= 1;
        }
        self.push_back(s);
        let mask = self.buf.len() - 1;
        let mut j = self.len - 1;
        while j > i {
            self.buf[(self.head + j) & mask] = self.buf[(self.head + j - 1) & mask];
            j -= 1;
        }
        self.buf[(self.head + i) & mask] = s;
        true
    }

    #[inline]
    pub(super) fn pop_front(&mut self) -> Option<Slot> {
        if self.len == 0 {
            return None;
        }
        let mask = self.buf.len() - 1;
        let s = self.buf[self.head];
        self.head = (self.head + 1) & mask;
        self.len -= 1;
        super::prefetch(&self.buf[(self.head + AHEAD) & mask], 1);
        Some(s)
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

    proptest! {
        /// Inserting near the back keeps the lane sorted, or refuses and changes nothing.
        #[test]
        fn inserts_near_the_back_in_order(keys in proptest::collection::vec(0u128..50, 0..300), pops in proptest::collection::vec(any::<bool>(), 0..300)) {
            let mut lane = Lane::new();
            let mut model: Vec<u128> = Vec::new();
            for (i, k) in keys.into_iter().enumerate() {
                let s = Slot { key: k, ev: Event::Sample };
                let larger = model.iter().rev().take_while(|&&m| m > k).count();
                let ok = lane.insert_near_back(s, 3);
                prop_assert_eq!(ok, larger <= 3);
                if ok {
                    model.insert(model.len() - larger, k);
                }
                if pops.get(i).copied().unwrap_or(false) {
                    prop_assert_eq!(lane.pop_front().map(|s| s.key), (!model.is_empty()).then(|| model.remove(0)));
                }
                prop_assert_eq!(lane.len(), model.len());
                for (j, m) in model.iter().enumerate() {
                    prop_assert_eq!(lane.get(j).map(|s| s.key), Some(*m));
                }
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
