//! Reading a [`Scenario`] from its JSON form, with every check that needs only the scenario.

use super::link::{pair, Pair};
use super::*;
use super::{cellular, gateway};
use crate::cc;
use crate::params::{self as reader, err, Res, Table};
use crate::tcp::rwnd::POLICIES;
use serde_json::Value;

const TOP_KEYS: &[&str] = &[
    "name",
    "duration",
    "seed",
    "warmup",
    "metrics",
    "topology",
    "tcp",
    "flows",
    "capture",
    "responsiveness",
    "threads",
];
const TOPOLOGY_KEYS: &[&str] = &[
    "kind",
    "bottleneck",
    "bottleneck_queue",
    "reverse_queue",
    "access",
    "access_queue",
    "gateway",
];
const TCP_KEYS: &[&str] = &[
    "mss",
    "init_cwnd",
    "recovery",
    "delack",
    "ack_every",
    "rto_min",
    "rto_initial",
    "rto_max",
    "timestamps",
    "rcvbuf",
    "rcv_truesize",
    "sndbuf",
    "write_size",
    "pacing",
    "slow_start_after_idle",
    "syn_linear_timeouts",
    "nagle",
    "ecn",
    "prr",
    "frto",
    "undo",
    "dsack",
    "rack",
    "tlp",
    "quickack",
    "rcvbuf_auto",
    "sack_compress",
    "gso",
    "tso_defer",
    "psh",
    "grow_quickack",
    "pacing_credit",
    "paced_fast_retransmit",
    "unpaced_start",
    "cwnd_limited",
    "prr_entry",
    "zero_window_probe",
    "ecn_reduction",
    "recovery_restart",
    "xmit_timer",
    "reno_dupacks",
    "old_ack_sack",
    "rack_retrans",
    "rtt_sample",
    "hz",
    "rules",
];
const FLOW_KEYS: &[&str] = &[
    "transport",
    "cc",
    "cc_params",
    "count",
    "start",
    "size",
    "app",
    "rtt",
    "rwnd",
    "rwnd_params",
    "ue",
    "group",
    "tcp",
    "rate",
    "packet_size",
    "request",
    "think",
    "requests",
    "ack_ratio",
    "loss_window",
    "interval",
    "direction",
    "host",
    "dscp",
    "src",
    "dst",
    "pattern",
    "objects",
    "html",
    "connections",
    "multiplex",
    "pages",
    "video",
];
/// Flow keys of the dumbbell and cellular topologies that a graph flow does not take.
const NOT_GRAPH: &[&str] = &["rtt", "ue", "direction", "host"];
const GRAPH_ONLY: &[&str] = &["src", "dst", "pattern"];
const TRANSPORTS: &[&str] = &["tcp", "udp", "dccp"];
const APPS: &[&str] = &["bulk", "file", "cbr", "web", "probe", "voip", "page", "video"];
/// The applications of UDP flows.
const UDP_APPS: &[&str] = &["cbr", "probe", "voip", "video"];
/// The video application's rate controllers (`cc` of a video flow) and its table's keys.
const VIDEO_CCS: &[&str] = &["gcc", "scream"];
const VIDEO_KEYS: &[&str] = &[
    "fps",
    "start_rate",
    "min_rate",
    "max_rate",
    "iframe_interval",
    "iframe_ratio",
    "encoder_lag",
    "feedback",
    "freeze",
    "l4s",
    "nack",
    "compensation",
];
/// Keys only the web application takes.
const WEB_ONLY: &[&str] = &["request", "think", "requests"];
/// Keys only the page application takes, and the web keys it shares.
const PAGE_ONLY: &[&str] = &["objects", "html", "connections", "multiplex", "pages"];
const PAGE_SHARED: &[&str] = &["request", "think"];
/// Keys that only TCP flows take, and the ones only UDP flows take.
const TCP_ONLY: &[&str] = &["cc", "cc_params", "tcp", "rwnd", "rwnd_params"];
const UDP_ONLY: &[&str] = &["rate", "packet_size", "interval"];
/// Keys only DCCP flows take, the keys DCCP flows take, and the ones they do not.
const DCCP_ONLY: &[&str] = &["ack_ratio", "loss_window"];
const DCCP_KEYS: &[&str] = &["cc", "ack_ratio", "loss_window", "packet_size", "app", "rate"];
const NOT_DCCP: &[&str] = &["cc_params", "tcp", "rwnd", "rwnd_params", "size", "interval"];
const DCCP_APPS: &[&str] = &["greedy", "cbr"];
const RECOVERIES: &[&str] = &["sack", "newreno", "reno"];

/// Most threads a run may ask for.
pub const MAX_THREADS: i64 = 1024;

/// `threads`: a count, or "auto" (the default; world/partition.rs states the rule).
fn threads(v: Option<&Value>) -> Res<Option<u32>> {
    let bad = |got: String| {
        err(
            "threads",
            format!("must be an integer from 1 to {MAX_THREADS} or \"auto\" (got {got})"),
        )
    };
    match v {
        None => Ok(None),
        Some(Value::String(s)) if s == "auto" => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) if (1..=MAX_THREADS).contains(&i) => Ok(Some(i as u32)),
            _ => bad(n.to_string()),
        },
        Some(other) => bad(other.to_string()),
    }
}

impl Scenario {
    /// Validates a scenario value; the first problem is returned with its key path.
    pub fn from_value(v: &Value) -> Res<Scenario> {
        let mut t = Table::new("", v)?;
        let name = t.opt_str("name")?.unwrap_or("scenario").to_string();
        let duration = reader::duration("duration", t.require("duration")?)?;
        if duration.0 == 0 {
            return err("duration", format!("must be greater than 0 (got \"{duration}\")"));
        }
        let seed = t.opt_int("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
        let warmup = t.opt_duration("warmup")?.unwrap_or(Dur::ZERO);
        if warmup >= duration {
            return err(
                "warmup",
                format!("must be shorter than duration ({duration}), got \"{warmup}\""),
            );
        }
        let mut metric_links = None;
        let metrics = match t.get("metrics") {
            None => MetricsCfg { interval: Dur::from_millis(100), links: Vec::new() },
            Some(m) => {
                let mut mt = Table::new("metrics", m)?;
                let interval = mt.opt_duration("interval")?.unwrap_or(Dur::from_millis(100));
                metric_links = mt.get("links");
                mt.finish(&["interval", "links"])?;
                MetricsCfg { interval, links: Vec::new() }
            }
        };
        let topology = match t.get("topology") {
            Some(tv) => topology(tv)?,
            None => return err("topology", "missing required key"),
        };
        let tcp_defaults = match t.get("tcp") {
            Some(tv) => TcpPartial::read("tcp", tv)?,
            None => TcpPartial::default(),
        };
        // The RPM test adds its own flows, so a scenario with it may have none.
        let rpm =
            t.get("responsiveness").map(|v| super::rpm::read(v, topology.kind)).transpose()?;
        let no_flows = Vec::new();
        let flows_arr = match t.get("flows") {
            None if rpm.is_some() => &no_flows,
            None => return err("flows", "missing required key"),
            Some(Value::Array(a)) if !a.is_empty() || rpm.is_some() => a,
            Some(Value::Array(_)) => return err("flows", "must list at least one flow"),
            Some(_) => return err("flows", "expected an array of tables ([[flows]])"),
        };
        let capture_v = t.get("capture");
        let threads = threads(t.get("threads"))?;
        t.finish(TOP_KEYS)?;

        let mut flows = Vec::with_capacity(flows_arr.len());
        let rpm_flows = rpm.as_ref().map_or(&[][..], |(_, f)| &f[..]);
        for (i, fv) in flows_arr.iter().chain(rpm_flows).enumerate() {
            flows.push(flow(&format!("flows[{i}]"), fv, &tcp_defaults, &topology)?);
        }
        let mut sc = Scenario {
            name,
            duration,
            seed,
            warmup,
            metrics,
            topology,
            flows,
            capture: CaptureCfg::default(),
            rpm: rpm.map(|(c, _)| c),
            threads,
        };
        if let Some(lv) = metric_links {
            sc.metrics.links = super::topology::metrics_links(lv, &sc.link_names())?;
        }
        if let Some(cv) = capture_v {
            sc.capture = capture(cv, &sc.link_names(), sc.topology.graph.is_some())?;
        }
        Ok(sc)
    }
}

fn capture(v: &Value, names: &[String], graph: bool) -> Res<CaptureCfg> {
    let mut t = Table::new("capture", v)?;
    let hint = if graph {
        ""
    } else {
        "; access links are f<N>_src_up, f<N>_dst_down, f<N>_dst_up, f<N>_src_down"
    };
    let links = match t.get("links") {
        None => Vec::new(),
        Some(Value::Array(a)) => super::topology::link_list("capture.links", a, names, hint)?,
        Some(_) => {
            return err("capture.links", "expected an array of link names, e.g. [\"bottleneck\"]")
        }
    };
    let snaplen = t.opt_int("snaplen", 60, 65_535)?.unwrap_or(128) as u32;
    t.finish(&["links", "snaplen"])?;
    Ok(CaptureCfg { links, snaplen })
}

fn topology(v: &Value) -> Res<Topology> {
    let mut t = Table::new("topology", v)?;
    match t.opt_choice("kind", "topology kind", super::topology::KINDS)? {
        Some("cellular") => return cellular::cellular(t),
        Some(k @ ("graph" | "parking_lot" | "leaf_spine" | "fat_tree" | "wifi")) => {
            return super::topology::topology(k, t)
        }
        _ => {}
    }
    let kind = TopologyKind::Dumbbell;
    let Pair { bottleneck, access, bottleneck_queue, reverse_queue, access_queue } = pair(&mut t)?;
    let gateway = match t.get("gateway") {
        None => None,
        Some(g) => Some(gateway::gateway("topology.gateway", g, &bottleneck_queue)?),
    };
    t.finish(TOPOLOGY_KEYS)?;
    Ok(Topology {
        kind,
        bottleneck,
        bottleneck_queue,
        reverse_queue,
        access,
        access_queue,
        gateway,
        ues: 1,
        graph: None,
    })
}

/// TCP settings as read from one table: unset keys fall through to the next level.
#[derive(Debug, Clone, Default)]
struct TcpPartial {
    mss: Option<u32>,
    init_cwnd: Option<u32>,
    recovery: Option<Recovery>,
    delack: Option<Dur>,
    ack_every: Option<u32>,
    rto_min: Option<Dur>,
    rto_initial: Option<Dur>,
    rto_max: Option<Dur>,
    timestamps: Option<bool>,
    rcvbuf: Option<u64>,
    /// The truesize and the key path it was read from (its check needs the merged MSS).
    rcv_truesize: Option<(u64, String)>,
    sndbuf: Option<u64>,
    write_size: Option<u64>,
    pacing: Option<bool>,
    slow_start_after_idle: Option<bool>,
    syn_linear_timeouts: Option<u32>,
    nagle: Option<bool>,
    /// The mode and the key path it was read from (errors about it name that path).
    ecn: Option<(EcnMode, String)>,
    /// The Linux mechanisms' switches, each unset or set.
    mech: [Option<bool>; 26],
    hz: Option<u32>,
    /// `rules = "linux"`: the switches left unset take Linux's rule, not the default.
    linux_rules: Option<bool>,
}

impl TcpPartial {
    fn read(path: &str, v: &Value) -> Res<TcpPartial> {
        let mut t = Table::new(path, v)?;
        let mss = match t.opt_size("mss")? {
            Some(m) if !(64..=65_000).contains(&m) => {
                return err(
                    &t.key_path("mss"),
                    format!("must be between 64B and 65000B (got {m}B)"),
                )
            }
            m => m.map(|m| m as u32),
        };
        let p = TcpPartial {
            mss,
            init_cwnd: t.opt_int("init_cwnd", 1, 10_000)?.map(|x| x as u32),
            recovery: t.opt_choice("recovery", "loss recovery", RECOVERIES)?.map(|r| match r {
                "sack" => Recovery::Sack,
                "newreno" => Recovery::NewReno,
                _ => Recovery::Reno,
            }),
            delack: t.opt_duration("delack")?,
            ack_every: t.opt_int("ack_every", 1, 64)?.map(|x| x as u32),
            rto_min: positive(&t.key_path("rto_min"), t.opt_duration("rto_min")?)?,
            rto_initial: positive(&t.key_path("rto_initial"), t.opt_duration("rto_initial")?)?,
            rto_max: positive(&t.key_path("rto_max"), t.opt_duration("rto_max")?)?,
            timestamps: t.opt_bool("timestamps")?,
            rcvbuf: t.opt_size("rcvbuf")?,
            rcv_truesize: t.opt_size("rcv_truesize")?.map(|v| (v, t.key_path("rcv_truesize"))),
            sndbuf: read_sndbuf(&mut t)?,
            write_size: match t.opt_size("write_size")? {
                Some(w) if !(1..=1 << 40).contains(&w) => {
                    return err(
                        &t.key_path("write_size"),
                        format!("must be between 1B and 1TiB (got {w}B)"),
                    )
                }
                w => w,
            },
            pacing: t.opt_bool("pacing")?,
            slow_start_after_idle: t.opt_bool("slow_start_after_idle")?,
            // Linux's range (MAX_TCP_SYNCNT).
            syn_linear_timeouts: t.opt_int("syn_linear_timeouts", 0, 127)?.map(|x| x as u32),
            nagle: t.opt_bool("nagle")?,
            ecn: ecn_mode(&mut t)?,
            mech: read_mechanisms(&mut t)?,
            hz: read_hz(&mut t)?,
            linux_rules: t
                .opt_choice("rules", "TCP rule set", &["default", "linux"])?
                .map(|s| s == "linux"),
        };
        t.finish(TCP_KEYS)?;
        Ok(p)
    }

    fn over(&self, base: &TcpPartial) -> TcpPartial {
        macro_rules! pick { ($($f:ident),*) => { TcpPartial { $($f: self.$f.clone().or(base.$f.clone()),)* mech: std::array::from_fn(|i| self.mech[i].or(base.mech[i])) } } }
        pick!(
            mss,
            init_cwnd,
            recovery,
            delack,
            ack_every,
            rto_min,
            rto_initial,
            rto_max,
            timestamps,
            rcvbuf,
            rcv_truesize,
            sndbuf,
            write_size,
            pacing,
            slow_start_after_idle,
            syn_linear_timeouts,
            nagle,
            ecn,
            hz,
            linux_rules
        )
    }

    fn resolve(&self, path: &str) -> Res<TcpCfg> {
        let d = TcpCfg::linux(&crate::linux::SCENARIO_TCP);
        // `rules = "linux"`: the settings that are a Linux default rather than a switch (linear
        // SYN timeouts, Nagle's algorithm on: Linux's socket before TCP_NODELAY) from Linux's.
        let linux_rules = self.linux_rules.unwrap_or(false);
        let rule =
            if linux_rules { &crate::linux::SYSCTL_TCP } else { &crate::linux::SCENARIO_TCP };
        let cfg = TcpCfg {
            mss: self.mss.unwrap_or(d.mss),
            init_cwnd: self.init_cwnd.unwrap_or(d.init_cwnd),
            // SACK recovery for every controller, as in Linux and ns-3: the papers' "NewReno"
            // runs (Linux, ns-3) used it, and RFC 6582's one-hole-per-RTT repair stalls for
            // minutes after a slow-start overshoot into a deep buffer.
            recovery: self.recovery.unwrap_or(d.recovery),
            delack: self.delack.unwrap_or(d.delack),
            ack_every: self.ack_every.unwrap_or(d.ack_every),
            rto_min: self.rto_min.unwrap_or(d.rto_min),
            rto_initial: self.rto_initial.unwrap_or(d.rto_initial),
            rto_max: self.rto_max.unwrap_or(d.rto_max),
            timestamps: self.timestamps.unwrap_or(d.timestamps),
            rcvbuf: self.rcvbuf.unwrap_or(d.rcvbuf),
            // Left out, the largest window is the default buffer's at the scaling ratio Linux
            // measures from the first full-sized segment (docs/tcp.md).
            window_max: self.rcvbuf.unwrap_or_else(|| {
                let mss = self.mss.unwrap_or(d.mss) as u64;
                let truesize =
                    self.rcv_truesize.as_ref().map_or(crate::linux::RX_TRUESIZE, |t| t.0);
                crate::linux::win_from_space(d.rcvbuf, crate::linux::scaling_ratio(mss, truesize))
            }),
            // A scenario that sizes its receive window means that window to bind: its send
            // buffer is left unlimited unless it sizes that too (docs/tcp.md).
            sndbuf: self.sndbuf.unwrap_or(if self.rcvbuf.is_some() {
                crate::tcp::SNDBUF_UNLIMITED
            } else {
                d.sndbuf
            }),
            write_size: self.write_size.unwrap_or(d.write_size),
            pacing: self.pacing.unwrap_or(d.pacing),
            slow_start_after_idle: self.slow_start_after_idle.unwrap_or(d.slow_start_after_idle),
            syn_linear_timeouts: self.syn_linear_timeouts.unwrap_or(rule.syn_linear_timeouts),
            nagle: self.nagle.unwrap_or(rule.nagle),
            ecn: self.ecn.as_ref().map_or(d.ecn, |e| e.0),
            mech: mechanisms(&self.mech, linux_rules),
            hz: self.hz.unwrap_or(d.hz),
        };
        if cfg.rto_max < cfg.rto_min {
            return err(
                &join(path, "rto_max"),
                format!("must be at least rto_min ({})", cfg.rto_min),
            );
        }
        if cfg.rcvbuf < cfg.mss as u64 {
            return err(&join(path, "rcvbuf"), format!("must be at least one MSS ({}B)", cfg.mss));
        }
        if let Some((ts, key)) = &self.rcv_truesize {
            let (ts, mss) = (*ts, cfg.mss as u64);
            if ts <= mss || ts > 256 * mss {
                return err(
                    key,
                    format!(
                        "must be more than one MSS ({mss}B) and at most 256 MSS ({}B) (got {ts}B)",
                        256 * mss
                    ),
                );
            }
        }
        if cfg.rcvbuf > 1 << 30 {
            return err(
                &join(path, "rcvbuf"),
                "must be at most 1GiB (the largest scaled TCP window)",
            );
        }
        Ok(cfg)
    }
}

/// Linux's smallest send buffer: two minimal skbs (`SOCK_MIN_SNDBUF`, 2 × 2304 B).
const SOCK_MIN_SNDBUF: u64 = 4608;

/// `sndbuf`: a size, or "unlimited" (no send buffer: the model before issue 34's send-buffer
/// rule).
fn read_sndbuf(t: &mut Table) -> Res<Option<u64>> {
    let p = t.key_path("sndbuf");
    match t.get("sndbuf") {
        None => Ok(None),
        Some(Value::String(s)) if s == "unlimited" => Ok(Some(crate::tcp::SNDBUF_UNLIMITED)),
        Some(v) => match reader::size(&p, v) {
            Ok(b) if b < SOCK_MIN_SNDBUF => err(
                &p,
                format!("must be at least {SOCK_MIN_SNDBUF}B (Linux's SOCK_MIN_SNDBUF) or \"unlimited\" (got {b}B)"),
            ),
            Ok(b) => Ok(Some(b)),
            Err(mut e) => {
                e.message.push_str(", or \"unlimited\"");
                Err(e)
            }
        },
    }
}

/// Linux's CONFIG_HZ choices: the tick TCP's timers are armed in.
const HZ_CHOICES: &[u64] = &[100, 250, 300, 1000];

fn read_hz(t: &mut Table) -> Res<Option<u32>> {
    match t.opt_int("hz", 1, 1_000_000)? {
        Some(hz) if !HZ_CHOICES.contains(&(hz as u64)) => err(
            &t.key_path("hz"),
            format!(
                "must be one of Linux's CONFIG_HZ choices (allowed: 100, 250, 300, 1000; got {hz})"
            ),
        ),
        hz => Ok(hz.map(|h| h as u32)),
    }
}

/// The switches of Linux's loss-recovery mechanisms ([`crate::tcp::Mechanisms`]), in
/// this order: prr, frto, undo, dsack, rack, tlp, quickack, rtt_sample ("linux" = true),
/// rcvbuf_auto, sack_compress, gso, cwnd_limited ("linux" = true), prr_entry ("linux" =
/// true), zero_window_probe ("linux" = true), ecn_reduction ("cwr" = true),
/// recovery_restart ("same_ack" = true), xmit_timer, reno_dupacks, old_ack_sack and
/// rack_retrans ("linux" = true each), tso_defer, psh, grow_quickack, pacing_credit,
/// paced_fast_retransmit, unpaced_start.
fn read_mechanisms(t: &mut Table) -> Res<[Option<bool>; 26]> {
    let mut m = [None; 26];
    for (i, key) in ["prr", "frto", "undo", "dsack", "rack", "tlp", "quickack"].iter().enumerate() {
        m[i] = t.opt_bool(key)?;
    }
    m[7] =
        t.opt_choice("rtt_sample", "RTT sampling", &["linux", "timestamp"])?.map(|s| s == "linux");
    m[8] = t.opt_bool("rcvbuf_auto")?;
    m[9] = t.opt_bool("sack_compress")?;
    m[10] = t.opt_bool("gso")?;
    m[11] = t
        .opt_choice("cwnd_limited", "cwnd-limited rule", &["flight", "linux"])?
        .map(|s| s == "linux");
    m[12] = t
        .opt_choice("prr_entry", "PRR entry order", &["retransmit_first", "linux"])?
        .map(|s| s == "linux");
    m[13] = t
        .opt_choice("zero_window_probe", "zero-window probe", &["byte", "linux"])?
        .map(|s| s == "linux");
    m[14] =
        t.opt_choice("ecn_reduction", "ECN reduction", &["at_once", "cwr"])?.map(|s| s == "cwr");
    m[15] = t
        .opt_choice("recovery_restart", "recovery restart", &["same_ack", "next_ack"])?
        .map(|s| s == "same_ack");
    let linux = |s: &str| s == "linux";
    m[16] =
        t.opt_choice("xmit_timer", "transmission-timer rule", &["every_ack", "linux"])?.map(linux);
    m[17] = t
        .opt_choice("reno_dupacks", "duplicate-ACK accounting", &["every_segment", "linux"])?
        .map(linux);
    m[18] = t.opt_choice("old_ack_sack", "old-ACK SACK rule", &["ignore", "linux"])?.map(linux);
    m[19] = t
        .opt_choice("rack_retrans", "RACK retransmission rule", &["new_data_only", "linux"])?
        .map(linux);
    m[20] = t.opt_bool("tso_defer")?;
    m[21] = t.opt_bool("psh")?;
    m[22] = t.opt_bool("grow_quickack")?;
    m[23] = t.opt_bool("pacing_credit")?;
    m[24] = t.opt_bool("paced_fast_retransmit")?;
    m[25] = t.opt_bool("unpaced_start")?;
    Ok(m)
}

/// The switches set in `m`, the others from Linux's rule set or the defaults.
fn mechanisms(m: &[Option<bool>; 26], linux_rules: bool) -> crate::tcp::Mechanisms {
    let d = if linux_rules {
        crate::tcp::Mechanisms::linux()
    } else {
        crate::tcp::Mechanisms::default()
    };
    crate::tcp::Mechanisms {
        prr: m[0].unwrap_or(d.prr),
        frto: m[1].unwrap_or(d.frto),
        undo: m[2].unwrap_or(d.undo),
        dsack: m[3].unwrap_or(d.dsack),
        rack: m[4].unwrap_or(d.rack),
        tlp: m[5].unwrap_or(d.tlp),
        quickack: m[6].unwrap_or(d.quickack),
        linux_rtt: m[7].unwrap_or(d.linux_rtt),
        rcvbuf_auto: m[8].unwrap_or(d.rcvbuf_auto),
        sack_compress: m[9].unwrap_or(d.sack_compress),
        gso: m[10].unwrap_or(d.gso),
        tso_defer: m[20].unwrap_or(d.tso_defer),
        psh: m[21].unwrap_or(d.psh),
        grow_quickack: m[22].unwrap_or(d.grow_quickack),
        linux_cwnd_limited: m[11].unwrap_or(d.linux_cwnd_limited),
        prr_linux_entry: m[12].unwrap_or(d.prr_linux_entry),
        linux_zero_window_probe: m[13].unwrap_or(d.linux_zero_window_probe),
        linux_xmit_timer_on_progress: m[16].unwrap_or(d.linux_xmit_timer_on_progress),
        linux_reno_sacks: m[17].unwrap_or(d.linux_reno_sacks),
        linux_old_ack_sack: m[18].unwrap_or(d.linux_old_ack_sack),
        linux_rack_retrans: m[19].unwrap_or(d.linux_rack_retrans),
        linux_cwr: m[14].unwrap_or(d.linux_cwr),
        linux_recovery_restart: m[15].unwrap_or(d.linux_recovery_restart),
        pacing_credit: m[23].unwrap_or(d.pacing_credit),
        paced_fast_retransmit: m[24].unwrap_or(d.paced_fast_retransmit),
        unpaced_start: m[25].unwrap_or(d.unpaced_start),
    }
}

/// `rules = "linux"` covers the controller's Linux rule too: CUBIC's HyStart rounds from the
/// first ACK (`cc_params.hystart_rounds = "linux"`) unless the flow sets the key. The
/// parameters to parse again with it, or `None` when nothing changes.
fn with_linux_hystart(cc: &cc::CcSpec, params: Option<&Value>) -> Option<Value> {
    const KEY: &str = "hystart_rounds";
    if !cc.entry().keys.contains(&KEY) || params.is_some_and(|p| p.get(KEY).is_some()) {
        return None;
    }
    let mut p = params.cloned().unwrap_or_else(|| Value::Object(Default::default()));
    p.as_object_mut()?.insert(KEY.into(), Value::String("linux".into()));
    Some(p)
}

/// `ecn = false | true | "off" | "classic" | "accecn"` (the booleans mean off and classic).
fn ecn_mode(t: &mut Table) -> Res<Option<(EcnMode, String)>> {
    let p = t.key_path("ecn");
    let mode = match t.get("ecn") {
        None => return Ok(None),
        Some(Value::Bool(false)) => EcnMode::Off,
        Some(Value::Bool(true)) => EcnMode::Classic,
        Some(v @ Value::String(_)) => match reader::choice(&p, v, "ECN mode", EcnMode::KNOWN)? {
            "off" => EcnMode::Off,
            "classic" => EcnMode::Classic,
            _ => EcnMode::AccEcn,
        },
        Some(_) => {
            return err(
                &p,
                format!("expected true, false or one of \"{}\"", EcnMode::KNOWN.join("\", \"")),
            )
        }
    };
    Ok(Some((mode, p)))
}

/// A controller's ECN needs against the flow's `ecn` setting: DCTCP needs ECN (RFC 8257
/// §3), Prague needs Accurate ECN (RFC 9331 §4.2); both request it themselves when `ecn` is
/// unset, as Linux's modules do (TCP_CONG_NEEDS_ECN / NEEDS_ACCECN).
fn ecn_for_cc(cc: &cc::CcSpec, set: Option<&(EcnMode, String)>, tcp: &mut TcpCfg) -> Res<()> {
    let needs = cc.ecn_needs();
    let Some((mode, path)) = set else {
        if let Some(m) = needs {
            tcp.ecn = m;
        }
        return Ok(());
    };
    match (cc.name(), needs, *mode) {
        // A controller that asks for AccECN (prague) cannot run on less.
        (name, Some(EcnMode::AccEcn), EcnMode::Off | EcnMode::Classic) => err(
            path,
            format!("{name} needs Accurate ECN feedback: it sends ECT(1) and reacts to every CE mark (use \"accecn\", its default; got \"{}\")", mode.label()),
        ),
        (name, Some(_), EcnMode::Off) => err(path, format!("{name} reacts to ECN marks and needs ECN (use \"classic\" or \"accecn\"; got \"off\")")),
        _ => Ok(()),
    }
}

/// `rwnd` (an entry of the receive-window registry, default `static`) with `rwnd_params`.
fn rwnd_policy(t: &mut Table, topo: &Topology) -> Res<RwndPolicy> {
    let known: Vec<&'static str> = POLICIES.iter().map(|e| e.name).collect();
    let name = t.opt_choice("rwnd", "receive-window policy", &known)?.unwrap_or("static");
    let entry =
        POLICIES.iter().find(|e| e.name == name).expect("opt_choice() only returns known names");
    if entry.extra.channel && topo.kind != TopologyKind::Cellular {
        return err(
            &t.key_path("rwnd"),
            format!("{name} reads the capacity of the receiver's radio link, which only the cellular topology models (kind = \"cellular\")"),
        );
    }
    let pp = t.key_path("rwnd_params");
    let empty = Value::Object(Default::default());
    let mut pt = Table::new(&pp, t.get("rwnd_params").unwrap_or(&empty))?;
    let params = (entry.parse)(&mut pt, &())?;
    pt.finish(entry.keys)?;
    Ok(RwndPolicy::new(entry, params))
}

fn positive(path: &str, d: Option<Dur>) -> Res<Option<Dur>> {
    match d {
        Some(Dur(0)) => err(path, "must be greater than 0 (got \"0s\")"),
        d => Ok(d),
    }
}

fn flow(path: &str, v: &Value, tcp_defaults: &TcpPartial, topo: &Topology) -> Res<FlowSpec> {
    let mut t = Table::new(path, v)?;
    let (refused, why) = match topo.graph {
        Some(_) => (NOT_GRAPH, "a graph flow goes from its src host to its dst host over the routes"),
        None => (GRAPH_ONLY, "hosts and patterns are settings of graph topologies (topology.kind = \"graph\", \"parking_lot\", \"leaf_spine\", \"fat_tree\")"),
    };
    if let Some(k) = refused.iter().find(|k| t.has(k)) {
        return err(&t.key_path(k), format!("not a setting here: {why}"));
    }
    let endpoints = match &topo.graph {
        Some(g) => Some(super::topology::flow_endpoints(&mut t, g)?),
        None => None,
    };
    let kind = t.opt_choice("transport", "transport", TRANSPORTS)?;
    let is_udp = kind == Some("udp");
    let is_dccp = kind == Some("dccp");
    let (own, other, label) = if is_dccp {
        (DCCP_KEYS, NOT_DCCP, "dccp")
    } else if is_udp {
        (UDP_ONLY, TCP_ONLY, "udp")
    } else {
        (TCP_ONLY, UDP_ONLY, "tcp")
    };
    // A video flow names its rate controller with `cc` (the only TCP key it takes).
    let is_video = is_udp && t.get("app").and_then(Value::as_str) == Some("video");
    if is_udp && !is_video && t.has("cc") {
        return err(
            &t.key_path("cc"),
            format!(
                "not a setting of udp flows (they take: {}), except as the video application's rate controller (app = \"video\", cc = \"gcc\" or \"scream\")",
                UDP_ONLY.join(", ")
            ),
        );
    }
    if let Some(k) = other
        .iter()
        .chain(if is_dccp { &[][..] } else { DCCP_ONLY })
        .find(|k| t.has(k) && !(is_video && **k == "cc"))
    {
        return err(
            &t.key_path(k),
            format!("not a setting of {label} flows (they take: {})", own.join(", ")),
        );
    }
    // DCCP's applications: greedy or constant rate, never sized.
    let dccp_app = if is_dccp {
        match t.opt_choice("app", "DCCP application", DCCP_APPS)? {
            Some("cbr") => {
                let Some(r) = t.opt_rate("rate")? else {
                    return err(
                        &t.key_path("rate"),
                        "missing required key (the constant sending rate, e.g. \"10Mbps\")",
                    );
                };
                if r.0 == 0 {
                    return err(&t.key_path("rate"), "must be greater than 0");
                }
                Some(DccpApp::Cbr(r))
            }
            _ => {
                if t.has("rate") {
                    return err(
                        &t.key_path("rate"),
                        "a setting of the constant-rate application (app = \"cbr\")",
                    );
                }
                Some(DccpApp::Greedy)
            }
        }
    } else {
        None
    };
    let count = t.opt_int("count", 1, 100_000)?.unwrap_or(1) as u32;
    let start = match t.get("start") {
        None => StartSpec::At(Dur::ZERO),
        Some(sv @ Value::String(_)) => StartSpec::At(reader::duration(&t.key_path("start"), sv)?),
        Some(sv) => {
            let sp = t.key_path("start");
            let mut st = Table::new(&sp, sv).map_err(|mut e| {
                e.message =
                    "expected a duration such as \"1s\" or { uniform = [\"1s\", \"8s\"] }".into();
                e
            })?;
            let up = st.key_path("uniform");
            let bounds = match st.require("uniform")? {
                Value::Array(a) if a.len() == 2 => (
                    reader::duration(&format!("{up}[0]"), &a[0])?,
                    reader::duration(&format!("{up}[1]"), &a[1])?,
                ),
                _ => return err(&up, "expected two durations, e.g. [\"1s\", \"8s\"]"),
            };
            st.finish(&["uniform"])?;
            if bounds.0 > bounds.1 {
                return err(
                    &up,
                    format!("lower bound {} is above upper bound {}", bounds.0, bounds.1),
                );
            }
            StartSpec::Uniform(bounds.0, bounds.1)
        }
    };
    let size = match t.get("size") {
        None => None,
        Some(Value::String(s)) if s == "unlimited" => None,
        Some(sv) => {
            let sp = t.key_path("size");
            let b = reader::size(&sp, sv).map_err(|mut e| {
                e.message = format!("{} or \"unlimited\"", e.message);
                e
            })?;
            if b == 0 {
                return err(&sp, "must be greater than 0 (or \"unlimited\")");
            }
            Some(b)
        }
    };
    let app = match if is_dccp { None } else { t.opt_choice("app", "application", APPS)? } {
        _ if is_dccp => match dccp_app {
            Some(DccpApp::Cbr(_)) => AppKind::Cbr,
            _ => AppKind::Bulk,
        },
        Some(a @ ("cbr" | "probe" | "voip" | "video")) if !is_udp => {
            return err(
                &t.key_path("app"),
                format!("{a} is a UDP application: set transport = \"udp\""),
            )
        }
        Some(a) if is_udp && !UDP_APPS.contains(&a) => {
            return err(
                &t.key_path("app"),
                format!(
                    "udp flows run app = \"cbr\", \"probe\", \"voip\" or \"video\", not \"{a}\""
                ),
            )
        }
        Some("cbr") => AppKind::Cbr,
        Some("probe") => AppKind::Probe,
        Some("voip") => AppKind::Voip,
        Some("video") => AppKind::Video(video_cfg(&mut t)?),
        None if is_udp => AppKind::Cbr,
        Some("web") => {
            let request = t.opt_size("request")?.unwrap_or(300);
            if request == 0 {
                return err(&t.key_path("request"), "must be greater than 0");
            }
            let think = t.opt_duration("think")?.unwrap_or(Dur::from_secs(1));
            let requests = t.opt_int("requests", 1, u32::MAX as i64)?.map(|n| n as u32);
            AppKind::Web(WebCfg { request, think, requests })
        }
        Some("page") => AppKind::Page(page_cfg(&mut t, size)?),
        Some("bulk") => {
            if size.is_some() {
                return err(
                    &t.key_path("size"),
                    "bulk flows are unlimited; use app = \"file\" for a sized transfer",
                );
            }
            AppKind::Bulk
        }
        Some(_) => {
            if size.is_none() {
                return err(&t.key_path("size"), "a file flow needs a size, e.g. \"5MB\"");
            }
            AppKind::File
        }
        None if size.is_some() => AppKind::File,
        None => AppKind::Bulk,
    };
    if matches!(app, AppKind::Video(_)) && size.is_some() {
        return err(&t.key_path("size"), "a video call runs until the end of the run (no size)");
    }
    if !matches!(app, AppKind::Video(_)) && t.has("video") {
        return err(&t.key_path("video"), "a setting of the video application (app = \"video\")");
    }
    if !matches!(app, AppKind::Page(_)) {
        if let Some(k) = PAGE_ONLY.iter().find(|k| t.has(k)) {
            return err(&t.key_path(k), "a setting of the page application (app = \"page\")");
        }
    }
    if !matches!(app, AppKind::Web(_)) {
        let page = matches!(app, AppKind::Page(_));
        let not_web = |k: &&&str| t.has(k) && !(page && PAGE_SHARED.contains(k));
        if let Some(k) = WEB_ONLY.iter().find(not_web) {
            return err(&t.key_path(k), "a setting of the web application (app = \"web\")");
        }
    }
    let size = match app {
        AppKind::Web(_) => Some(size.unwrap_or(320_000)),
        AppKind::Page(_) => Some(size.unwrap_or(crate::app::page::DEFAULT_SIZE)),
        _ => size,
    };
    let rtt = t.opt_duration("rtt")?;
    if rtt.is_some() && topo.kind == TopologyKind::Cellular {
        return err(&t.key_path("rtt"), "per-flow base RTTs are a dumbbell setting (cellular paths share the core and radio delays)");
    }
    if let Some(r) = rtt {
        let min = Dur(2 * topo.bottleneck.delay.0);
        if r < min || r.0 == 0 {
            return err(
                &t.key_path("rtt"),
                format!("must be at least twice the bottleneck delay ({min}) and > 0, got \"{r}\""),
            );
        }
    }
    let rwnd = rwnd_policy(&mut t, topo)?;
    let ue = match t.opt_int("ue", 0, u32::MAX as i64)? {
        Some(_) if topo.kind != TopologyKind::Cellular => {
            return err(&t.key_path("ue"), "only cellular topologies have UEs");
        }
        Some(u) if u as u32 >= topo.ues => {
            return err(
                &t.key_path("ue"),
                format!("no such UE (topology.ues = {}, so 0..{})", topo.ues, topo.ues - 1),
            );
        }
        u => u.map(|u| u as u32),
    };
    let transport = if let Some(app) = dccp_app {
        let name = reader::as_str(&t.key_path("cc"), t.require("cc")?)?;
        // DCCP flows take no `cc_params` (refused above); the path only names `cc` in errors.
        let cc =
            cc::CcSpec::parse_for(cc::CcTransport::Dccp, name, None, &t.key_path("cc_params"))?;
        let ack_ratio = t.opt_int("ack_ratio", 1, u16::MAX as i64)?.unwrap_or(2) as u32;
        let loss_window = match t.opt_duration("loss_window")? {
            None => Dur::from_secs(10),
            Some(Dur(0)) => {
                return err(&t.key_path("loss_window"), "must be greater than 0 (got \"0s\")")
            }
            Some(d) => d,
        };
        let packet_size = match t.opt_size("packet_size")? {
            None => 1460,
            Some(p) if (1..=65_000).contains(&p) => p as u32,
            Some(p) => {
                return err(
                    &t.key_path("packet_size"),
                    format!("must be between 1B and 65000B (got {p}B)"),
                )
            }
        };
        Transport::Dccp(DccpCfg { cc, ack_ratio, loss_window, packet_size, app })
    } else if is_udp {
        Transport::Udp(udp(&mut t, app)?)
    } else {
        let cc_name = reader::as_str(&t.key_path("cc"), t.require("cc")?)?;
        if VIDEO_CCS.contains(&cc_name) {
            return err(
                &t.key_path("cc"),
                format!("{cc_name} is a video rate controller: set transport = \"udp\" and app = \"video\""),
            );
        }
        let params_path = t.key_path("cc_params");
        let mut cc = cc::CcSpec::parse(cc_name, t.get("cc_params"), &params_path)?;
        let partial = match t.get("tcp") {
            Some(tv) => TcpPartial::read(&t.key_path("tcp"), tv)?.over(tcp_defaults),
            None => tcp_defaults.clone(),
        };
        if partial.linux_rules == Some(true) {
            if let Some(p) = with_linux_hystart(&cc, t.get("cc_params")) {
                cc = cc::CcSpec::parse(cc_name, Some(&p), &params_path)?;
            }
        }
        let mut tcp = partial.resolve(&t.key_path("tcp"))?;
        ecn_for_cc(&cc, partial.ecn.as_ref(), &mut tcp)?;
        Transport::Tcp { cc, tcp }
    };
    let default_group = match &transport {
        Transport::Tcp { cc, .. } => cc.name(),
        Transport::Udp(u) if u.video.is_some() => "video",
        Transport::Udp(_) => "udp",
        Transport::Dccp(d) => d.cc.name(),
    };
    let group = t.opt_str("group")?.unwrap_or(default_group).to_string();
    let direction = match t.opt_choice("direction", "direction", Direction::KNOWN)? {
        Some("reverse") => Direction::Reverse,
        _ => Direction::Forward,
    };
    let host = super::queue::flow_host(&mut t)?;
    let dscp = super::queue::flow_dscp(&mut t)?;
    t.finish(FLOW_KEYS)?;
    Ok(FlowSpec {
        transport,
        count,
        start,
        size,
        app,
        rtt,
        rwnd,
        ue,
        group,
        direction,
        host,
        dscp,
        endpoints,
    })
}

/// A UDP flow's source: constant bit rate (`rate`), echoed probes or voice frames (`interval`).
/// The page application's settings (app/page.rs); `size` is the page's total.
fn page_cfg(t: &mut Table, size: Option<u64>) -> Res<PageCfg> {
    use crate::app::page::{DEFAULT_HTML, DEFAULT_OBJECTS, DEFAULT_SIZE, MAX_CONNECTIONS};
    let objects = t.opt_int("objects", 1, 100_000)?.map_or(DEFAULT_OBJECTS, |n| n as u32);
    let total = size.unwrap_or(DEFAULT_SIZE);
    let html = match t.opt_size("html")? {
        Some(0) => return err(&t.key_path("html"), "must be greater than 0"),
        _ if objects == 1 => total,
        Some(h) => h,
        None => DEFAULT_HTML.min(total.saturating_sub(objects as u64 - 1)).max(1),
    };
    if total < html + (objects as u64 - 1) {
        let others = objects - 1;
        let need =
            format!("at least the HTML ({html} B) plus one byte per other object ({others})");
        let k = if t.has("size") { "size" } else { "html" };
        return err(&t.key_path(k), format!("the page is {total} B, it must be {need}"));
    }
    let connections = t.opt_int("connections", 1, MAX_CONNECTIONS as i64)?;
    let connections = connections.map_or(MAX_CONNECTIONS, |n| n as u32);
    let multiplex = t.opt_bool("multiplex")?.unwrap_or(false);
    if multiplex && t.has("connections") && connections != 1 {
        return err(&t.key_path("connections"), "a multiplexed page uses one connection");
    }
    let request = t.opt_size("request")?.unwrap_or(400);
    if request == 0 {
        return err(&t.key_path("request"), "must be greater than 0");
    }
    let think = t.opt_duration("think")?.unwrap_or(Dur::from_secs(1));
    let pages = t.opt_int("pages", 1, u32::MAX as i64)?.map(|n| n as u32);
    Ok(PageCfg { objects, html, connections, multiplex, request, think, pages })
}

/// The video application's settings: `cc` (its rate controller) and the `video` table.
/// Defaults: 30 frames/s; start 1 Mbit/s, min 150 kbit/s, max 20 Mbit/s (WebRTC's own
/// defaults are 300 kbit/s, 30 kbit/s and 2.5 Mbit/s for one camera; ours let a call fill a
/// 10-20 Mbit/s link); I-frames only at the start unless `iframe_interval` is set (WebRTC sends key frames at the start and on the receiver's request, RFC 4585 PLI, not periodically), an I-frame 4 P-frames big; the encoder follows its target
/// with a 100 ms time constant (3 frames); feedback every 20 ms while data arrives; the
/// freeze rule's additive 150 ms (W3C webrtc-stats freezeCount).
fn video_cfg(t: &mut Table) -> Res<crate::app::VideoCfg> {
    use crate::app::video::Controller;
    let mbps = |r: Rate| format!("{}Mbps", r.0 as f64 / 1e6);
    let cc = match t.opt_choice("cc", "video rate controller", VIDEO_CCS)? {
        Some(c) => c,
        None => {
            return err(
                &t.key_path("cc"),
                "missing required key (a video flow's rate controller: \"gcc\" or \"scream\")",
            )
        }
    };
    let vp = t.key_path("video");
    let empty = Value::Object(Default::default());
    let mut v = Table::new(&vp, t.get("video").unwrap_or(&empty))?;
    let fps = v.opt_int("fps", 1, 240)?.unwrap_or(30) as u32;
    let rate = |v: &mut Table, k: &'static str, d: u64| -> Res<Rate> {
        match v.opt_rate(k)? {
            Some(r) if r.0 == 0 => err(&v.key_path(k), "must be greater than 0"),
            Some(r) => Ok(r),
            None => Ok(Rate(d)),
        }
    };
    let min_rate = rate(&mut v, "min_rate", 150_000)?;
    let max_rate = rate(&mut v, "max_rate", 20_000_000)?;
    let start_rate = rate(&mut v, "start_rate", 1_000_000)?;
    if min_rate > max_rate {
        return err(
            &v.key_path("min_rate"),
            format!("must not exceed max_rate ({} > {})", mbps(min_rate), mbps(max_rate)),
        );
    }
    if start_rate < min_rate || start_rate > max_rate {
        return err(
            &v.key_path("start_rate"),
            format!(
                "must lie between min_rate and max_rate ({} to {}), got {}",
                mbps(min_rate),
                mbps(max_rate),
                mbps(start_rate)
            ),
        );
    }
    let iframe_interval = match v.get("iframe_interval") {
        Some(Value::String(s)) if s == "none" => None,
        Some(_) => match v.opt_duration("iframe_interval")? {
            Some(Dur(0)) => {
                return err(&v.key_path("iframe_interval"), "must be greater than 0 (or \"none\")")
            }
            d => d,
        },
        None => None,
    };
    let iframe_ratio = v.opt_int("iframe_ratio", 1, 50)?.unwrap_or(4) as u32;
    let encoder_lag = v.opt_duration("encoder_lag")?.unwrap_or(Dur::from_millis(100));
    let feedback = match v.opt_duration("feedback")? {
        Some(d) if d.0 == 0 || d > Dur::from_secs(1) => {
            return err(
                &v.key_path("feedback"),
                format!("must be greater than 0 and at most 1s, got \"{d}\""),
            )
        }
        d => d.unwrap_or(Dur::from_millis(20)),
    };
    let freeze = v.opt_duration("freeze")?.unwrap_or(Dur::from_millis(150));
    let l4s = v.opt_bool("l4s")?.unwrap_or(false);
    if l4s && cc != "scream" {
        return err(&v.key_path("l4s"), "the L4S mode is SCReAM's (cc = \"scream\")");
    }
    // WebRTC negotiates NACK for video by default (RFC 4585 generic NACK, RFC 4588 RTX).
    let nack = v.opt_bool("nack")?.unwrap_or(true);
    // SCReAM's competing-flow compensation (RFC 8298 §4.1.2): on unless switched off, as the
    // RFC allows where no competing flow can share the bottleneck.
    let compensation = v.opt_bool("compensation")?;
    if compensation.is_some() && cc != "scream" {
        return err(
            &v.key_path("compensation"),
            "the competing-flow compensation is SCReAM's (cc = \"scream\")",
        );
    }
    let compensation = compensation.unwrap_or(true);
    v.finish(VIDEO_KEYS)?;
    let controller = if cc == "gcc" { Controller::Gcc } else { Controller::Scream { l4s } };
    Ok(crate::app::VideoCfg {
        controller,
        fps,
        start_rate,
        min_rate,
        max_rate,
        iframe_interval,
        iframe_ratio,
        encoder_lag,
        feedback,
        freeze,
        nack,
        compensation,
    })
}

fn udp(t: &mut Table, app: AppKind) -> Res<UdpCfg> {
    if let AppKind::Video(v) = app {
        for k in ["packet_size", "interval", "rate"] {
            if t.has(k) {
                return err(&t.key_path(k), "not a setting of app = \"video\" (its encoder sizes the packets; see flows[].video)");
            }
        }
        return Ok(UdpCfg {
            app: UdpApp::Video,
            gap: v.frame_interval(),
            payload: 1200,
            video: Some(v),
        });
    }
    let (kind, default_payload) = match app {
        AppKind::Probe => (UdpApp::Probe, PROBE_PAYLOAD),
        AppKind::Voip => (UdpApp::Voip, VOIP_PAYLOAD),
        _ => (UdpApp::Cbr, 1472),
    };
    let payload = match t.opt_size("packet_size")? {
        None => default_payload,
        Some(p) if (1..=65_507).contains(&p) => p as u32,
        Some(p) => {
            return err(
                &t.key_path("packet_size"),
                format!("must be between 1B and 65507B (got {p}B)"),
            )
        }
    };
    let gap = if kind == UdpApp::Cbr {
        if t.has("interval") {
            return err(
                &t.key_path("interval"),
                "a setting of app = \"probe\" or \"voip\" (a CBR flow sets its rate)",
            );
        }
        match t.opt_rate("rate")? {
            Some(r) if r.0 > 0 => r.tx_time((payload + UDP_HEADER_BYTES) as u64),
            Some(_) => return err(&t.key_path("rate"), "must be greater than 0"),
            None => {
                return err(
                    &t.key_path("rate"),
                    "missing required key (the CBR sending rate, e.g. \"13.35Mbps\")",
                )
            }
        }
    } else {
        if t.has("rate") {
            return err(
                &t.key_path("rate"),
                format!(
                    "a setting of app = \"cbr\" ({} flows send one datagram per interval)",
                    kind.name()
                ),
            );
        }
        let default = if kind == UdpApp::Probe { PROBE_INTERVAL } else { VOIP_INTERVAL };
        match t.opt_duration("interval")? {
            None => default,
            Some(Dur(0)) => {
                return err(&t.key_path("interval"), "must be greater than 0 (got \"0s\")")
            }
            Some(d) => d,
        }
    };
    Ok(UdpCfg { app: kind, gap, payload, video: None })
}

/// irtt-like probes: small datagrams (sequence number and timestamps) every 200 ms, Flent's
/// default sampling step.
const PROBE_PAYLOAD: u32 = 64;
const PROBE_INTERVAL: Dur = Dur::from_millis(200);
/// A G.711 voice frame of 20 ms (160 B) with its 12-byte RTP header.
const VOIP_PAYLOAD: u32 = 172;
const VOIP_INTERVAL: Dur = Dur::from_millis(20);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "duration": "10s",
            "topology": { "bottleneck": { "rate": "10Mbps", "delay": "10ms" } },
            "flows": [ { "cc": "newreno" } ]
        })
    }

    fn error_of(v: Value) -> (String, String) {
        let e = Scenario::from_value(&v).unwrap_err();
        (e.path, e.message)
    }

    fn tcp_of(v: &Value, i: usize) -> (TcpCfg, crate::cc::CcSpec) {
        let s = Scenario::from_value(v).unwrap();
        let Transport::Tcp { tcp, cc } = &s.flows[i].transport else { panic!("tcp flow") };
        (tcp.clone(), cc.clone())
    }

    #[test]
    fn ecn_modes_and_controller_defaults() {
        let mut v = base();
        assert_eq!(tcp_of(&v, 0).0.ecn, EcnMode::Off);
        for (val, mode) in [
            (json!(true), EcnMode::Classic),
            (json!(false), EcnMode::Off),
            (json!("classic"), EcnMode::Classic),
            (json!("accecn"), EcnMode::AccEcn),
            (json!("off"), EcnMode::Off),
        ] {
            v["tcp"] = json!({ "ecn": val });
            assert_eq!(tcp_of(&v, 0).0.ecn, mode, "{val}");
        }
        // The flow's own table wins over the global one.
        v["flows"][0]["tcp"] = json!({ "ecn": "accecn" });
        v["tcp"] = json!({ "ecn": true });
        assert_eq!(tcp_of(&v, 0).0.ecn, EcnMode::AccEcn);
        // Scalable controllers ask for ECN themselves: DCTCP classic (RFC 8257), Prague AccECN.
        let mut v = base();
        v["flows"] = json!([ { "cc": "dctcp" }, { "cc": "prague" }, { "cc": "dctcp", "tcp": { "ecn": "accecn" } } ]);
        assert_eq!(tcp_of(&v, 0).0.ecn, EcnMode::Classic);
        assert_eq!(tcp_of(&v, 1).0.ecn, EcnMode::AccEcn);
        assert_eq!(tcp_of(&v, 2).0.ecn, EcnMode::AccEcn);
        v["flows"][0]["cc_params"] = json!({ "ect": "ect1", "g": 0.125 });
        assert_eq!(
            format!("{:?}", tcp_of(&v, 0).1.params()),
            format!("{:?}", crate::cc::DctcpParams { g: 0.125, ect: crate::net::Ecn::Ect1 })
        );
    }

    #[test]
    fn bad_ecn_settings_name_their_key() {
        let mut v = base();
        v["tcp"] = json!({ "ecn": "l4s" });
        let (p, m) = error_of(v.clone());
        assert_eq!(p, "tcp.ecn");
        assert!(m.contains("unknown ECN mode \"l4s\" (known: off, classic, accecn)"), "{m}");
        v["tcp"] = json!({ "ecn": 1 });
        let (p, m) = error_of(v.clone());
        assert_eq!(p, "tcp.ecn");
        assert!(m.contains("true, false") && m.contains("accecn"), "{m}");
        let mut v = base();
        v["flows"][0]["tcp"] = json!({ "ecn": "on" });
        assert_eq!(error_of(v).0, "flows[0].tcp.ecn");
        // Prague without Accurate ECN, DCTCP without ECN: the key that said so is named.
        for (cc, ecn, path) in [
            ("prague", json!("classic"), "flows[0].tcp.ecn"),
            ("prague", json!(false), "flows[0].tcp.ecn"),
            ("dctcp", json!("off"), "flows[0].tcp.ecn"),
        ] {
            let mut v = base();
            v["flows"][0] = json!({ "cc": cc, "tcp": { "ecn": ecn } });
            let (p, m) = error_of(v);
            assert_eq!(p, path, "{cc} {ecn}");
            assert!(m.contains(cc) && m.contains("ECN"), "{m}");
        }
        let mut v = base();
        v["tcp"] = json!({ "ecn": true });
        v["flows"][0] = json!({ "cc": "prague" });
        let (p, m) = error_of(v);
        assert_eq!(p, "tcp.ecn", "a global setting is named where it was made");
        assert!(m.contains("accecn"), "{m}");
        // ECT(1) is for scalable controllers only.
        let mut v = base();
        v["flows"][0] = json!({ "cc": "cubic", "cc_params": { "ect": "ect1" } });
        let (p, m) = error_of(v);
        assert_eq!(p, "flows[0].cc_params.ect");
        assert!(m.contains("ECT(1)"), "{m}");
        let mut v = base();
        v["flows"][0] = json!({ "cc": "prague", "cc_params": { "ect": "ect0" } });
        assert_eq!(error_of(v).0, "flows[0].cc_params.ect");
        let mut v = base();
        v["flows"][0] = json!({ "cc": "dctcp", "cc_params": { "ect": "ect2" } });
        assert_eq!(error_of(v).0, "flows[0].cc_params.ect");
        let mut v = base();
        v["flows"][0] = json!({ "cc": "prague", "cc_params": { "rtt_independence": "yes" } });
        let (p, m) = error_of(v);
        assert_eq!(p, "flows[0].cc_params.rtt_independence");
        assert!(m.contains("off, rate"), "{m}");
        let mut v = base();
        v["flows"][0] = json!({ "cc": "prague", "cc_params": { "alpha": 0.5 } });
        let (p, m) = error_of(v);
        assert_eq!(p, "flows[0].cc_params.alpha");
        assert!(m.contains("target_rtt"), "{m}");
    }

    #[test]
    fn minimal_scenario_gets_defaults() {
        let s = Scenario::from_value(&base()).unwrap();
        assert_eq!(s.seed, 1);
        let Transport::Tcp { tcp, .. } = &s.flows[0].transport else { panic!("tcp flow") };
        assert_eq!(tcp.mss, 1448);
        assert_eq!(tcp.recovery, Recovery::Sack);
        assert_eq!(s.topology.bottleneck_queue.limit, QueueLimit::Packets(1000));
        assert_eq!(s.base_rtt(&s.flows[0]), Dur::from_millis(20));
    }

    #[test]
    fn errors_name_their_key_paths() {
        let mut v = base();
        v["flows"][0]["cc"] = json!("cubik");
        let (p, m) = error_of(v);
        assert_eq!(p, "flows[0].cc");
        assert!(m.contains("known: "), "{m}");

        let mut v = base();
        v["topology"]["bottlenek"] = json!({});
        assert_eq!(error_of(v).0, "topology.bottlenek");

        let mut v = base();
        v["duration"] = json!("0s");
        assert_eq!(error_of(v).0, "duration");

        let mut v = base();
        v["topology"]["bottleneck"]["rate"] = json!("-3Mbps");
        assert_eq!(error_of(v).0, "topology.bottleneck.rate");

        let mut v = base();
        v["flows"][0]["tcp"] = json!({ "rto_min": "0s" });
        assert_eq!(error_of(v).0, "flows[0].tcp.rto_min");

        let mut v = base();
        v["flows"][0]["start"] = json!({ "uniform": ["8s", "1s"] });
        assert_eq!(error_of(v).0, "flows[0].start.uniform");

        let mut v = base();
        v["flows"][0]["rtt"] = json!("5ms");
        assert_eq!(error_of(v).0, "flows[0].rtt");

        let mut v = base();
        v["flows"][0] = json!({ "transport": "udp" });
        assert_eq!(error_of(v).0, "flows[0].rate");

        let mut v = base();
        v["flows"][0] = json!({ "transport": "udp", "rate": "1Mbps", "cc": "reno" });
        let (p, m) = error_of(v);
        assert_eq!(p, "flows[0].cc");
        assert!(m.contains("rate, packet_size"), "{m}");

        let mut v = base();
        v["flows"][0]["app"] = json!("cbr");
        assert_eq!(error_of(v).0, "flows[0].app");

        let mut v = base();
        v["topology"]["bottleneck_queue"] = json!({ "kind": "droptail", "limit": "0p" });
        assert_eq!(error_of(v).0, "topology.bottleneck_queue.limit");
    }
}
