//! Shared helpers for the integration tests: run a TOML scenario, read its summary.

#![allow(dead_code)]

use bloatlab_sim::{run_toml, RunOptions};
use serde_json::Value;

pub fn run(toml: &str) -> Value {
    run_seeded(toml, None)
}

pub fn run_seeded(toml: &str, seed: Option<u64>) -> Value {
    let out = run_toml(toml, &RunOptions { seed, series: false, ..Default::default() }).unwrap_or_else(|e| panic!("run failed: {e}"));
    serde_json::from_str(&out.summary_json).expect("summary is JSON")
}

pub fn f(v: &Value, path: &str) -> f64 {
    let mut cur = v;
    for part in path.split('.') {
        cur = match part.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[part],
        };
    }
    cur.as_f64().unwrap_or_else(|| panic!("{path} is not a number: {cur}"))
}
