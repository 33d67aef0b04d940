//! Stateless one-call estimators over score and label arrays, with caller scratch memory
//! (no allocation).
//!
//! Two paths, the same values bit for bit:
//!
//! * **equal width with a fixed bin count** (ECE_bin, MCE, ECE_debias, bin statistics):
//!   the samples go into a histogram (`Histogram::push_batch`, O(n), no sort), whose bins
//!   live on the stack (up to [`STACK_BINS`]) or in the scratch. Its bins are those of
//!   the sorted path: the same index rule per sample, and exact (order-free) sums;
//! * **equal mass with a fixed bin count** (ECE_bin, MCE, ECE_debias; at most
//!   `select::MAX_BINS` bins and at least `select::MIN_SAMPLES` samples): selection
//!   (`select.rs`): one counting pass, and only the samples of the digits that straddle
//!   a bin boundary are sorted, in the scratch. The same bins as the sorted path, bit for
//!   bit;
//! * **otherwise, and every sweep**: the scratch holds a sorted buffer of the n samples
//!   (full, so it sorts in place: see `radix.rs`).
//!   The equal-width sweep needs the sorted order too (SPEC §4: prefix sums over it, one
//!   binary search per edge): without it each b would cost O(n).
//!
//! The scratch is sized for the sorted path whatever the call (`tce_scratch_layout(n)`),
//! so one rule serves every function; a histogram of more bins than it holds (B above
//! about n/2) takes the sorted path.

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use super::boundary::{ffi_boundary, Outcome};
use super::raw::{array, array_mut, Out};
use super::sorted::{check_bin_stats, write_bin_stats, Estimator};
use super::state::{self, BufferKind};
use super::status::tce_status;
use super::types::{options, tce_bin_stats, tce_estimate, tce_options, Options};
use crate::binning::Binning;
use crate::buffer::SortedSamples;
use crate::error::PushError;
use crate::estimate;
use crate::histogram::Histogram;
use crate::select;
use crate::stats::BinStats;

/// Histograms of up to this many bins are kept on the stack (2 KiB), not in the scratch.
const STACK_BINS: usize = 64;

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

/// What a one-call function computes from the samples.
trait Job {
    /// Checks the options before any work: the bin count (an `options.bins` of SIZE_MAX
    /// fails here, not after binning n samples), the room for the output.
    fn check(&self, o: &Options) -> Outcome;
    /// Whether the job reads the samples in sorted order.
    fn needs_sort(&self, o: &Options) -> bool;
    /// Whether [`Job::binned`] serves equal-mass bins too (when `needs_sort` is false).
    fn takes_equal_mass_bins(&self) -> bool;
    /// The job on the sorted samples.
    fn sorted(self, samples: &SortedSamples<'_>, o: &Options) -> Outcome;
    /// The job on the bins of `o.bins` (only when `needs_sort` is false): equal width, or
    /// equal mass if `takes_equal_mass_bins`.
    fn binned(self, bins: &[BinStats], o: &Options) -> Outcome;
}

/// Validates the arrays and the scratch, bins or sorts the samples (see the module
/// docs), then runs `job`.
///
/// # Safety
/// As the exported one-call functions.
#[allow(clippy::too_many_arguments)]
unsafe fn with_samples(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    options: *const tce_options,
    scratch: *mut c_void,
    scratch_len: usize,
    job: impl Job,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: forwarded contract.
        let options = unsafe { self::options(options)? };
        job.check(&options)?;
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
        // One scratch rule for both paths: `tce_scratch_layout(n)`.
        let n = scores.len();
        state::check_memory::<BufferKind>(scratch.cast(), scratch_len, n)?;
        if let (false, Binning::EqualWidth(closure)) = (job.needs_sort(&options), options.binning) {
            let mut stack = [BinStats::EMPTY; STACK_BINS];
            let storage = match stack.get_mut(..options.bins) {
                Some(storage) => Some(storage),
                // SAFETY: forwarded contract: scratch writable for `scratch_len` bytes, not
                // overlapping the arrays.
                None => unsafe { bins_in(scratch, scratch_len, options.bins) },
            };
            if let Some(storage) = storage {
                let mut histogram = Histogram::with_storage(storage, closure)?;
                histogram.push_batch(scores, labels)?;
                return job.binned(histogram.bins(), &options);
            }
        }
        // SAFETY: forwarded contract: scratch writable for `scratch_len` bytes, not
        // overlapping the arrays.
        let state = unsafe { state::init::<BufferKind>(scratch.cast(), scratch_len, n, false)? };
        if let (false, true, true, Binning::EqualMass(ties)) = (
            job.needs_sort(&options),
            job.takes_equal_mass_bins(),
            select::serves(n, options.bins),
            options.binning,
        ) {
            let mut stack = [BinStats::EMPTY; select::MAX_BINS];
            if let Some(bins) = stack.get_mut(..options.bins) {
                // The empty buffer's storage is the selection's scratch.
                if select::equal_mass_bins(scores, labels, ties, bins, state.view.free_mut())? {
                    return job.binned(bins, &options);
                }
            }
        }
        state.view.push_batch(scores, labels)?;
        job.sorted(&state.view.sorted(), &options)
    })
}

/// `bins` empty bins laid over the scratch, if they fit after aligning it.
///
/// # Safety
/// `scratch` is writable for `scratch_len` bytes (it has passed `check_memory`, so it is
/// not NULL), accessed by nothing else while the bins are in use.
unsafe fn bins_in<'a>(
    scratch: *mut c_void,
    scratch_len: usize,
    bins: usize,
) -> Option<&'a mut [BinStats]> {
    let skip = scratch.cast::<u8>().align_offset(align_of::<BinStats>());
    let room = scratch_len.checked_sub(skip)? / size_of::<BinStats>();
    if room < bins {
        return None;
    }
    // SAFETY: `skip + bins · size_of::<BinStats>()` ≤ `scratch_len` bytes of writable
    // memory (checked above), the start aligned for `BinStats`; zeroed first, and all
    // zero bytes are an empty bin (integers only).
    unsafe {
        let first = scratch.cast::<u8>().add(skip).cast::<BinStats>();
        first.write_bytes(0, bins);
        Some(core::slice::from_raw_parts_mut(first, bins))
    }
}

/// An estimator's job: its estimate, into `out`.
struct EstimateJob {
    estimator: Estimator,
    out: Out<tce_estimate>,
}

impl Job for EstimateJob {
    fn check(&self, o: &Options) -> Outcome {
        self.estimator.check(o)
    }
    fn needs_sort(&self, _: &Options) -> bool {
        matches!(self.estimator, Estimator::EceSweep)
    }
    fn takes_equal_mass_bins(&self) -> bool {
        true
    }
    fn sorted(self, samples: &SortedSamples<'_>, o: &Options) -> Outcome {
        self.out.write(self.estimator.run(samples, o)?);
        Ok(())
    }
    fn binned(self, bins: &[BinStats], o: &Options) -> Outcome {
        // What `Histogram::{ece_bin, mce, ece_debias}` compute.
        let bins = bins.iter().copied();
        let estimate = match self.estimator {
            Estimator::EceBin => estimate::ece_bin(bins, o.norm),
            Estimator::Mce => estimate::mce(bins),
            Estimator::EceDebias => estimate::ece_debias(bins, o.norm),
            // Never asked (`needs_sort`); a value, not a panic, all the same.
            Estimator::EceSweep => return Err(tce_status::InvalidEnum),
        };
        self.out.write(estimate?.into());
        Ok(())
    }
}

/// The bin statistics' job: one `tce_bin_stats` per bin, into `out`.
struct BinStatsJob<'a> {
    out: &'a mut [tce_bin_stats],
}

impl Job for BinStatsJob<'_> {
    fn check(&self, o: &Options) -> Outcome {
        check_bin_stats(o.bins, self.out.len())
    }
    fn needs_sort(&self, _: &Options) -> bool {
        false
    }
    fn takes_equal_mass_bins(&self) -> bool {
        // Equal-mass bins report their score ranges, which the sorted runs give.
        false
    }
    fn sorted(self, samples: &SortedSamples<'_>, o: &Options) -> Outcome {
        write_bin_stats(samples, o.binning, o.bins, self.out)
    }
    fn binned(self, bins: &[BinStats], o: &Options) -> Outcome {
        // As `write_bin_stats` for equal width: the bins' own edges.
        // (A bounded range, not `enumerate`: no overflow path.)
        for (k, (slot, stats)) in (0..bins.len()).zip(self.out.iter_mut().zip(bins)) {
            *slot = tce_bin_stats::equal_width(stats, k, o.bins);
        }
        Ok(())
    }
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
            EstimateJob { estimator, out },
        )
    }
}

/// ECE_bin of the samples (`scores[i]`, `labels[i]`) with `options->bins` bins of
/// `options->binning` and norm `options->p`, using `scratch` (see `tce_scratch_layout`)
/// instead of allocating. Equals the value of a sorted buffer (and, for equal width, of a
/// histogram) fed the same samples, bit for bit. Equal width bins the samples into a
/// histogram in O(n) without sorting them; equal mass selects (sorting only the samples
/// next to the bin boundaries) from 4096 samples and up to 64 bins, else sorts.
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
            BinStatsJob { out },
        )
    }
}
