//! The AP's downlink queues, two ways (the third, airtime fairness, is FQ-MAC plus the
//! scheduler in mac.rs); a station's send queue in `station_queue = "fq_mac"` is the same
//! [`FqMac`] with one tin (its one peer, the AP):
//! - [`QdiscDriver`]: one of our qdiscs above the driver's FIFO of `limit` packets per access
//!   category (ath9k: 123), split by station as ath9k's per-TID software queues are; the
//!   qdisc feeds the driver whenever it has room.
//! - [`FqMac`]: mac80211's FQ-MAC (the paper's §3.1; Linux fq_impl.h): 4096 flow queues shared
//!   by every station's TID; a packet hashes to a flow, and to its TID's default flow if that
//!   flow belongs to another TID; each TID runs fq_codel's new/old flow lists with a 300-byte
//!   quantum, and CoDel per flow with mac80211's parameters; above 8192 packets in all, the
//!   head of the longest flow is dropped.

use crate::engine::SimRng;
use crate::ids::PacketId;
use crate::metrics::DelayHist;
use crate::net::link::LinkCx;
use crate::queue::{
    CodelParams, CodelState, DropReason, Fifo, LinkQueue, QEntry, QueueCfg, QueueDisc, Verdict,
};
use crate::units::{Dur, Rate, SimTime};
use std::collections::VecDeque;

/// An MPDU waiting in the MAC or in flight: the packet, when it entered the MAC's queue, and
/// how often it was sent.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mpdu {
    pub e: QEntry,
    pub since: SimTime,
    pub tries: u32,
}

/// The sojourn histograms' bounds: 1 µs to 100 s.
pub(super) fn hist() -> DelayHist {
    DelayHist::new(1_000, 100_000_000_000)
}

pub(super) struct QdiscDriver {
    qdisc: LinkQueue,
    driver: Vec<VecDeque<Mpdu>>,
    total: u32,
    limit: u32,
    /// The station each packet in the qdisc is for, by packet index (the qdisc sees no
    /// stations).
    sta_of: Vec<u16>,
    drops: Vec<(QEntry, DropReason)>,
    pub sojourn: DelayHist,
    pub counting: bool,
}

impl QdiscDriver {
    pub fn new(cfg: &QueueCfg, limit: u32, n: usize, rng: SimRng, rate: Rate) -> QdiscDriver {
        QdiscDriver {
            qdisc: crate::queue::build(cfg, rng, rate),
            driver: (0..n).map(|_| VecDeque::new()).collect(),
            total: 0,
            limit,
            sta_of: Vec::new(),
            drops: Vec::new(),
            sojourn: hist(),
            counting: false,
        }
    }

    /// Returns whether the packet was kept (counted as a queue drop otherwise).
    pub fn enqueue(&mut self, e: QEntry, sta: usize, now: SimTime, cx: &mut dyn LinkCx) -> u64 {
        let i = e.id.0 as usize;
        if self.sta_of.len() <= i {
            self.sta_of.resize(i + 1, 0);
        }
        self.sta_of[i] = sta as u16;
        let v = self.qdisc.enqueue(e, now, &mut self.drops);
        let mut dropped = self.flush(cx);
        match v {
            Verdict::Queued => {}
            Verdict::Marked => cx.mark_ce(e.id),
            Verdict::Dropped(r) => {
                cx.dropped(e.id, r);
                dropped += 1;
            }
        }
        dropped + self.refill(now, cx)
    }

    fn flush(&mut self, cx: &mut dyn LinkCx) -> u64 {
        let n = self.drops.len() as u64;
        for (d, r) in self.drops.drain(..) {
            cx.dropped(d.id, r);
        }
        n
    }

    /// Moves packets from the qdisc into the driver while it has room; the qdisc's drops.
    pub fn refill(&mut self, now: SimTime, cx: &mut dyn LinkCx) -> u64 {
        let mut dropped = 0;
        while self.total < self.limit {
            let d = self.qdisc.dequeue(now, &mut self.drops);
            dropped += self.flush(cx);
            let Some(d) = d else { break };
            if d.mark {
                cx.mark_ce(d.entry.id);
            }
            if self.counting {
                self.sojourn.record(now.since(d.entry.enqueued_at).0);
            }
            let sta = self.sta_of[d.entry.id.0 as usize] as usize;
            self.driver[sta].push_back(Mpdu { e: d.entry, since: now, tries: 0 });
            self.total += 1;
        }
        dropped
    }

    pub fn has(&self, sta: usize) -> bool {
        !self.driver[sta].is_empty()
    }

    /// Packets and bytes in the driver's queue for station `sta` (the qdisc's are nobody's).
    pub fn backlog(&self, sta: usize) -> (u64, u64) {
        let q = &self.driver[sta];
        (q.len() as u64, q.iter().map(|m| m.e.bytes as u64).sum())
    }

    pub fn pop(&mut self, sta: usize) -> Option<Mpdu> {
        let m = self.driver[sta].pop_front()?;
        self.total -= 1;
        Some(m)
    }

    pub fn packets(&self) -> u64 {
        self.qdisc.backlog().pkts + self.total as u64
    }
}

/// mac80211's number of flow queues, packet limit and DRR quantum (fq_impl.h: fq_init).
const FQ_FLOWS: usize = 4096;
const FQ_LIMIT: u32 = 8192;
const FQ_QUANTUM: i64 = 300;
/// mac80211: a station slower than this gets CoDel target 50 ms, interval 300 ms
/// (sta_info.c, STA_SLOW_THRESHOLD 6000 kbit/s); others 20 ms / 100 ms.
const STA_SLOW_THRESHOLD: f64 = 6e6;

struct Flow {
    q: Fifo,
    codel: CodelState,
    deficit: i64,
    tin: Option<u16>,
    listed: bool,
}

#[derive(Default)]
struct Tin {
    new: VecDeque<u32>,
    old: VecDeque<u32>,
}

pub(super) struct FqMac {
    flows: Vec<Flow>,
    tins: Vec<Tin>,
    params: Vec<CodelParams>,
    hash_key: u64,
    packets: u32,
    /// Packets and bytes queued per station (TID), for the time series.
    tin_backlog: Vec<(u64, u64)>,
    drops: Vec<(QEntry, DropReason)>,
    pub sojourn: DelayHist,
    pub counting: bool,
}

impl FqMac {
    /// `rates`: each station's PHY rate (bit/s), which picks its CoDel parameters.
    pub fn new(rates: &[f64], rng: &mut SimRng) -> FqMac {
        let n = rates.len();
        let params = rates
            .iter()
            .map(|&r| {
                let slow = r < STA_SLOW_THRESHOLD;
                CodelParams {
                    target: Dur::from_millis(if slow { 50 } else { 20 }),
                    interval: Dur::from_millis(if slow { 300 } else { 100 }),
                    ecn: true,
                }
            })
            .collect();
        FqMac {
            // Built at the first packet: a BSS of many stations, each with its own FQ-MAC
            // (`station_queue = "fq_mac"`), pays only for the stations that send.
            flows: Vec::new(),
            tins: (0..n).map(|_| Tin::default()).collect(),
            params,
            // A 64-bit key from two 53-bit draws, as the flow-queueing qdiscs draw theirs.
            hash_key: ((rng.uniform() * (1u64 << 53) as f64) as u64) << 11
                ^ (rng.uniform() * (1u64 << 53) as f64) as u64,
            packets: 0,
            tin_backlog: vec![(0, 0); n],
            drops: Vec::new(),
            sojourn: hist(),
            counting: false,
        }
    }

    /// Packets and bytes queued for station `sta`.
    pub fn backlog(&self, sta: usize) -> (u64, u64) {
        self.tin_backlog[sta]
    }

    /// Queues `e` for station `sta`; the packets dropped (overflow of the whole set).
    pub fn enqueue(&mut self, e: QEntry, sta: usize, cx: &mut dyn LinkCx) -> u64 {
        if self.flows.is_empty() {
            self.alloc_flows();
        }
        let mut idx = (e.key.hash(self.hash_key) % FQ_FLOWS as u64) as usize;
        if self.flows[idx].tin.is_some_and(|t| t as usize != sta) {
            idx = FQ_FLOWS + sta;
        }
        let f = &mut self.flows[idx];
        f.tin = Some(sta as u16);
        f.q.push(e);
        self.packets += 1;
        let b = &mut self.tin_backlog[sta];
        *b = (b.0 + 1, b.1 + e.bytes as u64);
        if !f.listed {
            f.listed = true;
            f.deficit = FQ_QUANTUM;
            self.tins[sta].new.push_back(idx as u32);
        }
        let mut dropped = 0;
        while self.packets > FQ_LIMIT {
            // The longest flow (by bytes) loses its head (fq_impl.h: fq_find_fattest_flow).
            let fat = (0..self.flows.len()).max_by_key(|&i| self.flows[i].q.bytes()).unwrap();
            let d = self.flows[fat].q.pop().expect("the longest flow holds packets");
            self.packets -= 1;
            if let Some(t) = self.flows[fat].tin {
                let b = &mut self.tin_backlog[t as usize];
                *b = (b.0 - 1, b.1 - d.bytes as u64);
            }
            cx.dropped(d.id, DropReason::Overflow);
            dropped += 1;
        }
        dropped
    }

    /// The flow queues (4096 shared, then one default flow per tin).
    #[cold]
    fn alloc_flows(&mut self) {
        let flow = || Flow {
            q: Fifo::unlimited(),
            codel: CodelState::new(),
            deficit: 0,
            tin: None,
            listed: false,
        };
        self.flows = (0..FQ_FLOWS + self.tins.len()).map(|_| flow()).collect();
    }

    pub fn has(&self, sta: usize) -> bool {
        let t = &self.tins[sta];
        !(t.new.is_empty() && t.old.is_empty())
    }

    /// The next packet for station `sta` (fq_codel's dequeue within one TID); CoDel's drops
    /// are counted in the return's second part.
    pub fn pop(&mut self, sta: usize, now: SimTime, cx: &mut dyn LinkCx) -> (Option<Mpdu>, u64) {
        let mut dropped = 0;
        loop {
            let tin = &mut self.tins[sta];
            let (idx, from_new) = match (tin.new.front(), tin.old.front()) {
                (Some(&i), _) => (i as usize, true),
                (None, Some(&i)) => (i as usize, false),
                (None, None) => return (None, dropped),
            };
            let f = &mut self.flows[idx];
            if f.deficit <= 0 {
                f.deficit += FQ_QUANTUM;
                if from_new {
                    tin.new.pop_front();
                } else {
                    tin.old.pop_front();
                }
                tin.old.push_back(idx as u32);
                continue;
            }
            let before = f.q.len();
            let got = f.codel.dequeue(&mut f.q, 0, now, &self.params[sta], &mut self.drops);
            let left = before - f.q.len();
            self.packets -= left as u32;
            let b = &mut self.tin_backlog[sta];
            b.0 -= left as u64;
            for (d, r) in self.drops.drain(..) {
                b.1 -= d.bytes as u64;
                cx.dropped(d.id, r);
                dropped += 1;
            }
            match got {
                Some(d) => {
                    b.1 -= d.entry.bytes as u64;
                    f.deficit -= d.entry.bytes as i64;
                    if d.mark {
                        cx.mark_ce(d.entry.id);
                    }
                    if self.counting {
                        self.sojourn.record(now.since(d.entry.enqueued_at).0);
                    }
                    return (Some(Mpdu { e: d.entry, since: now, tries: 0 }), dropped);
                }
                None => {
                    if from_new {
                        tin.new.pop_front();
                    } else {
                        tin.old.pop_front();
                    }
                    if from_new && !tin.old.is_empty() {
                        tin.old.push_back(idx as u32);
                    } else {
                        f.listed = false;
                        f.tin = None;
                    }
                }
            }
        }
    }

    pub fn packets(&self) -> u64 {
        self.packets as u64
    }

    #[allow(dead_code)]
    pub fn ids(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.flows.iter().flat_map(|f| f.q.iter().map(|e| e.id))
    }
}
