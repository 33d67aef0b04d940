//! `SlidingWindow::merge` and `DecayingHistogram::merge` against naive oracles: a
//! `VecDeque` pushed sample by sample for the window, weights recomputed from the raw
//! streams in `f64` for the decaying histogram; refused merges leave the state as it was;
//! the count bound holds.

use std::collections::VecDeque;

use proptest::prelude::*;
use tce::portable::crc32;
use tce::{
    Binning, BoxedDecayingHistogram, BoxedWindow, Closure, DecayedBin, MergeError, Norm, Slot,
    SortedBuffer, SweepOptions, MAX_COUNT,
};

fn stream(max: usize) -> impl Strategy<Value = Vec<(f64, u8)>> {
    prop::collection::vec(
        (
            prop_oneof![0.0..=1.0f64, Just(1.0), Just(0.5), Just(0.0)],
            0u8..=1,
        ),
        0..max,
    )
}

fn window(size: usize) -> BoxedWindow {
    BoxedWindow::with_boxed_storage(
        vec![Slot::EMPTY; size].into_boxed_slice(),
        vec![0.0; size].into_boxed_slice(),
    )
    .unwrap()
}

/// A window fed `samples` in chunks of `chunk` (long chunks take the rebuilding path).
fn fed(size: usize, samples: &[(f64, u8)], chunk: usize) -> BoxedWindow {
    let mut w = window(size);
    for part in samples.chunks(chunk.max(1)) {
        let (s, l): (Vec<f64>, Vec<u8>) = part.iter().copied().unzip();
        w.push_batch(&s, &l).unwrap();
    }
    w
}

/// The oracle: the last `size` samples, pushed one by one.
#[derive(Clone)]
struct Deque {
    size: usize,
    held: VecDeque<(f64, u8)>,
    seen: u64,
}

impl Deque {
    fn new(size: usize) -> Self {
        Deque {
            size,
            held: VecDeque::new(),
            seen: 0,
        }
    }
    fn push(&mut self, sample: (f64, u8)) {
        if self.held.len() == self.size {
            self.held.pop_front();
        }
        self.held.push_back(sample);
        self.seen += 1;
    }
}

/// Checks `w` against the oracle: samples (sorted, and through every estimator),
/// `seen`, `hits`, and the bytes (arrival order) of its encoding.
fn same_as(w: &mut BoxedWindow, oracle: &Deque) -> Result<(), TestCaseError> {
    prop_assert_eq!(w.len(), oracle.held.len());
    prop_assert_eq!(w.seen(), oracle.seen);
    let hits: u64 = oracle.held.iter().map(|&(_, l)| u64::from(l)).sum();
    prop_assert_eq!(w.hits(), hits);
    let (s, l): (Vec<f64>, Vec<u8>) = oracle.held.iter().copied().unzip();
    let mut storage = vec![Slot::EMPTY; oracle.size.max(1)];
    let mut fresh = SortedBuffer::with_storage(&mut storage).unwrap();
    fresh.push_batch(&s, &l).unwrap();
    let expected = fresh.sorted();
    let held = w.samples();
    prop_assert_eq!(
        held.iter().collect::<Vec<_>>(),
        expected.iter().collect::<Vec<_>>()
    );
    for binning in [Binning::EQUAL_MASS, Binning::EQUAL_WIDTH] {
        prop_assert_eq!(
            held.ece_bin(binning, 7, Norm::L2),
            expected.ece_bin(binning, 7, Norm::L2)
        );
        prop_assert_eq!(
            held.ece_sweep(binning, Norm::L1, SweepOptions::default()),
            expected.ece_sweep(binning, Norm::L1, SweepOptions::default())
        );
    }
    // The encoding lists the held samples in arrival order: the oracle's order.
    let mut bytes = vec![0u8; w.encoded_len()];
    w.encode(&mut bytes).unwrap();
    let listed: Vec<(f64, u8)> = bytes[12 + 16..bytes.len() - 4]
        .chunks(9)
        .map(|c| (f64::from_le_bytes(c[..8].try_into().unwrap()), c[8]))
        .collect();
    prop_assert_eq!(listed, Vec::from(oracle.held.clone()));
    Ok(())
}

proptest! {
    #[test]
    fn a_window_merge_equals_pushing_the_others_samples_oldest_first(
        a in stream(120), b in stream(120), after in stream(60),
        size_a in 1usize..40, size_b in 1usize..40,
        chunk_a in 1usize..130, chunk_b in 1usize..130,
    ) {
        let mut wa = fed(size_a, &a, chunk_a);
        let wb = fed(size_b, &b, chunk_b);
        let mut oracle = Deque::new(size_a);
        let mut theirs = Deque::new(size_b);
        a.iter().for_each(|&x| oracle.push(x));
        b.iter().for_each(|&x| theirs.push(x));
        if chunk_a % 2 == 0 {
            let _ = wa.samples(); // sorted before the merge, or not
        }
        wa.merge(&wb).unwrap();
        theirs.held.iter().for_each(|&x| oracle.push(x));
        same_as(&mut wa, &oracle)?;
        // It goes on like the oracle: evictions find the merged samples (ring and
        // arrival numbers are right).
        for &(s, l) in &after {
            wa.push(s, l).unwrap();
            oracle.push((s, l));
        }
        same_as(&mut wa, &oracle)?;
        // And it round-trips through the portable format.
        let mut bytes = vec![0u8; wa.encoded_len()];
        wa.encode(&mut bytes).unwrap();
        let mut decoded = window(size_a);
        decoded.decode(&bytes).unwrap();
        same_as(&mut decoded, &oracle)?;
    }

    #[test]
    fn window_merges_of_equal_sizes_are_associative_in_the_samples_they_hold(
        a in stream(60), b in stream(60), c in stream(60), size in 1usize..30,
    ) {
        let (wa, wb, wc) = (fed(size, &a, 7), fed(size, &b, 100), fed(size, &c, 1));
        let mut left = wa.clone();
        left.merge(&wb).unwrap();
        left.merge(&wc).unwrap();
        let mut bc = wb.clone();
        bc.merge(&wc).unwrap();
        let mut right = wa.clone();
        right.merge(&bc).unwrap();
        let l: Vec<_> = left.samples().iter().collect();
        let r: Vec<_> = right.samples().iter().collect();
        prop_assert_eq!(l, r);
        prop_assert_eq!(left.hits(), right.hits());
    }
}

#[test]
fn merging_an_empty_window_changes_nothing_and_into_an_empty_one_copies() {
    let samples: Vec<(f64, u8)> = (0..10).map(|i| (i as f64 / 10.0, (i % 2) as u8)).collect();
    let mut w = fed(4, &samples, 3);
    let before: Vec<_> = w.samples().iter().collect();
    w.merge(&window(9)).unwrap();
    assert_eq!(w.samples().iter().collect::<Vec<_>>(), before);
    assert_eq!(w.seen(), 10);
    let mut empty = window(4);
    empty.merge(&w).unwrap();
    assert_eq!(empty.samples().iter().collect::<Vec<_>>(), before);
    assert_eq!(
        empty.seen(),
        4,
        "seen counts the merged samples, not the other's history"
    );
}

/// Rewrites a frame's CRC after editing it.
fn resign(bytes: &mut [u8]) {
    let n = bytes.len() - 4;
    let crc = crc32(&bytes[..n]);
    bytes[n..].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn a_window_merge_that_would_pass_max_count_is_refused_and_changes_nothing() {
    let mut w = fed(2, &[(0.1, 1), (0.9, 0)], 1);
    let mut bytes = vec![0u8; w.encoded_len()];
    w.encode(&mut bytes).unwrap();
    bytes[16..24].copy_from_slice(&(MAX_COUNT - 1).to_le_bytes()); // samples seen
    resign(&mut bytes);
    let mut near = window(2);
    near.decode(&bytes).unwrap();
    assert_eq!(near.seen(), MAX_COUNT - 1);
    let two = fed(3, &[(0.3, 1), (0.4, 1)], 2);
    assert_eq!(near.merge(&two), Err(MergeError::CountOverflow));
    let mut again = vec![0u8; near.encoded_len()];
    near.encode(&mut again).unwrap();
    assert_eq!(again, bytes, "a refused merge changed the window");
    near.merge(&fed(3, &[(0.3, 1)], 1)).unwrap();
    assert_eq!(near.seen(), MAX_COUNT);
    assert_eq!(
        near.samples().iter().collect::<Vec<_>>(),
        vec![(0.3, 1), (0.9, 0)]
    );
}

// ---------------------------------------------------------------------------------------

fn decaying(bins: usize, closure: Closure, half_life: f64) -> BoxedDecayingHistogram {
    BoxedDecayingHistogram::with_boxed_storage(
        vec![DecayedBin::EMPTY; bins].into_boxed_slice(),
        closure,
        half_life,
    )
    .unwrap()
}

fn fed_decaying(bins: usize, half_life: f64, samples: &[(f64, u8)]) -> BoxedDecayingHistogram {
    let mut h = decaying(bins, Closure::Left, half_life);
    let (s, l): (Vec<f64>, Vec<u8>) = samples.iter().copied().unzip();
    h.push_batch(&s, &l).unwrap();
    h
}

/// Per bin (Σw, Σw·y, Σw·f, Σw², n) of the streams, each sample weighing
/// 2^(−(n−t)/half_life) relative to its own stream's next sample (t of n), summed over
/// the streams: the merge's definition, computed directly.
fn naive_bins(streams: &[&[(f64, u8)]], bins: usize, half_life: f64) -> Vec<[f64; 5]> {
    let mut table = vec![[0.0; 5]; bins];
    for stream in streams {
        let n = stream.len();
        for (t, &(f, y)) in stream.iter().enumerate() {
            let w = (-((n - t) as f64) / half_life).exp2();
            let k = ((f * bins as f64) as usize).min(bins - 1);
            let row = &mut table[k];
            row[0] += w;
            row[1] += w * f64::from(y);
            row[2] += w * f;
            row[3] += w * w;
            row[4] += 1.0;
        }
    }
    table
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() <= 1e-9 * scale
}

/// The histogram's bins against the naive table, on a common scale (the weights are
/// stored relative to an internal scale): weights normalised by their total, means,
/// accuracies, effective counts, counts; and the estimates.
fn matches_naive(h: &BoxedDecayingHistogram, table: &[[f64; 5]]) -> Result<(), TestCaseError> {
    let total: f64 = h.bins().iter().map(|b| b.weight()).sum();
    let naive_total: f64 = table.iter().map(|r| r[0]).sum();
    for (bin, row) in h.bins().iter().zip(table) {
        let got = tce::estimate::BinSummary::count(bin);
        prop_assert_eq!(got, row[4] as u64);
        prop_assert!(
            close(bin.weight() / total, row[0] / naive_total, 1.0),
            "{} vs {}",
            bin.weight() / total,
            row[0] / naive_total
        );
        if row[0] > 1e-200 {
            use tce::estimate::BinSummary;
            prop_assert!(close(bin.accuracy(), row[1] / row[0], 1.0));
            prop_assert!(close(bin.mean_score(), row[2] / row[0], 1.0));
            let n_eff = row[0] * row[0] / row[3];
            prop_assert!(
                close(bin.effective_count(), n_eff, n_eff),
                "{} vs {}",
                bin.effective_count(),
                n_eff
            );
        }
    }
    // ECE_bin, L2, from the naive table.
    let ece: f64 = table
        .iter()
        .filter(|r| r[0] > 0.0)
        .map(|r| r[0] / naive_total * (r[2] / r[0] - r[1] / r[0]).powi(2))
        .sum::<f64>()
        .sqrt();
    let got = h.ece_bin(Norm::L2).unwrap();
    prop_assert!(
        close(got.value, ece, ece.max(1e-3)),
        "{} vs {}",
        got.value,
        ece
    );
    prop_assert_eq!(got.samples, table.iter().map(|r| r[4] as u64).sum::<u64>());
    Ok(())
}

proptest! {
    #[test]
    fn a_decaying_merge_sums_both_streams_weights_as_if_they_ended_together(
        a in stream(300), b in stream(300), half_life in prop_oneof![0.5..5.0f64, 5.0..300.0f64],
    ) {
        prop_assume!(!a.is_empty() || !b.is_empty());
        let mut ha = fed_decaying(10, half_life, &a);
        let hb = fed_decaying(10, half_life, &b);
        ha.merge(&hb).unwrap();
        matches_naive(&ha, &naive_bins(&[&a, &b], 10, half_life))?;
        prop_assert_eq!(ha.samples(), (a.len() + b.len()) as u64);
        prop_assert_eq!(ha.half_life(), half_life);
    }

    #[test]
    fn a_merged_decaying_histogram_goes_on_decaying_both_streams(
        a in stream(200), b in stream(200), more in stream(100), half_life in 2.0..100.0f64,
    ) {
        prop_assume!(!a.is_empty() || !b.is_empty());
        let mut ha = fed_decaying(8, half_life, &a);
        ha.merge(&fed_decaying(8, half_life, &b)).unwrap();
        let (s, l): (Vec<f64>, Vec<u8>) = more.iter().copied().unzip();
        ha.push_batch(&s, &l).unwrap();
        // After the merge both streams age together: `more.len()` pushes later, their
        // weights relative to the next sample have shrunk by 2^(−len/h); the new samples
        // weigh as a stream of their own.
        let pad = more.len();
        let table_old = naive_bins(&[&a, &b], 8, half_life);
        let table_new = naive_bins(&[&more], 8, half_life);
        let age = (-(pad as f64) / half_life).exp2();
        let mut table = table_new;
        for (row, old) in table.iter_mut().zip(&table_old) {
            row[0] += old[0] * age;
            row[1] += old[1] * age;
            row[2] += old[2] * age;
            row[3] += old[3] * age * age;
            row[4] += old[4];
        }
        matches_naive(&ha, &table)?;
        // And it round-trips through the portable format (the merged weights are within
        // the bounds a decoder checks).
        let mut bytes = vec![0u8; ha.encoded_len()];
        ha.encode(&mut bytes).unwrap();
        let mut decoded = decaying(8, Closure::Left, 1.0);
        decoded.decode(&bytes).unwrap();
        prop_assert_eq!(decoded.bins(), ha.bins());
    }

    #[test]
    fn decaying_merges_are_commutative_bit_for_bit_and_associative_up_to_rounding(
        a in stream(150), b in stream(150), c in stream(150), half_life in 0.5..200.0f64,
    ) {
        let (ha, hb, hc) = (
            fed_decaying(6, half_life, &a),
            fed_decaying(6, half_life, &b),
            fed_decaying(6, half_life, &c),
        );
        let mut ab = ha.clone();
        ab.merge(&hb).unwrap();
        let mut ba = hb.clone();
        ba.merge(&ha).unwrap();
        prop_assert_eq!(ab.bins(), ba.bins());
        prop_assert_eq!(ab.samples(), ba.samples());
        let mut left = ab.clone();
        left.merge(&hc).unwrap();
        let mut bc = hb.clone();
        bc.merge(&hc).unwrap();
        let mut right = ha.clone();
        right.merge(&bc).unwrap();
        let (lt, rt): (f64, f64) = (
            left.bins().iter().map(|b| b.weight()).sum(),
            right.bins().iter().map(|b| b.weight()).sum(),
        );
        for (l, r) in left.bins().iter().zip(right.bins()) {
            prop_assert_eq!(tce::estimate::BinSummary::count(l), tce::estimate::BinSummary::count(r));
            prop_assert!(close(l.weight() / lt, r.weight() / rt, 1.0));
        }
        if left.samples() > 0 {
            let (x, y) = (left.ece_bin(Norm::L2).unwrap().value, right.ece_bin(Norm::L2).unwrap().value);
            prop_assert!(close(x, y, x.max(1e-3)), "{} vs {}", x, y);
        }
    }
}

#[test]
fn mismatched_decaying_histograms_are_refused_and_nothing_changes() {
    let samples = [(0.2, 1), (0.7, 0), (0.95, 1)];
    let mut h = fed_decaying(10, 50.0, &samples);
    let before = h.clone();
    let cases = [
        (
            fed_decaying(11, 50.0, &samples),
            MergeError::BinCountMismatch {
                left: 10,
                right: 11,
            },
        ),
        (
            {
                let mut r = decaying(10, Closure::Right, 50.0);
                r.push(0.5, 1).unwrap();
                r
            },
            MergeError::ClosureMismatch,
        ),
        (
            fed_decaying(10, 50.5, &samples),
            MergeError::HalfLifeMismatch,
        ),
    ];
    for (other, error) in cases {
        assert_eq!(h.merge(&other), Err(error));
        assert_eq!(h, before, "a refused merge changed the histogram");
    }
    // A half-life that is not the same number but gives the same λ merges: a histogram
    // decoded from a frame reports −1/log2 λ.
    let mut bytes = vec![0u8; h.encoded_len()];
    h.encode(&mut bytes).unwrap();
    let mut decoded = decaying(10, Closure::Left, 1.0);
    decoded.decode(&bytes).unwrap();
    h.merge(&decoded).unwrap();
    assert_eq!(h.half_life(), 50.0);
    assert_eq!(h.samples(), 6);
}

#[test]
fn a_decaying_merge_that_would_pass_max_count_is_refused() {
    let mut h = fed_decaying(4, 10.0, &[(0.1, 1)]);
    let mut bytes = vec![0u8; h.encoded_len()];
    h.encode(&mut bytes).unwrap();
    // Bin 0's count: the frame's header, closure and bin count, λ and next weight.
    let at = 12 + 8 + 16;
    bytes[at..at + 8].copy_from_slice(&(MAX_COUNT - 1).to_le_bytes());
    resign(&mut bytes);
    h.decode(&bytes).unwrap();
    assert_eq!(h.samples(), MAX_COUNT - 1);
    let before = h.clone();
    let two = fed_decaying(4, 10.0, &[(0.1, 1), (0.9, 1)]);
    assert_eq!(h.merge(&two), Err(MergeError::CountOverflow));
    assert_eq!(h, before);
    h.merge(&fed_decaying(4, 10.0, &[(0.9, 0)])).unwrap();
    assert_eq!(h.samples(), MAX_COUNT);
}

#[test]
fn merging_into_an_empty_decaying_histogram_copies_the_other_exactly() {
    let samples: Vec<(f64, u8)> = (0..500)
        .map(|i| ((i % 37) as f64 / 36.0, (i % 3 == 0) as u8))
        .collect();
    let full = fed_decaying(7, 3.0, &samples); // rescaled several times on the way
    let mut empty = decaying(7, Closure::Left, 3.0);
    empty.merge(&full).unwrap();
    assert_eq!(empty, full);
    let mut again = full.clone();
    again.merge(&decaying(7, Closure::Left, 3.0)).unwrap();
    assert_eq!(again, full);
}
