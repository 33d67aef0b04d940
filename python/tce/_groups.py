"""``tce.by_group``: which slice of the data is miscalibrated?

One row per group with the estimate, its bootstrap interval, the calibration test's
p-value and the p-values adjusted for testing every group at once. Every number comes
from the Rust library: the estimate and its interval from the report's bootstrap
(``tce._tce._estimator_interval``, the row ``tce.report`` gives that estimator), the
p-value from :func:`tce.calibration_test`, the adjustment from :func:`tce.p_adjust`. This
module only splits the rows into groups and assembles the table. pandas is imported when
``by_group`` is called (it returns a DataFrame), not by ``import tce``.
"""

from __future__ import annotations

import numpy as np

from . import _tce
from ._py import Error, LengthMismatch, MaskedInput, MissingGroup, NoSamples

#: The default smallest group for which a row is tested (``min_samples``): below it a
#: group's bootstrap interval and test rest on too few samples to mean much (the
#: equal-mass sweep has at most n bins, the test's p-value at most a few distinct values),
#: so the row is flagged and left out of the multiple-testing family.
MIN_SAMPLES = 30

_COLUMNS = ["n", "hits", "estimate", "lower", "upper", "interval_kind", "statistic",
            "p_value", "p_adjusted", "reject", "flag", "reason"]


def _pandas():
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "tce.by_group returns a pandas DataFrame and needs pandas: "
            "pip install 'tce-calibration[pandas]'"
        ) from e
    return pd


def _column(data, name):
    if data is not None and isinstance(name, str):
        return data[name]
    return name


def _array(x, what):
    # A masked array's mask would be lost by the conversion (numpy keeps the values under
    # it): refused, as the functions over arrays refuse it.
    if isinstance(x, np.ma.MaskedArray):
        raise MaskedInput(
            f"{what} is a numpy masked array: tce does not drop or fill masked elements; "
            "pass a.compressed() (the labels compressed alike) or a.filled(value)")
    return np.asarray(x)


def _group_frame(pd, groups, data, rows):
    """The group keys as a DataFrame of one or more columns, checked."""
    if data is not None and isinstance(groups, (list, tuple)) and groups and all(
            isinstance(g, str) for g in groups):
        frame = data[list(groups)]
    else:
        groups = _column(data, groups)
        if isinstance(groups, pd.DataFrame):
            frame = groups
        elif isinstance(groups, pd.Series):
            frame = groups.to_frame(name="group" if groups.name is None else groups.name)
        else:
            values = _array(groups, "groups")
            if values.ndim != 1:
                raise LengthMismatch(
                    f"groups must be one key per row (a vector, a Series or a DataFrame "
                    f"of group columns), not an array of {values.ndim} dimensions")
            frame = pd.DataFrame({"group": values})
    frame = frame.reset_index(drop=True)
    if len(frame) != rows:
        raise LengthMismatch(f"{len(frame)} group keys for {rows} rows of scores and labels")
    missing = frame.isna().any(axis=1).to_numpy()
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        raise MissingGroup(
            f"group key at index {first} is missing ({frame.iloc[first].tolist()!r}), and "
            f"{int(missing.sum())} in all: tce.by_group does not drop rows; fill them "
            "first (groups.fillna('unknown'))")
    return frame


def _undefined(row, reason):
    row["flag"] = True
    row["reason"] = reason if row["reason"] is None else f"{row['reason']}; {reason}"


def by_group(
    scores,
    labels,
    groups,
    *,
    data=None,
    estimator="ece_sweep:equal_mass",
    bins=15,
    norm=2.0,
    max_bins=None,
    paper_limit=False,
    resamples=1000,
    level=0.95,
    test=True,
    test_statistic="auto",
    test_resamples=None,
    test_power_simulations=None,
    alpha=0.05,
    p_adjust="holm",
    min_samples=MIN_SAMPLES,
    seed=0,
    logits=False,
):
    """Calibration per group: which slice of the data is miscalibrated?

    ``scores``, ``labels``: confidences with 0/1 labels, or an N×K table of class
    probabilities (``logits=True``: logits) with class ids, reduced to the top label, as
    numpy arrays, pandas Series/DataFrames or, with ``data=`` a DataFrame, column names
    (``scores`` may be a list of K column names). ``groups``: one key per row (a vector,
    a Series, a DataFrame of several group columns, or column names of ``data``). A
    missing key (None, NaN) is ``MissingGroup``; lengths that differ are
    ``LengthMismatch``.

    Returns a pandas DataFrame, one row per group (sorted by key): the group columns,
    then ``n``, ``hits``, ``estimate`` (``estimator``, canonical name, the report's
    default ``"ece_sweep:equal_mass"``), ``lower``/``upper`` (its bootstrap interval at
    ``level`` from ``resamples`` resamples: BCa when defined, else percentile, as
    ``interval_kind`` says), ``statistic`` and ``p_value`` (the calibration test,
    ``test_statistic`` ``"auto"`` or a name), ``p_adjusted`` (``p_adjust="holm"``, ``"bh"``
    or None) and ``reject`` (``p_adjusted <= alpha``, or ``p_value <= alpha`` with
    ``p_adjust=None``), ``flag`` and ``reason``. No group is dropped: a group of fewer
    than ``min_samples`` rows, with one class of labels, or whose interval or test is
    undefined is flagged with the reason, keeps every number that is defined, and is left
    out of the adjustment (its ``p_adjusted`` is NaN, its ``reject`` missing).

    Seeds: every group is computed with the same ``seed``, so a group's row equals the
    single calls on its rows alone: ``tce.report(s, y, seed=seed, resamples=resamples,
    ...)``'s row of that estimator and ``tce.calibration_test(s, y, seed=seed, ...)``.
    """
    pd = _pandas()
    options = _options(estimator=estimator, bins=bins, norm=norm, max_bins=max_bins,
                       paper_limit=paper_limit, resamples=resamples, level=level, test=test,
                       test_statistic=test_statistic, test_resamples=test_resamples,
                       test_power_simulations=test_power_simulations, alpha=alpha,
                       p_adjust=p_adjust, min_samples=min_samples, seed=seed, logits=logits)
    if data is not None and isinstance(scores, (list, tuple)) and scores and all(
            isinstance(c, str) for c in scores):
        scores = data[list(scores)]
    s = _array(_column(data, scores), "scores")
    y = _array(_column(data, labels), "labels")
    rows = s.shape[0] if s.ndim >= 1 else 0
    if y.ndim == 1 and len(y) != rows:
        raise LengthMismatch(f"{rows} rows of scores and {len(y)} labels")
    frame = _group_frame(pd, groups, data, rows)
    # Every input error (a bad score, label or table row) named at its index in the whole
    # input, before any group runs: one equal-width pass of the core over every row.
    _tce.reliability_bins(s, y, binning="equal_width", bins=1, logits=logits)

    keys = list(frame.columns)
    out = []
    # A list of keys: pandas gives each key as a tuple, one value per group column.
    for key, members in frame.groupby(keys, sort=True):
        index = members.index.to_numpy()
        row = dict(zip(keys, key))
        row.update(group_row(s[index], y[index], options))
        out.append(row)
    return finish(pd, out, keys, options)


def _options(*, estimator, bins, norm, max_bins, paper_limit, resamples, level, test,
             test_statistic, test_resamples, test_power_simulations, alpha, p_adjust,
             min_samples, seed, logits):
    """The checked options of a by-group computation (``tce.spark`` uses them too): every
    bad option fails here, once, before any group runs."""
    if p_adjust not in ("holm", "bh", None):
        raise _option(f'p_adjust must be "holm", "bh" or None, not {p_adjust!r}')
    if not 0.0 < alpha < 1.0:
        raise _option(f"alpha must be in (0, 1), got {alpha}")
    if isinstance(min_samples, bool) or not isinstance(min_samples, (int, np.integer)) \
            or min_samples < 1:
        raise _option(f"min_samples must be an integer of at least 1, got {min_samples!r}")
    estimate = dict(estimator=estimator, bins=bins, norm=norm, max_bins=max_bins,
                    paper_limit=paper_limit, resamples=resamples, level=level, seed=seed,
                    logits=logits)
    checks = dict(statistic=test_statistic, alpha=alpha, seed=seed, bins=bins, norm=norm,
                  max_bins=max_bins, paper_limit=paper_limit, logits=logits)
    if test_resamples is not None:
        checks["resamples"] = test_resamples
    if test_power_simulations is not None:
        checks["power_simulations"] = test_power_simulations
    # The estimator checks its options before it reads any sample (NoSamples with none);
    # its canonical name comes from a run on four samples where every estimator is defined.
    try:
        _tce._estimator_interval(np.empty(0), np.empty(0, np.uint8),
                                 **dict(estimate, logits=False))
    except NoSamples:
        pass
    name = _tce._estimator_interval(np.array([0.2, 0.4, 0.6, 0.8]), np.array([0, 1, 1, 0]),
                                    **dict(estimate, logits=False, resamples=0))["estimator"]
    if test:
        # The test checks its options before it reads any sample: with none, good options
        # end in NoSamples at once, bad ones in their own error.
        try:
            _tce.calibration_test(np.empty(0), np.empty(0, np.uint8),
                                  **dict(checks, logits=False))
        except NoSamples:
            pass
    return dict(estimate=estimate, test=checks if test else None, min_samples=min_samples,
                alpha=alpha, p_adjust=p_adjust, attrs=dict(
                    estimator=name, level=level, resamples=resamples, alpha=alpha,
                    p_adjust=p_adjust, seed=seed, min_samples=min_samples))


def group_row(scores, labels, options):
    """One group's columns from its samples: ``n``, ``hits``, the estimate and its
    interval, the test's statistic and p-value, ``flag`` and ``reason``."""
    logits = options["estimate"]["logits"]
    counts = _tce.reliability_bins(scores, labels, binning="equal_width", bins=1,
                                   logits=logits)
    n, hits = int(counts.count[0]), int(counts.hits[0])
    row = dict(n=n, hits=hits, estimate=np.nan, lower=np.nan, upper=np.nan,
               interval_kind=None, statistic=None, p_value=np.nan, flag=False, reason=None)
    min_samples = options["min_samples"]
    if n < min_samples:
        _undefined(row, f"n = {n} < min_samples = {min_samples}")
    if hits in (0, n):
        _undefined(row, f"one class of labels (every label is {int(hits == n)}): "
                        "the interval and the test see no label noise")
    try:
        e = _tce._estimator_interval(scores, labels, **options["estimate"])
    except Error as err:
        # The options were checked before any group ran: what fails here is the
        # estimator on these samples (KDE without a hit, say).
        e = None
        _undefined(row, f"no estimate: {type(err).__name__}: {err}")
    if e is not None:
        row["estimate"] = e["value"]
        if e["lower"] is not None:
            row.update(lower=e["lower"], upper=e["upper"], interval_kind=e["interval_kind"])
        elif options["estimate"]["resamples"] > 0:
            _undefined(row, f"no interval: {e['interval_error']}")
    if options["test"] is not None:
        t = _tce.calibration_test(scores, labels, **options["test"])
        row["statistic"] = t.statistic
        if t.p_value is None:
            _undefined(row, f"test undefined: {t.statistic} has no p-value here")
        else:
            row["p_value"] = t.p_value
    return row


#: The estimators a histogram's bins determine (over its own bins and closure), and the
#: interval and test it allows; every other estimator needs samples.
HISTOGRAM_ESTIMATORS = ("ece_bin:equal_width", "ece_debias:equal_width", "mce:equal_width")
HISTOGRAM_INTERVAL = "clopper_pearson_box"
HISTOGRAM_TEST = "hosmer_lemeshow:equal_width"
_SAMPLE_STATES = ("SortedBuffer", "Reservoir", "SlidingWindow")


def state_allows(state):
    """What a merged state allows, as ``state_row``'s ``allows`` column says it."""
    kind = type(state).__name__
    if kind in _SAMPLE_STATES:
        return "every estimator, bootstrap interval, every test (it holds samples)"
    if kind == "Histogram":
        return (f"{', '.join(HISTOGRAM_ESTIMATORS)} over its {state.bins} bins; "
                f"interval {HISTOGRAM_INTERVAL}; test {HISTOGRAM_TEST}")
    return f"{', '.join(HISTOGRAM_ESTIMATORS)} over its {state.bins} bins, point estimates only"


def state_row(state, options):
    """One group's columns from its merged state (``tce.spark.by_group_from_states``):
    a state that holds samples (sorted buffer, reservoir, window) gives ``group_row``'s
    columns over them; a histogram gives what its bins determine (the estimate over its
    own bins, the Clopper–Pearson box interval, Hosmer–Lemeshow over its bins); a
    decaying histogram, decayed weights, only the estimate. Also ``sample_n`` (the
    samples the row is over; None for bins), ``allows`` and ``n``, the samples the
    group's devices saw."""
    kind = type(state).__name__
    if kind in _SAMPLE_STATES:
        s, y = state.samples()
        row = group_row(s, y, options)
        row["sample_n"] = row["n"]
        row["n"] = getattr(state, "seen", row["n"])
    else:
        row = _bins_row(state, options)
        row["sample_n"] = None
    row["allows"] = state_allows(state)
    return row


def _bins_row(state, options):
    """The columns a histogram's bins determine (a decaying histogram's: the estimate)."""
    name = options["attrs"]["estimator"]
    level, norm = options["attrs"]["level"], options["estimate"]["norm"]
    decaying = type(state).__name__ != "Histogram"
    row = dict(n=state.samples, hits=None, estimate=np.nan, lower=np.nan, upper=np.nan,
               interval_kind=None, statistic=None, p_value=np.nan, flag=False, reason=None)
    what = ("a decaying histogram holds decayed per-bin weights" if decaying else
            "a histogram holds per-bin counts, hits and score sums")
    if not decaying:
        row["hits"] = int(state.reliability_bins().hits.sum())
        n, hits = row["n"], row["hits"]
        if n < options["min_samples"]:
            _undefined(row, f"n = {n} < min_samples = {options['min_samples']}")
        if n > 0 and hits in (0, n):
            _undefined(row, f"one class of labels (every label is {int(hits == n)}): "
                            "the interval and the test see no label noise")
    if row["n"] == 0:
        _undefined(row, "no samples")
        return row
    if name not in HISTOGRAM_ESTIMATORS:
        _undefined(row, f"{name} needs samples: {what} (it allows "
                        f"{', '.join(HISTOGRAM_ESTIMATORS)})")
    else:
        kind = name.split(":")[0]
        try:
            e = state.mce() if kind == "mce" else getattr(state, kind)(norm=norm)
            row["estimate"] = e.value
        except Error as err:
            _undefined(row, f"no estimate: {type(err).__name__}: {err}")
        if decaying:
            _undefined(row, f"no interval: {what}, not counts")
        else:
            row["lower"], row["upper"] = state.binned_interval(norm=norm, level=level,
                                                               mce=kind == "mce")
            row["interval_kind"] = HISTOGRAM_INTERVAL
    if options["test"] is not None:
        chosen = options["test"]["statistic"]
        if decaying:
            _undefined(row, f"no test: {what}, not counts")
        elif chosen not in ("auto", "hosmer_lemeshow", HISTOGRAM_TEST):
            _undefined(row, f"test statistic {chosen} needs samples: {what} (it allows "
                            f"{HISTOGRAM_TEST})")
        else:
            row["statistic"] = HISTOGRAM_TEST
            try:
                _, _, row["p_value"] = state.hosmer_lemeshow()
            except Error as err:
                _undefined(row, f"test undefined: {err}")
    return row


def finish(pd, rows, keys, options, extra=()):
    """The table of the groups' rows (sorted by the caller), with the adjusted p-values:
    the family is every unflagged group with a p-value."""
    table = pd.DataFrame(rows, columns=list(keys) + list(extra) + [
        c for c in _COLUMNS if c not in ("p_adjusted", "reject")])
    family = (~table["flag"].astype(bool) & table["p_value"].notna()).to_numpy()
    p = table["p_value"].to_numpy(dtype=float)
    adjusted = np.full(len(table), np.nan)
    if family.any():
        method = options["p_adjust"]
        adjusted[family] = (p[family] if method is None
                            else _tce.p_adjust(p[family], method=method))
    table["p_adjusted"] = adjusted
    reject = pd.array([None] * len(table), dtype="boolean")
    reject[family] = adjusted[family] <= options["alpha"]
    table["reject"] = reject
    table = table[list(keys) + list(extra) + _COLUMNS]
    table.attrs.update(options["attrs"])
    return table


def _option(message):
    from ._py import InvalidOption

    return InvalidOption(message)
