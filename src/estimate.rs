//! The estimators, computed from bin statistics and nothing else: every binning, the
//! histogram and the sorted buffer alike, ends here. (SPEC §3, §5.)

use crate::error::EstimateError;
use crate::limits::add_counts;
use crate::norm::{Norm, ScaledPowers};
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
    /// The number of samples n (for weighted rows, `tce::weights` (std), the rows with
    /// positive weight).
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
    /// Whether ECE_debias corrects this bin (else it contributes 0, its weight staying in
    /// the total): at least 2 samples and an effective count above 1, where the correction
    /// ȳ(1−ȳ)/(n−1) is defined. Frequency-weighted bins (`tce::weights::WeightedBin`, std)
    /// say "at least 2 units of weight" instead, so that integer weights act as repeated
    /// rows.
    fn debiased(&self) -> bool {
        self.count() >= 2 && self.effective_count() > 1.0
    }
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

/// Sums `term(bin, powers)` over the non-empty bins weighted by their weights into
/// `powers` (a term is in units of the scale it covered first, see [`ScaledPowers`]),
/// divides by the total weight, and counts samples and bins.
///
/// [`EstimateError::DegenerateWeights`] when there are samples but no finite, positive
/// total weight to divide by, or the mean is not finite: only a weighted state can get
/// there (plain bins weigh their counts), and no state built by pushes or by decoding a
/// valid frame does; the check keeps a NaN from ever being reported as an estimate.
/// [`EstimateError::CountOverflow`] when the bins hold more than [`crate::MAX_COUNT`]
/// samples in all (only bins a caller assembles can).
fn weighted_mean<B, I, F>(
    bins: I,
    powers: &mut ScaledPowers,
    mut term: F,
) -> Result<(f64, u64, usize), EstimateError>
where
    B: BinSummary,
    I: IntoIterator<Item = B>,
    F: FnMut(&B, &mut ScaledPowers) -> f64,
{
    let (mut total, mut samples, mut count) = (0.0, 0u64, 0usize);
    for bin in bins {
        // One per bin: the bins are in memory (or summarise it), far fewer than usize::MAX.
        count = count.wrapping_add(1);
        samples = add_counts(samples, bin.count()).map_err(|_| EstimateError::CountOverflow)?;
        // A decayed bin whose weights underflowed to 0 holds samples but no information
        // (and its means would be 0/0): it counts as a sample count only.
        if bin.count() > 0 && bin.weight() > 0.0 {
            total += bin.weight();
            let term = term(&bin, powers);
            powers.add(bin.weight() * term);
        }
    }
    match (count, samples) {
        (0, _) => Err(EstimateError::ZeroBins),
        (_, 0) => Err(EstimateError::NoSamples),
        _ => {
            let mean = powers.sum() / total;
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
    let mut powers = ScaledPowers::new(norm);
    let (mean, samples, count) = weighted_mean(bins, &mut powers, |bin, powers| {
        let gap = gap(bin);
        powers.cover(gap);
        powers.power(gap)
    })?;
    Ok(Estimate {
        value: finite(powers.root(mean))?,
        samples,
        bins: count,
    })
}

/// MCE = max over non-empty bins of |f̄_k − ȳ_k|.
pub fn mce<B: BinSummary, I: IntoIterator<Item = B>>(bins: I) -> Result<Estimate, EstimateError> {
    let mut worst = 0.0f64;
    // The sum of the gaps is not used: any norm serves.
    let mut unused = ScaledPowers::new(Norm::L1);
    let (_, samples, count) = weighted_mean(bins, &mut unused, |bin, _| {
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
    let mut powers = ScaledPowers::new(norm);
    // A closure, not the function item: passed as an item, its body inlines into core's
    // `FnMut::call_mut` shim, where the panic audit cannot tell libm's pow (accepted) from
    // this crate's arithmetic.
    #[allow(clippy::redundant_closure)]
    let (mean, samples, count) =
        weighted_mean(bins, &mut powers, |bin, powers| debiased_term(bin, powers))?;
    Ok(Estimate {
        value: finite(powers.root(mean.max(0.0)))?,
        samples,
        bins: count,
    })
}

/// The bias-corrected |f̄ − ȳ|^p of one bin, in units of the scale of `powers` (which it
/// widens to cover the bin's gaps first).
fn debiased_term<B: BinSummary>(bin: &B, powers: &mut ScaledPowers) -> f64 {
    let n = bin.effective_count();
    if !bin.debiased() {
        return 0.0;
    }
    let (f, y) = (bin.mean_score(), bin.accuracy());
    if powers.norm() == Norm::L2 {
        return (f - y) * (f - y) - y * (1.0 - y) / (n - 1.0);
    }
    // Leaving out a hit gives ȳ = (h−1)/(n−1), leaving out a miss ȳ = h/(n−1): the
    // jackknife needs only these two values, O(1) per bin.
    let h = y * n;
    let gaps = [f - y, f - (h - 1.0) / (n - 1.0), f - h / (n - 1.0)];
    // Element by element (not an array iterator or `array::map`, whose index is checked
    // arithmetic: the panic audit builds with overflow checks).
    powers.cover(gaps[0]);
    powers.cover(gaps[1]);
    powers.cover(gaps[2]);
    let [plug_in, leave_out_hit, leave_out_miss] = [
        powers.power(gaps[0]),
        powers.power(gaps[1]),
        powers.power(gaps[2]),
    ];
    let mean_leave_one_out = (h * leave_out_hit + (n - h) * leave_out_miss) / n;
    n * plug_in - (n - 1.0) * mean_leave_one_out
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

    /// (Σ w_k |g_k|^p / Σ w_k)^(1/p) through logarithms (log-sum-exp): right for any p,
    /// without the scaling the estimators use.
    fn lp_by_logs(terms: &[(f64, f64)], p: f64) -> f64 {
        let logs: Vec<f64> = terms
            .iter()
            .map(|&(w, g)| w.ln() + p * g.abs().ln())
            .collect();
        let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = logs.iter().map(|l| (l - top).exp()).sum();
        let total: f64 = terms.iter().map(|t| t.0).sum();
        ((top + sum.ln() - total.ln()) / p).exp()
    }

    #[test]
    fn large_norms_do_not_underflow_to_zero() {
        // Gaps 0.5 − 0.25 and 0.9 − 0.5 (weights 2 and 3 of 5): |gap|^p underflows for
        // every one of these p, and the estimate used to read 0.
        let bins = [
            bin(&[(0.5, 0), (0.5, 0), (0.5, 1), (0.5, 0)]),
            bin(&[(0.9, 1), (0.9, 0), (0.9, 1), (0.9, 0), (0.9, 0), (0.9, 1)]),
        ];
        let terms = [(4.0, 0.25), (6.0, 0.4)];
        for p in [3.0, 200.0, 1100.0, 2000.0, 5000.0, 1e6, 1e300] {
            let e = ece_bin(bins, Norm::new(p).unwrap()).unwrap().value;
            let expected = lp_by_logs(&terms, p);
            assert!(e > 0.25 && e <= 0.4, "p = {p}: {e}");
            assert!(
                (e - expected).abs() <= 1e-12 * expected,
                "p = {p}: {e} vs {expected}"
            );
        }
        // A zero gap everywhere is 0, for any p.
        let calibrated = [bin(&[(0.5, 0), (0.5, 1)])];
        assert_eq!(
            ece_bin(calibrated, Norm::new(5000.0).unwrap())
                .unwrap()
                .value,
            0.0
        );
        // The debiased form's jackknife sees the same scale. One bin of 10^6 samples at
        // 0.9 with half of them hits: plug-in gap a = 0.4, leave-one-out gaps b (a hit
        // left out) and c (a miss). Its term is a^p·[n − (n−1)(½(b/a)^p + ½(c/a)^p)], whose
        // p-th root is a·[…]^(1/p): no power underflows in that form.
        let (n, hits) = (1_000_000u64, 500_000u64);
        let score_sum = 900_000u128 << 64;
        let big = [BinStats::from_parts(n, hits, score_sum).unwrap()];
        let p = 1100.0;
        let (nf, hf) = (n as f64, hits as f64);
        let a = 0.9 - hf / nf;
        let b = 0.9 - (hf - 1.0) / (nf - 1.0);
        let c = 0.9 - hf / (nf - 1.0);
        let bracket =
            nf - (nf - 1.0) * (hf / nf * (b / a).powf(p) + (1.0 - hf / nf) * (c / a).powf(p));
        let expected = a * bracket.powf(1.0 / p);
        let debiased = ece_debias(big, Norm::new(p).unwrap()).unwrap().value;
        assert!(expected > 0.3, "{expected}");
        assert!(
            (debiased - expected).abs() <= 1e-9 * expected,
            "{debiased} vs {expected}"
        );
    }

    #[test]
    fn jackknife_for_p2_equals_the_closed_form() {
        let b = bin(&[(0.9, 1), (0.8, 0), (0.95, 1), (0.7, 1), (0.85, 0)]);
        let closed = debiased_term(&b, &mut ScaledPowers::new(Norm::L2));
        let mut near_two = ScaledPowers::new(Norm::new(2.0 + 1e-12).unwrap());
        let term = debiased_term(&b, &mut near_two);
        let jack = near_two.unscaled(term);
        assert!((closed - jack).abs() < 1e-9, "{closed} vs {jack}");
        // By hand: f̄ = 0.84, ȳ = 0.6: 0.0576 − 0.24/4 = −0.0024.
        assert!((closed - (-0.0024)).abs() < 1e-15);
    }
}
