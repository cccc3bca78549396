//! SCReAM: Self-Clocked Rate Adaptation for Multimedia.
//!
//! Sources: RFC 8298 (Johansson, Sarker, 2017) for the architecture — a window of bytes in
//! flight clocked by per-packet feedback, a queue-delay estimate against a target, the media
//! rate derived from the window and the RTT (§4.1.2) — and, for the window rules and the L4S
//! mode, its successor draft-johansson-ccwg-rfc8298bis-screamv2 ("SCReAMv2"), sections
//! "Network Congestion Control" and "Reference Window Update":
//! - qdelay = one-way delay − base delay (the minimum seen; RFC 6817 style), averaged with a
//!   slow-attack fast-decay EWMA (QDELAY_AVG_G = 1/4) at most once per min(VIRTUAL_RTT, sRTT);
//! - congestion events at most once per min(VIRTUAL_RTT, sRTT): loss (ref_wnd × BETA_LOSS
//!   0.7), CE in L4S mode (ref_wnd × (1 − l4s_alpha/2), scaled down for RTTs above
//!   VIRTUAL_RTT 25 ms; l4s_alpha a fast-attack 1/8 slow-decay 1/128 EWMA of the fraction of
//!   CE-marked packets), classic CE (× BETA_ECN 0.8), and a "virtual CE" from delay: a
//!   back-off of l4s_alpha_v/2 with l4s_alpha_v rising linearly from 0 to 1 as qdelay_avg
//!   goes from qdelay_target/2 to qdelay_target (QDELAY_TARGET_LO = 60 ms);
//! - increase per feedback by the bytes newly acknowledged and not CE-marked times
//!   min(1, MSS/ref_wnd), scaled by min(1, sRTT/VIRTUAL_RTT), by the closeness to the last
//!   window at congestion (scl, ≥ 0.25) and by a multiplicative factor 1 + 0.02 ref_wnd/MSS
//!   that is relaxed over 100 RTTs after congestion; never above MSS + 1.5 × the largest
//!   bytes in flight of this or the last RTT, nor once the target has reached its maximum;
//! - the sender may send while bytes in flight < ref_wnd × REF_WND_OVERHEAD (1.5, the draft's
//!   minimum);
//! - "Media Rate Control": target_bitrate = 8 ref_wnd / sRTT × MSS/(MSS + 20) / (1.2 +
//!   rate_adjust_factor), the factor an integrator (gain 1/16, within [0, 0.5]) of the sender
//!   queue's delay beyond a quarter frame period, so the target sits below what the window
//!   drains;
//! - "Packet Pacing": max(50 kbit/s, target) × 1.5, relaxed up to 4× as the target nears its
//!   maximum (from 80 % of it) — the draft's only rule for pacing faster (read in the editor's
//!   copy of draft-ietf-ccwg-rfc8298bis-screamv2, 2026): nothing relaxes it for a short
//!   (L4S) queue, so a frame still leaves over 1/1.5 of the frame interval below the maximum.
//! - "Competing Flows Compensation" (RFC 8298 §4.1.2; SCReAMv2 keeps it unchanged in its
//!   "Congestion Detection" section, with QDELAY_TARGET_LO now 60 ms, where SCReAMv2 drops
//!   RFC 8298's qdelay_trend with the fast-increase mode it served): every report carrying a
//!   qdelay sample adds qdelay / QDELAY_TARGET_LO to a history (zeros at first); the new
//!   target is (average of the last 50 + standard deviation of the last 200) ×
//!   QDELAY_TARGET_LO, × 1.5 while the loss-event rate (the fraction of round trips with a
//!   loss) exceeds 0.002, as is while the variance is below 0.2, else the target decays (to
//!   the new target at once if that is below LO, else × 0.9 a sample); within
//!   [QDELAY_TARGET_LO, QDELAY_TARGET_HI = 0.4 s]. The RFC lets it be switched off where no
//!   competitor can share the bottleneck (`video.compensation = false`). Choices the texts
//!   leave open: one sample per feedback report (the RFC calls the rule per
//!   acknowledgement; a 200-sample history spans 4 s at a report per 20 ms, longer at low
//!   rates), the 200-sample ring (the RFC's state list says 100 while its rule takes the
//!   variance of 200), and loss_event_rate as a per-round-trip EWMA of "this round trip had a
//!   loss" with DCTCP's gain 1/16 (RFC 8257 §4.2; one lossy round trip keeps it above 0.002
//!   for ~53 round trips). A queue held above 0.4 s (CUBIC on a 1 s drop-tail buffer) is
//!   beyond the rule's reach by design: the delay back-off stays in full there.
//!
//! Simplified: no qdelay-deviation scaling (the draft's optional stability code), no frame-size
//! deviation term in the media rate, no reordering window (a missing packet in a report is lost),
//! the base delay is the minimum over the whole run (RFC 8298 keeps a 10-minute history).

use super::{PacketResult, RateControl};
use crate::units::{Dur, SimTime};

const QDELAY_TARGET_LO: f64 = 0.06;
const QDELAY_TARGET_HI: f64 = 0.4;
/// Competing-flow compensation: the normalised qdelay history's length (the variance is
/// taken over 200 samples, the average over the last 50) and the loss-event rate above
/// which loss-based competitors are presumed.
const QDELAY_NORM_HIST: usize = 200;
const QDELAY_NORM_AVG: usize = 50;
const LOSS_EVENT_RATE_TH: f64 = 0.002;
const QDELAY_NORM_VAR_TH: f64 = 0.2;
/// Gain of the per-round-trip EWMA that estimates loss_event_rate (neither RFC 8298 nor
/// SCReAMv2 gives the filter): DCTCP's g for its per-RTT fraction of marks (RFC 8257 §4.2).
const LOSS_EVENT_G: f64 = 1.0 / 16.0;
const QDELAY_AVG_G: f64 = 0.25;
const MIN_REF_WND: f64 = 3000.0;
const BYTES_IN_FLIGHT_HEAD_ROOM: f64 = 1.5;
const BETA_LOSS: f64 = 0.7;
const BETA_ECN: f64 = 0.8;
const MSS: f64 = 1000.0;
const POST_CONGESTION_DELAY_RTTS: f64 = 100.0;
const MUL_INCREASE_FACTOR: f64 = 0.02;
const VIRTUAL_RTT: f64 = 0.025;
const L4S_AVG_G_UP: f64 = 1.0 / 8.0;
const L4S_AVG_G_DOWN: f64 = 1.0 / 128.0;
const REF_WND_OVERHEAD: f64 = 1.5;
const PACKET_PACING_HEADROOM: f64 = 1.5;
const RATE_PACE_MIN: f64 = 50_000.0;
const MAX_RELAXED_PACING_FACTOR: f64 = 4.0;
const RELAXED_PACING_LIMIT_LOW: f64 = 0.8;
const PACKET_OVERHEAD: f64 = 20.0;
const RATE_ADJUST_GAIN: f64 = 1.0 / 16.0;

pub struct Scream {
    l4s: bool,
    lo: f64,
    hi: f64,
    start: f64,
    ref_wnd: f64,
    ref_wnd_i: f64,
    s_rtt: Option<f64>,
    base_owd: u64,
    qdelay: f64,
    qdelay_avg: f64,
    last_qavg: f64,
    l4s_alpha: f64,
    delivered: u32,
    marked: u32,
    last_alpha: f64,
    last_reaction: f64,
    last_congestion: f64,
    last_wnd_i: f64,
    max_bif: u64,
    max_bif_prev: u64,
    last_bif_rotate: f64,
    label: &'static str,
    rate_adjust: f64,
    /// Competing-flow compensation (RFC 8298 §4.1.2, kept by SCReAMv2): on, the target,
    /// the ring of normalised qdelay samples (RFC: initialised to zeros), the loss-event
    /// rate and the current round trip's loss flag and start.
    compensate: bool,
    qdelay_target: f64,
    norm_hist: [f64; QDELAY_NORM_HIST],
    norm_next: usize,
    loss_event_rate: f64,
    rtt_lossy: bool,
    rtt_start: f64,
}

impl Scream {
    pub fn new(start: f64, lo: f64, hi: f64, l4s: bool, compensate: bool) -> Scream {
        Scream {
            l4s,
            lo,
            hi,
            start,
            ref_wnd: MIN_REF_WND,
            ref_wnd_i: 1.0,
            s_rtt: None,
            base_owd: u64::MAX,
            qdelay: 0.0,
            qdelay_avg: 0.0,
            last_qavg: 0.0,
            l4s_alpha: 0.0,
            delivered: 0,
            marked: 0,
            last_alpha: 0.0,
            last_reaction: 0.0,
            last_congestion: 0.0,
            last_wnd_i: 0.0,
            max_bif: 0,
            max_bif_prev: 0,
            last_bif_rotate: 0.0,
            label: "ramp",
            rate_adjust: 0.0,
            compensate,
            qdelay_target: QDELAY_TARGET_LO,
            norm_hist: [0.0; QDELAY_NORM_HIST],
            norm_next: 0,
            loss_event_rate: 0.0,
            rtt_lossy: false,
            rtt_start: 0.0,
        }
    }

    /// The qdelay target (s): QDELAY_TARGET_LO, raised toward QDELAY_TARGET_HI by the
    /// competing-flow compensation.
    pub fn qdelay_target(&self) -> f64 {
        self.qdelay_target
    }

    /// RFC 8298 §4.1.2 "Competing Flows Compensation" (the same rule in SCReAMv2): a qdelay
    /// sample normalised by QDELAY_TARGET_LO joins the history; new target = (average of the
    /// last 50 + standard deviation of the last 200) × QDELAY_TARGET_LO. With losses (loss-
    /// event rate > 0.002) the target becomes 1.5 × that; with a steady queue (variance
    /// < 0.2: a competitor holding the queue near its drop point looks like this) it becomes
    /// that; otherwise it falls, at once toward the new target when that is below LO, else by
    /// 10 % a sample, so it cannot stay high for ever. Clamped to [LO, HI].
    fn adjust_qdelay_target(&mut self) {
        self.norm_hist[self.norm_next] = self.qdelay / QDELAY_TARGET_LO;
        self.norm_next = (self.norm_next + 1) % QDELAY_NORM_HIST;
        let n = QDELAY_NORM_HIST as f64;
        let mean_all = self.norm_hist.iter().sum::<f64>() / n;
        let var = self.norm_hist.iter().map(|x| (x - mean_all) * (x - mean_all)).sum::<f64>() / n;
        // The last 50 samples: the ring's newest, walking back from the write position.
        let avg = (1..=QDELAY_NORM_AVG)
            .map(|k| self.norm_hist[(self.norm_next + QDELAY_NORM_HIST - k) % QDELAY_NORM_HIST])
            .sum::<f64>()
            / QDELAY_NORM_AVG as f64;
        let new_target = (avg + var.sqrt()) * QDELAY_TARGET_LO;
        self.qdelay_target = if self.loss_event_rate > LOSS_EVENT_RATE_TH {
            1.5 * new_target
        } else if var < QDELAY_NORM_VAR_TH {
            new_target
        } else if new_target < QDELAY_TARGET_LO {
            (self.qdelay_target * 0.5).max(new_target)
        } else {
            self.qdelay_target * 0.9
        };
        self.qdelay_target = self.qdelay_target.clamp(QDELAY_TARGET_LO, QDELAY_TARGET_HI);
    }

    fn rate_from_wnd(&self) -> f64 {
        match self.s_rtt {
            Some(r) => {
                let scale = MSS / (MSS + PACKET_OVERHEAD) / (1.2 + self.rate_adjust);
                scale * 8.0 * self.ref_wnd / r.max(1e-3)
            }
            None => self.start,
        }
    }
}

impl RateControl for Scream {
    fn on_feedback(&mut self, now: SimTime, results: &[PacketResult], rtt: Dur, in_flight: u64) {
        let now = now.0 as f64 / 1e9;
        let r = rtt.0 as f64 / 1e9;
        let s_rtt = *self.s_rtt.get_or_insert(r);
        let s_rtt = s_rtt + (r - s_rtt) / 8.0;
        self.s_rtt = Some(s_rtt);
        let (mut acked, mut acked_ce, mut loss, mut sampled) = (0.0, 0.0, false, false);
        for p in results {
            acked += p.bytes as f64;
            match p.arrival {
                None => loss = true,
                Some(a) => {
                    self.delivered += 1;
                    if p.ce {
                        self.marked += 1;
                        acked_ce += p.bytes as f64;
                    }
                    let owd = a.0 - p.sent.0;
                    self.base_owd = self.base_owd.min(owd);
                    self.qdelay = (owd - self.base_owd) as f64 / 1e9;
                    sampled = true;
                }
            }
        }
        // Bytes in flight: the largest of this RTT and the last.
        self.max_bif = self.max_bif.max(in_flight);
        if now - self.last_bif_rotate >= s_rtt {
            self.max_bif_prev = self.max_bif;
            self.max_bif = in_flight;
            self.last_bif_rotate = now;
        }
        if now - self.last_alpha >= 0.01f64.min(s_rtt) && self.delivered > 0 {
            let f = self.marked as f64 / self.delivered as f64;
            self.l4s_alpha = if f >= self.l4s_alpha {
                L4S_AVG_G_UP * f + (1.0 - L4S_AVG_G_UP) * self.l4s_alpha
            } else {
                (1.0 - L4S_AVG_G_DOWN) * self.l4s_alpha
            };
            self.last_alpha = now;
            self.delivered = 0;
            self.marked = 0;
        }
        let react_every = VIRTUAL_RTT.min(s_rtt);
        if now - self.last_qavg >= react_every {
            self.qdelay_avg = if self.qdelay < self.qdelay_avg {
                self.qdelay
            } else {
                QDELAY_AVG_G * self.qdelay + (1.0 - QDELAY_AVG_G) * self.qdelay_avg
            };
            self.last_qavg = now;
        }
        // Reduction.
        let scl = {
            let s = (self.ref_wnd - self.ref_wnd_i) / self.ref_wnd_i * 8.0;
            (s * s).clamp(0.1, 1.0)
        };
        let ce = acked_ce > 0.0;
        if loss || ce {
            self.last_congestion = now;
        }
        let (mut is_loss, mut is_ce, mut virtual_ce) = (false, false, None);
        // loss_event_rate: the fraction of round trips with a loss, one EWMA step a round trip.
        self.rtt_lossy |= loss;
        if now - self.rtt_start >= s_rtt {
            let x = if self.rtt_lossy { 1.0 } else { 0.0 };
            self.loss_event_rate += LOSS_EVENT_G * (x - self.loss_event_rate);
            self.rtt_lossy = false;
            self.rtt_start = now;
        }
        let target = self.qdelay_target;
        if now - self.last_reaction >= react_every {
            if loss {
                is_loss = true;
            } else if ce {
                is_ce = true;
            } else if self.qdelay_avg > target / 2.0 {
                virtual_ce = Some(((self.qdelay_avg - target / 2.0) / (target / 2.0)).min(1.0));
            }
        }
        let reacting = is_loss || is_ce || virtual_ce.is_some();
        if reacting && now - self.last_wnd_i > 10.0 * s_rtt {
            self.last_wnd_i = now;
            self.ref_wnd_i = self.ref_wnd;
        }
        let rtt_scale = (s_rtt / VIRTUAL_RTT).max(1.0);
        if is_loss {
            self.ref_wnd *= BETA_LOSS;
            self.label = "loss";
        }
        if is_ce {
            if self.l4s {
                let backoff = self.l4s_alpha / 2.0 / rtt_scale;
                self.ref_wnd *= 1.0 - backoff;
                self.label = "ce";
            } else {
                self.ref_wnd *= BETA_ECN;
                self.label = "ecn";
            }
        }
        if let Some(a) = virtual_ce {
            self.ref_wnd *= 1.0 - a / 2.0 / rtt_scale;
            self.label = "delay";
        }
        self.ref_wnd = self.ref_wnd.max(MIN_REF_WND);
        if reacting {
            self.last_reaction = now;
        }
        // Increase.
        let post = ((now - self.last_congestion)
            / (POST_CONGESTION_DELAY_RTTS * VIRTUAL_RTT.max(s_rtt)))
        .clamp(0.0, 1.0);
        let ratio = (MSS / self.ref_wnd).min(1.0);
        let mut inc = (acked - acked_ce) * ratio;
        inc *= (s_rtt / VIRTUAL_RTT).min(1.0);
        inc *= scl.max(0.25);
        let mul = 1.0 + MUL_INCREASE_FACTOR * self.ref_wnd / MSS;
        inc *= if mul > 1.0 { 1.0 + (mul - 1.0) * post * scl } else { mul };
        let allowed = MSS + self.max_bif.max(self.max_bif_prev) as f64 * BYTES_IN_FLIGHT_HEAD_ROOM;
        if self.ref_wnd + inc <= allowed && self.rate_from_wnd() < self.hi {
            self.ref_wnd += inc;
            if !reacting {
                self.label = "increase";
            }
        }
        // RFC 8298 adjusts the target after the window, once per acknowledgement (report)
        // that carries a qdelay sample.
        if self.compensate && sampled {
            self.adjust_qdelay_target();
        }
    }

    fn on_frame(&mut self, media_qdelay: Dur, frame_period: Dur) {
        let (q, t) = (media_qdelay.0 as f64, frame_period.0 as f64);
        let error = (q - t / 4.0) / t;
        self.rate_adjust = (self.rate_adjust + error * RATE_ADJUST_GAIN).clamp(0.0, 0.5);
    }

    fn target_bps(&self) -> f64 {
        self.rate_from_wnd().clamp(self.lo, self.hi)
    }

    fn pacing_bps(&self) -> f64 {
        let target = self.target_bps();
        let pace = target.max(RATE_PACE_MIN) * PACKET_PACING_HEADROOM;
        let nominal = target / self.hi;
        let scale =
            ((nominal - RELAXED_PACING_LIMIT_LOW) / (1.0 - RELAXED_PACING_LIMIT_LOW)).min(1.0);
        pace / (1.0 - scale).clamp(1.0 / MAX_RELAXED_PACING_FACTOR, 1.0)
    }

    fn may_send(&self, in_flight: u64, _bytes: u32) -> bool {
        (in_flight as f64) < self.ref_wnd * REF_WND_OVERHEAD
    }

    fn ect1(&self) -> bool {
        self.l4s
    }

    fn window(&self) -> u64 {
        self.ref_wnd as u64
    }

    fn state(&self) -> &'static str {
        self.label
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(t0: u64, n: u64, qdelay_ns: u64, ce_every: u64) -> Vec<PacketResult> {
        (0..n)
            .map(|i| PacketResult {
                seq: i,
                sent: SimTime(t0 + i * 1_000_000),
                bytes: 1200,
                arrival: Some(SimTime(t0 + i * 1_000_000 + 20_000_000 + qdelay_ns)),
                ce: ce_every > 0 && i % ce_every == 0,
                cluster: None,
            })
            .collect()
    }

    #[test]
    fn no_queue_grows_the_window_and_l4s_marks_shrink_it() {
        let mut s = Scream::new(1e6, 1e5, 1e7, true, true);
        // Seed the base delay, then 50 reports 20 ms apart with no queue and plenty in flight.
        for k in 0..50u64 {
            let t = k * 20_000_000;
            s.on_feedback(
                SimTime(t + 40_000_000),
                &report(t, 10, 0, 0),
                Dur::from_millis(40),
                60_000,
            );
        }
        let grown = s.ref_wnd;
        assert!(grown > 2.0 * MIN_REF_WND, "{grown}");
        // Every other packet CE-marked: alpha climbs toward 1/2, the window falls.
        for k in 50..100u64 {
            let t = k * 20_000_000;
            s.on_feedback(
                SimTime(t + 40_000_000),
                &report(t, 10, 0, 2),
                Dur::from_millis(40),
                60_000,
            );
        }
        assert!(s.ref_wnd < grown / 2.0, "{} vs {grown}", s.ref_wnd);
        assert!(s.ect1());
    }

    #[test]
    fn a_standing_queue_above_target_backs_off() {
        let mut s = Scream::new(1e6, 1e5, 1e7, false, false);
        s.on_feedback(SimTime(40_000_000), &report(0, 10, 0, 0), Dur::from_millis(40), 60_000);
        s.ref_wnd = 60_000.0;
        for k in 1..40u64 {
            let t = k * 30_000_000;
            // 100 ms of queue: above the 60 ms target, full virtual-CE back-off.
            s.on_feedback(
                SimTime(t + 140_000_000),
                &report(t, 10, 100_000_000, 0),
                Dur::from_millis(140),
                60_000,
            );
        }
        assert!(s.ref_wnd < 20_000.0, "{}", s.ref_wnd);
        assert!(!s.ect1());
    }

    /// Reports 20 ms apart, each of 10 packets with `qdelay_ns` of queue, the last packet
    /// of every `lose_every`-th report missing (0: none).
    fn feed(s: &mut Scream, from: u64, n: u64, qdelay_ns: u64, lose_every: u64) {
        for k in from..from + n {
            let t = k * 20_000_000;
            let mut r = report(t, 10, qdelay_ns, 0);
            if lose_every > 0 && k % lose_every == 0 {
                r[9].arrival = None;
            }
            let rtt = Dur(40_000_000 + qdelay_ns);
            s.on_feedback(SimTime(t + 40_000_000 + qdelay_ns), &r, rtt, 60_000);
        }
    }

    /// RFC 8298 §4.1.2: beside a loss-based flow the queue stands high and SCReAM sees
    /// losses, so the target rises to 1.5 × (average + deviation): 1.5 × 250 ms = 375 ms with
    /// a steady 250 ms queue, and with 300 ms (450 ms) held to QDELAY_TARGET_HI, 400 ms; once
    /// the losses stop and the queue is gone, the new target is below QDELAY_TARGET_LO and
    /// the target falls back to LO. Switched off, it never moves.
    #[test]
    fn competing_flow_compensation_raises_the_target_beside_losses_and_lowers_it_after() {
        let mut s = Scream::new(1e6, 1e5, 1e7, false, true);
        feed(&mut s, 0, 50, 0, 0);
        assert_eq!(s.qdelay_target(), QDELAY_TARGET_LO, "no queue, no loss");
        // 250 ms of queue, a loss every 10th report (every 200 ms, most round trips lossy).
        feed(&mut s, 50, 300, 250_000_000, 10);
        assert!(s.loss_event_rate > LOSS_EVENT_RATE_TH, "{}", s.loss_event_rate);
        assert!((s.qdelay_target() - 0.375).abs() < 1e-9, "{}", s.qdelay_target());
        feed(&mut s, 350, 300, 300_000_000, 10);
        assert_eq!(s.qdelay_target(), QDELAY_TARGET_HI);
        // The competitor leaves: no queue, no loss. The loss-event rate decays below 0.002
        // within ln(0.002/0.9)/ln(15/16) ≈ 95 round trips (≈ 4 s at 40 ms), and the last
        // 50 samples are all zero long before: the target returns to LO.
        feed(&mut s, 650, 400, 0, 0);
        assert!(s.loss_event_rate < LOSS_EVENT_RATE_TH, "{}", s.loss_event_rate);
        assert_eq!(s.qdelay_target(), QDELAY_TARGET_LO);
        let mut off = Scream::new(1e6, 1e5, 1e7, false, false);
        feed(&mut off, 0, 50, 0, 0);
        feed(&mut off, 50, 300, 250_000_000, 10);
        assert_eq!(off.qdelay_target(), QDELAY_TARGET_LO);
    }

    /// A steady queue without loss (variance of the normalised samples < 0.2) sets the target
    /// to the average plus the deviation: 120 ms held steady → 120 ms, above LO.
    #[test]
    fn a_steady_queue_without_loss_sets_the_target_to_it() {
        let mut s = Scream::new(1e6, 1e5, 1e7, false, true);
        feed(&mut s, 0, 50, 0, 0);
        feed(&mut s, 50, 400, 120_000_000, 0);
        assert!((s.qdelay_target() - 0.12).abs() < 1e-9, "{}", s.qdelay_target());
    }
}
