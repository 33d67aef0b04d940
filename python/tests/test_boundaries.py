"""The package's two last lines of defence: a Rust panic becomes tce.InternalError and
the interpreter goes on; a forged frame cannot make from_bytes allocate what it does
not hold."""

import os
import struct
import subprocess
import sys
import textwrap
import threading
import zlib

import numpy as np
import pytest

import tce

PANIC_MESSAGE = ("internal error in tce (a bug, please report it): "
                 "deliberate panic (tce._tce._panic_for_test)")


def test_a_panic_is_internal_error_and_prints_nothing(capfd):
    with pytest.raises(tce.InternalError) as caught:
        tce._tce._panic_for_test()
    error = caught.value
    assert isinstance(error, tce.Error) and isinstance(error, ValueError)
    assert isinstance(error, RuntimeError)
    assert str(error) == PANIC_MESSAGE
    # The panic hook stays silent inside the boundary: no "thread ... panicked at" line,
    # no backtrace note, on either stream.
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    # Test-only: not in tce's namespace.
    assert not hasattr(tce, "_panic_for_test")


def test_the_interpreter_goes_on_after_a_panic_in_this_thread_and_another():
    p = np.array([0.2, 0.6, 0.9, 0.95])
    y = np.array([0, 1, 1, 1], dtype=np.uint8)
    expected = tce.ece_sweep(p, y)
    with pytest.raises(tce.InternalError):
        tce._tce._panic_for_test()
    assert tce.ece_sweep(p, y) == expected
    w = tce.SlidingWindow(3)
    w.update(p, y)
    assert len(w) == 3
    results = []

    def worker():
        try:
            tce._tce._panic_for_test()
        except tce.InternalError as e:
            results.append(str(e))
        results.append(tce.ece_sweep(p, y))
        w.update([0.5], [1])
        results.append(len(w))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert results == [PANIC_MESSAGE, expected, 3]
    # And again here, after the other thread's panic.
    with pytest.raises(tce.InternalError):
        tce._tce._panic_for_test()
    assert tce.ece_sweep(p, y) == expected


# ---------------------------------------------------------------------------------------


def resigned(frame):
    frame = bytearray(frame)
    struct.pack_into("<I", frame, len(frame) - 4, zlib.crc32(bytes(frame[:-4])))
    return bytes(frame)


def with_u32(frame, at, value):
    frame = bytearray(frame)
    struct.pack_into("<I", frame, 12 + at, value)
    return resigned(frame)


MAX_WINDOW = (1 << 30) - 1
MAX_CAPACITY = (1 << 31) - 1


def test_sizes_a_frame_does_not_hold_are_refused_before_allocating():
    h = tce.Histogram(bins=3)
    h.update([0.5], [1])
    with pytest.raises(tce.DecodeError, match="inconsistent"):
        tce.Histogram.from_bytes(with_u32(h.to_bytes(), 4, 1 << 24))
    d = tce.DecayingHistogram(10.0, bins=3)
    with pytest.raises(tce.DecodeError, match="inconsistent"):
        tce.DecayingHistogram.from_bytes(with_u32(d.to_bytes(), 4, 1 << 24))
    b = tce.SortedBuffer(3)
    b.update([0.5], [1])
    with pytest.raises(tce.DecodeError, match="inconsistent"):
        tce.SortedBuffer.from_bytes(with_u32(b.to_bytes(), 0, MAX_CAPACITY))
    # A full window or reservoir holds as many samples as its size: claiming more is
    # refused.
    w = tce.SlidingWindow(3)
    w.update([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    with pytest.raises(tce.DecodeError, match="inconsistent"):
        tce.SlidingWindow.from_bytes(with_u32(w.to_bytes(), 0, MAX_WINDOW))
    r = tce.Reservoir(3)
    r.update([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    with pytest.raises(tce.DecodeError, match="inconsistent"):
        tce.Reservoir.from_bytes(with_u32(r.to_bytes(), 0, MAX_CAPACITY))


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
@pytest.mark.parametrize("kind,size", [(tce.SlidingWindow, MAX_WINDOW), (tce.Reservoir, MAX_CAPACITY)])
def test_a_huge_claimed_size_with_three_samples_costs_three_samples(kind, size):
    """A window or reservoir that has seen fewer samples than its size holds them all, so
    its frame may claim any size: the storage is zero-filled by the allocator and
    committed only as it is written. Either it decodes and costs a few pages, or the
    address space is too small and it is MemoryError; never an abort."""
    small = kind(3)
    small.update([0.1, 0.5, 0.9], [0, 1, 1])
    forged = with_u32(small.to_bytes(), 0, size)
    before = resident_bytes()
    try:
        state = kind.from_bytes(forged)
    except MemoryError as e:
        assert "cannot allocate storage for" in str(e)
        return
    assert resident_bytes() - before < 64 << 20
    assert len(state) == 3 and state.to_bytes() == forged
    assert state.ece_sweep() == small.ece_sweep()
    # A copy writes the held samples only, too, and so does a window's merge.
    twin = state.__copy__()
    assert twin.to_bytes() == forged
    if kind is tce.SlidingWindow:
        other = tce.SlidingWindow(5)
        other.update([0.3], [1])
        twin.merge(other)
        state.merge(twin)
        assert len(twin) == 4 and len(state) == 7
    state.update([0.2, 0.4], [1, 0])
    assert resident_bytes() - before < 192 << 20
    del state, twin


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS")
def test_a_claimed_size_beyond_the_address_space_is_memory_error_and_the_interpreter_goes_on():
    small = tce.SlidingWindow(3)
    small.update([0.1, 0.5, 0.9], [0, 1, 1])
    forged = with_u32(small.to_bytes(), 0, MAX_WINDOW)  # 24 GiB of storage
    script = textwrap.dedent(f"""
        import resource
        import tce
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * {os.sysconf("SC_PAGE_SIZE")}
        limit = used + (2 << 30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            tce.SlidingWindow.from_bytes({forged!r})
        except MemoryError as e:
            print("MemoryError:", e)
        w = tce.SlidingWindow(3)
        w.update([0.1, 0.5, 0.9], [0, 1, 1])
        print("after:", w.ece_sweep().value == {small.ece_sweep().value!r})
    """)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        f"MemoryError: cannot allocate storage for {MAX_WINDOW} samples", "after: True"], run.stdout
    assert "panicked" not in run.stderr
