//! Congestion control: the sender-side window policy, as a trait the TCP core calls.
//!
//! The core owns loss detection and recovery; a controller decides how the window grows on
//! ACKs and what `ssthresh` becomes on a congestion event (Linux's split between
//! tcp_input.c and the tcp_congestion_ops modules). Windows are in bytes.

mod bbr;
mod bbr3;
mod ccid2;
mod cubic;
mod dccp_bbr;
mod dctcp;
mod delayed;
mod ledbat;
mod ledbat_pp;
mod minmax;
mod prague;
mod registry;
mod reno;
mod vegas;
mod westwood;

pub use bbr::{Bbr, Mode as BbrMode};
pub use bbr3::{Bbr3, Bbr3Params, Bbr3State};
pub use ccid2::Ccid2;
pub use cubic::{Cubic, CubicParams};
pub use dccp_bbr::{cycle_gains, DccpBbr};
pub use dctcp::{Dctcp, DctcpParams};
pub use delayed::{Delayed, DelayedParams};
pub use ledbat::{Ledbat, LedbatParams};
pub use ledbat_pp::LedbatPlusPlus;
pub use prague::{Prague, PragueParams, RttIndependence};
pub use registry::{
    build, entry, known_names, BuildCtx, CcBuild, CcEntry, CcKind, CcSpec, CcTransport,
    DccpNoParams, NoParams,
};
pub use reno::Reno;
pub use vegas::{Vegas, VegasParams};
pub use westwood::Westwood;

/// Every congestion control, in listing order.
pub static CONTROLLERS: &[CcEntry] = &[
    reno::RENO,
    reno::NEWRENO,
    cubic::ENTRY,
    vegas::ENTRY,
    westwood::ENTRY,
    bbr::ENTRY,
    bbr3::ENTRY,
    dctcp::ENTRY,
    prague::ENTRY,
    ledbat::ENTRY,
    ledbat_pp::ENTRY,
    ccid2::ENTRY,
    dccp_bbr::ENTRY,
    dccp_bbr::ADAPTIVE,
];

use crate::net::Ecn;
use crate::params::{err, Res, Table};
use crate::units::{Dur, Rate, SimTime};
use crate::wire::EcnMode;

/// One delivery-rate sample, handed to congestion controls (transports measure it with
/// `tcp::RateSampler`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateSample {
    /// Bytes delivered over the interval.
    pub delivered: u64,
    pub interval: Dur,
    pub rate: Rate,
    /// The connection's `delivered` when the reference segment was sent (BBR round counting).
    pub prior_delivered: u64,
    /// The sample was taken while the application, not the network, limited sending.
    pub app_limited: bool,
}

/// The window state a controller reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

impl Window {
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// The sender's loss-recovery state (Linux's tcp_ca_state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaState {
    /// Normal operation.
    Open,
    /// SACKs or dupACKs seen, no loss inferred yet.
    Disorder,
    /// Reducing the window after an ECN echo, by PRR, until the data outstanding at the echo
    /// is acknowledged (Linux's TCP_CA_CWR; only with the `linux_cwr` rule).
    Cwr,
    /// Fast recovery after a loss.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

impl CaState {
    /// The core is reducing cwnd (fast recovery or CWR): controllers do not grow it, as
    /// Linux calls no cong_avoid while tcp_in_cwnd_reduction.
    #[inline]
    pub fn reducing(self) -> bool {
        matches!(self, CaState::Recovery | CaState::Cwr)
    }

    pub fn label(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

/// Everything a controller may want to know about one ACK.
#[derive(Debug, Clone, Copy)]
pub struct AckSample {
    pub now: SimTime,
    /// RTT sample taken from this ACK, if any.
    pub rtt: Option<Dur>,
    pub srtt: Option<Dur>,
    pub min_rtt: Option<Dur>,
    /// Bytes newly acknowledged, cumulatively or selectively.
    pub acked_bytes: u64,
    /// In-flight estimate before and after processing this ACK.
    pub prior_in_flight: u64,
    pub in_flight: u64,
    /// Bytes newly presumed lost on this ACK.
    pub lost_bytes: u64,
    /// Total bytes delivered over the connection.
    pub delivered: u64,
    pub rate: Option<RateSample>,
    pub ca_state: CaState,
    /// The sender was limited by cwnd (not by the application or the receive window), and
    /// the ACK may raise cwnd (it advanced snd.una; pure SACKs do not, as in Linux).
    pub cwnd_limited: bool,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Payload bytes (and packets) newly reported CE-marked by this ACK's ECN feedback: the
    /// AccECN counters, or with classic ECN the bytes an ECE-flagged ACK acknowledges (RFC
    /// 8257 §3.3). Filled in only for controllers that react to marks themselves.
    pub ce_bytes: u64,
    pub ce_pkts: u64,
    /// A one-way delay sample from the timestamps (RFC 7323): the ACK's TSval (the receiver's
    /// clock when it sent the ACK) minus its echo of the data's TSval. Clocks are the
    /// simulation's, so there is no offset; a delayed ACK's hold time is in it. None without
    /// timestamps.
    pub owd: Option<Dur>,
}

/// What a controller does with the ECN feedback the handshake settled on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EcnUse {
    /// The codepoint on new data segments (retransmissions stay Not-ECT, RFC 3168 §6.1.5).
    pub ect: Ecn,
    /// The controller reacts to CE counts itself ([`AckSample::ce_bytes`]); otherwise the core
    /// answers any new mark with one RFC 3168 reduction per window.
    pub scalable: bool,
}

#[cfg(test)]
impl AckSample {
    /// A cwnd-limited ACK in the Open state without a rate sample, for controllers' unit tests.
    pub(crate) fn test(now: SimTime, acked_bytes: u64, rtt: Option<Dur>) -> AckSample {
        AckSample {
            now,
            rtt,
            srtt: rtt,
            min_rtt: rtt,
            acked_bytes,
            prior_in_flight: 0,
            in_flight: 0,
            lost_bytes: 0,
            delivered: 0,
            rate: None,
            ca_state: CaState::Open,
            cwnd_limited: true,
            snd_una: 0,
            snd_nxt: 0,
            ce_bytes: 0,
            ce_pkts: 0,
            owd: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CongestionKind {
    /// Loss inferred from dupACKs/SACKs: entering fast recovery.
    FastRetransmit,
    /// Retransmission timeout.
    Rto,
    /// An ECN echo.
    Ecn,
}

#[derive(Debug, Clone, Copy)]
pub struct CongestionEvent {
    pub now: SimTime,
    pub kind: CongestionKind,
    /// Bytes sent and not cumulatively acknowledged (RFC 5681 FlightSize).
    pub flight_size: u64,
    pub in_flight: u64,
}

pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;
    /// Called on every ACK that acknowledges new data (cumulatively or by SACK).
    fn on_ack(&mut self, w: &mut Window, a: &AckSample);
    /// A congestion event: set `w.ssthresh`. The core then applies its recovery rule to cwnd
    /// (unless [`CongestionControl::owns_cwnd`]).
    fn on_congestion_event(&mut self, w: &mut Window, e: &CongestionEvent);
    /// The last reduction was spurious and is undone: the cwnd to restore, given the one
    /// before the reduction (Linux's undo_cwnd; Reno and CUBIC take the larger). The core
    /// restores ssthresh itself.
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u64, _now: SimTime) -> u64 {
        w.cwnd.max(prior_cwnd)
    }
    /// Fast recovery ended (cwnd was set to ssthresh by the core).
    fn on_recovery_exit(&mut self, _w: &mut Window, _now: SimTime) {}
    /// Transmission starts again with nothing in flight, `idle` after the last send (Linux's
    /// CA_EVENT_TX_START). Called before the core's own restart-after-idle cwnd reduction.
    fn on_tx_start(&mut self, _w: &mut Window, _now: SimTime, _idle: Dur) {}
    /// The controller sets cwnd itself during recovery (BBR); the core leaves it alone.
    fn owns_cwnd(&self) -> bool {
        false
    }
    /// Segments a paced sender sends back to back per pacing slot (Linux's TSO/GSO size goal);
    /// None: the core's default (`tcp_tso_autosize` with `tcp_min_tso_segs` = 2).
    fn tso_segs(&self) -> Option<u64> {
        None
    }
    /// A pacing rate, if this controller paces.
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
    /// The ECN feedback negotiated on the handshake (called when the connection is
    /// established and when the controller is switched on a live socket): how to mark data.
    fn ecn_setup(&mut self, _feedback: EcnMode) -> EcnUse {
        EcnUse { ect: Ecn::Ect0, scalable: false }
    }
    /// A short label of the controller's internal state, for time series. One vocabulary
    /// for every transport: `slow_start` / `cong_avoid` for window-growth controllers, BBR's
    /// mode names (`startup`, `drain`, `probe_bw`, `probe_rtt`) for BBR.
    fn state_label(&self, w: &Window) -> &'static str {
        if w.in_slow_start() {
            "slow_start"
        } else {
            "cong_avoid"
        }
    }
}

/// A DCCP congestion controller (a CCID): TCP's interface for the window and the ACKs, and
/// what only DCCP gives or asks (RFC 4340/4341 and the DCCP-BBR paper). TCP never sees these:
/// its controllers implement [`CongestionControl`] only.
pub trait DccpControl: CongestionControl {
    /// The pacing rate in (wire) bytes per second, unrounded: DCCP paces with it directly.
    fn pacing_bytes_per_sec(&self) -> Option<f64> {
        self.pacing_rate().map(Rate::bytes_per_sec)
    }
    /// Sets the initial window (and ssthresh) before the first send; a DCCP endpoint has no
    /// `init_cwnd` of its own, each CCID has its rule.
    fn on_init(&mut self, _w: &mut Window) {}
    /// The handshake measured the first RTT (DCCP-Request → Response).
    fn on_first_rtt(&mut self, _rtt: Dur, _now: SimTime) {}
    /// The Ack Ratio in force changed (CCID2 caps slow-start growth per ACK by it).
    fn on_ack_ratio(&mut self, _ratio: u64) {}
    /// The receiver reported its loss rate (in [0, 1]) on the ACK about to be processed.
    fn on_loss_rate_report(&mut self, _rate: f64) {}
    /// Should the receiver send its loss rate on every ACK?
    fn wants_loss_rate_reports(&self) -> bool {
        false
    }
    /// Samples taken now are low on purpose (BBR's PROBE_RTT): the sender marks the flow
    /// application-limited so they cannot lower a bandwidth estimate.
    fn marks_app_limited(&self) -> bool {
        false
    }
    /// The CCID number the DCCP-Request asks for.
    fn ccid(&self) -> u8;
}

/// A number read from a parameter table, with an interval check whose message names the
/// interval in mathematical notation: `must be in (0, 1] (got 1.5)`.
pub(crate) fn read_f64(
    t: &mut Table,
    key: &'static str,
    lo: f64,
    lo_open: bool,
    hi: f64,
    hi_open: bool,
) -> Res<Option<f64>> {
    let x = match t.opt_f64(key, f64::MIN, f64::MAX, true)? {
        None => return Ok(None),
        Some(x) => x,
    };
    let below = if lo_open { x <= lo } else { x < lo };
    let above = if hi_open { x >= hi } else { x > hi };
    if below || above {
        let (l, r) = (if lo_open { "(" } else { "[" }, if hi_open { ")" } else { "]" });
        let hi_s = if hi.is_infinite() { "inf".to_string() } else { format!("{hi}") };
        return err(&t.key_path(key), format!("must be in {l}{lo}, {hi_s}{r} (got {x})"));
    }
    Ok(Some(x))
}

#[cfg(test)]
mod tests {

    #[test]
    fn cwr_and_recovery_are_the_reducing_states() {
        let r: Vec<bool> =
            [CaState::Open, CaState::Disorder, CaState::Cwr, CaState::Recovery, CaState::Loss]
                .iter()
                .map(|s| s.reducing())
                .collect();
        assert_eq!(r, [false, false, true, true, false]);
        assert_eq!(CaState::Cwr.label(), "cwr");
    }

    use super::*;
    use serde_json::json;

    fn parse(name: &str, p: serde_json::Value) -> Res<CcSpec> {
        CcSpec::parse(name, Some(&p), "flows[0].cc_params")
    }

    #[test]
    fn every_known_name_parses_and_round_trips() {
        for n in known_names(CcTransport::Tcp) {
            let s =
                CcSpec::parse(n, None, "flows[0].cc_params").unwrap_or_else(|e| panic!("{n}: {e}"));
            assert_eq!(s.name(), n);
            let _ = build(
                &s,
                BuildCtx {
                    mss: 1448,
                    rng: crate::engine::SimRng::new(1, crate::engine::Stream::Endpoint, 0),
                    hz: crate::linux::DEFAULT_HZ,
                },
            );
        }
    }

    #[test]
    fn unknown_names_are_rejected_with_the_known_list() {
        for n in ["cubik", "cubic++", "+", "reno++", "westwood"] {
            let e = CcSpec::parse(n, None, "flows[0].cc_params").unwrap_err();
            assert_eq!(e.path, "flows[0].cc");
            assert!(e.message.contains(&format!("unknown congestion control \"{n}\"")), "{e}");
            assert!(e.message.contains("cubic+"), "{e}");
        }
    }

    #[test]
    fn wrapper_parameters_are_read_and_checked() {
        let s = parse(
            "cubic+",
            json!({"period": "200ms", "threshold": "0.6ms", "theta": 0.8, "beta": 0.5}),
        )
        .unwrap();
        let params = s.wrapper().expect("wrapped");
        assert_eq!(params.period, Dur::from_millis(200));
        assert_eq!(params.threshold, Dur::from_micros(600));
        assert_eq!(params.theta, 0.8);
        assert_eq!(s.entry().name, "cubic");
        assert!(format!("{:?}", s.params()).contains("beta: 0.5"), "{s:?}");
        let d = DelayedParams::default();
        assert_eq!(
            (d.period, d.threshold, d.theta),
            (Dur::from_millis(100), Dur::from_millis(30), 0.9)
        );

        let e = parse("cubic+", json!({"theta": 1.5})).unwrap_err();
        assert_eq!(e.to_string(), "flows[0].cc_params.theta: must be in (0, 1] (got 1.5)");
        let e = parse("reno+", json!({"theta": 0})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.theta");
        assert!(e.message.contains("(0, 1]"), "{e}");
        let e = parse("cubic+", json!({"period": "0s"})).unwrap_err();
        assert_eq!(e.to_string(), "flows[0].cc_params.period: must be greater than 0 (got \"0s\")");
        let e = parse("cubic+", json!({"period": "-1s"})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.period");
        let e = parse("cubic+", json!({"period": 100})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.period");
        assert!(e.message.contains("duration"), "{e}");
        let e = parse("vegas+", json!({"rtt_tolerance": "1 parsec"})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.rtt_tolerance");
    }

    #[test]
    fn unknown_parameters_are_named_with_the_allowed_ones() {
        let e = parse("cubic+", json!({"thetta": 0.9})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.thetta");
        assert!(e.message.contains("theta") && e.message.contains("beta"), "{e}");
        // Wrapper keys belong to wrapped controllers only.
        let e = parse("cubic", json!({"theta": 0.9})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.theta");
        let e = parse("reno", json!({"beta": 0.5})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "flows[0].cc_params.beta: unknown key (reno takes no parameters)"
        );
        let e = parse("bbr", json!({"x": 1})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.x");
        let e = CcSpec::parse("cubic", Some(&json!(3)), "flows[2].cc_params").unwrap_err();
        assert_eq!(e.path, "flows[2].cc_params");
    }

    #[test]
    fn controller_parameters_are_range_checked() {
        let e = parse("cubic", json!({"beta": 1.0})).unwrap_err();
        assert_eq!(e.to_string(), "flows[0].cc_params.beta: must be in (0, 1) (got 1)");
        let e = parse("cubic", json!({"c": -0.4})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.c");
        let e = parse("cubic", json!({"hystart": 1})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.hystart");
        let e = parse("vegas", json!({"alpha": 5, "beta": 4})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.beta");
        assert!(e.message.contains("alpha"), "{e}");
        let e = parse("vegas", json!({"gamma": -1})).unwrap_err();
        assert_eq!(e.path, "flows[0].cc_params.gamma");
        let ok = parse("vegas", json!({"alpha": 1, "beta": 3})).unwrap();
        assert_eq!(
            format!("{:?}", ok.params()),
            format!("{:?}", VegasParams { alpha: 1, beta: 3, gamma: 1 })
        );
    }
}
