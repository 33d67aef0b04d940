//! How a state is laid over raw memory: a header, then the core's view of the state.
//!
//! ```text
//! State<V> (#[repr(C)]):  magic: u64 | flags: u64 | len: usize | V
//! ```
//!
//! Two shapes of view:
//!
//! * **inline storage**: `V` is the core's unsized view, storage last
//!   (`Histogram<[BinStats]>`, `SortedBuffer<[Slot]>`, `DecayingHistogram<[DecayedBin]>`,
//!   `ConcurrentHistogram<[AtomicBin]>`); `len` (bins or capacity) rebuilds the slice
//!   metadata from the thin pointer C holds;
//! * **detached storage**: `V` is the core type's bookkeeping over [`Detached`] storage
//!   (`SlidingWindow<Detached, Detached>`, `Reservoir<Detached>`), sized, and the storage
//!   follows it in the same memory (`len` units). Every call re-attaches that storage,
//!   computed from the handle (never from a stored pointer, so a copied or forged state
//!   cannot point elsewhere).
//!
//! The magic number names the kind of state, so a handle of the wrong kind, or memory
//! never initialised, is `TCE_STATUS_WRONG_STATE` rather than undefined behaviour.

use core::mem::{align_of, size_of};

use super::raw::is_aligned;
use super::status::tce_status;
use crate::alarm::{AlarmBin, CalibrationAlarm};
use crate::buffer::{Slot, SortedBuffer, MAX_CAPACITY};
#[cfg(target_has_atomic = "64")]
use crate::concurrent::{AtomicBin, ConcurrentHistogram};
use crate::decay::{DecayedBin, DecayingHistogram};
use crate::histogram::Histogram;
use crate::reservoir::Reservoir;
use crate::stats::BinStats;
use crate::window::{SlidingWindow, MAX_WINDOW};

/// Header and view of a state.
#[repr(C)]
pub(crate) struct State<V: ?Sized> {
    magic: u64,
    flags: u64,
    len: usize,
    pub(crate) view: V,
}

impl<V: ?Sized> State<V> {
    /// The number of storage units (bins or capacity).
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// The storage of a detached view: none in the view itself (it follows the view in
/// memory, see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Detached;

/// `flags` bit: the state was allocated by `tce_*_new` and is released by `tce_*_free`.
const HEAP: u64 = 1;

/// A kind of state.
pub(crate) trait Kind {
    /// The view laid over the memory after the header.
    type View: ?Sized;
    /// The state without storage: its size is the offset of the storage, its alignment
    /// the state's.
    type Empty;
    /// Names the kind in the first 8 bytes of the state.
    const MAGIC: u64;
    /// Bytes per storage unit (inside an unsized view, or after a detached one).
    const UNIT: usize;
    /// Checks the number of storage units.
    fn check_len(len: usize) -> Result<(), tce_status>;
    /// The state at `handle` with `len` units (attaches slice metadata if unsized).
    fn cast(handle: *mut u8, len: usize) -> *mut State<Self::View>;
}

/// A kind whose view is unsized with its storage last.
macro_rules! inline_kind {
    ($kind:ident, $elem:ty, $view:ty, $empty:ty, $magic:literal, $check:expr) => {
        impl Kind for $kind {
            type View = $view;
            type Empty = State<$empty>;
            const MAGIC: u64 = u64::from_le_bytes(*$magic);
            const UNIT: usize = size_of::<$elem>();
            fn check_len(len: usize) -> Result<(), tce_status> {
                $check(len)
            }
            fn cast(handle: *mut u8, len: usize) -> *mut State<$view> {
                core::ptr::slice_from_raw_parts_mut(handle.cast::<$elem>(), len)
                    as *mut State<$view>
            }
        }
        // The storage starts at `size_of::<Empty>()` only if nothing in the header is
        // aligned more strictly than the storage unit (then the empty state has no tail
        // padding).
        const _: () = assert!(align_of::<State<$empty>>() == align_of::<$elem>());
    };
}

/// A kind whose view is sized, its storage (`$unit` bytes per unit) after it.
macro_rules! detached_kind {
    ($kind:ident, $view:ty, $unit:expr, $magic:literal, $check:expr) => {
        impl Kind for $kind {
            type View = $view;
            type Empty = State<$view>;
            const MAGIC: u64 = u64::from_le_bytes(*$magic);
            const UNIT: usize = $unit;
            fn check_len(len: usize) -> Result<(), tce_status> {
                $check(len)
            }
            fn cast(handle: *mut u8, _len: usize) -> *mut State<$view> {
                handle.cast()
            }
        }
    };
}

/// A histogram's bin count: 1 to `MAX_BINS` (the core's one check).
fn bin_count(len: usize) -> Result<(), tce_status> {
    Ok(crate::binning::check_bin_count(len)?)
}

/// A concurrent histogram's storage: shards × bins bins, at least 1 (the bins of one
/// shard are checked against `MAX_BINS` by `ffi/concurrent.rs`).
#[cfg(target_has_atomic = "64")]
fn at_least_one_bin(len: usize) -> Result<(), tce_status> {
    if len == 0 {
        return Err(tce_status::ZeroBins);
    }
    Ok(())
}

fn capacity_up_to(max: usize) -> impl Fn(usize) -> Result<(), tce_status> {
    move |len| match len {
        0 => Err(tce_status::ZeroCapacity),
        len if len > max => Err(tce_status::CapacityTooLarge),
        _ => Ok(()),
    }
}

/// The equal-width histogram.
pub(crate) enum HistogramKind {}
inline_kind!(
    HistogramKind,
    BinStats,
    Histogram<[BinStats]>,
    Histogram<[BinStats; 0]>,
    b"tce_hist",
    bin_count
);

/// The sorted buffer.
pub(crate) enum BufferKind {}
inline_kind!(
    BufferKind,
    Slot,
    SortedBuffer<[Slot]>,
    SortedBuffer<[Slot; 0]>,
    b"tce_sbuf",
    capacity_up_to(MAX_CAPACITY)
);

/// The decaying histogram.
pub(crate) enum DecayKind {}
inline_kind!(
    DecayKind,
    DecayedBin,
    DecayingHistogram<[DecayedBin]>,
    DecayingHistogram<[DecayedBin; 0]>,
    b"tce_dcay",
    bin_count
);

/// The calibration alarm.
pub(crate) enum AlarmKind {}
inline_kind!(
    AlarmKind,
    AlarmBin,
    CalibrationAlarm<[AlarmBin]>,
    CalibrationAlarm<[AlarmBin; 0]>,
    b"tce_alrm",
    bin_count
);

/// The concurrent histogram.
#[cfg(target_has_atomic = "64")]
pub(crate) enum ConcurrentKind {}
#[cfg(target_has_atomic = "64")]
inline_kind!(
    ConcurrentKind,
    AtomicBin,
    ConcurrentHistogram<[AtomicBin]>,
    ConcurrentHistogram<[AtomicBin; 0]>,
    b"tce_conc",
    at_least_one_bin
);

/// The sliding window: `len` slots, then a ring of `len` scores.
pub(crate) enum WindowKind {}
detached_kind!(
    WindowKind,
    SlidingWindow<Detached, Detached>,
    size_of::<Slot>() + size_of::<f64>(),
    b"tce_wind",
    capacity_up_to(MAX_WINDOW)
);

/// The reservoir: `len` slots.
pub(crate) enum ReservoirKind {}
detached_kind!(
    ReservoirKind,
    Reservoir<Detached>,
    size_of::<Slot>(),
    b"tce_resv",
    capacity_up_to(MAX_CAPACITY)
);

// Detached storage starts right after the view, aligned for it: slots (then the
// window's ring of f64) need no more alignment than the view has, and the view's size
// is a multiple of its alignment.
const _: () = assert!(align_of::<<WindowKind as Kind>::Empty>() >= align_of::<Slot>());
const _: () = assert!(align_of::<<ReservoirKind as Kind>::Empty>() >= align_of::<Slot>());

// The detached views are copied back into caller memory after every successful call:
// they must have no implicit padding, or each copy would write stray stack bytes there.
// A size equal to the sum of the field sizes leaves no room for any.
const _: () = assert!(
    // len, arrivals, base, hits, unsorted, stale, zero_padding
    size_of::<SlidingWindow<Detached, Detached>>() == 40
);
const _: () = assert!(
    // buffer (len, sorted, hits, appended, summed), seen, rng, next_arrival, zero_padding
    size_of::<Reservoir<Detached>>() == 2 * size_of::<usize>() + 8 + 4 * 8 + 8 + 8 + 4 * 8 + 4 + 4
);
const _: () = assert!(size_of::<Slot>() % align_of::<f64>() == 0);

/// The storage after a detached state at `handle` with `len` units: its first unit.
///
/// # Safety
/// `handle` must point to a state of kind `K` (checked by [`get`] or [`get_mut`]), with
/// provenance over the whole state.
pub(crate) unsafe fn detached_storage<K: Kind>(handle: *const u8) -> *mut u8 {
    // SAFETY: the state is `layout::<K>(len)` bytes long, of which the view takes the
    // first `size_of::<K::Empty>()` (the caller's contract).
    unsafe { handle.cast_mut().add(size_of::<K::Empty>()) }
}

/// Size and alignment of a state with `len` storage units.
pub(crate) fn layout<K: Kind>(len: usize) -> Result<(usize, usize), tce_status> {
    K::check_len(len)?;
    let align = align_of::<K::Empty>();
    let size = len
        .checked_mul(K::UNIT)
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
    Ok(K::cast(handle.cast_mut(), len))
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
/// it (all-zero bytes are a valid value of every view: integers, floats, `Closure::Left`,
/// see `Histogram::reinitialise` and `Slot::EMPTY`; the caller then sets what zero does
/// not express, such as a closure or a half-life) and writes the header. Nothing is
/// written unless every check passes, so the caller must check every other argument of
/// its function (closure, half-life, ...) before calling this.
///
/// `(memory, memory_len)` follows the one array rule (`raw.rs`): NULL with length 0 is
/// empty memory, too small for any state (`BUFFER_TOO_SMALL`).
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
    let size = check_memory::<K>(memory, memory_len, len)?;
    // SAFETY: `memory` is writable for `memory_len ≥ size` bytes (contract, check).
    unsafe { memory.write_bytes(0, size) };
    let state = K::cast(memory, len);
    // SAFETY: aligned (checked), `size` bytes long, which is the size of a state of `len`
    // units (same layout computation as the compiler's for `#[repr(C)]`, asserted in the
    // tests; for a detached kind the view is a prefix of it), and zeroed, which is a
    // valid value of every field. Exclusive (contract).
    let state = unsafe { &mut *state };
    debug_assert!(core::mem::size_of_val(state) <= size);
    state.magic = K::MAGIC;
    state.flags = if heap { HEAP } else { 0 };
    state.len = len;
    Ok(state)
}

/// The checks of [`init`], without writing anything: whether `memory[..memory_len]` can
/// hold a state of kind `K` with `len` units (`NULL_POINTER`, `CAPACITY_TOO_LARGE` and
/// the like for `len`, `MISALIGNED`, `BUFFER_TOO_SMALL`). Returns the state's size.
pub(crate) fn check_memory<K: Kind>(
    memory: *const u8,
    memory_len: usize,
    len: usize,
) -> Result<usize, tce_status> {
    if memory.is_null() && memory_len > 0 {
        return Err(tce_status::NullPointer);
    }
    let (size, _) = layout::<K>(len)?;
    if !is_aligned(memory.cast::<K::Empty>()) {
        return Err(tce_status::Misaligned);
    }
    // A state is never 0 bytes (it has a header), so NULL memory stops here.
    if memory_len < size {
        return Err(tce_status::BufferTooSmall);
    }
    Ok(size)
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
    let state = unsafe { init::<K>(memory, size, len, true) };
    if state.is_err() {
        // Not reachable (the layout was checked above and the memory fits it), but a
        // failed `_new` must not leak.
        // SAFETY: allocated just above with this layout, not used elsewhere.
        unsafe { std::alloc::dealloc(memory, layout) };
    }
    state
}

/// Passes on `result` of the steps of a `tce_*_new` after [`allocate`], releasing the
/// state at `handle` if they failed: a failed `_new` leaks nothing.
///
/// # Safety
/// `handle` is a state of kind `K` from [`allocate`], not used elsewhere.
#[cfg(feature = "std")]
pub(crate) unsafe fn release_on_error<K: Kind, T>(
    handle: *mut u8,
    result: Result<T, tce_status>,
) -> Result<T, tce_status> {
    if result.is_err() {
        // SAFETY: the caller's contract.
        unsafe { release::<K>(handle) };
    }
    result
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
        // Room for 100 concurrent bins after the concurrent histogram's header (its count
        // budget's leases take about 1.1 KiB).
        const BYTES: usize = 8192;
        #[repr(C, align(16))]
        struct Memory([u8; BYTES]);
        let mut memory = Memory([0xa5; BYTES]);
        for len in [1usize, 2, 3, 15, 100] {
            let (size, align) = layout::<HistogramKind>(len).unwrap();
            assert_eq!(align, align_of::<BinStats>());
            // SAFETY: BYTES writable bytes, aligned to 16.
            let state =
                unsafe { init::<HistogramKind>(memory.0.as_mut_ptr(), BYTES, len, false) }.unwrap();
            assert_eq!(core::mem::size_of_val(state), size);
            assert_eq!(state.view.bin_count(), len);
            let (size, _) = layout::<BufferKind>(len).unwrap();
            // SAFETY: as above.
            let state =
                unsafe { init::<BufferKind>(memory.0.as_mut_ptr(), BYTES, len, false) }.unwrap();
            assert_eq!(core::mem::size_of_val(state), size);
            assert_eq!(state.view.capacity(), len);
        }
        for len in [1usize, 2, 3, 15, 100] {
            let (size, _) = layout::<DecayKind>(len).unwrap();
            // SAFETY: as above.
            let state =
                unsafe { init::<DecayKind>(memory.0.as_mut_ptr(), BYTES, len, false) }.unwrap();
            assert_eq!(core::mem::size_of_val(state), size);
            assert_eq!(state.view.bin_count(), len);
            #[cfg(target_has_atomic = "64")]
            {
                let (size, _) = layout::<ConcurrentKind>(len).unwrap();
                // SAFETY: as above.
                let state =
                    unsafe { init::<ConcurrentKind>(memory.0.as_mut_ptr(), BYTES, len, false) }
                        .unwrap();
                assert_eq!(core::mem::size_of_val(state), size);
                state.view.reinitialise(crate::binning::Closure::Left, 1);
                assert_eq!((state.view.bin_count(), state.view.shard_count()), (1, len));
            }
            // Detached kinds: the view, then the storage.
            let (size, align) = layout::<WindowKind>(len).unwrap();
            assert_eq!(
                align,
                align_of::<State<SlidingWindow<Detached, Detached>>>()
            );
            assert_eq!(size, size_of::<<WindowKind as Kind>::Empty>() + 24 * len);
            let (size, _) = layout::<ReservoirKind>(len).unwrap();
            assert_eq!(size, size_of::<<ReservoirKind as Kind>::Empty>() + 16 * len);
        }
        assert_eq!(layout::<WindowKind>(0), Err(tce_status::ZeroCapacity));
        assert_eq!(
            layout::<WindowKind>(MAX_WINDOW + 1),
            Err(tce_status::CapacityTooLarge)
        );
        assert_eq!(layout::<HistogramKind>(0), Err(tce_status::ZeroBins));
        assert_eq!(layout::<BufferKind>(0), Err(tce_status::ZeroCapacity));
        assert_eq!(
            layout::<HistogramKind>(usize::MAX / 8),
            Err(tce_status::TooManyBins)
        );
        assert!(layout::<HistogramKind>(crate::MAX_BINS).is_ok());
        assert!(layout::<DecayKind>(crate::MAX_BINS).is_ok());
        for len in [crate::MAX_BINS + 1, usize::MAX] {
            assert_eq!(layout::<HistogramKind>(len), Err(tce_status::TooManyBins));
            assert_eq!(layout::<DecayKind>(len), Err(tce_status::TooManyBins));
        }
        assert_eq!(
            layout::<BufferKind>(MAX_CAPACITY + 1),
            Err(tce_status::CapacityTooLarge)
        );
    }
}
