//! A synthetic model as flexible as real classifier outputs need (issue 36): a score
//! density that is the paper's Beta or a mixture of normals in log-odds
//! ([`LogitMixture`], which follows saturating softmax outputs), a calibration curve that
//! is one of SPEC §7's families or a monotone spline in log-odds ([`MonotoneCurve`]),
//! and point masses at 0 and 1. Its TCE is exact to quadrature accuracy and it samples
//! data sets by the same protocol as the paper's [`Model`], so the simulator runs on it
//! alike ([`Synthetic`]).

use rand::Rng;

use super::beta::Beta;
use super::curve::Curve;
use super::logit_mixture::LogitMixture;
use super::model::{draw_pairs, repetition_rng, reserve_pairs, DatasetTooLarge, Model, Synthetic};
use super::monotone_curve::MonotoneCurve;
use super::point_mass::PointMasses;
use super::quadrature::{integrate_ln, QuadratureError};
use super::tce::{ln_largest_on_grid, lp_of, scales, true_calibration_error, TceError};
use super::unit_point::UnitPoint;

/// How close two successive quadrature sums of a piece must be for the piece to count as
/// settled when they do not reach the quadrature's own tolerance: far finer than any TCE
/// is read (its p-th root halves the relative error, or better).
const SETTLED: f64 = 1e-9;

/// The distribution of the confidence scores off the atoms.
#[derive(Clone, Debug, PartialEq)]
pub enum ScoreDensity {
    /// The paper's Beta(α, β).
    Beta(Beta),
    /// Normals mixed in log-odds.
    LogitMixture(LogitMixture),
}

impl ScoreDensity {
    /// ln of the density at a point given with its logarithms.
    pub fn ln_pdf_at(&self, point: &UnitPoint) -> f64 {
        match self {
            ScoreDensity::Beta(beta) => beta.ln_pdf_at(point),
            ScoreDensity::LogitMixture(mixture) => mixture.ln_pdf_at(point),
        }
    }

    /// Where quadrature against this density must split (none for a Beta, whose
    /// endpoint singularities tanh-sinh handles; a mixture's components otherwise fall
    /// between nodes).
    pub fn quadrature_breaks(&self) -> Vec<UnitPoint> {
        match self {
            ScoreDensity::Beta(_) => Vec::new(),
            ScoreDensity::LogitMixture(mixture) => mixture.quadrature_breaks(),
        }
    }

    /// A short description: `Beta(1.1000, 0.1000)` or `logit mixture of 3`.
    pub fn describe(&self) -> String {
        match self {
            ScoreDensity::Beta(beta) => format!("Beta({:.4}, {:.4})", beta.alpha(), beta.beta()),
            ScoreDensity::LogitMixture(mixture) => {
                format!("a mixture of {} normals in log-odds", mixture.len())
            }
        }
    }
}

/// The calibration curve T(c) = P(y = 1 | f = c) off the atoms.
#[derive(Clone, Debug, PartialEq)]
pub enum CalibrationCurve {
    /// One of SPEC §7's families (the GLM curves of the paper's fits among them).
    Paper(Curve),
    /// A monotone linear spline in log-odds.
    Monotone(MonotoneCurve),
}

impl CalibrationCurve {
    /// T(c).
    pub fn eval(&self, c: f64) -> f64 {
        match self {
            CalibrationCurve::Paper(curve) => curve.eval(c),
            CalibrationCurve::Monotone(curve) => curve.eval(c),
        }
    }

    /// T at a point given with its complement and logarithms.
    pub fn eval_at(&self, point: &UnitPoint) -> f64 {
        match self {
            CalibrationCurve::Paper(curve) => curve.eval_at(point),
            CalibrationCurve::Monotone(curve) => curve.eval_at(point),
        }
    }

    /// ln|c − T(c)|, accurate where the two nearly cancel.
    pub fn ln_abs_gap(&self, point: &UnitPoint) -> f64 {
        match self {
            CalibrationCurve::Paper(curve) => curve.ln_abs_gap(point),
            CalibrationCurve::Monotone(curve) => curve.ln_abs_gap(point),
        }
    }

    /// Where T(c) − c changes sign (and where it touches 0, for a spline):
    /// [`Curve::diagonal_crossings`], [`MonotoneCurve::diagonal_crossings`].
    pub fn diagonal_crossings(&self) -> Vec<UnitPoint> {
        match self {
            CalibrationCurve::Paper(curve) => curve.diagonal_crossings(),
            CalibrationCurve::Monotone(curve) => curve.diagonal_crossings(),
        }
    }

    /// Where |c − T(c)|^p has kinks: the diagonal crossings (and a spline's knots).
    pub fn quadrature_breaks(&self) -> Vec<UnitPoint> {
        match self {
            CalibrationCurve::Paper(curve) => curve.diagonal_crossings(),
            CalibrationCurve::Monotone(curve) => curve.quadrature_breaks(),
        }
    }

    /// Whether T(c) = c exactly.
    pub fn is_identity(&self) -> bool {
        match self {
            CalibrationCurve::Paper(curve) => curve.is_identity(),
            CalibrationCurve::Monotone(curve) => curve.is_identity(),
        }
    }
}

/// Scores f ~ `density` (or an atom), labels y ~ Bernoulli(T(f)).
#[derive(Clone, Debug, PartialEq)]
pub struct FlexibleModel {
    /// The scores' density off the atoms.
    pub density: ScoreDensity,
    /// The calibration curve off the atoms.
    pub curve: CalibrationCurve,
    /// Atoms at 0 and 1, each with its own accuracy.
    pub point_masses: PointMasses,
}

impl From<Model> for FlexibleModel {
    fn from(model: Model) -> FlexibleModel {
        FlexibleModel {
            density: ScoreDensity::Beta(model.density),
            curve: CalibrationCurve::Paper(model.curve),
            point_masses: model.point_masses,
        }
    }
}

impl FlexibleModel {
    /// TCE_p as a fraction: the continuous part by tanh-sinh quadrature of
    /// |c − T(c)|^p·pdf(c), split at the curve's and the density's breaks (in units of
    /// the largest gap's p-th power for p other than 1 and 2), then the atoms' share.
    /// A paper model (Beta and a SPEC §7 curve) takes [`true_calibration_error`]'s
    /// closed forms where they exist, so it equals [`Model::tce`].
    pub fn tce(&self, p: f64) -> Result<f64, TceError> {
        if !(p.is_finite() && p >= 1.0) {
            return Err(TceError::InvalidExponent(p));
        }
        let continuous = match (&self.density, &self.curve) {
            (ScoreDensity::Beta(beta), CalibrationCurve::Paper(curve)) => {
                true_calibration_error(beta, curve, p)?
            }
            _ => self.continuous_tce_by_quadrature(p)?,
        };
        if self.point_masses.is_none() {
            return Ok(continuous);
        }
        let terms: Vec<(f64, f64)> =
            core::iter::once((self.point_masses.continuous_mass(), continuous))
                .chain(
                    self.point_masses
                        .atoms()
                        .map(|(score, atom)| (atom.mass(), score - atom.accuracy())),
                )
                .collect();
        Ok(lp_of(&terms, p))
    }

    /// (∫ |c − T(c)|^p pdf(c) dc)^(1/p) over (0, 1), by quadrature.
    fn continuous_tce_by_quadrature(&self, p: f64) -> Result<f64, TceError> {
        if self.curve.is_identity() {
            return Ok(0.0);
        }
        let ln_scale = if scales(p) {
            ln_largest_on_grid(|point| self.curve.ln_abs_gap(point))
        } else {
            0.0
        };
        let ln_integrand = |point: &UnitPoint| {
            p * (self.curve.ln_abs_gap(point) - ln_scale) + self.density.ln_pdf_at(point)
        };
        let mut inner = self.curve.quadrature_breaks();
        inner.extend(self.density.quadrature_breaks());
        inner.sort_by(|a, b| a.logit().total_cmp(&b.logit()));
        inner.dedup_by(|a, b| a.logit() == b.logit());
        let mut breaks = vec![UnitPoint::ZERO];
        breaks.extend(inner);
        breaks.push(UnitPoint::ONE);
        let mut total = 0.0;
        for piece in breaks.windows(2) {
            total += match integrate_ln(piece[0], piece[1], ln_integrand) {
                Ok(value) => value,
                // The sums of a piece whose terms span many magnitudes can keep moving in
                // their last digits after they have settled far below what a TCE needs
                // (seen: a relative change of 1e-12 at the finest level, against the
                // quadrature's 1e-13): such a piece is accepted.
                Err(QuadratureError::NotConverged {
                    estimate,
                    relative_change,
                }) if relative_change <= SETTLED => estimate,
                Err(e) => return Err(e.into()),
            };
        }
        Ok(ln_scale.exp() * total.powf(1.0 / p))
    }

    /// n (score, label) pairs drawn as [`Model::sample`] draws them (for a Beta density
    /// and a SPEC §7 curve, the very same pairs), or [`DatasetTooLarge`] before any draw.
    pub fn try_sample<R: Rng + ?Sized>(
        &self,
        n: usize,
        rng: &mut R,
    ) -> Result<(Vec<f64>, Vec<u8>), DatasetTooLarge> {
        let (mut scores, mut labels) = reserve_pairs(n)?;
        let beta = match &self.density {
            ScoreDensity::Beta(beta) => Some(beta.sampler()),
            ScoreDensity::LogitMixture(_) => None,
        };
        let continuous = |rng: &mut R| {
            let score = match (&beta, &self.density) {
                (Some(sampler), _) => rng.sample(sampler),
                (None, ScoreDensity::LogitMixture(mixture)) => mixture.sample(rng),
                // A Beta density always has its sampler.
                (None, ScoreDensity::Beta(beta)) => beta.sample(rng),
            };
            (score, self.curve.eval(score))
        };
        draw_pairs(
            n,
            rng,
            &self.point_masses,
            continuous,
            &mut scores,
            &mut labels,
        );
        Ok((scores, labels))
    }
}

impl Synthetic for FlexibleModel {
    fn try_dataset(
        &self,
        seed: u64,
        rep: u64,
        n: usize,
    ) -> Result<(Vec<f64>, Vec<u8>), DatasetTooLarge> {
        self.try_sample(n, &mut repetition_rng(seed, rep))
    }

    fn tce(&self, p: f64) -> Result<f64, TceError> {
        FlexibleModel::tce(self, p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::logit_mixture::LogitComponent;
    use crate::sim::point_mass::PointMass;

    fn saturating() -> LogitMixture {
        LogitMixture::new(vec![
            LogitComponent::new(0.3, 2.5, 1.2),
            LogitComponent::new(0.7, 9.0, 2.5),
        ])
        .unwrap()
    }

    fn overconfident() -> MonotoneCurve {
        // Slope 0.8 below z = 3, 0.5 above: confidence grows faster than accuracy.
        MonotoneCurve::new(0.2, vec![3.0], vec![0.8, 0.5]).unwrap()
    }

    #[test]
    fn a_paper_model_is_the_same_model() {
        let model = Model::with_point_masses(
            Beta::new(2.8, 0.05).unwrap(),
            Curve::logistic_log_odds(0.3, 0.8).unwrap(),
            PointMasses::at_one(PointMass::new(0.2, 0.97).unwrap()),
        );
        let flexible = FlexibleModel::from(model);
        for p in [1.0, 2.0, 3.0] {
            assert_eq!(flexible.tce(p).unwrap(), model.tce(p).unwrap());
        }
        assert_eq!(
            Synthetic::try_dataset(&flexible, 5, 3, 500).unwrap(),
            model.try_dataset(5, 3, 500).unwrap()
        );
        // Quadrature against the closed forms and the paper's own quadrature.
        let spline = FlexibleModel {
            curve: CalibrationCurve::Monotone(MonotoneCurve::new(0.3, vec![], vec![0.8]).unwrap()),
            ..flexible.clone()
        };
        let by_quadrature = spline.tce(2.0).unwrap();
        assert!(
            (by_quadrature - model.tce(2.0).unwrap()).abs() < 1e-9,
            "{by_quadrature}"
        );
    }

    /// TCE_p by quadrature against the Monte Carlo mean of |c − T(c)|^p over draws of
    /// the model (10^6 draws: the standard error of the mean is printed and bounds the
    /// tolerance).
    #[test]
    fn the_exact_tce_is_the_mean_over_draws() {
        let model = FlexibleModel {
            density: ScoreDensity::LogitMixture(saturating()),
            curve: CalibrationCurve::Monotone(overconfident()),
            point_masses: PointMasses::at_one(PointMass::new(0.15, 0.9).unwrap()),
        };
        let n = 1_000_000;
        let (scores, _) = Synthetic::try_dataset(&model, 11, 0, n).unwrap();
        for p in [1.0, 2.0] {
            let powers: Vec<f64> = scores
                .iter()
                .map(|&c| {
                    let t = if c == 1.0 { 0.9 } else { model.curve.eval(c) };
                    (c - t).abs().powf(p)
                })
                .collect();
            let mean = powers.iter().sum::<f64>() / n as f64;
            let var = powers.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let se = (var / n as f64).sqrt();
            let exact = model.tce(p).unwrap().powf(p);
            assert!(
                (exact - mean).abs() < 5.0 * se,
                "p = {p}: exact {exact}, Monte Carlo {mean} ± {se}"
            );
        }
        // The identity curve is calibrated off the atoms: only the atom's gap is left.
        let calibrated = FlexibleModel {
            curve: CalibrationCurve::Monotone(MonotoneCurve::identity()),
            ..model.clone()
        };
        let atom_only = (0.15f64 * 0.1 * 0.1).sqrt();
        assert!((calibrated.tce(2.0).unwrap() - atom_only).abs() < 1e-15);
    }

    #[test]
    fn the_simulator_runs_on_it() {
        use crate::sim::estimator::EvaluationSettings;
        use crate::sim::{simulate, Grid};
        use crate::{Norm, SweepOptions};
        let model = FlexibleModel {
            density: ScoreDensity::LogitMixture(saturating()),
            curve: CalibrationCurve::Monotone(MonotoneCurve::identity()),
            point_masses: PointMasses::NONE,
        };
        let grid = Grid {
            sizes: vec![2000],
            bins: vec![15],
            estimators: vec!["ece_bin:equal_width".parse().unwrap()],
            repetitions: 50,
            seed: 1,
            settings: EvaluationSettings {
                norm: Norm::L2,
                sweep: SweepOptions::default(),
            },
        };
        let simulation = simulate(&model, &grid, &|| {}).unwrap();
        assert_eq!(simulation.tce, 0.0);
        // Each repetition's value is ECE_bin of that repetition's data set.
        for (rep, &value) in simulation.cells[0].estimates.iter().enumerate().take(5) {
            let (scores, labels) = Synthetic::try_dataset(&model, 1, rep as u64, 2000).unwrap();
            let mut h = crate::InlineHistogram::<15>::new(crate::Closure::Left);
            h.push_batch(&scores, &labels).unwrap();
            let direct = 100.0 * h.ece_bin(Norm::L2).unwrap().value;
            assert!(
                (value - direct).abs() < 1e-12,
                "rep {rep}: {value} vs {direct}"
            );
        }
    }
}
