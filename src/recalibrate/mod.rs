//! Recalibration of top-label confidences (the methods of the paper's Table 1), and the
//! exact TCE of a simulator model after recalibration.
//!
//! Each method fits a map g on one sample (confidences and labels) and applies it to
//! another:
//!
//! - [`histogram`]: histogram binning, 15 equal-width bins (piecewise constant);
//! - [`isotonic`]: isotonic regression by pool-adjacent-violators (piecewise constant);
//! - [`logistic`]: Platt scaling and temperature scaling of the confidence's log-odds
//!   (continuous, strictly monotone);
//! - [`multiclass`]: whole rows of class probabilities or logits: multiclass temperature
//!   scaling, and histogram binning and isotonic regression one-vs-rest.
//!
//! [`Recalibration`] names every method on model outputs ([`Outputs`]) and
//! [`choose`] decides between several on held-out rows (`tce recalibrate --methods`).
//! [`exact`] computes TCE after recalibration and [`table1`] runs the paper's Table 1
//! experiment: how often each estimator picks the method with the lowest TCE, by
//! construction; [`table1_real`] runs it on real splits of a file.

use core::fmt;

use crate::error::{PushError, ReduceError};
use crate::fit::glm::GlmError;
use crate::sim::Curve;

pub mod choose;
pub mod exact;
pub mod histogram;
pub mod isotonic;
pub mod logistic;
mod method;
pub mod multiclass;
pub mod piecewise;
pub mod table1;
pub mod table1_real;

pub use method::{
    Fitted, Outputs, ParseRecalibrationError, Recalibrated, Recalibration, TopLabels,
};
pub use piecewise::{Pieces, PiecewiseConstant};

/// Why a recalibration map could not be fitted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RecalibrateError {
    /// No samples.
    Empty,
    /// A score or label is invalid (the core's rule).
    Input(PushError),
    /// Scores and labels (or logit rows and classes) differ in length.
    LengthMismatch {
        /// Number of scores (rows).
        scores: usize,
        /// Number of labels (classes).
        labels: usize,
    },
    /// Histogram binning needs at least one bin.
    ZeroBins,
    /// A logistic fit failed (e.g. all labels equal).
    Glm(GlmError),
    /// The fit did not converge.
    NotConverged,
    /// A row of class outputs was refused by the core's rule (0-based row): a class id
    /// out of range, a value not finite, a probability outside [0, 1], probabilities
    /// not summing to 1.
    Row {
        /// The row.
        row: usize,
        /// Why.
        error: ReduceError,
    },
    /// Class outputs need at least 2 classes.
    TooFewClasses(usize),
    /// A table's values are not rows × classes.
    ShapeMismatch {
        /// Values given.
        values: usize,
        /// Rows (true classes) given.
        rows: usize,
        /// Classes per row.
        classes: usize,
    },
    /// A one-vs-rest method needs every class to be the true class of at least
    /// [`multiclass::MIN_CLASS_ROWS`] fitting rows.
    TooFewClassRows {
        /// The class.
        class: usize,
        /// Its fitting rows.
        rows: usize,
        /// The rule.
        needed: usize,
    },
    /// A one-vs-rest map is applied to rows with another number of classes.
    ClassCountDiffers {
        /// Classes the maps were fitted on.
        fitted: usize,
        /// Classes of the rows.
        given: usize,
    },
    /// The method recalibrates rows of class outputs and was given top-label
    /// (confidence, correct) samples.
    NeedsClasses(Recalibration),
}

impl fmt::Display for RecalibrateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("no samples to fit a recalibration map to"),
            Self::Input(e) => write!(f, "bad sample: {e:?}"),
            Self::LengthMismatch { scores, labels } => {
                write!(f, "{scores} scores (rows) but {labels} labels (classes)")
            }
            Self::ZeroBins => f.write_str("histogram binning needs at least one bin"),
            Self::Glm(e) => write!(f, "{e}"),
            Self::NotConverged => f.write_str("the recalibration fit did not converge"),
            Self::Row { row, error } => write!(f, "row {row}: {error}"),
            Self::TooFewClasses(k) => {
                write!(f, "{k} class(es): class outputs need at least 2 classes")
            }
            Self::ShapeMismatch {
                values,
                rows,
                classes,
            } => write!(
                f,
                "{values} values are not {rows} rows of {classes} classes"
            ),
            Self::TooFewClassRows {
                class,
                rows,
                needed,
            } => write!(
                f,
                "class {class} is the true class of {rows} fitting row(s); a one-vs-rest map \
                 needs at least {needed} (tce::recalibrate::multiclass::MIN_CLASS_ROWS)"
            ),
            Self::ClassCountDiffers { fitted, given } => write!(
                f,
                "the maps were fitted on {fitted} classes but the rows have {given}"
            ),
            Self::NeedsClasses(method) => write!(
                f,
                "{method} recalibrates rows of class probabilities or logits (--prob-cols, \
                 or a .npy array of N×K); for (confidence, correct) rows use {}",
                method.top_label_counterpart()
            ),
        }
    }
}

impl std::error::Error for RecalibrateError {}

/// The core's validation of a batch, plus n ≥ 1.
fn check(scores: &[f64], labels: &[u8]) -> Result<(), RecalibrateError> {
    crate::sample::check_batch(scores, labels).map_err(|e| match e {
        PushError::LengthMismatch { scores, labels } => {
            RecalibrateError::LengthMismatch { scores, labels }
        }
        e => RecalibrateError::Input(e),
    })?;
    if scores.is_empty() {
        return Err(RecalibrateError::Empty);
    }
    Ok(())
}

/// A recalibration method of the top-label confidence (on the command line as
/// [`Recalibration::TopLabel`]; its [`Method::name`] is the Table 1 column's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// 15 equal-width bins, each mapped to its mean label.
    Histogram,
    /// Isotonic regression (PAV).
    Isotonic,
    /// Platt scaling σ(a + b·logit c).
    Platt,
    /// Temperature scaling of the top-label confidence alone, σ(logit(c)/T): one logit,
    /// not the multiclass temperature scaling of Guo et al.
    /// ([`multiclass::MulticlassMethod::Temperature`]).
    Temperature,
}

impl Method {
    /// Every method.
    pub const ALL: [Method; 4] = [
        Method::Histogram,
        Method::Isotonic,
        Method::Platt,
        Method::Temperature,
    ];

    /// Its name in Table 1's columns (the command line's is [`Recalibration::name`]).
    pub fn name(self) -> &'static str {
        match self {
            Method::Histogram => "histogram",
            Method::Isotonic => "isotonic",
            Method::Platt => "platt",
            Method::Temperature => "temperature",
        }
    }

    /// Fits the method's map on (scores, labels).
    pub fn fit(self, scores: &[f64], labels: &[u8]) -> Result<RecalibrationMap, RecalibrateError> {
        Ok(match self {
            Method::Histogram => RecalibrationMap::Piecewise(histogram::fit_histogram_binning(
                scores,
                labels,
                histogram::DEFAULT_BINS,
            )?),
            Method::Isotonic => {
                RecalibrationMap::Piecewise(isotonic::fit_isotonic(scores, labels)?)
            }
            Method::Platt => RecalibrationMap::Monotone(logistic::fit_platt(scores, labels)?),
            Method::Temperature => {
                RecalibrationMap::Monotone(logistic::fit_temperature(scores, labels)?)
            }
        })
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fitted recalibration map g: [0, 1] → [0, 1].
#[derive(Clone, Debug, PartialEq)]
pub enum RecalibrationMap {
    /// Constant on pieces (histogram binning, isotonic regression).
    Piecewise(PiecewiseConstant),
    /// A continuous strictly monotone (or constant) curve (Platt, temperature scaling).
    Monotone(Curve),
}

impl RecalibrationMap {
    /// g(score) for a score in [0, 1].
    pub fn apply(&self, score: f64) -> f64 {
        match self {
            RecalibrationMap::Piecewise(map) => map.apply(score),
            RecalibrationMap::Monotone(curve) => curve.eval(score),
        }
    }

    /// g applied to every score.
    pub fn apply_all(&self, scores: &[f64]) -> Vec<f64> {
        scores.iter().map(|&s| self.apply(s)).collect()
    }
}
