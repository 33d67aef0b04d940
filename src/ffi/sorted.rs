//! What the sorted buffer, the sliding window and the reservoir share: the estimators
//! and bin statistics of [`SortedSamples`], behind one code path. Each state provides a
//! [`WithSamples`] function that checks its handle and lends its sorted samples.

use super::boundary::{ffi_boundary, Outcome};
use super::raw::{array_mut, Out};
use super::status::tce_status;
use super::types::{options, tce_bin_stats, tce_estimate, tce_options, Options};
use crate::binning::Binning;
use crate::buffer::SortedSamples;
use crate::estimate;

/// What a state's [`WithSamples`] calls with its sorted samples.
pub(crate) type UseSamples<'f> = &'f mut dyn FnMut(SortedSamples<'_>) -> Outcome;

/// Checks a handle `H` and calls the function with the state's sorted samples.
///
/// # Safety
/// The handle must be NULL or valid (the state's own contract).
pub(crate) type WithSamples<H> = unsafe fn(H, UseSamples<'_>) -> Outcome;

/// What an estimator of the sorted samples computes.
pub(crate) enum Estimator {
    EceBin,
    Mce,
    EceDebias,
    EceSweep,
}

impl Estimator {
    /// Checks the bin count the estimator will use, before any work on the state (a
    /// sort, say): `ZERO_BINS`, `TOO_MANY_BINS`. The sweep ignores `bins`, and its
    /// `max_bins` is a cap that cannot be too large (see `SweepOptions::max_bins`).
    pub(crate) fn check(&self, o: &Options) -> Outcome {
        match self {
            Self::EceBin | Self::Mce | Self::EceDebias => Ok(estimate::check_bins(o.bins)?),
            Self::EceSweep => Ok(()),
        }
    }

    pub(crate) fn run(
        &self,
        sorted: &SortedSamples<'_>,
        o: &Options,
    ) -> Result<tce_estimate, tce_status> {
        let estimate = match self {
            Self::EceBin => sorted.ece_bin(o.binning, o.bins, o.norm),
            Self::Mce => sorted.mce(o.binning, o.bins),
            Self::EceDebias => sorted.ece_debias(o.binning, o.bins, o.norm),
            Self::EceSweep => sorted.ece_sweep(o.binning, o.norm, o.sweep),
        };
        Ok(estimate?.into())
    }
}

/// The body of `tce_<state>_{ece_bin,mce,ece_debias,ece_sweep}`.
///
/// # Safety
/// `handle` as `with` requires; `options` NULL or readable; `out` NULL or writable.
pub(crate) unsafe fn estimate<H>(
    estimator: Estimator,
    handle: H,
    with: WithSamples<H>,
    options: *const tce_options,
    out: *mut tce_estimate,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: forwarded contract.
        let (options, out) = unsafe { (self::options(options)?, Out::new(out)?) };
        estimator.check(&options)?;
        let mut out = Some(out);
        // SAFETY: forwarded contract.
        unsafe {
            with(handle, &mut |sorted| {
                let estimate = estimator.run(&sorted, &options)?;
                if let Some(out) = out.take() {
                    out.write(estimate);
                }
                Ok(())
            })
        }
    })
}

/// The body of `tce_<state>_bin_stats`.
///
/// # Safety
/// `handle` as `with` requires; `options` NULL or readable; `out` NULL or writable for
/// `out_len` elements, not overlapping the state.
pub(crate) unsafe fn bin_stats<H>(
    handle: H,
    with: WithSamples<H>,
    options: *const tce_options,
    out: *mut tce_bin_stats,
    out_len: usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: forwarded contract.
        let options = unsafe { self::options(options)? };
        // SAFETY: forwarded contract.
        let out = unsafe { array_mut(out, out_len)? };
        check_bin_stats(options.bins, out.len())?;
        // SAFETY: forwarded contract.
        unsafe {
            with(handle, &mut |sorted| {
                write_bin_stats(&sorted, options.binning, options.bins, out)
            })
        }
    })
}

/// Checks a bin-statistics request before any work: the bin count (`ZERO_BINS`,
/// `TOO_MANY_BINS`), then the room for it (`BUFFER_TOO_SMALL`).
pub(crate) fn check_bin_stats(bins: usize, room: usize) -> Outcome {
    estimate::check_bins(bins)?;
    if room < bins {
        return Err(tce_status::BufferTooSmall);
    }
    Ok(())
}

/// The statistics of the `bins` bins of `binning` over the sorted samples, into `out`.
pub(crate) fn write_bin_stats(
    sorted: &SortedSamples<'_>,
    binning: Binning,
    bins: usize,
    out: &mut [tce_bin_stats],
) -> Result<(), tce_status> {
    check_bin_stats(bins, out.len())?;
    let bin_stats = sorted.bins_with_score_ranges(binning, bins);
    // (A bounded range, not `enumerate`: no overflow path.)
    for (k, (slot, (stats, scores))) in (0..bins).zip(out.iter_mut().zip(bin_stats)) {
        *slot = match binning {
            Binning::EqualWidth(_) => tce_bin_stats::equal_width(&stats, k, bins),
            Binning::EqualMass(_) => {
                tce_bin_stats::new(&stats, scores.unwrap_or((f64::NAN, f64::NAN)))
            }
        };
    }
    Ok(())
}
