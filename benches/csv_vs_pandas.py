"""`tce estimate` on a CSV of 10^6 (confidence, correct) rows against `pandas.read_csv`
of the same file, timed in one run, interleaved (the order alternates), many times.

The whole `tce estimate` process (reading, validation, sort, eight estimators, output)
is compared with pandas' read alone (in process, import excluded). Both wall time and
CPU time (user + system: of the child process for tce, of this process for pandas) are
measured; on a shared machine CPU time is the less disturbed of the two. The ratios are
of the medians and of the fastest runs.

With `--baseline PATH` a second tce binary (say a copy of the release build before a
change) is timed in the same interleaved runs, so that before and after share the
machine's conditions.

Run through benches/csv_vs_pandas.sh, which builds tce and makes the bench venv.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import pandas as pd


def generate(path, rows, seed=1):
    """Beta(5, 1) confidences written with 13 decimals, Bernoulli labels: 18 bytes a row."""
    rng = np.random.default_rng(seed)
    scores = rng.beta(5.0, 1.0, rows)
    labels = (rng.random(rows) < scores).astype(np.int8)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("confidence,correct\n")
        f.write("".join(f"{s:.13f},{y}\n" for s, y in zip(scores, labels)))
    os.replace(tmp, path)


def time_tce(tce, path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([tce, "estimate", path], stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def time_pandas(path):
    start, cpu_start = time.perf_counter(), time.process_time()
    frame = pd.read_csv(path)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    assert len(frame) > 0
    return wall, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tce", default="target/release/tce")
    parser.add_argument("--file", default="target/bench-data/scores-1e6.csv")
    parser.add_argument("--rows", type=int, default=10**6)
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--target", type=float, default=1.2)
    parser.add_argument("--baseline", help="another tce binary, timed in the same runs")
    args = parser.parse_args()
    if not os.path.exists(args.file):
        os.makedirs(os.path.dirname(args.file) or ".", exist_ok=True)
        generate(args.file, args.rows)
    size = os.path.getsize(args.file)
    # Warm the page cache and the programs.
    binaries = [args.tce] + ([args.baseline] if args.baseline else [])
    for binary in binaries:
        time_tce(binary, args.file)
    time_pandas(args.file)
    times = {binary: [] for binary in binaries}
    pandas = []
    for run in range(args.runs):
        order = binaries + [None]
        for binary in order if run % 2 == 0 else order[::-1]:
            if binary is None:
                pandas.append(time_pandas(args.file))
            else:
                times[binary].append(time_tce(binary, args.file))
    tce = times[args.tce]
    print(f"file: {args.file}, {args.rows} rows, {size / 1e6:.1f} MB; {args.runs} interleaved runs")
    print(f"pandas {pd.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    print(f"{'':28} {'median':>9} {'fastest':>9}")
    rows = []
    for kind, index in (("wall", 0), ("cpu", 1)):
        t = [x[index] for x in tce]
        p = [x[index] for x in pandas]
        med = statistics.median(t) / statistics.median(p)
        fast = min(t) / min(p)
        print(f"tce estimate, {kind:4} (ms)      {statistics.median(t) * 1e3:9.1f} {min(t) * 1e3:9.1f}")
        print(f"pandas.read_csv, {kind:4} (ms)   {statistics.median(p) * 1e3:9.1f} {min(p) * 1e3:9.1f}")
        print(f"ratio, {kind:4}                  {med:8.2f}x {fast:8.2f}x")
        rows.append(med)
    if args.baseline:
        for kind, index in (("wall", 0), ("cpu", 1)):
            t = [x[index] for x in times[args.baseline]]
            p = [x[index] for x in pandas]
            print(f"baseline, {kind:4} (ms)          {statistics.median(t) * 1e3:9.1f} {min(t) * 1e3:9.1f}")
            print(f"baseline ratio, {kind:4}         {statistics.median(t) / statistics.median(p):8.2f}x {min(t) / min(p):8.2f}x")
    verdict = "met" if min(rows) <= args.target else "not met"
    print(f"target: at most {args.target}x (ratio of medians, wall or cpu): {verdict}")


if __name__ == "__main__":
    main()
