"""tce.report: the numbers of `tce report --json` for the same samples and seed, the page
of `tce report --html`, classwise reports, and named errors for bad input."""

import json
import subprocess

import numpy as np
import pytest

import tce
from conftest import DATA, load_csv

# A small calibration test too (the CLI under test is a debug build); a classwise
# report has no test and refuses its settings, so CLASSWISE leaves them out.
CLASSWISE = {"resamples": 80, "simulations": 30, "seed": 7}
OPTIONS = {**CLASSWISE, "test_resamples": 99, "test_power_simulations": 20}
CLASSWISE_CLI = ["--resamples", "80", "--simulations", "30", "--seed", "7", "--quiet"]
CLI_OPTIONS = [*CLASSWISE_CLI, "--test-resamples", "99", "--test-power-simulations", "20"]
FIGURES = ["reliability-ew", "reliability-em", "scores", "curve", "bias"]


def cli_report(cli, *args):
    options = CLASSWISE_CLI if "--classwise" in args else CLI_OPTIONS
    out = subprocess.run([str(cli), "report", *args, *options], check=True,
                         capture_output=True, text=True)
    return out.stdout


def without_input(d):
    """The report's numbers and settings, without what names its input."""
    d = json.loads(json.dumps(d))
    del d["settings"]["file"], d["settings"]["input"]
    return d


def test_the_numbers_are_the_clis(cli, tmp_path):
    path = DATA / "resnet50_birds_test.csv"
    scores, labels = load_csv(path)
    r = tce.report(scores, labels, source=str(path), **OPTIONS)
    expected = json.loads(cli_report(cli, str(path), "--json"))
    got = r.to_dict()
    assert without_input(got) == without_input(expected)
    assert got["settings"]["file"] == str(path)
    assert got["settings"]["input"] == {"format": "arrays", "values": "confidences",
                                        "reduction": "top_label", "rows": len(scores)}
    assert json.loads(r.to_json()) == got
    # The page and the summary are the CLI's, byte for byte.
    page = tmp_path / "page.html"
    subprocess.run([str(cli), "report", str(path), *CLI_OPTIONS, "--html", str(page)],
                   check=True, capture_output=True)
    assert r.html() == page.read_text()
    assert str(r) == cli_report(cli, str(path))
    mine = tmp_path / "mine.html"
    r.to_html(mine)
    assert mine.read_text() == r.html()
    for figure in FIGURES:
        assert f'<figure id="{figure}"><svg' in r.html()


def test_attributes_hold_the_numbers():
    scores, labels = load_csv(DATA / "resnet110_c10_test.csv", rows=3000)
    r = tce.report(scores, labels, **OPTIONS)
    d = r.to_dict()
    rec = d["recommendation"]
    assert (r.estimator, r.estimate, r.basis) == (rec["estimator"], rec["value"], rec["basis"])
    assert r.interval == (rec["interval"]["lower"], rec["interval"]["upper"])
    assert r.interval_kind in ("bca", "percentile")
    assert r.words == rec["words"] and r.words[0].startswith("Calibration error")
    assert r.n == 3000 and not r.classwise
    assert [e["name"] for e in r.estimators] == [e["name"] for e in d["estimators"]]
    for e in r.estimators:
        b = e["bootstrap"]
        assert len(b["replicates"]) == 80
        assert b["percentile"]["lower"] <= b["percentile"]["upper"]
    names = [b["estimator"] for b in r.bias]
    assert "ece_bin:equal_width" in names and "mce:equal_mass" not in names
    assert all(b["rmse"] >= 0 for b in r.bias)
    assert set(r.sweep_bins) == {"ece_sweep:equal_width", "ece_sweep:equal_mass"}
    assert r.sweep_bins["ece_sweep:equal_mass"]["min"] >= 1
    assert r.fit["checks"] and r.fit["point_masses"]["one"]["rows"] == int((scores == 1).sum())
    assert r.settings["seed"] == 7 and r.classes is None
    # The same seed gives the same report; another seed other replicates.
    assert tce.report(scores, labels, **OPTIONS).to_json() == r.to_json()
    other = tce.report(scores, labels, **{**OPTIONS, "seed": 8})
    assert other.estimators[0]["bootstrap"]["replicates"] != r.estimators[0]["bootstrap"]["replicates"]
    assert other.estimators[0]["value"] == r.estimators[0]["value"]


def multiclass(rows=200, classes=3, seed=11):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, classes, rows)
    logits = rng.normal(0, 1.5, (rows, classes))
    logits[np.arange(rows), truth] += 1.2
    return logits, truth


def test_classwise_is_the_clis_and_each_class_one_vs_rest(cli, tmp_path):
    logits, truth = multiclass()
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    path = tmp_path / "classes.csv"
    lines = ["p0,p1,p2,label"] + [",".join(repr(float(p)) for p in row) + f",{t}"
                                   for row, t in zip(probs, truth)]
    path.write_text("\n".join(lines) + "\n")
    r = tce.report(probs, truth, classwise=True, **CLASSWISE)
    assert r.classwise
    expected = json.loads(cli_report(cli, str(path), "--prob-cols", "p*", "--label-col",
                                     "label", "--classwise", "--json"))
    got = r.to_dict()
    assert got["settings"]["input"] == {"format": "arrays", "values": "probabilities",
                                        "reduction": "classwise", "rows": 200, "classes": 3}
    for d in (got, expected):
        for c in d["classes"]:
            del c["name"]  # the CLI names the columns, Python "class k"
    assert without_input(got) == without_input(expected)
    # Each class is the top-label report of its one-vs-rest samples (a classwise report
    # does not refit its classes, and simulates each from its own seed), but for its
    # intervals: those are read off the joint resamples of the rows, 80 as asked.
    method = r.to_dict()["method"]
    assert method["intervals"] == "joint_resamples" and not method["sampled"]
    for k, c in enumerate(r.classes):
        assert c["simulated"]
        alone = tce.report(probs[:, k], (truth == k).astype(np.uint8), refits=0,
                           **{**OPTIONS, "seed": c["simulation_seed"]}).to_dict()
        for key in ("n", "hits", "reliability", "fit"):
            assert c[key] == alone[key], (k, key)
        for mine, theirs in zip(c["estimators"], alone["estimators"]):
            assert len(mine.pop("bootstrap")["replicates"]) == 80
            theirs.pop("bootstrap")
            assert mine == theirs, k
        for key in ("estimator", "value", "basis"):
            assert c["recommendation"][key] == alone["recommendation"][key], (k, key)
        assert c["recommendation"]["words"][1:] == alone["recommendation"]["words"][1:]
    # The marginal is the l_p mean (p = 2) of the classes' values; MCE their maximum.
    for i, m in enumerate(r.estimators):
        values = np.array([c["estimators"][i]["value"] for c in r.classes])
        expected_value = values.max() if m["estimator"] == "mce" else np.sqrt(np.mean(values ** 2))
        assert m["value"] == pytest.approx(expected_value, abs=1e-15)
        assert len(m["bootstrap"]["replicates"]) == 80
    assert r.estimate == r.estimators[[m["name"] for m in r.estimators].index(r.estimator)]["value"]
    assert tce.report(probs, truth, classwise=True, **CLASSWISE).to_json() == r.to_json()
    # Logits give the same one-vs-rest scores as their softmax (up to its rounding).
    from_logits = tce.report(logits, truth, classwise=True, logits=True, **CLASSWISE)
    assert from_logits.to_dict()["settings"]["input"]["values"] == "logits"
    assert from_logits.estimate == pytest.approx(r.estimate, abs=1e-12)
    page = r.html()
    assert '<figure id="classes"><svg' in page and "Classwise calibration report" in page
    assert "<script" not in page


@pytest.mark.parametrize("scores, labels, kwargs, error", [
    ([0.5, float("nan"), 0.9], [1, 0, 1], {}, tce.NonFiniteScore),
    ([0.5, 1.5, 0.9], [1, 0, 1], {}, tce.ScoreOutOfRange),
    ([0.5, 0.7, 0.9], [1, 2, 1], {}, tce.InvalidLabel),
    ([0.5, 0.7, 0.9], [1, 0], {}, tce.LengthMismatch),
    ([], [], {}, tce.NoSamples),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"level": 1.5}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"simulations": 0}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"refits": 3}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"refits": -1}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"bins": 0}, tce.ZeroBins),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"norm": 0.5}, tce.InvalidNorm),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"closure": "middle"}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"epsilon": 0.7}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"classwise": True}, tce.ShapeMismatch),
    ([[0.5, 0.6], [0.3, 0.7]], [0, 1], {}, tce.NotNormalized),
    ([[0.5, 0.6], [0.3, 0.7]], [0, 1], {"classwise": True}, tce.NotNormalized),
    ([[0.5, 0.5], [0.3, 0.7]], [0, 2], {"classwise": True}, tce.InvalidLabel),
    ([[0.5, 0.5], [0.3, 0.7]], [0, 1], {"classwise": True, "refits": 1}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"test_resamples": 0}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"test_resamples": -1}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"test_power_simulations": 0}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"alpha": 0.0}, tce.InvalidOption),
    ([0.5, 0.7, 0.9], [1, 0, 1], {"test": False, "alpha": 0.1}, tce.InvalidOption),
    ([[0.5, 0.5], [0.3, 0.7]], [0, 1], {"classwise": True, "test_resamples": 99},
     tce.InvalidOption),
])
def test_bad_input_raises_the_named_error(scores, labels, kwargs, error):
    with pytest.raises(error):
        tce.report(scores, labels, **{"resamples": 5, "simulations": 2, **kwargs})


def test_the_fitted_models_tce_is_measured_as_an_estimator_from_refits():
    scores, labels = load_csv(DATA / "resnet110_c10_test.csv", rows=3000)
    measured = tce.report(scores, labels, refits=3, **OPTIONS)
    plug_in = measured.fit["plug_in"]
    assert measured.settings["refits"] == 3
    assert plug_in["refits"] == 3 and plug_in["failed"] == 0
    assert plug_in["estimate"] == measured.fit["tce"]
    assert plug_in["bias"]["se"] == pytest.approx(plug_in["bias"]["sd"] / 3 ** 0.5)
    assert "fit's TCE as an estimator (plug-in), from 3 refits" in str(measured)
    off = tce.report(scores, labels, refits=0, **OPTIONS)
    assert off.fit["plug_in"] is None and "not measured" in str(off)
    # The rest of the report does not depend on the refits.
    assert off.estimators == measured.estimators


def test_the_model_of_the_data_is_flexible_by_default_or_the_papers():
    scores, labels = load_csv(DATA / "resnet110_c10_test.csv", rows=3000)
    flexible = tce.report(scores, labels, **OPTIONS)
    paper = tce.report(scores, labels, model="paper", **OPTIONS)
    assert flexible.settings["model"] == "flexible" and paper.settings["model"] == "paper"
    assert flexible.fit["model"] == "flexible" and paper.fit["model"] == "paper"
    # The paper's model is a Beta and one of its twelve GLMs; the flexible one has the
    # candidates' AICs beside whichever density it chose.
    assert paper.fit["density"]["kind"] == "beta" and paper.fit["curve"]["kind"] == "glm"
    assert paper.fit["alpha"] == paper.fit["density"]["alpha"]
    density = flexible.fit["density"]
    assert density["kind"] in ("beta", "logit_mixture")
    assert density["aic_mixture"] is not None and density["aic_beta"] is not None
    chosen = min(density["aic_beta"], density["aic_mixture"])
    assert (density["kind"] == "logit_mixture") == (chosen == density["aic_mixture"] < density["aic_beta"])
    if density["kind"] == "logit_mixture":
        assert abs(sum(c["weight"] for c in density["components"]) - 1) < 1e-9
    assert flexible.fit["curve"]["kind"] in ("glm", "monotone_spline", "identity")
    # The estimates on the data do not depend on the model; their bias figures do.
    assert [e["value"] for e in flexible.estimators] == [e["value"] for e in paper.estimators]
    assert "fit (flexible model)" in str(flexible) and "fit (paper model)" in str(paper)
    with pytest.raises(tce.InvalidOption, match="flexible"):
        tce.report(scores, labels, model="nope", **OPTIONS)


def test_is_it_calibrated():
    """The report's calibration test is `tce.calibration_test` on the same samples and
    seed (its power against the report's own fit, the same model the test fits), to the
    bit; in the dict, the summary and the page; absent with test=False."""
    scores, labels = load_csv(DATA / "resnet110_c10_test.csv", rows=3000)
    r = tce.report(scores, labels, **OPTIONS)
    c = r.calibration_test
    assert c == r.to_dict()["calibration_test"]
    alone = tce.calibration_test(scores, labels, resamples=99, power_simulations=20,
                                 seed=7).to_dict()
    assert c["statistic"] == alone["decision"]["statistic"] == alone["choice"]["statistic"]
    assert c["p_value"] == alone["decision"]["p_value"]
    assert c["reject"] is alone["decision"]["reject"] is True
    assert [(s["name"], s["p_value"]) for s in c["statistics"]] == \
        [(t["name"], t["p_value"]) for t in alone["tests"]]
    assert c["why"] == alone["choice"]["words"]
    power = next(t["power"] for t in alone["tests"] if t["name"] == c["statistic"])
    assert c["power"] == {"power": power["power"], "se": power["se"], "n": 3000,
                          "simulations": 20}
    assert c["alternative"]["model"] == "flexible"
    assert c["alternative"]["curve"] == r.fit["curve"]["name"] == alone["choice"]["fit"]["curve"]
    assert (c["alpha"], c["resamples"], c["power_simulations"], c["seed"]) == (0.05, 99, 20, 7)
    assert f"is it calibrated? {c['words'][0]}" in str(r)
    assert "<h2>Is it calibrated?</h2>" in r.html()
    off = tce.report(scores, labels, test=False, **CLASSWISE)
    assert off.calibration_test is None
    assert "Not tested" in str(off)
    # A higher alpha is the test's own.
    assert tce.report(scores, labels, alpha=0.1, **OPTIONS).calibration_test["alpha"] == 0.1
