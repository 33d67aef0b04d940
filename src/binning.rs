//! How samples are assigned to bins (SPEC §3.1 and §3.2).

use crate::error::ConfigError;
use crate::floor::floor_nonnegative;
use crate::MAX_BINS;

/// The one check of the number of bins a state is built with: at least 1
/// ([`ConfigError::ZeroBins`]) and at most [`MAX_BINS`] ([`ConfigError::TooManyBins`]).
/// Public so that a host allocating a state's storage can check first.
pub fn check_bin_count(bins: usize) -> Result<(), ConfigError> {
    match bins {
        0 => Err(ConfigError::ZeroBins),
        bins if bins > MAX_BINS => Err(ConfigError::TooManyBins {
            bins,
            max: MAX_BINS,
        }),
        _ => Ok(()),
    }
}

/// Which side of an equal-width bin is closed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Closure {
    /// Bin k covers [k/B, (k+1)/B), and a score of exactly 1.0 goes to bin B−1. The
    /// paper's convention and the default: index = min(B−1, floor(f·B)).
    #[default]
    Left,
    /// Bin k covers (k/B, (k+1)/B], and a score of exactly 0 goes to bin 0: the
    /// convention of Guo et al. 2017, scikit-learn and Kumar et al.:
    /// index = max(0, ceil(f·B) − 1).
    Right,
}

/// How equal-mass binning treats equal scores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ties {
    /// Rank splitting: sorted position j goes to bin floor(j·B/n), with equal scores in
    /// arrival order (a stable sort), so a group of equal scores may straddle a bin edge.
    /// Bin sizes are exactly ⌊n/B⌋ or ⌈n/B⌉. The default, as in the paper.
    #[default]
    Split,
    /// Equal scores always share a bin: an edge that would fall inside a group of equal
    /// scores moves to the end of the group. Bins may then be unequal or empty (a group
    /// of 1.0 scores larger than n/B swallows the bins after it).
    Keep,
}

/// A binning scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binning {
    /// B equal-width bins on [0, 1].
    EqualWidth(Closure),
    /// B bins of (nearly) equal count over the sorted scores.
    EqualMass(Ties),
}

impl Binning {
    /// Equal-width bins closed on the left (the paper's convention).
    pub const EQUAL_WIDTH: Binning = Binning::EqualWidth(Closure::Left);
    /// Equal-mass bins with ties split in arrival order (the paper's convention).
    pub const EQUAL_MASS: Binning = Binning::EqualMass(Ties::Split);
}

impl Closure {
    /// The equal-width bin of `score` (in [0, 1]) among `bins` (≥ 1), computed in `f64`
    /// by one rule shared by ECE_bin and the sweep.
    #[inline]
    pub fn bin_index(self, score: f64, bins: usize) -> usize {
        match self {
            Closure::Left => left_closed_index(score, bins),
            Closure::Right => right_closed_index(score, bins),
        }
    }
}

/// min(B−1, floor(f·B)), branch-free: scores pile up in the top bin, so a branch on the
/// clamp would be mispredicted often. The clamp is a float `min` (one instruction).
#[inline]
pub(crate) fn left_closed_index(score: f64, bins: usize) -> usize {
    // bins ≥ 1 (every state and estimate checks its bin count); 0 would give index 0,
    // which callers look up with `get`, never past the bins.
    let (x, top) = (score * bins as f64, bins.saturating_sub(1) as f64);
    floor_nonnegative(if x < top { x } else { top }) as usize
}

/// max(0, ceil(f·B) − 1), branch-free. ceil(x) is floor(x) + 1 unless x is whole, and
/// x ≤ B keeps the result ≤ B − 1; only x = 0 would give −1. The arithmetic wraps so that
/// an invalid score (binned before the verdict on its batch) gives a meaningless index,
/// never an overflow.
#[inline]
pub(crate) fn right_closed_index(score: f64, bins: usize) -> usize {
    let x = score * bins as f64;
    let floor = floor_nonnegative(x);
    // Through i64: converting a u64 to f64 takes several instructions on x86-64.
    let ceil = floor.wrapping_add(u64::from(floor as i64 as f64 != x));
    ceil.wrapping_sub(u64::from(ceil != 0)) as usize
}

/// Lower and upper edge of equal-width bin `k` of `bins`.
pub fn equal_width_edges(k: usize, bins: usize) -> (f64, f64) {
    // In f64: k + 1 is exact (k < 2^53) and cannot overflow.
    (k as f64 / bins as f64, (k as f64 + 1.0) / bins as f64)
}

/// The scores equal-width bin `k` of `bins` can hold under either closure, [k/B, (k+1)/B],
/// widened by 2^-50 on each side for the rounding of f·B in the bin index (and kept
/// within [0, 1]): a decoded bin whose mean score lies outside was not recorded from
/// real samples.
pub(crate) fn equal_width_score_bounds(k: usize, bins: usize) -> (f64, f64) {
    const ROUNDING: f64 = 1.0 / (1u64 << 50) as f64;
    let (lo, hi) = equal_width_edges(k, bins);
    ((lo - ROUNDING).max(0.0), (hi + ROUNDING).min(1.0))
}

/// The first sorted positions of the equal-mass bins 0..=B (the last is n): position
/// ceil(k·n/B) for bin k, which is where floor(j·B/n) first reaches k. Computed with an
/// exact running quotient and remainder: no overflow, no division per bin.
#[derive(Clone, Debug)]
pub(crate) struct EqualMassStarts {
    bins: usize,
    /// n / bins and n % bins: what each step adds to the quotient and the remainder.
    step_quotient: usize,
    step_remainder: usize,
    quotient: usize,
    remainder: usize,
    k: usize,
}

impl EqualMassStarts {
    /// The starts for `n` samples in `bins` ≥ 1 bins (every caller has checked its bin
    /// count). With 0 bins, which no caller asks for, it yields the one start 0.
    pub(crate) fn new(n: usize, bins: usize) -> Self {
        debug_assert!(bins > 0);
        EqualMassStarts {
            bins,
            step_quotient: n.checked_div(bins).unwrap_or(0),
            step_remainder: n.checked_rem(bins).unwrap_or(0),
            quotient: 0,
            remainder: 0,
            k: 0,
        }
    }
}

impl Iterator for EqualMassStarts {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.k > self.bins {
            return None;
        }
        // Invariant: k·n = quotient·bins + remainder, remainder < bins, k ≤ bins here.
        // None of the additions wraps: quotient = ⌊k·n/bins⌋ ≤ n, and after this step
        // ≤ 2n; remainder + step_remainder < 2·bins; k + 1 ≤ bins + 1; and n (samples
        // held in memory, 16 bytes each) and bins (≤ MAX_BINS or ≤ n) are far below
        // usize::MAX / 2. `wrapping_` says so to the compiler (no overflow check).
        let start = self.quotient.wrapping_add(usize::from(self.remainder > 0));
        self.k = self.k.wrapping_add(1);
        self.quotient = self.quotient.wrapping_add(self.step_quotient);
        self.remainder = self.remainder.wrapping_add(self.step_remainder);
        if self.remainder >= self.bins {
            self.quotient = self.quotient.wrapping_add(1);
            // No underflow: just compared.
            self.remainder = self.remainder.wrapping_sub(self.bins);
        }
        Some(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_width_edges_follow_the_spec() {
        // SPEC §3.1: f = 0.6, B = 5 → bin 3 by floor (left closure).
        assert_eq!(Closure::Left.bin_index(0.6, 5), 3);
        assert_eq!(Closure::Left.bin_index(1.0, 5), 4);
        assert_eq!(Closure::Left.bin_index(0.0, 5), 0);
        assert_eq!(Closure::Left.bin_index(0.199, 5), 0);
        assert_eq!(Closure::Left.bin_index(0.5, 2), 1);
        assert_eq!(Closure::Right.bin_index(0.5, 2), 0);
        assert_eq!(Closure::Right.bin_index(0.0, 5), 0);
        assert_eq!(Closure::Right.bin_index(1.0, 5), 4);
        assert_eq!(Closure::Right.bin_index(0.6, 5), 2);
        assert_eq!(Closure::Right.bin_index(0.61, 5), 3);
        assert_eq!(Closure::Left.bin_index(0.3, 1), 0);
    }

    #[test]
    fn equal_mass_starts_are_exact() {
        // SPEC §3.2: n = 3, B = 5 → sizes 1, 1, 0, 1, 0.
        let starts: [usize; 6] = core::array::from_fn({
            let mut it = EqualMassStarts::new(3, 5);
            move |_| it.next().unwrap()
        });
        assert_eq!(starts, [0, 1, 2, 2, 3, 3]);
        let mut it = EqualMassStarts::new(20, 15);
        let mut previous = it.next().unwrap();
        let mut sizes = [0usize; 15];
        for size in sizes.iter_mut() {
            let start = it.next().unwrap();
            *size = start - previous;
            previous = start;
        }
        assert_eq!(previous, 20);
        assert!(it.next().is_none());
        assert!(sizes.iter().all(|&s| s == 1 || s == 2));
        // floor(j·15/20) reaches k at ceil(k·20/15).
        for j in 0..20usize {
            let k = j * 15 / 20;
            let start = (k * 20).div_ceil(15);
            let end = ((k + 1) * 20).div_ceil(15);
            assert!(start <= j && j < end);
        }
    }
}
