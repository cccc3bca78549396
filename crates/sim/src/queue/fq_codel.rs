//! FQ-CoDel (RFC 8290; Linux `sch_fq_codel`): flow queueing with CoDel on every queue.
//!
//! Packets are classified by a keyed hash of their 5-tuple into `flows` queues (the key comes
//! from the queue's random stream, so it is perturbed per seed and, as in Linux, two flows may
//! share a queue). A deficit round robin serves the queues with two lists: a queue that
//! becomes active joins the *new* list with one quantum of credit and is served before the
//! *old* list (the sparse-flow boost); a queue that has used its credit gets another quantum
//! and moves to the tail of the old list; a queue found empty while on the new list moves to
//! the old list (if that is not empty, so a flow cannot stay "new" by keeping its queue just
//! below one quantum), otherwise it leaves the lists. Each queue runs CoDel (the same
//! [`CodelState`] as the `codel` discipline; its one-MTU rule looks at the whole backlog, as
//! in Linux). When the total exceeds `limit` (packets, or bytes for a byte limit) or
//! `memory_limit` (bytes), packets are dropped from the head of the queue with the largest
//! backlog, up to `drop_batch` packets or half of that queue's bytes. With `ce_threshold`,
//! ECN-capable packets whose sojourn exceeds it are CE-marked at dequeue (a DCTCP-style step
//! on top of CoDel).

use super::codel::{CodelParams, CodelState};
use super::flowkey::bucket;
use super::{
    Backlog, BuildCx, Dequeued, DropReason, Fifo, QEntry, QueueBuild, QueueDisc, QueueEntry,
    Verdict,
};
use crate::params::err;
use crate::params::positive_duration;
use crate::queue::QueueLimit;
use crate::units::{Dur, SimTime};
use crate::wire::MTU_BYTES;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FqCodelParams {
    pub flows: u32,
    /// DRR quantum, bytes.
    pub quantum: u32,
    pub codel: CodelParams,
    /// Cap on the bytes queued in all flows.
    pub memory_limit: u64,
    /// Mark ECT packets whose sojourn exceeds this (None: off).
    pub ce_threshold: Option<Dur>,
    /// Most packets dropped at once from the fattest queue on overflow.
    pub drop_batch: u32,
}

pub const DEF: QueueEntry = QueueEntry {
    name: "fq_codel",
    doc: "FQ-CoDel (RFC 8290): per-flow queues, deficit round robin, CoDel in each",
    keys: &[
        "flows",
        "quantum",
        "target",
        "interval",
        "memory_limit",
        "ecn",
        "ce_threshold",
        "drop_batch",
    ],
    // Linux defaults (tc-fq_codel(8)): limit 10240 packets, 1024 flows, quantum 1514 (one
    // Ethernet MTU), target 5 ms, interval 100 ms, memory_limit 32 MB, ECN on, no CE
    // threshold, drop_batch 64.
    extra: QueueLimit::Packets(10_240),
    parse: |t, _| {
        let flows = t.opt_int("flows", 1, 65_536)?.unwrap_or(1024) as u32;
        let qp = t.key_path("quantum");
        let quantum = t.opt_int("quantum", 0, 1 << 20)?.unwrap_or(1514) as u32;
        if (quantum as u64) < MTU_BYTES {
            return err(&qp, format!("must be at least one MTU ({MTU_BYTES} B; got {quantum})"));
        }
        let target = positive_duration(t, "target", Dur::from_millis(5))?;
        let interval = positive_duration(t, "interval", Dur::from_millis(100))?;
        let mp = t.key_path("memory_limit");
        let memory_limit = t.opt_size("memory_limit")?.unwrap_or(32 << 20);
        if memory_limit < MTU_BYTES {
            return err(
                &mp,
                format!("must hold at least one MTU ({MTU_BYTES} B; got {memory_limit} B)"),
            );
        }
        let ecn = t.opt_bool("ecn")?.unwrap_or(true);
        let cp = t.key_path("ce_threshold");
        let ce_threshold = t.opt_duration("ce_threshold")?;
        if ce_threshold == Some(Dur(0)) {
            return err(&cp, "must be greater than 0 (got \"0s\"); leave it out to turn it off");
        }
        let drop_batch = t.opt_int("drop_batch", 1, 65_536)?.unwrap_or(64) as u32;
        let codel = CodelParams { target, interval, ecn };
        Ok(super::share(FqCodelParams {
            flows,
            quantum,
            codel,
            memory_limit,
            ce_threshold,
            drop_batch,
        }))
    },
};

impl QueueBuild for FqCodelParams {
    fn build(&self, mut cx: BuildCx) -> Box<dyn QueueDisc> {
        Box::new(FqCodel::new(cx.limit, *self, super::flowkey::hash_key(&mut cx.rng)))
    }
}

/// Which round-robin list a flow queue is on (RFC 8290 §4.1): new flows are served first
/// (the sparse-flow boost), old flows after; CAKE keeps the same lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum List {
    None,
    New,
    Old,
}

struct Flow {
    q: Fifo,
    deficit: i64,
    cv: CodelState,
    list: List,
}

pub struct FqCodel {
    flows: Vec<Flow>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    limit: QueueLimit,
    p: FqCodelParams,
    hash_key: u64,
    bytes: u64,
    pkts: u64,
}

impl FqCodel {
    pub fn new(limit: QueueLimit, p: FqCodelParams, hash_key: u64) -> FqCodel {
        let n = p.flows as usize;
        FqCodel {
            flows: (0..n)
                .map(|_| Flow {
                    q: Fifo::unlimited(),
                    deficit: 0,
                    cv: CodelState::new(),
                    list: List::None,
                })
                .collect(),
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            limit,
            p,
            hash_key,
            bytes: 0,
            pkts: 0,
        }
    }

    /// The queue a packet goes to.
    #[inline]
    pub fn classify(&self, e: &QEntry) -> u32 {
        bucket(e.key.hash(self.hash_key), self.p.flows)
    }

    fn over_limit(&self) -> bool {
        let over = match self.limit {
            QueueLimit::Packets(n) => self.pkts > n,
            QueueLimit::Bytes(b) => self.bytes > b,
        };
        over || self.bytes > self.p.memory_limit
    }

    /// Drops from the head of the fattest queue: up to drop_batch packets or half its bytes.
    fn drop_from_fattest(&mut self, dropped: &mut Vec<(QEntry, DropReason)>) {
        let mut fat = 0;
        let mut most = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.q.bytes() > most {
                most = f.q.bytes();
                fat = i;
            }
        }
        let threshold = most / 2;
        let f = &mut self.flows[fat];
        let (mut n, mut freed) = (0u32, 0u64);
        while let Some(e) = f.q.pop() {
            freed += e.bytes as u64;
            n += 1;
            self.bytes -= e.bytes as u64;
            self.pkts -= 1;
            dropped.push((e, DropReason::Overflow));
            if n >= self.p.drop_batch || freed >= threshold {
                break;
            }
        }
    }

    pub fn active_flows(&self) -> usize {
        self.new_flows.len() + self.old_flows.len()
    }
}

impl QueueDisc for FqCodel {
    fn name(&self) -> &'static str {
        "fq_codel"
    }

    fn enqueue(
        &mut self,
        e: QEntry,
        _now: SimTime,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Verdict {
        let i = self.classify(&e);
        let f = &mut self.flows[i as usize];
        f.q.push(e);
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.p.quantum as i64;
            self.new_flows.push_back(i);
        }
        self.bytes += e.bytes as u64;
        self.pkts += 1;
        if !self.over_limit() {
            return Verdict::Queued;
        }
        let from = dropped.len();
        self.drop_from_fattest(dropped);
        // The arriving packet may have been among them (its queue was the fattest and short).
        if let Some(k) = dropped[from..].iter().position(|(d, _)| d.id == e.id) {
            dropped.remove(from + k);
            return Verdict::Dropped(DropReason::Overflow);
        }
        Verdict::Queued
    }

    fn dequeue(
        &mut self,
        now: SimTime,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Option<Dequeued> {
        loop {
            let (i, from_new) = match self.new_flows.front() {
                Some(&i) => (i, true),
                None => (*self.old_flows.front()?, false),
            };
            let f = &mut self.flows[i as usize];
            if f.deficit <= 0 {
                f.deficit += self.p.quantum as i64;
                f.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(i);
                continue;
            }
            let others = self.bytes - f.q.bytes();
            let before = dropped.len();
            let out = f.cv.dequeue(&mut f.q, others, now, &self.p.codel, dropped);
            for (d, _) in &dropped[before..] {
                self.bytes -= d.bytes as u64;
                self.pkts -= 1;
            }
            let Some(mut out) = out else {
                // An empty queue: a new one moves to the old list (unless that is empty), an
                // old one leaves the lists.
                if from_new {
                    self.new_flows.pop_front();
                    if !self.old_flows.is_empty() {
                        f.list = List::Old;
                        self.old_flows.push_back(i);
                    } else {
                        f.list = List::None;
                    }
                } else {
                    self.old_flows.pop_front();
                    f.list = List::None;
                }
                continue;
            };
            let b = out.entry.bytes;
            f.deficit -= b as i64;
            self.bytes -= b as u64;
            self.pkts -= 1;
            if let Some(ce) = self.p.ce_threshold {
                if out.entry.ect() && now.since(out.entry.enqueued_at) > ce {
                    out.mark = true;
                }
            }
            return Some(out);
        }
    }

    fn backlog(&self) -> Backlog {
        Backlog { bytes: self.bytes, pkts: self.pkts }
    }

    fn capacity_bytes(&self) -> u64 {
        match self.limit {
            QueueLimit::Packets(n) => (n * MTU_BYTES).min(self.p.memory_limit),
            QueueLimit::Bytes(b) => b.min(self.p.memory_limit),
        }
    }

    /// The number of queues with packets (or credit) on the new and old lists.
    fn internal_state(&self) -> f64 {
        self.active_flows() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::super::flowkey::FlowKey;
    use super::super::test_util::entry;
    use super::*;
    use crate::wire::Ecn;

    const MS: u64 = 1_000_000;

    fn params() -> FqCodelParams {
        FqCodelParams {
            flows: 1024,
            quantum: 1514,
            codel: CodelParams {
                target: Dur::from_millis(5),
                interval: Dur::from_millis(100),
                ecn: true,
            },
            memory_limit: 32 << 20,
            ce_threshold: None,
            drop_batch: 64,
        }
    }

    fn pkt(i: u32, flow: u16, bytes: u32, at: u64) -> QEntry {
        let mut e = entry(i, bytes, SimTime(at), Ecn::NotEct);
        e.key = FlowKey { src: 1, dst: 2, sport: flow, dport: 80, proto: 6 };
        e
    }

    /// A queue where flows 0..n land in distinct buckets.
    fn fq(p: FqCodelParams, limit: QueueLimit, n: u16) -> FqCodel {
        for key in 0.. {
            let q = FqCodel::new(limit, p, key);
            let mut b: Vec<u32> = (0..n).map(|f| q.classify(&pkt(0, f, 1, 0))).collect();
            b.sort();
            b.dedup();
            if b.len() == n as usize {
                return q;
            }
        }
        unreachable!()
    }

    #[test]
    fn a_sparse_flow_overtakes_a_backlogged_one() {
        let mut q = fq(params(), QueueLimit::Packets(10_000), 2);
        let mut d = Vec::new();
        for i in 0..100 {
            q.enqueue(pkt(i, 0, 1500, 0), SimTime(0), &mut d);
        }
        // Flow 0 is served until its credit is spent; then flow 1's first packet arrives and
        // goes first, although flow 0 has 98 packets waiting.
        assert_eq!(q.dequeue(SimTime(0), &mut d).unwrap().entry.id.0, 0);
        assert_eq!(q.dequeue(SimTime(0), &mut d).unwrap().entry.id.0, 1);
        q.enqueue(pkt(1000, 1, 100, 1), SimTime(1), &mut d);
        assert_eq!(q.dequeue(SimTime(1), &mut d).unwrap().entry.id.0, 1000);
        assert_eq!(q.backlog(), Backlog { bytes: 98 * 1500, pkts: 98 });
        assert!(d.is_empty());
    }

    #[test]
    fn drr_shares_bytes_not_packets() {
        let mut q = fq(params(), QueueLimit::Packets(10_000), 2);
        let mut d = Vec::new();
        for i in 0..2000 {
            q.enqueue(pkt(i, 0, 1500, 0), SimTime(0), &mut d);
            q.enqueue(pkt(10_000 + i, 1, 500, 0), SimTime(0), &mut d);
        }
        let (mut b0, mut b1) = (0u64, 0u64);
        for _ in 0..2000 {
            let e = q.dequeue(SimTime(0), &mut d).unwrap().entry;
            if e.id.0 < 10_000 {
                b0 += e.bytes as u64;
            } else {
                b1 += e.bytes as u64;
            }
        }
        // Equal bytes within one quantum per round... over 1.5 MB: within 1 %.
        let r = b0 as f64 / b1 as f64;
        assert!((r - 1.0).abs() < 0.01, "{b0} vs {b1}");
    }

    #[test]
    fn overflow_drops_a_batch_from_the_fattest_queue() {
        let mut q = fq(params(), QueueLimit::Packets(100), 2);
        let mut d = Vec::new();
        for i in 0..90 {
            assert_eq!(q.enqueue(pkt(i, 0, 1500, 0), SimTime(0), &mut d), Verdict::Queued);
        }
        for i in 0..10 {
            q.enqueue(pkt(100 + i, 1, 1500, 0), SimTime(0), &mut d);
        }
        assert!(d.is_empty());
        // The 101st packet (flow 1) overflows: 45 packets (half of flow 0's bytes) leave flow 0's head.
        assert_eq!(q.enqueue(pkt(200, 1, 1500, 0), SimTime(0), &mut d), Verdict::Queued);
        assert_eq!(d.len(), 45);
        assert_eq!(d[0].0.id.0, 0);
        assert!(d.iter().all(|(e, r)| e.id.0 < 90 && *r == DropReason::Overflow));
        assert_eq!(q.backlog().pkts, 56);
        // drop_batch caps the batch.
        let mut q = fq(FqCodelParams { drop_batch: 4, ..params() }, QueueLimit::Packets(100), 1);
        let mut d = Vec::new();
        for i in 0..101 {
            q.enqueue(pkt(i, 0, 1500, 0), SimTime(0), &mut d);
        }
        assert_eq!(d.len(), 4);
        // memory_limit counts bytes.
        let mut q =
            fq(FqCodelParams { memory_limit: 4500, ..params() }, QueueLimit::Packets(100), 1);
        let mut d = Vec::new();
        for i in 0..3 {
            q.enqueue(pkt(i, 0, 1500, 0), SimTime(0), &mut d);
        }
        assert!(d.is_empty());
        q.enqueue(pkt(3, 0, 1500, 0), SimTime(0), &mut d);
        assert_eq!(d.len(), 2);
        assert_eq!(q.backlog().bytes, 3000);
    }

    #[test]
    fn the_only_packet_of_the_fattest_queue_can_be_the_arrival() {
        let mut q = fq(params(), QueueLimit::Packets(1), 1);
        let mut d = Vec::new();
        assert_eq!(q.enqueue(pkt(0, 0, 1500, 0), SimTime(0), &mut d), Verdict::Queued);
        // Both packets are in flow 0 (3000 B, threshold 1500): the head goes.
        assert_eq!(q.enqueue(pkt(1, 0, 1500, 0), SimTime(0), &mut d), Verdict::Queued);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].0.id.0, 0);
    }

    #[test]
    fn codel_runs_per_queue_and_marks_ect() {
        let mut q = fq(params(), QueueLimit::Packets(10_000), 2);
        let mut d = Vec::new();
        for i in 0..200 {
            let mut e = pkt(i, 0, 1500, 0);
            e.ecn = Ecn::Ect0;
            q.enqueue(e, SimTime(0), &mut d);
        }
        // Sojourn above target for an interval: the second dequeue after 100 ms is marked.
        assert!(!q.dequeue(SimTime(10 * MS), &mut d).unwrap().mark);
        assert!(q.dequeue(SimTime(110 * MS), &mut d).unwrap().mark);
        assert!(d.is_empty());
        // Flow 1 has its own CoDel state: not dropping.
        q.enqueue(pkt(500, 1, 1500, 110 * MS), SimTime(110 * MS), &mut d);
        let out = q.dequeue(SimTime(111 * MS), &mut d).unwrap();
        assert_eq!((out.entry.id.0, out.mark), (500, false));
    }

    #[test]
    fn ce_threshold_marks_ect_above_it() {
        let mut q = fq(
            FqCodelParams { ce_threshold: Some(Dur::from_millis(1)), ..params() },
            QueueLimit::Packets(100),
            1,
        );
        let mut d = Vec::new();
        let mut e = pkt(0, 0, 1500, 0);
        e.ecn = Ecn::Ect1;
        q.enqueue(e, SimTime(0), &mut d);
        q.enqueue(pkt(1, 0, 1500, 0), SimTime(0), &mut d);
        q.enqueue(e, SimTime(0), &mut d);
        assert!(q.dequeue(SimTime(2 * MS), &mut d).unwrap().mark);
        assert!(!q.dequeue(SimTime(2 * MS), &mut d).unwrap().mark, "not ECN-capable");
        assert!(!q.dequeue(SimTime(MS), &mut d).unwrap().mark, "sojourn 1 ms is not above 1 ms");
    }

    #[test]
    fn an_emptied_new_queue_goes_to_the_old_list_only_if_it_is_not_empty() {
        let mut q = fq(params(), QueueLimit::Packets(100), 2);
        let mut d = Vec::new();
        q.enqueue(pkt(0, 0, 100, 0), SimTime(0), &mut d);
        assert!(q.dequeue(SimTime(0), &mut d).is_some());
        assert!(q.dequeue(SimTime(0), &mut d).is_none());
        assert_eq!(q.active_flows(), 0);
        // Flow 0 is old (backlogged past its quantum), flow 1 new: when flow 1 empties it
        // joins the old list behind flow 0.
        for i in 0..5 {
            q.enqueue(pkt(i, 0, 1500, 0), SimTime(0), &mut d);
        }
        q.dequeue(SimTime(0), &mut d);
        q.dequeue(SimTime(0), &mut d); // credit spent: flow 0 moves to the old list
        q.enqueue(pkt(10, 1, 100, 0), SimTime(0), &mut d);
        assert_eq!(q.dequeue(SimTime(0), &mut d).unwrap().entry.id.0, 10);
        assert_eq!(q.new_flows.len() + q.old_flows.len(), 2);
        // The next dequeue finds flow 1 empty: it moves behind flow 0, which is served.
        assert_eq!(q.dequeue(SimTime(0), &mut d).unwrap().entry.id.0, 2);
        assert_eq!(q.flows[q.classify(&pkt(0, 1, 1, 0)) as usize].list, List::Old);
    }
}
