//! Stateless one-call estimators over score and label arrays, with caller scratch memory
//! (no allocation): the scratch holds a sorted buffer of the n samples.

use core::ffi::c_void;

use super::boundary::ffi_boundary;
use super::raw::{array, array_mut, Out};
use super::sorted::{check_bin_stats, write_bin_stats, Estimator};
use super::state::{self, BufferKind};
use super::status::tce_status;
use super::types::{options, tce_bin_stats, tce_estimate, tce_options};
use crate::error::PushError;

/// The size and alignment of the scratch memory the one-call functions need for `n`
/// samples (the layout of a sorted buffer of capacity n: about 16 bytes a sample).
///
/// Errors: `ZERO_CAPACITY` (n = 0), `CAPACITY_TOO_LARGE`, `NULL_POINTER`, `MISALIGNED`.
///
/// # Safety
/// `size` and `align` must be NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tce_scratch_layout(
    n: usize,
    size: *mut usize,
    align: *mut usize,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { super::buffer::tce_sorted_buffer_layout(n, size, align) }
}

/// Validates the arrays and sorts them into a buffer laid over the scratch, then runs `f`.
///
/// # Safety
/// As the exported one-call functions.
#[allow(clippy::too_many_arguments)]
unsafe fn with_samples<F>(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    options: *const tce_options,
    scratch: *mut c_void,
    scratch_len: usize,
    check: impl FnOnce(&super::types::Options) -> Result<(), tce_status>,
    f: F,
) -> tce_status
where
    F: FnOnce(&crate::buffer::SortedSamples<'_>, &super::types::Options) -> Result<(), tce_status>,
{
    ffi_boundary!({
        // SAFETY: forwarded contract.
        let options = unsafe { self::options(options)? };
        // The bin count before any work (an `options.bins` of SIZE_MAX fails here, not
        // after sorting n samples and looping over the bins).
        check(&options)?;
        // SAFETY: forwarded contract.
        let (scores, labels) = unsafe { (array(scores, scores_len)?, array(labels, labels_len)?) };
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
        // SAFETY: forwarded contract: scratch writable for `scratch_len` bytes, not
        // overlapping the arrays.
        let state =
            unsafe { state::init::<BufferKind>(scratch.cast(), scratch_len, scores.len(), false)? };
        state.view.push_batch(scores, labels)?;
        f(&state.view.sorted(), &options)
    })
}

/// # Safety
/// As the exported one-call functions.
#[allow(clippy::too_many_arguments)]
unsafe fn one_call(
    estimator: Estimator,
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    options: *const tce_options,
    scratch: *mut c_void,
    scratch_len: usize,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    let out = match unsafe { Out::new(out) } {
        Ok(out) => out,
        Err(status) => return status,
    };
    // SAFETY: forwarded contract.
    unsafe {
        with_samples(
            scores,
            scores_len,
            labels,
            labels_len,
            options,
            scratch,
            scratch_len,
            |o| estimator.check(o),
            |sorted, o| {
                out.write(estimator.run(sorted, o)?);
                Ok(())
            },
        )
    }
}

/// ECE_bin of the samples (`scores[i]`, `labels[i]`) with `options->bins` bins of
/// `options->binning` and norm `options->p`, using `scratch` (see `tce_scratch_layout`)
/// instead of allocating. Equals the value of a sorted buffer (and, for equal width, of a
/// histogram) fed the same samples, bit for bit.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_ENUM`, `INVALID_NORM`,
/// `LENGTH_MISMATCH`, `NO_SAMPLES` (n = 0), `BUFFER_TOO_SMALL` (scratch below
/// `tce_scratch_layout(n)`), `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`, `INVALID_LABEL`,
/// `ZERO_BINS`, `TOO_MANY_BINS` (`options->bins` above `TCE_MAX_BINS`, checked before any
/// work), `CAPACITY_TOO_LARGE`.
///
/// # Safety
/// `scores` / `labels` NULL or readable for their lengths; `options` NULL or readable;
/// `scratch` NULL or writable for `scratch_len` bytes, overlapping nothing else; `out`
/// NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tce_ece_bin(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    options: *const tce_options,
    scratch: *mut c_void,
    scratch_len: usize,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe {
        one_call(
            Estimator::EceBin,
            scores,
            scores_len,
            labels,
            labels_len,
            options,
            scratch,
            scratch_len,
            out,
        )
    }
}

/// The maximum calibration error of the samples with `options->bins` bins.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_ENUM`, `INVALID_NORM`,
/// `LENGTH_MISMATCH`, `NO_SAMPLES` (n = 0), `BUFFER_TOO_SMALL` (scratch below
/// `tce_scratch_layout(n)`), `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`, `INVALID_LABEL`,
/// `ZERO_BINS`, `TOO_MANY_BINS` (`options->bins` above `TCE_MAX_BINS`, checked before any
/// work), `CAPACITY_TOO_LARGE`.
///
/// # Safety
/// `scores` / `labels` NULL or readable for their lengths; `options` NULL or readable;
/// `scratch` NULL or writable for `scratch_len` bytes, overlapping nothing else; `out`
/// NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tce_mce(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    options: *const tce_options,
    scratch: *mut c_void,
    scratch_len: usize,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe {
        one_call(
            Estimator::Mce,
            scores,
            scores_len,
            labels,
            labels_len,
            options,
            scratch,
            scratch_len,
            out,
        )
    }
}

/// ECE_debias of the samples with `options->bins` bins (SPEC §5).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_ENUM`, `INVALID_NORM`,
/// `LENGTH_MISMATCH`, `NO_SAMPLES` (n = 0), `BUFFER_TOO_SMALL` (scratch below
/// `tce_scratch_layout(n)`), `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`, `INVALID_LABEL`,
/// `ZERO_BINS`, `TOO_MANY_BINS` (`options->bins` above `TCE_MAX_BINS`, checked before any
/// work), `CAPACITY_TOO_LARGE`.
///
/// # Safety
/// `scores` / `labels` NULL or readable for their lengths; `options` NULL or readable;
/// `scratch` NULL or writable for `scratch_len` bytes, overlapping nothing else; `out`
/// NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tce_ece_debias(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    options: *const tce_options,
    scratch: *mut c_void,
    scratch_len: usize,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe {
        one_call(
            Estimator::EceDebias,
            scores,
            scores_len,
            labels,
            labels_len,
            options,
            scratch,
            scratch_len,
            out,
        )
    }
}

/// ECE_sweep of the samples (SPEC §4); `out->bins` is b*. `options->bins` is ignored.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_ENUM`, `INVALID_NORM`,
/// `LENGTH_MISMATCH`, `NO_SAMPLES` (n = 0), `BUFFER_TOO_SMALL` (scratch below
/// `tce_scratch_layout(n)`), `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`, `INVALID_LABEL`,
/// `ZERO_BINS`, `TOO_MANY_BINS` (`options->bins` above `TCE_MAX_BINS`, checked before any
/// work), `CAPACITY_TOO_LARGE`.
///
/// # Safety
/// `scores` / `labels` NULL or readable for their lengths; `options` NULL or readable;
/// `scratch` NULL or writable for `scratch_len` bytes, overlapping nothing else; `out`
/// NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tce_ece_sweep(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    options: *const tce_options,
    scratch: *mut c_void,
    scratch_len: usize,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe {
        one_call(
            Estimator::EceSweep,
            scores,
            scores_len,
            labels,
            labels_len,
            options,
            scratch,
            scratch_len,
            out,
        )
    }
}

/// The per-bin statistics of the samples for `options->bins` bins of
/// `options->binning` (reliability diagram), into `out[0..bins]`; as
/// `tce_sorted_buffer_bin_stats`, with scratch as `tce_ece_bin`.
///
/// Errors: as `tce_ece_bin`, and `BUFFER_TOO_SMALL` if `out_len` is below
/// `options->bins`.
///
/// # Safety
/// As `tce_ece_bin`; `out` NULL or writable for `out_len` elements.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tce_reliability_bins(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    options: *const tce_options,
    scratch: *mut c_void,
    scratch_len: usize,
    out: *mut tce_bin_stats,
    out_len: usize,
) -> tce_status {
    // SAFETY: forwarded contract.
    let out = match unsafe { array_mut(out, out_len) } {
        Ok(out) => out,
        Err(status) => return status,
    };
    let room = out.len();
    // SAFETY: forwarded contract.
    unsafe {
        with_samples(
            scores,
            scores_len,
            labels,
            labels_len,
            options,
            scratch,
            scratch_len,
            move |o| check_bin_stats(o.bins, room),
            |sorted, o| write_bin_stats(sorted, o.binning, o.bins, out),
        )
    }
}
