"""tce.spark on Spark in local mode (local[2]): its results against a single-process
merge of the same states (bit for bit), against the CLI over the raw data concatenated
(the equal-width estimators, and the equal-mass ones where the reservoir held every
sample), and invalid bytes counted and reported per group.

pyspark and its Java come from scripts/test (pyspark in the venv from
scripts/requirements-test.txt, Java 17 from Debian when missing); nothing is
downloaded here. One SparkSession serves the whole module, on small data.
"""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tce


@pytest.fixture(scope="module")
def spark():
    # The workers must run this interpreter (the venv's, where tce is installed).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        pytest.fail(f"pyspark is missing ({e}): run the tests through scripts/test")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("tce-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "3")
        # Small Arrow batches: each partition's state is built over several.
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "700")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def ts():
    import tce.spark

    return tce.spark


OPTIONS = dict(norm=2.0, bins=15, closure="left", ties="split")
EW = ("ece_bin", "ece_debias", "mce")
EM = ("ece_bin_em", "ece_debias_em", "mce_em", "ece_sweep_em", "sweep_bins_em",
      "ece_sweep_ew", "sweep_bins_ew")


def fleet_predictions(seed=0):
    """Prediction rows (model, day, score, label): groups of different sizes, some
    scores tied, one group small enough for a reservoir of 1000 to hold it whole."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, day, n, a in [("a", 1, 2500, 5.0), ("a", 2, 1800, 3.0), ("b", 1, 600, 8.0)]:
        p = rng.beta(a, 1.0, n)
        p[: n // 10] = np.round(p[: n // 10], 2)  # ties
        y = (rng.random(n) < p ** 1.3).astype(np.int64)
        rows += [(model, day, float(s), int(l)) for s, l in zip(p, y)]
    order = rng.permutation(len(rows))
    return [rows[i] for i in order]


def estimates_of(histogram, samples):
    """The estimate columns, computed in this process from merged states."""
    out = {}
    out["n"] = histogram.samples
    out["ece_bin"] = histogram.ece_bin(norm=2.0).value
    out["ece_debias"] = histogram.ece_debias(norm=2.0).value
    out["mce"] = histogram.mce().value
    em = dict(binning="equal_mass", bins=15, ties="split")
    out["sample_n"] = len(samples)
    out["ece_bin_em"] = samples.ece_bin(norm=2.0, **em).value
    out["ece_debias_em"] = samples.ece_debias(norm=2.0, **em).value
    out["mce_em"] = samples.mce(**em).value
    s = samples.ece_sweep(binning="equal_mass", norm=2.0)
    out["ece_sweep_em"], out["sweep_bins_em"] = s.value, s.bins
    s = samples.ece_sweep(binning="equal_width", norm=2.0)
    out["ece_sweep_ew"], out["sweep_bins_ew"] = s.value, s.bins
    return out


def cli_estimate(cli, tmp_path, name, scores, labels):
    """`tce estimate --json` over the raw rows, as (estimator, binning) -> (bins, value)."""
    path = tmp_path / f"{name}.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["confidence", "correct"])
        w.writerows((repr(float(s)), int(y)) for s, y in zip(scores, labels))
    out = subprocess.run([str(cli), "estimate", "--json", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return {(r["estimator"], r.get("binning")): (r.get("bins"), r["value"])
            for r in json.loads(out)["estimates"]}


def test_predictions_equal_a_single_process_merge_and_the_cli(spark, ts, cli, tmp_path):
    rows = fleet_predictions()
    df = spark.sparkContext.parallelize(rows, 4).toDF("model string, day int, score double, "
                                                      "label long")
    groups = ["model", "day"]
    partials = ts.partial_states(df, groups, reservoir=1000, seed=3).collect()
    result = {(r.model, r.day): r.asDict()
              for r in ts.calibration_from_predictions(df, groups, reservoir=1000,
                                                       seed=3).collect()}
    assert set(result) == {("a", 1), ("a", 2), ("b", 1)}
    # Every partition contributed a histogram and a reservoir to every group.
    assert {p["_tce_partition"] for p in partials} == {0, 1, 2, 3}

    for key, got in result.items():
        mine = sorted((p for p in partials if (p.model, p.day) == key),
                      key=lambda p: p["_tce_partition"])
        # The single-process merge of the same states, in partition order.
        hist = res = None
        for p in mine:
            if p["_tce_kind"] == "histogram":
                h = tce.Histogram.from_bytes(p["_tce_state"])
                hist = h if hist is None else (hist.merge(h) or hist)
            else:
                r = tce.Reservoir.from_bytes(p["_tce_state"])
                res = r if res is None else (res.merge(r) or res)
        want = estimates_of(hist, res)
        for column, value in want.items():
            assert got[column] == value, (key, column)
        assert got["kind"] == "histogram+reservoir"
        assert (got["states"], got["invalid"], got["first_error"]) == (4, 0, None)
        assert got["ew_source"] == "histogram"

        # Against the CLI over the group's raw rows, concatenated.
        scores = np.array([r[2] for r in rows if (r[0], r[1]) == key])
        labels = np.array([r[3] for r in rows if (r[0], r[1]) == key])
        assert got["n"] == len(scores)
        assert got["accuracy"] == labels.sum() / len(labels)
        cli_rows = cli_estimate(cli, tmp_path, f"{key[0]}{key[1]}", scores, labels)
        for column, name in zip(EW, ("ece_bin", "ece_debias", "mce")):
            assert (15, got[column]) == cli_rows[(name, "equal_width")], (key, column)
        if len(scores) <= 1000:
            # The reservoir held every sample: the equal-mass estimates are exact.
            assert got["em_source"] == "all samples"
            assert got["sample_n"] == len(scores)
            for column, name in [("ece_bin_em", "ece_bin"), ("ece_debias_em", "ece_debias"),
                                 ("mce_em", "mce")]:
                assert (15, got[column]) == cli_rows[(name, "equal_mass")], (key, column)
            assert ((got["sweep_bins_em"], got["ece_sweep_em"])
                    == cli_rows[("ece_sweep", "equal_mass")])
            assert ((got["sweep_bins_ew"], got["ece_sweep_ew"])
                    == cli_rows[("ece_sweep", "equal_width")])
        else:
            assert got["em_source"] == "reservoir sample"
            assert got["sample_n"] == 1000

        # And `tce merge` over the same partial histograms, as files.
        files = []
        for p in mine:
            if p["_tce_kind"] == "histogram":
                files.append(tmp_path / f"{key[0]}{key[1]}-{p['_tce_partition']}.tce")
                files[-1].write_bytes(p["_tce_state"])
        merged = json.loads(subprocess.run([str(cli), "merge", "--json", *map(str, files)],
                                           capture_output=True, text=True,
                                           check=True).stdout)
        assert merged["n"] == got["n"]
        assert [e["value"] for e in merged["estimates"]] == [got[c] for c in EW]

    # One group over everything, no group columns.
    (whole,) = ts.calibration_from_predictions(df, reservoir=10_000).collect()
    h = tce.Histogram()
    h.update(np.array([r[2] for r in rows]), np.array([r[3] for r in rows]))
    assert (whole.n, whole.ece_bin, whole.mce) == (h.samples, h.ece_bin().value, h.mce().value)
    assert whole.em_source == "all samples"
    assert whole.ece_sweep_em == tce.ece_sweep(np.array([r[2] for r in rows]),
                                               np.array([r[3] for r in rows])).value


def test_class_probabilities_and_logits_reduce_to_the_top_label(spark, ts):
    rng = np.random.default_rng(5)
    n, k = 900, 3
    logits = rng.normal(size=(n, k)) * 2.0
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    labels = rng.integers(0, k, n)
    group = rng.integers(0, 2, n)
    rows = [(int(g), *map(float, p), [float(v) for v in z], int(y))
            for g, p, z, y in zip(group, probs, logits, labels)]
    df = spark.sparkContext.parallelize(rows, 3).toDF(
        "g int, p0 double, p1 double, p2 double, z array<double>, y long")
    by_cols = {r.g: r for r in ts.calibration_from_predictions(
        df, ["g"], probs=["p0", "p1", "p2"], label_col="y").collect()}
    by_logits = {r.g: r for r in ts.calibration_from_predictions(
        df, ["g"], probs="z", logits=True, label_col="y").collect()}
    for g in (0, 1):
        sel = group == g
        want = tce.ece_bin(probs[sel], labels[sel], binning="equal_width")
        assert by_cols[g].ece_bin == want.value
        assert by_cols[g].n == sel.sum()
        from_logits = tce.ece_bin(logits[sel], labels[sel], binning="equal_width", logits=True)
        assert by_logits[g].ece_bin == from_logits.value
        assert by_logits[g].em_source == "all samples"
        assert by_logits[g].ece_sweep_em == tce.ece_sweep(logits[sel], labels[sel],
                                                          logits=True).value


def test_by_group_equals_tce_by_group_where_the_reservoir_holds_every_row(spark, ts):
    import pandas as pd

    rng = np.random.default_rng(4)
    model = np.array(["a"] * 400 + ["b"] * 300 + ["c"] * 200)
    scores = rng.uniform(0.3, 1.0, model.size)  # distinct: one sorted order
    # Group c overconfident by 0.3: the one miscalibrated (known truth).
    hit = rng.uniform(size=model.size) < np.clip(scores - np.where(model == "c", 0.3, 0), 0, 1)
    labels = hit.astype(np.int64)
    rows = [(str(m), float(s), int(y)) for m, s, y in zip(model, scores, labels)]
    df = spark.sparkContext.parallelize(rows, 3).toDF("model string, score double, label long")
    fast = dict(resamples=100, test_resamples=99, test_power_simulations=10, seed=3)
    got = ts.by_group(df, ["model"], reservoir=1000, **fast)
    assert list(got["source"]) == ["all samples"] * 3
    assert list(got["n"]) == list(got["sample_n"]) == [400, 300, 200]
    # The reservoir's samples come sorted by score: tce.by_group over the rows in that
    # order gives every column, bit for bit (the test's resampled labels follow the order).
    order = np.argsort(scores, kind="stable")
    expected = tce.by_group(scores[order], labels[order], model[order], **fast)
    pd.testing.assert_frame_equal(
        got.drop(columns=["sample_n", "source"]).rename(columns={"model": "group"}), expected)
    assert list(got["reject"]) == [False, False, True]
    # A reservoir smaller than a group: the row is over a uniform sample of it; n stays
    # the group's exact row count.
    small = ts.by_group(df, ["model"], reservoir=250, **fast)
    assert list(small["source"]) == ["reservoir sample", "reservoir sample", "all samples"]
    assert list(small["sample_n"]) == [250, 250, 200]
    assert list(small["n"]) == [400, 300, 200]
    assert small.iloc[2]["estimate"] == got.iloc[2]["estimate"]
    with pytest.raises(tce.InvalidOption, match="needs a reservoir"):
        ts.by_group(df, ["model"], reservoir=None)
    with pytest.raises(tce.InvalidOption, match="p_adjust"):
        ts.by_group(df, ["model"], p_adjust="bonferroni")


def test_bad_predictions_fail_with_the_named_error(spark, ts):
    df = spark.createDataFrame([(0.5, 1), (1.5, 0)], "score double, label long")
    with pytest.raises(Exception, match="ScoreOutOfRange|outside"):
        ts.calibration_from_predictions(df).collect()
    with pytest.raises(ValueError, match="not columns of the DataFrame"):
        ts.calibration_from_predictions(df, ["nope"])


def test_encoded_states_merge_by_group_and_invalid_bytes_are_reported(
        spark, ts, cli, c_states, tmp_path):
    rng = np.random.default_rng(11)
    rows, raw = [], {}
    device = 0

    def add(model, state_bytes, scores=None, labels=None):
        nonlocal device
        rows.append((model, device, state_bytes))
        if scores is not None:
            raw.setdefault(model, []).append((scores, labels))
        device += 1

    # Model "h": 120 devices with histograms from Python and 3 from the C library.
    for i in range(120):
        n = int(rng.integers(1, 60))
        p = rng.beta(4.0, 1.0, n)
        y = (rng.random(n) < p).astype(np.uint8)
        h = tce.Histogram()
        h.update(p, y)
        add("h", h.to_bytes(), p, y)
    for i in range(3):
        p = rng.beta(4.0, 1.0, 40)
        y = (rng.random(40) < p).astype(np.uint8)
        lines = "".join(f"{s!r} {l}\n" for s, l in zip(p.tolist(), y.tolist()))
        out = tmp_path / f"c{i}"
        out.mkdir()
        subprocess.run([str(c_states), "encode", str(out)], input=lines, text=True, check=True)
        add("h", (out / "histogram.bin").read_bytes(), p, y)
    # Model "r": 40 devices with reservoirs of capacity 64.
    for i in range(40):
        n = int(rng.integers(10, 100))
        p = rng.beta(2.0, 1.0, n)
        y = (rng.random(n) < p).astype(np.uint8)
        r = tce.Reservoir(64, seed=i)
        r.update(p, y)
        add("r", r.to_bytes(), p, y)
    # Model "d": 20 devices with decaying histograms of one half-life.
    decaying = []
    for i in range(20):
        n = int(rng.integers(5, 80))
        p = rng.beta(3.0, 1.0, n)
        y = (rng.random(n) < p).astype(np.uint8)
        d = tce.DecayingHistogram(half_life=50.0)
        d.update(p, y)
        decaying.append(d)
        add("d", d.to_bytes())
    # Bad ones in "h": corrupted, truncated, not a state, null, another kind, other bins.
    good = bytearray(rows[0][2])
    corrupted = bytearray(good)
    corrupted[30] ^= 0x01
    add("h", bytes(corrupted))
    add("h", bytes(good[:-3]))
    add("h", b"hello, spark")
    add("h", None)
    add("h", tce.Reservoir(8).to_bytes())
    other_bins = tce.Histogram(bins=10)
    other_bins.update(np.array([0.3]), np.array([1]))
    add("h", other_bins.to_bytes())
    # Model "x": nothing valid at all.
    add("x", b"\x00" * 40)
    add("x", bytes(corrupted))
    order = rng.permutation(len(rows))
    rows = [rows[i] for i in order]

    from pyspark.sql import functions as F

    df = spark.sparkContext.parallelize(rows, 3).toDF("model string, device long, state binary")
    result = {r.model: r.asDict() for r in ts.calibration_from_states(df, ["model"]).collect()}
    assert set(result) == {"h", "r", "x", "d"}

    # Decaying histograms: as the core merges them, in any order up to the weights' last
    # bits.
    whole = tce.DecayingHistogram(half_life=50.0)
    for state in decaying:
        whole.merge(state)
    d = result["d"]
    assert (d["kind"], d["states"], d["invalid"], d["ew_source"]) == (
        "decaying_histogram", 20, 0, "decaying_histogram")
    assert d["ece_bin"] == pytest.approx(whole.ece_bin().value, rel=1e-12)
    assert d["mce"] == pytest.approx(whole.mce().value, rel=1e-12)

    # Histograms: exact, so equal to one histogram over every device's raw samples, and
    # to the CLI's estimate over them concatenated.
    h = result["h"]
    assert (h["kind"], h["states"], h["invalid"]) == ("histogram", 123, 6)
    assert h["first_error"] is not None
    scores = np.concatenate([s for s, _ in raw["h"]])
    labels = np.concatenate([y for _, y in raw["h"]])
    whole = tce.Histogram()
    whole.update(scores, labels)
    assert (h["n"], h["ece_bin"], h["ece_debias"], h["mce"]) == (
        whole.samples, whole.ece_bin().value, whole.ece_debias().value, whole.mce().value)
    cli_rows = cli_estimate(cli, tmp_path, "fleet_h", scores, labels)
    for column in EW:
        assert (15, h[column]) == cli_rows[(column, "equal_width")]
    assert h["em_source"] is None and h["ece_sweep_em"] is None

    # The messages name each cause; every bad row is counted, none fails the job.
    def decode_error(b):
        try:
            ts.decode_state(b)
        except tce.Error as e:
            return f"{type(e).__name__}: {e}"

    errors = [decode_error(b) for m, _, b in rows if m == "h"]
    assert h["first_error"] in [e for e in errors if e is not None] + [
        "MergeMismatch: 1 reservoir state of capacity 8 does not merge with the group's "
        "123 histogram states of 15 bins (left-closed)",
        "MergeMismatch: 1 histogram state of 10 bins (left-closed) does not merge with the "
        "group's 123 histogram states of 15 bins (left-closed)",
    ]
    x = result["x"]
    assert (x["kind"], x["states"], x["invalid"], x["n"], x["ece_bin"]) == (
        None, 0, 2, None, None)
    assert "DecodeError" in x["first_error"]

    # Reservoirs: equal to the single-process merge of the same states in the same order
    # (each partition's in row order, then the partitions in order).
    parts = (df.withColumn("p", F.spark_partition_id())
               .withColumn("i", F.monotonically_increasing_id())
               .where(F.col("model") == "r").orderBy("i").collect())
    merged_parts = []
    for p in sorted({r.p for r in parts}):
        acc = None
        for row in (r for r in parts if r.p == p):
            s = tce.Reservoir.from_bytes(row.state)
            acc = s if acc is None else (acc.merge(s) or acc)
        merged_parts.append(tce.Reservoir.from_bytes(acc.to_bytes()))
    res = merged_parts[0]
    for other in merged_parts[1:]:
        res.merge(other)
    r = result["r"]
    assert (r["kind"], r["states"], r["invalid"], r["first_error"]) == ("reservoir", 40, 0, None)
    assert r["n"] == res.seen == sum(len(s) for s, _ in raw["r"])
    assert r["sample_n"] == len(res) == 64
    assert r["em_source"] == "reservoir sample"
    assert r["ew_source"] == "reservoir sample"
    for column, value in estimates_of_samples(res).items():
        assert r[column] == value, column


def test_a_group_of_mixed_states_is_judged_the_same_in_any_order(spark, ts):
    """The kind and shape most of a group's states share is the group's, whatever the
    partitioning and the order of the rows; the others are counted as mismatches."""
    rng = np.random.default_rng(5)
    states, raw = [], []
    for i in range(7):
        p = rng.beta(3.0, 1.0, 30)
        y = (rng.random(30) < p).astype(np.uint8)
        h = tce.Histogram()
        h.update(p, y)
        states.append(h.to_bytes())
        raw.append((p, y))
    for i in range(3):
        r = tce.Reservoir(16, seed=i)
        r.update(rng.random(20), np.ones(20, dtype=np.uint8))
        states.append(r.to_bytes())
    for bins in (10, 10):
        h = tce.Histogram(bins=bins)
        h.update([0.5], [1])
        states.append(h.to_bytes())
    whole = tce.Histogram()
    whole.update(np.concatenate([p for p, _ in raw]), np.concatenate([y for _, y in raw]))
    expected = ("histogram", 7, 5, whole.samples, whole.ece_bin().value)
    results = set()
    for layout in range(6):
        order = np.random.default_rng(layout).permutation(len(states))
        if layout < 2:  # the minority first, in one partition
            order = list(range(len(states) - 1, -1, -1))
        rows = [("g", int(i), states[i]) for i in order]
        df = spark.sparkContext.parallelize(rows, 1 + layout % 4).toDF(
            "model string, device long, state binary")
        (row,) = ts.calibration_from_states(df, ["model"]).collect()
        got = (row.kind, row.states, row.invalid, row.n, row.ece_bin)
        assert got == expected, (layout, got, row.first_error)
        assert row.first_error.startswith("MergeMismatch: "), row.first_error
        results.add(row.first_error)
    # The message too: the largest other class first, whatever the order.
    assert results == {"MergeMismatch: 3 reservoir states of capacity 16 do not merge with "
                       "the group's 7 histogram states of 15 bins (left-closed)"}


def test_empty_sorted_buffers_merge_into_an_empty_buffer(spark, ts):
    empty = tce.SortedBuffer(4).to_bytes()
    full = tce.SortedBuffer(3)
    full.update([0.2, 0.9, 0.7], [0, 1, 1])
    rows = [("e", 0, empty), ("e", 1, empty), ("m", 2, empty), ("m", 3, full.to_bytes()),
            ("m", 4, empty)]
    df = spark.sparkContext.parallelize(rows, 2).toDF("model string, device long, state binary")
    result = {r.model: r for r in ts.calibration_from_states(df, ["model"]).collect()}
    e, m = result["e"], result["m"]
    assert (e.kind, e.states, e.invalid, e.first_error, e.n, e.sample_n) == (
        "buffer", 2, 0, None, 0, 0)
    assert (m.kind, m.states, m.invalid, m.first_error, m.n) == ("buffer", 3, 0, None, 3)
    assert m.ece_sweep_em == tce.ece_sweep([0.2, 0.9, 0.7], [0, 1, 1]).value


def estimates_of_samples(s):
    ew = dict(binning="equal_width", bins=15, closure="left")
    em = dict(binning="equal_mass", bins=15, ties="split")
    out = {
        "ece_bin": s.ece_bin(norm=2.0, **ew).value,
        "ece_debias": s.ece_debias(norm=2.0, **ew).value,
        "mce": s.mce(**ew).value,
        "ece_bin_em": s.ece_bin(norm=2.0, **em).value,
        "ece_debias_em": s.ece_debias(norm=2.0, **em).value,
        "mce_em": s.mce(**em).value,
    }
    sweep = s.ece_sweep(binning="equal_mass", norm=2.0)
    out["ece_sweep_em"], out["sweep_bins_em"] = sweep.value, sweep.bins
    sweep = s.ece_sweep(binning="equal_width", norm=2.0)
    out["ece_sweep_ew"], out["sweep_bins_ew"] = sweep.value, sweep.bins
    return out


def test_the_module_is_imported_only_when_asked_for():
    code = "import sys, tce; print('tce.spark' in sys.modules, 'pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]


def test_the_fleet_example_runs(spark, tmp_path):
    import importlib.util

    import pyarrow.parquet as pq

    path = Path(__file__).resolve().parents[2] / "examples" / "spark_fleet.py"
    spec = importlib.util.spec_from_file_location("spark_fleet", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    by_model, by_day = example.main(["--devices", "300", "--rows", "20000", "--out",
                                     str(tmp_path)], spark=spark)
    by_model = {r.model: r for r in by_model}
    fleet = pq.read_table(tmp_path / "states.parquet").to_pylist()
    # v1: the Python histograms and the C library's, three bad uploads reported.
    v1 = [tce.Histogram.from_bytes(r["state"]) for r in fleet
          if r["model"] == "v1" and len(r["state"]) > 0 and r["device"] < 300]
    c_histogram = tce.Histogram.from_bytes((example.C_FRAMES / "histogram.bin").read_bytes())
    whole = c_histogram
    for h in v1:
        whole.merge(h)
    assert (by_model["v1"].states, by_model["v1"].invalid) == (len(v1) + 1, 3)
    assert (by_model["v1"].n, by_model["v1"].ece_bin) == (whole.samples, whole.ece_bin().value)
    assert by_model["v3"].kind == "reservoir" and by_model["v3"].invalid == 0
    assert by_model["v3"].em_source == "reservoir sample"
    assert sum(r.n for r in by_day) == 20000


def test_by_group_from_states_gives_what_each_groups_merged_state_allows(spark, ts):
    from tce._groups import _options, state_row

    rng = np.random.default_rng(17)
    rows, merged = [], {}

    def device(model, state, merge):
        rows.append((model, state.to_bytes()))
        if model not in merged:
            merged[model] = merge()
        m = merged[model]
        m.merge(state)

    # "h": 30 devices' histograms; "c": the same but over-confident (known truth);
    # "r": 20 devices' reservoirs, big enough to hold every sample.
    for model, shift in (("h", 0.0), ("c", 0.25)):
        for _ in range(30):
            p = rng.beta(4.0, 1.0, 40)
            h = tce.Histogram()
            h.update(p, (rng.random(40) < np.clip(p - shift, 0, 1)).astype(np.uint8))
            device(model, h, tce.Histogram)
    for i in range(20):
        p = rng.beta(2.0, 1.0, 30)
        r = tce.Reservoir(1000, seed=i)
        r.update(p, (rng.random(30) < p).astype(np.uint8))
        device("r", r, lambda: tce.Reservoir(1000, seed=0))
    rows.append(("r", b"not a state"))
    df = spark.createDataFrame(rows, "model string, state binary").repartition(2)
    fast = dict(resamples=100, test_resamples=99, test_power_simulations=10, seed=3)
    got = ts.by_group_from_states(df, ["model"], estimator="ece_bin:equal_width", **fast)
    assert list(got["model"]) == ["c", "h", "r"]
    assert list(got["kind"]) == ["histogram", "histogram", "reservoir"]
    assert list(got["states"]) == [30, 30, 20] and list(got["invalid"]) == [0, 0, 1]
    assert got.iloc[2]["first_error"].startswith("DecodeError")
    assert list(got["source"]) == ["histogram bins", "histogram bins", "all samples"]
    assert list(got["n"]) == [1200, 1200, 600]
    options = _options(estimator="ece_bin:equal_width", bins=15, norm=2.0, max_bins=None,
                       paper_limit=False, resamples=100, level=0.95, test=True,
                       test_statistic="auto", test_resamples=99, test_power_simulations=10,
                       alpha=0.05, p_adjust="holm", min_samples=30, seed=3, logits=False)
    # Histograms merge exactly: each row is the merged histogram's, whatever the order.
    for i, model in enumerate(["c", "h"]):
        expected = state_row(merged[model], options)
        for c in ("hits", "estimate", "lower", "upper", "interval_kind", "statistic",
                  "p_value"):
            assert got.iloc[i][c] == expected[c], (model, c)
    assert got.iloc[0]["interval_kind"] == "clopper_pearson_box"
    assert list(got["reject"]) == [True, False, False]
    # The reservoir group's row is tce.by_group's over its merged samples.
    assert got.iloc[2]["sample_n"] == 600 and got.iloc[2]["interval_kind"] in ("bca",
                                                                                "percentile")
    # An estimator that needs samples: the histogram groups are refused with the reason,
    # the reservoir group computed, and only it is in the family.
    sweep = ts.by_group_from_states(df, ["model"], **fast)
    assert list(sweep["flag"]) == [True, True, False]
    assert "needs samples" in sweep.iloc[0]["reason"]
    assert sweep.iloc[2]["p_adjusted"] == sweep.iloc[2]["p_value"]
