//! The summary JSON. Field names and units are a contract (DESIGN.md); fields beyond it are
//! documented in docs/scenario.md.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub name: String,
    pub seed: u64,
    pub duration_s: f64,
    pub flows: Vec<FlowSummary>,
    pub bottleneck: BottleneckSummary,
    pub fairness: Fairness,
    pub engine: EngineSummary,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlowSummary {
    pub id: u32,
    pub group: String,
    pub transport: &'static str,
    pub cc: &'static str,
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
    pub recoveries: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct BottleneckSummary {
    pub aqm: &'static str,
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

#[derive(Debug, Clone, Serialize)]
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
}

/// Jain's fairness index (Σx)² / (n·Σx²); 1 for an empty or all-zero set.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[cfg(test)]
mod tests {
    use super::jain;

    #[test]
    fn jain_bounds() {
        assert_eq!(jain(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!((jain(&[1.0, 2.0]) - 0.9).abs() < 1e-12);
    }
}
