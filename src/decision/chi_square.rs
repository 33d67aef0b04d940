//! The χ² distribution's upper tail, for the Hosmer–Lemeshow test: P(χ²_k ≥ x) is the
//! regularized upper incomplete gamma function Q(k/2, x/2), computed as Numerical
//! Recipes computes it (§6.2): the series of P = 1 − Q below x < a + 1, the continued
//! fraction of Q (modified Lentz) above, so that a small tail is never 1 minus a number
//! close to 1. Relative error about 1e-14 where Q is above the smallest normal `f64`.

/// Steps the series or the continued fraction may take (each converges in far fewer for
/// the degrees of freedom of a test: about √a + 10).
const MAX_STEPS: usize = 10_000;

/// Where a step's change counts as settled.
const EPSILON: f64 = 1e-16;

/// P(χ²_k ≥ x) for k > 0 degrees of freedom: 1 for x ≤ 0, 0 for x = +∞; NaN for NaN or
/// k not a positive finite number.
pub fn survival(x: f64, k: f64) -> f64 {
    if x.is_nan() || !(k.is_finite() && k > 0.0) {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 1.0;
    }
    if x == f64::INFINITY {
        return 0.0;
    }
    upper_regularized_gamma(0.5 * k, 0.5 * x)
}

/// Q(a, x) = Γ(a, x) / Γ(a) for a > 0, x > 0.
fn upper_regularized_gamma(a: f64, x: f64) -> f64 {
    // ln of x^a e^(−x) / Γ(a), the factor both forms share.
    let ln_front = a * x.ln() - x - libm::lgamma(a);
    if x < a + 1.0 {
        // P(a, x) = x^a e^(−x) / Γ(a + 1) · Σ_j x^j / ((a + 1)…(a + j)).
        let (mut term, mut sum, mut denominator) = (1.0 / a, 1.0 / a, a);
        for _ in 0..MAX_STEPS {
            denominator += 1.0;
            term *= x / denominator;
            sum += term;
            if term.abs() < sum.abs() * EPSILON {
                break;
            }
        }
        (1.0 - sum * ln_front.exp()).clamp(0.0, 1.0)
    } else {
        // Q(a, x) = x^a e^(−x) / Γ(a) · 1 / (x + 1 − a − 1·(1 − a) / (x + 3 − a − …)).
        let tiny = f64::MIN_POSITIVE / EPSILON;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..MAX_STEPS {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let step = d * c;
            h *= step;
            if (step - 1.0).abs() < EPSILON {
                break;
            }
        }
        (ln_front.exp() * h).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For even k = 2m the tail has a closed form: e^(−x/2) Σ_{j<m} (x/2)^j / j!.
    fn even_closed_form(x: f64, k: u32) -> f64 {
        let half = x / 2.0;
        let (mut term, mut sum) = (1.0, 0.0);
        for j in 0..k / 2 {
            if j > 0 {
                term *= half / f64::from(j);
            }
            sum += term;
        }
        (-half).exp() * sum
    }

    #[test]
    fn even_degrees_of_freedom_match_the_closed_form() {
        for k in [2u32, 4, 8, 10, 20, 40] {
            for x in [0.01, 0.5, 1.0, 3.0, 7.9, 10.0, 15.5, 25.0, 60.0, 200.0] {
                let (got, want) = (survival(x, f64::from(k)), even_closed_form(x, k));
                assert!(
                    (got - want).abs() <= 1e-13 * want.max(1e-300),
                    "k = {k}, x = {x}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn one_degree_of_freedom_is_the_normal_two_sided_tail() {
        // P(χ²_1 ≥ z²) = P(|Z| ≥ z) = erfc(z / √2).
        for z in [0.1, 0.7, 1.0, 1.959963984540054, 3.0, 6.0, 10.0] {
            let (got, want) = (
                survival(z * z, 1.0),
                libm::erfc(z / core::f64::consts::SQRT_2),
            );
            assert!(
                (got - want).abs() <= 1e-13 * want,
                "z = {z}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn scipy_values_and_the_edges() {
        // scipy.stats.chi2.sf (scipy 1.16.3).
        for (x, k, want) in [
            (15.507313055865453, 8.0, 0.05),
            (18.307038053275146, 10.0, 0.05),
            (3.0, 7.0, 0.8850022316431506),
            (12.5, 3.0, 0.005852662593326735),
            (100.0, 13.0, 1.659026080708587e-15),
        ] {
            let got = survival(x, k);
            assert!(
                (got - want).abs() <= 1e-12 * want,
                "{x}, {k}: {got} vs {want}"
            );
        }
        assert_eq!(survival(0.0, 10.0), 1.0);
        assert_eq!(survival(-1.0, 10.0), 1.0);
        assert_eq!(survival(f64::INFINITY, 10.0), 0.0);
        assert!(survival(f64::NAN, 10.0).is_nan());
        assert!(survival(1.0, 0.0).is_nan());
    }
}
