//! `tce_decaying_histogram`: an equal-width histogram whose samples fade with a
//! half-life, for a model whose calibration drifts.

use core::ffi::c_void;

use super::boundary::ffi_boundary;
use super::raw::{array, array_mut, Out};
use super::state::{self, DecayKind, State};
use super::status::tce_status;
use super::types::{closure, norm, tce_estimate, write_estimate};
use crate::decay::DecayingHistogram;
use crate::estimate::BinSummary;

/// An equal-width histogram with exponential forgetting: a sample's weight halves every
/// `half_life` samples pushed after it. Not exact (weights are doubles); two merge as if
/// their streams had ended at the same moment (`tce_decaying_histogram_merge`). Opaque; lives in caller memory (`tce_decaying_histogram_layout`,
/// `tce_decaying_histogram_init`) or on the heap (`tce_decaying_histogram_new`, with
/// `std`).
pub struct tce_decaying_histogram {
    _opaque: [u8; 0],
}

/// The statistics of one bin of a decaying histogram, for reliability diagrams. Weights
/// are relative to the next sample's (which would add 1). An empty bin (`count` 0)
/// reports `mean_score`, `accuracy` and `effective_count` as NaN.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct tce_decayed_bin_stats {
    /// Lower edge k/B.
    pub lower: f64,
    /// Upper edge (k+1)/B.
    pub upper: f64,
    /// Samples pushed into the bin (not decayed).
    pub count: u64,
    /// The bin's decayed weight Σw.
    pub weight: f64,
    /// Weighted mean score; NaN if the bin is empty.
    pub mean_score: f64,
    /// Weighted accuracy; NaN if the bin is empty.
    pub accuracy: f64,
    /// Kish's effective sample size (Σw)²/Σw²; NaN if the bin is empty.
    pub effective_count: f64,
}

type DecayState = State<DecayingHistogram>;

/// # Safety
/// A valid handle or NULL.
pub(super) unsafe fn get<'a>(
    h: *const tce_decaying_histogram,
) -> Result<&'a DecayingHistogram, tce_status> {
    // SAFETY: forwarded contract.
    unsafe { state::get::<DecayKind>(h.cast()) }.map(|s: &DecayState| &s.view)
}

/// # Safety
/// A valid handle or NULL, not accessed elsewhere meanwhile.
pub(super) unsafe fn get_mut<'a>(
    h: *mut tce_decaying_histogram,
) -> Result<&'a mut DecayingHistogram, tce_status> {
    // SAFETY: forwarded contract.
    unsafe { state::get_mut::<DecayKind>(h.cast()) }.map(|s: &mut DecayState| &mut s.view)
}

/// Checks a half-life before anything is written or allocated, and returns its λ (the
/// core's one check: `crate::decay::retain_per_push`).
fn retain(half_life: f64) -> Result<f64, tce_status> {
    Ok(crate::decay::retain_per_push(half_life)?)
}

/// The size and alignment of caller memory for a decaying histogram of `bins` bins.
///
/// Errors: `ZERO_BINS`; `TOO_MANY_BINS` (above `TCE_MAX_BINS`); `CAPACITY_TOO_LARGE` if
/// the size overflows; `NULL_POINTER`, `MISALIGNED`.
///
/// # Safety
/// `size` and `align` must be NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_layout(
    bins: usize,
    size: *mut usize,
    align: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (size, align) = unsafe { (Out::new(size)?, Out::new(align)?) };
        let (s, a) = state::layout::<DecayKind>(bins)?;
        size.write(s);
        align.write(a);
        Ok(())
    })
}

/// Initialises an empty decaying histogram of `bins` bins closed as `closure` (a
/// `tce_closure` value), whose samples' weight halves every `half_life` samples, in
/// `memory[0..memory_len]` (at least the size and alignment of
/// `tce_decaying_histogram_layout`), and writes its handle to `*out`. The memory stays
/// the caller's; nothing to free.
///
/// The half-life must be at least 1/510 samples and at most about 1.25e16 samples
/// (precisely: 2^(−1/half_life) must be in [2^−510, 1)): shorter ones would make the
/// weights underflow, longer ones round λ to 1 (no decay).
///
/// Errors: `NULL_POINTER`, `ZERO_BINS`, `TOO_MANY_BINS`, `INVALID_ENUM`,
/// `INVALID_HALF_LIFE`, `MISALIGNED`, `BUFFER_TOO_SMALL`, `CAPACITY_TOO_LARGE`. On error
/// the memory is untouched.
///
/// # Safety
/// `memory` must be NULL or writable for `memory_len` bytes; `out` NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_init(
    memory: *mut c_void,
    memory_len: usize,
    bins: usize,
    closure: u32,
    half_life: f64,
    out: *mut *mut tce_decaying_histogram,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let closure = self::closure(closure)?;
        let retain = retain(half_life)?;
        // SAFETY: the caller's contract on `memory`.
        let state = unsafe { state::init::<DecayKind>(memory.cast(), memory_len, bins, false)? };
        state.view.reinitialise(closure, half_life, retain);
        out.write(memory.cast());
        Ok(())
    })
}

/// Allocates an empty decaying histogram on the heap (arguments as
/// `tce_decaying_histogram_init`); release it with `tce_decaying_histogram_free`. Only
/// in builds with the `std` feature.
///
/// Errors: `NULL_POINTER`, `ZERO_BINS`, `TOO_MANY_BINS`, `INVALID_ENUM`,
/// `INVALID_HALF_LIFE`, `CAPACITY_TOO_LARGE`, `ALLOCATION_FAILED`. Every argument is
/// checked before allocating; on error nothing stays allocated.
///
/// # Safety
/// `out` must be NULL or valid for a write.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_new(
    bins: usize,
    closure: u32,
    half_life: f64,
    out: *mut *mut tce_decaying_histogram,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let closure = self::closure(closure)?;
        let retain = retain(half_life)?;
        let state = state::allocate::<DecayKind>(bins)?;
        state.view.reinitialise(closure, half_life, retain);
        out.write((state as *mut DecayState).cast());
        Ok(())
    })
}

/// Releases a decaying histogram from `tce_decaying_histogram_new`. NULL is a no-op, and
/// so is one in caller memory or a handle of another kind. Only in builds with the `std`
/// feature.
///
/// # Safety
/// `h` must be NULL or a valid handle, not used afterwards (a double free is undefined).
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_free(h: *mut tce_decaying_histogram) {
    let _ = ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { state::release::<DecayKind>(h.cast()) };
        Ok(())
    });
}

/// Records one sample.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`,
/// `INVALID_LABEL`, `COUNT_OVERFLOW` (the histogram already counts `TCE_MAX_COUNT`
/// samples); nothing is recorded then.
///
/// # Safety
/// `h` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_push(
    h: *mut tce_decaying_histogram,
    score: f64,
    label: u8,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        Ok(unsafe { get_mut(h)? }.push(score, label)?)
    })
}

/// Records a batch in order: all of it, or (a bad element) none of it.
///
/// Errors: as `tce_decaying_histogram_push`, and `LENGTH_MISMATCH`, `MISALIGNED`.
///
/// # Safety
/// `h` NULL or a valid handle; `scores` / `labels` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_push_batch(
    h: *mut tce_decaying_histogram,
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

/// Merges `other` into `h` as if both streams had ended at the same moment: every sample
/// keeps its weight relative to its own stream's next sample, and the bins' weights and
/// counts add (the side stored on the smaller scale is rescaled once, rounded; the merge
/// is commutative bit for bit). `h` keeps its half-life. `other` is not changed.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `BIN_COUNT_MISMATCH`, `CLOSURE_MISMATCH`,
/// `HALF_LIFE_MISMATCH` (a different decay per push 2^(−1/half_life)), `SAME_STATE`
/// (`h == other`), `COUNT_OVERFLOW` (the two together count more than `TCE_MAX_COUNT`
/// samples); nothing changes then.
///
/// # Safety
/// `h` and `other` NULL or valid handles of states that do not overlap.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_merge(
    h: *mut tce_decaying_histogram,
    other: *const tce_decaying_histogram,
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

/// Forgets every sample; bins, closure and half-life stay.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`.
///
/// # Safety
/// `h` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_reset(
    h: *mut tce_decaying_histogram,
) -> tce_status {
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
pub unsafe extern "C" fn tce_decaying_histogram_bin_count(
    h: *const tce_decaying_histogram,
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
pub unsafe extern "C" fn tce_decaying_histogram_closure(
    h: *const tce_decaying_histogram,
    out: *mut u32,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        out.write(h.closure() as u32);
        Ok(())
    })
}

/// The half-life in samples, as given to init or new. After a decode it is this
/// histogram's own half-life if the frame has the same λ, else −1/log2 λ (the frame
/// carries λ only).
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_half_life(
    h: *const tce_decaying_histogram,
    out: *mut f64,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        out.write(h.half_life());
        Ok(())
    })
}

/// The number of samples pushed since initialisation or the last reset (not decayed;
/// the estimates report it as `samples`).
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_samples(
    h: *const tce_decaying_histogram,
    out: *mut u64,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        out.write(h.samples());
        Ok(())
    })
}

/// ECE_bin with every sample weighted by its decay, norm exponent `p`.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `INVALID_NORM`, `NO_SAMPLES`,
/// `DEGENERATE_WEIGHTS` (no finite estimate: not reachable from valid pushes or frames).
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_ece_bin(
    h: *const tce_decaying_histogram,
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

/// The maximum calibration error over the non-empty bins.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `NO_SAMPLES`, `DEGENERATE_WEIGHTS`.
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_mce(
    h: *const tce_decaying_histogram,
    out: *mut tce_estimate,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (get(h)?, Out::new(out)?) };
        write_estimate(out, h.mce()?);
        Ok(())
    })
}

/// ECE_debias with Kish's effective sample size per bin, norm exponent `p`.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `INVALID_NORM`, `NO_SAMPLES`,
/// `DEGENERATE_WEIGHTS` (no finite estimate: not reachable from valid pushes or frames).
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_ece_debias(
    h: *const tce_decaying_histogram,
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

/// Writes the statistics of every bin, bin 0 first, to `out[0..B]`.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`, `BUFFER_TOO_SMALL` (`out_len`
/// below the bin count: nothing written).
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or writable for `out_len` elements.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_bin_stats(
    h: *const tce_decaying_histogram,
    out: *mut tce_decayed_bin_stats,
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
        for (k, (slot, bin)) in (0..bins.len()).zip(out.iter_mut().zip(bins)) {
            let (lower, upper) = h.edges(k);
            let empty = bin.count() == 0;
            let or_nan = |value: f64| if empty { f64::NAN } else { value };
            *slot = tce_decayed_bin_stats {
                lower,
                upper,
                count: bin.count(),
                weight: BinSummary::weight(bin),
                mean_score: or_nan(bin.mean_score()),
                accuracy: or_nan(bin.accuracy()),
                effective_count: or_nan(bin.effective_count()),
            };
        }
        Ok(())
    })
}
