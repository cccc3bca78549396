//! Shared helpers for the integration tests: run a TOML scenario, read its summary.

#![allow(dead_code)]

use bloatlab_sim::{run_toml, validate_json, RunError, RunOptions};
use serde_json::Value;

pub fn run(toml: &str) -> Value {
    run_seeded(toml, None)
}

pub fn run_seeded(toml: &str, seed: Option<u64>) -> Value {
    let out = run_toml(toml, &RunOptions { seed, series: false, ..Default::default() })
        .unwrap_or_else(|e| panic!("run failed: {e}"));
    serde_json::from_str(&out.summary_json).expect("summary is JSON")
}

/// A run's summary (engine fields blanked) and series, as one string: what "same seed, same
/// bytes" tests compare between two runs.
pub fn summary_and_series(toml: &str, seed: u64) -> String {
    let opts = RunOptions { seed: Some(seed), series: true, ..Default::default() };
    let out = run_toml(toml, &opts).unwrap_or_else(|e| panic!("run failed: {e}"));
    let mut v: Value = serde_json::from_str(&out.summary_json).expect("summary is JSON");
    v["engine"] = Value::Null;
    serde_json::to_string(&v).unwrap() + &format!("{:?}", out.tables)
}

pub fn f(v: &Value, path: &str) -> f64 {
    let mut cur = v;
    for part in path.split('.') {
        cur = match part.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[part],
        };
    }
    cur.as_f64().unwrap_or_else(|| panic!("{path} is not a number: {cur}"))
}

/// The shared Mahimahi traces (GPL data, not in this repository): `$BLOATLAB_TRACES`, else
/// `shared/traces/mahimahi` beside the repository, else this workplace's `/work/shared/...`
/// (a clone elsewhere on the machine still finds them). Panics, naming the places tried,
/// when none exists: the trace tests must not pass silently without their data.
#[allow(dead_code)] // not every test file reads traces
pub fn mahimahi_dir() -> std::path::PathBuf {
    let mut tried = Vec::new();
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("BLOATLAB_TRACES") {
        candidates.push(std::path::PathBuf::from(dir));
    }
    candidates.push(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/traces/mahimahi"),
    );
    candidates.push(std::path::PathBuf::from("/work/shared/traces/mahimahi"));
    for dir in candidates {
        if dir.join("TMobile-LTE-short.down").exists() {
            return dir;
        }
        tried.push(dir.display().to_string());
    }
    panic!(
        "the shared Mahimahi traces were not found (tried: {}); set BLOATLAB_TRACES",
        tried.join(", ")
    );
}

/// Asserts that `toml` is refused as bad input at key `path` with a message containing
/// `fragment`, and that `bloatlab validate` (validate_json) says the same without running.
#[track_caller]
pub fn refused(toml: &str, path: &str, fragment: &str) {
    match run_toml(toml, &RunOptions::default()) {
        Err(RunError::Invalid(e)) => {
            assert_eq!(e.path, path, "{e}");
            assert!(e.message.contains(fragment), "{path}: {}", e.message);
            let v: serde_json::Value = toml::from_str(toml).unwrap();
            assert_eq!(validate_json(&v.to_string()).unwrap_err(), e);
        }
        Err(e) => panic!("expected bad input at {path}, got {e}"),
        Ok(_) => panic!("expected bad input at {path}, the run succeeded"),
    }
}

/// A random small graph: a random tree over the routers plus extra router links, each host
/// on a random router, random rates, delays, queues and loss; random flows between hosts.
#[allow(clippy::too_many_arguments)] // the proptest strategy's draws, one argument each
pub fn random_graph(
    routers: usize,
    hosts: usize,
    extra: &[(usize, usize)],
    attach: &[usize],
    rates: &[u32],
    flows: &[(usize, usize, u8)],
    ecmp: bool,
    aqm: bool,
) -> String {
    let mut t = String::from("duration = \"2s\"\n[topology]\nkind = \"graph\"\n");
    t += if ecmp { "ecmp = \"hash\"\n" } else { "" };
    t += &format!(
        "hosts = [{}]\n",
        (0..hosts).map(|h| format!("\"h{h}\"")).collect::<Vec<_>>().join(", ")
    );
    t += &format!(
        "routers = [{}]\n",
        (0..routers).map(|r| format!("\"r{r}\"")).collect::<Vec<_>>().join(", ")
    );
    let mut k = 0;
    let mut link = |t: &mut String, a: String, b: String| {
        let rate = rates[k % rates.len()];
        let q = if aqm && k % 2 == 0 {
            "{ kind = \"codel\", limit = \"30p\" }"
        } else {
            "{ limit = \"20p\" }"
        };
        let loss = if k % 3 == 0 { 0.01 } else { 0.0 };
        *t += &format!("[[topology.links]]\nname = \"l{k}\"\na = \"{a}\"\nb = \"{b}\"\nrate = \"{rate}Mbps\"\ndelay = \"{}ms\"\nloss = {loss}\nreverse_loss = {loss}\nqueue = {q}\nreverse_queue = {q}\n", k % 4);
        k += 1;
    };
    for r in 1..routers {
        link(&mut t, format!("r{}", extra[r % extra.len()].0 % r), format!("r{r}"));
    }
    for &(a, b) in extra {
        let (a, b) = (a % routers, b % routers);
        if a != b {
            link(&mut t, format!("r{a}"), format!("r{b}"));
        }
    }
    for h in 0..hosts {
        link(&mut t, format!("h{h}"), format!("r{}", attach[h % attach.len()] % routers));
    }
    for &(s, d, kind) in flows {
        let (s, d) = (s % hosts, d % hosts);
        if s == d {
            continue;
        }
        t += &match kind % 3 {
            0 => format!("[[flows]]\ncc = \"cubic\"\nsrc = \"h{s}\"\ndst = \"h{d}\"\n"),
            1 => format!("[[flows]]\ncc = \"reno\"\nsrc = \"h{s}\"\ndst = \"h{d}\"\nsize = \"200KB\"\nstart = \"0.3s\"\n"),
            _ => format!("[[flows]]\ntransport = \"udp\"\nrate = \"2Mbps\"\nsrc = \"h{s}\"\ndst = \"h{d}\"\n"),
        };
    }
    t += "[[flows]]\ncc = \"bbr\"\nsrc = \"h0\"\ndst = \"h1\"\n";
    t
}

/// Random graph scenarios ([`random_graph`]) of `routers` routers and `hosts` hosts (the
/// draws of the other parts scale with them).
pub fn random_graphs(
    routers: std::ops::Range<usize>,
    hosts: std::ops::Range<usize>,
) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let (r, h) = (routers.end, hosts.end);
    (
        routers,
        hosts,
        proptest::collection::vec((0..r, 0..r), 1..4),
        proptest::collection::vec(0..r, 1..h),
        proptest::collection::vec(1u32..50, 1..5),
        proptest::collection::vec((0..h, 0..h, 0u8..3), 0..5),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(routers, hosts, extra, attach, rates, flows, ecmp, aqm)| {
            random_graph(routers, hosts, &extra, &attach, &rates, &flows, ecmp, aqm)
        })
}
