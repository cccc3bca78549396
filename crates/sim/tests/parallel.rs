//! The parallel engine (world/parallel.rs) against the serial one: the same scenario and seed
//! give the same summary, time series and pcap bytes with 1, 2, 3 and 8 threads — on the
//! fat-tree (pods as partitions, cores dealt out), the leaf-spine (leaves) and random graphs
//! (regions grown from hosts, links without delay never cut). Wall-clock fields aside, any
//! difference is a bug: the tolerance is zero.

use crate::common;
use bloatlab_sim::{run_toml, Column, RunOptions};
use common::random_graphs;
use proptest::prelude::*;
use serde_json::Value;

/// The summary without the wall-clock fields, the series tables, and the pcap files' bytes.
type Outputs = (String, Vec<String>, Vec<(String, Vec<u8>)>);

fn outputs(toml: &str, threads: u32, capture: bool) -> Outputs {
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = RunOptions {
        series: true,
        threads: Some(threads),
        capture_dir: capture.then(|| dir.path().to_path_buf()),
        ..RunOptions::default()
    };
    let out = run_toml(toml, &opts).unwrap_or_else(|e| panic!("{threads} threads: {e}"));
    let mut s: Value = serde_json::from_str(&out.summary_json).unwrap();
    for k in ["wall_s", "packets_per_wall_s", "setup_s"] {
        s["engine"].as_object_mut().unwrap().remove(k);
    }
    let tables = out
        .tables
        .iter()
        .map(|t| {
            let cols: Vec<String> = t
                .columns
                .iter()
                .map(|(n, c)| match c {
                    // Bits, not values: NaN == NaN here, and -0.0 != 0.0.
                    Column::F64(v) => {
                        format!("{n}:{:?}", v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
                    }
                    Column::I64(v) => format!("{n}:{v:?}"),
                    Column::Str(v) => format!("{n}:{v:?}"),
                })
                .collect();
            format!("{}:{}", t.name, cols.join(";"))
        })
        .collect();
    let mut pcaps: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap())
        })
        .collect();
    pcaps.sort();
    (serde_json::to_string(&s).unwrap(), tables, pcaps)
}

fn same_for_threads(toml: &str, threads: &[u32], capture: bool) -> Value {
    let one = outputs(toml, 1, capture);
    for &n in threads {
        let other = outputs(toml, n, capture);
        assert_eq!(one.0, other.0, "summary with {n} threads");
        assert_eq!(one.1, other.1, "series with {n} threads");
        assert_eq!(one.2.len(), other.2.len(), "pcap files with {n} threads");
        for (a, b) in one.2.iter().zip(&other.2) {
            assert!(a == b, "pcap {} with {n} threads", a.0);
        }
    }
    serde_json::from_str(&one.0).unwrap()
}

/// The k = 4 fat-tree of scenarios/fat-tree.toml (DCTCP, step marking, ECMP by hash), with a
/// warm-up, samples every millisecond and captures on a core link both ways (cut by every
/// split) and on a host link.
const FAT_TREE: &str = r#"
name = "parallel-fat-tree"
duration = "20ms"
warmup = "2ms"
seed = 3
[metrics]
interval = "1ms"
links = ["agg0_0-core0", "agg0_0-core0_rev", "edge0_0-agg0_0"]
[capture]
links = ["agg0_0-core0", "agg0_0-core0_rev", "h0-edge0_0"]
[topology]
kind = "fat_tree"
k = 4
link = { rate = "10Gbps", delay = "1us" }
queue = { kind = "step", limit = "300p", threshold = "65p" }
ecmp = "hash"
[[flows]]
cc = "dctcp"
pattern = "permutation"
size = "2MB"
[[flows]]
transport = "udp"
rate = "100Mbps"
src = "h3"
dst = "h12"
"#;

#[test]
fn fat_tree_summary_series_and_pcap_are_the_same_bytes_on_1_2_3_and_8_threads() {
    let s = same_for_threads(FAT_TREE, &[2, 3, 8], true);
    // The run did something worth comparing: flows completed, packets crossed the cores.
    let done = s["flows"].as_array().unwrap().iter().filter(|f| f["fct_s"].is_number()).count();
    assert!(done >= 12, "{done} of 16 DCTCP flows completed");
    assert!(s["links"][0]["utilization_pct"].as_f64().unwrap() > 1.0);
}

#[test]
fn leaf_spine_incast_is_the_same_bytes_on_2_and_3_threads() {
    let toml = r#"
duration = "15ms"
seed = 5
[topology]
kind = "leaf_spine"
leaves = 4
spines = 2
hosts_per_leaf = 3
link = { rate = "1Gbps", delay = "2us" }
fabric = { rate = "4Gbps", delay = "1us" }
queue = { kind = "droptail", limit = "100p" }
ecmp = "hash"
[[flows]]
cc = "cubic"
pattern = "incast"
dst = "h0"
size = "300KB"
[[flows]]
cc = "reno"
src = "h4"
dst = "h10"
"#;
    same_for_threads(toml, &[2, 3], false);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    /// Random graphs (links of 0-3 ms: the ones without delay are never cut; loss; CoDel;
    /// TCP, UDP, sized flows starting late): 2 and 3 threads give the bytes of 1.
    #[test]
    fn random_graphs_are_the_same_bytes_on_2_and_3_threads(t in random_graphs(2..6, 2..7)) {
        let t = t.replace("duration = \"2s\"", "duration = \"600ms\"");
        let one = outputs(&t, 1, false);
        for n in [2, 3] {
            let other = outputs(&t, n, false);
            prop_assert_eq!(&one.0, &other.0);
            prop_assert_eq!(&one.1, &other.1);
        }
    }
}
