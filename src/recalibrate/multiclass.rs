//! Multiclass temperature scaling (Guo et al. 2017): one temperature T for all logits,
//! softmax(z / T), fitted by minimising the cross-entropy of the true classes.
//!
//! With s = 1/T the loss L(s) = Σ_i [logsumexp(s·z_i) − s·z_{i,y_i}] is convex, with
//! L'(s) = Σ_i (E_{p_i}\[z\] − z_{i,y_i}) and L''(s) = Σ_i Var_{p_i}\[z\] under p_i =
//! softmax(s·z_i); Newton with step halving converges from s = 1.

use super::RecalibrateError;
use crate::toplabel::{self, TopLabel};

const MAX_ITERATIONS: usize = 100;
const MAX_HALVINGS: usize = 60;

/// A fitted temperature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MulticlassTemperature {
    /// T > 0.
    pub temperature: f64,
}

/// L(s), L'(s), L''(s) over the rows.
fn loss(logits: &[Vec<f64>], classes: &[usize], s: f64) -> (f64, f64, f64) {
    let (mut value, mut first, mut second) = (0.0, 0.0, 0.0);
    for (row, &class) in logits.iter().zip(classes) {
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Weights e^{s(z − max)}: stable for s > 0.
        let mut total = 0.0;
        let mut mean = 0.0;
        let mut square = 0.0;
        for &z in row {
            let w = (s * (z - max)).exp();
            total += w;
            mean += w * z;
            square += w * z * z;
        }
        mean /= total;
        let variance = (square / total - mean * mean).max(0.0);
        value += s * max + total.ln() - s * row[class];
        first += mean - row[class];
        second += variance;
    }
    (value, first, second)
}

/// Fits T on a table of logits (one row per sample) and true class indices.
pub fn fit_multiclass_temperature(
    logits: &[Vec<f64>],
    classes: &[usize],
) -> Result<MulticlassTemperature, RecalibrateError> {
    if logits.len() != classes.len() {
        return Err(RecalibrateError::LengthMismatch {
            scores: logits.len(),
            labels: classes.len(),
        });
    }
    if logits.is_empty() {
        return Err(RecalibrateError::Empty);
    }
    for (i, (row, &class)) in logits.iter().zip(classes).enumerate() {
        if class >= row.len() || row.iter().any(|z| !z.is_finite()) {
            return Err(RecalibrateError::InvalidRow(i));
        }
    }
    let mut s = 1.0;
    let (mut value, _, _) = loss(logits, classes, s);
    for _ in 0..MAX_ITERATIONS {
        let (_, first, second) = loss(logits, classes, s);
        let step = first / second;
        if !step.is_finite() {
            return Err(RecalibrateError::NotConverged);
        }
        if step.abs() <= 1e-12 * s {
            return Ok(MulticlassTemperature {
                temperature: 1.0 / s,
            });
        }
        let mut scale = 1.0;
        let mut moved = false;
        for _ in 0..MAX_HALVINGS {
            let trial = s - scale * step;
            if trial > 0.0 {
                let (trial_value, _, _) = loss(logits, classes, trial);
                if trial_value <= value {
                    (s, value, moved) = (trial, trial_value, true);
                    break;
                }
            }
            scale *= 0.5;
        }
        if !moved {
            // No step lowers the loss: at its minimum to rounding.
            return Ok(MulticlassTemperature {
                temperature: 1.0 / s,
            });
        }
    }
    Err(RecalibrateError::NotConverged)
}

impl MulticlassTemperature {
    /// The logits divided by T.
    pub fn scale(&self, row: &[f64]) -> Vec<f64> {
        row.iter().map(|z| z / self.temperature).collect()
    }

    /// The top label of the scaled row, with `class` the true class (SPEC §1 reduction).
    pub fn top_label(&self, row: &[f64], class: usize) -> Result<TopLabel, RecalibrateError> {
        toplabel::from_logits(&self.scale(row), class).map_err(RecalibrateError::Reduce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::model::repetition_rng;
    use rand::Rng;

    #[test]
    fn recovers_the_temperature_of_simulated_logits() {
        // Classes drawn from softmax(z / 2.5): the fitted T should be near 2.5.
        let mut rng = repetition_rng(4, 0);
        let (mut logits, mut classes) = (Vec::new(), Vec::new());
        for _ in 0..20_000 {
            let row: Vec<f64> = (0..5).map(|_| rng.gen_range(-6.0..6.0)).collect();
            let weights: Vec<f64> = row.iter().map(|z| (z / 2.5).exp()).collect();
            let total: f64 = weights.iter().sum();
            let mut u = rng.gen::<f64>() * total;
            let mut class = 0;
            while class < 4 && u >= weights[class] {
                u -= weights[class];
                class += 1;
            }
            logits.push(row);
            classes.push(class);
        }
        let fit = fit_multiclass_temperature(&logits, &classes).unwrap();
        assert!((fit.temperature - 2.5).abs() < 0.1, "{}", fit.temperature);
        // The minimum: nearby temperatures have a higher loss.
        let s = 1.0 / fit.temperature;
        let at = loss(&logits, &classes, s).0;
        assert!(loss(&logits, &classes, s * 1.01).0 > at);
        assert!(loss(&logits, &classes, s * 0.99).0 > at);
        let top = fit.top_label(&logits[0], classes[0]).unwrap();
        assert!(top.score > 0.2 && top.score <= 1.0);
    }

    #[test]
    fn refuses_bad_rows() {
        assert_eq!(
            fit_multiclass_temperature(&[vec![0.0, 1.0]], &[2]),
            Err(RecalibrateError::InvalidRow(0))
        );
        assert_eq!(
            fit_multiclass_temperature(&[], &[]),
            Err(RecalibrateError::Empty)
        );
    }
}
