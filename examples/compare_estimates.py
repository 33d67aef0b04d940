#!/usr/bin/env python3
"""Compares two `tce estimate --json` documents (e.g. the CLI's and examples/estimate.py's).

    python3 examples/compare_estimates.py A.json B.json [--rel 0]

Same n, norm and set of (estimator, binning) entries (in any order), each with the same
bins; floats (accuracy, mean_confidence, values) equal within a relative tolerance
(default 0: bit for bit; mean_confidence may need ~1e-15 if the two sum in different
orders). Exits 0 when they agree, else prints every difference and exits 1.
"""
import argparse
import json
import math
import sys


def close(a, b, rel):
    return a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b)))


def differences(a, b, rel=0.0):
    out = []
    for key in ("n", "norm"):
        if a.get(key) != b.get(key):
            out.append(f"{key}: {a.get(key)!r} vs {b.get(key)!r}")
    for key in ("accuracy", "mean_confidence"):
        if key not in a or key not in b or not close(float(a[key]), float(b[key]), rel):
            out.append(f"{key}: {a.get(key)!r} vs {b.get(key)!r}")

    def entries(doc):
        table = {}
        for e in doc.get("estimates", []):
            # Smooth ECE has no binning and no bins (but a bandwidth).
            table[(e["estimator"], e.get("binning", "-"))] = e
        return table

    ea, eb = entries(a), entries(b)
    for key in sorted(set(ea) | set(eb)):
        if key not in ea or key not in eb:
            out.append(f"{key}: only in {'first' if key in ea else 'second'}")
            continue
        x, y = ea[key], eb[key]
        for field in ("bins", "bandwidth"):
            if x.get(field) != y.get(field):
                out.append(f"{key} {field}: {x.get(field)} vs {y.get(field)}")
        if not close(float(x["value"]), float(y["value"]), rel):
            out.append(f"{key} value: {x['value']!r} vs {y['value']!r}")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--rel", type=float, default=0.0)
    args = parser.parse_args()
    with open(args.first) as f:
        a = json.load(f)
    with open(args.second) as f:
        b = json.load(f)
    diffs = differences(a, b, args.rel)
    for d in diffs:
        print(d)
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
