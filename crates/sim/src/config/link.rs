//! Reading a link table (`topology.bottleneck`, `topology.access`, a graph's links, the
//! cellular topology's core link) and the dumbbell's pair of links with their queues: shared
//! by the dumbbell, cellular and graph readers.

use super::{queue, rate, schedule, LinkCfg, QueueCfg, RateSpec};
use crate::params::{self as reader, err, Res, Table};
use crate::units::{Dur, Rate};
use serde_json::Value;

pub(super) const LINK_KEYS: &[&str] =
    &["rate", "reverse_rate", "delay", "loss", "drop_packets", "schedule"];

/// A link's `drop_packets` list (sorted, without duplicates).
pub(super) fn drop_list(t: &mut Table) -> Res<Vec<u64>> {
    let v = match t.get("drop_packets") {
        None => Vec::new(),
        Some(Value::Array(a)) => {
            let dp = t.key_path("drop_packets");
            let mut v = a
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    reader::as_int(&format!("{dp}[{i}]"), x, 0, i64::MAX).map(|n| n as u64)
                })
                .collect::<Res<Vec<u64>>>()?;
            v.sort_unstable();
            v.dedup();
            v
        }
        Some(_) => {
            return err(
                &t.key_path("drop_packets"),
                "expected an array of packet indices, e.g. [0, 17]",
            )
        }
    };
    Ok(v)
}

pub(super) fn link(path: &str, v: &Value, default: Option<&LinkCfg>) -> Res<LinkCfg> {
    let mut t = Table::new(path, v)?;
    if let Some(sv) = t.get("schedule") {
        return scheduled(t, sv);
    }
    let rate = match (t.get("rate"), default) {
        (Some(rv), _) => rate::rate_spec(&t.key_path("rate"), rv)?,
        (None, Some(d)) => d.rate.clone(),
        (None, None) => return err(&t.key_path("rate"), "missing required key"),
    };
    let reverse_rate = match t.get("reverse_rate") {
        Some(rv) => Some(rate::rate_spec(&t.key_path("reverse_rate"), rv)?),
        None => default.and_then(|d| d.reverse_rate.clone()),
    };
    let delay = match (t.opt_duration("delay")?, default) {
        (Some(d), _) => d,
        (None, Some(d)) => d.delay,
        (None, None) => return err(&t.key_path("delay"), "missing required key"),
    };
    let loss = t.opt_f64("loss", 0.0, 1.0, false)?.unwrap_or(0.0);
    let drop_packets = drop_list(&mut t)?;
    t.finish(LINK_KEYS)?;
    Ok(LinkCfg { rate, reverse_rate, delay, loss, drop_packets, schedule: None })
}

/// A link whose `schedule` sets its delay and loss, and its rate unless the schedule leaves
/// that to `rate` (a file with `-` in its rate column, e.g. beside a Mahimahi trace).
fn scheduled(mut t: Table, sv: &Value) -> Res<LinkCfg> {
    let sched = schedule::schedule(&t.key_path("schedule"), sv)?;
    for key in ["delay", "loss"] {
        if t.has(key) {
            return err(
                &t.key_path(key),
                format!("set by {} (remove one of them)", t.key_path("schedule")),
            );
        }
    }
    let rate = match (t.get("rate"), sched.nominal_rate()) {
        (Some(_), Some(_)) => {
            return err(
                &t.key_path("rate"),
                format!(
                    "set by {} (remove it, or give the schedule's rate column as `-`)",
                    t.key_path("schedule")
                ),
            )
        }
        (Some(rv), None) => rate::rate_spec(&t.key_path("rate"), rv)?,
        (None, Some(r)) => RateSpec::Constant(r),
        (None, None) => {
            return err(&t.key_path("rate"), "missing required key (the schedule has no rates)")
        }
    };
    let reverse_rate = match t.get("reverse_rate") {
        Some(rv) => Some(rate::rate_spec(&t.key_path("reverse_rate"), rv)?),
        None => None,
    };
    let drop_packets = drop_list(&mut t)?;
    t.finish(LINK_KEYS)?;
    Ok(LinkCfg {
        rate,
        reverse_rate,
        delay: sched.base_delay(),
        loss: 0.0,
        drop_packets,
        schedule: Some(sched),
    })
}

/// The bottleneck and access links and their queues, as the dumbbell (and the parking lot,
/// for each of its bottlenecks) reads them.
pub(super) struct Pair {
    pub(super) bottleneck: LinkCfg,
    pub(super) access: LinkCfg,
    pub(super) bottleneck_queue: QueueCfg,
    pub(super) reverse_queue: QueueCfg,
    pub(super) access_queue: QueueCfg,
}

pub(super) fn pair(t: &mut Table) -> Res<Pair> {
    let bottleneck = link("topology.bottleneck", t.require("bottleneck")?, None)?;
    let access = match t.get("access") {
        Some(a) => link("topology.access", a, Some(&default_access()))?,
        None => default_access(),
    };
    let bottleneck_queue = queue::queue("topology.bottleneck_queue", t.get("bottleneck_queue"))?;
    let reverse_queue = queue::queue("topology.reverse_queue", t.get("reverse_queue"))?;
    let access_queue = queue::queue("topology.access_queue", t.get("access_queue"))?;
    Ok(Pair { bottleneck, access, bottleneck_queue, reverse_queue, access_queue })
}

fn default_access() -> LinkCfg {
    LinkCfg {
        rate: RateSpec::Constant(Rate(10_000_000_000)),
        reverse_rate: None,
        delay: Dur::ZERO,
        loss: 0.0,
        drop_packets: Vec::new(),
        schedule: None,
    }
}
