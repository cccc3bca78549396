//! The `wifi` preset: a wired server behind a Wi-Fi access point and N stations sharing its
//! channel (net/wifi). It expands into a graph — hosts `server` and the stations, the router
//! `ap`, the wired link `uplink` (server–ap) and one link per station (`NAME`: AP → station,
//! `NAME_rev`: station → AP) — whose station links the world hands to the BSS instead of
//! building wired links for them. Flows name `src`/`dst` hosts as on any graph (`server`
//! to a station: download; the other way: upload). docs/wifi.md.
//!
//! A hand-written graph gets the same BSS from `[topology.wifi]` (`ap`, a router of the graph,
//! the preset's BSS keys, and stations naming hosts of the graph): [`graph_bss`] appends one
//! station link per station after the graph's own links, as the preset's stand last.

use super::super::link::link;
use super::super::{queue, LinkCfg, QueueCfg, RateSpec};
use super::{push_link, Ecmp, GraphCfg, GraphLink};
use crate::net::wifi::{self, phy, ApQueue, PhyKind, PhyRate, StationCfg, StationQueue, WifiCfg};
use crate::params::{err, Res, Table};
use crate::units::{Dur, Rate};
use serde_json::Value;

pub(super) const KEYS: &[&str] = &[
    "kind",
    "uplink",
    "uplink_queue",
    "stations",
    "ap_queue",
    "station_queue",
    "qdisc",
    "driver_limit",
    "access_category",
    "aggregation",
    "retry_limit",
    "airtime_quantum",
    "gateway",
];
/// A graph's `[topology.wifi]`: the AP node and the BSS keys the preset has too.
const GRAPH_BSS_KEYS: &[&str] = &[
    "ap",
    "stations",
    "ap_queue",
    "station_queue",
    "qdisc",
    "driver_limit",
    "access_category",
    "aggregation",
    "retry_limit",
    "airtime_quantum",
];
const STATION_KEYS: &[&str] =
    &["name", "rate", "phy", "mcs", "streams", "width", "short_gi", "mpdu_error"];
const AGGREGATION_KEYS: &[&str] = &["max_mpdus", "max_bytes", "max_airtime"];

pub(super) fn preset(t: &mut Table) -> Res<GraphCfg> {
    let uplink = match t.get("uplink") {
        Some(v) => link("topology.uplink", v, Some(&default_uplink()))?,
        None => default_uplink(),
    };
    let uplink_queue = queue::queue("topology.uplink_queue", t.get("uplink_queue"))?;
    let cfg = bss(t)?;
    let stations = &cfg.stations;
    let mut g = GraphCfg::new("wifi", Ecmp::Lowest);
    g.add_node("server", true);
    g.add_node("ap", false);
    for (i, s) in stations.iter().enumerate() {
        if s.name == "server" || s.name == "ap" || !g.add_node(&s.name, true) {
            return err(
                &format!("topology.stations[{i}].name"),
                format!("duplicate or reserved name \"{}\"", s.name),
            );
        }
    }
    let l = GraphLink {
        name: "uplink".into(),
        a: 0,
        b: 1,
        link: uplink,
        reverse_loss: 0.0,
        queue: uplink_queue.clone(),
        reverse_queue: uplink_queue,
    };
    push_link(&mut g, "topology.uplink", l)?;
    push_station_links(&mut g, 1, &cfg, &|i| format!("topology.stations[{i}]"))?;
    g.report.push("uplink".into());
    g.wifi = Some(Box::new(cfg));
    Ok(g)
}

/// `[topology.wifi]` of a hand-written graph (read after its links): the BSS joins router
/// `ap` and the hosts its stations name; their station links follow the graph's links.
pub(super) fn graph_bss(v: &Value, g: &mut GraphCfg) -> Res<()> {
    let mut t = Table::new("topology.wifi", v)?;
    let ap_path = t.key_path("ap");
    let ap_name = crate::params::as_str(&ap_path, t.require("ap")?)?;
    let ap = match g.node(ap_name) {
        Some(n) if !g.nodes[n as usize].host => n,
        Some(_) => {
            return err(
                &ap_path,
                format!(
                    "\"{ap_name}\" is a host; the AP forwards between its stations and the rest \
                     of the graph: name a router"
                ),
            )
        }
        None => return err(&ap_path, format!("unknown node \"{ap_name}\"")),
    };
    let cfg = bss(&mut t)?;
    let sp = t.key_path("stations");
    t.finish(GRAPH_BSS_KEYS)?;
    let mut seen = std::collections::HashSet::new();
    for (i, s) in cfg.stations.iter().enumerate() {
        let p = format!("{sp}[{i}].name");
        match g.node(&s.name) {
            Some(n) if g.nodes[n as usize].host => {}
            Some(_) => return err(&p, format!("\"{}\" is a router; a station is a host", s.name)),
            None => {
                return err(
                    &p,
                    format!(
                        "\"{}\" is not a node of the graph (declare the station's host)",
                        s.name
                    ),
                )
            }
        }
        if !seen.insert(s.name.as_str()) {
            return err(&p, format!("station \"{}\" is listed twice", s.name));
        }
    }
    push_station_links(g, ap, &cfg, &|i| format!("{sp}[{i}]"))?;
    g.wifi = Some(Box::new(cfg));
    Ok(())
}

/// One link per station, AP `ap` → station host (`NAME`, back `NAME_rev`), after every other
/// link: the world hands them to the BSS (world/wifi.rs). Its rate is the station's PHY rate
/// (what shortest paths see); it has no delay.
fn push_station_links(
    g: &mut GraphCfg,
    ap: u32,
    cfg: &WifiCfg,
    path: &dyn Fn(usize) -> String,
) -> Res<()> {
    for (i, s) in cfg.stations.iter().enumerate() {
        let l = GraphLink {
            name: s.name.clone(),
            a: ap,
            b: g.node(&s.name).expect("the station's host"),
            link: LinkCfg {
                rate: RateSpec::Constant(Rate(s.rate.bps() as u64)),
                reverse_rate: None,
                delay: Dur::ZERO,
                loss: 0.0,
                drop_packets: Vec::new(),
                schedule: None,
            },
            reverse_loss: 0.0,
            queue: QueueCfg::droptail(crate::queue::DEFAULT_LIMIT),
            reverse_queue: QueueCfg::droptail(crate::queue::DEFAULT_LIMIT),
        };
        push_link(g, &path(i), l)?;
    }
    Ok(())
}

/// The BSS's keys (the preset's `topology` table or a graph's `topology.wifi`), in the order
/// they are checked; the stations' names are checked by the caller.
fn bss(t: &mut Table) -> Res<WifiCfg> {
    let ap_kind = t.opt_choice("ap_queue", "AP queueing", wifi::AP_QUEUES)?.unwrap_or("qdisc");
    let ap_queue = match ap_kind {
        "qdisc" => ApQueue::Qdisc {
            qdisc: queue::queue(&t.key_path("qdisc"), t.get("qdisc"))?,
            driver_limit: t
                .opt_int("driver_limit", 1, 1_000_000)?
                .unwrap_or(wifi::ATH9K_QDEPTH as i64) as u32,
        },
        other => {
            for k in ["qdisc", "driver_limit"] {
                if t.has(k) {
                    return err(
                        &t.key_path(k),
                        format!(
                            "only with ap_queue = \"qdisc\" (with \"{other}\" mac80211's queues \
                             replace the qdisc and the driver's FIFO)"
                        ),
                    );
                }
            }
            if other == "airtime" {
                ApQueue::Airtime
            } else {
                ApQueue::FqMac
            }
        }
    };
    // The stations' own queue: FIFO by default (every run before this key, byte for byte;
    // docs/wifi.md says why FQ-MAC is not the default).
    if t.get("station_queue").is_some_and(|v| !v.is_string()) {
        return err(
            &t.key_path("station_queue"),
            format!("expected a string, one of: {}", wifi::STATION_QUEUES.join(", ")),
        );
    }
    let station_queue =
        match t.opt_choice("station_queue", "station queueing", wifi::STATION_QUEUES)? {
            Some("fq_mac") => StationQueue::FqMac,
            _ => StationQueue::Fifo,
        };
    let ac = match t.opt_choice("access_category", "access category", wifi::AC_NAMES)? {
        Some(n) => wifi::Ac::from_name(n).expect("a listed category"),
        None => wifi::Ac::Be,
    };
    let (mut max_mpdus, mut max_bytes, mut max_airtime) =
        (64u32, wifi::MAX_AMPDU_BYTES, wifi::MAX_AGGR_AIRTIME);
    if let Some(v) = t.get("aggregation") {
        let mut at = Table::new(&t.key_path("aggregation"), v)?;
        // 64: the block-ACK bitmap's length (10.24.7.7); 0 would send nothing.
        if let Some(n) = at.opt_int("max_mpdus", 1, 64)? {
            max_mpdus = n as u32;
        }
        if let Some(b) = at.opt_size("max_bytes")? {
            // VHT's largest A-MPDU, 2^20 − 1 octets (9.4.2.158.2).
            if b == 0 || b > 1_048_575 {
                return err(&at.key_path("max_bytes"), "must be 1 B ..= 1048575 B");
            }
            max_bytes = b;
        }
        if let Some(d) = at.opt_duration("max_airtime")? {
            // A PPDU lasts at most aPPDUMaxTime, 5.484 ms (Table 19-25).
            if d == Dur::ZERO || d > Dur(5_484_000) {
                return err(&at.key_path("max_airtime"), "must be > 0 and at most 5.484 ms");
            }
            max_airtime = d;
        }
        at.finish(AGGREGATION_KEYS)?;
    }
    let retry_limit = t.opt_int("retry_limit", 1, 255)?.unwrap_or(wifi::RETRY_LIMIT as i64) as u32;
    let qp = t.key_path("airtime_quantum");
    let quantum = match t.opt_duration("airtime_quantum")? {
        Some(d) if d == Dur::ZERO => return err(&qp, "must be positive"),
        Some(_) if !matches!(ap_queue, ApQueue::Airtime) => {
            return err(&qp, "only with ap_queue = \"airtime\"")
        }
        Some(d) => d,
        None => wifi::AIRTIME_QUANTUM,
    };
    let sp = t.key_path("stations");
    let stations = match t.get("stations") {
        Some(Value::Array(a)) if !a.is_empty() && a.len() <= 1024 => a
            .iter()
            .enumerate()
            .map(|(i, v)| station(&format!("{sp}[{i}]"), i, v))
            .collect::<Res<Vec<_>>>()?,
        _ => {
            return err(
                &sp,
                "expected 1 to 1024 stations ([[topology.stations]] with a rate, or phy/mcs)",
            )
        }
    };
    Ok(WifiCfg {
        stations,
        ac,
        ap_queue,
        station_queue,
        max_mpdus,
        max_bytes,
        max_airtime,
        retry_limit,
        quantum,
    })
}

/// The wired side: 1 Gbit/s (faster than any station), 5 ms one way.
fn default_uplink() -> LinkCfg {
    LinkCfg {
        rate: RateSpec::Constant(Rate(1_000_000_000)),
        reverse_rate: None,
        delay: Dur::from_millis(5),
        loss: 0.0,
        drop_packets: Vec::new(),
        schedule: None,
    }
}

fn station(path: &str, i: usize, v: &Value) -> Res<StationCfg> {
    let mut t = Table::new(path, v)?;
    if t.has("delay") {
        return err(
            &t.key_path("delay"),
            "a Wi-Fi station has no delay to set: propagation across a BSS (< 100 m) is under \
             0.4 µs, inside the slot time the MAC already charges (IEEE 802.11-2016 10.3.7)",
        );
    }
    let name = match t.opt_str("name")? {
        Some("") => return err(&t.key_path("name"), "must not be empty"),
        Some(n) => n.to_string(),
        None => format!("sta{i}"),
    };
    let rate = match (t.opt_rate("rate")?, t.has("mcs")) {
        (Some(_), true) => {
            return err(&t.key_path("rate"), "give either rate or mcs (with phy, streams, width)")
        }
        (Some(r), false) => {
            if r.0 == 0 {
                return err(&t.key_path("rate"), "must be positive");
            }
            PhyRate::direct(r.0)
        }
        (None, true) => {
            let kind = match t.opt_choice("phy", "PHY", &["ht", "vht"])?.unwrap_or("ht") {
                "vht" => PhyKind::Vht,
                _ => PhyKind::Ht,
            };
            let mcs = t.opt_int("mcs", 0, 31)?.unwrap() as u32;
            let streams = t.opt_int("streams", 1, 8)?;
            // An HT index 8..=31 carries its streams (19.5: MCS 8·(N_SS − 1) + 0..7).
            let (mcs, streams) = match (kind, streams) {
                (PhyKind::Ht, None) if mcs > 7 => (mcs % 8, mcs / 8 + 1),
                (_, s) => (mcs, s.unwrap_or(1) as u32),
            };
            let width = t.opt_int("width", 20, 160)?.unwrap_or(20) as u32;
            let sgi = t.opt_bool("short_gi")?.unwrap_or(false);
            phy::mcs_rate(kind, mcs, streams, width, sgi).or_else(|m| err(&t.key_path("mcs"), m))?
        }
        (None, false) => {
            return err(
                &t.key_path("rate"),
                "missing: a station needs a rate (e.g. \"65Mbps\") or an mcs (with phy, \
                 streams, width)",
            )
        }
    };
    for k in ["phy", "streams", "width", "short_gi"] {
        if t.has(k) && !t.has("mcs") {
            return err(&t.key_path(k), "only with mcs");
        }
    }
    let mpdu_error = t.opt_f64("mpdu_error", 0.0, 1.0, false)?.unwrap_or(0.0);
    t.finish(STATION_KEYS)?;
    Ok(StationCfg { name, rate, mpdu_error })
}
