//! Keyword options as the core's types. Defaults are the CLI's (15 bins, p = 2, left
//! closure, ties split, the sweep up to n bins without a cap); the binning defaults to
//! equal mass, as in the C API's default options and the paper's recommendation.

use tce::{Binning, Closure, Norm, SweepLimit, SweepOptions, Ties};

use crate::errors::Failure;

pub(crate) fn closure(name: &str) -> Result<Closure, Failure> {
    match name {
        "left" => Ok(Closure::Left),
        "right" => Ok(Closure::Right),
        other => Err(Failure::option(format!(
            "closure must be \"left\" or \"right\", not {other:?}"
        ))),
    }
}

pub(crate) fn closure_name(closure: Closure) -> &'static str {
    match closure {
        Closure::Left => "left",
        Closure::Right => "right",
    }
}

pub(crate) fn ties(name: &str) -> Result<Ties, Failure> {
    match name {
        "split" => Ok(Ties::Split),
        "keep" => Ok(Ties::Keep),
        other => Err(Failure::option(format!(
            "ties must be \"split\" or \"keep\", not {other:?}"
        ))),
    }
}

/// The binning; `closure` and `ties` are both checked whichever applies, so that a bad
/// value is never silent.
pub(crate) fn binning(name: &str, closure_name: &str, ties_name: &str) -> Result<Binning, Failure> {
    let (closure, ties) = (closure(closure_name)?, ties(ties_name)?);
    match name {
        "equal_width" => Ok(Binning::EqualWidth(closure)),
        "equal_mass" => Ok(Binning::EqualMass(ties)),
        other => Err(Failure::option(format!(
            "binning must be \"equal_width\" or \"equal_mass\", not {other:?}"
        ))),
    }
}

pub(crate) fn norm(p: f64) -> Result<Norm, Failure> {
    Ok(Norm::new(p)?)
}

pub(crate) fn sweep(limit: &str, max_bins: Option<usize>) -> Result<SweepOptions, Failure> {
    let limit = match limit {
        "samples" => SweepLimit::Samples,
        "paper_code" => SweepLimit::PaperCode,
        other => {
            return Err(Failure::option(format!(
                "sweep_limit must be \"samples\" or \"paper_code\", not {other:?}"
            )))
        }
    };
    Ok(SweepOptions { max_bins, limit })
}

/// A fixed bin count, checked by the core's rule before any work or allocation.
pub(crate) fn bins(bins: usize) -> Result<usize, Failure> {
    tce::binning::check_bin_count(bins)?;
    Ok(bins)
}

/// `len` values of `T` on the heap, or a `MemoryError` naming `what` (never an abort).
pub(crate) fn boxed<T: Clone>(value: T, len: usize, what: &str) -> Result<Box<[T]>, Failure> {
    tce::storage::filled(value, len)
        .map_err(|_| Failure::Memory(format!("storage for {len} {what}")))
}

/// `len` empty values of `T`, zero-filled by the allocator (so a large window or
/// reservoir decoded from a short frame costs the memory of the samples it holds, see
/// `tce::storage`), or a `MemoryError` naming `what`.
pub(crate) fn zeroed<T: tce::storage::ZeroIsEmpty>(
    len: usize,
    what: &str,
) -> Result<Box<[T]>, Failure> {
    tce::storage::zeroed(len).map_err(|_| Failure::Memory(format!("storage for {len} {what}")))
}
