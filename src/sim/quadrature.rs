//! Double-exponential (tanh-sinh) quadrature on sub-intervals of [0, 1], for nonnegative
//! integrands given by their logarithm.
//!
//! The substitution s = (1 + tanh((π/2) sinh t)) / 2 maps ℝ onto (0, 1) and makes the
//! integrand decay double-exponentially in t, even when it has a power-law singularity at
//! an endpoint (a Beta density with α < 1 or β < 1). Two details make that work in f64:
//!
//! - the node and its complement come from the same t directly: s = σ(2u) and
//!   1 − s = σ(−2u) with u = (π/2) sinh t, and ln s = −softplus(−2u), so nodes within
//!   e^−700 of an endpoint keep finite, exact logarithms instead of rounding to 0 or 1;
//! - the integrand is supplied as ln f and combined with ln(dx/dt) before exponentiating,
//!   so (1−x)^(β−1), which overflows there, is never formed on its own.
//!
//! The step is halved until two successive sums agree to [`RELATIVE_TOLERANCE`]; tanh-sinh
//! roughly doubles its correct digits per halving on analytic integrands, so by then the
//! finer sum is far more accurate than that. Kinks in the interior (where the integrand is
//! |c − T(c)|^p and T crosses the diagonal) break that rate: the caller splits there.

use core::f64::consts::{FRAC_PI_2, PI};
use core::fmt;

use super::unit_point::{softplus, UnitPoint};

/// Successive step halvings stop once the sums agree to this relative difference.
pub const RELATIVE_TOLERANCE: f64 = 1e-13;

/// Finest level tried: step 2^−MAX_LEVEL in t.
const MAX_LEVEL: u32 = 12;

/// Coarsest level whose agreement with the previous one is accepted, so that two crude
/// sums cannot agree by accident.
const MIN_LEVEL: u32 = 4;

/// The node range never extends beyond |t| = 12: there 1 − s ≈ e^−(π sinh 12) ≈ e^−255000,
/// which leaves a negligible tail for endpoint exponents down to ~1e−4.
const T_CAP: f64 = 12.0;

/// Step of the scan that sets the node range.
const SCAN_STEP: f64 = 1.0 / 16.0;

/// A term below this share of the largest one ends the node range (the tail beyond a
/// double-exponentially decaying term is smaller than the term itself).
const NEGLIGIBLE_TERM: f64 = 1e-18;

/// Why a quadrature failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QuadratureError {
    /// The integrand (times the Jacobian) was NaN or +∞ at a node.
    NonFiniteIntegrand {
        /// The node (may have rounded to 0 or 1).
        x: f64,
    },
    /// The sums had not settled at the finest step.
    NotConverged {
        /// The last sum.
        estimate: f64,
        /// Its relative difference to the sum of the previous level.
        relative_change: f64,
    },
}

impl fmt::Display for QuadratureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NonFiniteIntegrand { x } => write!(f, "integrand is not finite at x = {x}"),
            Self::NotConverged { estimate, relative_change } => write!(
                f,
                "tanh-sinh quadrature did not converge (estimate {estimate}, last relative change {relative_change:e})"
            ),
        }
    }
}

impl std::error::Error for QuadratureError {}

/// An interval [lo, hi] ⊂ [0, 1] mapped onto the tanh-sinh nodes.
struct Interval {
    lo: UnitPoint,
    hi: UnitPoint,
    width: f64,
    ln_width: f64,
}

impl Interval {
    fn new(lo: UnitPoint, hi: UnitPoint) -> Interval {
        // Subtract whichever of x and 1 − x is accurate on that side of 1/2.
        let width = if lo.x >= 0.5 {
            lo.one_minus_x - hi.one_minus_x
        } else {
            hi.x - lo.x
        };
        Interval {
            lo,
            hi,
            width,
            ln_width: width.ln(),
        }
    }

    /// The point at node t, with ln(dx/dt).
    fn node(&self, t: f64) -> (UnitPoint, f64) {
        let u = FRAC_PI_2 * t.sinh();
        let s = super::unit_point::sigmoid(2.0 * u);
        let one_minus_s = super::unit_point::sigmoid(-2.0 * u);
        let ln_s = -softplus(-2.0 * u);
        let ln_one_minus_s = -softplus(2.0 * u);
        let ln_jacobian = self.ln_width + (PI * t.cosh()).ln() + ln_s + ln_one_minus_s;
        let point = if t < 0.0 {
            // Near lo: the offset w·s from lo is exact relative to itself.
            let offset = self.width * s;
            let mut point = UnitPoint::from_pair(self.lo.x + offset, self.lo.one_minus_x - offset);
            if self.lo.x == 0.0 {
                point.ln_x = self.ln_width + ln_s;
            }
            point
        } else {
            let offset = self.width * one_minus_s;
            let mut point = UnitPoint::from_pair(self.hi.x - offset, self.hi.one_minus_x + offset);
            if self.hi.one_minus_x == 0.0 {
                point.ln_one_minus_x = self.ln_width + ln_one_minus_s;
            }
            point
        };
        (point, ln_jacobian)
    }
}

/// ∫_lo^hi f(x) dx for a nonnegative f given as `ln_f` (−∞ where f = 0), evaluated only in
/// the open interval. `lo` and `hi` are points of [0, 1] with lo ≤ hi.
pub fn integrate_ln<F: Fn(&UnitPoint) -> f64>(
    lo: UnitPoint,
    hi: UnitPoint,
    ln_f: F,
) -> Result<f64, QuadratureError> {
    let interval = Interval::new(lo, hi);
    if interval.width.is_nan() || interval.width <= 0.0 {
        return Ok(0.0);
    }
    let term = |t: f64| -> Result<f64, QuadratureError> {
        let (point, ln_jacobian) = interval.node(t);
        let ln_value = ln_f(&point);
        if ln_value.is_nan() || ln_value == f64::INFINITY {
            return Err(QuadratureError::NonFiniteIntegrand { x: point.x });
        }
        let value = (ln_value + ln_jacobian).exp();
        if !value.is_finite() {
            return Err(QuadratureError::NonFiniteIntegrand { x: point.x });
        }
        Ok(value)
    };

    // Node range: scan outwards on each side until the terms are negligible for good.
    let centre = term(0.0)?;
    let mut largest = centre;
    let mut reach = [0.0f64; 2];
    for (side, direction) in [-1.0f64, 1.0].into_iter().enumerate() {
        let mut quiet_steps = 0;
        let mut t = 0.0;
        while t < T_CAP && quiet_steps < 4 {
            t += SCAN_STEP;
            let value = term(direction * t)?;
            largest = largest.max(value);
            if value <= NEGLIGIBLE_TERM * largest {
                quiet_steps += 1;
            } else {
                quiet_steps = 0;
            }
        }
        reach[side] = t;
    }
    if largest == 0.0 {
        return Ok(0.0);
    }

    // Level 0: step 1 over the integer nodes in range; each later level adds the odd
    // multiples of the halved step.
    let (left, right) = (-reach[0], reach[1]);
    let mut sum = 0.0;
    let mut j = left.ceil() as i64;
    while (j as f64) <= right {
        sum += term(j as f64)?;
        j += 1;
    }
    let mut step = 1.0;
    let mut estimate = sum * step;
    let mut relative_change = f64::INFINITY;
    for level in 1..=MAX_LEVEL {
        step *= 0.5;
        let mut k = (left / step).ceil() as i64;
        if k % 2 == 0 {
            k += 1;
        }
        while (k as f64) * step <= right {
            sum += term(k as f64 * step)?;
            k += 2;
        }
        let refined = sum * step;
        relative_change = ((refined - estimate) / refined).abs();
        estimate = refined;
        if level >= MIN_LEVEL && (relative_change <= RELATIVE_TOLERANCE || estimate == 0.0) {
            return Ok(estimate);
        }
    }
    Err(QuadratureError::NotConverged {
        estimate,
        relative_change,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relative(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn polynomial_on_the_unit_interval() {
        // ∫ x² = 1/3.
        let value = integrate_ln(UnitPoint::ZERO, UnitPoint::ONE, |p| 2.0 * p.ln_x).unwrap();
        assert!(relative(value, 1.0 / 3.0) < 1e-14, "{value}");
    }

    #[test]
    fn endpoint_singularities() {
        // ∫ x^(−0.95) dx = 20 and ∫ (1−x)^(−0.95) dx = 20: mass piled within 1e−16 of
        // the endpoint, where x itself rounds to 0 or 1.
        let left = integrate_ln(UnitPoint::ZERO, UnitPoint::ONE, |p| -0.95 * p.ln_x).unwrap();
        assert!(relative(left, 20.0) < 1e-12, "{left}");
        let right = integrate_ln(UnitPoint::ZERO, UnitPoint::ONE, |p| {
            -0.95 * p.ln_one_minus_x
        })
        .unwrap();
        assert!(relative(right, 20.0) < 1e-12, "{right}");
        // B(0.3, 0.05) = Γ(0.3)Γ(0.05)/Γ(0.35).
        let expected = (libm::lgamma(0.3) + libm::lgamma(0.05) - libm::lgamma(0.35)).exp();
        let beta = integrate_ln(UnitPoint::ZERO, UnitPoint::ONE, |p| {
            -0.7 * p.ln_x - 0.95 * p.ln_one_minus_x
        })
        .unwrap();
        assert!(relative(beta, expected) < 1e-12, "{beta} vs {expected}");
    }

    #[test]
    fn sub_intervals_add_up() {
        let ln_f = |p: &UnitPoint| -0.5 * p.ln_x - 0.9 * p.ln_one_minus_x;
        let whole = integrate_ln(UnitPoint::ZERO, UnitPoint::ONE, ln_f).unwrap();
        // Split at 0.3 and at a point within 1e−30 of 1.
        let a = UnitPoint::from_x(0.3);
        let b = UnitPoint::from_ln_one_minus_x(-30.0 * 10f64.ln());
        let parts = integrate_ln(UnitPoint::ZERO, a, ln_f).unwrap()
            + integrate_ln(a, b, ln_f).unwrap()
            + integrate_ln(b, UnitPoint::ONE, ln_f).unwrap();
        assert!(relative(parts, whole) < 1e-12, "{parts} vs {whole}");
        // The last piece is ∫_{1−1e−30}^1 (1−x)^−0.9 ≈ 10·(1e−30)^0.1 = 1e−2 (x^−0.5 ≈ 1).
        let tail = integrate_ln(b, UnitPoint::ONE, ln_f).unwrap();
        assert!(relative(tail, 10.0 * 1e-3) < 1e-12, "{tail}");
    }

    #[test]
    fn empty_interval_and_zero_integrand() {
        let a = UnitPoint::from_x(0.4);
        assert_eq!(integrate_ln(a, a, |_| 0.0), Ok(0.0));
        assert_eq!(
            integrate_ln(UnitPoint::ZERO, UnitPoint::ONE, |_| f64::NEG_INFINITY),
            Ok(0.0)
        );
        assert!(matches!(
            integrate_ln(UnitPoint::ZERO, UnitPoint::ONE, |_| f64::NAN),
            Err(QuadratureError::NonFiniteIntegrand { .. })
        ));
    }
}
