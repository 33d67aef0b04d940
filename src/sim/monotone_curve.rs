//! Monotone calibration curves beyond first order (issue 36): T(c) = σ(η(logit c)) with η
//! a continuous, non-decreasing, piecewise-linear function of the log-odds z = logit c.
//!
//! η has an intercept a, knots k₁ < … < k_K and a slope s_j ≥ 0 on each of the K + 1
//! segments (−∞, k₁], [k₁, k₂], …, [k_K, ∞):
//!
//! η(z) = a + s₀·min(z, k₁) + Σ_{j=1}^{K−1} s_j·clamp(z − k_j, 0, k_{j+1} − k_j)
//!          + s_K·max(z − k_K, 0),
//!
//! so a is the first segment's line extended to z = 0 (for K = 0, η = a + s₀z: the
//! paper's `logistic_log_odds` curve σ(a + b·logit c) with b = s₀ ≥ 0). Slopes ≥ 0 make T
//! non-decreasing in c, which the paper's argument (Section 5) requires of a calibration
//! curve; every such T maps [0, 1] into [0, 1].
//!
//! **Evaluation.** η itself is evaluated from the knot values η(k_j) (accumulated from
//! the left), η(z) = η(k) + s_j·(z − k), which is non-decreasing in floating point too
//! ([`MonotoneCurve::eta`]). On segment j the spline is the line η(z) = c_j + s_j·z, with
//! c₀ = a and c_j = c_{j−1} + (s_{j−1} − s_j)·k_j (continuity at k_j). The gap to the
//! diagonal on that segment is η(z) − z = c_j + (s_j − 1)·z, which is exactly 0 when
//! s_j = 1 and c_j = 0 (so the identity, and any segment lying on the diagonal, has no
//! rounding gap at all, however large |z| is). ln|c − T(c)| uses the factorisation
//! c − σ(η) = σ(ℓ)·σ(−η)·(−expm1(η − ℓ)), ℓ = logit c, as `Curve` does for its logistic
//! families: no cancellation where T ≈ c, and accurate within 1e−300 of either end.
//!
//! **Kinks.** |c − T(c)|^p has kinks where T crosses the diagonal and at every knot (η's
//! slope jumps there). Tanh-sinh quadrature converges slowly across a kink, so
//! [`MonotoneCurve::quadrature_breaks`] gives both, and
//! [`MonotoneCurve::true_calibration_error`] splits there.

use core::fmt;

use super::quadrature::{integrate_ln, QuadratureError};
use super::tce::{ln_largest_on_grid, scales, TceError};
use super::unit_point::{ln_abs_expm1, scale_ln, sigmoid, softplus, UnitPoint};

/// The TCE's integral is accepted when the pieces whose tanh-sinh sums did not settle
/// (see [`MonotoneCurve::true_calibration_error_split`]) carry at most this share of it as
/// their last change: the total is then as good as a settled integral's.
pub const QUADRATURE_TOTAL_TOLERANCE: f64 = 1e-12;

/// Why a monotone curve was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum MonotoneCurveError {
    /// The intercept is NaN or infinite.
    NonFiniteIntercept(f64),
    /// A knot is NaN or infinite.
    NonFiniteKnot {
        /// Its index (0-based).
        index: usize,
        /// Its value.
        value: f64,
    },
    /// Knots must increase strictly: `knots[index] <= knots[index - 1]`.
    KnotsNotIncreasing {
        /// The index of the first knot that does not exceed its predecessor.
        index: usize,
    },
    /// There must be exactly one slope more than knots.
    SlopeCount {
        /// The number of knots.
        knots: usize,
        /// The number of slopes given.
        slopes: usize,
    },
    /// A slope is NaN or infinite.
    NonFiniteSlope {
        /// Its segment (0-based).
        index: usize,
        /// Its value.
        value: f64,
    },
    /// A slope is negative: T would decrease on that segment.
    NegativeSlope {
        /// Its segment (0-based).
        index: usize,
        /// Its value.
        value: f64,
    },
    /// An accumulated segment line c_j or knot value η(k_j) overflowed (knots and slopes
    /// so large that η is not finite on a finite z).
    NonFiniteLine {
        /// The segment.
        index: usize,
    },
}

impl fmt::Display for MonotoneCurveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NonFiniteIntercept(a) => {
                write!(f, "monotone curve intercept must be finite, got {a}")
            }
            Self::NonFiniteKnot { index, value } => {
                write!(f, "monotone curve knot {index} must be finite, got {value}")
            }
            Self::KnotsNotIncreasing { index } => write!(
                f,
                "monotone curve knots must increase strictly (knot {index} does not exceed knot {})",
                index - 1
            ),
            Self::SlopeCount { knots, slopes } => write!(
                f,
                "a monotone curve with {knots} knots needs {} slopes, got {slopes}",
                knots + 1
            ),
            Self::NonFiniteSlope { index, value } => {
                write!(f, "monotone curve slope {index} must be finite, got {value}")
            }
            Self::NegativeSlope { index, value } => write!(
                f,
                "monotone curve slope {index} must be >= 0 (else T decreases), got {value}"
            ),
            Self::NonFiniteLine { index } => write!(
                f,
                "monotone curve segment {index}: its line overflows (knots or slopes too large)"
            ),
        }
    }
}

impl std::error::Error for MonotoneCurveError {}

/// A validated monotone spline calibration curve (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct MonotoneCurve {
    intercept: f64,
    knots: Vec<f64>,
    slopes: Vec<f64>,
    /// c_j: segment j's line is η(z) = c_j + s_j z (used for the gap η − z).
    lines: Vec<f64>,
    /// η(k_j), accumulated from the left (used for η itself).
    values: Vec<f64>,
}

impl MonotoneCurve {
    /// A curve from its intercept a, knots (strictly increasing, finite) and K + 1 slopes
    /// (finite, ≥ 0).
    pub fn new(
        intercept: f64,
        knots: Vec<f64>,
        slopes: Vec<f64>,
    ) -> Result<MonotoneCurve, MonotoneCurveError> {
        if !intercept.is_finite() {
            return Err(MonotoneCurveError::NonFiniteIntercept(intercept));
        }
        for (index, &value) in knots.iter().enumerate() {
            if !value.is_finite() {
                return Err(MonotoneCurveError::NonFiniteKnot { index, value });
            }
            if index > 0 && value <= knots[index - 1] {
                return Err(MonotoneCurveError::KnotsNotIncreasing { index });
            }
        }
        if slopes.len() != knots.len() + 1 {
            return Err(MonotoneCurveError::SlopeCount {
                knots: knots.len(),
                slopes: slopes.len(),
            });
        }
        for (index, &value) in slopes.iter().enumerate() {
            if !value.is_finite() {
                return Err(MonotoneCurveError::NonFiniteSlope { index, value });
            }
            // −0.0 is accepted as 0 (it is ≥ 0), and stored as +0.
            if value < 0.0 {
                return Err(MonotoneCurveError::NegativeSlope { index, value });
            }
        }
        let slopes: Vec<f64> = slopes.into_iter().map(|s| s + 0.0).collect();
        let mut lines = Vec::with_capacity(slopes.len());
        lines.push(intercept);
        for j in 1..slopes.len() {
            // With s_j = s_{j−1} the product is exactly 0 and c_j = c_{j−1}: a knot that
            // does not bend η leaves the line bit for bit unchanged.
            let c = lines[j - 1] + (slopes[j - 1] - slopes[j]) * knots[j - 1];
            if !c.is_finite() {
                return Err(MonotoneCurveError::NonFiniteLine { index: j });
            }
            lines.push(c);
        }
        // η(k₁) = a + s₀k₁, η(k_{j+1}) = η(k_j) + s_j (k_{j+1} − k_j): every operation
        // rounds monotonically and adds a non-negative term, so the values never decrease.
        let mut values = Vec::with_capacity(knots.len());
        for (j, &k) in knots.iter().enumerate() {
            let v = match j {
                0 => intercept + slopes[0] * k,
                _ => values[j - 1] + slopes[j] * (k - knots[j - 1]),
            };
            if !v.is_finite() {
                return Err(MonotoneCurveError::NonFiniteLine { index: j });
            }
            values.push(v);
        }
        Ok(MonotoneCurve {
            intercept,
            knots,
            slopes,
            lines,
            values,
        })
    }

    /// The identity T(c) = c: one segment, slope 1, intercept 0.
    pub fn identity() -> MonotoneCurve {
        MonotoneCurve::new(0.0, Vec::new(), vec![1.0]).expect("the identity is valid")
    }

    /// The intercept a (the first segment's line at z = 0).
    pub fn intercept(&self) -> f64 {
        self.intercept
    }

    /// The knots k₁ < … < k_K, in log-odds.
    pub fn knots(&self) -> &[f64] {
        &self.knots
    }

    /// The K + 1 segment slopes, each ≥ 0.
    pub fn slopes(&self) -> &[f64] {
        &self.slopes
    }

    /// The number of coefficients: the intercept and K + 1 slopes (knots are fixed).
    pub fn coefficients(&self) -> usize {
        1 + self.slopes.len()
    }

    /// Whether T(c) = c identically: every segment has slope 1 and lies on the diagonal
    /// (c_j = 0), i.e. intercept 0 and every slope 1. Exact: no tolerance.
    pub fn is_identity(&self) -> bool {
        self.slopes.iter().all(|&s| s == 1.0) && self.lines.iter().all(|&c| c == 0.0)
    }

    /// The segment of z: 0 below k₁, j on [k_j, k_{j+1}), K from k_K on.
    fn segment(&self, z: f64) -> usize {
        self.knots.partition_point(|&k| k <= z)
    }

    /// η(z) for z ∈ [−∞, ∞] (0·∞ = 0, so a flat end segment has a finite limit).
    ///
    /// Non-decreasing in z in floating point too, not only in exact arithmetic: each
    /// segment is evaluated from a knot, η(k) + s·(z − k) (segment 0 from k₁, the others
    /// from their left knot), whose every operation is monotone in z, and the knot values
    /// never decrease (see [`MonotoneCurve::new`]). (The per-segment lines c_j + s_j z
    /// would lose that at the ulp level where a line's intercept was rounded.)
    pub fn eta(&self, z: f64) -> f64 {
        let j = self.segment(z);
        if self.knots.is_empty() {
            return self.lines[0] + scale_ln(self.slopes[0], z);
        }
        let anchor = j.saturating_sub(1);
        self.values[anchor] + scale_ln(self.slopes[j], z - self.knots[anchor])
    }

    /// η(z) − z: exactly 0 on a segment that lies on the diagonal (slope 1, c_j = 0), and
    /// elsewhere from the segment's knot, (η(k) − k) + (s_j − 1)(z − k), whose terms stay
    /// of the size of the gap near a crossing on a steep segment (the line form
    /// c_j + (s_j − 1)z cancels there: c_j ≈ −s_j·k_j is 10⁵ on a fitted near-step, and the
    /// gap would carry an absolute error of 10⁻¹¹). Without knots, the line form, as
    /// `Curve` has it.
    fn eta_minus_z(&self, z: f64) -> f64 {
        let j = self.segment(z);
        let s = self.slopes[j];
        if self.knots.is_empty() || (s == 1.0 && self.lines[j] == 0.0) {
            return self.lines[j] + scale_ln(s - 1.0, z);
        }
        let anchor = j.saturating_sub(1);
        let k = self.knots[anchor];
        (self.values[anchor] - k) + scale_ln(s - 1.0, z - k)
    }

    /// T(c) for c ∈ [0, 1] (meaningless outside).
    pub fn eval(&self, c: f64) -> f64 {
        debug_assert!(
            (0.0..=1.0).contains(&c),
            "calibration curve evaluated at {c}"
        );
        self.eval_at(&UnitPoint::from_x(c))
    }

    /// T at a point given with its complement and logarithms.
    pub fn eval_at(&self, point: &UnitPoint) -> f64 {
        sigmoid(self.eta(point.logit()))
    }

    /// ln|c − T(c)| at an interior point, −∞ where T(c) = c (including every point of a
    /// segment lying on the diagonal).
    ///
    /// c − σ(η) = σ(ℓ)·σ(−η)·(−expm1(η − ℓ)) where η ≤ ℓ, and = −σ(−ℓ)·σ(η)·(−expm1(ℓ − η))
    /// (the same difference written from 1 − c and 1 − T) where η > ℓ: the factor
    /// expm1 of a large argument would otherwise cancel against σ(−η) for a steep segment
    /// (a fitted near-step, η in the tens of thousands), losing the digits that
    /// quadrature needs. In both forms every term is at most of the size of the result.
    pub fn ln_abs_gap(&self, point: &UnitPoint) -> f64 {
        let l = point.logit();
        let eta = self.eta(l);
        let eta_minus_l = self.eta_minus_z(l);
        if eta_minus_l > 0.0 {
            point.ln_one_minus_x - softplus(-eta) + ln_abs_expm1(-eta_minus_l)
        } else {
            point.ln_x - softplus(eta) + ln_abs_expm1(eta_minus_l)
        }
    }

    /// The boundary points of the set where T(c) = c, in (0, 1), increasing: every point
    /// where c − T(c) changes sign, and also
    ///
    /// - a knot where the gap is exactly 0 without changing sign (η touches the diagonal
    ///   there), and
    /// - the finite ends of a segment that lies on the diagonal (slope 1, c_j = 0): the
    ///   gap is identically 0 on it, so it contributes no interior point, but the
    ///   integrand |c − T(c)|^p leaves 0 at its ends.
    ///
    /// The identity has none. On each segment η(z) − z = c_j + (s_j − 1)z is linear, so a
    /// sign change inside segment j is the single root z = c_j / (1 − s_j), placed inside
    /// the segment (a root that rounds onto or past a knot is taken at the knot).
    pub fn diagonal_crossings(&self) -> Vec<UnitPoint> {
        self.crossing_logits()
            .into_iter()
            .map(UnitPoint::from_logit)
            .collect()
    }

    /// [`MonotoneCurve::diagonal_crossings`] in log-odds.
    pub fn crossing_logits(&self) -> Vec<f64> {
        if self.is_identity() {
            return Vec::new();
        }
        let last = self.slopes.len() - 1;
        // The sign of η − z at the ends of every segment: ±∞ by the end segments' slopes
        // (or their constant gap when the slope is 1), at a knot by the left segment's
        // line (the right one's agrees up to rounding; see below).
        let sign_at_minus_infinity = if self.slopes[0] == 1.0 {
            sign(self.lines[0])
        } else {
            sign(1.0 - self.slopes[0])
        };
        let sign_at_plus_infinity = if self.slopes[last] == 1.0 {
            sign(self.lines[last])
        } else {
            sign(self.slopes[last] - 1.0)
        };
        let at_knot: Vec<f64> = self
            .knots
            .iter()
            .enumerate()
            .map(|(i, &k)| self.lines[i] + (self.slopes[i] - 1.0) * k)
            .collect();
        let mut signs = Vec::with_capacity(self.knots.len() + 2);
        signs.push(sign_at_minus_infinity);
        signs.extend(at_knot.iter().map(|&g| sign(g)));
        signs.push(sign_at_plus_infinity);
        let mut crossings = Vec::new();
        for j in 0..=last {
            let (left, right) = (signs[j], signs[j + 1]);
            // A knot in the zero set is recorded from the segment on its right (segment 0
            // starts at −∞), before that segment's interior root.
            if j > 0 && left == 0 {
                crossings.push(self.knots[j - 1]);
            }
            if left * right < 0 {
                let lo = if j == 0 {
                    f64::NEG_INFINITY
                } else {
                    self.knots[j - 1]
                };
                let hi = if j == last {
                    f64::INFINITY
                } else {
                    self.knots[j]
                };
                // Opposite signs at the ends: s_j ≠ 1, and the root is inside in exact
                // arithmetic; clamp its rounding.
                let root = self.lines[j] / (1.0 - self.slopes[j]);
                crossings.push(root.clamp(lo, hi));
            }
        }
        crossings.dedup();
        crossings
    }

    /// Where quadrature of |c − T(c)|^p·pdf must split: the knots and the diagonal
    /// crossings, in increasing log-odds, without repeats.
    pub fn quadrature_breaks(&self) -> Vec<UnitPoint> {
        let mut logits = self.crossing_logits();
        logits.extend_from_slice(&self.knots);
        logits.sort_by(f64::total_cmp);
        logits.dedup();
        logits.into_iter().map(UnitPoint::from_logit).collect()
    }

    /// TCE_p = (∫ |c − T(c)|^p pdf(c) dc)^(1/p) (a fraction) against a score density given
    /// by its log-density at a [`UnitPoint`] (e.g. [`super::Beta::ln_pdf_at`]), by
    /// tanh-sinh quadrature split at [`MonotoneCurve::quadrature_breaks`]. The density
    /// must integrate to 1 over (0, 1); atoms are the caller's (add them as in
    /// [`super::tce::true_calibration_error_with_point_masses`]). 0 for the identity.
    pub fn true_calibration_error<F: Fn(&UnitPoint) -> f64>(
        &self,
        ln_pdf: F,
        p: f64,
    ) -> Result<f64, TceError> {
        self.true_calibration_error_split(ln_pdf, &[], p)
    }

    /// [`MonotoneCurve::true_calibration_error`], split also at the density's own breaks
    /// (any order; points outside (0, 1) are ignored): a density concentrated in a narrow
    /// band of (0, 1), such as a normal in log-odds far from 0, needs them for tanh-sinh to
    /// resolve its peak. A piece whose tanh-sinh sums do not settle is kept if the
    /// unsettled pieces' last changes are at most [`QUADRATURE_TOTAL_TOLERANCE`] of the
    /// total; otherwise the first such piece's error is returned.
    pub fn true_calibration_error_split<F: Fn(&UnitPoint) -> f64>(
        &self,
        ln_pdf: F,
        density_breaks: &[UnitPoint],
        p: f64,
    ) -> Result<f64, TceError> {
        if !(p.is_finite() && p >= 1.0) {
            return Err(TceError::InvalidExponent(p));
        }
        if self.is_identity() {
            return Ok(0.0);
        }
        // In units of the largest gap's p-th power for large p, as `tce::by_quadrature`.
        let ln_scale = if scales(p) {
            ln_largest_on_grid(|point| self.ln_abs_gap(point))
        } else {
            0.0
        };
        let ln_integrand =
            |point: &UnitPoint| p * (self.ln_abs_gap(point) - ln_scale) + ln_pdf(point);
        let mut inner = self.quadrature_breaks();
        inner.extend(
            density_breaks
                .iter()
                .filter(|b| b.logit().is_finite())
                .copied(),
        );
        inner.sort_by(|a, b| a.logit().total_cmp(&b.logit()));
        inner.dedup_by(|a, b| a.logit() == b.logit());
        let mut breaks = vec![UnitPoint::ZERO];
        breaks.extend(inner);
        breaks.push(UnitPoint::ONE);
        // A piece whose own sums settle only to ~1e−12 (a sliver next to a near-step's
        // crossing, where the integrand's rounding is large relative to that piece's tiny
        // value) is kept with its last change as its error; the total is accepted if
        // those errors are below QUADRATURE_TOTAL_TOLERANCE of it.
        let (mut total, mut unsettled) = (0.0, 0.0);
        let mut first_failure = None;
        for piece in breaks.windows(2) {
            match integrate_ln(piece[0], piece[1], ln_integrand) {
                Ok(value) => total += value,
                Err(QuadratureError::NotConverged {
                    estimate,
                    relative_change,
                }) if estimate.is_finite() && relative_change.is_finite() => {
                    total += estimate;
                    unsettled += relative_change * estimate.abs();
                    first_failure.get_or_insert(QuadratureError::NotConverged {
                        estimate,
                        relative_change,
                    });
                }
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(failure) = first_failure {
            if unsettled.is_nan() || unsettled > QUADRATURE_TOTAL_TOLERANCE * total {
                return Err(failure.into());
            }
        }
        Ok(ln_scale.exp() * total.powf(1.0 / p))
    }
}

/// −1, 0 or 1 (0 for ±0).
fn sign(x: f64) -> i8 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

impl fmt::Display for MonotoneCurve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "monotone_spline(a={}, knots={:?}, slopes={:?})",
            self.intercept, self.knots, self.slopes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{tce, Beta, Curve};

    fn sigma(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }

    /// η written out from the module docs' sum of clamped pieces (not the per-segment lines
    /// that the curve evaluates).
    fn naive_eta(curve: &MonotoneCurve, z: f64) -> f64 {
        let (k, s) = (curve.knots(), curve.slopes());
        if k.is_empty() {
            return curve.intercept() + s[0] * z;
        }
        let mut eta = curve.intercept() + s[0] * z.min(k[0]);
        for j in 1..k.len() {
            eta += s[j] * (z - k[j - 1]).clamp(0.0, k[j] - k[j - 1]);
        }
        eta + s[k.len()] * (z - k[k.len() - 1]).max(0.0)
    }

    fn samples() -> Vec<MonotoneCurve> {
        vec![
            MonotoneCurve::new(0.3, vec![], vec![0.6]).unwrap(),
            MonotoneCurve::new(0.5, vec![-1.0, 2.0], vec![0.2, 1.7, 0.4]).unwrap(),
            MonotoneCurve::new(
                -1.0,
                vec![-2.0, 0.0, 1.0, 3.0],
                vec![1.2, 0.0, 2.5, 0.7, 1.0],
            )
            .unwrap(),
            // Flat in the middle, steep at the ends.
            MonotoneCurve::new(0.0, vec![-0.5, 0.5], vec![3.0, 0.0, 3.0]).unwrap(),
        ]
    }

    #[test]
    fn refuses_invalid_parameters() {
        use MonotoneCurveError as E;
        assert!(matches!(
            MonotoneCurve::new(f64::NAN, vec![], vec![1.0]),
            Err(E::NonFiniteIntercept(a)) if a.is_nan()
        ));
        assert!(matches!(
            MonotoneCurve::new(f64::INFINITY, vec![], vec![1.0]),
            Err(E::NonFiniteIntercept(_))
        ));
        assert_eq!(
            MonotoneCurve::new(0.0, vec![1.0, f64::NEG_INFINITY], vec![1.0; 3]),
            Err(E::NonFiniteKnot {
                index: 1,
                value: f64::NEG_INFINITY
            })
        );
        assert_eq!(
            MonotoneCurve::new(0.0, vec![1.0, 1.0], vec![1.0; 3]),
            Err(E::KnotsNotIncreasing { index: 1 })
        );
        assert_eq!(
            MonotoneCurve::new(0.0, vec![1.0, 0.5], vec![1.0; 3]),
            Err(E::KnotsNotIncreasing { index: 1 })
        );
        assert_eq!(
            MonotoneCurve::new(0.0, vec![1.0], vec![1.0]),
            Err(E::SlopeCount {
                knots: 1,
                slopes: 1
            })
        );
        assert_eq!(
            MonotoneCurve::new(0.0, vec![1.0], vec![1.0, -1e-300]),
            Err(E::NegativeSlope {
                index: 1,
                value: -1e-300
            })
        );
        assert!(matches!(
            MonotoneCurve::new(0.0, vec![], vec![f64::NAN]),
            Err(E::NonFiniteSlope { index: 0, .. })
        ));
        assert_eq!(
            MonotoneCurve::new(0.0, vec![-1e300, 1e300], vec![1e300, 0.0, 1e300]),
            Err(E::NonFiniteLine { index: 1 })
        );
        // −0 is a slope of 0.
        let flat = MonotoneCurve::new(0.2, vec![], vec![-0.0]).unwrap();
        assert_eq!(flat.slopes()[0].to_bits(), 0.0f64.to_bits());
        assert!(E::NegativeSlope {
            index: 2,
            value: -1.0
        }
        .to_string()
        .contains("slope 2 must be >= 0"));
    }

    #[test]
    fn eval_and_gap_match_the_naive_formulas() {
        for curve in samples() {
            for i in 1..1000 {
                let c = f64::from(i) / 1000.0;
                let z = (c / (1.0 - c)).ln();
                let expected = sigma(naive_eta(&curve, z));
                let t = curve.eval(c);
                assert!(
                    (t - expected).abs() < 1e-14,
                    "{curve} at {c}: {t} vs {expected}"
                );
                assert!((curve.eta(z) - naive_eta(&curve, z)).abs() < 1e-13);
                let gap = (c - expected).abs();
                // Relative check where the naive difference is not itself rounding noise.
                if gap > 1e-6 {
                    let ln_gap = curve.ln_abs_gap(&UnitPoint::from_x(c));
                    assert!(
                        (ln_gap.exp() / gap - 1.0).abs() < 1e-9,
                        "{curve} gap at {c}: {} vs {gap}",
                        ln_gap.exp()
                    );
                }
            }
            assert_eq!(curve.eval(0.0), sigma(naive_eta(&curve, f64::NEG_INFINITY)));
            assert_eq!(curve.eval(1.0), sigma(naive_eta(&curve, f64::INFINITY)));
        }
    }

    #[test]
    fn one_segment_is_the_logistic_log_odds_curve() {
        let spline = MonotoneCurve::new(0.3, vec![], vec![0.6]).unwrap();
        let glm = Curve::logistic_log_odds(0.3, 0.6).unwrap();
        for l in [-700.0, -40.0, -3.0, 0.0, 0.1, 5.0, 36.0, 700.0] {
            let point = UnitPoint::from_logit(l);
            assert_eq!(spline.eval_at(&point), glm.eval_at(&point), "{l}");
            // The two factorisations agree to rounding (this one picks the side of the
            // diagonal; see `ln_abs_gap`).
            let (a, b) = (spline.ln_abs_gap(&point), glm.ln_abs_gap(&point));
            assert!((a - b).abs() <= 1e-13 * b.abs().max(1.0), "{l}: {a} vs {b}");
        }
        assert_eq!(
            spline.crossing_logits(),
            vec![glm.diagonal_crossings()[0].logit()]
        );
    }

    #[test]
    fn gap_stays_accurate_near_the_ends() {
        // ℓ = 600, η = 0.5ℓ = 300: c − T = σ(−300) − σ(−600) = e^−300 (1 + O(e^−300)),
        // exactly −300 in f64, although c and T are both 1.0.
        let half = MonotoneCurve::new(0.0, vec![], vec![0.5]).unwrap();
        let point = UnitPoint::from_logit(600.0);
        assert_eq!(half.ln_abs_gap(&point), -300.0);
        // Near 0 by symmetry: c − T = σ(−600) − σ(−300) < 0, |…| = e^−300.
        assert_eq!(half.ln_abs_gap(&UnitPoint::from_logit(-600.0)), -300.0);
        // 1 − c ≈ 1e−20 (c is 1.0 in f64, the naive gap 0): a two-knot spline whose last
        // segment has slope 0.5 from k₂ = 2. Reference: σ(−η) − σ(−ℓ) summed from its
        // series in e^−η and e^−ℓ (both below 1e−4, so six terms are exact to 1e−24).
        let curve = MonotoneCurve::new(0.5, vec![-1.0, 2.0], vec![0.2, 1.7, 0.5]).unwrap();
        let l = (1e20f64).ln();
        let eta = naive_eta(&curve, l);
        let series = |x: f64| -> f64 {
            // σ(−x) = Σ_{n≥1} (−1)^{n+1} e^{−nx}.
            (1..=6)
                .map(|n| (-1f64).powi(n + 1) * (-(f64::from(n)) * x).exp())
                .sum()
        };
        let expected = (series(eta) - series(l)).ln();
        let actual = curve.ln_abs_gap(&UnitPoint::from_logit(l));
        assert!((actual - expected).abs() < 1e-13, "{actual} vs {expected}");
        // c = 1e−200: the gap is c − T with T ≈ e^η, η = 0.5 + 0.2ℓ ≈ −91.6; reference
        // ln(e^η − e^ℓ) = η + ln(1 − e^{ℓ−η}), the correction below 1e−160.
        let l = (1e-200f64).ln();
        let eta = 0.5 + 0.2 * l;
        let actual = curve.ln_abs_gap(&UnitPoint::from_logit(l));
        assert!(
            (actual - eta).abs() < 1e-13 * eta.abs(),
            "{actual} vs {eta}"
        );
    }

    #[test]
    fn gap_is_accurate_on_a_near_step() {
        // Slope 2·10^4 past z = 6 (a fit whose labels beyond the knot are all 1): at z = 8,
        // T = 1 − e^−40000, so c − T = −(1 − c) + e^−40000 and ln|c − T| = ln σ(−8) to
        // the last digit. The one-sided factorisation loses ~12 of them here.
        let curve = MonotoneCurve::new(1.9, vec![6.0], vec![0.4, 2e4]).unwrap();
        for z in [6.5, 8.0, 12.0, 30.0] {
            let expected = -softplus(z);
            let actual = curve.ln_abs_gap(&UnitPoint::from_logit(z));
            assert!(
                (actual - expected).abs() <= 4.0 * f64::EPSILON * expected.abs(),
                "z = {z}: {actual} vs {expected}"
            );
        }
        // And symmetric: a near-step down to 0 before z = −6.
        let curve = MonotoneCurve::new(-1.9, vec![-6.0], vec![2e4, 0.4]).unwrap();
        let expected = -softplus(-(-8.0f64));
        let actual = curve.ln_abs_gap(&UnitPoint::from_logit(-8.0));
        assert!((actual - expected).abs() <= 4.0 * f64::EPSILON * expected.abs());
    }

    #[test]
    fn gap_is_accurate_next_to_a_crossing_on_a_steep_segment() {
        // η = 2 + z/2 up to 6 (η(6) = 5), then slope 16384: the gap η − ℓ = −1 + 16383(ℓ − 6)
        // crosses 0 at ℓ = 6 + 1/16383. Reference: ℓ − 6 exact (Sterbenz), the product
        // with its rounding error by fma, −1 + product exact (Sterbenz). The line form
        // c₁ + (s₁ − 1)ℓ with c₁ = −98299 rounds the gap to ulp(98299) = 1.5e−11, 10^−3 of a
        // gap of 1.6e−8; from the knot it is good to 1e−16 absolute.
        let curve = MonotoneCurve::new(2.0, vec![6.0], vec![0.5, 16384.0]).unwrap();
        let point = UnitPoint::from_logit(6.0 + 1.0 / 16383.0 + 1e-12);
        let l = point.logit();
        let t = l - 6.0;
        let product = 16383.0 * t;
        let rounding = 16383f64.mul_add(t, -product);
        let g = (-1.0 + product) + rounding;
        assert!(g.abs() > 1e-9 && g.abs() < 1e-7, "{g}");
        let s = sigma(l);
        let d1 = s * (1.0 - s);
        let d2 = d1 * (1.0 - 2.0 * s);
        let expected = (d1 * g + d2 * g * g / 2.0).abs().ln();
        let actual = curve.ln_abs_gap(&point);
        assert!((actual - expected).abs() < 1e-7, "{actual} vs {expected}");
    }

    #[test]
    fn gap_is_accurate_next_to_a_crossing() {
        // η = 1 + 0.5z crosses at z = 2. At ℓ ≈ 2 + 1e−9 the gap is ~1e−10: the naive
        // difference keeps 6 digits, the factorisation all of them. Reference: the Taylor
        // series of σ(ℓ) − σ(ℓ + g), g = η(ℓ) − ℓ = 1 − ℓ/2 (exact in f64 here), to g³.
        let curve = MonotoneCurve::new(1.0, vec![], vec![0.5]).unwrap();
        for offset in [1e-9, -3e-8, 1e-6] {
            let point = UnitPoint::from_logit(2.0 + offset);
            let l = point.logit();
            let g = 1.0 - 0.5 * l;
            let s = sigma(l);
            let d1 = s * (1.0 - s);
            let d2 = d1 * (1.0 - 2.0 * s);
            let d3 = d1 * (1.0 - 6.0 * s + 6.0 * s * s);
            let expected = (-(d1 * g + d2 * g * g / 2.0 + d3 * g * g * g / 6.0))
                .abs()
                .ln();
            let actual = curve.ln_abs_gap(&point);
            assert!(
                (actual - expected).abs() < 1e-12,
                "offset {offset}: {actual} vs {expected}"
            );
        }
    }

    /// The next f64 above z (f64::next_up needs Rust 1.86).
    fn next_up(z: f64) -> f64 {
        if z == 0.0 {
            f64::from_bits(1)
        } else if z > 0.0 {
            f64::from_bits(z.to_bits() + 1)
        } else {
            f64::from_bits(z.to_bits() - 1)
        }
    }

    #[test]
    fn eta_never_decreases_in_floating_point() {
        // Around every knot, ulp by ulp, and on a grid: η(z) ≥ η(previous z), with slopes
        // that round badly (0.1, 1/3, 0.99…) and a flat segment.
        let curves = [
            MonotoneCurve::new(
                0.49585357835747346,
                vec![0.0, 2.0],
                vec![1.0172729098938689, 0.0, 0.9912534182568202],
            )
            .unwrap(),
            MonotoneCurve::new(
                -0.3,
                vec![-1.7, 0.1, 0.3, 5.9],
                vec![1.0 / 3.0, 0.1, 0.0, 7.3, 0.99],
            )
            .unwrap(),
        ];
        for curve in &curves {
            for &k in curve.knots() {
                let mut z = k;
                for _ in 0..50 {
                    z = -next_up(-z);
                }
                let mut previous = curve.eta(z);
                for _ in 0..100 {
                    z = next_up(z);
                    let eta = curve.eta(z);
                    assert!(eta >= previous, "{curve} at {z}");
                    previous = eta;
                }
            }
            let mut previous = curve.eta(-50.0);
            for i in 1..=100_000 {
                let eta = curve.eta(-50.0 + f64::from(i) * 1e-3);
                assert!(eta >= previous, "{curve}");
                previous = eta;
            }
        }
    }

    #[test]
    fn the_identity_is_exact() {
        let identity = MonotoneCurve::identity();
        assert!(identity.is_identity());
        for l in [-700.0, -1.0, 0.0, 0.3, 30.0, 700.0] {
            let point = UnitPoint::from_logit(l);
            assert_eq!(identity.ln_abs_gap(&point), f64::NEG_INFINITY);
        }
        assert!(identity.diagonal_crossings().is_empty());
        assert_eq!(identity.true_calibration_error(|_| 0.0, 2.0), Ok(0.0));
        // Knots that do not bend it keep it the identity.
        let knotted = MonotoneCurve::new(0.0, vec![-3.0, 0.7, 5.0], vec![1.0; 4]).unwrap();
        assert!(knotted.is_identity());
        assert_eq!(
            knotted.ln_abs_gap(&UnitPoint::from_logit(4.0)),
            f64::NEG_INFINITY
        );
        // Anything else is not.
        assert!(!MonotoneCurve::new(1e-300, vec![], vec![1.0])
            .unwrap()
            .is_identity());
        assert!(!MonotoneCurve::new(0.0, vec![2.0], vec![1.0, 1.0 + 1e-15])
            .unwrap()
            .is_identity());
    }

    /// Sign changes and zero runs of c − T(c) on a fine log-odds grid in [−30, 30] (the
    /// per-segment form is not used).
    fn brute_force_boundaries(curve: &MonotoneCurve) -> Vec<f64> {
        let gap = |z: f64| naive_eta(curve, z) - z;
        let mut found = Vec::new();
        let step = 1e-3;
        let mut previous = gap(-30.0);
        let mut z = -30.0;
        while z < 30.0 {
            z += step;
            let current = gap(z);
            // The zero runs of these cases are exact in the naive form too.
            let zero = |g: f64| g == 0.0;
            if previous * current < 0.0 || zero(previous) != zero(current) {
                found.push(z);
            }
            previous = current;
        }
        found
    }

    #[test]
    fn diagonal_crossings_match_brute_force() {
        let cases = [
            // η = 1 + 0.5z: one crossing at 2.
            (MonotoneCurve::new(1.0, vec![], vec![0.5]).unwrap(), 1),
            // Steep–flat–steep through the origin: crossings at −0.75, 0 and 0.75.
            (
                MonotoneCurve::new(1.5, vec![-0.5, 0.5], vec![3.0, 0.0, 3.0]).unwrap(),
                3,
            ),
            // Always above the diagonal: none.
            (
                MonotoneCurve::new(2.0, vec![-1.0, 1.0], vec![1.0, 0.5, 1.5]).unwrap(),
                0,
            ),
            // Segment [0, 2] on the diagonal (slope 1, c = 0), off it on both sides: its
            // two ends.
            (
                MonotoneCurve::new(0.0, vec![0.0, 2.0], vec![0.5, 1.0, 2.0]).unwrap(),
                2,
            ),
            // On the diagonal up to 1, then above it for good: only the knot at 1.
            (
                MonotoneCurve::new(0.0, vec![1.0], vec![1.0, 2.0]).unwrap(),
                1,
            ),
            // Touches the diagonal at the knot 1 without changing sign (V shape from above).
            (
                MonotoneCurve::new(1.0, vec![1.0], vec![0.0, 2.0]).unwrap(),
                1,
            ),
        ];
        for (curve, expected) in cases {
            let crossings = curve.crossing_logits();
            assert_eq!(crossings.len(), expected, "{curve}: {crossings:?}");
            let brute = brute_force_boundaries(&curve);
            // A touching point has no sign change and no zero run: the grid misses it.
            let touching = expected == 1 && curve.knots() == [1.0] && curve.slopes()[0] == 0.0;
            if !touching {
                assert_eq!(brute.len(), expected, "{curve} (brute force) {brute:?}");
                for (z, b) in crossings.iter().zip(&brute) {
                    assert!((z - b).abs() < 2e-3, "{curve}: {z} vs {b}");
                }
            }
            for z in &crossings {
                assert!(
                    (naive_eta(&curve, *z) - z).abs() < 1e-12,
                    "{curve}: residual at {z}"
                );
            }
            for pair in crossings.windows(2) {
                assert!(pair[0] < pair[1]);
            }
        }
        // Knots and crossings together, sorted, no repeats.
        let curve = MonotoneCurve::new(1.5, vec![-0.5, 0.5], vec![3.0, 0.0, 3.0]).unwrap();
        let breaks: Vec<f64> = curve
            .quadrature_breaks()
            .iter()
            .map(|p| p.logit())
            .collect();
        let expected = [-0.75, -0.5, 0.0, 0.5, 0.75];
        assert_eq!(breaks.len(), expected.len(), "{breaks:?}");
        for (b, e) in breaks.iter().zip(expected) {
            assert!((b - e).abs() < 1e-15, "{breaks:?}");
        }
        let curve = MonotoneCurve::new(0.0, vec![0.0, 2.0], vec![0.5, 1.0, 2.0]).unwrap();
        assert_eq!(curve.quadrature_breaks().len(), 2);
    }

    /// Composite Simpson of |c − T(c)|^p against Beta(2, 3) (smooth, zero at both ends),
    /// with T from the naive η.
    fn simpson_tce(curve: &MonotoneCurve, p: f64) -> f64 {
        let density = Beta::new(2.0, 3.0).unwrap();
        let intervals = 400_000;
        let h = 1.0 / f64::from(intervals);
        let f = |x: f64| {
            if x <= 0.0 || x >= 1.0 {
                return 0.0;
            }
            let t = sigma(naive_eta(curve, (x / (1.0 - x)).ln()));
            (x - t).abs().powf(p) * density.pdf(x)
        };
        let mut sum = f(0.0) + f(1.0);
        for i in 1..intervals {
            sum += if i % 2 == 1 { 4.0 } else { 2.0 } * f(f64::from(i) * h);
        }
        (sum * h / 3.0).powf(1.0 / p)
    }

    #[test]
    fn tce_against_simpson() {
        let density = Beta::new(2.0, 3.0).unwrap();
        for curve in samples() {
            for p in [1.0, 2.0, 1.5] {
                let expected = simpson_tce(&curve, p);
                let actual = curve
                    .true_calibration_error(|x| density.ln_pdf_at(x), p)
                    .unwrap();
                // Simpson's own error at the kinks (knots, crossings) is O(h^2) relative.
                assert!(
                    ((actual - expected) / expected).abs() < 1e-7,
                    "{curve}, p = {p}: {actual} vs {expected}"
                );
            }
        }
    }

    #[test]
    fn tce_against_the_closed_form_curves_on_singular_densities() {
        // Knots that do not bend η make the logistic_log_odds curve, whose TCE the
        // simulator computes by its own quadrature (split at its one crossing only); the
        // same for the paper's Beta(2.8, 0.05) and Beta(1.1, 0.1).
        let spline = MonotoneCurve::new(-0.4, vec![-2.0, 1.0, 4.0, 9.0], vec![1.3; 5]).unwrap();
        let glm = Curve::logistic_log_odds(-0.4, 1.3).unwrap();
        for (a, b) in [(2.8, 0.05), (1.1, 0.1), (0.3, 0.7)] {
            let density = Beta::new(a, b).unwrap();
            for p in [1.0, 2.0, 3.0] {
                let expected = tce::by_quadrature(&density, &glm, p).unwrap();
                let actual = spline
                    .true_calibration_error(|x| density.ln_pdf_at(x), p)
                    .unwrap();
                assert!(
                    ((actual - expected) / expected).abs() < 1e-10,
                    "Beta({a}, {b}), p = {p}: {actual} vs {expected}"
                );
            }
        }
        assert!(matches!(
            spline.true_calibration_error(|_| 0.0, 0.5),
            Err(TceError::InvalidExponent(_))
        ));
    }

    #[test]
    fn tce_against_monte_carlo_on_a_singular_density() {
        // A bent spline against Beta(1.1, 0.1), by plain Monte Carlo over 4·10^6 draws:
        // the mean of |c − T(c)|² within 5 standard errors.
        use rand::SeedableRng;
        let density = Beta::new(1.1, 0.1).unwrap();
        let curve =
            MonotoneCurve::new(0.5, vec![-1.0, 2.0, 6.0], vec![0.2, 1.7, 0.4, 1.1]).unwrap();
        let exact = curve
            .true_calibration_error(|x| density.ln_pdf_at(x), 2.0)
            .unwrap();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(36);
        let draws = 4_000_000;
        let (mut sum, mut sum_sq) = (0.0, 0.0);
        for _ in 0..draws {
            let c = density.sample(&mut rng);
            let g = (c - curve.eval(c)).powi(2);
            sum += g;
            sum_sq += g * g;
        }
        let mean = sum / f64::from(draws);
        let se = ((sum_sq / f64::from(draws) - mean * mean) / f64::from(draws)).sqrt();
        assert!(
            (exact * exact - mean).abs() < 5.0 * se,
            "{} vs {mean} ± {se}",
            exact * exact
        );
    }
}
