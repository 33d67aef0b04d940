//! Maximum-likelihood Beta(α, β) fit of a score density (SPEC §8).
//!
//! The mean log-likelihood of Beta(α, β) is
//! ℓ(α, β) = (α − 1) s₁ + (β − 1) s₂ − ln B(α, β) with the sufficient statistics
//! s₁ = mean ln x and s₂ = mean ln(1 − x). It is concave (the Beta family is exponential
//! in (α, β)), its gradient is (s₁ − ψ(α) + ψ(α+β), s₂ − ψ(β) + ψ(α+β)) and its negative
//! Hessian, the Fisher information, is
//! [[ψ'(α) − ψ'(α+β), −ψ'(α+β)], [−ψ'(α+β), ψ'(β) − ψ'(α+β)]], positive definite.
//! Newton's method therefore converges from any start once each step is halved until it
//! keeps both parameters positive and does not lower ℓ. The start is the method of
//! moments, which is close for bell-shaped densities; for the U- and J-shaped densities of
//! real classifiers (β ≈ 0.05) Newton takes a few more steps.
//!
//! Scores of exactly 0 or 1 follow an [`EndpointRule`].

use core::fmt;

use super::endpoint::EndpointRule;
use super::special::{digamma, trigamma};
use crate::sim::beta::{ln_beta_function, Beta};

/// Newton stops when a full step changes no parameter by more than this relative amount.
const PARAMETER_TOLERANCE: f64 = 1e-12;

/// Newton gives up after this many steps.
const MAX_ITERATIONS: usize = 200;

/// Step halvings tried before a step is declared impossible.
const MAX_HALVINGS: usize = 60;

/// Why a Beta fit failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BetaFitError {
    /// No scores.
    Empty,
    /// A score is NaN or outside [0, 1] (its index).
    InvalidScore(usize),
    /// All scores are equal (after the endpoint rule): the maximum likelihood is at
    /// infinite α and β.
    Degenerate,
    /// Newton did not converge.
    NotConverged {
        /// α at the last step.
        alpha: f64,
        /// β at the last step.
        beta: f64,
    },
}

impl fmt::Display for BetaFitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Empty => f.write_str("no scores to fit a Beta density to"),
            Self::InvalidScore(i) => write!(f, "score {i} is not a number in [0, 1]"),
            Self::Degenerate => {
                f.write_str("all scores are equal: the Beta fit has no finite maximum")
            }
            Self::NotConverged { alpha, beta } => write!(
                f,
                "Beta fit did not converge (last alpha {alpha}, beta {beta})"
            ),
        }
    }
}

impl std::error::Error for BetaFitError {}

/// The sufficient statistics of a Beta likelihood.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BetaStatistics {
    /// The number of scores.
    pub n: usize,
    /// mean ln x.
    pub mean_ln_x: f64,
    /// mean ln(1 − x).
    pub mean_ln_one_minus_x: f64,
    /// mean x (for the moment start).
    pub mean: f64,
    /// population variance of x (for the moment start).
    pub variance: f64,
}

impl BetaStatistics {
    /// The statistics of `scores` under `rule`.
    pub fn of(scores: &[f64], rule: &EndpointRule) -> Result<BetaStatistics, BetaFitError> {
        if scores.is_empty() {
            return Err(BetaFitError::Empty);
        }
        if let Some(i) = scores.iter().position(|x| !(0.0..=1.0).contains(x)) {
            return Err(BetaFitError::InvalidScore(i));
        }
        let n = scores.len() as f64;
        let (mut s1, mut s2, mut sum) = (0.0, 0.0, 0.0);
        for &x in scores {
            let logs = rule.logs(x);
            s1 += logs.ln_x;
            s2 += logs.ln_one_minus_x;
            sum += x;
        }
        let mean = sum / n;
        let variance = scores.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        Ok(BetaStatistics {
            n: scores.len(),
            mean_ln_x: s1 / n,
            mean_ln_one_minus_x: s2 / n,
            mean,
            variance,
        })
    }

    /// The mean log-likelihood ℓ(α, β) of the scores.
    pub fn mean_log_likelihood(&self, alpha: f64, beta: f64) -> f64 {
        (alpha - 1.0) * self.mean_ln_x + (beta - 1.0) * self.mean_ln_one_minus_x
            - ln_beta_function(alpha, beta)
    }
}

/// A fitted Beta density.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BetaFit {
    /// The fitted density.
    pub density: Beta,
    /// The negative log-likelihood of all n scores (sum, not mean).
    pub nll: f64,
    /// Newton steps taken.
    pub iterations: usize,
    /// The statistics it was fitted from.
    pub statistics: BetaStatistics,
}

/// The method-of-moments start: α = m·k, β = (1 − m)·k with k = m(1 − m)/v − 1; (1, 1)
/// when the moments admit no Beta (k ≤ 0).
fn moment_start(stats: &BetaStatistics) -> (f64, f64) {
    let m = stats.mean;
    let k = m * (1.0 - m) / stats.variance - 1.0;
    if k.is_finite() && k > 0.0 && m > 0.0 && m < 1.0 {
        (m * k, (1.0 - m) * k)
    } else {
        (1.0, 1.0)
    }
}

/// Fits Beta(α, β) to the scores by maximum likelihood.
pub fn fit_beta(scores: &[f64], rule: &EndpointRule) -> Result<BetaFit, BetaFitError> {
    fit_beta_statistics(&BetaStatistics::of(scores, rule)?)
}

/// Fits Beta(α, β) to sufficient statistics.
pub fn fit_beta_statistics(stats: &BetaStatistics) -> Result<BetaFit, BetaFitError> {
    // Jensen: mean ln x ≤ ln mean x, with equality only for a point mass.
    if stats.variance == 0.0 {
        return Err(BetaFitError::Degenerate);
    }
    let (mut alpha, mut beta) = moment_start(stats);
    let mut current = stats.mean_log_likelihood(alpha, beta);
    for iteration in 1..=MAX_ITERATIONS {
        let total = digamma(alpha + beta);
        let gradient = [
            stats.mean_ln_x - digamma(alpha) + total,
            stats.mean_ln_one_minus_x - digamma(beta) + total,
        ];
        let shared = trigamma(alpha + beta);
        let (i11, i22, i12) = (trigamma(alpha) - shared, trigamma(beta) - shared, -shared);
        let determinant = i11 * i22 - i12 * i12;
        // Newton step: I⁻¹ · gradient.
        let step = [
            (i22 * gradient[0] - i12 * gradient[1]) / determinant,
            (i11 * gradient[1] - i12 * gradient[0]) / determinant,
        ];
        if !(step[0].is_finite() && step[1].is_finite()) {
            return Err(BetaFitError::NotConverged { alpha, beta });
        }
        let mut scale = 1.0;
        let mut accepted = None;
        for _ in 0..MAX_HALVINGS {
            let (a, b) = (alpha + scale * step[0], beta + scale * step[1]);
            if a > 0.0 && b > 0.0 {
                let value = stats.mean_log_likelihood(a, b);
                // Equal values are accepted: at the optimum ℓ is flat to rounding.
                if value >= current {
                    accepted = Some((a, b, value));
                    break;
                }
            }
            scale *= 0.5;
        }
        let Some((a, b, value)) = accepted else {
            // No step can improve ℓ: we are at its maximum to rounding.
            return Ok(finish(stats, alpha, beta, iteration));
        };
        let change = ((a - alpha) / alpha).abs().max(((b - beta) / beta).abs());
        (alpha, beta, current) = (a, b, value);
        if change <= PARAMETER_TOLERANCE {
            return Ok(finish(stats, alpha, beta, iteration));
        }
    }
    Err(BetaFitError::NotConverged { alpha, beta })
}

fn finish(stats: &BetaStatistics, alpha: f64, beta: f64, iterations: usize) -> BetaFit {
    BetaFit {
        density: Beta::new(alpha, beta).expect("Newton keeps both parameters positive"),
        nll: -(stats.n as f64) * stats.mean_log_likelihood(alpha, beta),
        iterations,
        statistics: *stats,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::model::repetition_rng;

    fn draws(alpha: f64, beta: f64, n: usize, seed: u64) -> Vec<f64> {
        let density = Beta::new(alpha, beta).unwrap();
        let mut rng = repetition_rng(seed, 0);
        (0..n).map(|_| density.sample(&mut rng)).collect()
    }

    #[test]
    fn recovers_known_parameters() {
        // n = 200 000: the asymptotic standard error of α̂ is sqrt((I⁻¹)₁₁ / n); allow 5 of
        // them.
        for &(alpha, beta) in &[(2.0, 5.0), (0.5, 0.5), (1.1, 0.8), (8.0, 1.5), (0.3, 3.0)] {
            let n = 200_000;
            let fit = fit_beta(&draws(alpha, beta, n, 11), &EndpointRule::default()).unwrap();
            let shared = trigamma(alpha + beta);
            let (i11, i22) = (trigamma(alpha) - shared, trigamma(beta) - shared);
            let det = i11 * i22 - shared * shared;
            let se_alpha = (i22 / det / n as f64).sqrt();
            let se_beta = (i11 / det / n as f64).sqrt();
            let d = fit.density;
            assert!(
                (d.alpha() - alpha).abs() < 5.0 * se_alpha,
                "alpha {} vs {alpha} (se {se_alpha})",
                d.alpha()
            );
            assert!(
                (d.beta() - beta).abs() < 5.0 * se_beta,
                "beta {} vs {beta} (se {se_beta})",
                d.beta()
            );
        }
    }

    #[test]
    fn the_optimum_solves_the_score_equations() {
        let fit = fit_beta(&draws(1.1, 0.3, 50_000, 3), &EndpointRule::default()).unwrap();
        let (a, b) = (fit.density.alpha(), fit.density.beta());
        let s = fit.statistics;
        assert!((s.mean_ln_x - digamma(a) + digamma(a + b)).abs() < 1e-10);
        assert!((s.mean_ln_one_minus_x - digamma(b) + digamma(a + b)).abs() < 1e-10);
        // No nearby point has a higher likelihood.
        for (da, db) in [(1e-4, 0.0), (-1e-4, 0.0), (0.0, 1e-4), (0.0, -1e-4)] {
            assert!(s.mean_log_likelihood(a + da, b + db) <= s.mean_log_likelihood(a, b));
        }
    }

    #[test]
    fn refuses_bad_input() {
        let rule = EndpointRule::default();
        assert_eq!(fit_beta(&[], &rule), Err(BetaFitError::Empty));
        assert_eq!(
            fit_beta(&[0.5, 1.5], &rule),
            Err(BetaFitError::InvalidScore(1))
        );
        assert_eq!(
            fit_beta(&[0.3, 0.3, 0.3], &rule),
            Err(BetaFitError::Degenerate)
        );
    }
}
