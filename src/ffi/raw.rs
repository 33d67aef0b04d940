//! Checked conversions of the raw pointers C passes in: arrays (pointer + length) and
//! out-parameters. Every check here turns a caller mistake that can be detected (NULL,
//! misalignment, a length no array can have) into a status.

use core::mem::{align_of, size_of};

use super::status::tce_status;

/// Whether `ptr` is aligned for `T`.
pub(crate) fn is_aligned<T>(ptr: *const T) -> bool {
    (ptr as usize) % align_of::<T>() == 0
}

/// Checks a (pointer, length) pair for use as an array of `T`. The one rule for every
/// array the C API takes, input or output: a NULL pointer with length 0 is an empty
/// array (so an output that must hold something then fails as `BUFFER_TOO_SMALL`, not
/// `NULL_POINTER`); NULL with a length above 0 is `NULL_POINTER`; the pointer must be
/// aligned; the length must fit in `isize` bytes. Every (pointer, length) pair goes
/// through [`array`] or [`array_mut`].
fn check_array<T>(ptr: *const T, len: usize) -> Result<bool, tce_status> {
    if len == 0 {
        return Ok(false);
    }
    if ptr.is_null() {
        return Err(tce_status::NullPointer);
    }
    if !is_aligned(ptr) {
        return Err(tce_status::Misaligned);
    }
    if len > isize::MAX as usize / size_of::<T>().max(1) {
        return Err(tce_status::CapacityTooLarge);
    }
    Ok(true)
}

/// The array `ptr[..len]`.
///
/// # Safety
/// Unless `len` is 0, `ptr` must point to `len` initialised values of `T` that nothing
/// writes to for `'a`.
pub(crate) unsafe fn array<'a, T>(ptr: *const T, len: usize) -> Result<&'a [T], tce_status> {
    if !check_array(ptr, len)? {
        return Ok(&[]);
    }
    // SAFETY: `ptr` is non-NULL and aligned, `len · size_of::<T>()` fits in `isize`
    // (checked above), and the caller guarantees `len` readable values that stay
    // unchanged for `'a`.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// The writable array `ptr[..len]`.
///
/// # Safety
/// Unless `len` is 0, `ptr` must point to `len` writable values of `T` (`T` is a plain
/// C type: any bits are valid) that nothing else accesses for `'a`.
pub(crate) unsafe fn array_mut<'a, T: Copy>(
    ptr: *mut T,
    len: usize,
) -> Result<&'a mut [T], tce_status> {
    if !check_array(ptr, len)? {
        return Ok(&mut []);
    }
    // SAFETY: as in `array`, and the caller guarantees exclusive, writable memory.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

/// An out-parameter, checked non-NULL and aligned when constructed, written once on
/// success.
pub(crate) struct Out<T>(*mut T);

impl<T: Copy> Out<T> {
    /// Checks `ptr`.
    ///
    /// # Safety
    /// A non-NULL `ptr` must be valid for a write of `T` until [`Out::write`].
    pub(crate) unsafe fn new(ptr: *mut T) -> Result<Self, tce_status> {
        if ptr.is_null() {
            return Err(tce_status::NullPointer);
        }
        if !is_aligned(ptr) {
            return Err(tce_status::Misaligned);
        }
        Ok(Out(ptr))
    }

    /// Writes the value.
    pub(crate) fn write(self, value: T) {
        // SAFETY: non-NULL and aligned (checked in `new`), valid for a write (the
        // contract of `new`); `T: Copy`, so no old value needs dropping.
        unsafe { self.0.write(value) }
    }
}
