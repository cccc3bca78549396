//! Bad graph topologies and graph flows: each is refused when read (exit code 2) with the key
//! path that is wrong and what is allowed.

use bloatlab_sim::{run_toml, RunOptions};

use crate::common;
use common::refused;

/// A line graph h1 - r1 - r2 - h2 plus `extra` topology lines and `flows`.
fn graph(extra: &str, flows: &str) -> String {
    format!(
        r#"
        duration = "1s"
        [topology]
        kind = "graph"
        hosts = ["h1", "h2"]
        routers = ["r1", "r2"]
        {extra}
        [[topology.links]]
        a = "h1"
        b = "r1"
        rate = "100Mbps"
        delay = "1ms"
        [[topology.links]]
        a = "r1"
        b = "r2"
        rate = "10Mbps"
        delay = "5ms"
        [[topology.links]]
        a = "r2"
        b = "h2"
        rate = "100Mbps"
        delay = "1ms"
        {flows}
        "#
    )
}

const FLOW: &str = "[[flows]]\ncc = \"reno\"\nsrc = \"h1\"\ndst = \"h2\"\n";

#[test]
fn the_base_graph_runs() {
    run_toml(&graph("", FLOW), &RunOptions::default()).unwrap();
}

#[test]
fn routing_loops_and_impossible_static_routes() {
    let route = |from: &str, to: &str, via: &str| {
        format!("[[flows]]\ncc = \"reno\"\nsrc = \"h1\"\ndst = \"h2\"\n[[topology.routes]]\nfrom = \"{from}\"\nto = \"{to}\"\nvia = {via}\n")
    };
    refused(
        &graph("", &route("h1", "h2", r#"["r1", "r2", "r1"]"#)),
        "topology.routes[0].via",
        "routing loop",
    );
    refused(
        &graph("", &route("h1", "h2", r#"["r2"]"#)),
        "topology.routes[0].via",
        "no link between \"h1\" and \"r2\"",
    );
    refused(
        &graph("", &route("h1", "h2", r#"["r1", "h2"]"#)),
        "topology.routes[0].via[1]",
        "hosts do not forward",
    );
    refused(&graph("", &route("h1", "r2", r#"["r1"]"#)), "topology.routes[0].to", "is a router");
    refused(
        &graph("", &route("h1", "h2", r#"["r9"]"#)),
        "topology.routes[0].via[0]",
        "unknown node \"r9\"",
    );
    // A valid static route runs.
    run_toml(&graph("", &route("h1", "h2", r#"["r1", "r2"]"#)), &RunOptions::default()).unwrap();
}

#[test]
fn unreachable_hosts() {
    // h3 hangs off r3, which nothing joins to the rest.
    let g = graph("", FLOW)
        .replace(r#"hosts = ["h1", "h2"]"#, r#"hosts = ["h1", "h2", "h3"]"#)
        .replace(r#"routers = ["r1", "r2"]"#, r#"routers = ["r1", "r2", "r3"]"#)
        + "[[topology.links]]\na = \"h3\"\nb = \"r3\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
    run_toml(&g, &RunOptions::default()).unwrap();
    let bad = g.replace("dst = \"h2\"", "dst = \"h3\"");
    refused(&bad, "flows[0].dst", "host \"h3\" is unreachable from \"h1\"");
    refused(
        &g.replace("src = \"h1\"\ndst = \"h2\"", "pattern = \"incast\"\ndst = \"h3\""),
        "flows[0].dst",
        "unreachable",
    );
    refused(
        &g.replace("src = \"h1\"\ndst = \"h2\"", "pattern = \"permutation\""),
        "flows[0].pattern",
        "unreachable",
    );
    // Hosts do not forward: h1 - hx - h2 is no path.
    let via_host = r#"
        duration = "1s"
        [topology]
        kind = "graph"
        hosts = ["h1", "hx", "h2"]
        links = [ { a = "h1", b = "hx", rate = "1Mbps", delay = "1ms" }, { a = "hx", b = "h2", rate = "1Mbps", delay = "1ms" } ]
        [[flows]]
        cc = "reno"
        src = "h1"
        dst = "h2"
    "#;
    refused(via_host, "flows[0].dst", "unreachable");
}

#[test]
fn unknown_nodes_and_duplicate_names() {
    refused(
        &graph("", FLOW).replacen("b = \"r1\"", "b = \"r7\"", 1),
        "topology.links[0].b",
        "unknown node \"r7\"",
    );
    refused(
        &graph("", FLOW).replacen("a = \"r1\"", "a = \"r2\"", 1),
        "topology.links[1].b",
        "two different nodes",
    );
    refused(
        &graph("", FLOW).replace(r#"routers = ["r1", "r2"]"#, r#"routers = ["r1", "r2", "h1"]"#),
        "topology.routers[2]",
        "duplicate node name \"h1\"",
    );
    refused(
        &graph("", FLOW).replacen("a = \"r1\"", "name = \"h1-r1\"\na = \"r1\"", 1),
        "topology.links[1].name",
        "duplicate link name \"h1-r1\"",
    );
    refused(
        &graph("", FLOW).replacen("a = \"r1\"", "name = \"h1-r1_rev\"\na = \"r1\"", 1),
        "topology.links[1].name",
        "duplicate link name",
    );
    let nodes = graph("", FLOW).replace(
        r#"hosts = ["h1", "h2"]"#,
        r#"nodes = [{ name = "h1", kind = "host" }, { name = "h2", kind = "switch" }]"#,
    );
    refused(&nodes, "topology.nodes[1].kind", "unknown node kind \"switch\"");
    refused(
        &graph("", FLOW).replacen("delay = \"1ms\"", "delay = \"1ms\"\nlatency = \"1ms\"", 1),
        "topology.links[0].latency",
        "unknown key (allowed: a, b, name, queue",
    );
    refused(
        &graph("", FLOW).replacen("rate = \"100Mbps\"", "rate = \"fast\"", 1),
        "topology.links[0].rate",
        "",
    );
    refused(&graph("ecmp = \"random\"", FLOW), "topology.ecmp", "unknown ECMP choice \"random\"");
}

#[test]
fn bad_graph_flows() {
    refused(
        &graph("", &FLOW.replace("dst = \"h2\"", "dst = \"h1\"")),
        "flows[0].dst",
        "from host \"h1\" to itself",
    );
    refused(
        &graph("", &FLOW.replace("src = \"h1\"", "src = \"r1\"")),
        "flows[0].src",
        "\"r1\" is a router",
    );
    refused(
        &graph("", &FLOW.replace("dst = \"h2\"", "dst = \"r2\"")),
        "flows[0].dst",
        "\"r2\" is a router",
    );
    refused(
        &graph("", &FLOW.replace("dst = \"h2\"", "dst = \"h9\"")),
        "flows[0].dst",
        "unknown node \"h9\"",
    );
    refused(
        &graph("", &FLOW.replace("dst = \"h2\"\n", "")),
        "flows[0].dst",
        "missing required key",
    );
    refused(
        &graph("", &FLOW.replace("dst = \"h2\"", "dst = \"h2\"\npattern = \"permutation\"")),
        "flows[0].src",
        "chooses the hosts itself",
    );
    refused(
        &graph("", &FLOW.replace("src = \"h1\"", "pattern = \"incast\"\nsrc = \"h1\"")),
        "flows[0].src",
        "takes dst only",
    );
    refused(
        &graph("", &FLOW.replace("src = \"h1\"\ndst = \"h2\"", "pattern = \"parking_lot\"")),
        "flows[0].pattern",
        "needs topology.kind = \"parking_lot\"",
    );
    refused(
        &graph("", &FLOW.replace("src = \"h1\"\ndst = \"h2\"", "pattern = \"all\"")),
        "flows[0].pattern",
        "unknown flow pattern \"all\"",
    );
    refused(
        &graph("", &(FLOW.to_string() + "rtt = \"50ms\"\n")),
        "flows[0].rtt",
        "a graph flow goes from its src host",
    );
    refused(
        &graph("", &(FLOW.to_string() + "direction = \"reverse\"\n")),
        "flows[0].direction",
        "a graph flow goes from its src host",
    );
    // And on the dumbbell, hosts are no setting.
    let db = "duration = \"1s\"\n[topology]\nbottleneck = { rate = \"1Mbps\", delay = \"1ms\" }\n[[flows]]\ncc = \"reno\"\nsrc = \"h1\"\n";
    refused(db, "flows[0].src", "settings of graph topologies");
}

#[test]
fn paths_longer_than_a_route_are_refused() {
    // Nine routers in a row: h1 → r0 … r8 → h2 is ten links.
    let mut t = String::from(
        "duration = \"1s\"\n[topology]\nkind = \"graph\"\nhosts = [\"h1\", \"h2\"]\nrouters = [",
    );
    t += &(0..9).map(|i| format!("\"r{i}\"")).collect::<Vec<_>>().join(", ");
    t += "]\n";
    let mut link = |a: &str, b: &str| {
        t += &format!(
            "[[topology.links]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n"
        )
    };
    link("h1", "r0");
    for i in 0..8 {
        link(&format!("r{i}"), &format!("r{}", i + 1));
    }
    link("r8", "h2");
    t += FLOW;
    refused(&t, "flows[0].dst", "crosses 10 links");
}

#[test]
fn bad_presets_and_reported_links() {
    let fat = |extra: &str| {
        format!("duration = \"1s\"\n[topology]\nkind = \"fat_tree\"\n{extra}\n[[flows]]\ncc = \"reno\"\npattern = \"permutation\"\n")
    };
    refused(&fat("k = 3"), "topology.k", "must be even");
    refused(&fat("k = 0"), "topology.k", "");
    refused(
        &fat("pods = 4"),
        "topology.pods",
        "unknown key (allowed: kind, k, link, queue, ecmp, gateway)",
    );
    refused(
        &fat("link = { rate = \"10Gbps\", delay = \"1us\", mtu = 9000 }"),
        "topology.link.mtu",
        "unknown key",
    );
    refused(&fat("queue = { kind = \"fifo9\" }"), "topology.queue.kind", "");
    let pl = |extra: &str| {
        format!("duration = \"1s\"\n[topology]\nkind = \"parking_lot\"\nbottleneck = {{ rate = \"10Mbps\", delay = \"5ms\" }}\n{extra}\n[[flows]]\ncc = \"reno\"\npattern = \"parking_lot\"\n")
    };
    refused(&pl("k = 7"), "topology.k", "");
    refused(&pl("hops = 2"), "topology.hops", "unknown key");
    refused(
        &pl("").replace("bottleneck = { rate = \"10Mbps\", delay = \"5ms\" }\n", ""),
        "topology.bottleneck",
        "missing required key",
    );
    let ls = |extra: &str| {
        format!("duration = \"1s\"\n[topology]\nkind = \"leaf_spine\"\n{extra}\n[[flows]]\ncc = \"reno\"\npattern = \"incast\"\ndst = \"h0\"\n")
    };
    refused(&ls("spines = 0"), "topology.spines", "");
    refused(&ls("fabric = { delay = \"-1us\" }"), "topology.fabric.delay", "");
    refused(
        &(ls("") + "[metrics]\nlinks = [\"h0-leaf9\"]\n"),
        "metrics.links[0]",
        "unknown link \"h0-leaf9\"",
    );
    refused(&(ls("gateway = { kind = \"ewt\" }")), "topology.gateway.link", "missing required key");
    refused(
        &(ls("gateway = { kind = \"ewt\", link = \"nowhere\" }")),
        "topology.gateway.link",
        "unknown link",
    );
    refused(
        &(ls("") + "[capture]\nlinks = [\"leaf0-spine7\"]\n"),
        "capture.links[0]",
        "unknown link",
    );
    refused(
        &ls("kind = \"ring\"").replace("kind = \"leaf_spine\"\n", ""),
        "topology.kind",
        "unknown topology kind \"ring\"",
    );
}
