"""Hostile and careless input at the Python boundary: sizes no allocator can meet,
integers out of every range, a concurrent histogram pushed past MAX_COUNT, copies of
huge buffers, masked arrays. Each is a named error (or MemoryError), refused before
any work, with the state unchanged; never an abort, an OverflowError or a wrapped
value."""

import copy
import os
import struct
import subprocess
import sys
import textwrap
import threading
import time
import zlib

import numpy as np
import pytest

import tce

S = [0.2, 0.4, 0.6, 0.8]
Y = [0, 1, 1, 1]
MODEL = tce.Model(1.1, 0.1, d=2)


def histogram_frame(count, bins=1):
    """A histogram frame (docs/monitoring.md) of `bins` bins, `count` misses at score 0 in
    the first."""
    payload = bytes(4) + struct.pack("<I", bins) + struct.pack("<QQQQ", count, 0, 0, 0)
    payload += bytes(32 * (bins - 1))
    head = b"TCE\0" + struct.pack("<HHI", 1, 1, len(payload)) + payload
    return head + struct.pack("<I", zlib.crc32(head))


def run_limited(code, address_space=2 << 30):
    """`code` in a fresh interpreter whose address space is its start plus
    `address_space` bytes; its stdout lines (it must exit 0, without a panic message)."""
    script = textwrap.dedent(f"""
        import resource
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * {os.sysconf("SC_PAGE_SIZE")}
        limit = used + {address_space}
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    """) + textwrap.dedent(code)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               RAYON_NUM_THREADS="1")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, (run.returncode, run.stderr)
    assert "panicked" not in run.stderr and "memory allocation" not in run.stderr, run.stderr
    return run.stdout.splitlines()


# --- 2: data sets no allocator can hold ------------------------------------------------


def test_a_data_set_beyond_the_address_space_is_refused_by_arithmetic():
    start = time.perf_counter()
    with pytest.raises(MemoryError, match="4611686018427387904 samples"):
        MODEL.sample(2**62)
    assert time.perf_counter() - start < 1.0
    scores, labels = MODEL.sample(50, seed=3)
    assert len(scores) == len(labels) == 50


def test_a_simulation_of_more_samples_than_it_sorts_is_refused_before_any_work():
    start = time.perf_counter()
    with pytest.raises(tce.SimulationError, match="sample size 17179869184 is above"):
        tce.simulate(MODEL, [200, 2**34], repetitions=1000)
    with pytest.raises(tce.SimulationError, match="sizes\\[1\\] is -4: it cannot be negative"):
        tce.simulate(MODEL, [200, -4])
    with pytest.raises(tce.SimulationError, match="above 18446744073709551615"):
        tce.simulate(MODEL, [2**64])
    assert time.perf_counter() - start < 1.0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS")
def test_a_data_set_the_allocator_refuses_is_memory_error_and_the_interpreter_goes_on():
    # 2^34 samples (154 GB) under a 2 GiB address space: the allocator refuses, where
    # the interpreter used to abort.
    lines = run_limited("""
        import tce
        m = tce.Model(1.1, 0.1, d=2)
        for n in (2**34, 2**62):
            try:
                m.sample(n)
            except MemoryError as e:
                print("MemoryError:", e)
        try:
            tce.simulate(m, [2**31 - 1], repetitions=1)
        except MemoryError as e:
            print("MemoryError:", e)
        p, y = m.sample(1000, seed=1)
        print("after:", len(p), tce.ece_bin(p, y).samples)
    """)
    assert lines == [
        "MemoryError: cannot allocate a data set of 17179869184 samples",
        "MemoryError: cannot allocate a data set of 4611686018427387904 samples",
        "MemoryError: cannot allocate a data set of 2147483647 samples with its sort storage",
        "after: 1000 1000",
    ]


# --- 4: the report's resamples and simulations ------------------------------------------


def test_report_resamples_and_simulations_out_of_range_are_refused_before_the_data():
    bad_data = [0.5, float("nan")]  # would be NonFiniteScore: the options come first
    for kwargs, message in [
        (dict(resamples=2**64 - 1), "18446744073709551615 resamples: a report takes at most"),
        (dict(resamples=2**64), "resamples is 18446744073709551616: above"),
        (dict(resamples=-1), "resamples is -1: it cannot be negative"),
        (dict(simulations=0), "0 simulations"),
        (dict(simulations=-5), "simulations is -5: it cannot be negative"),
    ]:
        with pytest.raises(tce.InvalidOption, match=message):
            tce.report(bad_data, [1, 0], **kwargs)
    r = tce.report(S * 10, Y * 10, resamples=20, simulations=5, seed=1)
    assert 0 <= r.estimate <= 1


# --- 10: integers out of range --------------------------------------------------------


@pytest.mark.parametrize("call,cls,message", [
    (lambda: tce.ece_bin(S, Y, bins=2**63), tce.TooManyBins, "exceed the maximum"),
    (lambda: tce.ece_bin(S, Y, bins=2**64), tce.TooManyBins, "bins is 18446744073709551616"),
    (lambda: tce.ece_bin(S, Y, bins=-2**70), tce.ZeroBins, "cannot be negative"),
    (lambda: tce.Histogram(bins=2**64), tce.TooManyBins, "bins is"),
    (lambda: tce.SortedBuffer(2**63), tce.CapacityTooLarge, "exceeds the maximum"),
    (lambda: tce.SortedBuffer(2**64), tce.CapacityTooLarge, "capacity is"),
    (lambda: tce.SlidingWindow(-1), tce.ZeroCapacity, "size is -1"),
    (lambda: tce.Reservoir(4, seed=-1), tce.InvalidOption, "seed is -1"),
    (lambda: tce.Reservoir(4, seed=2**64), tce.InvalidOption, "seed is 18446744073709551616"),
    (lambda: tce.ece_sweep(S, Y, max_bins=2**64), tce.TooManyBins, "max_bins is"),
    (lambda: tce.SortedBuffer(4).ece_sweep(max_bins=-1), tce.ZeroBins, "max_bins is -1"),
    (lambda: tce.report(S, Y, resamples=-1), tce.InvalidOption, "resamples is -1"),
    (lambda: tce.report(S, Y, seed=2**64), tce.InvalidOption, "seed is"),
    (lambda: tce.ConcurrentHistogram(shards=2**64), tce.InvalidOption, "shards is"),
    (lambda: tce.ConcurrentHistogram.from_bytes(tce.Histogram().to_bytes(), shards=-1),
     tce.InvalidOption, "shards is -1"),
    (lambda: MODEL.sample(-1), tce.InvalidOption, "n is -1"),
    (lambda: MODEL.sample(10, rep=2**64), tce.InvalidOption, "rep is"),
    (lambda: tce.simulate(MODEL, [100], repetitions=-1), tce.SimulationError, "repetitions"),
    (lambda: tce.simulate(MODEL, [100], repetitions=2**64 - 1), tce.SimulationError,
     "18446744073709551615 repetitions: a simulation takes at most"),
    (lambda: tce.simulate(MODEL, [100], bins=[15, -1]), tce.SimulationError, "bins\\[1\\]"),
    (lambda: tce.Estimate(0.5, -1, 3), tce.InvalidOption, "samples is -1"),
    (lambda: tce.Estimate(0.5, 10, 2**64), tce.InvalidOption, "bins is 18446744073709551616"),
])
def test_integers_out_of_range_are_named_errors_not_overflow_error(call, cls, message):
    with pytest.raises(cls, match=message) as info:
        call()
    assert not isinstance(info.value, OverflowError)
    assert isinstance(info.value, tce.Error)


def test_integer_arguments_still_take_numpy_integers_and_refuse_floats():
    assert tce.ece_bin(S, Y, bins=np.int64(3)) == tce.ece_bin(S, Y, bins=3)
    assert tce.Reservoir(np.uint64(4), seed=np.uint64(2**64 - 1)).capacity == 4
    with pytest.raises(TypeError):
        tce.ece_bin(S, Y, bins=2.0)


@pytest.mark.parametrize("shard", [4, 5, 2**63, -1, -2**70, 2**64])
def test_a_shard_out_of_range_is_refused_never_wrapped(shard):
    h = tce.ConcurrentHistogram(bins=3, shards=4)
    h.update([0.5], [1], shard=3)
    before = h.to_bytes()
    with pytest.raises(tce.InvalidOption, match=f"shard is {shard}: it must be in 0..4"):
        h.update([0.1, 0.9], [0, 1], shard=shard)
    assert h.to_bytes() == before and h.samples == 1


# --- 5: a concurrent histogram at MAX_COUNT ---------------------------------------------


def test_a_concurrent_histogram_refuses_updates_past_max_count_and_stays_readable():
    h = tce.ConcurrentHistogram.from_bytes(histogram_frame(tce.MAX_COUNT - 3, bins=3),
                                           shards=4)
    assert h.samples == tce.MAX_COUNT - 3
    h.update([0.5], [1], shard=1)
    with pytest.raises(tce.CountOverflow):
        h.update([0.1, 0.2, 0.3], [1, 0, 1], shard=2)  # 3 samples, room for 2
    assert h.samples == tce.MAX_COUNT - 2
    h.update([0.9, 0.95], [1, 1], shard=3)
    before = h.to_bytes()
    for shard in range(4):
        with pytest.raises(tce.CountOverflow):
            h.update([0.5], [1], shard=shard)
    one = tce.Histogram(bins=3)
    one.update([0.5], [1])
    with pytest.raises(tce.CountOverflow):
        h.merge(one)
    # Every read works, and shows exactly the updates accepted.
    assert h.samples == tce.MAX_COUNT
    assert h.to_bytes() == before
    snapshot = h.snapshot()
    assert snapshot.samples == tce.MAX_COUNT
    assert list(snapshot.reliability_bins().count) == [tce.MAX_COUNT - 3, 1, 2]
    assert 0 <= h.ece_bin().value <= 1 and h.mce().value >= 0 and h.ece_debias().value >= 0
    assert copy.copy(h).to_bytes() == before
    h.reset()
    h.update([0.5], [1])
    assert h.samples == 1


def test_threads_racing_at_max_count_never_pass_it():
    room = 5000
    h = tce.ConcurrentHistogram.from_bytes(histogram_frame(tce.MAX_COUNT - room, bins=3),
                                           shards=4)
    accepted = []

    def push(shard):
        mine = 0
        for _ in range(2000):
            try:
                h.update([0.7, 0.2, 0.4], [1, 0, 1], shard=shard)
                mine += 3
            except tce.CountOverflow:
                pass
        accepted.append(mine)

    threads = [threading.Thread(target=push, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = sum(accepted)
    assert room - 3 < total <= room
    assert h.samples == tce.MAX_COUNT - room + total


# --- 6: copies and merges of a large buffer cost the samples held ----------------------


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_copying_and_merging_a_huge_buffer_costs_the_samples_it_holds():
    # 2^28 slots are 4 GiB: a copy that wrote its whole capacity took 4.6 s and 4.2 GB.
    big = tce.SortedBuffer(2**28)
    big.update([0.3, 0.8], [0, 1])
    before, start = resident_bytes(), time.perf_counter()
    twin = copy.copy(big)
    deep = copy.deepcopy(big)
    other = tce.SortedBuffer(2**28)
    other.update([0.6], [1])
    other.merge(big)
    big.merge(other)
    assert time.perf_counter() - start < 2.0
    assert resident_bytes() - before < 64 << 20
    assert twin.capacity == deep.capacity == 2**28
    assert twin.to_bytes() == deep.to_bytes() == tce.SortedBuffer.from_bytes(
        twin.to_bytes()).to_bytes()
    assert (len(twin), len(other), len(big)) == (2, 3, 5)
    assert twin.ece_sweep() == tce.ece_sweep([0.3, 0.8], [0, 1])
    assert big.ece_bin() == tce.ece_bin([0.3, 0.8, 0.6, 0.3, 0.8], [0, 1, 1, 0, 1])
    # The copy is a buffer of its own, with its capacity.
    twin.update(np.full(10, 0.5), np.ones(10))
    assert (len(twin), len(deep)) == (12, 2)


def test_buffer_merges_still_refuse_what_does_not_fit():
    small = tce.SortedBuffer(3)
    small.update([0.1, 0.2], [0, 1])
    other = tce.SortedBuffer(10)
    other.update([0.3, 0.4], [1, 1])
    with pytest.raises(tce.BufferFull):
        small.merge(other)
    assert len(small) == 2 and len(other) == 2
    empty = tce.SortedBuffer(5)
    empty.merge(tce.SortedBuffer(7))
    assert len(empty) == 0 and empty.capacity == 5


# --- 12c: masked arrays -------------------------------------------------------------------


MASKED_SCORES = np.ma.masked_array([0.2, 0.4, 0.6, 0.8], mask=[0, 0, 1, 0])
MASKED_LABELS = np.ma.masked_array([0, 1, 1, 1], mask=[0, 1, 0, 0])
MASKED_TABLE = np.ma.masked_array([[0.3, 0.7], [0.6, 0.4]], mask=[[0, 0], [1, 0]])


@pytest.mark.parametrize("scores,labels,what", [
    (MASKED_SCORES, Y, "scores"),
    (S, MASKED_LABELS, "labels"),
    (MASKED_TABLE, [1, 0], "scores"),
    # Even with nothing masked: the caller says what masked elements mean.
    (np.ma.masked_array(S), Y, "scores"),
])
def test_masked_arrays_are_refused_never_read_through_their_mask(scores, labels, what):
    for f in (tce.ece_bin, tce.ece_sweep, tce.reliability_bins):
        with pytest.raises(tce.MaskedInput, match=f"{what} is a numpy masked array"):
            f(scores, labels)
    h = tce.Histogram()
    with pytest.raises(tce.MaskedInput):
        h.update(scores, labels)
    assert h.samples == 0
    with pytest.raises(tce.MaskedInput):
        tce.report(scores, labels)
    assert issubclass(tce.MaskedInput, tce.Error) and issubclass(tce.MaskedInput, TypeError)


def test_compressed_masked_arrays_are_read():
    keep = ~(MASKED_SCORES.mask | MASKED_LABELS.mask)
    scores = np.ma.masked_array(MASKED_SCORES, mask=~keep).compressed()
    labels = np.ma.masked_array(MASKED_LABELS.data, mask=~keep).compressed()
    assert tce.ece_bin(scores, labels) == tce.ece_bin([0.2, 0.8], [0, 1])


def test_a_simulation_whose_results_cannot_be_held_is_memory_error_at_once():
    # 10^4 sizes × 10^4 bin counts × the binned estimators × 10^5 repetitions: results
    # of hundreds of terabytes, refused before any data set is drawn.
    start = time.perf_counter()
    with pytest.raises(MemoryError, match="bytes for the results"):
        tce.simulate(MODEL, list(range(100, 10_100)), bins=list(range(1, 10_001)),
                     repetitions=100_000)
    assert time.perf_counter() - start < 30
