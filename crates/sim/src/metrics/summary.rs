//! The summary JSON's shape. Field names and units are a contract (DESIGN.md); fields beyond
//! it are documented in docs/scenario.md. Built only by `metrics::measure::build`.

use serde::{Deserialize, Serialize};

use super::stats::mean_ci95;

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub name: String,
    pub seed: u64,
    pub duration_s: f64,
    pub flows: Vec<FlowSummary>,
    pub bottleneck: BottleneckSummary,
    /// Every reported link (graph topologies, `[metrics] links`); absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkSummary>,
    pub fairness: Fairness,
    pub engine: EngineSummary,
    /// The RPM test's result (`[responsiveness]`, docs/scenario.md), absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub responsiveness: Option<crate::app::rpm::RpmSummary>,
    /// The Wi-Fi BSS's block (docs/wifi.md), absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wifi: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlowSummary {
    pub id: u32,
    pub group: String,
    pub transport: String,
    pub cc: String,
    pub start_s: f64,
    pub end_s: Option<f64>,
    /// Payload bytes sent, retransmissions included, per second of active time.
    pub throughput_mbps: f64,
    /// Unique payload bytes delivered to the receiving application per second of active time.
    pub goodput_mbps: f64,
    pub bytes_delivered: u64,
    /// This flow's data packets dropped anywhere / data packets sent.
    pub loss_pct: f64,
    pub efficiency_pct: f64,
    pub fct_s: Option<f64>,
    /// None when the flow took no RTT sample in the measurement window.
    pub rtt_mean_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
    // Extensions.
    /// One-way delay of datagrams (UDP flows), None otherwise.
    pub owd_mean_ms: Option<f64>,
    pub owd_p95_ms: Option<f64>,
    pub base_rtt_ms: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// None where the engine cannot count them (the emulation: Linux has no counter).
    pub recoveries: Option<u64>,
    /// Web flows: the response times of requests started in the measurement window.
    pub responses: Option<Responses>,
    /// Page flows: page load times (a contract extension, docs/scenario.md); absent otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub plt: Option<PageLoads>,
    /// Datagram transports (UDP, DCCP): datagrams delivered to the receiving application.
    pub datagrams_delivered: Option<u64>,
    /// udp: RFC 3550 interarrival jitter at the receiver at the end of the run, ms (absent for
    /// other transports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<f64>,
    /// Video flows: percentiles of the frames' capture-to-receive delay, ms (frames captured
    /// in the window); the share of frames never completed (captured in the window, at least
    /// 2 s before its end); freezes (W3C webrtc-stats rule; udp/video.rs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_delay_p50_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_delay_p95_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_delay_p99_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_loss_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freezes: Option<u64>,
    /// Video flows: judged frames that arrived whole only thanks to a retransmission
    /// (NACK/RTX), and the
    /// retransmissions sent in the window (0 with `video.nack = false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames_repaired: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtx_packets: Option<u64>,
}

/// Response times of a web flow, with the mean's 95 % confidence interval (Student t).
#[derive(Debug, Clone, Serialize)]
pub struct Responses {
    pub n: usize,
    pub mean_s: Option<f64>,
    /// Half-width of the 95 % confidence interval of the mean (None with fewer than 2).
    pub ci95_s: Option<f64>,
    pub times_s: Vec<f64>,
}

impl Responses {
    pub fn from_times(times: &[f64]) -> Responses {
        let (mean, ci) = mean_ci95(times);
        Responses { n: times.len(), mean_s: mean, ci95_s: ci, times_s: times.to_vec() }
    }
}

/// Load times of a page flow's pages started in the measurement window (None: no page).
#[derive(Debug, Clone, Serialize)]
pub struct PageLoads {
    pub pages: usize,
    pub plt_mean_s: Option<f64>,
    pub plt_p50_s: Option<f64>,
    pub plt_p95_s: Option<f64>,
}

impl PageLoads {
    /// Percentiles by nearest rank (the smallest time with at least p % at or below it).
    pub fn from_times(times: &[f64]) -> PageLoads {
        let mut s = times.to_vec();
        s.sort_by(f64::total_cmp);
        let rank = |p: f64| s.get(((p * s.len() as f64).ceil() as usize).max(1) - 1).copied();
        let mean = (!s.is_empty()).then(|| s.iter().sum::<f64>() / s.len() as f64);
        PageLoads { pages: s.len(), plt_mean_s: mean, plt_p50_s: rank(0.5), plt_p95_s: rank(0.95) }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct BottleneckSummary {
    pub aqm: String,
    pub capacity_bytes: u64,
    pub mean_bytes: f64,
    pub buffer_usage_pct: f64,
    pub mean_sojourn_ms: f64,
    pub p95_sojourn_ms: f64,
    /// Packets the queue discipline dropped (overflow and AQM), not random link loss.
    pub drops: u64,
    pub drop_pct: f64,
    pub utilization_pct: f64,
    // Extensions.
    pub drop_reasons: DropReasons,
    pub random_losses: u64,
    pub rate_mbps: f64,
}

/// A reported link: its name and the bottleneck block's fields.
#[derive(Debug, Clone, Serialize)]
pub struct LinkSummary {
    pub name: String,
    #[serde(flatten)]
    pub queue: BottleneckSummary,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DropReasons {
    pub overflow: u64,
    pub early: u64,
    pub aqm_dequeue: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fairness {
    pub jain_goodput: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct EngineSummary {
    pub wall_s: f64,
    pub events: u64,
    pub bottleneck_packets: u64,
    pub packets_per_wall_s: f64,
    /// Wall time of the set-up before the first event.
    pub setup_s: f64,
    /// Packet transmissions over all links (hops); null for the emulation.
    pub transmissions: Option<u64>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn confidence_interval_uses_student_t() {
        let r = super::Responses::from_times(&[1.0, 2.0, 3.0]);
        assert_eq!(r.mean_s, Some(2.0));
        // s = 1, n = 3: 4.303 · 1/√3.
        assert!((r.ci95_s.unwrap() - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        assert!(super::Responses::from_times(&[1.0]).ci95_s.is_none());
    }

    #[test]
    fn page_load_percentiles_are_nearest_rank() {
        let p = super::PageLoads::from_times(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(
            (p.pages, p.plt_mean_s, p.plt_p50_s, p.plt_p95_s),
            (4, Some(2.5), Some(2.0), Some(4.0))
        );
        let none = super::PageLoads::from_times(&[]);
        assert_eq!((none.pages, none.plt_mean_s, none.plt_p50_s), (0, None, None));
    }
}
