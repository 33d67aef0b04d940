//! The classwise report (`tce report --classwise`, docs/report.md "Classwise"): each
//! class k's one-vs-rest samples (p_ik, 1 if row i's class is k) get the whole top-label
//! report — estimators, bootstrap intervals, fit, fit check, bias at n — exactly as
//! [`super::report`] makes it for that class alone; then every estimator is combined
//! over the classes into the marginal calibration error of Kumar, Liang & Ma (2019):
//! the l_p mean (Σ_k v_k^p / K)^(1/p) of the per-class values, as `tce estimate
//! --classwise` combines them ([`combine`]).
//!
//! - **Its interval** resamples *rows* jointly: one multinomial count per row, each
//!   class's weights those counts in its own sorted order, the marginal recomputed from
//!   the K per-class values of the same resample; percentile and BCa as for one class
//!   (the jackknife leaves out groups of rows).
//! - **Its bias at n**: simulation j of every class's fitted model combined into one
//!   marginal value, against the l_p mean of the classes' fitted TCEs. The classes are
//!   simulated independently (a one-vs-rest fit does not model the dependence between
//!   the classes of a row), so this is the marginal's error when the per-class errors
//!   are independent.
//! - **The recommendation**: the estimator with the lowest RMSE of those marginal
//!   values; with the caveat when any class's fit is flagged; without a fit for every
//!   class, equal-mass ECE_sweep.

use rayon::prelude::*;

use super::bootstrap::{evaluate_all, jackknife_groups, multinomial_counts, results};
use super::weighted::{Packed, Prefix};
use super::{
    estimates_tce, report, targets, Basis, Bootstrap, BootstrapError, Phase, Report, ReportError,
    ReportSettings, Resampling, Target, Unavailable,
};
use crate::buffer::{Slot, SortedBuffer, SortedSamples};
use crate::norm::Norm;
use crate::sim::estimator::{EstimatorKind, EvaluateError, EvaluationSettings};
use crate::sim::repetition_rng;
use crate::sim::runner::Summary;
use crate::Binning;

/// Domain of the joint resamples' generators (apart from the per-class bootstraps').
const MARGINAL_DOMAIN: u64 = 0xC1A5_5315_E000_0003;
/// Domain of the row groups of the marginal's jackknife.
const MARGINAL_JACKKNIFE_DOMAIN: u64 = 0xC1A5_5315_E000_0004;

/// One class's one-vs-rest samples: n of them, one per row, in row order.
#[derive(Clone, Copy, Debug)]
pub struct ClassColumn<'a> {
    /// The class id k.
    pub class: usize,
    /// Its name (a CSV column, or `class k`).
    pub name: &'a str,
    /// p_ik of every row.
    pub scores: &'a [f64],
    /// 1 where row i's true class is k.
    pub labels: &'a [u8],
}

/// One class's report.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassReport {
    /// The class id.
    pub class: usize,
    /// Its name.
    pub name: String,
    /// The report of its one-vs-rest samples, as [`super::report`] makes it.
    pub report: Report,
}

/// One estimator combined over the classes.
#[derive(Clone, Debug, PartialEq)]
pub struct MarginalResult {
    /// The estimator (the sweep's b* differs between classes).
    pub target: Target,
    /// [`combine`] of the classes' values on the data.
    pub value: f64,
    /// Its bootstrap over jointly resampled rows (`None` with 0 resamples). The replicates
    /// of the sweep carry no b* (each class has its own).
    pub bootstrap: Option<Result<Bootstrap, BootstrapError>>,
    /// Its error at n on the per-class fitted models (TCE estimators with a fit for every
    /// class).
    pub bias: Option<Summary>,
}

impl MarginalResult {
    /// The interval to quote: BCa when defined, else percentile; with its kind.
    pub fn interval(&self) -> Option<(super::Interval, super::IntervalKind)> {
        let boot = self.bootstrap.as_ref()?.as_ref().ok()?;
        Some(match boot.bca {
            Some(bca) => (bca, super::IntervalKind::Bca),
            None => (boot.percentile, super::IntervalKind::Percentile),
        })
    }
}

/// The marginal estimator to report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarginalRecommendation {
    /// Index in [`ClasswiseReport::marginal`].
    pub estimator: usize,
    /// Why it: [`Basis::LowestRmsePoorFit`] when any class's fit is flagged,
    /// [`Basis::NoFit`] when a class has no fit.
    pub basis: Basis,
    /// Index in [`ClasswiseReport::marginal`] of the usual equal-width ECE_bin.
    pub usual: Option<usize>,
}

/// Everything the classwise report computes.
#[derive(Clone, Debug, PartialEq)]
pub struct ClasswiseReport {
    /// The settings, with the number of simulations resolved.
    pub settings: ReportSettings,
    /// Rows (each class has n samples).
    pub n: usize,
    /// Every class, in class order.
    pub classes: Vec<ClassReport>,
    /// Every estimator over the classes, in [`targets`] order (those defined on every
    /// class).
    pub marginal: Vec<MarginalResult>,
    /// The estimators of [`targets`] undefined on some class, each with the first such
    /// class and why.
    pub unavailable: Vec<Unavailable>,
    /// The l_p mean of the classes' fitted TCEs, when every class has a fit.
    pub tce: Option<f64>,
    /// Classes whose fit does not reproduce their data.
    pub flagged: usize,
    /// Classes without a fit.
    pub unfitted: usize,
    /// What to report.
    pub recommendation: MarginalRecommendation,
}

/// The l_p mean of per-class values (Kumar et al.'s marginal calibration error, each
/// class weighted 1/K): (Σ_k v_k^p / K)^(1/p); the plain mean at p = 1 and for smooth
/// ECE (an l1 quantity whatever p); the maximum for MCE (the l_∞ case). The same
/// arithmetic as `tce estimate --classwise`.
pub fn combine(kind: EstimatorKind, values: &[f64], norm: Norm) -> f64 {
    let k = values.len() as f64;
    let p = norm.p();
    if kind == EstimatorKind::Mce {
        values.iter().copied().fold(0.0, f64::max)
    } else if p == 1.0 || kind == EstimatorKind::SmoothEce {
        values.iter().sum::<f64>() / k
    } else if p == 2.0 {
        (values.iter().map(|v| v * v).sum::<f64>() / k).sqrt()
    } else {
        // Scaled by the largest value, so that a large p does not underflow to 0.
        let terms: Vec<(f64, f64)> = values.iter().map(|&v| (1.0 / k, v)).collect();
        crate::sim::tce::lp_of(&terms, p)
    }
}

/// The classwise report of `columns` (at least one class, all of the same length n ≥ 1).
/// `progress` is called once per bootstrap resample and simulation of every class, and
/// once per joint resample (as [`Phase::Bootstrap`]).
pub fn classwise_report(
    columns: &[ClassColumn<'_>],
    settings: &ReportSettings,
    progress: &(dyn Fn(Phase) + Sync),
) -> Result<ClasswiseReport, ReportError> {
    settings.check()?;
    if let Some(m) = settings.refits.filter(|&m| m > 0) {
        return Err(ReportError::RefitsNotClasswise(m));
    }
    let first = columns.first().ok_or(ReportError::NoSamples)?;
    let n = first.scores.len();
    for c in columns {
        crate::sample::check_batch(c.scores, c.labels).map_err(ReportError::Push)?;
        if c.scores.len() != n {
            return Err(ReportError::Push(crate::error::PushError::LengthMismatch {
                scores: c.scores.len(),
                labels: n,
            }));
        }
    }
    let classes = columns
        .iter()
        .map(|c| {
            Ok(ClassReport {
                class: c.class,
                name: c.name.to_owned(),
                // A class's plug-in error is not measured (a fit per refit and class).
                report: report(
                    c.scores,
                    c.labels,
                    &ReportSettings {
                        refits: Some(0),
                        ..*settings
                    },
                    progress,
                )?,
            })
        })
        .collect::<Result<Vec<_>, ReportError>>()?;
    let settings = classes[0].report.settings;
    let norm = settings.norm;
    // An estimator undefined on some class (KDE on a class that never occurs) has no
    // marginal either: it is left out with the first such class's reason.
    let mut unavailable = Vec::new();
    let targets: Vec<Target> = targets(&settings)
        .into_iter()
        .filter(|t| {
            let missing = classes.iter().find_map(|c| {
                let u = c.report.unavailable.iter().find(|u| u.target == *t)?;
                Some(Unavailable {
                    class: Some(c.class),
                    ..*u
                })
            });
            unavailable.extend(missing);
            missing.is_none()
        })
        .collect();
    let value_of = |t: &Target| {
        let values: Vec<f64> = classes
            .iter()
            .filter_map(|c| c.report.estimators.iter().find(|e| e.target == *t))
            .map(|e| e.estimate)
            .collect();
        combine(t.spec.kind(), &values, norm)
    };
    let values: Vec<f64> = targets.iter().map(value_of).collect();

    let boots = if settings.resamples > 0 {
        Some(joint_bootstrap(
            columns,
            &targets,
            &values,
            &EvaluationSettings {
                norm,
                sweep: settings.sweep,
            },
            Resampling {
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

    let fits: Option<Vec<&super::Parametric>> = classes
        .iter()
        .map(|c| c.report.parametric.as_ref().ok())
        .collect();
    let unfitted = classes
        .iter()
        .filter(|c| c.report.parametric.is_err())
        .count();
    let flagged = classes
        .iter()
        .filter(|c| c.report.parametric.as_ref().is_ok_and(|p| !p.reproduces))
        .count();
    let tce = fits.as_ref().map(|fits| {
        let tces: Vec<f64> = fits.iter().map(|p| p.tce).collect();
        combine(EstimatorKind::EceBin, &tces, norm)
    });
    let marginal: Vec<MarginalResult> = targets
        .iter()
        .zip(&values)
        .map(|(t, &value)| {
            let bias = fits.as_ref().zip(tce).and_then(|(fits, tce)| {
                if !estimates_tce(t) {
                    return None;
                }
                let rows: Vec<&Vec<f64>> = fits
                    .iter()
                    .map(|p| {
                        let i = p.bias.iter().position(|b| b.target == *t)?;
                        Some(&p.simulated[i])
                    })
                    .collect::<Option<_>>()?;
                let m = rows.iter().map(|r| r.len()).min()?;
                let combined: Vec<f64> = (0..m)
                    .map(|j| {
                        let per_class: Vec<f64> = rows.iter().map(|r| r[j]).collect();
                        combine(t.spec.kind(), &per_class, norm)
                    })
                    .collect();
                (m > 0).then(|| Summary::of(&combined, tce))
            });
            MarginalResult {
                target: *t,
                value,
                bootstrap: boots.as_mut().and_then(Iterator::next),
                bias,
            }
        })
        .collect();

    let is = |r: &MarginalResult, kind: EstimatorKind, binning: Binning| {
        r.target.spec.kind() == kind && r.target.spec.binning() == Some(binning)
    };
    let usual = marginal.iter().position(|r| {
        is(
            r,
            EstimatorKind::EceBin,
            Binning::EqualWidth(settings.closure),
        )
    });
    let best = marginal
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, r.bias?.rmse)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);
    let recommendation = match best {
        Some(i) if unfitted == 0 => MarginalRecommendation {
            estimator: i,
            basis: if flagged == 0 {
                Basis::LowestRmse
            } else {
                Basis::LowestRmsePoorFit
            },
            usual,
        },
        _ => MarginalRecommendation {
            estimator: marginal
                .iter()
                .position(|r| {
                    is(
                        r,
                        EstimatorKind::EceSweep,
                        Binning::EqualMass(settings.ties),
                    )
                })
                .expect("the sweep is always a target"),
            basis: Basis::NoFit,
            usual,
        },
    };
    Ok(ClasswiseReport {
        settings,
        n,
        classes,
        marginal,
        unavailable,
        tce,
        flagged,
        unfitted,
        recommendation,
    })
}

/// One class, sorted once: its samples, packed weights, and the row of each sorted
/// position (the arrival index the buffer keeps).
struct SortedClass<'a> {
    sorted: SortedSamples<'a>,
    packed: Packed,
    rows: Vec<usize>,
}

/// The bootstrap of every target's marginal value over jointly resampled rows;
/// [`ReportError::OutOfMemory`] if the samples' or the results' memory cannot be had.
fn joint_bootstrap(
    columns: &[ClassColumn<'_>],
    targets: &[Target],
    values: &[f64],
    settings: &EvaluationSettings,
    resampling: Resampling,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Result<Bootstrap, BootstrapError>>, ReportError> {
    let n = columns[0].scores.len();
    let mut storage: Vec<Box<[Slot]>> = columns
        .iter()
        .map(|_| {
            crate::storage::sorting_slots(n).map_err(|_| ReportError::OutOfMemory {
                bytes: 2 * n * core::mem::size_of::<Slot>(),
            })
        })
        .collect::<Result<_, _>>()?;
    let mut buffers: Vec<SortedBuffer<&mut [Slot]>> = storage
        .iter_mut()
        .map(|s| SortedBuffer::with_storage(&mut s[..]).expect("a report's n fits a buffer"))
        .collect();
    for (buffer, c) in buffers.iter_mut().zip(columns) {
        buffer
            .push_batch(c.scores, c.labels)
            .expect("checked by the per-class reports");
    }
    let classes: Vec<SortedClass<'_>> = buffers
        .iter_mut()
        .map(|b| {
            let sorted = b.sorted_parallel();
            SortedClass {
                packed: Packed::new(&sorted),
                rows: sorted
                    .slots()
                    .iter()
                    .map(|s| (s.order >> 1) as usize)
                    .collect(),
                sorted,
            }
        })
        .collect();
    let classes = &classes;
    let norm = settings.norm;

    // The marginal of every target under row weights `row_weights`.
    let evaluate = |row_weights: &[u32],
                    weights: &mut Vec<u32>,
                    prefix: &mut Prefix,
                    raw: &mut (Vec<f64>, Vec<u8>)|
     -> Vec<Result<f64, EvaluateError>> {
        let mut per_target: Vec<Result<Vec<f64>, EvaluateError>> =
            vec![Ok(Vec::with_capacity(classes.len())); targets.len()];
        for class in classes {
            weights.clear();
            weights.extend(class.rows.iter().map(|&i| row_weights[i]));
            let view = prefix.weigh(&class.sorted, &class.packed, weights);
            let evaluations = evaluate_all(targets, &view, raw, settings);
            for (acc, e) in per_target.iter_mut().zip(evaluations) {
                if let Ok(v) = acc {
                    match e {
                        Ok(e) => v.push(e.value),
                        Err(cause) => *acc = Err(cause),
                    }
                }
            }
        }
        per_target
            .into_iter()
            .zip(targets)
            .map(|(v, t)| v.map(|v| combine(t.spec.kind(), &v, norm)))
            .collect()
    };

    // Resample r's marginal values are `per_resample[r * width..][..targets.len()]`.
    let width = targets.len().max(1);
    let mut per_resample = results(
        Err(EvaluateError::BinsRequired),
        resampling.resamples.saturating_mul(width),
    )?;
    per_resample
        .par_chunks_mut(width)
        .enumerate()
        .for_each_init(
            || {
                (
                    vec![0u32; n],
                    Vec::new(),
                    Prefix::default(),
                    (Vec::new(), Vec::new()),
                )
            },
            |(counts, weights, prefix, raw), (r, out)| {
                let mut rng = repetition_rng(resampling.seed ^ MARGINAL_DOMAIN, r as u64);
                multinomial_counts(counts, n as u64, &mut rng, &mut |_, _| {});
                for (slot, value) in out.iter_mut().zip(evaluate(counts, weights, prefix, raw)) {
                    *slot = value;
                }
                progress();
            },
        );

    let (groups, assignment) = jackknife_groups(n, resampling.seed ^ MARGINAL_JACKKNIFE_DOMAIN);
    let assignment = &assignment;
    let per_group: Vec<Vec<Result<f64, EvaluateError>>> = (0..groups)
        .into_par_iter()
        .map_init(
            || (Vec::new(), Prefix::default(), (Vec::new(), Vec::new())),
            |(weights, prefix, raw), g| {
                let rows: Vec<u32> = assignment.iter().map(|&a| u32::from(a != g)).collect();
                evaluate(&rows, weights, prefix, raw)
            },
        )
        .collect();

    let mut boots = Vec::with_capacity(targets.len());
    for t in 0..targets.len() {
        let mut replicates = results(0.0, resampling.resamples)?;
        let mut boot = || {
            for (r, evaluations) in per_resample.chunks(width).enumerate() {
                replicates[r] = evaluations[t].map_err(|cause| BootstrapError {
                    resample: Some(r),
                    cause,
                })?;
            }
            let jackknife = per_group
                .iter()
                .map(|g| g[t])
                .collect::<Result<Vec<f64>, _>>()
                .map_err(|cause| BootstrapError {
                    resample: None,
                    cause,
                })?;
            Ok(Bootstrap::of(
                values[t],
                std::mem::take(&mut replicates),
                &jackknife,
                resampling.level,
                None,
            ))
        };
        boots.push(boot());
    }
    Ok(boots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combine_is_the_lp_mean() {
        let v = [0.1, 0.3];
        assert!((combine(EstimatorKind::EceBin, &v, Norm::L1) - 0.2).abs() < 1e-15);
        let l2 = ((0.01 + 0.09) / 2.0f64).sqrt();
        assert_eq!(combine(EstimatorKind::EceSweep, &v, Norm::L2), l2);
        assert_eq!(combine(EstimatorKind::Mce, &v, Norm::L2), 0.3);
        assert!((combine(EstimatorKind::SmoothEce, &v, Norm::L2) - 0.2).abs() < 1e-15);
        // A large p tends to the largest value instead of underflowing to 0:
        // (½·0.1^p + ½·0.3^p)^(1/p) = 0.3·(½·(1/3)^p + ½)^(1/p).
        for p in [3.0, 1000.0, 5000.0] {
            let expected = 0.3 * (0.5 * (1.0f64 / 3.0).powf(p) + 0.5).powf(1.0 / p);
            let value = combine(EstimatorKind::EceBin, &v, Norm::new(p).unwrap());
            assert!(
                (value - expected).abs() < 1e-15,
                "p = {p}: {value} vs {expected}"
            );
        }
    }
}
