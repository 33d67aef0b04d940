//! The classwise report (`tce report --classwise`, docs/report.md "Classwise"): each
//! class k's one-vs-rest samples (p_ik, 1 if row i's class is k) get every estimator with
//! bootstrap intervals, and every estimator is combined over the classes into the
//! marginal calibration error of Kumar, Liang & Ma (2019): the l_p mean
//! (Σ_k v_k^p / K)^(1/p) of the per-class values, as `tce estimate --classwise` combines
//! them ([`combine`]).
//!
//! - **One set of resamples for everything.** A resample draws n *rows* (one multinomial
//!   count per row); every class weighs its own sorted samples by those counts, so one
//!   resample gives every class's values and the marginal's. A class's intervals are read
//!   off these joint resamples: restricted to one class, a joint resample is a bootstrap
//!   resample of that class's samples, so its intervals are those of a bootstrap of the
//!   class alone (other replicates, the same distribution). The BCa jackknife leaves out
//!   groups of rows, for every class and the marginal alike. The counts of a batch of
//!   resamples sit in one table shared by the classes, and each class is sorted once per
//!   batch and reads them in its sorted order (`Lanes`): no class is bootstrapped on
//!   its own.
//! - **Fits and simulations for a sample of classes.** A fit of the flexible model costs
//!   about a second per class at n = 10^4, so by default a seeded simple random sample of
//!   [`DEFAULT_SIMULATED_CLASSES`] classes (every class when there are no more) is fitted
//!   and simulated ([`ClasswiseOptions::simulated_classes`]), each with
//!   [`default_class_simulations`] data sets, from its own seed ([`class_seed`]): those
//!   classes get the fit, the fit check, the bias table and their own recommendation; the
//!   others take the marginal's recommended estimator ([`Basis::Marginal`]).
//! - **The marginal's bias at n**, from the simulated classes ([`marginal_bias`]): with
//!   every class simulated, simulation j of every class combined into one marginal value,
//!   against the l_p mean of the classes' fitted TCEs (the classes simulated
//!   independently: a one-vs-rest fit does not model how a row's classes depend on each
//!   other). With a sample, the l_p means are estimated from the sampled classes (the
//!   mean of v^p over them, its spread across simulations scaled to K classes), and the
//!   Monte-Carlo se of the bias adds the sampling of classes (a jackknife over the sampled
//!   classes, with the finite-population correction) to the simulations'.
//! - **The recommendation**: the estimator with the lowest RMSE of the marginal values;
//!   with the caveat when a simulated class's fit is flagged; without a fit for every
//!   simulated class (or with none simulated), equal-mass ECE_sweep.

use core::sync::atomic::{AtomicBool, Ordering};

use rand::seq::index::sample;
use rand::RngCore;
use rayon::prelude::*;

use super::bootstrap::{evaluate_all, jackknife_groups, multinomial_counts};
use super::weighted::{Halves, Lanes, Packed, Weight, WidthStarts, GROUP};
use super::{
    diagrams, estimates_tce, evaluate_on_data, parametric, recommend, targets, ties, Basis,
    Bootstrap, BootstrapError, EstimatorResult, ParametricError, Phase, Recommendation, Report,
    ReportError, ReportSettings, Target, Unavailable,
};
use crate::buffer::{Slot, SortedBuffer};
use crate::norm::Norm;
use crate::sim::estimator::{DataView, EstimatorKind, EvaluationSettings};
use crate::sim::repetition_rng;
use crate::sim::runner::Summary;
use crate::Binning;

/// Domain of the joint resamples' generators (apart from the top-label bootstrap's).
const MARGINAL_DOMAIN: u64 = 0xC1A5_5315_E000_0003;
/// Domain of the row groups of the jackknife.
const MARGINAL_JACKKNIFE_DOMAIN: u64 = 0xC1A5_5315_E000_0004;
/// Domain of the sample of simulated classes.
const SAMPLE_DOMAIN: u64 = 0xC1A5_5315_E000_0005;
/// Domain of the classes' simulation seeds.
const CLASS_SEED_DOMAIN: u64 = 0xC1A5_5315_E000_0006;

/// The classes fitted and simulated by default: every class up to this many, else a
/// seeded sample of this many. A flexible fit of one class's one-vs-rest samples takes
/// 0.7–1.0 s at n = 10^4 and 1.6 s at 5·10^4 on 2 cores, the most of a classwise report.
pub const DEFAULT_SIMULATED_CLASSES: usize = 10;

/// The budget of simulated samples of one simulated class behind
/// [`default_class_simulations`]: n · m ≤ 5·10^6 (a tenth of a top-label report's,
/// [`super::SIMULATED_SAMPLES`]).
pub const CLASS_SIMULATED_SAMPLES: usize = 5_000_000;

/// The default number of simulations of each simulated class at n: 1000, fewer for large
/// n so that they draw at most [`CLASS_SIMULATED_SAMPLES`] samples, never fewer than 50
/// (n = 10^4: 500; 5·10^4: 100).
pub fn default_class_simulations(n: usize) -> usize {
    (CLASS_SIMULATED_SAMPLES / n.max(1)).clamp(50, 1000)
}

/// The most bytes of resample counts held at once (one byte a row and resample, four if
/// a count exceeds 255): beyond it the resamples are made in batches, each class sorted
/// again for each batch.
pub const TILE_BYTES: usize = 1 << 26;

/// The equal-width bin counts whose bin starts a class finds once, for every resample:
/// 1 to 64 (the sweep's b* on one-vs-rest samples is about 20 at n = 10^4).
const WIDTH_STARTS: usize = 64;

/// The fewest resamples of a batch (at n beyond [`TILE_BYTES`] / 64).
const MIN_BATCH: usize = 64;

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

/// What a classwise report adds to [`ReportSettings`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClasswiseOptions {
    /// How many classes are fitted and simulated (a seeded simple random sample of them;
    /// all when at least the number of classes). `None`: [`DEFAULT_SIMULATED_CLASSES`];
    /// `Some(0)`: none (no bias figures; the recommendation is equal-mass ECE_sweep).
    /// Below the number of classes, at least 2 (the sampling error needs two).
    pub simulated_classes: Option<usize>,
}

/// What a classwise report of n rows and K classes does, resolved from its settings:
/// what the CLI's progress bars count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClasswisePlan {
    /// The classes K.
    pub classes: usize,
    /// The joint resamples (the settings' resamples).
    pub resamples: usize,
    /// The classes fitted and simulated.
    pub simulated_classes: usize,
    /// The simulations of each simulated class.
    pub simulations: usize,
}

impl ClasswisePlan {
    /// The plan of a report of `n` rows and `classes` classes.
    pub fn new(
        n: usize,
        classes: usize,
        settings: &ReportSettings,
        options: &ClasswiseOptions,
    ) -> ClasswisePlan {
        let simulated_classes = match options
            .simulated_classes
            .unwrap_or(DEFAULT_SIMULATED_CLASSES)
        {
            0 => 0,
            s => s.max(2).min(classes),
        };
        ClasswisePlan {
            classes,
            resamples: settings.resamples,
            simulated_classes,
            simulations: settings
                .simulations
                .unwrap_or_else(|| default_class_simulations(n)),
        }
    }
}

/// The seed of class `class`'s simulations in a classwise report seeded `seed`: every
/// class draws its simulated data sets from its own generators, so the classes' errors
/// are independent, as the marginal's bias assumes. (`tce report --seed` with it on that
/// class alone makes the same simulations.)
pub fn class_seed(seed: u64, class: usize) -> u64 {
    repetition_rng(seed ^ CLASS_SEED_DOMAIN, class as u64).next_u64()
}

/// One class's report.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassReport {
    /// The class id.
    pub class: usize,
    /// Its name.
    pub name: String,
    /// The report of its one-vs-rest samples: every estimator with its intervals from the
    /// joint resamples; for a simulated class the fit, its check and the bias table, as
    /// [`super::report`] makes them with [`ClassReport::seed`]; for the others
    /// [`ParametricError::NotSimulated`] and the marginal's estimator.
    pub report: Report,
    /// The seed of its simulations ([`class_seed`]).
    pub seed: u64,
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
    /// Its error at n on the simulated classes' fitted models ([`marginal_bias`]; TCE
    /// estimators, with a fit for every simulated class). Its `se` includes the sampling
    /// of classes when not every class is simulated.
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
    /// Why it: [`Basis::LowestRmsePoorFit`] when a simulated class's fit is flagged,
    /// [`Basis::NoFit`] when a simulated class has no fit or none is simulated.
    pub basis: Basis,
    /// Index in [`ClasswiseReport::marginal`] of the usual equal-width ECE_bin.
    pub usual: Option<usize>,
}

/// Everything the classwise report computes.
#[derive(Clone, Debug, PartialEq)]
pub struct ClasswiseReport {
    /// The settings, with the number of simulations (of each simulated class) resolved.
    pub settings: ReportSettings,
    /// Rows (each class has n samples).
    pub n: usize,
    /// Every class, in class order.
    pub classes: Vec<ClassReport>,
    /// The classes fitted and simulated, as indices into `classes`, in order: all of
    /// them, or a seeded simple random sample.
    pub simulated: Vec<usize>,
    /// Every estimator over the classes, in [`targets`] order (those defined on every
    /// class).
    pub marginal: Vec<MarginalResult>,
    /// The estimators of [`targets`] undefined on some class, each with the first such
    /// class and why.
    pub unavailable: Vec<Unavailable>,
    /// The l_p mean of the classes' fitted TCEs, when every simulated class has a fit;
    /// estimated from the simulated classes when they are a sample.
    pub tce: Option<f64>,
    /// The standard error of `tce` from the sampling of classes (0 when every class is
    /// simulated).
    pub tce_se: Option<f64>,
    /// Simulated classes whose fit does not reproduce their data.
    pub flagged: usize,
    /// Simulated classes without a fit.
    pub unfitted: usize,
    /// What to report.
    pub recommendation: MarginalRecommendation,
}

impl ClasswiseReport {
    /// Whether only a sample of the classes was fitted and simulated.
    pub fn sampled(&self) -> bool {
        self.simulated.len() < self.classes.len()
    }
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

/// The marginal's error at n of a TCE estimator of kind `kind` from the simulated
/// classes: `tces[i]` the fitted TCE of simulated class i and `simulated[i]` its
/// estimates on the simulated data sets (the first m, the fewest any class has), out of
/// `classes` classes. `None` without a class or a simulation.
///
/// With every class simulated: the estimates of simulation j combined over the classes
/// ([`combine`]), against the l_p mean of the TCEs. With a sample of s < K classes:
/// per simulation the mean A_j of v^p over the sampled classes, its spread about their
/// mean scaled by √(s/K) (the spread of a mean over K independent classes, estimated
/// from s), back to l_p means, against the l_p mean of the sampled TCEs; the `se` is the
/// simulations' (sd/√m) and the sampling of classes' (a delete-one-class jackknife of
/// the bias, times 1 − s/K) in quadrature. Needs s ≥ 2 below K (else the se is ∞).
pub fn marginal_bias(
    kind: EstimatorKind,
    norm: Norm,
    tces: &[f64],
    simulated: &[&[f64]],
    classes: usize,
) -> Option<Summary> {
    let s = tces.len().min(simulated.len());
    let m = simulated.iter().map(|v| v.len()).min()?;
    if s == 0 || m == 0 {
        return None;
    }
    if s >= classes {
        let tce = combine(EstimatorKind::EceBin, tces, norm);
        let values: Vec<f64> = (0..m)
            .map(|j| {
                let per_class: Vec<f64> = simulated.iter().map(|v| v[j]).collect();
                combine(kind, &per_class, norm)
            })
            .collect();
        return Some(Summary::of(&values, tce));
    }
    let p = if kind == EstimatorKind::SmoothEce {
        1.0
    } else {
        norm.p()
    };
    // Powers of values scaled by the largest, so that a large p does not underflow.
    let scale = simulated
        .iter()
        .flat_map(|v| v[..m].iter())
        .chain(tces)
        .copied()
        .fold(0.0, f64::max);
    let power = |x: f64| {
        if scale > 0.0 {
            (x / scale).powf(p)
        } else {
            0.0
        }
    };
    let root = |a: f64| scale * a.max(0.0).powf(1.0 / p);
    let summary_of = |members: &[usize]| -> Summary {
        let size = members.len() as f64;
        let sums: Vec<f64> = (0..m)
            .map(|j| members.iter().map(|&i| power(simulated[i][j])).sum::<f64>() / size)
            .collect();
        let centre = sums.iter().sum::<f64>() / m as f64;
        let spread = (size / classes as f64).sqrt();
        let values: Vec<f64> = sums
            .iter()
            .map(|&a| root(centre + spread * (a - centre)))
            .collect();
        let tce = root(members.iter().map(|&i| power(tces[i])).sum::<f64>() / size);
        Summary::of(&values, tce)
    };
    let all: Vec<usize> = (0..s).collect();
    let mut summary = summary_of(&all);
    let sampling = if s >= 2 {
        let leave_one_out: Vec<f64> = (0..s)
            .map(|i| {
                let rest: Vec<usize> = all.iter().copied().filter(|&k| k != i).collect();
                summary_of(&rest).bias
            })
            .collect();
        let mean = leave_one_out.iter().sum::<f64>() / s as f64;
        let jackknife = (s - 1) as f64 / s as f64
            * leave_one_out
                .iter()
                .map(|b| (b - mean).powi(2))
                .sum::<f64>();
        (1.0 - s as f64 / classes as f64) * jackknife
    } else {
        f64::INFINITY
    };
    summary.se = (summary.se * summary.se + sampling).sqrt();
    Some(summary)
}

/// The standard error of the l_p mean of the sampled classes' TCEs as an estimate of the
/// l_p mean over all `classes` classes (simple random sampling of classes, with the
/// finite-population correction, by the delta method): 0 when every class is sampled.
fn tce_sampling_se(tces: &[f64], classes: usize, norm: Norm) -> f64 {
    let s = tces.len();
    if s >= classes {
        return 0.0;
    }
    if s < 2 {
        return f64::INFINITY;
    }
    let p = norm.p();
    let scale = tces.iter().copied().fold(0.0, f64::max);
    if scale == 0.0 {
        return 0.0;
    }
    let powers: Vec<f64> = tces.iter().map(|t| (t / scale).powf(p)).collect();
    let mean = powers.iter().sum::<f64>() / s as f64;
    let variance = powers.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (s - 1) as f64;
    let se_mean = ((1.0 - s as f64 / classes as f64) * variance / s as f64).sqrt();
    // d/da (a^(1/p)) = a^(1/p − 1) / p, times the scale.
    if mean > 0.0 {
        scale * mean.powf(1.0 / p - 1.0) / p * se_mean
    } else {
        f64::INFINITY
    }
}

/// The classwise report of `columns` with the default [`ClasswiseOptions`].
pub fn classwise_report(
    columns: &[ClassColumn<'_>],
    settings: &ReportSettings,
    progress: &(dyn Fn(Phase) + Sync),
) -> Result<ClasswiseReport, ReportError> {
    classwise_report_with(columns, settings, &ClasswiseOptions::default(), progress)
}

/// The classwise report of `columns` (at least one class, all of the same length n ≥ 1).
/// `progress` is called once per joint resample and class ([`Phase::Bootstrap`]: K × R in
/// all) and once per simulation of a simulated class ([`ClasswisePlan`]). The settings'
/// refits are not made (a classwise report does not refit its classes), and it has no
/// calibration test: test settings other than the defaults are refused
/// ([`ReportError::TestNotClasswise`]); `tce test` tests the top-label confidences.
pub fn classwise_report_with(
    columns: &[ClassColumn<'_>],
    settings: &ReportSettings,
    options: &ClasswiseOptions,
    progress: &(dyn Fn(Phase) + Sync),
) -> Result<ClasswiseReport, ReportError> {
    settings.check()?;
    if settings
        .test
        .is_some_and(|t| t != super::ReportTest::default())
    {
        return Err(ReportError::TestNotClasswise);
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
    if n == 0 {
        return Err(ReportError::NoSamples);
    }
    crate::buffer::check_capacity(n).map_err(|_| ReportError::TooManySamples(n))?;
    let plan = ClasswisePlan::new(n, columns.len(), settings, options);
    let settings = ReportSettings {
        simulations: Some(plan.simulations),
        refits: Some(0),
        test: None,
        ..*settings
    };
    settings.check()?;
    let norm = settings.norm;
    let evaluation = EvaluationSettings {
        norm,
        sweep: settings.sweep,
    };

    // Every class's estimates and their joint resamples.
    let mut data = joint(columns, &settings, &evaluation, &|| {
        progress(Phase::Bootstrap)
    })?;

    // An estimator undefined on some class (KDE on a class that never occurs) has no
    // marginal either: it is left out with the first such class's reason.
    let mut unavailable = Vec::new();
    let marginal_targets: Vec<Target> = targets(&settings)
        .into_iter()
        .filter(|t| {
            let missing = columns.iter().zip(&data).find_map(|(c, d)| {
                let u = d.unavailable.iter().find(|u| u.target == *t)?;
                Some(Unavailable {
                    class: Some(c.class),
                    ..*u
                })
            });
            unavailable.extend(missing);
            missing.is_none()
        })
        .collect();

    // The marginal's values and bootstraps, from every class's.
    let level = settings.level;
    let marginal_boot = |t: &Target| -> Option<Result<Bootstrap, BootstrapError>> {
        if settings.resamples == 0 {
            return None;
        }
        let index: Vec<usize> = data
            .iter()
            .map(|d| d.targets.iter().position(|x| x == t).expect("available"))
            .collect();
        // The first class's failure, if any (each class's replicates are in resample order).
        if let Some(e) = data.iter().zip(&index).find_map(|(d, &i)| d.failed[i]) {
            return Some(Err(e));
        }
        let values: Vec<f64> = data
            .iter()
            .zip(&index)
            .map(|(d, &i)| d.on_data[i])
            .collect();
        let mut per_class = vec![0.0; data.len()];
        let mut combined = |column: &dyn Fn(&ClassData, usize) -> f64, len: usize| {
            (0..len)
                .map(|r| {
                    for ((slot, d), &i) in per_class.iter_mut().zip(&data).zip(&index) {
                        *slot = column(d, i * len + r);
                    }
                    combine(t.spec.kind(), &per_class, norm)
                })
                .collect::<Vec<f64>>()
        };
        let resamples = settings.resamples;
        let replicates = combined(
            &|d, at| d.replicates[at / resamples][at % resamples],
            resamples,
        );
        let groups = data[0].jackknife.len() / data[0].targets.len();
        let jackknife = combined(&|d, at| d.jackknife[at], groups);
        Some(Ok(Bootstrap::of(
            combine(t.spec.kind(), &values, norm),
            replicates,
            &jackknife,
            level,
            None,
        )))
    };
    let boots: Vec<Option<Result<Bootstrap, BootstrapError>>> =
        marginal_targets.iter().map(marginal_boot).collect();
    let values: Vec<f64> = marginal_targets
        .iter()
        .map(|t| {
            let v: Vec<f64> = data
                .iter()
                .map(|d| d.on_data[d.targets.iter().position(|x| x == t).expect("available")])
                .collect();
            combine(t.spec.kind(), &v, norm)
        })
        .collect();

    // Each class's estimators, with the bootstraps read off the joint resamples.
    let mut estimators: Vec<Vec<EstimatorResult>> =
        data.iter_mut().map(|d| d.estimators(&settings)).collect();

    // Fits and simulations of the sampled classes.
    let k = columns.len();
    let simulated: Vec<usize> = if plan.simulated_classes >= k {
        (0..k).collect()
    } else {
        let mut picked = sample(
            &mut repetition_rng(settings.seed ^ SAMPLE_DOMAIN, 0),
            k,
            plan.simulated_classes,
        )
        .into_vec();
        picked.sort_unstable();
        picked
    };
    let mut parametrics: Vec<Result<super::Parametric, ParametricError>> = (0..k)
        .map(|_| {
            Err(ParametricError::NotSimulated {
                simulated: simulated.len(),
                classes: k,
            })
        })
        .collect();
    let seeds: Vec<u64> = columns
        .iter()
        .map(|c| class_seed(settings.seed, c.class))
        .collect();
    // The classes side by side: a fit keeps about one core busy.
    let fitted: Vec<(usize, Result<super::Parametric, ParametricError>)> = simulated
        .par_iter()
        .map(|&i| {
            let c = &columns[i];
            let class_settings = ReportSettings {
                seed: seeds[i],
                ..settings
            };
            let p = parametric(
                c.scores,
                c.labels,
                &class_settings,
                &data[i].targets,
                &estimators[i],
                progress,
            );
            (i, p)
        })
        .collect();
    for (i, p) in fitted {
        parametrics[i] = p;
    }

    let fits: Option<Vec<&super::Parametric>> = simulated
        .iter()
        .map(|&i| parametrics[i].as_ref().ok())
        .collect();
    let fits = fits.filter(|f| !f.is_empty());
    let unfitted = simulated
        .iter()
        .filter(|&&i| parametrics[i].is_err())
        .count();
    let flagged = simulated
        .iter()
        .filter(|&&i| parametrics[i].as_ref().is_ok_and(|p| !p.reproduces))
        .count();
    let tces: Option<Vec<f64>> = fits
        .as_ref()
        .map(|fits| fits.iter().map(|p| p.tce).collect());
    // The l_p mean of the simulated classes' TCEs (of all classes, or of the sample).
    let tce = tces
        .as_ref()
        .map(|tces| combine(EstimatorKind::EceBin, tces, norm));
    let tce_se = tces.as_ref().map(|tces| tce_sampling_se(tces, k, norm));
    let marginal: Vec<MarginalResult> = marginal_targets
        .iter()
        .zip(values)
        .zip(boots)
        .map(|((t, value), bootstrap)| {
            let bias = fits.as_ref().zip(tces.as_ref()).and_then(|(fits, tces)| {
                if !estimates_tce(t) {
                    return None;
                }
                let rows: Vec<&[f64]> = fits
                    .iter()
                    .map(|p| {
                        let i = p.bias.iter().position(|b| b.target == *t)?;
                        Some(&p.simulated[i][..])
                    })
                    .collect::<Option<_>>()?;
                marginal_bias(t.spec.kind(), norm, tces, &rows, k)
            });
            MarginalResult {
                target: *t,
                value,
                bootstrap,
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

    // Each class's report: its own recommendation when simulated, else the marginal's.
    let chosen = marginal[recommendation.estimator].target;
    let classes: Vec<ClassReport> = columns
        .iter()
        .zip(data)
        .zip(estimators.drain(..))
        .zip(parametrics)
        .zip(&seeds)
        .map(|((((c, d), estimators), parametric), &seed)| {
            let recommendation = match &parametric {
                Err(ParametricError::NotSimulated { .. }) => Recommendation {
                    estimator: estimators
                        .iter()
                        .position(|e| e.target == chosen)
                        .expect("a marginal estimator is every class's"),
                    basis: Basis::Marginal,
                    bias_row: None,
                    usual_row: None,
                },
                _ => recommend(&estimators, &parametric, &settings),
            };
            ClassReport {
                class: c.class,
                name: c.name.to_owned(),
                seed,
                report: Report {
                    settings: ReportSettings { seed, ..settings },
                    n,
                    hits: d.hits,
                    estimators,
                    unavailable: d.unavailable,
                    reliability: d.reliability,
                    parametric,
                    recommendation,
                    ties: d.ties,
                    calibration_test: None,
                    weights: None,
                },
            }
        })
        .collect();
    Ok(ClasswiseReport {
        settings,
        n,
        classes,
        simulated,
        marginal,
        unavailable,
        tce,
        tce_se,
        flagged,
        unfitted,
        recommendation,
    })
}

/// One class's estimates on the data and on every joint resample.
struct ClassData {
    hits: u64,
    ties: ties::TieSummary,
    /// The estimators defined on the class, in [`targets`] order.
    targets: Vec<Target>,
    /// Their values on the data, and the sweeps' b*.
    on_data: Vec<f64>,
    sweep_bins: Vec<Option<usize>>,
    unavailable: Vec<Unavailable>,
    reliability: Vec<super::Reliability>,
    /// Per target, its value on each resample.
    replicates: Vec<Vec<f64>>,
    /// Per sweep target (in target order), b* on each resample.
    resample_bins: Vec<Vec<usize>>,
    /// Per target, its value with each jackknife group left out.
    jackknife: Vec<f64>,
    /// Per target, the first failure in resample order (the jackknife's last).
    failed: Vec<Option<BootstrapError>>,
}

impl ClassData {
    /// The estimators with their bootstraps (moving the replicates out).
    fn estimators(&mut self, settings: &ReportSettings) -> Vec<EstimatorResult> {
        let resamples = settings.resamples;
        let groups = self.jackknife.len() / self.targets.len().max(1);
        let mut sweeps = self.resample_bins.drain(..);
        let mut replicates = self.replicates.drain(..);
        self.targets
            .iter()
            .enumerate()
            .map(|(t, target)| {
                let values = replicates.next().unwrap_or_default();
                let bins = is_sweep(target).then(|| sweeps.next().unwrap_or_default());
                EstimatorResult {
                    target: *target,
                    estimate: self.on_data[t],
                    sweep_bins: self.sweep_bins[t],
                    bootstrap: (resamples > 0).then(|| match self.failed[t] {
                        Some(e) => Err(e),
                        None => Ok(Bootstrap::of(
                            self.on_data[t],
                            values,
                            &self.jackknife[t * groups..(t + 1) * groups],
                            settings.level,
                            bins,
                        )),
                    }),
                }
            })
            .collect()
    }
}

fn is_sweep(target: &Target) -> bool {
    target.spec.kind() == EstimatorKind::EceSweep
}

/// A class's data part: the estimators on the data and the reliability diagrams, from its
/// sorted samples.
fn class_data(
    column: &ClassColumn<'_>,
    sorted: crate::buffer::SortedSamples<'_>,
    hits: u64,
    settings: &ReportSettings,
    evaluation: &EvaluationSettings,
    groups: usize,
) -> Result<ClassData, ReportError> {
    let data = DataView {
        sorted,
        scores: column.scores,
        labels: column.labels,
    };
    let super::OnData {
        available,
        evaluations,
        unavailable,
    } = evaluate_on_data(&data, settings, evaluation)?;
    let on_data: Vec<f64> = evaluations.iter().map(|e| e.value).collect();
    let sweep_bins: Vec<Option<usize>> = evaluations.iter().map(|e| e.sweep_bins).collect();
    let reliability = diagrams(
        &sorted,
        settings,
        available.iter().zip(sweep_bins.iter().copied()),
    );
    let resamples = settings.resamples;
    let width = available.len();
    let sweeps = available.iter().filter(|t| is_sweep(t)).count();
    let out_of_memory = |bytes: usize| ReportError::OutOfMemory { bytes };
    let mut replicates = Vec::with_capacity(width);
    for _ in 0..width {
        let mut values = Vec::new();
        values
            .try_reserve_exact(resamples)
            .map_err(|_| out_of_memory(resamples.saturating_mul(8)))?;
        values.resize(resamples, 0.0);
        replicates.push(values);
    }
    let mut resample_bins = Vec::with_capacity(sweeps);
    for _ in 0..sweeps {
        let mut bins = Vec::new();
        bins.try_reserve_exact(resamples)
            .map_err(|_| out_of_memory(resamples.saturating_mul(8)))?;
        bins.resize(resamples, 0);
        resample_bins.push(bins);
    }
    Ok(ClassData {
        hits,
        ties: ties::TieSummary::of(&sorted),
        reliability,
        replicates,
        resample_bins,
        jackknife: vec![0.0; groups * width],
        failed: vec![None; width],
        targets: available,
        on_data,
        sweep_bins,
        unavailable,
    })
}

/// Per thread: a class's sort and one resample's sums.
struct Scratch<W: Weight> {
    storage: Box<[Slot]>,
    packed: Packed,
    rows: Vec<u32>,
    order: Vec<u32>,
    positives: Vec<u32>,
    halves: Halves,
    width: WidthStarts,
    lanes: Lanes<W>,
    raw: (Vec<f64>, Vec<u8>),
}

/// Every class's data part, and its values on every joint resample and jackknife group.
fn joint(
    columns: &[ClassColumn<'_>],
    settings: &ReportSettings,
    evaluation: &EvaluationSettings,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<ClassData>, ReportError> {
    let n = columns[0].scores.len();
    let resamples = settings.resamples;
    let (groups, assignment) = if resamples > 0 {
        jackknife_groups(n, settings.seed ^ MARGINAL_JACKKNIFE_DOMAIN)
    } else {
        (0, Vec::new())
    };
    // Lanes 0..R are the resamples, R..R + G the jackknife's groups; in batches of at most
    // TILE_BYTES of one-byte counts (at least MIN_BATCH lanes), of equal size.
    let lanes = resamples + groups;
    let per_batch = (TILE_BYTES / n).max(MIN_BATCH);
    let batches = lanes.div_ceil(per_batch).max(1);
    let per_batch = lanes.div_ceil(batches);
    let mut data: Vec<Option<ClassData>> = columns.iter().map(|_| None).collect();
    for batch in 0..batches {
        let range = batch * per_batch..((batch + 1) * per_batch).min(lanes);
        let lane_counts = |lane: usize, counts: &mut [u32]| {
            if lane < resamples {
                let mut rng = repetition_rng(settings.seed ^ MARGINAL_DOMAIN, lane as u64);
                multinomial_counts(counts, n as u64, &mut rng, &mut |_, _| {});
            } else {
                let g = lane - resamples;
                for (c, &a) in counts.iter_mut().zip(&assignment) {
                    *c = u32::from(a != g);
                }
            }
        };
        match tile::<u8>(n, range.clone(), &lane_counts)? {
            Some(tile) => run(
                columns, &mut data, &tile, range, resamples, groups, settings, evaluation, progress,
            )?,
            None => {
                let tile = tile::<u32>(n, range.clone(), &lane_counts)?.expect("counts fit u32");
                run(
                    columns, &mut data, &tile, range, resamples, groups, settings, evaluation,
                    progress,
                )?
            }
        }
    }
    Ok(data
        .into_iter()
        .map(|d| d.expect("every class is run"))
        .collect())
}

/// The counts of lanes `range`, lane by lane (each lane's n counts in row order); `None`
/// if a count does not fit `W`.
fn tile<W: Weight>(
    n: usize,
    range: core::ops::Range<usize>,
    lane_counts: &(dyn Fn(usize, &mut [u32]) + Sync),
) -> Result<Option<Vec<W>>, ReportError> {
    let len = range.len() * n;
    let mut tile: Vec<W> = Vec::new();
    tile.try_reserve_exact(len)
        .map_err(|_| ReportError::OutOfMemory {
            bytes: len.saturating_mul(core::mem::size_of::<W>()),
        })?;
    tile.resize(len, W::default());
    let overflow = AtomicBool::new(false);
    tile.par_chunks_mut(n).enumerate().for_each_init(
        || vec![0u32; n],
        |counts, (lane, out)| {
            lane_counts(range.start + lane, counts);
            for (o, &c) in out.iter_mut().zip(counts.iter()) {
                match W::of(c) {
                    Some(w) => *o = w,
                    None => overflow.store(true, Ordering::Relaxed),
                }
            }
        },
    );
    Ok((!overflow.load(Ordering::Relaxed)).then_some(tile))
}

/// Every class over the lanes `range` of `tile`: sorted (again, after the first batch),
/// its data part on the first, and every lane's values stored.
#[allow(clippy::too_many_arguments)]
fn run<W: Weight>(
    columns: &[ClassColumn<'_>],
    data: &mut [Option<ClassData>],
    tile: &[W],
    range: core::ops::Range<usize>,
    resamples: usize,
    groups: usize,
    settings: &ReportSettings,
    evaluation: &EvaluationSettings,
    progress: &(dyn Fn() + Sync),
) -> Result<(), ReportError> {
    let n = columns[0].scores.len();
    data.par_iter_mut()
        .zip(columns.par_iter())
        .try_for_each_init(
            || None::<Scratch<W>>,
            |scratch, (slot, column)| -> Result<(), ReportError> {
                if scratch.is_none() {
                    *scratch = Some(Scratch {
                        storage: crate::storage::sorting_slots(n).map_err(|_| {
                            ReportError::OutOfMemory {
                                bytes: 2 * n * core::mem::size_of::<Slot>(),
                            }
                        })?,
                        packed: Packed::default(),
                        rows: Vec::new(),
                        order: Vec::new(),
                        positives: Vec::new(),
                        halves: Halves::default(),
                        width: WidthStarts::default(),
                        lanes: Lanes::default(),
                        raw: (Vec::new(), Vec::new()),
                    });
                }
                let Scratch {
                    storage,
                    packed,
                    rows,
                    order,
                    positives,
                    halves,
                    width,
                    lanes,
                    raw,
                } = scratch.as_mut().expect("made above");
                let mut buffer = SortedBuffer::with_storage(&mut storage[..])
                    .map_err(|_| ReportError::TooManySamples(n))?;
                buffer
                    .push_batch(column.scores, column.labels)
                    .map_err(ReportError::Push)?;
                let hits = buffer.hits();
                let sorted = buffer.sorted();
                if slot.is_none() {
                    *slot = Some(class_data(
                        column, sorted, hits, settings, evaluation, groups,
                    )?);
                }
                let d = slot.as_mut().expect("made above");
                if range.is_empty() {
                    return Ok(());
                }
                packed.set(&sorted);
                halves.set(packed);
                rows.clear();
                rows.extend(sorted.slots().iter().map(|s| s.order >> 1));
                order.clear();
                order.resize(n, 0);
                for (j, &r) in rows.iter().enumerate() {
                    order[r as usize] = j as u32;
                }
                // Hits one by one where they are few (most classes of many).
                positives.clear();
                let list_hits = hits.saturating_mul(16) <= n as u64;
                if list_hits {
                    positives.extend(
                        (0u32..)
                            .zip(sorted.slots())
                            .filter(|(_, s)| s.label() == 1)
                            .map(|(j, _)| j),
                    );
                }
                // The equal-width starts of the settings' bins and of the sweep's first
                // WIDTH_STARTS bin counts.
                width.set(
                    sorted.slots(),
                    settings.closure,
                    settings.bins.max(WIDTH_STARTS).min(n),
                );
                for (g, group) in tile.chunks(GROUP * n).enumerate() {
                    let counts: Vec<&[W]> = group.chunks(n).collect();
                    lanes.fill(halves, order, &counts, list_hits.then_some(&positives[..]));
                    for member in 0..counts.len() {
                        let lane = range.start + g * GROUP + member;
                        let view = lanes.view(&sorted, packed, member, Some(width));
                        let evaluations = evaluate_all(&d.targets, &view, raw, evaluation);
                        let mut sweep = 0;
                        for (t, e) in evaluations.into_iter().enumerate() {
                            let is_sweep = is_sweep(&d.targets[t]);
                            match e {
                                Ok(e) if lane < resamples => {
                                    d.replicates[t][lane] = e.value;
                                    if let (true, Some(b)) = (is_sweep, e.sweep_bins) {
                                        d.resample_bins[sweep][lane] = b;
                                    }
                                }
                                Ok(e) => d.jackknife[t * groups + lane - resamples] = e.value,
                                Err(cause) => {
                                    d.failed[t].get_or_insert(BootstrapError {
                                        resample: (lane < resamples).then_some(lane),
                                        cause,
                                    });
                                }
                            }
                            sweep += usize::from(is_sweep);
                        }
                        if lane < resamples {
                            progress();
                        }
                    }
                }
                Ok(())
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_past_a_byte_makes_the_tile_wide() {
        // Lanes 2..5 of 3 rows; lane 3 counts 300 on row 1 (a byte holds 255).
        let counts = |lane: usize, out: &mut [u32]| {
            for (row, c) in out.iter_mut().enumerate() {
                *c = if lane == 3 && row == 1 {
                    300
                } else {
                    (lane * 10 + row) as u32
                };
            }
        };
        assert_eq!(tile::<u8>(3, 2..4, &counts).unwrap(), None);
        assert_eq!(
            tile::<u8>(3, 4..5, &counts).unwrap(),
            Some(vec![40, 41, 42])
        );
        assert_eq!(
            tile::<u32>(3, 2..4, &counts).unwrap(),
            Some(vec![20, 21, 22, 30, 300, 32])
        );
    }

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
