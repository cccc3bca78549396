//! Responsiveness under working conditions (the "RPM test"), after IETF IPPM
//! draft-ietf-ippm-responsiveness-08 (Paasch, Meyer, Cheshire, Hawkins, 20 October 2025):
//! its parameters, its aggregation (single-sided trimmed means of the probes of the last MAD
//! intervals), its stability rule and the classification of the result. The world drives the
//! test (world/rpm.rs); docs/latency-under-load.md says what is modelled and how.

use crate::units::Dur;
use serde::{Deserialize, Serialize};

/// The draft's name for the revision followed.
pub const DRAFT: &str = "draft-ietf-ippm-responsiveness-08";
/// Moving average distance: intervals averaged, and intervals whose probes are aggregated.
pub const MAD: usize = 4;
/// Trimmed mean percentile: the upper 5 % of samples are dropped.
pub const TMP: f64 = 0.95;
/// Standard deviation tolerance: stable when the moving averages' standard deviation is
/// within 5 % of their mean.
pub const SDT: f64 = 0.05;

/// Which way the load-generating connections carry their data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RpmDirection {
    Download,
    Upload,
    /// Download and upload load at once.
    Both,
}

impl RpmDirection {
    pub const KNOWN: &'static [&'static str] = &["download", "upload", "both"];

    pub fn down(self) -> bool {
        self != RpmDirection::Upload
    }

    pub fn up(self) -> bool {
        self != RpmDirection::Download
    }

    pub fn name(self) -> &'static str {
        match self {
            RpmDirection::Download => "download",
            RpmDirection::Upload => "upload",
            RpmDirection::Both => "both",
        }
    }
}

/// The `[responsiveness]` table of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct RpmCfg {
    pub direction: RpmDirection,
    /// The draft's interval duration (ID): a load-generating connection is added per interval
    /// until goodput is stable.
    pub interval: Dur,
    /// Load-generating connections per direction, at most.
    pub max_connections: u32,
    /// Time between self probes (and between one foreign probe's end and the next's start).
    pub probe_interval: Dur,
    /// Bytes of a probe's request and of its response (HTTP headers and a tiny body).
    pub request: u64,
    pub response: u64,
}

/// Mean of the lowest `TMP` share of `xs` (single-sided trimmed mean): the
/// `floor(n * (1 - TMP))` largest samples are dropped. None when `xs` is empty.
pub fn trimmed_mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let drop = ((v.len() as f64) * (1.0 - TMP) + 1e-9).floor() as usize;
    let keep = &v[..v.len() - drop];
    Some(keep.iter().sum::<f64>() / keep.len() as f64)
}

/// The draft's non-TLS responsiveness from its three trimmed means (seconds): foreign =
/// (TCP handshake + HTTP request/response) / 2, loaded = HTTP on a load-generating
/// connection, RPM = 60 / ((foreign + loaded) / 2).
pub fn rpm(tcp_f: f64, http_f: f64, http_l: f64) -> f64 {
    let foreign = (tcp_f + http_f) / 2.0;
    60.0 / ((foreign + http_l) / 2.0)
}

/// Poor below 300 RPM, Fair to 1000, Good to 6000, Excellent above.
pub fn class(rpm: f64) -> &'static str {
    if rpm < 300.0 {
        "Poor"
    } else if rpm < 1000.0 {
        "Fair"
    } else if rpm <= 6000.0 {
        "Good"
    } else {
        "Excellent"
    }
}

/// The stability rule over per-interval values: the moving averages (over up to MAD
/// intervals) of the last MAD intervals have a standard deviation within SDT of their mean.
/// Needs 2 MAD - 1 values (MAD full moving averages).
pub fn stable(values: &[f64]) -> bool {
    if values.len() < 2 * MAD - 1 {
        return false;
    }
    let mas: Vec<f64> = (values.len() - MAD..values.len())
        .map(|k| values[k + 1 - MAD..=k].iter().sum::<f64>() / MAD as f64)
        .collect();
    let mean = mas.iter().sum::<f64>() / MAD as f64;
    let var = mas.iter().map(|m| (m - mean) * (m - mean)).sum::<f64>() / MAD as f64;
    mean > 0.0 && var.sqrt() <= SDT * mean
}

/// Foreign probes' trimmed means (ms) and count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForeignSummary {
    pub tcp_ms: Option<f64>,
    pub http_ms: Option<f64>,
    /// (tcp + http) / 2.
    pub ms: Option<f64>,
    pub probes: u32,
}

/// Self probes' trimmed mean (ms) and count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadedSummary {
    pub http_ms: Option<f64>,
    pub probes: u32,
}

/// The summary's `responsiveness` block.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RpmSummary {
    pub draft: String,
    pub direction: String,
    /// None when a kind of probe has no sample in the window.
    pub rpm: Option<f64>,
    pub class: Option<String>,
    pub foreign: ForeignSummary,
    pub loaded: LoadedSummary,
    /// The aggregation window: the last MAD intervals of the run.
    pub window_s: f64,
    /// Load-generating connections started, per direction.
    pub connections_down: u32,
    pub connections_up: u32,
    /// Goodput of the load-generating connections over the window (both directions).
    pub goodput_mbps: f64,
    pub goodput_stable: bool,
    pub responsiveness_stable: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_mean_drops_the_top_five_percent() {
        let mut xs: Vec<f64> = (1..=20).map(f64::from).collect();
        // 20 samples: the largest one goes.
        assert_eq!(trimmed_mean(&xs), Some(10.0));
        xs.truncate(10); // 10 samples: none dropped
        assert_eq!(trimmed_mean(&xs), Some(5.5));
        assert_eq!(trimmed_mean(&[]), None);
    }

    #[test]
    fn rpm_of_one_round_trip_everywhere_is_sixty_over_it() {
        // Handshake and request/response each one RTT: 60 / RTT.
        assert!((rpm(0.02, 0.02, 0.02) - 3000.0).abs() < 1e-9);
        assert_eq!(class(299.0), "Poor");
        assert_eq!(class(300.0), "Fair");
        assert_eq!(class(1000.0), "Good");
        assert_eq!(class(6001.0), "Excellent");
    }

    #[test]
    fn stability_needs_flat_moving_averages() {
        assert!(!stable(&[1.0, 1.0, 1.0]));
        assert!(stable(&[1.0; 7]));
        assert!(!stable(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]));
        assert!(stable(&[0.0, 5.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0]));
    }
}
