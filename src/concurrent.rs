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
//! **The count bound.** Like every state, the histogram never holds more than
//! [`crate::MAX_COUNT`] samples: a push, batch or merge that would pass it is refused
//! with nothing recorded, also while other threads push. Each sample is *reserved*
//! before it is recorded, so racing updates cannot pass the bound together: the
//! reservations come from a shared budget of `MAX_COUNT` samples, which a push takes in
//! leases of [`LEASE`] samples at a time into a per-shard slot on its own cache line. A
//! push then reserves by one compare-exchange on its shard's lease (a line only that
//! shard's threads write), and touches the shared budget once per [`LEASE`] pushes. Near
//! the bound no lease is handed out, and a reservation that the budget cannot meet first
//! takes back every idle lease: a refusal means the samples recorded plus those reserved
//! by updates in flight leave no room, whatever the shards. A reset gives the samples it
//! clears back to the budget.
//!
//! Only on targets with 64-bit atomics (`target_has_atomic = "64"`).

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::binning::{equal_width_edges, Closure};
use crate::error::{ConfigError, MergeError, PushError};
use crate::histogram::Histogram;
use crate::limits::{add_counts, CountOverflow};
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

    /// Empties the bin; returns the count it held, for the budget.
    fn reset(&self) -> u64 {
        for word in [&self.hits, &self.sum_low, &self.sum_high] {
            word.store(0, Relaxed);
        }
        self.count.swap(0, Relaxed)
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

/// Samples a push takes from the shared budget at a time into its shard's lease: one
/// shared compare-exchange per `LEASE` pushes of a shard.
pub const LEASE: u64 = 1 << 16;

/// Lease slots; shard `s` uses slot `s % LEASES`, so up to this many threads pushing
/// into their own shards never write the same line.
const LEASES: usize = 16;

/// Below this many free samples no lease is handed out, so that every reservation near
/// the bound is exact (leases park at most `LEASES · LEASE` = 2^20 samples).
const ENDGAME: u64 = 1 << 32;

/// One shard's lease: samples reserved for its pushes, alone on a 64-byte line (its
/// word and the next lease's are 64 bytes apart).
#[derive(Debug)]
#[repr(C)]
struct Lease {
    left: AtomicU64,
    _line: [u64; 7],
}

impl Lease {
    #[allow(clippy::declare_interior_mutable_const)] // used only as an initialiser
    const EMPTY: Lease = Lease {
        left: AtomicU64::new(0),
        _line: [0; 7],
    };
}

/// The admission of samples up to [`crate::MAX_COUNT`] (see the module docs). At all
/// times `free` + the leases + the samples recorded + those reserved by updates in
/// flight = `MAX_COUNT`.
#[derive(Debug)]
#[repr(C)]
struct Budget {
    /// Samples neither recorded nor reserved.
    free: AtomicU64,
    /// Keeps the leases off `free`'s line.
    _line: [u64; 7],
    leases: [Lease; LEASES],
    /// Keeps the last lease off the first bins' line.
    _tail: [u64; 8],
}

impl Budget {
    #[allow(clippy::declare_interior_mutable_const)] // used only as an initialiser
    const FULL: Budget = Budget {
        free: AtomicU64::new(crate::MAX_COUNT),
        _line: [0; 7],
        leases: [const { Lease::EMPTY }; LEASES],
        _tail: [0; 8],
    };

    /// Reserves `n` samples for shard `shard`, or refuses with nothing reserved.
    #[inline]
    fn reserve(&self, shard: usize, n: u64) -> Result<(), CountOverflow> {
        let lease = &self.leases[shard % LEASES].left;
        let mut left = lease.load(Relaxed);
        while let Some(rest) = left.checked_sub(n) {
            match lease.compare_exchange_weak(left, rest, Relaxed, Relaxed) {
                Ok(_) => return Ok(()),
                Err(now) => left = now,
            }
        }
        self.reserve_from_free(lease, n)
    }

    /// [`Self::reserve`] once the lease is short: `n` from the free samples, with a new
    /// lease while they are plenty; when they are short, every idle lease is taken back
    /// first, so that a refusal is exact.
    #[cold]
    fn reserve_from_free(&self, lease: &AtomicU64, n: u64) -> Result<(), CountOverflow> {
        for attempt in 0..2 {
            let taken = self.free.fetch_update(Relaxed, Relaxed, |free| {
                split(free, n).map(|(rest, _)| rest)
            });
            match taken {
                Ok(free) => {
                    if let Some((_, extra @ 1..)) = split(free, n) {
                        lease.fetch_add(extra, Relaxed);
                    }
                    return Ok(());
                }
                Err(_) if attempt == 0 => self.take_back_leases(),
                Err(_) => {}
            }
        }
        Err(CountOverflow)
    }

    /// Returns every lease's unused samples to the free ones.
    fn take_back_leases(&self) {
        let idle = self
            .leases
            .iter()
            .fold(0u64, |sum, l| sum.saturating_add(l.left.swap(0, Relaxed)));
        self.give_back(idle);
    }

    /// Returns `n` samples (cleared or taken back) to the free ones.
    fn give_back(&self, n: u64) {
        if n > 0 {
            // Never past the bound, even for a forged state.
            let _ = self.free.fetch_update(Relaxed, Relaxed, |free| {
                Some(free.saturating_add(n).min(crate::MAX_COUNT))
            });
        }
    }
}

/// What a reservation of `n` out of `free` samples leaves free, and the lease it hands
/// out beside (none near the bound); `None` if `n` is more than `free`.
fn split(free: u64, n: u64) -> Option<(u64, u64)> {
    let rest = free.checked_sub(n)?;
    let lease = if rest >= ENDGAME { LEASE } else { 0 };
    Some((rest.saturating_sub(lease), lease))
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
    /// The reservations that keep the total within [`crate::MAX_COUNT`].
    budget: Budget,
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
            budget: Budget::FULL,
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
        storage.iter().for_each(|bin| {
            bin.reset();
        });
        Ok(ConcurrentHistogram {
            closure,
            bins,
            shards: storage.len() / bins,
            budget: Budget::FULL,
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
        storage.iter().for_each(|bin| {
            bin.reset();
        });
        Ok(ConcurrentHistogram {
            closure,
            bins,
            shards: storage.len() / bins,
            budget: Budget::FULL,
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
        self.budget = Budget::FULL;
        self.storage.iter().for_each(|bin| {
            bin.reset();
        });
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
    /// `shard` taken modulo the shard count.
    #[inline]
    fn shard_index(&self, shard: usize) -> usize {
        if shard < self.shards {
            shard
        } else {
            shard % self.shards
        }
    }

    /// Records a checked, reserved sample into shard `shard` (< the shard count).
    #[inline]
    fn record(&self, shard: usize, score: f64, label: u8) {
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
    ///
    /// Errors: those of a bad sample, and [`PushError::CountOverflow`] when the
    /// histogram holds [`crate::MAX_COUNT`] samples (counting the updates in flight);
    /// nothing is recorded then.
    #[inline]
    pub fn push_to(&self, shard: usize, score: f64, label: u8) -> Result<(), PushError> {
        sample::check(score, label, 0)?;
        let shard = self.shard_index(shard);
        self.budget.reserve(shard, 1)?;
        self.record(shard, score, label);
        Ok(())
    }

    /// Records a batch into shard 0: all of it, or (when any element is bad) none of it.
    pub fn push_batch(&self, scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
        self.push_batch_to(0, scores, labels)
    }

    /// Records a batch into shard `shard` (modulo the shard count): all of it, or (when
    /// any element is bad, or when the batch would take the histogram past
    /// [`crate::MAX_COUNT`] samples: [`PushError::CountOverflow`]) none of it.
    pub fn push_batch_to(
        &self,
        shard: usize,
        scores: &[f64],
        labels: &[u8],
    ) -> Result<(), PushError> {
        sample::check_batch(scores, labels)?;
        let shard = self.shard_index(shard);
        self.budget
            .reserve(shard, crate::limits::batch_count(scores.len())?)?;
        for (&score, &label) in scores.iter().zip(labels) {
            self.record(shard, score, label);
        }
        Ok(())
    }

    /// Copies the current counts, summed over the shards (exactly), into `into` (same
    /// bin count and closure), replacing its contents; the estimators then read that
    /// histogram.
    ///
    /// Errors: [`MergeError::BinCountMismatch`], [`MergeError::ClosureMismatch`]; `into`
    /// is unchanged then.
    ///
    /// Updates are bounded by their reservations (module docs), so the shards never sum
    /// past [`crate::MAX_COUNT`]. The sum is checked all the same, for a state forged in
    /// C memory: [`MergeError::CountOverflow`], first over all counters before `into`
    /// changes, then again as they are copied (then `into` is left empty).
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
    /// histogram's samples (recorded and reserved by updates in flight) plus the other's
    /// would pass [`crate::MAX_COUNT`].
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
        let shard = self.shard_index(shard);
        self.budget.reserve(shard, other.samples())?;
        let bins = &self.storage.all_bins()[shard * self.bins..(shard + 1) * self.bins];
        for (bin, stats) in bins.iter().zip(other.bins()) {
            bin.add(stats);
        }
        Ok(())
    }

    /// Forgets every sample, in every shard, and gives their room back to the budget.
    /// Pushes racing with a reset may be partly kept (and stay counted).
    pub fn reset(&self) {
        let cleared = self
            .storage
            .all_bins()
            .iter()
            .fold(0u64, |sum, bin| sum.saturating_add(bin.reset()));
        self.budget.give_back(cleared);
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
        // Updates reserve first and cannot do this: counters set directly, as a state
        // forged in C memory could hold them (all misses at score 0, valid bins).
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
        // One more sample, in any shard, passes the bound.
        bins[5].count.store(1, Relaxed);
        let mut into = before.clone();
        assert_eq!(h.snapshot_into(&mut into), Err(MergeError::CountOverflow));
        assert_eq!(into, before);
    }

    /// A histogram of 3 bins holding `count` samples at score 0 (misses) in bin 0.
    fn holding(count: u64) -> InlineHistogram<3> {
        let mut h = InlineHistogram::<3>::new(Closure::Left);
        h.overwrite(Closure::Left, |bins| {
            bins[0] = BinStats::from_parts(count, 0, 0).ok_or(CountOverflow)?;
            Ok(())
        })
        .unwrap();
        h
    }

    fn samples_of(h: &ConcurrentHistogram<impl BinStorage + ?Sized>) -> u64 {
        let mut into = InlineHistogram::<3>::new(Closure::Left);
        h.snapshot_into(&mut into).unwrap();
        into.samples()
    }

    #[test]
    fn updates_past_the_bound_are_refused_and_change_nothing() {
        let h = ConcurrentHistogram::<[[AtomicBin; 3]; 4]>::new(Closure::Left);
        h.merge_histogram(2, &holding(crate::MAX_COUNT - 3))
            .unwrap();
        h.push_to(0, 0.5, 1).unwrap();
        // Two samples of room left: a batch of three is refused whole, in any shard.
        assert_eq!(
            h.push_batch_to(3, &[0.1, 0.2, 0.3], &[1, 0, 1]),
            Err(PushError::CountOverflow)
        );
        assert_eq!(samples_of(&h), crate::MAX_COUNT - 2);
        h.push_batch_to(1, &[0.1, 0.2], &[1, 0]).unwrap();
        assert_eq!(samples_of(&h), crate::MAX_COUNT);
        for shard in 0..6 {
            assert_eq!(h.push_to(shard, 0.9, 1), Err(PushError::CountOverflow));
        }
        assert_eq!(
            h.merge_histogram(0, &holding(1)),
            Err(MergeError::CountOverflow)
        );
        // Every read still works, and the counts are those accepted.
        let mut into = InlineHistogram::<3>::new(Closure::Left);
        h.snapshot_into(&mut into).unwrap();
        assert_eq!(into.samples(), crate::MAX_COUNT);
        assert_eq!(into.bins()[0].count(), crate::MAX_COUNT - 1); // with 0.1 and 0.2
        assert_eq!(into.bins()[1].count(), 1); // 0.5
                                               // A reset gives the room back.
        h.reset();
        assert_eq!(samples_of(&h), 0);
        h.merge_histogram(0, &holding(crate::MAX_COUNT)).unwrap();
        assert_eq!(h.push_to(1, 0.5, 0), Err(PushError::CountOverflow));
        h.reset();
        h.push_batch(&[0.5; 10], &[1; 10]).unwrap();
        assert_eq!(samples_of(&h), 10);
    }

    #[test]
    fn room_parked_in_other_shards_leases_is_taken_back_near_the_bound() {
        let h = ConcurrentHistogram::<[[AtomicBin; 3]; 4]>::new(Closure::Left);
        // Every shard takes a lease while the budget is plenty.
        for shard in 0..4 {
            h.push_to(shard, 0.5, 1).unwrap();
        }
        // Then a merge leaves exactly 3 samples of room, some of which sat in leases.
        h.merge_histogram(0, &holding(crate::MAX_COUNT - 7))
            .unwrap();
        for shard in [1, 2, 3] {
            h.push_to(shard, 0.5, 1).unwrap();
        }
        assert_eq!(h.push_to(0, 0.5, 1), Err(PushError::CountOverflow));
        assert_eq!(samples_of(&h), crate::MAX_COUNT);
    }

    #[test]
    fn racing_pushes_never_pass_the_bound() {
        let h = ConcurrentHistogram::<[[AtomicBin; 3]; 4]>::new(Closure::Left);
        let room = 3 * LEASE + 1234;
        h.merge_histogram(0, &holding(crate::MAX_COUNT - room))
            .unwrap();
        let accepted = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|scope| {
            for thread in 0..4 {
                let (h, accepted) = (&h, &accepted);
                scope.spawn(move || {
                    let mut refused = 0;
                    while refused < 100 {
                        if thread % 2 == 0 {
                            match h.push_to(thread, 0.7, 1) {
                                Ok(()) => accepted.fetch_add(1, Relaxed),
                                Err(_) => {
                                    refused += 1;
                                    0
                                }
                            };
                        } else {
                            match h.push_batch_to(thread, &[0.2; 7], &[0; 7]) {
                                Ok(()) => accepted.fetch_add(7, Relaxed),
                                Err(_) => {
                                    refused += 1;
                                    0
                                }
                            };
                        }
                    }
                });
            }
        });
        let accepted = accepted.into_inner();
        // Exactly the room was taken (the last batches of 7 may leave up to 6 unused).
        assert!(
            accepted <= room && room - accepted < 7,
            "{accepted} of {room}"
        );
        assert_eq!(samples_of(&h), crate::MAX_COUNT - room + accepted);
    }
}
