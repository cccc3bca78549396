//! Packets and links: the pieces that carry bytes between endpoints.

pub mod link;
pub mod packet;
pub mod pcap;
pub mod rate_model;
pub mod route;
pub mod schedule;
pub mod wifi;

pub use link::{Link, LinkStats};
pub use packet::{
    AccEcnOption, Ecn, Header, Packet, PacketPool, SackBlocks, SynOptions, TcpFlags, TcpHeader,
    UdpHeader,
};
pub use route::{Route, MAX_HOPS};
