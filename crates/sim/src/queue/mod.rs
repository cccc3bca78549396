//! Queue disciplines: what a link does with packets waiting for its serializer.
//! The trait is shaped for AQMs: enqueue may drop or mark, dequeue may drop (CoDel does).

mod codel;
mod droptail;
mod pie;
mod red;

pub use codel::Codel;
pub use droptail::DropTail;
pub use pie::Pie;
pub use red::Red;

use crate::config::{QueueCfg, QueueKind, QueueLimit, MTU_BYTES};
use crate::engine::SimRng;
use crate::ids::PacketId;
use crate::units::SimTime;

/// What a queue knows about a packet: enough to decide without touching the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QEntry {
    pub id: PacketId,
    pub bytes: u32,
    pub enqueued_at: SimTime,
    pub ecn_capable: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full.
    Overflow,
    /// An AQM dropped it before the buffer filled (RED, PIE at enqueue).
    Early,
    /// An AQM dropped it at dequeue (CoDel).
    AqmDequeue,
    /// Random loss on the link.
    RandomLoss,
}

pub const DROP_REASONS: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Queued,
    /// Queued and ECN-marked (CE).
    Marked,
    Dropped(DropReason),
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    pub bytes: u64,
    pub pkts: u64,
}

pub trait QueueDisc: Send {
    /// The discipline's name as used in scenarios ("droptail").
    fn name(&self) -> &'static str;
    fn enqueue(&mut self, e: QEntry, now: SimTime) -> Verdict;
    /// The next packet to transmit, if any. Packets the discipline drops on the way are
    /// appended to `dropped`.
    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<(QEntry, DropReason)>) -> Option<QEntry>;
    fn backlog(&self) -> Backlog;
    /// The buffer size in bytes (packet limits converted at the MTU).
    fn capacity_bytes(&self) -> u64;
    /// The discipline's main internal variable for time series: RED's average queue (bytes,
    /// or packets for a packet limit), PIE's drop probability, CoDel's drop count while in
    /// its dropping state (0 outside it); NaN for drop-tail.
    fn internal_state(&self) -> f64 {
        f64::NAN
    }
    /// Whether the packet the last `dequeue` returned must be ECN-marked (CE) on its way out
    /// (CoDel with ECN marks at dequeue); the world sets the mark.
    fn last_dequeue_marked(&self) -> bool {
        false
    }
}

/// Builds a discipline; `rng` is its own random stream (RED and PIE draw from it).
pub fn build(cfg: &QueueCfg, rng: SimRng) -> Box<dyn QueueDisc> {
    match cfg.kind {
        QueueKind::DropTail => Box::new(DropTail::new(cfg.limit)),
        QueueKind::Red(p) => Box::new(Red::new(cfg.limit, p, rng)),
        QueueKind::Codel(p) => Box::new(Codel::new(cfg.limit, p)),
        QueueKind::Pie(p) => Box::new(Pie::new(cfg.limit, p, rng)),
    }
}

/// Would `e` overflow a buffer holding `bytes` in `pkts` packets under `limit`? (Byte limits
/// admit a packet only if it fits whole; packet limits count packets whatever their size.)
#[inline]
pub(crate) fn overflows(limit: QueueLimit, bytes: u64, pkts: usize, e: &QEntry) -> bool {
    match limit {
        QueueLimit::Bytes(b) => bytes + e.bytes as u64 > b,
        QueueLimit::Packets(p) => pkts as u64 >= p,
    }
}

pub(crate) fn capacity_bytes(limit: QueueLimit) -> u64 {
    match limit {
        QueueLimit::Bytes(b) => b,
        QueueLimit::Packets(p) => p * MTU_BYTES,
    }
}
