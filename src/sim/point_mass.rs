//! Point masses of the score distribution at the end points: P(C = 1) = π₁ with accuracy
//! P(Y = 1 | C = 1) = a₁, and likewise π₀, a₀ at C = 0.
//!
//! Why: float32 softmax saturates, so exactly 1.0 is the confidence of 29 % of
//! ResNet-110's and 56 % of DenseNet-40's CIFAR-10 outputs. No Beta density has an atom;
//! it can only pile mass up near 1, and how it does that is decided by the 1e−16 endpoint
//! rule of the fit (`fit::endpoint`), not by the data. With a point mass, the Beta
//! describes the unsaturated scores and the atom the saturated ones, each with its own
//! accuracy.
//!
//! A model with atoms is the mixture (1 − π₀ − π₁)·Beta + π₀·δ₀ + π₁·δ₁, so
//! TCE_p^p = (1 − π₀ − π₁)·E_Beta|C − T(C)|^p + π₀·|0 − a₀|^p + π₁·|1 − a₁|^p.

use core::fmt;

/// Why a point mass was refused.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PointMassError {
    /// A mass must be finite and in (0, 1).
    InvalidMass(f64),
    /// An accuracy must be finite and in [0, 1].
    InvalidAccuracy(f64),
    /// The two masses must leave the Beta part a positive share: π₀ + π₁ < 1.
    TotalMass(f64),
}

impl fmt::Display for PointMassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::InvalidMass(m) => write!(f, "a point mass must be in (0, 1), got {m}"),
            Self::InvalidAccuracy(a) => {
                write!(f, "the accuracy of a point mass must be in [0, 1], got {a}")
            }
            Self::TotalMass(t) => write!(
                f,
                "the point masses at 0 and 1 must add up to less than 1, got {t}"
            ),
        }
    }
}

impl std::error::Error for PointMassError {}

/// One atom: its probability and the accuracy of the predictions it holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointMass {
    mass: f64,
    accuracy: f64,
}

impl PointMass {
    /// An atom of probability `mass` ∈ (0, 1) whose labels are 1 with probability
    /// `accuracy` ∈ [0, 1].
    pub fn new(mass: f64, accuracy: f64) -> Result<PointMass, PointMassError> {
        if !(mass.is_finite() && mass > 0.0 && mass < 1.0) {
            return Err(PointMassError::InvalidMass(mass));
        }
        if !(accuracy.is_finite() && (0.0..=1.0).contains(&accuracy)) {
            return Err(PointMassError::InvalidAccuracy(accuracy));
        }
        Ok(PointMass { mass, accuracy })
    }

    /// Its probability π.
    pub fn mass(&self) -> f64 {
        self.mass
    }

    /// Its accuracy a = P(Y = 1 | C at the atom).
    pub fn accuracy(&self) -> f64 {
        self.accuracy
    }
}

/// The atoms at 0 and at 1 of a score distribution, either or both absent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PointMasses {
    zero: Option<PointMass>,
    one: Option<PointMass>,
}

impl PointMasses {
    /// No atoms: a pure Beta density.
    pub const NONE: PointMasses = PointMasses {
        zero: None,
        one: None,
    };

    /// Atoms at 0 and/or 1; their masses must add up to less than 1.
    pub fn new(
        zero: Option<PointMass>,
        one: Option<PointMass>,
    ) -> Result<PointMasses, PointMassError> {
        let total = zero.map_or(0.0, |a| a.mass) + one.map_or(0.0, |a| a.mass);
        if total >= 1.0 {
            return Err(PointMassError::TotalMass(total));
        }
        Ok(PointMasses { zero, one })
    }

    /// Only an atom at 1.
    pub fn at_one(atom: PointMass) -> PointMasses {
        PointMasses {
            zero: None,
            one: Some(atom),
        }
    }

    /// The atom at 0.
    pub fn zero(&self) -> Option<PointMass> {
        self.zero
    }

    /// The atom at 1.
    pub fn one(&self) -> Option<PointMass> {
        self.one
    }

    /// Whether there is no atom.
    pub fn is_none(&self) -> bool {
        self.zero.is_none() && self.one.is_none()
    }

    /// [π₀, π₁], 0 where there is no atom.
    pub fn weights(&self) -> [f64; 2] {
        [self.zero, self.one].map(|atom| atom.map_or(0.0, |a| a.mass))
    }

    /// 1 − π₀ − π₁: the probability of the Beta part (positive by construction).
    pub fn continuous_mass(&self) -> f64 {
        let [zero, one] = self.weights();
        1.0 - zero - one
    }

    /// The present atoms as (score, atom): (0.0, a₀) then (1.0, a₁).
    pub fn atoms(&self) -> impl Iterator<Item = (f64, PointMass)> {
        [(0.0, self.zero), (1.0, self.one)]
            .into_iter()
            .filter_map(|(score, atom)| atom.map(|a| (score, a)))
    }

    /// Σ π·|score − a|^p over the atoms: their share of TCE_p^p.
    pub fn tce_contribution(&self, p: f64) -> f64 {
        self.atoms()
            .map(|(score, atom)| atom.mass * (score - atom.accuracy).abs().powf(p))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_bad_masses_and_accuracies() {
        assert_eq!(
            PointMass::new(0.0, 0.5),
            Err(PointMassError::InvalidMass(0.0))
        );
        assert_eq!(
            PointMass::new(1.0, 0.5),
            Err(PointMassError::InvalidMass(1.0))
        );
        assert!(PointMass::new(f64::NAN, 0.5).is_err());
        assert_eq!(
            PointMass::new(0.2, 1.5),
            Err(PointMassError::InvalidAccuracy(1.5))
        );
        let half = PointMass::new(0.5, 0.9).unwrap();
        assert_eq!(
            PointMasses::new(Some(half), Some(half)),
            Err(PointMassError::TotalMass(1.0))
        );
    }

    #[test]
    fn contribution_and_continuous_mass() {
        let masses = PointMasses::new(
            Some(PointMass::new(0.125, 0.25).unwrap()),
            Some(PointMass::new(0.25, 0.5).unwrap()),
        )
        .unwrap();
        assert_eq!(masses.continuous_mass(), 0.625);
        assert_eq!(masses.weights(), [0.125, 0.25]);
        assert_eq!(PointMasses::NONE.weights(), [0.0, 0.0]);
        let one = PointMasses::at_one(PointMass::new(0.375, 1.0).unwrap());
        assert_eq!(
            (one.weights(), one.continuous_mass()),
            ([0.0, 0.375], 0.625)
        );
        // 0.125·0.25² + 0.25·0.5² = 0.0078125 + 0.0625.
        assert_eq!(masses.tce_contribution(2.0), 0.0703125);
        assert_eq!(masses.tce_contribution(1.0), 0.125 * 0.25 + 0.25 * 0.5);
        assert_eq!(PointMasses::NONE.tce_contribution(2.0), 0.0);
        assert!(PointMasses::default().is_none());
    }
}
