//! A point of the unit interval carried with its complement and both logarithms.
//!
//! Beta densities with α < 1 or β < 1 put real mass within 1e-16 of an endpoint (for
//! Beta(2.8, 0.05) a sixth of all f64 draws are exactly 1.0). Near 1, `1.0 - x` has lost
//! every digit, so quadrature and the calibration curves work from a point that keeps x,
//! 1 − x, ln x and ln(1 − x) each to full relative precision, even where x or 1 − x
//! underflow (their logarithms stay finite).

/// x ∈ [0, 1] together with 1 − x, ln x and ln(1 − x), each accurate on its own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitPoint {
    /// x itself (may underflow to 0 while `ln_x` stays finite).
    pub x: f64,
    /// 1 − x, not computed as `1.0 - x` near 1.
    pub one_minus_x: f64,
    /// ln x (−∞ only at x = 0 exactly).
    pub ln_x: f64,
    /// ln(1 − x) (−∞ only at x = 1 exactly).
    pub ln_one_minus_x: f64,
}

impl UnitPoint {
    /// The left endpoint, x = 0.
    pub const ZERO: UnitPoint = UnitPoint {
        x: 0.0,
        one_minus_x: 1.0,
        ln_x: f64::NEG_INFINITY,
        ln_one_minus_x: 0.0,
    };

    /// The right endpoint, x = 1.
    pub const ONE: UnitPoint = UnitPoint {
        x: 1.0,
        one_minus_x: 0.0,
        ln_x: 0.0,
        ln_one_minus_x: f64::NEG_INFINITY,
    };

    /// From x ∈ [0, 1]; 1 − x is exact in f64 for x ≥ 0.5 (Sterbenz) and the logarithm of
    /// the larger of the two goes through `ln_1p` of the smaller.
    pub fn from_x(x: f64) -> UnitPoint {
        UnitPoint::from_pair(x, 1.0 - x)
    }

    /// From x and 1 − x supplied separately (each accurate relative to itself). The
    /// logarithm of the smaller one is taken directly, that of the larger via `ln_1p` of
    /// the smaller, so both are accurate.
    pub fn from_pair(x: f64, one_minus_x: f64) -> UnitPoint {
        let (ln_x, ln_one_minus_x) = if x <= one_minus_x {
            (x.ln(), (-x).ln_1p())
        } else {
            ((-one_minus_x).ln_1p(), one_minus_x.ln())
        };
        UnitPoint {
            x,
            one_minus_x,
            ln_x,
            ln_one_minus_x,
        }
    }

    /// From q = ln x ≤ 0.
    pub fn from_ln_x(q: f64) -> UnitPoint {
        let x = q.exp();
        let one_minus_x = -q.exp_m1();
        UnitPoint {
            x,
            one_minus_x,
            ln_x: q,
            ln_one_minus_x: ln_one_minus_exp(q),
        }
    }

    /// From q = ln(1 − x) ≤ 0.
    pub fn from_ln_one_minus_x(q: f64) -> UnitPoint {
        let p = UnitPoint::from_ln_x(q);
        p.complement()
    }

    /// From the log-odds ℓ = ln(x / (1 − x)) ∈ ℝ: x = σ(ℓ), 1 − x = σ(−ℓ).
    pub fn from_logit(logit: f64) -> UnitPoint {
        UnitPoint {
            x: sigmoid(logit),
            one_minus_x: sigmoid(-logit),
            ln_x: -softplus(-logit),
            ln_one_minus_x: -softplus(logit),
        }
    }

    /// The point 1 − x.
    pub fn complement(self) -> UnitPoint {
        UnitPoint {
            x: self.one_minus_x,
            one_minus_x: self.x,
            ln_x: self.ln_one_minus_x,
            ln_one_minus_x: self.ln_x,
        }
    }

    /// The log-odds ln x − ln(1 − x) (±∞ at the endpoints).
    pub fn logit(self) -> f64 {
        self.ln_x - self.ln_one_minus_x
    }
}

/// ln(1 + eˣ) without overflow for large x or loss of precision for very negative x.
pub fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// The logistic function σ(x) = 1 / (1 + e⁻ˣ), accurate in both tails.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// ln(1 − eᵠ) for q ≤ 0 (Mächler's rule: `ln(-expm1(q))` near 0, `ln_1p(-exp(q))` below
/// −ln 2).
pub fn ln_one_minus_exp(q: f64) -> f64 {
    if q > -core::f64::consts::LN_2 {
        (-q.exp_m1()).ln()
    } else {
        (-q.exp()).ln_1p()
    }
}

/// ln|eʸ − 1|, accurate for tiny |y| (where the difference cancels) and finite for y far
/// beyond the overflow of eʸ. −∞ at y = 0.
pub fn ln_abs_expm1(y: f64) -> f64 {
    if y > 0.0 {
        // eʸ − 1 = eʸ (1 − e⁻ʸ)
        y + ln_one_minus_exp(-y)
    } else {
        ln_one_minus_exp(y)
    }
}

/// b · ln v with the convention 0 · (−∞) = 0, so that v⁰ = 1 even at v = 0.
pub fn scale_ln(b: f64, ln_v: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        b * ln_v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complement_near_one_keeps_its_digits() {
        // x = 1 − 1e−20 is 1.0 in f64; its complement must still be 1e−20.
        let p = UnitPoint::from_ln_one_minus_x((1e-20f64).ln());
        assert_eq!(p.x, 1.0);
        assert!((p.one_minus_x / 1e-20 - 1.0).abs() < 1e-14);
        assert!((p.ln_x - (-1e-20)).abs() < 1e-34);
    }

    #[test]
    fn logit_round_trip() {
        for &l in &[-700.0, -30.0, -1.0, 0.0, 0.5, 40.0, 700.0] {
            let p = UnitPoint::from_logit(l);
            assert!((p.logit() - l).abs() <= 1e-13 * l.abs().max(1.0), "{l}");
        }
        let p = UnitPoint::from_logit(0.0);
        assert_eq!((p.x, p.one_minus_x), (0.5, 0.5));
    }

    #[test]
    fn from_x_matches_direct_logs() {
        let p = UnitPoint::from_x(0.25);
        assert_eq!(p.one_minus_x, 0.75);
        assert!((p.ln_x - 0.25f64.ln()).abs() < 1e-16);
        assert!((p.ln_one_minus_x - 0.75f64.ln()).abs() < 1e-16);
        let q = UnitPoint::from_x(1e-30);
        assert!((q.ln_one_minus_x + 1e-30).abs() < 1e-45);
    }

    #[test]
    fn ln_abs_expm1_in_every_regime() {
        assert!((ln_abs_expm1(1e-20) - (1e-20f64).ln()).abs() < 1e-12);
        assert!((ln_abs_expm1(-1e-20) - (1e-20f64).ln()).abs() < 1e-12);
        assert!((ln_abs_expm1(2000.0) - 2000.0).abs() < 1e-12);
        assert!((ln_abs_expm1(-2000.0)).abs() < 1e-300);
        assert!((ln_abs_expm1(1.0) - (1f64.exp() - 1.0).ln()).abs() < 1e-15);
        assert_eq!(ln_abs_expm1(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn softplus_and_sigmoid_tails() {
        assert!((softplus(-800.0)).abs() < 1e-300);
        assert_eq!(softplus(800.0), 800.0);
        assert!((softplus(0.0) - 2f64.ln()).abs() < 1e-16);
        assert!((sigmoid(-700.0) / (-700f64).exp() - 1.0).abs() < 1e-15);
        assert_eq!(sigmoid(40.0), 1.0);
        assert_eq!(scale_ln(0.0, f64::NEG_INFINITY), 0.0);
    }
}
