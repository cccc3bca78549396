//! A link's `schedule` (net/schedule.rs): `schedule = "path/to/file.sched"` (the file format
//! in docs/topology.md) or `schedule = { model = "leo", delay = ["12ms", "25ms"],
//! rate = ["50Mbps", "150Mbps"], ... }` (the LEO access generator).

use crate::net::schedule::{LeoCfg, Schedule};
use crate::params::{self as reader, err, Res, ScenarioError, Table};
use crate::units::{Dur, Rate};
use serde_json::Value;
use std::sync::Arc;

/// A link's schedule as the scenario gives it.
#[derive(Debug, Clone)]
pub enum ScheduleSpec {
    /// Read and checked when the scenario is read.
    File { file: String, sched: Arc<Schedule> },
    /// Generated at build time from the run's seed over the run's duration.
    Leo(LeoCfg),
}

impl ScheduleSpec {
    /// Whether the schedule sets the link's rate.
    pub fn sets_rate(&self) -> bool {
        match self {
            ScheduleSpec::File { sched, .. } => sched.sets_rate(),
            ScheduleSpec::Leo(_) => true,
        }
    }

    /// The smallest delay the schedule can give (the path's base delay in reports and routes).
    pub fn base_delay(&self) -> Dur {
        match self {
            ScheduleSpec::File { sched, .. } => sched.min_delay(),
            ScheduleSpec::Leo(l) => l.delay_min,
        }
    }

    /// The nominal rate (reports, rate-derived queue settings), if the schedule sets it.
    pub fn nominal_rate(&self) -> Option<Rate> {
        match self {
            ScheduleSpec::File { sched, .. } => sched.nominal_rate(),
            ScheduleSpec::Leo(l) => Some(Rate((l.rate_min.0 + l.rate_max.0) / 2)),
        }
    }

    /// The schedule of one run (`rng`: the link pair's stream; `horizon`: the run's length).
    pub fn build(&self, rng: crate::engine::SimRng, horizon: Dur) -> Arc<Schedule> {
        match self {
            ScheduleSpec::File { sched, .. } => sched.clone(),
            ScheduleSpec::Leo(l) => Arc::new(l.generate(rng, horizon)),
        }
    }
}

const LEO_KEYS: &[&str] =
    &["model", "interval", "offset", "delay", "rate", "loss", "switch_loss", "switch_time"];

pub(super) fn schedule(path: &str, v: &Value) -> Res<ScheduleSpec> {
    if let Value::String(file) = v {
        let text = std::fs::read_to_string(file).map_err(|e| ScenarioError {
            path: path.into(),
            message: format!("cannot read schedule file \"{file}\": {e}"),
        })?;
        let sched = Schedule::parse(&text).map_err(|m| ScenarioError {
            path: path.into(),
            message: format!("malformed schedule \"{file}\": {m}"),
        })?;
        return Ok(ScheduleSpec::File { file: file.clone(), sched: Arc::new(sched) });
    }
    let mut t = Table::new(path, v).map_err(|mut e| {
        e.message = "expected a schedule file name or a table { model = \"leo\", ... }".into();
        e
    })?;
    match t.opt_choice("model", "schedule model", &["leo"])? {
        Some(_) => {}
        None => return err(&t.key_path("model"), "missing required key (known: leo)"),
    }
    let interval = t.opt_duration("interval")?.unwrap_or(Dur::from_secs(15));
    if interval.0 == 0 {
        return err(&t.key_path("interval"), "must be greater than 0");
    }
    let offset = t.opt_duration("offset")?.unwrap_or(Dur::from_secs(12));
    let (delay_min, delay_max) = range(&mut t, "delay", reader::duration)?;
    if delay_min.0 == 0 {
        return err(&format!("{}[0]", t.key_path("delay")), "must be greater than 0");
    }
    let (rate_min, rate_max) = range(&mut t, "rate", reader::rate)?;
    if rate_min.0 == 0 {
        return err(&format!("{}[0]", t.key_path("rate")), "must be greater than 0");
    }
    let loss = t.opt_f64("loss", 0.0, 1.0, false)?.unwrap_or(0.0);
    let switch_loss = t.opt_f64("switch_loss", 0.0, 1.0, true)?.unwrap_or(0.0);
    let switch_time = t.opt_duration("switch_time")?.unwrap_or(Dur::ZERO);
    if switch_time >= interval {
        return err(
            &t.key_path("switch_time"),
            format!("must be shorter than the interval ({} ms)", interval.0 / 1_000_000),
        );
    }
    t.finish(LEO_KEYS)?;
    Ok(ScheduleSpec::Leo(LeoCfg {
        interval,
        offset,
        delay_min,
        delay_max,
        rate_min,
        rate_max,
        switch_loss,
        switch_time,
        loss,
    }))
}

/// A required `[low, high]` pair with low ≤ high.
fn range<T: PartialOrd + Copy>(
    t: &mut Table,
    key: &'static str,
    one: impl Fn(&str, &Value) -> Res<T>,
) -> Res<(T, T)> {
    let p = t.key_path(key);
    match t.require(key)? {
        Value::Array(a) if a.len() == 2 => {
            let lo = one(&format!("{p}[0]"), &a[0])?;
            let hi = one(&format!("{p}[1]"), &a[1])?;
            if lo > hi {
                return err(&p, "expected [low, high] with low ≤ high");
            }
            Ok((lo, hi))
        }
        _ => err(&p, "expected a pair [low, high]"),
    }
}
