//! Benchmarks of the monitoring states. Run with `cargo bench --bench monitor`.
//!
//! * a push into a full sliding window of 10 000 and of 1 000 000 samples (each push
//!   evicts the oldest), against a push into a sorted buffer that is never full;
//! * concurrent push throughput of the lock-free histogram: 1 thread, 2 threads on one
//!   shard (contended), 2 threads on a shard each;
//! * a push into a decaying histogram, and encoding/decoding a histogram's state.

use std::hint::black_box;
use std::time::Instant;

use criterion::{BatchSize, Criterion, Throughput};
use tce::{
    AtomicBin, Closure, ConcurrentHistogram, DecayedBin, DecayingHistogram, InlineHistogram,
    SlidingWindow, Slot,
};

/// Skewed scores (1 − 0.9·u³) and labels from an inline xorshift: no dependency.
fn inputs(n: usize, seed: u64) -> (Vec<f64>, Vec<u8>) {
    let mut state = seed | 1;
    let mut unit = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let u = unit();
            let score = 1.0 - 0.9 * u * u * u;
            (score, u8::from(unit() < score * score))
        })
        .unzip()
}

fn window(c: &mut Criterion) {
    let mut group = c.benchmark_group("window_push_full");
    for size in [10_000usize, 1_000_000] {
        let (scores, labels) = inputs(size + 4096, 1);
        let (mut slots, mut ring) = (vec![Slot::EMPTY; size], vec![0.0; size]);
        let mut w = SlidingWindow::with_storage(&mut slots, &mut ring).unwrap();
        w.push_batch(&scores[..size], &labels[..size]).unwrap();
        let mut i = size;
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("{size}"), |b| {
            b.iter(|| {
                let at = size + (i % 4096);
                i += 1;
                w.push(black_box(scores[at]), black_box(labels[at]))
                    .unwrap();
            })
        });
    }
    group.finish();
}

/// How the threads of a concurrent benchmark share the histogram.
#[derive(Clone, Copy)]
enum Sharing {
    /// Every thread pushes into shard 0 (`push`): the hot bin's cache line bounces.
    Contended,
    /// Thread t pushes into shard t (`push_to`).
    Sharded,
}

/// 2 shards of 15 bins: one thread, or two threads on one shard or on their own.
type Shared = ConcurrentHistogram<[[AtomicBin; 15]; 2]>;

fn concurrent(c: &mut Criterion) {
    let (scores, labels) = inputs(1 << 20, 2);
    let mut group = c.benchmark_group("concurrent_push");
    group.throughput(Throughput::Elements(scores.len() as u64));
    group.sample_size(20);
    for (name, threads, sharing) in [
        ("1_thread", 1usize, Sharing::Sharded),
        ("2_threads_contended", 2, Sharing::Contended),
        ("2_threads_sharded", 2, Sharing::Sharded),
    ] {
        group.bench_function(name, |b| {
            let shared = Shared::new(Closure::Left);
            b.iter(|| push_concurrently(&shared, &scores, &labels, threads, sharing))
        });
    }
    group.finish();
}

fn push_concurrently(
    shared: &Shared,
    scores: &[f64],
    labels: &[u8],
    threads: usize,
    sharing: Sharing,
) {
    let chunk = scores.len() / threads;
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (s, l) = (
                &scores[t * chunk..(t + 1) * chunk],
                &labels[t * chunk..(t + 1) * chunk],
            );
            scope.spawn(move || match sharing {
                Sharing::Contended => {
                    for (&score, &label) in s.iter().zip(l) {
                        shared.push(score, label).unwrap();
                    }
                }
                Sharing::Sharded => {
                    for (&score, &label) in s.iter().zip(l) {
                        shared.push_to(t, score, label).unwrap();
                    }
                }
            });
        }
    });
}

fn decay_and_state(c: &mut Criterion) {
    let (scores, labels) = inputs(1 << 16, 3);
    let mut group = c.benchmark_group("state");
    group.throughput(Throughput::Elements(scores.len() as u64));
    group.bench_function("decaying_push_batch", |b| {
        let mut h = DecayingHistogram::<[DecayedBin; 15]>::new(Closure::Left, 10_000.0).unwrap();
        b.iter(|| {
            h.push_batch(black_box(&scores), black_box(&labels))
                .unwrap()
        })
    });
    let mut h = InlineHistogram::<15>::new(Closure::Left);
    h.push_batch(&scores, &labels).unwrap();
    let mut bytes = vec![0u8; h.encoded_len()];
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("histogram_encode", |b| {
        b.iter(|| h.encode(black_box(&mut bytes)).unwrap())
    });
    h.encode(&mut bytes).unwrap();
    group.bench_function("histogram_decode", |b| {
        b.iter_batched_ref(
            || InlineHistogram::<15>::new(Closure::Left),
            |t| t.decode(black_box(&bytes)).unwrap(),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// Self-timed ratios, medians of interleaved runs: concurrent throughput of 2 threads
/// (contended: one shard; sharded: a shard each) over 1 thread.
fn ratios() {
    let (scores, labels) = inputs(1 << 21, 4);
    let shared = Shared::new(Closure::Left);
    let cases = [
        (1, Sharing::Sharded),
        (2, Sharing::Contended),
        (2, Sharing::Sharded),
    ];
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..9 {
        for (&(threads, sharing), times) in cases.iter().zip(&mut times) {
            let start = Instant::now();
            push_concurrently(&shared, &scores, &labels, threads, sharing);
            times.push(start.elapsed().as_secs_f64());
        }
    }
    let [t1, contended, sharded] = times.map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    });
    let per_push = |t: f64| t / scores.len() as f64 * 1e9;
    println!("\n## Ratios (self-timed, median of 9 interleaved runs, 2^21 pushes)\n");
    println!("| case (15 bins) | 1 thread | 2 threads | throughput 2/1 |");
    println!("|---|---|---|---|");
    for (name, t2) in [
        ("concurrent push, one shard (contended)", contended),
        ("concurrent push, a shard per thread", sharded),
    ] {
        println!(
            "| {name} | {:.2} ns/push | {:.2} ns/push | {:.2}× |",
            per_push(t1),
            per_push(t2),
            t1 / t2
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    window(&mut c);
    concurrent(&mut c);
    decay_and_state(&mut c);
    c.final_summary();
    if std::env::args().any(|a| a == "--bench") {
        ratios();
    }
}
