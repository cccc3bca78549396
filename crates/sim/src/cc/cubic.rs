//! CUBIC (RFC 9438) as Linux runs it (`net/ipv4/tcp_cubic.c`): the window follows
//! W(t) = C·(t − K)³ + W_max from the first congestion-avoidance ACK after a reduction, with
//! fast convergence, the Reno-friendly (AIMD-emulation) region, HyStart in slow start, the
//! reset of W_max on a timeout and the shift of the curve's time origin after idle.
//! With `hystart_rounds = "linux"` HyStart's rounds are tracked from the first ACK of data,
//! its tests applied from a 16-packet window (Linux 6.14+, commit 25c1a9ca53db "tcp_cubic:
//! fix incorrect HyStart round start detection"); by default, as before that commit, rounds
//! are tracked only from 16 packets on.
//!
//! Linux works in packets and fixed point; this follows its structure (a per-ACK counter
//! `cnt` = packets ACKed per +1 packet of cwnd, recomputed at most once per 1 ms "jiffy")
//! but evaluates the cubic in floating point with the exact C and β (Linux uses 410/1024 and
//! 717/1024). The window is kept in whole segments, as Linux does.

use super::registry::{BuildCtx, CcBuild, CcEntry, CcKind, CcTransport};
use super::reno::slow_start;
use super::{read_f64, AckSample, CongestionControl, CongestionEvent, CongestionKind, Window};
use crate::params::{Res, Table};
use crate::units::{Dur, SimTime};
use std::sync::Arc;

pub(super) const ENTRY: CcEntry = CcEntry {
    name: "cubic",
    doc: "CUBIC (RFC 9438) as Linux runs it, with HyStart",
    keys: &["c", "beta", "fast_convergence", "tcp_friendliness", "hystart", "hystart_rounds"],
    extra: CcKind { transport: CcTransport::Tcp, plus: Some("cubic+") },
    parse: |t, _| Ok(Arc::new(CubicParams::read(t)?)),
};

impl CcBuild for CubicParams {
    fn build(&self, ctx: BuildCtx) -> Box<dyn CongestionControl> {
        Box::new(Cubic::new(self.clone(), ctx.hz))
    }
}

/// HyStart applies only from this window (packets).
const HYSTART_LOW_WINDOW: u64 = 16;
/// ACKs closer than this belong to one ACK train.
const HYSTART_ACK_DELTA: Dur = Dur::from_millis(2);
/// RTT samples per round before the delay test.
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN: Dur = Dur::from_millis(4);
const HYSTART_DELAY_MAX: Dur = Dur::from_millis(16);

/// CUBIC's parameters (`flows[i].cc_params`): Linux's module parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct CubicParams {
    /// C, in segments / s³.
    pub c: f64,
    /// β_cubic, the multiplicative-decrease factor.
    pub beta: f64,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    /// `hystart_rounds = "linux"`: HyStart's rounds are tracked from the first ACK of data and
    /// its tests applied from 16 packets (Linux 6.14+, commit 25c1a9ca53db); `"low_window"`
    /// (the default, the simulator's earlier rule and Linux's before that commit): rounds are
    /// tracked only once cwnd reaches 16 packets.
    pub hystart_rounds_linux: bool,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_rounds_linux: false,
        }
    }
}

impl CubicParams {
    pub(crate) fn read(t: &mut Table) -> Res<CubicParams> {
        let d = CubicParams::default();
        Ok(CubicParams {
            c: read_f64(t, "c", 0.0, true, 100.0, false)?.unwrap_or(d.c),
            beta: read_f64(t, "beta", 0.0, true, 1.0, true)?.unwrap_or(d.beta),
            fast_convergence: t.opt_bool("fast_convergence")?.unwrap_or(d.fast_convergence),
            tcp_friendliness: t.opt_bool("tcp_friendliness")?.unwrap_or(d.tcp_friendliness),
            hystart: t.opt_bool("hystart")?.unwrap_or(d.hystart),
            hystart_rounds_linux: t
                .opt_choice("hystart_rounds", "HyStart round rule", &["low_window", "linux"])?
                .map_or(d.hystart_rounds_linux, |s| s == "linux"),
        })
    }
}

/// Which rule set the growth on the last congestion-avoidance ACK (for the `cc_state` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Region {
    Concave,
    Convex,
    Friendly,
}

pub struct Cubic {
    p: CubicParams,
    /// ACKed packets needed for +1 packet of cwnd.
    cnt: u64,
    /// Packets ACKed toward the next increment (Linux snd_cwnd_cnt).
    credit: u64,
    /// W_max (Linux last_max_cwnd), packets; 0 = no loss yet (or after a timeout).
    w_max: u64,
    last_cwnd: u64,
    /// Linux's clock: one jiffy (1/HZ), ns. The epoch, the cubic's time and the
    /// recomputation limits are counted in jiffies, as bictcp_update does.
    jiffy_ns: u64,
    /// HZ/32 jiffies: `cnt` is kept while cwnd is unchanged and the last recomputation is
    /// younger than this.
    recompute_jiffies: u64,
    last_jiffy: u64,
    origin: u64,
    /// The cubic's target at the last recomputation, packets.
    target: u64,
    /// K, seconds.
    k: f64,
    /// Minimum RTT seen (Linux delay_min), the look-ahead of the cubic.
    delay_min: Option<Dur>,
    epoch_start: Option<SimTime>,
    /// Packets ACKed since the epoch started (Reno emulation).
    ack_cnt: f64,
    /// The Reno-emulation window W_est, packets.
    tcp_cwnd: u64,
    /// Bytes ACKed that did not make a whole segment yet.
    byte_rem: u64,
    region: Region,
    // HyStart.
    found: bool,
    round_start: SimTime,
    end_seq: u64,
    last_ack: SimTime,
    curr_rtt: Option<Dur>,
    sample_cnt: u32,
}

impl Cubic {
    pub fn new(p: CubicParams, hz: u32) -> Cubic {
        Cubic {
            p,
            jiffy_ns: 1_000_000_000 / u64::from(hz),
            recompute_jiffies: u64::from(hz) / 32,
            cnt: 0,
            credit: 0,
            w_max: 0,
            last_cwnd: 0,
            last_jiffy: 0,
            origin: 0,
            target: 0,
            k: 0.0,
            delay_min: None,
            epoch_start: None,
            ack_cnt: 0.0,
            tcp_cwnd: 0,
            byte_rem: 0,
            region: Region::Concave,
            found: false,
            round_start: SimTime::ZERO,
            end_seq: 0,
            last_ack: SimTime::ZERO,
            curr_rtt: None,
            sample_cnt: 0,
        }
    }

    /// W_max in segments (for tests and diagnostics).
    pub fn w_max(&self) -> u64 {
        self.w_max
    }

    /// K in seconds for the current epoch.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// Linux bictcp_reset: forget the curve (timeout).
    fn reset(&mut self) {
        self.cnt = 0;
        self.w_max = 0;
        self.last_cwnd = 0;
        self.last_jiffy = 0;
        self.origin = 0;
        self.k = 0.0;
        self.delay_min = None;
        self.epoch_start = None;
        self.ack_cnt = 0.0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    fn hystart_reset(&mut self, now: SimTime, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// Linux cubictcp_acked: one RTT sample.
    fn rtt_sample(&mut self, w: &mut Window, a: &AckSample, rtt: Dur) {
        // Samples right after a reduction (first second of an epoch) are discarded.
        if let Some(e) = self.epoch_start {
            if a.now.since(e) < Dur::from_secs(1) {
                return;
            }
        }
        let delay = Dur(rtt.0.max(1));
        if self.delay_min.is_none_or(|m| m > delay) {
            self.delay_min = Some(delay);
        }
        if self.p.hystart
            && !self.found
            && w.in_slow_start()
            && (self.p.hystart_rounds_linux || w.cwnd / w.mss >= HYSTART_LOW_WINDOW)
        {
            self.hystart_update(w, a, delay);
        }
    }

    fn hystart_update(&mut self, w: &mut Window, a: &AckSample, delay: Dur) {
        if a.snd_una > self.end_seq {
            self.hystart_reset(a.now, a.snd_nxt);
        }
        // Rounds are tracked from the first ACK, the tests start at 16 packets (Linux
        // 25c1a9ca53db, 6.14: tracking rounds only from 16 packets on started them part-way
        // into a burst, further in each round, and the delay test fired early).
        if w.cwnd / w.mss < HYSTART_LOW_WINDOW {
            return;
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        // ACK train: the round's ACKs keep coming (≤ 2 ms apart) for longer than half the
        // minimum RTT (the threshold is halved for unpaced senders; no TSO/GRO cushion here).
        if a.now.since(self.last_ack) <= HYSTART_ACK_DELTA {
            self.last_ack = a.now;
            let threshold = Dur(delay_min.0 / 2);
            if a.now.since(self.round_start) > threshold {
                self.found = true;
                w.ssthresh = w.cwnd;
            }
        }
        // Delay increase: the round's minimum RTT exceeds the path's by delay_min/8,
        // clamped to [4, 16] ms.
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let eta = Dur(delay_min.0 / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
            if self.curr_rtt.is_some_and(|c| c > delay_min + eta) {
                self.found = true;
                w.ssthresh = w.cwnd;
            }
        }
    }

    /// Linux bictcp_update: recompute `cnt` for a window of `cwnd` packets.
    fn update(&mut self, cwnd: u64, acked: u64, now: SimTime) {
        self.ack_cnt += acked as f64;
        let jiffy = now.0 / self.jiffy_ns;
        if self.last_cwnd == cwnd && jiffy.saturating_sub(self.last_jiffy) <= self.recompute_jiffies
        {
            return;
        }
        // The cubic part is recomputed at most once per jiffy; a new epoch always is.
        if !(self.epoch_start.is_some() && jiffy == self.last_jiffy) {
            self.last_cwnd = cwnd;
            self.last_jiffy = jiffy;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(now);
                    self.ack_cnt = acked as f64;
                    self.tcp_cwnd = cwnd;
                    if self.w_max <= cwnd {
                        self.k = 0.0;
                        self.origin = cwnd;
                    } else {
                        self.k = ((self.w_max - cwnd) as f64 / self.p.c).cbrt();
                        self.origin = self.w_max;
                    }
                    now
                }
            };
            // Evaluated one minimum RTT ahead (Linux; RFC 9438 uses t + RTT), in whole jiffies
            // as Linux reads it (the min RTT rounded up): at HZ = 250 the curve moves in 4 ms steps.
            let ticks = (jiffy - epoch.0 / self.jiffy_ns)
                + self.delay_min.map_or(0, |d| d.0.div_ceil(self.jiffy_ns));
            let t = (ticks * self.jiffy_ns) as f64 / 1e9;
            let offs = (t - self.k).abs();
            let delta = (self.p.c * offs * offs * offs).floor() as u64;
            let target =
                if t < self.k { self.origin.saturating_sub(delta) } else { self.origin + delta };
            self.region = if t < self.k { Region::Concave } else { Region::Convex };
            self.target = target;
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
            // Before the first loss the curve's start is too timid: at least 5 % per RTT.
            if self.w_max == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        if self.p.tcp_friendliness {
            // W_est grows by α_cubic = 3(1−β)/(1+β) segments per window of ACKs, which gives
            // the same average rate as Reno (RFC 9438 §4.3).
            let alpha = 3.0 * (1.0 - self.p.beta) / (1.0 + self.p.beta);
            let per = cwnd as f64 / alpha;
            if per > 0.0 {
                while self.ack_cnt > per {
                    self.ack_cnt -= per;
                    self.tcp_cwnd += 1;
                }
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
            // RFC 9438 §4.3: the Reno-friendly region is where W_est is at or above the cubic.
            if self.tcp_cwnd >= self.target {
                self.region = Region::Friendly;
            } else if self.region == Region::Friendly {
                self.region = if self.origin > cwnd { Region::Concave } else { Region::Convex };
            }
        }
        // At most +1 packet per 2 ACKed: 1.5× per RTT.
        self.cnt = self.cnt.max(2);
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if let Some(rtt) = a.rtt {
            self.rtt_sample(w, a, rtt);
        }
        if a.ca_state.reducing() || !a.cwnd_limited {
            return;
        }
        let mut bytes = a.acked_bytes;
        if w.in_slow_start() {
            bytes = slow_start(w, bytes);
            if bytes == 0 {
                return;
            }
        }
        let total = self.byte_rem + bytes;
        let acked = total / w.mss;
        self.byte_rem = total % w.mss;
        if acked == 0 {
            return;
        }
        let cwnd = (w.cwnd / w.mss).max(1);
        self.update(cwnd, acked, a.now);
        // Linux tcp_cong_avoid_ai(cwnd, cnt, acked).
        let cnt = self.cnt.max(1);
        let mut inc = 0;
        if self.credit >= cnt {
            self.credit = 0;
            inc += 1;
        }
        self.credit += acked;
        if self.credit >= cnt {
            let d = self.credit / cnt;
            self.credit -= d * cnt;
            inc += d;
        }
        w.cwnd = (cwnd + inc) * w.mss;
    }

    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent) {
        let cwnd = (w.cwnd / w.mss).max(1);
        self.epoch_start = None;
        self.w_max = if cwnd < self.w_max && self.p.fast_convergence {
            (cwnd as f64 * (1.0 + self.p.beta) / 2.0) as u64
        } else {
            cwnd
        };
        w.ssthresh = ((cwnd as f64 * self.p.beta) as u64).max(2) * w.mss;
        self.credit = 0;
        self.byte_rem = 0;
        if e.kind == CongestionKind::Rto {
            // Linux: entering the Loss state resets CUBIC (W_max = 0, so the next epoch starts
            // with K = 0 at the window of that time) and HyStart.
            self.reset();
            self.hystart_reset(e.now, 0);
        }
    }

    fn on_tx_start(&mut self, _w: &mut Window, now: SimTime, idle: Dur) {
        // Shift the curve's origin by the idle time so growth resumes where it stopped
        // (RFC 9438 §4.2: t excludes application-limited periods), never beyond now.
        if let Some(e) = self.epoch_start {
            if idle.0 > 0 {
                self.epoch_start = Some((e + idle).min(now));
            }
        }
    }

    fn state_label(&self, w: &Window) -> &'static str {
        if w.in_slow_start() {
            return "slow_start";
        }
        match self.region {
            Region::Concave => "concave",
            Region::Convex => "convex",
            Region::Friendly => "friendly",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CaState, CongestionKind};

    const MSS: u64 = 1000;

    fn ack(now: SimTime, bytes: u64, rtt: Option<Dur>) -> AckSample {
        AckSample::test(now, bytes, rtt)
    }

    fn loss(now: SimTime, kind: CongestionKind) -> CongestionEvent {
        CongestionEvent { now, kind, flight_size: 0, in_flight: 0 }
    }

    /// An idealised ACK clock: every RTT, one ACK per segment of the window.
    fn run(
        c: &mut Cubic,
        w: &mut Window,
        from: SimTime,
        rtt: Dur,
        until: SimTime,
    ) -> Vec<(f64, u64)> {
        let mut now = from;
        let mut trace = Vec::new();
        while now < until {
            let n = w.cwnd / MSS;
            let step = Dur(rtt.0 / n.max(1));
            for _ in 0..n {
                c.on_ack(w, &ack(now, MSS, Some(rtt)));
                now += step;
            }
            trace.push((now.since(from).secs_f64(), w.cwnd / MSS));
        }
        trace
    }

    /// In CWR (as in recovery) the core's PRR sets cwnd: an ACK does not grow it, in slow
    /// start or after.
    #[test]
    fn no_growth_while_the_core_reduces_the_window() {
        let mut c = Cubic::new(CubicParams::default(), 1000);
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        let rtt = Some(Dur::from_millis(100));
        let mut a = ack(SimTime(1), 2 * MSS, rtt);
        a.ca_state = CaState::Cwr;
        c.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 10 * MSS);
        a.ca_state = CaState::Open;
        c.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 12 * MSS);
    }

    #[test]
    fn window_after_loss_follows_the_cubic_with_the_rfc_k() {
        let p = CubicParams { tcp_friendliness: false, ..CubicParams::default() };
        let mut c = Cubic::new(p, 1000);
        let rtt = Dur::from_millis(100);
        let mut w = Window { cwnd: 1000 * MSS, ssthresh: 2000 * MSS, mss: MSS };
        // A first loss at 1000 segments: W_max = 1000, cwnd → 700.
        c.on_congestion_event(&mut w, &loss(SimTime::ZERO, CongestionKind::FastRetransmit));
        assert_eq!(w.ssthresh, 700 * MSS);
        w.cwnd = w.ssthresh;
        let t0 = SimTime(1);
        let trace = run(&mut c, &mut w, t0, rtt, SimTime::ZERO + Dur::from_secs(15));
        let k = (300.0f64 / 0.4).cbrt();
        assert!((c.k() - k).abs() < 1e-9, "K {} vs {k}", c.k());
        for &(t, cw) in &trace {
            // Linux evaluates the curve one min-RTT ahead; the window lags that target by
            // under one RTT of growth.
            let model = |t: f64| 0.4 * (t - k).powi(3) + 1000.0;
            let (lo, hi) = (model(t - 0.2).min(model(t + 0.1)), model(t + 0.1).max(model(t - 0.2)));
            assert!(
                cw as f64 >= lo - 2.0 && cw as f64 <= hi + 2.0,
                "t={t:.2}: cwnd {cw}, model {:.1}",
                model(t)
            );
        }
    }

    #[test]
    fn fast_convergence_and_timeout_reset() {
        let mut c = Cubic::new(CubicParams::default(), 1000);
        let mut w = Window { cwnd: 100 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_congestion_event(&mut w, &loss(SimTime::ZERO, CongestionKind::FastRetransmit));
        assert_eq!(c.w_max(), 100);
        // A second loss below the previous W_max releases bandwidth: W_max = cwnd·(1+β)/2.
        w.cwnd = 80 * MSS;
        c.on_congestion_event(&mut w, &loss(SimTime::ZERO, CongestionKind::FastRetransmit));
        assert_eq!(c.w_max(), 68);
        assert_eq!(w.ssthresh, 56 * MSS);
        // A timeout forgets W_max (Linux), but ssthresh still uses β.
        w.cwnd = 50 * MSS;
        c.on_congestion_event(&mut w, &loss(SimTime::ZERO, CongestionKind::Rto));
        assert_eq!(c.w_max(), 0);
        assert_eq!(w.ssthresh, 35 * MSS);
    }

    #[test]
    fn reno_friendly_region_governs_small_windows() {
        // 20 segments, 10 ms RTT: the cubic grows by 0.4·t³ — about 0 over the first seconds
        // — while W_est grows 0.53 segment per RTT, so cwnd tracks the AIMD estimate.
        let mut c = Cubic::new(CubicParams::default(), 1000);
        let rtt = Dur::from_millis(10);
        let mut w = Window { cwnd: 20 * MSS, ssthresh: 20 * MSS, mss: MSS };
        c.on_congestion_event(&mut w, &loss(SimTime::ZERO, CongestionKind::FastRetransmit));
        w.cwnd = w.ssthresh; // 14
        let trace = run(&mut c, &mut w, SimTime(1), rtt, SimTime::ZERO + Dur::from_secs(1));
        let (t, cw) = *trace.last().unwrap();
        let aimd = 14.0 + 0.53 * t / 0.010;
        assert!((cw as f64 - aimd).abs() <= 0.1 * aimd, "cwnd {cw} vs AIMD {aimd:.1}");
        assert_eq!(c.state_label(&w), "friendly");
    }

    #[test]
    fn idle_shifts_the_epoch() {
        let mut c = Cubic::new(CubicParams::default(), 1000);
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 50 * MSS, mss: MSS };
        c.on_ack(&mut w, &ack(SimTime(1_000_000_000), MSS, None));
        let e = c.epoch_start.unwrap();
        c.on_tx_start(&mut w, SimTime(3_000_000_000), Dur::from_secs(2));
        assert_eq!(c.epoch_start, Some(e + Dur::from_secs(2)));
        c.on_tx_start(&mut w, SimTime(3_000_000_000), Dur::from_secs(20));
        assert_eq!(c.epoch_start, Some(SimTime(3_000_000_000)));
    }

    #[test]
    fn hystart_delay_exit() {
        let mut c = Cubic::new(CubicParams::default(), 1000);
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        let base = Dur::from_millis(40);
        // Samples 5 ms apart (no ACK train), first at the base RTT, then one round later
        // with 10 ms of queueing (> max(4 ms, 40/8 ms)).
        let mut now = SimTime(0);
        let mut a = ack(now, MSS, Some(base));
        a.snd_una = 1;
        a.snd_nxt = 100;
        c.on_ack(&mut w, &a);
        assert!(!c.found);
        for i in 0..10 {
            now += Dur::from_millis(5);
            let mut a = ack(now, MSS, Some(base + Dur::from_millis(10)));
            a.snd_una = 101 + i;
            a.snd_nxt = 200;
            c.on_ack(&mut w, &a);
        }
        // Found after the 9th sample of the new round: ssthresh = the cwnd of then (slow start
        // had added one segment per ACK until that point).
        assert!(c.found);
        assert_eq!(w.ssthresh, 29 * MSS);
        assert!(!w.in_slow_start());
    }

    /// Rounds are tracked from the first ACK of data, below the 16-packet window too (Linux
    /// 25c1a9ca53db): the round running when cwnd reaches 16 began at its first ACK. Before,
    /// the first round began at the ACK that took cwnd to 16, part-way into a burst.
    #[test]
    fn hystart_rounds_start_at_the_first_ack() {
        let t0 = SimTime(Dur::from_millis(100).0);
        // Ten ACKs 0.1 ms apart from an initial window of 10, each of one segment.
        let first_round = |linux: bool| {
            let p = CubicParams { hystart_rounds_linux: linux, ..CubicParams::default() };
            let mut c = Cubic::new(p, 1000);
            let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
            for i in 0..10u64 {
                let mut a = ack(t0 + Dur::from_micros(100 * i), MSS, Some(Dur::from_millis(100)));
                a.snd_una = 1 + i;
                a.snd_nxt = 100 + 2 * i;
                c.on_ack(&mut w, &a);
            }
            (c, w)
        };
        let (mut c, mut w) = first_round(true);
        assert_eq!(w.cwnd, 20 * MSS);
        assert_eq!((c.round_start, c.end_seq), (t0, 100));
        // The earlier rule began the round at the ACK that took cwnd to 16.
        let (old, _) = first_round(false);
        assert_eq!(old.round_start, t0 + Dur::from_micros(600));
        // The next round begins at the first ACK past the first round's data.
        let t1 = t0 + Dur::from_millis(100);
        let mut a = ack(t1, MSS, Some(Dur::from_millis(100)));
        a.snd_una = 101;
        a.snd_nxt = 140;
        c.on_ack(&mut w, &a);
        assert_eq!((c.round_start, c.end_seq), (t1, 140));
        assert!(!c.found);
    }
}
