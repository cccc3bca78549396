//! The cost of the delayed-window-update wrapper: the same short run with CUBIC and with
//! Cubic+ (`cargo bench -p bloatlab-sim --bench cc`). The wrapper adds a few comparisons and
//! additions per ACK and one classification per period, so the two should time alike; the
//! runs differ slightly in packets because Cubic+ keeps a shorter queue.

use bloatlab_sim::{run_toml, RunOptions};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn scenario(cc: &str) -> String {
    format!(
        r#"
        duration = "5s"
        [metrics]
        interval = "0s"
        [topology]
        bottleneck = {{ rate = "100Mbps", delay = "10ms" }}
        bottleneck_queue = {{ limit = "500KB" }}
        access = {{ rate = "1Gbps", delay = "5ms" }}
        [[flows]]
        cc = "{cc}"
        "#
    )
}

fn wrapper_cost(c: &mut Criterion) {
    let mut g = c.benchmark_group("cc");
    g.sample_size(20);
    for cc in ["cubic", "cubic+"] {
        let sc = scenario(cc);
        let packets = {
            let out = run_toml(&sc, &RunOptions::default()).unwrap();
            let v: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
            v["engine"]["bottleneck_packets"].as_u64().unwrap_or(0)
        };
        g.throughput(criterion::Throughput::Elements(packets));
        g.bench_function(format!("dumbbell_100mbps_5s_{cc}"), |b| {
            b.iter(|| black_box(run_toml(&sc, &RunOptions::default()).unwrap().summary_json.len()))
        });
    }
    g.finish();
}

criterion_group!(benches, wrapper_cost);
criterion_main!(benches);
