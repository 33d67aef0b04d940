//! `tce_reservoir`: a uniform random sample of fixed size over an unbounded stream, with
//! every estimator of the sorted buffer, mergeable across streams.

use core::ffi::c_void;

use super::boundary::{ffi_boundary, Outcome};
use super::raw::{array, Out};
use super::sorted::{self, Estimator};
use super::state::{self, Detached, ReservoirKind, State};
use super::status::tce_status;
use super::types::{tce_bin_stats, tce_estimate, tce_options};
use crate::buffer::Slot;
use crate::reservoir::Reservoir;

/// A reservoir: a uniform random sample of at most `capacity` of the samples pushed
/// (Vitter's Algorithm R), seeded so that runs repeat. Opaque; lives in caller memory
/// (`tce_reservoir_layout`, `tce_reservoir_init`) or on the heap (`tce_reservoir_new`,
/// with `std`).
pub struct tce_reservoir {
    _opaque: [u8; 0],
}

/// The reservoir's bookkeeping, stored after the header; the slots follow it.
type Core = Reservoir<Detached>;

/// The first of the slots after the checked reservoir state at `handle` (as many as its
/// capacity).
///
/// # Safety
/// `handle` holds a checked reservoir state, and has provenance over all of it.
unsafe fn storage(handle: *const u8) -> *mut Slot {
    // SAFETY: the state is followed by its slots (`layout::<ReservoirKind>`), aligned
    // (asserted in `state.rs`).
    unsafe { state::detached_storage::<ReservoirKind>(handle).cast() }
}

/// Runs `f` on the reservoir behind a mutable handle, then, if it succeeded, stores its
/// bookkeeping back.
///
/// # Safety
/// `r` NULL or a valid handle, not accessed elsewhere meanwhile.
pub(super) unsafe fn with_mut<T>(
    r: *mut tce_reservoir,
    f: impl FnOnce(&mut Reservoir<&mut [Slot]>) -> Result<T, tce_status>,
) -> Result<T, tce_status> {
    let handle = r.cast::<u8>();
    // SAFETY: the caller's contract.
    let state = unsafe { state::get_mut::<ReservoirKind>(handle)? };
    let len = state.len();
    // SAFETY: `state` was checked at `handle`; the slots are disjoint from the header
    // and view that `state` borrows, zeroed at initialisation (valid values), and
    // exclusive (the caller's contract).
    let slots = unsafe { core::slice::from_raw_parts_mut(storage(handle), len) };
    let mut reservoir = state.view.clone().with_storage_of(slots);
    let result = f(&mut reservoir);
    // Stored back only on success: a failed call changed nothing (the core's rule), and
    // assigning the whole bookkeeping, which has padding, would overwrite the caller's
    // padding bytes with whatever the copy held (stack contents). On error the caller's
    // memory stays byte for byte as it was.
    if result.is_ok() {
        state.view = reservoir.with_storage_of(Detached);
    }
    result
}

/// Runs `f` on the reservoir behind a `const` handle.
///
/// # Safety
/// `r` NULL or a valid handle that nothing writes to meanwhile.
pub(super) unsafe fn with_ref<T>(
    r: *const tce_reservoir,
    f: impl FnOnce(&Reservoir<&[Slot]>) -> T,
) -> Result<T, tce_status> {
    let handle = r.cast::<u8>();
    // SAFETY: the caller's contract.
    let state = unsafe { state::get::<ReservoirKind>(handle)? };
    let len = state.len();
    // SAFETY: as in `with_mut`, shared: nothing writes meanwhile (the caller's contract).
    let slots = unsafe { core::slice::from_raw_parts(storage(handle).cast_const(), len) };
    Ok(f(&state.view.clone().with_storage_of(slots)))
}

/// # Safety
/// `r` NULL or a valid handle, not accessed elsewhere meanwhile.
unsafe fn with_samples(r: *mut tce_reservoir, f: sorted::UseSamples<'_>) -> Outcome {
    // SAFETY: forwarded contract.
    unsafe { with_mut(r, |reservoir| f(reservoir.samples())) }
}

/// The size and alignment of caller memory for a reservoir of `capacity` samples (about
/// 16 bytes a sample).
///
/// Errors: `ZERO_CAPACITY`; `CAPACITY_TOO_LARGE` (above 2^31 − 1 samples, or the size
/// overflows); `NULL_POINTER`, `MISALIGNED`.
///
/// # Safety
/// `size` and `align` must be NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_layout(
    capacity: usize,
    size: *mut usize,
    align: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (size, align) = unsafe { (Out::new(size)?, Out::new(align)?) };
        let (s, a) = state::layout::<ReservoirKind>(capacity)?;
        size.write(s);
        align.write(a);
        Ok(())
    })
}

/// Lays an empty reservoir over an initialised state at `handle`.
///
/// # Safety
/// `handle` holds the initialised reservoir state `state` of `capacity` units, which the
/// caller owns.
unsafe fn fresh(handle: *const u8, state: &mut State<Core>, capacity: usize, seed: u64) -> Outcome {
    // SAFETY: the caller's contract; disjoint from `state`'s header and view.
    let slots = unsafe { core::slice::from_raw_parts_mut(storage(handle), capacity) };
    state.view = Reservoir::with_storage(slots, seed)?.with_storage_of(Detached);
    Ok(())
}

/// Initialises an empty reservoir of `capacity` samples in `memory[0..memory_len]` (at
/// least the size and alignment of `tce_reservoir_layout`), whose random choices are
/// seeded with `seed`, and writes its handle to `*out`. The memory stays the caller's:
/// it must outlive the handle; nothing to free.
///
/// Errors: `NULL_POINTER`, `ZERO_CAPACITY`, `CAPACITY_TOO_LARGE`, `MISALIGNED`,
/// `BUFFER_TOO_SMALL`. On error the memory is untouched.
///
/// # Safety
/// `memory` must be NULL or writable for `memory_len` bytes; `out` NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_init(
    memory: *mut c_void,
    memory_len: usize,
    capacity: usize,
    seed: u64,
    out: *mut *mut tce_reservoir,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let handle = memory.cast::<u8>();
        // SAFETY: the caller's contract.
        let state = unsafe { state::init::<ReservoirKind>(handle, memory_len, capacity, false)? };
        // SAFETY: just initialised at `handle`, the caller's memory.
        unsafe { fresh(handle, state, capacity, seed)? };
        out.write(memory.cast());
        Ok(())
    })
}

/// Allocates an empty reservoir of `capacity` samples, seeded with `seed`, on the heap;
/// release it with `tce_reservoir_free`. Only in builds with the `std` feature.
///
/// Errors: `NULL_POINTER`, `ZERO_CAPACITY`, `CAPACITY_TOO_LARGE`, `ALLOCATION_FAILED`.
///
/// # Safety
/// `out` must be NULL or valid for a write.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_new(
    capacity: usize,
    seed: u64,
    out: *mut *mut tce_reservoir,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let state = state::allocate::<ReservoirKind>(capacity)?;
        let handle = (state as *mut State<Core>).cast::<u8>();
        // SAFETY: freshly allocated and initialised at `handle`, with its whole layout.
        let setup = unsafe { state::get_mut::<ReservoirKind>(handle) }.and_then(|state| {
            // SAFETY: as above; ours.
            unsafe { fresh(handle, state, capacity, seed) }
        });
        // SAFETY: allocated above, ours.
        unsafe { state::release_on_error::<ReservoirKind, _>(handle, setup)? };
        out.write(handle.cast());
        Ok(())
    })
}

/// Releases a reservoir from `tce_reservoir_new`. NULL is a no-op, and so is a reservoir
/// in caller memory or a handle of another kind. Only in builds with the `std` feature.
///
/// # Safety
/// `r` must be NULL or a valid handle, not used afterwards (a double free is undefined).
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_free(r: *mut tce_reservoir) {
    let _ = ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { state::release::<ReservoirKind>(r.cast()) };
        Ok(())
    });
}

/// Offers one sample: kept with probability capacity / seen, replacing a uniformly
/// chosen held one.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`,
/// `INVALID_LABEL`, `COUNT_OVERFLOW` (`seen` would pass `TCE_MAX_COUNT`); nothing
/// changes then.
///
/// # Safety
/// `r` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_push(
    r: *mut tce_reservoir,
    score: f64,
    label: u8,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { with_mut(r, |reservoir| Ok(reservoir.push(score, label)?)) }
    })
}

/// Offers a batch in order: all of it, or (a bad element) none of it.
///
/// Errors: as `tce_reservoir_push`, and `LENGTH_MISMATCH`, `MISALIGNED`.
///
/// # Safety
/// `r` NULL or a valid handle; `scores` / `labels` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_push_batch(
    r: *mut tce_reservoir,
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (scores, labels) = unsafe { (array(scores, scores_len)?, array(labels, labels_len)?) };
        // SAFETY: the caller's contract.
        unsafe { with_mut(r, |reservoir| Ok(reservoir.push_batch(scores, labels)?)) }
    })
}

/// Merges `other` into `r`: afterwards `r` is a uniform sample of both streams and its
/// `seen` their sum (uses `r`'s random state). `other` is not changed.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `CAPACITY_MISMATCH` (reservoirs merge only at
/// equal capacity), `SAME_STATE`, `COUNT_OVERFLOW` (the summed `seen` would pass
/// `TCE_MAX_COUNT`); nothing changes then.
///
/// # Safety
/// `r` and `other` NULL or valid handles of states that do not overlap.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_merge(
    r: *mut tce_reservoir,
    other: *const tce_reservoir,
) -> tce_status {
    ffi_boundary!({
        if !r.is_null() && core::ptr::eq(r, other) {
            // SAFETY: the caller's contract (checks the kind for a precise status).
            unsafe { with_ref(other, |_| ())? };
            return Err(tce_status::SameState);
        }
        // SAFETY: the caller's contract; distinct, non-overlapping states.
        unsafe {
            with_ref(other, |other| {
                with_mut(r, |reservoir| Ok(reservoir.merge(other)?))
            })?
        }
    })
}

/// Forgets every sample (the random state goes on); the capacity stays.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`.
///
/// # Safety
/// `r` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_clear(r: *mut tce_reservoir) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe {
            with_mut(r, |reservoir| {
                reservoir.clear();
                Ok(())
            })
        }
    })
}

/// The number of samples held: min(capacity, seen).
///
/// # Safety
/// `r` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_len(r: *const tce_reservoir, out: *mut usize) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: the caller's contract.
        out.write(unsafe { with_ref(r, |reservoir| reservoir.len())? });
        Ok(())
    })
}

/// The most samples the reservoir holds.
///
/// # Safety
/// `r` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_capacity(
    r: *const tce_reservoir,
    out: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: the caller's contract.
        out.write(unsafe { with_ref(r, |reservoir| reservoir.capacity())? });
        Ok(())
    })
}

/// The number of samples offered since initialisation or the last clear (merged ones
/// included): what the held samples represent.
///
/// # Safety
/// `r` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_seen(r: *const tce_reservoir, out: *mut u64) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: the caller's contract.
        out.write(unsafe { with_ref(r, |reservoir| reservoir.seen())? });
        Ok(())
    })
}

/// ECE_bin of the held samples, as `tce_sorted_buffer_ece_bin` (`out->samples` is the
/// number held, not the number seen).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_STATE`, `INVALID_ENUM`, `INVALID_NORM`,
/// `ZERO_BINS`, `NO_SAMPLES`.
///
/// # Safety
/// `r` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_ece_bin(
    r: *mut tce_reservoir,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::estimate(Estimator::EceBin, r, with_samples, options, out) }
}

/// The maximum calibration error of the held samples, as `tce_sorted_buffer_mce`.
///
/// Errors: as `tce_reservoir_ece_bin`.
///
/// # Safety
/// `r` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_mce(
    r: *mut tce_reservoir,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::estimate(Estimator::Mce, r, with_samples, options, out) }
}

/// ECE_debias of the held samples, as `tce_sorted_buffer_ece_debias`.
///
/// Errors: as `tce_reservoir_ece_bin`.
///
/// # Safety
/// `r` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_ece_debias(
    r: *mut tce_reservoir,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::estimate(Estimator::EceDebias, r, with_samples, options, out) }
}

/// ECE_sweep of the held samples, as `tce_sorted_buffer_ece_sweep` (`out->bins` is b*).
///
/// Errors: as `tce_reservoir_ece_bin`.
///
/// # Safety
/// `r` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_ece_sweep(
    r: *mut tce_reservoir,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::estimate(Estimator::EceSweep, r, with_samples, options, out) }
}

/// The statistics of the `options->bins` bins of `options->binning` over the held
/// samples, as `tce_sorted_buffer_bin_stats`.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_STATE`, `INVALID_ENUM`, `INVALID_NORM`,
/// `ZERO_BINS`, `BUFFER_TOO_SMALL` (`out_len` below `options->bins`: nothing written).
///
/// # Safety
/// `r` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable for
/// `out_len` elements.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_bin_stats(
    r: *mut tce_reservoir,
    options: *const tce_options,
    out: *mut tce_bin_stats,
    out_len: usize,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::bin_stats(r, with_samples, options, out, out_len) }
}
