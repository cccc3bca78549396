//! Proportional Rate Reduction (RFC 6937) for the window during fast recovery, in Linux's
//! form (tcp_cwnd_reduction): while the pipe is above ssthresh, send in proportion to what
//! is delivered (ssthresh / RecoverFS of it, RecoverFS being the cwnd when recovery began);
//! once it is below, grow back toward ssthresh no faster than slow start (the SSRB bound),
//! so a burst of losses neither stalls the ACK clock nor releases a burst.

#[derive(Debug, Clone, Copy, Default)]
pub struct Prr {
    /// cwnd when the reduction began (Linux's prior_cwnd, RFC 6937's RecoverFS).
    recover_fs: u64,
    /// Bytes delivered (cumulatively or by SACK) since the reduction began.
    delivered: u64,
    /// Bytes sent since the reduction began.
    out: u64,
}

impl Prr {
    pub fn start(&mut self, cwnd: u64) {
        *self = Prr { recover_fs: cwnd.max(1), delivered: 0, out: 0 };
    }

    #[inline]
    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// Takes back `bytes` of what was counted as sent (to compute a window as it stood
    /// before a retransmission that went out first).
    pub fn unsend(&mut self, bytes: u64) {
        self.out -= bytes.min(self.out);
    }

    /// The cwnd after an ACK that delivered `newly_delivered` bytes with `in_flight` left in
    /// the pipe; `una_advanced` and `newly_lost` select Linux's extra segment of the
    /// slow-start bound. None when the ACK delivered nothing (cwnd stays).
    pub fn cwnd(
        &mut self,
        ssthresh: u64,
        in_flight: u64,
        newly_delivered: u64,
        newly_lost: bool,
        una_advanced: bool,
        mss: u64,
    ) -> Option<u64> {
        if newly_delivered == 0 {
            return None;
        }
        self.delivered += newly_delivered;
        let sndcnt = if in_flight > ssthresh {
            // Proportional part: ceil(ssthresh · delivered / RecoverFS) − out, rounded up to
            // whole segments as Linux counts them.
            let target = (ssthresh as u128 * self.delivered as u128)
                .div_ceil(self.recover_fs as u128 * mss as u128) as u64
                * mss;
            target.saturating_sub(self.out)
        } else {
            let mut n = self.delivered.saturating_sub(self.out).max(newly_delivered);
            if una_advanced && !newly_lost {
                n += mss;
            }
            n.min(ssthresh - in_flight)
        };
        // The fast retransmit goes out whatever the arithmetic says.
        let sndcnt = if self.out == 0 { sndcnt.max(mss) } else { sndcnt };
        Some(in_flight + sndcnt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: u64 = 1000;

    /// 20 segments in flight, ssthresh 14: while the pipe is above ssthresh, 7 segments go out
    /// for every 10 delivered, the first with the first ACK and then as the 0.7 accumulate.
    #[test]
    fn sends_in_proportion_above_ssthresh() {
        let mut p = Prr::default();
        p.start(20 * MSS);
        let mut sent = 0;
        let mut pipe = 19 * MSS; // one lost
        let mut when = Vec::new();
        for k in 0..10 {
            pipe -= MSS;
            let cwnd = p.cwnd(14 * MSS, pipe, MSS, false, false, MSS).unwrap();
            let n = cwnd.saturating_sub(pipe);
            p.on_sent(n);
            pipe += n;
            sent += n;
            if n > 0 {
                when.push(k);
            }
        }
        assert_eq!(sent, 7 * MSS);
        assert_eq!(when, vec![0, 1, 2, 4, 5, 7, 8]);
    }

    /// Below ssthresh the window grows back by what is delivered plus one segment per ACK
    /// that advances una, never beyond ssthresh.
    #[test]
    fn slow_start_bound_below_ssthresh() {
        let mut p = Prr::default();
        p.start(20 * MSS);
        p.on_sent(MSS);
        assert_eq!(p.cwnd(14 * MSS, 5 * MSS, 2 * MSS, false, true, MSS), Some(5 * MSS + 3 * MSS));
        assert_eq!(p.cwnd(14 * MSS, 13 * MSS, 4 * MSS, false, true, MSS), Some(14 * MSS));
        assert_eq!(p.cwnd(14 * MSS, 5 * MSS, 0, false, true, MSS), None);
    }

    #[test]
    fn first_ack_always_releases_the_fast_retransmit() {
        let mut p = Prr::default();
        p.start(100 * MSS);
        assert_eq!(p.cwnd(10 * MSS, 99 * MSS, MSS, false, false, MSS), Some(100 * MSS));
    }
}
