//! Splitting a run over threads: which graph nodes each partition owns, and the lookahead the
//! cut gives (the conservative, window-based scheme of Chandy-Misra-Bryant without null
//! messages: Fujimoto, "Parallel and Distributed Simulation Systems", 2000, ch. 3; the
//! window is YAWNS-like, one global barrier per window).
//!
//! A partition owns nodes; it owns a one-way link with the node the link leaves (its queue
//! and serializer), and an endpoint with its host. A packet crosses to another partition only
//! by propagating over a cut link, so the smallest propagation delay over the cut is the
//! window: nothing one partition does in `[t, t + window)` can reach another before `t +
//! window`. Links without a delay, and schedule-driven links (whose delay changes), are never
//! cut.
//!
//! How the nodes are split: presets mark groups (a fat-tree's pods, a leaf with its hosts;
//! `NodeCfg::group`), dealt to partitions in contiguous blocks, with the ungrouped switches
//! (cores, spines) dealt the same way; a graph written out grows one region per partition
//! from hosts far apart, the lightest region taking a node next, a node at a time (breadth
//! first). Simplified: nodes weigh the same (hosts and switches alike); no refinement pass
//! (Kernighan-Lin) after the growth.
//!
//! How many threads: `threads = N` asks for N (clamped to the partitions the graph can be
//! split into, and said); "auto" (the default) uses every core the machine reports for a
//! graph of at least [`AUTO_HOSTS`] hosts and one thread otherwise. Runs whose per-flow
//! state sits at both ends of a flow (web and page applications, the RPM test), the ACK
//! rewriter and the Wi-Fi BSS run on one thread; so does every dumbbell and cellular tree.

use crate::app::AppKind;
use crate::config::{GraphCfg, Scenario};
use crate::units::Dur;

/// A graph of at least this many hosts runs on every core unless `threads` says otherwise.
pub const AUTO_HOSTS: usize = 128;

/// How a run is split.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Partitions, one thread each (1: the serial engine).
    pub parts: usize,
    /// The partition of each graph node.
    pub(super) node_part: Vec<u16>,
    /// Per one-way link in the world's order: the nodes it leaves and reaches.
    pub(super) ends: Vec<(u32, u32)>,
    /// The smallest propagation delay over the cut (the window).
    pub lookahead: Dur,
    /// What the run uses instead of what was asked, when they differ (for stderr).
    pub note: Option<String>,
}

impl Plan {
    fn serial(note: Option<String>) -> Plan {
        Plan { parts: 1, node_part: Vec::new(), ends: Vec::new(), lookahead: Dur::ZERO, note }
    }

    /// The partition owning one-way link `l` (that of the node it leaves), and the one its
    /// packets reach.
    pub(super) fn link_parts(&self, l: usize) -> (u16, u16) {
        let (a, b) = self.ends[l];
        (self.node_part[a as usize], self.node_part[b as usize])
    }
}

/// Why a scenario runs on one thread whatever it asks, if it does.
fn serial_only(sc: &Scenario) -> Option<&'static str> {
    let Some(g) = sc.topology.graph.as_deref() else {
        return Some("the dumbbell and cellular topologies run on one thread");
    };
    if g.wifi.is_some() {
        return Some("the Wi-Fi BSS runs on one thread");
    }
    if sc.topology.gateway.is_some() || g.gateway_link.is_some() {
        return Some("the ACK rewriter runs on one thread");
    }
    if sc.rpm.is_some() {
        return Some("the RPM test runs on one thread");
    }
    if sc.flows.iter().any(|f| matches!(f.app, AppKind::Web(_) | AppKind::Page(_))) {
        return Some("web and page flows run on one thread");
    }
    None
}

/// The split of `sc` for `threads` (None: the scenario's own `threads`, else "auto").
pub fn plan(sc: &Scenario, threads: Option<u32>) -> Plan {
    let asked = threads.or(sc.threads);
    if let Some(why) = serial_only(sc) {
        let note = asked.filter(|&n| n > 1).map(|n| format!("threads = {n}: 1 used ({why})"));
        return Plan::serial(note);
    }
    let g = sc.topology.graph.as_deref().expect("serial_only checks for a graph");
    let want = match asked {
        Some(n) => n as usize,
        None if g.hosts().len() >= AUTO_HOSTS => {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
        None => 1,
    };
    if want <= 1 {
        return Plan::serial(None);
    }
    let ends = ends(g);
    let mut units = Units::of(g);
    let max = units.max_parts(g);
    let parts = want.min(max).min(u16::MAX as usize);
    let node_part = match g.nodes.iter().any(|n| n.group.is_some()) {
        true => by_groups(g, &mut units, parts),
        false => by_growth(g, &mut units, parts),
    };
    // Partitions left empty are dropped (the numbers stay contiguous).
    let mut used: Vec<u16> = node_part.clone();
    used.sort_unstable();
    used.dedup();
    let node_part: Vec<u16> =
        node_part.iter().map(|p| used.binary_search(p).expect("a used partition") as u16).collect();
    let parts = used.len();
    let lookahead = ends
        .iter()
        .enumerate()
        .filter(|(_, &(a, b))| node_part[a as usize] != node_part[b as usize])
        .map(|(i, _)| link_delay(g, i))
        .min();
    let clamp = |n: usize, why: &str| {
        (asked.is_some() && n < want).then(|| format!("threads = {want}: {n} used ({why})"))
    };
    match lookahead {
        Some(d) if parts > 1 => Plan {
            parts,
            node_part,
            ends,
            lookahead: d,
            note: clamp(parts, &format!("the graph splits into at most {parts} partitions")),
        },
        _ => Plan::serial(clamp(1, "the graph has no link with a delay to cut")),
    }
}

/// Per one-way link in world order (graph link i's a→b at `order[2i]`, else 2i): its ends.
fn ends(g: &GraphCfg) -> Vec<(u32, u32)> {
    let mut out = vec![(0, 0); 2 * g.links.len()];
    for (i, l) in g.links.iter().enumerate() {
        for (k, e) in [(2 * i, (l.a, l.b)), (2 * i + 1, (l.b, l.a))] {
            out[g.order.get(k).map_or(k, |&o| o as usize)] = e;
        }
    }
    out
}

/// The propagation delay of the one-way link at world index `i`.
fn link_delay(g: &GraphCfg, i: usize) -> Dur {
    let k = g.order.iter().position(|&o| o as usize == i).unwrap_or(i);
    g.links[k / 2].link.delay
}

/// Nodes joined by links that may not be cut (no delay, or a schedule), as one unit each:
/// a union-find over the nodes.
struct Units {
    parent: Vec<u32>,
}

impl Units {
    fn of(g: &GraphCfg) -> Units {
        let mut u = Units { parent: (0..g.nodes.len() as u32).collect() };
        for l in &g.links {
            if l.link.delay == Dur::ZERO || l.link.schedule.is_some() {
                let (a, b) = (u.root(l.a), u.root(l.b));
                // The smaller index is the root: deterministic.
                let (lo, hi) = (a.min(b), a.max(b));
                u.parent[hi as usize] = lo;
            }
        }
        u
    }

    fn root(&mut self, mut n: u32) -> u32 {
        while self.parent[n as usize] != n {
            let p = self.parent[n as usize];
            self.parent[n as usize] = self.parent[p as usize];
            n = p;
        }
        n
    }

    /// The most partitions worth making: one per group, or per unit holding a host.
    fn max_parts(&mut self, g: &GraphCfg) -> usize {
        let mut groups: Vec<u32> = g.nodes.iter().filter_map(|n| n.group).collect();
        if !groups.is_empty() {
            groups.sort_unstable();
            groups.dedup();
            return groups.len();
        }
        let mut roots: Vec<u32> = g.hosts().into_iter().map(|h| self.root(h)).collect();
        roots.sort_unstable();
        roots.dedup();
        roots.len()
    }

    /// Gives every node its unit root's partition.
    fn settle(&mut self, part: &mut [u16]) {
        for n in 0..part.len() {
            part[n] = part[self.root(n as u32) as usize];
        }
    }
}

/// Groups in contiguous blocks, ungrouped nodes dealt in contiguous blocks of their own.
fn by_groups(g: &GraphCfg, units: &mut Units, parts: usize) -> Vec<u16> {
    let mut ids: Vec<u32> = g.nodes.iter().filter_map(|n| n.group).collect();
    ids.sort_unstable();
    ids.dedup();
    let loose = g.nodes.iter().filter(|n| n.group.is_none()).count().max(1);
    let mut j = 0;
    let mut part: Vec<u16> = g
        .nodes
        .iter()
        .map(|n| match n.group {
            Some(id) => (ids.binary_search(&id).unwrap() * parts / ids.len()) as u16,
            None => {
                j += 1;
                ((j - 1) * parts / loose) as u16
            }
        })
        .collect();
    units.settle(&mut part);
    part
}

/// Regions grown breadth first from `parts` hosts far apart, the lightest region first.
fn by_growth(g: &GraphCfg, units: &mut Units, parts: usize) -> Vec<u16> {
    let n = g.nodes.len();
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    for l in &g.links {
        adj[l.a as usize].push(l.b);
        adj[l.b as usize].push(l.a);
    }
    let hosts = g.hosts();
    // Seeds: the first host, then each time the host farthest (in hops) from every seed.
    let mut dist = vec![u32::MAX; n];
    let mut seeds = vec![hosts[0]];
    bfs(&adj, hosts[0], &mut dist);
    while seeds.len() < parts {
        let far = hosts
            .iter()
            .copied()
            .filter(|h| !seeds.contains(h))
            .max_by_key(|&h| (dist[h as usize], std::cmp::Reverse(h)));
        let Some(far) = far else { break };
        seeds.push(far);
        let mut d2 = vec![u32::MAX; n];
        bfs(&adj, far, &mut d2);
        for (d, e) in dist.iter_mut().zip(d2) {
            *d = (*d).min(e);
        }
    }
    const FREE: u16 = u16::MAX;
    let mut part = vec![FREE; n];
    let mut fronts: Vec<std::collections::VecDeque<u32>> = Vec::new();
    let mut weight = vec![0usize; seeds.len()];
    for (p, &s) in seeds.iter().enumerate() {
        part[s as usize] = p as u16;
        weight[p] = 1;
        fronts.push(std::collections::VecDeque::from([s]));
    }
    // The lightest region that can still grow takes its next free neighbour, until none can.
    while let Some(p) =
        (0..seeds.len()).filter(|&p| !fronts[p].is_empty()).min_by_key(|&p| (weight[p], p))
    {
        while let Some(&v) = fronts[p].front() {
            if let Some(&w) = adj[v as usize].iter().find(|&&w| part[w as usize] == FREE) {
                part[w as usize] = p as u16;
                weight[p] += 1;
                fronts[p].push_back(w);
                break;
            }
            fronts[p].pop_front();
        }
    }
    // Nodes no region reached (another component of the graph) join partition 0.
    for p in part.iter_mut().filter(|p| **p == FREE) {
        *p = 0;
    }
    units.settle(&mut part);
    part
}

fn bfs(adj: &[Vec<u32>], from: u32, dist: &mut [u32]) {
    dist.fill(u32::MAX);
    dist[from as usize] = 0;
    let mut q = std::collections::VecDeque::from([from]);
    while let Some(v) = q.pop_front() {
        for &w in &adj[v as usize] {
            if dist[w as usize] == u32::MAX {
                dist[w as usize] = dist[v as usize] + 1;
                q.push_back(w);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(toml_text: &str) -> Scenario {
        let v = serde_json::to_value(toml::from_str::<toml::Value>(toml_text).unwrap()).unwrap();
        Scenario::from_value(&v).unwrap_or_else(|e| panic!("{e:?}"))
    }

    const FAT_TREE: &str = "duration = \"1ms\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n\
        link = { rate = \"10Gbps\", delay = \"3us\" }\n[[flows]]\ncc = \"reno\"\n\
        pattern = \"permutation\"\n";

    #[test]
    fn a_fat_tree_splits_by_whole_pods_and_clamps_to_its_pods() {
        let sc = scenario(FAT_TREE);
        let g = sc.topology.graph.as_deref().unwrap();
        for threads in [2, 3, 4] {
            let p = plan(&sc, Some(threads));
            assert_eq!(p.parts, threads as usize);
            assert_eq!(p.lookahead, Dur::from_micros(3));
            assert!(p.note.is_none());
            // Every pod (group) lies in one partition.
            for n in &g.nodes {
                let same = g.nodes.iter().enumerate().filter(|(_, m)| m.group == n.group);
                let parts: std::collections::BTreeSet<u16> =
                    same.map(|(i, _)| p.node_part[i]).collect();
                assert!(n.group.is_none() || parts.len() == 1, "{} split", n.name);
            }
        }
        let p = plan(&sc, Some(8));
        assert_eq!(p.parts, 4);
        let note = p.note.unwrap();
        assert!(note.contains("threads = 8: 4 used"), "{note}");
        // One thread asked, or "auto" on 16 hosts: serial, nothing said.
        assert_eq!(plan(&sc, Some(1)).parts, 1);
        let auto = plan(&sc, None);
        assert!(auto.parts == 1 && auto.note.is_none());
    }

    #[test]
    fn what_runs_on_one_thread_says_why() {
        let dumbbell = scenario(
            "duration = \"1s\"\n[topology]\nbottleneck = { rate = \"10Mbps\", delay = \"5ms\" }\n\
             [[flows]]\ncc = \"reno\"\n",
        );
        let p = plan(&dumbbell, Some(2));
        assert_eq!(p.parts, 1);
        assert!(p.note.unwrap().contains("dumbbell"));
        let web = scenario(&FAT_TREE.replace(
            "pattern = \"permutation\"",
            "pattern = \"permutation\"\napp = \"web\"\nsize = \"10KB\"\nrequest = \"300B\"",
        ));
        assert!(plan(&web, Some(2)).note.unwrap().contains("web"));
        // Without a delay anywhere there is nothing to cut.
        let flat = scenario(&FAT_TREE.replace("delay = \"3us\"", "delay = \"0us\""));
        let p = plan(&flat, Some(2));
        assert_eq!(p.parts, 1);
        assert!(p.note.unwrap().contains("no link with a delay"));
    }

    /// A written graph that splits in two stays whole with a Wi-Fi BSS in it (one shared
    /// medium), and says why.
    #[test]
    fn a_graph_with_a_bss_runs_on_one_thread() {
        let graph = "duration = \"1s\"\n[topology]\nkind = \"graph\"\n\
             hosts = [\"h0\", \"h1\", \"s0\"]\nrouters = [\"r0\", \"r1\"]\n\
             links = [{ name = \"a\", a = \"h0\", b = \"r0\", rate = \"1Gbps\", delay = \"1ms\" },\n\
                      { name = \"c\", a = \"r0\", b = \"r1\", rate = \"1Gbps\", delay = \"2ms\" },\n\
                      { name = \"d\", a = \"h1\", b = \"r1\", rate = \"1Gbps\", delay = \"1ms\" }]\n";
        let flows = "[[flows]]\ncc = \"reno\"\nsrc = \"h0\"\ndst = \"h1\"\n";
        // The same with a wired link to s0 in place of the BSS splits in two.
        let wire = "{ name = \"s0\", a = \"r1\", b = \"s0\", rate = \"65Mbps\", delay = \"1ms\" }]";
        let wired = scenario(&format!(
            "{}{flows}",
            graph.replacen("delay = \"1ms\" }]", &format!("delay = \"1ms\" }}, {wire}"), 1)
        ));
        assert_eq!(plan(&wired, Some(2)).parts, 2);
        let bss =
            "[topology.wifi]\nap = \"r1\"\n[[topology.wifi.stations]]\nname = \"s0\"\nmcs = 7\n";
        let p = plan(&scenario(&format!("{graph}{bss}{flows}")), Some(2));
        assert_eq!(p.parts, 1);
        assert!(p.note.unwrap().contains("Wi-Fi BSS"));
    }

    #[test]
    fn a_graph_grows_regions_and_never_cuts_a_link_without_delay() {
        // Two routers joined by a 1 ms link, two hosts each; r1-h3 has no delay.
        let sc = scenario(
            "duration = \"1s\"\n[topology]\nkind = \"graph\"\nhosts = [\"h0\", \"h1\", \"h2\", \"h3\"]\n\
             routers = [\"r0\", \"r1\"]\n\
             links = [{ name = \"a\", a = \"h0\", b = \"r0\", rate = \"1Gbps\", delay = \"1ms\" },\n\
                      { name = \"b\", a = \"h1\", b = \"r0\", rate = \"1Gbps\", delay = \"1ms\" },\n\
                      { name = \"c\", a = \"r0\", b = \"r1\", rate = \"1Gbps\", delay = \"2ms\" },\n\
                      { name = \"d\", a = \"h2\", b = \"r1\", rate = \"1Gbps\", delay = \"1ms\" },\n\
                      { name = \"e\", a = \"h3\", b = \"r1\", rate = \"1Gbps\", delay = \"0ms\" }]\n\
             [[flows]]\ncc = \"reno\"\nsrc = \"h0\"\ndst = \"h3\"\n",
        );
        let g = sc.topology.graph.as_deref().unwrap();
        let p = plan(&sc, Some(2));
        assert_eq!(p.parts, 2);
        let at = |n: &str| p.node_part[g.node(n).unwrap() as usize];
        assert_eq!(at("h3"), at("r1"), "the link without delay is cut");
        assert_ne!(at("h0"), at("h3"), "the seeds are hosts far apart");
        assert!(p.lookahead >= Dur::from_millis(1));
    }
}
