//! The bottleneck without its devices: both directions, the packet slab, the gateway's ACK
//! rewriter and the measurements, driven by explicit times. `bottleneck.rs` feeds it packets
//! read from the TUN devices and the monotonic clock; tests feed it synthetic packets.

use crate::packet::{self, Parsed};
use crate::rewrite::{self, ConnTable, Outcome};
use crate::shaper::{Direction, Next};
use crate::slab::{Slab, NO_FLOW};
use crate::stats::{queue_block, FlowCounters, QueueSeries};
use bloatlab_sim::gateway::{AckRewriter, QueueView};
use bloatlab_sim::ids::PacketId;
use bloatlab_sim::queue::QueueDisc;
use bloatlab_sim::units::{Dur, SimTime};
use serde_json::{json, Value};

/// Which device a packet came from: the senders' side (data direction) or the receivers'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Senders,
    Receivers,
}

/// Counters of things that are not queue behaviour.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    pub read: [u64; 2],
    pub written: [u64; 2],
    pub not_ipv4: u64,
    pub max_len: usize,
    pub acks_lowered: u64,
    pub acks_kept: u64,
    pub acks_unknown: u64,
}

pub struct Core {
    pub fwd: Direction,
    pub rev: Direction,
    pub slab: Slab,
    gateway: Option<Box<dyn AckRewriter>>,
    conns: ConnTable,
    /// Flow i's sender uses port `port_base + i`.
    port_base: u16,
    pub flows: Vec<FlowCounters>,
    warmup: SimTime,
    interval: Dur,
    next_sample: SimTime,
    pub series: QueueSeries,
    pub counters: Counters,
}

pub struct CoreCfg {
    pub gateway: Option<Box<dyn AckRewriter>>,
    pub port_base: u16,
    pub flows: usize,
    pub warmup: Dur,
    /// Time-series interval (zero: none) and how many samples to make room for.
    pub interval: Dur,
    pub samples: usize,
}

impl Core {
    pub fn new(fwd: Direction, rev: Direction, slab: Slab, cfg: CoreCfg) -> Core {
        let rows = if cfg.interval.0 > 0 { 2 * cfg.samples } else { 0 };
        Core {
            fwd,
            rev,
            slab,
            gateway: cfg.gateway,
            conns: ConnTable::new(4096),
            port_base: cfg.port_base,
            flows: vec![FlowCounters::default(); cfg.flows],
            warmup: SimTime(cfg.warmup.0),
            interval: cfg.interval,
            next_sample: if cfg.interval.0 > 0 { SimTime(cfg.interval.0) } else { SimTime::MAX },
            series: QueueSeries::with_capacity(rows),
            counters: Counters::default(),
        }
    }

    /// A packet of `len` bytes was read into slot `id` from `side` at `now`.
    pub fn arrive(&mut self, side: Side, id: PacketId, len: usize, now: SimTime) {
        self.advance(now);
        let i = side as usize;
        self.counters.read[i] += 1;
        self.counters.max_len = self.counters.max_len.max(len);
        let (port_base, n_flows) = (self.port_base, self.flows.len());
        let flow_of = |sport: u16, dport: u16| flow_of(port_base, n_flows, side, sport, dport);
        let buf = &self.slab.slot_mut(id)[..len];
        let (flow, data) = match packet::parse(buf) {
            Parsed::Invalid => {
                self.counters.not_ipv4 += 1;
                self.slab.free(id);
                return;
            }
            Parsed::OtherIpv4 { .. } => match packet::udp_ports(buf) {
                // A datagram of a UDP flow is data (the flows send one way).
                Some((sport, dport)) => (flow_of(sport, dport), true),
                None => (NO_FLOW, false),
            },
            Parsed::Tcp(v) => (flow_of(v.sport, v.dport), v.payload_len > 0),
        };
        let data = data && flow != NO_FLOW;
        if self.gateway.is_some() {
            match side {
                Side::Senders => self.conns.learn_forward(buf),
                Side::Receivers => self.conns.learn_reverse(buf),
            }
        }
        let m = self.slab.meta_mut(id);
        *m = crate::slab::Meta { len: len as u16, flow, data, arrived: now };
        // Data of a forward flow comes from the senders' side, of a reverse flow (data from the
        // receivers' side, over the reverse bottleneck) from the other: only data counts.
        if data && self.fwd.link.stats.counting {
            self.flows[flow as usize].data_pkts += 1;
        }
        match side {
            Side::Senders => self.fwd.arrive(now, id, flow),
            Side::Receivers => self.rev.arrive(now, id, flow),
        }
        self.advance(now);
    }

    fn fwd_view(&self, now: SimTime) -> QueueView {
        QueueView {
            now,
            backlog: self.fwd.link.queue.backlog(),
            capacity_bytes: self.fwd.link.queue.capacity_bytes(),
        }
    }

    /// Runs every internal event due by `now`, in time order across both directions.
    pub fn advance(&mut self, now: SimTime) {
        loop {
            let a = self.fwd.next();
            let b = self.rev.next();
            let (t, fwd, k) = match (a, b) {
                (Some(a), Some(b)) if b.0 < a.0 => (b.0, false, b.1),
                (Some(a), _) => (a.0, true, a.1),
                (None, Some(b)) => (b.0, false, b.1),
                (None, None) => (SimTime::MAX, true, Next::Tx),
            };
            // Samples and the end of the warm-up are events too, ordered with the others.
            let edge = self.next_sample.min(if self.fwd.link.stats.counting {
                SimTime::MAX
            } else {
                self.warmup
            });
            if edge <= t.min(now) {
                self.time_edge(edge);
                continue;
            }
            if t > now {
                return;
            }
            self.step(t, fwd, k);
        }
    }

    fn time_edge(&mut self, t: SimTime) {
        if !self.fwd.link.stats.counting && t >= self.warmup {
            self.fwd.link.stats.start_window(t);
            self.rev.link.stats.start_window(t);
            self.flows.iter_mut().for_each(|f| *f = FlowCounters::default());
        }
        if t >= self.next_sample {
            self.sample(t);
            self.next_sample = t + self.interval;
        }
    }

    fn sample(&mut self, t: SimTime) {
        let secs = self.interval.secs_f64();
        for d in [&mut self.fwd, &mut self.rev] {
            let b = d.link.queue.backlog();
            let (soj, bytes) = d.link.take_interval(t);
            let state = d.link.queue.internal_state();
            self.series.push(
                t,
                d.name,
                b.bytes,
                b.pkts,
                d.link.stats.queue_drops(),
                soj,
                bytes as f64 * 8.0 / secs / 1e6,
                state,
            );
        }
    }

    fn step(&mut self, t: SimTime, fwd: bool, k: Next) {
        if fwd {
            let fx = self.fwd.step(t, k, &mut self.slab);
            if self.fwd.link.stats.counting {
                for &f in &self.fwd.lost_flows {
                    if let Some(c) = self.flows.get_mut(f as usize) {
                        c.data_drops += 1;
                    }
                }
            }
            if fx.enqueued || fx.dequeued {
                let view = self.fwd_view(t);
                if let Some(g) = self.gateway.as_mut() {
                    if fx.enqueued {
                        g.on_fwd_enqueue(&view);
                    }
                    if fx.dequeued {
                        g.on_fwd_dequeue(&view);
                    }
                }
            }
            if let Some(id) = fx.mid_exit {
                self.fwd.to_far(t, id, self.slab.meta(id).flow);
            }
        } else {
            let fx = self.rev.step(t, k, &mut self.slab);
            if self.fwd.link.stats.counting {
                for &f in &self.rev.lost_flows {
                    if let Some(c) = self.flows.get_mut(f as usize) {
                        c.data_drops += 1;
                    }
                }
            }
            if let Some(id) = fx.mid_exit {
                // The ACK has crossed the reverse bottleneck: it is at the gateway router, which
                // holds the forward queue. Rewrite it there, before the sender's access link.
                let view = self.fwd_view(t);
                if let Some(g) = self.gateway.as_mut() {
                    match rewrite::rewrite_ack(
                        self.slab.pkt_mut(id),
                        &mut self.conns,
                        g.as_mut(),
                        &view,
                    ) {
                        Outcome::Lowered => self.counters.acks_lowered += 1,
                        Outcome::Kept => self.counters.acks_kept += 1,
                        Outcome::Unknown => self.counters.acks_unknown += 1,
                        Outcome::NotAck => {}
                    }
                }
                self.rev.to_far(t, id, self.slab.meta(id).flow);
            }
        }
    }

    /// The earliest time anything is due (an internal event, a packet to write, a sample).
    pub fn next_deadline(&self) -> SimTime {
        let mut t = self.next_sample;
        if !self.fwd.link.stats.counting {
            t = t.min(self.warmup);
        }
        for d in [&self.fwd, &self.rev] {
            if let Some((x, _)) = d.next() {
                t = t.min(x);
            }
            if let Some(x) = d.next_out() {
                t = t.min(x);
            }
        }
        t
    }

    /// The next packet to write to the device on the other side of `from`, if due by `now`.
    /// Returns when it was due and the packet; the caller writes `slab.pkt(id)` and then frees
    /// the slot.
    #[inline]
    pub fn pop_out(&mut self, from: Side, now: SimTime) -> Option<(SimTime, PacketId)> {
        match from {
            Side::Senders => self.fwd.pop_out(now),
            Side::Receivers => self.rev.pop_out(now),
        }
    }

    /// Everything measured over [warm-up end, `end`], as JSON.
    pub fn finish(&mut self, end: SimTime) -> Value {
        self.advance(end);
        if !self.fwd.link.stats.counting {
            self.time_edge(self.warmup.min(end));
        }
        // The links' own summary constructor, as the simulated world uses it.
        self.fwd.link.close_window(end);
        self.rev.link.close_window(end);
        let (fwd, rev) = (self.fwd.link.measure(end), self.rev.link.measure(end));
        let c = self.counters;
        json!({
            // The forward queue as measurements: the summary is built from them (with the
            // flows' measurements) by the simulator's builder, through bloatlab._core.
            "bottleneck": fwd,
            "bottleneck_rev": queue_block(&rev),
            "flows": self.flows.iter().map(|f| json!({"data_pkts": f.data_pkts, "data_drops": f.data_drops})).collect::<Vec<_>>(),
            "queues": self.series.to_json(),
            "gateway": self.gateway.as_ref().map(|g| json!({
                "scheme": g.name(), "acks_lowered": c.acks_lowered, "acks_kept": c.acks_kept,
                "acks_unknown_connection": c.acks_unknown,
            })),
            "io": {
                "read_senders": c.read[0], "read_receivers": c.read[1],
                "written_receivers": c.written[0], "written_senders": c.written[1],
                "not_ipv4": c.not_ipv4, "max_packet_bytes": c.max_len,
                "bottleneck_packets": self.fwd.link.stats.transmitted,
                "slab_slots": self.slab.capacity(),
                "inside_at_end": self.fwd.inside() + self.rev.inside(),
            },
        })
    }
}

/// The flow of a packet by its data sender's port (`port_base` + flow), or `NO_FLOW`: the
/// source port of what a sender sends (data of a forward flow from the senders' side, of a
/// reverse flow from the receivers' side), the destination port of what comes back.
#[inline]
fn flow_of(port_base: u16, n_flows: usize, side: Side, sport: u16, dport: u16) -> u16 {
    let (mine, theirs) = if side == Side::Senders { (sport, dport) } else { (dport, sport) };
    for port in [mine, theirs] {
        let f = port.wrapping_sub(port_base);
        if (f as usize) < n_flows {
            return f;
        }
    }
    NO_FLOW
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::tests::tcp_packet;
    use crate::packet::{ACK, SYN};

    fn core(extra: serde_json::Value) -> Core {
        let mut v = serde_json::json!({
            "duration": "10s",
            "topology": {
                "bottleneck": {"rate": "12Mbps", "delay": "10ms"},
                "access": {"delay": "5ms"},
                "bottleneck_queue": {"kind": "droptail", "limit": "1000p"},
            },
            "flows": [{"cc": "cubic"}],
        });
        if let Some(o) = extra.as_object() {
            for (k, x) in o {
                v["topology"][k] = x.clone();
            }
        }
        crate::config::core(&crate::config::scenario(&v).expect("valid scenario"))
    }

    fn inject(c: &mut Core, side: Side, pkt: &[u8], t: SimTime) {
        let id = c.slab.alloc().expect("slot");
        c.slab.slot_mut(id)[..pkt.len()].copy_from_slice(pkt);
        c.arrive(side, id, pkt.len(), t);
    }

    /// Runs the core event by event until `until`, returning (due time, bytes) of what leaves
    /// on the other side of `from`.
    fn drain(c: &mut Core, from: Side, until: SimTime) -> Vec<(SimTime, Vec<u8>)> {
        let mut out = Vec::new();
        loop {
            let t = c.next_deadline();
            if t > until {
                return out;
            }
            c.advance(t);
            while let Some((due, id)) = c.pop_out(from, t) {
                out.push((due, c.slab.pkt(id).to_vec()));
                c.slab.free(id);
            }
            let _ =
                c.pop_out(if from == Side::Senders { Side::Receivers } else { Side::Senders }, t);
        }
    }

    #[test]
    fn packets_leave_at_the_rate_after_every_delay() {
        let mut c = core(serde_json::json!({}));
        let p = tcp_packet(ACK, 1000, &[], 1460); // 1500 B: 1 ms at 12 Mbit/s
        for _ in 0..50 {
            inject(&mut c, Side::Senders, &p, SimTime(0));
        }
        let out = drain(&mut c, Side::Senders, SimTime(1_000_000_000));
        assert_eq!(out.len(), 50);
        for (k, (due, bytes)) in out.iter().enumerate() {
            // near access 5 ms, serialization (k+1) ms, bottleneck 10 ms, far access 5 ms.
            assert_eq!(
                due.0,
                5_000_000 + (k as u64 + 1) * 1_000_000 + 10_000_000 + 5_000_000,
                "packet {k}"
            );
            assert_eq!(bytes, &p);
        }
        let s = c.finish(SimTime(1_000_000_000));
        assert_eq!(s["bottleneck"]["tx_packets"], 50);
        // Packet k waited k ms: mean 24.5 ms (the shared builder turns measurements into the summary).
        let b = measured(&s).summary();
        assert!((b.mean_sojourn_ms - 24.5).abs() < 1e-9);
        assert_eq!(s["io"]["inside_at_end"], 0);
    }

    #[test]
    fn a_flow_with_its_own_rtt_gets_its_own_access_delays() {
        // Flow 0: the topology's 40 ms base RTT (5 ms access); flow 1: rtt = 100 ms, so
        // (50 ms − 10 ms) / 2 = 20 ms on each access link, as the simulator builds it.
        let v = serde_json::json!({
            "duration": "10s",
            "topology": {"bottleneck": {"rate": "12Mbps", "delay": "10ms"}, "access": {"delay": "5ms"}},
            "flows": [{"cc": "cubic"}, {"cc": "reno", "rtt": "100ms"}],
        });
        let s = crate::config::scenario(&v).expect("valid scenario");
        assert_eq!(
            crate::config::rtt_classes(&s),
            (vec![Dur::from_millis(5), Dur::from_millis(20)], vec![0, 1])
        );
        let mut c = crate::config::core(&s);
        // A data packet of each flow (sender ports 10000, 10001), 1 ms apart; 1500 B = 1 ms.
        let p0 = tcp_packet(ACK, 1000, &[], 1460);
        let mut p1 = p0.clone();
        p1[20..22].copy_from_slice(&10_001u16.to_be_bytes());
        inject(&mut c, Side::Senders, &p0, SimTime(0));
        inject(&mut c, Side::Senders, &p1, SimTime(1_000_000));
        let out = drain(&mut c, Side::Senders, SimTime(1_000_000_000));
        let due: Vec<u64> = out.iter().map(|o| o.0 .0).collect();
        assert_eq!(
            due,
            vec![
                5_000_000 + 1_000_000 + 10_000_000 + 5_000_000,
                1_000_000 + 20_000_000 + 1_000_000 + 10_000_000 + 20_000_000
            ]
        );
    }

    #[test]
    fn the_cellular_topology_is_core_delay_then_the_radio_link() {
        // One UE: server → core (30 ms, not shaped) → base-station queue → radio (12 Mbit/s,
        // 20 ms) → UE; the uplink back, then the core.
        let v = serde_json::json!({
            "duration": "10s",
            "topology": {"kind": "cellular", "ues": 1, "radio": {"down": "12Mbps", "up": "12Mbps", "delay": "20ms"},
                         "core": {"rate": "1Gbps", "delay": "30ms"}},
            "flows": [{"cc": "reno"}],
        });
        let mut c = crate::config::core(&crate::config::scenario(&v).expect("valid scenario"));
        inject(&mut c, Side::Senders, &tcp_packet(ACK, 1000, &[], 1460), SimTime(0));
        let down = drain(&mut c, Side::Senders, SimTime(1_000_000_000));
        assert_eq!(
            down.iter().map(|o| o.0 .0).collect::<Vec<_>>(),
            vec![30_000_000 + 1_000_000 + 20_000_000]
        );
        let mut c = crate::config::core(&crate::config::scenario(&v).expect("valid scenario"));
        inject(&mut c, Side::Receivers, &tcp_packet(ACK, 1000, &[], 1460), SimTime(0));
        let up = drain(&mut c, Side::Receivers, SimTime(1_000_000_000));
        assert_eq!(
            up.iter().map(|o| o.0 .0).collect::<Vec<_>>(),
            vec![1_000_000 + 20_000_000 + 30_000_000]
        );
    }

    fn measured(s: &serde_json::Value) -> bloatlab_sim::metrics::QueueMeasure {
        serde_json::from_value(s["bottleneck"].clone()).expect("the bottleneck's measurements")
    }

    #[test]
    fn overflow_drops_are_counted_per_flow() {
        let mut c =
            core(serde_json::json!({"bottleneck_queue": {"kind": "droptail", "limit": "10p"}}));
        let p = tcp_packet(ACK, 1000, &[], 1460);
        for _ in 0..30 {
            inject(&mut c, Side::Senders, &p, SimTime(0));
        }
        let out = drain(&mut c, Side::Senders, SimTime(1_000_000_000));
        // One goes straight into the serializer, ten wait, nineteen overflow.
        assert_eq!(out.len(), 11);
        let s = c.finish(SimTime(1_000_000_000));
        assert_eq!(measured(&s).summary().drops, 19);
        assert_eq!(s["bottleneck"]["drop_reasons"]["overflow"], 19);
        assert_eq!(s["flows"][0]["data_pkts"], 30);
        assert_eq!(s["flows"][0]["data_drops"], 19);
    }

    #[test]
    fn ewt_lowers_acks_at_the_gateway_from_the_forward_queue() {
        let mut c = core(serde_json::json!({
            "bottleneck_queue": {"kind": "droptail", "limit": "100KB"},
            "gateway": {"kind": "ewt", "start": "10KB"},
        }));
        let syn = tcp_packet(SYN, 64240, &[2, 4, 0x05, 0xb4, 1, 3, 3, 7], 0);
        inject(&mut c, Side::Senders, &syn, SimTime(0));
        let mut synack = tcp_packet(SYN | ACK, 65160, &[2, 4, 0x05, 0xb4, 1, 3, 3, 7], 0);
        swap(&mut synack);
        inject(&mut c, Side::Receivers, &synack, SimTime(0));
        // 50 full segments reach the queue at 5 ms: 48 wait behind the SYN and the first one.
        let data = tcp_packet(ACK, 1000, &[], 1460);
        for _ in 0..50 {
            inject(&mut c, Side::Senders, &data, SimTime(1));
        }
        let mut ack = tcp_packet(ACK, 1000, &[], 0);
        swap(&mut ack);
        // The ACK reaches the gateway after 5 + 10 + (serialization of 40 B) ms.
        inject(&mut c, Side::Receivers, &ack, SimTime(2));
        let out = drain(&mut c, Side::Receivers, SimTime(100_000_000));
        assert_eq!(out.len(), 2);
        let (_, a) = &out[1];
        let w = u16::from_be_bytes([a[34], a[35]]);
        assert!(w < 1000, "window {w}");
        assert!(crate::checksum::tcp_ok(a));
        let s = c.finish(SimTime(100_000_000));
        assert_eq!(s["gateway"]["acks_lowered"], 1);
    }

    fn swap(p: &mut [u8]) {
        let (a, b) = ([p[12], p[13], p[14], p[15]], [p[16], p[17], p[18], p[19]]);
        p[12..16].copy_from_slice(&b);
        p[16..20].copy_from_slice(&a);
        let (s, d) = ([p[20], p[21]], [p[22], p[23]]);
        p[20..22].copy_from_slice(&d);
        p[22..24].copy_from_slice(&s);
        crate::checksum::fill_tcp(p);
    }
}
