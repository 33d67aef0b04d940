//! A small driver for instruction counts (`valgrind --tool=callgrind`), which do not
//! depend on the load of the machine the way times do. See docs/performance.md.
//!
//! ```text
//! cargo build --profile bench --features ffi --example perf_driver
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/perf_driver CASE [N]
//! ```
//!
//! Every case first generates the inputs of benches/core.rs (n samples, default 10^6);
//! the case `gen` does only that, so a case's own count is its total minus `gen`'s
//! (`gen-ties` for `em-ties`).
//! The buffers have capacity 2n, so that `sorted()` sorts with the free half (the radix
//! sort; before it, the same call sorted in place).
//! Cases: `gen`, `em` (sorted + ECE_bin(15) + ECE_sweep, equal mass, realistic scores),
//! `em-ties` (the same with 30 % exact 1.0), `sort` (the sort alone, realistic),
//! `push` (`Histogram::push_batch`, 15 bins), `ew-oneshot` (`tce_ece_bin`, equal width,
//! 15 bins; needs `--features ffi`), `em-oneshot` (the same, equal mass: selection) and
//! `em-oneshot-ties`. Not for callgrind: `time-sort`, `time-em` (and `-ties`), the
//! fastest of 21 runs in ms, and `time-sort-parallel`, `time-em-parallel` (and
//! `-parallel-ties`) with `sorted_parallel()`, the two-thread sort, and
//! `time-em-oneshot` (and `-ties`): equal-mass bins of a fixed count by selection alone
//! (`tce::select::equal_mass_bins`, what the one-call functions run), and `time-scatter`
//! (and `-ties`): the floor of the radix sort's first level, its two loops written out
//! here on 16-byte records like its slots (counting the 11-bit digits, then copying
//! each record to its bucket's next place), against a plain copy of the same records
//! (fastest of 21 runs of each, in ms; `-hot`: 30 % distinct scores in one bucket
//! instead of ties), and `time-push` (and `-ties`): `Histogram::push_batch` against its
//! lane loop's arithmetic alone and its cell updates alone, and all three against a
//! count alone (a 32-bit addition a sample into the same lanes) and the bench's
//! vectorised sum, and (with AVX2) the arithmetic four samples a vector (fastest of 201
//! runs).

use std::hint::black_box;

use tce::{BinStats, Binning, Closure, Histogram, Norm, Slot, SortedBuffer, SweepOptions, Ties};

/// The inputs of each case, by the case's suffix.
#[derive(Clone, Copy)]
enum Data {
    /// Skewed confidences, 1 − 0.9·u³ (benches/core.rs's realistic scores).
    Realistic,
    /// The same with 30 % exact 1.0 (`-ties`, benches/core.rs's ties).
    Ties,
    /// The same 30 % drawn apart in [0.9995, 0.9999) (`-hot`): distinct scores that all
    /// fall in one first-level bucket (the one below 1.0's), to tell a hot bucket from
    /// ties.
    Hot,
}

/// The generator and inputs of benches/core.rs (and the `Hot` variant, from the same
/// draws).
fn samples(data: Data, n: usize) -> (Vec<f64>, Vec<u8>) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut unit = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    };
    let (mut scores, mut labels) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let u = unit();
        let score = match data {
            Data::Ties if unit() < 0.3 => 1.0,
            Data::Hot if unit() < 0.3 => 0.9995 + 0.0004 * u,
            _ => 1.0 - 0.9 * u * u * u,
        };
        labels.push(u8::from(unit() < score * score));
        scores.push(score);
    }
    (scores, labels)
}

/// A record the size of a sort's slot: a score and two 32-bit words.
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Record {
    score: f64,
    order: u32,
    hits_before: u32,
}

/// Times the radix sort's first level on `scores` (its digit: the 11 bits below the
/// highest bit in which the scores differ), as two loops of its own, against a copy of
/// the same records; prints the fastest of 21 runs of each.
fn first_level_floor(scores: &[f64]) {
    let records: Vec<Record> = (0u32..)
        .zip(scores)
        .map(|(i, &score)| Record {
            score,
            order: i << 1,
            hits_before: 0,
        })
        .collect();
    let first = scores.first().map_or(0, |s| s.to_bits());
    let varying = scores.iter().fold(0, |v, s| v | (s.to_bits() ^ first));
    let top = u64::BITS - varying.leading_zeros();
    let width = (usize::BITS - records.len().leading_zeros())
        .saturating_sub(1)
        .min(11)
        .min(top);
    let (shift, mask) = (top - width, (1usize << width) - 1);
    let digit = |r: &Record| (r.score.to_bits() >> shift) as usize & mask;
    let mut to = vec![Record::default(); records.len()];
    let (mut count, mut scatter, mut copy) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..21 {
        let start = std::time::Instant::now();
        let mut places = [0u32; 2048];
        for r in &records {
            places[digit(r)] += 1;
        }
        count = count.min(start.elapsed().as_secs_f64() * 1e3);
        let start = std::time::Instant::now();
        let mut sum = 0;
        for place in places.iter_mut() {
            (*place, sum) = (sum, sum + *place);
        }
        // Four records an iteration, as the sort's `scatter` (one an iteration ran
        // 3.8–3.9 ms on every data set here, hiding the hot bucket's cost).
        let mut place = |r: &Record| {
            let head = &mut places[digit(r)];
            to[*head as usize] = *r;
            *head += 1;
        };
        let mut fours = records.chunks_exact(4);
        for four in &mut fours {
            for r in four {
                place(r);
            }
        }
        fours.remainder().iter().for_each(place);
        black_box(&to);
        scatter = scatter.min(start.elapsed().as_secs_f64() * 1e3);
        let start = std::time::Instant::now();
        to.copy_from_slice(&records);
        black_box(&to);
        copy = copy.min(start.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "first level, fastest of 21 runs: count {count:.3} ms, scatter {scatter:.3} ms; \
         copy of the same records {copy:.3} ms"
    );
}

/// Times `Histogram::push_batch` (15 bins) against the two halves of its lane loop
/// (src/histogram.rs `fill_lanes`), written out here: the arithmetic alone (validation,
/// bin index and quanta of every sample, folded into one accumulator a lane instead of
/// added to cells) and the cell updates alone (one 128-bit addition a sample to a cell
/// picked from the score's bits and label, with no conversion). The push cannot be
/// faster than either; prints the fastest of 201 runs of each, in ms.
fn push_floors(scores: &[f64], labels: &[u8]) {
    const LANES: usize = 8;
    const BINS: usize = 15;
    #[cfg(target_arch = "x86_64")]
    fn floor(x: f64) -> u64 {
        use std::arch::x86_64::{_mm_cvttsd_si64, _mm_set_sd};
        // SAFETY: SSE2 is part of the x86-64 baseline; no memory is touched.
        unsafe { _mm_cvttsd_si64(_mm_set_sd(x)) as u64 }
    }
    #[cfg(not(target_arch = "x86_64"))]
    fn floor(x: f64) -> u64 {
        x as u64
    }
    let arithmetic = || {
        let (mut folded, mut clamped_away, mut label_bits) = ([0u64; LANES], [0.0f64; LANES], 0u8);
        for (s, l) in scores.chunks_exact(LANES).zip(labels.chunks_exact(LANES)) {
            for lane in 0..LANES {
                let score = s[lane];
                let clamped = if score > 0.0 { score } else { 0.0 };
                let clamped = if clamped < 1.0 { clamped } else { 1.0 };
                clamped_away[lane] += (score - clamped).abs();
                label_bits |= l[lane];
                let x = score * BINS as f64;
                let bin = floor(if x < (BINS - 1) as f64 {
                    x
                } else {
                    (BINS - 1) as f64
                });
                let cell = (bin << 1) | u64::from(l[lane]);
                folded[lane] = folded[lane].wrapping_add(floor(score * 2f64.powi(62)) ^ cell);
            }
        }
        black_box((folded, clamped_away, label_bits));
    };
    // Cells from the score's bits, `update` applied to one a sample, eight lanes apart.
    fn fill_cells<T: Copy>(
        scores: &[f64],
        labels: &[u8],
        empty: T,
        update: impl Fn(T, u64) -> T,
    ) -> [[T; 64]; LANES] {
        let mut cells = [[empty; 64]; LANES];
        for (s, l) in scores.chunks_exact(LANES).zip(labels.chunks_exact(LANES)) {
            for lane in 0..LANES {
                let bits = s[lane].to_bits();
                let cell = (((bits >> 48) as usize & 15) << 1 | usize::from(l[lane])) & 63;
                cells[lane][cell] = update(cells[lane][cell], bits);
            }
        }
        cells
    }
    let cell_updates = || {
        black_box(fill_cells(scores, labels, 0u128, |cell, bits| {
            cell.wrapping_add(1 << 96 | u128::from(bits))
        }));
    };
    // A lower bound for any histogram that touches a cell a sample: a count alone, one
    // 32-bit addition a sample into the same laned cells, nothing else.
    let counts_alone = || {
        black_box(fill_cells(scores, labels, 0u32, |cell, _| {
            cell.wrapping_add(1)
        }));
    };
    // The bench's vectorised read of the same inputs (benches/core.rs `sum_vectorised`).
    let vectorised_sum = || {
        const SUM_LANES: usize = 16;
        let (mut sums, mut hits) = ([0.0f64; SUM_LANES], [0u32; SUM_LANES]);
        for (s, l) in scores
            .chunks_exact(SUM_LANES)
            .zip(labels.chunks_exact(SUM_LANES))
        {
            for lane in 0..SUM_LANES {
                sums[lane] += s[lane];
                hits[lane] += u32::from(l[lane]);
            }
        }
        black_box((sums, hits));
    };
    // The same arithmetic four samples a vector (AVX2, where the CPU has it), checked
    // first against the push's values.
    #[cfg(target_arch = "x86_64")]
    let vectorised_arithmetic = std::is_x86_feature_detected!("avx2").then(|| {
        // SAFETY: the CPU has AVX2, checked just now.
        let run = || unsafe { arithmetic_avx2(scores, labels, BINS) };
        assert_eq!(
            run(),
            arithmetic_scalar(scores, labels, BINS),
            "the vectorised arithmetic computes the push's values"
        );
        move || {
            black_box(run());
        }
    });
    #[cfg(not(target_arch = "x86_64"))]
    let vectorised_arithmetic = None::<fn()>;
    let push = || {
        let mut histogram = Histogram::<[BinStats; BINS]>::new(Closure::Left);
        histogram.push_batch(scores, labels).unwrap();
        black_box(histogram);
    };
    let fastest = |run: &dyn Fn()| {
        (0..201).fold(f64::INFINITY, |fastest, _| {
            let start = std::time::Instant::now();
            run();
            fastest.min(start.elapsed().as_secs_f64() * 1e3)
        })
    };
    let (push, arithmetic, cell_updates, counts_alone, sum) = (
        fastest(&push),
        fastest(&arithmetic),
        fastest(&cell_updates),
        fastest(&counts_alone),
        fastest(&vectorised_sum),
    );
    println!(
        "push_batch {push:.3} ms; its arithmetic alone {arithmetic:.3} ms ({:.2}x), \
         its cell updates alone {cell_updates:.3} ms ({:.2}x); fastest of 201 runs",
        arithmetic / push,
        cell_updates / push
    );
    println!(
        "against the vectorised sum ({sum:.3} ms): push_batch {:.2}x, its cell updates \
         alone {:.2}x, a count alone a sample {counts_alone:.3} ms {:.2}x",
        push / sum,
        cell_updates / sum,
        counts_alone / sum
    );
    if let Some(vectorised_arithmetic) = vectorised_arithmetic {
        let vectorised = fastest(&vectorised_arithmetic);
        println!(
            "its arithmetic vectorised (AVX2, four samples a vector) {vectorised:.3} ms: \
             {:.2}x the vectorised sum",
            vectorised / sum
        );
    }
}

/// [`arithmetic_avx2`] one sample at a time, with the push's own bin index and quanta
/// (`floor(score · 2^62)` by a conversion), folded the same way: the check that the
/// vectorised form computes the same values.
#[cfg(target_arch = "x86_64")]
fn arithmetic_scalar(scores: &[f64], labels: &[u8], bins: usize) -> ([u64; 2], bool) {
    let (mut folded, mut bad) = ([0u64; 2], false);
    for (s, l) in scores.chunks_exact(4).zip(labels.chunks_exact(4)) {
        let (mut added, mut cells) = ([0u64; 2], [0u64; 2]);
        for (k, (&score, &label)) in s.iter().zip(l).enumerate() {
            bad |= !(0.0..=1.0).contains(&score) || label > 1;
            let clamped = score.clamp(0.0, 1.0);
            let bin = (clamped * bins as f64).min((bins - 1) as f64) as u64;
            let quanta = (clamped * 2f64.powi(62)) as u64;
            added[0] = added[0].wrapping_add(quanta & 0xffff_ffff);
            added[1] = added[1].wrapping_add((quanta >> 32) + (1 << 43));
            cells[k / 2] |= ((bin << 1) | u64::from(label)) << (32 * (k % 2));
        }
        for lane in 0..2 {
            folded[lane] = folded[lane].wrapping_add(added[lane]) ^ cells[lane];
        }
    }
    (folded, bad)
}

/// The push's arithmetic four samples a vector, folded, not added to cells: validation
/// (clamping into [0, 1] changes exactly the bad scores; the labels' OR), the left-closed
/// bin index and each sample's cell, and the exact quanta floor(score · 2^62) taken
/// from the score's bits (the mantissa with its implicit bit, shifted by the exponent:
/// AVX2 has no conversion of doubles to 64-bit integers), split into 32-bit halves with
/// a count in the upper one, as a 128-bit vector cell would add them. A floor for any
/// vectorised form of the lane loop. Returns the fold, and whether a sample was bad.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn arithmetic_avx2(scores: &[f64], labels: &[u8], bins: usize) -> ([u64; 2], bool) {
    use std::arch::x86_64::*;
    let (zero, one) = (_mm256_setzero_pd(), _mm256_set1_pd(1.0));
    let (scale, top) = (
        _mm256_set1_pd(bins as f64),
        _mm256_set1_pd((bins - 1) as f64),
    );
    let mantissa = _mm256_set1_epi64x(0x000f_ffff_ffff_ffff);
    let implicit = _mm256_set1_epi64x(0x0010_0000_0000_0000);
    // 1023 (the exponent's bias) + 52 (the mantissa's bits) − 62 (the quanta's).
    let unit_exponent = _mm256_set1_epi64x(1013);
    let (low_half, count_unit) = (_mm256_set1_epi64x(0xffff_ffff), _mm256_set1_epi64x(1 << 43));
    let (mut changed, mut label_bits) = (_mm256_setzero_pd(), _mm256_setzero_si256());
    let mut folded = _mm_setzero_si128();
    for (s, l) in scores.chunks_exact(4).zip(labels.chunks_exact(4)) {
        let score = _mm256_loadu_pd(s.as_ptr());
        let label = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(i32::from_le_bytes([
            l[0], l[1], l[2], l[3],
        ])));
        label_bits = _mm256_or_si256(label_bits, label);
        let clamped = _mm256_min_pd(_mm256_max_pd(score, zero), one);
        changed = _mm256_or_pd(changed, _mm256_cmp_pd(score, clamped, _CMP_NEQ_UQ));
        let bin = _mm256_cvttpd_epi32(_mm256_min_pd(_mm256_mul_pd(clamped, scale), top));
        let label32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
            label,
            _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0),
        ));
        let cell = _mm_or_si128(_mm_slli_epi32(bin, 1), label32);
        // Shift counts past 63 give 0 (the variable shifts' rule): scores below 2^-62
        // have no quanta, and one of the two shifts is always out of range but at 2^-10,
        // where both are 0 and give the same value.
        let bits = _mm256_castpd_si256(clamped);
        let exponent = _mm256_srli_epi64(bits, 52);
        let significand = _mm256_or_si256(_mm256_and_si256(bits, mantissa), implicit);
        let quanta = _mm256_or_si256(
            _mm256_sllv_epi64(significand, _mm256_sub_epi64(exponent, unit_exponent)),
            _mm256_srlv_epi64(significand, _mm256_sub_epi64(unit_exponent, exponent)),
        );
        let low = _mm256_and_si256(quanta, low_half);
        let high = _mm256_add_epi64(_mm256_srli_epi64(quanta, 32), count_unit);
        let (even, odd) = (
            _mm256_unpacklo_epi64(low, high),
            _mm256_unpackhi_epi64(low, high),
        );
        let added = _mm_add_epi64(
            _mm_add_epi64(_mm256_castsi256_si128(even), _mm256_castsi256_si128(odd)),
            _mm_add_epi64(
                _mm256_extracti128_si256(even, 1),
                _mm256_extracti128_si256(odd, 1),
            ),
        );
        folded = _mm_xor_si128(_mm_add_epi64(folded, added), cell);
    }
    let folded = [
        _mm_cvtsi128_si64(folded) as u64,
        _mm_extract_epi64::<1>(folded) as u64,
    ];
    // A score changed by the clamp, or a label bit above the lowest.
    let bad = _mm256_movemask_pd(changed) != 0
        || _mm256_testz_si256(label_bits, _mm256_set1_epi64x(!1)) == 0;
    (folded, bad)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let case = args.get(1).map_or("gen", String::as_str);
    let n: usize = args.get(2).map_or(1_000_000, |n| n.parse().expect("N"));
    let data = if case.ends_with("-ties") {
        Data::Ties
    } else if case.ends_with("-hot") {
        Data::Hot
    } else {
        Data::Realistic
    };
    let (scores, labels) = samples(data, n);
    // 2n slots and room for a header: the one-call scratch (tce_scratch_layout(n)).
    let mut storage = vec![Slot::EMPTY; 2 * n + 4];
    let scratch_len = std::mem::size_of_val(&storage[..]);
    match case {
        "gen" | "gen-ties" => {}
        "em" | "em-ties" => {
            let mut buffer = SortedBuffer::with_storage(&mut storage[..2 * n]).unwrap();
            buffer.push_batch(&scores, &labels).unwrap();
            let sorted = buffer.sorted();
            let bin = sorted.ece_bin(Binning::EQUAL_MASS, 15, Norm::L2).unwrap();
            let sweep = sorted
                .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
                .unwrap();
            println!("{} {} {}", bin.value, sweep.value, sweep.bins);
        }
        "sort" => {
            let mut buffer = SortedBuffer::with_storage(&mut storage[..2 * n]).unwrap();
            buffer.push_batch(&scores, &labels).unwrap();
            black_box(buffer.sorted().len());
        }
        // Not for callgrind: the fastest of `N` runs of the sort / EM pipeline, in ms.
        // `-parallel`: `sorted_parallel` (two threads) instead of `sorted`.
        "time-sort"
        | "time-em"
        | "time-sort-ties"
        | "time-em-ties"
        | "time-sort-parallel"
        | "time-em-parallel"
        | "time-sort-parallel-ties"
        | "time-em-parallel-ties" => {
            let mut times = Vec::with_capacity(21);
            for _ in 0..21 {
                let mut buffer = SortedBuffer::with_storage(&mut storage[..2 * n]).unwrap();
                buffer.push_batch(&scores, &labels).unwrap();
                let start = std::time::Instant::now();
                let sorted = if case.contains("-parallel") {
                    buffer.sorted_parallel()
                } else {
                    buffer.sorted()
                };
                if case.starts_with("time-em") {
                    black_box(sorted.ece_bin(Binning::EQUAL_MASS, 15, Norm::L2).unwrap());
                    black_box(
                        sorted
                            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
                            .unwrap(),
                    );
                }
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            println!(
                "{case}: fastest of 21 runs {:.3} ms, median {:.3} ms",
                times[0], times[10]
            );
        }
        "push" => {
            let mut histogram = Histogram::<[BinStats; 15]>::new(Closure::Left);
            histogram.push_batch(&scores, &labels).unwrap();
            println!("{}", histogram.ece_bin(Norm::L2).unwrap().value);
        }
        // The fastest of 21 runs of the one-call equal-mass ECE_bin(15) (selection).
        "time-em-oneshot" | "time-em-oneshot-ties" => {
            let mut bins = [BinStats::EMPTY; 15];
            let mut times = Vec::with_capacity(21);
            for _ in 0..21 {
                let start = std::time::Instant::now();
                let selected = tce::select::equal_mass_bins(
                    &scores,
                    &labels,
                    Ties::Split,
                    &mut bins,
                    &mut storage,
                );
                black_box((selected.unwrap(), &bins));
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            println!(
                "{case}: fastest of 21 runs {:.3} ms, median {:.3} ms",
                times[0], times[10]
            );
        }
        #[cfg(feature = "ffi")]
        "ew-oneshot" | "em-oneshot" | "em-oneshot-ties" => {
            use tce::ffi::{tce_binning, tce_ece_bin, tce_estimate, tce_options, tce_status};
            let binning = if case.starts_with("em") {
                tce_binning::EqualMass
            } else {
                tce_binning::EqualWidth
            };
            let options = tce_options {
                binning: binning as u32,
                ..Default::default()
            };
            let mut out = tce_estimate {
                value: 0.0,
                samples: 0,
                bins: 0,
            };
            // SAFETY: the arrays and the scratch are live for the call; the scratch (32
            // bytes a sample and 64 more) holds tce_scratch_layout(n).
            let status = unsafe {
                tce_ece_bin(
                    scores.as_ptr(),
                    n,
                    labels.as_ptr(),
                    n,
                    &options,
                    storage.as_mut_ptr().cast(),
                    scratch_len,
                    &mut out,
                )
            };
            assert_eq!(status, tce_status::Ok);
            println!("{}", out.value);
        }
        "time-scatter" | "time-scatter-ties" | "time-scatter-hot" => first_level_floor(&scores),
        "time-push" | "time-push-ties" => push_floors(&scores, &labels),
        other => panic!("unknown case {other}"),
    }
    black_box(&storage);
}
