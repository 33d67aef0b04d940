//! The monotone sweep (SPEC §4): the largest bin count b* such that every binning with
//! b' ≤ b* bins has non-decreasing bin accuracies.

use crate::error::EstimateError;

/// The largest bin count the sweep may try.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SweepLimit {
    /// Up to n bins (each sample alone in a bin), as the paper describes.
    #[default]
    Samples,
    /// Up to n − 1 bins, as the paper's released code does.
    PaperCode,
}

/// Options of the sweep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SweepOptions {
    /// A cap on b* (and so on the work): `Some(0)` is [`EstimateError::ZeroBins`].
    ///
    /// Unlike a bin count, a cap is never refused for being large (above
    /// [`crate::MAX_BINS`] included): it can only lower the b the sweep tries, which is
    /// bounded by the number of samples n anyway, so a huge cap costs nothing and means
    /// "no cap". (The sweep's own b* may exceed `MAX_BINS` for more samples than that: it
    /// allocates nothing per bin and its work is bounded by the data.)
    pub max_bins: Option<usize>,
    /// The limit that applies without (or below) the cap.
    pub limit: SweepLimit,
}

impl SweepOptions {
    /// The largest b to try for `n` samples; at least 1 (one bin is always monotone).
    pub(crate) fn max_bins_for(&self, n: usize) -> Result<usize, EstimateError> {
        if n == 0 {
            return Err(EstimateError::NoSamples);
        }
        let limit = match self.limit {
            SweepLimit::Samples => n,
            SweepLimit::PaperCode => n - 1,
        };
        match self.max_bins {
            Some(0) => Err(EstimateError::ZeroBins),
            Some(cap) => Ok(limit.min(cap).max(1)),
            None => Ok(limit.max(1)),
        }
    }
}

/// Whether the accuracies hits/count of the non-empty bins, in order, never decrease
/// (equal neighbours allowed). Exact: compares h_k·n_j with h_j·n_k in integers.
pub(crate) fn is_monotone<I: IntoIterator<Item = (u64, u64)>>(shapes: I) -> bool {
    let mut previous: Option<(u64, u64)> = None;
    for (count, hits) in shapes {
        if count == 0 {
            continue;
        }
        if let Some((prev_count, prev_hits)) = previous {
            if u128::from(hits) * u128::from(prev_count) < u128::from(prev_hits) * u128::from(count)
            {
                return false;
            }
        }
        previous = Some((count, hits));
    }
    true
}

/// Tries b = 2, 3, … up to `max_bins` and returns b − 1 for the first b whose bins are
/// not monotone, or `max_bins` if none fails. `shapes(b)` yields (count, hits) per bin.
pub(crate) fn largest_monotone<F, I>(max_bins: usize, mut shapes: F) -> usize
where
    F: FnMut(usize) -> I,
    I: IntoIterator<Item = (u64, u64)>,
{
    (2..=max_bins)
        .find(|&b| !is_monotone(shapes(b)))
        // b ≥ 2: nothing saturates.
        .map_or(max_bins, |b| b.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotone_skips_empty_bins_and_allows_equal_heights() {
        assert!(is_monotone([(2, 0), (0, 0), (2, 1), (4, 2), (1, 1)]));
        assert!(!is_monotone([(2, 1), (0, 0), (3, 1)]));
        assert!(is_monotone([]));
    }

    #[test]
    fn limits() {
        let paper = SweepOptions {
            max_bins: None,
            limit: SweepLimit::PaperCode,
        };
        assert_eq!(paper.max_bins_for(20), Ok(19));
        assert_eq!(SweepOptions::default().max_bins_for(20), Ok(20));
        assert_eq!(
            SweepOptions {
                max_bins: Some(5),
                ..Default::default()
            }
            .max_bins_for(20),
            Ok(5)
        );
        assert_eq!(
            SweepOptions {
                max_bins: Some(0),
                ..Default::default()
            }
            .max_bins_for(20),
            Err(EstimateError::ZeroBins)
        );
        assert_eq!(
            SweepOptions::default().max_bins_for(0),
            Err(EstimateError::NoSamples)
        );
        assert_eq!(paper.max_bins_for(1), Ok(1));
    }

    #[test]
    fn largest_monotone_stops_at_the_first_failure() {
        // Monotone for b = 2 and 3, not for 4; 5 would be monotone again but is never tried.
        let b = largest_monotone(10, |b| {
            let ok = b != 4;
            [(1, u64::from(!ok)), (1, u64::from(ok))]
        });
        assert_eq!(b, 3);
        assert_eq!(largest_monotone(7, |_| [(1, 0), (1, 1)]), 7);
        assert_eq!(largest_monotone(1, |_| [(1, 1), (1, 0)]), 1);
    }
}
