//! Fitting a model with point masses at the saturated scores 0.0 and 1.0
//! ([`crate::sim::point_mass`]).
//!
//! - π₀, π₁: the sample fractions of scores that are exactly 0.0 and exactly 1.0 (the
//!   maximum-likelihood estimates of a mixture's atom weights).
//! - The Beta density: fitted on the other scores only, so no endpoint rule is needed
//!   for it (no score is within 1e−16 of an end point once the exact 0s and 1s are out).
//! - The accuracy of an atom, two ways ([`AtomAccuracy`]):
//!   - **from the curve**: the GLMs are fitted on all rows, as [`super::fit_model`] does
//!     (the saturated rows held ε = 1e−16 from the end point by the endpoint rule), and
//!     a₁ is the best GLM's mean at that held point, the accuracy the GLM likelihood
//!     gave those rows;
//!   - **fitted separately**: the GLMs are fitted on the unsaturated rows only, and a₁ is
//!     the saturated rows' mean label (one more free coefficient per atom).
//!
//!   [`AtomAccuracy::ByAic`] takes the one with the lower AIC of all labels:
//!   2·(free coefficients) + 2·NLL over every row, the GLM's coefficients plus one per
//!   fitted atom accuracy. (The score part, Beta on the rest and the atoms' fractions,
//!   is the same in both and does not enter the comparison.)

use super::beta::fit_beta;
use super::endpoint::EndpointRule;
use super::glm::{self, GlmData, GlmFit, GlmSpec};
use super::model::{FitError, FittedModel};
use crate::sim::{Model, PointMass, PointMasses};

/// Where an atom's accuracy comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomAccuracy {
    /// The best GLM fitted on all rows, evaluated at the saturated score.
    FromCurve,
    /// The saturated rows' mean label, the GLMs fitted on the other rows.
    Fitted,
    /// Whichever of the two has the lower AIC (the default).
    ByAic,
}

/// One of the two fits of the atoms' accuracies.
#[derive(Clone, Debug, PartialEq)]
pub struct AtomVariant {
    /// The best GLM of this variant.
    pub best: GlmSpec,
    /// The accuracy at 0 and at 1 (where there is an atom).
    pub accuracy: [Option<f64>; 2],
    /// The AIC of all labels under this variant.
    pub aic: f64,
}

/// What the point-mass fit found.
#[derive(Clone, Debug, PartialEq)]
pub struct SaturationFit {
    /// Rows with a score of exactly 0.0 and exactly 1.0.
    pub counts: [usize; 2],
    /// The fitted atoms (as in the model).
    pub point_masses: PointMasses,
    /// The accuracies from the curve (GLMs on all rows).
    pub from_curve: AtomVariant,
    /// The accuracies fitted separately (GLMs on the other rows); `None` if the other
    /// rows admit no usable GLM.
    pub fitted: Option<AtomVariant>,
    /// The variant the model uses ([`AtomAccuracy::FromCurve`] or
    /// [`AtomAccuracy::Fitted`]).
    pub chosen: AtomAccuracy,
}

/// −Σ ln P(y) of `hits` ones among `rows` Bernoulli(a) labels, with 0·ln 0 = 0.
fn bernoulli_nll(hits: usize, rows: usize, a: f64) -> f64 {
    let term = |count: usize, p: f64| {
        if count == 0 {
            0.0
        } else {
            -(count as f64) * p.ln()
        }
    };
    term(hits, a) + term(rows - hits, 1.0 - a)
}

/// The best usable GLM of `fits`, with its curve.
fn best_of(fits: &[GlmFit]) -> Option<usize> {
    glm::best(fits)
}

/// Fits Beta + GLM + atoms at 0.0 and 1.0 (see the module docs); `choice` says where the
/// atoms' accuracies come from. Without any score of exactly 0 or 1 this is
/// [`super::fit_model`] (with an empty [`SaturationFit`]).
pub fn fit_model_with_point_masses(
    scores: &[f64],
    labels: &[u8],
    rule: &EndpointRule,
    choice: AtomAccuracy,
) -> Result<FittedModel, FitError> {
    // Validates every row (lengths, scores in [0, 1], labels 0/1) before anything else.
    let all = GlmData::new(scores, labels, rule)?;
    let mut rest = (Vec::new(), Vec::new());
    let mut counts = [0usize; 2];
    let mut hits = [0usize; 2];
    for (&s, &y) in scores.iter().zip(labels) {
        let end = if s == 0.0 {
            Some(0)
        } else if s == 1.0 {
            Some(1)
        } else {
            None
        };
        match end {
            Some(k) => {
                counts[k] += 1;
                hits[k] += usize::from(y);
            }
            None => {
                rest.0.push(s);
                rest.1.push(y);
            }
        }
    }
    let n = scores.len();
    let beta = fit_beta(&rest.0, rule)?;

    // From the curve: GLMs on all rows, accuracy = the GLM mean at the held end point.
    let glms_all = glm::fit_all(&all)?;
    let best_all = best_of(&glms_all).ok_or(FitError::NoUsableCurve)?;
    let fit = &glms_all[best_all];
    let at = |score: f64| fit.spec.mean(fit.b0, fit.b1, &rule.logs(score));
    let from_curve = AtomVariant {
        best: fit.spec,
        accuracy: [
            (counts[0] > 0).then(|| at(0.0)),
            (counts[1] > 0).then(|| at(1.0)),
        ],
        aic: fit.aic,
    };

    // Fitted separately: GLMs on the other rows, accuracy = the mean label at the atom.
    let fitted_glms = GlmData::new(&rest.0, &rest.1, rule)
        .ok()
        .and_then(|data| glm::fit_all(&data).ok());
    let fitted = fitted_glms.as_ref().and_then(|fits| {
        let best = best_of(fits)?;
        let fit = &fits[best];
        let mut aic = fit.aic;
        let mut accuracy = [None; 2];
        for k in 0..2 {
            if counts[k] > 0 {
                let a = hits[k] as f64 / counts[k] as f64;
                accuracy[k] = Some(a);
                aic += 2.0 + 2.0 * bernoulli_nll(hits[k], counts[k], a);
            }
        }
        Some((
            best,
            AtomVariant {
                best: fit.spec,
                accuracy,
                aic,
            },
        ))
    });

    let use_fitted = match (choice, &fitted) {
        (AtomAccuracy::FromCurve, _) | (_, None) => false,
        (AtomAccuracy::Fitted, Some(_)) => true,
        (AtomAccuracy::ByAic, Some((_, variant))) => variant.aic < from_curve.aic,
    };
    if choice == AtomAccuracy::Fitted && !use_fitted {
        return Err(FitError::NoUsableCurve);
    }
    let (glms, best, accuracy) = if use_fitted {
        let (best, variant) = fitted.as_ref().expect("use_fitted implies a fit");
        (
            fitted_glms.clone().expect("a fitted variant has its GLMs"),
            *best,
            variant.accuracy,
        )
    } else {
        (glms_all, best_all, from_curve.accuracy)
    };
    let atom = |k: usize| -> Result<Option<PointMass>, FitError> {
        accuracy[k]
            .map(|a| PointMass::new(counts[k] as f64 / n as f64, a))
            .transpose()
            .map_err(FitError::PointMass)
    };
    let point_masses = PointMasses::new(atom(0)?, atom(1)?).map_err(FitError::PointMass)?;
    let curve = glms[best]
        .curve
        .clone()
        .expect("the best fit is usable, so it has a curve");
    let model = Model::with_point_masses(beta.density, curve, point_masses);
    Ok(FittedModel {
        n,
        tce_l1: model.tce(1.0)?,
        tce_l2: model.tce(2.0)?,
        beta,
        glms,
        best,
        model,
        saturation: Some(SaturationFit {
            counts,
            point_masses,
            from_curve,
            fitted: fitted.map(|(_, v)| v),
            chosen: if use_fitted {
                AtomAccuracy::Fitted
            } else {
                AtomAccuracy::FromCurve
            },
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{model::repetition_rng, Beta, Curve};

    fn truth(pi_one: f64, a_one: f64) -> Model {
        Model::with_point_masses(
            Beta::new(2.5, 0.6).unwrap(),
            Curve::logistic_log_odds(-0.3, 0.8).unwrap(),
            PointMasses::new(
                Some(PointMass::new(0.02, 0.1).unwrap()),
                Some(PointMass::new(pi_one, a_one).unwrap()),
            )
            .unwrap(),
        )
    }

    #[test]
    fn recovers_the_masses_the_accuracies_and_the_density() {
        let truth = truth(0.3, 0.9);
        let n = 60_000;
        let (scores, labels) = truth.sample(n, &mut repetition_rng(3, 0));
        let fit = fit_model_with_point_masses(
            &scores,
            &labels,
            &EndpointRule::default(),
            AtomAccuracy::ByAic,
        )
        .unwrap();
        let saturation = fit.saturation.as_ref().unwrap();
        let masses = fit.model.point_masses;
        // The fractions of exact 0s and 1s (the Beta(2.5, 0.6) part puts < 1e-6 of its
        // draws at exactly 1.0 in f64); binomial standard errors 0.0019 and 0.0006.
        let one = masses.one().unwrap();
        let zero = masses.zero().unwrap();
        assert_eq!(
            one.mass(),
            scores.iter().filter(|&&s| s == 1.0).count() as f64 / n as f64
        );
        assert!((one.mass() - 0.3).abs() < 0.008, "{one:?}");
        assert!((zero.mass() - 0.02).abs() < 0.003, "{zero:?}");
        // T(1) = 1 for this curve, but the atom's accuracy is 0.9: only the separately
        // fitted accuracy can explain the saturated labels, and AIC picks it.
        assert_eq!(saturation.chosen, AtomAccuracy::Fitted);
        assert!((one.accuracy() - 0.9).abs() < 0.006, "{one:?}");
        assert!((zero.accuracy() - 0.1).abs() < 0.05, "{zero:?}");
        assert!(saturation.fitted.as_ref().unwrap().aic < saturation.from_curve.aic);
        // Beta on the unsaturated scores, the GLM on the same rows.
        assert!(
            (fit.model.density.alpha() - 2.5).abs() < 0.1,
            "{:?}",
            fit.model
        );
        assert!(
            (fit.model.density.beta() - 0.6).abs() < 0.03,
            "{:?}",
            fit.model
        );
        assert_eq!(fit.best_glm().spec.name(), "logit_logit_b0_b1");
        let expected = truth.tce(2.0).unwrap();
        assert!(
            (fit.tce_l2 - expected).abs() < 0.005,
            "{} vs {expected}",
            fit.tce_l2
        );
    }

    #[test]
    fn an_atom_that_follows_the_curve_is_taken_from_it() {
        // a₁ = 1 = T(1) and no atom at 0: the curve fitted on all rows explains the
        // saturated labels with no extra coefficient, so AIC keeps the curve's accuracy.
        let truth = Model::with_point_masses(
            Beta::new(2.5, 0.6).unwrap(),
            Curve::logistic_log_odds(-0.3, 0.8).unwrap(),
            PointMasses::at_one(PointMass::new(0.25, 1.0).unwrap()),
        );
        let (scores, labels) = truth.sample(40_000, &mut repetition_rng(5, 0));
        let rule = EndpointRule::default();
        let fit =
            fit_model_with_point_masses(&scores, &labels, &rule, AtomAccuracy::ByAic).unwrap();
        let saturation = fit.saturation.unwrap();
        assert_eq!(saturation.chosen, AtomAccuracy::FromCurve);
        assert!(fit.model.point_masses.one().unwrap().accuracy() > 0.999);
        // Forcing either variant works and reports the same counts.
        let fitted =
            fit_model_with_point_masses(&scores, &labels, &rule, AtomAccuracy::Fitted).unwrap();
        assert_eq!(fitted.saturation.unwrap().counts, saturation.counts);
        assert_eq!(fitted.model.point_masses.one().unwrap().accuracy(), 1.0);
    }

    #[test]
    fn without_saturated_scores_it_is_the_plain_fit() {
        let plain = Model::new(
            Beta::new(2.0, 1.5).unwrap(),
            Curve::logistic_log_odds(0.2, 0.9).unwrap(),
        );
        let (scores, labels) = plain.sample(5_000, &mut repetition_rng(1, 0));
        let rule = EndpointRule::default();
        let with =
            fit_model_with_point_masses(&scores, &labels, &rule, AtomAccuracy::ByAic).unwrap();
        let without = super::super::fit_model(&scores, &labels, &rule).unwrap();
        assert!(with.model.point_masses.is_none());
        assert_eq!(with.model, without.model);
        assert_eq!(with.tce_l2, without.tce_l2);
    }

    #[test]
    fn bad_rows_are_refused_before_filtering() {
        let rule = EndpointRule::default();
        assert!(matches!(
            fit_model_with_point_masses(&[0.5, 1.2], &[1, 0], &rule, AtomAccuracy::ByAic),
            Err(FitError::Glm(_))
        ));
        // Only saturated scores: nothing for the Beta.
        assert!(matches!(
            fit_model_with_point_masses(&[1.0, 1.0, 0.0], &[1, 0, 0], &rule, AtomAccuracy::ByAic),
            Err(FitError::Beta(_))
        ));
    }
}
