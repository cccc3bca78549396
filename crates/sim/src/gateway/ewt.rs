//! EWT — Early Window Tailoring (Talau, Fonseca & Wille 2019, eq. 9–10).
//!
//! For every ACK leaving the gateway: when the forward queue holds U > S_t bytes of a buffer
//! of B bytes, the advertised window W_r becomes `max((B − U)/B · W_r, MSS)`; otherwise it is
//! left alone. No per-flow state: every ACK gets the same proportional cut. (The paper's
//! Algorithm 1 returns when `S_t < U`, the opposite of its text and Table 1; this follows
//! the text.)

use super::within_buffer;
use super::{AckRewriter, QueueView, RewriterBuild, RewriterEntry};
use crate::params::{Res, Table};
use std::sync::Arc;

pub(super) const ENTRY: RewriterEntry = RewriterEntry {
    name: "ewt",
    doc: "Early Window Tailoring (Talau et al. 2019)",
    keys: &["start"],
    extra: (),
    parse: |t, ctx| Ok(Arc::new(read(t, ctx.capacity_bytes)?)),
};

impl RewriterBuild for EwtParams {
    fn build(&self) -> Box<dyn AckRewriter> {
        Box::new(Ewt::new(*self))
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EwtParams {
    /// S_t: EWT acts only while the forward queue holds more than this many bytes.
    pub start: u64,
}

/// EWT: S_t defaults to 30 % of the buffer (Talau 2019: 29 kB of 97 kB in Table 3, 30 kB of
/// 100 kB in Table 1).
fn read(t: &mut Table, b: u64) -> Res<EwtParams> {
    let start = within_buffer(t, "start", b)?.unwrap_or((b as f64 * 0.3).round() as u64);
    Ok(EwtParams { start })
}

pub struct Ewt {
    start: u64,
    /// The window written into the last ACK (bytes), for time series.
    last: f64,
}

impl Ewt {
    pub fn new(p: EwtParams) -> Ewt {
        Ewt { start: p.start, last: f64::NAN }
    }

    /// Eq. 9–10: the window EWT gives an ACK carrying `window`.
    pub fn tailor(start: u64, window: u64, mss: u64, used: u64, buffer: u64) -> u64 {
        if used <= start || buffer == 0 {
            return window;
        }
        let available = buffer.saturating_sub(used);
        let w = (window as u128 * available as u128 / buffer as u128) as u64;
        w.max(mss)
    }
}

impl AckRewriter for Ewt {
    fn name(&self) -> &'static str {
        "ewt"
    }

    fn rewrite(&mut self, window: u64, mss: u64, fwd: &QueueView) -> u64 {
        let w = Ewt::tailor(self.start, window, mss, fwd.backlog.bytes, fwd.capacity_bytes);
        self.last = w.min(window) as f64;
        w
    }

    /// The window written into the last ACK (bytes).
    fn internal_state(&self) -> f64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::Backlog;
    use crate::units::SimTime;

    fn view(used: u64, buffer: u64) -> QueueView {
        QueueView {
            now: SimTime(0),
            backlog: Backlog { bytes: used, pkts: used / 1500 },
            capacity_bytes: buffer,
        }
    }

    /// Talau et al. 2019, Table 1: B = 100 kB, S_t = 30 kB, W_r = 60 kB.
    #[test]
    fn reproduces_table_1_exactly() {
        let mut ewt = Ewt::new(EwtParams { start: 30_000 });
        let cases = [(20_000, 60_000), (50_000, 30_000), (80_000, 12_000)];
        for (u, w) in cases {
            assert_eq!(ewt.rewrite(60_000, 1460, &view(u, 100_000)), w, "U = {u}");
            assert_eq!(ewt.internal_state(), w as f64);
        }
    }

    #[test]
    fn acts_only_above_the_start_point_and_never_below_one_mss() {
        // At exactly S_t EWT does not act (U > S_t is required).
        assert_eq!(Ewt::tailor(30_000, 60_000, 1460, 30_000, 100_000), 60_000);
        assert_eq!(Ewt::tailor(30_000, 60_000, 1460, 30_001, 100_000), 41_999);
        // A nearly full buffer: the proportional window is tiny, one MSS is the floor.
        assert_eq!(Ewt::tailor(30_000, 60_000, 1460, 99_500, 100_000), 1460);
        assert_eq!(Ewt::tailor(30_000, 60_000, 1460, 100_000, 100_000), 1460);
        // Large scaled windows do not overflow.
        assert_eq!(Ewt::tailor(0, 1 << 30, 1460, 50_000, 100_000), 1 << 29);
    }
}
