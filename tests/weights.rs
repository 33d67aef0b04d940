//! Sample weights (`tce::weights`): each estimator against a naive weighted implementation
//! written here (slow, obviously right), integer weights against repeated rows, weights
//! all 1 against the unweighted estimators, and the named errors.

use proptest::prelude::*;
use tce::weights::{self, WeightError};
use tce::{BadWeights, Binning, Closure, EstimateError, Norm, PushError, Slot, SortedBuffer, Ties};

/// Naive bins: (W_k, Σw·y, Σw·f) per bin, by the definitions of `tce::weights`, with a
/// linear scan over the bins for every row.
fn naive_bins(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    bins: usize,
) -> Vec<(f64, f64, f64)> {
    let mut out = vec![(0.0, 0.0, 0.0); bins];
    let mut add = |k: usize, i: usize, w: f64| {
        out[k].0 += w;
        out[k].1 += w * f64::from(labels[i]);
        out[k].2 += w * scores[i];
    };
    let rows: Vec<usize> = (0..scores.len()).filter(|&i| weights[i] > 0.0).collect();
    match binning {
        Binning::EqualWidth(closure) => {
            for &i in &rows {
                // [k/B, (k+1)/B) or (k/B, (k+1)/B], by the closure's rule.
                let k = (0..bins)
                    .find(|&k| closure.bin_index(scores[i], bins) == k)
                    .unwrap();
                add(k, i, weights[i]);
            }
        }
        Binning::EqualMass(ties) => {
            let mut sorted = rows.clone();
            sorted.sort_by(|&i, &j| scores[i].partial_cmp(&scores[j]).unwrap());
            let total: f64 = sorted.iter().map(|&i| weights[i]).sum();
            let b = bins as f64;
            let mut before = 0.0;
            let mut group_start = 0.0;
            for (j, &i) in sorted.iter().enumerate() {
                let w = weights[i];
                match ties {
                    Ties::Keep => {
                        if j == 0 || scores[sorted[j - 1]] != scores[i] {
                            group_start = before;
                        }
                        // The last bin whose lower edge k·W/B is at most the group's start.
                        let k = (0..bins)
                            .rev()
                            .find(|&k| k as f64 * total <= group_start * b)
                            .unwrap();
                        add(k, i, w);
                    }
                    Ties::Split => {
                        // Unit by unit, each to the last bin whose edge is at most its start.
                        let mut m = 0.0;
                        while m < w {
                            let start = before + m;
                            let k = (0..bins)
                                .rev()
                                .find(|&k| k as f64 * total <= start * b)
                                .unwrap();
                            add(k, i, (w - m).min(1.0));
                            m += 1.0;
                        }
                    }
                }
                before += w;
            }
        }
    }
    out
}

fn naive_ece(bins: &[(f64, f64, f64)], p: f64) -> f64 {
    let total: f64 = bins.iter().map(|b| b.0).sum();
    let sum: f64 = bins
        .iter()
        .filter(|b| b.0 > 0.0)
        .map(|&(w, h, s)| w / total * (s / w - h / w).abs().powf(p))
        .sum();
    sum.powf(1.0 / p)
}

fn naive_mce(bins: &[(f64, f64, f64)]) -> f64 {
    bins.iter()
        .filter(|b| b.0 > 0.0)
        .map(|&(w, h, s)| (s / w - h / w).abs())
        .fold(0.0, f64::max)
}

/// ECE_debias by the jackknife over units of weight with f̄ fixed: a bin of W units, H of
/// them hits, leaves out one hit (H/W of the time) or one miss.
fn naive_debias(bins: &[(f64, f64, f64)], p: f64) -> f64 {
    let total: f64 = bins.iter().map(|b| b.0).sum();
    let mut sum = 0.0;
    for &(n, h, s) in bins {
        if n < 2.0 {
            continue;
        }
        let (f, y) = (s / n, h / n);
        let term = if p == 2.0 {
            (f - y).powi(2) - y * (1.0 - y) / (n - 1.0)
        } else {
            let plug = (f - y).abs().powf(p);
            let hit_out = (f - (h - 1.0) / (n - 1.0)).abs().powf(p);
            let miss_out = (f - h / (n - 1.0)).abs().powf(p);
            n * plug - (n - 1.0) * (y * hit_out + (1.0 - y) * miss_out)
        };
        sum += n / total * term;
    }
    sum.max(0.0).powf(1.0 / p)
}

fn close(a: f64, b: f64, what: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        (a - b).abs() <= 1e-12 * b.abs().max(1.0),
        "{}: {} vs {}",
        what,
        a,
        b
    );
    Ok(())
}

fn binning() -> impl Strategy<Value = Binning> {
    prop_oneof![
        Just(Binning::EqualWidth(Closure::Left)),
        Just(Binning::EqualWidth(Closure::Right)),
        Just(Binning::EqualMass(Ties::Split)),
        Just(Binning::EqualMass(Ties::Keep)),
    ]
}

/// Scores from a few values (heavy ties, edges 0 and 1 included) or anywhere in [0, 1].
fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![0.0, 0.2, 0.5, 0.6, 0.9, 1.0]),
        0.0..=1.0f64
    ]
}

/// The estimators of unweighted rows, through the sorted buffer.
fn unweighted(
    scores: &[f64],
    labels: &[u8],
    binning: Binning,
    bins: usize,
    p: f64,
) -> (f64, f64, f64) {
    let mut storage = vec![Slot::EMPTY; scores.len()];
    let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
    buffer.push_batch(scores, labels).unwrap();
    let sorted = buffer.sorted();
    let norm = Norm::new(p).unwrap();
    (
        sorted.ece_bin(binning, bins, norm).unwrap().value,
        sorted.mce(binning, bins).unwrap().value,
        sorted.ece_debias(binning, bins, norm).unwrap().value,
    )
}

fn weighted(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    bins: usize,
    p: f64,
) -> (f64, f64, f64) {
    let norm = Norm::new(p).unwrap();
    (
        weights::ece_bin(scores, labels, weights, binning, bins, norm)
            .unwrap()
            .value,
        weights::mce(scores, labels, weights, binning, bins)
            .unwrap()
            .value,
        weights::ece_debias(scores, labels, weights, binning, bins, norm)
            .unwrap()
            .value,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Every estimator equals the naive weighted one, to 1e-12 (the sums differ in order
    /// and in the library's scaling for large p).
    #[test]
    fn estimators_equal_the_naive_weighted_ones(
        rows in prop::collection::vec((score(), 0u8..=1, prop_oneof![Just(0.0), 0.0..5.0f64]), 1..60),
        binning in binning(),
        bins in 1usize..20,
        p in prop_oneof![Just(1.0), Just(2.0), 1.0..4.0f64],
    ) {
        let scores: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let labels: Vec<u8> = rows.iter().map(|r| r.1).collect();
        let weights: Vec<f64> = rows.iter().map(|r| r.2).collect();
        prop_assume!(weights.iter().sum::<f64>() > 0.0);
        let naive = naive_bins(&scores, &labels, &weights, binning, bins);
        let (ece, mce, debias) = weighted(&scores, &labels, &weights, binning, bins, p);
        close(ece, naive_ece(&naive, p), "ece_bin")?;
        close(mce, naive_mce(&naive), "mce")?;
        // The debiased sum is a difference of terms near each other: compare unrooted.
        let d = naive_debias(&naive, p);
        prop_assert!((debias.powf(p) - d.powf(p)).abs() <= 1e-11, "debias {} vs {}", debias, d);
    }

    /// Integer weights equal the rows repeated that many times (the unweighted estimators
    /// on the expansion), to 1e-12: bins hold the same samples, the sums differ in
    /// rounding only (the unweighted path sums scores in fixed point).
    #[test]
    fn integer_weights_equal_repeated_rows(
        rows in prop::collection::vec((score(), 0u8..=1, 0u32..5), 1..40),
        binning in binning(),
        bins in 1usize..12,
        p in prop_oneof![Just(1.0), Just(2.0), 1.0..4.0f64],
    ) {
        let total: u32 = rows.iter().map(|r| r.2).sum();
        prop_assume!(total > 0);
        let scores: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let labels: Vec<u8> = rows.iter().map(|r| r.1).collect();
        let weights: Vec<f64> = rows.iter().map(|r| f64::from(r.2)).collect();
        let (mut rs, mut rl) = (Vec::new(), Vec::new());
        for r in &rows {
            for _ in 0..r.2 {
                rs.push(r.0);
                rl.push(r.1);
            }
        }
        let w = weighted(&scores, &labels, &weights, binning, bins, p);
        let u = unweighted(&rs, &rl, binning, bins, p);
        close(w.0, u.0, "ece_bin")?;
        close(w.1, u.1, "mce")?;
        prop_assert!((w.2.powf(p) - u.2.powf(p)).abs() <= 1e-11, "debias {} vs {}", w.2, u.2);
    }

    /// Weights all 1 are the unweighted estimators (to 1e-12, for the same reason), and
    /// a row of weight 0 is the row dropped (exactly: the same bins are built).
    #[test]
    fn unit_weights_are_unweighted_and_zero_weights_are_dropped(
        rows in prop::collection::vec((score(), 0u8..=1, any::<bool>()), 1..50),
        binning in binning(),
        bins in 1usize..20,
        p in prop_oneof![Just(1.0), Just(2.0), 1.0..4.0f64],
    ) {
        let scores: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let labels: Vec<u8> = rows.iter().map(|r| r.1).collect();
        let ones = vec![1.0; rows.len()];
        let w = weighted(&scores, &labels, &ones, binning, bins, p);
        let u = unweighted(&scores, &labels, binning, bins, p);
        close(w.0, u.0, "ece_bin")?;
        close(w.1, u.1, "mce")?;
        prop_assert!((w.2.powf(p) - u.2.powf(p)).abs() <= 1e-11, "debias {} vs {}", w.2, u.2);

        let kept: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].2).collect();
        prop_assume!(!kept.is_empty());
        let zeroed: Vec<f64> = rows.iter().map(|r| if r.2 { 1.5 } else { 0.0 }).collect();
        let ks: Vec<f64> = kept.iter().map(|&i| scores[i]).collect();
        let kl: Vec<u8> = kept.iter().map(|&i| labels[i]).collect();
        let kw = vec![1.5; kept.len()];
        prop_assert_eq!(
            weighted(&scores, &labels, &zeroed, binning, bins, p),
            weighted(&ks, &kl, &kw, binning, bins, p)
        );
    }

    /// Scaling every weight by a power of 2 changes nothing but ECE_debias (frequency
    /// weights: its correction depends on the scale) and equal-mass bins with ties split
    /// (units of weight, see `tce::weights`).
    #[test]
    fn binned_estimates_do_not_depend_on_the_weights_scale(
        rows in prop::collection::vec((score(), 0u8..=1, 0.01..5.0f64), 1..50),
        binning in prop_oneof![
            Just(Binning::EqualWidth(Closure::Left)),
            Just(Binning::EqualWidth(Closure::Right)),
            Just(Binning::EqualMass(Ties::Keep)),
        ],
        bins in 1usize..20,
    ) {
        let scores: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let labels: Vec<u8> = rows.iter().map(|r| r.1).collect();
        let weights: Vec<f64> = rows.iter().map(|r| r.2).collect();
        let scaled: Vec<f64> = weights.iter().map(|w| w * 8.0).collect();
        let a = weighted(&scores, &labels, &weights, binning, bins, 2.0);
        let b = weighted(&scores, &labels, &scaled, binning, bins, 2.0);
        prop_assert_eq!((a.0, a.1), (b.0, b.1));
    }
}

#[test]
fn a_hand_computed_example() {
    // Two equal-width bins. Bin 0: f 0.2 (w 1, miss), 0.4 (w 3, hit): f̄ = 1.4/4 = 0.35,
    // ȳ = 0.75, gap 0.4, W 4. Bin 1: 0.8 (w 2, hit), 0.9 (w 0 — dropped): gap 0.2, W 2.
    let scores = [0.2, 0.4, 0.8, 0.9];
    let labels = [0, 1, 1, 0];
    let weights = [1.0, 3.0, 2.0, 0.0];
    let ew = Binning::EqualWidth(Closure::Left);
    let e = weights::ece_bin(&scores, &labels, &weights, ew, 2, Norm::L1).unwrap();
    assert!((e.value - (4.0 * 0.4 + 2.0 * 0.2) / 6.0).abs() < 1e-15);
    assert_eq!((e.samples, e.bins), (3, 2));
    let m = weights::mce(&scores, &labels, &weights, ew, 2).unwrap();
    assert!((m.value - 0.4).abs() < 1e-15);
    // Debias, p = 2: bin 0: 0.16 − 0.75·0.25/3 = 0.0975; bin 1: 0.04 − 0 = 0.04.
    let d = weights::ece_debias(&scores, &labels, &weights, ew, 2, Norm::L2).unwrap();
    let s: f64 = (4.0 * 0.0975 + 2.0 * 0.04) / 6.0;
    assert!((d.value - s.sqrt()).abs() < 1e-15, "{}", d.value);
    // Equal weight, 2 bins of W/2 = 3: the row at 0.4 (weight 3 on [1, 4)) straddles the
    // edge 3: its units starting at 1 and 2 go to bin 0, the one at 3 to bin 1 with ties
    // split; kept whole in bin 0 with ties kept (its start 1 lies in bin 0).
    let split = weights::bins(&scores, &labels, &weights, Binning::EQUAL_MASS, 2).unwrap();
    assert_eq!((split.0[0].weight, split.0[1].weight), (3.0, 3.0));
    assert_eq!((split.0[0].rows, split.0[1].rows, split.1), (2, 2, 3));
    let keep = Binning::EqualMass(Ties::Keep);
    let kept = weights::bins(&scores, &labels, &weights, keep, 2).unwrap();
    assert_eq!((kept.0[0].weight, kept.0[1].weight), (4.0, 2.0));
}

#[test]
fn bad_weights_are_named_errors() {
    let (s, l) = ([0.3, 0.7], [0u8, 1]);
    let run = |w: &[f64]| weights::ece_bin(&s, &l, w, Binning::EQUAL_MASS, 2, Norm::L2);
    assert_eq!(
        run(&[1.0, -0.5]),
        Err(WeightError::Weights(BadWeights::InvalidWeight { index: 1 }))
    );
    assert_eq!(
        run(&[f64::NAN, 1.0]),
        Err(WeightError::Weights(BadWeights::InvalidWeight { index: 0 }))
    );
    assert_eq!(
        run(&[1.0, f64::INFINITY]),
        Err(WeightError::Weights(BadWeights::InvalidWeight { index: 1 }))
    );
    assert_eq!(
        run(&[0.0, 0.0]),
        Err(WeightError::Weights(BadWeights::ZeroTotalWeight))
    );
    assert_eq!(
        run(&[f64::MAX, f64::MAX]),
        Err(WeightError::Weights(BadWeights::ZeroTotalWeight))
    );
    assert_eq!(
        run(&[1.0]),
        Err(WeightError::Weights(BadWeights::LengthMismatch {
            rows: 2,
            weights: 1
        }))
    );
    // The samples are checked first, then the weights.
    assert_eq!(
        weights::mce(&[0.3, 1.5], &l, &[-1.0, 1.0], Binning::EQUAL_MASS, 2),
        Err(WeightError::Push(PushError::ScoreOutOfRange { index: 1 }))
    );
    assert_eq!(
        weights::mce(&[], &[], &[], Binning::EQUAL_MASS, 2),
        Err(WeightError::Estimate(EstimateError::NoSamples))
    );
    assert_eq!(
        weights::mce(&s, &l, &[1.0, 1.0], Binning::EQUAL_MASS, 0),
        Err(WeightError::Estimate(EstimateError::ZeroBins))
    );
}

/// The naive weighted sweep: b = 2, 3, … with the naive bins until the weighted
/// accuracies of the bins with weight decrease; when none does up to the limit, the
/// smallest b whose bins with weight are the limit's.
fn naive_sweep(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    limit: usize,
) -> usize {
    let filled = |b: usize| -> Vec<(f64, f64, f64)> {
        naive_bins(scores, labels, weights, binning, b)
            .into_iter()
            .filter(|bin| bin.0 > 0.0)
            .collect()
    };
    for b in 2..=limit {
        let acc: Vec<f64> = filled(b).iter().map(|bin| bin.1 / bin.0).collect();
        if acc.windows(2).any(|p| p[1] < p[0] - 1e-12) {
            return b - 1;
        }
    }
    let last: Vec<(f64, f64)> = filled(limit).iter().map(|bin| (bin.0, bin.1)).collect();
    (1..limit)
        .find(|&b| {
            let these: Vec<(f64, f64)> = filled(b).iter().map(|bin| (bin.0, bin.1)).collect();
            these.len() == last.len()
                && these
                    .iter()
                    .zip(&last)
                    .all(|(x, y)| (x.0 - y.0).abs() < 1e-9 && (x.1 - y.1).abs() < 1e-9)
        })
        .unwrap_or(limit)
}

fn sweep(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    binning: Binning,
    p: f64,
) -> tce::Estimate {
    weights::ece_sweep(
        scores,
        labels,
        weights,
        binning,
        Norm::new(p).unwrap(),
        tce::SweepOptions::default(),
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The weighted sweep's b* and value against the naive sweep (integer weights, so
    /// that the naive comparisons are exact).
    #[test]
    fn the_sweep_equals_the_naive_weighted_sweep(
        rows in prop::collection::vec((score(), 0u8..=1, 0u32..4), 1..25),
        binning in binning(),
        p in prop_oneof![Just(1.0), Just(2.0)],
    ) {
        let weights: Vec<f64> = rows.iter().map(|r| f64::from(r.2)).collect();
        let units: f64 = weights.iter().sum();
        prop_assume!(units > 0.0);
        let scores: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let labels: Vec<u8> = rows.iter().map(|r| r.1).collect();
        let e = sweep(&scores, &labels, &weights, binning, p);
        let b = naive_sweep(&scores, &labels, &weights, binning, units as usize);
        prop_assert_eq!(e.bins, b);
        let naive = naive_bins(&scores, &labels, &weights, binning, b);
        close(e.value, naive_ece(&naive, p), "sweep value")?;
    }

    /// Integer weights: the sweep of the repeated rows, b* exactly, the value to 1e-12;
    /// weights all 1: the unweighted sweep.
    #[test]
    fn the_sweep_of_integer_weights_is_that_of_repeated_rows(
        rows in prop::collection::vec((score(), 0u8..=1, 0u32..4), 1..40),
        binning in binning(),
        p in prop_oneof![Just(1.0), Just(2.0), 1.0..4.0f64],
    ) {
        let weights: Vec<f64> = rows.iter().map(|r| f64::from(r.2)).collect();
        prop_assume!(weights.iter().sum::<f64>() > 0.0);
        let scores: Vec<f64> = rows.iter().map(|r| r.0).collect();
        let labels: Vec<u8> = rows.iter().map(|r| r.1).collect();
        let (mut rs, mut rl) = (Vec::new(), Vec::new());
        for r in &rows {
            for _ in 0..r.2 {
                rs.push(r.0);
                rl.push(r.1);
            }
        }
        let unweighted = |s: &[f64], l: &[u8]| {
            let mut storage = vec![Slot::EMPTY; s.len()];
            let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
            buffer.push_batch(s, l).unwrap();
            buffer
                .sorted()
                .ece_sweep(binning, Norm::new(p).unwrap(), tce::SweepOptions::default())
                .unwrap()
        };
        let w = sweep(&scores, &labels, &weights, binning, p);
        let r = unweighted(&rs, &rl);
        prop_assert_eq!(w.bins, r.bins);
        close(w.value, r.value, "sweep of repeated rows")?;
        let ones = vec![1.0; rows.len()];
        let w = sweep(&scores, &labels, &ones, binning, p);
        let u = unweighted(&scores, &labels);
        prop_assert_eq!(w.bins, u.bins);
        close(w.value, u.value, "sweep of unit weights")?;
    }
}

#[test]
fn the_sweep_refuses_a_limit_past_max_bins_and_takes_a_cap() {
    let (s, l, w) = ([0.3, 0.7], [0u8, 1], [1e9, 1e9]);
    let run = |max_bins, binning| {
        weights::ece_sweep(
            &s,
            &l,
            &w,
            binning,
            Norm::L2,
            tce::SweepOptions {
                max_bins,
                ..Default::default()
            },
        )
    };
    assert!(matches!(
        run(None, Binning::EQUAL_MASS),
        Err(WeightError::Estimate(EstimateError::TooManyBins { .. }))
    ));
    // Separable: every b is monotone. With ties kept, b* is the smallest b with the
    // cap's bins: 2 (one row each); with ties split, the cap's 10 bins are 10 runs of
    // units (as 10^9 copies of each row would be), and b* is the cap.
    let keep = Binning::EqualMass(Ties::Keep);
    assert_eq!(run(Some(10), keep).unwrap().bins, 2);
    assert_eq!(run(Some(10), Binning::EQUAL_MASS).unwrap().bins, 10);
}
