"""Inputs of every kind, the documented surface (stubs, docstrings, signatures)."""

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

import tce
from conftest import SPEC_F, SPEC_Y

PACKAGE = Path(tce.__file__).parent


class TensorLike:
    """What a torch CPU tensor offers numpy: __array__."""

    def __init__(self, values, dtype):
        self.values = np.asarray(values, dtype=dtype)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


def test_inputs_of_every_kind_give_the_same_estimate():
    expected = tce.ece_sweep(np.array(SPEC_F), np.array(SPEC_Y, dtype=np.uint8))
    f32 = np.array(SPEC_F, dtype=np.float32)
    for scores, labels in [
        (SPEC_F, SPEC_Y),
        (tuple(SPEC_F), tuple(SPEC_Y)),
        (np.array(SPEC_F), np.array(SPEC_Y, dtype=np.int64)),
        (np.array(SPEC_F), np.array(SPEC_Y, dtype=bool)),
        (np.array(SPEC_F), np.array(SPEC_Y, dtype=np.float32)),
        (np.repeat(SPEC_F, 2)[::2], np.repeat(np.array(SPEC_Y, dtype=np.uint8), 3)[::3]),  # strided
        (np.array(SPEC_F, dtype=">f8"), SPEC_Y),  # big-endian
        (TensorLike(SPEC_F, np.float64), TensorLike(SPEC_Y, np.int64)),
    ]:
        assert tce.ece_sweep(scores, labels) == expected
    # float32 scores are converted exactly (to the float64 of each float32).
    assert tce.ece_sweep(f32, SPEC_Y) == tce.ece_sweep(f32.astype(np.float64), SPEC_Y)
    assert tce.ece_sweep(TensorLike(SPEC_F, np.float32), SPEC_Y) == tce.ece_sweep(f32, SPEC_Y)


def test_torch_tensors_if_torch_is_installed():
    torch = pytest.importorskip("torch")
    s, y = torch.tensor(SPEC_F, dtype=torch.float64), torch.tensor(SPEC_Y)
    assert tce.ece_sweep(s, y) == tce.ece_sweep(SPEC_F, SPEC_Y)


def test_arrays_are_not_modified():
    s, y = np.array(SPEC_F), np.array(SPEC_Y, dtype=np.uint8)
    s.setflags(write=False)
    y.setflags(write=False)
    tce.ece_sweep(s, y)
    tce.Histogram().update(s, y)
    assert s.tolist() == SPEC_F and y.tolist() == SPEC_Y


PUBLIC_FUNCTIONS = ["ece_bin", "ece_sweep", "ece_debias", "mce", "kde_ece", "reliability_bins",
                    "simulate", "fit", "fit_recalibration", "report"]
PUBLIC_CLASSES = ["Estimate", "KdeEstimate", "Histogram", "SortedBuffer", "SlidingWindow",
                  "Reservoir", "DecayingHistogram", "ConcurrentHistogram", "Model",
                  "FittedModel", "RecalibrationMap", "Report"]


def test_help_shows_signatures_and_docstrings():
    for name in PUBLIC_FUNCTIONS:
        f = getattr(tce, name)
        assert f.__doc__ and len(f.__doc__) > 40, name
        params = inspect.signature(f).parameters
        assert "scores" in params or "model" in params, name
    sig = inspect.signature(tce.ece_bin)
    assert sig.parameters["bins"].default == 15 and sig.parameters["norm"].default == 2.0
    assert sig.parameters["binning"].kind is inspect.Parameter.KEYWORD_ONLY
    for name in PUBLIC_CLASSES:
        cls = getattr(tce, name)
        assert cls.__doc__, name
        for attr, member in vars(cls).items():
            if not attr.startswith("_") and callable(member):
                assert member.__doc__, f"{name}.{attr}"
    assert inspect.signature(tce.Histogram.update).parameters["logits"].default is False


def stub_names(path):
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def test_the_stubs_cover_the_extension():
    from tce import _tce
    stubbed = stub_names(PACKAGE / "_tce.pyi")
    public = {n for n in dir(_tce) if not n.startswith("_") and n.upper() != n}
    assert public == stubbed
    assert (PACKAGE / "py.typed").exists()
    for name in PUBLIC_CLASSES:
        tree = ast.parse((PACKAGE / "_tce.pyi").read_text())
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
        stub_methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
        stub_methods |= {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)}
        real = {a for a in vars(getattr(tce, name)) if not a.startswith("_")}
        assert real <= stub_methods, (name, real - stub_methods)


def test_every_exception_is_a_tce_error_and_a_value_error():
    for name in dir(tce):
        obj = getattr(tce, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            assert issubclass(obj, tce.Error) and issubclass(obj, ValueError), name
    assert issubclass(tce.InternalError, RuntimeError)
