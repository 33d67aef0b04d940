//! `tce_ew_histogram`: the streaming equal-width histogram (SPEC §3.1).

use core::ffi::c_void;

use super::boundary::ffi_boundary;
use super::raw::{array, array_mut, Out};
use super::state::{self, HistogramKind, State};
use super::status::tce_status;
use super::types::{closure, norm, tce_bin_stats, tce_estimate, write_estimate};
use crate::histogram::Histogram;

/// An equal-width histogram: B bins fixed at initialisation, O(1) per sample, exact merge.
/// Opaque; lives in caller memory (`tce_ew_histogram_layout`, `tce_ew_histogram_init`) or
/// on the heap (`tce_ew_histogram_new`, with `std`).
pub struct tce_ew_histogram {
    _opaque: [u8; 0],
}

type HistogramState = State<Histogram>;

/// # Safety
/// See the module rules: a valid handle or NULL.
pub(super) unsafe fn get<'a>(h: *const tce_ew_histogram) -> Result<&'a Histogram, tce_status> {
    // SAFETY: forwarded contract.
    unsafe { state::get::<HistogramKind>(h.cast()) }.map(|s: &HistogramState| &s.view)
}

/// # Safety
/// See the module rules: a valid handle or NULL, not accessed elsewhere meanwhile.
pub(super) unsafe fn get_mut<'a>(
    h: *mut tce_ew_histogram,
) -> Result<&'a mut Histogram, tce_status> {
    // SAFETY: forwarded contract.
    unsafe { state::get_mut::<HistogramKind>(h.cast()) }.map(|s: &mut HistogramState| &mut s.view)
}

/// The size and alignment of caller memory for a histogram of `bins` bins.
///
/// Errors: `ZERO_BINS`; `TOO_MANY_BINS` (above `TCE_MAX_BINS`); `NULL_POINTER`,
/// `MISALIGNED`.
///
/// # Safety
/// `size` and `align` must be NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_layout(
    bins: usize,
    size: *mut usize,
    align: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (size, align) = unsafe { (Out::new(size)?, Out::new(align)?) };
        let (s, a) = state::layout::<HistogramKind>(bins)?;
        size.write(s);
        align.write(a);
        Ok(())
    })
}

/// Initialises an empty histogram of `bins` bins in `memory[0..memory_len]`, which must
/// be at least the size and alignment that `tce_ew_histogram_layout` reports, and
/// writes its handle (a pointer into `memory`) to `*out`. The memory stays the caller's:
/// it must outlive the handle and must not be used otherwise meanwhile; there is nothing
/// to free. Initialising memory again starts a new, empty histogram.
///
/// Errors: `NULL_POINTER`, `ZERO_BINS`, `TOO_MANY_BINS`, `INVALID_ENUM` (closure),
/// `MISALIGNED`, `BUFFER_TOO_SMALL`. On error the memory is untouched.
///
/// # Safety
/// `memory` must be NULL or writable for `memory_len` bytes; `out` NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_init(
    memory: *mut c_void,
    memory_len: usize,
    bins: usize,
    closure: u32,
    out: *mut *mut tce_ew_histogram,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let closure = self::closure(closure)?;
        // SAFETY: the caller's contract on `memory`.
        let state =
            unsafe { state::init::<HistogramKind>(memory.cast(), memory_len, bins, false)? };
        state.view.reinitialise(closure);
        out.write(memory.cast());
        Ok(())
    })
}

/// Allocates an empty histogram of `bins` bins on the heap; release it with
/// `tce_ew_histogram_free`. Only in builds with the `std` feature.
///
/// Errors: `NULL_POINTER`, `ZERO_BINS`, `TOO_MANY_BINS`, `INVALID_ENUM`,
/// `ALLOCATION_FAILED`. Every argument is checked before allocating.
///
/// # Safety
/// `out` must be NULL or valid for a write.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_new(
    bins: usize,
    closure: u32,
    out: *mut *mut tce_ew_histogram,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let closure = self::closure(closure)?;
        let state = state::allocate::<HistogramKind>(bins)?;
        state.view.reinitialise(closure);
        out.write((state as *mut HistogramState).cast());
        Ok(())
    })
}

/// Releases a histogram from `tce_ew_histogram_new`. NULL is a no-op, and so is a
/// histogram in caller memory (the caller owns that memory) or a handle of another kind.
/// Only in builds with the `std` feature.
///
/// # Safety
/// `h` must be NULL or a valid handle, not used afterwards (a double free is undefined).
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_free(h: *mut tce_ew_histogram) {
    let _ = ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { state::release::<HistogramKind>(h.cast()) };
        Ok(())
    });
}

/// Records one sample: `score` in [0, 1], `label` 0 (miss) or 1 (hit).
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`,
/// `INVALID_LABEL`, `COUNT_OVERFLOW` (the histogram already counts `TCE_MAX_COUNT`
/// samples); nothing is recorded then.
///
/// # Safety
/// `h` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_push(
    h: *mut tce_ew_histogram,
    score: f64,
    label: u8,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let h = unsafe { get_mut(h)? };
        Ok(h.push(score, label)?)
    })
}

/// Records a batch: all of it, or (when any element is bad) none of it.
///
/// Errors: as `tce_ew_histogram_push` (`COUNT_OVERFLOW` if the batch would take the
/// count past `TCE_MAX_COUNT`), and `LENGTH_MISMATCH` if `scores_len` differs from
/// `labels_len`; `MISALIGNED`.
///
/// # Safety
/// `h` NULL or a valid handle; `scores` / `labels` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_push_batch(
    h: *mut tce_ew_histogram,
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let h = unsafe { get_mut(h)? };
        // SAFETY: the caller's contract.
        let (scores, labels) = unsafe { (array(scores, scores_len)?, array(labels, labels_len)?) };
        Ok(h.push_batch(scores, labels)?)
    })
}

/// Adds the samples of `other` to `h`: the result equals pushing both streams into one
/// histogram, bit for bit. `other` is not changed.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `BIN_COUNT_MISMATCH`, `CLOSURE_MISMATCH`,
/// `SAME_STATE` (`h == other`), `COUNT_OVERFLOW` (the two together count more than
/// `TCE_MAX_COUNT` samples); nothing changes then.
///
/// # Safety
/// `h` and `other` NULL or valid handles of states that do not overlap.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_merge(
    h: *mut tce_ew_histogram,
    other: *const tce_ew_histogram,
) -> tce_status {
    ffi_boundary!({
        if !h.is_null() && core::ptr::eq(h, other) {
            // SAFETY: the caller's contract (checks the kind for a precise status).
            unsafe { get(other)? };
            return Err(tce_status::SameState);
        }
        // SAFETY: the caller's contract; distinct, non-overlapping states.
        let (h, other) = unsafe { (get_mut(h)?, get(other)?) };
        Ok(h.merge(other)?)
    })
}

/// Forgets every sample; the bin count and closure stay.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`.
///
/// # Safety
/// `h` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_reset(h: *mut tce_ew_histogram) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { get_mut(h)? }.reset();
        Ok(())
    })
}

/// The number of bins B.
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_bin_count(
    h: *const tce_ew_histogram,
    out: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        out.write(h.bin_count());
        Ok(())
    })
}

/// The closure of the bins, a `tce_closure` value.
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_closure(
    h: *const tce_ew_histogram,
    out: *mut u32,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        out.write(h.closure() as u32);
        Ok(())
    })
}

/// The number of samples recorded.
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_samples(
    h: *const tce_ew_histogram,
    out: *mut u64,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        out.write(h.samples());
        Ok(())
    })
}

/// ECE_bin over the histogram's bins with norm exponent `p` (≥ 1, finite; 2 is the
/// paper's choice).
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `INVALID_NORM`, `NO_SAMPLES`.
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_ece_bin(
    h: *const tce_ew_histogram,
    p: f64,
    out: *mut tce_estimate,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        write_estimate(out, h.ece_bin(norm(p)?)?);
        Ok(())
    })
}

/// The maximum calibration error over the histogram's non-empty bins.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `NO_SAMPLES`.
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_mce(
    h: *const tce_ew_histogram,
    out: *mut tce_estimate,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        write_estimate(out, h.mce()?);
        Ok(())
    })
}

/// ECE_debias over the histogram's bins (SPEC §5) with norm exponent `p`.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `INVALID_NORM`, `NO_SAMPLES`.
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_ece_debias(
    h: *const tce_ew_histogram,
    p: f64,
    out: *mut tce_estimate,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        write_estimate(out, h.ece_debias(norm(p)?)?);
        Ok(())
    })
}

/// Writes the statistics of every bin, bin 0 first, to `out[0..B]` (for reliability
/// diagrams). Edges are k/B and (k+1)/B; empty bins report NaN mean score and accuracy.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`, `BUFFER_TOO_SMALL` if `out_len`
/// is below the bin count (then nothing is written).
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or writable for `out_len` elements.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_bin_stats(
    h: *const tce_ew_histogram,
    out: *mut tce_bin_stats,
    out_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let h = unsafe { get(h)? };
        // SAFETY: the caller's contract.
        let out = unsafe { array_mut(out, out_len)? };
        let bins = h.bins();
        if out.len() < bins.len() {
            return Err(tce_status::BufferTooSmall);
        }
        // A range of bin numbers rather than `enumerate`: no counter to overflow.
        for (k, (slot, stats)) in (0..bins.len()).zip(out.iter_mut().zip(bins)) {
            *slot = tce_bin_stats::equal_width(stats, k, bins.len());
        }
        Ok(())
    })
}
