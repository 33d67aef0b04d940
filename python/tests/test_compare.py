"""tce.compare: the numbers and the summary of `tce compare` for the same rows and seed,
each model with its own labels; Δ the difference of the two models' own estimates
(tce.ece_sweep, and ECE_bin by hand); class tables, each model's correctness its own
argmax against the shared true class; reproducibility by seed; and named errors for bad
input."""

import json
import subprocess

import numpy as np
import pytest

import tce

OPTIONS = {"resamples": 99, "seed": 3}


def two_classifiers(n=500, seed=1):
    """Two classifiers on the same rows, right on different rows: a latent probability u,
    A's correctness and B's each Bernoulli(u), independent given u; A overconfident
    σ(2.5 logit u), B calibrated (its score is u)."""
    rng = np.random.default_rng(seed)
    u = rng.beta(2.0, 5.0, n)
    y_a = (rng.random(n) < u).astype(np.int64)
    y_b = (rng.random(n) < u).astype(np.int64)
    a = 1.0 / (1.0 + ((1.0 - u) / u) ** 2.5)  # σ(2.5 logit u)
    return a, y_a, u.copy(), y_b


def test_the_numbers_and_words_are_the_clis(cli, tmp_path):
    a, y_a, b, y_b = two_classifiers()
    assert (y_a != y_b).sum() > 50
    for name, scores, labels in (("a.csv", a, y_a), ("b.csv", b, y_b)):
        rows = "".join(f"{s!r},{l}\n" for s, l in zip(scores.tolist(), labels.tolist()))
        (tmp_path / name).write_text("confidence,correct\n" + rows)
    files = [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]
    r = tce.compare(a, y_a, b, y_b, sources=tuple(files), **OPTIONS)
    args = [str(cli), "compare", *files, "--resamples", "99", "--seed", "3"]
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    assert str(r) == text
    expected = json.loads(subprocess.run(args + ["--json"], check=True, capture_output=True,
                                         text=True).stdout)
    got = r.to_dict()
    for key in ("delta", "se", "interval", "decision", "n", "settings"):
        assert got[key] == expected[key], key
    assert got["a"]["estimate"] == expected["a"]["estimate"]
    assert got["b"]["estimate"] == expected["b"]["estimate"]


def test_delta_is_the_difference_of_each_models_own_estimate():
    a, y_a, b, y_b = two_classifiers(n=3000)
    r = tce.compare(a, y_a, b, y_b, **OPTIONS)
    assert r.n == 3000
    assert r.statistic == "ece_sweep:equal_mass"
    # Each side is the single-model estimator on that model's own (score, label) pairs.
    assert r.estimate_a == tce.ece_sweep(a, y_a).value
    assert r.estimate_b == tce.ece_sweep(b, y_b).value
    assert r.delta == r.estimate_a - r.estimate_b
    assert r.delta > 0 and r.reject and r.better == "B"
    lo, hi = r.interval
    assert 0 < lo <= hi
    assert len(r.replicates) == 99
    assert r.method in ("bca", "percentile")
    d = r.to_dict()
    assert d["decision"]["better"] == "B" and d["decision"]["reject"] is True
    assert "B is better calibrated than A" in str(r)

    # ECE_bin equal-width by hand: Δ of the two 15-bin estimates (p = 2), each on its
    # own labels.
    def ece_bin(s, y):
        k = np.minimum((s * 15).astype(int), 14)
        total = 0.0
        for b_ in range(15):
            m = k == b_
            if m.any():
                total += m.mean() * (s[m].mean() - y[m].mean()) ** 2
        return np.sqrt(total)

    r = tce.compare(a, y_a, b, y_b, statistic="ece_bin:equal_width", **OPTIONS)
    assert r.delta == pytest.approx(ece_bin(a, y_a) - ece_bin(b, y_b), abs=1e-12)
    # With B's labels taken for A's, A's estimate changes: the labels are A's own.
    shared = tce.compare(a, y_b, b, y_b, statistic="ece_bin:equal_width", **OPTIONS)
    assert shared.estimate_a == pytest.approx(ece_bin(a, y_b), abs=1e-12)
    assert shared.estimate_a != r.estimate_a


def test_class_tables_each_models_argmax_against_the_true_class():
    rng = np.random.default_rng(5)
    n, k = 400, 4
    y = rng.integers(0, k, n)

    def table(sharpness):
        logits = rng.normal(size=(n, k)) + sharpness * np.eye(k)[y]
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    p_a, p_b = table(1.0), table(2.0)
    r = tce.compare(p_a, y, p_b, y, **OPTIONS)
    # The top-label reduction by hand: the largest probability, correct where its class
    # is the true one.
    top = lambda p: (p.max(axis=1), (p.argmax(axis=1) == y).astype(np.int64))
    (s_a, c_a), (s_b, c_b) = top(p_a), top(p_b)
    assert (c_a != c_b).sum() > 50
    expected = tce.compare(s_a, c_a, s_b, c_b, **OPTIONS)
    assert r.delta == expected.delta
    assert r.replicates == expected.replicates
    assert r.p_value == expected.p_value
    assert r.to_dict()["a"]["input"]["values"] == "probabilities"
    # A true class that differs on row 7: not the same examples.
    other = y.copy()
    other[7] = (other[7] + 1) % k
    with pytest.raises(tce.InvalidLabel, match="row 7: model A's input has true class"):
        tce.compare(p_a, y, p_b, other, **OPTIONS)


def test_identical_models_do_not_differ_and_seeds_reproduce():
    a, y_a, _, _ = two_classifiers()
    r = tce.compare(a, y_a, a, y_a, **OPTIONS)
    assert r.delta == 0 and r.p_value == 1 and not r.reject and r.better is None
    assert r.method == "percentile"
    a, y_a, b, y_b = two_classifiers(n=400)
    one = tce.compare(a, y_a, b, y_b, resamples=50, seed=7)
    assert one.to_json() == tce.compare(a, y_a, b, y_b, resamples=50, seed=7).to_json()
    assert one.replicates != tce.compare(a, y_a, b, y_b, resamples=50, seed=8).replicates


def test_bad_input_is_a_named_error():
    a, y_a, b, y_b = two_classifiers(n=50)
    with pytest.raises(tce.LengthMismatch, match="50 rows of A, 40 rows of B"):
        tce.compare(a, y_a, b[:40], y_b[:40])
    with pytest.raises(tce.LengthMismatch):
        tce.compare(a, y_a, b, y_b[:40])
    bad = b.copy()
    bad[3] = np.nan
    with pytest.raises(tce.NonFiniteScore, match="model B"):
        tce.compare(a, y_a, bad, y_b)
    bad[3] = 1.5
    with pytest.raises(tce.ScoreOutOfRange, match="model B"):
        tce.compare(a, y_a, bad, y_b)
    with pytest.raises(tce.NoSamples):
        empty = np.array([], dtype=np.int64)
        tce.compare(np.array([]), empty, np.array([]), empty)
    with pytest.raises(tce.InvalidOption, match="not a calibration error"):
        tce.compare(a, y_a, b, y_b, statistic="spiegelhalter")
    with pytest.raises(tce.InvalidOption, match="resamples"):
        tce.compare(a, y_a, b, y_b, resamples=0)
    with pytest.raises(tce.InvalidOption, match="alpha"):
        tce.compare(a, y_a, b, y_b, alpha=0.0)
    with pytest.raises(tce.Error):
        tce.compare(a, y_a, b, np.full(50, 2))


def test_ids_pair_rows_as_the_order_does():
    """B's rows shuffled and paired back by id give the comparison of the rows in order,
    bit for bit; ids of any type compare as their str(); bad ids are named errors."""
    a, y_a, b, y_b = two_classifiers(n=300, seed=4)
    ids = np.arange(300)
    perm = np.random.default_rng(5).permutation(300)
    by_order = tce.compare(a, y_a, b, y_b, **OPTIONS)
    by_id = tce.compare(a, y_a, b[perm], y_b[perm], ids_a=ids, ids_b=[str(i) for i in ids[perm]],
                        **OPTIONS)
    assert (by_id.delta, by_id.interval, by_id.p_value) == \
        (by_order.delta, by_order.interval, by_order.p_value)
    assert by_id.replicates == by_order.replicates
    # Shuffled but paired by position: the same Δ (each CE is its own rows'), another pairing.
    shuffled = tce.compare(a, y_a, b[perm], y_b[perm], **OPTIONS)
    assert shuffled.delta == pytest.approx(by_order.delta, abs=1e-12)
    assert shuffled.replicates != by_order.replicates
    with pytest.raises(tce.InvalidOption, match="give both or neither"):
        tce.compare(a, y_a, b, y_b, ids_a=ids, **OPTIONS)
    with pytest.raises(tce.InvalidOption, match='"7"'):
        tce.compare(a, y_a, b, y_b, ids_a=ids, ids_b=[*ids[:7], 300, *ids[8:]], **OPTIONS)
    with pytest.raises(tce.InvalidOption, match='"1"'):
        tce.compare(a, y_a, b, y_b, ids_a=[0, 1, 1, *ids[3:]], ids_b=ids, **OPTIONS)
    with pytest.raises(tce.LengthMismatch):
        tce.compare(a, y_a, b, y_b, ids_a=ids[:10], ids_b=ids, **OPTIONS)
