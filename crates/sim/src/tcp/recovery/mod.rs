//! Linux's loss-recovery refinements on top of RFC 6675 SACK recovery, each behind a `[tcp]`
//! switch that defaults to what Linux does: PRR for the window during recovery, undo of
//! spurious reductions (D-SACK, Eifel timestamps, F-RTO), RACK-TLP loss detection and the tail
//! loss probe, quick-ACK mode at connection start, and the controllers' RTT sample.

mod prr;
mod rack;
mod undo;

pub use prr::Prr;
pub use rack::{tick_expiry, Rack, TIMEOUT_MIN};
pub use undo::Undo;

use crate::units::{Dur, SimTime};

/// The `[tcp]` switches of the Linux mechanisms (all on by default, as in Linux).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mechanisms {
    /// `prr`: Proportional Rate Reduction of cwnd during SACK recovery (RFC 6937); off:
    /// cwnd = ssthresh at once (RFC 6675).
    pub prr: bool,
    /// `frto`: F-RTO detection of spurious timeouts (RFC 5682, Linux tcp_frto = 2).
    pub frto: bool,
    /// `undo`: undo reductions found spurious by D-SACK or timestamps (Linux's undo_marker).
    pub undo: bool,
    /// `dsack`: the receiver reports duplicate segments in D-SACK blocks (RFC 2883).
    pub dsack: bool,
    /// `rack`: RACK time-based loss detection (RFC 8985; Linux tcp_recovery = 1), also
    /// sparing segments sent within the last RTT when a timeout marks the rest lost.
    pub rack: bool,
    /// `tlp`: the tail loss probe (RFC 8985 §7; Linux tcp_early_retrans = 3).
    pub tlp: bool,
    /// `quickack`: acknowledge every segment for the first 16 of a connection (and after a
    /// duplicate), as Linux's quick-ACK mode does.
    pub quickack: bool,
    /// `rtt_sample = "linux"`: RTT samples from send times (the oldest newly acknowledged
    /// segment for SRTT, the newest for the controller, as Linux's pkts_acked), the echoed
    /// timestamp only without one; `"timestamp"`: the echoed timestamp on every ACK that
    /// advances snd.una, for both.
    pub linux_rtt: bool,
    /// `rcvbuf_auto`: the receiver's advertised window grows with what the application reads
    /// (Linux's receive-buffer autotuning, `tcp_moderate_rcvbuf = 1`), up to `rcvbuf`; off:
    /// the whole of `rcvbuf` is advertised from the start.
    pub rcvbuf_auto: bool,
    /// `sack_compress`: the receiver delays the ACKs of out-of-order segments after the first
    /// three (Linux's SACK compression, `tcp_comp_sack_delay_ns` = 1 ms or RTT/20,
    /// `tcp_comp_sack_nr` = 44); off: every out-of-order segment is ACKed at once.
    pub sack_compress: bool,
    /// `gso`: a paced sender sends Linux's TSO/GSO-autosized bursts — `tcp_tso_autosize`'s
    /// segment count back to back, paced as one; off: one segment per pacing slot.
    pub gso: bool,
    /// `tso_defer`: a sender without pacing sends in Linux's TSO-autosized skbs and defers a
    /// partial one while an ACK is due to widen it (Linux `tcp_tso_should_defer`), so at high
    /// rates its segments leave in groups of about 1 ms of data; off: every segment the
    /// window allows goes at once (ACK-clocked pairs).
    pub tso_defer: bool,
    /// `psh`: the PSH flag as Linux sends it and its receiver's quick ACK. The sender sets PSH
    /// on the last segment of each skb of two or more segments (Linux's `__tcp_transmit_skb`
    /// forces it on every GSO skb; an skb: min(`tcp_tso_autosize`,
    /// cwnd − in flight, the receive window, the data) segments, as tcp_write_xmit cuts them)
    /// and on the segment that holds the end of a write (tcp_push, unless MSG_MORE; a later
    /// write into the unsent tail clears it), which its retransmissions keep; the receiver,
    /// outside ping-pong mode, acknowledges an in-order segment with PSH at once (its reader
    /// drains at once: `tcp_measure_rcv_mss` sets ICSK_ACK_PUSHED, `tcp_cleanup_rbuf` ACKs).
    /// Off: no PSH, and such a segment waits for a partner or the delayed-ACK timer.
    pub psh: bool,
    /// `grow_quickack`: the receiver acknowledges at once every segment that raises the
    /// window it is willing to offer (Linux's `tcp_grow_window` sets `icsk_ack.quick |= 1`
    /// whenever it raises rcv_ssthresh), so while autotuning still opens the window (the
    /// slow start of a connection, and after each step of the window clamp) every segment is
    /// ACKed on its own; off: every second segment or the delayed-ACK timer, as outside it.
    pub grow_quickack: bool,
    /// `cwnd_limited = "linux"`: slow start counts the connection cwnd-limited while cwnd is
    /// below twice the largest flight of the last window (Linux's tcp_is_cwnd_limited with
    /// max_packets_out, RFC 7661's idea); `"flight"` (the default, the simulator's earlier
    /// rule): while twice the flight before the ACK reaches cwnd.
    pub linux_cwnd_limited: bool,
    /// `prr_entry = "linux"`: on entering recovery PRR sets the window before the fast
    /// retransmission goes out, so that retransmission is the first of the ACK's quota (Linux
    /// tcp_cwnd_reduction then tcp_xmit_recovery; RACK's reordering timer counts one segment
    /// delivered, as Linux's tcp_rack_reo_timeout); `"retransmit_first"` (the default, the
    /// simulator's earlier order): the fast retransmission goes out, then PRR counts this
    /// ACK's quota on top of it.
    pub prr_linux_entry: bool,
    /// `zero_window_probe = "linux"`: the persist timer's probe is a segment with no data
    /// and the sequence number SND.UNA − 1, which the peer answers with an ACK carrying its
    /// window (Linux tcp_xmit_probe_skb; RFC 9293 §3.8.6.1 allows either form); `"byte"` (the
    /// default, the simulator's earlier form): one new byte beyond the closed window.
    pub linux_zero_window_probe: bool,
    /// Linux since 2017 (commit df92c8394e6e, "tcp: fix xmit timer to only be reset if data
    /// ACKed/SACKed"): an ACK that delivers nothing — no cumulative advance, no SACK of data
    /// sent before the head's latest transmission — leaves a pending tail-loss-probe or
    /// reordering timer as it is; `false` (the default, the simulator's earlier rule, Linux's
    /// before 2017): every ACK turns such a timer back into the RTO counted from the head.
    /// The `[tcp]` key `xmit_timer = "linux"` (default `"every_ack"`); the packetdrill
    /// runner turns it on.
    pub linux_xmit_timer_on_progress: bool,
    /// Linux's duplicate-ACK accounting without SACK (tcp_add_reno_sack,
    /// tcp_remove_reno_sacks): each duplicate ACK already counted one segment delivered, so
    /// the ACK that fills the hole credits the controller with the segments it acknowledges
    /// beyond those, at least one; `false` (the default, the simulator's earlier rule): with
    /// every segment it acknowledges. The `[tcp]` key `reno_dupacks = "linux"` (default
    /// `"every_segment"`); the packetdrill runner turns it on.
    pub linux_reno_sacks: bool,
    /// Linux's handling of an ACK below SND.UNA that carries SACK blocks (tcp_ack's
    /// `old_ack` path): the blocks are applied, loss detection runs and the sender sends
    /// what the freed pipe allows, without touching cwnd, the window or the timers;
    /// `false` (the default, the simulator's earlier rule): such an ACK is ignored. The
    /// `[tcp]` key `old_ack_sack = "linux"` (default `"ignore"`); the packetdrill runner
    /// turns it on.
    pub linux_old_ack_sack: bool,
    /// RACK's time test for retransmissions too (Linux tcp_rack_detect_loss; RFC 8985 §6.2):
    /// in recovery a retransmission is lost again once a segment sent after it — a
    /// retransmission included — is delivered and it has been out for RACK's RTT plus the
    /// reordering window; `false` (the default, the simulator's earlier rule): only a
    /// delivered never-retransmitted segment sent after it marks it lost. The `[tcp]` key
    /// `rack_retrans = "linux"` (default `"new_data_only"`); the packetdrill runner turns
    /// it on.
    pub linux_rack_retrans: bool,
    /// Linux's CWR state (tcp_enter_cwr, tcp_cwnd_reduction, tcp_end_cwnd_reduction;
    /// RFC 3168 §6.1.2 with RFC 6937's PRR): an ECN echo sets ssthresh and enters CWR, in
    /// which PRR brings cwnd down ACK by ACK (the controller does not grow it) until an ACK
    /// above the SND.NXT of the echo ends it with cwnd = ssthresh; a loss meanwhile turns it
    /// into recovery without a second reduction. `false` (the default, the simulator's
    /// earlier rule): the state stays Open and cwnd drops to ssthresh at once. The `[tcp]`
    /// key `ecn_reduction = "cwr"` (default `"at_once"`); the packetdrill runner turns it on.
    pub linux_cwr: bool,
    /// Linux's tcp_fastretrans_alert: the ACK that ends a recovery (SND.UNA reaches the
    /// recovery point) runs the entry test again at once, so a loss already marked above the
    /// recovery point starts the next recovery on that same ACK and the controller sees the
    /// state stay Recovery (BBR then neither conserves packets nor restores its window). The
    /// `[tcp]` key `recovery_restart = "same_ack"` (the default); `"next_ack"` (the
    /// simulator's earlier rule): the ending ACK leaves the state Open and the next ACK
    /// starts the new recovery.
    pub linux_recovery_restart: bool,
    /// Linux's pacing credit (tcp_update_skb_after_send, since 4.20's EDT pacing): an skb
    /// sent after its pacing slot was due (an ACK-clocked sender's usual case) makes the next
    /// slot wait its length less that lateness, at most half its length. `false` (the
    /// default, the simulator's earlier rule): every segment's full length. The `[tcp]` key
    /// `pacing_credit`.
    pub pacing_credit: bool,
    /// Linux paces the fast retransmission (tcp_xmit_retransmit_queue stops at
    /// tcp_pacing_check like the send loop): entering recovery before the pacing slot, the
    /// forced retransmission waits for the slot (still outside cwnd). `false` (the default,
    /// the simulator's earlier rule): it goes on the ACK that enters recovery. The `[tcp]`
    /// key `paced_fast_retransmit`.
    pub paced_fast_retransmit: bool,
    /// Linux paces nothing before a connection's tenth data segment (tcp_update_skb_after_send:
    /// `data_segs_out` < 10, as the original sch_fq). `false` (the default, the simulator's
    /// earlier rule): every segment once a pacing rate exists. The `[tcp]` key `unpaced_start`.
    pub unpaced_start: bool,
}

impl Default for Mechanisms {
    fn default() -> Self {
        Mechanisms {
            prr: true,
            frto: true,
            undo: true,
            dsack: true,
            rack: true,
            tlp: true,
            quickack: true,
            linux_rtt: true,
            rcvbuf_auto: true,
            sack_compress: true,
            gso: true,
            tso_defer: false,
            psh: false,
            grow_quickack: false,
            linux_cwnd_limited: false,
            prr_linux_entry: false,
            linux_zero_window_probe: false,
            linux_xmit_timer_on_progress: false,
            linux_reno_sacks: false,
            linux_old_ack_sack: false,
            linux_rack_retrans: false,
            linux_cwr: false,
            linux_recovery_restart: true,
            pacing_credit: false,
            paced_fast_retransmit: false,
            unpaced_start: false,
        }
    }
}

impl Mechanisms {
    /// Every rule as Linux runs it (`[tcp] rules = "linux"`): the defaults with the switches
    /// whose default keeps the simulator's earlier results turned to Linux's rule. What each
    /// does to the validate matrix is in docs/fidelity.md ("Linux's rules together").
    pub fn linux() -> Self {
        Mechanisms {
            tso_defer: true,
            psh: true,
            grow_quickack: true,
            linux_cwnd_limited: true,
            prr_linux_entry: true,
            linux_zero_window_probe: true,
            linux_xmit_timer_on_progress: true,
            linux_reno_sacks: true,
            linux_old_ack_sack: true,
            linux_rack_retrans: true,
            linux_cwr: true,
            pacing_credit: true,
            paced_fast_retransmit: true,
            unpaced_start: true,
            ..Self::default()
        }
    }
}

/// Linux's maximum quick-ACK count (TCP_MAX_QUICKACKS).
pub const MAX_QUICKACKS: u32 = 16;

/// Which timeout the retransmission timer slot is armed for (Linux shares one timer too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum XmitTimer {
    #[default]
    Rto,
    /// RACK's reordering timer: a segment becomes lost when it expires.
    Reorder,
    /// The tail loss probe.
    Probe,
}

/// The per-connection state of these mechanisms. Laid out in declaration order (`repr(C)`):
/// the first line holds what a receiver reads for every segment (see `TcpSocket`).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct LossState {
    /// A D-SACK block to report on the next ACK (receiver).
    pub dsack: Option<(u64, u64)>,
    /// SACK compression (receiver): the RCV.NXT its count is for, the immediate duplicate
    /// ACKs sent for it, and the ACKs held back since the last one sent.
    pub comp_rcv_nxt: u64,
    /// Segments still to go out back to back in the current pacing slot (GSO burst).
    pub burst_left: u64,
    /// Segments still to be acknowledged at once (quick-ACK mode).
    pub quickacks: u32,
    pub dup_acks_sent: u32,
    pub compressed: u32,
    /// F-RTO is judging the current timeout.
    pub frto: bool,
    /// F-RTO step 2b: this ACK sends new data instead of retransmissions.
    pub send_new_only: bool,
    pub xmit_timer: XmitTimer,
    pub rack: Rack,
    pub prr: Prr,
    pub undo: Undo,
    /// `psh` (sender): segments left of the skb being sent, and that skb's size.
    pub skb_left: u64,
    pub skb_segs: u64,
    /// `psh` (receiver): Linux's ping-pong (interactive) mode — set when this end sends new
    /// data within the delayed-ACK time of receiving some, cleared when a delayed ACK of
    /// in-order data goes out on its timer — and when data (or the handshake's end) arrived.
    pub pingpong: bool,
    /// `paced_fast_retransmit`: the forced fast retransmission waits for the pacing slot.
    pub fr_due: bool,
    pub last_rx: SimTime,
    /// `pacing_credit`: what is left of the lateness of the burst being sent.
    pub pace_credit: Dur,
}

/// Counters of the mechanisms (summary and tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct LossStats {
    /// Reductions undone (any detection).
    pub undos: u64,
    /// Timeouts F-RTO found spurious.
    pub spurious_rtos: u64,
    pub tlp_probes: u64,
    /// Probes that repaired a loss (and so reduced cwnd).
    pub tlp_recoveries: u64,
    pub dsacks_received: u64,
    pub dsacks_sent: u64,
}
