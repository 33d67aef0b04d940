//! Decisions from calibration measurements (issue 38), starting with the first one
//! people make: **is this model calibrated?** (docs/decisions.md).
//!
//! [`calibration_test`] tests H0: E[Y | f(X)] = f(X) on (score, label) pairs:
//!
//! - every calibration-error estimator of the report can be the statistic, its p-value
//!   from consistency resampling ([`resampling`]: labels redrawn from the scores, exact
//!   at every n);
//! - Spiegelhalter's Z ([`mod@spiegelhalter`]) and Hosmer–Lemeshow ([`mod@hosmer_lemeshow`],
//!   equal-mass groups, χ² with G degrees of freedom, [`chi_square`]) are the analytic
//!   baselines;
//! - the statistic that decides is, by default, the one with the highest power at the
//!   data's n against the model fitted to the data ([`power`]), and the result says
//!   which and why;
//! - [`construction`] measures the tests' size and power on synthetic models with known
//!   calibration (the tables of docs/decisions.md).
//!
//! [`text`] and [`json`] (feature `render`) render a [`CalibrationTest`] for the CLI
//! (`tce test`) and the Python package (`tce.calibration_test`), which only call these.
//! The second decision, **is model A better calibrated than model B?**, is [`compare`]
//! (`tce compare`, `tce.compare`). Later decisions (the choice of a recalibration) belong
//! beside them in this module.

pub mod adjust;
pub mod binned;
pub mod chi_square;
pub mod compare;
pub mod construction;
pub mod hosmer_lemeshow;
#[cfg(feature = "render")]
pub mod json;
pub mod power;
pub mod resampling;
pub mod spiegelhalter;
pub mod statistic;
pub mod text;

use core::fmt;

pub use binned::{binned_interval, clopper_pearson, BinnedInterval, BinnedIntervalError};
pub use hosmer_lemeshow::{
    hosmer_lemeshow, hosmer_lemeshow_bins, HosmerLemeshow, HosmerLemeshowError, DEFAULT_GROUPS,
};
pub use power::Power;
pub use spiegelhalter::{spiegelhalter, Spiegelhalter, SpiegelhalterError};
pub use statistic::{ParseStatisticError, Statistic, StatisticChoice};

use crate::error::PushError;
use crate::fit::EndpointRule;
use crate::norm::Norm;
use crate::report::{ModelKind, ParametricError, ParametricFit};
use crate::sim::estimator::EvaluateError;
use crate::sweep::SweepOptions;
use resampling::{at_least, p_value, stream_seed, Evaluation, SortedData, NULL_STREAM};

/// The most resamples a test takes (`--resamples`, Python's `resamples`): every
/// resampled statistic's value on every resample is kept, 8 bytes each, so 10^5
/// resamples of the five default statistics hold 4 MB. A hundred times the default.
pub const MAX_RESAMPLES: usize = 100_000;

/// The default number of resamples: 999, so that (B + 1)·α is a whole number for
/// α = 0.05 and 0.01 and the resampling tests' size is exactly α.
pub const DEFAULT_RESAMPLES: usize = 999;

/// The default number of label sets simulated from the fitted model to measure each
/// candidate's power (Monte-Carlo standard error at most 0.035).
pub const DEFAULT_POWER_SIMULATIONS: usize = 200;

/// The most power simulations a test takes.
pub const MAX_POWER_SIMULATIONS: usize = 100_000;

/// The default level α.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// What the test computes, and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TestSettings {
    /// The statistic that decides: `auto` (the most powerful on the fitted model) or a
    /// given one. Every default statistic's p-value is reported either way.
    pub statistic: StatisticChoice,
    /// Consistency resamples B (1 to [`MAX_RESAMPLES`]).
    pub resamples: usize,
    /// The level α of the decision, in (0, 1).
    pub alpha: f64,
    /// The seed of the resamples and the power simulations.
    pub seed: u64,
    /// Bins of ECE_bin, ECE_debias and MCE (the sweep picks its own).
    pub bins: usize,
    /// The exponent p of the binned estimators and KDE (smooth ECE is at p = 1).
    pub norm: Norm,
    /// The sweep's limit and cap.
    pub sweep: SweepOptions,
    /// Hosmer–Lemeshow's equal-mass groups G.
    pub groups: usize,
    /// Label sets simulated from the fitted model for each candidate's power (`auto`
    /// only; 1 to [`MAX_POWER_SIMULATIONS`]).
    pub power_simulations: usize,
}

impl Default for TestSettings {
    fn default() -> Self {
        TestSettings {
            statistic: StatisticChoice::Auto,
            resamples: DEFAULT_RESAMPLES,
            alpha: DEFAULT_ALPHA,
            seed: 0,
            bins: 15,
            norm: Norm::L2,
            sweep: SweepOptions::default(),
            groups: DEFAULT_GROUPS,
            power_simulations: DEFAULT_POWER_SIMULATIONS,
        }
    }
}

pub(crate) fn check_groups(groups: usize) -> Result<(), TestError> {
    if groups == 0 || groups > crate::MAX_BINS {
        return Err(TestError::GroupsOutOfRange(groups));
    }
    Ok(())
}

impl TestSettings {
    /// Checks what does not depend on the data: the resamples and power simulations
    /// within their bounds, α in (0, 1), bins and groups from 1 to [`crate::MAX_BINS`].
    /// [`calibration_test`] starts with it; a caller may run it before reading any data.
    pub fn check(&self) -> Result<(), TestError> {
        if self.resamples == 0 || self.resamples > MAX_RESAMPLES {
            return Err(TestError::ResamplesOutOfRange(self.resamples));
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(TestError::InvalidAlpha(self.alpha));
        }
        if self.power_simulations == 0 || self.power_simulations > MAX_POWER_SIMULATIONS {
            return Err(TestError::PowerSimulationsOutOfRange(
                self.power_simulations,
            ));
        }
        crate::estimate::check_bins(self.bins).map_err(|_| TestError::BinsOutOfRange(self.bins))?;
        check_groups(self.groups)
    }

    /// The statistics a test reports, in order: [`Statistic::defaults`], and a given
    /// statistic that is not among them last.
    pub fn statistics(&self) -> Vec<Statistic> {
        self.with_needed(&Statistic::defaults())
    }

    /// `statistics`, then those these settings need and `statistics` lacks: the given
    /// statistic, or with `auto` every candidate.
    pub fn with_needed(&self, statistics: &[Statistic]) -> Vec<Statistic> {
        let mut all = statistics.to_vec();
        let needed: Vec<Statistic> = match self.statistic {
            StatisticChoice::Given(s) => vec![s],
            StatisticChoice::Auto => Statistic::candidates().to_vec(),
        };
        for s in needed {
            if !all.contains(&s) {
                all.push(s);
            }
        }
        all
    }

    fn evaluation(&self) -> Evaluation {
        Evaluation {
            norm: self.norm,
            bins: self.bins,
            sweep: self.sweep,
        }
    }
}

/// Why a statistic has no value on the data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Undefined {
    /// The estimator is undefined on the data (KDE without a hit, say).
    Estimator(EvaluateError),
    /// The estimator is undefined on one of the resamples (KDE on a resample without a
    /// hit): no p-value.
    OnResample {
        /// The resample (0-based).
        resample: usize,
        /// Why.
        cause: EvaluateError,
    },
    /// Spiegelhalter's Z is undefined.
    Spiegelhalter(SpiegelhalterError),
    /// Hosmer–Lemeshow's C is undefined.
    HosmerLemeshow(HosmerLemeshowError),
}

impl fmt::Display for Undefined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Estimator(e) => write!(f, "undefined on these data: {e}"),
            Self::OnResample { resample, cause } => {
                write!(f, "undefined on resample {resample}: {cause}")
            }
            Self::Spiegelhalter(e) => write!(f, "{e}"),
            Self::HosmerLemeshow(e) => write!(f, "{e}"),
        }
    }
}

/// Why no test could be made.
#[derive(Clone, Debug, PartialEq)]
pub enum TestError {
    /// No samples.
    NoSamples,
    /// A sample was refused (score outside [0, 1], NaN, label not 0/1, lengths differ);
    /// nothing was computed.
    Push(PushError),
    /// More samples than a sorted buffer holds ([`crate::buffer::MAX_CAPACITY`]).
    TooManySamples(usize),
    /// The allocator refused `bytes` bytes for the sorted samples.
    OutOfMemory {
        /// The bytes asked for.
        bytes: usize,
    },
    /// Resamples of 0 or more than [`MAX_RESAMPLES`] (refused before any work).
    ResamplesOutOfRange(usize),
    /// α is not in (0, 1).
    InvalidAlpha(f64),
    /// Power simulations of 0 or more than [`MAX_POWER_SIMULATIONS`].
    PowerSimulationsOutOfRange(usize),
    /// Bins of 0 or more than [`crate::MAX_BINS`].
    BinsOutOfRange(usize),
    /// Hosmer–Lemeshow groups of 0 or more than [`crate::MAX_BINS`].
    GroupsOutOfRange(usize),
    /// A statistic asked for on its own is undefined on the data
    /// ([`spiegelhalter()`], [`hosmer_lemeshow()`]).
    Undefined(Undefined),
}

impl fmt::Display for TestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSamples => f.write_str("no samples"),
            Self::Push(e) => write!(f, "{e}"),
            Self::TooManySamples(n) => write!(
                f,
                "{n} samples: a test holds at most {}",
                crate::buffer::MAX_CAPACITY
            ),
            Self::OutOfMemory { bytes } => {
                write!(f, "cannot allocate {bytes} bytes for the sorted samples")
            }
            Self::ResamplesOutOfRange(b) => write!(
                f,
                "{b} resamples: a test takes 1 to {MAX_RESAMPLES} (tce::decision::MAX_RESAMPLES)"
            ),
            Self::InvalidAlpha(a) => write!(f, "the level alpha must be in (0, 1), got {a}"),
            Self::PowerSimulationsOutOfRange(m) => write!(
                f,
                "{m} power simulations: a test takes 1 to {MAX_POWER_SIMULATIONS} \
                 (tce::decision::MAX_POWER_SIMULATIONS)"
            ),
            Self::BinsOutOfRange(b) => {
                write!(f, "{b} bins: the bins must be 1 to {}", crate::MAX_BINS)
            }
            Self::GroupsOutOfRange(g) => write!(
                f,
                "{g} Hosmer-Lemeshow groups: the groups must be 1 to {}",
                crate::MAX_BINS
            ),
            Self::Undefined(u) => write!(f, "{u}"),
        }
    }
}

impl std::error::Error for TestError {}

/// Where a p-value comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reference {
    /// Consistency resampling: `at_least` of the `resamples` replicates were at least the
    /// data's value; p = (1 + at_least) / (resamples + 1).
    Resampling {
        /// B.
        resamples: usize,
        /// #{b : T*_b ≥ T}.
        at_least: usize,
    },
    /// The standard normal, two-sided (Spiegelhalter's Z).
    Normal,
    /// χ² with these degrees of freedom (Hosmer–Lemeshow).
    ChiSquare {
        /// The degrees of freedom.
        degrees_of_freedom: usize,
    },
}

/// A statistic's value on the data and its p-value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// The statistic: the estimate (a fraction) for a resampled estimator, Z, or C.
    pub value: f64,
    /// b* of a sweep on the data.
    pub sweep_bins: Option<usize>,
    /// The p-value.
    pub p_value: f64,
    /// Where it comes from.
    pub reference: Reference,
}

/// One statistic of a test.
#[derive(Clone, Debug, PartialEq)]
pub struct StatisticResult {
    /// The statistic.
    pub statistic: Statistic,
    /// Its value and p-value, or why it has none.
    pub outcome: Result<Outcome, Undefined>,
    /// Its resampled values under H0, sorted ascending (resampled statistics only).
    pub null: Vec<f64>,
}

/// Why the deciding statistic is the one it is.
#[derive(Clone, Debug, PartialEq)]
pub enum Basis {
    /// The caller named it.
    Given,
    /// The highest power at the data's n against the fitted model.
    HighestPower,
    /// The fitted model is calibrated at the data's scores (every test has power α
    /// against it): [`Statistic::fallback`].
    CalibratedFit,
    /// No model could be fitted: [`Statistic::fallback`].
    NoFit(ParametricError),
}

/// How the deciding statistic was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// Index of the statistic in [`CalibrationTest::results`].
    pub statistic: usize,
    /// Why it.
    pub basis: Basis,
    /// The fitted model (`auto` with a fit).
    pub fit: Option<Box<ParametricFit>>,
    /// The fitted model's TCE_p (fraction) at the test's p, when known.
    pub fit_tce: Option<f64>,
    /// Each candidate's power against the fitted model ([`Basis::HighestPower`] only),
    /// in [`Statistic::candidates`] order.
    pub powers: Vec<Power>,
    /// The label sets simulated for them.
    pub simulations: usize,
}

/// Rows whose label H0 rules out: a score of exactly 1 with label 0, or 0 with label 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Contradictions {
    /// Score 1.0, label 0.
    pub wrong_at_one: usize,
    /// Score 0.0, label 1.
    pub right_at_zero: usize,
}

impl Contradictions {
    /// Their number.
    pub fn total(&self) -> usize {
        self.wrong_at_one + self.right_at_zero
    }
}

/// The decision at α.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// The deciding statistic's p-value.
    pub p_value: f64,
    /// p ≤ α: H0 (calibration) is rejected.
    pub reject: bool,
}

/// Everything a calibration test computes.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibrationTest {
    /// The settings.
    pub settings: TestSettings,
    /// Samples.
    pub n: usize,
    /// Hits.
    pub hits: u64,
    /// Rows H0 rules out.
    pub contradictions: Contradictions,
    /// Every statistic, in [`TestSettings::statistics`] order.
    pub results: Vec<StatisticResult>,
    /// The deciding statistic and why.
    pub choice: Choice,
}

impl CalibrationTest {
    /// The deciding statistic's result.
    pub fn chosen(&self) -> &StatisticResult {
        &self.results[self.choice.statistic]
    }

    /// The decision at α; `None` when the deciding statistic is undefined on the data.
    pub fn decision(&self) -> Option<Decision> {
        let outcome = self.chosen().outcome.as_ref().ok()?;
        Some(Decision {
            p_value: outcome.p_value,
            reject: outcome.p_value <= self.settings.alpha,
        })
    }

    /// The result of `statistic`, if the test has it.
    pub fn result(&self, statistic: Statistic) -> Option<&StatisticResult> {
        self.results.iter().find(|r| r.statistic == statistic)
    }
}

/// Tests H0: E[Y | f(X)] = f(X) on (scores, labels) with every statistic of
/// [`TestSettings::statistics`], and decides at α by the chosen one (module docs,
/// docs/decisions.md). Bad input is refused whole with a named error, nothing computed.
pub fn calibration_test(
    scores: &[f64],
    labels: &[u8],
    settings: &TestSettings,
) -> Result<CalibrationTest, TestError> {
    calibration_test_with(scores, labels, settings, &settings.statistics())
}

/// [`calibration_test`] with the statistics `statistics` (in that order), and those the
/// settings need: the given statistic, or with `auto` every [`Statistic::candidates`],
/// appended when missing. For runs that need fewer than the defaults (the
/// by-construction tables, [`construction`]).
pub fn calibration_test_with(
    scores: &[f64],
    labels: &[u8],
    settings: &TestSettings,
    statistics: &[Statistic],
) -> Result<CalibrationTest, TestError> {
    run(scores, labels, settings, statistics, Alternative::FitHere)
}

/// [`calibration_test`] with the `auto` choice's power measured against `fit`, a model
/// already fitted to these same (scores, labels), instead of fitting the flexible model
/// again: the report's entry point, which fits its model once for its bias table and for
/// the test (`tce::report::report`). With the report's default model (flexible, default
/// endpoint rule) `fit` is the model [`calibration_test`] fits, and the two give the same
/// test bit for bit; a fit that failed (`Err`) makes the choice fall back as
/// [`Basis::NoFit`]. With a given statistic the fit is not used.
pub fn calibration_test_on_fit(
    scores: &[f64],
    labels: &[u8],
    settings: &TestSettings,
    fit: Result<&ParametricFit, &ParametricError>,
) -> Result<CalibrationTest, TestError> {
    run(
        scores,
        labels,
        settings,
        &settings.statistics(),
        Alternative::Fitted(fit),
    )
}

/// The model the `auto` choice measures the candidates' power against.
#[derive(Clone, Copy)]
enum Alternative<'a> {
    /// The flexible model, fitted here to the data.
    FitHere,
    /// A model the caller fitted to the same data (or why it could not).
    Fitted(Result<&'a ParametricFit, &'a ParametricError>),
}

impl Alternative<'_> {
    fn fit(self, scores: &[f64], labels: &[u8]) -> Result<Box<ParametricFit>, ParametricError> {
        match self {
            Alternative::FitHere => ParametricFit::of(
                scores,
                labels,
                ModelKind::Flexible,
                &EndpointRule::default(),
            )
            .map(Box::new),
            Alternative::Fitted(fit) => fit.map(|f| Box::new(f.clone())).map_err(Clone::clone),
        }
    }
}

fn run(
    scores: &[f64],
    labels: &[u8],
    settings: &TestSettings,
    statistics: &[Statistic],
    alternative: Alternative<'_>,
) -> Result<CalibrationTest, TestError> {
    settings.check()?;
    let data = SortedData::new(scores, labels)?;
    let evaluation = settings.evaluation();
    let statistics = settings.with_needed(statistics);

    // The resampled statistics: the data's value, then B draws of labels from the scores.
    let resampled: Vec<(usize, crate::sim::EstimatorSpec)> = statistics
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.estimator().map(|spec| (i, spec)))
        .collect();
    let observed_view = data.observed_view();
    let mut outcomes: Vec<Option<Result<Outcome, Undefined>>> = vec![None; statistics.len()];
    let mut defined = Vec::new();
    for &(i, spec) in &resampled {
        match evaluation.evaluate(&spec, &observed_view) {
            Ok(value) => defined.push((i, spec, value)),
            Err(cause) => outcomes[i] = Some(Err(Undefined::Estimator(cause))),
        }
    }
    let specs: Vec<_> = defined.iter().map(|&(_, spec, _)| spec).collect();
    let mut nulls: Vec<Vec<f64>> = vec![Vec::new(); statistics.len()];
    // Labels drawn from the scores themselves: y* ~ Bernoulli(f).
    let replicates = data.replicates(
        data.scores(),
        &specs,
        settings.resamples,
        stream_seed(settings.seed, NULL_STREAM),
        &evaluation,
    );
    for (&(i, _, (value, sweep_bins)), replicates) in defined.iter().zip(replicates) {
        outcomes[i] = Some(match replicates {
            Ok(mut null) => {
                null.sort_by(f64::total_cmp);
                let count = at_least(&null, value);
                nulls[i] = null;
                Ok(Outcome {
                    value,
                    sweep_bins,
                    p_value: p_value(count, settings.resamples),
                    reference: Reference::Resampling {
                        resamples: settings.resamples,
                        at_least: count,
                    },
                })
            }
            Err(e) => Err(Undefined::OnResample {
                resample: e.draw,
                cause: e.cause,
            }),
        });
    }

    // The analytic baselines.
    let sorted = data.observed();
    for (i, s) in statistics.iter().enumerate() {
        match s {
            Statistic::Spiegelhalter => {
                outcomes[i] = Some(
                    spiegelhalter::spiegelhalter_of(sorted.iter())
                        .map(|z| Outcome {
                            value: z.z,
                            sweep_bins: None,
                            p_value: z.p_value,
                            reference: Reference::Normal,
                        })
                        .map_err(Undefined::Spiegelhalter),
                );
            }
            Statistic::HosmerLemeshow => {
                outcomes[i] = Some(
                    hosmer_lemeshow::hosmer_lemeshow_sorted(&sorted, settings.groups)
                        .map(|hl| Outcome {
                            value: hl.statistic,
                            sweep_bins: None,
                            p_value: hl.p_value,
                            reference: Reference::ChiSquare {
                                degrees_of_freedom: hl.degrees_of_freedom,
                            },
                        })
                        .map_err(Undefined::HosmerLemeshow),
                );
            }
            Statistic::Resampled(_) => {}
        }
    }
    let results: Vec<StatisticResult> = statistics
        .iter()
        .zip(outcomes)
        .zip(nulls)
        .map(|((&statistic, outcome), null)| StatisticResult {
            statistic,
            outcome: outcome.expect("every statistic has an outcome"),
            null,
        })
        .collect();

    let choice = choose(
        || alternative.fit(scores, labels),
        &data,
        &results,
        settings,
        &evaluation,
    );
    let contradictions = data.scores().iter().zip(data.labels()).fold(
        Contradictions::default(),
        |mut c, (&f, &y)| {
            c.wrong_at_one += usize::from(f == 1.0 && y == 0);
            c.right_at_zero += usize::from(f == 0.0 && y == 1);
            c
        },
    );
    Ok(CalibrationTest {
        settings: *settings,
        n: data.len(),
        hits: data.hits(),
        contradictions,
        results,
        choice,
    })
}

fn index_of(results: &[StatisticResult], statistic: Statistic) -> usize {
    results
        .iter()
        .position(|r| r.statistic == statistic)
        .expect("the defaults are always tested")
}

/// The deciding statistic: the given one, or the candidate with the highest power on
/// the fitted model (module [`power`]).
fn choose(
    fit: impl FnOnce() -> Result<Box<ParametricFit>, ParametricError>,
    data: &SortedData,
    results: &[StatisticResult],
    settings: &TestSettings,
    evaluation: &Evaluation,
) -> Choice {
    let fallback = |basis, fit, fit_tce| Choice {
        statistic: index_of(results, Statistic::fallback()),
        basis,
        fit,
        fit_tce,
        powers: Vec::new(),
        simulations: 0,
    };
    if let StatisticChoice::Given(statistic) = settings.statistic {
        return Choice {
            statistic: index_of(results, statistic),
            basis: Basis::Given,
            fit: None,
            fit_tce: None,
            powers: Vec::new(),
            simulations: 0,
        };
    }
    let fit = match fit() {
        Ok(fit) => fit,
        Err(e) => return fallback(Basis::NoFit(e), None, None),
    };
    let model = fit.model();
    let fit_tce = model.tce(settings.norm.p()).ok();
    let accuracies = power::accuracies(&model, data.scores());
    if accuracies.iter().zip(data.scores()).all(|(a, f)| a == f) {
        return fallback(Basis::CalibratedFit, Some(fit), fit_tce);
    }
    // The candidates defined on the data (the binned ones always are).
    let candidates: Vec<(Statistic, &[f64])> = Statistic::candidates()
        .into_iter()
        .filter_map(|s| {
            let r = &results[index_of(results, s)];
            r.outcome.is_ok().then_some((s, r.null.as_slice()))
        })
        .collect();
    let (statistics, null): (Vec<Statistic>, Vec<&[f64]>) = candidates.into_iter().unzip();
    let powers = power::powers(
        data,
        &accuracies,
        &statistics,
        &null,
        settings.power_simulations,
        settings.seed,
        settings.alpha,
        evaluation,
    );
    let best = power::most_powerful(&powers).expect("the binned candidates are always defined");
    Choice {
        statistic: index_of(results, powers[best].statistic),
        basis: Basis::HighestPower,
        fit: Some(fit),
        fit_tce,
        powers,
        simulations: settings.power_simulations,
    }
}
