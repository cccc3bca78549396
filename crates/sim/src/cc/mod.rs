//! Congestion control: the sender-side window policy, as a trait the TCP core calls.
//!
//! The core owns loss detection and recovery; a controller decides how the window grows on
//! ACKs and what `ssthresh` becomes on a congestion event (Linux's split between
//! tcp_input.c and the tcp_congestion_ops modules). Windows are in bytes.

mod reno;

pub use reno::Reno;

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
    /// Data is about to be sent after the connection was idle (nothing in flight).
    fn on_restart_after_idle(&mut self, _w: &mut Window, _now: SimTime, _idle: Dur) {}
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

pub fn build(name: &str) -> Box<dyn CongestionControl> {
    match name {
        "reno" => Box::new(Reno::new("reno")),
        "newreno" => Box::new(Reno::new("newreno")),
        other => unreachable!("scenario validation admits only known controllers, got {other}"),
    }
}
