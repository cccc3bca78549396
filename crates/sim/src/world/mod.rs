//! The world: every node, link, endpoint and flow of one run in plain vectors addressed by
//! typed ids, and the event loop that drives them.

use crate::api::{RunError, RunOptions, RunOutput};
use crate::app;
use crate::cc;
use crate::config::{AppKind, Direction, LinkCfg, QueueCfg, Scenario, StartSpec, TopologyKind, Transport};
use crate::engine::{Event, EventQueue, SimRng, Stream};
use crate::gateway::{self, AckRewriter, QueueView};
use crate::ids::{FlowId, LinkId, PacketId, RouteId, SockId};
use crate::metrics::{measure, DelayMeasure, EngineMeasure, FlowMeasure, RunMeasure, Series, Summary};
use crate::net::pcap::PcapWriter;
use crate::net::link::{Launch, LinkCx, LinkSpec, TxEvent, TxStart};
use crate::net::{Header, Link, PacketPool, Route, TcpFlags};
use crate::queue::{self, DropReason, FlowKey, PureAck, QEntry};
use crate::tcp::{Cx, TcpSocket};
use crate::udp::UdpEndpoint;
use crate::dccp::DccpEndpoint;
use crate::units::{Dur, SimTime};
use std::time::Instant;

mod web;

use web::WebRt;

/// A transport endpoint of any kind.
pub enum Endpoint {
    Tcp(TcpSocket),
    Udp(UdpEndpoint),
    Dccp(DccpEndpoint),
}

/// A flow's counters at one instant, whatever its transport (the summary and the time series
/// take differences of these).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counters {
    bytes_sent: u64,
    bytes_retx: u64,
    bytes_delivered: u64,
    data_pkts_sent: u64,
    rtt_sum_ns: f64,
    rtt_n: u64,
    owd_sum_ns: f64,
    owd_n: u64,
    retransmits: u64,
    timeouts: u64,
    recoveries: u64,
    /// Datagrams delivered to the receiving application (UDP, DCCP).
    datagrams: u64,
}

/// Per-flow bookkeeping kept by the world (the endpoints keep their own protocol state).
struct FlowRt {
    group: String,
    cc: &'static str,
    client: SockId,
    server: SockId,
    start: SimTime,
    app: AppKind,
    size: Option<u64>,
    base_rtt: Dur,
    mss: u64,
    /// The receiver's last-hop link (its radio link in the cellular topology).
    last_hop: LinkId,
    pkts_sent: u64,
    pkts_delivered: u64,
    pkts_dropped: u64,
    w_data_drops: u64,
    transport: &'static str,
    snap: Counters,
    last: Counters,
    /// Counters of the flow's closed connections (web flows open one per request).
    retired: Counters,
    /// The web application's state, for web flows.
    web: Option<WebRt>,
    /// The flow's data crosses `bottleneck_rev` (an upload); the gateway leaves its packets alone.
    reverse: bool,
}

pub struct World {
    name: String,
    seed: u64,
    now: SimTime,
    end: SimTime,
    warmup: SimTime,
    interval: Dur,
    counting: bool,
    events: EventQueue,
    pool: PacketPool,
    links: Vec<Link>,
    routes: Vec<Route>,
    eps: Vec<Endpoint>,
    flows: Vec<FlowRt>,
    bottleneck: LinkId,
    bottleneck_rev: LinkId,
    out: Vec<PacketId>,
    /// Per route: the 5-tuple and DSCP its packets carry.
    route_keys: Vec<RouteKey>,
    series: Option<Series>,
    /// ACK rewriter on the gateway, acting on ACKs leaving the reverse bottleneck queue.
    gateway: Option<Box<dyn AckRewriter>>,
    /// Window-scale shift of each flow's ACKs, learned from the SYN-ACK crossing the gateway.
    gw_wscale: Vec<Option<u8>>,
    /// ACK windows the gateway lowered.
    gw_rewrites: u64,
    /// pcap writers, one slot per link.
    captures: Vec<Option<PcapWriter>>,
    capture_error: Option<String>,
}

/// The addresses and ports of the simulated hosts (only flow-aware queues look at them):
/// senders 10.0.x.x (one per `host` name, else one per flow), receivers 10.1.x.x (one per flow).
const SENDER_NET: u32 = 0x0a00_0000;
const RECEIVER_NET: u32 = 0x0a01_0000;
const SENDER_PORT_BASE: u16 = 10_000;
const RECEIVER_PORT: u16 = 5001;

/// A route's 5-tuple and DSCP, fixed per flow and direction.
#[derive(Debug, Clone, Copy)]
struct RouteKey {
    key: FlowKey,
    dscp: u8,
    /// The route carries the flow's data (the sender's port is the source port).
    sender_is_src: bool,
}

fn new_link(name: String, cfg: &LinkCfg, lossy: bool, q: &QueueCfg, seed: u64, id: u32, monitored: bool) -> Link {
    // The reverse member of a link pair (not lossy: the ACK direction) may have its own rate.
    let spec = if lossy { &cfg.rate } else { cfg.reverse_rate.as_ref().unwrap_or(&cfg.rate) };
    let rate = spec.build(SimRng::new(seed, Stream::LinkRate, id as u64));
    let queue = queue::build(q, SimRng::new(seed, Stream::Queue, id as u64), rate.mean_rate());
    Link::new(LinkSpec {
        name,
        rate,
        delay: cfg.delay,
        queue,
        loss: if lossy { cfg.loss } else { 0.0 },
        drop_list: if lossy { cfg.drop_packets.clone() } else { Vec::new() },
        loss_rng: SimRng::new(seed, Stream::LinkLoss, id as u64),
        monitored,
        pipe_room: 64,
    })
}

/// A link and the hands it works with: the pool, the flows' drop counters, its capture.
/// (A macro rather than a method so that the borrows stay field by field.)
macro_rules! link_cx {
    ($w:ident, $l:expr) => {
        (
            &mut $w.links[$l.idx()],
            LinkHands {
                pool: &mut $w.pool,
                flows: &mut $w.flows,
                counting: $w.counting,
                routes: &$w.routes,
                capture: $w.captures[$l.idx()].as_mut(),
                capture_error: &mut $w.capture_error,
            },
        )
    };
}

/// What a link reaches of the world while it works.
struct LinkHands<'a> {
    pool: &'a mut PacketPool,
    flows: &'a mut [FlowRt],
    counting: bool,
    routes: &'a [Route],
    capture: Option<&'a mut PcapWriter>,
    capture_error: &'a mut Option<String>,
}

impl LinkCx for LinkHands<'_> {
    #[inline]
    fn mark_ce(&mut self, id: PacketId) {
        self.pool.get_mut(id).ecn = crate::net::Ecn::Ce;
    }

    #[inline]
    fn dropped(&mut self, id: PacketId, _reason: DropReason) {
        let p = self.pool.get(id);
        let fl = &mut self.flows[p.flow.idx()];
        fl.pkts_dropped += 1;
        if self.counting && p.payload() > 0 {
            fl.w_data_drops += 1;
        }
        self.pool.free(id);
    }

    #[inline]
    fn on_wire(&mut self, id: PacketId, now: SimTime) {
        if let Some(w) = self.capture.as_mut() {
            let p = self.pool.get(id);
            let forward = self.routes[p.route.idx()].forward;
            if let Err(e) = w.record(now, p, forward) {
                self.capture_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

impl World {
    pub fn new(sc: &Scenario, opts: &RunOptions) -> Result<World, RunError> {
        let seed = opts.seed.unwrap_or(sc.seed);
        let t = &sc.topology;
        let mut links = Vec::new();
        // Random and listed losses apply in the data direction only.
        let mut add = |name: String, cfg: &LinkCfg, lossy: bool, q: &QueueCfg, monitored| {
            let id = links.len() as u32;
            links.push(new_link(name, cfg, lossy, q, seed, id, monitored));
            LinkId(id)
        };
        let cellular = t.kind == TopologyKind::Cellular;
        // Dumbbell: the shared bottleneck pair. Cellular: the core pair, then a radio pair per
        // UE (the first UE's radio link is "the bottleneck" of the summary).
        let (bn, bn_rev, core, ue_links) = if cellular {
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
        for spec in &sc.flows {
            for _ in 0..spec.count {
                let f = flows.len() as u32;
                let base_rtt = sc.base_rtt(spec);
                let client = SockId(eps.len() as u32);
                let server = SockId(client.0 + 1);
                let fwd = RouteId(routes.len() as u32);
                let rev = RouteId(fwd.0 + 1);
                let reverse = spec.direction == Direction::Reverse;
                let last_hop = if let Some((core_down, core_up)) = core {
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
                let data_key = FlowKey {
                    src: SENDER_NET | sender,
                    dst: RECEIVER_NET | f,
                    sport: (SENDER_PORT_BASE as u32 + f) as u16,
                    dport: RECEIVER_PORT,
                    proto,
                };
                let ack_key = FlowKey { src: data_key.dst, dst: data_key.src, sport: data_key.dport, dport: data_key.sport, proto };
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
                    reverse,
                });
            }
        }
        let n_flows = flows.len();
        let warmup = SimTime(sc.warmup.0);
        let counting = warmup == SimTime::ZERO;
        for l in links.iter_mut() {
            l.stats.counting = counting;
        }
        let mut captures: Vec<Option<PcapWriter>> = (0..links.len()).map(|_| None).collect();
        if let Some(dir) = &opts.capture_dir {
            for (i, l) in links.iter().enumerate() {
                if sc.capture.links.iter().any(|n| *n == l.name) {
                    let path = dir.join(format!("{}.pcap", l.name));
                    let w = PcapWriter::create(&path, sc.capture.snaplen)
                        .map_err(|e| RunError::Internal(format!("cannot write {}: {e}", path.display())))?;
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
            out: Vec::with_capacity(64),
            route_keys,
            series: opts.series.then(Series::default),
            gateway: t.gateway.as_ref().map(gateway::build),
            gw_wscale: vec![None; n_flows],
            gw_rewrites: 0,
            captures,
            capture_error: None,
        })
    }

    pub fn run(mut self) -> Result<RunOutput, RunError> {
        let wall = Instant::now();
        if !self.counting {
            self.events.schedule(self.warmup, Event::WarmupEnd);
        }
        // Sampling events run whether or not series are kept, so the event count (and so the
        // summary) does not depend on it.
        if self.interval.0 > 0 {
            self.events.schedule(SimTime::ZERO + self.interval, Event::Sample);
        }
        while let Some(t) = self.events.peek_time() {
            if t > self.end {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.dispatch(ev);
        }
        self.now = self.end;
        for w in self.captures.iter_mut().filter_map(Option::take) {
            if let Err(e) = w.finish() {
                self.capture_error.get_or_insert_with(|| e.to_string());
            }
        }
        if let Some(e) = self.capture_error.take() {
            return Err(RunError::Internal(format!("pcap capture failed: {e}")));
        }
        self.close_windows();
        self.check_conservation()?;
        let summary = self.summary(wall.elapsed().as_secs_f64());
        let summary_json = serde_json::to_string_pretty(&summary).map_err(|e| RunError::Internal(e.to_string()))?;
        Ok(RunOutput { summary_json, tables: self.series.map(Series::into_tables).unwrap_or_default() })
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::LinkTxDone(l) => self.tx_done(l),
            Event::LinkArrive(l) => self.arrive(l),
            Event::Timer(s, k) => self.ep_call(s, |ep, cx| match ep {
                Endpoint::Tcp(t) => t.on_timer(k, cx),
                Endpoint::Udp(u) => u.on_timer(k, cx),
                Endpoint::Dccp(d) => d.on_timer(k, cx),
            }),
            Event::FlowStart(f) => self.start_flow(f),
            Event::AppNext(f) => self.web_request(f),
            Event::Sample => {
                self.sample();
                let next = self.now + self.interval;
                if next <= self.end {
                    self.events.schedule(next, Event::Sample);
                }
            }
            Event::WarmupEnd => self.start_measuring(),
        }
    }

    fn start_flow(&mut self, f: FlowId) {
        if self.flows[f.idx()].web.is_some() {
            self.web_request(f);
            return;
        }
        let fl = &self.flows[f.idx()];
        let (write, expect) = app::initial_write(fl.app, fl.size);
        let (client, server) = (fl.client, fl.server);
        match &mut self.eps[server.idx()] {
            Endpoint::Tcp(s) => s.expect = expect,
            Endpoint::Udp(s) => s.expect = expect,
            Endpoint::Dccp(_) => {}
        }
        self.ep_call(client, |ep, cx| match ep {
            Endpoint::Tcp(s) => {
                s.connect(cx);
                s.app_write(write, cx);
            }
            Endpoint::Udp(u) => u.start(write, cx),
            Endpoint::Dccp(d) => d.connect(cx),
        });
    }

    /// Runs `f` on an endpoint, then injects whatever it sent.
    #[inline]
    fn ep_call(&mut self, s: SockId, f: impl FnOnce(&mut Endpoint, &mut Cx)) {
        let mut out = std::mem::take(&mut self.out);
        {
            let channel = match &self.eps[s.idx()] {
                Endpoint::Tcp(t) if t.needs_channel() => {
                    let hop = self.flows[t.flow.idx()].last_hop;
                    Some(self.links[hop.idx()].rate.rate_at(self.now))
                }
                _ => None,
            };
            let mut cx = Cx { now: self.now, pool: &mut self.pool, events: &mut self.events, out: &mut out, channel };
            f(&mut self.eps[s.idx()], &mut cx);
        }
        for pid in out.drain(..) {
            self.inject(pid);
        }
        self.out = out;
    }

    #[inline]
    fn inject(&mut self, pid: PacketId) {
        let p = self.pool.get(pid);
        self.flows[p.flow.idx()].pkts_sent += 1;
        let first = self.routes[p.route.idx()].links[0];
        self.link_enqueue(first, pid);
    }

    /// What the queue sees of a packet: size, ECN, 5-tuple, DSCP, pure-ACK-ness.
    #[inline]
    fn qentry(&self, pid: PacketId, now: SimTime) -> QEntry {
        let p = self.pool.get(pid);
        let rk = &self.route_keys[p.route.idx()];
        let mut key = rk.key;
        // A web flow opens a new connection per request: a new port on the sender's side.
        if p.conn != 0 {
            if rk.sender_is_src {
                key.sport = key.sport.wrapping_add(p.conn);
            } else {
                key.dport = key.dport.wrapping_add(p.conn);
            }
        }
        let ack = match &p.hdr {
            Header::Tcp(h) if h.len == 0 && h.flags.has(TcpFlags::ACK) && !h.flags.has(TcpFlags::SYN | TcpFlags::FIN) => {
                let plain = h.sack.len == 0 && !h.flags.has(TcpFlags::ECE | TcpFlags::CWR);
                Some(PureAck { ack: h.ack, plain })
            }
            _ => None,
        };
        QEntry { id: pid, bytes: p.wire_bytes, enqueued_at: now, ecn: p.ecn, key, dscp: rk.dscp, ack }
    }

    #[inline]
    fn link_enqueue(&mut self, l: LinkId, pid: PacketId) {
        let now = self.now;
        let e = self.qentry(pid, now);
        let (link, mut cx) = link_cx!(self, l);
        if !link.enqueue(e, now, &mut cx) {
            return;
        }
        if l == self.bottleneck {
            if let Some(g) = self.gateway.as_mut() {
                g.on_fwd_enqueue(&QueueView { now, backlog: link.queue.backlog(), capacity_bytes: link.queue.capacity_bytes() });
            }
        }
        if link.idle() {
            self.start_tx(l);
        }
    }

    /// The gateway's view of the forward bottleneck queue.
    fn fwd_view(&self) -> QueueView {
        let q = &self.links[self.bottleneck.idx()].queue;
        QueueView { now: self.now, backlog: q.backlog(), capacity_bytes: q.capacity_bytes() }
    }

    /// A packet reaches the gateway on its way to a sender: learn window scaling from
    /// SYN-ACKs and let the rewriter lower the window of ACKs.
    fn gateway_rewrite(&mut self, pid: PacketId) {
        let view = self.fwd_view();
        let Some(g) = self.gateway.as_mut() else { return };
        let p = self.pool.get_mut(pid);
        let flow = p.flow.idx();
        let Some(h) = p.tcp_mut() else { return };
        if h.flags.has(TcpFlags::SYN) {
            self.gw_wscale[flow] = Some(h.syn_opts.wscale.unwrap_or(0));
            return;
        }
        if !h.flags.has(TcpFlags::ACK) {
            return;
        }
        let shift = self.gw_wscale[flow].unwrap_or(0) as u32;
        if let Some(field) = gateway::rewritten_field(g.as_mut(), h.window, shift, self.flows[flow].mss, &view) {
            h.window = field;
            self.gw_rewrites += 1;
        }
    }

    #[inline]
    fn start_tx(&mut self, l: LinkId) {
        let now = self.now;
        let (link, mut cx) = link_cx!(self, l);
        match link.start_tx(now, &mut cx) {
            TxStart::Started { end } => {
                if self.gateway.is_some() && l == self.bottleneck {
                    let view = self.fwd_view();
                    if let Some(g) = self.gateway.as_mut() {
                        g.on_fwd_dequeue(&view);
                    }
                }
                self.events.schedule(end, Event::LinkTxDone(l));
            }
            TxStart::Wake(t) => self.events.schedule(t, Event::LinkTxDone(l)),
            TxStart::Idle => {}
        }
    }

    #[inline]
    fn tx_done(&mut self, l: LinkId) {
        let now = self.now;
        let (link, mut cx) = link_cx!(self, l);
        match link.tx_event(now) {
            TxEvent::End => {}
            TxEvent::WakeIdle => return self.start_tx(l),
            TxEvent::Stale => return,
        }
        match link.end_tx(now, &mut cx) {
            Launch::Lost => {}
            Launch::Out(pid) => self.forward(pid),
            Launch::Propagating(Some(at)) => self.events.schedule(at, Event::LinkArrive(l)),
            Launch::Propagating(None) => {}
        }
        self.start_tx(l);
    }

    #[inline]
    fn arrive(&mut self, l: LinkId) {
        let (pid, next) = self.links[l.idx()].arrive(self.now);
        if let Some(next) = next {
            self.events.schedule(next, Event::LinkArrive(l));
        }
        self.forward(pid);
    }

    #[inline]
    fn forward(&mut self, pid: PacketId) {
        let p = self.pool.get_mut(pid);
        p.hop += 1;
        let r = &self.routes[p.route.idx()];
        // An ACK that has crossed the reverse bottleneck is at the gateway router, the one that
        // holds the forward bottleneck queue: rewrite it there, before it heads to its sender.
        if self.gateway.is_some() && r.links[p.hop as usize - 1] == self.bottleneck_rev && !self.flows[p.flow.idx()].reverse {
            self.gateway_rewrite(pid);
        }
        let p = self.pool.get(pid);
        let r = &self.routes[p.route.idx()];
        if (p.hop as usize) < r.len as usize {
            let next = r.links[p.hop as usize];
            self.link_enqueue(next, pid);
        } else {
            let dst = r.dst;
            let pkt = *p;
            self.flows[pkt.flow.idx()].pkts_delivered += 1;
            self.pool.free(pid);
            self.ep_call(dst, |ep, cx| match ep {
                Endpoint::Tcp(s) => s.on_packet(&pkt, cx),
                Endpoint::Udp(u) => u.on_packet(&pkt, cx),
                Endpoint::Dccp(d) => d.on_packet(&pkt, cx),
            });
            if self.flows[pkt.flow.idx()].web.is_some() {
                self.web_progress(pkt.flow);
            }
        }
    }

    fn start_measuring(&mut self) {
        for f in self.flows.iter_mut() {
            if let Some(w) = f.web.as_mut() {
                w.start_measuring(self.now);
            }
        }
        self.counting = true;
        let now = self.now;
        for l in self.links.iter_mut() {
            l.start_window(now);
        }
        for i in 0..self.flows.len() {
            let c = self.counters(i);
            let f = &mut self.flows[i];
            f.snap = c;
            f.w_data_drops = 0;
        }
    }

    /// A flow's counters now: sender-side from the client, delivery from the server.
    fn counters(&self, i: usize) -> Counters {
        let f = &self.flows[i];
        let now = self.endpoint_counters(i);
        if f.web.is_some() {
            now.plus(&f.retired)
        } else {
            now
        }
    }

    /// The counters of a flow's current endpoints.
    fn endpoint_counters(&self, i: usize) -> Counters {
        let f = &self.flows[i];
        match (&self.eps[f.client.idx()], &self.eps[f.server.idx()]) {
            (Endpoint::Tcp(c), Endpoint::Tcp(s)) => Counters {
                bytes_sent: c.stats.bytes_sent,
                bytes_retx: c.stats.bytes_retx,
                bytes_delivered: s.stats.bytes_delivered,
                data_pkts_sent: c.stats.data_pkts_sent,
                rtt_sum_ns: c.stats.rtt_sum_ns,
                rtt_n: c.stats.rtt_n,
                owd_sum_ns: 0.0,
                owd_n: 0,
                retransmits: c.stats.retransmits,
                timeouts: c.stats.timeouts,
                recoveries: c.stats.recoveries,
                datagrams: 0,
            },
            (Endpoint::Udp(c), Endpoint::Udp(s)) => Counters {
                bytes_sent: c.stats.bytes_sent,
                bytes_delivered: s.stats.bytes_received,
                data_pkts_sent: c.stats.pkts_sent,
                rtt_sum_ns: c.stats.rtt_sum_ns,
                rtt_n: c.stats.rtt_n,
                owd_sum_ns: s.stats.owd_sum_ns,
                owd_n: s.stats.owd_n,
                datagrams: s.stats.pkts_received,
                ..Counters::default()
            },
            (Endpoint::Dccp(c), Endpoint::Dccp(s)) => Counters {
                bytes_sent: c.stats.bytes_sent,
                bytes_delivered: s.stats.bytes_received,
                data_pkts_sent: c.stats.pkts_sent,
                rtt_sum_ns: c.stats.rtt_sum_ns,
                rtt_n: c.stats.rtt_n,
                owd_sum_ns: s.stats.owd_sum_ns,
                owd_n: s.stats.owd_n,
                timeouts: c.stats.timeouts,
                recoveries: c.stats.reductions,
                datagrams: s.stats.pkts_received,
                ..Counters::default()
            },
            _ => unreachable!("both ends of a flow use the same transport"),
        }
    }

    fn sample(&mut self) {
        let Some(mut series) = self.series.take() else { return };
        let t = self.now.secs_f64();
        let secs = self.interval.secs_f64();
        for i in 0..self.flows.len() {
            let now_c = self.counters(i);
            let f = &mut self.flows[i];
            series.f_t.push(t);
            series.f_flow.push(i as i64);
            series.f_throughput.push((now_c.bytes_sent - f.last.bytes_sent) as f64 * 8.0 / secs / 1e6);
            series.f_goodput.push((now_c.bytes_delivered - f.last.bytes_delivered) as f64 * 8.0 / secs / 1e6);
            f.last = now_c;
            match &mut self.eps[f.client.idx()] {
                Endpoint::Tcp(c) => {
                    series.f_cwnd.push(c.win.cwnd as i64);
                    series.f_ssthresh.push(if c.win.ssthresh >= i64::MAX as u64 { -1 } else { c.win.ssthresh as i64 });
                    series.f_inflight.push(c.in_flight() as i64);
                    series.f_rwnd.push(c.snd_wnd() as i64);
                    series.f_srtt_ms.push(c.rtt.srtt().map_or(f64::NAN, |d| d.millis_f64()));
                    series.f_rtt_ms.push(c.rtt.latest().map_or(f64::NAN, |d| d.millis_f64()));
                    series.f_pacing.push(c.pacing_rate().map_or(0.0, |r| r.mbps_f64()));
                    series.f_ca_state.push(c.ca.label().to_string());
                    series.f_cc_state.push(c.cc_state().to_string());
                }
                Endpoint::Udp(u) => {
                    for col in [&mut series.f_cwnd, &mut series.f_ssthresh, &mut series.f_inflight, &mut series.f_rwnd] {
                        col.push(0);
                    }
                    // Probes: the latest round trip, and the mean of this interval's (NaN
                    // without an echo; always NaN for one-way applications).
                    series.f_srtt_ms.push(u.latest_rtt.map_or(f64::NAN, |d| d.millis_f64()));
                    series.f_rtt_ms.push(if u.interval_rtt_n > 0 { u.interval_rtt_sum_ns as f64 / u.interval_rtt_n as f64 / 1e6 } else { f64::NAN });
                    series.f_pacing.push(0.0);
                    series.f_ca_state.push(String::new());
                    series.f_cc_state.push(u.app_name().to_string());
                    u.interval_rtt_sum_ns = 0;
                    u.interval_rtt_n = 0;
                }
                Endpoint::Dccp(c) => {
                    // Windows in packets, reported in bytes of full data packets.
                    let w = c.data_wire_bytes();
                    series.f_cwnd.push(c.w.cwnd as i64);
                    series.f_ssthresh.push(if c.w.ssthresh / w < u32::MAX as u64 { c.w.ssthresh as i64 } else { -1 });
                    series.f_inflight.push((c.pipe * w) as i64);
                    series.f_rwnd.push(0);
                    series.f_srtt_ms.push(c.srtt().map_or(f64::NAN, |d| d.millis_f64()));
                    series.f_rtt_ms.push(c.latest_rtt.map_or(f64::NAN, |d| d.millis_f64()));
                    series.f_pacing.push(c.cc.pacing_bytes_per_sec().map_or(0.0, |r| r * 8.0 / 1e6));
                    series.f_ca_state.push(String::new());
                    series.f_cc_state.push(c.cc.state_label(&c.w).to_string());
                }
            }
        }
        for l in [self.bottleneck, self.bottleneck_rev] {
            let link = &mut self.links[l.idx()];
            let b = link.queue.backlog();
            series.q_t.push(t);
            series.q_link.push(link.name.clone());
            series.q_bytes.push(b.bytes as i64);
            series.q_pkts.push(b.pkts as i64);
            series.q_drops.push(link.stats.queue_drops() as i64);
            let (sojourn_ms, tx_bytes) = link.stats.take_interval();
            series.q_sojourn_ms.push(sojourn_ms);
            series.q_tx_mbps.push(tx_bytes as f64 * 8.0 / secs / 1e6);
            series.q_aqm_state.push(link.queue.internal_state());
            series.q_capacity_mbps.push(link.rate.rate_at(self.now).mbps_f64());
            let gw = match self.gateway.as_ref() {
                Some(g) if l == self.bottleneck => g.internal_state(),
                _ => f64::NAN,
            };
            series.q_gateway_state.push(gw);
        }
        self.series = Some(series);
    }

    /// Closes the time integrals at the end of the run.
    fn close_windows(&mut self) {
        let now = self.now;
        for l in self.links.iter_mut() {
            l.close_window(now);
        }
    }

    /// Every packet ever sent is delivered, dropped (and counted where) or still in the
    /// network: per flow, per link, and for the pool as a whole.
    fn check_conservation(&self) -> Result<(), RunError> {
        let mut live = vec![0u64; self.flows.len()];
        self.pool.for_each_live(|p| live[p.flow.idx()] += 1);
        for (i, f) in self.flows.iter().enumerate() {
            if f.pkts_sent != f.pkts_delivered + f.pkts_dropped + live[i] {
                return Err(RunError::Internal(format!(
                    "conservation violated for flow {i}: sent {} != delivered {} + dropped {} + in flight {}",
                    f.pkts_sent, f.pkts_delivered, f.pkts_dropped, live[i]
                )));
            }
        }
        let mut in_links = 0u64;
        for l in &self.links {
            l.check_conservation().map_err(RunError::Internal)?;
            in_links += l.inside();
        }
        if in_links != self.pool.live() as u64 {
            return Err(RunError::Internal(format!(
                "conservation violated: {} packets alive in the pool but {} inside links",
                self.pool.live(),
                in_links
            )));
        }
        for ep in &self.eps {
            if let Endpoint::Tcp(s) = ep {
                if !s.check_invariants() {
                    return Err(RunError::Internal(format!("TCP scoreboard inconsistent at endpoint {}", s.id.0)));
                }
            }
        }
        Ok(())
    }

    fn summary(&self, wall_s: f64) -> Summary {
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let (done, rtt_p95, owd_p95, jitter) = match (&self.eps[f.client.idx()], &self.eps[f.server.idx()]) {
                (Endpoint::Tcp(c), Endpoint::Tcp(_)) if f.web.is_some() => {
                    // A web flow never "ends": its RTTs span all its connections.
                    let mut h = f.web.as_ref().unwrap().rtt_hist.clone();
                    let _ = h.add(&c.rtt_hist);
                    (None, h.value_at_quantile(0.95), 0, None)
                }
                (Endpoint::Tcp(c), Endpoint::Tcp(s)) => (s.completed_at, c.rtt_hist.value_at_quantile(0.95), 0, None),
                (Endpoint::Udp(c), Endpoint::Udp(s)) => (
                    s.completed_at,
                    c.rtt_hist.value_at_quantile(0.95),
                    s.owd_hist.value_at_quantile(0.95),
                    (s.stats.owd_n > 0).then(|| s.jitter.jitter_ns / 1e6),
                ),
                (Endpoint::Dccp(c), Endpoint::Dccp(s)) => (None, c.rtt_hist.value_at_quantile(0.95), s.owd_hist.value_at_quantile(0.95), None),
                _ => unreachable!("both ends of a flow use the same transport"),
            };
            let now_c = self.counters(i);
            let w = |a: u64, b: u64| a - b;
            let from = f.start.max(self.warmup);
            let to = done.unwrap_or(self.end).min(self.end);
            let delays = |n: u64, sum: f64, p95: u64| DelayMeasure { n, sum_ns: sum, p95_ns: p95 };
            flows.push(FlowMeasure {
                id: i as u32,
                group: f.group.clone(),
                transport: f.transport.to_string(),
                cc: f.cc.to_string(),
                start_s: f.start.secs_f64(),
                end_s: done.map(|t| t.secs_f64()),
                fct_s: done.map(|t| t.since(f.start).secs_f64()),
                active_s: if to > from { to.since(from).secs_f64() } else { 0.0 },
                bytes_sent: w(now_c.bytes_sent, f.snap.bytes_sent),
                bytes_retrans: w(now_c.bytes_retx, f.snap.bytes_retx),
                bytes_delivered: w(now_c.bytes_delivered, f.snap.bytes_delivered),
                data_pkts: w(now_c.data_pkts_sent, f.snap.data_pkts_sent),
                data_drops: f.w_data_drops,
                rtt: delays(w(now_c.rtt_n, f.snap.rtt_n), now_c.rtt_sum_ns - f.snap.rtt_sum_ns, rtt_p95),
                owd: delays(w(now_c.owd_n, f.snap.owd_n), now_c.owd_sum_ns - f.snap.owd_sum_ns, owd_p95),
                base_rtt_ms: f.base_rtt.millis_f64(),
                retransmits: w(now_c.retransmits, f.snap.retransmits),
                timeouts: w(now_c.timeouts, f.snap.timeouts),
                recoveries: Some(w(now_c.recoveries, f.snap.recoveries)),
                responses: f.web.as_ref().map(|wr| wr.times.clone()),
                datagrams_delivered: (f.transport != "tcp").then(|| w(now_c.datagrams, f.snap.datagrams)),
                jitter_ms: jitter,
            });
        }
        let bn = &self.links[self.bottleneck.idx()];
        let bottleneck = bn.measure(self.end);
        let engine = EngineMeasure { wall_s, events: self.events.processed(), bottleneck_packets: bn.stats.transmitted };
        measure::build(&RunMeasure { name: self.name.clone(), seed: self.seed, duration_s: self.end.secs_f64(), flows, bottleneck, engine })
    }
}
