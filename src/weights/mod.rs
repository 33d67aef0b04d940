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
//! - [`Ties::Split`](crate::Ties::Split): a row of weight w is ⌈w⌉ units, [a, a+1), [a+1, a+2), …, the last
//!   one w − ⌊w⌋ long when w is not whole, and each unit goes whole to the bin of its
//!   start. A row whose weight straddles an edge is split there at a unit boundary (it
//!   counts among the `rows` of each bin it reaches). A row of weight below 1 is never
//!   split: it goes to the bin of its start.
//! - [`Ties::Keep`](crate::Ties::Keep): each group of equal scores goes whole to the bin of its start,
//!   floor(a·B/W) — the unweighted rule (edges move to the end of a tie group) restated.
//!
//! Both rules make integer weights equal repeated rows and weights all 1 equal the
//! unweighted binning, bin for bin. The price of the unit rule: equal-mass bins with ties
//! split depend (by at most one unit per edge) on the scale of weights that are not all
//! below 1; equal width and ties kept do not depend on the scale.

use crate::binning::{left_closed_index, right_closed_index, Binning, Closure};
use crate::error::{BadWeights, EstimateError, PushError};
use crate::estimate::{self, check_bins, BinSummary, Estimate};
use crate::norm::Norm;
use crate::sample::valid_weight;
use crate::sweep::SweepOptions;
use crate::MAX_BINS;
use core::fmt;

#[cfg(test)]
mod oracle;
mod sorted;
mod sweep;

/// Why a weighted estimate was refused. Nothing is computed from a bad input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WeightError {
    /// A score or label is bad, or scores and labels differ in length.
    Push(PushError),
    /// The estimate itself is undefined (no rows, 0 bins, …).
    Estimate(EstimateError),
    /// The weights themselves are bad: one per row, each finite and ≥ 0, not all 0 (the
    /// core's [`BadWeights`], as smooth ECE and the KDE estimator report them).
    Weights(BadWeights),
}

impl From<BadWeights> for WeightError {
    fn from(e: BadWeights) -> Self {
        WeightError::Weights(e)
    }
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
            Self::Weights(e) => e.fmt(f),
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
///
/// The total is summed in four interleaved partial sums, the rows with positive
/// weight dealt to them in turn (then added lane by lane): a row of weight 0 takes no
/// turn, so the total is exactly that of the rows with positive weight alone.
pub fn check(scores: &[f64], labels: &[u8], weights: &[f64]) -> Result<(f64, u64), WeightError> {
    checked(scores, labels, weights, |_| {})
}

/// [`check`], handing the index of each row with positive weight to `keep` on the way
/// (before the verdict on the weights: a caller keeps nothing from a refused input).
pub(crate) fn checked(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    mut keep: impl FnMut(usize),
) -> Result<(f64, u64), WeightError> {
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
    let mut lanes = [0.0f64; LANES];
    let (mut valid, mut rows) = (true, 0usize);
    for (row, &w) in weights.iter().enumerate() {
        valid &= valid_weight(w);
        // A zero weight adds +0 to the lane of the next positive one: no change.
        lanes[rows % LANES] += w;
        if w > 0.0 {
            keep(row);
            rows += 1;
        }
    }
    if !valid {
        // Name the first bad weight (NaN fails `valid_weight`, as in the fused passes).
        let index = weights.iter().position(|&w| !valid_weight(w)).unwrap_or(0);
        return Err(BadWeights::InvalidWeight { index }.into());
    }
    total_of(lanes.iter().sum(), rows)
}

/// The verdict on a total weight: positive and finite.
fn total_of(total: f64, rows: usize) -> Result<(f64, u64), WeightError> {
    if total > 0.0 && total.is_finite() {
        Ok((total, rows as u64))
    } else {
        Err(BadWeights::ZeroTotalWeight.into())
    }
}

/// Interleaved partial sums of the weighted passes. Consecutive rows mostly land in the
/// same bin (skewed scores pile up in the top one), and one running sum a bin would make
/// each row wait for the previous row's addition: four sums, the rows with positive weight
/// dealt to them in turn, break that chain. (Dealt by positive rows, not by position, so
/// that a row of weight 0 changes no sum: the result is bit for bit that of dropping it.)
const LANES: usize = 4;
/// Most bins given [`LANES`] sums each (4 · 64 · 32 bytes); more bins take one sum each
/// (rows then rarely share a bin with their neighbour).
const LANED_BINS: usize = 64;

/// The `bins` weighted bins of the rows by `binning` (see the module's doc), after
/// [`check`]. Returns the bins and the number of rows with positive weight.
///
/// Equal width: one pass that checks and bins (the check's verdict decides only when the
/// pass finds a bad value). Equal mass: the rows with positive weight sorted by the
/// buffer's radix sort, then one pass.
pub fn bins(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    bins: usize,
) -> Result<(Vec<WeightedBin>, u64), WeightError> {
    check_bins(bins)?;
    match binning {
        Binning::EqualWidth(closure) => equal_width(scores, labels, weights, closure, bins),
        Binning::EqualMass(ties) => {
            let rows = sorted::SortedRows::new(scores, labels, weights)?;
            Ok((sorted::equal_mass(&rows, ties, bins), rows.rows()))
        }
    }
}

/// The equal-width bins in one pass over the rows in arrival order.
pub(crate) fn equal_width(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    closure: Closure,
    bins: usize,
) -> Result<(Vec<WeightedBin>, u64), WeightError> {
    if labels.len() != scores.len() || weights.len() != scores.len() || scores.is_empty() {
        // The lengths are wrong or there are no rows: `check` names which.
        check(scores, labels, weights)?;
    }
    // The closure and the lane count are chosen once, not per row.
    let filled = match (closure, bins <= LANED_BINS) {
        (Closure::Left, true) => fill::<LANES>(scores, labels, weights, bins, left_closed_index),
        (Closure::Left, false) => fill::<1>(scores, labels, weights, bins, left_closed_index),
        (Closure::Right, true) => fill::<LANES>(scores, labels, weights, bins, right_closed_index),
        (Closure::Right, false) => fill::<1>(scores, labels, weights, bins, right_closed_index),
    };
    let (out, rows, valid) = filled;
    if !valid {
        // The pass only raises suspicion; the one validation rule decides and names it.
        check(scores, labels, weights)?;
    }
    let total: f64 = out.iter().map(|b| b.weight).sum();
    total_of(total, rows)?;
    Ok((out, rows as u64))
}

/// Checks and bins in one pass: the bins, the rows with positive weight and whether
/// every value is valid. Branch-free per row: an invalid value still lands in some bin
/// (the index is clamped into range) and the caller then throws the bins away; a row of
/// weight 0 adds zeros (and no row) to the sums of the next positive row's lane.
#[inline(always)]
fn fill<const L: usize>(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    bins: usize,
    index: impl Fn(f64, usize) -> usize,
) -> (Vec<WeightedBin>, usize, bool) {
    #[cfg(all(target_arch = "x86_64", not(target_feature = "avx")))]
    if std::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX, checked just now (the check is one cached load).
        return unsafe { fill_avx::<L>(scores, labels, weights, bins, index) };
    }
    fill_body::<L>(scores, labels, weights, bins, index)
}

/// [`fill`] compiled for AVX, the same code: a cell's four sums are one 256-bit add.
///
/// # Safety
///
/// The CPU must support AVX.
#[cfg(all(target_arch = "x86_64", not(target_feature = "avx")))]
#[target_feature(enable = "avx")]
unsafe fn fill_avx<const L: usize>(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    bins: usize,
    index: impl Fn(f64, usize) -> usize,
) -> (Vec<WeightedBin>, usize, bool) {
    fill_body::<L>(scores, labels, weights, bins, index)
}

/// The body of [`fill`], inlined into each instruction-set version. A cell holds the
/// rows (as `f64`: exact below 2^53), Σw, Σw·y and Σw·f of a bin in a lane, side by side
/// so that one vector add updates them.
#[inline(always)]
fn fill_body<const L: usize>(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    bins: usize,
    index: impl Fn(f64, usize) -> usize,
) -> (Vec<WeightedBin>, usize, bool) {
    let mut cells = vec![[0.0f64; 4]; L * bins];
    let (mut valid, mut rows) = (true, 0usize);
    for ((&f, &y), &w) in scores.iter().zip(labels).zip(weights) {
        valid &= (0.0..=1.0).contains(&f) & (y <= 1) & valid_weight(w);
        let positive = w > 0.0;
        let k = index(f, bins).min(bins - 1);
        let add = [f64::from(u8::from(positive)), w, w * f64::from(y), w * f];
        if let Some(cell) = cells.get_mut((rows % L) * bins + k) {
            for (sum, a) in cell.iter_mut().zip(add) {
                *sum += a;
            }
        }
        rows += usize::from(positive);
    }
    // The lanes added in a fixed order (lane 0 first), bin by bin.
    let out = (0..bins)
        .map(|k| {
            let mut sum = [0.0f64; 4];
            for cell in cells.iter().skip(k).step_by(bins) {
                for (s, c) in sum.iter_mut().zip(cell) {
                    *s += c;
                }
            }
            WeightedBin {
                rows: sum[0] as u64,
                weight: sum[1],
                weighted_hits: sum[2],
                weighted_scores: sum[3],
            }
        })
        .collect();
    (out, rows, valid)
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
/// Cost: the radix sort, prefix sums, then O(min(b, n) log n) a b tried (each non-empty
/// bin's end is a binary search), and one pass for the value. Data whose finest partition
/// is already monotone (the separable case) skip the walk. A limit above
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
    // Sorted for every binning: the search reads bins as ranges of sorted rows.
    let sorted = sorted::SortedRows::new(scores, labels, weights)?;
    let prefix = sweep::Prefix::new(&sorted);
    let max_bins = options.max_bins_for(prefix.units())?;
    if max_bins > MAX_BINS {
        return Err(EstimateError::TooManyBins {
            bins: max_bins,
            max: MAX_BINS,
        }
        .into());
    }
    let mut best = None;
    if !prefix.finest_is_monotone(binning) {
        best = (2..=max_bins)
            .find(|&b| !prefix.is_monotone(binning, b))
            .map(|failed| failed - 1);
    }
    let b = match best {
        Some(b) => b,
        None => {
            // The smallest b with the limit's bins (empty ones aside).
            let limit = prefix.starts(binning, max_bins);
            (limit.len().max(1)..max_bins)
                .find(|&b| prefix.starts_at(binning, b, &limit))
                .unwrap_or(max_bins)
        }
    };
    // The value from the same binning path as the weighted ECE_bin.
    let bins = match binning {
        Binning::EqualWidth(closure) => equal_width(scores, labels, weights, closure, b)?.0,
        // Bit for bit the bins of `sorted` (the same rows, weights and total in order).
        Binning::EqualMass(ties) => sorted::equal_mass(&prefix, ties, b),
    };
    let estimate = estimate::ece_bin(bins, norm)?;
    Ok(Estimate {
        samples: sorted.rows(),
        ..estimate
    })
}
