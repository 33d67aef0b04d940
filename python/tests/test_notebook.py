"""What a notebook shows: the results' HTML views and the reprs of estimates and states
(key numbers appear, never an address), and tce.plot.reliability (drawn with the Agg
backend; the plotted points, error bars and count bars are the library's bin
statistics)."""

import subprocess
import sys

import numpy as np
import pytest

import tce
from tce._display import num

from conftest import SPEC_F, SPEC_Y

F, Y = np.array(SPEC_F), np.array(SPEC_Y, dtype=np.uint8)


def beta_data(n=2000, seed=1):
    rng = np.random.default_rng(seed)
    s = rng.beta(5, 1, size=n)
    return s, (rng.uniform(size=n) < s ** 1.5).astype(np.uint8)


def test_report_html_shows_the_recommendation_every_estimator_and_the_test():
    r = tce.report(F, Y, seed=0, resamples=100, simulations=5, test_resamples=99,
                   test_power_simulations=10)
    html = r._repr_html_()
    assert "0x" not in html and "object at" not in html
    assert f"{r.estimator} = {num(r.estimate)}" in html
    assert f"[{num(r.interval[0])}, {num(r.interval[1])}]" in html
    for e in r.estimators:
        assert f"<td>{e['name']}</td><td>{num(e['value'])}</td>" in html
    assert f"p = {num(r.calibration_test['p_value'])}" in html
    assert "n = 20" in html and "tce.Report" in repr(r)
    # Without resamples: no interval, and no "None" written for it.
    bare = tce.report(F, Y, resamples=0, simulations=5, test=False)._repr_html_()
    assert "None" not in bare and "Calibration test" not in bare


def test_calibration_test_and_comparison_html():
    t = tce.calibration_test(F, Y, seed=0, resamples=99, power_simulations=10)
    html = t._repr_html_()
    assert f"<strong>{t.statistic}</strong> p = {num(t.p_value)}" in html
    for name, p in t.p_values.items():
        assert f"<td>{name}</td><td>{num(p)}</td>" in html
    assert f"p={t.p_value:.4f}" in repr(t)
    a, y = beta_data(400)
    c = tce.compare(a, y, np.clip(a - 0.05, 0, 1), y, seed=0, resamples=199)
    html = c._repr_html_()
    for value in (c.estimate_a, c.estimate_b, c.delta, c.p_value, *c.interval):
        assert num(value) in html
    assert f"delta={c.delta:.6f}" in repr(c)


def test_estimate_and_state_reprs_show_their_numbers():
    e = tce.ece_sweep(F, Y)
    assert repr(e) == f"Estimate(value={e.value!r}, samples=20, bins={e.bins})"
    h = tce.Histogram(bins=10)
    h.update(F, Y)
    assert repr(h) == "Histogram(bins=10, closure=\"left\", samples=20)"
    w = tce.SlidingWindow(8)
    w.update(F, Y)
    assert repr(w) == "SlidingWindow(size=8, len=8, seen=20)"
    r = tce.Reservoir(16, seed=1)
    r.update(F, Y)
    assert repr(r) == "Reservoir(capacity=16, len=16, seen=20)"
    b = tce.SortedBuffer(32)
    b.update(F, Y)
    assert repr(b) == "SortedBuffer(capacity=32, len=20)"
    d = tce.DecayingHistogram(100.0, bins=5)
    d.update(F, Y)
    assert repr(d).startswith("DecayingHistogram(half_life=") and "samples=20" in repr(d)
    c = tce.ConcurrentHistogram(bins=5, shards=2)
    c.update(F, Y)
    assert repr(c) == "ConcurrentHistogram(bins=5, shards=2, closure=\"left\", samples=20)"


@pytest.fixture
def agg():
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is in "
                                     "scripts/requirements-test.txt; install it")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def drawn(ax):
    import tce.plot

    points = next(l for l in ax.lines if l.get_gid() == tce.plot.BINS_GID)
    bars = [p for a in ax.figure.axes for p in a.patches if p.get_gid() == tce.plot.COUNTS_GID]
    return points.get_xydata(), bars


def test_reliability_plots_the_librarys_equal_mass_bins_at_b_star(agg, tmp_path):
    import tce.plot

    s, y = beta_data()
    ax = tce.plot.reliability(s, y)
    b = tce.ece_sweep(s, y, binning="equal_mass").bins
    rel = tce.reliability_bins(s, y, binning="equal_mass", bins=b)
    xy, bars = drawn(ax)
    full = rel.count > 0
    np.testing.assert_array_equal(xy[:, 0], rel.mean_score[full])
    np.testing.assert_array_equal(xy[:, 1], rel.accuracy[full])
    assert [p.get_height() for p in bars] == list(rel.count[full])
    # The error bars: each the Wilson interval of the bin, as the report computes it.
    r = tce.report(s, y, seed=0, resamples=0, simulations=1, refits=0, test=False)
    em = next(d for d in r.reliability if d["binning"] == "equal_mass")
    assert len(em["bins"]) == b
    segments = next(c for c in ax.collections if len(c.get_segments()) == full.sum())
    for seg, bin_ in zip(segments.get_segments(), em["bins"]):
        (x0, lo), (x1, hi) = seg
        assert x0 == x1 == bin_["mean_score"]
        assert lo == pytest.approx(bin_["interval"]["lower"], abs=1e-15)
        assert hi == pytest.approx(bin_["interval"]["upper"], abs=1e-15)
    path = tmp_path / "reliability.png"
    ax.figure.savefig(path, dpi=80)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_reliability_equal_width_and_from_a_report(agg, tmp_path):
    import tce.plot

    s, y = beta_data(800)
    ax = tce.plot.reliability(s, y, binning="equal_width", bins=10, counts=False)
    rel = tce.reliability_bins(s, y, binning="equal_width", bins=10)
    xy, bars = drawn(ax)
    full = rel.count > 0
    np.testing.assert_array_equal(xy[:, 1], rel.accuracy[full])
    assert bars == []
    r = tce.report(s, y, seed=0, resamples=0, simulations=1, refits=0, test=False)
    for binning in ("equal_width", "equal_mass"):
        fig_ax = tce.plot.reliability(r, binning=binning)
        xy, bars = drawn(fig_ax)
        diagram = next(d for d in r.reliability if d["binning"] == binning)
        kept = [b for b in diagram["bins"] if b["count"] > 0]
        assert list(xy[:, 0]) == [b["mean_score"] for b in kept]
        assert list(xy[:, 1]) == [b["accuracy"] for b in kept]
        assert [p.get_height() for p in bars] == [b["count"] for b in kept]
    fig_ax.figure.savefig(tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 10_000
    with pytest.raises(tce.InvalidOption, match="labels are needed"):
        tce.plot.reliability(s)
    with pytest.raises(tce.InvalidOption, match="binning"):
        tce.plot.reliability(s, y, binning="quantile")


def test_matplotlib_is_imported_only_when_drawing():
    code = (
        "import sys\n"
        "sys.modules['matplotlib'] = None\n"  # as if not installed
        "import tce, tce.plot\n"
        "assert 'pandas' not in sys.modules\n"
        "try:\n"
        "    tce.plot.reliability([0.5, 0.9], [1, 0])\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert "pip install 'tce-calibration[plot]'" in out.stdout
