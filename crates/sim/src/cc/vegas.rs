//! TCP Vegas as Linux runs it (`net/ipv4/tcp_vegas.c`; Brakmo & Peterson 1995). Once per
//! RTT, the expected and actual rates give the number of this flow's packets queued in the
//! network, diff = cwnd·(rtt − baseRTT)/baseRTT with rtt the smallest sample of the last
//! round (Linux's filter against delayed ACKs); cwnd grows by one packet when diff < α,
//! shrinks by one when diff > β, and slow start ends when diff > γ. baseRTT is the smallest
//! RTT ever seen (re-learned after idle). Outside the Open state (loss recovery, SACK
//! disorder) Vegas steps aside and Reno rules apply; a loss halves cwnd (Reno).

use super::registry::{BuildCtx, CcBuild, CcEntry, CcKind, CcTransport};
use super::reno::{halve, reno_grow, slow_start};
use super::{read_f64, AckSample, CaState, CongestionControl, CongestionEvent, Window};
use crate::params::{err, Res, Table};
use crate::units::{Dur, SimTime};
use std::sync::Arc;

pub(super) const ENTRY: CcEntry = CcEntry {
    name: "vegas",
    doc: "TCP Vegas as Linux runs it (delay-based, α/β/γ in packets)",
    keys: &["alpha", "beta", "gamma"],
    extra: CcKind { transport: CcTransport::Tcp, plus: Some("vegas+") },
    parse: |t, _| Ok(Arc::new(VegasParams::read(t)?)),
};

impl CcBuild for VegasParams {
    fn build(&self, _ctx: BuildCtx) -> Box<dyn CongestionControl> {
        Box::new(Vegas::new(self.clone()))
    }
}

/// Vegas's parameters (`flows[i].cc_params`), in packets (Linux module parameters).
#[derive(Debug, Clone, PartialEq)]
pub struct VegasParams {
    pub alpha: u64,
    pub beta: u64,
    pub gamma: u64,
}

impl Default for VegasParams {
    fn default() -> Self {
        VegasParams { alpha: 2, beta: 4, gamma: 1 }
    }
}

impl VegasParams {
    pub(crate) fn read(t: &mut Table) -> Res<VegasParams> {
        let d = VegasParams::default();
        let int = |t: &mut Table, key: &'static str| -> Res<Option<u64>> {
            let x = read_f64(t, key, 0.0, false, 1e6, false)?;
            match x {
                Some(v) if v.fract() != 0.0 => {
                    err(&t.key_path(key), format!("must be a whole number of packets (got {v})"))
                }
                Some(v) => Ok(Some(v as u64)),
                None => Ok(None),
            }
        };
        let alpha = int(t, "alpha")?.unwrap_or(d.alpha);
        let beta = int(t, "beta")?.unwrap_or(d.beta);
        let gamma = int(t, "gamma")?.unwrap_or(d.gamma);
        if beta < alpha {
            return err(
                &t.key_path("beta"),
                format!("must be at least alpha ({alpha}) (got {beta})"),
            );
        }
        Ok(VegasParams { alpha, beta, gamma })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    SlowStart,
    Increase,
    Hold,
    Decrease,
    Reno,
}

pub struct Vegas {
    p: VegasParams,
    /// Smallest RTT ever seen (+1 µs, never 0, as Linux).
    base_rtt: Dur,
    /// Smallest RTT of the current round.
    min_rtt: Dur,
    cnt_rtt: u32,
    /// The round ends when this sequence number is acknowledged.
    beg_snd_nxt: u64,
    doing_vegas: bool,
    prev_state: CaState,
    credit: u64,
    last: Action,
}

impl Vegas {
    pub fn new(p: VegasParams) -> Vegas {
        Vegas {
            p,
            base_rtt: Dur::MAX,
            min_rtt: Dur::MAX,
            cnt_rtt: 0,
            beg_snd_nxt: 0,
            doing_vegas: true,
            prev_state: CaState::Open,
            credit: 0,
            last: Action::SlowStart,
        }
    }

    /// The base RTT, once measured.
    pub fn base_rtt(&self) -> Option<Dur> {
        (self.base_rtt != Dur::MAX).then_some(self.base_rtt)
    }

    fn enable(&mut self, snd_nxt: u64) {
        self.doing_vegas = true;
        self.beg_snd_nxt = snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = Dur::MAX;
    }

    fn reno(&mut self, w: &mut Window, a: &AckSample) {
        self.last = Action::Reno;
        // Never called in Recovery (on_ack returns first), so this is exactly Reno's rule.
        reno_grow(w, &mut self.credit, a);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        // Linux tcp_vegas_state: Vegas runs only in the Open state.
        let open = a.ca_state == CaState::Open;
        if open != (self.prev_state == CaState::Open) {
            if open {
                self.enable(a.snd_nxt);
            } else {
                self.doing_vegas = false;
            }
        }
        self.prev_state = a.ca_state;
        if let Some(rtt) = a.rtt {
            let v = rtt + Dur::from_micros(1);
            self.base_rtt = self.base_rtt.min(v);
            self.min_rtt = self.min_rtt.min(v);
            self.cnt_rtt += 1;
        }
        if a.ca_state.reducing() {
            return; // the core's recovery owns cwnd
        }
        if !self.doing_vegas {
            self.reno(w, a);
            return;
        }
        if a.snd_una > self.beg_snd_nxt {
            // One round trip has passed: the once-per-RTT adjustment.
            self.beg_snd_nxt = a.snd_nxt;
            if self.cnt_rtt <= 2 {
                // Too few samples (delayed ACKs): behave like Reno for this ACK.
                self.reno(w, a);
            } else {
                let mss = w.mss;
                let mut cwnd = w.cwnd / mss;
                let rtt = self.min_rtt.0 as u128;
                let base = self.base_rtt.0 as u128;
                let target = (cwnd as u128 * base / rtt) as u64;
                // Packets of this flow queued in the network.
                let diff = (cwnd as u128 * (rtt - base.min(rtt)) / base) as u64;
                let mut ssthresh = w.ssthresh;
                if diff > self.p.gamma && w.in_slow_start() {
                    // Going too fast: leave slow start at the rate the path sustains.
                    cwnd = cwnd.min(target + 1);
                    ssthresh = ssthresh.min(cwnd * mss);
                    self.last = Action::Decrease;
                } else if w.in_slow_start() {
                    let left = slow_start(w, a.acked_bytes);
                    let _ = left;
                    cwnd = w.cwnd / mss;
                    self.last = Action::SlowStart;
                } else if diff > self.p.beta {
                    cwnd -= 1;
                    ssthresh = ssthresh.min(cwnd * mss);
                    self.last = Action::Decrease;
                } else if diff < self.p.alpha {
                    cwnd += 1;
                    self.last = Action::Increase;
                } else {
                    self.last = Action::Hold;
                }
                cwnd = cwnd.max(2);
                w.cwnd = cwnd * mss;
                // Linux tcp_current_ssthresh (outside recovery): max(ssthresh, ¾·cwnd).
                w.ssthresh = ssthresh.max((cwnd / 2 + cwnd / 4) * mss);
            }
            self.min_rtt = Dur::MAX;
            self.cnt_rtt = 0;
        } else if w.in_slow_start() {
            slow_start(w, a.acked_bytes);
        }
    }

    fn on_congestion_event(&mut self, w: &mut Window, _e: &CongestionEvent) {
        w.ssthresh = halve(w);
        self.credit = 0;
    }

    fn on_tx_start(&mut self, _w: &mut Window, _now: SimTime, _idle: Dur) {
        // Linux re-initialises Vegas on restart, including baseRTT.
        self.base_rtt = Dur::MAX;
        self.doing_vegas = true;
        self.cnt_rtt = 0;
        self.min_rtt = Dur::MAX;
    }

    fn state_label(&self, w: &Window) -> &'static str {
        if !self.doing_vegas {
            return "reno";
        }
        match self.last {
            Action::SlowStart if w.in_slow_start() => "slow_start",
            Action::Increase => "increase",
            Action::Decrease => "decrease",
            Action::Reno => "reno",
            _ if w.in_slow_start() => "slow_start",
            _ => "hold",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(una: u64, nxt: u64, rtt_ms: u64) -> AckSample {
        let rtt = Some(Dur::from_millis(rtt_ms));
        AckSample {
            srtt: None,
            min_rtt: None,
            snd_una: una,
            snd_nxt: nxt,
            ..AckSample::test(SimTime(0), MSS, rtt)
        }
    }

    /// A path of `bdp` packets and 100 ms base RTT with a deep buffer: a window above the
    /// BDP queues the excess, so RTT = base · cwnd / bdp. Each round delivers one window.
    fn rounds(v: &mut Vegas, w: &mut Window, n: usize, bdp: u64) {
        let mut una = v.beg_snd_nxt;
        for _ in 0..n {
            let cwnd = w.cwnd / MSS;
            let rtt = 100 * cwnd.max(bdp) / bdp;
            let nxt = una + w.cwnd;
            for _ in 0..cwnd {
                una += MSS;
                v.on_ack(w, &ack(una, nxt, rtt));
            }
        }
    }

    #[test]
    fn keeps_between_alpha_and_beta_packets_queued() {
        let mut v = Vegas::new(VegasParams::default());
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        rounds(&mut v, &mut w, 60, 20);
        // Linux's diff = ⌊cwnd·(rtt − base)/base⌋ = ⌊cwnd·q/bdp⌋ for q queued packets:
        // α ≤ diff ≤ β holds for cwnd 22 to 24 here (2 to 4 packets queued).
        let cwnd = w.cwnd / MSS;
        assert!((22..=24).contains(&cwnd), "cwnd {cwnd}");
        assert!(!w.in_slow_start());
        assert_eq!(v.base_rtt(), Some(Dur::from_millis(100) + Dur::from_micros(1)));
        // A larger BDP at the same base RTT (more bandwidth): Vegas adds one packet per RTT.
        let before = w.cwnd;
        rounds(&mut v, &mut w, 5, 40);
        assert!(w.cwnd >= before + 4 * MSS, "{} -> {}", before, w.cwnd);
    }

    #[test]
    fn slow_start_ends_when_more_than_gamma_packets_are_queued() {
        let mut v = Vegas::new(VegasParams::default());
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut n = 0;
        while w.in_slow_start() && n < 20 {
            rounds(&mut v, &mut w, 1, 40);
            n += 1;
        }
        // Slow start doubles per round until a round shows a queue (Linux grows per ACK
        // within the round, so the exit can overshoot the BDP of 40 by up to 4x).
        assert!(!w.in_slow_start(), "{w:?}");
        assert!(w.cwnd / MSS <= 160, "{w:?}");
    }
    #[test]
    fn outside_open_behaves_like_reno() {
        let mut v = Vegas::new(VegasParams::default());
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS };
        let mut a = ack(MSS, 20 * MSS, 100);
        a.ca_state = CaState::Disorder;
        for _ in 0..10 {
            v.on_ack(&mut w, &a);
        }
        assert_eq!(w.cwnd, 11 * MSS);
        assert_eq!(v.state_label(&w), "reno");
    }
}
