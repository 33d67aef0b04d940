"""Reliability diagrams with matplotlib: :func:`reliability`.

matplotlib is imported when a diagram is drawn, not by ``import tce`` or ``import
tce.plot``; it is the extra ``tce-calibration[plot]``. Every plotted number comes from the
Rust library: the bins from :func:`tce.reliability_bins` (or a :class:`tce.Report`'s own
diagrams), b* from :func:`tce.ece_sweep`, the Wilson intervals from the function the
report uses (``tce::report::wilson``). This module only draws them.
"""

from __future__ import annotations

import numpy as np

from . import _tce
from ._py import InvalidOption

__all__ = ["reliability"]

#: The ``gid`` of the artists that carry the bins, for code (and tests) that read a drawn
#: diagram back: the line of (mean score, accuracy) points, and the count bars.
BINS_GID = "tce-bins"
COUNTS_GID = "tce-counts"


def _matplotlib():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError(
            "tce.plot.reliability draws with matplotlib, which is not installed: "
            "pip install 'tce-calibration[plot]'"
        ) from e
    return plt


def _bins_of_report(report, binning):
    """(mean_score, accuracy, count, lower, upper, edges=None, bins) of a report's
    diagram: its own bins and Wilson intervals, as ``tce report`` draws them."""
    if report.classwise:
        raise InvalidOption("a classwise report has a diagram per class: pass the class's "
                            "scores and labels instead")
    for diagram in report.reliability:
        if diagram["binning"] == binning:
            bins = diagram["bins"]
            nan = float("nan")
            mean = np.array([nan if b["mean_score"] is None else b["mean_score"] for b in bins])
            acc = np.array([nan if b["accuracy"] is None else b["accuracy"] for b in bins])
            count = np.array([b["count"] for b in bins], dtype=np.int64)
            lo = np.array([nan if b["interval"] is None else b["interval"]["lower"]
                           for b in bins])
            hi = np.array([nan if b["interval"] is None else b["interval"]["upper"]
                           for b in bins])
            return mean, acc, count, lo, hi, None, len(bins)
    raise InvalidOption(f"the report has no {binning} diagram")


def reliability(
    scores,
    labels=None,
    *,
    binning="equal_mass",
    bins=None,
    level=0.95,
    norm=2.0,
    closure="left",
    ties="split",
    logits=False,
    ax=None,
    counts=True,
    diagonal=True,
):
    """Draws a reliability diagram and returns its matplotlib Axes (``ax.figure`` is the
    Figure).

    ``scores``, ``labels``: the inputs of :func:`tce.reliability_bins` (confidences with
    0/1 labels, or an N×K table with class ids, ``logits=True`` for logits); or a
    :class:`tce.Report` as ``scores`` (no labels), whose own diagrams are drawn.

    The report's conventions: ``binning="equal_mass"`` with ``bins=None`` uses b*, the bin
    count of the equal-mass sweep (``tce.ece_sweep(..., binning="equal_mass")``, with
    ``norm`` and ``ties``), as ``tce report`` does; ``binning="equal_width"`` with
    ``bins=None`` uses 15 bins (``closure``). Each non-empty bin is a point at (mean score,
    accuracy) with the Wilson score interval of its accuracy at ``level`` as an error bar;
    ``counts=True`` draws the bins' sample counts as bars on a second axis (right); the
    diagonal is perfect calibration. ``ax``: draw into these Axes (else a new figure).
    Empty bins are not drawn.
    """
    if binning not in ("equal_mass", "equal_width"):
        raise InvalidOption(f'binning must be "equal_mass" or "equal_width", not {binning!r}')
    if labels is None:
        if not isinstance(scores, _tce.Report):
            raise InvalidOption("labels are needed, unless scores is a tce.Report")
        if bins is not None:
            raise InvalidOption("a report's diagrams have their own bins: bins must be None")
        mean, acc, count, lo, hi, edges, nbins = _bins_of_report(scores, binning)
        title = f"{binning.replace('_', ' ')}, {nbins} bins (the report's)"
    else:
        starred = bins is None and binning == "equal_mass"
        if bins is None:
            bins = (_tce.ece_sweep(scores, labels, binning="equal_mass", norm=norm, ties=ties,
                                   logits=logits).bins
                    if binning == "equal_mass" else 15)
        keywords = dict(closure=closure) if binning == "equal_width" else dict(ties=ties)
        rel = _tce.reliability_bins(scores, labels, binning=binning, bins=bins,
                                    logits=logits, **keywords)
        mean, acc, count = rel.mean_score, rel.accuracy, rel.count
        lo, hi = _tce._wilson_intervals(rel.hits.tolist(), rel.count.tolist(), level)
        edges = (rel.lower, rel.upper)
        title = f"{binning.replace('_', ' ')}, {bins} bins" + (" (b*)" if starred else "")

    plt = _matplotlib()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    full = count > 0
    x, y = mean[full], acc[full]
    # A Wilson end can miss the accuracy by a rounding (an upper end of 1 - 1e-16 for a
    # bin of all hits); matplotlib refuses negative error lengths.
    yerr = np.maximum(np.vstack([y - lo[full], hi[full] - y]), 0.0)
    if diagonal:
        ax.plot([0, 1], [0, 1], linestyle="--", color="0.6", linewidth=1,
                label="perfect calibration")
    container = ax.errorbar(x, y, yerr=yerr, fmt="o-", color="C0", ecolor="C0", capsize=3,
                            markersize=4, label=f"accuracy, {level:.0%} Wilson interval")
    container.lines[0].set_gid(BINS_GID)
    if counts:
        twin = ax.twinx()
        if edges is not None:
            left, right = edges[0][full], edges[1][full]
            widths = np.maximum(right - left, 0.004)
            centres = (left + right) / 2
        else:
            centres, widths = x, np.full(len(x), 0.02)
        bars = twin.bar(centres, count[full], width=widths, color="C1", alpha=0.25,
                        label="samples")
        for b in bars:
            b.set_gid(COUNTS_GID)
        # The bars take the lower quarter of the plot, under the points.
        twin.set_ylim(0, max(int(count.max()), 1) * 4)
        twin.set_ylabel("samples per bin")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("mean confidence in the bin")
    ax.set_ylabel("accuracy in the bin")
    ax.set_title(f"Reliability: {title}")
    ax.legend(loc="upper left", fontsize="small")
    return ax
