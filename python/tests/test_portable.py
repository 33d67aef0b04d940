"""Portable bytes across languages: frames written by the C library decode in Python
(committed ones from a C run in c_frames/, and ones written live by c/states.c against
the libtce.a of this run), and frames written by Python decode in C."""

import subprocess
from pathlib import Path

import pytest

import tce
from conftest import DATA, load_csv

FRAMES = Path(__file__).parent / "c_frames"
# c_frames/ was written once by `states encode c_frames < samples`, the samples being
# the first 3000 rows of data/resnet110_c10_test.csv as "score label" lines.
SCORES, LABELS = load_csv(DATA / "resnet110_c10_test.csv", rows=3000)


def python_states():
    """The five states c/states.c builds, in Python, fed the same samples."""
    states = {
        "histogram": tce.Histogram(bins=15, closure="left"),
        "buffer": tce.SortedBuffer(len(SCORES)),
        "window": tce.SlidingWindow(1000),
        "reservoir": tce.Reservoir(500, seed=7),
        "decaying": tce.DecayingHistogram(300.0, bins=15, closure="left"),
    }
    for s in states.values():
        s.update(SCORES, LABELS)
    return states


def estimate(kind, state):
    """The estimate c/states.c prints for a decoded state of this kind."""
    return state.ece_bin() if kind in ("histogram", "decaying") else state.ece_sweep()


CLASSES = {"histogram": tce.Histogram, "buffer": tce.SortedBuffer, "window": tce.SlidingWindow,
           "reservoir": tce.Reservoir, "decaying": tce.DecayingHistogram}


@pytest.mark.parametrize("kind", CLASSES)
def test_committed_c_frames_decode_and_equal_pythons(kind):
    frame = (FRAMES / f"{kind}.bin").read_bytes()
    decoded = CLASSES[kind].from_bytes(frame)
    assert decoded.to_bytes() == frame
    mine = python_states()[kind]
    assert mine.to_bytes() == frame
    assert estimate(kind, decoded) == estimate(kind, mine)


def test_frames_from_a_live_c_run_decode_in_python(c_states, tmp_path):
    lines = "".join(f"{s!r} {y}\n" for s, y in zip(SCORES.tolist(), LABELS.tolist()))
    subprocess.run([str(c_states), "encode", str(tmp_path)], input=lines, text=True, check=True)
    mine = python_states()
    for kind, cls in CLASSES.items():
        frame = (tmp_path / f"{kind}.bin").read_bytes()
        assert frame == mine[kind].to_bytes(), kind
        assert estimate(kind, cls.from_bytes(frame)) == estimate(kind, mine[kind])


def test_frames_from_python_decode_in_c(c_states, tmp_path):
    mine = python_states()
    for kind, state in mine.items():
        (tmp_path / f"{kind}.bin").write_bytes(state.to_bytes())
    out = subprocess.run([str(c_states), "decode", str(tmp_path)], capture_output=True,
                         text=True, check=True).stdout
    printed = {line.split()[0]: line.split()[1:] for line in out.splitlines()}
    assert set(printed) == set(mine)
    for kind, (value, samples, bins) in printed.items():
        e = estimate(kind, mine[kind])
        assert (float(value), int(samples), int(bins)) == (e.value, e.samples, e.bins), kind
