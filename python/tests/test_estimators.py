"""Every function against the Rust core: the CLI's JSON on the bundled data (bit for
bit), the spec's worked values, and the simulator's path through the core."""

import json
import subprocess

import numpy as np
import pytest

import tce
from conftest import CSV_FILES, SPEC_F, SPEC_Y, load_csv

# (CLI options, the same as keywords)
SETTINGS = [
    ([], dict(bins=15, norm=2.0, closure="left", ties="split",
              sweep_limit="samples", max_bins=None)),
    (["--bins", "10", "--norm", "1", "--closure", "right", "--ties", "keep",
      "--paper-limit", "--max-bins", "7"],
     dict(bins=10, norm=1.0, closure="right", ties="keep",
          sweep_limit="paper_code", max_bins=7)),
    (["--bins", "7", "--norm", "3.5"],
     dict(bins=7, norm=3.5, closure="left", ties="split",
          sweep_limit="samples", max_bins=None)),
]


def python_estimate(estimator, binning, scores, labels, o):
    common = dict(binning=binning, closure=o["closure"], ties=o["ties"])
    if estimator == "ece_sweep":
        return tce.ece_sweep(scores, labels, norm=o["norm"], sweep_limit=o["sweep_limit"],
                             max_bins=o["max_bins"], **common)
    if estimator == "mce":
        return tce.mce(scores, labels, bins=o["bins"], **common)
    function = {"ece_bin": tce.ece_bin, "ece_debias": tce.ece_debias}[estimator]
    return function(scores, labels, bins=o["bins"], norm=o["norm"], **common)


@pytest.mark.parametrize("path", CSV_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("cli_args,keywords", SETTINGS, ids=["defaults", "right-keep-l1", "p3.5"])
def test_every_estimate_equals_the_cli_bit_for_bit(cli, path, cli_args, keywords):
    out = subprocess.run([str(cli), "estimate", "--json", *cli_args, str(path)],
                         check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    scores, labels = load_csv(path)
    assert report["n"] == len(scores)
    assert len(report["estimates"]) == 9  # eight binned estimates and smooth ECE
    for row in report["estimates"]:
        if row["estimator"] == "smece":
            e = tce.smooth_ece(scores, labels)
            assert (e.value, e.bandwidth, e.samples) == (
                row["value"], row["bandwidth"], report["n"]), row
            continue
        e = python_estimate(row["estimator"], row["binning"], scores, labels, keywords)
        assert (e.value, e.bins, e.samples) == (row["value"], row["bins"], report["n"]), row


def test_smooth_ece_equals_relplot_on_the_bundled_data():
    # tests/fixtures/smece_relplot.csv: relplot 1.0.3's smECE and sigma* (its header
    # says how it was made).
    fixture = CSV_FILES[0].parent.parent / "tests" / "fixtures" / "smece_relplot.csv"
    rows = [line.split(",") for line in fixture.read_text().splitlines()
            if line and not line.startswith("#")][1:]
    checked = 0
    for source, n, value, sigma, *_ in rows:
        if source == "spec_worked_example":
            scores, labels = np.array(SPEC_F), np.array(SPEC_Y)
        else:
            scores, labels = load_csv(CSV_FILES[0].parent.parent / source)
        e = tce.smooth_ece(scores, labels)
        assert e.samples == int(n)
        assert e.bandwidth == float(sigma)
        assert abs(e.value - float(value)) < 1e-12, source
        checked += 1
    assert checked == 7


SPEC_TABLE = [  # SPEC §9: (binning, bins or None for the sweep, p=1, p=2, b*)
    ("equal_width", 2, 0.028350000000, 0.053671785198, 2),
    ("equal_width", 5, 0.028350000000, 0.060490081832, 5),
    ("equal_width", 15, 0.091050000000, 0.136057083608, 15),
    ("equal_mass", 2, 0.053250000000, 0.060326486720, 2),
    ("equal_mass", 5, 0.070850000000, 0.086229562796, 5),
    ("equal_mass", 15, 0.139250000000, 0.209971188500, 15),
    ("equal_mass", None, 0.104650000000, 0.146112599274, 9),
    ("equal_width", None, 0.061650000000, 0.076884984939, 11),
]


@pytest.mark.parametrize("binning,bins,l1,l2,b", SPEC_TABLE)
def test_the_spec_worked_example(binning, bins, l1, l2, b):
    for p, expected in [(1.0, l1), (2.0, l2)]:
        if bins is None:
            e = tce.ece_sweep(SPEC_F, SPEC_Y, binning=binning, norm=p)
        else:
            e = tce.ece_bin(SPEC_F, SPEC_Y, binning=binning, bins=bins, norm=p)
        assert abs(e.value - expected) < 1e-12
        assert (e.bins, e.samples) == (b, 20)


def test_the_spec_debias_and_kde_values():
    for binning, bins, expected in [("equal_width", 2, 0), ("equal_width", 5, 0),
                                    ("equal_width", 15, 0), ("equal_mass", 2, 0),
                                    ("equal_mass", 5, 0), ("equal_mass", 15, 0.108649206164)]:
        e = tce.ece_debias(SPEC_F, SPEC_Y, binning=binning, bins=bins)
        assert abs(e.value - expected) < 1e-12
    k = tce.kde_ece(SPEC_F, SPEC_Y, norm=2.0)
    assert abs(k.bandwidth - 0.035136157722) < 1e-12
    assert abs(k.raw - 0.00811667) < 1e-6
    assert k.value == k.raw ** 0.5 or abs(k.value - k.raw ** 0.5) < 1e-15
    k1 = tce.kde_ece(SPEC_F, SPEC_Y, norm=1.0)
    assert abs(k1.raw - 0.06632439) < 1e-6 and k1.value == k1.raw


def test_every_estimator_equals_the_simulators_path_through_the_core():
    """The simulator evaluates each estimator by name on its data sets (SortedSamples,
    kde): the same values as the functions, times 100, bit for bit."""
    model = tce.Model(2.8, 0.05, "polynomial", d=2)
    names = ["ece_bin:equal_width", "ece_bin:equal_mass:keep", "ece_sweep:equal_mass",
             "ece_sweep:equal_width:right", "ece_debias:equal_mass", "mce:equal_width", "kde"]
    result = tce.simulate(model, [300], bins=[15], estimators=names, repetitions=3, seed=5)
    assert result["tce"] == 100 * model.tce(2.0)
    for cell in result["cells"]:
        for rep, value in enumerate(cell["estimates"]):
            s, y = model.sample(300, seed=5, rep=rep)
            name = cell["estimator"]
            f = {
                "ece_bin:equal_width": lambda: tce.ece_bin(s, y, binning="equal_width"),
                "ece_bin:equal_mass:keep": lambda: tce.ece_bin(s, y, ties="keep"),
                "ece_sweep:equal_mass": lambda: tce.ece_sweep(s, y),
                "ece_sweep:equal_width:right": lambda: tce.ece_sweep(
                    s, y, binning="equal_width", closure="right"),
                "ece_debias:equal_mass": lambda: tce.ece_debias(s, y),
                "mce:equal_width": lambda: tce.mce(s, y, binning="equal_width"),
                "kde": lambda: tce.kde_ece(s, y),
            }[name]
            assert value == 100 * f().value, (name, rep)


def test_reliability_bins():
    r = tce.reliability_bins(SPEC_F, SPEC_Y, binning="equal_width", bins=5)
    assert isinstance(r, tce.ReliabilityBins)
    np.testing.assert_array_equal(r.lower, [0, 0.2, 0.4, 0.6, 0.8])
    np.testing.assert_array_equal(r.upper, [0.2, 0.4, 0.6, 0.8, 1.0])
    np.testing.assert_array_equal(r.count, [0, 1, 0, 3, 16])
    np.testing.assert_array_equal(r.hits, [0, 0, 0, 2, 15])
    assert np.isnan(r.mean_score[0]) and np.isnan(r.accuracy[0])
    assert np.isnan(r.accuracy[2])
    assert r.mean_score[1] == 0.227 and r.accuracy[3] == 2 / 3
    em = tce.reliability_bins(SPEC_F, SPEC_Y, bins=5)
    np.testing.assert_array_equal(em.count, [4] * 5)
    srt = sorted(SPEC_F)
    np.testing.assert_array_equal(em.lower, srt[0::4])
    np.testing.assert_array_equal(em.upper, srt[3::4])
    # Three samples in five equal-mass bins: sizes 1,1,0,1,0 (SPEC §3.2); empty bins NaN.
    sparse = tce.reliability_bins([0.1, 0.5, 0.9], [0, 1, 1], bins=5)
    np.testing.assert_array_equal(sparse.count, [1, 1, 0, 1, 0])
    assert np.isnan(sparse.lower[2]) and np.isnan(sparse.upper[4])
    # The histogram's bins are the function's.
    h = tce.Histogram(bins=5)
    h.update(SPEC_F, SPEC_Y)
    for a, b in zip(h.reliability_bins(), r):
        np.testing.assert_array_equal(a, b)


def test_multiclass_tables_reduce_to_the_top_label():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(500, 7)) * 3
    classes = rng.integers(0, 7, size=500)
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    top = probabilities.max(axis=1)
    correct = (probabilities.argmax(axis=1) == classes).astype(np.uint8)
    for f in (tce.ece_bin, tce.ece_sweep, tce.ece_debias, tce.mce):
        assert f(probabilities, classes) == f(top, correct)
    # From logits: the core's softmax, 1 / Σ exp(z − max), equal up to rounding.
    z = logits - logits.max(axis=1, keepdims=True)
    from_logits = 1.0 / np.exp(z).sum(axis=1)
    assert abs(tce.ece_bin(logits, classes, logits=True).value
               - tce.ece_bin(from_logits, correct).value) < 1e-12
    # Ties go to the first maximal class.
    table = np.array([[0.5, 0.5], [0.4, 0.6]])
    assert tce.ece_bin(table, [0, 0], bins=1) == tce.ece_bin([0.5, 0.6], [1, 0], bins=1)
