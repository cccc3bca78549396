//! Building the world from a graph (the dumbbell and the cellular tree expand into one): the
//! links, each flow's routes, 5-tuples, endpoints and start time. The world is plain vectors;
//! this fills them.

use super::graph;
use super::{Counters, Endpoint, FlowPkts, FlowRt, PageRt, RouteRt, WebRt, World};
use crate::cc;
use crate::config::{Scenario, StartSpec, Transport};
use crate::dccp::DccpEndpoint;
use crate::engine::{Actors, Event, EventQueue, SimRng, Stream};
use crate::gateway;
use crate::ids::{FlowId, LinkId, RouteId, SockId};
use crate::metrics::Series;
use crate::net::pcap::PcapWriter;
use crate::net::{PacketPool, Route};
use crate::queue::{self, FlowKey};
use crate::tcp::TcpSocket;
use crate::udp::{video, UdpEndpoint};
use crate::units::{Dur, SimTime};

/// Event lanes: the arrivals of this many lead times (a link's delay, or its delay plus a
/// folded transmission's serialization) at once, the others in the heap (see `EventQueue`).
const MAX_LANES: usize = 8;

#[cfg(test)]
thread_local! {
    /// Tests run the same scenario with fewer lanes (the order of events must not change).
    static MAX_LANES_FOR_TEST: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

fn max_lanes() -> usize {
    #[cfg(test)]
    if let Some(n) = MAX_LANES_FOR_TEST.with(|c| c.get()) {
        return n;
    }
    MAX_LANES
}

/// The addresses and ports of the simulated hosts (only flow-aware queues look at them):
/// senders 10.0.x.x (one per `host` name, else one per flow), receivers 10.1.x.x (one per flow).
const SENDER_NET: u32 = 0x0a00_0000;
const RECEIVER_NET: u32 = 0x0a01_0000;
const SENDER_PORT_BASE: u16 = 10_000;
const RECEIVER_PORT: u16 = 5001;

/// The Wi-Fi BSS's random streams (MAC draws, its qdisc), above any link's index.
const WIFI_STREAM: u64 = 1 << 40;

/// A route's 5-tuple and DSCP, fixed per flow and direction.
#[derive(Debug, Clone, Copy)]
pub(super) struct RouteKey {
    pub(super) key: FlowKey,
    pub(super) dscp: u8,
}

impl World {
    /// The world of scenario `sc` run with `seed`; pcap files of the scenario's `capture`
    /// links go to `capture_dir` (none: no capture); `series`: keep sampled time series.
    pub fn new(
        sc: &Scenario,
        seed: u64,
        capture_dir: Option<&std::path::Path>,
        series: bool,
    ) -> Result<World, String> {
        let t = &sc.topology;
        // Every topology is a graph: the dumbbell and the cellular tree are expanded here
        // (config/topology/classic.rs), keeping their link order, names and addresses.
        let classic = t.graph.is_none().then(|| crate::config::expand_classic(sc));
        let g = match (&t.graph, &classic) {
            (Some(g), _) => g.as_ref(),
            (None, Some(c)) => &c.graph,
            (None, None) => unreachable!("a topology without a graph is expanded"),
        };
        let plans = match &classic {
            Some(c) => graph::classic_plans(sc, &c.pairs),
            None => graph::plans(sc, seed),
        };
        // The reported links: on a graph its own choice, on the classic topologies the ones
        // `[metrics] links` names; the summary's bottleneck comes first or is the classic one.
        let reported_names =
            if classic.is_some() { sc.metrics.links.clone() } else { graph::reported(sc, g) };
        let (mut links, graph_routes) = {
            let mut monitored: std::collections::HashSet<&str> =
                reported_names.iter().map(String::as_str).collect();
            monitored.extend(classic.iter().flat_map(|c| c.monitored.iter().map(String::as_str)));
            (
                graph::links(g, seed, sc.duration, |n| monitored.contains(n)),
                graph::routes(sc, g, &plans, seed)?,
            )
        };
        let bn_name = classic.as_ref().map_or_else(|| reported_names[0].as_str(), |c| c.bottleneck);
        let bn = LinkId(
            links.iter().position(|l| l.name == bn_name).expect("the bottleneck exists") as u32,
        );
        let bn_rev = LinkId(bn.0 ^ 1);

        // Two routes and two endpoints a flow, sized at once: grown by doubling, the endpoints'
        // vector (1.6 kB each) was briefly resident twice, old and new, at its last growth.
        let mut routes = Vec::with_capacity(2 * plans.len());
        let mut eps: Vec<Endpoint> = Vec::with_capacity(2 * plans.len());
        let mut flows = Vec::with_capacity(plans.len());
        let mut events = EventQueue::with_lanes(max_lanes());
        let mut sender_hosts: std::collections::HashMap<String, u32> =
            std::collections::HashMap::new();
        let mut starts = Vec::with_capacity(plans.len());
        // The flows' TCP configurations, shared by flows configured alike (TcpSocket::cfg;
        // consecutive flows of a `count` are alike, so the last few are searched).
        let mut tcp_cfgs: Vec<std::sync::Arc<crate::tcp::TcpCfg>> = Vec::new();
        for &(spec_i, pair) in &plans {
            {
                let spec = &sc.flows[spec_i];
                let f = flows.len() as u32;
                // The classic topologies keep the configured RTT (a flow's own `rtt` is not
                // always a multiple of 4 ns, its access delays are rounded down).
                let base_rtt =
                    if classic.is_some() { sc.base_rtt(spec) } else { graph_routes.1[f as usize] };
                let client = SockId(eps.len() as u32);
                let server = SockId(client.0 + 1);
                let fwd = RouteId(routes.len() as u32);
                let rev = RouteId(fwd.0 + 1);
                let (data, ack) =
                    (&graph_routes.0[2 * f as usize], &graph_routes.0[2 * f as usize + 1]);
                let last_hop = data.links()[data.len as usize - 1];
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
                    Some((s, d)) if classic.is_none() => graph::data_key(f, s, d, spec),
                    _ => FlowKey {
                        src: SENDER_NET | sender,
                        dst: RECEIVER_NET | f,
                        sport: (SENDER_PORT_BASE as u32 + f) as u16,
                        dport: RECEIVER_PORT,
                        proto,
                    },
                };
                let ack_key = graph::reversed(data_key);
                routes.push(RouteRt {
                    path: Route::new(data.links(), server, true),
                    key: RouteKey { key: data_key, dscp: spec.dscp },
                });
                routes.push(RouteRt {
                    path: Route::new(ack.links(), client, false),
                    key: RouteKey { key: ack_key, dscp: spec.dscp },
                });
                let from = SimTime(sc.warmup.0);
                let mss = match &spec.transport {
                    Transport::Tcp { cc, tcp } => {
                        let ctx = |sock: SockId| cc::BuildCtx {
                            mss: tcp.mss as u64,
                            rng: SimRng::new(seed, Stream::Endpoint, sock.0 as u64),
                            hz: tcp.hz,
                        };
                        let shared = match tcp_cfgs.iter().rev().take(8).find(|c| ***c == *tcp) {
                            Some(c) => c,
                            None => {
                                tcp_cfgs.push(std::sync::Arc::new(tcp.clone()));
                                tcp_cfgs.last().unwrap()
                            }
                        };
                        let sock = |id: SockId, route: RouteId| {
                            let cc = cc::build(cc, ctx(id));
                            let mut t = TcpSocket::new(id, FlowId(f), route, shared, cc);
                            t.metrics_from = from;
                            t
                        };
                        let c = sock(client, fwd);
                        let mut s = sock(server, rev);
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
                        if let Some(v) = u.video {
                            let (a, b) = video::pair(v, (client, fwd), (server, rev), FlowId(f));
                            (c.video, s.video) =
                                (Some(a.measured_from(from)), Some(b.measured_from(from)));
                        }
                        eps.push(Endpoint::Udp(c));
                        eps.push(Endpoint::Udp(s));
                        u.payload as u64
                    }
                    Transport::Dccp(d) => {
                        let rng = |sock: SockId| SimRng::new(seed, Stream::Endpoint, sock.0 as u64);
                        let mut c =
                            DccpEndpoint::new(client, FlowId(f), fwd, d.clone(), rng(client));
                        let mut s =
                            DccpEndpoint::new(server, FlowId(f), rev, d.clone(), rng(server));
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
                starts.push(start);
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
                    snap: Counters::default(),
                    last: Counters::default(),
                    retired: Counters::default(),
                    web: WebRt::for_flow(spec, client, server, fwd, rev),
                    page: PageRt::for_flow(spec, client, server),
                });
            }
        }
        super::page::add_connections(&mut flows, &mut routes, &mut eps, seed);
        // A graph that may be split over threads keys simultaneous events by actor
        // (engine/queue.rs), whatever the thread count: the dumbbell, the cellular tree and
        // the Wi-Fi BSS always run on one and keep the plain scheduling order.
        if classic.is_none() && g.wifi.is_none() {
            events.name_actors(Actors::new(links.len(), eps.len(), flows.len()));
        }
        for (f, &start) in starts.iter().enumerate() {
            events.schedule(start, Event::FlowStart(FlowId(f as u32)));
        }
        let n_flows = flows.len();
        let ids: std::collections::HashMap<&str, LinkId> =
            links.iter().enumerate().map(|(i, l)| (l.name.as_str(), LinkId(i as u32))).collect();
        let reported: Vec<LinkId> = reported_names.iter().map(|n| ids[n.as_str()]).collect();
        drop(ids);
        for &l in &reported {
            links[l.idx()].monitor();
        }
        // Links with a propagation delay do a transmission's end at its start (net/link:
        // folding).
        for l in links.iter_mut().filter(|l| l.delay > Dur::ZERO) {
            l.fold_ends();
        }
        let warmup = SimTime(sc.warmup.0);
        let counting = warmup == SimTime::ZERO;
        for l in links.iter_mut() {
            l.stats.counting = counting && l.monitored();
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
        if captures.iter().all(Option::is_none) {
            // No slot per link to read on every hop when nothing is captured.
            captures = Vec::new();
        }
        let ahead = super::lookahead::Lookahead::new(links.len(), &routes);
        let rpm = sc.rpm.as_ref().map(|c| super::rpm::RpmRt::new(c, flows.len(), &mut events));
        // A BSS's station links (the preset's or a graph's) stand last: the world hands
        // packets routed over them to the BSS.
        let (wifi, wifi_from) = match &g.wifi {
            Some(w) => {
                let from = 2 * g.wired_links().len() as u32;
                debug_assert!(g.order.is_empty() && links.len() == 2 * g.links.len());
                let rng = |i| SimRng::new(seed, Stream::LinkLoss, WIFI_STREAM + i);
                let mut bss = crate::net::wifi::Bss::new((**w).clone(), rng(0), rng(1));
                if counting {
                    bss.start_window(SimTime::ZERO); // no warm-up: measure from the start
                }
                (Some(Box::new(super::wifi::WifiRt::new(bss))), from)
            }
            None => (None, u32::MAX),
        };
        Ok(World {
            ahead,
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
            pkts: vec![FlowPkts::default(); flows.len()],
            any_web: flows.iter().any(|f| f.web.is_some()),
            any_page: flows.iter().any(|f| f.page.is_some()),
            flows,
            bottleneck: bn,
            bottleneck_rev: bn_rev,
            reported,
            out: Vec::with_capacity(64),
            series: series.then(Series::default),
            gateway: t.gateway.as_ref().map(gateway::build),
            gw_wscale: vec![None; n_flows],
            gw_rewrites: 0,
            captures,
            capture_error: None,
            rpm,
            wifi,
            wifi_from,
            part: None,
            events_extra: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::MAX_LANES_FOR_TEST;
    use crate::{run_toml, RunOptions};

    /// Twelve flows of twelve base RTTs: more distinct delays than lanes. Whether a link's
    /// arrivals go to a lane or to the heap, the run is the same event for event.
    #[test]
    fn arrivals_in_lanes_or_in_the_heap_give_the_same_run() {
        let mut toml = String::from(
            "name = \"lanes\"\nduration = \"2s\"\nseed = 4\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = { rate = \"50Mbps\", delay = \"5ms\" }\n\
             bottleneck_queue = { kind = \"droptail\", limit = \"200KB\" }\n\
             access = { rate = \"1Gbps\", delay = \"2.5ms\" }\n[tcp]\nrecovery = \"sack\"\n",
        );
        for i in 0..12 {
            toml += &format!(
                "[[flows]]\ntransport = \"tcp\"\ncc = \"cubic\"\nrtt = \"{}ms\"\n",
                20 + 3 * i
            );
        }
        let run = |lanes: Option<usize>| {
            MAX_LANES_FOR_TEST.with(|c| c.set(lanes));
            let v = summary(&toml);
            MAX_LANES_FOR_TEST.with(|c| c.set(None));
            v
        };
        let all_lanes = run(None);
        assert!(all_lanes["engine"]["events"].as_u64().unwrap() > 50_000);
        assert_eq!(all_lanes, run(Some(0)), "no lanes: every arrival in the heap");
        assert_eq!(all_lanes, run(Some(3)), "three lanes, the other delays in the heap");
    }

    /// A run's summary without its wall-clock fields.
    fn summary(toml: &str) -> serde_json::Value {
        let out = run_toml(toml, &RunOptions::default()).expect("runs");
        let mut v: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
        let e = v["engine"].as_object_mut().unwrap();
        for k in ["wall_s", "setup_s", "packets_per_wall_s"] {
            e.remove(k);
        }
        v
    }

    /// TCP skips the ACK processing of a segment that acknowledges nothing while nothing is
    /// outstanding (`acks_nothing`) and the send loop's scan when there is nothing to send
    /// (`nothing_to_send`) — every segment a receiver gets: runs with the shortcuts and
    /// with every segment processed in full are the same, summary for summary — random loss
    /// with and without SACK, SACK recovery behind a full buffer, and web connections whose requests
    /// and responses make both ends send data (each quiet in turn) over a lossy path.
    #[test]
    fn a_quiet_sockets_shortcuts_change_no_run() {
        let web = "name = \"web\"\nduration = \"8s\"\nseed = 3\n[topology]\nkind = \"dumbbell\"\n\
                   bottleneck = { rate = \"10Mbps\", delay = \"10ms\", loss = 0.02 }\n\
                   bottleneck_queue = { kind = \"droptail\", limit = \"60p\" }\n\
                   access = { rate = \"1Gbps\", delay = \"5ms\" }\n[tcp]\nrecovery = \"sack\"\n\
                   [[flows]]\ncc = \"cubic\"\napp = \"web\"\nsize = \"60000B\"\nrequest = \"20000B\"\n\
                   think = \"50ms\"\nrequests = 40\ncount = 3\n\
                   [[flows]]\ncc = \"reno\"\nsize = \"unlimited\"\n";
        let scenarios = [
            include_str!("../../../../scenarios/random-loss.toml")
                .replace("duration = \"60s\"", "duration = \"10s\""),
            include_str!("../../../../scenarios/random-loss.toml")
                .replace("duration = \"60s\"", "duration = \"10s\"")
                .replace("mss = \"1448B\"", "mss = \"1448B\"\nrecovery = \"newreno\""),
            include_str!("../../../../scenarios/file-transfers.toml")
                .replace("duration = \"30s\"", "duration = \"8s\""),
            web.to_string(),
            // BBR reads the rate samples that a quiet end's app-limited mark shapes, and paces.
            web.replace("cc = \"cubic\"", "cc = \"bbr\""),
        ];
        for toml in &scenarios {
            crate::tcp::NO_SHORTCUTS.with(|c| c.set(true));
            let full = summary(toml);
            crate::tcp::NO_SHORTCUTS.with(|c| c.set(false));
            let quick = summary(toml);
            assert!(quick["engine"]["events"].as_u64().unwrap() > 10_000);
            assert_eq!(quick, full, "{}", &toml[..60]);
        }
    }
}
