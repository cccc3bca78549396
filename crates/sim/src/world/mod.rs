//! The world: every node, link, endpoint and flow of one run in plain vectors addressed by
//! typed ids, and the event loop that drives them. The parts live in files of their own:
//! `build.rs` builds the topology (links, routes, endpoints, flows), `path.rs` is where a
//! packet goes next (endpoint → links → endpoint, the gateway hook), `measure.rs` samples,
//! checks conservation and gathers the run's measurements, `web.rs` runs web flows,
//! `page.rs` page flows (many objects over parallel connections),
//! `lookahead.rs` prefetches what the next events will touch (a hint: speed only).

use crate::app;
use crate::config::AppKind;
use crate::dccp::DccpEndpoint;
use crate::engine::{Event, EventQueue};
use crate::gateway::AckRewriter;
use crate::ids::{FlowId, LinkId, PacketId, SockId};
use crate::metrics::{RunMeasure, Series};
use crate::net::pcap::PcapWriter;
use crate::net::{Link, PacketPool, Route};
use crate::tcp::{Cx, TcpSocket};
use crate::udp::UdpEndpoint;
use crate::units::{Dur, SimTime};
use std::time::Instant;

mod build;
mod graph;
mod lookahead;
mod measure;
mod page;
mod parallel;
mod partition;
mod path;
mod rpm;
mod web;
mod wifi;

use build::RouteKey;
pub(crate) use measure::Counters;
use page::PageRt;
pub use parallel::run_parallel;
pub use partition::{plan, Plan};
use web::WebRt;

/// A transport endpoint of any kind.
// Not boxed: the event loop reads the socket in place (one pointer chase fewer per event),
// and the look-ahead relies on an endpoint being exactly a socket (world/lookahead.rs).
#[allow(clippy::large_enum_variant)]
pub enum Endpoint {
    Tcp(TcpSocket),
    Udp(UdpEndpoint),
    Dccp(DccpEndpoint),
}

/// What a finished run hands back: its measurements (the summary builder's input) and, if
/// asked for, the sampled time series.
pub struct Outcome {
    pub measure: RunMeasure,
    pub series: Option<Series>,
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
    transport: &'static str,
    snap: Counters,
    last: Counters,
    /// Counters of the flow's closed connections (web flows open one per request).
    retired: Counters,
    /// The web application's state, for web flows.
    web: Option<WebRt>,
    /// The page application's state, for page flows.
    page: Option<Box<PageRt>>,
}

/// A flow's packet counters, kept apart from [`FlowRt`]: every send, delivery and drop
/// touches them, and at thousands of flows 32 bytes a flow stay in cache where the whole
/// bookkeeping would not (aligned to their size: in one cache line, never two).
#[derive(Debug, Default, Clone, Copy)]
#[repr(align(32))]
struct FlowPkts {
    sent: u64,
    delivered: u64,
    dropped: u64,
    /// Data packets dropped inside the measurement window.
    w_data_drops: u64,
}

/// A route and the 5-tuple and DSCP its packets carry, in one cache line: every hop reads both.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct RouteRt {
    path: Route,
    key: RouteKey,
}

const _: () = assert!(std::mem::size_of::<RouteRt>() == 64);

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
    routes: Vec<RouteRt>,
    /// What the look-ahead knows beyond the rest (world/lookahead.rs).
    ahead: lookahead::Lookahead,
    eps: Vec<Endpoint>,
    flows: Vec<FlowRt>,
    pkts: Vec<FlowPkts>,
    /// Some flow is a web flow (only those need a look after each delivery).
    any_web: bool,
    /// Some flow is a page flow (the same look, for those).
    any_page: bool,
    bottleneck: LinkId,
    bottleneck_rev: LinkId,
    /// Links whose queue the summary reports besides `bottleneck` (graph topologies: all of
    /// them, the bottleneck first), and the time series samples.
    reported: Vec<LinkId>,
    out: Vec<PacketId>,
    series: Option<Series>,
    /// ACK rewriter on the gateway, acting on ACKs leaving the reverse bottleneck queue.
    gateway: Option<Box<dyn AckRewriter>>,
    /// Window-scale shift of each flow's ACKs, learned from the SYN-ACK crossing the gateway.
    gw_wscale: Vec<Option<u8>>,
    /// ACK windows the gateway lowered.
    gw_rewrites: u64,
    /// pcap writers, one slot per link (none at all when no link is captured).
    captures: Vec<Option<PcapWriter>>,
    capture_error: Option<String>,
    /// The RPM test (`[responsiveness]`, world/rpm.rs).
    rpm: Option<rpm::RpmRt>,
    /// The Wi-Fi BSS (world/wifi.rs) and the index of its first link (u32::MAX: none).
    wifi: Option<Box<wifi::WifiRt>>,
    wifi_from: u32,
    /// This world's share of a parallel run (world/parallel.rs); None: the whole run.
    part: Option<Box<parallel::Part>>,
    /// Events the other partitions and the parallel driver ran (the summary counts them all).
    events_extra: u64,
}

impl World {
    /// Runs to the end; with `progress`, prints a line to stderr about that often.
    pub fn run(mut self, progress: Option<std::time::Duration>) -> Result<Outcome, String> {
        let wall = Instant::now();
        let mut next_report = progress.map(|p| (p, wall + p));
        if !self.counting {
            self.events.schedule(self.warmup, Event::WarmupEnd);
        }
        // Sampling events run whether or not series are kept, so the event count (and so the
        // summary) does not depend on it.
        if self.interval.0 > 0 {
            self.events.schedule(SimTime::ZERO + self.interval, Event::Sample);
        }
        while let Some((t, ev)) = self.events.pop_until(self.end) {
            self.now = t;
            self.prefetch_ahead();
            self.dispatch(ev);
            // The clock is read once per 2^20 events only.
            if self.events.processed() & 0xF_FFFF == 0 {
                if let Some((every, at)) = next_report.as_mut() {
                    let now = Instant::now();
                    if now >= *at {
                        *at = now + *every;
                        self.report_progress(wall);
                    }
                }
            }
        }
        self.now = self.end;
        for w in self.captures.iter_mut().filter_map(Option::take) {
            if let Err(e) = w.finish() {
                self.capture_error.get_or_insert_with(|| e.to_string());
            }
        }
        if let Some(e) = self.capture_error.take() {
            return Err(format!("pcap capture failed: {e}"));
        }
        self.close_windows();
        self.check_conservation(&[])?;
        let measure = self.measure(wall.elapsed().as_secs_f64());
        Ok(Outcome { measure, series: self.series })
    }

    #[cold]
    fn report_progress(&self, wall: Instant) {
        let el = wall.elapsed().as_secs_f64();
        let n = self.events.processed();
        eprintln!(
            "progress: simulated {:.6} of {:.6} s, {} events, wall {:.0} s ({:.2} M events/s)",
            self.now.secs_f64(),
            self.end.secs_f64(),
            n,
            el,
            n as f64 / el / 1e6
        );
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::LinkTxDone(l) => self.tx_done(l),
            Event::LinkArrive(l, p) => self.arrive(l, p),
            Event::Timer(s, k) => self.ep_call(s, |ep, cx| match ep {
                Endpoint::Tcp(t) => t.on_timer(k, cx),
                Endpoint::Udp(u) => u.on_timer(k, cx),
                Endpoint::Dccp(d) => d.on_timer(k, cx),
            }),
            Event::FlowStart(f) => self.start_flow(f),
            Event::AppNext(f) if self.rpm_tick_event(f) => self.rpm_tick(),
            Event::AppNext(f) if self.flows[f.idx()].page.is_some() => self.page_start(f),
            Event::AppNext(f) => self.web_request(f),
            Event::Sample => {
                self.sample();
                let next = self.now + self.interval;
                if next <= self.end {
                    self.events.schedule(next, Event::Sample);
                }
            }
            Event::WarmupEnd => self.start_measuring(),
            Event::Wifi => self.wifi_event(),
        }
    }

    fn start_flow(&mut self, f: FlowId) {
        if self.rpm_holds(f) {
            return;
        }
        if self.flows[f.idx()].web.is_some() {
            self.web_request(f);
            return;
        }
        if self.flows[f.idx()].page.is_some() {
            self.page_start(f);
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
            let mut cx = Cx {
                now: self.now,
                pool: &mut self.pool,
                events: &mut self.events,
                out: &mut out,
                channel,
            };
            f(&mut self.eps[s.idx()], &mut cx);
        }
        for pid in out.drain(..) {
            self.inject(pid);
        }
        self.out = out;
    }
}
