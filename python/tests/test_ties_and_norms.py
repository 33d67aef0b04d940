"""Issue 35 at the Python boundary: the sweep on tied scores (it used to walk every b up to
n on a constant or discrete confidence: 22 s at 3·10^4 samples, 286 s at 10^5), large
finite norms (|gap|^p underflowed and every estimate read 0), and the half-life's range
named in its error."""

import time

import numpy as np
import pytest

import tce

BINNINGS = [
    dict(binning="equal_width"),
    dict(binning="equal_mass", ties="split"),
    dict(binning="equal_mass", ties="keep"),
]


def calibrated(scores, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random(len(scores)) < scores).astype(np.uint8)


@pytest.mark.parametrize("options", BINNINGS)
def test_the_sweep_on_a_constant_score_is_one_bin(options):
    scores = np.full(100_000, 0.8)
    labels = calibrated(scores)
    start = time.perf_counter()
    e = tce.ece_sweep(scores, labels, **options)
    # Generous: the sweep itself now takes microseconds; it took 286 s.
    assert time.perf_counter() - start < 30
    assert e.bins == 1 or options.get("ties") == "split"
    # One bin of everything: |mean score − accuracy|.
    if e.bins == 1:
        assert e.value == pytest.approx(abs(0.8 - labels.mean()), abs=1e-12)


def test_the_sweep_on_six_confidences_stops_at_the_grouping_of_the_six():
    values = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
    scores = np.resize(values, 60_000)
    labels = (np.arange(60_000) % 10 < scores * 10).astype(np.uint8)  # each value calibrated
    e = tce.ece_sweep(scores, labels, binning="equal_width")
    # 11 equal-width bins are the fewest that give 0.9 and 0.95 bins of their own.
    assert e.bins == 11
    assert e.value == pytest.approx(
        tce.ece_bin(scores, labels, binning="equal_width", bins=11).value, abs=1e-15
    )
    kept = tce.ece_sweep(scores, labels, binning="equal_mass", ties="keep")
    assert kept.value == pytest.approx(e.value, abs=1e-15)  # the same six groups


@pytest.mark.parametrize("p", [1000.0, 2000.0, 5000.0])
def test_large_norms_are_not_zero(p):
    rng = np.random.default_rng(1)
    scores = rng.choice([0.6, 0.9, 0.99], 3000)
    labels = calibrated(scores * 0.8, seed=2)  # overconfident: gaps near 0.12 to 0.2
    for function in (tce.ece_bin, tce.ece_sweep):
        low = function(scores, labels, binning="equal_width", norm=2.0).value
        high = function(scores, labels, binning="equal_width", norm=p).value
        # l_p means never decrease with p, and stay below the largest bin gap (MCE).
        largest = tce.mce(scores, labels, binning="equal_width").value
        assert low <= high <= largest + 1e-12
        assert high > 0.1
    assert tce.kde_ece(scores, labels, norm=p).value > tce.kde_ece(scores, labels).value
    # The model's TCE tends to its largest gap: for T(c) = c² on Beta(2, 3), 0.25 at c = ½.
    model = tce.Model(2.0, 3.0, d=2)
    assert 0.2 < model.tce(p) <= 0.25
    assert model.tce(p) > model.tce(2.0)


def test_the_half_life_error_names_the_range():
    for half_life in (0.001, 1e17):
        with pytest.raises(tce.InvalidHalfLife, match=r"1/510 and about 1\.25e16"):
            tce.DecayingHistogram(half_life)


def test_the_report_says_what_few_confidences_mean():
    scores = np.resize(np.array([0.6, 0.7, 0.8, 0.9, 0.95, 0.99]), 2000)
    labels = calibrated(scores, seed=3)
    r = tce.report(scores, labels, resamples=30, simulations=10)
    d = r.to_dict()
    assert d["distinct_scores"] == 6
    assert d["notes"][0].startswith("only 6 distinct confidences among 2000 samples")
    assert "note: only 6 distinct confidences" in str(r)
