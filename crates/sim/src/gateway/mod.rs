//! Gateway ACK rewriters ("network-return" schemes, Talau et al. 2019): they see every TCP
//! ACK leaving the gateway toward the senders, read the state of the gateway's forward
//! (bottleneck) queue, and may lower the advertised window so that senders never overfill
//! the buffer. The world handles window scaling (learned from the SYN-ACKs crossing the
//! gateway) and guarantees a rewriter can only lower a window.

mod awm;
mod ewa;
mod ewt;

pub use awm::{Awm, AwmParams};
pub use ewa::{Ewa, EwaParams};
pub use ewt::{Ewt, EwtParams};

use crate::params::plugin::{Entry, Params, Spec};
use crate::params::{amount_bytes, err, Res, Table};
use crate::queue::Backlog;
use crate::units::SimTime;

/// What a rewriter's parameters may depend on when they are read.
pub struct RewriterCtx {
    /// B: the forward bottleneck buffer in bytes (sizes default to fractions of it).
    pub capacity_bytes: u64,
}

/// Validated parameters of one rewriter: build the gateway's instance.
pub trait RewriterBuild: Params {
    fn build(&self) -> Box<dyn AckRewriter>;
}

crate::as_params!(dyn RewriterBuild);

/// One registered ACK rewriter (`topology.gateway.kind`), declared in its own file: its parse
/// reads the keys of `topology.gateway` besides `kind`, given the forward buffer.
pub type RewriterEntry = Entry<dyn RewriterBuild, RewriterCtx>;

/// Every ACK rewriter, in listing order.
pub static REWRITERS: &[RewriterEntry] = &[ewt::ENTRY, ewa::ENTRY, awm::ENTRY];

/// A gateway ACK-rewriting scheme and its parameters (see docs/gateway.md). Sizes are bytes,
/// already resolved against the forward bottleneck buffer.
pub type GatewayCfg = Spec<dyn RewriterBuild, RewriterCtx>;

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
pub fn rewritten_field(
    rw: &mut dyn AckRewriter,
    field: u16,
    shift: u32,
    mss: u64,
    fwd: &QueueView,
) -> Option<u16> {
    let window = (field as u64) << shift;
    let new = rw.rewrite(window, mss, fwd).min(window);
    let lowered = new.div_ceil(1 << shift).min(field as u64) as u16;
    (lowered < field).then_some(lowered)
}

pub fn build(cfg: &GatewayCfg) -> Box<dyn AckRewriter> {
    cfg.params.build()
}

/// A size key (bytes or packets) that must lie within the buffer B.
pub(crate) fn within_buffer(t: &mut Table, key: &'static str, b: u64) -> Res<Option<u64>> {
    let p = t.key_path(key);
    let Some(v) = t.get(key) else { return Ok(None) };
    let bytes = amount_bytes(&p, v)?.round() as u64;
    if bytes > b {
        return err(
            &p,
            format!("{bytes}B is above the forward bottleneck buffer ({b}B, topology.bottleneck_queue.limit)"),
        );
    }
    Ok(Some(bytes))
}
