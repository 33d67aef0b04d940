//! `tce.calibration_test`: the library's test of H0: E[Y | f(X)] = f(X)
//! ([`tce::decision`], docs/decisions.md) of numpy arrays, as a `CalibrationTest`
//! object. Its numbers are those of `tce test --json` for the same samples and seed (the
//! same library call and the same JSON renderer), its `str` the summary `tce test`
//! prints. Computed without the GIL.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;
use tce::decision::{
    calibration_test as core_test, CalibrationTest as CoreTest, StatisticChoice, TestError,
    TestSettings,
};
use tce::report::json::Source;

use crate::errors::Failure;
use crate::functions::raise;
use crate::input::{array_form, with_samples, ArrayForm};
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

/// The result of :func:`calibration_test`: every statistic's p-value, the deciding
/// statistic and why, and the decision at ``alpha`` (docs/decisions.md).
/// ``to_dict()`` / ``to_json()`` hold every number as ``tce test --json`` prints it;
/// ``str(result)`` is the summary of ``tce test``.
#[pyclass(frozen, module = "tce")]
pub struct CalibrationTest {
    test: Box<CoreTest>,
    source: String,
    json: String,
}

fn failure(e: TestError) -> Failure {
    match e {
        TestError::NoSamples => Failure::Named("NoSamples", e.to_string()),
        TestError::Push(p) => Failure::Push(p),
        TestError::TooManySamples(_) => Failure::Named("CapacityTooLarge", e.to_string()),
        TestError::OutOfMemory { bytes } => {
            Failure::Memory(format!("{bytes} bytes for the sorted samples"))
        }
        TestError::ResamplesOutOfRange(_)
        | TestError::InvalidAlpha(_)
        | TestError::PowerSimulationsOutOfRange(_)
        | TestError::GroupsOutOfRange(_)
        | TestError::Undefined(_) => Failure::option(e.to_string()),
        TestError::BinsOutOfRange(0) => Failure::Named("ZeroBins", e.to_string()),
        TestError::BinsOutOfRange(_) => Failure::Named("TooManyBins", e.to_string()),
    }
}

impl CalibrationTest {
    fn item<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        Ok(self
            .to_dict(py)?
            .get_item(key)?
            .unwrap_or_else(|| py.None().into_bound(py)))
    }
}

#[pymethods]
impl CalibrationTest {
    /// The notebook's view (Jupyter calls it): an HTML table of the key numbers, made by
    /// ``tce._display`` from :meth:`to_dict`.
    fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
        slf.py()
            .import("tce._display")?
            .call_method1("test_html", (slf,))?
            .extract()
    }

    /// Every number as one line of JSON, as ``tce test --json`` prints it (without the
    /// final newline).
    fn to_json(&self) -> String {
        self.json.clone()
    }

    /// ``json.loads(result.to_json())``: plain dicts, lists and numbers.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::json_dict(py, &self.json)
    }

    /// The terminal summary of ``tce test``.
    fn summary(&self) -> String {
        tce::decision::text::summary(&self.source, &self.test)
    }

    fn __str__(&self) -> String {
        self.summary()
    }

    fn __repr__(&self) -> String {
        let p = self
            .test
            .decision()
            .map_or_else(|| "undefined".to_owned(), |d| format!("{:.4}", d.p_value));
        format!(
            "<tce.CalibrationTest: {} p={p} reject={}>",
            self.test.chosen().statistic,
            self.reject().map_or("None".to_owned(), |r| r.to_string())
        )
    }

    /// Rows.
    #[getter]
    fn n(&self) -> usize {
        self.test.n
    }

    /// The deciding statistic's name (``"ece_debias:equal_mass"``).
    #[getter]
    fn statistic(&self) -> String {
        self.test.chosen().statistic.to_string()
    }

    /// Its p-value (None when it is undefined on the data).
    #[getter]
    fn p_value(&self) -> Option<f64> {
        self.test.decision().map(|d| d.p_value)
    }

    /// Whether calibration is rejected at ``alpha`` (p <= alpha; None without a p-value).
    #[getter]
    fn reject(&self) -> Option<bool> {
        self.test.decision().map(|d| d.reject)
    }

    /// The level of the decision.
    #[getter]
    fn alpha(&self) -> f64 {
        self.test.settings.alpha
    }

    /// Why the deciding statistic: ``"given"``, ``"highest_power"``,
    /// ``"calibrated_fit"`` or ``"no_fit"``.
    #[getter]
    fn basis<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.item(py, "choice")?.get_item("basis")
    }

    /// Every statistic's p-value by name (None where undefined).
    #[getter]
    fn p_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for r in &self.test.results {
            out.set_item(
                r.statistic.to_string(),
                r.outcome.as_ref().ok().map(|o| o.p_value),
            )?;
        }
        Ok(out)
    }

    /// Each candidate's power against the model fitted to the data, by name, as
    /// ``(power, se)``; empty unless the statistic was chosen by its power.
    #[getter]
    fn powers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for p in &self.test.choice.powers {
            out.set_item(p.statistic.to_string(), (p.power, p.se))?;
        }
        Ok(out)
    }

    /// Every statistic as a dict (``name``, ``method``, ``value``, ``p_value``, ``reject``,
    /// ``power``, ...), as the JSON's ``tests``.
    #[getter]
    fn tests<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.item(py, "tests")
    }
}

/// Is the model calibrated? Tests H0: E[Y | f(X)] = f(X) on (scores, labels)
/// (docs/decisions.md): every estimator statistic's p-value by consistency resampling
/// (``resamples`` label sets drawn from the scores, seeded), Spiegelhalter's Z and
/// Hosmer–Lemeshow (``groups`` equal-mass groups, χ² with as many degrees of freedom);
/// the deciding ``statistic`` is ``"auto"`` (the most powerful at this n against the
/// model fitted to the data, measured on ``power_simulations`` simulated label sets) or a
/// name; the decision is p <= ``alpha``.
///
/// ``scores``: confidences with 0/1 labels, or an N×K table of class probabilities
/// (``logits=True``: logits) with class ids, reduced to the top label. ``source`` names the
/// arrays in the outputs. The same options as ``tce test``; the same seed gives the same
/// numbers.
#[pyfunction]
#[pyo3(signature = (
    scores, labels, *, statistic="auto", resamples=tce::decision::DEFAULT_RESAMPLES,
    alpha=tce::decision::DEFAULT_ALPHA, seed=0, bins=15, norm=2.0, max_bins=None,
    paper_limit=false, groups=tce::decision::DEFAULT_GROUPS,
    power_simulations=tce::decision::DEFAULT_POWER_SIMULATIONS, logits=false,
    source="arrays"
))]
#[allow(clippy::too_many_arguments)]
pub fn calibration_test(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    statistic: &str,
    #[pyo3(from_py_with = options::resamples_arg)] resamples: usize,
    alpha: f64,
    #[pyo3(from_py_with = options::seed_arg)] seed: u64,
    #[pyo3(from_py_with = options::bins_arg)] bins: usize,
    norm: f64,
    #[pyo3(from_py_with = options::max_bins_arg)] max_bins: Option<usize>,
    paper_limit: bool,
    #[pyo3(from_py_with = options::groups_arg)] groups: usize,
    #[pyo3(from_py_with = options::power_simulations_arg)] power_simulations: usize,
    logits: bool,
    source: &str,
) -> PyResult<CalibrationTest> {
    let source = source.to_owned();
    let settings = (|| -> Result<TestSettings, Failure> {
        if let Some(b) = max_bins {
            options::bins(b)?;
        }
        let settings = TestSettings {
            statistic: statistic
                .parse::<StatisticChoice>()
                .map_err(|e| Failure::option(e.to_string()))?,
            resamples,
            alpha,
            seed,
            bins: options::bins(bins)?,
            norm: options::norm(norm)?,
            sweep: options::sweep(if paper_limit { "paper_code" } else { "samples" }, max_bins)?,
            groups,
            power_simulations,
        };
        // The core's bounds, before any data is read.
        settings.check().map_err(failure)?;
        Ok(settings)
    })()
    .map_err(raise(py))?;
    let ArrayForm { values, classes } = array_form(py, scores, logits)?;
    let test = with_samples(scores, labels, logits, |scores, labels| {
        core_test(scores, labels, &settings).map_err(failure)
    })?;
    let json = tce::decision::json::json(
        &Source {
            file: source.clone(),
            input: ArrayInput {
                format: "arrays",
                values,
                reduction: "top_label",
                rows: test.n,
                classes,
            },
        },
        &test,
    );
    Ok(CalibrationTest {
        test: Box::new(test),
        source,
        json,
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CalibrationTest>()?;
    m.add_function(wrap_pyfunction!(calibration_test, m)?)?;
    Ok(())
}
