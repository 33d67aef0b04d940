//! An equal-width histogram with exponential forgetting: a sample's weight halves every
//! `half_life` samples pushed after it, so the estimates follow a model whose calibration
//! drifts, in O(B) memory.
//!
//! Rather than scaling every bin on each push, each new sample gets a weight that grows
//! by 1/λ per push (λ = 2^(−1/half_life)), which leaves the ratios between samples the
//! same; when that weight passes 2^200 every bin is scaled down once (O(B)). Weights are
//! `f64`, so unlike the plain histogram this one is not exact: each push rounds the
//! weighted sums (relative error ~2^-53 each). Two histograms merge as if their streams
//! had ended at the same moment ([`DecayingHistogram::merge`]: two streams have no
//! common clock, so that is the one choice that needs none). ECE_debias uses Kish's
//! effective sample size (Σw)²/Σw² per bin.
//!
//! # Which half-lives are accepted
//!
//! A half-life h (in samples) is accepted when its λ and the weights it produces are
//! representable, so that every estimate stays finite; anything else is
//! [`ConfigError::InvalidHalfLife`], checked before anything is written:
//!
//! * **from below, λ ≥ 2^−510, i.e. h ≥ 1/510 samples.** After the rescaling the newest
//!   sample weighs λ relative to the next one (it is never lighter than that), and its
//!   squared weight λ² must stay a normal `f64` (≥ 2^−1022, with a factor 4 to spare for
//!   rounding) for Kish's effective count. Shorter half-lives make 1/λ overflow
//!   (h < 1/1024: the first push scales every weight to 0) or λ² underflow, and the
//!   estimates would divide 0 by 0.
//! * **from above, λ < 1, i.e. h up to about 1.25·10^16 samples** (2^54·ln 2: beyond it
//!   2^(−1/h) rounds to 1, nothing decays and the half-life cannot be told from λ).
//!   Near that bound λ is coarse: 1 − λ ≈ ln 2 / h is a multiple of 2^−53, so the decay
//!   rate is that of the given half-life only up to a relative h·2^−54/ln 2 (1e-10 at
//!   h = 10^6, 1e-4 at 10^12).
//!
//! Within that range a weight is never above the next sample's (≤ 2^200), a bin's
//! weight is at most its count times that (≤ 2^263 with counts below 2^63), and old
//! samples may underflow to weight 0, which only means they no longer count.

use crate::binning::{equal_width_edges, Closure};
use crate::error::{ConfigError, EstimateError, MergeError, PushError};
use crate::estimate::{self, BinSummary, Estimate};
use crate::limits::{add_counts, batch_count};
use crate::norm::Norm;
use crate::sample;

/// One bin of a [`DecayingHistogram`]: decayed weights of its samples, hits and scores.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct DecayedBin {
    pub(crate) count: u64,
    pub(crate) weight: f64,
    pub(crate) hit_weight: f64,
    pub(crate) score_weight: f64,
    pub(crate) weight_squared: f64,
}

impl DecayedBin {
    /// An empty bin.
    pub const EMPTY: DecayedBin = DecayedBin {
        count: 0,
        weight: 0.0,
        hit_weight: 0.0,
        score_weight: 0.0,
        weight_squared: 0.0,
    };

    /// Records a checked sample; its histogram has counted it in its total, which is at
    /// most [`crate::MAX_COUNT`] and bounds this bin's count: it cannot wrap.
    fn record(&mut self, weight: f64, score: f64, label: u8) {
        self.count = self.count.wrapping_add(1);
        self.weight += weight;
        self.hit_weight += weight * f64::from(label);
        self.score_weight += weight * score;
        self.weight_squared += weight * weight;
    }

    fn scale(&mut self, factor: f64) {
        self.weight *= factor;
        self.hit_weight *= factor;
        self.score_weight *= factor;
        self.weight_squared *= factor * factor;
    }

    /// The bin's decayed weight, relative to the next sample's (which would add 1).
    pub fn weight(&self) -> f64 {
        self.weight
    }
}

impl BinSummary for DecayedBin {
    fn count(&self) -> u64 {
        self.count
    }
    fn weight(&self) -> f64 {
        self.weight
    }
    fn mean_score(&self) -> f64 {
        self.score_weight / self.weight
    }
    fn accuracy(&self) -> f64 {
        self.hit_weight / self.weight
    }
    /// (Σw)²/Σw², computed as (Σw/Σw²)·Σw so that it does not underflow with the
    /// weights. A bin whose samples are so old that their squared weights underflowed
    /// (Σw² = 0 while Σw > 0) has no usable effective count: 0, which makes its ECE_debias
    /// correction 0 (like a bin of fewer than 2 samples) instead of NaN.
    fn effective_count(&self) -> f64 {
        if self.weight_squared > 0.0 {
            self.weight / self.weight_squared * self.weight
        } else {
            0.0
        }
    }
}

/// Above this a new sample's weight is brought back to 1, scaling every bin with it.
pub(crate) const RESCALE_ABOVE: f64 = 1.606_938_044_258_990_3e60; // 2^200

/// The smallest λ accepted: 2^−510 (half-life 1/510 samples). See the module docs: the
/// newest sample's weight after a rescale is λ, and λ² must be a normal `f64`.
pub(crate) const MIN_RETAIN: f64 = 2.983_336_292_480_083e-154; // 2^-510, exactly (tested)

/// An equal-width histogram whose samples fade with a half-life, over storage `S`.
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct DecayingHistogram<S: ?Sized = [DecayedBin]> {
    pub(crate) closure: Closure,
    /// The half-life as given (λ alone does not determine it: many half-lives round to
    /// the same λ).
    pub(crate) half_life: f64,
    /// λ = 2^(−1/half_life): what a weight keeps per push, in [2^−510, 1) (see
    /// [`MIN_RETAIN`] and the module docs).
    pub(crate) retain: f64,
    /// The weight the next sample gets, in [1, 2^200].
    pub(crate) next_weight: f64,
    /// Samples recorded: the sum of the bins' counts, at most [`crate::MAX_COUNT`], kept
    /// so that a push checks the bound in O(1).
    pub(crate) samples: u64,
    pub(crate) bins: S,
}

/// λ = 2^(−1/half_life) for a half-life in samples, or [`ConfigError::InvalidHalfLife`]
/// unless λ is in [[`MIN_RETAIN`], 1) (the accepted range: see the module docs). The one
/// check of a half-life, for the constructors and the C ABI alike.
pub(crate) fn retain_per_push(half_life: f64) -> Result<f64, ConfigError> {
    if !(half_life.is_finite() && half_life > 0.0) {
        return Err(ConfigError::InvalidHalfLife);
    }
    let retain = libm::exp2(-1.0 / half_life);
    if (MIN_RETAIN..1.0).contains(&retain) {
        Ok(retain)
    } else {
        Err(ConfigError::InvalidHalfLife)
    }
}

/// A half-life that gives `retain` (in [`MIN_RETAIN`], 1)), for a state decoded from a
/// frame, which carries λ but not the half-life: −1/log2 λ.
pub(crate) fn half_life_of(retain: f64) -> f64 {
    -1.0 / libm::log2(retain)
}

impl<const B: usize> DecayingHistogram<[DecayedBin; B]> {
    /// An empty histogram of `B` bins whose samples' weight halves every `half_life`
    /// samples.
    ///
    /// Errors: [`ConfigError::ZeroBins`], [`ConfigError::TooManyBins`] (above
    /// [`crate::MAX_BINS`]), [`ConfigError::InvalidHalfLife`] (outside the accepted range,
    /// see the module docs).
    pub fn new(closure: Closure, half_life: f64) -> Result<Self, ConfigError> {
        crate::binning::check_bin_count(B)?;
        let retain = retain_per_push(half_life)?;
        Ok(DecayingHistogram {
            closure,
            half_life,
            retain,
            next_weight: 1.0,
            samples: 0,
            bins: [DecayedBin::EMPTY; B],
        })
    }
}

/// A decaying histogram that owns its bins on the heap (bin count chosen at run time).
#[cfg(feature = "std")]
pub type BoxedDecayingHistogram = DecayingHistogram<Box<[DecayedBin]>>;

#[cfg(feature = "std")]
impl DecayingHistogram<Box<[DecayedBin]>> {
    /// An empty histogram over bins it owns; errors as [`DecayingHistogram::new`].
    pub fn with_boxed_storage(
        mut storage: Box<[DecayedBin]>,
        closure: Closure,
        half_life: f64,
    ) -> Result<Self, ConfigError> {
        crate::binning::check_bin_count(storage.len())?;
        let retain = retain_per_push(half_life)?;
        storage.fill(DecayedBin::EMPTY);
        Ok(DecayingHistogram {
            closure,
            half_life,
            retain,
            next_weight: 1.0,
            samples: 0,
            bins: storage,
        })
    }
}

impl<'a> DecayingHistogram<&'a mut [DecayedBin]> {
    /// An empty histogram over caller-owned bins (cleared here, once every argument has
    /// been checked: on error the storage is untouched). Errors as [`DecayingHistogram::new`].
    pub fn with_storage(
        storage: &'a mut [DecayedBin],
        closure: Closure,
        half_life: f64,
    ) -> Result<Self, ConfigError> {
        crate::binning::check_bin_count(storage.len())?;
        let retain = retain_per_push(half_life)?;
        storage.fill(DecayedBin::EMPTY);
        Ok(DecayingHistogram {
            closure,
            half_life,
            retain,
            next_weight: 1.0,
            samples: 0,
            bins: storage,
        })
    }
}

impl<S: AsRef<[DecayedBin]> + AsMut<[DecayedBin]> + ?Sized> DecayingHistogram<S> {
    /// Records one sample; a bad one is refused, and so is one that would take the
    /// count past [`crate::MAX_COUNT`] ([`PushError::CountOverflow`]): nothing changes.
    pub fn push(&mut self, score: f64, label: u8) -> Result<(), PushError> {
        sample::check(score, label, 0)?;
        self.samples = add_counts(self.samples, 1)?;
        self.record(score, label);
        Ok(())
    }

    /// Records a batch in order: all of it, or (when any element is bad, or the batch
    /// would take the count past [`crate::MAX_COUNT`]) none of it.
    pub fn push_batch(&mut self, scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
        sample::check_batch(scores, labels)?;
        self.samples = add_counts(self.samples, batch_count(scores.len())?)?;
        for (&score, &label) in scores.iter().zip(labels) {
            self.record(score, label);
        }
        Ok(())
    }

    /// Records a checked sample whose count the caller has added to `samples` (which
    /// bounds the bin's count: it cannot overflow).
    fn record(&mut self, score: f64, label: u8) {
        let bins = self.bins.as_mut();
        // A checked score (in [0, 1]) has a bin: `bin_index` maps it below `bins.len()`.
        if let Some(bin) = bins.get_mut(self.closure.bin_index(score, bins.len())) {
            bin.record(self.next_weight, score, label);
        }
        self.next_weight /= self.retain;
        if self.next_weight > RESCALE_ABOVE {
            let factor = 1.0 / self.next_weight;
            bins.iter_mut().for_each(|bin| bin.scale(factor));
            self.next_weight = 1.0;
        }
    }

    /// Merges `other` into this histogram as if both streams had ended at the same
    /// moment: each sample keeps the weight it has relative to its own stream's next
    /// sample, so the newest samples of both streams weigh the same, and the next push
    /// weighs what it would after either. The merged bins are the plain sums of both
    /// sides' decayed weights (and counts), so the estimates are those of one histogram
    /// holding both streams' samples with those weights.
    ///
    /// The two histograms must have the same bin count
    /// ([`MergeError::BinCountMismatch`]), closure ([`MergeError::ClosureMismatch`]) and
    /// decay per push λ ([`MergeError::HalfLifeMismatch`]; λ, not the half-life as
    /// given, is what decays: a histogram decoded from a frame reports −1/log2 λ and still
    /// merges with one configured with the encoder's half-life; this histogram keeps its
    /// own). The merged count must stay within [`crate::MAX_COUNT`]
    /// ([`MergeError::CountOverflow`]). On error nothing changes.
    ///
    /// Each side stores its weights on its own scale (its next sample's weight, between
    /// 1 and 2^200): the side with the smaller scale is brought to the larger by one
    /// factor, rounded once (so each of its weights gains a relative rounding error of
    /// at most 2^−52; the other side's are not touched), and the sums round once more.
    /// Scaling up keeps every weight within the bounds the module docs state. The merge
    /// is commutative bit for bit (`a.merge(&b)` and `b.merge(&a)` hold the same bins),
    /// and associative up to that rounding. O(B), no allocation.
    pub fn merge<T: AsRef<[DecayedBin]> + ?Sized>(
        &mut self,
        other: &DecayingHistogram<T>,
    ) -> Result<(), MergeError> {
        let (left, right) = (self.bin_count(), other.bin_count());
        if left != right {
            return Err(MergeError::BinCountMismatch { left, right });
        }
        if self.closure != other.closure {
            return Err(MergeError::ClosureMismatch);
        }
        if self.retain != other.retain {
            return Err(MergeError::HalfLifeMismatch);
        }
        let samples = add_counts(self.samples, other.samples)?;
        // The common scale is the larger next weight; exactly one factor is 1 (both when
        // the scales agree), so the two orders of a merge compute the same products.
        let scale = self.next_weight.max(other.next_weight);
        let (mine_by, theirs_by) = (scale / self.next_weight, scale / other.next_weight);
        for (mine, theirs) in self.bins.as_mut().iter_mut().zip(other.bins.as_ref()) {
            let mut theirs = *theirs;
            if mine_by != 1.0 {
                mine.scale(mine_by);
            }
            if theirs_by != 1.0 {
                theirs.scale(theirs_by);
            }
            // Cannot wrap: each bin's merged count is at most the merged total, checked
            // above.
            mine.count = mine.count.wrapping_add(theirs.count);
            mine.weight += theirs.weight;
            mine.hit_weight += theirs.hit_weight;
            mine.score_weight += theirs.score_weight;
            mine.weight_squared += theirs.weight_squared;
        }
        self.next_weight = scale;
        self.samples = samples;
        Ok(())
    }

    /// Forgets every sample; bins, closure and half-life stay.
    pub fn reset(&mut self) {
        self.bins.as_mut().fill(DecayedBin::EMPTY);
        self.next_weight = 1.0;
        self.samples = 0;
    }
}

#[cfg(feature = "ffi")]
impl DecayingHistogram<[DecayedBin]> {
    /// Empties the histogram and sets its closure and half-life, whose λ the caller has
    /// computed with [`retain_per_push`] before touching any memory. For the C ABI
    /// (`src/ffi/decay.rs`), which lays this view over caller memory it has zeroed (zero
    /// bytes are empty bins, closure left, but λ = 0).
    pub(crate) fn reinitialise(&mut self, closure: Closure, half_life: f64, retain: f64) {
        debug_assert_eq!(retain_per_push(half_life), Ok(retain));
        self.closure = closure;
        self.half_life = half_life;
        self.retain = retain;
        self.reset();
    }
}

impl<S: AsRef<[DecayedBin]> + ?Sized> DecayingHistogram<S> {
    /// Which side of each bin is closed.
    pub fn closure(&self) -> Closure {
        self.closure
    }

    /// The bins, bin 0 first.
    pub fn bins(&self) -> &[DecayedBin] {
        self.bins.as_ref()
    }

    /// The number of bins B.
    pub fn bin_count(&self) -> usize {
        self.bins.as_ref().len()
    }

    /// Lower and upper edge of bin `k`.
    pub fn edges(&self, k: usize) -> (f64, f64) {
        equal_width_edges(k, self.bin_count())
    }

    /// The half-life in samples, as given to the constructor. (A histogram decoded from
    /// a frame, which carries λ only, reports −1/log2 λ unless it already had that λ:
    /// see [`DecayingHistogram::decode`].)
    pub fn half_life(&self) -> f64 {
        self.half_life
    }

    /// Samples pushed since creation or the last reset (the estimates report this), at
    /// most [`crate::MAX_COUNT`].
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// ECE_bin with every sample weighted by its decay.
    pub fn ece_bin(&self, norm: Norm) -> Result<Estimate, EstimateError> {
        estimate::ece_bin(self.bins().iter().copied(), norm)
    }

    /// The maximum calibration error over the bins.
    pub fn mce(&self) -> Result<Estimate, EstimateError> {
        estimate::mce(self.bins().iter().copied())
    }

    /// ECE_debias with Kish's effective sample size per bin.
    pub fn ece_debias(&self, norm: Norm) -> Result<Estimate, EstimateError> {
        estimate::ece_debias(self.bins().iter().copied(), norm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accepted_range_ends_where_the_module_docs_say() {
        assert_eq!(MIN_RETAIN, f64::from_bits((1023 - 510) << 52));
        assert_eq!(retain_per_push(1.0 / 510.0), Ok(MIN_RETAIN));
        assert_eq!(
            retain_per_push(1.0 / 511.0),
            Err(ConfigError::InvalidHalfLife)
        );
        // About 2^54·ln 2 ≈ 1.2487e16: the last half-lives whose λ is below 1.
        assert!(retain_per_push(1.2e16).is_ok());
        assert_eq!(retain_per_push(1.3e16), Err(ConfigError::InvalidHalfLife));
    }
}
