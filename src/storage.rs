//! Heap storage for the boxed states (`std` only): allocation that fails with an error
//! instead of aborting, and zero-filled storage whose pages the operating system commits
//! only as samples arrive.
//!
//! Both matter for states decoded from bytes: a frame of a few bytes can legitimately
//! claim a large window or reservoir (one that has seen fewer samples than its size, see
//! [`crate::portable::frame_shape`]). [`zeroed`] storage then costs the memory of the
//! samples held, and a size the address space cannot hold is an [`AllocError`], never an
//! abort. The CLI and the Python package take their storage from here.

use core::fmt;

use crate::buffer::Slot;

/// The allocator could not provide storage for `len` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocError {
    /// How many values were asked for.
    pub len: usize,
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot allocate storage for {} values", self.len)
    }
}

impl std::error::Error for AllocError {}

/// `len` copies of `value` on the heap, or an [`AllocError`].
pub fn filled<T: Clone>(value: T, len: usize) -> Result<Box<[T]>, AllocError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| AllocError { len })?;
    v.resize(len, value);
    Ok(v.into_boxed_slice())
}

/// Values whose all-zero bytes are a valid value, equal to the empty one their storage
/// starts with, so that storage can come zero-filled from the allocator ([`zeroed`]).
///
/// # Safety
/// All-zero bytes must be a valid value of the type, equal to [`ZeroIsEmpty::EMPTY`],
/// and the type must not be zero-sized.
pub unsafe trait ZeroIsEmpty: Sized {
    /// The value all-zero bytes are.
    const EMPTY: Self;
}

// SAFETY: every bit pattern is a valid f64; zero bytes are +0.0, a ring's empty cell.
unsafe impl ZeroIsEmpty for f64 {
    const EMPTY: Self = 0.0;
}

// SAFETY: `Slot` is `#[repr(C)]` of an f64 and two u32 (src/buffer.rs) with no padding:
// every bit pattern of those is valid, and zero bytes are `Slot::EMPTY` (0.0, 0, 0),
// which the tests below check.
unsafe impl ZeroIsEmpty for Slot {
    const EMPTY: Self = Slot::EMPTY;
}

/// `len` empty values of `T` on the heap, zero-filled by the allocator, or an
/// [`AllocError`].
///
/// Why not [`filled`]: it writes every value, so a window of size 2^30 commits its
/// 24 GiB at once. Zero-filled allocations (`calloc`) of that size are fresh pages that
/// the operating system commits only when they are first written.
pub fn zeroed<T: ZeroIsEmpty>(len: usize) -> Result<Box<[T]>, AllocError> {
    if len == 0 {
        return Ok(Box::default());
    }
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| AllocError { len })?;
    // SAFETY: `layout` has a non-zero size: len ≥ 1 and `T` is not zero-sized (the
    // trait's contract).
    let memory = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if memory.is_null() {
        return Err(AllocError { len });
    }
    huge_pages(memory.cast(), layout.size());
    // SAFETY: `memory` was allocated by the global allocator with the layout of `len`
    // values of `T` (the one `Box<[T]>` frees with), and holds `len` valid values: zero
    // bytes are a valid `T` (the trait's contract).
    Ok(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(memory, len)) })
}

/// Asks the kernel to back the 2 MiB-aligned part of `size` fresh bytes at `memory` with
/// transparent huge pages, where it takes such hints (Linux with THP set to `madvise`).
/// Why: each first touch of a 4 KiB page costs a fault of about 3 µs on the VMs we
/// measured on, some 25 ms for a million samples' 32 MB of sort storage; a 2 MiB page
/// takes one fault for 512 of them. A hint only: refused or ignored, nothing changes
/// but the time.
#[cfg(target_os = "linux")]
fn huge_pages(memory: *mut u8, size: usize) {
    const HUGE: usize = 2 << 20;
    // Only storage of two huge pages or more, of which whole aligned ones then hold at
    // least half (below, the unaligned ends are most of it).
    if size < 2 * HUGE {
        return;
    }
    let (first, last) = (memory as usize, (memory as usize).saturating_add(size));
    let (Some(start), end) = (first.checked_next_multiple_of(HUGE), last / HUGE * HUGE) else {
        return;
    };
    if end > start {
        // SAFETY: [start, end) lies within the allocation of `size` bytes at `memory`,
        // which nothing else uses yet; MADV_HUGEPAGE changes no contents, only how the
        // pages are backed.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn huge_pages(_memory: *mut u8, _size: usize) {}

/// Storage for a sorted buffer of `n` samples with room for its radix sort: 2n empty
/// slots, whose free half `SortedBuffer::sorted` sorts with (src/radix.rs: 0.76–0.88×
/// the in-place sort from n = 300 to 10^6 in storage already touched; 0.8–0.98× in
/// fresh storage, whose page faults cost about what the radix sort saves at 10^6:
/// docs/performance.md), or, where 2n slots are
/// beyond a buffer's capacity limit or the allocator, exactly n (the buffer then sorts
/// in place, in the same order: the two sorts agree bit for bit). At least one slot.
/// Zero-filled, so the scratch half costs address space, not memory, until it is used.
pub fn sorting_slots(n: usize) -> Result<Box<[Slot]>, AllocError> {
    let n = n.max(1);
    sorting_room(n)
        .and_then(|room| zeroed(room).ok())
        .map_or_else(|| zeroed(n), Ok)
}

/// 2n, if a buffer may hold that many slots.
fn sorting_room(n: usize) -> Option<usize> {
    n.checked_mul(2)
        .filter(|&room| crate::buffer::check_capacity(room).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_storage_holds_empty_values() {
        let slots = zeroed::<Slot>(1000).unwrap();
        assert_eq!(slots.len(), 1000);
        assert!(slots.iter().all(|s| *s == Slot::EMPTY));
        let ring = zeroed::<f64>(3).unwrap();
        assert_eq!(
            ring.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            [0, 0, 0]
        );
        assert!(zeroed::<Slot>(0).unwrap().is_empty());
        // Large enough for the huge-page hint (2^20 slots, 16 MiB): zeroed all the same.
        let large = zeroed::<Slot>(1 << 20).unwrap();
        assert_eq!(large.len(), 1 << 20);
        assert!(large.iter().all(|s| *s == Slot::EMPTY));
    }

    #[test]
    fn storage_too_large_for_the_address_space_is_an_error() {
        assert_eq!(
            zeroed::<Slot>(usize::MAX / 8).unwrap_err(),
            AllocError {
                len: usize::MAX / 8
            }
        );
        assert_eq!(
            filled(0u64, usize::MAX / 4).unwrap_err(),
            AllocError {
                len: usize::MAX / 4
            }
        );
        assert_eq!(&*filled(7u8, 3).unwrap(), &[7, 7, 7]);
    }

    #[test]
    fn sorting_slots_leave_room_for_the_radix_sort_when_they_can() {
        assert_eq!(sorting_slots(0).unwrap().len(), 2);
        assert_eq!(sorting_slots(5).unwrap().len(), 10);
        // Beyond half the capacity limit there is no room for the scratch.
        let max = crate::buffer::MAX_CAPACITY;
        assert_eq!(sorting_room(max / 2), Some(max / 2 * 2));
        assert_eq!(sorting_room(max / 2 + 1), None);
        assert_eq!(sorting_room(usize::MAX), None);
        // Where the allocator refuses even n, the error names n.
        assert_eq!(
            sorting_slots(usize::MAX / 8).unwrap_err(),
            AllocError {
                len: usize::MAX / 8
            }
        );
        // Sorting in either storage gives the same order and estimates.
        let scores: Vec<f64> = (0..1000u32)
            .map(|i| f64::from(i * 7919 % 1000) / 1000.0)
            .collect();
        let labels: Vec<u8> = (0..1000u32).map(|i| u8::from(i % 3 == 0)).collect();
        let mut roomy = sorting_slots(1000).unwrap();
        let mut tight = vec![Slot::EMPTY; 1000];
        let mut a = crate::SortedBuffer::with_storage(&mut roomy[..]).unwrap();
        let mut b = crate::SortedBuffer::with_storage(&mut tight[..]).unwrap();
        a.push_batch(&scores, &labels).unwrap();
        b.push_batch(&scores, &labels).unwrap();
        assert_eq!(a.sorted().slots(), b.sorted().slots());
    }
}
