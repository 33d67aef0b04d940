//! Arrays in: float64 scores without a copy when they already are contiguous float64,
//! anything else numpy can read (other dtypes, lists, torch CPU tensors through
//! `__array__`) converted once; labels of any integer, bool or float dtype. A table of
//! N×K class probabilities or logits is reduced to its top label by the core.

use std::borrow::Cow;

use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

use crate::errors::{guard, Failure, Quote};

/// Scores as numpy gave them: a vector, or a table of K columns (multiclass).
pub(crate) enum Scores<'py> {
    Vector(PyReadonlyArray1<'py, f64>),
    Table(PyReadonlyArray2<'py, f64>),
}

fn numpy(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("numpy")
}

/// `numpy.asarray(obj)` and its dtype's kind character.
fn as_array<'py>(obj: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, char)> {
    let array = numpy(obj.py())?.call_method1("asarray", (obj,))?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    Ok((array, kind.chars().next().unwrap_or('?')))
}

fn unsupported(py: Python<'_>, what: &str, kind: char) -> PyErr {
    crate::errors::error(
        py,
        "UnsupportedDtype",
        format!("{what} must be numbers (got a numpy array of dtype kind '{kind}')"),
    )
}

/// Refuses a numpy masked array: its mask says which elements to leave out, which a
/// conversion to an array would drop silently (`numpy.asarray` keeps the data under the
/// mask). The caller chooses: `a.compressed()` (with the labels compressed alike) or
/// `a.filled(value)`.
fn refuse_masked(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    let py = obj.py();
    // A plain ndarray (the common case) cannot be masked: no lookup.
    if obj.get_type().is(py.get_type::<numpy::PyUntypedArray>()) {
        return Ok(());
    }
    let masked = numpy(py)?.getattr("ma")?.getattr("MaskedArray")?;
    if obj.is_instance(&masked)? {
        return Err(crate::errors::error(
            py,
            "MaskedInput",
            format!(
                "{what} is a numpy masked array: tce does not drop or fill masked elements; \
                 pass a.compressed() (the labels compressed alike) or a.filled(value)"
            ),
        ));
    }
    Ok(())
}

fn shape_error(py: Python<'_>, message: String) -> PyErr {
    crate::errors::error(py, "ShapeMismatch", message)
}

impl<'py> Scores<'py> {
    pub(crate) fn from_py(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        refuse_masked(obj, "scores")?;
        // The no-copy paths: contiguous float64.
        if let Ok(a) = obj.cast::<PyArray1<f64>>() {
            if a.is_contiguous() {
                return Ok(Scores::Vector(a.try_readonly()?));
            }
        }
        if let Ok(a) = obj.cast::<PyArray2<f64>>() {
            if a.is_c_contiguous() {
                return Ok(Scores::Table(a.try_readonly()?));
            }
        }
        let py = obj.py();
        let (array, kind) = as_array(obj)?;
        if !"fiub".contains(kind) {
            return Err(unsupported(py, "scores", kind));
        }
        let array = numpy(py)?.call_method1("ascontiguousarray", (array, "float64"))?;
        if let Ok(a) = array.cast::<PyArray1<f64>>() {
            return Ok(Scores::Vector(a.try_readonly()?));
        }
        if let Ok(a) = array.cast::<PyArray2<f64>>() {
            return Ok(Scores::Table(a.try_readonly()?));
        }
        let ndim: usize = array.getattr("ndim")?.extract()?;
        Err(shape_error(
            py,
            format!("scores must be a vector or an N×K table, not an array of {ndim} dimensions"),
        ))
    }
}

/// Labels as numpy gave them, in a dtype the conversion below reads.
pub(crate) struct Labels<'py> {
    /// The labels as passed, after `numpy.asarray`: what messages quote.
    pub(crate) original: Bound<'py, PyAny>,
    data: LabelArray<'py>,
}

enum LabelArray<'py> {
    U8(PyReadonlyArray1<'py, u8>),
    Bool(PyReadonlyArray1<'py, bool>),
    I64(PyReadonlyArray1<'py, i64>),
    U64(PyReadonlyArray1<'py, u64>),
    F64(PyReadonlyArray1<'py, f64>),
}

/// The label values, borrowed (so that they can cross into a call without the GIL).
#[derive(Clone, Copy)]
pub(crate) enum LabelSlice<'a> {
    U8(&'a [u8]),
    Bool(&'a [bool]),
    I64(&'a [i64]),
    U64(&'a [u64]),
    F64(&'a [f64]),
}

/// The value a label that is neither 0 nor 1 becomes: any u8 above 1, which the core
/// refuses as `InvalidLabel` at its index (the message quotes the original value).
const NOT_A_LABEL: u8 = u8::MAX;

impl<'py> Labels<'py> {
    pub(crate) fn from_py(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        refuse_masked(obj, "labels")?;
        if let Ok(a) = obj.cast::<PyArray1<u8>>() {
            if a.is_contiguous() {
                return Ok(Labels {
                    original: obj.clone(),
                    data: LabelArray::U8(a.try_readonly()?),
                });
            }
        }
        let py = obj.py();
        let (array, kind) = as_array(obj)?;
        let dtype = match kind {
            'b' => "bool",
            'u' => "uint64",
            'i' => "int64",
            'f' => "float64",
            _ => return Err(unsupported(py, "labels", kind)),
        };
        let converted = numpy(py)?.call_method1("ascontiguousarray", (&array, dtype))?;
        let ndim: usize = converted.getattr("ndim")?.extract()?;
        if ndim != 1 {
            return Err(shape_error(
                py,
                format!("labels must be a vector, not an array of {ndim} dimensions"),
            ));
        }
        let data = match kind {
            'b' => LabelArray::Bool(converted.cast::<PyArray1<bool>>()?.try_readonly()?),
            'u' => LabelArray::U64(converted.cast::<PyArray1<u64>>()?.try_readonly()?),
            'i' => LabelArray::I64(converted.cast::<PyArray1<i64>>()?.try_readonly()?),
            _ => LabelArray::F64(converted.cast::<PyArray1<f64>>()?.try_readonly()?),
        };
        Ok(Labels {
            original: array,
            data,
        })
    }

    pub(crate) fn slice(&self) -> Result<LabelSlice<'_>, Failure> {
        let internal = |_| Failure::Named("InternalError", "labels not contiguous".into());
        Ok(match &self.data {
            LabelArray::U8(a) => LabelSlice::U8(a.as_slice().map_err(internal)?),
            LabelArray::Bool(a) => LabelSlice::Bool(a.as_slice().map_err(internal)?),
            LabelArray::I64(a) => LabelSlice::I64(a.as_slice().map_err(internal)?),
            LabelArray::U64(a) => LabelSlice::U64(a.as_slice().map_err(internal)?),
            LabelArray::F64(a) => LabelSlice::F64(a.as_slice().map_err(internal)?),
        })
    }
}

impl<'a> LabelSlice<'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            LabelSlice::U8(s) => s.len(),
            LabelSlice::Bool(s) => s.len(),
            LabelSlice::I64(s) => s.len(),
            LabelSlice::U64(s) => s.len(),
            LabelSlice::F64(s) => s.len(),
        }
    }

    /// Binary labels as the core takes them (`u8`), borrowed when they already are
    /// bytes; every value other than 0 or 1 becomes one the core refuses.
    pub(crate) fn binary(self) -> Cow<'a, [u8]> {
        fn map<T: Copy>(s: &[T], f: impl Fn(T) -> u8) -> Cow<'static, [u8]> {
            Cow::Owned(s.iter().map(|&v| f(v)).collect())
        }
        match self {
            LabelSlice::U8(s) => Cow::Borrowed(s),
            // SAFETY: a bool is one byte holding 0 or 1, a valid u8.
            LabelSlice::Bool(s) => {
                Cow::Borrowed(unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), s.len()) })
            }
            LabelSlice::I64(s) => map(s, |v| {
                if v == 0 || v == 1 {
                    v as u8
                } else {
                    NOT_A_LABEL
                }
            }),
            LabelSlice::U64(s) => map(s, |v| if v <= 1 { v as u8 } else { NOT_A_LABEL }),
            LabelSlice::F64(s) => map(s, |v| {
                if v == 0.0 {
                    0
                } else if v == 1.0 {
                    1
                } else {
                    NOT_A_LABEL
                }
            }),
        }
    }

    /// Class ids of a multiclass table; a value that is no class id (negative, not
    /// whole) becomes one no table has (`usize::MAX`), which the core refuses.
    pub(crate) fn classes(self) -> Vec<usize> {
        fn map<T: Copy>(s: &[T], f: impl Fn(T) -> usize) -> Vec<usize> {
            s.iter().map(|&v| f(v)).collect()
        }
        match self {
            LabelSlice::U8(s) => map(s, usize::from),
            LabelSlice::Bool(s) => map(s, usize::from),
            LabelSlice::I64(s) => map(s, |v| usize::try_from(v).unwrap_or(usize::MAX)),
            LabelSlice::U64(s) => map(s, |v| usize::try_from(v).unwrap_or(usize::MAX)),
            LabelSlice::F64(s) => map(s, |v| {
                if v >= 0.0 && v.fract() == 0.0 && v < usize::MAX as f64 {
                    v as usize
                } else {
                    usize::MAX
                }
            }),
        }
    }
}

/// The top-label samples of a table of `classes` columns (SPEC §1), row by row through
/// the core's reduction; the first bad row is named.
fn reduce(
    table: &[f64],
    classes: usize,
    ids: &[usize],
    logits: bool,
) -> Result<(Vec<f64>, Vec<u8>), Failure> {
    let rows = ids.len();
    let reduce_row = if logits {
        tce::toplabel::from_logits
    } else {
        tce::toplabel::from_probabilities
    };
    let mut scores = Vec::new();
    let mut labels = Vec::new();
    let room = |e| Failure::Memory(format!("the top labels of {rows} rows ({e})"));
    scores.try_reserve_exact(rows).map_err(room)?;
    labels.try_reserve_exact(rows).map_err(room)?;
    if classes == 0 {
        return Err(Failure::Reduce {
            row: 0,
            error: tce::ReduceError::EmptyRow,
        });
    }
    for (row, (values, &class)) in table.chunks_exact(classes).zip(ids).enumerate() {
        let top = reduce_row(values, class).map_err(|error| Failure::Reduce { row, error })?;
        scores.push(top.score);
        labels.push(top.label);
    }
    Ok((scores, labels))
}

/// How a scores argument reads, for the outputs' `settings.input`: its values
/// (`logits`, `probabilities` or `confidences`) and, for a table of class outputs (two
/// dimensions: an array or a list of rows), its number of classes.
pub(crate) struct ArrayForm {
    pub values: &'static str,
    pub classes: Option<usize>,
}

pub(crate) fn array_form(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    logits: bool,
) -> PyResult<ArrayForm> {
    let numpy = py.import("numpy")?;
    let table = numpy.call_method1("ndim", (scores,))?.extract::<usize>()? == 2;
    let values = match (logits, table) {
        (true, _) => "logits",
        (false, true) => "probabilities",
        (false, false) => "confidences",
    };
    let classes = if table {
        numpy
            .call_method1("shape", (scores,))?
            .get_item(1)?
            .extract::<usize>()
            .ok()
    } else {
        None
    };
    Ok(ArrayForm { values, classes })
}

/// Reads (scores, labels) and runs `f` on the binary samples without the GIL; a failure
/// becomes the exception naming its cause (quoting the bad element), a panic
/// `tce.InternalError`.
pub(crate) fn with_samples<R: Send>(
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    logits: bool,
    f: impl FnOnce(&[f64], &[u8]) -> Result<R, Failure> + Send,
) -> PyResult<R> {
    with_top_labels(scores, labels, logits, |s, l, _| f(s, l))
}

/// [`with_samples`], `f` also given each row's true class when the scores are a table
/// (the labels are then class ids, reduced to top labels).
pub(crate) fn with_top_labels<R: Send>(
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    logits: bool,
    f: impl FnOnce(&[f64], &[u8], Option<&[usize]>) -> Result<R, Failure> + Send,
) -> PyResult<R> {
    let py = scores.py();
    guard(py, || {
        let scores = Scores::from_py(scores)?;
        let labels = Labels::from_py(labels)?;
        let mut quote = Quote {
            labels: Some(&labels.original),
            ..Quote::default()
        };
        let label_slice = labels.slice().map_err(|e| e.into_py(py, &quote))?;
        let result = match &scores {
            Scores::Vector(array) => {
                let values = array.as_slice()?;
                quote.scores = Some(values);
                if logits {
                    return Err(Failure::option(
                        "logits=True needs scores as an N×K table of logits",
                    )
                    .into_py(py, &quote));
                }
                py.detach(|| f(values, &label_slice.binary(), None))
            }
            Scores::Table(array) => {
                let (rows, classes) = (array.shape()[0], array.shape()[1]);
                let table = array.as_slice()?;
                quote.table = Some((table, classes));
                py.detach(|| {
                    if label_slice.len() != rows {
                        return Err(Failure::Push(tce::PushError::LengthMismatch {
                            scores: rows,
                            labels: label_slice.len(),
                        }));
                    }
                    let ids = label_slice.classes();
                    let (top_scores, top_labels) = reduce(table, classes, &ids, logits)?;
                    f(&top_scores, &top_labels, Some(&ids))
                })
            }
        };
        result.map_err(|e| e.into_py(py, &quote))
    })
}

/// One class's one-vs-rest samples of a table.
pub(crate) struct ClassSamples {
    pub(crate) scores: Vec<f64>,
    pub(crate) labels: Vec<u8>,
}

/// The one-vs-rest samples of every class of a table of `classes` columns (classwise
/// calibration), each row through the core's [`tce::toplabel::one_vs_rest`]; the first bad
/// row is named.
fn one_vs_rest(
    table: &[f64],
    classes: usize,
    ids: &[usize],
    logits: bool,
) -> Result<Vec<ClassSamples>, Failure> {
    let rows = ids.len();
    if classes == 0 {
        return Err(Failure::Reduce {
            row: 0,
            error: tce::ReduceError::EmptyRow,
        });
    }
    let mut columns = Vec::new();
    for _ in 0..classes {
        let mut scores = Vec::new();
        let mut labels = Vec::new();
        let room = |e| Failure::Memory(format!("the one-vs-rest samples of {rows} rows ({e})"));
        scores.try_reserve_exact(rows).map_err(room)?;
        labels.try_reserve_exact(rows).map_err(room)?;
        columns.push(ClassSamples { scores, labels });
    }
    let mut row_scores = vec![0.0; classes];
    for (row, (values, &class)) in table.chunks_exact(classes).zip(ids).enumerate() {
        tce::toplabel::one_vs_rest(values, class, logits, &mut row_scores)
            .map_err(|error| Failure::Reduce { row, error })?;
        for (k, (column, &p)) in columns.iter_mut().zip(&row_scores).enumerate() {
            column.scores.push(p);
            column.labels.push(u8::from(k == class));
        }
    }
    Ok(columns)
}

/// Reads an N×K table and N class ids, and runs `f` on every class's one-vs-rest samples
/// without the GIL; failures as in [`with_samples`].
pub(crate) fn with_classes<R: Send>(
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    logits: bool,
    f: impl FnOnce(&[ClassSamples]) -> Result<R, Failure> + Send,
) -> PyResult<R> {
    let py = scores.py();
    guard(py, || {
        let scores = Scores::from_py(scores)?;
        let labels = Labels::from_py(labels)?;
        let mut quote = Quote {
            labels: Some(&labels.original),
            ..Quote::default()
        };
        let label_slice = labels.slice().map_err(|e| e.into_py(py, &quote))?;
        let Scores::Table(array) = &scores else {
            return Err(Failure::Named(
                "ShapeMismatch",
                "classwise=True needs scores as an N×K table of class probabilities or logits"
                    .into(),
            )
            .into_py(py, &quote));
        };
        let (rows, classes) = (array.shape()[0], array.shape()[1]);
        let table = array.as_slice()?;
        quote.table = Some((table, classes));
        let result = py.detach(|| {
            if label_slice.len() != rows {
                return Err(Failure::Push(tce::PushError::LengthMismatch {
                    scores: rows,
                    labels: label_slice.len(),
                }));
            }
            let columns = one_vs_rest(table, classes, &label_slice.classes(), logits)?;
            f(&columns)
        });
        result.map_err(|e| e.into_py(py, &quote))
    })
}

/// `sample_weight` as float64, copied (weights are read once; a copy lets the estimate
/// run without the GIL): any dtype numpy converts to float64, one dimension.
pub(crate) fn weights(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    refuse_masked(obj, "sample_weight")?;
    let py = obj.py();
    let (array, kind) = as_array(obj)?;
    if !"fiub".contains(kind) {
        return Err(unsupported(py, "sample_weight", kind));
    }
    let array = numpy(py)?.call_method1("ascontiguousarray", (array, "float64"))?;
    match array.cast::<PyArray1<f64>>() {
        Ok(a) => Ok(a.try_readonly()?.as_slice()?.to_vec()),
        Err(_) => Err(shape_error(
            py,
            "sample_weight must be a vector of one weight per row".to_string(),
        )),
    }
}
