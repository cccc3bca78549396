//! The shared medium and the MAC of a BSS (see the module's notes for sources and what is
//! simplified).
//!
//! EDCA (IEEE 802.11-2016 10.22.2): every contender (the AP, and each station for its uplink)
//! with something to send counts down a backoff drawn uniformly from [0, CW] in slots, once
//! the medium has been idle for AIFS; the count is frozen while the medium is busy and
//! resumes after the next AIFS. The contender whose count ends first wins the medium; two
//! or more ending in the same slot collide. A winner sends one A-MPDU (10.13) to one
//! station and gets a block ACK (10.24) a SIFS later; MPDUs the block ACK misses (the
//! station's MPDU error rate) are sent again first. Success resets CW to CWmin, a collision
//! doubles it (CW = 2·CW + 1, up to CWmax, 10.22.2.2); either way a new backoff is drawn.
//! Every draw comes from the BSS's own random stream, in event order: a run is a function
//! of its seed.
//!
//! The event-driven form: while the medium is idle, every active contender's transmission
//! time is `ready + backoff · slot` (`ready`: the slot boundary its countdown started from);
//! the BSS asks to be called at the earliest. When a transmission starts, the others' counts
//! drop by the slots that passed; when it ends, every countdown restarts AIFS later.

use super::phy::{block_ack_time, PhyRate, SIFS, SLOT};
use super::queues::{hist, FqMac, Mpdu, QdiscDriver};
use super::{subframe_bytes, ApQueue, StationQueue, WifiCfg};
use crate::engine::SimRng;
use crate::ids::PacketId;
use crate::metrics::DelayHist;
use crate::net::link::LinkCx;
use crate::queue::{DropReason, Fifo, QEntry, QueueLimit};
use crate::units::{Dur, Rate, SimTime};
use serde_json::{json, Value};
use std::collections::VecDeque;

/// A station's own send queue: Linux's txqueuelen, drop-tail.
const STATION_QUEUE: QueueLimit = QueueLimit::Packets(1000);
/// Aggregates the AP's hardware holds in the FQ-MAC modes, the one on the air included: ath9k
/// pulls from mac80211's queues while fewer than ATH_AGGR_MIN_QDEPTH = 2 are queued, so the
/// next aggregate is built while one is sent.
const HW_AGGREGATES: usize = 2;

#[derive(Debug, Clone, Copy)]
struct Contender {
    /// Backoff slots left.
    backoff: u32,
    cw: u32,
    /// The slot boundary from which `backoff` counts (valid while active and the medium idle).
    ready: SimTime,
    active: bool,
}

/// One transmission on the air: who sends, to or from which station, for how long.
#[derive(Debug, Clone, Copy)]
struct Tx {
    who: usize,
    sta: usize,
    ppdu: Dur,
}

enum Down {
    Qdisc(QdiscDriver),
    Fq(FqMac),
}

/// The stations' own send queues, one per station.
enum Up {
    Fifo(Vec<Fifo>),
    Fq(Vec<FqMac>),
}

/// Per station, over the measurement window.
#[derive(Debug, Clone, Default)]
struct StaStats {
    down_bytes: u64,
    up_bytes: u64,
    /// Airtime of transmissions to the station (the AP's) and from it.
    air_tx: u64,
    air_rx: u64,
    aggregates: u64,
    mpdus: u64,
    retries: u64,
    retry_drops: u64,
    queue_drops: u64,
    collisions: u64,
}

pub struct Bss {
    cfg: WifiCfg,
    cwmin: u32,
    cwmax: u32,
    aifs: Dur,
    ba: Dur,
    down: Down,
    /// MPDUs for each station to send again (block-ACK retries) or that did not fit the last
    /// aggregate: they go first.
    retry: Vec<VecDeque<Mpdu>>,
    up: Up,
    up_retry: Vec<VecDeque<Mpdu>>,
    /// Index 0: the AP; 1 + i: station i.
    ctd: Vec<Contender>,
    /// The aggregate each contender has on the air.
    agg: Vec<Vec<Mpdu>>,
    /// The AP's hardware queue in the FQ-MAC modes: built aggregates (station, MPDUs, octets)
    /// waiting for the medium, and spare buffers for them.
    hwq: VecDeque<(usize, Vec<Mpdu>, u64)>,
    spare: Vec<Vec<Mpdu>>,
    /// Failed MPDUs of one aggregate (scratch, kept to allocate nothing per transmission).
    failed: Vec<Mpdu>,
    txs: Vec<Tx>,
    busy: bool,
    idle_at: SimTime,
    /// The time of the one event the BSS waits for (SimTime::MAX: none).
    pending: SimTime,
    rng: SimRng,
    /// Round robin over stations (FIFO and FQ-MAC modes).
    rr: usize,
    /// Airtime fairness: deficits (ns) and the new / old station lists (Algorithm 3).
    deficit: Vec<i64>,
    listed: Vec<bool>,
    new_sta: VecDeque<usize>,
    old_sta: VecDeque<usize>,
    // Measurements.
    counting: bool,
    window_start: SimTime,
    stats: Vec<StaStats>,
    agg_hist: Vec<u64>,
    collision_events: u64,
    busy_ns: u64,
    mac_sojourn: DelayHist,
    /// Per station since the last sample (time series): IP bytes delivered to it, airtime.
    iv_down: Vec<u64>,
    iv_air: Vec<u64>,
}

/// One station's row of a time-series sample (see [`Bss::sample`]).
pub struct StationSample<'a> {
    pub name: &'a str,
    /// Packets and bytes the AP holds for it (driver or FQ-MAC, hardware queue, retries).
    pub pkts: u64,
    pub bytes: u64,
    /// Packets dropped for it over the window so far.
    pub drops: u64,
    /// IP bytes delivered to it and its airtime (ns) since the last sample.
    pub down_bytes: u64,
    pub airtime_ns: u64,
    pub phy_bps: f64,
}

impl Bss {
    pub fn new(cfg: WifiCfg, mut rng: SimRng, qdisc_rng: SimRng) -> Bss {
        let n = cfg.stations.len();
        let (_, cwmin, cwmax) = cfg.ac.edca();
        let rates: Vec<f64> = cfg.stations.iter().map(|s| s.rate.bps()).collect();
        let down = match &cfg.ap_queue {
            ApQueue::Qdisc { qdisc, driver_limit } => {
                let top = rates.iter().cloned().fold(0.0, f64::max);
                Down::Qdisc(QdiscDriver::new(qdisc, *driver_limit, n, qdisc_rng, Rate(top as u64)))
            }
            ApQueue::FqMac | ApQueue::Airtime => Down::Fq(FqMac::new(&rates, &mut rng)),
        };
        let mut ctd = Vec::with_capacity(n + 1);
        for _ in 0..=n {
            let backoff = rng.range_u64(0, cwmin as u64) as u32;
            ctd.push(Contender { backoff, cw: cwmin, ready: SimTime::ZERO, active: false });
        }
        // Station FQ-MAC draws its hash keys after the contenders' first backoffs, so those
        // are the same whichever queue the stations keep.
        let up = match cfg.station_queue {
            StationQueue::Fifo => Up::Fifo((0..n).map(|_| Fifo::new(STATION_QUEUE)).collect()),
            StationQueue::FqMac => {
                Up::Fq(rates.iter().map(|&r| FqMac::new(&[r], &mut rng)).collect())
            }
        };
        Bss {
            cwmin,
            cwmax,
            aifs: cfg.ac.aifs(),
            ba: block_ack_time(),
            down,
            retry: (0..n).map(|_| VecDeque::new()).collect(),
            up,
            up_retry: (0..n).map(|_| VecDeque::new()).collect(),
            ctd,
            agg: (0..=n).map(|_| Vec::with_capacity(64)).collect(),
            hwq: VecDeque::with_capacity(HW_AGGREGATES),
            spare: (0..HW_AGGREGATES).map(|_| Vec::with_capacity(64)).collect(),
            failed: Vec::with_capacity(64),
            txs: Vec::with_capacity(4),
            busy: false,
            idle_at: SimTime::ZERO,
            pending: SimTime::MAX,
            rng,
            rr: 0,
            deficit: vec![0; n],
            listed: vec![false; n],
            new_sta: VecDeque::new(),
            old_sta: VecDeque::new(),
            counting: false,
            window_start: SimTime::ZERO,
            stats: vec![StaStats::default(); n],
            agg_hist: vec![0; 65],
            collision_events: 0,
            busy_ns: 0,
            mac_sojourn: hist(),
            iv_down: vec![0; n],
            iv_air: vec![0; n],
            cfg,
        }
    }

    pub fn stations(&self) -> usize {
        self.cfg.stations.len()
    }

    fn rate(&self, sta: usize) -> &PhyRate {
        &self.cfg.stations[sta].rate
    }

    fn has_down(&self, sta: usize) -> bool {
        !self.retry[sta].is_empty()
            || match &self.down {
                Down::Qdisc(q) => q.has(sta),
                Down::Fq(f) => f.has(sta),
            }
    }

    fn has_up(&self, sta: usize) -> bool {
        !self.up_retry[sta].is_empty()
            || match &self.up {
                Up::Fifo(q) => !q[sta].is_empty(),
                Up::Fq(f) => f[sta].has(0),
            }
    }

    fn has(&self, who: usize) -> bool {
        if who == 0 {
            !self.hwq.is_empty() || (0..self.stations()).any(|s| self.has_down(s))
        } else {
            self.has_up(who - 1)
        }
    }

    fn airtime(&self) -> bool {
        self.cfg.ap_queue.is_airtime()
    }

    /// A packet reaches the BSS: for station `sta` (`down`) or from it. Returns a time to
    /// call [`Bss::on_event`] at, if the BSS needs a new one.
    pub fn enqueue(
        &mut self,
        now: SimTime,
        sta: usize,
        down: bool,
        e: QEntry,
        cx: &mut dyn LinkCx,
    ) -> Option<SimTime> {
        let who = if down { 0 } else { sta + 1 };
        if down {
            let dropped = match &mut self.down {
                Down::Qdisc(q) => q.enqueue(e, sta, now, cx),
                Down::Fq(f) => f.enqueue(e, sta, cx),
            };
            self.count_drops(sta, dropped);
            self.list_station(sta);
            if self.hw_queue() {
                self.fill_hw(now, cx);
            }
        } else {
            let dropped = match &mut self.up {
                Up::Fifo(q) if q[sta].overflows(&e) => {
                    cx.dropped(e.id, DropReason::Overflow);
                    1
                }
                Up::Fifo(q) => {
                    q[sta].push(e);
                    0
                }
                Up::Fq(f) => f[sta].enqueue(e, 0, cx),
            };
            self.count_drops(sta, dropped);
        }
        if self.ctd[who].active || !self.has(who) {
            return None;
        }
        // A contender wakes: while the medium is idle its countdown starts at the next slot
        // boundary after AIFS (when busy, at the end of the busy period, set then).
        let c = &mut self.ctd[who];
        c.active = true;
        if self.busy {
            return None;
        }
        let base = self.idle_at + self.aifs;
        c.ready =
            if now <= base { base } else { base + Dur((now - base).0.div_ceil(SLOT.0) * SLOT.0) };
        let t = c.ready + Dur(c.backoff as u64 * SLOT.0);
        if t < self.pending {
            self.pending = t;
            return Some(t);
        }
        None
    }

    fn count_drops(&mut self, sta: usize, n: u64) {
        if self.counting {
            self.stats[sta].queue_drops += n;
        }
    }

    fn list_station(&mut self, sta: usize) {
        if self.airtime() && !self.listed[sta] {
            self.listed[sta] = true;
            self.new_sta.push_back(sta);
        }
    }

    /// The BSS's event: the end of a busy period or the end of a countdown. Packets received
    /// go to `out` (in order); returns the next time to be called at.
    pub fn on_event(
        &mut self,
        now: SimTime,
        cx: &mut dyn LinkCx,
        out: &mut Vec<(PacketId, usize, bool)>,
    ) -> Option<SimTime> {
        if now != self.pending {
            return None; // stale: an earlier countdown replaced it
        }
        self.pending = SimTime::MAX;
        if self.busy {
            self.finish(now, cx, out);
            self.busy = false;
            self.idle_at = now;
            if self.hw_queue() {
                self.fill_hw(now, cx);
            }
            let ready = now + self.aifs;
            for who in 0..self.ctd.len() {
                let active = self.has(who);
                let c = &mut self.ctd[who];
                c.active = active;
                c.ready = ready;
            }
        } else {
            self.start(now, cx);
        }
        if self.busy {
            return Some(self.pending); // start() set it: the end of the busy period
        }
        let next = self
            .ctd
            .iter()
            .filter(|c| c.active)
            .map(|c| c.ready + Dur(c.backoff as u64 * SLOT.0))
            .min()?;
        self.pending = next;
        Some(next)
    }

    /// Countdowns that end now transmit.
    fn start(&mut self, now: SimTime, cx: &mut dyn LinkCx) {
        self.txs.clear();
        for who in 0..self.ctd.len() {
            let c = self.ctd[who];
            if !c.active {
                continue;
            }
            let t = c.ready + Dur(c.backoff as u64 * SLOT.0);
            if t == now {
                if let Some(tx) = self.build(who, now, cx) {
                    self.txs.push(tx);
                } else {
                    // Nothing to send after all (CoDel dropped what was there).
                    let cw = self.ctd[who].cw;
                    self.ctd[who].backoff = self.rng.range_u64(0, cw as u64) as u32;
                    self.ctd[who].active = self.has(who);
                    self.ctd[who].ready = now;
                }
            } else if now > c.ready {
                let passed = ((now - c.ready).0 / SLOT.0) as u32;
                self.ctd[who].backoff = c.backoff - passed.min(c.backoff);
            }
        }
        if self.txs.is_empty() {
            return;
        }
        // Collisions end when the longest PPDU and the ACK timeout do.
        let longest = self.txs.iter().map(|t| t.ppdu.0).max().unwrap();
        let end = now + Dur(longest) + SIFS + self.ba;
        self.busy = true;
        self.pending = end;
        if self.hw_queue() && self.txs.iter().any(|t| t.who == 0) {
            self.fill_hw(now, cx);
        }
        if self.counting {
            self.busy_ns += (end - now).0;
        }
        for i in 0..self.txs.len() {
            let Tx { who, sta, ppdu } = self.txs[i];
            // Airtime is charged to the station at both ends (the paper's TX and RX airtime).
            if self.airtime() {
                self.deficit[sta] -= ppdu.0 as i64;
            }
            self.iv_air[sta] += ppdu.0;
            if self.counting {
                let s = &mut self.stats[sta];
                if who == 0 {
                    s.air_tx += ppdu.0;
                } else {
                    s.air_rx += ppdu.0;
                }
            }
        }
    }

    /// The station the AP sends to next.
    fn pick_station(&mut self) -> Option<usize> {
        let n = self.stations();
        if !self.airtime() {
            let s = (0..n).map(|k| (self.rr + k) % n).find(|&s| self.has_down(s))?;
            self.rr = (s + 1) % n;
            return Some(s);
        }
        // Deficit round robin in airtime over stations, new ones first (the paper's
        // Algorithm 3).
        loop {
            let (s, from_new) = match (self.new_sta.front(), self.old_sta.front()) {
                (Some(&s), _) => (s, true),
                (None, Some(&s)) => (s, false),
                (None, None) => return None,
            };
            if self.deficit[s] <= 0 {
                self.deficit[s] += self.cfg.quantum.0 as i64;
                if from_new {
                    self.new_sta.pop_front();
                } else {
                    self.old_sta.pop_front();
                }
                self.old_sta.push_back(s);
                continue;
            }
            if !self.has_down(s) {
                if from_new {
                    self.new_sta.pop_front();
                    self.old_sta.push_back(s);
                } else {
                    self.old_sta.pop_front();
                    self.listed[s] = false;
                }
                continue;
            }
            return Some(s);
        }
    }

    /// Contender `who`'s A-MPDU to send now: a station's from its queue; the AP's from its
    /// hardware queue (FQ-MAC modes) or built now from the driver's queue (`qdisc`).
    fn build(&mut self, who: usize, now: SimTime, cx: &mut dyn LinkCx) -> Option<Tx> {
        let (sta, bytes) = if who == 0 && self.hw_queue() {
            if self.hwq.is_empty() {
                self.fill_hw(now, cx);
            }
            let (sta, v, bytes) = self.hwq.pop_front()?;
            let old = std::mem::replace(&mut self.agg[0], v);
            self.spare.push(old);
            (sta, bytes)
        } else {
            let sta = if who == 0 { self.pick_station()? } else { who - 1 };
            let mut agg = std::mem::take(&mut self.agg[who]);
            let bytes = self.assemble(who, sta, now, cx, &mut agg);
            self.agg[who] = agg;
            if let (0, Down::Qdisc(q)) = (who, &mut self.down) {
                let dropped = q.refill(now, cx);
                self.count_drops(sta, dropped);
            }
            (sta, bytes)
        };
        let agg = &self.agg[who];
        if agg.is_empty() {
            return None;
        }
        if self.counting {
            self.agg_hist[agg.len()] += 1;
            let s = &mut self.stats[sta];
            s.aggregates += 1;
            s.mpdus += agg.len() as u64;
            s.retries += agg.iter().filter(|m| m.tries > 0).count() as u64;
            if who == 0 {
                for m in agg.iter().filter(|m| m.tries == 0) {
                    self.mac_sojourn.record(now.since(m.since).0);
                }
            }
        }
        Some(Tx { who, sta, ppdu: self.rate(sta).ppdu_time(bytes) })
    }

    /// FQ-MAC modes keep aggregates in a hardware queue (see [`HW_AGGREGATES`]).
    fn hw_queue(&self) -> bool {
        matches!(self.down, Down::Fq(_))
    }

    /// Builds aggregates into the hardware queue while it holds fewer than
    /// [`HW_AGGREGATES`] (counting the AP's one on the air).
    fn fill_hw(&mut self, now: SimTime, cx: &mut dyn LinkCx) {
        let on_air = usize::from(self.busy && self.txs.iter().any(|t| t.who == 0));
        while self.hwq.len() + on_air < HW_AGGREGATES {
            let Some(sta) = self.pick_station() else { break };
            let mut v = self.spare.pop().unwrap_or_default();
            let bytes = self.assemble(0, sta, now, cx, &mut v);
            if v.is_empty() {
                self.spare.push(v);
                break;
            }
            self.hwq.push_back((sta, v, bytes));
        }
    }

    /// Fills `agg` with MPDUs for (AP) or from (station) station `sta`: retries first, then
    /// new packets, within the limits. Returns the A-MPDU's length in octets.
    fn assemble(
        &mut self,
        who: usize,
        sta: usize,
        now: SimTime,
        cx: &mut dyn LinkCx,
        agg: &mut Vec<Mpdu>,
    ) -> u64 {
        let rate = *self.rate(sta);
        agg.clear();
        let mut bytes = 0u64;
        while agg.len() < self.cfg.max_mpdus as usize {
            let m = if who == 0 {
                match self.retry[sta].pop_front() {
                    Some(m) => Some(m),
                    None => match &mut self.down {
                        Down::Qdisc(q) => q.pop(sta),
                        Down::Fq(f) => {
                            let (m, dropped) = f.pop(sta, now, cx);
                            self.count_drops(sta, dropped);
                            m
                        }
                    },
                }
            } else {
                match self.up_retry[sta].pop_front() {
                    Some(m) => Some(m),
                    None => match &mut self.up {
                        Up::Fifo(q) => q[sta].pop().map(|e| Mpdu { e, since: now, tries: 0 }),
                        Up::Fq(f) => {
                            let (m, dropped) = f[sta].pop(0, now, cx);
                            self.count_drops(sta, dropped);
                            m
                        }
                    },
                }
            };
            let Some(m) = m else { break };
            let sub = subframe_bytes(m.e.bytes as u64);
            let over = bytes + sub > self.cfg.max_bytes
                || rate.ppdu_time(bytes + sub) > self.cfg.max_airtime;
            if !agg.is_empty() && over {
                if who == 0 {
                    self.retry[sta].push_front(m);
                } else {
                    self.up_retry[sta].push_front(m);
                }
                break;
            }
            bytes += sub;
            agg.push(m);
        }
        bytes
    }

    /// The end of a busy period: a lone transmission's block ACK, or a collision.
    fn finish(
        &mut self,
        _now: SimTime,
        cx: &mut dyn LinkCx,
        out: &mut Vec<(PacketId, usize, bool)>,
    ) {
        let collided = self.txs.len() > 1;
        if collided && self.counting {
            self.collision_events += 1;
        }
        for i in 0..self.txs.len() {
            let Tx { who, sta, .. } = self.txs[i];
            let mut agg = std::mem::take(&mut self.agg[who]);
            let err = self.cfg.stations[sta].mpdu_error;
            // Failed MPDUs go back to the front in their order.
            let mut failed = std::mem::take(&mut self.failed);
            for m in agg.drain(..) {
                let lost = collided || (err > 0.0 && self.rng.chance(err));
                if !lost {
                    if who == 0 {
                        self.iv_down[sta] += m.e.bytes as u64;
                    }
                    if self.counting {
                        let s = &mut self.stats[sta];
                        if who == 0 {
                            s.down_bytes += m.e.bytes as u64;
                        } else {
                            s.up_bytes += m.e.bytes as u64;
                        }
                    }
                    out.push((m.e.id, sta, who == 0));
                    continue;
                }
                let m = Mpdu { tries: m.tries + 1, ..m };
                if m.tries >= self.cfg.retry_limit {
                    cx.dropped(m.e.id, DropReason::RandomLoss);
                    if self.counting {
                        self.stats[sta].retry_drops += 1;
                    }
                } else {
                    failed.push(m);
                }
            }
            let q = if who == 0 { &mut self.retry[sta] } else { &mut self.up_retry[sta] };
            for m in failed.drain(..).rev() {
                q.push_front(m);
            }
            self.failed = failed;
            if who == 0 && self.has_down(sta) {
                self.list_station(sta);
            }
            self.agg[who] = agg;
            let c = &mut self.ctd[who];
            if collided {
                c.cw = (2 * c.cw + 1).min(self.cwmax);
                if self.counting {
                    self.stats[sta].collisions += 1;
                }
            } else {
                c.cw = self.cwmin;
            }
            c.backoff = self.rng.range_u64(0, c.cw as u64) as u32;
        }
        self.txs.clear();
    }

    /// Each station's row of a time-series sample; restarts the interval counters.
    pub fn sample(&mut self, mut row: impl FnMut(StationSample)) {
        for i in 0..self.stations() {
            let (mut pkts, mut bytes) = match &self.down {
                Down::Qdisc(q) => q.backlog(i),
                Down::Fq(f) => f.backlog(i),
            };
            let held = self.retry[i]
                .iter()
                .chain(self.hwq.iter().filter(|(s, _, _)| *s == i).flat_map(|(_, v, _)| v.iter()));
            for m in held {
                pkts += 1;
                bytes += m.e.bytes as u64;
            }
            row(StationSample {
                name: &self.cfg.stations[i].name,
                pkts,
                bytes,
                drops: self.stats[i].queue_drops + self.stats[i].retry_drops,
                down_bytes: std::mem::take(&mut self.iv_down[i]),
                airtime_ns: std::mem::take(&mut self.iv_air[i]),
                phy_bps: self.cfg.stations[i].rate.bps(),
            });
        }
    }

    /// Packets inside the BSS (queues, retries and on the air), for the conservation check.
    pub fn inside(&self) -> u64 {
        let down = match &self.down {
            Down::Qdisc(q) => q.packets(),
            Down::Fq(f) => f.packets(),
        };
        let retries: usize = self.retry.iter().chain(&self.up_retry).map(VecDeque::len).sum();
        let up: u64 = match &self.up {
            Up::Fifo(q) => q.iter().map(|f| f.len() as u64).sum(),
            Up::Fq(f) => f.iter().map(FqMac::packets).sum(),
        };
        let air: usize = self.txs.iter().map(|t| self.agg[t.who].len()).sum();
        let hw: usize = self.hwq.iter().map(|(_, v, _)| v.len()).sum();
        down + up + (retries + air + hw) as u64
    }

    pub fn start_window(&mut self, now: SimTime) {
        self.counting = true;
        self.window_start = now;
        for s in self.stats.iter_mut() {
            *s = StaStats::default();
        }
        self.agg_hist.iter_mut().for_each(|c| *c = 0);
        self.collision_events = 0;
        self.busy_ns = 0;
        self.mac_sojourn.reset();
        match &mut self.down {
            Down::Qdisc(q) => {
                q.counting = true;
                q.sojourn.reset();
            }
            Down::Fq(f) => {
                f.counting = true;
                f.sojourn.reset();
            }
        }
        if let Up::Fq(fs) = &mut self.up {
            for f in fs {
                f.counting = true;
                f.sojourn.reset();
            }
        }
    }

    /// The summary's `wifi` block over [window start, `end`].
    pub fn measure(&self, end: SimTime) -> Value {
        let secs = end.since(self.window_start).secs_f64().max(1e-12);
        let air: Vec<f64> =
            self.stats.iter().map(|s| (s.air_tx + s.air_rx) as f64 / 1e9 / secs).collect();
        let total_air: f64 = air.iter().sum();
        let stations: Vec<Value> = self
            .stats
            .iter()
            .enumerate()
            .map(|(i, s)| {
                json!({
                    "name": self.cfg.stations[i].name,
                    "phy_rate_mbps": self.cfg.stations[i].rate.bps() / 1e6,
                    "down_mbps": s.down_bytes as f64 * 8.0 / secs / 1e6,
                    "up_mbps": s.up_bytes as f64 * 8.0 / secs / 1e6,
                    "airtime_share": if total_air > 0.0 { air[i] / total_air } else { 0.0 },
                    "airtime_fraction": air[i],
                    "aggregates": s.aggregates,
                    "mean_aggregate_mpdus": if s.aggregates > 0 {
                        s.mpdus as f64 / s.aggregates as f64 } else { 0.0 },
                    "retries": s.retries,
                    "retry_drops": s.retry_drops,
                    "queue_drops": s.queue_drops,
                    "collisions": s.collisions,
                })
            })
            .collect();
        let total_mbps: f64 =
            self.stats.iter().map(|s| (s.down_bytes + s.up_bytes) as f64 * 8.0 / secs / 1e6).sum();
        let hist_ms = |h: &DelayHist| {
            if h.is_empty() {
                return Value::Null;
            }
            let q = |p: f64| h.value_at_quantile(p) as f64 / 1e6;
            json!({ "samples": h.len(), "p50_ms": q(0.5), "p95_ms": q(0.95), "p99_ms": q(0.99) })
        };
        let (qdisc, fq) = match &self.down {
            Down::Qdisc(q) => (hist_ms(&q.sojourn), Value::Null),
            Down::Fq(f) => (Value::Null, hist_ms(&f.sojourn)),
        };
        let last = self.agg_hist.iter().rposition(|&c| c > 0).unwrap_or(0);
        let mut v = json!({
            "ap_queue": self.cfg.ap_queue.name(),
            "access_category": self.cfg.ac.name(),
            "stations": stations,
            "total_mbps": total_mbps,
            "jain_airtime": crate::metrics::jain(&air),
            "busy_fraction": self.busy_ns as f64 / 1e9 / secs,
            "collision_events": self.collision_events,
            // Count of A-MPDUs with 1, 2, ... MPDUs (index 0: one MPDU).
            "aggregate_sizes": self.agg_hist[1..=last.max(1)].to_vec(),
            "sojourn": { "qdisc": qdisc, "fq_mac": fq, "driver": hist_ms(&self.mac_sojourn) },
        });
        // Station FQ-MAC adds its name and the stations' FQ-MAC sojourn (all stations'
        // packets in one histogram); a run with FIFO stations reports what it always did.
        if let Up::Fq(fs) = &self.up {
            let mut h = hist();
            for f in fs {
                h.add(&f.sojourn);
            }
            v["station_queue"] = json!(StationQueue::FqMac.name());
            v["sojourn"]["station_fq_mac"] = hist_ms(&h);
        }
        v
    }
}
