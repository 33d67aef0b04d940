//! The exponent p of the l_p calibration error.

use crate::error::NormError;

/// A validated norm exponent p ≥ 1 (finite). The paper reports p = 2 throughout.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Norm(f64);

impl Norm {
    /// The l1 calibration error (the classic ECE).
    pub const L1: Norm = Norm(1.0);
    /// The l2 calibration error, the paper's choice.
    pub const L2: Norm = Norm(2.0);

    /// Validates p: it must be finite and at least 1.
    pub fn new(p: f64) -> Result<Norm, NormError> {
        if p.is_finite() && p >= 1.0 {
            Ok(Norm(p))
        } else {
            Err(NormError::InvalidExponent)
        }
    }

    /// The exponent p.
    pub fn p(self) -> f64 {
        self.0
    }

    /// |x|^p, exact for p = 1 and correctly rounded for p = 2.
    pub(crate) fn power(self, x: f64) -> f64 {
        let x = x.abs();
        if self.0 == 1.0 {
            x
        } else if self.0 == 2.0 {
            x * x
        } else {
            libm::pow(x, self.0)
        }
    }

    /// s^(1/p), taken once after the sum (`sqrt` for p = 2, as SPEC §3 asks).
    pub(crate) fn root(self, s: f64) -> f64 {
        if self.0 == 1.0 {
            s
        } else if self.0 == 2.0 {
            libm::sqrt(s)
        } else {
            libm::pow(s, 1.0 / self.0)
        }
    }
}

impl Default for Norm {
    fn default() -> Self {
        Norm::L2
    }
}
