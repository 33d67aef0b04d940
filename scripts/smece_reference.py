#!/usr/bin/env python3
"""Reference smooth ECE values from relplot, for tests/smece.rs.

Run in a virtual environment of its own (not the test venv), from the repository root:

    python3 -m venv /tmp/relplot-venv
    /tmp/relplot-venv/bin/pip install relplot==1.0.3
    /tmp/relplot-venv/bin/python scripts/smece_reference.py > tests/fixtures/smece_relplot.csv

Per bundled file: relplot.smECE (default kernel: reflected Gaussian, automatic bandwidth)
with its bandwidth sigma*, and relplot.smECE_sigma at fixed bandwidths, which tests the
kernel smoothing apart from the bandwidth search. Also the SPEC section 9 worked example.
"""
import glob
import sys

import numpy as np
import relplot
import relplot.metrics
from importlib.metadata import version

SPEC_F = [0.955, 0.943, 0.892, 0.998, 0.78, 0.995, 0.227, 1.0, 0.916, 0.908, 0.997, 0.936,
          0.965, 0.986, 0.906, 0.734, 0.864, 0.976, 0.738, 0.851]
SPEC_Y = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0]
FIXED = [0.2, 0.05, 0.01, 0.003]


def rows():
    yield "spec_worked_example", np.array(SPEC_F, dtype=np.float64), np.array(SPEC_Y, dtype=np.float64)
    for path in sorted(glob.glob("data/*.csv")):
        table = np.genfromtxt(path, delimiter=",", names=True, dtype=np.float64)
        yield path, table["confidence"], table["correct"]


def main():
    out = sys.stdout
    out.write(f"# relplot {version('relplot')}, numpy {np.__version__}, "
              f"python {sys.version.split()[0]}; made by scripts/smece_reference.py\n")
    out.write("# smECE(f, y, return_width=True) and smECE_sigma(f, y, sigma); "
              "f = confidence, y = correct\n")
    out.write("source,n,smece,sigma_star," + ",".join(f"smece_at_{s}" for s in FIXED) + "\n")
    for name, f, y in rows():
        value, sigma = relplot.smECE(f, y, return_width=True)
        fixed = [relplot.smECE_sigma(f, y, s) for s in FIXED]
        out.write(f"{name},{len(f)},{float(value)!r},{float(sigma)!r}," + ",".join(repr(float(v)) for v in fixed) + "\n")


if __name__ == "__main__":
    main()
