//! A one-direction link: queue discipline → serializer → propagation delay → random loss.
//! The world drives it (it needs the pool and the event queue); this file holds its state and
//! the bookkeeping that metrics read.

use crate::engine::SimRng;
use crate::ids::PacketId;
use crate::queue::{QueueDisc, DROP_REASONS};
use crate::net::rate_model::RateModel;
use crate::units::{Dur, SimTime};
use hdrhistogram::Histogram;
use std::collections::VecDeque;

pub struct Link {
    pub name: String,
    pub rate: RateModel,
    pub delay: Dur,
    pub loss: f64,
    /// Sorted indices of packets to lose (deterministic loss list) and the next one's position.
    pub drop_list: Vec<u64>,
    pub drop_next: usize,
    pub rng: SimRng,
    pub queue: Box<dyn QueueDisc>,
    /// The packet being serialized and when its serialization started.
    pub in_tx: Option<(PacketId, SimTime)>,
    /// Packets propagating, in arrival order (constant delay keeps them ordered).
    pub pipe: VecDeque<(SimTime, PacketId)>,
    pub stats: LinkStats,
    /// Record per-packet sojourn and the backlog integral (bottleneck links).
    pub monitored: bool,
}

/// Whole-run counters (for conservation) and measurement-window metrics (after warm-up).
pub struct LinkStats {
    pub arrivals: u64,
    pub drops: [u64; DROP_REASONS],
    pub transmitted: u64,
    pub delivered: u64,

    /// Measurement window.
    pub counting: bool,
    pub window_start: SimTime,
    pub w_arrivals: u64,
    pub w_drops: [u64; DROP_REASONS],
    pub w_tx_pkts: u64,
    pub w_tx_bytes: u64,
    pub w_busy: Dur,
    /// The link's cumulative capacity (bytes) when the window started.
    pub w_capacity_start: u64,
    /// Bytes the link could have carried during the window (set when the run ends).
    pub w_capacity: u64,
    /// ∫ backlog_bytes dt, in byte·ns.
    pub w_backlog_area: u128,
    pub last_backlog_change: SimTime,
    pub last_backlog: u64,
    pub w_sojourn_sum: u128,
    pub w_sojourn_n: u64,
    pub sojourn_hist: Histogram<u64>,

    /// Interval counters for time series (reset at each sample).
    pub i_tx_bytes: u64,
    pub i_sojourn_sum: u128,
    pub i_sojourn_n: u64,
}

impl LinkStats {
    pub fn new() -> LinkStats {
        LinkStats {
            arrivals: 0,
            drops: [0; DROP_REASONS],
            transmitted: 0,
            delivered: 0,
            counting: true,
            window_start: SimTime::ZERO,
            w_arrivals: 0,
            w_drops: [0; DROP_REASONS],
            w_tx_pkts: 0,
            w_tx_bytes: 0,
            w_busy: Dur::ZERO,
            w_capacity_start: 0,
            w_capacity: 0,
            w_backlog_area: 0,
            last_backlog_change: SimTime::ZERO,
            last_backlog: 0,
            w_sojourn_sum: 0,
            w_sojourn_n: 0,
            sojourn_hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds"),
            i_tx_bytes: 0,
            i_sojourn_sum: 0,
            i_sojourn_n: 0,
        }
    }

    /// Accumulates the backlog integral up to `now`, then records the new backlog.
    #[inline]
    pub fn backlog_changed(&mut self, now: SimTime, backlog: u64) {
        if self.counting {
            let dt = now.since(self.last_backlog_change).0 as u128;
            self.w_backlog_area += self.last_backlog as u128 * dt;
        }
        self.last_backlog_change = now;
        self.last_backlog = backlog;
    }

    /// Starts the measurement window (end of warm-up): window counters restart from zero.
    pub fn start_window(&mut self, now: SimTime) {
        self.counting = true;
        self.window_start = now;
        self.w_arrivals = 0;
        self.w_drops = [0; DROP_REASONS];
        self.w_tx_pkts = 0;
        self.w_tx_bytes = 0;
        self.w_busy = Dur::ZERO;
        self.w_backlog_area = 0;
        self.last_backlog_change = now;
        self.w_sojourn_sum = 0;
        self.w_sojourn_n = 0;
        self.sojourn_hist.reset();
    }

    /// Busy time of a transmission over [start, end], clipped to the window.
    #[inline]
    pub fn add_busy(&mut self, start: SimTime, end: SimTime) {
        if self.counting {
            let s = start.max(self.window_start);
            if end > s {
                self.w_busy += end - s;
            }
        }
    }
}

impl Link {
    /// Decides whether the packet that just finished serialization is lost on the wire:
    /// by the deterministic list first (the n-th packet to cross), then at random.
    #[inline]
    pub fn loses_next(&mut self, crossing_index: u64) -> bool {
        if self.drop_list.get(self.drop_next) == Some(&crossing_index) {
            self.drop_next += 1;
            return true;
        }
        self.loss > 0.0 && self.rng.chance(self.loss)
    }
}

impl Default for LinkStats {
    fn default() -> Self {
        Self::new()
    }
}
