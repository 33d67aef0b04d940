"""A notebook's session with tce, as a script: which model is miscalibrated
(tce.by_group over four CIFAR models' test predictions in data/), and the reliability
diagrams of one of them (tce.plot.reliability), saved as docs/images/reliability.png.

    pip install './python[pandas,plot]'
    python3 examples/notebook_views.py [--out docs/images/reliability.png]

docs/python.md shows its output and the image. Needs pandas and matplotlib (the extras
``pandas`` and ``plot``); draws with the Agg backend (no display).
"""

import argparse
import csv
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = ["densenet40_c10", "resnet110_c10", "densenet40_c100", "resnet110_c100"]


def load(name):
    with open(ROOT / "data" / f"{name}_test.csv", newline="") as f:
        rows = [(float(r["confidence"]), int(r["correct"])) for r in csv.DictReader(f)]
    return np.array([r[0] for r in rows]), np.array([r[1] for r in rows], dtype=np.uint8)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "images" / "reliability.png"))
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    import tce
    import tce.plot

    frames = []
    for name in MODELS:
        s, y = load(name)
        frames.append(pd.DataFrame({"model": name, "confidence": s, "correct": y}))
    log = pd.concat(frames, ignore_index=True)

    table = tce.by_group("confidence", "correct", "model", data=log, seed=0)
    with pd.option_context("display.width", 200, "display.max_columns", 20,
                           "display.float_format", "{:.4g}".format):
        print(table[["model", "n", "estimate", "lower", "upper", "statistic", "p_value",
                     "p_adjusted", "reject", "flag"]].to_string(index=False))

    s, y = load("resnet110_c100")
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.6))
    tce.plot.reliability(s, y, ax=left)
    tce.plot.reliability(s, y, binning="equal_width", ax=right)
    fig.suptitle("ResNet-110 on CIFAR-100 (data/resnet110_c100_test.csv)")
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
