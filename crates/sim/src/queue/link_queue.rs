//! The discipline as a link holds it: drop-tail inline, every other discipline boxed.
//!
//! Nearly every link of a large topology is drop-tail, and at thousands of links the box is
//! one more cache miss on every enqueue and dequeue (the link, then the discipline, then the
//! packet's entry). Inline, drop-tail's FIFO header sits in the link's own first cache lines,
//! which the event loop prefetches. Behaviour is the discipline's own either way.

use super::{Backlog, Dequeued, DropReason, DropTail, QEntry, QueueDisc, Verdict};
use crate::units::SimTime;

pub enum LinkQueue {
    DropTail(DropTail),
    Boxed(Box<dyn QueueDisc>),
}

impl From<Box<dyn QueueDisc>> for LinkQueue {
    fn from(q: Box<dyn QueueDisc>) -> Self {
        LinkQueue::Boxed(q)
    }
}

impl From<DropTail> for LinkQueue {
    fn from(q: DropTail) -> Self {
        LinkQueue::DropTail(q)
    }
}

impl LinkQueue {
    /// The discipline only ever drops the packet offered to it (drop-tail): it never pushes
    /// other packets out nor drops at dequeue, so the link need not lend it the scratch
    /// vector for those (a line it would otherwise touch on every packet).
    #[inline]
    pub fn drops_only_arrivals(&self) -> bool {
        matches!(self, LinkQueue::DropTail(_))
    }
}

/// Calls `$m` on whichever discipline it is.
macro_rules! each {
    ($s:expr, $q:ident => $e:expr) => {
        match $s {
            LinkQueue::DropTail($q) => $e,
            LinkQueue::Boxed($q) => $e,
        }
    };
}

impl QueueDisc for LinkQueue {
    fn name(&self) -> &'static str {
        each!(self, q => q.name())
    }
    #[inline]
    fn enqueue(
        &mut self,
        e: QEntry,
        now: SimTime,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Verdict {
        each!(self, q => q.enqueue(e, now, dropped))
    }
    #[inline]
    fn dequeue(
        &mut self,
        now: SimTime,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Option<Dequeued> {
        each!(self, q => q.dequeue(now, dropped))
    }
    #[inline]
    fn backlog(&self) -> Backlog {
        each!(self, q => q.backlog())
    }
    #[inline]
    fn ready_at(&self) -> Option<SimTime> {
        each!(self, q => q.ready_at())
    }
    #[inline]
    fn cut_through(&self, e: &QEntry) -> bool {
        each!(self, q => q.cut_through(e))
    }
    fn capacity_bytes(&self) -> u64 {
        each!(self, q => q.capacity_bytes())
    }
    fn internal_state(&self) -> f64 {
        each!(self, q => q.internal_state())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{SimRng, Stream};
    use crate::queue::QueueLimit;
    use crate::units::Rate;

    #[test]
    fn drop_tail_is_built_inline_and_others_boxed() {
        for d in super::super::DISCIPLINES {
            let v = serde_json::json!({});
            let mut t = crate::params::Table::new("q", &v).unwrap();
            let limit = QueueLimit::Packets(10);
            let spec = crate::queue::QueueSpec::new(d, (d.parse)(&mut t, &limit).unwrap());
            let cfg = crate::queue::QueueCfg { spec, limit };
            let q = super::super::build(&cfg, SimRng::new(1, Stream::Queue, 0), Rate(10_000_000));
            assert_eq!(q.name(), d.name);
            assert_eq!(matches!(q, LinkQueue::DropTail(_)), d.name == "droptail", "{}", d.name);
        }
    }
}
