//! `tce_status`: what every fallible function returns.

use core::ffi::c_char;

use crate::error::{ConfigError, EstimateError, MergeError, NormError, PushError, ReduceError};

/// The result of every fallible function: `TCE_STATUS_OK` (0) or the named cause of the
/// failure. Values are explicit and stable: new statuses are only ever appended. On any
/// status other than `TCE_STATUS_OK` no out-parameter was written and no state changed.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tce_status {
    /// Success.
    Ok = 0,
    /// A required pointer was NULL (a NULL array with length 0 is allowed).
    NullPointer = 1,
    /// A score was NaN or infinite.
    NonFiniteScore = 2,
    /// A score was finite but outside [0, 1].
    ScoreOutOfRange = 3,
    /// A label was neither 0 nor 1.
    InvalidLabel = 4,
    /// The score and label arrays have different lengths.
    LengthMismatch = 5,
    /// The sorted buffer cannot take that many more samples.
    BufferFull = 6,
    /// The number of bins (or `max_bins` of a sweep, or the shards of a concurrent
    /// histogram) was 0 where at least 1 is needed.
    ZeroBins = 7,
    /// A sorted buffer was asked for capacity 0.
    ZeroCapacity = 8,
    /// A capacity, bin count or array length is too large to address (a sorted buffer
    /// holds at most 2^31 − 1 samples; sizes must fit in `isize`).
    CapacityTooLarge = 9,
    /// An estimate needs at least one sample.
    NoSamples = 10,
    /// The norm exponent p was NaN, infinite or below 1.
    InvalidNorm = 11,
    /// Merged histograms have different bin counts.
    BinCountMismatch = 12,
    /// Merged histograms close their bins on different sides.
    ClosureMismatch = 13,
    /// A pointer is not aligned for its type (caller memory: see `tce_*_layout`).
    Misaligned = 14,
    /// Caller memory or an output array is shorter than needed.
    BufferTooSmall = 15,
    /// The handle does not point to an initialised state of the expected kind (a
    /// histogram passed as a buffer, uninitialised or freed memory).
    WrongState = 16,
    /// An enum value passed as an integer (closure, ties, binning, sweep limit, kind) is
    /// not one of its named values.
    InvalidEnum = 17,
    /// Top-label reduction: a row has no classes.
    EmptyRow = 18,
    /// Top-label reduction: a probability or logit is NaN or infinite.
    NonFiniteValue = 19,
    /// Top-label reduction: a probability is outside [0, 1].
    ProbabilityOutOfRange = 20,
    /// Top-label reduction: the probabilities of a row do not sum to 1 (within 1e-3);
    /// most often logits passed as probabilities.
    NotNormalized = 21,
    /// Top-label reduction: the true class is not below the number of classes.
    ClassOutOfRange = 22,
    /// Top-label reduction: the table's length is not rows × classes.
    ShapeMismatch = 23,
    /// The same state was passed as both operands of an operation that needs two
    /// distinct ones (merging a state into itself).
    SameState = 24,
    /// The heap allocation of a `tce_*_new` failed.
    AllocationFailed = 25,
    /// A Rust panic was caught at the boundary (a bug in tce: please report it). The
    /// state the call was given may be partially updated; reset or discard it.
    Panic = 26,
    /// A decaying histogram's half-life must be between 1/510 and about 1.25e16 samples
    /// (the decay per sample 2^(-1/half_life) in [2^-510, 1)).
    InvalidHalfLife = 27,
    /// Storage lengths do not fit together: a sliding window's slot and ring storage
    /// differ in length, or a concurrent histogram's storage is not a whole number of
    /// shards. Only the Rust API, which takes the storage from the caller, can return it:
    /// the C API lays storage out itself (`tce_window_layout`,
    /// `tce_concurrent_histogram_layout`), so no C call returns it.
    StorageMismatch = 28,
    /// Reservoirs of different capacities cannot be merged or decoded into each other, nor
    /// windows of different sizes decoded into each other.
    CapacityMismatch = 29,
    /// Serialised state: fewer bytes than the frame needs.
    Truncated = 30,
    /// Serialised state: not a tce state (bad magic number).
    BadMagic = 31,
    /// Serialised state: written by an unsupported format version.
    UnsupportedVersion = 32,
    /// Serialised state: a state of another kind than the destination.
    WrongKind = 33,
    /// Serialised state: the checksum does not match (corrupted bytes).
    Checksum = 34,
    /// Serialised state: well formed but impossible contents (among them counts above
    /// `TCE_MAX_COUNT`).
    Inconsistent = 35,
    /// The call would take a sample count (a state's total, a bin's count, or the samples
    /// a reservoir or window has seen) past `TCE_MAX_COUNT` (2^63 − 1). Nothing changed.
    CountOverflow = 36,
    /// The number of bins is above `TCE_MAX_BINS` (2^24).
    TooManyBins = 37,
    /// Serialised state: the state is too large for the format to describe (a payload
    /// of 2^32 bytes or more).
    FrameTooLarge = 38,
    /// A decaying histogram's weights are too small or too large for a finite estimate.
    DegenerateWeights = 39,
    /// Merged decaying histograms decay at different rates (different half-lives).
    HalfLifeMismatch = 40,
    /// A calibration alarm's shift must be finite, above 0 and at most 10 (log-odds).
    InvalidShift = 41,
    /// A calibration alarm's threshold must be finite, above 0 and at most 700, or a
    /// target ARL0 does not give such a threshold.
    InvalidThreshold = 42,
    /// A sample weight is negative, NaN or infinite (the weighted one-call functions).
    InvalidWeight = 43,
    /// The sample weights are all 0 (or sum past the largest double): nothing to average.
    ZeroTotalWeight = 44,
}

impl tce_status {
    /// Every status, in value order.
    pub(crate) const ALL: [tce_status; 45] = [
        Self::Ok,
        Self::NullPointer,
        Self::NonFiniteScore,
        Self::ScoreOutOfRange,
        Self::InvalidLabel,
        Self::LengthMismatch,
        Self::BufferFull,
        Self::ZeroBins,
        Self::ZeroCapacity,
        Self::CapacityTooLarge,
        Self::NoSamples,
        Self::InvalidNorm,
        Self::BinCountMismatch,
        Self::ClosureMismatch,
        Self::Misaligned,
        Self::BufferTooSmall,
        Self::WrongState,
        Self::InvalidEnum,
        Self::EmptyRow,
        Self::NonFiniteValue,
        Self::ProbabilityOutOfRange,
        Self::NotNormalized,
        Self::ClassOutOfRange,
        Self::ShapeMismatch,
        Self::SameState,
        Self::AllocationFailed,
        Self::Panic,
        Self::InvalidHalfLife,
        Self::StorageMismatch,
        Self::CapacityMismatch,
        Self::Truncated,
        Self::BadMagic,
        Self::UnsupportedVersion,
        Self::WrongKind,
        Self::Checksum,
        Self::Inconsistent,
        Self::CountOverflow,
        Self::TooManyBins,
        Self::FrameTooLarge,
        Self::DegenerateWeights,
        Self::HalfLifeMismatch,
        Self::InvalidShift,
        Self::InvalidThreshold,
        Self::InvalidWeight,
        Self::ZeroTotalWeight,
    ];

    /// The static NUL-terminated message of the status.
    const fn message(self) -> &'static str {
        match self {
            Self::Ok => "ok\0",
            Self::NullPointer => "a required pointer was NULL\0",
            Self::NonFiniteScore => "a score is NaN or infinite\0",
            Self::ScoreOutOfRange => "a score is outside [0, 1]\0",
            Self::InvalidLabel => "a label is neither 0 nor 1\0",
            Self::LengthMismatch => "the score and label arrays have different lengths\0",
            Self::BufferFull => "the sorted buffer is full\0",
            Self::ZeroBins => "the number of bins must be at least 1\0",
            Self::ZeroCapacity => "the buffer capacity must be at least 1\0",
            Self::CapacityTooLarge => "capacity, bin count or length too large\0",
            Self::NoSamples => "no samples: an estimate needs n >= 1\0",
            Self::InvalidNorm => "the norm exponent p must be finite and at least 1\0",
            Self::BinCountMismatch => "cannot merge histograms of different bin counts\0",
            Self::ClosureMismatch => "cannot merge histograms with different bin closures\0",
            Self::Misaligned => "a pointer is not aligned for its type\0",
            Self::BufferTooSmall => "memory or output array too small\0",
            Self::WrongState => "the handle is not an initialised state of the expected kind\0",
            Self::InvalidEnum => "an enum value is out of range\0",
            Self::EmptyRow => "the row has no classes\0",
            Self::NonFiniteValue => "a probability or logit is NaN or infinite\0",
            Self::ProbabilityOutOfRange => "a probability is outside [0, 1]\0",
            Self::NotNormalized => "the probabilities do not sum to 1\0",
            Self::ClassOutOfRange => "the true class is not below the number of classes\0",
            Self::ShapeMismatch => "the table's length is not rows x classes\0",
            Self::SameState => "the same state was passed twice\0",
            Self::AllocationFailed => "memory allocation failed\0",
            Self::Panic => "internal error: a panic was caught (please report it)\0",
            Self::InvalidHalfLife => {
                "the half-life must be between 1/510 and about 1.25e16 samples\0"
            }
            Self::StorageMismatch => {
                "storage lengths do not fit (window slots vs ring, or bins vs shards)\0"
            }
            Self::CapacityMismatch => "reservoirs or windows of different capacities\0",
            Self::Truncated => "serialised state is truncated\0",
            Self::BadMagic => "not a tce state (bad magic number)\0",
            Self::UnsupportedVersion => "serialised state has an unsupported format version\0",
            Self::WrongKind => "serialised state is of another kind than the destination\0",
            Self::Checksum => "serialised state checksum mismatch: corrupted bytes\0",
            Self::Inconsistent => "serialised state contents are inconsistent\0",
            Self::CountOverflow => "the sample count would exceed TCE_MAX_COUNT (2^63 - 1)\0",
            Self::TooManyBins => "the number of bins exceeds TCE_MAX_BINS (2^24)\0",
            Self::FrameTooLarge => "the state is too large for the portable format\0",
            Self::DegenerateWeights => {
                "decayed weights too small or too large for a finite estimate\0"
            }
            Self::HalfLifeMismatch => {
                "cannot merge decaying histograms with different half-lives\0"
            }
            Self::InvalidShift => "the alarm's shift must be in (0, 10] log-odds\0",
            Self::InvalidThreshold => {
                "the alarm's threshold (or the one a target ARL0 gives) must be in (0, 700]\0"
            }
            Self::InvalidWeight => "a sample weight is negative, NaN or infinite\0",
            Self::ZeroTotalWeight => "the sample weights sum to 0: nothing to average\0",
        }
    }
}

/// A static NUL-terminated English message for a status value (taken as an integer so
/// that any value is safe to pass: an unknown one gives "unknown status"). Never NULL;
/// never free it.
#[no_mangle]
pub extern "C" fn tce_status_str(status: u32) -> *const c_char {
    let message = match tce_status::ALL.get(status as usize) {
        Some(status) => status.message(),
        None => "unknown status\0",
    };
    message.as_ptr().cast()
}

impl From<PushError> for tce_status {
    fn from(e: PushError) -> Self {
        match e {
            PushError::NonFiniteScore { .. } => Self::NonFiniteScore,
            PushError::ScoreOutOfRange { .. } => Self::ScoreOutOfRange,
            PushError::InvalidLabel { .. } => Self::InvalidLabel,
            PushError::LengthMismatch { .. } => Self::LengthMismatch,
            PushError::Full { .. } => Self::BufferFull,
            PushError::CountOverflow => Self::CountOverflow,
        }
    }
}

impl From<ConfigError> for tce_status {
    fn from(e: ConfigError) -> Self {
        match e {
            ConfigError::ZeroBins => Self::ZeroBins,
            ConfigError::ZeroCapacity => Self::ZeroCapacity,
            ConfigError::CapacityTooLarge { .. } => Self::CapacityTooLarge,
            ConfigError::InvalidHalfLife => Self::InvalidHalfLife,
            ConfigError::InvalidShift => Self::InvalidShift,
            ConfigError::InvalidThreshold => Self::InvalidThreshold,
            ConfigError::StorageMismatch { .. } | ConfigError::ShardMismatch { .. } => {
                Self::StorageMismatch
            }
            ConfigError::TooManyBins { .. } => Self::TooManyBins,
        }
    }
}

impl From<EstimateError> for tce_status {
    fn from(e: EstimateError) -> Self {
        match e {
            EstimateError::NoSamples => Self::NoSamples,
            EstimateError::ZeroBins => Self::ZeroBins,
            EstimateError::TooManyBins { .. } => Self::TooManyBins,
            EstimateError::DegenerateWeights => Self::DegenerateWeights,
            // No state the C ABI holds counts past MAX_COUNT: unreachable from C.
            EstimateError::CountOverflow => Self::CountOverflow,
        }
    }
}

impl From<NormError> for tce_status {
    fn from(e: NormError) -> Self {
        match e {
            NormError::InvalidExponent => Self::InvalidNorm,
        }
    }
}

impl From<MergeError> for tce_status {
    fn from(e: MergeError) -> Self {
        match e {
            MergeError::BinCountMismatch { .. } => Self::BinCountMismatch,
            MergeError::ClosureMismatch => Self::ClosureMismatch,
            MergeError::Full { .. } => Self::BufferFull,
            MergeError::CapacityMismatch { .. } => Self::CapacityMismatch,
            MergeError::HalfLifeMismatch => Self::HalfLifeMismatch,
            MergeError::CountOverflow => Self::CountOverflow,
        }
    }
}

impl From<ReduceError> for tce_status {
    fn from(e: ReduceError) -> Self {
        match e {
            ReduceError::EmptyRow => Self::EmptyRow,
            ReduceError::NonFinite { .. } => Self::NonFiniteValue,
            ReduceError::ProbabilityOutOfRange { .. } => Self::ProbabilityOutOfRange,
            ReduceError::NotNormalized => Self::NotNormalized,
            ReduceError::ClassOutOfRange { .. } => Self::ClassOutOfRange,
            ReduceError::ShapeMismatch => Self::ShapeMismatch,
        }
    }
}

impl From<crate::portable::DecodeError> for tce_status {
    fn from(e: crate::portable::DecodeError) -> Self {
        use crate::portable::DecodeError;
        match e {
            DecodeError::Truncated => Self::Truncated,
            DecodeError::BadMagic => Self::BadMagic,
            DecodeError::UnsupportedVersion { .. } => Self::UnsupportedVersion,
            DecodeError::WrongKind { .. } => Self::WrongKind,
            DecodeError::Checksum => Self::Checksum,
            DecodeError::Inconsistent => Self::Inconsistent,
            DecodeError::BinCountMismatch { .. } => Self::BinCountMismatch,
            DecodeError::CapacityMismatch { .. } => Self::CapacityMismatch,
            DecodeError::Full { .. } => Self::BufferFull,
        }
    }
}

impl From<crate::portable::EncodeError> for tce_status {
    fn from(e: crate::portable::EncodeError) -> Self {
        match e {
            crate::portable::EncodeError::BufferTooSmall { .. } => Self::BufferTooSmall,
            crate::portable::EncodeError::FrameTooLarge { .. } => Self::FrameTooLarge,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_dense_and_messages_nul_terminated() {
        for (i, status) in tce_status::ALL.iter().enumerate() {
            assert_eq!(*status as u32 as usize, i);
            let m = status.message();
            assert!(m.ends_with('\0') && !m[..m.len() - 1].contains('\0'));
        }
        // SAFETY: tce_status_str returns a static NUL-terminated string.
        let unknown = unsafe { core::ffi::CStr::from_ptr(tce_status_str(1000)) };
        assert_eq!(unknown.to_bytes(), b"unknown status");
    }
}
