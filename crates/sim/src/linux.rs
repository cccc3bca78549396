//! Linux's facts in one place: its default TCP settings (with the sysctl or source each comes
//! from) and the names its congestion-control modules go by. The scenario reader, the
//! packetdrill runner and the emulator read them from here; nothing here reads the rest of
//! the simulator (only `units`), so every layer may use it.

use crate::units::Dur;

/// Linux's Kconfig default tick (`CONFIG_HZ_250`), the kernel `bloatlab validate` compares
/// with: the default of a scenario's `tcp.hz`.
pub const DEFAULT_HZ: u32 = 250;

/// A TCP endpoint's defaults as far as the simulator models Linux (`TcpCfg` adds what is a
/// model choice rather than a number: SACK recovery, no ECN request, every mechanism on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpDefaults {
    /// Bytes of payload per full segment.
    pub mss: u32,
    /// `TCP_INIT_CWND` (include/net/tcp.h, RFC 6928): 10 segments.
    pub init_cwnd: u32,
    /// The delayed-ACK timeout a connection starts from (`TCP_ATO_MIN`, HZ/25 = 40 ms).
    pub delack: Dur,
    /// A delayed ACK covers at most two full segments (`__tcp_ack_snd_check`, RFC 5681 §4.2).
    pub ack_every: u32,
    /// `TCP_RTO_MIN` (200 ms), `TCP_TIMEOUT_INIT` (1 s, RFC 6298), `TCP_RTO_MAX` (120 s).
    pub rto_min: Dur,
    pub rto_initial: Dur,
    pub rto_max: Dur,
    /// `net.ipv4.tcp_timestamps = 1`.
    pub timestamps: bool,
    /// The receive buffer's cap in bytes (`net.ipv4.tcp_rmem[2]`).
    pub rcvbuf: u64,
    /// The send buffer's cap in bytes (`net.ipv4.tcp_wmem[2]`, 4 MiB), which send-buffer
    /// autotuning (`tcp_sndbuf_expand`) reaches once the window is a few hundred segments.
    pub sndbuf: u64,
    /// `net.core.default_qdisc` is not `fq` and the controller does not ask for pacing.
    pub pacing: bool,
    /// `net.ipv4.tcp_slow_start_after_idle = 1`: cwnd restarts after an idle RTO.
    pub slow_start_after_idle: bool,
    /// `net.ipv4.tcp_syn_linear_timeouts`: SYN timeouts before exponential backoff starts.
    pub syn_linear_timeouts: u32,
    /// Nagle's algorithm: on in a socket until the application sets `TCP_NODELAY`.
    pub nagle: bool,
    /// The kernel tick (`CONFIG_HZ`).
    pub hz: u32,
}

/// What a scenario's TCP flow gets for every `tcp.*` key it leaves out.
///
/// It differs from [`SYSCTL_TCP`] in four numbers and one socket option, each on purpose:
/// `mss` 1448 is the payload a full segment carries once the 12-byte timestamp option is paid
/// for (the 1460 the SYN advertises minus 12: what Linux actually sends per segment on a
/// 1500-byte path);
/// `rcvbuf` is a round 6 MB (6,000,000 B, what the scenario contract documents) rather than
/// `tcp_rmem[2]`'s 6 MiB; `hz` is the Kconfig default 250 ([`DEFAULT_HZ`]); and
/// `syn_linear_timeouts` is 0, RFC 6298's exponential backoff of every SYN timeout, the
/// simulator's rule before Linux's linear SYN timeouts (`rules = "linux"` gives 4). And its
/// applications set `TCP_NODELAY` (`nagle` false), as browsers and Go's net package do and as
/// the simulator's applications always behaved.
pub const SCENARIO_TCP: TcpDefaults = TcpDefaults {
    mss: 1448,
    rcvbuf: 6_000_000,
    hz: DEFAULT_HZ,
    syn_linear_timeouts: 0,
    nagle: false,
    ..SYSCTL_TCP
};

/// Linux's defaults as a freshly booted kernel has them, which packetdrill scripts are
/// written against: `mss` 1460 is what the SYN's MSS option advertises on a 1500-byte MTU
/// (1500 − 20 IP − 20 TCP; the scripts expect `<mss 1460,...>`), `rcvbuf` 6,291,456 is
/// `net.ipv4.tcp_rmem[2]`'s default (6 MiB, window scale 7), and `hz` 1000 is the tick
/// packetdrill's own scripts are written for (docs/tcp.md, "Timer ticks").
pub const SYSCTL_TCP: TcpDefaults = TcpDefaults {
    mss: 1460,
    init_cwnd: 10,
    delack: Dur::from_millis(40),
    ack_every: 2,
    rto_min: Dur::from_millis(200),
    rto_initial: Dur::from_secs(1),
    rto_max: Dur::from_secs(120),
    timestamps: true,
    rcvbuf: 6_291_456,
    sndbuf: 4_194_304,
    pacing: false,
    slow_start_after_idle: true,
    // Linux 6.18's default: the first four SYN timeouts keep the initial RTO.
    syn_linear_timeouts: 4,
    nagle: true,
    hz: 1000,
};

/// The memory Linux charges for one full-sized segment received on the emulator's TUN device
/// (its skb truesize): the packet's linear data in a 2 KiB kmalloc block, less the 320-byte
/// `skb_shared_info` at its end, plus the 256-byte `struct sk_buff` (`SKB_TRUESIZE`). Checked
/// against the window the emulated receiver advertises: 3,930,752 B of `tcp_rmem[2]`'s
/// 6,291,456 (ratio 160/256).
pub const RX_TRUESIZE: u64 = 2304;

/// Linux's receive-window scaling ratio (`tcp_measure_rcv_mss`, since 6.7): the payload per
/// byte of skb memory of a full-sized segment, in 256ths, truncated to a u8 (at least 1).
pub fn scaling_ratio(payload: u64, truesize: u64) -> u64 {
    (payload * 256 / truesize.max(1)).clamp(1, 255)
}

/// `tcp_win_from_space`: the window `space` bytes of receive buffer give at `ratio`.
pub fn win_from_space(space: u64, ratio: u64) -> u64 {
    (space * ratio) >> 8
}

/// The simulator's congestion control and the Linux module (`net.ipv4.tcp_congestion_control`,
/// `TCP_CONGESTION`) that implements it. `reno` and `newreno` differ in the simulator only by
/// the recovery a scenario pairs them with: Linux's `reno` with SACK is both (a kernel name
/// maps back to the first entry that has it). `westwood+` is Linux's `tcp_westwood`; `prague`
/// is the L4S team's out-of-tree module (github.com/L4STeam/linux).
pub const CC_NAMES: &[(&str, &str)] = &[
    ("reno", "reno"),
    ("newreno", "reno"),
    ("cubic", "cubic"),
    ("bbr", "bbr"),
    ("vegas", "vegas"),
    ("westwood+", "westwood"),
    ("dctcp", "dctcp"),
    ("prague", "prague"),
];

/// The kernel's name for the simulator's controller `sim`, if Linux has it.
pub fn kernel_cc(sim: &str) -> Option<&'static str> {
    CC_NAMES.iter().find(|(s, _)| *s == sim).map(|(_, k)| *k)
}

/// The simulator's controller for the kernel's module `kernel`, if it has one.
pub fn sim_cc(kernel: &str) -> Option<&'static str> {
    CC_NAMES.iter().find(|(_, k)| *k == kernel).map(|(s, _)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_both_ways() {
        assert_eq!(kernel_cc("westwood+"), Some("westwood"));
        assert_eq!(kernel_cc("newreno"), Some("reno"));
        assert_eq!(sim_cc("reno"), Some("reno"));
        assert_eq!(sim_cc("westwood"), Some("westwood+"));
        assert_eq!(kernel_cc("ccid2"), None);
        for (s, k) in CC_NAMES {
            assert_eq!(kernel_cc(sim_cc(k).unwrap()), Some(*k), "{s}");
        }
    }
}
