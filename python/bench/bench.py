"""Benchmark of the Python package against numpy and the Python calibration libraries.

    python/bench/bench.py [--sizes 1e4,1e5,1e6,1e7] [--out FILE.md]

Run it in a venv of its own (not the test venv), see docs/python.md#benchmark:

    python3 -m venv python/.venv-bench
    python/.venv-bench/bin/pip install ./python numpy relplot uncertainty-calibration netcal torchmetrics
    python/.venv-bench/bin/python python/bench/bench.py

Each figure is the median of several runs of one call, all in one process and one run
(so ratios compare like with like). The data: n scores from Beta(5, 1) with labels drawn
from them (a calibrated model), float64 scores and uint8 labels; every library gets the
arrays in its preferred form, converted outside the timing. Libraries that are not
installed are reported as such. Values are checked against tce's before timing, so that
a ratio never compares different quantities.
"""

import argparse
import statistics
import sys
import time

import numpy as np

import tce

BINS = 15


def median_seconds(f, budget=1.0, max_runs=25, min_runs=3):
    """Median wall time of f() over runs filling about `budget` seconds."""
    f()  # warm-up (imports, caches, first allocations)
    times = []
    start = time.perf_counter()
    while len(times) < min_runs or (len(times) < max_runs and time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# --- vectorised numpy references --------------------------------------------------------

def numpy_ew_ece(s, y, bins=BINS):
    """Equal-width ECE_bin (p = 2) with np.bincount."""
    index = np.minimum((s * bins).astype(np.intp), bins - 1)
    count = np.bincount(index, minlength=bins)
    conf = np.bincount(index, weights=s, minlength=bins)
    hits = np.bincount(index, weights=y, minlength=bins)
    full = count > 0
    gap = (conf[full] - hits[full]) / count[full]
    return np.sqrt(np.sum(count[full] * gap * gap) / len(s))


def numpy_em_ece(s, y, bins=BINS):
    """Equal-mass ECE_bin (p = 2): stable sort, then sums over rank-split bins."""
    order = np.argsort(s, kind="stable")
    ss, yy = s[order], y[order].astype(np.float64)
    n = len(s)
    starts = (np.arange(bins) * n + bins - 1) // bins  # ceil(k n / B)
    count = np.diff(np.append(starts, n))
    full = count > 0
    conf = np.add.reduceat(ss, starts[full])
    hits = np.add.reduceat(yy, starts[full])
    gap = (conf - hits) / count[full]
    return np.sqrt(np.sum(count[full] * gap * gap) / n)


def numpy_em_sweep(s, y):
    """Equal-mass ECE_sweep (p = 2): one sort, prefix sums, O(b) numpy work per b."""
    order = np.argsort(s, kind="stable")
    ss, yy = s[order], y[order].astype(np.int64)
    n = len(s)
    conf_prefix = np.concatenate([[0.0], np.cumsum(ss)])
    hit_prefix = np.concatenate([[0], np.cumsum(yy)])

    def shape(b):
        edges = (np.arange(b + 1) * n + b - 1) // b
        edges[-1] = n
        count = np.diff(edges)
        hits = np.diff(hit_prefix[edges])
        return edges, count, hits

    best = 1
    for b in range(2, n + 1):
        _, count, hits = shape(b)
        full = count > 0
        c, h = count[full], hits[full]
        if np.any(h[1:] * c[:-1] < h[:-1] * c[1:]):
            break
        best = b
    edges, count, hits = shape(best)
    conf = np.diff(conf_prefix[edges])
    full = count > 0
    gap = (conf[full] - hits[full]) / count[full]
    return np.sqrt(np.sum(count[full] * gap * gap) / n), best


# --- other libraries (each optional) ----------------------------------------------------

def peers():
    """name -> (what it computes, f(s, y) -> float, kind), for installed libraries."""
    found = {}
    try:
        import relplot

        found["relplot binned ECE (EW, L1)"] = (
            "ew_l1", lambda s, y: relplot.metrics.binnedECE(s, y, nbins=BINS))
    except Exception as e:  # noqa: BLE001
        found["relplot"] = (f"not available: {e!r}", None)
    try:
        import netcal.metrics

        ece = netcal.metrics.ECE(bins=BINS)
        found["netcal ECE (EW, L1)"] = ("ew_l1", lambda s, y: ece.measure(s, y))
    except Exception as e:  # noqa: BLE001
        found["netcal"] = (f"not available: {e!r}", None)
    try:
        import calibration as cal

        found["uncertainty-calibration (EM, L2, debiased)"] = (
            "em_debias", lambda s, y: cal.get_calibration_error(s, y, p=2, debias=True,
                                                                 mode="top-label"))
    except Exception as e:  # noqa: BLE001
        found["uncertainty-calibration"] = (f"not available: {e!r}", None)
    try:
        import torch
        from torchmetrics.functional.classification import binary_calibration_error

        def tm(s, y):
            return float(binary_calibration_error(s, y, n_bins=BINS, norm="l1"))

        found["torchmetrics binary_calibration_error (EW, L1)"] = ("ew_l1_torch", tm)
        found["_torch"] = ("module", torch)
    except Exception as e:  # noqa: BLE001
        found["torchmetrics"] = (f"not available: {e!r}", None)
    return found


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.beta(5.0, 1.0, n)
    y = (rng.random(n) < s).astype(np.uint8)
    return s, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5,1e6,1e7")
    parser.add_argument("--out", help="also write the Markdown tables to this file")
    args = parser.parse_args()
    sizes = [int(float(x)) for x in args.sizes.split(",")]
    lines = []

    def emit(line=""):
        print(line)
        lines.append(line)

    others = peers()
    torch = others.pop("_torch", (None, None))[1]
    emit(f"tce {tce.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}")
    for name, (what, f) in others.items():
        if f is None:
            emit(f"- {name}: {what}")
    emit()

    # Per-call overhead: the smallest inputs, where the work is negligible.
    s8, y8 = data(8)
    calls = 20000
    for label, f in [("tce.ece_bin, 8 samples, equal width", lambda: tce.ece_bin(s8, y8, binning="equal_width")),
                     ("tce.ece_sweep, 8 samples", lambda: tce.ece_sweep(s8, y8)),
                     ("Histogram.update, 8 samples", (lambda h: lambda: h.update(s8, y8))(tce.Histogram()))]:
        f()
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        emit(f"per-call: {label}: {(time.perf_counter() - t0) / calls * 1e6:.2f} µs")
    emit()

    header = "| n | what | tce (ms) | other (ms) | other / tce |"
    emit(header)
    emit("|---|---|---|---|---|")
    for n in sizes:
        s, y = data(n)
        yf = y.astype(np.float64)
        rows = []
        # Equal-width ECE_bin against np.bincount.
        t_ew = median_seconds(lambda: tce.ece_bin(s, y, binning="equal_width"))
        ref = numpy_ew_ece(s, yf)
        assert abs(ref - tce.ece_bin(s, y, binning="equal_width").value) < 1e-9
        rows.append(("EW ECE_bin, 15 bins: numpy bincount", t_ew, median_seconds(lambda: numpy_ew_ece(s, yf))))
        # Equal-mass ECE_bin and the sweep against vectorised numpy.
        t_em = median_seconds(lambda: tce.ece_bin(s, y))
        assert abs(numpy_em_ece(s, y) - tce.ece_bin(s, y).value) < 1e-9
        rows.append(("EM ECE_bin, 15 bins: vectorised numpy", t_em, median_seconds(lambda: numpy_em_ece(s, y))))
        t_sweep = median_seconds(lambda: tce.ece_sweep(s, y))
        value, b = numpy_em_sweep(s, y)
        e = tce.ece_sweep(s, y)
        assert e.bins == b and abs(value - e.value) < 1e-9, (e, value, b)
        rows.append((f"EM ECE_sweep (b* = {b}): vectorised numpy", t_sweep,
                     median_seconds(lambda: numpy_em_sweep(s, y))))
        t_debias = median_seconds(lambda: tce.ece_debias(s, y))
        t_l1 = median_seconds(lambda: tce.ece_bin(s, y, binning="equal_width", norm=1.0))
        for name, (what, f) in others.items():
            if f is None:
                continue
            if what == "ew_l1_torch":
                st, yt = torch.from_numpy(s), torch.from_numpy(y.astype(np.int64))
                call = (lambda f, st, yt: lambda: f(st, yt))(f, st, yt)
                mine = tce.ece_bin(s, y, binning="equal_width", closure="right", norm=1.0).value
                base = t_l1
            elif what == "ew_l1":
                call = (lambda f: lambda: f(s, y))(f)
                mine = tce.ece_bin(s, y, binning="equal_width", norm=1.0).value
                base = t_l1
            else:  # em_debias
                call = (lambda f: lambda: f(s, y))(f)
                mine = tce.ece_debias(s, y).value
                base = t_debias
            if n >= 10**7 and what == "em_debias":
                rows.append((f"{name}: skipped at this n (minutes per call)", base, float("nan")))
                continue
            got = float(call())
            note = "" if abs(got - mine) < 1e-6 else f" (its value {got:.6g}, tce {mine:.6g})"
            rows.append((name + note, base, median_seconds(call, budget=2.0, max_runs=5)))
        for what, mine, other in rows:
            emit(f"| {n:.0e} | {what} | {mine * 1e3:.3f} | {other * 1e3:.3f} | {other / mine:.1f}× |")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
