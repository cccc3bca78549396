//! Schedule-driven links (net/schedule.rs) on a LEO-like access path: the RTT steps at every
//! reassignment, throughput dips at the switch's loss burst, FQ-CoDel keeps its target across
//! steps, and bad schedules are refused with their key path (and file line).

use crate::cc_util;
use crate::common;
use cc_util::run;

/// The shipped example schedule (reassignments at 12, 27, 42, 57 s).
fn example() -> String {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/traces/leo-example.sched");
    std::fs::canonicalize(p).unwrap().to_str().unwrap().to_string()
}

/// One-way delays of the example's intervals, and where they start (s).
const STEPS: [(f64, f64); 5] =
    [(0.0, 14.0), (12.0, 21.5), (27.0, 16.0), (42.0, 24.0), (57.0, 13.0)];

fn scenario(queue: &str, cc: Option<&str>, schedule: &str) -> String {
    let load = cc.map_or(String::new(), |cc| {
        format!("[[flows]]\ntransport = \"tcp\"\ncc = \"{cc}\"\ntcp = {{ recovery = \"sack\" }}\n")
    });
    format!(
        r#"
        duration = "60s"
        [metrics]
        interval = "100ms"
        [topology]
        bottleneck = {{ schedule = {schedule}, reverse_rate = "15Mbps" }}
        bottleneck_queue = {queue}
        access = {{ rate = "1Gbps", delay = "1ms" }}
        {load}
        [[flows]]
        transport = "udp"
        app = "probe"
        "#
    )
}

/// The probe flow's RTT samples as (t_s, rtt_ms).
fn probe_rtts(r: &cc_util::Run, flow: f64) -> Vec<(f64, f64)> {
    let (t, f, rtt) = (r.num("t_s"), r.num("flow"), r.num("rtt_ms"));
    (0..t.len())
        .filter(|&i| f[i] == flow && rtt[i].is_finite() && rtt[i] > 0.0)
        .map(|i| (t[i], rtt[i]))
        .collect()
}

/// Idle path: every probe RTT is the interval's 2 × (one-way delay + two 1 ms access links)
/// plus serialization (a 64-byte probe: well under 0.1 ms at these rates), so ±0.5 ms.
#[test]
fn idle_rtt_steps_at_each_reassignment() {
    let r = run(&scenario(r#"{ limit = "2MB" }"#, None, &format!("{:?}", example())), None, true);
    let rtts = probe_rtts(&r, 0.0);
    assert!(rtts.len() >= 250, "{} samples", rtts.len());
    for (t, rtt) in rtts {
        let d = STEPS.iter().rev().find(|(at, _)| t >= at + 0.2).or(STEPS.first()).unwrap().1;
        let near_step = STEPS.iter().any(|(at, _)| (t - at).abs() < 0.2);
        if !near_step {
            let want = 2.0 * (d + 2.0);
            assert!((rtt - want).abs() < 0.5, "t = {t:.1} s: RTT {rtt:.2} ms, want {want:.1}");
        }
    }
}

/// Mean of `v` over samples with t in [from, to).
fn mean_in(t: &[f64], v: &[f64], from: f64, to: f64) -> f64 {
    let xs: Vec<f64> =
        t.iter().zip(v).filter(|(t, _)| **t >= from && **t < to).map(|(_, v)| *v).collect();
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The example's delay steps and loss bursts at a constant 100 Mbit/s (the rate column `-`,
/// the link's own `rate` serving), so that a dip is the switch's doing and not a rate change.
fn constant_rate_schedule() -> std::path::PathBuf {
    let text = std::fs::read_to_string(example()).unwrap();
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            format!("{} {} - {}", c[0], c[1], c[3])
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("bloatlab-leo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("constant-rate.sched");
    std::fs::write(&p, lines.join("\n")).unwrap();
    p
}

/// Goodput of flow 0 (Mbit/s): the mean over the three seconds before each switch, and the
/// lowest 100 ms sample in the half second after it.
fn around_switches(r: &cc_util::Run) -> Vec<(f64, f64)> {
    let (t, f, g) = (r.num("t_s"), r.num("flow"), r.num("goodput_mbps"));
    let (t0, g0): (Vec<f64>, Vec<f64>) =
        (0..t.len()).filter(|&i| f[i] == 0.0).map(|i| (t[i], g[i])).unzip();
    let low = |from: f64, to: f64| {
        t0.iter()
            .zip(&g0)
            .filter(|(t, _)| **t > from && **t <= to)
            .map(|(_, g)| *g)
            .fold(f64::MAX, f64::min)
    };
    STEPS[1..].iter().map(|&(at, _)| (mean_in(&t0, &g0, at - 3.0, at), low(at, at + 0.5))).collect()
}

/// A 30 % loss burst for 50 ms at each switch leaves holes that the receiver's in-order
/// delivery waits on for a round trip of repair (and costs CUBIC a window reduction, × 0.7):
/// goodput in the 100 ms samples right after the switch falls well below the rate before it
/// (measured on this 0.5 MB buffer, 40 ms at 100 Mbit/s: CUBIC to 15-25 Mbit/s from ~96,
/// BBR to 22-43 at three switches and 89 at the fourth, whose holes were repaired within one
/// sample). The bounds: the lowest sample of the half second after every switch is below the
/// mean of the three seconds before by ≥ 5 %, and on average over the switches below 60 % of it.
#[test]
fn throughput_dips_at_each_switch() {
    let sched = constant_rate_schedule();
    let sched_s = format!("{:?}", sched.to_str().unwrap());
    for cc in ["cubic", "bbr"] {
        let toml = scenario(r#"{ limit = "500KB" }"#, Some(cc), &sched_s)
            .replace("schedule = ", "rate = \"100Mbps\", schedule = ");
        let r = run(&toml, None, true);
        let dips = around_switches(&r);
        for &(before, after) in &dips {
            eprintln!("{cc}: {before:.1} Mbit/s before a switch, lowest after {after:.1}");
            assert!(after < 0.95 * before, "{cc}: {before:.1} → {after:.1} Mbit/s");
        }
        let mean = dips.iter().map(|(b, a)| a / b).sum::<f64>() / dips.len() as f64;
        assert!(mean < 0.6, "{cc}: the lowest sample after a switch is {mean:.2} of before");
    }
    std::fs::remove_dir_all(sched.parent().unwrap()).ok();
}

/// FQ-CoDel across the steps (rate 110 → 80 → 140 → 65 → 170 Mbit/s, delay 14 → 24 ms): its
/// queue stays near the 5 ms target — each second's mean sojourn at most 2 × target in the
/// three seconds after every step (a rate drop builds a queue CoDel needs a few 100 ms
/// intervals to control), the whole run's p95 under 2 × target — where the 2 MB drop-tail
/// buffer holds ~100 ms.
#[test]
fn fq_codel_keeps_its_target_across_steps() {
    let sched = format!("{:?}", example());
    let r = run(&scenario(r#"{ kind = "fq_codel" }"#, Some("cubic"), &sched), None, true);
    let (qt, soj) = (r.queue("bottleneck", "t_s"), r.queue("bottleneck", "sojourn_ms"));
    for &(at, _) in &STEPS[1..] {
        for k in 0..3 {
            let s = mean_in(&qt, &soj, at + k as f64, at + k as f64 + 1.0);
            assert!(
                s <= 10.0,
                "FQ-CoDel {s:.1} ms mean sojourn {k}-{} s after the step at {at} s",
                k + 1
            );
        }
    }
    let p95 = r.f("bottleneck.p95_sojourn_ms");
    assert!(p95 < 10.0, "FQ-CoDel p95 sojourn {p95:.1} ms");
    let tail = run(&scenario(r#"{ limit = "2MB" }"#, Some("cubic"), &sched), None, false);
    let dt = tail.f("bottleneck.mean_sojourn_ms");
    eprintln!(
        "mean sojourn: FQ-CoDel {:.1} ms, drop-tail 2 MB {dt:.1} ms",
        r.f("bottleneck.mean_sojourn_ms")
    );
    assert!(dt > 50.0, "drop-tail {dt:.1} ms");
}

/// The generator (`model = "leo"`): the idle RTT holds within each 15 s interval and moves
/// at the reassignments only (12, 27, 42, 57 s), by the drawn delays.
#[test]
fn leo_generator_moves_the_rtt_at_its_offsets_only() {
    let leo = r#"{ model = "leo", delay = ["12ms", "25ms"], rate = ["60Mbps", "180Mbps"] }"#;
    let r = run(&scenario(r#"{ limit = "2MB" }"#, None, leo), None, true);
    let rtts = probe_rtts(&r, 0.0);
    let mut moved = 0;
    for w in rtts.windows(2) {
        let ((t0, a), (t1, b)) = (w[0], w[1]);
        let step = [12.0, 27.0, 42.0, 57.0].iter().any(|at| t0 <= at + 0.2 && t1 >= at - 0.2);
        if step {
            moved += ((a - b).abs() > 0.5) as u32;
        } else {
            assert!(
                (a - b).abs() < 0.5,
                "RTT moved between {t0:.1} s and {t1:.1} s: {a:.2} → {b:.2}"
            );
        }
        // 2 × (12..25 ms + two 1 ms access links), plus a probe's serialization.
        assert!((28.0..=54.5).contains(&b), "RTT {b:.2} ms at {t1:.1} s");
    }
    assert!(moved >= 3, "the RTT moved at {moved} of 4 reassignments");
}

#[test]
fn bad_schedules_are_refused_with_their_key_path() {
    let dir = std::env::temp_dir().join(format!("bloatlab-leo-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        format!("{:?}", p.to_str().unwrap())
    };
    let with = |link: &str| {
        format!("duration = \"1s\"\n[topology]\nbottleneck = {link}\n[[flows]]\ncc = \"cubic\"\n")
    };
    let back = file("back.sched", "0 20 10 0\n500 20 10 0\n400 20 10 0\n");
    common::refused(
        &with(&format!("{{ schedule = {back} }}")),
        "topology.bottleneck.schedule",
        "line 3: times must increase",
    );
    let neg = file("neg.sched", "0 -5 10 0\n");
    common::refused(
        &with(&format!("{{ schedule = {neg} }}")),
        "topology.bottleneck.schedule",
        "line 1: delay_ms must not be negative",
    );
    let bad = file("bad.sched", "# header\n0 20 10 0\n100 20 fast 0\n");
    common::refused(
        &with(&format!("{{ schedule = {bad} }}")),
        "topology.bottleneck.schedule",
        "bad.sched\": line 3: rate_mbps must be a number",
    );
    common::refused(
        &with(r#"{ schedule = "/nonexistent/x.sched" }"#),
        "topology.bottleneck.schedule",
        "cannot read schedule file",
    );
    let ok = file("ok.sched", "0 20 10 0\n");
    common::refused(
        &with(&format!("{{ schedule = {ok}, delay = \"5ms\" }}")),
        "topology.bottleneck.delay",
        "set by topology.bottleneck.schedule",
    );
    common::refused(
        &with(&format!("{{ schedule = {ok}, rate = \"5Mbps\" }}")),
        "topology.bottleneck.rate",
        "set by topology.bottleneck.schedule",
    );
    let norate = file("norate.sched", "0 20 - 0\n");
    common::refused(
        &with(&format!("{{ schedule = {norate} }}")),
        "topology.bottleneck.rate",
        "missing required key",
    );
    let leo = |extra: &str| {
        with(&format!("{{ schedule = {{ model = \"leo\", delay = [\"10ms\", \"20ms\"], rate = [\"10Mbps\", \"20Mbps\"]{extra} }} }}"))
    };
    common::refused(
        &leo(", interval = \"0s\""),
        "topology.bottleneck.schedule.interval",
        "greater than 0",
    );
    common::refused(
        &leo(", switch_time = \"20s\""),
        "topology.bottleneck.schedule.switch_time",
        "shorter than the interval",
    );
    common::refused(
        &leo(", switch_loss = 1.5"),
        "topology.bottleneck.schedule.switch_loss",
        "must be in [0, 1]",
    );
    common::refused(
        &leo(", altitude = 550"),
        "topology.bottleneck.schedule.altitude",
        "unknown key",
    );
    common::refused(
        &with(
            r#"{ schedule = { model = "leo", delay = ["20ms", "10ms"], rate = ["1Mbps", "2Mbps"] } }"#,
        ),
        "topology.bottleneck.schedule.delay",
        "low ≤ high",
    );
    common::refused(
        &with(
            r#"{ schedule = { model = "leo", delay = ["0ms", "10ms"], rate = ["1Mbps", "2Mbps"] } }"#,
        ),
        "topology.bottleneck.schedule.delay[0]",
        "greater than 0",
    );
    common::refused(
        &with(r#"{ schedule = { model = "geo" } }"#),
        "topology.bottleneck.schedule.model",
        "leo",
    );
    common::refused(
        &with(r#"{ schedule = { model = "leo", rate = ["1Mbps", "2Mbps"] } }"#),
        "topology.bottleneck.schedule.delay",
        "missing required key",
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Same scenario and seed, same bytes; another seed, another schedule.
#[test]
fn generated_schedules_are_deterministic() {
    let leo = r#"{ model = "leo", delay = ["12ms", "25ms"], rate = ["60Mbps", "180Mbps"], switch_loss = 0.3, switch_time = "50ms" }"#;
    let toml = scenario(r#"{ limit = "1MB" }"#, Some("cubic"), leo).replace("60s", "20s");
    // Wall-clock fields aside.
    let run = |seed| {
        let mut s = common::run_seeded(&toml, Some(seed));
        s.as_object_mut().unwrap().remove("engine");
        s
    };
    let a = run(4);
    assert_eq!(a, run(4));
    assert_ne!(a["bottleneck"], run(5)["bottleneck"]);
}
