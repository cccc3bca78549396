//! The graph topology's part of the build: flow tables expanded into host pairs, the one-way
//! links of every graph link, each flow's 5-tuple and its two routes (config/topology/routes.rs
//! finds them), and the links whose queues are reported.

use crate::config::routes::{self as graph, Path, Request};
use crate::config::{
    reverse_name, FlowSpec, GraphCfg, Pattern, QueueCfg, RateSpec, Scenario, Transport,
};
use crate::engine::{SimRng, Stream};
use crate::ids::LinkId;
use crate::net::link::LinkSpec;
use crate::net::rate_model::RateModel;
use crate::net::schedule::{PathSchedule, Schedule, ScheduleRate};
use crate::net::Link;
use crate::queue::{self, FlowKey};
use crate::units::Dur;
use std::sync::Arc;

/// Host addresses: 10.0.0.0 plus the node's index (host-aware queues see a host's flows as
/// one source address).
const HOST_NET: u32 = 0x0a00_0000;
const PORT_BASE: u16 = 10_000;
const SERVER_PORT: u16 = 5001;
/// Random-stream index of a flow table's permutation (FlowStart stream, above any flow id).
const PERMUTATION_STREAM: u64 = 1 << 40;

/// One flow to build: its table and, on a graph, its (src, dst) hosts.
pub(super) type Plan = (usize, Option<(u32, u32)>);

/// A dumbbell's or cellular tree's flows in build order, with their hosts.
pub(super) fn classic_plans(sc: &Scenario, pairs: &[(u32, u32)]) -> Vec<Plan> {
    let tables =
        sc.flows.iter().enumerate().flat_map(|(i, s)| std::iter::repeat_n(i, s.count as usize));
    tables.zip(pairs).map(|(i, &p)| (i, Some(p))).collect()
}

/// Every flow of the scenario in build order: each table's `count` flows per host pair.
pub(super) fn plans(sc: &Scenario, seed: u64) -> Vec<Plan> {
    let mut out = Vec::new();
    for (i, spec) in sc.flows.iter().enumerate() {
        let pairs = match (&sc.topology.graph, spec.endpoints) {
            (Some(g), Some(p)) => pairs(g, p, seed, i),
            _ => vec![None],
        };
        for pair in pairs {
            out.extend(std::iter::repeat_n((i, pair), spec.count as usize));
        }
    }
    out
}

fn pairs(g: &GraphCfg, p: Pattern, seed: u64, table: usize) -> Vec<Option<(u32, u32)>> {
    let hosts = g.hosts();
    match p {
        Pattern::Pair(s, d) => vec![Some((s, d))],
        Pattern::Incast(d) => hosts.iter().filter(|&&h| h != d).map(|&h| Some((h, d))).collect(),
        Pattern::Permutation => {
            // Sattolo's shuffle: a uniformly random single cycle, so no host sends to itself.
            let mut to = hosts.clone();
            let mut rng = SimRng::new(seed, Stream::FlowStart, PERMUTATION_STREAM + table as u64);
            for i in (1..to.len()).rev() {
                let j = rng.range_u64(0, i as u64 - 1) as usize;
                to.swap(i, j);
            }
            hosts.iter().zip(&to).map(|(&s, &d)| Some((s, d))).collect()
        }
        Pattern::ParkingLot => {
            let k = g.report.len();
            let node = |n: String| g.node(&n).expect("parking-lot host");
            (0..=k).map(|i| Some((node(format!("src{i}")), node(format!("dst{i}"))))).collect()
        }
    }
}

/// The one-way links of the graph in the world's order (`g.order`; by default link i's a→b
/// is 2i, its b→a 2i + 1). `monitored`: whether a link (by name) records sojourn and backlog;
/// `horizon`: the run's length (how far a generated schedule reaches).
pub(super) fn links(
    g: &GraphCfg,
    seed: u64,
    horizon: Dur,
    monitored: impl Fn(&str) -> bool,
) -> Vec<Link> {
    let mut slots: Vec<Option<Link>> = (0..2 * g.links.len()).map(|_| None).collect();
    for (i, l) in g.links.iter().enumerate() {
        // Both directions follow one schedule, drawn from the pair's own stream.
        let sched = l.link.schedule.as_ref().map(|s| {
            s.build(SimRng::new(seed, Stream::LinkRate, SCHEDULE_STREAM | i as u64), horizon)
        });
        for back in [false, true] {
            let at = at(g, 2 * i + back as usize);
            let name = g.one_way_name((2 * i + back as usize) as u32).into_owned();
            let m = monitored(&name);
            let d = if back {
                Dir {
                    name,
                    rate: l.link.reverse_rate.as_ref().unwrap_or(&l.link.rate),
                    delay: l.link.delay,
                    loss: l.reverse_loss,
                    drops: Vec::new(),
                    queue: &l.reverse_queue,
                    monitored: m,
                    schedule: sched.clone().map(|s| {
                        let rate = l.link.reverse_rate.is_none();
                        Scheduled { sched: s, rate, lossy: false }
                    }),
                }
            } else {
                Dir {
                    name,
                    rate: &l.link.rate,
                    delay: l.link.delay,
                    loss: l.link.loss,
                    drops: l.link.drop_packets.clone(),
                    queue: &l.queue,
                    monitored: m,
                    schedule: sched.clone().map(|s| Scheduled {
                        sched: s,
                        rate: true,
                        lossy: true,
                    }),
                }
            };
            slots[at] = Some(make_link(d, seed, at as u32));
        }
    }
    slots.into_iter().map(|l| l.expect("the link order is a permutation")).collect()
}

/// Where one-way link `i` (graph order) stands in the world's link vector.
fn at(g: &GraphCfg, i: usize) -> usize {
    g.order.get(i).map_or(i, |&o| o as usize)
}

/// The one-way links whose queues the summary reports, in order: the gateway's, the
/// preset's, `[metrics] links`, then (on a graph written out, where a discipline marks the
/// links that matter) every other link with a discipline other than drop-tail. The first is
/// the summary's `bottleneck`; with none, the slowest link (a→b) is.
pub(super) fn reported(sc: &Scenario, g: &GraphCfg) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut add = |names: &mut Vec<String>, n: &str| {
        if seen.insert(n.to_string()) {
            names.push(n.to_string());
        }
    };
    g.gateway_link
        .iter()
        .chain(&g.report)
        .chain(&sc.metrics.links)
        .for_each(|n| add(&mut names, n));
    for l in g.links.iter().filter(|_| g.preset == "graph") {
        if l.queue.kind() != "droptail" {
            add(&mut names, &l.name);
        }
        if l.reverse_queue.kind() != "droptail" {
            add(&mut names, &reverse_name(&l.name));
        }
    }
    if names.is_empty() {
        let mean = |l: &crate::config::GraphLink| {
            l.link.rate.build(SimRng::new(0, Stream::LinkRate, 0)).mean_rate().0
        };
        // Not a BSS's station link: the BSS carries its packets, the wired link stands idle.
        let slowest = g.wired_links().iter().min_by_key(|l| mean(l)).expect("a graph has links");
        add(&mut names, &slowest.name);
    }
    names
}

/// A graph flow's data 5-tuple: host addresses, a port per flow.
pub(super) fn data_key(f: u32, s: u32, d: u32, spec: &FlowSpec) -> FlowKey {
    let proto = match spec.transport {
        Transport::Tcp { .. } => queue::PROTO_TCP,
        Transport::Udp(_) => queue::PROTO_UDP,
        Transport::Dccp(_) => queue::PROTO_DCCP,
    };
    FlowKey {
        src: HOST_NET | s,
        dst: HOST_NET | d,
        sport: PORT_BASE.wrapping_add(f as u16),
        dport: SERVER_PORT,
        proto,
    }
}

/// The ACK direction's 5-tuple.
pub(super) fn reversed(k: FlowKey) -> FlowKey {
    FlowKey { src: k.dst, dst: k.src, sport: k.dport, dport: k.sport, proto: k.proto }
}

/// Every flow's data route (even indices) and ACK route (odd), and its base RTT (the delays
/// of both routes).
pub(super) fn routes(
    sc: &Scenario,
    g: &GraphCfg,
    plans: &[Plan],
    seed: u64,
) -> Result<(Vec<Path>, Vec<Dur>), String> {
    let mut reqs = Vec::with_capacity(2 * plans.len());
    for (f, &(i, pair)) in plans.iter().enumerate() {
        let (s, d) = pair.expect("graph flows have hosts");
        let key = data_key(f as u32, s, d, &sc.flows[i]);
        reqs.push(Request { src: s, dst: d, key });
        reqs.push(Request { src: d, dst: s, key: reversed(key) });
    }
    let paths = graph::routes(g, seed, &reqs)?;
    let delay = |p: &Path| {
        p.links().iter().map(|l: &LinkId| g.links[l.idx() / 2].link.delay.0).sum::<u64>()
    };
    let rtts = paths.chunks(2).map(|c| Dur(delay(&c[0]) + delay(&c[1]))).collect();
    let mut paths = paths;
    if !g.order.is_empty() {
        for l in paths.iter_mut().flat_map(|p| p.links.iter_mut().take(p.len as usize)) {
            *l = LinkId(at(g, l.idx()) as u32);
        }
    }
    Ok((paths, rtts))
}

/// One direction of a link as the build sees it.
pub(super) struct Dir<'a> {
    pub(super) name: String,
    pub(super) rate: &'a RateSpec,
    pub(super) delay: Dur,
    pub(super) loss: f64,
    pub(super) drops: Vec<u64>,
    pub(super) queue: &'a QueueCfg,
    pub(super) monitored: bool,
    pub(super) schedule: Option<Scheduled>,
}

/// A direction of a schedule-driven link: the schedule, whether its rates serve this
/// direction (not where `reverse_rate` gives the way back its own) and its loss.
pub(super) struct Scheduled {
    pub(super) sched: Arc<Schedule>,
    pub(super) rate: bool,
    pub(super) lossy: bool,
}

/// Schedules draw from the link-rate stream at indices apart from the links' own.
const SCHEDULE_STREAM: u64 = 1 << 40;

/// A one-way link; `id` (its index) keys its random streams.
pub(super) fn make_link(d: Dir, seed: u64, id: u32) -> Link {
    let rate = match &d.schedule {
        Some(s) if s.rate && s.sched.sets_rate() => {
            RateModel::Schedule(Box::new(ScheduleRate::new(s.sched.clone())))
        }
        _ => d.rate.build(SimRng::new(seed, Stream::LinkRate, id as u64)),
    };
    let queue =
        queue::build(d.queue, SimRng::new(seed, Stream::Queue, id as u64), rate.mean_rate());
    Link::new(LinkSpec {
        name: d.name,
        rate,
        delay: d.delay,
        queue,
        loss: d.loss,
        drop_list: d.drops,
        loss_rng: SimRng::new(seed, Stream::LinkLoss, id as u64),
        monitored: d.monitored,
        path: d.schedule.map(|s| PathSchedule::new(s.sched, s.lossy)),
    })
}
