//! The streaming equal-width histogram (SPEC §3.1): B bins fixed at construction, O(1)
//! per sample, exact merge. Storage is inline (`Histogram<[BinStats; B]>`, usable in a
//! `static`) or a slice the caller owns (`Histogram<&mut [BinStats]>`).

use crate::binning::{equal_width_edges, Closure};
use crate::error::{ConfigError, EstimateError, MergeError, PushError};
use crate::estimate::{self, Estimate};
use crate::norm::Norm;
use crate::sample;
use crate::stats::BinStats;

/// An equal-width histogram of (score, label) samples over storage `S`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram<S> {
    bins: S,
    closure: Closure,
}

/// A histogram with `B` bins stored inline.
pub type InlineHistogram<const B: usize> = Histogram<[BinStats; B]>;

impl<const B: usize> Histogram<[BinStats; B]> {
    const AT_LEAST_ONE_BIN: () = assert!(B > 0, "a histogram needs at least one bin");

    /// An empty histogram of `B` bins stored inline; `const`, so it can initialise a
    /// `static`. `B = 0` fails to compile.
    pub const fn new(closure: Closure) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::AT_LEAST_ONE_BIN;
        Histogram { bins: [BinStats::EMPTY; B], closure }
    }
}

impl<'a> Histogram<&'a mut [BinStats]> {
    /// An empty histogram over caller-owned storage: one bin per slot. The slots are
    /// cleared; an empty slice is [`ConfigError::ZeroBins`].
    pub fn with_storage(storage: &'a mut [BinStats], closure: Closure) -> Result<Self, ConfigError> {
        if storage.is_empty() {
            return Err(ConfigError::ZeroBins);
        }
        storage.fill(BinStats::EMPTY);
        Ok(Histogram { bins: storage, closure })
    }
}

impl<S: AsRef<[BinStats]> + AsMut<[BinStats]>> Histogram<S> {
    /// Records one sample. A bad score or label is refused and nothing is recorded.
    #[inline]
    pub fn push(&mut self, score: f64, label: u8) -> Result<(), PushError> {
        sample::check(score, label, 0)?;
        self.record(score, label);
        Ok(())
    }

    /// Records a batch: all of it, or (when any element is bad) none of it.
    pub fn push_batch(&mut self, scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
        sample::check_batch(scores, labels)?;
        for (&score, &label) in scores.iter().zip(labels) {
            self.record(score, label);
        }
        Ok(())
    }

    #[inline]
    fn record(&mut self, score: f64, label: u8) {
        let bins = self.bins.as_mut();
        let index = self.closure.bin_index(score, bins.len());
        bins[index].record(score, label);
    }

    /// Adds another histogram's samples. Counts and score sums add exactly, so the result
    /// equals pushing both streams into one histogram. Both must have the same bin count
    /// and closure; otherwise nothing changes.
    pub fn merge<T: AsRef<[BinStats]>>(&mut self, other: &Histogram<T>) -> Result<(), MergeError> {
        let (left, right) = (self.bins.as_ref().len(), other.bins.as_ref().len());
        if left != right {
            return Err(MergeError::BinCountMismatch { left, right });
        }
        if self.closure != other.closure {
            return Err(MergeError::ClosureMismatch);
        }
        for (mine, theirs) in self.bins.as_mut().iter_mut().zip(other.bins.as_ref()) {
            mine.merge(theirs);
        }
        Ok(())
    }

    /// Forgets every sample; the bin count and closure stay.
    pub fn reset(&mut self) {
        self.bins.as_mut().fill(BinStats::EMPTY);
    }
}

impl<S: AsRef<[BinStats]>> Histogram<S> {
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

    /// The number of samples recorded.
    pub fn samples(&self) -> u64 {
        self.bins.as_ref().iter().map(BinStats::count).sum()
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
}

impl<const B: usize> Default for Histogram<[BinStats; B]> {
    fn default() -> Self {
        Self::new(Closure::Left)
    }
}
