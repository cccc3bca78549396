//! A video encoder's output sizes: one frame per frame interval, sized from a rate that
//! follows the controller's target with a first-order lag (real encoders adapt their
//! quantiser over a few frames, not at once: RFC 8298 §4.1.2 calls the encoder "slow to
//! react"), with an I-frame of `iframe_ratio` P-frames every `iframe_interval`. The P-frame
//! size is scaled so that a group of pictures averages the encoder's rate.
//!
//! Simplified: frame sizes carry no content noise (a real encoder's P-frames vary by ±20-50 %
//! with the scene); every frame is encoded at capture time in zero time.

use super::VideoCfg;
use crate::units::SimTime;

pub struct Encoder {
    /// The encoder's current rate, bit/s (lags the target).
    rate: f64,
    /// Gain of the first-order follow per frame: 1 − exp(−T/τ).
    gain: f64,
    frame_s: f64,
    frames_per_gop: f64,
    ratio: f64,
    iframe_every: Option<u64>,
    frame_no: u64,
}

impl Encoder {
    pub fn new(cfg: &VideoCfg) -> Encoder {
        let t = cfg.frame_interval();
        let tau = cfg.encoder_lag.0 as f64;
        let gain = if tau > 0.0 { 1.0 - (-(t.0 as f64) / tau).exp() } else { 1.0 };
        let iframe_every = cfg.iframe_interval.map(|d| (d.0 / t.0.max(1)).max(1));
        Encoder {
            rate: cfg.start_rate.0 as f64,
            gain,
            frame_s: t.0 as f64 / 1e9,
            frames_per_gop: iframe_every.unwrap_or(u64::MAX) as f64,
            ratio: cfg.iframe_ratio as f64,
            iframe_every,
            frame_no: 0,
        }
    }

    /// The next frame's size in bytes, encoded at `_now` for a controller target of
    /// `target_bps`; and whether it is an I-frame.
    pub fn next_frame(&mut self, _now: SimTime, target_bps: f64) -> (u64, bool) {
        self.rate += (target_bps - self.rate) * self.gain;
        let n = self.frame_no;
        self.frame_no += 1;
        let iframe = n == 0 || self.iframe_every.is_some_and(|k| n.is_multiple_of(k));
        // A GOP of N frames, one of them `ratio` P-frames big: N − 1 + ratio P-frame units.
        let gop = self.frames_per_gop.min(1e9);
        let p = self.rate * self.frame_s / 8.0 * gop / (gop - 1.0 + self.ratio);
        let bytes = if iframe { p * self.ratio } else { p };
        ((bytes.round() as u64).max(1), iframe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::video::Controller;
    use crate::units::{Dur, Rate};

    fn cfg() -> VideoCfg {
        VideoCfg {
            controller: Controller::Gcc,
            fps: 25,
            start_rate: Rate(1_000_000),
            min_rate: Rate(100_000),
            max_rate: Rate(10_000_000),
            iframe_interval: Some(Dur::from_secs(2)),
            iframe_ratio: 4,
            encoder_lag: Dur::from_millis(100),
            feedback: Dur::from_millis(20),
            freeze: Dur::from_millis(150),
            nack: true,
            compensation: true,
        }
    }

    #[test]
    fn a_gop_averages_the_rate_and_the_rate_lags_a_step() {
        let mut e = Encoder::new(&cfg());
        // At a steady target, 50 frames (one GOP, 2 s) carry 2 s of the rate.
        let total: u64 = (0..50).map(|_| e.next_frame(SimTime::ZERO, 1e6).0).sum();
        assert!((total as f64 - 250_000.0).abs() < 50.0, "{total}");
        // A step to 2 Mbit/s: after one frame (40 ms, τ = 100 ms) the rate has moved 33 %.
        let (b, i) = e.next_frame(SimTime::ZERO, 2e6);
        assert!(i, "frame 50 starts the next GOP");
        let p = b as f64 / 4.0 * 8.0 / 0.04 * 53.0 / 50.0;
        assert!((p - 1.33e6).abs() < 0.01e6, "{p}");
    }
}
