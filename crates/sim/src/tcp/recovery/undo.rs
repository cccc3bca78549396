//! Undoing a window reduction that turns out to have been unnecessary (Linux's undo_marker
//! machinery): the episode remembers the window before it, counts its retransmissions, and is
//! found spurious when
//! - every retransmission is reported a duplicate by D-SACK (RFC 2883 / RFC 3708), or
//! - an ACK echoes a timestamp older than the first retransmission, so it was sent for an
//!   original transmission (the Eifel detection, RFC 3522), or
//! - after a timeout, data never retransmitted is acknowledged (F-RTO, RFC 5682; the
//!   decision is the socket's, which knows what the ACK covered).

use crate::units::SimTime;

#[derive(Debug, Clone, Copy, Default)]
pub struct Undo {
    /// snd.una when the episode began (None: nothing to undo).
    marker: Option<u64>,
    /// Retransmissions of the episode not yet reported duplicate by a D-SACK; −1 before the
    /// first (Linux's undo_retrans: an episode without retransmissions proves nothing).
    retrans: i64,
    /// When the episode's first retransmission was sent.
    retrans_stamp: Option<SimTime>,
    pub prior_cwnd: u64,
    pub prior_ssthresh: u64,
}

impl Undo {
    /// A new reduction episode begins with `retrans_out` retransmissions (of an earlier
    /// one) still in flight: their D-SACKs count too, so they cannot make this one look
    /// spurious.
    pub fn start(&mut self, una: u64, retrans_out: u64, cwnd: u64, ssthresh: u64) {
        let retrans = if retrans_out > 0 { retrans_out as i64 } else { -1 };
        *self = Undo {
            marker: Some(una),
            retrans,
            retrans_stamp: None,
            prior_cwnd: cwnd,
            prior_ssthresh: ssthresh,
        };
    }

    pub fn active(&self) -> bool {
        self.marker.is_some()
    }

    /// The episode is over (undone, or its data acknowledged and the reduction kept).
    pub fn clear(&mut self) {
        self.marker = None;
        self.retrans_stamp = None;
    }

    #[inline]
    pub fn on_retransmit(&mut self, now: SimTime) {
        if self.marker.is_some() {
            self.retrans = self.retrans.max(0) + 1;
        }
        self.retrans_stamp.get_or_insert(now);
    }

    /// A D-SACK reported [start, end) received twice: if it lies in the episode, `segs` of
    /// its retransmissions were not needed.
    pub fn on_dsack(&mut self, end: u64, segs: i64) {
        if self.marker.is_some_and(|m| end > m) && self.retrans > 0 {
            self.retrans = (self.retrans - segs).max(0);
        }
    }

    /// All retransmissions of the episode were D-SACKed.
    pub fn all_dsacked(&self) -> bool {
        self.marker.is_some() && self.retrans == 0
    }

    /// Eifel: the ACK's echoed timestamp predates the first retransmission.
    pub fn packet_delayed(&self, ecr: Option<u64>) -> bool {
        match (self.retrans_stamp, ecr) {
            (Some(t), Some(e)) => e != 0 && e < t.0,
            _ => false,
        }
    }

    /// Linux's tcp_may_undo.
    pub fn may_undo(&self, ecr: Option<u64>) -> bool {
        self.marker.is_some() && (self.retrans == 0 || self.packet_delayed(ecr))
    }

    /// Forgets the first-retransmission time once nothing retransmitted is outstanding.
    pub fn forget_retrans_stamp(&mut self) {
        self.retrans_stamp = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsack_of_every_retransmission_allows_undo() {
        let mut u = Undo::default();
        u.start(1000, 0, 20, 1 << 40);
        assert!(!u.may_undo(None), "nothing retransmitted yet");
        u.on_retransmit(SimTime(10));
        u.on_retransmit(SimTime(11));
        assert!(!u.may_undo(None));
        u.on_dsack(2000, 1);
        assert!(!u.may_undo(None));
        u.on_dsack(3000, 1);
        assert!(u.may_undo(None));
        // A D-SACK below the episode's start says nothing about it.
        u.start(5000, 0, 20, 30);
        u.on_retransmit(SimTime(20));
        u.on_dsack(4000, 1);
        assert!(!u.all_dsacked());
    }

    #[test]
    fn eifel_needs_an_echo_older_than_the_first_retransmission() {
        let mut u = Undo::default();
        u.start(0, 0, 10, 20);
        u.on_retransmit(SimTime(100));
        assert!(u.may_undo(Some(99)));
        assert!(!u.may_undo(Some(100)));
        assert!(!u.may_undo(None));
        u.clear();
        assert!(!u.may_undo(Some(1)));
    }
}
