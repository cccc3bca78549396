//! The sender's record of outstanding segments: what was sent, SACKed, presumed lost and
//! retransmitted. Loss marking follows RFC 6675 IsLost(); the byte counters give Linux's
//! in-flight estimate (`pipe` = outstanding − SACKed − lost + retransmitted).

use super::rate::TxStamp;
use crate::units::{Dur, SimTime};
use std::collections::VecDeque;

pub const SACKED: u8 = 1;
pub const LOST: u8 = 2;
/// A retransmission of this segment is in flight.
pub const RETRANS: u8 = 4;
/// The segment was retransmitted at least once (Karn: no RTT sample from its send time).
pub const EVER_RETRANS: u8 = 8;
/// The segment holds the end of a write and carried PSH (`tcp.psh`): so do its retransmissions.
pub const PUSH: u8 = 16;

/// A segment sent and not yet acknowledged, 48 bytes: its length rather than its end, and its
/// transmission's delivery state ([`TxStamp`]) kept flat, so that the stamp's padding and the
/// flags share a word (at 10,000 flows the scoreboards' rings hold ~15 MB of these at 64).
#[derive(Debug, Clone, Copy)]
pub struct Seg {
    pub start: u64,
    pub sent_at: SimTime,
    delivered: u64,
    delivered_at: SimTime,
    first_tx_at: SimTime,
    len: u32,
    pub flags: u8,
    app_limited: bool,
}

impl Seg {
    /// The segment [start, end) sent at `sent_at` with the delivery state `stamp`.
    #[inline]
    pub fn new(start: u64, end: u64, sent_at: SimTime, flags: u8, stamp: TxStamp) -> Seg {
        debug_assert!(end >= start && end - start <= u32::MAX as u64, "a segment's length");
        Seg {
            start,
            sent_at,
            delivered: stamp.delivered,
            delivered_at: stamp.delivered_at,
            first_tx_at: stamp.first_tx_at,
            len: (end - start) as u32,
            flags,
            app_limited: stamp.app_limited,
        }
    }
    /// One past the segment's last sequence number.
    #[inline]
    pub fn end(&self) -> u64 {
        self.start + self.len as u64
    }
    #[inline]
    pub fn len(&self) -> u64 {
        self.len as u64
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The delivery state stamped at its last (re)transmission.
    #[inline]
    pub fn stamp(&self) -> TxStamp {
        TxStamp {
            delivered: self.delivered,
            delivered_at: self.delivered_at,
            first_tx_at: self.first_tx_at,
            app_limited: self.app_limited,
        }
    }
    #[inline]
    pub fn set_stamp(&mut self, t: TxStamp) {
        self.delivered = t.delivered;
        self.delivered_at = t.delivered_at;
        self.first_tx_at = t.first_tx_at;
        self.app_limited = t.app_limited;
    }
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Laid out in declaration order (`repr(C)`): the segments' deque and the counters the
/// in-flight estimate and the retransmission scan read come first (one cache line).
#[derive(Debug, Default)]
#[repr(C)]
pub struct Scoreboard {
    segs: VecDeque<Seg>,
    pub sacked_bytes: u64,
    pub lost_bytes: u64,
    pub retrans_bytes: u64,
    /// Retransmission scan starts here.
    rtx_hint: u64,
    /// End of the highest SACKed segment (0: none).
    pub high_sacked: u64,
    /// Every un-SACKed segment ending at or below this is marked lost.
    lost_upto: u64,
    /// Retransmissions in flight, in send order: (segment start, send time).
    rtx_queue: VecDeque<(u64, SimTime)>,
    /// Latest send time of a never-retransmitted segment that has been delivered (RACK's
    /// most recently delivered transmission, RFC 8985).
    rack_time: SimTime,
    /// Retransmissions found lost (and so eligible again).
    pub lost_retransmissions: u64,
    /// SACKed bytes of segments below `lost_upto`.
    sacked_below: u64,
    /// The previous ACK's SACK blocks, and the current ACK's as they are applied.
    sack_cache: [(u64, u64); 4],
    sack_cache_len: usize,
    sack_next: [(u64, u64); 4],
    sack_next_len: usize,
}

impl Scoreboard {
    pub fn new() -> Self {
        Scoreboard::default()
    }

    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    pub fn len(&self) -> usize {
        self.segs.len()
    }

    pub fn front(&self) -> Option<&Seg> {
        self.segs.front()
    }

    /// Starts loading what an ACK and the sends after it touch first: the two oldest
    /// segments (a delayed ACK covers two; a segment is one line) and the slot after the
    /// newest, where the next segment sent goes (if the ring has room; a hint either way).
    #[inline]
    pub fn prefetch_ends(&self) {
        let next_line =
            |s: &Seg| crate::engine::prefetch_addr((s as *const Seg).wrapping_add(1) as *const u8);
        if let Some(s) = self.segs.front() {
            crate::engine::prefetch(s, 1);
            next_line(s);
        }
        if let Some(s) = self.segs.back() {
            next_line(s);
        }
    }

    pub fn get(&self, i: usize) -> &Seg {
        &self.segs[i]
    }

    /// Records a first transmission (segments are appended in sequence order).
    #[inline]
    pub fn push(&mut self, seg: Seg) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() == seg.start));
        self.segs.push_back(seg);
    }

    /// Index of the segment containing `seq` (or the first one after it). Segments are
    /// contiguous and nearly all one MSS long, so the offset from the first one divided by
    /// its length usually names the segment at once (checked, or the binary search decides):
    /// at a window of thousands of segments the search alone is a dozen scattered reads per
    /// SACK block (docs/performance.md).
    #[inline]
    fn index_of(&self, seq: u64) -> usize {
        let Some(first) = self.segs.front() else { return 0 };
        if seq < first.end() {
            return 0;
        }
        let guess = ((seq - first.start) / first.len().max(1)) as usize;
        match self.segs.get(guess) {
            // Contiguity: the segment before `guess` ends at its start, at or below `seq`.
            Some(s) if s.start <= seq && seq < s.end() => guess,
            _ => self.segs.partition_point(|s| s.end() <= seq),
        }
    }

    /// Removes every segment fully below `ack`, calling `f` for each (before its flags are
    /// cleared from the counters).
    #[inline]
    pub fn ack_to(&mut self, ack: u64, mut f: impl FnMut(&Seg)) {
        while let Some(s) = self.segs.front() {
            if s.end() > ack {
                break;
            }
            let s = self.segs.pop_front().unwrap();
            f(&s);
            self.uncount(&s);
            if s.has(SACKED) && s.end() <= self.lost_upto {
                self.sacked_below -= s.len();
            }
            if !s.has(EVER_RETRANS) {
                self.rack_time = self.rack_time.max(s.sent_at);
            }
        }
        if self.segs.is_empty() {
            self.high_sacked = 0;
            self.sacked_below = 0;
            // Back to the ring's first slot (`clear` resets the head; a test below checks it):
            // a flow whose window keeps emptying reuses the same few lines instead of walking
            // a ring sized for its largest flight (docs/performance.md).
            self.segs.clear();
        }
    }

    fn uncount(&mut self, s: &Seg) {
        let len = s.len();
        if s.has(SACKED) {
            self.sacked_bytes -= len;
        }
        if s.has(LOST) {
            self.lost_bytes -= len;
        }
        if s.has(RETRANS) {
            self.retrans_bytes -= len;
        }
    }

    /// Applies one SACK block [start, end): marks the segments fully inside it as SACKed,
    /// calling `f` for each newly SACKed one. Parts already covered by the previous ACK's
    /// blocks are skipped (Linux's SACK cache): a block that grows by one segment per ACK
    /// then costs O(1), not O(block).
    pub fn sack(&mut self, start: u64, end: u64, mut f: impl FnMut(&Seg)) {
        let mut cur = start;
        while cur < end {
            // The next cached block that overlaps [cur, end), if any, bounds this piece.
            let mut piece_end = end;
            let mut skip_to = None;
            for &(cs, ce) in &self.sack_cache[..self.sack_cache_len] {
                if cs <= cur && ce > cur {
                    skip_to = Some(skip_to.map_or(ce, |x: u64| x.max(ce)));
                } else if cs > cur && cs < piece_end {
                    piece_end = cs;
                }
            }
            if let Some(next) = skip_to {
                cur = next;
                continue;
            }
            self.sack_range(cur, piece_end, &mut f);
            cur = piece_end;
        }
        if self.sack_next_len < self.sack_next.len() {
            self.sack_next[self.sack_next_len] = (start, end);
            self.sack_next_len += 1;
        }
    }

    /// Ends the processing of one ACK's SACK blocks: they become the cache for the next ACK.
    pub fn end_sack_batch(&mut self) {
        self.sack_cache = self.sack_next;
        self.sack_cache_len = self.sack_next_len;
        self.sack_next_len = 0;
    }

    fn sack_range(&mut self, start: u64, end: u64, f: &mut impl FnMut(&Seg)) {
        let mut i = self.index_of(start);
        while i < self.segs.len() {
            let s = self.segs[i];
            if s.end() > end {
                break;
            }
            if s.start >= start && !s.has(SACKED) {
                f(&s);
                if !s.has(EVER_RETRANS) {
                    self.rack_time = self.rack_time.max(s.sent_at);
                }
                self.uncount(&s);
                self.segs[i].flags = (s.flags & !(LOST | RETRANS)) | SACKED;
                self.sacked_bytes += s.len();
                if s.end() <= self.lost_upto {
                    self.sacked_below += s.len();
                }
                self.high_sacked = self.high_sacked.max(s.end());
            }
            i += 1;
        }
    }

    /// RFC 6675 IsLost(): a segment is lost once more than (dupthresh − 1)·MSS bytes, or
    /// dupthresh discontiguous SACKed runs, lie above it. Both only shrink as the segment's
    /// position rises, so the lost segments form a prefix: we advance its boundary upward
    /// from where it stood, knowing the SACKed bytes below it, so each segment is passed
    /// once per connection. Returns the bytes newly marked lost.
    pub fn mark_lost(&mut self, mss: u64, dupthresh: u64) -> u64 {
        if self.sacked_bytes == 0 {
            return 0;
        }
        let mut i = self.index_of(self.lost_upto);
        let mut sacked_above = self.sacked_bytes - self.sacked_below;
        let mut newly = 0;
        let mut moved = false;
        while i < self.segs.len() && sacked_above > 0 {
            let s = self.segs[i];
            if s.has(SACKED) {
                sacked_above -= s.len();
                self.sacked_below += s.len();
            } else {
                let lost = sacked_above > (dupthresh - 1) * mss
                    || self.runs_above(i, dupthresh) >= dupthresh;
                if !lost {
                    break;
                }
                if !s.has(LOST) {
                    self.segs[i].flags |= LOST;
                    newly += s.len();
                    if !moved {
                        self.rtx_hint = self.rtx_hint.min(s.start);
                        moved = true;
                    }
                }
            }
            self.lost_upto = s.end();
            i += 1;
        }
        self.lost_bytes += newly;
        newly
    }

    /// Discontiguous SACKed runs above segment `i`, counting at most `cap`.
    fn runs_above(&self, i: usize, cap: u64) -> u64 {
        let mut runs = 0;
        let mut in_run = false;
        for s in self.segs.range(i + 1..) {
            if s.has(SACKED) {
                if !in_run {
                    runs += 1;
                    if runs >= cap {
                        break;
                    }
                }
                in_run = true;
            } else {
                in_run = false;
            }
            if s.end() > self.high_sacked {
                break;
            }
        }
        runs
    }

    /// Is the first outstanding segment presumed lost?
    pub fn head_lost(&self) -> bool {
        self.segs.front().is_some_and(|s| s.has(LOST))
    }

    /// Marks the first outstanding segment lost (fast retransmit after three dupACKs).
    pub fn mark_head_lost(&mut self) {
        if let Some(s) = self.segs.front_mut() {
            if s.flags & (SACKED | LOST) == 0 {
                s.flags |= LOST;
                self.lost_bytes += s.len();
            }
            self.lost_upto = self.lost_upto.max(s.end());
            self.rtx_hint = s.start;
        }
    }

    /// RTO: every un-SACKed segment is presumed lost and no retransmission is in flight any
    /// more (Linux tcp_enter_loss; RFC 6675 §5.1 keeps the SACK information) — except, with
    /// `spare_after`, the segments other than the first sent after that instant: RACK's
    /// rule that what went out within the last RTT is not yet overdue (Linux
    /// tcp_timeout_mark_lost), so a timeout does not resend a whole window still queued.
    pub fn mark_all_lost(&mut self, spare_after: Option<SimTime>) {
        let mut upto = None;
        for (k, s) in self.segs.iter_mut().enumerate() {
            if s.has(SACKED) {
                continue;
            }
            if k > 0 && spare_after.is_some_and(|t| s.sent_at > t) {
                // Original sends are in time order: the first spared one bounds the lost
                // prefix; a spared retransmission keeps its flags and its rtx_queue entry.
                if !s.has(LOST) && upto.is_none() {
                    upto = Some(s.start);
                }
                continue;
            }
            if s.has(RETRANS) {
                s.flags &= !RETRANS;
                self.retrans_bytes -= s.len();
            }
            if !s.has(LOST) {
                s.flags |= LOST;
                self.lost_bytes += s.len();
            }
        }
        if spare_after.is_none() {
            self.rtx_queue.clear();
        }
        self.lost_upto = upto.unwrap_or_else(|| self.segs.back().map_or(0, |s| s.end()));
        self.recount_sacked_below();
        self.rtx_hint = self.segs.front().map_or(0, |s| s.start);
    }

    fn recount_sacked_below(&mut self) {
        let upto = self.lost_upto;
        self.sacked_below = self
            .segs
            .iter()
            .take_while(|s| s.end() <= upto)
            .filter(|s| s.has(SACKED))
            .map(Seg::len)
            .sum();
    }

    /// Undo of a spurious loss episode: nothing is presumed lost any more (retransmissions
    /// in flight stay counted, as in Linux).
    pub fn unmark_all_lost(&mut self) {
        for s in self.segs.iter_mut() {
            s.flags &= !LOST;
        }
        self.lost_bytes = 0;
        self.lost_upto = self.segs.front().map_or(0, |s| s.start);
        self.sacked_below = 0;
        self.rtx_hint = self.lost_upto;
    }

    /// RACK loss detection (RFC 8985 §6.2) over the segments above the lost prefix: one sent
    /// before the most recently delivered (`xmit_ts`, ties broken by `end_seq`) is lost once
    /// `rtt + reo` has passed since it was sent; the first one not yet overdue gives the
    /// reordering timer's deadline. Original sends are in time order, so the lost ones extend
    /// the prefix and each segment is passed once. Returns the bytes newly marked lost.
    pub fn rack_mark_lost(
        &mut self,
        xmit_ts: SimTime,
        end_seq: u64,
        rtt: Dur,
        reo: Dur,
        now: SimTime,
    ) -> (u64, Option<SimTime>) {
        let mut i = self.index_of(self.lost_upto);
        let mut newly = 0;
        let mut timer = None;
        while i < self.segs.len() {
            let s = self.segs[i];
            if s.has(SACKED) {
                self.sacked_below += s.len();
            } else if !s.has(LOST) {
                let before = s.sent_at < xmit_ts || (s.sent_at == xmit_ts && s.end() <= end_seq);
                if !before {
                    break;
                }
                let due = s.sent_at + rtt + reo;
                if due > now {
                    timer = Some(due);
                    break;
                }
                self.segs[i].flags |= LOST;
                newly += s.len();
                self.rtx_hint = self.rtx_hint.min(s.start);
            }
            self.lost_upto = s.end();
            i += 1;
        }
        self.lost_bytes += newly;
        (newly, timer)
    }

    /// The last segment not SACKed (the tail loss probe's retransmission).
    pub fn last_unsacked(&self) -> Option<usize> {
        (0..self.segs.len()).rev().find(|&i| !self.segs[i].has(SACKED))
    }

    /// The first segment presumed lost and not yet retransmitted.
    pub fn next_to_retransmit(&mut self) -> Option<usize> {
        let mut i = self.index_of(self.rtx_hint);
        while i < self.segs.len() {
            let s = &self.segs[i];
            if s.start >= self.lost_upto {
                break;
            }
            if s.flags & (LOST | RETRANS | SACKED) == LOST {
                self.rtx_hint = s.start;
                return Some(i);
            }
            i += 1;
        }
        self.rtx_hint = self.lost_upto;
        None
    }

    /// Records the retransmission of segment `i`.
    pub fn retransmitted(&mut self, i: usize, now: SimTime, stamp: TxStamp) {
        let s = &mut self.segs[i];
        if !s.has(RETRANS) {
            self.retrans_bytes += s.len();
        }
        s.flags |= RETRANS | EVER_RETRANS;
        s.sent_at = now;
        s.set_stamp(stamp);
        let start = s.start;
        self.rtx_queue.push_back((start, now));
    }

    /// Lost-retransmission detection (RFC 8985 RACK, applied to retransmissions only): a
    /// retransmission is lost once a segment sent more than `reo_wnd` after it has been
    /// delivered. It becomes eligible for retransmission again. Returns how many were found.
    pub fn detect_lost_retransmissions(&mut self, reo_wnd: crate::units::Dur) -> u64 {
        let rack_time = self.rack_time;
        self.lost_retransmissions_while(|t, _| t + reo_wnd < rack_time)
    }

    /// RACK's own test on retransmissions (Linux tcp_rack_detect_loss walks them with the
    /// rest): one sent before the most recently sent delivered segment (`xmit_ts`,
    /// `end_seq`: retransmissions count there too, RFC 8985 §6.2) and unacknowledged for
    /// `rtt + reo` since it went out is lost again.
    pub fn rack_lost_retransmissions(
        &mut self,
        xmit_ts: SimTime,
        end_seq: u64,
        rtt: crate::units::Dur,
        reo: crate::units::Dur,
        now: SimTime,
    ) -> u64 {
        self.lost_retransmissions_while(|t, end| {
            (t < xmit_ts || (t == xmit_ts && end <= end_seq)) && t + rtt + reo <= now
        })
    }

    /// Marks retransmissions lost from the oldest on while `lost(sent_at, end)` holds.
    fn lost_retransmissions_while(&mut self, lost: impl Fn(SimTime, u64) -> bool) -> u64 {
        let mut found = 0;
        while let Some(&(seq, t)) = self.rtx_queue.front() {
            let i = self.index_of(seq);
            let live = self
                .segs
                .get(i)
                .is_some_and(|s| s.start == seq && s.has(RETRANS) && s.sent_at == t);
            if !live {
                self.rtx_queue.pop_front(); // acknowledged, SACKed, or sent again since
                continue;
            }
            if !lost(t, self.segs[i].end()) {
                break;
            }
            self.rtx_queue.pop_front();
            let s = &mut self.segs[i];
            s.flags &= !RETRANS;
            self.retrans_bytes -= s.len();
            self.rtx_hint = self.rtx_hint.min(seq);
            found += 1;
        }
        if self.rtx_queue.is_empty() {
            self.rtx_queue.clear(); // the ring's first slot again, as `ack_to` does
        }
        self.lost_retransmissions += found;
        found
    }

    /// Checks the byte counters against the flags (tests and debug builds).
    pub fn check(&self) -> bool {
        let (mut s, mut l, mut r, mut below) = (0, 0, 0, 0);
        for g in &self.segs {
            if g.has(SACKED) && g.end() <= self.lost_upto {
                below += g.len();
            }
            if g.has(SACKED) {
                s += g.len();
            }
            if g.has(LOST) {
                l += g.len();
            }
            if g.has(RETRANS) {
                r += g.len();
            }
        }
        s == self.sacked_bytes
            && l == self.lost_bytes
            && r == self.retrans_bytes
            && below == self.sacked_below
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MSS: u64 = 1000;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new();
        for i in 0..n {
            b.push(Seg::new(i * MSS, (i + 1) * MSS, SimTime(i), 0, TxStamp::default()));
        }
        b
    }

    proptest! {
        /// The MSS guess finds exactly the segment the binary search finds, whatever the
        /// segment lengths (zero-length ones too) and however many were acknowledged.
        #[test]
        fn index_of_agrees_with_the_search(lens in proptest::collection::vec(0u64..3000, 0..60), acked in 0usize..10, probes in proptest::collection::vec(0u64..200_000, 1..40)) {
            let mut b = Scoreboard::new();
            let mut at = 0;
            for &l in &lens {
                b.push(Seg::new(at, at + l, SimTime::ZERO, 0, TxStamp::default()));
                at += l;
            }
            let cut = lens.iter().take(acked).sum::<u64>();
            b.ack_to(cut, |_| {});
            for &seq in &probes {
                let seq = seq % (at + 2000);
                prop_assert_eq!(b.index_of(seq), b.segs.partition_point(|s| s.end() <= seq));
            }
        }
    }

    /// A segment stays within 48 bytes (thousands of flows' scoreboards are mostly these).
    #[test]
    fn a_segment_is_48_bytes_and_keeps_its_stamp() {
        assert!(std::mem::size_of::<Seg>() <= 48, "Seg is {} bytes", std::mem::size_of::<Seg>());
        let t = TxStamp {
            delivered: 7,
            delivered_at: SimTime(8),
            first_tx_at: SimTime(9),
            app_limited: true,
        };
        let s = Seg::new(100, 1548, SimTime(1), SACKED, t);
        assert_eq!((s.start, s.end(), s.len(), s.stamp()), (100, 1548, 1448, t));
    }

    /// A window acknowledged whole puts the next segment in the ring's first slot again.
    #[test]
    fn an_emptied_board_reuses_its_first_slot() {
        let mut b = board(1);
        let first = b.segs.as_slices().0.as_ptr();
        b.push(Seg::new(MSS, 2 * MSS, SimTime(1), 0, TxStamp::default()));
        b.ack_to(MSS, |_| {});
        assert_ne!(b.segs.as_slices().0.as_ptr(), first, "the head moved on");
        b.ack_to(2 * MSS, |_| {});
        b.push(Seg::new(2 * MSS, 3 * MSS, SimTime(2), 0, TxStamp::default()));
        assert_eq!(b.segs.as_slices().0.as_ptr(), first);
    }

    #[test]
    fn three_sacked_segments_above_make_a_hole_lost() {
        let mut b = board(10);
        b.sack(1000, 3000, |_| {});
        assert_eq!(b.mark_lost(MSS, 3), 0, "2 MSS above is not more than 2 MSS");
        b.sack(3000, 4000, |_| {});
        assert_eq!(b.mark_lost(MSS, 3), MSS);
        assert!(b.head_lost());
        assert_eq!(b.next_to_retransmit(), Some(0));
        b.retransmitted(0, SimTime(99), TxStamp::default());
        assert_eq!(b.next_to_retransmit(), None);
        assert!(b.check());
        // pipe = outstanding 10k − sacked 3k − lost 1k + retrans 1k = 7k.
        assert_eq!(10 * MSS - b.sacked_bytes - b.lost_bytes + b.retrans_bytes, 7 * MSS);
    }

    #[test]
    fn several_holes_are_all_marked() {
        let mut b = board(12);
        // holes at 0, 2, 4; SACKs at 1, 3, 5..8
        b.sack(1000, 2000, |_| {});
        b.sack(3000, 4000, |_| {});
        b.sack(5000, 9000, |_| {});
        b.mark_lost(MSS, 3);
        let lost: Vec<u64> =
            (0..b.len()).filter(|&i| b.get(i).has(LOST)).map(|i| b.get(i).start).collect();
        assert_eq!(lost, vec![0, 2000, 4000]);
        assert!(b.check());
    }

    #[test]
    fn cumulative_ack_clears_counters() {
        let mut b = board(6);
        b.sack(2000, 5000, |_| {});
        b.mark_lost(MSS, 3);
        let mut acked = 0;
        b.ack_to(5000, |s| acked += s.len());
        assert_eq!(acked, 5000);
        assert_eq!((b.sacked_bytes, b.lost_bytes, b.retrans_bytes), (0, 0, 0));
        assert_eq!(b.len(), 1);
    }

    #[test]
    fn rto_marks_everything_unsacked_lost() {
        let mut b = board(5);
        b.sack(3000, 4000, |_| {});
        b.mark_head_lost();
        b.retransmitted(0, SimTime(5), TxStamp::default());
        b.mark_all_lost(None);
        assert_eq!(b.lost_bytes, 4 * MSS);
        assert_eq!(b.retrans_bytes, 0);
        assert!(b.check());
    }

    #[test]
    fn a_lost_retransmission_is_found_when_later_data_is_sacked() {
        let mut b = board(10);
        b.sack(1000, 4000, |_| {});
        b.mark_lost(MSS, 3);
        let i = b.next_to_retransmit().unwrap();
        b.retransmitted(i, SimTime(100), TxStamp::default());
        assert_eq!(b.detect_lost_retransmissions(crate::units::Dur(5)), 0);
        // Segment 9 was sent at t = 9 (before the retransmission): no verdict yet.
        b.sack(9000, 10000, |_| {});
        assert_eq!(b.detect_lost_retransmissions(crate::units::Dur(5)), 0);
        // New data sent at t = 200 and SACKed: the retransmission at t = 100 is lost.
        b.push(Seg::new(10_000, 11_000, SimTime(200), 0, TxStamp::default()));
        b.sack(10_000, 11_000, |_| {});
        assert_eq!(b.detect_lost_retransmissions(crate::units::Dur(5)), 1);
        assert_eq!(b.next_to_retransmit(), Some(0));
        assert!(b.check());
    }

    /// RACK's own test: a retransmission is lost once one sent after it — itself a
    /// retransmission here — was delivered and RACK's RTT plus the window has passed since
    /// it went out; the never-retransmitted rule alone finds nothing.
    #[test]
    fn rack_finds_a_retransmission_lost_behind_a_later_retransmission() {
        use crate::units::Dur;
        let mut b = board(10);
        b.sack(3000, 10_000, |_| {});
        b.mark_lost(MSS, 3);
        let first = b.next_to_retransmit().unwrap();
        b.retransmitted(first, SimTime(100), TxStamp::default());
        let second = b.next_to_retransmit().unwrap();
        b.retransmitted(second, SimTime(110), TxStamp::default());
        // The second retransmission is SACKed: RACK's newest delivered send is t = 110.
        b.sack(1000, 2000, |_| {});
        assert_eq!(b.detect_lost_retransmissions(Dur(0)), 0);
        // Not yet overdue at t = 205 with RACK's RTT of 100 (due at 100 + 100 + 0 = 200)...
        assert_eq!(
            b.rack_lost_retransmissions(SimTime(110), 2000, Dur(100), Dur(10), SimTime(205)),
            0
        );
        // ...and lost at t = 210 (with a window of 10).
        assert_eq!(
            b.rack_lost_retransmissions(SimTime(110), 2000, Dur(100), Dur(10), SimTime(210)),
            1
        );
        assert_eq!(b.next_to_retransmit(), Some(first));
        assert!(b.check());
    }

    /// A timeout spares what was sent within the last RTT: only older segments (and the head)
    /// are presumed lost, and RACK later finds the spared ones lost only once they are overdue.
    #[test]
    fn timeout_spares_recent_segments_and_rack_marks_them_when_overdue() {
        let mut b = board(10); // segment i sent at t = i
        b.mark_all_lost(Some(SimTime(5)));
        let lost: Vec<usize> = (0..b.len()).filter(|&i| b.get(i).has(LOST)).collect();
        assert_eq!(lost, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(b.lost_bytes, 6 * MSS);
        assert!(b.check());
        // Segment 8 (sent at 8) is SACKed: 6 and 7 were sent before it.
        b.sack(8000, 9000, |_| {});
        let (n, t) = b.rack_mark_lost(SimTime(8), 9000, Dur(10), Dur(0), SimTime(16));
        assert_eq!((n, t), (MSS, Some(SimTime(17))), "6 is overdue at 16, 7 at 17");
        let (n, t) = b.rack_mark_lost(SimTime(8), 9000, Dur(10), Dur(0), SimTime(17));
        assert_eq!((n, t), (MSS, None));
        assert!(b.get(7).has(LOST) && !b.get(9).has(LOST));
        assert!(b.check());
        b.unmark_all_lost();
        assert_eq!(b.lost_bytes, 0);
        assert!(b.check());
        assert_eq!(b.last_unsacked(), Some(9));
    }

    proptest! {
        /// Counters always match the flags, whatever SACK/ACK/loss sequence arrives.
        #[test]
        fn counters_match_flags(ops in proptest::collection::vec((0u8..6, 0u64..20, 1u64..5), 1..60)) {
            let mut b = board(20);
            let mut una = 0;
            for (op, a, l) in ops {
                match op {
                    0 => { let s = (a * MSS).max(una); b.sack(s, s + l * MSS, |_| {}); if a % 2 == 0 { b.end_sack_batch(); } }
                    1 => { b.mark_lost(MSS, 3); if let Some(i) = b.next_to_retransmit() { b.retransmitted(i, SimTime(1), TxStamp::default()); } b.detect_lost_retransmissions(crate::units::Dur(0)); }
                    2 => { una = una.max((a * MSS).min(20 * MSS)); b.ack_to(una, |_| {}); }
                    3 => b.mark_all_lost(if a % 2 == 0 { None } else { Some(SimTime(a)) }),
                    4 => b.unmark_all_lost(),
                    _ => { b.rack_mark_lost(SimTime(a), a * MSS, Dur(l), Dur(0), SimTime(a + 3)); }
                }
                prop_assert!(b.check());
                let out: u64 = (0..b.len()).map(|i| b.get(i).len()).sum();
                prop_assert!(b.sacked_bytes + b.lost_bytes <= out);
            }
        }
    }
}
