//! The score density of a synthetic model: Beta(α, β) on [0, 1].

use core::fmt;

use rand::Rng;

use super::unit_point::UnitPoint;

/// Why Beta parameters were refused.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BetaError {
    /// α must be finite and > 0.
    InvalidAlpha(f64),
    /// β must be finite and > 0.
    InvalidBeta(f64),
}

impl fmt::Display for BetaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidAlpha(a) => write!(f, "Beta alpha must be finite and > 0, got {a}"),
            Self::InvalidBeta(b) => write!(f, "Beta beta must be finite and > 0, got {b}"),
        }
    }
}

impl std::error::Error for BetaError {}

/// Integer moment orders up to this use the exact product formula (see
/// [`Beta::raw_moment`]).
pub const PRODUCT_MOMENT_MAX_ORDER: f64 = 64.0;

/// ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b), for a, b > 0.
pub fn ln_beta_function(a: f64, b: f64) -> f64 {
    libm::lgamma(a) + libm::lgamma(b) - libm::lgamma(a + b)
}

/// The Beta(α, β) distribution, with validated parameters (both finite and > 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Beta {
    alpha: f64,
    beta: f64,
    /// ln B(α, β), the log normalising constant, computed once.
    ln_norm: f64,
}

impl Beta {
    /// Beta(α, β); refuses non-finite or non-positive parameters.
    pub fn new(alpha: f64, beta: f64) -> Result<Beta, BetaError> {
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(BetaError::InvalidAlpha(alpha));
        }
        if !(beta.is_finite() && beta > 0.0) {
            return Err(BetaError::InvalidBeta(beta));
        }
        Ok(Beta {
            alpha,
            beta,
            ln_norm: ln_beta_function(alpha, beta),
        })
    }

    /// α, the exponent of x.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// β, the exponent of 1 − x.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// ln B(α, β).
    pub fn ln_beta_function(&self) -> f64 {
        self.ln_norm
    }

    /// ln E[x^k] = ln B(α + k, β) − ln B(α, β) for real k ≥ 0 (also fine for k > −α).
    ///
    /// Written as lgamma differences so that no Beta function itself is formed: they
    /// underflow for large arguments long before their ratio does.
    pub fn ln_raw_moment(&self, k: f64) -> f64 {
        let (a, b) = (self.alpha, self.beta);
        libm::lgamma(a + k) - libm::lgamma(a) + libm::lgamma(a + b) - libm::lgamma(a + b + k)
    }

    /// E[x^k] = B(α + k, β) / B(α, β) for real k ≥ 0.
    ///
    /// Integer orders up to [`PRODUCT_MOMENT_MAX_ORDER`] use the product
    /// Π_{j<k} (α + j)/(α + β + j), accurate to about k ulps; other orders use lgamma
    /// differences, whose absolute error grows with the size of the lgamma values
    /// (see [`Beta::raw_moment_relative_error`]).
    pub fn raw_moment(&self, k: f64) -> f64 {
        if k == 0.0 {
            return 1.0;
        }
        if Beta::moment_by_product(k) {
            let (a, ab) = (self.alpha, self.alpha + self.beta);
            return (0..k as u32)
                .map(|j| (a + f64::from(j)) / (ab + f64::from(j)))
                .product();
        }
        self.ln_raw_moment(k).exp()
    }

    fn moment_by_product(k: f64) -> bool {
        k.fract() == 0.0 && (1.0..=PRODUCT_MOMENT_MAX_ORDER).contains(&k)
    }

    /// A bound (with a safety factor) on the relative rounding error of
    /// [`Beta::raw_moment`]`(k)`, for callers that subtract moments and must know how much
    /// of the difference is noise.
    pub fn raw_moment_relative_error(&self, k: f64) -> f64 {
        if k == 0.0 {
            return 0.0;
        }
        if Beta::moment_by_product(k) {
            return 4.0 * k * f64::EPSILON;
        }
        let (a, b) = (self.alpha, self.beta);
        let lgamma_magnitude: f64 = [a + k, a, a + b, a + b + k]
            .iter()
            .map(|&x| libm::lgamma(x).abs())
            .sum();
        4.0 * f64::EPSILON * (lgamma_magnitude + 1.0)
    }

    /// The mean α / (α + β).
    pub fn mean(&self) -> f64 {
        self.alpha / (self.alpha + self.beta)
    }

    /// The density at x: 0 outside [0, 1]; +∞ at an endpoint whose exponent is below 1.
    pub fn pdf(&self, x: f64) -> f64 {
        if !(0.0..=1.0).contains(&x) {
            return 0.0;
        }
        self.ln_pdf_at(&UnitPoint::from_x(x)).exp()
    }

    /// ln of the density at a point given with its logarithms (see [`UnitPoint`]), so that
    /// it stays finite and accurate within 1e−300 of the endpoints.
    pub fn ln_pdf_at(&self, point: &UnitPoint) -> f64 {
        // (α − 1) ln x with 0 · (−∞) = 0, so that Beta(1, β) has the finite value β at 0.
        let from_x = if self.alpha == 1.0 {
            0.0
        } else {
            (self.alpha - 1.0) * point.ln_x
        };
        let from_complement = if self.beta == 1.0 {
            0.0
        } else {
            (self.beta - 1.0) * point.ln_one_minus_x
        };
        from_x + from_complement - self.ln_norm
    }

    /// A sampler for this density (rand_distr's Beta).
    ///
    /// Draws are f64 and not shifted: for β ≪ 1 a large share of them are exactly 1.0
    /// (about 17% for Beta(2.8, 0.05)). That is the density's own mass within 1e−16 of 1,
    /// not a sampler defect.
    pub fn sampler(&self) -> rand_distr::Beta<f64> {
        rand_distr::Beta::new(self.alpha, self.beta)
            .expect("parameters were validated finite and positive")
    }

    /// One draw.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        rng.sample(self.sampler())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn refuses_bad_parameters() {
        assert_eq!(Beta::new(0.0, 1.0), Err(BetaError::InvalidAlpha(0.0)));
        assert_eq!(Beta::new(1.0, -2.0), Err(BetaError::InvalidBeta(-2.0)));
        assert!(matches!(
            Beta::new(f64::NAN, 1.0),
            Err(BetaError::InvalidAlpha(_))
        ));
        assert_eq!(
            Beta::new(1.0, f64::INFINITY),
            Err(BetaError::InvalidBeta(f64::INFINITY))
        );
    }

    #[test]
    fn beta_function_values() {
        // B(2, 3) = 1!·2!/4! = 1/12; B(1/2, 1/2) = π.
        assert!((ln_beta_function(2.0, 3.0) - (1.0f64 / 12.0).ln()).abs() < 1e-14);
        assert!((ln_beta_function(0.5, 0.5) - core::f64::consts::PI.ln()).abs() < 1e-14);
    }

    #[test]
    fn moments_match_the_product_formula() {
        // E[x^k] = Π_{j<k} (α + j) / (α + β + j) for integer k.
        let d = Beta::new(1.1, 0.1).unwrap();
        let mut product = 1.0;
        for k in 1..=20 {
            let j = (k - 1) as f64;
            product *= (1.1 + j) / (1.2 + j);
            let m = d.raw_moment(k as f64);
            assert!((m / product - 1.0).abs() < 1e-13, "k={k}: {m} vs {product}");
        }
        assert_eq!(d.raw_moment(0.0), 1.0);
        assert!((d.raw_moment(1.0) - d.mean()).abs() < 1e-15);
        // Real orders (lgamma path) against the product at the neighbouring integers, and
        // across the switch from the product to lgamma.
        let between = d.raw_moment(2.5);
        assert!(between < d.raw_moment(2.0) && between > d.raw_moment(3.0));
        let via_lgamma = d.ln_raw_moment(64.0).exp();
        assert!((d.raw_moment(64.0) / via_lgamma - 1.0).abs() < 1e-12);
        assert!((d.raw_moment(65.0) / (d.raw_moment(64.0) * 65.1 / 65.2) - 1.0).abs() < 1e-12);
        // E[x^{1/2}] for Beta(1, 1) is 2/3.
        let uniform = Beta::new(1.0, 1.0).unwrap();
        assert!((uniform.raw_moment(0.5) - 2.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn pdf_values_and_endpoints() {
        let uniform = Beta::new(1.0, 1.0).unwrap();
        assert!((uniform.pdf(0.0) - 1.0).abs() < 1e-15);
        assert!((uniform.pdf(0.3) - 1.0).abs() < 1e-15);
        assert_eq!(uniform.pdf(1.5), 0.0);
        // Beta(2, 3): 12 x (1 − x)².
        let d = Beta::new(2.0, 3.0).unwrap();
        assert!((d.pdf(0.25) - 12.0 * 0.25 * 0.75 * 0.75).abs() < 1e-13);
        assert_eq!(d.pdf(0.0), 0.0);
        // β < 1: infinite at 1.
        assert_eq!(Beta::new(2.8, 0.05).unwrap().pdf(1.0), f64::INFINITY);
        // Beta(1, β) at 0 is β (0 · ln 0 taken as 0).
        assert!((Beta::new(1.0, 3.0).unwrap().pdf(0.0) - 3.0).abs() < 1e-13);
    }

    #[test]
    fn sampling_mean_and_the_mass_at_one() {
        let d = Beta::new(2.8, 0.05).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let n = 200_000;
        let draws: Vec<f64> = (0..n).map(|_| d.sample(&mut rng)).collect();
        assert!(draws.iter().all(|x| (0.0..=1.0).contains(x)));
        let mean = draws.iter().sum::<f64>() / n as f64;
        assert!(
            (mean - d.mean()).abs() < 0.002,
            "mean {mean} vs {}",
            d.mean()
        );
        // SPEC §7: about 17% of the draws are exactly 1.0.
        let ones = draws.iter().filter(|&&x| x == 1.0).count() as f64 / n as f64;
        assert!((0.14..0.20).contains(&ones), "share of exact ones {ones}");
    }
}
