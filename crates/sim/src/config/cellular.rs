//! The cellular topology: `topology = { kind = "cellular", core, radio, bs_queue, ue_queue,
//! core_queue, ues, profile }`. A profile ("3g", "3.5g", "4g") fills the radio link and the
//! base-station buffer; keys given explicitly override it (see docs/cellular.md for where
//! each profile number comes from).

use super::link::{drop_list, link};
use super::{queue, LinkCfg, QueueCfg, QueueLimit, RateSpec, Topology, TopologyKind};
use crate::params::{err, Res, Table};
use crate::units::{Dur, Rate};

const KEYS: &[&str] = &[
    "kind",
    "core",
    "radio",
    "bs_queue",
    "ue_queue",
    "core_queue",
    "ues",
    "profile",
    "traces",
    "gateway",
];
const RADIO_KEYS: &[&str] = &["down", "up", "delay", "loss", "drop_packets"];
pub const PROFILES: &[&str] = &["3g", "3.5g", "4g", "3g-trace", "4g-trace"];

/// Trace-driven profiles: the Mahimahi files (down, up) they read from `topology.traces`.
fn trace_files(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "3g-trace" => Some(("TMobile-UMTS-driving.down", "TMobile-UMTS-driving.up")),
        "4g-trace" => Some(("TMobile-LTE-short.down", "TMobile-LTE-short.up")),
        _ => None,
    }
}

struct Profile {
    down: RateSpec,
    up: RateSpec,
    radio_delay: Dur,
    core_delay: Dur,
    bs_packets: u64,
}

fn cellular_rate(min_kbps: u64, max_kbps: u64) -> RateSpec {
    RateSpec::Cellular {
        min: Rate(min_kbps * 1000),
        max: Rate(max_kbps * 1000),
        interval: Dur::from_millis(10),
        dwell: Dur::from_secs(5),
        p_good: 0.5,
    }
}

fn profile(name: &str) -> Profile {
    match name {
        // UMTS as measured by Alfredsson et al.: 320 kB in about 19 s unloaded → a mean of
        // about 140 kbit/s. The per-user buffer (150 packets, ~13 s at that rate) holds a lone
        // 320 kB transfer's slow start, as the paper's loss-free baseline implies, and still
        // overflows under five background flows (its Fig. 9 losses).
        "3g" => Profile {
            down: cellular_rate(80, 200),
            up: cellular_rate(40, 100),
            radio_delay: Dur::from_millis(75),
            core_delay: Dur::from_millis(10),
            bs_packets: 150,
        },
        // HSPA+: long flows near 16 Mbit/s, unloaded short-flow RTT about 80 ms; a per-user
        // buffer of 1000 packets (750 ms at 16 Mbit/s) gives the second-scale bloat reported.
        "3.5g" => Profile {
            down: cellular_rate(12_000, 20_000),
            up: cellular_rate(2_000, 5_800),
            radio_delay: Dur::from_millis(30),
            core_delay: Dur::from_millis(10),
            bs_packets: 1000,
        },
        // LTE: higher rates, shorter RTT, and (as the paper suspects) better buffer management:
        // 200 packets is about 80 ms at 30 Mbit/s.
        _ => Profile {
            down: cellular_rate(20_000, 40_000),
            up: cellular_rate(5_000, 15_000),
            radio_delay: Dur::from_millis(15),
            core_delay: Dur::from_millis(10),
            bs_packets: 200,
        },
    }
}

pub(super) fn cellular(mut t: Table) -> Res<Topology> {
    let name = t.opt_choice("profile", "link profile", PROFILES)?;
    let traces = t.opt_str("traces")?;
    let prof = match (name, name.and_then(trace_files)) {
        (None, _) => None,
        (Some(n), None) => Some(profile(n)),
        (Some(n), Some((down, up))) => {
            // The trace variants keep their base profile's delays and buffer.
            let mut p = profile(&n.replace("-trace", ""));
            let Some(dir) = traces else {
                return err(
                    "topology.traces",
                    format!(
                        "profile \"{n}\" needs the folder of the Mahimahi traces ({down}, {up})"
                    ),
                );
            };
            let spec = |file: &str, key: &str| {
                let path = std::path::Path::new(dir).join(file);
                let v = serde_json::json!({ "model": "trace", "file": path.to_string_lossy() });
                super::rate::rate_spec(key, &v).map_err(|mut e| {
                    e.path = key.to_string();
                    e
                })
            };
            p.down = spec(down, "topology.traces")?;
            p.up = spec(up, "topology.traces")?;
            Some(p)
        }
    };
    if traces.is_some() && name.and_then(trace_files).is_none() {
        return err(
            "topology.traces",
            "only the trace profiles (3g-trace, 4g-trace) read trace files",
        );
    }
    let core_default = LinkCfg {
        rate: RateSpec::Constant(Rate(1_000_000_000)),
        reverse_rate: None,
        delay: prof.as_ref().map_or(Dur::from_millis(10), |p| p.core_delay),
        loss: 0.0,
        drop_packets: Vec::new(),
        schedule: None,
    };
    let core = match t.get("core") {
        Some(c) => link("topology.core", c, Some(&core_default))?,
        None => core_default,
    };
    let radio = match t.get("radio") {
        Some(rv) => radio_link(rv, prof.as_ref())?,
        None => match prof.as_ref() {
            Some(p) => LinkCfg {
                rate: p.down.clone(),
                reverse_rate: Some(p.up.clone()),
                delay: p.radio_delay,
                loss: 0.0,
                drop_packets: Vec::new(),
                schedule: None,
            },
            None => {
                return err(
                    "topology.radio",
                    "missing required key (or give a profile: 3g, 3.5g, 4g)",
                )
            }
        },
    };
    let bs_default =
        QueueCfg::droptail(QueueLimit::Packets(prof.as_ref().map_or(500, |p| p.bs_packets)));
    let bs_queue = match t.get("bs_queue") {
        Some(q) => queue::queue("topology.bs_queue", Some(q))?,
        None => bs_default,
    };
    let ue_queue = queue::queue("topology.ue_queue", t.get("ue_queue"))?;
    let core_queue = queue::queue("topology.core_queue", t.get("core_queue"))?;
    let ues = t.opt_int("ues", 1, 10_000)?.unwrap_or(1) as u32;
    if t.has("gateway") {
        return err(
            "topology.gateway",
            "the cellular topology has no gateway router for an ACK rewriter (use a dumbbell)",
        );
    }
    t.finish(KEYS)?;
    Ok(Topology {
        kind: TopologyKind::Cellular,
        bottleneck: radio,
        bottleneck_queue: bs_queue,
        reverse_queue: ue_queue,
        access: core,
        access_queue: core_queue,
        gateway: None,
        ues,
        graph: None,
    })
}

fn radio_link(v: &serde_json::Value, prof: Option<&Profile>) -> Res<LinkCfg> {
    let mut t = Table::new("topology.radio", v)?;
    let down = match (t.get("down"), prof) {
        (Some(d), _) => super::rate::rate_spec("topology.radio.down", d)?,
        (None, Some(p)) => p.down.clone(),
        (None, None) => return err("topology.radio.down", "missing required key"),
    };
    let up = match (t.get("up"), prof) {
        (Some(u), _) => super::rate::rate_spec("topology.radio.up", u)?,
        (None, Some(p)) => p.up.clone(),
        (None, None) => return err("topology.radio.up", "missing required key"),
    };
    let delay = match (t.opt_duration("delay")?, prof) {
        (Some(d), _) => d,
        (None, Some(p)) => p.radio_delay,
        (None, None) => return err("topology.radio.delay", "missing required key"),
    };
    let loss = t.opt_f64("loss", 0.0, 1.0, false)?.unwrap_or(0.0);
    let drop_packets = drop_list(&mut t)?;
    t.finish(RADIO_KEYS)?;
    Ok(LinkCfg { rate: down, reverse_rate: Some(up), delay, loss, drop_packets, schedule: None })
}
