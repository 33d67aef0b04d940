"""SlidingWindow.merge and DecayingHistogram.merge against naive numpy oracles: a deque
pushed sample by sample for the window, weights recomputed from the raw streams for the
decaying histogram; refused merges raise the named exception and change nothing."""

import struct
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tce
from conftest import DATA, assert_debias_close, load_csv

SCORES, LABELS = load_csv(DATA / "densenet40_c10_test.csv")

samples = st.lists(
    st.tuples(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5, 1.0])), st.integers(0, 1)),
    max_size=150,
)


def arrays(pairs):
    return (np.array([p[0] for p in pairs], dtype=np.float64),
            np.array([p[1] for p in pairs], dtype=np.uint8))


def window_samples(frame):
    """The held samples of a window frame, in arrival order (docs/monitoring.md)."""
    (held,) = struct.unpack_from("<I", frame, 12 + 12)
    out = []
    for i in range(held):
        score, label = struct.unpack_from("<dB", frame, 12 + 16 + 9 * i)
        out.append((score, label))
    return out


def fed_window(size, pairs, chunk):
    w = tce.SlidingWindow(size)
    for start in range(0, len(pairs), chunk):
        w.update(*arrays(pairs[start:start + chunk]))
    return w


@settings(max_examples=150, deadline=None)
@given(a=samples, b=samples, after=samples, size_a=st.integers(1, 40), size_b=st.integers(1, 40),
       chunk=st.integers(1, 200))
def test_window_merge_equals_pushing_the_others_samples_oldest_first(a, b, after, size_a, size_b, chunk):
    wa, wb = fed_window(size_a, a, chunk), fed_window(size_b, b, 7)
    b_frame = wb.to_bytes()
    wa.merge(wb)
    oracle = deque(a, maxlen=size_a)
    oracle.extend(deque(b, maxlen=size_b))
    assert window_samples(wa.to_bytes()) == list(oracle)
    assert len(wa) == len(oracle) and wa.size == size_a
    assert wa.seen == len(a) + min(len(b), size_b)
    assert wb.to_bytes() == b_frame  # the other is not changed
    held = arrays(list(oracle))
    if len(oracle):
        assert wa.ece_sweep() == tce.ece_sweep(*held)
        assert wa.ece_bin(binning="equal_width") == tce.ece_bin(*held, binning="equal_width")
    # It goes on like the oracle: later pushes evict the merged samples in order.
    wa.update(*arrays(after))
    oracle.extend(after)
    assert window_samples(wa.to_bytes()) == list(oracle)


def test_window_merge_on_the_bundled_data_and_into_itself():
    a, b = tce.SlidingWindow(1000), tce.SlidingWindow(300)
    a.update(SCORES[:5000], LABELS[:5000])
    b.update(SCORES[5000:], LABELS[5000:])
    a.merge(b)
    last = (np.concatenate([SCORES[4300:5000], SCORES[-300:]]),
            np.concatenate([LABELS[4300:5000], LABELS[-300:]]))
    assert a.ece_sweep() == tce.ece_sweep(*last) and a.seen == 5300
    # Merging a window into itself pushes its own samples again.
    w = tce.SlidingWindow(10)
    w.update([0.1, 0.2, 0.3], [0, 1, 1])
    w.merge(w)
    assert window_samples(w.to_bytes()) == [(0.1, 0), (0.2, 1), (0.3, 1)] * 2 and w.seen == 6


def test_window_merge_past_max_count_is_refused_and_changes_nothing():
    w = tce.SlidingWindow(2)
    w.update([0.1, 0.9], [1, 0])
    frame = bytearray(w.to_bytes())
    struct.pack_into("<Q", frame, 12 + 4, tce.MAX_COUNT - 1)  # samples seen
    struct.pack_into("<I", frame, len(frame) - 4, zlib_crc(frame[:-4]))
    near = tce.SlidingWindow.from_bytes(bytes(frame))
    two = tce.SlidingWindow(5)
    two.update([0.3, 0.4], [1, 1])
    with pytest.raises(tce.CountOverflow):
        near.merge(two)
    assert near.to_bytes() == bytes(frame)
    one = tce.SlidingWindow(5)
    one.update([0.3], [1])
    near.merge(one)
    assert near.seen == tce.MAX_COUNT


def zlib_crc(data):
    import zlib
    return zlib.crc32(bytes(data))


# ---------------------------------------------------------------------------------------


def naive_bins(streams, bins, half_life):
    """Per bin (Σw, Σw·y, Σw·f, Σw², n) over the streams, sample t of a stream of n
    weighing 2^(−(n−t)/half_life) relative to its stream's next sample (left-closed
    equal-width bins): the merge's definition, computed directly."""
    table = np.zeros((bins, 5))
    for pairs in streams:
        f, y = arrays(pairs)
        n = len(f)
        w = np.exp2(-(n - np.arange(n)) / half_life)
        k = np.minimum((f * bins).astype(np.int64), bins - 1)
        np.add.at(table[:, 0], k, w)
        np.add.at(table[:, 1], k, w * y)
        np.add.at(table[:, 2], k, w * f)
        np.add.at(table[:, 3], k, w * w)
        np.add.at(table[:, 4], k, 1)
    return table


def decayed_bins(frame):
    """(count, weight, hit weight, score weight, squared weight) per bin of a decaying
    histogram's frame (docs/monitoring.md)."""
    (bins,) = struct.unpack_from("<I", frame, 12 + 4)
    return np.array([struct.unpack_from("<Qdddd", frame, 12 + 24 + 40 * k) for k in range(bins)])


def estimates(table, p=2.0):
    w = table[:, 0]
    full = w > 0
    total = w.sum()
    acc = table[full, 1] / w[full]
    conf = table[full, 2] / w[full]
    ece = (np.sum(w[full] / total * np.abs(conf - acc) ** p)) ** (1 / p)
    mce = np.max(np.abs(conf - acc))
    n_eff = w[full] ** 2 / table[full, 3]
    keep = n_eff > 1
    debias = np.sum((w[full] / total * ((conf - acc) ** 2 - acc * (1 - acc) / np.where(keep, n_eff - 1, 1)))[keep])
    return ece, mce, np.sqrt(max(debias, 0.0))


@settings(max_examples=150, deadline=None)
@given(a=samples, b=samples, half_life=st.one_of(st.floats(5.0, 300.0), st.floats(0.5, 5.0)))
def test_decaying_merge_sums_both_streams_as_if_they_ended_together(a, b, half_life):
    da, db = tce.DecayingHistogram(half_life, bins=10), tce.DecayingHistogram(half_life, bins=10)
    da.update(*arrays(a))
    db.update(*arrays(b))
    da.merge(db)
    table = naive_bins([a, b], 10, half_life)
    got = decayed_bins(da.to_bytes())
    np.testing.assert_array_equal(got[:, 0], table[:, 4])  # counts: exact
    assert da.samples == len(a) + len(b) and da.half_life == half_life
    if not (a or b):
        with pytest.raises(tce.NoSamples):
            da.ece_bin()
        return
    # Weights on the state's own scale: compare them normalised.
    np.testing.assert_allclose(got[:, 1] / got[:, 1].sum(), table[:, 0] / table[:, 0].sum(),
                               rtol=1e-9, atol=1e-12)
    ece, mce, debias = estimates(table)
    assert da.ece_bin().value == pytest.approx(ece, rel=1e-9, abs=1e-12)
    assert da.mce().value == pytest.approx(mce, rel=1e-9, abs=1e-12)
    if half_life >= 5.0:
        assert_debias_close(da.ece_debias().value, debias)


@settings(max_examples=60, deadline=None)
@given(a=samples, b=samples, half_life=st.floats(0.5, 200.0))
def test_decaying_merge_is_commutative_bit_for_bit(a, b, half_life):
    def fed(pairs):
        d = tce.DecayingHistogram(half_life, bins=6)
        d.update(*arrays(pairs))
        return d
    ab, ba = fed(a), fed(b)
    ab.merge(fed(b))
    ba.merge(fed(a))
    assert ab.to_bytes() == ba.to_bytes()


def test_decaying_merge_on_the_bundled_data_goes_on_decaying_both():
    a, b = tce.DecayingHistogram(400.0), tce.DecayingHistogram(400.0)
    first, second = (SCORES[:4000], LABELS[:4000]), (SCORES[4000:], LABELS[4000:])
    a.update(*first)
    b.update(*second)
    a.merge(b)
    a.update(SCORES[:500], LABELS[:500])
    pairs = lambda s, y: list(zip(s.tolist(), y.tolist()))  # noqa: E731
    old = naive_bins([pairs(*first), pairs(*second)], 15, 400.0)
    old[:, :3] *= 2.0 ** (-500 / 400.0)
    old[:, 3] *= 2.0 ** (-1000 / 400.0)
    table = old + naive_bins([pairs(SCORES[:500], LABELS[:500])], 15, 400.0)
    ece, mce, debias = estimates(table)
    assert a.ece_bin().value == pytest.approx(ece, rel=1e-9)
    assert a.ece_debias().value == pytest.approx(debias, rel=1e-9)
    assert a.samples == len(SCORES) + 500


def test_mismatched_decaying_merges_raise_merge_mismatch_and_change_nothing():
    d = tce.DecayingHistogram(50.0, bins=10)
    d.update([0.2, 0.7, 0.95], [1, 0, 1])
    before = d.to_bytes()
    for other, match in ((tce.DecayingHistogram(50.0, bins=11), "10 and 11 bins"),
                         (tce.DecayingHistogram(50.0, bins=10, closure="right"), "closures"),
                         (tce.DecayingHistogram(50.5, bins=10), "half-lives")):
        other.update([0.5], [1])
        with pytest.raises(tce.MergeMismatch, match=match):
            d.merge(other)
        assert d.to_bytes() == before
    with pytest.raises(TypeError):
        d.merge(tce.Histogram(bins=10))
    # A histogram read back from bytes (which carry λ, not the half-life) still merges.
    twin = tce.DecayingHistogram.from_bytes(before)
    d.merge(twin)
    assert d.samples == 6 and d.half_life == 50.0


def test_decaying_merge_past_max_count_is_refused():
    d = tce.DecayingHistogram(10.0, bins=4)
    d.update([0.1], [1])
    frame = bytearray(d.to_bytes())
    struct.pack_into("<Q", frame, 12 + 24, tce.MAX_COUNT - 1)  # bin 0's count
    struct.pack_into("<I", frame, len(frame) - 4, zlib_crc(frame[:-4]))
    near = tce.DecayingHistogram.from_bytes(bytes(frame))
    two = tce.DecayingHistogram(10.0, bins=4)
    two.update([0.1, 0.9], [1, 1])
    with pytest.raises(tce.CountOverflow):
        near.merge(two)
    assert near.to_bytes() == bytes(frame)
