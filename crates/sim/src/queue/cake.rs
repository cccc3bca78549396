//! CAKE (Høiland-Jørgensen, Täht & Morton 2018; `tc cake`), the parts that shape behaviour:
//!
//! - **Shaper** (`bandwidth`): a deficit-mode shaper — a packet may leave once the previous
//!   one's time at the set rate has passed (`time_next = max(time_next, now) + len/rate`),
//!   with `len = max(wire bytes + overhead, mpu)`. When the shaper holds a packet back the
//!   queue reports [`QueueDisc::ready_at`] and the link retries then.
//! - **Tins**: `besteffort` (one) or `diffserv4` (Bulk: CS1, LE; Best Effort; Video: AF2x–AF4x,
//!   CS2, CS3; Voice: CS4–CS7, EF, VA) with CAKE's shares of the rate (1/16, 1, 1/2, 1/4).
//!   Each tin has its own shaper at its share; the highest-priority backlogged tin within its
//!   share goes first, and when every backlogged tin is over its share the one whose share
//!   frees up earliest goes (so a tin may use idle capacity, as in CAKE).
//! - **Flows**: 1024 queues per tin, 8-way set-associative: a flow takes the way of its set
//!   that already holds its hash or a free one; only when all eight are busy with other flows
//!   does it share (a collision). DRR over new/old lists as FQ-CoDel.
//! - **Isolation**: `flowblind` (one queue per tin), `srchost` / `dsthost` / `hosts` (a queue
//!   per source host / destination host / host pair), `flows` (per 5-tuple), `dual-srchost`,
//!   `dual-dsthost`, `triple-isolate` (per 5-tuple, and a flow's quantum divided by the number
//!   of active flows of its source host, destination host, or the larger of the two).
//! - **COBALT** per queue: CoDel (the same [`CodelState`], ECN on) plus BLUE: a queue that
//!   suffers an overflow drop raises its drop probability by 1/256, an emptied queue lowers it
//!   by 1/4096 (each at most once per `target`), and packets are dropped at dequeue with it.
//! - **Overflow**: above `limit`, the head packet of the fattest queue is dropped.
//! - **ACK filter** (`ack-filter`): an arriving plain pure ACK replaces the newest older plain
//!   pure ACK of the same 5-tuple still queued (which it makes redundant).

use super::codel::{CodelParams, CodelState};
use super::flowkey::{bucket, hash_key, FlowKey};
use super::fq_codel::List;
use super::{
    Backlog, BuildCx, Dequeued, DropReason, Fifo, QEntry, QueueBuild, QueueDisc, QueueEntry,
    Verdict,
};
use crate::engine::SimRng;
use crate::params::err;
use crate::params::{dscp_by_name, positive_duration};
use crate::queue::QueueLimit;
use crate::units::{Dur, Rate, SimTime};
use crate::wire::MTU_BYTES;
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    FlowBlind,
    SrcHost,
    DstHost,
    Hosts,
    Flows,
    DualSrcHost,
    DualDstHost,
    TripleIsolate,
}

const ISOLATIONS: &[&str] = &[
    "flowblind",
    "srchost",
    "dsthost",
    "hosts",
    "flows",
    "dual-srchost",
    "dual-dsthost",
    "triple-isolate",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Diffserv {
    BestEffort,
    Diffserv4,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CakeParams {
    /// Shaper rate; None: unlimited (the link's rate sets the tins' shares).
    pub bandwidth: Option<Rate>,
    /// Bytes added to every packet's wire size for the shaper (may be negative).
    pub overhead: i32,
    /// Minimum packet size the shaper counts.
    pub mpu: u32,
    pub isolation: Isolation,
    pub diffserv: Diffserv,
    pub ack_filter: bool,
    pub target: Dur,
    /// CoDel's interval (`rtt` in tc).
    pub rtt: Dur,
}

pub const DEF: QueueEntry = QueueEntry {
    name: "cake",
    doc: "CAKE (Høiland-Jørgensen et al. 2018): shaper, flow/host isolation, diffserv tins",
    keys: &["bandwidth", "overhead", "mpu", "isolation", "diffserv", "ack-filter", "target", "rtt"],
    // tc-cake(8) defaults: unlimited, no overhead, triple-isolate, diffserv3 (we offer
    // besteffort and diffserv4; besteffort is the default), no ACK filter, rtt 100 ms,
    // target 5 ms; memory limit 4 MB when no bandwidth is given.
    extra: QueueLimit::Bytes(4 << 20),
    parse: |t, _| {
        let bandwidth = t.opt_rate("bandwidth")?;
        let overhead = t.opt_int("overhead", -64, 256)?.unwrap_or(0) as i32;
        let mpu = t.opt_int("mpu", 0, 256)?.unwrap_or(0) as u32;
        let isolation = match t
            .opt_choice("isolation", "isolation mode", ISOLATIONS)?
            .unwrap_or("triple-isolate")
        {
            "flowblind" => Isolation::FlowBlind,
            "srchost" => Isolation::SrcHost,
            "dsthost" => Isolation::DstHost,
            "hosts" => Isolation::Hosts,
            "flows" => Isolation::Flows,
            "dual-srchost" => Isolation::DualSrcHost,
            "dual-dsthost" => Isolation::DualDstHost,
            _ => Isolation::TripleIsolate,
        };
        let diffserv = match t
            .opt_choice("diffserv", "tin mode", &["besteffort", "diffserv4"])?
            .unwrap_or("besteffort")
        {
            "diffserv4" => Diffserv::Diffserv4,
            _ => Diffserv::BestEffort,
        };
        let ack_filter = t.opt_bool("ack-filter")?.unwrap_or(false);
        let target = positive_duration(t, "target", Dur::from_millis(5))?;
        let rtt = positive_duration(t, "rtt", Dur::from_millis(100))?;
        if target >= rtt {
            return err(
                &t.key_path("target"),
                format!("must be below rtt ({} ms)", rtt.0 as f64 / 1e6),
            );
        }
        Ok(super::share(CakeParams {
            bandwidth,
            overhead,
            mpu,
            isolation,
            diffserv,
            ack_filter,
            target,
            rtt,
        }))
    },
};

impl QueueBuild for CakeParams {
    fn build(&self, mut cx: BuildCx) -> Box<dyn QueueDisc> {
        let key = hash_key(&mut cx.rng);
        Box::new(Cake::new(cx.limit, *self, cx.rate, key, cx.rng))
    }
}

const QUEUES: usize = 1024;
const WAYS: usize = 8;
const HOSTS: usize = 1024;
/// The DRR quantum per flow before host scaling (one Ethernet MTU, as CAKE).
const QUANTUM: i64 = 1514;
const BLUE_INC: f64 = 1.0 / 256.0;
const BLUE_DEC: f64 = 1.0 / 4096.0;

struct Flow {
    q: Fifo,
    deficit: i64,
    cv: CodelState,
    list: List,
    tag: u64,
    src_host: u16,
    dst_host: u16,
    blue: f64,
    blue_timer: SimTime,
}

struct Tin {
    flows: Vec<Flow>,
    new_flows: VecDeque<u16>,
    old_flows: VecDeque<u16>,
    /// Active flows per source / destination host bucket.
    src_load: Vec<u32>,
    dst_load: Vec<u32>,
    /// The tin's own shaper, at its share of the rate (bit/s).
    bps: u64,
    time_next: SimTime,
    bytes: u64,
}

pub struct Cake {
    tins: Vec<Tin>,
    limit: QueueLimit,
    p: CakeParams,
    codel: CodelParams,
    hash_key: u64,
    rng: SimRng,
    /// The main shaper's rate, bit/s (None: unlimited).
    bps: Option<u64>,
    time_next: SimTime,
    bytes: u64,
    pkts: u64,
}

/// diffserv4's tin of a DSCP: 0 Bulk, 1 Best Effort, 2 Video, 3 Voice.
pub fn diffserv4_tin(dscp: u8) -> usize {
    let n = |s| dscp_by_name(s).unwrap_or(0);
    match dscp {
        d if d == n("CS1") || d == n("LE") => 0,
        d if d == n("EF") || d == n("VA") || d >= n("CS4") && d % 8 == 0 => 3,
        d if (16..=38).contains(&d) && (d % 8 == 0 || d % 2 == 0) => 2,
        _ => 1,
    }
}

/// The time `len` bytes take at `bps`, rounded up (a shaper never exceeds its rate).
#[inline]
fn tx_ns(len: u64, bps: u64) -> u64 {
    (len as u128 * 8_000_000_000).div_ceil(bps.max(1) as u128) as u64
}

impl Cake {
    pub fn new(
        limit: QueueLimit,
        p: CakeParams,
        link_rate: Rate,
        hash_key: u64,
        rng: SimRng,
    ) -> Cake {
        let base = p.bandwidth.unwrap_or(link_rate);
        // Tin shares in priority order low → high; dequeue scans from the highest.
        let shares: &[f64] = match p.diffserv {
            Diffserv::BestEffort => &[1.0],
            Diffserv::Diffserv4 => &[1.0 / 16.0, 1.0, 0.5, 0.25],
        };
        let tins = shares
            .iter()
            .map(|s| Tin {
                flows: (0..QUEUES)
                    .map(|_| Flow {
                        q: Fifo::unlimited(),
                        deficit: 0,
                        cv: CodelState::new(),
                        list: List::None,
                        tag: 0,
                        src_host: 0,
                        dst_host: 0,
                        blue: 0.0,
                        blue_timer: SimTime::ZERO,
                    })
                    .collect(),
                new_flows: VecDeque::with_capacity(QUEUES),
                old_flows: VecDeque::with_capacity(QUEUES),
                src_load: vec![0; HOSTS],
                dst_load: vec![0; HOSTS],
                bps: ((base.0 as f64 * s) as u64).max(1),
                time_next: SimTime::ZERO,
                bytes: 0,
            })
            .collect();
        Cake {
            tins,
            limit,
            codel: CodelParams { target: p.target, interval: p.rtt, ecn: true },
            p,
            hash_key,
            rng,
            bps: p.bandwidth.map(|r| r.0),
            time_next: SimTime::ZERO,
            bytes: 0,
            pkts: 0,
        }
    }

    /// The size the shaper charges for a packet.
    #[inline]
    pub fn shaped_len(&self, bytes: u32) -> u64 {
        ((bytes as i64 + self.p.overhead as i64).max(self.p.mpu as i64).max(1)) as u64
    }

    fn tin_of(&self, e: &QEntry) -> usize {
        match self.p.diffserv {
            Diffserv::BestEffort => 0,
            Diffserv::Diffserv4 => diffserv4_tin(e.dscp),
        }
    }

    /// The hash a packet's queue is chosen by, under the isolation mode.
    fn flow_hash(&self, k: &FlowKey) -> u64 {
        let h = |src, dst| FlowKey { src, dst, sport: 0, dport: 0, proto: 0 }.hash(self.hash_key);
        match self.p.isolation {
            Isolation::FlowBlind => 0,
            Isolation::SrcHost => h(k.src, 0),
            Isolation::DstHost => h(0, k.dst),
            Isolation::Hosts => h(k.src, k.dst),
            _ => k.hash(self.hash_key),
        }
    }

    /// 8-way set-associative lookup: the way holding this hash, else a free way, else (a
    /// collision) the way the hash points at.
    fn queue_of(tin: &Tin, hash: u64) -> usize {
        let set = bucket(hash, (QUEUES / WAYS) as u32) as usize * WAYS;
        let ways = set..set + WAYS;
        let busy = |f: &Flow| f.list != List::None || !f.q.is_empty();
        if let Some(i) = ways.clone().find(|&i| busy(&tin.flows[i]) && tin.flows[i].tag == hash) {
            return i;
        }
        if let Some(i) = ways.clone().find(|&i| !busy(&tin.flows[i])) {
            return i;
        }
        set + (hash % WAYS as u64) as usize
    }

    fn host_bucket(&self, addr: u32) -> u16 {
        bucket(FlowKey::host_hash(addr, self.hash_key), HOSTS as u32) as u16
    }

    /// The quantum of a flow: CAKE's host fairness divides it by its hosts' active flows.
    fn quantum(&self, tin: &Tin, f: &Flow) -> i64 {
        let (s, d) = (
            tin.src_load[f.src_host as usize].max(1) as i64,
            tin.dst_load[f.dst_host as usize].max(1) as i64,
        );
        let load = match self.p.isolation {
            Isolation::DualSrcHost => s,
            Isolation::DualDstHost => d,
            Isolation::TripleIsolate => s.max(d),
            _ => 1,
        };
        (QUANTUM / load).max(1)
    }

    fn over_limit(&self) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => self.pkts > n,
            QueueLimit::Bytes(b) => self.bytes > b,
        }
    }

    fn remove_accounting(&mut self, tin: usize, bytes: u32) {
        self.bytes -= bytes as u64;
        self.pkts -= 1;
        self.tins[tin].bytes -= bytes as u64;
    }

    /// Drops the head of the fattest queue (any tin), raising its BLUE probability.
    fn drop_fattest(&mut self, now: SimTime, dropped: &mut Vec<(QEntry, DropReason)>) {
        let mut best = (0, 0, 0u64);
        for (t, tin) in self.tins.iter().enumerate() {
            for (i, f) in tin.flows.iter().enumerate() {
                if f.q.bytes() > best.2 {
                    best = (t, i, f.q.bytes());
                }
            }
        }
        let (t, i, _) = best;
        let target = self.p.target;
        let f = &mut self.tins[t].flows[i];
        if let Some(e) = f.q.pop() {
            if now.since(f.blue_timer) > target {
                f.blue = (f.blue + BLUE_INC).min(1.0);
                f.blue_timer = now;
            }
            dropped.push((e, DropReason::Overflow));
            self.remove_accounting(t, e.bytes);
        }
    }

    /// The ACK filter: the newest older plain pure ACK of the same 5-tuple in queue `i`.
    fn filter_ack(
        &mut self,
        t: usize,
        i: usize,
        e: &QEntry,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) {
        let Some(new) = e.ack.filter(|a| a.plain()) else { return };
        let f = &self.tins[t].flows[i];
        let hit = f.q.iter().enumerate().rev().find(|(_, o)| {
            o.key == e.key && o.ack.is_some_and(|a| a.plain() && a.ack() <= new.ack())
        });
        if let Some((k, _)) = hit {
            let old = self.tins[t].flows[i].q.remove(k).expect("found above");
            dropped.push((old, DropReason::Early));
            self.remove_accounting(t, old.bytes);
        }
    }

    /// A queue leaves the lists: its hosts have one active flow less.
    fn deactivate(&mut self, t: usize, i: usize) {
        let tin = &mut self.tins[t];
        let f = &mut tin.flows[i];
        f.list = List::None;
        tin.src_load[f.src_host as usize] -= 1;
        tin.dst_load[f.dst_host as usize] -= 1;
    }

    /// The tin to serve: the highest-priority backlogged one within its share, else the one
    /// whose share frees up first.
    fn pick_tin(&self, now: SimTime) -> Option<usize> {
        let mut earliest: Option<(SimTime, usize)> = None;
        for (t, tin) in self.tins.iter().enumerate().rev() {
            if tin.new_flows.is_empty() && tin.old_flows.is_empty() {
                continue;
            }
            if tin.time_next <= now {
                return Some(t);
            }
            if earliest.is_none_or(|(at, _)| tin.time_next < at) {
                earliest = Some((tin.time_next, t));
            }
        }
        earliest.map(|(_, t)| t)
    }
}

impl QueueDisc for Cake {
    fn name(&self) -> &'static str {
        "cake"
    }

    fn enqueue(
        &mut self,
        e: QEntry,
        now: SimTime,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Verdict {
        let t = self.tin_of(&e);
        let hash = self.flow_hash(&e.key);
        let i = Self::queue_of(&self.tins[t], hash);
        if self.p.ack_filter {
            self.filter_ack(t, i, &e, dropped);
        }
        let (sh, dh) = (self.host_bucket(e.key.src), self.host_bucket(e.key.dst));
        let tin = &mut self.tins[t];
        let f = &mut tin.flows[i];
        f.q.push(e);
        f.tag = hash;
        if f.list == List::None {
            f.list = List::New;
            f.src_host = sh;
            f.dst_host = dh;
            tin.src_load[sh as usize] += 1;
            tin.dst_load[dh as usize] += 1;
            tin.new_flows.push_back(i as u16);
            let q = {
                let tin = &self.tins[t];
                self.quantum(tin, &tin.flows[i])
            };
            self.tins[t].flows[i].deficit = q;
        }
        self.tins[t].bytes += e.bytes as u64;
        self.bytes += e.bytes as u64;
        self.pkts += 1;
        let from = dropped.len();
        while self.over_limit() {
            self.drop_fattest(now, dropped);
        }
        if let Some(k) = dropped[from..].iter().position(|(d, _)| d.id == e.id) {
            dropped.remove(from + k);
            return Verdict::Dropped(DropReason::Overflow);
        }
        Verdict::Queued
    }

    fn dequeue(
        &mut self,
        now: SimTime,
        dropped: &mut Vec<(QEntry, DropReason)>,
    ) -> Option<Dequeued> {
        if self.bps.is_some() && now < self.time_next && self.pkts > 0 {
            return None; // the shaper holds it: ready_at() says when
        }
        loop {
            let t = self.pick_tin(now)?;
            let (i, from_new) = {
                let tin = &self.tins[t];
                match tin.new_flows.front() {
                    Some(&i) => (i as usize, true),
                    None => (*tin.old_flows.front().expect("picked tin has flows") as usize, false),
                }
            };
            if self.tins[t].flows[i].deficit <= 0 {
                let q = self.quantum(&self.tins[t], &self.tins[t].flows[i]);
                let tin = &mut self.tins[t];
                tin.flows[i].deficit += q;
                tin.flows[i].list = List::Old;
                if from_new {
                    tin.new_flows.pop_front();
                } else {
                    tin.old_flows.pop_front();
                }
                tin.old_flows.push_back(i as u16);
                continue;
            }
            // BLUE first, then CoDel (COBALT).
            let blue = self.tins[t].flows[i].blue;
            if blue > 0.0 && !self.tins[t].flows[i].q.is_empty() && self.rng.chance(blue) {
                let e = self.tins[t].flows[i].q.pop().expect("non-empty");
                dropped.push((e, DropReason::AqmDequeue));
                self.remove_accounting(t, e.bytes);
                continue;
            }
            let others = self.bytes - self.tins[t].flows[i].q.bytes();
            let before = dropped.len();
            let codel = self.codel;
            let out = {
                let f = &mut self.tins[t].flows[i];
                f.cv.dequeue(&mut f.q, others, now, &codel, dropped)
            };
            for d in &dropped[before..] {
                let b = d.0.bytes;
                self.remove_accounting(t, b);
            }
            let Some(out) = out else {
                let target = self.p.target;
                let f = &mut self.tins[t].flows[i];
                if f.blue > 0.0 && now.since(f.blue_timer) > target {
                    f.blue = (f.blue - BLUE_DEC).max(0.0);
                    f.blue_timer = now;
                }
                let tin = &mut self.tins[t];
                if from_new {
                    tin.new_flows.pop_front();
                    if !tin.old_flows.is_empty() {
                        tin.flows[i].list = List::Old;
                        tin.old_flows.push_back(i as u16);
                        continue;
                    }
                } else {
                    tin.old_flows.pop_front();
                }
                self.deactivate(t, i);
                continue;
            };
            let len = self.shaped_len(out.entry.bytes);
            self.remove_accounting(t, out.entry.bytes);
            let tin = &mut self.tins[t];
            tin.flows[i].deficit -= len as i64;
            tin.time_next = SimTime(tin.time_next.0.max(now.0) + tx_ns(len, tin.bps));
            if let Some(r) = self.bps {
                self.time_next = SimTime(self.time_next.0.max(now.0) + tx_ns(len, r));
            }
            return Some(out);
        }
    }

    fn ready_at(&self) -> Option<SimTime> {
        (self.bps.is_some() && self.pkts > 0).then_some(self.time_next)
    }

    fn backlog(&self) -> Backlog {
        Backlog { bytes: self.bytes, pkts: self.pkts }
    }

    fn capacity_bytes(&self) -> u64 {
        match self.limit {
            QueueLimit::Packets(n) => n * MTU_BYTES,
            QueueLimit::Bytes(b) => b,
        }
    }

    /// Active queues over all tins.
    fn internal_state(&self) -> f64 {
        self.tins.iter().map(|t| t.new_flows.len() + t.old_flows.len()).sum::<usize>() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::entry;
    use super::*;
    use crate::engine::Stream;
    use crate::wire::Ecn;

    fn params() -> CakeParams {
        CakeParams {
            bandwidth: None,
            overhead: 0,
            mpu: 0,
            isolation: Isolation::TripleIsolate,
            diffserv: Diffserv::BestEffort,
            ack_filter: false,
            target: Dur::from_millis(5),
            rtt: Dur::from_millis(100),
        }
    }

    fn cake(p: CakeParams) -> Cake {
        Cake::new(
            QueueLimit::Bytes(4 << 20),
            p,
            Rate(100_000_000),
            7,
            SimRng::new(1, Stream::Queue, 0),
        )
    }

    fn pkt(i: u32, src: u32, sport: u16, bytes: u32) -> QEntry {
        let mut e = entry(i, bytes, SimTime(0), Ecn::NotEct);
        e.key = FlowKey { src, dst: 1000 + sport as u32, sport, dport: 5001, proto: 6 };
        e
    }

    #[test]
    fn diffserv4_tins() {
        let n = |s| dscp_by_name(s).unwrap();
        for (d, tin) in [
            ("CS1", 0),
            ("LE", 0),
            ("BE", 1),
            ("AF11", 1),
            ("AF21", 2),
            ("AF41", 2),
            ("CS3", 2),
            ("EF", 3),
            ("VA", 3),
            ("CS6", 3),
            ("CS4", 3),
        ] {
            assert_eq!(diffserv4_tin(n(d)), tin, "{d}");
        }
    }

    #[test]
    fn set_associative_hashing_avoids_collisions_within_a_set() {
        let mut c = cake(params());
        let mut d = Vec::new();
        // 8 flows whose hashes fall in the same set still get 8 distinct queues.
        let set_of = |c: &Cake, k: &FlowKey| bucket(c.flow_hash(k), (QUEUES / WAYS) as u32);
        let first = pkt(0, 1, 0, 100).key;
        let same: Vec<u16> = (0..u16::MAX)
            .filter(|&p| set_of(&c, &FlowKey { sport: p, ..first }) == set_of(&c, &first))
            .take(8)
            .collect();
        for (i, &p) in same.iter().enumerate() {
            c.enqueue(pkt(i as u32, 1, p, 100), SimTime(0), &mut d);
        }
        let busy = c.tins[0].flows.iter().filter(|f| !f.q.is_empty()).count();
        assert_eq!(busy, 8);
    }

    #[test]
    fn triple_isolate_divides_the_quantum_by_host_load() {
        let mut c = cake(params());
        let mut d = Vec::new();
        c.enqueue(pkt(0, 1, 1, 1500), SimTime(0), &mut d);
        for f in 0..4 {
            c.enqueue(pkt(10 + f, 2, 100 + f as u16, 1500), SimTime(0), &mut d);
        }
        let tin = &c.tins[0];
        let q = |src, sport| {
            let i = Cake::queue_of(tin, c.flow_hash(&pkt(0, src, sport, 1).key));
            c.quantum(tin, &tin.flows[i])
        };
        assert_eq!(q(1, 1), QUANTUM);
        assert_eq!(q(2, 100), QUANTUM / 4);
    }

    #[test]
    fn ack_filter_drops_the_older_redundant_ack() {
        let mut c = cake(CakeParams { ack_filter: true, ..params() });
        let mut d = Vec::new();
        let ack = |i, n, plain| {
            let mut e = pkt(i, 1, 1, 52);
            e.ack = Some(super::super::PureAck::new(n, plain));
            e
        };
        c.enqueue(ack(0, 1000, true), SimTime(0), &mut d);
        c.enqueue(ack(1, 2000, true), SimTime(0), &mut d);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].0.id.0, 0);
        // A SACK-carrying ACK is kept, and does not replace others.
        c.enqueue(ack(2, 3000, false), SimTime(0), &mut d);
        assert_eq!(d.len(), 1);
        assert_eq!(c.backlog().pkts, 2);
    }

    #[test]
    fn shaper_paces_and_reports_when_ready() {
        let mut c = cake(CakeParams { bandwidth: Some(Rate(12_000_000)), overhead: 0, ..params() });
        let mut d = Vec::new();
        c.enqueue(pkt(0, 1, 1, 1500), SimTime(0), &mut d);
        c.enqueue(pkt(1, 1, 1, 1500), SimTime(0), &mut d);
        assert!(c.dequeue(SimTime(0), &mut d).is_some());
        // 1500 B at 12 Mbit/s = 1 ms.
        assert!(c.dequeue(SimTime(999_999), &mut d).is_none());
        assert_eq!(c.ready_at(), Some(SimTime(1_000_000)));
        assert!(c.dequeue(SimTime(1_000_000), &mut d).is_some());
        assert_eq!(c.shaped_len(40), 40);
        let m = cake(CakeParams { overhead: -10, mpu: 64, ..params() });
        assert_eq!(m.shaped_len(40), 64);
        assert_eq!(m.shaped_len(1500), 1490);
    }
}
