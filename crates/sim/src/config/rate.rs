//! Link rate settings: `rate = "10Mbps"`, `rate = { model = "trace", file = "x.down" }`
//! (Mahimahi format) or `rate = { model = "cellular", min = "3.1Mbps", max = "9.3Mbps",
//! interval = "10ms", dwell = "2s", p_good = 0.5 }`.

use super::RateSpec;
use crate::net::rate_model::TraceRate;
use crate::params::{self as reader, err, Res, Table};
use crate::units::Dur;
use serde_json::Value;
use std::sync::Arc;

const MODELS: &[&str] = &["constant", "trace", "cellular"];

pub(super) fn rate_spec(path: &str, v: &Value) -> Res<RateSpec> {
    if let Value::String(_) = v {
        return Ok(RateSpec::Constant(reader::rate(path, v)?));
    }
    let mut t = Table::new(path, v).map_err(|mut e| {
        e.message = "expected a rate such as \"10Mbps\" or a table { model = \"trace\" | \"cellular\", ... }".into();
        e
    })?;
    let model = match t.opt_choice("model", "rate model", MODELS)? {
        Some(m) => m,
        None => {
            return err(
                &t.key_path("model"),
                format!("missing required key (known: {})", MODELS.join(", ")),
            )
        }
    };
    let spec = match model {
        "constant" => {
            let r = reader::rate(&t.key_path("rate"), t.require("rate")?)?;
            t.finish(&["model", "rate"])?;
            RateSpec::Constant(r)
        }
        "trace" => {
            let fp = t.key_path("file");
            let file = reader::as_str(&fp, t.require("file")?)?;
            let text = std::fs::read_to_string(file).map_err(|e| super::ScenarioError {
                path: fp.clone(),
                message: format!("cannot read trace file \"{file}\": {e}"),
            })?;
            let times = TraceRate::parse(&text).map_err(|m| super::ScenarioError {
                path: fp.clone(),
                message: format!("malformed Mahimahi trace \"{file}\": {m}"),
            })?;
            t.finish(&["model", "file"])?;
            RateSpec::Trace { file: file.to_string(), times_ms: Arc::new(times) }
        }
        _ => {
            let min = reader::rate(&t.key_path("min"), t.require("min")?)?;
            let max = reader::rate(&t.key_path("max"), t.require("max")?)?;
            if min > max {
                return err(
                    &t.key_path("min"),
                    format!("must not be above max ({} > {} bit/s)", min.0, max.0),
                );
            }
            let interval = t.opt_duration("interval")?.unwrap_or(Dur::from_millis(10));
            if interval.0 == 0 {
                return err(&t.key_path("interval"), "must be greater than 0");
            }
            let dwell = t.opt_duration("dwell")?.unwrap_or(Dur::from_secs(5));
            if dwell.0 == 0 {
                return err(&t.key_path("dwell"), "must be greater than 0");
            }
            let p_good = t.opt_f64("p_good", 0.0, 1.0, true)?.unwrap_or(0.5);
            t.finish(&["model", "min", "max", "interval", "dwell", "p_good"])?;
            RateSpec::Cellular { min, max, interval, dwell, p_good }
        }
    };
    Ok(spec)
}
