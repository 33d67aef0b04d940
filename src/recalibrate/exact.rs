//! The exact TCE of a simulator model after recalibration.
//!
//! Recalibrating a model (scores C ~ Beta, P(Y = 1 | C = c) = T(c)) by a map g gives a
//! model whose confidence is g(C):
//!
//! - g continuous and strictly monotone: g(C) determines C, so the accuracy at
//!   confidence g(c) is still T(c) and TCE_p^p = E|g(C) − T(C)|^p, integrated by the
//!   simulator's tanh-sinh quadrature, split where g crosses T;
//! - g constant on pieces: every c in piece k gets confidence g_k, whose accuracy is
//!   E[T(C) | C in piece k], so TCE_p^p = Σ_k P(piece k)·|g_k − E[T | piece k]|^p, each
//!   probability and conditional mean integrated per piece. (Two pieces with the same
//!   value would have to be merged first; fitted maps never repeat a value on adjacent
//!   pieces except histogram bins, where equal values are a measure-zero coincidence.)

use super::{PiecewiseConstant, RecalibrationMap};
use crate::sim::quadrature::{integrate_ln, QuadratureError};
use crate::sim::unit_point::UnitPoint;
use crate::sim::{Curve, Model, TceError};

/// Log-odds range scanned for crossings of g and T; beyond ±40 both are within e^−40 of
/// an endpoint and a kink there does not disturb the quadrature.
const CROSSING_SCAN: (f64, f64, usize) = (-40.0, 40.0, 1600);

/// A quadrature that stops short of the simulator's 1e−13 agreement but within this
/// relative change is accepted: its value is then accurate to far better than any TCE
/// needs. It happens on pieces of negligible mass (1e−70) far out in a Beta tail.
const ACCEPTED_RELATIVE_CHANGE: f64 = 1e-9;

/// [`integrate_ln`] with the relaxed acceptance above.
fn integrate<F: Fn(&UnitPoint) -> f64>(
    lo: UnitPoint,
    hi: UnitPoint,
    ln_f: F,
) -> Result<f64, TceError> {
    match integrate_ln(lo, hi, ln_f) {
        Ok(value) => Ok(value),
        Err(QuadratureError::NotConverged {
            estimate,
            relative_change,
        }) if relative_change <= ACCEPTED_RELATIVE_CHANGE => Ok(estimate),
        Err(e) => Err(e.into()),
    }
}

fn check_exponent(p: f64) -> Result<(), TceError> {
    if p.is_finite() && p >= 1.0 {
        Ok(())
    } else {
        Err(TceError::InvalidExponent(p))
    }
}

/// TCE_p (fraction) of `model` with its confidences passed through `map`.
pub fn recalibrated_tce(model: &Model, map: &RecalibrationMap, p: f64) -> Result<f64, TceError> {
    check_exponent(p)?;
    match map {
        RecalibrationMap::Piecewise(pieces) => piecewise_tce(model, pieces, p),
        RecalibrationMap::Monotone(g) => monotone_tce(model, g, p),
    }
}

/// Σ_k P_k · |g_k − E[T | piece k]|^p, then the p-th root.
fn piecewise_tce(model: &Model, map: &PiecewiseConstant, p: f64) -> Result<f64, TceError> {
    let density = &model.density;
    let curve = &model.curve;
    let mut total = 0.0;
    for (k, &value) in map.values.iter().enumerate() {
        let (lo, hi) = map.interval(k);
        let mass = integrate(lo, hi, |x| density.ln_pdf_at(x))?;
        if mass <= 0.0 {
            continue;
        }
        let hits = integrate(lo, hi, |x| curve.eval_at(x).ln() + density.ln_pdf_at(x))?;
        let accuracy = hits / mass;
        total += mass * (value - accuracy).abs().powf(p);
    }
    Ok(total.powf(1.0 / p))
}

/// (∫ |g − T|^p pdf)^(1/p), split at the crossings of g and T.
fn monotone_tce(model: &Model, g: &Curve, p: f64) -> Result<f64, TceError> {
    let density = &model.density;
    let curve = &model.curve;
    if g.params().b == Some(0.0) {
        // A constant map: one piece.
        let whole = PiecewiseConstant {
            pieces: super::Pieces::Starts(vec![0.0]),
            values: vec![g.eval(0.5)],
        };
        return piecewise_tce(model, &whole, p);
    }
    // g − T = (c − T) − (c − g), each difference from the curves' cancellation-free
    // ln|c − T(c)|: near c = 1, where Beta densities with β ≪ 1 put most of their mass,
    // g and T are both within 1e−16 of 1 and g(c) − T(c) formed directly is pure rounding.
    let (from_t, from_g) = (SignedGap::new(curve), SignedGap::new(g));
    let gap = |x: &UnitPoint| from_t.at(x) - from_g.at(x);
    let mut breaks = vec![UnitPoint::ZERO];
    breaks.extend(crossings(gap));
    breaks.push(UnitPoint::ONE);
    let mut total = 0.0;
    for piece in breaks.windows(2) {
        total += integrate(piece[0], piece[1], |x| {
            p * gap(x).abs().ln() + density.ln_pdf_at(x)
        })?;
    }
    Ok(total.powf(1.0 / p))
}

/// c − T(c) with its sign: the magnitude from [`Curve::ln_abs_gap`], the sign constant
/// between the curve's diagonal crossings and read off once per stretch where the
/// difference is large.
struct SignedGap<'a> {
    curve: &'a Curve,
    /// Log-odds of the crossings, increasing.
    crossings: Vec<f64>,
    /// The sign on each stretch between crossings (one more than crossings).
    signs: Vec<f64>,
}

impl<'a> SignedGap<'a> {
    fn new(curve: &'a Curve) -> SignedGap<'a> {
        let crossings: Vec<f64> = curve
            .diagonal_crossings()
            .iter()
            .map(|p| p.logit())
            .collect();
        let (lo, hi, _) = CROSSING_SCAN;
        let mut ends = vec![lo.min(crossings.first().copied().unwrap_or(lo) - 1.0)];
        ends.extend(&crossings);
        ends.push(hi.max(crossings.last().copied().unwrap_or(hi) + 1.0));
        let signs = ends
            .windows(2)
            .map(|w| {
                let point = UnitPoint::from_logit(0.5 * (w[0] + w[1]));
                let difference = point.x - curve.eval_at(&point);
                if difference < 0.0 {
                    -1.0
                } else {
                    1.0
                }
            })
            .collect();
        SignedGap {
            curve,
            crossings,
            signs,
        }
    }

    fn at(&self, x: &UnitPoint) -> f64 {
        let stretch = self.crossings.partition_point(|&l| l < x.logit());
        self.signs[stretch] * self.curve.ln_abs_gap(x).exp()
    }
}

/// Sign changes of `gap` on a log-odds grid, each refined by bisection.
fn crossings<F: Fn(&UnitPoint) -> f64>(gap: F) -> Vec<UnitPoint> {
    let (lo, hi, steps) = CROSSING_SCAN;
    let at = |l: f64| gap(&UnitPoint::from_logit(l));
    let mut found = Vec::new();
    let mut previous = (lo, at(lo));
    for i in 1..=steps {
        let l = lo + (hi - lo) * i as f64 / steps as f64;
        let value = at(l);
        if value == 0.0 {
            // A crossing on the grid itself (σ(b·logit c) and σ(a(c − ½)) meet at ½).
            found.push(UnitPoint::from_logit(l));
        } else if (previous.1 < 0.0 && value > 0.0) || (previous.1 > 0.0 && value < 0.0) {
            let (mut a, mut b) = (previous.0, l);
            let negative_at_a = previous.1 < 0.0;
            for _ in 0..80 {
                let mid = 0.5 * (a + b);
                if (at(mid) < 0.0) == negative_at_a {
                    a = mid;
                } else {
                    b = mid;
                }
            }
            found.push(UnitPoint::from_logit(0.5 * (a + b)));
        }
        previous = (l, value);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recalibrate::Method;
    use crate::sim::Beta;

    /// The same quantity from a large sample: per piece, the sample share and the mean of
    /// T over the sample's scores; for a continuous map, the sample mean of |g − T|^p.
    fn monte_carlo(model: &Model, map: &RecalibrationMap, p: f64, n: usize) -> f64 {
        let (scores, _) = model.dataset(77, 0, n);
        match map {
            RecalibrationMap::Piecewise(pieces) => {
                let mut count = vec![0.0; pieces.len()];
                let mut accuracy = vec![0.0; pieces.len()];
                for &c in &scores {
                    let k = pieces.piece(c);
                    count[k] += 1.0;
                    accuracy[k] += model.curve.eval(c);
                }
                let total: f64 = (0..pieces.len())
                    .filter(|&k| count[k] > 0.0)
                    .map(|k| {
                        count[k] / n as f64
                            * (pieces.values[k] - accuracy[k] / count[k]).abs().powf(p)
                    })
                    .sum();
                total.powf(1.0 / p)
            }
            RecalibrationMap::Monotone(g) => {
                let total: f64 = scores
                    .iter()
                    .map(|&c| (g.eval(c) - model.curve.eval(c)).abs().powf(p))
                    .sum();
                (total / n as f64).powf(1.0 / p)
            }
        }
    }

    #[test]
    fn exact_tce_after_recalibration_agrees_with_monte_carlo() {
        let models = [
            Model::new(
                Beta::new(1.1, 0.1).unwrap(),
                Curve::polynomial(2.0).unwrap(),
            ),
            Model::new(
                Beta::new(2.8, 0.05).unwrap(),
                Curve::logistic_log_odds(-0.4, 0.6).unwrap(),
            ),
            Model::new(
                Beta::new(2.0, 3.0).unwrap(),
                Curve::logistic(8.0, 0.5).unwrap(),
            ),
        ];
        for model in &models {
            let (scores, labels) = model.dataset(1, 0, 2_000);
            for method in Method::ALL {
                let map = method.fit(&scores, &labels).unwrap();
                for p in [1.0, 2.0] {
                    let exact = recalibrated_tce(model, &map, p).unwrap();
                    let sampled = monte_carlo(model, &map, p, 2_000_000);
                    // Monte Carlo error of a mean over 2e6 draws: well below 1% here.
                    assert!(
                        (exact - sampled).abs() <= 0.01 * exact + 2e-4,
                        "{:?} {method} p={p}: exact {exact} vs MC {sampled}",
                        model.curve
                    );
                }
            }
        }
    }

    #[test]
    fn the_identity_map_gives_the_model_tce() {
        let model = Model::new(
            Beta::new(1.1, 0.1).unwrap(),
            Curve::polynomial(2.0).unwrap(),
        );
        let identity = RecalibrationMap::Monotone(Curve::logistic_log_odds(0.0, 1.0).unwrap());
        let tce = recalibrated_tce(&model, &identity, 2.0).unwrap();
        assert!((100.0 * tce - 8.4625400048).abs() < 1e-8, "{tce}");
        // Recalibrating to T itself (c² is σ(logit) of nothing simple, but a constant map
        // at the overall accuracy) gives |E T − E T| per piece = 0.
        let accuracy = model.density.raw_moment(2.0);
        let constant = RecalibrationMap::Piecewise(PiecewiseConstant {
            pieces: crate::recalibrate::Pieces::Starts(vec![0.0]),
            values: vec![accuracy],
        });
        assert!(recalibrated_tce(&model, &constant, 2.0).unwrap() < 1e-10);
    }
}
