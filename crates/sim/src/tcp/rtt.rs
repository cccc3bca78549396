//! Round-trip time estimation and the retransmission timeout (RFC 6298), with Linux's
//! treatment of the minimum: the floor applies to the variance term, so RTO ≥ SRTT + rto_min
//! (Linux keeps rttvar ≥ tcp_rto_min; a flat 200 ms floor would fire spuriously on long paths).

use crate::units::Dur;

#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt: Option<Dur>,
    rttvar: Dur,
    min_rtt: Option<Dur>,
    latest: Option<Dur>,
    rto_min: Dur,
    rto_max: Dur,
    /// RTO before any sample (RFC 6298 2.1), also the base after a SYN timeout fallback.
    rto_initial: Dur,
    /// Number of consecutive backoffs applied to the current RTO.
    pub backoff: u32,
}

impl RttEstimator {
    pub fn new(rto_initial: Dur, rto_min: Dur, rto_max: Dur) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Dur::ZERO,
            min_rtt: None,
            latest: None,
            rto_min,
            rto_max,
            rto_initial,
            backoff: 0,
        }
    }

    /// Feeds one RTT sample (RFC 6298 2.2/2.3; α = 1/8, β = 1/4). Collapses any backoff.
    pub fn sample(&mut self, r: Dur) {
        let r = Dur(r.0.max(1));
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Dur(r.0 / 2);
            }
            Some(s) => {
                let diff = s.0.abs_diff(r.0);
                self.rttvar = Dur((3 * self.rttvar.0 + diff) / 4);
                self.srtt = Some(Dur((7 * s.0 + r.0) / 8));
            }
        }
        self.backoff = 0;
    }

    /// A sample for the minimum only (Linux feeds its min-RTT filter the controller's sample,
    /// the newest acknowledged segment's, and SRTT the oldest's).
    pub fn note_min(&mut self, r: Dur) {
        let r = Dur(r.0.max(1));
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
    }

    /// The current RTO including exponential backoff, capped at rto_max.
    pub fn rto(&self) -> Dur {
        let base = match self.srtt {
            None => self.rto_initial,
            Some(s) => s + Dur((4 * self.rttvar.0).max(self.rto_min.0)),
        };
        let shifted = base.0.checked_shl(self.backoff.min(32)).unwrap_or(u64::MAX);
        Dur(shifted.min(self.rto_max.0).max(self.rto_min.0.min(self.rto_max.0)))
    }

    /// RFC 6298 5.5: double the RTO after a timeout.
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// RFC 6298 5.7: after a SYN timed out and no sample exists, data starts with a 3 s RTO.
    pub fn syn_timeout_fallback(&mut self) {
        if self.srtt.is_none() {
            self.rto_initial = self.rto_initial.max(Dur::from_secs(3));
        }
    }

    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }
    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }
    pub fn latest(&self) -> Option<Dur> {
        self.latest
    }
    /// RFC 6298's RTTVAR (zero before the first sample).
    pub fn rttvar(&self) -> Dur {
        self.rttvar
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(Dur::from_secs(1), Dur::from_millis(200), Dur::from_secs(120))
    }

    #[test]
    fn initial_rto_is_one_second_and_backs_off_by_doubling() {
        let mut e = est();
        assert_eq!(e.rto(), Dur::from_secs(1));
        e.back_off();
        assert_eq!(e.rto(), Dur::from_secs(2));
        e.back_off();
        assert_eq!(e.rto(), Dur::from_secs(4));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Dur::from_secs(120));
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variance() {
        let mut e = est();
        e.sample(Dur::from_millis(100));
        assert_eq!(e.srtt(), Some(Dur::from_millis(100)));
        // 4 * 50 ms = 200 ms variance term.
        assert_eq!(e.rto(), Dur::from_millis(300));
        for _ in 0..200 {
            e.sample(Dur::from_millis(100));
        }
        // Variance decays to ~0; the floor keeps RTO = SRTT + 200 ms.
        assert_eq!(e.rto(), Dur::from_millis(300));
    }

    #[test]
    fn second_sample_uses_old_srtt_for_variance() {
        let mut e = est();
        e.sample(Dur::from_millis(100));
        e.sample(Dur::from_millis(200));
        // rttvar = 3/4*50 + 1/4*|100-200| = 62.5 ms; srtt = 112.5 ms.
        assert_eq!(e.srtt(), Some(Dur(112_500_000)));
        assert_eq!(e.rto(), Dur(112_500_000 + 250_000_000));
    }
}
