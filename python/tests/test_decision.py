"""tce.calibration_test: the numbers of `tce test --json` for the same samples and seed,
Spiegelhalter's Z and Hosmer-Lemeshow against numpy and scipy, the result object, and
named errors for bad input."""

import json
import subprocess

import numpy as np
import pytest
from scipy import stats

import tce
from conftest import DATA, SPEC_F, SPEC_Y, load_csv

OPTIONS = {"resamples": 99, "power_simulations": 40, "seed": 5}
CLI_OPTIONS = ["--resamples", "99", "--power-simulations", "40", "--seed", "5"]


def cli_test(cli, *args):
    out = subprocess.run([str(cli), "test", *args, *CLI_OPTIONS], check=True,
                         capture_output=True, text=True)
    return out.stdout


def without_input(d):
    d = json.loads(json.dumps(d))
    del d["settings"]["file"], d["settings"]["input"]
    return d


@pytest.mark.parametrize("name", ["resnet110_c10_test.csv", "resnet50_birds_test.csv"])
def test_the_numbers_are_the_clis(cli, name):
    path = DATA / name
    scores, labels = load_csv(path)
    r = tce.calibration_test(scores, labels, source=str(path), **OPTIONS)
    expected = json.loads(cli_test(cli, str(path), "--json"))
    got = r.to_dict()
    assert without_input(got) == without_input(expected)
    assert got["settings"]["input"] == {"format": "arrays", "values": "confidences",
                                        "reduction": "top_label", "rows": len(scores)}
    assert json.loads(r.to_json()) == got
    # The summary is the CLI's, byte for byte.
    assert str(r) == cli_test(cli, str(path))


def spiegelhalter(f, y):
    z = np.sum((y - f) * (1 - 2 * f)) / np.sqrt(np.sum((1 - 2 * f) ** 2 * f * (1 - f)))
    return z, 2 * stats.norm.sf(abs(z))


def hosmer_lemeshow(f, y, groups):
    """Equal-mass groups by stable rank (position j in group j*G//n), chi2 with as many
    degrees of freedom as groups."""
    order = np.argsort(f, kind="stable")
    group = np.arange(len(f)) * groups // len(f)
    c = 0.0
    for g in range(groups):
        rows = order[group == g]
        expected, observed, m = f[rows].sum(), y[rows].sum(), len(rows)
        c += (observed - expected) ** 2 / (expected * (1 - expected / m))
    return c, stats.chi2.sf(c, groups)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_analytic_baselines_are_scipys(seed):
    rng = np.random.default_rng(seed)
    f = rng.beta(2.0, 1.0, size=500)
    y = (rng.random(500) < f ** 1.2).astype(np.uint8)
    r = tce.calibration_test(f, y, statistic="spiegelhalter", resamples=9, groups=8)
    z, p = spiegelhalter(f, y.astype(float))
    tests = {t["name"]: t for t in r.tests}
    assert tests["spiegelhalter"]["value"] == pytest.approx(z, rel=1e-12)
    assert r.p_value == pytest.approx(p, rel=1e-10)
    c, p_hl = hosmer_lemeshow(f, y.astype(float), 8)
    assert tests["hosmer_lemeshow"]["value"] == pytest.approx(c, rel=1e-10)
    assert tests["hosmer_lemeshow"]["degrees_of_freedom"] == 8
    assert r.p_values["hosmer_lemeshow"] == pytest.approx(p_hl, rel=1e-9)


def test_the_spec_example_by_hand():
    f, y = np.array(SPEC_F), np.array(SPEC_Y, dtype=float)
    r = tce.calibration_test(SPEC_F, SPEC_Y, statistic="hosmer_lemeshow", resamples=19)
    assert r.p_value == pytest.approx(hosmer_lemeshow(f, y, 10)[1], rel=1e-10)
    assert r.p_values["spiegelhalter"] == pytest.approx(spiegelhalter(f, y)[1], rel=1e-10)


def test_the_result_holds_the_numbers():
    scores, labels = load_csv(DATA / "resnet110_c10_test.csv", rows=3000)
    r = tce.calibration_test(scores, labels, **OPTIONS)
    d = r.to_dict()
    assert r.n == 3000 and r.alpha == 0.05
    assert (r.statistic, r.p_value, r.reject) == (
        d["decision"]["statistic"], d["decision"]["p_value"], d["decision"]["reject"])
    assert r.basis == d["choice"]["basis"] == "highest_power"
    assert list(r.p_values) == [t["name"] for t in d["tests"]]
    assert r.p_values["ece_bin:equal_width"] == d["tests"][2]["p_value"]
    # Each resampled p-value is (1 + at_least) / (B + 1).
    for t in r.tests[:5]:
        assert t["p_value"] == (1 + t["at_least"]) / 100
    assert set(r.powers) == {"ece_sweep:equal_mass", "ece_debias:equal_mass",
                             "ece_bin:equal_width", "ece_bin:equal_mass", "smece"}
    power, se = r.powers[r.statistic]
    assert power == max(p for p, _ in r.powers.values())
    assert se == pytest.approx(np.sqrt(power * (1 - power) / 40))
    assert repr(r).startswith(f"<tce.CalibrationTest: {r.statistic} p=")
    # The same seed gives the same test; another seed other resamples.
    assert tce.calibration_test(scores, labels, **OPTIONS).to_json() == r.to_json()
    other = tce.calibration_test(scores, labels, **{**OPTIONS, "seed": 6, "statistic": "smece"})
    assert other.statistic == "smece" and other.basis == "given" and other.powers == {}


def test_class_tables_and_logits_are_reduced_to_the_top_label():
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(400, 5)) * 3
    classes = rng.integers(0, 5, size=400)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    conf = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == classes).astype(np.uint8)
    options = {"statistic": "ece_bin:equal_mass", "resamples": 49}
    top = tce.calibration_test(conf, correct, **options)
    from_logits = tce.calibration_test(logits, classes, logits=True, **options)
    assert from_logits.p_values == top.p_values
    assert from_logits.to_dict()["settings"]["input"]["values"] == "logits"


@pytest.mark.parametrize("kwargs, error, message", [
    ({"resamples": 0}, tce.InvalidOption, "0 resamples: a test takes 1 to 100000"),
    ({"resamples": 100_001}, tce.InvalidOption, "tce::decision::MAX_RESAMPLES"),
    ({"resamples": -1}, tce.InvalidOption, "resamples is -1"),
    ({"alpha": 1.5}, tce.InvalidOption, "alpha must be in (0, 1)"),
    ({"alpha": float("nan")}, tce.InvalidOption, "alpha must be in (0, 1)"),
    ({"statistic": "nope"}, tce.InvalidOption, "unknown estimator `nope`"),
    ({"groups": 0}, tce.InvalidOption, "Hosmer-Lemeshow groups"),
    ({"power_simulations": 0}, tce.InvalidOption, "power simulations"),
    ({"bins": 0}, tce.ZeroBins, ""),
    ({"norm": 0.5}, tce.InvalidNorm, ""),
])
def test_bad_options_are_named_errors(kwargs, error, message):
    with pytest.raises(error, match=None) as e:
        tce.calibration_test([0.5, 0.9], [1, 1], **kwargs)
    assert message in str(e.value)


@pytest.mark.parametrize("scores, labels, error", [
    ([0.5, float("nan")], [1, 0], tce.NonFiniteScore),
    ([0.5, 1.5], [1, 0], tce.ScoreOutOfRange),
    ([0.5, 0.7], [1, 2], tce.InvalidLabel),
    ([0.5, 0.7], [1], tce.LengthMismatch),
    ([], [], tce.NoSamples),
])
def test_bad_input_is_a_named_error(scores, labels, error):
    with pytest.raises(error):
        tce.calibration_test(scores, labels, resamples=9)
