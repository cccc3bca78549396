//! DRWA, Dynamic Receive Window Adjustment (`rwnd = "drwa"`).

use super::{ReceiveWindow, RwndBuild, RwndEntry, RwndNeeds};
use crate::units::{Dur, Rate, SimTime};
use serde_json::{json, Value};
use std::sync::Arc;

pub(super) const ENTRY: RwndEntry = RwndEntry {
    name: "drwa",
    doc: "DRWA (Jiang et al. 2012): rwnd = λ · (RTT_min / RTT_est) · cwnd_est, once per RTT",
    keys: &["lambda"],
    extra: RwndNeeds { channel: false },
    parse: |t, _| {
        Ok(Arc::new(DrwaParams { lambda: t.opt_f64("lambda", 0.1, 100.0, true)?.unwrap_or(3.0) }))
    },
};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrwaParams {
    pub lambda: f64,
}

impl RwndBuild for DrwaParams {
    fn build(&self, _mss: u64) -> Box<dyn ReceiveWindow> {
        Box::new(Drwa::new(self.lambda))
    }
    fn json(&self) -> Value {
        json!({ "lambda": self.lambda })
    }
}

impl ReceiveWindow for Drwa {
    fn on_data(&mut self, now: SimTime, bytes: u64, rtt: Option<Dur>, _channel: Option<Rate>) {
        Drwa::on_data(self, now, bytes, rtt);
    }
    fn window(&self) -> Option<u64> {
        self.rwnd
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
        Drwa {
            lambda,
            period_start: SimTime::ZERO,
            bytes: 0,
            rtt_sum: 0.0,
            rtt_n: 0,
            rtt_est: None,
            rtt_min: f64::INFINITY,
            cwnd_est: None,
            rwnd: None,
        }
    }

    fn on_data(&mut self, now: SimTime, bytes: u64, rtt: Option<Dur>) {
        self.bytes += bytes;
        if let Some(r) = rtt {
            let r = r.secs_f64().max(1e-9);
            self.rtt_sum += r;
            self.rtt_n += 1;
            self.rtt_min = self.rtt_min.min(r);
        }
        let Some(est) = self.rtt_est.or((self.rtt_n > 0).then(|| self.rtt_sum / self.rtt_n as f64))
        else {
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

#[cfg(test)]
mod tests {
    use super::*;

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
