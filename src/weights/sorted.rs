//! The rows with positive weight sorted by score (equal scores in arrival order, SPEC
//! §3.2) by the sorted buffer's radix sort, and their equal-weight bins in one pass.

use super::{check, checked, WeightError, WeightedBin};
use crate::binning::Ties;
use crate::buffer::{Appended, Slot, MAX_CAPACITY};

/// Weights gathered at a time in [`SortedRows::walk`] (8 KiB of stack).
const GATHER: usize = 1024;

/// Checked rows with positive weight in sorted order (zero weights are dropped before
/// the sort: exactly as if absent), with their total weight ([`check`]'s).
pub(crate) struct SortedRows<'a> {
    scores: &'a [f64],
    labels: &'a [u8],
    weights: &'a [f64],
    order: Order,
    total: f64,
    rows: u64,
}

/// The sorted order of the rows.
enum Order {
    /// The buffer's slots, sorted: the score (−0 made +0) and the row << 1 | label.
    Slots(Vec<Slot>),
    /// Rows past a slot's 31 bits of row index ([`MAX_CAPACITY`]): the row indices,
    /// sorted as (score bits, row) pairs by the standard library.
    Rows(Vec<usize>),
}

impl<'a> SortedRows<'a> {
    /// [`check`]s the rows and sorts those with positive weight (by the buffer's radix
    /// sort, stable: equal scores stay in row order).
    pub(crate) fn new(
        scores: &'a [f64],
        labels: &'a [u8],
        weights: &'a [f64],
    ) -> Result<Self, WeightError> {
        let (total, rows, order) = if scores.len() <= MAX_CAPACITY {
            // The slots built as the check goes (one pass), sorted once it passed.
            let mut slots = Vec::with_capacity(scores.len());
            let (total, rows) = checked(scores, labels, weights, |row| {
                slots.push(Slot {
                    // The bits of a score in [0, 1] order as the score does once −0 is +0.
                    score: scores[row] + 0.0,
                    // Row indices fit the slot's 31 bits: the length is checked above.
                    order: ((row as u32) << 1) | u32::from(labels[row]),
                    hits_before: 0,
                });
            })?;
            let mut scratch = vec![Slot::EMPTY; slots.len()];
            crate::radix::sort_and_count_in(&mut slots, &mut scratch, 0, Appended::UNKNOWN);
            (total, rows, Order::Slots(slots))
        } else {
            let (total, rows) = check(scores, labels, weights)?;
            (total, rows, Order::Rows(sorted_rows(scores, weights)))
        };
        Ok(SortedRows {
            scores,
            labels,
            weights,
            order,
            total,
            rows,
        })
    }

    /// Rows with positive weight.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }
}

/// Rows with positive weight in sorted order and their total weight: the input of
/// [`equal_mass`].
pub(crate) trait Walk {
    /// The total weight.
    fn total(&self) -> f64;
    /// Hands (score, label, weight) of each row in sorted order to `each`.
    fn walk(&self, each: impl FnMut(f64, u8, f64));
}

impl Walk for SortedRows<'_> {
    fn total(&self) -> f64 {
        self.total
    }

    fn walk(&self, mut each: impl FnMut(f64, u8, f64)) {
        match &self.order {
            Order::Slots(slots) => {
                // The rows are in random order: each weight is a cache miss. Gathered a
                // chunk at a time in a loop of independent loads, the misses overlap.
                let mut gathered = [0.0f64; GATHER];
                for chunk in slots.chunks(GATHER) {
                    for (w, slot) in gathered.iter_mut().zip(chunk) {
                        // The row of a slot is one of the input's (the slots were built
                        // from it).
                        *w = self.weights[(slot.order >> 1) as usize];
                    }
                    for (slot, &w) in chunk.iter().zip(&gathered) {
                        each(slot.score, slot.label(), w);
                    }
                }
            }
            Order::Rows(rows) => {
                for &i in rows {
                    each(self.scores[i] + 0.0, self.labels[i], self.weights[i]);
                }
            }
        }
    }
}

/// The `bins` (≥ 1) equal-weight bins of sorted rows (see the module's doc of
/// `tce::weights`).
pub(crate) fn equal_mass(rows: &impl Walk, ties: Ties, bins: usize) -> Vec<WeightedBin> {
    let mut out = vec![WeightedBin::default(); bins];
    let (total, b) = (rows.total(), bins as f64);
    // Whether position s (of cumulative weight) lies in a bin after k: the one rule
    // of `equal_weight_bin`, checked as the positions grow.
    let later = |k: usize, s: f64| k + 1 < bins && (k + 1) as f64 * total <= s * b;
    let (mut before, mut k) = (0.0f64, 0usize);
    let mut previous = None;
    rows.walk(|f, y, w| {
        let mut add = |k: usize, w: f64| {
            if let Some(bin) = out.get_mut(k) {
                bin.add(f, y, w);
            }
        };
        match ties {
            Ties::Keep => {
                // A new tie group starts in the bin of its start; later rows of the
                // group follow it.
                if previous != Some(f) {
                    while later(k, before) {
                        k += 1;
                    }
                }
                add(k, w);
            }
            Ties::Split => {
                while later(k, before) {
                    k += 1;
                }
                let units = if w <= 1.0 { 1.0 } else { ceil(w) };
                if !later(k, before + (units - 1.0)) {
                    // Every unit starts in bin k (the last one does): the row whole.
                    add(k, w);
                } else {
                    // Units [before + m, before + m + 1) (the last one partial), each
                    // whole in the bin of its start; the units of one bin at a time.
                    let mut m = 0.0f64;
                    while m < units {
                        while later(k, before + m) {
                            k += 1;
                        }
                        // The first unit starting in a later bin: a guess from the
                        // edge, corrected by the exact rule.
                        let mut next = if k + 1 >= bins {
                            units
                        } else {
                            // (Negative guesses are clamped: `ceil` sees ≥ 0.)
                            ceil(((k + 1) as f64 * total / b - before).max(0.0))
                                .clamp(m + 1.0, units)
                        };
                        while next < units && !later(k, before + next) {
                            next += 1.0;
                        }
                        while next > m + 1.0 && later(k, before + next - 1.0) {
                            next -= 1.0;
                        }
                        add(k, next.min(w) - m);
                        m = next;
                    }
                }
            }
        }
        previous = Some(f);
        before += w;
    });
    out
}

/// The rows with positive weight sorted as (score bits, row) pairs: unstable but made
/// stable by the row.
fn sorted_rows(scores: &[f64], weights: &[f64]) -> Vec<usize> {
    let mut keys: Vec<(u64, usize)> = (0..scores.len())
        .filter(|&i| weights[i] > 0.0)
        .map(|i| ((scores[i] + 0.0).to_bits(), i))
        .collect();
    keys.sort_unstable();
    keys.into_iter().map(|(_, i)| i).collect()
}

/// ⌈w⌉ for a weight w ≥ 0 (finite), without a call to libm's `ceil` (the x86-64 baseline
/// has no rounding instruction): through the integer part below 2^52, above which every
/// `f64` is whole.
pub(crate) fn ceil(w: f64) -> f64 {
    if w < 4_503_599_627_370_496.0 {
        let whole = (w as u64) as f64;
        if whole < w {
            whole + 1.0
        } else {
            whole
        }
    } else {
        w
    }
}
