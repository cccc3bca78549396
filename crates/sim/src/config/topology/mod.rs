//! Graph topologies: `topology.kind = "graph"` with named nodes (hosts, routers), links
//! between two nodes (each a pair of one-way links: `name` from a to b, `name_rev` back) and
//! optional static routes; the presets `parking_lot`, `leaf_spine` and `fat_tree` expand into
//! the same [`GraphCfg`] (presets.rs). Flows name `src` and `dst` hosts or a `pattern`.
//! Every check that needs only the scenario is made here, so bad input exits with code 2 and
//! the key path (docs/topology.md).

mod classic;
mod presets;
pub mod routes;
mod wifi;

pub use classic::{expand_classic, Classic};

use super::link::link;
use super::{gateway, queue, LinkCfg, QueueCfg, Topology, TopologyKind};
use crate::net::route::MAX_HOPS;
use crate::params::{self as reader, err, Res, Table};
use serde_json::Value;
use std::collections::HashMap;

pub(super) const KINDS: &[&str] =
    &["dumbbell", "cellular", "graph", "parking_lot", "leaf_spine", "fat_tree", "wifi"];
const GRAPH_KEYS: &[&str] =
    &["kind", "nodes", "hosts", "routers", "links", "wifi", "routes", "ecmp", "gateway"];
const NODE_KEYS: &[&str] = &["name", "kind"];
/// The keys of a graph link besides those of a dumbbell link (`rate`, `delay`, ...).
const LINK_OWN_KEYS: &[&str] = &["a", "b", "name", "queue", "reverse_queue", "reverse_loss"];
const ROUTE_KEYS: &[&str] = &["from", "to", "via"];
const ECMP: &[&str] = &["lowest", "hash"];
pub const PATTERNS: &[&str] = &["permutation", "incast", "parking_lot"];

#[derive(Debug, Clone)]
pub struct NodeCfg {
    pub name: String,
    /// A host (runs endpoints, never forwards) or a router.
    pub host: bool,
    /// A preset's hint of which nodes belong together when a run is split over threads (a
    /// fat-tree's pod, a leaf and its hosts); None: any partition (world/partition.rs).
    pub group: Option<u32>,
}

/// A link between nodes `a` and `b`: one-way links a→b (`name`, `link.rate`, `link.loss`,
/// `link.drop_packets`, `queue`) and b→a (`name_rev`, `link.reverse_rate`, `reverse_loss`,
/// `reverse_queue`), both with `link.delay`.
#[derive(Debug, Clone)]
pub struct GraphLink {
    pub name: String,
    pub a: u32,
    pub b: u32,
    pub link: LinkCfg,
    pub reverse_loss: f64,
    pub queue: QueueCfg,
    pub reverse_queue: QueueCfg,
}

/// A static route: packets from host `path[0]` to host `path[last]` take exactly this node
/// path (the other direction is routed on its own).
#[derive(Debug, Clone)]
pub struct StaticRoute {
    pub path: Vec<u32>,
}

/// How a node chooses among next hops on equally short paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ecmp {
    /// The next hop with the lowest name (then the link with the lowest name): every flow
    /// between two hosts takes the same path.
    Lowest,
    /// A seeded hash of the packet's 5-tuple and the node: per-flow spreading, stable in a run.
    Hash,
}

/// Which hosts a graph flow table connects; `count` flows per pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// `src` → `dst`.
    Pair(u32, u32),
    /// Every host sends to another: a seeded derangement of the hosts (a random cycle).
    Permutation,
    /// Every other host sends to `dst`.
    Incast(u32),
    /// The parking lot's long flow (src0 → dst0) and one cross flow per bottleneck.
    ParkingLot,
}

/// The nodes, links and routes of a graph topology.
#[derive(Debug, Clone)]
pub struct GraphCfg {
    /// The preset it came from ("graph" when written out).
    pub preset: &'static str,
    pub nodes: Vec<NodeCfg>,
    pub links: Vec<GraphLink>,
    pub routes: Vec<StaticRoute>,
    pub ecmp: Ecmp,
    /// One-way links the summary always reports (a preset's bottlenecks), by name.
    pub report: Vec<String>,
    /// The one-way link whose queue the gateway (ACK rewriter) reads; ACKs are rewritten as
    /// they leave its reverse direction.
    pub gateway_link: Option<String>,
    /// Where the one-way links stand in the world's link vector (graph order: link i's a→b
    /// is 2i, its b→a 2i + 1), if not in graph order. The index keys a link's random streams,
    /// so the dumbbell keeps its own order (and its results) this way. Empty: graph order.
    pub order: Vec<u32>,
    /// Per link, the name of its b→a direction where it is not NAME_rev (the dumbbell's
    /// `f0_src_down`, the cellular tree's `core_up`). Empty: NAME_rev throughout.
    pub reverse_names: Vec<String>,
    /// The Wi-Fi BSS of the `wifi` preset or of a graph's `[topology.wifi]`: its station
    /// links, the last `stations.len()` graph links, are the BSS's downlinks (a→b) and
    /// uplinks (b→a), built by net/wifi instead of as wired links.
    pub wifi: Option<Box<crate::net::wifi::WifiCfg>>,
    index: HashMap<String, u32>,
    /// Every one-way link name taken (duplicate checks stay linear in the graph's size).
    taken: std::collections::HashSet<String>,
}

/// The name of a link's b→a direction.
pub fn reverse_name(name: &str) -> String {
    format!("{name}_rev")
}

impl GraphCfg {
    pub(super) fn new(preset: &'static str, ecmp: Ecmp) -> GraphCfg {
        GraphCfg {
            preset,
            nodes: Vec::new(),
            links: Vec::new(),
            routes: Vec::new(),
            ecmp,
            report: Vec::new(),
            gateway_link: None,
            order: Vec::new(),
            reverse_names: Vec::new(),
            wifi: None,
            index: HashMap::new(),
            taken: Default::default(),
        }
    }

    /// Adds a node; false if the name is taken.
    pub(super) fn add_node(&mut self, name: &str, host: bool) -> bool {
        if self.index.contains_key(name) {
            return false;
        }
        self.index.insert(name.to_string(), self.nodes.len() as u32);
        self.nodes.push(NodeCfg { name: name.to_string(), host, group: None });
        true
    }

    pub fn node(&self, name: &str) -> Option<u32> {
        self.index.get(name).copied()
    }

    /// Host node indices in declaration order.
    pub fn hosts(&self) -> Vec<u32> {
        (0..self.nodes.len() as u32).filter(|&n| self.nodes[n as usize].host).collect()
    }

    /// The links built as wired links: all but a BSS's station links (which stand last).
    pub fn wired_links(&self) -> &[GraphLink] {
        let n = self.wifi.as_ref().map_or(0, |w| w.stations.len());
        &self.links[..self.links.len() - n]
    }

    /// Every one-way link's name in build order (a→b, then b→a, per link).
    pub fn link_names(&self) -> Vec<String> {
        (0..2 * self.links.len() as u32).map(|i| self.one_way_name(i).into_owned()).collect()
    }

    /// The name of one-way link `i` in graph order (2l: link l's a→b, 2l + 1: its b→a).
    pub fn one_way_name(&self, i: u32) -> std::borrow::Cow<'_, str> {
        let l = &self.links[i as usize / 2];
        match (i % 2, self.reverse_names.get(i as usize / 2)) {
            (0, _) => l.name.as_str().into(),
            (_, Some(n)) => n.as_str().into(),
            (_, None) => reverse_name(&l.name).into(),
        }
    }
}

/// Reads a graph topology or preset (`kind` already read).
pub(super) fn topology(kind: &'static str, mut t: Table) -> Res<Topology> {
    let mut r = match kind {
        "graph" => graph(&mut t)?,
        "wifi" => Read { cfg: wifi::preset(&mut t)?, gateway_cfg: None },
        _ => Read { cfg: presets::preset(kind, &mut t)?, gateway_cfg: None },
    };
    if let Some(gv) = t.get("gateway") {
        read_gateway(&mut r, gv)?;
    }
    t.finish(match kind {
        "graph" => GRAPH_KEYS,
        "wifi" => wifi::KEYS,
        _ => presets::keys(kind),
    })?;
    // The dumbbell fields are unused on a graph; they hold its first link.
    let first = r.cfg.links[0].link.clone();
    let droptail = QueueCfg::droptail(super::QueueLimit::Packets(1000));
    Ok(Topology {
        kind: TopologyKind::Graph,
        bottleneck: first.clone(),
        bottleneck_queue: droptail.clone(),
        reverse_queue: droptail.clone(),
        access: first,
        access_queue: droptail,
        gateway: r.gateway_cfg,
        ues: 1,
        graph: Some(Box::new(r.cfg)),
    })
}

/// A graph being read and the gateway found on it.
pub(super) struct Read {
    pub(super) cfg: GraphCfg,
    pub(super) gateway_cfg: Option<crate::gateway::GatewayCfg>,
}

fn ecmp(t: &mut Table) -> Res<Ecmp> {
    Ok(match t.opt_choice("ecmp", "ECMP choice", ECMP)? {
        Some("hash") => Ecmp::Hash,
        _ => Ecmp::Lowest,
    })
}

fn graph(t: &mut Table) -> Res<Read> {
    let mut g = GraphCfg::new("graph", ecmp(t)?);
    read_nodes(t, &mut g)?;
    match t.get("links") {
        Some(Value::Array(a)) if !a.is_empty() => {
            for (i, lv) in a.iter().enumerate() {
                read_link(&format!("topology.links[{i}]"), lv, &mut g)?;
            }
        }
        _ => {
            return err(
                "topology.links",
                "expected an array of links ([[topology.links]] with a, b, rate, delay)",
            )
        }
    }
    // A Wi-Fi BSS (config/topology/wifi.rs): its station links follow the graph's own.
    if let Some(v) = t.get("wifi") {
        wifi::graph_bss(v, &mut g)?;
    }
    match t.get("routes") {
        None => {}
        Some(Value::Array(a)) => {
            for (i, rv) in a.iter().enumerate() {
                read_route(&format!("topology.routes[{i}]"), rv, &mut g)?;
            }
        }
        Some(_) => {
            return err(
                "topology.routes",
                "expected an array of routes ([[topology.routes]] with from, to, via)",
            )
        }
    }
    Ok(Read { cfg: g, gateway_cfg: None })
}

/// `nodes = [{ name, kind = "host" | "router" }]`, or `hosts = [...]` and `routers = [...]`.
fn read_nodes(t: &mut Table, g: &mut GraphCfg) -> Res<()> {
    let add = |path: &str, name: &str, host: bool, g: &mut GraphCfg| {
        if name.is_empty() {
            return err(path, "must not be empty");
        }
        if !g.add_node(name, host) {
            return err(path, format!("duplicate node name \"{name}\""));
        }
        Ok(())
    };
    if let Some(v) = t.get("nodes") {
        let Value::Array(a) = v else {
            return err(
                "topology.nodes",
                "expected an array of nodes, e.g. [{ name = \"h1\", kind = \"host\" }]",
            );
        };
        for (i, nv) in a.iter().enumerate() {
            let p = format!("topology.nodes[{i}]");
            let mut nt = Table::new(&p, nv)?;
            let name = reader::as_str(&nt.key_path("name"), nt.require("name")?)?;
            let host = match nt.opt_choice("kind", "node kind", &["host", "router"])? {
                Some(k) => k == "host",
                None => return err(&nt.key_path("kind"), "missing required key (host or router)"),
            };
            nt.finish(NODE_KEYS)?;
            add(&format!("{p}.name"), name, host, g)?;
        }
    }
    for (key, host) in [("hosts", true), ("routers", false)] {
        let Some(v) = t.get(key) else { continue };
        let Value::Array(a) = v else {
            return err(&format!("topology.{key}"), "expected an array of node names");
        };
        for (i, nv) in a.iter().enumerate() {
            let p = format!("topology.{key}[{i}]");
            add(&p, reader::as_str(&p, nv)?, host, g)?;
        }
    }
    if g.nodes.is_empty() {
        return err(
            "topology.nodes",
            "a graph needs nodes (nodes = [...], or hosts = [...] and routers = [...])",
        );
    }
    Ok(())
}

/// A node named at `path`, which must exist.
fn node_at(path: &str, v: &Value, g: &GraphCfg) -> Res<u32> {
    let name = reader::as_str(path, v)?;
    g.node(name).map_or_else(
        || err(path, format!("unknown node \"{name}\" (nodes: {})", some_names(g))),
        Ok,
    )
}

fn some_names(g: &GraphCfg) -> String {
    let names: Vec<&str> = g.nodes.iter().take(8).map(|n| n.name.as_str()).collect();
    let more = if g.nodes.len() > 8 { ", ..." } else { "" };
    format!("{}{more}", names.join(", "))
}

/// One `[[topology.links]]` table: the graph's own keys, then a dumbbell link's.
fn read_link(path: &str, v: &Value, g: &mut GraphCfg) -> Res<()> {
    let Value::Object(map) = v else { return Table::new(path, v).map(|_| ()) };
    let own: serde_json::Map<String, Value> = map
        .iter()
        .filter(|(k, _)| LINK_OWN_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let rest: serde_json::Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !LINK_OWN_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let own = Value::Object(own);
    let mut t = Table::new(path, &own)?;
    let a = node_at(&t.key_path("a"), t.require("a")?, g)?;
    let b = node_at(&t.key_path("b"), t.require("b")?, g)?;
    if a == b {
        return err(
            &t.key_path("b"),
            format!("a link joins two different nodes (both are \"{}\")", g.nodes[a as usize].name),
        );
    }
    let name = match t.opt_str("name")? {
        Some("") => return err(&t.key_path("name"), "must not be empty"),
        Some(n) => n.to_string(),
        None => format!("{}-{}", g.nodes[a as usize].name, g.nodes[b as usize].name),
    };
    let queue = queue::queue(&t.key_path("queue"), t.get("queue"))?;
    let reverse_queue = queue::queue(&t.key_path("reverse_queue"), t.get("reverse_queue"))?;
    let reverse_loss = t.opt_f64("reverse_loss", 0.0, 1.0, false)?.unwrap_or(0.0);
    t.finish(LINK_OWN_KEYS)?;
    let lk = link(path, &Value::Object(rest), None).map_err(|mut e| {
        if e.message.starts_with("unknown key (allowed: ") {
            e.message = format!(
                "unknown key (allowed: {}, {})",
                LINK_OWN_KEYS.join(", "),
                super::link::LINK_KEYS.join(", ")
            );
        }
        e
    })?;
    push_link(
        g,
        &format!("{path}.name"),
        GraphLink { name, a, b, link: lk, reverse_loss, queue, reverse_queue },
    )
}

/// Adds a link, refusing a name either of its directions shares with another link's.
pub(super) fn push_link(g: &mut GraphCfg, path: &str, l: GraphLink) -> Res<()> {
    let rev = reverse_name(&l.name);
    if g.taken.contains(&l.name) || g.taken.contains(&rev) {
        return err(
            path,
            format!(
                "duplicate link name \"{}\" (each link is two one-way links, NAME and NAME_rev)",
                l.name
            ),
        );
    }
    g.taken.insert(rev);
    g.taken.insert(l.name.clone());
    g.links.push(l);
    Ok(())
}

/// `[[topology.routes]] from, to, via = [...]`: the exact node path from one host to another.
fn read_route(path: &str, v: &Value, g: &mut GraphCfg) -> Res<()> {
    let mut t = Table::new(path, v)?;
    let from = node_at(&t.key_path("from"), t.require("from")?, g)?;
    let to = node_at(&t.key_path("to"), t.require("to")?, g)?;
    for (k, n) in [("from", from), ("to", to)] {
        if !g.nodes[n as usize].host {
            return err(
                &t.key_path(k),
                format!(
                    "\"{}\" is a router; routes go from host to host",
                    g.nodes[n as usize].name
                ),
            );
        }
    }
    let mut nodes = vec![from];
    let vp = t.key_path("via");
    match t.get("via") {
        None => {}
        Some(Value::Array(a)) => {
            for (i, nv) in a.iter().enumerate() {
                let p = format!("{vp}[{i}]");
                let n = node_at(&p, nv, g)?;
                if g.nodes[n as usize].host {
                    return err(
                        &p,
                        format!("\"{}\" is a host; hosts do not forward", g.nodes[n as usize].name),
                    );
                }
                nodes.push(n);
            }
        }
        Some(_) => return err(&vp, "expected an array of router names"),
    }
    t.finish(ROUTE_KEYS)?;
    nodes.push(to);
    for (i, n) in nodes.iter().enumerate() {
        if nodes[..i].contains(n) {
            return err(
                &vp,
                format!("routing loop: the route passes \"{}\" twice", g.nodes[*n as usize].name),
            );
        }
    }
    for w in nodes.windows(2) {
        if !g.links.iter().any(|l| (l.a, l.b) == (w[0], w[1]) || (l.b, l.a) == (w[0], w[1])) {
            return err(
                &vp,
                format!(
                    "no link between \"{}\" and \"{}\"",
                    g.nodes[w[0] as usize].name, g.nodes[w[1] as usize].name
                ),
            );
        }
    }
    if nodes.len() - 1 > MAX_HOPS {
        return err(
            &vp,
            format!("a route crosses at most {MAX_HOPS} links (this one {})", nodes.len() - 1),
        );
    }
    if g.routes.iter().any(|r| r.path[0] == from && r.path[r.path.len() - 1] == to) {
        return err(
            path,
            format!(
                "a second route from \"{}\" to \"{}\"",
                g.nodes[from as usize].name, g.nodes[to as usize].name
            ),
        );
    }
    g.routes.push(StaticRoute { path: nodes });
    Ok(())
}

/// `gateway = { kind, link, ... }`: the ACK rewriter on the router at the entry of `link`.
fn read_gateway(g: &mut Read, v: &Value) -> Res<()> {
    let path = "topology.gateway";
    let Value::Object(map) = v else { return Table::new(path, v).map(|_| ()) };
    let lp = format!("{path}.link");
    let name = match map.get("link") {
        Some(n) => reader::as_str(&lp, n)?.to_string(),
        None => {
            return err(
                &lp,
                "missing required key (the one-way link whose queue the gateway reads)",
            )
        }
    };
    let q = g.cfg.links.iter().find_map(|l| {
        if l.name == name {
            Some(&l.queue)
        } else if reverse_name(&l.name) == name {
            Some(&l.reverse_queue)
        } else {
            None
        }
    });
    let Some(q) = q else { return err(&lp, format!("unknown link \"{name}\"")) };
    let mut rest = map.clone();
    rest.remove("link");
    g.gateway_cfg = Some(gateway::gateway(path, &Value::Object(rest), q)?);
    g.cfg.gateway_link = Some(name);
    Ok(())
}

/// A graph flow's `src`, `dst` and `pattern` keys, checked against the graph.
pub(super) fn flow_endpoints(t: &mut Table, g: &GraphCfg) -> Res<Pattern> {
    let host = |t: &mut Table, key: &'static str| -> Res<Option<u32>> {
        let p = t.key_path(key);
        let Some(v) = t.get(key) else { return Ok(None) };
        let n = node_at(&p, v, g)?;
        if !g.nodes[n as usize].host {
            return err(
                &p,
                format!("\"{}\" is a router; flows run between hosts", g.nodes[n as usize].name),
            );
        }
        Ok(Some(n))
    };
    let src = host(t, "src")?;
    let dst = host(t, "dst")?;
    let pattern = t.opt_choice("pattern", "flow pattern", PATTERNS)?;
    // Unreachable hosts and paths longer than a route holds are refused here, by key.
    let check = |pairs: &[(u32, u32)], path: &str| match routes::longest_hops(g, pairs) {
        Err((s, d)) => err(
            path,
            format!(
                "host \"{}\" is unreachable from \"{}\"",
                g.nodes[d as usize].name, g.nodes[s as usize].name
            ),
        ),
        Ok(h) if h as usize > MAX_HOPS => err(
            path,
            format!("a path of this flow crosses {h} links (a route holds at most {MAX_HOPS})"),
        ),
        Ok(_) => Ok(()),
    };
    let hosts = g.hosts();
    match (pattern, src, dst) {
        (None, Some(s), Some(d)) => {
            if s == d {
                return err(
                    &t.key_path("dst"),
                    format!("a flow from host \"{}\" to itself", g.nodes[s as usize].name),
                );
            }
            if !g.routes.iter().any(|r| (r.path[0], r.path[r.path.len() - 1]) == (s, d))
                || !g.routes.iter().any(|r| (r.path[0], r.path[r.path.len() - 1]) == (d, s))
            {
                check(&[(s, d)], &t.key_path("dst"))?;
            }
            Ok(Pattern::Pair(s, d))
        }
        (None, _, _) => err(
            &t.key_path(if src.is_none() { "src" } else { "dst" }),
            format!(
                "missing required key (graph flows name src and dst hosts, or a pattern: {})",
                PATTERNS.join(", ")
            ),
        ),
        (Some("incast"), None, Some(d)) => {
            let pairs: Vec<(u32, u32)> =
                hosts.iter().filter(|&&h| h != d).map(|&h| (h, d)).collect();
            check(&pairs, &t.key_path("dst"))?;
            Ok(Pattern::Incast(d))
        }
        (Some("incast"), _, _) => err(
            &t.key_path(if src.is_some() { "src" } else { "dst" }),
            "pattern = \"incast\" takes dst only (every other host sends to it)",
        ),
        (Some(p), Some(_), _) | (Some(p), None, Some(_)) => err(
            &t.key_path(if src.is_some() { "src" } else { "dst" }),
            format!("pattern = \"{p}\" chooses the hosts itself (no src or dst)"),
        ),
        (Some("permutation"), None, None) => {
            if hosts.len() < 2 {
                return err(&t.key_path("pattern"), "a permutation needs at least two hosts");
            }
            // The presets are connected and short by construction; a written graph is checked
            // for every pair the seeded permutation might choose.
            if g.preset == "graph" {
                let pairs: Vec<(u32, u32)> = hosts
                    .iter()
                    .flat_map(|&a| hosts.iter().filter(move |&&b| b != a).map(move |&b| (a, b)))
                    .collect();
                check(&pairs, &t.key_path("pattern"))?;
            }
            Ok(Pattern::Permutation)
        }
        (Some(_), None, None) => {
            if g.preset != "parking_lot" {
                return err(
                    &t.key_path("pattern"),
                    "pattern = \"parking_lot\" needs topology.kind = \"parking_lot\"",
                );
            }
            Ok(Pattern::ParkingLot)
        }
    }
}

/// `[metrics] links`: every name must be a one-way link of the topology.
pub(super) fn metrics_links(v: &Value, names: &[String]) -> Res<Vec<String>> {
    let Value::Array(a) = v else {
        return err("metrics.links", "expected an array of link names, e.g. [\"r1-r2\"]");
    };
    link_list("metrics.links", a, names, "")
}

/// A list of link names (`metrics.links`, `capture.links`), each one of `names`, without
/// repeats; `hint` ends the message about an unknown one.
pub(super) fn link_list(path: &str, a: &[Value], names: &[String], hint: &str) -> Res<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for (i, lv) in a.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let name = reader::as_str(&p, lv)?;
        if !names.iter().any(|n| n == name) {
            let shown: Vec<&str> = names.iter().take(6).map(|s| s.as_str()).collect();
            let more = if names.len() > 6 { ", ..." } else { "" };
            return err(
                &p,
                format!("unknown link \"{name}\" (links: {}{more}{hint})", shown.join(", ")),
            );
        }
        if !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    }
    Ok(out)
}
