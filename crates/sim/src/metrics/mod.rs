//! Metrics: the summary JSON (DESIGN.md contract) and the sampled time series.

mod series;
mod summary;

pub use series::Series;
pub use summary::{jain, BottleneckSummary, DropReasons, EngineSummary, Fairness, FlowSummary, Summary};
