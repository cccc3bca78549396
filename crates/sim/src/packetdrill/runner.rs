//! Runs a parsed script against one simulated TCP endpoint with an event loop of its own:
//! the endpoint's timers go on a private [`EventQueue`], inbound segments are handed to
//! [`TcpSocket::on_packet`] at their script times, and everything the endpoint sends is
//! queued, time-stamped, for the script's outbound lines to match in order.
//!
//! Timing follows packetdrill: an outbound segment must leave within `tolerance` of its
//! script time (or of its `lo~hi` range); relative times count from the previous event's
//! script time, or from its actual time when it was a range or `*`. An expected segment
//! longer than the MSS (Linux's TSO writes one) matches the run of contiguous segments the
//! endpoint sends at one instant. Segments the endpoint sends that no line expects before
//! the next expected one are a mismatch; those left at the end of the script are ignored.

use std::collections::{BTreeMap, VecDeque};

use super::ast::*;
use super::expr;
use super::{Options, Outcome};
use crate::cc::{build, BuildCtx, CcSpec};
use crate::engine::{Event as SimEvent, EventQueue, SimRng, Stream};
use crate::ids::{FlowId, RouteId, SockId};
use crate::linux;
use crate::net::{Ecn, Header, Packet, PacketPool, SackBlocks, SynOptions, TcpFlags, TcpHeader};
use crate::tcp::{Cx, SockError, TcpInfo, TcpSocket, TcpState};
use crate::tcp::{Recovery, TcpCfg};
use crate::units::SimTime;
use crate::wire::EcnMode;

/// Linux's TCP timestamp clock: one tick per millisecond. Script TS values are in ticks.
const TS_TICK_NS: u64 = 1_000_000;

/// Why a script stopped early.
enum Stop {
    Failed(String),
    Unsupported(String),
}

type Step = Result<(), Stop>;

fn fail<T>(msg: impl Into<String>) -> Result<T, Stop> {
    Err(Stop::Failed(msg.into()))
}

fn unsupported<T>(msg: impl Into<String>) -> Result<T, Stop> {
    Err(Stop::Unsupported(msg.into()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FdKind {
    Socket,
    Listener,
    Conn,
}

#[derive(Debug, Clone, Copy)]
struct Fd {
    kind: FdKind,
    nonblock: bool,
}

/// What the endpoint sent: a segment, or a TSO-sized run of them merged.
#[derive(Debug, Clone)]
struct Seen {
    at: SimTime,
    ecn: Ecn,
    flags: u16,
    seq: u64,
    len: u64,
    ack: u64,
    win: u16,
    ts: Option<(u64, u64)>,
    sack: Vec<(u64, u64)>,
    syn: Option<SynOptions>,
}

pub struct Runner {
    tol: u64,
    now: SimTime,
    pool: PacketPool,
    events: EventQueue,
    sock: Option<TcpSocket>,
    cfg: TcpCfg,
    cc: CcSpec,
    /// net.ipv4.tcp_ecn: 0 off, 1 request and accept, 2 accept only (Linux's default).
    ecn_mode: u8,
    fds: BTreeMap<i64, Fd>,
    accepted: bool,
    sndbuf: Option<u64>,
    nodelay: bool,
    /// Bytes the script has read.
    consumed: u64,
    /// shutdown(SHUT_RD) was called: reads with nothing queued return 0.
    shut_rd: bool,
    /// When the endpoint last received data, or became established (Linux's lrcvtime,
    /// tcpi_last_data_recv): the runner hands the socket every segment, so it keeps it.
    last_data_recv: Option<SimTime>,
    /// Linux's chrono accounting (tcpi_busy_time, tcpi_rwnd_limited), kept from the socket's
    /// state after every step.
    chrono: Chrono,
    pending: VecDeque<Seen>,
    last_script: u64,
    last_actual: u64,
    last_loose: bool,
    /// (script TS value, simulator TS value) of the first outbound timestamp matched.
    ts_map: Option<(u64, u64)>,
    /// A blocking connect() in progress: the script time it must have returned by.
    blocked_connect: Option<u64>,
    /// TCP_MAXSEG was set.
    user_mss: bool,
    blocked_span: u64,
    /// The base of the current event's relative time, if it is relative.
    rel_base: Option<u64>,
}

/// Runs `script`; the first mismatch, unsupported line or the end decides the outcome.
pub fn run(script: &Script, opts: &Options) -> Outcome {
    // Lines that cannot be modeled make the whole script unsupported before it runs.
    for ev in &script.events {
        let what = match &ev.kind {
            Kind::Unsupported(w) => Some(w.clone()),
            Kind::Shell(cmd) => shell_settings(cmd).err(),
            Kind::Flag(name, value) => check_flag(name, value).err(),
            _ => None,
        };
        if let Some(what) = what {
            return Outcome::Unsupported { line: ev.line, col: ev.col, what };
        }
    }
    // A `--tolerance_usecs=N` line in the script overrides the command line's, as in packetdrill.
    let mut opts = *opts;
    for ev in &script.events {
        if let Kind::Flag(name, value) = &ev.kind {
            if let Ok(Some(t)) = check_flag(name, value) {
                opts.tolerance_usecs = t;
            }
        }
    }
    let mut r = Runner::new(&opts);
    for ev in &script.events {
        if let Err(stop) = r.event(ev) {
            return match stop {
                Stop::Failed(message) => Outcome::Failed { line: ev.line, col: ev.col, message },
                Stop::Unsupported(what) => {
                    Outcome::Unsupported { line: ev.line, col: ev.col, what }
                }
            };
        }
    }
    if let (Err(Stop::Failed(message)), Some(ev)) =
        (r.connect_returned(u64::MAX), script.events.last())
    {
        return Outcome::Failed { line: ev.line, col: ev.col, message };
    }
    Outcome::Passed
}

/// Linux's defaults as far as the simulator models them, as a freshly booted kernel has them
/// ([`linux::SYSCTL_TCP`]).
fn linux_defaults() -> TcpCfg {
    let mut cfg = TcpCfg::linux(&linux::SYSCTL_TCP);
    // Linux's rules where the simulator's default keeps its earlier results (docs/tcp.md),
    // but for TSO deferral, under which four scripts fail (docs/packetdrill.md).
    cfg.mech = crate::tcp::Mechanisms { tso_defer: false, ..crate::tcp::Mechanisms::linux() };
    // Scripts write what they write: their writes are checked against SO_SNDBUF below, not
    // queued behind a modelled send buffer (whose memory is counted in payload bytes, not
    // Linux's skb truesize that SO_SNDBUF scripts test).
    cfg.sndbuf = crate::tcp::SNDBUF_UNLIMITED;
    cfg
}

/// The simulator's controller for Linux's name of one (TCP_CONGESTION).
fn linux_cc(name: &str) -> Option<CcSpec> {
    CcSpec::parse(linux::sim_cc(name)?, None, "cc_params").ok()
}

fn linux_cc_name(spec_name: &str) -> &str {
    linux::kernel_cc(spec_name).unwrap_or(spec_name)
}

/// What `../common/defaults.sh` of the upstream suite (google/packetdrill gtests/net/common)
/// sets: the production values its scripts are written against, recorded here as facts.
const DEFAULTS_SH: &[(&str, &str)] = &[
    ("net.ipv4.tcp_rmem", "4096 540000 15728640"),
    ("net.ipv4.tcp_wmem", "4096 262144 4194304"),
    ("net.ipv4.tcp_timestamps", "1"),
    ("net.ipv4.tcp_syn_retries", "5"),
    ("net.ipv4.tcp_synack_retries", "5"),
    ("net.ipv4.tcp_frto", "2"),
    ("net.ipv4.tcp_sack", "1"),
    ("net.ipv4.tcp_dsack", "1"),
    ("net.ipv4.tcp_fack", "0"),
    ("net.ipv4.tcp_reordering", "3"),
    ("net.ipv4.tcp_congestion_control", "cubic"),
    ("net.ipv4.tcp_slow_start_after_idle", "0"),
    ("net.ipv4.tcp_early_retrans", "4"),
    ("net.ipv4.tcp_recovery", "1"),
    ("net.ipv4.tcp_tso_win_divisor", "3"),
    ("net.ipv4.tcp_ecn", "0"),
    ("net.ipv4.tcp_ecn_option", "2"),
    ("net.ipv4.tcp_pacing_ss_ratio", "200"),
    ("net.ipv4.tcp_pacing_ca_ratio", "120"),
    ("net.ipv4.tcp_notsent_lowat", "4294967295"),
    ("net.ipv4.tcp_fastopen", "0x70403"),
    ("net.ipv4.tcp_syncookies", "1"),
];

/// Settings that `tc` and `ethtool` commands make (`shell_settings` returns them beside the
/// sysctls): fq pacing, and GSO on or off.
const QDISC_FQ: &str = "qdisc.fq";
const OFFLOAD_GSO: &str = "offload.gso";

/// The settings the runner reads — sysctls, and the two that `tc` and `ethtool` make
/// (anything else is ignored, see [`ignored_sysctls`]).
const MODELED_SETTINGS: &[&str] = &[
    QDISC_FQ,
    OFFLOAD_GSO,
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_dsack",
    "net.ipv4.tcp_frto",
    "net.ipv4.tcp_early_retrans",
    "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_moderate_rcvbuf",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_syn_linear_timeouts",
];

/// Shell words of one command line: double and single quotes group, `$((a*b))` is
/// evaluated (products of integers, as the suite writes buffer sizes), `#` starts a comment.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut quote: Option<char> = None;
    let cs: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (_, '$') if cs.get(i + 1) == Some(&'(') && cs.get(i + 2) == Some(&'(') => {
                let rest: String = cs[i + 3..].iter().collect();
                let Some(k) = rest.find("))") else {
                    cur.push(c);
                    i += 1;
                    continue;
                };
                let prod = rest[..k]
                    .split('*')
                    .map(|x| x.trim().parse::<u64>().ok())
                    .product::<Option<u64>>();
                match prod {
                    Some(v) => cur += &v.to_string(),
                    None => cur += &rest[..k],
                }
                i += 3 + rest[..k].chars().count() + 2;
                any = true;
                continue;
            }
            (None, '#') if cur.is_empty() => break,
            (None, ' ' | '\t') => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            _ => {
                cur.push(c);
                any = true;
            }
        }
        i += 1;
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The settings a shell command makes (sysctl assignments, by `sysctl` or the suite's
/// `set_sysctls.py /proc/sys/...=v`); other commands are unsupported, except the upstream
/// suite's `defaults.sh` preamble ([`DEFAULTS_SH`]), its `ip tcp_metrics flush` and the
/// restore script set_sysctls.py leaves for the end of a run.
fn shell_settings(cmd: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let joined = cmd.replace("\\\n", " ");
    for line in joined.split('\n') {
        let words = shell_words(line);
        if let Some(r) = cubic_module_param(&words) {
            r?;
            continue;
        }
        // Commands joined by ; && || and redirections (`> /dev/null`, `&> /dev/null`).
        let mut cmds: Vec<Vec<&str>> = vec![Vec::new()];
        let mut skip = false;
        for w in &words {
            if skip {
                skip = false;
                continue;
            }
            match w.as_str() {
                ";" | "&&" | "||" => cmds.push(Vec::new()),
                ">" | "&>" | "2>" | "2>&1" | ">>" => skip = w != "2>&1",
                w if w.starts_with('>') || w.starts_with("2>") || w.starts_with("&>") => {}
                w => {
                    let w = w.trim_end_matches(';');
                    cmds.last_mut().expect("one at least").push(w);
                }
            }
        }
        for words in cmds {
            match words.first() {
                None => {}
                Some(w) if w.ends_with("defaults.sh") => {
                    out.extend(DEFAULTS_SH.iter().map(|(k, v)| (k.to_string(), v.to_string())));
                }
                Some(w) if w.contains("sysctl_restore") => {}
                Some(&"ip") if words.get(1) == Some(&"tcp_metrics") => {}
                Some(w) if *w == "sysctl" || w.ends_with("set_sysctls.py") => {
                    for w in &words[1..] {
                        if w.starts_with('-') {
                            continue;
                        }
                        let Some((k, v)) = w.split_once('=') else { continue };
                        let k = k.trim_start_matches("/proc/sys/").replace('/', ".");
                        let v = v.trim_matches(['"', '\'']).to_string();
                        check_sysctl(&k, &v)?;
                        out.push((k, v));
                    }
                }
                Some(&"tc") => out.push(tc_qdisc(&words)?),
                Some(&"ethtool") => out.extend(ethtool_offloads(&words)?),
                Some(w) => {
                    return Err(format!("shell command `{w}` (only sysctl preambles are read)"))
                }
            }
        }
    }
    Ok(out)
}

/// `tc qdisc add|replace dev DEV root fq`: Linux's fair-queue qdisc on the sender's device,
/// there for its pacing — with it Linux paces every flow at `sk_pacing_rate` (2 × cwnd/SRTT
/// in slow start, 1.2 × after), which the simulator models as `[tcp] pacing = true`.
/// Simplified: fq's own credit rules (initial quantum, the drift allowance) are the
/// simulator's pacing credit, not fq's. Any other qdisc, or fq with parameters, is not
/// modeled.
fn tc_qdisc(words: &[&str]) -> Result<(String, String), String> {
    match words {
        ["tc", "qdisc", "add" | "replace", "dev", _, "root", "fq"] => {
            Ok((QDISC_FQ.into(), "1".into()))
        }
        _ => Err(format!(
            "shell command `{}` (of qdiscs only `tc qdisc replace dev DEV root fq`, pacing, is modeled)",
            words.join(" ")
        )),
    }
}

/// `ethtool -K DEV tso|gso|gro on|off ...`: segmentation offloads. The simulated endpoint
/// always emits MSS-sized segments (the runner matches a script's TSO-sized packet against
/// the run of them), so only what offloads change in the sender's behaviour is kept: with
/// TSO or GSO off a paced sender sends one segment per pacing slot (`[tcp] gso = false`).
/// GRO (receive side) changes nothing here. Other features are not modeled.
fn ethtool_offloads(words: &[&str]) -> Result<Vec<(String, String)>, String> {
    let unsupported = || {
        format!("shell command `{}` (of ethtool only -K tso/gso/gro is modeled)", words.join(" "))
    };
    let ["ethtool", "-K", _dev, rest @ ..] = words else { return Err(unsupported()) };
    if rest.is_empty() || rest.len() % 2 != 0 {
        return Err(unsupported());
    }
    let mut out = Vec::new();
    for pair in rest.chunks(2) {
        match (pair[0], pair[1]) {
            ("tso" | "gso", v @ ("on" | "off")) => {
                out.push((OFFLOAD_GSO.into(), if v == "on" { "1" } else { "0" }.into()))
            }
            ("gro", "on" | "off") => {}
            _ => return Err(unsupported()),
        }
    }
    Ok(out)
}

/// CUBIC's module parameters the simulated CUBIC has fixed at Linux's defaults
/// (tcp_cubic.c): HyStart on, with both of its exit tests (`hystart_detect` 3 = the ACK
/// train and the delay increase), the ACK train's window floor of 16 segments and its
/// 2 ms spacing. `None`: the line is not `echo V > /sys/module/tcp_cubic/parameters/P`;
/// `Some(Ok)`: it sets a parameter to the value the simulator runs with (nothing to do);
/// `Some(Err)`: any other parameter or value, which the simulator does not model.
fn cubic_module_param(words: &[String]) -> Option<Result<(), String>> {
    const DEFAULTS: &[(&str, &str)] = &[
        ("hystart", "1"),
        ("hystart_detect", "3"),
        ("hystart_low_window", "16"),
        ("hystart_ack_delta_us", "2000"),
    ];
    let [echo, value, redirect, path] = words else { return None };
    let param = path.strip_prefix("/sys/module/tcp_cubic/parameters/")?;
    if echo != "echo" || redirect != ">" {
        return None;
    }
    let value = value.trim_matches(['"', '\'']);
    Some(if DEFAULTS.contains(&(param, value)) {
        Ok(())
    } else {
        Err(format!("CUBIC module parameter `{param}={value}` (only Linux's defaults are modeled)"))
    })
}

/// The sysctls a script sets (its preamble and defaults.sh) that the runner does not model
/// and so ignores, `name=value` in order.
pub fn ignored_sysctls(script: &Script) -> Vec<String> {
    let mut v = Vec::new();
    for ev in &script.events {
        if let Kind::Shell(cmd) = &ev.kind {
            for (k, val) in shell_settings(cmd).unwrap_or_default() {
                if !MODELED_SETTINGS.contains(&k.as_str()) {
                    v.push(format!("{k}={val}"));
                }
            }
        }
    }
    v
}

/// A command-line flag written in a script: `Ok(Some(usecs))` for `--tolerance_usecs`,
/// `Ok(None)` for one that changes nothing the simulator models (addresses, dry runs), and
/// `Err` for one that would (the MTU, IPv6, a timestamp tick other than Linux's 1 ms, ...).
fn check_flag(name: &str, value: &str) -> Result<Option<u64>, String> {
    let v = value.trim();
    match name.replace('-', "_").as_str() {
        "tolerance_usecs" => {
            v.parse::<u64>().map(Some).map_err(|_| format!("command-line flag `--{name}={v}`"))
        }
        "local_ip" | "remote_ip" | "gateway_ip" | "netmask_ip" | "dry_run" | "verbose"
        | "so_filename" => Ok(None),
        "ip_version" if v == "ipv4" => Ok(None),
        "tcp_ts_tick_usecs" if v == "1000" => Ok(None),
        _ => Err(format!(
            "command-line flag `--{name}{}{v}` is not modeled",
            if v.is_empty() { "" } else { "=" }
        )),
    }
}

/// Sysctls that would turn on a mechanism the simulator lacks make the script unsupported;
/// the rest are read by the runner or ignored.
fn check_sysctl(k: &str, v: &str) -> Result<(), String> {
    let on = v.trim() != "0";
    let missing = match k {
        "net.ipv4.tcp_recovery" if !matches!(v.trim(), "0" | "1") => "this net.ipv4.tcp_recovery mode (0 and 1, RACK, are modeled)",
        "net.ipv4.tcp_early_retrans" if !matches!(v.trim(), "0" | "3" | "4") => {
            "early retransmit (net.ipv4.tcp_early_retrans 1/2; 0 and 3/4, the tail loss probe, are modeled)"
        }
        "net.ipv4.tcp_window_scaling" if !on => "turning window scaling off (net.ipv4.tcp_window_scaling=0)",
        "net.ipv4.tcp_ecn" if !matches!(v.trim(), "0" | "1" | "2" | "3") => "this net.ipv4.tcp_ecn mode (0, 1, 2, 3 are modeled)",
        "net.ipv4.tcp_congestion_control" if linux_cc(v.trim()).is_none() => "this congestion control",
        _ => return Ok(()),
    };
    Err(format!("{missing} is not modeled"))
}

fn fmt_secs(t: u64) -> String {
    format!("{}.{:06}", t / 1_000_000_000, t % 1_000_000_000 / 1000)
}

fn flags_str(f: u16) -> String {
    let mut s = String::new();
    let letters = [
        (flag::FIN, 'F'),
        (flag::SYN, 'S'),
        (flag::RST, 'R'),
        (flag::PSH, 'P'),
        (flag::ACK, '.'),
        (flag::URG, 'U'),
        (flag::ECE, 'E'),
        (flag::CWR, 'W'),
        (flag::AE, 'A'),
    ];
    for (bit, ch) in letters {
        if f & bit != 0 {
            s.push(ch);
        }
    }
    s
}

fn ecn_str(e: Ecn) -> &'static str {
    match e {
        Ecn::NotEct => "noecn",
        Ecn::Ect0 => "ect0",
        Ecn::Ect1 => "ect1",
        Ecn::Ce => "ce",
    }
}

fn spec_ecn_str(e: EcnSpec) -> &'static str {
    match e {
        EcnSpec::NoEcn => "noecn",
        EcnSpec::Ect0 => "ect0",
        EcnSpec::Ect1 => "ect1",
        EcnSpec::Ect01 => "ect01",
        EcnSpec::Ce => "ce",
    }
}

/// Options in a fixed order without nop/eol padding, TS values left out (they are clocks).
fn canon_expected(opts: &[TcpOpt]) -> Vec<String> {
    let mut v: Vec<(u8, String)> = Vec::new();
    for o in opts {
        match o {
            TcpOpt::Nop | TcpOpt::Eol => {}
            TcpOpt::Mss(m) => v.push((0, format!("mss {m}"))),
            TcpOpt::SackOk => v.push((1, "sackOK".into())),
            TcpOpt::Ts { ecr, .. } => v.push((2, format!("TS ecr {ecr}"))),
            TcpOpt::Wscale(w) => v.push((3, format!("wscale {w}"))),
            TcpOpt::Sack(b) => v.push((
                4,
                format!(
                    "sack {}",
                    b.iter().map(|(s, e)| format!("{s}:{e}")).collect::<Vec<_>>().join(" ")
                ),
            )),
        }
    }
    v.sort_by_key(|x| x.0);
    v.into_iter().map(|x| x.1).collect()
}

fn canon_seen(s: &Seen) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(o) = s.syn {
        if o.mss > 0 {
            v.push(format!("mss {}", o.mss));
        }
        if o.sack_permitted {
            v.push("sackOK".into());
        }
    }
    if let Some((_, ecr)) = s.ts {
        v.push(format!("TS ecr {ecr}"));
    }
    if let Some(o) = s.syn {
        if let Some(w) = o.wscale {
            v.push(format!("wscale {w}"));
        }
    }
    if !s.sack.is_empty() {
        v.push(format!(
            "sack {}",
            s.sack.iter().map(|(a, b)| format!("{a}:{b}")).collect::<Vec<_>>().join(" ")
        ));
    }
    v
}

fn fmt_seen(s: &Seen) -> String {
    let mut out = "> ".to_string();
    if s.ecn != Ecn::NotEct {
        out += &format!("[{}] ", ecn_str(s.ecn));
    }
    out += &format!("{} {}:{}({})", flags_str(s.flags), s.seq, s.seq + s.len, s.len);
    if s.flags & flag::ACK != 0 {
        out += &format!(" ack {}", s.ack);
    }
    out += &format!(" win {}", s.win);
    let o = canon_seen(s);
    if !o.is_empty() {
        out += &format!(" <{}>", o.join(","));
    }
    out + &format!(" at {}", fmt_secs(s.at.0))
}

fn fmt_spec(p: &PacketSpec) -> String {
    let mut out = format!("{} ", if p.dir == Dir::In { "<" } else { ">" });
    if let Some(e) = p.ecn {
        out += &format!("[{}] ", spec_ecn_str(e));
    }
    out += &format!("{} {}:{}({})", flags_str(p.flags), p.seq, p.seq + p.len as u64, p.len);
    if let Some(a) = p.ack {
        out += &format!(" ack {a}");
    }
    if let Some(w) = p.win {
        out += &format!(" win {w}");
    }
    if let Some(o) = &p.opts {
        out += &format!(" <{}>", canon_expected(o).join(","));
    }
    out
}

impl Runner {
    fn new(opts: &Options) -> Runner {
        Runner {
            tol: opts.tolerance_usecs.saturating_mul(1000),
            now: SimTime::ZERO,
            pool: PacketPool::default(),
            events: EventQueue::new(),
            sock: None,
            cfg: linux_defaults(),
            cc: linux_cc("cubic").expect("cubic is built in"),
            ecn_mode: 2,
            fds: BTreeMap::new(),
            accepted: false,
            sndbuf: None,
            nodelay: false,
            consumed: 0,
            shut_rd: false,
            last_data_recv: None,
            chrono: Chrono::default(),
            pending: VecDeque::new(),
            last_script: 0,
            last_actual: 0,
            last_loose: false,
            ts_map: None,
            blocked_connect: None,
            user_mss: false,
            blocked_span: 0,
            rel_base: None,
        }
    }

    // ----- the event loop ------------------------------------------------------------

    /// Calls into the socket with a context; what it sends joins the outbound queue.
    fn with_sock<R>(&mut self, f: impl FnOnce(&mut TcpSocket, &mut Cx) -> R) -> R {
        let mut out = Vec::new();
        let sock = self.sock.as_mut().expect("callers check the socket exists");
        let mut cx = Cx {
            now: self.now,
            pool: &mut self.pool,
            events: &mut self.events,
            out: &mut out,
            channel: None,
        };
        let r = f(sock, &mut cx);
        // Data only: the handshake's SYN in flight is no busy time.
        let now_state = if !sock.state.synchronized() {
            ChronoType::Idle
        } else if sock.rwnd_limited() {
            ChronoType::RwndLimited
        } else if sock.outstanding() > 0 || sock.unsent_bytes() > 0 {
            ChronoType::Busy
        } else {
            ChronoType::Idle
        };
        self.chrono.set(now_state, self.now);
        for id in out {
            let p = *self.pool.get(id);
            self.pool.free(id);
            let h = p.tcp();
            let syn = h.flags.has(TcpFlags::SYN);
            self.pending.push_back(Seen {
                at: self.now,
                ecn: p.ecn,
                flags: h.flags.0,
                seq: h.seq,
                len: h.len as u64,
                ack: h.ack,
                win: h.window,
                ts: h.ts,
                sack: h.sack.as_slice().to_vec(),
                syn: syn.then_some(h.syn_opts),
            });
        }
        r
    }

    /// Fires the next timer; false if none is due by `until`.
    fn fire_next(&mut self, until: SimTime) -> bool {
        match self.events.peek_time() {
            Some(t) if t <= until => {
                let (t, ev) = self.events.pop().expect("peeked");
                self.now = self.now.max(t);
                if let SimEvent::Timer(_, kind) = ev {
                    if self.sock.is_some() {
                        self.with_sock(|s, cx| s.on_timer(kind, cx));
                    }
                }
                true
            }
            _ => false,
        }
    }

    fn advance_to(&mut self, t: SimTime) {
        while self.fire_next(t) {}
        self.now = self.now.max(t);
    }

    /// (earliest, latest) script time of `time`, relative times counted packetdrill's way.
    fn window(&self, time: Time) -> (u64, u64) {
        let base = if self.last_loose { self.last_actual } else { self.last_script };
        let at = |v: TimeVal| match v {
            TimeVal::Abs(t) => t,
            TimeVal::Rel(d) => base.saturating_add(d),
        };
        match time {
            Time::At(v) => (at(v), at(v)),
            Time::Range(lo, hi) => (at(lo), at(hi)),
            Time::Any => (base, u64::MAX),
        }
    }

    /// A blocking connect() returns when the handshake completes: by its `...` end time.
    fn connect_returned(&mut self, now: u64) -> Step {
        let Some(by) = self.blocked_connect else { return Ok(()) };
        if now <= by {
            return Ok(());
        }
        self.blocked_connect = None;
        let tol = self.tol.max(self.blocked_span / 8);
        self.advance_to(SimTime(by.saturating_add(tol).min(now)));
        // Established, or already closing again (a close() after the call returned).
        if self.sock.as_ref().is_some_and(|s| s.state.synchronized()) {
            return Ok(());
        }
        fail(format!(
            "a blocking connect() had not returned (no established connection) by {}",
            fmt_secs(by)
        ))
    }

    fn event(&mut self, ev: &Event) -> Step {
        let (lo, hi) = self.window(ev.time);
        if lo > self.blocked_connect.unwrap_or(u64::MAX) {
            self.connect_returned(lo)?;
        }
        let loose = !matches!(ev.time, Time::At(_));
        // packetdrill's adjust_relative_event_times: a blocking call at a relative time has
        // its `...` end counted from the same base as its start (the previous event).
        self.rel_base = match ev.time {
            Time::At(TimeVal::Rel(_)) => {
                Some(if self.last_loose { self.last_actual } else { self.last_script })
            }
            _ => None,
        };
        let actual = match &ev.kind {
            Kind::Packet(p) if p.dir == Dir::Out => self.expect_out(p, lo, hi)?,
            kind => {
                // Inbound segments, calls and asserts happen at their script time (or now, if
                // waiting for an earlier outbound segment already took the clock past it).
                self.advance_to(SimTime(lo));
                match kind {
                    Kind::Packet(p) => self.inject(p)?,
                    Kind::Syscall(c) => self.syscall(c)?,
                    Kind::Assert(v) => self.asserts(v)?,
                    Kind::Shell(cmd) => self.shell(cmd),
                    Kind::Flag(..) => {}
                    Kind::Unsupported(w) => return unsupported(w.clone()),
                }
                self.now.0
            }
        };
        self.last_script = lo;
        self.last_actual = actual;
        self.last_loose = loose;
        Ok(())
    }

    fn shell(&mut self, cmd: &str) {
        for (k, v) in shell_settings(cmd).unwrap_or_default() {
            let v = v.trim();
            match k.as_str() {
                "net.ipv4.tcp_ecn" => self.ecn_mode = v.parse().unwrap_or(2),
                "net.ipv4.tcp_sack" => {
                    self.cfg.recovery = if v == "0" { Recovery::NewReno } else { Recovery::Sack }
                }
                "net.ipv4.tcp_timestamps" => self.cfg.timestamps = v != "0",
                "net.ipv4.tcp_recovery" => self.cfg.mech.rack = v != "0",
                "net.ipv4.tcp_early_retrans" => self.cfg.mech.tlp = v != "0",
                "net.ipv4.tcp_frto" => self.cfg.mech.frto = v != "0",
                "net.ipv4.tcp_dsack" => self.cfg.mech.dsack = v != "0",
                "net.ipv4.tcp_moderate_rcvbuf" => self.cfg.mech.rcvbuf_auto = v != "0",
                "net.ipv4.tcp_rmem" => {
                    // tcp_rmem[2] is the receive buffer's ceiling and so, in Linux's
                    // tcp_select_initial_window, the space the window scale must cover
                    // (ilog2(space) - 15, what TcpSocket::new derives from `rcvbuf`).
                    if let Some(max) =
                        v.split_whitespace().nth(2).and_then(|x| x.parse::<u64>().ok())
                    {
                        self.cfg.rcvbuf = max.max(self.cfg.mss as u64);
                        // Autotuning's largest window: the buffer's, half of it.
                        self.cfg.window_max = self.cfg.rcvbuf / 2;
                    }
                }
                "net.ipv4.tcp_slow_start_after_idle" => self.cfg.slow_start_after_idle = v != "0",
                "net.ipv4.tcp_syn_linear_timeouts" => {
                    if let Ok(n) = v.parse() {
                        self.cfg.syn_linear_timeouts = n;
                    }
                }
                QDISC_FQ => self.cfg.pacing = true,
                // Both offloads must be on for GSO bursts: either off leaves one segment.
                OFFLOAD_GSO => self.cfg.mech.gso &= v != "0",
                "net.ipv4.tcp_congestion_control" => {
                    if let Some(cc) = linux_cc(v) {
                        self.cc = cc;
                    }
                }
                _ => {} // not modeled and harmless: ignored (docs/packetdrill.md)
            }
        }
    }

    // ----- inbound -----------------------------------------------------------------

    fn inject(&mut self, p: &PacketSpec) -> Step {
        if self.sock.is_none() {
            return fail("inbound segment before any socket listens or connects");
        }
        if p.flags & flag::URG != 0 {
            return unsupported("inbound URG (urgent data is not modeled)");
        }
        if p.flags & flag::ACK != 0 && p.ack.is_none() {
            return unsupported("an inbound ACK without `ack N` (packetdrill fills it in)");
        }
        let mut h = TcpHeader {
            seq: p.seq,
            ack: p.ack.unwrap_or(0),
            len: p.len,
            flags: TcpFlags(p.flags),
            window: p.win.unwrap_or(0) as u16,
            ts: None,
            sack: SackBlocks::default(),
            syn_opts: SynOptions::default(),
            // Scripts carry no AccECN option: the sender reads the ACE counter alone.
            accecn: None,
        };
        for o in p.opts.iter().flatten() {
            match o {
                TcpOpt::Nop | TcpOpt::Eol => {}
                TcpOpt::Mss(m) => h.syn_opts.mss = *m,
                TcpOpt::Wscale(w) => h.syn_opts.wscale = Some(*w),
                TcpOpt::SackOk => h.syn_opts.sack_permitted = true,
                TcpOpt::Ts { val, ecr } => {
                    h.syn_opts.timestamps = true;
                    h.ts = Some((*val, self.ts_to_sim(*ecr)));
                }
                TcpOpt::Sack(blocks) => {
                    if blocks.len() > 3 {
                        return unsupported("more than 3 SACK blocks in one segment");
                    }
                    for &b in blocks {
                        h.sack.push(b);
                    }
                }
            }
        }
        if p.flags & flag::SYN == 0 {
            h.syn_opts = SynOptions::default();
        }
        let ecn = match p.ecn {
            None | Some(EcnSpec::NoEcn) => Ecn::NotEct,
            Some(EcnSpec::Ect0) | Some(EcnSpec::Ect01) => Ecn::Ect0,
            Some(EcnSpec::Ect1) => Ecn::Ect1,
            Some(EcnSpec::Ce) => Ecn::Ce,
        };
        let pkt = Packet {
            flow: FlowId(0),
            route: RouteId(0),
            hop: 0,
            wire_bytes: p.len + crate::wire::TCP_HEADER_BYTES,
            ecn,
            sent_at: self.now,
            conn: 0,
            pure_ack: None,
            hdr: Header::Tcp(h),
        };
        let was = self.sock.as_ref().map(|s| s.state);
        self.with_sock(|s, cx| s.on_packet(&pkt, cx));
        let now_est = self.sock.as_ref().is_some_and(|s| s.state == TcpState::Established);
        if p.len > 0 || (now_est && was != Some(TcpState::Established)) {
            self.last_data_recv = Some(self.now);
        }
        Ok(())
    }

    /// A script TS echo (in the script's ticks) as the simulator's clock value.
    fn ts_to_sim(&self, ecr: u64) -> u64 {
        if ecr == 0 {
            return 0;
        }
        match self.ts_map {
            Some((script, sim)) => {
                let d = (ecr as i128 - script as i128) * TS_TICK_NS as i128;
                (sim as i128 + d).max(0) as u64
            }
            None => ecr.saturating_mul(TS_TICK_NS),
        }
    }

    // ----- outbound ----------------------------------------------------------------

    fn expect_out(&mut self, p: &PacketSpec, lo: u64, hi: u64) -> Result<u64, Stop> {
        if p.flags & flag::URG != 0 {
            return unsupported("outbound URG (urgent data is not modeled)");
        }
        // `*` (no upper bound) accepts a segment sent at any time, also before the previous event.
        // packetdrill's verify_time: the tolerance grows to 12.5 % (its --tolerance_percent
        // default) of the script time since the previous event.
        let tol = self.tol.max(lo.saturating_sub(self.last_script) / 8);
        let early = if hi == u64::MAX { 0 } else { lo.saturating_sub(tol) };
        let late = hi.saturating_add(tol);
        while self.pending.is_empty() {
            if !self.fire_next(SimTime(late)) {
                let when = if hi == u64::MAX {
                    "at any time".to_string()
                } else {
                    format!("by {}", fmt_secs(late))
                };
                return fail(format!("expected `{}` but nothing was sent {when}", fmt_spec(p)));
            }
        }
        let first = self.pending.front().expect("non-empty").clone();
        if first.at.0 < early {
            return fail(format!(
                "`{}` sent at {}, earlier than expected (script time {}, tolerance {} us)",
                fmt_seen(&first),
                fmt_secs(first.at.0),
                fmt_secs(lo),
                tol / 1000
            ));
        }
        // A TSO-sized expectation: merge the contiguous segments sent at the same instant.
        let mut seen = first.clone();
        let mut taken = 1;
        if p.len as u64 > seen.len && seen.len > 0 && seen.flags & flag::SYN == 0 {
            while seen.len < p.len as u64 {
                match self.pending.get(taken) {
                    Some(n)
                        if n.at == seen.at
                            && n.seq == seen.seq + seen.len
                            && n.len > 0
                            && n.syn.is_none() =>
                    {
                        seen.len += n.len;
                        seen.flags |= n.flags;
                        seen.ack = n.ack;
                        seen.win = n.win;
                        taken += 1;
                    }
                    _ => break,
                }
            }
        }
        self.compare(p, &seen)?;
        if let (Some((sim_val, _)), Some(opts)) = (seen.ts, &p.opts) {
            if self.ts_map.is_none() {
                if let Some(val) = opts.iter().find_map(|o| {
                    if let TcpOpt::Ts { val, .. } = o {
                        Some(*val)
                    } else {
                        None
                    }
                }) {
                    self.ts_map = Some((val, sim_val));
                }
            }
        }
        self.pending.drain(..taken);
        Ok(seen.at.0)
    }

    fn compare(&self, p: &PacketSpec, s: &Seen) -> Step {
        let mismatch = |what: String| {
            fail(format!("{what}\n  expected: {}\n  actual:   {}", fmt_spec(p), fmt_seen(s)))
        };
        // PSH is not compared: where Linux splits its TSO skbs (and so where its PSH falls)
        // the simulator's segment-at-a-time sender does not follow (docs/packetdrill.md).
        let (want, got) = (p.flags & !flag::PSH, s.flags & !flag::PSH);
        if want != got {
            return mismatch(format!(
                "flags: expected `{}`, actual `{}`",
                flags_str(want),
                flags_str(got)
            ));
        }
        if p.seq != s.seq || p.len as u64 != s.len {
            return mismatch(format!(
                "sequence range: expected {}:{}({}), actual {}:{}({})",
                p.seq,
                p.seq + p.len as u64,
                p.len,
                s.seq,
                s.seq + s.len,
                s.len
            ));
        }
        if let Some(a) = p.ack {
            if a != s.ack {
                return mismatch(format!("ack: expected {a}, actual {}", s.ack));
            }
        }
        if let Some(w) = p.win {
            if w != s.win as u32 {
                return mismatch(format!("window: expected {w}, actual {}", s.win));
            }
        }
        if let Some(e) = p.ecn {
            let ok = match e {
                EcnSpec::NoEcn => s.ecn == Ecn::NotEct,
                EcnSpec::Ect0 => s.ecn == Ecn::Ect0,
                EcnSpec::Ect01 => matches!(s.ecn, Ecn::Ect0 | Ecn::Ect1),
                EcnSpec::Ect1 => s.ecn == Ecn::Ect1,
                EcnSpec::Ce => s.ecn == Ecn::Ce,
            };
            if !ok {
                return mismatch(format!(
                    "ECN: expected [{}], actual [{}]",
                    spec_ecn_str(e),
                    ecn_str(s.ecn)
                ));
            }
        }
        let want = canon_expected(p.opts.as_deref().unwrap_or(&[]));
        let got = canon_seen(s);
        if want != got && !p.opts_any {
            return mismatch(format!(
                "TCP options: expected <{}>, actual <{}>",
                want.join(","),
                got.join(",")
            ));
        }
        Ok(())
    }

    // ----- system calls ------------------------------------------------------------

    fn fd(&self, args: &[Arg], call: &str) -> Result<(i64, Fd), Stop> {
        match args.first() {
            Some(Arg::Int(n)) => match self.fds.get(n) {
                Some(f) => Ok((*n, *f)),
                None => fail(format!("{call}: fd {n} is not open")),
            },
            _ => {
                unsupported(format!("{call}: the first argument must be a file descriptor number"))
            }
        }
    }

    fn check_ret(c: &Syscall, ret: i64, errno: Option<&str>) -> Step {
        if ret != c.ret || (ret == -1 && errno != c.errno.as_deref()) {
            let show = |r: i64, e: Option<&str>| match e {
                Some(e) if r == -1 => format!("-1 {e}"),
                _ => r.to_string(),
            };
            return fail(format!(
                "{}() returned {}, script expects {}",
                c.name,
                show(ret, errno),
                show(c.ret, c.errno.as_deref())
            ));
        }
        Ok(())
    }

    fn new_socket(&mut self, active: bool) -> TcpSocket {
        let mut cfg = self.cfg.clone();
        // A TCP_NODELAY given before listen() or connect() (an accepted socket inherits it).
        cfg.nagle = !self.nodelay;
        // The runner's `mss` is Linux's advmss (the option's value, TCP_MAXSEG's); the
        // socket's is the payload beside the timestamp option it takes room from.
        if cfg.timestamps {
            cfg.mss = cfg.mss.saturating_sub(crate::wire::TCP_TS_OPTION_BYTES as u32).max(1);
        }
        cfg.ecn = match self.ecn_mode {
            0 => EcnMode::Off,
            1 => EcnMode::Classic,
            // Linux's AccECN mode: ask for AccECN, accept it or classic ECN.
            3 => EcnMode::AccEcn,
            _ if active => EcnMode::Off,
            _ => EcnMode::Classic,
        };
        let cc = build(
            &self.cc,
            BuildCtx { mss: cfg.mss as u64, rng: SimRng::new(1, Stream::Endpoint, 0), hz: cfg.hz },
        );
        let mut s = TcpSocket::new(SockId(0), FlowId(0), RouteId(0), &std::sync::Arc::new(cfg), cc);
        if let Some(m) = self.cc.ecn_needs() {
            s.request_ecn(m);
        }
        s
    }

    fn syscall(&mut self, c: &Syscall) -> Step {
        let a = &c.args;
        match c.name.as_str() {
            "socket" => {
                if !matches!(a.get(1), Some(Arg::Sym(s)) if s[0] == "SOCK_STREAM") {
                    return unsupported("socket(): only SOCK_STREAM (TCP) sockets are modeled");
                }
                if c.ret < 0 {
                    return unsupported("socket() failing");
                }
                if self.fds.values().any(|f| f.kind == FdKind::Socket || f.kind == FdKind::Listener)
                    || self.sock.is_some()
                {
                    return unsupported("a second socket (the runner drives one endpoint)");
                }
                self.fds.insert(c.ret, Fd { kind: FdKind::Socket, nonblock: false });
                Ok(())
            }
            "bind" => {
                self.fd(a, "bind")?;
                Self::check_ret(c, 0, None)
            }
            "listen" => {
                let (n, f) = self.fd(a, "listen")?;
                if f.kind != FdKind::Socket {
                    return fail(format!("listen(): fd {n} is not a fresh socket"));
                }
                let mut s = self.new_socket(false);
                s.listen();
                self.sock = Some(s);
                self.fds.insert(n, Fd { kind: FdKind::Listener, ..f });
                Self::check_ret(c, 0, None)
            }
            "accept" => {
                let (n, f) = self.fd(a, "accept")?;
                if f.kind != FdKind::Listener {
                    return fail(format!("accept(): fd {n} is not listening"));
                }
                let established =
                    self.sock.as_ref().is_some_and(|s| s.state == TcpState::Established);
                if !established || self.accepted {
                    if f.nonblock {
                        return Self::check_ret(c, -1, Some("EAGAIN"));
                    }
                    return unsupported(
                        "accept() that blocks: no connection is established at this time",
                    );
                }
                if c.ret < 0 {
                    return Self::check_ret(c, 3, None);
                }
                self.accepted = true;
                self.fds.insert(c.ret, Fd { kind: FdKind::Conn, nonblock: false });
                Ok(())
            }
            "connect" => {
                let (n, f) = self.fd(a, "connect")?;
                if f.kind != FdKind::Socket {
                    return fail(format!("connect(): fd {n} is not a fresh socket"));
                }
                if !f.nonblock {
                    // Blocking: the handshake starts now and the call returns 0 once it
                    // completes, which must be by the end of its `lo...hi` range.
                    let Some(until) = c.until else {
                        return unsupported("blocking connect() without a `lo...hi` time range");
                    };
                    if c.ret != 0 {
                        return unsupported("a blocking connect() that fails");
                    }
                    let by = match until {
                        TimeVal::Abs(t) => self.rel_base.map_or(t, |b| b.saturating_add(t)),
                        TimeVal::Rel(d) => self.now.0.saturating_add(d),
                    };
                    self.sock = Some(self.new_socket(true));
                    self.with_sock(|s, cx| s.connect(cx));
                    self.fds.insert(n, Fd { kind: FdKind::Conn, ..f });
                    self.blocked_connect = Some(by);
                    self.blocked_span = by.saturating_sub(self.now.0);
                    return Ok(());
                }
                self.sock = Some(self.new_socket(true));
                self.with_sock(|s, cx| s.connect(cx));
                self.fds.insert(n, Fd { kind: FdKind::Conn, ..f });
                Self::check_ret(c, -1, Some("EINPROGRESS"))
            }
            "write" => {
                let Some(Arg::Int(len)) = a.get(2) else {
                    return unsupported("write(): the length must be a number");
                };
                self.write(c, (*len).max(0) as u64, false)
            }
            "send" => {
                let Some(Arg::Int(len)) = a.get(2) else {
                    return unsupported("send(): the length must be a number");
                };
                let more = Self::plain_send_flags(c, a.get(3))?;
                self.write(c, (*len).max(0) as u64, more)
            }
            "sendmsg" => {
                // The simple form: an iovec of lengths, no control data, no name.
                let Some(Arg::Struct(fields)) = a.get(1) else {
                    return unsupported("sendmsg(): the message must be a {...} structure");
                };
                let mut len = 0u64;
                for (k, v) in fields {
                    match (k.as_str(), v) {
                        ("msg_iov", Arg::Array(iov)) => {
                            for e in iov {
                                match e {
                                    Arg::Struct(m) if m.len() == 2 => match &m[1].1 {
                                        Arg::Int(n) => len += (*n).max(0) as u64,
                                        _ => {
                                            return unsupported(
                                                "sendmsg(): iovec lengths must be numbers",
                                            )
                                        }
                                    },
                                    _ => {
                                        return unsupported(
                                            "sendmsg(): iovec entries must be {..., LEN}",
                                        )
                                    }
                                }
                            }
                        }
                        ("msg_name" | "msg_flags", _) => {}
                        (k, _) => return unsupported(format!("sendmsg(): the `{k}` field")),
                    }
                }
                let more = Self::plain_send_flags(c, a.get(2))?;
                self.write(c, len, more)
            }
            "read" => {
                let (n, f) = self.fd(a, "read")?;
                let Some(Arg::Int(len)) = a.get(2) else {
                    return unsupported("read(): the length must be a number");
                };
                if f.kind != FdKind::Conn {
                    return fail(format!("read(): fd {n} is not a connection"));
                }
                let avail = self.sock.as_ref().map_or(0, |s| s.delivered()) - self.consumed;
                let got = avail.min((*len).max(0) as u64);
                if got == 0 {
                    let sock = self.sock.as_ref().expect("a connection has a socket");
                    if sock.was_reset() {
                        return Self::check_ret(c, -1, Some("ECONNRESET"));
                    }
                    // End of stream: the peer's FIN, or our own SHUT_RD.
                    if self.shut_rd || sock.peer_closed() {
                        return Self::check_ret(c, 0, None);
                    }
                    if f.nonblock {
                        return Self::check_ret(c, -1, Some("EAGAIN"));
                    }
                    return unsupported("read() that blocks: no data is ready at this time");
                }
                self.consumed += got;
                Self::check_ret(c, got as i64, None)
            }
            "close" => {
                let (n, f) = self.fd(a, "close")?;
                if f.kind == FdKind::Conn {
                    let unread = self.sock.as_ref().map_or(0, |s| s.delivered()) > self.consumed;
                    self.with_sock(|s, cx| s.close(unread, cx));
                }
                self.fds.remove(&n);
                Self::check_ret(c, 0, None)
            }
            "fcntl" => {
                let (n, mut f) = self.fd(a, "fcntl")?;
                match (a.get(1), a.get(2)) {
                    (Some(Arg::Sym(cmd)), Some(Arg::Sym(fl))) if cmd[0] == "F_SETFL" => {
                        f.nonblock = fl.iter().any(|x| x == "O_NONBLOCK");
                        self.fds.insert(n, f);
                        Self::check_ret(c, 0, None)
                    }
                    // F_GETFL: Linux's O_RDWR (2), with O_NONBLOCK (0o4000) when set.
                    (Some(Arg::Sym(cmd)), None) if cmd[0] == "F_GETFL" => {
                        Self::check_ret(c, 2 | if f.nonblock { 0o4000 } else { 0 }, None)
                    }
                    _ => unsupported("fcntl() other than F_SETFL and F_GETFL"),
                }
            }
            "shutdown" => {
                let (_, f) = self.fd(a, "shutdown")?;
                if f.kind != FdKind::Conn {
                    return unsupported("shutdown() of a socket that is not connected");
                }
                let how = match a.get(1) {
                    Some(Arg::Sym(v)) if v.len() == 1 => v[0].as_str(),
                    _ => {
                        return unsupported(
                            "shutdown(): `how` must be SHUT_RD, SHUT_WR or SHUT_RDWR",
                        )
                    }
                };
                let (rd, wr) = match how {
                    "SHUT_RD" => (true, false),
                    "SHUT_WR" => (false, true),
                    "SHUT_RDWR" => (true, true),
                    other => return unsupported(format!("shutdown(): `{other}`")),
                };
                self.shut_rd |= rd;
                if wr {
                    self.with_sock(|s, cx| s.shutdown_write(cx));
                }
                Self::check_ret(c, 0, None)
            }
            "setsockopt" => self.setsockopt(c),
            "getsockopt" => self.getsockopt(c),
            other => unsupported(format!("system call `{other}`")),
        }
    }

    /// send()/sendmsg() flags that leave the call a write; returns whether MSG_MORE (corking
    /// this write's tail) was given. Others (MSG_ZEROCOPY, MSG_FASTOPEN, MSG_EOR, ...) are not
    /// modeled.
    fn plain_send_flags(c: &Syscall, flags: Option<&Arg>) -> Result<bool, Stop> {
        match flags {
            None | Some(Arg::Int(0)) | Some(Arg::Any) => Ok(false),
            Some(Arg::Sym(v)) => {
                match v
                    .iter()
                    .find(|f| !matches!(f.as_str(), "MSG_NOSIGNAL" | "MSG_DONTWAIT" | "MSG_MORE"))
                {
                    None => Ok(v.iter().any(|f| f == "MSG_MORE")),
                    Some(f) => unsupported(format!("{}() with {f}", c.name)),
                }
            }
            _ => unsupported(format!("{}(): flags must be names or 0", c.name)),
        }
    }

    /// write(), send() and sendmsg(): `len` bytes into the send buffer (`more`: MSG_MORE).
    fn write(&mut self, c: &Syscall, len: u64, more: bool) -> Step {
        let (n, f) = self.fd(&c.args, &c.name)?;
        if f.kind != FdKind::Conn {
            return fail(format!("{}(): fd {n} is not a connection", c.name));
        }
        let sock = self.sock.as_mut().expect("a connection has a socket");
        match sock.write_error() {
            Some(SockError::Pipe) => return Self::check_ret(c, -1, Some("EPIPE")),
            Some(SockError::Reset) => return Self::check_ret(c, -1, Some("ECONNRESET")),
            None => {}
        }
        if !matches!(sock.state, TcpState::Established | TcpState::CloseWait) {
            return unsupported(format!("{}() before the connection is established", c.name));
        }
        if let Some(buf) = self.sndbuf {
            if sock.unacked_bytes() + len > buf {
                return unsupported(format!(
                    "{}() beyond SO_SNDBUF (send-buffer limits are not modeled)",
                    c.name
                ));
            }
        }
        self.with_sock(|s, cx| s.app_write_more(len, more, cx));
        Self::check_ret(c, len as i64, None)
    }

    fn opt_names(c: &Syscall) -> Result<(String, String), Stop> {
        match (c.args.get(1), c.args.get(2)) {
            (Some(Arg::Sym(l)), Some(Arg::Sym(o))) => Ok((l[0].clone(), o[0].clone())),
            _ => unsupported(format!("{}(): level and option must be names", c.name)),
        }
    }

    fn int_arg(a: Option<&Arg>) -> Option<i64> {
        match a {
            Some(Arg::Int(v)) => Some(*v),
            Some(Arg::Array(v)) => match v.first() {
                Some(Arg::Int(x)) => Some(*x),
                _ => None,
            },
            _ => None,
        }
    }

    fn setsockopt(&mut self, c: &Syscall) -> Step {
        self.fd(&c.args, "setsockopt")?;
        let (level, opt) = Self::opt_names(c)?;
        let val = c.args.get(3);
        let tcp = matches!(level.as_str(), "SOL_TCP" | "IPPROTO_TCP");
        match (level.as_str(), opt.as_str()) {
            ("SOL_SOCKET", "SO_REUSEADDR") | ("SOL_SOCKET", "SO_REUSEPORT") => {
                Self::check_ret(c, 0, None)
            }
            ("SOL_SOCKET", "SO_SNDBUF") => {
                let Some(v) = Self::int_arg(val) else {
                    return unsupported("SO_SNDBUF needs [bytes]");
                };
                self.sndbuf = Some(2 * v.max(0) as u64); // Linux doubles the request for overhead
                Self::check_ret(c, 0, None)
            }
            ("SOL_SOCKET", "SO_RCVBUF") => {
                let Some(v) = Self::int_arg(val) else {
                    return unsupported("SO_RCVBUF needs [bytes]");
                };
                if self.sock.is_some() {
                    return unsupported("SO_RCVBUF once the socket listens or connects");
                }
                self.cfg.rcvbuf = (2 * v.max(0) as u64).max(self.cfg.mss as u64);
                // A buffer the application sets is locked: no autotuning (SOCK_RCVBUF_LOCK).
                self.cfg.mech.rcvbuf_auto = false;
                Self::check_ret(c, 0, None)
            }
            (_, "TCP_MAXSEG") if tcp => {
                // Before the handshake: the MSS the SYN advertises and the ceiling of the one
                // segments are sized by (Linux's user_mss).
                let Some(v) = Self::int_arg(val) else {
                    return unsupported("TCP_MAXSEG needs [bytes]");
                };
                // On a listener before any SYN arrived: Linux's child socket inherits the
                // listener's user_mss (tcp_create_openreq_child), so the SYN-ACK advertises it.
                let listening = self.sock.as_ref().is_some_and(|s| s.state == TcpState::Listen);
                if self.sock.is_some() && !listening {
                    return unsupported("TCP_MAXSEG once the socket connects");
                }
                if !(88..=32767).contains(&v) {
                    return Self::check_ret(c, -1, Some("EINVAL"));
                }
                self.cfg.mss = self.cfg.mss.min(v as u32);
                self.user_mss = true;
                if listening {
                    // Nothing but the Listen state lives in the socket yet (a TCP_QUICKACK 0
                    // given to the listener is kept in the configuration too): rebuild it
                    // from the configuration with the new MSS.
                    let mut s = self.new_socket(false);
                    s.listen();
                    self.sock = Some(s);
                }
                Self::check_ret(c, 0, None)
            }
            ("SOL_IP" | "IPPROTO_IP", "IP_MTU_DISCOVER") => {
                // Path-MTU discovery by ICMP (RFC 1191) is not modeled: no ICMP reaches the
                // endpoint, so the DF bit and the reaction to "fragmentation needed" change
                // nothing here. Only the modes that leave PLPMTUD probing (RFC 4821, the
                // `tcp_mtu_probing` sysctl) as it is are accepted.
                match val {
                    Some(Arg::Array(v))
                        if matches!(v.first(), Some(Arg::Sym(m))
                            if matches!(m[0].as_str(), "IP_PMTUDISC_DONT" | "IP_PMTUDISC_WANT" | "IP_PMTUDISC_DO")) =>
                    {
                        Self::check_ret(c, 0, None)
                    }
                    _ => unsupported("IP_MTU_DISCOVER: only IP_PMTUDISC_DONT/WANT/DO"),
                }
            }
            ("SOL_IP" | "IPPROTO_IP", "IP_TOS") => {
                // The TOS byte's DSCP bits mark nothing the simulated path reads; its ECN
                // bits belong to the TCP (Linux masks them off, INET_ECN_MASK). Linux
                // refreshes the route, which must leave the write queue's SACK state as it
                // is — here nothing is touched.
                Self::check_ret(c, 0, None)
            }
            (_, "TCP_NODELAY") if tcp => {
                self.nodelay = Self::int_arg(val).unwrap_or(0) != 0;
                if self.sock.is_some() {
                    // Setting it pushes pending output at once, even when corked.
                    let on = self.nodelay;
                    self.with_sock(|s, cx| s.set_nodelay(on, cx));
                }
                Self::check_ret(c, 0, None)
            }
            (_, "TCP_CORK") if tcp => {
                let Some(v) = Self::int_arg(val) else {
                    return unsupported("TCP_CORK needs [0] or [1]");
                };
                // Uncorking pushes under Nagle's rule unless TCP_NODELAY is set.
                match self.sock.is_some() {
                    true => self.with_sock(|s, cx| s.set_cork(v != 0, cx)),
                    false => return unsupported("TCP_CORK before the socket connects"),
                }
                Self::check_ret(c, 0, None)
            }
            (_, "TCP_QUICKACK") if tcp => {
                // TCP_QUICKACK 0 leaves quick-ACK mode for good (Linux's ping-pong mode):
                // ACKs are delayed from then on (every second segment, or the timer).
                if Self::int_arg(val) != Some(0) {
                    return unsupported("TCP_QUICKACK 1 (forcing an immediate ACK is not modeled)");
                }
                if let Some(s) = self.sock.as_mut() {
                    s.leave_quickack_mode();
                }
                self.cfg.mech.quickack = false;
                Self::check_ret(c, 0, None)
            }
            (_, "TCP_CONGESTION") if tcp => {
                let Some(Arg::Str(name)) = val else {
                    return unsupported("TCP_CONGESTION needs a \"name\"");
                };
                let Some(spec) = linux_cc(name) else {
                    return Self::check_ret(c, -1, Some("ENOENT"));
                };
                if let Some(s) = self.sock.as_mut() {
                    let cc = build(
                        &spec,
                        BuildCtx {
                            mss: s.negotiated_mss(),
                            rng: SimRng::new(1, Stream::Endpoint, 0),
                            hz: self.cfg.hz,
                        },
                    );
                    s.set_congestion_control(cc);
                    if let Some(m) = spec.ecn_needs() {
                        s.request_ecn(m);
                    }
                }
                self.cc = spec;
                Self::check_ret(c, 0, None)
            }
            _ => unsupported(format!("setsockopt {level}/{opt}")),
        }
    }

    fn getsockopt(&mut self, c: &Syscall) -> Step {
        self.fd(&c.args, "getsockopt")?;
        let (level, opt) = Self::opt_names(c)?;
        let val = c.args.get(3);
        let tcp = matches!(level.as_str(), "SOL_TCP" | "IPPROTO_TCP");
        let check_int = |name: &str, actual: u64| -> Step {
            match Self::int_arg(val) {
                None => Ok(()),
                Some(v) if v as u64 == actual => Ok(()),
                Some(v) => fail(format!("getsockopt {name}: script expects {v}, actual {actual}")),
            }
        };
        match (level.as_str(), opt.as_str()) {
            ("SOL_SOCKET", "SO_SNDBUF") => match self.sndbuf {
                Some(b) => check_int("SO_SNDBUF", b),
                None => unsupported(
                    "SO_SNDBUF without setting it (send-buffer autotuning is not modeled)",
                ),
            },
            ("SOL_SOCKET", "SO_RCVBUF") => check_int("SO_RCVBUF", self.cfg.rcvbuf),
            // The pending socket error: none once the handshake completed (a non-blocking
            // connect's success); errors from resets or timeouts are not reported here.
            ("SOL_SOCKET", "SO_ERROR") => match &self.sock {
                Some(s) if s.state.synchronized() => check_int("SO_ERROR", 0),
                _ => unsupported("SO_ERROR before the handshake completed or after an error"),
            },
            (_, "TCP_NODELAY") if tcp => check_int("TCP_NODELAY", self.nodelay as u64),
            (_, "TCP_MAXSEG") if tcp => match &self.sock {
                // Connected: the MSS segments are sized by (Linux's mss_cache).
                Some(s) if s.state == TcpState::Established => {
                    check_int("TCP_MAXSEG", s.info(self.now).snd_mss)
                }
                _ if self.user_mss => check_int("TCP_MAXSEG", self.cfg.mss as u64),
                _ => unsupported("TCP_MAXSEG before a connection without setting it"),
            },
            (_, "TCP_CONGESTION") if tcp => {
                let actual = match &self.sock {
                    Some(s) => linux_cc_name(s.cc_name()).to_string(),
                    None => linux_cc_name(self.cc.name()).to_string(),
                };
                match val {
                    Some(Arg::Str(want)) if *want != actual => fail(format!(
                        "TCP_CONGESTION: script expects \"{want}\", actual \"{actual}\""
                    )),
                    _ => Self::check_ret(c, 0, None),
                }
            }
            (_, "TCP_INFO") if tcp => {
                let Some(info) = self.sock.as_ref().map(|s| s.info(self.now)) else {
                    return fail("getsockopt TCP_INFO: no socket");
                };
                if let Some(Arg::Struct(fields)) = val {
                    for (k, v) in fields {
                        let adv = (k == "tcpi_advmss").then_some(self.cfg.mss as f64);
                        let Some(actual) = adv.or_else(|| self.field(&info, k)) else {
                            return unsupported(format!("TCP_INFO field `{k}`"));
                        };
                        let Arg::Int(want) = v else { continue };
                        if *want as f64 != actual {
                            return fail(format!(
                                "TCP_INFO {k}: script expects {want}, actual {actual}"
                            ));
                        }
                    }
                }
                Self::check_ret(c, 0, None)
            }
            _ => unsupported(format!("getsockopt {level}/{opt}")),
        }
    }

    // ----- asserts -----------------------------------------------------------------

    /// A `tcpi_*` field: the socket's, or the one the runner keeps (`tcpi_last_data_recv`, ms).
    fn field(&self, info: &TcpInfo, name: &str) -> Option<f64> {
        if name == "tcpi_last_data_recv" {
            let at = self.last_data_recv.unwrap_or(SimTime::ZERO);
            return Some((self.now.since(at).0 / 1_000_000) as f64);
        }
        if name == "tcpi_busy_time" || name == "tcpi_rwnd_limited" {
            let [busy, rwnd] = self.chrono.totals(self.now);
            let v = if name == "tcpi_rwnd_limited" { rwnd } else { busy + rwnd };
            return Some((v / 1_000) as f64);
        }
        field(info, name)
    }

    fn asserts(&mut self, v: &[expr::Assert]) -> Step {
        let Some(info) = self.sock.as_ref().map(|s| s.info(self.now)) else {
            return fail("%{ }% block before any socket exists");
        };
        let advmss = self.cfg.mss as f64;
        for a in v {
            let get = |n: &str| {
                if n == "tcpi_advmss" {
                    advmss
                } else {
                    self.field(&info, n).unwrap_or(f64::NAN)
                }
            };
            match expr::eval(&a.expr, &get) {
                Err(e) => return fail(format!("assert {}: {e}", a.text)),
                Ok(x) if x != 0.0 && !x.is_nan() => {}
                Ok(_) => {
                    let mut names = Vec::new();
                    expr::vars(&a.expr, &mut names);
                    let vals: Vec<String> =
                        names.iter().map(|n| format!("{n} = {}", get(n))).collect();
                    return fail(format!(
                        "assertion failed (line {}, column {}): {}  [actual: {}] at {}",
                        a.line,
                        a.col,
                        a.text,
                        vals.join(", "),
                        fmt_secs(self.now.0)
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One `tcpi_*` field of `info` by name.
pub fn field(info: &TcpInfo, name: &str) -> Option<f64> {
    let v = match name {
        "tcpi_state" => info.state as u64,
        "tcpi_ca_state" => info.ca_state as u64,
        "tcpi_retransmits" => info.retransmits as u64,
        "tcpi_backoff" => info.backoff as u64,
        "tcpi_rto" => info.rto,
        "tcpi_snd_mss" => info.snd_mss,
        "tcpi_rcv_mss" => info.rcv_mss,
        "tcpi_unacked" => info.unacked,
        "tcpi_sacked" => info.sacked,
        "tcpi_lost" => info.lost,
        "tcpi_retrans" => info.retrans,
        "tcpi_total_retrans" => info.total_retrans,
        "tcpi_rtt" => info.rtt,
        "tcpi_rttvar" => info.rttvar,
        "tcpi_min_rtt" => info.min_rtt,
        "tcpi_snd_ssthresh" => info.snd_ssthresh,
        "tcpi_snd_cwnd" => info.snd_cwnd,
        "tcpi_snd_wnd" => info.snd_wnd,
        "tcpi_rcv_wscale" => info.rcv_wscale as u64,
        "tcpi_snd_wscale" => info.snd_wscale as u64,
        "tcpi_options" => info.options as u64,
        "tcpi_pacing_rate" => info.pacing_rate,
        "tcpi_delivery_rate" => info.delivery_rate,
        "tcpi_delivered_ce" => info.delivered_ce,
        "tcpi_received_ce" => info.received_ce,
        "tcpi_reordering" => info.reordering as u64,
        "tcpi_reord_seen" => info.reord_seen as u64,
        "tcpi_bytes_acked" => info.bytes_acked,
        "tcpi_bytes_received" => info.bytes_received,
        "tcpi_segs_out" => info.segs_out,
        "tcpi_data_segs_out" => info.data_segs_out,
        _ => return None,
    };
    Some(v as f64)
}

/// Linux's chrono states (tcp_chrono_start/stop), in their order of precedence; send-buffer
/// limits are not modeled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum ChronoType {
    /// Nothing queued or in flight (TCP_CHRONO_UNSPEC).
    #[default]
    Idle,
    /// Data in flight or queued (TCP_CHRONO_BUSY).
    Busy,
    /// The next segment does not fit the receive window (TCP_CHRONO_RWND_LIMITED).
    RwndLimited,
}

/// The time spent in each chrono state (Linux tcp_get_info_chrono_stats: tcpi_busy_time is
/// the sum of all, tcpi_rwnd_limited the receive-window part). Linux moves between states
/// where its output path and ACK processing run; the runner reads the socket after every
/// step it takes (a call, a segment, a timer), the same instants.
#[derive(Debug, Clone, Copy, Default)]
struct Chrono {
    state: ChronoType,
    since: SimTime,
    /// Nanoseconds spent in Busy and RwndLimited.
    spent: [u64; 2],
}

impl Chrono {
    fn set(&mut self, state: ChronoType, now: SimTime) {
        if state == self.state {
            return;
        }
        self.spent = self.totals(now);
        self.state = state;
        self.since = now;
    }

    fn totals(&self, now: SimTime) -> [u64; 2] {
        let mut t = self.spent;
        let d = now.since(self.since).0;
        match self.state {
            ChronoType::Idle => {}
            ChronoType::Busy => t[0] += d,
            ChronoType::RwndLimited => t[1] += d,
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::super::{run_script, Options, Outcome};

    const SERVER: &str = "`sysctl -q net.ipv4.tcp_timestamps=0`
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 bind(3, ..., ...) = 0
+0 listen(3, 1) = 0
+0 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 7>
+.1 < . 1:1(0) ack 1 win 1000
+0 accept(3, ..., ...) = 4
+0 setsockopt(4, SOL_TCP, TCP_NODELAY, [1], 4) = 0
";
    /// Lines of SERVER (the next script line is 10).
    const N: u32 = 9;

    fn run(tail: &str) -> Outcome {
        run_script(&format!("{SERVER}{tail}"), &Options::default())
    }

    /// SERVER after `shell` (a command that must precede the socket).
    fn run_after(shell: &str, tail: &str) -> Outcome {
        run_script(&format!("`{shell}`\n{SERVER}{tail}"), &Options::default())
    }

    #[test]
    fn fq_paces_every_segment_after_the_first_ten() {
        let fq = "tc qdisc replace dev tun0 root fq";
        let first = "+0 write(4, ..., 20000) = 20000\n+0 > . 1:10001(10000) ack 1\n+.1 < . 1:1(0) ack 2001 win 1000\n";
        // The initial window leaves at once either way (Linux paces from the tenth segment,
        // though the handshake's RTT already gives a rate); after it, with fq, the ACK's
        // four segments leave as two paced bursts of two (GSO), without it together.
        assert_eq!(
            run_after(
                fq,
                &format!(
                    "{first}+0 > . 10001:12001(2000) ack 1\n+.001 > . 12001:14001(2000) ack 1\n"
                )
            ),
            Outcome::Passed
        );
        let together = format!("{first}+0 > . 10001:14001(4000) ack 1\n");
        assert_eq!(run(&together), Outcome::Passed);
        assert!(matches!(run_after(fq, &together), Outcome::Failed { .. }));
    }

    #[test]
    fn slow_start_after_idle_is_read_from_the_sysctl() {
        // One round doubles cwnd to 20; after 2 s idle (> RTO) Linux's tcp_cwnd_restart
        // halves it per RTO down to the initial 10 — only with the sysctl on.
        let tail = "+0 write(4, ..., 10000) = 10000\n+0 > . 1:10001(10000) ack 1\n+.1 < . 1:1(0) ack 10001 win 1000\n+0 %{ assert tcpi_snd_cwnd == 20 }%\n+2 write(4, ..., 30000) = 30000\n";
        let on = "sysctl -q net.ipv4.tcp_slow_start_after_idle=1";
        let off = "sysctl -q net.ipv4.tcp_slow_start_after_idle=0";
        let cwnd = |n: u32| format!("{tail}+0 %{{ assert tcpi_snd_cwnd == {n} }}%\n");
        assert_eq!(run_after(on, &cwnd(10)), Outcome::Passed);
        assert_eq!(run_after(off, &cwnd(20)), Outcome::Passed);
        assert!(matches!(run_after(off, &cwnd(10)), Outcome::Failed { .. }));
    }

    fn failed(o: &Outcome) -> (u32, String) {
        match o {
            Outcome::Failed { line, message, .. } => (*line, message.clone()),
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn cubic_module_parameters_at_linux_defaults_only() {
        let words = |s: &str| super::shell_words(s);
        let p = super::cubic_module_param;
        assert_eq!(
            p(&words("echo 3 > /sys/module/tcp_cubic/parameters/hystart_detect")),
            Some(Ok(()))
        );
        assert_eq!(p(&words("echo 1 > /sys/module/tcp_cubic/parameters/hystart")), Some(Ok(())));
        assert!(matches!(
            p(&words("echo 1 > /sys/module/tcp_cubic/parameters/hystart_detect")),
            Some(Err(_))
        ));
        assert!(matches!(
            p(&words("echo 0 > /sys/module/tcp_cubic/parameters/hystart")),
            Some(Err(_))
        ));
        assert!(matches!(
            p(&words("echo 41 > /sys/module/tcp_cubic/parameters/beta")),
            Some(Err(_))
        ));
        assert_eq!(p(&words("echo 3 > /tmp/x")), None);
        assert_eq!(p(&words("sysctl -q net.ipv4.tcp_sack=1")), None);
    }

    #[test]
    fn server_preamble_passes() {
        assert_eq!(run(""), Outcome::Passed);
    }

    #[test]
    fn tso_run_matches_split_or_whole() {
        assert_eq!(
            run("+0 write(4, ..., 3000) = 3000\n+0 > P. 1:3001(3000) ack 1\n"),
            Outcome::Passed
        );
        let split = "+0 write(4, ..., 3000) = 3000\n+0 > . 1:1001(1000) ack 1\n+0 > . 1001:3001(2000) ack 1\n";
        assert_eq!(run(split), Outcome::Passed);
    }

    #[test]
    fn mismatches_name_the_field_and_line() {
        let (line, msg) =
            failed(&run("+0 write(4, ..., 1000) = 1000\n+0 > . 1:1001(1000) ack 2\n"));
        assert_eq!(line, N + 2);
        assert!(msg.starts_with("ack: expected 2, actual 1"), "{msg}");
        assert!(
            msg.contains("expected: > . 1:1001(1000) ack 2")
                && msg.contains("actual:   > P. 1:1001(1000) ack 1"),
            "{msg}"
        );
        let (_, msg) =
            failed(&run("+0 write(4, ..., 1000) = 1000\n+0 > . 1:1001(1000) ack 1 win 7\n"));
        assert!(msg.starts_with("window: expected 7"), "{msg}");
        let (_, msg) = failed(&run("+0 write(4, ..., 1000) = 500\n"));
        assert!(msg.contains("write() returned 1000, script expects 500"), "{msg}");
        let (line, msg) = failed(&run("+0 %{ assert tcpi_snd_cwnd == 11 }%\n"));
        assert_eq!(line, N + 1);
        assert!(msg.contains("tcpi_snd_cwnd = 10"), "{msg}");
    }

    #[test]
    fn timing_tolerance() {
        // The segment leaves at 0.1 s: 3 ms late in the script is within the 4 ms tolerance,
        // 5 ms is not, and neither is expecting it 5 ms earlier.
        assert_eq!(
            run("+0 write(4, ..., 1000) = 1000\n+.003 > . 1:1001(1000) ack 1\n"),
            Outcome::Passed
        );
        let (_, msg) =
            failed(&run("+0 write(4, ..., 1000) = 1000\n+.005 > . 1:1001(1000) ack 1\n"));
        assert!(msg.contains("earlier than expected"), "{msg}");
        let strict = Options { tolerance_usecs: 0 };
        let src = format!("{SERVER}+0 write(4, ..., 1000) = 1000\n+.003 > . 1:1001(1000) ack 1\n");
        assert!(matches!(run_script(&src, &strict), Outcome::Failed { .. }));
        // Ranges and `*`.
        assert_eq!(
            run("+0 write(4, ..., 1000) = 1000\n+0~+.5 > . 1:1001(1000) ack 1\n"),
            Outcome::Passed
        );
        assert_eq!(run("+0 write(4, ..., 1000) = 1000\n+.4 < . 1:1(0) ack 1 win 1000\n* > . 1:1001(1000) ack 1\n"), Outcome::Passed);
        // Nothing sent in time.
        let (_, msg) = failed(&run("+0 > . 1:1001(1000) ack 1\n"));
        assert!(msg.contains("nothing was sent"), "{msg}");
    }

    #[test]
    fn unmodeled_lines_are_unsupported_not_passed() {
        let cases = [
            "+0 < U. 1:1(0) ack 1 win 1000\n",
            "+0 shutdown(4, SHUT_NONE) = 0\n",
            "+0 read(4, ..., 100) = 100\n",
            "`ip route change default initcwnd 20`\n",
            "`sysctl -q net.ipv4.tcp_recovery=4`\n",
            "+0 setsockopt(4, SOL_TCP, TCP_MAXSEG, [500], 4) = 0\n",
            "+0 poll([{fd=4, events=POLLIN}], 1, 0) = 0\n",
            "+0 %{ tcpi_rto.bit_length() }%\n",
            "+0 `tc qdisc replace dev tun0 root pfifo limit 0`\n",
            "+0 %{ assert tcpi_sndbuf_limited == 0 }%\n",
            "+0 setsockopt(4, SOL_TCP, TCP_QUICKACK, [1], 4) = 0\n",
        ];
        for c in cases {
            assert!(matches!(run(c), Outcome::Unsupported { .. }), "{c}: {:?}", run(c));
        }
    }

    #[test]
    fn malformed_scripts_are_errors_with_positions() {
        let o = run("+0 bogus(4) = 0\n");
        let Outcome::Malformed(e) = o else { panic!("{o:?}") };
        assert_eq!((e.line, e.col), (N + 1, 4));
        let o = run("0.05 < . 1:1(0) ack 1 win 10\n");
        let Outcome::Malformed(e) = o else { panic!("{o:?}") };
        assert!(e.message.contains("backwards"), "{}", e.message);
    }

    #[test]
    fn socket_options() {
        let script = "`sysctl -q net.ipv4.tcp_timestamps=0`
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 setsockopt(3, SOL_SOCKET, SO_RCVBUF, [65536], 4) = 0
+0 getsockopt(3, SOL_SOCKET, SO_RCVBUF, [131072], [4]) = 0
+0 bind(3, ..., ...) = 0
+0 listen(3, 1) = 0
+0 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 2>
+.1 < . 1:1(0) ack 1 win 1000
+0 accept(3, ..., ...) = 4
+0 getsockopt(4, SOL_TCP, TCP_INFO, {tcpi_state=1, tcpi_snd_cwnd=10, tcpi_rcv_wscale=2}, [104]) = 0
+0 setsockopt(4, SOL_SOCKET, SO_SNDBUF, [5000], 4) = 0
+0 getsockopt(4, SOL_SOCKET, SO_SNDBUF, [10000], [4]) = 0
+0 setsockopt(4, SOL_TCP, TCP_NODELAY, [1], 4) = 0
+0 getsockopt(4, SOL_TCP, TCP_NODELAY, [1], [4]) = 0
+0 write(4, ..., 10000) = 10000
";
        assert_eq!(run_script(script, &Options::default()), Outcome::Passed);
        let more = format!("{script}+0 write(4, ..., 1) = 1\n");
        assert!(matches!(
            run_script(&more, &Options::default()),
            Outcome::Unsupported { line: 17, .. }
        ));
        let wrong = script.replace("tcpi_snd_cwnd=10", "tcpi_snd_cwnd=9");
        let (line, msg) = failed(&run_script(&wrong, &Options::default()));
        assert_eq!(line, 11);
        assert!(msg.contains("tcpi_snd_cwnd: script expects 9, actual 10"), "{msg}");
    }

    #[test]
    fn upstream_preambles() {
        let v = super::shell_settings(
            "../common/defaults.sh\n../common/set_sysctls.py /proc/sys/net/ipv4/tcp_timestamps=0 \\\n \
             /proc/sys/net/ipv4/tcp_rmem=\"4096 $((2*1024)) $((4*1024*1024))\"",
        )
        .unwrap();
        assert!(v.contains(&("net.ipv4.tcp_ecn".into(), "0".into())));
        assert!(v.contains(&("net.ipv4.tcp_timestamps".into(), "0".into())));
        assert_eq!(
            v.last().unwrap(),
            &("net.ipv4.tcp_rmem".to_string(), "4096 2048 4194304".to_string())
        );
        // fq is pacing; another qdisc, or fq with parameters, is not modeled.
        assert_eq!(
            super::shell_settings("tc qdisc replace dev tun0 root fq").unwrap(),
            vec![(super::QDISC_FQ.to_string(), "1".to_string())]
        );
        assert!(super::shell_settings("tc qdisc replace dev tun0 root pfifo limit 0").is_err());
        assert!(super::shell_settings("tc qdisc add dev tun0 root fq maxrate 1mbit").is_err());
        assert!(super::shell_settings("tc qdisc replace dev tun0 root netem delay 10ms").is_err());
        // ethtool: segmentation offloads only; TSO or GSO off turns GSO bursts off.
        assert_eq!(
            super::shell_settings("ethtool -K tun0 tso off gso off gro on").unwrap(),
            vec![(super::OFFLOAD_GSO.to_string(), "0".to_string()); 2]
        );
        assert!(super::shell_settings("ethtool -K tun0 rx off").is_err());
        assert!(super::shell_settings("ethtool -K tun0 tso").is_err());
        assert!(super::shell_settings("ethtool -k tun0").is_err());
        // tcp_rmem[2] = 15 MiB (defaults.sh) gives Linux's window scale 8.
        let s = "`../common/defaults.sh`\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 bind(3, ..., ...) = 0
+0 listen(3, 1) = 0\n+0 < S 0:0(0) win 65535 <mss 1000,nop,wscale 7>\n+0 > S. 0:0(0) ack 1 <mss 1460,nop,wscale 8>\n";
        let o = run_script(s, &Options::default());
        assert!(matches!(o, Outcome::Passed | Outcome::Failed { .. }), "{o:?}");
    }

    #[test]
    fn calls_of_the_upstream_suite() {
        assert_eq!(
            run("+0 send(4, ..., 1000, 0) = 1000\n+0 > P. 1:1001(1000) ack 1\n"),
            Outcome::Passed
        );
        let msg = "+0 sendmsg(4, {msg_name(...)=..., msg_iov(2)=[{..., 500}, {..., 500}], msg_flags=0}, 0) = 1000\n";
        assert_eq!(run(&format!("{msg}+0 > P. 1:1001(1000) ack 1\n")), Outcome::Passed);
        // TCP_MAXSEG on a listener before its SYN: the SYN-ACK advertises it, the accepted
        // connection sizes its segments by it; IP_MTU_DISCOVER and IP_TOS change nothing.
        let listener = "`sysctl -q net.ipv4.tcp_timestamps=0`
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 setsockopt(3, SOL_IP, IP_MTU_DISCOVER, [IP_PMTUDISC_DONT], 1) = 0
+0 bind(3, ..., ...) = 0
+0 listen(3, 1) = 0
+0 setsockopt(3, SOL_TCP, TCP_MAXSEG, [600], 4) = 0
+0 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0 > S. 0:0(0) ack 1 <mss 600,nop,nop,sackOK,nop,wscale 7>
+.1 < . 1:1(0) ack 1 win 1000
+0 accept(3, ..., ...) = 4
+0 setsockopt(4, SOL_IP, IP_TOS, [4], 1) = 0
+0 write(4, ..., 1200) = 1200
+0 > P. 1:1201(1200) ack 1
+0 getsockopt(4, SOL_TCP, TCP_MAXSEG, [600], [4]) = 0
";
        assert_eq!(run_script(listener, &Options::default()), Outcome::Passed);
        let syn_seen = listener.replace(
            "+0 setsockopt(3, SOL_TCP, TCP_MAXSEG, [600], 4) = 0\n+0 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n",
            "+0 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n+0 setsockopt(3, SOL_TCP, TCP_MAXSEG, [600], 4) = 0\n",
        );
        assert!(matches!(run_script(&syn_seen, &Options::default()), Outcome::Unsupported { .. }));
    }

    /// Linux's chrono accounting: time with data queued or in flight (tcpi_busy_time, in
    /// microseconds) and the part of it the receive window held the next segment back
    /// (tcpi_rwnd_limited); a window below one segment waits for the persist timer's probe,
    /// which sends what fits (Linux's tcp_write_wakeup; RTO 300 ms here).
    #[test]
    fn chrono_and_small_window() {
        let script = "+0 %{ assert tcpi_busy_time == 0 and tcpi_rwnd_limited == 0 }%
+0 write(4, ..., 1000) = 1000
+0 > P. 1:1001(1000) ack 1
+.05 < . 1:1(0) ack 1001 win 2
+0 write(4, ..., 1000) = 1000
+.1 %{ assert tcpi_busy_time == 150000 and tcpi_rwnd_limited == 100000 }%
+.2 > . 1001:1257(256) ack 1
";
        assert_eq!(run(script), Outcome::Passed);
        // Not sent at once into the 256-byte window (wscale 7: win 2 = 256 bytes).
        let early = script.replace("+.1 %{", "+0 > . 1001:1257(256) ack 1\n+.1 %{");
        let (line, _) = failed(&run(&early));
        assert_eq!(line, N + 6);
    }

    /// Corking (tcp(7) TCP_CORK, send(2) MSG_MORE): a sub-MSS tail waits for more data, an
    /// uncork, a TCP_NODELAY push or, with nothing in flight, the probe timer (max(RTO,
    /// 200 ms): SRTT 100 ms here, so RTO 300 ms); full segments go out at once.
    #[test]
    fn corking() {
        let more = "+0 send(4, ..., 40, MSG_MORE) = 40\n+.05 write(4, ..., 20) = 20\n+0 > P. 1:61(60) ack 1\n";
        assert_eq!(run(more), Outcome::Passed);
        // Not sent with the MSG_MORE write itself.
        let (line, _) =
            failed(&run("+0 send(4, ..., 40, MSG_MORE) = 40\n+0 > P. 1:41(40) ack 1\n"));
        assert_eq!(line, N + 2);
        // The probe timer sends the held tail.
        assert_eq!(
            run("+0 send(4, ..., 40, MSG_MORE) = 40\n+.3 > P. 1:41(40) ack 1\n"),
            Outcome::Passed
        );
        // Full segments go, the tail waits; an ACK's push follows TCP_NODELAY, not MSG_MORE.
        assert_eq!(
            run("+0 send(4, ..., 2500, MSG_MORE) = 2500\n+0 > . 1:2001(2000) ack 1\n\
                 +.1 < . 1:1(0) ack 2001 win 1000\n+0 > P. 2001:2501(500) ack 1\n"),
            Outcome::Passed
        );
        let cork = "+0 setsockopt(4, SOL_TCP, TCP_CORK, [1], 4) = 0\n+0 write(4, ..., 40) = 40\n\
                    +.01 write(4, ..., 40) = 40\n+.01 setsockopt(4, SOL_TCP, TCP_CORK, [0], 4) = 0\n\
                    +0 > P. 1:81(80) ack 1\n";
        assert_eq!(run(cork), Outcome::Passed);
        let (line, _) =
            failed(&run(&cork.replace("+.01 write", "+0 > P. 1:41(40) ack 1\n+.01 write")));
        assert_eq!(line, N + 3);
        let nodelay = cork.replace("TCP_CORK, [0]", "TCP_NODELAY, [1]");
        assert_eq!(run(&nodelay), Outcome::Passed);
        // SO_ERROR after the handshake: no pending error.
        assert_eq!(run("+0 getsockopt(4, SOL_SOCKET, SO_ERROR, [0], [4]) = 0\n"), Outcome::Passed);
    }

    /// Nagle's algorithm with Minshall's rule (tcp_nagle_check): TCP_NODELAY 0 turns it on; a
    /// small write waits while a small segment is unacknowledged, and an uncork pushes under
    /// it too. (tests/packetdrill/nagle-minshall.pkt, which passes on Linux 6.18, has the rest.)
    #[test]
    fn nagle_holds_a_small_write_behind_a_small_segment() {
        let on = "+0 setsockopt(4, SOL_TCP, TCP_NODELAY, [0], 4) = 0\n";
        let gather = "+0 write(4, ..., 40) = 40\n+0 > P. 1:41(40) ack 1\n\
                      +.01 write(4, ..., 40) = 40\n+.01 write(4, ..., 40) = 40\n\
                      +.08 < . 1:1(0) ack 41 win 1000\n+0 > P. 41:121(80) ack 1\n";
        assert_eq!(run(&format!("{on}{gather}")), Outcome::Passed);
        // Without it (the preamble's TCP_NODELAY) the second write leaves at once, where the
        // script expects the gathered segment.
        let (line, _) = failed(&run(gather));
        assert_eq!(line, N + 6);
        // A full segment in flight holds nothing (Minshall), a small one does.
        let full = "+0 write(4, ..., 1000) = 1000\n+0 > P. 1:1001(1000) ack 1\n\
                    +.01 write(4, ..., 40) = 40\n+0 > P. 1001:1041(40) ack 1\n\
                    +.01 write(4, ..., 40) = 40\n+.08 < . 1:1(0) ack 1041 win 1000\n\
                    +0 > P. 1041:1081(40) ack 1\n";
        assert_eq!(run(&format!("{on}{full}")), Outcome::Passed);
        // Clearing TCP_CORK pushes under Nagle's rule: the tail waits for the ACK.
        let uncork = "+0 write(4, ..., 40) = 40\n+0 > P. 1:41(40) ack 1\n\
                      +0 setsockopt(4, SOL_TCP, TCP_CORK, [1], 4) = 0\n+.01 write(4, ..., 40) = 40\n\
                      +.01 setsockopt(4, SOL_TCP, TCP_CORK, [0], 4) = 0\n\
                      +.08 < . 1:1(0) ack 41 win 1000\n+0 > P. 41:81(40) ack 1\n";
        assert_eq!(run(&format!("{on}{uncork}")), Outcome::Passed);
    }

    #[test]
    fn blocking_connect_and_maxseg() {
        // A blocking connect: the handshake completes within its `lo...hi` span; TCP_MAXSEG
        // sets the MSS the SYN advertises.
        let client = "`sysctl -q net.ipv4.tcp_timestamps=0`
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 setsockopt(3, SOL_TCP, TCP_MAXSEG, [1100], 4) = 0
+0 getsockopt(3, SOL_TCP, TCP_MAXSEG, [1100], [4]) = 0
+.1...0.2 connect(3, ..., ...) = 0
+0 > S 0:0(0) <mss 1100,sackOK,nop,wscale 7>
+.1 < S. 0:0(0) ack 1 win 5792 <mss 1460,nop,wscale 2,nop,nop,sackOK>
+0 > . 1:1(0) ack 1
+.1 %{ assert tcpi_advmss == 1100 and tcpi_snd_mss == 1100 }%
";
        assert_eq!(run_script(client, &Options::default()), Outcome::Passed);
        let late = client.replace("+.1 < S.", "+.2 < S.");
        assert!(matches!(run_script(&late, &Options::default()), Outcome::Failed { .. }));
    }

    #[test]
    fn outcome_json() {
        assert_eq!(Outcome::Passed.to_json(), r#"{"status":"passed"}"#);
        let j = Outcome::Unsupported { line: 3, col: 4, what: "x".into() }.to_json();
        assert!(
            j.contains(r#""status":"unsupported""#)
                && j.contains(r#""line":3"#)
                && j.contains(r#""column":4"#)
        );
    }
}
