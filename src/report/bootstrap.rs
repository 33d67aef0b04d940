//! Bootstrap confidence intervals of every estimator, over one sort of the data.
//!
//! Resample r draws n sorted positions uniformly with replacement from its own generator
//! (`repetition_rng(seed ^ BOOTSTRAP_DOMAIN, r)`), i.e. a multinomial count per sorted
//! position, and evaluates every estimator on the weighted view (module `weighted`) —
//! exactly the estimator on the resample written out and sorted. Resamples run in
//! parallel (rayon) and are collected in resample order: the replicates do not depend on
//! the thread count.
//!
//! Two intervals per estimator (docs/report.md):
//! - **percentile**: the (1 − level)/2 and (1 + level)/2 quantiles of the replicates
//!   (linear interpolation between order statistics, R's type 7);
//! - **BCa** (Efron 1987): the percentile interval with both levels moved by the
//!   bias correction z0 = Φ⁻¹(share of replicates below the estimate, ties counted half)
//!   and the acceleration a = Σd³ / (6 (Σd²)^{3/2}) of a grouped jackknife (d = the mean
//!   of the leave-group-out estimates minus each of them; [`JACKKNIFE_GROUPS`] groups of
//!   positions assigned by a seeded shuffle, leave-one-out when n is at most that). BCa
//!   is undefined (`None`) when every replicate lies on one side of the estimate, or the
//!   jackknife estimates are all equal.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_distr::{Binomial, Distribution};
use rayon::prelude::*;

use super::normal;
use super::weighted::{Packed, Prefix, Weight, WeightedSamples};
use super::ReportError;
use crate::binning::Binning;
use crate::buffer::SortedSamples;
use crate::estimate;
use crate::kde::kde_calibration_error;
use crate::norm::Norm;
use crate::sim::estimator::{EstimatorKind, EvaluateError, Evaluation, EvaluationSettings};
use crate::sim::runner::Summary;
use crate::sim::{repetition_rng, EstimatorSpec};
use crate::smece::{smooth_ece, SCRATCH_LEN};
use crate::stats::BinStats;

/// Domain separation of the bootstrap's generators from the simulations' (same seed).
pub(crate) const BOOTSTRAP_DOMAIN: u64 = 0xB007_5743_5EED_0001;
/// Domain of the jackknife's group assignment.
pub(crate) const JACKKNIFE_DOMAIN: u64 = 0x1ACC_C41F_E000_0002;

/// The number of jackknife groups of the BCa acceleration (leave-one-out below it).
pub const JACKKNIFE_GROUPS: usize = 100;

/// One estimator with its bin count (`None` for those that take none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The estimator.
    pub spec: EstimatorSpec,
    /// Its number of bins, for those that take one.
    pub bins: Option<usize>,
}

/// A two-sided interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Lower end.
    pub lower: f64,
    /// Upper end.
    pub upper: f64,
}

impl Interval {
    /// Whether `x` lies in [lower, upper].
    pub fn contains(&self, x: f64) -> bool {
        self.lower <= x && x <= self.upper
    }
}

/// The bootstrap of one estimator.
#[derive(Clone, Debug, PartialEq)]
pub struct Bootstrap {
    /// The replicates, in resample order (fractions).
    pub replicates: Vec<f64>,
    /// b* of each resample, for the sweep.
    pub sweep_bins: Option<Vec<usize>>,
    /// The standard deviation of the replicates (the bootstrap standard error).
    pub se: f64,
    /// The percentile interval.
    pub percentile: Interval,
    /// The BCa interval, when defined.
    pub bca: Option<Interval>,
    /// The bias correction z0 of BCa (±∞ when every replicate is on one side).
    pub z0: f64,
    /// The jackknife acceleration a of BCa.
    pub acceleration: f64,
}

/// The evaluation of one estimator on a weighted view. The binned estimators read the
/// view; smooth ECE and KDE read the expanded samples (sorted order), `raw`.
fn evaluate<W: Weight>(
    target: &Target,
    view: &WeightedSamples<'_, W>,
    raw: &mut (Vec<f64>, Vec<u8>),
    settings: &EvaluationSettings,
    binned: &mut Vec<((Binning, usize), Vec<BinStats>)>,
) -> Result<Evaluation, EvaluateError> {
    let norm = settings.norm;
    let fixed = |value: f64| Evaluation {
        value,
        sweep_bins: None,
    };
    let Some(binning) = target.spec.binning() else {
        view.expand(&mut raw.0, &mut raw.1);
        if target.spec.kind() == EstimatorKind::SmoothEce {
            if norm != Norm::L1 {
                return Err(EvaluateError::SmoothEceNeedsL1);
            }
            let mut scratch = vec![0.0; SCRATCH_LEN];
            return smooth_ece(&raw.0, &raw.1, &mut scratch)
                .map(|e| fixed(e.value))
                .map_err(EvaluateError::SmoothEce);
        }
        return kde_calibration_error(&raw.0, &raw.1, norm)
            .map(|e| fixed(e.value))
            .map_err(EvaluateError::Kde);
    };
    let estimate = match target.spec.kind() {
        EstimatorKind::EceSweep => {
            let e = view
                .ece_sweep(binning, norm, settings.sweep)
                .map_err(EvaluateError::Estimate)?;
            return Ok(Evaluation {
                value: e.value,
                sweep_bins: Some(e.bins),
            });
        }
        kind => {
            let bins = target.bins.ok_or(EvaluateError::BinsRequired)?;
            view.checked_bins(bins).map_err(EvaluateError::Estimate)?;
            // ECE_bin, ECE_debias and MCE of one binning read the same bins: made once.
            let at = match binned.iter().position(|(key, _)| *key == (binning, bins)) {
                Some(at) => at,
                None => {
                    binned.push(((binning, bins), view.bins(binning, bins).collect()));
                    binned.len() - 1
                }
            };
            let stats = binned[at].1.iter().copied();
            match kind {
                EstimatorKind::EceBin => estimate::ece_bin(stats, norm),
                EstimatorKind::EceDebias => estimate::ece_debias(stats, norm),
                _ => estimate::mce(stats),
            }
        }
    };
    estimate
        .map(|e| fixed(e.value))
        .map_err(EvaluateError::Estimate)
}

/// Every target on a weighted view.
pub(crate) fn evaluate_all<W: Weight>(
    targets: &[Target],
    view: &WeightedSamples<'_, W>,
    raw: &mut (Vec<f64>, Vec<u8>),
    settings: &EvaluationSettings,
) -> Vec<Result<Evaluation, EvaluateError>> {
    let mut binned = Vec::new();
    targets
        .iter()
        .map(|t| evaluate(t, view, raw, settings, &mut binned))
        .collect()
}

/// Why a bootstrap failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BootstrapError {
    /// The resample (`None`: the leave-group-out jackknife).
    pub resample: Option<usize>,
    /// Why.
    pub cause: EvaluateError,
}

impl core::fmt::Display for BootstrapError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.resample {
            Some(r) => write!(f, "bootstrap resample {r}: {}", self.cause),
            None => write!(f, "jackknife of the BCa interval: {}", self.cause),
        }
    }
}

/// log2 of the positions per leaf of [`multinomial_counts`]: its counts (8 KiB) stay in
/// cache, and a draw of a position in a full leaf is 11 bits of a random word.
const LEAF_BITS: u32 = 11;
/// Positions per leaf of [`multinomial_counts`].
const LEAF: usize = 1 << LEAF_BITS;
/// Draws of a position in a full leaf per random word (5 × 11 of its 64 bits).
const DRAWS_PER_WORD: u64 = (u64::BITS / LEAF_BITS) as u64;

/// Sets `counts` to the counts of `draws` uniform draws of a position: a multinomial
/// (draws; 1/len, …) vector. Drawn as the binomial split of the draws between the
/// positions before and after a multiple of [`LEAF`] near the middle, recursively, down
/// to leaves of at most [`LEAF`] positions that count their draws directly: the same
/// distribution as counting each uniform draw (up to the rounding of the split
/// probability, left/len, in f64), without a random access into all n counts per draw,
/// which at n = 10^6 misses the cache every time. A full leaf takes a draw from 11
/// bits of a random word (exactly uniform over its 2^11 positions, five draws a word);
/// the one shorter leaf draws with `gen_range`. Each leaf, once counted, goes to
/// `leaf(first position, its counts)`, in the order of the positions.
pub(crate) fn multinomial_counts<R: Rng + ?Sized, F: FnMut(usize, &[u32])>(
    counts: &mut [u32],
    draws: u64,
    rng: &mut R,
    leaf: &mut F,
) {
    leaves(counts, 0, draws, rng, leaf);
}

/// [`multinomial_counts`] of the positions from `first` on.
fn leaves<R: Rng + ?Sized, F: FnMut(usize, &[u32])>(
    counts: &mut [u32],
    first: usize,
    draws: u64,
    rng: &mut R,
    leaf: &mut F,
) {
    let len = counts.len();
    if len <= LEAF {
        counts.fill(0);
        if len == LEAF {
            let mask = LEAF as u64 - 1;
            let mut left = draws;
            while left > 0 {
                let mut word = rng.next_u64();
                for _ in 0..left.min(DRAWS_PER_WORD) {
                    counts[(word & mask) as usize] += 1;
                    word >>= LEAF_BITS;
                }
                left -= left.min(DRAWS_PER_WORD);
            }
        } else if len > 0 {
            for _ in 0..draws {
                counts[rng.gen_range(0..len)] += 1;
            }
        }
        leaf(first, counts);
        return;
    }
    // The split: a multiple of LEAF, at least one leaf on each side (len > LEAF).
    let mid = ((len / 2).div_ceil(LEAF) * LEAF).min(len - 1);
    let left = Binomial::new(draws, mid as f64 / len as f64).map_or(0, |b| b.sample(rng));
    let (a, b) = counts.split_at_mut(mid);
    leaves(a, first, left, rng, leaf);
    leaves(b, first + mid, draws - left, rng, leaf);
}

/// The q-quantile of sorted values (linear interpolation, R's type 7).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        len => {
            let h = (len - 1) as f64 * q.clamp(0.0, 1.0);
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(len - 1);
            sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
        }
    }
}

/// The two intervals of one estimator from its replicates, its estimate on the data and
/// its jackknife estimates.
pub fn intervals(
    estimate: f64,
    replicates: &[f64],
    jackknife: &[f64],
    level: f64,
) -> (Interval, Option<Interval>, f64, f64) {
    let mut sorted = replicates.to_vec();
    sorted.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    let percentile = Interval {
        lower: quantile_sorted(&sorted, alpha),
        upper: quantile_sorted(&sorted, 1.0 - alpha),
    };
    let below = sorted.iter().filter(|&&x| x < estimate).count() as f64;
    let equal = sorted.iter().filter(|&&x| x == estimate).count() as f64;
    let z0 = normal::quantile((below + equal / 2.0) / sorted.len() as f64);
    let mean = jackknife.iter().sum::<f64>() / jackknife.len() as f64;
    let (mut s2, mut s3) = (0.0, 0.0);
    for &t in jackknife {
        let d = mean - t;
        s2 += d * d;
        s3 += d * d * d;
    }
    let acceleration = if s2 > 0.0 {
        s3 / (6.0 * s2.powf(1.5))
    } else {
        f64::NAN
    };
    let adjusted = |z: f64| {
        let shifted = z0 + z;
        let denominator = 1.0 - acceleration * shifted;
        (denominator > 0.0).then(|| normal::cdf(z0 + shifted / denominator))
    };
    let bca = if z0.is_finite() && acceleration.is_finite() {
        match (
            adjusted(normal::quantile(alpha)),
            adjusted(normal::quantile(1.0 - alpha)),
        ) {
            (Some(lo), Some(hi)) => Some(Interval {
                lower: quantile_sorted(&sorted, lo),
                upper: quantile_sorted(&sorted, hi),
            }),
            _ => None,
        }
    } else {
        None
    };
    (percentile, bca, z0, acceleration)
}

/// The level t at which the interpolated quantile of sorted values crosses `x`: from
/// below (`from_below`: sup{t : Q(t) ≤ x}) or from above (inf{t : Q(t) ≥ x}), with
/// Q as [`quantile_sorted`] interpolates.
fn crossing_level(sorted: &[f64], x: f64, from_below: bool) -> f64 {
    let m = sorted.len();
    if m < 2 {
        // A constant Q(t) = v: at or below x at every level, or at none.
        let v = sorted.first().copied().unwrap_or(f64::NAN);
        let at_every_level = if from_below { v <= x } else { v >= x };
        return if at_every_level == from_below {
            1.0
        } else {
            0.0
        };
    }
    let last = (m - 1) as f64;
    if from_below {
        // The last order statistic at or below x.
        match sorted.partition_point(|&v| v <= x) {
            0 => 0.0,
            k if k == m => 1.0,
            k => {
                let (lo, hi) = (sorted[k - 1], sorted[k]);
                ((k - 1) as f64 + (x - lo) / (hi - lo)) / last
            }
        }
    } else {
        // The first order statistic at or above x.
        match sorted.partition_point(|&v| v < x) {
            0 => 0.0,
            k if k == m => 1.0,
            k => {
                let (lo, hi) = (sorted[k - 1], sorted[k]);
                ((k - 1) as f64 + (x - lo) / (hi - lo)) / last
            }
        }
    }
}

/// The two-sided p-value of `x` by inverting a bootstrap interval: the smallest α at
/// which the interval of level 1 − α from these replicates excludes `x`, with the
/// interval's own interpolation ([`quantile_sorted`]). With `bca = Some((z0, a))` the
/// interval is BCa's ([`intervals`]): an end's level is Φ(z0 + (z0 + z)/(1 − a·(z0 + z)))
/// at z = Φ⁻¹(α/2) or Φ⁻¹(1 − α/2), solved here for z at the level where the quantile
/// crosses `x`. With `None` it is the percentile interval's (levels α/2 and 1 − α/2).
/// Not below 1/(B + 1): B replicates resolve no smaller p-value.
pub fn inverted_p_value(replicates: &[f64], x: f64, bca: Option<(f64, f64)>) -> f64 {
    let mut sorted = replicates.to_vec();
    sorted.sort_by(f64::total_cmp);
    let below = crossing_level(&sorted, x, true);
    let above = crossing_level(&sorted, x, false);
    // z with level(z) = t; ±∞ where no z in BCa's domain (1 − a(z0 + z) > 0) reaches t.
    let z_at = |t: f64| -> f64 {
        let w = normal::quantile(t);
        match bca {
            None => w,
            Some((z0, a)) => {
                let d = w - z0;
                if a * d <= -1.0 || d.is_infinite() {
                    // t beyond every level BCa reaches on that side (a ≠ 0), or at 0 or 1.
                    if d < 0.0 {
                        f64::NEG_INFINITY
                    } else {
                        f64::INFINITY
                    }
                } else {
                    d / (1.0 + a * d) - z0
                }
            }
        }
    };
    // The lower end exceeds x once Φ(z_lo) = α/2 passes Φ(z_at(below)); the upper end
    // falls below x once 1 − α/2 falls below Φ(z_at(above)).
    let lower = 2.0 * normal::cdf(z_at(below));
    let upper = 2.0 * (1.0 - normal::cdf(z_at(above)));
    lower
        .min(upper)
        .min(1.0)
        .max(1.0 / (replicates.len() as f64 + 1.0))
}

/// How many resamples, from which seed, and the level of the intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resampling {
    /// The number of resamples B.
    pub resamples: usize,
    /// The level of both intervals, in (0, 1).
    pub level: f64,
    /// The seed of every resample's generator and of the jackknife's groups.
    pub seed: u64,
}

/// The bootstrap of every target over `sorted` (n ≥ 1 samples), as `resampling` says,
/// as [`try_bootstrap`] computes it.
///
/// # Panics
///
/// If the allocator refuses the results' memory ([`try_bootstrap`] returns that as an
/// error instead).
pub fn bootstrap(
    sorted: &SortedSamples<'_>,
    targets: &[Target],
    estimates: &[f64],
    settings: &EvaluationSettings,
    resampling: Resampling,
    progress: &(dyn Fn() + Sync),
) -> Vec<Result<Bootstrap, BootstrapError>> {
    try_bootstrap(sorted, targets, estimates, settings, resampling, progress)
        .expect("memory for the bootstrap's results")
}

/// `len` values of `T` set to `value`, or [`ReportError::OutOfMemory`]: the results of
/// every resample are the bootstrap's one large allocation, and a failed one is an error,
/// never an abort.
pub(crate) fn results<T: Clone>(value: T, len: usize) -> Result<Vec<T>, ReportError> {
    let out_of_memory = || ReportError::OutOfMemory {
        bytes: len.saturating_mul(core::mem::size_of::<T>()),
    };
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| out_of_memory())?;
    out.resize(len, value);
    Ok(out)
}

/// The bootstrap of every target over `sorted` (n ≥ 1 samples), as `resampling` says.
/// `estimates` are the targets on the data (for BCa's z0). `progress` is called once per
/// finished resample. Per target: its bootstrap, or the first failure in resample order;
/// [`ReportError::OutOfMemory`] if the results' memory (about 50 bytes a resample and
/// target) cannot be had.
pub fn try_bootstrap(
    sorted: &SortedSamples<'_>,
    targets: &[Target],
    estimates: &[f64],
    settings: &EvaluationSettings,
    resampling: Resampling,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Result<Bootstrap, BootstrapError>>, ReportError> {
    let Resampling {
        resamples,
        level,
        seed,
    } = resampling;
    let n = sorted.len();
    let width = targets.len().max(1);
    // Resample r's evaluations are `per_resample[r * width..][..targets.len()]`, written
    // in place by whichever thread draws it.
    let mut per_resample = results(
        Err(EvaluateError::BinsRequired),
        resamples.saturating_mul(width),
    )?;
    let packed = &Packed::new(sorted);
    per_resample
        .par_chunks_mut(width)
        .enumerate()
        .for_each_init(
            || (vec![0u32; n], Prefix::default(), (Vec::new(), Vec::new())),
            |(counts, prefix, raw), (r, out)| {
                let mut rng = repetition_rng(seed ^ BOOTSTRAP_DOMAIN, r as u64);
                // The block sums of each leaf of counts are taken while it is in the cache.
                prefix.begin();
                multinomial_counts(counts, n as u64, &mut rng, &mut |first, leaf| {
                    prefix.extend(packed, first, leaf)
                });
                let view = prefix.view(sorted, packed, counts);
                for (slot, result) in out
                    .iter_mut()
                    .zip(evaluate_all(targets, &view, raw, settings))
                {
                    *slot = result;
                }
                progress();
            },
        );

    let (groups, assignment) = jackknife_groups(n, seed ^ JACKKNIFE_DOMAIN);
    let assignment = &assignment;
    let per_group: Vec<Vec<Result<Evaluation, EvaluateError>>> = (0..groups)
        .into_par_iter()
        .map_init(
            || (Prefix::default(), (Vec::new(), Vec::new())),
            |(prefix, raw), g| {
                let weights: Vec<u32> = assignment.iter().map(|&a| u32::from(a != g)).collect();
                let view = prefix.weigh(sorted, packed, &weights);
                evaluate_all(targets, &view, raw, settings)
            },
        )
        .collect();

    collect(targets, estimates, &per_resample, &per_group, level)
}

/// Each target's bootstrap from the evaluations of every resample (`per_resample`, a
/// row of `targets.len().max(1)` per resample, in resample order) and of every
/// leave-group-out jackknife (`per_group`): its replicates and intervals, or the first
/// failure in resample order (then the jackknife's).
pub(crate) fn collect(
    targets: &[Target],
    estimates: &[f64],
    per_resample: &[Result<Evaluation, EvaluateError>],
    per_group: &[Vec<Result<Evaluation, EvaluateError>>],
    level: f64,
) -> Result<Vec<Result<Bootstrap, BootstrapError>>, ReportError> {
    let width = targets.len().max(1);
    let resamples = per_resample.len() / width;
    let mut boots = Vec::with_capacity(targets.len());
    for (t, target) in targets.iter().enumerate() {
        // Each target's replicates (and b*s) are kept in its `Bootstrap`.
        let mut replicates = results(0.0, resamples)?;
        let mut bins = if target_is_sweep(target) {
            Some(results(0, resamples)?)
        } else {
            None
        };
        let mut boot = || {
            for (r, evaluations) in per_resample.chunks(width).enumerate() {
                let e = evaluations[t].map_err(|cause| BootstrapError {
                    resample: Some(r),
                    cause,
                })?;
                replicates[r] = e.value;
                if let (Some(bins), Some(b)) = (bins.as_mut(), e.sweep_bins) {
                    bins[r] = b;
                }
            }
            let jackknife = per_group
                .iter()
                .map(|g| g[t].map(|e| e.value))
                .collect::<Result<Vec<f64>, _>>()
                .map_err(|cause| BootstrapError {
                    resample: None,
                    cause,
                })?;
            Ok(Bootstrap::of(
                estimates[t],
                std::mem::take(&mut replicates),
                &jackknife,
                level,
                bins.take(),
            ))
        };
        boots.push(boot());
    }
    Ok(boots)
}

/// The grouped jackknife's groups: n positions shuffled (by `rng_seed`) into
/// min(n, [`JACKKNIFE_GROUPS`]) groups, each to be left out in turn. Returns the number
/// of groups and each position's group.
pub(crate) fn jackknife_groups(n: usize, rng_seed: u64) -> (usize, Vec<usize>) {
    let groups = n.min(JACKKNIFE_GROUPS);
    let mut assignment: Vec<usize> = (0..n).map(|i| i % groups).collect();
    assignment.shuffle(&mut repetition_rng(rng_seed, 0));
    (groups, assignment)
}

impl Bootstrap {
    /// The bootstrap of an estimate from its replicates and its leave-group-out values.
    pub(crate) fn of(
        estimate: f64,
        replicates: Vec<f64>,
        jackknife: &[f64],
        level: f64,
        sweep_bins: Option<Vec<usize>>,
    ) -> Bootstrap {
        let (percentile, bca, z0, acceleration) =
            intervals(estimate, &replicates, jackknife, level);
        Bootstrap {
            se: Summary::of(&replicates, 0.0).sd,
            sweep_bins,
            replicates,
            percentile,
            bca,
            z0,
            acceleration,
        }
    }
}

fn target_is_sweep(target: &Target) -> bool {
    target.spec.kind() == EstimatorKind::EceSweep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multinomial_counts_sum_to_the_draws_with_mean_one() {
        let mut counts = vec![0u32; 10_007];
        let mut rng = repetition_rng(3, 0);
        let mut total = vec![0u64; counts.len()];
        for _ in 0..200 {
            let mut next = 0;
            multinomial_counts(&mut counts, 10_007, &mut rng, &mut |first, leaf| {
                // Every leaf once, in order, full but for the last.
                assert_eq!(first, next);
                assert!(leaf.len() == LEAF || first + leaf.len() == 10_007);
                next = first + leaf.len();
            });
            assert_eq!(next, 10_007);
            assert_eq!(counts.iter().map(|&c| u64::from(c)).sum::<u64>(), 10_007);
            for (t, &c) in total.iter_mut().zip(&counts) {
                *t += u64::from(c);
            }
        }
        // Each position's count is Binomial(n, 1/n), mean 1, var ≈ 1: over 200 resamples
        // the mean count of the first and second half is 1 within 5 sd (sd 1/√(200·5003)).
        let half = total.len() / 2;
        for part in [&total[..half], &total[half..]] {
            let mean = part.iter().sum::<u64>() as f64 / (200.0 * part.len() as f64);
            assert!(
                (mean - 1.0).abs() < 5.0 / (200.0 * part.len() as f64).sqrt(),
                "{mean}"
            );
        }
        // And the share of zero counts is (1 − 1/n)^n ≈ e^{-1}.
        let zeros = counts.iter().filter(|&&c| c == 0).count() as f64 / counts.len() as f64;
        assert!((zeros - (-1f64).exp()).abs() < 0.02, "{zeros}");
    }

    #[test]
    fn quantiles_interpolate() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile_sorted(&x, 0.0), 1.0);
        assert_eq!(quantile_sorted(&x, 1.0), 5.0);
        assert_eq!(quantile_sorted(&x, 0.5), 3.0);
        assert!((quantile_sorted(&x, 0.1) - 1.4).abs() < 1e-15);
        assert_eq!(quantile_sorted(&[7.0], 0.3), 7.0);
    }

    #[test]
    fn bca_without_bias_or_skew_is_the_percentile_interval() {
        // Replicates symmetric about the estimate, jackknife symmetric: z0 = 0, a = 0.
        let replicates: Vec<f64> = (0..=100).map(|i| f64::from(i) / 100.0).collect();
        let (p, bca, z0, a) = intervals(0.5, &replicates, &[0.4, 0.5, 0.6], 0.9);
        let bca = bca.unwrap();
        assert_eq!(z0, 0.0);
        assert_eq!(a, 0.0);
        assert!((p.lower - 0.05).abs() < 1e-12 && (p.upper - 0.95).abs() < 1e-12);
        assert!((bca.lower - p.lower).abs() < 1e-12 && (bca.upper - p.upper).abs() < 1e-12);
        // All replicates above the estimate: BCa undefined.
        let (_, none, z0, _) = intervals(-1.0, &replicates, &[0.4, 0.5, 0.6], 0.9);
        assert!(none.is_none() && z0 == f64::NEG_INFINITY);
    }

    #[test]
    fn inverted_p_values_by_hand() {
        // Q(t) = −2 + 10t on −2, −1, …, 8: it crosses 0 at t = 0.2, so the percentile
        // interval of level 1 − α excludes 0 from α = 2 · 0.2 on.
        let replicates: Vec<f64> = (0..=10).map(|i| f64::from(i) - 2.0).collect();
        assert!((inverted_p_value(&replicates, 0.0, None) - 0.4).abs() < 1e-12);
        // BCa without bias or skew is the percentile interval.
        assert!((inverted_p_value(&replicates, 0.0, Some((0.0, 0.0))) - 0.4).abs() < 1e-12);
        // With z0 = 0.1, a = 0: the lower end's level Φ(2·z0 + z) reaches 0.2 at
        // z = Φ⁻¹(0.2) − 0.2, so p = 2Φ(Φ⁻¹(0.2) − 0.2).
        let expected = 2.0 * normal::cdf(normal::quantile(0.2) - 0.2);
        assert!((inverted_p_value(&replicates, 0.0, Some((0.1, 0.0))) - expected).abs() < 1e-12);
        // Every replicate above 0: the smallest p that B = 11 replicates resolve.
        assert_eq!(inverted_p_value(&replicates, -5.0, None), 1.0 / 12.0);
        // All replicates at 0: no level excludes it.
        assert_eq!(inverted_p_value(&[0.0; 5], 0.0, None), 1.0);
    }

    #[test]
    fn bca_by_hand() {
        // z0 = Φ⁻¹(0.3); a from d = mean − t over t = [0, 0, 3]: d = 1, 1, −2:
        // Σd³ = −6, Σd² = 6 → a = −6 / (6·6^{1.5}).
        let replicates: Vec<f64> = (0..10).map(f64::from).collect();
        let (_, bca, z0, a) = intervals(2.5, &replicates, &[0.0, 0.0, 3.0], 0.8);
        assert!((z0 - normal::quantile(0.3)).abs() < 1e-15);
        assert!((a - (-1.0 / 6f64.powf(1.5))).abs() < 1e-15);
        let z = normal::quantile(0.1);
        let lo = normal::cdf(z0 + (z0 + z) / (1.0 - a * (z0 + z)));
        let bca = bca.unwrap();
        let mut sorted = replicates.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(bca.lower, quantile_sorted(&sorted, lo));
    }
}
