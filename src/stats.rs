//! Per-bin sufficient statistics: the one representation every estimator reads.
//!
//! Scores are summed in 64.64 fixed point (`u128`, units of 2^-64) rather than in `f64`,
//! so a sum does not depend on the order of the additions: merging two histograms gives
//! bit for bit the state of pushing both streams into one, and every estimate is
//! invariant to input order.
//!
//! Error: a score ≥ 2^-12 converts exactly (its lowest mantissa bit is ≥ 2^-64); a
//! smaller one is truncated by less than 2^-64 ≈ 5.4e-20. A bin's mean score is then
//! rounded twice (the sum to `f64`, the division by the count): relative error ≤ 2^-52.
//! A `u128` sum of scores ≤ 1 cannot overflow before 2^63 samples.

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
    pub const EMPTY: BinStats = BinStats { count: 0, hits: 0, score_sum: 0 };

    /// Records one sample. The caller has validated it (score in [0, 1], label 0 or 1).
    #[inline]
    pub(crate) fn record(&mut self, score: f64, label: u8) {
        self.count += 1;
        self.hits += u64::from(label);
        self.score_sum += to_fixed(score);
    }

    /// Adds another bin's statistics: exact, so merging is associative and commutative.
    #[inline]
    pub(crate) fn merge(&mut self, other: &BinStats) {
        self.count += other.count;
        self.hits += other.hits;
        self.score_sum += other.score_sum;
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
        (self.count > 0).then(|| self.score_sum as f64 / SCALE / self.count as f64)
    }

    /// Accuracy ȳ_k (the mean label), or `None` for an empty bin.
    pub fn accuracy(&self) -> Option<f64> {
        (self.count > 0).then(|| self.hits as f64 / self.count as f64)
    }
}

/// Converts a score in [0, 1] to 64.64 fixed point by its bits (exact, and faster than a
/// float-to-`u128` cast, which is a library call on most targets).
#[inline]
fn to_fixed(score: f64) -> u128 {
    let bits = score.to_bits();
    let biased_exponent = ((bits >> 52) & 0x7ff) as i32;
    if biased_exponent == 0 {
        return 0; // ±0 and subnormals (< 2^-1022): below the resolution.
    }
    let mantissa = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    // score = mantissa · 2^(e − 1075), so score · 2^64 = mantissa · 2^(e − 1011).
    let shift = biased_exponent - 1011;
    if shift >= 0 {
        mantissa << shift
    } else if shift > -64 {
        mantissa >> -shift
    } else {
        0
    }
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
        assert_eq!(to_fixed(f64::powi(2.0, -64)), 1);
        assert_eq!(to_fixed(f64::powi(2.0, -65)), 0);
        for &x in &[0.955, 0.227, 0.1, 1e-3, 0.999_999_999] {
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
