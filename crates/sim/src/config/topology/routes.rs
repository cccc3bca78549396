//! Forwarding on a graph topology: which links a flow's packets take from one host to another.
//! A static route (`topology.routes`) wins; otherwise the shortest path by hop count, found by
//! a breadth-first search from the destination (hosts other than the destination do not
//! forward), with equal-cost next hops chosen by name or by a seeded hash of the 5-tuple
//! (ECMP). A route is computed once per flow and direction and carried by its packets as a
//! route id, so the per-packet path costs no lookup.

use super::{Ecmp, GraphCfg};
use crate::ids::LinkId;
use crate::net::route::MAX_HOPS;
use crate::wire::flowkey::FlowKey;
use std::collections::HashMap;

/// The graph's adjacency: per node, its (neighbour, one-way link from it) pairs, ordered by
/// the neighbour's name, then the link's (the "lowest" ECMP choice is the first).
pub struct Adjacency {
    start: Vec<u32>,
    edges: Vec<(u32, LinkId)>,
    host: Vec<bool>,
}

/// Not reached by the search.
pub const UNREACHED: u32 = u32::MAX;

impl Adjacency {
    /// One-way link ids follow the build order: link i's a→b is 2i, its b→a 2i + 1.
    pub fn new(g: &GraphCfg) -> Adjacency {
        let n = g.nodes.len();
        let mut deg = vec![0u32; n + 1];
        for l in &g.links {
            deg[l.a as usize] += 1;
            deg[l.b as usize] += 1;
        }
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            start[i + 1] = start[i] + deg[i];
        }
        let mut fill = start.clone();
        let mut edges = vec![(0u32, LinkId(0)); start[n] as usize];
        for (i, l) in g.links.iter().enumerate() {
            let i = i as u32;
            for (from, to, id) in [(l.a, l.b, 2 * i), (l.b, l.a, 2 * i + 1)] {
                edges[fill[from as usize] as usize] = (to, LinkId(id));
                fill[from as usize] += 1;
            }
        }
        for u in 0..n {
            let s = &mut edges[start[u] as usize..start[u + 1] as usize];
            s.sort_by(|x, y| {
                g.nodes[x.0 as usize]
                    .name
                    .cmp(&g.nodes[y.0 as usize].name)
                    .then_with(|| g.one_way_name(x.1 .0).cmp(&g.one_way_name(y.1 .0)))
            });
        }
        Adjacency { start, edges, host: g.nodes.iter().map(|n| n.host).collect() }
    }

    fn of(&self, u: u32) -> &[(u32, LinkId)] {
        &self.edges[self.start[u as usize] as usize..self.start[u as usize + 1] as usize]
    }

    /// Hop counts to `d` from every node (UNREACHED where none): a BFS that expands routers
    /// and `d` only, so no path transits a host.
    pub fn distances_to(&self, d: u32, dist: &mut Vec<u32>) {
        dist.clear();
        dist.resize(self.host.len(), UNREACHED);
        dist[d as usize] = 0;
        let mut queue = std::collections::VecDeque::from([d]);
        while let Some(u) = queue.pop_front() {
            if u != d && self.host[u as usize] {
                continue;
            }
            for &(v, _) in self.of(u) {
                if dist[v as usize] == UNREACHED {
                    dist[v as usize] = dist[u as usize] + 1;
                    queue.push_back(v);
                }
            }
        }
    }
}

/// A path of one-way links.
#[derive(Debug, Clone, Copy)]
pub struct Path {
    pub links: [LinkId; MAX_HOPS],
    pub len: u8,
}

impl Path {
    pub fn links(&self) -> &[LinkId] {
        &self.links[..self.len as usize]
    }
}

/// One route to find: from host `src` to host `dst` for packets with this 5-tuple.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub src: u32,
    pub dst: u32,
    pub key: FlowKey,
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The ECMP hash of a 5-tuple at a node, seeded by the run.
fn ecmp_hash(seed: u64, k: &FlowKey, node: u32) -> u64 {
    let a = ((k.src as u64) << 32) | k.dst as u64;
    let b = ((k.sport as u64) << 48) | ((k.dport as u64) << 32) | ((k.proto as u64) << 24);
    mix(mix(seed) ^ mix(a) ^ mix(b ^ mix(node as u64)))
}

/// Where the search for routes to host `d` starts: a host with a single link to a router is
/// reached through that router (every route to it ends with that link), so the hosts behind
/// one access router share one search.
fn anchor(adj: &Adjacency, d: u32) -> (u32, Option<LinkId>) {
    match adj.of(d) {
        // The link's other direction is its twin id (2i ↔ 2i + 1): no scan of the router's
        // links, which on a dumbbell are two per flow.
        &[(r, up)] if !adj.host[r as usize] => (r, Some(LinkId(up.0 ^ 1))),
        _ => (d, None),
    }
}

/// The routes of every request, in request order. Requests are grouped by the node the
/// search starts from ([`anchor`]) so that one BFS serves them all and a single distance
/// array is alive: set-up costs one search per access router (or multi-homed host) plus the
/// flows, not one per host pair.
pub fn routes(g: &GraphCfg, seed: u64, reqs: &[Request]) -> Result<Vec<Path>, String> {
    let adj = Adjacency::new(g);
    let statics: HashMap<(u32, u32), usize> = g
        .routes
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.path[0], r.path[r.path.len() - 1]), i))
        .collect();
    let anchors: Vec<(u32, Option<LinkId>)> = reqs.iter().map(|r| anchor(&adj, r.dst)).collect();
    let mut order: Vec<u32> = (0..reqs.len() as u32).collect();
    order.sort_by_key(|&i| anchors[i as usize].0);
    let mut out = vec![Path { links: [LinkId(0); MAX_HOPS], len: 0 }; reqs.len()];
    let mut dist = Vec::new();
    let mut closer = Closer { start: Vec::new(), edges: Vec::new() };
    let mut current = UNREACHED;
    for i in order {
        let r = reqs[i as usize];
        let (target, last) = anchors[i as usize];
        let name = |n: u32| &g.nodes[n as usize].name;
        if let Some(&s) = statics.get(&(r.src, r.dst)) {
            out[i as usize] = static_path(&adj, &g.routes[s].path);
            continue;
        }
        if target != current {
            adj.distances_to(target, &mut dist);
            closer.fill(&adj, &dist);
            current = target;
        }
        let hops = dist[r.src as usize].saturating_add(last.is_some() as u32);
        if dist[r.src as usize] == UNREACHED {
            return Err(format!("no route from \"{}\" to \"{}\"", name(r.src), name(r.dst)));
        }
        if hops as usize > MAX_HOPS {
            return Err(format!(
                "the route from \"{}\" to \"{}\" crosses {hops} links (at most {MAX_HOPS})",
                name(r.src),
                name(r.dst)
            ));
        }
        let p = &mut out[i as usize];
        let mut u = r.src;
        while u != target {
            let next = closer.of(u);
            let pick = match g.ecmp {
                Ecmp::Lowest => 0,
                Ecmp::Hash => (ecmp_hash(seed, &r.key, u) % next.len() as u64) as usize,
            };
            let (v, l) = *next.get(pick).expect("a node one hop closer exists on a BFS tree");
            p.links[p.len as usize] = l;
            p.len += 1;
            u = v;
        }
        if let Some(l) = last {
            p.links[p.len as usize] = l;
            p.len += 1;
        }
    }
    Ok(out)
}

/// Per node, its neighbours one hop closer to the search's target, in adjacency order: found
/// once per search, so a route's walk does not scan a router's links (a dumbbell router has
/// two per flow) at every step.
struct Closer {
    start: Vec<u32>,
    edges: Vec<(u32, LinkId)>,
}

impl Closer {
    fn fill(&mut self, adj: &Adjacency, dist: &[u32]) {
        self.start.clear();
        self.edges.clear();
        for (u, &d) in dist.iter().enumerate() {
            self.start.push(self.edges.len() as u32);
            if d != UNREACHED && d > 0 {
                // A host one hop closer is a step only when it is the target: the search
                // gives hosts a distance without expanding them, so a router beside a
                // multi-homed host would otherwise forward through it.
                let step = |e: &&(u32, LinkId)| {
                    dist[e.0 as usize] == d - 1 && (d == 1 || !adj.host[e.0 as usize])
                };
                self.edges.extend(adj.of(u as u32).iter().filter(step));
            }
        }
        self.start.push(self.edges.len() as u32);
    }

    fn of(&self, u: u32) -> &[(u32, LinkId)] {
        &self.edges[self.start[u as usize] as usize..self.start[u as usize + 1] as usize]
    }
}

/// A static route's links: between consecutive nodes, the lowest-named link.
fn static_path(adj: &Adjacency, nodes: &[u32]) -> Path {
    let mut p = Path { links: [LinkId(0); MAX_HOPS], len: 0 };
    for w in nodes.windows(2) {
        let (_, l) = *adj
            .of(w[0])
            .iter()
            .find(|e| e.0 == w[1])
            .expect("static routes follow links (checked when read)");
        p.links[p.len as usize] = l;
        p.len += 1;
    }
    p
}

/// The longest of the shortest paths (in hops) between the given (from, to) pairs, or the
/// first pair that has none. For the checks made when a scenario is read.
pub fn longest_hops(g: &GraphCfg, pairs: &[(u32, u32)]) -> Result<u32, (u32, u32)> {
    let adj = Adjacency::new(g);
    let mut sorted = pairs.to_vec();
    sorted.sort_by_key(|p| p.1);
    let (mut dist, mut current, mut worst) = (Vec::new(), UNREACHED, 0);
    for (s, d) in sorted {
        if d != current {
            adj.distances_to(d, &mut dist);
            current = d;
        }
        match dist[s as usize] {
            UNREACHED => return Err((s, d)),
            h => worst = worst.max(h),
        }
    }
    Ok(worst)
}
