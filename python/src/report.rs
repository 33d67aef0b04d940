//! `tce.report`: the library's calibration report ([`tce::report`], docs/report.md) of
//! numpy arrays, as a `Report` object. Its numbers are those of `tce report --json` for
//! the same samples and seed (the same library call and the same JSON renderer), its page
//! that of `tce report --html`. Computed without the GIL.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::Serialize;
use tce::fit::EndpointRule;
use tce::report::classwise::{
    classwise_report_with, ClassColumn, ClasswiseOptions, ClasswiseReport,
};
use tce::report::json::Source;
use tce::report::{
    report as core_report, weighted_report, Report as CoreReport, ReportError, ReportSettings,
};
use tce::sim::estimator::EvaluateError;

use crate::errors::Failure;
use crate::functions::raise;
use crate::input::{array_form, with_classes, with_samples, ArrayForm};
use crate::options;

/// What the JSON's `settings.input` says of arrays (the CLI says the same of files).
#[derive(Serialize)]
struct ArrayInput {
    format: &'static str,
    values: &'static str,
    reduction: &'static str,
    rows: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    classes: Option<usize>,
}

enum Kind {
    TopLabel {
        report: Box<CoreReport>,
        scores: Vec<f64>,
    },
    Classwise(Box<ClasswiseReport>),
}

/// A calibration report: every estimator with bootstrap intervals, the parametric fit and
/// its check, each estimator's bias at this n, and the recommended estimate
/// (docs/report.md). ``to_json()`` / ``to_dict()`` hold every number, as
/// ``tce report --json`` prints them; ``html()`` / ``to_html(path)`` give the page of
/// ``tce report --html``; ``str(report)`` is the terminal summary. Values are fractions.
#[pyclass(frozen, module = "tce")]
pub struct Report {
    kind: Kind,
    source: String,
    json: String,
}

pub(crate) fn failure(e: ReportError) -> Failure {
    match e {
        ReportError::NoSamples => Failure::Named("NoSamples", e.to_string()),
        ReportError::TooManyResamples(_)
        | ReportError::SimulationsOutOfRange(_)
        | ReportError::TooManyRefits { .. }
        | ReportError::RefitsNotClasswise(_)
        | ReportError::TestNotClasswise
        | ReportError::Test(_) => Failure::option(e.to_string()),
        ReportError::OutOfMemory { bytes } => {
            Failure::Memory(format!("{bytes} bytes for the report"))
        }
        ReportError::TooManySamples(_) => Failure::Named("CapacityTooLarge", e.to_string()),
        ReportError::Push(p) => Failure::Push(p),
        ReportError::InvalidLevel(_) => Failure::option(e.to_string()),
        ReportError::Estimate { cause, .. } => match cause {
            EvaluateError::Estimate(e) => Failure::Estimate(e),
            EvaluateError::Kde(e) => Failure::Kde(e),
            EvaluateError::SmoothEce(e) => Failure::Smooth(e),
            other => Failure::Named("InternalError", other.to_string()),
        },
        ReportError::Weight(w) => Failure::Weight(w),
    }
}

impl Report {
    fn dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::json_dict(py, &self.json)
    }

    fn item<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        Ok(self
            .dict(py)?
            .get_item(key)?
            .unwrap_or_else(|| py.None().into_bound(py)))
    }

    fn recommendation<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        self.item(py, "recommendation")?.get_item(key)
    }

    /// The estimator rows: the report's, or the marginal ones of a classwise report.
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.kind {
            Kind::TopLabel { .. } => self.item(py, "estimators"),
            Kind::Classwise(_) => self.item(py, "marginal"),
        }
    }
}

#[pymethods]
impl Report {
    /// The notebook's view (Jupyter calls it): an HTML table of the key numbers, made by
    /// ``tce._display`` from :meth:`to_dict`.
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        slf.py()
            .import("tce._display")?
            .call_method1("report_html", (slf,))?
            .extract()
    }

    /// Every number as one line of JSON, as ``tce report --json`` prints it (without the
    /// final newline).
    fn to_json(&self) -> String {
        self.json.clone()
    }

    /// ``json.loads(report.to_json())``: plain dicts, lists and numbers.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.dict(py)
    }

    /// The self-contained HTML page (inline SVG, no scripts), as ``tce report --html``
    /// writes it.
    fn html(&self, py: Python<'_>) -> String {
        py.detach(|| match &self.kind {
            Kind::TopLabel { report, scores } => {
                tce::report::html::page(&self.source, scores, report)
            }
            Kind::Classwise(r) => tce::report::html::classwise_page(&self.source, r),
        })
    }

    /// Writes :meth:`html` to ``path``.
    fn to_html(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let page = self.html(py);
        py.detach(|| std::fs::write(&path, page)).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("{}: cannot write: {e}", path.display()))
        })
    }

    /// The terminal summary of ``tce report``.
    fn summary(&self) -> String {
        match &self.kind {
            Kind::TopLabel { report, .. } => tce::report::text::summary(&self.source, report),
            Kind::Classwise(r) => tce::report::text::classwise_summary(&self.source, r),
        }
    }

    fn __str__(&self) -> String {
        self.summary()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let words: Vec<String> = self.recommendation(py, "words")?.extract()?;
        Ok(format!(
            "<tce.Report: {}>",
            words.first().map_or("", String::as_str)
        ))
    }

    /// Whether this is a classwise report (one-vs-rest per class, and the marginal).
    #[getter]
    fn classwise(&self) -> bool {
        matches!(self.kind, Kind::Classwise(_))
    }

    /// Rows.
    #[getter]
    fn n(&self) -> usize {
        match &self.kind {
            Kind::TopLabel { report, .. } => report.n,
            Kind::Classwise(r) => r.n,
        }
    }

    /// The recommended estimator's canonical name (``"ece_sweep:equal_mass"``).
    #[getter]
    fn estimator<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.recommendation(py, "estimator")
    }

    /// Its value on the data (a fraction; the marginal value when classwise).
    #[getter]
    fn estimate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.recommendation(py, "value")
    }

    /// Its interval as (lower, upper): BCa when defined, else percentile; None without
    /// resamples.
    #[getter]
    fn interval<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let i = self.recommendation(py, "interval")?;
        if i.is_none() {
            return Ok(i);
        }
        Ok((i.get_item("lower")?, i.get_item("upper")?)
            .into_pyobject(py)?
            .into_any())
    }

    /// ``"bca"`` or ``"percentile"`` (None without resamples).
    #[getter]
    fn interval_kind<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.recommendation(py, "interval_kind")
    }

    /// Why it: ``"lowest_rmse"``, ``"lowest_rmse_poor_fit"`` or ``"no_fit"``.
    #[getter]
    fn basis<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.recommendation(py, "basis")
    }

    /// The recommendation in plain words, one sentence group per line.
    #[getter]
    fn words<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.recommendation(py, "words")
    }

    /// Every estimator: a dict each with ``name``, ``value``, ``bins``, ``bootstrap``
    /// (``percentile``, ``bca``, ``se``, ``z0``, ``acceleration``, ``replicates``, for the
    /// sweep ``sweep_bins``) and ``bias``; the marginal estimators when classwise.
    #[getter]
    fn estimators<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.rows(py)
    }

    /// The bias table: per TCE estimator a dict of ``estimator``, ``mean``, ``bias``,
    /// ``sd``, ``rmse``, ``se`` (fractions) at this n on the fitted model (on the
    /// per-class models combined, when classwise); empty without a fit.
    #[getter]
    fn bias<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for row in self.rows(py)?.try_iter()? {
            let row = row?;
            let Ok(bias) = row.get_item("bias") else {
                continue;
            };
            let entry = PyDict::new(py);
            entry.set_item("estimator", row.get_item("name")?)?;
            entry.update(bias.cast::<PyDict>()?.as_mapping())?;
            out.append(entry)?;
        }
        Ok(out)
    }

    /// The distribution of the sweep's b* over the resamples: ``{name: {min, p025,
    /// median, p975, max, mean}}`` per sweep (empty when classwise or without resamples).
    #[getter]
    fn sweep_bins<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for row in self.rows(py)?.try_iter()? {
            let row = row?;
            if let Ok(bins) = row
                .get_item("bootstrap")
                .and_then(|b| b.get_item("sweep_bins"))
            {
                out.set_item(row.get_item("name")?, bins)?;
            }
        }
        Ok(out)
    }

    /// The fit (``alpha``, ``beta``, ``point_masses``, ``glm``, ``b0``, ``b1``, ``aic``,
    /// ``tce``, the ``checks`` and whether it ``reproduces`` the data), or None when none
    /// could be fitted (see the dict's ``fit_error``) and when classwise (see ``classes``).
    #[getter]
    fn fit<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.item(py, "fit")
    }

    /// The reliability diagrams' bins (equal-width, then equal-mass at b*).
    #[getter]
    fn reliability<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.item(py, "reliability")
    }

    /// Every setting, as the JSON's ``settings``.
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.item(py, "settings")
    }

    /// "Is it calibrated?": the report's calibration test as a dict (``statistic``,
    /// ``basis``, ``why``, ``p_value``, ``alpha``, ``reject``, ``power``, ``alternative``,
    /// ``resamples``, ``power_simulations``, ``seed``, ``statistics``, ``words``), as
    /// ``tce report --json`` prints it; None with ``test=False`` and when classwise.
    #[getter]
    fn calibration_test<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.item(py, "calibration_test")
    }

    /// Weighted rows (``sample_weight``): a dict of ``rows``, ``zero_rows``, ``total``,
    /// ``effective_n`` (Kish's), the weighted ``accuracy`` and ``mean_confidence``,
    /// ``integer`` and ``words``; None for unweighted rows.
    #[getter]
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.item(py, "weights")
    }

    /// Classwise: each class's report (a dict with ``class``, ``name`` and the keys of a
    /// top-label report); None otherwise.
    #[getter]
    fn classes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.item(py, "classes")
    }
}

/// The calibration report of (scores, labels) (docs/report.md): every estimator with
/// bootstrap intervals (``resamples``, seeded), a parametric fit of the data and its
/// check, each estimator's bias at this n on data simulated from the fit
/// (``simulations``; None: 1000, fewer above n = 50 000), the error of the fitted
/// model's own TCE from ``refits`` refits of simulated data sets (None: 10 up to
/// n = 50 000, else 0), and the estimator to trust. Classwise, ``simulated_classes``
/// classes are fitted and simulated (None: every class up to 10, else a seeded random
/// sample of 10; 0: none), ``simulations`` of each (None: 1000, fewer above n = 5000),
/// and every class's intervals come from the same joint resamples of the rows.
///
/// "Is it calibrated?" (``test=True``, top-label only): the calibration test of
/// ``tce.calibration_test``, its statistic chosen by its power against the report's
/// fitted model, with ``test_resamples`` consistency resamples (None: 999 up to
/// n = 20 000, fewer above), ``test_power_simulations`` (None: 100 up to n = 10^5,
/// fewer above) and level ``alpha`` (None: 0.05); ``Report.calibration_test`` holds it.
///
/// ``scores``: confidences with 0/1 labels, or an N×K table of class probabilities
/// (``logits=True``: logits) with class ids as labels, reduced to the top label or,
/// with ``classwise=True``, to one one-vs-rest column per class (the report per class and
/// the marginal calibration error over them). ``source`` names the arrays in the outputs.
/// The same options as ``tce report``; the same seed gives the same numbers.
///
/// ``sample_weight``: one weight ≥ 0 per row (frequency weights, as the estimators take
/// them; 0 leaves the row out): the estimates and their bootstrap are weighted, and
/// there is no fit, bias table or calibration
/// test (docs/report.md, Weighted rows). Bad weights raise :class:`tce.InvalidWeight`.
#[pyfunction]
#[pyo3(signature = (
    scores, labels, *, logits=false, classwise=false, bins=15, norm=2.0, closure="left",
    ties="split", max_bins=None, paper_limit=false, resamples=1000, simulations=None,
    level=0.95, seed=0, kde=false, epsilon=tce::fit::endpoint::DEFAULT_EPSILON,
    model="flexible", refits=None, simulated_classes=None, test=true, test_resamples=None,
    test_power_simulations=None, alpha=None, source="arrays", sample_weight=None
))]
#[allow(clippy::too_many_arguments)]
pub fn report(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    logits: bool,
    classwise: bool,
    #[pyo3(from_py_with = options::bins_arg)] bins: usize,
    norm: f64,
    closure: &str,
    ties: &str,
    #[pyo3(from_py_with = options::max_bins_arg)] max_bins: Option<usize>,
    paper_limit: bool,
    #[pyo3(from_py_with = options::resamples_arg)] resamples: usize,
    #[pyo3(from_py_with = options::simulations_arg)] simulations: Option<usize>,
    level: f64,
    #[pyo3(from_py_with = options::seed_arg)] seed: u64,
    kde: bool,
    epsilon: f64,
    model: &str,
    #[pyo3(from_py_with = options::refits_arg)] refits: Option<usize>,
    #[pyo3(from_py_with = options::simulated_classes_arg)] simulated_classes: Option<usize>,
    test: bool,
    #[pyo3(from_py_with = options::test_resamples_arg)] test_resamples: Option<usize>,
    #[pyo3(from_py_with = options::test_power_simulations_arg)] test_power_simulations: Option<
        usize,
    >,
    alpha: Option<f64>,
    source: &str,
    sample_weight: Option<&Bound<'_, PyAny>>,
) -> PyResult<Report> {
    let source = source.to_owned();
    let settings = (|| -> Result<ReportSettings, Failure> {
        if let Some(b) = max_bins {
            options::bins(b)?;
        }
        if !(level > 0.0 && level < 1.0) {
            return Err(Failure::option(format!(
                "level must be in (0, 1), got {level}"
            )));
        }
        let settings = ReportSettings {
            norm: options::norm(norm)?,
            bins: options::bins(bins)?,
            closure: options::closure(closure)?,
            ties: options::ties(ties)?,
            sweep: options::sweep(if paper_limit { "paper_code" } else { "samples" }, max_bins)?,
            resamples,
            simulations,
            level,
            seed,
            kde,
            endpoint: EndpointRule::new(epsilon).map_err(|e| Failure::option(e.to_string()))?,
            model: model.parse().map_err(Failure::option)?,
            refits,
            test: test.then(|| tce::report::ReportTest {
                resamples: test_resamples,
                power_simulations: test_power_simulations,
                alpha: alpha.unwrap_or(tce::decision::DEFAULT_ALPHA),
            }),
        };
        let test_given =
            test_resamples.is_some() || test_power_simulations.is_some() || alpha.is_some();
        if test_given && !test {
            return Err(Failure::option(
                "test_resamples, test_power_simulations and alpha are settings of the \
                 calibration test, which test=False turns off"
                    .to_owned(),
            ));
        }
        // The core's bounds on resamples, simulations and the test, before any data is read.
        settings.check().map_err(failure)?;
        if test_given && classwise {
            return Err(failure(ReportError::TestNotClasswise));
        }
        if let Some(m) = refits.filter(|&m| m > 0 && classwise) {
            return Err(failure(ReportError::RefitsNotClasswise(m)));
        }
        if simulated_classes.is_some() && !classwise {
            return Err(Failure::option(
                "simulated_classes is an option of classwise=True reports".to_owned(),
            ));
        }
        if sample_weight.is_some()
            && (classwise || simulations.is_some() || refits.is_some() || test_given)
        {
            return Err(Failure::option(
                "sample_weight weighs a top-label report, which has no fit, simulations, \
                 refits or calibration test (docs/report.md, Weighted rows): leave out \
                 classwise, simulations, refits, test_resamples, test_power_simulations \
                 and alpha"
                    .to_owned(),
            ));
        }
        Ok(settings)
    })()
    .map_err(raise(py))?;
    let ArrayForm { values, classes } = array_form(py, scores, logits)?;
    let progress = |_| {};
    if classwise {
        let (r, rows, classes) = with_classes(scores, labels, logits, |columns| {
            let names: Vec<String> = (0..columns.len()).map(|k| format!("class {k}")).collect();
            let views: Vec<ClassColumn<'_>> = columns
                .iter()
                .zip(&names)
                .enumerate()
                .map(|(class, (c, name))| ClassColumn {
                    class,
                    name,
                    scores: &c.scores,
                    labels: &c.labels,
                })
                .collect();
            let rows = columns.first().map_or(0, |c| c.scores.len());
            let options = ClasswiseOptions { simulated_classes };
            classwise_report_with(&views, &settings, &options, &progress)
                .map(|r| (r, rows, columns.len()))
                .map_err(failure)
        })?;
        let json = tce::report::json::classwise_json(
            &Source {
                file: source.clone(),
                input: ArrayInput {
                    format: "arrays",
                    values,
                    reduction: "classwise",
                    rows,
                    classes: Some(classes),
                },
            },
            &r,
        );
        return Ok(Report {
            kind: Kind::Classwise(Box::new(r)),
            source,
            json,
        });
    }
    let weights = sample_weight.map(crate::input::weights).transpose()?;
    let (r, owned) = with_samples(scores, labels, logits, |scores, labels| {
        let r = match &weights {
            Some(w) => {
                weighted_report(scores, labels, w, &settings, &progress).map_err(|e| match e {
                    ReportError::Weight(e) => crate::functions::weight_failure(w, e),
                    e => failure(e),
                })?
            }
            None => core_report(scores, labels, &settings, &progress).map_err(failure)?,
        };
        Ok((r, scores.to_vec()))
    })?;
    let json = tce::report::json::json(
        &Source {
            file: source.clone(),
            input: ArrayInput {
                format: "arrays",
                values,
                reduction: "top_label",
                rows: r.n,
                classes,
            },
        },
        &r,
    );
    Ok(Report {
        kind: Kind::TopLabel {
            report: Box::new(r),
            scores: owned,
        },
        source,
        json,
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Report>()?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    Ok(())
}
