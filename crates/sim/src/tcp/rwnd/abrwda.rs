//! ABRWDA (`rwnd = "abrwda"`): the receive window from the radio capacity and the minimum RTT.

use super::{ReceiveWindow, RwndBuild, RwndEntry, RwndNeeds};
use crate::params::{err, Res, Table};
use crate::units::{Dur, Rate, SimTime};
use serde_json::{json, Value};
use std::sync::Arc;

pub(super) const ENTRY: RwndEntry = RwndEntry {
    name: "abrwda",
    doc: "ABRWDA (Algorithm 1): rwnd from the radio capacity and the minimum RTT (cellular only)",
    keys: &["alpha", "lambda"],
    extra: RwndNeeds { channel: true },
    parse: |t, _| Ok(Arc::new(AbrwdaParams::read(t)?)),
};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AbrwdaParams {
    pub alpha: f64,
    pub lambda: f64,
}

impl AbrwdaParams {
    fn read(t: &mut Table) -> Res<AbrwdaParams> {
        let alpha = t.opt_f64("alpha", 0.0, 1.0, true)?.unwrap_or(0.25);
        if alpha == 0.0 {
            return err(&t.key_path("alpha"), "must be in (0, 1] (got 0)");
        }
        Ok(AbrwdaParams { alpha, lambda: t.opt_f64("lambda", 0.1, 100.0, true)?.unwrap_or(1.2) })
    }
}

impl RwndBuild for AbrwdaParams {
    fn build(&self, mss: u64) -> Box<dyn ReceiveWindow> {
        Box::new(Abrwda::new(self.alpha, self.lambda, 10 * mss))
    }
    fn json(&self) -> Value {
        json!({ "alpha": self.alpha, "lambda": self.lambda })
    }
}

impl ReceiveWindow for Abrwda {
    fn on_data(&mut self, now: SimTime, bytes: u64, _rtt: Option<Dur>, channel: Option<Rate>) {
        Abrwda::on_data(self, now, bytes, channel);
    }
    fn window(&self) -> Option<u64> {
        Some(self.rwnd)
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
        Abrwda {
            alpha,
            lambda,
            wind: init as f64,
            last_wind: init as f64,
            acc: 0,
            start: SimTime::ZERO,
            rtt_min: f64::INFINITY,
            dbw: None,
            rwnd: init,
        }
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
}
