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
//! **Shards.** Threads pushing into the same bin contend for its cache line, and with
//! skewed confidences most pushes hit the same top bin: two threads pushing into one set
//! of bins are slower than one. So the bins can be striped: the storage holds S shards of
//! B bins each, a thread pushes into its own shard ([`ConcurrentHistogram::push_to`] with
//! its index), and a snapshot sums the shards (exactly: the sums are integers).
//!
//! Shards are contiguous and unpadded (bins are 32 bytes, the storage 8-byte aligned), so
//! the same bin of two shards is on different 64-byte cache lines once B ≥ 3, but the last
//! bins of one shard and the first of the next can share a line, and CPUs that fetch
//! lines in 128-byte pairs see more of it. It matters for small shards: with 2 threads
//! on a shard each and skewed scores, 15 bins (480 B a shard) scaled (7.5 ns a push
//! against 10.4 ns for one thread), while 3 bins took 18 ns and 1 bin 53 ns. Use shards
//! of at least 8 bins (256 B) when scaling matters.
//!
//! Only on targets with 64-bit atomics (`target_has_atomic = "64"`).

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::binning::{equal_width_edges, Closure};
use crate::error::{ConfigError, MergeError, PushError};
use crate::histogram::Histogram;
use crate::limits::add_counts;
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

    /// Adds a bin's statistics, with the same carry as [`Self::record`].
    fn add(&self, stats: &BinStats) {
        let sum = stats.score_sum();
        let (low, high) = (sum as u64, (sum >> 64) as u64);
        self.count.fetch_add(stats.count(), Relaxed);
        self.hits.fetch_add(stats.hits(), Relaxed);
        let before = self.sum_low.fetch_add(low, Relaxed);
        let carry = u64::from(before.checked_add(low).is_none());
        if high + carry > 0 {
            self.sum_high.fetch_add(high + carry, Relaxed);
        }
    }
}

/// An equal-width histogram that many threads push into through `&self`, striped into
/// shards (see the [module docs](self)).
///
/// Storage: `[[AtomicBin; B]; S]` inline (S shards of B bins, [`Self::new`]; plain
/// `[AtomicBin; B]` is one shard), or a caller-owned slice of S·B bins
/// ([`ConcurrentHistogram::with_storage`]), shard after shard.
#[derive(Debug)]
#[repr(C)]
pub struct ConcurrentHistogram<S: ?Sized = [AtomicBin]> {
    closure: Closure,
    /// Bins per shard (B ≥ 1); the storage holds `bins · shards` of them.
    bins: usize,
    /// Shards (S ≥ 1).
    shards: usize,
    storage: S,
}

/// The storage of a [`ConcurrentHistogram`]: bins, shard after shard. Implemented for
/// `[AtomicBin]`, `&[AtomicBin]`, `[AtomicBin; B]` and `[[AtomicBin; B]; S]`; sealed.
pub trait BinStorage: sealed::Sealed {
    /// Every bin of every shard, shard after shard.
    fn all_bins(&self) -> &[AtomicBin];
}

mod sealed {
    pub trait Sealed {}
}

impl sealed::Sealed for [AtomicBin] {}
impl BinStorage for [AtomicBin] {
    #[inline]
    fn all_bins(&self) -> &[AtomicBin] {
        self
    }
}
impl sealed::Sealed for &[AtomicBin] {}
impl BinStorage for &[AtomicBin] {
    #[inline]
    fn all_bins(&self) -> &[AtomicBin] {
        self
    }
}
#[cfg(feature = "std")]
impl sealed::Sealed for Box<[AtomicBin]> {}
#[cfg(feature = "std")]
impl BinStorage for Box<[AtomicBin]> {
    #[inline]
    fn all_bins(&self) -> &[AtomicBin] {
        self
    }
}
impl<const B: usize> sealed::Sealed for [AtomicBin; B] {}
impl<const B: usize> BinStorage for [AtomicBin; B] {
    #[inline]
    fn all_bins(&self) -> &[AtomicBin] {
        self
    }
}
impl<const B: usize, const S: usize> sealed::Sealed for [[AtomicBin; B]; S] {}
impl<const B: usize, const S: usize> BinStorage for [[AtomicBin; B]; S] {
    #[inline]
    fn all_bins(&self) -> &[AtomicBin] {
        self.as_flattened()
    }
}

/// Storage held inline in a [`ConcurrentHistogram`]: `[AtomicBin; B]` (one shard of B
/// bins) or `[[AtomicBin; B]; S]` (S shards of B bins); sealed.
pub trait InlineStorage: BinStorage + Sized {
    /// Bins per shard (B) and shards (S); a compile-time error if either is 0.
    const SHAPE: (usize, usize);
    /// Every bin empty.
    const EMPTY: Self;
}

#[allow(clippy::declare_interior_mutable_const)] // used only as initialisers
impl<const B: usize> InlineStorage for [AtomicBin; B] {
    const SHAPE: (usize, usize) = {
        assert!(B > 0, "a histogram needs at least one bin");
        (B, 1)
    };
    const EMPTY: Self = [AtomicBin::EMPTY; B];
}

#[allow(clippy::declare_interior_mutable_const)] // used only as initialisers
impl<const B: usize, const S: usize> InlineStorage for [[AtomicBin; B]; S] {
    const SHAPE: (usize, usize) = {
        assert!(B > 0, "a histogram needs at least one bin");
        assert!(S > 0, "a histogram needs at least one shard");
        (B, S)
    };
    const EMPTY: Self = [const { [AtomicBin::EMPTY; B] }; S];
}

impl<T: InlineStorage> ConcurrentHistogram<T> {
    /// An empty histogram stored inline: `[AtomicBin; B]` is one shard of `B` bins,
    /// `[[AtomicBin; B]; S]` is `S` shards. `const`, so it can be a `static` shared by
    /// every thread.
    ///
    /// ```
    /// use tce::{AtomicBin, Closure, ConcurrentHistogram};
    /// static SHARED: ConcurrentHistogram<[[AtomicBin; 15]; 4]> = ConcurrentHistogram::new(Closure::Left);
    /// SHARED.push_to(2, 0.9, 1).unwrap();
    /// assert_eq!((SHARED.bin_count(), SHARED.shard_count()), (15, 4));
    /// ```
    ///
    /// No bins or no shards is a compile-time error:
    ///
    /// ```compile_fail
    /// use tce::{AtomicBin, Closure, ConcurrentHistogram};
    /// let h = ConcurrentHistogram::<[[AtomicBin; 15]; 0]>::new(Closure::Left);
    /// ```
    pub const fn new(closure: Closure) -> Self {
        let (bins, shards) = T::SHAPE;
        ConcurrentHistogram {
            closure,
            bins,
            shards,
            storage: T::EMPTY,
        }
    }
}

/// The one check of a concurrent histogram's shape: `bins` per shard over `storage`
/// bins in all. On error the storage is untouched.
fn check_shape(storage: usize, bins: usize) -> Result<(), ConfigError> {
    crate::binning::check_bin_count(bins)?;
    if storage == 0 {
        return Err(ConfigError::ZeroBins);
    }
    if storage % bins != 0 {
        return Err(ConfigError::ShardMismatch { storage, bins });
    }
    Ok(())
}

/// A concurrent histogram that owns its bins on the heap (shape chosen at run time).
#[cfg(feature = "std")]
pub type BoxedConcurrentHistogram = ConcurrentHistogram<Box<[AtomicBin]>>;

#[cfg(feature = "std")]
impl ConcurrentHistogram<Box<[AtomicBin]>> {
    /// An empty histogram of `bins` bins per shard over storage it owns (cleared here),
    /// `storage.len() / bins` shards; errors as [`ConcurrentHistogram::with_storage`].
    pub fn with_boxed_storage(
        storage: Box<[AtomicBin]>,
        bins: usize,
        closure: Closure,
    ) -> Result<Self, ConfigError> {
        check_shape(storage.len(), bins)?;
        storage.iter().for_each(AtomicBin::reset);
        Ok(ConcurrentHistogram {
            closure,
            bins,
            shards: storage.len() / bins,
            storage,
        })
    }
}

impl<'a> ConcurrentHistogram<&'a [AtomicBin]> {
    /// An empty histogram of `bins` bins per shard over caller-owned storage (cleared
    /// here), which holds `storage.len() / bins` shards, shard after shard.
    ///
    /// Errors: [`ConfigError::ZeroBins`] if `bins` is 0 or the storage empty;
    /// [`ConfigError::TooManyBins`] if `bins` is above [`crate::MAX_BINS`];
    /// [`ConfigError::ShardMismatch`] if `storage.len()` is not a multiple of `bins`.
    /// On error the storage is untouched.
    pub fn with_storage(
        storage: &'a [AtomicBin],
        bins: usize,
        closure: Closure,
    ) -> Result<Self, ConfigError> {
        check_shape(storage.len(), bins)?;
        storage.iter().for_each(AtomicBin::reset);
        Ok(ConcurrentHistogram {
            closure,
            bins,
            shards: storage.len() / bins,
            storage,
        })
    }
}

#[cfg(feature = "ffi")]
impl ConcurrentHistogram<[AtomicBin]> {
    /// Empties the histogram and sets its closure and its shape (`bins` per shard, which
    /// divides the storage length: checked by the caller). For the C ABI
    /// (`src/ffi/concurrent.rs`), which lays this view over caller memory it has zeroed
    /// before any thread can see it.
    pub(crate) fn reinitialise(&mut self, closure: Closure, bins: usize) {
        debug_assert!(bins > 0 && self.storage.len() % bins == 0);
        self.closure = closure;
        self.bins = bins;
        self.shards = self.storage.len() / bins;
        self.reset();
    }

    /// Whether the shape fields describe the storage (a forged or corrupted state may
    /// not): `bins · shards` equals the storage length, neither 0.
    pub(crate) fn shape_is_valid(&self) -> bool {
        self.bins > 0
            && self.shards > 0
            && self.bins.checked_mul(self.shards) == Some(self.storage.len())
    }
}

impl<S: BinStorage + ?Sized> ConcurrentHistogram<S> {
    /// Records a checked sample into shard `shard` taken modulo the shard count.
    #[inline]
    fn record(&self, shard: usize, score: f64, label: u8) {
        let shard = if shard < self.shards {
            shard
        } else {
            shard % self.shards
        };
        let k = self.closure.bin_index(score, self.bins);
        self.storage.all_bins()[shard * self.bins + k].record(score, label);
    }

    /// Records one sample into shard 0; callable from many threads at once. Threads
    /// that push often should each use their own shard ([`Self::push_to`]).
    #[inline]
    pub fn push(&self, score: f64, label: u8) -> Result<(), PushError> {
        self.push_to(0, score, label)
    }

    /// Records one sample into shard `shard` (taken modulo the shard count, so any
    /// index is valid, e.g. a thread number); callable from many threads at once.
    #[inline]
    pub fn push_to(&self, shard: usize, score: f64, label: u8) -> Result<(), PushError> {
        sample::check(score, label, 0)?;
        self.record(shard, score, label);
        Ok(())
    }

    /// Records a batch into shard 0: all of it, or (when any element is bad) none of it.
    pub fn push_batch(&self, scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
        self.push_batch_to(0, scores, labels)
    }

    /// Records a batch into shard `shard` (modulo the shard count): all of it, or (when
    /// any element is bad) none of it.
    pub fn push_batch_to(
        &self,
        shard: usize,
        scores: &[f64],
        labels: &[u8],
    ) -> Result<(), PushError> {
        sample::check_batch(scores, labels)?;
        for (&score, &label) in scores.iter().zip(labels) {
            self.record(shard, score, label);
        }
        Ok(())
    }

    /// Copies the current counts, summed over the shards (exactly), into `into` (same
    /// bin count and closure), replacing its contents; the estimators then read that
    /// histogram.
    ///
    /// Errors: [`MergeError::BinCountMismatch`], [`MergeError::ClosureMismatch`], and
    /// [`MergeError::CountOverflow`] when the shards hold more than [`crate::MAX_COUNT`]
    /// samples in all; `into` is unchanged then.
    ///
    /// Pushes are not bounded one by one (a shared check would serialise the threads
    /// that shards keep apart), and need not be: a count grows only by one push at a
    /// time, so reaching 2^63 takes 2^63 pushes, about 292 years at one a nanosecond,
    /// and the `u64` counters cannot wrap before 2^64. The bound is checked here, where
    /// shards are summed: first over all counters, before `into` changes; then again as
    /// they are copied, in case pushes during the snapshot crossed it — only possible
    /// within nanoseconds of the 2^63rd push, and then `into` is left empty.
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
        self.storage
            .all_bins()
            .iter()
            .try_fold(0, |total, bin| add_counts(total, bin.count.load(Relaxed)))?;
        let closure = into.closure();
        into.overwrite(closure, |slots| {
            for shard in self.storage.all_bins().chunks_exact(self.bins) {
                for (slot, bin) in slots.iter_mut().zip(shard) {
                    slot.merge(&bin.snapshot())?;
                }
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Adds a histogram's samples (a decoded device state, say) into shard `shard`
    /// (modulo the shard count); callable while other threads push. Exact, like
    /// [`Histogram::merge`]: a later snapshot equals the merge of the histograms.
    ///
    /// Errors, with nothing added: [`MergeError::BinCountMismatch`],
    /// [`MergeError::ClosureMismatch`], and [`MergeError::CountOverflow`] when this
    /// histogram's samples (as counted now) plus the other's would pass
    /// [`crate::MAX_COUNT`] (unlike one push, one merge can add up to 2^63 samples).
    pub fn merge_histogram<T: AsRef<[BinStats]> + ?Sized>(
        &self,
        shard: usize,
        other: &Histogram<T>,
    ) -> Result<(), MergeError> {
        let (left, right) = (self.bin_count(), other.bin_count());
        if left != right {
            return Err(MergeError::BinCountMismatch { left, right });
        }
        if other.closure() != self.closure {
            return Err(MergeError::ClosureMismatch);
        }
        let held = self
            .storage
            .all_bins()
            .iter()
            .try_fold(0, |total, bin| add_counts(total, bin.count.load(Relaxed)))?;
        add_counts(held, other.samples())?;
        let shard = shard % self.shards;
        let bins = &self.storage.all_bins()[shard * self.bins..(shard + 1) * self.bins];
        for (bin, stats) in bins.iter().zip(other.bins()) {
            bin.add(stats);
        }
        Ok(())
    }

    /// Forgets every sample, in every shard. Pushes racing with a reset may be partly
    /// kept.
    pub fn reset(&self) {
        self.storage.all_bins().iter().for_each(AtomicBin::reset);
    }

    /// The number of bins B (of each shard, and of a snapshot).
    pub fn bin_count(&self) -> usize {
        self.bins
    }

    /// The number of shards S.
    pub fn shard_count(&self) -> usize {
        self.shards
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::InlineHistogram;

    /// Scores from a xorshift, with the edges and a few repeats mixed in.
    fn stream(n: usize, seed: u64) -> (Vec<f64>, Vec<u8>) {
        let mut state = seed | 1;
        (0..n)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let score = match i % 11 {
                    0 => 0.0,
                    1 => 1.0,
                    _ => (state >> 11) as f64 / (1u64 << 53) as f64,
                };
                (score, (state >> 3) as u8 & 1)
            })
            .unzip()
    }

    #[test]
    fn pushes_into_different_shards_equal_the_same_pushes_into_one() {
        for seed in 1..40u64 {
            let (scores, labels) = stream(300 + seed as usize * 7, seed);
            for closure in [Closure::Left, Closure::Right] {
                let one = ConcurrentHistogram::<[AtomicBin; 7]>::new(closure);
                let striped = ConcurrentHistogram::<[[AtomicBin; 7]; 5]>::new(closure);
                let storage: [AtomicBin; 21] = [AtomicBin::EMPTY; 21];
                let sliced = ConcurrentHistogram::with_storage(&storage, 7, closure).unwrap();
                assert_eq!((sliced.shard_count(), striped.shard_count()), (3, 5));
                for (i, (s, l)) in scores.chunks(13).zip(labels.chunks(13)).enumerate() {
                    let shard = (seed as usize * 31 + i * 7) % 11; // also ≥ S: modulo
                    one.push_batch(s, l).unwrap();
                    if i % 2 == 0 {
                        striped.push_batch_to(shard, s, l).unwrap();
                        sliced.push_batch_to(shard, s, l).unwrap();
                    } else {
                        for (k, (&s, &l)) in s.iter().zip(l).enumerate() {
                            striped.push_to(shard + k, s, l).unwrap();
                            sliced.push_to(shard + k, s, l).unwrap();
                        }
                    }
                }
                let mut sequential = InlineHistogram::<7>::new(closure);
                sequential.push_batch(&scores, &labels).unwrap();
                let mut snapshot = InlineHistogram::<7>::new(closure);
                one.snapshot_into(&mut snapshot).unwrap();
                assert_eq!(snapshot, sequential);
                striped.snapshot_into(&mut snapshot).unwrap();
                assert_eq!(snapshot, sequential, "seed {seed}: striped differs");
                sliced.snapshot_into(&mut snapshot).unwrap();
                assert_eq!(snapshot, sequential, "seed {seed}: sliced differs");
                striped.reset();
                striped.snapshot_into(&mut snapshot).unwrap();
                assert_eq!(snapshot.samples(), 0);
            }
        }
    }

    #[test]
    fn storage_must_be_whole_shards() {
        let storage: [AtomicBin; 10] = [AtomicBin::EMPTY; 10];
        assert_eq!(
            ConcurrentHistogram::with_storage(&storage, 4, Closure::Left).unwrap_err(),
            ConfigError::ShardMismatch {
                storage: 10,
                bins: 4
            }
        );
        assert_eq!(
            ConcurrentHistogram::with_storage(&storage, 0, Closure::Left).unwrap_err(),
            ConfigError::ZeroBins
        );
        assert_eq!(
            ConcurrentHistogram::with_storage(&storage[..0], 1, Closure::Left).unwrap_err(),
            ConfigError::ZeroBins
        );
        let h = ConcurrentHistogram::with_storage(&storage, 5, Closure::Left).unwrap();
        assert_eq!((h.bin_count(), h.shard_count()), (5, 2));
    }

    #[test]
    fn a_snapshot_whose_shards_sum_past_the_bound_is_refused() {
        // 2^63 pushes cannot be made in a test: set the counters (all misses at score 0,
        // valid bins) as if they had been.
        let h = ConcurrentHistogram::<[[AtomicBin; 3]; 2]>::new(Closure::Left);
        let bins = h.storage.all_bins();
        bins[0].count.store(1 << 62, Relaxed);
        bins[3].count.store((1 << 62) - 1, Relaxed); // bin 0 of shard 1
        let mut into = InlineHistogram::<3>::new(Closure::Left);
        into.push_batch(&[0.1, 0.5, 0.9], &[1, 0, 1]).unwrap();
        let before = into.clone();
        h.snapshot_into(&mut into).unwrap();
        assert_eq!(into.samples(), crate::MAX_COUNT);
        assert_eq!(into.bins()[0].count(), crate::MAX_COUNT);
        // One more push, in any shard, passes the bound.
        h.push_to(1, 0.9, 1).unwrap();
        let mut into = before.clone();
        assert_eq!(h.snapshot_into(&mut into), Err(MergeError::CountOverflow));
        assert_eq!(into, before);
    }
}
