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

use crate::binning::{Binning, Closure, EqualMassStarts, Ties};
use crate::buffer::{Slot, SortedSamples};
use crate::error::EstimateError;
use crate::estimate::{self, Estimate};
use crate::norm::Norm;
use crate::stats::{quantize, BinStats, QUANTUM_BITS};
use crate::sweep::{self, SweepOptions};

/// Positions per block of the prefix sums: a lookup scans at most this many weights.
pub(crate) const BLOCK: usize = 64;

/// A resample count: `u32`, or `u8` where the counts of a set of resamples all fit one
/// (the classwise report's joint resamples, a quarter of the memory and bandwidth).
pub(crate) trait Weight: Copy + Default + Send + Sync + 'static {
    /// The count.
    fn get(self) -> u32;
    /// `w` as this type, if it fits.
    fn of(w: u32) -> Option<Self>;
}

impl Weight for u32 {
    #[inline(always)]
    fn get(self) -> u32 {
        self
    }
    fn of(w: u32) -> Option<u32> {
        Some(w)
    }
}

impl Weight for u8 {
    #[inline(always)]
    fn get(self) -> u32 {
        u32::from(self)
    }
    fn of(w: u32) -> Option<u8> {
        u8::try_from(w).ok()
    }
}

/// The packed words of sorted samples split for [`Lanes`]: each quanta's low 31 bits and
/// the rest (at most 2^31), and the label as a mask of 32 ones.
#[derive(Clone, Debug, Default)]
pub(crate) struct Halves {
    low: Vec<u32>,
    high: Vec<u32>,
    label: Vec<u32>,
}

impl Halves {
    /// The halves of `packed`, in this allocation.
    pub(crate) fn set(&mut self, packed: &Packed) {
        self.low.clear();
        self.high.clear();
        self.label.clear();
        for &word in &packed.words {
            self.low.push((word & LOW_QUANTA) as u32);
            self.high.push(((word & !LABEL_BIT) >> 31) as u32);
            self.label.push(0u32.wrapping_sub((word >> 63) as u32));
        }
    }
}

/// The hits of a weighted view listed one by one, for data with few of them (a class's
/// one-vs-rest samples): the expanded position of the first copy of each hit of nonzero
/// weight, in order, and the weighted hits before it (one more entry: the total). Then
/// the hits before any position cost a binary search over the hits alone.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hits<'a> {
    starts: &'a [u32],
    before: &'a [u32],
}

impl Hits<'_> {
    /// Weighted hits at the expanded positions before `p`.
    fn before(&self, p: usize) -> u64 {
        let k = self.starts.partition_point(|&s| (s as usize) < p);
        let Some(last) = k.checked_sub(1) else {
            return 0;
        };
        // The copies of hit `last` are at starts[last] .. starts[last] + w, w its weight.
        let (h, next) = (self.before[last], self.before[last + 1]);
        let inside = (p - self.starts[last] as usize).min((next - h) as usize);
        u64::from(h) + inside as u64
    }
}

/// Sorted samples with a weight each: the expanded sample of a resample.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WeightedSamples<'a, W: Weight = u32> {
    slots: &'a [Slot],
    /// Per sorted position: the score's quanta ([`quantize`]) with the label in bit 63.
    packed: &'a [u64],
    /// The weights, per sorted position.
    weights: &'a [W],
    /// Per block of [`BLOCK`] positions, the sums before it: weights, weighted hits and
    /// weighted quanta; one more entry than blocks, the totals.
    block_cum: &'a [u32],
    block_hits: &'a [u32],
    block_quanta: &'a [u128],
    /// The hits one by one, when the caller listed them.
    hits: Option<Hits<'a>>,
    /// The equal-width bin starts, when the caller found them.
    width: Option<&'a WidthStarts>,
}

/// The equal-width bin starts of sorted samples for every bin count up to a bound, found
/// once per data set (they depend on the scores alone, not on a resample's weights).
#[derive(Clone, Debug, Default)]
pub(crate) struct WidthStarts {
    closure: Option<Closure>,
    max_bins: usize,
    /// For b = 1..=max_bins, from offset (b − 1)(b + 2)/2: the sorted index where each
    /// of the b bins starts, then n.
    starts: Vec<u32>,
}

impl WidthStarts {
    /// The starts of `slots` (sorted) by `closure`, for 1..=`max_bins` bins.
    pub(crate) fn set(&mut self, slots: &[Slot], closure: Closure, max_bins: usize) {
        self.closure = Some(closure);
        self.max_bins = max_bins;
        self.starts.clear();
        for b in 1..=max_bins {
            self.starts.push(0);
            let mut from = 0;
            for k in 1..b {
                // Bins never decrease along sorted scores: search after the last start.
                from += slots[from..].partition_point(|s| closure.bin_index(s.score, b) < k);
                self.starts.push(from as u32);
            }
            self.starts.push(slots.len() as u32);
        }
    }

    /// The b + 1 starts for `bins` bins by `closure`, if found.
    fn of(&self, closure: Closure, bins: usize) -> Option<&[u32]> {
        if self.closure != Some(closure) || bins == 0 || bins > self.max_bins {
            return None;
        }
        let offset = (bins - 1) * (bins + 2) / 2;
        self.starts.get(offset..offset + bins + 1)
    }
}

/// The scores and labels of sorted samples packed in one word each, computed once per
/// data set and shared by every resample.
#[derive(Clone, Debug, Default)]
pub(crate) struct Packed {
    words: Vec<u64>,
}

impl Packed {
    pub(crate) fn new(sorted: &SortedSamples<'_>) -> Packed {
        let mut packed = Packed { words: Vec::new() };
        packed.set(sorted);
        packed
    }

    /// The words of `sorted`, in this allocation.
    pub(crate) fn set(&mut self, sorted: &SortedSamples<'_>) {
        self.words.clear();
        self.words.extend(
            sorted
                .slots()
                .iter()
                .map(|s| quantize(s.score) | u64::from(s.label()) << 63),
        );
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
    pub(crate) fn weigh<'a, W: Weight>(
        &'a mut self,
        sorted: &SortedSamples<'a>,
        packed: &'a Packed,
        weights: &'a [W],
    ) -> WeightedSamples<'a, W> {
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
    pub(crate) fn extend<W: Weight>(&mut self, packed: &Packed, start: usize, weights: &[W]) {
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
                let w = w.get();
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
    pub(crate) fn view<'a, W: Weight>(
        &'a mut self,
        sorted: &SortedSamples<'a>,
        packed: &'a Packed,
        weights: &'a [W],
    ) -> WeightedSamples<'a, W> {
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
            hits: None,
            width: None,
        }
    }
}

/// The sums of up to [`GROUP`] resamples over one sorted data set, from counts given per
/// *row* (arrival index): the classwise report's joint resamples, whose counts are shared
/// by every class, each class reading them in its own sorted order. [`Lanes::fill`] puts
/// each resample's (lane's) counts into sorted order and makes its block sums exactly as
/// [`Prefix::weigh`] makes them for those weights, and (when asked) its hits one by one.
/// The lanes of a group share the reads of the class's sorted data.
#[derive(Debug, Default)]
pub(crate) struct Lanes<W: Weight> {
    n: usize,
    lanes: usize,
    /// Per lane, the weights per sorted position (lane-major).
    weights: Vec<W>,
    /// Per lane, [`BLOCK`] sums as [`Prefix`] keeps them (blocks + 1 entries a lane).
    cum: Vec<u32>,
    hits: Vec<u32>,
    quanta: Vec<u128>,
    /// Per lane, [`Hits`]: the starts, and the hits before each (with the total).
    starts: Vec<Vec<u32>>,
    before: Vec<Vec<u32>>,
    listed: bool,
}

/// The most resamples a [`Lanes`] pass sums at once.
pub(crate) const GROUP: usize = 4;

impl<W: Weight> Lanes<W> {
    /// The sums of the resamples whose counts of row i are `counts[l][i]` (1 to [`GROUP`]
    /// lanes l), over the sorted data `halves`, whose row i sits at sorted position
    /// `positions[i]`; with `hits` (the sorted positions of the hits, in order) their hits
    /// one by one as well. Each lane's counts must sum to less than 2^31.
    pub(crate) fn fill(
        &mut self,
        halves: &Halves,
        positions: &[u32],
        counts: &[&[W]],
        hits: Option<&[u32]>,
    ) {
        let n = positions.len();
        let lanes = counts.len();
        assert!((1..=GROUP).contains(&lanes) && halves.low.len() == n);
        assert!(counts.iter().all(|c| c.len() == n));
        let width = n.div_ceil(BLOCK) + 1;
        (self.n, self.lanes) = (n, lanes);
        self.weights.clear();
        self.weights.resize(lanes * n, W::default());
        for sums in [&mut self.cum, &mut self.hits] {
            sums.clear();
            sums.resize(lanes * width, 0);
        }
        self.quanta.clear();
        self.quanta.resize(lanes * width, 0);
        #[cfg(all(target_arch = "x86_64", not(target_feature = "avx2")))]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, the one requirement of `fill_avx2`.
            unsafe { self.fill_avx2(halves, positions, counts) };
        } else {
            self.fill_body(halves, positions, counts);
        }
        #[cfg(not(all(target_arch = "x86_64", not(target_feature = "avx2"))))]
        self.fill_body(halves, positions, counts);
        self.listed = hits.is_some();
        self.starts.resize_with(GROUP, Vec::new);
        self.before.resize_with(GROUP, Vec::new);
        for lane in 0..lanes {
            let (starts, before) = (&mut self.starts[lane], &mut self.before[lane]);
            starts.clear();
            before.clear();
            let Some(hits) = hits else {
                continue;
            };
            let weights = &self.weights[lane * n..(lane + 1) * n];
            let cum = &self.cum[lane * width..(lane + 1) * width];
            let mut running = 0u32;
            for &j in hits {
                let j = j as usize;
                let w = weights[j].get();
                if w > 0 {
                    let block = j / BLOCK;
                    let inside: u32 = weights[block * BLOCK..j].iter().map(|w| w.get()).sum();
                    starts.push(cum[block] + inside);
                    before.push(running);
                    running += w;
                }
            }
            before.push(running);
        }
    }

    /// [`Lanes::fill_body`] compiled for AVX2.
    #[cfg(all(target_arch = "x86_64", not(target_feature = "avx2")))]
    #[target_feature(enable = "avx2")]
    unsafe fn fill_avx2(&mut self, halves: &Halves, positions: &[u32], counts: &[&[W]]) {
        self.fill_body(halves, positions, counts);
    }

    /// The counts put into sorted order, then the block sums over the weights and the
    /// quanta's halves (a loop the compiler vectorizes), a block of every lane at a time.
    #[inline(always)]
    fn fill_body(&mut self, halves: &Halves, positions: &[u32], counts: &[&[W]]) {
        let n = self.n;
        // Scattered in row order (row i goes to positions[i]): each lane's counts read in
        // order, the weights written where they go (random writes do not stall as random
        // reads do), the positions read once for the group.
        match *counts {
            [a] => scatter(&mut self.weights, positions, [a]),
            [a, b] => scatter(&mut self.weights, positions, [a, b]),
            [a, b, c] => scatter(&mut self.weights, positions, [a, b, c]),
            [a, b, c, d] => scatter(&mut self.weights, positions, [a, b, c, d]),
            _ => unreachable!("1 to GROUP lanes"),
        }
        let width = n.div_ceil(BLOCK) + 1;
        let (mut total, mut hits) = ([0u32; GROUP], [0u32; GROUP]);
        let mut quanta = [0u128; GROUP];
        for block in 0..width - 1 {
            let range = block * BLOCK..(block * BLOCK + BLOCK).min(n);
            let (labels, lows, highs) = (
                &halves.label[range.clone()],
                &halves.low[range.clone()],
                &halves.high[range.clone()],
            );
            for lane in 0..self.lanes {
                self.cum[lane * width + block] = total[lane];
                self.hits[lane * width + block] = hits[lane];
                self.quanta[lane * width + block] = quanta[lane];
                // Each lane's counts sum to below 2^31 (the caller's bound): the halves
                // of a block stay below 2^31 · 2^31 in u64, as in `Prefix::extend`.
                let (mut t, mut h, mut low, mut high) = (0u32, 0u32, 0u64, 0u64);
                let weights = &self.weights[lane * n + range.start..lane * n + range.end];
                for (((&w, &label), &ql), &qh) in weights.iter().zip(labels).zip(lows).zip(highs) {
                    let w = w.get();
                    t = t.wrapping_add(w);
                    h = h.wrapping_add(w & label);
                    low = low.wrapping_add(u64::from(w) * u64::from(ql));
                    high = high.wrapping_add(u64::from(w) * u64::from(qh));
                }
                total[lane] = total[lane].wrapping_add(t);
                hits[lane] = hits[lane].wrapping_add(h);
                quanta[lane] =
                    quanta[lane].wrapping_add((u128::from(high) << 31) + u128::from(low));
            }
        }
        for lane in 0..self.lanes {
            self.cum[lane * width + width - 1] = total[lane];
            self.hits[lane * width + width - 1] = hits[lane];
            self.quanta[lane * width + width - 1] = quanta[lane];
        }
    }

    /// The view of lane `lane` over `sorted` (the data `fill` was given).
    pub(crate) fn view<'a>(
        &'a self,
        sorted: &SortedSamples<'a>,
        packed: &'a Packed,
        lane: usize,
        width: Option<&'a WidthStarts>,
    ) -> WeightedSamples<'a, W> {
        let n = self.n;
        let sums = n.div_ceil(BLOCK) + 1;
        let sums = lane * sums..(lane + 1) * sums;
        WeightedSamples {
            slots: sorted.slots(),
            packed: &packed.words,
            weights: &self.weights[lane * n..(lane + 1) * n],
            block_cum: &self.cum[sums.clone()],
            block_hits: &self.hits[sums.clone()],
            block_quanta: &self.quanta[sums],
            hits: self.listed.then(|| Hits {
                starts: &self.starts[lane],
                before: &self.before[lane],
            }),
            width,
        }
    }
}

/// `weights[l * n + positions[i]] = counts[l][i]` for every lane l and row i.
#[inline(always)]
fn scatter<W: Weight, const L: usize>(weights: &mut [W], positions: &[u32], counts: [&[W]; L]) {
    let n = positions.len();
    for (i, &position) in positions.iter().enumerate() {
        for (l, c) in counts.iter().enumerate() {
            weights[l * n + position as usize] = c[i];
        }
    }
}

impl<W: Weight> WeightedSamples<'_, W> {
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
        let (i, c) = self.locate_index(p);
        let (h, q) = self.sums_before(i);
        (i, c, h, q)
    }

    /// The sorted index i holding expanded position `p` < total, with the weights before
    /// it.
    fn locate_index(&self, p: usize) -> (usize, usize) {
        let block = self
            .block_cum
            .partition_point(|&c| c as usize <= p)
            .saturating_sub(1);
        let mut c = self.block_cum[block] as usize;
        let mut i = block * BLOCK;
        // p < total: the block holds p (its sums pass p before the block ends).
        while i < self.weights.len() {
            let w = self.weights[i].get() as usize;
            if c + w > p {
                break;
            }
            c += w;
            i += 1;
        }
        (i, c)
    }

    /// The weighted hits and weighted quanta before sorted index `i` (0..=n): its
    /// block's sums and a pass over the block before i (in 31-bit halves, as the block
    /// sums are made).
    fn sums_before(&self, i: usize) -> (u64, u128) {
        let block = i / BLOCK;
        let start = block * BLOCK;
        let (mut h, mut low, mut high) = (0u64, 0u64, 0u64);
        for (&w, &word) in self.weights[start..i].iter().zip(&self.packed[start..i]) {
            let w = u64::from(w.get());
            h += w * (word >> 63);
            low += w * (word & LOW_QUANTA);
            high += w * ((word & !LABEL_BIT) >> 31);
        }
        (
            u64::from(self.block_hits[block]) + h,
            self.block_quanta[block] + (u128::from(high) << 31) + u128::from(low),
        )
    }

    /// The weighted hits before sorted index `i` (0..=n).
    fn hits_at(&self, i: usize) -> u64 {
        let block = i / BLOCK;
        let start = block * BLOCK;
        u64::from(self.block_hits[block])
            + self.weights[start..i]
                .iter()
                .zip(&self.packed[start..i])
                .map(|(&w, &word)| u64::from(w.get()) * (word >> 63))
                .sum::<u64>()
    }

    /// Σ_{j<i} w_j, for a sorted index i in 0..=n.
    fn cum_at(&self, i: usize) -> usize {
        let block = i / BLOCK;
        let start = block * BLOCK;
        self.block_cum.get(block).map_or(self.total(), |&c| {
            c as usize
                + self.weights[start..i.min(self.weights.len())]
                    .iter()
                    .map(|&w| w.get() as usize)
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
        if let Some(hits) = &self.hits {
            return hits.before(p.min(self.total()));
        }
        if p >= self.total() {
            return self.totals().0;
        }
        let (i, c) = self.locate_index(p);
        let word = self.packed[i];
        self.hits_at(i) + (p - c) as u64 * (word >> 63)
    }

    fn index_of(&self, p: usize) -> usize {
        self.locate_index(p).0
    }

    /// The expanded position after the group of scores equal to the one at `p`, if the
    /// group started before `p`; else `p` (SortedSamples::after_ties, expanded).
    fn after_ties(&self, p: usize) -> usize {
        if p == 0 || p >= self.total() {
            return p;
        }
        let (i, c) = self.locate_index(p);
        let score = self.slots[i].score;
        // The first copy of a score unlike the one before it in the slots: no group
        // started before p (the common case of distinct scores, without a search).
        if p == c && (i == 0 || self.slots[i - 1].score != score) {
            return p;
        }
        // The run of equal scores in the sorted slots is [run_start, run_end); an expanded
        // copy of it lies before p exactly when p is past the run's first position.
        let run_start = self.slots[..i].partition_point(|s| s.score < score);
        if p <= self.cum_at(run_start) {
            return p;
        }
        let run_end = i + self.slots[i..].partition_point(|s| s.score <= score);
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
                    let j = match self.width.and_then(|w| w.of(closure, bins)) {
                        Some(starts) => starts[k] as usize,
                        None => self
                            .slots
                            .partition_point(|s| closure.bin_index(s.score, bins) < k),
                    };
                    self.cum_at(j)
                }
            },
        })
    }

    /// The statistics of each bin, bin 0 first, from the prefix sums: the same integers
    /// as recording the bin's expanded samples one by one.
    pub(crate) fn bins(
        &self,
        binning: Binning,
        bins: usize,
    ) -> impl Iterator<Item = BinStats> + '_ {
        let mut starts = self.bin_starts(binning, bins);
        let mut start = starts.next().unwrap_or(0);
        let mut at_start = self.before(start);
        starts.map(move |end| {
            // Each bin's end is the next one's start: one lookup a boundary.
            let at_end = if end == start {
                at_start
            } else {
                self.before(end)
            };
            let stats = BinStats::from_parts(
                (end - start) as u64,
                at_end.0 - at_start.0,
                at_end.1 - at_start.1,
            );
            (start, at_start) = (end, at_end);
            // Hits ≤ count and each score ≤ 1 by construction: always Some.
            debug_assert!(stats.is_some());
            stats.unwrap_or(BinStats::EMPTY)
        })
    }

    pub(crate) fn checked_bins(&self, bins: usize) -> Result<(), EstimateError> {
        estimate::check_bins(bins)?;
        if self.total() == 0 {
            return Err(EstimateError::NoSamples);
        }
        Ok(())
    }

    /// ECE_bin with `bins` bins.
    #[cfg(test)]
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
    #[cfg(test)]
    pub(crate) fn mce(&self, binning: Binning, bins: usize) -> Result<Estimate, EstimateError> {
        self.checked_bins(bins)?;
        estimate::mce(self.bins(binning, bins))
    }

    /// ECE_debias with `bins` bins.
    #[cfg(test)]
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
            let w = w.get() as usize;
            scores.extend(core::iter::repeat(slot.score).take(w));
            labels.extend(core::iter::repeat(slot.label()).take(w));
        }
    }
}

impl<W: Weight> sweep::SortedPositions for WeightedSamples<'_, W> {
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
        let end = match self.width.and_then(|w| w.of(closure, bins)) {
            // The next bin's start (n after the last).
            Some(starts) => starts[bin + 1] as usize,
            None => self
                .slots
                .partition_point(|s| closure.bin_index(s.score, bins) <= bin),
        };
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

    /// Every estimator on the weighted view against the expanded data, bit for bit: the
    /// view of [`Prefix::weigh`], and the classwise report's [`Lanes`] views (counts per
    /// row, u8 and u32, with the hits listed or not, the equal-width starts found or not).
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
        compare(&view, &naive, bins);

        let rows: Vec<u32> = sorted.slots().iter().map(|s| s.order >> 1).collect();
        let mut positions = vec![0u32; rows.len()];
        for (j, &r) in rows.iter().enumerate() {
            positions[r as usize] = j as u32;
        }
        let positives: Vec<u32> = (0u32..)
            .zip(sorted.slots())
            .filter(|(_, s)| s.label() == 1)
            .map(|(j, _)| j)
            .collect();
        let mut halves = Halves::default();
        halves.set(&packed);
        let mut lanes = Lanes::<u32>::default();
        let mut small = Lanes::<u8>::default();
        let bytes: Option<Vec<u8>> = counts.iter().map(|&c| u8::of(c)).collect();
        for closure in [Closure::Left, Closure::Right] {
            let mut width = WidthStarts::default();
            width.set(sorted.slots(), closure, bins.max(9));
            for listed in [None, Some(&positives[..])] {
                // One lane, and the same counts as the last of a full group beside others.
                let zeros = vec![0u32; counts.len()];
                for group in [vec![counts], vec![&zeros[..], counts, &zeros[..], counts]] {
                    let last = group.len() - 1;
                    lanes.fill(&halves, &positions, &group, listed);
                    assert_eq!(lanes.weights[last * counts.len()..], weights[..]);
                    for starts in [None, Some(&width)] {
                        compare(&lanes.view(&sorted, &packed, last, starts), &naive, bins);
                    }
                }
                if let Some(bytes) = &bytes {
                    small.fill(&halves, &positions, &[&bytes[..], &bytes[..]], listed);
                    compare(&small.view(&sorted, &packed, 1, Some(&width)), &naive, bins);
                }
            }
        }
    }

    fn compare<W: Weight>(view: &WeightedSamples<'_, W>, naive: &SortedSamples<'_>, bins: usize) {
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

        /// One-vs-rest samples of a class: distinct scores, few hits, most of them high
        /// (long runs of misses before the first hit, which the sweep skips).
        #[test]
        fn weighted_estimates_equal_the_expanded_resample_with_few_hits(
            data in proptest::collection::vec((0.0..1.0f64, 0.0..1.0f64, 0u32..4), 1..400),
            bins in 1usize..20,
        ) {
            let scores: Vec<f64> = data.iter().map(|d| d.0 * d.0 * d.0).collect();
            let labels: Vec<u8> = data.iter().map(|d| u8::from(d.1 < 0.3 * d.0 * d.0)).collect();
            let counts: Vec<u32> = data.iter().map(|d| d.2).collect();
            check(&scores, &labels, &counts, bins);
        }
    }
}
