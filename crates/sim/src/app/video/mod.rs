//! Interactive video (issue 32, part 2): the settings, the rate controllers' trait and the
//! encoder. The packets, pacing, feedback and reassembly live with the UDP transport
//! (udp/video.rs); this module holds the pure logic, so it needs nothing but the units.
//!
//! Sources: RTP media over UDP with per-packet feedback in the style of RFC 8888 (RTP Control
//! Protocol Feedback for Congestion Control); the controllers follow draft-ietf-rmcat-gcc-02
//! (gcc.rs) and RFC 8298 / draft-johansson-ccwg-rfc8298bis-screamv2 (scream.rs); lost packets
//! are repaired by NACK (RFC 4585) and retransmission (RFC 4588) as WebRTC does (nack.rs).

pub mod encoder;
pub mod gcc;
pub mod nack;
pub mod probe;
pub mod scream;

pub use encoder::Encoder;
pub use probe::ProbeCluster;

use crate::units::{Dur, Rate, SimTime};

/// Which rate controller drives the encoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controller {
    /// Google Congestion Control, delay-gradient + loss based (gcc.rs).
    Gcc,
    /// SCReAM, self-clocked window (scream.rs); `l4s`: ECT(1) packets, CE-proportional back-off.
    Scream { l4s: bool },
}

impl Controller {
    pub fn name(self) -> &'static str {
        match self {
            Controller::Gcc => "gcc",
            Controller::Scream { l4s: false } => "scream",
            Controller::Scream { l4s: true } => "scream-l4s",
        }
    }
}

/// A video flow's settings (`flows[i].video`); defaults and their sources in config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VideoCfg {
    pub controller: Controller,
    /// Frames per second.
    pub fps: u32,
    pub start_rate: Rate,
    pub min_rate: Rate,
    pub max_rate: Rate,
    /// Time between I-frames (None: only the first frame is one).
    pub iframe_interval: Option<Dur>,
    /// An I-frame's size in P-frames.
    pub iframe_ratio: u32,
    /// Time constant of the encoder's first-order follow of the target rate.
    pub encoder_lag: Dur,
    /// How often the receiver sends feedback while data arrives.
    pub feedback: Dur,
    /// The additive part of the freeze rule: a freeze is an inter-frame gap above
    /// max(3 × mean gap, mean gap + this) (W3C webrtc-stats, freezeCount: 150 ms).
    pub freeze: Dur,
    /// Repair of lost packets by NACK and retransmission (nack.rs; RFC 4585, RFC 4588).
    pub nack: bool,
    /// SCReAM's competing-flow compensation (scream.rs; RFC 8298 §4.1.2): the qdelay
    /// target may rise from QDELAY_TARGET_LO toward QDELAY_TARGET_HI.
    pub compensation: bool,
}

impl VideoCfg {
    pub fn frame_interval(&self) -> Dur {
        Dur(1_000_000_000 / self.fps as u64)
    }
}

/// What a feedback report says about one packet the sender sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketResult {
    pub seq: u64,
    pub sent: SimTime,
    /// Size on the wire.
    pub bytes: u32,
    /// When it reached the receiver (None: the report lists it as missing).
    pub arrival: Option<SimTime>,
    /// It arrived CE-marked.
    pub ce: bool,
    /// The probe cluster it was sent in (probe.rs), if any.
    pub cluster: Option<u32>,
}

/// A video rate controller: it reads the feedback and sets the encoder's target, the
/// pacer's rate and (a window-based one) whether the sender may put another packet out.
pub trait RateControl: Send {
    /// A feedback report: every packet it covers in sequence order, the latest round trip
    /// (feedback hold time at the receiver removed) and the bytes still in flight.
    fn on_feedback(&mut self, now: SimTime, results: &[PacketResult], rtt: Dur, in_flight: u64);
    /// A frame was captured; the oldest packet in the sender's queue has waited
    /// `media_qdelay` (SCReAM lowers its target when the sender's queue grows).
    fn on_frame(&mut self, _media_qdelay: Dur, _frame_period: Dur) {}
    /// The rate the encoder should produce, bit/s.
    fn target_bps(&self) -> f64;
    /// The pacer's rate, bit/s.
    fn pacing_bps(&self) -> f64;
    /// May a packet of `bytes` go out with `in_flight` bytes unacknowledged?
    fn may_send(&self, _in_flight: u64, _bytes: u32) -> bool {
        true
    }
    /// Its packets are sent ECT(1) (L4S).
    fn ect1(&self) -> bool {
        false
    }
    /// A window in bytes worth a time series (SCReAM's reference window), else 0.
    fn window(&self) -> u64 {
        0
    }
    /// A probe cluster the sender should send now (GCC's probing, probe.rs), else None.
    fn take_probe(&mut self, _now: SimTime) -> Option<ProbeCluster> {
        None
    }
    /// A short label of its state for the time series.
    fn state(&self) -> &'static str;
}

/// The controller a configuration names.
pub fn build(cfg: &VideoCfg) -> Box<dyn RateControl> {
    let (lo, hi, start) = (cfg.min_rate.0 as f64, cfg.max_rate.0 as f64, cfg.start_rate.0 as f64);
    match cfg.controller {
        Controller::Gcc => Box::new(gcc::Gcc::new(start, lo, hi)),
        Controller::Scream { l4s } => {
            Box::new(scream::Scream::new(start, lo, hi, l4s, cfg.compensation))
        }
    }
}
