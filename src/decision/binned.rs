//! What a histogram's bins allow: an interval of the binned calibration error with
//! guaranteed coverage, from the bins' counts, hits and score sums alone.
//!
//! A merged equal-width histogram (a fleet's device states, say) holds per bin k its
//! count n_k, hits h_k and mean score f̄_k, and nothing about single rows: no bootstrap
//! over rows can be run on it. What it does determine, given the rows' scores, is the
//! law of each bin's hits when the labels are independent given the scores: h_k is the
//! sum of n_k Bernoulli(p_i), p_i = E[Y | c_i], a Poisson-binomial of mean n_k p̄_k.
//!
//! # The interval
//!
//! The estimand is the group's **binned calibration error** over these bins, given its
//! scores: Φ(p̄) = (Σ_k (n_k/n) |p̄_k − f̄_k|^p)^(1/p) (the max over non-empty bins for
//! the MCE), the quantity ECE_bin and ECE_debias estimate.
//!
//! 1. Each non-empty bin gets the Clopper–Pearson interval of p̄_k at level
//!    `level^(1/B')` (B' non-empty bins; Šidák). Clopper–Pearson covers a binomial
//!    proportion with probability ≥ its level; it covers a Poisson-binomial's mean too,
//!    because its tails beyond the mean (by at least one) are at most the binomial's of
//!    the same mean (Hoeffding 1956, Theorem 4), and Clopper–Pearson's bounds only
//!    fail on such tails (an observed count below the binomial's median, or above it).
//! 2. Given the scores the bins' hits are independent, so all B' intervals hold at once
//!    with probability ≥ Π level^(1/B') = `level`.
//! 3. Φ grows with each |p̄_k − f̄_k|, so its least and greatest values over the box of
//!    intervals are reached bin by bin: the least puts p̄_k at the point of its interval
//!    nearest f̄_k, the greatest at the farthest end.
//!
//! So [lower, upper] covers Φ with probability ≥ `level`, for every n and every score
//! distribution, with no asymptotics (the price: it is wider than a bootstrap's). And
//! because the binned error never exceeds the sample TCE (Jensen, within each bin:
//! |mean(p − c)|^p ≤ mean|p − c|^p), `lower` is also a lower confidence bound for the
//! group's TCE over its scores; `upper` bounds only the binned error.

use crate::stats::BinStats;

/// Steps the continued fraction may take (it converges in about √(max(a, b)) + 10).
const MAX_STEPS: usize = 100_000;
/// Where a step's change counts as settled.
const EPSILON: f64 = 1e-15;
/// Bisection steps for a quantile: 2^-80 is far below an f64's resolution in (0, 1).
const BISECTIONS: usize = 80;

/// Why an interval over bins is undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinnedIntervalError {
    /// Every bin is empty.
    NoSamples,
    /// `level` is not in (0, 1).
    InvalidLevel,
    /// The norm exponent is not finite and at least 1.
    InvalidNorm,
}

impl core::fmt::Display for BinnedIntervalError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::NoSamples => "no samples: every bin is empty",
            Self::InvalidLevel => "the level must be in (0, 1)",
            Self::InvalidNorm => "the norm exponent must be finite and at least 1",
        })
    }
}

impl std::error::Error for BinnedIntervalError {}

/// A binned calibration error's interval: `lower` ≤ Φ ≤ `upper` with probability at
/// least `level` (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BinnedInterval {
    /// The least binned error over the box of per-bin intervals.
    pub lower: f64,
    /// The greatest binned error over the box.
    pub upper: f64,
    /// The per-bin Clopper–Pearson level, `level^(1/bins)`.
    pub bin_level: f64,
    /// The non-empty bins B'.
    pub bins: usize,
}

/// The interval of the binned calibration error over `bins` at `level`: the l_p error
/// for `Some(p)` (p ≥ 1: ECE_bin's and ECE_debias's estimand), the maximum over
/// non-empty bins (the MCE's) for `None`.
pub fn binned_interval(
    bins: &[BinStats],
    norm: Option<f64>,
    level: f64,
) -> Result<BinnedInterval, BinnedIntervalError> {
    if !(level > 0.0 && level < 1.0) {
        return Err(BinnedIntervalError::InvalidLevel);
    }
    if let Some(p) = norm {
        if !(p.is_finite() && p >= 1.0) {
            return Err(BinnedIntervalError::InvalidNorm);
        }
    }
    let used = bins.iter().filter(|b| b.count() > 0).count();
    if used == 0 {
        return Err(BinnedIntervalError::NoSamples);
    }
    let bin_level = libm::pow(level, 1.0 / used as f64);
    let total: f64 = bins.iter().map(|b| b.count() as f64).sum();
    let (mut least, mut most) = (0.0f64, 0.0f64);
    for bin in bins {
        let Some(mean) = bin.mean_score() else {
            continue;
        };
        let (low, high) = clopper_pearson(bin.hits(), bin.count(), bin_level);
        // The distances from f̄ of the interval's nearest and farthest points.
        let near = if mean < low {
            low - mean
        } else if mean > high {
            mean - high
        } else {
            0.0
        };
        let far = (high - mean).abs().max((mean - low).abs());
        match norm {
            Some(p) => {
                let weight = bin.count() as f64 / total;
                least += weight * libm::pow(near, p);
                most += weight * libm::pow(far, p);
            }
            None => {
                least = least.max(near);
                most = most.max(far);
            }
        }
    }
    let (lower, upper) = match norm {
        Some(p) => (libm::pow(least, 1.0 / p), libm::pow(most, 1.0 / p)),
        None => (least, most),
    };
    Ok(BinnedInterval {
        lower,
        upper,
        bin_level,
        bins: used,
    })
}

/// The two-sided Clopper–Pearson interval of a proportion from `hits` of `count` (> 0)
/// at `level`: the α/2 quantile of Beta(x, n − x + 1) and the 1 − α/2 quantile of
/// Beta(x + 1, n − x), with 0 for x = 0 and 1 for x = n.
pub fn clopper_pearson(hits: u64, count: u64, level: f64) -> (f64, f64) {
    debug_assert!(hits <= count && count > 0);
    let tail = 0.5 * (1.0 - level);
    let (x, n) = (hits as f64, count as f64);
    let lower = if hits == 0 {
        0.0
    } else {
        beta_quantile(tail, x, n - x + 1.0)
    };
    let upper = if hits == count {
        1.0
    } else {
        beta_quantile(1.0 - tail, x + 1.0, n - x)
    };
    (lower, upper)
}

/// The q quantile of Beta(a, b), by bisection on the regularized incomplete beta
/// function (increasing in x).
fn beta_quantile(q: f64, a: f64, b: f64) -> f64 {
    let (mut low, mut high) = (0.0f64, 1.0f64);
    for _ in 0..BISECTIONS {
        let mid = 0.5 * (low + high);
        if mid <= low || mid >= high {
            break;
        }
        if regularized_beta(a, b, mid) < q {
            low = mid;
        } else {
            high = mid;
        }
    }
    0.5 * (low + high)
}

/// I_x(a, b), the Beta(a, b) distribution function at x, for a, b > 0: the continued
/// fraction of Numerical Recipes §6.4 (modified Lentz) on the side where it converges
/// fast (x below the mean (a + 1)/(a + b + 2)), by symmetry I_x(a, b) = 1 − I_{1−x}(b, a)
/// on the other.
pub(crate) fn regularized_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b)
        + a * libm::log(x)
        + b * libm::log1p(-x);
    if x < (a + 1.0) / (a + b + 2.0) {
        libm::exp(ln_front) * beta_fraction(a, b, x) / a
    } else {
        1.0 - libm::exp(ln_front) * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of I_x(a, b) (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=MAX_STEPS {
        let m = m as f64;
        let m2 = 2.0 * m;
        // The even step.
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        // The odd step.
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < EPSILON {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(count: u64, hits: u64, mean: f64) -> BinStats {
        let sum = (mean * count as f64 * 2f64.powi(64)) as u128;
        BinStats::from_parts(count, hits, sum).unwrap()
    }

    /// The binomial distribution function by summing its terms: obviously right, slow.
    fn binomial_cdf(x: u64, n: u64, p: f64) -> f64 {
        (0..=x)
            .map(|k| {
                let ln_choose = libm::lgamma(n as f64 + 1.0)
                    - libm::lgamma(k as f64 + 1.0)
                    - libm::lgamma((n - k) as f64 + 1.0);
                libm::exp(ln_choose + k as f64 * p.ln() + (n - k) as f64 * (-p).ln_1p())
            })
            .sum()
    }

    #[test]
    fn clopper_pearson_bounds_are_where_the_binomial_tails_equal_alpha_over_two() {
        // The defining property: P(B(n, lower) ≥ x) = α/2 and P(B(n, upper) ≤ x) = α/2.
        for &(x, n) in &[
            (1u64, 10u64),
            (3, 10),
            (7, 20),
            (50, 100),
            (999, 1000),
            (0, 5),
            (5, 5),
        ] {
            let (low, high) = clopper_pearson(x, n, 0.9);
            if x > 0 {
                let upper_tail = 1.0 - binomial_cdf(x - 1, n, low);
                assert!((upper_tail - 0.05).abs() < 1e-10, "{x}/{n}: {upper_tail}");
            } else {
                assert_eq!(low, 0.0);
            }
            if x < n {
                let lower_tail = binomial_cdf(x, n, high);
                assert!((lower_tail - 0.05).abs() < 1e-10, "{x}/{n}: {lower_tail}");
            } else {
                assert_eq!(high, 1.0);
            }
        }
        // R's binom.test(3, 10)$conf.int: 0.06673951 0.65245285.
        let (low, high) = clopper_pearson(3, 10, 0.95);
        assert!((low - 0.066_739_51).abs() < 1e-8 && (high - 0.652_452_85).abs() < 1e-8);
    }

    #[test]
    fn regularized_beta_matches_closed_forms() {
        // I_x(1, b) = 1 − (1 − x)^b; I_x(a, 1) = x^a; I_x(2, 2) = 3x² − 2x³.
        for &x in &[0.01, 0.2, 0.5, 0.77, 0.99] {
            let b: f64 = 7.5;
            assert!((regularized_beta(1.0, b, x) - (1.0 - (1.0 - x).powf(b))).abs() < 1e-13);
            assert!((regularized_beta(4.0, 1.0, x) - x.powi(4)).abs() < 1e-13);
            let cubic = 3.0 * x * x - 2.0 * x * x * x;
            assert!((regularized_beta(2.0, 2.0, x) - cubic).abs() < 1e-13);
        }
        // Large counts converge (a fleet's bin of a million samples).
        let (low, high) = clopper_pearson(400_000, 1_000_000, 0.99);
        assert!(
            low < 0.4 && high > 0.4 && high - low < 0.003,
            "{low} {high}"
        );
    }

    #[test]
    fn the_box_reaches_its_extremes_bin_by_bin() {
        // Two bins; each interval at level^(1/2). By hand from clopper_pearson.
        let bins = [bin(40, 10, 0.3), bin(60, 50, 0.7)];
        let level = 0.9;
        let each = libm::pow(level, 0.5);
        let (l0, h0) = clopper_pearson(10, 40, each);
        let (l1, h1) = clopper_pearson(50, 60, each);
        let mean0 = bins[0].mean_score().unwrap();
        let mean1 = bins[1].mean_score().unwrap();
        // Bin 0's interval holds 0.3 (no nearest distance); bin 1's lies above 0.7.
        assert!(l0 < mean0 && mean0 < h0 && l1 > mean1);
        let near = [0.0, l1 - mean1];
        let far = [(h0 - mean0).max(mean0 - l0), (h1 - mean1).max(mean1 - l1)];
        let got = binned_interval(&bins, Some(2.0), level).unwrap();
        let l2 = |d: [f64; 2]| (0.4 * d[0] * d[0] + 0.6 * d[1] * d[1]).sqrt();
        assert!((got.lower - l2(near)).abs() < 1e-15 && (got.upper - l2(far)).abs() < 1e-15);
        assert_eq!(got.bins, 2);
        let mce = binned_interval(&bins, None, level).unwrap();
        assert_eq!((mce.lower, mce.upper), (near[1], far[0].max(far[1])));
        // The point estimate lies inside: ECE_bin's value at the observed accuracies.
        let ece = (0.4 * (0.25f64 - mean0).powi(2) + 0.6 * (50.0 / 60.0 - mean1).powi(2)).sqrt();
        assert!(got.lower <= ece && ece <= got.upper);
    }

    #[test]
    fn bad_arguments_are_named() {
        let bins = [bin(10, 5, 0.5)];
        assert_eq!(
            binned_interval(&bins, Some(2.0), 1.0),
            Err(BinnedIntervalError::InvalidLevel)
        );
        assert_eq!(
            binned_interval(&bins, Some(0.5), 0.9),
            Err(BinnedIntervalError::InvalidNorm)
        );
        assert_eq!(
            binned_interval(&[BinStats::default(); 3], Some(2.0), 0.9),
            Err(BinnedIntervalError::NoSamples)
        );
    }
}
