//! Thin PyO3 bindings: `bloatlab._core`.

// No unsafe code of our own; what PyO3's macros expand to is theirs to fence.
#![deny(unsafe_code)]

use bloatlab_sim::{Column, RunError, RunOptions};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "Invalid scenario: args are (path, message)."
);
create_exception!(_core, SimulationError, PyRuntimeError, "A run failed an internal check.");

/// Run a scenario given as JSON text. Returns (summary_json, {table: {column: list}}).
/// With `capture_dir`, the links named in the scenario's `capture` are written there as pcap.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, series=true, capture_dir=None, threads=None))]
fn run_json<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
    series: bool,
    capture_dir: Option<std::path::PathBuf>,
    threads: Option<u32>,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    let opts = RunOptions { seed, series, capture_dir, progress: None, threads };
    let json = scenario_json.to_owned();
    let result = py.detach(move || bloatlab_sim::run_json(&json, &opts));
    match result {
        Ok(out) => {
            let tables = PyDict::new(py);
            for table in out.tables {
                let cols = PyDict::new(py);
                for (name, col) in table.columns {
                    match col {
                        Column::F64(v) => cols.set_item(name, v)?,
                        Column::I64(v) => cols.set_item(name, v)?,
                        Column::Str(v) => cols.set_item(name, v)?,
                    }
                }
                tables.set_item(table.name, cols)?;
            }
            Ok((out.summary_json, tables))
        }
        Err(RunError::Invalid(e)) => Err(ScenarioError::new_err((e.path, e.message))),
        Err(RunError::Internal(m)) => Err(SimulationError::new_err(m)),
    }
}

/// Checks a scenario given as JSON text without running it (every key, as run_json reads
/// them). Raises ScenarioError like run_json; returns None when the scenario is valid.
#[pyfunction]
fn validate_json(py: Python<'_>, scenario_json: &str) -> PyResult<()> {
    let json = scenario_json.to_owned();
    py.detach(move || bloatlab_sim::validate_json(&json))
        .map_err(|e| ScenarioError::new_err((e.path, e.message)))
}

/// Builds the summary JSON (the simulator's shape) from measurements given as JSON text
/// (bloatlab_sim::metrics::RunMeasure): the emulation front's one way to make a summary.
#[pyfunction]
fn summary_json(measure_json: &str) -> PyResult<String> {
    bloatlab_sim::metrics::measure::build_json(measure_json).map_err(PyValueError::new_err)
}

/// Validates a scenario for emulation (JSON text); returns the emulation plan as JSON text
/// (expanded flows with start times, timing, queue). Raises ScenarioError like run_json.
#[pyfunction]
fn emu_plan(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let json = scenario_json.to_owned();
    py.detach(move || bloatlab_emu::plan_json(&json))
        .map_err(|e| ScenarioError::new_err((e.path, e.message)))
}

/// Runs the emulation bottleneck (config as JSON text, see bloatlab.emulate.bottleneck) until
/// the scenario's duration has passed or the stop file appears; returns its measurements as
/// JSON text. Releases the GIL. Linux only.
#[cfg(target_os = "linux")]
#[pyfunction]
fn emu_run(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let json = config_json.to_owned();
    match py.detach(move || bloatlab_emu::run_json(&json)) {
        Ok(s) => Ok(s),
        Err(bloatlab_emu::EmuError::Invalid(e)) => Err(ScenarioError::new_err((e.path, e.message))),
        Err(bloatlab_emu::EmuError::Io(m)) => Err(pyo3::exceptions::PyOSError::new_err(m)),
    }
}

/// Runs one packetdrill script (its text) against the simulated TCP endpoint; returns the
/// outcome as JSON text: {"status": "passed" | "failed" | "unsupported" | "malformed",
/// "line", "column", "message", "class" (unsupported only), "ignored" (sysctls not modeled)}.
/// Releases the GIL.
#[pyfunction]
#[pyo3(signature = (script, tolerance_usecs=4000))]
fn packetdrill_run(py: Python<'_>, script: &str, tolerance_usecs: u64) -> String {
    let src = script.to_owned();
    let opts = bloatlab_sim::packetdrill::Options { tolerance_usecs };
    py.detach(move || bloatlab_sim::packetdrill::run_script_json(&src, &opts))
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(summary_json, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(emu_plan, m)?)?;
    m.add_function(wrap_pyfunction!(packetdrill_run, m)?)?;
    #[cfg(target_os = "linux")]
    m.add_function(wrap_pyfunction!(emu_run, m)?)?;
    // The kernel congestion controls emulation may use: one list, the emulator's.
    m.add("KERNEL_CCS", bloatlab_emu::config::KERNEL_CCS.to_vec())?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    Ok(())
}
