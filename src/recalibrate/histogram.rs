//! Histogram binning (Zadrozny & Elkan 2001): B equal-width bins of the calibration
//! confidences, each mapped to the mean label of its calibration samples.

use super::piecewise::{Pieces, PiecewiseConstant};
use super::RecalibrateError;

/// The number of bins of SPEC §8's histogram binning.
pub const DEFAULT_BINS: usize = 15;

/// Fits histogram binning with `bins` bins.
///
/// **Empty bins** (no calibration sample) map to their centre, (2k + 1)/2B: with nothing
/// learnt about them, a test score there is moved at most half a bin, and the map stays
/// defined everywhere. (Leaving the score unchanged would make the map not piecewise
/// constant; borrowing a neighbour's value would invent evidence.)
pub fn fit_histogram_binning(
    scores: &[f64],
    labels: &[u8],
    bins: usize,
) -> Result<PiecewiseConstant, RecalibrateError> {
    super::check(scores, labels)?;
    if bins == 0 {
        return Err(RecalibrateError::ZeroBins);
    }
    let mut map = PiecewiseConstant {
        pieces: Pieces::EqualWidth { bins },
        values: vec![0.0; bins],
    };
    let mut counts = vec![0u64; bins];
    let mut hits = vec![0u64; bins];
    for (&score, &label) in scores.iter().zip(labels) {
        let k = map.piece(score);
        counts[k] += 1;
        hits[k] += u64::from(label);
    }
    for (k, value) in map.values.iter_mut().enumerate() {
        *value = if counts[k] == 0 {
            // (2k + 1) / 2B in one correctly rounded division, so that a centre equal to
            // a bin accuracy as a rational (½ = 1/2, 0.1 = 1/10) is the same f64 and the
            // two pieces are one confidence (see `exact`). ½(lo + hi) rounds twice.
            (2.0 * k as f64 + 1.0) / (2.0 * bins as f64)
        } else {
            hits[k] as f64 / counts[k] as f64
        };
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_map_to_their_mean_label_and_empty_bins_to_their_centre() {
        let scores = [0.05, 0.07, 0.55, 0.95, 1.0, 0.96];
        let labels = [0, 1, 1, 1, 0, 1];
        let map = fit_histogram_binning(&scores, &labels, 10).unwrap();
        assert_eq!(map.apply(0.01), 0.5);
        assert_eq!(map.apply(0.5), 1.0);
        assert!((map.apply(0.99) - 2.0 / 3.0).abs() < 1e-15);
        assert!((map.apply(0.3) - 0.35).abs() < 1e-15);
        assert_eq!(
            fit_histogram_binning(&scores, &labels, 0),
            Err(RecalibrateError::ZeroBins)
        );
    }
}
