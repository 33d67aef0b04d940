//! The true calibration error TCE_p = (E|f − T(f)|^p)^(1/p) of a synthetic model, f ~ Beta(α, β).
//!
//! Closed forms through Beta moments E[f^k] = B(α+k, β)/B(α, β) exist for the power
//! families (`polynomial`, `two_param_polynomial` and their flips) when p = 2, and when
//! p = 1 if f − T(f) keeps one sign on (0, 1). Everything else goes through tanh-sinh
//! quadrature, split where T crosses the diagonal. Values are fractions; ×100 for percent.

use core::fmt;

use super::beta::Beta;
use super::curve::{Curve, CurveKind};
use super::point_mass::PointMasses;
use super::quadrature::{integrate_ln, QuadratureError};
use super::unit_point::UnitPoint;

/// A closed form is used only if its estimated relative rounding error (from the moments'
/// own error and the cancellation between them) is below this; otherwise quadrature, which
/// integrates the accurately factored gap, is used instead. That happens near the identity
/// (d ≈ 1) and for large α, where all moments are close to 1 and nearly cancel.
pub const CLOSED_FORM_RELATIVE_ERROR_LIMIT: f64 = 1e-10;

/// Why a TCE could not be computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TceError {
    /// p must be finite and ≥ 1.
    InvalidExponent(f64),
    /// The quadrature failed.
    Quadrature(QuadratureError),
}

impl fmt::Display for TceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidExponent(p) => {
                write!(
                    f,
                    "the norm exponent p must be finite and at least 1, got {p}"
                )
            }
            Self::Quadrature(e) => write!(f, "true calibration error: {e}"),
        }
    }
}

impl std::error::Error for TceError {}

impl From<QuadratureError> for TceError {
    fn from(e: QuadratureError) -> TceError {
        TceError::Quadrature(e)
    }
}

fn check_exponent(p: f64) -> Result<(), TceError> {
    if p.is_finite() && p >= 1.0 {
        Ok(())
    } else {
        Err(TceError::InvalidExponent(p))
    }
}

/// TCE_p as a fraction: the closed form where one exists and is well conditioned, else
/// quadrature.
pub fn true_calibration_error(density: &Beta, curve: &Curve, p: f64) -> Result<f64, TceError> {
    check_exponent(p)?;
    match closed_form(density, curve, p) {
        Some(value) => Ok(value),
        None => by_quadrature(density, curve, p),
    }
}

/// TCE_p as a fraction of the mixture (1 − π₀ − π₁)·Beta + π₀·δ₀ + π₁·δ₁ (see
/// [`super::point_mass`]): TCE_p^p = (1 − π₀ − π₁)·TCE_p(Beta)^p + Σ π·|score − a|^p, the
/// Beta part by [`true_calibration_error`] (closed form or quadrature). Without atoms
/// it is [`true_calibration_error`] itself, bit for bit.
pub fn true_calibration_error_with_point_masses(
    density: &Beta,
    curve: &Curve,
    point_masses: &PointMasses,
    p: f64,
) -> Result<f64, TceError> {
    let continuous = true_calibration_error(density, curve, p)?;
    if point_masses.is_none() {
        return Ok(continuous);
    }
    let atoms = point_masses
        .atoms()
        .map(|(score, atom)| (atom.mass(), (score - atom.accuracy()).abs()));
    let terms: Vec<(f64, f64)> = core::iter::once((point_masses.continuous_mass(), continuous))
        .chain(atoms)
        .collect();
    Ok(lp_of(&terms, p))
}

/// (Σ w·|g|^p)^(1/p) of (weight, gap) terms, summed in units of the largest |g|'s p-th
/// power (see [`scales`]) so that no term underflows.
pub(crate) fn lp_of(terms: &[(f64, f64)], p: f64) -> f64 {
    let largest = terms.iter().fold(0.0f64, |m, &(_, g)| m.max(g.abs()));
    let scale = if scales(p) && largest > 0.0 {
        largest
    } else {
        1.0
    };
    let total: f64 = terms
        .iter()
        .map(|&(w, g)| w * (g.abs() / scale).powf(p))
        .sum();
    scale * total.powf(1.0 / p)
}

/// Whether TCE_p^p is summed in units of the largest gap's p-th power: for every p but 1
/// and 2 (whose values stay those of the plain sums, bit for bit). |gap|^p alone
/// underflows to 0 for a gap of 0.5 once p > 1074, and TCE_p would read 0.
pub(crate) fn scales(p: f64) -> bool {
    p != 1.0 && p != 2.0
}

/// ln of the largest |c − T(c)| found on a grid of (0, 1), uniform in c and in log-odds
/// (which reaches within 1e-17 of either end): the scale of the p-th powers in
/// [`by_quadrature`]. A grid may miss the true maximum by a little; the integrand then
/// peaks a little above 1, which is harmless.
fn ln_largest_gap(curve: &Curve) -> f64 {
    ln_largest_on_grid(|point| curve.ln_abs_gap(point))
}

/// The largest finite value of `ln_gap` on that grid (0 if there is none: no scaling).
pub(crate) fn ln_largest_on_grid(ln_gap: impl Fn(&UnitPoint) -> f64) -> f64 {
    const POINTS: u32 = 1024;
    let uniform = (1..POINTS).map(|i| UnitPoint::from_x(f64::from(i) / f64::from(POINTS)));
    let log_odds = (0..=POINTS)
        .map(|i| UnitPoint::from_logit(-40.0 + 80.0 * f64::from(i) / f64::from(POINTS)));
    let largest = uniform
        .chain(log_odds)
        .map(|point| ln_gap(&point))
        .filter(|ln_gap| ln_gap.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if largest.is_finite() {
        largest
    } else {
        0.0
    }
}

/// TCE_p from Beta moments, if the model has a closed form for this p (and it is not
/// ruined by cancellation, see [`CLOSED_FORM_RELATIVE_ERROR_LIMIT`]); `None` otherwise, including for an
/// invalid p.
///
/// With T = e^a c^b (a = 0, b = d for `polynomial`) and m(k) = E[f^k]:
/// - p = 2: E[(f − T)²] = m(2) − 2e^a m(b+1) + e^(2a) m(2b);
/// - p = 1, b ≥ 1: f ≥ e^a f^b on (0, 1), so E|f − T| = m(1) − e^a m(b);
/// - p = 1, a = 0, b ≤ 1: f ≤ f^b, so E|f − T| = m(b) − m(1).
///
/// (p = 1 with a < 0 and b < 1 crosses the diagonal: no closed form.) The flip families
/// are the same in 1 − f ~ Beta(β, α), since f − [1 − e^a (1−f)^b] = −[(1−f) − e^a (1−f)^b].
pub fn closed_form(density: &Beta, curve: &Curve, p: f64) -> Option<f64> {
    if check_exponent(p).is_err() {
        return None;
    }
    if curve.is_identity() {
        return Some(0.0);
    }
    let (moments, a, b) = match curve.kind() {
        CurveKind::Polynomial | CurveKind::FlipPolynomial => {
            (*density, 0.0, curve.params().d.expect("d of a polynomial"))
        }
        CurveKind::TwoParamPolynomial | CurveKind::TwoParamFlipPolynomial => {
            let params = curve.params();
            (*density, params.a.expect("a"), params.b.expect("b"))
        }
        _ => return None,
    };
    let moments = match curve.kind() {
        CurveKind::FlipPolynomial | CurveKind::TwoParamFlipPolynomial => {
            Beta::new(moments.beta(), moments.alpha()).expect("swapped valid parameters")
        }
        _ => moments,
    };
    let scale = a.exp();
    // Each term as (signed value, relative error of its moment).
    let term = |coefficient: f64, k: f64| {
        (
            coefficient * moments.raw_moment(k),
            moments.raw_moment_relative_error(k),
        )
    };
    let terms = if p == 2.0 {
        vec![
            term(1.0, 2.0),
            term(-2.0 * scale, b + 1.0),
            term(scale * scale, 2.0 * b),
        ]
    } else if p == 1.0 && b >= 1.0 {
        vec![term(1.0, 1.0), term(-scale, b)]
    } else if p == 1.0 && a == 0.0 {
        vec![term(1.0, b), term(-1.0, 1.0)]
    } else {
        return None;
    };
    let value: f64 = terms.iter().map(|(t, _)| t).sum();
    let error: f64 = terms
        .iter()
        .map(|(t, e)| t.abs() * (e + 2.0 * f64::EPSILON))
        .sum();
    if error.is_nan() || error > CLOSED_FORM_RELATIVE_ERROR_LIMIT * value {
        return None;
    }
    Some(value.powf(1.0 / p))
}

/// TCE_p by tanh-sinh quadrature of |c − T(c)|^p · pdf(c) over (0, 1), split at the
/// diagonal crossings of T. Works for every curve and every valid p; the closed forms are
/// tested against it.
pub fn by_quadrature(density: &Beta, curve: &Curve, p: f64) -> Result<f64, TceError> {
    check_exponent(p)?;
    if curve.is_identity() {
        return Ok(0.0);
    }
    // The integrand in units of the largest gap's p-th power (`scales`).
    let ln_scale = if scales(p) {
        ln_largest_gap(curve)
    } else {
        0.0
    };
    let ln_integrand =
        |point: &UnitPoint| p * (curve.ln_abs_gap(point) - ln_scale) + density.ln_pdf_at(point);
    let mut breaks = vec![UnitPoint::ZERO];
    breaks.extend(curve.diagonal_crossings());
    breaks.push(UnitPoint::ONE);
    let mut total = 0.0;
    for piece in breaks.windows(2) {
        total += integrate_ln(piece[0], piece[1], ln_integrand)?;
    }
    Ok(ln_scale.exp() * total.powf(1.0 / p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beta(a: f64, b: f64) -> Beta {
        Beta::new(a, b).unwrap()
    }

    fn assert_relative(actual: f64, expected: f64, tolerance: f64, what: &str) {
        let error = ((actual - expected) / expected).abs();
        assert!(
            error <= tolerance,
            "{what}: {actual} vs {expected} (relative {error:e})"
        );
    }

    #[test]
    fn point_masses_add_their_gaps() {
        use crate::sim::point_mass::PointMass;
        // Uniform scores, T = c²: E(c − c²)² = 1/3 − 1/2 + 1/5 = 1/30. With π₁ = 1/4 at
        // accuracy 0.9 and π₀ = 1/8 at accuracy 0.2:
        // TCE₂² = (5/8)/30 + (1/4)·0.01 + (1/8)·0.04 = 1/48 + 0.0025 + 0.005.
        let masses = PointMasses::new(
            Some(PointMass::new(0.125, 0.2).unwrap()),
            Some(PointMass::new(0.25, 0.9).unwrap()),
        )
        .unwrap();
        let curve = Curve::polynomial(2.0).unwrap();
        let value = true_calibration_error_with_point_masses(&beta(1.0, 1.0), &curve, &masses, 2.0)
            .unwrap();
        assert_relative(value, (1.0 / 48.0 + 0.0075f64).sqrt(), 1e-14, "closed form");
        // p = 1: E|c − c²| = 1/6, so (5/8)/6 + (1/4)·0.1 + (1/8)·0.2.
        let l1 = true_calibration_error_with_point_masses(&beta(1.0, 1.0), &curve, &masses, 1.0)
            .unwrap();
        assert_relative(l1, 5.0 / 48.0 + 0.025 + 0.025, 1e-14, "p = 1");
        // No atoms: the Beta value bit for bit.
        let density = beta(2.8, 0.05);
        assert_eq!(
            true_calibration_error_with_point_masses(&density, &curve, &PointMasses::NONE, 2.0),
            true_calibration_error(&density, &curve, 2.0)
        );
    }

    #[test]
    fn spec_reference_values() {
        // SPEC §7, percent, p = 2, T = c^d.
        let cases = [
            (1.1, 0.1, 2.0, 8.4625400048),
            (1.0, 1.0, 2.0, 18.2574185835),
            (2.8, 0.05, 2.0, 4.2359309162),
            (1.1, 0.1, 10.0, 27.9341146197),
            (1.0, 1.0, 10.0, 46.2910049886),
        ];
        for (a, b, d, percent) in cases {
            let curve = Curve::polynomial(d).unwrap();
            let closed = closed_form(&beta(a, b), &curve, 2.0).unwrap();
            let what = format!("Beta({a}, {b}), d = {d}");
            // The references have 11 significant digits.
            assert_relative(100.0 * closed, percent, 1e-10, &what);
            let quadrature = by_quadrature(&beta(a, b), &curve, 2.0).unwrap();
            assert_relative(100.0 * quadrature, percent, 1e-10, &what);
        }
        assert_relative(
            true_calibration_error(&beta(1.0, 1.0), &Curve::polynomial(2.0).unwrap(), 2.0).unwrap(),
            (1.0f64 / 30.0).sqrt(),
            1e-14,
            "sqrt(1/30)",
        );
        for (a, b) in [(1.1, 0.1), (2.8, 0.05), (0.3, 4.0)] {
            let identity = Curve::polynomial(1.0).unwrap();
            assert_eq!(true_calibration_error(&beta(a, b), &identity, 2.0), Ok(0.0));
            assert_eq!(by_quadrature(&beta(a, b), &identity, 1.0), Ok(0.0));
        }
    }

    #[test]
    fn quadrature_agrees_with_every_closed_form() {
        let densities = [
            (1.1, 0.1),
            (2.8, 0.05),
            (0.3, 0.7),
            (0.3, 4.0),
            (1.0, 1.0),
            (5.0, 2.0),
            (0.05, 0.05),
        ];
        let curves = [
            Curve::polynomial(2.0).unwrap(),
            Curve::polynomial(10.0).unwrap(),
            Curve::polynomial(0.4).unwrap(),
            Curve::flip_polynomial(3.0).unwrap(),
            Curve::flip_polynomial(0.6).unwrap(),
            Curve::two_param_polynomial(-0.3, 1.7).unwrap(),
            Curve::two_param_polynomial(0.0, 0.5).unwrap(),
            Curve::two_param_polynomial(-0.2, 0.6).unwrap(),
            Curve::two_param_flip_polynomial(-0.1, 2.5).unwrap(),
            Curve::two_param_flip_polynomial(-0.4, 0.3).unwrap(),
        ];
        let mut compared = 0;
        for (a, b) in densities {
            for curve in &curves {
                for p in [1.0, 2.0] {
                    let density = beta(a, b);
                    let quadrature = by_quadrature(&density, curve, p).unwrap();
                    if let Some(closed) = closed_form(&density, curve, p) {
                        let what = format!("Beta({a}, {b}), {curve}, p = {p}");
                        assert_relative(quadrature, closed, 1e-9, &what);
                        compared += 1;
                    }
                }
            }
        }
        // Every pair has a p = 2 form; p = 1 lacks one only for a < 0, b < 1 (2 curves).
        // (Large α nearly cancels: see `large_alpha_prefers_quadrature`.)
        assert_eq!(compared, 7 * (10 + 8));
    }

    #[test]
    fn general_p_against_an_expanded_closed_form() {
        // p = 3, T = c^d with d > 1: (f − f^d)³ ≥ 0 expands into four moments.
        let density = beta(0.3, 0.05);
        let d = 2.5;
        let m = |k: f64| density.raw_moment(k);
        let cube = m(3.0) - 3.0 * m(d + 2.0) + 3.0 * m(2.0 * d + 1.0) - m(3.0 * d);
        let curve = Curve::polynomial(d).unwrap();
        assert_eq!(closed_form(&density, &curve, 3.0), None);
        let tce = true_calibration_error(&density, &curve, 3.0).unwrap();
        assert_relative(tce, cube.cbrt(), 1e-9, "p = 3");
    }

    #[test]
    fn large_norms_do_not_underflow_to_zero() {
        // T = c²: the gap c − c² peaks at 0.25 (c = ½), so |gap|^p underflows everywhere
        // once p > 537. Reference: composite Simpson of (gap/0.25)^p · pdf, in units of
        // the known peak, then 0.25 · (that)^(1/p).
        let density = beta(2.0, 3.0);
        let curve = Curve::polynomial(2.0).unwrap();
        let intervals = 200_000;
        let h = 1.0 / intervals as f64;
        for p in [3.0, 600.0, 2000.0, 5000.0] {
            let f = |x: f64| ((x - x * x) / 0.25).powf(p) * density.pdf(x);
            let mut sum = f(0.0) + f(1.0);
            for i in 1..intervals {
                sum += if i % 2 == 1 { 4.0 } else { 2.0 } * f(i as f64 * h);
            }
            let expected = 0.25 * (sum * h / 3.0).powf(1.0 / p);
            let tce = true_calibration_error(&density, &curve, p).unwrap();
            assert_relative(tce, expected, 1e-9, &format!("p = {p}"));
            // With point masses too: an atom at 1 whose accuracy is 0.5 has the largest gap.
            let masses =
                PointMasses::at_one(crate::sim::point_mass::PointMass::new(0.1, 0.5).unwrap());
            let with_atom =
                true_calibration_error_with_point_masses(&density, &curve, &masses, p).unwrap();
            // The atom's gap, |1 − 0.5|, is the largest: the scale of the reference.
            let expected = 0.5 * (0.9 * (tce / 0.5).powf(p) + 0.1).powf(1.0 / p);
            assert_relative(with_atom, expected, 1e-9, &format!("with an atom, p = {p}"));
        }
    }

    /// Composite Simpson on a smooth density (Beta(2, 3), zero at both ends).
    fn simpson_tce(curve: &Curve, p: f64) -> f64 {
        let density = beta(2.0, 3.0);
        let intervals = 200_000;
        let h = 1.0 / intervals as f64;
        let f = |x: f64| (x - curve.eval(x)).abs().powf(p) * density.pdf(x);
        let mut sum = f(0.0) + f(1.0);
        for i in 1..intervals {
            sum += if i % 2 == 1 { 4.0 } else { 2.0 } * f(i as f64 * h);
        }
        (sum * h / 3.0).powf(1.0 / p)
    }

    #[test]
    fn logistic_families_against_simpson() {
        let curves = [
            Curve::logistic_log_odds(0.4, 2.0).unwrap(),
            Curve::logistic_log_odds(-0.5, 0.7).unwrap(),
            Curve::logistic_flip_polynomial(-4.0, -5.0).unwrap(),
            Curve::logistic_flip_polynomial(2.0, 0.5).unwrap(),
            Curve::logistic(10.0, 0.5).unwrap(),
            Curve::logistic(-3.0, 0.7).unwrap(),
            Curve::two_param_polynomial(-0.2, 0.6).unwrap(),
        ];
        for curve in &curves {
            for p in [1.0, 2.0, 1.5] {
                let expected = simpson_tce(curve, p);
                let actual = by_quadrature(&beta(2.0, 3.0), curve, p).unwrap();
                // Simpson's error near the kinks (p = 1, 1.5) is O(h^(p+1)).
                assert_relative(actual, expected, 1e-8, &format!("{curve}, p = {p}"));
            }
        }
    }

    #[test]
    fn singular_densities_with_logistic_curves_converge() {
        // β = 0.05 and α = 0.3: no closed form, but splitting the range must not matter.
        let density = beta(0.3, 0.05);
        let curve = Curve::logistic(12.0, 0.45).unwrap();
        let tce = by_quadrature(&density, &curve, 2.0).unwrap();
        // Same integral with 1 − f ~ Beta(0.05, 0.3) and the mirrored curve
        // 1 − σ(12(0.55 − c)) = σ(12(c − 0.55)), whose gap is the negated one.
        let mirrored =
            by_quadrature(&beta(0.05, 0.3), &Curve::logistic(12.0, 0.55).unwrap(), 2.0).unwrap();
        assert_relative(tce, mirrored, 1e-10, "mirror symmetry");
        assert!(tce > 0.0 && tce < 1.0);
    }

    #[test]
    fn near_identity_falls_back_to_quadrature() {
        // d = 1 + 1e−7: the p = 2 closed form would cancel to garbage. TCE is then
        // ≈ (d − 1)·sqrt(E[(f ln f)²]), linear in d − 1.
        let density = beta(2.0, 2.0);
        let near = Curve::polynomial(1.0 + 1e-7).unwrap();
        assert_eq!(closed_form(&density, &near, 2.0), None);
        let tce_near = true_calibration_error(&density, &near, 2.0).unwrap() / 1e-7;
        let tce_less_near =
            by_quadrature(&density, &Curve::polynomial(1.0 + 1e-5).unwrap(), 2.0).unwrap() / 1e-5;
        assert_relative(tce_near, tce_less_near, 2e-5, "linear in d - 1");
    }

    #[test]
    fn large_alpha_prefers_quadrature() {
        // Beta(50, 0.05), d = 2: moments ≈ 0.998 cancel to TCE² ≈ 1.9e−5. The closed form
        // through products keeps ~10 digits; quadrature is used, and both agree.
        let density = beta(50.0, 0.05);
        let curve = Curve::polynomial(2.0).unwrap();
        assert_eq!(closed_form(&density, &curve, 2.0), None);
        let m = |k: f64| density.raw_moment(k);
        let products = (m(2.0) - 2.0 * m(3.0) + m(4.0)).sqrt();
        let tce = true_calibration_error(&density, &curve, 2.0).unwrap();
        assert_relative(tce, products, 1e-9, "Beta(50, 0.05)");
        // With a non-integer exponent the lgamma moments are worse still.
        let curve = Curve::polynomial(2.5).unwrap();
        assert_eq!(closed_form(&density, &curve, 2.0), None);
    }

    #[test]
    fn refuses_invalid_exponents() {
        let density = beta(1.0, 1.0);
        let curve = Curve::polynomial(2.0).unwrap();
        for p in [0.5, f64::NAN, f64::INFINITY, -1.0] {
            assert!(matches!(
                true_calibration_error(&density, &curve, p),
                Err(TceError::InvalidExponent(_))
            ));
            assert_eq!(closed_form(&density, &curve, p), None);
        }
    }
}
