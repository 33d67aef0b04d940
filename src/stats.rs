//! Per-bin sufficient statistics: the one representation every estimator reads.
//!
//! Scores are summed in 64.64 fixed point (`u128`, units of 2^-64) rather than in `f64`,
//! so a sum does not depend on the order of the additions: merging two histograms gives
//! bit for bit the state of pushing both streams into one, and every estimate is
//! invariant to input order.
//!
//! Error: each score is truncated to a multiple of 2^-62 (the quantum) before it is
//! summed: a score ≥ 2^-10 is exact (its lowest mantissa bit is ≥ 2^-62), a smaller one
//! loses less than 2^-62 ≈ 2.2e-19. The sums of those quanta are exact. A bin's mean
//! score is then rounded twice (the sum to `f64`, the division by the count): relative
//! error ≤ 2^-52. A `u128` sum of scores ≤ 1 cannot overflow before 2^63 samples.
//!
//! Why 2^-62 and not 2^-64: a score times 2^62 is at most 2^62, so it converts into an
//! `i64` with one truncating instruction (see the `floor` module); 1.0 · 2^64 would not
//! fit. The histogram's batch push depends on that conversion being cheap.

use crate::floor::floor_nonnegative;
use crate::limits::{add_counts, CountOverflow};

/// The statistics of one bin: how many samples, how many of them were hits (label 1),
/// and the exact sum of their scores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct BinStats {
    count: u64,
    hits: u64,
    score_sum: u128,
}

/// 2^64 as an `f64`: the fixed-point scale.
const SCALE: f64 = 18_446_744_073_709_551_616.0;

impl BinStats {
    /// An empty bin.
    pub const EMPTY: BinStats = BinStats {
        count: 0,
        hits: 0,
        score_sum: 0,
    };

    /// Records one sample. The caller has validated it (score in [0, 1], label 0 or 1)
    /// and checked that the count stays within [`crate::MAX_COUNT`] (a histogram checks
    /// its total, which bounds every bin; a sorted buffer's bins hold at most
    /// `MAX_CAPACITY` < 2^31 samples), so none of the three sums can overflow.
    #[inline]
    pub(crate) fn record(&mut self, score: f64, label: u8) {
        // `wrapping_` for the compiler only: by the bound above nothing wraps.
        self.count = self.count.wrapping_add(1);
        self.hits = self.hits.wrapping_add(u64::from(label));
        self.score_sum = self.score_sum.wrapping_add(to_fixed(score));
    }

    /// Statistics of `count` samples with `hits` hits whose quantized scores
    /// ([`quantize`]) sum to `quanta`: how the histogram's batch lanes hand over.
    #[inline]
    pub(crate) fn from_quanta(count: u64, hits: u64, quanta: u128) -> BinStats {
        BinStats {
            count,
            hits,
            score_sum: quanta << QUANTUM_BITS,
        }
    }

    /// Adds another bin's statistics: exact, so merging is associative and commutative.
    /// Refused, and nothing changed, when the count would pass [`crate::MAX_COUNT`].
    #[inline]
    pub(crate) fn merge(&mut self, other: &BinStats) -> Result<(), CountOverflow> {
        let count = add_counts(self.count, other.count)?;
        // Both bins hold hits ≤ count and score_sum ≤ count · 2^64 (`from_parts` and
        // `record` keep that), so with the summed count ≤ 2^63 − 1 the hits stay below
        // 2^63 and the score sum below 2^127: neither addition can overflow.
        self.count = count;
        self.hits = self.hits.wrapping_add(other.hits);
        self.score_sum = self.score_sum.wrapping_add(other.score_sum);
        Ok(())
    }

    /// Rebuilds statistics from their parts (a snapshot or a decoded state), or `None`
    /// when they cannot describe real samples: more samples than [`crate::MAX_COUNT`],
    /// more hits than samples, or a score sum above one per sample.
    pub fn from_parts(count: u64, hits: u64, score_sum: u128) -> Option<BinStats> {
        let possible =
            count <= crate::MAX_COUNT && hits <= count && score_sum <= u128::from(count) << 64;
        possible.then_some(BinStats {
            count,
            hits,
            score_sum,
        })
    }

    /// The exact sum of the bin's scores, in units of 2^-64.
    pub fn score_sum(&self) -> u128 {
        self.score_sum
    }

    /// Number of samples in the bin, n_k.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Number of hits (label 1) in the bin.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Mean score f̄_k, or `None` for an empty bin.
    pub fn mean_score(&self) -> Option<f64> {
        (self.count > 0).then(|| fixed_to_f64(self.score_sum) / SCALE / self.count as f64)
    }

    /// Accuracy ȳ_k (the mean label), or `None` for an empty bin.
    pub fn accuracy(&self) -> Option<f64> {
        (self.count > 0).then(|| self.hits as f64 / self.count as f64)
    }
}

/// A fixed-point sum as `f64` (rounded once). Sums below 2^64 (a bin's worth of scores
/// under 1.0 in total) skip the slow software `u128` conversion.
#[inline]
fn fixed_to_f64(sum: u128) -> f64 {
    match u64::try_from(sum) {
        Ok(small) => small as f64,
        Err(_) => sum as f64,
    }
}

/// log2 of the quantum in units of 2^-64: scores are summed as multiples of 2^-62.
pub(crate) const QUANTUM_BITS: u32 = 2;

/// A score in [0, 1] as a whole number of quanta: floor(score · 2^62), at most 2^62.
/// Meaningless (but defined) for an invalid score: callers validate first.
#[inline(always)]
pub(crate) fn quantize(score: f64) -> u64 {
    const QUANTA_PER_UNIT: f64 = (1u64 << (64 - QUANTUM_BITS)) as f64;
    floor_nonnegative(score * QUANTA_PER_UNIT)
}

/// A score in [0, 1] in 64.64 fixed point: its quanta, in units of 2^-64.
#[inline]
pub(crate) fn to_fixed(score: f64) -> u128 {
    u128::from(quantize(score)) << QUANTUM_BITS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_is_exact_for_representable_scores() {
        assert_eq!(to_fixed(1.0), 1u128 << 64);
        assert_eq!(to_fixed(0.5), 1u128 << 63);
        assert_eq!(to_fixed(0.0), 0);
        assert_eq!(to_fixed(-0.0), 0);
        assert_eq!(to_fixed(0.75), 3u128 << 62);
        assert_eq!(to_fixed(f64::powi(2.0, -62)), 4);
        assert_eq!(to_fixed(f64::powi(2.0, -63)), 0);
        // Below 2^-10 the bits under 2^-62 are truncated.
        let tiny = f64::powi(2.0, -11) + f64::powi(2.0, -63);
        assert_eq!(to_fixed(tiny), 1u128 << 53);
        assert_eq!(quantize(1.0), 1 << 62);
        // The largest score below 1, 1 − 2^-53, is exact: 2^62 − 2^9 quanta.
        assert_eq!(
            quantize(f64::from_bits(1.0f64.to_bits() - 1)),
            (1 << 62) - (1 << 9)
        );
        for &x in &[
            0.955,
            0.227,
            0.1,
            1e-3,
            f64::powi(2.0, -10) * 1.3,
            0.999_999_999,
        ] {
            assert_eq!(to_fixed(x) as f64 / SCALE, x, "{x}");
        }
    }

    #[test]
    fn means_and_accuracy() {
        let mut b = BinStats::EMPTY;
        assert_eq!(b.mean_score(), None);
        assert_eq!(b.accuracy(), None);
        b.record(0.25, 1);
        b.record(0.75, 0);
        b.record(0.5, 1);
        assert_eq!(b.count(), 3);
        assert_eq!(b.hits(), 2);
        assert_eq!(b.mean_score(), Some(0.5));
        assert_eq!(b.accuracy(), Some(2.0 / 3.0));
    }
}
