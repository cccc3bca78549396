//! What is on the wire, below every algorithm and transport: the IP header's ECN codepoint and
//! the ECN feedback a TCP connection negotiates, header sizes, the MTU that packet counts are
//! converted with, the 5-tuple that queues classify on, and the DCCP header. Packets (`net`),
//! queue disciplines (`queue`), congestion controls (`cc`) and transports all read it; it
//! reads nothing of theirs.

pub mod ackvec;
pub mod dccp;
pub mod flowkey;

/// The packet size a packet-count queue limit is converted with when a byte capacity is needed.
pub const MTU_BYTES: u64 = 1500;
/// Bytes of IPv4 + TCP header (with the timestamp option) on the wire per segment.
pub const TCP_HEADER_BYTES: u32 = 52;
/// Bytes of the TCP timestamp option as sent (10, padded to 12 with two NOPs).
pub const TCP_TS_OPTION_BYTES: u64 = 12;
/// Bytes of IPv4 + UDP header per datagram.
pub const UDP_HEADER_BYTES: u32 = 28;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
/// The IP header's two ECN bits (RFC 3168, RFC 9331): ECT(0) marks a classic ECN-capable
/// packet, ECT(1) an L4S one; CE is the congestion mark an AQM sets on either.
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
    Ce,
}

impl Ecn {
    /// ECN-capable transport: an AQM may mark instead of dropping.
    #[inline]
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

/// ECN feedback of a TCP connection (`tcp.ecn`). The codepoint on data packets is the
/// controller's choice once a mode is negotiated ([`crate::cc::CongestionControl::ecn_setup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum EcnMode {
    /// Not-ECT; no ECN negotiation (`false`, `"off"`).
    #[default]
    Off,
    /// RFC 3168: ECE on every ACK until CWR, one reduction per window (`true`, `"classic"`).
    Classic,
    /// Accurate ECN (RFC 9768): the ACE counter and the AccECN option's byte counters
    /// (`"accecn"`); a peer that offers only classic ECN gets classic feedback.
    AccEcn,
}

impl EcnMode {
    pub const KNOWN: &'static [&'static str] = &["off", "classic", "accecn"];
    pub fn is_on(self) -> bool {
        self != EcnMode::Off
    }
    pub fn label(self) -> &'static str {
        match self {
            EcnMode::Off => "off",
            EcnMode::Classic => "classic",
            EcnMode::AccEcn => "accecn",
        }
    }
}
