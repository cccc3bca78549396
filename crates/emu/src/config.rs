//! From a scenario to an emulation: the simulator's own parser validates it (same key paths,
//! same messages), then the features a real-kernel emulation cannot reproduce are refused by
//! key path, and the plan (expanded flows with their start times) and the bottleneck's parts
//! are built from the validated values.

use crate::core::{Core, CoreCfg};
use crate::shaper::{Direction, DirectionCfg};
use crate::slab::{Slab, SLOT};
use bloatlab_sim::config::{
    AppKind, RateSpec, Scenario, StartSpec, TopologyKind, Transport, UdpApp,
};
use bloatlab_sim::engine::{SimRng, Stream};
use bloatlab_sim::linux;
use bloatlab_sim::queue::QueueDisc;
use bloatlab_sim::units::{Dur, Rate};
use bloatlab_sim::ScenarioError;
use serde_json::{json, Value};

/// Congestion controls the emulation can ask the kernel for (kernel names): those of
/// [`EMULATED_CCS`] under Linux's names.
pub const KERNEL_CCS: &[&str] = &["reno", "cubic", "bbr", "vegas", "westwood"];
/// The simulator's congestion controls the emulation runs, each by the kernel module
/// [`linux::kernel_cc`] names. `reno` and `newreno` differ in the simulator only by the
/// recovery a scenario pairs them with, and the emulation accepts SACK recovery only
/// ([`check_recovery`]): Linux's `reno` with SACK is both. `vegas` and `westwood+` are Linux's
/// modules (tcp_vegas with its default α = 2, β = 4, γ = 1, the simulator's defaults;
/// tcp_westwood is Westwood+). Linux also names `dctcp` and `prague` ([`linux::CC_NAMES`]);
/// the emulation does not offer them.
const EMULATED_CCS: &[&str] = &["reno", "newreno", "cubic", "bbr", "vegas", "westwood+"];

/// The kernel congestion control that runs the simulator's `cc`, if any.
pub fn kernel_cc(cc: &str) -> Option<&'static str> {
    EMULATED_CCS.contains(&cc).then(|| linux::kernel_cc(cc)).flatten()
}
/// Flow i's sender port is `PORT_BASE + i` (as in the simulator's pcap files).
pub const PORT_BASE: u16 = 10_000;
pub const MAX_FLOWS: u32 = 1000;

fn refuse<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError { path: path.into(), message: message.into() })
}

/// Parses and validates a scenario for emulation.
pub fn scenario(v: &Value) -> Result<Scenario, ScenarioError> {
    let s = Scenario::from_value(v)?;
    check(&s, v)?;
    Ok(s)
}

fn check(s: &Scenario, v: &Value) -> Result<(), ScenarioError> {
    let t = &s.topology;
    if t.kind == TopologyKind::Cellular {
        if t.ues != 1 {
            return refuse(
                "topology.ues",
                format!(
                    "emulation runs the cellular topology with one UE (allowed: 1; got {})",
                    t.ues
                ),
            );
        }
        // The core link is a delay line: it must not be the bottleneck, nor lose packets.
        let slow = match (&t.access.rate, mean_rate(&t.bottleneck.rate)) {
            (RateSpec::Constant(c), Some(r)) => c.0 < r.0,
            _ => true,
        };
        if slow {
            return refuse("topology.core.rate", "emulation does not shape the core link (allowed: a constant rate at least the radio's)");
        }
        if t.access.loss > 0.0 || !t.access.drop_packets.is_empty() {
            return refuse(
                "topology.core.loss",
                "emulation applies loss on the radio link only (allowed: topology.radio.loss)",
            );
        }
    }
    if let Some(a) = v.pointer("/topology/access").and_then(Value::as_object) {
        if a.contains_key("rate") {
            let (RateSpec::Constant(ar), Some(bn)) =
                (&t.access.rate, mean_rate(&t.bottleneck.rate))
            else {
                return refuse("topology.access.rate", "emulation does not shape access links (allowed: a constant rate at least the bottleneck's)");
            };
            if ar.0 < bn.0 {
                return refuse("topology.access.rate", format!("emulation does not shape access links: {} Mbit/s is below the bottleneck's {} Mbit/s (allowed: at least the bottleneck rate)", ar.mbps_f64(), bn.mbps_f64()));
            }
        }
        if t.access.loss > 0.0 || !t.access.drop_packets.is_empty() {
            let key = if t.access.loss > 0.0 { "loss" } else { "drop_packets" };
            return refuse(format!("topology.access.{key}"), "emulation applies loss on the bottleneck only (allowed: topology.bottleneck.loss, topology.bottleneck.drop_packets)");
        }
    }
    for (key, l) in [("bottleneck", &t.bottleneck), ("access", &t.access)] {
        if l.schedule.is_some() {
            // The emulator's delay lines are fixed; a schedule would need them re-timed.
            return refuse(
                format!("topology.{key}.schedule"),
                "schedule-driven links run in the simulator only (allowed: no schedule)",
            );
        }
    }
    if v.get("responsiveness").is_some() {
        // Its ramp and self probes are driven by the simulator's world.
        return refuse("responsiveness", "the RPM test runs in the simulator only");
    }
    if v.get("capture").is_some() {
        return refuse("capture", "emulation captures with `bloatlab emulate --pcap sender|receiver` (allowed: no capture table)");
    }
    if let Some(k) = v
        .get("tcp")
        .and_then(Value::as_object)
        .and_then(|o| o.keys().find(|k| !TCP_KEYS.contains(&k.as_str())))
    {
        return refuse(
            format!("tcp.{k}"),
            format!("emulation uses the kernel's TCP settings (allowed: {})", TCP_KEYS.join(", ")),
        );
    }
    check_mtu(s, v)?;
    check_recovery(v)?;
    check_rules(v)?;
    if rtt_classes(s).0.len() > MAX_RTT_CLASSES {
        let i = s.flows.iter().position(|f| f.rtt.is_some()).unwrap_or(0);
        return refuse(format!("flows[{i}].rtt"), format!("emulation runs at most {MAX_RTT_CLASSES} distinct base RTTs, one delay line each (allowed: up to {MAX_RTT_CLASSES} values)"));
    }
    let n: u32 = s.flows.iter().map(|f| f.count).sum();
    if n > MAX_FLOWS {
        return refuse("flows", format!("emulation runs at most {MAX_FLOWS} flows (got {n})"));
    }
    for (i, f) in s.flows.iter().enumerate() {
        let p = |k: &str| format!("flows[{i}].{k}");
        let raw = &v["flows"][i];
        if let Transport::Udp(u) = &f.transport {
            if u.app != UdpApp::Cbr {
                return refuse(
                    p("app"),
                    format!(
                        "emulation runs constant-bit-rate UDP flows only, not {} (allowed: cbr)",
                        u.app.name()
                    ),
                );
            }
            if f.direction != bloatlab_sim::config::Direction::Forward {
                return refuse(
                    p("direction"),
                    "emulation sends UDP flows one way (allowed: forward)",
                );
            }
            continue;
        }
        let Transport::Tcp { cc, .. } = &f.transport else {
            return refuse(p("transport"), "emulation runs kernel TCP and UDP flows, not dccp: Linux removed DCCP (allowed: tcp, udp)");
        };
        if kernel_cc(cc.name()).is_none() {
            let allowed = EMULATED_CCS;
            return refuse(
                p("cc"),
                format!(
                    "\"{}\" is not a Linux congestion control this emulation can use (allowed: {})",
                    cc.name(),
                    allowed.join(", ")
                ),
            );
        }
        if let Some(k) =
            raw.get("cc_params").and_then(Value::as_object).and_then(|o| o.keys().next())
        {
            return refuse(
                format!("flows[{i}].cc_params.{k}"),
                "the kernel's congestion control takes no per-flow parameters (allowed: none)",
            );
        }
        if let Some(k) = raw
            .get("tcp")
            .and_then(Value::as_object)
            .and_then(|o| o.keys().find(|k| !TCP_KEYS.contains(&k.as_str())))
        {
            return refuse(
                format!("flows[{i}].tcp.{k}"),
                format!(
                    "emulation uses the kernel's TCP settings (allowed: {})",
                    TCP_KEYS.join(", ")
                ),
            );
        }
        if !matches!(f.app, AppKind::Bulk | AppKind::File | AppKind::Web(_)) {
            return refuse(p("app"), "emulation runs bulk and sized transfers and the web application only (allowed: bulk, file, web)");
        }
        if matches!(f.app, AppKind::Web(_))
            && f.direction != bloatlab_sim::config::Direction::Forward
        {
            return refuse(
                p("direction"),
                "emulation runs web servers at the senders' end only (allowed: forward)",
            );
        }
        if f.rwnd.needs_channel() {
            return refuse(p("rwnd"), "abrwda needs a cellular link (allowed: static, drwa)");
        }
        if f.direction != bloatlab_sim::config::Direction::Forward && t.gateway.is_some() {
            return refuse(p("direction"), "emulation's gateway rewrites the ACKs of forward flows only (allowed: forward with topology.gateway)");
        }
    }
    Ok(())
}

/// Distinct access delays (one delay line per side and direction each).
pub const MAX_RTT_CLASSES: usize = 8;

/// The access delay of each RTT class (class 0: the topology's) and each expanded flow's class:
/// a flow with `rtt` gets the simulator's access delay for it, (rtt / 2 − bottleneck delay) / 2.
pub fn rtt_classes(s: &Scenario) -> (Vec<Dur>, Vec<u8>) {
    let t = &s.topology;
    let mut delays = vec![t.access.delay];
    let mut class = Vec::new();
    for f in &s.flows {
        let own = f.rtt.filter(|_| t.kind == TopologyKind::Dumbbell);
        let d =
            own.map_or(t.access.delay, |r| Dur((r.0 / 2).saturating_sub(t.bottleneck.delay.0) / 2));
        let c = delays.iter().position(|&x| x == d).unwrap_or_else(|| {
            delays.push(d);
            delays.len() - 1
        });
        class.extend(std::iter::repeat_n(c.min(u8::MAX as usize) as u8, f.count as usize));
    }
    (delays, class)
}

/// The TCP keys the emulation honours: `mss` sets the TUN devices' MTU (so Linux's MSS with
/// timestamps equals it), `rcvbuf` clamps the receiver's advertised window (TCP_WINDOW_CLAMP),
/// `recovery` only as `sack`, what Linux does by default (see [`check_recovery`]), `rules` only
/// as `"linux"` (see [`check_rules`]), `nagle = false` sets TCP_NODELAY on the flow's sockets
/// (`true`, or the key left out: Linux's default socket, Nagle on).
pub const TCP_KEYS: &[&str] = &["mss", "rcvbuf", "recovery", "rules", "nagle"];

/// Linux recovers with SACK when both ends negotiate it; without SACK its recovery is NewReno
/// (partial ACKs keep it in recovery), never RFC 5681 Reno. SACK is a per-namespace sysctl,
/// not a socket option, so one flow without SACK beside SACK flows cannot be had either: only
/// `sack` is accepted, globally or per flow.
fn check_recovery(v: &Value) -> Result<(), ScenarioError> {
    match tcp_choice_other_than(v, "recovery", "sack") {
        Some((key, r)) => refuse(key, format!("Linux recovers with SACK (without it, as NewReno) and SACK is set per host, not per flow: \"{r}\" recovery cannot be emulated (allowed: sack)")),
        None => Ok(()),
    }
}

/// `rules`: the kernel runs Linux's rules, so only `"linux"` describes what is emulated.
fn check_rules(v: &Value) -> Result<(), ScenarioError> {
    match tcp_choice_other_than(v, "rules", "linux") {
        Some((key, r)) => refuse(
            key,
            format!(
                "the kernel runs Linux's rules, not the simulator's \"{r}\" set (allowed: linux)"
            ),
        ),
        None => Ok(()),
    }
}

/// The first string `tcp.KEY`, globally or in a flow's `tcp` table, that is not `allowed`:
/// its key path and value.
fn tcp_choice_other_than(v: &Value, key: &str, allowed: &str) -> Option<(String, String)> {
    let flows = v.get("flows").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    std::iter::once((format!("tcp.{key}"), v.get("tcp")))
        .chain(
            flows.iter().enumerate().map(|(i, f)| (format!("flows[{i}].tcp.{key}"), f.get("tcp"))),
        )
        .find_map(|(path, t)| {
            let r = t?.get(key)?.as_str()?;
            (r != allowed).then(|| (path, r.to_string()))
        })
}

/// IP + TCP headers + the timestamps option Linux negotiates by default.
const MSS_OVERHEAD: u32 = 52;
const MSS_RANGE: (u32, u32) = (536, SLOT as u32 - 100);

fn has_tcp_key(v: &Value, i: usize, key: &str) -> bool {
    v.pointer(&format!("/tcp/{key}")).is_some()
        || v.pointer(&format!("/flows/{i}/tcp/{key}")).is_some()
}

fn tcp_cfg(f: &bloatlab_sim::config::FlowSpec) -> Option<&bloatlab_sim::config::TcpCfg> {
    match &f.transport {
        Transport::Tcp { tcp, .. } => Some(tcp),
        _ => None,
    }
}

/// One MTU serves every flow (it is the devices'), so an explicit MSS must be the same for all.
fn check_mtu(s: &Scenario, v: &Value) -> Result<(), ScenarioError> {
    let mut first: Option<u32> = None;
    for (i, f) in s.flows.iter().enumerate() {
        let Some(tcp) = tcp_cfg(f) else { continue };
        if !has_tcp_key(v, i, "mss") {
            continue;
        }
        let key = if v.pointer(&format!("/flows/{i}/tcp/mss")).is_some() {
            format!("flows[{i}].tcp.mss")
        } else {
            "tcp.mss".to_string()
        };
        if tcp.mss < MSS_RANGE.0 || tcp.mss > MSS_RANGE.1 {
            return refuse(
                key,
                format!(
                    "emulation sets the MSS through the devices' MTU (allowed: {}B to {}B)",
                    MSS_RANGE.0, MSS_RANGE.1
                ),
            );
        }
        match first {
            Some(m) if m != tcp.mss => {
                return refuse(
                    key,
                    format!(
                        "emulation gives every flow one MTU (allowed: {m}B, the first flow's MSS)"
                    ),
                );
            }
            _ => first = Some(tcp.mss),
        }
    }
    Ok(())
}

/// The devices' MTU: 1500, or the explicit MSS plus the headers.
fn mtu(s: &Scenario, v: &Value) -> u32 {
    (0..s.flows.len())
        .find(|&i| has_tcp_key(v, i, "mss"))
        .and_then(|i| tcp_cfg(&s.flows[i]))
        .map_or(1500, |t| t.mss + MSS_OVERHEAD)
}

fn mean_rate(r: &RateSpec) -> Option<Rate> {
    match r {
        RateSpec::Constant(r) => Some(*r),
        other => Some(other.build(SimRng::new(0, Stream::LinkRate, 0)).mean_rate()),
    }
}

fn app_name(app: &AppKind, size: Option<u64>) -> &'static str {
    match (app, size) {
        (AppKind::Web(_), _) => "web",
        (_, Some(_)) => "file",
        _ => "bulk",
    }
}

/// What the controller needs to run the endpoints: the flows expanded (as the simulator expands
/// them, with the same random start times) and the timing.
pub fn plan(s: &Scenario, v: &Value) -> Value {
    let t = &s.topology;
    let mut flows = Vec::new();
    let mut id = 0u64;
    for (entry, spec) in s.flows.iter().enumerate() {
        for _ in 0..spec.count {
            let start = match spec.start {
                StartSpec::At(d) => d.0,
                StartSpec::Uniform(a, b) => {
                    SimRng::new(s.seed, Stream::FlowStart, id).range_u64(a.0, b.0)
                }
            };
            let rwnd = spec.rwnd.to_json();
            // UDP (CBR): one datagram of `payload` bytes every `gap`, sent by the end host.
            let (transport, gap, payload) = match &spec.transport {
                Transport::Udp(u) => ("udp", Some(u.gap.0), Some(u.payload)),
                _ => ("tcp", None, None),
            };
            flows.push(json!({
                "transport": transport, "gap_ns": gap, "payload": payload,
                "reverse": spec.direction != bloatlab_sim::config::Direction::Forward,
                "id": id, "entry": entry, "group": spec.group, "cc": spec.cc_name(), "start_ns": start,
                "kernel_cc": kernel_cc(spec.cc_name()),
                "size": spec.size, "app": app_name(&spec.app, spec.size),
                // The web application: the receivers' end requests `request` bytes on a new
                // connection, `think_ns` after the previous response, `requests` times (null: until the end).
                "web": match spec.app {
                    AppKind::Web(w) => json!({"request": w.request, "think_ns": w.think.0, "requests": w.requests}),
                    _ => Value::Null,
                },
                "port": PORT_BASE as u64 + id, "rwnd": rwnd,
                "base_rtt_ns": s.base_rtt(spec).0,
                // The receiver's window clamp: only where the scenario sets it (else Linux's autotuning).
                "rcvbuf": tcp_cfg(spec).filter(|_| has_tcp_key(v, entry, "rcvbuf")).map(|t| t.rcvbuf),
                // TCP_NODELAY where the scenario writes `nagle = false` (else Linux's default).
                "nodelay": tcp_cfg(spec).is_some_and(|t| has_tcp_key(v, entry, "nagle") && !t.nagle),
            }));
            id += 1;
        }
    }
    json!({
        "name": s.name, "seed": s.seed, "duration_ns": s.duration.0, "warmup_ns": s.warmup.0,
        "interval_ns": s.metrics.interval.0,
        "bottleneck_rate_bps": mean_rate(&t.bottleneck.rate).map(|r| r.0),
        "bottleneck_delay_ns": t.bottleneck.delay.0, "access_delay_ns": t.access.delay.0,
        "queue_capacity_bytes": bloatlab_sim::queue::capacity_bytes(t.bottleneck_queue.limit),
        "aqm": t.bottleneck_queue.kind(),
        "gateway": t.gateway.as_ref().map(|g| bloatlab_sim::gateway::build(g).name()),
        "mtu": mtu(s, v),
        "flows": flows,
    })
}

/// Builds the bottleneck for a validated scenario. Random streams use the simulator's keys
/// (the forward bottleneck is link 0, the reverse one link 1).
pub fn core(s: &Scenario) -> Core {
    let t = &s.topology;
    let n: usize = s.flows.iter().map(|f| f.count as usize).sum();
    // The simulator's link ids key the random streams: the dumbbell's bottleneck pair is 0 / 1;
    // the cellular topology's core pair is 0 / 1 and the UE's radio pair, its bottleneck, 2 / 3.
    let (fi, ri) = if t.kind == TopologyKind::Cellular { (2, 3) } else { (0, 1) };
    let fwd_rate = t.bottleneck.rate.build(SimRng::new(s.seed, Stream::LinkRate, fi));
    let rev_rate = t
        .bottleneck
        .reverse_rate
        .as_ref()
        .unwrap_or(&t.bottleneck.rate)
        .build(SimRng::new(s.seed, Stream::LinkRate, ri));
    let fwd_q = bloatlab_sim::queue::build(
        &t.bottleneck_queue,
        SimRng::new(s.seed, Stream::Queue, fi),
        fwd_rate.mean_rate(),
    );
    let rev_q = bloatlab_sim::queue::build(
        &t.reverse_queue,
        SimRng::new(s.seed, Stream::Queue, ri),
        rev_rate.mean_rate(),
    );
    // Room for every packet that can be inside at once: both buffers full of the smallest
    // packets (40 B) plus a window's worth of MTU packets on the wire, within sane bounds.
    let (access_delays, flow_class) = rtt_classes(s);
    let (fwd_near, fwd_far, rev_near, rev_far) = if t.kind == TopologyKind::Cellular {
        // Server → core link (a delay: at least the radio's rate) → base-station queue → radio
        // link → UE, and back: the UE's uplink, then the core.
        let none = vec![Dur::ZERO; access_delays.len()];
        (access_delays.clone(), none.clone(), none, access_delays.clone())
    } else {
        (access_delays.clone(), access_delays.clone(), access_delays.clone(), access_delays.clone())
    };
    let longest = access_delays.iter().map(|d| d.0).max().unwrap_or(0);
    let owd = 2 * longest + t.bottleneck.delay.0;
    let wire = fwd_rate.mean_rate().bytes_in(Dur(owd)) / 1500
        + rev_rate.mean_rate().bytes_in(Dur(owd)) / 40;
    let slots = (4096 + fwd_q.capacity_bytes() / 40 + rev_q.capacity_bytes() / 40 + 2 * wire)
        .min(1 << 17) as usize;
    let fwd = Direction::new(
        DirectionCfg {
            name: "bottleneck",
            near_delays: fwd_near,
            far_delays: fwd_far,
            flow_class: flow_class.clone(),
            mid_delay: t.bottleneck.delay,
            loss: t.bottleneck.loss,
            drop_list: t.bottleneck.drop_packets.clone(),
        },
        fwd_q,
        fwd_rate,
        SimRng::new(s.seed, Stream::LinkLoss, fi),
        slots,
    );
    let rev = Direction::new(
        DirectionCfg {
            name: "bottleneck_rev",
            near_delays: rev_near,
            far_delays: rev_far,
            flow_class,
            mid_delay: t.bottleneck.delay,
            loss: 0.0,
            drop_list: Vec::new(),
        },
        rev_q,
        rev_rate,
        SimRng::new(s.seed, Stream::LinkLoss, ri),
        slots,
    );
    let samples = s.duration.0.checked_div(s.metrics.interval.0).map_or(0, |n| n as usize + 2);
    Core::new(
        fwd,
        rev,
        Slab::new(slots),
        CoreCfg {
            gateway: t.gateway.as_ref().map(bloatlab_sim::gateway::build),
            port_base: PORT_BASE,
            flows: n,
            warmup: s.warmup,
            interval: s.metrics.interval,
            samples,
        },
    )
}

#[cfg(test)]
mod cc_name_tests {
    use super::*;

    #[test]
    fn kernel_ccs_are_the_emulated_controllers_linux_names() {
        let mut names: Vec<&str> = EMULATED_CCS.iter().map(|c| kernel_cc(c).unwrap()).collect();
        names.dedup();
        assert_eq!(names, KERNEL_CCS);
        assert_eq!(kernel_cc("westwood+"), Some("westwood"));
        assert_eq!(kernel_cc("dctcp"), None);
    }
}
