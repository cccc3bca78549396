//! Gateway ACK rewriters ("network-return" schemes, Talau et al. 2019): they see every TCP
//! ACK leaving the gateway toward the senders, read the state of the gateway's forward
//! (bottleneck) queue, and may lower the advertised window so that senders never overfill
//! the buffer. The world handles window scaling (learned from the SYN-ACKs crossing the
//! gateway) and guarantees a rewriter can only lower a window.

mod awm;
mod ewa;
mod ewt;

pub use awm::Awm;
pub use ewa::Ewa;
pub use ewt::Ewt;

use crate::config::GatewayCfg;
use crate::queue::Backlog;
use crate::units::SimTime;

/// What a rewriter may read of the forward bottleneck queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueView {
    pub now: SimTime,
    pub backlog: Backlog,
    /// The buffer size B in bytes.
    pub capacity_bytes: u64,
}

pub trait AckRewriter: Send {
    fn name(&self) -> &'static str;
    /// The window (bytes, scaled) an ACK leaving the gateway should carry, given the one it
    /// carries now. The world clamps the answer to `window` (rewriters never raise it).
    fn rewrite(&mut self, window: u64, mss: u64, fwd: &QueueView) -> u64;
    /// A packet entered the forward queue (AWM's per-event update).
    fn on_fwd_enqueue(&mut self, _fwd: &QueueView) {}
    /// A packet left the forward queue.
    fn on_fwd_dequeue(&mut self, _fwd: &QueueView) {}
    /// The scheme's main internal variable for time series (e.g. the window it imposes).
    fn internal_state(&self) -> f64 {
        f64::NAN
    }
}

/// The window field an ACK leaves the gateway with, given the field it carries and the
/// connection's window-scale `shift`: the rewriter's answer for the scaled window, never above
/// what the ACK carried, and rounded up so that a one-MSS window survives scaling. `None` when
/// the field stays as it is. The simulator's gateway and the emulator's share this rule.
pub fn rewritten_field(rw: &mut dyn AckRewriter, field: u16, shift: u32, mss: u64, fwd: &QueueView) -> Option<u16> {
    let window = (field as u64) << shift;
    let new = rw.rewrite(window, mss, fwd).min(window);
    let lowered = new.div_ceil(1 << shift).min(field as u64) as u16;
    (lowered < field).then_some(lowered)
}

pub fn build(cfg: &GatewayCfg) -> Box<dyn AckRewriter> {
    match *cfg {
        GatewayCfg::Ewt(p) => Box::new(Ewt::new(p)),
        GatewayCfg::Ewa(p) => Box::new(Ewa::new(p)),
        GatewayCfg::Awm(p) => Box::new(Awm::new(p)),
    }
}
