//! `tce_sorted_buffer`: every sample kept, for equal-mass bins and the sweep (SPEC §3.2,
//! §4).

use core::ffi::c_void;

use super::boundary::{ffi_boundary, Outcome};
use super::raw::{array, Out};
use super::sorted::{self, Estimator};
use super::state::{self, BufferKind, State};
use super::status::tce_status;
use super::types::{tce_bin_stats, tce_estimate, tce_options};
use crate::buffer::SortedBuffer;

/// A buffer of (score, label) samples of fixed capacity, sorted lazily when an estimate
/// needs it. Opaque; lives in caller memory (`tce_sorted_buffer_layout`,
/// `tce_sorted_buffer_init`) or on the heap (`tce_sorted_buffer_new`, with `std`).
pub struct tce_sorted_buffer {
    _opaque: [u8; 0],
}

/// # Safety
/// A valid handle or NULL.
pub(super) unsafe fn get<'a>(b: *const tce_sorted_buffer) -> Result<&'a SortedBuffer, tce_status> {
    // SAFETY: forwarded contract.
    unsafe { state::get::<BufferKind>(b.cast()) }.map(|s: &State<SortedBuffer>| &s.view)
}

/// # Safety
/// A valid handle or NULL, not accessed elsewhere meanwhile.
pub(super) unsafe fn get_mut<'a>(
    b: *mut tce_sorted_buffer,
) -> Result<&'a mut SortedBuffer, tce_status> {
    // SAFETY: forwarded contract.
    unsafe { state::get_mut::<BufferKind>(b.cast()) }.map(|s: &mut State<SortedBuffer>| &mut s.view)
}

/// The size and alignment of caller memory for a buffer of `capacity` samples (about
/// 16 bytes a sample).
///
/// Errors: `ZERO_CAPACITY`; `CAPACITY_TOO_LARGE` (above 2^31 − 1 samples, or the size
/// overflows); `NULL_POINTER`, `MISALIGNED`.
///
/// # Safety
/// `size` and `align` must be NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_layout(
    capacity: usize,
    size: *mut usize,
    align: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (size, align) = unsafe { (Out::new(size)?, Out::new(align)?) };
        let (s, a) = state::layout::<BufferKind>(capacity)?;
        size.write(s);
        align.write(a);
        Ok(())
    })
}

/// Initialises an empty buffer of `capacity` samples in `memory[0..memory_len]` (at
/// least the size and alignment of `tce_sorted_buffer_layout`) and writes its handle to
/// `*out`. The memory stays the caller's: it must outlive the handle; nothing to free.
///
/// Errors: `NULL_POINTER`, `ZERO_CAPACITY`, `CAPACITY_TOO_LARGE`, `MISALIGNED`,
/// `BUFFER_TOO_SMALL`. On error the memory is untouched.
///
/// # Safety
/// `memory` must be NULL or writable for `memory_len` bytes; `out` NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_init(
    memory: *mut c_void,
    memory_len: usize,
    capacity: usize,
    out: *mut *mut tce_sorted_buffer,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: the caller's contract.
        unsafe { state::init::<BufferKind>(memory.cast(), memory_len, capacity, false)? };
        out.write(memory.cast());
        Ok(())
    })
}

/// Allocates an empty buffer of `capacity` samples on the heap; release it with
/// `tce_sorted_buffer_free`. Only in builds with the `std` feature.
///
/// Errors: `NULL_POINTER`, `ZERO_CAPACITY`, `CAPACITY_TOO_LARGE`, `ALLOCATION_FAILED`.
///
/// # Safety
/// `out` must be NULL or valid for a write.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_new(
    capacity: usize,
    out: *mut *mut tce_sorted_buffer,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let state = state::allocate::<BufferKind>(capacity)?;
        out.write((state as *mut State<SortedBuffer>).cast());
        Ok(())
    })
}

/// Releases a buffer from `tce_sorted_buffer_new`. NULL is a no-op, and so is a buffer in
/// caller memory or a handle of another kind. Only in builds with the `std` feature.
///
/// # Safety
/// `b` must be NULL or a valid handle, not used afterwards (a double free is undefined).
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_free(b: *mut tce_sorted_buffer) {
    let _ = ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { state::release::<BufferKind>(b.cast()) };
        Ok(())
    });
}

/// Records one sample.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`,
/// `INVALID_LABEL`, `BUFFER_FULL`; nothing is recorded then.
///
/// # Safety
/// `b` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_push(
    b: *mut tce_sorted_buffer,
    score: f64,
    label: u8,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        Ok(unsafe { get_mut(b)? }.push(score, label)?)
    })
}

/// Records a batch: all of it, or (a bad element, or not enough room) none of it.
///
/// Errors: as `tce_sorted_buffer_push`, and `LENGTH_MISMATCH`, `MISALIGNED`.
///
/// # Safety
/// `b` NULL or a valid handle; `scores` / `labels` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_push_batch(
    b: *mut tce_sorted_buffer,
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let b = unsafe { get_mut(b)? };
        // SAFETY: the caller's contract.
        let (scores, labels) = unsafe { (array(scores, scores_len)?, array(labels, labels_len)?) };
        Ok(b.push_batch(scores, labels)?)
    })
}

/// Appends the samples of `other` after those of `b`, in their arrival order: the result
/// equals pushing both streams. `other` is not changed.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `BUFFER_FULL`, `SAME_STATE`; nothing changes.
///
/// # Safety
/// `b` and `other` NULL or valid handles of states that do not overlap.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_merge(
    b: *mut tce_sorted_buffer,
    other: *const tce_sorted_buffer,
) -> tce_status {
    ffi_boundary!({
        if !b.is_null() && core::ptr::eq(b, other) {
            // SAFETY: the caller's contract (checks the kind for a precise status).
            unsafe { get(other)? };
            return Err(tce_status::SameState);
        }
        // SAFETY: the caller's contract; distinct, non-overlapping states.
        let (b, other) = unsafe { (get_mut(b)?, get(other)?) };
        Ok(b.merge(other)?)
    })
}

/// Forgets every sample; the capacity stays.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`.
///
/// # Safety
/// `b` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_clear(b: *mut tce_sorted_buffer) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { get_mut(b)? }.clear();
        Ok(())
    })
}

/// The number of samples held.
///
/// # Safety
/// `b` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_len(
    b: *const tce_sorted_buffer,
    out: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (b, out) = unsafe { (get(b)?, Out::new(out)?) };
        out.write(b.len());
        Ok(())
    })
}

/// The most samples the buffer can hold.
///
/// # Safety
/// `b` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_capacity(
    b: *const tce_sorted_buffer,
    out: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (b, out) = unsafe { (get(b)?, Out::new(out)?) };
        out.write(b.capacity());
        Ok(())
    })
}

/// The number of hits (label 1) held.
///
/// # Safety
/// `b` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_hits(
    b: *const tce_sorted_buffer,
    out: *mut u64,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (b, out) = unsafe { (get(b)?, Out::new(out)?) };
        out.write(b.hits());
        Ok(())
    })
}

/// Sorts what arrived since the last sort now, on two threads when that serves: the
/// buffer holds at least 2^17 samples, in arrival order (pushes and merges), and has room
/// for twice as many (`tce_sorted_buffer_layout(2 * n)`); otherwise on the calling thread,
/// as the estimators sort. The estimators that follow, until the next push, merge or
/// clear, find the samples sorted; after a two-thread sort they also read its exact
/// prefix sums of the scores instead of a pass per estimate. The order and every estimate
/// are those of the one-thread sort, bit for bit. About 1.6× faster at 10^6 samples on two
/// idle cores (docs/performance.md).
///
/// The threads are those of a pool shared by the whole process (rayon's global pool:
/// `RAYON_NUM_THREADS` threads, or one per core), started by the first sort that takes
/// them and kept until the process ends; if it cannot start (its threads cannot be
/// spawned), the sort runs on the calling thread. The two-thread sort allocates, beside
/// the buffer: n/4 bytes of block sums and, per thread, an array as long as its largest
/// bucket. Only in builds with the `std` feature.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`.
///
/// # Safety
/// `b` NULL or a valid handle, not accessed elsewhere meanwhile.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_sort_parallel(b: *mut tce_sorted_buffer) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { get_mut(b)? }.sorted_parallel();
        Ok(())
    })
}

/// # Safety
/// `b` NULL or a valid handle, not accessed elsewhere meanwhile.
unsafe fn with_samples(b: *mut tce_sorted_buffer, f: sorted::UseSamples<'_>) -> Outcome {
    // SAFETY: forwarded contract.
    f(unsafe { get_mut(b)? }.sorted())
}

/// # Safety
/// `b` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
unsafe fn estimate(
    estimator: Estimator,
    b: *mut tce_sorted_buffer,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::estimate(estimator, b, with_samples, options, out) }
}

/// ECE_bin with `options->bins` bins of `options->binning`, norm `options->p`.
///
/// Estimators sort the samples that arrived since the last estimate (a radix sort with
/// the free slots when the buffer has room for twice its samples, else in place; or
/// ahead, on two threads, `tce_sorted_buffer_sort_parallel`), so they take a mutable
/// handle; the samples and every later result are not affected by it.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_STATE`, `INVALID_ENUM`, `INVALID_NORM`,
/// `ZERO_BINS`, `NO_SAMPLES`.
///
/// # Safety
/// `b` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_ece_bin(
    b: *mut tce_sorted_buffer,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { estimate(Estimator::EceBin, b, options, out) }
}

/// The maximum calibration error with `options->bins` bins (p is ignored).
///
/// Errors: as `tce_sorted_buffer_ece_bin`.
///
/// # Safety
/// `b` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_mce(
    b: *mut tce_sorted_buffer,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { estimate(Estimator::Mce, b, options, out) }
}

/// ECE_debias with `options->bins` bins (SPEC §5).
///
/// Errors: as `tce_sorted_buffer_ece_bin`.
///
/// # Safety
/// `b` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_ece_debias(
    b: *mut tce_sorted_buffer,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { estimate(Estimator::EceDebias, b, options, out) }
}

/// ECE_sweep (SPEC §4): ECE_bin with b* bins, the largest count such that every binning
/// with up to b* bins has non-decreasing accuracies; `out->bins` is b*. Uses
/// `options->max_bins` (0 = no cap) and `options->sweep_limit`; `options->bins` is
/// ignored.
///
/// Errors: as `tce_sorted_buffer_ece_bin` (`ZERO_BINS` cannot occur: `max_bins` 0 means
/// no cap).
///
/// # Safety
/// `b` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_ece_sweep(
    b: *mut tce_sorted_buffer,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { estimate(Estimator::EceSweep, b, options, out) }
}

/// Writes the statistics of the `options->bins` bins of `options->binning` to
/// `out[0..bins]` (for reliability diagrams; for the sweep's bins, pass b* as `bins`).
/// Equal-width bins report edges k/B and (k+1)/B; equal-mass bins, which have no fixed
/// edges, report their smallest and largest score. Empty bins report NaN mean score and
/// accuracy (and NaN edges for equal mass). An empty buffer gives B empty bins.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_STATE`, `INVALID_ENUM`, `INVALID_NORM`,
/// `ZERO_BINS`, `BUFFER_TOO_SMALL` (`out_len` below `options->bins`: nothing written).
///
/// # Safety
/// `b` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable for
/// `out_len` elements.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_bin_stats(
    b: *mut tce_sorted_buffer,
    options: *const tce_options,
    out: *mut tce_bin_stats,
    out_len: usize,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::bin_stats(b, with_samples, options, out, out_len) }
}
