"""The pure-Python parts of tce: the exception hierarchy and the result tuples.

Every exception of the package is a :class:`tce.Error`, itself a :class:`ValueError`,
with one subclass per cause. Messages name the index and value of the first bad
element; a refused call records nothing.
"""

from typing import NamedTuple

import numpy as np


class Error(ValueError):
    """Base class of every tce error."""


class NonFiniteScore(Error):
    """A score is NaN or infinite."""


class ScoreOutOfRange(Error):
    """A score (or class probability) is finite but outside [0, 1]."""


class InvalidLabel(Error):
    """A label is neither 0 nor 1 (or, for a table, not a class id of its columns)."""


class LengthMismatch(Error):
    """Scores and labels differ in length."""


class ShapeMismatch(Error):
    """An array has the wrong number of dimensions, or a table has no columns."""


class UnsupportedDtype(Error, TypeError):
    """An array is not numbers (strings, objects, complex)."""


class MaskedInput(Error, TypeError):
    """Scores or labels are a numpy masked array: tce neither drops nor fills masked
    elements; pass ``a.compressed()`` (with the labels compressed alike) or
    ``a.filled(value)``."""


class MissingGroup(Error):
    """A group key is missing (None or NaN): ``tce.by_group`` neither drops those rows nor
    makes a group of them; fill them first (``groups.fillna("unknown")``)."""


class NotNormalized(Error):
    """A row of class probabilities does not sum to 1 (logits passed as probabilities?)."""


class BufferFull(Error):
    """A batch or a merge does not fit in a buffer; nothing was recorded."""


class CountOverflow(Error):
    """A count would pass tce.MAX_COUNT (2**63 - 1); nothing was recorded."""


class NoSamples(Error):
    """An estimate needs at least one sample."""


class ZeroBins(Error):
    """A number of bins (or max_bins) is below 1."""


class TooManyBins(Error):
    """A number of bins is above tce.MAX_BINS (2**24)."""


class ZeroCapacity(Error):
    """A buffer, window or reservoir needs room for at least one sample."""


class CapacityTooLarge(Error):
    """A capacity is above what the state can index."""


class InvalidHalfLife(Error):
    """A half-life must be a finite number of samples above 0 (within the accepted range)."""


class InvalidShift(Error):
    """A calibration alarm's shift must be finite, above 0 and at most 10 (log-odds)."""


class InvalidThreshold(Error):
    """A calibration alarm's threshold must be finite, above 0 and at most 700 (or a
    target ARL0 does not give such a threshold)."""


class InvalidNorm(Error):
    """The norm exponent p must be finite and at least 1."""


class InvalidOption(Error):
    """A keyword has a value it does not take (binning="foo", shards=0, ...)."""


class MergeMismatch(Error):
    """The states cannot be merged: different bin counts, closures, capacities or half-lives."""


class InvalidWeight(Error):
    """A ``sample_weight`` is negative, NaN or infinite, or the weights sum to 0."""


class DegenerateWeights(Error):
    """A decaying histogram's weights are too small or too large for a finite estimate."""


class DecodeError(Error):
    """Bytes are not a valid portable state of the expected kind; nothing was changed."""


class EncodeError(Error):
    """A state is too large for the portable format."""


class KdeUndefined(Error):
    """The KDE estimate is undefined for this data (no hits, zero bandwidth, ...)."""


class CurveError(Error):
    """A calibration curve's parameters are invalid."""


class FitError(Error):
    """A fit (Beta density, GLM curves, recalibration map) failed."""


class SimulationError(Error):
    """A simulation grid is invalid, or the model's TCE could not be computed."""


class InternalError(Error, RuntimeError):
    """A bug in tce (a Rust panic caught at the boundary); please report it."""


class ReliabilityBins(NamedTuple):
    """Per-bin statistics for a reliability diagram (numpy arrays, one entry per bin).

    ``lower``/``upper``: the bin's edges (equal width) or its smallest and largest score
    (equal mass; NaN when empty); ``count``, ``hits``: samples and hits; ``mean_score``,
    ``accuracy``: NaN for an empty bin, never 0.
    """

    lower: np.ndarray
    upper: np.ndarray
    count: np.ndarray
    hits: np.ndarray
    mean_score: np.ndarray
    accuracy: np.ndarray


def _estimate(value, samples, bins):
    """Unpickles an Estimate."""
    from ._tce import Estimate

    return Estimate(value, samples, bins)
