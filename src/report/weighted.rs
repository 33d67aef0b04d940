//! The binned estimators over sorted samples with integer weights: the bootstrap's
//! resamples without a sort per resample.
//!
//! A resample of n samples drawn with replacement is a count w_i ≥ 0 per sample, Σ w_i = n.
//! Its *expanded* form lists sample i w_i times. The data are sorted once (score, ties in
//! arrival order); then the expanded resample in that order is exactly the resample sorted
//! with ties in arrival order, where the resample's arrival order is the original one with
//! each sample's copies together (any order of draws is an equally valid resample: the
//! bootstrap distribution is that of the multiset). Every estimate here equals, bit for
//! bit, the same estimator of [`SortedSamples`] on that expanded data: the bins hold the
//! same integer counts, hits and fixed-point score sums, and reach the same
//! [`crate::estimate`] functions (tested against the explicit expansion below).
//!
//! Positions below are positions of the expanded sample (0..=total). With the prefix sums
//! of the weights, of the weighted hits and of the weighted fixed-point scores (one O(n)
//! pass per resample), the statistics of any range of positions cost one binary search,
//! so a binning costs O(B log n) and the sweep at most O(Σ_{b ≤ b*} min(b, d) log n) for d
//! distinct scores (see [`crate::sweep`]): no estimator reads the n samples again.

use core::ops::Range;

use crate::binning::{Binning, Closure, EqualMassStarts, Ties};
use crate::buffer::{Slot, SortedSamples};
use crate::error::EstimateError;
use crate::estimate::{self, Estimate};
use crate::norm::Norm;
use crate::stats::{quantize, BinStats, QUANTUM_BITS};
use crate::sweep::{self, SweepOptions};

/// Positions per block of the prefix sums: a lookup scans at most this many weights.
const BLOCK: usize = 64;

/// Sorted samples with a weight each: the expanded sample of a resample.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WeightedSamples<'a> {
    slots: &'a [Slot],
    /// Per sorted position: the score's quanta ([`quantize`]) with the label in bit 63.
    packed: &'a [u64],
    /// The weights, per sorted position.
    weights: &'a [u32],
    /// Per block of [`BLOCK`] positions, the sums before it: weights, weighted hits and
    /// weighted quanta; one more entry than blocks, the totals.
    block_cum: &'a [u32],
    block_hits: &'a [u32],
    block_quanta: &'a [u128],
}

/// The scores and labels of sorted samples packed in one word each, computed once per
/// data set and shared by every resample.
#[derive(Clone, Debug)]
pub(crate) struct Packed {
    words: Vec<u64>,
}

impl Packed {
    pub(crate) fn new(sorted: &SortedSamples<'_>) -> Packed {
        Packed {
            words: sorted
                .slots()
                .iter()
                .map(|s| quantize(s.score) | u64::from(s.label()) << 63)
                .collect(),
        }
    }
}

const LABEL_BIT: u64 = 1 << 63;

/// The block sums a [`WeightedSamples`] reads, reused across resamples.
#[derive(Clone, Debug, Default)]
pub(crate) struct Prefix {
    cum: Vec<u32>,
    hits: Vec<u32>,
    quanta: Vec<u128>,
    /// The running sums after the blocks so far (weights, weighted hits, weighted quanta).
    running: (u32, u32, u128),
}

/// The low 31 bits of a score's quanta (a quanta value is at most 2^62: the rest,
/// `word >> 31` without the label, is at most 2^31).
const LOW_QUANTA: u64 = (1 << 31) - 1;

impl Prefix {
    /// The view of `sorted` weighted by `weights` (one per sorted position; `packed` from
    /// the same samples). The total weight must stay below 2^32 (a resample of a buffer's
    /// n < 2^31 samples does). One pass over the weights, no per-position output.
    pub(crate) fn weigh<'a>(
        &'a mut self,
        sorted: &SortedSamples<'a>,
        packed: &'a Packed,
        weights: &'a [u32],
    ) -> WeightedSamples<'a> {
        self.begin();
        self.extend(packed, 0, weights);
        self.view(sorted, packed, weights)
    }

    /// Starts the sums of a new set of weights, to be given in order by
    /// [`Prefix::extend`] and ended by [`Prefix::view`].
    pub(crate) fn begin(&mut self) {
        self.cum.clear();
        self.hits.clear();
        self.quanta.clear();
        self.running = (0, 0, 0);
    }

    /// Adds the sums of `weights`, the weights of sorted positions `start..`, where
    /// `start` is a multiple of [`BLOCK`] and the end of the positions given so far (the
    /// bootstrap hands each leaf of its multinomial draw over while it is in the cache).
    pub(crate) fn extend(&mut self, packed: &Packed, start: usize, weights: &[u32]) {
        debug_assert_eq!(start % BLOCK, 0);
        debug_assert_eq!(start, self.cum.len() * BLOCK);
        let words = packed.words.get(start..).unwrap_or_default();
        let (mut total, mut hits, mut quanta) = self.running;
        for (ws, words) in weights.chunks(BLOCK).zip(words.chunks(BLOCK)) {
            self.cum.push(total);
            self.hits.push(hits);
            self.quanta.push(quanta);
            // Bounded by the caller's total (see `weigh`): nothing wraps. The quanta are
            // summed in two 31-bit halves in u64, which bounds each half's block sum by
            // total · 2^31 < 2^63 and lets the loop run on 32 × 32 → 64-bit multiplies;
            // together they are the exact sum, below total · 2^62 < 2^94.
            let (mut t, mut h, mut low, mut high) = (0u32, 0u32, 0u64, 0u64);
            for (&w, &word) in ws.iter().zip(words) {
                t = t.wrapping_add(w);
                h = h.wrapping_add(w * (word >> 63) as u32);
                low = low.wrapping_add(u64::from(w) * (word & LOW_QUANTA));
                high = high.wrapping_add(u64::from(w) * ((word & !LABEL_BIT) >> 31));
            }
            total = total.wrapping_add(t);
            hits = hits.wrapping_add(h);
            quanta = quanta.wrapping_add((u128::from(high) << 31) + u128::from(low));
        }
        self.running = (total, hits, quanta);
    }

    /// The view of `sorted` weighted by `weights`, whose sums were all given.
    pub(crate) fn view<'a>(
        &'a mut self,
        sorted: &SortedSamples<'a>,
        packed: &'a Packed,
        weights: &'a [u32],
    ) -> WeightedSamples<'a> {
        let slots = sorted.slots();
        debug_assert_eq!(slots.len(), weights.len());
        debug_assert_eq!(slots.len(), packed.words.len());
        debug_assert_eq!(self.cum.len(), weights.len().div_ceil(BLOCK));
        let (total, hits, quanta) = self.running;
        self.cum.push(total);
        self.hits.push(hits);
        self.quanta.push(quanta);
        WeightedSamples {
            slots,
            packed: &packed.words,
            weights,
            block_cum: &self.cum,
            block_hits: &self.hits,
            block_quanta: &self.quanta,
        }
    }
}

impl WeightedSamples<'_> {
    /// The size of the expanded sample, Σ w_i.
    pub(crate) fn total(&self) -> usize {
        self.block_cum.last().map_or(0, |&c| c as usize)
    }

    fn totals(&self) -> (u64, u128) {
        (
            self.block_hits.last().map_or(0, |&h| u64::from(h)),
            self.block_quanta.last().copied().unwrap_or(0),
        )
    }

    /// The sorted index i holding expanded position `p` < total, with the sums of
    /// weights, weighted hits and weighted quanta before i.
    fn locate(&self, p: usize) -> (usize, usize, u64, u128) {
        let block = self
            .block_cum
            .partition_point(|&c| c as usize <= p)
            .saturating_sub(1);
        let mut c = self.block_cum[block] as usize;
        let mut h = u64::from(self.block_hits[block]);
        let mut q = self.block_quanta[block];
        let mut i = block * BLOCK;
        // p < total: the block holds p (its sums pass p before the block ends).
        while i < self.weights.len() {
            let w = self.weights[i] as usize;
            if c + w > p {
                break;
            }
            let word = self.packed[i];
            c += w;
            h += w as u64 * (word >> 63);
            q += w as u128 * u128::from(word & !LABEL_BIT);
            i += 1;
        }
        (i, c, h, q)
    }

    /// Σ_{j<i} w_j, for a sorted index i in 0..=n.
    fn cum_at(&self, i: usize) -> usize {
        let block = i / BLOCK;
        let start = block * BLOCK;
        self.block_cum.get(block).map_or(self.total(), |&c| {
            c as usize
                + self.weights[start..i.min(self.weights.len())]
                    .iter()
                    .map(|&w| w as usize)
                    .sum::<usize>()
        })
    }

    /// (hits, fixed-point score sum) at expanded positions before `p` (0..=total).
    fn before(&self, p: usize) -> (u64, u128) {
        if p >= self.total() {
            let (h, q) = self.totals();
            return (h, q << QUANTUM_BITS);
        }
        let (i, c, h, q) = self.locate(p);
        let word = self.packed[i];
        let inside = (p - c) as u64;
        (
            h + inside * (word >> 63),
            (q + u128::from(inside) * u128::from(word & !LABEL_BIT)) << QUANTUM_BITS,
        )
    }

    fn hits_before(&self, p: usize) -> u64 {
        self.before(p).0
    }

    fn index_of(&self, p: usize) -> usize {
        self.locate(p).0
    }

    /// The expanded position after the group of scores equal to the one at `p`, if the
    /// group started before `p`; else `p` (SortedSamples::after_ties, expanded).
    fn after_ties(&self, p: usize) -> usize {
        if p == 0 || p >= self.total() {
            return p;
        }
        let score = self.slots[self.index_of(p)].score;
        // The run of equal scores in the sorted slots is [run_start, run_end); an expanded
        // copy of it lies before p exactly when p is past the run's first position.
        let run_start = self.slots.partition_point(|s| s.score < score);
        if p <= self.cum_at(run_start) {
            return p;
        }
        let run_end = self.slots.partition_point(|s| s.score <= score);
        self.cum_at(run_end)
    }

    /// The first expanded position of each of the `bins` bins, then total.
    fn bin_starts(&self, binning: Binning, bins: usize) -> impl Iterator<Item = usize> + '_ {
        let n = self.total();
        let mut equal_mass = EqualMassStarts::new(n, bins);
        (0..=bins).map(move |k| match binning {
            Binning::EqualMass(Ties::Split) => equal_mass.next().unwrap_or(n),
            Binning::EqualMass(Ties::Keep) => self.after_ties(equal_mass.next().unwrap_or(n)),
            Binning::EqualWidth(closure) => match k {
                0 => 0,
                k if k == bins => n,
                k => {
                    let j = self
                        .slots
                        .partition_point(|s| closure.bin_index(s.score, bins) < k);
                    self.cum_at(j)
                }
            },
        })
    }

    fn bin_ranges(&self, binning: Binning, bins: usize) -> impl Iterator<Item = Range<usize>> + '_ {
        let mut starts = self.bin_starts(binning, bins);
        let mut start = starts.next().unwrap_or(0);
        starts.map(move |end| {
            let range = start..end;
            start = end;
            range
        })
    }

    /// The statistics of each bin, bin 0 first, from the prefix sums: the same integers
    /// as recording the bin's expanded samples one by one.
    pub(crate) fn bins(
        &self,
        binning: Binning,
        bins: usize,
    ) -> impl Iterator<Item = BinStats> + '_ {
        self.bin_ranges(binning, bins).map(move |range| {
            let ((h0, q0), (h1, q1)) = (self.before(range.start), self.before(range.end));
            let stats = BinStats::from_parts(range.len() as u64, h1 - h0, q1 - q0);
            // Hits ≤ count and each score ≤ 1 by construction: always Some.
            debug_assert!(stats.is_some());
            stats.unwrap_or(BinStats::EMPTY)
        })
    }

    fn checked_bins(&self, bins: usize) -> Result<(), EstimateError> {
        estimate::check_bins(bins)?;
        if self.total() == 0 {
            return Err(EstimateError::NoSamples);
        }
        Ok(())
    }

    /// ECE_bin with `bins` bins.
    pub(crate) fn ece_bin(
        &self,
        binning: Binning,
        bins: usize,
        norm: Norm,
    ) -> Result<Estimate, EstimateError> {
        self.checked_bins(bins)?;
        estimate::ece_bin(self.bins(binning, bins), norm)
    }

    /// The maximum calibration error with `bins` bins.
    pub(crate) fn mce(&self, binning: Binning, bins: usize) -> Result<Estimate, EstimateError> {
        self.checked_bins(bins)?;
        estimate::mce(self.bins(binning, bins))
    }

    /// ECE_debias with `bins` bins.
    pub(crate) fn ece_debias(
        &self,
        binning: Binning,
        bins: usize,
        norm: Norm,
    ) -> Result<Estimate, EstimateError> {
        self.checked_bins(bins)?;
        estimate::ece_debias(self.bins(binning, bins), norm)
    }

    /// b* of the monotone sweep, as [`SortedSamples::sweep_bins`] finds it.
    pub(crate) fn sweep_bins(
        &self,
        binning: Binning,
        options: SweepOptions,
    ) -> Result<usize, EstimateError> {
        sweep::sweep_bins(self, binning, options)
    }

    /// ECE_sweep; the estimate's `bins` is b*.
    pub(crate) fn ece_sweep(
        &self,
        binning: Binning,
        norm: Norm,
        options: SweepOptions,
    ) -> Result<Estimate, EstimateError> {
        let bins = self.sweep_bins(binning, options)?;
        estimate::ece_bin(self.bins(binning, bins), norm)
    }

    /// The expanded sample in sorted order, for the estimators that read raw samples
    /// (smooth ECE, KDE): O(n) and allocating.
    pub(crate) fn expand(&self, scores: &mut Vec<f64>, labels: &mut Vec<u8>) {
        scores.clear();
        labels.clear();
        for (slot, &w) in self.slots.iter().zip(self.weights) {
            let w = w as usize;
            scores.extend(core::iter::repeat(slot.score).take(w));
            labels.extend(core::iter::repeat(slot.label()).take(w));
        }
    }
}

impl sweep::SortedPositions for WeightedSamples<'_> {
    fn positions(&self) -> usize {
        self.total()
    }

    fn hits_before(&self, p: usize) -> u64 {
        WeightedSamples::hits_before(self, p)
    }

    fn after_ties(&self, p: usize) -> usize {
        WeightedSamples::after_ties(self, p)
    }

    fn width_bin_end(&self, p: usize, closure: Closure, bins: usize) -> usize {
        if p >= self.total() {
            return p;
        }
        let bin = closure.bin_index(self.slots[self.index_of(p)].score, bins);
        let end = self
            .slots
            .partition_point(|s| closure.bin_index(s.score, bins) <= bin);
        self.cum_at(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binning::Closure;
    use crate::buffer::SortedBuffer;
    use crate::sweep::SweepLimit;
    use proptest::prelude::*;

    /// The naive path: the resample written out (in the original arrival order, each
    /// sample's copies together), pushed into a buffer and sorted.
    fn expanded(scores: &[f64], labels: &[u8], counts: &[u32]) -> (Vec<f64>, Vec<u8>) {
        let mut s = Vec::new();
        let mut l = Vec::new();
        for ((&score, &label), &c) in scores.iter().zip(labels).zip(counts) {
            for _ in 0..c {
                s.push(score);
                l.push(label);
            }
        }
        (s, l)
    }

    fn binnings() -> [Binning; 4] {
        [
            Binning::EqualWidth(Closure::Left),
            Binning::EqualWidth(Closure::Right),
            Binning::EqualMass(Ties::Split),
            Binning::EqualMass(Ties::Keep),
        ]
    }

    /// Every estimator on the weighted view against the expanded data, bit for bit.
    fn check(scores: &[f64], labels: &[u8], counts: &[u32], bins: usize) {
        let mut storage = vec![Slot::EMPTY; scores.len()];
        let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
        buffer.push_batch(scores, labels).unwrap();
        let sorted = buffer.sorted();
        // Counts are given per arrival index; the view takes them per sorted position.
        let weights: Vec<u32> = sorted
            .slots()
            .iter()
            .map(|s| counts[(s.order >> 1) as usize])
            .collect();
        let packed = Packed::new(&sorted);
        let mut prefix = Prefix::default();
        let view = prefix.weigh(&sorted, &packed, &weights);

        let (es, el) = expanded(scores, labels, counts);
        if es.is_empty() {
            assert_eq!(
                view.ece_bin(Binning::EQUAL_MASS, bins, Norm::L2),
                Err(EstimateError::NoSamples)
            );
            return;
        }
        let mut storage2 = vec![Slot::EMPTY; es.len()];
        let mut naive = SortedBuffer::with_storage(&mut storage2).unwrap();
        naive.push_batch(&es, &el).unwrap();
        let naive = naive.sorted();
        for binning in binnings() {
            for norm in [Norm::L1, Norm::L2, Norm::new(3.0).unwrap()] {
                assert_eq!(
                    view.ece_bin(binning, bins, norm),
                    naive.ece_bin(binning, bins, norm)
                );
                assert_eq!(
                    view.ece_debias(binning, bins, norm),
                    naive.ece_debias(binning, bins, norm)
                );
                for options in [
                    SweepOptions::default(),
                    SweepOptions {
                        max_bins: Some(7),
                        limit: SweepLimit::PaperCode,
                    },
                ] {
                    assert_eq!(
                        view.ece_sweep(binning, norm, options),
                        naive.ece_sweep(binning, norm, options),
                        "{binning:?}"
                    );
                }
            }
            assert_eq!(view.mce(binning, bins), naive.mce(binning, bins));
            let a: Vec<BinStats> = view.bins(binning, bins).collect();
            let b: Vec<BinStats> = naive.bins(binning, bins).collect();
            assert_eq!(a, b);
        }
        let (mut xs, mut xl) = (Vec::new(), Vec::new());
        view.expand(&mut xs, &mut xl);
        let ns: Vec<(f64, u8)> = naive.iter().collect();
        assert_eq!(xs.into_iter().zip(xl).collect::<Vec<_>>(), ns);
    }

    #[test]
    fn ties_straddling_edges_and_zero_weights() {
        // Equal scores with mixed labels, a sample of weight 0 inside a tie group, and
        // saturated 1.0 scores: the cases where the order within ties matters.
        let scores = [0.5, 1.0, 0.5, 0.2, 1.0, 0.5, 0.9, 1.0, 0.2, 0.5];
        let labels = [1, 1, 0, 0, 0, 1, 1, 1, 1, 0];
        let counts = [2, 0, 3, 1, 2, 0, 1, 1, 0, 0];
        for bins in [1, 2, 3, 4, 7, 15] {
            check(&scores, &labels, &counts, bins);
        }
        check(&scores, &labels, &[1; 10], 3);
        check(&scores, &labels, &[0; 10], 3);
    }

    /// The block sums by a plain u128 loop.
    fn naive_blocks(packed: &Packed, weights: &[u32]) -> (Vec<u32>, Vec<u32>, Vec<u128>) {
        let (mut cum, mut hits, mut quanta) = (vec![], vec![], vec![]);
        let (mut t, mut h, mut q) = (0u32, 0u32, 0u128);
        for (i, (&w, &word)) in weights.iter().zip(&packed.words).enumerate() {
            if i % BLOCK == 0 {
                cum.push(t);
                hits.push(h);
                quanta.push(q);
            }
            t += w;
            h += w * (word >> 63) as u32;
            q += u128::from(w) * u128::from(word & !LABEL_BIT);
        }
        cum.push(t);
        hits.push(h);
        quanta.push(q);
        (cum, hits, quanta)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]

        /// The sums given leaf by leaf (as the bootstrap does) equal the sums of one
        /// pass and a plain u128 loop, with weights up to a total near 2^32 (where the
        /// 31-bit halves are closest to overflowing) and scores at 1.0.
        #[test]
        fn block_sums_leaf_by_leaf(
            data in proptest::collection::vec((prop_oneof![Just(1.0f64), 0.0..=1.0f64], 0u8..2), 1..700),
            big in proptest::bool::ANY,
            leaf_blocks in 1usize..4,
            seed in 0u32..1000,
        ) {
            let scores: Vec<f64> = data.iter().map(|d| d.0).collect();
            let labels: Vec<u8> = data.iter().map(|d| d.1).collect();
            let n = scores.len();
            // Total weight below 2^32: at most (2^32 − 1) / n each.
            let cap = if big { (u32::MAX as usize / n) as u32 } else { 5 };
            // (cap + 1 in u64: cap is u32::MAX when n = 1.)
            let weights: Vec<u32> = (0..n as u32)
                .map(|i| (u64::from(i.wrapping_mul(2_654_435_761) ^ seed) % (u64::from(cap) + 1)) as u32)
                .map(|w| if big { cap - w % 3 } else { w })
                .collect();
            let mut storage = vec![Slot::EMPTY; n];
            let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
            buffer.push_batch(&scores, &labels).unwrap();
            let sorted = buffer.sorted();
            let packed = Packed::new(&sorted);
            let expected = naive_blocks(&packed, &weights);
            let mut whole = Prefix::default();
            whole.weigh(&sorted, &packed, &weights);
            prop_assert_eq!((&whole.cum, &whole.hits, &whole.quanta), (&expected.0, &expected.1, &expected.2));
            let mut leaves = Prefix::default();
            leaves.begin();
            for (k, chunk) in weights.chunks(leaf_blocks * BLOCK).enumerate() {
                leaves.extend(&packed, k * leaf_blocks * BLOCK, chunk);
            }
            leaves.view(&sorted, &packed, &weights);
            prop_assert_eq!((&leaves.cum, &leaves.hits, &leaves.quanta), (&expected.0, &expected.1, &expected.2));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn weighted_estimates_equal_the_expanded_resample(
            data in proptest::collection::vec((0u8..12, 0u8..2, 0u32..4), 1..300),
            bins in 1usize..12,
        ) {
            // Scores on a coarse grid (many ties, 0 and 1 included).
            let scores: Vec<f64> = data.iter().map(|d| f64::from(d.0) / 11.0).collect();
            let labels: Vec<u8> = data.iter().map(|d| d.1).collect();
            let counts: Vec<u32> = data.iter().map(|d| d.2).collect();
            check(&scores, &labels, &counts, bins);
        }
    }
}
