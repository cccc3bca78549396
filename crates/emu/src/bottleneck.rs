//! The bottleneck process's loop: one thread, epoll on the two TUN devices and a timerfd armed
//! at the next due time (absolute CLOCK_MONOTONIC, 1 ns timer slack). Each round: run what is
//! due, read every waiting packet, run what became due, write what has left its delay line.

use crate::clock::Clock;
use crate::core::Side;
use crate::pcap::Pcap;
use crate::sys::{self, Poller};
use crate::tun::Tun;
use bloatlab_sim::units::{Dur, SimTime};
use bloatlab_sim::ScenarioError;
use serde_json::{json, Value};
use std::io;
use std::path::PathBuf;

#[derive(Debug)]
pub enum EmuError {
    /// Bad input (exit code 2).
    Invalid(ScenarioError),
    /// The system refused something (devices, files): exit code 1.
    Io(String),
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::Invalid(e) => write!(f, "{e}"),
            EmuError::Io(m) => write!(f, "{m}"),
        }
    }
}

impl From<ScenarioError> for EmuError {
    fn from(e: ScenarioError) -> Self {
        EmuError::Invalid(e)
    }
}

fn io_err(what: &str) -> impl Fn(io::Error) -> EmuError + '_ {
    move |e| EmuError::Io(format!("{what}: {e}"))
}

/// The bottleneck's run configuration (JSON from the controller).
pub struct RunCfg {
    pub scenario: Value,
    /// The shared time origin (CLOCK_MONOTONIC ns); the run lasts the scenario's duration from it.
    /// None: read it from `go_file` once that appears (after the ready file was written).
    pub t0_ns: Option<u64>,
    pub go_file: Option<PathBuf>,
    pub tun_senders: String,
    pub tun_receivers: String,
    /// Created once both devices exist (the controller then moves them into the namespaces).
    pub ready_file: Option<PathBuf>,
    /// Its appearance ends the run early (still with measurements).
    pub stop_file: Option<PathBuf>,
    pub pcap_senders: Option<PathBuf>,
    pub pcap_receivers: Option<PathBuf>,
    pub snaplen: u32,
}

impl RunCfg {
    pub fn from_json(text: &str) -> Result<RunCfg, EmuError> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| EmuError::Io(format!("malformed bottleneck config: {e}")))?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let p = |k: &str| s(k).map(PathBuf::from);
        let need =
            |k: &str| s(k).ok_or_else(|| EmuError::Io(format!("bottleneck config: missing {k}")));
        Ok(RunCfg {
            scenario: v
                .get("scenario")
                .cloned()
                .ok_or_else(|| EmuError::Io("bottleneck config: missing scenario".into()))?,
            t0_ns: v.get("t0_ns").and_then(Value::as_u64),
            go_file: p("go_file"),
            tun_senders: need("tun_senders")?,
            tun_receivers: need("tun_receivers")?,
            ready_file: p("ready_file"),
            stop_file: p("stop_file"),
            pcap_senders: p("pcap_senders"),
            pcap_receivers: p("pcap_receivers"),
            snaplen: v.get("snaplen").and_then(Value::as_u64).unwrap_or(65535) as u32,
        })
    }
}

/// Lateness of writes against their ideal time (how well the wall clock was kept).
#[derive(Default)]
struct Lateness {
    n: u64,
    sum_ns: u128,
    max_ns: u64,
    over_1ms: u64,
}

/// Runs the bottleneck until the scenario's duration has passed since `t0` (or the stop file
/// appears) and returns its measurements as JSON text.
pub fn run(cfg: &RunCfg) -> Result<String, EmuError> {
    let scenario = crate::config::scenario(&cfg.scenario)?;
    let mut core = crate::config::core(&scenario);
    // Timer slack 1 ns: the default 50 µs slack would add jitter to every delay.
    sys::set_timer_slack_ns(1);
    let realtime = become_realtime();
    let snd = Tun::open(&cfg.tun_senders)
        .map_err(io_err(&format!("cannot create TUN device {}", cfg.tun_senders)))?;
    let rcv = Tun::open(&cfg.tun_receivers)
        .map_err(io_err(&format!("cannot create TUN device {}", cfg.tun_receivers)))?;
    let poller = Poller::new(&[snd.fd(), rcv.fd()]).map_err(io_err("epoll"))?;
    let mut pcaps: [Option<Pcap>; 2] = [None, None];
    for (i, p) in [&cfg.pcap_senders, &cfg.pcap_receivers].into_iter().enumerate() {
        if let Some(path) = p {
            pcaps[i] = Some(
                Pcap::create(path, cfg.snaplen)
                    .map_err(io_err(&format!("cannot write {}", path.display())))?,
            );
        }
    }
    if let Some(r) = &cfg.ready_file {
        std::fs::write(r, b"ready\n").map_err(io_err(&format!("cannot write {}", r.display())))?;
    }
    let t0_ns = match (cfg.t0_ns, &cfg.go_file) {
        (Some(t), _) => t,
        (None, Some(go)) => wait_for_origin(go)?,
        (None, None) => {
            return Err(EmuError::Io("bottleneck config: needs t0_ns or go_file".into()))
        }
    };
    let clock = Clock { t0_ns };
    let end = SimTime(scenario.duration.0);
    let devs = [&snd, &rcv];
    let mut scratch = [0u8; crate::slab::SLOT];
    let mut slab_full = 0u64;
    let mut write_errors = 0u64;
    let mut late = Lateness::default();
    let mut rounds = 0u64;
    let mut next_stop_check = SimTime::ZERO;
    let wall = std::time::Instant::now();
    loop {
        rounds += 1;
        let now = clock.now();
        if now >= end {
            break;
        }
        if now >= next_stop_check {
            if cfg.stop_file.as_ref().is_some_and(|p| p.exists()) {
                break;
            }
            next_stop_check = now + Dur::from_millis(50);
        }
        core.advance(now);
        for (i, side) in [Side::Senders, Side::Receivers].into_iter().enumerate() {
            // A bounded batch per device keeps the other direction and the writes timely.
            for _ in 0..256 {
                let Some(id) = core.slab.alloc() else {
                    // Out of buffers: read and drop, so the device does not back up unseen.
                    match devs[i].read(&mut scratch).map_err(io_err("TUN read"))? {
                        Some(_) => {
                            slab_full += 1;
                            continue;
                        }
                        None => break,
                    }
                };
                match devs[i].read(core.slab.slot_mut(id)) {
                    Ok(Some(n)) => {
                        let t = clock.now();
                        if let Some(p) = pcaps[i].as_mut() {
                            let _ = p.record(t, &core.slab.slot_mut(id)[..n]);
                        }
                        core.arrive(side, id, n, t);
                    }
                    Ok(None) => {
                        core.slab.free(id);
                        break;
                    }
                    Err(e) => {
                        core.slab.free(id);
                        return Err(EmuError::Io(format!("TUN read on {}: {e}", devs[i].name)));
                    }
                }
            }
        }
        let now = clock.now();
        core.advance(now);
        for (i, from) in [Side::Senders, Side::Receivers].into_iter().enumerate() {
            let to = 1 - i;
            while let Some((due, id)) = core.pop_out(from, now) {
                let pkt = core.slab.pkt(id);
                match devs[to].write(pkt) {
                    Ok(()) => core.counters.written[i] += 1,
                    Err(_) => write_errors += 1,
                }
                if let Some(p) = pcaps[to].as_mut() {
                    let _ = p.record(now, pkt);
                }
                let l = now.since(due).0;
                late.n += 1;
                late.sum_ns += l as u128;
                late.max_ns = late.max_ns.max(l);
                late.over_1ms += (l > 1_000_000) as u64;
                core.slab.free(id);
            }
        }
        let due = core.next_deadline().min(end).min(next_stop_check);
        if due > clock.now() {
            poller.wait(clock.abs(due)).map_err(io_err("epoll_wait"))?;
        }
    }
    let stopped = clock.now();
    let wall_s = wall.elapsed().as_secs_f64();
    for p in pcaps.into_iter().flatten() {
        p.finish().map_err(io_err("pcap"))?;
    }
    // Stopped early (the stop file: every transfer has completed) or not, the measurement
    // window is [warm-up, duration], as in the simulator: what is left of it is idle.
    let mut out = core.finish(end);
    out["io"]["slab_full_drops"] = json!(slab_full);
    out["io"]["write_errors"] = json!(write_errors);
    out["io"]["rounds"] = json!(rounds);
    out["io"]["wall_s"] = json!(wall_s);
    out["io"]["stopped_s"] = json!(end.min(stopped).secs_f64());
    out["io"]["write_late_mean_us"] =
        json!(if late.n > 0 { late.sum_ns as f64 / late.n as f64 / 1e3 } else { 0.0 });
    out["io"]["write_late_max_us"] = json!(late.max_ns as f64 / 1e3);
    out["io"]["write_late_over_1ms"] = json!(late.over_1ms);
    out["io"]["realtime"] = json!(realtime);
    Ok(out.to_string())
}

/// Real-time priority for this thread (SCHED_FIFO, a middle priority) when allowed (root):
/// a busy machine's other processes, the simulator's sweeps or a build, then wait for the
/// bottleneck rather than the reverse, so its writes keep their times. The loop blocks in
/// epoll between deadlines, and the kernel's real-time throttling bounds it anyway. Returns
/// whether it took effect (without it the bottleneck still runs, as before).
fn become_realtime() -> bool {
    // BLOATLAB_EMU_REALTIME=0 keeps the normal policy (to measure what it changes).
    if std::env::var("BLOATLAB_EMU_REALTIME").is_ok_and(|v| v == "0") {
        return false;
    }
    sys::set_sched_fifo(50)
}

/// Waits (up to two minutes) for the controller to publish the time origin in `go`.
fn wait_for_origin(go: &std::path::Path) -> Result<u64, EmuError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        if let Ok(text) = std::fs::read_to_string(go) {
            return text.trim().parse().map_err(|_| {
                EmuError::Io(format!("{}: expected a CLOCK_MONOTONIC time in ns", go.display()))
            });
        }
        if std::time::Instant::now() > deadline {
            return Err(EmuError::Io(format!("timed out waiting for {}", go.display())));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// `run` with its configuration as JSON text.
pub fn run_json(cfg_json: &str) -> Result<String, EmuError> {
    run(&RunCfg::from_json(cfg_json)?)
}
