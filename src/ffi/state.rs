//! How a state is laid over raw memory: a header, then the core's unsized view.
//!
//! ```text
//! State<V> (#[repr(C)]):  magic: u64 | flags: u64 | len: usize | V = Histogram<[BinStats]>
//!                                                                  or SortedBuffer<[Slot]>
//! ```
//!
//! The magic number names the kind of state, so a handle of the wrong kind, or memory
//! never initialised, is `TCE_STATUS_WRONG_STATE` rather than undefined behaviour; `len`
//! (bins or capacity) rebuilds the slice metadata of the view from the thin pointer C
//! holds.

use core::mem::{align_of, size_of};

use super::raw::is_aligned;
use super::status::tce_status;
use crate::buffer::{Slot, SortedBuffer, MAX_CAPACITY};
use crate::histogram::Histogram;
use crate::stats::BinStats;

/// Header and view of a state.
#[repr(C)]
pub(crate) struct State<V: ?Sized> {
    magic: u64,
    flags: u64,
    len: usize,
    pub(crate) view: V,
}

/// `flags` bit: the state was allocated by `tce_*_new` and is released by `tce_*_free`.
const HEAP: u64 = 1;

/// A kind of state.
pub(crate) trait Kind {
    /// The unit of the view's storage.
    type Elem;
    /// The unsized view laid over the memory.
    type View: ?Sized;
    /// The state with an empty inline storage: its size is the offset of the storage.
    type Empty;
    /// Names the kind in the first 8 bytes of the state.
    const MAGIC: u64;
    /// Checks the number of storage units.
    fn check_len(len: usize) -> Result<(), tce_status>;
    /// Attaches the slice metadata.
    fn cast(raw: *mut [Self::Elem]) -> *mut State<Self::View>;
}

/// The equal-width histogram.
pub(crate) enum HistogramKind {}

impl Kind for HistogramKind {
    type Elem = BinStats;
    type View = Histogram<[BinStats]>;
    type Empty = State<Histogram<[BinStats; 0]>>;
    const MAGIC: u64 = u64::from_le_bytes(*b"tce_hist");
    fn check_len(len: usize) -> Result<(), tce_status> {
        if len == 0 {
            return Err(tce_status::ZeroBins);
        }
        Ok(())
    }
    fn cast(raw: *mut [BinStats]) -> *mut State<Histogram<[BinStats]>> {
        raw as *mut State<Histogram<[BinStats]>>
    }
}

/// The sorted buffer.
pub(crate) enum BufferKind {}

impl Kind for BufferKind {
    type Elem = Slot;
    type View = SortedBuffer<[Slot]>;
    type Empty = State<SortedBuffer<[Slot; 0]>>;
    const MAGIC: u64 = u64::from_le_bytes(*b"tce_sbuf");
    fn check_len(len: usize) -> Result<(), tce_status> {
        match len {
            0 => Err(tce_status::ZeroCapacity),
            len if len > MAX_CAPACITY => Err(tce_status::CapacityTooLarge),
            _ => Ok(()),
        }
    }
    fn cast(raw: *mut [Slot]) -> *mut State<SortedBuffer<[Slot]>> {
        raw as *mut State<SortedBuffer<[Slot]>>
    }
}

// The storage starts at `size_of::<Empty>()` only if nothing in the header is aligned
// more strictly than the storage unit (then the empty state has no tail padding).
const _: () = assert!(align_of::<<HistogramKind as Kind>::Empty>() == align_of::<BinStats>());
const _: () = assert!(align_of::<<BufferKind as Kind>::Empty>() == align_of::<Slot>());

/// Size and alignment of a state with `len` storage units.
pub(crate) fn layout<K: Kind>(len: usize) -> Result<(usize, usize), tce_status> {
    K::check_len(len)?;
    let align = align_of::<K::Empty>();
    let size = len
        .checked_mul(size_of::<K::Elem>())
        .and_then(|storage| storage.checked_add(size_of::<K::Empty>()))
        .and_then(|size| size.checked_next_multiple_of(align))
        .filter(|&size| size <= isize::MAX as usize)
        .ok_or(tce_status::CapacityTooLarge)?;
    Ok((size, align))
}

/// Checks a handle and reads its header: `WRONG_STATE` unless it is an initialised
/// state of kind `K`. Returns the state with its slice metadata.
///
/// # Safety
/// A non-NULL `handle` must point to readable memory of at least `size_of::<K::Empty>()`
/// bytes (a state's header), and, if it holds a state of kind `K`, to that whole state.
unsafe fn checked<K: Kind>(handle: *const u8) -> Result<*mut State<K::View>, tce_status> {
    if handle.is_null() {
        return Err(tce_status::NullPointer);
    }
    if !is_aligned(handle.cast::<K::Empty>()) {
        return Err(tce_status::WrongState);
    }
    let header = handle.cast::<State<()>>();
    // SAFETY: aligned (checked) and readable for the header (the contract); the header
    // fields are integers, for which any bits are valid.
    let (magic, len) = unsafe { ((*header).magic, (*header).len) };
    if magic != K::MAGIC || K::check_len(len).is_err() {
        return Err(tce_status::WrongState);
    }
    Ok(K::cast(core::ptr::slice_from_raw_parts_mut(
        handle.cast_mut().cast::<K::Elem>(),
        len,
    )))
}

/// The state behind a `const` handle.
///
/// # Safety
/// As [`checked`], and nothing writes to the state for `'a`.
pub(crate) unsafe fn get<'a, K: Kind>(handle: *const u8) -> Result<&'a State<K::View>, tce_status> {
    // SAFETY: the caller's contract; `checked` verified kind and length, so the memory
    // holds an initialised state of `len` units.
    unsafe { checked::<K>(handle).map(|state| &*state) }
}

/// The state behind a mutable handle.
///
/// # Safety
/// As [`checked`], and nothing else accesses the state for `'a`.
pub(crate) unsafe fn get_mut<'a, K: Kind>(
    handle: *mut u8,
) -> Result<&'a mut State<K::View>, tce_status> {
    // SAFETY: as in `get`, with exclusive access guaranteed by the caller.
    unsafe { checked::<K>(handle).map(|state| &mut *state) }
}

/// Lays an empty state of kind `K` with `len` units over `memory[..memory_len]`: zeroes
/// it (all-zero bytes are an empty view of both kinds, see `Histogram::reinitialise` and
/// `Slot::EMPTY`) and writes the header. Nothing is written unless every check passes.
///
/// # Safety
/// A non-NULL `memory` must be writable for `memory_len` bytes, not accessed otherwise
/// while the state is in use.
pub(crate) unsafe fn init<'a, K: Kind>(
    memory: *mut u8,
    memory_len: usize,
    len: usize,
    heap: bool,
) -> Result<&'a mut State<K::View>, tce_status> {
    if memory.is_null() {
        return Err(tce_status::NullPointer);
    }
    let (size, _) = layout::<K>(len)?;
    if !is_aligned(memory.cast::<K::Empty>()) {
        return Err(tce_status::Misaligned);
    }
    if memory_len < size {
        return Err(tce_status::BufferTooSmall);
    }
    // SAFETY: `memory` is writable for `memory_len ≥ size` bytes (contract, check).
    unsafe { memory.write_bytes(0, size) };
    let state = K::cast(core::ptr::slice_from_raw_parts_mut(
        memory.cast::<K::Elem>(),
        len,
    ));
    // SAFETY: aligned (checked), `size` bytes long, which is the size of a state of `len`
    // units (same layout computation as the compiler's for `#[repr(C)]`, asserted in the
    // tests), and zeroed, which is a valid value of every field. Exclusive (contract).
    let state = unsafe { &mut *state };
    debug_assert_eq!(core::mem::size_of_val(state), size);
    state.magic = K::MAGIC;
    state.flags = if heap { HEAP } else { 0 };
    state.len = len;
    Ok(state)
}

/// Allocates and initialises a state on the heap.
#[cfg(feature = "std")]
pub(crate) fn allocate<'a, K: Kind>(len: usize) -> Result<&'a mut State<K::View>, tce_status> {
    let (size, align) = layout::<K>(len)?;
    let layout = std::alloc::Layout::from_size_align(size, align)
        .map_err(|_| tce_status::CapacityTooLarge)?;
    // SAFETY: `layout` has a non-zero size (a header at least).
    let memory = unsafe { std::alloc::alloc(layout) };
    if memory.is_null() {
        return Err(tce_status::AllocationFailed);
    }
    // SAFETY: freshly allocated, writable for `size` bytes, aligned for the state, ours.
    unsafe { init::<K>(memory, size, len, true) }
}

/// Releases a state from [`allocate`]. NULL, a state in caller memory and a handle of
/// another kind are left alone.
///
/// # Safety
/// As [`checked`]; the state is not used afterwards.
#[cfg(feature = "std")]
pub(crate) unsafe fn release<K: Kind>(handle: *mut u8) {
    // SAFETY: the caller's contract.
    let Ok(state) = (unsafe { get_mut::<K>(handle) }) else {
        return;
    };
    if state.flags & HEAP == 0 {
        return;
    }
    let Ok((size, align)) = layout::<K>(state.len) else {
        return;
    };
    // A dangling handle used after this will see a wrong magic, if the allocator has not
    // reused the memory yet (a best effort, not a guarantee).
    state.magic = 0;
    // SAFETY: allocated by `allocate` with this very layout (same `len`).
    unsafe {
        std::alloc::dealloc(
            handle,
            std::alloc::Layout::from_size_align_unchecked(size, align),
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_compiler() {
        #[repr(C, align(16))]
        struct Memory([u8; 4096]);
        let mut memory = Memory([0xa5; 4096]);
        for len in [1usize, 2, 3, 15, 100] {
            let (size, align) = layout::<HistogramKind>(len).unwrap();
            assert_eq!(align, align_of::<BinStats>());
            // SAFETY: 4096 writable bytes, aligned to 16.
            let state =
                unsafe { init::<HistogramKind>(memory.0.as_mut_ptr(), 4096, len, false) }.unwrap();
            assert_eq!(core::mem::size_of_val(state), size);
            assert_eq!(state.view.bin_count(), len);
            let (size, _) = layout::<BufferKind>(len).unwrap();
            // SAFETY: as above.
            let state =
                unsafe { init::<BufferKind>(memory.0.as_mut_ptr(), 4096, len, false) }.unwrap();
            assert_eq!(core::mem::size_of_val(state), size);
            assert_eq!(state.view.capacity(), len);
        }
        assert_eq!(layout::<HistogramKind>(0), Err(tce_status::ZeroBins));
        assert_eq!(layout::<BufferKind>(0), Err(tce_status::ZeroCapacity));
        assert_eq!(
            layout::<HistogramKind>(usize::MAX / 8),
            Err(tce_status::CapacityTooLarge)
        );
        assert_eq!(
            layout::<BufferKind>(MAX_CAPACITY + 1),
            Err(tce_status::CapacityTooLarge)
        );
    }
}
