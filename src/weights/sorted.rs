//! The rows with positive weight sorted by score (equal scores in arrival order, SPEC
//! §3.2) by the sorted buffer's radix sort, and their equal-weight bins in one pass.

use super::{check, WeightError, WeightedBin};
use crate::binning::Ties;
use crate::buffer::{Appended, Slot, MAX_CAPACITY};

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
    /// [`check`]s the rows and sorts those with positive weight.
    pub(crate) fn new(
        scores: &'a [f64],
        labels: &'a [u8],
        weights: &'a [f64],
    ) -> Result<Self, WeightError> {
        let (total, rows) = check(scores, labels, weights)?;
        let order = if scores.len() <= MAX_CAPACITY {
            Order::Slots(sorted_slots(scores, labels, weights, rows as usize))
        } else {
            Order::Rows(sorted_rows(scores, weights))
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

    /// Their total weight.
    pub(crate) fn total(&self) -> f64 {
        self.total
    }

    /// Hands (score, label, weight) of each row in sorted order to `each`.
    pub(crate) fn walk(&self, mut each: impl FnMut(f64, u8, f64)) {
        match &self.order {
            Order::Slots(slots) => {
                for slot in slots {
                    // The row of a slot is one of the input's (the slots were built from it).
                    each(slot.score, slot.label(), self.weights[(slot.order >> 1) as usize]);
                }
            }
            Order::Rows(rows) => {
                for &i in rows {
                    each(self.scores[i] + 0.0, self.labels[i], self.weights[i]);
                }
            }
        }
    }

    /// The `bins` (≥ 1) equal-weight bins (see the module's doc of `tce::weights`).
    pub(crate) fn equal_mass(&self, ties: Ties, bins: usize) -> Vec<WeightedBin> {
        let mut out = vec![WeightedBin::default(); bins];
        let (total, b) = (self.total, bins as f64);
        // Whether position s (of cumulative weight) lies in a bin after k: the one rule
        // of `equal_weight_bin`, checked as the positions grow.
        let later = |k: usize, s: f64| k + 1 < bins && (k + 1) as f64 * total <= s * b;
        let (mut before, mut k) = (0.0f64, 0usize);
        let mut previous = None;
        self.walk(|f, y, w| {
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
                    let units = w.ceil();
                    while later(k, before) {
                        k += 1;
                    }
                    if units <= 1.0 {
                        // One unit: whole in the bin of its start.
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
                                ((k + 1) as f64 * total / b - before)
                                    .ceil()
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
}

/// The rows with positive weight (`rows` of them) as the buffer's slots, sorted by its
/// radix sort (stable: equal scores stay in row order).
fn sorted_slots(scores: &[f64], labels: &[u8], weights: &[f64], rows: usize) -> Vec<Slot> {
    let mut slots = Vec::with_capacity(rows);
    // Row indices fit the slot's 31 bits: the caller checked the length.
    for (row, ((&f, &y), &w)) in (0u32..).zip(scores.iter().zip(labels).zip(weights)) {
        if w > 0.0 {
            slots.push(Slot {
                // The bits of a score in [0, 1] order as the score does once −0 is +0.
                score: f + 0.0,
                order: (row << 1) | u32::from(y),
                hits_before: 0,
            });
        }
    }
    let mut scratch = vec![Slot::EMPTY; slots.len()];
    crate::radix::sort_and_count_in(&mut slots, &mut scratch, 0, Appended::UNKNOWN);
    slots
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
