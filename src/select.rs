//! Equal-mass bins of a fixed count by selection: the statistics of the B bins a sorted
//! buffer would give, bit for bit, without sorting every sample.
//!
//! Only the samples next to a bin boundary need their exact sorted positions. One
//! counting pass of the top 11 varying bits of the scores (the first digit of the radix
//! sort, `radix.rs`) gives each digit's range of sorted positions; a digit whose range
//! holds no boundary inside it lies wholly in one bin, known from the counts alone. A
//! second pass records each such sample into its bin and copies the others, those of
//! the at most B − 1 digits that straddle a boundary (about (B − 1)·n/2048 samples on
//! smooth data), into the scratch, in arrival order; those are sorted by score with
//! ties in arrival order, exactly as the buffer sorts them (SPEC §3.2), and recorded
//! by their positions. A straddling digit of [`MIN_SAMPLES`] or more (dense data: the
//! top digit of scores piling up near 1) is selected in turn over the next 11 bits,
//! one level deeper, where the rest of the scratch can hold its copy; if its scores are
//! all equal (ties, such as saturated softmax outputs at 1.0), they are in sorted order
//! as they arrived, and are recorded so. Bin sums are exact and order-free
//! (`stats.rs`), so the bins, and every estimate of them, equal the sorted path's bit
//! for bit; the property tests below check it against a sorted buffer.
//!
//! Cost: four reads of the inputs (the checks, the varying bits, the counts, the
//! recording) and a sort of the straddling digits: 1.6–3.3× less time than sorting
//! them all, from 4096 to 10^6 samples (docs/performance.md). Memory: the caller's
//! scratch (n slots, as the sort needs) and about 10 KiB of stack besides the radix
//! sort's. The sweep still sorts: it needs every bin count up to b*, not one.

use crate::binning::{EqualMassStarts, Ties};
use crate::buffer::{Appended, Slot, MAX_CAPACITY};
use crate::error::PushError;
use crate::radix;
use crate::sample;
use crate::stats::BinStats;

/// Most bins selection serves (its boundaries live on the stack); more bins sort.
pub const MAX_BINS: usize = 64;
/// Fewest samples selection serves: below, sorting them all costs as little.
pub const MIN_SAMPLES: usize = 1 << 12;

/// Digits of the counting pass: 11 bits, the radix sort's first level.
const DIGIT_BITS: u32 = 11;
const DIGITS: usize = 1 << DIGIT_BITS;
/// Marks a straddling digit's table entry (the rest is its next place in the scratch);
/// other entries are a bin index. Places are below 2^31 (n ≤ `MAX_CAPACITY`).
const STRADDLES: u32 = 1 << 31;

/// One digit whose range of sorted positions holds a bin boundary inside it.
#[derive(Clone, Copy, Default)]
struct Straddling {
    /// The sorted position of its first sample.
    rank: usize,
    /// Where its samples start in the scratch.
    place: usize,
    /// How many samples it holds.
    len: usize,
}

/// Whether selection serves `samples` samples in `bins` bins: from [`MIN_SAMPLES`] up to
/// what a buffer holds, in 1 to [`MAX_BINS`] bins. (Callers ask before allocating the
/// scratch or reading the samples; [`equal_mass_bins`] asks again.)
pub fn serves(samples: usize, bins: usize) -> bool {
    (MIN_SAMPLES..=MAX_CAPACITY).contains(&samples) && (1..=MAX_BINS).contains(&bins)
}

/// Writes the statistics of the `bins.len()` equal-mass bins of the samples (`ties` as
/// in [`Binning::EqualMass`](crate::Binning::EqualMass)) into `bins`, and returns
/// `Ok(true)`: the bins of a [`SortedBuffer`](crate::SortedBuffer) fed the same samples,
/// bit for bit (see the module docs).
///
/// Returns `Ok(false)` and writes nothing where selection does not serve: fewer than
/// [`MIN_SAMPLES`] samples, no bins or more than [`MAX_BINS`], more samples than a buffer
/// holds, or a `scratch` shorter than the samples. Sort those instead. The scratch's
/// contents before and after mean nothing.
///
/// # Errors
/// The first invalid sample or a length mismatch, as
/// [`SortedBuffer::push_batch`](crate::SortedBuffer::push_batch) names it; `bins` is
/// unchanged.
pub fn equal_mass_bins(
    scores: &[f64],
    labels: &[u8],
    ties: Ties,
    bins: &mut [BinStats],
    scratch: &mut [Slot],
) -> Result<bool, PushError> {
    sample::check_batch(scores, labels)?;
    let (n, b) = (scores.len(), bins.len());
    if !serves(n, b) || scratch.len() < n {
        return Ok(false);
    }
    // The bins' first sorted positions, then n (as `SortedSamples::bin_starts`); those of
    // a kept-ties binning move past their ties once the straddling digits are sorted.
    let mut starts = [0usize; MAX_BINS + 1];
    for (start, position) in starts.iter_mut().zip(EqualMassStarts::new(n, b)) {
        *start = position;
    }
    let mut selection = Selection {
        starts: starts.get_mut(..=b).unwrap_or_default(),
        ties,
        bins,
    };
    selection.bins.fill(BinStats::EMPTY);
    // n ≤ MAX_CAPACITY < 2^31 (`serves`): the conversion keeps every bit. (A bounded
    // range, not `enumerate`, which has an overflow path.)
    let samples = (0..n as u32)
        .zip(scores.iter().zip(labels))
        .map(|(arrival, (&score, &label))| (score + 0.0, label, arrival));
    selection.level(samples, 0, scratch, true);
    Ok(true)
}

/// The boundaries between `bins` bins: their starts but the first (0) and the last (n).
fn inner(starts: &[usize], bins: usize) -> &[usize] {
    starts.get(1..bins).unwrap_or_default()
}

/// A gathered sample as `Selection::level` reads it: (score, label, arrival).
fn sample_of(slot: &Slot) -> (f64, u8, u32) {
    (slot.score, slot.label(), slot.order >> 1)
}

/// The bins being filled and their boundaries.
struct Selection<'a> {
    /// The bins' first sorted positions, then n.
    starts: &'a mut [usize],
    ties: Ties,
    bins: &'a mut [BinStats],
}

impl Selection<'_> {
    /// Records `samples` ((score with −0 as +0, label, arrival), in arrival order), the
    /// samples at sorted positions `rank..` of the whole (all of them, or one straddling
    /// digit's), into their bins, with `scratch` of at least as many slots. With `again`,
    /// a straddling digit of many samples is selected in turn (one level deeper), not
    /// sorted.
    fn level<I>(&mut self, samples: I, rank: usize, scratch: &mut [Slot], again: bool)
    where
        I: Iterator<Item = (f64, u8, u32)> + Clone,
    {
        // The digit: the 11 bits from the highest one in which the scores differ.
        let first = samples.clone().next().map_or(0, |(s, _, _)| s.to_bits());
        let (varying, len) = samples.clone().fold((0, 0usize), |(v, len), (s, _, _)| {
            // At most n < 2^31 samples: no wrap.
            (v | (s.to_bits() ^ first), len.wrapping_add(1))
        });
        if varying == 0 {
            // All equal (a straddling digit of ties, such as saturated outputs at 1.0): in
            // arrival order, they are in sorted order already.
            self.record_equal(samples, rank, len);
            return;
        }
        // Arithmetic below: counts, places and positions are at most n < 2^31, and the
        // straddling digits at most MAX_BINS, so the `wrapping_` operations never wrap;
        // shift ≤ 64 − width < 64.
        let top = u64::BITS - varying.leading_zeros();
        let width = top.min(DIGIT_BITS);
        let shift = top - width;
        let mask = (1usize << width) - 1;
        let digit = |score: f64| (score.to_bits().wrapping_shr(shift)) as usize & mask;
        let mut table = [0u32; DIGITS];
        for (score, _, _) in samples.clone() {
            if let Some(count) = table.get_mut(digit(score)) {
                *count = count.wrapping_add(1);
            }
        }

        // Each digit's entry becomes its bin, or, if a boundary falls strictly inside its
        // range, its place in the scratch.
        let mut straddling = [Straddling::default(); MAX_BINS];
        let mut straddles = 0;
        let (mut at, mut place) = (rank, 0usize);
        let inner = inner(self.starts, self.bins.len());
        let mut bin = inner.partition_point(|&start| start <= rank);
        for entry in table.iter_mut() {
            let len = *entry as usize;
            let end = at.wrapping_add(len);
            // Boundaries at or before the digit's first position: its bin, if it holds none.
            while inner.get(bin).is_some_and(|&start| start <= at) {
                bin = bin.wrapping_add(1);
            }
            if inner.get(bin).is_some_and(|&start| start < end) {
                if let Some(s) = straddling.get_mut(straddles) {
                    *s = Straddling {
                        rank: at,
                        place,
                        len,
                    };
                    straddles = straddles.wrapping_add(1);
                }
                *entry = STRADDLES | place as u32;
                place = place.wrapping_add(len);
            } else {
                *entry = bin as u32;
            }
            at = end;
        }
        let straddling = straddling.get(..straddles).unwrap_or_default();

        // Samples of whole digits into their bins; the straddling ones, in arrival order,
        // into the scratch. Without a branch on which (it is as unpredictable as the
        // scores): each sample is recorded into a bin and written to a slot, a spare bin
        // for a straddling one, the slot after the gathered ones for the others (which
        // exists when there are any: the scratch holds at least all the samples).
        let mut lanes = [BinStats::EMPTY; MAX_BINS + 1];
        for (score, label, arrival) in samples {
            let Some(entry) = table.get_mut(digit(score)) else {
                continue;
            };
            let straddles = *entry >> 31;
            // All ones for a straddling sample, else none.
            let mask = (straddles as usize).wrapping_neg();
            let bin = (*entry as usize & !mask) | (MAX_BINS & mask);
            let slot = ((*entry & !STRADDLES) as usize & mask) | (place & !mask);
            if let Some(stats) = lanes.get_mut(bin) {
                stats.record(score, label);
            }
            if let Some(slot) = scratch.get_mut(slot) {
                *slot = Slot {
                    score,
                    order: arrival << 1 | u32::from(label),
                    hits_before: 0,
                };
            }
            // Places stay below n < 2^31: the mark bit is never reached.
            *entry = entry.wrapping_add(straddles);
        }
        for (stats, lane) in self.bins.iter_mut().zip(&lanes) {
            // At most n < 2^31 samples in all: the count cannot pass its bound.
            let merged = stats.merge(lane);
            debug_assert!(merged.is_ok());
        }

        // Each straddling digit: selected again if it is large, else its samples sorted
        // as the buffer sorts them (they are in arrival order, so a stable sort by score
        // is the one; the rest of the scratch is the radix sort's second array where it
        // is long enough) and recorded by position.
        let Some((gathered, rest)) = scratch.split_at_mut_checked(place) else {
            return; // never: the places count samples, at most the scratch's length
        };
        for s in straddling {
            let Some(run) = gathered.get_mut(s.place..s.place.wrapping_add(s.len)) else {
                continue;
            };
            // (The deeper level gathers into the rest of the scratch: it needs the room.)
            if again && run.len() >= MIN_SAMPLES && rest.len() >= run.len() {
                #[cfg(test)]
                tests::DEEPER.with(|d| d.set(d.get() + 1));
                // (A named function, not a closure: one instantiation at every depth.)
                self.level(run.iter().map(sample_of), s.rank, rest, false);
            } else {
                radix::sort_and_count_in(run, rest, 0, Appended::UNKNOWN);
                self.record_sorted(run, s.rank);
            }
        }
    }

    /// Records `run`, sorted, the samples at sorted positions `rank..`, into their bins;
    /// first, for kept ties, moves a boundary inside a run of equal scores to the run's
    /// end (as `SortedSamples::after_ties`; runs never cross digits).
    fn record_sorted(&mut self, run: &[Slot], rank: usize) {
        // Positions are at most n < 2^31: the `wrapping_` operations never wrap.
        let end = rank.wrapping_add(run.len());
        if self.ties == Ties::Keep {
            for start in self
                .starts
                .iter_mut()
                .filter(|p| (rank.wrapping_add(1)..end).contains(p))
            {
                // rank < start < end: at is in 1..run.len().
                let at = start.wrapping_sub(rank);
                if let (Some(before), Some(here)) = (run.get(at.wrapping_sub(1)), run.get(at)) {
                    if before.score == here.score {
                        let score = here.score;
                        let tail = run.get(at..).unwrap_or_default();
                        *start =
                            start.wrapping_add(tail.partition_point(|slot| slot.score == score));
                    }
                }
            }
        }
        self.record_in_order(run.iter().map(sample_of), rank, end);
    }

    /// Records `len` samples of one score, in arrival order, at sorted positions `rank..`,
    /// into their bins: as [`Selection::record_sorted`], but they are in order as they
    /// come, and for kept ties every boundary inside them moves to their end.
    fn record_equal<I>(&mut self, samples: I, rank: usize, len: usize)
    where
        I: Iterator<Item = (f64, u8, u32)>,
    {
        // Positions are at most n < 2^31: the `wrapping_` operations never wrap.
        let end = rank.wrapping_add(len);
        if self.ties == Ties::Keep {
            for start in self
                .starts
                .iter_mut()
                .filter(|p| (rank.wrapping_add(1)..end).contains(p))
            {
                *start = end;
            }
        }
        self.record_in_order(samples, rank, end);
    }

    /// Records `samples`, in sorted order, at sorted positions `rank..end`, into the bins
    /// their positions fall in.
    fn record_in_order<I>(&mut self, samples: I, rank: usize, end: usize)
    where
        I: Iterator<Item = (f64, u8, u32)>,
    {
        let inner = inner(self.starts, self.bins.len());
        let mut bin = inner.partition_point(|&start| start <= rank);
        // (A bounded range: `rank..` has an overflow path.)
        for (position, (score, label, _)) in (rank..end).zip(samples) {
            while inner.get(bin).is_some_and(|&start| start <= position) {
                bin = bin.wrapping_add(1);
            }
            if let Some(stats) = self.bins.get_mut(bin) {
                stats.record(score, label);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Binning, SortedBuffer};
    use proptest::prelude::*;

    std::thread_local! {
        /// How often this thread's selections went a level deeper.
        pub(super) static DEEPER: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    }

    /// The oracle: the bins of a sorted buffer of the same samples.
    fn sorted_bins(scores: &[f64], labels: &[u8], ties: Ties, b: usize) -> Vec<BinStats> {
        let mut storage = vec![Slot::EMPTY; scores.len()];
        let mut buffer = SortedBuffer::with_storage(&mut storage[..]).unwrap();
        buffer.push_batch(scores, labels).unwrap();
        let sorted = buffer.sorted();
        sorted.bins(Binning::EqualMass(ties), b).collect()
    }

    fn selected_bins(scores: &[f64], labels: &[u8], ties: Ties, b: usize) -> Vec<BinStats> {
        let mut bins = vec![BinStats::EMPTY; b];
        let mut scratch = vec![Slot::EMPTY; scores.len()];
        assert!(equal_mass_bins(scores, labels, ties, &mut bins, &mut scratch).unwrap());
        bins
    }

    /// Scores with the shapes that matter: smooth, heavy ties at 1.0 (float32 softmax),
    /// few distinct values (ties across boundaries), −0, subnormals, a narrow range (the
    /// digit far down the mantissa).
    fn score() -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => 0.0..=1.0f64,
            2 => Just(1.0),
            1 => Just(0.0),
            1 => Just(-0.0),
            1 => (1u64..(1 << 52)).prop_map(f64::from_bits),
            1 => (0u32..16).prop_map(|k| f64::from(k) / 15.0),
            1 => (0.0..1e-6f64).prop_map(|x| 0.5 + x),
            1 => (0.0..=1.0f32).prop_map(f64::from),
        ]
    }

    fn samples() -> impl Strategy<Value = (Vec<f64>, Vec<u8>)> {
        (MIN_SAMPLES..3 * MIN_SAMPLES).prop_flat_map(|n| {
            (
                proptest::collection::vec(score(), n),
                proptest::collection::vec(0u8..2, n),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn bins_equal_the_sorted_buffers((scores, labels) in samples(), b in 1..=MAX_BINS, keep in any::<bool>()) {
            let ties = if keep { Ties::Keep } else { Ties::Split };
            prop_assert_eq!(selected_bins(&scores, &labels, ties, b), sorted_bins(&scores, &labels, ties, b));
        }
    }

    #[test]
    fn all_equal_and_two_valued_scores() {
        let n = MIN_SAMPLES + 17;
        let labels: Vec<u8> = (0..n).map(|i| u8::from(i % 3 == 1)).collect();
        for scores in [
            vec![0.7; n],
            (0..n)
                .map(|i| if i % 5 == 0 { 0.25 } else { 1.0 })
                .collect::<Vec<_>>(),
            (0..n)
                .map(|i| if i < n / 2 { 1.0 } else { 0.0 })
                .collect::<Vec<_>>(),
        ] {
            for ties in [Ties::Split, Ties::Keep] {
                for b in [1, 2, 3, 15, 64] {
                    assert_eq!(
                        selected_bins(&scores, &labels, ties, b),
                        sorted_bins(&scores, &labels, ties, b),
                        "{ties:?} {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_dense_straddling_digit_is_selected_again() {
        // 40 % of the scores in [0.5, 0.5 + 2^-20): one first-level digit, holding
        // boundaries, selected a level deeper (the rest of the scratch has room); some of
        // them tied, so that a deeper boundary can fall inside a run of equal scores.
        let n = 3 * MIN_SAMPLES;
        let mut unit = uniform(0x2545_f491_4f6c_dd1d);
        let scores: Vec<f64> = (0..n)
            .map(|i| match i % 10 {
                0..=2 => 0.5 + unit() / f64::from(1 << 20),
                3 => 0.5 + f64::from(i as u32 % 7) / f64::from(1 << 21),
                _ => unit(),
            })
            .collect();
        let labels: Vec<u8> = (0..n).map(|_| u8::from(unit() < 0.6)).collect();
        selected_deeper_as_sorted(&scores, &labels, &[2, 3, 15, 40, 64]);
    }

    /// Uniform draws in [0, 1) from a fixed seed (xorshift).
    fn uniform(mut state: u64) -> impl FnMut() -> f64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Checks, for both tie rules and each bin count, that selection went a level deeper
    /// and gave the sorted buffer's bins.
    fn selected_deeper_as_sorted(scores: &[f64], labels: &[u8], bin_counts: &[usize]) {
        for ties in [Ties::Split, Ties::Keep] {
            for &b in bin_counts {
                let before = DEEPER.with(|d| d.get());
                let selected = selected_bins(scores, labels, ties, b);
                assert!(
                    DEEPER.with(|d| d.get()) > before,
                    "{ties:?} {b}: one level only"
                );
                assert_eq!(
                    selected,
                    sorted_bins(scores, labels, ties, b),
                    "{ties:?} {b}"
                );
            }
        }
    }

    #[test]
    fn a_straddling_digit_of_ties_is_recorded_as_it_comes() {
        // 45 % of the scores exactly 1.0 (saturated softmax outputs): their digit holds
        // boundaries and enough samples to go a level deeper, where all are equal and are
        // recorded in arrival order without a sort; kept ties move every boundary inside
        // them to their end. (From three bins on, a boundary falls among them.)
        let n = 4 * MIN_SAMPLES + 5;
        let mut unit = uniform(0x9e37_79b9_7f4a_7c15);
        let scores: Vec<f64> = (0..n)
            .map(|_| if unit() < 0.45 { 1.0 } else { unit() })
            .collect();
        let labels: Vec<u8> = (0..n).map(|_| u8::from(unit() < 0.7)).collect();
        selected_deeper_as_sorted(&scores, &labels, &[3, 4, 15, 64]);
    }

    #[test]
    fn where_selection_does_not_serve_nothing_is_written() {
        assert!(serves(MIN_SAMPLES, 1) && serves(MIN_SAMPLES, MAX_BINS));
        assert!(!serves(MIN_SAMPLES - 1, 15) && !serves(MIN_SAMPLES, 0));
        assert!(!serves(MIN_SAMPLES, MAX_BINS + 1) && !serves(MAX_CAPACITY + 1, 15));
        let n = MIN_SAMPLES;
        let scores = vec![0.5; n];
        let labels = vec![1u8; n];
        let marked = BinStats::from_quanta(1, 1, 1);
        for (s, l, b, room) in [
            (&scores[..n - 1], &labels[..n - 1], 15, n),
            (&scores[..], &labels[..], 0, n),
            (&scores[..], &labels[..], MAX_BINS + 1, n),
            (&scores[..], &labels[..], 15, n - 1),
        ] {
            let mut bins = vec![marked; b];
            let mut scratch = vec![Slot::EMPTY; room];
            assert_eq!(
                equal_mass_bins(s, l, Ties::Split, &mut bins, &mut scratch),
                Ok(false)
            );
            assert!(bins.iter().all(|&x| x == marked));
        }
    }

    #[test]
    fn bad_samples_are_named_and_leave_the_bins() {
        let n = MIN_SAMPLES;
        let mut scores = vec![0.5; n];
        let labels = vec![0u8; n];
        scores[n - 3] = f64::NAN;
        let marked = BinStats::from_quanta(1, 1, 1);
        let mut bins = vec![marked; 15];
        let mut scratch = vec![Slot::EMPTY; n];
        assert_eq!(
            equal_mass_bins(&scores, &labels, Ties::Split, &mut bins, &mut scratch),
            Err(PushError::NonFiniteScore { index: n - 3 })
        );
        assert_eq!(
            equal_mass_bins(
                &scores[..n - 1],
                &labels,
                Ties::Split,
                &mut bins,
                &mut scratch
            ),
            Err(PushError::LengthMismatch {
                scores: n - 1,
                labels: n
            })
        );
        assert!(bins.iter().all(|&x| x == marked));
    }
}
