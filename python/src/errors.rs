//! Every failure of the core (or of the inputs before they reach it) as the one Python
//! exception that names its cause, with the index and value of the first bad element.
//!
//! The exception classes are plain Python (`tce/_py.py`, so their docstrings and
//! hierarchy are readable there); this module only picks one and writes the message.
//! Panics never cross into Python: [`guard`] catches them and raises `tce.InternalError`.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::types::PyType;
use tce::kde::KdeError;
use tce::portable::{DecodeError, EncodeError};
use tce::{ConfigError, EstimateError, MergeError, NormError, PushError, ReduceError};

/// Why a call failed, before it becomes a Python exception.
#[derive(Debug)]
pub(crate) enum Failure {
    Push(PushError),
    Config(ConfigError),
    Estimate(EstimateError),
    Norm(NormError),
    Merge(MergeError),
    Decode(DecodeError),
    Encode(EncodeError),
    /// A multiclass row that could not be reduced to its top label.
    Reduce {
        row: usize,
        error: ReduceError,
    },
    Kde(KdeError),
    Smooth(tce::smece::SmoothEceError),
    /// A weighted estimate's refusal (`tce::weights`).
    Weight(tce::weights::WeightError),
    /// An exception class of `tce._py` by name, with its message (the simulator, the
    /// fits, options and shapes).
    Named(&'static str, String),
    /// Storage for `what` could not be allocated.
    Memory(String),
}

macro_rules! from_core {
    ($($variant:ident($ty:ty)),*) => {$(
        impl From<$ty> for Failure {
            fn from(e: $ty) -> Self {
                Failure::$variant(e)
            }
        }
    )*};
}
from_core!(
    Push(PushError),
    Config(ConfigError),
    Estimate(EstimateError),
    Norm(NormError),
    Merge(MergeError),
    Decode(DecodeError),
    Encode(EncodeError),
    Kde(KdeError),
    Smooth(tce::smece::SmoothEceError),
    Weight(tce::weights::WeightError)
);

impl Failure {
    pub(crate) fn option(message: impl Into<String>) -> Self {
        Failure::Named("InvalidOption", message.into())
    }
}

/// What a message may quote of the inputs: the value of the score, label or table cell
/// at an index (as Python's `repr` writes it).
#[derive(Default)]
pub(crate) struct Quote<'a> {
    /// The scores, when they are a 1-D array.
    pub(crate) scores: Option<&'a [f64]>,
    /// The multiclass table and its number of columns.
    pub(crate) table: Option<(&'a [f64], usize)>,
    /// The labels as the caller passed them (after `numpy.asarray`).
    pub(crate) labels: Option<&'a Bound<'a, PyAny>>,
}

impl Quote<'_> {
    fn float(value: Option<f64>) -> String {
        match value {
            Some(v) if v.is_nan() => "nan".to_owned(),
            Some(v) if v.is_infinite() => if v > 0.0 { "inf" } else { "-inf" }.to_owned(),
            Some(v) => format!("{v:?}"),
            None => "?".to_owned(),
        }
    }

    fn score(&self, index: usize) -> String {
        Self::float(self.scores.and_then(|s| s.get(index).copied()))
    }

    fn cell(&self, row: usize, column: usize) -> String {
        Self::float(
            self.table
                .and_then(|(t, k)| t.get(row.checked_mul(k)?.checked_add(column)?).copied()),
        )
    }

    fn label(&self, index: usize) -> String {
        self.labels
            .and_then(|labels| labels.get_item(index).ok())
            .and_then(|item| item.str().ok())
            .map_or_else(|| "?".to_owned(), |r| r.to_string())
    }
}

/// The exception class `name` of `tce._py`.
fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    Ok(py.import("tce._py")?.getattr(name)?.cast_into::<PyType>()?)
}

/// A `tce._py.<name>` exception with `message`.
pub(crate) fn error(py: Python<'_>, name: &str, message: impl Into<String>) -> PyErr {
    let message = message.into();
    match class(py, name) {
        Ok(class) => PyErr::from_type(class, message),
        Err(e) => e,
    }
}

impl Failure {
    /// The exception, its message quoting `quote`'s values.
    pub(crate) fn into_py(self, py: Python<'_>, quote: &Quote<'_>) -> PyErr {
        let (name, message) = self.describe(quote);
        if name == "MemoryError" {
            return pyo3::exceptions::PyMemoryError::new_err(message);
        }
        error(py, name, message)
    }

    fn describe(self, q: &Quote<'_>) -> (&'static str, String) {
        use Failure as F;
        match self {
            F::Push(e) => push(e, q),
            F::Config(e) => (
                match e {
                    ConfigError::ZeroBins => "ZeroBins",
                    ConfigError::ZeroCapacity => "ZeroCapacity",
                    ConfigError::InvalidHalfLife => "InvalidHalfLife",
                    ConfigError::InvalidShift => "InvalidShift",
                    ConfigError::InvalidThreshold => "InvalidThreshold",
                    ConfigError::CapacityTooLarge { .. } => "CapacityTooLarge",
                    ConfigError::TooManyBins { .. } => "TooManyBins",
                    ConfigError::StorageMismatch { .. } | ConfigError::ShardMismatch { .. } => {
                        "InternalError"
                    }
                },
                e.to_string(),
            ),
            F::Estimate(e) => (
                match e {
                    EstimateError::NoSamples => "NoSamples",
                    EstimateError::ZeroBins => "ZeroBins",
                    EstimateError::TooManyBins { .. } => "TooManyBins",
                    EstimateError::DegenerateWeights => "DegenerateWeights",
                    EstimateError::CountOverflow => "CountOverflow",
                },
                e.to_string(),
            ),
            F::Norm(e) => ("InvalidNorm", e.to_string()),
            F::Merge(e) => (
                match e {
                    MergeError::Full { .. } => "BufferFull",
                    MergeError::CountOverflow => "CountOverflow",
                    MergeError::BinCountMismatch { .. }
                    | MergeError::ClosureMismatch
                    | MergeError::CapacityMismatch { .. }
                    | MergeError::HalfLifeMismatch => "MergeMismatch",
                },
                e.to_string(),
            ),
            F::Decode(e) => ("DecodeError", e.to_string()),
            F::Encode(e) => ("EncodeError", e.to_string()),
            F::Reduce { row, error } => reduce(row, error, q),
            F::Kde(KdeError::Input(e)) => push(e, q),
            F::Kde(e @ KdeError::Empty) => ("NoSamples", e.to_string()),
            F::Kde(KdeError::Weights(e)) | F::Smooth(tce::smece::SmoothEceError::Weights(e)) => {
                match e {
                    tce::BadWeights::LengthMismatch { .. } => ("LengthMismatch", e.to_string()),
                    _ => ("InvalidWeight", e.to_string()),
                }
            }
            F::Kde(e) => ("KdeUndefined", e.to_string()),
            F::Smooth(tce::smece::SmoothEceError::Input(e)) => push(e, q),
            F::Smooth(e @ tce::smece::SmoothEceError::Empty) => ("NoSamples", e.to_string()),
            // The search's own bandwidths and scratch are always valid.
            F::Smooth(e) => ("InternalError", e.to_string()),
            F::Weight(tce::weights::WeightError::Push(e)) => push(e, q),
            F::Weight(tce::weights::WeightError::Estimate(e)) => F::Estimate(e).describe(q),
            F::Weight(
                e @ tce::weights::WeightError::Weights(tce::BadWeights::LengthMismatch { .. }),
            ) => ("LengthMismatch", e.to_string()),
            F::Weight(e) => ("InvalidWeight", e.to_string()),
            F::Named(name, message) => (name, message),
            F::Memory(what) => ("MemoryError", format!("cannot allocate {what}")),
        }
    }
}

fn push(e: PushError, q: &Quote<'_>) -> (&'static str, String) {
    match e {
        PushError::NonFiniteScore { index } => (
            "NonFiniteScore",
            format!("score at index {index} is {}: not finite", q.score(index)),
        ),
        PushError::ScoreOutOfRange { index } => (
            "ScoreOutOfRange",
            format!(
                "score at index {index} is {}, outside [0, 1]",
                q.score(index)
            ),
        ),
        PushError::InvalidLabel { index } => (
            "InvalidLabel",
            format!(
                "label at index {index} is {}, neither 0 nor 1",
                q.label(index)
            ),
        ),
        PushError::LengthMismatch { .. } => ("LengthMismatch", e.to_string()),
        PushError::Full { .. } => ("BufferFull", e.to_string()),
        PushError::CountOverflow => ("CountOverflow", e.to_string()),
    }
}

fn reduce(row: usize, e: ReduceError, q: &Quote<'_>) -> (&'static str, String) {
    match e {
        ReduceError::NonFinite { index } => (
            "NonFiniteScore",
            format!(
                "scores[{row}, {index}] is {}: not finite",
                q.cell(row, index)
            ),
        ),
        ReduceError::ProbabilityOutOfRange { index } => (
            "ScoreOutOfRange",
            format!(
                "scores[{row}, {index}] is {}, outside [0, 1] (logits? pass logits=True)",
                q.cell(row, index)
            ),
        ),
        ReduceError::NotNormalized => (
            "NotNormalized",
            format!(
                "the probabilities of row {row} do not sum to 1 within {} (logits? pass logits=True)",
                tce::toplabel::PROBABILITY_SUM_TOLERANCE
            ),
        ),
        ReduceError::ClassOutOfRange { classes, .. } => (
            "InvalidLabel",
            format!(
                "label at index {row} is {}, not a class of the {classes} columns",
                q.label(row)
            ),
        ),
        ReduceError::EmptyRow | ReduceError::ShapeMismatch => {
            ("ShapeMismatch", format!("row {row}: {e}"))
        }
    }
}

thread_local! {
    /// How many [`guard`]s this thread is inside: their panics are reported as
    /// `tce.InternalError`, so the panic hook stays silent for them.
    static GUARDED: Cell<u32> = const { Cell::new(0) };
}

/// Installs a panic hook that is silent inside [`guard`] (the panic becomes an exception
/// there) and otherwise defers to the hook it replaces.
pub(crate) fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if GUARDED.with(Cell::get) == 0 {
            previous(info);
        }
    }));
}

/// Runs `f`; a panic in it (a bug) becomes `tce.InternalError`, never a crash or a Rust
/// panic message.
pub(crate) fn guard<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    GUARDED.with(|g| g.set(g.get() + 1));
    let result = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    result.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(error(
            py,
            "InternalError",
            format!("internal error in tce (a bug, please report it): {what}"),
        ))
    })
}

/// For the tests only: panics inside [`guard`], with the GIL released as in every state
/// method, so that python/tests/test_errors.py can show that a panic becomes
/// `tce.InternalError`, prints nothing, and leaves the interpreter working. Not part of
/// the API: `tce._tce._panic_for_test`, underscored, absent from the stubs and from
/// `tce`'s namespace.
#[pyfunction]
#[pyo3(name = "_panic_for_test")]
pub(crate) fn panic_for_test(py: Python<'_>) -> PyResult<()> {
    guard(py, || {
        py.detach(|| -> Result<(), Failure> {
            panic!("deliberate panic (tce._tce._panic_for_test)")
        })
        .map_err(crate::functions::raise(py))
    })
}
