//! Plain C types: estimates, options, per-bin statistics, and the named values of the
//! enums that functions take as `uint32_t` (so that an out-of-range value from C is
//! `TCE_STATUS_INVALID_ENUM`, never undefined behaviour).

use super::boundary::ffi_boundary;
use super::raw::Out;
use super::status::tce_status;
use crate::binning::{equal_width_edges, Binning, Closure, Ties};
use crate::estimate::Estimate;
use crate::norm::Norm;
use crate::stats::BinStats;
use crate::sweep::{SweepLimit, SweepOptions};

/// An estimate and what it was computed from.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct tce_estimate {
    /// The calibration error, as a fraction (not percent).
    pub value: f64,
    /// The number of samples n.
    pub samples: u64,
    /// The number of bins used, empty ones included; b* for the sweep.
    pub bins: usize,
}

impl From<Estimate> for tce_estimate {
    fn from(e: Estimate) -> Self {
        tce_estimate {
            value: e.value,
            samples: e.samples,
            bins: e.bins,
        }
    }
}

/// Which side of an equal-width bin is closed (values of a `uint32_t closure`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tce_closure {
    /// Bin k covers [k/B, (k+1)/B); a score of exactly 1 goes to bin B−1. The paper's
    /// convention and the default.
    Left = 0,
    /// Bin k covers (k/B, (k+1)/B]; a score of exactly 0 goes to bin 0 (Guo et al. 2017,
    /// scikit-learn, Kumar et al.).
    Right = 1,
}

/// How equal-mass binning treats equal scores (values of a `uint32_t ties`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tce_ties {
    /// Rank splitting in arrival order: equal scores may straddle a bin edge; bin sizes
    /// are exactly floor(n/B) or ceil(n/B). The default, as in the paper.
    Split = 0,
    /// Equal scores always share a bin: an edge inside a group of equal scores moves to
    /// the end of the group (bins may then be unequal or empty).
    Keep = 1,
}

/// A binning scheme (values of a `uint32_t binning`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tce_binning {
    /// B equal-width bins on [0, 1], closed as `tce_options.closure` says.
    EqualWidth = 0,
    /// B bins of (nearly) equal count over the sorted scores, ties as
    /// `tce_options.ties` says. The default (the paper recommends it).
    EqualMass = 1,
}

/// The largest bin count the sweep tries (values of a `uint32_t sweep_limit`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tce_sweep_limit {
    /// Up to n bins, as the paper describes. The default.
    Samples = 0,
    /// Up to n − 1 bins, as the paper's released code does.
    PaperCode = 1,
}

/// Options of the estimators over a sorted buffer or over arrays. Start from
/// `tce_options_default()` and change what you need.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct tce_options {
    /// The norm exponent p ≥ 1 (finite); 2 is the paper's choice. Ignored by MCE.
    pub p: f64,
    /// A `tce_binning` value.
    pub binning: u32,
    /// A `tce_closure` value (equal-width binning).
    pub closure: u32,
    /// A `tce_ties` value (equal-mass binning).
    pub ties: u32,
    /// A `tce_sweep_limit` value (ECE_sweep only).
    pub sweep_limit: u32,
    /// The number of bins B of ECE_bin, MCE, ECE_debias and the bin statistics (not of
    /// the sweep, which chooses b*). Must be at least 1.
    pub bins: usize,
    /// ECE_sweep only: a cap on b* (and on the work), or 0 for none.
    pub max_bins: usize,
}

impl Default for tce_options {
    fn default() -> Self {
        tce_options {
            p: 2.0,
            binning: tce_binning::EqualMass as u32,
            closure: tce_closure::Left as u32,
            ties: tce_ties::Split as u32,
            sweep_limit: tce_sweep_limit::Samples as u32,
            bins: 15,
            max_bins: 0,
        }
    }
}

/// The default options: p = 2, 15 equal-mass bins with ties split, left-closed
/// equal-width bins if switched to equal width, the sweep up to n bins without a cap.
#[no_mangle]
pub extern "C" fn tce_options_default() -> tce_options {
    tce_options::default()
}

/// The statistics of one bin, for reliability diagrams.
///
/// An empty bin (`count` 0) reports `mean_score` and `accuracy` as NaN (test with
/// `isnan`), never 0, so it cannot be mistaken for a bin of misses.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct tce_bin_stats {
    /// Lower edge. Equal-width bins: k/B. Equal-mass bins (which have no fixed edges):
    /// the smallest score in the bin, NaN if it is empty.
    pub lower: f64,
    /// Upper edge. Equal-width bins: (k+1)/B. Equal-mass bins: the largest score in the
    /// bin, NaN if it is empty.
    pub upper: f64,
    /// Samples in the bin, n_k.
    pub count: u64,
    /// Hits (label 1) in the bin.
    pub hits: u64,
    /// Mean score f̄_k; NaN if the bin is empty.
    pub mean_score: f64,
    /// Accuracy ȳ_k = hits / count; NaN if the bin is empty.
    pub accuracy: f64,
}

impl tce_bin_stats {
    pub(crate) fn new(stats: &BinStats, (lower, upper): (f64, f64)) -> Self {
        tce_bin_stats {
            lower,
            upper,
            count: stats.count(),
            hits: stats.hits(),
            mean_score: stats.mean_score().unwrap_or(f64::NAN),
            accuracy: stats.accuracy().unwrap_or(f64::NAN),
        }
    }

    pub(crate) fn equal_width(stats: &BinStats, k: usize, bins: usize) -> Self {
        Self::new(stats, equal_width_edges(k, bins))
    }
}

/// Validated options.
pub(crate) struct Options {
    pub(crate) norm: Norm,
    pub(crate) binning: Binning,
    pub(crate) bins: usize,
    pub(crate) sweep: SweepOptions,
}

pub(crate) fn closure(value: u32) -> Result<Closure, tce_status> {
    match value {
        0 => Ok(Closure::Left),
        1 => Ok(Closure::Right),
        _ => Err(tce_status::InvalidEnum),
    }
}

pub(crate) fn norm(p: f64) -> Result<Norm, tce_status> {
    Ok(Norm::new(p)?)
}

impl Options {
    /// Validates the enums and p (not `bins`: the estimators report `ZERO_BINS`).
    pub(crate) fn from_c(o: &tce_options) -> Result<Self, tce_status> {
        let binning = match o.binning {
            0 => Binning::EqualWidth(closure(o.closure)?),
            1 => Binning::EqualMass(match o.ties {
                0 => Ties::Split,
                1 => Ties::Keep,
                _ => return Err(tce_status::InvalidEnum),
            }),
            _ => return Err(tce_status::InvalidEnum),
        };
        // Validate every enum field, used or not, so that a bad value is never silent.
        closure(o.closure)?;
        if o.ties > 1 {
            return Err(tce_status::InvalidEnum);
        }
        let limit = match o.sweep_limit {
            0 => SweepLimit::Samples,
            1 => SweepLimit::PaperCode,
            _ => return Err(tce_status::InvalidEnum),
        };
        let max_bins = if o.max_bins == 0 {
            None
        } else {
            Some(o.max_bins)
        };
        Ok(Options {
            norm: norm(o.p)?,
            binning,
            bins: o.bins,
            sweep: SweepOptions { max_bins, limit },
        })
    }
}

/// Reads and validates options; NULL means the defaults.
///
/// # Safety
/// A non-NULL `options` must point to a readable `tce_options`.
pub(crate) unsafe fn options(options: *const tce_options) -> Result<Options, tce_status> {
    if options.is_null() {
        return Err(tce_status::NullPointer);
    }
    if !super::raw::is_aligned(options) {
        return Err(tce_status::Misaligned);
    }
    // SAFETY: non-NULL, aligned, readable (contract); every bit pattern of its fields
    // (f64, u32, usize) is a valid value.
    Options::from_c(unsafe { &*options })
}

/// Writes the `tce_status` of validating `options` (without any data): a way to check a
/// configuration once, up front.
///
/// # Safety
/// `options` must be NULL or point to a readable `tce_options`.
#[no_mangle]
pub unsafe extern "C" fn tce_options_validate(options: *const tce_options) -> tce_status {
    ffi_boundary!({
        // SAFETY: forwarded contract.
        unsafe { self::options(options) }?;
        Ok(())
    })
}

/// Writes an estimate to an out-parameter.
pub(crate) fn write_estimate(out: Out<tce_estimate>, e: Estimate) {
    out.write(e.into());
}
