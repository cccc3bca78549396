//! What a link counts: whole-run counters (for the conservation checks), measurement-window
//! counters (after warm-up, for the summary) and interval counters (for the time series).
//! The simulated world and the emulator both keep their links' statistics here, so the
//! bottleneck block of the summary means the same thing for both.

use crate::metrics::DelayHist;
use crate::metrics::{Busy, DropReasons, QueueMeasure};
use crate::queue::{DropReason, DROP_REASONS};
use crate::units::{Dur, SimTime};

/// Laid out in declaration order (`repr(C)`): the counters every packet touches come first,
/// so that they share the link's first cache lines with the serializer (see `Link`). A link
/// that is not monitored keeps only those (the conservation checks' and the run's transmission
/// count); its window and interval counters stay zero and their cache lines untouched.
#[repr(C)]
pub struct LinkStats {
    pub arrivals: u64,
    pub transmitted: u64,
    pub delivered: u64,
    /// The link is measured: per-packet sojourn, the backlog integral, the window and the
    /// interval counters (the summary's and the time series' links).
    pub monitored: bool,
    /// In the measurement window (a monitored link after the warm-up).
    pub counting: bool,

    /// Measurement window.
    pub window_start: SimTime,
    pub w_arrivals: u64,
    pub w_tx_pkts: u64,
    pub w_tx_bytes: u64,
    pub w_busy: Dur,
    /// Interval counters for time series (reset at each sample).
    pub i_tx_bytes: u64,

    /// The link's cumulative capacity (bytes) when the window started.
    pub w_capacity_start: u64,
    /// Drops by reason (random wire loss included), whole run and window: after the counters
    /// every packet touches, as a lightly loaded link rarely drops.
    pub drops: [u64; DROP_REASONS],
    pub w_drops: [u64; DROP_REASONS],
    /// Bytes the link could have carried during the window (set when the run ends).
    pub w_capacity: u64,
    /// ∫ backlog_bytes dt, in byte·ns.
    pub w_backlog_area: u128,
    pub last_backlog_change: SimTime,
    pub last_backlog: u64,
    pub w_sojourn_sum: u128,
    pub w_sojourn_n: u64,
    pub sojourn_hist: DelayHist,
    pub i_sojourn_sum: u128,
    pub i_sojourn_n: u64,
}

impl LinkStats {
    pub fn new(monitored: bool) -> LinkStats {
        LinkStats {
            monitored,
            arrivals: 0,
            drops: [0; DROP_REASONS],
            transmitted: 0,
            delivered: 0,
            counting: monitored,
            window_start: SimTime::ZERO,
            w_arrivals: 0,
            w_drops: [0; DROP_REASONS],
            w_tx_pkts: 0,
            w_tx_bytes: 0,
            w_busy: Dur::ZERO,
            w_capacity_start: 0,
            w_capacity: 0,
            w_backlog_area: 0,
            last_backlog_change: SimTime::ZERO,
            last_backlog: 0,
            w_sojourn_sum: 0,
            w_sojourn_n: 0,
            sojourn_hist: DelayHist::new(1, crate::metrics::DELAY_MAX_NS),
            i_tx_bytes: 0,
            i_sojourn_sum: 0,
            i_sojourn_n: 0,
        }
    }

    #[inline]
    pub fn arrival(&mut self) {
        self.arrivals += 1;
        if self.counting {
            self.w_arrivals += 1;
        }
    }

    #[inline]
    pub fn drop(&mut self, r: DropReason) {
        self.drops[r as usize] += 1;
        if self.counting {
            self.w_drops[r as usize] += 1;
        }
    }

    /// Drops by the discipline (overflow and AQM), not by the wire.
    pub fn queue_drops(&self) -> u64 {
        self.drops[DropReason::Overflow as usize]
            + self.drops[DropReason::Early as usize]
            + self.drops[DropReason::AqmDequeue as usize]
    }

    /// A packet leaves the queue for the serializer after `sojourn_ns` in it.
    #[inline]
    pub fn sojourn(&mut self, sojourn_ns: u64) {
        if self.counting {
            self.w_sojourn_sum += sojourn_ns as u128;
            self.w_sojourn_n += 1;
            self.sojourn_hist.record(sojourn_ns.max(1));
        }
        self.i_sojourn_sum += sojourn_ns as u128;
        self.i_sojourn_n += 1;
    }

    /// A transmission of `bytes` over [started, now] ended.
    #[inline]
    pub fn transmitted(&mut self, started: SimTime, now: SimTime, bytes: u64) {
        self.transmitted += 1;
        self.add_busy(started, now);
        if self.counting {
            self.w_tx_pkts += 1;
            self.w_tx_bytes += bytes;
        }
        if self.monitored {
            self.i_tx_bytes += bytes;
        }
    }

    /// Accumulates the backlog integral up to `now`, then records the new backlog.
    #[inline]
    pub fn backlog_changed(&mut self, now: SimTime, backlog: u64) {
        if self.counting {
            let dt = now.since(self.last_backlog_change).0 as u128;
            self.w_backlog_area += self.last_backlog as u128 * dt;
        }
        self.last_backlog_change = now;
        self.last_backlog = backlog;
    }

    /// Starts the measurement window (end of warm-up): window counters restart from zero.
    pub fn start_window(&mut self, now: SimTime) {
        self.counting = self.monitored;
        self.window_start = now;
        self.w_arrivals = 0;
        self.w_drops = [0; DROP_REASONS];
        self.w_tx_pkts = 0;
        self.w_tx_bytes = 0;
        self.w_busy = Dur::ZERO;
        self.w_backlog_area = 0;
        self.last_backlog_change = now;
        self.w_sojourn_sum = 0;
        self.w_sojourn_n = 0;
        self.sojourn_hist.reset();
    }

    /// Adds (`add`) or takes back a transmission of `bytes` whose `busy` time lies inside the
    /// window (a folded transmission that straddles the window's start or end).
    pub fn window_tx(&mut self, bytes: u64, busy: Dur, add: bool) {
        if !self.counting {
            return;
        }
        if add {
            self.w_tx_pkts += 1;
            self.w_tx_bytes += bytes;
            self.w_busy += busy;
        } else {
            self.w_tx_pkts -= 1;
            self.w_tx_bytes -= bytes;
            self.w_busy = self.w_busy - busy;
        }
    }

    /// Busy time of a transmission over [start, end], clipped to the window.
    #[inline]
    pub fn add_busy(&mut self, start: SimTime, end: SimTime) {
        if self.counting {
            let s = start.max(self.window_start);
            if end > s {
                self.w_busy += end - s;
            }
        }
    }

    /// Mean sojourn (ms, NaN without samples) and bytes sent since the previous call, for a
    /// time-series sample.
    pub fn take_interval(&mut self) -> (f64, u64) {
        let s = if self.i_sojourn_n > 0 {
            self.i_sojourn_sum as f64 / self.i_sojourn_n as f64 / 1e6
        } else {
            f64::NAN
        };
        let b = self.i_tx_bytes;
        self.i_tx_bytes = 0;
        self.i_sojourn_sum = 0;
        self.i_sojourn_n = 0;
        (s, b)
    }

    /// The window as measurements for the summary builder (`metrics::measure`), once the
    /// window is closed (`Link::close_window`). `constant_rate`: utilization is busy time;
    /// otherwise bytes carried over the capacity offered.
    pub fn measure(
        &self,
        end: SimTime,
        aqm: &str,
        capacity_bytes: u64,
        rate_mbps: f64,
        constant_rate: bool,
    ) -> QueueMeasure {
        QueueMeasure {
            aqm: aqm.to_string(),
            capacity_bytes,
            rate_mbps,
            window_s: end.since(self.window_start).secs_f64(),
            backlog_area: self.w_backlog_area as f64,
            sojourn_n: self.w_sojourn_n,
            sojourn_sum_ns: self.w_sojourn_sum as f64,
            sojourn_p95_ns: self.sojourn_hist.value_at_quantile(0.95),
            arrivals: self.w_arrivals,
            drop_reasons: DropReasons {
                overflow: self.w_drops[DropReason::Overflow as usize],
                early: self.w_drops[DropReason::Early as usize],
                aqm_dequeue: self.w_drops[DropReason::AqmDequeue as usize],
            },
            random_losses: self.w_drops[DropReason::RandomLoss as usize],
            tx_packets: self.w_tx_pkts,
            tx_bytes: self.w_tx_bytes,
            busy: if constant_rate {
                Busy::Time { busy_s: self.w_busy.secs_f64() }
            } else {
                Busy::Offered { offered_bytes: self.w_capacity }
            },
        }
    }
}
