//! Drop-tail FIFO with a byte or packet limit.

use super::{capacity_bytes, overflows, Backlog, DropReason, QEntry, QueueDisc, Verdict};
use crate::config::QueueLimit;
use crate::units::SimTime;
use std::collections::VecDeque;

pub struct DropTail {
    q: VecDeque<QEntry>,
    limit: QueueLimit,
    bytes: u64,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> DropTail {
        DropTail { q: VecDeque::with_capacity(256), limit, bytes: 0 }
    }
}

impl QueueDisc for DropTail {
    fn name(&self) -> &'static str {
        "droptail"
    }

    #[inline]
    fn enqueue(&mut self, e: QEntry, _now: SimTime) -> Verdict {
        let full = overflows(self.limit, self.bytes, self.q.len(), &e);
        if full {
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.bytes += e.bytes as u64;
        self.q.push_back(e);
        Verdict::Queued
    }

    #[inline]
    fn dequeue(&mut self, _now: SimTime, _dropped: &mut Vec<(QEntry, DropReason)>) -> Option<QEntry> {
        let e = self.q.pop_front()?;
        self.bytes -= e.bytes as u64;
        Some(e)
    }

    fn backlog(&self) -> Backlog {
        Backlog { bytes: self.bytes, pkts: self.q.len() as u64 }
    }

    fn capacity_bytes(&self) -> u64 {
        capacity_bytes(self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PacketId;

    fn e(i: u32, bytes: u32) -> QEntry {
        QEntry { id: PacketId(i), bytes, enqueued_at: SimTime(0), ecn_capable: false }
    }

    #[test]
    fn byte_limit_admits_exactly_what_fits() {
        let mut q = DropTail::new(QueueLimit::Bytes(3000));
        assert_eq!(q.enqueue(e(0, 1500), SimTime(0)), Verdict::Queued);
        assert_eq!(q.enqueue(e(1, 1500), SimTime(0)), Verdict::Queued);
        assert_eq!(q.enqueue(e(2, 1), SimTime(0)), Verdict::Dropped(DropReason::Overflow));
        let mut d = Vec::new();
        assert_eq!(q.dequeue(SimTime(1), &mut d).unwrap().id, PacketId(0));
        assert_eq!(q.backlog(), Backlog { bytes: 1500, pkts: 1 });
    }

    #[test]
    fn packet_limit_counts_packets() {
        let mut q = DropTail::new(QueueLimit::Packets(2));
        assert_eq!(q.enqueue(e(0, 40), SimTime(0)), Verdict::Queued);
        assert_eq!(q.enqueue(e(1, 9000), SimTime(0)), Verdict::Queued);
        assert_eq!(q.enqueue(e(2, 40), SimTime(0)), Verdict::Dropped(DropReason::Overflow));
        assert_eq!(q.capacity_bytes(), 3000);
    }
}
