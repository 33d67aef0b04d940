//! Seeded bootstrap of the fitted coefficients: rows resampled with replacement, every
//! model refitted, and per coefficient the standard deviation and the percentile
//! interval of the replicates.
//!
//! Replicate r draws from [`repetition_rng`]`(seed, r)`, so results do not depend on the
//! order or the thread replicates run in.

use rand::Rng;

use super::beta::{fit_beta_statistics, BetaStatistics};
use super::endpoint::EndpointRule;
use super::glm::{fit_glm, GlmData, GlmSpec, Validity};
use crate::sim::model::repetition_rng;

/// The most bootstrap replicates a fit takes (`tce fit --bootstrap`). Every replicate's
/// α, β and the twelve GLMs' (b0, b1) are kept until the spreads are read off them: 26
/// values, 208 bytes a replicate, about 21 MB at the bound. Each replicate refits the
/// Beta density and the twelve GLMs on all n rows (about 5 ms for n = 10 000 on one core
/// of the machines we measured on), so 10^5 replicates of 10 000 rows take minutes; the
/// spreads settle long before. The bound of a report's resamples
/// ([`crate::report::MAX_RESAMPLES`]).
pub const MAX_REPLICATES: usize = 100_000;

/// The values a replicate keeps: α, β and (b0, b1) of each of the twelve GLMs.
const VALUES_PER_REPLICATE: usize = 2 + 2 * 12;

/// Why a bootstrap could not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootstrapError {
    /// More replicates than [`MAX_REPLICATES`] (refused before any work).
    TooManyReplicates(usize),
    /// The allocator refused `bytes` bytes for the replicates' coefficients (before any
    /// replicate was drawn).
    OutOfMemory {
        /// The bytes asked for.
        bytes: usize,
    },
}

impl core::fmt::Display for BootstrapError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TooManyReplicates(r) => write!(
                f,
                "{r} replicates: a fit's bootstrap takes at most {MAX_REPLICATES} \
                 (tce::fit::bootstrap::MAX_REPLICATES)"
            ),
            Self::OutOfMemory { bytes } => write!(
                f,
                "cannot allocate {bytes} bytes for the bootstrap's replicates \
                 (fewer replicates need less)"
            ),
        }
    }
}

impl std::error::Error for BootstrapError {}

/// Checks a number of replicates: at most [`MAX_REPLICATES`] (0 is allowed: no spread).
/// [`bootstrap`] starts with it; a caller may run it before reading any data.
pub fn check_replicates(replicates: usize) -> Result<(), BootstrapError> {
    if replicates > MAX_REPLICATES {
        return Err(BootstrapError::TooManyReplicates(replicates));
    }
    Ok(())
}

/// The spread of one coefficient over the bootstrap replicates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Standard deviation of the replicates (the bootstrap standard error).
    pub se: f64,
    /// The 2.5% percentile.
    pub lower: f64,
    /// The 97.5% percentile.
    pub upper: f64,
}

impl Spread {
    /// The spread of `values` (sorted in place); NaN fields when there are none.
    fn of(values: &mut [f64]) -> Spread {
        if values.is_empty() {
            return Spread {
                se: f64::NAN,
                lower: f64::NAN,
                upper: f64::NAN,
            };
        }
        values.sort_by(f64::total_cmp);
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let variance =
            values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0).max(1.0);
        Spread {
            se: variance.sqrt(),
            lower: percentile(values, 0.025),
            upper: percentile(values, 0.975),
        }
    }
}

/// The q-quantile of sorted values, interpolating linearly between order statistics.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    let fraction = position - below as f64;
    sorted[below] + fraction * (sorted[above] - sorted[below])
}

/// The bootstrap of one GLM.
#[derive(Clone, Debug, PartialEq)]
pub struct GlmSpread {
    /// The model.
    pub spec: GlmSpec,
    /// Spread of b0 (zero for a fixed b0).
    pub b0: Spread,
    /// Spread of b1.
    pub b1: Spread,
    /// Replicates whose fit was not valid (left out of the spreads).
    pub invalid: usize,
}

/// The bootstrap of all fits.
#[derive(Clone, Debug, PartialEq)]
pub struct Bootstrap {
    /// Number of replicates.
    pub replicates: usize,
    /// Spread of α.
    pub alpha: Spread,
    /// Spread of β.
    pub beta: Spread,
    /// Per GLM, in [`GlmSpec::all`] order.
    pub glms: Vec<GlmSpread>,
}

/// `replicates` resamples of the rows under `seed`; the Beta density and all twelve GLMs
/// are refitted on each. At most [`MAX_REPLICATES`] ([`BootstrapError::TooManyReplicates`]),
/// and room for every replicate's coefficients is reserved before the first is drawn
/// ([`BootstrapError::OutOfMemory`], never an abort); 0 replicates give NaN spreads.
pub fn bootstrap(
    scores: &[f64],
    data: &GlmData,
    rule: &EndpointRule,
    replicates: usize,
    seed: u64,
) -> Result<Bootstrap, BootstrapError> {
    check_replicates(replicates)?;
    let specs = GlmSpec::all();
    let out_of_memory = |_| BootstrapError::OutOfMemory {
        bytes: replicates.saturating_mul(VALUES_PER_REPLICATE * core::mem::size_of::<f64>()),
    };
    let reserved = || -> Result<Vec<f64>, BootstrapError> {
        let mut values = Vec::new();
        values
            .try_reserve_exact(replicates)
            .map_err(out_of_memory)?;
        Ok(values)
    };
    let mut alphas = reserved()?;
    let mut betas = reserved()?;
    let mut coefficients = Vec::with_capacity(specs.len());
    for _ in &specs {
        coefficients.push((reserved()?, reserved()?, 0usize));
    }
    let n = data.rows();
    let logs: Vec<_> = scores.iter().map(|&x| rule.logs(x)).collect();
    for r in 0..replicates {
        let mut rng = repetition_rng(seed, r as u64);
        let mut counts = vec![0u32; n];
        for _ in 0..n {
            counts[rng.gen_range(0..n)] += 1;
        }
        if let Some((alpha, beta)) = beta_of_resample(scores, &logs, &counts) {
            alphas.push(alpha);
            betas.push(beta);
        }
        let resample = data.reweighted(&counts);
        for (spec, (b0s, b1s, invalid)) in specs.iter().zip(coefficients.iter_mut()) {
            match fit_glm(*spec, &resample) {
                Ok(fit) if fit.validity == Validity::Valid => {
                    b0s.push(fit.b0);
                    b1s.push(fit.b1);
                }
                _ => *invalid += 1,
            }
        }
    }
    Ok(Bootstrap {
        replicates,
        alpha: Spread::of(&mut alphas),
        beta: Spread::of(&mut betas),
        glms: specs
            .into_iter()
            .zip(coefficients)
            .map(|(spec, (mut b0s, mut b1s, invalid))| GlmSpread {
                spec,
                b0: Spread::of(&mut b0s),
                b1: Spread::of(&mut b1s),
                invalid,
            })
            .collect(),
    })
}

/// The Beta fit of a resample given by per-row counts, from weighted sufficient
/// statistics.
fn beta_of_resample(
    scores: &[f64],
    logs: &[super::endpoint::ScoreLogs],
    counts: &[u32],
) -> Option<(f64, f64)> {
    let n: f64 = counts.iter().map(|&c| f64::from(c)).sum();
    let (mut s1, mut s2, mut sum, mut sum_sq) = (0.0, 0.0, 0.0, 0.0);
    for ((&x, l), &c) in scores.iter().zip(logs).zip(counts) {
        let c = f64::from(c);
        s1 += c * l.ln_x;
        s2 += c * l.ln_one_minus_x;
        sum += c * x;
        sum_sq += c * x * x;
    }
    let mean = sum / n;
    let stats = BetaStatistics {
        n: n as usize,
        mean_ln_x: s1 / n,
        mean_ln_one_minus_x: s2 / n,
        mean,
        variance: (sum_sq / n - mean * mean).max(0.0),
    };
    let fit = fit_beta_statistics(&stats).ok()?;
    Some((fit.density.alpha(), fit.density.beta()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::glm::fit_glm;
    use crate::sim::{Beta, Curve, Model};

    #[test]
    fn bootstrap_spread_matches_the_wald_standard_error() {
        let model = Model::new(
            Beta::new(2.0, 0.7).unwrap(),
            Curve::logistic_log_odds(-0.3, 0.8).unwrap(),
        );
        let (scores, labels) = model.sample(4_000, &mut repetition_rng(1, 0));
        let rule = EndpointRule::default();
        let data = GlmData::new(&scores, &labels, &rule).unwrap();
        let boot = bootstrap(&scores, &data, &rule, 150, 9).unwrap();
        assert_eq!(
            boot,
            bootstrap(&scores, &data, &rule, 150, 9).unwrap(),
            "seeded"
        );
        let index = GlmSpec::all()
            .iter()
            .position(|s| s.name() == "logit_logit_b0_b1")
            .unwrap();
        let fit = fit_glm(GlmSpec::all()[index], &data).unwrap();
        let spread = &boot.glms[index];
        assert_eq!(spread.invalid, 0);
        for (boot_se, wald) in [
            (spread.b0.se, fit.wald_se[0]),
            (spread.b1.se, fit.wald_se[1]),
        ] {
            assert!(
                (boot_se / wald - 1.0).abs() < 0.25,
                "bootstrap se {boot_se} vs Wald {wald}"
            );
        }
        assert!(spread.b1.lower < fit.b1 && fit.b1 < spread.b1.upper);
        assert!(boot.alpha.lower < boot.alpha.upper);
    }

    #[test]
    fn replicates_are_bounded_before_any_work() {
        let scores = [0.2, 0.4, 0.6, 0.9];
        let labels = [0, 1, 0, 1];
        let rule = EndpointRule::default();
        let data = GlmData::new(&scores, &labels, &rule).unwrap();
        assert_eq!(check_replicates(MAX_REPLICATES), Ok(()));
        assert_eq!(check_replicates(0), Ok(()));
        for r in [MAX_REPLICATES + 1, 1 << 34, usize::MAX] {
            assert_eq!(
                check_replicates(r),
                Err(BootstrapError::TooManyReplicates(r))
            );
            // At once: 2^64 − 1 replicates of 4 rows would run for ever.
            assert_eq!(
                bootstrap(&scores, &data, &rule, r, 0),
                Err(BootstrapError::TooManyReplicates(r))
            );
        }
        assert_eq!(
            BootstrapError::TooManyReplicates(usize::MAX).to_string(),
            "18446744073709551615 replicates: a fit's bootstrap takes at most 100000 \
             (tce::fit::bootstrap::MAX_REPLICATES)"
        );
    }

    #[test]
    fn percentiles_interpolate() {
        let sorted = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&sorted, 0.5), 2.0);
        assert_eq!(percentile(&sorted, 0.125), 0.5);
        assert_eq!(percentile(&sorted, 1.0), 4.0);
    }
}
