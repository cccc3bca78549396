//! The parsed form of a script. Times are integer nanoseconds; sequence numbers are relative
//! (each side's ISN is 0), as packetdrill writes them.

use super::expr::Assert;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeVal {
    Abs(u64),
    /// After the previous event.
    Rel(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Time {
    At(TimeVal),
    /// `lo~hi`: an outbound segment may come any time in between.
    Range(TimeVal, TimeVal),
    /// `*`: any time.
    Any,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// `<`: injected into the endpoint.
    In,
    /// `>`: expected from the endpoint.
    Out,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EcnSpec {
    NoEcn,
    Ect0,
    Ect1,
    /// `[ect01]`: either ECT codepoint (outbound only).
    Ect01,
    Ce,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpOpt {
    Nop,
    Eol,
    Mss(u16),
    Wscale(u8),
    SackOk,
    Sack(Vec<(u64, u64)>),
    Ts { val: u64, ecr: u64 },
}

/// Flag bits as on the wire.
pub mod flag {
    pub const FIN: u16 = 0x01;
    pub const SYN: u16 = 0x02;
    pub const RST: u16 = 0x04;
    pub const PSH: u16 = 0x08;
    pub const ACK: u16 = 0x10;
    pub const URG: u16 = 0x20;
    pub const ECE: u16 = 0x40;
    pub const CWR: u16 = 0x80;
    /// AccECN's AE (RFC 9768), the former NS bit: `A` in packetdrill's flag letters.
    pub const AE: u16 = 0x100;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketSpec {
    pub dir: Dir,
    pub ecn: Option<EcnSpec>,
    pub flags: u16,
    pub seq: u64,
    pub len: u32,
    pub ack: Option<u64>,
    pub win: Option<u32>,
    /// `None`: no option list written (the segment carries no options).
    pub opts: Option<Vec<TcpOpt>>,
    /// `<...>`: any options (not compared).
    pub opts_any: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// `...`: not checked.
    Any,
    Int(i64),
    /// A symbol, or symbols joined by `|` (`O_RDWR|O_NONBLOCK`).
    Sym(Vec<String>),
    Str(String),
    /// `[1]`
    Array(Vec<Arg>),
    /// `{tcpi_state=1, ...}`
    Struct(Vec<(String, Arg)>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Syscall {
    pub name: String,
    pub args: Vec<Arg>,
    /// The expected return value and, for -1, the errno name.
    pub ret: i64,
    pub errno: Option<String>,
    /// `lo...hi`: a blocking call that returns at `hi` (only `connect` is modeled).
    pub until: Option<TimeVal>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Packet(PacketSpec),
    Syscall(Syscall),
    Assert(Vec<Assert>),
    /// A shell command (sysctl preambles are read, see the runner).
    Shell(String),
    /// A command-line flag written in the script (`--tolerance_usecs=10000`): name, value.
    Flag(String, String),
    /// A line the simulator cannot model, with what it is.
    Unsupported(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub line: u32,
    pub col: u32,
    pub time: Time,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    pub events: Vec<Event>,
}
