//! The validated scenario: plain typed values, every unit resolved. Built from a JSON value by
//! [`Scenario::from_value`], which reports the first problem with its key path.

mod cellular;
mod gateway;
mod link;
pub(crate) mod queue;
mod rate;
mod rpm;
pub(crate) mod scenario;
mod schedule;
mod topology;

pub use crate::app::{AppKind, PageCfg, WebCfg};
pub use crate::dccp::{DccpApp, DccpCfg};
pub use crate::gateway::{AwmParams, EwaParams, EwtParams, GatewayCfg};
pub use crate::linux::DEFAULT_HZ;
pub use crate::params::{err, join, Res, ScenarioError, Table};
pub use crate::queue::{QueueCfg, QueueLimit};
pub use crate::tcp::rwnd::RwndPolicy;
pub use crate::tcp::{Recovery, TcpCfg};
pub use crate::udp::{UdpApp, UdpCfg};
pub use crate::wire::{
    EcnMode, MTU_BYTES, TCP_HEADER_BYTES, TCP_TS_OPTION_BYTES, UDP_HEADER_BYTES,
};
pub use scenario::MAX_THREADS;
pub use schedule::ScheduleSpec;
pub use topology::routes;
pub use topology::{
    expand_classic, reverse_name, Classic, Ecmp, GraphCfg, GraphLink, NodeCfg, Pattern, StaticRoute,
};

use crate::units::{Dur, Rate};

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub duration: Dur,
    pub seed: u64,
    pub warmup: Dur,
    pub metrics: MetricsCfg,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    pub capture: CaptureCfg,
    /// The RPM test (`[responsiveness]`): its flows are the last of `flows`.
    pub rpm: Option<crate::app::rpm::RpmCfg>,
    /// Worker threads asked for (`threads`; None: "auto", world/partition.rs).
    pub threads: Option<u32>,
}

/// Links to record as pcap, by name, and the bytes kept of each packet.
#[derive(Debug, Clone, Default)]
pub struct CaptureCfg {
    pub links: Vec<String>,
    pub snaplen: u32,
}

impl Scenario {
    /// The names of every link the topology builds, in build order.
    pub fn link_names(&self) -> Vec<String> {
        let n: u32 = self.flows.iter().map(|f| f.count).sum();
        match &self.topology.graph {
            Some(g) => g.link_names(),
            None => Scenario::link_names_of(&self.topology, n as usize),
        }
    }

    /// The link names of a dumbbell or cellular topology with `n_flows` flows.
    pub(crate) fn link_names_of(t: &Topology, n_flows: usize) -> Vec<String> {
        if t.kind == TopologyKind::Cellular {
            let mut v = vec!["core_down".to_string(), "core_up".to_string()];
            for u in 0..t.ues {
                v.push(format!("ue{u}_down"));
                v.push(format!("ue{u}_up"));
            }
            return v;
        }
        let mut v = vec!["bottleneck".to_string(), "bottleneck_rev".to_string()];
        for f in 0..n_flows {
            for side in ["src_up", "dst_down", "dst_up", "src_down"] {
                v.push(format!("f{f}_{side}"));
            }
        }
        v
    }
}

#[derive(Debug, Clone)]
pub struct MetricsCfg {
    /// Time-series sampling interval; zero disables sampling.
    pub interval: Dur,
    /// Links (one direction each, by name) whose queue the summary reports and the time series
    /// sample, besides the topology's own choice (graph topologies only).
    pub links: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologyKind {
    Dumbbell,
    /// server — core link — base station (per-UE buffers) — radio links — UEs. Mapped onto
    /// the same fields: `access` is the core link, `bottleneck` the radio link (down rate in
    /// `rate`, up rate in `reverse_rate`), `bottleneck_queue` the base station's per-UE buffer,
    /// `reverse_queue` the UE's uplink buffer, `access_queue` the core link's queues.
    Cellular,
    /// Named nodes and links with shortest-path routes (`kind = "graph"` and the presets
    /// `parking_lot`, `leaf_spine`, `fat_tree` that expand into one): see [`GraphCfg`].
    Graph,
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub kind: TopologyKind,
    pub bottleneck: LinkCfg,
    pub bottleneck_queue: QueueCfg,
    pub reverse_queue: QueueCfg,
    pub access: LinkCfg,
    pub access_queue: QueueCfg,
    /// ACK rewriter on the gateway (the bottleneck's entry router), if any.
    pub gateway: Option<GatewayCfg>,
    /// Number of UEs (cellular); 1 for the dumbbell.
    pub ues: u32,
    /// The nodes, links and routes of a graph topology (kind Graph); the fields above are
    /// then unused placeholders.
    pub graph: Option<Box<GraphCfg>>,
}

/// How a link's capacity behaves over time.
#[derive(Debug, Clone)]
pub enum RateSpec {
    Constant(Rate),
    /// A Mahimahi trace (loaded and checked when the scenario is read).
    Trace {
        file: String,
        times_ms: std::sync::Arc<Vec<u64>>,
    },
    /// The stochastic cellular model (see net::rate_model::CellularRate).
    Cellular {
        min: Rate,
        max: Rate,
        interval: Dur,
        dwell: Dur,
        p_good: f64,
    },
}

impl RateSpec {
    /// Builds the link's model; `rng` drives the stochastic one.
    pub fn build(&self, rng: crate::engine::SimRng) -> crate::net::rate_model::RateModel {
        use crate::net::rate_model::{CellularRate, RateModel, TraceRate};
        match self {
            RateSpec::Constant(r) => RateModel::Constant(*r),
            RateSpec::Trace { times_ms, .. } => {
                RateModel::Trace(Box::new(TraceRate::new(times_ms.clone())))
            }
            RateSpec::Cellular { min, max, interval, dwell, p_good } => RateModel::Cellular(
                Box::new(CellularRate::new(*min, *max, *interval, *dwell, *p_good, rng)),
            ),
        }
    }
}

#[derive(Debug, Clone)]
pub struct LinkCfg {
    pub rate: RateSpec,
    /// The reverse direction's rate where a link pair shares one table (the bottleneck);
    /// None: the same as `rate`.
    pub reverse_rate: Option<RateSpec>,
    pub delay: Dur,
    /// Probability that a packet is lost after crossing the link (data direction).
    pub loss: f64,
    /// Indices (0-based, in crossing order) of packets this link loses: a deterministic
    /// loss list like ns-3's ListErrorModel (data direction).
    pub drop_packets: Vec<u64>,
    /// Delay (both directions), loss (data direction) and rate that change on a schedule
    /// (config/schedule.rs); `delay` is then its base (smallest) delay.
    pub schedule: Option<ScheduleSpec>,
}

/// The transport of a flow and its settings.
#[derive(Debug, Clone)]
pub enum Transport {
    Tcp { cc: crate::cc::CcSpec, tcp: TcpCfg },
    Udp(UdpCfg),
    Dccp(DccpCfg),
}

#[derive(Debug, Clone, Copy)]
pub enum StartSpec {
    At(Dur),
    Uniform(Dur, Dur),
}

/// One `[[flows]]` entry (before `count` is expanded).
#[derive(Debug, Clone)]
pub struct FlowSpec {
    pub transport: Transport,
    pub count: u32,
    pub start: StartSpec,
    /// None = unlimited.
    pub size: Option<u64>,
    pub app: AppKind,
    pub rtt: Option<Dur>,
    pub rwnd: RwndPolicy,
    /// The UE a cellular flow downloads to (None: flows are spread round-robin).
    pub ue: Option<u32>,
    pub group: String,
    /// Which way the flow's data crosses the bottleneck pair.
    pub direction: Direction,
    /// The name of the host the flow's data comes from (flows naming the same host share its
    /// address, for host-aware queues such as CAKE); None: a host of its own.
    pub host: Option<String>,
    /// The DSCP the flow's packets carry (both directions).
    pub dscp: u8,
    /// Graph topologies: the hosts the flow's data goes from and to (node indices), or a
    /// pattern of host pairs; `count` flows per pair.
    pub endpoints: Option<Pattern>,
}

/// The direction of a flow's data over the topology's bottleneck pair: `Forward` crosses
/// `bottleneck` (the dumbbell's left-to-right link, the cellular downlink), `Reverse` crosses
/// `bottleneck_rev` (right to left, the uplink) with its ACKs coming back over `bottleneck`.
/// Uploads and downloads at once, as on a home link, are flows of both directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    #[default]
    Forward,
    Reverse,
}

impl Direction {
    pub const KNOWN: &'static [&'static str] = &["forward", "reverse"];
}

impl FlowSpec {
    /// The controller name for reports ("none" for UDP).
    pub fn cc_name(&self) -> &'static str {
        match &self.transport {
            Transport::Tcp { cc, .. } => cc.name(),
            Transport::Udp(u) => u.video.map_or("none", |v| v.controller.name()),
            Transport::Dccp(d) => d.cc.name(),
        }
    }
}

impl Scenario {
    /// The base RTT of a flow: its own `rtt` or the dumbbell's default.
    pub fn base_rtt(&self, f: &FlowSpec) -> Dur {
        let t = &self.topology;
        match t.kind {
            TopologyKind::Cellular => Dur(2 * (t.access.delay.0 + t.bottleneck.delay.0)),
            TopologyKind::Dumbbell => {
                f.rtt.unwrap_or(Dur(2 * (2 * t.access.delay.0 + t.bottleneck.delay.0)))
            }
            // A graph flow's base RTT depends on its route (the world sums its links' delays).
            TopologyKind::Graph => Dur::ZERO,
        }
    }
}
