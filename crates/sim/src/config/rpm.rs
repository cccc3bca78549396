//! The `[responsiveness]` table: the RPM test's settings, and the flows it adds to the
//! scenario (load-generating connections per direction, then one foreign-probe flow). The
//! flows are ordinary flow tables, validated like the user's: the world knows them as the
//! last flows of the scenario (world/rpm.rs).

use super::{Table, TopologyKind};
use crate::app::rpm::{RpmCfg, RpmDirection};
use crate::params::{err, Res};
use crate::units::Dur;
use serde_json::{json, Value};

const KEYS: &[&str] =
    &["direction", "interval", "max_connections", "probe_interval", "request", "response", "cc"];

/// Reads the table; returns the settings and the flow tables to append to `flows`.
pub(crate) fn read(v: &Value, kind: TopologyKind) -> Res<(RpmCfg, Vec<Value>)> {
    let mut t = Table::new("responsiveness", v)?;
    if kind != TopologyKind::Dumbbell {
        return err("responsiveness", "the RPM test runs on the dumbbell topology only");
    }
    let direction = match t.opt_choice("direction", "direction", RpmDirection::KNOWN)? {
        Some("upload") => RpmDirection::Upload,
        Some("both") => RpmDirection::Both,
        _ => RpmDirection::Download,
    };
    let positive = |t: &mut Table, key: &'static str, default: Dur| -> Res<Dur> {
        let d = t.opt_duration(key)?.unwrap_or(default);
        if d.0 == 0 {
            return err(&t.key_path(key), format!("must be greater than 0 (got \"{d}\")"));
        }
        Ok(d)
    };
    let interval = positive(&mut t, "interval", Dur::from_secs(5))?;
    let probe_interval = positive(&mut t, "probe_interval", Dur::from_millis(100))?;
    // The draft's limit is 100 probes a second of each kind.
    if probe_interval < Dur::from_millis(10) {
        return err(&t.key_path("probe_interval"), "must be at least 10ms (100 probes a second)");
    }
    let max_connections = t.opt_int("max_connections", 1, 64)?.unwrap_or(16) as u32;
    let size = |t: &mut Table, key: &'static str| -> Res<u64> {
        let b = t.opt_size(key)?.unwrap_or(300);
        if b == 0 {
            return err(&t.key_path(key), "must be greater than 0");
        }
        Ok(b)
    };
    let request = size(&mut t, "request")?;
    let response = size(&mut t, "response")?;
    let cc = t.opt_str("cc")?.unwrap_or("cubic").to_string();
    t.finish(KEYS)?;
    let cfg = RpmCfg { direction, interval, max_connections, probe_interval, request, response };
    let mut flows = Vec::new();
    for (on, dir, group) in
        [(direction.down(), "forward", "rpm-load-down"), (direction.up(), "reverse", "rpm-load-up")]
    {
        if on {
            // Started by the ramp, not by their start time (world/rpm.rs).
            flows.push(json!({ "cc": cc, "direction": dir, "group": group,
                               "count": max_connections }));
        }
    }
    flows.push(json!({ "cc": cc, "app": "web", "group": "rpm-foreign",
                       "size": format!("{response}B"), "request": format!("{request}B"),
                       "think": format!("{}ns", probe_interval.0) }));
    Ok((cfg, flows))
}
