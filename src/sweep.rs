//! The monotone sweep (SPEC §4): the largest bin count b* such that every binning with
//! b' ≤ b* bins has non-decreasing bin accuracies.
//!
//! **Tied scores.** Equal-width bins and equal-mass bins that keep ties together
//! ([`Ties::Keep`]) never split a group of equal scores, so every one of their
//! partitions is a union of consecutive *tie groups*, d of them for d distinct scores.
//! Two facts follow, and make the sweep cost O(n + Σ_{b ≤ b*} min(b, d) log n) instead
//! of O(b*² log n) with b* running to n on tied data:
//!
//! - Each b costs O(min(b, d) log n): the walk visits the non-empty bins only, finding
//!   each one's end by a binary search (`runs`).
//! - If the tie groups' own accuracies never decrease, every coarser partition into
//!   consecutive runs has non-decreasing accuracies too (each run's accuracy lies between
//!   those of its first and last group), so every b passes: b* reaches the limit, with no
//!   walk over b at all. This includes data with one distinct score, or a few whose
//!   accuracies rise, where the walk used to run to n. (With ties split in arrival order,
//!   the finest partition is one sample a bin, and the same test is "all misses sort
//!   below all hits".)
//!
//! **The b* reported.** When no b up to the limit fails, the estimate is ECE_bin of the
//! partition at the limit, and more bins could not change it once every tie group has a
//! bin of its own. The sweep then reports the smallest b that gives that same partition
//! (the same samples in the same bins, empty bins aside), which has the same estimate: 1
//! for a constant score, not n.

use crate::binning::{Binning, Closure, EqualMassStarts, Ties};
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

/// What the sweep reads of n samples sorted by score (ties in arrival order): positions
/// 0..n, their running hit counts and where their tie groups and equal-width bins end.
/// Implemented by the sorted samples and by their weighted (bootstrap) views, whose
/// positions are those of the expanded sample.
pub(crate) trait SortedPositions {
    /// The number of positions n.
    fn positions(&self) -> usize;
    /// Hits at the positions before `p` (0..=n).
    fn hits_before(&self, p: usize) -> u64;
    /// The end of the group of scores equal to the one at `p` if the group started
    /// before `p`; else `p` itself (0 and n included).
    fn after_ties(&self, p: usize) -> usize;
    /// The end of the run of positions from `p` (< n) whose scores fall in the same
    /// equal-width bin (of `bins`, by `closure`) as the score at `p`.
    fn width_bin_end(&self, p: usize, closure: Closure, bins: usize) -> usize;
}

/// The non-empty bins of `binning` with `bins` bins, in order, as their end positions
/// (each bin starts where the one before it ends, the first at 0; the last ends at n).
/// Equal-width and tie-keeping bins step from bin to bin by binary searches, so a call
/// costs O(min(bins, d) log n) for d distinct scores; ties split cost O(bins).
pub(crate) fn runs<V: SortedPositions + ?Sized>(
    view: &V,
    binning: Binning,
    bins: usize,
) -> impl Iterator<Item = usize> + '_ {
    let n = view.positions();
    let mut equal_mass = EqualMassStarts::new(n, bins);
    // The split starts begin with 0, which is no end.
    if binning == Binning::EqualMass(Ties::Split) {
        equal_mass.next();
    }
    let mut start = 0usize;
    core::iter::from_fn(move || loop {
        if start >= n {
            return None;
        }
        let end = match binning {
            Binning::EqualMass(Ties::Split) => equal_mass.next().unwrap_or(n),
            Binning::EqualMass(Ties::Keep) => keep_end(view, start, bins),
            Binning::EqualWidth(closure) => view.width_bin_end(start, closure, bins),
        };
        if end > start {
            start = end;
            return Some(end);
        }
    })
}

/// The end of the tie-keeping equal-mass bin that starts at `start` (0 or the end of a
/// tie group, < n): the next equal-mass start after `start`, moved to the end of its tie
/// group.
fn keep_end<V: SortedPositions + ?Sized>(view: &V, start: usize, bins: usize) -> usize {
    let n = view.positions();
    // Position `start` lies in equal-mass bin k = floor(start·B/n); the next bin starts
    // at ceil((k + 1)·n/B) > start. In u128: start, n < 2^64 and B ≤ 2^64.
    // The products are below 2^128 (each factor below 2^64 + 1); n = 0 or B = 0 (never
    // asked for: a walk starts below n, the sweep's B ≥ 1) end the walk instead of dividing.
    let (n128, b128) = (n as u128, bins as u128);
    let next = (start as u128)
        .wrapping_mul(b128)
        .checked_div(n128)
        .map(|k| k.wrapping_add(1).wrapping_mul(n128))
        .and_then(|kn| kn.wrapping_add(b128.wrapping_sub(1)).checked_div(b128));
    match next {
        // Below n: fits.
        Some(next) if next < n128 => view.after_ties(next as usize),
        _ => n,
    }
}

/// (count, hits) of each non-empty bin.
fn shapes<V: SortedPositions + ?Sized>(
    view: &V,
    binning: Binning,
    bins: usize,
) -> impl Iterator<Item = (u64, u64)> + '_ {
    // Each bin's start is the last one's end: one lookup of the hits a bin.
    let (mut start, mut hits_before_start) = (0usize, 0u64);
    runs(view, binning, bins).map(move |end| {
        let hits = view.hits_before(end);
        // end ≥ start, and the running hits never decrease.
        let shape = (
            end.wrapping_sub(start) as u64,
            hits.wrapping_sub(hits_before_start),
        );
        (start, hits_before_start) = (end, hits);
        shape
    })
}

/// (count, hits) of positions `start..end`.
fn shape<V: SortedPositions + ?Sized>(view: &V, (start, end): (usize, usize)) -> (u64, u64) {
    // end ≥ start, and the running hits never decrease.
    (
        end.wrapping_sub(start) as u64,
        view.hits_before(end).wrapping_sub(view.hits_before(start)),
    )
}

/// Whether the finest partition `binning` can reach has non-decreasing accuracies: the
/// tie groups (equal width, ties kept), or the samples one by one (ties split). If so,
/// every partition of either kind does (see the module's doc). O(n) at most.
fn finest_is_monotone<V: SortedPositions + ?Sized>(view: &V, binning: Binning) -> bool {
    let n = view.positions();
    if binning == Binning::EqualMass(Ties::Split) {
        // One sample a bin: monotone exactly when every miss sorts below every hit.
        let hits = view.hits_before(n);
        // hits ≤ n.
        return view.hits_before(n.wrapping_sub(hits as usize)) == 0;
    }
    // The groups before the one holding the first hit have accuracy 0, at most any later
    // group's, so they cannot break monotonicity: the walk starts at that group. (On
    // one-vs-rest samples of a class most scores are misses below the first hit.)
    let mut start = first_hit_group(view);
    let groups = core::iter::from_fn(|| {
        if start >= n {
            return None;
        }
        // The group holding `start` ends where `after_ties(start + 1)` says (start + 1 ≤ n).
        let end = view.after_ties(start.wrapping_add(1));
        let range = (start, end);
        start = end;
        Some(shape(view, range))
    });
    is_monotone(groups)
}

/// The start of the tie group holding the first hit (n without hits), by binary searches:
/// O(log n) calls of `hits_before` and `after_ties`.
fn first_hit_group<V: SortedPositions + ?Sized>(view: &V) -> usize {
    let n = view.positions();
    if view.hits_before(n) == 0 {
        return n;
    }
    // The first hit is at m, the last p with no hits before it: hits_before is 0 on
    // [0, m] and positive on (m, n].
    let (mut lo, mut hi) = (0usize, n);
    while hi.wrapping_sub(lo) > 1 {
        let mid = lo.wrapping_add(hi.wrapping_sub(lo) / 2);
        if view.hits_before(mid) == 0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let m = lo;
    if view.after_ties(m) == m {
        // The group starts at m (0 included).
        return m;
    }
    // The group [s, e) holding m started before it: after_ties(q) is e exactly for q in
    // (s, m] (at s the group starts; before s an earlier group ends by s < e).
    let end = view.after_ties(m.wrapping_add(1));
    let (mut lo, mut hi) = (0usize, m);
    while hi.wrapping_sub(lo) > 1 {
        let mid = lo.wrapping_add(hi.wrapping_sub(lo) / 2);
        if view.after_ties(mid) == end {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    lo
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

/// b* of the monotone sweep over `view` (SPEC §4, with the b* reported as the module's
/// doc says when no b fails).
pub(crate) fn sweep_bins<V: SortedPositions + ?Sized>(
    view: &V,
    binning: Binning,
    options: SweepOptions,
) -> Result<usize, EstimateError> {
    let max_bins = options.max_bins_for(view.positions())?;
    if !finest_is_monotone(view, binning) {
        if let Some(failed) = (2..=max_bins).find(|&b| !is_monotone(shapes(view, binning, b))) {
            // failed ≥ 2.
            return Ok(failed.wrapping_sub(1));
        }
    }
    Ok(first_with_partition_of(view, binning, max_bins))
}

/// The smallest b whose non-empty bins are those of `max_bins` bins.
fn first_with_partition_of<V: SortedPositions + ?Sized>(
    view: &V,
    binning: Binning,
    max_bins: usize,
) -> usize {
    // At least as many bins as the partition has non-empty ones.
    // (Counted with a wrapping add: at most n, and `Iterator::count` is checked
    // arithmetic, which the panic audit refuses.)
    let nonempty = runs(view, binning, max_bins).fold(0usize, |k, _| k.wrapping_add(1));
    (nonempty.max(1)..max_bins)
        .find(|&b| runs(view, binning, b).eq(runs(view, binning, max_bins)))
        .unwrap_or(max_bins)
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
}
