//! Sample weights (`sample_weight`, scikit-learn's name) for ECE_bin, MCE and ECE_debias:
//! the std layer only. The `no_std` core keeps integer counts; weighted bins hold `f64`
//! sums and are built here from slices, then reach the same [`crate::estimate`] functions
//! as every other binning (one place computes each estimator).
//!
//! **Frequency weights.** A weight w_i ≥ 0 counts row i as w_i units of a sample. Per bin:
//! W_k = Σ w, ȳ_k = Σ w·y / W_k, f̄_k = Σ w·f / W_k, and with W = Σ_k W_k
//!
//! - ECE_bin = ( Σ_k (W_k/W)·|f̄_k − ȳ_k|^p )^(1/p), MCE = max over bins with W_k > 0;
//! - ECE_debias (p = 2): S = Σ_{k: W_k ≥ 2} (W_k/W)·[(f̄_k − ȳ_k)² − ȳ_k(1 − ȳ_k)/(W_k − 1)],
//!   the square root of max(S, 0); for p ≠ 2 the jackknife of SPEC §5 with n_k = W_k
//!   units, h_k = Σ w·y of them hits.
//!
//! The variance term uses W_k, not Kish's effective size (Σw)²/Σw²: that is what makes
//! integer weights equal repeated rows (the guarantee tested), and it means importance
//! weights get the frequency-weight estimator — their correction is only right when the
//! weights are on the scale of counts. A row of weight 0 contributes nothing: the result is
//! that of dropping it (also from the tie groups and the equal-mass edges).
//!
//! **Equal mass = equal weight.** Rows sort by score (ties in arrival order, a stable sort)
//! and row i occupies [a_i, a_i + w_i) on the line of cumulative weight [0, W); position x
//! lies in bin floor(x·B/W) (bin k is [k·W/B, (k+1)·W/B)). Unweighted rank splitting puts
//! the sample at position j in bin floor(j·B/n), the bin of its start; weights follow it:
//!
//! - [`Ties::Split`]: a row of weight w is ⌈w⌉ units, [a, a+1), [a+1, a+2), …, the last
//!   one w − ⌊w⌋ long when w is not whole, and each unit goes whole to the bin of its
//!   start. A row whose weight straddles an edge is split there at a unit boundary (it
//!   counts among the `rows` of each bin it reaches). A row of weight below 1 is never
//!   split: it goes to the bin of its start.
//! - [`Ties::Keep`]: each group of equal scores goes whole to the bin of its start,
//!   floor(a·B/W) — the unweighted rule (edges move to the end of a tie group) restated.
//!
//! Both rules make integer weights equal repeated rows and weights all 1 equal the
//! unweighted binning, bin for bin. The price of the unit rule: equal-mass bins with ties
//! split depend (by at most one unit per edge) on the scale of weights that are not all
//! below 1; equal width and ties kept do not depend on the scale.

use crate::binning::{Binning, Closure, Ties};
use crate::error::{EstimateError, PushError};
use crate::estimate::{self, check_bins, BinSummary, Estimate};
use crate::norm::Norm;
use crate::sweep::SweepOptions;
use crate::MAX_BINS;
use core::fmt;

/// Why a weighted estimate was refused. Nothing is computed from a bad input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WeightError {
    /// A score or label is bad, or scores and labels differ in length.
    Push(PushError),
    /// The estimate itself is undefined (no rows, 0 bins, …).
    Estimate(EstimateError),
    /// The weight at `index` is negative, NaN or infinite.
    InvalidWeight {
        /// The row of the first bad weight.
        index: usize,
    },
    /// There are `weights` weights for `rows` rows.
    LengthMismatch {
        /// Rows (scores and labels).
        rows: usize,
        /// Weights.
        weights: usize,
    },
    /// Every weight is 0 (or they sum to 0 or past f64): nothing to average over.
    ZeroTotalWeight,
}

impl From<PushError> for WeightError {
    fn from(e: PushError) -> Self {
        WeightError::Push(e)
    }
}

impl From<EstimateError> for WeightError {
    fn from(e: EstimateError) -> Self {
        WeightError::Estimate(e)
    }
}

impl fmt::Display for WeightError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Push(e) => e.fmt(f),
            Self::Estimate(e) => e.fmt(f),
            Self::InvalidWeight { index } => {
                write!(f, "weight {index} is negative, NaN or infinite")
            }
            Self::LengthMismatch { rows, weights } => {
                write!(f, "{rows} rows but {weights} weights")
            }
            Self::ZeroTotalWeight => write!(f, "the weights sum to 0 (or are not finite)"),
        }
    }
}

impl std::error::Error for WeightError {}

/// A bin of weighted rows: Σw, Σw·y, Σw·f and how many rows put weight in it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WeightedBin {
    /// Rows with positive weight in the bin (a row split between two bins counts in both).
    pub rows: u64,
    /// W_k = Σ w.
    pub weight: f64,
    /// Σ w·y.
    pub weighted_hits: f64,
    /// Σ w·f.
    pub weighted_scores: f64,
}

impl WeightedBin {
    fn add(&mut self, score: f64, label: u8, w: f64) {
        self.rows += 1;
        self.weight += w;
        self.weighted_hits += w * f64::from(label);
        self.weighted_scores += w * score;
    }
}

impl BinSummary for WeightedBin {
    fn count(&self) -> u64 {
        self.rows
    }
    fn weight(&self) -> f64 {
        self.weight
    }
    fn mean_score(&self) -> f64 {
        self.weighted_scores / self.weight
    }
    fn accuracy(&self) -> f64 {
        self.weighted_hits / self.weight
    }
    /// Frequency weights: W_k units of a sample (see the module's doc).
    fn effective_count(&self) -> f64 {
        self.weight
    }
    fn debiased(&self) -> bool {
        self.weight >= 2.0
    }
}

/// The checks of a weighted input, in order: scores and labels (their lengths, then each
/// sample), the weights' length, each weight, the total. Returns the total weight and the
/// number of rows with positive weight.
pub fn check(scores: &[f64], labels: &[u8], weights: &[f64]) -> Result<(f64, u64), WeightError> {
    crate::sample::check_batch(scores, labels)?;
    if weights.len() != scores.len() {
        return Err(WeightError::LengthMismatch {
            rows: scores.len(),
            weights: weights.len(),
        });
    }
    if scores.is_empty() {
        return Err(EstimateError::NoSamples.into());
    }
    let (mut total, mut rows) = (0.0f64, 0u64);
    for (index, &w) in weights.iter().enumerate() {
        // NaN fails `is_finite`, so the sign test sees numbers only.
        if !w.is_finite() || w < 0.0 {
            return Err(WeightError::InvalidWeight { index });
        }
        total += w;
        rows += u64::from(w > 0.0);
    }
    if total > 0.0 && total.is_finite() {
        Ok((total, rows))
    } else {
        Err(WeightError::ZeroTotalWeight)
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
pub fn bins(
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

/// Runs `estimator` on the weighted bins and reports the rows with positive weight as
/// its `samples` (a split row would otherwise count twice).
fn estimated(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    count: usize,
    estimator: impl FnOnce(&[WeightedBin]) -> Result<Estimate, EstimateError>,
) -> Result<Estimate, WeightError> {
    let (bins, rows) = bins(scores, labels, weights, binning, count)?;
    let estimate = estimator(&bins)?;
    Ok(Estimate {
        samples: rows,
        ..estimate
    })
}

/// Weighted ECE_bin (see the module's doc). `samples` of the result counts the rows with
/// positive weight.
pub fn ece_bin(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    bins: usize,
    norm: Norm,
) -> Result<Estimate, WeightError> {
    estimated(scores, labels, weights, binning, bins, |b| {
        estimate::ece_bin(b.iter().copied(), norm)
    })
}

/// Weighted MCE: the largest |f̄_k − ȳ_k| over bins with positive weight.
pub fn mce(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    bins: usize,
) -> Result<Estimate, WeightError> {
    estimated(scores, labels, weights, binning, bins, |b| {
        estimate::mce(b.iter().copied())
    })
}

/// Weighted ECE_debias: frequency weights, bins with W_k < 2 contribute 0 (see the
/// module's doc).
pub fn ece_debias(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    bins: usize,
    norm: Norm,
) -> Result<Estimate, WeightError> {
    estimated(scores, labels, weights, binning, bins, |b| {
        estimate::ece_debias(b.iter().copied(), norm)
    })
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
pub fn ece_sweep(
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
