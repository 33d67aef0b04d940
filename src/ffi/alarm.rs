//! `tce_alarm`: a sequential alarm for miscalibration with a stated false-alarm rate
//! (per-bin two-sided Bernoulli CUSUMs; the rates and their inverses as plain functions).

use core::ffi::c_void;

use super::boundary::ffi_boundary;
use super::raw::{array, array_mut, Out};
use super::state::{self, AlarmKind, State};
use super::status::tce_status;
use super::types::closure;
use crate::alarm::{self, CalibrationAlarm};

/// A calibration alarm: per equal-width bin, two CUSUMs of the log-likelihood ratio of
/// calibration against odds times e^shift (accuracy above the confidence) and e^−shift
/// (below it); raised when one reaches the threshold h, until `tce_alarm_reset`. On a
/// calibrated stream the mean number of samples from a reset to a false alarm (ARL0) is
/// at least e^h/2 (`tce_alarm_guaranteed_arl0`), and about (e^h − h − 1)/(2·I)
/// (`tce_alarm_approximate_arl0`) for scores of mean information I per sample
/// (`tce_alarm_information`); docs/monitoring.md measures both. Alarms do not merge (a
/// CUSUM depends on the order of its samples). Opaque; lives in caller memory
/// (`tce_alarm_layout`, `tce_alarm_init`) or on the heap (`tce_alarm_new`, with `std`).
pub struct tce_alarm {
    _opaque: [u8; 0],
}

/// What an alarm reports (`tce_alarm_read`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct tce_alarm_report {
    /// The largest of the 2B CUSUMs (0 before any sample).
    pub statistic: f64,
    /// The threshold h.
    pub threshold: f64,
    /// The shift in log-odds the CUSUMs test for.
    pub shift: f64,
    /// 1 if the statistic has reached the threshold since the last reset, else 0.
    pub alarm: u8,
    /// The sample since the reset (1 for the first) at which the alarm went off; 0 if it
    /// has not.
    pub alarm_at: u64,
    /// Samples since initialisation or the last reset.
    pub samples: u64,
    /// The mean information per sample of the scores since the reset (NaN before any).
    pub mean_information: f64,
    /// The guaranteed lower bound on ARL0, e^h/2 samples.
    pub guaranteed_arl0: f64,
    /// The approximate ARL0 on the scores since the reset, (e^h − h − 1)/(2·I) samples
    /// (NaN before any sample, infinite if all were 0 or 1).
    pub approximate_arl0: f64,
}

type AlarmState = State<CalibrationAlarm>;

/// # Safety
/// A valid handle or NULL.
unsafe fn get<'a>(a: *const tce_alarm) -> Result<&'a CalibrationAlarm, tce_status> {
    // SAFETY: forwarded contract.
    unsafe { state::get::<AlarmKind>(a.cast()) }.map(|s: &AlarmState| &s.view)
}

/// # Safety
/// A valid handle or NULL, not accessed elsewhere meanwhile.
unsafe fn get_mut<'a>(a: *mut tce_alarm) -> Result<&'a mut CalibrationAlarm, tce_status> {
    // SAFETY: forwarded contract.
    unsafe { state::get_mut::<AlarmKind>(a.cast()) }.map(|s: &mut AlarmState| &mut s.view)
}

/// The checks of `tce_alarm_init` and `tce_alarm_new` other than the memory's.
fn settings(shift: f64, threshold: f64) -> Result<(), tce_status> {
    alarm::check_shift(shift)?;
    Ok(alarm::check_threshold(threshold)?)
}

/// The size and alignment of caller memory for an alarm of `bins` bins (24 bytes a bin
/// and a header).
///
/// Errors: `ZERO_BINS`; `TOO_MANY_BINS` (above `TCE_MAX_BINS`); `NULL_POINTER`.
///
/// # Safety
/// `size` and `align` must be NULL or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_layout(
    bins: usize,
    size: *mut usize,
    align: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (size, align) = unsafe { (Out::new(size)?, Out::new(align)?) };
        let (s, a) = state::layout::<AlarmKind>(bins)?;
        size.write(s);
        align.write(a);
        Ok(())
    })
}

/// Initialises an empty alarm of `bins` bins closed as `closure` (a `tce_closure`
/// value), testing for a log-odds shift of `shift` (in (0, 10]; ln 2 ≈ 0.693 tests for
/// doubled or halved odds) and raised at `threshold` (in (0, 700]; from a target ARL0
/// with `tce_alarm_threshold_for_arl0`), in `memory[0..memory_len]` (at least the size
/// and alignment of `tce_alarm_layout`), and writes its handle to `*out`. The memory
/// stays the caller's; nothing to free.
///
/// Errors: `NULL_POINTER`, `ZERO_BINS`, `TOO_MANY_BINS`, `INVALID_ENUM`,
/// `INVALID_SHIFT`, `INVALID_THRESHOLD`, `MISALIGNED`, `BUFFER_TOO_SMALL`,
/// `CAPACITY_TOO_LARGE`. On error the memory is untouched.
///
/// # Safety
/// `memory` must be NULL or writable for `memory_len` bytes; `out` NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_init(
    memory: *mut c_void,
    memory_len: usize,
    bins: usize,
    closure: u32,
    shift: f64,
    threshold: f64,
    out: *mut *mut tce_alarm,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let closure = self::closure(closure)?;
        settings(shift, threshold)?;
        // SAFETY: the caller's contract on `memory`.
        let state = unsafe { state::init::<AlarmKind>(memory.cast(), memory_len, bins, false)? };
        state.view.reinitialise(closure, shift, threshold);
        out.write(memory.cast());
        Ok(())
    })
}

/// Allocates an empty alarm on the heap (arguments as `tce_alarm_init`); release it
/// with `tce_alarm_free`. Only in builds with the `std` feature.
///
/// Errors: `NULL_POINTER`, `ZERO_BINS`, `TOO_MANY_BINS`, `INVALID_ENUM`,
/// `INVALID_SHIFT`, `INVALID_THRESHOLD`, `CAPACITY_TOO_LARGE`, `ALLOCATION_FAILED`.
/// Every argument is checked before allocating; on error nothing stays allocated.
///
/// # Safety
/// `out` must be NULL or valid for a write.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_new(
    bins: usize,
    closure: u32,
    shift: f64,
    threshold: f64,
    out: *mut *mut tce_alarm,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        let closure = self::closure(closure)?;
        settings(shift, threshold)?;
        let state = state::allocate::<AlarmKind>(bins)?;
        state.view.reinitialise(closure, shift, threshold);
        out.write((state as *mut AlarmState).cast());
        Ok(())
    })
}

/// Releases an alarm from `tce_alarm_new`. NULL is a no-op, and so is one in caller
/// memory or a handle of another kind. Only in builds with the `std` feature.
///
/// # Safety
/// `a` must be NULL or a valid handle, not used afterwards (a double free is undefined).
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_free(a: *mut tce_alarm) {
    let _ = ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { state::release::<AlarmKind>(a.cast()) };
        Ok(())
    });
}

/// Records one (score, label) pair, whenever its label comes.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `NON_FINITE_SCORE`, `SCORE_OUT_OF_RANGE`,
/// `INVALID_LABEL`, `COUNT_OVERFLOW` (already `TCE_MAX_COUNT` samples since the reset);
/// nothing is recorded then.
///
/// # Safety
/// `a` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_push(a: *mut tce_alarm, score: f64, label: u8) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        Ok(unsafe { get_mut(a)? }.push(score, label)?)
    })
}

/// Records a batch in order: all of it, or (a bad element) none of it.
///
/// Errors: as `tce_alarm_push`, and `LENGTH_MISMATCH`, `MISALIGNED`.
///
/// # Safety
/// `a` NULL or a valid handle; `scores` / `labels` NULL or readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_push_batch(
    a: *mut tce_alarm,
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let a = unsafe { get_mut(a)? };
        // SAFETY: the caller's contract.
        let (scores, labels) = unsafe { (array(scores, scores_len)?, array(labels, labels_len)?) };
        Ok(a.push_batch(scores, labels)?)
    })
}

/// Clears the CUSUMs, the alarm, the samples and the information (the ARL0 counts from
/// here); bins, closure, shift and threshold stay.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`.
///
/// # Safety
/// `a` must be NULL or a valid handle.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_reset(a: *mut tce_alarm) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe { get_mut(a)? }.reset();
        Ok(())
    })
}

/// Writes the alarm's statistic, settings, alarm flag and stated rates to `*out`.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`.
///
/// # Safety
/// `a` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_read(
    a: *const tce_alarm,
    out: *mut tce_alarm_report,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (a, out) = unsafe { (get(a)?, Out::new(out)?) };
        out.write(tce_alarm_report {
            statistic: a.statistic(),
            threshold: a.threshold(),
            shift: a.shift(),
            alarm: u8::from(a.alarm()),
            alarm_at: a.alarm_at().unwrap_or(0),
            samples: a.samples(),
            mean_information: a.mean_information(),
            guaranteed_arl0: a.guaranteed_arl0(),
            approximate_arl0: a.approximate_arl0(),
        });
        Ok(())
    })
}

/// The number of bins B.
///
/// # Safety
/// `a` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_bin_count(a: *const tce_alarm, out: *mut usize) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (a, out) = unsafe { (get(a)?, Out::new(out)?) };
        out.write(a.bin_count());
        Ok(())
    })
}

/// The guaranteed lower bound on the ARL0 of threshold `threshold`: e^h/2 samples, for
/// any scores in any order (NaN for a NaN threshold).
#[no_mangle]
pub extern "C" fn tce_alarm_guaranteed_arl0(threshold: f64) -> f64 {
    alarm::guaranteed_arl0(threshold)
}

/// The approximate ARL0 of threshold `threshold` on scores of mean information
/// `mean_information` per sample: (e^h − h − 1)/(2·I) samples.
#[no_mangle]
pub extern "C" fn tce_alarm_approximate_arl0(threshold: f64, mean_information: f64) -> f64 {
    alarm::approximate_arl0(threshold, mean_information)
}

/// The information per sample of a score `score` for shift `shift`: average it over
/// reference scores to get the I of `tce_alarm_threshold_for_arl0`.
#[no_mangle]
pub extern "C" fn tce_alarm_information(shift: f64, score: f64) -> f64 {
    alarm::information(shift, score)
}

/// The threshold whose approximate ARL0 is `arl0` samples on scores of mean information
/// `mean_information`, to `*out`.
///
/// Errors: `NULL_POINTER`, `INVALID_THRESHOLD` (a non-positive or non-finite argument,
/// or a threshold above 700).
///
/// # Safety
/// `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_threshold_for_arl0(
    arl0: f64,
    mean_information: f64,
    out: *mut f64,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        out.write(alarm::threshold_for_arl0(arl0, mean_information)?);
        Ok(())
    })
}

/// The threshold whose guaranteed ARL0 is `arl0` samples, ln(2·arl0), to `*out`.
///
/// Errors: `NULL_POINTER`, `INVALID_THRESHOLD` (`arl0` below 1 or not finite).
///
/// # Safety
/// `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_threshold_for_guaranteed_arl0(
    arl0: f64,
    out: *mut f64,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        out.write(alarm::threshold_for_guaranteed_arl0(arl0)?);
        Ok(())
    })
}

/// The number of bytes `tce_alarm_encode` writes: 64 + 24 per bin.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `FRAME_TOO_LARGE`.
///
/// # Safety
/// `a` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_encoded_len(a: *const tce_alarm, out: *mut usize) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (a, out) = unsafe { (get(a)?, Out::new(out)?) };
        out.write(a.frame_len()?);
        Ok(())
    })
}

/// Serialises the alarm (settings, samples, alarm and every CUSUM, bit for bit) into
/// `out[0..out_len]` and writes the number of bytes to `*written`.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`, `BUFFER_TOO_SMALL`,
/// `FRAME_TOO_LARGE`; nothing written then.
///
/// # Safety
/// `a` NULL or a valid handle; `out` NULL or writable for `out_len` bytes, not
/// overlapping the state; `written` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_encode(
    a: *const tce_alarm,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let a = unsafe { get(a)? };
        // SAFETY: the caller's contract.
        let (out, written) = unsafe { (array_mut(out, out_len)?, Out::new(written)?) };
        written.write(a.encode(out)?);
        Ok(())
    })
}

/// Replaces the state of `a` with the one in `bytes[0..bytes_len]`, which must have as
/// many bins: `a` then goes on exactly as the encoded alarm would. Checks everything
/// first.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `TRUNCATED`, `BAD_MAGIC`,
/// `UNSUPPORTED_VERSION`, `CHECKSUM`, `WRONG_KIND`, `INCONSISTENT`,
/// `BIN_COUNT_MISMATCH`; `a` is unchanged then.
///
/// # Safety
/// `a` NULL or a valid handle; `bytes` NULL or readable for `bytes_len` bytes, not
/// overlapping the state.
#[no_mangle]
pub unsafe extern "C" fn tce_alarm_decode(
    a: *mut tce_alarm,
    bytes: *const u8,
    bytes_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (a, bytes) = unsafe { (get_mut(a)?, array(bytes, bytes_len)?) };
        Ok(a.decode(bytes)?)
    })
}
