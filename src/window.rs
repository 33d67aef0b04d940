//! The sliding window: the most recent N samples of an endless stream, kept sorted, so
//! that every estimator of the sorted buffer reads the current window.
//!
//! A push into a full window evicts the oldest sample. Both are found by binary search
//! (the oldest through a ring of the last N scores), and only the slots between the
//! evicted and the inserted position move: O(log N + d) with d ≤ N the distance between
//! them, one `memmove` of 16-byte slots, never a re-sort. While the window fills, pushes
//! append in O(1) and the first eviction sorts once; a batch long enough to evict more
//! than ~8·log2 N samples rebuilds the window instead (O(N + m), then one sort).
//! Estimates recompute the running hit counts once after pushes (O(N)), then cost what
//! they cost on a sorted buffer.

use crate::buffer::{
    held_prefix_mut, record_running_hits, sort_by_arrival, sort_by_score_then_arrival, Slot,
    SortedSamples, MAX_CAPACITY,
};
use crate::error::{ConfigError, MergeError, PushError};
use crate::limits::{add_counts, batch_count};
use crate::sample;

/// The largest window: relative arrival numbers must stay below 2^31 between rebasings.
pub const MAX_WINDOW: usize = MAX_CAPACITY / 2;

/// The most recent `capacity` samples, sorted, over slot storage `S` and a ring `R` of
/// the last scores (each of length `capacity`: 24 bytes per sample in all).
#[derive(Clone, Debug)]
pub struct SlidingWindow<S, R> {
    slots: S,
    ring: R,
    len: usize,
    /// Samples ever pushed; arrival a's score sits at ring[a % capacity].
    arrivals: u64,
    /// Arrival numbers in slots are relative to this, to fit their 31 bits.
    base: u64,
    hits: u64,
    /// The slots are not in sorted order (samples were appended, or a batch replaced
    /// most of the window): sort before the next eviction or estimate.
    unsorted: bool,
    /// The running hit counts need recomputing.
    stale: bool,
    /// Always zero: the struct has no implicit padding, so a copy of it (the C ABI keeps
    /// it in caller memory) never carries stray bytes from the stack.
    #[allow(dead_code)] // never read: it only fills the layout
    zero_padding: [u8; WINDOW_PADDING],
}

/// Bytes of explicit padding after the two flags: the fields before them take
/// `size_of::<usize>() + 24 + 2` bytes, rounded here to 40 on 32- and 64-bit targets.
const WINDOW_PADDING: usize = 14 - core::mem::size_of::<usize>();

/// A window of `N` samples stored inline.
pub type InlineWindow<const N: usize> = SlidingWindow<[Slot; N], [f64; N]>;

impl<const N: usize> SlidingWindow<[Slot; N], [f64; N]> {
    const VALID_CAPACITY: () = assert!(
        N > 0 && N <= MAX_WINDOW,
        "window size must be in 1..=MAX_WINDOW"
    );

    /// An empty window of `N` samples; `const`, so it can initialise a `static`.
    pub const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::VALID_CAPACITY;
        SlidingWindow {
            slots: [Slot::EMPTY; N],
            ring: [0.0; N],
            len: 0,
            arrivals: 0,
            base: 0,
            hits: 0,
            unsorted: false,
            stale: false,
            zero_padding: [0; WINDOW_PADDING],
        }
    }
}

impl<const N: usize> Default for SlidingWindow<[Slot; N], [f64; N]> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> SlidingWindow<&'a mut [Slot], &'a mut [f64]> {
    /// An empty window over caller-owned storage: `slots` and `ring` must have the same
    /// length, the window's size.
    pub fn with_storage(slots: &'a mut [Slot], ring: &'a mut [f64]) -> Result<Self, ConfigError> {
        Self::over(slots, ring)
    }
}

/// A window that owns its storage on the heap (size chosen at run time).
#[cfg(feature = "std")]
pub type BoxedWindow = SlidingWindow<Box<[Slot]>, Box<[f64]>>;

#[cfg(feature = "std")]
impl SlidingWindow<Box<[Slot]>, Box<[f64]>> {
    /// An empty window over storage it owns; errors as [`SlidingWindow::with_storage`].
    pub fn with_boxed_storage(slots: Box<[Slot]>, ring: Box<[f64]>) -> Result<Self, ConfigError> {
        Self::over(slots, ring)
    }
}

/// The size check of every window constructor: at least 1
/// ([`ConfigError::ZeroCapacity`]), at most [`MAX_WINDOW`]
/// ([`ConfigError::CapacityTooLarge`]). Public so that a host allocating a window's
/// storage can check first.
pub fn check_size(size: usize) -> Result<(), ConfigError> {
    match size {
        0 => Err(ConfigError::ZeroCapacity),
        capacity if capacity > MAX_WINDOW => Err(ConfigError::CapacityTooLarge {
            capacity,
            max: MAX_WINDOW,
        }),
        _ => Ok(()),
    }
}

impl<S: AsRef<[Slot]>, R: AsRef<[f64]>> SlidingWindow<S, R> {
    /// An empty window over `slots` and `ring` (checked: equal lengths, the size).
    fn over(slots: S, ring: R) -> Result<Self, ConfigError> {
        let (size, ring_len) = (slots.as_ref().len(), ring.as_ref().len());
        check_size(size)?;
        match (size, ring_len) {
            (s, r) if s != r => Err(ConfigError::StorageMismatch { slots: s, ring: r }),
            _ => Ok(SlidingWindow {
                slots,
                ring,
                len: 0,
                arrivals: 0,
                base: 0,
                hits: 0,
                unsorted: false,
                stale: false,
                zero_padding: [0; WINDOW_PADDING],
            }),
        }
    }
}

impl<S: AsRef<[Slot]> + AsMut<[Slot]>, R: AsRef<[f64]> + AsMut<[f64]>> SlidingWindow<S, R> {
    /// Records one sample, evicting the oldest when the window is full. A bad sample is
    /// refused, and so is one that would take `seen` past [`crate::MAX_COUNT`]
    /// ([`PushError::CountOverflow`]): nothing changes.
    pub fn push(&mut self, score: f64, label: u8) -> Result<(), PushError> {
        sample::check(score, label, 0)?;
        add_counts(self.arrivals, 1)?;
        self.insert(score + 0.0, label); // −0 as +0, as in the sorted buffer
        Ok(())
    }

    /// Records a batch in order: all of it, or (when any element is bad, or the batch
    /// would take `seen` past [`crate::MAX_COUNT`]) none of it.
    pub fn push_batch(&mut self, scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
        sample::check_batch(scores, labels)?;
        // Checked once for the batch: below, `arrivals` + anything up to the batch's
        // length cannot overflow.
        add_counts(self.arrivals, batch_count(scores.len())?)?;
        let capacity = self.capacity();
        // One eviction moves ~N/3 slots; rebuilding the window moves and sorts all N.
        // Past about 8·log2 N evictions, the rebuild is cheaper.
        let rebuild_from = 8 * (usize::BITS - capacity.leading_zeros()) as usize;
        // len ≤ capacity: nothing saturates.
        if scores.len() > capacity.saturating_sub(self.len) && scores.len() >= rebuild_from {
            self.replace_oldest(scores, labels);
        } else {
            for (&score, &label) in scores.iter().zip(labels) {
                self.insert(score + 0.0, label);
            }
        }
        Ok(())
    }

    /// The ring position of `arrival`: arrival mod N. The window's size N is at least 1
    /// (`new` and `with_storage` refuse 0); the fallback for 0 is never taken.
    fn ring_index(&self, arrival: u64) -> usize {
        // Below N ≤ MAX_WINDOW: fits a usize.
        arrival.checked_rem(self.capacity() as u64).unwrap_or(0) as usize
    }

    /// Records a checked sample; the caller has checked that `arrivals` + 1 is within
    /// [`crate::MAX_COUNT`].
    ///
    /// Invariants every line below relies on: `slots` and `ring` both have the window's
    /// size N ≥ 1 (checked at construction, and the C ABI re-attaches the same storage);
    /// len ≤ N; base ≤ the arrival of every held sample, and arrivals − base < 2^31
    /// (`rebase` keeps it so); hits counts the held samples' labels. The arithmetic
    /// below therefore never wraps (`wrapping_` says so without an overflow check), and
    /// every slot or ring cell looked up exists (`get_mut` finds it).
    fn insert(&mut self, score: f64, label: u8) {
        let capacity = self.capacity();
        if self.arrivals.wrapping_sub(self.base) >= (1 << 31) - 1 {
            self.rebase();
        }
        let order = (self.arrivals.wrapping_sub(self.base) as u32) << 1 | u32::from(label);
        let new = Slot {
            score,
            order,
            hits_before: 0,
        };
        if self.len < capacity {
            // Filling up: append, sort once when the first eviction (or estimate) needs it.
            if let Some(slot) = self.slots.as_mut().get_mut(self.len) {
                *slot = new;
                self.len = self.len.wrapping_add(1);
            }
            self.unsorted = true;
        } else {
            self.ensure_sorted();
            // A full window has seen at least N samples.
            let oldest = self.arrivals.wrapping_sub(capacity as u64);
            let old_score = self.ring.as_ref().get(self.ring_index(oldest));
            let old_key = (
                old_score.map_or(0, |s| s.to_bits()),
                oldest.wrapping_sub(self.base) as u32,
            );
            let slots = self.slots.as_mut();
            let found = slots.binary_search_by(|s| (s.score.to_bits(), s.order >> 1).cmp(&old_key));
            // The oldest is always present; `unwrap_or_else` keeps this path panic-free.
            let old = found.unwrap_or_else(|at| at.min(capacity.saturating_sub(1)));
            let evicted = slots.get(old).map_or(0, |s| u64::from(s.label()));
            self.hits = self.hits.wrapping_sub(evicted);
            // The newest arrival goes after every equal score: the slots between the
            // evicted and the new position shift by one towards the evicted one.
            let key = score.to_bits();
            let at = slots.partition_point(|s| s.score.to_bits() <= key);
            if at > old {
                // slots[old] leaves, slots[old + 1..at] move down, the new one is at − 1.
                // (One memmove; the ranges are checked so that the compiler sees they fit.)
                if let Some(moved) = slots.get_mut(old..at) {
                    if !moved.is_empty() {
                        moved.copy_within(1.., 0);
                    }
                    if let Some(last) = moved.last_mut() {
                        *last = new;
                    }
                }
            } else if let Some(moved) = slots.get_mut(at..=old) {
                // slots[old] leaves, slots[at..old] move up, the new one is at `at`.
                if let Some(shifted) = moved.len().checked_sub(1) {
                    moved.copy_within(..shifted, 1);
                }
                if let Some(first) = moved.first_mut() {
                    *first = new;
                }
            }
        }
        let cell = self.ring_index(self.arrivals);
        if let Some(cell) = self.ring.as_mut().get_mut(cell) {
            *cell = score;
        }
        self.arrivals = self.arrivals.wrapping_add(1);
        self.hits = self.hits.wrapping_add(u64::from(label));
        self.stale = true;
    }

    /// Pushes a long, validated batch at once: drops every held sample it evicts, appends
    /// the part of the batch that stays, and leaves the sort for later. O(N + m). The
    /// caller has checked that `arrivals` + the batch's length is within
    /// [`crate::MAX_COUNT`], so `total` cannot overflow.
    ///
    /// The invariants of [`Self::insert`] hold, so the arithmetic never wraps and every
    /// slot and ring cell looked up exists.
    fn replace_oldest(&mut self, scores: &[f64], labels: &[u8]) {
        let capacity = self.capacity() as u64;
        let total = self.arrivals.wrapping_add(scores.len() as u64);
        let keep_from = total.saturating_sub(capacity); // the oldest arrival that stays
        let (mut kept, mut hits) = self.drop_before(keep_from);
        // The batch's samples that stay: those from arrival `keep_from` on, at most
        // `capacity` of them (the index is below the batch's length, a `usize`).
        let first = keep_from.saturating_sub(self.arrivals) as usize;
        // (A bounded range, not `enumerate`: no overflow path.)
        let staying = (0..scores.len()).zip(scores.iter().zip(labels)).skip(first);
        // The survivors above all arrived in [keep_from, arrivals), so `kept` ≤
        // arrivals − keep_from, and the batch adds total − max(keep_from, arrivals):
        // together at most total − keep_from ≤ capacity, so every staying sample has a
        // slot. Zipping with the free slots makes that hold by construction, so no index
        // here can leave the storage even if the bookkeeping were wrong.
        let free = self
            .slots
            .as_mut()
            .get_mut(kept..)
            .unwrap_or_default()
            .iter_mut();
        let ring = self.ring.as_mut();
        for (slot, (i, (&score, &label))) in free.zip(staying) {
            let arrival = self.arrivals.wrapping_add(i as u64);
            // < 2^31: base ≤ arrival and arrival − base < capacity ≤ MAX_WINDOW.
            let order = (arrival.wrapping_sub(self.base) as u32) << 1 | u32::from(label);
            *slot = Slot {
                score: score + 0.0,
                order,
                hits_before: 0,
            };
            // `% capacity` keeps the ring index in range (capacity ≥ 1).
            let cell = arrival.checked_rem(capacity).unwrap_or(0) as usize;
            if let Some(cell) = ring.get_mut(cell) {
                *cell = score + 0.0;
            }
            hits = hits.wrapping_add(u64::from(label));
            kept = kept.wrapping_add(1);
        }
        self.len = kept;
        self.arrivals = total;
        self.hits = hits;
        self.unsorted = true;
        self.stale = true;
    }

    /// Drops the held samples that arrived before `keep_from` (at least the oldest
    /// held's arrival, at most `arrivals`), moves the survivors to the front in their
    /// order, renumbers them from `keep_from` (which becomes `base`), and returns how many
    /// stay and their hits. `len` and `hits` are the caller's to set once it has added
    /// what follows the survivors. O(len).
    ///
    /// The survivors arrived in [keep_from, arrivals), so their new relative arrival
    /// numbers are below arrivals − keep_from; every caller keeps that at most the
    /// capacity (< 2^30), so they fit the 31 bits of a slot.
    fn drop_before(&mut self, keep_from: u64) -> (usize, u64) {
        let mut kept = 0usize;
        let mut hits = 0u64;
        let base = self.base;
        let held = held_prefix_mut(self.slots.as_mut(), self.len);
        for i in 0..held.len() {
            let slot = held[i];
            let arrival = base.wrapping_add(u64::from(slot.order >> 1));
            if arrival >= keep_from {
                // Renumber from the new oldest; the sorted order of survivors stays.
                let relative = (arrival - keep_from) as u32;
                // kept ≤ i: the survivors move down, never past where they were read.
                if let Some(to) = held.get_mut(kept) {
                    *to = Slot {
                        order: relative << 1 | (slot.order & 1),
                        ..slot
                    };
                }
                hits = hits.wrapping_add(u64::from(slot.label()));
                kept = kept.wrapping_add(1);
            }
        }
        self.base = keep_from;
        (kept, hits)
    }

    /// Merges `other` into this window: the result is exactly this window after pushing
    /// the samples `other` holds, oldest first. So with this window's size N it holds the
    /// N most recent samples of this window's stream followed by `other`'s held samples
    /// (the samples `other` has already evicted are gone: they cannot be merged), and
    /// `seen` grows by `other.len()`. The sizes may differ (the result has this window's
    /// size), and the order matters: `a.merge(&b)` puts `b`'s samples after `a`'s.
    /// Merges are associative in the samples they hold when all sizes are equal.
    ///
    /// Error: [`MergeError::CountOverflow`] when `seen` would pass [`crate::MAX_COUNT`];
    /// nothing changes then. O(N + M) for sizes N and M, no allocation; the next estimate
    /// sorts once.
    pub fn merge<S2: AsRef<[Slot]>, R2>(
        &mut self,
        other: &SlidingWindow<S2, R2>,
    ) -> Result<(), MergeError> {
        let incoming = other.len;
        // len ≤ capacity < 2^30: the cast is lossless.
        let total = add_counts(self.arrivals, incoming as u64)?;
        if incoming == 0 {
            return Ok(());
        }
        let capacity = self.capacity() as u64;
        // The oldest arrival that stays.
        let keep_from = total.saturating_sub(capacity);
        // `other`'s held samples are its last `incoming` arrivals; the j-th oldest of
        // them becomes this window's arrival `arrivals + j`, and stays if that is at
        // least `keep_from`.
        let (arrivals, theirs_oldest) =
            (self.arrivals, other.arrivals.wrapping_sub(incoming as u64));
        let first_staying = keep_from.saturating_sub(arrivals);
        let (mut kept, mut hits) = self.drop_before(keep_from);
        // `other`'s invariants (those of `insert`): its held slots are `slots[..len]`,
        // and each one's arrival, base + its relative number, is in
        // [theirs_oldest, other.arrivals). Their order in the slots does not matter: each
        // carries its arrival number, and each writes its own ring cell.
        let staying = other
            .slots
            .as_ref()
            .get(..incoming)
            .unwrap_or_default()
            .iter()
            .filter_map(|slot| {
                let theirs = other.base.wrapping_add(u64::from(slot.order >> 1));
                let j = theirs.wrapping_sub(theirs_oldest);
                (j >= first_staying).then_some((arrivals.wrapping_add(j), slot))
            });
        // As in `replace_oldest`: the survivors and the staying samples are the arrivals
        // in [keep_from, total), at most `capacity` of them, so each has a free slot; the
        // zip makes every write land in the storage even if that were wrong.
        let free = self
            .slots
            .as_mut()
            .get_mut(kept..)
            .unwrap_or_default()
            .iter_mut();
        let ring = self.ring.as_mut();
        for (to, (arrival, slot)) in free.zip(staying) {
            // < capacity ≤ MAX_WINDOW: fits the 31 bits of a slot's arrival number.
            let relative = arrival.wrapping_sub(keep_from) as u32;
            *to = Slot {
                order: relative << 1 | (slot.order & 1),
                ..*slot
            };
            let cell = arrival.checked_rem(capacity).unwrap_or(0) as usize;
            if let Some(cell) = ring.get_mut(cell) {
                *cell = slot.score;
            }
            hits = hits.wrapping_add(u64::from(slot.label()));
            kept = kept.wrapping_add(1);
        }
        self.len = kept;
        self.arrivals = total;
        self.hits = hits;
        self.unsorted = true;
        self.stale = true;
        Ok(())
    }

    fn ensure_sorted(&mut self) {
        if self.unsorted {
            sort_by_score_then_arrival(held_prefix_mut(self.slots.as_mut(), self.len));
            self.unsorted = false;
            self.stale = true;
        }
    }

    /// Renumbers arrivals relative to the oldest held, so they fit 31 bits again (once per
    /// ~2^31 pushes; O(N)).
    ///
    /// The held samples are the last `len` arrivals: oldest ≥ base, each held slot's
    /// relative arrival is at least `shift`, and arrivals − base < 2^31 (so is `shift`).
    fn rebase(&mut self) {
        let oldest = self.arrivals.wrapping_sub(self.len as u64);
        let shift = oldest.wrapping_sub(self.base) as u32;
        for slot in held_prefix_mut(self.slots.as_mut(), self.len) {
            slot.order = slot.order.wrapping_sub(shift << 1);
        }
        self.base = oldest;
    }

    /// Forgets every sample.
    pub fn clear(&mut self) {
        self.len = 0;
        self.arrivals = 0;
        self.base = 0;
        self.hits = 0;
        self.unsorted = false;
        self.stale = false;
    }

    /// Puts the held samples in arrival order (to encode them) and returns them so; the
    /// next eviction or estimate sorts them again.
    pub(crate) fn arrival_order(&mut self) -> impl Iterator<Item = (f64, u8)> + '_ {
        self.unsorted = true;
        self.stale = true;
        let slots = held_prefix_mut(self.slots.as_mut(), self.len);
        // Relative arrivals are distinct, so ordering by `order` is ordering by arrival.
        sort_by_arrival(slots);
        slots.iter().map(|slot| (slot.score, slot.label()))
    }

    /// Replaces the window with one that has seen `seen` samples and holds `samples`, the
    /// last min(N, seen) of them in arrival order (checked valid by the caller: scores in
    /// [0, 1] without −0, labels 0 or 1, as many as that). Its future evictions and
    /// estimates are those of the window it was encoded from.
    pub(crate) fn restore(&mut self, seen: u64, samples: impl Iterator<Item = (f64, u8)>) {
        self.clear();
        let capacity = self.capacity() as u64;
        let held = seen.min(capacity);
        // Number arrivals from the oldest held, as a rebase would.
        self.base = seen - held;
        // The caller checked that exactly `held` ≤ N < 2^31 samples come, so the counts
        // and arrival numbers below fit; zipping with the slots keeps every write in them.
        let (mut len, mut hits) = (0usize, 0u64);
        let slots = self.slots.as_mut().iter_mut();
        for ((i, slot), (score, label)) in (0..u32::MAX).zip(slots).zip(samples) {
            let arrival = self.base.wrapping_add(u64::from(i));
            *slot = Slot {
                score,
                order: i << 1 | u32::from(label),
                hits_before: 0,
            };
            let cell = arrival.checked_rem(capacity).unwrap_or(0) as usize;
            if let Some(cell) = self.ring.as_mut().get_mut(cell) {
                *cell = score;
            }
            hits = hits.wrapping_add(u64::from(label));
            len = len.wrapping_add(1);
        }
        self.len = len;
        self.hits = hits;
        self.arrivals = seen;
        self.unsorted = true;
        self.stale = true;
    }

    /// The window's samples, sorted, for the estimators of [`SortedSamples`].
    pub fn samples(&mut self) -> SortedSamples<'_> {
        self.ensure_sorted();
        let slots = held_prefix_mut(self.slots.as_mut(), self.len);
        if self.stale {
            record_running_hits(slots);
            self.stale = false;
        }
        SortedSamples::new(slots, self.hits)
    }
}

#[cfg(feature = "ffi")]
impl<S, R> SlidingWindow<S, R> {
    /// The same window (its bookkeeping: length, arrivals, hits) over other storage. For
    /// the C ABI (`src/ffi/window.rs`), which keeps the bookkeeping in a header and the
    /// slots and ring after it in caller memory, and re-attaches that storage on every
    /// call. `slots` and `ring` must be the storage the window was used with (or a copy
    /// of it), of the same length.
    pub(crate) fn with_storage_of<S2, R2>(self, slots: S2, ring: R2) -> SlidingWindow<S2, R2> {
        SlidingWindow {
            slots,
            ring,
            len: self.len,
            arrivals: self.arrivals,
            base: self.base,
            hits: self.hits,
            unsorted: self.unsorted,
            stale: self.stale,
            zero_padding: [0; WINDOW_PADDING],
        }
    }
}

impl<S: AsRef<[Slot]>, R> SlidingWindow<S, R> {
    /// The number of samples held (at most the capacity).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The window's size N.
    pub fn capacity(&self) -> usize {
        self.slots.as_ref().len()
    }

    /// Samples pushed since creation or the last clear (held or evicted).
    pub fn seen(&self) -> u64 {
        self.arrivals
    }

    /// The number of hits in the window.
    pub fn hits(&self) -> u64 {
        self.hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Binning, Norm};

    #[test]
    fn arrival_numbers_are_rebased_before_they_overflow() {
        let mut window = InlineWindow::<3>::new();
        window.push_batch(&[0.5, 0.5, 0.2], &[1, 0, 1]).unwrap();
        // Pretend 2^31 − 4 more samples went by: same window, arrivals near the limit.
        let skip = ((1u64 << 31) - 4) / 3 * 3; // a multiple of N keeps ring positions
        window.arrivals += skip;
        for slot in &mut window.slots[..3] {
            slot.order += (skip as u32) << 1;
        }
        for i in 0..10 {
            window.push(0.5, (i % 2) as u8).unwrap();
        }
        assert!(
            window.base > 0 && window.arrivals - window.base < 16,
            "rebased"
        );
        let held: Vec<(f64, u8)> = window.samples().iter().collect();
        // The last three pushes: labels 1, 0, 1 (i = 7, 8, 9), all 0.5, in arrival order.
        assert_eq!(held, vec![(0.5, 1), (0.5, 0), (0.5, 1)]);
        assert!(window
            .samples()
            .ece_bin(Binning::EQUAL_MASS, 2, Norm::L2)
            .is_ok());
    }
}
