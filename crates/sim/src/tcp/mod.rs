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

pub use recovery::Mechanisms;
pub use rate::{RateSample, RateSampler, TxStamp};
pub use rcvbuf::RcvTune;
pub use rtt::RttEstimator;
pub use scoreboard::{Scoreboard, Seg};
pub use socket::{Cx, SockStats, TcpInfo, TcpSocket, TcpState, Touch};
#[cfg(test)]
pub(crate) use socket::NO_SHORTCUTS;
