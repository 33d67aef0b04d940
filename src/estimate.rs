//! The estimators, computed from bin statistics and nothing else: every binning, the
//! histogram and the sorted buffer alike, ends here. (SPEC §3, §5.)

use crate::error::EstimateError;
use crate::norm::Norm;
use crate::stats::BinStats;

/// An estimate and what it was computed from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The calibration error, as a fraction.
    pub value: f64,
    /// The number of samples n.
    pub samples: u64,
    /// The number of bins used (empty ones included); b* for the sweep.
    pub bins: usize,
}

/// Sums `term(bin)` over the non-empty bins, weighted by their counts, and counts samples
/// and bins.
fn weighted_sum<I, F>(bins: I, mut term: F) -> Result<(f64, u64, usize), EstimateError>
where
    I: IntoIterator<Item = BinStats>,
    F: FnMut(&BinStats) -> f64,
{
    let (mut sum, mut samples, mut count) = (0.0, 0u64, 0usize);
    for bin in bins {
        count += 1;
        if bin.count() > 0 {
            samples += bin.count();
            sum += bin.count() as f64 * term(&bin);
        }
    }
    match (count, samples) {
        (0, _) => Err(EstimateError::ZeroBins),
        (_, 0) => Err(EstimateError::NoSamples),
        _ => Ok((sum, samples, count)),
    }
}

/// |f̄_k − ȳ_k| of a non-empty bin.
fn gap(bin: &BinStats) -> f64 {
    let count = bin.count() as f64;
    bin.mean_score().unwrap_or(0.0) - bin.hits() as f64 / count
}

/// ECE_bin = ( Σ_k (n_k/n) · |f̄_k − ȳ_k|^p )^(1/p); empty bins contribute 0.
pub fn ece_bin<I: IntoIterator<Item = BinStats>>(bins: I, norm: Norm) -> Result<Estimate, EstimateError> {
    let (sum, samples, count) = weighted_sum(bins, |bin| norm.power(gap(bin)))?;
    Ok(Estimate { value: norm.root(sum / samples as f64), samples, bins: count })
}

/// MCE = max over non-empty bins of |f̄_k − ȳ_k|.
pub fn mce<I: IntoIterator<Item = BinStats>>(bins: I) -> Result<Estimate, EstimateError> {
    let mut worst = 0.0f64;
    let (_, samples, count) = weighted_sum(bins, |bin| {
        worst = worst.max(gap(bin).abs());
        0.0
    })?;
    Ok(Estimate { value: worst, samples, bins: count })
}

/// ECE_debias (SPEC §5): each bin's plug-in |f̄_k − ȳ_k|^p minus its bias, estimated by
/// the jackknife over the bin's labels with f̄_k held fixed; bins with fewer than 2
/// samples contribute 0 (their weight stays in n); the sum is clamped at 0 before the
/// root. For p = 2 the jackknife has the closed form (f̄−ȳ)² − ȳ(1−ȳ)/(n_k−1).
pub fn ece_debias<I: IntoIterator<Item = BinStats>>(
    bins: I,
    norm: Norm,
) -> Result<Estimate, EstimateError> {
    let (sum, samples, count) = weighted_sum(bins, |bin| debiased_term(bin, norm))?;
    Ok(Estimate { value: norm.root(sum.max(0.0) / samples as f64), samples, bins: count })
}

/// The bias-corrected |f̄ − ȳ|^p of one bin.
fn debiased_term(bin: &BinStats, norm: Norm) -> f64 {
    let n = bin.count();
    if n < 2 {
        return 0.0;
    }
    let f = bin.mean_score().unwrap_or(0.0);
    let (h, nf) = (bin.hits() as f64, n as f64);
    let y = h / nf;
    if norm == Norm::L2 {
        return (f - y) * (f - y) - y * (1.0 - y) / (nf - 1.0);
    }
    // Leaving out a hit gives ȳ = (h−1)/(n−1), leaving out a miss ȳ = h/(n−1): the
    // jackknife needs only these two values, O(1) per bin.
    let leave_out_hit = norm.power(f - (h - 1.0) / (nf - 1.0));
    let leave_out_miss = norm.power(f - h / (nf - 1.0));
    let mean_leave_one_out = (h * leave_out_hit + (nf - h) * leave_out_miss) / nf;
    nf * norm.power(f - y) - (nf - 1.0) * mean_leave_one_out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(samples: &[(f64, u8)]) -> BinStats {
        let mut b = BinStats::EMPTY;
        for &(s, l) in samples {
            b.record(s, l);
        }
        b
    }

    #[test]
    fn ece_of_hand_computed_bins() {
        let bins = [bin(&[(0.2, 0), (0.4, 1)]), BinStats::EMPTY, bin(&[(0.9, 1), (0.7, 1)])];
        // gaps: 0.3 − 0.5 = −0.2 (weight 2/4), 0.8 − 1 = −0.2 (weight 2/4).
        let e = ece_bin(bins, Norm::L1).unwrap();
        assert!((e.value - 0.2).abs() < 1e-15);
        assert_eq!((e.samples, e.bins), (4, 3));
        let e = ece_bin(bins, Norm::L2).unwrap();
        assert!((e.value - 0.2).abs() < 1e-15);
        assert!((mce(bins).unwrap().value - 0.2).abs() < 1e-15);
    }

    #[test]
    fn empty_inputs_are_named_errors() {
        assert_eq!(ece_bin([], Norm::L2), Err(EstimateError::ZeroBins));
        assert_eq!(ece_bin([BinStats::EMPTY; 3], Norm::L2), Err(EstimateError::NoSamples));
        assert_eq!(mce([BinStats::EMPTY]), Err(EstimateError::NoSamples));
        assert_eq!(ece_debias([], Norm::L1), Err(EstimateError::ZeroBins));
    }

    #[test]
    fn jackknife_for_p2_equals_the_closed_form() {
        let b = bin(&[(0.9, 1), (0.8, 0), (0.95, 1), (0.7, 1), (0.85, 0)]);
        let closed = debiased_term(&b, Norm::L2);
        let jack = debiased_term(&b, Norm::new(2.0 + 1e-12).unwrap());
        assert!((closed - jack).abs() < 1e-9, "{closed} vs {jack}");
        // By hand: f̄ = 0.84, ȳ = 0.6: 0.0576 − 0.24/4 = −0.0024.
        assert!((closed - (-0.0024)).abs() < 1e-15);
    }
}
