//! Smooth ECE in one call over score and label arrays, with caller scratch memory
//! ([`crate::smece`]; no allocation).

use super::boundary::ffi_boundary;
use super::raw::{array, array_mut, Out};
use super::status::tce_status;
use crate::smece::{smooth_ece, SmoothEceError};

/// The number of doubles of scratch `tce_smooth_ece` needs (`tce::smece::SCRATCH_LEN`:
/// the kernel at the smallest bandwidth the search can pick, forwards and backwards, and
/// the three grids the search keeps; 229 KiB).
pub const TCE_SMOOTH_ECE_SCRATCH_LEN: usize = 29_314;
const _: () = assert!(TCE_SMOOTH_ECE_SCRATCH_LEN == crate::smece::SCRATCH_LEN);

/// A smooth ECE and its bandwidth.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct tce_smooth_ece_result {
    /// smECE at the bandwidth below, as a fraction (an L1 distance: compare with TCE_1).
    pub value: f64,
    /// The bandwidth σ* of relplot's fixed-point search (a multiple of 2^-10).
    pub bandwidth: f64,
}

impl From<SmoothEceError> for tce_status {
    fn from(e: SmoothEceError) -> Self {
        match e {
            SmoothEceError::Empty => Self::NoSamples,
            SmoothEceError::Input(e) => e.into(),
            // Not reachable from `tce_smooth_ece`, which has no bandwidth argument.
            SmoothEceError::InvalidBandwidth(_) => Self::InvalidNorm,
            SmoothEceError::ScratchTooSmall { .. } => Self::BufferTooSmall,
            // Not reachable: the C API has no weighted smooth ECE.
            SmoothEceError::Weights(_) => Self::NonFiniteValue,
        }
    }
}

/// Smooth ECE (Błasiok & Nakkiran 2023) of the samples (`scores[i]`, `labels[i]`), as
/// relplot 1.0.3's `smECE` computes it: reflected Gaussian kernel smoothing of the
/// residuals, bandwidth σ* where smECE_σ = σ by relplot's bisection. `scratch` holds at
/// least `TCE_SMOOTH_ECE_SCRATCH_LEN` doubles (`scratch_len` counts doubles), any
/// contents; nothing is allocated. Equals `tce::smooth_ece` bit for bit.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `LENGTH_MISMATCH`, `NO_SAMPLES` (n = 0),
/// `BUFFER_TOO_SMALL` (scratch below `TCE_SMOOTH_ECE_SCRATCH_LEN`), `NON_FINITE_SCORE`,
/// `SCORE_OUT_OF_RANGE`, `INVALID_LABEL`, `CAPACITY_TOO_LARGE`.
///
/// # Safety
/// `scores` / `labels` NULL or readable for their lengths; `scratch` NULL or writable for
/// `scratch_len` doubles, overlapping nothing else; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tce_smooth_ece(
    scores: *const f64,
    scores_len: usize,
    labels: *const u8,
    labels_len: usize,
    scratch: *mut f64,
    scratch_len: usize,
    out: *mut tce_smooth_ece_result,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: forwarded contract.
        let out = unsafe { Out::new(out)? };
        // SAFETY: forwarded contract.
        let (scores, labels) = unsafe { (array(scores, scores_len)?, array(labels, labels_len)?) };
        // SAFETY: forwarded contract: writable, exclusive for the call.
        let scratch = unsafe { array_mut(scratch, scratch_len)? };
        let result = smooth_ece(scores, labels, scratch)?;
        out.write(tce_smooth_ece_result {
            value: result.value,
            bandwidth: result.bandwidth,
        });
        Ok(())
    })
}
