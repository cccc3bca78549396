//! Receive-buffer autotuning as Linux does it (`tcp_moderate_rcvbuf = 1`, `tcp_input.c`): the
//! window a receiver advertises is not its whole buffer but grows with what the application
//! reads. Three quantities, all in bytes of window:
//!
//! - `window_clamp`, the largest window: it starts at the initial buffer's window (64 KiB)
//!   and is raised by dynamic right-sizing (DRS, `tcp_rcv_space_adjust` / `tcp_rcvbuf_grow`)
//!   once per receiver RTT, to twice what was read in the last RTT plus an allowance for a
//!   sender that doubles its rate (slow start): `2·copied + 4·copied·(copied − prev)/prev`.
//!   It never shrinks, and never exceeds the largest window (`TcpCfg::window_max`: a set
//!   `tcp.rcvbuf`, else the window of Linux's `tcp_rmem[2]`, half of it). Out-of-order
//!   arrivals grow it too, by the span held beyond the hole;
//! - `rcv_ssthresh`, the window the receiver is willing to offer now: it starts at the initial
//!   window and grows by twice each arriving segment's length (at least 2 MSS) up to the clamp
//!   (`tcp_grow_window`);
//! - the receiver's RTT estimate (`tcp_rcv_rtt_measure_ts`, and the sequence-based
//!   `tcp_rcv_rtt_measure`), which times the DRS steps.
//!
//! The advertised window is min(rcv_ssthresh, clamp − out-of-order data held), rounded up to
//! the window-scale unit; like Linux's `tcp_select_window` it never moves the right edge the
//! sender was already offered to the left. The application reads as soon as data is in order
//! (the simulator's receivers do), so the receive queue holds only out-of-order data.

use crate::units::{Dur, SimTime};

/// Linux's initial receive buffer (`tcp_rmem[1]`) and its window at the default scaling ratio
/// of one half (`TCP_DEFAULT_SCALING_RATIO`): the window of a fresh connection.
const INIT_BUF_WINDOW: u64 = 131_072 / 2;
/// `tcp_rcvbuf_low_rtt`: below this receiver RTT DRS grows in proportion to the RTT.
const LOW_RTT: Dur = Dur::from_millis(1);
/// Segments shorter than this do not grow rcv_ssthresh (`tcp_event_data_recv`).
const GROW_MIN_LEN: u64 = 128;
/// Linux's TCP_INIT_CWND: the first DRS measure compares against this many segments.
const INIT_CWND: u64 = 10;

#[derive(Debug, Clone, Default)]
pub struct RcvTune {
    /// Autotuning on; off: the whole buffer is advertised (the simulator's earlier model).
    pub on: bool,
    cap: u64,
    advmss: u64,
    mss: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// `rcvq_space`: bytes read in the last measured RTT (the largest so far), and where and
    /// when the current measure started.
    space: u64,
    space_seq: u64,
    space_at: SimTime,
    /// Receiver RTT estimate × 8, ns (Linux keeps it × 8 in µs); 0 = none yet.
    rtt8: u64,
    last_tsecr: u64,
    /// The sequence-based measure (`tcp_rcv_rtt_measure`): its end sequence and start time.
    rtt_seq: u64,
    rtt_at: Option<SimTime>,
}

impl RcvTune {
    /// `rcvbuf`: the configured buffer, the largest window; `advmss`: the MSS this receiver
    /// announced (payload plus the timestamps option where used, as Linux's advmss).
    pub fn new(on: bool, rcvbuf: u64, advmss: u64, mss: u64) -> RcvTune {
        let advmss = advmss.max(1);
        // tcp_select_initial_window: the initial buffer's window rounded down to whole
        // segments of the payload MSS; tcp_init_buffer_space: the clamp at the full space.
        let init = (INIT_BUF_WINDOW / mss.max(1) * mss.max(1)).min(rcvbuf);
        RcvTune {
            on,
            cap: rcvbuf,
            advmss,
            mss: mss.max(1),
            window_clamp: INIT_BUF_WINDOW.min(rcvbuf),
            rcv_ssthresh: init,
            space: init.min(INIT_CWND * advmss),
            ..Default::default()
        }
    }

    /// The established connection starts measuring what the application reads.
    pub fn on_established(&mut self, now: SimTime, rcv_nxt: u64) {
        self.space_at = now;
        self.space_seq = rcv_nxt;
    }

    /// The receiver RTT estimate, if any.
    pub fn rtt(&self) -> Option<Dur> {
        (self.rtt8 > 0).then_some(Dur(self.rtt8 / 8))
    }

    pub fn window_clamp(&self) -> u64 {
        self.window_clamp
    }

    fn rtt_update(&mut self, sample: u64, win_dep: bool) {
        let m = sample.max(1) * 8;
        if self.rtt8 == 0 || m < self.rtt8 {
            self.rtt8 = m;
        } else if !win_dep {
            self.rtt8 = self.rtt8 - self.rtt8 / 8 + sample.max(1);
        }
    }

    /// A data segment of `len` bytes arrived carrying the echo `tsecr` (our own clock, ns) of
    /// one of our timestamps; `rcv_nxt` after it was queued, `rcv_wnd` the window last
    /// advertised, `ooo` the out-of-order bytes held; `grow`: it may raise rcv_ssthresh (Linux
    /// does not for an out-of-order segment without SACK, so that the duplicate ACKs keep
    /// their window and count as duplicates). True when it raised rcv_ssthresh.
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(
        &mut self,
        now: SimTime,
        len: u64,
        tsecr: Option<u64>,
        rcv_nxt: u64,
        rcv_wnd: u64,
        ooo: u64,
        grow: bool,
    ) -> bool {
        // The receiver RTT is measured with or without autotuning (SACK compression uses it).
        // tcp_rcv_rtt_measure_ts: one sample per new echo, from full-sized segments.
        if let Some(ecr) = tsecr.filter(|&e| e > 0) {
            if ecr != self.last_tsecr {
                self.last_tsecr = ecr;
                if len >= self.mss && now.0 > ecr {
                    self.rtt_update(now.0 - ecr, false);
                }
            }
        }
        // tcp_rcv_rtt_measure: the time to receive one window's worth (only lowers it).
        match self.rtt_at {
            Some(at) if rcv_nxt >= self.rtt_seq => {
                self.rtt_update(now.since(at).0, true);
                self.rtt_seq = rcv_nxt + rcv_wnd;
                self.rtt_at = Some(now);
            }
            Some(_) => {}
            None => {
                self.rtt_seq = rcv_nxt + rcv_wnd;
                self.rtt_at = Some(now);
            }
        }
        // tcp_grow_window.
        if self.on && grow && len >= GROW_MIN_LEN {
            let room = self.window_clamp.saturating_sub(ooo).saturating_sub(self.rcv_ssthresh);
            if room > 0 {
                let incr = (2 * self.advmss).max(2 * len);
                self.rcv_ssthresh += room.min(incr);
                return true;
            }
        }
        false
    }

    /// The application read everything up to `rcv_nxt` (`tcp_rcv_space_adjust`); `ooo_end`
    /// is the end of the out-of-order data held, if any.
    pub fn on_read(&mut self, now: SimTime, rcv_nxt: u64, ooo_end: Option<u64>) {
        if !self.on || self.rtt8 == 0 {
            return;
        }
        if now.since(self.space_at).0 < self.rtt8 / 8 {
            return;
        }
        let copied = rcv_nxt.saturating_sub(self.space_seq);
        if copied > self.space {
            self.grow(copied, rcv_nxt, ooo_end);
        }
        self.space_seq = rcv_nxt;
        self.space_at = now;
    }

    /// Out-of-order data arrived (`tcp_data_queue_ofo` calls `tcp_rcvbuf_grow` with the
    /// current measure, Linux ≥ 6.16): the clamp makes room for the span held beyond the hole.
    pub fn on_out_of_order(&mut self, rcv_nxt: u64, ooo_end: Option<u64>) {
        if self.on {
            self.grow(self.space, rcv_nxt, ooo_end);
        }
    }

    /// tcp_rcvbuf_grow.
    fn grow(&mut self, copied: u64, rcv_nxt: u64, ooo_end: Option<u64>) {
        let old = self.space.max(1);
        self.space = copied;
        let mut rcvwin = 2 * copied;
        let rtt = self.rtt8 / 8;
        let grow = if rtt < LOW_RTT.0 {
            (rcvwin as u128 * rtt as u128 / LOW_RTT.0 as u128) as u64
        } else {
            ((2 * rcvwin as u128) * (copied - old.min(copied)) as u128 / old as u128) as u64
        };
        rcvwin += grow;
        if let Some(end) = ooo_end {
            rcvwin += end.saturating_sub(rcv_nxt);
        }
        let clamp = rcvwin.min(self.cap);
        if clamp > self.window_clamp {
            self.window_clamp = clamp;
        }
    }

    /// The window to advertise (before the never-shrink rule), bytes; `ooo` out-of-order
    /// bytes held; `unit` the window-scale unit.
    pub fn window(&self, ooo: u64, unit: u64) -> u64 {
        let free = self.window_clamp.saturating_sub(ooo).min(self.rcv_ssthresh);
        free.div_ceil(unit.max(1)) * unit.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;
    const ADVMSS: u64 = MSS + crate::wire::TCP_TS_OPTION_BYTES;

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    #[test]
    fn starts_at_the_initial_buffers_window() {
        let t = RcvTune::new(true, 6_000_000, ADVMSS, MSS);
        assert_eq!(t.window(0, 128), (65_160u64).div_ceil(128) * 128);
        assert_eq!(t.window_clamp(), 65_536);
        // A small configured buffer bounds it.
        let t = RcvTune::new(true, 20_000, ADVMSS, MSS);
        assert_eq!(t.window(0, 1), 20_000);
    }

    #[test]
    fn drs_follows_a_doubling_sender_and_stops_at_the_buffer() {
        let mut t = RcvTune::new(true, 6_000_000, ADVMSS, MSS);
        t.on_established(ms(0), 0);
        let mut seq = 0;
        let mut now = 0;
        // 40 ms RTT, the sender doubles what it delivers per RTT: 10, 20, 40, 80 segments.
        for round in 0..4u64 {
            let segs = 10 << round;
            for i in 0..segs {
                now = round * 40 + i * 40 / segs;
                seq += MSS;
                t.on_data(
                    ms(now),
                    MSS,
                    Some(ms(now.saturating_sub(40)).0.max(1)),
                    seq,
                    t.window(0, 128),
                    0,
                    true,
                );
                t.on_read(ms(now), seq, None);
            }
        }
        // The clamp stays ahead of the next round's 160 segments (2 + 4 × growth of 1 = 6×).
        assert!(t.window_clamp() >= 160 * MSS, "{}", t.window_clamp());
        assert!(t.window(0, 128) > 80 * MSS);
        let _ = now;
        // A steady (lower) rate does not grow it further once the last round was measured.
        let mut before = 0;
        for i in 0..400u64 {
            let now = 160 + i;
            if i == 100 {
                before = t.window_clamp();
            }
            seq += MSS;
            t.on_data(ms(now), MSS, Some(ms(now - 40).0), seq, t.window(0, 128), 0, true);
            t.on_read(ms(now), seq, None);
        }
        assert_eq!(t.window_clamp(), before);
        // Never above the buffer.
        let mut t = RcvTune::new(true, 100_000, ADVMSS, MSS);
        t.on_established(ms(0), 0);
        let mut seq = 0;
        for i in 0..2000u64 {
            seq += MSS;
            t.on_data(ms(i), MSS, Some(ms(i.saturating_sub(10)).0.max(1)), seq, 0, 0, true);
            t.on_read(ms(i), seq, None);
        }
        assert!(t.window_clamp() <= 100_000 && t.window(0, 1) <= 100_000);
    }

    #[test]
    fn off_grows_nothing_but_still_measures_the_rtt() {
        let mut t = RcvTune::new(false, 6_000_000, MSS, MSS);
        let clamp = t.window_clamp();
        t.on_data(ms(50), MSS, Some(ms(10).0), MSS, 0, 0, true);
        t.on_read(ms(100), MSS, None);
        t.on_out_of_order(MSS, Some(100 * MSS));
        assert_eq!(t.window_clamp(), clamp);
        assert_eq!(t.rtt(), Some(Dur::from_millis(40)));
    }
}
