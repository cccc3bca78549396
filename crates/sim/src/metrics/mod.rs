//! Metrics: the summary JSON (DESIGN.md contract; measurements in, one builder) and the sampled
//! time series.

mod hist;
pub mod measure;
mod series;
pub mod stats;
mod summary;

pub use measure::{
    Busy, DelayMeasure, EngineMeasure, FlowMeasure, LinkMeasure, QueueMeasure, RunMeasure,
    VideoMeasure,
};
pub use series::{Column, Series, Table};
pub use stats::{jain, mean_ci95, t95};
pub use summary::PageLoads;
pub use summary::{
    BottleneckSummary, DropReasons, EngineSummary, Fairness, FlowSummary, Responses, Summary,
};

pub use hist::DelayHist;

/// Bounds of delay histograms: 1 µs to 1 h in ns, 3 significant digits (link sojourn
/// histograms start at 1 ns).
const DELAY_MIN_NS: u64 = 1_000;
pub const DELAY_MAX_NS: u64 = 3_600_000_000_000;

/// A histogram for delays (RTTs, one-way delays) in nanoseconds.
pub fn delay_histogram() -> DelayHist {
    DelayHist::new(DELAY_MIN_NS, DELAY_MAX_NS)
}

/// Records one delay sample (ns) into a running sum, a count and a histogram.
#[inline]
pub fn record_delay(sum_ns: &mut f64, n: &mut u64, hist: &mut DelayHist, ns: u64) {
    *sum_ns += ns as f64;
    *n += 1;
    hist.record(ns.clamp(DELAY_MIN_NS, DELAY_MAX_NS));
}
