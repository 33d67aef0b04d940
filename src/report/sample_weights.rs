//! The report of weighted rows (`sample_weight` in Python, `tce report --weight-col`):
//! the weighted estimators of [`crate::weights`] with the same bootstrap intervals as the
//! unweighted report (docs/report.md, "Weighted rows").
//!
//! - **Estimates**: ECE_bin, ECE_sweep, ECE_debias and MCE, equal width and equal weight,
//!   as [`crate::weights`] defines them (frequency weights); smooth ECE (p = 1) and KDE
//!   (when asked) by [`crate::smece::smooth_ece_weighted`] and
//!   [`crate::kde::kde_calibration_error_weighted`].
//! - **Bootstrap**: resample r draws n rows with replacement exactly as the unweighted
//!   report does (the same multinomial counts c_i for the same seed, n the rows with
//!   positive weight), and row i enters the resample with weight c_i·w_i. Unit weights
//!   therefore give the unweighted report's replicates (to rounding: f64 sums here,
//!   fixed-point sums there). The same percentile and BCa intervals; the jackknife of BCa
//!   leaves out the same groups of rows, with their weights.
//! - **Not made**: the parametric part (fit, fit check, bias table) and the calibration
//!   test. Both simulate unweighted data sets from a model fitted to unweighted rows, so
//!   they would measure other estimators than the weighted ones reported
//!   ([`ParametricError::Weighted`]); the recommendation is then the paper's default, the
//!   equal-weight ECE_sweep ([`Basis::NoFit`](super::Basis::NoFit)).
//!
//! Rows of weight 0 are dropped first: the report is that of the other rows.

use rayon::prelude::*;

use super::bootstrap::{
    self, collect, jackknife_groups, multinomial_counts, BOOTSTRAP_DOMAIN, JACKKNIFE_DOMAIN,
};
use super::{
    estimates_tce, recommend, targets, ties::TieSummary, wilson_share, BinWeight, EstimatorResult,
    ParametricError, Phase, Reliability, ReliabilityBin, Report, ReportError, ReportSettings,
    Target, Unavailable,
};
use crate::binning::Binning;
use crate::error::EstimateError;
use crate::estimate;
use crate::kde::kde_calibration_error_weighted;
use crate::sim::estimator::{EstimatorKind, EvaluateError, Evaluation, EvaluationSettings};
use crate::sim::repetition_rng;
use crate::smece::{smooth_ece_weighted, SCRATCH_LEN};
use crate::weights::{self, WeightError, WeightedBin};

/// What a weighted report says of its weights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeightSummary {
    /// Rows read, zero weights included.
    pub rows: usize,
    /// Rows of weight 0, dropped.
    pub zero_rows: usize,
    /// W = Σ w.
    pub total: f64,
    /// Kish's effective sample size (Σw)² / Σw²: n for equal weights, less the more
    /// unequal they are. Shown, not used by the estimators (frequency weights).
    pub effective_n: f64,
    /// Σ w·y / W.
    pub accuracy: f64,
    /// Σ w·f / W.
    pub mean_confidence: f64,
    /// Whether every weight is a whole number (then each estimate equals the
    /// unweighted estimator's on the rows repeated).
    pub integer: bool,
}

/// Weighted rows with positive weight, sorted by score (ties in arrival order).
struct Rows {
    scores: Vec<f64>,
    labels: Vec<u8>,
    weights: Vec<f64>,
}

impl Rows {
    /// The rows of positive weight, sorted as (score bits, row) pairs: the bits of a
    /// score in [0, 1] order as the score does once −0 is made +0. Sorted once here, the
    /// weighted estimators' own sorts find their input in order.
    fn of(scores: &[f64], labels: &[u8], weights: &[f64]) -> Rows {
        let mut keys: Vec<(u64, usize)> = (0..scores.len())
            .filter(|&i| weights[i] > 0.0)
            .map(|i| ((scores[i] + 0.0).to_bits(), i))
            .collect();
        keys.sort_unstable();
        Rows {
            scores: keys.iter().map(|&(_, i)| scores[i]).collect(),
            labels: keys.iter().map(|&(_, i)| labels[i]).collect(),
            weights: keys.iter().map(|&(_, i)| weights[i]).collect(),
        }
    }
}

/// A weighted estimator's refusal as the report's evaluation error. The rows were
/// checked once, so only the estimate itself can fail here; a resample always has
/// positive weight (its counts sum to n ≥ 1 over rows of positive weight).
fn evaluate_error(e: WeightError) -> EvaluateError {
    match e {
        WeightError::Estimate(e) => EvaluateError::Estimate(e),
        _ => EvaluateError::Estimate(EstimateError::NoSamples),
    }
}

/// The bins of one binning of the weighted rows, or why there are none.
type BinsOf = Result<Vec<WeightedBin>, WeightError>;

/// Every target on the rows weighted by `weights` (sorted rows). The binned estimators
/// of one binning share its bins ([`weights::bins`] once); smooth ECE and KDE have no
/// weighted form.
fn evaluate_all(
    targets: &[Target],
    rows: &Rows,
    weights: &[f64],
    settings: &EvaluationSettings,
) -> Vec<Result<Evaluation, EvaluateError>> {
    let mut binned: Vec<((Binning, usize), BinsOf)> = Vec::new();
    let mut scratch: Option<Vec<f64>> = None;
    let fixed_value = |value: f64| Evaluation {
        value,
        sweep_bins: None,
    };
    let fixed = |e: Result<estimate::Estimate, EstimateError>| {
        e.map(|e| Evaluation {
            value: e.value,
            sweep_bins: None,
        })
        .map_err(EvaluateError::Estimate)
    };
    targets
        .iter()
        .map(|t| {
            let Some(binning) = t.spec.binning() else {
                if t.spec.kind() == EstimatorKind::SmoothEce {
                    if settings.norm != crate::norm::Norm::L1 {
                        return Err(EvaluateError::SmoothEceNeedsL1);
                    }
                    let scratch = scratch.get_or_insert_with(|| vec![0.0; SCRATCH_LEN]);
                    return smooth_ece_weighted(&rows.scores, &rows.labels, weights, scratch)
                        .map(|e| fixed_value(e.value))
                        .map_err(EvaluateError::SmoothEce);
                }
                return kde_calibration_error_weighted(
                    &rows.scores,
                    &rows.labels,
                    weights,
                    settings.norm,
                )
                .map(|e| fixed_value(e.value))
                .map_err(EvaluateError::Kde);
            };
            let kind = t.spec.kind();
            if kind == EstimatorKind::EceSweep {
                return weights::ece_sweep(
                    &rows.scores,
                    &rows.labels,
                    weights,
                    binning,
                    settings.norm,
                    settings.sweep,
                )
                .map(|e| Evaluation {
                    value: e.value,
                    sweep_bins: Some(e.bins),
                })
                .map_err(evaluate_error);
            }
            let count = t.bins.ok_or(EvaluateError::BinsRequired)?;
            let at = match binned.iter().position(|(key, _)| *key == (binning, count)) {
                Some(at) => at,
                None => {
                    let bins = weights::bins(&rows.scores, &rows.labels, weights, binning, count)
                        .map(|(bins, _)| bins);
                    binned.push(((binning, count), bins));
                    binned.len() - 1
                }
            };
            let bins = binned[at].1.as_ref().map_err(|&e| evaluate_error(e))?;
            let bins = bins.iter().copied();
            match kind {
                EstimatorKind::EceBin => fixed(estimate::ece_bin(bins, settings.norm)),
                EstimatorKind::EceDebias => fixed(estimate::ece_debias(bins, settings.norm)),
                _ => fixed(estimate::mce(bins)),
            }
        })
        .collect()
}

/// The bootstrap of every target over the sorted weighted rows: resample r's counts
/// c_i are the unweighted report's (same generator, same n), row i weighs c_i·w_i; the
/// jackknife leaves out the unweighted report's groups of rows.
fn weighted_bootstrap(
    rows: &Rows,
    targets: &[Target],
    estimates: &[f64],
    settings: &EvaluationSettings,
    resampling: super::Resampling,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Result<super::Bootstrap, super::BootstrapError>>, ReportError> {
    let n = rows.scores.len();
    let width = targets.len().max(1);
    let mut per_resample = bootstrap::results(
        Err(EvaluateError::BinsRequired),
        resampling.resamples.saturating_mul(width),
    )?;
    per_resample
        .par_chunks_mut(width)
        .enumerate()
        .for_each_init(
            || (vec![0u32; n], vec![0.0f64; n]),
            |(counts, weighted), (r, out)| {
                let mut rng = repetition_rng(resampling.seed ^ BOOTSTRAP_DOMAIN, r as u64);
                multinomial_counts(counts, n as u64, &mut rng, &mut |_, _| {});
                for ((w, &c), &base) in weighted.iter_mut().zip(counts.iter()).zip(&rows.weights) {
                    *w = f64::from(c) * base;
                }
                for (slot, result) in out
                    .iter_mut()
                    .zip(evaluate_all(targets, rows, weighted, settings))
                {
                    *slot = result;
                }
                progress();
            },
        );
    let (groups, assignment) = jackknife_groups(n, resampling.seed ^ JACKKNIFE_DOMAIN);
    let per_group: Vec<Vec<Result<Evaluation, EvaluateError>>> = (0..groups)
        .into_par_iter()
        .map(|g| {
            let left: Vec<f64> = assignment
                .iter()
                .zip(&rows.weights)
                .map(|(&a, &w)| if a == g { 0.0 } else { w })
                .collect();
            evaluate_all(targets, rows, &left, settings)
        })
        .collect();
    collect(
        targets,
        estimates,
        &per_resample,
        &per_group,
        resampling.level,
    )
}

/// One reliability diagram of weighted rows: the weighted bins, with each bin's rows,
/// hit rows and Σw² found by walking the sorted rows through the bins in order (every
/// binning here holds contiguous runs of sorted rows; a row split between equal-weight
/// bins puts its part in each), and a Wilson interval at the bin's Kish effective count.
fn reliability(rows: &Rows, binning: Binning, count: usize, level: f64) -> Reliability {
    // The estimators made these bins already: they cannot fail here.
    let bins = weights::bins(&rows.scores, &rows.labels, &rows.weights, binning, count)
        .map(|(bins, _)| bins)
        .unwrap_or_else(|_| vec![WeightedBin::default(); 1]);
    // The parts of the rows in each bin: row i's weight fills bin k up to W_k, the rest
    // goes on; a remainder below 1e-9 of the row's weight is rounding, not a part.
    let mut squares = vec![0.0f64; bins.len()];
    let mut row_counts = vec![(0u64, 0u64); bins.len()];
    let (mut k, mut room) = (0usize, bins.first().map_or(0.0, |b| b.weight));
    for (&w, &y) in rows.weights.iter().zip(&rows.labels) {
        let mut left = w;
        loop {
            // Past the bins that are full (to rounding) or empty.
            while room <= 1e-9 * bins[k].weight && k + 1 < bins.len() {
                k += 1;
                room = bins[k].weight;
            }
            let part = if k + 1 == bins.len() {
                left
            } else {
                left.min(room)
            };
            squares[k] += part * part;
            row_counts[k].0 += 1;
            row_counts[k].1 += u64::from(y);
            left -= part;
            room -= part;
            if left <= 1e-9 * w {
                break;
            }
        }
    }
    Reliability {
        binning,
        bins: bins
            .iter()
            .zip(&squares)
            .zip(&row_counts)
            .map(|((b, &sq), &(count, hits))| {
                let filled = b.weight > 0.0;
                let effective = if filled {
                    b.weight * b.weight / sq
                } else {
                    0.0
                };
                let accuracy = b.weighted_hits / b.weight;
                ReliabilityBin {
                    count,
                    hits,
                    mean_score: filled.then(|| b.weighted_scores / b.weight),
                    accuracy: filled.then_some(accuracy),
                    interval: filled.then(|| wilson_share(accuracy, effective, level)),
                    weight: Some(BinWeight {
                        weight: b.weight,
                        weighted_hits: b.weighted_hits,
                        effective,
                    }),
                }
            })
            .collect(),
    }
}

/// The report of (scores, labels) with a frequency weight per row (the module's doc).
/// Errors as [`super::report`], and [`ReportError::Weight`] for a weight that is
/// negative, NaN or infinite (with its row), as many weights as rows, or weights that
/// are all 0. `progress` is called once per bootstrap resample.
pub fn weighted_report(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    settings: &ReportSettings,
    progress: &(dyn Fn(Phase) + Sync),
) -> Result<Report, ReportError> {
    settings.check()?;
    let (total, positive) = weights::check(scores, labels, weights).map_err(|e| match e {
        WeightError::Push(e) => ReportError::Push(e),
        WeightError::Estimate(EstimateError::NoSamples) => ReportError::NoSamples,
        e => ReportError::Weight(e),
    })?;
    let rows = Rows::of(scores, labels, weights);
    let n = rows.scores.len();
    debug_assert_eq!(n as u64, positive);
    crate::buffer::check_capacity(n).map_err(|_| ReportError::TooManySamples(n))?;
    // No simulations, refits or test: the parametric part is not made for weighted rows.
    let settings = ReportSettings {
        simulations: None,
        refits: Some(0),
        test: None,
        ..*settings
    };
    let evaluation = EvaluationSettings {
        norm: settings.norm,
        sweep: settings.sweep,
    };
    let sum_sq: f64 = rows.weights.iter().map(|w| w * w).sum();
    let summary = WeightSummary {
        rows: scores.len(),
        zero_rows: scores.len() - n,
        total,
        effective_n: total * total / sum_sq,
        accuracy: rows
            .weights
            .iter()
            .zip(&rows.labels)
            .map(|(w, &y)| w * f64::from(y))
            .sum::<f64>()
            / total,
        mean_confidence: rows
            .weights
            .iter()
            .zip(&rows.scores)
            .map(|(w, f)| w * f)
            .sum::<f64>()
            / total,
        integer: weights.iter().all(|w| w.fract() == 0.0),
    };

    let mut available = Vec::new();
    let mut values = Vec::new();
    let mut unavailable = Vec::new();
    let all = targets(&settings);
    for (t, e) in all
        .iter()
        .zip(evaluate_all(&all, &rows, &rows.weights, &evaluation))
    {
        match e {
            Ok(e) => {
                available.push(*t);
                values.push(e);
            }
            Err(cause) if t.spec.binning().is_none() => unavailable.push(Unavailable {
                target: *t,
                class: None,
                cause,
            }),
            Err(cause) => {
                return Err(ReportError::Estimate {
                    estimator: t.spec,
                    cause,
                })
            }
        }
    }
    let estimates: Vec<f64> = values.iter().map(|e| e.value).collect();
    let boots = if settings.resamples > 0 {
        Some(weighted_bootstrap(
            &rows,
            &available,
            &estimates,
            &evaluation,
            super::Resampling {
                resamples: settings.resamples,
                level: settings.level,
                seed: settings.seed,
            },
            &|| progress(Phase::Bootstrap),
        )?)
    } else {
        None
    };
    let mut boots = boots.map(Vec::into_iter);
    let estimators: Vec<EstimatorResult> = available
        .iter()
        .zip(&values)
        .map(|(t, e)| EstimatorResult {
            target: *t,
            estimate: e.value,
            sweep_bins: e.sweep_bins,
            bootstrap: boots.as_mut().and_then(Iterator::next),
        })
        .collect();

    let em = Binning::EqualMass(settings.ties);
    let em_sweep = estimators
        .iter()
        .find(|e| {
            e.target.spec.kind() == EstimatorKind::EceSweep && e.target.spec.binning() == Some(em)
        })
        .and_then(|e| e.sweep_bins)
        .unwrap_or(1);
    let reliability = vec![
        reliability(
            &rows,
            Binning::EqualWidth(settings.closure),
            settings.bins,
            settings.level,
        ),
        reliability(&rows, em, em_sweep, settings.level),
    ];
    let parametric = Err(ParametricError::Weighted);
    let recommendation = recommend(&estimators, &parametric, &settings);
    debug_assert!(estimators.iter().any(|e| estimates_tce(&e.target)));
    Ok(Report {
        settings,
        n,
        hits: rows.labels.iter().map(|&y| u64::from(y)).sum(),
        estimators,
        unavailable,
        reliability,
        parametric,
        recommendation,
        ties: tie_summary(&rows.scores),
        calibration_test: None,
        weights: Some(summary),
    })
}

/// The ties of sorted scores, counted in rows as the unweighted report counts samples.
fn tie_summary(sorted: &[f64]) -> TieSummary {
    let (mut distinct, mut largest) = (0usize, (0.0, 0usize));
    let mut start = 0;
    while start < sorted.len() {
        let len = sorted[start..].partition_point(|&s| s == sorted[start]);
        distinct += 1;
        if len > largest.1 {
            largest = (sorted[start], len);
        }
        start += len;
    }
    TieSummary {
        n: sorted.len(),
        distinct,
        largest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::SortedBuffer;
    use crate::error::BadWeights;
    use crate::report::{report, Resampling};
    use crate::sim::estimator::DataView;
    use crate::storage::sorting_slots;

    fn settings(resamples: usize) -> ReportSettings {
        ReportSettings {
            resamples,
            simulations: Some(2),
            test: None,
            seed: 7,
            ..ReportSettings::default()
        }
    }

    /// Scores with ties and a miscalibrated curve, n rows.
    fn data(n: usize) -> (Vec<f64>, Vec<u8>) {
        let scores: Vec<f64> = (0..n).map(|i| ((i * 37) % 101) as f64 / 100.0).collect();
        let labels: Vec<u8> = (0..n).map(|i| u8::from((i * 7) % 10 < 6)).collect();
        (scores, labels)
    }

    /// The unweighted estimators (the report's own path) on rows repeated.
    fn unweighted(targets: &[Target], scores: &[f64], labels: &[u8]) -> Vec<Evaluation> {
        let mut storage = sorting_slots(scores.len()).unwrap();
        let mut buffer = SortedBuffer::with_storage(&mut storage[..]).unwrap();
        buffer.push_batch(scores, labels).unwrap();
        let data = DataView {
            sorted: buffer.sorted(),
            scores,
            labels,
        };
        targets
            .iter()
            .map(|t| {
                t.spec
                    .evaluate(&data, t.bins, &EvaluationSettings::default())
                    .unwrap()
            })
            .collect()
    }

    fn repeat(scores: &[f64], labels: &[u8], times: &[u64]) -> (Vec<f64>, Vec<u8>) {
        let (mut s, mut y) = (Vec::new(), Vec::new());
        for ((&f, &l), &k) in scores.iter().zip(labels).zip(times) {
            for _ in 0..k {
                s.push(f);
                y.push(l);
            }
        }
        (s, y)
    }

    /// Naive oracle of the bootstrap: with whole weights, resample r is the unweighted
    /// estimator on the sorted rows repeated c_i·w_i times (c_i drawn by the same
    /// generator), and the jackknife's acceleration is that of the rows of each left-out
    /// group dropped and the rest repeated w_i times.
    #[test]
    fn whole_weights_resample_as_rows_repeated_by_count_times_weight() {
        let (scores, labels) = data(150);
        let weights: Vec<f64> = (0..150).map(|i| f64::from((i * 13) % 4)).collect();
        let r = weighted_report(&scores, &labels, &weights, &settings(12), &|_| {}).unwrap();
        let rows = Rows::of(&scores, &labels, &weights);
        let n = rows.scores.len();
        assert_eq!(n, weights.iter().filter(|&&w| w > 0.0).count());
        let targets: Vec<Target> = r.estimators.iter().map(|e| e.target).collect();
        let mut counts = vec![0u32; n];
        for resample in 0..12u64 {
            let mut rng = repetition_rng(7 ^ BOOTSTRAP_DOMAIN, resample);
            multinomial_counts(&mut counts, n as u64, &mut rng, &mut |_, _| {});
            let times: Vec<u64> = counts
                .iter()
                .zip(&rows.weights)
                .map(|(&c, &w)| u64::from(c) * w as u64)
                .collect();
            let (s, y) = repeat(&rows.scores, &rows.labels, &times);
            for (e, naive) in r.estimators.iter().zip(unweighted(&targets, &s, &y)) {
                let boot = e.bootstrap.as_ref().unwrap().as_ref().unwrap();
                let got = boot.replicates[resample as usize];
                assert!(
                    (got - naive.value).abs() < 1e-12,
                    "{}: {got} {naive:?}",
                    e.target.spec
                );
                if let Some(bins) = &boot.sweep_bins {
                    assert_eq!(Some(bins[resample as usize]), naive.sweep_bins);
                }
            }
        }
        let (groups, assignment) = jackknife_groups(n, 7 ^ JACKKNIFE_DOMAIN);
        let jackknife: Vec<Vec<Evaluation>> = (0..groups)
            .map(|g| {
                let times: Vec<u64> = assignment
                    .iter()
                    .zip(&rows.weights)
                    .map(|(&a, &w)| if a == g { 0 } else { w as u64 })
                    .collect();
                let (s, y) = repeat(&rows.scores, &rows.labels, &times);
                unweighted(&targets, &s, &y)
            })
            .collect();
        for (t, e) in r.estimators.iter().enumerate() {
            let values: Vec<f64> = jackknife.iter().map(|j| j[t].value).collect();
            let boot = e.bootstrap.as_ref().unwrap().as_ref().unwrap();
            let (_, _, _, a) = bootstrap::intervals(e.estimate, &boot.replicates, &values, 0.95);
            assert!(
                (a - boot.acceleration).abs() < 1e-9 || (a.is_nan() && boot.acceleration.is_nan()),
                "{}: {a} {}",
                e.target.spec,
                boot.acceleration
            );
        }
    }

    /// Weights all 1: the unweighted report's estimates, b*, replicates (the same
    /// counts), intervals and reliability bins, to rounding (f64 sums here, fixed-point
    /// sums there).
    #[test]
    fn unit_weights_give_the_unweighted_report() {
        for n in [40usize, 300] {
            let (scores, labels) = data(n);
            let ones = vec![1.0; n];
            let w = weighted_report(&scores, &labels, &ones, &settings(30), &|_| {}).unwrap();
            let u = report(&scores, &labels, &settings(30), &|_| {}).unwrap();
            assert_eq!(w.n, u.n);
            assert_eq!(w.hits, u.hits);
            assert_eq!(w.estimators.len(), u.estimators.len());
            let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
            for (a, b) in w.estimators.iter().zip(&u.estimators) {
                assert_eq!(a.target, b.target);
                assert!(close(a.estimate, b.estimate), "{}", a.target.spec);
                assert_eq!(a.sweep_bins, b.sweep_bins);
                let (ba, bb) = (
                    a.bootstrap.as_ref().unwrap().as_ref().unwrap(),
                    b.bootstrap.as_ref().unwrap().as_ref().unwrap(),
                );
                for (x, y) in ba.replicates.iter().zip(&bb.replicates) {
                    assert!(close(*x, *y), "{}: {x} {y}", a.target.spec);
                }
                assert_eq!(ba.sweep_bins, bb.sweep_bins);
                assert!(close(ba.percentile.lower, bb.percentile.lower));
                assert!(close(ba.percentile.upper, bb.percentile.upper));
                assert_eq!(ba.bca.is_some(), bb.bca.is_some());
                if let (Some(x), Some(y)) = (ba.bca, bb.bca) {
                    assert!((x.lower - y.lower).abs() < 1e-9 && (x.upper - y.upper).abs() < 1e-9);
                }
            }
            for (a, b) in w.reliability.iter().zip(&u.reliability) {
                assert_eq!(a.binning, b.binning);
                assert_eq!(a.bins.len(), b.bins.len());
                for (x, y) in a.bins.iter().zip(&b.bins) {
                    assert_eq!((x.count, x.hits), (y.count, y.hits));
                    assert_eq!(x.weight.map(|w| w.weight), Some(y.count as f64));
                    assert_eq!(x.weight.map(|w| w.effective), Some(y.count as f64));
                    match (x.interval, y.interval) {
                        (Some(p), Some(q)) => {
                            assert!((p.lower - q.lower).abs() < 1e-12);
                            assert!((p.upper - q.upper).abs() < 1e-12);
                        }
                        (p, q) => assert_eq!(p, q),
                    }
                }
            }
            assert_eq!(
                w.recommendation.estimator,
                u.estimators
                    .iter()
                    .position(|e| {
                        e.target.spec.kind() == EstimatorKind::EceSweep
                            && e.target.spec.binning() == Some(Binning::EqualMass(settings(0).ties))
                    })
                    .unwrap()
            );
            assert_eq!(w.parametric, Err(ParametricError::Weighted));
            let summary = w.weights.unwrap();
            assert_eq!(
                (summary.rows, summary.zero_rows, summary.total),
                (n, 0, n as f64)
            );
            assert!((summary.effective_n - n as f64).abs() < 1e-9);
            assert!(summary.integer);
        }
    }

    /// Whole weights: each estimate, b* and reliability bin is the unweighted one of the
    /// rows repeated. The intervals are not: repeated rows are resampled one copy at a
    /// time, a weighted row all its weight at once.
    #[test]
    fn whole_weights_estimate_as_rows_repeated() {
        let (scores, labels) = data(200);
        let weights: Vec<f64> = (0..200).map(|i| f64::from((i * 13) % 5)).collect();
        let times: Vec<u64> = weights.iter().map(|&w| w as u64).collect();
        let (s, y) = repeat(&scores, &labels, &times);
        let w = weighted_report(&scores, &labels, &weights, &settings(0), &|_| {}).unwrap();
        let u = report(&s, &y, &settings(0), &|_| {}).unwrap();
        for (a, b) in w.estimators.iter().zip(&u.estimators) {
            assert_eq!(a.target, b.target);
            assert!((a.estimate - b.estimate).abs() < 1e-12, "{}", a.target.spec);
            assert_eq!(a.sweep_bins, b.sweep_bins);
        }
        for (a, b) in w.reliability.iter().zip(&u.reliability) {
            for (x, y) in a.bins.iter().zip(&b.bins) {
                assert_eq!(x.weight.map(|w| w.weight), Some(y.count as f64));
                assert_eq!(x.weight.map(|w| w.weighted_hits), Some(y.hits as f64));
                assert_eq!(x.accuracy.is_some(), y.accuracy.is_some());
                if let (Some(p), Some(q)) = (x.accuracy, y.accuracy) {
                    assert!((p - q).abs() < 1e-12);
                }
            }
        }
        let summary = w.weights.unwrap();
        assert_eq!(
            summary.zero_rows,
            weights.iter().filter(|&&w| w == 0.0).count()
        );
        assert_eq!(summary.total, s.len() as f64);
        // Kish: (Σw)² / Σw².
        let sq: f64 = weights.iter().map(|w| w * w).sum();
        assert!((summary.effective_n - summary.total * summary.total / sq).abs() < 1e-9);
        let _ = Resampling {
            resamples: 0,
            level: 0.95,
            seed: 0,
        };
    }

    /// Rows of weight 0 change nothing: the report of the rest, bit for bit.
    #[test]
    fn zero_weights_are_rows_left_out() {
        let (scores, labels) = data(120);
        let weights: Vec<f64> = (0..120)
            .map(|i| {
                if i % 7 == 3 {
                    0.0
                } else {
                    0.25 + (i % 5) as f64 * 0.6
                }
            })
            .collect();
        let kept: Vec<usize> = (0..120).filter(|&i| weights[i] > 0.0).collect();
        let pick = |v: &[f64]| kept.iter().map(|&i| v[i]).collect::<Vec<f64>>();
        let labels_kept: Vec<u8> = kept.iter().map(|&i| labels[i]).collect();
        let a = weighted_report(&scores, &labels, &weights, &settings(20), &|_| {}).unwrap();
        let b = weighted_report(
            &pick(&scores),
            &labels_kept,
            &pick(&weights),
            &settings(20),
            &|_| {},
        )
        .unwrap();
        assert_eq!(a.estimators, b.estimators);
        assert_eq!(a.reliability, b.reliability);
        assert_eq!(a.weights.unwrap().zero_rows, 120 - kept.len());
        assert!(!a.weights.unwrap().integer);
    }

    /// Each reliability bin's Σw² (through its Kish count) from the walk equals a naive
    /// sum over the rows of each equal-width bin; the split rows of equal-weight bins
    /// keep the total weight and every row counted.
    #[test]
    fn reliability_bins_by_hand() {
        let (scores, labels) = data(90);
        let weights: Vec<f64> = (0..90).map(|i| 0.3 + (i % 4) as f64 * 1.7).collect();
        let rows = Rows::of(&scores, &labels, &weights);
        let closure = crate::binning::Closure::Left;
        let ew = reliability(&rows, Binning::EqualWidth(closure), 15, 0.95);
        let mut naive = vec![(0.0f64, 0.0f64, 0u64); 15];
        for ((&f, &w), _) in scores.iter().zip(&weights).zip(&labels) {
            let k = closure.bin_index(f, 15);
            naive[k].0 += w;
            naive[k].1 += w * w;
            naive[k].2 += 1;
        }
        for (b, (w, sq, count)) in ew.bins.iter().zip(naive) {
            assert_eq!(b.count, count);
            let got = b.weight.unwrap();
            assert!((got.weight - w).abs() < 1e-9);
            if w > 0.0 {
                assert!((got.effective - w * w / sq).abs() < 1e-9);
            }
        }
        let em = reliability(
            &rows,
            Binning::EqualMass(crate::binning::Ties::Split),
            7,
            0.95,
        );
        let total: f64 = em.bins.iter().map(|b| b.weight.unwrap().weight).sum();
        assert!((total - weights.iter().sum::<f64>()).abs() < 1e-9);
        assert!(em.bins.iter().map(|b| b.count).sum::<u64>() >= 90);
        for b in &em.bins {
            let w = b.weight.unwrap();
            // n_eff between 1 and the rows in the bin.
            assert!(
                w.effective <= b.count as f64 + 1e-9 && w.effective >= 1.0 - 1e-9,
                "{b:?}"
            );
        }
    }

    #[test]
    fn bad_weights_are_named_errors() {
        let (scores, labels) = data(10);
        let s = settings(10);
        let mut w = vec![1.0; 10];
        w[4] = -1.0;
        assert_eq!(
            weighted_report(&scores, &labels, &w, &s, &|_| {}).unwrap_err(),
            ReportError::Weight(WeightError::Weights(BadWeights::InvalidWeight { index: 4 }))
        );
        w[4] = f64::NAN;
        assert_eq!(
            weighted_report(&scores, &labels, &w, &s, &|_| {}).unwrap_err(),
            ReportError::Weight(WeightError::Weights(BadWeights::InvalidWeight { index: 4 }))
        );
        assert_eq!(
            weighted_report(&scores, &labels, &[0.0; 10], &s, &|_| {}).unwrap_err(),
            ReportError::Weight(WeightError::Weights(BadWeights::ZeroTotalWeight))
        );
        assert_eq!(
            weighted_report(&scores, &labels, &[1.0; 9], &s, &|_| {}).unwrap_err(),
            ReportError::Weight(WeightError::Weights(BadWeights::LengthMismatch {
                rows: 10,
                weights: 9
            }))
        );
        assert_eq!(
            weighted_report(&[], &[], &[], &s, &|_| {}).unwrap_err(),
            ReportError::NoSamples
        );
    }

    /// Smooth ECE (p = 1) and KDE join, weighted: with weights all 1 the unweighted
    /// report's values and replicates (to rounding), and with whole weights the values
    /// of the rows repeated.
    #[test]
    fn smooth_ece_and_kde_are_weighted() {
        let (scores, labels) = data(120);
        let s = ReportSettings {
            norm: crate::norm::Norm::L1,
            kde: true,
            ..settings(6)
        };
        let w = weighted_report(&scores, &labels, &[1.0; 120], &s, &|_| {}).unwrap();
        let u = report(&scores, &labels, &s, &|_| {}).unwrap();
        assert_eq!(w.estimators.len(), 10);
        assert!(w.unavailable.is_empty());
        for (a, b) in w.estimators.iter().zip(&u.estimators).skip(8) {
            assert_eq!(a.target, b.target);
            assert!((a.estimate - b.estimate).abs() < 1e-12, "{}", a.target.spec);
            let (ra, rb) = (
                &a.bootstrap.as_ref().unwrap().as_ref().unwrap().replicates,
                &b.bootstrap.as_ref().unwrap().as_ref().unwrap().replicates,
            );
            for (x, y) in ra.iter().zip(rb) {
                assert!((x - y).abs() < 1e-9, "{}: {x} {y}", a.target.spec);
            }
        }
        let weights: Vec<f64> = (0..120).map(|i| f64::from(1 + (i * 7) % 3)).collect();
        let times: Vec<u64> = weights.iter().map(|&w| w as u64).collect();
        let (rs, ry) = repeat(&scores, &labels, &times);
        let w = weighted_report(
            &scores,
            &labels,
            &weights,
            &ReportSettings { resamples: 0, ..s },
            &|_| {},
        )
        .unwrap();
        let u = report(&rs, &ry, &ReportSettings { resamples: 0, ..s }, &|_| {}).unwrap();
        for (a, b) in w.estimators.iter().zip(&u.estimators).skip(8) {
            assert!((a.estimate - b.estimate).abs() < 1e-12, "{}", a.target.spec);
        }
    }
}
