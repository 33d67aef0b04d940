//! Calibration curves T(c) = P(y = 1 | f = c) of the simulator (SPEC §7's table).
//!
//! | family | T(c) | valid parameters |
//! |---|---|---|
//! | `polynomial` | c^d | d ≥ 0 |
//! | `flip_polynomial` | 1 − (1−c)^d | d ≥ 0 |
//! | `two_param_polynomial` | e^a · c^b | b ≥ 0 and a ≤ 0 |
//! | `two_param_flip_polynomial` | 1 − e^a (1−c)^b | b ≥ 0 and a ≤ 0 |
//! | `logistic_log_odds` | σ(a + b·logit c) | any finite a, b |
//! | `logistic_flip_polynomial` | σ(a + b·ln(1−c)) | any finite a, b |
//! | `logistic` | σ(a·(c − b)) | any finite a, b |
//!
//! Why those conditions are exact: a curve must stay in [0, 1] on (0, 1). For e^a c^b the
//! supremum over (0, 1) is e^a when b ≥ 0 (approached at c → 1) and +∞ when b < 0 (at
//! c → 0); it is never negative, so the condition is b ≥ 0 and e^a ≤ 1, i.e. a ≤ 0. c^d is
//! the case a = 0. The flip families are the same functions of 1 − c. A logistic is in
//! (0, 1) for every finite argument.
//!
//! Besides T itself, a curve gives ln|c − T(c)| from a [`UnitPoint`] (accurate where the
//! difference cancels and where c is within 1e−300 of an endpoint), and the points where T
//! crosses the diagonal, where the integrand |c − T(c)|^p has a kink: quadrature splits
//! there.

use core::fmt;
use core::str::FromStr;

use super::unit_point::{ln_abs_expm1, scale_ln, sigmoid, softplus, UnitPoint};

/// The seven curve families.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CurveKind {
    /// T(c) = c^d.
    Polynomial,
    /// T(c) = 1 − (1−c)^d.
    FlipPolynomial,
    /// T(c) = e^a · c^b (a binomial GLM with log link and log transform).
    TwoParamPolynomial,
    /// T(c) = 1 − e^a (1−c)^b (logflip link, logflip transform).
    TwoParamFlipPolynomial,
    /// T(c) = σ(a + b·logit c) (logit link, logit transform).
    LogisticLogOdds,
    /// T(c) = σ(a + b·ln(1−c)) (logit link, logflip transform).
    LogisticFlipPolynomial,
    /// T(c) = σ(a·(c − b)).
    Logistic,
}

impl CurveKind {
    /// Every family, in SPEC order.
    pub const ALL: [CurveKind; 7] = [
        CurveKind::Polynomial,
        CurveKind::FlipPolynomial,
        CurveKind::TwoParamPolynomial,
        CurveKind::TwoParamFlipPolynomial,
        CurveKind::LogisticLogOdds,
        CurveKind::LogisticFlipPolynomial,
        CurveKind::Logistic,
    ];

    /// The family's name as in SPEC §7 (and on the command line).
    pub fn name(self) -> &'static str {
        match self {
            CurveKind::Polynomial => "polynomial",
            CurveKind::FlipPolynomial => "flip_polynomial",
            CurveKind::TwoParamPolynomial => "two_param_polynomial",
            CurveKind::TwoParamFlipPolynomial => "two_param_flip_polynomial",
            CurveKind::LogisticLogOdds => "logistic_log_odds",
            CurveKind::LogisticFlipPolynomial => "logistic_flip_polynomial",
            CurveKind::Logistic => "logistic",
        }
    }

    /// Whether the family takes the single exponent d (else it takes a and b).
    pub fn takes_exponent_d(self) -> bool {
        matches!(self, CurveKind::Polynomial | CurveKind::FlipPolynomial)
    }
}

impl fmt::Display for CurveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CurveKind {
    type Err = CurveError;

    /// Parses a family name; `-` is accepted for `_` (`two-param-polynomial`).
    fn from_str(s: &str) -> Result<CurveKind, CurveError> {
        let normalized = s.trim().replace('-', "_");
        CurveKind::ALL
            .into_iter()
            .find(|kind| kind.name() == normalized)
            .ok_or_else(|| CurveError::UnknownName(s.to_string()))
    }
}

/// Why a curve was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum CurveError {
    /// No family has this name.
    UnknownName(String),
    /// The family needs this parameter and it was not given.
    MissingParameter {
        /// The family.
        kind: CurveKind,
        /// The missing parameter's name (`d`, `a` or `b`).
        parameter: &'static str,
    },
    /// The family does not use this parameter; it was given anyway (never ignored silently).
    UnexpectedParameter {
        /// The family.
        kind: CurveKind,
        /// The superfluous parameter's name.
        parameter: &'static str,
    },
    /// A parameter is NaN or infinite.
    NonFiniteParameter {
        /// The parameter's name.
        parameter: &'static str,
        /// Its value.
        value: f64,
    },
    /// The exponent (d, or b of the two-parameter polynomials) is negative: T would exceed
    /// 1 near the endpoint where its base goes to 0.
    NegativeExponent {
        /// `d` or `b`.
        parameter: &'static str,
        /// Its value.
        value: f64,
    },
    /// a > 0 in e^a · (…)^b: T would exceed 1 (or go below 0 for the flip family) near
    /// the endpoint where the base goes to 1.
    ScaleAboveOne {
        /// The value of a.
        a: f64,
    },
}

impl fmt::Display for CurveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownName(name) => write!(
                f,
                "unknown calibration curve {name:?} (expected one of: {})",
                CurveKind::ALL.map(CurveKind::name).join(", ")
            ),
            Self::MissingParameter { kind, parameter } => {
                write!(f, "curve {kind} needs parameter {parameter}")
            }
            Self::UnexpectedParameter { kind, parameter } => {
                write!(f, "curve {kind} does not take parameter {parameter}")
            }
            Self::NonFiniteParameter { parameter, value } => {
                write!(f, "curve parameter {parameter} must be finite, got {value}")
            }
            Self::NegativeExponent { parameter, value } => write!(
                f,
                "curve exponent {parameter} must be >= 0 (else T leaves [0, 1]), got {value}"
            ),
            Self::ScaleAboveOne { a } => {
                write!(
                    f,
                    "curve parameter a must be <= 0 (else T leaves [0, 1]), got {a}"
                )
            }
        }
    }
}

impl std::error::Error for CurveError {}

/// Curve parameters as they come from a command line: each optional, checked against what
/// the family takes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CurveParams {
    /// The exponent of `polynomial` and `flip_polynomial`.
    pub d: Option<f64>,
    /// The first parameter of the two-parameter families.
    pub a: Option<f64>,
    /// The second parameter of the two-parameter families.
    pub b: Option<f64>,
}

/// A validated calibration curve: T maps [0, 1] into [0, 1].
///
/// Fields are private so that only the validating constructors can build one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Curve {
    kind: CurveKind,
    /// e^a scale (power families) or first logistic parameter; 0 for the one-parameter
    /// polynomials.
    a: f64,
    /// Exponent (power families; d of the one-parameter polynomials) or second logistic
    /// parameter.
    b: f64,
}

fn finite(parameter: &'static str, value: f64) -> Result<f64, CurveError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(CurveError::NonFiniteParameter { parameter, value })
    }
}

fn exponent(parameter: &'static str, value: f64) -> Result<f64, CurveError> {
    let value = finite(parameter, value)?;
    if value < 0.0 {
        return Err(CurveError::NegativeExponent { parameter, value });
    }
    Ok(value)
}

fn power_scale(a: f64) -> Result<f64, CurveError> {
    let a = finite("a", a)?;
    if a > 0.0 {
        return Err(CurveError::ScaleAboveOne { a });
    }
    Ok(a)
}

/// Half-width of the log-odds range searched for diagonal crossings. Beyond |ℓ| = 745,
/// σ(ℓ) is within e^−745 (below the smallest subnormal) of an endpoint, where a kink can
/// no longer affect a quadrature in f64.
const LOGIT_SEARCH_LIMIT: f64 = 745.0;

impl Curve {
    /// T(c) = c^d, d ≥ 0 (d = 1: perfectly calibrated).
    pub fn polynomial(d: f64) -> Result<Curve, CurveError> {
        Ok(Curve {
            kind: CurveKind::Polynomial,
            a: 0.0,
            b: exponent("d", d)?,
        })
    }

    /// T(c) = 1 − (1−c)^d, d ≥ 0.
    pub fn flip_polynomial(d: f64) -> Result<Curve, CurveError> {
        Ok(Curve {
            kind: CurveKind::FlipPolynomial,
            a: 0.0,
            b: exponent("d", d)?,
        })
    }

    /// T(c) = e^a · c^b, b ≥ 0 and a ≤ 0.
    pub fn two_param_polynomial(a: f64, b: f64) -> Result<Curve, CurveError> {
        let b = exponent("b", b)?;
        Ok(Curve {
            kind: CurveKind::TwoParamPolynomial,
            a: power_scale(a)?,
            b,
        })
    }

    /// T(c) = 1 − e^a (1−c)^b, b ≥ 0 and a ≤ 0.
    pub fn two_param_flip_polynomial(a: f64, b: f64) -> Result<Curve, CurveError> {
        let b = exponent("b", b)?;
        Ok(Curve {
            kind: CurveKind::TwoParamFlipPolynomial,
            a: power_scale(a)?,
            b,
        })
    }

    /// T(c) = σ(a + b·logit c), a and b finite.
    pub fn logistic_log_odds(a: f64, b: f64) -> Result<Curve, CurveError> {
        let (a, b) = (finite("a", a)?, finite("b", b)?);
        Ok(Curve {
            kind: CurveKind::LogisticLogOdds,
            a,
            b,
        })
    }

    /// T(c) = σ(a + b·ln(1−c)), a and b finite.
    pub fn logistic_flip_polynomial(a: f64, b: f64) -> Result<Curve, CurveError> {
        let (a, b) = (finite("a", a)?, finite("b", b)?);
        Ok(Curve {
            kind: CurveKind::LogisticFlipPolynomial,
            a,
            b,
        })
    }

    /// T(c) = σ(a·(c − b)), a and b finite.
    pub fn logistic(a: f64, b: f64) -> Result<Curve, CurveError> {
        let (a, b) = (finite("a", a)?, finite("b", b)?);
        Ok(Curve {
            kind: CurveKind::Logistic,
            a,
            b,
        })
    }

    /// A curve of the given family from optional parameters: the ones the family takes must
    /// be present, the others absent.
    pub fn new(kind: CurveKind, params: CurveParams) -> Result<Curve, CurveError> {
        let require = |parameter: &'static str, value: Option<f64>| {
            value.ok_or(CurveError::MissingParameter { kind, parameter })
        };
        let refuse = |parameter: &'static str, value: Option<f64>| match value {
            Some(_) => Err(CurveError::UnexpectedParameter { kind, parameter }),
            None => Ok(()),
        };
        if kind.takes_exponent_d() {
            refuse("a", params.a)?;
            refuse("b", params.b)?;
            let d = require("d", params.d)?;
            return match kind {
                CurveKind::Polynomial => Curve::polynomial(d),
                _ => Curve::flip_polynomial(d),
            };
        }
        refuse("d", params.d)?;
        let (a, b) = (require("a", params.a)?, require("b", params.b)?);
        match kind {
            CurveKind::TwoParamPolynomial => Curve::two_param_polynomial(a, b),
            CurveKind::TwoParamFlipPolynomial => Curve::two_param_flip_polynomial(a, b),
            CurveKind::LogisticLogOdds => Curve::logistic_log_odds(a, b),
            CurveKind::LogisticFlipPolynomial => Curve::logistic_flip_polynomial(a, b),
            CurveKind::Logistic => Curve::logistic(a, b),
            CurveKind::Polynomial | CurveKind::FlipPolynomial => unreachable!("handled above"),
        }
    }

    /// Parses a family name and builds the curve, as a command line would:
    /// `--curve polynomial --d 2` is `Curve::from_name("polynomial", CurveParams { d: Some(2.0), ..Default::default() })`.
    pub fn from_name(name: &str, params: CurveParams) -> Result<Curve, CurveError> {
        Curve::new(name.parse()?, params)
    }

    /// The family.
    pub fn kind(&self) -> CurveKind {
        self.kind
    }

    /// The family's name.
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// The parameters, as [`Curve::new`] takes them.
    pub fn params(&self) -> CurveParams {
        if self.kind.takes_exponent_d() {
            CurveParams {
                d: Some(self.b),
                ..CurveParams::default()
            }
        } else {
            CurveParams {
                d: None,
                a: Some(self.a),
                b: Some(self.b),
            }
        }
    }

    /// Whether T(c) = c identically (then TCE = 0 for every density).
    pub fn is_identity(&self) -> bool {
        match self.kind {
            CurveKind::Polynomial
            | CurveKind::FlipPolynomial
            | CurveKind::TwoParamPolynomial
            | CurveKind::TwoParamFlipPolynomial
            | CurveKind::LogisticLogOdds => self.a == 0.0 && self.b == 1.0,
            CurveKind::LogisticFlipPolynomial | CurveKind::Logistic => false,
        }
    }

    /// T(c) for c ∈ [0, 1] (the result is meaningless outside).
    pub fn eval(&self, c: f64) -> f64 {
        debug_assert!(
            (0.0..=1.0).contains(&c),
            "calibration curve evaluated at {c}"
        );
        self.eval_at(&UnitPoint::from_x(c))
    }

    /// T at a point given with its complement and logarithms.
    pub fn eval_at(&self, point: &UnitPoint) -> f64 {
        let (a, b) = (self.a, self.b);
        match self.kind {
            CurveKind::Polynomial | CurveKind::TwoParamPolynomial => {
                (a + scale_ln(b, point.ln_x)).exp()
            }
            // 1 − e^a (1−c)^b through expm1: accurate where T is near 0.
            CurveKind::FlipPolynomial | CurveKind::TwoParamFlipPolynomial => {
                -(a + scale_ln(b, point.ln_one_minus_x)).exp_m1()
            }
            _ => sigmoid(self.logistic_argument(point)),
        }
    }

    /// z with T = σ(z), for the three logistic families.
    fn logistic_argument(&self, point: &UnitPoint) -> f64 {
        let (a, b) = (self.a, self.b);
        match self.kind {
            CurveKind::LogisticLogOdds => a + scale_ln(b, point.logit()),
            CurveKind::LogisticFlipPolynomial => a + scale_ln(b, point.ln_one_minus_x),
            CurveKind::Logistic => a * (point.x - b),
            _ => unreachable!("not a logistic family"),
        }
    }

    /// ln|c − T(c)| at an interior point (ln x and ln(1 − x) finite), −∞ where T(c) = c.
    ///
    /// Each family factors the difference so that it never cancels:
    /// c − e^a c^b = −c·expm1(a + (b−1) ln c); the flip families are that in 1 − c; and for
    /// T = σ(z), c − σ(z) = σ(ℓ) − σ(z) = −σ(ℓ) σ(−z) expm1(z − ℓ) with ℓ = logit c.
    pub fn ln_abs_gap(&self, point: &UnitPoint) -> f64 {
        let (a, b) = (self.a, self.b);
        match self.kind {
            CurveKind::Polynomial | CurveKind::TwoParamPolynomial => {
                point.ln_x + ln_abs_expm1(a + (b - 1.0) * point.ln_x)
            }
            CurveKind::FlipPolynomial | CurveKind::TwoParamFlipPolynomial => {
                point.ln_one_minus_x + ln_abs_expm1(a + (b - 1.0) * point.ln_one_minus_x)
            }
            _ => {
                let z = self.logistic_argument(point);
                let z_minus_logit = match self.kind {
                    // a + (b − 1) ℓ: exactly a when b = 1, however large ℓ is.
                    CurveKind::LogisticLogOdds => a + (b - 1.0) * point.logit(),
                    _ => z - point.logit(),
                };
                point.ln_x - softplus(z) + ln_abs_expm1(z_minus_logit)
            }
        }
    }

    /// The points of (0, 1) where c − T(c) changes sign, in increasing order.
    ///
    /// Closed forms for the power families and `logistic_log_odds`; bisection in log-odds
    /// for the other two logistic families, on pieces where the sign function is monotone.
    pub fn diagonal_crossings(&self) -> Vec<UnitPoint> {
        let (a, b) = (self.a, self.b);
        if self.is_identity() {
            return Vec::new();
        }
        match self.kind {
            // c = e^a c^b ⇔ (1 − b) ln c = a.
            CurveKind::Polynomial | CurveKind::TwoParamPolynomial => {
                let q = a / (1.0 - b);
                if b != 1.0 && q < 0.0 {
                    vec![UnitPoint::from_ln_x(q)]
                } else {
                    Vec::new()
                }
            }
            CurveKind::FlipPolynomial | CurveKind::TwoParamFlipPolynomial => {
                let q = a / (1.0 - b);
                if b != 1.0 && q < 0.0 {
                    vec![UnitPoint::from_ln_one_minus_x(q)]
                } else {
                    Vec::new()
                }
            }
            // ℓ = a + bℓ.
            CurveKind::LogisticLogOdds => {
                if b == 1.0 {
                    Vec::new()
                } else {
                    vec![UnitPoint::from_logit(a / (1.0 - b))]
                }
            }
            CurveKind::LogisticFlipPolynomial => {
                // ψ(ℓ) = ℓ − a + b·softplus(ℓ), ψ' = 1 + bσ(ℓ): monotone unless b < −1,
                // when it has a single maximum at σ(ℓ) = −1/b, i.e. ℓ = −ln(−b − 1).
                let psi = |l: f64| l - a + b * softplus(l);
                let breaks = if b < -1.0 {
                    vec![-(-b - 1.0).ln()]
                } else {
                    Vec::new()
                };
                sign_changes_in_logit(psi, &breaks)
            }
            CurveKind::Logistic => {
                // ψ(ℓ) = ℓ − a(σ(ℓ) − b), ψ' = 1 − aσ(1 − σ): monotone unless a > 4, when
                // ψ' = 0 at σ = (1 ± r)/2, r = √(1 − 4/a), i.e. ℓ = ±2 atanh r.
                let psi = |l: f64| l - a * (sigmoid(l) - b);
                let breaks = if a > 4.0 {
                    let turn = 2.0 * (1.0 - 4.0 / a).sqrt().atanh();
                    vec![-turn, turn]
                } else {
                    Vec::new()
                };
                sign_changes_in_logit(psi, &breaks)
            }
        }
    }
}

/// The sign changes of ψ on [−L, L], where ψ is monotone between consecutive `breaks`
/// (sorted): one bisection per piece whose ends have strictly opposite signs.
fn sign_changes_in_logit<F: Fn(f64) -> f64>(psi: F, breaks: &[f64]) -> Vec<UnitPoint> {
    let mut ends = vec![-LOGIT_SEARCH_LIMIT];
    ends.extend(
        breaks
            .iter()
            .copied()
            .filter(|l| l.abs() < LOGIT_SEARCH_LIMIT),
    );
    ends.push(LOGIT_SEARCH_LIMIT);
    let mut crossings = Vec::new();
    for piece in ends.windows(2) {
        let (mut lo, mut hi) = (piece[0], piece[1]);
        let (psi_lo, psi_hi) = (psi(lo), psi(hi));
        let opposite_signs = (psi_lo < 0.0 && psi_hi > 0.0) || (psi_lo > 0.0 && psi_hi < 0.0);
        if !opposite_signs {
            continue;
        }
        let lo_negative = psi_lo < 0.0;
        // Bisect until the midpoint is one of the ends: full f64 resolution.
        loop {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            let value = psi(mid);
            if value == 0.0 {
                lo = mid;
                hi = mid;
                break;
            }
            if (value < 0.0) == lo_negative {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        crossings.push(UnitPoint::from_logit(0.5 * (lo + hi)));
    }
    crossings
}

impl fmt::Display for Curve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind.takes_exponent_d() {
            write!(f, "{}(d={})", self.kind, self.b)
        } else {
            write!(f, "{}(a={}, b={})", self.kind, self.a, self.b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sigma(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }

    /// T written out directly from SPEC §7's table.
    type NaiveCurve = Box<dyn Fn(f64) -> f64>;

    /// Every family with one parameter set, its T written out naively.
    fn samples() -> Vec<(Curve, NaiveCurve)> {
        vec![
            (
                Curve::polynomial(2.5).unwrap(),
                Box::new(|c: f64| c.powf(2.5)),
            ),
            (
                Curve::flip_polynomial(0.5).unwrap(),
                Box::new(|c: f64| 1.0 - (1.0 - c).powf(0.5)),
            ),
            (
                Curve::two_param_polynomial(-0.2, 0.7).unwrap(),
                Box::new(|c: f64| (-0.2f64).exp() * c.powf(0.7)),
            ),
            (
                Curve::two_param_flip_polynomial(-0.1, 1.8).unwrap(),
                Box::new(|c: f64| 1.0 - (-0.1f64).exp() * (1.0 - c).powf(1.8)),
            ),
            (
                Curve::logistic_log_odds(0.3, 0.6).unwrap(),
                Box::new(|c: f64| sigma(0.3 + 0.6 * (c / (1.0 - c)).ln())),
            ),
            (
                Curve::logistic_flip_polynomial(1.0, -2.5).unwrap(),
                Box::new(|c: f64| sigma(1.0 - 2.5 * (1.0 - c).ln())),
            ),
            (
                Curve::logistic(12.0, 0.45).unwrap(),
                Box::new(|c: f64| sigma(12.0 * (c - 0.45))),
            ),
        ]
    }

    #[test]
    fn eval_and_gap_match_the_naive_formulas() {
        for (curve, naive) in samples() {
            for i in 1..100 {
                let c = i as f64 / 100.0;
                let t = curve.eval(c);
                assert!(
                    (t - naive(c)).abs() < 1e-14,
                    "{curve} at {c}: {t} vs {}",
                    naive(c)
                );
                assert!((0.0..=1.0).contains(&t));
                let gap = (c - naive(c)).abs();
                let ln_gap = curve.ln_abs_gap(&UnitPoint::from_x(c));
                // Relative check where the gap is not itself rounding noise.
                if gap > 1e-6 {
                    assert!(
                        (ln_gap.exp() / gap - 1.0).abs() < 1e-9,
                        "{curve} gap at {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn endpoint_values() {
        assert_eq!(Curve::polynomial(2.0).unwrap().eval(0.0), 0.0);
        assert_eq!(Curve::polynomial(0.0).unwrap().eval(0.0), 1.0);
        assert_eq!(Curve::flip_polynomial(3.0).unwrap().eval(1.0), 1.0);
        assert_eq!(
            Curve::two_param_polynomial(-1.0, 0.0).unwrap().eval(0.0),
            (-1f64).exp()
        );
        assert_eq!(Curve::logistic_log_odds(0.5, 2.0).unwrap().eval(0.0), 0.0);
        assert_eq!(Curve::logistic_log_odds(0.5, -2.0).unwrap().eval(0.0), 1.0);
        assert_eq!(Curve::logistic_log_odds(0.0, 0.0).unwrap().eval(1.0), 0.5);
        assert_eq!(
            Curve::logistic_flip_polynomial(0.0, 0.0).unwrap().eval(1.0),
            0.5
        );
        assert_eq!(
            Curve::logistic_flip_polynomial(0.0, 1.0).unwrap().eval(1.0),
            0.0
        );
    }

    #[test]
    fn gap_stays_accurate_within_1e_minus_300_of_the_ends() {
        // c − c² = c(1 − c): at 1 − c = 1e−300 the gap is 1e−300 although c == 1.0.
        let near_one = UnitPoint::from_ln_one_minus_x(-300.0 * 10f64.ln());
        let gap = Curve::polynomial(2.0).unwrap().ln_abs_gap(&near_one);
        assert!((gap - (-300.0 * 10f64.ln())).abs() < 1e-12);
        // σ(logit c) − c = 0: the identity has no gap even at ℓ = 600.
        let identity = Curve::logistic_log_odds(0.0, 1.0).unwrap();
        assert_eq!(
            identity.ln_abs_gap(&UnitPoint::from_logit(600.0)),
            f64::NEG_INFINITY
        );
        assert!(identity.is_identity());
        // Near 0, 1 − (1−c)^2 = 2c − c²: gap = c − c² ≈ c.
        let near_zero = UnitPoint::from_ln_x(-500.0);
        let gap = Curve::flip_polynomial(2.0).unwrap().ln_abs_gap(&near_zero);
        assert!((gap + 500.0).abs() < 1e-12);
    }

    #[test]
    fn refuses_curves_that_leave_the_unit_interval() {
        assert_eq!(
            Curve::polynomial(-1.0),
            Err(CurveError::NegativeExponent {
                parameter: "d",
                value: -1.0
            })
        );
        assert_eq!(
            Curve::two_param_polynomial(0.1, 1.0),
            Err(CurveError::ScaleAboveOne { a: 0.1 })
        );
        assert_eq!(
            Curve::two_param_flip_polynomial(-0.1, -0.5),
            Err(CurveError::NegativeExponent {
                parameter: "b",
                value: -0.5
            })
        );
        assert_eq!(
            Curve::logistic(f64::NAN, 1.0).unwrap_err().to_string(),
            "curve parameter a must be finite, got NaN"
        );
        assert!(matches!(
            Curve::logistic_log_odds(1.0, f64::INFINITY),
            Err(CurveError::NonFiniteParameter { parameter: "b", .. })
        ));
    }

    #[test]
    fn parses_names_and_checks_parameters() {
        let d2 = CurveParams {
            d: Some(2.0),
            ..CurveParams::default()
        };
        assert_eq!(Curve::from_name("polynomial", d2), Curve::polynomial(2.0));
        let ab = CurveParams {
            d: None,
            a: Some(3.0),
            b: Some(0.5),
        };
        assert_eq!(Curve::from_name("logistic", ab), Curve::logistic(3.0, 0.5));
        assert_eq!(
            Curve::from_name(
                "two-param-flip-polynomial",
                CurveParams {
                    a: Some(-1.0),
                    ..ab
                }
            ),
            Curve::two_param_flip_polynomial(-1.0, 0.5)
        );
        assert_eq!(
            Curve::from_name("cubic", d2),
            Err(CurveError::UnknownName("cubic".to_string()))
        );
        assert_eq!(
            Curve::from_name("logistic", CurveParams { b: None, ..ab }),
            Err(CurveError::MissingParameter {
                kind: CurveKind::Logistic,
                parameter: "b"
            })
        );
        assert_eq!(
            Curve::from_name("polynomial", CurveParams { a: Some(1.0), ..d2 }),
            Err(CurveError::UnexpectedParameter {
                kind: CurveKind::Polynomial,
                parameter: "a"
            })
        );
        for kind in CurveKind::ALL {
            assert_eq!(kind.name().parse::<CurveKind>(), Ok(kind));
        }
        let curve = Curve::logistic(3.0, 0.5).unwrap();
        assert_eq!(Curve::new(curve.kind(), curve.params()), Ok(curve));
        assert_eq!(curve.to_string(), "logistic(a=3, b=0.5)");
        assert_eq!(
            Curve::polynomial(2.0).unwrap().to_string(),
            "polynomial(d=2)"
        );
    }

    /// Brute force: sign changes of c − T(c) on a fine grid of log-odds in [−30, 30], where
    /// 1 − c ≥ 1e−13 stays far above the rounding of the naive difference.
    fn brute_force_crossings(curve: &Curve) -> Vec<f64> {
        let mut found = Vec::new();
        let gap = |l: f64| {
            let p = UnitPoint::from_logit(l);
            p.x - curve.eval_at(&p)
        };
        let mut previous = gap(-30.0);
        let mut l = -30.0;
        while l < 30.0 {
            l += 1e-3;
            let current = gap(l);
            if previous * current < 0.0 {
                found.push(l);
            }
            previous = current;
        }
        found
    }

    #[test]
    fn diagonal_crossings_match_brute_force() {
        let curves = [
            Curve::polynomial(3.0).unwrap(),
            Curve::two_param_polynomial(-0.5, 0.5).unwrap(),
            Curve::two_param_polynomial(-0.5, 1.5).unwrap(),
            Curve::two_param_flip_polynomial(-0.3, 0.2).unwrap(),
            Curve::logistic_log_odds(0.4, 2.0).unwrap(),
            Curve::logistic_log_odds(0.4, -1.0).unwrap(),
            Curve::logistic_flip_polynomial(1.0, 2.0).unwrap(),
            Curve::logistic_flip_polynomial(-4.0, -5.0).unwrap(),
            Curve::logistic_flip_polynomial(-3.0, -1.0).unwrap(),
            Curve::logistic(10.0, 0.5).unwrap(),
            Curve::logistic(10.0, 0.3).unwrap(),
            Curve::logistic(2.0, 0.7).unwrap(),
            Curve::logistic(-3.0, 0.7).unwrap(),
        ];
        let expected_counts = [0, 1, 0, 1, 1, 1, 1, 2, 1, 3, 1, 1, 1];
        for (curve, expected) in curves.iter().zip(expected_counts) {
            let crossings = curve.diagonal_crossings();
            let brute = brute_force_crossings(curve);
            assert_eq!(crossings.len(), expected, "{curve}");
            assert_eq!(brute.len(), expected, "{curve} (brute force)");
            for (point, l) in crossings.iter().zip(&brute) {
                assert!(
                    (point.logit() - l).abs() < 2e-3,
                    "{curve}: {} vs {l}",
                    point.logit()
                );
                let residual = point.x - curve.eval_at(point);
                assert!(residual.abs() < 1e-12, "{curve}: residual {residual}");
            }
        }
    }
}
