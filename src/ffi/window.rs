//! `tce_window`: the sliding window, the most recent N samples kept sorted, with every
//! estimator of the sorted buffer.

use core::ffi::c_void;
use core::mem::size_of;

use super::boundary::{ffi_boundary, Outcome};
use super::raw::{array, Out};
use super::sorted::{self, Estimator};
use super::state::{self, Detached, State, WindowKind};
use super::status::tce_status;
use super::types::{tce_bin_stats, tce_estimate, tce_options};
use crate::buffer::Slot;
use crate::window::SlidingWindow;

/// A sliding window over the last N samples of a stream (a push into a full window
/// evicts the oldest), sorted for equal-mass bins and the sweep. Opaque; lives in caller
/// memory (`tce_window_layout`, `tce_window_init`) or on the heap (`tce_window_new`,
/// with `std`).
pub struct tce_window {
    _opaque: [u8; 0],
}

/// The window's bookkeeping, stored after the header; slots and ring follow it.
type Core = SlidingWindow<Detached, Detached>;

/// The storage after the checked window state at `handle` with `len` units: `len`
/// slots, then a ring of `len` scores.
///
/// # Safety
/// `handle` holds a checked window state of `len` units, and has provenance over all of
/// it.
unsafe fn storage(handle: *const u8, len: usize) -> (*mut Slot, *mut f64) {
    // SAFETY: the state is followed by `len` slots and then `len` f64
    // (`layout::<WindowKind>`), aligned for both (asserted in `state.rs`).
    unsafe {
        let base = state::detached_storage::<WindowKind>(handle);
        // The product cannot wrap: `layout::<WindowKind>` computed it (checked) when the
        // state was made, and `len` is the state's checked size.
        (
            base.cast(),
            base.add(len.wrapping_mul(size_of::<Slot>())).cast(),
        )
    }
}

/// The storage of the checked window state at `handle` with `len` units, writable.
///
/// # Safety
/// As [`storage`], and nothing else accesses the state for `'a`.
unsafe fn storage_mut<'a>(handle: *const u8, len: usize) -> (&'a mut [Slot], &'a mut [f64]) {
    // SAFETY: the caller's contract; the storage is disjoint from the header and view
    // (which the caller may borrow), zeroed at initialisation (valid values).
    unsafe {
        let (slots, ring) = storage(handle, len);
        (
            core::slice::from_raw_parts_mut(slots, len),
            core::slice::from_raw_parts_mut(ring, len),
        )
    }
}

/// Runs `f` on the window behind a mutable handle, then, if it succeeded, stores its
/// bookkeeping back.
///
/// # Safety
/// `w` NULL or a valid handle, not accessed elsewhere meanwhile.
pub(super) unsafe fn with_mut<T>(
    w: *mut tce_window,
    f: impl FnOnce(&mut SlidingWindow<&mut [Slot], &mut [f64]>) -> Result<T, tce_status>,
) -> Result<T, tce_status> {
    let handle = w.cast::<u8>();
    // SAFETY: the caller's contract.
    let state = unsafe { state::get_mut::<WindowKind>(handle)? };
    // SAFETY: `state` was checked at `handle`; exclusive (the caller's contract).
    let (slots, ring) = unsafe { storage_mut(handle, state.len()) };
    let mut window = state.view.clone().with_storage_of(slots, ring);
    let result = f(&mut window);
    // Stored back only on success: a failed call changed nothing (the core's rule), and
    // assigning the whole bookkeeping, which has padding, would overwrite the caller's
    // padding bytes with whatever the copy held (stack contents). On error the caller's
    // memory stays byte for byte as it was.
    if result.is_ok() {
        state.view = window.with_storage_of(Detached, Detached);
    }
    result
}

/// Runs `f` on the window behind a `const` handle.
///
/// # Safety
/// `w` NULL or a valid handle that nothing writes to meanwhile.
pub(super) unsafe fn with_ref<T>(
    w: *const tce_window,
    f: impl FnOnce(&SlidingWindow<&[Slot], &[f64]>) -> T,
) -> Result<T, tce_status> {
    let handle = w.cast::<u8>();
    // SAFETY: the caller's contract.
    let state = unsafe { state::get::<WindowKind>(handle)? };
    let len = state.len();
    // SAFETY: `state` was checked at `handle`, and nothing writes to it meanwhile (the
    // caller's contract).
    let (slots, ring) = unsafe {
        let (slots, ring) = storage(handle, len);
        (
            core::slice::from_raw_parts(slots.cast_const(), len),
            core::slice::from_raw_parts(ring.cast_const(), len),
        )
    };
    Ok(f(&state.view.clone().with_storage_of(slots, ring)))
}

/// # Safety
/// `w` NULL or a valid handle, not accessed elsewhere meanwhile.
unsafe fn with_samples(w: *mut tce_window, f: sorted::UseSamples<'_>) -> Outcome {
    // SAFETY: forwarded contract.
    unsafe { with_mut(w, |window| f(window.samples())) }
}

/// The size and alignment of caller memory for a window of `capacity` samples (about
/// 24 bytes a sample).
///
/// Errors: `ZERO_CAPACITY`; `CAPACITY_TOO_LARGE` (above 2^30 − 1 samples, or the size
/// overflows); `NULL_POINTER`, `MISALIGNED`.
///
/// # Safety
/// `size` and `align` must be NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tce_window_layout(
    capacity: usize,
    size: *mut usize,
    align: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (size, align) = unsafe { (Out::new(size)?, Out::new(align)?) };
        let (s, a) = state::layout::<WindowKind>(capacity)?;
        size.write(s);
        align.write(a);
        Ok(())
    })
}

/// Lays an empty window of `capacity` samples over an initialised state.
fn fresh(state: &mut State<Core>, slots: &mut [Slot], ring: &mut [f64]) -> Outcome {
    state.view = SlidingWindow::with_storage(slots, ring)?.with_storage_of(Detached, Detached);
    Ok(())
}

/// Initialises an empty window of `capacity` samples in `memory[0..memory_len]` (at
/// least the size and alignment of `tce_window_layout`) and writes its handle to `*out`.
/// The memory stays the caller's: it must outlive the handle; nothing to free.
///
/// Errors: `NULL_POINTER`, `ZERO_CAPACITY`, `CAPACITY_TOO_LARGE`, `MISALIGNED`,
/// `BUFFER_TOO_SMALL`. On error the memory is untouched.
///
/// # Safety
/// `memory` must be NULL or writable for `memory_len` bytes; `out` NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn tce_window_init(
    memory: *mut c_void,
    memory_len: usize,
    capacity: usize,
    out: *mut *mut tce_window,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let handle = memory.cast::<u8>();
        // SAFETY: the caller's contract.
        let state = unsafe { state::init::<WindowKind>(handle, memory_len, capacity, false)? };
        // SAFETY: `state` was just initialised at `handle`, which is the caller's.
        let (slots, ring) = unsafe { storage_mut(handle, capacity) };
        fresh(state, slots, ring)?;
        out.write(memory.cast());
        Ok(())
    })
}

/// Allocates an empty window of `capacity` samples on the heap; release it with
/// `tce_window_free`. Only in builds with the `std` feature.
///
/// Errors: `NULL_POINTER`, `ZERO_CAPACITY`, `CAPACITY_TOO_LARGE`, `ALLOCATION_FAILED`.
///
/// # Safety
/// `out` must be NULL or valid for a write.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_window_new(capacity: usize, out: *mut *mut tce_window) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let state = state::allocate::<WindowKind>(capacity)?;
        let handle = (state as *mut State<Core>).cast::<u8>();
        // SAFETY: freshly allocated and initialised at `handle`, with its whole layout.
        let setup = unsafe { state::get_mut::<WindowKind>(handle) }.and_then(|state| {
            // SAFETY: as above.
            let (slots, ring) = unsafe { storage_mut(handle, capacity) };
            fresh(state, slots, ring)
        });
        // SAFETY: allocated above, ours.
        unsafe { state::release_on_error::<WindowKind, _>(handle, setup)? };
        out.write(handle.cast());
        Ok(())
    })
}

/// Releases a window from `tce_window_new`. NULL is a no-op, and so is a window in
/// caller memory or a handle of another kind. Only in builds with the `std` feature.
///
/// # Safety
/// `w` must be NULL or a valid handle, not used afterwards (a double free is undefined).
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_window_free(w: *mut tce_window) {
    let _ = ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { state::release::<WindowKind>(w.cast()) };
        Ok(())
    });
}

/// Records one sample; a full window evicts its oldest.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`,
/// `INVALID_LABEL`, `COUNT_OVERFLOW` (`seen` would pass `TCE_MAX_COUNT`); nothing
/// changes then.
///
/// # Safety
/// `w` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_window_push(w: *mut tce_window, score: f64, label: u8) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { with_mut(w, |window| Ok(window.push(score, label)?)) }
    })
}

/// Records a batch in order: all of it, or (a bad element) none of it. A batch longer
/// than the window leaves its last N samples.
///
/// Errors: as `tce_window_push`, and `LENGTH_MISMATCH`, `MISALIGNED`.
///
/// # Safety
/// `w` NULL or a valid handle; `scores` / `labels` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn tce_window_push_batch(
    w: *mut tce_window,
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (scores, labels) = unsafe { (array(scores, scores_len)?, array(labels, labels_len)?) };
        // SAFETY: the caller's contract.
        unsafe { with_mut(w, |window| Ok(window.push_batch(scores, labels)?)) }
    })
}

/// Merges `other` into `w`: afterwards `w` is exactly as if `other`'s held samples had
/// been pushed into it, oldest first (so it holds the most recent N of `w`'s samples
/// followed by `other`'s, with N `w`'s size, and its `seen` grows by `other`'s length;
/// what `other` had already evicted is not merged). The sizes may differ. `other` is not
/// changed. O(N + M), no allocation.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `SAME_STATE` (`w == other`), `COUNT_OVERFLOW`
/// (`seen` would pass `TCE_MAX_COUNT`); nothing changes then.
///
/// # Safety
/// `w` and `other` NULL or valid handles of states that do not overlap.
#[no_mangle]
pub unsafe extern "C" fn tce_window_merge(
    w: *mut tce_window,
    other: *const tce_window,
) -> tce_status {
    ffi_boundary!({
        if !w.is_null() && core::ptr::eq(w, other) {
            // SAFETY: the caller's contract (checks the kind for a precise status).
            unsafe { with_ref(other, |_| ())? };
            return Err(tce_status::SameState);
        }
        // SAFETY: the caller's contract; distinct, non-overlapping states.
        unsafe {
            with_ref(other, |other| {
                with_mut(w, |window| Ok(window.merge(other)?))
            })?
        }
    })
}

/// Forgets every sample; the capacity stays.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`.
///
/// # Safety
/// `w` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_window_clear(w: *mut tce_window) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe {
            with_mut(w, |window| {
                window.clear();
                Ok(())
            })
        }
    })
}

/// The number of samples held (at most the capacity).
///
/// # Safety
/// `w` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_window_len(w: *const tce_window, out: *mut usize) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: the caller's contract.
        out.write(unsafe { with_ref(w, |window| window.len())? });
        Ok(())
    })
}

/// The window's size N.
///
/// # Safety
/// `w` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_window_capacity(w: *const tce_window, out: *mut usize) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: the caller's contract.
        out.write(unsafe { with_ref(w, |window| window.capacity())? });
        Ok(())
    })
}

/// The number of samples pushed since initialisation or the last clear, evicted ones
/// included.
///
/// # Safety
/// `w` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_window_seen(w: *const tce_window, out: *mut u64) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: the caller's contract.
        out.write(unsafe { with_ref(w, |window| window.seen())? });
        Ok(())
    })
}

/// The number of hits (label 1) in the window.
///
/// # Safety
/// `w` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_window_hits(w: *const tce_window, out: *mut u64) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: the caller's contract.
        out.write(unsafe { with_ref(w, |window| window.hits())? });
        Ok(())
    })
}

/// ECE_bin of the window's samples, as `tce_sorted_buffer_ece_bin` (the estimators take
/// a mutable handle: they refresh the running hit counts after pushes).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_STATE`, `INVALID_ENUM`, `INVALID_NORM`,
/// `ZERO_BINS`, `NO_SAMPLES`.
///
/// # Safety
/// `w` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_window_ece_bin(
    w: *mut tce_window,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::estimate(Estimator::EceBin, w, with_samples, options, out) }
}

/// The maximum calibration error of the window's samples, as `tce_sorted_buffer_mce`.
///
/// Errors: as `tce_window_ece_bin`.
///
/// # Safety
/// `w` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_window_mce(
    w: *mut tce_window,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::estimate(Estimator::Mce, w, with_samples, options, out) }
}

/// ECE_debias of the window's samples, as `tce_sorted_buffer_ece_debias`.
///
/// Errors: as `tce_window_ece_bin`.
///
/// # Safety
/// `w` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_window_ece_debias(
    w: *mut tce_window,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::estimate(Estimator::EceDebias, w, with_samples, options, out) }
}

/// ECE_sweep of the window's samples, as `tce_sorted_buffer_ece_sweep` (`out->bins` is
/// b*).
///
/// Errors: as `tce_window_ece_bin`.
///
/// # Safety
/// `w` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_window_ece_sweep(
    w: *mut tce_window,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::estimate(Estimator::EceSweep, w, with_samples, options, out) }
}

/// The statistics of the `options->bins` bins of `options->binning` over the window's
/// samples, as `tce_sorted_buffer_bin_stats`.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_STATE`, `INVALID_ENUM`, `INVALID_NORM`,
/// `ZERO_BINS`, `BUFFER_TOO_SMALL` (`out_len` below `options->bins`: nothing written).
///
/// # Safety
/// `w` NULL or a valid handle; `options` NULL or readable; `out` NULL or writable for
/// `out_len` elements.
#[no_mangle]
pub unsafe extern "C" fn tce_window_bin_stats(
    w: *mut tce_window,
    options: *const tce_options,
    out: *mut tce_bin_stats,
    out_len: usize,
) -> tce_status {
    // SAFETY: forwarded contract.
    unsafe { sorted::bin_stats(w, with_samples, options, out, out_len) }
}
