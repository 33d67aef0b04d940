//! The weighted estimators as first written (a sort of (score, row) pairs by the standard
//! library, a pass over all rows for every b the sweep tries, sums in row order): the
//! oracle of the fast paths, which must build the same bins and find the same b*.

use super::{WeightError, WeightedBin};
use crate::binning::{Binning, Closure, Ties};
use crate::error::{BadWeights, EstimateError};
use crate::estimate::{self, check_bins, Estimate};
use crate::norm::Norm;
use crate::sweep::SweepOptions;
use crate::MAX_BINS;

/// The checks of a weighted input, in order: scores and labels (their lengths, then each
/// sample), the weights' length, each weight, the total. Returns the total weight and the
/// number of rows with positive weight.
fn check(scores: &[f64], labels: &[u8], weights: &[f64]) -> Result<(f64, u64), WeightError> {
    crate::sample::check_batch(scores, labels)?;
    if weights.len() != scores.len() {
        return Err(BadWeights::LengthMismatch {
            rows: scores.len(),
            weights: weights.len(),
        }
        .into());
    }
    if scores.is_empty() {
        return Err(EstimateError::NoSamples.into());
    }
    let (mut total, mut rows) = (0.0f64, 0u64);
    for (index, &w) in weights.iter().enumerate() {
        // NaN fails `is_finite`, so the sign test sees numbers only.
        if !w.is_finite() || w < 0.0 {
            return Err(BadWeights::InvalidWeight { index }.into());
        }
        total += w;
        rows += u64::from(w > 0.0);
    }
    if total > 0.0 && total.is_finite() {
        Ok((total, rows))
    } else {
        Err(BadWeights::ZeroTotalWeight.into())
    }
}

/// The largest k < `bins` with k·W ≤ a·B: the equal-weight bin of cumulative weight `a`.
/// The quotient is a first guess, corrected by the products (exact for integer weights
/// summing below 2^53 / B, so integer weights bin exactly as repeated rows).
fn equal_weight_bin(a: f64, total: f64, bins: usize) -> usize {
    let b = bins as f64;
    let mut k = ((a * b / total).floor().max(0.0) as usize).min(bins - 1);
    while k > 0 && k as f64 * total > a * b {
        k -= 1;
    }
    while k + 1 < bins && (k + 1) as f64 * total <= a * b {
        k += 1;
    }
    k
}

/// The `bins` weighted bins of the rows by `binning` (see the module's doc), after
/// [`check`]. Returns the bins and the number of rows with positive weight.
pub(super) fn bins(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    bins: usize,
) -> Result<(Vec<WeightedBin>, u64), WeightError> {
    check_bins(bins)?;
    let (total, rows) = check(scores, labels, weights)?;
    if let Binning::EqualWidth(closure) = binning {
        // No order to build: rows in arrival order, zero weights skipped (as if absent).
        let mut out = vec![WeightedBin::default(); bins];
        for ((&f, &y), &w) in scores.iter().zip(labels).zip(weights) {
            if w > 0.0 {
                out[Closure::bin_index(closure, f, bins)].add(f, y, w);
            }
        }
        return Ok((out, rows));
    }
    let order = sorted_order(scores, weights);
    let rows_of = Rows {
        scores,
        labels,
        weights,
        order: &order,
        total,
    };
    Ok((rows_of.bin(binning, bins), rows))
}

/// The rows with positive weight (zero weights are dropped here, before any binning:
/// exactly as if absent), sorted by score with equal scores in arrival order (SPEC
/// §3.2). Sorted as (score bits, row) pairs, unstable but made stable by the row: the
/// bits of a score in [0, 1] order as the score does once −0 is made +0 (by adding 0).
fn sorted_order(scores: &[f64], weights: &[f64]) -> Vec<usize> {
    let mut keys: Vec<(u64, usize)> = (0..scores.len())
        .filter(|&i| weights[i] > 0.0)
        .map(|i| ((scores[i] + 0.0).to_bits(), i))
        .collect();
    keys.sort_unstable();
    keys.into_iter().map(|(_, i)| i).collect()
}

/// Checked rows with positive weight in the order a binning reads them (sorted by score
/// for equal mass), and their total weight.
struct Rows<'a> {
    scores: &'a [f64],
    labels: &'a [u8],
    weights: &'a [f64],
    order: &'a [usize],
    total: f64,
}

impl Rows<'_> {
    /// The `bins` (≥ 1) weighted bins by `binning`; equal mass needs `order` sorted.
    fn bin(&self, binning: Binning, bins: usize) -> Vec<WeightedBin> {
        let mut out = vec![WeightedBin::default(); bins];
        self.emit(binning, bins, |k, f, y, w| {
            out[k].add(f, y, w);
            true
        });
        out
    }

    /// Whether the non-empty bins of `bins` bins are `expected` (the non-empty bins of
    /// another count, made by [`Rows::bin`] from the same rows in the same order, so that
    /// equal bins are equal bit for bit). Stops at the first bin that differs: the
    /// sweep's search for the smallest b with the limit's bins costs little per b that
    /// differs early. `order` must be sorted (bins then fill in increasing order).
    fn same_bins(&self, binning: Binning, bins: usize, expected: &[WeightedBin]) -> bool {
        let (mut current, mut k_current, mut matched) = (WeightedBin::default(), 0usize, 0usize);
        let close = |bin: &WeightedBin, matched: &mut usize| {
            if bin.weight > 0.0 {
                if expected.get(*matched) != Some(bin) {
                    return false;
                }
                *matched += 1;
            }
            true
        };
        let complete = self.emit(binning, bins, |k, f, y, w| {
            if k != k_current {
                if !close(&current, &mut matched) {
                    return false;
                }
                (current, k_current) = (WeightedBin::default(), k);
            }
            current.add(f, y, w);
            true
        });
        complete && close(&current, &mut matched) && matched == expected.len()
    }

    /// Hands each (bin, score, label, weight) of the binning to `add`, in `order` (a
    /// row split by the unit rule in its parts, bin by bin), until `add` returns false;
    /// returns whether it never did.
    fn emit(
        &self,
        binning: Binning,
        bins: usize,
        mut add: impl FnMut(usize, f64, u8, f64) -> bool,
    ) -> bool {
        let (scores, labels, weights, order, total) = (
            self.scores,
            self.labels,
            self.weights,
            self.order,
            self.total,
        );
        match binning {
            Binning::EqualWidth(closure) => {
                for &i in order {
                    let k = Closure::bin_index(closure, scores[i], bins);
                    if !add(k, scores[i], labels[i], weights[i]) {
                        return false;
                    }
                }
            }
            Binning::EqualMass(ties) => {
                let b = bins as f64;
                let mut before = 0.0f64;
                let mut group_bin = 0usize;
                for (j, &i) in order.iter().enumerate() {
                    let (f, y, w) = (scores[i], labels[i], weights[i]);
                    match ties {
                        Ties::Keep => {
                            // A new tie group starts in the bin of its start; later rows
                            // of the group follow it.
                            if j == 0 || scores[order[j - 1]] != f {
                                group_bin = equal_weight_bin(before, total, bins);
                            }
                            if !add(group_bin, f, y, w) {
                                return false;
                            }
                        }
                        Ties::Split => {
                            // Units [before + m, before + m + 1) (the last one partial), each
                            // whole in the bin of its start; the units of one bin at a time.
                            let units = w.ceil();
                            let mut m = 0.0f64;
                            while m < units {
                                let k = equal_weight_bin(before + m, total, bins);
                                // The first unit starting in a later bin: a guess from the
                                // edge, corrected by the exact bin rule.
                                let mut next = if k + 1 >= bins {
                                    units
                                } else {
                                    ((k + 1) as f64 * total / b - before)
                                        .ceil()
                                        .clamp(m + 1.0, units)
                                };
                                while next < units
                                    && equal_weight_bin(before + next, total, bins) == k
                                {
                                    next += 1.0;
                                }
                                while next > m + 1.0
                                    && equal_weight_bin(before + next - 1.0, total, bins) != k
                                {
                                    next -= 1.0;
                                }
                                if !add(k, f, y, next.min(w) - m) {
                                    return false;
                                }
                                m = next;
                            }
                        }
                    }
                    before += w;
                }
            }
        }
        true
    }
}

/// Weighted ECE_sweep (SPEC §4 on weighted bins): b = 2, 3, … on the bins of
/// [`bins`] (equal width, or equal weight by the unit rule), until the weighted
/// accuracies Σw·y/Σw of the bins with positive weight decrease; b* = that b − 1, and the
/// estimate is the weighted ECE_bin with b* bins (`bins` of the result). The most bins
/// tried is the number of units of weight U = Σ⌈w_i⌉ (n for weights all 1: one unit a bin,
/// as the paper's n), U − 1 with [`crate::SweepLimit::PaperCode`], or the cap. When no b
/// fails, b* is the smallest b with the same bins as the limit (same rows, same weights),
/// as the unweighted sweep reports. Integer weights give the sweep of the repeated rows:
/// b* exactly, the value to 1e-12 (tested).
///
/// Cost: a sort, then O(n + b) a b tried (each binning is rebuilt; the unweighted sweep's
/// prefix sums are not used here), so O(n·b*) in all. Data whose finest partition is
/// already monotone (the separable case) skip the walk. A limit above
/// [`crate::MAX_BINS`] is refused ([`EstimateError::TooManyBins`]): large weights make
/// U large; pass `options.max_bins` to cap it.
pub(super) fn ece_sweep(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    norm: Norm,
    options: SweepOptions,
) -> Result<Estimate, WeightError> {
    let (_, rows) = check(scores, labels, weights)?;
    // Sorted for every binning: the finest-partition test reads tie groups in order.
    let order = sorted_order(scores, weights);
    let total = order.iter().map(|&i| weights[i]).sum::<f64>();
    let view = Rows {
        scores,
        labels,
        weights,
        order: &order,
        total,
    };
    let units = order.iter().map(|&i| weights[i].ceil()).sum::<f64>();
    // Saturating: a sum past usize is refused below as too many bins.
    let units = if units >= usize::MAX as f64 {
        usize::MAX
    } else {
        units as usize
    };
    let max_bins = options.max_bins_for(units)?;
    if max_bins > MAX_BINS {
        return Err(EstimateError::TooManyBins {
            bins: max_bins,
            max: MAX_BINS,
        }
        .into());
    }
    let mut best = None;
    if !finest_is_monotone(&view, binning) {
        best = (2..=max_bins)
            .find(|&b| !is_monotone(&view.bin(binning, b)))
            .map(|failed| failed - 1);
    }
    let b = match best {
        Some(b) => b,
        None => {
            // The smallest b with the limit's bins (empty ones aside).
            let limit: Vec<WeightedBin> = nonempty(view.bin(binning, max_bins));
            (limit.len().max(1)..max_bins)
                .find(|&b| view.same_bins(binning, b, &limit))
                .unwrap_or(max_bins)
        }
    };
    // The value from the same binning path as the weighted ECE_bin.
    let mut value_order: Vec<usize> = (0..scores.len()).filter(|&i| weights[i] > 0.0).collect();
    if let Binning::EqualMass(_) = binning {
        value_order = order.clone();
    }
    let value_rows = Rows {
        order: &value_order,
        ..view
    };
    let estimate = estimate::ece_bin(value_rows.bin(binning, b), norm)?;
    Ok(Estimate {
        samples: rows,
        ..estimate
    })
}

fn nonempty(bins: Vec<WeightedBin>) -> Vec<WeightedBin> {
    bins.into_iter().filter(|b| b.weight > 0.0).collect()
}

/// Whether the weighted accuracies of the bins with positive weight never decrease
/// (equal neighbours allowed), cross-multiplied as the unweighted test is: exact for
/// integer weights of moderate sums.
fn is_monotone(bins: &[WeightedBin]) -> bool {
    let mut previous: Option<&WeightedBin> = None;
    for bin in bins.iter().filter(|b| b.weight > 0.0) {
        if let Some(p) = previous {
            if bin.weighted_hits * p.weight < p.weighted_hits * bin.weight {
                return false;
            }
        }
        previous = Some(bin);
    }
    true
}

/// Whether the finest partition `binning` reaches is monotone, in which case every
/// coarser one is (a run's weighted accuracy lies between those of its first and last
/// parts): units one a bin (ties split: the labels in sorted order never go from hit
/// to miss), else the tie groups.
fn finest_is_monotone(rows: &Rows<'_>, binning: Binning) -> bool {
    let (scores, labels, weights, order) = (rows.scores, rows.labels, rows.weights, rows.order);
    if binning == Binning::EqualMass(Ties::Split) {
        return order.windows(2).all(|p| labels[p[0]] <= labels[p[1]]);
    }
    let mut groups = Vec::new();
    let mut j = 0;
    while j < order.len() {
        let mut group = WeightedBin::default();
        let f = scores[order[j]];
        while j < order.len() && scores[order[j]] == f {
            let i = order[j];
            group.add(f, labels[i], weights[i]);
            j += 1;
        }
        groups.push(group);
    }
    is_monotone(&groups)
}

#[cfg(test)]
mod tests {
    use super::super::{self as fast, WeightedBin};
    use crate::binning::{Binning, Closure, Ties};
    use crate::norm::Norm;
    use crate::sweep::SweepOptions;
    use proptest::prelude::*;

    fn binning() -> impl Strategy<Value = Binning> {
        prop_oneof![
            Just(Binning::EqualWidth(Closure::Left)),
            Just(Binning::EqualWidth(Closure::Right)),
            Just(Binning::EqualMass(Ties::Split)),
            Just(Binning::EqualMass(Ties::Keep)),
        ]
    }

    /// Scores from a few values (ties, 0 and 1, −0) or anywhere in [0, 1].
    fn score() -> impl Strategy<Value = f64> {
        prop_oneof![
            prop::sample::select(vec![-0.0, 0.0, 0.25, 0.5, 0.6, 0.9, 1.0]),
            0.0..=1.0f64
        ]
    }

    /// Multiples of 1/8 (0 included, some above 1 and some large): every sum of a few
    /// hundred of them is exact, so the fast and the simple paths must agree exactly on
    /// the bins' rows, weights and hits, and on b*.
    fn dyadic() -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => (0u32..24).prop_map(|k| f64::from(k) / 8.0),
            1 => (0u32..400).prop_map(|k| f64::from(k) / 8.0),
        ]
    }

    type Rows = (Vec<f64>, Vec<u8>, Vec<f64>);

    fn rows(weight: impl Strategy<Value = f64>, most: usize) -> impl Strategy<Value = Rows> {
        prop::collection::vec((score(), 0u8..=1, weight), 1..most)
            .prop_map(|r| -> Rows {
                (
                    r.iter().map(|x| x.0).collect(),
                    r.iter().map(|x| x.1).collect(),
                    r.iter().map(|x| x.2).collect(),
                )
            })
            .prop_filter("some weight", |r: &Rows| r.2.iter().any(|&w| w > 0.0))
    }

    /// The bins agree: rows and the sums of weights and hits exactly (dyadic weights),
    /// the sums of w·f to 1e-12 (they are rounded, and added in another order).
    fn same_bins(a: &[WeightedBin], b: &[WeightedBin]) -> Result<(), TestCaseError> {
        prop_assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            prop_assert_eq!(
                (x.rows, x.weight, x.weighted_hits),
                (y.rows, y.weight, y.weighted_hits)
            );
            let scale = x.weighted_scores.abs().max(1.0);
            prop_assert!((x.weighted_scores - y.weighted_scores).abs() <= 1e-12 * scale);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// The one-pass equal-width bins and the radix-sorted equal-mass bins are those of
        /// the simple implementation (up to 300 rows: past the radix sort's short cut).
        #[test]
        fn fast_bins_equal_the_simple_ones(
            (scores, labels, weights) in rows(dyadic(), 300),
            binning in binning(),
            bins in 1usize..40,
        ) {
            let (fast_bins, fast_rows) = fast::bins(&scores, &labels, &weights, binning, bins).unwrap();
            let (slow_bins, slow_rows) = super::bins(&scores, &labels, &weights, binning, bins).unwrap();
            prop_assert_eq!(fast_rows, slow_rows);
            same_bins(&fast_bins, &slow_bins)?;
        }

        /// The same with any weights: the row counts exactly (no bin edge is met exactly
        /// by chance), the sums to 1e-12.
        #[test]
        fn fast_bins_equal_the_simple_ones_for_any_weights(
            (scores, labels, weights) in rows(prop_oneof![Just(0.0), 0.0..5.0f64], 120),
            binning in binning(),
            bins in 1usize..40,
        ) {
            let (fast_bins, _) = fast::bins(&scores, &labels, &weights, binning, bins).unwrap();
            let (slow_bins, _) = super::bins(&scores, &labels, &weights, binning, bins).unwrap();
            for (x, y) in fast_bins.iter().zip(&slow_bins) {
                prop_assert_eq!(x.rows, y.rows);
                for (a, b) in [(x.weight, y.weight), (x.weighted_hits, y.weighted_hits), (x.weighted_scores, y.weighted_scores)] {
                    prop_assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0), "{} vs {}", a, b);
                }
            }
        }

        /// The prefix-sum sweep finds the simple sweep's b*, and the same value.
        #[test]
        fn the_fast_sweep_equals_the_simple_one(
            (scores, labels, weights) in rows(dyadic(), 120),
            binning in binning(),
            p in prop_oneof![Just(1.0), Just(2.0), 1.0..4.0f64],
            cap in prop_oneof![Just(None), (1usize..60).prop_map(Some)],
        ) {
            let norm = Norm::new(p).unwrap();
            let options = SweepOptions { max_bins: cap, ..Default::default() };
            let fast = fast::ece_sweep(&scores, &labels, &weights, binning, norm, options);
            let slow = super::ece_sweep(&scores, &labels, &weights, binning, norm, options);
            match (fast, slow) {
                (Ok(f), Ok(s)) => {
                    prop_assert_eq!((f.bins, f.samples), (s.bins, s.samples));
                    prop_assert!((f.value - s.value).abs() <= 1e-12 * s.value.max(1.0), "{} vs {}", f.value, s.value);
                }
                (f, s) => prop_assert_eq!(f.map(|e| e.bins), s.map(|e| e.bins)),
            }
        }
    }

    fn unit(rng: &mut crate::rng::Xoshiro256PlusPlus) -> f64 {
        (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// 20 000 rows of skewed scores (30 % of them 1.0) and weights in [0.5, 2) on a grid
    /// of 1/64: every binning of 15 bins and the sweep, fast against simple.
    #[test]
    fn a_large_sample_bins_and_sweeps_as_the_simple_path() {
        let mut rng = crate::rng::Xoshiro256PlusPlus::seed_from_u64(40);
        let n = 20_000;
        let (mut scores, mut labels, mut weights) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..n {
            let u = unit(&mut rng);
            let f = if unit(&mut rng) < 0.3 {
                1.0
            } else {
                1.0 - 0.9 * u * u * u
            };
            scores.push(f);
            labels.push(u8::from(unit(&mut rng) < f * f));
            weights.push(0.5 + (unit(&mut rng) * 96.0).floor() / 64.0);
        }
        for binning in [
            Binning::EqualWidth(Closure::Left),
            Binning::EqualWidth(Closure::Right),
            Binning::EqualMass(Ties::Split),
            Binning::EqualMass(Ties::Keep),
        ] {
            let fast_bins = fast::bins(&scores, &labels, &weights, binning, 15).unwrap();
            let slow_bins = super::bins(&scores, &labels, &weights, binning, 15).unwrap();
            assert_eq!(fast_bins.1, slow_bins.1);
            for (x, y) in fast_bins.0.iter().zip(&slow_bins.0) {
                assert_eq!(
                    (x.rows, x.weight, x.weighted_hits),
                    (y.rows, y.weight, y.weighted_hits)
                );
            }
            let options = SweepOptions::default();
            let fast =
                fast::ece_sweep(&scores, &labels, &weights, binning, Norm::L2, options).unwrap();
            let slow =
                super::ece_sweep(&scores, &labels, &weights, binning, Norm::L2, options).unwrap();
            assert_eq!(fast.bins, slow.bins, "{binning:?}");
            assert!(fast.bins > 2, "{binning:?}: b* {}", fast.bins);
            assert!((fast.value - slow.value).abs() <= 1e-12, "{binning:?}");
        }
    }
}
