//! BBR v1 as Linux runs it (`net/ipv4/tcp_bbr.c`; Cardwell et al., ACM Queue 2016). BBR
//! models the path by its bottleneck bandwidth (windowed max of delivery-rate samples over 10
//! round trips) and its round-trip propagation time (windowed min RTT over 10 s), paces at
//! gain × bandwidth and caps in-flight data at cwnd_gain × BDP. Modes: STARTUP (gain 2/ln 2
//! until the bandwidth stops growing by 25 % for 3 rounds), DRAIN (inverse gain until the
//! queue made in STARTUP is gone), PROBE_BW (the 8-phase gain cycle 1.25, 0.75, 1 × 6) and
//! PROBE_RTT (cwnd 4 packets for 200 ms and one round, when the min RTT is 10 s old).
//!
//! Also as in Linux: packet conservation in the first round of recovery and cwnd restored on
//! exit, the long-term ("policer") bandwidth estimate, the ACK-aggregation allowance, the
//! quantization budget, the 1 % pacing margin and the pacing rate that only rises before the
//! pipe is full. Rates are bytes of payload per second in floating point (Linux: packets per
//! µs in fixed point); the window is kept in whole segments.
//!
//! Differences from Linux, all because the simulator has no such thing: there is no TSO
//! offload; the TSO-size goal (Linux's formula, ~1 ms of data at the pacing rate, at least 2
//! segments above 1.2 Mbit/s) sizes the quantization budget and the GSO bursts the core sends
//! per pacing slot (`tcp.gso`); ACK delay is not signalled, so a
//! min-RTT sample is never refused as "delayed"; and PROBE_RTT's "mark the flow app-limited"
//! is kept inside the controller (samples whose reference packet was sent while the mark was
//! set count as app-limited) because the controller cannot write the core's rate sampler.

use super::minmax::MaxFilter;
use super::registry::{CcEntry, CcKind, CcTransport, NoParams};
use super::RateSample;
use super::{AckSample, CaState, CongestionControl, CongestionEvent, CongestionKind, Window};
use crate::engine::SimRng;
use crate::units::{Dur, Rate, SimTime};
use crate::wire::TCP_HEADER_BYTES;
use std::sync::Arc;

pub(super) const ENTRY: CcEntry = CcEntry {
    name: "bbr",
    doc: "BBR v1 as Linux runs it",
    keys: &[],
    extra: CcKind { transport: CcTransport::Tcp, plus: Some("bbr+") },
    parse: |_, _| Ok(Arc::new(NoParams(|ctx| Box::new(Bbr::new(ctx.mss, ctx.rng))))),
};

/// STARTUP gain, 2/ln 2 written as 2885/1000 (TCP BBR's results were made with it).
const HIGH_GAIN: f64 = 2885.0 / 1000.0;
/// The same gain in Linux's fixed point, BBR_UNIT·2885/1000 + 1 = 739/256: the arithmetic
/// DCCP-BBR was written with (see `dccp_bbr`).
pub(super) const LINUX_HIGH_GAIN: f64 = 739.0 / 256.0;
/// DRAIN pacing gain, its inverse.
const DRAIN_GAIN: f64 = 1000.0 / 2885.0;
pub(super) const CWND_GAIN: f64 = 2.0;
pub(super) const PACING_GAIN: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
const CYCLE_RAND: u64 = 7;
/// Bandwidth filter window, in round trips.
pub(super) const BW_RTTS: u64 = 10;
pub(super) const MIN_RTT_WIN: Dur = Dur::from_secs(10);
pub(super) const PROBE_RTT_TIME: Dur = Dur::from_millis(200);
/// Minimum cwnd, and cwnd in PROBE_RTT (packets).
pub(super) const CWND_MIN_TARGET: u64 = 4;
pub(super) const FULL_BW_THRESH: f64 = 1.25;
pub(super) const FULL_BW_CNT: u32 = 3;
const PACING_MARGIN: f64 = 0.01;
pub(super) const INIT_CWND: u64 = 10;
/// Below this pacing rate the TSO goal is one segment (bbr_min_tso_rate).
const MIN_TSO_RATE_BPS: f64 = 1_200_000.0;
/// Linux's default sk_pacing_shift: a TSO burst is ~1 ms of data at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// Largest GSO burst (64 KB minus headers), bytes.
const GSO_MAX_BYTES: f64 = 65_536.0 - 1.0 - 320.0;
// Long-term (policer) bandwidth estimation.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: f64 = 50.0 / 256.0;
const LT_BW_RATIO: f64 = 1.0 / 8.0;
/// 4 kbit/s, in bytes per second.
const LT_BW_DIFF: f64 = 4000.0 / 8.0;
const LT_BW_MAX_RTTS: u32 = 48;
// ACK aggregation.
const EXTRA_ACKED_GAIN: f64 = 1.0;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const EXTRA_ACKED_MAX: Dur = Dur::from_millis(100);
const ACK_EPOCH_RESET_PKTS: u64 = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    /// The state label of time series (shared by TCP and DCCP BBR).
    pub fn label(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

pub struct Bbr {
    mss: u64,
    rng: SimRng,
    started: bool,
    mode: Mode,
    /// Max filter of delivery rate (bytes/s), keyed by round count.
    bw: MaxFilter,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt: Option<Dur>,
    min_rtt_stamp: SimTime,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// cwnd saved before recovery or PROBE_RTT, packets.
    prior_cwnd: u64,
    prev_ca_state: CaState,
    packet_conservation: bool,
    idle_restart: bool,
    cycle_idx: usize,
    cycle_stamp: SimTime,
    pacing_gain: f64,
    cwnd_gain: f64,
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    pacing_rate: f64,
    has_seen_rtt: bool,
    /// PROBE_RTT's app-limited mark: samples of packets sent while the connection's delivered
    /// count was in [mark_from, mark_until] are app-limited.
    mark_from: u64,
    mark_until: u64,
    // Long-term bandwidth.
    lt_is_sampling: bool,
    lt_use_bw: bool,
    lt_bw: f64,
    lt_rtt_cnt: u32,
    lt_last_stamp: SimTime,
    lt_last_delivered: u64,
    lt_last_lost: u64,
    /// Bytes marked lost over the connection.
    lost: u64,
    /// The connection's delivered count at the last ACK.
    delivered: u64,
    // ACK aggregation (packets, as Linux counts them).
    ack_epoch_stamp: SimTime,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// Times PROBE_RTT was entered (diagnostics, tests).
    pub probe_rtt_entries: u64,
}

impl Bbr {
    pub fn new(mss: u64, rng: SimRng) -> Bbr {
        Bbr {
            mss: mss.max(1),
            rng,
            started: false,
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            cycle_idx: 0,
            cycle_stamp: SimTime::ZERO,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            // Before an RTT is known: the initial window per nominal 1 ms, at high gain.
            pacing_rate: HIGH_GAIN * (1.0 - PACING_MARGIN) * (INIT_CWND * mss.max(1)) as f64 / 1e-3,
            has_seen_rtt: false,
            mark_from: 0,
            mark_until: 0,
            lt_is_sampling: false,
            lt_use_bw: false,
            lt_bw: 0.0,
            lt_rtt_cnt: 0,
            lt_last_stamp: SimTime::ZERO,
            lt_last_delivered: 0,
            lt_last_lost: 0,
            lost: 0,
            delivered: 0,
            ack_epoch_stamp: SimTime::ZERO,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            probe_rtt_entries: 0,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    /// The bandwidth the model uses (the long-term estimate when policing was detected).
    fn bw(&self) -> f64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// Payload bytes per second → the pacing rate the core applies to wire bytes.
    fn pacing_rate_for(&self, bw: f64, gain: f64) -> f64 {
        bw * gain * (1.0 - PACING_MARGIN)
    }

    fn tso_segs_goal(&self) -> u64 {
        let min = if self.pacing_rate * 8.0 < MIN_TSO_RATE_BPS { 1 } else { 2 };
        let bytes = (self.pacing_rate / (1u64 << PACING_SHIFT) as f64).min(GSO_MAX_BYTES);
        ((bytes / self.mss as f64) as u64).max(min).min(0x7F)
    }

    /// BDP × gain in packets, rounded up; the initial window before any RTT sample.
    fn bdp(&self, bw: f64, gain: f64) -> u64 {
        match self.min_rtt {
            None => INIT_CWND,
            Some(rtt) => (bw * rtt.secs_f64() * gain / self.mss as f64).ceil() as u64,
        }
    }

    fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut c = cwnd + 3 * self.tso_segs_goal();
        c = (c + 1) & !1; // round up to even
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            c += 2;
        }
        c
    }

    fn inflight(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_ca_state != CaState::Recovery
            && self.prev_ca_state != CaState::Loss
            && self.mode != Mode::ProbeRtt
        {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn reset_startup(&mut self) {
        self.mode = Mode::Startup;
    }

    fn reset_probe_bw(&mut self, now: SimTime) {
        self.mode = Mode::ProbeBw;
        // Start at a random phase other than the 0.75 drain phase.
        self.cycle_idx =
            (PACING_GAIN.len() as u64 - 1 - self.rng.range_u64(0, CYCLE_RAND - 1)) as usize;
        self.advance_cycle(now);
    }

    fn reset_mode(&mut self, now: SimTime) {
        if self.full_bw_reached {
            self.reset_probe_bw(now);
        } else {
            self.reset_startup();
        }
    }

    fn advance_cycle(&mut self, now: SimTime) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len();
        self.cycle_stamp = now;
    }

    fn reset_lt_interval(&mut self, now: SimTime, delivered: u64) {
        self.lt_last_stamp = now;
        self.lt_last_delivered = delivered;
        self.lt_last_lost = self.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt(&mut self, now: SimTime, delivered: u64) {
        self.lt_bw = 0.0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_interval(now, delivered);
    }

    fn lt_interval_done(&mut self, now: SimTime, delivered: u64, bw: f64) {
        if self.lt_bw > 0.0 {
            let diff = (bw - self.lt_bw).abs();
            if diff <= LT_BW_RATIO * self.lt_bw || diff <= LT_BW_DIFF {
                // Two consistent lossy intervals: a policer. Use their average.
                self.lt_bw = (bw + self.lt_bw) / 2.0;
                self.lt_use_bw = true;
                self.pacing_gain = 1.0;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_interval(now, delivered);
    }

    /// Linux bbr_lt_bw_sampling.
    fn lt_sampling(&mut self, now: SimTime, delivered: u64, losses: u64, app_limited: bool) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt(now, delivered);
                    self.reset_probe_bw(now);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if losses == 0 {
                return;
            }
            self.reset_lt_interval(now, delivered);
            self.lt_is_sampling = true;
        }
        if app_limited {
            self.reset_lt(now, delivered);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt(now, delivered);
            return;
        }
        if losses == 0 {
            return;
        }
        let lost = self.lost - self.lt_last_lost;
        let dlv = delivered - self.lt_last_delivered;
        if dlv == 0 || (lost as f64) < LT_LOSS_THRESH * dlv as f64 {
            return;
        }
        let t = now.since(self.lt_last_stamp);
        if t < Dur::from_millis(1) {
            return;
        }
        self.lt_interval_done(now, delivered, dlv as f64 / t.secs_f64());
    }

    fn sample_app_limited(&self, rs: &RateSample) -> bool {
        rs.app_limited
            || (self.mark_until > 0
                && rs.prior_delivered >= self.mark_from
                && rs.prior_delivered <= self.mark_until)
    }

    /// Linux bbr_update_bw: round counting and the bandwidth filter.
    fn update_bw(&mut self, a: &AckSample, rs: Option<&RateSample>, app_limited: bool) {
        self.round_start = false;
        let Some(rs) = rs else { return };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = a.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_sampling(a.now, a.delivered, a.lost_bytes, app_limited);
        let bw = rs.delivered as f64 / rs.interval.secs_f64();
        if !app_limited || bw >= self.max_bw() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// Whole packets the bandwidth estimate delivers in `d`, truncated as Linux's integer
    /// division truncates them.
    fn whole_pkts_in(&self, d: Dur) -> u64 {
        (self.bw() * d.secs_f64() / self.mss as f64) as u64
    }

    /// Linux bbr_update_ack_aggregation: data ACKed beyond what bw × time explains. Counted
    /// as Linux counts it, in whole packets: the expected count is truncated, so the excess
    /// is the packets ACKed less that whole number.
    fn update_ack_aggregation(&mut self, a: &AckSample, valid: bool, cwnd: u64) {
        if !valid || a.acked_bytes == 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let acked = a.acked_bytes.div_ceil(self.mss);
        let epoch = a.now.since(self.ack_epoch_stamp);
        let mut expected = self.whole_pkts_in(epoch);
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + acked >= ACK_EPOCH_RESET_PKTS
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = a.now;
            expected = 0;
        }
        self.ack_epoch_acked += acked;
        let extra = (self.ack_epoch_acked - expected).min(cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// Extra cwnd (packets) for ACK aggregation, once the pipe is full.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.whole_pkts_in(EXTRA_ACKED_MAX);
        let aggr = (EXTRA_ACKED_GAIN * self.extra_acked[0].max(self.extra_acked[1]) as f64) as u64;
        aggr.min(max_aggr)
    }

    fn is_next_cycle_phase(&self, a: &AckSample) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| a.now.since(self.cycle_stamp) > m);
        let gain = self.pacing_gain;
        if gain == 1.0 {
            return full_length;
        }
        let inflight = a.prior_in_flight / self.mss;
        let bw = self.max_bw();
        if gain > 1.0 {
            return full_length && (a.lost_bytes > 0 || inflight >= self.inflight(bw, gain));
        }
        full_length || inflight <= self.inflight(bw, 1.0)
    }

    fn check_full_bw_reached(&mut self, app_limited: bool) {
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    fn check_drain(&mut self, w: &mut Window, a: &AckSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight(self.max_bw(), 1.0) * self.mss;
        }
        if self.mode == Mode::Drain && a.in_flight / self.mss <= self.inflight(self.max_bw(), 1.0) {
            self.reset_probe_bw(a.now); // the queue made in STARTUP is gone
        }
    }

    fn check_probe_rtt_done(&mut self, w: &mut Window, now: SimTime) {
        if self.probe_rtt_done.is_none_or(|d| now <= d) {
            return;
        }
        self.min_rtt_stamp = now; // wait a while until the next PROBE_RTT
        w.cwnd = w.cwnd.max(self.prior_cwnd * self.mss);
        self.reset_mode(now);
    }

    /// Linux bbr_update_min_rtt, including PROBE_RTT.
    fn update_min_rtt(&mut self, w: &mut Window, a: &AckSample) {
        let expired = a.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = a.rtt {
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = a.now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.probe_rtt_entries += 1;
            self.save_cwnd(w.cwnd / self.mss);
            self.probe_rtt_done = None;
            self.mark_from = a.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken now are low on purpose: mark them app-limited.
            self.mark_until = (a.delivered + a.in_flight).max(1);
            if self.probe_rtt_done.is_none() && a.in_flight <= CWND_MIN_TARGET * self.mss {
                self.probe_rtt_done = Some(a.now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = a.delivered;
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
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => {
                (if self.lt_use_bw { 1.0 } else { PACING_GAIN[self.cycle_idx] }, CWND_GAIN)
            }
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    fn set_pacing_rate(&mut self, bw: f64, gain: f64, srtt: Option<Dur>, cwnd: u64) {
        if !self.has_seen_rtt {
            if let Some(s) = srtt {
                // First RTT: pace the current window over it at high gain.
                self.has_seen_rtt = true;
                let s = s.secs_f64().max(1e-6);
                self.pacing_rate = self.pacing_rate_for((cwnd * self.mss) as f64 / s, HIGH_GAIN);
            }
        }
        let rate = self.pacing_rate_for(bw, gain);
        if rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// Linux bbr_set_cwnd_to_recover_or_restore; returns the new cwnd and whether packet
    /// conservation decided it.
    fn recover_or_restore(&mut self, a: &AckSample, acked: u64, cwnd: u64) -> (u64, bool) {
        let state = a.ca_state;
        let prev = self.prev_ca_state;
        let in_recovery = |s: CaState| matches!(s, CaState::Recovery | CaState::Loss);
        let mut cwnd = cwnd;
        let losses = a.lost_bytes.div_ceil(self.mss);
        if losses > 0 {
            cwnd = cwnd.saturating_sub(losses).max(1);
        }
        let in_flight = a.in_flight / self.mss;
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: packet conservation.
            self.packet_conservation = true;
            self.next_rtt_delivered = a.delivered; // start a round now
            cwnd = in_flight + acked;
        } else if in_recovery(prev) && !in_recovery(state) {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(in_flight + acked), true);
        }
        (cwnd, false)
    }

    fn set_cwnd(&mut self, w: &mut Window, a: &AckSample, bw: f64) {
        let mut cwnd = w.cwnd / self.mss;
        let acked = a.acked_bytes.div_ceil(self.mss);
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(a, acked, cwnd);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, self.cwnd_gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || a.delivered < INIT_CWND * self.mss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        w.cwnd = cwnd * self.mss;
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if !self.started {
            self.started = true;
            self.min_rtt = a.min_rtt;
            self.min_rtt_stamp = a.now;
            self.ack_epoch_stamp = a.now;
            self.lt_last_stamp = a.now;
        }
        self.lost += a.lost_bytes;
        self.delivered = a.delivered;
        let rs = a.rate;
        let app_limited = rs.as_ref().is_some_and(|r| self.sample_app_limited(r));
        // bbr_update_model
        self.update_bw(a, rs.as_ref(), app_limited);
        self.update_ack_aggregation(a, rs.is_some(), w.cwnd / self.mss);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(a) {
            self.advance_cycle(a.now);
        }
        self.check_full_bw_reached(app_limited);
        self.check_drain(w, a);
        self.update_min_rtt(w, a);
        self.update_gains();
        // pacing, then cwnd
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, a.srtt, w.cwnd / self.mss);
        self.set_cwnd(w, a, bw);
    }

    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent) {
        // BBR does not reduce on loss: it only remembers the window to restore afterwards.
        self.save_cwnd(w.cwnd / self.mss);
        if e.kind == CongestionKind::Rto {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0.0;
            self.round_start = true; // an RTO ends the round
            self.lt_sampling(e.now, self.delivered, self.mss, false);
        }
    }

    /// Linux bbr_undo_cwnd: a reduction found spurious restarts the search for full
    /// bandwidth and the long-term sampling; the window stays BBR's own.
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u64, now: SimTime) -> u64 {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.reset_lt(now, self.delivered);
        w.cwnd
    }

    fn on_tx_start(&mut self, w: &mut Window, now: SimTime, _idle: Dur) {
        // Restarting from idle (the flow was application-limited).
        self.idle_restart = true;
        self.ack_epoch_stamp = now;
        self.ack_epoch_acked = 0;
        match self.mode {
            // Pace at the estimated bandwidth: no need to go faster after idle.
            Mode::ProbeBw => self.pacing_rate = self.pacing_rate_for(self.bw(), 1.0).max(1.0),
            Mode::ProbeRtt => self.check_probe_rtt_done(w, now),
            _ => {}
        }
    }

    fn owns_cwnd(&self) -> bool {
        true
    }

    /// bbr_tso_segs_goal: the burst Linux's BBR sends per pacing slot.
    fn tso_segs(&self) -> Option<u64> {
        Some(self.tso_segs_goal())
    }

    fn pacing_rate(&self) -> Option<Rate> {
        // The core paces wire bytes (payload + headers); the model's rates are payload.
        let wire = self.pacing_rate * (self.mss + TCP_HEADER_BYTES as u64) as f64 / self.mss as f64;
        Some(Rate::from_bytes_per_sec(wire))
    }

    fn state_label(&self, _w: &Window) -> &'static str {
        self.mode.label()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Stream;

    const MSS: u64 = 1000;

    fn ack(now_ms: u64, acked: u64, in_flight: u64, delivered: u64, state: CaState) -> AckSample {
        AckSample {
            now: SimTime(now_ms * 1_000_000),
            rtt: Some(Dur::from_millis(40)),
            srtt: Some(Dur::from_millis(40)),
            min_rtt: Some(Dur::from_millis(40)),
            acked_bytes: acked,
            prior_in_flight: in_flight + acked,
            in_flight,
            lost_bytes: 0,
            delivered,
            rate: Some(RateSample {
                delivered: 10 * MSS,
                interval: Dur::from_millis(40),
                rate: Rate(2_000_000),
                prior_delivered: delivered.saturating_sub(10 * MSS),
                app_limited: false,
            }),
            ca_state: state,
            cwnd_limited: true,
            snd_una: delivered,
            snd_nxt: delivered + in_flight,
            ce_bytes: 0,
            ce_pkts: 0,
            owd: None,
        }
    }

    #[test]
    fn loss_recovery_conserves_packets_then_restores_the_window() {
        let mut b = Bbr::new(MSS, SimRng::new(1, Stream::Endpoint, 0));
        let mut w = Window { cwnd: 40 * MSS, ssthresh: u64::MAX, mss: MSS };
        for i in 1..=5 {
            b.on_ack(&mut w, &ack(i, MSS, 30 * MSS, i * MSS, CaState::Open));
        }
        let before = w.cwnd;
        // Fast retransmit: BBR keeps ssthresh and remembers cwnd.
        let ev = CongestionEvent {
            now: SimTime(6_000_000),
            kind: CongestionKind::FastRetransmit,
            flight_size: 0,
            in_flight: 0,
        };
        b.on_congestion_event(&mut w, &ev);
        assert_eq!(w.ssthresh, u64::MAX);
        // First ACK in recovery: cwnd = in flight + acked (packet conservation).
        b.on_ack(&mut w, &ack(7, MSS, 20 * MSS, 6 * MSS, CaState::Recovery));
        assert_eq!(w.cwnd, 21 * MSS);
        // Leaving recovery restores the saved window.
        b.on_ack(&mut w, &ack(8, MSS, 20 * MSS, 7 * MSS, CaState::Open));
        assert!(w.cwnd >= before, "{} < {before}", w.cwnd);
        assert!(b.pacing_rate().is_some());
    }

    /// Linux (bbr_update_ack_aggregation) counts the excess in whole packets: the packets
    /// ACKed in the epoch less the expected count truncated. 2 + 3 packets ACKed 0.5 ms into
    /// an epoch at 3.7 packets/ms expect 1 (1.85 truncated), an excess of 4; counted in
    /// bytes it was 3.15 packets, an allowance of 3.
    #[test]
    fn ack_aggregation_counts_whole_packets_as_linux() {
        let mut b = Bbr::new(MSS, SimRng::new(1, Stream::Endpoint, 0));
        b.lt_use_bw = true;
        b.lt_bw = 3_700_000.0; // bytes/s: 3.7 packets per ms
        b.full_bw_reached = true;
        let mut a = ack(10, 2 * MSS, 10 * MSS, 2 * MSS, CaState::Open);
        b.update_ack_aggregation(&a, true, 100);
        assert_eq!(b.extra_acked[b.extra_acked_win_idx], 2);
        a.now = SimTime(10_500_000);
        a.acked_bytes = 3 * MSS;
        b.update_ack_aggregation(&a, true, 100);
        assert_eq!(b.extra_acked[b.extra_acked_win_idx], 4);
        assert_eq!(b.ack_aggregation_cwnd(), 4);
        // The allowance is capped at 100 ms of the bandwidth (370 packets), the excess at cwnd.
        a.now = SimTime(10_600_000);
        a.acked_bytes = 500 * MSS;
        b.update_ack_aggregation(&a, true, 300);
        assert_eq!(b.extra_acked[b.extra_acked_win_idx], 300);
    }

    #[test]
    fn first_probe_bw_phase_is_never_the_drain_phase() {
        let mut b = Bbr::new(MSS, SimRng::new(3, Stream::Endpoint, 0));
        for _ in 0..200 {
            b.reset_probe_bw(SimTime::ZERO);
            assert_ne!(b.cycle_idx, 1);
        }
    }
}
