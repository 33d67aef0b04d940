//! One small error enum per operation family. Every variant names its cause; a refused
//! operation leaves the state exactly as it was.

// Variant fields are described in their variant's documentation.
#![allow(missing_docs)]

use core::fmt;

/// Why a sample or a batch was refused by a histogram or a buffer.
///
/// A batch with one bad element is refused whole: nothing from it is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushError {
    /// The score at `index` (0 for a single push) is NaN or infinite.
    NonFiniteScore { index: usize },
    /// The score at `index` is finite but outside [0, 1].
    ScoreOutOfRange { index: usize },
    /// The label at `index` is neither 0 nor 1.
    InvalidLabel { index: usize },
    /// The score and label slices of a batch have different lengths.
    LengthMismatch { scores: usize, labels: usize },
    /// The buffer holds `len` of its `capacity` samples and cannot take `requested` more.
    Full {
        capacity: usize,
        len: usize,
        requested: usize,
    },
    /// Recording would take a count (samples in total or in a bin, or samples seen) past
    /// [`crate::MAX_COUNT`]. Nothing was recorded.
    CountOverflow,
}

/// Why a `sample_weight` vector was refused by a weighted estimator of the core (smooth
/// ECE) or by the KDE estimator; the std layer's binned estimators return them as
/// `tce::weights::WeightError::Weights`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadWeights {
    /// There are `weights` weights for `rows` rows.
    LengthMismatch { rows: usize, weights: usize },
    /// The weight at `index` (the first bad one) is negative, NaN or infinite.
    InvalidWeight { index: usize },
    /// Every weight is 0 (or they sum past `f64`): nothing to average over.
    ZeroTotalWeight,
}

/// Why a histogram or a buffer could not be built over the given storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// A binning needs at least one bin.
    ZeroBins,
    /// A buffer needs room for at least one sample.
    ZeroCapacity,
    /// A half-life must lie between 1/510 and about 1.25e16 samples (see [`crate::decay`]).
    InvalidHalfLife,
    /// A calibration alarm's shift θ must be in (0, [`crate::alarm::MAX_SHIFT`]] log-odds.
    InvalidShift,
    /// A calibration alarm's threshold h (or a target ARL0 it is derived from) must give
    /// h in (0, [`crate::alarm::MAX_THRESHOLD`]].
    InvalidThreshold,
    /// A window's slot and ring storage differ in length.
    StorageMismatch { slots: usize, ring: usize },
    /// The storage holds more slots than a buffer can index (`max`).
    CapacityTooLarge { capacity: usize, max: usize },
    /// A concurrent histogram's storage (`storage` bins) is not a whole number of
    /// shards of `bins` bins.
    ShardMismatch { storage: usize, bins: usize },
    /// More bins than [`crate::MAX_BINS`].
    TooManyBins { bins: usize, max: usize },
}

/// Why an estimate could not be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EstimateError {
    /// There are no samples (n = 0).
    NoSamples,
    /// The requested number of bins (or `max_bins`) is 0.
    ZeroBins,
    /// The requested number of bins is above [`crate::MAX_BINS`].
    TooManyBins { bins: usize, max: usize },
    /// A weighted (decaying) state has samples but their weights are too small or too
    /// large to divide by: no finite estimate exists.
    DegenerateWeights,
    /// The bins given to an estimator of [`crate::estimate`] hold more than
    /// [`crate::MAX_COUNT`] samples in all. No state of this crate can: only bins a caller
    /// assembles (from [`crate::stats::BinStats::from_parts`], say) can sum past it.
    CountOverflow,
}

/// Why a norm exponent was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormError {
    /// p must be finite and at least 1 (the calibration error is an l_p norm).
    InvalidExponent,
}

/// Why two states could not be merged. Neither state is changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeError {
    /// The histograms have different numbers of bins.
    BinCountMismatch { left: usize, right: usize },
    /// The histograms close their bins on different sides.
    ClosureMismatch,
    /// Reservoirs merge only with reservoirs of the same capacity.
    CapacityMismatch { left: usize, right: usize },
    /// Decaying histograms merge only with decaying histograms of the same decay per
    /// push λ (the same half-life).
    HalfLifeMismatch,
    /// The receiving buffer cannot hold the other's samples.
    Full {
        capacity: usize,
        len: usize,
        requested: usize,
    },
    /// The merged counts would exceed [`crate::MAX_COUNT`]. Neither state changed.
    CountOverflow,
}

/// Why a row of class probabilities or logits could not be reduced to its top label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceError {
    /// The row has no classes.
    EmptyRow,
    /// The value at `index` is NaN or infinite.
    NonFinite { index: usize },
    /// The probability at `index` is outside [0, 1].
    ProbabilityOutOfRange { index: usize },
    /// The probabilities do not sum to 1 (within [`crate::toplabel::PROBABILITY_SUM_TOLERANCE`]):
    /// most often logits passed as probabilities.
    NotNormalized,
    /// The true class is not an index of the row.
    ClassOutOfRange { class: usize, classes: usize },
    /// The table's length is not a multiple of the number of classes, or an output
    /// slice is shorter than the number of rows.
    ShapeMismatch,
}

impl fmt::Display for PushError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NonFiniteScore { index } => write!(f, "score {index} is NaN or infinite"),
            Self::ScoreOutOfRange { index } => write!(f, "score {index} is outside [0, 1]"),
            Self::InvalidLabel { index } => write!(f, "label {index} is neither 0 nor 1"),
            Self::LengthMismatch { scores, labels } => {
                write!(f, "{scores} scores but {labels} labels")
            }
            Self::Full {
                capacity,
                len,
                requested,
            } => write!(
                f,
                "buffer full: {len} of {capacity} slots used, {requested} more requested"
            ),
            Self::CountOverflow => write!(
                f,
                "the sample count would exceed {} (tce::MAX_COUNT)",
                crate::MAX_COUNT
            ),
        }
    }
}

impl fmt::Display for BadWeights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::LengthMismatch { rows, weights } => {
                write!(f, "{rows} rows but {weights} weights")
            }
            Self::InvalidWeight { index } => {
                write!(f, "weight {index} is negative, NaN or infinite")
            }
            Self::ZeroTotalWeight => f.write_str("the weights sum to 0 (or are not finite)"),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::ZeroBins => f.write_str("the number of bins must be at least 1"),
            Self::ZeroCapacity => f.write_str("the buffer capacity must be at least 1"),
            Self::InvalidHalfLife => f.write_str(
                "the half-life must be between 1/510 and about 1.25e16 samples \
                 (so that the decay per sample, 2^(-1/half_life), lies in [2^-510, 1))",
            ),
            Self::InvalidShift => f.write_str(
                "the alarm's shift must be finite, above 0 and at most 10 (in log-odds)",
            ),
            Self::InvalidThreshold => f.write_str(
                "the alarm's threshold must be finite, above 0 and at most 700 \
                 (a target ARL0 must be finite, positive and give such a threshold)",
            ),
            Self::StorageMismatch { slots, ring } => {
                write!(f, "{slots} slots but a ring of {ring}: they must be equal")
            }
            Self::CapacityTooLarge { capacity, max } => {
                write!(f, "capacity {capacity} exceeds the maximum {max}")
            }
            Self::ShardMismatch { storage, bins } => write!(
                f,
                "{storage} bins of storage are not a whole number of shards of {bins} bins"
            ),
            Self::TooManyBins { bins, max } => {
                write!(f, "{bins} bins exceed the maximum {max} (tce::MAX_BINS)")
            }
        }
    }
}

impl fmt::Display for EstimateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NoSamples => f.write_str("no samples: an estimate needs n >= 1"),
            Self::ZeroBins => f.write_str("the number of bins must be at least 1"),
            Self::TooManyBins { bins, max } => {
                write!(f, "{bins} bins exceed the maximum {max} (tce::MAX_BINS)")
            }
            Self::DegenerateWeights => {
                f.write_str("the decayed weights are too small or too large for a finite estimate")
            }
            Self::CountOverflow => {
                f.write_str("the bins hold more than tce::MAX_COUNT (2^63 - 1) samples in all")
            }
        }
    }
}

impl fmt::Display for NormError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the norm exponent p must be finite and at least 1")
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::BinCountMismatch { left, right } => {
                write!(f, "cannot merge histograms of {left} and {right} bins")
            }
            Self::CapacityMismatch { left, right } => {
                write!(f, "cannot merge reservoirs of capacity {left} and {right}")
            }
            Self::ClosureMismatch => {
                f.write_str("cannot merge histograms with different bin closures")
            }
            Self::HalfLifeMismatch => {
                f.write_str("cannot merge decaying histograms with different half-lives")
            }
            Self::Full {
                capacity,
                len,
                requested,
            } => write!(
                f,
                "buffer full: {len} of {capacity} slots used, {requested} more requested"
            ),
            Self::CountOverflow => write!(
                f,
                "the merged sample count would exceed {} (tce::MAX_COUNT)",
                crate::MAX_COUNT
            ),
        }
    }
}

impl fmt::Display for ReduceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::EmptyRow => f.write_str("the row has no classes"),
            Self::NonFinite { index } => write!(f, "value {index} is NaN or infinite"),
            Self::ProbabilityOutOfRange { index } => {
                write!(f, "probability {index} is outside [0, 1]")
            }
            Self::NotNormalized => f.write_str("the probabilities do not sum to 1"),
            Self::ClassOutOfRange { class, classes } => {
                write!(
                    f,
                    "true class {class} is not below the number of classes {classes}"
                )
            }
            Self::ShapeMismatch => f.write_str("table and output shapes do not agree"),
        }
    }
}

#[cfg(feature = "std")]
mod std_impls {
    extern crate std;
    impl std::error::Error for super::PushError {}
    impl std::error::Error for super::ConfigError {}
    impl std::error::Error for super::EstimateError {}
    impl std::error::Error for super::NormError {}
    impl std::error::Error for super::MergeError {}
    impl std::error::Error for super::ReduceError {}
}
