//! What the bottleneck measures, with the simulator's definitions (docs/scenario.md, summary
//! JSON): time-average backlog, sojourn from enqueue to the start of serialization, drops by
//! cause, busy time; counters restart when the warm-up ends. Everything is preallocated.

use bloatlab_sim::metrics::{Busy, DropReasons, QueueMeasure};
use bloatlab_sim::queue::{DropReason, DROP_REASONS};
use bloatlab_sim::units::SimTime;
use hdrhistogram::Histogram;
use serde_json::{json, Value};

pub struct QueueStats {
    pub counting: bool,
    window_start: SimTime,
    // Time-average backlog: ∫ backlog dt over the window, in byte·ns.
    last_change: SimTime,
    last_backlog: u64,
    backlog_integral: u128,
    busy_ns: u64,
    sojourn_sum: u128,
    sojourn_n: u64,
    sojourn_hist: Histogram<u64>,
    pub arrivals: u64,
    pub drops: [u64; DROP_REASONS],
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    // Whole-run counters (for time series and the engine block).
    pub total_drops: u64,
    pub total_tx_pkts: u64,
    pub total_tx_bytes: u64,
    // Since the last time-series sample.
    i_sojourn_sum: u128,
    i_sojourn_n: u64,
    i_tx_bytes: u64,
}

impl Default for QueueStats {
    fn default() -> Self {
        QueueStats::new()
    }
}

impl QueueStats {
    pub fn new() -> QueueStats {
        QueueStats {
            counting: false,
            window_start: SimTime::ZERO,
            last_change: SimTime::ZERO,
            last_backlog: 0,
            backlog_integral: 0,
            busy_ns: 0,
            sojourn_sum: 0,
            sojourn_n: 0,
            sojourn_hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds"),
            arrivals: 0,
            drops: [0; DROP_REASONS],
            tx_pkts: 0,
            tx_bytes: 0,
            total_drops: 0,
            total_tx_pkts: 0,
            total_tx_bytes: 0,
            i_sojourn_sum: 0,
            i_sojourn_n: 0,
            i_tx_bytes: 0,
        }
    }

    /// The warm-up is over: window counters start from zero at `now`.
    pub fn start_window(&mut self, now: SimTime) {
        self.counting = true;
        self.window_start = now;
        self.last_change = now;
        self.backlog_integral = 0;
        self.busy_ns = 0;
        self.sojourn_sum = 0;
        self.sojourn_n = 0;
        self.sojourn_hist.reset();
        self.arrivals = 0;
        self.drops = [0; DROP_REASONS];
        self.tx_pkts = 0;
        self.tx_bytes = 0;
    }

    #[inline]
    pub fn backlog_changed(&mut self, now: SimTime, backlog: u64) {
        if self.counting && now > self.last_change {
            self.backlog_integral += self.last_backlog as u128 * (now.0 - self.last_change.0) as u128;
            self.last_change = now;
        }
        self.last_backlog = backlog;
    }

    #[inline]
    pub fn arrival(&mut self) {
        if self.counting {
            self.arrivals += 1;
        }
    }

    #[inline]
    pub fn drop(&mut self, r: DropReason) {
        self.total_drops += 1;
        if self.counting {
            self.drops[r as usize] += 1;
        }
    }

    /// A packet starts serialization at `start` after `sojourn` ns in the queue; it ends at `end`.
    #[inline]
    pub fn transmit(&mut self, sojourn: u64, bytes: u64, start: SimTime, end: SimTime) {
        self.total_tx_pkts += 1;
        self.total_tx_bytes += bytes;
        self.i_sojourn_sum += sojourn as u128;
        self.i_sojourn_n += 1;
        self.i_tx_bytes += bytes;
        if self.counting {
            self.tx_pkts += 1;
            self.tx_bytes += bytes;
            self.sojourn_sum += sojourn as u128;
            self.sojourn_n += 1;
            let _ = self.sojourn_hist.record(sojourn.max(1));
            // Busy time inside the window (a packet started before the warm-up ended counts
            // from the window's start).
            self.busy_ns += end.0.saturating_sub(start.0.max(self.window_start.0));
        }
    }

    /// Mean sojourn (ms) and bytes sent since the previous call, for a time-series sample.
    pub fn take_interval(&mut self) -> (f64, u64) {
        let s = if self.i_sojourn_n > 0 { self.i_sojourn_sum as f64 / self.i_sojourn_n as f64 / 1e6 } else { f64::NAN };
        let b = self.i_tx_bytes;
        self.i_sojourn_sum = 0;
        self.i_sojourn_n = 0;
        self.i_tx_bytes = 0;
        (s, b)
    }

    /// What the queue measured over [window, end], for the summary builder shared with the
    /// simulator (`bloatlab_sim::metrics::measure`).
    pub fn measure(&mut self, end: SimTime, aqm: &str, capacity_bytes: u64, rate_mbps: f64, random_losses: u64) -> QueueMeasure {
        self.backlog_changed(end, self.last_backlog);
        QueueMeasure {
            aqm: aqm.to_string(),
            capacity_bytes,
            rate_mbps,
            window_s: end.0.saturating_sub(self.window_start.0) as f64 / 1e9,
            backlog_area: self.backlog_integral as f64,
            sojourn_n: self.sojourn_n,
            sojourn_sum_ns: self.sojourn_sum as f64,
            sojourn_p95_ns: self.sojourn_hist.value_at_quantile(0.95),
            arrivals: self.arrivals,
            drop_reasons: DropReasons {
                overflow: self.drops[DropReason::Overflow as usize],
                early: self.drops[DropReason::Early as usize],
                aqm_dequeue: self.drops[DropReason::AqmDequeue as usize],
            },
            random_losses,
            tx_packets: self.tx_pkts,
            tx_bytes: self.tx_bytes,
            // The emulated links have a constant rate: utilization is busy time.
            busy: Busy::Time { busy_s: self.busy_ns as f64 / 1e9 },
        }
    }
}

/// A queue's block in the summary's shape (the builder's), plus the window's arrivals and
/// transmissions: what the emulation block reports of the reverse bottleneck.
pub fn queue_block(m: &QueueMeasure) -> Value {
    let mut v = serde_json::to_value(m.summary()).unwrap_or(Value::Null);
    if let Value::Object(o) = &mut v {
        o.insert("arrivals".into(), json!(m.arrivals));
        o.insert("tx_packets".into(), json!(m.tx_packets));
        o.insert("tx_bytes".into(), json!(m.tx_bytes));
    }
    v
}

/// Per-flow counters at the bottleneck (data direction), for `loss_pct`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FlowCounters {
    pub data_pkts: u64,
    pub data_drops: u64,
}

/// The sampled queue time series (the simulator's `queues` table columns), preallocated.
pub struct QueueSeries {
    pub t_s: Vec<f64>,
    pub link: Vec<&'static str>,
    pub backlog_bytes: Vec<i64>,
    pub backlog_pkts: Vec<i64>,
    pub drops: Vec<i64>,
    pub sojourn_ms: Vec<f64>,
    pub tx_mbps: Vec<f64>,
    pub aqm_state: Vec<f64>,
}

impl QueueSeries {
    pub fn with_capacity(n: usize) -> QueueSeries {
        QueueSeries {
            t_s: Vec::with_capacity(n),
            link: Vec::with_capacity(n),
            backlog_bytes: Vec::with_capacity(n),
            backlog_pkts: Vec::with_capacity(n),
            drops: Vec::with_capacity(n),
            sojourn_ms: Vec::with_capacity(n),
            tx_mbps: Vec::with_capacity(n),
            aqm_state: Vec::with_capacity(n),
        }
    }

    /// Appends one row unless the preallocated room is used up (a run that overstays its
    /// duration keeps its early samples rather than allocating on the hot path).
    #[allow(clippy::too_many_arguments)]
    pub fn push(&mut self, t: SimTime, link: &'static str, bytes: u64, pkts: u64, drops: u64, sojourn_ms: f64, tx_mbps: f64, aqm: f64) {
        if self.t_s.len() == self.t_s.capacity() {
            return;
        }
        self.t_s.push(t.secs_f64());
        self.link.push(link);
        self.backlog_bytes.push(bytes as i64);
        self.backlog_pkts.push(pkts as i64);
        self.drops.push(drops as i64);
        self.sojourn_ms.push(sojourn_ms);
        self.tx_mbps.push(tx_mbps);
        self.aqm_state.push(aqm);
    }

    /// Columns as JSON (NaN becomes null).
    pub fn to_json(&self) -> Value {
        let f = |v: &Vec<f64>| v.iter().map(|x| if x.is_finite() { json!(x) } else { Value::Null }).collect::<Vec<_>>();
        json!({
            "t_s": self.t_s, "link": self.link, "backlog_bytes": self.backlog_bytes,
            "backlog_pkts": self.backlog_pkts, "drops": self.drops, "sojourn_ms": f(&self.sojourn_ms),
            "tx_mbps": f(&self.tx_mbps), "aqm_state": f(&self.aqm_state),
        })
    }
}
