//! # tce — calibration error without the bias of binned ECE
//!
//! The estimators of Roelofs et al., "Mitigating Bias in Calibration Error Estimation"
//! (AISTATS 2022), and the debiased estimator of Bröcker and Kumar et al., in an
//! allocation-free `no_std` core that runs where models are served.
//!
//! Data flows one way: samples → bin statistics ([`BinStats`]) → estimate ([`Estimate`]).
//!
//! * [`Histogram`]: streaming equal-width bins, O(1) per sample, exact merge.
//! * [`SortedBuffer`]: every sample, for equal-mass bins and the monotone sweep.
//! * [`estimate`]: ECE_bin (any p ≥ 1), MCE and ECE_debias over any bins.
//!
//! ```
//! use tce::{Binning, Closure, Histogram, InlineBuffer, Norm, SweepOptions};
//!
//! let scores = [0.955, 0.943, 0.892, 0.998, 0.78, 0.227, 0.734, 0.851];
//! let labels = [1, 1, 1, 1, 1, 0, 0, 0];
//!
//! let mut histogram = Histogram::<[tce::BinStats; 15]>::new(Closure::Left);
//! histogram.push_batch(&scores, &labels)?;
//! let ece = histogram.ece_bin(Norm::L2)?;
//!
//! let mut buffer = InlineBuffer::<64>::new();
//! buffer.push_batch(&scores, &labels)?;
//! let sweep = buffer.sorted().ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())?;
//! println!("ECE_bin {:.4}, ECE_sweep {:.4} with b* = {}", ece.value, sweep.value, sweep.bins);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod alarm;
pub mod binning;
pub mod buffer;
#[cfg(target_has_atomic = "64")]
pub mod concurrent;
pub mod decay;
#[cfg(feature = "std")]
pub mod decision;
pub mod error;
pub mod estimate;
#[cfg(feature = "ffi")]
pub mod ffi;
#[cfg(feature = "std")]
pub mod fit;
mod floor;
pub mod histogram;
#[cfg(feature = "std")]
pub mod kde;
pub mod limits;
pub mod norm;
pub mod portable;
mod prefix;
mod radix;
#[cfg(feature = "std")]
pub mod recalibrate;
#[cfg(feature = "std")]
pub mod report;
pub mod reservoir;
pub mod rng;
pub mod sample;
pub mod select;
#[cfg(feature = "std")]
pub mod sim;
pub mod smece;
pub mod stats;
#[cfg(feature = "std")]
pub mod storage;
pub mod sweep;
pub mod toplabel;
#[cfg(feature = "std")]
pub mod weights;
pub mod window;

pub use alarm::{AlarmBin, CalibrationAlarm, InlineAlarm};
pub use binning::{Binning, Closure, Ties};
pub use buffer::{InlineBuffer, Slot, SortedBuffer, SortedSamples};
#[cfg(target_has_atomic = "64")]
pub use concurrent::{AtomicBin, BinStorage, ConcurrentHistogram, InlineStorage};
pub use decay::{DecayedBin, DecayingHistogram};
pub use error::{
    BadWeights, ConfigError, EstimateError, MergeError, NormError, PushError, ReduceError,
};
pub use estimate::Estimate;
pub use histogram::{Histogram, InlineHistogram};
pub use limits::{MAX_BINS, MAX_COUNT};
pub use norm::Norm;
pub use reservoir::{InlineReservoir, Reservoir};
pub use smece::{smooth_ece, smooth_ece_at, SmoothEce, SmoothEceError};
pub use stats::BinStats;
pub use sweep::{SweepLimit, SweepOptions};
pub use window::{InlineWindow, SlidingWindow};

#[cfg(feature = "std")]
pub use alarm::BoxedAlarm;
#[cfg(feature = "std")]
pub use buffer::BoxedBuffer;
#[cfg(all(feature = "std", target_has_atomic = "64"))]
pub use concurrent::BoxedConcurrentHistogram;
#[cfg(feature = "std")]
pub use decay::BoxedDecayingHistogram;
#[cfg(feature = "std")]
pub use histogram::BoxedHistogram;
#[cfg(feature = "std")]
pub use reservoir::BoxedReservoir;
#[cfg(feature = "std")]
pub use window::BoxedWindow;

/// The README's Rust examples run as doctests, so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// And so do those of every doc in docs/ that has Rust code blocks.
#[cfg(doctest)]
#[doc = include_str!("../docs/monitoring.md")]
struct MonitoringDoctests;

#[cfg(doctest)]
#[doc = include_str!("../docs/decisions.md")]
struct DecisionsDoctests;
