//! TCP Prague: the L4S sender of RFC 9331 §4 (its requirements) as Linux's `tcp_prague`
//! module builds it (described in the module's public notes; the code here is our own).
//!
//! - Data is ECT(1); Accurate ECN feedback is required. When the peer negotiates only classic
//!   ECN or none, Prague falls back to Reno (ECT(0) or Not-ECT), as Linux's `prague-reno`.
//! - α is DCTCP's moving average (gain g = 1/16) of the fraction of delivered bytes that were
//!   CE-marked, folded in once per round (one RTT of data), after the first mark only.
//! - Reaction per ACK: the decision to reduce is taken on the first CE feedback of a round (at
//!   most once per RTT, as a CWR episode), removing α·cwnd/2 from a fractional window carry;
//!   the carry is then paid out one MSS per ACK, so cwnd comes down ACK by ACK rather than in
//!   one step. Bytes that came back CE-marked earn no additive increase (growth on unmarked
//!   bytes only, so the increase does not saturate under heavy marking).
//! - Pacing at 100 % of cwnd/SRTT (200 % in slow start), counting header bytes.
//! - Classic-ECN bottleneck detection (RFC 9331 §4.3 asks for a fall-back): once per round
//!   with marks, the round's smallest RTT sample minus the path's minimum RTT estimates the
//!   standing queue; above `classic_delay` (2 ms, a queue an L4S AQM never keeps) — or two
//!   segments' serialization at the flow's rate, whichever is larger, since at a few Mbit/s
//!   one packet alone waits longer than 2 ms — the round counts as classic. A score c (EWMA, gain 1/4) of those rounds floors α at c, so on a
//!   classic AQM Prague halves like Reno (whose share CUBIC's TCP-friendly region matches)
//!   instead of cutting by α/2. A simpler rule than Linux's (which scores log(RTT variation)
//!   and log(queue depth) and floors α at about 0.6·c); see docs/congestion-control.md.
//! - Optional RTT independence (`rtt_independence = "rate"`): after `rtt_transition` rounds
//!   of congestion avoidance a flow whose SRTT is below `target_rtt` grows by (SRTT/target)²
//!   MSS per RTT (one MSS per target RTT in rate), folds α and reduces at most once per
//!   target RTT — flows of different RTTs then share a step AQM in rate.

use super::reno::{halve, reno_grow, slow_start};
use super::{
    read_f64, AckSample, BuildCtx, CcBuild, CcEntry, CcKind, CcTransport, CongestionControl,
    CongestionEvent, EcnUse, Window,
};
use crate::net::Ecn;
use crate::params::{err, Res, Table};
use crate::units::{Dur, Rate, SimTime};
use crate::wire::{EcnMode, TCP_HEADER_BYTES};

pub(super) const ENTRY: CcEntry = CcEntry {
    name: "prague",
    doc: "TCP Prague (RFC 9331 sender requirements): ECT(1), per-ACK CE response, pacing",
    keys: &[
        "g",
        "rtt_independence",
        "target_rtt",
        "rtt_transition",
        "classic_fallback",
        "classic_delay",
    ],
    extra: CcKind { transport: CcTransport::Tcp, plus: None },
    parse: |t, _| Ok(std::sync::Arc::new(PragueParams::read(t)?)),
};

impl CcBuild for PragueParams {
    fn build(&self, ctx: BuildCtx) -> Box<dyn CongestionControl> {
        Box::new(Prague::new(*self, ctx.mss))
    }
    /// Prague needs Accurate ECN (RFC 9331 §4.2) and asks for it itself.
    fn ecn_needs(&self) -> Option<EcnMode> {
        Some(EcnMode::AccEcn)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RttIndependence {
    Off,
    /// Linux's RTT_CONTROL_RATE: flows below the target RTT behave as if at the target.
    Rate,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PragueParams {
    pub g: f64,
    pub rtt_independence: RttIndependence,
    pub target_rtt: Dur,
    /// Rounds after slow start before RTT independence applies (Linux: 500).
    pub rtt_transition: u32,
    pub classic_fallback: bool,
    /// Standing queue above which a marked round counts as a classic-ECN bottleneck.
    pub classic_delay: Dur,
}

impl Default for PragueParams {
    fn default() -> Self {
        PragueParams {
            g: 1.0 / 16.0,
            // Linux's default (RTT_CONTROL_RATE): without it a short-RTT Prague flow beside a
            // classic one on DualPI2 takes its RTT advantage (3.0x the rate at 10 vs 25 ms).
            rtt_independence: RttIndependence::Rate,
            target_rtt: Dur::from_millis(25),
            rtt_transition: 500,
            classic_fallback: true,
            classic_delay: Dur::from_millis(2),
        }
    }
}

impl PragueParams {
    pub(super) fn read(t: &mut Table) -> Res<PragueParams> {
        let d = PragueParams::default();
        let g = read_f64(t, "g", 0.0, true, 1.0, false)?.unwrap_or(d.g);
        let rtt_independence =
            match t.opt_choice("rtt_independence", "RTT-independence mode", &["off", "rate"])? {
                Some("rate") => RttIndependence::Rate,
                Some(_) => RttIndependence::Off,
                None => d.rtt_independence,
            };
        let positive = |t: &mut Table, k: &'static str, dflt: Dur| -> Res<Dur> {
            match t.opt_duration(k)? {
                Some(Dur(0)) => err(&t.key_path(k), "must be greater than 0 (got \"0s\")"),
                Some(v) => Ok(v),
                None => Ok(dflt),
            }
        };
        let target_rtt = positive(t, "target_rtt", d.target_rtt)?;
        let classic_delay = positive(t, "classic_delay", d.classic_delay)?;
        let rtt_transition =
            t.opt_int("rtt_transition", 0, 1_000_000)?.map_or(d.rtt_transition, |n| n as u32);
        let classic_fallback = t.opt_bool("classic_fallback")?.unwrap_or(d.classic_fallback);
        Ok(PragueParams {
            g,
            rtt_independence,
            target_rtt,
            rtt_transition,
            classic_fallback,
            classic_delay,
        })
    }
}

/// Gain of the classic-bottleneck score per marked round.
const CLASSIC_GAIN: f64 = 0.25;
/// α floor per unit of classic score: at c = 1 a reduction halves cwnd, as Reno does (CUBIC's
/// TCP-friendly region is built to match Reno). Linux clamps α at about 0.6·c.
const CLASSIC_ALPHA: f64 = 1.0;

pub struct Prague {
    p: PragueParams,
    mss: u64,
    /// AccECN not negotiated: behave as Reno.
    reno: bool,
    credit: u64,
    alpha: f64,
    saw_ce: bool,
    /// Fractional window change not yet applied, in bytes (negative: reduction owed).
    carry: f64,
    in_loss: bool,
    // The current round (one RTT of data): ends when SND.UNA passes `next_seq`.
    next_seq: u64,
    round_acked: u64,
    round_ce: u64,
    round_min_rtt: Option<Dur>,
    /// Rounds of congestion avoidance so far.
    rounds: u32,
    alpha_stamp: SimTime,
    /// No new reduction until SND.UNA passes `cwr_end` (and, RTT-independent, a target RTT).
    cwr_end: u64,
    cwr_stamp: Option<SimTime>,
    classic: f64,
    /// Additive increase per RTT, in MSS (1, or (SRTT/target)² when RTT-independent).
    ai: f64,
    pace: Option<Rate>,
}

impl Prague {
    pub fn new(p: PragueParams, mss: u64) -> Prague {
        Prague {
            p,
            mss,
            reno: false,
            credit: 0,
            alpha: 1.0,
            saw_ce: false,
            carry: 0.0,
            in_loss: false,
            next_seq: 0,
            round_acked: 0,
            round_ce: 0,
            round_min_rtt: None,
            rounds: 0,
            alpha_stamp: SimTime::ZERO,
            cwr_end: 0,
            cwr_stamp: None,
            classic: 0.0,
            ai: 1.0,
            pace: None,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn classic_score(&self) -> f64 {
        self.classic
    }

    fn rtt_indep(&self, w: &Window) -> bool {
        self.p.rtt_independence == RttIndependence::Rate
            && !w.in_slow_start()
            && self.rounds >= self.p.rtt_transition
    }

    /// The α a reduction uses: floored by the classic-bottleneck score.
    fn effective_alpha(&self) -> f64 {
        if self.p.classic_fallback {
            self.alpha.max(CLASSIC_ALPHA * self.classic)
        } else {
            self.alpha
        }
    }

    fn end_round(&mut self, w: &Window, a: &AckSample) {
        if self.saw_ce {
            let f = if self.round_acked > 0 {
                (self.round_ce as f64 / self.round_acked as f64).min(1.0)
            } else {
                0.0
            };
            self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * f;
            if self.round_ce > 0 {
                if let (Some(r), Some(m)) = (self.round_min_rtt, a.min_rtt) {
                    // At low rates an L4S queue holding a packet or two already waits several
                    // ms (1500 B take 3 ms at 4 Mbit/s): the bar is at least two segments'
                    // time at this flow's rate (cwnd per min RTT), so a slow link is not read
                    // as a classic AQM.
                    let two_segments = (2 * w.mss) as u128 * m.0 as u128 / w.cwnd.max(1) as u128;
                    let bar = self.p.classic_delay.0.max(two_segments.min(u64::MAX as u128) as u64);
                    let classic = r.0.saturating_sub(m.0) > bar;
                    self.classic += CLASSIC_GAIN * (classic as u8 as f64 - self.classic);
                }
            }
        }
        self.alpha_stamp = a.now;
        self.next_seq = a.snd_nxt;
        self.round_acked = 0;
        self.round_ce = 0;
        self.round_min_rtt = None;
        if !w.in_slow_start() {
            self.rounds = self.rounds.saturating_add(1);
        }
        self.ai = match a.srtt {
            Some(s) if self.rtt_indep(w) && s < self.p.target_rtt => {
                let r = s.0 as f64 / self.p.target_rtt.0 as f64;
                r * r
            }
            _ => 1.0,
        };
    }

    fn update_pacing(&mut self, w: &Window, a: &AckSample) {
        self.pace = a.srtt.filter(|s| s.0 > 0).map(|s| {
            let segs = w.cwnd.max(a.in_flight) as f64 / self.mss as f64;
            let ratio = if w.cwnd < w.ssthresh / 2 { 2.0 } else { 1.0 };
            Rate::from_bytes_per_sec(
                ratio * segs * (self.mss + TCP_HEADER_BYTES as u64) as f64 / s.secs_f64(),
            )
        });
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn ecn_setup(&mut self, feedback: EcnMode) -> EcnUse {
        self.reno = feedback != EcnMode::AccEcn;
        if self.reno {
            self.pace = None;
            EcnUse { ect: Ecn::Ect0, scalable: false }
        } else {
            EcnUse { ect: Ecn::Ect1, scalable: true }
        }
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if self.reno {
            reno_grow(w, &mut self.credit, a);
            return;
        }
        let mss = w.mss as f64;
        let ce = a.ce_bytes.min(a.acked_bytes);
        self.saw_ce |= ce > 0;
        self.round_acked += a.acked_bytes;
        self.round_ce += ce;
        if let Some(r) = a.rtt {
            self.round_min_rtt = Some(self.round_min_rtt.map_or(r, |m| m.min(r)));
        }
        // Reaction: a CWR episode at most once per round (and per target RTT when
        // RTT-independent); the reduction is owed to the carry and paid per ACK.
        let target_wait =
            self.rtt_indep(w) && self.cwr_stamp.is_some_and(|t| a.now.since(t) < self.p.target_rtt);
        if ce > 0 && a.snd_una >= self.cwr_end && !target_wait {
            self.cwr_end = a.snd_nxt;
            self.cwr_stamp = Some(a.now);
            self.carry -= self.effective_alpha() * w.cwnd as f64 / 2.0;
        }
        // Additive increase on the bytes that came back unmarked.
        let clean = a.acked_bytes - ce;
        if clean > 0 && !self.in_loss && a.cwnd_limited && !a.ca_state.reducing() {
            let left = if w.in_slow_start() { slow_start(w, clean) } else { clean };
            if left > 0 && !w.in_slow_start() {
                self.carry += self.ai * left as f64 * mss / w.cwnd as f64;
            }
        }
        // Pay the carry out one MSS per ACK.
        if self.carry <= -mss {
            self.carry += mss;
            w.cwnd = w.cwnd.saturating_sub(w.mss).max(2 * w.mss);
            if w.cwnd == 2 * w.mss {
                self.carry = self.carry.max(0.0);
            }
            w.ssthresh = w.cwnd;
        } else if self.carry >= mss {
            self.carry -= mss;
            w.cwnd += w.mss;
        }
        let window_done = a.snd_una >= self.next_seq && a.snd_una > 0;
        let target_done = !self.rtt_indep(w) || a.now.since(self.alpha_stamp) >= self.p.target_rtt;
        if window_done && target_done {
            self.end_round(w, a);
        }
        self.update_pacing(w, a);
    }

    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent) {
        let _ = e;
        w.ssthresh = halve(w);
        self.credit = 0;
        self.carry = 0.0;
        self.in_loss = !self.reno;
    }

    fn on_recovery_exit(&mut self, _w: &mut Window, _now: SimTime) {
        self.in_loss = false;
    }

    fn pacing_rate(&self) -> Option<Rate> {
        if self.reno {
            None
        } else {
            self.pace
        }
    }

    fn state_label(&self, w: &Window) -> &'static str {
        match () {
            _ if self.reno => "reno_fallback",
            _ if w.in_slow_start() => "slow_start",
            _ if self.p.classic_fallback && self.classic > 0.5 => "classic_ecn",
            _ => "cong_avoid",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MSS: u64 = 1000;

    fn prague(p: PragueParams) -> Prague {
        let mut c = Prague::new(p, MSS);
        assert_eq!(c.ecn_setup(EcnMode::AccEcn), EcnUse { ect: Ecn::Ect1, scalable: true });
        c
    }

    fn ack(t_ms: u64, una: u64, nxt: u64, bytes: u64, ce: u64) -> AckSample {
        let mut a =
            AckSample::test(SimTime(Dur::from_millis(t_ms).0), bytes, Some(Dur::from_millis(20)));
        a.snd_una = una;
        a.snd_nxt = nxt;
        a.ce_bytes = ce;
        a
    }

    #[test]
    fn reduction_is_decided_once_per_round_and_paid_one_mss_per_ack() {
        let mut c = prague(PragueParams::default());
        let mut w = Window { cwnd: 40 * MSS, ssthresh: 40 * MSS, mss: MSS };
        c.next_seq = u64::MAX; // hold the round open
        c.alpha = 0.5;
        // First marked ACK: α·cwnd/2 = 10 MSS owed, one paid now.
        c.on_ack(&mut w, &ack(0, 1000, 40_000, 1000, 1000));
        assert_eq!(w.cwnd, 39 * MSS);
        // Further marked ACKs in the same round add no new reduction; the debt is paid ACK by ACK.
        for i in 0..9 {
            c.on_ack(&mut w, &ack(1, 2000 + i * 1000, 40_000, 1000, 1000));
            assert_eq!(w.cwnd, (38 - i) * MSS, "ack {i}");
        }
        assert_eq!(w.cwnd, 30 * MSS);
        for i in 0..5 {
            c.on_ack(&mut w, &ack(2, 11_000 + i * 1000, 40_000, 1000, 1000));
        }
        assert_eq!(
            w.cwnd,
            30 * MSS,
            "no second reduction within the round, no growth on marked bytes"
        );
        assert_eq!(w.ssthresh, 30 * MSS);
        // A new round (una past cwr_end): the next mark opens a new episode.
        c.on_ack(&mut w, &ack(3, 40_001, 80_000, 1000, 1000));
        assert_eq!(w.cwnd, 29 * MSS);
    }

    #[test]
    fn alpha_is_updated_per_round_from_the_marked_fraction() {
        let mut c = prague(PragueParams::default());
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 10 * MSS, mss: MSS };
        // No marks yet: α stays at 1 across rounds.
        c.on_ack(&mut w, &ack(0, 1000, 10_000, 1000, 0));
        c.on_ack(&mut w, &ack(20, 10_000, 20_000, 1000, 0));
        assert_eq!(c.alpha, 1.0);
        // A round of 10 ACKs, 2 marked: F = 0.2.
        for i in 0..10 {
            c.on_ack(
                &mut w,
                &ack(21 + i, 11_000 + i * 1000, 30_000, 1000, if i < 2 { 1000 } else { 0 }),
            );
        }
        // The round ended when una reached 20_000: F = 2000 / 10_000.
        let want = 15.0 / 16.0 + 0.2 / 16.0;
        assert!((c.alpha - want).abs() < 1e-9, "alpha {} want {want}", c.alpha);
    }

    #[test]
    fn additive_increase_counts_unmarked_bytes_and_scales_with_rtt_independence() {
        let mut c = prague(PragueParams::default());
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 10 * MSS, mss: MSS };
        c.next_seq = u64::MAX;
        for _ in 0..10 {
            c.on_ack(&mut w, &ack(0, 1000, 100_000, 1000, 0));
        }
        assert_eq!(w.cwnd, 11 * MSS, "one MSS per window of unmarked bytes");

        let p = PragueParams {
            rtt_independence: RttIndependence::Rate,
            rtt_transition: 0,
            target_rtt: Dur::from_millis(40),
            ..PragueParams::default()
        };
        let mut c = prague(p);
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 10 * MSS, mss: MSS };
        // The first round ends once a window is acked and a target RTT has passed: ai = (20/40)².
        let mut a = ack(50, 1000, 2000, 1000, 0);
        a.srtt = Some(Dur::from_millis(20));
        c.on_ack(&mut w, &a);
        assert!((c.ai - 0.25).abs() < 1e-12, "{}", c.ai);
    }

    #[test]
    fn falls_back_to_reno_without_accecn() {
        let mut c = Prague::new(PragueParams::default(), MSS);
        assert_eq!(c.ecn_setup(EcnMode::Classic), EcnUse { ect: Ecn::Ect0, scalable: false });
        assert_eq!(c.pacing_rate(), None);
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS };
        for _ in 0..10 {
            c.on_ack(&mut w, &ack(0, 1000, 10_000, 1000, 0));
        }
        assert_eq!(w.cwnd, 11 * MSS);
        assert_eq!(c.state_label(&w), "reno_fallback");
    }

    #[test]
    fn classic_queue_raises_the_alpha_floor() {
        let mut c = prague(PragueParams::default());
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 100 * MSS, mss: MSS };
        c.saw_ce = true;
        c.alpha = 0.02;
        let mut una = 0;
        for round in 0..12 {
            let nxt = una + 100 * MSS;
            // Every round: one mark, the smallest RTT 10 ms above the path minimum.
            let mut a = ack(round * 30, una + 1, nxt, 1000, 1000);
            a.rtt = Some(Dur::from_millis(30));
            a.min_rtt = Some(Dur::from_millis(20));
            c.on_ack(&mut w, &a);
            una = nxt;
        }
        assert!(c.classic > 0.9, "score {}", c.classic);
        assert!(c.effective_alpha() > 0.5);
        // An L4S-like queue (0.5 ms) brings it back down.
        for round in 12..30 {
            let nxt = una + 100 * MSS;
            let mut a = ack(round * 30, una + 1, nxt, 1000, 1000);
            a.rtt = Some(Dur(Dur::from_millis(20).0 + 500_000));
            a.min_rtt = Some(Dur::from_millis(20));
            c.on_ack(&mut w, &a);
            una = nxt;
        }
        assert!(c.classic < 0.01, "score {}", c.classic);
    }

    #[test]
    fn paces_at_cwnd_over_srtt_in_congestion_avoidance() {
        let mut c = prague(PragueParams::default());
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 10 * MSS, mss: MSS };
        let mut a = ack(0, 1000, 2000, 1000, 0);
        a.srtt = Some(Dur::from_millis(10));
        c.on_ack(&mut w, &a);
        let want = 10.0 * (MSS + TCP_HEADER_BYTES as u64) as f64 / 0.010;
        assert!((c.pacing_rate().unwrap().bytes_per_sec() - want).abs() < 1.0);
    }

    #[test]
    fn params_are_checked() {
        let p = |v: serde_json::Value| {
            let mut t = Table::new("flows[0].cc_params", &v).unwrap();
            PragueParams::read(&mut t)
        };
        let ok = p(json!({"rtt_independence": "rate", "target_rtt": "15ms", "rtt_transition": 0}))
            .unwrap();
        assert_eq!(
            (ok.rtt_independence, ok.target_rtt, ok.rtt_transition),
            (RttIndependence::Rate, Dur::from_millis(15), 0)
        );
        let e = p(json!({"rtt_independence": "additive"})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.rtt_independence");
        assert!(e.message.contains("off, rate"), "{e}");
        let e = p(json!({"target_rtt": "0s"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "flows[0].cc_params.target_rtt: must be greater than 0 (got \"0s\")"
        );
        let e = p(json!({"target_rtt": 25})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.target_rtt");
        let e = p(json!({"rtt_transition": -1})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.rtt_transition");
        let e = p(json!({"classic_fallback": "yes"})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.classic_fallback");
        let e = p(json!({"g": 2})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.g");
    }
}
