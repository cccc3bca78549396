//! BBRv3 as specified in draft-ietf-ccwg-bbr-04 (Cardwell, Swett, Beshay; October 2025),
//! written from the draft's text; where the draft is silent, the facts of Google's published
//! v3 release (github.com/google/bbr, branch v3, net/ipv4/tcp_bbr.c) are used, each marked
//! "(Linux v3)" below. The code is our own.
//!
//! Model: max_bw (windowed max of delivery rate over the last two ProbeBW cycles: the draft's MaxBwFilterLen),
//! min_rtt (10 s window) refreshed by ProbeRTT every 5 s (ProbeRTTInterval), the long-term
//! bounds `inflight_hi` (set where probing met loss or ECN above the thresholds) and the
//! short-term bounds `bw_lo` / `inflight_lo` (cut by BBRBeta = 0.7 toward the loss round's
//! latest delivery signals, once per loss round with loss while not probing). bw = min(max_bw, bw_lo).
//!
//! States and gains (the draft's state machine and its parameter list): Startup pacing 2.77, cwnd 2; exit on a
//! bandwidth plateau (< 25 % growth for 3 rounds) or on high loss (≥ 6 lost packets and a loss
//! rate above BBRLossThresh = 2 % in a round; inflight_hi then = max(BDP, the round's
//! delivered data)) or, with ECN, a CE fraction above 50 % for two rounds (Linux v3). Drain
//! pacing 0.35 until inflight ≤ BDP. ProbeBW: DOWN (pacing 0.9) until inflight ≤ BDP and below
//! the headroom bound; CRUISE (1.0) until it is time to probe — a random 2–3 s wall-clock wait
//! or, if sooner, min(BDP in packets, 63) rounds (Reno coexistence); REFILL (1.0) for one
//! round with the short-term bounds reset; UP (pacing 1.25, cwnd gain 2.25), growing
//! inflight_hi by 1, 2, 4, ... packets per round, until a min_rtt has passed and inflight
//! exceeds 1.25 × BDP, or the loss rate (or CE fraction) says inflight is too high —
//! then inflight_hi = max(inflight at the round's start, BBRBeta × target inflight) and DOWN.
//! In CRUISE (and ProbeRTT) cwnd leaves Headroom (15 %) below inflight_hi. ProbeRTT: cwnd =
//! BDP/2 for 200 ms and a round. Pacing at gain × bw × 0.99; cwnd = min(cwnd + acked,
//! cwnd_gain × BDP + quantization budget), at least 4 packets; fast recovery only saves cwnd
//! and its end restores it (draft-04: no packet conservation).
//!
//! ECN (the `ecn` parameter, off by default): the flow asks for Accurate ECN and sends ECT(1),
//! so DualPI2 queues it as L4S (the draft's model takes ECN as a congestion signal beside loss); without it (or
//! with a peer that negotiates less than AccECN) data is Not-ECT, since marks would go
//! unanswered. Per round, α is
//! an EWMA (gain 1/16, Linux v3) of the CE-marked fraction; a round with marks outside probing
//! scales inflight_lo by (1 − α/3) (Linux v3's ecn_factor = 1/3); a CE fraction above 50 %
//! (Linux v3's ecn_thresh) while probing is treated as inflight too high. Linux v3 uses ECN
//! only when min_rtt ≤ 5 ms; here the parameter decides.
//!
//! Simplified (the simulator's rate sample carries no per-packet `tx_in_flight` nor a count of
//! discontiguous loss ranges): loss rate = bytes lost in the round / max(inflight when the
//! round began, bytes delivered + lost in the round), checked on every ACK with losses while
//! probing and at each round's end (the draft's per-packet check can only stop UP sooner);
//! Startup's "6 loss events" counts lost packets, without "in recovery for a full round".
//! UP ends on the older drafts' rule (a min_rtt passed and inflight > 1.25 BDP), not
//! draft-04's delivery-rate plateau (BBRIsTimeToGoDown). (BBROnEnterRTO's cwnd = inflight +
//! 1 packet is the TCP core's, for every controller.) No ACK
//! aggregation allowance (extra_acked) — the simulator's ACKs are not aggregated unless a
//! scenario asks for it. The sending quantum is the draft's (1 ms at the pacing rate, 2..64 KB).

use super::registry::{BuildCtx, CcBuild, CcEntry, CcKind, CcTransport};
use super::{
    read_f64, AckSample, CaState, CongestionControl, CongestionEvent, CongestionKind, EcnUse,
    Window,
};
use crate::engine::SimRng;
use crate::net::Ecn;
use crate::params::{Res, Table};
use crate::units::{Dur, Rate, SimTime};
use crate::wire::{EcnMode, TCP_HEADER_BYTES};
use std::sync::Arc;

pub(super) const ENTRY: CcEntry = CcEntry {
    name: "bbr3",
    doc: "BBRv3 (draft-ietf-ccwg-bbr-04): loss- and ECN-bounded BBR",
    keys: &["ecn", "loss_thresh", "beta", "headroom"],
    extra: CcKind { transport: CcTransport::Tcp, plus: None },
    parse: |t, _| Ok(Arc::new(Bbr3Params::read(t)?)),
};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bbr3Params {
    /// Use ECN (AccECN feedback, ECT(1) data).
    pub ecn: bool,
    /// BBRLossThresh.
    pub loss_thresh: f64,
    /// BBRBeta.
    pub beta: f64,
    /// BBRHeadroom.
    pub headroom: f64,
}

impl Default for Bbr3Params {
    fn default() -> Self {
        Bbr3Params { ecn: false, loss_thresh: 0.02, beta: 0.7, headroom: 0.15 }
    }
}

impl Bbr3Params {
    fn read(t: &mut Table) -> Res<Bbr3Params> {
        let d = Bbr3Params::default();
        Ok(Bbr3Params {
            ecn: t.opt_bool("ecn")?.unwrap_or(d.ecn),
            loss_thresh: read_f64(t, "loss_thresh", 0.0, true, 1.0, true)?.unwrap_or(d.loss_thresh),
            beta: read_f64(t, "beta", 0.0, true, 1.0, true)?.unwrap_or(d.beta),
            headroom: read_f64(t, "headroom", 0.0, false, 1.0, true)?.unwrap_or(d.headroom),
        })
    }
}

impl CcBuild for Bbr3Params {
    fn build(&self, ctx: BuildCtx) -> Box<dyn CongestionControl> {
        Box::new(Bbr3::new(*self, ctx.mss, ctx.rng))
    }
    /// With ECN on, BBRv3 asks for Accurate ECN (per-ACK CE counts), as an L4S sender must.
    fn ecn_needs(&self) -> Option<EcnMode> {
        self.ecn.then_some(EcnMode::AccEcn)
    }
}

const STARTUP_PACING_GAIN: f64 = 2.77;
const STARTUP_CWND_GAIN: f64 = 2.0;
/// BBRDrainPacingGain (Linux v3's 1000/2885 rounds to the same).
const DRAIN_PACING_GAIN: f64 = 0.35;
const CWND_GAIN: f64 = 2.0;
const UP_PACING_GAIN: f64 = 1.25;
const UP_CWND_GAIN: f64 = 2.25;
const DOWN_PACING_GAIN: f64 = 0.9;
const PACING_MARGIN: f64 = 0.01;
/// BBRMinPipeCwnd, packets.
const MIN_PIPE_CWND: u64 = 4;
const INIT_CWND: u64 = 10;
const PROBE_RTT_CWND_GAIN: f64 = 0.5;
const PROBE_RTT_DURATION: Dur = Dur::from_millis(200);
const PROBE_RTT_INTERVAL: Dur = Dur::from_secs(5);
const MIN_RTT_FILTER_LEN: Dur = Dur::from_secs(10);
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_COUNT: u32 = 3;
const STARTUP_FULL_LOSS_COUNT: u64 = 6;
/// Rounds of CE fraction above the threshold that end Startup (Linux v3's full_ecn_cnt).
const STARTUP_FULL_ECN_COUNT: u32 = 2;
const ECN_ALPHA_GAIN: f64 = 1.0 / 16.0;
const ECN_THRESH: f64 = 0.5;
const ECN_FACTOR: f64 = 1.0 / 3.0;
/// The Reno-coexistence bound on rounds between probes.
const MAX_RENO_ROUNDS: u64 = 63;
/// Send quantum limits.
const MIN_SEND_QUANTUM_RATE_BPS: f64 = 1_200_000.0;
const MAX_SEND_QUANTUM: f64 = 64.0 * 1024.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bbr3State {
    Startup,
    Drain,
    Down,
    Cruise,
    Refill,
    Up,
    ProbeRtt,
}

impl Bbr3State {
    pub fn label(self) -> &'static str {
        match self {
            Bbr3State::Startup => "startup",
            Bbr3State::Drain => "drain",
            Bbr3State::Down => "probe_bw_down",
            Bbr3State::Cruise => "probe_bw_cruise",
            Bbr3State::Refill => "probe_bw_refill",
            Bbr3State::Up => "probe_bw_up",
            Bbr3State::ProbeRtt => "probe_rtt",
        }
    }
    fn is_probe_bw(self) -> bool {
        matches!(self, Bbr3State::Down | Bbr3State::Cruise | Bbr3State::Refill | Bbr3State::Up)
    }
    /// Startup, Refill and Up probe for bandwidth: the short-term bounds are not cut then.
    fn is_probing(self) -> bool {
        matches!(self, Bbr3State::Startup | Bbr3State::Refill | Bbr3State::Up)
    }
}

pub struct Bbr3 {
    p: Bbr3Params,
    mss: u64,
    rng: SimRng,
    started: bool,
    state: Bbr3State,
    // Rounds.
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    // Model (rates in payload bytes/s, volumes in bytes).
    bw_hi: [f64; 2],
    bw_lo: f64,
    inflight_hi: f64,
    inflight_lo: f64,
    min_rtt: Option<Dur>,
    min_rtt_stamp: SimTime,
    probe_rtt_min_delay: Option<Dur>,
    probe_rtt_min_stamp: SimTime,
    // The current round's signals.
    bw_latest: f64,
    inflight_latest: f64,
    round_delivered: u64,
    round_lost: u64,
    round_ce: u64,
    round_start_inflight: u64,
    /// The loss round (BBRNoteLoss / BBRUpdateLatestDeliverySignals): it ends when a packet
    /// sent after `loss_round_delivered` is delivered, and restarts at the first loss of a
    /// round; the lower bounds adapt once per loss round.
    loss_round_delivered: u64,
    loss_in_round: bool,
    /// A CE mark arrived in this loss round (Linux v3's ecn_in_round).
    ecn_in_round: bool,
    /// The too-high response already happened in this round.
    round_too_high: bool,
    ecn_alpha: f64,
    saw_ce: bool,
    ecn_rounds_high: u32,
    // Startup.
    full_bw: f64,
    full_bw_count: u32,
    full_bw_reached: bool,
    // ProbeBW.
    cycle_stamp: SimTime,
    rounds_since_bw_probe: u64,
    bw_probe_wait: Dur,
    bw_probe_samples: bool,
    probe_up_cnt: u64,
    probe_up_acks: u64,
    probe_up_rounds: u32,
    // ProbeRTT.
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    idle_restart: bool,
    /// Samples of packets sent while the delivered count was in [mark_from, mark_until] are
    /// app-limited (ProbeRTT's deliberately low rate; as `bbr`).
    mark_from: u64,
    mark_until: u64,
    // Recovery.
    prior_cwnd: u64,
    prev_ca_state: CaState,
    delivered: u64,
    pacing_gain: f64,
    cwnd_gain: f64,
    pacing_rate: f64,
    has_seen_rtt: bool,
    ecn_on: bool,
    /// Times ProbeRTT was entered, times inflight was found too high (diagnostics, tests).
    pub probe_rtt_entries: u64,
    pub too_high_events: u64,
}

impl Bbr3 {
    pub fn new(p: Bbr3Params, mss: u64, rng: SimRng) -> Bbr3 {
        let mss = mss.max(1);
        Bbr3 {
            p,
            mss,
            rng,
            started: false,
            state: Bbr3State::Startup,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            bw_hi: [0.0; 2],
            bw_lo: f64::INFINITY,
            inflight_hi: f64::INFINITY,
            inflight_lo: f64::INFINITY,
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: SimTime::ZERO,
            bw_latest: 0.0,
            inflight_latest: 0.0,
            round_delivered: 0,
            round_lost: 0,
            round_ce: 0,
            round_start_inflight: 0,
            loss_round_delivered: 0,
            loss_in_round: false,
            ecn_in_round: false,
            round_too_high: false,
            ecn_alpha: 1.0,
            saw_ce: false,
            ecn_rounds_high: 0,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_reached: false,
            cycle_stamp: SimTime::ZERO,
            rounds_since_bw_probe: 0,
            bw_probe_wait: Dur::from_secs(2),
            bw_probe_samples: false,
            probe_up_cnt: u64::MAX,
            probe_up_acks: 0,
            probe_up_rounds: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            mark_from: 0,
            mark_until: 0,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            delivered: 0,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            // Before an RTT is known: the initial window per nominal 1 ms, at Startup's gain.
            pacing_rate: STARTUP_PACING_GAIN * (INIT_CWND * mss) as f64 / 1e-3,
            has_seen_rtt: false,
            ecn_on: false,
            probe_rtt_entries: 0,
            too_high_events: 0,
        }
    }

    pub fn state(&self) -> Bbr3State {
        self.state
    }

    pub fn inflight_hi(&self) -> f64 {
        self.inflight_hi
    }

    fn max_bw(&self) -> f64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// The bandwidth the model uses: max_bw bounded by bw_lo.
    fn bw(&self) -> f64 {
        self.max_bw().min(self.bw_lo)
    }

    /// gain × bw × min_rtt in bytes; the initial window before any RTT sample.
    fn bdp_multiple(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            None => (INIT_CWND * self.mss) as f64,
            Some(r) => gain * bw * r.secs_f64(),
        }
    }

    fn send_quantum(&self) -> u64 {
        let floor = if self.pacing_rate * 8.0 < MIN_SEND_QUANTUM_RATE_BPS { 1 } else { 2 };
        let q = (self.pacing_rate * 1e-3).min(MAX_SEND_QUANTUM);
        ((q / self.mss as f64) as u64).max(floor)
    }

    /// BBRInflight: the BDP multiple plus the quantization budget (3 send quanta; 2 packets
    /// more in ProbeBW_UP), in bytes.
    fn inflight(&self, bw: f64, gain: f64) -> f64 {
        let mut x = self.bdp_multiple(bw, gain) + (3 * self.send_quantum() * self.mss) as f64;
        if self.state == Bbr3State::Up {
            x += (2 * self.mss) as f64;
        }
        x
    }

    fn inflight_with_headroom(&self) -> f64 {
        if self.inflight_hi.is_infinite() {
            return f64::INFINITY;
        }
        let h = (self.p.headroom * self.inflight_hi).max(self.mss as f64);
        (self.inflight_hi - h).max((MIN_PIPE_CWND * self.mss) as f64)
    }

    fn target_inflight(&self, cwnd: u64) -> f64 {
        self.bdp_multiple(self.bw(), 1.0).min(cwnd as f64)
    }

    fn start_round(&mut self, delivered: u64) {
        self.next_round_delivered = delivered;
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = f64::INFINITY;
        self.inflight_lo = f64::INFINITY;
    }

    // ProbeBW phase transitions (BBRStartProbeBW_DOWN / _CRUISE / _REFILL / _UP).

    fn start_down(&mut self, now: SimTime, delivered: u64) {
        // A new cycle: the bandwidth filter's older slot is dropped.
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0.0;
        self.bw_probe_samples = false;
        // BBRResetCongestionSignals.
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0.0;
        self.probe_up_cnt = u64::MAX;
        // BBRPickProbeWait: 0 or 1 rounds, 2-3 s of wall time.
        self.rounds_since_bw_probe = self.rng.range_u64(0, 1);
        self.bw_probe_wait = Dur::from_secs_f64(2.0 + self.rng.uniform());
        self.cycle_stamp = now;
        self.start_round(delivered);
        self.state = Bbr3State::Down;
    }

    fn start_cruise(&mut self) {
        self.state = Bbr3State::Cruise;
    }

    fn start_refill(&mut self, delivered: u64) {
        self.reset_lower_bounds();
        self.probe_up_rounds = 0;
        self.probe_up_acks = 0;
        self.start_round(delivered);
        self.state = Bbr3State::Refill;
    }

    fn start_up(&mut self, now: SimTime, delivered: u64, cwnd: u64) {
        self.bw_probe_samples = true;
        self.start_round(delivered);
        self.cycle_stamp = now;
        self.state = Bbr3State::Up;
        self.raise_inflight_hi_slope(cwnd);
    }

    /// Inflight_hi grows by 1, 2, 4, ... packets per round of UP.
    fn raise_inflight_hi_slope(&mut self, cwnd: u64) {
        let growth = 1u64 << self.probe_up_rounds.min(30);
        self.probe_up_rounds = (self.probe_up_rounds + 1).min(30);
        self.probe_up_cnt = (cwnd / self.mss / growth).max(1);
    }

    fn probe_inflight_hi_upward(&mut self, a: &AckSample, cwnd: u64) {
        // cwnd is whole segments: within one segment of inflight_hi is "at" it.
        if !a.cwnd_limited || ((cwnd + self.mss) as f64) <= self.inflight_hi {
            return; // not using all of inflight_hi: no reason to raise it
        }
        self.probe_up_acks += a.acked_bytes.div_ceil(self.mss);
        if self.probe_up_acks >= self.probe_up_cnt {
            let delta = self.probe_up_acks / self.probe_up_cnt;
            self.probe_up_acks -= delta * self.probe_up_cnt;
            self.inflight_hi += (delta * self.mss) as f64;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(cwnd);
        }
    }

    fn has_elapsed_in_phase(&self, now: SimTime, d: Dur) -> bool {
        now > self.cycle_stamp + d
    }

    fn is_reno_coexistence_probe_time(&self, cwnd: u64) -> bool {
        let rounds = ((self.target_inflight(cwnd) / self.mss as f64) as u64).min(MAX_RENO_ROUNDS);
        self.rounds_since_bw_probe >= rounds
    }

    fn is_time_to_probe_bw(&mut self, a: &AckSample, cwnd: u64) -> bool {
        if self.has_elapsed_in_phase(a.now, self.bw_probe_wait)
            || self.is_reno_coexistence_probe_time(cwnd)
        {
            self.start_refill(a.delivered);
            return true;
        }
        false
    }

    /// Inflight was too high (loss or CE above threshold while probing): remember where, and
    /// stop probing.
    fn handle_inflight_too_high(&mut self, a: &AckSample, cwnd: u64) {
        self.too_high_events += 1;
        self.round_too_high = true;
        self.bw_probe_samples = false;
        let at = self.round_start_inflight.max(a.prior_in_flight) as f64;
        self.inflight_hi = at.max(self.p.beta * self.target_inflight(cwnd));
        if self.state == Bbr3State::Up {
            self.start_down(a.now, a.delivered);
        }
    }

    fn loss_rate_too_high(&self) -> bool {
        let base = self.round_start_inflight.max(self.round_delivered + self.round_lost);
        base > 0 && self.round_lost as f64 > self.p.loss_thresh * base as f64
    }

    fn ce_too_high(&self) -> bool {
        self.ecn_on
            && self.round_delivered > 0
            && self.round_ce as f64 > ECN_THRESH * self.round_delivered as f64
    }

    /// BBRAdaptLowerBoundsFromCongestion, once per loss round and not while probing:
    /// BBRInitLowerBounds then BBRLossLowerBounds; with ECN, marks scale inflight_lo by
    /// (1 − α/3) (Linux v3).
    fn adapt_lower_bounds(&mut self, cwnd: u64) {
        if self.state.is_probing() {
            return;
        }
        let ecn_marked = self.ecn_on && self.ecn_in_round;
        if self.loss_in_round || ecn_marked {
            if self.bw_lo.is_infinite() {
                self.bw_lo = self.max_bw();
            }
            if self.inflight_lo.is_infinite() {
                self.inflight_lo = cwnd as f64;
            }
        }
        if ecn_marked {
            self.inflight_lo *= 1.0 - self.ecn_alpha * ECN_FACTOR;
        }
        if self.loss_in_round {
            self.bw_lo = self.bw_latest.max(self.p.beta * self.bw_lo);
            self.inflight_lo = self.inflight_latest.max(self.p.beta * self.inflight_lo);
        }
    }

    /// The round that just ended: Startup's loss/ECN exit, ECN's α, the per-round counters.
    fn end_round(&mut self, a: &AckSample, cwnd: u64) {
        if self.ecn_on && (self.saw_ce || self.round_ce > 0) && self.round_delivered > 0 {
            self.saw_ce = true;
            let f = (self.round_ce as f64 / self.round_delivered as f64).min(1.0);
            self.ecn_alpha = (1.0 - ECN_ALPHA_GAIN) * self.ecn_alpha + ECN_ALPHA_GAIN * f;
        }
        if self.state == Bbr3State::Startup {
            let lost_pkts = self.round_lost / self.mss;
            let high_loss = lost_pkts >= STARTUP_FULL_LOSS_COUNT && self.loss_rate_too_high();
            self.ecn_rounds_high = if self.ce_too_high() { self.ecn_rounds_high + 1 } else { 0 };
            if high_loss || self.ecn_rounds_high >= STARTUP_FULL_ECN_COUNT {
                // BBRCheckStartupHighLoss: the pipe is full; inflight_hi at the volume the path held.
                self.inflight_hi = self.bdp_multiple(self.max_bw(), 1.0).max(self.inflight_latest);
                self.full_bw_reached = true;
                self.too_high_events += 1;
            }
        } else if self.bw_probe_samples && !self.round_too_high && self.ce_too_high() {
            self.handle_inflight_too_high(a, cwnd);
        }
        self.round_delivered = 0;
        self.round_lost = 0;
        self.round_ce = 0;
        self.round_too_high = false;
        self.round_start_inflight = a.prior_in_flight;
    }

    fn sample_app_limited(&self, a: &AckSample) -> bool {
        a.rate.is_some_and(|rs| {
            rs.app_limited
                || (self.mark_until > 0
                    && rs.prior_delivered >= self.mark_from
                    && rs.prior_delivered <= self.mark_until)
        })
    }

    fn check_full_bw_reached(&mut self, app_limited: bool) {
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.max_bw();
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= FULL_BW_COUNT;
    }

    fn update_probe_bw_phase(&mut self, a: &AckSample, cwnd: u64) {
        if !self.full_bw_reached || !self.state.is_probe_bw() {
            return;
        }
        // BBRAdaptUpperBounds: raise inflight_hi while UP meets no trouble.
        if self.bw_probe_samples && !self.round_too_high && self.state == Bbr3State::Up {
            if self.inflight_hi.is_finite() && a.prior_in_flight as f64 > self.inflight_hi {
                self.inflight_hi = a.prior_in_flight as f64;
            }
            self.probe_inflight_hi_upward(a, cwnd);
        }
        let inflight = a.in_flight as f64;
        match self.state {
            Bbr3State::Down => {
                if self.is_time_to_probe_bw(a, cwnd) {
                    return;
                }
                if inflight <= self.inflight_with_headroom()
                    && inflight <= self.inflight(self.max_bw(), 1.0)
                {
                    self.start_cruise();
                }
            }
            Bbr3State::Cruise => {
                self.is_time_to_probe_bw(a, cwnd);
            }
            Bbr3State::Refill if self.round_start => self.start_up(a.now, a.delivered, cwnd),
            Bbr3State::Up => {
                if let Some(m) = self.min_rtt {
                    if self.has_elapsed_in_phase(a.now, m)
                        && a.prior_in_flight as f64 > self.inflight(self.max_bw(), UP_PACING_GAIN)
                    {
                        self.start_down(a.now, a.delivered);
                    }
                }
            }
            _ => {}
        }
    }

    fn save_cwnd(&mut self, cwnd: u64) {
        if !matches!(self.prev_ca_state, CaState::Recovery | CaState::Loss)
            && self.state != Bbr3State::ProbeRtt
        {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn probe_rtt_cwnd(&self) -> u64 {
        let c = self.bdp_multiple(self.bw(), PROBE_RTT_CWND_GAIN) as u64;
        c.max(MIN_PIPE_CWND * self.mss)
    }

    fn exit_probe_rtt(&mut self, w: &mut Window, now: SimTime) {
        self.reset_lower_bounds();
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        if self.full_bw_reached {
            self.start_down(now, self.delivered);
            self.start_cruise();
        } else {
            self.state = Bbr3State::Startup;
        }
    }

    fn check_probe_rtt_done(&mut self, w: &mut Window, now: SimTime) {
        if self.probe_rtt_done.is_some_and(|d| now > d) {
            self.probe_rtt_min_stamp = now; // the next ProbeRTT is ProbeRTTInterval away
            self.exit_probe_rtt(w, now);
        }
    }

    /// BBRUpdateMinRTT and BBRCheckProbeRTT: the min-RTT filters and ProbeRTT.
    fn update_min_rtt(&mut self, w: &mut Window, a: &AckSample) {
        let probe_rtt_expired = a.now > self.probe_rtt_min_stamp + PROBE_RTT_INTERVAL;
        if let Some(rtt) = a.rtt {
            if self.probe_rtt_min_delay.is_none_or(|m| rtt < m) || probe_rtt_expired {
                self.probe_rtt_min_delay = Some(rtt);
                self.probe_rtt_min_stamp = a.now;
            }
        }
        let min_rtt_expired = a.now > self.min_rtt_stamp + MIN_RTT_FILTER_LEN;
        if let Some(d) = self.probe_rtt_min_delay {
            if self.min_rtt.is_none_or(|m| d < m) || min_rtt_expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
        if self.state != Bbr3State::ProbeRtt && probe_rtt_expired && !self.idle_restart {
            self.state = Bbr3State::ProbeRtt;
            self.probe_rtt_entries += 1;
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done = None;
            self.mark_from = a.delivered;
            self.bw_probe_samples = false;
            self.start_round(a.delivered);
        }
        if self.state == Bbr3State::ProbeRtt {
            self.mark_until = (a.delivered + a.in_flight).max(1);
            if self.probe_rtt_done.is_none() && a.in_flight <= self.probe_rtt_cwnd() {
                self.probe_rtt_done = Some(a.now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.start_round(a.delivered);
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(w, a.now);
                }
            }
        }
        if a.rate.is_some_and(|r| r.delivered > 0) {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.state {
            Bbr3State::Startup => (STARTUP_PACING_GAIN, STARTUP_CWND_GAIN),
            Bbr3State::Drain => (DRAIN_PACING_GAIN, STARTUP_CWND_GAIN),
            Bbr3State::Down => (DOWN_PACING_GAIN, CWND_GAIN),
            Bbr3State::Cruise | Bbr3State::Refill => (1.0, CWND_GAIN),
            Bbr3State::Up => (UP_PACING_GAIN, UP_CWND_GAIN),
            Bbr3State::ProbeRtt => (1.0, CWND_GAIN),
        };
    }

    fn set_pacing_rate(&mut self, srtt: Option<Dur>, cwnd: u64) {
        if !self.has_seen_rtt {
            if let Some(s) = srtt {
                self.has_seen_rtt = true;
                let s = s.secs_f64().max(1e-6);
                self.pacing_rate = STARTUP_PACING_GAIN * (1.0 - PACING_MARGIN) * cwnd as f64 / s;
            }
        }
        let rate = self.pacing_gain * self.bw() * (1.0 - PACING_MARGIN);
        if rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// Loss recovery (draft-04 "Modulating cwnd in Loss Recovery"): entering fast recovery
    /// only saves cwnd (BBROnEnterFastRecovery, via `on_congestion_event`); cwnd then follows
    /// the normal rule, and leaving recovery restores the saved value (BBRRestoreCwnd). No
    /// packet conservation and no deduction of newly lost data: those are v1's (and Linux's)
    /// and the draft dropped them.
    fn restore_after_recovery(&mut self, a: &AckSample, cwnd: u64) -> u64 {
        let in_rec = |s: CaState| matches!(s, CaState::Recovery | CaState::Loss);
        let restored = if in_rec(self.prev_ca_state) && !in_rec(a.ca_state) {
            cwnd.max(self.prior_cwnd)
        } else {
            cwnd
        };
        self.prev_ca_state = a.ca_state;
        restored
    }

    fn set_cwnd(&mut self, w: &mut Window, a: &AckSample) {
        let mut cwnd = w.cwnd;
        if a.acked_bytes > 0 {
            cwnd = self.restore_after_recovery(a, cwnd);
            let max_inflight = self.inflight(self.bw(), self.cwnd_gain) as u64;
            if self.full_bw_reached {
                cwnd = (cwnd + a.acked_bytes).min(max_inflight);
            } else if cwnd < max_inflight || a.delivered < INIT_CWND * self.mss {
                cwnd += a.acked_bytes;
            }
            cwnd = cwnd.max(MIN_PIPE_CWND * self.mss);
        }
        if self.state == Bbr3State::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd());
        }
        // BBRBoundCwndForModel.
        let cap = match self.state {
            Bbr3State::Down | Bbr3State::Refill | Bbr3State::Up => self.inflight_hi,
            Bbr3State::Cruise | Bbr3State::ProbeRtt => self.inflight_with_headroom(),
            _ => f64::INFINITY,
        }
        .min(self.inflight_lo);
        if cap.is_finite() {
            cwnd = cwnd.min((cap as u64).max(MIN_PIPE_CWND * self.mss));
        }
        // Whole segments, as the core sends them.
        w.cwnd = (cwnd / self.mss).max(1) * self.mss;
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn ecn_setup(&mut self, feedback: EcnMode) -> EcnUse {
        // ECN only with per-ACK CE counts (AccECN). Otherwise BBRv3 does not answer CE marks,
        // so it must not claim ECN capability (RFC 3168 §6.1.1): Not-ECT, and an AQM drops.
        self.ecn_on = self.p.ecn && feedback == EcnMode::AccEcn;
        if self.ecn_on {
            EcnUse { ect: Ecn::Ect1, scalable: true }
        } else {
            EcnUse { ect: Ecn::NotEct, scalable: false }
        }
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if !self.started {
            self.started = true;
            self.min_rtt = a.min_rtt;
            self.probe_rtt_min_delay = a.min_rtt;
            self.min_rtt_stamp = a.now;
            self.probe_rtt_min_stamp = a.now;
            self.round_start_inflight = a.prior_in_flight;
        }
        self.delivered = a.delivered;
        let cwnd = w.cwnd;
        // BBRNoteLoss (the per-loss steps run before the ACK's): the first loss of a loss
        // round restarts it, so the lower bounds adapt a round trip after that loss.
        if a.lost_bytes > 0 {
            if !self.loss_in_round {
                self.loss_round_delivered = a.delivered;
            }
            self.loss_in_round = true;
        }
        if self.ecn_on && a.ce_bytes > 0 {
            self.ecn_in_round = true;
        }
        // Round accounting (BBRUpdateRound), the finished round's signals first.
        self.round_start = false;
        if let Some(rs) = a.rate {
            if rs.prior_delivered >= self.next_round_delivered {
                self.end_round(a, cwnd);
                self.next_round_delivered = a.delivered;
                self.round_count += 1;
                self.rounds_since_bw_probe += 1;
                self.round_start = true;
            }
        }
        self.round_delivered += a.acked_bytes;
        self.round_lost += a.lost_bytes;
        if self.ecn_on {
            self.round_ce += a.ce_bytes.min(a.acked_bytes);
        }
        let app_limited = self.sample_app_limited(a);
        // BBRUpdateLatestDeliverySignals, then BBRUpdateCongestionSignals (the max_bw
        // sample; the lower bounds once per loss round).
        let mut loss_round_start = false;
        let mut sample_bw = 0.0;
        if let Some(rs) = a.rate {
            sample_bw = rs.delivered as f64 / rs.interval.secs_f64().max(1e-9);
            self.bw_latest = self.bw_latest.max(sample_bw);
            self.inflight_latest = self.inflight_latest.max(rs.delivered as f64);
            if rs.prior_delivered >= self.loss_round_delivered {
                self.loss_round_delivered = a.delivered;
                loss_round_start = true;
            }
            if !app_limited || sample_bw >= self.max_bw() {
                self.bw_hi[1] = self.bw_hi[1].max(sample_bw);
            }
        }
        if loss_round_start {
            self.adapt_lower_bounds(cwnd);
            self.loss_in_round = false;
            self.ecn_in_round = false;
        }
        // Loss while probing: inflight too high (BBRHandleLostPacket), at most once per round.
        if a.lost_bytes > 0
            && self.bw_probe_samples
            && !self.round_too_high
            && self.loss_rate_too_high()
        {
            self.handle_inflight_too_high(a, cwnd);
        }
        self.check_full_bw_reached(app_limited);
        if self.state == Bbr3State::Startup && self.full_bw_reached {
            self.state = Bbr3State::Drain;
        }
        if self.state == Bbr3State::Drain && a.in_flight as f64 <= self.inflight(self.bw(), 1.0) {
            self.start_down(a.now, a.delivered);
        }
        self.update_probe_bw_phase(a, cwnd);
        self.update_min_rtt(w, a);
        // BBRAdvanceLatestDeliverySignals: the next loss round starts from this sample.
        if let (true, Some(rs)) = (loss_round_start, a.rate) {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered as f64;
        }
        self.update_gains();
        self.set_pacing_rate(a.srtt, w.cwnd);
        self.set_cwnd(w, a);
    }

    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent) {
        // BBR does not cut on loss here: it remembers the window to restore after recovery;
        // the model's bounds react per round.
        if e.kind == CongestionKind::Ecn {
            return;
        }
        self.save_cwnd(w.cwnd);
        if e.kind == CongestionKind::Rto {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0.0;
            self.round_start = true;
        }
    }

    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u64, _now: SimTime) -> u64 {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        w.cwnd
    }

    fn on_tx_start(&mut self, w: &mut Window, now: SimTime, _idle: Dur) {
        self.idle_restart = true;
        if self.state.is_probe_bw() {
            self.pacing_rate = (self.bw() * (1.0 - PACING_MARGIN)).max(1.0);
        } else if self.state == Bbr3State::ProbeRtt {
            self.check_probe_rtt_done(w, now);
        }
    }

    fn owns_cwnd(&self) -> bool {
        true
    }

    fn tso_segs(&self) -> Option<u64> {
        Some(self.send_quantum())
    }

    fn pacing_rate(&self) -> Option<Rate> {
        let wire = self.pacing_rate * (self.mss + TCP_HEADER_BYTES as u64) as f64 / self.mss as f64;
        Some(Rate::from_bytes_per_sec(wire))
    }

    fn state_label(&self, _w: &Window) -> &'static str {
        self.state.label()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::RateSample;
    use crate::engine::Stream;
    use serde_json::json;

    const MSS: u64 = 1000;

    fn ack(ms: u64, delivered: u64, in_flight: u64, lost: u64) -> AckSample {
        let mut a =
            AckSample::test(SimTime(Dur::from_millis(ms).0), MSS, Some(Dur::from_millis(40)));
        a.delivered = delivered;
        a.in_flight = in_flight;
        a.prior_in_flight = in_flight + MSS;
        a.lost_bytes = lost;
        a.rate = Some(RateSample {
            delivered: 100 * MSS,
            interval: Dur::from_millis(40),
            rate: Rate(20_000_000),
            prior_delivered: delivered.saturating_sub(100 * MSS),
            app_limited: false,
        });
        a
    }

    fn bbr3() -> Bbr3 {
        Bbr3::new(Bbr3Params::default(), MSS, SimRng::new(1, Stream::Endpoint, 0))
    }

    #[test]
    fn startup_ends_on_high_loss_and_sets_inflight_hi() {
        let mut b = bbr3();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut d = 0;
        // Rounds of 100 ACKs; in the third, 10 of 100 packets are lost (10 % > 2 %, ≥ 6).
        for round in 0..3 {
            for i in 0..100 {
                d += MSS;
                let lost = if round == 2 && i % 10 == 0 { MSS } else { 0 };
                b.on_ack(&mut w, &ack(40 * round + i / 3, d, 100 * MSS, lost));
            }
        }
        assert_eq!(b.state(), Bbr3State::Startup);
        d += MSS;
        b.on_ack(&mut w, &ack(200, d + 100 * MSS, 100 * MSS, 0));
        assert!(b.full_bw_reached, "high loss ends Startup");
        assert!(b.inflight_hi.is_finite());
        assert_ne!(b.state(), Bbr3State::Startup);
    }

    #[test]
    fn lower_bounds_are_cut_by_beta_in_a_lossy_round_outside_probing() {
        let mut b = bbr3();
        b.full_bw_reached = true;
        b.state = Bbr3State::Cruise;
        b.bw_hi = [2_500_000.0, 0.0];
        b.bw_latest = 1_000_000.0;
        b.inflight_latest = 30_000.0;
        b.loss_in_round = true;
        b.adapt_lower_bounds(100 * MSS);
        assert_eq!(b.bw_lo, 0.7 * 2_500_000.0);
        assert_eq!(b.inflight_lo, 0.7 * 100_000.0);
        assert_eq!(b.bw(), 1_750_000.0);
        // While probing they are left alone.
        b.reset_lower_bounds();
        b.state = Bbr3State::Up;
        b.adapt_lower_bounds(100 * MSS);
        assert!(b.bw_lo.is_infinite() && b.inflight_lo.is_infinite());
    }

    /// BBRNoteLoss and BBRUpdateLatestDeliverySignals: a loss restarts the loss round, the
    /// bounds adapt once, at the first ACK for data sent after the loss was seen, from the
    /// round's largest delivery rate (here that of the round-ending ACK itself), and the next
    /// loss round starts from that sample.
    #[test]
    fn lower_bounds_adapt_once_per_loss_round_from_its_largest_sample() {
        let mut b = bbr3();
        let mut w = Window { cwnd: 100 * MSS, ssthresh: u64::MAX, mss: MSS };
        b.full_bw_reached = true;
        b.state = Bbr3State::Cruise;
        b.cycle_stamp = SimTime::ZERO;
        b.bw_probe_wait = Dur::from_secs(100);
        b.rounds_since_bw_probe = 0;
        b.min_rtt = Some(Dur::from_millis(40));
        b.probe_rtt_min_stamp = SimTime(Dur::from_secs(100).0);
        b.started = true;
        b.bw_hi = [2_500_000.0, 0.0];
        let sample = |ms: u64, delivered: u64, prior: u64, rate_pkts: u64, lost: u64| {
            let mut a = ack(ms, delivered, 90 * MSS, lost);
            let rs = a.rate.as_mut().unwrap();
            rs.delivered = rate_pkts * MSS;
            rs.prior_delivered = prior;
            a
        };
        // A loss at delivered = 1000 pkts: the loss round now ends at 1000 pkts.
        b.on_ack(&mut w, &sample(1, 1000 * MSS, 990 * MSS, 90, MSS));
        assert!(b.loss_in_round && b.bw_lo.is_infinite());
        // Samples of packets sent before the loss do not end it.
        b.on_ack(&mut w, &sample(2, 1001 * MSS, 999 * MSS, 80, 0));
        assert!(b.bw_lo.is_infinite());
        // A packet sent after it (prior_delivered 1000 pkts) ends it: 95 pkts / 40 ms.
        b.on_ack(&mut w, &sample(41, 1090 * MSS, 1000 * MSS, 95, 0));
        assert_eq!(b.bw_lo, 95_000.0 / 0.04);
        assert_eq!(b.inflight_lo, 95_000.0);
        assert!(!b.loss_in_round);
        // No loss in the next round: the bounds stay.
        b.on_ack(&mut w, &sample(90, 1200 * MSS, 1095 * MSS, 60, 0));
        assert_eq!(b.bw_lo, 95_000.0 / 0.04);
    }

    /// draft-04 BBROnEnterFastRecovery saves cwnd and nothing else: no packet conservation
    /// (v1's), so cwnd keeps growing toward the model's bound during recovery; leaving
    /// recovery restores the saved value (BBRRestoreCwnd).
    #[test]
    fn fast_recovery_saves_cwnd_without_packet_conservation() {
        let mut b = bbr3();
        b.full_bw_reached = true;
        b.state = Bbr3State::Cruise;
        b.min_rtt = Some(Dur::from_millis(40));
        b.bw_hi = [2_500_000.0, 0.0]; // BDP 100 pkts: max_inflight ≈ 200 pkts + quanta
        let mut w = Window { cwnd: 100 * MSS, ssthresh: u64::MAX, mss: MSS };
        let ev = CongestionEvent {
            now: SimTime::ZERO,
            kind: CongestionKind::FastRetransmit,
            flight_size: 100 * MSS,
            in_flight: 60 * MSS,
        };
        b.on_congestion_event(&mut w, &ev);
        assert_eq!(b.prior_cwnd, 100 * MSS);
        let mut a = ack(1, 0, 60 * MSS, MSS);
        a.ca_state = CaState::Recovery;
        b.set_cwnd(&mut w, &a);
        // v1 would set cwnd = in_flight + acked = 61 packets here.
        assert_eq!(w.cwnd, 101 * MSS);
        w.cwnd = 50 * MSS;
        a.ca_state = CaState::Open;
        a.lost_bytes = 0;
        b.set_cwnd(&mut w, &a);
        assert_eq!(w.cwnd, 101 * MSS, "restored to prior_cwnd, then + acked");
    }

    #[test]
    fn loss_above_the_threshold_in_up_sets_inflight_hi_and_goes_down() {
        let mut b = bbr3();
        b.full_bw_reached = true;
        b.min_rtt = Some(Dur::from_millis(40));
        b.bw_hi = [2_500_000.0, 0.0];
        b.start_up(SimTime::ZERO, 0, 100 * MSS);
        b.round_start_inflight = 120 * MSS;
        b.round_delivered = 50 * MSS;
        b.round_lost = 2 * MSS; // 2 of 120 > 2 %
        let a = ack(10, 50 * MSS, 118 * MSS, MSS);
        b.handle_inflight_too_high(&a, 120 * MSS);
        assert_eq!(b.state(), Bbr3State::Down);
        assert_eq!(b.inflight_hi, 120_000.0);
        assert!(!b.bw_probe_samples);
    }

    #[test]
    fn ecn_mode_sends_ect1_only_with_accecn() {
        let p = Bbr3Params { ecn: true, ..Bbr3Params::default() };
        let mut b = Bbr3::new(p, MSS, SimRng::new(1, Stream::Endpoint, 0));
        assert_eq!(b.ecn_setup(EcnMode::AccEcn), EcnUse { ect: Ecn::Ect1, scalable: true });
        assert_eq!(b.ecn_setup(EcnMode::Classic), EcnUse { ect: Ecn::NotEct, scalable: false });
        assert_eq!(p.ecn_needs(), Some(EcnMode::AccEcn));
        assert_eq!(Bbr3Params::default().ecn_needs(), None);
    }

    #[test]
    fn params_are_checked() {
        let p = |v: serde_json::Value| {
            let mut t = Table::new("flows[0].cc_params", &v).unwrap();
            Bbr3Params::read(&mut t)
        };
        let ok = p(json!({"ecn": true, "beta": 0.5, "loss_thresh": 0.05, "headroom": 0})).unwrap();
        assert_eq!(ok, Bbr3Params { ecn: true, loss_thresh: 0.05, beta: 0.5, headroom: 0.0 });
        let e = p(json!({"beta": 1.0})).unwrap_err();
        assert_eq!(e.to_string(), "flows[0].cc_params.beta: must be in (0, 1) (got 1)");
        assert_eq!(
            p(json!({"loss_thresh": 0})).unwrap_err().path,
            "flows[0].cc_params.loss_thresh"
        );
        assert_eq!(p(json!({"headroom": 1})).unwrap_err().path, "flows[0].cc_params.headroom");
        assert_eq!(p(json!({"ecn": "yes"})).unwrap_err().path, "flows[0].cc_params.ecn");
    }
}
