"""tce.torch.CalibrationError: torchmetrics' numbers on torchmetrics' conventions, tce's
functions' numbers on tce's, bounded state, and a real two-process torch.distributed run
(gloo on the CPU) whose merged states equal a single process over all the data.

torch and torchmetrics come from scripts/requirements-test.txt (scripts/test installs
them); the tests fail, never skip, without them.
"""

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tce

try:
    import torch
    import torchmetrics
    from torchmetrics.functional import calibration_error as tm_calibration_error

    from tce.torch import CalibrationError
except ImportError as e:  # pragma: no cover
    pytest.fail(f"torch/torchmetrics are missing ({e}): run the tests through scripts/test",
                pytrace=False)

HERE = Path(__file__).resolve().parent


def binary_batches(seed, batches=20, size=50, ones=0.05):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(batches):
        p = rng.beta(2.0, 1.0, size).astype(np.float32)
        # Underconfident below 1.0, overconfident at 1.0 (saturated outputs that are
        # wrong one time in five): the 1.0s' gap has the other sign than the top bin's.
        y = (rng.random(size) < np.minimum(1.0, p + 0.1)).astype(np.int64)
        one = rng.random(size) < ones
        p[one] = 1.0
        y[one] = rng.random(int(one.sum())) < 0.8
        out.append((torch.from_numpy(p), torch.from_numpy(y)))
    return out


def multiclass_batches(seed, batches=20, size=50, classes=4, softmax=True):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(batches):
        x = torch.from_numpy(rng.normal(0, 3, (size, classes)).astype(np.float32))
        y = torch.from_numpy(rng.integers(0, classes, size).astype(np.int64))
        out.append((torch.softmax(x, dim=1) if softmax else x, y))
    return out


def cat(batches):
    return torch.cat([p for p, _ in batches]), torch.cat([y for _, y in batches])


def fed(metric, batches):
    for p, y in batches:
        metric.update(p, y)
    return metric


# -- torchmetrics' numbers ---------------------------------------------------------------


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("n_bins", [1, 10, 15])
def test_binary_equals_torchmetrics(norm, n_bins):
    batches = binary_batches(n_bins)
    p, y = cat(batches)
    assert (p == 1.0).sum() > 10  # torchmetrics' bin of its own for 1.0 is exercised
    ours = fed(CalibrationError(task="binary", n_bins=n_bins, norm=norm), batches).compute()
    theirs = tm_calibration_error(p, y, task="binary", n_bins=n_bins, norm=norm)
    assert ours.dtype == torch.float32 and ours.shape == ()
    assert float(ours) == pytest.approx(float(theirs), abs=1e-6)
    # The class of torchmetrics, fed the same batches, agrees too.
    tm = fed(torchmetrics.CalibrationError(task="binary", n_bins=n_bins, norm=norm), batches)
    assert float(ours) == pytest.approx(float(tm.compute()), abs=1e-6)


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("softmax", [True, False], ids=["probabilities", "logits"])
def test_multiclass_equals_torchmetrics(norm, softmax):
    batches = multiclass_batches(3, softmax=softmax)
    p, y = cat(batches)
    metric = fed(CalibrationError(task="multiclass", num_classes=4, n_bins=10, norm=norm),
                 batches)
    theirs = tm_calibration_error(p, y, task="multiclass", num_classes=4, n_bins=10, norm=norm)
    assert float(metric.compute()) == pytest.approx(float(theirs), abs=1e-6)


def test_ignore_index_and_extra_dimensions_as_torchmetrics():
    rng = np.random.default_rng(5)
    # Segmentation-like: (N, C, H, W) probabilities, (N, H, W) targets with 255 = void.
    x = torch.from_numpy(rng.normal(0, 2, (6, 3, 8, 9)).astype(np.float32)).softmax(dim=1)
    t = torch.from_numpy(rng.integers(0, 3, (6, 8, 9)))
    t[rng.random((6, 8, 9)) < 0.2] = 255
    metric = CalibrationError(task="multiclass", num_classes=3, ignore_index=255)
    metric.update(x[:3], t[:3])
    metric.update(x[3:], t[3:])
    theirs = tm_calibration_error(x, t, task="multiclass", num_classes=3, ignore_index=255)
    assert float(metric.compute()) == pytest.approx(float(theirs), abs=1e-6)
    assert metric.estimate().samples == int((t != 255).sum())
    # Binary with ignore_index on (N, H, W).
    pb = torch.from_numpy(rng.random((4, 5, 6)).astype(np.float32))
    tb = torch.from_numpy(rng.integers(0, 2, (4, 5, 6)))
    tb[0, 0] = -1
    metric = fed(CalibrationError(task="binary", ignore_index=-1), [(pb, tb)])
    theirs = tm_calibration_error(pb, tb, task="binary", ignore_index=-1)
    assert float(metric.compute()) == pytest.approx(float(theirs), abs=1e-6)


def test_forward_returns_the_batch_value_and_accumulates():
    batches = binary_batches(8, batches=5)
    metric = CalibrationError(task="binary", norm="l2")
    for p, y in batches:
        batch_value = metric(p, y)
        assert float(batch_value) == pytest.approx(
            float(tm_calibration_error(p, y, task="binary", norm="l2")), abs=1e-6)
    p, y = cat(batches)
    assert float(metric.compute()) == pytest.approx(
        float(tm_calibration_error(p, y, task="binary", norm="l2")), abs=1e-6)
    assert metric.estimate().samples == len(p)


# -- tce's numbers -------------------------------------------------------------------------


def test_tce_convention_equals_the_functions():
    batches = binary_batches(11)
    p, y = cat(batches)
    kw = dict(binning="equal_width", bins=15)
    for norm, value in (("l1", tce.ece_bin(p.numpy(), y.numpy(), norm=1.0, **kw)),
                        ("l2", tce.ece_bin(p.numpy(), y.numpy(), norm=2.0, **kw)),
                        ("max", tce.mce(p.numpy(), y.numpy(), **kw))):
        metric = fed(CalibrationError(task="binary", norm=norm, convention="tce"), batches)
        assert metric.estimate() == value
    # The conventions differ where confidences are exactly 1.0: torchmetrics bins them
    # apart, tce (the paper) puts them in the top bin.
    tm = fed(CalibrationError(task="binary"), batches).estimate().value
    assert abs(tm - tce.ece_bin(p.numpy(), y.numpy(), norm=1.0, **kw).value) > 1e-4
    # Without 1.0s the two conventions agree exactly.
    clean = binary_batches(12, ones=0.0)
    a = fed(CalibrationError(task="binary"), clean).estimate()
    b = fed(CalibrationError(task="binary", convention="tce"), clean).estimate()
    assert a == b


def test_float32_bin_edges_are_a_documented_difference():
    # torchmetrics compares float32 confidences with float32 edges; tce bins floor(f·B)
    # in float64. float32(0.2) = 0.20000000298 is below torch's float32 edge 3/15 (bin 2,
    # with 0.19) but at least 3/15 in float64 (bin 3, alone).
    p, y = torch.tensor([0.19, 0.2], dtype=torch.float32), torch.tensor([0, 1])
    theirs = float(tm_calibration_error(p, y, task="binary", n_bins=15))
    ours = fed(CalibrationError(task="binary", n_bins=15), [(p, y)]).estimate().value
    assert theirs == pytest.approx((2 * abs(0.5 - (0.19 + 0.2) / 2)) / 2, abs=1e-6)  # 0.305
    assert ours == pytest.approx((0.19 + (1 - 0.2)) / 2, abs=1e-6)  # 0.495


def test_tce_estimators_equal_the_functions():
    batches = multiclass_batches(13, batches=30)
    p, y = cat(batches)
    table, labels = p.numpy(), y.numpy()
    for estimator, binning, expected in (
        ("debiased", "equal_width", tce.ece_debias(table, labels, binning="equal_width", norm=2.0)),
        ("bin", "equal_mass", tce.ece_bin(table, labels, binning="equal_mass", norm=2.0)),
        ("debiased", "equal_mass", tce.ece_debias(table, labels, binning="equal_mass", norm=2.0)),
        ("sweep", "equal_mass", tce.ece_sweep(table, labels, binning="equal_mass", norm=2.0)),
        ("sweep", "equal_width", tce.ece_sweep(table, labels, binning="equal_width", norm=2.0)),
    ):
        for on_full in ("sample", "error"):
            metric = fed(CalibrationError(task="multiclass", num_classes=4, norm="l2",
                                          estimator=estimator, binning=binning,
                                          convention="tce", on_full=on_full), batches)
            assert metric.estimate() == expected, (estimator, binning, on_full)
            assert not metric.sampled


def test_logits_under_the_tce_convention_go_through_the_core_in_float64():
    batches = multiclass_batches(14, softmax=False)
    p, y = cat(batches)
    metric = fed(CalibrationError(task="multiclass", num_classes=4, convention="tce"), batches)
    assert metric.estimate() == tce.ece_bin(p.numpy(), y.numpy(), logits=True,
                                            binning="equal_width", norm=1.0)
    # Binary logits: the probability of class 1 is the float64 sigmoid.
    rng = np.random.default_rng(15)
    x = torch.from_numpy(rng.normal(0, 2, 500).astype(np.float32))
    t = torch.from_numpy(rng.integers(0, 2, 500))
    metric = fed(CalibrationError(task="binary", convention="tce"), [(x, t)])
    sig = 1.0 / (1.0 + np.exp(-x.numpy().astype(np.float64)))
    assert metric.estimate().value == pytest.approx(
        tce.ece_bin(sig, t.numpy(), binning="equal_width", norm=1.0).value, rel=1e-12)


# -- bounded memory -------------------------------------------------------------------------


def test_state_size_does_not_grow_with_batches():
    metric = CalibrationError(task="binary")
    batches = binary_batches(16, batches=1000, size=32)
    sizes = {}
    for i, (p, y) in enumerate(batches, 1):
        metric.update(p, y)
        if i in (10, 1000):
            sizes[i] = metric.state_nbytes
    # Two histograms (15 bins, and 1 for the 1.0s) at any number of samples.
    assert sizes[10] == sizes[1000] == (len(tce.Histogram(15).to_bytes())
                                        + len(tce.Histogram(1).to_bytes()))
    assert metric.estimate().samples == 32_000
    assert metric._defaults == {}  # no per-prediction list state


def test_reservoir_past_capacity_warns_once_and_stays_bounded():
    batches = multiclass_batches(17, batches=100, size=40)
    metric, again = (CalibrationError(task="multiclass", num_classes=4, binning="equal_mass",
                                      capacity=300, seed=5) for _ in range(2))
    sizes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i, (p, y) in enumerate(batches, 1):
            metric.update(p, y)
            again.update(p, y)
            if i in (10, 100):
                sizes.append(metric.state_nbytes)
                # A read sorts the held samples, which changes the slots that later
                # replacements pick: the twin is read at the same points.
                again.state_nbytes
    # Full from the 8th batch on: 300 samples of 9 bytes and the reservoir's header.
    assert sizes[0] == sizes[1] == len(tce.Reservoir(300).to_bytes()) + 300 * 9
    assert [str(w.message).count("uniform sample of 300") for w in caught] == [1, 1]
    assert metric.sampled and len(metric.states[0]) == 300 and metric.states[0].seen == 4000
    # Seeded: the same batches (read at the same points) give the same sample and value.
    assert again.states[0].to_bytes() == metric.states[0].to_bytes()
    assert again.estimate() == metric.estimate()


def test_buffer_past_capacity_is_a_named_error():
    metric = CalibrationError(task="binary", estimator="sweep", capacity=100, on_full="error")
    metric.update(torch.full((60,), 0.7), torch.ones(60, dtype=torch.long))
    with pytest.raises(tce.BufferFull):
        metric.update(torch.full((60,), 0.7), torch.ones(60, dtype=torch.long))
    assert metric.estimate().samples == 60  # the refused batch recorded nothing


def test_reset_and_named_errors():
    metric = fed(CalibrationError(task="binary"), binary_batches(18, batches=2))
    metric.reset()
    with pytest.raises(tce.NoSamples):
        metric.estimate()
    with pytest.raises(tce.InvalidLabel):
        metric.update(torch.tensor([0.2, 0.3]), torch.tensor([0, 2]))
    with pytest.raises(tce.ShapeMismatch):
        metric.update(torch.tensor([0.2, 0.3]), torch.tensor([0]))
    with pytest.raises(tce.UnsupportedDtype):
        metric.update(torch.tensor([0, 1]), torch.tensor([0, 1]))
    mc = CalibrationError(task="multiclass", num_classes=3)
    with pytest.raises(tce.NotNormalized):
        mc.update(torch.tensor([[0.5, 0.6, 0.1]]), torch.tensor([0]))
    with pytest.raises(tce.ShapeMismatch):
        mc.update(torch.tensor([[0.5, 0.5]]), torch.tensor([0]))
    for bad in (dict(task="multilabel"), dict(norm="l3"), dict(binning="quantile"),
                dict(estimator="kde"), dict(task="multiclass"), dict(norm="max", estimator="sweep"),
                dict(closure="right"), dict(ties="x"), dict(on_full="drop")):
        with pytest.raises(tce.InvalidOption):
            CalibrationError(**bad)
    with pytest.raises(tce.ZeroBins):
        CalibrationError(n_bins=0)
    with pytest.raises(tce.ZeroCapacity):
        CalibrationError(binning="equal_mass", capacity=0)


class CountingTensor(torch.Tensor):
    """A tensor that counts the calls of .cpu() on it (and on tensors derived from it)."""

    cpu_calls = 0

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.cpu:
            CountingTensor.cpu_calls += 1
        return super().__torch_function__(func, types, args, kwargs or {})


def test_each_update_moves_each_tensor_to_the_cpu_once():
    p, y = cat(multiclass_batches(22, batches=1))
    for options in (dict(), dict(binning="equal_mass"), dict(convention="tce")):
        metric = CalibrationError(task="multiclass", num_classes=4, **options)
        CountingTensor.cpu_calls = 0
        metric.update(p.as_subclass(CountingTensor), y.as_subclass(CountingTensor))
        assert CountingTensor.cpu_calls == 2, options
        assert metric.estimate() == fed(CalibrationError(task="multiclass", num_classes=4,
                                                         **options), [(p, y)]).estimate()


def test_merge_state_adds_another_metric_exactly():
    first, second = binary_batches(20, batches=4), binary_batches(21, batches=3)
    a = fed(CalibrationError(task="binary", norm="l2"), first)
    b = fed(CalibrationError(task="binary", norm="l2"), second)
    before = [s.to_bytes() for s in b.states]
    a.merge_state(b)
    whole = fed(CalibrationError(task="binary", norm="l2"), first + second)
    assert [s.to_bytes() for s in a.states] == [s.to_bytes() for s in whole.states]
    assert a.estimate() == whole.estimate()
    assert [s.to_bytes() for s in b.states] == before  # the merged-in metric is unchanged


def test_clone_and_pickle_keep_the_state():
    import copy
    import pickle

    metric = fed(CalibrationError(task="binary"), binary_batches(19, batches=3))
    for twin in (copy.deepcopy(metric), pickle.loads(pickle.dumps(metric)), metric.clone()):
        assert twin.estimate() == metric.estimate()
        twin.update(torch.tensor([0.5]), torch.tensor([1]))
        assert twin.estimate().samples == metric.estimate().samples + 1


# -- torch.distributed: two processes, gloo -------------------------------------------------


def test_two_ranks_merge_states_to_the_single_process_value(tmp_path):
    sys.path.insert(0, str(HERE))
    try:
        import torch_dist_worker as w
    finally:
        sys.path.remove(str(HERE))
    init, outs = tmp_path / "init", [tmp_path / f"rank{r}.json" for r in range(2)]
    procs = [subprocess.Popen([sys.executable, str(HERE / "torch_dist_worker.py"), str(r), "2",
                               str(init), str(outs[r])],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    for proc in procs:
        try:
            output, _ = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("a rank did not finish in 120 s")
        assert proc.returncode == 0, output
    ranks = [json.loads(o.read_text()) for o in outs]
    total = 2 * w.BATCHES * w.BATCH

    for case, options in w.CASES.items():
        p, y = w.case_data(case, 2)
        p_all = p.reshape((total,) + p.shape[3:])
        y_all = y.reshape(total)
        r0, r1 = ranks[0][case], ranks[1][case]
        # Every rank computes the same merged value.
        assert r0["value"] == r1["value"], case
        for r in (r0, r1):
            assert r["registered"] == [] and r["restored"] and r["dtype"] == "torch.float32"
            # The state does not grow with the batches (after 10 and after 1000): a
            # histogram's is fixed, a sample state's bounded by its capacity (9 bytes a
            # sample in the portable format).
            if options.get("binning") == "equal_mass":
                bound = len(tce.Reservoir(1).to_bytes()) + 9 * options["capacity"]
                assert r["sizes"]["10"] <= r["sizes"]["1000"] <= bound, (case, r["sizes"])
            else:
                assert r["sizes"]["10"] == r["sizes"]["1000"], (case, r["sizes"])
        if case == "binary_tm":
            theirs = tm_calibration_error(torch.from_numpy(p_all), torch.from_numpy(y_all),
                                          task="binary", norm="l1")
            assert r0["value"] == pytest.approx(float(theirs), abs=1e-6)
            # The main histogram holds every sample but the 1.0s (their own bin's).
            assert r0["merged_samples"] == int((p_all != 1.0).sum())
        elif case == "binary_tce":
            expected = tce.ece_bin(p_all, y_all, binning="equal_width", norm=2.0)
            assert r0["value"] == np.float32(expected.value)
            assert r0["merged_samples"] == total
        elif case == "multiclass_sweep":
            expected = tce.ece_sweep(p_all, y_all, binning="equal_mass", norm=2.0)
            assert r0["value"] == np.float32(expected.value)
            assert r0["merged_samples"] == total
        elif case == "multiclass_reservoir":
            # A uniform sample of capacity 500 of both ranks' streams: bounded, every
            # sample seen, and one warning per rank that it samples.
            assert r0["merged_samples"] == 500 and r0["merged_seen"] == total
            assert r0["sizes"]["10"] == r0["merged_nbytes"]
            assert len(r0["warnings"]) == 1 and "uniform sample of 500" in r0["warnings"][0]
            whole = tce.ece_bin(p_all, y_all, binning="equal_mass", norm=1.0).value
            assert abs(r0["value"] - whole) < 0.05  # a sample's estimate, near the whole's
        elif case == "multiclass_logits":
            expected = tce.ece_debias(p_all, y_all, logits=True, binning="equal_width",
                                      norm=2.0)
            assert r0["value"] == np.float32(expected.value)
            assert r0["merged_samples"] == total


# -- optional dependencies ------------------------------------------------------------------


def test_tce_imports_without_torch_and_tce_torch_names_what_to_install():
    code = (
        "import sys\n"
        "sys.modules['torch'] = None\n"  # import torch now raises ImportError
        "import tce\n"
        "assert tce.ece_bin([0.5, 0.9], [0, 1]).samples == 2\n"
        "try:\n"
        "    import tce.torch\n"
        "except ImportError as e:\n"
        "    print(e)\n"
        "else:\n"
        "    raise SystemExit('tce.torch imported without torch')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "tce.torch needs torch and torchmetrics" in out
    assert "pip install 'tce-calibration[torch]'" in out
    # torchmetrics missing alone is named the same way.
    out = subprocess.run([sys.executable, "-c", code.replace("'torch'", "'torchmetrics'")],
                         capture_output=True, text=True, check=True).stdout
    assert "tce.torch needs torch and torchmetrics" in out
    # With torch installed, `import tce` still does not import it.
    out = subprocess.run([sys.executable, "-c", "import sys, tce; print('torch' in sys.modules)"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
