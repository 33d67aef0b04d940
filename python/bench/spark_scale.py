"""Shuffle volume and wall time of tce.spark against shipping the raw predictions.

Writes a prediction log of --rows rows (Parquet, one file per 10^6 rows, each read as
one partition) in 20 groups (5 models x 4 days), then times, in one Spark session in
local mode (local[2]), one after another:

- ``tce exact``: ``calibration_from_predictions(..., reservoir=None)``: one equal-width
  histogram per partition and group crosses the shuffle;
- ``tce + reservoir``: the same with a reservoir of 10^4 samples per partition and group
  (the equal-mass estimates and the sweeps);
- ``naive``: ``groupBy(model, day).agg(collect_list(score), collect_list(label))``, the
  lists brought to the driver (``toArrow``) and estimated there with the tce functions
  (the same estimators: the equal-width ones must equal tce.spark's bit for bit, which
  the script checks);
- ``transfer``: the floor of any Python-side aggregation: the same rows handed to the
  Python workers as Arrow batches (``mapInArrow``) and only counted there.

Shuffle bytes are Spark's own task metrics (``shuffleWriteBytes`` and
``shuffleReadBytes`` of every stage of the job), read from the Spark UI's REST API on
the loopback interface (``/api/v1/applications/<id>/jobs`` and ``/stages/<id>``) after
each job, by job group. Wall time is ``time.perf_counter`` around each action; the
session is warmed up first (a count over the data, each job once over 10^4 rows, so
that the Python workers are running, and one untimed pass of every row to them). Run it in a venv with
``tce-calibration[spark]``:

    python python/bench/spark_scale.py --rows 1e7 [--data DIR] [--jobs exact,naive]
"""

import argparse
import json
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import tce

MODELS = ["m0", "m1", "m2", "m3", "m4"]
DAYS = [1, 2, 3, 4]
CHUNK = 1_000_000


def write_log(directory: Path, rows: int, seed: int = 0):
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    done, part = 0, 0
    while done < rows:
        n = min(CHUNK, rows - done)
        model = rng.integers(0, len(MODELS), n)
        day = rng.integers(0, len(DAYS), n)
        scores = rng.beta(4.0 + model, 1.0, n)
        labels = (rng.random(n) < scores ** (1.0 + 0.1 * day)).astype(np.uint8)
        pq.write_table(pa.table({
            "model": pa.array(np.array(MODELS)[model]),
            "day": pa.array(np.array(DAYS, dtype=np.int32)[day]),
            "score": scores, "label": labels,
        }), directory / f"part-{part:04d}.parquet")
        done += n
        part += 1


def rest(spark, path):
    url = f"http://127.0.0.1:{spark.sparkContext.uiWebUrl.rsplit(':', 1)[1]}/api/v1/" \
          f"applications/{spark.sparkContext.applicationId}/{path}"
    assert url.startswith("http://127.0.0.1:")  # loopback only
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def shuffle_bytes(spark, group):
    """(shuffle write, shuffle read) bytes over every stage of the jobs of `group`, once
    the UI's listener has seen them finish."""
    for _ in range(100):
        jobs = [j for j in rest(spark, "jobs") if j.get("jobGroup") == group]
        if jobs and all(j["status"] in ("SUCCEEDED", "FAILED") for j in jobs):
            stages = sorted({s for j in jobs for s in j["stageIds"]})
            attempts = [a for s in stages for a in rest(spark, f"stages/{s}")
                        if a["status"] == "COMPLETE"]
            if len({a["stageId"] for a in attempts}) + sum(
                    j.get("numSkippedStages", 0) for j in jobs) >= len(stages):
                return (sum(a["shuffleWriteBytes"] for a in attempts),
                        sum(a["shuffleReadBytes"] for a in attempts))
        time.sleep(0.5)
    raise RuntimeError(f"the jobs of {group} did not finish in the UI")


def timed(spark, group, action):
    spark.sparkContext.setJobGroup(group, group)
    start = time.perf_counter()
    result = action()
    wall = time.perf_counter() - start
    write, read = shuffle_bytes(spark, group)
    return result, wall, write, read


def naive(spark, log):
    from pyspark.sql import functions as F

    table = (log.groupBy("model", "day")
             .agg(F.collect_list("score").alias("s"), F.collect_list("label").alias("y"))
             .toArrow())
    out = {}
    for model, day, s, y in zip(*(table.column(c).to_pylist() for c in table.column_names)):
        s, y = np.array(s), np.array(y, dtype=np.uint8)
        out[(model, day)] = dict(
            n=len(s),
            ece_bin=tce.ece_bin(s, y, binning="equal_width").value,
            ece_debias=tce.ece_debias(s, y, binning="equal_width").value,
            mce=tce.mce(s, y, binning="equal_width").value,
            ece_bin_em=tce.ece_bin(s, y).value,
            ece_sweep_em=tce.ece_sweep(s, y).value,
        )
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--data", type=Path)
    parser.add_argument("--jobs", default="exact,reservoir,transfer,naive",
                        help="which jobs to time, in this order (comma-separated)")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--arrow-batch", type=int, default=10_000,
                        help="spark.sql.execution.arrow.maxRecordsPerBatch (Spark's default "
                             "10000): rows per Arrow batch handed to the Python workers")
    args = parser.parse_args()
    rows = int(args.rows)
    data = args.data or Path(tempfile.mkdtemp(prefix="tce-spark-scale-"))
    if not any(data.glob("*.parquet")):
        start = time.perf_counter()
        write_log(data, rows)
        print(f"wrote {rows:.0e} rows to {data} in {time.perf_counter() - start:.1f} s",
              file=sys.stderr)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark.sql import SparkSession

    import tce.spark as ts

    spark = (SparkSession.builder.master("local[2]").appName("tce-spark-scale")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.port", "4077")
             .config("spark.driver.memory", args.driver_memory)
             .config("spark.sql.shuffle.partitions", "4")
             # One partition per 10^6-row file.
             .config("spark.sql.files.maxPartitionBytes", str(12 * 2**20))
             .config("spark.sql.files.openCostInBytes", str(12 * 2**20))
             .config("spark.sql.adaptive.enabled", "false")
             .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(args.arrow_batch))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    log = spark.read.parquet(str(data))
    partitions = log.rdd.getNumPartitions()
    assert log.count() == rows
    groups = ["model", "day"]
    results = []
    # Warm-up: the Python workers and both code paths on a slice of the data, then one
    # full pass of the rows to the Python workers (untimed): the first full pass over
    # the data is slower whatever job it is.
    head = log.limit(10_000)
    ts.calibration_from_predictions(head, groups).collect()
    naive(spark, head)
    log.select("model", "day", "score", "label").mapInArrow(_count, "n long").collect()

    jobs = args.jobs.split(",")
    exact = sampled = None
    if "exact" in jobs:
        exact, wall, write, read = timed(spark, "tce-exact", lambda: {
            (r.model, r.day): r for r in
            ts.calibration_from_predictions(log, groups, reservoir=None).collect()})
        results.append(("tce exact (histograms)", wall, write, read))
    if "reservoir" in jobs:
        sampled, wall, write, read = timed(spark, "tce-reservoir", lambda: {
            (r.model, r.day): r for r in
            ts.calibration_from_predictions(log, groups, reservoir=10_000).collect()})
        results.append(("tce + reservoir of 10^4", wall, write, read))
    if exact and sampled:
        for key, r in exact.items():
            assert (r.n, r.ece_bin, r.mce) == (sampled[key].n, sampled[key].ece_bin,
                                               sampled[key].mce)
    if "transfer" in jobs:
        # The floor of any Python-side aggregation: the rows handed to the Python
        # workers as Arrow batches, and only counted there.
        counted, wall, write, read = timed(spark, "transfer", lambda: log.select(
            "model", "day", "score", "label").mapInArrow(_count, "n long").collect())
        assert sum(r.n for r in counted) == rows
        results.append(("Arrow transfer to Python only (mapInArrow, rows counted)", wall,
                        write, read))
    if "naive" in jobs:
        raw, wall, write, read = timed(spark, "naive", lambda: naive(spark, log))
        results.append(("naive: collect_list + estimate", wall, write, read))
        for key, r in (exact or sampled or {}).items():
            for c in ("n", "ece_bin", "ece_debias", "mce"):
                assert raw[key][c] == getattr(r, c), (key, c, raw[key][c], getattr(r, c))
    spark.stop()

    print(f"rows {rows:.0e}, {len(DAYS) * len(MODELS)} groups, {partitions} input partitions, Arrow "
          f"batches of {args.arrow_batch} rows; "
          f"histogram state {len(tce.Histogram().to_bytes())} B, full reservoir of 10^4 "
          f"{len(_full_reservoir())} B\n")
    print("| job | wall (s) | shuffle write (bytes) | shuffle read (bytes) |")
    print("|---|---|---|---|")
    for name, wall, write, read in results:
        print(f"| {name} | {wall:.1f} | {write:,} | {read:,} |")


def _count(batches):
    yield pa.RecordBatch.from_pydict({"n": [sum(b.num_rows for b in batches)]})


def _full_reservoir():
    r = tce.Reservoir(10_000)
    r.update(np.full(10_000, 0.5), np.ones(10_000, dtype=np.uint8))
    return r.to_bytes()


if __name__ == "__main__":
    main()
