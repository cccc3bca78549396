//! EWA — Explicit Window Adaptation (Kalampoukas, Varma & Ramakrishnan 2002), as summarised by
//! Talau et al. 2019 §3.1, eq. 1–4.
//!
//! With B_e = B − Q the free buffer, an ACK's window becomes
//! `min(W_r, max(α·log2(B_e), MSS))`. α adapts to the average occupancy
//! Q̄ ← (1 − g)·Q̄ + g·Q (updated at every arrival to the forward queue): every T seconds α
//! grows by W_up while Q̄ < T_l and shrinks by W_down while Q̄ > T_h.
//! Units (the summary leaves them open): B_e is counted in packets of 1500 B inside the
//! logarithm, α in bytes of window per doubling of the free buffer; a free buffer below one
//! packet gives the one-MSS floor. docs/gateway.md lists the parameter choices.

use super::within_buffer;
use super::{AckRewriter, QueueView, RewriterBuild, RewriterEntry};
use crate::params::{err, Res, Table};
use crate::units::{Dur, SimTime};
use crate::wire::MTU_BYTES;
use std::sync::Arc;

pub(super) const ENTRY: RewriterEntry = RewriterEntry {
    name: "ewa",
    doc: "Explicit Window Adaptation (Kalampoukas et al. 2002)",
    keys: &["alpha", "g", "interval", "low", "high", "w_up", "w_down"],
    extra: (),
    parse: |t, ctx| Ok(Arc::new(read(t, ctx.capacity_bytes)?)),
};

impl RewriterBuild for EwaParams {
    fn build(&self) -> Box<dyn AckRewriter> {
        Box::new(Ewa::new(*self))
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EwaParams {
    /// Initial α, bytes of window per doubling of the free buffer (in packets).
    pub alpha: f64,
    /// EWMA gain g of the average occupancy Q̄.
    pub g: f64,
    /// T: how often α is adapted.
    pub interval: Dur,
    /// T_l and T_h: α grows while Q̄ < low, shrinks while Q̄ > high (bytes).
    pub low: u64,
    pub high: u64,
    /// W_up and W_down: α's steps (bytes per doubling).
    pub w_up: f64,
    pub w_down: f64,
}

/// EWA: g = 1/128 (Talau 2019 §3.1); the rest are bloatlab's choices (the original values
/// were not available): α0 makes the window equal to B when the buffer is empty, T = 500 ms,
/// T_l = B/4, T_h = B/2, W_up = α0/32, W_down = α0/8.
fn read(t: &mut Table, b: u64) -> Res<EwaParams> {
    let pkts = (b as f64 / MTU_BYTES as f64).max(2.0);
    let alpha0 = b as f64 / pkts.log2();
    let alpha = t.opt_f64("alpha", 0.0, f64::MAX, true)?.unwrap_or(alpha0);
    let g = t.opt_f64("g", 0.0, 1.0, true)?.unwrap_or(1.0 / 128.0);
    if g == 0.0 {
        return err(&t.key_path("g"), "must be greater than 0 (got 0)");
    }
    let ip = t.key_path("interval");
    let interval = match t.opt_duration("interval")? {
        Some(Dur(0)) => return err(&ip, "must be greater than 0 (got \"0s\")"),
        Some(d) => d,
        None => Dur::from_millis(500),
    };
    let low_given = within_buffer(t, "low", b)?;
    let high_given = within_buffer(t, "high", b)?;
    let low = low_given.unwrap_or(b / 4);
    let high = high_given.unwrap_or(b / 2);
    if low >= high {
        let key = if low_given.is_some() { "low" } else { "high" };
        return err(&t.key_path(key), format!("low ({low}B) must be below high ({high}B)"));
    }
    let w_up = t.opt_f64("w_up", 0.0, f64::MAX, true)?.unwrap_or(alpha0 / 32.0);
    let w_down = t.opt_f64("w_down", 0.0, f64::MAX, true)?.unwrap_or(alpha0 / 8.0);
    Ok(EwaParams { alpha, g, interval, low, high, w_up, w_down })
}

pub struct Ewa {
    p: EwaParams,
    alpha: f64,
    qavg: f64,
    next_adapt: SimTime,
    /// f(B_e) at the last ACK (bytes), for time series.
    last: f64,
}

impl Ewa {
    pub fn new(p: EwaParams) -> Ewa {
        Ewa { p, alpha: p.alpha, qavg: 0.0, next_adapt: SimTime::ZERO + p.interval, last: f64::NAN }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn qavg(&self) -> f64 {
        self.qavg
    }

    /// f(B_e) = α·log2(B_e in packets), 0 below one free packet.
    pub fn window_for(alpha: f64, free_bytes: u64) -> f64 {
        let pkts = free_bytes as f64 / MTU_BYTES as f64;
        if pkts < 1.0 {
            0.0
        } else {
            alpha * pkts.log2()
        }
    }
}

impl AckRewriter for Ewa {
    fn name(&self) -> &'static str {
        "ewa"
    }

    fn rewrite(&mut self, window: u64, mss: u64, fwd: &QueueView) -> u64 {
        let free = fwd.capacity_bytes.saturating_sub(fwd.backlog.bytes);
        let f = Ewa::window_for(self.alpha, free);
        let w = (f.max(mss as f64).round() as u64).min(window);
        self.last = f;
        w
    }

    fn on_fwd_enqueue(&mut self, fwd: &QueueView) {
        let g = self.p.g;
        self.qavg = (1.0 - g) * self.qavg + g * fwd.backlog.bytes as f64;
        if fwd.now >= self.next_adapt {
            if self.qavg < self.p.low as f64 {
                self.alpha += self.p.w_up;
            } else if self.qavg > self.p.high as f64 {
                self.alpha = (self.alpha - self.p.w_down).max(0.0);
            }
            self.next_adapt = fwd.now + self.p.interval;
        }
    }

    /// f(B_e) at the last ACK: the window EWA imposes (bytes).
    fn internal_state(&self) -> f64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::Backlog;
    use crate::units::Dur;

    fn params() -> EwaParams {
        EwaParams {
            alpha: 10_000.0,
            g: 1.0 / 128.0,
            interval: Dur::from_millis(500),
            low: 25_000,
            high: 50_000,
            w_up: 500.0,
            w_down: 1000.0,
        }
    }

    fn view(now_ms: u64, used: u64) -> QueueView {
        QueueView {
            now: SimTime(now_ms * 1_000_000),
            backlog: Backlog { bytes: used, pkts: used / 1500 },
            capacity_bytes: 96_000,
        }
    }

    #[test]
    fn window_is_alpha_log2_of_the_free_buffer() {
        let mut ewa = Ewa::new(params());
        // Empty: 96 kB = 64 packets free → 10 000 · 6 = 60 000 B.
        assert_eq!(ewa.rewrite(1_000_000, 1448, &view(0, 0)), 60_000);
        assert_eq!(ewa.internal_state(), 60_000.0);
        // 48 kB used: 32 packets free → 50 000 B; min with a smaller advertised window.
        assert_eq!(ewa.rewrite(1_000_000, 1448, &view(0, 48_000)), 50_000);
        assert_eq!(ewa.rewrite(40_000, 1448, &view(0, 48_000)), 40_000);
        // 94.5 kB used: one packet free → log2(1) = 0 → one MSS; less than a packet: MSS.
        assert_eq!(ewa.rewrite(1_000_000, 1448, &view(0, 94_500)), 1448);
        assert_eq!(ewa.rewrite(1_000_000, 1448, &view(0, 96_000)), 1448);
    }

    #[test]
    fn average_and_alpha_adaptation() {
        let mut ewa = Ewa::new(params());
        // Q̄ is an EWMA with g = 1/128 over arrivals.
        ewa.on_fwd_enqueue(&view(1, 12_800));
        assert!((ewa.qavg() - 100.0).abs() < 1e-9);
        assert_eq!(ewa.alpha(), 10_000.0);
        // At the first T boundary Q̄ < T_l: α += W_up; not again before another T.
        ewa.on_fwd_enqueue(&view(500, 0));
        assert_eq!(ewa.alpha(), 10_500.0);
        ewa.on_fwd_enqueue(&view(999, 0));
        assert_eq!(ewa.alpha(), 10_500.0);
        // Q̄ > T_h: α −= W_down.
        ewa.qavg = 60_000.0;
        ewa.on_fwd_enqueue(&view(1000, 60_000));
        assert_eq!(ewa.alpha(), 9_500.0);
        // Between the marks: unchanged.
        ewa.qavg = 30_000.0;
        ewa.on_fwd_enqueue(&view(1500, 30_000));
        assert_eq!(ewa.alpha(), 9_500.0);
        // α never goes negative.
        ewa.alpha = 400.0;
        ewa.qavg = 90_000.0;
        ewa.on_fwd_enqueue(&view(2000, 90_000));
        assert_eq!(ewa.alpha(), 0.0);
        assert_eq!(ewa.rewrite(100_000, 1448, &view(2000, 0)), 1448);
    }
}
