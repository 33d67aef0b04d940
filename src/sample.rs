//! Validation of (score, label) samples: the one rule every state applies.

use crate::error::{BadWeights, PushError};

/// Checks one sample: a finite score in [0, 1] and a label of 0 or 1. `index` names the
/// element in errors. Every state validates with this one rule; it is public so that
/// readers of files can name the offending line before anything is recorded.
#[inline]
pub fn check(score: f64, label: u8, index: usize) -> Result<(), PushError> {
    // One comparison accepts every valid score; the slow path only names the cause.
    if !(0.0..=1.0).contains(&score) {
        return Err(if score.is_finite() {
            PushError::ScoreOutOfRange { index }
        } else {
            PushError::NonFiniteScore { index }
        });
    }
    if label > 1 {
        return Err(PushError::InvalidLabel { index });
    }
    Ok(())
}

/// Checks that a batch has one label per score.
pub fn check_lengths(scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
    if scores.len() != labels.len() {
        return Err(PushError::LengthMismatch {
            scores: scores.len(),
            labels: labels.len(),
        });
    }
    Ok(())
}

/// Checks a whole batch before anything from it is recorded, so that a bad element
/// rejects the batch whole.
pub fn check_batch(scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
    check_lengths(scores, labels)?;
    // Branch-free scan first (it vectorises); name the culprit only if there is one.
    let all_valid = scores.iter().zip(labels).fold(true, |ok, (&s, &l)| {
        ok & (0.0..=1.0).contains(&s) & (l <= 1)
    });
    if all_valid {
        return Ok(());
    }
    // (A bounded range, not `enumerate`: no overflow path.)
    (0..scores.len())
        .zip(scores.iter().zip(labels))
        .try_for_each(|(i, (&s, &l))| check(s, l, i))
}

/// Whether a weight is finite and not negative: `0 ≤ w ≤ MAX` fails for NaN, ±∞ and
/// negatives alike, without a branch.
#[inline(always)]
pub(crate) fn valid_weight(w: f64) -> bool {
    (0.0..=f64::MAX).contains(&w)
}

/// Checks `sample_weight` for `rows` rows (one weight each, every one finite and ≥ 0,
/// a positive finite sum) and returns the sum (added in four interleaved lanes). The
/// first bad weight is named.
pub fn check_weights(weights: &[f64], rows: usize) -> Result<f64, BadWeights> {
    if weights.len() != rows {
        return Err(BadWeights::LengthMismatch {
            rows,
            weights: weights.len(),
        });
    }
    // Branch-free first (it vectorises; a row-order sum would wait ~4 cycles a weight on
    // the previous add).
    let (mut lanes, mut all_valid) = ([0.0f64; 4], true);
    let mut chunks = weights.chunks_exact(4);
    for chunk in chunks.by_ref() {
        for (lane, &w) in lanes.iter_mut().zip(chunk) {
            all_valid &= valid_weight(w);
            *lane += w;
        }
    }
    for (lane, &w) in lanes.iter_mut().zip(chunks.remainder()) {
        all_valid &= valid_weight(w);
        *lane += w;
    }
    if !all_valid {
        // (A bounded range, not `enumerate`: no overflow path.)
        let index = (0..weights.len())
            .zip(weights)
            .find(|&(_, &w)| !valid_weight(w))
            .map_or(0, |(i, _)| i);
        return Err(BadWeights::InvalidWeight { index });
    }
    let total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    if total > 0.0 && total.is_finite() {
        Ok(total)
    } else {
        Err(BadWeights::ZeroTotalWeight)
    }
}
