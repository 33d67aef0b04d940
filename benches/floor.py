"""The floor of the equal-mass rows of benches/core.rs: numpy's np.sort of the same scores.

    floor.py SCORES

SCORES is a file of little-endian float64 (the bench writes it). The script sorts a fresh
copy of them once (a warm-up) and prints numpy's version and the instruction set its
sort is dispatched to (the bench sets NPY_DISABLE_CPU_FEATURES to try each, and keeps
the fastest). Then, for every line it reads on
standard input, it sorts a fresh copy untimed, copies them again (untimed, as the bench
does for its own sorts), sorts that copy in place and prints the sort's time in
nanoseconds: timed warm, right after an untimed sort, as the bench times its own side of
these rows (`warm` in benches/core.rs). The bench asks for one sort between two runs of
its own candidate, so that both see the same load on the machine. Run by
`cargo bench --bench core` with the Python given by TCE_BENCH_PYTHON (default
target/bench-venv/bin/python; make it with
`python3 -m venv target/bench-venv && target/bench-venv/bin/pip install numpy`).
"""

import sys
import time

import numpy as np


def dispatch():
    """The widest of numpy's dispatch targets that this CPU has and that is not switched
    off: the instruction set its sort runs on."""
    from numpy._core import _multiarray_umath as umath

    found = [t for t in umath.__cpu_dispatch__ if umath.__cpu_features__.get(t)]
    return found[-1] if found else "baseline " + " ".join(umath.__cpu_baseline__)


def main():
    scores = np.fromfile(sys.argv[1], dtype="<f8")
    work = scores.copy()
    work.sort()  # warm-up
    print(np.__version__, dispatch(), flush=True)
    for _ in sys.stdin:
        # Warm: one untimed sort of a fresh copy right before the timed one, as the bench
        # times its own side of these rows (its `warm`).
        np.copyto(work, scores)
        work.sort()
        np.copyto(work, scores)
        start = time.perf_counter_ns()
        work.sort()
        elapsed = time.perf_counter_ns() - start
        print(elapsed, flush=True)


if __name__ == "__main__":
    main()
