"""tce: calibration error without the bias of binned ECE.

The estimators of Roelofs et al., "Mitigating Bias in Calibration Error Estimation"
(AISTATS 2022), computed by the Rust library tce::

    import tce
    print(tce.ece_sweep(scores, labels))

Functions over arrays: :func:`ece_bin`, :func:`ece_sweep`, :func:`ece_debias`,
:func:`mce`, :func:`kde_ece`, :func:`smooth_ece`, :func:`reliability_bins`. Monitoring states:
:class:`Histogram`, :class:`SortedBuffer`, :class:`SlidingWindow`, :class:`Reservoir`,
:class:`DecayingHistogram`, :class:`ConcurrentHistogram`, :class:`CalibrationAlarm`. The simulator and fits:
:class:`Model`, :func:`simulate`, :func:`fit`, :func:`fit_recalibration`. The calibration
report (``tce report``): :func:`report`, a :class:`Report`. Is it calibrated?
:func:`calibration_test`, a :class:`CalibrationTest` (``tce test``). Is A better calibrated
than B? :func:`compare`, a :class:`Comparison` (``tce compare``). Which group is
miscalibrated? :func:`by_group` (a pandas DataFrame, one row per group, with adjusted
p-values: :func:`p_adjust`). A reliability diagram: ``tce.plot.reliability`` (matplotlib,
imported when used). Errors: every
one is a :class:`tce.Error` (a ValueError). Documentation: docs/python.md.
"""

from ._py import (
    BufferFull,
    CapacityTooLarge,
    CountOverflow,
    CurveError,
    DecodeError,
    DegenerateWeights,
    EncodeError,
    Error,
    FitError,
    InternalError,
    InvalidHalfLife,
    InvalidShift,
    InvalidThreshold,
    InvalidWeight,
    InvalidLabel,
    InvalidNorm,
    InvalidOption,
    KdeUndefined,
    LengthMismatch,
    MaskedInput,
    MergeMismatch,
    MissingGroup,
    NoSamples,
    NonFiniteScore,
    NotNormalized,
    ReliabilityBins,
    ScoreOutOfRange,
    ShapeMismatch,
    SimulationError,
    TooManyBins,
    UnsupportedDtype,
    ZeroBins,
    ZeroCapacity,
)
from ._tce import *  # noqa: F401,F403  (the extension: functions and classes)
from ._tce import MAX_BINS, MAX_COUNT, __version__  # noqa: F401
from ._groups import by_group  # noqa: F401  (pandas is imported when it is called)
