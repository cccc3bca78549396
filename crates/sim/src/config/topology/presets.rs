//! Presets that expand into a graph: `parking_lot` (k bottlenecks in a row), `leaf_spine`
//! and the k-ary `fat_tree`. Node and link names follow fixed rules (docs/topology.md) so
//! that `capture`, `[metrics] links` and `gateway.link` can name them.

use super::super::link::{link, pair, Pair};
use super::super::{queue, LinkCfg, QueueCfg, RateSpec};
use super::{ecmp, push_link, Ecmp, GraphCfg, GraphLink};
use crate::net::route::MAX_HOPS;
use crate::params::{err, Res, Table};
use crate::units::{Dur, Rate};

const PARKING_KEYS: &[&str] = &[
    "kind",
    "k",
    "bottleneck",
    "bottleneck_queue",
    "reverse_queue",
    "access",
    "access_queue",
    "gateway",
];
const LEAF_SPINE_KEYS: &[&str] =
    &["kind", "leaves", "spines", "hosts_per_leaf", "link", "fabric", "queue", "ecmp", "gateway"];
const FAT_TREE_KEYS: &[&str] = &["kind", "k", "link", "queue", "ecmp", "gateway"];

pub(super) fn keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "parking_lot" => PARKING_KEYS,
        "leaf_spine" => LEAF_SPINE_KEYS,
        _ => FAT_TREE_KEYS,
    }
}

pub(super) fn preset(kind: &'static str, t: &mut Table) -> Res<GraphCfg> {
    match kind {
        "parking_lot" => parking_lot(t),
        "leaf_spine" => leaf_spine(t),
        _ => fat_tree(t),
    }
}

/// Adds nodes whose names are new by construction.
fn nodes(g: &mut GraphCfg, names: impl Iterator<Item = String>, host: bool) {
    for n in names {
        let fresh = g.add_node(&n, host);
        debug_assert!(fresh, "preset node names are unique");
    }
}

/// Marks the named nodes as one group for the parallel engine's partitioning.
fn group(g: &mut GraphCfg, names: impl Iterator<Item = String>, id: usize) {
    for n in names {
        let i = g.node(&n).expect("preset node") as usize;
        g.nodes[i].group = Some(id as u32);
    }
}

/// Adds the link a–b named "a-b" with one queue configuration for both directions.
fn join(g: &mut GraphCfg, a: &str, b: &str, cfg: &LinkCfg, q: &QueueCfg, rq: &QueueCfg) -> Res<()> {
    let (na, nb) = (g.node(a).expect("preset node"), g.node(b).expect("preset node"));
    let l = GraphLink {
        name: format!("{a}-{b}"),
        a: na,
        b: nb,
        link: cfg.clone(),
        reverse_loss: 0.0,
        queue: q.clone(),
        reverse_queue: rq.clone(),
    };
    push_link(g, "topology", l)
}

/// Routers r0..rk; bottleneck bi = r(i-1)→ri; the long flow src0 → dst0 (at r0 and rk),
/// cross flow i srci → dsti (at r(i-1) and ri).
fn parking_lot(t: &mut Table) -> Res<GraphCfg> {
    // The long flow crosses its two access links and the k bottlenecks.
    let k = t.opt_int("k", 1, (MAX_HOPS - 2) as i64)?.unwrap_or(3) as usize;
    let Pair { bottleneck, access, bottleneck_queue: bq, reverse_queue: rq, access_queue: aq } =
        pair(t)?;
    let mut g = GraphCfg::new("parking_lot", Ecmp::Lowest);
    nodes(&mut g, (0..=k).map(|i| format!("r{i}")), false);
    nodes(&mut g, (0..=k).flat_map(|i| [format!("src{i}"), format!("dst{i}")]), true);
    for i in 1..=k {
        let (a, b) = (g.node(&format!("r{}", i - 1)).unwrap(), g.node(&format!("r{i}")).unwrap());
        let l = GraphLink {
            name: format!("b{i}"),
            a,
            b,
            link: bottleneck.clone(),
            reverse_loss: 0.0,
            queue: bq.clone(),
            reverse_queue: rq.clone(),
        };
        push_link(&mut g, "topology", l)?;
        g.report.push(format!("b{i}"));
    }
    join(&mut g, "src0", "r0", &access, &aq, &aq)?;
    join(&mut g, &format!("r{k}"), "dst0", &access, &aq, &aq)?;
    for i in 1..=k {
        join(&mut g, &format!("src{i}"), &format!("r{}", i - 1), &access, &aq, &aq)?;
        join(&mut g, &format!("r{i}"), &format!("dst{i}"), &access, &aq, &aq)?;
    }
    Ok(g)
}

/// Data-centre links: 10 Gbit/s, 1 µs unless given.
fn dc_link(t: &mut Table, key: &'static str, default: Option<&LinkCfg>) -> Res<LinkCfg> {
    let base = LinkCfg {
        rate: RateSpec::Constant(Rate(10_000_000_000)),
        reverse_rate: None,
        delay: Dur::from_micros(1),
        loss: 0.0,
        drop_packets: Vec::new(),
        schedule: None,
    };
    let d = default.unwrap_or(&base);
    match t.get(key) {
        Some(v) => link(&t.key_path(key), v, Some(d)),
        None => Ok(d.clone()),
    }
}

/// Spines spine0.., leaves leaf0.., hosts h0.. (hosts_per_leaf under each leaf); every leaf
/// links to every spine.
fn leaf_spine(t: &mut Table) -> Res<GraphCfg> {
    let leaves = t.opt_int("leaves", 1, 1024)?.unwrap_or(4) as usize;
    let spines = t.opt_int("spines", 1, 1024)?.unwrap_or(2) as usize;
    let per = t.opt_int("hosts_per_leaf", 1, 1024)?.unwrap_or(4) as usize;
    let host_link = dc_link(t, "link", None)?;
    let fabric = dc_link(t, "fabric", Some(&host_link))?;
    let q = queue::queue("topology.queue", t.get("queue"))?;
    let mut g = GraphCfg::new("leaf_spine", ecmp(t)?);
    nodes(&mut g, (0..spines).map(|j| format!("spine{j}")), false);
    nodes(&mut g, (0..leaves).map(|i| format!("leaf{i}")), false);
    nodes(&mut g, (0..leaves * per).map(|h| format!("h{h}")), true);
    for h in 0..leaves * per {
        join(&mut g, &format!("h{h}"), &format!("leaf{}", h / per), &host_link, &q, &q)?;
    }
    for i in 0..leaves {
        let hosts = (i * per..(i + 1) * per).map(|h| format!("h{h}"));
        group(&mut g, std::iter::once(format!("leaf{i}")).chain(hosts), i);
    }
    for i in 0..leaves {
        for j in 0..spines {
            join(&mut g, &format!("leaf{i}"), &format!("spine{j}"), &fabric, &q, &q)?;
        }
    }
    Ok(g)
}

/// The k-ary fat-tree: k pods of k/2 edge (edge{p}_{i}) and k/2 aggregation (agg{p}_{j})
/// switches, (k/2)² cores (core{c}); k/2 hosts per edge switch, k³/4 hosts h0.. in all.
/// Aggregation switch j of every pod links to cores j·k/2 .. (j+1)·k/2 − 1.
fn fat_tree(t: &mut Table) -> Res<GraphCfg> {
    let kp = t.key_path("k");
    let k = t.opt_int("k", 2, 64)?.unwrap_or(4) as usize;
    if !k.is_multiple_of(2) {
        return err(&kp, format!("must be even (got {k})"));
    }
    let h = k / 2;
    let l = dc_link(t, "link", None)?;
    let q = queue::queue("topology.queue", t.get("queue"))?;
    let mut g = GraphCfg::new("fat_tree", ecmp(t)?);
    nodes(&mut g, (0..h * h).map(|c| format!("core{c}")), false);
    for p in 0..k {
        nodes(&mut g, (0..h).map(|j| format!("agg{p}_{j}")), false);
        nodes(&mut g, (0..h).map(|i| format!("edge{p}_{i}")), false);
    }
    nodes(&mut g, (0..k * k * k / 4).map(|n| format!("h{n}")), true);
    for n in 0..k * k * k / 4 {
        let (p, i) = (n / (h * h), n / h % h);
        join(&mut g, &format!("h{n}"), &format!("edge{p}_{i}"), &l, &q, &q)?;
    }
    for p in 0..k {
        let switches = (0..h).flat_map(|j| [format!("agg{p}_{j}"), format!("edge{p}_{j}")]);
        let hosts = (p * h * h..(p + 1) * h * h).map(|n| format!("h{n}"));
        group(&mut g, switches.chain(hosts), p);
    }
    for p in 0..k {
        for i in 0..h {
            for j in 0..h {
                join(&mut g, &format!("edge{p}_{i}"), &format!("agg{p}_{j}"), &l, &q, &q)?;
            }
        }
        for j in 0..h {
            for c in j * h..(j + 1) * h {
                join(&mut g, &format!("agg{p}_{j}"), &format!("core{c}"), &l, &q, &q)?;
            }
        }
    }
    Ok(g)
}
