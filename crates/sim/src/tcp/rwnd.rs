//! Receive-window policies: what window a TCP receiver advertises. `Static` advertises the
//! receive buffer; DRWA and ABRWDA size it to keep the sender from overfilling a cellular
//! buffer (the window only ever limits the sender through min(cwnd, rwnd)).

use crate::config::RwndPolicy;
use crate::units::{Dur, Rate, SimTime};

#[derive(Debug, Clone)]
pub enum RwndState {
    Static,
    Drwa(Drwa),
    Abrwda(Abrwda),
}

impl RwndState {
    pub fn new(policy: RwndPolicy, mss: u64) -> RwndState {
        match policy {
            RwndPolicy::Static => RwndState::Static,
            RwndPolicy::Drwa { lambda } => RwndState::Drwa(Drwa::new(lambda)),
            RwndPolicy::Abrwda { alpha, lambda } => RwndState::Abrwda(Abrwda::new(alpha, lambda, 10 * mss)),
        }
    }

    /// Does this policy read the radio capacity (the world then supplies it)?
    pub fn needs_channel(&self) -> bool {
        matches!(self, RwndState::Abrwda(_))
    }

    /// A data segment of `bytes` arrived. `rtt` is the receiver's own RTT sample (now minus the
    /// echoed timestamp of one of its ACKs), `channel` the last-hop capacity.
    pub fn on_data(&mut self, now: SimTime, bytes: u64, rtt: Option<Dur>, channel: Option<Rate>) {
        match self {
            RwndState::Static => {}
            RwndState::Drwa(d) => d.on_data(now, bytes, rtt),
            RwndState::Abrwda(a) => a.on_data(now, bytes, channel),
        }
    }

    /// The window to advertise in bytes; None: the whole receive buffer.
    pub fn window(&self) -> Option<u64> {
        match self {
            RwndState::Static => None,
            RwndState::Drwa(d) => d.rwnd,
            RwndState::Abrwda(a) => Some(a.rwnd),
        }
    }
}

/// DRWA (Jiang et al., IMC 2012). Once per estimated RTT: cwnd_est = 7/8·cwnd_est + 1/8·(bytes
/// received in that RTT); rwnd = λ · (RTT_min / RTT_est) · cwnd_est, where RTT_est is the mean
/// of the receiver's timestamp RTT samples over the last RTT. The paper's text was not
/// available to us; this follows its published summaries (docs/cellular.md).
#[derive(Debug, Clone)]
pub struct Drwa {
    lambda: f64,
    period_start: SimTime,
    bytes: u64,
    rtt_sum: f64,
    rtt_n: u64,
    rtt_est: Option<f64>,
    rtt_min: f64,
    cwnd_est: Option<f64>,
    pub rwnd: Option<u64>,
}

impl Drwa {
    fn new(lambda: f64) -> Drwa {
        Drwa { lambda, period_start: SimTime::ZERO, bytes: 0, rtt_sum: 0.0, rtt_n: 0, rtt_est: None, rtt_min: f64::INFINITY, cwnd_est: None, rwnd: None }
    }

    fn on_data(&mut self, now: SimTime, bytes: u64, rtt: Option<Dur>) {
        self.bytes += bytes;
        if let Some(r) = rtt {
            let r = r.secs_f64().max(1e-9);
            self.rtt_sum += r;
            self.rtt_n += 1;
            self.rtt_min = self.rtt_min.min(r);
        }
        let Some(est) = self.rtt_est.or((self.rtt_n > 0).then(|| self.rtt_sum / self.rtt_n as f64)) else {
            return;
        };
        if self.rtt_est.is_none() {
            // First sample: start the first measurement period now.
            self.rtt_est = Some(est);
            self.period_start = now;
            self.bytes = 0;
            self.rtt_sum = 0.0;
            self.rtt_n = 0;
            return;
        }
        if now.since(self.period_start).secs_f64() < est {
            return;
        }
        let est = if self.rtt_n > 0 { self.rtt_sum / self.rtt_n as f64 } else { est };
        let got = self.bytes as f64;
        let c = self.cwnd_est.map_or(got, |c| 0.875 * c + 0.125 * got);
        self.cwnd_est = Some(c);
        self.rtt_est = Some(est);
        self.rwnd = Some((self.lambda * self.rtt_min / est * c) as u64);
        self.period_start = now;
        self.bytes = 0;
        self.rtt_sum = 0.0;
        self.rtt_n = 0;
    }
}

/// ABRWDA (the paper's Algorithm 1; α = 1/4, λ = 1.2). Each time more than the previous window
/// has arrived since the last update: rtt_est = the time that took, rtt_min = min(rtt_est),
/// Dbw = (1 − α)·Dbw + α·bandwidth (the radio capacity the phone reads), wind = λ·Dbw·rtt_min,
/// rwnd = max(wind, last_wind); in between rwnd = wind. Windows in bytes.
#[derive(Debug, Clone)]
pub struct Abrwda {
    alpha: f64,
    lambda: f64,
    wind: f64,
    last_wind: f64,
    acc: u64,
    start: SimTime,
    rtt_min: f64,
    /// Smoothed capacity, bytes per second.
    dbw: Option<f64>,
    pub rwnd: u64,
}

impl Abrwda {
    fn new(alpha: f64, lambda: f64, init: u64) -> Abrwda {
        Abrwda { alpha, lambda, wind: init as f64, last_wind: init as f64, acc: 0, start: SimTime::ZERO, rtt_min: f64::INFINITY, dbw: None, rwnd: init }
    }

    fn on_data(&mut self, now: SimTime, bytes: u64, channel: Option<Rate>) {
        if self.acc == 0 {
            self.start = now;
        }
        self.acc += bytes;
        if (self.acc as f64) > self.last_wind {
            let rtt_est = now.since(self.start).secs_f64();
            if rtt_est > 0.0 {
                self.rtt_min = self.rtt_min.min(rtt_est);
            }
            self.last_wind = self.wind;
            let bw = channel.map_or(0.0, |r| r.bytes_per_sec());
            let d = self.dbw.map_or(bw, |d| (1.0 - self.alpha) * d + self.alpha * bw);
            self.dbw = Some(d);
            if self.rtt_min.is_finite() {
                self.wind = self.lambda * d * self.rtt_min;
            }
            self.rwnd = self.wind.max(self.last_wind) as u64;
            self.acc = 0;
        } else {
            self.rwnd = self.wind as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abrwda_converges_to_lambda_bandwidth_rtt() {
        // 1000 B packets arriving at 1 MB/s (a 1 ms spacing) on an 8 Mbit/s channel: the time
        // to receive a window is window / 1 MB/s; with a 20-packet window that is 20 ms.
        let mut a = Abrwda::new(0.25, 1.2, 20_000);
        let mut t = SimTime::ZERO;
        for _ in 0..2_000 {
            a.on_data(t, 1000, Some(Rate(8_000_000)));
            t += Dur::from_millis(1);
        }
        // rtt_min ≈ 20 ms → wind = 1.2 · 1 MB/s · 0.020 s = 24 000 B.
        assert!((a.wind - 24_000.0).abs() < 1_500.0, "wind {}", a.wind);
        assert!(a.rwnd >= a.wind as u64);
    }

    #[test]
    fn drwa_scales_the_received_window_by_the_rtt_ratio() {
        let mut d = Drwa::new(3.0);
        let mut t = SimTime::ZERO;
        // 10 KB per 100 ms round trip; RTT samples: min 50 ms, current 100 ms.
        d.on_data(t, 0, Some(Dur::from_millis(50)));
        for _ in 0..400 {
            t += Dur::from_millis(10);
            d.on_data(t, 1000, Some(Dur::from_millis(100)));
        }
        // cwnd_est → 10 KB; rwnd = 3 · 0.5 · 10 KB = 15 KB.
        let r = d.rwnd.unwrap() as f64;
        assert!((r - 15_000.0).abs() < 1_600.0, "rwnd {r}");
    }
}
