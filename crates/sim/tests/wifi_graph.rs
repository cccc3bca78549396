//! A Wi-Fi BSS in a hand-written graph (`[topology.wifi]`, docs/wifi.md): the same BSS as the
//! `wifi` preset, joining a router of the graph (the AP) and hosts of it (the stations).

use crate::common;
use common::{f, refused, run_seeded};
use serde_json::Value;

const STATIONS: &str = "[[STA]]\nname = \"fast1\"\nmcs = 15\nshort_gi = true\n\
                        [[STA]]\nname = \"fast2\"\nmcs = 15\nshort_gi = true\n\
                        [[STA]]\nname = \"slow\"\nmcs = 0\n";

/// Downloads to the three stations, an upload from a fast one and a probe to it.
const FLOWS: &str = "[tcp]\nrecovery = \"sack\"\n\
    [[flows]]\ncc = \"cubic\"\nsrc = \"server\"\ndst = \"fast1\"\n\
    [[flows]]\ncc = \"cubic\"\nsrc = \"server\"\ndst = \"fast2\"\n\
    [[flows]]\ncc = \"cubic\"\nsrc = \"server\"\ndst = \"slow\"\n\
    [[flows]]\ncc = \"cubic\"\nsrc = \"fast2\"\ndst = \"server\"\n\
    [[flows]]\ntransport = \"udp\"\nsrc = \"server\"\ndst = \"fast1\"\nrate = \"0.1Mbps\"\n\
    packet_size = \"100B\"\n";

const HEAD: &str = "name = \"bss\"\nduration = \"6s\"\nwarmup = \"1s\"\n";

/// The preset: server – 1 Gbit/s, 5 ms – ap, and the BSS.
fn preset(bss_keys: &str) -> String {
    format!(
        "{HEAD}[topology]\nkind = \"wifi\"\nuplink = {{ rate = \"1Gbps\", delay = \"5ms\" }}\n\
         {bss_keys}\n{}{FLOWS}",
        STATIONS.replace("[[STA]]", "[[topology.stations]]")
    )
}

/// The same network written out: nodes in the preset's order (server, ap, the stations), the
/// wired link `uplink`, and `[topology.wifi]` at router `ap`.
fn graph(bss_keys: &str) -> String {
    format!(
        "{HEAD}[topology]\nkind = \"graph\"\nnodes = [{{ name = \"server\", kind = \"host\" }}, \
         {{ name = \"ap\", kind = \"router\" }}, {{ name = \"fast1\", kind = \"host\" }}, \
         {{ name = \"fast2\", kind = \"host\" }}, {{ name = \"slow\", kind = \"host\" }}]\n\
         [[topology.links]]\nname = \"uplink\"\na = \"server\"\nb = \"ap\"\nrate = \"1Gbps\"\n\
         delay = \"5ms\"\n[topology.wifi]\nap = \"ap\"\n{bss_keys}\n{}{FLOWS}",
        STATIONS.replace("[[STA]]", "[[topology.wifi.stations]]")
    )
}

fn strip(mut v: Value) -> Value {
    let e = v["engine"].as_object_mut().unwrap();
    for k in ["wall_s", "setup_s", "packets_per_wall_s"] {
        e.remove(k);
    }
    v
}

/// The graph expands to the preset's graph (same nodes in the same order, the same links in
/// the same places, the BSS's station links last), so every per-station and per-flow number
/// is the same, byte for byte — in all three AP modes and with FQ-MAC at the stations.
#[test]
fn a_bss_in_a_graph_is_the_preset_bss() {
    for keys in [
        "ap_queue = \"qdisc\"",
        "ap_queue = \"fq_mac\"\nstation_queue = \"fq_mac\"",
        "ap_queue = \"airtime\"",
    ] {
        let p = strip(run_seeded(&preset(keys), Some(3)));
        let g = strip(run_seeded(&graph(keys), Some(3)));
        println!(
            "{keys}: preset {:.2}/{:.2}/{:.2}, graph {:.2}/{:.2}/{:.2} Mbit/s down",
            f(&p, "wifi.stations.0.down_mbps"),
            f(&p, "wifi.stations.1.down_mbps"),
            f(&p, "wifi.stations.2.down_mbps"),
            f(&g, "wifi.stations.0.down_mbps"),
            f(&g, "wifi.stations.1.down_mbps"),
            f(&g, "wifi.stations.2.down_mbps"),
        );
        assert!(f(&g, "wifi.stations.0.down_mbps") > 1.0, "the BSS carries the downloads");
        assert_eq!(p["wifi"], g["wifi"], "{keys}");
        assert_eq!(p["flows"], g["flows"], "{keys}");
        assert_eq!(p, g, "{keys}");
    }
}

/// A BSS one router further in: server – r1 (4 ms) – ap (1 ms), and a wired host `desk` on
/// r1 (1 ms); one station at HT MCS 7 (65 Mbit/s, long GI) behind `ap`.
fn deeper(extra: &str, flows: &str) -> String {
    format!(
        "{HEAD}{extra}\n[topology]\nkind = \"graph\"\nhosts = [\"server\", \"desk\", \"sta0\"]\n\
         routers = [\"r1\", \"ap\"]\n\
         links = [{{ name = \"wan\", a = \"server\", b = \"r1\", rate = \"1Gbps\", delay = \"4ms\" }},\n\
                  {{ name = \"lan\", a = \"r1\", b = \"desk\", rate = \"100Mbps\", delay = \"1ms\" }},\n\
                  {{ name = \"ap-link\", a = \"r1\", b = \"ap\", rate = \"1Gbps\", delay = \"1ms\" }}]\n\
         [topology.wifi]\nap = \"ap\"\nap_queue = \"fq_mac\"\n\
         [[topology.wifi.stations]]\nname = \"sta0\"\nmcs = 7\n{flows}"
    )
}

/// Downstream UDP at 100 Mbit/s saturates the station: the AP alone contends, so the
/// station's throughput is the analytical MAC throughput at MCS 7 (tests/wifi.rs's formula;
/// the 4 ms limit allows 20 subframes: 20·12000 bit / 3998.5 µs = 60.02 Mbit/s), within the
/// 1 % tests/wifi.rs allows; the wired host beside it is untouched (TCP near its 100 Mbit/s).
/// The run is the same bytes asked for 2 threads: a BSS keeps the run on one.
///
/// Then a sparse probe from the station to the server crosses the BSS, `ap` and `r1` (5 ms of
/// wire) while the AP sends 4 ms aggregates: it waits for the rest of the one on the air
/// (2 ms on average), and loses the next contention to the AP about half the time (4 ms),
/// or collides with it (one more aggregate time): the mean wait is a few ms, and the test
/// asks for under 3 aggregate times, 5 + 12 ms.
#[test]
fn a_bss_deeper_in_a_graph_carries_its_station_and_stays_on_one_thread() {
    let flows =
        "[[flows]]\ntransport = \"udp\"\nsrc = \"server\"\ndst = \"sta0\"\nrate = \"100Mbps\"\n\
                 [[flows]]\ncc = \"cubic\"\nsrc = \"server\"\ndst = \"desk\"\n";
    let one = strip(run_seeded(&deeper("", flows), Some(1)));
    let sta = f(&one, "wifi.stations.0.down_mbps");
    let desk = f(&one, "flows.1.goodput_mbps");
    println!("station {sta:.2} Mbit/s (60.02), desk {desk:.2} Mbit/s");
    assert!((sta / 60.02 - 1.0).abs() < 0.01, "station {sta:.2} Mbit/s");
    assert!(desk > 90.0, "desk {desk:.2} Mbit/s");
    let two = strip(run_seeded(&deeper("threads = 2", flows), Some(1)));
    assert_eq!(one, two);
    let probe = "[[flows]]\ntransport = \"udp\"\nsrc = \"sta0\"\ndst = \"server\"\n\
                 rate = \"0.1Mbps\"\npacket_size = \"100B\"\n";
    let v = run_seeded(&deeper("", &(flows.to_string() + probe)), Some(1));
    let owd = f(&v, "flows.2.owd_mean_ms");
    println!("probe one-way {owd:.2} ms");
    assert!(f(&v, "flows.2.datagrams_delivered") > 400.0, "the probe is delivered");
    assert_eq!(f(&v, "flows.2.loss_pct"), 0.0);
    assert!(owd > 5.0 && owd < 17.0, "probe one-way {owd:.2} ms");
}

#[test]
fn bad_graph_bss_names_the_key() {
    let flows = "[[flows]]\ncc = \"cubic\"\nsrc = \"server\"\ndst = \"sta0\"\n";
    let with = |from: &str, to: &str| deeper("", flows).replacen(from, to, 1);
    refused(&with("ap = \"ap\"", "ap = \"r9\""), "topology.wifi.ap", "unknown node");
    refused(&with("ap = \"ap\"", "ap = \"desk\""), "topology.wifi.ap", "name a router");
    refused(&with("ap = \"ap\"\n", ""), "topology.wifi.ap", "missing");
    refused(
        &with("name = \"sta0\"", "name = \"sta9\""),
        "topology.wifi.stations[0].name",
        "not a node",
    );
    refused(&with("name = \"sta0\"", "name = \"r1\""), "topology.wifi.stations[0].name", "router");
    refused(
        &with("mcs = 7", "mcs = 7\n[[topology.wifi.stations]]\nname = \"sta0\"\nmcs = 3"),
        "topology.wifi.stations[1].name",
        "twice",
    );
    refused(&with("mcs = 7", ""), "topology.wifi.stations[0].rate", "needs a rate");
    refused(
        &with("ap_queue = \"fq_mac\"", "ap_queue = \"fq\""),
        "topology.wifi.ap_queue",
        "qdisc, fq_mac, airtime",
    );
    refused(
        &with("ap_queue = \"fq_mac\"", "station_queue = \"red\""),
        "topology.wifi.station_queue",
        "fifo, fq_mac",
    );
    refused(
        &with("ap_queue = \"fq_mac\"", "ap_queue = \"fq_mac\"\nqdisc = { kind = \"pie\" }"),
        "topology.wifi.qdisc",
        "only with",
    );
    refused(
        &with("ap_queue = \"fq_mac\"", "aggregation = { max_mpdus = 0 }"),
        "topology.wifi.aggregation.max_mpdus",
        "1",
    );
    refused(
        &with("ap_queue = \"fq_mac\"", "uplink = { rate = \"1Gbps\" }"),
        "topology.wifi.uplink",
        "unknown key",
    );
    // A station link's name is taken like any link's.
    refused(
        &with("name = \"lan\"", "name = \"sta0\""),
        "topology.wifi.stations[0]",
        "duplicate link name",
    );
    refused(
        &with("[topology.wifi]", "[topology.wifi]\nfoo = 1"),
        "topology.wifi.foo",
        "unknown key",
    );
}
