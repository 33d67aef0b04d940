"""tce.by_group and tce.p_adjust: each group's row against the single calls on its rows,
the adjustments against hand-computed values (R's p.adjust) and a naive implementation
written here, their error rates on simulated p-values with known truth, flags, inputs
and named errors."""

import numpy as np
import pandas as pd
import pytest

import tce

# Small but real settings: every group's test and bootstrap run in full.
FAST = dict(resamples=200, test_resamples=99, test_power_simulations=20, seed=7)


def naive_holm(p):
    p = np.asarray(p, dtype=float)
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    out = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def naive_bh(p):
    p = np.asarray(p, dtype=float)
    m = len(p)
    out = np.empty(m)
    for i in range(m):
        # min over every j with p_j >= p_i of p_j · m / rank_j (ranks of the sorted p).
        ranks = {j: 1 + sum(1 for k in range(m) if (p[k], k) < (p[j], j)) for j in range(m)}
        out[i] = min(min(1.0, p[j] * m / ranks[j]) for j in range(m) if p[j] >= p[i])
    return out


def test_p_adjust_worked_values():
    # By hand: p = 0.01, 0.04, 0.03, 0.005; sorted 0.005, 0.01, 0.03, 0.04 (m = 4).
    # Holm: 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06, max(1·0.04, 0.06) = 0.06.
    # BH: min over the larger ones of p·4/rank: 0.02, 0.02, 0.04, 0.04.
    # (R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") gives 0.03 0.06 0.06 0.02.)
    p = [0.01, 0.04, 0.03, 0.005]
    np.testing.assert_allclose(tce.p_adjust(p), [0.03, 0.06, 0.06, 0.02], rtol=1e-12)
    np.testing.assert_allclose(tce.p_adjust(p, method="bh"), [0.02, 0.04, 0.04, 0.02],
                               rtol=1e-12)
    # Capped at 1, and NaN left out of the family (m = 2 here), as R leaves out NA.
    got = tce.p_adjust([0.6, np.nan, 0.3], method="holm")
    assert got[0] == 0.6 and np.isnan(got[1]) and got[2] == 0.6
    assert tce.p_adjust([0.6, 0.7, 0.9]).tolist() == [1.0, 1.0, 1.0]
    assert tce.p_adjust([]).tolist() == []


def test_p_adjust_against_naive_code():
    rng = np.random.default_rng(3)
    for m in (1, 2, 5, 17):
        p = rng.uniform(size=m) ** 3
        p[: m // 3] = p[0]  # ties
        np.testing.assert_allclose(tce.p_adjust(p, method="holm"), naive_holm(p), rtol=1e-13)
        np.testing.assert_allclose(tce.p_adjust(p, method="bh"), naive_bh(p), rtol=1e-13)


def test_p_adjust_error_rates_on_simulated_p_values():
    # Known truth: 10 hypotheses, the first 6 null (uniform p-values), 4 false (p from a
    # one-sided z-test with effect 3). 4000 families: Holm's family-wise error rate and
    # BH's false discovery rate stay at most alpha = 0.05 (plus 3 standard errors).
    from scipy.stats import norm

    rng = np.random.default_rng(11)
    families, alpha = 4000, 0.05
    null = np.arange(10) < 6
    any_false_rejection, fdp = [], []
    for _ in range(families):
        z = rng.normal(size=10) + np.where(null, 0.0, 3.0)
        p = norm.sf(z)
        holm = tce.p_adjust(p, method="holm") <= alpha
        bh = tce.p_adjust(p, method="bh") <= alpha
        any_false_rejection.append((holm & null).any())
        fdp.append((bh & null).sum() / max(bh.sum(), 1))
    se = np.sqrt(alpha * (1 - alpha) / families)
    assert np.mean(any_false_rejection) <= alpha + 3 * se
    # BH's bound is m0/m · alpha = 0.03 for independent tests.
    assert np.mean(fdp) <= 0.03 + 3 * np.std(fdp) / np.sqrt(families)


def test_p_adjust_errors():
    with pytest.raises(tce.InvalidOption, match="bonferroni"):
        tce.p_adjust([0.1], method="bonferroni")
    with pytest.raises(tce.InvalidOption, match="index 1 is 1.5"):
        tce.p_adjust([0.1, 1.5])
    with pytest.raises(tce.ShapeMismatch):
        tce.p_adjust([[0.1, 0.2]])


def data(seed=0, sizes=(300, 250, 200), shift=(0.0, 0.0, 0.25)):
    """Groups a, b, c...: scores from Beta(4, 2), labels drawn from score - shift (group c
    overconfident by 0.25: miscalibrated)."""
    rng = np.random.default_rng(seed)
    scores, labels, groups = [], [], []
    for g, (n, d) in enumerate(zip(sizes, shift)):
        s = rng.beta(4, 2, size=n)
        scores.append(s)
        labels.append((rng.uniform(size=n) < np.clip(s - d, 0, 1)).astype(np.uint8))
        groups += ["abcdefgh"[g]] * n
    order = rng.permutation(sum(sizes))  # rows of the groups interleaved
    return (np.concatenate(scores)[order], np.concatenate(labels)[order],
            np.array(groups)[order])


def test_each_row_equals_the_single_calls_on_its_rows():
    s, y, g = data()
    table = tce.by_group(s, y, g, **FAST)
    assert list(table["group"]) == ["a", "b", "c"]
    assert table.attrs["estimator"] == "ece_sweep:equal_mass"
    for _, row in table.iterrows():
        rows = g == row["group"]
        r = tce.report(s[rows], y[rows], seed=7, resamples=200, simulations=1, refits=0,
                       test=False)
        est = next(e for e in r.estimators if e["name"] == "ece_sweep:equal_mass")
        assert row["n"] == rows.sum() and row["hits"] == y[rows].sum()
        assert row["estimate"] == est["value"] == tce.ece_sweep(s[rows], y[rows]).value
        bca = est["bootstrap"]["bca"]
        assert row["interval_kind"] == "bca"
        assert (row["lower"], row["upper"]) == (bca["lower"], bca["upper"])
        t = tce.calibration_test(s[rows], y[rows], seed=7, resamples=99, power_simulations=20)
        assert row["statistic"] == t.statistic
        assert row["p_value"] == t.p_value
        assert not row["flag"] and row["reason"] is None
    # The adjustment of the three p-values, Holm by default.
    np.testing.assert_array_equal(table["p_adjusted"], naive_holm(table["p_value"]))
    assert list(table["reject"]) == list(table["p_adjusted"] <= 0.05)
    # Known truth: the overconfident group (c) is the one found miscalibrated.
    assert list(table["reject"]) == [False, False, True]


def test_other_estimators_and_bh():
    s, y, g = data(sizes=(120, 150), shift=(0.0, 0.2))
    table = tce.by_group(s, y, g, estimator="ece_bin:equal_width", bins=10, p_adjust="bh",
                         test_statistic="spiegelhalter", **FAST)
    for _, row in table.iterrows():
        rows = g == row["group"]
        assert row["estimate"] == tce.ece_bin(s[rows], y[rows], binning="equal_width",
                                              bins=10).value
        r = tce.report(s[rows], y[rows], seed=7, resamples=200, bins=10, simulations=1,
                       refits=0, test=False)
        est = next(e for e in r.estimators if e["name"] == "ece_bin:equal_width")
        expected = est["bootstrap"]["bca"] or est["bootstrap"]["percentile"]
        assert (row["lower"], row["upper"]) == (expected["lower"], expected["upper"])
        t = tce.calibration_test(s[rows], y[rows], seed=7, statistic="spiegelhalter",
                                 resamples=99, power_simulations=20, bins=10)
        assert row["statistic"] == "spiegelhalter" and row["p_value"] == t.p_value
    np.testing.assert_allclose(table["p_adjusted"], naive_bh(table["p_value"]), rtol=1e-15)
    unadjusted = tce.by_group(s, y, g, p_adjust=None, **FAST)
    assert list(unadjusted["p_adjusted"]) == list(unadjusted["p_value"])


def test_small_and_one_class_groups_are_flagged_not_dropped():
    s, y, g = data(sizes=(200, 12, 60), shift=(0.0, 0.0, 0.0))
    y = y.copy()
    y[g == "c"] = 1  # one class of labels
    table = tce.by_group(s, y, g, **FAST)
    assert list(table["group"]) == ["a", "b", "c"]
    a, b, c = (table.iloc[i] for i in range(3))
    assert not a["flag"]
    assert b["flag"] and "n = 12 < min_samples = 30" in b["reason"]
    assert c["flag"] and "one class of labels (every label is 1)" in c["reason"]
    # Flagged rows keep what is defined, and stay out of the multiple-testing family.
    assert b["estimate"] == tce.ece_sweep(s[g == "b"], y[g == "b"]).value
    assert np.isnan(b["p_adjusted"]) and pd.isna(b["reject"])
    assert np.isnan(c["p_adjusted"]) and pd.isna(c["reject"])
    assert a["p_adjusted"] == a["p_value"]  # a family of one
    # min_samples moves the line.
    assert not tce.by_group(s, y, g, min_samples=10, **FAST).iloc[1]["flag"]


def test_pandas_numpy_and_column_inputs_agree():
    s, y, g = data(sizes=(80, 90))
    expected = tce.by_group(s, y, g, **FAST)
    frame = pd.DataFrame({"score": s, "label": y, "model": g})
    from_series = tce.by_group(frame["score"], frame["label"], frame["model"], **FAST)
    from_columns = tce.by_group("score", "label", "model", data=frame, **FAST)
    for got in (from_series, from_columns):
        assert list(got.columns) == ["model"] + list(expected.columns[1:])
        pd.testing.assert_frame_equal(got.drop(columns="model"),
                                      expected.drop(columns="group"))
    # Two group columns: one row per pair of keys, each the single call on its rows.
    frame["day"] = np.where(np.arange(len(s)) % 2 == 0, "mon", "tue")
    two = tce.by_group("score", "label", ["model", "day"], data=frame, **FAST)
    assert list(two[["model", "day"]].itertuples(index=False, name=None)) == [
        ("a", "mon"), ("a", "tue"), ("b", "mon"), ("b", "tue")]
    rows = (frame["model"] == "b") & (frame["day"] == "mon")
    assert two.iloc[2]["n"] == rows.sum()
    assert two.iloc[2]["estimate"] == tce.ece_sweep(s[rows], y[rows]).value


def test_class_tables_are_reduced_to_the_top_label():
    rng = np.random.default_rng(5)
    probs = rng.dirichlet([3, 1, 1], size=200)
    ids = rng.integers(0, 3, size=200)
    g = np.where(np.arange(200) < 90, "x", "y")
    table = tce.by_group(probs, ids, g, **FAST)
    for _, row in table.iterrows():
        rows = g == row["group"]
        assert row["estimate"] == tce.ece_sweep(probs[rows], ids[rows]).value
        t = tce.calibration_test(probs[rows], ids[rows], seed=7, resamples=99,
                                 power_simulations=20)
        assert row["p_value"] == t.p_value
        top = probs[rows].argmax(axis=1) == ids[rows]
        assert row["hits"] == top.sum()


def test_reproducible_with_the_seed():
    s, y, g = data(sizes=(60, 70))
    one = tce.by_group(s, y, g, **FAST)
    pd.testing.assert_frame_equal(one, tce.by_group(s, y, g, **FAST))
    other = tce.by_group(s, y, g, **dict(FAST, seed=8))
    assert list(other["estimate"]) == list(one["estimate"])  # no randomness in it
    assert list(other["lower"]) != list(one["lower"])


def test_named_errors():
    s, y, g = data(sizes=(40, 40))
    with pytest.raises(tce.LengthMismatch, match="79 group keys for 80 rows"):
        tce.by_group(s, y, g[:-1])
    with pytest.raises(tce.LengthMismatch, match="80 rows of scores and 79 labels"):
        tce.by_group(s, y[:-1], g)
    with_nan = pd.Series(g, dtype=object)
    with_nan[5] = None
    with pytest.raises(tce.MissingGroup, match="index 5 is missing"):
        tce.by_group(s, y, with_nan)
    with pytest.raises(tce.MissingGroup, match="index 3"):
        tce.by_group(s, y, np.where(np.arange(80) == 3, np.nan, 1.0))
    bad = s.copy()
    bad[41] = 1.5
    with pytest.raises(tce.ScoreOutOfRange, match="index 41"):
        tce.by_group(bad, y, g)
    with pytest.raises(tce.MaskedInput):
        tce.by_group(np.ma.masked_array(s), y, g)
    with pytest.raises(tce.InvalidOption, match="p_adjust"):
        tce.by_group(s, y, g, p_adjust="bonferroni")
    with pytest.raises(tce.InvalidOption, match="estimator"):
        tce.by_group(s, y, g, estimator="ece_foo")
    with pytest.raises(tce.InvalidOption, match="alpha"):
        tce.by_group(s, y, g, alpha=1.5)
    with pytest.raises(tce.InvalidOption, match="min_samples"):
        tce.by_group(s, y, g, min_samples=0)
    with pytest.raises(tce.InvalidOption):
        tce.by_group(s, y, g, test_statistic="nope")
    with pytest.raises(tce.InvalidOption, match="norm=1"):
        tce.by_group(s, y, g, estimator="smece")


def test_a_group_where_the_estimator_is_undefined_is_flagged():
    # KDE is undefined without a hit: that group's row says so, the others are computed.
    s, y, g = data(sizes=(60, 50), shift=(0.0, 0.0))
    y = y.copy()
    y[g == "b"] = 0
    table = tce.by_group(s, y, g, estimator="kde", test=False, resamples=50)
    a, b = table.iloc[0], table.iloc[1]
    assert a["estimate"] == tce.kde_ece(s[g == "a"], y[g == "a"]).value
    assert b["flag"] and np.isnan(b["estimate"]) and "no estimate: KdeUndefined" in b["reason"]
