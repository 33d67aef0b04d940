//! What `tce.by_group` (python/tce/_groups.py) needs of the library: one report
//! estimator with its bootstrap interval on one group's samples
//! ([`tce::report::estimator_result`], the report's row for that estimator bit for bit),
//! and the adjustment of the groups' p-values for multiple testing
//! ([`tce::decision::adjust`]). The loop over groups is Python's: each group is one call
//! without the GIL, and the bootstrap inside runs its resamples on the rayon pool.

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tce::decision::adjust::{adjust, Adjustment};
use tce::report::{estimator_result, Resampling, Target};
use tce::sim::estimator::EvaluationSettings;
use tce::sim::EstimatorSpec;

use crate::errors::{guard, Failure};
use crate::functions::raise;
use crate::input::with_samples;
use crate::options;

/// One report estimator on (scores, labels) with its bootstrap interval, as a dict:
/// ``estimator`` (canonical name), ``n``, ``value``, ``sweep_bins`` (b* for a sweep),
/// ``lower``, ``upper`` and ``interval_kind`` (``"bca"`` when BCa is defined, else
/// ``"percentile"``; None without resamples) and ``interval_error`` (why the bootstrap
/// failed on a resample, else None). Equal to the row of ``tce.report(scores, labels,
/// seed=seed, resamples=resamples, ...)`` for that estimator, bit for bit.
#[pyfunction]
#[pyo3(signature = (
    scores, labels, *, estimator="ece_sweep:equal_mass", bins=15, norm=2.0, max_bins=None,
    paper_limit=false, resamples=1000, level=0.95, seed=0, logits=false
))]
#[allow(clippy::too_many_arguments)]
pub fn estimator_interval<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    labels: &Bound<'py, PyAny>,
    estimator: &str,
    #[pyo3(from_py_with = options::bins_arg)] bins: usize,
    norm: f64,
    #[pyo3(from_py_with = options::max_bins_arg)] max_bins: Option<usize>,
    paper_limit: bool,
    #[pyo3(from_py_with = options::resamples_arg)] resamples: usize,
    level: f64,
    #[pyo3(from_py_with = options::seed_arg)] seed: u64,
    logits: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (target, evaluation) = (|| -> Result<(Target, EvaluationSettings), Failure> {
        if let Some(b) = max_bins {
            options::bins(b)?;
        }
        let spec: EstimatorSpec =
            estimator
                .parse()
                .map_err(|e: tce::sim::estimator::ParseEstimatorError| {
                    Failure::option(format!("estimator: {e}"))
                })?;
        let target = Target {
            spec,
            bins: spec.uses_bins().then_some(options::bins(bins)?),
        };
        let norm = options::norm(norm)?;
        if spec.kind() == tce::sim::estimator::EstimatorKind::SmoothEce && norm != tce::Norm::L1 {
            // The core's SmoothEceNeedsL1, as an option error before any data is read.
            return Err(Failure::option(
                "smece estimates an L1 calibration error: it needs norm=1".to_owned(),
            ));
        }
        let evaluation = EvaluationSettings {
            norm,
            sweep: options::sweep(if paper_limit { "paper_code" } else { "samples" }, max_bins)?,
        };
        Ok((target, evaluation))
    })()
    .map_err(raise(py))?;
    let resampling = Resampling {
        resamples,
        level,
        seed,
    };
    let (n, result) = with_samples(scores, labels, logits, |scores, labels| {
        estimator_result(scores, labels, target, &evaluation, resampling)
            .map(|r| (scores.len(), r))
            .map_err(crate::report::failure)
    })?;
    let out = PyDict::new(py);
    out.set_item("estimator", target.spec.to_string())?;
    out.set_item("n", n)?;
    out.set_item("value", result.estimate)?;
    out.set_item("sweep_bins", result.sweep_bins)?;
    let (interval, error) = match &result.bootstrap {
        None => (None, None),
        Some(Ok(_)) => (result.interval(), None),
        Some(Err(e)) => (None, Some(e.to_string())),
    };
    out.set_item("lower", interval.map(|(i, _)| i.lower))?;
    out.set_item("upper", interval.map(|(i, _)| i.upper))?;
    out.set_item(
        "interval_kind",
        interval.map(|(_, k)| match k {
            tce::report::IntervalKind::Bca => "bca",
            tce::report::IntervalKind::Percentile => "percentile",
        }),
    )?;
    out.set_item("interval_error", error)?;
    Ok(out)
}

/// Adjusted p-values for testing many hypotheses at once, as R's ``p.adjust``:
/// ``method="holm"`` (Holm's step-down; the family-wise error rate, under any dependence)
/// or ``"bh"`` (Benjamini–Hochberg; the false discovery rate, for independent or
/// positively dependent tests). NaN entries (undefined tests) are left out of the
/// family and stay NaN; a value outside [0, 1] is ``InvalidOption``. Reject where the
/// adjusted p-value is at most alpha.
#[pyfunction]
#[pyo3(signature = (p_values, method="holm"))]
pub fn p_adjust<'py>(
    py: Python<'py>,
    p_values: &Bound<'py, PyAny>,
    method: &str,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let method: Adjustment = method
        .parse()
        .map_err(|e: tce::decision::adjust::AdjustError| Failure::option(e.to_string()))
        .map_err(raise(py))?;
    let array = py
        .import("numpy")?
        .call_method1("ascontiguousarray", (p_values, "float64"))?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(raise(py)(Failure::Named(
            "ShapeMismatch",
            format!("p_values must be a vector, not an array of {ndim} dimensions"),
        )));
    }
    let p: PyReadonlyArray1<'py, f64> = array.cast_into::<PyArray1<f64>>()?.readonly();
    let p = p.as_slice()?.to_vec();
    let adjusted = guard(py, || {
        adjust(&p, method)
            .map_err(|e| Failure::option(e.to_string()))
            .map_err(raise(py))
    })?;
    Ok(PyArray1::from_vec(py, adjusted))
}

/// The lower and upper ends of intervals, one each per bin.
type Ends<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// The Wilson score interval of each bin's accuracy at `level`, as the report draws its
/// reliability diagrams ([`tce::report::wilson`]): (lower, upper) arrays, NaN for an
/// empty bin. ``tce.plot.reliability``'s error bars.
#[pyfunction]
#[pyo3(signature = (hits, counts, level=0.95))]
pub fn wilson_intervals<'py>(
    py: Python<'py>,
    hits: Vec<u64>,
    counts: Vec<u64>,
    level: f64,
) -> PyResult<Ends<'py>> {
    if hits.len() != counts.len() {
        return Err(raise(py)(Failure::Named(
            "LengthMismatch",
            format!("{} hits and {} counts", hits.len(), counts.len()),
        )));
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(raise(py)(Failure::option(format!(
            "level must be in (0, 1), got {level}"
        ))));
    }
    if let Some(i) = (0..hits.len()).find(|&i| hits[i] > counts[i]) {
        return Err(raise(py)(Failure::option(format!(
            "bin {i} has {} hits of {} samples",
            hits[i], counts[i]
        ))));
    }
    let (lower, upper): (Vec<f64>, Vec<f64>) = hits
        .iter()
        .zip(&counts)
        .map(|(&h, &c)| {
            tce::report::wilson(h, c, level).map_or((f64::NAN, f64::NAN), |i| (i.lower, i.upper))
        })
        .unzip();
    Ok((PyArray1::from_vec(py, lower), PyArray1::from_vec(py, upper)))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(p_adjust, m)?)?;
    // Not `add_function`: the per-group estimate is `tce.by_group`'s, not in `tce`'s
    // namespace or the stubs (the same numbers are `tce.report`'s estimator rows).
    m.setattr(
        "_estimator_interval",
        wrap_pyfunction!(estimator_interval, m)?,
    )?;
    m.setattr("_wilson_intervals", wrap_pyfunction!(wilson_intervals, m)?)?;
    Ok(())
}
