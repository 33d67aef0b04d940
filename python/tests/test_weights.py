"""``sample_weight`` on ece_bin, mce, ece_debias, ece_sweep, smooth_ece and kde_ece:
against a naive numpy implementation of the weighted definitions (docs/estimators.md,
Weights), integer weights against repeated rows, weights all 1 against the unweighted
call, and bad weights."""

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


# Smooth ECE and KDE (docs/estimators.md, Weights): kernel sums Σw·K.


def naive_smooth_ece_at(f, y, w, sigma):
    """relplot's smECE_σ in numpy with weights: each row spreads w·(f − y) and w onto
    the kernel grid, which is reflected, convolved and interpolated at the mesh."""
    e = max(round(20 / sigma), 2000) // 2 + 1
    t = np.linspace(0, 1, e)
    kernel = np.exp(-((t - 0.5) ** 2) / (2 * sigma**2)) / (math.sqrt(2 * math.pi) * sigma)
    position = f * (e - 1)
    below = np.minimum(np.floor(position).astype(int), e - 2)
    fraction = position - below

    def smoothed(values):
        grid = np.zeros(e)
        np.add.at(grid, below, (1 - fraction) * values)
        np.add.at(grid, below + 1, fraction * values)
        extended = np.concatenate([grid[::-1][:-1], grid, grid[::-1][1:]])
        return np.convolve(extended, kernel, mode="valid")[e // 2 : e // 2 + e]

    mesh = np.linspace(0, 1, max(round(10 / sigma), 200))
    r = np.interp(mesh, t, smoothed(w * (f - y)))
    d = np.interp(mesh, t, smoothed(w)) + 1e-4
    return np.abs(r).sum() / d.sum()


def naive_kde(f, y, w, p):
    """The weighted KDE estimate by direct sums over grid points and mirrored rows."""
    hits = y == 1
    total, hit_weight = w.sum(), w[hits].sum()
    mean = np.sum(w[hits] * f[hits]) / hit_weight
    sd = math.sqrt(np.sum(w[hits] * (f[hits] - mean) ** 2) / hit_weight)
    h = sd * (2 * total) ** -0.2
    grid = np.linspace(-0.6, 1.6, 2**14)
    x = grid[(grid >= 0) & (grid <= 1)]

    def density(points, weights):
        mirrored = np.concatenate([points, np.where(points < 0.5, -points, 2 - points)])
        mw = np.concatenate([weights, weights])
        u = (x[:, None] - mirrored[None, :]) / (3 * h)
        k = np.where(np.abs(u) < 1, 35 / 32 * (1 - u**2) ** 3 / (3 * h), 0.0)
        inside = (x > 0) & (x < 1)
        return np.where(inside, 2 * (k * mw).sum(axis=1) / mw.sum(), 0.0)

    p_all, p_hit = density(f, w), density(f[hits], w[hits])
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.minimum(1.0, hit_weight / total * p_hit / p_all)
        integrand = np.where(p_all > 0, np.abs(x - r) ** p * p_all, 0.0)

    def trapz(v):
        return np.sum(0.5 * np.diff(x) * (v[1:] + v[:-1]))

    return trapz(integrand) / trapz(p_all), h


def smooth_rows():
    return st.lists(
        st.tuples(
            st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0, 1)),
            st.integers(0, 1),
            st.one_of(st.just(0.0), st.floats(0.01, 4)),
        ),
        min_size=2,
        max_size=40,
    )


def columns(rows):
    return (
        np.array([r[0] for r in rows]),
        np.array([r[1] for r in rows], dtype=np.uint8),
        np.array([r[2] for r in rows]),
    )


@settings(max_examples=40, deadline=None)
@given(rows=smooth_rows())
def test_weighted_smooth_ece_is_the_naive_one_at_its_bandwidth(rows):
    f, y, w = columns(rows)
    if w.sum() <= 0:
        return
    got = tce.smooth_ece(f, y, sample_weight=w)
    assert got.samples == int(np.sum(w > 0))
    assert got.value == pytest.approx(naive_smooth_ece_at(f, y, w, got.bandwidth), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(rows=smooth_rows(), p=st.sampled_from([1.0, 2.0]))
def test_weighted_kde_is_the_naive_one(rows, p):
    f, y, w = columns(rows)
    positive = w > 0
    hits = f[positive & (y == 1)]
    if len(hits) == 0 or np.all(hits == hits[0]):
        return
    try:
        got = tce.kde_ece(f, y, norm=p, sample_weight=w)
    except tce.KdeUndefined:
        return  # a bandwidth too small for the grid (tested in Rust)
    raw, h = naive_kde(f, y, w, p)
    assert got.bandwidth == pytest.approx(h, rel=1e-13)
    assert got.raw == pytest.approx(raw, rel=1e-11, abs=1e-300)
    assert got.samples == int(np.sum(positive))


def test_smooth_ece_and_kde_weights_follow_repetition_units_and_zeros():
    rng = np.random.default_rng(11)
    f = np.round(rng.uniform(size=400), 3)
    y = (rng.uniform(size=400) < f**2).astype(np.uint8)
    w = rng.integers(0, 4, size=400)
    for fn in (tce.smooth_ece, tce.kde_ece):
        got, want = fn(f, y, sample_weight=w), fn(np.repeat(f, w), np.repeat(y, w))
        assert got.value == pytest.approx(want.value, abs=1e-12)
        assert got.bandwidth == pytest.approx(want.bandwidth, rel=1e-13)
        # Weights all 1: the unweighted call, bit for bit.
        assert fn(f, y, sample_weight=np.ones(400)).value == fn(f, y).value
        # Weight 0: the row dropped, bit for bit.
        keep = w > 0
        a = fn(f, y, sample_weight=w.astype(float))
        b = fn(f[keep], y[keep], sample_weight=w[keep].astype(float))
        assert (a.value, a.bandwidth) == (b.value, b.bandwidth)
    # The weights matter.
    assert tce.smooth_ece(f, y, sample_weight=w).value != tce.smooth_ece(f, y).value


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
def test_bad_weights_of_smooth_ece_and_kde_are_named_errors(w, cls):
    f, y = np.array([0.2, 0.5, 0.9]), np.array([0, 1, 1])
    for fn in (tce.smooth_ece, tce.kde_ece):
        with pytest.raises(cls):
            fn(f, y, sample_weight=w)


def test_an_invalid_smooth_ece_or_kde_weight_is_quoted():
    for fn in (tce.smooth_ece, tce.kde_ece):
        with pytest.raises(tce.InvalidWeight, match=r"sample_weight at index 1 is -2\.5: negative"):
            fn([0.2, 0.5], [0, 1], sample_weight=[1.0, -2.5])
        with pytest.raises(tce.InvalidWeight, match="sum to 0"):
            fn([0.2, 0.5], [0, 1], sample_weight=[0, 0])
    # KDE hits of weight 0 are no hits.
    with pytest.raises(tce.KdeUndefined, match="no hits"):
        tce.kde_ece([0.2, 0.5, 0.7], [0, 1, 1], sample_weight=[1, 0, 0])


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            # Small integers: ties within rows (the top class) and between rows.
            st.lists(st.integers(0, 6), min_size=3, max_size=3),
            st.integers(0, 2),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=30,
    ),
    which=st.sampled_from(BINNINGS),
    bins=st.integers(1, 10),
    logits=st.booleans(),
)
def test_a_table_with_integer_weights_is_its_rows_repeated(rows, which, bins, logits):
    raw = np.array([r[0] for r in rows], dtype=np.float64)
    p = raw - 3.0 if logits else (raw + 1.0) / (raw + 1.0).sum(axis=1, keepdims=True)
    t = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows])
    if w.sum() == 0:
        return
    binning, closure, ties = which
    kw = dict(binning=binning, closure=closure, ties=ties, logits=logits)
    repeated = (np.repeat(p, w, axis=0), np.repeat(t, w))
    for fn in (tce.ece_bin, tce.mce, tce.ece_debias):
        got = fn(p, t, bins=bins, sample_weight=w, **kw)
        want = fn(*repeated, bins=bins, **kw)
        assert got.value**2 == pytest.approx(want.value**2, abs=1e-11), fn.__name__
        assert got.samples == np.count_nonzero(w)
        assert got.bins == want.bins == bins
    got = tce.ece_sweep(p, t, sample_weight=w, **kw)
    want = tce.ece_sweep(*repeated, **kw)
    assert got.bins == want.bins
    assert got.value == pytest.approx(want.value, abs=1e-12)


def test_a_table_with_weights_by_hand():
    # Top labels (score, correct, weight): (0.7, 1, 2), (0.8, 0, 1), (0.6, 1, 0) dropped,
    # (0.9, 1, 3). Two equal-width bins: all in bin 1, weight 6, mean score
    # (1.4 + 0.8 + 2.7) / 6, accuracy 5/6; ECE_bin = |4.9/6 − 5/6| = 0.1/6.
    p = np.array([[0.7, 0.3], [0.2, 0.8], [0.4, 0.6], [0.1, 0.9]])
    t = np.array([0, 0, 1, 1])
    w = np.array([2.0, 1.0, 0.0, 3.0])
    e = tce.ece_bin(p, t, binning="equal_width", bins=2, sample_weight=w)
    assert e.value == pytest.approx(0.1 / 6, abs=1e-15)
    assert e.samples == 3
    # The same rows as logits (log-probabilities): the same top labels.
    e = tce.ece_bin(np.log(p), t, binning="equal_width", bins=2, sample_weight=w, logits=True)
    assert e.value == pytest.approx(0.1 / 6, abs=1e-12)
    m = tce.mce(p, t, binning="equal_width", bins=2, sample_weight=w)
    assert m.value == pytest.approx(0.1 / 6, abs=1e-15)


@pytest.mark.parametrize(
    "w, cls, match",
    [
        ([1.0, 1.0, 1.0], tce.LengthMismatch, None),
        ([1.0, -1.0, 1.0, 1.0], tce.InvalidWeight, r"sample_weight at index 1 is -1"),
        ([1.0, float("nan"), 1.0, 1.0], tce.InvalidWeight, r"index 1"),
        ([0.0, 0.0, 0.0, 0.0], tce.InvalidWeight, "sum to 0"),
        ([[1.0, 1.0, 1.0, 1.0]], tce.ShapeMismatch, None),
    ],
)
def test_bad_weights_of_a_table_are_named_errors(w, cls, match):
    p = np.array([[0.7, 0.3], [0.2, 0.8], [0.4, 0.6], [0.1, 0.9]])
    t = np.array([0, 0, 1, 1])
    for fn in (tce.ece_bin, tce.mce, tce.ece_debias, tce.ece_sweep):
        with pytest.raises(cls, match=match):
            fn(p, t, sample_weight=w)
    # A bad row of the table is named whatever the weights.
    with pytest.raises(tce.NotNormalized):
        tce.ece_bin([[0.7, 0.7], [0.2, 0.8]], [0, 1], sample_weight=[1, 1])


def _report_rows(r):
    return {e["name"]: e for e in r.estimators}


def test_the_weighted_report_estimates_as_repeated_rows():
    """``tce.report(..., sample_weight=)``: whole weights give each estimate and b* of
    the rows repeated; the report says the rows are weighted and makes no fit or test."""
    rng = np.random.default_rng(4)
    f = rng.uniform(size=300)
    y = (rng.uniform(size=300) < f**2).astype(int)
    w = rng.integers(0, 4, size=300).astype(float)
    r = tce.report(f, y, sample_weight=w, resamples=40, seed=3)
    k = w.astype(int)
    u = tce.report(np.repeat(f, k), np.repeat(y, k), resamples=40, seed=3, test=False,
                   simulations=2)
    got, want = _report_rows(r), _report_rows(u)
    assert set(got) == set(want) and len(got) == 8
    for name, e in got.items():
        assert e["value"] == pytest.approx(want[name]["value"], abs=1e-12), name
        assert e["bins"] == want[name]["bins"], name
        assert e["bootstrap"]["percentile"]["lower"] <= e["bootstrap"]["percentile"]["upper"]
    weights = r.weights
    assert u.weights is None
    assert weights["rows"] == 300
    assert weights["zero_rows"] == int((w == 0).sum())
    assert weights["total"] == w.sum()
    assert weights["effective_n"] == pytest.approx(w.sum() ** 2 / (w**2).sum())
    assert r.calibration_test is None
    assert r.fit is None


def test_the_weighted_report_with_unit_weights_is_the_unweighted_one():
    rng = np.random.default_rng(5)
    f = rng.uniform(size=200)
    y = (rng.uniform(size=200) < f).astype(int)
    r = tce.report(f, y, sample_weight=np.ones(200), resamples=30, seed=1)
    u = tce.report(f, y, resamples=30, seed=1, test=False, simulations=2)
    got, want = _report_rows(r), _report_rows(u)
    for name, e in got.items():
        a, b = e["bootstrap"], want[name]["bootstrap"]
        assert e["value"] == pytest.approx(want[name]["value"], abs=1e-12), name
        assert a["replicates"] == pytest.approx(b["replicates"], abs=1e-12), name


@pytest.mark.parametrize("w, cls", [([1, -1, 1], tce.InvalidWeight),
                                    ([1, float("nan"), 1], tce.InvalidWeight),
                                    ([0, 0, 0], tce.InvalidWeight)])
def test_the_weighted_report_refuses_bad_weights(w, cls):
    with pytest.raises(cls):
        tce.report([0.2, 0.5, 0.9], [0, 1, 1], sample_weight=np.array(w, float), resamples=5)


def test_the_weighted_report_refuses_the_settings_of_parts_it_does_not_make():
    with pytest.raises(tce.InvalidOption, match="sample_weight"):
        tce.report([0.2, 0.5, 0.9], [0, 1, 1], sample_weight=[1, 1, 1], simulations=5)
