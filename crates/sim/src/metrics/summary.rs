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
    /// Web flows: the response times of requests started in the measurement window.
    pub responses: Option<Responses>,
    /// Datagram transports (UDP, DCCP): datagrams delivered to the receiving application.
    pub datagrams_delivered: Option<u64>,
    /// udp: RFC 3550 interarrival jitter at the receiver at the end of the run, ms (absent for
    /// other transports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<f64>,
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

/// Two-sided 95 % quantiles of Student's t for 1..=30 degrees of freedom.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
    2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (normal beyond 30).
pub fn t95(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        d if d <= 30 => T95[d - 1],
        d if d <= 60 => 2.000 + (2.042 - 2.000) * (60 - d) as f64 / 30.0,
        _ => 1.960,
    }
}

impl Responses {
    pub fn from_times(times: &[f64]) -> Responses {
        let n = times.len();
        let mean = (n > 0).then(|| times.iter().sum::<f64>() / n as f64);
        let ci = match (mean, n) {
            (Some(m), n) if n >= 2 => {
                let var = times.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
                Some(t95(n - 1) * (var / n as f64).sqrt())
            }
            _ => None,
        };
        Responses { n, mean_s: mean, ci95_s: ci, times_s: times.to_vec() }
    }
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
    fn confidence_interval_uses_student_t() {
        let r = super::Responses::from_times(&[1.0, 2.0, 3.0]);
        assert_eq!(r.mean_s, Some(2.0));
        // s = 1, n = 3: 4.303 · 1/√3.
        assert!((r.ci95_s.unwrap() - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        assert!(super::Responses::from_times(&[1.0]).ci95_s.is_none());
    }

    #[test]
    fn jain_bounds() {
        assert_eq!(jain(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!((jain(&[1.0, 2.0]) - 0.9).abs() < 1e-12);
    }
}
