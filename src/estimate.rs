//! The estimators, computed from bin statistics and nothing else: every binning, the
//! histogram and the sorted buffer alike, ends here. (SPEC §3, §5.)

use crate::error::EstimateError;
use crate::limits::add_counts;
use crate::norm::Norm;
use crate::stats::BinStats;
use crate::MAX_BINS;

/// The one check of a bin count an estimate is asked for, before any work:
/// [`EstimateError::ZeroBins`] for 0, [`EstimateError::TooManyBins`] above [`MAX_BINS`]
/// (an untrusted count such as `SIZE_MAX` would otherwise loop for minutes).
pub(crate) fn check_bins(bins: usize) -> Result<(), EstimateError> {
    match bins {
        0 => Err(EstimateError::ZeroBins),
        bins if bins > MAX_BINS => Err(EstimateError::TooManyBins {
            bins,
            max: MAX_BINS,
        }),
        _ => Ok(()),
    }
}

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

/// What an estimator reads of a bin. Plain bins ([`BinStats`]) weigh each sample 1;
/// decayed bins ([`crate::decay::DecayedBin`]) weigh recent samples more.
pub trait BinSummary {
    /// Samples recorded in the bin.
    fn count(&self) -> u64;
    /// The bin's weight in the average over bins: its count, or its decayed weight.
    fn weight(&self) -> f64;
    /// Mean score f̄_k of a non-empty bin.
    fn mean_score(&self) -> f64;
    /// Accuracy ȳ_k of a non-empty bin.
    fn accuracy(&self) -> f64;
    /// The number of samples the variance of ȳ_k is based on: n_k for plain bins,
    /// Kish's effective sample size (Σw)²/Σw² for weighted ones.
    fn effective_count(&self) -> f64;
}

impl BinSummary for BinStats {
    fn count(&self) -> u64 {
        BinStats::count(self)
    }
    fn weight(&self) -> f64 {
        BinStats::count(self) as f64
    }
    fn mean_score(&self) -> f64 {
        BinStats::mean_score(self).unwrap_or(0.0)
    }
    fn accuracy(&self) -> f64 {
        BinStats::accuracy(self).unwrap_or(0.0)
    }
    fn effective_count(&self) -> f64 {
        BinStats::count(self) as f64
    }
}

/// Sums `term(bin)` over the non-empty bins weighted by their weights, divides by the
/// total weight, and counts samples and bins.
///
/// [`EstimateError::DegenerateWeights`] when there are samples but no finite, positive
/// total weight to divide by, or the mean is not finite: only a weighted state can get
/// there (plain bins weigh their counts), and no state built by pushes or by decoding a
/// valid frame does; the check keeps a NaN from ever being reported as an estimate.
/// [`EstimateError::CountOverflow`] when the bins hold more than [`crate::MAX_COUNT`]
/// samples in all (only bins a caller assembles can).
fn weighted_mean<B, I, F>(bins: I, mut term: F) -> Result<(f64, u64, usize), EstimateError>
where
    B: BinSummary,
    I: IntoIterator<Item = B>,
    F: FnMut(&B) -> f64,
{
    let (mut sum, mut total, mut samples, mut count) = (0.0, 0.0, 0u64, 0usize);
    for bin in bins {
        // One per bin: the bins are in memory (or summarise it), far fewer than usize::MAX.
        count = count.wrapping_add(1);
        samples = add_counts(samples, bin.count()).map_err(|_| EstimateError::CountOverflow)?;
        // A decayed bin whose weights underflowed to 0 holds samples but no information
        // (and its means would be 0/0): it counts as a sample count only.
        if bin.count() > 0 && bin.weight() > 0.0 {
            total += bin.weight();
            sum += bin.weight() * term(&bin);
        }
    }
    match (count, samples) {
        (0, _) => Err(EstimateError::ZeroBins),
        (_, 0) => Err(EstimateError::NoSamples),
        _ => {
            let mean = sum / total;
            if total > 0.0 && total.is_finite() && mean.is_finite() {
                Ok((mean, samples, count))
            } else {
                Err(EstimateError::DegenerateWeights)
            }
        }
    }
}

/// `value`, or [`EstimateError::DegenerateWeights`] if it is not finite.
fn finite(value: f64) -> Result<f64, EstimateError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(EstimateError::DegenerateWeights)
    }
}

/// f̄_k − ȳ_k of a non-empty bin.
fn gap<B: BinSummary>(bin: &B) -> f64 {
    bin.mean_score() - bin.accuracy()
}

/// ECE_bin = ( Σ_k (n_k/n) · |f̄_k − ȳ_k|^p )^(1/p); empty bins contribute 0.
pub fn ece_bin<B: BinSummary, I: IntoIterator<Item = B>>(
    bins: I,
    norm: Norm,
) -> Result<Estimate, EstimateError> {
    let (mean, samples, count) = weighted_mean(bins, |bin| norm.power(gap(bin)))?;
    Ok(Estimate {
        value: finite(norm.root(mean))?,
        samples,
        bins: count,
    })
}

/// MCE = max over non-empty bins of |f̄_k − ȳ_k|.
pub fn mce<B: BinSummary, I: IntoIterator<Item = B>>(bins: I) -> Result<Estimate, EstimateError> {
    let mut worst = 0.0f64;
    let (_, samples, count) = weighted_mean(bins, |bin| {
        let gap = gap(bin).abs();
        // `max` would drop a NaN gap silently.
        worst = if gap.is_nan() { gap } else { worst.max(gap) };
        gap
    })?;
    if !worst.is_finite() {
        return Err(EstimateError::DegenerateWeights);
    }
    Ok(Estimate {
        value: worst,
        samples,
        bins: count,
    })
}

/// ECE_debias (SPEC §5): each bin's plug-in |f̄_k − ȳ_k|^p minus its bias, estimated by
/// the jackknife over the bin's labels with f̄_k held fixed; bins with fewer than 2
/// samples contribute 0 (their weight stays in n); the sum is clamped at 0 before the
/// root. For p = 2 the jackknife has the closed form (f̄−ȳ)² − ȳ(1−ȳ)/(n_k−1).
pub fn ece_debias<B: BinSummary, I: IntoIterator<Item = B>>(
    bins: I,
    norm: Norm,
) -> Result<Estimate, EstimateError> {
    let (mean, samples, count) = weighted_mean(bins, |bin| debiased_term(bin, norm))?;
    Ok(Estimate {
        value: finite(norm.root(mean.max(0.0)))?,
        samples,
        bins: count,
    })
}

/// The bias-corrected |f̄ − ȳ|^p of one bin.
fn debiased_term<B: BinSummary>(bin: &B, norm: Norm) -> f64 {
    let n = bin.effective_count();
    if bin.count() < 2 || n <= 1.0 {
        return 0.0;
    }
    let (f, y) = (bin.mean_score(), bin.accuracy());
    if norm == Norm::L2 {
        return (f - y) * (f - y) - y * (1.0 - y) / (n - 1.0);
    }
    // Leaving out a hit gives ȳ = (h−1)/(n−1), leaving out a miss ȳ = h/(n−1): the
    // jackknife needs only these two values, O(1) per bin.
    let h = y * n;
    let leave_out_hit = norm.power(f - (h - 1.0) / (n - 1.0));
    let leave_out_miss = norm.power(f - h / (n - 1.0));
    let mean_leave_one_out = (h * leave_out_hit + (n - h) * leave_out_miss) / n;
    n * norm.power(f - y) - (n - 1.0) * mean_leave_one_out
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
        let bins = [
            bin(&[(0.2, 0), (0.4, 1)]),
            BinStats::EMPTY,
            bin(&[(0.9, 1), (0.7, 1)]),
        ];
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
        assert_eq!(
            ece_bin([BinStats::EMPTY; 0], Norm::L2),
            Err(EstimateError::ZeroBins)
        );
        assert_eq!(
            ece_bin([BinStats::EMPTY; 3], Norm::L2),
            Err(EstimateError::NoSamples)
        );
        assert_eq!(mce([BinStats::EMPTY]), Err(EstimateError::NoSamples));
        assert_eq!(
            ece_debias([BinStats::EMPTY; 0], Norm::L1),
            Err(EstimateError::ZeroBins)
        );
    }

    #[test]
    fn bins_summing_past_the_count_bound_are_a_named_error() {
        let full = BinStats::from_parts(crate::MAX_COUNT, 0, 0).unwrap();
        let one = BinStats::from_parts(1, 1, 1 << 63).unwrap();
        assert_eq!(
            ece_bin([full, one], Norm::L1),
            Err(EstimateError::CountOverflow)
        );
        assert_eq!(mce([one, full]), Err(EstimateError::CountOverflow));
        assert_eq!(
            ece_debias([full, full], Norm::L2),
            Err(EstimateError::CountOverflow)
        );
        assert_eq!(
            ece_bin([full], Norm::L1).map(|e| e.samples),
            Ok(crate::MAX_COUNT)
        );
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
