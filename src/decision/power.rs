//! The default statistic: the candidate with the highest power at the data's n against
//! the model fitted to the data.
//!
//! The model is the report's (`tce::report::ParametricFit::of` with the flexible model:
//! point masses at 0 and 1, a Beta or log-odds mixture density, the best of the GLMs,
//! monotone splines and the identity curve). Its accuracy at each observed score,
//! a_i = T̂(f_i) (an atom's accuracy at a score of exactly 0 or 1), is the alternative;
//! the power of a candidate is the share of label sets drawn with those accuracies at
//! the observed scores (y_i = 1 if U < a_i) on which the test rejects at α, the test's
//! own null replicates held fixed. So the power is that of the very test the data get,
//! at their scores and n, against the fitted alternative; its Monte-Carlo standard error
//! is √(power (1 − power) / m) for m simulated label sets.
//!
//! When the fitted model is calibrated at the observed scores (a_i = f_i for every row:
//! the identity curve, and any atom's accuracy equal to its score), every test has power
//! α against it, and the choice falls back on [`Statistic::fallback`]; so it does when no
//! model can be fitted.
//!
//! The choice uses the labels (through the fit), so the chosen test's size is not exact
//! by construction as each resampled test's is; docs/decisions.md measures it with the
//! others (the fit keeps the identity curve unless a likelihood-ratio test at the 1 %
//! level rejects it, so on calibrated data the choice is nearly always the fallback).

use rayon::prelude::*;

use super::resampling::{at_least, p_value, stream_seed, Evaluation, SortedData, POWER_STREAM};
use super::Statistic;
use crate::sim::flexible::FlexibleModel;
use crate::sim::repetition_rng;

/// The power of one candidate against the fitted model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Power {
    /// The candidate.
    pub statistic: Statistic,
    /// The share of simulated label sets on which the test rejects at α.
    pub power: f64,
    /// Its Monte-Carlo standard error, √(power (1 − power) / m).
    pub se: f64,
}

/// The accuracy the model gives each of the sorted `scores`: an atom's accuracy at a
/// score of exactly 0 or 1 where the model has that atom, else its curve's T(f) (f itself
/// for the identity curve, so that a calibrated model gives the scores back bit for
/// bit).
pub fn accuracies(model: &FlexibleModel, scores: &[f64]) -> Vec<f64> {
    let masses = &model.point_masses;
    let identity = model.curve.is_identity();
    scores
        .iter()
        .map(|&f| {
            let atom = match f {
                0.0 => masses.zero(),
                1.0 => masses.one(),
                _ => None,
            };
            match atom {
                Some(a) => a.accuracy(),
                // T(f) = f exactly, not through the curve's arithmetic.
                None if identity => f,
                None => model.curve.eval(f).clamp(0.0, 1.0),
            }
        })
        .collect()
}

/// The power of each statistic of `candidates` (all resampled; `null[s]` the sorted
/// null replicates of candidate s) at level `alpha` when labels are drawn with
/// `accuracies` at the sorted scores: `simulations` label sets, set r from the generator
/// of (the power stream of `seed`, r).
#[allow(clippy::too_many_arguments)]
pub(crate) fn powers(
    data: &SortedData,
    accuracies: &[f64],
    candidates: &[Statistic],
    null: &[&[f64]],
    simulations: usize,
    seed: u64,
    alpha: f64,
    evaluation: &Evaluation,
) -> Vec<Power> {
    let specs: Vec<_> = candidates
        .iter()
        .map(|s| s.estimator().expect("candidates are resampled"))
        .collect();
    let seed = stream_seed(seed, POWER_STREAM);
    let rejections: Vec<Vec<bool>> = (0..simulations)
        .into_par_iter()
        .map_init(
            || data.labeling(),
            |labeling, r| {
                let mut rng = repetition_rng(seed, r as u64);
                data.draw(accuracies, &mut rng, labeling);
                let view = data.view(labeling);
                specs
                    .iter()
                    .zip(null)
                    .map(
                        |(spec, replicates)| match evaluation.evaluate(spec, &view) {
                            Ok((value, _)) => {
                                p_value(at_least(replicates, value), replicates.len()) <= alpha
                            }
                            // Undefined on this label set: no rejection.
                            Err(_) => false,
                        },
                    )
                    .collect()
            },
        )
        .collect();
    let m = simulations as f64;
    candidates
        .iter()
        .enumerate()
        .map(|(s, &statistic)| {
            let power = rejections.iter().filter(|row| row[s]).count() as f64 / m;
            Power {
                statistic,
                power,
                se: (power * (1.0 - power) / m).sqrt(),
            }
        })
        .collect()
}

/// The index of the highest power (the first of equals: candidates list the fallback
/// first).
pub(crate) fn most_powerful(powers: &[Power]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, p) in powers.iter().enumerate() {
        if best.map_or(true, |b| p.power > powers[b].power) {
            best = Some(i);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::point_mass::{PointMass, PointMasses};
    use crate::sim::{Beta, Curve, Model};

    #[test]
    fn accuracies_follow_the_curve_and_the_atoms() {
        let model = FlexibleModel::from(Model::with_point_masses(
            Beta::new(2.0, 1.0).unwrap(),
            Curve::polynomial(2.0).unwrap(),
            PointMasses::new(
                Some(PointMass::new(0.1, 0.25).unwrap()),
                Some(PointMass::new(0.2, 0.9).unwrap()),
            )
            .unwrap(),
        ));
        assert_eq!(
            accuracies(&model, &[0.0, 0.5, 0.75, 1.0]),
            [0.25, 0.25, 0.5625, 0.9]
        );
        // Without atoms, 0 and 1 are the curve's.
        let plain = FlexibleModel::from(Model::new(
            Beta::new(2.0, 1.0).unwrap(),
            Curve::polynomial(2.0).unwrap(),
        ));
        assert_eq!(accuracies(&plain, &[0.0, 1.0]), [0.0, 1.0]);
    }

    #[test]
    fn the_first_of_equal_powers_wins() {
        let p = |power| Power {
            statistic: Statistic::Spiegelhalter,
            power,
            se: 0.0,
        };
        assert_eq!(most_powerful(&[p(0.5), p(0.7), p(0.7), p(0.1)]), Some(1));
        assert_eq!(most_powerful(&[]), None);
    }
}
