//! Multiclass temperature scaling (Guo et al. 2017): one temperature T for all logits,
//! softmax(z / T), fitted by minimising the cross-entropy of the true classes.
//!
//! With s = 1/T the loss L(s) = Σ_i [logsumexp(s·z_i) − s·z_{i,y_i}] is convex, with
//! L'(s) = Σ_i (E_{p_i}\[z\] − z_{i,y_i}) and L''(s) = Σ_i Var_{p_i}\[z\] under p_i =
//! softmax(s·z_i); Newton with step halving converges from s = 1.

use super::{softmax_into, ClassTable};
use crate::recalibrate::RecalibrateError;

const MAX_ITERATIONS: usize = 100;
const MAX_HALVINGS: usize = 60;

/// A fitted temperature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MulticlassTemperature {
    /// T > 0.
    pub temperature: f64,
}

/// L(s), L'(s), L''(s) over the rows of a row-major table of `classes` logits.
pub(super) fn loss(logits: &[f64], classes: usize, truth: &[usize], s: f64) -> (f64, f64, f64) {
    let (mut value, mut first, mut second) = (0.0, 0.0, 0.0);
    for (row, &class) in logits.chunks_exact(classes).zip(truth) {
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

/// Fits T on a validated table: its logits, or for probabilities the log-probabilities
/// ([`ClassTable::logits`]).
pub fn fit_multiclass_temperature(
    table: &ClassTable,
) -> Result<MulticlassTemperature, RecalibrateError> {
    let logits = table.logits();
    let (classes, truth) = (table.classes(), table.true_classes());
    let done = |s: f64| {
        Ok(MulticlassTemperature {
            temperature: 1.0 / s,
        })
    };
    let mut s = 1.0;
    let (mut value, _, _) = loss(&logits, classes, truth, s);
    for _ in 0..MAX_ITERATIONS {
        let (_, first, second) = loss(&logits, classes, truth, s);
        let step = first / second;
        if !step.is_finite() {
            // Every row's logits equal (no variance): the loss does not depend on T.
            return Err(RecalibrateError::NotConverged);
        }
        if step.abs() <= 1e-12 * s {
            return done(s);
        }
        let mut scale = 1.0;
        let mut moved = false;
        for _ in 0..MAX_HALVINGS {
            let trial = s - scale * step;
            if trial > 0.0 {
                let (trial_value, _, _) = loss(&logits, classes, truth, trial);
                // Strictly lower: a step that only keeps the loss (rounding near the
                // minimum) would move for ever without converging.
                if trial_value < value {
                    (s, value, moved) = (trial, trial_value, true);
                    break;
                }
            }
            scale *= 0.5;
        }
        if !moved {
            // No step lowers the loss: at its minimum to rounding.
            return done(s);
        }
    }
    Err(RecalibrateError::NotConverged)
}

impl MulticlassTemperature {
    /// softmax(z / T) of one row of logits, written into `out`.
    pub fn apply_row(&self, logits: &[f64], out: &mut [f64]) {
        let scaled: Vec<f64> = logits.iter().map(|z| z / self.temperature).collect();
        softmax_into(&scaled, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::model::repetition_rng;
    use rand::Rng;

    /// Rows of 5 logits uniform in (−6, 6), classes drawn from softmax(z / `t`).
    pub(crate) fn simulated(n: usize, t: f64, seed: u64) -> ClassTable {
        let mut rng = repetition_rng(seed, 0);
        let (mut logits, mut classes) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let row: Vec<f64> = (0..5).map(|_| rng.gen_range(-6.0..6.0)).collect();
            let weights: Vec<f64> = row.iter().map(|z| (z / t).exp()).collect();
            let total: f64 = weights.iter().sum();
            let mut u = rng.gen::<f64>() * total;
            let mut class = 0;
            while class < 4 && u >= weights[class] {
                u -= weights[class];
                class += 1;
            }
            logits.extend(row);
            classes.push(class);
        }
        ClassTable::new(logits, 5, classes, true).unwrap()
    }

    /// The NLL of the true classes under softmax(z / t), written out.
    fn naive_nll(table: &ClassTable, t: f64) -> f64 {
        (0..table.rows())
            .map(|i| {
                let row = table.row(i);
                let partition: f64 = row.iter().map(|z| (z / t).exp()).sum();
                -((row[table.true_classes()[i]] / t).exp() / partition).ln()
            })
            .sum()
    }

    /// The minimiser of `f` on [lo, hi] by golden-section search (f unimodal there).
    fn golden_section(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
        let ratio = (5f64.sqrt() - 1.0) / 2.0;
        while hi - lo > 1e-10 {
            let (a, b) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
            if f(a) < f(b) {
                hi = b;
            } else {
                lo = a;
            }
        }
        0.5 * (lo + hi)
    }

    #[test]
    fn matches_a_golden_section_search_of_the_written_out_nll() {
        // Classes drawn from softmax(z / 2.5). The fitted T is the NLL's minimiser, found
        // independently by golden-section search on the written-out loss; the sampling
        // error of T̂ around 2.5 at n = 20 000 is about 0.03 (so 0.1 is > 3 sd).
        let table = simulated(20_000, 2.5, 4);
        let fit = fit_multiclass_temperature(&table).unwrap();
        let naive = golden_section(|t| naive_nll(&table, t), 0.5, 10.0);
        assert!(
            (fit.temperature - naive).abs() < 1e-6,
            "{} vs {naive}",
            fit.temperature
        );
        assert!((fit.temperature - 2.5).abs() < 0.1, "{}", fit.temperature);
    }

    #[test]
    fn converges_to_the_golden_section_minimiser_on_many_tables() {
        // Tables of 300 to 1743 rows at four temperatures: every fit converges (Newton
        // stops when no step lowers the loss) at the written-out NLL's minimiser.
        for seed in 0..40 {
            let t = [0.5, 1.0, 2.0, 4.0][seed % 4];
            let table = simulated(300 + 37 * seed, t, 100 + seed as u64);
            let fit = fit_multiclass_temperature(&table).unwrap();
            let naive = golden_section(|t| naive_nll(&table, t), 0.05, 50.0);
            assert!(
                (fit.temperature - naive).abs() < 1e-6 * naive,
                "seed {seed}: {} vs {naive}",
                fit.temperature
            );
        }
    }

    #[test]
    fn on_probabilities_fits_the_log_probabilities() {
        // The same rows as probabilities: the fit is on ln p, which differs from the
        // logits by a constant per row, so T is the same.
        let table = simulated(2_000, 0.5, 5);
        let mut probabilities = vec![0.0; table.rows() * 5];
        for (i, out) in probabilities.chunks_exact_mut(5).enumerate() {
            softmax_into(table.row(i), out);
        }
        let from_probabilities =
            ClassTable::new(probabilities, 5, table.true_classes().to_vec(), false).unwrap();
        let a = fit_multiclass_temperature(&table).unwrap().temperature;
        let b = fit_multiclass_temperature(&from_probabilities)
            .unwrap()
            .temperature;
        assert!((a - b).abs() < 1e-9 * a, "{a} vs {b}");
        assert!((a - 0.5).abs() < 0.05, "{a}");
    }

    #[test]
    fn calibrated_logits_give_t_equal_to_1_and_the_identity() {
        // Logits (ln 3, 0) give (3/4, 1/4); three rows of class 0 and one of class 1 make
        // the frequencies the probabilities: L'(1) = 4 · ¾ ln 3 − 3 ln 3 = 0 exactly.
        // Likewise (ln 4, 0, ln 5) with classes in proportion 4 : 1 : 5.
        let mut values = Vec::new();
        let mut truth = Vec::new();
        for (class, copies) in [(0, 3), (1, 1)] {
            for _ in 0..copies {
                values.extend([3f64.ln(), 0.0, -1000.0]);
                truth.push(class);
            }
        }
        // The third column of the 2-class rows is a logit whose e^z underflows to 0.
        for (class, copies) in [(0, 4), (1, 1), (2, 5)] {
            for _ in 0..copies {
                values.extend([4f64.ln(), 0.0, 5f64.ln()]);
                truth.push(class);
            }
        }
        let table = ClassTable::new(values, 3, truth, true).unwrap();
        let fit = fit_multiclass_temperature(&table).unwrap();
        assert!((fit.temperature - 1.0).abs() < 1e-12, "{}", fit.temperature);
        let mut out = [0.0; 3];
        fit.apply_row(table.row(0), &mut out);
        assert!((out[0] - 0.75).abs() < 1e-12 && (out[1] - 0.25).abs() < 1e-12);
        fit.apply_row(table.row(4), &mut out);
        for (got, want) in out.iter().zip([0.4, 0.1, 0.5]) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }

    #[test]
    fn equal_logits_do_not_converge() {
        let table = ClassTable::new(vec![1.0, 1.0, 2.0, 2.0], 2, vec![0, 1], true).unwrap();
        assert_eq!(
            fit_multiclass_temperature(&table),
            Err(RecalibrateError::NotConverged)
        );
    }
}
