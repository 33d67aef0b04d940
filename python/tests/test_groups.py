"""tce.by_group and tce.p_adjust: each group's row against the single calls on its rows,
the adjustments against hand-computed values (R's p.adjust) and a naive implementation
written here, their error rates on simulated p-values with known truth, flags, inputs
and named errors."""

import math

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


# --- What a merged device state allows (tce.spark.by_group_from_states's rows) --------

from tce._groups import _options, state_row  # noqa: E402


def state_options(estimator="ece_bin:equal_width", level=0.95, min_samples=30, **kw):
    args = dict(estimator=estimator, bins=15, norm=2.0, max_bins=None, paper_limit=False,
                resamples=200, level=level, test=True, test_statistic="auto",
                test_resamples=99, test_power_simulations=20, alpha=0.05, p_adjust="holm",
                min_samples=min_samples, seed=7, logits=False)
    args.update(kw)
    return _options(**args)


def naive_box(scores, labels, bins, level, norm=2.0):
    """The Clopper–Pearson box written out: scipy's beta quantiles per non-empty bin at
    level^(1/B'), then each bin's nearest and farthest point from its mean score."""
    from scipy.stats import beta

    k = np.minimum((scores * bins).astype(int), bins - 1)
    used = [b for b in range(bins) if (k == b).any()]
    each = level ** (1 / len(used))
    near, far, weight = [], [], []
    for b in used:
        x, n, mean = labels[k == b].sum(), (k == b).sum(), scores[k == b].mean()
        low = beta.ppf((1 - each) / 2, x, n - x + 1) if x > 0 else 0.0
        high = beta.ppf(1 - (1 - each) / 2, x + 1, n - x) if x < n else 1.0
        near.append(max(low - mean, mean - high, 0.0))
        far.append(max(high - mean, mean - low))
        weight.append(n / len(scores))
    w = np.array(weight)
    return ((w * np.array(near) ** norm).sum() ** (1 / norm),
            (w * np.array(far) ** norm).sum() ** (1 / norm), max(near), max(far))


def test_histogram_box_interval_and_hosmer_lemeshow_against_naive_code():
    from scipy.stats import chi2

    rng = np.random.default_rng(21)
    for n, level in ((40, 0.9), (500, 0.95), (3000, 0.99)):
        s = rng.beta(2, 1, n)
        y = (rng.uniform(size=n) < s ** 1.5).astype(np.uint8)
        h = tce.Histogram(bins=10)
        h.update(s, y)
        lower, upper, mce_lower, mce_upper = naive_box(s, y, 10, level)
        got = h.binned_interval(level=level)
        np.testing.assert_allclose(got, (lower, upper), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(h.binned_interval(level=level, mce=True),
                                   (mce_lower, mce_upper), rtol=1e-9, atol=1e-12)
        assert got[0] <= h.ece_bin().value <= got[1]
        # Hosmer–Lemeshow over the bins: C = Σ (O − E)² / (n f̄ (1 − f̄)), χ²(bins used).
        k = np.minimum((s * 10).astype(int), 9)
        c = sum((y[k == b].sum() - s[k == b].sum()) ** 2
                / (s[k == b].sum() * (1 - s[k == b].mean())) for b in set(k))
        statistic, df, p = h.hosmer_lemeshow()
        assert df == len(set(k))
        assert statistic == pytest.approx(c, rel=1e-10)
        assert p == pytest.approx(chi2.sf(c, df), rel=1e-8)
    with pytest.raises(tce.NoSamples):
        tce.Histogram().binned_interval()
    with pytest.raises(tce.NoSamples):
        tce.Histogram().hosmer_lemeshow()
    with pytest.raises(tce.InvalidOption):
        h.binned_interval(level=1.0)


def test_histogram_box_covers_the_binned_error_by_construction():
    # Guaranteed coverage >= level (tce::decision::binned); measured here on 150 groups
    # of 300 rows each, calibrated and over-confident (T(c) = c²). The full table:
    # examples/by_group_error_rates.py (docs/python.md).
    level, reps = 0.9, 150
    for d in (1, 2):
        model = tce.Model(2.0, 1.0, "polynomial", d=d)
        covered = 0
        for rep in range(reps):
            s, y = model.sample(300, seed=5, rep=rep)
            h = tce.Histogram(bins=15)
            h.update(s, y)
            k = np.minimum((s * 15).astype(int), 14)
            t = model.curve(s)
            truth = math.sqrt(sum((k == b).mean() * (t[k == b].mean() - s[k == b].mean()) ** 2
                                  for b in set(k)))
            lower, upper = h.binned_interval(level=level)
            covered += lower <= truth <= upper
        rate = covered / reps
        assert rate >= level - 2 * math.sqrt(level * (1 - level) / reps), (d, rate)


def test_state_rows_say_what_each_state_allows():
    rng = np.random.default_rng(8)
    s = rng.beta(4, 2, 400)
    y = (rng.uniform(size=400) < s).astype(np.uint8)
    options = state_options()
    # A reservoir holding every sample: tce.by_group's row over its samples.
    r = tce.Reservoir(1000, seed=1)
    r.update(s, y)
    row = state_row(r, options)
    rs, ry = r.samples()
    expected = tce.by_group(rs, ry, np.zeros(400), estimator="ece_bin:equal_width",
                            resamples=200, test_resamples=99, test_power_simulations=20,
                            seed=7).iloc[0]
    for c in ("n", "hits", "estimate", "lower", "upper", "interval_kind", "p_value"):
        assert row[c] == expected[c], c
    assert row["sample_n"] == 400 and row["allows"].startswith("every estimator")
    # A histogram: its bins' estimate, the box interval, Hosmer–Lemeshow over the bins.
    h = tce.Histogram(bins=15)
    h.update(s, y)
    row = state_row(h, options)
    assert row["n"] == 400 and row["hits"] == y.sum() and row["sample_n"] is None
    assert row["estimate"] == h.ece_bin().value
    assert (row["lower"], row["upper"]) == h.binned_interval(level=0.95)
    assert row["interval_kind"] == "clopper_pearson_box"
    assert row["statistic"] == "hosmer_lemeshow:equal_width"
    assert row["p_value"] == h.hosmer_lemeshow()[2] and not row["flag"]
    row = state_row(h, state_options("mce:equal_width"))
    assert row["estimate"] == h.mce().value
    assert (row["lower"], row["upper"]) == h.binned_interval(level=0.95, mce=True)
    # What needs samples is refused with the reason; the row stays.
    row = state_row(h, state_options("ece_sweep:equal_mass", test_statistic="spiegelhalter"))
    assert row["flag"] and np.isnan(row["estimate"]) and np.isnan(row["p_value"])
    assert "ece_sweep:equal_mass needs samples: a histogram holds per-bin counts" in row["reason"]
    assert "test statistic spiegelhalter needs samples" in row["reason"]
    assert "ece_bin:equal_width" in row["allows"]
    # A decaying histogram: the estimate only.
    dh = tce.DecayingHistogram(1000.0, bins=15)
    dh.update(s, y)
    row = state_row(dh, options)
    assert row["estimate"] == dh.ece_bin().value and row["flag"]
    assert "no interval" in row["reason"] and "no test" in row["reason"]
    assert np.isnan(row["lower"]) and row["allows"].endswith("point estimates only")


def test_holm_and_bh_error_rates_on_calibrated_groups_by_construction():
    # G = 8 calibrated groups (T(c) = c, TCE = 0): Holm's family-wise error rate and BH's
    # (here equal to its false discovery rate: every rejection is false) stay within
    # alpha + 2 Monte-Carlo s.e., while unadjusted tests reject some group far more
    # often. 60 repetitions; the full table: examples/by_group_error_rates.py.
    model = tce.Model(2.0, 1.0, "polynomial", d=1)
    reps, alpha = 60, 0.1
    holm = bh = none = 0
    for rep in range(reps):
        parts = [model.sample(200, seed=100 + g, rep=rep) for g in range(8)]
        s = np.concatenate([p[0] for p in parts])
        y = np.concatenate([p[1] for p in parts])
        g = np.repeat(np.arange(8), 200)
        table = tce.by_group(s, y, g, resamples=0, test_statistic="spiegelhalter",
                             alpha=alpha, seed=rep)
        p = table["p_value"].to_numpy()
        holm += bool(table["reject"].fillna(False).any())
        bh += bool((tce.p_adjust(p, method="bh") <= alpha).any())
        none += bool((p <= alpha).any())
    bound = alpha + 2 * math.sqrt(alpha * (1 - alpha) / reps)
    assert holm / reps <= bound and bh / reps <= bound, (holm, bh)
    assert none / reps > bound  # the family needs the adjustment: 1 - 0.9^8 = 0.57
