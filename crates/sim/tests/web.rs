//! The web application: request/response over a new connection each time.

use crate::common;
use common::{f, run, run_seeded};

/// On an idle constant path a response that fits the initial window takes two round trips:
/// the handshake, then the request out and the response back.
#[test]
fn response_time_is_two_round_trips_for_an_initial_window() {
    let s = run(r#"
        duration = "10s"
        [topology]
        bottleneck = { rate = "100Mbps", delay = "10ms" }
        access = { rate = "1Gbps", delay = "5ms" }
        [[flows]]
        cc = "cubic"
        app = "web"
        size = "14480B"
        request = "300B"
        think = "1s"
        requests = 3
    "#);
    let r = &s["flows"][0]["responses"];
    assert_eq!(r["n"], 3);
    for t in r["times_s"].as_array().unwrap() {
        let t = t.as_f64().unwrap();
        assert!(t > 0.080 && t < 0.082, "response time {t}");
    }
    assert!(r["ci95_s"].as_f64().unwrap() < 1e-6, "identical requests give identical times");
    // Three 14480-byte responses, nothing else.
    assert_eq!(f(&s, "flows.0.bytes_delivered"), 3.0 * 14480.0);
}

fn web_35g(background: &str, seed: u64) -> f64 {
    web_35g_n(background, 1, seed)
}

fn web_35g_n(background: &str, n: u32, seed: u64) -> f64 {
    let bg = if background.is_empty() {
        String::new()
    } else {
        format!("[[flows]]\ncc = \"{background}\"\ncount = {n}\n")
    };
    let s = run_seeded(
        &format!(
            r#"
            duration = "60s"
            warmup = "10s"
            [topology]
            kind = "cellular"
            profile = "3.5g"
            [[flows]]
            cc = "cubic"
            app = "web"
            size = "320KB"
            think = "1s"
            start = "5s"
            {bg}
            "#
        ),
        Some(seed),
    );
    f(&s, "flows.0.responses.mean_s")
}

/// Alfredsson et al. Fig. 2 (3.5G): a 320 kB web response takes several times longer beside
/// one CUBIC background flow than alone, and a Westwood+ background flow hurts it less than a
/// CUBIC one (it drains the base-station buffer after each loss).
#[test]
fn background_flows_bloat_web_responses_cubic_most() {
    let alone = web_35g("", 1);
    let cubic = web_35g("cubic", 1);
    let westwood = web_35g("westwood+", 1);
    assert!((0.4..1.0).contains(&alone), "unloaded response {alone:.3} s (paper: about 0.8 s)");
    assert!(cubic > 3.0 * alone, "CUBIC background: {cubic:.2} s vs {alone:.2} s alone");
    assert!(westwood < cubic, "Westwood+ background {westwood:.2} s vs CUBIC {cubic:.2} s");
    let five_cubic = web_35g_n("cubic", 5, 1);
    assert!(five_cubic > 3.0 * alone, "five CUBIC flows: {five_cubic:.2} s vs {alone:.2} s alone");
}

#[test]
fn web_settings_belong_to_web_flows() {
    use bloatlab_sim::{run_toml, RunError, RunOptions};
    let path_of = |sc: &str| match run_toml(sc, &RunOptions::default()) {
        Err(RunError::Invalid(e)) => e.path,
        other => panic!("expected an invalid scenario, got {other:?}"),
    };
    let head = "duration = \"1s\"\n[topology]\nbottleneck = { rate = \"1Mbps\", delay = \"1ms\" }\n[[flows]]\ncc = \"reno\"\n";
    assert_eq!(path_of(&format!("{head}think = \"1s\"\n")), "flows[0].think");
    assert_eq!(path_of(&format!("{head}app = \"web\"\nrequest = \"0B\"\n")), "flows[0].request");
    assert_eq!(path_of(&format!("{head}app = \"web\"\nrequests = 0\n")), "flows[0].requests");
}
