"""``sample_weight`` on ece_bin, mce and ece_debias: against a naive numpy implementation
of the weighted definitions (docs/estimators.md, Weights), integer weights against
repeated rows, weights all 1 against the unweighted call, and bad weights."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tce

BINNINGS = [
    ("equal_width", "left", "split"),
    ("equal_width", "right", "split"),
    ("equal_mass", "left", "split"),
    ("equal_mass", "left", "keep"),
]


def naive_bins(f, y, w, binning, closure, ties, bins):
    """(W_k, Σw·y, Σw·f) per bin, one row (or one unit of weight) at a time."""
    out = np.zeros((bins, 3))
    keep = [i for i in range(len(f)) if w[i] > 0]
    if binning == "equal_width":
        for i in keep:
            if closure == "left":
                k = min(bins - 1, math.floor(f[i] * bins))
            else:
                k = max(0, math.ceil(f[i] * bins) - 1)
            out[k] += (w[i], w[i] * y[i], w[i] * f[i])
        return out
    order = sorted(keep, key=lambda i: f[i])  # stable: ties in arrival order
    total = sum(w[i] for i in order)

    def bin_of(start):
        return max(k for k in range(bins) if k * total <= start * bins)

    before, group_start = 0.0, 0.0
    for j, i in enumerate(order):
        if ties == "keep":
            if j == 0 or f[order[j - 1]] != f[i]:
                group_start = before
            out[bin_of(group_start)] += (w[i], w[i] * y[i], w[i] * f[i])
        else:
            m = 0.0
            while m < w[i]:
                part = min(1.0, w[i] - m)
                out[bin_of(before + m)] += (part, part * y[i], part * f[i])
                m += 1.0
        before += w[i]
    return out


def naive(f, y, w, binning, closure, ties, bins, p):
    b = naive_bins(f, y, w, binning, closure, ties, bins)
    b = b[b[:, 0] > 0]
    total = b[:, 0].sum()
    gap = b[:, 2] / b[:, 0] - b[:, 1] / b[:, 0]
    ece = (np.sum(b[:, 0] / total * np.abs(gap) ** p)) ** (1 / p)
    mce = np.abs(gap).max()
    n, acc = b[:, 0], b[:, 1] / b[:, 0]
    ok = n >= 2
    s = np.sum((n / total * (gap**2 - acc * (1 - acc) / np.where(ok, n - 1, 1)))[ok])
    return ece, mce, math.sqrt(max(s, 0.0))


def weighted(f, y, w, binning, closure, ties, bins, p=2.0):
    kw = dict(binning=binning, closure=closure, ties=ties, bins=bins, sample_weight=w)
    return (
        tce.ece_bin(f, y, norm=p, **kw).value,
        tce.mce(f, y, **kw).value,
        tce.ece_debias(f, y, **kw).value,
    )


def unweighted(f, y, binning, closure, ties, bins, p=2.0):
    kw = dict(binning=binning, closure=closure, ties=ties, bins=bins)
    return (
        tce.ece_bin(f, y, norm=p, **kw).value,
        tce.mce(f, y, **kw).value,
        tce.ece_debias(f, y, **kw).value,
    )


def test_a_hand_computed_example():
    f = np.array([0.2, 0.4, 0.8, 0.9])
    y = np.array([0, 1, 1, 0])
    w = np.array([1.0, 3.0, 2.0, 0.0])
    e = tce.ece_bin(f, y, binning="equal_width", bins=2, norm=1, sample_weight=w)
    # Bin 0: gap |0.35 − 0.75| = 0.4 with W 4; bin 1: |0.8 − 1| = 0.2 with W 2.
    assert e.value == pytest.approx((4 * 0.4 + 2 * 0.2) / 6, abs=1e-15)
    assert e.samples == 3  # rows with positive weight
    d = tce.ece_debias(f, y, binning="equal_width", bins=2, sample_weight=w)
    assert d.value == pytest.approx(math.sqrt((4 * 0.0975 + 2 * 0.04) / 6), abs=1e-15)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.one_of(st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0]), st.floats(0, 1)),
            st.integers(0, 1),
            # Normal floats: a subnormal weight's products w·f keep few bits (the
            # library and this naive form then round differently).
            st.one_of(st.just(0.0), st.floats(1e-300, 5)),
        ),
        min_size=1,
        max_size=50,
    ),
    which=st.sampled_from(BINNINGS),
    bins=st.integers(1, 16),
)
def test_equals_the_naive_weighted_implementation(rows, which, bins):
    f = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows], dtype=np.uint8)
    w = np.array([r[2] for r in rows])
    if w.sum() <= 0:
        return
    got = weighted(f, y, w, *which, bins)
    want = naive(f, y, w, *which, bins, 2.0)
    assert got[0] == pytest.approx(want[0], abs=1e-12)
    assert got[1] == pytest.approx(want[1], abs=1e-12)
    assert got[2] ** 2 == pytest.approx(want[2] ** 2, abs=1e-11)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.one_of(st.sampled_from([0.0, 0.5, 0.9, 1.0]), st.floats(0, 1)),
            st.integers(0, 1),
            st.integers(0, 4),
        ),
        min_size=1,
        max_size=40,
    ),
    which=st.sampled_from(BINNINGS),
    bins=st.integers(1, 12),
)
def test_integer_weights_equal_repeated_rows(rows, which, bins):
    f = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows], dtype=np.uint8)
    w = np.array([r[2] for r in rows])
    if w.sum() == 0:
        return
    got = weighted(f, y, w, *which, bins)
    want = unweighted(np.repeat(f, w), np.repeat(y, w), *which, bins)
    assert got[0] == pytest.approx(want[0], abs=1e-12)
    assert got[1] == pytest.approx(want[1], abs=1e-12)
    assert got[2] ** 2 == pytest.approx(want[2] ** 2, abs=1e-11)
    # Integer dtypes are read as weights too.
    assert weighted(f, y, w.astype(np.int64), *which, bins) == got


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.one_of(st.sampled_from([0.0, 0.5, 0.9, 1.0]), st.floats(0, 1)),
            st.integers(0, 1),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=30,
    ),
    which=st.sampled_from(BINNINGS),
)
def test_the_sweep_of_integer_weights_is_that_of_repeated_rows(rows, which):
    f = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows], dtype=np.uint8)
    w = np.array([r[2] for r in rows])
    if w.sum() == 0:
        return
    binning, closure, ties = which
    kw = dict(binning=binning, closure=closure, ties=ties)
    got = tce.ece_sweep(f, y, sample_weight=w, **kw)
    want = tce.ece_sweep(np.repeat(f, w), np.repeat(y, w), **kw)
    assert got.bins == want.bins
    assert got.value == pytest.approx(want.value, abs=1e-12)


@pytest.mark.parametrize("which", BINNINGS)
def test_unit_weights_are_the_unweighted_estimate(which):
    rng = np.random.default_rng(7)
    f = np.round(rng.uniform(size=500), 2)  # ties
    y = (rng.uniform(size=500) < f).astype(np.uint8)
    got = weighted(f, y, np.ones(500), *which, 15)
    want = unweighted(f, y, *which, 15)
    assert got == pytest.approx(want, abs=1e-12)
    binning, closure, ties = which
    kw = dict(binning=binning, closure=closure, ties=ties)
    a = tce.ece_sweep(f, y, sample_weight=np.ones(500), **kw)
    b = tce.ece_sweep(f, y, **kw)
    assert (a.bins, a.value) == (b.bins, pytest.approx(b.value, abs=1e-12))


@pytest.mark.parametrize(
    "w, cls",
    [
        ([1.0, -1.0, 1.0], tce.InvalidWeight),
        ([1.0, float("nan"), 1.0], tce.InvalidWeight),
        ([float("inf"), 1.0, 1.0], tce.InvalidWeight),
        ([0.0, 0.0, 0.0], tce.InvalidWeight),
        ([1.0, 1.0], tce.LengthMismatch),
        ([[1.0, 1.0, 1.0]], tce.ShapeMismatch),
        (["a", "b", "c"], tce.UnsupportedDtype),
    ],
)
def test_bad_weights_are_named_errors(w, cls):
    f, y = np.array([0.2, 0.5, 0.9]), np.array([0, 1, 1])
    for fn in (tce.ece_bin, tce.mce, tce.ece_debias, tce.ece_sweep):
        with pytest.raises(cls):
            fn(f, y, sample_weight=w)
    assert issubclass(tce.InvalidWeight, tce.Error)


def test_an_invalid_weight_is_quoted():
    with pytest.raises(tce.InvalidWeight, match=r"sample_weight at index 1 is -2\.5: negative"):
        tce.ece_bin([0.2, 0.5], [0, 1], sample_weight=[1.0, -2.5])
    with pytest.raises(tce.InvalidWeight, match="sum to 0"):
        tce.ece_sweep([0.2, 0.5], [0, 1], sample_weight=[0, 0])


def test_weights_with_a_probability_table():
    # Weights go with the rows of a table, after its top-label reduction.
    p = np.array([[0.7, 0.3], [0.2, 0.8], [0.4, 0.6], [0.9, 0.1]])
    t = np.array([0, 0, 1, 0])
    w = np.array([2, 1, 0, 3])
    got = tce.ece_bin(p, t, bins=2, binning="equal_width", sample_weight=w).value
    want = tce.ece_bin(np.repeat(p, w, axis=0), np.repeat(t, w), bins=2, binning="equal_width").value
    assert got == pytest.approx(want, abs=1e-12)
