//! TCP as a protocol state machine: handshake, sequence space, SACK scoreboard, loss recovery
//! (RFC 6675 SACK, RFC 6582 NewReno, RFC 5681 Reno), RTO (RFC 6298), delayed ACKs, timestamps,
//! window scaling, pacing and delivery-rate samples. Congestion control is a plug-in
//! ([`crate::cc`]).

mod rate;
mod rcvbuf;
mod reassembly;
pub mod recovery;
mod rtt;
pub mod rwnd;
mod scoreboard;
mod socket;

pub use crate::cc::RateSample;
pub use rate::{RateSampler, TxStamp};
pub use rcvbuf::RcvTune;
pub use recovery::Mechanisms;
pub use rtt::RttEstimator;
pub use scoreboard::{Scoreboard, Seg};
#[cfg(test)]
pub(crate) use socket::NO_SHORTCUTS;
pub use socket::{Cx, SockError, SockStats, TcpInfo, TcpSocket, TcpState, Touch};

use crate::units::Dur;
use crate::wire::EcnMode;

/// Loss-recovery algorithm of a TCP sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 6675 SACK-based recovery (SACK negotiated).
    Sack,
    /// RFC 6582 NewReno (no SACK).
    NewReno,
    /// RFC 5681 Reno fast recovery (no SACK).
    Reno,
}

/// `tcp.sndbuf = "unlimited"`: no send buffer (the application's data all in the socket).
pub const SNDBUF_UNLIMITED: u64 = u64::MAX;

/// The bytes an application offers per write (`tcp.write_size`): 1 MiB, what the emulator's
/// senders pass to each `send()` (python/bloatlab/emulate/endpoint.py).
pub const WRITE_SIZE: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq)]
pub struct TcpCfg {
    pub mss: u32,
    pub init_cwnd: u32,
    pub recovery: Recovery,
    pub delack: Dur,
    pub ack_every: u32,
    pub rto_min: Dur,
    pub rto_initial: Dur,
    pub rto_max: Dur,
    pub timestamps: bool,
    pub rcvbuf: u64,
    /// The largest window receive-buffer autotuning grows to: a scenario's `rcvbuf` when it
    /// sets one (documented as the largest window), else the window of Linux's default buffer
    /// `tcp_rmem[2]` at the scaling ratio its segments' truesize gives (`tcp.rcv_truesize`);
    /// [`TcpCfg::linux`] (the packetdrill runner's) takes half of it, the ratio Linux starts from.
    pub window_max: u64,
    /// The send buffer in bytes ([`SNDBUF_UNLIMITED`]: none, every write taken at once).
    pub sndbuf: u64,
    /// Bytes the application offers per write while the send buffer is writable.
    pub write_size: u64,
    pub pacing: bool,
    /// Linux's `tcp_slow_start_after_idle`: sending after an idle period longer than the RTO
    /// restarts cwnd (`tcp_cwnd_restart`).
    pub slow_start_after_idle: bool,
    /// Linux's `tcp_syn_linear_timeouts`: the first this many SYN timeouts of an active open
    /// keep the RTO (`tcp_retransmit_timer`); later ones back off exponentially.
    pub syn_linear_timeouts: u32,
    /// Nagle's algorithm (no `TCP_NODELAY`): a sub-MSS segment waits while an earlier small
    /// segment is unacknowledged (tcp/socket/cork.rs).
    pub nagle: bool,
    /// The ECN feedback this endpoint requests and accepts on the handshake.
    pub ecn: EcnMode,
    /// Linux's loss-recovery mechanisms, each switchable (`prr`, `frto`, `undo`, ...).
    pub mech: Mechanisms,
    /// The kernel tick (`tcp.hz`, Linux CONFIG_HZ) the RACK reordering timer and the tail
    /// loss probe fire on.
    pub hz: u32,
}

impl TcpCfg {
    /// Linux's behaviour with the numbers `d` ([`crate::linux`]): SACK recovery, no ECN
    /// request, every mechanism of [`Mechanisms::default`].
    pub fn linux(d: &crate::linux::TcpDefaults) -> TcpCfg {
        TcpCfg {
            mss: d.mss,
            init_cwnd: d.init_cwnd,
            recovery: Recovery::Sack,
            delack: d.delack,
            ack_every: d.ack_every,
            rto_min: d.rto_min,
            rto_initial: d.rto_initial,
            rto_max: d.rto_max,
            timestamps: d.timestamps,
            rcvbuf: d.rcvbuf,
            window_max: d.rcvbuf / 2,
            sndbuf: d.sndbuf,
            write_size: WRITE_SIZE,
            pacing: d.pacing,
            slow_start_after_idle: d.slow_start_after_idle,
            syn_linear_timeouts: d.syn_linear_timeouts,
            nagle: d.nagle,
            ecn: EcnMode::Off,
            mech: Mechanisms::default(),
            hz: d.hz,
        }
    }
}
