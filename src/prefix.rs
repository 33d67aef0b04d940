//! Exact prefix sums of the sorted scores, every [`BLOCK`] sorted positions: with them a
//! bin's score sum costs at most `BLOCK / 2` slot reads at each of its two ends instead
//! of a pass over the bin, so that every estimate after the first reads the samples no
//! more (`SortedSamples`).
//!
//! The radix sorts record them as they record the running hit counts, on each finished
//! range while it is in the cache (the two-thread sort's ranges: [`BlockSums`]; the
//! one-thread sort: [`Running`]), and leave them in their scratch, the buffer's free
//! slots, which nothing else uses until the next push: each sum takes two slots, its four
//! 32-bit words in their `order` and `hits_before` fields (no float field, so no bit
//! pattern can be changed by a move).
//!
//! The sums are of the quantized scores (`stats::quantize`), which is what a bin's
//! statistics sum: a bin summed from them has the same bits as one summed slot by slot.
//! At most 2^31 slots of at most 2^62 quanta: every sum is below 2^93, and no addition
//! wraps.

use core::ops::Range;

use crate::buffer::Slot;
use crate::stats::quantize;

/// Sorted positions between two recorded sums.
pub(crate) const BLOCK: usize = 64;

/// The quanta of one slot's score.
fn quanta(slot: &Slot) -> u128 {
    u128::from(quantize(slot.score))
}

/// The quanta of `slots`' scores (slot by slot).
pub(crate) fn quanta_of(slots: &[Slot]) -> u128 {
    // (At most 2^31 · 2^62: no wrap.)
    slots
        .iter()
        .fold(0u128, |sum, slot| sum.wrapping_add(quanta(slot)))
}

/// How a sort records the prefix sums of its finished ranges, in sorted order: `slots`,
/// the next range, and `other`, the same positions of its other array, which the sort
/// no longer needs.
pub(crate) trait RecordSums {
    /// Records the sums of `slots` and, in the same pass, their running hit counts
    /// (`Slot::hits_before`, from `hits`, as `buffer::record_running_hits_from` records
    /// them); returns the hits after them.
    fn record(&mut self, slots: &mut [Slot], other: &mut [Slot], hits: u32) -> u32;

    /// [`RecordSums::record`] of slots that all hold one score (a run of ties): each
    /// block's part is that score's quanta times its length, so the slots past the first
    /// are not read.
    fn record_equal(&mut self, slots: &[Slot], other: &mut [Slot]);
}

/// Writes the running hit count `hits` on `slot`; returns the hits after it.
fn count_hit(slot: &mut Slot, hits: u32) -> u32 {
    slot.hits_before = hits;
    // At most one per slot, and a sort holds fewer than 2^31.
    hits.wrapping_add(u32::from(slot.label()))
}

/// The quanta of `len` slots of `each` quanta: one multiplication.
fn quanta_times(each: u128, len: usize) -> u128 {
    // At most 2^31 slots of at most 2^62 quanta: no wrap.
    each.wrapping_mul(len as u128)
}

/// The sums of the blocks of a sort's range of sorted positions, recorded as the range
/// is finished in order: those of the blocks wholly inside it into `whole`, and the
/// parts of the (at most two) blocks it shares with the ranges beside it kept apart, for
/// the caller to add up ([`BlockSums::parts`]).
#[cfg(feature = "std")] // the two-thread sort's
pub(crate) struct BlockSums<'s> {
    /// The range's first sorted position.
    start: usize,
    /// The sorted position of the next slot recorded.
    at: usize,
    /// The quanta of the open block's slots recorded so far.
    open: u128,
    /// The sums of blocks `first..`, those wholly inside the range.
    whole: &'s mut [u128],
    first: usize,
    /// The part of the block the range starts inside of (block, quanta), once closed.
    head: Option<(usize, u128)>,
}

#[cfg(feature = "std")]
impl<'s> BlockSums<'s> {
    /// Sums for the range starting at sorted position `start`, whose whole blocks (from
    /// the first block boundary at or after `start`) go into `whole`.
    pub(crate) fn new(start: usize, whole: &'s mut [u128]) -> Self {
        BlockSums {
            start,
            at: start,
            open: 0,
            whole,
            first: start.div_ceil(BLOCK),
            head: None,
        }
    }

    /// The parts of the blocks the range shares with the ranges before and after it, as
    /// (block, quanta): its head (if it crossed a block boundary) and its open tail.
    pub(crate) fn parts(&self) -> [Option<(usize, u128)>; 2] {
        let tail = (self.at % BLOCK != 0).then_some((self.at / BLOCK, self.open));
        [self.head, tail]
    }
}

#[cfg(feature = "std")]
impl RecordSums for BlockSums<'_> {
    /// Records the next slots of the range (the other array is the range's own).
    fn record(&mut self, slots: &mut [Slot], _other: &mut [Slot], mut hits: u32) -> u32 {
        for slot in slots {
            hits = count_hit(slot, hits);
            self.open = self.open.wrapping_add(quanta(slot));
            // Sorted positions are below 2^31.
            self.at = self.at.wrapping_add(1);
            self.close_at_boundary();
        }
        hits
    }

    fn record_equal(&mut self, slots: &[Slot], _other: &mut [Slot]) {
        let each = slots.first().map_or(0, quanta);
        let mut left = slots.len();
        while left > 0 {
            // Up to the next block boundary (at most BLOCK slots).
            let part = BLOCK.wrapping_sub(self.at % BLOCK).min(left);
            // Below 2^93 (module docs); positions below 2^31.
            self.open = self.open.wrapping_add(quanta_times(each, part));
            self.at = self.at.wrapping_add(part);
            self.close_at_boundary();
            // part ≤ left.
            left = left.wrapping_sub(part);
        }
    }
}

#[cfg(feature = "std")]
impl BlockSums<'_> {
    /// Closes the open block if the next position starts a new one: its sum goes to
    /// `whole`, or to `head` if the block started before the range.
    fn close_at_boundary(&mut self) {
        if self.at % BLOCK == 0 {
            // at ≥ BLOCK here (it grew from at least 0 to a multiple of BLOCK: `record`
            // adds at least one slot before each call), and block · BLOCK < at: nothing
            // wraps.
            let block = (self.at / BLOCK).wrapping_sub(1);
            if block.wrapping_mul(BLOCK) < self.start {
                self.head = Some((block, self.open));
            } else if let Some(sum) = self.whole.get_mut(block.wrapping_sub(self.first)) {
                *sum = self.open;
            }
            self.open = 0;
        }
    }
}

/// Sums of consecutive whole blocks, and the first one's block.
#[cfg(feature = "std")] // the two-thread sort's
pub(crate) type Blocks<'s> = (&'s mut [u128], usize);

/// The whole-block sums of a range of sorted positions (from block `first` on), split at
/// sorted position `cut` inside it: those of the blocks below `cut`, and those from the
/// first block boundary at or after it, each with its first block. A block across `cut`
/// is in neither: its parts come from the ranges on both sides ([`BlockSums::parts`]).
#[cfg(feature = "std")] // the two-thread sort's
pub(crate) fn split_at(sums: &mut [u128], first: usize, cut: usize) -> (Blocks<'_>, Blocks<'_>) {
    // Where the blocks below `cut` end and those above start, within `sums`: the second
    // is no smaller (both clamped the same way), and one more if a block crosses `cut`
    // that `sums` holds.
    let at = |block: usize| block.saturating_sub(first).min(sums.len());
    let (low_end, high_start) = (at(cut / BLOCK), at(cut.div_ceil(BLOCK)));
    let (low, rest) = sums.split_at_mut(low_end);
    let high = rest
        .get_mut(high_start.saturating_sub(low_end)..)
        .unwrap_or_default();
    ((low, first), (high, cut.div_ceil(BLOCK)))
}

/// Writes the prefix sums of `block_sums` (blocks 0.. of the sorted slots) into the first
/// slots of `free`: sum j (before sorted position j · BLOCK) in slots 2j and 2j + 1, from
/// j = 0 to the number of blocks. Returns the slots written (none if `free` is too short).
#[cfg(feature = "std")] // the two-thread sort's
pub(crate) fn write(block_sums: &[u128], free: &mut [Slot]) -> usize {
    let used = slots_for(block_sums.len());
    let Some(free) = free.get_mut(..used) else {
        return 0;
    };
    let mut sum = 0u128;
    for (j, block) in block_sums.iter().chain([&0]).enumerate() {
        put(free, j, sum);
        // Below 2^93 (module docs).
        sum = sum.wrapping_add(*block);
    }
    used
}

/// The slots that the prefix sums of `blocks` whole blocks take (sums 0 to `blocks`).
fn slots_for(blocks: usize) -> usize {
    blocks.saturating_add(1).saturating_mul(2)
}

/// Writes prefix sum j into slots 2j and 2j + 1 of `free` (nothing if they are not there).
fn put(free: &mut [Slot], j: usize, sum: u128) {
    let Some(at) = j.checked_mul(2) else { return };
    if let Some([low, high]) = free.get_mut(at..).and_then(|pair| pair.first_chunk_mut()) {
        low.order = sum as u32;
        low.hits_before = (sum >> 32) as u32;
        high.order = (sum >> 64) as u32;
        high.hits_before = (sum >> 96) as u32;
    }
}

/// The prefix sums as the one-thread sort (`radix::one_thread`) records them, with no
/// storage of its own: as each range is finished, in sorted order, the running sum at
/// each block boundary it reaches goes into the slot of the other array at the block's
/// last position, which the sort no longer needs; [`Running::end`] then moves the sums
/// into the layout of [`write`]. (In one slot a sum below 2^93 takes the two 32-bit
/// fields and, above 2^64, the score field as a whole number below 2^29: exact, and no
/// NaN bit pattern for a move to change.)
pub(crate) struct Running {
    /// Sorted positions recorded.
    at: usize,
    /// Their quanta.
    sum: u128,
    /// Whether every sum found its slot (the other array was as long as each range).
    stored: bool,
}

impl Running {
    /// Nothing recorded yet.
    pub(crate) const START: Running = Running {
        at: 0,
        sum: 0,
        stored: true,
    };

    /// Once every position is recorded, moves the sums to the start of `scratch`, the
    /// other array, as [`write`] lays them out; returns the slots they take (0, none,
    /// if they do not fit, or if a sum found no slot to wait in).
    pub(crate) fn end(self, scratch: &mut [Slot]) -> usize {
        let blocks = self.at / BLOCK;
        let used = slots_for(blocks);
        if !self.stored || scratch.len() < used || scratch.len() < self.at {
            return 0;
        }
        // Sum j sits at position j · BLOCK − 1 ≥ 2j + 2 (j ≥ 1): each is read before
        // the pairs written below it reach it.
        for j in 1..=blocks {
            let Some(&slot) = scratch.get(j.wrapping_mul(BLOCK).wrapping_sub(1)) else {
                return 0;
            };
            let sum = u128::from(slot.order)
                | u128::from(slot.hits_before) << 32
                | (slot.score as u128) << 64;
            put(scratch, j, sum);
        }
        put(scratch, 0, 0);
        used
    }
}

impl RecordSums for Running {
    /// Records `finished`, the next slots in sorted order, a block at a time (hit counts
    /// and quanta in one pass over each); `free`: the same positions of the other array,
    /// free for the sums.
    fn record(&mut self, finished: &mut [Slot], free: &mut [Slot], mut hits: u32) -> u32 {
        self.record_with(finished.len(), free, |at, len| {
            let block = finished
                .get_mut(at..at.wrapping_add(len))
                .unwrap_or_default();
            block.iter_mut().fold(0u128, |sum, slot| {
                hits = count_hit(slot, hits);
                // (At most 2^31 · 2^62: no wrap.)
                sum.wrapping_add(quanta(slot))
            })
        });
        hits
    }

    fn record_equal(&mut self, finished: &[Slot], free: &mut [Slot]) {
        let each = finished.first().map_or(0, quanta);
        self.record_with(finished.len(), free, |_, len| quanta_times(each, len));
    }
}

impl Running {
    /// [`RecordSums::record`] of `len` finished slots, with `quanta_of(at, len)` summing
    /// the part of a block that is their `len` slots from `at`.
    #[inline(always)]
    fn record_with(
        &mut self,
        finished: usize,
        free: &mut [Slot],
        mut quanta_of: impl FnMut(usize, usize) -> u128,
    ) {
        let mut at = 0;
        while let Some(rest) = finished.checked_sub(at).filter(|&rest| rest > 0) {
            // Up to the next block boundary (at most BLOCK slots).
            let block = BLOCK.wrapping_sub(self.at % BLOCK).min(rest);
            // Below 2^93 (module docs); positions below 2^31.
            self.sum = self.sum.wrapping_add(quanta_of(at, block));
            self.at = self.at.wrapping_add(block);
            at = at.wrapping_add(block);
            if self.at % BLOCK == 0 {
                // The block's last position (at ≥ 1 here).
                match free.get_mut(at.wrapping_sub(1)) {
                    Some(slot) => {
                        *slot = Slot {
                            score: (self.sum >> 64) as u32 as f64,
                            order: self.sum as u32,
                            hits_before: (self.sum >> 32) as u32,
                        }
                    }
                    None => self.stored = false,
                }
            }
        }
    }
}

/// The prefix sums [`write`] wrote (slots, two a sum), over the sorted slots they are of.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PrefixSums<'a> {
    pub(crate) sums: &'a [Slot],
}

impl PrefixSums<'_> {
    /// None: every sum is taken slot by slot.
    pub(crate) const NONE: PrefixSums<'static> = PrefixSums { sums: &[] };

    /// Sum j, if written.
    fn sum(&self, j: usize) -> Option<u128> {
        let pair = self
            .sums
            .get(j.checked_mul(2)?..j.checked_mul(2)?.checked_add(2)?)?;
        let [low, high] = pair else { return None };
        Some(
            u128::from(low.order)
                | u128::from(low.hits_before) << 32
                | u128::from(high.order) << 64
                | u128::from(high.hits_before) << 96,
        )
    }

    /// The quanta of `slots[range]`' scores: from the sums at the block boundaries
    /// nearest its ends, or slot by slot where none is written.
    pub(crate) fn quanta(&self, slots: &[Slot], range: Range<usize>) -> Option<u128> {
        let end = self.before(slots, range.end)?;
        // The prefix sums never decrease: end ≥ start.
        Some(end.wrapping_sub(self.before(slots, range.start)?))
    }

    /// The quanta before sorted position `p`: the sum at the nearer of the block
    /// boundaries around `p` and the slots between, or `None` if there is none.
    fn before(&self, slots: &[Slot], p: usize) -> Option<u128> {
        let j = p / BLOCK;
        let below = self.sum(j)?;
        // j · BLOCK ≤ p, and a sum j + 1 exists only within the slots (< 2^31): nothing
        // wraps.
        let boundary = j.wrapping_mul(BLOCK);
        if p % BLOCK > BLOCK / 2 {
            if let Some(above) = self.sum(j.wrapping_add(1)) {
                let between = slots.get(p..boundary.wrapping_add(BLOCK))?;
                return Some(above.wrapping_sub(quanta_of(between)));
            }
        }
        Some(below.wrapping_add(quanta_of(slots.get(boundary..p)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn slots(quanta: &[u64]) -> Vec<Slot> {
        // Scores whose quanta are these (multiples of 2^-62, exact).
        quanta
            .iter()
            .map(|&q| Slot {
                score: q as f64 / (1u64 << 62) as f64,
                order: 0,
                hits_before: 0,
            })
            .collect()
    }

    /// `sums.record` of a copy of `slots` (the running hit counts it writes are checked
    /// by the sorts' tests, src/radix.rs).
    fn record(sums: &mut impl RecordSums, slots: &[Slot], other: &mut [Slot]) {
        sums.record(&mut slots.to_vec(), other, 0);
    }

    /// Records `slots` as a sort would: split at `cuts` (recursively, as
    /// `two_threads::Pieces::sort_range` splits), each range on its own `BlockSums`.
    fn recorded(slots: &[Slot], cuts: &[usize]) -> Vec<u128> {
        let mut block_sums = vec![0u128; slots.len() / BLOCK];
        let mut parts = Vec::new();
        fn range(
            slots: &[Slot],
            start: usize,
            cuts: &[usize],
            sums: &mut [u128],
            first: usize,
            parts: &mut Vec<[Option<(usize, u128)>; 2]>,
        ) {
            match cuts.split_first() {
                None => {
                    let mut recording = BlockSums::new(start, sums);
                    // In pieces of 5, as ranges are finished bucket by bucket.
                    for piece in slots.chunks(5) {
                        record(&mut recording, piece, &mut []);
                    }
                    parts.push(recording.parts());
                }
                Some((&cut, rest)) => {
                    let cut = cut.clamp(start, start + slots.len());
                    let ((low, low_first), (high, high_first)) = split_at(sums, first, cut);
                    let (below, above) = slots.split_at(cut - start);
                    let (low_cuts, high_cuts) = rest.split_at(rest.len() / 2);
                    range(below, start, low_cuts, low, low_first, parts);
                    range(above, cut, high_cuts, high, high_first, parts);
                }
            }
        }
        let mut cuts = cuts.to_vec();
        cuts.sort_unstable();
        // The first cut splits, then each side takes its share of the rest (any order of
        // nested cuts would do; these stay within their sides once clamped).
        range(slots, 0, &cuts, &mut block_sums, 0, &mut parts);
        for (block, quanta) in parts.into_iter().flatten().flatten() {
            if let Some(sum) = block_sums.get_mut(block) {
                *sum += quanta;
            }
        }
        block_sums
    }

    #[test]
    fn a_split_inside_the_first_block_gives_the_rest_to_the_right() {
        // A range from position 70 (its whole blocks from block 2) cut at 100, inside
        // block 1: nothing left of the cut, all of the blocks right of it.
        let mut sums = [20u128, 30, 40];
        let ((low, low_first), (high, high_first)) = split_at(&mut sums, 2, 100);
        assert_eq!((low.len(), low_first), (0, 2));
        assert_eq!((&*high, high_first), (&[20u128, 30, 40][..], 2));
        // Cut at 200, inside block 3: block 2 left, block 3 in neither, 4.. right.
        let ((low, _), (high, high_first)) = split_at(&mut sums, 2, 200);
        assert_eq!(
            (&*low, &*high, high_first),
            (&[20u128][..], &[40u128][..], 4)
        );
        // At a boundary (256 = block 4): blocks 2 and 3 left, 4.. right.
        let ((low, _), (high, high_first)) = split_at(&mut sums, 2, 256);
        assert_eq!(
            (&*low, &*high, high_first),
            (&[20u128, 30][..], &[40u128][..], 4)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The recorded prefix sums give every range's quanta exactly, however the sort
        /// split the positions into ranges.
        #[test]
        fn every_range_sums_as_slot_by_slot(
            quanta in prop::collection::vec(prop_oneof![Just(0u64), Just(1u64 << 62), 0..=(1u64 << 62)], 0..400),
            cuts in prop::collection::vec(0..400usize, 0..6),
        ) {
            let slots = slots(&quanta);
            let block_sums = recorded(&slots, &cuts);
            let direct: Vec<u128> = (0..slots.len() / BLOCK)
                .map(|b| quanta_of(&slots[b * BLOCK..(b + 1) * BLOCK]))
                .collect();
            prop_assert_eq!(&block_sums, &direct);
            let mut free = vec![Slot::EMPTY; 2 * (block_sums.len() + 1)];
            let used = write(&block_sums, &mut free);
            prop_assert_eq!(used, free.len());
            prop_assert_eq!(write(&block_sums, &mut free[1..]), 0, "too little room: none");
            let prefix = PrefixSums { sums: &free };
            for a in 0..=slots.len() {
                for b in (a..=slots.len()).step_by(7).chain([slots.len()]) {
                    prop_assert_eq!(prefix.quanta(&slots, a..b), Some(quanta_of(&slots[a..b])));
                }
            }
            prop_assert_eq!(PrefixSums::NONE.quanta(&slots, 0..slots.len()), None);
        }

        /// A run of ties recorded by multiplication leaves both recorders as reading
        /// it slot by slot does, wherever the run starts and however long it is.
        #[test]
        fn ties_record_as_read_slot_by_slot(
            before in prop::collection::vec(0..=(1u64 << 62), 0..150),
            tie in prop_oneof![Just(0u64), Just(1u64 << 62), 0..=(1u64 << 62)],
            run in 0..300usize,
            start in 0..200usize,
        ) {
            let mut quanta = before.clone();
            quanta.extend(std::iter::repeat(tie).take(run));
            let slots = slots(&quanta);
            let (head, ties) = slots.split_at(before.len());
            // Running: the sums its slots hold, and its state.
            let recorded = |equal: bool| {
                let mut other = vec![Slot::EMPTY; slots.len()];
                let (head_other, ties_other) = other.split_at_mut(before.len());
                let mut running = Running::START;
                record(&mut running, head, head_other);
                if equal {
                    running.record_equal(ties, ties_other);
                } else {
                    record(&mut running, ties, ties_other);
                }
                let state = (running.at, running.sum, running.stored);
                let used = running.end(&mut other);
                (state, used, other)
            };
            let (read, equal) = (recorded(false), recorded(true));
            prop_assert_eq!(read.0, equal.0);
            prop_assert_eq!(read.1, equal.1);
            let words = |slots: &[Slot]| -> Vec<(u32, u32)> {
                slots.iter().map(|slot| (slot.order, slot.hits_before)).collect()
            };
            prop_assert_eq!(words(&read.2), words(&equal.2));
            // BlockSums of a range starting at `start`: whole blocks and parts.
            let blocks = |equal: bool| {
                let mut whole = vec![0u128; (start + slots.len()) / BLOCK + 1];
                let mut sums = BlockSums::new(start, &mut whole[start.div_ceil(BLOCK)..]);
                record(&mut sums, head, &mut []);
                if equal {
                    sums.record_equal(ties, &mut []);
                } else {
                    record(&mut sums, ties, &mut []);
                }
                let state = (sums.at, sums.open, sums.parts());
                (state, whole)
            };
            prop_assert_eq!(blocks(false), blocks(true));
        }

        /// The one-thread sort's running sums, handed over in ranges of any length, end
        /// as the sums `write` lays out, whatever the other array held.
        #[test]
        fn running_sums_end_as_written(
            quanta in prop::collection::vec(prop_oneof![Just(0u64), Just(1u64 << 62), 0..=(1u64 << 62)], 3..700),
            pieces in prop::collection::vec(1..150usize, 1..40),
            garbage in any::<u32>(),
        ) {
            let slots = slots(&quanta);
            let n = slots.len();
            let direct: Vec<u128> = (0..n / BLOCK)
                .map(|b| quanta_of(&slots[b * BLOCK..(b + 1) * BLOCK]))
                .collect();
            let mut written = vec![Slot::EMPTY; n];
            let used = write(&direct, &mut written);
            // The other array: anything, down to NaN scores.
            let mut other: Vec<Slot> = (0..n as u32)
                .map(|i| Slot {
                    score: f64::from_bits(u64::from(garbage ^ i) << 32 | 0x7ff8_0000_0000_0001),
                    order: garbage.rotate_left(i),
                    hits_before: i,
                })
                .collect();
            let mut running = Running::START;
            let mut at = 0;
            for piece in pieces.iter().cycle() {
                if at == n {
                    break;
                }
                let end = (at + piece).min(n);
                record(&mut running, &slots[at..end], &mut other[at..end]);
                at = end;
            }
            prop_assert_eq!(running.at, n);
            prop_assert_eq!(running.sum, quanta_of(&slots));
            let ended = Running { at: running.at, sum: running.sum, stored: true };
            prop_assert_eq!(ended.end(&mut other[..used - 1]), 0, "too little room: none");
            // A range handed over without its other slots: no sums at all.
            if n >= BLOCK {
                let mut short = Running::START;
                record(&mut short, &slots, &mut other[..BLOCK - 1]);
                prop_assert_eq!(short.end(&mut other), 0, "a sum without its slot: none");
            }
            prop_assert_eq!(running.end(&mut other), used);
            for (a, b) in other[..used].iter().zip(&written[..used]) {
                prop_assert_eq!((a.order, a.hits_before), (b.order, b.hits_before));
            }
        }
    }
}
