//! Both fits together: the Beta density of the confidences and the AIC-best usable GLM
//! curve make a simulator [`Model`], whose TCE is exact and which can be sampled.

use core::fmt;

use super::beta::{fit_beta, BetaFit, BetaFitError};
use super::endpoint::EndpointRule;
use super::glm::{self, GlmData, GlmError, GlmFit};
use super::saturation::SaturationFit;
use crate::sim::{Model, PointMassError, TceError};

/// Why a model could not be fitted.
#[derive(Clone, Debug, PartialEq)]
pub enum FitError {
    /// The Beta fit of the confidences failed.
    Beta(BetaFitError),
    /// The rows could not be fitted by the GLMs.
    Glm(GlmError),
    /// None of the twelve GLMs is valid and representable as a simulator curve.
    NoUsableCurve,
    /// The TCE of the fitted model could not be computed.
    Tce(TceError),
    /// The fitted point masses are not a valid score distribution (cannot happen for
    /// sample fractions and GLM means; reported rather than assumed).
    PointMass(PointMassError),
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Beta(e) => write!(f, "score density: {e}"),
            Self::Glm(e) => write!(f, "calibration curve: {e}"),
            Self::NoUsableCurve => f.write_str(
                "no calibration-curve GLM is valid on the data and a curve on all of (0, 1)",
            ),
            Self::Tce(e) => write!(f, "fitted model: {e}"),
            Self::PointMass(e) => write!(f, "point masses: {e}"),
        }
    }
}

impl std::error::Error for FitError {}

impl From<BetaFitError> for FitError {
    fn from(e: BetaFitError) -> Self {
        FitError::Beta(e)
    }
}

impl From<GlmError> for FitError {
    fn from(e: GlmError) -> Self {
        FitError::Glm(e)
    }
}

impl From<TceError> for FitError {
    fn from(e: TceError) -> Self {
        FitError::Tce(e)
    }
}

/// A real model's outputs, fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct FittedModel {
    /// The number of rows.
    pub n: usize,
    /// The score density.
    pub beta: BetaFit,
    /// All twelve GLMs, in [`glm::GlmSpec::all`] order.
    pub glms: Vec<GlmFit>,
    /// The index in `glms` of the usable fit with the lowest AIC.
    pub best: usize,
    /// Density + best curve.
    pub model: Model,
    /// TCE_1 of `model` (fraction).
    pub tce_l1: f64,
    /// TCE_2 of `model` (fraction).
    pub tce_l2: f64,
    /// The point masses at 0.0 and 1.0, if the fit has them
    /// ([`super::saturation::fit_model_with_point_masses`]); `None` for [`fit_model`],
    /// a pure Beta model.
    pub saturation: Option<SaturationFit>,
}

impl FittedModel {
    /// The best GLM.
    pub fn best_glm(&self) -> &GlmFit {
        &self.glms[self.best]
    }
}

/// Fits the Beta density and the twelve GLMs, picks the best by AIC and computes its TCE.
pub fn fit_model(
    scores: &[f64],
    labels: &[u8],
    rule: &EndpointRule,
) -> Result<FittedModel, FitError> {
    let data = GlmData::new(scores, labels, rule)?;
    let beta = fit_beta(scores, rule)?;
    let glms = glm::fit_all(&data)?;
    let best = glm::best(&glms).ok_or(FitError::NoUsableCurve)?;
    let curve = glms[best]
        .curve
        .clone()
        .expect("the best fit is usable, so it has a curve");
    let model = Model::new(beta.density, curve);
    Ok(FittedModel {
        n: scores.len(),
        tce_l1: model.tce(1.0)?,
        tce_l2: model.tce(2.0)?,
        beta,
        glms,
        best,
        model,
        saturation: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{model::repetition_rng, Beta, Curve};

    #[test]
    fn a_simulated_model_is_fitted_back() {
        let truth = Model::new(
            Beta::new(2.5, 0.4).unwrap(),
            Curve::logistic_log_odds(-0.6, 0.7).unwrap(),
        );
        let (scores, labels) = truth.sample(60_000, &mut repetition_rng(2, 0));
        let fit = fit_model(&scores, &labels, &EndpointRule::default()).unwrap();
        assert_eq!(fit.best_glm().spec.name(), "logit_logit_b0_b1");
        let expected = truth.tce(2.0).unwrap();
        assert!(
            (fit.tce_l2 - expected).abs() < 0.01,
            "{} vs {expected}",
            fit.tce_l2
        );
        assert!((fit.model.density.alpha() - 2.5).abs() < 0.1);
        assert!((fit.model.density.beta() - 0.4).abs() < 0.02);
    }
}
