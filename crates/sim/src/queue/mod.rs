//! Queue disciplines: what a link does with packets waiting for its serializer.
//! The trait is shaped for AQMs: enqueue may drop or mark, dequeue may drop (CoDel does) or
//! ask for a mark on the packet it returns.
//!
//! Every discipline lives in one file that declares its [`QueueEntry`] (name, doc line, keys,
//! default limit, and a parse function that reads its parameters with the parameter reader, so
//! errors name the key path) and its parameter type, which builds the discipline
//! ([`QueueBuild`]); [`DISCIPLINES`] lists them once. See docs/extending.md.

mod cake;
mod codel;
mod droptail;
mod dualpi2;
mod fifo;
/// The 5-tuple flow-aware disciplines classify on (defined below the queues: packets carry
/// it too) and the hash key each such queue draws from its own random stream.
mod flowkey {
    pub use crate::wire::flowkey::*;

    /// A 64-bit hash key from a queue's random stream (two 53-bit draws).
    pub fn hash_key(rng: &mut crate::engine::SimRng) -> u64 {
        let a = (rng.uniform() * (1u64 << 53) as f64) as u64;
        let b = (rng.uniform() * (1u64 << 53) as f64) as u64;
        (a << 11) ^ b
    }
}
mod fq_codel;
mod link_queue;
mod pie;
mod red;
mod step;

pub use cake::{diffserv4_tin, Cake, CakeParams, Diffserv, Isolation};
pub use codel::{Codel, CodelParams, CodelState};
pub use droptail::DropTail;
pub use dualpi2::{DualPi2, DualPi2Params, StepThresh};
pub use fifo::Fifo;
pub use flowkey::{FlowKey, PureAck, PROTO_DCCP, PROTO_TCP, PROTO_UDP};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use link_queue::LinkQueue;
pub use pie::{Pie, PieParams};
pub use red::{Red, RedParams};
pub use step::{Step, StepParams, Threshold};

use crate::engine::SimRng;
use crate::ids::PacketId;
use crate::params::plugin::{self, Entry, Params, Spec};
use crate::units::{Rate, SimTime};
use crate::wire::{Ecn, MTU_BYTES};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    Bytes(u64),
    Packets(u64),
}

/// A queue discipline chosen from the registry [`DISCIPLINES`] with its parsed parameters,
/// and its limit (see docs/gateway.md).
#[derive(Debug, Clone)]
pub struct QueueCfg {
    pub spec: QueueSpec,
    pub limit: QueueLimit,
}

impl QueueCfg {
    /// A drop-tail queue of `limit` (the default of every queue).
    pub fn droptail(limit: QueueLimit) -> QueueCfg {
        QueueCfg { spec: QueueSpec::new(&droptail::DEF, share(droptail::DropTailParams)), limit }
    }

    /// The discipline's name (`kind`).
    pub fn kind(&self) -> &'static str {
        self.spec.name()
    }

    /// The parameters as the discipline's own type (tests inspect them).
    #[cfg(test)]
    pub(crate) fn params_as<T: 'static>(&self) -> Option<&T> {
        self.spec.params().as_any().downcast_ref()
    }
}

/// What a queue knows about a packet: enough to decide without touching the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QEntry {
    pub id: PacketId,
    pub bytes: u32,
    pub enqueued_at: SimTime,
    /// The packet's ECN codepoint when it arrived.
    pub ecn: Ecn,
    /// Its 5-tuple (flow-queueing disciplines hash it).
    pub key: FlowKey,
    /// Its DSCP (the IP header's upper six TOS bits).
    pub dscp: u8,
    /// Set for a pure TCP ACK (CAKE's ACK filter).
    pub ack: Option<PureAck>,
}

/// Every queue moves entries by value: keep them small (checked when compiling).
const _: () = assert!(std::mem::size_of::<QEntry>() <= 48);

impl QEntry {
    /// ECN-capable transport: an AQM may mark it instead of dropping it.
    #[inline]
    pub fn ect(&self) -> bool {
        self.ecn.is_ect()
    }
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

/// The packet a dequeue hands to the serializer, and whether it must leave CE-marked (an AQM
/// that marks at dequeue, as CoDel with ECN does; the caller sets the mark).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dequeued {
    pub entry: QEntry,
    pub mark: bool,
}

impl Dequeued {
    #[inline]
    pub fn plain(entry: QEntry) -> Dequeued {
        Dequeued { entry, mark: false }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    pub bytes: u64,
    pub pkts: u64,
}

pub trait QueueDisc: Send {
    /// The discipline's name as used in scenarios ("droptail").
    fn name(&self) -> &'static str;
    /// Offers `e` to the queue. The verdict is about `e`; packets already queued that the
    /// discipline pushes out to make room (FQ-CoDel's fat-flow drops) or filters (CAKE's
    /// ACK filter) are appended to `dropped`.
    fn enqueue(
        &mut self,
        e: QEntry,
        now: SimTime,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Verdict;
    /// The next packet to transmit, if any. Packets the discipline drops on the way are
    /// appended to `dropped` (the caller keeps one vector and clears it: no allocation).
    fn dequeue(
        &mut self,
        now: SimTime,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Option<Dequeued>;
    fn backlog(&self) -> Backlog;
    /// When a discipline with a shaper (CAKE's `bandwidth`) returned nothing although it
    /// holds packets: the time it will release the next one (the link retries then).
    fn ready_at(&self) -> Option<SimTime> {
        None
    }
    /// Cut-through: whether `e`, offered now, would be the next packet dequeued, at once and
    /// unchanged — the queue is empty, admits `e`, and would neither mark, drop nor hold it
    /// back. A link whose serializer is idle then hands `e` straight to it and calls neither
    /// `enqueue` nor `dequeue` for it, so answer `true` only where the discipline's state
    /// after that pair would be what it is now. Saves touching the queue's buffer on lightly
    /// loaded links; the default never cuts through.
    #[inline]
    fn cut_through(&self, _e: &QEntry) -> bool {
        false
    }
    /// The buffer size in bytes (packet limits converted at the MTU).
    fn capacity_bytes(&self) -> u64;
    /// The discipline's main internal variable for time series: RED's average queue (bytes,
    /// or packets for a packet limit), PIE's drop probability, CoDel's drop count while in
    /// its dropping state (0 outside it); NaN for drop-tail.
    fn internal_state(&self) -> f64 {
        f64::NAN
    }
}

/// What a builder gets besides its parameters.
pub struct BuildCx {
    pub limit: QueueLimit,
    /// The nominal (mean) rate of the link the queue feeds: thresholds given as times are
    /// converted with it.
    pub rate: Rate,
    /// The queue's own random stream (RED and PIE draw from it).
    pub rng: SimRng,
}

/// A discipline's validated parameters: they build one queue per link (the registry shape of
/// every extension point, [`crate::params::plugin`]).
pub trait QueueBuild: Params {
    fn build(&self, cx: BuildCx) -> Box<dyn QueueDisc>;
}

crate::as_params!(dyn QueueBuild);

/// One queue discipline of the registry: its parse reads the table's own keys given the
/// queue's limit (`Cx`); `extra` is its default limit.
pub type QueueEntry = Entry<dyn QueueBuild, QueueLimit, QueueLimit>;

/// A discipline with its parameters.
pub type QueueSpec = Spec<dyn QueueBuild, QueueLimit, QueueLimit>;

/// Parameters as the registry holds them.
pub(crate) fn share<P: QueueBuild>(p: P) -> Arc<dyn QueueBuild> {
    Arc::new(p)
}

/// The default limit of most queues (Linux's txqueuelen, CoDel's and PIE's default limit).
pub const DEFAULT_LIMIT: QueueLimit = QueueLimit::Packets(1000);

/// Every queue discipline, in the order error messages list them.
pub static DISCIPLINES: &[QueueEntry] = &[
    droptail::DEF,
    red::RED_DEF,
    red::ARED_DEF,
    codel::DEF,
    pie::DEF,
    step::DEF,
    fq_codel::DEF,
    dualpi2::DEF,
    cake::DEF,
];

/// The discipline called `name`.
pub fn lookup(name: &str) -> Option<&'static QueueEntry> {
    plugin::lookup(DISCIPLINES, name)
}

/// Builds a discipline for a link of nominal rate `rate`; `rng` is its own random stream.
/// Drop-tail comes back inline (see [`LinkQueue`]), every other discipline boxed.
pub fn build(cfg: &QueueCfg, rng: SimRng, rate: Rate) -> LinkQueue {
    if cfg.spec.name() == droptail::DEF.name {
        return LinkQueue::DropTail(DropTail::new(cfg.limit));
    }
    cfg.spec.params().build(BuildCx { limit: cfg.limit, rate, rng }).into()
}

pub fn capacity_bytes(limit: QueueLimit) -> u64 {
    match limit {
        QueueLimit::Bytes(b) => b,
        QueueLimit::Packets(p) => p * MTU_BYTES,
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    /// A packet of `bytes` enqueued at `at`.
    pub fn entry(i: u32, bytes: u32, at: SimTime, ecn: Ecn) -> QEntry {
        QEntry {
            id: PacketId(i),
            bytes,
            enqueued_at: at,
            ecn,
            key: FlowKey::default(),
            dscp: 0,
            ack: None,
        }
    }

    pub fn ect(yes: bool) -> Ecn {
        if yes {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_and_keys_exclude_kind_and_limit() {
        plugin::check_list(DISCIPLINES, &["kind", "limit"]);
        for d in DISCIPLINES {
            assert_eq!(lookup(d.name).unwrap().name, d.name);
        }
        assert!(lookup("nope").is_none());
    }

    #[test]
    fn configs_compare_by_discipline_and_parameters() {
        use crate::units::Dur;
        let a = QueueCfg::droptail(DEFAULT_LIMIT);
        assert_eq!(a.spec, a.clone().spec);
        let codel = |target| {
            let p = CodelParams { target, interval: Dur(100), ecn: false };
            QueueSpec::new(&codel::DEF, share(p))
        };
        assert_eq!(codel(Dur(5)), codel(Dur(5)));
        assert_ne!(codel(Dur(5)), codel(Dur(6)));
        assert_ne!(a.spec, codel(Dur(5)));
        assert_eq!(format!("{:?}", a.spec), "droptailDropTailParams");
    }
}
