//! Piecewise-constant recalibration maps: histogram binning and isotonic regression
//! both send every confidence in a piece of [0, 1] to one value.

use crate::binning::{equal_width_edges, Closure};
use crate::sim::unit_point::UnitPoint;

/// Where the pieces of a piecewise-constant map are.
#[derive(Clone, Debug, PartialEq)]
pub enum Pieces {
    /// `bins` equal-width bins, located by the core's rule ([`Closure::Left`]: bin k is
    /// [k/B, (k+1)/B), 1.0 in the last bin).
    EqualWidth {
        /// The number of bins B.
        bins: usize,
    },
    /// Piece k is [`starts[k]`, `starts[k+1]`) (the last one closed at 1); `starts[0]` = 0.
    Starts(Vec<f64>),
}

/// A map that is constant on each piece.
#[derive(Clone, Debug, PartialEq)]
pub struct PiecewiseConstant {
    /// The pieces.
    pub pieces: Pieces,
    /// The value on each piece.
    pub values: Vec<f64>,
}

impl PiecewiseConstant {
    /// The piece of a confidence in [0, 1].
    pub fn piece(&self, score: f64) -> usize {
        match &self.pieces {
            Pieces::EqualWidth { bins } => Closure::Left.bin_index(score, *bins),
            Pieces::Starts(starts) => starts.partition_point(|&s| s <= score).max(1) - 1,
        }
    }

    /// The recalibrated confidence.
    pub fn apply(&self, score: f64) -> f64 {
        self.values[self.piece(score)]
    }

    /// The number of pieces.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are no pieces (never, for a fitted map).
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The real interval [lo, hi] that piece k covers, for integrals over a continuous
    /// density.
    ///
    /// A start s found among f64 scores stands for every real that rounds to s or above,
    /// so the real boundary is half an ulp below s. That matters only at s = 1.0: a
    /// piece holding just the scores that are exactly 1.0 (17% of the draws from
    /// Beta(2.8, 0.05)) covers the reals (1 − 2⁻⁵⁴, 1], not a single point of zero
    /// probability. Below 1/2 the half ulp is below 1e−17 and is ignored.
    pub fn interval(&self, k: usize) -> (UnitPoint, UnitPoint) {
        match &self.pieces {
            Pieces::EqualWidth { bins } => {
                let (lo, hi) = equal_width_edges(k, *bins);
                (
                    UnitPoint::from_x(lo),
                    if k + 1 == *bins {
                        UnitPoint::ONE
                    } else {
                        UnitPoint::from_x(hi)
                    },
                )
            }
            Pieces::Starts(starts) => {
                let boundary = |s: f64| {
                    if s > 0.5 {
                        // Doubles in (1/2, 1] are 2⁻⁵³ apart: half an ulp is 2⁻⁵⁴, and
                        // (1 − s) + 2⁻⁵⁴ is exact.
                        UnitPoint::from_pair(s, (1.0 - s) + f64::EPSILON / 4.0)
                    } else {
                        UnitPoint::from_x(s)
                    }
                };
                let lo = if k == 0 {
                    UnitPoint::ZERO
                } else {
                    boundary(starts[k])
                };
                let hi = match starts.get(k + 1) {
                    Some(&s) => boundary(s),
                    None => UnitPoint::ONE,
                };
                (lo, hi)
            }
        }
    }
}
