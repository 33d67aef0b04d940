//! The reservoir: a uniform random sample of fixed size over an unbounded stream
//! (Vitter's Algorithm R), so that equal-mass and sweep estimates cover all history in
//! bounded memory. Seeded, so runs repeat.
//!
//! Every sample seen so far is held with the same probability capacity / seen. Merging
//! two reservoirs (say from two devices) gives a uniform sample of both streams
//! together: the number taken from each follows the hypergeometric law of drawing
//! without replacement from the two streams, and each side's share is a uniform subset
//! of its reservoir.

use crate::buffer::{sort_by_arrival, Appended, Slot, SortedBuffer, SortedSamples, MAX_CAPACITY};
use crate::error::{ConfigError, MergeError, PushError};
use crate::limits::{add_counts, batch_count};
use crate::rng::Xoshiro256PlusPlus;
use crate::sample;

/// A uniform sample of at most `capacity` of the samples pushed, over storage `S`.
#[derive(Clone, Debug)]
pub struct Reservoir<S> {
    pub(crate) buffer: SortedBuffer<S>,
    seen: u64,
    rng: Xoshiro256PlusPlus,
    /// Arrival number of the next sample placed, relative, for ties (SPEC §3.2).
    next_arrival: u32,
    /// Always zero: the struct has no implicit padding, so a copy of it (the C ABI keeps
    /// it in caller memory) never carries stray bytes from the stack.
    #[allow(dead_code)] // never read: it only fills the layout
    zero_padding: u32,
}

/// A reservoir of `N` samples stored inline.
pub type InlineReservoir<const N: usize> = Reservoir<[Slot; N]>;

impl<const N: usize> Reservoir<[Slot; N]> {
    /// An empty reservoir of `N` samples whose random choices are seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Reservoir {
            buffer: SortedBuffer::new(),
            seen: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            next_arrival: 0,
            zero_padding: 0,
        }
    }
}

impl<'a> Reservoir<&'a mut [Slot]> {
    /// An empty reservoir over caller-owned storage; its capacity is the slice length.
    pub fn with_storage(storage: &'a mut [Slot], seed: u64) -> Result<Self, ConfigError> {
        Ok(Reservoir {
            buffer: SortedBuffer::with_storage(storage)?,
            seen: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            next_arrival: 0,
            zero_padding: 0,
        })
    }
}

/// A reservoir that owns its slots on the heap (capacity chosen at run time).
#[cfg(feature = "std")]
pub type BoxedReservoir = Reservoir<Box<[Slot]>>;

#[cfg(feature = "std")]
impl Reservoir<Box<[Slot]>> {
    /// An empty reservoir over storage it owns; errors as [`Reservoir::with_storage`].
    pub fn with_boxed_storage(storage: Box<[Slot]>, seed: u64) -> Result<Self, ConfigError> {
        Ok(Reservoir {
            buffer: SortedBuffer::with_boxed_storage(storage)?,
            seen: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            next_arrival: 0,
            zero_padding: 0,
        })
    }
}

impl<S: AsRef<[Slot]> + AsMut<[Slot]>> Reservoir<S> {
    /// Offers one sample: kept with probability capacity / seen, replacing a uniformly
    /// chosen held sample. A bad sample is refused, and so is one that would take `seen`
    /// past [`crate::MAX_COUNT`] ([`PushError::CountOverflow`]): nothing changes.
    pub fn push(&mut self, score: f64, label: u8) -> Result<(), PushError> {
        sample::check(score, label, 0)?;
        add_counts(self.seen, 1)?;
        self.offer(score + 0.0, label);
        Ok(())
    }

    /// Offers a batch in order: all of it, or (when any element is bad, or the batch
    /// would take `seen` past [`crate::MAX_COUNT`]) none of it.
    pub fn push_batch(&mut self, scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
        sample::check_batch(scores, labels)?;
        add_counts(self.seen, batch_count(scores.len())?)?;
        for (&score, &label) in scores.iter().zip(labels) {
            self.offer(score + 0.0, label);
        }
        Ok(())
    }

    /// Offers a checked sample; the caller has checked that `seen` + 1 is within the
    /// bound, so the increment cannot overflow.
    fn offer(&mut self, score: f64, label: u8) {
        self.seen = self.seen.wrapping_add(1);
        let capacity = self.capacity();
        let victim = if self.buffer.len < capacity {
            let at = self.buffer.len;
            // < capacity: no overflow.
            self.buffer.len = at.wrapping_add(1);
            at
        } else {
            let j = self.rng.below(self.seen);
            let Some(old) = usize::try_from(j)
                .ok()
                .and_then(|j| self.buffer.slots.as_ref().get(j))
            else {
                return; // j ≥ capacity: the sample is not kept
            };
            // The victim's label is among the hits counted.
            self.buffer.hits = self.buffer.hits.wrapping_sub(u64::from(old.label()));
            j as usize
        };
        self.place(victim, score, label);
    }

    /// Writes a sample at storage position `at` with the next arrival number.
    fn place(&mut self, at: usize, score: f64, label: u8) {
        if self.next_arrival >= (1 << 31) - 1 {
            self.renumber();
        }
        let order = self.next_arrival << 1 | u32::from(label);
        // Below 2^31 − 1 after the check above: no overflow.
        self.next_arrival = self.next_arrival.wrapping_add(1);
        // `at` < len ≤ capacity: every caller places within the held samples (a free slot
        // it has just counted, or a victim among them).
        if let Some(slot) = self.buffer.slots.as_mut().get_mut(at) {
            *slot = Slot {
                score,
                order,
                hits_before: 0,
            };
            // hits ≤ len < 2^31.
            self.buffer.hits = self.buffer.hits.wrapping_add(u64::from(label));
        }
        self.buffer.sorted = 0; // any position may have changed
        self.buffer.appended = Appended::UNKNOWN; // and in any order
        self.buffer.summed = 0;
    }

    /// Renumbers arrivals 0..len, keeping their order (once per ~2^31 placements).
    fn renumber(&mut self) {
        self.next_arrival = self.buffer.len as u32;
        self.buffer.sorted = 0;
        let slots = self.buffer.held_mut();
        sort_by_arrival(slots);
        // (A bounded range, not `enumerate`: no overflow path.)
        for (arrival, slot) in (0..slots.len()).zip(slots.iter_mut()) {
            // arrival < len < 2^31: the shift cannot lose bits.
            slot.order = (arrival as u32) << 1 | (slot.order & 1);
        }
    }

    /// Merges another reservoir of the same capacity into this one: the result is a
    /// uniform sample of both streams, and `seen` is their sum. The other's random
    /// state is not used. Errors: [`MergeError::CapacityMismatch`], and
    /// [`MergeError::CountOverflow`] when the summed `seen` would pass
    /// [`crate::MAX_COUNT`]; nothing changes then.
    pub fn merge<T: AsRef<[Slot]>>(&mut self, other: &Reservoir<T>) -> Result<(), MergeError> {
        let capacity = self.capacity();
        if other.capacity() != capacity {
            return Err(MergeError::CapacityMismatch {
                left: capacity,
                right: other.capacity(),
            });
        }
        let (len_a, len_b) = (self.buffer.len, other.buffer.len);
        let total = add_counts(self.seen, other.seen)?;
        // Both below 2^31: the sum fits a usize of 32 bits.
        let keep = capacity.min(len_a.wrapping_add(len_b));
        // How many of the `keep` come from each side: draws without replacement from
        // the two streams' seen counts. Each side holds at most what it has seen, so
        // `keep` ≤ seen_a + seen_b: the bound of every draw is at least 1, and neither
        // `left` underflows.
        // (`wrapping_` for the compiler: left_a + left_b ≤ total ≤ MAX_COUNT, from_a ≤
        // keep, and the draw picks a side with something left.)
        let (mut left_a, mut left_b, mut from_a) = (self.seen, other.seen, 0usize);
        for _ in 0..keep {
            if self.rng.below(left_a.wrapping_add(left_b)) < left_a {
                from_a = from_a.wrapping_add(1);
                left_a = left_a.wrapping_sub(1);
            } else {
                left_b = left_b.wrapping_sub(1);
            }
        }
        let from_b = keep.wrapping_sub(from_a);
        // Equal capacities guarantee both sides hold enough (see the module docs).
        debug_assert!(from_a <= len_a && from_b <= len_b);
        let (from_a, from_b) = (from_a.min(len_a), from_b.min(len_b));

        // Selection sampling (Knuth's Algorithm S): a uniform subset, in one pass, in place.
        // kept ≤ from_a (it grows only while below it) and kept ≤ i < len_a: neither
        // difference wraps, and both swapped positions are held samples.
        let mut kept = 0;
        let held = self.buffer.held_mut();
        for i in 0..held.len() {
            let left = (held.len().wrapping_sub(i)) as u64;
            if (self.rng.below(left) as usize) < from_a.wrapping_sub(kept) {
                if kept < held.len() {
                    held.swap(kept, i);
                }
                kept = kept.wrapping_add(1);
            }
        }
        self.buffer.len = kept;
        self.buffer.hits = self
            .buffer
            .held()
            .iter()
            // At most one per held sample (< 2^31).
            .fold(0u64, |hits, s| hits.wrapping_add(u64::from(s.label())));
        self.next_arrival = 0;
        self.renumber();
        let mut taken = 0;
        // As above: taken ≤ from_b, i < len_b, and len + 1 ≤ keep ≤ capacity.
        let incoming = other.buffer.held();
        for (i, slot) in (0..incoming.len()).zip(incoming) {
            let left = (incoming.len().wrapping_sub(i)) as u64;
            if (self.rng.below(left) as usize) < from_b.wrapping_sub(taken) {
                let at = self.buffer.len;
                self.buffer.len = at.wrapping_add(1);
                self.place(at, slot.score, slot.label());
                taken = taken.wrapping_add(1);
            }
        }
        self.seen = total;
        Ok(())
    }

    /// Forgets every sample (the random state goes on).
    pub fn clear(&mut self) {
        self.buffer.clear();
        self.seen = 0;
        self.next_arrival = 0;
    }

    /// The held samples, sorted, for the estimators of [`SortedSamples`].
    pub fn samples(&mut self) -> SortedSamples<'_> {
        self.buffer.sorted()
    }

    /// The generator's state (to save the reservoir).
    pub(crate) fn rng_state(&self) -> [u64; 4] {
        self.rng.state()
    }

    /// Replaces the whole state (a decoded one): `samples` in arrival order.
    pub(crate) fn restore(
        &mut self,
        seen: u64,
        rng: Xoshiro256PlusPlus,
        samples: impl Iterator<Item = (f64, u8)>,
    ) {
        self.clear();
        self.seen = seen;
        self.rng = rng;
        // The decoder checked that at most `capacity` samples come: len + 1 ≤ capacity.
        for (score, label) in samples {
            let at = self.buffer.len;
            self.buffer.len = at.wrapping_add(1);
            self.place(at, score, label);
        }
    }

    /// Puts the held samples in arrival order and returns them (to encode them).
    pub(crate) fn arrival_order(&mut self) -> impl Iterator<Item = (f64, u8)> + '_ {
        self.buffer.arrival_order()
    }
}

#[cfg(feature = "ffi")]
impl<S> Reservoir<S> {
    /// The same reservoir (length, hits, samples seen, random state) over other storage.
    /// For the C ABI (`src/ffi/reservoir.rs`), which keeps the bookkeeping in a header and
    /// the slots after it in caller memory, and re-attaches them on every call. `storage`
    /// must be the storage the reservoir was used with (or a copy of it).
    pub(crate) fn with_storage_of<T>(self, storage: T) -> Reservoir<T> {
        Reservoir {
            buffer: SortedBuffer {
                len: self.buffer.len,
                sorted: self.buffer.sorted,
                hits: self.buffer.hits,
                appended: self.buffer.appended,
                summed: self.buffer.summed,
                slots: storage,
            },
            seen: self.seen,
            rng: self.rng,
            next_arrival: self.next_arrival,
            zero_padding: 0,
        }
    }
}

impl<S: AsRef<[Slot]>> Reservoir<S> {
    /// The number of samples held: min(capacity, seen).
    pub fn len(&self) -> usize {
        self.buffer.len
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.buffer.len == 0
    }

    /// The most samples held.
    pub fn capacity(&self) -> usize {
        self.buffer.capacity()
    }

    /// Samples offered since creation or the last clear: what the held ones represent.
    pub fn seen(&self) -> u64 {
        self.seen
    }
}

const _: () = assert!(MAX_CAPACITY < (1 << 31));
