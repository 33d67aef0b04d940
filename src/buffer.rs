//! The sorted sample buffer (SPEC §3.2, §4): every sample kept, in caller-owned storage
//! of fixed capacity, for equal-mass binning and the sweep.
//!
//! Pushes append (O(1)); [`SortedBuffer::sorted`] sorts once (an in-place radix sort, a
//! few passes over the samples: see `radix.rs`; only when new samples arrived since the
//! last call) and records the running hit count at every
//! position, so that the hits of any range of sorted positions cost O(1). From that:
//! one binning costs O(B) for its shape (counts, hits) and O(n) for its statistics, and
//! the sweep costs O(n log n + b*²) in all (O(b*² log n) for equal width).

use core::ops::Range;

use crate::binning::{Binning, Closure, EqualMassStarts, Ties};
use crate::error::{ConfigError, EstimateError, MergeError, PushError};
use crate::estimate::{self, Estimate};
use crate::norm::Norm;
use crate::prefix::PrefixSums;
use crate::sample;
use crate::stats::BinStats;
use crate::sweep::{self, SweepOptions};

/// One stored sample. Opaque: 16 bytes, the unit of a buffer's storage.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Slot {
    pub(crate) score: f64,
    /// Arrival index << 1 | label: sorting by (score, order) keeps equal scores in
    /// arrival order (SPEC §3.2) with an unstable, allocation-free sort (`radix.rs`).
    pub(crate) order: u32,
    /// Hits at sorted positions before this one (valid once sorted).
    pub(crate) hits_before: u32,
}

impl Slot {
    /// An unused slot.
    pub const EMPTY: Slot = Slot {
        score: 0.0,
        order: 0,
        hits_before: 0,
    };

    pub(crate) fn label(&self) -> u8 {
        (self.order & 1) as u8
    }
}

/// The most samples a buffer can hold: arrival indices take 31 bits of a slot.
pub const MAX_CAPACITY: usize = (1 << 31) - 1;

/// A buffer of (score, label) samples over storage `S`: inline (`[Slot; N]`), a slice
/// the caller owns (`&mut [Slot]`), or the unsized view `SortedBuffer<[Slot]>` that the
/// inline form coerces to (the form the C ABI lays over caller memory).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct SortedBuffer<S: ?Sized = [Slot]> {
    pub(crate) len: usize,
    /// Positions `..sorted` are in sorted order with valid `hits_before`.
    pub(crate) sorted: usize,
    pub(crate) hits: u64,
    /// What the pushes have told about the held slots, so that the sort need not read
    /// them first (see [`Appended`]).
    pub(crate) appended: Appended,
    /// How many of the free slots hold the prefix sums the last sort recorded
    /// (`prefix.rs`), 0 for none; read only while no sort is due (`sorted == len`).
    /// Pushes and merges write free slots only as they add to `len`, so that the next
    /// view sorts and records anew; whatever else writes slots or free slots sets it to
    /// 0. (A `u64`, fewer than 2^31, so that the C ABI's view has no padding on 32-bit
    /// targets either.)
    pub(crate) summed: u64,
    /// Last, so that the inline form coerces to the unsized view.
    pub(crate) slots: S,
}

/// What a buffer knows of its held slots from the pushes since its last `clear`, so that
/// the radix sort can skip most of the read that would find it out
/// (`radix::sort_and_count`): that they are a sorted prefix followed by slots in arrival
/// order, all arrived after it, and the bits in which the scores of the first `covered`
/// differ (the batches' scores, taken in as they are stored).
///
/// Known while only pushes (and merges of buffers that only pushed) have added slots;
/// whatever else writes slots (a reservoir's replacements, `held_mut`) makes it unknown,
/// and the sort then reads the slots as before. A single push only appends, in order:
/// its score is read by the sort with the others past `covered` (taking it in here
/// would cost each push more than the sort saves). The zero value is [`Appended::EMPTY`],
/// so that a zeroed C ABI state, which holds no slots, starts right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Appended {
    /// Whether the rest does not hold (0: it holds).
    unknown: u64,
    /// The held slots `any` and `not_all` take in, from the first.
    covered: u64,
    /// The OR of their scores' bits, and the OR of the bits' complements (the complement
    /// of their AND, so that 0 is the empty set's for both): they differ in
    /// `any & not_all`.
    any: u64,
    not_all: u64,
}

impl Appended {
    /// Nothing known: the sort reads the slots.
    pub(crate) const UNKNOWN: Appended = Appended {
        unknown: 1,
        ..Appended::EMPTY
    };
    /// No slots held: all zero.
    const EMPTY: Appended = Appended {
        unknown: 0,
        covered: 0,
        any: 0,
        not_all: 0,
    };

    /// Whether the slots are known in order.
    fn known(&self) -> bool {
        self.unknown == 0
    }

    /// Takes in the bits of `scores` (as stored) for the slots after the covered ones.
    fn take_in(&mut self, scores: impl Iterator<Item = f64>) {
        for score in scores {
            let bits = score.to_bits();
            (self.any, self.not_all) = (self.any | bits, self.not_all | !bits);
            // At most the capacity, < 2^31.
            self.covered = self.covered.wrapping_add(1);
        }
    }

    /// If known, the bits in which the scores of `held` (the held slots) differ: those
    /// of the covered ones and those read from the rest.
    pub(crate) fn varying(&self, held: &[Slot]) -> Option<u64> {
        let all_of = self.covering(held);
        all_of.known().then_some(all_of.any & all_of.not_all)
    }

    /// The same, covering all of `held` (the rest read). Before the slots are reordered
    /// (a sort), since what is covered is the first `covered` positions.
    pub(crate) fn covering(&self, held: &[Slot]) -> Appended {
        let mut all_of = *self;
        if self.known() {
            let rest = usize::try_from(self.covered)
                .ok()
                .and_then(|covered| held.get(covered..))
                .unwrap_or(held);
            all_of.take_in(rest.iter().map(|slot| slot.score));
        }
        all_of
    }
}

/// A buffer of `N` samples stored inline.
pub type InlineBuffer<const N: usize> = SortedBuffer<[Slot; N]>;

impl<const N: usize> SortedBuffer<[Slot; N]> {
    const VALID_CAPACITY: () = assert!(
        N > 0 && N <= MAX_CAPACITY,
        "capacity must be in 1..=MAX_CAPACITY"
    );

    /// An empty buffer of capacity `N`; `const`, so it can initialise a `static`.
    pub const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::VALID_CAPACITY;
        SortedBuffer {
            len: 0,
            sorted: 0,
            hits: 0,
            appended: Appended::EMPTY,
            summed: 0,
            slots: [Slot::EMPTY; N],
        }
    }
}

impl<const N: usize> Default for SortedBuffer<[Slot; N]> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> SortedBuffer<&'a mut [Slot]> {
    /// An empty buffer over caller-owned storage; its capacity is the slice length.
    pub fn with_storage(storage: &'a mut [Slot]) -> Result<Self, ConfigError> {
        check_capacity(storage.len())?;
        Ok(SortedBuffer {
            len: 0,
            sorted: 0,
            hits: 0,
            appended: Appended::EMPTY,
            summed: 0,
            slots: storage,
        })
    }
}

/// The capacity check of every buffer (and reservoir) constructor: at least 1
/// ([`ConfigError::ZeroCapacity`]), at most [`MAX_CAPACITY`]
/// ([`ConfigError::CapacityTooLarge`]). Public so that a host allocating a buffer's
/// storage can check first.
pub fn check_capacity(capacity: usize) -> Result<(), ConfigError> {
    match capacity {
        0 => Err(ConfigError::ZeroCapacity),
        capacity if capacity > MAX_CAPACITY => Err(ConfigError::CapacityTooLarge {
            capacity,
            max: MAX_CAPACITY,
        }),
        _ => Ok(()),
    }
}

/// A buffer that owns its slots on the heap (capacity chosen at run time).
#[cfg(feature = "std")]
pub type BoxedBuffer = SortedBuffer<Box<[Slot]>>;

#[cfg(feature = "std")]
impl SortedBuffer<Box<[Slot]>> {
    /// An empty buffer over storage it owns; its capacity is the slice length. Errors as
    /// [`SortedBuffer::with_storage`].
    pub fn with_boxed_storage(storage: Box<[Slot]>) -> Result<Self, ConfigError> {
        check_capacity(storage.len())?;
        Ok(SortedBuffer {
            len: 0,
            sorted: 0,
            hits: 0,
            appended: Appended::EMPTY,
            summed: 0,
            slots: storage,
        })
    }
}

impl<S: AsRef<[Slot]> + AsMut<[Slot]> + ?Sized> SortedBuffer<S> {
    /// Records one sample. A bad sample, or a full buffer, is refused and nothing changes.
    #[inline]
    pub fn push(&mut self, score: f64, label: u8) -> Result<(), PushError> {
        sample::check(score, label, 0)?;
        self.ensure_room(1)?;
        self.append(score, label);
        Ok(())
    }

    /// Records a batch: all of it, or (when any element is bad or it does not fit) none.
    pub fn push_batch(&mut self, scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
        sample::check_batch(scores, labels)?;
        self.ensure_room(scores.len())?;
        // The batch fits the free slots (just checked), so zipping with them takes all of
        // it; len + added ≤ capacity < 2^31 and hits ≤ len, so nothing wraps.
        let (len, mut hits) = (self.len, self.hits);
        // The batch's scores extend what is covered if it follows on from it (no single
        // pushes since); else the sort reads them with the rest.
        let mut appended = self.appended;
        let covers = appended.covered == len as u64;
        let free = self.slots.as_mut().get_mut(len..).unwrap_or_default();
        let mut added = 0usize;
        for (slot, (&score, &label)) in free.iter_mut().zip(scores.iter().zip(labels)) {
            // `+ 0.0` turns −0 into +0, as in `append`.
            let score = score + 0.0;
            *slot = Slot {
                score,
                order: (len.wrapping_add(added) as u32) << 1 | u32::from(label),
                hits_before: 0,
            };
            if covers {
                appended.take_in(core::iter::once(score));
            }
            added = added.wrapping_add(1);
            hits = hits.wrapping_add(u64::from(label));
        }
        self.len = len.wrapping_add(added);
        self.hits = hits;
        self.appended = appended;
        Ok(())
    }

    /// Appends another buffer's samples after this one's, in their arrival order: the
    /// result equals pushing both streams. If they do not fit, nothing changes.
    ///
    /// The counts cannot reach [`crate::MAX_COUNT`]: a buffer holds at most
    /// [`MAX_CAPACITY`] < 2^31 samples, checked here before anything is added, so the
    /// merged length, hits and arrival numbers (< 2^32 with the label bit) all fit.
    pub fn merge<T: AsRef<[Slot]> + ?Sized>(
        &mut self,
        other: &SortedBuffer<T>,
    ) -> Result<(), MergeError> {
        let (capacity, len, requested) = (self.capacity(), self.len, other.len);
        if requested > capacity.saturating_sub(len) {
            return Err(MergeError::Full {
                capacity,
                len,
                requested,
            });
        }
        let base = self.len as u32;
        // `requested` ≤ the free slots (checked above), so zipping them with the incoming
        // samples copies all `requested` of them; the sums below are those bounded above.
        let free = self.slots.as_mut().get_mut(len..).unwrap_or_default();
        for (slot, theirs) in free.iter_mut().zip(other.held()) {
            *slot = Slot {
                order: theirs.order.wrapping_add(base << 1),
                ..*theirs
            };
        }
        self.len = len.wrapping_add(requested);
        self.hits = self.hits.wrapping_add(other.hits);
        // The merged slots are in arrival order if the other buffer holds them so: it only
        // pushed, and has not sorted since its `clear`.
        let (mine, theirs) = (self.appended, other.appended);
        self.appended = if !mine.known() || !theirs.known() || other.sorted != 0 {
            Appended::UNKNOWN
        } else if mine.covered == len as u64 && theirs.covered == requested as u64 {
            // Both wholly covered: so is the result.
            Appended {
                unknown: 0,
                covered: self.len as u64,
                any: mine.any | theirs.any,
                not_all: mine.not_all | theirs.not_all,
            }
        } else {
            // The sort reads the rest, the merged slots with it.
            mine
        };
        Ok(())
    }

    /// Forgets every sample; the capacity stays.
    pub fn clear(&mut self) {
        self.len = 0;
        self.sorted = 0;
        self.hits = 0;
        self.appended = Appended::EMPTY;
        self.summed = 0;
    }

    fn ensure_room(&self, requested: usize) -> Result<(), PushError> {
        let (capacity, len) = (self.capacity(), self.len);
        // len ≤ capacity (see `held`): nothing saturates.
        if requested > capacity.saturating_sub(len) {
            return Err(PushError::Full {
                capacity,
                len,
                requested,
            });
        }
        Ok(())
    }

    /// Appends a checked sample; the caller has checked (`ensure_room`) that a slot is
    /// free, so `get_mut` finds it, and len + 1 ≤ capacity < 2^31 and hits ≤ len cannot
    /// overflow.
    #[inline]
    fn append(&mut self, score: f64, label: u8) {
        // `+ 0.0` turns −0 into +0, the same confidence, so that bits order like values.
        let order = (self.len as u32) << 1 | u32::from(label);
        if let Some(slot) = self.slots.as_mut().get_mut(self.len) {
            *slot = Slot {
                score: score + 0.0,
                order,
                hits_before: 0,
            };
            self.len = self.len.wrapping_add(1);
            self.hits = self.hits.wrapping_add(u64::from(label));
        }
    }

    /// The storage past the held samples, `slots[len..]`: scratch for whoever holds the
    /// buffer (the one-call functions' selection), whose contents mean nothing.
    #[cfg(feature = "ffi")]
    pub(crate) fn free_mut(&mut self) -> &mut [Slot] {
        self.summed = 0;
        let slots = self.slots.as_mut();
        let len = self.len.min(slots.len());
        slots.get_mut(len..).unwrap_or_default()
    }

    /// The held samples, `slots[..len]`, mutable (see [`SortedBuffer::held`]), for a
    /// caller that may move or replace them: what the pushes told is forgotten.
    pub(crate) fn held_mut(&mut self) -> &mut [Slot] {
        self.appended = Appended::UNKNOWN;
        self.summed = 0;
        held_prefix_mut(self.slots.as_mut(), self.len)
    }

    /// Puts the samples back in arrival order (to encode them) and returns them so. Slots
    /// already in that order (never sorted, or appended only) cost one O(n) read: the
    /// radix sort checks for sorted input first. A reservoir, whose replacements land
    /// anywhere, relies on the sort always happening.
    pub(crate) fn arrival_order(&mut self) -> impl Iterator<Item = (f64, u8)> + '_ {
        self.sorted = 0;
        self.summed = 0;
        // (Not `held_mut`: the same slots, now all in arrival order, so what the pushes
        // told stays true, once it covers them all.)
        self.appended = self.appended.covering(self.held());
        let slots = held_prefix_mut(self.slots.as_mut(), self.len);
        sort_by_arrival(slots);
        slots.iter().map(|slot| (slot.score, slot.label()))
    }

    /// As [`SortedBuffer::sorted`], sorting (if needed) with `scratch`, at least as many
    /// slots as the buffer holds, as its second array: a stable radix sort, a few times
    /// faster at large n. The view borrows the scratch too: the sort's prefix sums are
    /// there. With less scratch, sorts as `sorted` does. The scratch's contents before
    /// mean nothing, and after they mean something only to this view.
    pub fn sorted_with<'a>(&'a mut self, scratch: &'a mut [Slot]) -> SortedSamples<'a> {
        let mut summed = 0;
        let mut view = self.sorted_by(|slots, _free, sorted, appended| {
            summed = crate::radix::sort_and_count_in(slots, &mut *scratch, sorted, appended);
            // None in the buffer's own free slots.
            0
        });
        if summed > 0 {
            let scratch: &'a [Slot] = scratch;
            view.prefix = PrefixSums {
                sums: scratch.get(..summed).unwrap_or_default(),
            };
        }
        view
    }

    /// Sorts what arrived since the last call and returns the sorted view every
    /// equal-mass estimate and the sweep read.
    ///
    /// A buffer with room for twice the samples it holds sorts with the free slots as
    /// scratch (a radix sort, several times faster at large n: see `radix.rs`), which
    /// also leaves exact prefix sums of the scores every 64 sorted positions there
    /// (`prefix.rs`, until the next push, merge or sort): the view's bins then cost at
    /// most 64 slot reads each instead of a pass. A fuller buffer sorts in place, or
    /// takes the scratch from [`SortedBuffer::sorted_with`].
    pub fn sorted(&mut self) -> SortedSamples<'_> {
        self.sorted_by(crate::radix::sort_and_count_in)
    }

    /// As [`SortedBuffer::sorted`], on two of rayon's threads: the radix sort when the
    /// buffer holds at least 2^17 samples in arrival order (pushes and merges; not a
    /// reservoir's) and has room for twice as many. That sort records the same prefix
    /// sums as `sorted`'s (a view without them, after a sort in place, sums its bins on
    /// rayon's threads, from 2^16 samples). About 1.6× faster at 10^6 samples on two
    /// idle cores (docs/performance.md); the same order and estimates, bit for bit.
    /// Unlike `sorted`, it allocates (a second array for each thread's buckets, as long
    /// as its largest, the block sums, n/4 bytes, and rayon's bookkeeping), so it is
    /// `std` only. If rayon's pool cannot start (its threads cannot be spawned), it sorts
    /// as `sorted` does, on the calling thread. The C ABI's
    /// `tce_sorted_buffer_sort_parallel` calls it.
    #[cfg(feature = "std")]
    pub fn sorted_parallel(&mut self) -> SortedSamples<'_> {
        let mut sorted = self.sorted_by(crate::radix::sort_and_count_in_parallel);
        sorted.parallel = true;
        sorted
    }

    /// `sorted` with the sort `sort` (slots, scratch, sorted prefix length, what the
    /// pushes told), which returns how many of the scratch's first slots hold the prefix
    /// sums of `prefix.rs` it recorded (0: none).
    fn sorted_by(
        &mut self,
        sort: impl FnOnce(&mut [Slot], &mut [Slot], usize, Appended) -> usize,
    ) -> SortedSamples<'_> {
        let (len, hits) = (self.len, self.hits);
        let unsorted_from = (self.sorted < len).then_some(self.sorted);
        if unsorted_from.is_some() {
            // What covers the first slots before the sort covers them all.
            self.appended = self.appended.covering(self.held());
        }
        let appended = self.appended;
        let storage = self.slots.as_mut();
        // `len` ≤ capacity always; the clamp keeps the call free of a panic path.
        let (slots, free) = storage.split_at_mut(len.min(storage.len()));
        if let Some(sorted) = unsorted_from {
            // At most the free slots (< 2^31).
            self.summed = sort(slots, free, sorted, appended) as u64;
            // Only now: a sort that panics before it moves anything (rayon's pool failing
            // to start) leaves the buffer as it was.
            self.sorted = len;
        }
        let mut view = SortedSamples::new(slots, hits);
        // The free slots hold nothing else until the next push or write, which set
        // `summed` to 0.
        view.prefix = PrefixSums {
            sums: usize::try_from(self.summed)
                .ok()
                .and_then(|summed| free.get(..summed))
                .unwrap_or_default(),
        };
        view
    }
}

impl<S: AsRef<[Slot]> + ?Sized> SortedBuffer<S> {
    /// The number of samples held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The held samples, `slots[..len]`. Invariant: len ≤ capacity (a push and a merge
    /// check the room before they add, a decode checks the count against the capacity,
    /// `clear` sets 0), so the whole storage is never what this returns short of a
    /// broken invariant, and then it stays within the storage.
    pub(crate) fn held(&self) -> &[Slot] {
        let slots = self.slots.as_ref();
        slots.get(..self.len).unwrap_or(slots)
    }

    /// Whether the buffer holds no sample.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The most samples the buffer can hold.
    pub fn capacity(&self) -> usize {
        self.slots.as_ref().len()
    }

    /// The number of hits (label 1) held.
    pub fn hits(&self) -> u64 {
        self.hits
    }
}

/// The first `len` of `slots`: the held samples of a buffer or window, whose `len` never
/// exceeds its storage (each states why). Were it ever to, this is the whole storage,
/// never beyond it.
pub(crate) fn held_prefix_mut(slots: &mut [Slot], len: usize) -> &mut [Slot] {
    // Compared first (not `get_mut(..len)`) so that the fallback may use `slots`.
    if len <= slots.len() {
        &mut slots[..len]
    } else {
        slots
    }
}

pub(crate) use crate::radix::{sort_by_arrival, sort_by_score_then_arrival};

/// The statistics of the samples of `run`, summed in one pass.
fn summed(run: &[Slot]) -> BinStats {
    let mut stats = BinStats::EMPTY;
    for slot in run {
        stats.record(slot.score, slot.label());
    }
    stats
}

/// Stores in each sorted slot the number of hits before it, so that any range's hits
/// cost O(1).
pub(crate) fn record_running_hits(slots: &mut [Slot]) {
    record_running_hits_from(slots, 0);
}

/// [`record_running_hits`] for sorted slots after `hits` hits; returns the hits after
/// them.
pub(crate) fn record_running_hits_from(slots: &mut [Slot], mut hits: u32) -> u32 {
    for slot in slots {
        slot.hits_before = hits;
        // At most one per slot, and a buffer or window holds fewer than 2^31.
        hits = hits.wrapping_add(u32::from(slot.label()));
    }
    hits
}

/// A buffer's samples in sorted order (ties in arrival order), with O(1) range hit counts.
#[derive(Clone, Copy, Debug)]
pub struct SortedSamples<'a> {
    slots: &'a [Slot],
    hits: u64,
    /// The sorted scores' prefix sums, if the sort recorded them (`prefix.rs`).
    prefix: PrefixSums<'a>,
    /// Whether bins are summed on rayon's threads (`SortedBuffer::sorted_parallel`).
    #[cfg(feature = "std")]
    parallel: bool,
}

/// A parallel view of at least this many samples sums its bins on rayon's threads, and
/// each bin of at least this many in two halves.
#[cfg(feature = "std")]
const PARALLEL_BIN: usize = 1 << 16;

/// The bins' statistics of [`SortedSamples::bins`]: summed as they are asked for, or,
/// by a parallel view, all summed already.
enum Bins<L> {
    Lazy(L),
    #[cfg(feature = "std")]
    Summed(std::vec::IntoIter<BinStats>),
}

impl<L: Iterator<Item = BinStats>> Iterator for Bins<L> {
    type Item = BinStats;

    fn next(&mut self) -> Option<BinStats> {
        match self {
            Bins::Lazy(lazy) => lazy.next(),
            #[cfg(feature = "std")]
            Bins::Summed(summed) => summed.next(),
        }
    }
}

impl<'a> SortedSamples<'a> {
    /// A view of `slots`, which the caller has sorted (ties in arrival order) and given
    /// valid running hit counts; `hits` is their total.
    pub(crate) fn new(slots: &'a [Slot], hits: u64) -> Self {
        SortedSamples {
            slots,
            hits,
            prefix: PrefixSums::NONE,
            #[cfg(feature = "std")]
            parallel: false,
        }
    }

    /// The statistics of the sorted slots `range` (within the slots): from the running
    /// hit counts and the prefix sums where the sort recorded them, else summed.
    fn stats_in(&self, range: Range<usize>) -> BinStats {
        // count = range.len() ≤ n < 2^31, hits ≤ count.
        let (count, hits) = (range.len() as u64, self.hits_in(range.clone()));
        match self.prefix.quanta(self.slots, range.clone()) {
            Some(quanta) => BinStats::from_quanta(count, hits, quanta),
            None => self.stats_of(self.slots.get(range).unwrap_or_default()),
        }
    }

    /// Whether `len` samples are summed on rayon's threads: the view is parallel, they
    /// are many, and the pool has more than one (`radix::two_threads::threads`: a pool
    /// that cannot start has none; short views never start it).
    #[cfg(feature = "std")]
    fn on_threads(&self, len: usize) -> bool {
        self.parallel && len >= PARALLEL_BIN && crate::radix::two_threads::threads() > 1
    }

    /// The statistics of `run`, sorted slots: on two threads when the view is parallel
    /// and the run long.
    fn stats_of(&self, run: &[Slot]) -> BinStats {
        #[cfg(feature = "std")]
        if self.on_threads(run.len()) {
            let (low, high) = run.split_at(run.len() / 2);
            let (mut stats, other) = rayon::join(|| summed(low), || summed(high));
            // Never refused: the two halves hold fewer than MAX_COUNT samples.
            if stats.merge(&other).is_ok() {
                return stats;
            }
        }
        summed(run)
    }

    /// The number of samples n.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The sorted slots themselves, for views that weigh them (the bootstrap's
    /// resamples, `crate::report::weighted`).
    #[cfg(feature = "std")]
    pub(crate) fn slots(&self) -> &'a [Slot] {
        self.slots
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The samples as (score, label), in sorted order.
    pub fn iter(&self) -> impl Iterator<Item = (f64, u8)> + 'a {
        self.slots.iter().map(|s| (s.score, s.label()))
    }

    /// The groups of equal scores, in order, as (score, samples): d of them for d
    /// distinct scores, found in O(d log n). With d small, binned estimators can tell at
    /// most d groups of samples apart (equal width, or equal mass with ties kept); equal
    /// mass with ties split divides a group by arrival order instead.
    pub fn tie_groups(&self) -> impl Iterator<Item = (f64, usize)> + '_ {
        let mut start = 0usize;
        core::iter::from_fn(move || {
            let score = self.slots.get(start)?.score;
            // The group holding `start` ends where `after_ties(start + 1)` says.
            let end = self.after_ties(start.wrapping_add(1));
            let len = end.wrapping_sub(start);
            start = end;
            Some((score, len))
        })
    }

    /// The number of distinct scores d: O(d log n) ([`SortedSamples::tie_groups`]).
    pub fn distinct_scores(&self) -> usize {
        self.tie_groups().count()
    }

    /// Hits at sorted positions before `position` (0..=n).
    fn hits_before(&self, position: usize) -> u64 {
        self.slots
            .get(position)
            .map_or(self.hits, |s| u64::from(s.hits_before))
    }

    /// Hits at the sorted positions `range` (start ≤ end ≤ n), from the running hit
    /// counts, which never decrease.
    fn hits_in(&self, range: Range<usize>) -> u64 {
        self.hits_before(range.end)
            .wrapping_sub(self.hits_before(range.start))
    }

    /// The end of the group of scores equal to the one at `position`, if the group started
    /// before it; else `position` itself.
    fn after_ties(&self, position: usize) -> usize {
        let inside_group = position > 0
            && position < self.slots.len()
            && self.slots[position - 1].score == self.slots[position].score;
        if !inside_group {
            return position;
        }
        let score = self.slots[position].score;
        // At most n: the partition point is within the slots after `position`.
        position.wrapping_add(self.slots[position..].partition_point(|s| s.score == score))
    }

    /// The first sorted position of each of the `bins` bins, then n: `bins + 1` values.
    fn bin_starts(&self, binning: Binning, bins: usize) -> impl Iterator<Item = usize> + '_ {
        let n = self.slots.len();
        let mut equal_mass = EqualMassStarts::new(n, bins);
        (0..=bins).map(move |k| match binning {
            Binning::EqualMass(Ties::Split) => equal_mass.next().unwrap_or(n),
            Binning::EqualMass(Ties::Keep) => self.after_ties(equal_mass.next().unwrap_or(n)),
            Binning::EqualWidth(closure) => match k {
                0 => 0,
                k if k == bins => n,
                k => self
                    .slots
                    .partition_point(|s| closure.bin_index(s.score, bins) < k),
            },
        })
    }

    /// The sorted positions of each bin, bin 0 first.
    fn bin_ranges(&self, binning: Binning, bins: usize) -> impl Iterator<Item = Range<usize>> + '_ {
        let mut starts = self.bin_starts(binning, bins);
        let mut start = starts.next().unwrap_or(0);
        starts.map(move |end| {
            let range = start..end;
            start = end;
            range
        })
    }

    /// The statistics of each bin of a binning with `bins` bins (O(n) in all).
    pub fn bins(&self, binning: Binning, bins: usize) -> impl Iterator<Item = BinStats> + '_ {
        // The starts never decrease and end at n (see `bin_starts`): every range is in
        // order and within the samples.
        let stats = move |range: Range<usize>| self.stats_in(range);
        #[cfg(feature = "std")]
        if self.prefix.sums.is_empty() && bins > 1 && self.on_threads(self.slots.len()) {
            // All the bins at once on rayon's threads (one hand-over, not one a bin; the
            // long bins split further in `stats_of`), in bin order.
            use rayon::prelude::*;
            let ranges: std::vec::Vec<Range<usize>> = self.bin_ranges(binning, bins).collect();
            let summed: std::vec::Vec<BinStats> = ranges.into_par_iter().map(stats).collect();
            return Bins::Summed(summed.into_iter());
        }
        Bins::Lazy(self.bin_ranges(binning, bins).map(stats))
    }

    /// The statistics of each bin with the smallest and largest score in it (`None` for
    /// an empty bin): what a reliability diagram of equal-mass bins, which have no fixed
    /// edges, shows. Bins cover consecutive sorted positions, so these are the first and
    /// last score of each bin's run.
    pub fn bins_with_score_ranges(
        &self,
        binning: Binning,
        bins: usize,
    ) -> impl Iterator<Item = (BinStats, Option<(f64, f64)>)> + '_ {
        self.bin_ranges(binning, bins).map(move |range| {
            // The ranges partition 0..n (bin_ranges over these slots): `get` only spares
            // a panic path.
            let run = self.slots.get(range.clone()).unwrap_or(&[]);
            let stats = self.stats_in(range);
            let scores = run.first().zip(run.last()).map(|(a, b)| (a.score, b.score));
            (stats, scores)
        })
    }

    fn checked_bins(&self, bins: usize) -> Result<(), EstimateError> {
        estimate::check_bins(bins)?;
        if self.slots.is_empty() {
            return Err(EstimateError::NoSamples);
        }
        Ok(())
    }

    /// ECE_bin with `bins` bins.
    pub fn ece_bin(
        &self,
        binning: Binning,
        bins: usize,
        norm: Norm,
    ) -> Result<Estimate, EstimateError> {
        self.checked_bins(bins)?;
        estimate::ece_bin(self.bins(binning, bins), norm)
    }

    /// The maximum calibration error with `bins` bins.
    pub fn mce(&self, binning: Binning, bins: usize) -> Result<Estimate, EstimateError> {
        self.checked_bins(bins)?;
        estimate::mce(self.bins(binning, bins))
    }

    /// ECE_debias with `bins` bins.
    pub fn ece_debias(
        &self,
        binning: Binning,
        bins: usize,
        norm: Norm,
    ) -> Result<Estimate, EstimateError> {
        self.checked_bins(bins)?;
        estimate::ece_debias(self.bins(binning, bins), norm)
    }

    /// b* of the monotone sweep (SPEC §4; on tied scores, see [`crate::sweep`]).
    /// Independent of p.
    pub fn sweep_bins(
        &self,
        binning: Binning,
        options: SweepOptions,
    ) -> Result<usize, EstimateError> {
        sweep::sweep_bins(self, binning, options)
    }

    /// ECE_sweep: ECE_bin with b* bins; the estimate's `bins` is b*.
    pub fn ece_sweep(
        &self,
        binning: Binning,
        norm: Norm,
        options: SweepOptions,
    ) -> Result<Estimate, EstimateError> {
        let bins = self.sweep_bins(binning, options)?;
        estimate::ece_bin(self.bins(binning, bins), norm)
    }
}

impl sweep::SortedPositions for SortedSamples<'_> {
    fn positions(&self) -> usize {
        self.slots.len()
    }

    fn hits_before(&self, p: usize) -> u64 {
        SortedSamples::hits_before(self, p)
    }

    fn after_ties(&self, p: usize) -> usize {
        SortedSamples::after_ties(self, p)
    }

    fn width_bin_end(&self, p: usize, closure: Closure, bins: usize) -> usize {
        let rest = self.slots.get(p..).unwrap_or_default();
        let Some(first) = rest.first() else {
            return p;
        };
        let bin = closure.bin_index(first.score, bins);
        // Sorted scores have non-decreasing bins; at most n.
        p.wrapping_add(rest.partition_point(|s| closure.bin_index(s.score, bins) <= bin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Binning, Ties};
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Push(f64, u8),
        PushBatch(Vec<(f64, u8)>),
        Sort {
            parallel: bool,
        },
        /// Merges a buffer of these pushes, sorted first or not.
        Merge {
            samples: Vec<(f64, u8)>,
            sorted: bool,
        },
        ArrivalOrder,
        Clear,
    }

    fn sample() -> impl Strategy<Value = (f64, u8)> {
        let score = prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(1.0),
            Just(0.5),
            (0u32..8).prop_map(|k| f64::from(k) / 8.0),
            0.0..=1.0f64,
        ];
        (score, 0u8..2)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            sample().prop_map(|(s, l)| Op::Push(s, l)),
            prop::collection::vec(sample(), 0..40).prop_map(Op::PushBatch),
            any::<bool>().prop_map(|parallel| Op::Sort { parallel }),
            (prop::collection::vec(sample(), 0..40), any::<bool>())
                .prop_map(|(samples, sorted)| Op::Merge { samples, sorted }),
            Just(Op::ArrivalOrder),
            Just(Op::Clear),
        ]
    }

    /// The view's bins (from the prefix sums its sort left, if any) are those of a view
    /// of the same slots that sums every bin slot by slot.
    fn same_bins_as_summed(view: SortedSamples<'_>) -> Result<(), TestCaseError> {
        let summed = SortedSamples::new(view.slots, view.hits);
        for bins in [1, 2, 3, 7, 15] {
            for binning in [
                Binning::EqualMass(Ties::Split),
                Binning::EqualMass(Ties::Keep),
            ] {
                prop_assert!(view.bins(binning, bins).eq(summed.bins(binning, bins)));
            }
        }
        Ok(())
    }

    proptest! {
        /// Whenever a buffer says what its pushes told (`Appended`), it is what the sort's
        /// own reading would find; and it says so unless a merge of sorted samples came
        /// since the last `clear`. And every sort's view has the bins of one summed slot
        /// by slot, whatever came before (its prefix sums are never stale).
        #[test]
        fn what_the_pushes_tell_is_what_the_slots_hold(ops in prop::collection::vec(op(), 1..30)) {
            let mut storage = vec![Slot::EMPTY; 800];
            let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
            let mut merged_sorted = false;
            for op in ops {
                match op {
                    Op::Push(score, label) => {
                        let _ = buffer.push(score, label);
                    }
                    Op::PushBatch(samples) => {
                        let (scores, labels): (Vec<f64>, Vec<u8>) = samples.into_iter().unzip();
                        let _ = buffer.push_batch(&scores, &labels);
                    }
                    Op::Sort { parallel: false } => {
                        same_bins_as_summed(buffer.sorted())?;
                    }
                    #[cfg(feature = "std")]
                    Op::Sort { parallel: true } => {
                        same_bins_as_summed(buffer.sorted_parallel())?;
                    }
                    #[cfg(not(feature = "std"))]
                    Op::Sort { parallel: true } => {}
                    Op::Merge { samples, sorted } => {
                        let mut theirs = vec![Slot::EMPTY; 40];
                        let mut other = SortedBuffer::with_storage(&mut theirs).unwrap();
                        for (score, label) in samples {
                            other.push(score, label).unwrap();
                        }
                        if sorted {
                            other.sorted();
                        }
                        if buffer.merge(&other).is_ok() && sorted && !other.is_empty() {
                            merged_sorted = true;
                        }
                    }
                    Op::ArrivalOrder => {
                        let _ = buffer.arrival_order().count();
                    }
                    Op::Clear => {
                        buffer.clear();
                        merged_sorted = false;
                    }
                }
                let told = buffer.appended.varying(buffer.held());
                prop_assert_eq!(told.is_some(), !merged_sorted);
                if let Some(varying) = told {
                    prop_assert_eq!(
                        crate::radix::appended_in_order(buffer.held(), buffer.sorted),
                        (true, varying)
                    );
                }
            }
        }
    }

    proptest! {
        /// A full buffer sorted with lent scratch: its view reads the sums the sort left
        /// there, and has the bins of one summed slot by slot; asked again with no new
        /// samples (and the scratch overwritten), it sorts nothing and reads no sums.
        #[test]
        fn a_view_of_lent_scratch_reads_its_sums(samples in prop::collection::vec(sample(), 33..300)) {
            let (scores, labels): (Vec<f64>, Vec<u8>) = samples.into_iter().unzip();
            let mut storage = vec![Slot::EMPTY; scores.len()];
            let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
            buffer.push_batch(&scores, &labels).unwrap();
            let mut scratch = vec![Slot::EMPTY; scores.len()];
            let view = buffer.sorted_with(&mut scratch);
            prop_assert!(!view.prefix.sums.is_empty());
            same_bins_as_summed(view)?;
            scratch.fill(Slot { score: 0.5, order: u32::MAX, hits_before: u32::MAX });
            let view = buffer.sorted_with(&mut scratch);
            prop_assert!(view.prefix.sums.is_empty());
            same_bins_as_summed(view)?;
        }
    }

    proptest! {
        /// The distinct scores counted by jumping over tie groups are those of a sort and
        /// dedup of the scores.
        #[test]
        fn distinct_scores_are_counted(samples in prop::collection::vec(sample(), 1..200)) {
            let mut storage = vec![Slot::EMPTY; samples.len()];
            let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
            for &(score, label) in &samples {
                buffer.push(score, label).unwrap();
            }
            let mut scores: Vec<f64> = samples.iter().map(|s| s.0).collect();
            scores.sort_by(f64::total_cmp);
            scores.dedup_by(|a, b| a == b);
            let sorted = buffer.sorted();
            prop_assert_eq!(sorted.distinct_scores(), scores.len());
            let groups: Vec<(f64, usize)> = sorted.tie_groups().collect();
            prop_assert_eq!(groups.iter().map(|g| g.1).sum::<usize>(), samples.len());
            for &(score, len) in &groups {
                prop_assert_eq!(samples.iter().filter(|s| s.0 == score).count(), len);
            }
        }
    }

    /// A reservoir's replacements land anywhere: its buffer never says it knows.
    #[test]
    fn a_reservoirs_storage_is_read_by_the_sort() {
        let mut storage = vec![Slot::EMPTY; 4];
        let mut reservoir = crate::reservoir::Reservoir::with_storage(&mut storage, 7).unwrap();
        reservoir.push(0.5, 1).unwrap();
        assert_eq!(reservoir.buffer.appended, Appended::UNKNOWN);
    }
}
