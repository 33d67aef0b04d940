//! Fitting a synthetic model to real classifier outputs (SPEC §8): a Beta density for the
//! confidences and a binomial GLM for the calibration curve, so that the bias-by-
//! construction simulator can reproduce a real model and compute its true calibration
//! error.
//!
//! - [`special`]: digamma and trigamma.
//! - [`endpoint`]: what scores of exactly 0 or 1 mean to a fit.
//! - [`beta`]: the Beta maximum-likelihood fit.
//! - [`logit_mixture`]: a flexible score density, a mixture of normals in log-odds, by EM
//!   with the number of components chosen by BIC or held-out likelihood (issue 36).
//! - [`glm`]: the twelve GLM calibration curves, AIC, and their simulator curves.
//! - [`monotone_curve`]: monotone spline curves in log-odds beyond first order, fitted by
//!   constrained maximum likelihood and compared with the GLMs by AIC (issue 36).
//! - [`bootstrap`]: seeded bootstrap intervals of the GLM coefficients.
//! - [`model`]: both fits together as a simulator [`crate::sim::Model`].
//! - [`saturation`]: the same with point masses at scores of exactly 0 and 1.
//! - [`check`]: ECE_bin of data simulated from a fit against the real data (Fig. 3c).

pub mod beta;
pub mod bootstrap;
pub mod check;
mod coarse;
pub mod endpoint;
pub mod flexible;
pub mod glm;
pub mod logit_mixture;
pub mod model;
pub mod monotone_curve;
pub mod saturation;
pub mod special;

pub use beta::{fit_beta, BetaFit, BetaFitError};
pub use endpoint::EndpointRule;
pub use glm::{fit_all, fit_glm, GlmData, GlmError, GlmFit, GlmSpec};
pub use logit_mixture::{
    fit_logit_mixture, LogitMixtureFit, LogitMixtureFitError, LogitMixtureOptions,
};
pub use model::{fit_model, FitError, FittedModel};
pub use monotone_curve::{
    best_curve, best_held_out, fit_candidates, fit_curves, fit_monotone, fit_monotone_quantile,
    held_out, CurveChoice, CurveFits, HeldOut, MonotoneCandidate, MonotoneData, MonotoneFit,
    MonotoneFitError,
};
pub use saturation::{fit_model_with_point_masses, AtomAccuracy, SaturationFit};
