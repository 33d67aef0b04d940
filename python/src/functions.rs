//! The functional API: one estimate of arrays per call. Equal-width estimators with a
//! fixed bin count run on the core's streaming histogram (no sort); equal-mass ones and
//! the sweep on its sorted buffer. Nothing is computed here: every value comes from the
//! core, whose results equal those of its C API and CLI bit for bit.

use pyo3::prelude::*;
use tce::{
    BinStats, Binning, BoxedBuffer, BoxedHistogram, Closure, EstimateError, Histogram, SortedBuffer,
};

use crate::errors::{Failure, Quote};
use crate::estimates::{self, Estimate, KdeEstimate, Reliability, SmoothEstimate, Which};
use crate::input::{self, with_samples};
use crate::options::{self, boxed};

/// Raises an options failure (no inputs to quote).
pub(crate) fn raise(py: Python<'_>) -> impl Fn(Failure) -> PyErr + '_ {
    move |e| e.into_py(py, &Quote::default())
}

/// The samples in a histogram of `bins` equal-width bins.
pub(crate) fn histogram_of(
    scores: &[f64],
    labels: &[u8],
    closure: Closure,
    bins: usize,
) -> Result<BoxedHistogram, Failure> {
    let mut histogram =
        Histogram::with_boxed_storage(boxed(BinStats::EMPTY, bins, "bins")?, closure)?;
    histogram.push_batch(scores, labels)?;
    Ok(histogram)
}

/// The samples in a sorted buffer (with room to radix sort them), after the checks the C API's
/// one-call functions make in the same order (lengths, n ≥ 1, the capacity).
pub(crate) fn buffer_of(scores: &[f64], labels: &[u8]) -> Result<BoxedBuffer, Failure> {
    tce::sample::check_lengths(scores, labels)?;
    if scores.is_empty() {
        return Err(EstimateError::NoSamples.into());
    }
    tce::buffer::check_capacity(scores.len())?;
    // Room for the radix sort's scratch where it can be had (`tce::storage::sorting_slots`).
    let storage = tce::storage::sorting_slots(scores.len())
        .map_err(|e| Failure::Memory(format!("storage for {} samples", e.len)))?;
    let mut buffer = SortedBuffer::with_boxed_storage(storage)?;
    buffer.push_batch(scores, labels)?;
    Ok(buffer)
}

/// A fixed-bin estimate: equal width from the histogram, equal mass from the buffer.
#[allow(clippy::too_many_arguments)]
fn binned(
    py: Python<'_>,
    which: Which,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    binning: &str,
    bins: usize,
    norm: f64,
    closure: &str,
    ties: &str,
    logits: bool,
    sample_weight: Option<&Bound<'_, PyAny>>,
) -> PyResult<Estimate> {
    let binning = options::binning(binning, closure, ties).map_err(raise(py))?;
    let norm = options::norm(norm).map_err(raise(py))?;
    let bins = options::bins(bins).map_err(raise(py))?;
    if let Some(weights) = sample_weight {
        let weights = input::weights(weights)?;
        return with_samples(scores, labels, logits, move |scores, labels| {
            let weights = weights.as_slice();
            let estimate = match which {
                Which::EceBin => {
                    tce::weights::ece_bin(scores, labels, weights, binning, bins, norm)
                }
                Which::Mce => tce::weights::mce(scores, labels, weights, binning, bins),
                Which::EceDebias => {
                    tce::weights::ece_debias(scores, labels, weights, binning, bins, norm)
                }
            };
            Ok(quoting_weights(weights, estimate)?.into())
        });
    }
    with_samples(scores, labels, logits, |scores, labels| match binning {
        Binning::EqualWidth(closure) => {
            let histogram = histogram_of(scores, labels, closure, bins)?;
            Ok(match which {
                Which::EceBin => histogram.ece_bin(norm),
                Which::Mce => histogram.mce(),
                Which::EceDebias => histogram.ece_debias(norm),
            }?
            .into())
        }
        Binning::EqualMass(ties) => match selected_bins(scores, labels, ties, bins)? {
            Some(bins) => estimates::of_bins(&bins, which, norm),
            None => {
                let mut buffer = buffer_of(scores, labels)?;
                estimates::of_sorted(&buffer.sorted_parallel(), which, binning, bins, norm)
            }
        },
    })
}

/// A weighted estimate's failure, an invalid weight's message quoting it as messages
/// quote a bad score (`sample_weight at index 1 is -1: negative, NaN or infinite`).
fn quoting_weights<R>(
    weights: &[f64],
    result: Result<R, tce::weights::WeightError>,
) -> Result<R, Failure> {
    result.map_err(|e| weight_failure(weights, e))
}

/// A refusal of `weights` as [`quoting_weights`] words it (the estimators' and the
/// report's).
pub(crate) fn weight_failure(weights: &[f64], e: tce::weights::WeightError) -> Failure {
    match e {
        tce::weights::WeightError::Weights(e) => quoting_bad_weights(weights, e),
        e => e.into(),
    }
}

/// `tce.InvalidWeight` quoting the weight at `index`.
fn invalid_weight(weights: &[f64], index: usize) -> Failure {
    Failure::Named(
        "InvalidWeight",
        format!(
            "sample_weight at index {index} is {}: negative, NaN or infinite",
            weights.get(index).copied().unwrap_or(f64::NAN)
        ),
    )
}

/// A weighted smooth ECE's or KDE's refused weights, as [`quoting_weights`] reports the
/// binned estimators' (the same classes and messages).
fn quoting_bad_weights(weights: &[f64], e: tce::BadWeights) -> Failure {
    match e {
        tce::BadWeights::InvalidWeight { index } => invalid_weight(weights, index),
        tce::BadWeights::LengthMismatch { .. } => Failure::Named("LengthMismatch", e.to_string()),
        tce::BadWeights::ZeroTotalWeight => Failure::Named("InvalidWeight", e.to_string()),
    }
}

/// The rows that count: those of positive weight, or all of them unweighted.
fn rows_counted(weights: Option<&[f64]>, rows: usize) -> usize {
    weights.map_or(rows, |w| w.iter().filter(|&&w| w > 0.0).count())
}

/// The equal-mass bins by selection (`tce::select`: the sorted path's bins, bit for bit,
/// without sorting every sample), or `None` where it does not serve (few samples, many
/// bins): then sort.
fn selected_bins(
    scores: &[f64],
    labels: &[u8],
    ties: tce::Ties,
    bins: usize,
) -> Result<Option<Vec<BinStats>>, Failure> {
    if !tce::select::serves(scores.len(), bins) {
        return Ok(None);
    }
    let mut stats = vec![BinStats::EMPTY; bins];
    let mut scratch = options::zeroed::<tce::Slot>(scores.len(), "samples")?;
    let done = tce::select::equal_mass_bins(scores, labels, ties, &mut stats, &mut scratch)?;
    Ok(done.then_some(stats))
}

/// ECE_bin = (Σ_k (n_k/n)·|f̄_k − ȳ_k|^p)^(1/p) with ``bins`` bins.
///
/// ``scores``: confidences in [0, 1] (a vector), or an N×K table of class probabilities
/// (or of logits with ``logits=True``), reduced to the top label; ``labels``: 0/1 (or the
/// true class ids of a table). ``binning``: ``"equal_mass"`` (rank splitting) or
/// ``"equal_width"``; ``closure`` (equal width): ``"left"`` [k/B, (k+1)/B) or ``"right"``;
/// ``ties`` (equal mass): ``"split"`` or ``"keep"``; ``norm``: the exponent p ≥ 1.
/// Returns an :class:`Estimate`. Raises a subclass of :class:`tce.Error` naming the first
/// bad element.
///
/// ``sample_weight``: one weight ≥ 0 per row, as frequency weights (an integer weight is
/// that row repeated; 0 drops the row): bins weigh Σw, equal-mass bins hold equal weight.
/// Bad weights raise :class:`tce.InvalidWeight`. Definitions: docs/estimators.md, Weights.
#[pyfunction]
#[pyo3(signature = (scores, labels, *, binning="equal_mass", bins=15, norm=2.0, closure="left", ties="split", logits=false, sample_weight=None))]
#[allow(clippy::too_many_arguments)]
pub fn ece_bin(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    binning: &str,
    #[pyo3(from_py_with = options::bins_arg)] bins: usize,
    norm: f64,
    closure: &str,
    ties: &str,
    logits: bool,
    sample_weight: Option<&Bound<'_, PyAny>>,
) -> PyResult<Estimate> {
    binned(
        py,
        Which::EceBin,
        scores,
        labels,
        binning,
        bins,
        norm,
        closure,
        ties,
        logits,
        sample_weight,
    )
}

/// The maximum calibration error: max over non-empty bins of |f̄_k − ȳ_k|. Arguments as
/// :func:`ece_bin`.
#[pyfunction]
#[pyo3(signature = (scores, labels, *, binning="equal_mass", bins=15, closure="left", ties="split", logits=false, sample_weight=None))]
#[allow(clippy::too_many_arguments)]
pub fn mce(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    binning: &str,
    #[pyo3(from_py_with = options::bins_arg)] bins: usize,
    closure: &str,
    ties: &str,
    logits: bool,
    sample_weight: Option<&Bound<'_, PyAny>>,
) -> PyResult<Estimate> {
    binned(
        py,
        Which::Mce,
        scores,
        labels,
        binning,
        bins,
        2.0,
        closure,
        ties,
        logits,
        sample_weight,
    )
}

/// ECE_debias (Bröcker 2012, Kumar et al. 2019): each bin's squared gap minus its
/// sampling variance ȳ(1 − ȳ)/(n_k − 1) (a jackknife for p ≠ 2), clamped at 0 before
/// the root. Arguments as :func:`ece_bin`.
#[pyfunction]
#[pyo3(signature = (scores, labels, *, binning="equal_mass", bins=15, norm=2.0, closure="left", ties="split", logits=false, sample_weight=None))]
#[allow(clippy::too_many_arguments)]
pub fn ece_debias(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    binning: &str,
    #[pyo3(from_py_with = options::bins_arg)] bins: usize,
    norm: f64,
    closure: &str,
    ties: &str,
    logits: bool,
    sample_weight: Option<&Bound<'_, PyAny>>,
) -> PyResult<Estimate> {
    binned(
        py,
        Which::EceDebias,
        scores,
        labels,
        binning,
        bins,
        norm,
        closure,
        ties,
        logits,
        sample_weight,
    )
}

/// ECE_sweep (Roelofs et al. 2022): ECE_bin with b*, the largest bin count such that
/// every b ≤ b* gives non-decreasing bin accuracies; ``Estimate.bins`` is b*.
///
/// ``sweep_limit``: ``"samples"`` (b up to n, as the paper describes) or ``"paper_code"``
/// (n − 1, as its code does); ``max_bins``: a cap on b*. With ``sample_weight``, the
/// bins are weighted and b runs up to Σ⌈w⌉ units of weight (n for weights all 1). Other
/// arguments as :func:`ece_bin`.
#[pyfunction]
#[pyo3(signature = (scores, labels, *, binning="equal_mass", norm=2.0, closure="left", ties="split", sweep_limit="samples", max_bins=None, logits=false, sample_weight=None))]
#[allow(clippy::too_many_arguments)]
pub fn ece_sweep(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    binning: &str,
    norm: f64,
    closure: &str,
    ties: &str,
    sweep_limit: &str,
    #[pyo3(from_py_with = options::max_bins_arg)] max_bins: Option<usize>,
    logits: bool,
    sample_weight: Option<&Bound<'_, PyAny>>,
) -> PyResult<Estimate> {
    let binning = options::binning(binning, closure, ties).map_err(raise(py))?;
    let norm = options::norm(norm).map_err(raise(py))?;
    let sweep = options::sweep(sweep_limit, max_bins).map_err(raise(py))?;
    if let Some(weights) = sample_weight {
        let weights = input::weights(weights)?;
        return with_samples(scores, labels, logits, move |scores, labels| {
            let estimate = tce::weights::ece_sweep(scores, labels, &weights, binning, norm, sweep);
            Ok(quoting_weights(&weights, estimate)?.into())
        });
    }
    with_samples(scores, labels, logits, |scores, labels| {
        let mut buffer = buffer_of(scores, labels)?;
        estimates::sweep_of_sorted(&buffer.sorted_parallel(), binning, norm, sweep)
    })
}

/// The KDE calibration error of Zhang et al. 2020 (triweight kernel, reflected at 0 and
/// 1, 2^14-point grid), returned with its root (``value``) and without (``raw``).
///
/// ``sample_weight``: one weight ≥ 0 per row, as frequency weights (kernel sums Σw·K, the
/// bandwidth of the weighted sample; an integer weight is that row repeated, 0 drops it;
/// ``samples`` counts the rows of positive weight). Bad weights raise
/// :class:`tce.InvalidWeight`. Definitions: docs/estimators.md, Weights.
#[pyfunction]
#[pyo3(signature = (scores, labels, *, norm=2.0, logits=false, sample_weight=None))]
pub fn kde_ece(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    norm: f64,
    logits: bool,
    sample_weight: Option<&Bound<'_, PyAny>>,
) -> PyResult<KdeEstimate> {
    let norm = options::norm(norm).map_err(raise(py))?;
    let weights = sample_weight.map(input::weights).transpose()?;
    with_samples(scores, labels, logits, |scores, labels| {
        let e =
            match weights.as_deref() {
                Some(w) => tce::kde::kde_calibration_error_weighted(scores, labels, w, norm)
                    .map_err(|e| match e {
                        tce::kde::KdeError::Weights(e) => quoting_bad_weights(w, e),
                        e => e.into(),
                    })?,
                None => tce::kde::kde_calibration_error(scores, labels, norm)?,
            };
        Ok(KdeEstimate::new(
            e,
            rows_counted(weights.as_deref(), scores.len()),
        ))
    })
}

/// Smooth ECE (Błasiok & Nakkiran 2023), exactly as relplot 1.0.3's ``smECE`` computes
/// it (reflected Gaussian kernel, its grids, its bandwidth bisection): a
/// :class:`SmoothEstimate` with ``value`` and the bandwidth σ*. An l1 quantity: there is
/// no ``norm``.
///
/// ``sample_weight``: one weight ≥ 0 per row, as frequency weights (the residuals and
/// density smoothed as Σw·r·K and Σw·K, the bandwidth search on them; an integer weight is
/// that row repeated, 0 drops it; ``samples`` counts the rows of positive weight). Bad
/// weights raise :class:`tce.InvalidWeight`. Definitions: docs/estimators.md, Weights.
#[pyfunction]
#[pyo3(signature = (scores, labels, *, logits=false, sample_weight=None))]
pub fn smooth_ece(
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    logits: bool,
    sample_weight: Option<&Bound<'_, PyAny>>,
) -> PyResult<SmoothEstimate> {
    let weights = sample_weight.map(input::weights).transpose()?;
    with_samples(scores, labels, logits, |scores, labels| {
        let mut scratch = Vec::new();
        scratch
            .try_reserve_exact(tce::smece::SCRATCH_LEN)
            .map_err(|_| Failure::Memory("the smooth ECE grids".into()))?;
        scratch.resize(tce::smece::SCRATCH_LEN, 0.0);
        let e =
            match weights.as_deref() {
                Some(w) => tce::smece::smooth_ece_weighted(scores, labels, w, &mut scratch)
                    .map_err(|e| match e {
                        tce::smece::SmoothEceError::Weights(e) => quoting_bad_weights(w, e),
                        e => e.into(),
                    })?,
                None => tce::smooth_ece(scores, labels, &mut scratch)?,
            };
        Ok(SmoothEstimate::new(
            e,
            rows_counted(weights.as_deref(), scores.len()),
        ))
    })
}

/// The reliability diagram: a :class:`ReliabilityBins` of numpy arrays ``lower``,
/// ``upper`` (equal width: the bin edges; equal mass: the smallest and largest score in
/// the bin), ``count``, ``hits``, ``mean_score`` and ``accuracy`` (NaN for an empty bin,
/// never 0). Arguments as :func:`ece_bin`.
#[pyfunction]
#[pyo3(signature = (scores, labels, *, binning="equal_mass", bins=15, closure="left", ties="split", logits=false))]
#[allow(clippy::too_many_arguments)]
pub fn reliability_bins(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    binning: &str,
    #[pyo3(from_py_with = options::bins_arg)] bins: usize,
    closure: &str,
    ties: &str,
    logits: bool,
) -> PyResult<Py<PyAny>> {
    let binning = options::binning(binning, closure, ties).map_err(raise(py))?;
    let bins = options::bins(bins).map_err(raise(py))?;
    let reliability = with_samples(scores, labels, logits, |scores, labels| match binning {
        Binning::EqualWidth(closure) => {
            let histogram = histogram_of(scores, labels, closure, bins)?;
            if histogram.samples() == 0 {
                return Err(EstimateError::NoSamples.into());
            }
            Ok(histogram_reliability(&histogram))
        }
        Binning::EqualMass(_) => {
            let mut buffer = buffer_of(scores, labels)?;
            Ok(Reliability::of_sorted(
                &buffer.sorted_parallel(),
                binning,
                bins,
            ))
        }
    })?;
    reliability.into_py(py)
}

/// A histogram's bins with their edges.
pub(crate) fn histogram_reliability<S: AsRef<[BinStats]> + ?Sized>(
    histogram: &Histogram<S>,
) -> Reliability {
    Reliability::collect(
        histogram
            .bins()
            .iter()
            .enumerate()
            .map(|(k, stats)| (*stats, histogram.edges(k))),
    )
}
