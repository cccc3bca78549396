//! The FIFO every discipline keeps its packets in, with its byte and packet counters and the
//! overflow check against the limit (one copy of the enqueue bookkeeping).

use super::{capacity_bytes, Backlog, QEntry};
use crate::queue::QueueLimit;
use std::collections::VecDeque;

/// How many entries ahead of the head [`Fifo::pop`] prefetches (four 48-byte entries: three
/// lines ahead, time enough for a load from memory between the pops of a busy link).
const PREFETCH_AHEAD: usize = 4;

pub struct Fifo {
    q: VecDeque<QEntry>,
    bytes: u64,
    limit: QueueLimit,
}

impl Fifo {
    pub fn new(limit: QueueLimit) -> Fifo {
        // Grows by use: most links of a many-flow run never hold more than a few packets.
        Fifo { q: VecDeque::new(), bytes: 0, limit }
    }

    /// A FIFO whose limit is enforced elsewhere (a sub-queue of a multi-queue discipline).
    pub fn unlimited() -> Fifo {
        Fifo { q: VecDeque::new(), bytes: 0, limit: QueueLimit::Packets(u64::MAX) }
    }

    /// Would `e` overflow the limit? (Byte limits admit a packet only if it fits whole;
    /// packet limits count packets whatever their size.)
    #[inline]
    pub fn overflows(&self, e: &QEntry) -> bool {
        match self.limit {
            QueueLimit::Bytes(b) => self.bytes + e.bytes as u64 > b,
            QueueLimit::Packets(p) => self.q.len() as u64 >= p,
        }
    }

    /// Appends `e` unconditionally (the caller checked [`Fifo::overflows`] if it must).
    #[inline]
    pub fn push(&mut self, e: QEntry) {
        self.bytes += e.bytes as u64;
        self.q.push_back(e);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<QEntry> {
        let e = self.q.pop_front()?;
        self.bytes -= e.bytes as u64;
        if self.q.is_empty() {
            // Back to the ring's first slot (`clear` resets the head): a lightly loaded link
            // reuses its first lines instead of walking a ring sized for its longest queue.
            self.q.clear();
            return Some(e);
        }
        // A long queue's head was written a whole queueing delay ago and has left the cache
        // since: start loading the entry a few pops ahead (a hint only).
        if let Some(ahead) = self.q.get(PREFETCH_AHEAD) {
            crate::engine::prefetch(ahead, 1);
        }
        Some(e)
    }

    /// Removes the newest packet (ACK filtering, drops from the tail).
    #[inline]
    pub fn pop_back(&mut self) -> Option<QEntry> {
        let e = self.q.pop_back()?;
        self.bytes -= e.bytes as u64;
        Some(e)
    }

    #[inline]
    pub fn front(&self) -> Option<&QEntry> {
        self.q.front()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        Backlog { bytes: self.bytes, pkts: self.q.len() as u64 }
    }

    pub fn limit(&self) -> QueueLimit {
        self.limit
    }

    pub fn capacity_bytes(&self) -> u64 {
        capacity_bytes(self.limit)
    }

    /// The packets, oldest first.
    pub fn iter(&self) -> std::collections::vec_deque::Iter<'_, QEntry> {
        self.q.iter()
    }

    /// Removes the packet at `i` (0 = oldest).
    pub fn remove(&mut self, i: usize) -> Option<QEntry> {
        let e = self.q.remove(i)?;
        self.bytes -= e.bytes as u64;
        Some(e)
    }

    pub fn clear(&mut self) {
        self.q.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::entry;
    use super::*;
    use crate::units::SimTime;
    use crate::wire::Ecn;

    /// What the FIFO, the scoreboard and the retransmission queue rely on to keep a ring that
    /// keeps emptying in its first lines: `VecDeque::clear` puts the head back at slot 0 (the
    /// standard library's behaviour, not its promise; if it changes, only speed is lost).
    #[test]
    fn clearing_an_emptied_deque_returns_to_its_first_slot() {
        let mut q: VecDeque<u64> = VecDeque::with_capacity(8);
        q.push_back(0);
        let first = q.as_slices().0.as_ptr();
        for i in 1..6 {
            q.push_back(i);
            q.pop_front();
        }
        q.pop_front();
        assert!(q.is_empty());
        q.clear();
        q.push_back(9);
        assert_eq!(q.as_slices().0.as_ptr(), first, "clear() left the head where it was");
    }

    /// An emptied FIFO starts again from its ring's first slot.
    #[test]
    fn an_emptied_fifo_reuses_its_first_slot() {
        let mut f = Fifo::new(QueueLimit::Packets(100));
        let e = |i| entry(i, 1000, SimTime(0), Ecn::NotEct);
        f.push(e(0));
        let first = f.q.as_slices().0.as_ptr();
        for i in 1..6 {
            f.push(e(i));
            f.pop();
        }
        f.pop();
        f.push(e(9));
        assert_eq!(f.q.as_slices().0.as_ptr(), first);
    }

    #[test]
    fn counts_bytes_and_packets_and_checks_the_limit() {
        let mut f = Fifo::new(QueueLimit::Bytes(3000));
        let e = |i, b| entry(i, b, SimTime(0), Ecn::NotEct);
        f.push(e(0, 1000));
        f.push(e(1, 1500));
        assert_eq!(f.backlog(), Backlog { bytes: 2500, pkts: 2 });
        assert!(!f.overflows(&e(2, 500)));
        assert!(f.overflows(&e(2, 501)));
        assert_eq!(f.pop().unwrap().id.0, 0);
        assert_eq!(f.pop_back().unwrap().id.0, 1);
        assert!(f.is_empty() && f.bytes() == 0);
        let mut f = Fifo::new(QueueLimit::Packets(1));
        assert!(!f.overflows(&e(0, 9000)));
        f.push(e(0, 9000));
        assert!(f.overflows(&e(1, 1)));
        assert_eq!(f.capacity_bytes(), 1500);
        assert!(!Fifo::unlimited().overflows(&e(0, u32::MAX)));
    }
}
