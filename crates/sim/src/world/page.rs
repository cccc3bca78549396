//! The page application at run time (app/page.rs holds its settings and object sizes). A page
//! starts with one connection fetching the HTML alone; when the HTML has arrived, the other
//! objects are requested: over up to `connections` persistent connections, one object at a
//! time each (HTTP/1.1 without pipelining; the extra connections open then, handshake
//! included), or, multiplexed, all at once on the HTML's connection (HTTP/2-like). The page's
//! load time runs from its first SYN to the last byte of its last object at the client. After
//! `think` the next page starts on fresh connections.
//!
//! A page flow has one socket pair per connection: the flow's own pair is connection 0, the
//! others are appended after every flow's endpoints (each endpoint sending on the route of its
//! own index, as the look-ahead expects), on copies of the flow's two routes. A connection's
//! packets carry its number (new ones every page), which gives it ports of its own in the
//! flow-aware queues and lets late packets of an earlier page be ignored.

use super::{Counters, Endpoint, FlowRt, RouteRt, World};
use crate::app::PageCfg;
use crate::cc::{self, CcSpec};
use crate::config::{AppKind, FlowSpec, RwndPolicy, TcpCfg, Transport};
use crate::engine::{Event, SimRng, Stream};
use crate::ids::{FlowId, RouteId, SockId};
use crate::metrics::DelayHist;
use crate::tcp::TcpSocket;
use crate::units::SimTime;
use std::collections::VecDeque;

/// One connection of a page flow.
struct Conn {
    /// The answering side (a data sender of the flow) and the requesting side.
    server: SockId,
    client: SockId,
    /// Opened during the current page (its sockets then hold counters to keep).
    open: bool,
    /// Objects requested here that the server has not answered yet, oldest first.
    asked: VecDeque<u32>,
    /// Requests the server has answered on this connection.
    answered: u64,
    /// The client's delivered byte count at which each outstanding object is complete.
    due: VecDeque<(u64, u32)>,
    /// Response bytes asked for on this connection so far.
    resp_end: u64,
}

pub(crate) struct PageRt {
    cfg: PageCfg,
    total: u64,
    tcp: std::sync::Arc<TcpCfg>,
    cc: CcSpec,
    rwnd: RwndPolicy,
    conns: Vec<Conn>,
    /// Pages started.
    page: u32,
    loading: bool,
    started: SimTime,
    /// The next object to request, and objects complete, of the current page.
    next_obj: u32,
    got: u32,
    done: u32,
    /// Load times (s) of pages that started in the measurement window.
    pub times: Vec<f64>,
    measure_from: SimTime,
    /// RTT samples of the connections of earlier pages.
    pub rtt_hist: DelayHist,
}

impl PageRt {
    /// A page flow's state with connection 0 on the flow's own sockets (`sender` sends the
    /// data, on the route of its index).
    pub(crate) fn for_flow(spec: &FlowSpec, sender: SockId, receiver: SockId) -> Option<Box<Self>> {
        let (AppKind::Page(cfg), Transport::Tcp { cc, tcp }) = (&spec.app, &spec.transport) else {
            return None;
        };
        Some(Box::new(PageRt {
            cfg: *cfg,
            total: spec.size.expect("page flows have a size"),
            tcp: std::sync::Arc::new(tcp.clone()),
            cc: cc.clone(),
            rwnd: spec.rwnd.clone(),
            conns: vec![Conn::new(sender, receiver)],
            page: 0,
            loading: false,
            started: SimTime::ZERO,
            next_obj: 0,
            got: 0,
            done: 0,
            times: Vec::new(),
            measure_from: SimTime::ZERO,
            rtt_hist: crate::metrics::delay_histogram(),
        }))
    }

    pub(crate) fn start_measuring(&mut self, now: SimTime) {
        self.times.clear();
        self.measure_from = now;
    }

    fn socket(&self, id: SockId, f: FlowId, conn: u16, seed: u64, from: SimTime) -> TcpSocket {
        let rng = SimRng::new(seed, Stream::Endpoint, id.0 as u64 | (conn as u64) << 32);
        let ctx = cc::BuildCtx { mss: self.tcp.mss as u64, rng, hz: self.tcp.hz };
        let mut s = TcpSocket::new(id, f, RouteId(id.0), &self.tcp, cc::build(&self.cc, ctx));
        s.conn = conn;
        s.metrics_from = from;
        s
    }
}

impl Conn {
    fn new(server: SockId, client: SockId) -> Conn {
        let (asked, due) = (VecDeque::new(), VecDeque::new());
        Conn { server, client, open: false, asked, answered: 0, due, resp_end: 0 }
    }
}

/// Gives every page flow its connections beyond the first: a socket pair each, appended to
/// `eps`, sending on copies of the flow's routes appended to `routes` at the same indices.
pub(super) fn add_connections(
    flows: &mut [FlowRt],
    routes: &mut Vec<RouteRt>,
    eps: &mut Vec<Endpoint>,
    seed: u64,
) {
    for (f, fl) in flows.iter_mut().enumerate() {
        let Some(p) = fl.page.as_mut() else { continue };
        for _ in 1..p.cfg.conns_used() {
            let server = SockId(eps.len() as u32);
            let client = SockId(server.0 + 1);
            debug_assert_eq!(routes.len(), eps.len());
            let mut data = routes[fl.client.idx()];
            data.path.dst = client;
            let mut ack = routes[fl.server.idx()];
            ack.path.dst = server;
            routes.push(data);
            routes.push(ack);
            let from = SimTime::ZERO;
            eps.push(Endpoint::Tcp(p.socket(server, FlowId(f as u32), 0, seed, from)));
            eps.push(Endpoint::Tcp(p.socket(client, FlowId(f as u32), 0, seed, from)));
            p.conns.push(Conn::new(server, client));
        }
    }
}

impl World {
    fn tcp(&self, s: SockId) -> &TcpSocket {
        match &self.eps[s.idx()] {
            Endpoint::Tcp(t) => t,
            _ => unreachable!("page flows run over TCP"),
        }
    }

    /// Page flow `i`'s counters: its closed connections' and its current ones'.
    pub(super) fn page_counters(&self, i: usize) -> Counters {
        let f = &self.flows[i];
        let p = f.page.as_ref().expect("a page flow");
        let pair = |c: &Conn| Counters::tcp_pair(self.tcp(c.server), self.tcp(c.client));
        p.conns.iter().fold(f.retired, |acc, c| acc.plus(&pair(c)))
    }

    /// The 95th percentile of page flow `i`'s RTT samples over all its connections (ns).
    pub(super) fn page_rtt_p95(&self, i: usize) -> u64 {
        let p = self.flows[i].page.as_ref().expect("a page flow");
        let mut h = p.rtt_hist.clone();
        for c in p.conns.iter().filter(|c| c.open) {
            h.add(&self.tcp(c.server).rtt_hist);
        }
        h.value_at_quantile(0.95)
    }

    /// Starts the next page of flow `f`: fresh sockets on every connection, the HTML's
    /// connection opened and its request written.
    pub(super) fn page_start(&mut self, f: FlowId) {
        let i = f.idx();
        let (seed, from) = (self.seed, self.warmup);
        let mut p = self.flows[i].page.take().expect("a page flow");
        let mut retired = self.flows[i].retired;
        let n = p.conns.len() as u32;
        p.page = p.page.wrapping_add(1);
        for k in 0..p.conns.len() {
            let (sid, cid) = (p.conns[k].server, p.conns[k].client);
            if p.conns[k].open {
                retired = retired.plus(&Counters::tcp_pair(self.tcp(sid), self.tcp(cid)));
                p.rtt_hist.add(&self.tcp(sid).rtt_hist);
            }
            // Connection numbers 1, 2, ... over the run: ports of their own, old packets ignored.
            let conn = p.page.wrapping_sub(1).wrapping_mul(n).wrapping_add(k as u32 + 1) as u16;
            let mut server = p.socket(sid, f, conn, seed, from);
            let mut client = p.socket(cid, f, conn, seed, from);
            server.listen();
            client.set_rwnd_policy(&p.rwnd);
            self.eps[sid.idx()] = Endpoint::Tcp(server);
            self.eps[cid.idx()] = Endpoint::Tcp(client);
            p.conns[k] = Conn::new(sid, cid);
        }
        self.flows[i].retired = retired;
        p.loading = true;
        p.started = self.now;
        p.next_obj = 0;
        p.got = 0;
        self.flows[i].page = Some(p);
        self.page_ask(f, 0, 1);
    }

    /// The client asks for the next `n` objects on connection `k` (opening it first if need
    /// be), in one write.
    fn page_ask(&mut self, f: FlowId, k: usize, n: u32) {
        let p = self.flows[f.idx()].page.as_mut().unwrap();
        let (total, cfg) = (p.total, p.cfg);
        let c = &mut p.conns[k];
        let open = !c.open;
        c.open = true;
        for obj in p.next_obj..p.next_obj + n {
            c.asked.push_back(obj);
            c.resp_end += cfg.object_size(total, obj);
            c.due.push_back((c.resp_end, obj));
        }
        p.next_obj += n;
        let (cid, request) = (c.client, cfg.request * n as u64);
        self.ep_call(cid, |ep, cx| {
            if let Endpoint::Tcp(s) = ep {
                if open {
                    s.connect(cx);
                }
                s.app_write(request, cx);
            }
        });
    }

    /// After a packet reached endpoint `dst` of page flow `f`: the server answers the requests
    /// it has received whole, the client counts the objects it has received whole and asks
    /// for more.
    pub(super) fn page_progress(&mut self, f: FlowId, dst: SockId) {
        let i = f.idx();
        let Some(p) = self.flows[i].page.as_ref() else { return };
        if !p.loading {
            return;
        }
        let Some(k) = p.conns.iter().position(|c| c.server == dst || c.client == dst) else {
            return;
        };
        let c = &p.conns[k];
        if dst == c.server {
            let whole = self.tcp(dst).delivered() / p.cfg.request;
            if whole <= c.answered {
                return;
            }
            let p = self.flows[i].page.as_mut().unwrap();
            let (total, cfg) = (p.total, p.cfg);
            let c = &mut p.conns[k];
            let mut bytes = 0;
            while c.answered < whole {
                let obj = c.asked.pop_front().expect("a request the client made");
                bytes += cfg.object_size(total, obj);
                c.answered += 1;
            }
            self.ep_call(dst, |ep, cx| {
                if let Endpoint::Tcp(s) = ep {
                    s.app_write(bytes, cx);
                }
            });
            return;
        }
        let have = self.tcp(dst).delivered();
        if c.due.front().is_none_or(|&(end, _)| end > have) {
            return;
        }
        let now = self.now;
        let p = self.flows[i].page.as_mut().unwrap();
        let mut html = false;
        while let Some(&(end, obj)) = p.conns[k].due.front() {
            if end > have {
                break;
            }
            p.conns[k].due.pop_front();
            p.got += 1;
            html |= obj == 0;
        }
        if p.got == p.cfg.objects {
            p.loading = false;
            p.done += 1;
            if p.started >= p.measure_from {
                p.times.push(now.since(p.started).secs_f64());
            }
            if p.cfg.pages.is_none_or(|n| p.done < n) {
                self.events.schedule(now + p.cfg.think, Event::AppNext(f));
            }
            return;
        }
        let left = p.cfg.objects - p.next_obj;
        if p.cfg.multiplex {
            if html {
                // Every other object at once on the one connection.
                self.page_ask(f, 0, left);
            }
            return;
        }
        if html {
            // The HTML's connection and the others (opened now) each take an object.
            let n = p.conns.len().min(left as usize);
            for k in 0..n {
                self.page_ask(f, k, 1);
            }
        } else if p.conns[k].due.is_empty() && left > 0 {
            self.page_ask(f, k, 1);
        }
    }
}
