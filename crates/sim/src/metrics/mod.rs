//! Metrics: the summary JSON (DESIGN.md contract; measurements in, one builder) and the sampled
//! time series.

pub mod measure;
mod series;
pub mod stats;
mod summary;

pub use measure::{Busy, DelayMeasure, EngineMeasure, FlowMeasure, LinkMeasure, QueueMeasure, RunMeasure};
pub use series::Series;
pub use stats::{jain, mean_ci95, t95};
pub use summary::{BottleneckSummary, DropReasons, EngineSummary, Fairness, FlowSummary, Responses, Summary};

use hdrhistogram::Histogram;

/// Bounds of delay histograms: 1 µs to 1 h in ns, 3 significant digits.
const DELAY_MIN_NS: u64 = 1_000;
const DELAY_MAX_NS: u64 = 3_600_000_000_000;

/// A histogram for delays (RTTs, one-way delays) in nanoseconds.
pub fn delay_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(DELAY_MIN_NS, DELAY_MAX_NS, 3).expect("valid histogram bounds")
}

/// Records one delay sample (ns) into a running sum, a count and a histogram.
#[inline]
pub fn record_delay(sum_ns: &mut f64, n: &mut u64, hist: &mut Histogram<u64>, ns: u64) {
    *sum_ns += ns as f64;
    *n += 1;
    let _ = hist.record(ns.clamp(DELAY_MIN_NS, DELAY_MAX_NS));
}
