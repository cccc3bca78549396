//! The web application (Alfredsson et al.'s short flows): the receiving side opens a new
//! connection, sends a small request, the sending side answers with the response, and after a
//! think time the next request starts on a fresh connection. The response time runs from the
//! connection's SYN to the response's last byte at the client, connection setup included.

use super::{Counters, Endpoint, World};
use crate::cc::{self, CcSpec};
use crate::config::{AppKind, FlowSpec, RwndPolicy, TcpCfg, Transport, WebCfg};
use crate::engine::{Event, SimRng, Stream};
use crate::ids::{FlowId, RouteId, SockId};
use crate::metrics::DelayHist;
use crate::tcp::TcpSocket;
use crate::units::SimTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Requesting,
    Responding,
}

pub(crate) struct WebRt {
    cfg: WebCfg,
    response: u64,
    tcp: std::sync::Arc<TcpCfg>,
    cc: CcSpec,
    rwnd: RwndPolicy,
    /// The answering side (the flow's data sender) and the requesting side.
    server: SockId,
    client: SockId,
    server_route: RouteId,
    client_route: RouteId,
    conn: u16,
    phase: Phase,
    started: SimTime,
    done: u32,
    /// Response times (s) of requests that started in the measurement window.
    pub times: Vec<f64>,
    measure_from: SimTime,
    /// RTT samples of closed connections.
    pub rtt_hist: DelayHist,
    /// When the current request's connection was established (the client had the SYN-ACK).
    established: Option<SimTime>,
    /// Every completed request: (start, handshake s, request to response s), for the RPM
    /// test's foreign probes.
    pub log: Vec<(SimTime, f64, f64)>,
}

impl WebRt {
    pub(crate) fn for_flow(
        spec: &FlowSpec,
        sender: SockId,
        receiver: SockId,
        fwd: RouteId,
        rev: RouteId,
    ) -> Option<WebRt> {
        let (AppKind::Web(cfg), Transport::Tcp { cc, tcp }) = (&spec.app, &spec.transport) else {
            return None;
        };
        Some(WebRt {
            cfg: *cfg,
            response: spec.size.expect("web flows have a response size"),
            tcp: std::sync::Arc::new(tcp.clone()),
            cc: cc.clone(),
            rwnd: spec.rwnd.clone(),
            server: sender,
            client: receiver,
            server_route: fwd,
            client_route: rev,
            conn: 0,
            phase: Phase::Idle,
            started: SimTime::ZERO,
            done: 0,
            times: Vec::new(),
            measure_from: SimTime::ZERO,
            rtt_hist: crate::metrics::delay_histogram(),
            established: None,
            log: Vec::new(),
        })
    }

    pub(crate) fn start_measuring(&mut self, now: SimTime) {
        self.times.clear();
        self.measure_from = now;
    }
}

impl Counters {
    pub(crate) fn plus(&self, o: &Counters) -> Counters {
        Counters {
            bytes_sent: self.bytes_sent + o.bytes_sent,
            bytes_retx: self.bytes_retx + o.bytes_retx,
            bytes_delivered: self.bytes_delivered + o.bytes_delivered,
            data_pkts_sent: self.data_pkts_sent + o.data_pkts_sent,
            rtt_sum_ns: self.rtt_sum_ns + o.rtt_sum_ns,
            rtt_n: self.rtt_n + o.rtt_n,
            owd_sum_ns: self.owd_sum_ns + o.owd_sum_ns,
            owd_n: self.owd_n + o.owd_n,
            retransmits: self.retransmits + o.retransmits,
            timeouts: self.timeouts + o.timeouts,
            recoveries: self.recoveries + o.recoveries,
            datagrams: self.datagrams + o.datagrams,
        }
    }
}

impl World {
    /// Starts the next request of web flow `f` on a new connection.
    pub(super) fn web_request(&mut self, f: FlowId) {
        let i = f.idx();
        let seed = self.seed;
        let from = self.warmup;
        // Retire the previous connection: keep its counters and RTT samples.
        if self.flows[i].web.as_ref().is_some_and(|w| w.conn > 0) {
            let old = self.endpoint_counters(i);
            let fl = &mut self.flows[i];
            fl.retired = fl.retired.plus(&old);
            let w = fl.web.as_mut().unwrap();
            if let Endpoint::Tcp(s) = &self.eps[w.server.idx()] {
                w.rtt_hist.add(&s.rtt_hist);
            }
        }
        let fl = &mut self.flows[i];
        let w = fl.web.as_mut().unwrap();
        w.conn = w.conn.wrapping_add(1);
        let build = |id: SockId, route: RouteId, w: &WebRt| {
            let rng = SimRng::new(seed, Stream::Endpoint, id.0 as u64 | (w.conn as u64) << 32);
            let mut s = TcpSocket::new(
                id,
                f,
                route,
                &w.tcp,
                cc::build(&w.cc, cc::BuildCtx { mss: w.tcp.mss as u64, rng, hz: w.tcp.hz }),
            );
            s.conn = w.conn;
            s.metrics_from = from;
            s
        };
        let mut server = build(w.server, w.server_route, w);
        let mut client = build(w.client, w.client_route, w);
        server.listen();
        server.expect = Some(w.cfg.request);
        client.set_rwnd_policy(&w.rwnd);
        client.expect = Some(w.response);
        w.phase = Phase::Requesting;
        w.started = self.now;
        w.established = None;
        let (sid, cid, request) = (w.server, w.client, w.cfg.request);
        self.eps[sid.idx()] = Endpoint::Tcp(server);
        self.eps[cid.idx()] = Endpoint::Tcp(client);
        self.ep_call(cid, |ep, cx| {
            if let Endpoint::Tcp(s) = ep {
                s.connect(cx);
                s.app_write(request, cx);
            }
        });
    }

    /// After a packet reached one of web flow `f`'s endpoints: answer a complete request,
    /// record a complete response.
    pub(super) fn web_progress(&mut self, f: FlowId) {
        let i = f.idx();
        let Some(w) = self.flows[i].web.as_ref() else { return };
        // The handshake's end: the client had the SYN-ACK.
        if w.phase == Phase::Requesting && w.established.is_none() {
            if let Endpoint::Tcp(c) = &self.eps[w.client.idx()] {
                if c.state == crate::tcp::TcpState::Established {
                    self.flows[i].web.as_mut().unwrap().established = Some(self.now);
                }
            }
        }
        let w = self.flows[i].web.as_ref().unwrap();
        let (sid, cid, phase) = (w.server, w.client, w.phase);
        match phase {
            Phase::Requesting => {
                let got = match &self.eps[sid.idx()] {
                    Endpoint::Tcp(s) => s.completed_at.is_some(),
                    _ => false,
                };
                if got {
                    let response = w.response;
                    self.flows[i].web.as_mut().unwrap().phase = Phase::Responding;
                    self.ep_call(sid, |ep, cx| {
                        if let Endpoint::Tcp(s) = ep {
                            s.app_write(response, cx);
                        }
                    });
                }
            }
            Phase::Responding => {
                let done_at = match &self.eps[cid.idx()] {
                    Endpoint::Tcp(s) => s.completed_at,
                    _ => None,
                };
                if let Some(t) = done_at {
                    let now = self.now;
                    let w = self.flows[i].web.as_mut().unwrap();
                    if w.started >= w.measure_from {
                        w.times.push(t.since(w.started).secs_f64());
                    }
                    let hs = w.established.unwrap_or(w.started);
                    w.log.push((w.started, hs.since(w.started).secs_f64(), t.since(hs).secs_f64()));
                    w.done += 1;
                    w.phase = Phase::Idle;
                    if w.cfg.requests.is_none_or(|n| w.done < n) {
                        let at = now + w.cfg.think;
                        self.events.schedule(at, Event::AppNext(f));
                    }
                }
            }
            Phase::Idle => {}
        }
    }
}
