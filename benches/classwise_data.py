"""Synthetic softmax outputs for the classwise report's benchmark (docs/performance.md):
N rows of K-class logits from numpy, seed 0, written as float32 `.npy` logits and int32
class ids.

    python benches/classwise_data.py ROWS CLASSES OUT_DIR   # OUT_DIR/logits.npy, labels.npy

Each row's true class is uniform; its logits are N(0, 1) with the true class raised by 3,
scaled by 2 (an overconfident network; top-1 accuracy 0.91 at K = 10, 0.67 at K = 100,
0.41 at K = 1000).
"""
import sys
from pathlib import Path

import numpy as np

rows, classes, out = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
rng = np.random.default_rng(0)
truth = rng.integers(0, classes, rows)
logits = rng.normal(0.0, 1.0, (rows, classes))
logits[np.arange(rows), truth] += 3.0
logits *= 2.0
out.mkdir(parents=True, exist_ok=True)
np.save(out / "logits.npy", logits.astype(np.float32))
np.save(out / "labels.npy", truth.astype(np.int32))
top = logits.argmax(axis=1)
print(f"{rows} x {classes}: accuracy {np.mean(top == truth):.3f}")
