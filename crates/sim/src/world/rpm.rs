//! The RPM test (draft-ietf-ippm-responsiveness-09) driven by the world: the ramp of
//! load-generating connections, self probes on them, and the aggregation at the end. Foreign
//! probes are the test's web flow (world/web.rs logs each one's handshake and HTTP times).
//!
//! A self probe is modelled, not sent: at a probe tick the server side of a load-generating
//! connection writes the probe's response right behind what it has sent so far (a server
//! with little unsent data, as with TCP_NOTSENT_LOWAT), and the probe completes when the
//! receiver has those bytes in order. The request's trip the other way is taken at the path's
//! base one-way delay. docs/latency-under-load.md lists these choices.

use super::{Endpoint, FlowRt, World};
use crate::app::rpm::{self as draft, ForeignSummary, LoadedSummary, RpmCfg, RpmSummary};
use crate::engine::{Event, EventQueue};
use crate::ids::FlowId;
use crate::units::{Dur, SimTime};

struct Pending {
    flow: FlowId,
    /// Payload bytes the receiver must have for the response to be complete.
    marker: u64,
    /// The tick that wrote the response.
    at: SimTime,
    /// The request's trip (base one-way delay of the other direction).
    owd: Dur,
}

pub(crate) struct RpmRt {
    cfg: RpmCfg,
    /// Load-generating flows of each direction, in the order the ramp starts them.
    down: Vec<FlowId>,
    up: Vec<FlowId>,
    started_down: usize,
    started_up: usize,
    foreign: FlowId,
    /// The flow whose `AppNext` events are the test's ticks (a load flow: they have no app
    /// events of their own).
    tick_id: FlowId,
    /// `start_flow` starts a load flow only while this is set (by the ramp).
    releasing: bool,
    next_eval: SimTime,
    last_eval: SimTime,
    last_bytes: u64,
    /// Load goodput of each interval (bit/s), and whether it has been stable yet.
    goodput: Vec<f64>,
    saturated: bool,
    rr: usize,
    pending: Vec<Pending>,
    /// Completed self probes: (tick, latency s).
    loaded: Vec<(SimTime, f64)>,
}

impl RpmRt {
    /// The test's flows are the last of the scenario: max_connections per direction (down
    /// first), then the foreign-probe flow. Schedules the first tick at 0.
    pub(super) fn new(cfg: &RpmCfg, n_flows: usize, events: &mut EventQueue) -> RpmRt {
        let per = cfg.max_connections as usize;
        let dirs = cfg.direction.down() as usize + cfg.direction.up() as usize;
        let first = n_flows - 1 - per * dirs;
        let ids = |from: usize| (from..from + per).map(|i| FlowId(i as u32)).collect::<Vec<_>>();
        let (down, up) = match (cfg.direction.down(), cfg.direction.up()) {
            (true, true) => (ids(first), ids(first + per)),
            (true, false) => (ids(first), Vec::new()),
            _ => (Vec::new(), ids(first)),
        };
        let tick_id = FlowId(first as u32);
        events.schedule(SimTime::ZERO, Event::AppNext(tick_id));
        RpmRt {
            cfg: cfg.clone(),
            down,
            up,
            started_down: 0,
            started_up: 0,
            foreign: FlowId((n_flows - 1) as u32),
            tick_id,
            releasing: false,
            next_eval: SimTime::ZERO,
            last_eval: SimTime::ZERO,
            last_bytes: 0,
            goodput: Vec::new(),
            saturated: false,
            rr: 0,
            pending: Vec::new(),
            loaded: Vec::new(),
        }
    }

    fn is_load(&self, f: FlowId) -> bool {
        self.down.contains(&f) || self.up.contains(&f)
    }

    fn started(&self) -> impl Iterator<Item = FlowId> + '_ {
        self.down[..self.started_down].iter().chain(&self.up[..self.started_up]).copied()
    }
}

impl World {
    /// Whether `AppNext(f)` is the RPM test's tick.
    #[inline]
    pub(super) fn rpm_tick_event(&self, f: FlowId) -> bool {
        self.rpm.as_ref().is_some_and(|r| r.tick_id == f)
    }

    /// Load-generating flows wait for the ramp, whatever their start time.
    #[inline]
    pub(super) fn rpm_holds(&self, f: FlowId) -> bool {
        self.rpm.as_ref().is_some_and(|r| !r.releasing && r.is_load(f))
    }

    /// Every probe interval: the ramp's check once an interval, then a self probe.
    pub(super) fn rpm_tick(&mut self) {
        let now = self.now;
        let r = self.rpm.as_ref().unwrap();
        let every = r.cfg.probe_interval;
        if now >= r.next_eval {
            self.rpm_interval();
        }
        self.rpm_self_probe();
        let next = now + every;
        if next <= self.end {
            let id = self.rpm.as_ref().unwrap().tick_id;
            self.events.schedule(next, Event::AppNext(id));
        }
    }

    fn load_bytes(&self) -> u64 {
        let r = self.rpm.as_ref().unwrap();
        r.started()
            .map(|f| match &self.eps[self.flows[f.idx()].server.idx()] {
                Endpoint::Tcp(s) => s.delivered(),
                _ => 0,
            })
            .sum()
    }

    /// An interval's end: its goodput, and one more load-generating connection each way (the
    /// draft's INC = 1 per interval, up to MNP = `max_connections`).
    fn rpm_interval(&mut self) {
        let now = self.now;
        let bytes = self.load_bytes();
        let r = self.rpm.as_mut().unwrap();
        if now > SimTime::ZERO {
            let span = now.since(r.last_eval).secs_f64();
            r.goodput.push((bytes - r.last_bytes) as f64 * 8.0 / span);
            r.saturated = r.saturated || draft::stable(&draft::moving_averages(&r.goodput));
        }
        r.last_eval = now;
        r.last_bytes = bytes;
        r.next_eval = now + r.cfg.interval;
        let mut start = Vec::new();
        if r.started_down < r.down.len() {
            start.push(r.down[r.started_down]);
            r.started_down += 1;
        }
        if r.started_up < r.up.len() {
            start.push(r.up[r.started_up]);
            r.started_up += 1;
        }
        r.releasing = true;
        for f in start {
            // The summary's start and active time are the ramp's.
            self.flows[f.idx()].start = now;
            self.start_flow(f);
        }
        self.rpm.as_mut().unwrap().releasing = false;
    }

    /// A self probe on the next load-generating connection (round robin).
    fn rpm_self_probe(&mut self) {
        let r = self.rpm.as_ref().unwrap();
        let started: Vec<FlowId> = r.started().collect();
        if started.is_empty() {
            return;
        }
        let f = started[r.rr % started.len()];
        let fl: &FlowRt = &self.flows[f.idx()];
        let Endpoint::Tcp(sender) = &self.eps[fl.client.idx()] else { return };
        if sender.state != crate::tcp::TcpState::Established {
            return;
        }
        // Upload: the request rides the data stream, the response comes back alone.
        let extra = if r.down.contains(&f) { r.cfg.response } else { r.cfg.request };
        let marker = sender.bytes_sent_high() + extra;
        let p = Pending { flow: f, marker, at: self.now, owd: Dur(fl.base_rtt.0 / 2) };
        let r = self.rpm.as_mut().unwrap();
        r.rr += 1;
        r.pending.push(p);
    }

    /// After a packet reached an endpoint of flow `f`: complete its self probes whose
    /// response the receiver now has.
    #[inline]
    pub(super) fn rpm_progress(&mut self, f: FlowId) {
        let Some(r) = self.rpm.as_ref() else { return };
        if !r.pending.iter().any(|p| p.flow == f) {
            return;
        }
        let got = match &self.eps[self.flows[f.idx()].server.idx()] {
            Endpoint::Tcp(s) => s.delivered(),
            _ => return,
        };
        let now = self.now;
        let r = self.rpm.as_mut().unwrap();
        let loaded = &mut r.loaded;
        r.pending.retain(|p| {
            let done = p.flow == f && got >= p.marker;
            if done {
                loaded.push((p.at, (now.since(p.at) + p.owd).secs_f64()));
            }
            !done
        });
    }

    /// The summary's `responsiveness` block: the probes of the last MAD intervals.
    pub(super) fn rpm_summary(&self) -> Option<RpmSummary> {
        let r = self.rpm.as_ref()?;
        let web = self.flows[r.foreign.idx()].web.as_ref()?;
        let id = r.cfg.interval.0;
        let span = (draft::MAD as u64 * id).min(self.end.0);
        let from = SimTime(self.end.0 - span);
        let foreign: Vec<&(SimTime, f64, f64)> = web.log.iter().filter(|p| p.0 >= from).collect();
        let tcp: Vec<f64> = foreign.iter().map(|p| p.1).collect();
        let http: Vec<f64> = foreign.iter().map(|p| p.2).collect();
        let loaded: Vec<f64> = r.loaded.iter().filter(|p| p.0 >= from).map(|p| p.1).collect();
        let (tcp_f, http_f, http_l) =
            (draft::trimmed_mean(&tcp), draft::trimmed_mean(&http), draft::trimmed_mean(&loaded));
        let rpm = match (tcp_f, http_f, http_l) {
            (Some(a), Some(b), Some(c)) => Some(draft::rpm(a, b, c)),
            _ => None,
        };
        // The responsiveness of the MAD intervals ending at each of the last MAD whole
        // intervals, for the stability rule.
        let intervals = (self.end.0 / id) as usize;
        let mad = draft::MAD as u64;
        let in_window = |t: SimTime, k: usize| t.0 / id <= k as u64 && t.0 / id + mad > k as u64;
        let moving: Option<Vec<f64>> = (intervals.max(2 * draft::MAD - 1) - draft::MAD..intervals)
            .filter(|&k| k + 1 >= draft::MAD)
            .map(|k| {
                let f: Vec<_> = web.log.iter().filter(|p| in_window(p.0, k)).collect();
                let a = draft::trimmed_mean(&f.iter().map(|p| p.1).collect::<Vec<_>>())?;
                let b = draft::trimmed_mean(&f.iter().map(|p| p.2).collect::<Vec<_>>())?;
                let l: Vec<f64> =
                    r.loaded.iter().filter(|p| in_window(p.0, k)).map(|p| p.1).collect();
                Some(draft::rpm(a, b, draft::trimmed_mean(&l)?))
            })
            .collect();
        let g = &r.goodput[r.goodput.len().saturating_sub(draft::MAD)..];
        let ms = |x: Option<f64>| x.map(|s| s * 1e3);
        Some(RpmSummary {
            draft: draft::DRAFT.to_string(),
            direction: r.cfg.direction.name().to_string(),
            rpm,
            class: rpm.map(|x| draft::class(x).to_string()),
            foreign: ForeignSummary {
                tcp_ms: ms(tcp_f),
                http_ms: ms(http_f),
                ms: ms(tcp_f.zip(http_f).map(|(a, b)| (a + b) / 2.0)),
                rpm: tcp_f.zip(http_f).map(|(a, b)| draft::foreign_rpm(a, b)),
                probes: foreign.len() as u32,
            },
            loaded: LoadedSummary {
                http_ms: ms(http_l),
                rpm: http_l.map(|s| 60.0 / s),
                probes: loaded.len() as u32,
            },
            window_s: span as f64 / 1e9,
            connections_down: r.started_down as u32,
            connections_up: r.started_up as u32,
            goodput_mbps: g.iter().sum::<f64>() / g.len().max(1) as f64 / 1e6,
            goodput_stable: r.saturated,
            responsiveness_stable: moving.is_some_and(|v| draft::stable(&v)),
        })
    }
}
