//! Responsiveness under working conditions (the "RPM test"), after IETF IPPM
//! draft-ietf-ippm-responsiveness-09 (Paasch, Meyer, Cheshire, Hawkins): its parameters, its
//! aggregation (single-sided trimmed means of the probes of the last MAD intervals, the
//! TCP-only formula), its stability rule and its classification of the result. The world drives the
//! test (world/rpm.rs); docs/latency-under-load.md says what is modelled and how.

use crate::units::Dur;
use serde::{Deserialize, Serialize};

/// The draft's name for the revision followed.
pub const DRAFT: &str = "draft-ietf-ippm-responsiveness-09";
/// Moving average distance: intervals averaged, and intervals whose probes are aggregated.
pub const MAD: usize = 4;
/// Trimmed mean percentile: the upper 5 % of samples are dropped.
pub const TMP: f64 = 0.95;
/// Standard deviation tolerance: stable when the standard deviation of the last MAD moving
/// averages is within 5 % of the latest one.
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
    /// The draft's interval duration (ID, 5 s by default there): a load-generating connection
    /// is added per interval, up to `max_connections` (the draft's MNP, 16).
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

/// The draft's TCP-only responsiveness from its three trimmed means (seconds): foreign
/// responsiveness = 60 / ((TM(tcp_f) + TM(http_f)) / 2), loaded = 60 / TM(http_l), RPM =
/// their mean.
pub fn rpm(tcp_f: f64, http_f: f64, http_l: f64) -> f64 {
    (foreign_rpm(tcp_f, http_f) + 60.0 / http_l) / 2.0
}

pub fn foreign_rpm(tcp_f: f64, http_f: f64) -> f64 {
    60.0 / ((tcp_f + http_f) / 2.0)
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

/// Moving averages over MAD intervals of per-interval values (full windows only).
pub fn moving_averages(values: &[f64]) -> Vec<f64> {
    values.windows(MAD).map(|w| w.iter().sum::<f64>() / MAD as f64).collect()
}

/// The stability rule over a series of moving values (moving-average goodput, or the
/// responsiveness of the last MAD intervals, at each interval): the standard deviation of
/// the last MAD of them is less than SDT of the latest. False with fewer than MAD.
pub fn stable(moving: &[f64]) -> bool {
    if moving.len() < MAD {
        return false;
    }
    let last = &moving[moving.len() - MAD..];
    let mean = last.iter().sum::<f64>() / MAD as f64;
    let var = last.iter().map(|m| (m - mean) * (m - mean)).sum::<f64>() / MAD as f64;
    let current = last[MAD - 1];
    current > 0.0 && var.sqrt() < SDT * current
}

/// Foreign probes' trimmed means (ms) and count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForeignSummary {
    pub tcp_ms: Option<f64>,
    pub http_ms: Option<f64>,
    /// (tcp + http) / 2.
    pub ms: Option<f64>,
    /// Foreign responsiveness: 60000 / ms.
    pub rpm: Option<f64>,
    pub probes: u32,
}

/// Self probes' trimmed mean (ms) and count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadedSummary {
    pub http_ms: Option<f64>,
    /// Loaded responsiveness: 60000 / http_ms.
    pub rpm: Option<f64>,
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
        // The mean of the foreign and the loaded RPM, not 60 over the mean time.
        assert!((rpm(0.01, 0.03, 0.1) - (3000.0 + 600.0) / 2.0).abs() < 1e-9);
        assert_eq!(class(299.0), "Poor");
        assert_eq!(class(300.0), "Fair");
        assert_eq!(class(1000.0), "Good");
        assert_eq!(class(6001.0), "Excellent");
    }

    #[test]
    fn stability_needs_flat_moving_averages() {
        let g = |v: &[f64]| stable(&moving_averages(v));
        assert!(!g(&[1.0; 6]), "needs MAD full moving averages");
        assert!(g(&[1.0; 7]));
        assert!(!g(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]));
        assert!(g(&[0.0, 5.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0]));
    }
}
