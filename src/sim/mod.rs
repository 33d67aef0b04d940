//! The bias-by-construction simulator (SPEC §7): a synthetic model is a Beta score density
//! and a calibration curve, so its true calibration error is known exactly and the bias of
//! any estimator can be measured on data sampled from it.
//!
//! - [`beta`]: the score density Beta(α, β), its moments, pdf and sampler.
//! - [`curve`]: the calibration curves T(c) = P(y = 1 | f = c) of SPEC §7's table.
//! - [`monotone_curve`]: monotone spline curves σ(η(logit c)) beyond first order (issue 36).
//! - [`tce`]: the true calibration error, in closed form where one exists, else by
//!   tanh-sinh quadrature ([`quadrature`]).
//! - [`point_mass`]: optional atoms at 0 and 1 (saturated float32 confidences).
//! - [`logit_mixture`]: a flexible score density, a mixture of normals in log-odds, for
//!   saturating outputs a Beta cannot follow (issue 36).
//! - [`flexible`]: a model with a log-odds mixture density or a monotone spline curve
//!   (issue 36), simulated alike through [`Synthetic`].
//! - [`model`]: density + curve (+ atoms), and reproducible data sets per (seed,
//!   repetition).
//! - [`estimator`]: every estimator of the core by name (`ece_bin:equal_mass`, `kde`, …).
//! - [`runner`]: the grid of (n, bins, estimator) cells over m repetitions, summarised as
//!   bias, standard deviation and RMSE against the TCE.
//!
//! The core returns fractions; the simulation layer reports percent (SPEC §2), converted
//! by [`percent`] alone.

pub mod beta;
pub mod curve;
pub mod estimator;
pub mod flexible;
pub mod logit_mixture;
pub mod model;
pub mod monotone_curve;
pub mod point_mass;
pub mod quadrature;
pub mod runner;
pub mod tce;
pub mod unit_point;

pub use beta::{Beta, BetaError};
pub use curve::{Curve, CurveError};
pub use estimator::{EstimatorKind, EstimatorSpec, ParseEstimatorError};
pub use flexible::{CalibrationCurve, FlexibleModel, ScoreDensity};
pub use logit_mixture::{LogitComponent, LogitMixture, LogitMixtureError};
pub use model::{repetition_rng, DatasetTooLarge, Model, Synthetic};
pub use monotone_curve::{MonotoneCurve, MonotoneCurveError};
pub use point_mass::{PointMass, PointMassError, PointMasses};
pub use runner::{simulate, Cell, Grid, Simulation, SimulationError};
pub use tce::TceError;

/// A fraction in percent: the one conversion of the simulation layer's reports.
pub fn percent(fraction: f64) -> f64 {
    100.0 * fraction
}
