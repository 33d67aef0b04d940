//! Benchmarks of the core, each against a baseline that does the least work the same
//! job could do. Run with `cargo bench --bench core --features ffi` (the one-call row
//! needs the C ABI); the numpy floor row needs the Python of `TCE_BENCH_PYTHON`
//! (default target/bench-venv/bin/python, see benches/floor.py) and is skipped without it.
//!
//! Criterion times every case; then (only under `cargo bench`, not `cargo test
//! --benches`) a short self-timed section interleaves each candidate with its baseline
//! on the same inputs and prints the ratio of their medians, which is what the targets
//! are stated in, and a summary table of every figure.
//!
//! Inputs come from an inline xorshift generator (fixed seed, no dependency):
//!
//! * "realistic": scores 1 − 0.9·u³ (skewed towards 1, like top-label confidences),
//!   labels 1 with probability score² (an overconfident model);
//! * "ties": the same, but 30 % of the scores are exactly 1.0 (as in real CIFAR outputs);
//! * "separable": uniform scores, label 1 exactly when score ≥ 0.5;
//! * "calibrated" (smooth ECE only): Beta(5, 1) scores u^(1/5), labels 1 with probability
//!   score, as in benches/csv_vs_pandas.py's file (its small σ* makes the bandwidth
//!   search visit the finest kernel grids).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use tce::{BinStats, Binning, Closure, Histogram, Norm, Slot, SortedBuffer, SweepOptions, Ties};

/// Samples of the batch, equal-mass and equal-width cases.
const N: usize = 1_000_000;
/// Samples of the perfectly separable case.
const N_SEPARABLE: usize = 100_000;
/// Bins of ECE_bin.
const BINS: usize = 15;
/// Samples per iteration of the single-push benchmarks.
const SINGLE: usize = 1024;
/// Runs per case in the self-timed section.
const RUNS: usize = 31;

// ---------------------------------------------------------------------------------------
// Inputs

/// xorshift64*: good enough for benchmark inputs.
struct XorShift(u64);

impl XorShift {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[derive(Clone, Copy)]
enum Data {
    Realistic,
    Ties,
    Separable,
}

impl Data {
    fn name(self) -> &'static str {
        match self {
            Data::Realistic => "realistic",
            Data::Ties => "ties",
            Data::Separable => "separable",
        }
    }
}

struct Samples {
    scores: Vec<f64>,
    labels: Vec<u8>,
}

fn samples(data: Data, n: usize) -> Samples {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let (mut scores, mut labels) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let u = rng.unit();
        let score = match data {
            Data::Separable => u,
            Data::Ties if rng.unit() < 0.3 => 1.0,
            Data::Realistic | Data::Ties => 1.0 - 0.9 * u * u * u,
        };
        let label = match data {
            Data::Separable => score >= 0.5,
            Data::Realistic | Data::Ties => rng.unit() < score * score,
        };
        scores.push(score);
        labels.push(u8::from(label));
    }
    Samples { scores, labels }
}

/// A buffer holding `samples`, never sorted, and storage to copy it into before each
/// timed run, so that every run sorts fresh, unsorted data and the copy is not timed.
///
/// The copy's capacity is n (full: `sorted()` sorts in place, with pdqsort, as before the
/// radix sort) or, with `room`, 2n (the free half is the radix sort's scratch).
struct Unsorted {
    master: SortedBuffer<&'static mut [Slot]>,
    work: Vec<Slot>,
}

impl Unsorted {
    fn new(s: &Samples) -> Self {
        Self::with_capacity(s, s.scores.len())
    }

    fn with_room(s: &Samples) -> Self {
        Self::with_capacity(s, 2 * s.scores.len())
    }

    fn with_capacity(s: &Samples, capacity: usize) -> Self {
        // Leaked once per data set: the master must outlive every copy.
        let storage = Box::leak(vec![Slot::EMPTY; s.scores.len()].into_boxed_slice());
        let mut master = SortedBuffer::with_storage(storage).unwrap();
        master.push_batch(&s.scores, &s.labels).unwrap();
        Unsorted {
            master,
            work: vec![Slot::EMPTY; capacity],
        }
    }

    /// A fresh unsorted copy of the master (O(n): keep it out of the timing).
    fn fresh(&mut self) -> SortedBuffer<&mut [Slot]> {
        let mut buffer = SortedBuffer::with_storage(&mut self.work).unwrap();
        buffer.merge(&self.master).unwrap();
        buffer
    }
}

/// The scores, and storage to copy them into before each timed baseline sort.
struct UnsortedScores {
    master: Vec<f64>,
    work: Vec<f64>,
}

impl UnsortedScores {
    fn new(s: &Samples) -> Self {
        UnsortedScores {
            master: s.scores.clone(),
            work: s.scores.clone(),
        }
    }

    fn fresh(&mut self) -> &mut [f64] {
        self.work.copy_from_slice(&self.master);
        &mut self.work
    }
}

// ---------------------------------------------------------------------------------------
// Candidates and baselines

/// Baseline of the batch push: one pass summing scores (f64) and hits (u64).
#[inline(never)]
fn sum_scores_and_hits(scores: &[f64], labels: &[u8]) -> (f64, u64) {
    let (mut sum, mut hits) = (0.0f64, 0u64);
    for (&score, &label) in scores.iter().zip(labels) {
        sum += score;
        hits += u64::from(label);
    }
    (sum, hits)
}

/// Baseline of the batch push at the floor: the same two sums over the same slices with
/// sixteen independent accumulators each, which the compiler vectorises (packed `addpd`
/// for the scores, bytes widened with `punpcklbw`/`punpcklwd` and added with `paddd` for
/// the labels; checked in the disassembly, see docs/performance.md). A plain read of the
/// inputs at memory speed, as numpy's `np.sum` is. (The label lanes are `u32`: exact up
/// to 2^32 samples a lane, far more than the bench's.)
#[inline(never)]
fn sum_vectorised(scores: &[f64], labels: &[u8]) -> (f64, u64) {
    const LANES: usize = 16;
    let (mut sums, mut hits) = ([0.0f64; LANES], [0u32; LANES]);
    let (score_chunks, label_chunks) = (scores.chunks_exact(LANES), labels.chunks_exact(LANES));
    let (score_tail, label_tail) = (score_chunks.remainder(), label_chunks.remainder());
    for (s, l) in score_chunks.zip(label_chunks) {
        for lane in 0..LANES {
            sums[lane] += s[lane];
            hits[lane] += u32::from(l[lane]);
        }
    }
    let mut hits: u64 = hits.iter().map(|&h| u64::from(h)).sum();
    let mut sum: f64 = sums.iter().sum();
    for (&score, &label) in score_tail.iter().zip(label_tail) {
        sum += score;
        hits += u64::from(label);
    }
    (sum, hits)
}

#[inline(never)]
fn push_batch(histogram: &mut Histogram<[BinStats; BINS]>, scores: &[f64], labels: &[u8]) {
    histogram.push_batch(scores, labels).unwrap();
}

/// Baseline of the equal-mass pipeline: sorting the scores alone.
#[inline(never)]
fn sort_scores(scores: &mut [f64]) {
    scores.sort_unstable_by(f64::total_cmp);
}

/// What the equal-mass figures time: sort, ECE_bin with 15 bins, ECE_sweep. Returns
/// (ECE_bin, ECE_sweep, b*).
#[inline(never)]
fn em_pipeline(buffer: &mut SortedBuffer<&mut [Slot]>) -> (f64, f64, usize) {
    em_estimates(buffer.sorted())
}

/// [`em_pipeline`] with the two-thread sort (`sorted_parallel`).
#[inline(never)]
fn em_pipeline_parallel(buffer: &mut SortedBuffer<&mut [Slot]>) -> (f64, f64, usize) {
    em_estimates(buffer.sorted_parallel())
}

fn em_estimates(sorted: tce::SortedSamples<'_>) -> (f64, f64, usize) {
    let bin = sorted.ece_bin(Binning::EQUAL_MASS, BINS, Norm::L2).unwrap();
    let sweep = sorted
        .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
        .unwrap();
    (bin.value, sweep.value, sweep.bins)
}

/// The sweep alone, on already sorted samples. Returns (ECE_sweep, b*).
#[inline(never)]
fn sweep_only(buffer: &mut SortedBuffer<&mut [Slot]>, binning: Binning) -> (f64, usize) {
    let sweep = buffer
        .sorted()
        .ece_sweep(binning, Norm::L2, SweepOptions::default())
        .unwrap();
    (sweep.value, sweep.bins)
}

/// Times `run` on a fresh copy made (untimed) by `fresh` before each run.
macro_rules! time_fresh {
    ($iters:expr, $fresh:expr, |$x:ident| $run:expr) => {{
        let mut total = Duration::ZERO;
        for _ in 0..$iters {
            let $x = $fresh;
            let start = Instant::now();
            black_box($run);
            total += start.elapsed();
        }
        total
    }};
}

// ---------------------------------------------------------------------------------------
// Criterion groups

fn bench_batch_push(c: &mut Criterion) {
    let s = samples(Data::Realistic, N);
    let mut group = c.benchmark_group("ew_push_batch_1e6");
    group.throughput(Throughput::Elements(N as u64));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("baseline_sum", |b| {
        b.iter(|| sum_scores_and_hits(black_box(&s.scores), black_box(&s.labels)))
    });
    group.bench_function("baseline_sum_vectorised", |b| {
        b.iter(|| sum_vectorised(black_box(&s.scores), black_box(&s.labels)))
    });
    group.bench_function("histogram_push_batch", |b| {
        let mut histogram = Histogram::<[BinStats; BINS]>::new(Closure::Left);
        b.iter(|| {
            push_batch(
                black_box(&mut histogram),
                black_box(&s.scores),
                black_box(&s.labels),
            )
        })
    });
    group.finish();
}

fn bench_single_push(c: &mut Criterion) {
    let s = samples(Data::Realistic, SINGLE);
    let mut group = c.benchmark_group("single_push_x1024");
    group.throughput(Throughput::Elements(SINGLE as u64));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("histogram_push", |b| {
        let mut histogram = Histogram::<[BinStats; BINS]>::new(Closure::Left);
        b.iter(|| {
            for (&score, &label) in s.scores.iter().zip(&s.labels) {
                black_box(&mut histogram)
                    .push(black_box(score), black_box(label))
                    .unwrap();
            }
        })
    });
    group.bench_function("sorted_buffer_push", |b| {
        let mut storage = vec![Slot::EMPTY; SINGLE];
        let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
        b.iter(|| {
            buffer.clear();
            for (&score, &label) in s.scores.iter().zip(&s.labels) {
                black_box(&mut buffer)
                    .push(black_box(score), black_box(label))
                    .unwrap();
            }
        })
    });
    group.finish();
}

fn bench_equal_mass(c: &mut Criterion) {
    let mut group = c.benchmark_group("em_1e6");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(N as u64));
    for data in [Data::Realistic, Data::Ties] {
        let s = samples(data, N);
        let (mut buffer, mut scores) = (Unsorted::new(&s), UnsortedScores::new(&s));
        group.bench_function(format!("{}/baseline_sort_unstable", data.name()), |b| {
            b.iter_custom(|iters| time_fresh!(iters, scores.fresh(), |x| sort_scores(x)))
        });
        group.bench_function(format!("{}/sort+ece_bin+ece_sweep", data.name()), |b| {
            b.iter_custom(|iters| time_fresh!(iters, buffer.fresh(), |x| em_pipeline(&mut { x })))
        });
        let mut roomy = Unsorted::with_room(&s);
        group.bench_function(
            format!("{}/radix_sort+ece_bin+ece_sweep", data.name()),
            |b| {
                b.iter_custom(|iters| {
                    time_fresh!(iters, roomy.fresh(), |x| em_pipeline(&mut { x }))
                })
            },
        );
        group.bench_function(
            format!("{}/radix_sort_two_threads+ece_bin+ece_sweep", data.name()),
            |b| {
                b.iter_custom(|iters| {
                    time_fresh!(iters, roomy.fresh(), |x| em_pipeline_parallel(&mut { x }))
                })
            },
        );
        // The parts, to see where the time goes.
        group.bench_function(format!("{}/part_sort_only", data.name()), |b| {
            b.iter_custom(|iters| time_fresh!(iters, buffer.fresh(), |x| { x }.sorted().len()))
        });
        let mut sorted = buffer.fresh();
        sorted.sorted();
        group.bench_function(
            format!("{}/part_ece_bin+ece_sweep_presorted", data.name()),
            |b| b.iter(|| em_pipeline(black_box(&mut sorted))),
        );
    }
    group.finish();
}

fn bench_separable(c: &mut Criterion) {
    let s = samples(Data::Separable, N_SEPARABLE);
    let mut buffer = Unsorted::new(&s);
    let mut group = c.benchmark_group("em_separable_1e5");
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    group.throughput(Throughput::Elements(N_SEPARABLE as u64));
    group.bench_function("sort+ece_sweep", |b| {
        b.iter_custom(|iters| {
            time_fresh!(iters, buffer.fresh(), |x| sweep_only(
                &mut { x },
                Binning::EQUAL_MASS
            ))
        })
    });
    let mut sorted = buffer.fresh();
    sorted.sorted();
    group.bench_function("ece_sweep_presorted", |b| {
        b.iter(|| sweep_only(black_box(&mut sorted), Binning::EQUAL_MASS))
    });
    group.finish();
}

fn bench_equal_width_sweep(c: &mut Criterion) {
    let mut group = c.benchmark_group("ew_sweep_1e6");
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    for data in [Data::Realistic, Data::Ties] {
        let mut buffer = Unsorted::new(&samples(data, N));
        let mut sorted = buffer.fresh();
        sorted.sorted();
        group.bench_function(format!("{}/ece_sweep_presorted", data.name()), |b| {
            b.iter(|| sweep_only(black_box(&mut sorted), Binning::EQUAL_WIDTH))
        });
    }
    group.finish();
}

// ---------------------------------------------------------------------------------------
// Self-timed ratios

/// Counts and hits per equal-width bin, no score sums: the floor under any histogram push.
fn count_only(scores: &[f64], labels: &[u8]) -> [[(u64, u64); BINS]; 4] {
    let mut lanes = [[(0u64, 0u64); BINS]; 4];
    for (s, l) in scores.chunks_exact(4).zip(labels.chunks_exact(4)) {
        for (lane, bins) in lanes.iter_mut().enumerate() {
            let bin = &mut bins[Closure::Left.bin_index(s[lane], BINS)];
            bin.0 += 1;
            bin.1 += u64::from(l[lane]);
        }
    }
    lanes
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

/// The median and the fastest of a case's runs.
#[derive(Clone, Copy)]
struct Runs {
    median: Duration,
    fastest: Duration,
}

impl Runs {
    fn of(times: Vec<Duration>) -> Runs {
        let fastest = *times.iter().min().expect("at least one run");
        Runs {
            median: median(times),
            fastest,
        }
    }
}

/// Times of `baseline` and `candidate` over `RUNS` interleaved runs each.
fn interleaved(
    mut baseline: impl FnMut() -> Duration,
    mut candidate: impl FnMut() -> Duration,
) -> (Runs, Runs) {
    // One untimed warm-up run of each.
    baseline();
    candidate();
    let (mut base, mut cand) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for _ in 0..RUNS {
        base.push(baseline());
        cand.push(candidate());
    }
    (Runs::of(base), Runs::of(cand))
}

/// The time of `run` right after an untimed run of its own: the numpy rows' candidate
/// side, as `benches/floor.py` times numpy's. Both sides of those rows start after the
/// machine idled (the bench's pause for rayon's workers, then a wait on the other
/// process), and a first run after idling ran 15–40 % slower than the same run back to
/// back (the candidate's median there against the rows beside it, in the same run of the
/// bench): what that measured was the virtual machine's wake-up, not the sorts.
fn warm(mut run: impl FnMut() -> Duration) -> Duration {
    run();
    run()
}

fn median_of(mut run: impl FnMut() -> Duration) -> Duration {
    run();
    median((0..RUNS).map(|_| run()).collect())
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn ratio_header() {
    println!("\n## Ratios (self-timed: median of {RUNS} interleaved runs, same inputs)\n");
    println!("| case | baseline | candidate | ratio of medians | ratio of fastest runs | target |");
    println!("|---|---|---|---|---|---|");
}

fn ratios() {
    ratio_header();
    smooth_ece_rows();
    discrete_sweep_rows();
    weighted_rows();
    weighted_smooth_rows();

    let s = samples(Data::Realistic, N);
    let (base, cand) = interleaved(
        || {
            time_fresh!(1, (), |_x| sum_scores_and_hits(
                black_box(&s.scores),
                black_box(&s.labels)
            ))
        },
        || {
            let mut h = Histogram::<[BinStats; BINS]>::new(Closure::Left);
            time_fresh!(1, (), |_x| push_batch(
                black_box(&mut h),
                black_box(&s.scores),
                black_box(&s.labels)
            ))
        },
    );
    row("EW push_batch 1e6 vs sum loop", base, cand, Some(2.0));
    let (base, cand) = interleaved(
        || {
            time_fresh!(1, (), |_x| sum_vectorised(
                black_box(&s.scores),
                black_box(&s.labels)
            ))
        },
        || {
            let mut h = Histogram::<[BinStats; BINS]>::new(Closure::Left);
            time_fresh!(1, (), |_x| push_batch(
                black_box(&mut h),
                black_box(&s.scores),
                black_box(&s.labels)
            ))
        },
    );
    row(
        "EW push_batch 1e6 vs vectorised sum (16 accumulators)",
        base,
        cand,
        // No target: issue 37 withdrew it (counting alone costs 3.1-3.9x this sum).
        None,
    );
    #[cfg(feature = "ffi")]
    {
        let mut scratch = vec![Slot::EMPTY; 2 * N + 4];
        let mut value = 0.0;
        let (base, cand) = interleaved(
            || {
                let mut h = Histogram::<[BinStats; BINS]>::new(Closure::Left);
                time_fresh!(1, (), |_x| push_batch(
                    black_box(&mut h),
                    black_box(&s.scores),
                    black_box(&s.labels)
                ))
            },
            || time_fresh!(1, (), |_x| value = ew_one_call(&s, &mut scratch)),
        );
        row(
            "EW one-call tce_ece_bin(15) 1e6 vs Histogram::push_batch",
            base,
            cand,
            Some(1.2),
        );
        let mut h = Histogram::<[BinStats; BINS]>::new(Closure::Left);
        h.push_batch(&s.scores, &s.labels).unwrap();
        assert_eq!(value, h.ece_bin(Norm::L2).unwrap().value, "same value");
    }
    // What any histogram pays before summing scores: the bin index and a count and hit
    // update per sample, with the same four-lane trick as the core (reference only).
    let (base, cand) = interleaved(
        || {
            time_fresh!(1, (), |_x| sum_scores_and_hits(
                black_box(&s.scores),
                black_box(&s.labels)
            ))
        },
        || {
            time_fresh!(1, (), |_x| count_only(
                black_box(&s.scores),
                black_box(&s.labels)
            ))
        },
    );
    row(
        "floor: counting into 15 bins without score sums, vs sum loop",
        base,
        cand,
        None,
    );

    let mut figures = Vec::new();
    for data in [Data::Realistic, Data::Ties] {
        let s = samples(data, N);
        let (mut buffer, mut scores) = (Unsorted::new(&s), UnsortedScores::new(&s));
        let mut roomy = Unsorted::with_room(&s);
        let (mut result, mut in_place) = ((0.0, 0.0, 0), (0.0, 0.0, 0));
        let (base, cand) = interleaved(
            || time_fresh!(1, buffer.fresh(), |x| in_place = em_pipeline(&mut { x })),
            || time_fresh!(1, roomy.fresh(), |x| result = em_pipeline(&mut { x })),
        );
        assert_eq!(result, in_place, "the two sorts give the same estimates");
        row(
            &format!(
                "EM radix sort+ece_bin+ece_sweep 1e6 ({}) vs the same sorting in place (pdqsort, as before)",
                data.name()
            ),
            base,
            cand,
            Some(0.5),
        );
        let (base, cand) = interleaved(
            || time_fresh!(1, scores.fresh(), |x| sort_scores(x)),
            || time_fresh!(1, roomy.fresh(), |x| result = em_pipeline(&mut { x })),
        );
        row(
            &format!(
                "EM radix sort+ece_bin+ece_sweep 1e6 ({}) vs sort_unstable",
                data.name()
            ),
            base,
            cand,
            None,
        );
        // np.sort, one sort in its own process between two runs of the candidate.
        let mut numpy = NumpySort::fastest(&s.scores);
        match &mut numpy {
            Ok(numpy) => {
                let (base, cand) = interleaved(
                    || numpy.time(),
                    || warm(|| time_fresh!(1, roomy.fresh(), |x| result = em_pipeline(&mut { x }))),
                );
                row(
                    &format!(
                        "EM radix sort+ece_bin+ece_sweep 1e6 ({}) vs numpy {} np.sort (both warm)",
                        data.name(),
                        numpy.version
                    ),
                    base,
                    cand,
                    Some(1.5),
                );
            }
            Err(why) => println!(
                "| EM 1e6 ({}) vs np.sort | skipped: {why} | | | | |",
                data.name()
            ),
        }
        // The two-thread sort (`sorted_parallel`): against the one-thread radix sort, the
        // sort in place the issue started from (target: at least 2× faster), and np.sort
        // (which uses one thread: the ratio says so).
        let mut parallel = (0.0, 0.0, 0);
        let mut roomy_too = Unsorted::with_room(&s);
        let (one, two) = interleaved(
            || time_fresh!(1, roomy.fresh(), |x| result = em_pipeline(&mut { x })),
            || {
                time_fresh!(1, roomy_too.fresh(), |x| parallel =
                    em_pipeline_parallel(&mut { x }))
            },
        );
        assert_eq!(
            parallel, result,
            "the two-thread sort gives the same estimates"
        );
        row(
            &format!(
                "EM two-thread radix sort+ece_bin+ece_sweep 1e6 ({}) vs the one-thread radix sort",
                data.name()
            ),
            one,
            two,
            None,
        );
        let (base, cand) = interleaved(
            || time_fresh!(1, buffer.fresh(), |x| in_place = em_pipeline(&mut { x })),
            || {
                time_fresh!(1, roomy_too.fresh(), |x| parallel =
                    em_pipeline_parallel(&mut { x }))
            },
        );
        row(
            &format!(
                "EM two-thread radix sort+ece_bin+ece_sweep 1e6 ({}) vs sorting in place (pdqsort, as before)",
                data.name()
            ),
            base,
            cand,
            Some(0.5),
        );
        if let Ok(numpy) = &mut numpy {
            let (base, cand) = interleaved(
                || numpy.time(),
                || {
                    warm(|| {
                        time_fresh!(1, roomy_too.fresh(), |x| parallel =
                            em_pipeline_parallel(&mut { x }))
                    })
                },
            );
            row(
                &format!(
                    "EM two-thread radix sort+ece_bin+ece_sweep 1e6 ({}) vs numpy {} np.sort (one thread; both warm)",
                    data.name(),
                    numpy.version
                ),
                base,
                cand,
                Some(1.5),
            );
        }
        // Fixed-B equal mass by selection: the one-call function against the sort it
        // replaced, and against np.sort (no target: the issue allows selection here).
        #[cfg(feature = "ffi")]
        {
            let mut scratch = vec![Slot::EMPTY; 2 * N + 4];
            let (mut selected, mut sorted) = (0.0, 0.0);
            let (base, cand) = interleaved(
                || time_fresh!(1, roomy.fresh(), |x| sorted = em_fixed(&mut { x })),
                || time_fresh!(1, (), |_x| selected = em_one_call(&s, &mut scratch)),
            );
            assert_eq!(selected, sorted, "selection gives the sorted path's value");
            row(
                &format!(
                    "EM one-call tce_ece_bin(15) 1e6 ({}, selection) vs radix sort + ece_bin(15)",
                    data.name()
                ),
                base,
                cand,
                None,
            );
            if let Ok(numpy) = &mut numpy {
                let (base, cand) = interleaved(
                    || numpy.time(),
                    || warm(|| time_fresh!(1, (), |_x| selected = em_one_call(&s, &mut scratch))),
                );
                row(
                    &format!(
                        "EM one-call tce_ece_bin(15) 1e6 ({}, selection) vs numpy {} np.sort (both warm)",
                        data.name(),
                        numpy.version
                    ),
                    base,
                    cand,
                    None,
                );
            }
        }
        figures.push((data, result));
    }

    println!("\n## Other figures (self-timed medians)\n");
    println!("| case | time | note |");
    println!("|---|---|---|");
    for (data, (bin, sweep, b_star)) in figures {
        println!(
            "| EM 1e6 ({}) | | ECE_bin(15) = {bin:.5}, ECE_sweep = {sweep:.5}, b* = {b_star} |",
            data.name()
        );
    }

    let s = samples(Data::Realistic, SINGLE);
    let mut h = Histogram::<[BinStats; BINS]>::new(Closure::Left);
    let t = median_of(|| {
        time_fresh!(
            1,
            (),
            |_x| for (&score, &label) in s.scores.iter().zip(&s.labels) {
                black_box(&mut h)
                    .push(black_box(score), black_box(label))
                    .unwrap();
            }
        )
    });
    println!(
        "| Histogram::push (one sample) | {:.2} ns | per push, in a loop of {SINGLE} |",
        per(t, SINGLE)
    );
    let mut storage = vec![Slot::EMPTY; SINGLE];
    let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
    let t = median_of(|| {
        buffer.clear();
        time_fresh!(
            1,
            (),
            |_x| for (&score, &label) in s.scores.iter().zip(&s.labels) {
                black_box(&mut buffer)
                    .push(black_box(score), black_box(label))
                    .unwrap();
            }
        )
    });
    println!(
        "| SortedBuffer::push (one sample) | {:.2} ns | per push, in a loop of {SINGLE} |",
        per(t, SINGLE)
    );

    let mut unsorted = Unsorted::new(&samples(Data::Separable, N_SEPARABLE));
    let mut b_star = 0;
    let t = median_of(|| {
        time_fresh!(1, unsorted.fresh(), |x| b_star =
            sweep_only(&mut { x }, Binning::EQUAL_MASS).1)
    });
    println!(
        "| EM separable 1e5: sort+ece_sweep | {} | b* = {b_star} (O(1) shortcut) |",
        ms(t)
    );
    let mut sorted = unsorted.fresh();
    sorted.sorted();
    let t = median_of(|| time_fresh!(1, (), |_x| sweep_only(&mut sorted, Binning::EQUAL_MASS)));
    println!("| EM separable 1e5: ece_sweep, presorted | {} | |", ms(t));

    for data in [Data::Realistic, Data::Ties] {
        let mut unsorted = Unsorted::new(&samples(data, N));
        let mut sorted = unsorted.fresh();
        sorted.sorted();
        let mut b_star = 0;
        let t = median_of(|| {
            time_fresh!(1, (), |_x| b_star =
                sweep_only(&mut sorted, Binning::EQUAL_WIDTH).1)
        });
        println!(
            "| EW ece_sweep 1e6 ({}), presorted | {} | b* = {b_star} |",
            data.name(),
            ms(t)
        );
    }
}

/// Beta(5, 1) scores and labels drawn with probability score: a calibrated model.
fn calibrated_samples(n: usize) -> Samples {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let (mut scores, mut labels) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let score = rng.unit().powf(0.2);
        labels.push(u8::from(rng.unit() < score));
        scores.push(score);
    }
    Samples { scores, labels }
}

/// The calibrated samples with each score moved to the middle of its d-quantile of
/// [0, 1] (d distinct values, as confidences stated in words or rounded), labels drawn
/// again with probability the new score: a calibrated model with d distinct confidences.
fn discrete_samples(n: usize, d: usize) -> Samples {
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut s = calibrated_samples(n);
    for (score, label) in s.scores.iter_mut().zip(&mut s.labels) {
        let level = ((*score * d as f64) as usize).min(d - 1);
        *score = (level as f64 + 0.5) / d as f64;
        *label = u8::from(rng.unit() < *score);
    }
    s
}

/// The monotone sweep on scores with few distinct values (issue 35: with d distinct
/// scores every b past the point where each score has a bin of its own passes, and b*
/// ran to n), against the same sweep on continuous scores of the same model: sort and
/// sweep from unsorted samples, and the sweep alone on sorted ones, for each binning.
fn discrete_sweep_rows() {
    let continuous = calibrated_samples(N);
    let binnings = [
        ("EW", Binning::EQUAL_WIDTH),
        ("EM split", Binning::EqualMass(Ties::Split)),
        ("EM keep", Binning::EqualMass(Ties::Keep)),
    ];
    for d in [1, 6, 100, 10_000] {
        let discrete = discrete_samples(N, d);
        for (name, binning) in binnings {
            let (mut base_buffer, mut cand_buffer) = (
                Unsorted::with_room(&continuous),
                Unsorted::with_room(&discrete),
            );
            let mut b_star = (0, 0);
            let (base, cand) = interleaved(
                || {
                    time_fresh!(1, base_buffer.fresh(), |x| b_star.0 =
                        sweep_only(&mut { x }, binning).1)
                },
                || {
                    time_fresh!(1, cand_buffer.fresh(), |x| b_star.1 =
                        sweep_only(&mut { x }, binning).1)
                },
            );
            row(
                &format!(
                    "sort + {name} ece_sweep 1e6, {d} distinct scores (b* = {}) vs continuous (b* = {})",
                    b_star.1, b_star.0
                ),
                base,
                cand,
                Some(2.0),
            );
            let (mut base_sorted, mut cand_sorted) = (base_buffer.fresh(), cand_buffer.fresh());
            base_sorted.sorted();
            cand_sorted.sorted();
            let (base, cand) = interleaved(
                || time_fresh!(1, (), |_x| sweep_only(black_box(&mut base_sorted), binning)),
                || time_fresh!(1, (), |_x| sweep_only(black_box(&mut cand_sorted), binning)),
            );
            row(
                &format!("{name} ece_sweep alone 1e6, {d} distinct scores vs continuous"),
                base,
                cand,
                None,
            );
        }
    }
}

/// Smooth ECE's bandwidth search at 10^6 samples against the vectorised read of the same
/// inputs (the floor of any pass over them), on the data sets of the module docs.
fn smooth_ece_rows() {
    let mut scratch = vec![0.0; tce::smece::SCRATCH_LEN];
    let sets = [
        (Data::Realistic.name(), samples(Data::Realistic, N)),
        (Data::Ties.name(), samples(Data::Ties, N)),
        ("calibrated", calibrated_samples(N)),
    ];
    for (name, s) in sets {
        let mut result = None;
        let (base, cand) = interleaved(
            || {
                time_fresh!(1, (), |_x| sum_vectorised(
                    black_box(&s.scores),
                    black_box(&s.labels)
                ))
            },
            || {
                time_fresh!(1, (), |_x| result = Some(
                    tce::smooth_ece(black_box(&s.scores), black_box(&s.labels), &mut scratch)
                        .unwrap()
                ))
            },
        );
        let bandwidth = result.map_or(f64::NAN, |r| r.bandwidth);
        row(
            &format!(
                "smooth_ece 1e6 ({name}, sigma* = {} / 1024) vs vectorised sum (16 accumulators)",
                bandwidth * 1024.0
            ),
            base,
            cand,
            None,
        );
    }
}

/// Weighted smooth ECE (10^6 samples) and weighted KDE (10^5: the KDE's kernel sums cost
/// ~500 grid points a sample) against the unweighted ones on the same samples, weights
/// uniform in [0.5, 2). Target ≤ 1.5× (issue 40).
fn weighted_smooth_rows() {
    let mut rng = XorShift(0x005e_ed0f_3e19);
    let weights: Vec<f64> = (0..N).map(|_| 0.5 + 1.5 * rng.unit()).collect();
    let mut scratch = vec![0.0; tce::smece::SCRATCH_LEN];
    let mut weighted_scratch = vec![0.0; tce::smece::SCRATCH_LEN];
    let sets = [
        (Data::Realistic.name(), samples(Data::Realistic, N)),
        (Data::Ties.name(), samples(Data::Ties, N)),
        ("calibrated", calibrated_samples(N)),
    ];
    for (name, s) in sets {
        let mut bandwidths = (None, None);
        let (base, cand) = interleaved(
            || {
                time_fresh!(1, (), |_x| bandwidths.0 = Some(
                    tce::smooth_ece(black_box(&s.scores), black_box(&s.labels), &mut scratch)
                        .unwrap()
                        .bandwidth
                ))
            },
            || {
                time_fresh!(1, (), |_x| bandwidths.1 = Some(
                    tce::smece::smooth_ece_weighted(
                        black_box(&s.scores),
                        black_box(&s.labels),
                        black_box(&weights),
                        &mut weighted_scratch
                    )
                    .unwrap()
                    .bandwidth
                ))
            },
        );
        let sigma = |b: Option<f64>| b.map_or(f64::NAN, |b| b * 1024.0);
        row(
            &format!(
                "weighted smooth_ece 1e6 ({name}, sigma* = {} / 1024; unweighted {} / 1024) vs unweighted",
                sigma(bandwidths.1),
                sigma(bandwidths.0)
            ),
            base,
            cand,
            Some(1.5),
        );
    }
    const N_KDE: usize = 100_000;
    let s = samples(Data::Realistic, N_KDE);
    let weights = &weights[..N_KDE];
    let (base, cand) = interleaved(
        || {
            time_fresh!(1, (), |_x| tce::kde::kde_calibration_error(
                black_box(&s.scores),
                black_box(&s.labels),
                Norm::L2
            )
            .unwrap()
            .value)
        },
        || {
            time_fresh!(1, (), |_x| tce::kde::kde_calibration_error_weighted(
                black_box(&s.scores),
                black_box(&s.labels),
                black_box(weights),
                Norm::L2
            )
            .unwrap()
            .value)
        },
    );
    row(
        "weighted kde_calibration_error 1e5 (realistic) vs unweighted",
        base,
        cand,
        Some(1.5),
    );
}

/// The weighted counterpart of [`sum_vectorised`]: Σw, Σw·y and Σw·f over the three
/// slices with sixteen independent accumulators each (vectorised): the least a weighted
/// pass over the rows reads.
#[inline(never)]
fn weighted_sums_vectorised(scores: &[f64], labels: &[u8], weights: &[f64]) -> (f64, f64, f64) {
    const LANES: usize = 16;
    let mut sums = [[0.0f64; LANES]; 3];
    let chunks = scores
        .chunks_exact(LANES)
        .zip(labels.chunks_exact(LANES))
        .zip(weights.chunks_exact(LANES));
    for ((s, l), w) in chunks {
        for lane in 0..LANES {
            sums[0][lane] += w[lane];
            sums[1][lane] += w[lane] * f64::from(l[lane]);
            sums[2][lane] += w[lane] * s[lane];
        }
    }
    let total = |lanes: &[f64; LANES]| lanes.iter().sum::<f64>();
    (total(&sums[0]), total(&sums[1]), total(&sums[2]))
}

/// Weighted ECE_bin (`tce::weights`, weights uniform in [0.5, 2)) against the unweighted
/// path over the same 10^6 samples: equal width against the histogram's push and
/// estimate, equal mass against the sorted buffer's push, sort and estimate; then the
/// weighted sweep against the buffer's push, sort and sweep. Target ≤ 1.5× (issue 40).
fn weighted_rows() {
    let s = samples(Data::Realistic, N);
    let mut rng = XorShift(0x005e_ed0f_3e19);
    let weights: Vec<f64> = (0..N).map(|_| 0.5 + 1.5 * rng.unit()).collect();
    let mut storage = vec![Slot::EMPTY; 2 * N];
    for (name, binning) in [
        ("equal width", Binning::EqualWidth(Closure::Left)),
        ("equal mass", Binning::EqualMass(Ties::Split)),
    ] {
        let (base, cand) = interleaved(
            || {
                time_fresh!(1, (), |_x| match binning {
                    Binning::EqualWidth(closure) => {
                        let mut h = Histogram::<[BinStats; BINS]>::new(closure);
                        h.push_batch(black_box(&s.scores), black_box(&s.labels))
                            .unwrap();
                        h.ece_bin(Norm::L2).unwrap().value
                    }
                    Binning::EqualMass(_) => {
                        let mut buffer = SortedBuffer::with_storage(&mut storage[..]).unwrap();
                        buffer
                            .push_batch(black_box(&s.scores), black_box(&s.labels))
                            .unwrap();
                        buffer
                            .sorted()
                            .ece_bin(binning, BINS, Norm::L2)
                            .unwrap()
                            .value
                    }
                })
            },
            || {
                time_fresh!(1, (), |_x| tce::weights::ece_bin(
                    black_box(&s.scores),
                    black_box(&s.labels),
                    black_box(&weights),
                    binning,
                    BINS,
                    Norm::L2
                )
                .unwrap()
                .value)
            },
        );
        row(
            &format!("weighted ece_bin 1e6 ({name}) vs unweighted"),
            base,
            cand,
            Some(1.5),
        );
    }
    // The floor of the equal-width pass: the inputs read at memory speed, with and
    // without the weights (no bins: 16 independent sums each, vectorised).
    let (base, cand) = interleaved(
        || {
            time_fresh!(1, (), |_x| sum_vectorised(
                black_box(&s.scores),
                black_box(&s.labels)
            ))
        },
        || {
            time_fresh!(1, (), |_x| weighted_sums_vectorised(
                black_box(&s.scores),
                black_box(&s.labels),
                black_box(&weights)
            ))
        },
    );
    row(
        "floor: Σw, Σw·y, Σw·f vectorised (no bins) vs Σf, Σy",
        base,
        cand,
        None,
    );
    // The sweep: the unweighted one through the sorted buffer (push, sort, sweep).
    for (name, binning) in [
        ("equal width", Binning::EqualWidth(Closure::Left)),
        ("equal mass", Binning::EqualMass(Ties::Split)),
    ] {
        let (base, cand) = interleaved(
            || {
                time_fresh!(1, (), |_x| {
                    let mut buffer = SortedBuffer::with_storage(&mut storage[..]).unwrap();
                    buffer
                        .push_batch(black_box(&s.scores), black_box(&s.labels))
                        .unwrap();
                    buffer
                        .sorted()
                        .ece_sweep(binning, Norm::L2, SweepOptions::default())
                        .unwrap()
                        .value
                })
            },
            || {
                time_fresh!(1, (), |_x| tce::weights::ece_sweep(
                    black_box(&s.scores),
                    black_box(&s.labels),
                    black_box(&weights),
                    binning,
                    Norm::L2,
                    SweepOptions::default()
                )
                .unwrap()
                .value)
            },
        );
        row(
            &format!("weighted ece_sweep 1e6 ({name}) vs unweighted"),
            base,
            cand,
            Some(1.5),
        );
    }
}

/// The one-call `tce_ece_bin` with 15 equal-width bins.
#[cfg(feature = "ffi")]
fn ew_one_call(s: &Samples, scratch: &mut [Slot]) -> f64 {
    one_call(s, scratch, tce::ffi::tce_binning::EqualWidth)
}

/// The one-call `tce_ece_bin` with 15 equal-mass bins (by selection: src/select.rs).
#[cfg(feature = "ffi")]
fn em_one_call(s: &Samples, scratch: &mut [Slot]) -> f64 {
    one_call(s, scratch, tce::ffi::tce_binning::EqualMass)
}

/// Sort (the radix sort, with room) and ECE_bin with 15 equal-mass bins: what the
/// one-call equal-mass function computed before selection.
#[inline(never)]
fn em_fixed(buffer: &mut SortedBuffer<&mut [Slot]>) -> f64 {
    let sorted = buffer.sorted();
    sorted
        .ece_bin(Binning::EQUAL_MASS, BINS, Norm::L2)
        .unwrap()
        .value
}

/// The one-call `tce_ece_bin` with 15 bins of `binning`.
#[cfg(feature = "ffi")]
#[inline(never)]
fn one_call(s: &Samples, scratch: &mut [Slot], binning: tce::ffi::tce_binning) -> f64 {
    use tce::ffi::{tce_ece_bin, tce_estimate, tce_options, tce_status};
    let options = tce_options {
        binning: binning as u32,
        bins: BINS,
        ..Default::default()
    };
    let mut out = tce_estimate {
        value: 0.0,
        samples: 0,
        bins: 0,
    };
    // SAFETY: the arrays and the scratch are live for the call, the scratch's length is
    // its size in bytes (2n + 4 slots: more than tce_scratch_layout(n)).
    let status = unsafe {
        tce_ece_bin(
            s.scores.as_ptr(),
            s.scores.len(),
            s.labels.as_ptr(),
            s.labels.len(),
            &options,
            scratch.as_mut_ptr().cast(),
            std::mem::size_of_val(scratch),
            &mut out,
        )
    };
    assert_eq!(status, tce_status::Ok);
    out.value
}

/// numpy's `np.sort` of the same scores, in a Python process of its own (benches/floor.py)
/// that sorts a fresh copy whenever it is asked, so that its runs interleave with the
/// candidate's and share the machine's load with them.
struct NumpySort {
    child: std::process::Child,
    requests: std::process::ChildStdin,
    replies: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    /// numpy's version and the instruction set its sort was dispatched to, as the
    /// script reports them.
    version: String,
}

/// numpy's instruction-set dispatch targets above its x86-64 baseline, best first, as
/// `NPY_DISABLE_CPU_FEATURES` names them: the floor tries each that the CPU has.
const NUMPY_TARGETS: [&str; 4] = ["AVX512_SPR", "AVX512_ICL", "X86_V4", "X86_V3"];

impl NumpySort {
    /// The fastest of numpy's sorts on this machine: numpy picks the widest instructions
    /// the CPU has, which is not always the fastest sort (on AMD Zen 4, its AVX-512 sort
    /// took 55 ms where its AVX2 one took 11.5 ms: Zen 4 runs the compress-stores its
    /// AVX-512 partitioning uses slowly). So the floor starts numpy with each dispatch
    /// target the CPU has switched off in turn, times a few sorts of each, and keeps the
    /// fastest, reporting which (stderr lists them all). Or says why it cannot run.
    fn fastest(scores: &[f64]) -> Result<NumpySort, String> {
        let path =
            std::env::temp_dir().join(format!("tce-bench-scores-{}.f64", std::process::id()));
        let bytes: Vec<u8> = scores.iter().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
        let mut best: Option<(Duration, NumpySort)> = None;
        let mut failure = None;
        let mut seen = Vec::new();
        for off in 0..=NUMPY_TARGETS.len() {
            let disabled = NUMPY_TARGETS[..off].join(" ");
            let mut numpy = match NumpySort::start(&path, &disabled) {
                Ok(numpy) => numpy,
                Err(why) => {
                    failure = Some(why);
                    break;
                }
            };
            // Switching off a target the CPU lacks leaves the same sort: time it once.
            if seen.contains(&numpy.version) {
                continue;
            }
            seen.push(numpy.version.clone());
            let time = median((0..5).map(|_| numpy.time()).collect());
            eprintln!("floor: numpy {} np.sort {}", numpy.version, ms(time));
            let faster = match &best {
                Some((fastest, _)) => time < *fastest,
                None => true,
            };
            if faster {
                best = Some((time, numpy));
            }
        }
        let _ = std::fs::remove_file(&path);
        match (best, failure) {
            (Some((_, numpy)), _) => Ok(numpy),
            (None, Some(why)) => Err(why),
            (None, None) => Err("no numpy sort ran".to_owned()),
        }
    }

    /// Starts the script on the scores in `path` (with the Python of `TCE_BENCH_PYTHON`,
    /// by default the bench venv's), with numpy's dispatch targets `disabled` switched
    /// off, or says why it cannot run.
    fn start(path: &std::path::Path, disabled: &str) -> Result<NumpySort, String> {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let python = std::env::var("TCE_BENCH_PYTHON").unwrap_or_else(|_| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/target/bench-venv/bin/python").to_owned()
        });
        let child = Command::new(&python)
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/benches/floor.py"))
            .arg(path)
            .env("NPY_DISABLE_CPU_FEATURES", disabled)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // Inherited: a pipe nobody reads would stall the script once its warnings
            // filled it; a failure's message then shows above the bench's own.
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = child.map_err(|e| format!("{python}: {e} (see benches/floor.py)"))?;
        let (Some(requests), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to floor.py".to_owned());
        };
        let mut replies = std::io::BufReader::new(stdout).lines();
        // The first line (numpy's version and dispatch) comes once the scores are read.
        match replies.next() {
            Some(Ok(version)) => Ok(NumpySort {
                child,
                requests,
                replies,
                version,
            }),
            _ => {
                let status = child.wait().map_err(|e| e.to_string())?;
                Err(format!(
                    "{python} benches/floor.py: {status} (its message is above)"
                ))
            }
        }
    }

    /// One sort of a fresh copy, timed by the script, after a pause: rayon's workers spin
    /// for a while after the candidate's last job before they sleep, and must not share
    /// the cores with numpy's sort.
    fn time(&mut self) -> Duration {
        use std::io::Write;
        std::thread::sleep(Duration::from_millis(20));
        writeln!(self.requests).expect("floor.py takes a request");
        let reply = self.replies.next().expect("floor.py replies");
        let nanos: u64 = reply
            .expect("floor.py replies")
            .trim()
            .parse()
            .expect("floor.py replies with nanoseconds");
        Duration::from_nanos(nanos)
    }
}

impl Drop for NumpySort {
    fn drop(&mut self) {
        // It only waits for the next request.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn per(total: Duration, n: usize) -> f64 {
    total.as_secs_f64() * 1e9 / n as f64
}

/// A ratio row: the target (if any; otherwise the row is a reference) is judged on the
/// ratio of the medians; the ratio of the fastest runs (the least disturbed by anything
/// else on the machine) follows it.
fn row(case: &str, base: Runs, cand: Runs, target: Option<f64>) {
    let ratio = cand.median.as_secs_f64() / base.median.as_secs_f64();
    let fastest = cand.fastest.as_secs_f64() / base.fastest.as_secs_f64();
    let (ratio_cell, target_cell) = match target {
        Some(target) => {
            let verdict = if ratio <= target { "met" } else { "MISSED" };
            (
                format!("**{ratio:.2}×**"),
                format!("≤ {target}× ({verdict})"),
            )
        }
        None => (format!("{ratio:.2}×"), "(reference)".to_owned()),
    };
    println!(
        "| {case} | {} | {} | {ratio_cell} | {fastest:.2}× | {target_cell} |",
        ms(base.median),
        ms(cand.median)
    );
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench_batch_push(&mut criterion);
    bench_single_push(&mut criterion);
    bench_equal_mass(&mut criterion);
    bench_separable(&mut criterion);
    bench_equal_width_sweep(&mut criterion);
    criterion.final_summary();
    // `cargo bench` passes `--bench`; `cargo test --benches` does not (it only checks
    // that each case runs once).
    if std::env::args().any(|a| a == "--bench") {
        // `TCE_BENCH_ROWS=discrete_sweep cargo bench --bench core -- discrete_sweep`:
        // the discrete-confidence sweep rows alone (the filter matches no criterion group).
        if std::env::var("TCE_BENCH_ROWS").as_deref() == Ok("discrete_sweep") {
            ratio_header();
            discrete_sweep_rows();
        } else if std::env::var("TCE_BENCH_ROWS").as_deref() == Ok("weighted_smooth") {
            // `TCE_BENCH_ROWS=weighted_smooth cargo bench --bench core -- weighted_smooth`:
            // the unweighted smooth ECE rows and the weighted smooth ECE and KDE rows.
            ratio_header();
            smooth_ece_rows();
            weighted_smooth_rows();
        } else if std::env::var("TCE_BENCH_ROWS").as_deref() == Ok("weights") {
            // `TCE_BENCH_ROWS=weights cargo bench --bench core -- weights`: the weighted
            // rows alone.
            ratio_header();
            weighted_rows();
        } else {
            ratios();
        }
    }
}
