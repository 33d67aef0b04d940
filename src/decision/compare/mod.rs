//! **Is model A better calibrated than model B?** A paired comparison of two models'
//! scores on the same rows (docs/decisions.md, "Is A better than B? `tce compare`").
//!
//! [`compare`] reports Δ = CE_A − CE_B for one estimator (equal-mass ECE_sweep by
//! default; any estimator of the calibration test's [`Statistic`]s, evaluated by the same
//! code as `tce estimate` and `tce test`), with
//!
//! - a **paired bootstrap interval**: resample r draws n rows with replacement (a
//!   multinomial count per row, [`crate::report::bootstrap`]'s draw) from
//!   [`repetition_rng`]`(stream_seed(seed, COMPARE_STREAM), r)`, and both models are
//!   evaluated on those same rows, each in its own sorted order, through the report's
//!   weighted views (exactly the estimator on the resample written out). Δ*_r is the
//!   difference on resample r. The interval is BCa (Efron 1987; the acceleration from a
//!   grouped jackknife over rows, [`crate::report::bootstrap::JACKKNIFE_GROUPS`] groups, each left out of both
//!   models at once), as in the report ([`crate::report::bootstrap::intervals`]); when
//!   BCa is undefined (every Δ* on one side of Δ, or the jackknife values all equal, as
//!   when A = B) the percentile interval, and [`Comparison::method`] says which;
//! - a **p-value for Δ = 0** that is the larger of two, both from the same Δ*s: the
//!   interval's ([`crate::report::bootstrap::inverted_p_value`]: the smallest α at which
//!   the interval above, of level 1 − α, excludes 0) and the normal one on the
//!   bootstrap's standard error, 2Φ(−|Δ| / se) with se the standard deviation of the
//!   Δ*s. So Δ = 0 is rejected at α only when the reported interval (level 1 − α)
//!   excludes 0 *and* Δ is more than z_{1−α/2} bootstrap standard errors from 0; a
//!   rejection never contradicts the interval.
//!
//! Why this p-value. Each half alone is slightly liberal at small n, for different
//! reasons, and requiring both keeps the size within the Monte-Carlo error of α in every
//! row of the by-construction tables (docs/decisions.md). BCa alone rejected up to
//! 0.08–0.09 of pairs with equal TCE at α = 0.05 for n ≤ 1000: its bias correction z0
//! and acceleration are estimated from the same data (the acceleration from a grouped
//! jackknife, erratic for the sweep, where leaving out a group of rows can move b*),
//! and their noise moves the interval's ends. The normal test alone rejected up to
//! 0.075 where the bootstrap standard error runs a few percent below Δ's spread over
//! data sets. The two err on different data sets, and together rejected at most 0.065.
//! A normal test on the grouped jackknife's standard error instead is conservative:
//! for the sweep that standard error runs up to 2.4 times the bootstrap's, and much of
//! the power is lost. A sign-flip (swap A and B per row) permutation test was not
//! chosen either: it is exact only when A's and B's scores are exchangeable on every
//! row, and two models
//! with equal calibration error need not be (an over- and an under-confident model of
//! equal TCE): its permutation distribution describes mixtures of the two models, not
//! Δ's sampling distribution. The size is measured by construction ([`paired`]: two
//! score maps of one latent probability with known TCE_A = TCE_B, the two models' labels
//! the same or drawn apart with a chosen correlation) in tests/compare.rs and
//! docs/decisions.md.
//!
//! What H0 is: Δ = 0 is a statement about the *estimator's* expected difference at this
//! n. Where the estimator's bias differs between the two models (ECE_bin's, say), a
//! rejection can come from the bias and not from TCE_A ≠ TCE_B; the debiased estimators
//! (the sweep, ECE_debias) keep that small (docs/decisions.md).
//!
//! Each model carries its own 0/1 labels: for two classifiers, whether *its* top label
//! is correct on the row ([`Outputs`]), so CE_A is A's estimator on A's (score, label)
//! pairs and CE_B is B's on B's. Only the rows are shared: a resample (and a jackknife
//! group) takes the same row indices for both models, which keeps the pairing: on a row
//! where both models are wrong, or both right, their errors move together, and Δ's
//! spread is that of the paired difference. Inputs reduced from class outputs may carry
//! each row's true class; both models' must agree ([`CompareError::TrueClassDiffers`]).
//!
//! One model before and after recalibration is the same comparison with the same labels
//! on both sides: A = the original scores, B = the recalibrated ones, on the same rows
//! (best on rows the recalibration was not fitted on).
//!
//! [`text`] and [`json`] (feature `render`) render a [`Comparison`] for the CLI (`tce
//! compare`) and the Python package (`tce.compare`), which only call these.
//!
//! Inputs pair by order ([`Paired::by_order`]) or by an id ([`Paired::by_id`]); every
//! bad input is a named [`CompareError`] and nothing is computed on part of the data.
//! The resamples run in parallel and are collected in resample order: the result does
//! not depend on the thread count.

#[cfg(feature = "render")]
pub mod json;
pub mod paired;
pub mod text;

use core::fmt;
use std::collections::HashMap;

use rayon::prelude::*;

use super::resampling::{stream_seed, Evaluation, SortedData};
use super::{Statistic, TestError, DEFAULT_ALPHA, DEFAULT_RESAMPLES, MAX_RESAMPLES};
use crate::error::PushError;
use crate::norm::Norm;
use crate::report::bootstrap::{
    evaluate_all, intervals, inverted_p_value, jackknife_groups, multinomial_counts, Interval,
    Target,
};
use crate::report::weighted::{Packed, Prefix};
use crate::sim::estimator::{EvaluateError, EvaluationSettings};
use crate::sim::repetition_rng;
use crate::sweep::SweepOptions;

/// The stream of a comparison's bootstrap resamples: resample r draws its rows from
/// [`repetition_rng`]`(stream_seed(seed, COMPARE_STREAM), r)`.
pub const COMPARE_STREAM: u64 = 2;

/// The stream of the jackknife's groups: rows are shuffled into groups by
/// [`repetition_rng`]`(stream_seed(seed, JACKKNIFE_STREAM), 0)`.
pub const JACKKNIFE_STREAM: u64 = 3;

/// Which of the two models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// The first (`A`).
    A,
    /// The second (`B`).
    B,
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Model::A => "A",
            Model::B => "B",
        })
    }
}

/// What the comparison computes, and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompareSettings {
    /// The estimator whose difference is compared (a resampled [`Statistic`]; not
    /// Spiegelhalter's Z or Hosmer–Lemeshow, which are tests, not calibration errors).
    pub statistic: Statistic,
    /// Bootstrap resamples B (1 to [`MAX_RESAMPLES`]).
    pub resamples: usize,
    /// The level α: the interval has level 1 − α, and Δ = 0 is rejected when p ≤ α.
    pub alpha: f64,
    /// The seed of the resamples and of the jackknife's groups.
    pub seed: u64,
    /// Bins of ECE_bin, ECE_debias and MCE (the sweep picks its own).
    pub bins: usize,
    /// The exponent p of the binned estimators and KDE (smooth ECE is at p = 1).
    pub norm: Norm,
    /// The sweep's limit and cap.
    pub sweep: SweepOptions,
}

impl Default for CompareSettings {
    fn default() -> Self {
        CompareSettings {
            statistic: Statistic::fallback(),
            resamples: DEFAULT_RESAMPLES,
            alpha: DEFAULT_ALPHA,
            seed: 0,
            bins: 15,
            norm: Norm::L2,
            sweep: SweepOptions::default(),
        }
    }
}

impl CompareSettings {
    /// Checks what does not depend on the data: an estimator as the statistic, the
    /// resamples within their bounds, α in (0, 1), bins from 1 to [`crate::MAX_BINS`].
    pub fn check(&self) -> Result<(), CompareError> {
        if !self.statistic.is_resampled() {
            return Err(CompareError::NotAnEstimator(self.statistic));
        }
        if self.resamples == 0 || self.resamples > MAX_RESAMPLES {
            return Err(CompareError::ResamplesOutOfRange(self.resamples));
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(CompareError::InvalidAlpha(self.alpha));
        }
        crate::estimate::check_bins(self.bins).map_err(|_| CompareError::BinsOutOfRange(self.bins))
    }

    fn evaluation(&self) -> Evaluation {
        Evaluation {
            norm: self.norm,
            bins: self.bins,
            sweep: self.sweep,
        }
    }
}

/// Why no comparison could be made. Nothing is computed on part of the data.
#[derive(Clone, Debug, PartialEq)]
pub enum CompareError {
    /// No rows.
    NoSamples,
    /// The two models' inputs differ in rows.
    LengthsDiffer {
        /// A's rows.
        a: usize,
        /// B's rows.
        b: usize,
    },
    /// A model's score or label was refused (NaN, outside [0, 1], a label not 0/1, or
    /// its scores and labels differ in length).
    Input {
        /// Whose.
        model: Model,
        /// Which element and why.
        error: PushError,
    },
    /// A model's true classes and its rows differ in number.
    ClassesLengthDiffer {
        /// Whose.
        model: Model,
        /// Its true classes.
        classes: usize,
        /// Its rows.
        rows: usize,
    },
    /// The two inputs give different true classes for the same row (0-based, in A's
    /// order): they are not the same examples.
    TrueClassDiffers {
        /// The row.
        row: usize,
        /// A's true class there.
        a: usize,
        /// B's true class there.
        b: usize,
    },
    /// An id occurs twice in one input (joined by id).
    DuplicateId {
        /// The input.
        model: Model,
        /// The id.
        id: String,
    },
    /// An id of one input is missing from the other (joined by id).
    MissingId {
        /// The input that lacks it.
        missing_from: Model,
        /// The id.
        id: String,
    },
    /// An input's ids and rows differ in number (joined by id).
    IdsLengthDiffer {
        /// The input.
        model: Model,
        /// Its ids.
        ids: usize,
        /// Its rows.
        rows: usize,
    },
    /// More rows than a sorted buffer holds ([`crate::buffer::MAX_CAPACITY`]).
    TooManySamples(usize),
    /// The allocator refused `bytes` bytes.
    OutOfMemory {
        /// The bytes asked for.
        bytes: usize,
    },
    /// Resamples of 0 or more than [`MAX_RESAMPLES`].
    ResamplesOutOfRange(usize),
    /// α is not in (0, 1).
    InvalidAlpha(f64),
    /// Bins of 0 or more than [`crate::MAX_BINS`].
    BinsOutOfRange(usize),
    /// The statistic is a test (Spiegelhalter, Hosmer–Lemeshow), not an estimator.
    NotAnEstimator(Statistic),
    /// The estimator is undefined for a model on the data or on a resample.
    Undefined {
        /// Whose.
        model: Model,
        /// The resample (0-based), or `None` on the data.
        resample: Option<usize>,
        /// Why.
        cause: EvaluateError,
    },
}

impl fmt::Display for CompareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSamples => f.write_str("no samples"),
            Self::LengthsDiffer { a, b } => write!(
                f,
                "the inputs differ in length: {a} rows of A, {b} rows of B \
                 (a paired comparison needs both models' outputs on the same rows)"
            ),
            Self::Input { model, error } => write!(f, "model {model}: {error}"),
            Self::ClassesLengthDiffer {
                model,
                classes,
                rows,
            } => write!(f, "model {model}: {classes} true classes for {rows} rows"),
            Self::TrueClassDiffers { row, a, b } => write!(
                f,
                "row {row}: model A's input has true class {a}, model B's has {b} \
                 (the two inputs must be the same examples)"
            ),
            Self::DuplicateId { model, id } => {
                write!(
                    f,
                    "id {id:?} occurs more than once in model {model}'s input"
                )
            }
            Self::MissingId { missing_from, id } => {
                write!(f, "id {id:?} is missing from model {missing_from}'s input")
            }
            Self::IdsLengthDiffer { model, ids, rows } => {
                write!(f, "model {model}: {ids} ids for {rows} rows")
            }
            Self::TooManySamples(n) => write!(
                f,
                "{n} samples: a comparison holds at most {}",
                crate::buffer::MAX_CAPACITY
            ),
            Self::OutOfMemory { bytes } => write!(f, "cannot allocate {bytes} bytes"),
            Self::ResamplesOutOfRange(b) => write!(
                f,
                "{b} resamples: a comparison takes 1 to {MAX_RESAMPLES} \
                 (tce::decision::MAX_RESAMPLES)"
            ),
            Self::InvalidAlpha(a) => write!(f, "the level alpha must be in (0, 1), got {a}"),
            Self::BinsOutOfRange(b) => {
                write!(f, "{b} bins: the bins must be 1 to {}", crate::MAX_BINS)
            }
            Self::NotAnEstimator(s) => write!(
                f,
                "{s} is a test, not a calibration error: compare an estimator such as \
                 `ece_sweep:equal_mass`, `ece_debias:equal_mass`, `ece_bin:equal_width`, \
                 `ece_bin:equal_mass` or `smece`"
            ),
            Self::Undefined {
                model,
                resample: None,
                cause,
            } => write!(
                f,
                "model {model}: the estimator is undefined on the data: {cause}"
            ),
            Self::Undefined {
                model,
                resample: Some(r),
                cause,
            } => write!(
                f,
                "model {model}: the estimator is undefined on bootstrap resample {r}: {cause}"
            ),
        }
    }
}

impl std::error::Error for CompareError {}

/// One model's outputs on the rows, as [`Paired`] takes them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outputs<'a> {
    /// Its confidences (top-label confidences of a classifier, or binary scores).
    pub scores: &'a [f64],
    /// Its own 0/1 labels: whether its top label is correct on each row. Two
    /// classifiers' labels differ wherever one is right and the other wrong.
    pub labels: &'a [u8],
    /// The true class of each row, where `scores` and `labels` were reduced from class
    /// outputs ([`crate::toplabel`]: the label is 1 when the model's argmax is the true
    /// class). When both models give them they must agree row by row: the true class
    /// is a property of the example, not of the model.
    pub classes: Option<&'a [usize]>,
}

impl<'a> Outputs<'a> {
    /// Confidences and 0/1 labels, without true classes.
    pub fn new(scores: &'a [f64], labels: &'a [u8]) -> Outputs<'a> {
        Outputs {
            scores,
            labels,
            classes: None,
        }
    }

    /// The same outputs with each row's true class.
    pub fn with_classes(self, classes: &'a [usize]) -> Outputs<'a> {
        Outputs {
            classes: Some(classes),
            ..self
        }
    }

    /// Scores and labels (and true classes, if any) of equal length, else the named
    /// error; the rows.
    fn rows(&self, model: Model) -> Result<usize, CompareError> {
        let (scores, labels) = (self.scores.len(), self.labels.len());
        if scores != labels {
            return Err(CompareError::Input {
                model,
                error: PushError::LengthMismatch { scores, labels },
            });
        }
        match self.classes {
            Some(classes) if classes.len() != scores => Err(CompareError::ClassesLengthDiffer {
                model,
                classes: classes.len(),
                rows: scores,
            }),
            _ => Ok(scores),
        }
    }
}

/// Both models' scores and their own labels on the same rows (row i of A and row i of
/// B are one example). Made only by [`Paired::by_order`], [`Paired::by_id`] or the
/// paired simulator, so the two sides always have the same number of rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Paired {
    scores: [Vec<f64>; 2],
    labels: [Vec<u8>; 2],
}

fn index(model: Model) -> usize {
    match model {
        Model::A => 0,
        Model::B => 1,
    }
}

impl Paired {
    /// Two inputs whose rows are the same examples in the same order: each model's
    /// scores, labels and true classes of one length, both models of the same length,
    /// and the same true class on every row where both give them; else a named error.
    /// The labels may differ between the models (each is its own correctness).
    pub fn by_order(a: Outputs<'_>, b: Outputs<'_>) -> Result<Paired, CompareError> {
        let (rows_a, rows_b) = (a.rows(Model::A)?, b.rows(Model::B)?);
        if rows_a != rows_b {
            return Err(CompareError::LengthsDiffer {
                a: rows_a,
                b: rows_b,
            });
        }
        if let (Some(classes_a), Some(classes_b)) = (a.classes, b.classes) {
            if let Some(row) = classes_a.iter().zip(classes_b).position(|(x, y)| x != y) {
                return Err(CompareError::TrueClassDiffers {
                    row,
                    a: classes_a[row],
                    b: classes_b[row],
                });
            }
        }
        Ok(Paired {
            scores: [a.scores.to_vec(), b.scores.to_vec()],
            labels: [a.labels.to_vec(), b.labels.to_vec()],
        })
    }

    /// Two inputs joined by an id: every id exactly once in each input and in both, and
    /// the same true class in both where both give them. The rows come in A's order. A
    /// duplicate or missing id is an error; nothing is joined in part.
    pub fn by_id<S: AsRef<str>>(
        (ids_a, a): (&[S], Outputs<'_>),
        (ids_b, b): (&[S], Outputs<'_>),
    ) -> Result<Paired, CompareError> {
        for (model, ids, outputs) in [(Model::A, ids_a, &a), (Model::B, ids_b, &b)] {
            let rows = outputs.rows(model)?;
            if ids.len() != rows {
                return Err(CompareError::IdsLengthDiffer {
                    model,
                    ids: ids.len(),
                    rows,
                });
            }
        }
        let index = |model: Model, ids: &[S]| -> Result<HashMap<String, usize>, CompareError> {
            let mut index = HashMap::with_capacity(ids.len());
            for (row, id) in ids.iter().enumerate() {
                if index.insert(id.as_ref().to_owned(), row).is_some() {
                    return Err(CompareError::DuplicateId {
                        model,
                        id: id.as_ref().to_owned(),
                    });
                }
            }
            Ok(index)
        };
        let _ = index(Model::A, ids_a)?;
        let in_b = index(Model::B, ids_b)?;
        let mut rows_b = Vec::with_capacity(ids_a.len());
        for id in ids_a {
            match in_b.get(id.as_ref()) {
                Some(&row) => rows_b.push(row),
                None => {
                    return Err(CompareError::MissingId {
                        missing_from: Model::B,
                        id: id.as_ref().to_owned(),
                    })
                }
            }
        }
        if ids_b.len() != ids_a.len() {
            // Every id of A is in B and none repeats, so B has one A lacks.
            let in_a: std::collections::HashSet<&str> = ids_a.iter().map(AsRef::as_ref).collect();
            let id = ids_b
                .iter()
                .find(|id| !in_a.contains(id.as_ref()))
                .expect("B has more distinct ids than A");
            return Err(CompareError::MissingId {
                missing_from: Model::A,
                id: id.as_ref().to_owned(),
            });
        }
        let scores_b: Vec<f64> = rows_b.iter().map(|&r| b.scores[r]).collect();
        let labels_b: Vec<u8> = rows_b.iter().map(|&r| b.labels[r]).collect();
        let classes_b: Option<Vec<usize>> = b
            .classes
            .map(|classes| rows_b.iter().map(|&r| classes[r]).collect());
        Paired::by_order(
            a,
            Outputs {
                scores: &scores_b,
                labels: &labels_b,
                classes: classes_b.as_deref(),
            },
        )
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.labels[0].len()
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A model's scores, in row order.
    pub fn scores(&self, model: Model) -> &[f64] {
        &self.scores[index(model)]
    }

    /// A model's labels (its own correctness), in row order.
    pub fn labels(&self, model: Model) -> &[u8] {
        &self.labels[index(model)]
    }
}

/// Which interval (and p-value) the bootstrap gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// BCa.
    Bca,
    /// The percentile interval, because BCa is undefined: every Δ* on one side of Δ
    /// (the bias correction is infinite), or the jackknife values all equal (A = B on
    /// every row, say) or undefined.
    Percentile,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Bca => "BCa",
            Method::Percentile => "percentile",
        })
    }
}

/// One model's estimate on the data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// CE (a fraction).
    pub value: f64,
    /// b* of a sweep.
    pub sweep_bins: Option<usize>,
}

/// Everything a comparison computes.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The settings.
    pub settings: CompareSettings,
    /// Rows.
    pub n: usize,
    /// A's estimate.
    pub a: Estimate,
    /// B's estimate.
    pub b: Estimate,
    /// Δ = CE_A − CE_B.
    pub delta: f64,
    /// The Δ*s, in resample order.
    pub replicates: Vec<f64>,
    /// The bootstrap standard error of Δ (the standard deviation of the Δ*s).
    pub se: f64,
    /// The interval of level 1 − α.
    pub interval: Interval,
    /// BCa or the percentile fallback.
    pub method: Method,
    /// BCa's bias correction z0 (±∞ when every Δ* is on one side).
    pub z0: f64,
    /// BCa's acceleration (NaN when the jackknife values are all equal or undefined).
    pub acceleration: f64,
    /// The p-value of Δ = 0: the larger of [`Comparison::p_interval`] and
    /// [`Comparison::p_normal`].
    pub p_value: f64,
    /// The interval's p-value: the interval of [`Comparison::method`] inverted.
    pub p_interval: f64,
    /// The normal p-value on the bootstrap's standard error, 2Φ(−|Δ| / se) (1 when
    /// Δ = 0).
    pub p_normal: f64,
}

/// The decision at α, in words the renderers share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Δ < 0 significantly: A is better calibrated.
    ABetter,
    /// Δ > 0 significantly: B is better calibrated.
    BBetter,
    /// Δ = 0 is not rejected.
    NoDifference,
}

impl Comparison {
    /// p ≤ α: Δ = 0 rejected.
    pub fn reject(&self) -> bool {
        self.p_value <= self.settings.alpha
    }

    /// Which model is better at α, if either.
    pub fn verdict(&self) -> Verdict {
        match (self.reject(), self.delta < 0.0) {
            (false, _) => Verdict::NoDifference,
            (true, true) => Verdict::ABetter,
            (true, false) => Verdict::BBetter,
        }
    }
}

/// A model's rows sorted once, with the row (input index) at each sorted position.
struct Side {
    data: SortedData,
    rows: Vec<u32>,
    packed: Packed,
}

impl Side {
    fn new(model: Model, scores: &[f64], labels: &[u8]) -> Result<Side, CompareError> {
        let data = SortedData::new(scores, labels).map_err(|e| match e {
            TestError::Push(error) => CompareError::Input { model, error },
            TestError::NoSamples => CompareError::NoSamples,
            TestError::TooManySamples(n) => CompareError::TooManySamples(n),
            TestError::OutOfMemory { bytes } => CompareError::OutOfMemory { bytes },
            other => unreachable!("sorting refuses only the input: {other}"),
        })?;
        let rows = data.rows();
        let packed = Packed::new(&data.observed());
        Ok(Side { data, rows, packed })
    }

    /// The estimator on the rows weighted by `row_weights` (indexed by row).
    fn on_weights(
        &self,
        row_weights: &[u32],
        weights: &mut [u32],
        prefix: &mut Prefix,
        raw: &mut (Vec<f64>, Vec<u8>),
        target: &Target,
        settings: &EvaluationSettings,
    ) -> Result<f64, EvaluateError> {
        for (w, &row) in weights.iter_mut().zip(&self.rows) {
            *w = row_weights[row as usize];
        }
        let sorted = self.data.observed();
        let view = prefix.weigh(&sorted, &self.packed, weights);
        let [result] = <[_; 1]>::try_from(evaluate_all(
            core::slice::from_ref(target),
            &view,
            raw,
            settings,
        ))
        .expect("one target, one result");
        result.map(|e| e.value)
    }
}

/// Per-thread room of the resamples.
#[derive(Default)]
struct Scratch {
    row_counts: Vec<u32>,
    weights: Vec<u32>,
    prefix: Prefix,
    raw: (Vec<f64>, Vec<u8>),
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch {
            row_counts: vec![0; n],
            weights: vec![0; n],
            ..Scratch::default()
        }
    }

    /// Δ on the rows weighted by `self.row_counts`.
    fn delta(
        &mut self,
        sides: &[Side; 2],
        target: &Target,
        settings: &EvaluationSettings,
    ) -> Result<f64, (Model, EvaluateError)> {
        let mut values = [0.0; 2];
        for ((value, side), model) in values.iter_mut().zip(sides).zip([Model::A, Model::B]) {
            *value = side
                .on_weights(
                    &self.row_counts,
                    &mut self.weights,
                    &mut self.prefix,
                    &mut self.raw,
                    target,
                    settings,
                )
                .map_err(|e| (model, e))?;
        }
        Ok(values[0] - values[1])
    }
}

/// Sets `row_counts` to the rows of resample `resample` of a comparison seeded `seed`:
/// how often each row is drawn in n uniform draws with replacement (a multinomial
/// vector), from [`repetition_rng`]`(stream_seed(seed, COMPARE_STREAM), resample)`.
pub fn draw_rows(seed: u64, resample: usize, row_counts: &mut [u32]) {
    let mut rng = repetition_rng(stream_seed(seed, COMPARE_STREAM), resample as u64);
    let n = row_counts.len() as u64;
    multinomial_counts(row_counts, n, &mut rng, &mut |_, _| {});
}

/// The jackknife groups of a comparison seeded `seed` over n rows: the number of groups
/// (min(n, [`crate::report::bootstrap::JACKKNIFE_GROUPS`])) and each row's group, by a
/// shuffle from [`repetition_rng`]`(stream_seed(seed, JACKKNIFE_STREAM), 0)`.
pub fn jackknife_rows(seed: u64, n: usize) -> (usize, Vec<usize>) {
    jackknife_groups(n, stream_seed(seed, JACKKNIFE_STREAM))
}

/// Compares the calibration of models A and B on the same rows (module docs): Δ = CE_A −
/// CE_B, each model's CE on its own labels, with the paired bootstrap interval and the
/// p-value of Δ = 0. Bad input is refused whole with a named error.
pub fn compare(paired: &Paired, settings: &CompareSettings) -> Result<Comparison, CompareError> {
    settings.check()?;
    let n = paired.len();
    if n == 0 {
        return Err(CompareError::NoSamples);
    }
    let side = |model| Side::new(model, paired.scores(model), paired.labels(model));
    let sides = [side(Model::A)?, side(Model::B)?];
    let spec = settings
        .statistic
        .estimator()
        .expect("checked: an estimator");
    let evaluation = settings.evaluation();
    let mut estimates = [Estimate {
        value: 0.0,
        sweep_bins: None,
    }; 2];
    for ((estimate, side), model) in estimates.iter_mut().zip(&sides).zip([Model::A, Model::B]) {
        let (value, sweep_bins) = evaluation
            .evaluate(&spec, &side.data.observed_view())
            .map_err(|cause| CompareError::Undefined {
                model,
                resample: None,
                cause,
            })?;
        *estimate = Estimate { value, sweep_bins };
    }
    let [a, b] = estimates;
    let delta = a.value - b.value;

    let target = Target {
        spec,
        bins: spec.uses_bins().then_some(settings.bins),
    };
    let eval_settings = evaluation.settings(&spec);
    let sides = &sides;
    let draws: Vec<Result<f64, (Model, EvaluateError)>> = (0..settings.resamples)
        .into_par_iter()
        .map_init(
            || Scratch::new(n),
            |scratch, r| {
                draw_rows(settings.seed, r, &mut scratch.row_counts);
                scratch.delta(sides, &target, &eval_settings)
            },
        )
        .collect();
    let replicates = draws
        .into_iter()
        .enumerate()
        .map(|(r, d)| {
            d.map_err(|(model, cause)| CompareError::Undefined {
                model,
                resample: Some(r),
                cause,
            })
        })
        .collect::<Result<Vec<f64>, _>>()?;

    // The grouped jackknife over rows, each group left out of both models at once.
    let (groups, assignment) = jackknife_rows(settings.seed, n);
    let assignment = &assignment;
    let jackknife: Result<Vec<f64>, _> = (0..groups)
        .into_par_iter()
        .map_init(
            || Scratch::new(n),
            |scratch, g| {
                for (w, &group) in scratch.row_counts.iter_mut().zip(assignment) {
                    *w = u32::from(group != g);
                }
                scratch.delta(sides, &target, &eval_settings)
            },
        )
        .collect();
    // A jackknife undefined on some group leaves BCa undefined (the percentile interval).
    let jackknife = jackknife.unwrap_or_default();

    let level = 1.0 - settings.alpha;
    let (percentile, bca, z0, acceleration) = intervals(delta, &replicates, &jackknife, level);
    let (interval, method, p_interval) = match bca {
        Some(bca) => (
            bca,
            Method::Bca,
            inverted_p_value(&replicates, 0.0, Some((z0, acceleration))),
        ),
        None => (
            percentile,
            Method::Percentile,
            inverted_p_value(&replicates, 0.0, None),
        ),
    };
    let se = crate::sim::runner::Summary::of(&replicates, 0.0).sd;
    let p_normal = if delta == 0.0 {
        1.0
    } else {
        2.0 * crate::report::normal::cdf(-(delta / se).abs())
    };
    // Each alone is slightly liberal at small n, for different reasons (module docs).
    let p_value = p_interval.max(p_normal);
    Ok(Comparison {
        settings: *settings,
        n,
        a,
        b,
        delta,
        replicates,
        se,
        interval,
        method,
        z0,
        acceleration,
        p_value,
        p_interval,
        p_normal,
    })
}
