//! Shared helpers for the integration tests: run a TOML scenario, read its summary.

#![allow(dead_code)]

use bloatlab_sim::{run_toml, validate_json, RunError, RunOptions};
use serde_json::Value;

pub fn run(toml: &str) -> Value {
    run_seeded(toml, None)
}

pub fn run_seeded(toml: &str, seed: Option<u64>) -> Value {
    let out = run_toml(toml, &RunOptions { seed, series: false, ..Default::default() })
        .unwrap_or_else(|e| panic!("run failed: {e}"));
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

/// The shared Mahimahi traces (GPL data, not in this repository): `$BLOATLAB_TRACES`, else
/// `shared/traces/mahimahi` beside the repository, else this workplace's `/work/shared/...`
/// (a clone elsewhere on the machine still finds them). Panics, naming the places tried,
/// when none exists: the trace tests must not pass silently without their data.
#[allow(dead_code)] // not every test file reads traces
pub fn mahimahi_dir() -> std::path::PathBuf {
    let mut tried = Vec::new();
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("BLOATLAB_TRACES") {
        candidates.push(std::path::PathBuf::from(dir));
    }
    candidates.push(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/traces/mahimahi"),
    );
    candidates.push(std::path::PathBuf::from("/work/shared/traces/mahimahi"));
    for dir in candidates {
        if dir.join("TMobile-LTE-short.down").exists() {
            return dir;
        }
        tried.push(dir.display().to_string());
    }
    panic!(
        "the shared Mahimahi traces were not found (tried: {}); set BLOATLAB_TRACES",
        tried.join(", ")
    );
}

/// Asserts that `toml` is refused as bad input at key `path` with a message containing
/// `fragment`, and that `bloatlab validate` (validate_json) says the same without running.
#[track_caller]
pub fn refused(toml: &str, path: &str, fragment: &str) {
    match run_toml(toml, &RunOptions::default()) {
        Err(RunError::Invalid(e)) => {
            assert_eq!(e.path, path, "{e}");
            assert!(e.message.contains(fragment), "{path}: {}", e.message);
            let v: serde_json::Value = toml::from_str(toml).unwrap();
            assert_eq!(validate_json(&v.to_string()).unwrap_err(), e);
        }
        Err(e) => panic!("expected bad input at {path}, got {e}"),
        Ok(_) => panic!("expected bad input at {path}, the run succeeded"),
    }
}
