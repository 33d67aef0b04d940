"""Pushes from several Python threads, and the GIL released while the core works."""

import threading
import time

import numpy as np

import tce
from conftest import DATA, load_csv

SCORES, LABELS = load_csv(DATA / "torchvision_densenet161_imgnet_test.csv")


def run_threads(target, chunks):
    threads = [threading.Thread(target=target, args=chunk) for chunk in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def chunks(parts):
    bounds = np.linspace(0, len(SCORES), parts + 1).astype(int)
    return [(SCORES[a:b], LABELS[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def test_concurrent_histogram_from_eight_threads_equals_one_histogram():
    sequential = tce.Histogram()
    sequential.update(SCORES, LABELS)
    shared = tce.ConcurrentHistogram(shards=4)
    pieces = [c for c in chunks(64)]

    def worker(s, y):
        for i in range(0, len(s), 97):  # many small pushes, interleaved between threads
            shared.update(s[i:i + 97], y[i:i + 97])

    run_threads(worker, [(np.concatenate([p[0] for p in pieces[k::8]]),
                          np.concatenate([p[1] for p in pieces[k::8]])) for k in range(8)])
    assert shared.to_bytes() == sequential.to_bytes()
    assert shared.ece_bin() == sequential.ece_bin()
    assert shared.samples == len(SCORES)


def test_mutex_states_from_several_threads():
    # A histogram's state does not depend on the order of pushes: any interleaving of
    # the threads' batches gives the same bytes.
    h = tce.Histogram()
    run_threads(lambda s, y: h.update(s, y), chunks(16))
    whole = tce.Histogram()
    whole.update(SCORES, LABELS)
    assert h.to_bytes() == whole.to_bytes()
    # A buffer holds every sample, whichever order the batches came in.
    b = tce.SortedBuffer(len(SCORES))
    run_threads(lambda s, y: b.update(s, y), chunks(16))
    assert len(b) == len(SCORES) and b.hits == LABELS.sum()
    assert b.ece_bin(ties="keep") == tce.ece_bin(SCORES, LABELS, ties="keep")  # order-free


def test_threads_estimating_and_merging_at_once_do_not_deadlock():
    a, b = tce.Histogram(), tce.Histogram()
    a.update(SCORES[:100], LABELS[:100])
    b.update(SCORES[100:200], LABELS[100:200])

    errors = []

    def cross(x, y):
        # 40 rounds: the counts at most double per merge, so they stay far below
        # tce.MAX_COUNT (200 rounds of cross merging overflowed it, as they should).
        try:
            for _ in range(40):
                x.merge(y)
                x.ece_bin()
        except Exception as e:  # reported below: a thread's exception is otherwise lost
            errors.append(e)

    t1 = threading.Thread(target=cross, args=(a, b))
    t2 = threading.Thread(target=cross, args=(b, a))
    t1.start(), t2.start()
    t1.join(30), t2.join(30)
    assert not t1.is_alive() and not t2.is_alive()
    assert errors == []
    # Each of the 40 merges added at least the other's first 100 samples.
    assert a.samples >= 100 + 40 * 100 and b.samples >= 100 + 40 * 100


def test_the_gil_is_released_while_the_core_works():
    big = np.tile(SCORES, 40)  # 2·10^6 samples: the sort takes long enough to watch
    labels = np.tile(LABELS, 40)
    started = threading.Event()
    result = []

    def work():
        started.set()
        result.append(tce.ece_sweep(big, labels))

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    ticks = 0
    while t.is_alive():
        ticks += 1
        time.sleep(0)
    t.join()
    assert result and result[0].samples == len(big)
    # With the GIL held through the call this thread would not run until it returned.
    assert ticks > 50, ticks
