//! The standard normal distribution function and its inverse, for the BCa interval.

/// Φ(x), through erfc (accurate in both tails).
pub fn cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / core::f64::consts::SQRT_2)
}

/// Φ⁻¹(p) for p in (0, 1): Acklam's rational approximation (relative error 1.15e-9)
/// refined by one Halley step on [`cdf`], which brings it to about machine precision.
/// ±∞ at p = 0 and 1, NaN outside [0, 1].
pub fn quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    const A: [f64; 6] = [
        -3.969683028665376e+01,
        2.209460984245205e+02,
        -2.759285104469687e+02,
        1.383_577_518_672_69e2,
        -3.066479806614716e+01,
        2.506628277459239e+00,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e+01,
        1.615858368580409e+02,
        -1.556989798598866e+02,
        6.680131188771972e+01,
        -1.328068155288572e+01,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e+00,
        -2.549732539343734e+00,
        4.374664141464968e+00,
        2.938163982698783e+00,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-03,
        3.224671290700398e-01,
        2.445134137142996e+00,
        3.754408661907416e+00,
    ];
    const LOW: f64 = 0.02425;
    let tail = |q: f64| {
        let r = (-2.0 * q.ln()).sqrt();
        (((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5])
            / ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1.0)
    };
    let x = if p < LOW {
        tail(p)
    } else if p > 1.0 - LOW {
        -tail(1.0 - p)
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    // Halley: e = Φ(x) − p, u = e·√(2π)·exp(x²/2).
    let e = cdf(x) - p;
    let u = e * (2.0 * core::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert!((cdf(0.0) - 0.5).abs() < 1e-16);
        assert!((cdf(1.959963984540054) - 0.975).abs() < 1e-15);
        assert!((quantile(0.975) - 1.959963984540054).abs() < 1e-13);
        assert!((quantile(0.025) + 1.959963984540054).abs() < 1e-13);
        assert!((quantile(0.5)).abs() < 1e-15);
        // Φ⁻¹(1e-10) = −6.361340902404056 (scipy.stats.norm.ppf).
        assert!((quantile(1e-10) + 6.361340902404056).abs() < 1e-10);
        for &p in &[1e-6, 0.01, 0.1, 0.3, 0.7, 0.9, 0.999] {
            assert!((cdf(quantile(p)) - p).abs() < 1e-14 * p.max(1e-2), "{p}");
        }
        assert_eq!(quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(quantile(1.0), f64::INFINITY);
        assert!(quantile(1.5).is_nan());
    }
}
