//! The calibration report (`tce report`): every estimator with bootstrap intervals, a
//! check of the parametric model fitted to the data, each estimator's bias at the data's
//! n on that model, and the estimator to trust (docs/report.md).
//!
//! - `weighted` (crate-private): the binned estimators over sorted samples with integer weights, so a
//!   bootstrap resample needs no sort.
//! - [`bootstrap`]: resamples, percentile and BCa intervals, the distribution of b*.
//! - [`normal`]: Φ and Φ⁻¹ for BCa.
//! - [`plug_in`]: the fitted model's TCE as an estimator, and its error at n from refits
//!   of simulated data sets.
//! - [`classwise`]: the report of every class one-vs-rest, and the marginal calibration
//!   error over the classes with its bootstrap (rows resampled jointly).
//! - [`text`]: the words, and the terminal summary.
//! - [`ties`]: what tied and discrete scores mean for the binned estimators.
//! - [`json`], [`html`] (feature `render`): the JSON object and the self-contained page.
//! - [`sample_weights`]: the report of weighted rows (`sample_weight`, `--weight-col`).
//!
//! [`report`] computes everything; the renderers only format its [`Report`], so the CLI
//! and the Python package print the same. Values are fractions, as in the core.

pub mod bootstrap;
pub mod classwise;
#[cfg(feature = "render")]
pub mod html;
#[cfg(feature = "render")]
pub mod json;
pub mod normal;
pub mod plug_in;
pub mod sample_weights;
pub mod text;
pub mod ties;
pub(crate) mod weighted;

use core::fmt;

pub use bootstrap::{Bootstrap, BootstrapError, Interval, Resampling, Target, JACKKNIFE_GROUPS};
pub use sample_weights::{weighted_report, WeightSummary};

use crate::binning::{Binning, Closure, Ties};
use crate::buffer::SortedBuffer;
use crate::decision::{CalibrationTest, TestError, TestSettings};
use crate::error::PushError;
use crate::fit::flexible::{fit_flexible, FlexibleFit, FlexibleFitError};
use crate::fit::{
    fit_model, fit_model_with_point_masses, AtomAccuracy, EndpointRule, FitError, FittedModel,
};
use crate::norm::Norm;
use crate::sim::estimator::{DataView, EstimatorKind, EvaluateError, EvaluationSettings};
use crate::sim::flexible::FlexibleModel;
use crate::sim::runner::Summary;
use crate::sim::{simulate, EstimatorSpec, Grid, SimulationError};
use crate::stats::BinStats;
use crate::sweep::SweepOptions;

/// What the report computes, and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReportSettings {
    /// The exponent p (the paper's 2 by default). Smooth ECE joins only at p = 1.
    pub norm: Norm,
    /// Bins of ECE_bin, ECE_debias, MCE and the equal-width reliability diagram.
    pub bins: usize,
    /// The equal-width closure.
    pub closure: Closure,
    /// The equal-mass tie policy.
    pub ties: Ties,
    /// The sweep's limit and cap.
    pub sweep: SweepOptions,
    /// Bootstrap resamples (0: no intervals).
    pub resamples: usize,
    /// Simulations from the fitted model; `None`: [`default_simulations`] of n.
    pub simulations: Option<usize>,
    /// The level of every interval, in (0, 1).
    pub level: f64,
    /// The seed of the bootstrap and of the simulations.
    pub seed: u64,
    /// Whether the KDE estimator joins (O(n) grid work per evaluation, slower).
    pub kde: bool,
    /// What the fit makes of scores of exactly 0 or 1.
    pub endpoint: EndpointRule,
    /// Which model of the data the bias figures are simulated from.
    pub model: ModelKind,
    /// Simulated data sets fitted again, for the error of the fitted model's own TCE as
    /// an estimator ([`plug_in`]); `None`: [`plug_in::default_refits`] of n (10 up to
    /// n = 50 000, else 0). At most the number of simulations.
    pub refits: Option<usize>,
    /// The calibration test of the report ("is it calibrated?"); `None`: no test. A
    /// classwise report has none and refuses explicit test settings
    /// ([`ReportError::TestNotClasswise`]).
    pub test: Option<ReportTest>,
}

/// The report's calibration test ([`crate::decision`], docs/decisions.md): the statistic
/// chosen `auto` by its power against the report's own fitted model, at the report's
/// seed, bins, norm and sweep, with Hosmer–Lemeshow's default groups.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReportTest {
    /// Consistency resamples; `None`: [`default_test_resamples`] of n.
    pub resamples: Option<usize>,
    /// Label sets simulated from the fitted model for each candidate's power; `None`:
    /// [`default_test_power_simulations`] of n.
    pub power_simulations: Option<usize>,
    /// The level α of the decision, in (0, 1).
    pub alpha: f64,
}

impl Default for ReportTest {
    fn default() -> Self {
        ReportTest {
            resamples: None,
            power_simulations: None,
            alpha: crate::decision::DEFAULT_ALPHA,
        }
    }
}

/// The budget of label draws behind [`default_test_resamples`]: n · (B + 1) ≤ 2·10^7.
pub const TEST_RESAMPLED_SAMPLES: usize = 20_000_000;

/// The budget of label draws behind [`default_test_power_simulations`]: n · m ≤ 10^7.
pub const TEST_POWER_SAMPLES: usize = 10_000_000;

/// The report's default consistency resamples at n: the test's own default, 999, up to
/// n = 20 000; above it the largest of 499, 199, 99 and 39 with
/// n · (B + 1) ≤ [`TEST_RESAMPLED_SAMPLES`], else 19 (n = 10^5: 199; 10^6: 19), so that
/// the test keeps within the report's time (docs/performance.md). Each keeps (B + 1)·α
/// whole for α = 0.05, so the size stays exactly α; the smallest p-value is 1 / (B + 1).
pub fn default_test_resamples(n: usize) -> usize {
    [crate::decision::DEFAULT_RESAMPLES, 499, 199, 99, 39]
        .into_iter()
        .find(|&b| n.saturating_mul(b + 1) <= TEST_RESAMPLED_SAMPLES)
        .unwrap_or(19)
}

/// The most power simulations the report makes by default: 100, half the test's own
/// default (Monte-Carlo standard error of a power at most 0.05, printed beside it),
/// since at n = 10^4 the test's cost is mostly the candidates' evaluations.
pub const REPORT_POWER_SIMULATIONS: usize = 100;

/// The report's default power simulations at n: [`REPORT_POWER_SIMULATIONS`] up to
/// n = 10^5; above it n · m ≤ [`TEST_POWER_SAMPLES`], never fewer than 20 (n = 10^6:
/// 20). The power's Monte-Carlo standard error, at most 0.5 / √m, is printed beside it.
pub fn default_test_power_simulations(n: usize) -> usize {
    (TEST_POWER_SAMPLES / n.max(1)).clamp(20, REPORT_POWER_SIMULATIONS)
}

impl ReportTest {
    /// The test's settings at n, in a report with `settings`.
    pub fn test_settings(&self, settings: &ReportSettings, n: usize) -> TestSettings {
        TestSettings {
            statistic: crate::decision::StatisticChoice::Auto,
            resamples: self.resamples.unwrap_or_else(|| default_test_resamples(n)),
            alpha: self.alpha,
            seed: settings.seed,
            bins: settings.bins,
            norm: settings.norm,
            sweep: settings.sweep,
            groups: crate::decision::DEFAULT_GROUPS,
            power_simulations: self
                .power_simulations
                .unwrap_or_else(|| default_test_power_simulations(n)),
        }
    }
}

/// The model of the data a report fits and simulates from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModelKind {
    /// The default: point masses at 0 and 1, a Beta or a log-odds mixture density, and
    /// the best of the paper's twelve GLMs, monotone splines in log-odds and the identity
    /// curve, each by AIC ([`crate::fit::flexible`]).
    #[default]
    Flexible,
    /// The paper's: a Beta density (with point masses at 0 and 1 when the data has exact
    /// 0s or 1s) and the best of the twelve GLMs ([`fit`]).
    Paper,
}

impl ModelKind {
    /// Its name on the command line and in JSON: `flexible` or `paper`.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Flexible => "flexible",
            ModelKind::Paper => "paper",
        }
    }
}

impl core::str::FromStr for ModelKind {
    type Err = String;
    fn from_str(s: &str) -> Result<ModelKind, String> {
        match s {
            "flexible" => Ok(ModelKind::Flexible),
            "paper" => Ok(ModelKind::Paper),
            other => Err(format!(
                "unknown model `{other}`: expected `flexible` or `paper`"
            )),
        }
    }
}

impl ReportSettings {
    /// Checks the settings that do not depend on the data: the level in (0, 1), at most
    /// [`MAX_RESAMPLES`] resamples, 1 to [`MAX_SIMULATIONS`] simulations and at most
    /// that many refits (when given).
    /// [`report`] and [`classwise::classwise_report`] start with it; a caller may run it
    /// first to refuse bad settings before reading any data.
    pub fn check(&self) -> Result<(), ReportError> {
        if !(self.level > 0.0 && self.level < 1.0) {
            return Err(ReportError::InvalidLevel(self.level));
        }
        if self.resamples > MAX_RESAMPLES {
            return Err(ReportError::TooManyResamples(self.resamples));
        }
        match self.simulations {
            Some(m) if m == 0 || m > MAX_SIMULATIONS => {
                return Err(ReportError::SimulationsOutOfRange(m))
            }
            _ => {}
        }
        if let Some(test) = &self.test {
            // The data-free checks of the test, at the defaults where n decides.
            test.test_settings(self, 1)
                .check()
                .map_err(ReportError::Test)?;
        }
        match (self.refits, self.simulations) {
            (Some(refits), Some(simulations)) if refits > simulations => {
                Err(ReportError::TooManyRefits {
                    refits,
                    simulations,
                })
            }
            (Some(refits), None) if refits > MAX_SIMULATIONS => Err(ReportError::TooManyRefits {
                refits,
                simulations: MAX_SIMULATIONS,
            }),
            _ => Ok(()),
        }
    }
}

impl Default for ReportSettings {
    fn default() -> Self {
        ReportSettings {
            norm: Norm::L2,
            bins: 15,
            closure: Closure::Left,
            ties: Ties::Split,
            sweep: SweepOptions::default(),
            resamples: 1000,
            simulations: None,
            level: 0.95,
            seed: 0,
            kde: false,
            endpoint: EndpointRule::default(),
            model: ModelKind::Flexible,
            refits: None,
            test: Some(ReportTest::default()),
        }
    }
}

/// The most bootstrap resamples a report takes (`--resamples`, Python's `resamples`).
/// The bootstrap keeps every estimator's value on every resample until the intervals are
/// read off them: about 50 bytes a resample and estimator, so 10^5 resamples of the ten
/// estimators of `--norm 1 --kde` hold about 50 MB (times K + 1 for K classes with
/// `--classwise`). A hundred times the default; percentile and BCa intervals settle long
/// before it.
pub const MAX_RESAMPLES: usize = 100_000;

/// The most data sets a report simulates from its fit (`--simulations`, Python's
/// `simulations`): the simulator's bound on repetitions
/// ([`crate::sim::runner::MAX_REPETITIONS`]), whose record of every estimator on every
/// data set the bias table reads. A hundred times the default.
pub const MAX_SIMULATIONS: usize = crate::sim::runner::MAX_REPETITIONS;

/// The budget of simulated samples behind [`default_simulations`]: n · m ≤ 5·10^7.
pub const SIMULATED_SAMPLES: usize = 50_000_000;

/// The default number of simulations at n: 1000, fewer for large n so that they draw at
/// most [`SIMULATED_SAMPLES`] samples in all, never fewer than 50 (n = 10^6: 50).
pub fn default_simulations(n: usize) -> usize {
    (SIMULATED_SAMPLES / n.max(1)).clamp(50, 1000)
}

/// The central share of the simulated values the real one must fall in for the fit to
/// count as reproducing the data: 99%.
pub const FIT_CHECK_LEVEL: f64 = 0.99;

/// Which stage a progress call is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// One bootstrap resample finished.
    Bootstrap,
    /// One simulation from the fitted model finished.
    Simulation,
}

/// Why no report could be made.
#[derive(Clone, Debug, PartialEq)]
pub enum ReportError {
    /// No samples.
    NoSamples,
    /// More resamples than [`MAX_RESAMPLES`] (refused before any work).
    TooManyResamples(usize),
    /// Simulations of 0 or more than [`MAX_SIMULATIONS`] (refused before any work).
    SimulationsOutOfRange(usize),
    /// Refits asked of a classwise report, which does not refit its classes.
    RefitsNotClasswise(usize),
    /// Test settings (resamples, power simulations or α) given to a classwise report,
    /// which has no calibration test.
    TestNotClasswise,
    /// A setting of the calibration test is out of range (refused before any work).
    Test(TestError),
    /// More refits than simulated data sets to refit (refused before any work).
    TooManyRefits {
        /// The refits asked for.
        refits: usize,
        /// The simulations (given, or the default at n).
        simulations: usize,
    },
    /// The allocator refused `bytes` bytes for the samples or the bootstrap's results.
    OutOfMemory {
        /// The bytes asked for.
        bytes: usize,
    },
    /// More samples than a sorted buffer holds ([`crate::buffer::MAX_CAPACITY`]).
    TooManySamples(usize),
    /// A sample was refused (score outside [0, 1], NaN, label not 0/1, lengths differ).
    Push(PushError),
    /// The level is not in (0, 1).
    InvalidLevel(f64),
    /// An estimator failed on the data itself.
    Estimate {
        /// The estimator.
        estimator: EstimatorSpec,
        /// Why.
        cause: EvaluateError,
    },
    /// The sample weights of a [`weighted_report`] were refused (a weight negative, NaN
    /// or infinite, as many weights as rows, not all zero).
    Weight(crate::weights::WeightError),
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSamples => f.write_str("no samples"),
            Self::TooManyResamples(r) => write!(
                f,
                "{r} resamples: a report takes at most {MAX_RESAMPLES} (tce::report::MAX_RESAMPLES)"
            ),
            Self::SimulationsOutOfRange(m) => write!(
                f,
                "{m} simulations: a report takes 1 to {MAX_SIMULATIONS} (tce::report::MAX_SIMULATIONS)"
            ),
            Self::RefitsNotClasswise(m) => write!(
                f,
                "{m} refits: a classwise report does not refit its classes (0 or none)"
            ),
            Self::TestNotClasswise => f.write_str(
                "a classwise report has no calibration test: run `tce test` on the top-label \
                 confidences (test resamples, power simulations and alpha are top-label \
                 report settings)",
            ),
            Self::Test(e) => write!(f, "the calibration test: {e}"),
            Self::TooManyRefits {
                refits,
                simulations,
            } => write!(
                f,
                "{refits} refits: a report refits at most its {simulations} simulated data sets (more simulations allow more)"
            ),
            Self::OutOfMemory { bytes } => write!(
                f,
                "cannot allocate {bytes} bytes for the report (fewer resamples need less)"
            ),
            Self::TooManySamples(n) => write!(
                f,
                "{n} samples: a report holds at most {}",
                crate::buffer::MAX_CAPACITY
            ),
            Self::Push(e) => write!(f, "{e}"),
            Self::InvalidLevel(l) => write!(f, "the interval level must be in (0, 1), got {l}"),
            Self::Estimate { estimator, cause } => write!(f, "{estimator}: {cause}"),
            Self::Weight(e) => write!(f, "sample weights: {e}"),
        }
    }
}

impl std::error::Error for ReportError {}

/// One estimator on the data, with its bootstrap.
#[derive(Clone, Debug, PartialEq)]
pub struct EstimatorResult {
    /// The estimator and its bins.
    pub target: Target,
    /// Its value on the data.
    pub estimate: f64,
    /// b* on the data, for the sweep.
    pub sweep_bins: Option<usize>,
    /// The bootstrap (`None` with 0 resamples).
    pub bootstrap: Option<Result<Bootstrap, BootstrapError>>,
}

impl EstimatorResult {
    /// The interval to quote: BCa when defined, else percentile; with its kind.
    pub fn interval(&self) -> Option<(Interval, IntervalKind)> {
        let boot = self.bootstrap.as_ref()?.as_ref().ok()?;
        Some(match boot.bca {
            Some(bca) => (bca, IntervalKind::Bca),
            None => (boot.percentile, IntervalKind::Percentile),
        })
    }
}

/// Which bootstrap interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntervalKind {
    /// Percentile.
    Percentile,
    /// Bias-corrected and accelerated.
    Bca,
}

/// One bin of a reliability diagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReliabilityBin {
    /// Samples in the bin.
    pub count: u64,
    /// Hits in the bin.
    pub hits: u64,
    /// Mean confidence (`None` when empty).
    pub mean_score: Option<f64>,
    /// Accuracy (`None` when empty).
    pub accuracy: Option<f64>,
    /// Wilson score interval of the accuracy at the report's level (`None` when empty);
    /// for weighted rows at the bin's Kish effective count ([`BinWeight::effective`]).
    pub interval: Option<Interval>,
    /// For weighted rows ([`weighted_report`]): the bin's weight. `count` and `hits` then
    /// count rows, and the mean confidence and accuracy are weighted means.
    pub weight: Option<BinWeight>,
}

/// The weight in one bin of a weighted report's reliability diagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BinWeight {
    /// W_k = Σ w (a row split between two equal-weight bins counts its part in each).
    pub weight: f64,
    /// Σ w·y.
    pub weighted_hits: f64,
    /// Kish's effective count W_k² / Σ w², the count of the bin's Wilson interval.
    pub effective: f64,
}

/// A reliability diagram: the bins of one binning of the data.
#[derive(Clone, Debug, PartialEq)]
pub struct Reliability {
    /// The binning.
    pub binning: Binning,
    /// The bins, bin 0 first.
    pub bins: Vec<ReliabilityBin>,
}

/// The Fig. 3c check of one estimator: its real value against its values on data
/// simulated from the fit at the same n.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitCheck {
    /// The estimator.
    pub target: Target,
    /// Its value on the real data.
    pub real: f64,
    /// The mean of its simulated values.
    pub simulated_mean: f64,
    /// The central [`FIT_CHECK_LEVEL`] share of its simulated values.
    pub interval: Interval,
    /// Whether the real value lies in that interval.
    pub reproduces: bool,
}

/// One estimator's error at the data's n on the fitted model (fractions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BiasRow {
    /// The estimator.
    pub target: Target,
    /// Mean estimate, bias, sd, RMSE and Monte-Carlo se of the bias against the fit's TCE.
    pub summary: Summary,
}

/// A fit of either model ([`ModelKind`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ParametricFit {
    /// The paper's ([`fit`]).
    Paper(Box<FittedModel>),
    /// The flexible one ([`fit_flexible`]).
    Flexible(Box<FlexibleFit>),
}

impl ParametricFit {
    /// The fit of `kind` to (scores, labels).
    pub fn of(
        scores: &[f64],
        labels: &[u8],
        kind: ModelKind,
        endpoint: &EndpointRule,
    ) -> Result<ParametricFit, ParametricError> {
        Ok(match kind {
            ModelKind::Paper => ParametricFit::Paper(Box::new(
                fit(scores, labels, endpoint).map_err(ParametricError::Fit)?,
            )),
            ModelKind::Flexible => ParametricFit::Flexible(Box::new(
                fit_flexible(scores, labels, endpoint).map_err(ParametricError::FlexibleFit)?,
            )),
        })
    }

    /// The model it fitted, as the simulator runs it.
    pub fn model(&self) -> FlexibleModel {
        match self {
            ParametricFit::Paper(fit) => FlexibleModel::from(fit.model),
            ParametricFit::Flexible(fit) => fit.model.clone(),
        }
    }

    /// The kind of model.
    pub fn kind(&self) -> ModelKind {
        match self {
            ParametricFit::Paper(_) => ModelKind::Paper,
            ParametricFit::Flexible(_) => ModelKind::Flexible,
        }
    }

    /// The fitted curve's name: a GLM's, a spline's, or the identity.
    pub fn curve_name(&self) -> String {
        match self {
            ParametricFit::Paper(fit) => fit.best_glm().spec.name(),
            ParametricFit::Flexible(fit) => fit.curve_name(),
        }
    }

    /// The model's TCE_1 and TCE_2 (fractions).
    pub fn tce_l1_l2(&self) -> (f64, f64) {
        match self {
            ParametricFit::Paper(fit) => (fit.tce_l1, fit.tce_l2),
            ParametricFit::Flexible(fit) => (fit.tce_l1, fit.tce_l2),
        }
    }
}

/// The parametric part: the fit, its check, and the bias table.
#[derive(Clone, Debug, PartialEq)]
pub struct Parametric {
    /// The fit of the settings' [`ModelKind`].
    pub fit: ParametricFit,
    /// The fitted model, as simulated.
    pub model: FlexibleModel,
    /// The fit's exact TCE_p (fraction).
    pub tce: f64,
    /// The number of simulated data sets.
    pub simulations: usize,
    /// The checks: 15-bin (settings' bins) equal-width ECE_bin (the paper's) and
    /// equal-mass ECE_sweep.
    pub checks: Vec<FitCheck>,
    /// Whether every check reproduces the data.
    pub reproduces: bool,
    /// Bias, sd and RMSE of every TCE estimator, in the report's estimator order.
    pub bias: Vec<BiasRow>,
    /// Each bias row's estimates on the simulated data sets (fractions, in simulation
    /// order): what a classwise report combines across classes.
    pub simulated: Vec<Vec<f64>>,
    /// The fitted model's TCE as an estimator and its error at n from refits (`None`
    /// with 0 refits).
    pub plug_in: Option<plug_in::PlugIn>,
}

/// Why the parametric part is missing.
#[derive(Clone, Debug, PartialEq)]
pub enum ParametricError {
    /// The paper's fit failed.
    Fit(FitError),
    /// The flexible fit failed.
    FlexibleFit(FlexibleFitError),
    /// The simulation failed.
    Simulation(SimulationError),
    /// The rows are weighted ([`weighted_report`]): the fit and the simulations draw
    /// unweighted data sets, so they would give the bias of other estimators than the
    /// weighted ones reported (docs/report.md, "Weighted rows").
    Weighted,
    /// A class of a classwise report outside the sample of classes that are fitted and
    /// simulated ([`classwise`]).
    NotSimulated {
        /// The classes fitted and simulated.
        simulated: usize,
        /// All the classes.
        classes: usize,
    },
}

impl fmt::Display for ParametricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fit(e) => write!(f, "the parametric fit failed: {e}"),
            Self::FlexibleFit(e) => write!(f, "the fit of the model failed: {e}"),
            Self::Simulation(e) => write!(f, "the simulation from the fit failed: {e}"),
            Self::Weighted => f.write_str(
                "not fitted: the rows are weighted, and the model's simulations draw unweighted data sets, whose bias is not the weighted estimators'",
            ),
            Self::NotSimulated { simulated, classes } => write!(
                f,
                "not simulated: a seeded sample of {simulated} of the {classes} classes is fitted and simulated"
            ),
        }
    }
}

/// Why an estimator is recommended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// Lowest RMSE at this n on a fit that reproduces the data.
    LowestRmse,
    /// Lowest RMSE, but the fit does not reproduce the data: trust it less.
    LowestRmsePoorFit,
    /// No fit: the paper's default, equal-mass ECE_sweep.
    NoFit,
    /// A class of a classwise report that was not fitted and simulated
    /// ([`ParametricError::NotSimulated`]): the estimator recommended for the marginal.
    Marginal,
}

/// The estimator to report, and its value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recommendation {
    /// Index in [`Report::estimators`].
    pub estimator: usize,
    /// Why it.
    pub basis: Basis,
    /// Index in [`Parametric::bias`] of its row (with a fit).
    pub bias_row: Option<usize>,
    /// Index in [`Parametric::bias`] of the usual estimator's row, equal-width ECE_bin
    /// with the settings' bins: how far it is expected to be off.
    pub usual_row: Option<usize>,
}

/// An estimator left out of a report because it is undefined on the data (KDE without a
/// hit, or with all hit scores equal), and why. Only the estimators that take no bins
/// (KDE, smooth ECE) are left out so; a binned estimator that fails is an error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unavailable {
    /// The estimator.
    pub target: Target,
    /// In a classwise report's marginal: the first class it is undefined on.
    pub class: Option<usize>,
    /// Why.
    pub cause: EvaluateError,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.class {
            Some(class) => write!(f, "undefined on class {class}: {}", self.cause),
            None => write!(f, "undefined on these data: {}", self.cause),
        }
    }
}

/// Everything the report computes.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The settings, with the number of simulations resolved.
    pub settings: ReportSettings,
    /// Samples.
    pub n: usize,
    /// Hits.
    pub hits: u64,
    /// Every estimator defined on the data, in [`targets`] order.
    pub estimators: Vec<EstimatorResult>,
    /// The estimators of [`targets`] undefined on the data, left out of everything else.
    pub unavailable: Vec<Unavailable>,
    /// Equal-width bins (settings' bins) and equal-mass bins at the sweep's b*.
    pub reliability: Vec<Reliability>,
    /// The fit, its check and the bias table.
    pub parametric: Result<Parametric, ParametricError>,
    /// What to report.
    pub recommendation: Recommendation,
    /// The scores' ties, for the notes on what they mean ([`ties::TieSummary::notes`]).
    pub ties: ties::TieSummary,
    /// "Is it calibrated?": the calibration test, its power against the report's fitted
    /// model ([`crate::decision::calibration_test_on_fit`]); `None` without a test
    /// ([`ReportSettings::test`]), `Err` when the test could not be made.
    pub calibration_test: Option<Result<CalibrationTest, TestError>>,
    /// For weighted rows ([`weighted_report`]): their total, Kish's effective n and the
    /// weighted means; `None` for unweighted rows.
    pub weights: Option<WeightSummary>,
}

/// The estimators of a report, in order: ECE_bin, ECE_sweep, ECE_debias and MCE, each
/// equal-width then equal-mass; smooth ECE at p = 1; KDE when asked.
pub fn targets(settings: &ReportSettings) -> Vec<Target> {
    let binnings = [
        Binning::EqualWidth(settings.closure),
        Binning::EqualMass(settings.ties),
    ];
    let mut targets = Vec::new();
    for kind in [
        EstimatorKind::EceBin,
        EstimatorKind::EceSweep,
        EstimatorKind::EceDebias,
        EstimatorKind::Mce,
    ] {
        for binning in binnings {
            let spec = EstimatorSpec::binned(kind, binning).expect("binned kinds");
            targets.push(Target {
                spec,
                bins: spec.uses_bins().then_some(settings.bins),
            });
        }
    }
    if settings.norm == Norm::L1 {
        targets.push(Target {
            spec: EstimatorSpec::smooth_ece(),
            bins: None,
        });
    }
    if settings.kde {
        targets.push(Target {
            spec: EstimatorSpec::kde(),
            bins: None,
        });
    }
    targets
}

/// Whether an estimator estimates TCE_p (all but MCE, which estimates the largest gap).
pub fn estimates_tce(target: &Target) -> bool {
    target.spec.kind() != EstimatorKind::Mce
}

/// The Wilson score interval of `hits` of `count` at `level`.
pub fn wilson(hits: u64, count: u64, level: f64) -> Option<Interval> {
    (count > 0).then(|| wilson_share(hits as f64 / count as f64, count as f64, level))
}

/// The Wilson score interval of a share `p` of `count` > 0 trials at `level`; `count`
/// need not be whole (a weighted bin's Kish effective count).
pub(crate) fn wilson_share(p: f64, count: f64, level: f64) -> Interval {
    let z = normal::quantile(0.5 + level / 2.0);
    let n = count;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    Interval {
        lower: (centre - half).max(0.0),
        upper: (centre + half).min(1.0),
    }
}

fn reliability(bins: impl Iterator<Item = BinStats>, binning: Binning, level: f64) -> Reliability {
    Reliability {
        binning,
        bins: bins
            .map(|b| ReliabilityBin {
                count: b.count(),
                hits: b.hits(),
                mean_score: b.mean_score(),
                accuracy: b.accuracy(),
                interval: wilson(b.hits(), b.count(), level),
                weight: None,
            })
            .collect(),
    }
}

/// The report of (scores, labels). `progress` is called once per bootstrap resample and
/// once per simulation (from any thread).
pub fn report(
    scores: &[f64],
    labels: &[u8],
    settings: &ReportSettings,
    progress: &(dyn Fn(Phase) + Sync),
) -> Result<Report, ReportError> {
    settings.check()?;
    crate::sample::check_batch(scores, labels).map_err(ReportError::Push)?;
    if scores.is_empty() {
        return Err(ReportError::NoSamples);
    }
    let n = scores.len();
    let mut settings = *settings;
    let simulations = settings
        .simulations
        .unwrap_or_else(|| default_simulations(n));
    settings.simulations = Some(simulations);
    settings.refits = Some(
        settings
            .refits
            .unwrap_or_else(|| plug_in::default_refits(n).min(simulations)),
    );
    let test_settings = settings.test.map(|t| t.test_settings(&settings, n));
    if let (Some(test), Some(resolved)) = (&mut settings.test, &test_settings) {
        test.resamples = Some(resolved.resamples);
        test.power_simulations = Some(resolved.power_simulations);
    }
    settings.check()?;
    let evaluation = EvaluationSettings {
        norm: settings.norm,
        sweep: settings.sweep,
    };

    crate::buffer::check_capacity(n).map_err(|_| ReportError::TooManySamples(n))?;
    let mut storage = crate::storage::sorting_slots(n).map_err(|_| ReportError::OutOfMemory {
        bytes: 2 * n * core::mem::size_of::<crate::buffer::Slot>(),
    })?;
    let mut buffer =
        SortedBuffer::with_storage(&mut storage[..]).map_err(|_| ReportError::TooManySamples(n))?;
    buffer
        .push_batch(scores, labels)
        .map_err(ReportError::Push)?;
    let hits = buffer.hits();
    let sorted = buffer.sorted_parallel();
    let tie_summary = ties::TieSummary::of(&sorted);
    let data = DataView {
        sorted,
        scores,
        labels,
    };

    let OnData {
        available,
        evaluations: on_data,
        unavailable,
    } = evaluate_on_data(&data, &settings, &evaluation)?;
    let targets = available;
    let values: Vec<f64> = on_data.iter().map(|e| e.value).collect();
    let boots = if settings.resamples > 0 {
        Some(bootstrap::try_bootstrap(
            &sorted,
            &targets,
            &values,
            &evaluation,
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
    let estimators: Vec<EstimatorResult> = targets
        .iter()
        .zip(&on_data)
        .map(|(t, e)| EstimatorResult {
            target: *t,
            estimate: e.value,
            sweep_bins: e.sweep_bins,
            bootstrap: boots.as_mut().and_then(Iterator::next),
        })
        .collect();

    let reliability = diagrams(
        &sorted,
        &settings,
        estimators.iter().map(|e| (&e.target, e.sweep_bins)),
    );

    // One fit of the model: the test's alternative and the bias table's model.
    let fit = ParametricFit::of(scores, labels, settings.model, &settings.endpoint);
    let calibration_test = test_settings
        .map(|test| crate::decision::calibration_test_on_fit(scores, labels, &test, fit.as_ref()));
    let parametric = fit
        .and_then(|fit| parametric_of_fit(fit, scores, &settings, &targets, &estimators, progress));
    let recommendation = recommend(&estimators, &parametric, &settings);
    Ok(Report {
        settings,
        n,
        hits,
        estimators,
        unavailable,
        reliability,
        parametric,
        recommendation,
        ties: tie_summary,
        calibration_test,
        weights: None,
    })
}

/// One of the report's estimators on (scores, labels), with its bootstrap (`None` with 0
/// resamples): the report's [`EstimatorResult`] for `target`, without the rest of the
/// report. It equals the row of [`report`] for the same target, settings and seed bit
/// for bit: resample r draws its positions from its own generator whatever the targets,
/// and the jackknife's groups depend on n and the seed alone. What `tce.by_group`
/// computes per group.
pub fn estimator_result(
    scores: &[f64],
    labels: &[u8],
    target: Target,
    evaluation: &EvaluationSettings,
    resampling: Resampling,
) -> Result<EstimatorResult, ReportError> {
    if !(resampling.level > 0.0 && resampling.level < 1.0) {
        return Err(ReportError::InvalidLevel(resampling.level));
    }
    if resampling.resamples > MAX_RESAMPLES {
        return Err(ReportError::TooManyResamples(resampling.resamples));
    }
    crate::sample::check_batch(scores, labels).map_err(ReportError::Push)?;
    if scores.is_empty() {
        return Err(ReportError::NoSamples);
    }
    let n = scores.len();
    crate::buffer::check_capacity(n).map_err(|_| ReportError::TooManySamples(n))?;
    let mut storage = crate::storage::sorting_slots(n).map_err(|_| ReportError::OutOfMemory {
        bytes: 2 * n * core::mem::size_of::<crate::buffer::Slot>(),
    })?;
    let mut buffer =
        SortedBuffer::with_storage(&mut storage[..]).map_err(|_| ReportError::TooManySamples(n))?;
    buffer
        .push_batch(scores, labels)
        .map_err(ReportError::Push)?;
    let sorted = buffer.sorted_parallel();
    let data = DataView {
        sorted,
        scores,
        labels,
    };
    let on_data = target
        .spec
        .evaluate(&data, target.bins, evaluation)
        .map_err(|cause| ReportError::Estimate {
            estimator: target.spec,
            cause,
        })?;
    let bootstrap = if resampling.resamples > 0 {
        bootstrap::try_bootstrap(
            &sorted,
            &[target],
            &[on_data.value],
            evaluation,
            resampling,
            &|| {},
        )?
        .pop()
    } else {
        None
    };
    Ok(EstimatorResult {
        target,
        estimate: on_data.value,
        sweep_bins: on_data.sweep_bins,
        bootstrap,
    })
}

/// The report's estimators on the data: those defined there (`available`, with their
/// `evaluations` in the same order) and those left out of the rest of the report with the
/// reason (`unavailable`).
pub(crate) struct OnData {
    pub(crate) available: Vec<Target>,
    pub(crate) evaluations: Vec<crate::sim::estimator::Evaluation>,
    pub(crate) unavailable: Vec<Unavailable>,
}

/// Evaluates the report's estimators on the data. An estimator that takes no bins and is
/// undefined here (KDE without a hit) is left out with its reason; a binned estimator that
/// fails is an error.
pub(crate) fn evaluate_on_data(
    data: &DataView<'_>,
    settings: &ReportSettings,
    evaluation: &EvaluationSettings,
) -> Result<OnData, ReportError> {
    let mut available = Vec::new();
    let mut on_data = Vec::new();
    let mut unavailable = Vec::new();
    for t in targets(settings) {
        match t.spec.evaluate(data, t.bins, evaluation) {
            Ok(e) => {
                available.push(t);
                on_data.push(e);
            }
            Err(cause) if t.spec.binning().is_none() => unavailable.push(Unavailable {
                target: t,
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
    Ok(OnData {
        available,
        evaluations: on_data,
        unavailable,
    })
}

/// The two reliability diagrams: equal-width bins (the settings' count) and equal-mass
/// bins at the equal-mass sweep's b* on the data (1 without it), from each estimator's
/// target and b*.
pub(crate) fn diagrams<'a>(
    sorted: &crate::buffer::SortedSamples<'_>,
    settings: &ReportSettings,
    sweeps: impl IntoIterator<Item = (&'a Target, Option<usize>)>,
) -> Vec<Reliability> {
    let ew = Binning::EqualWidth(settings.closure);
    let em = Binning::EqualMass(settings.ties);
    let em_sweep = sweeps
        .into_iter()
        .find(|(t, _)| t.spec.kind() == EstimatorKind::EceSweep && t.spec.binning() == Some(em))
        .and_then(|(_, b)| b)
        .unwrap_or(1);
    vec![
        reliability(sorted.bins(ew, settings.bins), ew, settings.level),
        reliability(sorted.bins(em, em_sweep), em, settings.level),
    ]
}

/// The report's parametric model of (scores, labels): with scores of exactly 0 or 1
/// (float32 softmax saturates: 29% of ResNet-110's CIFAR-10 scores are 1.0), point masses
/// there ([`fit_model_with_point_masses`], the atoms' accuracies from the curve or fitted,
/// whichever has the lower AIC, as `tce fit-check --point-mass aic`), since a Beta
/// density cannot hold them; otherwise the paper's Beta density ([`fit_model`]). Either
/// way the calibration curve is the best of the twelve GLMs by AIC.
pub fn fit(scores: &[f64], labels: &[u8], rule: &EndpointRule) -> Result<FittedModel, FitError> {
    if scores.iter().any(|&s| s == 0.0 || s == 1.0) {
        fit_model_with_point_masses(scores, labels, rule, AtomAccuracy::ByAic)
    } else {
        fit_model(scores, labels, rule)
    }
}

fn parametric(
    scores: &[f64],
    labels: &[u8],
    settings: &ReportSettings,
    targets: &[Target],
    estimators: &[EstimatorResult],
    progress: &(dyn Fn(Phase) + Sync),
) -> Result<Parametric, ParametricError> {
    let fit = ParametricFit::of(scores, labels, settings.model, &settings.endpoint)?;
    parametric_of_fit(fit, scores, settings, targets, estimators, progress)
}

/// The parametric part from the fit of (scores, labels).
fn parametric_of_fit(
    fit: ParametricFit,
    scores: &[f64],
    settings: &ReportSettings,
    targets: &[Target],
    estimators: &[EstimatorResult],
    progress: &(dyn Fn(Phase) + Sync),
) -> Result<Parametric, ParametricError> {
    let model = fit.model();
    let tce_targets: Vec<Target> = targets.iter().copied().filter(estimates_tce).collect();
    let grid = Grid {
        sizes: vec![scores.len()],
        bins: vec![settings.bins],
        estimators: tce_targets.iter().map(|t| t.spec).collect(),
        repetitions: settings.simulations.unwrap_or(1),
        seed: settings.seed,
        settings: EvaluationSettings {
            norm: settings.norm,
            sweep: settings.sweep,
        },
    };
    let simulation = simulate(&model, &grid, &|| progress(Phase::Simulation))
        .map_err(ParametricError::Simulation)?;
    let tce = simulation.tce / 100.0;
    let cell_of = |t: &Target| {
        simulation
            .cell(scores.len(), t.bins, t.spec)
            .expect("every TCE target is a cell of the grid")
    };
    let simulated: Vec<Vec<f64>> = tce_targets
        .iter()
        .map(|t| cell_of(t).estimates.iter().map(|v| v / 100.0).collect())
        .collect();
    let bias: Vec<BiasRow> = tce_targets
        .iter()
        .zip(&simulated)
        .map(|(t, values)| BiasRow {
            target: *t,
            summary: Summary::of(values, tce),
        })
        .collect();
    let checked = [
        (EstimatorKind::EceBin, Binning::EqualWidth(settings.closure)),
        (EstimatorKind::EceSweep, Binning::EqualMass(settings.ties)),
    ];
    let checks: Vec<FitCheck> = checked
        .iter()
        .filter_map(|&(kind, binning)| {
            let result = estimators.iter().find(|e| {
                e.target.spec.kind() == kind && e.target.spec.binning() == Some(binning)
            })?;
            let mut values: Vec<f64> = cell_of(&result.target)
                .estimates
                .iter()
                .map(|v| v / 100.0)
                .collect();
            values.sort_by(f64::total_cmp);
            let tail = (1.0 - FIT_CHECK_LEVEL) / 2.0;
            let interval = Interval {
                lower: bootstrap::quantile_sorted(&values, tail),
                upper: bootstrap::quantile_sorted(&values, 1.0 - tail),
            };
            Some(FitCheck {
                target: result.target,
                real: result.estimate,
                simulated_mean: values.iter().sum::<f64>() / values.len() as f64,
                interval,
                reproduces: interval.contains(result.estimate),
            })
        })
        .collect();
    let refits = settings.refits.unwrap_or(0);
    let plug_in = (refits > 0)
        .then(|| plug_in::plug_in(&model, fit.kind(), settings, scores.len(), tce, refits));
    Ok(Parametric {
        plug_in,
        reproduces: checks.iter().all(|c| c.reproduces),
        tce,
        simulations: simulation.repetitions,
        checks,
        bias,
        simulated,
        fit,
        model,
    })
}

pub(crate) fn recommend(
    estimators: &[EstimatorResult],
    parametric: &Result<Parametric, ParametricError>,
    settings: &ReportSettings,
) -> Recommendation {
    let index_of = |t: &Target| {
        estimators
            .iter()
            .position(|e| e.target == *t)
            .expect("bias rows are report estimators")
    };
    match parametric {
        Ok(p) => {
            let best = p
                .bias
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.summary.rmse.total_cmp(&b.1.summary.rmse))
                .map(|(i, _)| i)
                .expect("at least the binned estimators");
            let usual = p.bias.iter().position(|r| {
                r.target.spec.kind() == EstimatorKind::EceBin
                    && r.target.spec.binning() == Some(Binning::EqualWidth(settings.closure))
            });
            Recommendation {
                estimator: index_of(&p.bias[best].target),
                basis: if p.reproduces {
                    Basis::LowestRmse
                } else {
                    Basis::LowestRmsePoorFit
                },
                bias_row: Some(best),
                usual_row: usual,
            }
        }
        Err(_) => Recommendation {
            estimator: estimators
                .iter()
                .position(|e| {
                    e.target.spec.kind() == EstimatorKind::EceSweep
                        && e.target.spec.binning() == Some(Binning::EqualMass(settings.ties))
                })
                .expect("the sweep is always a target"),
            basis: Basis::NoFit,
            bias_row: None,
            usual_row: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_by_hand() {
        // 8 of 10 at 95%: (0.4902, 0.9433) (the textbook value).
        let w = wilson(8, 10, 0.95).unwrap();
        assert!(
            (w.lower - 0.4902).abs() < 1e-4 && (w.upper - 0.9433).abs() < 1e-4,
            "{w:?}"
        );
        assert!(wilson(0, 0, 0.95).is_none());
        let all = wilson(5, 5, 0.95).unwrap();
        assert!((all.upper - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_fit_has_point_masses_exactly_when_a_score_is_0_or_1() {
        use crate::sim::{Beta, Curve, Model};
        let model = Model::new(
            Beta::new(2.0, 1.0).unwrap(),
            Curve::polynomial(2.0).unwrap(),
        );
        let (mut scores, labels) = model.dataset(3, 0, 800);
        let rule = EndpointRule::default();
        assert!(scores.iter().all(|&s| s > 0.0 && s < 1.0));
        let pure = fit(&scores, &labels, &rule).unwrap();
        assert!(pure.saturation.is_none() && pure.model.point_masses.is_none());
        assert_eq!(pure, fit_model(&scores, &labels, &rule).unwrap());
        for s in scores.iter_mut().take(40) {
            *s = 1.0;
        }
        let atoms = fit(&scores, &labels, &rule).unwrap();
        assert_eq!(
            atoms,
            fit_model_with_point_masses(&scores, &labels, &rule, AtomAccuracy::ByAic).unwrap()
        );
        let one = atoms.model.point_masses.one().unwrap();
        assert_eq!(one.mass(), 40.0 / 800.0);
        assert!(atoms.model.point_masses.zero().is_none());
    }

    #[test]
    fn settings_are_checked_against_their_bounds() {
        let with = |resamples, simulations| ReportSettings {
            resamples,
            simulations,
            ..ReportSettings::default()
        };
        assert_eq!(with(MAX_RESAMPLES, Some(MAX_SIMULATIONS)).check(), Ok(()));
        assert_eq!(with(0, None).check(), Ok(()));
        assert_eq!(
            with(MAX_RESAMPLES + 1, None).check(),
            Err(ReportError::TooManyResamples(MAX_RESAMPLES + 1))
        );
        assert_eq!(
            with(usize::MAX, None).check(),
            Err(ReportError::TooManyResamples(usize::MAX))
        );
        for m in [0, MAX_SIMULATIONS + 1, usize::MAX] {
            assert_eq!(
                with(10, Some(m)).check(),
                Err(ReportError::SimulationsOutOfRange(m))
            );
        }
        // Refused by `report` before the samples are looked at.
        assert_eq!(
            report(&[0.5], &[1], &with(usize::MAX, None), &|_| {}).unwrap_err(),
            ReportError::TooManyResamples(usize::MAX)
        );
    }

    #[test]
    fn kde_undefined_on_the_data_is_left_out_with_its_reason() {
        let scores: Vec<f64> = (0..200).map(|i| (f64::from(i) + 0.5) / 200.0).collect();
        let labels = vec![0u8; 200];
        let settings = ReportSettings {
            kde: true,
            resamples: 20,
            simulations: Some(5),
            test: None,
            ..ReportSettings::default()
        };
        let r = report(&scores, &labels, &settings, &|_| {}).unwrap();
        assert_eq!(r.unavailable.len(), 1);
        let kde = r.unavailable[0];
        assert_eq!(kde.target.spec, EstimatorSpec::kde());
        assert_eq!(kde.cause, EvaluateError::Kde(crate::kde::KdeError::NoHits));
        assert_eq!(r.estimators.len(), 8);
        assert!(r
            .estimators
            .iter()
            .all(|e| e.target.spec != EstimatorSpec::kde()));
        // The rest as without KDE.
        let without = report(
            &scores,
            &labels,
            &ReportSettings {
                kde: false,
                ..settings
            },
            &|_| {},
        )
        .unwrap();
        assert_eq!(r.estimators, without.estimators);
    }

    #[test]
    fn one_estimator_equals_the_reports_row() {
        // Scores and labels that are not calibrated, with ties, n below and above the
        // jackknife's group count.
        for n in [37usize, 400] {
            let scores: Vec<f64> = (0..n).map(|i| ((i * 37) % 101) as f64 / 100.0).collect();
            let labels: Vec<u8> = (0..n).map(|i| u8::from((i * 7) % 10 < 6)).collect();
            let settings = ReportSettings {
                resamples: 50,
                simulations: Some(2),
                test: None,
                seed: 11,
                ..ReportSettings::default()
            };
            let r = report(&scores, &labels, &settings, &|_| {}).unwrap();
            let evaluation = EvaluationSettings {
                norm: settings.norm,
                sweep: settings.sweep,
            };
            let resampling = Resampling {
                resamples: settings.resamples,
                level: settings.level,
                seed: settings.seed,
            };
            for row in &r.estimators {
                let one = estimator_result(&scores, &labels, row.target, &evaluation, resampling)
                    .unwrap();
                assert_eq!(&one, row, "{}", row.target.spec);
            }
        }
        let no = estimator_result(
            &[],
            &[],
            targets(&ReportSettings::default())[0],
            &EvaluationSettings::default(),
            Resampling {
                resamples: 10,
                level: 0.95,
                seed: 0,
            },
        );
        assert_eq!(no, Err(ReportError::NoSamples));
    }

    #[test]
    fn default_simulations_follow_the_budget() {
        assert_eq!(default_simulations(10_000), 1000);
        assert_eq!(default_simulations(100_000), 500);
        assert_eq!(default_simulations(1_000_000), 50);
        assert_eq!(default_simulations(10), 1000);
    }
}
