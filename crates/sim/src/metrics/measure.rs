//! The one builder of the summary JSON's shape. An engine — the simulated world, the
//! emulator's bottleneck, the Python emulation front (through crates/py) — fills plain
//! measurement structs with what it counted over the measurement window; [`build`] derives
//! every summary field from them, so the definitions (rates per second of active time, loss
//! and efficiency percentages, means, Jain's index, the response-time CI) live in one place.
//! The structs know nothing of links, queues or sockets: each engine reads its own.

use serde::{Deserialize, Serialize};

use super::stats::jain;
use super::summary::PageLoads;
use super::summary::{
    BottleneckSummary, DropReasons, EngineSummary, Fairness, FlowSummary, Responses, Summary,
};

/// A whole run's measurements.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunMeasure {
    pub name: String,
    pub seed: u64,
    pub duration_s: f64,
    pub flows: Vec<FlowMeasure>,
    pub bottleneck: QueueMeasure,
    /// Further links whose queue is reported (graph topologies, `[metrics] links`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkMeasure>,
    pub engine: EngineMeasure,
    /// The RPM test's result (`[responsiveness]`), absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responsiveness: Option<crate::app::rpm::RpmSummary>,
    /// The Wi-Fi BSS's measurements (the `wifi` topology, net/wifi), absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wifi: Option<serde_json::Value>,
}

/// A named link's queue over the window.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LinkMeasure {
    pub name: String,
    #[serde(flatten)]
    pub queue: QueueMeasure,
}

/// One flow over its active time in the window.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowMeasure {
    pub id: u32,
    pub group: String,
    pub transport: String,
    pub cc: String,
    pub start_s: f64,
    /// When a sized flow completed (None: it did not, or it has no size).
    pub end_s: Option<f64>,
    pub fct_s: Option<f64>,
    /// Seconds from max(start, warm-up) to completion or the end of the run.
    pub active_s: f64,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub bytes_delivered: u64,
    pub data_pkts: u64,
    pub data_drops: u64,
    pub rtt: DelayMeasure,
    pub owd: DelayMeasure,
    pub base_rtt_ms: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// None where the engine cannot count recovery episodes (Linux has no counter).
    pub recoveries: Option<u64>,
    /// Web flows: response times (s) of requests started in the window.
    pub responses: Option<Vec<f64>>,
    /// Page flows: load times (s) of pages started in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<f64>>,
    pub datagrams_delivered: Option<u64>,
    pub jitter_ms: Option<f64>,
    /// Video flows: their frames over the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<VideoMeasure>,
}

/// A video flow's frames: capture-to-receive delays of frames captured in the window, the
/// frames judged for loss and lost, and the freezes seen.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct VideoMeasure {
    pub frames: u64,
    pub p50_ns: u64,
    pub p95_ns: u64,
    pub p99_ns: u64,
    pub judged: u64,
    pub lost: u64,
    pub freezes: u64,
    /// Judged frames completed by a retransmission, and retransmissions sent in the window.
    #[serde(default)]
    pub repaired: u64,
    #[serde(default)]
    pub rtx_packets: u64,
}

/// Delay samples: their count, sum and 95th percentile (each engine's own percentile method).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct DelayMeasure {
    pub n: u64,
    pub sum_ns: f64,
    pub p95_ns: u64,
}

/// The bottleneck queue over the window.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueueMeasure {
    pub aqm: String,
    pub capacity_bytes: u64,
    pub rate_mbps: f64,
    pub window_s: f64,
    /// ∫ backlog dt over the window, byte·ns (as f64: JSON has no 128-bit integers).
    pub backlog_area: f64,
    pub sojourn_n: u64,
    pub sojourn_sum_ns: f64,
    pub sojourn_p95_ns: u64,
    pub arrivals: u64,
    pub drop_reasons: DropReasons,
    pub random_losses: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub busy: Busy,
}

/// What the utilization is taken from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Busy {
    /// A constant-rate link: serializer busy time in the window.
    Time { busy_s: f64 },
    /// A variable-rate link: bytes carried over the capacity offered (waiting for a trace
    /// opportunity is not work).
    Offered { offered_bytes: u64 },
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct EngineMeasure {
    pub wall_s: f64,
    pub events: u64,
    pub bottleneck_packets: u64,
    /// Wall time of building the world (topology, endpoints) before the first event.
    #[serde(default)]
    pub setup_s: f64,
    /// Packet transmissions over every link (each hop of each packet counts once); None
    /// where the engine cannot count them (the emulation).
    #[serde(default)]
    pub transmissions: Option<u64>,
}

impl FlowMeasure {
    pub fn summary(&self) -> FlowSummary {
        let active = self.active_s;
        let per_s = |b: u64| if active > 0.0 { b as f64 * 8.0 / active / 1e6 } else { 0.0 };
        let sent = self.bytes_sent;
        let mean_ms = |d: &DelayMeasure| (d.n > 0).then(|| d.sum_ns / d.n as f64 / 1e6);
        let p95_ms = |d: &DelayMeasure| (d.n > 0).then(|| d.p95_ns as f64 / 1e6);
        FlowSummary {
            id: self.id,
            group: self.group.clone(),
            transport: self.transport.clone(),
            cc: self.cc.clone(),
            start_s: self.start_s,
            end_s: self.end_s,
            throughput_mbps: per_s(sent),
            goodput_mbps: per_s(self.bytes_delivered),
            bytes_delivered: self.bytes_delivered,
            loss_pct: if self.data_pkts > 0 {
                self.data_drops as f64 / self.data_pkts as f64 * 100.0
            } else {
                0.0
            },
            efficiency_pct: if sent > 0 {
                (sent - self.bytes_retrans) as f64 / sent as f64 * 100.0
            } else {
                100.0
            },
            fct_s: self.fct_s,
            rtt_mean_ms: mean_ms(&self.rtt),
            rtt_p95_ms: p95_ms(&self.rtt),
            owd_mean_ms: mean_ms(&self.owd),
            owd_p95_ms: p95_ms(&self.owd),
            base_rtt_ms: self.base_rtt_ms,
            retransmits: self.retransmits,
            timeouts: self.timeouts,
            recoveries: self.recoveries,
            responses: self.responses.as_deref().map(Responses::from_times),
            plt: self.pages.as_deref().map(PageLoads::from_times),
            datagrams_delivered: self.datagrams_delivered,
            jitter_ms: self.jitter_ms,
            frame_delay_p50_ms: self.video.map(|v| v.p50_ns as f64 / 1e6),
            frame_delay_p95_ms: self.video.map(|v| v.p95_ns as f64 / 1e6),
            frame_delay_p99_ms: self.video.map(|v| v.p99_ns as f64 / 1e6),
            frame_loss_pct: self.video.map(|v| {
                if v.judged > 0 {
                    v.lost as f64 / v.judged as f64 * 100.0
                } else {
                    0.0
                }
            }),
            freezes: self.video.map(|v| v.freezes),
            frames_repaired: self.video.map(|v| v.repaired),
            rtx_packets: self.video.map(|v| v.rtx_packets),
        }
    }
}

impl QueueMeasure {
    pub fn summary(&self) -> BottleneckSummary {
        let window = self.window_s;
        let cap = self.capacity_bytes;
        let mean_bytes = if window > 0.0 { self.backlog_area / (window * 1e9) } else { 0.0 };
        let r = &self.drop_reasons;
        let drops = r.overflow + r.early + r.aqm_dequeue;
        let n = self.sojourn_n;
        BottleneckSummary {
            aqm: self.aqm.clone(),
            capacity_bytes: cap,
            mean_bytes,
            buffer_usage_pct: if cap > 0 { mean_bytes / cap as f64 * 100.0 } else { 0.0 },
            mean_sojourn_ms: if n > 0 { self.sojourn_sum_ns / n as f64 / 1e6 } else { 0.0 },
            p95_sojourn_ms: if n > 0 { self.sojourn_p95_ns as f64 / 1e6 } else { 0.0 },
            drops,
            drop_pct: if self.arrivals > 0 {
                drops as f64 / self.arrivals as f64 * 100.0
            } else {
                0.0
            },
            utilization_pct: match self.busy {
                Busy::Time { busy_s } => {
                    if window > 0.0 {
                        busy_s / window * 100.0
                    } else {
                        0.0
                    }
                }
                Busy::Offered { offered_bytes } if offered_bytes > 0 => {
                    self.tx_bytes as f64 / offered_bytes as f64 * 100.0
                }
                Busy::Offered { .. } => 0.0,
            },
            drop_reasons: r.clone(),
            random_losses: self.random_losses,
            rate_mbps: self.rate_mbps,
        }
    }
}

/// The summary of a run from its measurements.
pub fn build(m: &RunMeasure) -> Summary {
    let flows: Vec<FlowSummary> = m.flows.iter().map(FlowMeasure::summary).collect();
    let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_mbps).collect();
    let e = &m.engine;
    Summary {
        name: m.name.clone(),
        seed: m.seed,
        duration_s: m.duration_s,
        flows,
        bottleneck: m.bottleneck.summary(),
        links: m
            .links
            .iter()
            .map(|l| super::summary::LinkSummary { name: l.name.clone(), queue: l.queue.summary() })
            .collect(),
        fairness: Fairness { jain_goodput: jain(&goodputs) },
        engine: EngineSummary {
            wall_s: e.wall_s,
            events: e.events,
            bottleneck_packets: e.bottleneck_packets,
            packets_per_wall_s: if e.wall_s > 0.0 {
                e.bottleneck_packets as f64 / e.wall_s
            } else {
                0.0
            },
            setup_s: e.setup_s,
            transmissions: e.transmissions,
        },
        responsiveness: m.responsiveness.clone(),
        wifi: m.wifi.clone(),
    }
}

/// [`build`] for measurements given as JSON text (the Python emulation front); the summary as
/// pretty JSON text, like a run's.
pub fn build_json(measure_json: &str) -> Result<String, String> {
    let m: RunMeasure =
        serde_json::from_str(measure_json).map_err(|e| format!("malformed measurements: {e}"))?;
    serde_json::to_string_pretty(&build(&m)).map_err(|e| e.to_string())
}
