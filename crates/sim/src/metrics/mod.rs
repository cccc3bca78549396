//! Metrics: the summary JSON (DESIGN.md contract) and the sampled time series.

mod series;
mod summary;

pub use series::Series;
pub use summary::{jain, t95, BottleneckSummary, DropReasons, EngineSummary, Fairness, FlowSummary, Responses, Summary};
