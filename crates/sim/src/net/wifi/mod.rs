//! A Wi-Fi BSS: one access point and N stations sharing one channel, as a link type of the
//! world. Every station has a downlink (AP → station) and an uplink (station → AP); all of
//! them contend for the one medium.
//!
//! Sources: IEEE Std 802.11-2016 (EDCA 10.22.2, A-MPDU 10.13, block ACK 10.24, timings in
//! phy.rs); Høiland-Jørgensen, Kazior, Täht, Hurtig, Brunstrom, "Ending the Anomaly: Achieving
//! Low Latency and Airtime Fairness in WiFi", USENIX ATC 2017 (arXiv 1703.00064): FQ-MAC
//! (§3.1) and the airtime-fairness scheduler (§3.2, Algorithm 3); Linux facts (read, not
//! copied): mac80211's per-station CoDel parameters (sta_info.c: target 20 ms, interval
//! 100 ms, ECN on), its flow-queue set (fq_impl.h / tx.c: 4096 flows, 8192 packets, a tin's
//! default flow on hash collisions with another tin), ath9k's hardware-queue depth
//! (ATH_MAX_QDEPTH = ATH_TXBUF/4 − ATH_TXBUF_RESERVE = 512/4 − 5 = 123 packets per access
//! category), its software retry limit (ATH_MAX_SW_RETRIES = 30) and A-MPDU length limit
//! (64 KiB − 1), its airtime quantum of 300 µs (the paper's ath9k implementation).
//!
//! The MAC (mac.rs) is event driven: one event per medium state change. Simplified: one
//! access category per BSS (all traffic uses it); no hidden terminals (every contender hears
//! every other), no capture effect; no rate control (each station's rate is fixed); no power
//! save; no RTS/CTS; the backoff counter is frozen while a contender has nothing to send
//! (no post-backoff countdown); a collision costs the longest colliding PPDU plus SIFS and a
//! block-ACK time (the ACK timeout); stations and the `qdisc` mode's driver build an A-MPDU
//! when they win the medium, the FQ-MAC modes keep two in hardware (ath9k's
//! ATH_AGGR_MIN_QDEPTH, the next built while one is on the air); the block-ACK window never
//! stalls aggregation (retries go first); a station's own send queue is one drop-tail FIFO
//! (1000 packets, txqueuelen) or, with `station_queue = "fq_mac"`, the AP's FQ-MAC code with
//! one tin, from which the station builds its A-MPDU when it wins the medium (no hardware
//! queue of built aggregates at a station).

pub mod mac;
pub mod phy;
mod queues;

pub use mac::{Bss, StationSample};
pub use phy::{Ac, PhyKind, PhyRate, AC_NAMES};

use crate::queue::QueueCfg;
use crate::units::Dur;

/// One station of the BSS.
#[derive(Debug, Clone, PartialEq)]
pub struct StationCfg {
    pub name: String,
    pub rate: PhyRate,
    /// Probability that one MPDU of an aggregate is received in error (retried through the
    /// block ACK).
    pub mpdu_error: f64,
}

/// How the AP queues packets for its stations.
#[derive(Debug, Clone)]
pub enum ApQueue {
    /// A qdisc of ours above the driver's per-AC FIFO of `driver_limit` packets, from which the
    /// driver builds aggregates round robin over stations (Linux before 4.11, ath9k).
    Qdisc { qdisc: QueueCfg, driver_limit: u32 },
    /// mac80211's FQ-MAC: per-station (TID) FQ-CoDel over one shared set of flow queues;
    /// stations served round robin per transmit opportunity.
    FqMac,
    /// FQ-MAC plus the airtime-fairness deficit round robin over stations.
    Airtime,
}

impl ApQueue {
    pub fn is_airtime(&self) -> bool {
        matches!(self, ApQueue::Airtime)
    }

    pub fn name(&self) -> &'static str {
        match self {
            ApQueue::Qdisc { .. } => "qdisc",
            ApQueue::FqMac => "fq_mac",
            ApQueue::Airtime => "airtime",
        }
    }
}

pub const AP_QUEUES: &[&str] = &["qdisc", "fq_mac", "airtime"];

/// How each station queues its own packets (its uplink to the AP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StationQueue {
    /// One drop-tail FIFO of 1000 packets (Linux's txqueuelen under a driver without
    /// mac80211's intermediate queues): the default, and what every existing run used.
    Fifo,
    /// mac80211's FQ-MAC on the station's own transmit path (the same queues.rs code as the
    /// AP's, one instance per station with one tin, its peer the AP; CoDel's parameters from
    /// the station's own rate).
    FqMac,
}

impl StationQueue {
    pub fn name(self) -> &'static str {
        match self {
            StationQueue::Fifo => "fifo",
            StationQueue::FqMac => "fq_mac",
        }
    }
}

pub const STATION_QUEUES: &[&str] = &["fifo", "fq_mac"];

/// The BSS's parameters (validated: config/topology/wifi.rs reads them).
#[derive(Debug, Clone)]
pub struct WifiCfg {
    pub stations: Vec<StationCfg>,
    pub ac: Ac,
    pub ap_queue: ApQueue,
    pub station_queue: StationQueue,
    /// A-MPDU limits: MPDUs (≤ 64, the block-ACK bitmap, 10.24.7.7), octets, airtime.
    pub max_mpdus: u32,
    pub max_bytes: u64,
    pub max_airtime: Dur,
    /// Transmissions of one MPDU before it is dropped.
    pub retry_limit: u32,
    /// The airtime scheduler's quantum.
    pub quantum: Dur,
}

/// ath9k's hardware queue depth per access category (see the module's sources).
pub const ATH9K_QDEPTH: u32 = 123;
/// ath9k's A-MPDU length limit, 64 KiB − 1 (HT's maximum A-MPDU length exponent 3, 9.4.2.56.3).
pub const MAX_AMPDU_BYTES: u64 = 65_535;
/// Linux's aggregate duration limit, 4 ms (ath9k builds aggregates of at most 4 ms).
pub const MAX_AGGR_AIRTIME: Dur = Dur(4_000_000);
/// ath9k's software retry limit (ATH_MAX_SW_RETRIES).
pub const RETRY_LIMIT: u32 = 30;
/// The airtime scheduler's quantum (ath9k's airtime fairness, 300 µs).
pub const AIRTIME_QUANTUM: Dur = Dur(300_000);
/// MPDU overhead on an IP packet: QoS Data MAC header 26 octets (9.3.2.1) + LLC/SNAP 8
/// (IEEE 802.2 / RFC 1042) + FCS 4.
pub const MPDU_OVERHEAD: u64 = 26 + 8 + 4;
/// A-MPDU subframe: a 4-octet MPDU delimiter, padded to a multiple of 4 (10.13.1, 9.7.1).
pub const DELIMITER: u64 = 4;

/// The length of the A-MPDU subframe that carries an IP packet of `ip_bytes` octets.
pub fn subframe_bytes(ip_bytes: u64) -> u64 {
    (DELIMITER + ip_bytes + MPDU_OVERHEAD).next_multiple_of(4)
}
