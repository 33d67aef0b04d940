//! Keyword options as the core's types. Defaults are the CLI's (15 bins, p = 2, left
//! closure, ties split, the sweep up to n bins without a cap); the binning defaults to
//! equal mass, as in the C API's default options and the paper's recommendation.

use pyo3::prelude::*;
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

/// An integer argument as Python gave it, whatever its size. PyO3's own conversion to a
/// Rust integer raises `OverflowError`, which is not a `tce.Error`; every integer
/// argument is taken as an `Int` instead and converted by [`count`], [`word`] or
/// [`index`] (through the `from_py_with` extractors below, or directly where the range
/// depends on the state, as a shard's), which refuse a value out of range with a named
/// error.
#[derive(Debug)]
pub(crate) enum Int {
    /// A value within ±2^127.
    Small(i128),
    /// A value beyond: its decimal digits, and whether it is negative.
    Huge { digits: String, negative: bool },
}

impl<'py> FromPyObject<'_, 'py> for Int {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<i128>() {
            Ok(value) => Ok(Int::Small(value)),
            // Only an integer overflows; anything else (a float, a string) stays the
            // TypeError it is.
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) => {
                Ok(Int::Huge {
                    digits: obj.str()?.to_string(),
                    negative: obj.lt(0)?,
                })
            }
            Err(e) => Err(e),
        }
    }
}

impl std::fmt::Display for Int {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Int::Small(value) => write!(f, "{value}"),
            Int::Huge { digits, .. } => f.write_str(digits),
        }
    }
}

impl Int {
    fn to<T: TryFrom<i128>>(&self) -> Option<T> {
        match self {
            Int::Small(value) => T::try_from(*value).ok(),
            Int::Huge { .. } => None,
        }
    }

    fn is_negative(&self) -> bool {
        match self {
            Int::Small(value) => *value < 0,
            Int::Huge { negative, .. } => *negative,
        }
    }
}

/// A count (bins, a capacity, a size, repetitions) as a `usize`; 0 passes, for the core's
/// own check to name. A negative value is `low` (the class of a zero: `ZeroBins`,
/// `ZeroCapacity`, ...), a value beyond `usize` the matching "too large" class.
pub(crate) fn count(value: &Int, what: &str, low: &'static str) -> Result<usize, Failure> {
    if value.is_negative() {
        return Err(Failure::Named(
            low,
            format!("{what} is {value}: it cannot be negative"),
        ));
    }
    value.to::<usize>().ok_or_else(|| {
        let high = match low {
            "ZeroBins" => "TooManyBins",
            "ZeroCapacity" => "CapacityTooLarge",
            other => other,
        };
        Failure::Named(
            high,
            format!(
                "{what} is {value}: above {}, the most it can be",
                usize::MAX
            ),
        )
    })
}

/// A 64-bit word (a seed, a repetition number): 0 to 2^64 − 1, else `InvalidOption`.
pub(crate) fn word(value: &Int, what: &str) -> Result<u64, Failure> {
    value.to::<u64>().ok_or_else(|| {
        Failure::option(format!("{what} is {value}: it must be in 0..={}", u64::MAX))
    })
}

/// An index into `len` things (a shard): 0 to len − 1, else `InvalidOption`; never
/// wrapped.
pub(crate) fn index(value: &Int, what: &str, len: usize) -> Result<usize, Failure> {
    value
        .to::<usize>()
        .filter(|&i| i < len)
        .ok_or_else(|| Failure::option(format!("{what} is {value}: it must be in 0..{len}")))
}

/// The conversion of one integer argument kind, for `#[pyo3(from_py_with = ...)]`: the
/// argument taken as an [`Int`], converted by `convert`, a failure raised as its named
/// `tce.Error`. Every integer argument of the package goes through one of these.
fn int_argument<T>(
    obj: &Bound<'_, PyAny>,
    convert: impl FnOnce(&Int) -> Result<T, Failure>,
) -> PyResult<T> {
    let value: Int = obj.extract()?;
    convert(&value).map_err(|e| e.into_py(obj.py(), &crate::errors::Quote::default()))
}

/// [`int_argument`], or `None` for Python's `None`.
fn optional_int_argument<T>(
    obj: &Bound<'_, PyAny>,
    convert: impl FnOnce(&Int) -> Result<T, Failure>,
) -> PyResult<Option<T>> {
    if obj.is_none() {
        return Ok(None);
    }
    int_argument(obj, convert).map(Some)
}

/// A list of integers, each converted by `convert` with its position in the message.
fn int_list_argument<T>(
    obj: &Bound<'_, PyAny>,
    what: &str,
    convert: impl Fn(&Int, &str) -> Result<T, Failure>,
) -> PyResult<Vec<T>> {
    let values: Vec<Int> = obj.extract()?;
    values
        .iter()
        .enumerate()
        .map(|(i, v)| convert(v, &format!("{what}[{i}]")))
        .collect::<Result<_, _>>()
        .map_err(|e| e.into_py(obj.py(), &crate::errors::Quote::default()))
}

macro_rules! int_arguments {
    ($($(#[$doc:meta])* $name:ident -> $ty:ty = $kind:ident($($convert:tt)*);)*) => {$(
        $(#[$doc])*
        pub(crate) fn $name(obj: &Bound<'_, PyAny>) -> PyResult<$ty> {
            int_arguments!(@ $kind obj, $($convert)*)
        }
    )*};
    (@ one $obj:ident, $convert:expr) => { int_argument($obj, $convert) };
    (@ optional $obj:ident, $convert:expr) => { optional_int_argument($obj, $convert) };
    (@ list $obj:ident, $what:literal, $convert:expr) => {
        int_list_argument($obj, $what, $convert)
    };
}

int_arguments! {
    /// `bins`: a fixed bin count (0 and above `MAX_BINS` are the core's to name).
    bins_arg -> usize = one(|v| count(v, "bins", "ZeroBins"));
    /// `max_bins`: the sweep's cap, or None.
    max_bins_arg -> Option<usize> = optional(|v| count(v, "max_bins", "ZeroBins"));
    /// `capacity` of a buffer or reservoir.
    capacity_arg -> usize = one(|v| count(v, "capacity", "ZeroCapacity"));
    /// `capacity` of a decoded buffer, or None.
    optional_capacity_arg -> Option<usize> = optional(|v| count(v, "capacity", "ZeroCapacity"));
    /// `size` of a window.
    size_arg -> usize = one(|v| count(v, "size", "ZeroCapacity"));
    /// `shards` of a concurrent histogram (0 is refused by the constructor).
    shards_arg -> usize = one(|v| count(v, "shards", "InvalidOption"));
    /// `seed` of a generator.
    seed_arg -> u64 = one(|v| word(v, "seed"));
    /// `rep`: a repetition number.
    rep_arg -> u64 = one(|v| word(v, "rep"));
    /// `n`: a data set's size.
    n_arg -> usize = one(|v| count(v, "n", "InvalidOption"));
    /// `sizes` of a simulation grid.
    sizes_arg -> Vec<usize> = list("sizes", |v, what| count(v, what, "SimulationError"));
    /// `bins` of a simulation grid.
    grid_bins_arg -> Vec<usize> = list("bins", |v, what| count(v, what, "SimulationError"));
    /// `repetitions` of a simulation.
    repetitions_arg -> usize = one(|v| count(v, "repetitions", "SimulationError"));
    /// `resamples` of a report or a calibration test.
    resamples_arg -> usize = one(|v| count(v, "resamples", "InvalidOption"));
    /// `samples` of an `Estimate`.
    estimate_samples_arg -> u64 = one(|v| word(v, "samples"));
    /// `bins` of an `Estimate` (0 for an estimator without bins).
    estimate_bins_arg -> usize = one(|v| count(v, "bins", "InvalidOption"));
    /// `simulations` of a report, or None.
    simulations_arg -> Option<usize> = optional(|v| count(v, "simulations", "InvalidOption"));
    /// `refits` of a report, or None.
    refits_arg -> Option<usize> = optional(|v| count(v, "refits", "InvalidOption"));
    /// `simulated_classes` of a classwise report, or None.
    simulated_classes_arg -> Option<usize> =
        optional(|v| count(v, "simulated_classes", "InvalidOption"));
    /// `groups` of a Hosmer-Lemeshow test.
    groups_arg -> usize = one(|v| count(v, "groups", "InvalidOption"));
    /// `power_simulations` of a calibration test.
    power_simulations_arg -> usize = one(|v| count(v, "power_simulations", "InvalidOption"));
    /// `test_resamples` of a report, or None.
    test_resamples_arg -> Option<usize> =
        optional(|v| count(v, "test_resamples", "InvalidOption"));
    /// `test_power_simulations` of a report, or None.
    test_power_simulations_arg -> Option<usize> =
        optional(|v| count(v, "test_power_simulations", "InvalidOption"));
}
