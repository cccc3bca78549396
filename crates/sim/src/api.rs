//! The public entry points: run a scenario given as JSON or TOML text.

pub use crate::metrics::{Column, Table};
pub use crate::params::ScenarioError;
use std::fmt;

/// Options that are not part of the scenario itself.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Overrides the scenario's `seed`.
    pub seed: Option<u64>,
    /// Collect sampled time series (costs memory proportional to simulated time).
    pub series: bool,
    /// Where to write the pcap files of the links named in the scenario's `capture`
    /// (`{dir}/{link}.pcap`); without it, `capture` is ignored.
    pub capture_dir: Option<std::path::PathBuf>,
    /// Print a progress line to stderr this often (wall clock) during the run: simulated
    /// time reached, events, events per second. For long runs; nothing else changes.
    pub progress: Option<std::time::Duration>,
    /// Overrides the scenario's `threads` (world/partition.rs): 1 to 1024.
    pub threads: Option<u32>,
}

#[derive(Debug)]
pub enum RunError {
    /// Bad input: exit code 2.
    Invalid(ScenarioError),
    /// A broken invariant (e.g. conservation): exit code 1.
    Internal(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Invalid(e) => write!(f, "{e}"),
            RunError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl From<ScenarioError> for RunError {
    fn from(e: ScenarioError) -> Self {
        RunError::Invalid(e)
    }
}

/// The result of one run.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// The summary JSON (DESIGN.md contract), pretty-printed.
    pub summary_json: String,
    /// Time series: `flows` (per-flow samples) and `queues` (per-link samples).
    pub tables: Vec<Table>,
}

/// Runs a scenario given as JSON text (the Python front passes its dict this way).
pub fn run_json(json: &str, opts: &RunOptions) -> Result<RunOutput, RunError> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| ScenarioError {
        path: String::new(),
        message: format!("malformed scenario JSON: {e}"),
    })?;
    run_value(&value, opts)
}

/// Checks a scenario given as JSON text without running it: every key is read and checked
/// exactly as [`run_json`] does before it builds the world, so the errors (key path and
/// message) are the same. Cheap: no world is built.
pub fn validate_json(json: &str) -> Result<(), ScenarioError> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| ScenarioError {
        path: String::new(),
        message: format!("malformed scenario JSON: {e}"),
    })?;
    crate::config::Scenario::from_value(&value).map(|_| ())
}

/// Runs a scenario given as TOML text.
pub fn run_toml(text: &str, opts: &RunOptions) -> Result<RunOutput, RunError> {
    let value: serde_json::Value = toml::from_str(text).map_err(|e| ScenarioError {
        path: String::new(),
        message: format!("malformed TOML: {e}"),
    })?;
    run_value(&value, opts)
}

fn run_value(value: &serde_json::Value, opts: &RunOptions) -> Result<RunOutput, RunError> {
    let scenario = crate::config::Scenario::from_value(value)?;
    let seed = opts.seed.unwrap_or(scenario.seed);
    if let Some(n) = opts.threads.filter(|n| !(1..=crate::config::MAX_THREADS as u32).contains(n)) {
        return Err(RunError::Invalid(ScenarioError {
            path: "threads".into(),
            message: format!(
                "must be an integer from 1 to {} or \"auto\" (got {n})",
                crate::config::MAX_THREADS
            ),
        }));
    }
    let plan = crate::world::plan(&scenario, opts.threads);
    if let Some(note) = &plan.note {
        eprintln!("note: {note}");
    }
    let outcome = if plan.parts > 1 {
        let dir = opts.capture_dir.as_deref();
        crate::world::run_parallel(&scenario, seed, dir, opts.series, &plan, opts.progress)
            .map_err(RunError::Internal)?
    } else {
        let setup = std::time::Instant::now();
        let world =
            crate::world::World::new(&scenario, seed, opts.capture_dir.as_deref(), opts.series)
                .map_err(RunError::Internal)?;
        let setup_s = setup.elapsed().as_secs_f64();
        let mut outcome = world.run(opts.progress).map_err(RunError::Internal)?;
        outcome.measure.engine.setup_s = setup_s;
        outcome
    };
    let summary = crate::metrics::measure::build(&outcome.measure);
    let summary_json =
        serde_json::to_string_pretty(&summary).map_err(|e| RunError::Internal(e.to_string()))?;
    Ok(RunOutput {
        summary_json,
        tables: outcome.series.map(crate::metrics::Series::into_tables).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"{"duration": "1s", "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
                         "flows": [{"cc": "reno"}]}"#;

    #[test]
    fn validate_accepts_what_runs() {
        validate_json(OK).unwrap();
        run_json(OK, &RunOptions::default()).unwrap();
    }

    #[test]
    fn validate_reports_what_run_reports() {
        for bad in [
            OK.replace("\"reno\"", "\"renoo\""),
            OK.replace("\"1s\"", "\"1 parsec\""),
            OK.replace("\"duration\": \"1s\",", "\"duration\": \"1s\", \"warmup\": \"2s\","),
            OK.replace("\"duration\"", "\"capture\": {\"links\": [\"nowhere\"]}, \"duration\""),
            "{not json".to_string(),
        ] {
            let v = validate_json(&bad).unwrap_err();
            match run_json(&bad, &RunOptions::default()) {
                Err(RunError::Invalid(r)) => assert_eq!(v, r, "{bad}"),
                other => panic!("{bad}: run gave {:?}", other.map(|_| ())),
            }
        }
    }
}
