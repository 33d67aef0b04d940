//! Weighted smooth ECE (`tce::smece::smooth_ece_weighted`) and weighted KDE calibration
//! error (`tce::kde::kde_calibration_error_weighted`): each against a naive weighted
//! implementation written here (relplot's algorithm transcribed with weights; the KDE's
//! direct double sums over grid points and mirrored rows), integer weights against the
//! repeated rows, weights all 1 against the unweighted estimators (bit for bit), a weight
//! of 0 against dropping the row (bit for bit), and the named errors.

use proptest::prelude::*;
use tce::kde::{self, KdeError};
use tce::smece::{self, SmoothEceError, SCRATCH_LEN};
use tce::{BadWeights, Norm, PushError};

/// relplot 1.0.3's `smECE` transcribed literally (numpy's linspace, the reflected
/// extension `[flip(v)[:-1], v, flip(v)[1:]]`, the full discrete convolution restricted to
/// 'valid' and sliced as relplot slices it, `interpolate`), with a weight per sample:
/// `smooth_round_to_grid` spreads w·r_i and w (relplot's y values) instead of r_i and 1.
/// O(E²) per σ.
mod literal {
    fn round(x: f64) -> f64 {
        // Python's round, half to even.
        let r = x.round();
        if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
            r - x.signum()
        } else {
            r
        }
    }

    fn linspace(points: usize) -> Vec<f64> {
        let step = 1.0 / (points - 1) as f64;
        let mut t: Vec<f64> = (0..points).map(|i| i as f64 * step).collect();
        t[points - 1] = 1.0;
        t
    }

    /// `GaussianKernel.apply` of the values `y` at scores `f`, evaluated at `x_eval`.
    fn apply(f: &[f64], y: &[f64], x_eval: &[f64], sigma: f64) -> Vec<f64> {
        let e = (round(20.0 / sigma).max(2000.0) as usize) / 2 + 1;
        let mut values = vec![0.0; e];
        for (&f, &y) in f.iter().zip(y) {
            let bin = ((f * (e - 1) as f64) as usize).min(e - 2);
            let frac = f * (e - 1) as f64 - bin as f64;
            values[bin] += (1.0 - frac) * y;
            values[bin + 1] += frac * y;
        }
        let kernel: Vec<f64> = linspace(e)
            .iter()
            .map(|t| {
                (-(t - 0.5) * (t - 0.5) / (2.0 * sigma * sigma)).exp()
                    / ((2.0 * std::f64::consts::PI).sqrt() * sigma)
            })
            .collect();
        let mut ext: Vec<f64> = values.iter().rev().take(e - 1).copied().collect();
        ext.extend(&values);
        ext.extend(values.iter().rev().skip(1));
        let full = |n: usize| -> f64 {
            ((n + 1).saturating_sub(e)..=n.min(ext.len() - 1))
                .map(|k| ext[k] * kernel[n - k])
                .sum()
        };
        let smoothed: Vec<f64> = (0..e).map(|m| full(e - 1 + e / 2 + m)).collect();
        let bucket = 1.0 / (e - 1) as f64;
        x_eval
            .iter()
            .map(|&t| {
                let i = ((t * (e - 1) as f64) as usize).min(e - 2);
                let r = (t - i as f64 * bucket) / bucket;
                smoothed[i] * (1.0 - r) + smoothed[i + 1] * r
            })
            .collect()
    }

    /// Weighted smECE_σ: R = smoothed Σ w·(f − y), D = smoothed Σ w, floor 1e-4 on D.
    pub fn smooth_ece_at(f: &[f64], labels: &[u8], weights: &[f64], sigma: f64) -> f64 {
        let mesh = linspace(round(10.0 / sigma).max(200.0) as usize);
        let residual: Vec<f64> = f
            .iter()
            .zip(labels)
            .zip(weights)
            .map(|((f, &y), w)| w * (f - y as f64))
            .collect();
        let r = apply(f, &residual, &mesh, sigma);
        let dens: Vec<f64> = apply(f, weights, &mesh, sigma)
            .iter()
            .map(|d| d + 1e-4)
            .collect();
        let num: f64 = r.iter().zip(&dens).map(|(r, d)| (r / d).abs() * d).sum();
        num / dens.iter().sum::<f64>()
    }

    /// `smECE`'s bandwidth search on the weighted smECE_σ.
    pub fn smooth_ece(f: &[f64], labels: &[u8], weights: &[f64]) -> (f64, f64) {
        let check = |a: f64| a < 0.001 || a < smooth_ece_at(f, labels, weights, a);
        let sigma = if check(1.0) {
            1.0
        } else {
            let (mut start, mut end) = (1.0, 0.0);
            for _ in 0..10 {
                let mid = (start + end) / 2.0;
                if check(mid) {
                    end = mid;
                } else {
                    start = mid;
                }
            }
            start
        };
        (smooth_ece_at(f, labels, weights, sigma), sigma)
    }
}

/// The weighted KDE estimator by its definition (docs/estimators.md, Weights), summed
/// directly: the mirrored rows keep their weights, each density at each grid point is
/// Σ w·K over every mirrored row divided by its mirrored weight, the bandwidth is the
/// weighted population sd of the hit scores times (2W)^(−1/5). Returns (raw, h).
fn naive_kde(scores: &[f64], labels: &[u8], weights: &[f64], p: f64) -> (f64, f64) {
    let total: f64 = weights.iter().sum();
    let hits: Vec<(f64, f64)> = (0..scores.len())
        .filter(|&i| labels[i] == 1)
        .map(|i| (scores[i], weights[i]))
        .collect();
    let all: Vec<(f64, f64)> = scores
        .iter()
        .copied()
        .zip(weights.iter().copied())
        .collect();
    let hit_weight: f64 = hits.iter().map(|h| h.1).sum();
    let mean = hits.iter().map(|(s, w)| w * s).sum::<f64>() / hit_weight;
    let variance = hits
        .iter()
        .map(|(s, w)| w * (s - mean).powi(2))
        .sum::<f64>()
        / hit_weight;
    let h = variance.sqrt() * (2.0 * total).powf(-0.2);
    let mirror = |data: &[(f64, f64)]| -> Vec<(f64, f64)> {
        let low = data.iter().filter(|d| d.0 < 0.5).map(|&(d, w)| (-d, w));
        let high = data
            .iter()
            .filter(|d| d.0 >= 0.5)
            .map(|&(d, w)| (2.0 - d, w));
        low.chain(data.iter().copied()).chain(high).collect()
    };
    let density = |data: &[(f64, f64)], x: f64| -> f64 {
        if x <= 0.0 || x >= 1.0 {
            return 0.0;
        }
        let mirrored = mirror(data);
        let s = 3.0 * h;
        let sum: f64 = mirrored
            .iter()
            .map(|&(m, w)| {
                let u = (x - m) / s;
                if u.abs() < 1.0 {
                    w * 35.0 / 32.0 * (1.0 - u * u).powi(3) / s
                } else {
                    0.0
                }
            })
            .sum();
        let mirrored_weight: f64 = mirrored.iter().map(|m| m.1).sum();
        2.0 * sum / mirrored_weight
    };
    let accuracy = hit_weight / total;
    let xs: Vec<f64> = (0..kde::GRID_POINTS)
        .map(kde::grid_point)
        .filter(|x| (0.0..=1.0).contains(x))
        .collect();
    let (mut integrand, mut dens) = (Vec::new(), Vec::new());
    for &x in &xs {
        let p_all = density(&all, x);
        let p_hit = density(&hits, x);
        dens.push(p_all);
        integrand.push(if p_all > 0.0 {
            let r = (accuracy * p_hit / p_all).min(1.0);
            (x - r).abs().powf(p) * p_all
        } else {
            0.0
        });
    }
    let trapz = |y: &[f64]| -> f64 {
        (1..xs.len())
            .map(|i| 0.5 * (xs[i] - xs[i - 1]) * (y[i] + y[i - 1]))
            .sum()
    };
    (trapz(&integrand) / trapz(&dens), h)
}

/// Each row repeated `weights[i]` times (integer weights).
fn repeated(scores: &[f64], labels: &[u8], weights: &[u32]) -> (Vec<f64>, Vec<u8>) {
    let mut out = (Vec::new(), Vec::new());
    for ((&f, &y), &w) in scores.iter().zip(labels).zip(weights) {
        for _ in 0..w {
            out.0.push(f);
            out.1.push(y);
        }
    }
    out
}

fn norm(p: f64) -> Norm {
    Norm::new(p).unwrap()
}

fn smooth(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
) -> Result<smece::SmoothEce, SmoothEceError> {
    smece::smooth_ece_weighted(scores, labels, weights, &mut vec![0.0; SCRATCH_LEN])
}

fn close(a: f64, b: f64, relative: f64) -> bool {
    (a - b).abs() <= relative * b.abs().max(1e-3)
}

/// A fixed data set: an overconfident model, some ties, scores at 0 and 1.
fn fixed() -> (Vec<f64>, Vec<u8>, Vec<f64>) {
    let mut scores: Vec<f64> = (0..300)
        .map(|i| ((i * 7919) % 301) as f64 / 300.0)
        .collect();
    scores.extend([0.0, 1.0, 1.0, 0.5, 0.5]);
    let labels: Vec<u8> = scores
        .iter()
        .enumerate()
        .map(|(i, &s)| u8::from(((i * 37) % 100) as f64 / 100.0 < s * s))
        .collect();
    let weights: Vec<f64> = (0..scores.len())
        .map(|i| [0.5, 1.0, 2.25, 0.0, 3.0, 0.125][i % 6])
        .collect();
    (scores, labels, weights)
}

#[test]
fn weighted_smooth_ece_equals_the_literal_algorithm_on_fixed_data() {
    let (scores, labels, weights) = fixed();
    for sigma in [0.003, 0.01, 0.05, 0.2] {
        let mut scratch = vec![0.0; smece::scratch_len(sigma).unwrap()];
        let ours =
            smece::smooth_ece_at_weighted(&scores, &labels, &weights, sigma, &mut scratch).unwrap();
        let literal = literal::smooth_ece_at(&scores, &labels, &weights, sigma);
        assert!(
            close(ours, literal, 1e-12),
            "σ = {sigma}: {ours} vs {literal}"
        );
    }
    let ours = smooth(&scores, &labels, &weights).unwrap();
    let (value, sigma) = literal::smooth_ece(&scores, &labels, &weights);
    assert_eq!(ours.bandwidth, sigma);
    assert!(close(ours.value, value, 1e-12), "{} vs {value}", ours.value);
    // The weights matter: the unweighted value differs.
    let unweighted = smece::smooth_ece(&scores, &labels, &mut vec![0.0; SCRATCH_LEN]).unwrap();
    assert!((unweighted.value - ours.value).abs() > 1e-3);
}

#[test]
fn weighted_kde_equals_direct_sums_on_fixed_data() {
    let (scores, labels, weights) = fixed();
    for p in [1.0, 2.0, 3.0] {
        let ours =
            kde::kde_calibration_error_weighted(&scores, &labels, &weights, norm(p)).unwrap();
        let (raw, h) = naive_kde(&scores, &labels, &weights, p);
        assert!(close(ours.bandwidth, h, 1e-14), "{} vs {h}", ours.bandwidth);
        assert!(
            close(ours.raw, raw, 1e-12),
            "p = {p}: {} vs {raw}",
            ours.raw
        );
        let unweighted = kde::kde_calibration_error(&scores, &labels, norm(p)).unwrap();
        assert!((unweighted.raw - ours.raw).abs() > 1e-4 * ours.raw);
    }
    assert_eq!(
        kde::bandwidth_weighted(&scores, &labels, &weights).unwrap(),
        kde::kde_calibration_error_weighted(&scores, &labels, &weights, norm(2.0))
            .unwrap()
            .bandwidth
    );
}

#[test]
fn bad_weights_are_named() {
    let (s, y) = ([0.2, 0.7, 0.9], [0u8, 1, 1]);
    let cases: [(&[f64], BadWeights); 6] = [
        (
            &[1.0, 1.0],
            BadWeights::LengthMismatch {
                rows: 3,
                weights: 2,
            },
        ),
        (&[1.0, -1.0, 1.0], BadWeights::InvalidWeight { index: 1 }),
        (
            &[1.0, 1.0, f64::NAN],
            BadWeights::InvalidWeight { index: 2 },
        ),
        (
            &[f64::INFINITY, 1.0, 1.0],
            BadWeights::InvalidWeight { index: 0 },
        ),
        (&[0.0, 0.0, 0.0], BadWeights::ZeroTotalWeight),
        (&[f64::MAX, f64::MAX, 0.0], BadWeights::ZeroTotalWeight),
    ];
    for (weights, error) in cases {
        assert_eq!(smooth(&s, &y, weights), Err(SmoothEceError::Weights(error)));
        let mut scratch = vec![0.0; smece::scratch_len(0.1).unwrap()];
        assert_eq!(
            smece::smooth_ece_at_weighted(&s, &y, weights, 0.1, &mut scratch),
            Err(SmoothEceError::Weights(error))
        );
        assert_eq!(
            kde::kde_calibration_error_weighted(&s, &y, weights, norm(2.0)),
            Err(KdeError::Weights(error))
        );
    }
    // Scores and labels are checked first, then the weights.
    assert_eq!(
        smooth(&[0.2, 1.5], &[0, 1], &[-1.0, 1.0]),
        Err(SmoothEceError::Input(PushError::ScoreOutOfRange {
            index: 1
        }))
    );
    assert_eq!(
        kde::kde_calibration_error_weighted(&[0.2, 0.5], &[0, 2], &[-1.0], norm(1.0)),
        Err(KdeError::Input(PushError::InvalidLabel { index: 1 }))
    );
    assert_eq!(smooth(&[], &[], &[]), Err(SmoothEceError::Empty));
    assert_eq!(
        kde::kde_calibration_error_weighted(&[], &[], &[], norm(1.0)),
        Err(KdeError::Empty)
    );
    // KDE: hits of weight 0 are no hits; one hit of positive weight has zero spread.
    assert_eq!(
        kde::kde_calibration_error_weighted(&s, &y, &[1.0, 0.0, 0.0], norm(2.0)),
        Err(KdeError::NoHits)
    );
    assert_eq!(
        kde::kde_calibration_error_weighted(&s, &y, &[1.0, 0.0, 5.0], norm(2.0)),
        Err(KdeError::ZeroBandwidth)
    );
    // The messages name the cause.
    assert_eq!(
        SmoothEceError::Weights(BadWeights::InvalidWeight { index: 4 }).to_string(),
        "weight 4 is negative, NaN or infinite"
    );
    assert_eq!(
        KdeError::Weights(BadWeights::LengthMismatch {
            rows: 3,
            weights: 2
        })
        .to_string(),
        "3 rows but 2 weights"
    );
}

/// Rows with weights: scores (some at 0, 1 and ½), labels, and weights of the given kind.
fn weighted_rows<W: Strategy>(
    weight: W,
    max: usize,
) -> impl Strategy<Value = (Vec<f64>, Vec<u8>, Vec<W::Value>)> {
    proptest::collection::vec(
        (
            prop_oneof![4 => 0.0..=1.0f64, 1 => Just(0.0), 1 => Just(1.0), 1 => Just(0.5)],
            0u8..=1,
            weight,
        ),
        1..max,
    )
    .prop_map(|rows| {
        let mut out = (Vec::new(), Vec::new(), Vec::new());
        for (f, y, w) in rows {
            out.0.push(f);
            out.1.push(y);
            out.2.push(w);
        }
        out
    })
}

fn real_weights() -> impl Strategy<Value = f64> {
    prop_oneof![2 => 0.0..4.0f64, 1 => Just(0.0), 1 => Just(1.0), 1 => 1e-3..1e-2f64]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn weighted_smooth_ece_at_a_bandwidth_equals_the_literal_algorithm(
        (scores, labels, weights) in weighted_rows(real_weights(), 50),
        sigma in prop_oneof![0.005..0.02f64, 0.02..1.2f64],
    ) {
        let mut scratch = vec![0.0; smece::scratch_len(sigma).unwrap()];
        match smece::smooth_ece_at_weighted(&scores, &labels, &weights, sigma, &mut scratch) {
            Ok(ours) => {
                let literal = literal::smooth_ece_at(&scores, &labels, &weights, sigma);
                prop_assert!(close(ours, literal, 1e-12), "{ours} vs {literal}");
            }
            Err(e) => {
                prop_assert_eq!(e, SmoothEceError::Weights(BadWeights::ZeroTotalWeight));
                prop_assert!(weights.iter().all(|&w| w == 0.0));
            }
        }
    }

    #[test]
    fn weighted_kde_equals_direct_sums(
        (scores, labels, weights) in weighted_rows(real_weights(), 30),
        p in prop::sample::select(vec![1.0, 2.0, 3.0]),
    ) {
        match kde::kde_calibration_error_weighted(&scores, &labels, &weights, norm(p)) {
            Ok(ours) => {
                let (raw, h) = naive_kde(&scores, &labels, &weights, p);
                prop_assert!(close(ours.bandwidth, h, 1e-13), "{} vs {h}", ours.bandwidth);
                prop_assert!(
                    (ours.raw - raw).abs() <= 1e-12 * raw.max(1e-300),
                    "{} vs {raw}", ours.raw
                );
            }
            Err(KdeError::Weights(BadWeights::ZeroTotalWeight)) => {
                prop_assert!(weights.iter().all(|&w| w == 0.0));
            }
            Err(KdeError::NoHits) => {
                prop_assert!((0..scores.len()).all(|i| labels[i] == 0 || weights[i] == 0.0));
            }
            Err(KdeError::ZeroBandwidth) => {
                let hits: Vec<f64> = (0..scores.len())
                    .filter(|&i| labels[i] == 1 && weights[i] > 0.0)
                    .map(|i| scores[i])
                    .collect();
                prop_assert!(hits.iter().all(|&s| s == hits[0]));
            }
            Err(KdeError::DensityMissesGrid { .. }) => {
                prop_assert!(naive_kde(&scores, &labels, &weights, p).0.is_nan());
            }
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }

    /// Weights all 1 are the unweighted estimators, bit for bit.
    #[test]
    fn unit_weights_are_the_unweighted_estimators(
        (scores, labels, weights) in weighted_rows(Just(1.0f64), 200),
    ) {
        let mut scratch = vec![0.0; SCRATCH_LEN];
        prop_assert_eq!(
            smooth(&scores, &labels, &weights),
            smece::smooth_ece(&scores, &labels, &mut scratch)
        );
        prop_assert_eq!(
            kde::kde_calibration_error_weighted(&scores, &labels, &weights, norm(2.0)),
            kde::kde_calibration_error(&scores, &labels, norm(2.0))
        );
    }

    /// A row of weight 0 is dropped, bit for bit.
    #[test]
    fn zero_weights_drop_their_rows(
        (scores, labels, weights) in weighted_rows(real_weights(), 200),
    ) {
        let kept: Vec<usize> = (0..scores.len()).filter(|&i| weights[i] > 0.0).collect();
        prop_assume!(!kept.is_empty());
        let pick = |i: &usize| (scores[*i], labels[*i], weights[*i]);
        let (s, y, w): (Vec<f64>, Vec<u8>, Vec<f64>) = kept.iter().map(pick).fold(
            (Vec::new(), Vec::new(), Vec::new()),
            |mut acc, (f, l, v)| {
                acc.0.push(f);
                acc.1.push(l);
                acc.2.push(v);
                acc
            },
        );
        prop_assert_eq!(smooth(&scores, &labels, &weights), smooth(&s, &y, &w));
        prop_assert_eq!(
            kde::kde_calibration_error_weighted(&scores, &labels, &weights, norm(1.5)),
            kde::kde_calibration_error_weighted(&s, &y, &w, norm(1.5))
        );
    }

    /// Integer weights are the rows repeated: the same σ*, values to 1e-12.
    #[test]
    fn integer_weights_are_repeated_rows(
        (scores, labels, counts) in weighted_rows(0u32..6, 120),
    ) {
        let (s, y) = repeated(&scores, &labels, &counts);
        prop_assume!(!s.is_empty());
        let weights: Vec<f64> = counts.iter().map(|&c| f64::from(c)).collect();
        let ours = smooth(&scores, &labels, &weights).unwrap();
        let expanded = smece::smooth_ece(&s, &y, &mut vec![0.0; SCRATCH_LEN]).unwrap();
        prop_assert_eq!(ours.bandwidth, expanded.bandwidth);
        prop_assert!(close(ours.value, expanded.value, 1e-12), "{} vs {}", ours.value, expanded.value);
        match (
            kde::kde_calibration_error_weighted(&scores, &labels, &weights, norm(2.0)),
            kde::kde_calibration_error(&s, &y, norm(2.0)),
        ) {
            (Ok(ours), Ok(expanded)) => {
                prop_assert!(close(ours.bandwidth, expanded.bandwidth, 1e-13));
                prop_assert!(
                    (ours.raw - expanded.raw).abs() <= 1e-12 * expanded.raw.max(1e-300),
                    "{} vs {}", ours.raw, expanded.raw
                );
            }
            (ours, expanded) => prop_assert_eq!(ours, expanded),
        }
    }
}

proptest! {
    // The literal search costs 12 O(E²) convolutions a case, E up to 5121.
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn the_weighted_search_equals_the_literal_search(
        (scores, labels, weights) in weighted_rows(real_weights(), 40),
    ) {
        prop_assume!(weights.iter().any(|&w| w > 0.0));
        let ours = smooth(&scores, &labels, &weights).unwrap();
        let (value, sigma) = literal::smooth_ece(&scores, &labels, &weights);
        prop_assert_eq!(ours.bandwidth, sigma);
        prop_assert!(close(ours.value, value, 1e-12), "{} vs {value}", ours.value);
    }
}
