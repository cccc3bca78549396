//! Criterion benches of the hot paths: the event queue, the SACK scoreboard and a whole TCP
//! run (`cargo bench -p bloatlab-sim`). `bloatlab bench` reports end-to-end speed.

use bloatlab_sim::engine::{Event, EventQueue};
use bloatlab_sim::ids::LinkId;
use bloatlab_sim::tcp::{Scoreboard, Seg, TxStamp};
use bloatlab_sim::units::SimTime;
use bloatlab_sim::{run_toml, RunOptions};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;

fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    for &size in &[16usize, 256, 4096] {
        g.throughput(Throughput::Elements(1));
        g.bench_function(format!("pop_push_at_{size}"), |b| {
            let mut q = EventQueue::new();
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            for i in 0..size {
                q.schedule(SimTime(i as u64 * 1000), Event::LinkTxDone(LinkId(i as u32)));
            }
            b.iter(|| {
                let (t, ev) = q.pop().unwrap();
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                q.schedule(SimTime(t.0 + 1 + x % 100_000), ev);
                black_box(t)
            });
        });
    }
    g.finish();
}

fn scoreboard(c: &mut Criterion) {
    let mss = 1448u64;
    let n = 4096u64;
    c.bench_function("scoreboard/window_of_4096_with_sack_holes", |b| {
        b.iter_batched(
            || {
                let mut sb = Scoreboard::new();
                for i in 0..n {
                    sb.push(Seg::new(i * mss, (i + 1) * mss, SimTime(i), 0, TxStamp::default()));
                }
                sb
            },
            |mut sb| {
                // Every 64th segment lost: SACK the rest in blocks as ACKs would, mark losses,
                // retransmit, then acknowledge everything.
                for blk in 0..n / 64 {
                    let s = (blk * 64 + 1) * mss;
                    sb.sack(s, s + 63 * mss, |_| {});
                    sb.mark_lost(mss, 3);
                    while let Some(i) = sb.next_to_retransmit() {
                        sb.retransmitted(i, SimTime(1), TxStamp::default());
                    }
                }
                sb.ack_to(n * mss, |_| {});
                black_box(sb.len())
            },
            BatchSize::SmallInput,
        );
    });
}

fn tcp_run(c: &mut Criterion) {
    let sc = r#"
        duration = "2s"
        [metrics]
        interval = "0s"
        [topology]
        bottleneck = { rate = "400Mbps", delay = "50ms" }
        bottleneck_queue = { limit = "1500KB" }
        access = { rate = "1Gbps", delay = "5ms" }
        [[flows]]
        cc = "reno"
        tcp = { recovery = "sack" }
    "#;
    let mut g = c.benchmark_group("tcp");
    g.sample_size(10);
    g.bench_function("dumbbell_400mbps_2s", |b| {
        b.iter(|| {
            black_box(
                run_toml(sc, &RunOptions { seed: None, series: false, ..Default::default() })
                    .unwrap()
                    .summary_json
                    .len(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, event_queue, scoreboard, tcp_run);
criterion_main!(benches);
