//! The sorts of samples.
//!
//! **With scratch** (a second array of at least n slots: 16 bytes a sample): a stable
//! radix sort by the score's bits, most significant digit first (`by_score`), O(n) a
//! level, with digits about a bit narrower than log2 of each range's length (so the
//! first level, the only one through memory, is 11 bits at large n, and buckets average
//! about two slots, placed by comparing each slot with its eight neighbours on either
//! side), fewer levels when the scores agree in their top bits. The running
//! hit counts and the prefix sums of `prefix.rs` are recorded as each range is finished,
//! in order, while it is in the cache (the sums in the scratch, which holds them after
//! the sort). Scores are
//! in [0, 1] with −0 stored as +0 (`SortedBuffer::append`), non-negative floats, whose
//! bit patterns order like their values. A stable sort by score keeps equal scores in
//! storage order; that is arrival order when the storage is a sorted prefix followed by
//! later arrivals in order (every buffer that only appends), which one read checks.
//! Otherwise (a reservoir's replacements land anywhere) the sort first orders by
//! arrival, with LSD passes over the bytes of the arrival numbers that differ (`lsd`).
//! Stack: 1 KiB a level of `by_score` for ranges of up to `WIDE_FROM` slots (2^10 with
//! `std`, 2^16 without), 8 KiB above. Each level but the last takes at least 10 bits
//! (11 without `std`) of the 62 a score can vary in, so at most seven (six) wide levels
//! nest, and only for scores that agree in ever more of their top bits; 2.1 KiB more for
//! `place_run`'s chunk of keys and moves, below the innermost level; 8 KiB for `lsd`,
//! which returns before.
//!
//! **In place** (no scratch): the standard library's pattern-defeating quicksort by
//! score, then each run of equal scores by arrival. An in-place radix sort (American
//! flag sort, with and without ska_sort's rounds) was tried and ran slower than this at
//! n = 10^6 on 16-byte slots: its swaps chase one cache miss after another. So did
//! plain LSD passes with scratch (seven passes through memory for full f64 scores).
//!
//! Either way the order is bit for bit that of a stable comparison sort by score with
//! ties in arrival order (SPEC §3.2; the property tests below check it). The radix path
//! has no panic path (indices through `get`); the in-place one keeps the standard
//! library's (an `Ord` violation, impossible for integer keys).

use crate::buffer::{record_running_hits, record_running_hits_from, Appended, Slot};
use crate::prefix::{RecordSums, Running};

/// Buckets up to this long are not distributed again: runs of them are finished
/// together ([`finish_run`]), and inputs this short by insertion sort.
const SMALL: usize = 32;
/// Most buckets of a level over up to `WIDE_FROM` slots: digits of at most 8 bits.
const BUCKETS: usize = 256;
/// Most buckets of a level over more slots: digits of at most 11 bits.
const WIDE: usize = 2048;
/// Ranges longer than this are distributed by digits of up to 11 bits: from 2^10 slots
/// with `std` (the skewed scores' big buckets then take a level less), from 2^16 without
/// (embedded stacks: wide levels, 8 KiB each, then nest only in ranges of 1 MiB).
/// The order is the same either way (the tests sort with both).
const WIDE_FROM: usize = if cfg!(feature = "std") {
    WIDE_FROM_STD
} else {
    WIDE_FROM_NO_STD
};
const WIDE_FROM_STD: usize = 1 << 10;
const WIDE_FROM_NO_STD: usize = 1 << 16;

/// Sorts slots by score, equal scores in arrival order (SPEC §3.2), in place.
///
/// Sorts by score alone, where pdqsort makes short work of the long runs of equal scores
/// real data has (float32 softmax saturating at 1.0), then puts each run back in arrival
/// order. Breaking every comparison's tie by arrival instead makes all keys distinct and
/// costs ~25% more on such data.
pub(crate) fn sort_by_score_then_arrival(slots: &mut [Slot]) {
    slots.sort_unstable_by_key(|slot| slot.score.to_bits());
    // Each run of equal scores back in arrival order (`chunk_by_mut` would do, but keeps
    // an assert's panic path the optimiser cannot remove).
    let mut rest = slots;
    while let Some(first) = rest.first() {
        let score = first.score;
        let run = rest
            .iter()
            .position(|slot| slot.score != score)
            .unwrap_or(rest.len());
        // run ≤ rest.len(): the split always succeeds.
        let Some((ties, tail)) = core::mem::take(&mut rest).split_at_mut_checked(run) else {
            break;
        };
        if ties.len() > 1 {
            ties.sort_unstable_by_key(|slot| slot.order);
        }
        rest = tail;
    }
}

/// Sorts slots by arrival, in place. (`order` is arrival << 1 | label, and arrival
/// numbers are distinct within a state: ordering by `order` is ordering by arrival.)
pub(crate) fn sort_by_arrival(slots: &mut [Slot]) {
    slots.sort_unstable_by_key(|slot| slot.order);
}

/// Sorts slots by score, equal scores in arrival order (SPEC §3.2), with `scratch` of
/// at least as many slots, and records the running hit counts (`Slot::hits_before`) on
/// the result: the stable radix sort of the module docs. It also leaves the prefix sums
/// of `prefix.rs` at the start of `scratch`, and returns the slots they take (0: none,
/// as after a sort in place). `prefix` slots at the front are already sorted (the rest
/// was appended after them); with them, the check below
/// often spares the passes over the arrival numbers. `appended`: what the buffer's
/// pushes told of the slots; when it is known, the check is spared too. Without enough
/// scratch, sorts in place as [`sort_by_score_then_arrival`], then counts.
pub(crate) fn sort_and_count_in(
    slots: &mut [Slot],
    scratch: &mut [Slot],
    prefix: usize,
    appended: Appended,
) -> usize {
    sort_and_count(slots, scratch, prefix, appended, false)
}

/// [`sort_and_count_in`] on two of rayon's threads where that serves (see
/// [`two_threads`]); the same order and prefix sums, bit for bit.
#[cfg(feature = "std")]
pub(crate) fn sort_and_count_in_parallel(
    slots: &mut [Slot],
    scratch: &mut [Slot],
    prefix: usize,
    appended: Appended,
) -> usize {
    sort_and_count(slots, scratch, prefix, appended, true)
}

fn sort_and_count(
    slots: &mut [Slot],
    scratch: &mut [Slot],
    prefix: usize,
    appended: Appended,
    parallel: bool,
) -> usize {
    let scratch = match scratch.get_mut(..slots.len()) {
        Some(scratch) if slots.len() > SMALL => scratch,
        _ => {
            sort_by_score_then_arrival(slots);
            record_running_hits(slots);
            return 0;
        }
    };
    // A stable sort by score keeps equal scores in storage order: that is arrival order
    // when the storage holds a sorted prefix (ties in arrival order) and then slots in
    // arrival order, all arrived after it (a buffer's pushes). Otherwise (a reservoir's
    // replacements) sort by arrival first. One read checks that and finds the bits in
    // which the scores differ (the first level's), unless the pushes told both.
    let known = appended.varying(slots).map(|varying| {
        debug_assert_eq!(
            appended_in_order(slots, prefix),
            (true, varying),
            "what the pushes told holds"
        );
        (true, varying)
    });
    #[cfg(feature = "std")]
    if parallel && two_threads::serves(slots.len()) {
        let (in_order, varying) =
            known.unwrap_or_else(|| two_threads::appended_in_order(slots, prefix));
        if in_order {
            return two_threads::sort_and_count(slots, scratch, varying);
        }
        // A reservoir's storage: sorted on one thread, as below (which reads it again).
    }
    #[cfg(not(feature = "std"))]
    let _ = parallel;
    let (in_order, varying) = known.unwrap_or_else(|| appended_in_order(slots, prefix));
    one_thread::<WIDE_FROM>(slots, scratch, in_order, varying)
}

/// The one-thread radix sort of `slots` (longer than `SMALL`) with `scratch` as long,
/// given whether their storage order is arrival order and the bits in which their scores
/// differ; ranges of more than `W` slots take the wide digits (`WIDE_FROM`). Leaves the
/// prefix sums of `prefix.rs` at the start of `scratch`, recorded as the ranges finish
/// ([`Running`]), and returns the slots they take.
fn one_thread<const W: usize>(
    slots: &mut [Slot],
    scratch: &mut [Slot],
    in_order: bool,
    varying: u64,
) -> usize {
    let mut flipped = false;
    let (mut from, mut to) = (slots, scratch);
    if !in_order {
        flipped ^= lsd(&mut from, &mut to, |slot| u64::from(slot.order), 4);
    }
    // `from` holds the data; the result must end in the storage, which is `to` if the
    // arrival passes flipped the two.
    let mut tally = Tally {
        hits: 0,
        sums: Running::START,
    };
    distribute::<W>(from, to, varying, flipped, &mut tally);
    // The scratch: the array the result is not in.
    tally.sums.end(if flipped { from } else { to })
}

/// Sorts `from` stably by the low `bits` bits of the score bits (the higher ones agree),
/// with `to` (as long) as the second array, leaving the result in `to` if `into_to`, else
/// in `from`, and records the running hit counts (`Slot::hits_before`, starting at
/// `*hits`, which ends past this range's hits) on the result.
///
/// Most significant digit first: the input is distributed (stably: a counting pass, then
/// each slot copied to its bucket's next place in the other array) by the digit below its
/// highest varying bit, and each bucket sorted the same way on the bits below, until
/// buckets are short; each run of short buckets is then finished in one pass that counts
/// each slot's place among its neighbours ([`place_run`]). (LSD passes would each read and write
/// all n slots in memory, seven times for full f64 scores; here only the first level runs
/// through memory, the rest in the cache. Digits start at the highest varying bit, not at
/// byte boundaries: for scores in [0.1, 1] the top byte of the exponent hardly varies.)
/// The digit is about a bit narrower than log2 of the range's length, so that buckets
/// average about two slots and the counting arrays stay small against the range: 10 or 11
/// bits (8 KiB of stack) for ranges of more than `WIDE_FROM` slots, at most 8 bits
/// (1 KiB) below. (With at most 8 bits up to 2^16 slots, as without `std`, skewed scores
/// took a level more in the big buckets: 6 % more instructions in the whole sort of the
/// benchmark's scores.)
/// Buckets are finished in increasing order, so the hit counts are recorded on each
/// finished range while it is in the cache, instead of in a pass of its own.
fn by_score<const W: usize>(
    from: &mut [Slot],
    to: &mut [Slot],
    bits: u32,
    into_to: bool,
    tally: &mut Tally<impl RecordSums>,
) {
    if from.len() <= SMALL {
        finish_short(from, to, into_to, tally);
        return;
    }
    let first = from.first().map_or(0, score);
    // Scores are at most 1, whose bits below the exponent are all 0: a range whose
    // scores agree with 1 in every bit above those `bits` holds only 1s, without a look
    // (the saturated softmax outputs of real data).
    let varying = if first == ONE && bits <= ONE.trailing_zeros() {
        0
    } else {
        from.iter().fold(0, |v, slot| v | (score(slot) ^ first))
    };
    // (The bits above agree by construction; the mask makes `shift < bits`, and so the
    // end of the recursion, hold whatever the input.)
    let varying = varying
        & if bits >= 64 {
            u64::MAX
        } else {
            (1 << bits) - 1
        };
    distribute::<W>(from, to, varying, into_to, tally);
}

/// The bits of the largest score, 1.
const ONE: u64 = 0x3ff0_0000_0000_0000;

/// The score's bits, which order like the scores (non-negative, −0 stored as +0).
fn score(slot: &Slot) -> u64 {
    slot.score.to_bits()
}

/// One level of [`by_score`], given the bits in which the scores of `from` differ
/// (`from` longer than `SMALL`); ranges of more than `W` slots (`WIDE_FROM`) take the
/// wide digits.
fn distribute<const W: usize>(
    from: &mut [Slot],
    to: &mut [Slot],
    varying: u64,
    into_to: bool,
    tally: &mut Tally<impl RecordSums>,
) {
    if from.len() > W {
        level::<WIDE, W>(from, to, varying, into_to, tally);
    } else {
        level::<BUCKETS, W>(from, to, varying, into_to, tally);
    }
}

/// [`distribute`] with digits of at most log2(`B`) bits.
fn level<const B: usize, const W: usize>(
    from: &mut [Slot],
    to: &mut [Slot],
    varying: u64,
    into_to: bool,
    tally: &mut Tally<impl RecordSums>,
) {
    if varying == 0 {
        // All equal: already in order (storage order is the tie order).
        finish(from, to, into_to, tally);
        return;
    }
    // The digit: the `width` bits from the highest varying one down; `from.len()` > SMALL
    // ≥ 2^4, so `width` ≥ 4 and ≤ log2(B).
    let top = u64::BITS - varying.leading_zeros();
    let length_bits = usize::BITS - from.len().leading_zeros();
    let width = length_bits
        .saturating_sub(1)
        .min(B.trailing_zeros())
        .min(top);
    let shift = top - width;
    let mask = (1usize << width) - 1;
    // shift = top − width < 64.
    let digit = |slot: &Slot| score(slot).wrapping_shr(shift) as usize & mask;
    // Counts, then (in the same array) each bucket's next place, which ends as the
    // bucket's end. (Counts and places add up to n < 2^31: nothing wraps.)
    // (Indexed by `digit & (B − 1)`, which is the digit (mask < B), so that the compiler
    // sees every index in range: no check per slot.)
    let mut places = [0u32; B];
    for slot in from.iter() {
        let count = &mut places[digit(slot) & (B - 1)];
        *count = count.wrapping_add(1);
    }
    let mut sum = 0u32;
    for place in places.iter_mut().take(mask.wrapping_add(1)) {
        let count = *place;
        *place = sum;
        sum = sum.wrapping_add(count);
    }
    scatter(from, to, &mut places, digit);
    let places = places.get(..=mask).unwrap_or_default();
    // Each bucket now lies in `to`, in the same place as in `from`; sort it on the bits
    // below with the roles swapped (so the result lands where it must). Runs of short
    // buckets are finished together ([`finish_run`]): the run is in order by digit, so
    // each slot moves only within its bucket, and one call per run spares the call, the
    // read and the counting arrays of each bucket (most hold one to three slots).
    let through_memory = from.len() > BRING_IN;
    // The run: from position `run`, the buckets from digit `run_digit`.
    let (mut start, mut run, mut run_digit) = (0, 0, 0);
    for (d, &end) in places.iter().enumerate() {
        let end = end as usize;
        if end.wrapping_sub(start) > SMALL {
            if let (Some(data), Some(other)) = (to.get_mut(run..start), from.get_mut(run..start)) {
                let ends = places.get(run_digit..d).unwrap_or_default();
                finish_run(data, other, !into_to, tally, ends, run);
            }
            if let (Some(data), Some(other)) = (to.get_mut(start..end), from.get_mut(start..end)) {
                if through_memory && other.len() <= BRING_IN {
                    bring_in(other);
                }
                by_score::<W>(data, other, shift, !into_to, tally);
            }
            // d < B: no wrap.
            (run, run_digit) = (end, d.wrapping_add(1));
        }
        start = end;
    }
    if let (Some(data), Some(other)) = (to.get_mut(run..start), from.get_mut(run..start)) {
        let ends = places.get(run_digit..).unwrap_or_default();
        finish_run(data, other, !into_to, tally, ends, run);
    }
}

/// Copies each slot of `from` to the next place of its digit's bucket in `to`, stably:
/// `heads` holds each bucket's next place (its start, from the counts), and ends at each
/// bucket's end. `digit`: the slot's digit, below `B` (masked by `B − 1` too, which then
/// changes nothing but shows the compiler that the heads are indexed in range).
///
/// Four slots an iteration, written out: the loop is bound by its stores to places all
/// over `to`, and with one slot an iteration the whole one-thread sort ran 5–10 % slower
/// here (alternated runs), though the compiler unrolls neither way on its own.
#[inline(always)]
fn scatter<const B: usize>(
    from: &[Slot],
    to: &mut [Slot],
    heads: &mut [u32; B],
    digit: impl Fn(&Slot) -> usize,
) {
    let mut one = |slot: &Slot| {
        let head = &mut heads[digit(slot) & (B - 1)];
        // In range: the heads of each digit stop at its count, which add up to
        // `from.len()`, which `to` is at least.
        if let Some(place) = to.get_mut(*head as usize) {
            *place = *slot;
        }
        *head = head.wrapping_add(1);
    };
    let mut fours = from.chunks_exact(4);
    for four in &mut fours {
        for slot in four {
            one(slot);
        }
    }
    for slot in fours.remainder() {
        one(slot);
    }
}

/// Finishes a run of short buckets of one level, in order by digit in `from`: sorts it
/// into `to` if `into_to`, else where it lies (with `to`, as long, as the second array),
/// and records the result, as [`finish_short`] does. `ends`: the end of each of the
/// run's buckets, in positions of the level's range, in which the run starts at `offset`.
fn finish_run(
    from: &mut [Slot],
    to: &mut [Slot],
    into_to: bool,
    tally: &mut Tally<impl RecordSums>,
    ends: &[u32],
    offset: usize,
) {
    if into_to {
        place_run(from, to, ends, offset);
        tally.record(to, from);
    } else if to.len() == from.len() {
        // The places are counted on a copy: the slots move within `from` itself.
        to.copy_from_slice(from);
        place_run(to, from, ends, offset);
        tally.record(from, to);
    } else {
        // (Never: a level's two arrays are as long.)
        finish_short(from, to, into_to, tally);
    }
}

/// Slots on either side of a slot that [`place_run`] compares it with: buckets of up to
/// `WINDOW + 1` slots are placed without a branch on the data. Eight: with four (when
/// the comparisons were scalar), the insertion sorts of the longer buckets mispredicted
/// 150 k times in the benchmark's sort of 10^6 scores with ties, 70 k with eight; twelve
/// spare 25 k more for 2 M more instructions, and ran no faster (cachegrind's branch
/// simulation, then alternated runs).
const WINDOW: usize = 8;

/// A slot and its `WINDOW` neighbours on either side.
const SPAN: usize = 2 * WINDOW + 1;

/// Slots that [`place_run`] places at a time.
const CHUNK: usize = 128;

/// Puts each slot of `run` (a run of short buckets in order by digit; `ends` and
/// `offset` as for [`finish_run`]) in its stably sorted place in `out` (as long).
///
/// Within its bucket, a slot's place is its position, plus the later slots of the
/// bucket with smaller scores, minus the earlier ones with larger scores; slots of other
/// buckets are all smaller before it and all larger after it, so they count for neither,
/// and the sum can be taken over the `WINDOW` slots on either side, which hold the whole
/// bucket when it has at most `WINDOW + 1` slots. Those comparisons have no branch, and
/// vectorise over a chunk's keys copied into an array of their own ([`moves_of`]), where an
/// insertion sort mispredicts about every other slot of buckets that average two (half
/// its time in the one-thread sort). The longer buckets, which the window misplaces
/// within their own positions, are then sorted again whole, by insertion.
fn place_run(run: &[Slot], out: &mut [Slot], ends: &[u32], offset: usize) {
    // Per chunk: the keys of its slots and the `WINDOW` on either side, and the moves.
    let mut keys = [0i64; CHUNK + 2 * WINDOW];
    let mut moves = [0i64; CHUNK];
    let len = run.len();
    for start in (0..len).step_by(CHUNK) {
        // The keys from the slot `WINDOW` before `start` on; before the run 0, no larger
        // than any score's, past its end `i64::MAX`, larger than any: both count for
        // neither sum, as slots of other buckets do. (Bits of scores in [0, 1] are below
        // 2^63, so their signed order is their order.)
        let before = WINDOW.saturating_sub(start);
        let (padding, rest) = keys.split_at_mut(before);
        padding.fill(0);
        // start + before ≥ WINDOW: no wrap.
        let source = run
            .get(start.wrapping_add(before).wrapping_sub(WINDOW)..)
            .unwrap_or_default();
        for (key, slot) in rest.iter_mut().zip(source) {
            *key = score(slot) as i64;
        }
        if let Some(past) = rest.get_mut(source.len()..) {
            past.fill(i64::MAX);
        }
        moves_of(&keys, &mut moves);
        let chunk = run.get(start..len.min(start.saturating_add(CHUNK)));
        for (at, (slot, moved)) in (start..len).zip(chunk.unwrap_or_default().iter().zip(&moves)) {
            // A place within the run by construction (`get_mut`: no panic path).
            if let Some(place) = out.get_mut(at.wrapping_add(*moved as usize)) {
                *place = *slot;
            }
        }
    }
    let mut start = 0;
    for &end in ends {
        // Each end lies in [offset, offset + len]: no wrap.
        let end = (end as usize).wrapping_sub(offset);
        if end.wrapping_sub(start) > WINDOW + 1 {
            if let (Some(bucket), Some(out)) = (run.get(start..end), out.get_mut(start..end)) {
                insertion_sort(out, |i, _| bucket.get(i).copied());
            }
        }
        start = end;
    }
}

/// For each of the `CHUNK` keys from `keys[WINDOW]` on, how far [`place_run`] moves
/// its slot: the smaller keys among the `WINDOW` after it less the larger ones among the
/// `WINDOW` before it. With AVX2 where the CPU has it (found at run time with `std`):
/// four 64-bit comparisons an instruction, where SSE2 has none.
fn moves_of(keys: &[i64; CHUNK + 2 * WINDOW], moves: &mut [i64; CHUNK]) {
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the one requirement of `moves_avx2`.
        unsafe { moves_avx2(keys, moves) };
        return;
    }
    moves_body(keys, moves);
}

/// [`moves_body`] compiled for AVX2.
#[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx2")))]
#[target_feature(enable = "avx2")]
unsafe fn moves_avx2(keys: &[i64; CHUNK + 2 * WINDOW], moves: &mut [i64; CHUNK]) {
    moves_body(keys, moves);
}

/// [`moves_of`] for whichever instructions the caller is compiled for.
#[inline(always)]
fn moves_body(keys: &[i64; CHUNK + 2 * WINDOW], moves: &mut [i64; CHUNK]) {
    for (moved, window) in moves.iter_mut().zip(keys.windows(SPAN)) {
        let Some((before, rest)) = window.split_first_chunk::<WINDOW>() else {
            continue;
        };
        let Some((&key, after)) = rest.split_first() else {
            continue;
        };
        // (At most `WINDOW` either way: nothing wraps.)
        let larger_before = before
            .iter()
            .fold(0i64, |n, &other| n.wrapping_add(i64::from(other > key)));
        let smaller_after = after
            .iter()
            .fold(0i64, |n, &other| n.wrapping_add(i64::from(other < key)));
        *moved = smaller_after.wrapping_sub(larger_before);
    }
}

/// Ranges longer than this (512 KiB, half a core's L2 here) run through memory; the
/// buckets of such a range that are no longer are brought into the cache
/// ([`bring_in`]) before they are sorted.
const BRING_IN: usize = 1 << 15;

/// Reads one word of each cache line of `slots` (four slots a line), in order. A
/// bucket of a range that ran through memory (the one-thread sort's first level) is
/// sorted into the part of the other array that level read long before, out of the
/// cache by then: each store its next level scatters there would wait for its line,
/// where one sequential read brings them all in at the prefetcher's pace (5–10 % of the
/// one-thread sort at 10^6 samples). Ranges that fit the cache, whose buckets' lines
/// are still there, skip it.
fn bring_in(slots: &[Slot]) {
    let lines = slots.iter().step_by(4).fold(0u32, |x, slot| x ^ slot.order);
    // (Kept from being optimised away; the value means nothing.)
    core::hint::black_box(lines);
}

/// Sorts `from` (short, or in order but for slots out of place by a few) by insertion,
/// into `to` if `into_to`, and records the result, as [`finish`] does.
fn finish_short(
    from: &mut [Slot],
    to: &mut [Slot],
    into_to: bool,
    tally: &mut Tally<impl RecordSums>,
) {
    if into_to {
        insertion_sort(to, |i, _| from.get(i).copied());
        tally.record(to, from);
    } else {
        insertion_sort(from, |i, out| out.get(i).copied());
        tally.record(from, to);
    }
}

/// Ends a range of equal scores (so in order) in `from`: copies it to `to` if the result
/// belongs there, and records the result (its running hit counts and prefix sums,
/// [`Tally`]). One pass: the hit counts go on the slots as they are copied, and the sums
/// of equal scores take a multiplication a block (runs of ties are long in real data:
/// saturated float32 softmax outputs at 1.0).
fn finish(from: &mut [Slot], to: &mut [Slot], into_to: bool, tally: &mut Tally<impl RecordSums>) {
    if into_to {
        let mut hits = tally.hits;
        for (place, slot) in to.iter_mut().zip(from.iter()) {
            *place = Slot {
                hits_before: hits,
                ..*slot
            };
            // At most one per slot, and a sort holds fewer than 2^31.
            hits = hits.wrapping_add(u32::from(slot.label()));
        }
        tally.hits = hits;
        tally.sums.record_equal(to, from);
    } else {
        tally.hits = record_running_hits_from(from, tally.hits);
        tally.sums.record_equal(from, to);
    }
}

/// What the sort records on its finished ranges, in sorted order: the running hit
/// counts, on the slots, and the prefix sums of `prefix.rs`, by `sums` (the one-thread
/// sort's [`Running`], the [`BlockSums`] of each range of the two-thread sort's).
pub(crate) struct Tally<S> {
    /// The hits before the next slot recorded.
    hits: u32,
    sums: S,
}

impl<S: RecordSums> Tally<S> {
    /// Records `slots`, the next finished range; `other`: the same positions of the other
    /// array, free now (the result is in `slots`, and the sort reads neither again).
    fn record(&mut self, slots: &mut [Slot], other: &mut [Slot]) {
        self.hits = self.sums.record(slots, other, self.hits);
    }
}

/// Insertion sort by score into `out`, stable (a slot moves only past strictly larger
/// scores): slot i is `source(i, out)` (read before `out[i]` is written, so `out` may be
/// its own source). A slot no smaller than the largest so far is placed without a look
/// back, which is most slots in the nearly sorted runs of [`level`]. (`get` instead of
/// indexing: the indices are in range, and the misses, which cannot happen, return
/// instead of panicking.)
fn insertion_sort(out: &mut [Slot], mut source: impl FnMut(usize, &[Slot]) -> Option<Slot>) {
    let mut largest = 0;
    for i in 0..out.len() {
        let Some(moving) = source(i, out) else {
            return;
        };
        let k = score(&moving);
        let mut gap = i;
        if k < largest {
            while gap > 0 {
                // gap > 0: the subtractions cannot wrap.
                let Some(&before) = out.get(gap.wrapping_sub(1)) else {
                    return;
                };
                if score(&before) <= k {
                    break;
                }
                if let Some(place) = out.get_mut(gap) {
                    *place = before;
                }
                gap = gap.wrapping_sub(1);
            }
        } else {
            largest = k;
        }
        if let Some(place) = out.get_mut(gap) {
            *place = moving;
        }
    }
}

/// Whether `slots[prefix..]` are in increasing arrival order and all arrived after every
/// slot of `slots[..prefix]`; and the bits in which their scores differ.
pub(crate) fn appended_in_order(slots: &[Slot], prefix: usize) -> (bool, u64) {
    let first = slots.first().map_or(0, score);
    let (head, tail) = slots.split_at(prefix.min(slots.len()));
    let (mut latest, mut varying) = (None, 0);
    for slot in head {
        latest = latest.max(Some(slot.order));
        varying |= score(slot) ^ first;
    }
    let mut in_order = true;
    for slot in tail {
        // `None` < `Some`: the first of the tail is later than an empty head.
        in_order &= latest < Some(slot.order);
        latest = Some(slot.order);
        varying |= score(slot) ^ first;
    }
    (in_order, varying)
}

/// Stable LSD passes by the low `bytes` bytes of `key`, from `*from` into `*to` and back,
/// skipping the bytes in which every key agrees (one counting read first finds them).
/// Swaps the two references after each pass, so that `*from` ends with the result;
/// returns whether they were swapped an odd number of times.
fn lsd<'a, K: Fn(&Slot) -> u64>(
    from: &mut &'a mut [Slot],
    to: &mut &'a mut [Slot],
    key: K,
    bytes: usize,
) -> bool {
    let n = from.len();
    let mut counts = [[0u32; BUCKETS]; 8];
    let bytes = bytes.min(8);
    // Counts and heads add up to n < 2^31, and shifts are 8 × (byte < 8) < 64: the
    // `wrapping_` operations never wrap. (Bounded ranges, not `enumerate`, which has an
    // overflow path.)
    for slot in from.iter() {
        let k = key(slot);
        for (byte, counts) in (0..8u32).zip(counts.iter_mut()).take(bytes) {
            if let Some(count) =
                counts.get_mut(k.wrapping_shr(byte.wrapping_mul(8)) as usize & (BUCKETS - 1))
            {
                *count = count.wrapping_add(1);
            }
        }
    }
    let mut flipped = false;
    for (byte, counts) in (0..8u32).zip(counts.iter()).take(bytes) {
        if counts.iter().any(|&c| c as usize == n) {
            continue; // every key has the same digit here
        }
        let mut heads = [0u32; BUCKETS];
        let mut sum = 0u32;
        for (head, &count) in heads.iter_mut().zip(counts) {
            *head = sum;
            sum = sum.wrapping_add(count);
        }
        let shift = byte.wrapping_mul(8);
        scatter(from, to, &mut heads, |slot| {
            key(slot).wrapping_shr(shift) as usize
        });
        core::mem::swap(from, to);
        flipped = !flipped;
    }
    flipped
}

/// The radix sort on two threads (with `std`; `SortedBuffer::sorted_parallel`): the
/// first level's counting and distribution split by storage halves, the rest by digits.
///
/// Each thread counts the digits of its half of the storage (and their hits) and
/// distributes that half stably into its half of the scratch. Digit d's bucket is then
/// the first half's piece followed by the second half's: storage order. The digit range
/// is then halved by slots, recursively (`rayon::join`), down to ranges of n/16 slots,
/// so that the threads share out the work however it falls; each range's buckets are
/// copied, piece by piece, to their sorted place in the storage and sorted there as the
/// single-threaded levels sort a level's buckets (`level`: the long ones distributed
/// further, runs of short ones finished together), with a second array of the range's
/// own (heap, as long as its largest bucket), recording the running hit counts from the
/// hits of the digits before the range, and the score sums of its whole blocks of
/// sorted positions (`prefix.rs`; the blocks two ranges share are summed from their
/// parts after the join). The prefix sums of the blocks end at the start of the scratch.
///
/// Bit for bit the single-threaded order: the first level is the same stable
/// distribution, and the buckets are sorted by the same code. It needs storage in order
/// (ties in storage order are ties in arrival order, see [`sort_and_count_in`]); a
/// reservoir's storage is sorted on one thread.
#[cfg(feature = "std")]
pub(crate) mod two_threads {
    use core::ops::Range;

    use super::{distribute, finish, finish_short, scatter, score, Tally, SMALL, WIDE, WIDE_FROM};
    use crate::buffer::Slot;
    use crate::prefix::{self, BlockSums, BLOCK};

    /// The bucket ranges are split until they hold at most 1/GRAINS of the slots.
    const GRAINS: usize = 16;

    /// Sorts of at least this many slots take two threads: from 2^17 slots (2 MiB,
    /// beyond a core's L2) the threads' hand-over costs less than it saves.
    pub(crate) const FROM: usize = 1 << 17;

    /// Whether `len` slots are sorted on two threads: long enough, and rayon's pool has
    /// more than one (`RAYON_NUM_THREADS=1` keeps every sort on the caller's thread).
    pub(crate) fn serves(len: usize) -> bool {
        len >= FROM && threads() > 1
    }

    /// The threads of rayon's pool, which starts on first use; 0 if it cannot start
    /// (rayon panics when it cannot spawn its threads): then every sort, which has
    /// moved nothing yet when it asks, and every bin stays on the caller's thread.
    pub(crate) fn threads() -> usize {
        std::panic::catch_unwind(rayon::current_num_threads).unwrap_or(0)
    }

    /// [`super::appended_in_order`] on two threads: each half of the storage read on its
    /// own, and the two readings joined.
    pub(crate) fn appended_in_order(slots: &[Slot], prefix: usize) -> (bool, u64) {
        let first = slots.first().map_or(0, score);
        let half = slots.len() / 2;
        let (low, high) = slots.split_at(half);
        let (a, b) = rayon::join(
            || Reading::of(low, prefix, first),
            || Reading::of(high, prefix.saturating_sub(half), first),
        );
        // The second half's tail must start after everything before it: the first
        // half's latest arrival (tail or head) and the second half's head.
        let before = a.latest.max(b.head_latest);
        let in_order =
            a.in_order && b.in_order && b.tail_first.map_or(true, |first| before < Some(first));
        (in_order, a.varying | b.varying)
    }

    /// One half's part of [`appended_in_order`].
    struct Reading {
        /// Its tail slots in increasing arrival order, all after its head slots.
        in_order: bool,
        /// The latest arrival among its head slots.
        head_latest: Option<u32>,
        /// The arrival of its first tail slot.
        tail_first: Option<u32>,
        /// The latest arrival of all its slots (the last tail slot's when in order).
        latest: Option<u32>,
        /// The bits in which its scores differ from `first`.
        varying: u64,
    }

    impl Reading {
        /// Reads `slots`, of which the first `head` belong to the sorted prefix.
        fn of(slots: &[Slot], head: usize, first: u64) -> Reading {
            let (head, tail) = slots.split_at(head.min(slots.len()));
            let (mut latest, mut varying) = (None, 0);
            for slot in head {
                latest = latest.max(Some(slot.order));
                varying |= score(slot) ^ first;
            }
            let head_latest = latest;
            let mut in_order = true;
            for slot in tail {
                // `None` < `Some`: the first of the tail is later than an empty head.
                in_order &= latest < Some(slot.order);
                latest = Some(slot.order);
                varying |= score(slot) ^ first;
            }
            Reading {
                in_order,
                head_latest,
                tail_first: tail.first().map(|slot| slot.order),
                latest: latest.max(head_latest),
                varying,
            }
        }
    }

    /// The counts and hits of each first-level digit in one half of the storage.
    struct Half {
        counts: [u32; WIDE],
        hits: [u32; WIDE],
    }

    /// The first level's digit: `width` bits ending `shift` bits above the bottom.
    #[derive(Clone, Copy)]
    struct Digit {
        shift: u32,
        mask: usize,
    }

    impl Digit {
        /// (Masked by `WIDE − 1` too, which changes nothing, mask < WIDE, but shows the
        /// compiler that it indexes the counting arrays in range.)
        fn of(&self, slot: &Slot) -> usize {
            (score(slot) >> self.shift) as usize & self.mask & (WIDE - 1)
        }
    }

    /// Sorts `slots` (in storage order, see the module docs) with `scratch` as long, on
    /// two threads, and records the running hit counts and the prefix sums of
    /// `prefix.rs`, which it leaves at the start of `scratch`. `varying`: the bits in
    /// which the scores differ. Returns the scratch slots the prefix sums take.
    pub(crate) fn sort_and_count(slots: &mut [Slot], scratch: &mut [Slot], varying: u64) -> usize {
        let n = slots.len();
        // The sums of each whole block of sorted positions (the last, partial one is
        // summed slot by slot when it is needed).
        let mut block_sums = vec![0u128; n / BLOCK];
        if varying == 0 {
            // All equal: in order already.
            let mut tally = Tally {
                hits: 0,
                sums: BlockSums::new(0, &mut block_sums),
            };
            finish(slots, scratch, false, &mut tally);
            return prefix::write(&block_sums, scratch);
        }
        // The single-threaded first level's digit (`super::level::<WIDE>`).
        let top = u64::BITS - varying.leading_zeros();
        let width = (usize::BITS - n.leading_zeros())
            .saturating_sub(1)
            .min(WIDE.trailing_zeros())
            .min(top);
        let digit = Digit {
            shift: top - width,
            mask: (1usize << width) - 1,
        };
        let half = n / 2;
        let (first, second) = slots.split_at(half);
        let (first_to, second_to) = scratch.split_at_mut(half);
        let (a, b) = rayon::join(
            || distribute_half(first, first_to, digit),
            || distribute_half(second, second_to, digit),
        );
        // Where each digit's bucket starts in the result and in each half's scratch, and
        // the hits before it: running sums of the halves' counts.
        let buckets = digit.mask + 1;
        let mut starts = [0usize; WIDE + 1];
        let mut a_starts = [0usize; WIDE];
        let mut b_starts = [0usize; WIDE];
        let mut hits_before = [0u32; WIDE + 1];
        let (mut a_at, mut b_at, mut hits) = (0usize, 0usize, 0u32);
        for d in 0..buckets {
            let (Some(&ca), Some(&cb), Some(&ha), Some(&hb)) = (
                a.counts.get(d),
                b.counts.get(d),
                a.hits.get(d),
                b.hits.get(d),
            ) else {
                break;
            };
            if let (Some(s), Some(sa), Some(sb), Some(h)) = (
                starts.get_mut(d),
                a_starts.get_mut(d),
                b_starts.get_mut(d),
                hits_before.get_mut(d),
            ) {
                (*s, *sa, *sb, *h) = (a_at.wrapping_add(b_at), a_at, b_at, hits);
            }
            // Counts and hits add up to at most n < 2^31.
            a_at = a_at.wrapping_add(ca as usize);
            b_at = b_at.wrapping_add(cb as usize);
            hits = hits.wrapping_add(ha).wrapping_add(hb);
        }
        if let (Some(end), Some(all)) = (starts.get_mut(buckets), hits_before.get_mut(buckets)) {
            (*end, *all) = (n, hits);
        }
        let pieces = Pieces {
            first: first_to,
            second: second_to,
            starts: &starts,
            first_starts: &a_starts,
            second_starts: &b_starts,
            first_counts: &a.counts,
            hits_before: &hits_before,
            shift: digit.shift,
            grain: n / GRAINS,
        };
        let parts = pieces.sort_range(slots, 0..buckets, &mut block_sums, 0);
        // The blocks that straddle two ranges, from their parts.
        for (block, quanta) in parts.into_iter().flatten().flatten() {
            if let Some(sum) = block_sums.get_mut(block) {
                // Below 2^93 (prefix.rs).
                *sum = sum.wrapping_add(quanta);
            }
        }
        prefix::write(&block_sums, scratch)
    }

    /// Counts the digits (and hits) of `from`, then distributes it stably into `to`.
    fn distribute_half(from: &[Slot], to: &mut [Slot], digit: Digit) -> Half {
        let mut half = Half {
            counts: [0; WIDE],
            hits: [0; WIDE],
        };
        for slot in from {
            let d = digit.of(slot);
            half.counts[d] += 1;
            half.hits[d] += u32::from(slot.label());
        }
        let mut heads = [0u32; WIDE];
        let mut sum = 0u32;
        for (head, &count) in heads.iter_mut().zip(&half.counts) {
            *head = sum;
            sum += count;
        }
        scatter(from, to, &mut heads, |slot| digit.of(slot));
        half
    }

    /// The distributed halves, and where each digit's pieces lie.
    struct Pieces<'a> {
        first: &'a [Slot],
        second: &'a [Slot],
        /// Each digit's start in the result; one more, n, at the end.
        starts: &'a [usize; WIDE + 1],
        first_starts: &'a [usize; WIDE],
        second_starts: &'a [usize; WIDE],
        first_counts: &'a [u32; WIDE],
        /// The hits before each digit's bucket; one more, all hits, at the end.
        hits_before: &'a [u32; WIDE + 1],
        /// Digit ranges with more slots than this are split in two, for two threads.
        grain: usize,
        /// The bits below the first level's digit.
        shift: u32,
    }

    impl Pieces<'_> {
        /// Sorts the buckets of `digits` into `out`, their part of the result: halves of
        /// the range (by slots) on rayon's threads, until the ranges are short, so that
        /// the threads share out the work however it falls (the skewed scores' big
        /// buckets, which take more levels, bunch at the top). `sums`: the sums of the
        /// whole blocks of sorted positions in the range, from block `first`; returns the
        /// parts of the blocks its ranges share ([`BlockSums::parts`]).
        fn sort_range(
            &self,
            out: &mut [Slot],
            digits: Range<usize>,
            sums: &mut [u128],
            first: usize,
        ) -> Vec<[Option<(usize, u128)>; 2]> {
            let start = self.starts.get(digits.start).copied().unwrap_or(0);
            let end = self.starts.get(digits.end).copied().unwrap_or(start);
            if digits.len() < 2 || end - start <= self.grain {
                return vec![self.sort_into(out, digits, sums)];
            }
            let middle = start + (end - start) / 2;
            let split = (digits.start + 1..digits.end)
                .find(|&d| self.starts.get(d).is_some_and(|&s| s >= middle))
                .unwrap_or(digits.end - 1);
            let at = self.starts.get(split).map_or(0, |&s| s - start);
            let (low, high) = out.split_at_mut(at.min(out.len()));
            let ((low_sums, low_first), (high_sums, high_first)) =
                prefix::split_at(sums, first, start + at);
            let (mut parts, high_parts) = rayon::join(
                || self.sort_range(low, digits.start..split, low_sums, low_first),
                || self.sort_range(high, split..digits.end, high_sums, high_first),
            );
            parts.extend(high_parts);
            parts
        }

        /// Sorts the buckets of `digits` into `out` (their part of the result), on this
        /// thread, with the running hit counts. Each bucket's two pieces are copied into
        /// place, reading the bits in which its scores differ on the way; long buckets
        /// are then sorted as [`super::level`] sorts its buckets, and runs of short ones
        /// finished together (see there). `sums`: the sums of the range's whole blocks
        /// (see [`Pieces::sort_range`]); returns the parts of the blocks it shares.
        fn sort_into(
            &self,
            out: &mut [Slot],
            digits: Range<usize>,
            sums: &mut [u128],
        ) -> [Option<(usize, u128)>; 2] {
            let start = self.starts.get(digits.start).copied().unwrap_or(0);
            let mut tally = Tally {
                hits: self.hits_before.get(digits.start).copied().unwrap_or(0),
                sums: BlockSums::new(start, sums),
            };
            let len = |d: usize| {
                let (start, end) = (self.starts.get(d), self.starts.get(d + 1));
                end.zip(start).map_or(0, |(end, start)| end - start)
            };
            // The second array of the buckets that take a level, as long as the longest
            // so far: none for a bucket of ties (saturated outputs at 1.0 can be a
            // third of the slots), which is finished where it lies.
            let mut other = Vec::new();
            // shift < 64 (see `sort_and_count`).
            let below = (1u64 << self.shift) - 1;
            let (mut run, mut at) = (0, 0);
            for d in digits {
                let (Some(&from_first), Some(&a), Some(&b)) = (
                    self.first_counts.get(d),
                    self.first_starts.get(d),
                    self.second_starts.get(d),
                ) else {
                    break; // never: the digits are those of the arrays
                };
                let (length, from_first) = (len(d), from_first as usize);
                let end = at + length;
                let Some(bucket) = out.get_mut(at..end) else {
                    break; // never: the buckets fill `out`
                };
                let (head, tail) = bucket.split_at_mut(from_first.min(length));
                let first = self.first.get(a..a + head.len()).unwrap_or_default();
                let second = self.second.get(b..b + tail.len()).unwrap_or_default();
                // (Any slot of the bucket serves; the first piece may be empty.)
                let lowest = first.first().or(second.first()).map_or(0, score);
                let mut varying = 0;
                for (place, slot) in head
                    .iter_mut()
                    .zip(first)
                    .chain(tail.iter_mut().zip(second))
                {
                    *place = *slot;
                    varying |= score(slot) ^ lowest;
                }
                if length > SMALL {
                    if let Some(short) = out.get_mut(run..at) {
                        finish_short(short, &mut [], false, &mut tally);
                    }
                    let varying = varying & below;
                    let other = if varying == 0 {
                        Some(&mut [][..])
                    } else {
                        if other.len() < length {
                            other.resize(length, Slot::EMPTY);
                        }
                        other.get_mut(..length)
                    };
                    if let (Some(bucket), Some(other)) = (out.get_mut(at..end), other) {
                        distribute::<WIDE_FROM>(bucket, other, varying, false, &mut tally);
                    }
                    run = end;
                }
                at = end;
            }
            if let Some(short) = out.get_mut(run..at) {
                finish_short(short, &mut [], false, &mut tally);
            }
            tally.sums.parts()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn slot(score: f64, arrival: u32, label: u32) -> Slot {
        Slot {
            score,
            order: arrival << 1 | label,
            hits_before: 0,
        }
    }

    /// The oracle: a stable comparison sort by score alone, of slots held in arrival
    /// order, so that equal scores keep their arrival order (what SPEC §3.2 asks).
    fn naive(slots: &[Slot]) -> Vec<Slot> {
        let mut by_arrival = slots.to_vec();
        by_arrival.sort_by_key(|s| s.order >> 1);
        by_arrival.sort_by(|a, b| a.score.partial_cmp(&b.score).unwrap());
        by_arrival
    }

    fn same_hits(a: &[Slot], b: &[Slot]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.hits_before == y.hits_before)
    }

    /// The prefix sums of `prefix.rs` of sorted `slots`, summed block by block.
    fn written_sums(slots: &[Slot]) -> Vec<Slot> {
        let blocks: Vec<u128> = slots
            .chunks_exact(crate::prefix::BLOCK)
            .map(crate::prefix::quanta_of)
            .collect();
        let mut sums = vec![Slot::EMPTY; 2 * (blocks.len() + 1)];
        assert_eq!(crate::prefix::write(&blocks, &mut sums), sums.len());
        sums
    }

    /// The same sums: the integer fields of the same slots.
    fn same_sums(a: &[Slot], b: &[Slot]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x.order, x.hits_before) == (y.order, y.hits_before))
    }

    fn same_bits(a: &[Slot], b: &[Slot]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.score.to_bits() == y.score.to_bits() && x.order == y.order)
    }

    /// Scores as the states store them (−0 already +0): the values real data and the
    /// edge cases produce, with heavy ties at 1.0 at rate `ones`.
    fn score(ones: f64) -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => 0.0..=1.0f64,
            1 => Just(0.0),
            1 => Just(-0.0).prop_map(|z: f64| z + 0.0),
            1 => (1u64..(1 << 52)).prop_map(f64::from_bits), // subnormals
            1 => Just(f64::MIN_POSITIVE),
            1 => Just(1.0 - f64::EPSILON / 2.0),
            1 => (0.0..=1.0f32).prop_map(f64::from), // float32 softmax outputs
            1 => (0u32..16).prop_map(|k| f64::from(k) / 15.0), // few distinct values
        ]
        .prop_flat_map(move |s| {
            prop_oneof![
                1 + (100.0 * (1.0 - ones)) as u32 => Just(s),
                1 + (100.0 * ones) as u32 => Just(1.0),
            ]
        })
    }

    /// Samples in a random storage order (as a reservoir holds them), arrivals distinct.
    fn shuffled(max: usize) -> impl Strategy<Value = Vec<Slot>> {
        (0.0..0.6f64)
            .prop_flat_map(move |ones| proptest::collection::vec((score(ones), 0u32..2), 0..max))
            .prop_flat_map(|samples| {
                let n = samples.len() as u32;
                (
                    Just(samples),
                    Just((0..n).collect::<Vec<u32>>()).prop_shuffle(),
                )
            })
            .prop_map(|(samples, arrivals)| {
                samples
                    .iter()
                    .zip(arrivals)
                    .map(|(&(score, label), arrival)| slot(score, arrival, label))
                    .collect()
            })
    }

    /// A buffer's storage of `slots`: the first `cut` of them (a fraction, by arrival)
    /// sorted, the rest after them in arrival order; and the sorted prefix's length.
    fn buffer_storage(slots: &[Slot], cut: f64) -> (Vec<Slot>, usize) {
        let mut by_arrival = slots.to_vec();
        by_arrival.sort_by_key(|s| s.order);
        let prefix = (cut * by_arrival.len() as f64) as usize;
        let mut storage = naive(&by_arrival[..prefix]);
        storage.extend_from_slice(&by_arrival[prefix..]);
        (storage, prefix)
    }

    /// Sorts with scratch and in place; both must give `expected`.
    fn both_sorts(slots: &[Slot], prefix: usize) -> (Vec<Slot>, Vec<Slot>) {
        let mut with_scratch = slots.to_vec();
        let mut scratch = vec![Slot::EMPTY; slots.len()];
        let summed = sort_and_count_in(&mut with_scratch, &mut scratch, prefix, Appended::UNKNOWN);
        // The running hit counts recorded on the way equal those of a pass of their own.
        let mut counted = with_scratch.clone();
        record_running_hits(&mut counted);
        assert!(same_hits(&counted, &with_scratch), "running hits");
        // So do the prefix sums left in the scratch (radix sorts only).
        let sums = written_sums(&with_scratch);
        if slots.len() > SMALL {
            assert!(same_sums(&scratch[..summed], &sums), "prefix sums");
        } else {
            assert_eq!(summed, 0);
        }
        // The same order, counts and sums with the thresholds of a build without `std`.
        if slots.len() > SMALL {
            let mut embedded = slots.to_vec();
            let mut scratch = vec![Slot::EMPTY; slots.len()];
            let (in_order, varying) = appended_in_order(&embedded, prefix);
            let summed =
                one_thread::<WIDE_FROM_NO_STD>(&mut embedded, &mut scratch, in_order, varying);
            assert!(same_bits(&embedded, &with_scratch), "no_std order");
            assert!(same_hits(&embedded, &with_scratch), "no_std running hits");
            assert!(same_sums(&scratch[..summed], &sums), "no_std prefix sums");
        }
        let mut in_place = slots.to_vec();
        sort_by_score_then_arrival(&mut in_place);
        (with_scratch, in_place)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The moves of `place_run`'s window, every version (the dispatched one, with
        /// AVX2 where the CPU has it, and the one compiled for the baseline) against a
        /// count written for the test, on keys with many ties and the padding keys.
        #[test]
        fn every_version_of_the_window_counts_the_moves(
            keys in proptest::collection::vec(
                prop_oneof![0i64..6, Just(0), Just(i64::MAX), 0i64..1 << 62],
                CHUNK + 2 * WINDOW,
            ),
        ) {
            let Ok(keys) = <[i64; CHUNK + 2 * WINDOW]>::try_from(keys) else {
                unreachable!("the strategy's length");
            };
            let expected: Vec<i64> = (WINDOW..WINDOW + CHUNK)
                .map(|at| {
                    let key = keys[at];
                    let larger_before = keys[at - WINDOW..at].iter().filter(|&&k| k > key).count();
                    let smaller_after = keys[at + 1..=at + WINDOW].iter().filter(|&&k| k < key).count();
                    smaller_after as i64 - larger_before as i64
                })
                .collect();
            let (mut dispatched, mut baseline) = ([0i64; CHUNK], [0i64; CHUNK]);
            moves_of(&keys, &mut dispatched);
            moves_body(&keys, &mut baseline);
            prop_assert_eq!(&dispatched[..], &expected[..]);
            prop_assert_eq!(&baseline[..], &expected[..]);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Scores clustered in a few narrow ranges (skewed data): inner ranges of more
        /// than `WIDE_FROM` slots take the wide digits, and long runs of short buckets
        /// are finished together.
        #[test]
        fn clustered_scores(
            centres in proptest::collection::vec(0.0..=1.0f64, 1..4),
            offsets in proptest::collection::vec((0usize..4, 0u64..1 << 24, 0u32..2), 1500..4000),
            cut in 0.0..1.0f64,
        ) {
            let slots: Vec<Slot> = (0u32..)
                .zip(&offsets)
                .map(|(arrival, &(c, offset, label))| {
                    let centre = centres[c % centres.len()].to_bits();
                    let score = f64::from_bits(centre.saturating_sub(offset)).max(0.0) + 0.0;
                    slot(score, arrival, label)
                })
                .collect();
            let (storage, prefix) = buffer_storage(&slots, cut);
            let (radix, in_place) = both_sorts(&storage, prefix);
            let expected = naive(&slots);
            prop_assert!(same_bits(&radix, &expected));
            prop_assert!(same_bits(&in_place, &expected));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Storage in any order (a reservoir's): the arrival passes run.
        #[test]
        fn radix_order_is_the_stable_comparison_order(slots in shuffled(600)) {
            let expected = naive(&slots);
            let (radix, in_place) = both_sorts(&slots, 0);
            prop_assert!(same_bits(&radix, &expected));
            prop_assert!(same_bits(&in_place, &expected));
            // Sorting sorted slots changes nothing.
            let (again, _) = both_sorts(&radix, radix.len());
            prop_assert!(same_bits(&again, &expected));
            let mut by_arrival = radix.clone();
            sort_by_arrival(&mut by_arrival);
            prop_assert!(by_arrival.windows(2).all(|w| w[0].order < w[1].order));
        }

        /// A buffer's storage: a sorted prefix, then later arrivals in order (the
        /// arrival passes are skipped).
        #[test]
        fn sorted_prefix_then_appended(slots in shuffled(600), cut in 0.0..1.0f64) {
            let (storage, prefix) = buffer_storage(&slots, cut);
            let (radix, in_place) = both_sorts(&storage, prefix);
            let expected = naive(&slots);
            prop_assert!(same_bits(&radix, &expected));
            prop_assert!(same_bits(&in_place, &expected));
        }

        /// Every estimate of a buffer sorted by the radix sort (room for twice its
        /// samples) equals, bit for bit, that of the same buffer sorted in place.
        #[test]
        fn estimates_unchanged(slots in shuffled(400), bins in 1usize..20) {
            use crate::{Binning, Closure, Norm, SortedBuffer, SweepOptions, Ties};
            let scores: Vec<f64> = slots.iter().map(|s| s.score).collect();
            let labels: Vec<u8> = slots.iter().map(|s| s.label()).collect();
            let (mut roomy, mut full) =
                (vec![Slot::EMPTY; 2 * slots.len() + 2], vec![Slot::EMPTY; slots.len() + 1]);
            let mut radix = SortedBuffer::with_storage(&mut roomy).unwrap();
            let mut in_place = SortedBuffer::with_storage(&mut full).unwrap();
            // Two batches: the second sort starts from a sorted prefix.
            let half = scores.len() / 2;
            for range in [0..half, half..scores.len()] {
                radix.push_batch(&scores[range.clone()], &labels[range.clone()]).unwrap();
                in_place.push_batch(&scores[range.clone()], &labels[range.clone()]).unwrap();
                let (a, b) = (radix.sorted(), in_place.sorted());
                prop_assert!(same_bits(a.slots(), b.slots()));
                for binning in [
                    Binning::EqualMass(Ties::Split),
                    Binning::EqualMass(Ties::Keep),
                    Binning::EqualWidth(Closure::Left),
                ] {
                    let norm = Norm::L2;
                    prop_assert_eq!(a.ece_bin(binning, bins, norm), b.ece_bin(binning, bins, norm));
                    prop_assert_eq!(a.ece_debias(binning, bins, norm), b.ece_debias(binning, bins, norm));
                    prop_assert_eq!(a.mce(binning, bins), b.mce(binning, bins));
                    let options = SweepOptions::default();
                    prop_assert_eq!(a.ece_sweep(binning, norm, options), b.ece_sweep(binning, norm, options));
                }
            }
        }

        /// The two-thread sort, called below its threshold, gives the order, running hits
        /// and prefix sums of the single-threaded one, for a sorted prefix then appended
        /// slots.
        #[test]
        fn two_threads_sort_as_one(slots in shuffled(600), cut in 0.0..1.0f64) {
            let (storage, prefix) = buffer_storage(&slots, cut);
            let (one, _) = both_sorts(&storage, prefix);
            let (in_order, varying) = two_threads::appended_in_order(&storage, prefix);
            prop_assert!(in_order);
            prop_assert_eq!(varying, appended_in_order(&storage, prefix).1);
            let (mut two, mut scratch) = (storage.clone(), vec![Slot::EMPTY; storage.len()]);
            let summed = two_threads::sort_and_count(&mut two, &mut scratch, varying);
            prop_assert!(same_bits(&two, &one));
            prop_assert!(same_hits(&two, &one));
            if two.len() >= 2 {
                prop_assert!(same_sums(&scratch[..summed], &written_sums(&one)));
            } else {
                prop_assert_eq!(summed, 0, "no room for the two slots of sum 0");
            }
        }

        /// The two-thread reading of the storage agrees with the one-thread reading on
        /// any storage and prefix, in order or not.
        #[test]
        fn two_threads_read_as_one(slots in shuffled(200), prefix in 0usize..220) {
            prop_assert_eq!(
                two_threads::appended_in_order(&slots, prefix),
                appended_in_order(&slots, prefix)
            );
            // A buffer's storage with one late arrival moved forward is out of order.
            let mut by_arrival = slots.clone();
            by_arrival.sort_by_key(|s| s.order);
            prop_assert_eq!(
                two_threads::appended_in_order(&by_arrival, 0),
                appended_in_order(&by_arrival, 0)
            );
            if by_arrival.len() >= 3 {
                let last = by_arrival.pop().unwrap();
                by_arrival.insert(by_arrival.len() / 2, last);
                let (in_order, _) = two_threads::appended_in_order(&by_arrival, 0);
                prop_assert!(!in_order);
            }
        }

        /// Large arrival numbers (a window or reservoir near its rebasing point).
        #[test]
        fn high_arrival_numbers(slots in shuffled(300), offset in (1u32 << 29)..(1 << 30)) {
            let slots: Vec<Slot> = slots
                .iter()
                .map(|s| Slot { order: s.order + (offset << 1), ..*s })
                .collect();
            let (radix, _) = both_sorts(&slots, 0);
            prop_assert!(same_bits(&radix, &naive(&slots)));
        }
    }

    #[test]
    fn one_is_the_largest_score() {
        assert_eq!(ONE, 1.0f64.to_bits());
        assert_eq!(ONE.trailing_zeros(), f64::MANTISSA_DIGITS - 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// A run of buckets in order by digit is placed as a stable sort orders it,
        /// whatever its buckets' lengths (placed by the window, or longer and sorted
        /// again), across the ends of `place_run`'s chunks, and wherever the run starts
        /// in its level's range.
        #[test]
        fn a_run_of_buckets_is_placed_as_sorted(
            buckets in proptest::collection::vec(
                proptest::collection::vec((0u64..6, 0u32..2), 0..2 * WINDOW + 4),
                0..40,
            ),
            offset in 0usize..1000,
        ) {
            let (mut run, mut ends) = (Vec::new(), Vec::new());
            for (digit, bucket) in (0u64..).zip(&buckets) {
                for &(low, label) in bucket {
                    // Bucket `digit` above, few distinct low bits (ties) below.
                    let score = f64::from_bits(0x3fe0_0000_0000_0000 | digit << 20 | low);
                    run.push(slot(score, run.len() as u32, label));
                }
                ends.push((offset + run.len()) as u32);
            }
            let mut out = vec![Slot::EMPTY; run.len()];
            place_run(&run, &mut out, &ends, offset);
            prop_assert!(same_bits(&out, &naive(&run)));
        }
    }

    #[test]
    fn sorts_large_inputs_with_heavy_ties() {
        // 20 000 slots, 56 % exact 1.0 (DenseNet-40 on CIFAR-10), the rest float32-like,
        // stored scrambled and in arrival order.
        let n = 20_000u32;
        let slots: Vec<Slot> = (0..n)
            .map(|i| {
                let h = i.wrapping_mul(2_654_435_761);
                let score = if h % 100 < 56 {
                    1.0
                } else {
                    f64::from(h as f32 / u32::MAX as f32)
                };
                slot(score, (i * 7_919) % n, h >> 31)
            })
            .collect();
        let (radix, in_place) = both_sorts(&slots, 0);
        assert!(same_bits(&radix, &naive(&slots)));
        assert!(same_bits(&in_place, &naive(&slots)));
        let mut by_arrival = slots.clone();
        by_arrival.sort_by_key(|s| s.order);
        let (radix, _) = both_sorts(&by_arrival, 0);
        assert!(same_bits(&radix, &naive(&slots)));
    }

    #[test]
    fn sorts_a_large_skewed_input() {
        // Several levels of distribution before the buckets fit the cache: 200 000 full
        // f64 scores skewed towards 1 (as the benchmarks'), a third of them exact 1.0.
        let n = 200_000u32;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let slots: Vec<Slot> = (0..n)
            .map(|i| {
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                let u =
                    (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64;
                let score = if i % 3 == 0 {
                    1.0
                } else {
                    1.0 - 0.9 * u * u * u
                };
                slot(score, i, (state & 1) as u32)
            })
            .collect();
        let (radix, in_place) = both_sorts(&slots, 0);
        assert!(same_bits(&radix, &naive(&slots)));
        assert!(same_bits(&in_place, &radix));
    }

    #[test]
    fn two_threads_sort_large_skewed_inputs() {
        // Above the threshold, through `SortedBuffer::sorted_parallel`: 300 000 skewed
        // full f64 scores with a fifth exact 1.0, pushed in three batches (the later
        // sorts start from a sorted prefix), against the single-threaded sort.
        use crate::SortedBuffer;
        let n = 300_000usize;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let (mut scores, mut labels) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for i in 0..n {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let u = (state.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) as f64 / (1u64 << 53) as f64;
            scores.push(if i % 5 == 0 {
                1.0
            } else {
                1.0 - 0.9 * u * u * u
            });
            labels.push((state >> 63) as u8);
        }
        let (mut two, mut one) = (vec![Slot::EMPTY; 2 * n], vec![Slot::EMPTY; 2 * n]);
        let mut parallel = SortedBuffer::with_storage(&mut two).unwrap();
        let mut single = SortedBuffer::with_storage(&mut one).unwrap();
        for range in [0..n / 2, n / 2..n / 2 + 1000, n / 2 + 1000..n] {
            parallel
                .push_batch(&scores[range.clone()], &labels[range.clone()])
                .unwrap();
            single
                .push_batch(&scores[range.clone()], &labels[range])
                .unwrap();
            let (a, b) = (parallel.sorted_parallel(), single.sorted());
            assert!(same_bits(a.slots(), b.slots()));
            assert!(same_hits(a.slots(), b.slots()));
        }
        let all: Vec<Slot> = (0..n)
            .map(|i| slot(scores[i], i as u32, u32::from(labels[i])))
            .collect();
        assert!(same_bits(parallel.sorted_parallel().slots(), &naive(&all)));
        // The parallel view sums its bins on rayon's threads, and bins of 2^16 samples
        // or more in two halves: the same bits as one pass (2 and 4 bins are such bins,
        // 15 and 100 are summed whole).
        use crate::{Binning, Closure, Norm, SweepOptions, Ties};
        let (a, b) = (parallel.sorted_parallel(), single.sorted());
        for binning in [
            Binning::EqualMass(Ties::Split),
            Binning::EqualMass(Ties::Keep),
            Binning::EqualWidth(Closure::Left),
        ] {
            for bins in [1, 2, 4, 15, 100] {
                assert!(a.bins(binning, bins).eq(b.bins(binning, bins)));
                assert_eq!(
                    a.ece_bin(binning, bins, Norm::L2),
                    b.ece_bin(binning, bins, Norm::L2)
                );
                assert_eq!(
                    a.ece_debias(binning, bins, Norm::L1),
                    b.ece_debias(binning, bins, Norm::L1)
                );
                assert_eq!(a.mce(binning, bins), b.mce(binning, bins));
            }
            let options = SweepOptions::default();
            assert_eq!(
                a.ece_sweep(binning, Norm::L2, options),
                b.ece_sweep(binning, Norm::L2, options)
            );
        }
        assert_eq!(
            a.bins(Binning::EQUAL_MASS, 1).next().unwrap().count(),
            n as u64
        );
    }

    #[test]
    fn too_little_scratch_sorts_in_place() {
        let slots: Vec<Slot> = (0..200u32)
            .map(|i| slot(f64::from(i % 7) / 7.0, 199 - i, 0))
            .collect();
        let mut sorted = slots.clone();
        sort_and_count_in(&mut sorted, &mut [Slot::EMPTY; 10], 0, Appended::UNKNOWN);
        assert!(same_bits(&sorted, &naive(&slots)));
    }
}
