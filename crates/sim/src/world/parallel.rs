//! The parallel engine: one world per partition (world/partition.rs says who owns what), each
//! on its own thread, advancing in windows no longer than the lookahead. Within a window a
//! partition runs its own events alone; a packet that propagates over a cut link goes into a
//! mailbox with its arrival's key, and is delivered to the partition at the link's far end at
//! the barrier that ends the window — always after that partition's present (it arrives at
//! least one lookahead after it left), which `ingest` checks and aborts on if not.
//!
//! Every world is built whole from the scenario (the same ids, routes and random streams
//! everywhere) and runs only what it owns: events are keyed by their actor
//! (engine/queue.rs), so the order of simultaneous events is the same whether one world runs
//! them all or several share them, and the results are byte for byte those of one thread.
//!
//! The run's own events (samples, the warm-up's end) read and reset state all over the
//! network. The driver runs them between windows, at their time, on world 0 after swapping
//! every partition's endpoints and links into it (and back after); flow packet counters are
//! sums, added into world 0. At the end the same swap gathers everything in world 0, which
//! checks conservation and measures as a serial run does.

use super::partition::Plan;
use super::{FlowPkts, Outcome, World};
use crate::app;
use crate::config::Scenario;
use crate::engine::{Event, EventQueue};
use crate::ids::{LinkId, PacketId};
use crate::net::{Packet, PacketPool};
use crate::units::SimTime;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// Event lanes a partition keeps for the arrivals handed to it (engine/queue.rs).
const INBOX_LANES: usize = 4;

/// A packet crossing the cut: its arrival's key, when it was launched, the link it
/// propagates on, the packet.
pub(super) struct Cross {
    key: u128,
    sent: SimTime,
    link: LinkId,
    pkt: Packet,
}

/// A world's share of a parallel run.
pub(super) struct Part {
    me: u16,
    /// Per link: the partition its packets reach.
    link_dst: Vec<u16>,
    /// Per partition: the packets that crossed to it this window, and their earliest arrival.
    out: Vec<Vec<Cross>>,
    out_min: Vec<u64>,
    /// Per partition: the packets that crossed from it, to take in before the next window, and
    /// the earliest arrival among all of them.
    inbox: Vec<Vec<Cross>>,
    in_min: u64,
    /// Every event up to this time has run here.
    done: SimTime,
    /// Packets this partition handed to others, and the time its thread spent running its
    /// windows (for the progress report).
    crossed: u64,
    busy: std::time::Duration,
}

impl World {
    /// Makes this world partition `me` of `plan`: it keeps the flow starts of the flows whose
    /// client it owns, and sets what the servers it owns expect (a serial run sets it when the
    /// flow starts, on the client's side).
    fn enter_partition(&mut self, me: u16, plan: &Plan) {
        let n = plan.parts;
        let link_dst = (0..self.links.len()).map(|l| plan.link_parts(l).1).collect();
        let owner = |w: &World, s: usize| plan.link_parts(w.routes[s].path.links[0].idx()).0;
        let mut keep = vec![false; self.flows.len()];
        for (f, fl) in self.flows.iter().enumerate() {
            keep[f] = owner(self, fl.client.idx()) == me;
        }
        self.events.retain(|ev| match ev {
            Event::FlowStart(f) => keep[f.idx()],
            _ => me == 0,
        });
        for f in 0..self.flows.len() {
            let fl = &self.flows[f];
            if owner(self, fl.server.idx()) == me {
                let (_, expect) = app::initial_write(fl.app, fl.size);
                match &mut self.eps[fl.server.idx()] {
                    super::Endpoint::Tcp(s) => s.expect = expect,
                    super::Endpoint::Udp(s) => s.expect = expect,
                    super::Endpoint::Dccp(_) => {}
                }
            }
        }
        self.events.add_inbox_lanes(INBOX_LANES);
        self.part = Some(Box::new(Part {
            me,
            link_dst,
            out: (0..n).map(|_| Vec::new()).collect(),
            out_min: vec![u64::MAX; n],
            inbox: (0..n).map(|_| Vec::new()).collect(),
            in_min: u64::MAX,
            done: SimTime::ZERO,
            crossed: 0,
            busy: std::time::Duration::ZERO,
        }));
    }

    /// A packet launched on link `l` at the current event, arriving at `at`: if the link's far
    /// end is another partition's, it goes to that partition's mailbox (true).
    #[inline]
    pub(super) fn crosses(&mut self, l: LinkId, at: SimTime, pid: PacketId) -> bool {
        let Some(part) = self.part.as_deref_mut() else { return false };
        let to = part.link_dst[l.idx()] as usize;
        if to == part.me as usize {
            return false;
        }
        let key = self.events.next_key(at, &Event::LinkArrive(l, pid));
        let pkt = *self.pool.get(pid);
        self.pool.free(pid);
        self.links[l.idx()].cross_out();
        part.out[to].push(Cross { key, sent: self.now, link: l, pkt });
        part.crossed += 1;
        part.out_min[to] = part.out_min[to].min(at.0);
        true
    }

    /// Takes in the packets other partitions sent here, as arrivals at their keys.
    fn ingest(&mut self) {
        let Some(part) = self.part.as_deref_mut() else { return };
        for from in 0..part.inbox.len() {
            for c in part.inbox[from].drain(..) {
                let at = (c.key >> 64) as u64;
                assert!(
                    at > part.done.0,
                    "parallel engine: partition {} received an arrival at {} ns on link {} from \
                     partition {from}, in its past (it has run every event up to {} ns)",
                    part.me,
                    at,
                    c.link.0,
                    part.done.0
                );
                let pid = self.pool.alloc(c.pkt);
                self.links[c.link.idx()].cross_in();
                self.events.schedule_key_ahead(c.sent, c.key, Event::LinkArrive(c.link, pid));
            }
        }
        part.in_min = u64::MAX;
    }

    /// The time of this partition's next event, counting the packets in its inbox.
    fn next_time(&self) -> u64 {
        let queued = self.events.peek_time().map_or(u64::MAX, |t| t.0);
        queued.min(self.part.as_ref().map_or(u64::MAX, |p| p.in_min))
    }

    /// Runs every event of this partition up to `until` (inclusive).
    fn run_window(&mut self, until: SimTime) {
        while let Some((t, ev)) = self.events.pop_until(until) {
            self.now = t;
            self.prefetch_ahead();
            self.dispatch(ev);
        }
        if let Some(p) = self.part.as_deref_mut() {
            p.done = until;
        }
    }

    /// Finishes this partition's pcap files; the first error is kept.
    fn finish_captures(&mut self) {
        for w in self.captures.iter_mut().filter_map(Option::take) {
            if let Err(e) = w.finish() {
                self.capture_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

/// What each partition other than 0 owns: its endpoints and links (swapped into world 0 for
/// the run's own events and at the end).
struct Owned {
    eps: Vec<Vec<u32>>,
    links: Vec<Vec<u32>>,
    /// Cut links: (link, owner, far end).
    cut: Vec<(u32, u16, u16)>,
}

impl Owned {
    fn of(w: &World, plan: &Plan) -> Owned {
        let n = plan.parts;
        let mut o = Owned { eps: vec![Vec::new(); n], links: vec![Vec::new(); n], cut: Vec::new() };
        for l in 0..w.links.len() {
            let (own, far) = plan.link_parts(l);
            o.links[own as usize].push(l as u32);
            if own != far {
                o.cut.push((l as u32, own, far));
            }
        }
        for s in 0..w.eps.len() {
            let own = plan.link_parts(w.routes[s].path.links[0].idx()).0;
            o.eps[own as usize].push(s as u32);
        }
        o
    }

    /// Swaps what partitions 1.. own with world 0's copies (twice: back as it was).
    fn swap(&self, gs: &mut [MutexGuard<World>]) {
        let (first, rest) = gs.split_at_mut(1);
        let w0 = &mut *first[0];
        for (p, wp) in rest.iter_mut().enumerate() {
            for &s in &self.eps[p + 1] {
                std::mem::swap(&mut w0.eps[s as usize], &mut wp.eps[s as usize]);
            }
            for &l in &self.links[p + 1] {
                std::mem::swap(&mut w0.links[l as usize], &mut wp.links[l as usize]);
            }
        }
    }
}

/// Adds every partition's flow packet counters into world 0's (they are sums).
fn fold_pkts(gs: &mut [MutexGuard<World>]) {
    let (first, rest) = gs.split_at_mut(1);
    for wp in rest.iter_mut() {
        for (a, b) in first[0].pkts.iter_mut().zip(wp.pkts.iter_mut()) {
            a.sent += b.sent;
            a.delivered += b.delivered;
            a.dropped += b.dropped;
            a.w_data_drops += b.w_data_drops;
            *b = FlowPkts::default();
        }
    }
}

/// Moves the mail of the window: each partition's outbox for another becomes that one's inbox.
fn exchange(gs: &mut [MutexGuard<World>]) {
    let n = gs.len();
    for a in 0..n {
        for b in 0..n {
            if a == b {
                continue;
            }
            let (lo, hi) = (a.min(b), a.max(b));
            let (x, y) = gs.split_at_mut(hi);
            let (wl, wh) = (&mut *x[lo], &mut *y[0]);
            let (src, dst) = if a < b { (wl, wh) } else { (wh, wl) };
            let (sp, dp) = (src.part.as_deref_mut().unwrap(), dst.part.as_deref_mut().unwrap());
            debug_assert!(dp.inbox[a].is_empty(), "an inbox is taken in every window");
            std::mem::swap(&mut sp.out[b], &mut dp.inbox[a]);
            dp.in_min = dp.in_min.min(sp.out_min[b]);
            sp.out_min[b] = u64::MAX;
        }
    }
}

/// Runs `sc` split as `plan` says (plan.parts > 1): what [`World::run`] returns for it, the
/// same bytes.
pub fn run_parallel(
    sc: &Scenario,
    seed: u64,
    capture_dir: Option<&std::path::Path>,
    series: bool,
    plan: &Plan,
    progress: Option<std::time::Duration>,
) -> Result<Outcome, String> {
    let setup = Instant::now();
    let n = plan.parts;
    assert!(n > 1, "a parallel run has partitions");
    // The worlds are built at once, one a thread (a large graph takes a good fraction of a
    // second each).
    let built: Vec<Result<World, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|p| {
                let dir = if p == 0 { capture_dir } else { None };
                s.spawn(move || World::new(sc, seed, dir, series && p == 0))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("building a partition's world")).collect()
    });
    let mut worlds = Vec::with_capacity(n);
    for w in built {
        worlds.push(w?);
    }
    let owned = Owned::of(&worlds[0], plan);
    // pcap writers go to the partition that owns their link.
    if !worlds[0].captures.is_empty() {
        let links = worlds[0].links.len();
        for p in 1..n {
            worlds[p].captures = (0..links).map(|_| None).collect();
            for &l in &owned.links[p] {
                worlds[p].captures[l as usize] = worlds[0].captures[l as usize].take();
            }
        }
    }
    for (p, w) in worlds.iter_mut().enumerate() {
        w.enter_partition(p as u16, plan);
    }
    let (end, interval) = (worlds[0].end, worlds[0].interval);
    let mut globals = EventQueue::new();
    if !worlds[0].counting {
        globals.schedule(worlds[0].warmup, Event::WarmupEnd);
    }
    if interval.0 > 0 {
        globals.schedule(SimTime::ZERO + interval, Event::Sample);
    }
    let setup_s = setup.elapsed().as_secs_f64();

    let wall = Instant::now();
    let worlds: Vec<Mutex<World>> = worlds.into_iter().map(Mutex::new).collect();
    // A panic in one partition (a bug: say, an arrival in a partition's past) must not leave
    // the others waiting at a barrier: every step runs under catch_unwind, the first panic's
    // message is kept, and everyone stops at the next barrier.
    let lock = |p: usize| worlds[p].lock().unwrap_or_else(|e| e.into_inner());
    let failed: Mutex<Option<String>> = Mutex::new(None);
    let guard = |f: &mut dyn FnMut()| {
        if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a partition's thread panicked".into());
            failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(msg);
        }
    };
    let barrier = SpinBarrier::new(n);
    let until = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let work = |p: usize| {
        guard(&mut || {
            let t = Instant::now();
            let mut w = lock(p);
            w.ingest();
            w.run_window(SimTime(until.load(Ordering::Acquire)));
            if let Some(part) = w.part.as_deref_mut() {
                part.busy += t.elapsed();
            }
        })
    };
    let mut windows = 0u64;
    let mut next_report = progress.map(|p| (p, wall + p));
    std::thread::scope(|s| {
        for p in 1..n {
            let (barrier, stop, work) = (&barrier, &stop, &work);
            s.spawn(move || loop {
                barrier.wait();
                if stop.load(Ordering::Acquire) {
                    break;
                }
                work(p);
                barrier.wait();
            });
        }
        loop {
            guard(&mut || {
                let mut gs: Vec<_> = (0..n).map(lock).collect();
                exchange(&mut gs);
                let next_part = |gs: &[MutexGuard<World>]| {
                    gs.iter().map(|w| w.next_time()).min().unwrap_or(u64::MAX)
                };
                // The run's own events due before any partition's next one run now (their
                // actor, 0, puts them first among events of their instant).
                while let Some(tg) = globals.peek_time().filter(|t| *t <= end) {
                    if tg.0 > next_part(&gs) {
                        break;
                    }
                    let (_, ev) = globals.pop().expect("peeked");
                    run_global(&mut gs, &owned, tg, ev, &mut globals);
                }
                let next = next_part(&gs);
                if next > end.0 {
                    stop.store(true, Ordering::Release);
                    return;
                }
                let mut last = next.saturating_add(plan.lookahead.0 - 1).min(end.0);
                if let Some(tg) = globals.peek_time() {
                    last = last.min(tg.0.saturating_sub(1).max(next));
                }
                until.store(last, Ordering::Release);
                windows += 1;
                if let Some((every, at)) = next_report.as_mut() {
                    let now = Instant::now();
                    if now >= *at {
                        *at = now + *every;
                        let events: u64 = gs.iter().map(|w| w.events.processed()).sum();
                        eprintln!(
                            "progress: simulated {:.6} of {:.6} s on {n} threads, {events} \
                             events, {windows} windows, wall {:.0} s",
                            SimTime(next).secs_f64(),
                            end.secs_f64(),
                            wall.elapsed().as_secs_f64()
                        );
                    }
                }
            });
            if failed.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
                stop.store(true, Ordering::Release);
            }
            barrier.wait();
            if stop.load(Ordering::Acquire) {
                break;
            }
            work(0);
            barrier.wait();
        }
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }

    let mut gs: Vec<_> = (0..n).map(lock).collect();
    let processed = globals.processed();
    for w in gs.iter_mut() {
        w.ingest();
        w.now = end;
        w.finish_captures();
    }
    let capture_error = gs.iter_mut().find_map(|w| w.capture_error.take());
    if let Some(e) = capture_error {
        return Err(format!("pcap capture failed: {e}"));
    }
    for &(l, own, far) in &owned.cut {
        let (own, far) = (own as usize, far as usize);
        let (lo, hi) = (own.min(far), own.max(far));
        let (x, y) = gs.split_at_mut(hi);
        let (a, b) = (&mut *x[lo], &mut *y[0]);
        let (o, f) = if own < far { (a, b) } else { (b, a) };
        o.links[l as usize].absorb_arrivals(&f.links[l as usize]);
    }
    fold_pkts(&mut gs);
    owned.swap(&mut gs);
    if progress.is_some() {
        // What the speed-up rests on (docs/performance.md): the balance and the window count.
        let per: Vec<u64> = gs.iter().map(|w| w.events.processed()).collect();
        let crossed: u64 = gs.iter().map(|w| w.part.as_ref().map_or(0, |p| p.crossed)).sum();
        let busy: Vec<String> = gs
            .iter()
            .map(|w| format!("{:.2}", w.part.as_ref().map_or(0.0, |p| p.busy.as_secs_f64())))
            .collect();
        eprintln!(
            "parallel: {n} partitions, lookahead {}, {windows} windows, events per partition \
             {per:?}, {crossed} packets crossed, busy s [{}] of {:.2} s",
            plan.lookahead,
            busy.join(", "),
            wall.elapsed().as_secs_f64()
        );
    }
    let others: u64 = gs[1..].iter().map(|w| w.events.processed()).sum();
    let pools: Vec<PacketPool> = gs[1..].iter_mut().map(|w| std::mem::take(&mut w.pool)).collect();
    let w0 = &mut *gs[0];
    w0.events_extra = others + processed;
    w0.close_windows();
    w0.check_conservation(&pools)?;
    let mut measure = w0.measure(wall.elapsed().as_secs_f64());
    measure.engine.setup_s = setup_s;
    Ok(Outcome { measure, series: w0.series.take() })
}

/// Runs one of the run's own events at `t` on world 0, with every partition's state in it.
fn run_global(
    gs: &mut [MutexGuard<World>],
    owned: &Owned,
    t: SimTime,
    ev: Event,
    globals: &mut EventQueue,
) {
    fold_pkts(gs);
    owned.swap(gs);
    let w0 = &mut *gs[0];
    w0.now = t;
    match ev {
        Event::Sample => {
            w0.sample();
            let next = t + w0.interval;
            if next <= w0.end {
                globals.schedule(next, Event::Sample);
            }
        }
        Event::WarmupEnd => w0.start_measuring(),
        _ => unreachable!("only samples and the warm-up's end are the run's own events"),
    }
    let counting = w0.counting;
    owned.swap(gs);
    for w in gs.iter_mut() {
        w.counting = counting;
    }
}

/// A barrier that spins: windows are microseconds of simulated time and often tens of
/// microseconds of work, and std's `Barrier` (a mutex and a condition variable: a futex wake
/// per thread) costs as much as the window. Spins a while, then yields the core (a run with
/// more threads than cores must not starve the thread everyone waits for). Sense-reversing:
/// the last to arrive flips the generation that the others wait on.
struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(n: usize) -> SpinBarrier {
        SpinBarrier { n, arrived: AtomicUsize::new(0), generation: AtomicUsize::new(0) }
    }

    fn wait(&self) {
        let gen = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.store(gen.wrapping_add(1), Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == gen {
            if spins < 2_000 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, RouteId};
    use crate::net::{Ecn, Header, UdpHeader};

    /// A packet handed to a partition for a time it has already run past is a broken
    /// lookahead: the run must stop, loudly, not reorder.
    #[test]
    #[should_panic(expected = "in its past")]
    fn an_arrival_in_a_partitions_past_aborts() {
        let toml = "duration = \"1ms\"\nthreads = 2\n[topology]\nkind = \"fat_tree\"\nk = 4\n\
            link = { rate = \"10Gbps\", delay = \"1us\" }\n[[flows]]\ncc = \"reno\"\n\
            pattern = \"permutation\"\n";
        let v = serde_json::to_value(toml::from_str::<toml::Value>(toml).unwrap()).unwrap();
        let sc = Scenario::from_value(&v).unwrap();
        let plan = super::super::plan(&sc, None);
        assert_eq!(plan.parts, 2);
        let mut w = World::new(&sc, 1, None, false).unwrap();
        w.enter_partition(0, &plan);
        w.run_window(SimTime(5_000));
        let pkt = Packet {
            flow: FlowId(0),
            route: RouteId(0),
            wire_bytes: 100,
            hop: 0,
            ecn: Ecn::NotEct,
            conn: 0,
            pure_ack: None,
            sent_at: SimTime::ZERO,
            hdr: Header::Udp(UdpHeader::default()),
        };
        let part = w.part.as_deref_mut().unwrap();
        part.inbox[1].push(Cross {
            key: 4_000u128 << 64,
            sent: SimTime(3_000),
            link: LinkId(0),
            pkt,
        });
        w.ingest();
    }
}
