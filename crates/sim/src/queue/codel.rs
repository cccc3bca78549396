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
//! mark ends the drop loop for this dequeue); the dequeue result carries the mark.
//!
//! The control law lives in [`CodelState`], which works on any [`Fifo`]: the `codel` queue
//! has one, FQ-CoDel one per flow queue.

use super::{
    Backlog, BuildCx, Dequeued, DropReason, Fifo, QEntry, QueueBuild, QueueDisc, QueueEntry,
    Verdict,
};
use crate::params::positive_duration;
use crate::queue::QueueLimit;
use crate::units::{Dur, SimTime};
use crate::wire::MTU_BYTES;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelParams {
    pub target: Dur,
    pub interval: Dur,
    pub ecn: bool,
}

pub const DEF: QueueEntry = QueueEntry {
    name: "codel",
    doc: "CoDel (RFC 8289): drops at dequeue while the sojourn time stays above target",
    keys: &["target", "interval", "ecn"],
    extra: super::DEFAULT_LIMIT,
    // RFC 8289 / Linux defaults: target 5 ms, interval 100 ms, ECN off.
    parse: |t, _| {
        let target = positive_duration(t, "target", Dur::from_millis(5))?;
        let interval = positive_duration(t, "interval", Dur::from_millis(100))?;
        let ecn = t.opt_bool("ecn")?.unwrap_or(false);
        Ok(super::share(CodelParams { target, interval, ecn }))
    },
};

impl QueueBuild for CodelParams {
    fn build(&self, cx: BuildCx) -> Box<dyn QueueDisc> {
        Box::new(Codel::new(cx.limit, *self))
    }
}

/// CoDel's per-queue control state (RFC 8289 §5).
#[derive(Debug, Clone, Default)]
pub struct CodelState {
    /// When the sojourn time went (and stayed) above target, plus interval; None when below.
    first_above_time: Option<SimTime>,
    pub(crate) drop_next: SimTime,
    count: u32,
    lastcount: u32,
    dropping: bool,
    /// Sojourn time of the last packet dequeued.
    ldelay: Dur,
}

/// `t + interval/√count` (the float square root replaces Linux's Newton step).
pub fn control_law(interval: Dur, t: SimTime, count: u32) -> SimTime {
    let step = interval.0 as f64 / (count.max(1) as f64).sqrt();
    SimTime(t.0 + step.round() as u64)
}

impl CodelState {
    pub fn new() -> CodelState {
        CodelState::default()
    }

    pub fn dropping(&self) -> bool {
        self.dropping
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// The sojourn time of the last packet this state saw leave.
    pub fn ldelay(&self) -> Dur {
        self.ldelay
    }

    /// Pops the head and decides whether it is droppable (RFC 8289's dodequeue). `others`:
    /// bytes queued elsewhere that count for the one-MTU rule (FQ-CoDel's other queues).
    fn do_dequeue(
        &mut self,
        q: &mut Fifo,
        others: u64,
        now: SimTime,
        p: &CodelParams,
    ) -> Option<(QEntry, bool)> {
        let Some(e) = q.pop() else {
            self.first_above_time = None;
            return None;
        };
        let sojourn = now.since(e.enqueued_at);
        self.ldelay = sojourn;
        let ok_to_drop = if sojourn < p.target || q.bytes() + others <= MTU_BYTES {
            self.first_above_time = None;
            false
        } else {
            match self.first_above_time {
                None => {
                    self.first_above_time = Some(now + p.interval);
                    false
                }
                Some(t) => now >= t,
            }
        };
        Some((e, ok_to_drop))
    }

    /// CoDel's dequeue from `q`: the packet to send (maybe to be CE-marked), the ones dropped
    /// on the way appended to `dropped`.
    pub fn dequeue(
        &mut self,
        q: &mut Fifo,
        others: u64,
        now: SimTime,
        p: &CodelParams,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Option<Dequeued> {
        let can_mark = |e: &QEntry| p.ecn && e.ect();
        let Some((mut e, mut ok_to_drop)) = self.do_dequeue(q, others, now, p) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if can_mark(&e) {
                    self.drop_next = control_law(p.interval, self.drop_next, self.count);
                    return Some(Dequeued { entry: e, mark: true });
                }
                dropped.push((e, DropReason::AqmDequeue));
                match self.do_dequeue(q, others, now, p) {
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
                    self.drop_next = control_law(p.interval, self.drop_next, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            let out = if can_mark(&e) {
                Some(Dequeued { entry: e, mark: true })
            } else {
                dropped.push((e, DropReason::AqmDequeue));
                self.do_dequeue(q, others, now, p).map(|(next, _)| Dequeued::plain(next))
            };
            self.dropping = true;
            // Re-entry: resume near the previous drop rate if the last dropping episode
            // ended recently (Linux rule, adopted by RFC 8289).
            let delta = self.count.saturating_sub(self.lastcount);
            let since_drop_next = now.0 as i128 - self.drop_next.0 as i128;
            self.count =
                if delta > 1 && since_drop_next < 16 * p.interval.0 as i128 { delta } else { 1 };
            self.lastcount = self.count;
            self.drop_next = control_law(p.interval, now, self.count);
            return out;
        }
        Some(Dequeued::plain(e))
    }

    /// The drop count while in the dropping state, 0 outside it.
    pub fn internal_state(&self) -> f64 {
        if self.dropping {
            self.count as f64
        } else {
            0.0
        }
    }
}

pub struct Codel {
    q: Fifo,
    p: CodelParams,
    st: CodelState,
}

impl Codel {
    pub fn new(limit: QueueLimit, p: CodelParams) -> Codel {
        Codel { q: Fifo::new(limit), p, st: CodelState::new() }
    }

    pub fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        control_law(self.p.interval, t, count)
    }

    pub fn dropping(&self) -> bool {
        self.st.dropping
    }

    pub fn count(&self) -> u32 {
        self.st.count
    }
}

impl QueueDisc for Codel {
    fn name(&self) -> &'static str {
        "codel"
    }

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

    fn dequeue(
        &mut self,
        now: SimTime,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Option<Dequeued> {
        self.st.dequeue(&mut self.q, 0, now, &self.p, dropped)
    }

    fn backlog(&self) -> Backlog {
        self.q.backlog()
    }

    fn capacity_bytes(&self) -> u64 {
        self.q.capacity_bytes()
    }

    /// The drop count while in the dropping state, 0 outside it.
    fn internal_state(&self) -> f64 {
        self.st.internal_state()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{ect, entry};
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
            let e = entry(i, 1500, at, ect(ecn));
            assert_eq!(c.enqueue(e, at, &mut Vec::new()), Verdict::Queued);
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
        assert_eq!(c.st.drop_next, SimTime(210 * MS));
        // Before drop_next: no drop.
        c.dequeue(SimTime(209 * MS), &mut d).unwrap();
        assert_eq!(d.len(), 1);
        // At drop_next: second drop, count 2, next = 210 ms + 100/√2 ms.
        c.dequeue(SimTime(210 * MS), &mut d).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(c.count(), 2);
        assert_eq!(c.st.drop_next, SimTime(210 * MS + 70_710_678));
        // Third at that time: count 3, spacing 100/√3 ms.
        let t3 = c.st.drop_next;
        c.dequeue(t3, &mut d).unwrap();
        assert_eq!((d.len(), c.count()), (3, 3));
        assert_eq!(c.st.drop_next, SimTime(t3.0 + 57_735_027));
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
        c.st.dropping = false;
        c.st.count = 5;
        c.st.lastcount = 1;
        c.st.drop_next = SimTime(1000 * MS);
        // ...then the queue goes above target again within 16 intervals of drop_next.
        fill(&mut c, 100, SimTime(1100 * MS), false);
        c.dequeue(SimTime(1110 * MS), &mut d);
        c.dequeue(SimTime(1210 * MS), &mut d);
        assert!(c.dropping());
        // delta = 5 − 1 = 4 > 1 → count resumes at 4, drop_next = now + 100/√4 ms.
        assert_eq!(c.count(), 4);
        assert_eq!(c.st.lastcount, 4);
        assert_eq!(c.st.drop_next, SimTime(1210 * MS + 50 * MS));

        // Same, but 16 intervals or more after drop_next: count restarts at 1.
        let mut c = codel(false);
        c.st.count = 5;
        c.st.lastcount = 1;
        c.st.drop_next = SimTime(1000 * MS);
        fill(&mut c, 100, SimTime(2600 * MS), false);
        c.dequeue(SimTime(2610 * MS), &mut d);
        c.dequeue(SimTime(2710 * MS), &mut d);
        assert!(c.dropping());
        assert_eq!(c.count(), 1);
        assert_eq!(c.st.drop_next, SimTime(2810 * MS));

        // delta ≤ 1 also restarts at 1.
        let mut c = codel(false);
        c.st.count = 2;
        c.st.lastcount = 1;
        c.st.drop_next = SimTime(1000 * MS);
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
        assert!(!c.dequeue(SimTime(10 * MS), &mut d).unwrap().mark);
        let out = c.dequeue(SimTime(110 * MS), &mut d).unwrap();
        assert!(d.is_empty());
        assert!(out.mark);
        assert_eq!(out.entry.id, PacketId(1));
        assert!(c.dropping());
        assert!(!c.dequeue(SimTime(111 * MS), &mut d).unwrap().mark);
        // At drop_next: marked again, count 2.
        assert!(c.dequeue(SimTime(210 * MS), &mut d).unwrap().mark && d.is_empty());
        assert_eq!(c.count(), 2);
        // Packets that are not ECN-capable are still dropped.
        let mut c = codel(true);
        fill(&mut c, 100, SimTime(0), false);
        c.dequeue(SimTime(10 * MS), &mut d);
        let out = c.dequeue(SimTime(110 * MS), &mut d).unwrap();
        assert_eq!(d.len(), 1);
        assert!(!out.mark);
    }
}
