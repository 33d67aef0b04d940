//! A histogram that many threads push into at once, without locks.
//!
//! Each bin is four atomic words updated with relaxed `fetch_add`: the count, the hits,
//! and the 64.64 fixed-point score sum as a low word with its carry into a high word.
//! The sums are exactly those of [`BinStats`] (no precision is lost to concurrency), so
//! once the writers are done a snapshot equals the histogram of the same pushes made
//! sequentially, bit for bit. A snapshot can be taken at any time, also while writers
//! run; then a push in flight may show in its bin's count before its hit or score (the
//! snapshot caps both at what the count allows), so such a snapshot is off by at most
//! the pushes in flight.
//!
//! Only on targets with 64-bit atomics (`target_has_atomic = "64"`).

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::binning::{equal_width_edges, Closure};
use crate::error::{ConfigError, MergeError, PushError};
use crate::histogram::Histogram;
use crate::sample;
use crate::stats::{to_fixed, BinStats};

/// One bin of a [`ConcurrentHistogram`].
#[derive(Debug, Default)]
#[repr(C)]
pub struct AtomicBin {
    count: AtomicU64,
    hits: AtomicU64,
    sum_low: AtomicU64,
    sum_high: AtomicU64,
}

impl AtomicBin {
    /// An empty bin.
    #[allow(clippy::declare_interior_mutable_const)] // used only as an initialiser
    pub const EMPTY: AtomicBin = AtomicBin {
        count: AtomicU64::new(0),
        hits: AtomicU64::new(0),
        sum_low: AtomicU64::new(0),
        sum_high: AtomicU64::new(0),
    };

    #[inline]
    fn record(&self, score: f64, label: u8) {
        let fixed = to_fixed(score);
        let (low, high) = (fixed as u64, (fixed >> 64) as u64);
        self.count.fetch_add(1, Relaxed);
        self.hits.fetch_add(u64::from(label), Relaxed);
        let before = self.sum_low.fetch_add(low, Relaxed);
        let carry = u64::from(before.checked_add(low).is_none());
        if high + carry > 0 {
            self.sum_high.fetch_add(high + carry, Relaxed);
        }
    }

    /// The bin's statistics now.
    pub fn snapshot(&self) -> BinStats {
        let count = self.count.load(Relaxed);
        let hits = self.hits.load(Relaxed).min(count);
        let sum =
            u128::from(self.sum_high.load(Relaxed)) << 64 | u128::from(self.sum_low.load(Relaxed));
        // Mid-push, a score may be summed before its count: cap at what `count` allows.
        BinStats::from_parts(count, hits, sum.min(u128::from(count) << 64))
            .unwrap_or(BinStats::EMPTY)
    }

    fn reset(&self) {
        for word in [&self.count, &self.hits, &self.sum_low, &self.sum_high] {
            word.store(0, Relaxed);
        }
    }
}

/// An equal-width histogram that many threads push into through `&self`.
#[derive(Debug)]
#[repr(C)]
pub struct ConcurrentHistogram<S: ?Sized = [AtomicBin]> {
    closure: Closure,
    bins: S,
}

impl<const B: usize> ConcurrentHistogram<[AtomicBin; B]> {
    const AT_LEAST_ONE_BIN: () = assert!(B > 0, "a histogram needs at least one bin");

    /// An empty histogram of `B` bins stored inline; `const`, so it can be a `static`
    /// shared by every thread.
    pub const fn new(closure: Closure) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::AT_LEAST_ONE_BIN;
        ConcurrentHistogram {
            closure,
            bins: [AtomicBin::EMPTY; B],
        }
    }
}

impl<'a> ConcurrentHistogram<&'a [AtomicBin]> {
    /// An empty histogram over caller-owned bins (cleared here).
    pub fn with_storage(storage: &'a [AtomicBin], closure: Closure) -> Result<Self, ConfigError> {
        if storage.is_empty() {
            return Err(ConfigError::ZeroBins);
        }
        storage.iter().for_each(AtomicBin::reset);
        Ok(ConcurrentHistogram {
            closure,
            bins: storage,
        })
    }
}

#[cfg(feature = "ffi")]
impl ConcurrentHistogram<[AtomicBin]> {
    /// Empties the histogram and sets its closure. For the C ABI (`src/ffi/concurrent.rs`),
    /// which lays this view over caller memory it has zeroed (zero bytes are empty bins
    /// closed on the left) before any thread can see it.
    pub(crate) fn reinitialise(&mut self, closure: Closure) {
        self.closure = closure;
        self.reset();
    }
}

impl<S: AsRef<[AtomicBin]> + ?Sized> ConcurrentHistogram<S> {
    /// Records one sample; callable from many threads at once.
    #[inline]
    pub fn push(&self, score: f64, label: u8) -> Result<(), PushError> {
        sample::check(score, label, 0)?;
        let bins = self.bins.as_ref();
        bins[self.closure.bin_index(score, bins.len())].record(score, label);
        Ok(())
    }

    /// Records a batch: all of it, or (when any element is bad) none of it.
    pub fn push_batch(&self, scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
        sample::check_batch(scores, labels)?;
        let bins = self.bins.as_ref();
        for (&score, &label) in scores.iter().zip(labels) {
            bins[self.closure.bin_index(score, bins.len())].record(score, label);
        }
        Ok(())
    }

    /// Copies the current counts into `into` (same bin count and closure), replacing its
    /// contents; the estimators then read that histogram.
    pub fn snapshot_into<T>(&self, into: &mut Histogram<T>) -> Result<(), MergeError>
    where
        T: AsRef<[BinStats]> + AsMut<[BinStats]> + ?Sized,
    {
        let (left, right) = (into.bin_count(), self.bin_count());
        if left != right {
            return Err(MergeError::BinCountMismatch { left, right });
        }
        if into.closure() != self.closure {
            return Err(MergeError::ClosureMismatch);
        }
        for (slot, bin) in into.bins_mut().iter_mut().zip(self.bins.as_ref()) {
            *slot = bin.snapshot();
        }
        Ok(())
    }

    /// Forgets every sample. Pushes racing with a reset may be partly kept.
    pub fn reset(&self) {
        self.bins.as_ref().iter().for_each(AtomicBin::reset);
    }

    /// The number of bins B.
    pub fn bin_count(&self) -> usize {
        self.bins.as_ref().len()
    }

    /// Which side of each bin is closed.
    pub fn closure(&self) -> Closure {
        self.closure
    }

    /// Lower and upper edge of bin `k`.
    pub fn edges(&self, k: usize) -> (f64, f64) {
        equal_width_edges(k, self.bin_count())
    }
}
