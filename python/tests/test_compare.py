"""tce.compare: the numbers and the summary of `tce compare` for the same rows and seed, a
naive check of Δ and of the decision's consistency with the interval, reproducibility by
seed, and named errors for bad input."""

import json
import subprocess

import numpy as np
import pytest

import tce

OPTIONS = {"resamples": 99, "seed": 3}


def two_models(n=500, seed=1):
    """An overconfident A and a calibrated B of one latent probability."""
    rng = np.random.default_rng(seed)
    u = rng.beta(2.0, 5.0, n)
    y = (rng.random(n) < u).astype(np.int64)
    a = 1.0 / (1.0 + ((1.0 - u) / u) ** 2.5)  # σ(2.5 logit u)
    return a, u.copy(), y


def test_the_numbers_and_words_are_the_clis(cli, tmp_path):
    a, b, y = two_models()
    for name, scores in (("a.csv", a), ("b.csv", b)):
        rows = "".join(f"{s!r},{l}\n" for s, l in zip(scores.tolist(), y.tolist()))
        (tmp_path / name).write_text("confidence,correct\n" + rows)
    files = [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]
    r = tce.compare(a, b, y, sources=tuple(files), **OPTIONS)
    args = [str(cli), "compare", *files, "--resamples", "99", "--seed", "3"]
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    assert str(r) == text
    expected = json.loads(subprocess.run(args + ["--json"], check=True, capture_output=True,
                                         text=True).stdout)
    got = r.to_dict()
    for key in ("delta", "se", "interval", "decision", "n", "settings"):
        assert got[key] == expected[key], key
    assert got["a"]["estimate"] == expected["a"]["estimate"]


def test_a_clear_difference_and_its_fields():
    a, b, y = two_models(n=3000)
    r = tce.compare(a, b, y, **OPTIONS)
    assert r.n == 3000
    assert r.statistic == "ece_sweep:equal_mass"
    assert r.delta == r.estimate_a - r.estimate_b
    assert r.delta > 0 and r.reject and r.better == "B"
    lo, hi = r.interval
    assert 0 < lo <= hi
    assert len(r.replicates) == 99
    assert r.method in ("bca", "percentile")
    d = r.to_dict()
    assert d["decision"]["better"] == "B" and d["decision"]["reject"] is True
    assert "B is better calibrated than A" in str(r)
    # ECE_bin equal-width by hand: Δ of the two 15-bin estimates (p = 2).
    def ece_bin(s):
        k = np.minimum((s * 15).astype(int), 14)
        total = 0.0
        for b_ in range(15):
            m = k == b_
            if m.any():
                total += m.mean() * (s[m].mean() - y[m].mean()) ** 2
        return np.sqrt(total)

    r = tce.compare(a, b, y, statistic="ece_bin:equal_width", **OPTIONS)
    assert r.delta == pytest.approx(ece_bin(a) - ece_bin(b), abs=1e-12)


def test_identical_models_do_not_differ_and_seeds_reproduce():
    a, _, y = two_models()
    r = tce.compare(a, a, y, **OPTIONS)
    assert r.delta == 0 and r.p_value == 1 and not r.reject and r.better is None
    assert r.method == "percentile"
    a, b, y = two_models(n=400)
    one = tce.compare(a, b, y, resamples=50, seed=7)
    assert one.to_json() == tce.compare(a, b, y, resamples=50, seed=7).to_json()
    assert one.replicates != tce.compare(a, b, y, resamples=50, seed=8).replicates


def test_bad_input_is_a_named_error():
    a, b, y = two_models(n=50)
    with pytest.raises(tce.LengthMismatch):
        tce.compare(a, b[:40], y)
    bad = b.copy()
    bad[3] = np.nan
    with pytest.raises(tce.NonFiniteScore, match="model B"):
        tce.compare(a, bad, y)
    bad[3] = 1.5
    with pytest.raises(tce.ScoreOutOfRange, match="model B"):
        tce.compare(a, bad, y)
    with pytest.raises(tce.NoSamples):
        tce.compare(np.array([]), np.array([]), np.array([], dtype=np.int64))
    with pytest.raises(tce.InvalidOption, match="not a calibration error"):
        tce.compare(a, b, y, statistic="spiegelhalter")
    with pytest.raises(tce.InvalidOption, match="resamples"):
        tce.compare(a, b, y, resamples=0)
    with pytest.raises(tce.InvalidOption, match="alpha"):
        tce.compare(a, b, y, alpha=0.0)
    with pytest.raises(tce.Error):
        tce.compare(a, b, np.full(50, 2))
