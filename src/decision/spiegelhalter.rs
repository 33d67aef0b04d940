//! Spiegelhalter's Z test (Spiegelhalter 1986, "Probabilistic prediction in patient
//! management and clinical trials", Statistics in Medicine 5:421–433).
//!
//! Under H0: E[Y | f] = f, the Brier score's deviation from its expectation,
//!
//! ```text
//! Z = Σ_i (y_i − f_i)(1 − 2 f_i) / sqrt( Σ_i (1 − 2 f_i)² f_i (1 − f_i) )
//! ```
//!
//! has mean 0 and variance 1 given the scores, and is asymptotically standard normal; the
//! p-value is two-sided, P(|N(0, 1)| ≥ |Z|) = erfc(|Z| / √2). Rows with f = 1/2 weigh
//! nothing. Rows with f = 0 or 1 add nothing to the variance and add to the sum only when
//! their label contradicts them (f = 1 with y = 0, or f = 0 with y = 1), which H0 rules
//! out: with the variance positive Z then grows by 1 for each, and with it 0 Z is
//! infinite (p = 0).

use core::fmt;

/// Spiegelhalter's Z and its p-value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spiegelhalter {
    /// Z.
    pub z: f64,
    /// P(|N(0, 1)| ≥ |Z|).
    pub p_value: f64,
}

/// Why Z is undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpiegelhalterError {
    /// No samples.
    NoSamples,
    /// Its variance is 0 (every score is 0, 1/2 or 1) and so is its sum: Z is 0/0.
    ZeroVariance,
}

impl fmt::Display for SpiegelhalterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSamples => f.write_str("no samples"),
            Self::ZeroVariance => f.write_str(
                "Spiegelhalter's Z is 0/0: every score is 0, 1/2 or 1 and none contradicts its label",
            ),
        }
    }
}

impl std::error::Error for SpiegelhalterError {}

/// Z over (score, label) pairs (any order; valid ones: the caller checked them).
pub fn spiegelhalter_of(
    samples: impl Iterator<Item = (f64, u8)>,
) -> Result<Spiegelhalter, SpiegelhalterError> {
    let (mut sum, mut variance, mut count) = (0.0, 0.0, 0usize);
    for (f, y) in samples {
        let weight = 1.0 - 2.0 * f;
        sum += (f64::from(y) - f) * weight;
        variance += weight * weight * f * (1.0 - f);
        count += 1;
    }
    if count == 0 {
        return Err(SpiegelhalterError::NoSamples);
    }
    let z = if variance > 0.0 {
        sum / variance.sqrt()
    } else if sum != 0.0 {
        sum.signum() * f64::INFINITY
    } else {
        return Err(SpiegelhalterError::ZeroVariance);
    };
    Ok(Spiegelhalter {
        z,
        p_value: libm::erfc(z.abs() / core::f64::consts::SQRT_2),
    })
}

/// Spiegelhalter's test of (scores, labels); bad input is refused whole as everywhere
/// ([`crate::sample::check_batch`]), nothing computed.
pub fn spiegelhalter(scores: &[f64], labels: &[u8]) -> Result<Spiegelhalter, super::TestError> {
    crate::sample::check_batch(scores, labels).map_err(super::TestError::Push)?;
    if scores.is_empty() {
        return Err(super::TestError::NoSamples);
    }
    spiegelhalter_of(scores.iter().copied().zip(labels.iter().copied()))
        .map_err(|e| super::TestError::Undefined(super::Undefined::Spiegelhalter(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        // Σ (y − f)(1 − 2f) = (−0.2)(0.6) + (0.5)(0) + (0.2)(−0.6) + (−0.9)(−0.8) = 0.48;
        // Σ (1 − 2f)² f(1 − f) = 0.36·0.16 + 0 + 0.36·0.16 + 0.64·0.09 = 0.1728;
        // Z = 0.48 / √0.1728 = 2/√3; p = erfc(√(2/3)) = 0.24821307898992362 (scipy:
        // 2·norm.sf(2/√3)).
        let z = spiegelhalter(&[0.2, 0.5, 0.8, 0.9], &[0, 1, 1, 0]).unwrap();
        assert!((z.z - 2.0 / 3f64.sqrt()).abs() < 1e-14, "{z:?}");
        assert!((z.p_value - 0.24821307898992362).abs() < 1e-14, "{z:?}");
    }

    #[test]
    fn certain_scores_contradicted_make_it_infinite() {
        let z = spiegelhalter(&[1.0, 0.0, 0.5], &[0, 0, 1]).unwrap();
        assert_eq!(z.z, f64::INFINITY);
        assert_eq!(z.p_value, 0.0);
        assert_eq!(
            spiegelhalter(&[1.0, 0.0, 0.5], &[1, 0, 1]).unwrap_err(),
            super::super::TestError::Undefined(super::super::Undefined::Spiegelhalter(
                SpiegelhalterError::ZeroVariance
            ))
        );
        // With some variance, each contradicted certain score adds (0 − 1)(1 − 2) = 1 to
        // the sum: here 0.48 + 1 over √0.1728.
        let z = spiegelhalter(&[0.2, 0.5, 0.8, 0.9, 1.0], &[0, 1, 1, 0, 0]).unwrap();
        assert!((z.z - 1.48 / 0.1728f64.sqrt()).abs() < 1e-14, "{z:?}");
    }
}
