//! Building the topology: the links (dumbbell or cellular), each flow's routes, 5-tuples,
//! endpoints and start time. The world is plain vectors; this fills them.

use super::{Endpoint, FlowRt, World, WebRt, Counters};
use crate::cc;
use super::graph;
use crate::config::{Direction, LinkCfg, QueueCfg, RateSpec, Scenario, StartSpec, TopologyKind, Transport};
use crate::engine::{Event, EventQueue, SimRng, Stream};
use crate::gateway;
use crate::ids::{FlowId, LinkId, RouteId, SockId};
use crate::metrics::Series;
use crate::net::link::LinkSpec;
use crate::net::pcap::PcapWriter;
use crate::net::{Link, PacketPool, Route};
use crate::queue::{self, FlowKey};
use crate::tcp::TcpSocket;
use crate::udp::UdpEndpoint;
use crate::dccp::DccpEndpoint;
use crate::units::{Dur, SimTime};

/// The addresses and ports of the simulated hosts (only flow-aware queues look at them):
/// senders 10.0.x.x (one per `host` name, else one per flow), receivers 10.1.x.x (one per flow).
const SENDER_NET: u32 = 0x0a00_0000;
const RECEIVER_NET: u32 = 0x0a01_0000;
const SENDER_PORT_BASE: u16 = 10_000;
const RECEIVER_PORT: u16 = 5001;

/// A route's 5-tuple and DSCP, fixed per flow and direction.
#[derive(Debug, Clone, Copy)]
pub(super) struct RouteKey {
    pub(super) key: FlowKey,
    pub(super) dscp: u8,
    /// The route carries the flow's data (the sender's port is the source port).
    pub(super) sender_is_src: bool,
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
}

/// A one-way link; `id` (its index) keys its random streams.
pub(super) fn make_link(d: Dir, seed: u64, id: u32) -> Link {
    let rate = d.rate.build(SimRng::new(seed, Stream::LinkRate, id as u64));
    let queue = queue::build(d.queue, SimRng::new(seed, Stream::Queue, id as u64), rate.mean_rate());
    Link::new(LinkSpec {
        name: d.name,
        rate,
        delay: d.delay,
        queue,
        loss: d.loss,
        drop_list: d.drops,
        loss_rng: SimRng::new(seed, Stream::LinkLoss, id as u64),
        monitored: d.monitored,
        // Grows by use (an access link of a many-flow run carries a few packets at a time).
        pipe_room: 0,
    })
}

fn new_link(name: String, cfg: &LinkCfg, lossy: bool, q: &QueueCfg, seed: u64, id: u32, monitored: bool) -> Link {
    // The reverse member of a link pair (not lossy: the ACK direction) may have its own rate.
    let rate = if lossy { &cfg.rate } else { cfg.reverse_rate.as_ref().unwrap_or(&cfg.rate) };
    let (loss, drops) = if lossy { (cfg.loss, cfg.drop_packets.clone()) } else { (0.0, Vec::new()) };
    make_link(Dir { name, rate, delay: cfg.delay, loss, drops, queue: q, monitored }, seed, id)
}

impl World {
    /// The world of scenario `sc` run with `seed`; pcap files of the scenario's `capture`
    /// links go to `capture_dir` (none: no capture); `series`: keep sampled time series.
    pub fn new(sc: &Scenario, seed: u64, capture_dir: Option<&std::path::Path>, series: bool) -> Result<World, String> {
        let t = &sc.topology;
        let plans = graph::plans(sc, seed);
        // A graph: its links, the reported ones, and every flow's routes, found up front.
        let reported_names = t.graph.as_ref().map_or_else(|| sc.metrics.links.clone(), |g| graph::reported(sc, g));
        let (mut links, graph_routes) = match &t.graph {
            Some(g) => {
                let monitored: std::collections::HashSet<&str> = reported_names.iter().map(String::as_str).collect();
                (graph::links(g, seed, |n| monitored.contains(n)), Some(graph::routes(sc, g, &plans, seed)?))
            }
            None => (Vec::new(), None),
        };
        let graph_bn = t.graph.as_ref().map(|_| LinkId(links.iter().position(|l| l.name == reported_names[0]).expect("reported links exist") as u32));
        // Random and listed losses apply in the data direction only.
        let mut add = |name: String, cfg: &LinkCfg, lossy: bool, q: &QueueCfg, monitored| {
            let id = links.len() as u32;
            links.push(new_link(name, cfg, lossy, q, seed, id, monitored));
            LinkId(id)
        };
        let cellular = t.kind == TopologyKind::Cellular;
        // Dumbbell: the shared bottleneck pair. Cellular: the core pair, then a radio pair per
        // UE (the first UE's radio link is "the bottleneck" of the summary). A graph: the first
        // reported link and its other direction.
        let (bn, bn_rev, core, ue_links) = if let Some(bn) = graph_bn {
            (bn, LinkId(bn.0 ^ 1), None, Vec::new())
        } else if cellular {
            let core_down = add("core_down".into(), &t.access, true, &t.access_queue, false);
            let core_up = add("core_up".into(), &t.access, false, &t.access_queue, false);
            let ue_links: Vec<(LinkId, LinkId)> = (0..t.ues)
                .map(|u| {
                    let d = add(format!("ue{u}_down"), &t.bottleneck, true, &t.bottleneck_queue, true);
                    let up = add(format!("ue{u}_up"), &t.bottleneck, false, &t.reverse_queue, true);
                    (d, up)
                })
                .collect();
            (ue_links[0].0, ue_links[0].1, Some((core_down, core_up)), ue_links)
        } else {
            let bn = add("bottleneck".into(), &t.bottleneck, true, &t.bottleneck_queue, true);
            let bn_rev = add("bottleneck_rev".into(), &t.bottleneck, false, &t.reverse_queue, true);
            (bn, bn_rev, None, Vec::new())
        };

        let mut routes = Vec::new();
        let mut eps: Vec<Endpoint> = Vec::new();
        let mut flows = Vec::new();
        let mut events = EventQueue::new();
        let mut route_keys = Vec::new();
        let mut sender_hosts: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        for &(spec_i, pair) in &plans {
            {
                let spec = &sc.flows[spec_i];
                let f = flows.len() as u32;
                let base_rtt = match &graph_routes {
                    Some((_, rtts)) => rtts[f as usize],
                    None => sc.base_rtt(spec),
                };
                let client = SockId(eps.len() as u32);
                let server = SockId(client.0 + 1);
                let fwd = RouteId(routes.len() as u32);
                let rev = RouteId(fwd.0 + 1);
                let reverse = spec.direction == Direction::Reverse;
                let last_hop = if let Some((paths, _)) = &graph_routes {
                    let (data, ack) = (&paths[2 * f as usize], &paths[2 * f as usize + 1]);
                    routes.push(Route::new(data.links(), server, true));
                    routes.push(Route::new(ack.links(), client, false));
                    data.links()[data.len as usize - 1]
                } else if let Some((core_down, core_up)) = core {
                    let (down, up) = ue_links[spec.ue.unwrap_or(f % t.ues) as usize];
                    if reverse {
                        // An upload: the UE sends over its radio uplink and the core.
                        routes.push(Route::new(&[up, core_up], server, true));
                        routes.push(Route::new(&[core_down, down], client, false));
                        core_up
                    } else {
                        routes.push(Route::new(&[core_down, down], server, true));
                        routes.push(Route::new(&[up, core_up], client, false));
                        down
                    }
                } else {
                    let access_delay = match spec.rtt {
                        Some(r) => Dur((r.0 / 2 - t.bottleneck.delay.0) / 2),
                        None => t.access.delay,
                    };
                    let acc = LinkCfg { delay: access_delay, ..t.access.clone() };
                    let up = add(format!("f{f}_src_up"), &acc, true, &t.access_queue, false);
                    let down = add(format!("f{f}_dst_down"), &acc, true, &t.access_queue, false);
                    let rup = add(format!("f{f}_dst_up"), &acc, false, &t.access_queue, false);
                    let rdown = add(format!("f{f}_src_down"), &acc, false, &t.access_queue, false);
                    if reverse {
                        // The sender sits on the right: data right to left over the reverse
                        // bottleneck, ACKs over the forward one.
                        routes.push(Route::new(&[rup, bn_rev, rdown], server, true));
                        routes.push(Route::new(&[up, bn, down], client, false));
                        rdown
                    } else {
                        routes.push(Route::new(&[up, bn, down], server, true));
                        routes.push(Route::new(&[rup, bn_rev, rdown], client, false));
                        down
                    }
                };
                // The 5-tuple the queues classify on, per route (data and ACK direction).
                let n_hosts = sender_hosts.len() as u32;
                let sender = match &spec.host {
                    Some(h) => *sender_hosts.entry(h.clone()).or_insert(n_hosts),
                    None => sender_hosts.len() as u32 + 1_000_000 + f,
                };
                let proto = match spec.transport {
                    Transport::Tcp { .. } => queue::PROTO_TCP,
                    Transport::Udp(_) => queue::PROTO_UDP,
                    Transport::Dccp(_) => queue::PROTO_DCCP,
                };
                let data_key = match pair {
                    Some((s, d)) => graph::data_key(f, s, d, spec),
                    None => FlowKey {
                        src: SENDER_NET | sender,
                        dst: RECEIVER_NET | f,
                        sport: (SENDER_PORT_BASE as u32 + f) as u16,
                        dport: RECEIVER_PORT,
                        proto,
                    },
                };
                let ack_key = graph::reversed(data_key);
                for r in &routes[routes.len() - 2..] {
                    let key = if r.forward { data_key } else { ack_key };
                    route_keys.push(RouteKey { key, dscp: spec.dscp, sender_is_src: r.forward });
                }
                let from = SimTime(sc.warmup.0);
                let mss = match &spec.transport {
                    Transport::Tcp { cc, tcp } => {
                        let ctx = |sock: SockId| cc::BuildCtx { mss: tcp.mss as u64, rng: SimRng::new(seed, Stream::Endpoint, sock.0 as u64) };
                        let mut c = TcpSocket::new(client, FlowId(f), fwd, tcp, cc::build(cc, ctx(client)));
                        let mut s = TcpSocket::new(server, FlowId(f), rev, tcp, cc::build(cc, ctx(server)));
                        c.metrics_from = from;
                        s.metrics_from = from;
                        s.listen();
                        s.set_rwnd_policy(&spec.rwnd);
                        eps.push(Endpoint::Tcp(c));
                        eps.push(Endpoint::Tcp(s));
                        tcp.mss as u64
                    }
                    Transport::Udp(u) => {
                        let mut c = UdpEndpoint::new(client, FlowId(f), fwd, *u);
                        let mut s = UdpEndpoint::new(server, FlowId(f), rev, *u);
                        c.metrics_from = from;
                        s.metrics_from = from;
                        eps.push(Endpoint::Udp(c));
                        eps.push(Endpoint::Udp(s));
                        u.payload as u64
                    }
                    Transport::Dccp(d) => {
                        let rng = |sock: SockId| SimRng::new(seed, Stream::Endpoint, sock.0 as u64);
                        let mut c = DccpEndpoint::new(client, FlowId(f), fwd, d.clone(), rng(client));
                        let mut s = DccpEndpoint::new(server, FlowId(f), rev, d.clone(), rng(server));
                        c.metrics_from = from;
                        s.metrics_from = from;
                        s.listen();
                        eps.push(Endpoint::Dccp(c));
                        eps.push(Endpoint::Dccp(s));
                        d.packet_size as u64
                    }
                };
                let start = match spec.start {
                    StartSpec::At(d) => SimTime(d.0),
                    StartSpec::Uniform(a, b) => {
                        let mut rng = SimRng::new(seed, Stream::FlowStart, f as u64);
                        SimTime(rng.range_u64(a.0, b.0))
                    }
                };
                events.schedule(start, Event::FlowStart(FlowId(f)));
                flows.push(FlowRt {
                    group: spec.group.clone(),
                    cc: spec.cc_name(),
                    transport: match spec.transport {
                        Transport::Udp(_) => "udp",
                        Transport::Dccp(_) => "dccp",
                        Transport::Tcp { .. } => "tcp",
                    },
                    client,
                    server,
                    start,
                    app: spec.app,
                    size: spec.size,
                    base_rtt,
                    mss,
                    last_hop,
                    pkts_sent: 0,
                    pkts_delivered: 0,
                    pkts_dropped: 0,
                    w_data_drops: 0,
                    snap: Counters::default(),
                    last: Counters::default(),
                    retired: Counters::default(),
                    web: WebRt::for_flow(spec, client, server, fwd, rev),
                });
            }
        }
        let n_flows = flows.len();
        let ids: std::collections::HashMap<&str, LinkId> = links.iter().enumerate().map(|(i, l)| (l.name.as_str(), LinkId(i as u32))).collect();
        let reported: Vec<LinkId> = reported_names.iter().map(|n| ids[n.as_str()]).collect();
        drop(ids);
        for &l in &reported {
            links[l.idx()].monitored = true;
        }
        let warmup = SimTime(sc.warmup.0);
        let counting = warmup == SimTime::ZERO;
        for l in links.iter_mut() {
            l.stats.counting = counting;
        }
        let mut captures: Vec<Option<PcapWriter>> = (0..links.len()).map(|_| None).collect();
        if let Some(dir) = capture_dir {
            for (i, l) in links.iter().enumerate() {
                if sc.capture.links.contains(&l.name) {
                    let path = dir.join(format!("{}.pcap", l.name));
                    let w = PcapWriter::create(&path, sc.capture.snaplen)
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    captures[i] = Some(w);
                }
            }
        }
        Ok(World {
            name: sc.name.clone(),
            seed,
            now: SimTime::ZERO,
            end: SimTime(sc.duration.0),
            warmup,
            interval: sc.metrics.interval,
            counting,
            events,
            pool: PacketPool::with_capacity(4096),
            links,
            routes,
            eps,
            flows,
            bottleneck: bn,
            bottleneck_rev: bn_rev,
            reported,
            out: Vec::with_capacity(64),
            route_keys,
            series: series.then(Series::default),
            gateway: t.gateway.as_ref().map(gateway::build),
            gw_wscale: vec![None; n_flows],
            gw_rewrites: 0,
            captures,
            capture_error: None,
        })
    }
}
