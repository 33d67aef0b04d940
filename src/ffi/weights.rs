//! Weighted one-call estimators (`tce_ece_bin_weighted`, ...): the one-call functions with
//! one frequency weight per sample, through [`crate::weights`]. Only in builds with `std`:
//! the weighted bins hold `f64` sums built on the heap (the `no_std` core and its states
//! keep integer counts; docs/estimators.md, Weights), so these allocate (a few words a
//! sample) and take no scratch.

use super::boundary::ffi_boundary;
use super::raw::{array, Out};
use super::sorted::Estimator;
use super::status::tce_status;
use super::types::{options, tce_estimate, tce_options};
use crate::error::{BadWeights, PushError};
use crate::weights::{self, WeightError};

impl From<WeightError> for tce_status {
    fn from(e: WeightError) -> Self {
        match e {
            WeightError::Push(e) => e.into(),
            WeightError::Estimate(e) => e.into(),
            WeightError::Weights(BadWeights::InvalidWeight { .. }) => Self::InvalidWeight,
            WeightError::Weights(BadWeights::LengthMismatch { .. }) => Self::LengthMismatch,
            WeightError::Weights(BadWeights::ZeroTotalWeight) => Self::ZeroTotalWeight,
        }
    }
}

/// # Safety
/// As the exported weighted one-call functions.
#[allow(clippy::too_many_arguments)]
unsafe fn weighted(
    estimator: Estimator,
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    sample_weights: *const f64,
    weights_len: usize,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: forwarded contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: forwarded contract.
        let o = unsafe { self::options(options)? };
        estimator.check(&o)?;
        // SAFETY: forwarded contract.
        let (scores, labels, w) = unsafe {
            (
                array(scores, scores_len)?,
                array(labels, labels_len)?,
                array(sample_weights, weights_len)?,
            )
        };
        // As the unweighted one-call functions: no samples is `NO_SAMPLES` (the library
        // would call it a zero total weight).
        if scores.len() != labels.len() {
            return Err(PushError::LengthMismatch {
                scores: scores.len(),
                labels: labels.len(),
            }
            .into());
        }
        if scores.is_empty() {
            return Err(tce_status::NoSamples);
        }
        let estimate = match estimator {
            Estimator::EceBin => weights::ece_bin(scores, labels, w, o.binning, o.bins, o.norm),
            Estimator::Mce => weights::mce(scores, labels, w, o.binning, o.bins),
            Estimator::EceDebias => {
                weights::ece_debias(scores, labels, w, o.binning, o.bins, o.norm)
            }
            Estimator::EceSweep => {
                weights::ece_sweep(scores, labels, w, o.binning, o.norm, o.sweep)
            }
        }?;
        out.write(estimate.into());
        Ok(())
    })
}

/// ECE_bin of the samples (`scores[i]`, `labels[i]`) weighted by `weights[i]` (frequency
/// weights: finite, ≥ 0, not all 0; an integer weight k counts as k copies of the sample),
/// with `options->bins` bins of `options->binning` (equal mass: bins of equal weight) and
/// norm `options->p`. The definitions: docs/estimators.md, Weights. `out->samples` counts
/// the samples of positive weight. Only in builds with the `std` feature (it allocates
/// a few words a sample; no scratch).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_ENUM`, `INVALID_NORM`, `ZERO_BINS`,
/// `TOO_MANY_BINS` (checked before any work), `LENGTH_MISMATCH` (scores, labels or
/// weights of different lengths), `NO_SAMPLES` (n = 0), `NON_FINITE_SCORE`,
/// `SCORE_OUT_OF_RANGE`, `INVALID_LABEL`, `INVALID_WEIGHT` (a weight negative, NaN or
/// infinite), `ZERO_TOTAL_WEIGHT` (every weight 0, or a sum past the largest double).
///
/// # Safety
/// `scores`, `labels` and `weights` NULL or readable for their lengths; `options` NULL or
/// readable; `out` NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tce_ece_bin_weighted(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    weights: *const f64,
    weights_len: usize,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe {
        weighted(
            Estimator::EceBin,
            scores,
            scores_len,
            labels,
            labels_len,
            weights,
            weights_len,
            options,
            out,
        )
    }
}

/// The weighted maximum calibration error: the largest |f̄_k − ȳ_k| over the bins of
/// positive weight, as `tce_ece_bin_weighted`. Only in builds with the `std` feature.
///
/// Errors: as `tce_ece_bin_weighted`.
///
/// # Safety
/// As `tce_ece_bin_weighted`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tce_mce_weighted(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    weights: *const f64,
    weights_len: usize,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe {
        weighted(
            Estimator::Mce,
            scores,
            scores_len,
            labels,
            labels_len,
            weights,
            weights_len,
            options,
            out,
        )
    }
}

/// Weighted ECE_debias (frequency weights: a bin's variance term uses its weight W_k, and
/// bins with W_k < 2 contribute 0), as `tce_ece_bin_weighted`. Only in builds with the
/// `std` feature.
///
/// Errors: as `tce_ece_bin_weighted`.
///
/// # Safety
/// As `tce_ece_bin_weighted`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tce_ece_debias_weighted(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    weights: *const f64,
    weights_len: usize,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe {
        weighted(
            Estimator::EceDebias,
            scores,
            scores_len,
            labels,
            labels_len,
            weights,
            weights_len,
            options,
            out,
        )
    }
}

/// Weighted ECE_sweep: the sweep of SPEC §4 on weighted bins; `out->bins` is b*, at most
/// one bin per unit of weight (Σ⌈w_i⌉), capped by `options->max_bins`; `options->bins` is
/// ignored. Integer weights give the sweep of the repeated samples. Only in builds with
/// the `std` feature.
///
/// Errors: as `tce_ece_bin_weighted`; `TOO_MANY_BINS` when the weights allow more than
/// `TCE_MAX_BINS` bins and `options->max_bins` does not cap them.
///
/// # Safety
/// As `tce_ece_bin_weighted`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tce_ece_sweep_weighted(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    weights: *const f64,
    weights_len: usize,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe {
        weighted(
            Estimator::EceSweep,
            scores,
            scores_len,
            labels,
            labels_len,
            weights,
            weights_len,
            options,
            out,
        )
    }
}
