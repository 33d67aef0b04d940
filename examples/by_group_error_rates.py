#!/usr/bin/env python3
"""tce.by_group's own error rates, by construction: groups simulated with known TCE.

    python3 examples/by_group_error_rates.py [--reps 400] [--bin-reps 2000] [--n 300]
        [--seed 1] [--fast] [--only rows|bins]

Two tables (docs/python.md, "Which group is miscalibrated? by_group"):

1. ``tce.by_group`` on G = 8 groups of ``--n`` rows each, every group drawn from a
   ``tce.Model`` (Beta scores, a polynomial calibration curve T(c) = c^d; d = 1 is
   calibrated, TCE = 0 exactly). Scenario "8 calibrated": the family-wise error rate
   (some group rejected) of the unadjusted, Holm and BH ``reject`` columns. Scenario
   "6 calibrated + 2 not": Holm's family-wise error rate over the 6 true nulls, BH's
   false discovery rate (false rejections / rejections, 0 with none), the power on the
   2, and how often each miscalibrated group's interval holds its known TCE.
2. The histogram rows of ``tce.spark.by_group_from_states`` (``tce._groups.state_row``
   on a merged ``tce.Histogram``): the Clopper–Pearson box interval's coverage of the
   group's binned calibration error (the bins' mean of T(c) against their mean score,
   computed from the simulator's curve on the drawn scores) and of its TCE by ``lower``;
   Hosmer–Lemeshow's rejection rate over the bins on calibrated groups.

Each rate comes with its Monte-Carlo standard error, sqrt(r(1 − r)/reps).
"""

import argparse
import math

import numpy as np

import tce
from tce._groups import _options, state_row

GROUPS = 8
ALPHA = 0.05
CALIBRATED = tce.Model(2.0, 1.0, "polynomial", d=1)    # scores mostly high, T(c) = c
MISCALIBRATED = tce.Model(2.0, 1.0, "polynomial", d=2)  # over-confident, T(c) = c²


def se(rate, reps):
    return math.sqrt(max(rate * (1 - rate), 1e-12) / reps)


def cell(rate, reps):
    return f"{rate:.3f} ± {se(rate, reps):.3f}"


def draw(models, n, seed, rep):
    scores, labels, groups = [], [], []
    for g, model in enumerate(models):
        # Each group its own stream: seed and group number, then the repetition.
        s, y = model.sample(n, seed=seed * 1000 + g, rep=rep)
        scores.append(s)
        labels.append(y)
        groups.append(np.full(n, g))
    return np.concatenate(scores), np.concatenate(labels), np.concatenate(groups)


def rows_table(reps, n, seed, fast):
    """Scenario rates of tce.by_group's ``reject`` and intervals."""
    options = dict(seed=seed, alpha=ALPHA)
    if fast:
        # 399 test resamples: the smallest p-value, 1/400, times 8 groups is still
        # below alpha, so Holm can reject.
        options.update(resamples=200, test_resamples=399, test_power_simulations=20)
    out = []
    # Scenario 1: every group calibrated.
    any_rejected = {"none": 0, "holm": 0, "bh": 0}
    for rep in range(reps):
        s, y, g = draw([CALIBRATED] * GROUPS, n, seed, rep)
        table = tce.by_group(s, y, g, p_adjust="holm", **options)
        p = table["p_value"].to_numpy()
        any_rejected["none"] += bool((p <= ALPHA).any())
        any_rejected["holm"] += bool(table["reject"].fillna(False).any())
        bh = tce.p_adjust(p, method="bh")
        any_rejected["bh"] += bool((bh <= ALPHA).any())
    for method, label in (("none", "unadjusted"), ("holm", "Holm"), ("bh", "BH")):
        out.append(("8 calibrated", f"family-wise error, {label}",
                    cell(any_rejected[method] / reps, reps)))
    # Scenario 2: six calibrated, two not.
    models = [CALIBRATED] * 6 + [MISCALIBRATED] * 2
    truth = np.array([0.0] * 6 + [MISCALIBRATED.tce(2.0)] * 2)
    holm_fwer = bh_fdp = power = 0.0
    covered = np.zeros(GROUPS)
    for rep in range(reps):
        s, y, g = draw(models, n, seed, rep)
        table = tce.by_group(s, y, g, p_adjust="holm", **options)
        holm = table["reject"].fillna(False).to_numpy(dtype=bool)
        holm_fwer += bool(holm[:6].any())
        bh = tce.p_adjust(table["p_value"].to_numpy(), method="bh") <= ALPHA
        bh_fdp += bh[:6].sum() / max(bh.sum(), 1)
        power += holm[6:].mean()
        lower, upper = table["lower"].to_numpy(), table["upper"].to_numpy()
        covered += (lower <= truth) & (truth <= upper)
    out.append(("6 calibrated + 2 not", "family-wise error over the 6, Holm",
                cell(holm_fwer / reps, reps)))
    out.append(("6 calibrated + 2 not", "false discovery rate, BH", cell(bh_fdp / reps, reps)))
    out.append(("6 calibrated + 2 not", "power on the 2, Holm", cell(power / reps, reps)))
    out.append(("6 calibrated + 2 not",
                f"interval holds TCE = {truth[-1]:.4f}, miscalibrated groups",
                cell(covered[6:].mean() / reps, reps * 2)))
    out.append(("6 calibrated + 2 not", "interval holds TCE = 0, calibrated groups",
                cell(covered[:6].mean() / reps, reps * 6)))
    return out


def binned_truth(scores, curve, bins, norm=2.0):
    """The binned calibration error of the drawn scores: per equal-width bin (left-closed,
    the last closed), the mean of T(c) against the mean score, weighted by the counts."""
    k = np.minimum((scores * bins).astype(int), bins - 1)
    error, mce = 0.0, 0.0
    for b in range(bins):
        inside = k == b
        if inside.any():
            gap = abs(curve[inside].mean() - scores[inside].mean())
            error += inside.mean() * gap ** norm
            mce = max(mce, gap)
    return error ** (1 / norm), mce


def bins_table(reps, n, seed, level=0.95, bins=15):
    out = []
    for name, model in (("calibrated", CALIBRATED), ("T(c) = c²", MISCALIBRATED)):
        tce_truth = model.tce(2.0)
        covered = {"ece_bin:equal_width": 0, "mce:equal_width": 0}
        lower_ok, rejected, widths = 0, 0, []
        for estimator in covered:
            options = _options(estimator=estimator, bins=bins, norm=2.0, max_bins=None,
                               paper_limit=False, resamples=0, level=level, test=True,
                               test_statistic="auto", test_resamples=None,
                               test_power_simulations=None, alpha=ALPHA, p_adjust="holm",
                               min_samples=1, seed=seed, logits=False)
            for rep in range(reps):
                s, y = model.sample(n, seed=seed, rep=rep)
                h = tce.Histogram(bins=bins)
                h.update(s, y)
                row = state_row(h, options)
                l2, mce = binned_truth(s, model.curve(s), bins)
                truth = mce if estimator.startswith("mce") else l2
                covered[estimator] += row["lower"] <= truth <= row["upper"]
                if estimator.startswith("ece_bin"):
                    lower_ok += row["lower"] <= tce_truth
                    rejected += row["p_value"] <= ALPHA
                    widths.append(row["upper"] - row["lower"])
        out.append((name, f"box holds the binned l2 error (level {level})",
                    cell(covered["ece_bin:equal_width"] / reps, reps)))
        out.append((name, "box holds the binned MCE",
                    cell(covered["mce:equal_width"] / reps, reps)))
        out.append((name, f"lower <= TCE = {tce_truth:.4f}", cell(lower_ok / reps, reps)))
        out.append((name, f"Hosmer-Lemeshow over the bins rejects at {ALPHA}",
                    cell(rejected / reps, reps)))
        out.append((name, "mean width of the l2 box", f"{np.mean(widths):.4f}"))
    return out


def show(title, rows):
    print(f"\n{title}\n")
    print("| scenario | rate | measured ± MC s.e. |")
    print("|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400, help="repetitions of by_group")
    parser.add_argument("--bin-reps", type=int, default=2000,
                        help="repetitions of the histogram rows")
    parser.add_argument("--n", type=int, default=300, help="rows per group")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fast", action="store_true",
                        help="fewer bootstrap and test resamples (200, 399)")
    parser.add_argument("--only", choices=("rows", "bins"))
    args = parser.parse_args()
    if args.only != "bins":
        show(f"tce.by_group, G = {GROUPS} groups of n = {args.n}, {args.reps} repetitions, "
             f"alpha = {ALPHA}{' (--fast)' if args.fast else ''}",
             rows_table(args.reps, args.n, args.seed, args.fast))
    if args.only != "rows":
        show(f"Histogram states (15 equal-width bins), n = {args.n}, {args.bin_reps} "
             "repetitions", bins_table(args.bin_reps, args.n, args.seed))


if __name__ == "__main__":
    main()
