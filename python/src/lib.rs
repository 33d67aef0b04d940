//! The Python package `tce` (distribution `tce-calibration`): a thin layer over the Rust
//! library. It converts arrays and options, releases the GIL, and turns the core's errors
//! into Python exceptions; every number comes from the core.
//!
//! - `functions`: `ece_bin`, `ece_sweep`, `ece_debias`, `mce`, `kde_ece`,
//!   `reliability_bins` over arrays;
//! - `states`: the monitoring states, with portable bytes, pickling and copies;
//! - `simulation`: the BBC simulator, the fits, recalibration and the exact TCE;
//! - `report`: the calibration report (`tce.report`, a `Report`), rendered by the
//!   library as the CLI renders it;
//! - `compare`: the paired comparison of two models (`tce.compare`, a `Comparison`);
//! - `decision`: the calibration test (`tce.calibration_test`, a `CalibrationTest`);
//! - `groups`: one report estimator with its bootstrap interval per group, and the
//!   adjusted p-values of `tce.by_group` (python/tce/_groups.py);
//! - `errors`: the exception of each cause, and the panic boundary.

mod compare;
mod decision;
mod errors;
mod estimates;
mod functions;
mod groups;
mod input;
mod options;
mod report;
mod simulation;
mod states;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `json.loads(json)` of a result's JSON (a report, a test, a comparison): the dicts their
/// `to_dict` gives, the same numbers as the CLI's `--json`.
pub(crate) fn json_dict<'py>(py: Python<'py>, json: &str) -> PyResult<Bound<'py, PyDict>> {
    Ok(py
        .import("json")?
        .call_method1("loads", (json,))?
        .cast_into::<PyDict>()?)
}

#[pymodule]
fn _tce(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::install_panic_hook();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_BINS", tce::MAX_BINS)?;
    m.add("MAX_COUNT", tce::MAX_COUNT)?;
    m.add_class::<estimates::Estimate>()?;
    m.add_class::<estimates::KdeEstimate>()?;
    m.add_class::<estimates::SmoothEstimate>()?;
    m.add_function(wrap_pyfunction!(functions::ece_bin, m)?)?;
    m.add_function(wrap_pyfunction!(functions::ece_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(functions::ece_debias, m)?)?;
    m.add_function(wrap_pyfunction!(functions::mce, m)?)?;
    m.add_function(wrap_pyfunction!(functions::kde_ece, m)?)?;
    m.add_function(wrap_pyfunction!(functions::smooth_ece, m)?)?;
    m.add_function(wrap_pyfunction!(functions::reliability_bins, m)?)?;
    m.add_class::<states::Histogram>()?;
    m.add_class::<states::SortedBuffer>()?;
    m.add_class::<states::SlidingWindow>()?;
    m.add_class::<states::Reservoir>()?;
    m.add_class::<states::DecayingHistogram>()?;
    m.add_class::<states::CalibrationAlarm>()?;
    m.add_class::<states::ConcurrentHistogram>()?;
    simulation::register(m)?;
    report::register(m)?;
    decision::register(m)?;
    compare::register(m)?;
    groups::register(m)?;
    // Not `add_function`: that would list it in `__all__`, and so in `tce`'s namespace.
    m.setattr(
        "_panic_for_test",
        wrap_pyfunction!(errors::panic_for_test, m)?,
    )?;
    Ok(())
}
