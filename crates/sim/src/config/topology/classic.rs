//! The dumbbell and the cellular tree as graphs. They are expanded when the world is built,
//! not when the scenario is read: the dumbbell's access links follow the flows (two links per
//! flow, with the flow's own delay when it sets `rtt`). Names, directions, queues and link
//! order are the ones these topologies always had, so their runs give the same bytes.

use super::{Ecmp, GraphCfg, GraphLink};
use crate::config::{Direction, LinkCfg, QueueCfg, Scenario, TopologyKind};
use crate::units::Dur;

/// A dumbbell or cellular scenario's graph and what the world needs beside it.
pub struct Classic {
    pub graph: GraphCfg,
    /// Per flow, in build order: its (data sender, data receiver) hosts.
    pub pairs: Vec<(u32, u32)>,
    /// The one-way link the summary calls `bottleneck` (its other direction is `bottleneck_rev`).
    pub bottleneck: &'static str,
    /// One-way links that record sojourn and backlog besides those `[metrics] links` names.
    pub monitored: Vec<String>,
}

/// Adds the link a→b `name` (data direction: rate, loss, `q`) and b→a `rev` (reverse rate, `rq`).
fn add(
    g: &mut GraphCfg,
    (name, rev): (String, String),
    (a, b): (u32, u32),
    link: LinkCfg,
    q: &QueueCfg,
    rq: &QueueCfg,
) {
    g.links.push(GraphLink {
        name,
        a,
        b,
        link,
        reverse_loss: 0.0,
        queue: q.clone(),
        reverse_queue: rq.clone(),
    });
    g.reverse_names.push(rev);
}

fn node(g: &mut GraphCfg, name: String, host: bool) -> u32 {
    let fresh = g.add_node(&name, host);
    debug_assert!(fresh, "classic node names are unique");
    g.nodes.len() as u32 - 1
}

/// The scenario's dumbbell or cellular tree as a graph (only for those kinds).
pub fn expand_classic(sc: &Scenario) -> Classic {
    let t = &sc.topology;
    // Flow f and its table, in build order.
    let flows = sc.flows.iter().flat_map(|s| std::iter::repeat_n(s, s.count as usize)).enumerate();
    let mut pairs = Vec::new();
    if t.kind == TopologyKind::Cellular {
        // server — core — base station — a radio link per UE.
        let mut g = GraphCfg::new("cellular", Ecmp::Lowest);
        let server = node(&mut g, "server".into(), true);
        let bs = node(&mut g, "bs".into(), false);
        add(
            &mut g,
            ("core_down".into(), "core_up".into()),
            (server, bs),
            t.access.clone(),
            &t.access_queue,
            &t.access_queue,
        );
        let mut monitored = Vec::new();
        for u in 0..t.ues {
            let ue = node(&mut g, format!("ue{u}"), true);
            let names = (format!("ue{u}_down"), format!("ue{u}_up"));
            monitored.extend([names.0.clone(), names.1.clone()]);
            add(
                &mut g,
                names,
                (bs, ue),
                t.bottleneck.clone(),
                &t.bottleneck_queue,
                &t.reverse_queue,
            );
        }
        for (f, spec) in flows {
            let ue = 2 + spec.ue.unwrap_or(f as u32 % t.ues);
            // A reverse flow is an upload from the UE.
            pairs.push(if spec.direction == Direction::Reverse {
                (ue, server)
            } else {
                (server, ue)
            });
        }
        return Classic { graph: g, pairs, bottleneck: "ue0_down", monitored };
    }
    // left — bottleneck — right; per flow a sender s{f} on the left, a receiver d{f} on the
    // right, each behind an access link of its own.
    let mut g = GraphCfg::new("dumbbell", Ecmp::Lowest);
    let (left, right) = (node(&mut g, "left".into(), false), node(&mut g, "right".into(), false));
    add(
        &mut g,
        ("bottleneck".into(), "bottleneck_rev".into()),
        (left, right),
        t.bottleneck.clone(),
        &t.bottleneck_queue,
        &t.reverse_queue,
    );
    g.order = vec![0, 1];
    for (f, spec) in flows {
        let (s, d) = (node(&mut g, format!("s{f}"), true), node(&mut g, format!("d{f}"), true));
        // A flow's own RTT is spread over its four access hops (rounded down to the ns).
        let delay = spec.rtt.map_or(t.access.delay, |r| Dur((r.0 / 2 - t.bottleneck.delay.0) / 2));
        let acc = LinkCfg { delay, ..t.access.clone() };
        add(
            &mut g,
            (format!("f{f}_src_up"), format!("f{f}_src_down")),
            (s, left),
            acc.clone(),
            &t.access_queue,
            &t.access_queue,
        );
        add(
            &mut g,
            (format!("f{f}_dst_down"), format!("f{f}_dst_up")),
            (right, d),
            acc,
            &t.access_queue,
            &t.access_queue,
        );
        // The dumbbell's historical order: src_up, dst_down, dst_up, src_down.
        let b = 2 + 4 * f as u32;
        g.order.extend([b, b + 3, b + 1, b + 2]);
        pairs.push(if spec.direction == Direction::Reverse { (d, s) } else { (s, d) });
    }
    Classic {
        graph: g,
        pairs,
        bottleneck: "bottleneck",
        monitored: vec!["bottleneck".into(), "bottleneck_rev".into()],
    }
}
