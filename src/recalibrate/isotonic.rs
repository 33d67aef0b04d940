//! Isotonic regression by pool-adjacent-violators: the non-decreasing step function of
//! the confidence closest to the labels in squared error.

use super::piecewise::{Pieces, PiecewiseConstant};
use super::RecalibrateError;

/// One pooled block: its smallest score, total weight and mean label.
#[derive(Clone, Copy, Debug)]
struct Block {
    start: f64,
    weight: f64,
    mean: f64,
}

/// Fits isotonic regression.
///
/// Equal scores are pooled first (they must get one value), so the fit is the weighted
/// PAV over distinct scores. The map is a step function: block k covers
/// [its smallest score, the next block's smallest score); scores below the first block
/// take the first block's value.
pub fn fit_isotonic(scores: &[f64], labels: &[u8]) -> Result<PiecewiseConstant, RecalibrateError> {
    super::check(scores, labels)?;
    let mut pairs: Vec<(f64, u8)> = scores.iter().copied().zip(labels.iter().copied()).collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut blocks: Vec<Block> = Vec::new();
    let mut i = 0;
    while i < pairs.len() {
        // The tie group of pairs[i].
        let score = pairs[i].0;
        let mut j = i;
        let mut hits = 0.0;
        while j < pairs.len() && pairs[j].0 == score {
            hits += f64::from(pairs[j].1);
            j += 1;
        }
        let weight = (j - i) as f64;
        let mut block = Block {
            start: score,
            weight,
            mean: hits / weight,
        };
        // Pool backwards while the previous block is not lower (equal neighbours are
        // pooled too: the same function with fewer pieces).
        while let Some(previous) = blocks.last() {
            if previous.mean < block.mean {
                break;
            }
            let weight = previous.weight + block.weight;
            block = Block {
                start: previous.start,
                weight,
                mean: (previous.mean * previous.weight + block.mean * block.weight) / weight,
            };
            blocks.pop();
        }
        blocks.push(block);
        i = j;
    }
    let mut starts: Vec<f64> = blocks.iter().map(|b| b.start).collect();
    starts[0] = 0.0;
    Ok(PiecewiseConstant {
        pieces: Pieces::Starts(starts),
        values: blocks.iter().map(|b| b.mean).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pools_violators_and_ties() {
        let scores = [0.1, 0.2, 0.3, 0.3, 0.4, 0.9];
        let labels = [0, 1, 0, 1, 0, 1];
        let map = fit_isotonic(&scores, &labels).unwrap();
        // 0.1 → 0; {0.2, 0.3, 0.3, 0.4} pool to 2/4; 0.9 → 1.
        assert_eq!(map.values, vec![0.0, 0.5, 1.0]);
        assert_eq!(map.pieces, Pieces::Starts(vec![0.0, 0.2, 0.9]));
        assert_eq!(map.apply(0.0), 0.0);
        assert_eq!(map.apply(0.25), 0.5);
        assert_eq!(map.apply(1.0), 1.0);
    }

    /// The least-squares error of the best non-decreasing assignment of values to the
    /// distinct scores, by brute force over all ways to cut the sorted groups into
    /// consecutive blocks (each block at its mean), keeping only monotone ones. The
    /// isotonic solution is of this form, so the minimum over them is the optimum.
    fn brute_force_error(scores: &[f64], labels: &[u8]) -> f64 {
        let mut groups: Vec<(f64, f64, f64)> = Vec::new(); // (score, weight, hits)
        let mut pairs: Vec<(f64, u8)> =
            scores.iter().copied().zip(labels.iter().copied()).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (s, y) in pairs {
            match groups.last_mut() {
                Some(g) if g.0 == s => {
                    g.1 += 1.0;
                    g.2 += f64::from(y);
                }
                _ => groups.push((s, 1.0, f64::from(y))),
            }
        }
        let m = groups.len();
        let mut best = f64::INFINITY;
        for cuts in 0u32..(1 << (m - 1)) {
            let mut means = Vec::new();
            let mut error = 0.0;
            let mut start = 0;
            for end in 1..=m {
                if end == m || cuts & (1 << (end - 1)) != 0 {
                    let w: f64 = groups[start..end].iter().map(|g| g.1).sum();
                    let h: f64 = groups[start..end].iter().map(|g| g.2).sum();
                    let mean = h / w;
                    // Σ (y − mean)² over the block's labels.
                    error += h * (1.0 - mean) * (1.0 - mean) + (w - h) * mean * mean;
                    means.push(mean);
                    start = end;
                }
            }
            if means.windows(2).all(|w| w[0] <= w[1] + 1e-12) {
                best = best.min(error);
            }
        }
        best
    }

    proptest! {
        #[test]
        fn monotone_and_least_squares(
            rows in prop::collection::vec((0u8..8, 0u8..=1), 1..11)
        ) {
            // Few distinct scores, so ties are common.
            let scores: Vec<f64> = rows.iter().map(|r| f64::from(r.0) / 8.0).collect();
            let labels: Vec<u8> = rows.iter().map(|r| r.1).collect();
            let map = fit_isotonic(&scores, &labels).unwrap();
            prop_assert!(map.values.windows(2).all(|w| w[0] < w[1]));
            let grid: Vec<f64> = (0..=64).map(|i| f64::from(i) / 64.0).collect();
            prop_assert!(grid.windows(2).all(|w| map.apply(w[0]) <= map.apply(w[1])));
            let error: f64 = scores
                .iter()
                .zip(&labels)
                .map(|(&s, &y)| (map.apply(s) - f64::from(y)).powi(2))
                .sum();
            let brute = brute_force_error(&scores, &labels);
            prop_assert!((error - brute).abs() < 1e-9, "{} vs {}", error, brute);
        }
    }
}
