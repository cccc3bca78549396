//! Congestion control: the sender-side window policy, as a trait the TCP core calls.
//!
//! The core owns loss detection and recovery; a controller decides how the window grows on
//! ACKs and what `ssthresh` becomes on a congestion event (Linux's split between
//! tcp_input.c and the tcp_congestion_ops modules). Windows are in bytes.

mod reno;

pub use reno::Reno;

use crate::config::{err, Res, Table};
use crate::engine::SimRng;
use crate::tcp::RateSample;
use crate::units::{Dur, Rate, SimTime};

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
    /// Fast recovery after a loss.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

impl CaState {
    pub fn label(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
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
    /// The sender was limited by cwnd (not by the application or the receive window).
    pub cwnd_limited: bool,
    pub snd_una: u64,
    pub snd_nxt: u64,
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
    /// Fast recovery ended (cwnd was set to ssthresh by the core).
    fn on_recovery_exit(&mut self, _w: &mut Window, _now: SimTime) {}
    /// Transmission starts again with nothing in flight, `idle` after the last send (Linux's
    /// CA_EVENT_TX_START). Called before the core's own restart-after-idle cwnd reduction.
    fn on_tx_start(&mut self, _w: &mut Window, _now: SimTime, _idle: Dur) {}
    /// The controller sets cwnd itself during recovery (BBR); the core leaves it alone.
    fn owns_cwnd(&self) -> bool {
        false
    }
    /// A pacing rate, if this controller paces.
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
    /// A short label of the controller's internal state, for time series.
    fn state_label(&self, w: &Window) -> &'static str {
        if w.in_slow_start() {
            "slow_start"
        } else {
            "cong_avoid"
        }
    }
}

/// Congestion controls a scenario may name.
pub const KNOWN: &[&str] = &["newreno", "reno"];

/// A validated choice of controller with its parameters (from `flows[i].cc` and
/// `flows[i].cc_params`).
#[derive(Debug, Clone, PartialEq)]
pub enum CcSpec {
    Reno,
    NewReno,
}

impl CcSpec {
    pub fn name(&self) -> &'static str {
        match self {
            CcSpec::Reno => "reno",
            CcSpec::NewReno => "newreno",
        }
    }

    /// Reads `cc` (already checked against [`KNOWN`]) and its optional parameter table.
    /// Each controller accepts only its own parameters; unknown ones are named with the
    /// allowed list.
    pub fn parse(name: &str, params: Option<&serde_json::Value>, params_path: &str) -> Res<CcSpec> {
        let spec = match name {
            "reno" => CcSpec::Reno,
            "newreno" => CcSpec::NewReno,
            other => return err(params_path, format!("unknown congestion control \"{other}\" (known: {})", KNOWN.join(", "))),
        };
        if let Some(p) = params {
            let t = Table::new(params_path, p)?;
            t.finish(&[])?; // Reno-style controllers take no parameters.
        }
        Ok(spec)
    }
}

/// What a controller may use when it is built: the segment size and its own random stream.
pub struct BuildCtx {
    pub mss: u64,
    pub rng: SimRng,
}

pub fn build(spec: &CcSpec, _ctx: BuildCtx) -> Box<dyn CongestionControl> {
    match spec {
        CcSpec::Reno => Box::new(Reno::new("reno")),
        CcSpec::NewReno => Box::new(Reno::new("newreno")),
    }
}
