#!/usr/bin/env python3
"""A synthetic fleet on Spark in local mode: device states and a prediction log, both
estimated by group with tce.spark (docs/spark.md).

Writes, under --out (default: a new temporary directory):

- ``states.parquet``: one row per device (model, device, state), the state a binary
  column holding the device's tce state in the portable format: equal-width histograms
  (``tce.Histogram.to_bytes``) for models v1 and v2, reservoirs of 500 samples
  (``tce.Reservoir.to_bytes``) for model v3, two frames written by the C library
  (python/tests/c_frames/, when present: a histogram for v1 and a reservoir for v3), and
  a few corrupted uploads, which the job counts and reports instead of dropping;
- ``predictions.parquet``: a prediction log (model, day, score, label);

then runs both jobs, ``calibration_from_states`` by model and
``calibration_from_predictions`` by (model, day), and prints their results.

    pip install './python[spark]'          # pyspark 4, pyarrow, pandas; Java 17
    python3 examples/spark_fleet.py [--devices 2000] [--rows 200000] [--out DIR]
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import tce

ROOT = Path(__file__).resolve().parents[1]
C_FRAMES = ROOT / "python" / "tests" / "c_frames"
# How each model's scores and labels are drawn: Beta(a, 1) scores, labels Bernoulli(s^g)
# (g > 1: over-confident).
MODELS = {"v1": (5.0, 1.2), "v2": (3.0, 1.0), "v3": (8.0, 1.5)}


def draw(rng, model, n):
    a, g = MODELS[model]
    scores = rng.beta(a, 1.0, n)
    labels = (rng.random(n) < scores**g).astype(np.uint8)
    return scores, labels


def write_fleet(path, devices, rng):
    """One state per device, as the devices would upload them, plus bad uploads."""
    models, ids, states = [], [], []
    for device in range(devices):
        model = ("v1", "v2", "v3")[device % 3]
        scores, labels = draw(rng, model, int(rng.integers(20, 400)))
        if model == "v3":
            state = tce.Reservoir(500, seed=device)
        else:
            state = tce.Histogram(bins=15, closure="left")
        state.update(scores, labels)
        models.append(model)
        ids.append(device)
        states.append(state.to_bytes())
    # Frames written by the C library (tce_histogram_encode, tce_reservoir_encode).
    for name, model in (("histogram.bin", "v1"), ("reservoir.bin", "v3")):
        if (C_FRAMES / name).exists():
            models.append(model)
            ids.append(len(ids))
            states.append((C_FRAMES / name).read_bytes())
    # Bad uploads: a flipped bit, a cut-off transfer, an empty body.
    flipped = bytearray(states[0])
    flipped[20] ^= 0x04
    for bad in (bytes(flipped), states[1][:-5], b""):
        models.append("v1")
        ids.append(len(ids))
        states.append(bad)
    table = pa.table({"model": models, "device": pa.array(ids, pa.int64()),
                      "state": pa.array(states, pa.binary())})
    pq.write_table(table, path)
    return table


def write_log(path, rows, rng, days=3):
    models = rng.choice(list(MODELS), rows)
    day = rng.integers(1, days + 1, rows).astype(np.int32)
    scores = np.empty(rows)
    labels = np.empty(rows, dtype=np.uint8)
    for m in MODELS:
        sel = models == m
        scores[sel], labels[sel] = draw(rng, m, int(sel.sum()))
    pq.write_table(pa.table({"model": models, "day": day, "score": scores,
                             "label": labels}), path)


def session():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (SparkSession.builder.master("local[2]").appName("tce-spark-fleet")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4").getOrCreate())


def main(argv=None, spark=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="tce-fleet-"))
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    write_fleet(out / "states.parquet", args.devices, rng)
    write_log(out / "predictions.parquet", args.rows, rng)
    print(f"wrote {args.devices} device states and {args.rows} predictions to {out}")

    import tce.spark as ts

    own = spark is None
    spark = spark or session()
    try:
        states = spark.read.parquet(str(out / "states.parquet"))
        by_model = ts.calibration_from_states(states, ["model"]).orderBy("model")
        print("\nfrom the device states, by model:")
        by_model.select("model", "kind", "states", "invalid", "n", "ece_bin", "mce",
                        "ece_sweep_em", "em_source", "first_error").show(truncate=60)

        log = spark.read.parquet(str(out / "predictions.parquet"))
        by_day = ts.calibration_from_predictions(log, ["model", "day"], reservoir=10_000)
        print("from the prediction log, by model and day:")
        by_day.orderBy("model", "day").select(
            "model", "day", "n", "ece_bin", "ece_debias", "mce", "ece_sweep_em",
            "sweep_bins_em", "em_source").show()
        return by_model.collect(), by_day.collect()
    finally:
        if own:
            spark.stop()


if __name__ == "__main__":
    main()
