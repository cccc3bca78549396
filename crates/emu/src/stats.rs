//! What the emulator reports beside the links' own statistics (those are the simulator's
//! `LinkStats`, kept by each direction's `Link`): the reverse queue's block, per-flow counters
//! at the bottleneck and the sampled queue time series. Everything is preallocated.

use bloatlab_sim::metrics::QueueMeasure;
use bloatlab_sim::units::SimTime;
use serde_json::{json, Value};

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
    pub fn push(
        &mut self,
        t: SimTime,
        link: &'static str,
        bytes: u64,
        pkts: u64,
        drops: u64,
        sojourn_ms: f64,
        tx_mbps: f64,
        aqm: f64,
    ) {
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
        let f = |v: &Vec<f64>| {
            v.iter().map(|x| if x.is_finite() { json!(x) } else { Value::Null }).collect::<Vec<_>>()
        };
        json!({
            "t_s": self.t_s, "link": self.link, "backlog_bytes": self.backlog_bytes,
            "backlog_pkts": self.backlog_pkts, "drops": self.drops, "sojourn_ms": f(&self.sojourn_ms),
            "tx_mbps": f(&self.tx_mbps), "aqm_state": f(&self.aqm_state),
        })
    }
}
