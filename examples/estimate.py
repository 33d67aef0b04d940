#!/usr/bin/env python3
"""Calibration estimates of a CSV of (confidence, correct) rows through libtce.so (ctypes).

Prints the JSON document of `tce estimate --json` (the CLI):

    {"n": ..., "accuracy": ..., "mean_confidence": ..., "norm": 2.0,
     "estimates": [{"estimator": "ece_bin"|"mce"|"ece_debias"|"ece_sweep",
                    "binning": "equal_width"|"equal_mass", "bins": 15, "value": ...}, ...]}

ECE_bin, MCE and ECE_debias use --bins bins (default 15); ECE_sweep reports its b*.

    python3 examples/estimate.py [--lib path/to/libtce.so] [--bins 15] [--p 2] data/FILE.csv

The library is --lib if given, else $TCE_LIB if set, else target/release/libtce.so (build
it with `cargo rustc --release --lib --features ffi --crate-type staticlib,cdylib`). A
library named by --lib or $TCE_LIB must exist: a wrong path is an error, never a silent
fallback to another library.
"""
import argparse
import csv
import ctypes
import json
import os
import sys
from pathlib import Path

TCE_STATUS_OK = 0
TCE_BINNING_EQUAL_WIDTH = 0
TCE_BINNING_EQUAL_MASS = 1
TCE_SMOOTH_ECE_SCRATCH_LEN = 29314


class Options(ctypes.Structure):
    _fields_ = [
        ("p", ctypes.c_double),
        ("binning", ctypes.c_uint32),
        ("closure", ctypes.c_uint32),
        ("ties", ctypes.c_uint32),
        ("sweep_limit", ctypes.c_uint32),
        ("bins", ctypes.c_size_t),
        ("max_bins", ctypes.c_size_t),
    ]


class Estimate(ctypes.Structure):
    _fields_ = [("value", ctypes.c_double), ("samples", ctypes.c_uint64), ("bins", ctypes.c_size_t)]


class SmoothEce(ctypes.Structure):
    _fields_ = [("value", ctypes.c_double), ("bandwidth", ctypes.c_double)]


class TceError(RuntimeError):
    pass


def find_library(explicit):
    # A path the user named is the only one tried.
    for named, source in ((explicit, "--lib"), (os.environ.get("TCE_LIB"), "TCE_LIB")):
        if named:
            if not Path(named).is_file():
                sys.exit(f"estimate.py: error: {source} {named}: no such library file")
            return str(named)
    root = Path(__file__).resolve().parent.parent
    target = Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
    for candidate in (target / "release" / "libtce.so", root / "target" / "release" / "libtce.so"):
        if candidate.is_file():
            return str(candidate)
    sys.exit("estimate.py: error: libtce.so not found: build it, pass --lib or set TCE_LIB")


def load(path):
    lib = ctypes.CDLL(path)
    lib.tce_status_str.argtypes = [ctypes.c_uint32]
    lib.tce_status_str.restype = ctypes.c_char_p
    lib.tce_version.restype = ctypes.c_char_p
    lib.tce_options_default.restype = Options
    lib.tce_sorted_buffer_new.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
    lib.tce_sorted_buffer_free.argtypes = [ctypes.c_void_p]
    lib.tce_sorted_buffer_free.restype = None
    lib.tce_sorted_buffer_push_batch.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_double),
        ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_uint8),
        ctypes.c_size_t,
    ]
    for name in ("ece_bin", "mce", "ece_debias", "ece_sweep"):
        f = getattr(lib, "tce_sorted_buffer_" + name)
        f.argtypes = [ctypes.c_void_p, ctypes.POINTER(Options), ctypes.POINTER(Estimate)]
    lib.tce_smooth_ece.argtypes = [
        ctypes.POINTER(ctypes.c_double),
        ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_uint8),
        ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_double),
        ctypes.c_size_t,
        ctypes.POINTER(SmoothEce),
    ]
    for f in (lib.tce_sorted_buffer_new, lib.tce_sorted_buffer_push_batch, lib.tce_smooth_ece):
        f.restype = ctypes.c_uint32
    return lib


def check(lib, status):
    if status != TCE_STATUS_OK:
        raise TceError(lib.tce_status_str(status).decode())


def read_csv(path):
    scores, labels = [], []
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        ci, yi = header.index("confidence"), header.index("correct")
        for row in reader:
            if row:
                scores.append(float(row[ci]))
                labels.append(int(row[yi]))
    return scores, labels


def estimate(lib, scores, labels, bins=15, p=2.0):
    n = len(scores)
    buffer = ctypes.c_void_p()
    check(lib, lib.tce_sorted_buffer_new(max(n, 1), ctypes.byref(buffer)))
    try:
        check(lib, lib.tce_sorted_buffer_push_batch(
            buffer, (ctypes.c_double * n)(*scores), n, (ctypes.c_uint8 * n)(*labels), n))
        estimates = []
        for binning, name in ((TCE_BINNING_EQUAL_WIDTH, "equal_width"), (TCE_BINNING_EQUAL_MASS, "equal_mass")):
            options = lib.tce_options_default()
            options.p, options.binning, options.bins = p, binning, bins
            for estimator in ("ece_bin", "ece_sweep", "ece_debias", "mce"):
                out = Estimate()
                f = getattr(lib, "tce_sorted_buffer_" + estimator)
                check(lib, f(buffer, ctypes.byref(options), ctypes.byref(out)))
                estimates.append({"estimator": estimator, "binning": name, "bins": out.bins, "value": out.value})
        # Smooth ECE (relplot's smECE): one call over the arrays, with caller scratch.
        scratch = (ctypes.c_double * TCE_SMOOTH_ECE_SCRATCH_LEN)()
        smooth = SmoothEce()
        check(lib, lib.tce_smooth_ece(
            (ctypes.c_double * n)(*scores), n, (ctypes.c_uint8 * n)(*labels), n,
            scratch, TCE_SMOOTH_ECE_SCRATCH_LEN, ctypes.byref(smooth)))
        estimates.append({"estimator": "smece", "value": smooth.value, "bandwidth": smooth.bandwidth})
    finally:
        lib.tce_sorted_buffer_free(buffer)
    return {
        "n": n,
        "accuracy": sum(labels) / n,
        "mean_confidence": sum(scores) / n,
        "norm": p,
        "estimates": estimates,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--lib")
    parser.add_argument("--bins", type=int, default=15)
    parser.add_argument("--p", type=float, default=2.0)
    args = parser.parse_args()
    path = find_library(args.lib)
    try:
        lib = load(path)
    except OSError as e:
        sys.exit(f"estimate.py: error: cannot load {path}: {e}")
    scores, labels = read_csv(args.file)
    try:
        document = estimate(lib, scores, labels, args.bins, args.p)
    except TceError as e:
        sys.exit(f"tce: {e}")
    print(json.dumps(document))


if __name__ == "__main__":
    main()
