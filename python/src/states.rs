//! The monitoring states as Python classes. Each owns its core state on the heap behind
//! a mutex (`ConcurrentHistogram` is lock-free and needs none), so every object can be
//! shared between Python threads; every call that loops over samples runs without the
//! GIL. The mutex is only ever taken without the GIL, and no call holds two, so threads
//! cannot deadlock (a merge copies the other state first).
//!
//! Bytes are the core's portable format (docs/monitoring.md), the same the C API reads
//! and writes; pickling and `copy` go through the same state.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tce::alarm::{self, AlarmBin, BoxedAlarm};
use tce::portable::{frame_shape, DecodeError, FrameShape};
use tce::{
    AtomicBin, BinStats, BoxedBuffer, BoxedConcurrentHistogram, BoxedDecayingHistogram,
    BoxedHistogram, BoxedReservoir, BoxedWindow, Closure, ConcurrentHistogram as CoreConcurrent,
    DecayedBin, DecayingHistogram as CoreDecaying, Histogram as CoreHistogram,
    Reservoir as CoreReservoir, SlidingWindow as CoreWindow, Slot, SortedBuffer as CoreBuffer,
    SortedSamples,
};

use crate::errors::{guard, Failure};
use crate::estimates::{self, Estimate, Reliability, Which};
use crate::functions::{histogram_reliability, raise};
use crate::input::with_samples;
use crate::options::{self, boxed, zeroed};

/// Runs `f` on the state without the GIL; panics become `tce.InternalError`.
fn locked<T: Send, R: Send>(
    py: Python<'_>,
    state: &Mutex<T>,
    f: impl FnOnce(&mut T) -> Result<R, Failure> + Send,
) -> PyResult<R> {
    guard(py, || {
        py.detach(|| f(&mut *lock(state)?)).map_err(raise(py))
    })
}

fn lock<T>(state: &Mutex<T>) -> Result<std::sync::MutexGuard<'_, T>, Failure> {
    state.lock().map_err(|_| {
        Failure::Named(
            "InternalError",
            "the state was left inconsistent by an earlier internal error".into(),
        )
    })
}

/// What every portable state provides to the shared methods below.
trait Portable: Send + Clone + Sized {
    /// A state of the frame's shape, allocated, then decoded into. `frame_shape` has
    /// checked that the shape's sizes are backed by the frame's bytes, except the size of
    /// a window or reservoir that has seen fewer samples than its size: its storage is
    /// zero-filled by the allocator, so it costs the memory of the samples it holds.
    fn decode_new(
        bytes: &[u8],
        shape: FrameShape,
        capacity: Option<usize>,
    ) -> Result<Self, Failure>;
    fn encoded_len(&self) -> usize;
    fn encode(&mut self, out: &mut [u8]) -> Result<usize, tce::portable::EncodeError>;
}

fn wrong_kind(bytes: &[u8]) -> Failure {
    let found = bytes
        .get(6..8)
        .map_or(0, |k| u16::from_le_bytes([k[0], k[1]]));
    Failure::Decode(DecodeError::WrongKind { found })
}

impl Portable for BoxedHistogram {
    fn decode_new(bytes: &[u8], shape: FrameShape, _: Option<usize>) -> Result<Self, Failure> {
        let FrameShape::Histogram { closure, bins } = shape else {
            return Err(wrong_kind(bytes));
        };
        let mut h = new_histogram(bins, closure)?;
        h.decode(bytes)?;
        Ok(h)
    }
    fn encoded_len(&self) -> usize {
        CoreHistogram::encoded_len(self)
    }
    fn encode(&mut self, out: &mut [u8]) -> Result<usize, tce::portable::EncodeError> {
        CoreHistogram::encode(self, out)
    }
}

impl Portable for BoxedBuffer {
    fn decode_new(
        bytes: &[u8],
        shape: FrameShape,
        capacity: Option<usize>,
    ) -> Result<Self, Failure> {
        let FrameShape::Buffer { samples } = shape else {
            return Err(wrong_kind(bytes));
        };
        let mut b = new_buffer(capacity.unwrap_or(samples.max(1)))?;
        b.decode(bytes)?;
        Ok(b)
    }
    fn encoded_len(&self) -> usize {
        CoreBuffer::encoded_len(self)
    }
    fn encode(&mut self, out: &mut [u8]) -> Result<usize, tce::portable::EncodeError> {
        CoreBuffer::encode(self, out)
    }
}

impl Portable for BoxedReservoir {
    fn decode_new(bytes: &[u8], shape: FrameShape, _: Option<usize>) -> Result<Self, Failure> {
        let FrameShape::Reservoir { capacity } = shape else {
            return Err(wrong_kind(bytes));
        };
        let mut r = new_reservoir(capacity, 0)?;
        r.decode(bytes)?;
        Ok(r)
    }
    fn encoded_len(&self) -> usize {
        CoreReservoir::encoded_len(self)
    }
    fn encode(&mut self, out: &mut [u8]) -> Result<usize, tce::portable::EncodeError> {
        CoreReservoir::encode(self, out)
    }
}

impl Portable for BoxedWindow {
    fn decode_new(bytes: &[u8], shape: FrameShape, _: Option<usize>) -> Result<Self, Failure> {
        let FrameShape::Window { size } = shape else {
            return Err(wrong_kind(bytes));
        };
        let mut w = new_window(size)?;
        w.decode(bytes)?;
        Ok(w)
    }
    fn encoded_len(&self) -> usize {
        CoreWindow::encoded_len(self)
    }
    fn encode(&mut self, out: &mut [u8]) -> Result<usize, tce::portable::EncodeError> {
        CoreWindow::encode(self, out)
    }
}

impl Portable for BoxedDecayingHistogram {
    fn decode_new(bytes: &[u8], shape: FrameShape, _: Option<usize>) -> Result<Self, Failure> {
        let FrameShape::Decaying { closure, bins } = shape else {
            return Err(wrong_kind(bytes));
        };
        // Any valid half-life: decoding replaces it with the frame's.
        let mut d = new_decaying(bins, closure, 1.0)?;
        d.decode(bytes)?;
        Ok(d)
    }
    fn encoded_len(&self) -> usize {
        CoreDecaying::encoded_len(self)
    }
    fn encode(&mut self, out: &mut [u8]) -> Result<usize, tce::portable::EncodeError> {
        CoreDecaying::encode(self, out)
    }
}

impl Portable for BoxedAlarm {
    fn decode_new(bytes: &[u8], shape: FrameShape, _: Option<usize>) -> Result<Self, Failure> {
        let FrameShape::Alarm { closure, bins } = shape else {
            return Err(wrong_kind(bytes));
        };
        // Any valid settings: decoding replaces them with the frame's.
        let mut a = new_alarm(bins, closure, 1.0, 1.0)?;
        a.decode(bytes)?;
        Ok(a)
    }
    fn encoded_len(&self) -> usize {
        tce::CalibrationAlarm::encoded_len(self)
    }
    fn encode(&mut self, out: &mut [u8]) -> Result<usize, tce::portable::EncodeError> {
        tce::CalibrationAlarm::encode(self, out)
    }
}

fn new_alarm(
    bins: usize,
    closure: Closure,
    shift: f64,
    threshold: f64,
) -> Result<BoxedAlarm, Failure> {
    tce::binning::check_bin_count(bins)?;
    alarm::check_shift(shift)?;
    alarm::check_threshold(threshold)?;
    Ok(tce::CalibrationAlarm::with_boxed_storage(
        boxed(AlarmBin::EMPTY, bins, "bins")?,
        closure,
        shift,
        threshold,
    )?)
}

fn new_histogram(bins: usize, closure: Closure) -> Result<BoxedHistogram, Failure> {
    tce::binning::check_bin_count(bins)?;
    Ok(CoreHistogram::with_boxed_storage(
        boxed(BinStats::EMPTY, bins, "bins")?,
        closure,
    )?)
}

// Sample storage is zero-filled by the allocator (`zeroed`): a buffer, reservoir or
// window costs the memory of the samples it holds until it fills, whatever its capacity
// (a frame may claim a capacity far above what it holds: see `Portable::decode_new`).

fn new_buffer(capacity: usize) -> Result<BoxedBuffer, Failure> {
    tce::buffer::check_capacity(capacity)?;
    Ok(CoreBuffer::with_boxed_storage(zeroed::<Slot>(
        capacity, "samples",
    )?)?)
}

/// A buffer of `capacity` (at least `buffer`'s length) holding `buffer`'s samples, for
/// `copy` and merges: they are appended into fresh zero-filled storage, so the copy costs
/// the samples held, where a `clone` would write the whole capacity.
fn buffer_copy(buffer: &BoxedBuffer, capacity: usize) -> Result<BoxedBuffer, Failure> {
    let mut copy = new_buffer(capacity)?;
    copy.merge(buffer)?;
    Ok(copy)
}

fn new_reservoir(capacity: usize, seed: u64) -> Result<BoxedReservoir, Failure> {
    tce::buffer::check_capacity(capacity)?;
    Ok(CoreReservoir::with_boxed_storage(
        zeroed::<Slot>(capacity, "samples")?,
        seed,
    )?)
}

fn new_window(size: usize) -> Result<BoxedWindow, Failure> {
    tce::window::check_size(size)?;
    Ok(CoreWindow::with_boxed_storage(
        zeroed::<Slot>(size, "samples")?,
        zeroed::<f64>(size, "samples")?,
    )?)
}

fn new_decaying(
    bins: usize,
    closure: Closure,
    half_life: f64,
) -> Result<BoxedDecayingHistogram, Failure> {
    tce::binning::check_bin_count(bins)?;
    Ok(CoreDecaying::with_boxed_storage(
        boxed(DecayedBin::EMPTY, bins, "bins")?,
        closure,
        half_life,
    )?)
}

fn new_concurrent(
    bins: usize,
    shards: usize,
    closure: Closure,
) -> Result<BoxedConcurrentHistogram, Failure> {
    tce::binning::check_bin_count(bins)?;
    if shards == 0 {
        return Err(Failure::option("shards must be at least 1"));
    }
    let total = bins
        .checked_mul(shards)
        .ok_or_else(|| Failure::Memory(format!("{shards} shards of {bins} bins")))?;
    let mut storage = Vec::new();
    storage
        .try_reserve_exact(total)
        .map_err(|_| Failure::Memory(format!("{shards} shards of {bins} bins")))?;
    storage.extend((0..total).map(|_| AtomicBin::default()));
    Ok(CoreConcurrent::with_boxed_storage(
        storage.into_boxed_slice(),
        bins,
        closure,
    )?)
}

/// The state's portable bytes.
fn encoded<T: Portable>(s: &mut T) -> Result<Vec<u8>, Failure> {
    let mut out = boxed(0u8, s.encoded_len(), "the encoding")?;
    let written = s.encode(&mut out)?;
    Ok(out[..written].to_vec())
}

fn to_bytes<T: Portable>(py: Python<'_>, state: &Mutex<T>) -> PyResult<Py<PyBytes>> {
    let bytes = locked(py, state, encoded)?;
    Ok(PyBytes::new(py, &bytes).unbind())
}

/// A copy of a window or reservoir through its portable bytes, for `copy` and merges:
/// exact (a decoded window or reservoir goes on as the original would, generator
/// included), and it writes only the held samples into storage the allocator zero-fills,
/// where a `clone` would write the whole capacity.
fn copied_through_bytes<T: Portable>(py: Python<'_>, state: &Mutex<T>) -> PyResult<T> {
    let bytes = locked(py, state, encoded)?;
    from_bytes(py, &bytes, None)
}

fn from_bytes<T: Portable>(py: Python<'_>, data: &[u8], capacity: Option<usize>) -> PyResult<T> {
    guard(py, || {
        py.detach(|| T::decode_new(data, frame_shape(data)?, capacity))
            .map_err(raise(py))
    })
}

/// A copy of the state behind `state`, for `copy` and merges.
fn cloned<T: Send + Clone>(py: Python<'_>, state: &Mutex<T>) -> PyResult<T> {
    locked(py, state, |s| Ok(s.clone()))
}

/// The pickle recipe: `cls.from_bytes(bytes, *extra)`.
fn reduce<'py, C: pyo3::PyTypeInfo>(
    py: Python<'py>,
    bytes: Py<PyBytes>,
    extra: Option<usize>,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let from = py.get_type::<C>().getattr("from_bytes")?.unbind();
    let args = match extra {
        Some(e) => (bytes, e).into_pyobject(py)?.into_any().unbind(),
        None => (bytes,).into_pyobject(py)?.into_any().unbind(),
    };
    Ok((from, args))
}

/// States that hold samples and estimate from them sorted.
trait HoldsSamples: Send {
    fn with_sorted<R>(&mut self, f: impl FnOnce(&SortedSamples<'_>) -> R) -> R;
}
impl HoldsSamples for BoxedBuffer {
    fn with_sorted<R>(&mut self, f: impl FnOnce(&SortedSamples<'_>) -> R) -> R {
        f(&self.sorted_parallel())
    }
}
impl HoldsSamples for BoxedWindow {
    fn with_sorted<R>(&mut self, f: impl FnOnce(&SortedSamples<'_>) -> R) -> R {
        f(&self.samples())
    }
}
impl HoldsSamples for BoxedReservoir {
    fn with_sorted<R>(&mut self, f: impl FnOnce(&SortedSamples<'_>) -> R) -> R {
        f(&self.samples())
    }
}

#[allow(clippy::too_many_arguments)]
fn sample_estimate<T: HoldsSamples>(
    py: Python<'_>,
    state: &Mutex<T>,
    which: Which,
    binning: &str,
    bins: usize,
    norm: f64,
    closure: &str,
    ties: &str,
) -> PyResult<Estimate> {
    let binning = options::binning(binning, closure, ties).map_err(raise(py))?;
    let norm = options::norm(norm).map_err(raise(py))?;
    let bins = options::bins(bins).map_err(raise(py))?;
    locked(py, state, |s| {
        s.with_sorted(|sorted| estimates::of_sorted(sorted, which, binning, bins, norm))
    })
}

#[allow(clippy::too_many_arguments)]
fn sample_sweep<T: HoldsSamples>(
    py: Python<'_>,
    state: &Mutex<T>,
    binning: &str,
    norm: f64,
    closure: &str,
    ties: &str,
    sweep_limit: &str,
    max_bins: Option<usize>,
) -> PyResult<Estimate> {
    let binning = options::binning(binning, closure, ties).map_err(raise(py))?;
    let norm = options::norm(norm).map_err(raise(py))?;
    let sweep = options::sweep(sweep_limit, max_bins).map_err(raise(py))?;
    locked(py, state, |s| {
        s.with_sorted(|sorted| estimates::sweep_of_sorted(sorted, binning, norm, sweep))
    })
}

fn sample_reliability<T: HoldsSamples>(
    py: Python<'_>,
    state: &Mutex<T>,
    binning: &str,
    bins: usize,
    closure: &str,
    ties: &str,
) -> PyResult<Py<PyAny>> {
    let binning = options::binning(binning, closure, ties).map_err(raise(py))?;
    let bins = options::bins(bins).map_err(raise(py))?;
    locked(py, state, |s| {
        s.with_sorted(|sorted| {
            if sorted.is_empty() {
                return Err(tce::EstimateError::NoSamples.into());
            }
            Ok(Reliability::of_sorted(sorted, binning, bins))
        })
    })?
    .into_py(py)
}

/// Whether `obj` is one number (a Python or numpy scalar, or a 0-d array), not a
/// sequence or an array of samples.
fn is_scalar(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let ndim: usize = obj
        .py()
        .import("numpy")?
        .call_method1("ndim", (obj,))?
        .extract()?;
    Ok(ndim == 0)
}

/// `update` of every mutex-held state: the batch through `push` without the GIL.
fn update<T: Send>(
    state: &Mutex<T>,
    scores: &Bound<'_, PyAny>,
    labels: &Bound<'_, PyAny>,
    logits: bool,
    push: impl FnOnce(&mut T, &[f64], &[u8]) -> Result<(), tce::PushError> + Send,
) -> PyResult<()> {
    with_samples(scores, labels, logits, |scores, labels| {
        Ok(push(&mut *lock(state)?, scores, labels)?)
    })
}

// ---------------------------------------------------------------------------------------

/// A streaming equal-width histogram: O(1) per sample, exact sums (estimates do not
/// depend on input order), exact merge. ``Histogram(bins=15, closure="left")``.
#[pyclass(frozen, module = "tce")]
pub struct Histogram {
    state: Mutex<BoxedHistogram>,
}

impl Histogram {
    pub(crate) fn wrap(h: BoxedHistogram) -> Self {
        Histogram {
            state: Mutex::new(h),
        }
    }
}

#[pymethods]
impl Histogram {
    #[new]
    #[pyo3(signature = (bins=15, closure="left"))]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = options::bins_arg)] bins: usize,
        closure: &str,
    ) -> PyResult<Self> {
        let closure = options::closure(closure).map_err(raise(py))?;
        Ok(Self::wrap(new_histogram(bins, closure).map_err(raise(py))?))
    }

    /// Records a batch of samples: all of it, or (on a bad element) none of it.
    #[pyo3(signature = (scores, labels, *, logits=false))]
    fn update(
        &self,
        scores: &Bound<'_, PyAny>,
        labels: &Bound<'_, PyAny>,
        logits: bool,
    ) -> PyResult<()> {
        update(&self.state, scores, labels, logits, |h, s, l| {
            h.push_batch(s, l)
        })
    }

    /// Adds another histogram's samples (same bins and closure): exact.
    fn merge(&self, py: Python<'_>, other: &Bound<'_, Histogram>) -> PyResult<()> {
        let other = cloned(py, &other.get().state)?;
        locked(py, &self.state, |h| Ok(h.merge(&other)?))
    }

    /// ECE_bin over the histogram's bins; with ``extra``, another histogram whose
    /// non-empty bins count as bins of their own after these (torchmetrics' bin for
    /// confidences of exactly 1.0, as ``tce.torch`` keeps it).
    #[pyo3(signature = (*, norm=2.0, extra=None))]
    fn ece_bin(
        &self,
        py: Python<'_>,
        norm: f64,
        extra: Option<&Bound<'_, Histogram>>,
    ) -> PyResult<Estimate> {
        let norm = options::norm(norm).map_err(raise(py))?;
        match extra {
            None => locked(py, &self.state, |h| Ok(h.ece_bin(norm)?.into())),
            Some(extra) => {
                let extra = cloned(py, &extra.get().state)?;
                locked(py, &self.state, |h| {
                    Ok(h.ece_bin_with(&extra, norm)?.into())
                })
            }
        }
    }

    /// The maximum calibration error over the histogram's bins (and ``extra``'s
    /// non-empty bins, as :meth:`ece_bin`).
    #[pyo3(signature = (*, extra=None))]
    fn mce(&self, py: Python<'_>, extra: Option<&Bound<'_, Histogram>>) -> PyResult<Estimate> {
        match extra {
            None => locked(py, &self.state, |h| Ok(h.mce()?.into())),
            Some(extra) => {
                let extra = cloned(py, &extra.get().state)?;
                locked(py, &self.state, |h| Ok(h.mce_with(&extra)?.into()))
            }
        }
    }

    /// ECE_debias over the histogram's bins.
    #[pyo3(signature = (*, norm=2.0))]
    fn ece_debias(&self, py: Python<'_>, norm: f64) -> PyResult<Estimate> {
        let norm = options::norm(norm).map_err(raise(py))?;
        locked(py, &self.state, |h| Ok(h.ece_debias(norm)?.into()))
    }

    /// The bins as a :class:`ReliabilityBins` (NaN mean score and accuracy when empty).
    fn reliability_bins(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        locked(py, &self.state, |h| Ok(histogram_reliability(h)))?.into_py(py)
    }

    /// The interval of the binned calibration error over the histogram's bins, from
    /// their counts, hits and score sums alone (``tce::decision::binned``): per bin a
    /// Clopper–Pearson interval of the accuracy at ``level^(1/B')`` (B' non-empty
    /// bins), and the least and greatest error over that box. ``(lower, upper)`` covers
    /// the group's binned error (given its scores, labels independent) with probability
    /// at least ``level``, for any n; ``lower`` also bounds its TCE from below.
    /// ``mce=True``: the maximum over bins (the MCE's estimand), else the l_``norm`` error
    /// (ECE_bin's and ECE_debias's).
    #[pyo3(signature = (*, norm=2.0, level=0.95, mce=false))]
    fn binned_interval(
        &self,
        py: Python<'_>,
        norm: f64,
        level: f64,
        mce: bool,
    ) -> PyResult<(f64, f64)> {
        let norm = options::norm(norm).map_err(raise(py))?.p();
        locked(py, &self.state, |h| {
            let i = tce::decision::binned_interval(h.bins(), (!mce).then_some(norm), level)
                .map_err(|e| match e {
                    tce::decision::BinnedIntervalError::NoSamples => {
                        Failure::Named("NoSamples", e.to_string())
                    }
                    _ => Failure::option(e.to_string()),
                })?;
            Ok((i.lower, i.upper))
        })
    }

    /// The Hosmer–Lemeshow test over the histogram's bins: ``(statistic, degrees of
    /// freedom, p_value)``, C referred to χ² with one degree of freedom per bin whose
    /// mean score is strictly between 0 and 1. ``NoSamples`` when the histogram is
    /// empty, ``InvalidOption`` when no bin has such a mean score (C is undefined).
    fn hosmer_lemeshow(&self, py: Python<'_>) -> PyResult<(f64, usize, f64)> {
        locked(py, &self.state, |h| {
            let t = tce::decision::hosmer_lemeshow_bins(h.bins()).map_err(|e| match e {
                tce::decision::HosmerLemeshowError::NoSamples => {
                    Failure::Named("NoSamples", e.to_string())
                }
                _ => Failure::option(e.to_string()),
            })?;
            Ok((t.statistic, t.degrees_of_freedom, t.p_value))
        })
    }

    /// Forgets every sample.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        locked(py, &self.state, |h| {
            h.reset();
            Ok(())
        })
    }

    /// Samples recorded.
    #[getter]
    fn samples(&self, py: Python<'_>) -> PyResult<u64> {
        locked(py, &self.state, |h| Ok(h.samples()))
    }

    /// The number of bins B.
    #[getter]
    fn bins(&self, py: Python<'_>) -> PyResult<usize> {
        locked(py, &self.state, |h| Ok(h.bin_count()))
    }

    /// ``"left"`` or ``"right"``.
    #[getter]
    fn closure(&self, py: Python<'_>) -> PyResult<&'static str> {
        locked(py, &self.state, |h| Ok(options::closure_name(h.closure())))
    }

    /// The state in the portable format (kind 1), as the C API writes it.
    fn to_bytes(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        to_bytes(py, &self.state)
    }

    /// A histogram decoded from the portable format (bytes or bytearray).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Cow<'_, [u8]>) -> PyResult<Self> {
        Ok(Self::wrap(from_bytes(py, &data, None)?))
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
        reduce::<Self>(py, self.to_bytes(py)?, None)
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        Ok(Self::wrap(cloned(py, &self.state)?))
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.__copy__(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        locked(py, &self.state, |h| {
            Ok(format!(
                "Histogram(bins={}, closure={:?}, samples={})",
                h.bin_count(),
                options::closure_name(h.closure()),
                h.samples()
            ))
        })
    }
}

/// The `#[pymethods]` of a class that holds samples (`SortedBuffer`, `SlidingWindow`,
/// `Reservoir`): its own, then those all three share (the estimators on its sorted
/// samples, `len`, `deepcopy`).
macro_rules! sample_state_methods {
    (impl $class:ident { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            $($own)*

            fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
                locked(py, &self.state, |s| Ok(s.len()))
            }

            fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
                self.__copy__(py)
            }

            /// The held samples as ``(scores, labels)`` numpy arrays (float64, uint8), in
            /// sorted order (by score; equal scores in arrival order): what the
            /// estimators read. For computations on a state's samples that the state has
            /// no method for (``tce.spark``'s per-group intervals and tests).
            fn samples<'py>(
                &self,
                py: Python<'py>,
            ) -> PyResult<(
                Bound<'py, numpy::PyArray1<f64>>,
                Bound<'py, numpy::PyArray1<u8>>,
            )> {
                let (scores, labels): (Vec<f64>, Vec<u8>) =
                    locked(py, &self.state, |s| Ok(s.with_sorted(|sorted| sorted.iter().unzip())))?;
                Ok((
                    numpy::PyArray1::from_vec(py, scores),
                    numpy::PyArray1::from_vec(py, labels),
                ))
            }

            /// ECE_bin of the held samples; arguments as :func:`tce.ece_bin`.
            #[pyo3(signature = (*, binning="equal_mass", bins=15, norm=2.0, closure="left", ties="split"))]
            fn ece_bin(
                &self,
                py: Python<'_>,
                binning: &str,
                #[pyo3(from_py_with = options::bins_arg)] bins: usize,
                norm: f64,
                closure: &str,
                ties: &str,
            ) -> PyResult<Estimate> {
                sample_estimate(
                    py,
                    &self.state,
                    Which::EceBin,
                    binning,
                    bins,
                    norm,
                    closure,
                    ties,
                )
            }

            /// MCE of the held samples; arguments as :func:`tce.mce`.
            #[pyo3(signature = (*, binning="equal_mass", bins=15, closure="left", ties="split"))]
            fn mce(
                &self,
                py: Python<'_>,
                binning: &str,
                #[pyo3(from_py_with = options::bins_arg)] bins: usize,
                closure: &str,
                ties: &str,
            ) -> PyResult<Estimate> {
                sample_estimate(
                    py,
                    &self.state,
                    Which::Mce,
                    binning,
                    bins,
                    2.0,
                    closure,
                    ties,
                )
            }

            /// ECE_debias of the held samples; arguments as :func:`tce.ece_debias`.
            #[pyo3(signature = (*, binning="equal_mass", bins=15, norm=2.0, closure="left", ties="split"))]
            fn ece_debias(
                &self,
                py: Python<'_>,
                binning: &str,
                #[pyo3(from_py_with = options::bins_arg)] bins: usize,
                norm: f64,
                closure: &str,
                ties: &str,
            ) -> PyResult<Estimate> {
                sample_estimate(
                    py,
                    &self.state,
                    Which::EceDebias,
                    binning,
                    bins,
                    norm,
                    closure,
                    ties,
                )
            }

            /// ECE_sweep of the held samples; arguments as :func:`tce.ece_sweep`.
            #[pyo3(signature = (*, binning="equal_mass", norm=2.0, closure="left", ties="split", sweep_limit="samples", max_bins=None))]
            #[allow(clippy::too_many_arguments)]
            fn ece_sweep(
                &self,
                py: Python<'_>,
                binning: &str,
                norm: f64,
                closure: &str,
                ties: &str,
                sweep_limit: &str,
                #[pyo3(from_py_with = options::max_bins_arg)] max_bins: Option<usize>,
            ) -> PyResult<Estimate> {
                sample_sweep(
                    py,
                    &self.state,
                    binning,
                    norm,
                    closure,
                    ties,
                    sweep_limit,
                    max_bins,
                )
            }

            /// The bins of the held samples as a :class:`ReliabilityBins`; arguments as :func:`tce.reliability_bins`.
            #[pyo3(signature = (*, binning="equal_mass", bins=15, closure="left", ties="split"))]
            fn reliability_bins(
                &self,
                py: Python<'_>,
                binning: &str,
                #[pyo3(from_py_with = options::bins_arg)] bins: usize,
                closure: &str,
                ties: &str,
            ) -> PyResult<Py<PyAny>> {
                sample_reliability(py, &self.state, binning, bins, closure, ties)
            }
        }
    };
}

// ---------------------------------------------------------------------------------------

/// Every sample, for equal-mass bins and the sweep: ``SortedBuffer(capacity)``. A batch
/// that does not fit is refused whole (:class:`tce.BufferFull`), never overwritten.
#[pyclass(frozen, module = "tce")]
pub struct SortedBuffer {
    state: Mutex<BoxedBuffer>,
}

impl SortedBuffer {
    fn wrap(b: BoxedBuffer) -> Self {
        SortedBuffer {
            state: Mutex::new(b),
        }
    }
}

sample_state_methods! {
    impl SortedBuffer {
        #[new]
        fn new(
            py: Python<'_>,
            #[pyo3(from_py_with = options::capacity_arg)] capacity: usize,
        ) -> PyResult<Self> {
            Ok(Self::wrap(new_buffer(capacity).map_err(raise(py))?))
        }

        /// Records a batch of samples: all of it, or (on a bad element, or if it does not
        /// fit) none of it.
        #[pyo3(signature = (scores, labels, *, logits=false))]
        fn update(
            &self,
            scores: &Bound<'_, PyAny>,
            labels: &Bound<'_, PyAny>,
            logits: bool,
        ) -> PyResult<()> {
            update(&self.state, scores, labels, logits, |b, s, l| {
                b.push_batch(s, l)
            })
        }

        /// Appends another buffer's samples after this one's (if they fit).
        fn merge(&self, py: Python<'_>, other: &Bound<'_, SortedBuffer>) -> PyResult<()> {
            let other = locked(py, &other.get().state, |b| buffer_copy(b, b.len().max(1)))?;
            locked(py, &self.state, |b| Ok(b.merge(&other)?))
        }

        /// Forgets every sample; the capacity stays.
        fn clear(&self, py: Python<'_>) -> PyResult<()> {
            locked(py, &self.state, |b| {
                b.clear();
                Ok(())
            })
        }

        /// The most samples the buffer holds.
        #[getter]
        fn capacity(&self, py: Python<'_>) -> PyResult<usize> {
            locked(py, &self.state, |b| Ok(b.capacity()))
        }

        /// Hits (label 1) held.
        #[getter]
        fn hits(&self, py: Python<'_>) -> PyResult<u64> {
            locked(py, &self.state, |b| Ok(b.hits()))
        }

        /// The samples in the portable format (kind 2), in arrival order.
        fn to_bytes(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
            to_bytes(py, &self.state)
        }

        /// A buffer decoded from the portable format, of ``capacity`` (default: the number
        /// of samples in the bytes, at least 1).
        #[staticmethod]
        #[pyo3(signature = (data, capacity=None))]
        fn from_bytes(
            py: Python<'_>,
            data: Cow<'_, [u8]>,
            #[pyo3(from_py_with = options::optional_capacity_arg)] capacity: Option<usize>,
        ) -> PyResult<Self> {
            Ok(Self::wrap(from_bytes(py, &data, capacity)?))
        }

        fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
            let capacity = self.capacity(py)?;
            reduce::<Self>(py, self.to_bytes(py)?, Some(capacity))
        }

        fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
            Ok(Self::wrap(locked(py, &self.state, |b| {
                buffer_copy(b, b.capacity())
            })?))
        }

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            locked(py, &self.state, |b| {
                Ok(format!(
                    "SortedBuffer(capacity={}, len={})",
                    b.capacity(),
                    b.len()
                ))
            })
        }
    }
}

// ---------------------------------------------------------------------------------------

/// The most recent ``size`` samples, kept sorted: ``SlidingWindow(size)``. A push into a
/// full window evicts the oldest sample.
#[pyclass(frozen, module = "tce")]
pub struct SlidingWindow {
    state: Mutex<BoxedWindow>,
}

impl SlidingWindow {
    fn wrap(w: BoxedWindow) -> Self {
        SlidingWindow {
            state: Mutex::new(w),
        }
    }
}

sample_state_methods! {
    impl SlidingWindow {
        #[new]
        fn new(py: Python<'_>, #[pyo3(from_py_with = options::size_arg)] size: usize) -> PyResult<Self> {
            Ok(Self::wrap(new_window(size).map_err(raise(py))?))
        }

        /// Records a batch in order (evicting the oldest samples): all of it, or (on a bad
        /// element) none of it.
        #[pyo3(signature = (scores, labels, *, logits=false))]
        fn update(
            &self,
            scores: &Bound<'_, PyAny>,
            labels: &Bound<'_, PyAny>,
            logits: bool,
        ) -> PyResult<()> {
            update(&self.state, scores, labels, logits, |w, s, l| {
                w.push_batch(s, l)
            })
        }

        /// Pushes the samples ``other`` holds into this window, oldest first (``other`` may
        /// have another size, and is not changed): the window then holds the last ``size``
        /// samples of its own stream followed by ``other``'s, and ``seen`` grows by
        /// ``len(other)`` (what ``other`` has already evicted cannot be merged).
        fn merge(&self, py: Python<'_>, other: &Bound<'_, SlidingWindow>) -> PyResult<()> {
            let other = copied_through_bytes(py, &other.get().state)?;
            locked(py, &self.state, |w| Ok(w.merge(&other)?))
        }

        /// Forgets every sample.
        fn clear(&self, py: Python<'_>) -> PyResult<()> {
            locked(py, &self.state, |w| {
                w.clear();
                Ok(())
            })
        }

        /// The window size N.
        #[getter]
        fn size(&self, py: Python<'_>) -> PyResult<usize> {
            locked(py, &self.state, |w| Ok(w.capacity()))
        }

        /// Samples ever pushed.
        #[getter]
        fn seen(&self, py: Python<'_>) -> PyResult<u64> {
            locked(py, &self.state, |w| Ok(w.seen()))
        }

        /// The state in the portable format (kind 4).
        fn to_bytes(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
            to_bytes(py, &self.state)
        }

        /// A window decoded from the portable format.
        #[staticmethod]
        fn from_bytes(py: Python<'_>, data: Cow<'_, [u8]>) -> PyResult<Self> {
            Ok(Self::wrap(from_bytes(py, &data, None)?))
        }

        fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
            reduce::<Self>(py, self.to_bytes(py)?, None)
        }

        fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
            Ok(Self::wrap(copied_through_bytes(py, &self.state)?))
        }

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            locked(py, &self.state, |w| {
                Ok(format!(
                    "SlidingWindow(size={}, len={}, seen={})",
                    w.capacity(),
                    w.len(),
                    w.seen()
                ))
            })
        }
    }
}

// ---------------------------------------------------------------------------------------

/// A uniform random sample of ``capacity`` over all history (seeded Algorithm R):
/// ``Reservoir(capacity, seed=0)``.
#[pyclass(frozen, module = "tce")]
pub struct Reservoir {
    state: Mutex<BoxedReservoir>,
}

impl Reservoir {
    fn wrap(r: BoxedReservoir) -> Self {
        Reservoir {
            state: Mutex::new(r),
        }
    }
}

sample_state_methods! {
    impl Reservoir {
        #[new]
        #[pyo3(signature = (capacity, seed=0))]
        fn new(
            py: Python<'_>,
            #[pyo3(from_py_with = options::capacity_arg)] capacity: usize,
            #[pyo3(from_py_with = options::seed_arg)] seed: u64,
        ) -> PyResult<Self> {
            Ok(Self::wrap(
                new_reservoir(capacity, seed).map_err(raise(py))?,
            ))
        }

        /// Offers a batch in order: all of it, or (on a bad element) none of it.
        #[pyo3(signature = (scores, labels, *, logits=false))]
        fn update(
            &self,
            scores: &Bound<'_, PyAny>,
            labels: &Bound<'_, PyAny>,
            logits: bool,
        ) -> PyResult<()> {
            update(&self.state, scores, labels, logits, |r, s, l| {
                r.push_batch(s, l)
            })
        }

        /// Merges a reservoir of the same capacity: a uniform sample of both streams.
        fn merge(&self, py: Python<'_>, other: &Bound<'_, Reservoir>) -> PyResult<()> {
            let other = copied_through_bytes(py, &other.get().state)?;
            locked(py, &self.state, |r| Ok(r.merge(&other)?))
        }

        /// Forgets every sample (the generator goes on).
        fn clear(&self, py: Python<'_>) -> PyResult<()> {
            locked(py, &self.state, |r| {
                r.clear();
                Ok(())
            })
        }

        /// The most samples held.
        #[getter]
        fn capacity(&self, py: Python<'_>) -> PyResult<usize> {
            locked(py, &self.state, |r| Ok(r.capacity()))
        }

        /// Samples ever offered.
        #[getter]
        fn seen(&self, py: Python<'_>) -> PyResult<u64> {
            locked(py, &self.state, |r| Ok(r.seen()))
        }

        /// The state in the portable format (kind 3), generator included: a decoded
        /// reservoir continues exactly as this one would.
        fn to_bytes(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
            to_bytes(py, &self.state)
        }

        /// A reservoir decoded from the portable format.
        #[staticmethod]
        fn from_bytes(py: Python<'_>, data: Cow<'_, [u8]>) -> PyResult<Self> {
            Ok(Self::wrap(from_bytes(py, &data, None)?))
        }

        fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
            reduce::<Self>(py, self.to_bytes(py)?, None)
        }

        fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
            Ok(Self::wrap(copied_through_bytes(py, &self.state)?))
        }

        fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
            locked(py, &self.state, |r| {
                Ok(format!(
                    "Reservoir(capacity={}, len={}, seen={})",
                    r.capacity(),
                    r.len(),
                    r.seen()
                ))
            })
        }
    }
}

// ---------------------------------------------------------------------------------------

/// An equal-width histogram whose samples' weight halves every ``half_life`` samples:
/// ``DecayingHistogram(half_life, bins=15, closure="left")``.
#[pyclass(frozen, module = "tce")]
pub struct DecayingHistogram {
    state: Mutex<BoxedDecayingHistogram>,
}

impl DecayingHistogram {
    fn wrap(d: BoxedDecayingHistogram) -> Self {
        DecayingHistogram {
            state: Mutex::new(d),
        }
    }
}

#[pymethods]
impl DecayingHistogram {
    #[new]
    #[pyo3(signature = (half_life, bins=15, closure="left"))]
    fn new(
        py: Python<'_>,
        half_life: f64,
        #[pyo3(from_py_with = options::bins_arg)] bins: usize,
        closure: &str,
    ) -> PyResult<Self> {
        let closure = options::closure(closure).map_err(raise(py))?;
        Ok(Self::wrap(
            new_decaying(bins, closure, half_life).map_err(raise(py))?,
        ))
    }

    /// Records a batch in order: all of it, or (on a bad element) none of it.
    #[pyo3(signature = (scores, labels, *, logits=false))]
    fn update(
        &self,
        scores: &Bound<'_, PyAny>,
        labels: &Bound<'_, PyAny>,
        logits: bool,
    ) -> PyResult<()> {
        update(&self.state, scores, labels, logits, |d, s, l| {
            d.push_batch(s, l)
        })
    }

    /// Adds another decaying histogram's samples as if both streams had ended at the
    /// same moment: each sample keeps its weight relative to its own stream's next
    /// sample, and the bins' weights and counts add. Both need the same bins, closure and
    /// half-life (:class:`tce.MergeMismatch`; the decay per push is compared, so a
    /// histogram read back by ``from_bytes`` merges with its original); this one keeps
    /// its half-life. Commutative; exact up to one rounding of the rescaled side.
    fn merge(&self, py: Python<'_>, other: &Bound<'_, DecayingHistogram>) -> PyResult<()> {
        let other = cloned(py, &other.get().state)?;
        locked(py, &self.state, |d| Ok(d.merge(&other)?))
    }

    /// ECE_bin with decayed weights.
    #[pyo3(signature = (*, norm=2.0))]
    fn ece_bin(&self, py: Python<'_>, norm: f64) -> PyResult<Estimate> {
        let norm = options::norm(norm).map_err(raise(py))?;
        locked(py, &self.state, |d| Ok(d.ece_bin(norm)?.into()))
    }

    /// MCE over the non-empty bins.
    fn mce(&self, py: Python<'_>) -> PyResult<Estimate> {
        locked(py, &self.state, |d| Ok(d.mce()?.into()))
    }

    /// ECE_debias with Kish's effective sample size per bin.
    #[pyo3(signature = (*, norm=2.0))]
    fn ece_debias(&self, py: Python<'_>, norm: f64) -> PyResult<Estimate> {
        let norm = options::norm(norm).map_err(raise(py))?;
        locked(py, &self.state, |d| Ok(d.ece_debias(norm)?.into()))
    }

    /// Forgets every sample.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        locked(py, &self.state, |d| {
            d.reset();
            Ok(())
        })
    }

    /// Samples recorded.
    #[getter]
    fn samples(&self, py: Python<'_>) -> PyResult<u64> {
        locked(py, &self.state, |d| Ok(d.samples()))
    }

    /// The number of bins B.
    #[getter]
    fn bins(&self, py: Python<'_>) -> PyResult<usize> {
        locked(py, &self.state, |d| Ok(d.bin_count()))
    }

    /// The half-life in samples.
    #[getter]
    fn half_life(&self, py: Python<'_>) -> PyResult<f64> {
        locked(py, &self.state, |d| Ok(d.half_life()))
    }

    /// ``"left"`` or ``"right"``.
    #[getter]
    fn closure(&self, py: Python<'_>) -> PyResult<&'static str> {
        locked(py, &self.state, |d| Ok(options::closure_name(d.closure())))
    }

    /// The state in the portable format (kind 5).
    fn to_bytes(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        to_bytes(py, &self.state)
    }

    /// A decaying histogram decoded from the portable format.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Cow<'_, [u8]>) -> PyResult<Self> {
        Ok(Self::wrap(from_bytes(py, &data, None)?))
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
        reduce::<Self>(py, self.to_bytes(py)?, None)
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        Ok(Self::wrap(cloned(py, &self.state)?))
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.__copy__(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        locked(py, &self.state, |d| {
            Ok(format!(
                "DecayingHistogram(half_life={:?}, bins={}, closure={:?}, samples={})",
                d.half_life(),
                d.bin_count(),
                options::closure_name(d.closure()),
                d.samples()
            ))
        })
    }
}

// ---------------------------------------------------------------------------------------

/// A calibration alarm with a stated false-alarm rate (per-bin CUSUMs against odds times
/// e^±shift; docs/monitoring.md): ``CalibrationAlarm(threshold, shift=ln 2, bins=10,
/// closure="left")``. On a calibrated stream the mean number of samples from a reset to
/// a false alarm is at least ``guaranteed_arl0`` (e^threshold / 2) and about
/// ``approximate_arl0``; ``threshold_for_arl0`` gives the threshold for a target.
#[pyclass(frozen, module = "tce")]
pub struct CalibrationAlarm {
    state: Mutex<BoxedAlarm>,
}

impl CalibrationAlarm {
    fn wrap(a: BoxedAlarm) -> Self {
        CalibrationAlarm {
            state: Mutex::new(a),
        }
    }
}

#[pymethods]
impl CalibrationAlarm {
    #[new]
    #[pyo3(signature = (threshold, shift=std::f64::consts::LN_2, bins=10, closure="left"))]
    fn new(
        py: Python<'_>,
        threshold: f64,
        shift: f64,
        #[pyo3(from_py_with = options::bins_arg)] bins: usize,
        closure: &str,
    ) -> PyResult<Self> {
        let closure = options::closure(closure).map_err(raise(py))?;
        Ok(Self::wrap(
            new_alarm(bins, closure, shift, threshold).map_err(raise(py))?,
        ))
    }

    /// Records samples in order, whenever their labels come: arrays of scores and
    /// labels (an N×K table with class ids, ``logits=True`` for logits), as ``update``
    /// takes them, or one (score, label) pair of scalars. All of it or, on a bad sample,
    /// none of it. Returns whether the alarm is raised after the batch; ``alarm_at``
    /// says at which sample since the reset it went off, inside the batch or before it
    /// (the core's ``push_batch`` reports it so).
    #[pyo3(signature = (scores, labels, *, logits=false))]
    fn push(
        &self,
        py: Python<'_>,
        scores: &Bound<'_, PyAny>,
        labels: &Bound<'_, PyAny>,
        logits: bool,
    ) -> PyResult<bool> {
        // A scalar pair is a batch of one: the same checks and errors as arrays.
        let numpy = py.import("numpy")?;
        let scalars = is_scalar(scores)? && is_scalar(labels)?;
        let (scores, labels) = if scalars {
            (
                numpy.call_method1("atleast_1d", (scores,))?,
                numpy.call_method1("atleast_1d", (labels,))?,
            )
        } else {
            (scores.clone(), labels.clone())
        };
        with_samples(&scores, &labels, logits, |s, l| {
            let mut alarm = lock(&self.state)?;
            alarm.push_batch(s, l)?;
            Ok(alarm.alarm())
        })
    }

    /// Records a batch in order: all of it, or (on a bad element) none of it.
    #[pyo3(signature = (scores, labels, *, logits=false))]
    fn update(
        &self,
        scores: &Bound<'_, PyAny>,
        labels: &Bound<'_, PyAny>,
        logits: bool,
    ) -> PyResult<()> {
        update(&self.state, scores, labels, logits, |a, s, l| {
            a.push_batch(s, l)
        })
    }

    /// The largest of the per-bin CUSUMs (0 before any sample).
    #[getter]
    fn statistic(&self, py: Python<'_>) -> PyResult<f64> {
        locked(py, &self.state, |a| Ok(a.statistic()))
    }

    /// Whether the statistic has reached the threshold since the last reset.
    #[getter]
    fn alarm(&self, py: Python<'_>) -> PyResult<bool> {
        locked(py, &self.state, |a| Ok(a.alarm()))
    }

    /// The sample since the reset (1 for the first) at which the alarm went off, or None.
    #[getter]
    fn alarm_at(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        locked(py, &self.state, |a| Ok(a.alarm_at()))
    }

    /// Clears the CUSUMs, the alarm and the samples: the ARL0 counts from here.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        locked(py, &self.state, |a| {
            a.reset();
            Ok(())
        })
    }

    /// Samples since creation or the last reset.
    #[getter]
    fn samples(&self, py: Python<'_>) -> PyResult<u64> {
        locked(py, &self.state, |a| Ok(a.samples()))
    }

    /// The number of bins B.
    #[getter]
    fn bins(&self, py: Python<'_>) -> PyResult<usize> {
        locked(py, &self.state, |a| Ok(a.bin_count()))
    }

    /// The threshold h.
    #[getter]
    fn threshold(&self, py: Python<'_>) -> PyResult<f64> {
        locked(py, &self.state, |a| Ok(a.threshold()))
    }

    /// The shift in log-odds the CUSUMs test for.
    #[getter]
    fn shift(&self, py: Python<'_>) -> PyResult<f64> {
        locked(py, &self.state, |a| Ok(a.shift()))
    }

    /// ``"left"`` or ``"right"``.
    #[getter]
    fn closure(&self, py: Python<'_>) -> PyResult<&'static str> {
        locked(py, &self.state, |a| Ok(options::closure_name(a.closure())))
    }

    /// The mean information per sample of the scores since the reset (NaN before any).
    #[getter]
    fn mean_information(&self, py: Python<'_>) -> PyResult<f64> {
        locked(py, &self.state, |a| Ok(a.mean_information()))
    }

    /// The guaranteed lower bound on ARL0: e^threshold / 2 samples.
    #[getter]
    fn guaranteed_arl0(&self, py: Python<'_>) -> PyResult<f64> {
        locked(py, &self.state, |a| Ok(a.guaranteed_arl0()))
    }

    /// The approximate ARL0 on the scores seen since the reset.
    #[getter]
    fn approximate_arl0(&self, py: Python<'_>) -> PyResult<f64> {
        locked(py, &self.state, |a| Ok(a.approximate_arl0()))
    }

    /// The threshold whose approximate ARL0 is ``arl0`` samples on scores of mean
    /// information ``mean_information`` per sample (see :meth:`information`).
    #[staticmethod]
    fn threshold_for_arl0(py: Python<'_>, arl0: f64, mean_information: f64) -> PyResult<f64> {
        alarm::threshold_for_arl0(arl0, mean_information)
            .map_err(Failure::from)
            .map_err(raise(py))
    }

    /// The threshold whose guaranteed ARL0 is ``arl0`` samples: ln(2·arl0).
    #[staticmethod]
    fn threshold_for_guaranteed_arl0(py: Python<'_>, arl0: f64) -> PyResult<f64> {
        alarm::threshold_for_guaranteed_arl0(arl0)
            .map_err(Failure::from)
            .map_err(raise(py))
    }

    /// The information per sample of a score for shift ``shift``: its mean over
    /// reference scores is the ``mean_information`` of :meth:`threshold_for_arl0`.
    #[staticmethod]
    #[pyo3(signature = (score, shift=std::f64::consts::LN_2))]
    fn information(score: f64, shift: f64) -> f64 {
        alarm::information(shift, score)
    }

    /// The state in the portable format (kind 6).
    fn to_bytes(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        to_bytes(py, &self.state)
    }

    /// An alarm decoded from the portable format.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Cow<'_, [u8]>) -> PyResult<Self> {
        Ok(Self::wrap(from_bytes(py, &data, None)?))
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
        reduce::<Self>(py, self.to_bytes(py)?, None)
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        Ok(Self::wrap(cloned(py, &self.state)?))
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.__copy__(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        locked(py, &self.state, |a| {
            Ok(format!(
                "CalibrationAlarm(threshold={:?}, shift={:?}, bins={}, closure={:?}, samples={}, alarm={})",
                a.threshold(),
                a.shift(),
                a.bin_count(),
                options::closure_name(a.closure()),
                a.samples(),
                if a.alarm() { "True" } else { "False" }
            ))
        })
    }
}

// ---------------------------------------------------------------------------------------

/// The next shard index a thread gets: threads take shards round-robin.
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's shard (taken modulo the shard count).
    static SHARD: usize = NEXT_SHARD.fetch_add(1, Ordering::Relaxed);
}

/// An equal-width histogram that many Python threads update at once, lock-free, striped
/// into ``shards`` (each thread pushes into its own): ``ConcurrentHistogram(bins=15,
/// shards=4, closure="left")``. Estimates read an exact snapshot.
#[pyclass(frozen, module = "tce")]
pub struct ConcurrentHistogram {
    state: BoxedConcurrentHistogram,
}

impl ConcurrentHistogram {
    fn snapshot_of(&self) -> Result<BoxedHistogram, Failure> {
        let mut h = new_histogram(self.state.bin_count(), self.state.closure())?;
        self.state.snapshot_into(&mut h)?;
        Ok(h)
    }

    fn with_snapshot<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&BoxedHistogram) -> Result<R, Failure> + Send,
    ) -> PyResult<R> {
        guard(py, || {
            py.detach(|| f(&self.snapshot_of()?)).map_err(raise(py))
        })
    }

    fn from_histogram(h: &BoxedHistogram, shards: usize) -> Result<Self, Failure> {
        let state = new_concurrent(h.bin_count(), shards, h.closure())?;
        state.merge_histogram(0, h)?;
        Ok(ConcurrentHistogram { state })
    }
}

#[pymethods]
impl ConcurrentHistogram {
    #[new]
    #[pyo3(signature = (bins=15, shards=4, closure="left"))]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = options::bins_arg)] bins: usize,
        #[pyo3(from_py_with = options::shards_arg)] shards: usize,
        closure: &str,
    ) -> PyResult<Self> {
        let closure = options::closure(closure).map_err(raise(py))?;
        Ok(ConcurrentHistogram {
            state: new_concurrent(bins, shards, closure).map_err(raise(py))?,
        })
    }

    /// Records a batch into ``shard`` (default: the calling thread's own), without the
    /// GIL and without a lock: all of it, or (on a bad element) none of it.
    #[pyo3(signature = (scores, labels, *, shard=None, logits=false))]
    fn update(
        &self,
        scores: &Bound<'_, PyAny>,
        labels: &Bound<'_, PyAny>,
        shard: Option<options::Int>,
        logits: bool,
    ) -> PyResult<()> {
        // A shard is checked before the inputs are read: an index past the shards is
        // refused, never wrapped onto another shard.
        let shard = match shard {
            Some(shard) => options::index(&shard, "shard", self.state.shard_count())
                .map_err(raise(scores.py()))?,
            None => SHARD.with(|s| *s) % self.state.shard_count(),
        };
        with_samples(scores, labels, logits, |scores, labels| {
            Ok(self.state.push_batch_to(shard, scores, labels)?)
        })
    }

    /// Adds a :class:`Histogram`'s or another concurrent histogram's samples (same bins
    /// and closure) into shard 0: exact.
    fn merge(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let other: BoxedHistogram = if let Ok(h) = other.cast::<Histogram>() {
            cloned(py, &h.get().state)?
        } else {
            let c = other.cast::<ConcurrentHistogram>()?;
            c.get().with_snapshot(py, |h| Ok(h.clone()))?
        };
        guard(py, || {
            py.detach(|| Ok(self.state.merge_histogram(0, &other)?))
                .map_err(raise(py))
        })
    }

    /// The samples so far, summed over the shards exactly, as a :class:`Histogram`.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Histogram> {
        Ok(Histogram::wrap(self.with_snapshot(py, |h| Ok(h.clone()))?))
    }

    /// ECE_bin of a snapshot.
    #[pyo3(signature = (*, norm=2.0))]
    fn ece_bin(&self, py: Python<'_>, norm: f64) -> PyResult<Estimate> {
        let norm = options::norm(norm).map_err(raise(py))?;
        self.with_snapshot(py, |h| Ok(h.ece_bin(norm)?.into()))
    }

    /// MCE of a snapshot.
    fn mce(&self, py: Python<'_>) -> PyResult<Estimate> {
        self.with_snapshot(py, |h| Ok(h.mce()?.into()))
    }

    /// ECE_debias of a snapshot.
    #[pyo3(signature = (*, norm=2.0))]
    fn ece_debias(&self, py: Python<'_>, norm: f64) -> PyResult<Estimate> {
        let norm = options::norm(norm).map_err(raise(py))?;
        self.with_snapshot(py, |h| Ok(h.ece_debias(norm)?.into()))
    }

    /// The bins of a snapshot as a :class:`ReliabilityBins`.
    fn reliability_bins(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.with_snapshot(py, |h| Ok(histogram_reliability(h)))?
            .into_py(py)
    }

    /// Forgets every sample, in every shard.
    fn reset(&self) {
        self.state.reset();
    }

    /// Samples recorded (a snapshot's count).
    #[getter]
    fn samples(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_snapshot(py, |h| Ok(h.samples()))
    }

    /// The number of bins B.
    #[getter]
    fn bins(&self) -> usize {
        self.state.bin_count()
    }

    /// The number of shards.
    #[getter]
    fn shards(&self) -> usize {
        self.state.shard_count()
    }

    /// ``"left"`` or ``"right"``.
    #[getter]
    fn closure(&self) -> &'static str {
        options::closure_name(self.state.closure())
    }

    /// A snapshot in the portable format (a histogram, kind 1).
    fn to_bytes(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        let bytes = self.with_snapshot(py, |h| {
            let mut out = boxed(0u8, h.encoded_len(), "the encoding")?;
            let written = h.encode(&mut out)?;
            Ok(out[..written].to_vec())
        })?;
        Ok(PyBytes::new(py, &bytes).unbind())
    }

    /// A concurrent histogram of ``shards`` shards holding a histogram decoded from the
    /// portable format.
    #[staticmethod]
    #[pyo3(signature = (data, shards=4))]
    fn from_bytes(
        py: Python<'_>,
        data: Cow<'_, [u8]>,
        #[pyo3(from_py_with = options::shards_arg)] shards: usize,
    ) -> PyResult<Self> {
        let h: BoxedHistogram = from_bytes(py, &data, None)?;
        guard(py, || {
            py.detach(|| Self::from_histogram(&h, shards))
                .map_err(raise(py))
        })
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
        reduce::<Self>(py, self.to_bytes(py)?, Some(self.shards()))
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        let shards = self.shards();
        self.with_snapshot(py, |h| Self::from_histogram(h, shards))
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.__copy__(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ConcurrentHistogram(bins={}, shards={}, closure={:?}, samples={})",
            self.bins(),
            self.shards(),
            self.closure(),
            self.samples(py)?
        ))
    }
}
