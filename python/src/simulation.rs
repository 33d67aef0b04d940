//! The `std` features: the bias-by-construction simulator, fitting a model to real
//! outputs (Beta density + the twelve GLM curves by AIC), recalibration maps, and the
//! exact TCE of a model (before and after recalibration). Results are plain Python
//! structures and numpy arrays (no pandas); every value comes from the core's `sim`,
//! `fit` and `recalibrate` modules, run without the GIL.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tce::fit::{fit_model, EndpointRule, FittedModel as CoreFit};
use tce::recalibrate::{
    exact::recalibrated_tce, Method, Recalibration, RecalibrationMap as CoreMap,
};
use tce::sim::curve::CurveParams;
use tce::sim::estimator::EvaluationSettings;
use tce::sim::{Beta, Curve, EstimatorSpec, Grid, Model as CoreModel};

use crate::errors::{guard, Failure};
use crate::functions::raise;
use crate::input::with_samples;
use crate::options;

/// A data set as numpy arrays: (scores, labels).
type Dataset = (Py<PyArray1<f64>>, Py<PyArray1<u8>>);

fn named(class: &'static str) -> impl Fn(String) -> Failure {
    move |message| Failure::Named(class, message)
}

/// A synthetic model: a Beta(alpha, beta) score density and a calibration curve T(c),
/// whose TCE is known exactly. ``curve`` is one of ``polynomial`` (``d``),
/// ``flip_polynomial`` (``d``), ``two_param_polynomial``, ``two_param_flip_polynomial``,
/// ``logistic_log_odds``, ``logistic_flip_polynomial``, ``logistic`` (``a``, ``b``).
#[pyclass(frozen, module = "tce")]
#[derive(Clone)]
pub struct Model {
    model: CoreModel,
}

#[pymethods]
impl Model {
    #[new]
    #[pyo3(signature = (alpha, beta, curve="polynomial", *, d=None, a=None, b=None))]
    fn new(
        py: Python<'_>,
        alpha: f64,
        beta: f64,
        curve: &str,
        d: Option<f64>,
        a: Option<f64>,
        b: Option<f64>,
    ) -> PyResult<Self> {
        let density = Beta::new(alpha, beta)
            .map_err(|e| named("CurveError")(format!("score density: {e}")))
            .map_err(raise(py))?;
        let curve = Curve::from_name(curve, CurveParams { d, a, b })
            .map_err(|e| named("CurveError")(e.to_string()))
            .map_err(raise(py))?;
        Ok(Model {
            model: CoreModel::new(density, curve),
        })
    }

    /// The exact true calibration error TCE_p (a fraction; closed form or quadrature).
    #[pyo3(signature = (p=2.0))]
    fn tce(&self, py: Python<'_>, p: f64) -> PyResult<f64> {
        options::norm(p).map_err(raise(py))?;
        guard(py, || {
            py.detach(|| self.model.tce(p))
                .map_err(|e| named("SimulationError")(e.to_string()))
                .map_err(raise(py))
        })
    }

    /// The calibration curve T(c) at each score.
    fn curve(&self, py: Python<'_>, scores: Vec<f64>) -> PyResult<Py<PyArray1<f64>>> {
        let checked = scores
            .iter()
            .enumerate()
            .try_for_each(|(i, &s)| tce::sample::check(s, 0, i))
            .map_err(Failure::Push);
        if let Err(e) = checked {
            let quote = crate::errors::Quote {
                scores: Some(&scores),
                ..Default::default()
            };
            return Err(e.into_py(py, &quote));
        }
        let values: Vec<f64> = scores.iter().map(|&c| self.model.curve.eval(c)).collect();
        Ok(PyArray1::from_vec(py, values).unbind())
    }

    /// The data set of repetition ``rep`` of size ``n`` under ``seed``, as the simulator
    /// draws it: (scores float64, labels uint8). The data set of size n is the prefix of
    /// any larger one.
    #[pyo3(signature = (n, *, seed=0, rep=0))]
    fn sample(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = options::n_arg)] n: usize,
        #[pyo3(from_py_with = options::seed_arg)] seed: u64,
        #[pyo3(from_py_with = options::rep_arg)] rep: u64,
    ) -> PyResult<Dataset> {
        // A size the allocator cannot hold is a MemoryError before any draw (one of
        // 2^62 samples by arithmetic alone), never an abort.
        let (scores, labels) = guard(py, || {
            py.detach(|| self.model.try_dataset(seed, rep, n))
                .map_err(|e| Failure::Memory(format!("a data set of {} samples", e.n)))
                .map_err(raise(py))
        })?;
        Ok((
            PyArray1::from_vec(py, scores).unbind(),
            PyArray1::from_vec(py, labels).unbind(),
        ))
    }

    #[getter]
    fn alpha(&self) -> f64 {
        self.model.density.alpha()
    }

    #[getter]
    fn beta(&self) -> f64 {
        self.model.density.beta()
    }

    /// The curve family's name.
    #[getter]
    fn curve_name(&self) -> &'static str {
        self.model.curve.name()
    }

    /// The curve's parameters as a dict (``d``, ``a``, ``b``; None where unused).
    #[getter]
    fn curve_params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = self.model.curve.params();
        let d = PyDict::new(py);
        d.set_item("d", p.d)?;
        d.set_item("a", p.a)?;
        d.set_item("b", p.b)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Model(alpha={:?}, beta={:?}, curve={})",
            self.model.density.alpha(),
            self.model.density.beta(),
            self.model.curve
        )
    }
}

/// The bias of estimators on ``model`` (SPEC §7): every (n, bins, estimator) cell sees
/// the same ``repetitions`` data sets (common random numbers; the set of size n is the
/// prefix of the larger). Returns ``{"tce": percent, "repetitions": m, "cells": [...]}``
/// where each cell is a dict of ``n``, ``bins`` (None for the sweep and KDE),
/// ``estimator``, ``mean``, ``bias``, ``sd``, ``rmse``, ``se`` (percent),
/// ``mean_sweep_bins`` and ``estimates`` (a numpy array, percent). Estimator names as the
/// CLI's: ``ece_bin:equal_width``, ``ece_sweep:equal_mass``, ``ece_debias:equal_mass:keep``,
/// ``kde``, ...
#[pyfunction]
#[pyo3(signature = (model, sizes, *, bins=vec![15], estimators=None, repetitions=1000, seed=1, norm=2.0, sweep_limit="samples", max_bins=None))]
#[allow(clippy::too_many_arguments)]
pub fn simulate<'py>(
    py: Python<'py>,
    model: &Model,
    #[pyo3(from_py_with = options::sizes_arg)] sizes: Vec<usize>,
    #[pyo3(from_py_with = options::grid_bins_arg)] bins: Vec<usize>,
    estimators: Option<Vec<String>>,
    #[pyo3(from_py_with = options::repetitions_arg)] repetitions: usize,
    #[pyo3(from_py_with = options::seed_arg)] seed: u64,
    norm: f64,
    sweep_limit: &str,
    #[pyo3(from_py_with = options::max_bins_arg)] max_bins: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let names = estimators.unwrap_or_else(|| {
        [
            "ece_bin:equal_width",
            "ece_bin:equal_mass",
            "ece_sweep:equal_mass",
            "ece_debias:equal_mass",
            "kde",
        ]
        .map(String::from)
        .to_vec()
    });
    let estimators = names
        .iter()
        .map(|n| n.parse::<EstimatorSpec>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::option(e.to_string()))
        .map_err(raise(py))?;
    let settings = EvaluationSettings {
        norm: options::norm(norm).map_err(raise(py))?,
        sweep: options::sweep(sweep_limit, max_bins).map_err(raise(py))?,
    };
    let grid = Grid {
        sizes,
        bins,
        estimators,
        repetitions,
        seed,
        settings,
    };
    let result = guard(py, || {
        py.detach(|| tce::sim::simulate(&model.model, &grid, &|| {}))
            .map_err(|e| match e {
                tce::sim::SimulationError::OutOfMemory { n } => {
                    Failure::Memory(format!("a data set of {n} samples with its sort storage"))
                }
                tce::sim::SimulationError::ResultsTooLarge {
                    cells,
                    repetitions,
                    bytes,
                } => Failure::Memory(format!(
                    "{bytes} bytes for the results of {cells} cells over {repetitions} repetitions"
                )),
                e => named("SimulationError")(e.to_string()),
            })
            .map_err(raise(py))
    })?;
    let out = PyDict::new(py);
    out.set_item("tce", result.tce)?;
    out.set_item("repetitions", result.repetitions)?;
    let cells = PyList::empty(py);
    for cell in result.cells {
        let c = PyDict::new(py);
        c.set_item("n", cell.key.n)?;
        c.set_item("bins", cell.key.bins)?;
        c.set_item("estimator", cell.key.estimator.to_string())?;
        c.set_item("mean", cell.summary.mean)?;
        c.set_item("bias", cell.summary.bias)?;
        c.set_item("sd", cell.summary.sd)?;
        c.set_item("rmse", cell.summary.rmse)?;
        c.set_item("se", cell.summary.se)?;
        c.set_item("mean_sweep_bins", cell.mean_sweep_bins)?;
        c.set_item("estimates", PyArray1::from_vec(py, cell.estimates))?;
        cells.append(c)?;
    }
    out.set_item("cells", cells)?;
    Ok(out)
}

/// A real model's outputs, fitted (SPEC §8): ``alpha``, ``beta`` of the Beta density,
/// ``glms`` (the twelve GLM fits as dicts: ``name``, ``b0``, ``b1``, ``wald_se``,
/// ``nll``, ``aic``, ``validity``, ``usable``), ``best`` (the index of the usable fit with
/// the lowest AIC), ``model`` (density + best curve) and its exact ``tce_l1``, ``tce_l2``.
#[pyclass(frozen, module = "tce")]
pub struct FittedModel {
    fit: CoreFit,
}

#[pymethods]
impl FittedModel {
    #[getter]
    fn n(&self) -> usize {
        self.fit.n
    }
    #[getter]
    fn alpha(&self) -> f64 {
        self.fit.beta.density.alpha()
    }
    #[getter]
    fn beta(&self) -> f64 {
        self.fit.beta.density.beta()
    }
    /// The Beta fit's negative log-likelihood.
    #[getter]
    fn beta_nll(&self) -> f64 {
        self.fit.beta.nll
    }
    #[getter]
    fn best(&self) -> usize {
        self.fit.best
    }
    /// The name of the best GLM.
    #[getter]
    fn best_name(&self) -> String {
        self.fit.best_glm().spec.name()
    }
    #[getter]
    fn tce_l1(&self) -> f64 {
        self.fit.tce_l1
    }
    #[getter]
    fn tce_l2(&self) -> f64 {
        self.fit.tce_l2
    }
    #[getter]
    fn model(&self) -> Model {
        Model {
            model: self.fit.model,
        }
    }
    #[getter]
    fn glms<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for g in &self.fit.glms {
            let d = PyDict::new(py);
            d.set_item("name", g.spec.name())?;
            d.set_item("b0", g.b0)?;
            d.set_item("b1", g.b1)?;
            d.set_item("wald_se", (g.wald_se[0], g.wald_se[1]))?;
            d.set_item("nll", g.nll)?;
            d.set_item("aic", g.aic)?;
            d.set_item("validity", format!("{:?}", g.validity))?;
            d.set_item("usable", g.usable())?;
            list.append(d)?;
        }
        Ok(list)
    }

    fn __repr__(&self) -> String {
        format!(
            "FittedModel(n={}, alpha={:?}, beta={:?}, best={:?}, tce_l2={:?})",
            self.fit.n,
            self.alpha(),
            self.beta(),
            self.best_name(),
            self.fit.tce_l2
        )
    }
}

/// Fits a Beta density to the confidences and the twelve GLM calibration curves to
/// (scores, labels), picks the best by AIC and computes its exact TCE. ``epsilon``: how
/// far from 0 and 1 the fits hold scores (the core's default if None).
#[pyfunction]
#[pyo3(signature = (scores, labels, *, epsilon=None, logits=false))]
pub fn fit(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    epsilon: Option<f64>,
    logits: bool,
) -> PyResult<FittedModel> {
    let rule = match epsilon {
        None => EndpointRule::default(),
        Some(e) => EndpointRule::new(e)
            .map_err(|e| Failure::option(e.to_string()))
            .map_err(raise(py))?,
    };
    let fit = with_samples(scores, labels, logits, |scores, labels| {
        tce::sample::check_batch(scores, labels)?;
        fit_model(scores, labels, &rule).map_err(|e| named("FitError")(e.to_string()))
    })?;
    Ok(FittedModel { fit })
}

/// A fitted recalibration map g: [0, 1] → [0, 1] (the paper's Table 1 methods).
#[pyclass(frozen, module = "tce")]
pub struct RecalibrationMap {
    map: CoreMap,
    method: Method,
}

#[pymethods]
impl RecalibrationMap {
    /// g applied to each score (validated as the estimators validate them).
    fn apply(&self, py: Python<'_>, scores: &Bound<'_, PyAny>) -> PyResult<Py<PyArray1<f64>>> {
        let zeros = numpy::PyArray1::<u8>::zeros(py, [scores.len().unwrap_or(0)], false);
        let values = with_samples(scores, zeros.as_any(), false, |scores, labels| {
            tce::sample::check_batch(scores, labels)?;
            Ok(self.map.apply_all(scores))
        })?;
        Ok(PyArray1::from_vec(py, values).unbind())
    }

    /// The exact TCE_p of ``model`` after this map (a fraction).
    #[pyo3(signature = (model, p=2.0))]
    fn tce(&self, py: Python<'_>, model: &Model, p: f64) -> PyResult<f64> {
        options::norm(p).map_err(raise(py))?;
        guard(py, || {
            py.detach(|| recalibrated_tce(&model.model.into(), &self.map, p))
                .map_err(|e| named("SimulationError")(e.to_string()))
                .map_err(raise(py))
        })
    }

    /// ``"histogram"``, ``"isotonic"``, ``"platt"`` or ``"top-label-temperature"``.
    #[getter]
    fn method(&self) -> &'static str {
        Recalibration::TopLabel(self.method).name()
    }

    fn __repr__(&self) -> String {
        format!("RecalibrationMap(method={:?})", self.method())
    }
}

/// Fits a recalibration map of top-label confidences on (scores, labels): ``method`` is
/// ``"histogram"`` (15 equal-width bins), ``"isotonic"`` (PAV), ``"platt"`` or
/// ``"top-label-temperature"`` (temperature scaling of the one logit of the top-label
/// confidence; the names of `tce recalibrate`). ``"temperature"``, multiclass temperature
/// scaling of class logits, is refused here with a pointer to the top-label one.
#[pyfunction]
#[pyo3(signature = (scores, labels, *, method="top-label-temperature", logits=false))]
pub fn fit_recalibration(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    method: &str,
    logits: bool,
) -> PyResult<RecalibrationMap> {
    let method = Method::ALL
        .into_iter()
        .find(|&m| Recalibration::TopLabel(m).name() == method)
        .ok_or_else(|| {
            let hint = if method == "temperature" {
                " (\"temperature\" is multiclass temperature scaling of class logits, \
                 `tce recalibrate --method temperature`; the one-logit map of top-label \
                 confidences is \"top-label-temperature\")"
            } else {
                ""
            };
            Failure::option(format!(
                "method must be \"histogram\", \"isotonic\", \"platt\" or \
                 \"top-label-temperature\", not {method:?}{hint}"
            ))
        })
        .map_err(raise(py))?;
    let map = with_samples(scores, labels, logits, |scores, labels| {
        tce::sample::check_batch(scores, labels)?;
        method
            .fit(scores, labels)
            .map_err(|e| named("FitError")(e.to_string()))
    })?;
    Ok(RecalibrationMap { map, method })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_class::<FittedModel>()?;
    m.add_class::<RecalibrationMap>()?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(fit_recalibration, m)?)?;
    Ok(())
}
