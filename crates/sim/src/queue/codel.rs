//! CoDel (RFC 8289; Nichols & Jacobson 2012), all logic at dequeue.
//!
//! A packet "should be dropped" when its sojourn time has stayed at or above `target` for at
//! least `interval` (and more than one MTU remains queued). On the first such packet CoDel
//! drops it, enters the dropping state and schedules the next drop at
//! `now + interval/√count`; while dropping, each time `now ≥ drop_next` it drops one more
//! packet, increments count and moves drop_next by `interval/√count` from the previous
//! drop_next. It leaves the dropping state as soon as a head packet's sojourn falls below
//! target. Re-entry (the Linux rule RFC 8289 adopts): if the state is re-entered less than
//! 16·interval after the last scheduled drop and more than one drop happened in between
//! (delta = count − lastcount > 1), count resumes at delta instead of 1.
//! With ECN on, an ECN-capable packet is marked CE instead of dropped (and, as in Linux, a
//! mark ends the drop loop for this dequeue); the world sets the mark via
//! [`QueueDisc::last_dequeue_marked`].

use super::{capacity_bytes, overflows, Backlog, DropReason, QEntry, QueueDisc, Verdict};
use crate::config::{CodelParams, QueueLimit, MTU_BYTES};
use crate::units::{Dur, SimTime};
use std::collections::VecDeque;

pub struct Codel {
    q: VecDeque<QEntry>,
    limit: QueueLimit,
    bytes: u64,
    p: CodelParams,
    /// When the sojourn time went (and stayed) above target, plus interval; None when below.
    first_above_time: Option<SimTime>,
    drop_next: SimTime,
    count: u32,
    lastcount: u32,
    dropping: bool,
    /// The packet the last dequeue returned must be CE-marked.
    marked: bool,
    /// Sojourn time of the last packet dequeued.
    ldelay: Dur,
}

impl Codel {
    pub fn new(limit: QueueLimit, p: CodelParams) -> Codel {
        Codel {
            q: VecDeque::with_capacity(256),
            limit,
            bytes: 0,
            p,
            first_above_time: None,
            drop_next: SimTime::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
            marked: false,
            ldelay: Dur::ZERO,
        }
    }

    /// `t + interval/√count` (the float square root replaces Linux's Newton step).
    pub fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        let step = self.p.interval.0 as f64 / (count.max(1) as f64).sqrt();
        SimTime(t.0 + step.round() as u64)
    }

    pub fn dropping(&self) -> bool {
        self.dropping
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// Pops the head and decides whether it is droppable (RFC 8289's dodequeue).
    fn do_dequeue(&mut self, now: SimTime) -> Option<(QEntry, bool)> {
        let Some(e) = self.q.pop_front() else {
            self.first_above_time = None;
            return None;
        };
        self.bytes -= e.bytes as u64;
        let sojourn = now.since(e.enqueued_at);
        self.ldelay = sojourn;
        let ok_to_drop = if sojourn < self.p.target || self.bytes <= MTU_BYTES {
            self.first_above_time = None;
            false
        } else {
            match self.first_above_time {
                None => {
                    self.first_above_time = Some(now + self.p.interval);
                    false
                }
                Some(t) => now >= t,
            }
        };
        Some((e, ok_to_drop))
    }

    fn can_mark(&self, e: &QEntry) -> bool {
        self.p.ecn && e.ecn_capable
    }
}

impl QueueDisc for Codel {
    fn name(&self) -> &'static str {
        "codel"
    }

    fn enqueue(&mut self, e: QEntry, _now: SimTime) -> Verdict {
        let full = overflows(self.limit, self.bytes, self.q.len(), &e);
        if full {
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.bytes += e.bytes as u64;
        self.q.push_back(e);
        Verdict::Queued
    }

    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<(QEntry, DropReason)>) -> Option<QEntry> {
        self.marked = false;
        let Some((mut e, mut ok_to_drop)) = self.do_dequeue(now) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if self.can_mark(&e) {
                    self.marked = true;
                    self.drop_next = self.control_law(self.drop_next, self.count);
                    return Some(e);
                }
                dropped.push((e, DropReason::AqmDequeue));
                match self.do_dequeue(now) {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some((next, ok)) => {
                        e = next;
                        ok_to_drop = ok;
                    }
                }
                if ok_to_drop {
                    self.drop_next = self.control_law(self.drop_next, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            let mut out = Some(e);
            if self.can_mark(&e) {
                self.marked = true;
            } else {
                dropped.push((e, DropReason::AqmDequeue));
                out = self.do_dequeue(now).map(|(next, _)| next);
            }
            self.dropping = true;
            // Re-entry: resume near the previous drop rate if the last dropping episode
            // ended recently (Linux rule, adopted by RFC 8289).
            let delta = self.count.saturating_sub(self.lastcount);
            let since_drop_next = now.0 as i128 - self.drop_next.0 as i128;
            self.count = if delta > 1 && since_drop_next < 16 * self.p.interval.0 as i128 { delta } else { 1 };
            self.lastcount = self.count;
            self.drop_next = self.control_law(now, self.count);
            return out;
        }
        Some(e)
    }

    fn backlog(&self) -> Backlog {
        Backlog { bytes: self.bytes, pkts: self.q.len() as u64 }
    }

    fn capacity_bytes(&self) -> u64 {
        capacity_bytes(self.limit)
    }

    fn last_dequeue_marked(&self) -> bool {
        self.marked
    }

    /// The drop count while in the dropping state, 0 outside it.
    fn internal_state(&self) -> f64 {
        if self.dropping {
            self.count as f64
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PacketId;

    const MS: u64 = 1_000_000;

    fn codel(ecn: bool) -> Codel {
        Codel::new(
            QueueLimit::Packets(10_000),
            CodelParams { target: Dur::from_millis(5), interval: Dur::from_millis(100), ecn },
        )
    }

    /// Fills the queue with `n` packets of 1500 B enqueued at `at`.
    fn fill(c: &mut Codel, n: u32, at: SimTime, ecn: bool) {
        for i in 0..n {
            let e = QEntry { id: PacketId(i), bytes: 1500, enqueued_at: at, ecn_capable: ecn };
            assert_eq!(c.enqueue(e, at), Verdict::Queued);
        }
    }

    #[test]
    fn control_law_is_interval_over_sqrt_count() {
        let c = codel(false);
        assert_eq!(c.control_law(SimTime(0), 1), SimTime(100 * MS));
        assert_eq!(c.control_law(SimTime(0), 4), SimTime(50 * MS));
        assert_eq!(c.control_law(SimTime(7), 2), SimTime(7 + 70_710_678));
        assert_eq!(c.control_law(SimTime(0), 100), SimTime(10 * MS));
    }

    #[test]
    fn drops_after_an_interval_above_target_then_by_the_control_law() {
        let mut c = codel(false);
        let mut d = Vec::new();
        fill(&mut c, 1000, SimTime(0), false);
        // Sojourn 10 ms > target: the first such packet arms first_above_time = now + 100 ms.
        let t0 = SimTime(10 * MS);
        assert!(c.dequeue(t0, &mut d).is_some());
        assert!(d.is_empty() && !c.dropping());
        // Still above target but before first_above_time: no drop.
        assert!(c.dequeue(SimTime(109 * MS), &mut d).is_some());
        assert!(d.is_empty());
        // At first_above_time: drop the head, enter dropping with count 1, next drop 100 ms on.
        let t1 = SimTime(110 * MS);
        c.dequeue(t1, &mut d).unwrap();
        assert_eq!(d.len(), 1);
        assert!(c.dropping());
        assert_eq!(c.count(), 1);
        assert_eq!(c.drop_next, SimTime(210 * MS));
        // Before drop_next: no drop.
        c.dequeue(SimTime(209 * MS), &mut d).unwrap();
        assert_eq!(d.len(), 1);
        // At drop_next: second drop, count 2, next = 210 ms + 100/√2 ms.
        c.dequeue(SimTime(210 * MS), &mut d).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(c.count(), 2);
        assert_eq!(c.drop_next, SimTime(210 * MS + 70_710_678));
        // Third at that time: count 3, spacing 100/√3 ms.
        let t3 = c.drop_next;
        c.dequeue(t3, &mut d).unwrap();
        assert_eq!((d.len(), c.count()), (3, 3));
        assert_eq!(c.drop_next, SimTime(t3.0 + 57_735_027));
        assert!(d.iter().all(|(_, r)| *r == DropReason::AqmDequeue));
    }

    #[test]
    fn a_late_dequeue_drops_several_packets_in_one_go() {
        let mut c = codel(false);
        let mut d = Vec::new();
        fill(&mut c, 1000, SimTime(0), false);
        c.dequeue(SimTime(10 * MS), &mut d);
        c.dequeue(SimTime(110 * MS), &mut d);
        assert_eq!(d.len(), 1);
        // Far past drop_next: drops until drop_next passes now (drop_next moves by 100/√n).
        c.dequeue(SimTime(400 * MS), &mut d).unwrap();
        // drop_next runs 210 ms (entry, 110 + 100/√1), then + 100/√2, + 100/√3, + 100/√4 →
        // 388.4 ms, then + 100/√5 → 433.1 ms > 400 ms: drops at count 2, 3, 4 and 5.
        assert_eq!(d.len(), 5);
        assert_eq!(c.count(), 5);
    }

    #[test]
    fn leaves_dropping_when_sojourn_falls_below_target() {
        let mut c = codel(false);
        let mut d = Vec::new();
        fill(&mut c, 100, SimTime(0), false);
        c.dequeue(SimTime(10 * MS), &mut d);
        c.dequeue(SimTime(110 * MS), &mut d);
        assert!(c.dropping());
        // Drain the old packets and queue fresh ones: low sojourn ends the state.
        c.q.clear();
        c.bytes = 0;
        fill(&mut c, 10, SimTime(300 * MS), false);
        c.dequeue(SimTime(301 * MS), &mut d).unwrap();
        assert!(!c.dropping());
        assert_eq!(c.internal_state(), 0.0);
    }

    #[test]
    fn one_mtu_of_backlog_is_never_dropped() {
        let mut c = codel(false);
        let mut d = Vec::new();
        fill(&mut c, 2, SimTime(0), false);
        c.dequeue(SimTime(500 * MS), &mut d).unwrap();
        c.dequeue(SimTime(900 * MS), &mut d).unwrap();
        assert!(d.is_empty() && !c.dropping());
    }

    #[test]
    fn re_entry_resumes_the_previous_count() {
        let mut c = codel(false);
        let mut d = Vec::new();
        // A dropping episode that reached count 5 (lastcount 1 at entry)...
        c.dropping = false;
        c.count = 5;
        c.lastcount = 1;
        c.drop_next = SimTime(1000 * MS);
        // ...then the queue goes above target again within 16 intervals of drop_next.
        fill(&mut c, 100, SimTime(1100 * MS), false);
        c.dequeue(SimTime(1110 * MS), &mut d);
        c.dequeue(SimTime(1210 * MS), &mut d);
        assert!(c.dropping());
        // delta = 5 − 1 = 4 > 1 → count resumes at 4, drop_next = now + 100/√4 ms.
        assert_eq!(c.count(), 4);
        assert_eq!(c.lastcount, 4);
        assert_eq!(c.drop_next, SimTime(1210 * MS + 50 * MS));

        // Same, but 16 intervals or more after drop_next: count restarts at 1.
        let mut c = codel(false);
        c.count = 5;
        c.lastcount = 1;
        c.drop_next = SimTime(1000 * MS);
        fill(&mut c, 100, SimTime(2600 * MS), false);
        c.dequeue(SimTime(2610 * MS), &mut d);
        c.dequeue(SimTime(2710 * MS), &mut d);
        assert!(c.dropping());
        assert_eq!(c.count(), 1);
        assert_eq!(c.drop_next, SimTime(2810 * MS));

        // delta ≤ 1 also restarts at 1.
        let mut c = codel(false);
        c.count = 2;
        c.lastcount = 1;
        c.drop_next = SimTime(1000 * MS);
        fill(&mut c, 100, SimTime(1100 * MS), false);
        c.dequeue(SimTime(1110 * MS), &mut d);
        c.dequeue(SimTime(1210 * MS), &mut d);
        assert_eq!(c.count(), 1);
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        let mut c = codel(true);
        let mut d = Vec::new();
        fill(&mut c, 100, SimTime(0), true);
        c.dequeue(SimTime(10 * MS), &mut d);
        assert!(!c.last_dequeue_marked());
        let e = c.dequeue(SimTime(110 * MS), &mut d).unwrap();
        assert!(d.is_empty());
        assert!(c.last_dequeue_marked());
        assert_eq!(e.id, PacketId(1));
        assert!(c.dropping());
        c.dequeue(SimTime(111 * MS), &mut d).unwrap();
        assert!(!c.last_dequeue_marked());
        // At drop_next: marked again, count 2.
        c.dequeue(SimTime(210 * MS), &mut d).unwrap();
        assert!(c.last_dequeue_marked() && d.is_empty());
        assert_eq!(c.count(), 2);
        // Packets that are not ECN-capable are still dropped.
        let mut c = codel(true);
        fill(&mut c, 100, SimTime(0), false);
        c.dequeue(SimTime(10 * MS), &mut d);
        c.dequeue(SimTime(110 * MS), &mut d);
        assert_eq!(d.len(), 1);
        assert!(!c.last_dequeue_marked());
    }
}
