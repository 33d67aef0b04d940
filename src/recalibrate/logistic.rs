//! Platt scaling and temperature scaling of the top-label confidence: the recalibrated
//! confidence is σ(a + b·logit c), fitted by maximum likelihood (Newton on the log-loss).
//!
//! Both are the logit-link, logit-transform binomial GLM of [`crate::fit::glm`]: Platt
//! scaling frees a and b (`logit_logit_b0_b1`), temperature scaling fixes a = 0 and fits
//! b = 1/T (`logit_logit_b1`). The fitted map is the simulator curve
//! `logistic_log_odds(a, b)`, so applying it and integrating it reuse the curve's
//! endpoint-accurate evaluation.

use super::RecalibrateError;
use crate::fit::endpoint::EndpointRule;
use crate::fit::glm::{fit_glm, GlmData, GlmSpec, Link, Predictor, Transform, Validity};
use crate::sim::Curve;

fn fit_logistic(
    scores: &[f64],
    labels: &[u8],
    predictor: Predictor,
) -> Result<Curve, RecalibrateError> {
    super::check(scores, labels)?;
    let data =
        GlmData::new(scores, labels, &EndpointRule::default()).map_err(RecalibrateError::Glm)?;
    let spec = GlmSpec {
        link: Link::Logit,
        transform: Transform::Logit,
        predictor,
    };
    let fit = fit_glm(spec, &data).map_err(RecalibrateError::Glm)?;
    if fit.validity != Validity::Valid {
        return Err(RecalibrateError::NotConverged);
    }
    Ok(Curve::logistic_log_odds(fit.b0, fit.b1).expect("finite coefficients"))
}

/// Platt scaling: σ(a + b·logit c) with a and b fitted.
pub fn fit_platt(scores: &[f64], labels: &[u8]) -> Result<Curve, RecalibrateError> {
    fit_logistic(scores, labels, Predictor::Full)
}

/// Temperature scaling of the top-label confidence: σ(logit(c) / T), fitted as b = 1/T.
pub fn fit_temperature(scores: &[f64], labels: &[u8]) -> Result<Curve, RecalibrateError> {
    fit_logistic(scores, labels, Predictor::Slope)
}

/// The temperature T = 1/b of a temperature-scaling curve (∞ for b = 0).
pub fn temperature_of(curve: &Curve) -> f64 {
    1.0 / curve.params().b.unwrap_or(f64::NAN)
}
