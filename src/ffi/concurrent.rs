//! `tce_concurrent_histogram`: the one state that many threads may push into at once
//! (lock-free, exact), snapshotted into an equal-width histogram for the estimators.
//! Only on targets with 64-bit atomics.

use core::ffi::c_void;

use super::boundary::ffi_boundary;
use super::histogram::{self, tce_ew_histogram};
use super::raw::{array, Out};
use super::state::{self, ConcurrentKind, State};
use super::status::tce_status;
use super::types::closure;
use crate::concurrent::ConcurrentHistogram;

/// An equal-width histogram that many threads push into at once, without locks: the
/// **one thread-safe state** of the API. Its bins are striped into shards: threads that
/// push into different shards (`tce_concurrent_histogram_push_to` with their own index)
/// do not contend for the same cache lines, and a snapshot sums the shards exactly.
/// `tce_concurrent_histogram_push`, `tce_concurrent_histogram_push_to`, their batch
/// forms, `tce_concurrent_histogram_snapshot` and the
/// reading functions may run concurrently on the same handle, from any number of
/// threads; initialisation must happen before any thread uses the handle, and
/// `tce_concurrent_histogram_free` after the last. Opaque; lives in caller memory
/// (`tce_concurrent_histogram_layout`, `tce_concurrent_histogram_init`) or on the heap
/// (`tce_concurrent_histogram_new`, with `std`). Only on targets with 64-bit atomics.
pub struct tce_concurrent_histogram {
    _opaque: [u8; 0],
}

type ConcurrentState = State<ConcurrentHistogram>;

/// # Safety
/// A valid handle or NULL. Other threads may use the state through shared references
/// meanwhile (its bins are atomics), but nothing may hold it exclusively.
unsafe fn get<'a>(
    h: *const tce_concurrent_histogram,
) -> Result<&'a ConcurrentHistogram, tce_status> {
    // SAFETY: forwarded contract. The shared reference allows the atomic updates of
    // other threads (interior mutability); the header and closure are only written by
    // `init` and `free`, which must not race with any use.
    let h = unsafe { state::get::<ConcurrentKind>(h.cast()) }.map(|s: &ConcurrentState| &s.view)?;
    // A forged or corrupted header could describe bins and shards that do not fit the
    // storage: refuse it rather than index out of it.
    if !h.shape_is_valid() {
        return Err(tce_status::WrongState);
    }
    Ok(h)
}

/// The number of bins of all shards: `ZERO_BINS` if either count is 0, `TOO_MANY_BINS`
/// if `bins` is above `TCE_MAX_BINS` (the shards are bounded by memory only),
/// `CAPACITY_TOO_LARGE` if their product overflows.
fn units(bins: usize, shards: usize) -> Result<usize, tce_status> {
    crate::binning::check_bin_count(bins)?;
    if shards == 0 {
        return Err(tce_status::ZeroBins);
    }
    bins.checked_mul(shards).ok_or(tce_status::CapacityTooLarge)
}

/// The size and alignment of caller memory for a concurrent histogram of `shards` shards
/// of `bins` bins each (32 bytes a bin). One shard is the unstriped histogram; use as
/// many as threads that push often.
///
/// Errors: `ZERO_BINS` (`bins` or `shards` is 0); `TOO_MANY_BINS`; `CAPACITY_TOO_LARGE` if the size
/// overflows; `NULL_POINTER`.
///
/// # Safety
/// `size` and `align` must be NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_layout(
    bins: usize,
    shards: usize,
    size: *mut usize,
    align: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (size, align) = unsafe { (Out::new(size)?, Out::new(align)?) };
        let (s, a) = state::layout::<ConcurrentKind>(units(bins, shards)?)?;
        size.write(s);
        align.write(a);
        Ok(())
    })
}

/// Initialises an empty concurrent histogram of `shards` shards of `bins` bins, closed as
/// `closure`, in
/// `memory[0..memory_len]` (at least the size and alignment of
/// `tce_concurrent_histogram_layout`), and writes its handle to `*out`. Not thread-safe
/// itself: publish the handle to other threads after this returns (e.g. before creating
/// them).
///
/// Errors: `NULL_POINTER`, `ZERO_BINS` (`bins` or `shards` is 0), `TOO_MANY_BINS`, `INVALID_ENUM`,
/// `MISALIGNED`, `BUFFER_TOO_SMALL`, `CAPACITY_TOO_LARGE`. On error the memory is
/// untouched.
///
/// # Safety
/// `memory` must be NULL or writable for `memory_len` bytes, used by no other thread
/// meanwhile; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_init(
    memory: *mut c_void,
    memory_len: usize,
    bins: usize,
    shards: usize,
    closure: u32,
    out: *mut *mut tce_concurrent_histogram,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let closure = self::closure(closure)?;
        let units = units(bins, shards)?;
        // SAFETY: the caller's contract on `memory`.
        let state =
            unsafe { state::init::<ConcurrentKind>(memory.cast(), memory_len, units, false)? };
        state.view.reinitialise(closure, bins);
        out.write(memory.cast());
        Ok(())
    })
}

/// Allocates an empty concurrent histogram of `shards` shards of `bins` bins on the heap;
/// release it with `tce_concurrent_histogram_free` once no thread uses it. Only in
/// builds with `std`.
///
/// Errors: `NULL_POINTER`, `ZERO_BINS` (`bins` or `shards` is 0), `TOO_MANY_BINS`, `INVALID_ENUM`,
/// `CAPACITY_TOO_LARGE`, `ALLOCATION_FAILED`.
///
/// # Safety
/// `out` must be NULL or valid for a write.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_new(
    bins: usize,
    shards: usize,
    closure: u32,
    out: *mut *mut tce_concurrent_histogram,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let closure = self::closure(closure)?;
        let state = state::allocate::<ConcurrentKind>(units(bins, shards)?)?;
        state.view.reinitialise(closure, bins);
        out.write((state as *mut ConcurrentState).cast());
        Ok(())
    })
}

/// Releases a concurrent histogram from `tce_concurrent_histogram_new`, after every
/// thread is done with it. NULL is a no-op, and so is one in caller memory or a handle
/// of another kind. Only in builds with `std`.
///
/// # Safety
/// `h` must be NULL or a valid handle that no other thread uses any more, not used
/// afterwards (a double free is undefined).
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_free(h: *mut tce_concurrent_histogram) {
    let _ = ffi_boundary!({
        // SAFETY: the caller's contract (exclusive now).
        unsafe { state::release::<ConcurrentKind>(h.cast()) };
        Ok(())
    });
}

/// Records one sample into shard 0. **Thread-safe**: any number of threads may push
/// into the same handle at once (but threads that push often should each use their own
/// shard: `tce_concurrent_histogram_push_to`).
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`,
/// `INVALID_LABEL`; nothing is recorded then.
///
/// # Safety
/// `h` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_push(
    h: *mut tce_concurrent_histogram,
    score: f64,
    label: u8,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        Ok(unsafe { get(h)? }.push(score, label)?)
    })
}

/// Records a batch into shard 0: all of it, or (a bad element) none of it.
/// **Thread-safe**, like
/// `tce_concurrent_histogram_push` (the samples of concurrent batches interleave; each
/// is counted once).
///
/// Errors: as `tce_concurrent_histogram_push`, and `LENGTH_MISMATCH`, `MISALIGNED`.
///
/// # Safety
/// `h` NULL or a valid handle; `scores` / `labels` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_push_batch(
    h: *mut tce_concurrent_histogram,
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let h = unsafe { get(h)? };
        // SAFETY: the caller's contract.
        let (scores, labels) = unsafe { (array(scores, scores_len)?, array(labels, labels_len)?) };
        Ok(h.push_batch(scores, labels)?)
    })
}

/// Records one sample into shard `shard`, taken modulo the shard count (so any index is
/// valid, e.g. a thread number). **Thread-safe**; threads pushing into different shards
/// do not contend for the same bins.
///
/// Errors: as `tce_concurrent_histogram_push`.
///
/// # Safety
/// `h` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_push_to(
    h: *mut tce_concurrent_histogram,
    shard: usize,
    score: f64,
    label: u8,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        Ok(unsafe { get(h)? }.push_to(shard, score, label)?)
    })
}

/// Records a batch into shard `shard` (modulo the shard count): all of it, or (a bad
/// element) none of it. **Thread-safe**, like `tce_concurrent_histogram_push_to`.
///
/// Errors: as `tce_concurrent_histogram_push_batch`.
///
/// # Safety
/// `h` NULL or a valid handle; `scores` / `labels` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_push_batch_to(
    h: *mut tce_concurrent_histogram,
    shard: usize,
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let h = unsafe { get(h)? };
        // SAFETY: the caller's contract.
        let (scores, labels) = unsafe { (array(scores, scores_len)?, array(labels, labels_len)?) };
        Ok(h.push_batch_to(shard, scores, labels)?)
    })
}

/// Copies the current counts, summed over the shards, into the equal-width histogram
/// `into` (same bin count and closure), replacing its contents; the estimators (`tce_ew_histogram_ece_bin`, ...)
/// then read `into`. **Thread-safe** with respect to pushes: taken while threads push,
/// a snapshot may miss, or partly show, the pushes in flight; taken after they are done
/// (joined), it equals, bit for bit, a histogram fed the same samples in one thread.
/// `into` is an ordinary state: only one thread at a time may use it.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `BIN_COUNT_MISMATCH`, `CLOSURE_MISMATCH`,
/// `COUNT_OVERFLOW` (the shards count more than `TCE_MAX_COUNT` samples in all, which
/// takes 2^63 pushes); `into` is unchanged then.
///
/// # Safety
/// `h` and `into` NULL or valid handles; nothing else accesses `into` meanwhile.
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_snapshot(
    h: *const tce_concurrent_histogram,
    into: *mut tce_ew_histogram,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract; states of different kinds (checked by their
        // magic numbers) do not overlap.
        let (h, into) = unsafe { (get(h)?, histogram::get_mut(into)?) };
        Ok(h.snapshot_into(into)?)
    })
}

/// Forgets every sample, in every shard; bins, shards and closure stay. Pushes racing with a reset may be
/// partly kept.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`.
///
/// # Safety
/// `h` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_reset(
    h: *mut tce_concurrent_histogram,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { get(h)? }.reset();
        Ok(())
    })
}

/// The number of bins B (of each shard, and of a snapshot).
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_bin_count(
    h: *const tce_concurrent_histogram,
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
pub unsafe extern "C" fn tce_concurrent_histogram_closure(
    h: *const tce_concurrent_histogram,
    out: *mut u32,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        out.write(h.closure() as u32);
        Ok(())
    })
}

/// The number of shards.
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_concurrent_histogram_shard_count(
    h: *const tce_concurrent_histogram,
    out: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        out.write(h.shard_count());
        Ok(())
    })
}
