//! The packets propagating along a link with their arrival times, oldest first. The first two
//! sit inline, in the link's hot cache lines; more spill into a growable ring. A lightly loaded
//! link (an access link of one flow among thousands) rarely has more than two packets on the
//! wire, and then its end of transmission and arrival touch no memory of their own.

use crate::ids::PacketId;
use crate::units::SimTime;
use std::collections::VecDeque;

const INLINE: usize = 2;
/// How many spilled entries ahead a pop prefetches (eight 16-byte entries: two lines ahead).
const PREFETCH_AHEAD: usize = 8;

type Entry = (SimTime, PacketId);

#[derive(Debug)]
pub struct Pipe {
    inline: [Entry; INLINE],
    /// Index of the oldest inline entry, and how many inline entries there are.
    head: u8,
    n: u8,
    /// Entries newer than every inline one; non-empty only while the inline slots are full.
    spill: VecDeque<Entry>,
}

impl Pipe {
    /// A pipe with room for `room` entries before it allocates.
    pub fn with_capacity(room: usize) -> Pipe {
        Pipe { inline: [(SimTime::ZERO, PacketId(0)); INLINE], head: 0, n: 0, spill: VecDeque::with_capacity(room.saturating_sub(INLINE)) }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.n as usize + self.spill.len()
    }

    #[inline]
    pub fn push_back(&mut self, e: Entry) {
        if (self.n as usize) < INLINE {
            debug_assert!(self.spill.is_empty());
            self.inline[(self.head as usize + self.n as usize) % INLINE] = e;
            self.n += 1;
        } else {
            self.spill.push_back(e);
        }
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<Entry> {
        if self.n == 0 {
            return None;
        }
        let e = self.inline[self.head as usize];
        self.head = ((self.head as usize + 1) % INLINE) as u8;
        self.n -= 1;
        // Keep the oldest entries inline: the spill's oldest takes the freed slot.
        if let Some(next) = self.spill.pop_front() {
            self.inline[(self.head as usize + self.n as usize) % INLINE] = next;
            self.n += 1;
            // A long pipe's head was written a propagation delay ago and has left the cache
            // since: start loading the entries a few arrivals ahead (a hint only).
            if let Some(ahead) = self.spill.get(PREFETCH_AHEAD) {
                crate::engine::prefetch(ahead, 1);
            }
        }
        Some(e)
    }

    #[inline]
    pub fn front(&self) -> Option<&Entry> {
        (self.n > 0).then(|| &self.inline[self.head as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Pushes and pops in any interleaving behave as a plain FIFO.
        #[test]
        fn is_a_fifo(ops in proptest::collection::vec(any::<bool>(), 0..200), room in 0usize..5) {
            let mut p = Pipe::with_capacity(room);
            let mut model = VecDeque::new();
            for (i, push) in ops.into_iter().enumerate() {
                if push {
                    let e = (SimTime(i as u64), PacketId(i as u32));
                    p.push_back(e);
                    model.push_back(e);
                } else {
                    prop_assert_eq!(p.pop_front(), model.pop_front());
                }
                prop_assert_eq!(p.len(), model.len());
                prop_assert_eq!(p.is_empty(), model.is_empty());
                prop_assert_eq!(p.front(), model.front());
            }
        }
    }
}
