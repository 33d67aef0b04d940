//! Keyword options as the core's types. Defaults are the CLI's (15 bins, p = 2, left
//! closure, ties split, the sweep up to n bins without a cap); the binning defaults to
//! equal mass, as in the C API's default options and the paper's recommendation.

use tce::{Binning, Closure, Norm, SweepLimit, SweepOptions, Ties};

use crate::errors::Failure;

pub(crate) fn closure(name: &str) -> Result<Closure, Failure> {
    match name {
        "left" => Ok(Closure::Left),
        "right" => Ok(Closure::Right),
        other => Err(Failure::option(format!(
            "closure must be \"left\" or \"right\", not {other:?}"
        ))),
    }
}

pub(crate) fn closure_name(closure: Closure) -> &'static str {
    match closure {
        Closure::Left => "left",
        Closure::Right => "right",
    }
}

fn ties(name: &str) -> Result<Ties, Failure> {
    match name {
        "split" => Ok(Ties::Split),
        "keep" => Ok(Ties::Keep),
        other => Err(Failure::option(format!(
            "ties must be \"split\" or \"keep\", not {other:?}"
        ))),
    }
}

/// The binning; `closure` and `ties` are both checked whichever applies, so that a bad
/// value is never silent.
pub(crate) fn binning(name: &str, closure_name: &str, ties_name: &str) -> Result<Binning, Failure> {
    let (closure, ties) = (closure(closure_name)?, ties(ties_name)?);
    match name {
        "equal_width" => Ok(Binning::EqualWidth(closure)),
        "equal_mass" => Ok(Binning::EqualMass(ties)),
        other => Err(Failure::option(format!(
            "binning must be \"equal_width\" or \"equal_mass\", not {other:?}"
        ))),
    }
}

pub(crate) fn norm(p: f64) -> Result<Norm, Failure> {
    Ok(Norm::new(p)?)
}

pub(crate) fn sweep(limit: &str, max_bins: Option<usize>) -> Result<SweepOptions, Failure> {
    let limit = match limit {
        "samples" => SweepLimit::Samples,
        "paper_code" => SweepLimit::PaperCode,
        other => {
            return Err(Failure::option(format!(
                "sweep_limit must be \"samples\" or \"paper_code\", not {other:?}"
            )))
        }
    };
    Ok(SweepOptions { max_bins, limit })
}

/// A fixed bin count, checked by the core's rule before any work or allocation.
pub(crate) fn bins(bins: usize) -> Result<usize, Failure> {
    tce::binning::check_bin_count(bins)?;
    Ok(bins)
}

/// `len` values of `T` on the heap, or a `MemoryError` naming `what` (never an abort).
pub(crate) fn boxed<T: Clone>(value: T, len: usize, what: &str) -> Result<Box<[T]>, Failure> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Failure::Memory(format!("storage for {len} {what}")))?;
    v.resize(len, value);
    Ok(v.into_boxed_slice())
}

/// Values whose all-zero bytes are a valid value, and the empty one their storage starts
/// with, so that storage can come zero-filled from the allocator ([`zeroed`]).
///
/// # Safety
/// All-zero bytes must be a valid value of the type, and the type must not be
/// zero-sized.
pub(crate) unsafe trait ZeroIsEmpty: PartialEq + Sized {
    /// The value all-zero bytes must equal (checked on every allocation).
    const EMPTY: Self;
}

// SAFETY: every bit pattern is a valid f64; zero bytes are +0.0, a ring's empty cell.
unsafe impl ZeroIsEmpty for f64 {
    const EMPTY: Self = 0.0;
}

// SAFETY: `Slot` is `#[repr(C)]` of an f64 and two u32 (src/buffer.rs): every bit
// pattern of those is valid, and zero bytes are `Slot::EMPTY` (0.0, 0, 0).
unsafe impl ZeroIsEmpty for tce::Slot {
    const EMPTY: Self = tce::Slot::EMPTY;
}

/// `len` empty values of `T` on the heap, zero-filled by the allocator, or a
/// `MemoryError` naming `what` (never an abort).
///
/// Why not [`boxed`]: it writes every value, so a window of size 2^30 commits its 24 GiB
/// at once, and a frame of a few bytes can claim that size (a window or reservoir that
/// has seen fewer samples than its size; see `tce::portable::frame_shape`). Zero-filled
/// allocations (`calloc`) of that size are fresh pages that the operating system
/// commits only when they are first written, so a state costs the memory of the samples
/// it holds until it fills; an address space too small for the size is a
/// `MemoryError`.
pub(crate) fn zeroed<T: ZeroIsEmpty>(len: usize, what: &str) -> Result<Box<[T]>, Failure> {
    let refuse = || Failure::Memory(format!("storage for {len} {what}"));
    if len == 0 {
        return Ok(Box::default());
    }
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| refuse())?;
    // SAFETY: `layout` has a non-zero size: len ≥ 1 and `T` is not zero-sized (the
    // trait's contract).
    let memory = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if memory.is_null() {
        return Err(refuse());
    }
    // SAFETY: `memory` was allocated by the global allocator with the layout of `len`
    // values of `T` (the one `Box<[T]>` frees with), and holds `len` valid values: zero
    // bytes are a valid `T` (the trait's contract).
    let storage = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(memory, len)) };
    // The trait's other promise, checked where it is cheap (the first value; the rest
    // are the same bytes).
    if storage.first() != Some(&T::EMPTY) {
        return Err(Failure::Named(
            "InternalError",
            format!("zeroed storage for {what} is not empty"),
        ));
    }
    Ok(storage)
}
