//! Drop-tail FIFO with a byte or packet limit.

use super::{
    Backlog, BuildCx, Dequeued, DropReason, Fifo, QEntry, QueueBuild, QueueDisc, QueueEntry,
    Verdict,
};
use crate::queue::QueueLimit;
use crate::units::SimTime;

pub const DEF: QueueEntry = QueueEntry {
    name: "droptail",
    doc: "drop-tail FIFO: drops arrivals that do not fit the limit",
    keys: &[],
    extra: super::DEFAULT_LIMIT,
    parse: |_, _| Ok(super::share(DropTailParams)),
};

/// Drop-tail has no parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DropTailParams;

impl QueueBuild for DropTailParams {
    fn build(&self, cx: BuildCx) -> Box<dyn QueueDisc> {
        Box::new(DropTail::new(cx.limit))
    }
}

pub struct DropTail {
    q: Fifo,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> DropTail {
        DropTail { q: Fifo::new(limit) }
    }
}

impl QueueDisc for DropTail {
    fn name(&self) -> &'static str {
        "droptail"
    }

    #[inline]
    fn enqueue(
        &mut self,
        e: QEntry,
        _now: SimTime,
        _dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Verdict {
        if self.q.overflows(&e) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.q.push(e);
        Verdict::Queued
    }

    #[inline]
    fn dequeue(
        &mut self,
        _now: SimTime,
        _dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Option<Dequeued> {
        self.q.pop().map(Dequeued::plain)
    }

    /// Empty, and `e` fits: enqueued now it would be the next to leave, and an empty FIFO
    /// pushed and popped is the FIFO it was.
    #[inline]
    fn cut_through(&self, e: &QEntry) -> bool {
        self.q.is_empty() && !self.q.overflows(e)
    }

    fn backlog(&self) -> Backlog {
        self.q.backlog()
    }

    fn capacity_bytes(&self) -> u64 {
        self.q.capacity_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::entry;
    use super::*;
    use crate::ids::PacketId;
    use crate::wire::Ecn;

    fn e(i: u32, bytes: u32) -> QEntry {
        entry(i, bytes, SimTime(0), Ecn::NotEct)
    }

    #[test]
    fn byte_limit_admits_exactly_what_fits() {
        let mut q = DropTail::new(QueueLimit::Bytes(3000));
        assert_eq!(q.enqueue(e(0, 1500), SimTime(0), &mut Vec::new()), Verdict::Queued);
        assert_eq!(q.enqueue(e(1, 1500), SimTime(0), &mut Vec::new()), Verdict::Queued);
        assert_eq!(
            q.enqueue(e(2, 1), SimTime(0), &mut Vec::new()),
            Verdict::Dropped(DropReason::Overflow)
        );
        let mut d = Vec::new();
        assert_eq!(q.dequeue(SimTime(1), &mut d).unwrap().entry.id, PacketId(0));
        assert_eq!(q.backlog(), Backlog { bytes: 1500, pkts: 1 });
    }

    /// Cut-through only where enqueue then dequeue would hand `e` straight back: empty, and
    /// it fits. A discipline that does not override it never does.
    #[test]
    fn cuts_through_only_when_empty_and_it_fits() {
        let mut q = DropTail::new(QueueLimit::Bytes(1500));
        assert!(q.cut_through(&e(0, 1500)));
        assert!(!q.cut_through(&e(0, 1501)), "a packet the limit refuses must be dropped");
        q.enqueue(e(0, 100), SimTime(0), &mut Vec::new());
        assert!(!q.cut_through(&e(1, 100)), "a packet behind another must wait its turn");
        assert!(!Plain(DropTail::new(QueueLimit::Bytes(1500))).cut_through(&e(0, 100)));
    }

    /// A discipline that does not say it cuts through.
    struct Plain(DropTail);

    impl QueueDisc for Plain {
        fn name(&self) -> &'static str {
            "plain"
        }
        fn enqueue(
            &mut self,
            e: QEntry,
            now: SimTime,
            d: &mut Vec<(QEntry, DropReason)>,
        ) -> Verdict {
            self.0.enqueue(e, now, d)
        }
        fn dequeue(&mut self, now: SimTime, d: &mut Vec<(QEntry, DropReason)>) -> Option<Dequeued> {
            self.0.dequeue(now, d)
        }
        fn backlog(&self) -> Backlog {
            self.0.backlog()
        }
        fn capacity_bytes(&self) -> u64 {
            self.0.capacity_bytes()
        }
    }

    #[test]
    fn packet_limit_counts_packets() {
        let mut q = DropTail::new(QueueLimit::Packets(2));
        assert_eq!(q.enqueue(e(0, 40), SimTime(0), &mut Vec::new()), Verdict::Queued);
        assert_eq!(q.enqueue(e(1, 9000), SimTime(0), &mut Vec::new()), Verdict::Queued);
        assert_eq!(
            q.enqueue(e(2, 40), SimTime(0), &mut Vec::new()),
            Verdict::Dropped(DropReason::Overflow)
        );
        assert_eq!(q.capacity_bytes(), 3000);
    }
}
