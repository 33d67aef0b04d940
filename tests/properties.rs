//! Property tests: every estimator against the naive implementations in `common`, and the
//! invariances SPEC.md promises.

mod common;

use proptest::prelude::*;
use tce::{
    BinStats, Binning, Closure, Histogram, Norm, Slot, SortedBuffer, SweepLimit, SweepOptions, Ties,
};

const TOLERANCE: f64 = 1e-12;

/// Scores that hit the hard cases often: exact ties, 0, 1, and bin edges.
fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0..=1.0f64,
        1 => prop::sample::select(vec![0.0, 0.1, 0.2, 0.25, 0.5, 0.6, 0.75, 0.9, 1.0]),
    ]
}

/// Scores at and beyond the edges of [0, 1], valid or not, and arbitrary bit patterns.
fn bad_or_edge_score() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![
            -0.0,
            0.0,
            1.0,
            5e-324,
            -5e-324,
            -1e-300,
            1.0 + f64::EPSILON,
            1.0 - f64::EPSILON / 2.0,
            2.0,
            -1.0,
            -1.5,
            -1e10,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
        ]),
        any::<u64>().prop_map(f64::from_bits),
    ]
}

fn samples(max: usize) -> impl Strategy<Value = (Vec<f64>, Vec<u8>)> {
    prop::collection::vec((score(), 0u8..=1), 1..max).prop_map(|v| v.into_iter().unzip())
}

/// 1 to 300 samples of 1 to 6 distinct scores, with labels calibrated (a hit with
/// probability the score), split at a threshold score, or at random.
fn tied_samples() -> impl Strategy<Value = (Vec<f64>, Vec<u8>)> {
    let menu = vec![0.0, 0.1, 0.25, 0.3, 0.5, 0.6, 0.8, 0.9, 0.95, 1.0];
    (
        prop::sample::subsequence(menu, 1..=6),
        1usize..300,
        any::<u64>(),
        0u8..3,
    )
        .prop_map(|(values, n, seed, mode)| {
            let mut state = seed | 1;
            let mut next = move || {
                // xorshift64: any fixed, well-mixed sequence serves.
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64
            };
            let threshold = values[values.len() / 2];
            (0..n)
                .map(|_| {
                    let score = values[(next() * values.len() as f64) as usize % values.len()];
                    let label = match mode {
                        0 => next() < score,
                        1 => score >= threshold,
                        _ => next() < 0.5,
                    };
                    (score, u8::from(label))
                })
                .unzip()
        })
}

fn norm() -> impl Strategy<Value = f64> {
    prop_oneof![Just(1.0), Just(2.0), 1.0..4.0f64]
}

fn closure() -> impl Strategy<Value = Closure> {
    prop_oneof![Just(Closure::Left), Just(Closure::Right)]
}

fn ties() -> impl Strategy<Value = Ties> {
    prop_oneof![Just(Ties::Split), Just(Ties::Keep)]
}

fn naive_assignment(scores: &[f64], binning: Binning, bins: usize) -> Vec<usize> {
    match binning {
        Binning::EqualWidth(c) => common::equal_width_bins(scores, bins, c == Closure::Right),
        Binning::EqualMass(t) => common::equal_mass_bins(scores, bins, t == Ties::Keep),
    }
}

fn assert_close(actual: f64, expected: f64, what: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        (actual - expected).abs() <= TOLERANCE,
        "{}: {} vs naive {}",
        what,
        actual,
        expected
    );
    Ok(())
}

/// ECE_debias is the p-th root of a sum that is exactly 0 for well-calibrated bins, where
/// the root turns rounding of order 1e-17 into differences of order 1e-9: compare the sums.
fn assert_close_unrooted(
    actual: f64,
    expected: f64,
    p: f64,
    what: &str,
) -> Result<(), TestCaseError> {
    assert_close(actual.powf(p), expected.powf(p), what)
}

/// The sweep of (scores, labels) has the b* and value of the literal sweep, which
/// rebins every sample for every b up to `max_bins` (the limit `options` sets).
fn sweep_agrees_with_the_naive_sweep(
    scores: &[f64],
    labels: &[u8],
    binning: Binning,
    p: f64,
    options: SweepOptions,
    max_bins: usize,
) -> Result<(), TestCaseError> {
    let naive_b = common::sweep_bins(scores, labels, max_bins, &|b| {
        naive_assignment(scores, binning, b)
    });
    let mut storage = vec![Slot::EMPTY; scores.len()];
    let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
    buffer.push_batch(scores, labels).unwrap();
    let sorted = buffer.sorted();
    let e = sorted
        .ece_sweep(binning, Norm::new(p).unwrap(), options)
        .unwrap();
    prop_assert_eq!(e.bins, naive_b);
    let assignment = naive_assignment(scores, binning, naive_b);
    let table = common::bin_table(scores, labels, &assignment, naive_b);
    assert_close(e.value, common::ece(&table, p), "sweep value")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn equal_width_histogram_matches_naive(
        (scores, labels) in samples(200), bins in 1usize..40, p in norm(), closure in closure()
    ) {
        let mut storage = vec![BinStats::EMPTY; bins];
        let mut h = Histogram::with_storage(&mut storage, closure).unwrap();
        h.push_batch(&scores, &labels).unwrap();
        let table = common::bin_table(&scores, &labels, &common::equal_width_bins(&scores, bins, closure == Closure::Right), bins);
        let norm = Norm::new(p).unwrap();
        assert_close(h.ece_bin(norm).unwrap().value, common::ece(&table, p), "ece_bin")?;
        assert_close(h.mce().unwrap().value, common::mce(&table), "mce")?;
        let assignment = common::equal_width_bins(&scores, bins, closure == Closure::Right);
        assert_close_unrooted(h.ece_debias(norm).unwrap().value, common::debias(&scores, &labels, &assignment, bins, p), p, "debias")?;
        prop_assert_eq!(h.samples(), scores.len() as u64);
        for (k, (stats, naive)) in h.bins().iter().zip(&table).enumerate() {
            prop_assert_eq!(stats.count() as usize, naive.0, "bin {} count", k);
        }
    }

    #[test]
    fn buffer_estimates_match_naive(
        (scores, labels) in samples(200), bins in 1usize..40, p in norm(),
        closure in closure(), ties in ties(), equal_mass in any::<bool>()
    ) {
        let binning = if equal_mass { Binning::EqualMass(ties) } else { Binning::EqualWidth(closure) };
        let mut storage = vec![Slot::EMPTY; scores.len()];
        let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
        buffer.push_batch(&scores, &labels).unwrap();
        let sorted = buffer.sorted();
        let assignment = naive_assignment(&scores, binning, bins);
        let table = common::bin_table(&scores, &labels, &assignment, bins);
        let norm = Norm::new(p).unwrap();
        for (k, (stats, naive)) in sorted.bins(binning, bins).zip(&table).enumerate() {
            prop_assert_eq!(stats.count() as usize, naive.0, "bin {} count", k);
        }
        let e = sorted.ece_bin(binning, bins, norm).unwrap();
        prop_assert_eq!((e.samples, e.bins), (scores.len() as u64, bins));
        assert_close(e.value, common::ece(&table, p), "ece_bin")?;
        assert_close(sorted.mce(binning, bins).unwrap().value, common::mce(&table), "mce")?;
        assert_close_unrooted(
            sorted.ece_debias(binning, bins, norm).unwrap().value,
            common::debias(&scores, &labels, &assignment, bins, p),
            p,
            "debias",
        )?;
    }

    #[test]
    fn sweep_matches_the_naive_rebinning_sweep(
        (scores, labels) in samples(120), p in norm(), closure in closure(), ties in ties(),
        equal_mass in any::<bool>(), paper_limit in any::<bool>(), cap in prop::option::of(1usize..60)
    ) {
        let binning = if equal_mass { Binning::EqualMass(ties) } else { Binning::EqualWidth(closure) };
        let limit = if paper_limit { SweepLimit::PaperCode } else { SweepLimit::Samples };
        let options = SweepOptions { max_bins: cap, limit };
        let n = scores.len();
        let max_bins = (if paper_limit { n - 1 } else { n }).min(cap.unwrap_or(usize::MAX)).max(1);
        sweep_agrees_with_the_naive_sweep(&scores, &labels, binning, p, options, max_bins)?;
    }

    /// The sweep on few distinct scores (1 to 6), where its partitions are unions of tie
    /// groups and b* used to run to n: the same b* and value as the literal sweep, which
    /// rebins every sample for every b up to the limit (labels drawn calibrated, split at
    /// a threshold so that every b passes, or at random).
    #[test]
    fn sweep_on_few_distinct_scores_matches_the_naive_rebinning_sweep(
        (scores, labels) in tied_samples(), p in norm(), closure in closure(), ties in ties(),
        equal_mass in any::<bool>(), cap in prop::option::of(1usize..400)
    ) {
        let binning = if equal_mass { Binning::EqualMass(ties) } else { Binning::EqualWidth(closure) };
        let options = SweepOptions { max_bins: cap, limit: SweepLimit::Samples };
        let n = scores.len();
        let max_bins = n.min(cap.unwrap_or(usize::MAX));
        sweep_agrees_with_the_naive_sweep(&scores, &labels, binning, p, options, max_bins)?;
    }

    /// One-vs-rest samples of a class: few hits, most of them high, after a long run of
    /// misses (which the sweep's check of the finest partition skips to the first hit's
    /// tie group), with ties on a grid or distinct scores.
    #[test]
    fn sweep_with_few_hits_matches_the_naive_rebinning_sweep(
        rows in prop::collection::vec((0.0..1.0f64, 0.0..1.0f64), 1..150),
        grid in prop::option::of(2u32..40), p in norm(), closure in closure(), ties in ties(),
        equal_mass in any::<bool>()
    ) {
        let scores: Vec<f64> = rows
            .iter()
            .map(|&(u, _)| {
                let s = u * u * u;
                grid.map_or(s, |g| (s * f64::from(g)).round() / f64::from(g))
            })
            .collect();
        let labels: Vec<u8> = rows.iter().zip(&scores).map(|(&(_, v), &s)| u8::from(v < 0.4 * s)).collect();
        let binning = if equal_mass { Binning::EqualMass(ties) } else { Binning::EqualWidth(closure) };
        let n = scores.len();
        sweep_agrees_with_the_naive_sweep(&scores, &labels, binning, p, SweepOptions::default(), n)?;
    }

    #[test]
    fn histogram_is_invariant_to_input_order_bit_for_bit(
        (scores, labels) in samples(200), bins in 1usize..30, seed in any::<u64>()
    ) {
        let permuted = permutation(scores.len(), seed);
        let (ps, pl): (Vec<f64>, Vec<u8>) = permuted.iter().map(|&i| (scores[i], labels[i])).unzip();
        let (mut a, mut b) = (vec![BinStats::EMPTY; bins], vec![BinStats::EMPTY; bins]);
        let mut ha = Histogram::with_storage(&mut a, Closure::Left).unwrap();
        let mut hb = Histogram::with_storage(&mut b, Closure::Left).unwrap();
        ha.push_batch(&scores, &labels).unwrap();
        hb.push_batch(&ps, &pl).unwrap();
        prop_assert_eq!(ha.bins(), hb.bins());
        prop_assert_eq!(ha.ece_bin(Norm::L2).unwrap(), hb.ece_bin(Norm::L2).unwrap());
    }

    #[test]
    fn equal_mass_with_kept_ties_is_invariant_to_input_order(
        (scores, labels) in samples(150), bins in 1usize..30, seed in any::<u64>()
    ) {
        // SPEC §3.2: with ties kept, equal scores share a bin whatever their arrival order.
        // (With ties split, arrival order decides which side of an edge a tie falls on.)
        let permuted = permutation(scores.len(), seed);
        let (ps, pl): (Vec<f64>, Vec<u8>) = permuted.iter().map(|&i| (scores[i], labels[i])).unzip();
        let keep = Binning::EqualMass(Ties::Keep);
        let estimates = |s: &[f64], l: &[u8]| {
            let mut storage = vec![Slot::EMPTY; s.len()];
            let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
            buffer.push_batch(s, l).unwrap();
            let sorted = buffer.sorted();
            (
                sorted.ece_bin(keep, bins, Norm::L2).unwrap(),
                sorted.ece_sweep(keep, Norm::L2, SweepOptions::default()).unwrap(),
                sorted.ece_bin(Binning::EQUAL_WIDTH, bins, Norm::L1).unwrap(),
            )
        };
        prop_assert_eq!(estimates(&scores, &labels), estimates(&ps, &pl));
    }

    #[test]
    fn merge_equals_pushing_both_streams(
        (a_scores, a_labels) in samples(100), (b_scores, b_labels) in samples(100), bins in 1usize..30
    ) {
        let (mut sa, mut sb, mut sboth) = (vec![BinStats::EMPTY; bins], vec![BinStats::EMPTY; bins], vec![BinStats::EMPTY; bins]);
        let mut ha = Histogram::with_storage(&mut sa, Closure::Right).unwrap();
        let mut hb = Histogram::with_storage(&mut sb, Closure::Right).unwrap();
        let mut both = Histogram::with_storage(&mut sboth, Closure::Right).unwrap();
        ha.push_batch(&a_scores, &a_labels).unwrap();
        hb.push_batch(&b_scores, &b_labels).unwrap();
        both.push_batch(&a_scores, &a_labels).unwrap();
        both.push_batch(&b_scores, &b_labels).unwrap();
        ha.merge(&hb).unwrap();
        prop_assert_eq!(ha.bins(), both.bins());

        let cap = a_scores.len() + b_scores.len();
        let (mut ba, mut bb, mut bboth) = (vec![Slot::EMPTY; cap], vec![Slot::EMPTY; cap], vec![Slot::EMPTY; cap]);
        let mut buf_a = SortedBuffer::with_storage(&mut ba).unwrap();
        let mut buf_b = SortedBuffer::with_storage(&mut bb).unwrap();
        let mut buf_both = SortedBuffer::with_storage(&mut bboth).unwrap();
        buf_a.push_batch(&a_scores, &a_labels).unwrap();
        let _ = buf_a.sorted(); // merging into a sorted buffer appends after its sorted part
        buf_b.push_batch(&b_scores, &b_labels).unwrap();
        let _ = buf_b.sorted();
        buf_both.push_batch(&a_scores, &a_labels).unwrap();
        buf_both.push_batch(&b_scores, &b_labels).unwrap();
        buf_a.merge(&buf_b).unwrap();
        let merged: Vec<(f64, u8)> = buf_a.sorted().iter().collect();
        let pushed: Vec<(f64, u8)> = buf_both.sorted().iter().collect();
        prop_assert_eq!(merged, pushed);
    }

    #[test]
    fn long_batches_equal_single_pushes_bit_for_bit(
        (scores, labels) in prop::collection::vec((score(), 0u8..=1), 1000..3000).prop_map(|v| v.into_iter().unzip::<_, _, Vec<f64>, Vec<u8>>()),
        bins in prop_oneof![1usize..=64, 65usize..100], closure in closure()
    ) {
        // Long batches into up to 64 bins take the laned path; compare with one at a time.
        let (mut a, mut b) = (vec![BinStats::EMPTY; bins], vec![BinStats::EMPTY; bins]);
        let mut batch = Histogram::with_storage(&mut a, closure).unwrap();
        let mut single = Histogram::with_storage(&mut b, closure).unwrap();
        batch.push_batch(&scores, &labels).unwrap();
        for (&s, &l) in scores.iter().zip(&labels) {
            single.push(s, l).unwrap();
        }
        prop_assert_eq!(batch.bins(), single.bins());
        let assignment = common::equal_width_bins(&scores, bins, closure == Closure::Right);
        for (k, stats) in batch.bins().iter().enumerate() {
            prop_assert_eq!(stats.count() as usize, assignment.iter().filter(|&&i| i == k).count());
        }
    }

    #[test]
    fn long_batches_are_refused_exactly_when_the_validation_rule_refuses(
        (mut scores, mut labels) in prop::collection::vec((score(), 0u8..=1), 1024..2000)
            .prop_map(|v| v.into_iter().unzip::<_, _, Vec<f64>, Vec<u8>>()),
        bad_score in prop::option::of((any::<prop::sample::Index>(), bad_or_edge_score())),
        bad_label in prop::option::of((any::<prop::sample::Index>(), 2u8..)),
        bins in 1usize..=64, closure in closure()
    ) {
        // The laned path validates on the fly with its own cheap test; its verdict must be
        // the one rule's, element for element, and a refused batch must leave no trace.
        if let Some((at, score)) = bad_score {
            let at = at.index(scores.len());
            scores[at] = score;
        }
        if let Some((at, label)) = bad_label {
            let at = at.index(labels.len());
            labels[at] = label;
        }
        let (mut a, mut b) = (vec![BinStats::EMPTY; bins], vec![BinStats::EMPTY; bins]);
        let mut batch = Histogram::with_storage(&mut a, closure).unwrap();
        batch.push(0.5, 1).unwrap();
        let before = batch.bins().to_vec();
        let result = batch.push_batch(&scores, &labels);
        prop_assert_eq!(result, tce::sample::check_batch(&scores, &labels));
        if result.is_err() {
            prop_assert_eq!(batch.bins(), &before[..]);
        } else {
            let mut single = Histogram::with_storage(&mut b, closure).unwrap();
            single.push(0.5, 1).unwrap();
            for (&s, &l) in scores.iter().zip(&labels) {
                single.push(s, l).unwrap();
            }
            prop_assert_eq!(batch.bins(), single.bins());
        }
    }

    #[test]
    fn single_pushes_equal_a_batch((scores, labels) in samples(100)) {
        let (mut one, mut batch) = (vec![Slot::EMPTY; 100], vec![Slot::EMPTY; 100]);
        let mut a = SortedBuffer::with_storage(&mut one).unwrap();
        let mut b = SortedBuffer::with_storage(&mut batch).unwrap();
        for (&s, &l) in scores.iter().zip(&labels) {
            a.push(s, l).unwrap();
            if s < 0.5 {
                let _ = a.sorted(); // interleaved sorting must not change the result
            }
        }
        b.push_batch(&scores, &labels).unwrap();
        let a: Vec<(f64, u8)> = a.sorted().iter().collect();
        let b: Vec<(f64, u8)> = b.sorted().iter().collect();
        prop_assert_eq!(a, b);
    }
}

/// A deterministic permutation of 0..n (Fisher–Yates on a SplitMix64 stream).
fn permutation(n: usize, mut seed: u64) -> Vec<usize> {
    let mut next = || {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    p
}

/// What a sorted view reads, for comparing two of them bit for bit.
fn view_bits(sorted: &tce::SortedSamples<'_>) -> Vec<(u64, u8)> {
    sorted.iter().map(|(s, l)| (s.to_bits(), l)).collect()
}

fn estimates(sorted: &tce::SortedSamples<'_>, binning: Binning) -> Vec<u64> {
    let sweep = sorted
        .ece_sweep(binning, Norm::L2, SweepOptions::default())
        .unwrap();
    vec![
        sorted
            .ece_bin(binning, 7, Norm::L2)
            .unwrap()
            .value
            .to_bits(),
        sorted
            .ece_debias(binning, 7, Norm::L1)
            .unwrap()
            .value
            .to_bits(),
        sorted.mce(binning, 7).unwrap().value.to_bits(),
        sweep.value.to_bits(),
        sweep.bins as u64,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A buffer with room sorts by radix (its free half as scratch), a full one in place:
    /// the same order bit for bit (ties in arrival order, −0 as +0), so every estimate is
    /// the same, through batches pushed between sorts.
    #[test]
    fn radix_and_in_place_sorts_agree(
        batches in proptest::collection::vec(
            proptest::collection::vec(
                (prop_oneof![3 => score(), 1 => Just(1.0), 1 => Just(-0.0), 1 => Just(5e-324)], 0u8..2),
                1..120,
            ),
            1..4,
        ),
    ) {
        let n: usize = batches.iter().map(Vec::len).sum();
        let (mut full, mut roomy) = (vec![Slot::EMPTY; n], vec![Slot::EMPTY; 2 * n]);
        let mut in_place = SortedBuffer::with_storage(&mut full).unwrap();
        let mut radix = SortedBuffer::with_storage(&mut roomy).unwrap();
        let mut pushed: Vec<(f64, u8)> = Vec::new();
        for batch in &batches {
            let (scores, labels): (Vec<f64>, Vec<u8>) = batch.iter().copied().unzip();
            in_place.push_batch(&scores, &labels).unwrap();
            radix.push_batch(&scores, &labels).unwrap();
            pushed.extend(batch.iter().map(|&(s, l)| (s + 0.0, l)));
            let (a, b) = (in_place.sorted(), radix.sorted());
            prop_assert_eq!(view_bits(&a), view_bits(&b));
            // The oracle: a stable sort by score of the samples in arrival order.
            let mut expected = pushed.clone();
            expected.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap());
            let expected: Vec<(u64, u8)> = expected.iter().map(|&(s, l)| (s.to_bits(), l)).collect();
            prop_assert_eq!(view_bits(&b), expected);
            for binning in [Binning::EQUAL_MASS, Binning::EqualMass(Ties::Keep), Binning::EQUAL_WIDTH] {
                prop_assert_eq!(estimates(&a, binning), estimates(&b, binning));
            }
        }
    }
}
