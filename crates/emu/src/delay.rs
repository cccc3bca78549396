//! A delay line: packets leave in arrival order a fixed time after they entered. Constant
//! delay and non-decreasing entry times keep it a FIFO, so a ring buffer suffices (its
//! capacity is reserved up front: the slab's size bounds how many packets can be inside).

use bloatlab_sim::ids::PacketId;
use bloatlab_sim::units::{Dur, SimTime};
use std::collections::VecDeque;

pub struct DelayLine {
    delay: Dur,
    ring: VecDeque<(SimTime, PacketId)>,
}

impl DelayLine {
    pub fn new(delay: Dur, capacity: usize) -> DelayLine {
        DelayLine { delay, ring: VecDeque::with_capacity(capacity) }
    }

    /// Enters at `t`; leaves at `t + delay`.
    #[inline]
    pub fn push(&mut self, t: SimTime, id: PacketId) {
        debug_assert!(
            self.ring.back().is_none_or(|b| b.0 <= t + self.delay),
            "entries out of order"
        );
        self.ring.push_back((t + self.delay, id));
    }

    /// When the head leaves.
    #[inline]
    pub fn next(&self) -> Option<SimTime> {
        self.ring.front().map(|e| e.0)
    }

    /// The head, if it has left by `now`, with its exit time.
    #[inline]
    pub fn pop_ready(&mut self, now: SimTime) -> Option<(SimTime, PacketId)> {
        match self.ring.front() {
            Some(e) if e.0 <= now => self.ring.pop_front(),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.ring.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
}
