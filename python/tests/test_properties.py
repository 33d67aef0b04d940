"""Hypothesis: the estimators against a naive numpy implementation written here from
SPEC §3–§5 (loops over bins, no shared code with the core)."""

import numpy as np
from hypothesis import given, settings, strategies as st

import tce
from conftest import assert_debias_close

TOLERANCE = 1e-12  # the core sums scores in exact fixed point; numpy in float


def equal_width_index(s, bins, closure):
    if closure == "left":
        return np.minimum(bins - 1, np.floor(s * bins)).astype(int)
    return np.maximum(0, np.ceil(s * bins) - 1).astype(int)


def equal_mass_index(s, bins, ties):
    n = len(s)
    order = np.argsort(s, kind="stable")
    index = np.empty(n, dtype=int)
    index[order] = (np.arange(n) * bins) // n
    if ties == "keep":  # each edge inside a group of equal scores moves to the group's end
        sorted_s, sorted_k = s[order], index[order].copy()
        for j in range(1, n):
            if sorted_s[j] == sorted_s[j - 1]:
                sorted_k[j] = sorted_k[j - 1]
        index[order] = sorted_k
    return index


def bin_stats(s, y, index, bins):
    count = np.bincount(index, minlength=bins)
    hits = np.bincount(index, weights=y, minlength=bins)
    total = np.bincount(index, weights=s, minlength=bins)
    return count, hits, total


def naive(s, y, bins, p, binning, closure="left", ties="split"):
    index = (equal_width_index(s, bins, closure) if binning == "equal_width"
             else equal_mass_index(s, bins, ties))
    count, hits, total = bin_stats(s, y, index, bins)
    full = count > 0
    gap = np.abs(total[full] / count[full] - hits[full] / count[full])
    weight = count[full] / len(s)
    ece = np.sum(weight * gap ** p) ** (1 / p)
    mce = gap.max()
    two = count >= 2
    f, a = total[two] / count[two], hits[two] / count[two]
    debias = np.sum(count[two] / len(s) * ((f - a) ** 2 - a * (1 - a) / (count[two] - 1)))
    return ece, mce, np.sqrt(max(debias, 0.0)), count, hits


def grouping(s, bins, binning):
    """Which samples share a bin, empty bins aside: each sample's rank among the
    non-empty bins."""
    index = (equal_width_index(s, bins, "left") if binning == "equal_width"
             else equal_mass_index(s, bins, "split"))
    return tuple(np.unique(index, return_inverse=True)[1])


def naive_sweep(s, y, p, binning, limit):
    best = 1
    for b in range(2, limit + 1):
        _, _, _, count, hits = naive(s, y, b, p, binning)
        full = count > 0
        c, h = count[full], hits[full]
        # h_k / c_k non-decreasing, compared exactly in integers
        if any(h[k + 1] * c[k] < h[k] * c[k + 1] for k in range(len(c) - 1)):
            break
        best = b
    else:
        # No b failed: the smallest b that groups the samples as the limit does (the
        # same estimate; 1 for a constant score), as docs/estimators.md defines b*.
        final = grouping(s, limit, binning)
        best = next(b for b in range(1, limit + 1) if grouping(s, b, binning) == final)
    return naive(s, y, best, p, binning)[0], best


samples = st.integers(min_value=1, max_value=60).flatmap(lambda n: st.tuples(
    st.lists(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5, 1.0, 0.2])),
             min_size=n, max_size=n),
    st.lists(st.integers(0, 1), min_size=n, max_size=n)))


@settings(max_examples=300, deadline=None)
@given(samples, st.integers(1, 20), st.sampled_from([1.0, 2.0, 3.0]),
       st.sampled_from(["left", "right"]), st.sampled_from(["split", "keep"]))
def test_binned_estimators_against_numpy(data, bins, p, closure, ties):
    s, y = np.array(data[0]), np.array(data[1], dtype=np.uint8)
    for binning in ("equal_width", "equal_mass"):
        ece, mce, debias, count, hits = naive(s, y, bins, p, binning, closure, ties)
        kw = dict(binning=binning, bins=bins, closure=closure, ties=ties)
        e = tce.ece_bin(s, y, norm=p, **kw)
        assert abs(e.value - ece) < TOLERANCE and e.bins == bins and e.samples == len(s)
        assert abs(tce.mce(s, y, **kw).value - mce) < TOLERANCE
        if p == 2.0:
            assert_debias_close(tce.ece_debias(s, y, **kw).value, debias)
        r = tce.reliability_bins(s, y, **kw)
        np.testing.assert_array_equal(r.count, count)
        np.testing.assert_array_equal(r.hits, hits)


@settings(max_examples=200, deadline=None)
@given(samples, st.sampled_from([1.0, 2.0]), st.sampled_from(["samples", "paper_code"]))
def test_sweep_against_numpy(data, p, sweep_limit):
    s, y = np.array(data[0]), np.array(data[1], dtype=np.uint8)
    limit = max(1, len(s) - (sweep_limit == "paper_code"))
    for binning in ("equal_mass", "equal_width"):
        value, b = naive_sweep(s, y, p, binning, limit)
        e = tce.ece_sweep(s, y, binning=binning, norm=p, sweep_limit=sweep_limit)
        assert e.bins == b
        assert abs(e.value - value) < TOLERANCE


@settings(max_examples=100, deadline=None)
@given(samples, samples)
def test_histogram_merge_equals_one_stream(a, b):
    h1, h2, whole = tce.Histogram(bins=7), tce.Histogram(bins=7), tce.Histogram(bins=7)
    h1.update(a[0], a[1])
    h2.update(b[0], b[1])
    whole.update(a[0] + b[0], a[1] + b[1])
    h1.merge(h2)
    assert h1.to_bytes() == whole.to_bytes()


# From 4096 samples and up to 64 bins the equal-mass functions select instead of sorting
# (tce::select): the same bins as a sorted buffer, so the same estimates bit for bit.
large_samples = st.tuples(st.integers(4096, 9000), st.integers(0, 2 ** 32 - 1),
                          st.floats(0.0, 1.0), st.sampled_from([2, 5, 16]))


def large(n, seed, tied, values):
    """n samples: smooth scores, a fraction `tied` of them replaced by one of `values`
    levels (ties across bin boundaries), 1.0 the most frequent."""
    rng = np.random.default_rng(seed)
    smooth = 1.0 - 0.9 * rng.random(n) ** 3
    levels = np.minimum(1.0, rng.integers(0, values + 2, n) / values)
    s = np.where(rng.random(n) < tied, levels, smooth)
    y = (rng.random(n) < s).astype(np.uint8)
    return s, y


@settings(max_examples=25, deadline=None)
@given(large_samples, st.sampled_from([1, 2, 7, 15, 64, 65]), st.sampled_from(["split", "keep"]))
def test_selected_equal_mass_bins_equal_the_sorted_buffers(data, bins, ties):
    s, y = large(*data)
    buffer = tce.SortedBuffer(len(s))
    buffer.update(s, y)
    kw = dict(binning="equal_mass", bins=bins, ties=ties)
    assert tce.ece_bin(s, y, **kw).value == buffer.ece_bin(**kw).value
    assert tce.mce(s, y, **kw).value == buffer.mce(**kw).value
    assert tce.ece_debias(s, y, **kw).value == buffer.ece_debias(**kw).value
    ece, mce, _, _, _ = naive(s, y, bins, 2.0, "equal_mass", ties=ties)
    assert abs(tce.ece_bin(s, y, **kw).value - ece) < TOLERANCE
    assert abs(tce.mce(s, y, **kw).value - mce) < TOLERANCE
