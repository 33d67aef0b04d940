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

    /// Whether sums of |x|^p are kept scaled ([`ScaledPowers`]): for every p but 1 and 2.
    fn rescales(self) -> bool {
        self.0 != 1.0 && self.0 != 2.0
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

/// A sum of terms |x|^p kept in units of scale^p, the scale being the largest |x| covered so
/// far: for p other than 1 and 2, |x|^p alone underflows to 0 for |x| = 0.5 once p > 1074
/// (and for |x| = 0.01 once p > 161), and an estimate would read 0 where the error is
/// not. Scaled, every term of the largest magnitude is 1 and the root is
/// scale · (sum)^(1/p), right for every finite p ≥ 1. For p = 1 and 2 the scale stays 1,
/// so their sums are the plain ones, bit for bit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScaledPowers {
    norm: Norm,
    scale: f64,
    sum: f64,
}

impl ScaledPowers {
    /// An empty sum.
    pub(crate) fn new(norm: Norm) -> Self {
        let scale = if norm.rescales() { 0.0 } else { 1.0 };
        ScaledPowers {
            norm,
            scale,
            sum: 0.0,
        }
    }

    /// The norm the terms are powers of.
    pub(crate) fn norm(&self) -> Norm {
        self.norm
    }

    /// Makes the scale cover terms of magnitude up to `|magnitude|`, rescaling the sum
    /// so far (terms that become negligible then are: they are below 2^-1074 of the
    /// largest one).
    // Not inlined: libm's pow stays called from here, where the panic audit knows it.
    #[inline(never)]
    pub(crate) fn cover(&mut self, magnitude: f64) {
        let magnitude = magnitude.abs();
        if self.norm.rescales() && magnitude > self.scale {
            if self.scale > 0.0 {
                self.sum *= libm::pow(self.scale / magnitude, self.norm.0);
            }
            self.scale = magnitude;
        }
    }

    /// |x|^p in units of scale^p, for |x| within what [`ScaledPowers::cover`] covered.
    // Not inlined, as `cover`: libm's pow stays called from here.
    #[inline(never)]
    pub(crate) fn power(&self, x: f64) -> f64 {
        if self.scale == 0.0 {
            // Only a rescaling norm whose terms so far were all 0: so is x.
            return 0.0;
        }
        if self.norm.rescales() {
            self.norm.power(x / self.scale)
        } else {
            self.norm.power(x)
        }
    }

    /// Adds a term in units of scale^p.
    pub(crate) fn add(&mut self, term: f64) {
        self.sum += term;
    }

    /// The sum, in units of scale^p.
    pub(crate) fn sum(&self) -> f64 {
        self.sum
    }

    /// (mean · scale^p)^(1/p) of a `mean` in units of scale^p (a mean of the sum).
    pub(crate) fn root(&self, mean: f64) -> f64 {
        if self.norm.rescales() {
            self.scale * self.norm.root(mean)
        } else {
            self.norm.root(mean)
        }
    }

    /// `mean` (in units of scale^p) as a plain number: scale^p · mean, which may
    /// underflow (for the forms that report the sum without its root; KDE is behind `std`).
    #[cfg(any(feature = "std", test))]
    pub(crate) fn unscaled(&self, mean: f64) -> f64 {
        if self.norm.rescales() {
            libm::pow(self.scale, self.norm.0) * mean
        } else {
            mean
        }
    }
}

impl Default for Norm {
    fn default() -> Self {
        Norm::L2
    }
}
