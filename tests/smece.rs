//! Smooth ECE: against relplot 1.0.3 on the bundled data and SPEC §9's example, and
//! against naive implementations written for the test.
//!
//! The reference values in tests/fixtures/smece_relplot.csv were made by
//! scripts/smece_reference.py (its header names the relplot, numpy and Python versions and
//! the command). relplot sums in numpy's order, tce in its own, so the values agree to
//! rounding, not bit for bit (the largest difference seen is 3e-16): the bound below is
//! 1e-12, far inside the 1e-6 asked for.

use tce::smece::{smooth_ece, smooth_ece_at, SCRATCH_LEN};

const TOLERANCE: f64 = 1e-12;

const SPEC_SCORES: [f64; 20] = [
    0.955, 0.943, 0.892, 0.998, 0.78, 0.995, 0.227, 1.0, 0.916, 0.908, 0.997, 0.936, 0.965, 0.986,
    0.906, 0.734, 0.864, 0.976, 0.738, 0.851,
];
const SPEC_LABELS: [u8; 20] = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0];

/// The `confidence` and `correct` columns of a bundled file.
fn read(path: &str) -> (Vec<f64>, Vec<u8>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (c, y) = (column("confidence"), column("correct"));
    let (mut scores, mut labels) = (Vec::new(), Vec::new());
    for record in reader.records() {
        let record = record.unwrap();
        scores.push(record[c].parse::<f64>().unwrap());
        labels.push(record[y].parse::<u8>().unwrap());
    }
    (scores, labels)
}

#[test]
fn smooth_ece_agrees_with_relplot() {
    let root = env!("CARGO_MANIFEST_DIR");
    let fixture =
        std::fs::read_to_string(format!("{root}/tests/fixtures/smece_relplot.csv")).unwrap();
    let mut lines = fixture.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let fixed: Vec<f64> = header[4..]
        .iter()
        .map(|h| h.trim_start_matches("smece_at_").parse().unwrap())
        .collect();
    let mut scratch = vec![0.0; SCRATCH_LEN.max(4 * 10_001)];
    let mut checked = 0;
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let (scores, labels) = if fields[0] == "spec_worked_example" {
            (SPEC_SCORES.to_vec(), SPEC_LABELS.to_vec())
        } else {
            read(&format!("{root}/{}", fields[0]))
        };
        assert_eq!(scores.len(), fields[1].parse::<usize>().unwrap());
        let number = |i: usize| fields[i].parse::<f64>().unwrap();
        let ours = smooth_ece(&scores, &labels, &mut scratch[..SCRATCH_LEN]).unwrap();
        assert_eq!(ours.bandwidth, number(3), "{}: sigma*", fields[0]);
        eprintln!(
            "{}: smECE {} (relplot {}, difference {:.1e}), sigma* {}",
            fields[0],
            ours.value,
            number(2),
            ours.value - number(2),
            ours.bandwidth
        );
        assert!(
            (ours.value - number(2)).abs() <= TOLERANCE,
            "{}: {} vs relplot {}",
            fields[0],
            ours.value,
            number(2)
        );
        for (k, &sigma) in fixed.iter().enumerate() {
            let value = smooth_ece_at(&scores, &labels, sigma, &mut scratch).unwrap();
            eprintln!(
                "    at sigma {sigma}: difference {:.1e}",
                value - number(4 + k)
            );
            assert!(
                (value - number(4 + k)).abs() <= TOLERANCE,
                "{} at sigma {sigma}: {value} vs relplot {}",
                fields[0],
                number(4 + k)
            );
        }
        if fields[0] == "spec_worked_example" {
            // ffi-tests/test_api.c checks the C ABI against these bits.
            assert_eq!(
                ours.value.to_bits(),
                0x3FAD_2138_D688_8481,
                "{}",
                ours.value
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 7, "the example and the six bundled files");
}

/// relplot's algorithm written out literally, for the test: numpy's linspace, the
/// reflected extension array `[flip(v)[:-1], v, flip(v)[1:]]`, the full discrete
/// convolution c[n] = Σ_k a[k]·v[n − k] restricted to 'valid' and sliced as relplot slices
/// it, `interpolate`, and the ratio Σ|ys|·dens / Σ dens with ys = R/dens. O(E²) per σ.
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

    /// `GaussianKernel.apply` with the reflected convolution.
    fn apply(f: &[f64], y: &[f64], x_eval: &[f64], sigma: f64) -> Vec<f64> {
        let e = (round(20.0 / sigma).max(2000.0) as usize) / 2 + 1;
        // smooth_round_to_grid
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
        // The terms with n ≥ k and n − k < e, in ascending k (the others are not terms).
        let full = |n: usize| -> f64 {
            ((n + 1).saturating_sub(e)..=n.min(ext.len() - 1))
                .map(|k| ext[k] * kernel[n - k])
                .sum()
        };
        // 'valid' starts at n = e − 1; relplot keeps valid[e/2 .. e/2 + e].
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

    pub fn smooth_ece_at(f: &[f64], labels: &[u8], sigma: f64) -> f64 {
        let mesh = linspace(round(10.0 / sigma).max(200.0) as usize);
        let residual: Vec<f64> = f.iter().zip(labels).map(|(f, &y)| f - y as f64).collect();
        let ones = vec![1.0; f.len()];
        let r = apply(f, &residual, &mesh, sigma);
        let dens: Vec<f64> = apply(f, &ones, &mesh, sigma)
            .iter()
            .map(|d| d + 1e-4)
            .collect();
        let num: f64 = r.iter().zip(&dens).map(|(r, d)| (r / d).abs() * d).sum();
        num / dens.iter().sum::<f64>()
    }

    /// `smECE`: `search_param(check, start = 1, refine = 10)`.
    pub fn smooth_ece(f: &[f64], labels: &[u8]) -> (f64, f64) {
        let check = |a: f64| a < 0.001 || a < smooth_ece_at(f, labels, a);
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
        (smooth_ece_at(f, labels, sigma), sigma)
    }
}

/// What the discretisation approximates, summed directly: R(t) = Σ_i r_i·φ_σ over the
/// three images f, −f, 2 − f of each score, the kernel cut at |t − image| ≤ ½ as relplot
/// cuts it, at the same mesh; O(n · mesh).
fn continuous_smooth_ece_at(f: &[f64], labels: &[u8], sigma: f64) -> f64 {
    let mesh = ((10.0 / sigma).round() as usize).max(200);
    let phi = |d: f64| {
        if d.abs() > 0.5 {
            0.0
        } else {
            (-d * d / (2.0 * sigma * sigma)).exp() / ((2.0 * std::f64::consts::PI).sqrt() * sigma)
        }
    };
    // relplot's unnormalised kernel sums to about E − 1 on its grid of step 1/(E − 1): the
    // continuous density needs that factor before the 1e-4 floor is added.
    let grid = ((20.0 / sigma).round().max(2000.0) as usize / 2) as f64;
    let (mut num, mut den) = (0.0, 0.0);
    for i in 0..mesh {
        let t = i as f64 / (mesh - 1) as f64;
        let (mut r, mut d) = (0.0, 0.0);
        for (&c, &y) in f.iter().zip(labels) {
            let k = phi(t - c) + phi(t + c) + phi(t - (2.0 - c));
            r += (c - y as f64) * k;
            d += k;
        }
        num += (r * grid).abs();
        den += d * grid + 1e-4;
    }
    num / den
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn samples(max: usize) -> impl Strategy<Value = (Vec<f64>, Vec<u8>)> {
        proptest::collection::vec(
            (
                prop_oneof![0.0..=1.0f64, Just(0.0), Just(1.0), Just(0.5)],
                0u8..=1,
            ),
            1..max,
        )
        .prop_map(|pairs| pairs.into_iter().unzip())
    }

    /// Heavy ties: scores mostly exactly 1 (a float32 softmax saturating), 0, the
    /// smallest subnormal and normal doubles, the largest double below 1, and ½.
    fn tied_samples(max: usize) -> impl Strategy<Value = (Vec<f64>, Vec<u8>)> {
        proptest::collection::vec(
            (
                prop_oneof![
                    6 => Just(1.0),
                    2 => Just(0.0),
                    1 => Just(5e-324),
                    1 => Just(f64::MIN_POSITIVE),
                    1 => Just(1.0 - f64::EPSILON / 2.0),
                    1 => Just(0.5),
                    3 => 0.0..=1.0f64,
                ],
                0u8..=1,
            ),
            1..max,
        )
        .prop_map(|pairs| pairs.into_iter().unzip())
    }

    /// Nearly calibrated data, so that σ* is small and the search visits the fine grids
    /// (and coarsens some): `groups` scores (one of them exactly 1, another 0 when asked),
    /// each repeated `copies` times with round(copies · score) + offset positive labels,
    /// the offsets mostly 0, else in [−2, 2].
    fn calibrated_samples() -> impl Strategy<Value = (Vec<f64>, Vec<u8>)> {
        (
            proptest::collection::vec(
                (0.0..=1.0f64, prop_oneof![3 => Just(0i64), 1 => -2i64..=2]),
                4..24,
            ),
            40usize..240,
            any::<bool>(),
        )
            .prop_map(|(mut groups, copies, ends)| {
                groups[0].0 = 1.0;
                if ends {
                    groups[1].0 = 0.0;
                }
                let (mut scores, mut labels) = (Vec::new(), Vec::new());
                for (score, offset) in groups {
                    let positives = ((copies as f64 * score).round() as i64 + offset)
                        .clamp(0, copies as i64) as usize;
                    for i in 0..copies {
                        scores.push(score);
                        labels.push(u8::from(i < positives));
                    }
                }
                // Interleave the groups, as data arrives unsorted.
                let n = scores.len();
                let order: Vec<usize> = (0..n).map(|i| (i * 7919) % n).collect();
                if order
                    .iter()
                    .collect::<std::collections::BTreeSet<_>>()
                    .len()
                    == n
                {
                    (
                        order.iter().map(|&i| scores[i]).collect(),
                        order.iter().map(|&i| labels[i]).collect(),
                    )
                } else {
                    (scores, labels)
                }
            })
    }

    /// Scores at least one kernel-grid step from 0 and 1. relplot's reflection repeats
    /// neither end point of its grid (`flip(v)[:-1]`, `flip(v)[1:]`), so the share of a
    /// score that lands on the end point itself is counted once, where a reflected
    /// density would count it twice (the score and its image coincide): scores within a
    /// step of 0 or 1 (a float32 softmax's saturated 1.0s) weigh half as much at the
    /// boundary as continuous reflection would give them. tce follows relplot.
    fn interior_samples(max: usize) -> impl Strategy<Value = (Vec<f64>, Vec<u8>)> {
        proptest::collection::vec((0.01..0.99f64, 0u8..=1), 1..max)
            .prop_map(|pairs| pairs.into_iter().unzip())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn at_a_bandwidth_equals_the_literal_algorithm(
            (scores, labels) in samples(60),
            sigma in prop_oneof![0.005..0.02f64, 0.02..1.2f64],
        ) {
            let mut scratch = vec![0.0; tce::smece::scratch_len(sigma).unwrap()];
            let ours = smooth_ece_at(&scores, &labels, sigma, &mut scratch).unwrap();
            let literal = literal::smooth_ece_at(&scores, &labels, sigma);
            prop_assert!((ours - literal).abs() <= 1e-12 * literal.max(1e-3), "{ours} vs {literal}");
        }

        #[test]
        fn the_discretisation_approximates_direct_kernel_sums(
            (scores, labels) in interior_samples(60),
            // Up to 0.25: relplot cuts the kernel at ±½, and for wider kernels the cut,
            // where the kernel is still large, moves by a grid step with the splitting
            // (0.7 % relative at σ = 0.37 on four samples whose R changes sign).
            sigma in 0.05..0.25f64,
        ) {
            let mut scratch = vec![0.0; tce::smece::scratch_len(sigma).unwrap()];
            let ours = smooth_ece_at(&scores, &labels, sigma, &mut scratch).unwrap();
            let direct = continuous_smooth_ece_at(&scores, &labels, sigma);
            // Linear splitting onto a grid of step 1/1000 (a hat of width 2/1000 convolved
            // into the kernel) and the linear interpolation to the mesh: errors of order
            // (step/σ)² ≤ 4e-4 in the kernel, a few times that in its tails and where R
            // changes sign (2.7e-3 relative seen at σ ≈ 0.05).
            prop_assert!((ours - direct).abs() <= 5e-3 * direct + 1e-4, "{ours} vs {direct}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn with_heavy_ties_at_a_bandwidth_equals_the_literal_algorithm(
            (scores, labels) in tied_samples(80),
            sigma in prop_oneof![
                Just(2.0 / 1024.0), Just(3.0 / 1024.0), Just(4.0 / 1024.0), Just(0.1),
                0.005..0.02f64, 0.02..1.2f64,
            ],
        ) {
            let mut scratch = vec![0.0; tce::smece::scratch_len(sigma).unwrap()];
            let ours = smooth_ece_at(&scores, &labels, sigma, &mut scratch).unwrap();
            let literal = literal::smooth_ece_at(&scores, &labels, sigma);
            prop_assert!((ours - literal).abs() <= 1e-12 * literal.max(1e-3), "{ours} vs {literal}");
        }
    }

    proptest! {
        // The literal search costs 12 O(E²) convolutions a case, E up to 5121.
        #![proptest_config(ProptestConfig::with_cases(6))]

        /// Where σ* is small the search coarsens grids and reuses them: still relplot's
        /// bandwidth and, to rounding, its value.
        #[test]
        fn on_nearly_calibrated_data_the_search_equals_the_literal_search(
            (scores, labels) in calibrated_samples(),
        ) {
            let mut scratch = vec![0.0; SCRATCH_LEN];
            let ours = smooth_ece(&scores, &labels, &mut scratch).unwrap();
            let (value, sigma) = literal::smooth_ece(&scores, &labels);
            prop_assert_eq!(ours.bandwidth, sigma);
            prop_assert!((ours.value - value).abs() <= 1e-12 * value.max(1e-3), "{} vs {value}", ours.value);
        }

        #[test]
        fn with_heavy_ties_the_search_equals_the_literal_search(
            (scores, labels) in tied_samples(60),
        ) {
            let mut scratch = vec![0.0; SCRATCH_LEN];
            let ours = smooth_ece(&scores, &labels, &mut scratch).unwrap();
            let (value, sigma) = literal::smooth_ece(&scores, &labels);
            prop_assert_eq!(ours.bandwidth, sigma);
            prop_assert!((ours.value - value).abs() <= 1e-12 * value.max(1e-3), "{} vs {value}", ours.value);
        }
    }

    proptest! {
        // The literal search costs 12 O(E²) convolutions a case, E up to 5121.
        #![proptest_config(ProptestConfig::with_cases(6))]

        #[test]
        fn the_search_equals_the_literal_search((scores, labels) in samples(40)) {
            let mut scratch = vec![0.0; SCRATCH_LEN];
            let ours = smooth_ece(&scores, &labels, &mut scratch).unwrap();
            let (value, sigma) = literal::smooth_ece(&scores, &labels);
            prop_assert_eq!(ours.bandwidth, sigma);
            prop_assert!((ours.value - value).abs() <= 1e-12 * value.max(1e-3));
            // The search keeps σ* on the side of the fixed point where σ ≥ smECE_σ.
            prop_assert!(ours.value <= ours.bandwidth);
        }
    }
}
