//! Portable state: `tce_<state>_encoded_len`, `tce_<state>_encode` and
//! `tce_<state>_decode` for the equal-width histogram, the sorted buffer, the reservoir,
//! the sliding window and the decaying histogram. The bytes are exactly those of the Rust API's `encode` (a versioned,
//! little-endian frame with a CRC-32; see `src/portable.rs`), so states move between
//! devices, languages and library builds of the same format version. Decoding replaces
//! the contents of an existing, initialised state of the same shape; to combine a fleet's
//! states, decode each into a scratch state and merge it (`tce_*_merge`).

use super::boundary::ffi_boundary;
use super::buffer::{self, tce_sorted_buffer};
use super::decay::{self, tce_decaying_histogram};
use super::histogram::{self, tce_ew_histogram};
use super::raw::{array, array_mut, Out};
use super::reservoir::{self, tce_reservoir};
use super::status::tce_status;
use super::window::{self, tce_window};

/// Writes `encode`'s bytes to `out[..out_len]` and their number to `*written`; checks
/// `out` and `written` first.
///
/// # Safety
/// `out` NULL or writable for `out_len` bytes; `written` NULL or valid for a write.
unsafe fn encode_into(
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
    encode: impl FnOnce(&mut [u8]) -> Result<usize, tce_status>,
) -> Result<(), tce_status> {
    // SAFETY: the caller's contract.
    let (out, written) = unsafe { (array_mut(out, out_len)?, Out::new(written)?) };
    written.write(encode(out)?);
    Ok(())
}

/// The number of bytes `tce_ew_histogram_encode` writes: 24 + 32 per bin.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`, `FRAME_TOO_LARGE` (a payload
/// above 2^32 − 1 bytes, which the format's 32-bit length field cannot describe:
/// the state has no encoding; nothing is written).
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_encoded_len(
    h: *const tce_ew_histogram,
    out: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (histogram::get(h)?, Out::new(out)?) };
        out.write(h.frame_len()?);
        Ok(())
    })
}

/// Serialises the histogram (closure and exact bin sums) into `out[0..out_len]` and
/// writes the number of bytes to `*written`.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`, `BUFFER_TOO_SMALL` (`out_len`
/// below `tce_ew_histogram_encoded_len`), `FRAME_TOO_LARGE` (as `tce_ew_histogram_encoded_len`);
/// nothing written then.
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or writable for `out_len` bytes, not
/// overlapping the state; `written` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_encode(
    h: *const tce_ew_histogram,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let h = unsafe { histogram::get(h)? };
        // SAFETY: the caller's contract.
        unsafe { encode_into(out, out_len, written, |out| Ok(h.encode(out)?)) }
    })
}

/// Replaces the contents of `h` (its closure and bins) with the state in
/// `bytes[0..bytes_len]`, which must have as many bins. Checks everything first.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `TRUNCATED`, `BAD_MAGIC`,
/// `UNSUPPORTED_VERSION`, `CHECKSUM`, `WRONG_KIND`, `INCONSISTENT`,
/// `BIN_COUNT_MISMATCH`; `h` is unchanged then.
///
/// # Safety
/// `h` NULL or a valid handle; `bytes` NULL or readable for `bytes_len` bytes, not
/// overlapping the state.
#[no_mangle]
pub unsafe extern "C" fn tce_ew_histogram_decode(
    h: *mut tce_ew_histogram,
    bytes: *const u8,
    bytes_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, bytes) = unsafe { (histogram::get_mut(h)?, array(bytes, bytes_len)?) };
        Ok(h.decode(bytes)?)
    })
}

/// The number of bytes `tce_sorted_buffer_encode` writes now: 20 + 9 per sample.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`.
///
/// # Safety
/// `b` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_encoded_len(
    b: *const tce_sorted_buffer,
    out: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (b, out) = unsafe { (buffer::get(b)?, Out::new(out)?) };
        out.write(b.frame_len()?);
        Ok(())
    })
}

/// Serialises the buffer's samples, in arrival order, into `out[0..out_len]` and writes
/// the number of bytes to `*written`. Takes a mutable handle: it puts the samples in
/// arrival order in place (the next estimate sorts them again; results are unaffected).
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`, `BUFFER_TOO_SMALL` (nothing
/// written).
///
/// # Safety
/// `b` NULL or a valid handle; `out` NULL or writable for `out_len` bytes, not
/// overlapping the state; `written` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_encode(
    b: *mut tce_sorted_buffer,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let b = unsafe { buffer::get_mut(b)? };
        // SAFETY: the caller's contract.
        unsafe { encode_into(out, out_len, written, |out| Ok(b.encode(out)?)) }
    })
}

/// Replaces the samples of `b` with those in `bytes[0..bytes_len]` (in their arrival
/// order). Checks everything first.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `TRUNCATED`, `BAD_MAGIC`,
/// `UNSUPPORTED_VERSION`, `CHECKSUM`, `WRONG_KIND`, `INCONSISTENT`, `BUFFER_FULL` (more
/// samples than the capacity of `b`); `b` is unchanged then.
///
/// # Safety
/// `b` NULL or a valid handle; `bytes` NULL or readable for `bytes_len` bytes, not
/// overlapping the state.
#[no_mangle]
pub unsafe extern "C" fn tce_sorted_buffer_decode(
    b: *mut tce_sorted_buffer,
    bytes: *const u8,
    bytes_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (b, bytes) = unsafe { (buffer::get_mut(b)?, array(bytes, bytes_len)?) };
        Ok(b.decode(bytes)?)
    })
}

/// The number of bytes `tce_reservoir_encode` writes now: 64 + 9 per held sample.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`.
///
/// # Safety
/// `r` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_encoded_len(
    r: *const tce_reservoir,
    out: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: the caller's contract.
        out.write(unsafe { reservoir::with_ref(r, |r| r.frame_len())?? });
        Ok(())
    })
}

/// Serialises the reservoir (capacity, samples seen, random state, held samples in
/// arrival order) into `out[0..out_len]` and writes the number of bytes to `*written`.
/// Takes a mutable handle, as `tce_sorted_buffer_encode`.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`, `BUFFER_TOO_SMALL` (nothing
/// written).
///
/// # Safety
/// `r` NULL or a valid handle; `out` NULL or writable for `out_len` bytes, not
/// overlapping the state; `written` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_encode(
    r: *mut tce_reservoir,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe {
            reservoir::with_mut(r, |r| {
                encode_into(out, out_len, written, |out| Ok(r.encode(out)?))
            })
        }
    })
}

/// Replaces the state of `r` (samples, samples seen, random state) with the one in
/// `bytes[0..bytes_len]`, which must have the same capacity. Checks everything first.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `TRUNCATED`, `BAD_MAGIC`,
/// `UNSUPPORTED_VERSION`, `CHECKSUM`, `WRONG_KIND`, `INCONSISTENT`,
/// `CAPACITY_MISMATCH`; `r` is unchanged then.
///
/// # Safety
/// `r` NULL or a valid handle; `bytes` NULL or readable for `bytes_len` bytes, not
/// overlapping the state.
#[no_mangle]
pub unsafe extern "C" fn tce_reservoir_decode(
    r: *mut tce_reservoir,
    bytes: *const u8,
    bytes_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let bytes = unsafe { array(bytes, bytes_len)? };
        // SAFETY: the caller's contract.
        unsafe { reservoir::with_mut(r, |r| Ok(r.decode(bytes)?)) }
    })
}

/// The number of bytes `tce_window_encode` writes now: 32 + 9 per held sample.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`.
///
/// # Safety
/// `w` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_window_encoded_len(
    w: *const tce_window,
    out: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: the caller's contract.
        out.write(unsafe { window::with_ref(w, |w| w.frame_len())?? });
        Ok(())
    })
}

/// Serialises the window (its size, samples seen, held samples in arrival order) into
/// `out[0..out_len]` and writes the number of bytes to `*written`. Takes a mutable
/// handle, as `tce_sorted_buffer_encode`.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`, `BUFFER_TOO_SMALL` (nothing
/// written).
///
/// # Safety
/// `w` NULL or a valid handle; `out` NULL or writable for `out_len` bytes, not
/// overlapping the state; `written` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_window_encode(
    w: *mut tce_window,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        unsafe {
            window::with_mut(w, |w| {
                encode_into(out, out_len, written, |out| Ok(w.encode(out)?))
            })
        }
    })
}

/// Replaces the state of `w` (held samples, samples seen) with the one in
/// `bytes[0..bytes_len]`, which must have the same window size: `w` then evicts and
/// estimates exactly as the encoded window would. Checks everything first.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `TRUNCATED`, `BAD_MAGIC`,
/// `UNSUPPORTED_VERSION`, `CHECKSUM`, `WRONG_KIND`, `INCONSISTENT`,
/// `CAPACITY_MISMATCH`, `BUFFER_FULL`; `w` is unchanged then.
///
/// # Safety
/// `w` NULL or a valid handle; `bytes` NULL or readable for `bytes_len` bytes, not
/// overlapping the state.
#[no_mangle]
pub unsafe extern "C" fn tce_window_decode(
    w: *mut tce_window,
    bytes: *const u8,
    bytes_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let bytes = unsafe { array(bytes, bytes_len)? };
        // SAFETY: the caller's contract.
        unsafe { window::with_mut(w, |w| Ok(w.decode(bytes)?)) }
    })
}

/// The number of bytes `tce_decaying_histogram_encode` writes: 40 + 40 per bin.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`, `FRAME_TOO_LARGE` (a payload
/// above 2^32 − 1 bytes, which the format's 32-bit length field cannot describe:
/// the state has no encoding; nothing is written).
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_encoded_len(
    h: *const tce_decaying_histogram,
    out: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, out) = unsafe { (decay::get(h)?, Out::new(out)?) };
        out.write(h.frame_len()?);
        Ok(())
    })
}

/// Serialises the decaying histogram (closure, decay factor, next weight and every
/// bin's count and weights, bit for bit) into `out[0..out_len]` and writes the number of
/// bytes to `*written`.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `MISALIGNED`, `BUFFER_TOO_SMALL` (`out_len`
/// below `tce_decaying_histogram_encoded_len`), `FRAME_TOO_LARGE` (as `tce_decaying_histogram_encoded_len`);
/// nothing written then.
///
/// # Safety
/// `h` NULL or a valid handle; `out` NULL or writable for `out_len` bytes, not
/// overlapping the state; `written` NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_encode(
    h: *const tce_decaying_histogram,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let h = unsafe { decay::get(h)? };
        // SAFETY: the caller's contract.
        unsafe { encode_into(out, out_len, written, |out| Ok(h.encode(out)?)) }
    })
}

/// Replaces the state of `h` (closure, half-life, weights) with the one in
/// `bytes[0..bytes_len]`, which must have as many bins: `h` then goes on exactly as the
/// encoded histogram would. Checks everything first.
///
/// Errors: `NULL_POINTER`, `WRONG_STATE`, `TRUNCATED`, `BAD_MAGIC`,
/// `UNSUPPORTED_VERSION`, `CHECKSUM`, `WRONG_KIND`, `INCONSISTENT`,
/// `BIN_COUNT_MISMATCH`; `h` is unchanged then.
///
/// # Safety
/// `h` NULL or a valid handle; `bytes` NULL or readable for `bytes_len` bytes, not
/// overlapping the state.
#[no_mangle]
pub unsafe extern "C" fn tce_decaying_histogram_decode(
    h: *mut tce_decaying_histogram,
    bytes: *const u8,
    bytes_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (h, bytes) = unsafe { (decay::get_mut(h)?, array(bytes, bytes_len)?) };
        Ok(h.decode(bytes)?)
    })
}
