"""Every bad input with its exception: one class per cause, all tce.Error (ValueError),
messages naming the index and value of the first bad element, nothing recorded."""

import struct
import zlib

import numpy as np
import pytest

import tce

GOOD_S = [0.2, 0.4, 0.6, 0.8]
GOOD_Y = [0, 1, 1, 1]


def raises(cls, match=None):
    assert issubclass(cls, tce.Error) and issubclass(cls, ValueError)
    return pytest.raises(cls, match=match)


@pytest.mark.parametrize("f", [tce.ece_bin, tce.ece_sweep, tce.ece_debias, tce.mce,
                               tce.kde_ece, tce.reliability_bins])
def test_bad_samples_name_index_and_value(f):
    with raises(tce.NonFiniteScore, r"index 2 is nan"):
        f([0.1, 0.2, float("nan"), 0.3], GOOD_Y)
    with raises(tce.NonFiniteScore, r"index 1 is inf"):
        f([0.1, float("inf"), 0.5, 0.3], GOOD_Y)
    with raises(tce.ScoreOutOfRange, r"index 3 is 1\.5, outside \[0, 1\]"):
        f([0.1, 0.2, 0.3, 1.5], GOOD_Y)
    with raises(tce.ScoreOutOfRange, r"index 0 is -0\.25"):
        f([-0.25, 0.2, 0.3, 0.5], GOOD_Y)
    with raises(tce.InvalidLabel, r"label at index 1 is 2, neither 0 nor 1"):
        f(GOOD_S, [0, 2, 1, 1])
    with raises(tce.InvalidLabel, r"label at index 2 is -1"):
        f(GOOD_S, np.array([0, 1, -1, 1], dtype=np.int64))
    with raises(tce.InvalidLabel, r"label at index 0 is 0\.5"):
        f(GOOD_S, [0.5, 1.0, 1.0, 0.0])
    with raises(tce.InvalidLabel, r"index 3 is 256"):
        f(GOOD_S, np.array([0, 1, 1, 256], dtype=np.uint16))  # not wrapped to 0
    with raises(tce.LengthMismatch, r"4 scores but 3 labels"):
        f(GOOD_S, [0, 1, 1])
    with raises(tce.NoSamples):
        f([], [])
    with raises(tce.UnsupportedDtype):
        f(["0.5", "0.1", "0.2", "0.3"], GOOD_Y)
    with raises(tce.ShapeMismatch):
        f(np.zeros((2, 2, 2)), GOOD_Y)
    with raises(tce.ShapeMismatch):
        f(GOOD_S, np.zeros((4, 1)))


def test_unsupported_dtype_is_also_a_type_error():
    with pytest.raises(TypeError):
        tce.ece_bin(np.array([1 + 1j]), [1])


def test_options():
    with raises(tce.ZeroBins):
        tce.ece_bin(GOOD_S, GOOD_Y, bins=0)
    with raises(tce.ZeroBins):
        tce.ece_bin(GOOD_S, GOOD_Y, bins=-3)
    with raises(tce.TooManyBins):
        tce.ece_bin(GOOD_S, GOOD_Y, bins=tce.MAX_BINS + 1)
    with raises(tce.TooManyBins):
        tce.reliability_bins(GOOD_S, GOOD_Y, bins=2**40)
    with raises(tce.ZeroBins):
        tce.ece_sweep(GOOD_S, GOOD_Y, max_bins=0)
    with raises(tce.InvalidNorm):
        tce.ece_bin(GOOD_S, GOOD_Y, norm=0.5)
    with raises(tce.InvalidNorm):
        tce.ece_sweep(GOOD_S, GOOD_Y, norm=float("inf"))
    with raises(tce.InvalidOption, r"binning must be"):
        tce.ece_bin(GOOD_S, GOOD_Y, binning="quantile")
    with raises(tce.InvalidOption, r"closure"):
        tce.ece_bin(GOOD_S, GOOD_Y, closure="both")
    with raises(tce.InvalidOption, r"ties"):
        tce.ece_bin(GOOD_S, GOOD_Y, binning="equal_width", ties="x")  # checked even if unused
    with raises(tce.InvalidOption, r"sweep_limit"):
        tce.ece_sweep(GOOD_S, GOOD_Y, sweep_limit="n")
    with raises(tce.InvalidOption, r"logits=True"):
        tce.ece_bin(GOOD_S, GOOD_Y, logits=True)


def test_multiclass_errors_name_row_and_column():
    table = np.array([[0.5, 0.5], [0.2, 0.8], [0.3, 0.7]])
    with raises(tce.InvalidLabel, r"label at index 1 is 2, not a class of the 2 columns"):
        tce.ece_bin(table, [0, 2, 1])
    with raises(tce.InvalidLabel, r"index 0 is -1"):
        tce.ece_bin(table, [-1, 0, 1])
    with raises(tce.NotNormalized, r"row 1"):
        tce.ece_bin(np.array([[0.5, 0.5], [0.2, 0.7]]), [0, 1])
    with raises(tce.ScoreOutOfRange, r"scores\[1, 0\] is 2\.0"):
        tce.ece_bin(np.array([[0.5, 0.5], [2.0, -1.0]]), [0, 1])
    with raises(tce.NonFiniteScore, r"scores\[0, 1\] is nan"):
        tce.ece_bin(np.array([[0.5, np.nan]]), [0], logits=True)
    with raises(tce.LengthMismatch):
        tce.ece_bin(table, [0, 1])
    with raises(tce.ShapeMismatch):
        tce.ece_bin(np.zeros((3, 0)), [0, 0, 0])


def test_kde_undefined():
    with raises(tce.KdeUndefined, r"no hits"):
        tce.kde_ece([0.2, 0.5], [0, 0])
    with raises(tce.KdeUndefined, r"zero spread"):
        tce.kde_ece([0.2, 0.5, 0.5], [0, 1, 1])


def test_states_record_nothing_from_a_bad_batch():
    states = [tce.Histogram(), tce.SortedBuffer(10), tce.SlidingWindow(3), tce.Reservoir(5),
              tce.DecayingHistogram(50.0), tce.ConcurrentHistogram()]
    for s in states:
        s.update([0.5, 0.9], [1, 1])
        before = s.to_bytes()
        with raises(tce.NonFiniteScore, r"index 1 is nan"):
            s.update([0.1, float("nan"), 0.3], [0, 1, 1])
        with raises(tce.InvalidLabel, r"index 2 is 7"):
            s.update([0.1, 0.2, 0.3], [0, 1, 7])
        with raises(tce.LengthMismatch):
            s.update([0.1, 0.2], [0])
        assert s.to_bytes() == before, type(s).__name__


def test_state_construction_and_use():
    with raises(tce.ZeroBins):
        tce.Histogram(bins=0)
    with raises(tce.TooManyBins):
        tce.Histogram(bins=tce.MAX_BINS + 1)
    with raises(tce.InvalidOption):
        tce.Histogram(closure="middle")
    with raises(tce.ZeroCapacity):
        tce.SortedBuffer(0)
    with raises(tce.ZeroCapacity):
        tce.SlidingWindow(-1)
    with raises(tce.CapacityTooLarge):
        tce.Reservoir(2**31)
    with raises(tce.CapacityTooLarge):
        tce.SlidingWindow(2**31)
    with raises(tce.InvalidHalfLife):
        tce.DecayingHistogram(0.0)
    with raises(tce.InvalidHalfLife):
        tce.DecayingHistogram(float("nan"))
    with raises(tce.InvalidOption, r"shards"):
        tce.ConcurrentHistogram(shards=0)
    with raises(tce.NoSamples):
        tce.Histogram().ece_bin()
    with raises(tce.NoSamples):
        tce.SortedBuffer(4).ece_sweep()
    with raises(tce.NoSamples):
        tce.Reservoir(4).reliability_bins()
    buffer = tce.SortedBuffer(3)
    buffer.update([0.1, 0.2], [0, 1])
    with raises(tce.BufferFull, r"2 of 3 slots used, 2 more requested"):
        buffer.update([0.3, 0.4], [1, 1])
    assert len(buffer) == 2
    other = tce.SortedBuffer(5)
    other.update([0.5, 0.6], [1, 1])
    with raises(tce.BufferFull):
        buffer.merge(other)
    assert len(buffer) == 2
    with raises(tce.MergeMismatch, r"15 and 10 bins"):
        tce.Histogram().merge(tce.Histogram(bins=10))
    with raises(tce.MergeMismatch, r"closures"):
        tce.Histogram().merge(tce.Histogram(closure="right"))
    with raises(tce.MergeMismatch, r"capacity"):
        tce.Reservoir(4).merge(tce.Reservoir(5))
    with raises(tce.MergeMismatch):
        tce.ConcurrentHistogram(bins=10).merge(tce.Histogram())
    with pytest.raises(TypeError):
        tce.Histogram().merge(tce.SortedBuffer(3))


def histogram_frame(count, hits=0):
    """A one-bin histogram frame (docs/monitoring.md) with the given count."""
    payload = bytes([0, 0, 0, 0]) + struct.pack("<I", 1) + struct.pack("<QQQQ", count, hits, 0, 0)
    head = b"TCE\0" + struct.pack("<HHI", 1, 1, len(payload)) + payload
    return head + struct.pack("<I", zlib.crc32(head))


def test_count_overflow():
    full = tce.Histogram.from_bytes(histogram_frame(tce.MAX_COUNT))
    assert full.samples == tce.MAX_COUNT
    with raises(tce.CountOverflow):
        full.update([0.5], [1])
    one = tce.Histogram(bins=1)
    one.update([0.5], [1])
    with raises(tce.CountOverflow):
        full.merge(one)
    assert full.samples == tce.MAX_COUNT
    concurrent = tce.ConcurrentHistogram(bins=1)
    concurrent.merge(full)
    with raises(tce.CountOverflow):
        concurrent.merge(one)
    assert concurrent.samples == tce.MAX_COUNT


def test_decode_errors():
    h = tce.Histogram()
    h.update([0.5, 0.7], [1, 0])
    frame = h.to_bytes()
    with raises(tce.DecodeError, r"truncated"):
        tce.Histogram.from_bytes(frame[:-1])
    with raises(tce.DecodeError, r"magic"):
        tce.Histogram.from_bytes(b"XCE\0" + frame[4:])
    with raises(tce.DecodeError, r"checksum"):
        tce.Histogram.from_bytes(frame[:20] + bytes([frame[20] ^ 1]) + frame[21:])
    with raises(tce.DecodeError, r"kind"):
        tce.SortedBuffer.from_bytes(frame)
    with raises(tce.DecodeError, r"kind"):
        tce.Reservoir.from_bytes(frame)
    with raises(tce.DecodeError):
        tce.Histogram.from_bytes(b"")
    with raises(tce.DecodeError, r"inconsistent"):
        tce.Histogram.from_bytes(histogram_frame(1, hits=2))  # more hits than samples
    for cut in range(len(frame)):
        with raises(tce.DecodeError):
            tce.Histogram.from_bytes(frame[:cut])
    b = tce.SortedBuffer(5)
    b.update([0.1, 0.2, 0.3], [0, 1, 1])
    with raises(tce.DecodeError, r"3 samples, the destination holds 2"):
        tce.SortedBuffer.from_bytes(b.to_bytes(), capacity=2)


def test_fit_and_simulation_errors():
    with raises(tce.CurveError):
        tce.Model(0.0, 1.0)
    with raises(tce.CurveError):
        tce.Model(1.0, 1.0, "polynomial")  # d missing
    with raises(tce.CurveError):
        tce.Model(1.0, 1.0, "spline", d=2)
    model = tce.Model(1.0, 1.0, "polynomial", d=2)
    with raises(tce.InvalidNorm):
        model.tce(0.5)
    with raises(tce.InvalidOption, r"unknown binning `equal_height`"):
        tce.simulate(model, [100], estimators=["ece_bin:equal_height"], repetitions=2)
    with raises(tce.SimulationError):
        tce.simulate(model, [], repetitions=2)
    with raises(tce.SimulationError):
        tce.simulate(model, [100], repetitions=0)
    with raises(tce.FitError, r"all labels are equal"):
        tce.fit([0.2, 0.5, 0.9], [1, 1, 1])
    with raises(tce.NonFiniteScore, r"index 1"):
        tce.fit([0.2, float("nan"), 0.9], [1, 0, 1])
    with raises(tce.InvalidOption, r"method"):
        tce.fit_recalibration([0.2, 0.5], [0, 1], method="beta")
    # "temperature" is the multiclass method (class logits); these are top-label maps.
    with raises(tce.InvalidOption, r"multiclass.*\"top-label-temperature\""):
        tce.fit_recalibration([0.2, 0.5], [0, 1], method="temperature")
    t = tce.fit_recalibration([0.6, 0.7, 0.8, 0.9], [0, 1, 1, 1])
    assert t.method == "top-label-temperature"
    assert repr(t) == 'RecalibrationMap(method="top-label-temperature")'
    with raises(tce.InvalidLabel, r"index 1 is 3"):
        tce.fit_recalibration([0.2, 0.5], [0, 3], method="isotonic")
    m = tce.fit_recalibration([0.2, 0.5, 0.7, 0.9], [0, 1, 0, 1], method="histogram")
    with raises(tce.ScoreOutOfRange, r"index 0 is 1\.5"):
        m.apply([1.5])
