//! The weighted sweep's search for b*, over prefix sums of the sorted rows: a binning
//! with b bins costs O(min(b, n) log n) (each non-empty bin's end is a binary search),
//! not a pass over the rows, as in the unweighted sweep (`crate::sweep`).
//!
//! A bin is the units between two *cuts*: a cut (j, m) is unit m of sorted row j (m = 0
//! is the row's start; m > 0 only for a row that the unit rule of [`Ties::Split`]
//! splits). Bins with the same cuts hold the same rows and the same weights, which is
//! what "the same bins" means for the b* rule. The weights' sums before each row are
//! those the one-pass binning (`SortedRows::equal_mass`) runs through, so both put every
//! unit in the same bin.

use super::sorted::{ceil, SortedRows, Walk};
use crate::binning::{Binning, Ties};

/// Unit `.1` (a whole number, as `f64`) of sorted row `.0`; (n, 0) is the end.
type Cut = (usize, f64);

/// The sorted rows with positive weight and their prefix sums.
pub(crate) struct Prefix {
    scores: Vec<f64>,
    labels: Vec<u8>,
    weights: Vec<f64>,
    /// Σ w over the rows before j (n + 1 entries), summed in order: the start of row j
    /// on the line of cumulative weight.
    before: Vec<f64>,
    /// Σ w·y and Σ w·(1 − y) over the rows before j. Kept apart (not hits and weight) so
    /// that a bin of hits alone has exactly 0 misses: the comparisons of accuracies are
    /// then exact at 0 and 1 whatever the weights' rounding.
    hits: Vec<f64>,
    misses: Vec<f64>,
    total: f64,
}

/// The first index in lo..hi where `reached` holds (hi if none), for a `reached` that
/// holds from some index on.
fn first(mut lo: usize, mut hi: usize, reached: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if reached(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The equal-weight bin of cumulative weight `a`: the largest k < `bins` with
/// k·W ≤ a·B. The quotient is a first guess, corrected by the products (the rule of
/// `SortedRows::equal_mass`).
fn equal_weight_bin(a: f64, total: f64, bins: usize) -> usize {
    let b = bins as f64;
    let mut k = ((a * b / total).floor().max(0.0) as usize).min(bins - 1);
    while k > 0 && k as f64 * total > a * b {
        k -= 1;
    }
    while k + 1 < bins && (k + 1) as f64 * total <= a * b {
        k += 1;
    }
    k
}

impl Prefix {
    pub(crate) fn new(rows: &SortedRows<'_>) -> Self {
        let n = rows.rows() as usize;
        let mut p = Prefix {
            scores: Vec::with_capacity(n),
            labels: Vec::with_capacity(n),
            weights: Vec::with_capacity(n),
            before: Vec::with_capacity(n + 1),
            hits: Vec::with_capacity(n + 1),
            misses: Vec::with_capacity(n + 1),
            total: rows.total(),
        };
        let (mut before, mut hits, mut misses) = (0.0f64, 0.0f64, 0.0f64);
        rows.walk(|f, y, w| {
            p.scores.push(f);
            p.labels.push(y);
            p.weights.push(w);
            p.before.push(before);
            p.hits.push(hits);
            p.misses.push(misses);
            before += w;
            if y == 1 {
                hits += w;
            } else {
                misses += w;
            }
        });
        p.before.push(before);
        p.hits.push(hits);
        p.misses.push(misses);
        p
    }

    pub(crate) fn len(&self) -> usize {
        self.scores.len()
    }

    /// Σ ⌈w⌉, the units of weight (saturating past usize).
    pub(crate) fn units(&self) -> usize {
        let units = self.weights.iter().map(|&w| ceil(w)).sum::<f64>();
        if units >= usize::MAX as f64 {
            usize::MAX
        } else {
            units as usize
        }
    }

    /// The bin among `b` of the unit at `cut` (not the end).
    fn bin_of(&self, binning: Binning, b: usize, (j, m): Cut) -> usize {
        match binning {
            Binning::EqualWidth(closure) => closure.bin_index(self.scores[j], b),
            Binning::EqualMass(_) => equal_weight_bin(self.before[j] + m, self.total, b),
        }
    }

    /// The first unit at or after `from` (the start of a bin before k) in bin `k` or
    /// later, among `b` bins (0 < k < b).
    fn cut(&self, binning: Binning, b: usize, k: usize, from: Cut) -> Cut {
        let n = self.len();
        let (scores, before, weights) = (&self.scores, &self.before, &self.weights);
        match binning {
            Binning::EqualWidth(closure) => (
                first(from.0, n, |j| closure.bin_index(scores[j], b) >= k),
                0.0,
            ),
            Binning::EqualMass(ties) => {
                let (edge, bf) = (k as f64 * self.total, b as f64);
                // Position s is in bin k or later: k·W ≤ s·B.
                let reached = |s: f64| edge <= s * bf;
                match ties {
                    Ties::Keep => {
                        // The first tie group whose start is reached.
                        let j = first(from.0, n, |j| reached(before[j]));
                        if j > 0 && j < n && scores[j] == scores[j - 1] {
                            let f = scores[j];
                            (first(j, n, |i| scores[i] != f), 0.0)
                        } else {
                            (j, 0.0)
                        }
                    }
                    Ties::Split => {
                        // The first row whose last unit is reached, then its first unit
                        // that is (a guess from the edge, corrected by the exact rule).
                        let j = first(from.0, n, |j| reached(before[j] + (ceil(weights[j]) - 1.0)));
                        if j == n {
                            return (n, 0.0);
                        }
                        let last = ceil(weights[j]) - 1.0;
                        let mut m = (edge / bf - before[j]).ceil().clamp(0.0, last);
                        while m > 0.0 && reached(before[j] + (m - 1.0)) {
                            m -= 1.0;
                        }
                        while m < last && !reached(before[j] + m) {
                            m += 1.0;
                        }
                        (j, m)
                    }
                }
            }
        }
    }

    /// The weighted hits and misses of the units from `from` to `to` (from < to).
    fn hits_misses(&self, (j1, m1): Cut, (j2, m2): Cut) -> (f64, f64) {
        // Units a..z of row j: weight min(z, w) − a (the last unit may be partial).
        let piece = |j: usize, a: f64, z: f64| {
            let p = z.min(self.weights[j]) - a;
            if self.labels[j] == 1 {
                (p, 0.0)
            } else {
                (0.0, p)
            }
        };
        if j1 == j2 {
            return piece(j1, m1, m2);
        }
        let (mut h, mut m, mut start) = (0.0, 0.0, j1);
        if m1 > 0.0 {
            (h, m) = piece(j1, m1, ceil(self.weights[j1]));
            start += 1;
        }
        h += self.hits[j2] - self.hits[start];
        m += self.misses[j2] - self.misses[start];
        if m2 > 0.0 {
            let (ph, pm) = piece(j2, 0.0, m2);
            h += ph;
            m += pm;
        }
        (h, m)
    }

    /// Hands the start of each non-empty bin among `b` to `each`, in order, with its
    /// weighted hits and misses, until `each` returns false; returns whether it never did.
    fn bins(
        &self,
        binning: Binning,
        b: usize,
        mut each: impl FnMut(Cut, f64, f64) -> bool,
    ) -> bool {
        let n = self.len();
        let mut from: Cut = (0, 0.0);
        while from.0 < n {
            let k = self.bin_of(binning, b, from);
            let to = if k + 1 >= b {
                (n, 0.0)
            } else {
                self.cut(binning, b, k + 1, from)
            };
            let (h, m) = self.hits_misses(from, to);
            if !each(from, h, m) {
                return false;
            }
            from = to;
        }
        true
    }

    /// Whether the weighted accuracies of the non-empty bins among `b` never decrease
    /// (equal neighbours allowed), cross-multiplied: h/(h + m) < h'/(h' + m') exactly
    /// when h·m' < h'·m.
    pub(crate) fn is_monotone(&self, binning: Binning, b: usize) -> bool {
        let mut previous: Option<(f64, f64)> = None;
        self.bins(binning, b, |_, h, m| {
            let decreases = previous.is_some_and(|(ph, pm)| h * pm < ph * m);
            previous = Some((h, m));
            !decreases
        })
    }

    /// The starts of the non-empty bins among `b`.
    pub(crate) fn starts(&self, binning: Binning, b: usize) -> Vec<Cut> {
        let mut starts = Vec::new();
        self.bins(binning, b, |from, _, _| {
            starts.push(from);
            true
        });
        starts
    }

    /// Whether the non-empty bins among `b` start at `expected` (stops at the first that
    /// does not).
    pub(crate) fn starts_at(&self, binning: Binning, b: usize, expected: &[Cut]) -> bool {
        let mut matched = 0usize;
        self.bins(binning, b, |from, _, _| {
            let same = expected.get(matched) == Some(&from);
            matched += 1;
            same
        }) && matched == expected.len()
    }

    /// Whether the finest partition `binning` reaches is monotone, in which case every
    /// coarser one is (a run's weighted accuracy lies between those of its first and last
    /// parts): units one a bin (ties split: the labels in sorted order never go from hit
    /// to miss), else the tie groups.
    pub(crate) fn finest_is_monotone(&self, binning: Binning) -> bool {
        if binning == Binning::EqualMass(Ties::Split) {
            return self.labels.windows(2).all(|p| p[0] <= p[1]);
        }
        let n = self.len();
        let (mut j, mut previous) = (0usize, None::<(f64, f64)>);
        while j < n {
            let f = self.scores[j];
            let end = first(j, n, |i| self.scores[i] != f);
            let (h, m) = self.hits_misses((j, 0.0), (end, 0.0));
            if previous.is_some_and(|(ph, pm)| h * pm < ph * m) {
                return false;
            }
            previous = Some((h, m));
            j = end;
        }
        true
    }
}

impl Walk for Prefix {
    fn total(&self) -> f64 {
        self.total
    }

    fn walk(&self, mut each: impl FnMut(f64, u8, f64)) {
        for ((&f, &y), &w) in self.scores.iter().zip(&self.labels).zip(&self.weights) {
            each(f, y, w);
        }
    }
}
