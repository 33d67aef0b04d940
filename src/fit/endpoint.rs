//! What a score of exactly 0 or 1 means to a fit.
//!
//! The Beta likelihood needs ln x and ln(1 − x), and the GLM transforms need the same
//! logarithms; at x = 1.0 (29% of ResNet-110's CIFAR-10 scores, 56% of DenseNet-40's, from
//! float32 softmax saturation) ln(1 − x) = −∞. The paper shifts such scores down by 1e−16;
//! but `1.0 - 1e-16` in f64 is 1 − 2⁻⁵³ (the nearest double), not 1 − 1e−16, and the
//! float32 arrays it was written into round it back to 1.0.
//!
//! **Rule.** Every score is held at distance at least ε from both endpoints, in log space:
//! a score within ε of 0 (of 1) is taken to be ε (1 − ε), its logarithms formed directly
//! as ln ε and ln(1 − ε) = ln_1p(−ε), with 1 − x otherwise taken exactly (Sterbenz) and ε = [`DEFAULT_EPSILON`] = 1e−16, so a score of 1.0 contributes
//! ln(1 − x) = ln 1e−16 = −36.84 exactly as the paper intends, without forming 1 − 1e−16
//! in floating point. Only the logarithms are clamped; the scores themselves are never
//! changed. The choice matters: the fitted β of a file with many 1.0 scores scales roughly
//! like 1/|ln ε| (docs/fit/README.md tabulates it for the bundled files).

use core::fmt;

/// The paper's shift, 1e−16.
pub const DEFAULT_EPSILON: f64 = 1e-16;

/// Why an endpoint rule was refused.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EndpointError {
    /// ε must be finite, > 0 and < 1/2.
    InvalidEpsilon(f64),
}

impl fmt::Display for EndpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidEpsilon(e) => {
                write!(f, "endpoint epsilon must be in (0, 0.5), got {e}")
            }
        }
    }
}

impl std::error::Error for EndpointError {}

/// The smallest distance from 0 and 1 a fit assumes of any score (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EndpointRule {
    ln_epsilon: f64,
    epsilon: f64,
}

impl Default for EndpointRule {
    fn default() -> Self {
        EndpointRule::new(DEFAULT_EPSILON).expect("the default epsilon is valid")
    }
}

impl EndpointRule {
    /// Scores are held at least `epsilon` from 0 and from 1.
    pub fn new(epsilon: f64) -> Result<EndpointRule, EndpointError> {
        if !(epsilon.is_finite() && epsilon > 0.0 && epsilon < 0.5) {
            return Err(EndpointError::InvalidEpsilon(epsilon));
        }
        Ok(EndpointRule {
            ln_epsilon: epsilon.ln(),
            epsilon,
        })
    }

    /// ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// (ln x, ln(1 − x)) of a score in [0, 1] under this rule: a score within ε of an
    /// endpoint is taken as ε from it.
    pub fn logs(&self, x: f64) -> ScoreLogs {
        // 1 − x is exact for x ≥ 1/2 (Sterbenz); below 1/2 its rounding is far below ε.
        let one_minus_x = 1.0 - x;
        let near_endpoint = ScoreLogs {
            ln_x: self.ln_epsilon,
            ln_one_minus_x: (-self.epsilon).ln_1p(),
        };
        if x < self.epsilon {
            near_endpoint
        } else if one_minus_x < self.epsilon {
            near_endpoint.complement()
        } else if x <= 0.5 {
            ScoreLogs {
                ln_x: x.ln(),
                ln_one_minus_x: (-x).ln_1p(),
            }
        } else {
            ScoreLogs {
                ln_x: (-one_minus_x).ln_1p(),
                ln_one_minus_x: one_minus_x.ln(),
            }
        }
    }
}

/// The two logarithms of a score that fits use, after the [`EndpointRule`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreLogs {
    /// ln x, at least ln ε.
    pub ln_x: f64,
    /// ln(1 − x), at least ln ε.
    pub ln_one_minus_x: f64,
}

impl ScoreLogs {
    /// The log-odds ln x − ln(1 − x).
    pub fn logit(&self) -> f64 {
        self.ln_x - self.ln_one_minus_x
    }

    /// The logarithms of 1 − x.
    pub fn complement(&self) -> ScoreLogs {
        ScoreLogs {
            ln_x: self.ln_one_minus_x,
            ln_one_minus_x: self.ln_x,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_held_at_epsilon() {
        let rule = EndpointRule::default();
        let one = rule.logs(1.0);
        assert_eq!(one.ln_one_minus_x, 1e-16f64.ln());
        assert_eq!(one.ln_x, -1e-16);
        let zero = rule.logs(0.0);
        assert_eq!(zero.ln_x, 1e-16f64.ln());
        assert_eq!(zero.ln_one_minus_x, -1e-16);
        // The f64 shift the paper wrote does not give 1 − 1e−16.
        assert_eq!(1.0 - 1e-16, 1.0 - f64::EPSILON / 2.0);
        let inner = rule.logs(0.75);
        assert!((inner.ln_x - 0.75f64.ln()).abs() < 1e-16);
        assert!((inner.ln_one_minus_x - 0.25f64.ln()).abs() < 1e-16);
        assert!((rule.logs(0.5).logit()).abs() < 1e-16);
        assert!(EndpointRule::new(0.0).is_err() && EndpointRule::new(f64::NAN).is_err());
    }
}
