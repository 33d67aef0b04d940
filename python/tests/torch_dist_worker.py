"""One rank of test_torch.py's two-process torch.distributed run (gloo, CPU).

Run as ``python torch_dist_worker.py RANK WORLD INIT_FILE OUT_FILE``: it joins the
process group through the file, feeds its shard of each case's data (made by
:func:`case_data`, which the test calls too) to a ``tce.torch.CalibrationError`` in
batches, computes (which syncs the ranks' states) and writes what it saw as JSON.
"""

import json
import sys

import numpy as np

BATCHES = 1000
BATCH = 64


def case_data(case, world):
    """(preds float32, target int64) of every rank's batches: arrays of shape
    (world, BATCHES, BATCH) or (world, BATCHES, BATCH, C)."""
    rng = np.random.default_rng(_SEEDS[case])
    n = (world, BATCHES, BATCH)
    if case.startswith("binary"):
        p = rng.beta(2.0, 1.0, n).astype(np.float32)
        # Exact 0s and 1s, which torchmetrics bins apart (a 1.0 gets a bin of its own).
        p[rng.random(n) < 0.03] = 1.0
        p[rng.random(n) < 0.01] = 0.0
        y = (rng.random(n) < np.clip(p * 0.9 + 0.05, 0, 1)).astype(np.int64)
        return p, y
    logits = rng.normal(0.0, 2.0, n + (5,)).astype(np.float32)
    y = rng.integers(0, 5, n).astype(np.int64)
    logits[np.arange(world)[:, None, None], np.arange(BATCHES)[None, :, None],
           np.arange(BATCH)[None, None, :], y] += 1.5
    if case.endswith("logits"):
        return logits, y
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32), y


_SEEDS = {"binary_tm": 1, "binary_tce": 2, "multiclass_sweep": 3, "multiclass_reservoir": 4,
          "multiclass_logits": 5}

CASES = {
    "binary_tm": dict(task="binary", norm="l1"),
    "binary_tce": dict(task="binary", norm="l2", convention="tce"),
    "multiclass_sweep": dict(task="multiclass", num_classes=5, norm="l2", binning="equal_mass",
                             estimator="sweep", capacity=200_000),
    "multiclass_reservoir": dict(task="multiclass", num_classes=5, norm="l1",
                                 binning="equal_mass", capacity=500, seed=7),
    "multiclass_logits": dict(task="multiclass", num_classes=5, norm="l2", estimator="debiased",
                              convention="tce"),
}


def main():
    rank, world, init_file, out_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    import warnings

    import torch
    import torch.distributed as dist

    import tce
    from tce.torch import CalibrationError

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world)
    out = {}
    for case, options in CASES.items():
        preds, target = case_data(case, world)
        metric = CalibrationError(**options)
        sizes = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for b in range(BATCHES):
                metric.update(torch.from_numpy(preds[rank, b]), torch.from_numpy(target[rank, b]))
                if b + 1 in (10, BATCHES):
                    sizes[b + 1] = metric.state_nbytes
        local = metric.states[0]
        local_bytes = local.to_bytes()
        value = metric.compute()
        # Synced by merging states: the metric registers no per-prediction state.
        registered = sorted(metric._defaults)
        # After compute, this rank's own state is back (updates go on locally).
        restored = metric.states[0].to_bytes() == local_bytes
        result = dict(value=float(value), dtype=str(value.dtype), sizes=sizes,
                      registered=registered, restored=restored,
                      warnings=[str(w.message) for w in caught])
        # The merged state itself, from a sync by hand.
        metric.sync()
        merged = metric.states[0]
        result["merged_samples"] = (merged.samples if isinstance(merged, tce.Histogram)
                                    else len(merged))
        result["merged_seen"] = getattr(merged, "seen", result["merged_samples"])
        result["merged_nbytes"] = metric.state_nbytes
        metric.unsync()
        out[case] = result
    dist.barrier()
    dist.destroy_process_group()
    with open(out_file, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
