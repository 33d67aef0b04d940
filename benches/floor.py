"""The floor of the equal-mass rows of benches/core.rs: numpy's np.sort of the same scores.

    floor.py SCORES RUNS

SCORES is a file of little-endian float64 (the bench writes it). Sorts a fresh copy of
them RUNS times, in place (the copy untimed, as the bench does for its own sorts), after
one warm-up run, and prints the median and the fastest run in milliseconds. Run by
`cargo bench --bench core` with the Python given by TCE_BENCH_PYTHON (default
target/bench-venv/bin/python; make it with
`python3 -m venv target/bench-venv && target/bench-venv/bin/pip install numpy`).
"""

import sys
import time

import numpy as np


def main():
    scores = np.fromfile(sys.argv[1], dtype="<f8")
    runs = int(sys.argv[2])
    work = scores.copy()
    work.sort()  # warm-up
    times = []
    for _ in range(runs):
        np.copyto(work, scores)
        start = time.perf_counter()
        work.sort()
        times.append(time.perf_counter() - start)
    times.sort()
    print(f"{times[len(times) // 2] * 1e3:.6f} {times[0] * 1e3:.6f} {np.__version__}")


if __name__ == "__main__":
    main()
