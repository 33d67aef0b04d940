"""The states: estimators equal the functions', merges are exact, pickling, portable
bytes and copies round-trip."""

import copy
import pickle

import numpy as np
import pytest

import tce
from conftest import DATA, load_csv

SCORES, LABELS = load_csv(DATA / "densenet40_c10_test.csv")


def all_states():
    return [tce.Histogram(), tce.Histogram(bins=10, closure="right"),
            tce.SortedBuffer(len(SCORES) + 1), tce.SlidingWindow(1000), tce.Reservoir(700, seed=3),
            tce.DecayingHistogram(500.0), tce.ConcurrentHistogram(shards=3)]


def test_histogram_estimates_equal_the_functions():
    for closure in ("left", "right"):
        h = tce.Histogram(bins=12, closure=closure)
        h.update(SCORES, LABELS)
        kw = dict(binning="equal_width", bins=12, closure=closure)
        assert h.ece_bin(norm=1.5) == tce.ece_bin(SCORES, LABELS, norm=1.5, **kw)
        assert h.ece_debias() == tce.ece_debias(SCORES, LABELS, **kw)
        assert h.mce() == tce.mce(SCORES, LABELS, **kw)
        assert h.samples == len(SCORES) and h.bins == 12 and h.closure == closure


def test_an_extra_histograms_bins_count_as_bins_of_their_own():
    # torchmetrics' layout (tce.torch): the confidences of 1.0 in a histogram apart.
    main, ones = tce.Histogram(bins=4), tce.Histogram(bins=4)
    main.update([0.1, 0.3, 0.35, 0.9, 0.95], [0, 1, 0, 1, 1])
    ones.update([1.0, 1.0, 1.0], [1, 0, 1])
    # Naive: bins (n, gap) by hand, the extra bin (3, 1 - 2/3).
    bins = [(1, 0.1), (2, 0.175), (2, 0.075), (3, 1 / 3)]
    l1 = sum(n * g for n, g in bins) / 8
    got = main.ece_bin(norm=1, extra=ones)
    assert got.value == pytest.approx(l1, abs=1e-12)
    assert (got.samples, got.bins) == (8, 5)
    assert main.mce(extra=ones).value == pytest.approx(1 / 3, abs=1e-12)
    assert main.ece_bin(norm=2, extra=tce.Histogram(bins=4)).value == main.ece_bin(norm=2).value


def test_buffer_estimates_equal_the_functions():
    b = tce.SortedBuffer(len(SCORES) + 5)
    b.update(SCORES, LABELS)
    assert len(b) == len(SCORES) and b.hits == LABELS.sum()
    for binning in ("equal_mass", "equal_width"):
        for ties in ("split", "keep"):
            kw = dict(binning=binning, ties=ties)
            assert b.ece_bin(bins=20, **kw) == tce.ece_bin(SCORES, LABELS, bins=20, **kw)
            assert b.ece_debias(**kw) == tce.ece_debias(SCORES, LABELS, **kw)
            assert b.mce(**kw) == tce.mce(SCORES, LABELS, **kw)
            assert b.ece_sweep(max_bins=40, **kw) == tce.ece_sweep(SCORES, LABELS, max_bins=40, **kw)
    for x, y in zip(b.reliability_bins(bins=7), tce.reliability_bins(SCORES, LABELS, bins=7)):
        np.testing.assert_array_equal(x, y)


def test_window_holds_the_last_samples():
    w = tce.SlidingWindow(1000)
    for start in range(0, len(SCORES), 1234):
        w.update(SCORES[start:start + 1234], LABELS[start:start + 1234])
    assert len(w) == 1000 and w.seen == len(SCORES) and w.size == 1000
    last = (SCORES[-1000:], LABELS[-1000:])
    assert w.ece_sweep() == tce.ece_sweep(*last)
    assert w.ece_bin(binning="equal_width") == tce.ece_bin(*last, binning="equal_width")


def test_reservoir():
    r = tce.Reservoir(500, seed=11)
    r.update(SCORES, LABELS)
    assert len(r) == 500 and r.seen == len(SCORES) and r.capacity == 500
    again = tce.Reservoir(500, seed=11)
    again.update(SCORES, LABELS)
    assert again.to_bytes() == r.to_bytes()  # seeded: runs repeat
    e = r.ece_sweep()
    assert e.samples == 500


def test_decaying_histogram():
    d = tce.DecayingHistogram(half_life=1e12, bins=15)
    d.update(SCORES, LABELS)
    # With a half-life far beyond n, the weights are all but equal.
    assert abs(d.ece_bin().value - tce.ece_bin(SCORES, LABELS, binning="equal_width").value) < 1e-6
    assert d.samples == len(SCORES) and d.half_life == 1e12 and d.bins == 15
    d.reset()
    assert d.samples == 0


def halves(state_factory):
    a, b, whole = state_factory(), state_factory(), state_factory()
    mid = len(SCORES) // 3
    a.update(SCORES[:mid], LABELS[:mid])
    b.update(SCORES[mid:], LABELS[mid:])
    whole.update(SCORES, LABELS)
    return a, b, whole


def test_merges_are_exact():
    a, b, whole = halves(lambda: tce.Histogram(bins=15))
    a.merge(b)
    assert a.to_bytes() == whole.to_bytes()
    a, b, whole = halves(lambda: tce.SortedBuffer(len(SCORES)))
    a.merge(b)
    assert a.to_bytes() == whole.to_bytes()
    assert a.ece_sweep() == whole.ece_sweep()
    # Merging into a concurrent histogram equals the histogram of both.
    a, b, whole = halves(lambda: tce.Histogram())
    c = tce.ConcurrentHistogram(shards=2)
    c.merge(a)
    c.merge(b)
    assert c.to_bytes() == whole.to_bytes()
    c2 = tce.ConcurrentHistogram()
    c2.merge(c)
    assert c2.snapshot().to_bytes() == whole.to_bytes()
    # A state merged with itself doubles.
    h = tce.Histogram()
    h.update(SCORES[:100], LABELS[:100])
    h.merge(h)
    assert h.samples == 200
    # Reservoirs: a uniform sample of both streams, of the same capacity.
    r1, r2 = tce.Reservoir(300, seed=1), tce.Reservoir(300, seed=2)
    r1.update(SCORES[:4000], LABELS[:4000])
    r2.update(SCORES[4000:], LABELS[4000:])
    r1.merge(r2)
    assert len(r1) == 300 and r1.seen == len(SCORES)


@pytest.mark.parametrize("state", all_states(), ids=lambda s: repr(s).split("(")[0] + str(id(s) % 7))
def test_pickle_copy_and_bytes_round_trip(state):
    state.update(SCORES, LABELS)
    frame = state.to_bytes()
    assert frame[:4] == b"TCE\0"
    kind = type(state)
    for restored in (pickle.loads(pickle.dumps(state)), copy.copy(state), copy.deepcopy(state),
                     kind.from_bytes(frame), kind.from_bytes(bytearray(frame))):
        assert type(restored) is kind
        assert restored.to_bytes() == frame
        assert restored.ece_bin() == state.ece_bin()
        if hasattr(state, "ece_sweep"):
            assert restored.ece_sweep() == state.ece_sweep()
    # Copies are independent of the original.
    twin = copy.copy(state)
    twin.update([0.5], [1])
    assert state.to_bytes() == frame and twin.to_bytes() != frame


def test_pickled_buffer_keeps_its_capacity_and_concurrent_its_shards():
    b = tce.SortedBuffer(50)
    b.update([0.1, 0.9], [0, 1])
    restored = pickle.loads(pickle.dumps(b))
    assert restored.capacity == 50 and len(restored) == 2
    assert tce.SortedBuffer.from_bytes(b.to_bytes()).capacity == 2
    c = tce.ConcurrentHistogram(bins=8, shards=5)
    assert pickle.loads(pickle.dumps(c)).shards == 5


def test_a_decoded_reservoir_and_window_continue_as_the_original():
    for make in (lambda: tce.Reservoir(200, seed=9), lambda: tce.SlidingWindow(200)):
        original = make()
        original.update(SCORES[:3000], LABELS[:3000])
        twin = type(original).from_bytes(original.to_bytes())
        original.update(SCORES[3000:], LABELS[3000:])
        twin.update(SCORES[3000:], LABELS[3000:])
        assert twin.to_bytes() == original.to_bytes()


def test_estimate_objects():
    e = tce.ece_sweep(SCORES, LABELS)
    assert float(e) == e.value and isinstance(e.samples, int) and e.samples == len(SCORES)
    assert pickle.loads(pickle.dumps(e)) == e
    assert repr(e).startswith("Estimate(value=")
    k = tce.kde_ece(SCORES, LABELS)
    assert float(k) == k.value and k.samples == len(SCORES)



def test_calibration_alarm():
    import math

    a = tce.CalibrationAlarm(threshold=0.2, bins=2)
    assert a.statistic == 0.0 and not a.alarm and a.alarm_at is None
    assert a.shift == math.log(2) and a.bins == 2 and a.closure == "left"
    # θ = ln 2, score 0.5, a miss: l₋ = ln(4/3) ≥ 0.2, the alarm goes off at sample 1.
    assert a.push(0.5, 0) is True
    assert abs(a.statistic - math.log(4 / 3)) < 1e-15 and a.alarm_at == 1
    assert a.guaranteed_arl0 == pytest.approx(0.5 * math.exp(0.2), rel=1e-15)
    assert a.mean_information == pytest.approx(tce.CalibrationAlarm.information(0.5), rel=1e-15)
    back = tce.CalibrationAlarm.from_bytes(a.to_bytes())
    assert back.to_bytes() == a.to_bytes() and back.alarm_at == 1
    assert pickle.loads(pickle.dumps(a)).to_bytes() == a.to_bytes()
    assert copy.copy(a).to_bytes() == a.to_bytes()
    a.update(SCORES, LABELS)
    assert a.samples == 1 + len(SCORES)
    a.reset()
    assert a.samples == 0 and not a.alarm and a.statistic == 0.0
    h = tce.CalibrationAlarm.threshold_for_arl0(1e4, 0.003)
    assert math.expm1(h) - h == pytest.approx(2 * 0.003 * 1e4, rel=1e-12)
    assert tce.CalibrationAlarm.threshold_for_guaranteed_arl0(1e4) == pytest.approx(math.log(2e4), rel=1e-15)
    for bad in (0.0, -1.0, float("nan"), 701.0):
        with pytest.raises(tce.InvalidThreshold):
            tce.CalibrationAlarm(threshold=bad)
    with pytest.raises(tce.InvalidShift):
        tce.CalibrationAlarm(threshold=5.0, shift=0.0)
    with pytest.raises(tce.InvalidThreshold):
        tce.CalibrationAlarm.threshold_for_arl0(1e4, 0.0)
    before = a.to_bytes()
    with pytest.raises(tce.ScoreOutOfRange):
        a.push(1.5, 1)
    assert a.to_bytes() == before


def test_calibration_alarm_push_takes_arrays_as_pushing_one_at_a_time():
    # An over-confident stream (accuracy c², scores near 0.8): the alarm goes off inside
    # the batch, at the sample where pushing one at a time raises it.
    rng = np.random.default_rng(11)
    scores = rng.uniform(0.6, 1.0, 400)
    labels = (rng.uniform(size=400) < scores ** 2).astype(np.uint8)
    one = tce.CalibrationAlarm(threshold=4.0, bins=4)
    raised = [one.push(float(s), int(y)) for s, y in zip(scores, labels)]
    first = raised.index(True) + 1
    assert 1 < first < 400 and all(raised[first - 1:])
    batch = tce.CalibrationAlarm(threshold=4.0, bins=4)
    assert batch.push(scores[:100], labels[:100]) is (first <= 100)
    assert batch.push(scores[100:], labels[100:].astype(bool)) is True
    assert batch.alarm_at == one.alarm_at == first
    assert batch.to_bytes() == one.to_bytes()
    assert batch.statistic == one.statistic and batch.samples == 400
    # A scalar pair, Python or numpy, is a batch of one.
    a, b = tce.CalibrationAlarm(threshold=4.0), tce.CalibrationAlarm(threshold=4.0)
    assert a.push(np.float64(0.3), np.uint8(1)) is False
    b.push([0.3], [1])
    assert a.to_bytes() == b.to_bytes()
    # A table of class probabilities is reduced to the top label, as in update.
    probs = np.array([[0.1, 0.9], [0.7, 0.3]])
    t, u = tce.CalibrationAlarm(threshold=4.0), tce.CalibrationAlarm(threshold=4.0)
    t.push(probs, [1, 1])
    u.push([0.9, 0.7], [1, 0])
    assert t.to_bytes() == u.to_bytes()


def test_calibration_alarm_push_records_nothing_of_a_bad_batch():
    a = tce.CalibrationAlarm(threshold=4.0, bins=4)
    a.push([0.2, 0.9], [0, 1])
    before = a.to_bytes()
    with pytest.raises(tce.ScoreOutOfRange, match="index 2"):
        a.push([0.5, 0.6, 1.5, 0.7], [1, 1, 1, 1])
    with pytest.raises(tce.InvalidLabel):
        a.push([0.5, 0.6], [1, 2])
    with pytest.raises(tce.InvalidLabel):
        a.push(0.5, -1)
    with pytest.raises(tce.NonFiniteScore):
        a.push(float("nan"), 1)
    with pytest.raises(tce.LengthMismatch):
        a.push([0.5, 0.6], [1])
    assert a.to_bytes() == before and a.samples == 2
