//! `tce.compare`: the library's paired comparison of two models' calibration on the
//! same rows ([`tce::decision::compare`], docs/decisions.md) of numpy arrays, as a
//! `Comparison` object. Its numbers are those of `tce compare --json` for the same rows
//! and seed (the same library call and the same JSON renderer), its `str` the summary
//! `tce compare` prints. Computed without the GIL.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;
use tce::decision::compare::{
    compare as core_compare, CompareError, CompareSettings, Comparison as CoreComparison, Method,
    Outputs, Paired, Verdict,
};
use tce::decision::Statistic;
use tce::report::json::Source;
use tce::PushError;

use crate::errors::Failure;
use crate::functions::raise;
use crate::input::with_top_labels;
use crate::options;

/// What the JSON's `a.input` and `b.input` say of arrays.
#[derive(Serialize)]
struct ArrayInput {
    format: &'static str,
    values: &'static str,
    rows: usize,
}

/// One model's arrays as read: top-label scores, its own labels, and the true classes
/// of a table.
struct Read {
    scores: Vec<f64>,
    labels: Vec<u8>,
    classes: Option<Vec<usize>>,
}

impl Read {
    fn outputs(&self) -> Outputs<'_> {
        let outputs = Outputs::new(&self.scores, &self.labels);
        match &self.classes {
            Some(classes) => outputs.with_classes(classes),
            None => outputs,
        }
    }
}

/// The result of :func:`compare`: Δ = CE_A − CE_B with its paired bootstrap interval,
/// the p-value of Δ = 0 and the decision at ``alpha`` (docs/decisions.md).
/// ``to_dict()`` / ``to_json()`` hold every number as ``tce compare --json`` prints it;
/// ``str(result)`` is the summary of ``tce compare``.
#[pyclass(frozen, module = "tce")]
pub struct Comparison {
    comparison: Box<CoreComparison>,
    sources: (String, String),
    json: String,
}

fn push_class(e: &PushError) -> &'static str {
    match e {
        PushError::NonFiniteScore { .. } => "NonFiniteScore",
        PushError::ScoreOutOfRange { .. } => "ScoreOutOfRange",
        PushError::InvalidLabel { .. } => "InvalidLabel",
        PushError::LengthMismatch { .. } => "LengthMismatch",
        PushError::Full { .. } => "BufferFull",
        PushError::CountOverflow => "CountOverflow",
    }
}

fn failure(e: CompareError) -> Failure {
    match &e {
        CompareError::NoSamples => Failure::Named("NoSamples", e.to_string()),
        CompareError::LengthsDiffer { .. }
        | CompareError::IdsLengthDiffer { .. }
        | CompareError::ClassesLengthDiffer { .. } => {
            Failure::Named("LengthMismatch", e.to_string())
        }
        CompareError::TrueClassDiffers { .. } => Failure::Named("InvalidLabel", e.to_string()),
        CompareError::Input { error, .. } => Failure::Named(push_class(error), e.to_string()),
        CompareError::TooManySamples(_) => Failure::Named("CapacityTooLarge", e.to_string()),
        CompareError::OutOfMemory { bytes } => Failure::Memory(format!("{bytes} bytes")),
        CompareError::BinsOutOfRange(0) => Failure::Named("ZeroBins", e.to_string()),
        CompareError::BinsOutOfRange(_) => Failure::Named("TooManyBins", e.to_string()),
        CompareError::DuplicateId { .. }
        | CompareError::MissingId { .. }
        | CompareError::ResamplesOutOfRange(_)
        | CompareError::InvalidAlpha(_)
        | CompareError::NotAnEstimator(_)
        | CompareError::Undefined { .. } => Failure::option(e.to_string()),
    }
}

#[pymethods]
impl Comparison {
    /// The notebook's view (Jupyter calls it): an HTML table of the key numbers, made by
    /// ``tce._display`` from :meth:`to_dict`.
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        slf.py()
            .import("tce._display")?
            .call_method1("comparison_html", (slf,))?
            .extract()
    }

    /// Every number as one line of JSON, as ``tce compare --json`` prints it (without
    /// the final newline).
    fn to_json(&self) -> String {
        self.json.clone()
    }

    /// ``json.loads(result.to_json())``: plain dicts, lists and numbers.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::json_dict(py, &self.json)
    }

    /// The terminal summary of ``tce compare``.
    fn summary(&self) -> String {
        tce::decision::compare::text::summary(&self.sources.0, &self.sources.1, &self.comparison)
    }

    fn __str__(&self) -> String {
        self.summary()
    }

    fn __repr__(&self) -> String {
        let c = &self.comparison;
        format!(
            "<tce.Comparison: {} delta={:.6} p={:.4} reject={}>",
            c.settings.statistic,
            c.delta,
            c.p_value,
            if c.reject() { "True" } else { "False" }
        )
    }

    /// Rows.
    #[getter]
    fn n(&self) -> usize {
        self.comparison.n
    }

    /// The estimator compared (``"ece_sweep:equal_mass"``).
    #[getter]
    fn statistic(&self) -> String {
        self.comparison.settings.statistic.to_string()
    }

    /// CE_A (a fraction).
    #[getter]
    fn estimate_a(&self) -> f64 {
        self.comparison.a.value
    }

    /// CE_B (a fraction).
    #[getter]
    fn estimate_b(&self) -> f64 {
        self.comparison.b.value
    }

    /// Δ = CE_A − CE_B.
    #[getter]
    fn delta(&self) -> f64 {
        self.comparison.delta
    }

    /// The interval of level 1 − alpha, as ``(lower, upper)``.
    #[getter]
    fn interval(&self) -> (f64, f64) {
        (
            self.comparison.interval.lower,
            self.comparison.interval.upper,
        )
    }

    /// ``"bca"``, or ``"percentile"`` where BCa is undefined.
    #[getter]
    fn method(&self) -> &'static str {
        match self.comparison.method {
            Method::Bca => "bca",
            Method::Percentile => "percentile",
        }
    }

    /// The p-value of Δ = 0.
    #[getter]
    fn p_value(&self) -> f64 {
        self.comparison.p_value
    }

    /// Whether Δ = 0 is rejected at ``alpha``.
    #[getter]
    fn reject(&self) -> bool {
        self.comparison.reject()
    }

    /// ``"A"`` or ``"B"``, the better calibrated model at ``alpha``, or None.
    #[getter]
    fn better(&self) -> Option<&'static str> {
        match self.comparison.verdict() {
            Verdict::ABetter => Some("A"),
            Verdict::BBetter => Some("B"),
            Verdict::NoDifference => None,
        }
    }

    /// The level of the decision.
    #[getter]
    fn alpha(&self) -> f64 {
        self.comparison.settings.alpha
    }

    /// The Δ*s of the bootstrap, in resample order.
    #[getter]
    fn replicates(&self) -> Vec<f64> {
        self.comparison.replicates.clone()
    }
}

/// Is model A better calibrated than model B? Compares the calibration of two models on
/// the same rows, each with its own labels (docs/decisions.md): ``scores_a`` with
/// ``labels_a`` (whether A's top label is correct, 0/1) and ``scores_b`` with
/// ``labels_b``; two classifiers may be right on different rows. For N×K tables of class
/// probabilities (or logits, ``logits=True``) the labels are the true class ids, each
/// model's correctness its own argmax against them, and both must give the same class
/// on every row (else ``tce.InvalidLabel``). Reports Δ = CE_A − CE_B for the estimator
/// ``statistic``, its paired bootstrap interval (``resamples`` resamples of the rows,
/// both models on the same rows; BCa, percentile where BCa is undefined), the p-value
/// of Δ = 0 and the decision p <= ``alpha``. One model before and after recalibration:
/// ``scores_a`` the original, ``scores_b`` the recalibrated confidences, the same
/// labels twice. ``ids_a`` and ``ids_b`` (optional, both or neither: sequences of ids,
/// compared as their ``str()``) pair the rows by id, as ``tce compare --id`` does: every
/// id exactly once in each and in both, rows in A's order; otherwise rows pair by
/// position. The same options as ``tce compare``; the same seed gives the same
/// numbers. ``sources`` names the two arrays in the outputs.
#[pyfunction]
#[pyo3(signature = (
    scores_a, labels_a, scores_b, labels_b, *, statistic="ece_sweep:equal_mass",
    resamples=tce::decision::DEFAULT_RESAMPLES, alpha=tce::decision::DEFAULT_ALPHA, seed=0,
    bins=15, norm=2.0, max_bins=None, paper_limit=false, logits=false,
    sources=("A".to_owned(), "B".to_owned()), ids_a=None, ids_b=None
))]
#[allow(clippy::too_many_arguments)]
pub fn compare(
    py: Python<'_>,
    scores_a: &Bound<'_, PyAny>,
    labels_a: &Bound<'_, PyAny>,
    scores_b: &Bound<'_, PyAny>,
    labels_b: &Bound<'_, PyAny>,
    statistic: &str,
    #[pyo3(from_py_with = options::resamples_arg)] resamples: usize,
    alpha: f64,
    #[pyo3(from_py_with = options::seed_arg)] seed: u64,
    #[pyo3(from_py_with = options::bins_arg)] bins: usize,
    norm: f64,
    #[pyo3(from_py_with = options::max_bins_arg)] max_bins: Option<usize>,
    paper_limit: bool,
    logits: bool,
    sources: (String, String),
    ids_a: Option<&Bound<'_, PyAny>>,
    ids_b: Option<&Bound<'_, PyAny>>,
) -> PyResult<Comparison> {
    let settings = (|| -> Result<CompareSettings, Failure> {
        if let Some(b) = max_bins {
            options::bins(b)?;
        }
        let settings = CompareSettings {
            statistic: statistic
                .parse::<Statistic>()
                .map_err(|e| Failure::option(e.to_string()))?,
            resamples,
            alpha,
            seed,
            bins: options::bins(bins)?,
            norm: options::norm(norm)?,
            sweep: options::sweep(if paper_limit { "paper_code" } else { "samples" }, max_bins)?,
        };
        settings.check().map_err(failure)?;
        Ok(settings)
    })()
    .map_err(raise(py))?;
    // Each model's scores with its own labels, read as every function reads them (a
    // table reduced to top labels); the library pairs and checks them, naming the model
    // of a bad score or label.
    let read = |scores, labels| {
        with_top_labels(scores, labels, logits, |s, l, c| {
            Ok(Read {
                scores: s.to_vec(),
                labels: l.to_vec(),
                classes: c.map(<[usize]>::to_vec),
            })
        })
    };
    let (a, b) = (read(scores_a, labels_a)?, read(scores_b, labels_b)?);
    let ids = match (ids_a, ids_b) {
        (None, None) => None,
        (Some(ids_a), Some(ids_b)) => Some((id_strings(ids_a)?, id_strings(ids_b)?)),
        _ => {
            return Err(raise(py)(Failure::option(
                "ids_a and ids_b go together: give both or neither".to_owned(),
            )))
        }
    };
    let comparison = py
        .detach(|| {
            let rows = match &ids {
                None => Paired::by_order(a.outputs(), b.outputs())?,
                Some((ids_a, ids_b)) => Paired::by_id((ids_a, a.outputs()), (ids_b, b.outputs()))?,
            };
            core_compare(&rows, &settings)
        })
        .map_err(|e| raise(py)(failure(e)))?;
    let input = |read: &Read| ArrayInput {
        format: "arrays",
        values: match (read.classes.is_some(), logits) {
            (false, _) => "confidences",
            (true, false) => "probabilities",
            (true, true) => "logits",
        },
        rows: comparison.n,
    };
    let (input_a, input_b) = (input(&a), input(&b));
    let json = tce::decision::compare::json::json(
        &Source {
            file: sources.0.clone(),
            input: &input_a,
        },
        &Source {
            file: sources.1.clone(),
            input: &input_b,
        },
        &comparison,
    );
    Ok(Comparison {
        comparison: Box::new(comparison),
        sources,
        json,
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Comparison>()?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    Ok(())
}

/// The ids of one input as strings (each element's ``str()``), so that ids of any type
/// compare as the CLI's column values do.
fn id_strings(ids: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    ids.try_iter()?
        .map(|id| id.and_then(|id| Ok(id.str()?.to_cow()?.into_owned())))
        .collect()
}
