//! A flexible score density: a mixture of normals in log-odds (issue 36).
//!
//! The score c ∈ (0, 1) has log-odds z = ln(c / (1 − c)) distributed as
//! Σ_k w_k N(μ_k, σ_k²). Saturating softmax outputs spread over z from about 2 to 16
//! (c from 0.88 to 1 − 1e−7), where a Beta density, whose log-density in z is linear in
//! ln c and ln(1 − c), cannot follow them; a few normals in z can.
//!
//! The density in c carries the Jacobian dz/dc = 1 / (c (1 − c)):
//! p(c) = Σ_k w_k φ((z − μ_k)/σ_k) / σ_k · 1 / (c (1 − c)),
//! computed in logarithms from a [`UnitPoint`] so that it stays finite and accurate within
//! 1e−300 of either endpoint. It vanishes at both endpoints (faster than any power of
//! 1 − c), so it has no atoms: exact 0s and 1s are the [`super::point_mass`] atoms' job.
//!
//! [`LogitMixture`] mirrors [`super::Beta`]'s methods (`ln_pdf_at`, `pdf`, `sample`,
//! `mean`) so that it can stand where a Beta stands.

use core::f64::consts::{LN_2, PI, SQRT_2};
use core::fmt;

use rand::Rng;
use rand_distr::StandardNormal;

use super::unit_point::{sigmoid, UnitPoint};

/// The weights given to [`LogitMixture::new`] must sum to 1 within this; they are then
/// divided by their sum, so that the stored weights sum to 1 to rounding.
pub const WEIGHT_SUM_TOLERANCE: f64 = 1e-9;

/// Above this log-odds, `1 / (1 + e^−z)` rounds to exactly 1.0 in f64: e^−z < 2^−53
/// makes 1 + e^−z round to 1. It is 53 ln 2 ≈ 36.7368.
pub const LOGIT_ROUNDING_TO_ONE: f64 = 53.0 * LN_2;

/// The largest standard deviation a component may have, in log-odds. A wider normal
/// puts most of its mass beyond ±745, where c is 0 or 1 in f64, so it describes no
/// score density; and [`LogitMixture::mean`]'s trapezoid needs about 25·σ steps
/// (200 000 at this bound, a few milliseconds). A fit's σ cannot exceed half the range of
/// the data's log-odds, under 400.
pub const MAX_SD: f64 = 1e3;

/// ½ ln(2π), the log normalising constant of the standard normal.
const HALF_LN_TWO_PI: f64 = 0.918_938_533_204_672_8;

/// One normal of the mixture, in log-odds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogitComponent {
    /// Its weight w_k > 0.
    pub weight: f64,
    /// Its mean μ_k in log-odds.
    pub mean: f64,
    /// Its standard deviation σ_k > 0 in log-odds.
    pub sd: f64,
}

impl LogitComponent {
    /// A component (validated only inside [`LogitMixture::new`]).
    pub fn new(weight: f64, mean: f64, sd: f64) -> LogitComponent {
        LogitComponent { weight, mean, sd }
    }
}

/// Why mixture parameters were refused.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LogitMixtureError {
    /// No components.
    Empty,
    /// A weight is not finite and > 0 (component index, value).
    InvalidWeight(usize, f64),
    /// A mean is not finite (component index, value).
    InvalidMean(usize, f64),
    /// A standard deviation is not in (0, [`MAX_SD`]] (component index, value).
    InvalidSd(usize, f64),
    /// The weights do not sum to 1 within [`WEIGHT_SUM_TOLERANCE`] (their sum).
    WeightsDoNotSumToOne(f64),
}

impl fmt::Display for LogitMixtureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Empty => f.write_str("a log-odds mixture needs at least one component"),
            Self::InvalidWeight(k, w) => {
                write!(f, "component {k}: weight must be finite and > 0, got {w}")
            }
            Self::InvalidMean(k, m) => write!(f, "component {k}: mean must be finite, got {m}"),
            Self::InvalidSd(k, s) => write!(
                f,
                "component {k}: standard deviation must be > 0 and at most {MAX_SD}, got {s}"
            ),
            Self::WeightsDoNotSumToOne(sum) => write!(
                f,
                "mixture weights must sum to 1 (within {WEIGHT_SUM_TOLERANCE:e}), they sum to {sum}"
            ),
        }
    }
}

impl std::error::Error for LogitMixtureError {}

/// The density of c ∈ (0, 1) whose log-odds follow a mixture of normals (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct LogitMixture {
    components: Vec<LogitComponent>,
    /// ln w_k − ln σ_k − ½ ln 2π, the constant part of each component's log-density in z.
    ln_scale: Vec<f64>,
    /// Running sums of the weights, for drawing a component; the last is 1 exactly.
    cumulative: Vec<f64>,
}

impl LogitMixture {
    /// A mixture of the given components.
    ///
    /// Every weight must be finite and > 0, every mean finite, every sd in (0, [`MAX_SD`]],
    /// and the weights must sum to 1 within [`WEIGHT_SUM_TOLERANCE`]: a sum further off is
    /// refused (it is more likely a mistake than rounding), a sum within it is divided
    /// out so the stored weights sum to 1 to rounding. Components are kept in the given
    /// order.
    pub fn new(components: Vec<LogitComponent>) -> Result<LogitMixture, LogitMixtureError> {
        if components.is_empty() {
            return Err(LogitMixtureError::Empty);
        }
        for (k, c) in components.iter().enumerate() {
            if !(c.weight.is_finite() && c.weight > 0.0) {
                return Err(LogitMixtureError::InvalidWeight(k, c.weight));
            }
            if !c.mean.is_finite() {
                return Err(LogitMixtureError::InvalidMean(k, c.mean));
            }
            if c.sd.is_nan() || c.sd <= 0.0 || c.sd > MAX_SD {
                return Err(LogitMixtureError::InvalidSd(k, c.sd));
            }
        }
        let sum: f64 = components.iter().map(|c| c.weight).sum();
        // The sum of finite weights may still overflow to +∞, which this refuses.
        if sum.is_nan() || (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
            return Err(LogitMixtureError::WeightsDoNotSumToOne(sum));
        }
        let components: Vec<LogitComponent> = components
            .into_iter()
            .map(|c| LogitComponent {
                weight: c.weight / sum,
                ..c
            })
            .collect();
        let ln_scale = components
            .iter()
            .map(|c| c.weight.ln() - c.sd.ln() - HALF_LN_TWO_PI)
            .collect();
        let mut cumulative: Vec<f64> = components
            .iter()
            .scan(0.0, |total, c| {
                *total += c.weight;
                Some(*total)
            })
            .collect();
        // So that a uniform draw in [0, 1) always finds a component.
        if let Some(last) = cumulative.last_mut() {
            *last = 1.0;
        }
        Ok(LogitMixture {
            components,
            ln_scale,
            cumulative,
        })
    }

    /// The components, weights summing to 1.
    pub fn components(&self) -> &[LogitComponent] {
        &self.components
    }

    /// The number of components K.
    pub fn len(&self) -> usize {
        self.components.len()
    }

    /// Never true: a mixture has at least one component.
    pub fn is_empty(&self) -> bool {
        self.components.is_empty()
    }

    /// The number of free parameters, 3K − 1 (weights sum to 1), for information criteria.
    pub fn parameter_count(&self) -> usize {
        3 * self.components.len() - 1
    }

    /// ln of the density of z = ln(c/(1 − c)) at a finite z: log-sum-exp over the
    /// components, so it stays finite however far z is in the tails.
    pub fn ln_pdf_logit(&self, z: f64) -> f64 {
        let mut largest = f64::NEG_INFINITY;
        for (c, &ln_scale) in self.components.iter().zip(&self.ln_scale) {
            let t = (z - c.mean) / c.sd;
            largest = largest.max(ln_scale - 0.5 * t * t);
        }
        if !largest.is_finite() {
            // z = ±∞ (an endpoint) or NaN: no density, or none defined.
            return if z.is_nan() { f64::NAN } else { largest };
        }
        let sum: f64 = self
            .components
            .iter()
            .zip(&self.ln_scale)
            .map(|(c, &ln_scale)| {
                let t = (z - c.mean) / c.sd;
                (ln_scale - 0.5 * t * t - largest).exp()
            })
            .sum();
        largest + sum.ln()
    }

    /// ln of the density in c at a point given with its logarithms (see [`UnitPoint`]):
    /// ln Σ w_k φ((z − μ_k)/σ_k)/σ_k − ln c − ln(1 − c), with z = ln c − ln(1 − c). Finite
    /// for every point strictly inside (0, 1), including within 1e−300 of an endpoint
    /// (where the Gaussian term dominates: −z²/(2σ²) against the Jacobian's +|z|);
    /// −∞ at the endpoints themselves.
    pub fn ln_pdf_at(&self, point: &UnitPoint) -> f64 {
        let z = point.logit();
        if z.is_infinite() {
            return f64::NEG_INFINITY;
        }
        self.ln_pdf_logit(z) - point.ln_x - point.ln_one_minus_x
    }

    /// The density at x: 0 outside (0, 1) and at the endpoints.
    pub fn pdf(&self, x: f64) -> f64 {
        if !(x > 0.0 && x < 1.0) {
            return 0.0;
        }
        self.ln_pdf_at(&UnitPoint::from_x(x)).exp()
    }

    /// P(C ≤ x) = Σ w_k Φ((logit x − μ_k)/σ_k); 0 below 0 (and at 0), 1 from 1 on.
    pub fn cdf(&self, x: f64) -> f64 {
        if x.is_nan() {
            return f64::NAN;
        }
        if x <= 0.0 {
            return 0.0;
        }
        if x >= 1.0 {
            return 1.0;
        }
        self.cdf_logit(UnitPoint::from_x(x).logit())
    }

    /// P(Z ≤ z) for the log-odds Z.
    pub fn cdf_logit(&self, z: f64) -> f64 {
        let total: f64 = self
            .components
            .iter()
            .map(|c| c.weight * standard_normal_cdf((z - c.mean) / c.sd))
            .sum();
        total.min(1.0)
    }

    /// One draw of the log-odds z: a component by its weight, then a normal.
    pub fn sample_logit<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let u: f64 = rng.gen();
        // The first component whose running weight exceeds u; the last is 1 > u.
        let k = self.cumulative.partition_point(|&total| total <= u);
        let c = &self.components[k.min(self.components.len() - 1)];
        let n: f64 = rng.sample(StandardNormal);
        c.mean + c.sd * n
    }

    /// One draw as a point carrying 1 − c and both logarithms to full precision, even
    /// where c itself rounds to 1.0 (see [`UnitPoint::from_logit`]).
    pub fn sample_point<R: Rng + ?Sized>(&self, rng: &mut R) -> UnitPoint {
        UnitPoint::from_logit(self.sample_logit(rng))
    }

    /// One draw c = σ(z), computed as [`sigmoid`] does: 1/(1 + e^−z) for z ≥ 0, so that c
    /// near 1 is the nearest double to σ(z), not 1 − (a rounded 1 − c).
    ///
    /// For z > [`LOGIT_ROUNDING_TO_ONE`] (≈ 36.74, 1 − c ≤ 1.1e−16) the f64 draw is exactly
    /// 1.0, with probability [`LogitMixture::share_sampled_as_one`]: such a draw looks like
    /// the atom at 1, though it is continuous mass. For fits of float32 confidences the
    /// largest log-odds is 16.6, so the share is negligible unless a component reaches
    /// far above the data; callers that need 1 − c use [`LogitMixture::sample_point`].
    /// (Below z ≈ −745 the draw underflows to 0.0, likewise.)
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        sigmoid(self.sample_logit(rng))
    }

    /// The probability that [`LogitMixture::sample`] returns exactly 1.0:
    /// P(Z > [`LOGIT_ROUNDING_TO_ONE`]).
    pub fn share_sampled_as_one(&self) -> f64 {
        self.components
            .iter()
            .map(|c| c.weight * standard_normal_cdf(-(LOGIT_ROUNDING_TO_ONE - c.mean) / c.sd))
            .sum()
    }

    /// The mean E[σ(Z)].
    ///
    /// Per component, E[σ(μ + σ t)] for t ~ N(0, 1) by the trapezoidal rule in t over
    /// [−39, 39] (φ(39) < e^−760, nothing beyond matters). The integrand is analytic in
    /// the strip |Im t| < π/σ (σ's poles are at z = ±iπ), so the rule's relative error is
    /// about e^(−2π·(π/σ)/h); the step h = min(1/4, π/(8σ)) makes that e^(−16π) < 1e−21.
    /// Tests check it against tanh-sinh quadrature of c·p(c) and against Monte Carlo.
    pub fn mean(&self) -> f64 {
        self.components
            .iter()
            .map(|c| c.weight * normal_expectation(c.mean, c.sd, sigmoid))
            .sum()
    }

    /// Points of (0, 1) at which integrators of this density should split (0, 1)
    /// (as well as where a calibration curve crosses the diagonal): σ(μ_k + j σ_k) for
    /// j = −[`BREAKS_PER_SIDE`]..=[`BREAKS_PER_SIDE`] and every component, ascending and
    /// distinct.
    ///
    /// tanh-sinh quadrature ([`super::quadrature::integrate_ln`]) scans outwards from the
    /// middle of its interval (in c) and stops where the terms have become negligible
    /// against the largest seen; over an interval whose middle lies many σ from every
    /// component (σ(0)..σ(8) with σ = 0.1 components at both ends), it stops in the
    /// valley and misses the components. Between consecutive breaks, every component
    /// whose ±8σ range meets the piece is at most one σ_k long there, so no term varies
    /// by more than e^8.5 across a piece; the mass outside all the ranges is below
    /// 1.3e−15 (P(|t| > 8) for a standard normal).
    pub fn quadrature_breaks(&self) -> Vec<UnitPoint> {
        let side = BREAKS_PER_SIDE as i32;
        let mut z: Vec<f64> = self
            .components
            .iter()
            .flat_map(|c| (-side..=side).map(move |j| c.mean + f64::from(j) * c.sd))
            .collect();
        z.sort_by(f64::total_cmp);
        z.dedup();
        z.into_iter().map(UnitPoint::from_logit).collect()
    }
}

/// [`LogitMixture::quadrature_breaks`] puts this many breaks on each side of a
/// component's mean, one σ apart.
pub const BREAKS_PER_SIDE: usize = 8;

/// Φ(t), accurate (relatively) in the lower tail: ½ erfc(−t/√2).
pub(crate) fn standard_normal_cdf(t: f64) -> f64 {
    0.5 * libm::erfc(-t / SQRT_2)
}

/// E[g(μ + σ t)], t ~ N(0, 1), by the trapezoidal rule of [`LogitMixture::mean`] (for g
/// analytic in the strip |Im z| < π and bounded, as σ is).
fn normal_expectation(mean: f64, sd: f64, g: impl Fn(f64) -> f64) -> f64 {
    const HALF_RANGE: f64 = 39.0;
    let step = (PI / (8.0 * sd)).min(0.25);
    let steps = (HALF_RANGE / step).ceil() as i64;
    let mut total = 0.0;
    for i in -steps..=steps {
        let t = i as f64 * step;
        total += g(mean + sd * t) * (-0.5 * t * t - HALF_LN_TWO_PI).exp();
    }
    total * step
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::quadrature::integrate_ln;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn mixture(parts: &[(f64, f64, f64)]) -> LogitMixture {
        LogitMixture::new(
            parts
                .iter()
                .map(|&(w, m, s)| LogitComponent::new(w, m, s))
                .collect(),
        )
        .unwrap()
    }

    /// Mixtures the tests run on: one normal; two overlapping; a saturating one with a
    /// component at z = 12 (c ≈ 1 − 6e−6), shaped like the CIFAR-10 fits; a narrow and
    /// a wide one far apart.
    fn cases() -> Vec<LogitMixture> {
        vec![
            mixture(&[(1.0, 0.0, 1.0)]),
            mixture(&[(0.3, -1.0, 0.7), (0.7, 1.5, 1.2)]),
            mixture(&[(0.2, 2.0, 1.5), (0.3, 7.0, 2.0), (0.5, 12.0, 1.0)]),
            mixture(&[(0.1, -20.0, 0.2), (0.9, 25.0, 5.0)]),
        ]
    }

    fn integrate_density(m: &LogitMixture, ln_g: impl Fn(&UnitPoint) -> f64) -> f64 {
        let mut points = vec![UnitPoint::ZERO];
        points.extend(m.quadrature_breaks());
        points.push(UnitPoint::ONE);
        points
            .windows(2)
            .map(|w| integrate_ln(w[0], w[1], |p| m.ln_pdf_at(p) + ln_g(p)).unwrap())
            .sum()
    }

    #[test]
    fn refuses_bad_parameters() {
        use LogitMixtureError::*;
        let c = LogitComponent::new;
        assert_eq!(LogitMixture::new(vec![]), Err(Empty));
        assert_eq!(
            LogitMixture::new(vec![c(0.0, 0.0, 1.0), c(1.0, 0.0, 1.0)]),
            Err(InvalidWeight(0, 0.0))
        );
        assert!(matches!(
            LogitMixture::new(vec![c(f64::NAN, 0.0, 1.0)]),
            Err(InvalidWeight(0, _))
        ));
        assert_eq!(
            LogitMixture::new(vec![c(1.0, f64::INFINITY, 1.0)]),
            Err(InvalidMean(0, f64::INFINITY))
        );
        assert_eq!(
            LogitMixture::new(vec![c(0.5, 0.0, 1.0), c(0.5, 0.0, -1.0)]),
            Err(InvalidSd(1, -1.0))
        );
        assert_eq!(
            LogitMixture::new(vec![c(0.3, 0.0, 1.0), c(0.3, 1.0, 1.0)]),
            Err(WeightsDoNotSumToOne(0.6))
        );
        assert_eq!(
            LogitMixture::new(vec![c(1.0, 0.0, 1001.0)]),
            Err(InvalidSd(0, 1001.0))
        );
        assert!(matches!(
            LogitMixture::new(vec![c(1.0, 0.0, f64::NAN)]),
            Err(InvalidSd(0, _))
        ));
        // At the bound the mean is still computed: 1/2 by symmetry at μ = 0, and about
        // Φ(μ/σ) (up to O(1/σ²)) elsewhere.
        let widest = LogitMixture::new(vec![c(1.0, 0.0, MAX_SD)]).unwrap();
        assert!((widest.mean() - 0.5).abs() < 1e-12, "{}", widest.mean());
        let shifted = LogitMixture::new(vec![c(1.0, 500.0, MAX_SD)]).unwrap();
        assert!((shifted.mean() - standard_normal_cdf(0.5)).abs() < 1e-6);
        // Rounding-sized deviations are divided out.
        let m = LogitMixture::new(vec![c(0.3, 0.0, 1.0), c(0.7 + 1e-12, 1.0, 1.0)]).unwrap();
        let sum: f64 = m.components().iter().map(|c| c.weight).sum();
        assert!((sum - 1.0).abs() <= 2.0 * f64::EPSILON);
        assert_eq!(m.parameter_count(), 5);
    }

    #[test]
    fn density_integrates_to_one() {
        for m in cases() {
            let total = integrate_density(&m, |_| 0.0);
            assert!((total - 1.0).abs() < 1e-10, "{m:?}: {total}");
        }
        // Without the breaks, over (0, 1) in one piece, for the moderate mixtures.
        for m in &cases()[..3] {
            let total = integrate_ln(UnitPoint::ZERO, UnitPoint::ONE, |p| m.ln_pdf_at(p)).unwrap();
            assert!((total - 1.0).abs() < 1e-10, "{m:?}: {total}");
        }
    }

    #[test]
    fn ln_pdf_matches_the_naive_formula_and_stays_finite_at_the_ends() {
        for m in cases() {
            for i in 1..100 {
                let x = f64::from(i) / 100.0;
                let z = (x / (1.0 - x)).ln();
                let naive: f64 = m
                    .components()
                    .iter()
                    .map(|c| {
                        let t = (z - c.mean) / c.sd;
                        c.weight * (-0.5 * t * t).exp() / (c.sd * (2.0 * PI).sqrt())
                    })
                    .sum::<f64>()
                    / (x * (1.0 - x));
                let ours = m.pdf(x);
                if naive > 1e-250 {
                    assert!(
                        ((ours - naive) / naive).abs() < 1e-12,
                        "x {x}: {ours} vs {naive}"
                    );
                }
            }
            // Within 1e−300 of either end (and further, through the logarithms alone).
            for q in [-1e-300f64.ln(), 700.0, 2000.0] {
                let near_one = UnitPoint::from_ln_one_minus_x(-q);
                let near_zero = near_one.complement();
                for p in [near_one, near_zero] {
                    let v = m.ln_pdf_at(&p);
                    assert!(v.is_finite() && v < 0.0, "{m:?} at ln distance {q}: {v}");
                }
            }
            assert_eq!(m.ln_pdf_at(&UnitPoint::ONE), f64::NEG_INFINITY);
            assert_eq!(m.ln_pdf_at(&UnitPoint::ZERO), f64::NEG_INFINITY);
            assert_eq!(
                (m.pdf(0.0), m.pdf(1.0), m.pdf(-0.5), m.pdf(1.5)),
                (0.0, 0.0, 0.0, 0.0)
            );
        }
    }

    #[test]
    fn the_cdf_is_the_integral_of_the_density() {
        for m in cases() {
            for x in [0.1, 0.5, 0.9, 0.999, 1.0 - 1e-6] {
                let point = UnitPoint::from_x(x);
                let integral = integrate_ln(UnitPoint::ZERO, point, |p| m.ln_pdf_at(p)).unwrap();
                assert!(
                    (integral - m.cdf(x)).abs() < 1e-10,
                    "{x}: {integral} vs {}",
                    m.cdf(x)
                );
            }
            assert_eq!((m.cdf(0.0), m.cdf(1.0), m.cdf(-1.0)), (0.0, 1.0, 0.0));
        }
    }

    /// Kolmogorov–Smirnov at level 0.001: the 1 − 0.001 quantile of √n·D is 1.9495
    /// (Kolmogorov's limiting distribution; n = 10^5 is far into the limit). With a fixed
    /// seed the test is deterministic; the level is the chance a correct sampler would
    /// have failed it on a fresh seed.
    #[test]
    fn sampling_matches_the_cdf() {
        const CRITICAL: f64 = 1.9495;
        let n = 100_000;
        for (case, m) in cases().into_iter().enumerate() {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(36 + case as u64);
            // In log-odds, so that draws near 1 stay distinct.
            let mut z: Vec<f64> = (0..n).map(|_| m.sample_logit(&mut rng)).collect();
            z.sort_by(f64::total_cmp);
            let mut d: f64 = 0.0;
            for (i, &zi) in z.iter().enumerate() {
                let f = m.cdf_logit(zi);
                d = d.max((f - i as f64 / n as f64).abs());
                d = d.max(((i + 1) as f64 / n as f64 - f).abs());
            }
            let statistic = (n as f64).sqrt() * d;
            assert!(statistic < CRITICAL, "case {case}: sqrt(n) D = {statistic}");
            // And through sample(): the f64 draws against cdf(x).
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(136 + case as u64);
            let mut x: Vec<f64> = (0..n).map(|_| m.sample(&mut rng)).collect();
            x.sort_by(f64::total_cmp);
            let mut d: f64 = 0.0;
            for (i, &xi) in x.iter().enumerate() {
                let f = m.cdf(xi);
                if xi < 1.0 {
                    d = d.max((f - i as f64 / n as f64).abs());
                    d = d.max(((i + 1) as f64 / n as f64 - f).abs());
                }
            }
            let statistic = (n as f64).sqrt() * d;
            assert!(
                statistic < CRITICAL,
                "case {case} in c: sqrt(n) D = {statistic}"
            );
        }
    }

    /// The KS test above has power: draws from case 2 with its saturating component
    /// moved from z = 12 to 12.05 fail it (the cdfs differ by up to 0.5·0.05·φ(0) ≈ 0.01,
    /// √n·D ≈ 3 against the critical 1.95).
    #[test]
    fn the_sampling_test_detects_a_small_shift() {
        let n = 100_000;
        let truth = &cases()[2];
        let shifted = mixture(&[(0.2, 2.0, 1.5), (0.3, 7.0, 2.0), (0.5, 12.05, 1.0)]);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(38);
        let mut z: Vec<f64> = (0..n).map(|_| shifted.sample_logit(&mut rng)).collect();
        z.sort_by(f64::total_cmp);
        let d = z
            .iter()
            .enumerate()
            .map(|(i, &zi)| {
                let f = truth.cdf_logit(zi);
                (f - i as f64 / n as f64)
                    .abs()
                    .max(((i + 1) as f64 / n as f64 - f).abs())
            })
            .fold(0.0, f64::max);
        assert!(
            (n as f64).sqrt() * d > 1.9495,
            "sqrt(n) D = {}",
            (n as f64).sqrt() * d
        );
    }

    #[test]
    fn the_mean_by_three_methods() {
        for (case, m) in cases().into_iter().enumerate() {
            let by_trapezoid = m.mean();
            let by_quadrature = integrate_density(&m, |p| p.ln_x);
            assert!(
                (by_trapezoid - by_quadrature).abs() < 1e-12,
                "{case}: {by_trapezoid} vs {by_quadrature}"
            );
            // Monte Carlo: 10^5 draws, within 5 standard errors.
            let n = 100_000;
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(7 + case as u64);
            let draws: Vec<f64> = (0..n).map(|_| m.sample(&mut rng)).collect();
            let mc = draws.iter().sum::<f64>() / n as f64;
            let var = draws.iter().map(|x| (x - mc) * (x - mc)).sum::<f64>() / (n - 1) as f64;
            let se = (var / n as f64).sqrt();
            assert!(
                (mc - by_trapezoid).abs() < 5.0 * se + 1e-15,
                "{case}: {mc} vs {by_trapezoid}"
            );
        }
        // A single wide component: the trapezoid's step shrinks with σ.
        let wide = mixture(&[(1.0, 0.5, 30.0)]);
        let q = integrate_density(&wide, |p| p.ln_x);
        assert!((wide.mean() - q).abs() < 1e-12, "{} vs {q}", wide.mean());
    }

    #[test]
    fn draws_above_the_rounding_threshold_are_exactly_one() {
        // At the threshold itself e^−z rounds a hair above 2^−53; just past it, 1.0.
        assert_eq!(sigmoid(LOGIT_ROUNDING_TO_ONE + 1e-12), 1.0);
        assert!(sigmoid(LOGIT_ROUNDING_TO_ONE - 1e-12) < 1.0);
        let m = mixture(&[(0.5, 0.0, 1.0), (0.5, LOGIT_ROUNDING_TO_ONE, 1.0)]);
        assert!((m.share_sampled_as_one() - 0.25).abs() < 1e-12);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let n = 100_000;
        let ones = (0..n).filter(|_| m.sample(&mut rng) == 1.0).count() as f64 / n as f64;
        // Binomial standard error sqrt(0.25·0.75/n) ≈ 0.0014; 5 of them.
        assert!((ones - 0.25).abs() < 0.007, "{ones}");
        // The point keeps 1 − c where c has rounded to 1.
        let p = m.sample_point(&mut Xoshiro256PlusPlus::seed_from_u64(3));
        assert!(p.one_minus_x > 0.0 && p.x > 0.0);
        // Case 2's highest component, N(12, 1), is 24.7σ below it: P ≈ 1e−135.
        assert!(cases()[2].share_sampled_as_one() < 1e-40);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(48))]

            /// Any two-component mixture integrates to 1 and its cdf is monotone.
            #[test]
            fn any_mixture_integrates_to_one(
                w in 0.01f64..0.99,
                m1 in -30.0f64..30.0,
                m2 in -30.0f64..30.0,
                s1 in 0.02f64..5.0,
                s2 in 0.02f64..5.0,
            ) {
                let m = mixture(&[(w, m1, s1), (1.0 - w, m2, s2)]);
                let total = integrate_density(&m, |_| 0.0);
                prop_assert!((total - 1.0).abs() < 1e-9, "{total}");
                let mut last = 0.0;
                for i in 0..=200 {
                    let f = m.cdf_logit(-40.0 + 0.4 * f64::from(i));
                    prop_assert!(f >= last);
                    last = f;
                }
            }
        }
    }
}
