//! What estimates return to Python: [`Estimate`], [`KdeEstimate`] and the reliability
//! bins (numpy arrays with NaN for empty bins, as in the C API).

use numpy::PyArray1;
use pyo3::prelude::*;
use tce::{BinStats, Binning, Norm, SortedSamples, SweepOptions};

use crate::errors::Failure;

/// A calibration error estimate: ``value`` (a fraction), the number of ``samples`` n and
/// of ``bins`` used (b* for the sweep, empty bins included).
#[pyclass(frozen, module = "tce", eq)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The calibration error, as a fraction.
    #[pyo3(get)]
    pub value: f64,
    /// The number of samples n.
    #[pyo3(get)]
    pub samples: u64,
    /// The number of bins used; b* for the sweep.
    #[pyo3(get)]
    pub bins: usize,
}

impl From<tce::Estimate> for Estimate {
    fn from(e: tce::Estimate) -> Self {
        Estimate {
            value: e.value,
            samples: e.samples,
            bins: e.bins,
        }
    }
}

#[pymethods]
impl Estimate {
    fn __repr__(&self) -> String {
        format!(
            "Estimate(value={:?}, samples={}, bins={})",
            self.value, self.samples, self.bins
        )
    }

    fn __float__(&self) -> f64 {
        self.value
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (f64, u64, usize))> {
        let make = py.import("tce._py")?.getattr("_estimate")?.unbind();
        Ok((make, (self.value, self.samples, self.bins)))
    }

    #[new]
    #[pyo3(signature = (value, samples, bins))]
    fn new(
        value: f64,
        #[pyo3(from_py_with = crate::options::estimate_samples_arg)] samples: u64,
        #[pyo3(from_py_with = crate::options::estimate_bins_arg)] bins: usize,
    ) -> Self {
        Estimate {
            value,
            samples,
            bins,
        }
    }
}

/// The KDE estimate (Zhang et al. 2020): ``value`` = ``raw`` ** (1/p), comparable with
/// TCE; ``raw`` is the original's value without the root; ``bandwidth`` is h.
#[pyclass(frozen, module = "tce", get_all)]
#[derive(Clone, Copy, Debug)]
pub struct KdeEstimate {
    /// raw ** (1/p).
    pub value: f64,
    /// The integral without the 1/p root (what the original code returns).
    pub raw: f64,
    /// The kernel's standard deviation h.
    pub bandwidth: f64,
    /// The exponent p.
    pub p: f64,
    /// The number of samples n.
    pub samples: usize,
}

#[pymethods]
impl KdeEstimate {
    fn __repr__(&self) -> String {
        format!(
            "KdeEstimate(value={:?}, raw={:?}, bandwidth={:?}, p={:?}, samples={})",
            self.value, self.raw, self.bandwidth, self.p, self.samples
        )
    }

    fn __float__(&self) -> f64 {
        self.value
    }
}

impl KdeEstimate {
    pub(crate) fn new(e: tce::kde::KdeEstimate, samples: usize) -> Self {
        KdeEstimate {
            value: e.value,
            raw: e.raw,
            bandwidth: e.bandwidth,
            p: e.p,
            samples,
        }
    }
}

/// Smooth ECE (Błasiok & Nakkiran 2023) as relplot computes it: ``value`` (a fraction,
/// an l1 quantity) at the bandwidth ``bandwidth`` σ* found by relplot's bisection.
#[pyclass(frozen, module = "tce", get_all)]
#[derive(Clone, Copy, Debug)]
pub struct SmoothEstimate {
    /// smECE at σ*, a fraction.
    pub value: f64,
    /// σ*, the kernel bandwidth.
    pub bandwidth: f64,
    /// The number of samples n.
    pub samples: usize,
}

#[pymethods]
impl SmoothEstimate {
    fn __repr__(&self) -> String {
        format!(
            "SmoothEstimate(value={:?}, bandwidth={:?}, samples={})",
            self.value, self.bandwidth, self.samples
        )
    }

    fn __float__(&self) -> f64 {
        self.value
    }
}

impl SmoothEstimate {
    pub(crate) fn new(e: tce::SmoothEce, samples: usize) -> Self {
        SmoothEstimate {
            value: e.value,
            bandwidth: e.bandwidth,
            samples,
        }
    }
}

/// The statistics of each bin, column by column.
#[derive(Default)]
pub(crate) struct Reliability {
    lower: Vec<f64>,
    upper: Vec<f64>,
    count: Vec<u64>,
    hits: Vec<u64>,
    mean_score: Vec<f64>,
    accuracy: Vec<f64>,
}

impl Reliability {
    /// From each bin's statistics and its edges (NaN edges for an empty equal-mass bin).
    pub(crate) fn collect(bins: impl Iterator<Item = (BinStats, (f64, f64))>) -> Self {
        let mut r = Reliability::default();
        for (stats, (lower, upper)) in bins {
            r.lower.push(lower);
            r.upper.push(upper);
            r.count.push(stats.count());
            r.hits.push(stats.hits());
            r.mean_score.push(stats.mean_score().unwrap_or(f64::NAN));
            r.accuracy.push(stats.accuracy().unwrap_or(f64::NAN));
        }
        r
    }

    /// The bins of sorted samples: equal-width edges k/B, (k+1)/B; for equal mass the
    /// smallest and largest score of each bin.
    pub(crate) fn of_sorted(sorted: &SortedSamples<'_>, binning: Binning, bins: usize) -> Self {
        let ranges = sorted.bins_with_score_ranges(binning, bins).enumerate();
        Self::collect(ranges.map(|(k, (stats, scores))| {
            let edges = match binning {
                Binning::EqualWidth(_) => tce::binning::equal_width_edges(k, bins),
                Binning::EqualMass(_) => scores.unwrap_or((f64::NAN, f64::NAN)),
            };
            (stats, edges)
        }))
    }

    /// The `tce.ReliabilityBins` named tuple of numpy arrays.
    pub(crate) fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let make = py.import("tce._py")?.getattr("ReliabilityBins")?;
        Ok(make
            .call1((
                PyArray1::from_vec(py, self.lower),
                PyArray1::from_vec(py, self.upper),
                PyArray1::from_vec(py, self.count),
                PyArray1::from_vec(py, self.hits),
                PyArray1::from_vec(py, self.mean_score),
                PyArray1::from_vec(py, self.accuracy),
            ))?
            .unbind())
    }
}

/// Which estimator of sorted samples.
#[derive(Clone, Copy)]
pub(crate) enum Which {
    EceBin,
    Mce,
    EceDebias,
}

/// One estimate of sorted samples (the buffer, the window, the reservoir, and the
/// functions' equal-mass path).
pub(crate) fn of_sorted(
    sorted: &SortedSamples<'_>,
    which: Which,
    binning: Binning,
    bins: usize,
    norm: Norm,
) -> Result<Estimate, Failure> {
    Ok(match which {
        Which::EceBin => sorted.ece_bin(binning, bins, norm),
        Which::Mce => sorted.mce(binning, bins),
        Which::EceDebias => sorted.ece_debias(binning, bins, norm),
    }?
    .into())
}

/// One estimate of bins (the functions' equal-mass path by selection): what
/// [`of_sorted`] computes from the same bins.
pub(crate) fn of_bins(bins: &[BinStats], which: Which, norm: Norm) -> Result<Estimate, Failure> {
    let bins = bins.iter().copied();
    Ok(match which {
        Which::EceBin => tce::estimate::ece_bin(bins, norm),
        Which::Mce => tce::estimate::mce(bins),
        Which::EceDebias => tce::estimate::ece_debias(bins, norm),
    }?
    .into())
}

pub(crate) fn sweep_of_sorted(
    sorted: &SortedSamples<'_>,
    binning: Binning,
    norm: Norm,
    options: SweepOptions,
) -> Result<Estimate, Failure> {
    Ok(sorted.ece_sweep(binning, norm, options)?.into())
}
