"""Shared fixtures of the Python package's tests.

Nothing here downloads anything: scripts/test installs the package and the test
requirements, builds the `tce` CLI and the C library (TCE_CLI, TCE_LIB_DIR), and these
tests only use what is there. Run them through scripts/test; run alone, they look for
the CLI and libtce.a in target/debug/ and fail (never skip) when those are missing.
"""

import csv
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
CSV_FILES = sorted(DATA.glob("*.csv"))

# SPEC §9: the worked example.
SPEC_F = [0.955, 0.943, 0.892, 0.998, 0.78, 0.995, 0.227, 1.0, 0.916, 0.908, 0.997,
          0.936, 0.965, 0.986, 0.906, 0.734, 0.864, 0.976, 0.738, 0.851]
SPEC_Y = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0]


def assert_debias_close(got, expected, rel=1e-9, abs_squared=1e-12):
    """ECE_debias (p = 2) against an oracle's, compared squared: the estimate is
    sqrt(max(D, 0)), and where D is 0 in exact arithmetic (equal weights cancelling) the
    root turns a rounding residue of D into its square root (1.5e-16 into 1.2e-8), in
    either computation. D itself agrees to rounding; `abs_squared` bounds that residue."""
    assert got ** 2 == pytest.approx(expected ** 2, rel=rel, abs=abs_squared)


def load_csv(path, rows=None):
    """(scores float64, labels uint8) of a bundled CSV, parsed with the csv module."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        pairs = [(float(r["confidence"]), int(r["correct"])) for r in reader]
    if rows is not None:
        pairs = pairs[:rows]
    scores = np.array([p[0] for p in pairs], dtype=np.float64)
    labels = np.array([p[1] for p in pairs], dtype=np.uint8)
    return scores, labels


def _built(env, default, what):
    path = Path(os.environ.get(env, default))
    if not path.exists():
        pytest.fail(
            f"{what} not found at {path}: run the tests through scripts/test "
            f"(which builds it and sets {env})"
        )
    return path


@pytest.fixture(scope="session")
def cli():
    """The `tce` command built in this test run."""
    return _built("TCE_CLI", ROOT / "target" / "debug" / "tce", "the tce CLI")


@pytest.fixture(scope="session")
def c_states(tmp_path_factory):
    """tests/c/states.c compiled against the C library libtce.a built in this run."""
    lib = _built("TCE_LIB_DIR", ROOT / "target" / "debug", "the C library directory") / "libtce.a"
    if not lib.exists():
        pytest.fail(f"{lib} is missing: run the tests through scripts/test")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no C compiler (cc or gcc): scripts/test installs gcc")
    exe = tmp_path_factory.mktemp("c") / "states"
    subprocess.run(
        [cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'include'}",
         str(Path(__file__).parent / "c" / "states.c"), str(lib),
         "-lpthread", "-ldl", "-lm", "-o", str(exe)],
        check=True,
    )
    return exe
