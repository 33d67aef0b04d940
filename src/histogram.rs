//! The streaming equal-width histogram (SPEC §3.1): B bins fixed at construction, O(1)
//! per sample, exact merge. Storage is inline (`Histogram<[BinStats; B]>`, usable in a
//! `static`), a slice the caller owns (`Histogram<&mut [BinStats]>`), or the unsized
//! view `Histogram<[BinStats]>` that either inline form coerces to (as heapless does),
//! which is also how the C ABI lays a histogram over memory the C program provides.

use crate::binning::{equal_width_edges, left_closed_index, right_closed_index, Closure};
use crate::error::{ConfigError, EstimateError, MergeError, PushError};
use crate::estimate::{self, Estimate};
use crate::limits::{add_counts, batch_count, CountOverflow};
use crate::norm::Norm;
use crate::sample;
use crate::stats::{self, BinStats};

/// An equal-width histogram of (score, label) samples over storage `S`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Histogram<S: ?Sized = [BinStats]> {
    closure: Closure,
    /// The samples recorded: the sum of the bins' counts, kept so that a push checks the
    /// bound ([`crate::MAX_COUNT`]) in O(1). Every bin's count is at most this.
    samples: u64,
    /// Last, so that `Histogram<[BinStats; B]>` coerces to `Histogram<[BinStats]>`.
    bins: S,
}

/// Batches push through independent copies of the bins ("lanes") when the histogram has
/// at most this many bins (the copies live on the stack) ...
const LANED_BINS: usize = 64;
/// ... and the batch is long enough to repay clearing and merging the copies.
const LANED_BATCH: usize = 1024;
/// Histograms of at most this many bins push through `NARROW_LANES` lanes, so that a
/// sample's cell is updated again eight samples later at the soonest. With four, the cell
/// of the top bin of skewed confidences (four samples in ten in the benchmark's) was
/// still read back before its last store had landed, often enough to cost a quarter of
/// the push (3.3 against 2.5 ms for 2^20 samples on this project's VM). Wider histograms
/// take `WIDE_LANES`, so that the lanes stay at 8 KiB of stack either way.
const NARROW_BINS: usize = 32;
const NARROW_LANES: usize = 8;
const WIDE_LANES: usize = 4;

/// Each lane keeps two cells per bin, one per label, so that a sample's label picks its
/// cell instead of being added: hits are the count of the label-1 cell. A cell packs the
/// count and the sum of quantized scores into one `u128` (sum in bits [0, 96), count in
/// [96, 128)), so a sample costs one 128-bit addition. A lane is emptied into its bins
/// every `PACKED_SAMPLES` samples, few enough that neither field overflows: at most
/// 2^20 · 2^62 < 2^96 quanta and 2^20 < 2^32 samples.
const PACKED_SAMPLES: usize = 1 << 20;
const COUNT_SHIFT: u32 = 96;

/// A histogram with `B` bins stored inline.
pub type InlineHistogram<const B: usize> = Histogram<[BinStats; B]>;

impl<const B: usize> Histogram<[BinStats; B]> {
    const AT_LEAST_ONE_BIN: () = assert!(B > 0, "a histogram needs at least one bin");
    const AT_MOST_MAX_BINS: () = assert!(B <= crate::MAX_BINS, "more bins than tce::MAX_BINS");

    /// An empty histogram of `B` bins stored inline; `const`, so it can initialise a
    /// `static`. `B = 0` and `B >` [`crate::MAX_BINS`] fail to compile.
    pub const fn new(closure: Closure) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::AT_LEAST_ONE_BIN;
        #[allow(clippy::let_unit_value)]
        let () = Self::AT_MOST_MAX_BINS;
        Histogram {
            closure,
            samples: 0,
            bins: [BinStats::EMPTY; B],
        }
    }
}

impl<'a> Histogram<&'a mut [BinStats]> {
    /// An empty histogram over caller-owned storage: one bin per slot. The slots are
    /// cleared (only once the length is accepted); an empty slice is
    /// [`ConfigError::ZeroBins`], more than [`crate::MAX_BINS`] slots
    /// [`ConfigError::TooManyBins`].
    pub fn with_storage(
        storage: &'a mut [BinStats],
        closure: Closure,
    ) -> Result<Self, ConfigError> {
        crate::binning::check_bin_count(storage.len())?;
        storage.fill(BinStats::EMPTY);
        Ok(Histogram {
            closure,
            samples: 0,
            bins: storage,
        })
    }
}

/// A histogram that owns its bins on the heap: for hosts that create histograms of a
/// size known only at run time (the Python package, say).
#[cfg(feature = "std")]
pub type BoxedHistogram = Histogram<Box<[BinStats]>>;

#[cfg(feature = "std")]
impl Histogram<Box<[BinStats]>> {
    /// An empty histogram over storage it owns, one bin per slot; errors as
    /// [`Histogram::with_storage`]. The caller allocates (and so decides what a failed
    /// allocation means).
    pub fn with_boxed_storage(
        mut storage: Box<[BinStats]>,
        closure: Closure,
    ) -> Result<Self, ConfigError> {
        crate::binning::check_bin_count(storage.len())?;
        storage.fill(BinStats::EMPTY);
        Ok(Histogram {
            closure,
            samples: 0,
            bins: storage,
        })
    }
}

impl<S: AsRef<[BinStats]> + AsMut<[BinStats]> + ?Sized> Histogram<S> {
    /// Records one sample. A bad score or label is refused, and so is a sample that
    /// would take the count past [`crate::MAX_COUNT`] ([`PushError::CountOverflow`]);
    /// nothing is recorded then.
    #[inline]
    pub fn push(&mut self, score: f64, label: u8) -> Result<(), PushError> {
        sample::check(score, label, 0)?;
        let samples = add_counts(self.samples, 1)?;
        let bins = self.bins.as_mut();
        let index = self.closure.bin_index(score, bins.len());
        // A checked score (in [0, 1]) has a bin: `bin_index` maps it below `bins.len()`.
        // The bin's count is at most the total just checked.
        if let Some(bin) = bins.get_mut(index) {
            bin.record(score, label);
        }
        self.samples = samples;
        Ok(())
    }

    /// Records a batch: all of it, or (when any element is bad, or the batch would take
    /// the count past [`crate::MAX_COUNT`]) none of it.
    pub fn push_batch(&mut self, scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
        // The bound is checked once for the whole batch, before anything is recorded;
        // within it no bin's count can overflow.
        let samples = add_counts(self.samples, batch_count(scores.len())?)?;
        // The closure is chosen once, not per sample.
        match self.closure {
            Closure::Left => fill(self.bins.as_mut(), scores, labels, left_closed_index),
            Closure::Right => fill(self.bins.as_mut(), scores, labels, right_closed_index),
        }?;
        self.samples = samples;
        Ok(())
    }

    /// Adds another histogram's samples. Counts and score sums add exactly, so the result
    /// equals pushing both streams into one histogram. Both must have the same bin count
    /// and closure, and the merged count must stay within [`crate::MAX_COUNT`]
    /// ([`MergeError::CountOverflow`]); otherwise nothing changes.
    pub fn merge<T: AsRef<[BinStats]> + ?Sized>(
        &mut self,
        other: &Histogram<T>,
    ) -> Result<(), MergeError> {
        let (left, right) = (self.bins.as_ref().len(), other.bins.as_ref().len());
        if left != right {
            return Err(MergeError::BinCountMismatch { left, right });
        }
        if self.closure != other.closure {
            return Err(MergeError::ClosureMismatch);
        }
        let samples = add_counts(self.samples, other.samples)?;
        for (mine, theirs) in self.bins.as_mut().iter_mut().zip(other.bins.as_ref()) {
            // Cannot fail: each bin's merged count is at most the merged total, checked
            // above.
            mine.merge(theirs)?;
        }
        self.samples = samples;
        Ok(())
    }

    /// Replaces every bin with what `fill` writes (snapshots, decoding), then recounts
    /// the total. `fill` is given empty bins. If `fill` fails, or the bins it wrote sum
    /// past [`crate::MAX_COUNT`], the histogram is left empty and the error returned:
    /// callers check the bound before they call this, so that cannot happen to them.
    pub(crate) fn overwrite(
        &mut self,
        closure: Closure,
        fill: impl FnOnce(&mut [BinStats]) -> Result<(), CountOverflow>,
    ) -> Result<(), CountOverflow> {
        self.reset();
        let bins = self.bins.as_mut();
        let samples = fill(bins).and_then(|()| {
            bins.iter()
                .try_fold(0, |total, bin| add_counts(total, bin.count()))
        });
        match samples {
            Ok(samples) => {
                self.closure = closure;
                self.samples = samples;
                Ok(())
            }
            Err(e) => {
                self.reset();
                Err(e)
            }
        }
    }

    /// Forgets every sample; the bin count and closure stay.
    pub fn reset(&mut self) {
        self.bins.as_mut().fill(BinStats::EMPTY);
        self.samples = 0;
    }
}

impl<S: AsRef<[BinStats]> + ?Sized> Histogram<S> {
    /// The per-bin statistics, bin 0 first.
    pub fn bins(&self) -> &[BinStats] {
        self.bins.as_ref()
    }

    /// The number of bins B.
    pub fn bin_count(&self) -> usize {
        self.bins.as_ref().len()
    }

    /// Which side of each bin is closed.
    pub fn closure(&self) -> Closure {
        self.closure
    }

    /// Lower and upper edge of bin `k` (the closure says which side belongs to it).
    pub fn edges(&self, k: usize) -> (f64, f64) {
        equal_width_edges(k, self.bin_count())
    }

    /// The number of samples recorded (at most [`crate::MAX_COUNT`]).
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// All bins merged into one: the sample count, the overall accuracy and the mean
    /// confidence, exact and independent of input order.
    pub fn total(&self) -> BinStats {
        let mut total = BinStats::EMPTY;
        for bin in self.bins() {
            // Cannot fail: the bins' counts sum to `samples` ≤ MAX_COUNT (every
            // operation that grows a count checks the bound first).
            let _ = total.merge(bin);
        }
        total
    }

    /// ECE_bin over the histogram's bins.
    pub fn ece_bin(&self, norm: Norm) -> Result<Estimate, EstimateError> {
        estimate::ece_bin(self.bins().iter().copied(), norm)
    }

    /// The maximum calibration error over the histogram's bins.
    pub fn mce(&self) -> Result<Estimate, EstimateError> {
        estimate::mce(self.bins().iter().copied())
    }

    /// ECE_debias over the histogram's bins.
    pub fn ece_debias(&self, norm: Norm) -> Result<Estimate, EstimateError> {
        estimate::ece_debias(self.bins().iter().copied(), norm)
    }

    /// ECE_bin over the histogram's bins followed by the non-empty bins of `extra`, as
    /// bins of their own: torchmetrics gives confidences of exactly 1.0 a bin apart from
    /// the top one, and `tce.torch` holds them in a second histogram. `bins` of the result
    /// counts both. A sample count past `u64` is [`EstimateError::CountOverflow`].
    pub fn ece_bin_with<T: AsRef<[BinStats]> + ?Sized>(
        &self,
        extra: &Histogram<T>,
        norm: Norm,
    ) -> Result<Estimate, EstimateError> {
        estimate::ece_bin(self.bins().iter().chain(nonempty(extra)).copied(), norm)
    }

    /// MCE over the histogram's bins and the non-empty bins of `extra`, as
    /// [`Histogram::ece_bin_with`].
    pub fn mce_with<T: AsRef<[BinStats]> + ?Sized>(
        &self,
        extra: &Histogram<T>,
    ) -> Result<Estimate, EstimateError> {
        estimate::mce(self.bins().iter().chain(nonempty(extra)).copied())
    }
}

fn nonempty<T: AsRef<[BinStats]> + ?Sized>(h: &Histogram<T>) -> impl Iterator<Item = &BinStats> {
    h.bins().iter().filter(|b| b.count() > 0)
}

/// Records a batch into `bins`, placing each sample with `index`: all of it, or (when an
/// element is bad) none of it. The caller has checked that the histogram's total count
/// plus the batch's length stays within [`crate::MAX_COUNT`], which bounds every count
/// below: the merges here cannot fail.
#[inline]
fn fill(
    bins: &mut [BinStats],
    scores: &[f64],
    labels: &[u8],
    index: impl Fn(f64, usize) -> usize + Copy,
) -> Result<(), PushError> {
    if bins.len() > LANED_BINS || scores.len() < LANED_BATCH {
        sample::check_batch(scores, labels)?;
        let count = bins.len();
        for (&score, &label) in scores.iter().zip(labels) {
            // Checked scores have a bin (`index` maps [0, 1] below `count`).
            if let Some(bin) = bins.get_mut(index(score, count)) {
                bin.record(score, label);
            }
        }
        return Ok(());
    }
    sample::check_lengths(scores, labels)?;
    let mut staged = [BinStats::EMPTY; LANED_BINS];
    let staged = &mut staged[..bins.len()];
    let mut suspect = false;
    for (scores, labels) in scores
        .chunks(PACKED_SAMPLES)
        .zip(labels.chunks(PACKED_SAMPLES))
    {
        suspect |= if staged.len() <= NARROW_BINS {
            fill_lanes::<NARROW_LANES, { 2 * NARROW_BINS }>(staged, scores, labels, index)
        } else {
            fill_lanes::<WIDE_LANES, { 2 * LANED_BINS }>(staged, scores, labels, index)
        }?;
    }
    // The lanes' cheap test only raises suspicion; the one validation rule decides, and
    // names the offending element.
    if suspect {
        sample::check_batch(scores, labels)?;
    }
    for (bin, partial) in bins.iter_mut().zip(staged.iter()) {
        bin.merge(partial)?;
    }
    Ok(())
}

/// Adds at most `PACKED_SAMPLES` samples to `staged` (at most `CELLS / 2` bins) through
/// `LANES` packed lanes, validating as it goes. Returns whether any element may be
/// invalid. (The `CountOverflow` cannot happen: `staged` counts one batch, whose length
/// the caller has checked against the bound.)
///
/// Consecutive samples mostly land in the same few bins, and updating one bin from
/// back-to-back samples serialises every sample on the previous one's store: the lanes
/// break that chain (see `NARROW_BINS`). Validation rides along instead of taking a
/// separate pass: clamping a score into [0, 1] changes it exactly when it is out of range
/// or NaN, so the summed changes are zero exactly when every score is valid; and the OR
/// of all labels is at most 1 exactly when every label is 0 or 1. An invalid sample still
/// lands in some cell (bin indices and quanta are defined for every input, and the cell
/// is masked into range) and the caller then throws the lanes away.
#[inline]
fn fill_lanes<const LANES: usize, const CELLS: usize>(
    staged: &mut [BinStats],
    scores: &[f64],
    labels: &[u8],
    index: impl Fn(f64, usize) -> usize,
) -> Result<bool, CountOverflow> {
    #[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx")))]
    if std::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX, checked just now (the check is one cached load).
        return unsafe { fill_lanes_avx::<LANES, CELLS>(staged, scores, labels, index) };
    }
    fill_lanes_body::<LANES, CELLS>(staged, scores, labels, index)
}

/// [`fill_lanes`] compiled for AVX, the same code: the lane loop is short of registers,
/// and AVX's three-operand forms of the same SSE2 instructions drop the copies and spills
/// that the two-operand forms need: 14 % less time (1.61 against 1.39 ms for 10^6
/// samples on this project's VM, `perf_driver time-push`). Chosen at run time with `std`
/// (`std::is_x86_feature_detected`); a `no_std` build gets it by targeting AVX.
///
/// # Safety
///
/// The CPU must support AVX.
#[cfg(all(feature = "std", target_arch = "x86_64", not(target_feature = "avx")))]
#[target_feature(enable = "avx")]
unsafe fn fill_lanes_avx<const LANES: usize, const CELLS: usize>(
    staged: &mut [BinStats],
    scores: &[f64],
    labels: &[u8],
    index: impl Fn(f64, usize) -> usize,
) -> Result<bool, CountOverflow> {
    fill_lanes_body::<LANES, CELLS>(staged, scores, labels, index)
}

/// The body of [`fill_lanes`], inlined into each instruction-set version.
#[inline(always)]
fn fill_lanes_body<const LANES: usize, const CELLS: usize>(
    staged: &mut [BinStats],
    scores: &[f64],
    labels: &[u8],
    index: impl Fn(f64, usize) -> usize,
) -> Result<bool, CountOverflow> {
    debug_assert!(2 * staged.len() <= CELLS && scores.len() <= PACKED_SAMPLES);
    debug_assert!(CELLS.is_power_of_two());
    let count = staged.len();
    let mut lanes = [[0u128; CELLS]; LANES];
    let mut clamped_away = [0.0f64; LANES];
    let mut label_bits = 0u8;
    let mut add = |lane: usize, score: f64, label: u8| {
        let clamped = if score > 0.0 { score } else { 0.0 };
        let clamped = if clamped < 1.0 { clamped } else { 1.0 };
        clamped_away[lane] += (score - clamped).abs();
        label_bits |= label;
        // `index` keeps valid scores below `count` ≤ CELLS / 2, so a valid cell is below
        // CELLS (a power of two); the mask only spares the bounds check.
        let cell = ((index(score, count) << 1) | usize::from(label)) & (CELLS - 1);
        // Neither packed field overflows within PACKED_SAMPLES samples (see there), so
        // the addition never wraps; `wrapping_add` is the release build's `+` without an
        // overflow check in builds that have them.
        let packed = (1 << COUNT_SHIFT) | u128::from(stats::quantize(score));
        lanes[lane][cell] = lanes[lane][cell].wrapping_add(packed);
    };
    let (score_groups, label_groups) = (scores.chunks_exact(LANES), labels.chunks_exact(LANES));
    let (score_tail, label_tail) = (score_groups.remainder(), label_groups.remainder());
    for (s, l) in score_groups.zip(label_groups) {
        for lane in 0..LANES {
            add(lane, s[lane], l[lane]);
        }
    }
    for (&score, &label) in score_tail.iter().zip(label_tail) {
        add(0, score, label);
    }
    for lane in &lanes {
        for (bin, cells) in staged.iter_mut().zip(lane.chunks_exact(2)) {
            // Two cells of < 2^20 samples each (see PACKED_SAMPLES): no sum wraps.
            let quanta = cells[0].wrapping_add(cells[1]) & ((1 << COUNT_SHIFT) - 1);
            let (misses, hits) = (cells[0] >> COUNT_SHIFT, cells[1] >> COUNT_SHIFT);
            bin.merge(&BinStats::from_quanta(
                misses.wrapping_add(hits) as u64,
                hits as u64,
                quanta,
            ))?;
        }
    }
    Ok(clamped_away.iter().sum::<f64>() != 0.0 || label_bits > 1)
}

impl<const B: usize> Default for Histogram<[BinStats; B]> {
    fn default() -> Self {
        Self::new(Closure::Left)
    }
}

#[cfg(feature = "ffi")]
impl Histogram<[BinStats]> {
    /// Empties the histogram and sets its closure. For the C ABI (`src/ffi/`), which lays
    /// this view over caller memory it has zeroed (all-zero bytes are an empty histogram
    /// closed on the left: `Closure` is `repr(u8)` with `Left` = 0, `BinStats` holds
    /// integers) and then needs to choose the closure, a private field.
    pub(crate) fn reinitialise(&mut self, closure: Closure) {
        self.closure = closure;
        self.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_storage_coerces_to_the_unsized_view() {
        static_assertions();
        let mut h = InlineHistogram::<4>::new(Closure::Left);
        let view: &mut Histogram = &mut h;
        view.push(0.3, 1).unwrap();
        assert_eq!(view.bin_count(), 4);
        assert_eq!(h.bins()[1].count(), 1);
    }

    #[test]
    fn an_extra_histograms_nonempty_bins_count_as_bins_of_their_own() {
        // torchmetrics' layout: scores below 1.0 in 4 bins, the 1.0s in a bin apart.
        let mut main = InlineHistogram::<4>::new(Closure::Left);
        let mut ones = InlineHistogram::<4>::new(Closure::Left);
        main.push_batch(&[0.1, 0.3, 0.35, 0.9, 0.95], &[0, 1, 0, 1, 1])
            .unwrap();
        ones.push_batch(&[1.0, 1.0, 1.0], &[1, 0, 1]).unwrap();
        // By hand: bins (n, mean score, accuracy) = (1, .1, 0), (2, .325, .5),
        // (2, .925, 1), and the extra (3, 1, 2/3).
        let gaps = [(1.0, 0.1), (2.0, 0.175), (2.0, 0.075), (3.0, 1.0 / 3.0)];
        let l2 = (gaps.iter().map(|(n, g)| n * g * g).sum::<f64>() / 8.0).sqrt();
        let with = main.ece_bin_with(&ones, Norm::L2).unwrap();
        assert!((with.value - l2).abs() < 1e-12, "{} vs {l2}", with.value);
        assert_eq!((with.samples, with.bins), (8, 5));
        let worst = main.mce_with(&ones).unwrap();
        assert!((worst.value - 1.0 / 3.0).abs() < 1e-12);
        // An empty extra adds nothing: the histogram's own estimate, bit for bit.
        let empty = InlineHistogram::<4>::new(Closure::Left);
        assert_eq!(main.ece_bin_with(&empty, Norm::L1), main.ece_bin(Norm::L1));
        assert_eq!(main.mce_with(&empty), main.mce());
    }

    #[test]
    fn batches_longer_than_a_lane_flush_equal_single_pushes() {
        // More than PACKED_SAMPLES samples, most of them 1.0 with label 1 (the largest
        // values every packed field can receive), plus a spread of others.
        let n = PACKED_SAMPLES + PACKED_SAMPLES / 2 + 3;
        let scores: Vec<f64> = (0..n)
            .map(|i| {
                if i % 7 == 0 {
                    (i % 1000) as f64 / 999.0
                } else {
                    1.0
                }
            })
            .collect();
        let labels: Vec<u8> = (0..n).map(|i| u8::from(i % 13 != 0)).collect();
        // 15 bins take eight lanes, 40 bins four (`NARROW_BINS`).
        for (closure, bins) in [
            (Closure::Left, 15),
            (Closure::Right, 15),
            (Closure::Left, 40),
        ] {
            let (mut a, mut b) = (vec![BinStats::EMPTY; bins], vec![BinStats::EMPTY; bins]);
            let mut batch = Histogram::with_storage(&mut a[..], closure).unwrap();
            let mut single = Histogram::with_storage(&mut b[..], closure).unwrap();
            batch.push_batch(&scores, &labels).unwrap();
            for (&s, &l) in scores.iter().zip(&labels) {
                single.push(s, l).unwrap();
            }
            assert_eq!(batch, single);
            assert_eq!(batch.samples(), n as u64);
            let ones = scores.iter().filter(|&&s| s == 1.0).count() as u64;
            assert!(batch.bins()[bins - 1].count() >= ones);
        }
    }

    fn static_assertions() {
        // Usable in a `static`.
        static _H: Histogram<[BinStats; 15]> = Histogram::new(Closure::Right);
    }

    mod lane_versions {
        use super::*;
        use proptest::prelude::*;

        /// The lane loop as dispatched (its AVX version where the CPU has AVX) and its
        /// baseline body on the same batch: their staged bins and their verdicts.
        fn both_lane_loops<const LANES: usize, const CELLS: usize>(
            bins: usize,
            scores: &[f64],
            labels: &[u8],
            index: impl Fn(f64, usize) -> usize + Copy,
        ) -> [(Vec<BinStats>, bool); 2] {
            let (mut dispatched, mut baseline) =
                (vec![BinStats::EMPTY; bins], vec![BinStats::EMPTY; bins]);
            let verdict =
                fill_lanes::<LANES, CELLS>(&mut dispatched, scores, labels, index).unwrap();
            let baseline_verdict =
                fill_lanes_body::<LANES, CELLS>(&mut baseline, scores, labels, index).unwrap();
            [(dispatched, verdict), (baseline, baseline_verdict)]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]

            /// Whichever version the CPU runs, the lane loop stages the same bins and gives
            /// the same verdict as the baseline body, for any bit patterns (invalid ones
            /// included) and both lane widths and closures. (The integration tests check
            /// the version this CPU runs against single pushes; this keeps the other one
            /// checked on a CPU with AVX.)
            #[test]
            fn every_version_of_the_lane_loop_agrees(
                samples in prop::collection::vec(
                    (prop_oneof![0.0..=1.0f64, Just(1.0)], 0u8..=1),
                    0..600,
                ),
                // One element overwritten with any bits (most of them invalid), or none.
                bad in prop::option::of((any::<prop::sample::Index>(), any::<f64>(), any::<u8>())),
                narrow_bins in 1..=NARROW_BINS,
                wide_bins in NARROW_BINS + 1..=LANED_BINS,
            ) {
                let (mut scores, mut labels): (Vec<f64>, Vec<u8>) = samples.into_iter().unzip();
                if let (Some((at, score, label)), false) = (bad, scores.is_empty()) {
                    let at = at.index(scores.len());
                    (scores[at], labels[at]) = (score, label);
                }
                for index in [left_closed_index, right_closed_index] {
                    let [dispatched, baseline] = both_lane_loops::<NARROW_LANES, { 2 * NARROW_BINS }>(
                        narrow_bins, &scores, &labels, index,
                    );
                    prop_assert_eq!(&dispatched, &baseline);
                    let [dispatched, baseline] = both_lane_loops::<WIDE_LANES, { 2 * LANED_BINS }>(
                        wide_bins, &scores, &labels, index,
                    );
                    prop_assert_eq!(&dispatched, &baseline);
                }
            }
        }
    }
}
